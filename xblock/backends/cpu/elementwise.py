"""Elementwise `arith`/`math` ops on scalars or chunks, with the cpu's own vectorized math.

Most ops are re-emitted as they are (generic form, same attributes) on the chunk's vector type.
The exceptions keep the sim's semantics where LLVM's differ (integer division by zero, shifts
past the width) or replace a per-lane libm call with a polynomial (exp, exp2: Cephes, ~1 ulp).
"""

from __future__ import annotations

from .emit import V, elem_of

SPECIAL: dict = {}
MATH_F32 = ("math.exp", "math.exp2", "math.log", "math.log2", "math.sin", "math.cos", "math.erf",
            "math.tanh", "math.sqrt", "math.rsqrt", "math.floor", "math.ceil", "math.powf")


def special(*names):
    def deco(fn):
        for n in names:
            SPECIAL[n] = fn
        return fn

    return deco


def with_elem(ty: str, ety: str) -> str:
    """`ty` (scalar or vector type) with its element type replaced by `ety`."""
    return ty[: ty.rindex("x") + 1] + ety + ">" if ty.startswith("vector<") else ety


def emit_op(e, name: str, attrs: str, operands: list, rtype: str) -> V:
    """Emit op `name` on scalar or vector operands; `rtype` is the result's (matching) type."""
    if name in SPECIAL:
        return SPECIAL[name](e, name, attrs, operands, rtype)
    ety = elem_of(rtype)
    if name in MATH_F32 and ety in ("f16", "bf16"):
        f32 = with_elem(rtype, "f32")
        wide = [e.op(f"arith.extf {o} : {o.type} to {f32}", f32) for o in operands]
        r = emit_op(e, name, attrs, wide, f32)
        return e.op(f"arith.truncf {r} : {f32} to {rtype}", rtype)
    types = ", ".join(o.type for o in operands)
    args = ", ".join(o.name for o in operands)
    return e.op(f'"{name}"({args}) {attrs} : ({types}) -> {rtype}', rtype)


def _bin(e, op: str, a, b, ty: str) -> V:
    return e.op(f"{op} {a}, {b} : {ty}", ty)


def _select(e, c, a, b) -> V:
    ct = c.type
    sig = f"{ct}, {a.type}" if ct.startswith("vector<") else a.type
    return e.op(f"arith.select {c}, {a}, {b} : {sig}", a.type)


def _cmp(e, kind: str, pred: str, a, b) -> V:
    return e.op(f"arith.{kind} {pred}, {a}, {b} : {a.type}", with_elem(a.type, "i1"))


@special("arith.divsi", "arith.remsi", "arith.divui", "arith.remui")
def _safe_divrem(e, name, attrs, ops, rtype):
    a, b = ops
    ety = elem_of(rtype)
    zero, one = e.const(0, _splat_ty(rtype)), e.const(1, _splat_ty(rtype))
    bad = _cmp(e, "cmpi", "eq", b, zero)
    if name.endswith("si") and ety != "i1":
        minus1 = _cmp(e, "cmpi", "eq", b, e.const(-1, _splat_ty(rtype)))
        bad_or = e.op(f"arith.ori {bad}, {minus1} : {bad.type}", bad.type)
        q = _bin(e, name, a, _select(e, bad_or, one, b), rtype)
        neg = _bin(e, "arith.subi", zero, a, rtype) if "div" in name else zero
        q = _select(e, minus1, neg, q)
    else:
        q = _bin(e, name, a, _select(e, bad, one, b), rtype)
    return _select(e, bad, zero, q)


@special("arith.shli", "arith.shrsi", "arith.shrui")
def _shift(e, name, attrs, ops, rtype):
    a, b = ops
    width = {"i8": 8, "i16": 16, "i32": 32, "i64": 64}.get(elem_of(rtype), 1)
    amt = _bin(e, "arith.andi", b, e.const(width - 1, _splat_ty(rtype)), rtype) if width > 1 else b
    return _bin(e, name, a, amt, rtype)


def _splat_ty(ty: str) -> str:
    return ty


# ----------------------------------------------------------------------------------------- exp
_LOG2E = 1.44269504088896341
_EXP_POLY = (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1,
             5.0000001201e-1)


def _poly_exp(e, r: V, ty: str) -> V:
    """e^r for |r| <= ln2/2 (Cephes expf)."""
    p = e.const(_EXP_POLY[0], ty)
    for c in _EXP_POLY[1:]:
        p = e.op(f"math.fma {p}, {r}, {e.const(c, ty)} : {ty}", ty)
    z = _bin(e, "arith.mulf", r, r, ty)
    y = e.op(f"math.fma {p}, {z}, {r} : {ty}", ty)
    return _bin(e, "arith.addf", y, e.const(1.0, ty), ty)


def _scale2(e, y: V, n: V, ty: str) -> V:
    """y * 2^n for an integral float n in [-126, 127]."""
    it = with_elem(ty, "i32")
    ni = e.op(f"arith.fptosi {n} : {ty} to {it}", it)
    ni = _bin(e, "arith.addi", ni, e.const(127, it), it)
    ni = _bin(e, "arith.shli", ni, e.const(23, it), it)
    return _bin(e, "arith.mulf", y, e.op(f"arith.bitcast {ni} : {it} to {ty}", ty), ty)


def _finish(e, x: V, r: V, hi: float, lo: float, ty: str) -> V:
    """Overflow to inf above `hi`, flush to 0 below `lo`, NaN stays NaN."""
    r = _select(e, _cmp(e, "cmpf", "ogt", x, e.const(hi, ty)), e.const(float("inf"), ty), r)
    r = _select(e, _cmp(e, "cmpf", "olt", x, e.const(lo, ty)), e.const(0.0, ty), r)
    return _select(e, _cmp(e, "cmpf", "uno", x, x), x, r)


@special("math.exp", "math.exp2")
def _exp(e, name, attrs, ops, rtype):
    ety = elem_of(rtype)
    if ety != "f32":
        if ety in ("f16", "bf16"):
            f32 = with_elem(rtype, "f32")
            wide = e.op(f"arith.extf {ops[0]} : {ops[0].type} to {f32}", f32)
            r = _exp(e, name, attrs, [wide], f32)
            return e.op(f"arith.truncf {r} : {f32} to {rtype}", rtype)
        return e.op(f'"{name}"({ops[0]}) {attrs} : ({rtype}) -> {rtype}', rtype)
    x, ty = ops[0], rtype
    if name == "math.exp":
        hi, lo = 88.72283935546875, -87.33654022216797
        xc = e.op(f"arith.minimumf {e.op(f'arith.maximumf {x}, {e.const(lo, ty)} : {ty}', ty)}, "
                  f"{e.const(88.3762626647949, ty)} : {ty}", ty)
        n = e.op(f"math.floor {e.op(f'math.fma {xc}, {e.const(_LOG2E, ty)}, {e.const(0.5, ty)} : {ty}', ty)}"
                 f" : {ty}", ty)
        r = e.op(f"math.fma {n}, {e.const(-0.693359375, ty)}, {xc} : {ty}", ty)
        r = e.op(f"math.fma {n}, {e.const(2.12194440e-4, ty)}, {r} : {ty}", ty)
    else:
        hi, lo = 128.0, -126.0
        xc = e.op(f"arith.minimumf {e.op(f'arith.maximumf {x}, {e.const(lo, ty)} : {ty}', ty)}, "
                  f"{e.const(127.0, ty)} : {ty}", ty)
        n = e.op(f"math.floor {_bin(e, 'arith.addf', xc, e.const(0.5, ty), ty)} : {ty}", ty)
        f = _bin(e, "arith.subf", xc, n, ty)
        r = _bin(e, "arith.mulf", f, e.const(0.6931471805599453, ty), ty)
    y = _scale2(e, _poly_exp(e, r, ty), n, ty)
    return _finish(e, x, y, hi, lo, ty)


def is_elementwise(name: str) -> bool:
    return name.startswith("arith.") or name.startswith("math.")
