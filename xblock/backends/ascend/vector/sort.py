"""Rows of float16/float32 sorted on the vector unit: AscendC Sort (Sort32, then MrgSort passes) and Extract.

`Sort<T, true>` sorts the 32 * r scores of a row, with uint32 indices, into 8-byte (score, index)
pairs in descending order, stably (of equal scores, the earlier comes first: the dev kit's Sort32
and MrgSort docs), merging through a scratch as large as the pairs; `Extract` splits the first
32 * r' pairs back into scores (and indices). One Sort and one Extract per row, in a loop over the
rows. An ascending sort is the descending sort of -x, negated back (Muls by -1 is exact, for -0.0
and infinities too), which keeps equal elements in their order as well. A topk (descending, k < n)
extracts the first k scores: directly into the result row when k is a multiple of 32, else the
first 32 into a scratch, then copied (UB->UB DataCopy when k elements are whole 32-byte blocks,
else k scalar copies per row).

Values equal those of the library's bitonic network (language/standard.py) element for element,
except that the network can give -0.0 and 0.0 (equal as values) in another order or number; NaN
has no documented order on the hardware and the CPU model refuses it.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import scf

from ....dialects import ascendc as A
from ..values import SIZE, Tile

GROUP = 32  # scores a Sort32 repeat sorts, and pairs an Extract repeat splits
PAIR = 8  # bytes of a (score, index) pair


def sort_rows(ctx, out: Tile, src: Tile, rows: int, n: int, k: int, descending: bool) -> None:
    """`out` ([rows, k], row-major) = the first `k` of each row of `src` ([rows, n]) sorted."""
    elem, sz = src.elem, SIZE[src.elem]
    keys = _keys(ctx, src, rows * n, descending)
    index = _indices(ctx, n)
    pairs = _temp(ctx, elem, n * PAIR // sz, "sorted")
    tmp = _temp(ctx, elem, n * PAIR // sz, "sortTmp")
    picked = _temp(ctx, "i32", n, "sortedIndex")
    picked_u = A.op("reinterpret", [picked.value], A.local_type(ir.Type.parse("ui32")))
    head = None if k % GROUP == 0 else _temp(ctx, elem, GROUP, "sortedHead")

    def row(r):
        A.op("sort", [pairs.value, _at(ctx, keys.value, r, n), index, tmp.value, ctx.c64(n // GROUP)])
        dst = _at(ctx, out.value, r, k)
        if head is None:
            A.op("extract", [dst, picked_u, pairs.value, ctx.c64(k // GROUP)])
        else:
            A.op("extract", [head.value, picked_u, pairs.value, ctx.c64(1)])
            _copy_head(ctx, dst, head, k, sz)

    if rows == 1:
        row(None)
    else:
        loop = ctx.for_range(0, rows)
        with ir.InsertionPoint(loop.body):
            row(loop.induction_variable)
            scf.YieldOp([])
    if head is not None and k * sz % 32:
        _after_scalar_copies(ctx, out)
    if not descending:
        A.op("vec_scalar", [out.value, out.value, ctx.cst(elem, -1.0), ctx.c64(rows * k)], api="Muls")


def _temp(ctx, elem: str, count: int, name: str) -> Tile:
    """A named scratch tile freed after the op."""
    t = ctx.new_tile(elem, (count,), name)
    ctx.temps.append(t)
    return t


def _at(ctx, v: ir.Value, r, stride: int) -> ir.Value:
    return v if r is None else ctx.at(v, ctx.mul(r, ctx.c64(stride)))


def _keys(ctx, src: Tile, count: int, descending: bool) -> Tile:
    """The scores Sort reads: `src` (a whole tile, 256-byte aligned as Sort32 wants), or -src."""
    if descending and src.kind != "view":
        return src
    keys = _temp(ctx, src.elem, count, "sortKeys")
    A.op("vec_scalar", [keys.value, src.value, ctx.cst(src.elem, 1.0 if descending else -1.0), ctx.c64(count)],
         api="Muls")
    return keys


def _indices(ctx, n: int) -> ir.Value:
    """0..n-1 as uint32 (Sort carries them beside the scores; tl.sort returns the scores only)."""
    io = ctx.iota((n,), 0)
    idx = _temp(ctx, "i32", n, "sortIndex")
    A.op("cast", [idx.value, io.value, ctx.c64(n)], round="CAST_RINT")
    return A.op("reinterpret", [idx.value], A.local_type(ir.Type.parse("ui32")))


def _copy_head(ctx, dst: ir.Value, head: Tile, k: int, sz: int) -> None:
    """The first `k` (< 32) scores of `head` into `dst`."""
    if k * sz % 32 == 0:  # whole 32-byte blocks: a UB->UB DataCopy (the result row is then 32-byte aligned)
        A.op("data_copy", [dst, head.value, ctx.c64(k)])
        return
    ctx.sync("V_S")
    t = ir.Type.parse(head.elem)
    for j in range(k):
        v = A.op("get_value", [head.value, ctx.c64(j)], t)
        A.op("set_value", [dst, ctx.c64(j), v])
    ctx.sync("S_V")  # the next row's Extract overwrites what these read


def _after_scalar_copies(ctx, out: Tile) -> None:
    if out.kind == "vecout":
        ctx.sync("S_MTE3")
    else:
        out.scalar_written = True
