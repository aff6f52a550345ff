"""xb-column-accesses: a 2-D load or store whose lanes run down the columns of memory becomes the
transpose of a row-major one.

`tl.load(x + rn[:, None] + rm[None, :] * ld)` (or a store through such pointers: the other common way
to write a transpose, `tl.store(y + rn[None, :] * M + rm[:, None], tile)`) walks memory with unit
stride along the block's first dimension. A backend that copies rows of unit-stride elements (the
ascend target's DataCopy) sees a gather there. Read as its transpose, the same block is rows of
unit-stride elements, so

    load(P, mask, other)   ->  trans(load(trans(P), trans(mask), trans(other)))
    store(P, value, mask)  ->  store(trans(P), trans(value), trans(mask))

which names the same lanes with the same values: the copy becomes row copies and the permute a
transpose in on-chip memory (ascend: TransDataTo5HD, vector/transpose.py). Only accesses that are a
gather as written and a tile when transposed change (the pointer structure analysis decides), and
loads that feed a dot are left to the backend's own operand paths (the Cube reads column-major
operands itself).
"""

from __future__ import annotations

from mlir import ir

from ..dialects import xb
from .pointer_structure import PointerStructure

NAME = "xb-column-accesses"


def _walk(op):
    for region in op.regions:
        for block in region.blocks:
            for o in list(block.operations):
                yield o.operation
                yield from _walk(o.operation)


def _shape(v: ir.Value) -> list | None:
    t = v.type
    return list(t.shape) if isinstance(t, ir.RankedTensorType) else None


def _feeds_dot(v: ir.Value, depth: int = 4) -> bool:
    """Whether `v` reaches an xb.dot through at most `depth` single-result ops."""
    for use in v.uses:
        o = use.owner
        if o.name == "xb.dot":
            return True
        if depth and len(o.results) == 1 and _feeds_dot(o.results[0], depth - 1):
            return True
    return False


def _trans(v: ir.Value | None, loc) -> ir.Value | None:
    """v transposed (a 2-D block), or v itself (None, or a scalar)."""
    shape = _shape(v) if v is not None else None
    if shape is None:
        return v
    t = ir.RankedTensorType.get(shape[::-1], v.type.element_type)
    return xb.trans(v, [1, 0], t, loc=loc)


def _column_major(ps: PointerStructure, ptr: ir.Value, mask: ir.Value | None) -> bool:
    shape = _shape(ptr)
    if shape is None or len(shape) != 2 or 1 in shape:
        return False
    return ps.tile_access(ptr, mask) is None and ps.tile_access(ptr, mask, transposed=True) is not None


def run(module: ir.Module, can_transpose=None) -> int:
    """Rewrite the column-major 2-D loads and stores of `module`; returns how many were rewritten.

    `can_transpose(elem, rows, cols)`, when given, says whether the backend transposes a rows x cols
    block of `elem` ("f32", ...) without a lane loop; an access whose transpose it cannot do is left
    as written (the backend may have a better path for it: ascend gathers a small column-major tile
    with one vector Gather)."""
    ps = PointerStructure()

    def fits(v: ir.Value, rows: int, cols: int) -> bool:
        return can_transpose is None or can_transpose(str(v.type.element_type), rows, cols)

    done = 0
    for op in list(_walk(module.operation)):
        if op.name not in ("xb.load", "xb.store"):
            continue
        seg = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
        ptr = op.operands[0]
        if op.name == "xb.load":
            mask = op.operands[1] if seg[1] else None
            other = op.operands[1 + seg[1]] if seg[2] else None
            shape = _shape(op.results[0])
            if shape is None or len(shape) != 2 or not fits(op.results[0], shape[1], shape[0]) \
                    or _feeds_dot(op.results[0]) or not _column_major(ps, ptr, mask):
                continue
            attrs = {k: op.attributes[k] for k in ("cache", "evict", "volatile")}
            with ir.InsertionPoint(op), op.location:
                loc = op.location
                tp, tm, to = _trans(ptr, loc), _trans(mask, loc), _trans(other, loc)
                rt = op.results[0].type
                flipped = ir.RankedTensorType.get(list(rt.shape)[::-1], rt.element_type)
                new = xb.load(tp, flipped, tm, to, cache=ir.StringAttr(attrs["cache"]).value,
                              evict=ir.StringAttr(attrs["evict"]).value,
                              volatile=ir.BoolAttr(attrs["volatile"]).value, loc=loc)
                back = xb.trans(new, [1, 0], rt, loc=loc)
            op.results[0].replace_all_uses_with(back)
        else:
            value = op.operands[1]
            mask = op.operands[2] if seg[2] else None
            shape = _shape(value)
            if shape is None or len(shape) != 2 or not fits(value, shape[0], shape[1]) \
                    or not _column_major(ps, ptr, mask):
                continue
            with ir.InsertionPoint(op), op.location:
                loc = op.location
                xb.store(_trans(ptr, loc), _trans(value, loc), _trans(mask, loc),
                         cache=ir.StringAttr(op.attributes["cache"]).value,
                         evict=ir.StringAttr(op.attributes["evict"]).value, loc=loc)
        op.erase()
        done += 1
    return done
