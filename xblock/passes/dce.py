"""xb-dce: erase side-effect-free xb ops (and arith/math ops) whose results are unused."""

from __future__ import annotations

from mlir import ir

from ..dialects.xb import PURE_OPS

NAME = "xb-dce"


def _removable(op) -> bool:
    name = op.name
    if name in PURE_OPS:
        return True
    if name == "xb.load":
        return not ir.BoolAttr(op.attributes["volatile"]).value
    return name.startswith("arith.") or name.startswith("math.")


def run(module: ir.Module) -> None:
    """Erase unused pure ops until nothing changes."""
    changed = True
    while changed:
        changed = False
        dead = []

        def walk(op):
            if op.results and _removable(op) and all(not list(r.uses) for r in op.results):
                dead.append(op)
            return ir.WalkResult.ADVANCE

        module.operation.walk(walk, ir.WalkOrder.POST_ORDER)
        for op in reversed(dead):
            op.erase()
            changed = True
