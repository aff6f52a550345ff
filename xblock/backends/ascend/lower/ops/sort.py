"""The rule of xb.sort: tl.sort and tl.topk of float16/float32 rows on the vector unit (vector/sort.py).

The frontend emits xb.sort for ascend (its "sort" capability) only where the op's domain holds:
float16/float32 blocks whose rows (the last dimension) are a multiple of 32 elements, at most 4096.
Other sorts (integer keys, shorter rows) and `bitonic_merge` stay the language library's bitonic
network of permutes, joins and splits, which run on the vector unit as Gathers at offsets fixed at
compile time (vector/permute.py; scalar loops with a warning for 8-bit keys only).
"""

from __future__ import annotations

from mlir import ir

from ...values import elem_of, numel, shape_of
from ...vector.sort import GROUP, sort_rows
from ...vector.tiles import dst_tile
from ..rules import rule

MAX_ROW = 4096  # 128 groups of 32: MrgSort lists stay within 4095 pairs, Sort's repeatTime within 255


@rule("xb.sort")
def _lower_sort(ctx, op):
    src = op.operands[0]
    shape = shape_of(src.type)
    n, k = shape[-1], int(ir.IntegerAttr(op.attributes["k"]).value)
    descending = bool(ir.IntegerAttr(op.attributes["descending"]).value)
    elem = elem_of(src.type)
    if elem not in ("f16", "f32") or n % GROUP or n > MAX_ROW or not 0 < k <= n:
        raise ctx.error(f"internal: xb.sort of {src.type} keeping {k} is outside what Sort/Extract take")
    t = ctx.tile(src)
    out = dst_tile(ctx, op, elem)
    sort_rows(ctx, out, t, numel(shape[:-1]), n, k, descending)
    ctx.vmap[op.result] = out
