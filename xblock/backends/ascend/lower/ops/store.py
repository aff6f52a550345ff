"""The rule of xb.store: a tile through a VECOUT queue to GM (or a scatter), or one scalar through UB."""

from __future__ import annotations

from .....dialects import ascendc as A
from ...vector.access import gm_tensor, scalar_to_gm, segments, store_tile
from ...vector.store_order import order_store
from ..rules import rule


@rule("xb.store")
def _lower_store(ctx, op):
    value = op.operands[1]
    if str(value.type).startswith("tensor<"):
        return store_tile(ctx, op, None)
    seg = segments(op)
    p = ctx.ps.pointer(op.operands[0])
    if p is None:
        raise ctx.error("this scalar store's address is not a kernel argument plus an offset")
    root = gm_tensor(ctx, p.root)
    gm = ctx.at(root, ctx.lin(p.offset.base))

    def put():
        scalar_to_gm(ctx, gm, ctx.scalar(value), A.elem_of(root.type))

    order_store(ctx, op)
    ctx.when(ctx.scalar(op.operands[2]) if seg[2] else None, put)
