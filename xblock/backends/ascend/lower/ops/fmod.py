"""The rule of float `%` (arith.remf: Triton's frem, C's fmod: the result has the dividend's sign).

The AscendC vector API has no float remainder, and x - trunc(x / y) * y in float is not exact, so
fmod runs as C++ scalars lane by lane (with a warning), on the bits: NPU builds have no <cmath>
(REFERENCE.md §0.1). fmod is always exact: with x = mx * 2^ex and y = my * 2^ey (24-bit
mantissas), the remainder is mx * 2^(ex - ey) mod my, times 2^ey, so it is the integer remainder
of mx taken down the exponent difference at most 39 bits a step (an int64 `%`; 7 steps cover
fp32's 253), then put back together as a float. f16 and bf16 go through f32 (exact both ways).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from ...values import elem_of
from ...vector.tiles import by_lanes, is_block
from ..rules import rule

STEP = 39  # a remainder below 2^24 shifted by 39 bits stays below 2^63
STEPS = 7  # ceil(253 / 39): the largest exponent difference of finite fp32 values


def _fmod_f32(ctx, x: ir.Value, y: ir.Value) -> ir.Value:
    """fmod of two f32 C++ scalars, exact, with C's NaN cases (y == 0, x infinite, either NaN)."""
    i32, i64, f32 = ctx.i32, ctx.i64, ir.F32Type.get()
    c = lambda v: ctx.cst("i32", v)  # noqa: E731
    ux, uy = (arith.BitcastOp(i32, v).result for v in (x, y))
    ax, ay = (arith.AndIOp(u, c(0x7FFFFFFF)).result for u in (ux, uy))
    sign = arith.XOrIOp(ux, ax).result
    sel, cmp, P = arith.SelectOp, arith.CmpIOp, arith.CmpIPredicate

    def mantissa(a):  # (mantissa, exponent of its unit bit): subnormals have exponent 1 and no hidden bit
        e = arith.ShRSIOp(a, c(23)).result
        m = sel(cmp(P.ne, e, c(0)).result, arith.OrIOp(arith.AndIOp(a, c(0x7FFFFF)).result, c(0x800000)).result,
                a).result
        return m, arith.MaxSIOp(e, c(1)).result

    (mx, ex), (my, ey) = mantissa(ax), mantissa(ay)
    my64 = arith.ExtSIOp(i64, arith.MaxSIOp(my, c(1)).result).result  # y == 0 is NaN below: no `% 0`
    r = arith.RemSIOp(arith.ExtSIOp(i64, mx).result, my64).result
    k = arith.MaxSIOp(arith.SubIOp(ex, ey).result, c(0)).result
    for _ in range(STEPS):
        s = arith.MinSIOp(k, c(STEP)).result
        r = arith.RemSIOp(arith.ShLIOp(r, arith.ExtSIOp(i64, s).result).result, my64).result
        k = arith.SubIOp(k, s).result
    r = arith.TruncIOp(i32, r).result  # below my < 2^24; the value is r * 2^(ey - 150)
    fr = arith.SIToFPOp(f32, arith.MaxSIOp(r, c(1)).result).result  # exact: its exponent is r's top bit
    top = arith.SubIOp(arith.ShRSIOp(arith.BitcastOp(i32, fr).result, c(23)).result, c(127)).result
    shift = arith.SubIOp(c(23), top).result
    e = arith.SubIOp(ey, shift).result
    normal = arith.OrIOp(arith.AndIOp(arith.ShLIOp(r, shift).result, c(0x7FFFFF)).result,
                         arith.ShLIOp(e, c(23)).result).result
    low = arith.MinSIOp(arith.SubIOp(ey, c(1)).result, c(23)).result  # ey - 1 < shift <= 23 where it is taken
    sub = arith.ShLIOp(r, low).result  # r * 2^(ey - 1) units of 2^-149
    mag = sel(cmp(P.sge, e, c(1)).result, normal, sub).result
    mag = sel(cmp(P.eq, r, c(0)).result, c(0), mag).result
    res = sel(cmp(P.slt, ax, ay).result, ux, arith.OrIOp(mag, sign).result).result  # |x| < |y|: x itself
    nan = arith.OrIOp(arith.OrIOp(cmp(P.eq, ay, c(0)).result, cmp(P.sge, ax, c(0x7F800000)).result).result,
                      cmp(P.sgt, ay, c(0x7F800000)).result).result
    res = sel(nan, c(0x7FC00000), res).result
    return arith.BitcastOp(f32, res).result


def _fmod(ctx, x: ir.Value, y: ir.Value) -> ir.Value:
    t = x.type
    if str(t) == "f32":
        return _fmod_f32(ctx, x, y)
    wide = (arith.ExtFOp(ir.F32Type.get(), v).result for v in (x, y))
    return arith.TruncFOp(t, _fmod_f32(ctx, *wide)).result


@rule("arith.remf")
def _lower_remf(ctx, op):
    r = op.result
    if not is_block(r):
        ctx.vmap[r] = _fmod(ctx, *(ctx.scalar(o) for o in op.operands))
        return
    if elem_of(r.type) not in ("f16", "bf16", "f32"):
        raise ctx.error(f"float `%` of {elem_of(r.type)} blocks is not supported on ascend (no such vector type)")
    by_lanes(ctx, op, "float `%` (fmod) has no vector instruction and x - trunc(x / y) * y in float is not exact",
             lambda xs: _fmod(ctx, *xs))
