"""The rules of integer bit operations: `&`, `|`, `^`, `~`, `<<`, `>>` and tl.umulhi (mului_extended).

Blocks of int8/int16/int32 lanes go through `vmath.Bits` (exact compositions of the 910B vector
unit's 16-bit And/Or/Not, its ShiftLeft/ShiftRight and integer Add/Sub/Mul; docs/DESIGN.md,
"Integer bit operations"); a mask block's `^` works on its bit mask. Two uniform operands give a
uniform block, computed in scalar code, and so do scalar operands. Shift counts are taken modulo
the lane width, as the sim does; a logical right shift of a scalar is an arithmetic one and a mask,
because the C++ the scalars become has only the signed types.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from ...values import Splat, Struct, elem_of, shape_of
from ...vector.tiles import (
    as_elem,
    by_lanes,
    cast,
    clone_scalar,
    dst_tile,
    fill,
    finish,
    is_block,
    mask_of,
    scalar_convert,
    structured,
)
from ...vector.vmath import Bits, wrap
from ..rules import rule

KIND = {"arith.andi": "and", "arith.ori": "or", "arith.xori": "xor"}
SCALAR = {"and": arith.AndIOp, "or": arith.OrIOp, "xor": arith.XOrIOp}
LANES = ("i8", "i16", "i32")
WHAT = {"and": "`&`", "or": "`|`", "xor": "`^`", "shli": "`<<`", "shrsi": "`>>`", "shrui": "`>>`"}


def _width(elem: str) -> int:
    return int(elem[1:])


def _lanes(ctx, elem: str, kind: str) -> None:
    if elem not in LANES:
        raise ctx.error(f"{WHAT[kind]} on {elem} blocks is not supported on ascend: the 910B vector unit has "
                        f"no 64-bit integer lanes (int8, int16 and int32 blocks work)")


def _const_of(v: ir.Value, held):
    """The integer value of a uniform constant operand, else None."""
    if isinstance(held, Splat) and held.scalar is None:
        return int(held.const)
    o = v.owner
    if not isinstance(o, ir.Block) and o.name == "arith.constant":
        a = o.attributes["value"]
        if isinstance(a, ir.DenseElementsAttr) and a.is_splat:
            return int(ir.IntegerAttr(a.get_splat_value()).value)
        if isinstance(a, ir.IntegerAttr):
            return int(a.value)
    return None


def _all_ones(v: ir.Value, held, width: int) -> bool:
    c = _const_of(v, held)
    return c is not None and c & ((1 << width) - 1) == (1 << width) - 1


def _held(ctx, v: ir.Value):
    """What `v` lowered to, a uniform structured block (a splat of a scalar) as a Splat."""
    held = ctx.vmap.get(v)
    if isinstance(held, Struct):
        a = ctx.ps.affine(v)
        if a is not None and a.uniform():
            elem = elem_of(v.type)
            return Splat(elem, shape_of(v.type), scalar=scalar_convert(ctx, ctx.lin(a.base), elem))
    return held


def _int_data(ctx, op) -> bool:
    return is_block(op.result) and elem_of(op.result.type) != "i1"


# ----- and, or, xor, not ------------------------------------------------------------------------

@rule("arith.andi", "arith.ori", when=_int_data)
@rule("arith.xori")
def _lower_bitwise(ctx, op):
    r = op.result
    if not is_block(r):
        return clone_scalar(ctx, op)
    if structured(ctx, r):
        ctx.vmap[r] = Struct(r)
        return
    elem, shape, kind = elem_of(r.type), shape_of(r.type), KIND[op.name]
    if elem == "i1":
        return _mask_xor(ctx, op, shape)
    if elem != "i64":  # and, or, xor work bit by bit: int64 tiles as 16-bit lanes like the others
        _lanes(ctx, elem, kind)
    (x, a), (y, b) = ((o, _held(ctx, o)) for o in op.operands)
    if isinstance(a, Splat) and isinstance(b, Splat):
        ctx.vmap[r] = Splat(elem, shape, scalar=SCALAR[kind](ctx.splat_scalar(a), ctx.splat_scalar(b)).result)
        return
    if isinstance(a, Splat):  # every one of these is commutative
        (x, a), (y, b) = (y, b), (x, a)
    bits = Bits(ctx, shape, elem)
    src = ctx.tile(x)
    out = dst_tile(ctx, op, elem)
    if kind == "xor" and _all_ones(y, b, bits.width):
        bits.invert(out, src)
    else:
        other = bits.fill(b) if isinstance(b, Splat) else ctx.tile(y)
        bits.logic(kind, out, src, other)
    finish(ctx, op, out, elem)


def _mask_xor(ctx, op, shape):
    """`^` (and `~`, a xor with true) of mask blocks, on the bit masks Compare makes."""
    x, y = op.operands
    if _const_of(x, ctx.vmap.get(x)) is not None:
        x, y = y, x
    bits = Bits(ctx, shape, "ui8")
    m = mask_of(ctx, x, shape)
    out = ctx.new_tile("ui8", shape, ctx.name_for(op))
    c = _const_of(y, ctx.vmap.get(y))
    if c is not None and c & 1:
        bits.invert(out, m)
    elif c is not None:
        bits.logic("or", out, m, m)
    else:
        bits.logic("xor", out, m, mask_of(ctx, y, shape))
    ctx.vmap[op.result] = out


# ----- shifts -----------------------------------------------------------------------------------

def _count(ctx, s: ir.Value, width: int):
    """The shift count mod the width: an int for a constant, else a named scalar."""
    c = ctx.const_of(s)
    if c is not None:
        return c & (width - 1)
    return ctx.named(arith.AndIOp(s, ctx.cst(str(s.type), width - 1)).result, "shift")


def scalar_shift(ctx, kind: str, x: ir.Value, s: ir.Value) -> ir.Value:
    """A scalar shift with the sim's semantics: the count mod the width; `shrui` logical."""
    t = str(x.type)
    width = _width(t)
    n = _count(ctx, s, width)
    c = ctx.cst(t, n) if isinstance(n, int) else n
    if kind == "shli":
        return arith.ShLIOp(x, c).result
    shifted = arith.ShRSIOp(x, c).result
    if kind == "shrsi" or (isinstance(n, int) and n == 0):
        return shifted
    if isinstance(n, int):  # keep the low width - n bits
        return arith.AndIOp(shifted, ctx.cst(t, (1 << (width - n)) - 1)).result
    # n >= 1: the top n bits cleared by the largest value >> (n - 1); n = 0: x itself
    top = arith.ShRSIOp(ctx.cst(t, (1 << (width - 1)) - 1),
                        arith.AndIOp(arith.SubIOp(n, ctx.cst(t, 1)).result, ctx.cst(t, width - 1)).result)
    masked = arith.AndIOp(shifted, top.result).result
    zero = arith.CmpIOp(arith.CmpIPredicate.eq, n, ctx.cst(t, 0)).result
    return arith.SelectOp(zero, x, masked).result


@rule("arith.shli", "arith.shrsi", "arith.shrui")
def _lower_shift(ctx, op):
    r = op.result
    kind = op.name.split(".")[1]
    if not is_block(r):
        ctx.vmap[r] = scalar_shift(ctx, kind, ctx.scalar(op.operands[0]), ctx.scalar(op.operands[1]))
        return
    if structured(ctx, r):
        ctx.vmap[r] = Struct(r)
        return
    elem, shape = elem_of(r.type), shape_of(r.type)
    if elem == "i64":  # no 64-bit lanes: C++ scalars per lane, with the sim's count and logical shift
        return by_lanes(ctx, op, f"{WHAT[kind]} of int64 blocks has no vector instruction (910B has no 64-bit "
                        "lanes)", lambda xs: scalar_shift(ctx, kind, xs[0], xs[1]))
    _lanes(ctx, elem, kind)
    a, b = (_held(ctx, o) for o in op.operands)
    if isinstance(a, Splat) and isinstance(b, Splat):
        ctx.vmap[r] = Splat(elem, shape, scalar=scalar_shift(ctx, kind, ctx.splat_scalar(a), ctx.splat_scalar(b)))
        return
    bits = Bits(ctx, shape, elem)
    x = ctx.tile(op.operands[0])
    out = dst_tile(ctx, op, elem)
    if isinstance(b, Splat):
        n = (int(b.const) & (bits.width - 1) if b.scalar is None
             else _count(ctx, b.scalar, bits.width))
        bits.shift(kind, out, x, n)
    elif elem == "i8":
        _shift8_by(ctx, kind, out, x, ctx.tile(op.operands[1]))
    else:
        bits.shift_by(kind, out, x, ctx.tile(op.operands[1]))
    finish(ctx, op, out, elem)


def _shift8_by(ctx, kind: str, out, x, counts) -> None:
    """int8 lanes shifted by a block of counts (mod 8, as the sim): in int16 lanes (sign- or, for a
    logical shift, zero-extended), where Select and the shifts exist, then wrapped back to int8."""
    shape = x.shape
    wide = Bits(ctx, shape, "i16")
    x16, c16 = as_elem(ctx, x, "i16", unsigned=kind == "shrui"), as_elem(ctx, counts, "i16")
    seven = wide.new()
    fill(ctx, seven, 0, seven.count, Splat("i16", shape, const=7))
    c7 = wide.logic("and", wide.new(), c16, seven)
    r16 = wide.shift_by(kind, wide.new(), x16, c7)
    cast(ctx, out, r16)


# ----- umulhi -----------------------------------------------------------------------------------

def scalar_mul_extended(ctx, a: ir.Value, b: ir.Value):
    """(low, high) 32 bits of the unsigned product of two i32 scalars, in int64 arithmetic that
    never overflows: a * b = a * bh * 2^16 + a * bl."""
    i64, i32 = ctx.i64, ctx.i32
    a64 = arith.AndIOp(arith.ExtSIOp(i64, a).result, ctx.c64(0xFFFFFFFF)).result
    b64 = arith.ExtSIOp(i64, b).result
    bl = arith.AndIOp(b64, ctx.c64(0xFFFF)).result
    bh = arith.AndIOp(arith.ShRSIOp(b64, ctx.c64(16)).result, ctx.c64(0xFFFF)).result
    pl, ph = arith.MulIOp(a64, bl).result, arith.MulIOp(a64, bh).result  # each < 2^48
    hi = arith.ShRSIOp(arith.AddIOp(ph, arith.ShRSIOp(pl, ctx.c64(16)).result).result, ctx.c64(16)).result
    lo = arith.AddIOp(pl, arith.ShLIOp(arith.AndIOp(ph, ctx.c64(0xFFFF)).result, ctx.c64(16)).result).result
    return arith.TruncIOp(i32, lo).result, arith.TruncIOp(i32, hi).result


def _used(v: ir.Value) -> bool:
    return any(True for _ in v.uses)


@rule("arith.mului_extended")
def _lower_mului_extended(ctx, op):
    lo_r, hi_r = op.results
    elem = elem_of(lo_r.type)
    if elem not in ("i32",):
        raise ctx.error(f"tl.umulhi of {elem} values is not supported on ascend: xblock builds the high half of "
                        f"a product from 16-bit pieces of 32-bit lanes only (int32/uint32 operands work)")
    if not is_block(lo_r):
        ctx.vmap[lo_r], ctx.vmap[hi_r] = scalar_mul_extended(ctx, *(ctx.scalar(o) for o in op.operands))
        return
    shape = shape_of(lo_r.type)
    (x, a), (y, b) = ((o, _held(ctx, o)) for o in op.operands)
    if isinstance(a, Splat) and isinstance(b, Splat):
        lo, hi = scalar_mul_extended(ctx, ctx.splat_scalar(a), ctx.splat_scalar(b))
        ctx.vmap[lo_r], ctx.vmap[hi_r] = Splat(elem, shape, scalar=lo), Splat(elem, shape, scalar=hi)
        return
    if isinstance(a, Splat):
        (x, a), (y, b) = (y, b), (x, a)
    bits = Bits(ctx, shape, elem)
    src = ctx.tile(x)
    other = (wrap(int(b.const), 32) if b.scalar is None else b.scalar) if isinstance(b, Splat) else ctx.tile(y)
    name = ctx.name_for(op)
    if _used(lo_r):  # the low half: the wrapping int32 Mul
        lo = ctx.new_tile(elem, shape, name, result=lo_r)
        bits.mul(src, other, lo)
        ctx.vmap[lo_r] = lo
    if _used(hi_r):
        hi = ctx.new_tile(elem, shape, name, result=hi_r)
        bits.umulhi(hi, src, other)
        ctx.vmap[hi_r] = hi
