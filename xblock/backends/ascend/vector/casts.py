"""Element-type conversions and fills of tiles: the Cast pairs 910B has, and exact chains where it has none.

A helper below `tiles` (it builds on the ascendc dialect and `values` only). Facts, from the ADK's
Cast.md (table of Atlas A2) and precision_conversion.md: the direct pairs are int8/uint8 -> half,
int16 -> half/float, half -> int8/uint8/int16/int32/float, bfloat16 -> int32/float, int32 ->
int16/float/int64, float -> int16/half/bfloat16/int32/float/int64, int64 -> int32/float; a result out
of the destination's range saturates, integer to integer too. Duplicate has no 8- or 64-bit lanes.
So (`plan`):
- widening an integer goes through half (every int8/uint8 is exact in half) or float (int16) and back,
  exact, then int32 -> int64; zero extension clears what sign extension set (a logical shift pair on
  32-bit lanes; the high word of 64-bit lanes by a Select);
- narrowing keeps the low bits, as C and Triton's trunci do: GatherMask picks the low 16-bit half of
  each 32-bit lane (the low quarter or half of each 64-bit lane); int16 -> int8 shifts the low byte
  to the top and back (the arithmetic shift sign-extends it), then int16 -> half -> int8, exact;
- float -> int (fptosi, fptoui) truncates to int32 (int64) and narrows from there, as the sim (numpy
  on x86) does for every value in int32's range; fptoui to 32 (64) bits subtracts 2^32 (2^64) from
  values with the top bit set first; uint32 -> float adds its two 16-bit halves (one rounding);
- uint64 -> float is refused: rounding it correctly needs 64-bit shifts the vector unit lacks.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
from mlir import ir
from mlir.dialects import arith

from ....dialects import ascendc as A
from ..values import FLOAT, SIZE, Splat, Tile

INTS = ("i8", "i16", "i32", "i64")
VEC_FLOATS = ("f16", "bf16", "f32")
# direct pairs for values already integral and in the destination's range (`exact=True`)
EXACT = {("f16", "i8"): "CAST_NONE", ("f16", "i16"): "CAST_RINT", ("f16", "i32"): "CAST_RINT",
         ("f32", "i16"): "CAST_RINT", ("f32", "i32"): "CAST_RINT", ("f32", "i64"): "CAST_RINT",
         ("bf16", "i32"): "CAST_RINT"}


def _float_steps(s: str, d: str) -> list:
    if s == d:
        return []
    if s == "f32":
        return [("cast", d, "CAST_RINT")]
    if d == "f32":
        return [("cast", "f32", "CAST_NONE")]
    return [("cast", "f32", "CAST_NONE"), ("cast", d, "CAST_RINT")]


def _widen(s: str, d: str, unsigned: bool) -> list:
    if s == "i8":
        steps = [("cast_u8" if unsigned else "cast", "f16", "CAST_NONE")]
        if d == "i16":
            return steps + [("cast", "i16", "CAST_RINT")]
        steps.append(("cast", "i32", "CAST_RINT"))
    elif s == "i16":
        steps = [("cast", "f32", "CAST_NONE"), ("cast", "i32", "CAST_RINT")]
        if unsigned:
            steps.append(("zext16", "i32", None))
    else:
        steps = []
    if d == "i64":
        steps.append(("cast", "i64", "CAST_NONE"))
        if unsigned and s == "i32":
            steps.append(("zext32", "i64", None))
    return steps


def _narrow(s: str, d: str) -> list:
    if s == d:
        return []
    if s == "i64":
        steps = [("gather", "i32", 1)] if d == "i32" else [("gather", "i16", 3)]
    elif s == "i32":
        steps = [("gather", "i16", 1)]
    else:
        steps = []
    return steps + ([("wrap8", "i8", None)] if d == "i8" else [])


def _int_to_float(ctx, s: str, d: str, unsigned: bool) -> list:
    if s == "i8":
        return [("cast_u8" if unsigned else "cast", "f16", "CAST_NONE")] + _float_steps("f16", d)
    if s == "i16" and not unsigned:
        return [("cast", "f16", "CAST_RINT")] if d == "f16" else [("cast", "f32", "CAST_NONE")] + _float_steps("f32", d)
    if s == "i16":
        return _widen("i16", "i32", True) + [("cast", "f32", "CAST_NONE")] + _float_steps("f32", d)
    if s == "i32":
        return [("u32f", "f32", None) if unsigned else ("cast", "f32", "CAST_NONE")] + _float_steps("f32", d)
    if unsigned:
        raise ctx.error(f"a uint64 block converted to {d} is not supported on ascend: rounding a 64-bit unsigned "
                        f"integer correctly needs 64-bit shifts, which the 910B vector unit lacks (int64 works)")
    return [("cast", "f32", "CAST_RINT")] + _float_steps("f32", d)


def _float_to_int(s: str, d: str, unsigned: bool) -> list:
    if d == "i64":
        steps = _float_steps(s, "f32") + ([("f2u", "f32", 64)] if unsigned else [])
        return steps + [("cast", "i64", "CAST_TRUNC")]
    if unsigned and d == "i32" and s != "f16":  # half is below 2^31: no top bit to move
        steps = _float_steps(s, "f32") + [("f2u", "f32", 32)]
        return steps + [("cast", "i32", "CAST_TRUNC")]
    return [("cast", "i32", "CAST_TRUNC")] + _narrow("i32", d)


def plan(ctx, s: str, d: str, unsigned: bool = False, exact: bool = False) -> list:
    """The steps (kind, result elem, argument) that convert s to d. `unsigned`: the source integer
    (extui, uitofp) or the destination integer (fptoui) is unsigned; `exact`: the values are integers
    in d's range (a mask as 0/1), so a direct saturating Cast is enough."""
    if s == "i1":  # bools held as bytes 0/1
        s, unsigned = "i8", True
    if s == d:
        return [("copy", d, None)]
    if exact and (s, d) in EXACT:
        return [("cast", d, EXACT[(s, d)])]
    if exact and s == "f32" and d == "i8":
        return [("cast", "f16", "CAST_RINT"), ("cast", "i8", "CAST_NONE")]
    if s in VEC_FLOATS and d in VEC_FLOATS:
        return _float_steps(s, d)
    if s in INTS and d in VEC_FLOATS:
        return _int_to_float(ctx, s, d, unsigned)
    if s in VEC_FLOATS and d in INTS:
        return _float_to_int(s, d, unsigned)
    if s in INTS and d in INTS:
        return _widen(s, d, unsigned) if SIZE[d] > SIZE[s] else _narrow(s, d)
    raise ctx.error(f"no Cast from {s} to {d} on {ctx.soc.name}"
                    + (": the 910B vector unit has no float64 lanes" if "f64" in (s, d) else ""))


def _constant_of(v: ir.Value):
    """The value of an integer `arith.constant`, else None."""
    owner = v.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return None
    return ir.IntegerAttr(owner.attributes["value"]).value


def cast(ctx, dst: Tile, src: Tile, count=None, unsigned: bool = False, exact: bool = False) -> None:
    """Convert src into dst (see `plan`); `count` elements (default: all of src)."""
    steps = plan(ctx, src.elem, dst.elem, unsigned, exact)
    n = count if count is not None else src.count
    n = n if isinstance(n, ir.Value) else ctx.c64(n)
    cur = src
    for i, (kind, elem, arg) in enumerate(steps):
        out = dst if i == len(steps) - 1 else ctx.temp(elem, src.shape)
        STEPS[kind](ctx, out, cur, n, arg)
        if cur is not src:
            ctx.release(cur)
        cur = out


def view(t: Tile, elem: str) -> ir.Value:
    """t's LocalTensor as elem (ReinterpretCast)."""
    return t.value if t.elem == elem else A.op("reinterpret", [t.value], A.local_type(ir.Type.parse(elem)))


def _lanes(t: Tile, elem: str):
    return t.bytes // SIZE[elem]


def _cast(ctx, out, cur, n, mode):
    A.op("cast", [out.value, cur.value, n], round=mode)


def _cast_u8(ctx, out, cur, n, mode):
    A.op("cast", [out.value, view(cur, "ui8"), n], round=mode)


def _copy(ctx, out, cur, n, _):
    """Same bits (a bool byte tile as int8, say): adding 0 to 16-bit lanes copies the whole tile."""
    A.op("vec_scalar", [view(out, "i16"), view(cur, "i16"), ctx.cst("i16", 0), ctx.c64(_lanes(out, "i16"))],
         api="Adds")


def _shift(ctx, api: str, out: Tile, src: Tile, elem: str, count: int, n) -> None:
    A.op("vec_scalar", [view(out, elem), view(src, elem), ctx.cst(elem.lstrip("u"), count), n], api=api)


def _gather(ctx, out, cur, n, pattern):
    """The low 16 or 32 bits of each lane: GatherMask over the whole tile (tiles are whole 256-byte
    repeats), at most 255 repeats a call."""
    e = out.elem
    per = 256 // SIZE[e]
    keep = 2 if pattern in (1, 2) else 4
    src, dst = view(cur, e), view(out, e)
    repeats = cur.bytes // 256
    for first in range(0, repeats, 255):
        r = min(255, repeats - first)
        A.op("gather_mask", [ctx.at(dst, first * per // keep), ctx.at(src, first * per)], pattern=pattern,
             repeat=r, mask=0)


def _wrap8(ctx, out, cur, n, _):
    """int16 -> int8 keeping the low byte: (x << 8) >> 8 sign-extends it, then int16 -> half -> int8."""
    t = ctx.temp("i16", cur.shape)
    _shift(ctx, "ShiftLeft", t, cur, "ui16", 8, n)
    _shift(ctx, "ShiftRight", t, t, "i16", 8, n)
    h = ctx.temp("f16", cur.shape)
    A.op("cast", [h.value, t.value, n], round="CAST_NONE")
    A.op("cast", [out.value, h.value, n], round="CAST_NONE")
    ctx.release(t)
    ctx.release(h)


def _zext16(ctx, out, cur, n, _):
    _shift(ctx, "ShiftLeft", out, cur, "ui32", 16, n)
    _shift(ctx, "ShiftRight", out, out, "ui32", 16, n)


def even_lanes(ctx, lanes: int) -> Tile:
    """A Select mask whose bits pick the even 32-bit lanes of `lanes` (0x55 bytes)."""
    m = ctx.temp("ui8", (lanes + 7) // 8)
    A.op("duplicate", [view(m, "i16"), ctx.cst("i16", 0x5555), ctx.c64(_lanes(m, "i16"))])
    return m


def set_high_words(ctx, t: Tile, hi: ir.Value, offset, count) -> None:
    """The high 32 bits of `count` int64 lanes of t from `offset` := hi (an i32 scalar): a Select of the
    float view keeps the low words (bits move unchanged)."""
    f32 = view(t, "f32")
    m = even_lanes(ctx, 2 * t.padded)
    two = ctx.c64(2)
    A.op("select", [_at(ctx, f32, ctx.mul(offset, two)), m.value, _at(ctx, f32, ctx.mul(offset, two)),
                    arith.BitcastOp(ir.F32Type.get(), hi).result, ctx.mul(count, two)], mode="VSEL_TENSOR_SCALAR_MODE")
    ctx.release(m)


def _zext32(ctx, out, cur, n, _):
    if out is not cur:
        _copy(ctx, out, cur, n, None)
    set_high_words(ctx, out, ctx.cst("i32", 0), ctx.c64(0), n)


def _u32f(ctx, out, cur, n, _):
    """uint32 -> float: hi * 65536 + lo of its 16-bit halves, each exact in float, one rounding."""
    hi, lo, fh = ctx.temp("i32", cur.shape), ctx.temp("i32", cur.shape), ctx.temp("f32", cur.shape)
    _shift(ctx, "ShiftRight", hi, cur, "ui32", 16, n)
    _zext16(ctx, lo, cur, n, None)
    A.op("cast", [fh.value, hi.value, n], round="CAST_NONE")
    A.op("cast", [out.value, lo.value, n], round="CAST_NONE")
    A.op("vec_scalar", [fh.value, fh.value, ctx.cst("f32", 65536.0), n], api="Muls")
    A.op("vec", [out.value, out.value, fh.value, n], api="Add")
    for t in (hi, lo, fh):
        ctx.release(t)


def _f2u(ctx, out, cur, n, bits):
    """x - 2^bits * floor(max(x, 0) / 2^(bits-1)): values with the top bit set move below 0, exactly
    (x and 2^bits are within a factor 2), so the signed truncation that follows keeps their bits."""
    t = ctx.temp("f32", cur.shape)
    A.op("vec_scalar", [t.value, cur.value, ctx.cst("f32", 0.0), n], api="Maxs")
    A.op("vec_scalar", [t.value, t.value, ctx.cst("f32", 2.0 ** (1 - bits)), n], api="Muls")
    A.op("cast", [t.value, t.value, n], round="CAST_FLOOR")
    A.op("vec_scalar", [t.value, t.value, ctx.cst("f32", -(2.0 ** bits)), n], api="Muls")
    A.op("vec", [out.value, cur.value, t.value, n], api="Add")
    ctx.release(t)


STEPS = {"cast": _cast, "cast_u8": _cast_u8, "copy": _copy, "gather": _gather, "wrap8": _wrap8,
         "zext16": _zext16, "zext32": _zext32, "u32f": _u32f, "f2u": _f2u}


# ----- scalars and constants ---------------------------------------------------------------------

def _wrap(v: int, elem: str) -> int:
    bits = SIZE[elem] * 8
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def const_convert(c, src: str, elem: str, unsigned: bool = False):
    """A Python constant converted as the scalar ops would (integers wrap; unsigned sources zero-extend)."""
    if src not in FLOAT and unsigned and src != "i1":
        c = int(c) & ((1 << SIZE[src] * 8) - 1)
    if elem in FLOAT:
        return float(c)
    if src in FLOAT:
        c = math.trunc(c) if math.isfinite(c) else 0
    return _wrap(int(c), elem)


def scalar_convert(ctx, v: ir.Value, elem: str, unsigned: bool = False) -> ir.Value:
    src = str(v.type)
    t = ir.Type.parse(elem)
    if src == elem:
        return v
    if src in FLOAT and elem in FLOAT:
        return (arith.ExtFOp if SIZE[elem] > SIZE[src] or src == "bf16" else arith.TruncFOp)(t, v).result
    if unsigned and src not in FLOAT and SIZE[src] < 8 and (elem in FLOAT or SIZE[elem] > SIZE[src]):
        # zero-extend in int64 (the C++ scalars are signed types): then it is a signed value
        v = arith.AndIOp(arith.ExtSIOp(ctx.i64, v).result, ctx.c64((1 << SIZE[src] * 8) - 1)).result
        src = "i64"
        if src == elem:
            return v
    if src in FLOAT:
        if unsigned and elem != "i64":  # through int64: the top bit of a uint32 is in range
            return arith.TruncIOp(t, arith.FPToSIOp(ctx.i64, v).result).result
        return arith.FPToSIOp(t, v).result
    if elem in FLOAT:
        return arith.SIToFPOp(t, v).result
    return (arith.ExtSIOp if SIZE[elem] > SIZE[src] else arith.TruncIOp)(t, v).result


# ----- fills -------------------------------------------------------------------------------------

def _byte_pattern(ctx, s: Splat) -> ir.Value:
    """An i16 holding the splat's byte twice."""
    if s.scalar is None:
        b = int(np.array(int(s.const)).astype(np.int8).view(np.uint8))
        return ctx.cst("i16", int(np.array(b * 0x101, dtype=np.uint16).view(np.int16)))
    x = s.scalar if str(s.scalar.type) == "i32" else arith.ExtUIOp(ctx.i32, s.scalar).result
    b = arith.AndIOp(x, ctx.cst("i32", 0xFF)).result
    return arith.TruncIOp(ir.IntegerType.get_signless(16), arith.MulIOp(b, ctx.cst("i32", 0x101)).result).result


def _at(ctx, v: ir.Value, offset: ir.Value) -> ir.Value:
    c = ctx.const_of(offset)
    return ctx.at(v, c if c is not None else offset)


def _halve(ctx, x: ir.Value, round_up: bool = False) -> ir.Value:
    c = ctx.const_of(x)
    if c is not None:
        return ctx.c64((c + round_up) // 2)
    return arith.DivSIOp(ctx.add(x, ctx.c64(1)) if round_up else x, ctx.c64(2)).result


def fill(ctx, t: Tile, offset, count, s: Splat) -> None:
    """Duplicate `s` into count elements of t from offset. Duplicate has 16- and 32-bit lanes: bf16
    goes as its bits, int8 (and bools) as a byte pair per 16-bit lane (offset and count even), int64
    as its low word in every 32-bit lane, then the high word into the odd lanes (a Select)."""
    offset = offset if isinstance(offset, ir.Value) else ctx.c64(offset)
    count = count if isinstance(count, ir.Value) else ctx.c64(count)
    if t.elem in ("f32", "f16", "i32", "i16"):
        A.op("duplicate", [_at(ctx, t.value, offset), ctx.splat_scalar(s), count])
        return
    if t.elem == "bf16":
        bits = (ctx.cst("i16", int(np.array(s.const, dtype=ml_dtypes.bfloat16).view(np.int16))) if s.scalar is None
                else arith.BitcastOp(ir.IntegerType.get_signless(16), s.scalar).result)
        A.op("duplicate", [_at(ctx, view(t, "i16"), offset), bits, count])
        return
    if t.elem in ("i8", "ui8", "i1"):
        A.op("duplicate", [_at(ctx, view(t, "i16"), _halve(ctx, offset)), _byte_pattern(ctx, s),
                           _halve(ctx, count, round_up=True)])
        return
    if t.elem == "i64":
        const = s.const if s.scalar is None else _constant_of(s.scalar)
        if const is not None:  # a constant: its two words here (C++ would shift an int literal by 32)
            c = int(const) & (2**64 - 1)
            lo, hi = (ctx.cst("i32", w - 2**32 if w >= 2**31 else w) for w in (c & 0xFFFFFFFF, c >> 32))
        else:
            v = ctx.splat_scalar(s)
            lo = arith.TruncIOp(ctx.i32, v).result
            hi = arith.TruncIOp(ctx.i32, arith.ShRSIOp(v, ctx.c64(32)).result).result
        two = ctx.c64(2)
        A.op("duplicate", [_at(ctx, view(t, "i32"), ctx.mul(offset, two)), lo, ctx.mul(count, two)])
        set_high_words(ctx, t, hi, offset, count)
        return
    raise ctx.error(f"cannot fill a {t.elem} block on ascend (the 910B vector unit has no {t.elem} lanes)")


def mask_bytes(ctx, bits: Tile, out: Tile) -> None:
    """A bit mask (Compare's) as bools of a byte each, 0 or 1: Select 1.0 or 0.0 in half, then Cast."""
    h, one = ctx.temp("f16", out.shape), ctx.temp("f16", out.shape)
    A.op("duplicate", [one.value, ctx.cst("f16", 1.0), ctx.c64(one.padded)])
    A.op("select", [h.value, bits.value, one.value, ctx.cst("f16", 0.0), ctx.c64(out.count)],
         mode="VSEL_TENSOR_SCALAR_MODE")
    A.op("cast", [view(out, "ui8"), h.value, ctx.c64(out.count)], round="CAST_NONE")
    ctx.release(h)
    ctx.release(one)
