"""Static data movements inside UB on the vector unit: permutes, selections and interleaves.

A helper of the shape rules (lower/ops/shapes.py, layout.py). Many shape ops move elements between
row-major tiles by an index map fixed at compile time: lane i of the result reads element
`base + sum(digit_k(i) * strides[k])` of the source, where digit_k(i) are i's digits over the result's
dims (row-major). A permute (xb.trans) reads its source at the permuted strides, a split at stride 2
(plus 0 or 1), a join at stride 1 from two halves laid one after the other, a broadcast at stride 0.
Such a map runs as one `Gather` (asc-devkit `kernel_operator_vec_gather_intf.h`, Gather.md: UB to UB,
uint32 byte offsets from the source's start, 16- and 32-bit T on A2), its offset tile built by
vector instructions from the 0, 1, 2, ... tile of the lowering (ctx.iota), in float lanes (exact:
every number stays below 2**24):

    q_k = floor(i / inner_k)          (Muls by 1 / inner_k and a floor Cast; i + 0.5 when inner_k is not
                                       a power of two, keeping the floor clear of the reciprocal's rounding)
    digit_k = q_k - dims[k] * q_{k-1}
    offset = size * sum(digit_k * strides[k])   (Cast to int32, read as uint32)

The lowest element the map reads goes to Gather's srcBaseAddr (bytes, a multiple of the element size;
dst, src and srcOffset start on 32-byte boundaries: docs/api/context/Gather.md,
cannmirror/asc-devkit@0a2e47c191a0733c90577d6aa6b594db668251e4), so the two halves of a split share
one offset tile; a Gather moves at most CHUNK lanes, which bounds the scratch its offsets take while
they are built.

Chains of these ops compose before any moves (`Strided`, `place`): a permute, split or join whose
users are all permutes, splits or joins right after it (nothing else in between, so its source
cannot change before they read it) is not moved; the op that ends the chain reads the chain's first
source through the composed map, in one Gather (a join of two halves of one deferred source needs no
copy). So the language library's compare-and-swap step (reshape,
permute, split; compare and select; join, permute, reshape) is two Gathers into the halves and one
Gather (after two UB copies) back, and a step of flip (permute, split, join of the halves swapped,
permute) one Gather.

64-bit elements move as pairs of 32-bit words (one more digit of 2). A split of 16- or 32-bit
elements (even or odd lanes) is a `GatherMask` with the built-in pattern 1 or 2 instead (GatherMask.md:
normal mode over whole 256-byte repeats, the picked elements packed from dst[0]); its offsets need
nothing. 8-bit elements (int8, uint8, bools as bytes) have neither instruction on A2: they move as half
lanes, their bytes read as uint8 (`widen8`: Cast uint8 -> half and back, CAST_NONE both ways, legal on
A2 per Cast.md and exact: every byte value is a half), and are not composed.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

from mlir import ir

from ....dialects import ascendc as A
from ..values import SIZE, Tile, numel, round_up, shape_of

GATHER_SIZES = (2, 4, 8)  # element sizes Gather moves (2, 4 bytes on A2; 8 as pairs of 4-byte words)
EXACT = 1 << 24  # float lanes hold every integer below this exactly


def can_move(elem: str) -> bool:
    """Whether blocks of `elem` move by Gather directly (not 8-bit ones: `widen8`; not pointers)."""
    return elem in SIZE and SIZE[elem] in GATHER_SIZES


def is_bytes(elem: str) -> bool:
    return elem in SIZE and SIZE[elem] == 1


def widen8(ctx, t: Tile) -> Tile:
    """An 8-bit tile's bytes as half lanes 0..255 (a temporary tile; Cast uint8 -> half, exact)."""
    f = ctx.temp("f16", t.shape)
    src = A.op("reinterpret", [t.value], A.local_type(ir.Type.parse("ui8"))) if t.elem != "ui8" else t.value
    A.op("cast", [f.value, src, ctx.c64(t.count)], round="CAST_NONE")
    return f


def narrow8(ctx, f: Tile, out: Tile) -> None:
    """`widen8`'s inverse: half lanes 0..255 back into the 8-bit tile `out` (Cast half -> uint8, exact)."""
    dst = A.op("reinterpret", [out.value], A.local_type(ir.Type.parse("ui8"))) if out.elem != "ui8" else out.value
    A.op("cast", [dst, f.value, ctx.c64(out.count)], round="CAST_NONE")


def move8(ctx, src: Tile, out: Tile, dims, strides) -> None:
    """`move` of 8-bit elements: through half lanes (`widen8`, one Gather, `narrow8`)."""
    f = widen8(ctx, src)
    g = ctx.temp("f16", out.shape)
    move(ctx, f, g, dims, strides)
    narrow8(ctx, g, out)


def split8(ctx, src: Tile, outs: list[Tile], n: int) -> None:
    """`split_lanes` of 8-bit elements, through half lanes."""
    f = widen8(ctx, src)
    gs = [ctx.temp("f16", o.shape) for o in outs]
    split_lanes(ctx, f, gs, n)
    for g, o in zip(gs, outs):
        narrow8(ctx, g, o)


def join8(ctx, a: Tile, b: Tile, out: Tile, n: int) -> None:
    """A join of 8-bit blocks, through half lanes: both widened into one scratch tile, one Gather."""
    half = round_up(n, 16)
    both = ctx.temp("f16", (2 * half,))
    for k, t in enumerate((a, b)):
        src = A.op("reinterpret", [t.value], A.local_type(ir.Type.parse("ui8"))) if t.elem != "ui8" else t.value
        dst = ctx.at(both.value, ctx.c64(half)) if k else both.value
        A.op("cast", [dst, src, ctx.c64(n)], round="CAST_NONE")
    g = ctx.temp("f16", out.shape)
    move(ctx, both, g, (n, 2), (1, half))
    narrow8(ctx, g, out)


def _merge(dims, strides):
    """The same map with size-1 dims dropped and adjacent dims that read contiguously merged."""
    out_d, out_s = [], []
    for d, s in zip(dims, strides):
        if d == 1:
            continue
        if out_d and out_s[-1] == s * d:
            out_d[-1] *= d
            out_s[-1] = s
        else:
            out_d.append(d)
            out_s.append(s)
    return out_d, out_s


def move(ctx, src: Tile, out: Tile, dims, strides, base: int = 0) -> None:
    """out[i] = src[base + sum(digit_k(i) * strides[k])], digits of i over `dims` (row-major), for every
    lane i of numel(dims): one Gather (see the module docstring). src and out must not share memory."""
    _gather(ctx, src.value, out.value, out.elem, dims, strides, base)


def _gather(ctx, s_val, o_val, elem: str, dims, strides, base: int) -> None:
    sz = SIZE[elem]
    dims, strides = _merge(list(dims), list(strides))
    if sz == 8:  # word pairs: one more (innermost) digit of 2, every stride and the base in words
        dims, strides, base, sz = dims + [2], [2 * s for s in strides] + [1], 2 * base, 4
        words = A.local_type(ir.Type.parse("i32"))
        s_val, o_val = (A.op("reinterpret", [v], words) for v in (s_val, o_val))
    n = numel(dims) if dims else 1
    lo = base + sum((d - 1) * s for d, s in zip(dims, strides) if s < 0)
    hi = base + sum((d - 1) * s for d, s in zip(dims, strides) if s > 0)
    if lo < 0 or n * sz >= EXACT or (hi + 1) * sz >= EXACT:
        raise ctx.error(f"internal: a static move of {n} lanes reads elements {lo}..{hi}, outside its source "
                        "or past exact float lanes")
    # the lowest element read goes to srcBaseAddr (Gather.md: bytes, a multiple of the element size), so
    # the two halves of a split share one offset tile (made once per op: the op's temporaries hold it)
    held = _OFFSETS.get(ctx)
    if held is None or held[0] is not ctx.temps:
        held = _OFFSETS[ctx] = (ctx.temps, {})
    for first in range(0, n, CHUNK):  # at most CHUNK lanes a Gather: bounded scratch for the offsets
        count = min(CHUNK, n - first)
        key = (tuple(dims), tuple(strides), base - lo, sz, first, count)
        if key not in held[1]:
            held[1][key] = _offsets(ctx, dims, strides, base - lo, sz, first, count)
        dst = ctx.at(o_val, ctx.c64(first)) if first else o_val
        A.op("gather", [dst, s_val, held[1][key], ctx.c64(lo * sz), ctx.c64(count)])


_OFFSETS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # {ctx: (its temps list, {map: offsets})}
CHUNK = 2048  # lanes a Gather moves at most: its offsets take at most 6 x 8 KB of scratch while they are built


def _offsets(ctx, dims, strides, base: int, sz: int, first: int, n: int) -> ir.Value:
    """The uint32 byte offsets of the map for lanes first .. first + n - 1 (a temporary tile of n lanes).
    At most five float tiles of n lanes are live at once: the lane indices (when first > 0), i + 0.5
    (where a divisor is not a power of two), q_{k-1}, q_k and the sum."""
    io = ctx.iota((n,), 0)
    c = ctx.c64(n)
    shifted = None
    if first:
        shifted = ctx.new_tile("f32", (n,))
        A.op("vec_scalar", [shifted.value, io.value, ctx.cst("f32", float(first)), c], api="Adds")
        io = shifted

    def muls(dst, src, k):
        A.op("vec_scalar", [dst.value, src.value, ctx.cst("f32", float(k)), c], api="Muls")

    def add(dst, src):
        A.op("vec", [dst.value, dst.value, src.value, c], api="Add")

    half = None
    if any(numel(dims[k + 1:]) & (numel(dims[k + 1:]) - 1) for k in range(len(dims)) if strides[k]):
        half = ctx.new_tile("f32", (n,))  # i * (1 / inner) may round up to the next integer: (i + 0.5) / inner
        A.op("vec_scalar", [half.value, io.value, ctx.cst("f32", 0.5), c], api="Adds")

    def q(k: int) -> Tile:
        """floor(i / inner_k), lane i's index over dims[:k + 1] (a new tile, or the 0, 1, 2, ... tile)."""
        inner = numel(dims[k + 1:])
        if inner == 1:
            return io
        t = ctx.new_tile("f32", (n,))
        muls(t, half if inner & (inner - 1) else io, 1.0 / inner)
        A.op("cast", [t.value, t.value, c], round="CAST_FLOOR")
        return t

    def free(t):
        if t is not None and t is not io:
            ctx.release(t)

    acc, prev = None, None
    for k, (d, s) in enumerate(zip(dims, strides)):
        cur = q(k) if s or (k + 1 < len(dims) and strides[k + 1]) else None
        if s:
            if k == 0:  # the leading digit is q_0 itself (i < n)
                t = ctx.new_tile("f32", (n,))
                muls(t, cur, s * sz)
            else:  # digit_k = q_k - d * q_{k-1}, made in q_{k-1}'s tile (or a new one for the 0, 1, 2, ... tile)
                t = prev if prev is not io else ctx.new_tile("f32", (n,))
                muls(t, prev, -d)
                add(t, cur)
                muls(t, t, s * sz)
                prev = None
            if acc is None:
                acc = t
            else:
                add(acc, t)
                ctx.release(t)
        free(prev)
        prev = cur
    free(prev)
    for t in (half, shifted):
        if t is not None:
            ctx.release(t)
    if acc is None:  # every lane reads the same element
        acc = ctx.new_tile("f32", (n,))
        A.op("duplicate", [acc.value, ctx.cst("f32", 0.0), c])
    if base:
        A.op("vec_scalar", [acc.value, acc.value, ctx.cst("f32", float(base * sz)), c], api="Adds")
    offs = ctx.temp("i32", (n,))
    A.op("cast", [offs.value, acc.value, c], round="CAST_RINT")
    ctx.release(acc)
    return A.op("reinterpret", [offs.value], A.local_type(ir.Type.parse("ui32")))


def split_lanes(ctx, src: Tile, outs: list[Tile], n: int) -> None:
    """outs[k][i] = src[2 * i + k] for i < n: a GatherMask (pattern 1: even, 2: odd) over the source's
    whole 256-byte repeats for 16- and 32-bit elements, else a Gather each."""
    sz = SIZE[src.elem]
    repeats = -(-2 * n * sz // 256)
    if sz in (2, 4) and src.bytes >= repeats * 256 and all(o.bytes >= repeats * 128 for o in outs):
        for k, out in enumerate(outs):
            per = 256 // sz
            for first in range(0, repeats, 255):  # repeatTimes is at most 255 a call
                r = min(255, repeats - first)
                A.op("gather_mask", [ctx.at(out.value, ctx.c64(first * per // 2)),
                                     ctx.at(src.value, ctx.c64(first * per))], pattern=k + 1, repeat=r, mask=0)
        return
    for k, out in enumerate(outs):
        move(ctx, src, out, (n,), (2,), k)


# ----- chains of moves, composed ----------------------------------------------------------------------

@dataclass
class Strided:
    """A block not moved yet: lane i (row-major over `dims`, the block's full shape) is element
    base + sum(digit_k(i) * strides[k]) of the tile `src`."""

    src: Tile
    dims: list
    strides: list
    base: int = 0

    def permuted(self, order) -> Strided:
        return Strided(self.src, [self.dims[o] for o in order], [self.strides[o] for o in order], self.base)

    def half(self, k: int) -> Strided:
        """Half k of a split along the last dim (of 2)."""
        return Strided(self.src, self.dims[:-1], self.strides[:-1], self.base + k * self.strides[-1])


_DEFERRED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # {lowering context: {value: Strided}}
MOVERS = ("xb.trans", "xb.split", "xb.join")


def _row_major(shape) -> list:
    return [numel(shape[d + 1:]) for d in range(len(shape))]


def deferred(ctx, v: ir.Value) -> Strided | None:
    """The composed map of `v` when its move was deferred (`place`), else None."""
    return _DEFERRED.get(ctx, {}).get(v)


def strided(ctx, v: ir.Value, t: Tile | None = None) -> Strided:
    """`v` as a Strided: its deferred map, or its tile (`t`, else ctx.tile) read row-major."""
    lz = deferred(ctx, v)
    if lz is not None:
        return lz
    t = t if t is not None else ctx.tile(v)
    shape = list(shape_of(v.type))
    return Strided(t, shape, _row_major(shape))


def _users(r: ir.Value) -> list:
    return [u.owner.operation if hasattr(u.owner, "operation") else u.owner for u in r.uses]


def _deferrable(op, r: ir.Value) -> bool:
    """Whether every user of `r` is a trans, a split into blocks or a join in op's block, after it, with
    only such ops in between (so the source tile stays as it is until the last of them reads it)."""
    users = _users(r)
    if not users or any(isinstance(u, ir.Block) or u.name not in MOVERS for u in users):
        return False
    if any(u.name == "xb.split" and not str(u.results[0].type).startswith("tensor<") for u in users):
        return False
    me = op.operation if hasattr(op, "operation") else op
    ops = [o.operation for o in me.block.operations]
    at = ops.index(me)
    try:
        last = max(ops.index(u) for u in users)
    except ValueError:  # a user in another block
        return False
    return all(o.name in MOVERS for o in ops[at + 1:last + 1])


def place(ctx, op, r: ir.Value, lz: Strided, name: str | None = None) -> None:
    """r = the block `lz` describes: deferred where only moves right after `op` use it (r is then a view
    that keeps lz.src alive, read by nothing but those moves), else one Gather into r's tile."""
    if _deferrable(op, r):
        _DEFERRED.setdefault(ctx, {})[r] = lz
        ctx.vmap[r] = Tile(lz.src.value, lz.src.elem, shape_of(r.type), lz.src.bytes, "view",
                           parent=ctx.hold(lz.src))
        return
    out = ctx.new_tile(lz.src.elem, shape_of(r.type), name, result=r)
    move(ctx, lz.src, out, lz.dims, lz.strides, lz.base)
    ctx.vmap[r] = out


def join_lanes(ctx, op, a: ir.Value, b: ir.Value, r: ir.Value, name: str | None, tile_of) -> None:
    """r[..., k] = (a, b)[k]: of two halves of one deferred source, the composed map (no move yet);
    else a and b one after the other in a scratch tile (UB->UB DataCopys of whole 32-byte blocks, or a
    Gather each where a half was deferred), then the join's map over it (`place`)."""
    la, lb = deferred(ctx, a), deferred(ctx, b)
    if la is not None and lb is not None and la.src is lb.src and la.dims == lb.dims and la.strides == lb.strides:
        place(ctx, op, r, Strided(la.src, la.dims + [2], la.strides + [lb.base - la.base], la.base), name)
        return
    shape = list(shape_of(a.type))
    n = numel(shape)
    halves = [lz if lz is not None else tile_of(v) for v, lz in ((a, la), (b, lb))]
    e = halves[0].src.elem if isinstance(halves[0], Strided) else halves[0].elem
    half = round_up(n, 32 // SIZE[e])
    both = ctx.new_tile(e, (2 * half,))
    for k, h in enumerate(halves):
        dst = ctx.at(both.value, ctx.c64(half)) if k else both.value
        if isinstance(h, Strided):
            _gather(ctx, h.src.value, dst, e, h.dims, h.strides, h.base)
        else:
            A.op("data_copy", [dst, h.value, ctx.c64(half)])
    place(ctx, op, r, Strided(both, shape + [2], _row_major(shape) + [half]), name)
    ctx.release(both)
