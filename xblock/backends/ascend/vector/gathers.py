"""Gathers with quasi-affine addresses as one UB window and the vector `Gather`.

A helper of the load rule. A load whose pointer block is a kernel argument plus a quasi-affine
offset (affine in the lane indices, plus constant multiples of `x // d` and `x % d` by positive
constants: Inductor's `x0 = xindex % 128`, `(xindex // 16) % 13`, a transposed `x0 + 32 * r0_1`)
touches GM elements within a span the structure bounds at compile time. When that span fits a small
UB window:

1. each lane's offset relative to lane 0 is computed on the vector unit in float lanes (exact: the
   values are small integers), a quotient by d as floor((r + delta + 0.5) * (1 / d)) with r the
   remainder of lane 0 (so only small numbers meet the division; the 0.5 keeps the floor clear of
   the rounding of the reciprocal);
2. the active lanes' smallest and largest offsets (ReduceMin/ReduceMax, masked-off lanes moved out
   of the way by a Select) give the part of the window the load needs: one DataCopyPad brings it
   into UB (masked-off lanes read nothing, so nothing outside what the kernel may read is copied);
3. the offsets, now relative to the window and in bytes (masked-off lanes pointed at a 32-byte
   block of `other` after the window), go to `Gather` (asc-devkit `kernel_operator_vec_gather_intf.h`,
   `Gather.md`: UB to UB, uint32 byte offsets from the source's start, 16- and 32-bit T on A2).

64-bit elements gather as pairs of 32-bit words. Anything else (offsets that depend on data, divisors,
strides or factors that are not constants, dividends that may be negative, wider spans or blocks,
8-bit elements, masks that are neither bounds nor data) stays the scalar loop of lanes.py, with its
warning.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from ....dialects import ascendc as A
from ....passes.pointer_structure import Quasi
from ..values import SIZE, Splat, Tile, numel, round_up, shape_of
from .casts import fill
from .lanes import lane_value
from .tiles import mask_of, reduce_all

WINDOW_BYTES = 32 * 1024  # the most UB one gather's window may take
SCRATCH_BYTES = 64 * 1024  # and the window with the float lanes of the offsets, live at once (about
LANE_TILES = 6  # LANE_TILES tiles of 4 bytes a lane); a bigger block stays a scalar loop
GATHER_TYPES = ("f16", "bf16", "f32", "i16", "i32", "i64")  # Gather's T on A2 (Gather.md); int64 as word pairs
SMALL = 1 << 20  # dividends and spans below this are exact in float lanes, with room for the rounding
FAR = float(1 << 30)  # where masked-off lanes go for the min/max (beyond any offset)


# ----- the plan: whether the window gather applies ------------------------------------------------

def _nonneg(ps, q: Quasi) -> bool:
    """Whether every lane of q is >= 0: a non-negative base, strides, factors and quotients."""
    a = q.affine
    if not ps.nonneg(a.base) or any((s.as_const() or 0) < 0 or s.as_const() is None for s in a.strides):
        return False
    for t, c in q.terms:
        k, d = c.as_const(), t.d.as_const()
        if k is None or k < 0 or d is None or d <= 0 or not _nonneg(ps, t.x):
            return False
    return True


def width(ps, q: Quasi) -> int | None:
    """An upper bound of (largest lane - smallest lane) of q, or None when the float lanes of
    `_Lanes.rel` cannot compute q exactly (a stride, factor or divisor that is not a constant, a dividend that may
    be negative, numbers past SMALL)."""
    a = q.affine
    w = 0
    for n, s in zip(a.shape, a.strides):
        c = s.as_const()
        if c is None:
            return None
        w += abs(c) * (n - 1)
    for t, c in q.terms:
        k, d = c.as_const(), t.d.as_const()
        wx = width(ps, t.x)
        if k is None or d is None or d <= 0 or wx is None or wx + 2 * d >= SMALL or not _nonneg(ps, t.x):
            return None
        w += abs(k) * (d - 1 if t.kind == "rem" else wx // d + 1)
    return w if w < SMALL else None


def _mask_ok(ctx, mask) -> bool:
    """A mask mask_of can make: data, a constant, or bounds without lower limits."""
    if mask is None:
        return True
    if isinstance(ctx.vmap.get(mask), (Tile, Splat)):
        return True
    b = ctx.ps.mask(mask, lower=True)
    return b is not None and not b.lower


def _plan(ctx, ptr, mask, other, elem):
    """(quasi pointer, window elements) when the window gather applies, else None."""
    if not ctx.soc.has_data_copy_pad or elem not in GATHER_TYPES:
        return None
    if other is not None and not isinstance(other, Splat):
        return None
    qp = ctx.ps.quasi_pointer(ptr)
    if qp is None or not _mask_ok(ctx, mask):
        return None
    w = width(ctx.ps, qp.offset)
    if w is None:
        return None
    sz = SIZE[elem]
    n = round_up(w + 1, 32 // sz) + 32 // sz  # the span, then a block for `other`
    lanes = numel(shape_of(ptr.type)) * (2 if sz == 8 else 1)
    if n * sz > WINDOW_BYTES or n * sz + LANE_TILES * 4 * lanes > SCRATCH_BYTES:
        return None
    return qp, n


# ----- the offsets of the lanes, relative to lane 0, in float lanes -------------------------------

class _Lanes:
    """Float tiles of one shape, freed as soon as they are dead."""

    def __init__(self, ctx, shape):
        self.ctx, self.shape = ctx, shape
        self.zeros = [ctx.c64(0)] * len(shape)

    def new(self) -> Tile:
        return self.ctx.new_tile("f32", self.shape)

    def vec(self, api, out, *srcs):
        A.op("vec", [out.value] + [s.value for s in srcs] + [self.ctx.c64(out.count)], api=api)

    def scalar(self, api, out, src, s):
        v = s if isinstance(s, ir.Value) else self.ctx.cst("f32", s)
        A.op("vec_scalar", [out.value, src.value, v, self.ctx.c64(out.count)], api=api)

    def rel(self, q: Quasi) -> Tile:
        """q(i) - q(lane 0) for every lane i (a new tile)."""
        ctx = self.ctx
        acc = None

        def add(t: Tile) -> Tile:
            if acc is None:
                return t
            self.vec("Add", acc, acc, t)
            ctx.release(t)
            return acc

        for d, s in enumerate(q.affine.strides):
            c = s.as_const()
            if c:
                t = self.new()
                self.scalar("Muls", t, ctx.iota(self.shape, d), float(c))
                acc = add(t)
        for t, c in q.terms:
            term = self.quotient(t)
            if c.as_const() != 1:
                self.scalar("Muls", term, term, float(c.as_const()))
            acc = add(term)
        if acc is None:  # the same offset in every lane
            acc = self.new()
            A.op("duplicate", [acc.value, ctx.cst("f32", 0.0), ctx.c64(acc.padded)])
        return acc

    def quotient(self, t) -> Tile:
        """(x // d)(i) - (x // d)(0) or (x % d)(i) - (x % d)(0), x >= 0 and d > 0: with r = x(0) % d
        and delta = x(i) - x(0), x(i) // d - x(0) // d = floor((r + delta) / d) and x(i) % d - r =
        delta - d * floor((r + delta) / d)."""
        ctx = self.ctx
        d = t.d.as_const()
        delta = self.rel(t.x)
        r = arith.RemSIOp(lane_value(ctx, t.x, self.zeros), ctx.c64(d)).result
        half = arith.AddFOp(arith.SIToFPOp(ir.F32Type.get(), r).result, ctx.cst("f32", 0.5)).result
        fl = self.new()
        self.scalar("Adds", fl, delta, half)
        self.scalar("Muls", fl, fl, 1.0 / d)
        A.op("cast", [fl.value, fl.value, ctx.c64(fl.count)], round="CAST_FLOOR")
        if t.kind == "div":
            ctx.release(delta)
            return fl
        self.scalar("Muls", fl, fl, float(-d))
        self.vec("Add", fl, fl, delta)
        ctx.release(delta)
        return fl


# ----- the gather -----------------------------------------------------------------------------------

def vector_gather(ctx, op, ptr, mask, other, elem: str) -> bool:
    """Lower the gather `op` through a UB window and `Gather` when it applies (see the module
    docstring); False, with nothing emitted, when it does not."""
    plan = _plan(ctx, ptr, mask, other, elem)
    if plan is None:
        return False
    qp, n_win = plan
    shape = shape_of(op.result.type)
    lanes = _Lanes(ctx, shape)
    first = ctx.named(lane_value(ctx, qp.offset, lanes.zeros), "gatherFirst")
    rel = lanes.rel(qp.offset)
    bits = None
    if mask is not None:
        bits = mask_of(ctx, mask, shape)
        if bits is not ctx.vmap.get(mask):
            ctx.temps.append(bits)
    lo, hi = _active_range(ctx, lanes, rel, bits)
    out = ctx.new_tile(elem, shape, ctx.name_for(op), result=op.result)
    some = scf.IfOp(arith.CmpIOp(arith.CmpIPredicate.sle, lo, hi).result, [], has_else=other is not None)
    with ir.InsertionPoint(some.then_block):
        win = _window(ctx, op, qp, elem, n_win, ctx.add(first, lo), ctx.add(ctx.sub(hi, lo), ctx.c64(1)),
                      other if bits is not None else None)
        spare = n_win - 32 // SIZE[elem] if other is not None else 0
        offs = _byte_offsets(ctx, lanes, rel, bits, lo, elem, spare)
        if SIZE[elem] == 8:  # Gather has no 64-bit T on A2: each element is a pair of 32-bit words
            words = A.local_type(ir.Type.parse("i32"))
            dst, src = (A.op("reinterpret", [t.value], words) for t in (out, win))
            A.op("gather", [dst, src, offs, ctx.c64(0), ctx.c64(2 * out.count)])
        else:
            A.op("gather", [out.value, win.value, offs, ctx.c64(0), ctx.c64(out.count)])
        scf.YieldOp([])
    if other is not None:
        with ir.InsertionPoint(some.else_block):  # no lane is on: every lane takes `other`
            fill(ctx, out, ctx.c64(0), ctx.c64(out.count), other)
            scf.YieldOp([])
    ctx.release(rel)
    ctx.vmap[op.result] = out
    return True


def _active_range(ctx, lanes: _Lanes, rel: Tile, bits: Tile | None):
    """(smallest, largest) offset relative to lane 0 over the lanes that are on, as i64 values
    (smallest > largest when none is)."""
    if bits is None:
        lo, _ = reduce_all(ctx, rel, "min", None)
        hi, _ = reduce_all(ctx, rel, "max", None)
    else:
        ends = []
        for far, kind in ((FAR, "min"), (-FAR, "max")):
            t = lanes.new()
            A.op("select", [t.value, bits.value, rel.value, ctx.cst("f32", far), ctx.c64(t.count)],
                 mode="VSEL_TENSOR_SCALAR_MODE")
            ends.append(reduce_all(ctx, t, kind, None)[0])
            ctx.release(t)
        lo, hi = ends
    return (ctx.named(arith.FPToSIOp(ctx.i64, v).result, name) for v, name in ((lo, "gatherLo"), (hi, "gatherHi")))


def _window(ctx, op, qp, elem: str, n_win: int, start, count, other) -> Tile:
    """The GM elements [start, start + count) of the pointer's root in a scratch tile (one
    DataCopyPad), and `other` in the 32-byte block after the span when masked-off lanes need it."""
    win = ctx.temp(elem, (n_win,))
    ctx.sync("V_MTE2")  # the scratch may still be read by the vector unit or copied out by MTE3
    ctx.sync("MTE3_MTE2")  # (and the kernel's own stores to this argument must land first)
    gm = ctx.vmap.get(qp.root)
    if gm is None or not A.is_global(gm.type):
        raise ctx.error("this pointer does not come from a kernel argument")
    sz = SIZE[elem]
    A.op("data_copy_pad", [win.value, ctx.at(gm, start), ctx.c64(1), ctx.named(ctx.mul(count, ctx.c64(sz)),
                                                                                  "gatherBytes"),
                           ctx.c64(0), ctx.c64(0)], is_pad=False)
    if other is not None:
        blk = 32 // sz
        fill(ctx, win, ctx.c64(n_win - blk), ctx.c64(blk), other)
    ctx.sync("MTE2_V")
    return win


def _byte_offsets(ctx, lanes: _Lanes, rel: Tile, bits: Tile | None, lo, elem: str, spare: int) -> ir.Value:
    """Gather's srcOffset: each lane's byte offset into the window (uint32); lanes that are off read
    element `spare` (the `other` block after the span, or the window's first element)."""
    sz = SIZE[elem]
    f = lanes.new()
    lanes.scalar("Adds", f, rel, arith.SIToFPOp(ir.F32Type.get(), ctx.sub(ctx.c64(0), lo)).result)
    if bits is not None:
        A.op("select", [f.value, bits.value, f.value, ctx.cst("f32", float(spare)), ctx.c64(f.count)],
             mode="VSEL_TENSOR_SCALAR_MODE")
    lanes.scalar("Muls", f, f, float(sz))
    if sz == 8:
        f = _word_pairs(ctx, f)
    offs = ctx.temp("i32", f.shape)
    A.op("cast", [offs.value, f.value, ctx.c64(offs.count)], round="CAST_RINT")
    ctx.release(f)
    return A.op("reinterpret", [offs.value], A.local_type(ir.Type.parse("ui32")))


def _word_pairs(ctx, f: Tile) -> Tile:
    """The byte offsets of 64-bit elements (n float lanes) as those of their 32-bit words (2n lanes:
    lane 2k is f[k], lane 2k + 1 is f[k] + 4): a Gather of f by 4 * floor(m / 2), plus 4 * (m % 2)."""
    n = f.count
    io = ctx.iota((2 * n,), 0)
    half = ctx.temp("f32", (2 * n,))
    A.op("vec_scalar", [half.value, io.value, ctx.cst("f32", 0.5), ctx.c64(2 * n)], api="Muls")
    A.op("cast", [half.value, half.value, ctx.c64(2 * n)], round="CAST_FLOOR")  # floor(m / 2)
    src = ctx.temp("i32", (2 * n,))
    A.op("vec_scalar", [half.value, half.value, ctx.cst("f32", 4.0), ctx.c64(2 * n)], api="Muls")
    A.op("cast", [src.value, half.value, ctx.c64(2 * n)], round="CAST_RINT")
    out = ctx.new_tile("f32", (2 * n,))
    A.op("gather", [out.value, f.value, A.op("reinterpret", [src.value], A.local_type(ir.Type.parse("ui32"))),
                    ctx.c64(0), ctx.c64(2 * n)])
    odd = ctx.temp("f32", (2 * n,))  # 4 * m - 8 * floor(m / 2)
    A.op("vec_scalar", [odd.value, io.value, ctx.cst("f32", 4.0), ctx.c64(2 * n)], api="Muls")
    A.op("vec_scalar", [half.value, half.value, ctx.cst("f32", -2.0), ctx.c64(2 * n)], api="Muls")
    A.op("vec", [odd.value, odd.value, half.value, ctx.c64(2 * n)], api="Add")
    A.op("vec", [out.value, out.value, odd.value, ctx.c64(2 * n)], api="Add")
    ctx.release(f)
    return out

