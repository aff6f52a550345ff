"""Test-only targets: a real target (cpu, ascend) whose xb input has one planted fault, every
`arith.divf` result times 1.01, so that its compiled code diverges from the others at a known line."""

from __future__ import annotations

import dataclasses

from mlir import ir
from mlir.dialects import arith

from xblock.backends import get_backend


def _perturb_divisions(module: ir.Module) -> None:
    divs = []
    module.operation.walk(lambda op: (divs.append(op) if op.name == "arith.divf" else None,
                                      ir.WalkResult.ADVANCE)[1])
    for op in divs:
        r = op.results[0]
        t = r.type
        et = ir.RankedTensorType(t).element_type if isinstance(t, ir.RankedTensorType) else t
        ops = list(op.operation.block.operations)
        after = ops[[o.operation for o in ops].index(op.operation) + 1]
        with op.location, ir.InsertionPoint(after):
            c = ir.FloatAttr.get(et, 1.01)
            k = arith.constant(t, ir.DenseElementsAttr.get_splat(t, c) if isinstance(t, ir.RankedTensorType) else c)
            scaled = arith.mulf(r, k)
        r.replace_all_uses_except(scaled, scaled.owner.operation)


def faulty(base: str):
    real = get_backend(base)

    def stages(opts):
        inner = dict(real.stages(opts))
        first_ext, first = next(iter(inner.items()))

        def planted(module, metadata):
            with module.context:
                _perturb_divisions(module)
            return first(module, metadata)

        inner[first_ext] = planted
        return inner

    return dataclasses.replace(real, name=f"{base}-faulty", stages=stages)
