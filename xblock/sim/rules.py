"""The simulator's rule per op: numpy on values with a leading program axis (size P, or 1 if uniform).

`SIM_RULES[name](ex, ins, *operands)` returns the result array (or a list of them). Control flow
(`scf.for`, `scf.if`, `scf.while`) lives in the executor, which splits programs where it diverges.
"""

from __future__ import annotations

import math as _pymath
import warnings

import numpy as np

from ..errors import ExecutionError, XBlockWarning
from . import lazy
from .floats import fp_to_fp
from .lazy import PtrSum, materialize
from .memory import _bf16_to_f32, _f32_to_bf16_bits
from .program import Dense, itemsize

SIM_RULES: dict = {}


def rule(*names):
    def deco(fn):
        for n in names:
            SIM_RULES[n] = fn
        return fn

    return deco


def _u(x: np.ndarray) -> np.ndarray:
    """The unsigned view of an integer array (bools stay bools)."""
    if x.dtype == np.bool_:
        return x
    return x.view(x.dtype.str.replace("i", "u"))


def _out(ins, x, i=0):
    """Cast a result to the instruction's result dtype."""
    return np.asarray(x).astype(ins.rtypes[i].dtype, copy=False)


# ------------------------------------------------------------------------------------ constants
@rule("arith.constant")
def _sim_constant(ex, ins):
    v = ins.attrs["value"]
    t = ins.rtypes[0]
    if isinstance(v, Dense):
        if v.array is None:  # a read-only broadcast view: one element, whatever the shape
            one = np.full((1,) * (1 + len(t.shape)), _scalar(v.splat, t), dtype=t.dtype)
            return np.broadcast_to(one, (1,) + t.shape)
        return np.asarray(v.array).astype(t.dtype).reshape((1,) + t.shape)
    return np.full((1,), _scalar(v, t), dtype=t.dtype)


def _scalar(val, t):
    if t.elem == "i1":
        return bool(val)
    if t.dtype.kind == "i":
        bits = t.dtype.itemsize * 8
        val = int(val) & ((1 << bits) - 1)
        return val - (1 << bits) if val >= 1 << (bits - 1) else val
    return val


# ------------------------------------------------------------------------------------ arithmetic
def _donor(ex, ins, *xs):
    """The executor's dead operand to write the result into, if it fits: the result's dtype and shape,
    and every operand of that dtype (so the ufunc computes in the result's type, as without out=)."""
    d = ex.donor
    if d is None:
        return None
    dt = ins.rtypes[0].dtype
    if d.dtype != dt or any(x.dtype != dt for x in xs):
        return None
    if d.shape != np.broadcast_shapes(*(x.shape for x in xs)):
        return None
    return d


def _binary(fn):
    if isinstance(fn, np.ufunc):
        def impl(ex, ins, a, b):
            with np.errstate(all="ignore"):
                d = _donor(ex, ins, a, b) if ex.donor is not None else None
                if d is not None:
                    return fn(a, b, out=d)
                return _out(ins, fn(a, b))
    else:
        def impl(ex, ins, a, b):
            with np.errstate(all="ignore"):
                return _out(ins, fn(a, b))

    return impl


def _i1_aware(fn, on_i1):
    """Integer ops on i1 wrap modulo 2 (add/sub are xor, mul is and); numpy's bool ops do not."""

    def impl(a, b):
        return on_i1(a, b) if a.dtype == np.bool_ else fn(a, b)

    return impl


for _name, _fn in {
    "arith.addf": np.add, "arith.subf": np.subtract, "arith.mulf": np.multiply, "arith.divf": np.divide,
    "arith.remf": np.fmod, "arith.addi": _i1_aware(np.add, np.logical_xor),
    "arith.subi": _i1_aware(np.subtract, np.logical_xor), "arith.muli": _i1_aware(np.multiply, np.logical_and),
    "arith.andi": np.bitwise_and, "arith.ori": np.bitwise_or, "arith.xori": np.bitwise_xor,
    "arith.maxnumf": np.fmax, "arith.minnumf": np.fmin, "arith.maximumf": np.maximum,
    "arith.minimumf": np.minimum, "arith.maxsi": np.maximum, "arith.minsi": np.minimum,
    "math.powf": np.power,
}.items():
    SIM_RULES[_name] = _binary(_fn)


def _overflow_checked(name):
    """`fn` on int32 operands that also warns (XBlockWarning, once per kernel line) when the exact
    result does not fit: the wrapped value is what Triton computes, and usually an offset that
    needed `.to(tl.int64)`. Opt-in: XBLOCK_SIM_OVERFLOW=1 (sim/backend.py)."""
    plain = SIM_RULES[name]
    exact = {"arith.addi": np.add, "arith.subi": np.subtract, "arith.muli": np.multiply}[name]
    warned = set()

    def impl(ex, ins, a, b):
        if ins.rtypes[0].dtype == np.int32 and (ins.loc.file, ins.loc.line) not in warned:
            wide = exact(np.asarray(a, np.int64), np.asarray(b, np.int64))  # before `plain` may reuse a or b
            if wide.size and (wide.max() > np.iinfo(np.int32).max or wide.min() < np.iinfo(np.int32).min):
                warned.add((ins.loc.file, ins.loc.line))
                sign = {"arith.addi": "+", "arith.subi": "-", "arith.muli": "*"}[name]
                warnings.warn_explicit(f"sim: int32 `{sign}` overflows here and wraps (as in Triton); if this is "
                                       "an offset, compute it in int64 (`.to(tl.int64)`)", XBlockWarning,
                                       ins.loc.file, ins.loc.line or 1)
        return plain(ex, ins, a, b)

    return impl


def overflow_rules() -> dict:
    """Replacement rules for int32 +, - and * that warn when they wrap."""
    return {n: _overflow_checked(n) for n in ("arith.addi", "arith.subi", "arith.muli")}


@rule("arith.maxui", "arith.minui")
def _sim_minmaxui(ex, ins, a, b):
    fn = np.maximum if ins.name == "arith.maxui" else np.minimum
    return fn(_u(a), _u(b)).view(a.dtype) if a.dtype != np.bool_ else fn(a, b)


def _int_div(a, b, signed):
    with np.errstate(all="ignore"):
        if not signed:
            ua, ub = _u(a), _u(b)
            safe = np.where(ub == 0, 1, ub)
            return np.where(ub == 0, 0, ua // safe).astype(ua.dtype).view(a.dtype)
        safe = np.where(b == 0, 1, b)
        q = a // safe
        r = a - q * safe
        q = q + ((r != 0) & ((a < 0) != (safe < 0)))  # round toward zero, as C does
        return np.where(b == 0, 0, q).astype(a.dtype)


def _int_rem(a, b, signed):
    with np.errstate(all="ignore"):
        if not signed:
            ua, ub = _u(a), _u(b)
            safe = np.where(ub == 0, 1, ub)
            return np.where(ub == 0, 0, ua % safe).astype(ua.dtype).view(a.dtype)
        safe = np.where(b == 0, 1, b)
        return np.where(b == 0, 0, np.fmod(a, safe)).astype(a.dtype)


@rule("arith.divsi", "arith.divui", "arith.remsi", "arith.remui")
def _sim_divrem(ex, ins, a, b):
    signed = ins.name.endswith("si")
    fn = _int_div if "div" in ins.name else _int_rem
    a, b = np.broadcast_arrays(a, b)
    return fn(a, b, signed)


@rule("arith.shli", "arith.shrsi", "arith.shrui")
def _sim_shift(ex, ins, a, b):
    bits = a.dtype.itemsize * 8
    with np.errstate(all="ignore"):
        amt = _u(b).astype(np.uint64) % bits
        if ins.name == "arith.shli":
            return (_u(a).astype(np.uint64) << amt).astype(_u(a).dtype).view(a.dtype)
        if ins.name == "arith.shrui":
            return (_u(a).astype(np.uint64) >> amt).astype(_u(a).dtype).view(a.dtype)
        return (a.astype(np.int64) >> amt.astype(np.int64)).astype(a.dtype)


@rule("arith.negf")
def _sim_negf(ex, ins, a):
    d = _donor(ex, ins, a) if ex.donor is not None else None
    return np.negative(a) if d is None else np.negative(a, out=d)


@rule("arith.mului_extended")
def _sim_mului_ext(ex, ins, a, b):
    bits = a.dtype.itemsize * 8
    prod = _u(a).astype(object) * _u(b).astype(object)
    lo = np.vectorize(lambda v: v & ((1 << bits) - 1), otypes=[np.uint64])(prod)
    hi = np.vectorize(lambda v: v >> bits, otypes=[np.uint64])(prod)
    return [lo.astype(_u(a).dtype).view(a.dtype), hi.astype(_u(a).dtype).view(a.dtype)]


_CMPI = {0: np.equal, 1: np.not_equal, 2: np.less, 3: np.less_equal, 4: np.greater, 5: np.greater_equal,
         6: np.less, 7: np.less_equal, 8: np.greater, 9: np.greater_equal}


@rule("arith.cmpi")
def _sim_cmpi(ex, ins, a, b):
    p = ins.attrs["predicate"]
    if p >= 6:
        a, b = _u(a), _u(b)
    return _CMPI[p](a, b)


def _cmpf(p, a, b):
    with np.errstate(all="ignore"):
        unordered = np.isnan(a) | np.isnan(b)
        base = {1: np.equal, 2: np.greater, 3: np.greater_equal, 4: np.less, 5: np.less_equal,
                6: np.not_equal, 8: np.equal, 9: np.greater, 10: np.greater_equal, 11: np.less,
                12: np.less_equal, 13: np.not_equal}
        if p == 0:
            return np.zeros(np.broadcast(a, b).shape, bool)
        if p == 15:
            return np.ones(np.broadcast(a, b).shape, bool)
        if p == 7:
            return ~unordered
        if p == 14:
            return unordered
        r = base[p](a, b)
        return (r & ~unordered) if p <= 6 else (r | unordered)


@rule("arith.cmpf")
def _sim_cmpf(ex, ins, a, b):
    return _cmpf(ins.attrs["predicate"], a, b)


@rule("arith.select")
def _sim_select(ex, ins, c, a, b):
    rank = max(a.ndim, b.ndim)
    if c.ndim < rank:  # a scalar condition choosing between whole blocks (canonicalized scf.if)
        c = c.reshape(c.shape + (1,) * (rank - c.ndim))
    return np.where(c, a, b)


# ------------------------------------------------------------------------------------ casts
@rule("arith.extf", "arith.truncf", "arith.sitofp", "arith.extsi", "arith.trunci")
def _sim_convert(ex, ins, a):
    t = ins.rtypes[0]
    if ins.name == "arith.extsi" and a.dtype == np.bool_:
        return -(a.astype(t.dtype))
    if ins.name == "arith.trunci" and t.elem == "i1":
        return (a & 1) != 0
    with np.errstate(all="ignore"):
        return a.astype(t.dtype)


@rule("arith.extui", "arith.uitofp")
def _sim_convert_unsigned(ex, ins, a):
    with np.errstate(all="ignore"):
        return _u(a).astype(ins.rtypes[0].dtype)


@rule("arith.fptosi", "arith.fptoui")
def _sim_fptoint(ex, ins, a):
    t = ins.rtypes[0]
    with np.errstate(all="ignore"):
        if ins.name == "arith.fptoui" and t.elem != "i1":
            return a.astype(np.float64).astype(_u(np.zeros(1, t.dtype)).dtype).view(t.dtype)
        return a.astype(t.dtype)


@rule("arith.bitcast")
def _sim_bitcast(ex, ins, a):
    src, dst = ins.otypes[0], ins.rtypes[0]

    if src.elem == "bf16":
        return _f32_to_bf16_bits(a).view(dst.dtype)
    if dst.elem == "bf16":
        return _bf16_to_f32(a.view(np.uint16))
    return np.ascontiguousarray(a).view(dst.dtype)


@rule("xb.fp_to_fp")
def _sim_fp_to_fp(ex, ins, a):
    """Triton's fp_to_fp: float8 conversions, downcasts rounded toward zero (see floats.py)."""
    return fp_to_fp(a, ins.otypes[0].elem, ins.rtypes[0].elem, ins.attrs.get("rounding", ""))


# ------------------------------------------------------------------------------------ math
def _erf(x):
    return np.frompyfunc(_pymath.erf, 1, 1)(x.astype(np.float64)).astype(np.float64)


_MATH = {"math.exp": np.exp, "math.exp2": np.exp2, "math.log": np.log, "math.log2": np.log2,
         "math.sqrt": np.sqrt, "math.rsqrt": lambda x: 1.0 / np.sqrt(x), "math.sin": np.sin,
         "math.cos": np.cos, "math.erf": _erf, "math.floor": np.floor, "math.ceil": np.ceil,
         "math.tanh": np.tanh, "math.absf": np.abs, "math.absi": np.abs}


@rule(*_MATH)
def _sim_math(ex, ins, a):
    with np.errstate(all="ignore"):
        if a.dtype == np.float16:
            return _MATH[ins.name](a.astype(np.float32)).astype(np.float16)
        if a.dtype.kind == "f":
            fn = _MATH[ins.name]
            d = _donor(ex, ins, a) if ex.donor is not None and isinstance(fn, np.ufunc) else None
            if d is not None:
                return fn(a, out=d)
            return fn(a).astype(a.dtype, copy=False)
        return _MATH[ins.name](a)


def _erfc(x):
    return np.frompyfunc(_pymath.erfc, 1, 1)(x.astype(np.float64)).astype(np.float64)


def _round_half_away(x):
    """C round(): halfway cases away from zero (np.round goes to even); -0.3 gives -0.0."""
    r = np.trunc(x)
    return np.where(np.abs(x - r) >= 0.5, r + np.copysign(1.0, x), r)


# the math of `xl.math`/libdevice beyond the above: computed in float64 and rounded once to the
# result's type, so the sim is (within double rounding) correctly rounded in fp32
_MATH64 = {"math.acos": np.arccos, "math.acosh": np.arccosh, "math.asin": np.arcsin, "math.asinh": np.arcsinh,
           "math.atan": np.arctan, "math.atanh": np.arctanh, "math.cbrt": np.cbrt, "math.cosh": np.cosh,
           "math.sinh": np.sinh, "math.tan": np.tan, "math.erfc": _erfc, "math.expm1": np.expm1,
           "math.log10": np.log10, "math.log1p": np.log1p, "math.trunc": np.trunc, "math.round": _round_half_away,
           "math.roundeven": np.rint}
_MATH64_2 = {"math.atan2": np.arctan2, "math.copysign": np.copysign}


@rule(*_MATH64)
def _sim_math64(ex, ins, a):
    with np.errstate(all="ignore"):
        return _out(ins, _MATH64[ins.name](a.astype(np.float64)))


@rule(*_MATH64_2)
def _sim_math64_2(ex, ins, a, b):
    with np.errstate(all="ignore"):
        return _out(ins, _MATH64_2[ins.name](a.astype(np.float64), b.astype(np.float64)))


def _two_sum(p, c):
    s = p + c
    v = s - p
    return s, (p - (s - v)) + (c - v)  # s + t == p + c exactly


def _fma64(a, b, c):
    """a * b + c for float64, rounded once but for rare double roundings: Dekker's exact product and
    Knuth's exact sum, then one add. A product that overflows is scaled by 1/4 first."""
    def split(x):
        t = 134217729.0 * x  # 2^27 + 1
        hi = t - (t - x)
        return hi, x - hi

    scale = np.ones_like(a)
    for which in (0, 1):  # the split overflows above 2^996: scale such a factor (and c) by 2^-120
        x = a if which == 0 else b
        huge = np.abs(x) > 2.0**900
        x, c, scale = (np.where(huge, v * f, v) for v, f in ((x, 2.0**-120), (c, 2.0**-120), (scale, 2.0**120)))
        a, b = (x, b) if which == 0 else (a, x)
    big = ~np.isfinite(a * b) & np.isfinite(a) & np.isfinite(b) & np.isfinite(c)  # an overflow c may undo
    a, c, scale = np.where(big, a * 0.25, a), np.where(big, c * 0.25, c), np.where(big, scale * 4.0, scale)
    p = a * b
    (ah, al), (bh, bl) = split(a), split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl  # p + e == a * b
    s, t = _two_sum(p, c)
    r = s + (t + e)
    r = np.where(np.isfinite(r) & np.isfinite(e) & (r != 0), r, s)  # an exact zero keeps IEEE's sign (s)
    return r * scale


def _fma_narrow(a, b, c, dtype):
    """float32/float16 fma: the product is exact in float64; the sum is rounded to odd in float64 (exact
    sum s + t, s moved one ulp toward t when inexact and even), so one more rounding to dtype is exact."""
    s, t = _two_sum(a.astype(np.float64) * b, c.astype(np.float64))
    bits = s.view(np.int64) if s.ndim else np.array(s).view(np.int64)
    even = (bits & 1) == 0
    s = np.where((t != 0) & even & np.isfinite(s), np.nextafter(s, np.where(t > 0, np.inf, -np.inf)), s)
    return s.astype(dtype)


@rule("math.fma")
def _sim_fma(ex, ins, a, b, c):
    with np.errstate(all="ignore"):
        a, b, c = np.broadcast_arrays(a, b, c)
        if np.result_type(a, b, c) == np.float64:
            return _out(ins, _fma64(a, b, c))
        return _out(ins, _fma_narrow(a, b, c, ins.rtypes[0].dtype))


# ------------------------------------------------------------------------------------ xb
@rule("xb.program_id")
def _sim_program_id(ex, ins):
    return ex.pids[ins.attrs["axis"]]


@rule("xb.num_programs")
def _sim_num_programs(ex, ins):
    return np.array([ex.grid[ins.attrs["axis"]]], dtype=np.int32)


@rule("xb.arange")
def _sim_arange(ex, ins):
    return np.arange(ins.attrs["start"], ins.attrs["end"], dtype=np.int32)[None]


@rule("xb.splat")
def _sim_splat(ex, ins, x):
    shape = ins.rtypes[0].shape
    if ins.rtypes[0].is_ptr and shape:  # a lazy pointer block: one compact term
        x = materialize(x)
        return PtrSum([x.reshape((x.shape[0],) + (1,) * len(shape)).astype(np.int64, copy=False)],
                      (x.shape[0],) + shape)
    return np.broadcast_to(x.reshape((x.shape[0],) + (1,) * len(shape)), (x.shape[0],) + shape)


@rule("xb.broadcast")
def _sim_broadcast(ex, ins, x):
    if type(x) is PtrSum:
        shape = (x.shape[0],) + ins.rtypes[0].shape
        if len(shape) == x.ndim:
            return PtrSum(x.terms, shape)
        x = x.value()
    return np.broadcast_to(x, (x.shape[0],) + ins.rtypes[0].shape)


@rule("xb.expand_dims")
def _sim_expand_dims(ex, ins, x):
    if type(x) is PtrSum:
        a = ins.attrs["axis"] + 1
        return PtrSum([np.expand_dims(t, a) for t in x.terms], x.shape[:a] + (1,) + x.shape[a:])
    return np.expand_dims(x, ins.attrs["axis"] + 1)


@rule("xb.reshape")
def _sim_reshape(ex, ins, x):
    return np.reshape(x, (x.shape[0],) + ins.rtypes[0].shape)


@rule("xb.trans")
def _sim_trans(ex, ins, x):
    if type(x) is PtrSum:
        order = [0] + [o + 1 for o in ins.attrs["order"]]
        return PtrSum([np.transpose(t, order) for t in x.terms], tuple(x.shape[o] for o in order))
    return np.transpose(x, [0] + [o + 1 for o in ins.attrs["order"]])


def _same_lead(*xs):
    """Operands with their program axes broadcast to one size (a uniform value has size 1)."""
    n = max(x.shape[0] for x in xs)
    return [np.broadcast_to(x, (n,) + x.shape[1:]) for x in xs]


@rule("xb.join")
def _sim_join(ex, ins, a, b):
    return np.stack(_same_lead(a, b), axis=-1)


@rule("xb.split")
def _sim_split(ex, ins, x):
    return [x[..., 0], x[..., 1]]


@rule("xb.cat")
def _sim_cat(ex, ins, a, b):
    return np.concatenate(_same_lead(a, b), axis=1)


@rule("xb.gather")
def _sim_gather(ex, ins, src, index):
    axis = ins.attrs["axis"] + 1
    n = src.shape[axis]
    bad = (index < 0) | (index >= n)
    if bad.any():
        v = int(index[bad].flat[0])
        raise ExecutionError(f"{ins.loc}: gather index {v} is outside [0, {n}) along axis {axis - 1} "
                             "(Triton leaves such a gather undefined)")
    src, index = _same_lead(src, index.astype(np.intp))
    # take_along_axis needs equal shapes off the axis: the index has the source's, by the op's contract
    return np.take_along_axis(src, index, axis)


@rule("xb.histogram")
def _sim_histogram(ex, ins, x, mask=None):
    bins = ins.attrs["num_bins"]
    if mask is not None:
        x, mask = _same_lead(x, mask)
    keep = (x >= 0) & (x < bins)
    if mask is not None:
        keep &= mask
    rows = [np.bincount(r[k], minlength=bins)[:bins] for r, k in zip(x.astype(np.int64), keep)]
    return np.stack(rows).astype(np.int32)


@rule("xb.ptr_cast")
def _sim_ptr_cast(ex, ins, x):
    return x


@rule("xb.int_to_ptr")
def _sim_int_to_ptr(ex, ins, x):
    """An address into an argument buffer (a host address of the caller's array) as a pointer."""
    return ex.memory.from_host(x)


@rule("xb.ptr_to_int")
def _sim_ptr_to_int(ex, ins, p):
    """A pointer as the host address it has in the caller's array, as on the cpu target."""
    return ex.memory.to_host(p)


@rule("xb.addptr")
def _sim_addptr(ex, ins, p, off):
    size = itemsize(ins.rtypes[0].pointee)
    if not ins.rtypes[0].shape:  # scalars: plain arrays
        return materialize(p) + off.astype(np.int64) * size
    shape = np.broadcast_shapes(p.shape, off.shape)
    if len(p.shape) != len(shape) or off.ndim != len(shape):
        return materialize(p) + off.astype(np.int64) * size
    term = lazy.compact(off).astype(np.int64)
    if size != 1:
        term *= size
    return PtrSum.of(p).add(term, shape)


def _lanes(ex, ptr, mask):
    """Broadcast pointer and mask over the current programs; the active-lane selector."""
    shape = np.broadcast_shapes(ptr.shape, mask.shape if mask is not None else ptr.shape)
    full = (ex.n_programs,) + shape[1:] if shape[0] != ex.n_programs and shape[0] == 1 and (
        ptr.shape[0] != 1 or (mask is not None and mask.shape[0] != 1)) else shape
    ptr = np.broadcast_to(ptr, full)
    active = np.broadcast_to(mask, full) if mask is not None else None
    return ptr, active


def _pid_of(ex, shape, active):
    def pid_of(lane):
        flat = np.flatnonzero(active)[lane] if active is not None else lane
        p = np.unravel_index(flat, shape)[0]
        return tuple(int(np.broadcast_to(a, (ex.n_programs,))[p]) if a.shape[0] > 1 else int(a[0])
                     for a in ex.pids)
    return pid_of


def pid_of_safe(pid_of, active):
    """Report a bad lane of a full-shape access in terms of the active lanes' numbering."""
    def inner(lane):
        return pid_of(int(np.count_nonzero(active.flat[:lane])))
    return inner


@rule("xb.load")
def _sim_load(ex, ins, *ops):
    seg = ins.attrs["operandSegmentSizes"]
    ptr = ops[0]
    mask = ops[1] if seg[1] else None
    other = ops[1 + seg[1]] if seg[2] else None
    t = ins.rtypes[0]
    if type(ptr) is PtrSum:
        if not t.is_ptr:
            shape = np.broadcast_shapes(ptr.shape, mask.shape) if mask is not None else ptr.shape
            out = lazy.load(ex.memory, ptr, mask, materialize(other), shape, ins.otypes[0].pointee, t.dtype)
            if out is not None:
                return out
        ptr = ptr.value()
    ptr, active = _lanes(ex, ptr, mask)
    pid_of = _pid_of(ex, ptr.shape, active)
    if active is None:
        return ex.memory.load(ptr, t.pointee if t.is_ptr else ins.otypes[0].pointee, ins.loc, pid_of)
    fill = np.zeros((), dtype=t.dtype) if other is None else np.broadcast_to(other, ptr.shape)
    first = int(active.argmax()) if active.size else 0
    if active.size == 0 or not active.flat[first]:
        return np.broadcast_to(fill, ptr.shape).astype(t.dtype)
    # masked-off lanes read a valid address (the first active lane's), then take `other`
    safe = np.where(active, ptr, ptr.flat[first])
    vals = ex.memory.load(safe, ins.otypes[0].pointee, ins.loc, pid_of_safe(pid_of, active))
    return np.where(active, vals, fill)


@rule("xb.store")
def _sim_store(ex, ins, *ops):
    seg = ins.attrs["operandSegmentSizes"]
    ptr, val = ops[0], materialize(ops[1])
    mask = ops[2] if seg[2] else None
    shape = np.broadcast_shapes(ptr.shape, val.shape, *([mask.shape] if mask is not None else []))
    shape = (ex.n_programs,) + shape[1:]
    if type(ptr) is PtrSum:
        if lazy.store(ex.memory, ptr, val, mask, shape, ins.otypes[0].pointee, ex.flat_pid, ins.loc):
            return None
        ptr = ptr.value()
    ptr = np.broadcast_to(ptr, shape)
    val = np.broadcast_to(val, shape)
    lanes_per_program = int(np.prod(shape[1:], dtype=np.int64))
    pointee = ins.otypes[0].pointee
    if mask is None:
        lane_pids = np.repeat(ex.flat_pid, lanes_per_program)
        ex.memory.store(ptr.reshape(-1), val.reshape(-1), pointee, ins.loc, _pid_of(ex, shape, None), lane_pids)
        return None
    active = np.broadcast_to(mask, shape)
    # boolean indexing keeps row-major order, so active lanes come grouped by program
    lane_pids = np.repeat(ex.flat_pid, active.reshape(shape[0], -1).sum(axis=1))
    ex.memory.store(ptr[active], val[active], pointee, ins.loc, _pid_of(ex, shape, active), lane_pids)
    return None


@rule("xb.atomic_rmw", "xb.atomic_cas")
def _sim_atomic(ex, ins, *ops):
    t = ins.rtypes[0]
    pointee = ins.otypes[0].pointee
    if ins.name == "xb.atomic_cas":
        ptr, cmp, val = ops
        kind, mask = "cas", None
    else:
        seg = ins.attrs["operandSegmentSizes"]
        ptr, val = ops[0], ops[1]
        mask = ops[2] if seg[2] else None
        cmp, kind = None, ins.attrs["kind"]
    shape = (ex.n_programs,) + np.broadcast_shapes(ptr.shape, val.shape)[1:]
    ptr = np.broadcast_to(ptr, shape)
    val = np.broadcast_to(val, shape)
    cmp = np.broadcast_to(cmp, shape) if cmp is not None else None
    active = np.broadcast_to(mask, shape) if mask is not None else np.ones(shape, bool)
    old = np.zeros(shape, dtype=t.dtype)
    old[active] = ex.memory.atomic(kind, ptr[active], val[active], cmp[active] if cmp is not None else None,
                                   pointee, ins.loc, _pid_of(ex, shape, active))
    return old


# rules that take lazy pointer blocks (PtrSum); others get them materialized (see program.bind_rules)
LAZY_RULES = frozenset(SIM_RULES[n] for n in ("xb.addptr", "xb.splat", "xb.broadcast", "xb.expand_dims",
                                               "xb.trans", "xb.ptr_cast", "xb.load", "xb.store"))


# ------------------------------------------------------------------------------------ reductions
def _fill_nan(x, v):
    return np.where(np.isnan(x), v, x) if x.dtype.kind == "f" else x


@rule("xb.reduce")
def _sim_reduce(ex, ins, *xs):
    kind, axis = ins.attrs["kind"], ins.attrs["axis"] + 1
    if kind == "generic":
        return _reduce_generic(ex, ins, list(xs), axis)
    x = xs[0]
    with np.errstate(all="ignore"):
        if kind == "sum":
            acc = np.float32 if x.dtype == np.float16 else x.dtype
            r = np.sum(x, axis=axis, dtype=acc)
        elif kind == "prod":
            r = np.prod(x, axis=axis, dtype=x.dtype)
        elif kind in ("max", "min"):
            if x.dtype.kind == "f":
                r = (np.fmax if kind == "max" else np.fmin).reduce(x, axis=axis)
            elif x.dtype.kind == "u" or x.dtype == np.bool_:
                r = (np.max if kind == "max" else np.min)(x, axis=axis)
            else:
                r = (np.max if kind == "max" else np.min)(x, axis=axis)
        elif kind in ("argmax", "argmin"):
            fill = -np.inf if kind == "argmax" else np.inf
            r = (np.argmax if kind == "argmax" else np.argmin)(_fill_nan(x, fill), axis=axis)
        elif kind == "xor_sum":
            r = np.bitwise_xor.reduce(x, axis=axis)
        else:
            raise ExecutionError(f"{ins.loc}: unknown reduction kind {kind}")
    return _out(ins, r)


def _reduce_generic(ex, ins, xs, axis):
    region = ins.regions[0]
    n = len(xs)
    while xs[0].shape[axis] > 1:
        length = xs[0].shape[axis]
        even = length - length % 2
        lhs = [np.take(x, np.arange(0, even, 2), axis=axis) for x in xs]
        rhs = [np.take(x, np.arange(1, even, 2), axis=axis) for x in xs]
        out = ex.run_block(region, lhs + rhs)
        if length % 2:
            out = [np.concatenate([o, np.take(x, [length - 1], axis=axis)], axis=axis) for o, x in zip(out, xs)]
        xs = [np.asarray(o) for o in out]
    return [_out(ins, np.take(x, 0, axis=axis), i) for i, x in enumerate(xs[:n])]


@rule("xb.scan")
def _sim_scan(ex, ins, *xs):
    kind, axis, rev = ins.attrs["kind"], ins.attrs["axis"] + 1, ins.attrs["reverse"]
    if rev:
        xs = [np.flip(x, axis) for x in xs]
    if kind == "generic":
        out = _scan_generic(ex, ins, list(xs), axis)
    else:
        x = xs[0]
        acc = np.float32 if x.dtype == np.float16 else x.dtype
        with np.errstate(all="ignore"):
            fn = np.cumsum if kind == "cumsum" else np.cumprod
            out = [_out(ins, fn(x, axis=axis, dtype=acc))]
    if rev:
        out = [np.flip(o, axis) for o in out]
    return out if kind == "generic" else out[0]


def _scan_generic(ex, ins, xs, axis):
    region = ins.regions[0]
    acc = [np.take(x, [0], axis=axis) for x in xs]
    outs = [[a] for a in acc]
    for i in range(1, xs[0].shape[axis]):
        cur = [np.take(x, [i], axis=axis) for x in xs]
        acc = [np.asarray(v) for v in ex.run_block(region, acc + cur)]
        for o, a in zip(outs, acc):
            o.append(a)
    return [_out(ins, np.concatenate(o, axis=axis), i) for i, o in enumerate(outs)]


# How f32 operands are multiplied for each input_precision but "ieee" (exact products, fp32 sum), as
# Triton 3.6 computes it on an H200 (docs/LANGUAGE.md, "dot precision"): each operand splits into parts
# (tf32: truncated to 10 mantissa bits, as tensor cores read f32, the leading part of two rounded to nearest,
# ties away, as `cvt.rna.tf32.f32`; bf16: rounded to nearest even, the rest split again); the products of
# the (a part, b part) pairs listed are summed in order in fp32, NaNs of that sum become 0, then the product
# of the leading parts and `acc` are added. One part and no pairs is a plain product onto `acc`.
DOT_SPLITS = {"tf32": ("tf32", 1, ()), "tf32x3": ("tf32", 2, ((1, 0), (0, 1))),
              "bf16x3": ("bf16", 2, ((1, 0), (0, 1))),
              "bf16x6": ("bf16", 3, ((1, 1), (2, 0), (0, 2), (1, 0), (0, 1)))}


@rule("xb.dot")
def _sim_dot(ex, ins, a, b, acc):
    """acc + a @ b over the last two axes (so a batch of matrices too), exactly, then rounded."""
    with np.errstate(all="ignore"):
        if acc.dtype.kind != "f":
            return _out(ins, np.matmul(a.astype(np.int64), b.astype(np.int64)) + acc)
        split = DOT_SPLITS.get(ins.attrs["input_precision"]) if ins.otypes[0].elem == "f32" else None
        if split is None:
            return _out(ins, np.matmul(a.astype(np.float64), b.astype(np.float64)) + acc)
        return _out(ins, _dot_parts(a, b, acc, *split))


def _dot_parts(a, b, acc, kind, n, pairs):
    pa, pb = _dot_split(a, kind, n), _dot_split(b, kind, n)

    def mm(x, y, c):
        return (np.matmul(x.astype(np.float64), y.astype(np.float64)) + c).astype(np.float32)

    if not pairs:
        return mm(pa[0], pb[0], acc)
    small = np.float32(0)
    for i, j in pairs:
        small = mm(pa[i], pb[j], small)
    small = np.where(np.isnan(small), np.float32(0), small)
    return mm(pa[0], pb[0], small) + acc


def _dot_split(x, kind, n):
    x = np.asarray(x, np.float32)
    if kind == "bf16":
        parts = []
        for _ in range(n):
            parts.append(_bf16_to_f32(_f32_to_bf16_bits(x)))
            x = x - parts[-1]
        return parts
    if n == 1:
        return [_tf32(x, 0)]
    big = _tf32(x, 0x1000)
    return [big, _tf32(x - big, 0)]


def _tf32(x, half):
    """f32 values kept to tf32's 10 mantissa bits: truncated (half=0) or rounded half away (0x1000)."""
    bits = (x.view(np.uint32) + np.uint32(half)) & np.uint32(0xFFFFE000)
    return np.where(np.isfinite(x), bits.view(np.float32), x)


# ------------------------------------------------------------------------------------ debug
@rule("xb.print")
def _sim_print(ex, ins, *vals):
    for p in range(ex.n_programs):
        pid = tuple(int(a[p] if a.shape[0] > 1 else a[0]) for a in ex.pids)
        shown = [v[p if v.shape[0] > 1 else 0] for v in vals]
        print(f"pid {pid} {ins.attrs['prefix']}", *shown)


@rule("xb.assert")
def _sim_assert(ex, ins, cond):
    if not np.all(cond):
        p = int(np.argwhere(~np.broadcast_to(cond, (ex.n_programs,) + cond.shape[1:]))[0][0])
        pid = tuple(int(a[p] if a.shape[0] > 1 else a[0]) for a in ex.pids)
        raise ExecutionError(f"{ins.loc}: device_assert failed in program {pid}: {ins.attrs['message']}")
