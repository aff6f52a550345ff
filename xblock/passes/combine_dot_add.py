"""xb-combine-dot-add: `acc + dot(a, b)` becomes `dot(a, b, acc)`, as Triton's combine pass does.

Triton rewrites `arith.addf(d, tt.dot(a, b, 0))` (and `addi`) into `tt.dot(a, b, d)` when the dot has
no other use (CombineDotAddFPattern/CombineDotAddIPattern in its Combine.td), so `acc += tl.dot(a, b)`
(TorchInductor's mm templates) is the same K loop as `acc = tl.dot(a, b, acc)`. Only an accumulator the
enclosing loop carries is combined; other sums stay an epilogue of the product. A backend that
recognizes K loops by the carried accumulator of the dot (the ascend Cube path) runs this first.
The result differs from the add only by where the product is rounded (once, into the accumulator).
"""

from __future__ import annotations

from mlir import ir

NAME = "xb-combine-dot-add"


def _op(v):
    o = v.owner
    return None if isinstance(o, ir.Block) else (o.operation if hasattr(o, "operation") else o)


def _is_zero(v) -> bool:
    o = _op(v)
    if o is None or o.name != "arith.constant":
        return False
    attr = o.attributes["value"]
    if not isinstance(attr, ir.DenseElementsAttr) or not attr.is_splat:
        return False
    s = attr.get_splat_value()
    is_float = isinstance(ir.RankedTensorType(v.type).element_type, (ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type))
    return (ir.FloatAttr(s).value if is_float else ir.IntegerAttr(s).value) == 0


def _fresh_dot(v):
    """The xb.dot producing `v` from a zero accumulator, used only there, or None."""
    o = _op(v)
    if o is None or o.name != "xb.dot" or len(list(o.results[0].uses)) != 1 or not _is_zero(o.operands[2]):
        return None
    return o


def _carried(acc, add) -> bool:
    """`acc` is an accumulator the loop around `add` carries (`acc += dot(a, b)` in a K loop): other
    sums (`dot(a, b) + 1.0`, `acc * alpha + dot(p, v)`) stay as written, an epilogue of the product."""
    owner = acc.owner
    if not isinstance(owner, ir.Block) or owner.owner is None or owner.owner.operation.name != "scf.for":
        return False
    parent = add.parent
    return parent is not None and parent.operation == owner.owner.operation


def _walk(op):
    for region in op.regions:
        for block in region.blocks:
            for o in list(block.operations):
                yield o.operation
                yield from _walk(o.operation)


def run(module: ir.Module) -> int:
    """Combine every `acc + dot(a, b, 0)` in `module`; returns how many were combined."""
    done = 0
    for add in list(_walk(module.operation)):
        if add.name not in ("arith.addf", "arith.addi") or not str(add.result.type).startswith("tensor<"):
            continue
        for i in (0, 1):
            dot = _fresh_dot(add.operands[i])
            acc = add.operands[1 - i]
            if dot is None or acc.type != dot.results[0].type or not _carried(acc, add):
                continue
            attrs = {k: dot.attributes[k] for k in dot.attributes}
            with ir.InsertionPoint(add):
                a, b = dot.operands[0], dot.operands[1]
                new = ir.Operation.create("xb.dot", results=[acc.type], operands=[a, b, acc], attributes=attrs,
                                          loc=dot.location)
            add.result.replace_all_uses_with(new.results[0])
            add.erase()
            dot.erase()
            done += 1
            break
    return done
