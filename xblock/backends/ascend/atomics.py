"""The rule of xb.atomic_rmw: atomic add of a tile as a copy out under SetAtomicAdd.

Only the atomic-add copy path is documented for AscendC (SetAtomicAdd/SetAtomicNone around a
DataCopy to GM), so other kinds, the old value and scalar atomics are errors; xb.atomic_cas is in
`rules.UNSUPPORTED`.
"""

from __future__ import annotations

from mlir import ir

from .access import store_tile
from .rules import rule
from .values import elem_of


@rule("xb.atomic_rmw")
def _atomic(ctx, op):
    kind = ir.StringAttr(op.attributes["kind"]).value
    if kind not in ("fadd", "add"):
        user = "atomic_" + kind.lstrip("fu") if kind not in ("xchg", "xor") else "atomic_" + kind
        raise ctx.error(f"{user} (xb.atomic_rmw {kind}) is not supported: the AscendC reference documents "
                        f"only the atomic-add copy path (SetAtomicAdd)")
    if any(True for _ in op.result.uses):
        raise ctx.error("the old value returned by an atomic is not available on ascend")
    if not str(op.operands[1].type).startswith("tensor<"):
        raise ctx.error("scalar atomics are not supported yet")
    elem = elem_of(op.operands[1].type)
    if elem not in ("f32", "f16", "i32"):
        raise ctx.error(f"atomic add of {elem} is not supported")
    store_tile(ctx, op, "add")
