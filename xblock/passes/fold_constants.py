"""xb-fold-constants: fold xb shape ops of constants and trivially true masks.

`xb.splat`/`xb.broadcast`/`xb.expand_dims`/`xb.reshape` of a splat constant become one dense
constant; `xb.addptr` with a zero offset becomes its pointer; a load or store whose mask is a
constant all-true block loses the mask (and the load its `other`).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

NAME = "xb-fold-constants"
_SHAPE_OPS = ("xb.splat", "xb.broadcast", "xb.expand_dims", "xb.reshape")


def _splat_value(v):
    """The scalar attribute of a constant value (scalar or splat block), or None."""
    owner = v.owner
    if not isinstance(owner, ir.Operation) and not hasattr(owner, "name"):
        return None
    if getattr(owner, "name", None) != "arith.constant":
        return None
    attr = owner.attributes["value"]
    if isinstance(attr, ir.DenseElementsAttr):
        return attr.get_splat_value() if attr.is_splat else None
    return attr


def _int_value(a):
    if isinstance(a, ir.BoolAttr):
        return int(a.value)
    if isinstance(a, ir.IntegerAttr):
        return a.value
    return None


def _is_true(v) -> bool:
    a = _splat_value(v)
    return a is not None and _int_value(a) not in (None, 0)


def _is_zero(v) -> bool:
    a = _splat_value(v)
    return a is not None and _int_value(a) == 0


def run(module: ir.Module) -> None:
    """Apply the folds once over the module (they do not enable each other beyond one sweep)."""
    ops = []
    module.operation.walk(lambda op: (ops.append(op), ir.WalkResult.ADVANCE)[1])
    for op in ops:
        name = op.name
        if name in _SHAPE_OPS:
            a = _splat_value(op.operands[0])
            if a is None or "xb.ptr" in str(op.results[0].type):
                continue
            t = ir.RankedTensorType(op.results[0].type)
            with ir.InsertionPoint(op), op.location:
                c = arith.constant(t, ir.DenseElementsAttr.get_splat(t, a))
            op.results[0].replace_all_uses_with(c)
            op.erase()
        elif name == "xb.addptr" and _is_zero(op.operands[1]):
            op.results[0].replace_all_uses_with(op.operands[0])
            op.erase()
        elif name in ("xb.load", "xb.store"):
            _drop_true_mask(op)


def _drop_true_mask(op) -> None:
    seg = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    mask_index = 1 if op.name == "xb.load" else 2
    if seg[mask_index] != 1:
        return
    pos = sum(seg[:mask_index])
    if not _is_true(op.operands[pos]):
        return
    keep = [v for i, v in enumerate(op.operands) if i < pos]
    if op.name == "xb.store":
        seg = [1, 1, 0]
    else:
        seg = [1, 0, 0]
    attrs = {n: op.attributes[n] for n in op.attributes}
    attrs["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get(seg)
    with ir.InsertionPoint(op), op.location:
        new = ir.Operation.create(op.name, results=[r.type for r in op.results], operands=keep, attributes=attrs)
    for old, r in zip(op.results, new.results):
        old.replace_all_uses_with(r)
    op.erase()
