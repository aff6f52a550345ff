"""Batched (3-D) dots on the Cube unit: Mmad has no batch, so each matrix of the batch is one 2-D tile.

Helpers of the Cube rules (cube.py); they register no rule. A [B, M, K] x [B, K, N] dot whose
operands are loads of rows of unit-stride elements per matrix runs as a loop over the B matrices in
the generated code (`for (batch = 0; batch < B; batch++)`), outside the dot's K loop: each matrix
goes through the 2-D path (its K loop into L0C, then Fixpipe into its matrix of the store), so L0C
holds one tile at a time. A matrix the mask turns off (`b < B` in the mask) copies and stores nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir.dialects import arith

from ....passes.pointer_structure import Bounds, TileAccess
from ..values import shape_of


@dataclass(frozen=True)
class BatchTile:
    """One matrix of a 3-D load or store: `acc` is matrix 0's 2-D tile (its base, rows, columns and
    their limits); matrix b starts `step` elements further per b and exists iff b < each of `limits`."""

    acc: TileAccess
    step: object  # Lin
    limits: tuple  # Lins


def is_batched(dot) -> bool:
    return len(shape_of(dot.operands[0].type)) == 3


def batch_tile(ps, ptr, mask) -> BatchTile | None:
    """The per-matrix tile of a 3-D access, or None when its matrices are not rows of unit-stride
    elements (or its offsets wrap, or may start before the tensor)."""
    p = ps.pointer(ptr)
    if p is None or len(p.offset.shape) != 3 or p.offset.exact is not None:
        return None
    b = ps.mask(mask, True) if mask is not None else Bounds(p.offset.shape, ())
    if b is None or b.lower:
        return None
    shape, strides = p.offset.shape, p.offset.strides
    if shape[2] != 1 and strides[2].as_const() != 1:
        return None
    dims = {d: tuple(lim for e, lim in b.dims if e == d) for d in range(3)}
    acc = TileAccess(p.root, p.elem, p.offset.base, shape[1], shape[2], strides[1], dims[1], dims[2], b.uniform)
    return BatchTile(acc, strides[0], dims[0])


def tile_at(ctx, bt: BatchTile, ptr, index):
    """The GlobalTensor at matrix `index` (an i64 value) of the access."""
    off = ctx.add(ctx.gm_offset(ptr, bt.acc.base), ctx.mul(index, ctx.lin(bt.step)))
    return ctx.at(ctx.vmap[bt.acc.root], off)


def gate(ctx, bt: BatchTile, index, extent):
    """`extent` where matrix `index` exists (index < each limit), else 0."""
    for lim in bt.limits:
        on = arith.CmpIOp(arith.CmpIPredicate.slt, index, ctx.lin(lim)).result
        extent = arith.SelectOp(on, extent, ctx.c64(0)).result
    return extent
