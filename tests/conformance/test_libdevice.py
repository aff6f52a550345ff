"""`tl.extra.cuda.libdevice` / `tl.extra.libdevice` / `tl.math`: the elementwise math set, on every target.

Unmodified `@triton.jit` kernels call each function; sim, cpu and ascend run them and are compared
with numpy (float64, rounded once to the tested type) in units in the last place, at zeros, infinities,
NaN, denormals, huge arguments, random bit patterns and dense ranges. cuda compiles them to cubin.
The bounds below are the measured maxima that docs/LANGUAGE.md ("Math functions") states; zeros must
also carry the right sign, and NaN and infinities must match exactly.
Set XBLOCK_LIBDEVICE_REPORT=1 to print the measured table.
"""

import math
import os

import numpy as np
import pytest

import xblock
from xblock.backends.cuda.precompile import TensorSpec, precompile
from xblock.errors import XBlockWarning

triton = pytest.importorskip("triton")
tl = triton.language
from triton.language.extra import libdevice  # noqa: E402

UNARY = ["asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "tan", "erf", "erfc", "erfinv", "exp",
         "exp2", "exp10", "expm1", "log", "log2", "log10", "log1p", "round", "rint", "floor", "ceil", "trunc", "cbrt",
         "rsqrt", "sqrt", "sqrt_rn", "tanh", "sin", "cos"]
BINARY = ["atan2", "pow", "copysign", "hypot", "div_rn", "fma", "fmod", "remainder"]  # fma(x, y, x)
PREDICATES = ["isnan", "isinf", "isfinite", "signbit"]

# ---------------------------------------------------------------------------------------- kernels


@triton.jit
def unary_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + 0 * n + offs, libdevice.asin(x), mask=mask)
    tl.store(out_ptr + 1 * n + offs, libdevice.acos(x), mask=mask)
    tl.store(out_ptr + 2 * n + offs, libdevice.atan(x), mask=mask)
    tl.store(out_ptr + 3 * n + offs, libdevice.sinh(x), mask=mask)
    tl.store(out_ptr + 4 * n + offs, libdevice.cosh(x), mask=mask)
    tl.store(out_ptr + 5 * n + offs, libdevice.asinh(x), mask=mask)
    tl.store(out_ptr + 6 * n + offs, libdevice.acosh(x), mask=mask)
    tl.store(out_ptr + 7 * n + offs, libdevice.atanh(x), mask=mask)
    tl.store(out_ptr + 8 * n + offs, libdevice.tan(x), mask=mask)
    tl.store(out_ptr + 9 * n + offs, libdevice.erf(x), mask=mask)
    tl.store(out_ptr + 10 * n + offs, libdevice.erfc(x), mask=mask)
    tl.store(out_ptr + 11 * n + offs, libdevice.erfinv(x), mask=mask)
    tl.store(out_ptr + 12 * n + offs, libdevice.exp(x), mask=mask)
    tl.store(out_ptr + 13 * n + offs, libdevice.exp2(x), mask=mask)
    tl.store(out_ptr + 14 * n + offs, libdevice.exp10(x), mask=mask)
    tl.store(out_ptr + 15 * n + offs, libdevice.expm1(x), mask=mask)
    tl.store(out_ptr + 16 * n + offs, libdevice.log(x), mask=mask)
    tl.store(out_ptr + 17 * n + offs, libdevice.log2(x), mask=mask)
    tl.store(out_ptr + 18 * n + offs, libdevice.log10(x), mask=mask)
    tl.store(out_ptr + 19 * n + offs, libdevice.log1p(x), mask=mask)
    tl.store(out_ptr + 20 * n + offs, libdevice.round(x), mask=mask)
    tl.store(out_ptr + 21 * n + offs, libdevice.rint(x), mask=mask)
    tl.store(out_ptr + 22 * n + offs, libdevice.floor(x), mask=mask)
    tl.store(out_ptr + 23 * n + offs, libdevice.ceil(x), mask=mask)
    tl.store(out_ptr + 24 * n + offs, libdevice.trunc(x), mask=mask)
    tl.store(out_ptr + 25 * n + offs, libdevice.cbrt(x), mask=mask)
    tl.store(out_ptr + 26 * n + offs, libdevice.rsqrt(x), mask=mask)
    tl.store(out_ptr + 27 * n + offs, libdevice.sqrt(x), mask=mask)
    tl.store(out_ptr + 28 * n + offs, libdevice.sqrt_rn(x), mask=mask)
    tl.store(out_ptr + 29 * n + offs, libdevice.tanh(x), mask=mask)
    tl.store(out_ptr + 30 * n + offs, libdevice.sin(x), mask=mask)
    tl.store(out_ptr + 31 * n + offs, libdevice.cos(x), mask=mask)


@triton.jit
def binary_kernel(x_ptr, y_ptr, out_ptr, n, WITH_FMOD: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + 0 * n + offs, libdevice.atan2(x, y), mask=mask)
    tl.store(out_ptr + 1 * n + offs, libdevice.pow(x, y), mask=mask)
    tl.store(out_ptr + 2 * n + offs, libdevice.copysign(x, y), mask=mask)
    tl.store(out_ptr + 3 * n + offs, libdevice.hypot(x, y), mask=mask)
    tl.store(out_ptr + 4 * n + offs, libdevice.div_rn(x, y), mask=mask)
    tl.store(out_ptr + 5 * n + offs, libdevice.fma(x, y, x), mask=mask)
    if WITH_FMOD:
        tl.store(out_ptr + 6 * n + offs, libdevice.fmod(x, y), mask=mask)
        tl.store(out_ptr + 7 * n + offs, libdevice.remainder(x, y), mask=mask)


@triton.jit
def predicate_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    nan = libdevice.isnan(x)
    sign = libdevice.signbit(x)
    tl.static_assert(nan.dtype == tl.int1)  # as libdevice: isnan/isinf are int1, signbit is int32
    tl.static_assert(sign.dtype == tl.int32)
    tl.store(out_ptr + 0 * n + offs, nan.to(tl.int32), mask=mask)
    tl.store(out_ptr + 1 * n + offs, libdevice.isinf(x).to(tl.int32), mask=mask)
    if x.dtype == tl.float64:  # libdevice's names: Triton has no libdevice.isfinite
        finite = libdevice.isfinited(x)
    else:
        finite = libdevice.finitef(x)
    tl.store(out_ptr + 2 * n + offs, finite.to(tl.int32), mask=mask)
    tl.store(out_ptr + 3 * n + offs, sign, mask=mask)


@triton.jit
def alias_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Other spellings: libdevice's fast_* and nearbyint, tl.math.<name> of older Triton kernels,
    tl.extra.cuda.libdevice, an integer exponent."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + 0 * n + offs, libdevice.nearbyint(x), mask=mask)
    tl.store(out_ptr + 1 * n + offs, libdevice.fast_expf(x), mask=mask)
    tl.store(out_ptr + 2 * n + offs, libdevice.fast_logf(x), mask=mask)
    tl.store(out_ptr + 3 * n + offs, tl.math.erfinv(x), mask=mask)
    tl.store(out_ptr + 4 * n + offs, tl.extra.cuda.libdevice.log1p(x), mask=mask)
    tl.store(out_ptr + 5 * n + offs, libdevice.pow(x, 3), mask=mask)
    tl.store(out_ptr + 6 * n + offs, tl.math.div_rn(x, 3.0), mask=mask)


ALIASES = [("nearbyint", "rint"), ("fast_expf", "exp"), ("fast_logf", "log"), ("erfinv", "erfinv"),
           ("log1p", "log1p"), ("pow3", None), ("div3", None)]


@triton.jit
def fmod_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, libdevice.fmod(x, 3.0))


# ---------------------------------------------------------------------------------------- bounds
# max ulp measured on the inputs below (docs/LANGUAGE.md states the same table); 0 = exact
_F32 = {
    "sim": dict(erfinv=2, exp=2, exp2=1, exp10=2, log=2, log2=2, rsqrt=1, tanh=1, sin=1, cos=1, pow=1, hypot=2),
    "cpu": dict(asin=1, acos=1, atan=1, sinh=2, cosh=1, asinh=1, acosh=1, atanh=1, tan=1, erf=1, erfc=2, erfinv=2,
                exp=1, exp2=1, exp10=1, expm1=1, log=1, log2=1, log10=2, log1p=2, cbrt=1, rsqrt=1, tanh=1, sin=1,
                cos=1, atan2=1, pow=1, hypot=2),
    "ascend": dict(asin=2, acos=1, atan=2, sinh=2, cosh=2, asinh=2, acosh=2, atanh=3, tan=2, erf=1, erfc=4, erfinv=2,
                   exp=1, exp2=1, exp10=1, expm1=2, log=1, log2=1, log10=2, log1p=2, cbrt=2, rsqrt=1, tanh=3,
                   sin=1, cos=1, atan2=2, hypot=2),  # pow: _pow_bound
}
_F64 = {
    "sim": dict(erfinv=2, exp10=1, hypot=2),
    "cpu": dict(asin=1, acos=1, atan=1, sinh=2, cosh=1, asinh=1, acosh=2, atanh=1, tan=1, erfinv=2, exp=1, exp2=1,
                exp10=1, expm1=2, log=1, log2=1, log10=1, log1p=2, cbrt=3, tanh=2, atan2=1, pow=1, hypot=2),
}
_F16 = {  # through fp32, then rounded: the double rounding fp64 -> fp32 -> fp16 (log2 on ascend: Ln in half)
    "sim": dict(atan=1, tan=1, erfinv=1, cbrt=1, atan2=1),
    "cpu": dict(atan=1, tan=1, erfinv=1, cbrt=1),
    "ascend": dict(atan=1, tan=1, erfinv=1, expm1=1, log2=2, cbrt=1),
}
BOUNDS = {np.float32: _F32, np.float64: _F64, np.float16: _F16}
TAN_RANGE = 2**13 * math.pi / 2  # ascend reduces the argument of sin, cos, tan exactly below this (vmath)


def _pow_bound(target, dtype, want):
    """ascend computes pow as Exp(y Ln|x|): the rounding of y Ln|x| scales the error by |ln(result)|."""
    if target == "ascend" and dtype == np.float32:
        with np.errstate(all="ignore"):
            scale = np.abs(np.log(np.abs(want.astype(np.float64))))
        return np.where(np.isfinite(scale), 1 + 2 * scale, 0)
    return BOUNDS[dtype].get(target, {}).get("pow", 0)


# ---------------------------------------------------------------------------------------- inputs


def _unary_inputs(dtype, n=2500):
    rng = np.random.default_rng(0)
    info = np.finfo(np.float32 if dtype == np.float16 else dtype)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 1.5, 3.5, -3.5, float(info.tiny),
               float(info.smallest_subnormal), -float(info.smallest_subnormal), 1e-40, float(info.max),
               -float(info.max), 1e-3, 0.999, -0.9999, 1e30, -1e30, 100.0, 88.7, 89.4, -104.0, 38.5, -45.5, 10.06, 9.0,
               4096.5, 1e4 * math.pi, 0.41421357, 1 - 2**-24, -(1 - 2**-24), 17.5, -17.5, 20.5, 2**23 + 1.0]
    parts = [np.array(special), rng.uniform(-1, 1, n), rng.uniform(-10, 10, n), rng.uniform(-100, 100, n),
             np.exp(rng.uniform(-80, 80, n)) * rng.choice([-1, 1], n), 1 - np.exp(rng.uniform(-17, -1, n // 4)),
             rng.integers(-40, 40, n // 8) + 0.5, rng.uniform(-1e4, 1e4, n // 4)]
    if dtype == np.float32:
        parts.append(rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32))
    with np.errstate(all="ignore"):
        if dtype == np.float64:
            parts.append(rng.integers(0, 2**63, n, dtype=np.uint64).view(np.float64) * rng.choice([-1, 1], n))
        return np.concatenate([p.astype(dtype) for p in parts])


def _binary_inputs(dtype, n=2500):
    rng = np.random.default_rng(1)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 2.5, 1e-40,
                        3e38, -7.0])
    gx, gy = np.meshgrid(special, special)
    with np.errstate(all="ignore"):
        general = _unary_inputs(dtype, n // 2).astype(np.float64)
    mag = np.exp(rng.uniform(-7, 7, n)) * rng.choice([-1, 1], n)
    expo = np.where(rng.random(n) < 0.3, rng.integers(-9, 10, n), rng.uniform(-9, 9, n))
    x = np.concatenate([gx.ravel(), general, mag, rng.uniform(-50, 50, n)])
    y = np.concatenate([gy.ravel(), rng.permutation(general), expo, rng.uniform(-5, 5, n)])
    with np.errstate(all="ignore"):
        return x.astype(dtype), y.astype(dtype)


# ---------------------------------------------------------------------------------------- references


def _erfinv(v):
    """float64 erfinv: Newton on erf (erfc above 1/2, so that the tail keeps its digits)."""
    a = np.abs(v.astype(np.float64))
    out = np.full(a.shape, np.nan)
    ok = a < 1
    aa = a[ok]
    erf, erfc = np.frompyfunc(math.erf, 1, 1), np.frompyfunc(math.erfc, 1, 1)
    w = -np.log((1 - aa) * (1 + aa))
    z = np.where(aa < 0.5, aa * 0.886, np.sqrt(np.maximum(w - 0.5 * np.log(np.maximum(w, 1e-300)) - 0.3, 0)))
    for _ in range(60):
        f = np.where(aa > 0.5, (1 - aa) - erfc(z).astype(np.float64), erf(z).astype(np.float64) - aa)
        z = np.maximum(z - f / (2 / math.sqrt(math.pi) * np.exp(-z * z) + z * f), 0)
    out[ok] = z
    out[a == 1] = np.inf
    return np.copysign(out, v)


def _fma(a, b, dtype=np.float64):
    """a * b + a rounded once to dtype (exact rationals; a zero keeps IEEE's sign, as the float64 sum has it)."""
    from fractions import Fraction

    with np.errstate(all="ignore"):
        out = (a.astype(np.float64) * b + a).astype(dtype)
    bits = {np.float64: np.uint64, np.float32: np.uint32, np.float16: np.uint16}[dtype]
    top = np.finfo(dtype).max
    big = Fraction(float(top)) + (Fraction(float(top)) - Fraction(float(np.nextafter(top, dtype(0))))) / 2
    for i in np.flatnonzero(np.isfinite(a) & np.isfinite(b)):
        q = Fraction(float(a[i])) * Fraction(float(b[i])) + Fraction(float(a[i]))
        if q == 0:
            continue
        if abs(q) >= big:
            out[i] = np.inf if q > 0 else -np.inf
            continue
        c = dtype(float(q))  # float() rounds correctly; to a narrower type, pick the nearest neighbour
        cands = [v for v in (c, np.nextafter(c, dtype(np.inf)), np.nextafter(c, dtype(-np.inf))) if np.isfinite(v)]
        out[i] = min(cands, key=lambda v: (abs(Fraction(float(v)) - q), int(np.array(v).view(bits)) & 1))
    return out


def _round_half_away(v):
    r = np.trunc(v)
    return np.where(np.abs(v - r) >= 0.5, r + np.copysign(1.0, v), r)


def _remainder(a, b):
    return np.array([math.remainder(p, q) if math.isfinite(p) and q != 0 and not math.isnan(q) else math.nan
                     for p, q in zip(a, b)])


REF = {"asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
       "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "tan": np.tan,
       "erf": np.frompyfunc(math.erf, 1, 1), "erfc": np.frompyfunc(math.erfc, 1, 1), "erfinv": _erfinv,
       "exp": np.exp, "exp2": np.exp2, "exp10": lambda v: np.power(10.0, v), "expm1": np.expm1, "log": np.log,
       "log2": np.log2, "log10": np.log10, "log1p": np.log1p, "round": _round_half_away, "rint": np.rint,
       "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "cbrt": np.cbrt, "rsqrt": lambda v: 1 / np.sqrt(v),
       "sqrt": np.sqrt, "sqrt_rn": np.sqrt, "tanh": np.tanh, "sin": np.sin, "cos": np.cos, "atan2": np.arctan2,
       "pow": np.power, "copysign": np.copysign, "hypot": np.hypot, "div_rn": np.divide, "fmod": np.fmod,
       "remainder": _remainder}


def _reference(name, dtype, *args, target=None):
    with np.errstate(all="ignore"):
        if name == "fma" and target == "ascend":  # Mul, then Add: not fused
            a, b = args
            return a * b + a
        if name == "fma":
            return _fma(*args, dtype)
        return np.asarray(REF[name](*(a.astype(np.float64) for a in args))).astype(np.float64).astype(dtype)


def ulp_error(got, want):
    """|got - want| in units in the last place of `want`; NaN, infinities and the sign of zeros must match."""
    with np.errstate(all="ignore"):
        g, w = got.astype(np.float64), want.astype(np.float64)
        err = np.abs(g - w) / np.spacing(np.abs(want)).astype(np.float64)
    same = (g == w) | (np.isnan(g) & np.isnan(w))
    err[same] = 0.0
    err[~np.isfinite(err)] = np.inf
    err[(w == 0) & (g == 0) & (np.signbit(g) != np.signbit(w))] = np.inf
    return err


# ---------------------------------------------------------------------------------------- runs

_RUNS: dict = {}
DTYPES = {"float32": np.float32, "float64": np.float64, "float16": np.float16}
CASES = [("sim", "float32"), ("sim", "float64"), ("sim", "float16"), ("cpu", "float32"), ("cpu", "float64"),
         ("cpu", "float16"), ("ascend", "float32"), ("ascend", "float16")]


def _run(kind, target, dtype):
    key = (kind, target, dtype)
    if key not in _RUNS:
        if kind == "unary":
            x = _unary_inputs(dtype)
            out = np.zeros(len(UNARY) * x.size, dtype)
            unary_kernel[(xblock.cdiv(x.size, 256),)](x, out, x.size, BLOCK=256, target=target)
            _RUNS[key] = ((x,), out.reshape(len(UNARY), x.size))
        else:
            x, y = _binary_inputs(dtype)
            out = np.zeros(len(BINARY) * x.size, dtype)
            binary_kernel[(xblock.cdiv(x.size, 256),)](x, y, out, x.size, WITH_FMOD=True, BLOCK=256, target=target)
            _RUNS[key] = ((x, y), out.reshape(len(BINARY), x.size))
    return _RUNS[key]


def _check(kind, names, target, dtype_name, name):
    dtype = DTYPES[dtype_name]
    args, out = _run(kind, target, dtype)
    got = out[names.index(name)]
    want = _reference(name, dtype, *args, target=target)
    err = ulp_error(got, want)
    if name in ("sin", "cos", "tan") and target == "ascend":
        with np.errstate(all="ignore"):
            err[~(np.abs(args[0].astype(np.float64)) < TAN_RANGE)] = 0  # documented: no reduction beyond
    bound = _pow_bound(target, dtype, want) if name == "pow" else BOUNDS[dtype].get(target, {}).get(name, 0)
    if os.environ.get("XBLOCK_LIBDEVICE_REPORT"):
        print(f"\n{target} {dtype_name} {name}: {np.nanmax(err):g}")
    bad = np.flatnonzero(err > bound)
    if bad.size:
        i = bad[np.argmax(err[bad])]
        at = ", ".join(repr(a[i]) for a in args)
        pytest.fail(f"{target} {dtype_name} {name}({at}) = {got[i]!r}, want {want[i]!r}: {err[i]:g} ulp "
                    f"(bound {np.max(bound):g}; {bad.size} over)")


unary_kernel = xblock.jit(unary_kernel)
binary_kernel = xblock.jit(binary_kernel)


@pytest.mark.parametrize("target,dtype", CASES)
@pytest.mark.parametrize("name", UNARY)
def test_unary(target, dtype, name):
    _check("unary", UNARY, target, dtype, name)


@pytest.mark.parametrize("target,dtype", CASES)
@pytest.mark.parametrize("name", BINARY)
def test_binary(target, dtype, name):
    _check("binary", BINARY, target, dtype, name)


@pytest.mark.parametrize("target,dtype", [("sim", "float32"), ("sim", "float64"), ("cpu", "float32"),
                                          ("cpu", "float64"), ("ascend", "float32"), ("ascend", "float16")])
def test_predicates(target, dtype):
    x = _unary_inputs(DTYPES[dtype], 200)
    x = np.concatenate([x, -x, np.array([-np.nan], x.dtype)])
    out = np.zeros(4 * x.size, np.int32)
    xblock.jit(predicate_kernel)[(xblock.cdiv(x.size, 256),)](x, out, x.size, BLOCK=256, target=target)
    want = [np.isnan(x), np.isinf(x), np.isfinite(x), np.signbit(x)]
    for name, got, w in zip(PREDICATES, out.reshape(4, x.size), want):
        np.testing.assert_array_equal(got, w.astype(np.int32), err_msg=f"{target} {dtype} {name}")


@pytest.mark.parametrize("target", ["sim", "cpu", "ascend"])
def test_other_spellings(target):
    x = np.concatenate([_unary_inputs(np.float32, 300), np.arange(-6, 7, dtype=np.float32)])
    out = np.zeros(len(ALIASES) * x.size, np.float32)
    xblock.jit(alias_kernel)[(xblock.cdiv(x.size, 256),)](x, out, x.size, BLOCK=256, target=target)
    ref = np.zeros(len(UNARY) * x.size, np.float32)
    unary_kernel[(xblock.cdiv(x.size, 256),)](x, ref, x.size, BLOCK=256, target=target)
    ref = ref.reshape(len(UNARY), x.size)
    got = out.reshape(len(ALIASES), x.size)
    for k, (name, same_as) in enumerate(ALIASES):
        if same_as is not None:
            np.testing.assert_array_equal(got[k], ref[UNARY.index(same_as)], err_msg=f"{target} {name}")
    with np.errstate(all="ignore"):
        cube = np.power(x.astype(np.float64), 3).astype(np.float32)
        third = (x.astype(np.float64) / 3).astype(np.float32)
    pow_bound = _pow_bound(target, np.float32, cube) if target == "ascend" else 1
    assert (ulp_error(got[5], cube) <= pow_bound).all(), target
    assert (ulp_error(got[6], third) == 0).all(), target


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_cuda_compiles_to_cubin(dtype):
    """As Triton lowers libdevice: `tt.extern_elementwise` calls of `__nv_<name>[f]` where its NVIDIA
    backend has no math op, `tt.precise_sqrt`/`tt.precise_divf` for sqrt_rn/div_rn; 16-bit through fp32."""
    n = 256
    t = TensorSpec(n, dtype)
    u = precompile(unary_kernel, (t, TensorSpec(len(UNARY) * n, dtype), n), {"BLOCK": 128})
    b = precompile(binary_kernel, (t, t, TensorSpec(len(BINARY) * n, dtype), n), {"WITH_FMOD": True, "BLOCK": 128})
    p = precompile(predicate_kernel, (t, TensorSpec(4 * n, "int32"), n), {"BLOCK": 128})
    for ck in (u, b, p):
        assert ck.asm["cubin"], dtype
    suffix = "" if dtype == "float64" else "f"
    for name in ("asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "tan", "erfc", "expm1", "log10",
                 "log1p", "cbrt", "round", "rint", "trunc", "tanh"):
        assert f"__nv_{name}{suffix}" in u.asm["ttir"], (dtype, name)
    for name in ("atan2", "pow", "copysign"):
        assert f"__nv_{name}{suffix}" in b.asm["ttir"], (dtype, name)
    assert "arith.remf" in b.asm["ttir"]
    if dtype != "float64":
        assert "tt.precise_sqrt" in u.asm["ttir"] and "tt.precise_divf" in b.asm["ttir"]


def test_cuda_other_spellings_compile():
    ck = precompile(alias_kernel, (TensorSpec(256, "float32"), TensorSpec(7 * 256, "float32"), 256), {"BLOCK": 128})
    assert ck.asm["cubin"]


def test_ascend_fmod_is_exact_lane_by_lane():
    """ascend has no vector float remainder: fmod runs exactly on the bits, lane by lane, with a warning."""
    x = np.linspace(-50, 50, 64, dtype=np.float32)
    out = np.zeros_like(x)
    with pytest.warns(XBlockWarning, match=r"float `%` \(fmod\) has no vector instruction"):
        xblock.jit(fmod_kernel)[(1,)](x, out, 64, BLOCK=64, target="ascend")
    np.testing.assert_array_equal(out, np.fmod(x, np.float32(3.0)))


def test_names():
    """Every function of the set is in libdevice (both module paths) and in xl.math."""
    import inspect

    from triton.language.extra.cuda import libdevice as nv

    import xblock.language as xl
    from xblock.language.extra import libdevice as xlib

    def params(f):
        return [p for p in inspect.signature(getattr(f, "fn", f)).parameters if p != "_semantic"]

    for name in UNARY + BINARY + PREDICATES + ["fast_expf", "fast_logf", "nearbyint", "finitef", "isfinited"]:
        assert callable(getattr(xlib, name)), name
        assert callable(getattr(xl.math, name)), name
        if hasattr(nv, name):  # libdevice's argument names (arg0, arg1, ...)
            assert params(getattr(xlib, name)) == params(getattr(nv, name)), name
    assert xl.extra.cuda.libdevice is xlib
