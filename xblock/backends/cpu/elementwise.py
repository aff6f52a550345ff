"""Elementwise `arith`/`math` ops on scalars or chunks, with the cpu's own vectorized math.

`emit_op` writes one op: most are re-emitted as they are (generic form, same attributes) on the
chunk's vector type. The exceptions keep the sim's semantics where LLVM's differ (integer division
by zero, shifts past the width); `vmath` registers here the polynomials that replace per-lane libm
calls. `convert` casts between numeric element types (reductions and `dot` accumulate wider).
A helper of the rule modules, below them: it registers no rule.
"""

from __future__ import annotations

from .emit import V, elem_of, is_float

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


def convert(e, v: V, to: str) -> V:
    """Convert a scalar or vector between numeric element types (widening or narrowing)."""
    src = elem_of(v.type)
    if src == to:
        return v
    t = with_elem(v.type, to)
    if is_float(src) and is_float(to):
        op = "arith.extf" if _bits(to) > _bits(src) else "arith.truncf"
    elif is_float(to):
        op = "arith.sitofp"
    elif is_float(src):
        op = "arith.fptosi"
    else:
        op = "arith.extsi" if _bits(to) > _bits(src) else "arith.trunci"
    return e.op(f"{op} {v} : {v.type} to {t}", t)


def _bits(t: str) -> int:
    return int(t[1:]) if t != "bf16" else 16


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


def is_elementwise(name: str) -> bool:
    return name.startswith("arith.") or name.startswith("math.")
