"""Blocks made from no block (aranges, splat constants, splats of a scalar) that CSE shares between axes.

`xb-strip-mine` groups the dimensions of a kernel's blocks into axes (`block_axes`). CSE merges
equal ops, so the `tl.arange(0, 128)` of a query block, of a key block and of a head dimension
(attention with BLOCK_M = BLOCK_N = HEAD_DIM) is one value, and it would tie those three axes into
one: a [BLOCK_M, BLOCK_N] block would have the split axis twice. `untie` gives every use of such a
source its own copy (on the copy of the module the pass splits); once the axes are known, `retie`
merges the copies that ended up on the same axes again, so a chunk loop computes each once.
"""

from __future__ import annotations

from mlir import ir

from .block_axes import is_splat_constant, shape_of

_SOURCES = ("xb.arange", "xb.splat")


def _is_source(op) -> bool:
    if len(op.results) != 1 or shape_of(op.results[0]) is None or len(op.regions):
        return False
    if op.name == "arith.constant":
        return is_splat_constant(op.results[0])
    return op.name in _SOURCES and all(shape_of(v) is None for v in op.operands)


def untie(kernel) -> list:
    """One copy of every shared source per use, placed right after it; the groups (original first)."""
    sources = []

    def visit(o):
        o = o.operation
        if _is_source(o) and len(list(o.results[0].uses)) > 1:
            sources.append(o)
        return ir.WalkResult.ADVANCE
    kernel.operation.walk(visit)
    groups = []
    for op in sources:
        uses = [(u.owner, u.operand_number) for u in op.results[0].uses]
        group = [op]
        for owner, index in uses[1:]:
            copy = op.clone(ir.InsertionPoint.after(op))
            owner.operands[index] = copy.results[0]
            group.append(copy)
        groups.append(group)
    return groups


def retie(groups, axes) -> None:
    """Merge the copies of one source whose dimensions are on the same axes (`axes`: a BlockAxes of the
    untied kernel); the copies left without uses are dead (the pass erases them)."""
    for group in groups:
        first: dict = {}
        for op in group:
            v = op.results[0]
            key = tuple(axes.axis(v, d) if n > 1 else None for d, n in enumerate(shape_of(v)))
            rep = first.setdefault(key, v)
            if rep != v:
                v.replace_all_uses_with(rep)
