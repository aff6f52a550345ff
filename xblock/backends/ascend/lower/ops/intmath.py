"""The rules of integer ops the 910B vector unit has no instruction for: unsigned max/min and abs.

The vector unit's Max, Min and Muls take signed int16/int32 lanes (int8 widens to int16, as in
`tiles.compute_elem`). Unsigned max/min flip the sign bit of both operands (adding 2^(w-1) wraps to
exactly that), compare signed and flip back; uint8 lanes zero-extend to int16 instead; int64 ones run
lane by lane (SGLang's packed uint64 top-k keys). abs is max(x, -x), which keeps the most negative
value as C and numpy do. Scalars become C++ selects.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from ...values import SIZE, Splat, Tile, elem_of, shape_of
from ...vector.tiles import as_elem, by_lanes, const_convert, dst_tile, finish, is_block, vec, vec_scalar
from ..rules import rule

LANES = ("i8", "i16", "i32")


def _lanes(ctx, elem: str, what: str) -> None:
    if elem not in LANES:
        raise ctx.error(f"{what} of {elem} blocks is not supported on ascend: the 910B vector unit has no "
                        f"64-bit integer lanes (int8, int16 and int32 work)")


def _flip(ctx, x, elem: str):
    """x with its sign bit flipped: a Tile (Adds, which wraps) or a Splat (a xor, no C++ overflow)."""
    low = -(1 << (SIZE[elem] * 8 - 1))
    if isinstance(x, Tile):
        out = ctx.temp(elem, x.shape)
        vec_scalar(ctx, "Adds", out, x, Splat(elem, x.shape, const=low))
        return out
    if x.scalar is None:
        w = SIZE[elem] * 8
        v = (int(x.const) ^ low) & ((1 << w) - 1)
        return Splat(elem, x.shape, const=v - (1 << w) if v >> (w - 1) else v)
    return Splat(elem, x.shape, scalar=arith.XOrIOp(x.scalar, ctx.cst(elem, low)).result)


def _operand(ctx, v: ir.Value):
    held = ctx.vmap.get(v)
    return held if isinstance(held, Splat) else ctx.tile(v)


def _scalar_minmax(ctx, name: str, a: ir.Value, b: ir.Value) -> ir.Value:
    """Unsigned max/min of two C++ scalars: a signed comparison of the values with their sign bits flipped."""
    t = str(a.type)
    low = ctx.cst(t, -(1 << (SIZE[t] * 8 - 1)))
    fa, fb = arith.XOrIOp(a, low).result, arith.XOrIOp(b, low).result
    pred = arith.CmpIPredicate.sgt if name == "arith.maxui" else arith.CmpIPredicate.slt
    return arith.SelectOp(arith.CmpIOp(pred, fa, fb).result, a, b).result


@rule("arith.maxui", "arith.minui")
def _lower_unsigned_minmax(ctx, op):
    r = op.result
    if not is_block(r):
        ctx.vmap[r] = _scalar_minmax(ctx, op.name, *(ctx.scalar(o) for o in op.operands))
        return
    elem = elem_of(r.type)
    api = "Max" if op.name == "arith.maxui" else "Min"
    if elem == "i64":  # no 64-bit lanes: C++ scalars lane by lane (SGLang's packed uint64 top-k keys)
        return by_lanes(ctx, op, f"unsigned {api.lower()} of int64 blocks has no vector instruction (910B has no "
                        "64-bit lanes)", lambda xs: _scalar_minmax(ctx, op.name, *xs))
    _lanes(ctx, elem, f"unsigned {api.lower()}")
    a, b = (_operand(ctx, o) for o in op.operands)
    if isinstance(a, Splat) and isinstance(b, Splat):
        a = ctx.tile(op.operands[0])
    elif isinstance(a, Splat):  # both ops are commutative
        a, b = b, a
    if elem == "i8":  # zero-extended into int16 lanes: a signed comparison is right there
        a, b = as_elem(ctx, a, "i16", unsigned=True), as_elem(ctx, b, "i16", unsigned=True)
        out = dst_tile(ctx, op, "i16")
        if isinstance(b, Splat):
            vec_scalar(ctx, api + "s", out, a, b)
        else:
            vec(ctx, api, out, a, b)
        finish(ctx, op, out, "i16")
        return
    fa, fb = _flip(ctx, a, elem), _flip(ctx, b, elem)
    out = dst_tile(ctx, op, elem)
    if isinstance(fb, Splat):
        vec_scalar(ctx, api + "s", out, fa, fb)
    else:
        vec(ctx, api, out, fa, fb)
    vec_scalar(ctx, "Adds", out, out, Splat(elem, out.shape, const=-(1 << (SIZE[elem] * 8 - 1))))
    finish(ctx, op, out, elem)


@rule("math.absi")
def _lower_absi(ctx, op):
    r = op.result
    if not is_block(r):
        x = ctx.scalar(op.operands[0])
        zero = ctx.cst(str(x.type), 0)
        neg = arith.CmpIOp(arith.CmpIPredicate.slt, x, zero).result
        ctx.vmap[r] = arith.SelectOp(neg, arith.SubIOp(zero, x).result, x).result
        return
    elem = elem_of(r.type)
    if elem == "i64":  # no 64-bit lanes: C++ scalars lane by lane
        def scalar_abs(xs):
            zero = ctx.cst("i64", 0)
            neg = arith.CmpIOp(arith.CmpIPredicate.slt, xs[0], zero).result
            return arith.SelectOp(neg, arith.SubIOp(zero, xs[0]).result, xs[0]).result
        return by_lanes(ctx, op, "abs of int64 blocks has no vector instruction (910B has no 64-bit lanes)",
                        scalar_abs)
    _lanes(ctx, elem, "abs")
    held = ctx.vmap.get(op.operands[0])
    if isinstance(held, Splat) and held.scalar is None:
        ctx.vmap[r] = Splat(elem, shape_of(r.type), const=const_convert(abs(int(held.const)), "i64", elem))
        return
    ce = "i16" if elem == "i8" else elem
    x = as_elem(ctx, ctx.tile(op.operands[0]), ce)
    neg = ctx.temp(ce, x.shape)
    vec_scalar(ctx, "Muls", neg, x, Splat(ce, x.shape, const=-1))
    out = dst_tile(ctx, op, ce)
    vec(ctx, "Max", out, x, neg)
    finish(ctx, op, out, ce)
