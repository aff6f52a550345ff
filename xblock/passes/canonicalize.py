"""xb-canonicalize: upstream canonicalize and CSE over the kernel (arith, scf and math folds).

Upstream CSE/DCE leave xb ops alone (IRDL ops are never pure); xb-dce handles those.
"""

from __future__ import annotations

from mlir import ir
from mlir.passmanager import PassManager

NAME = "xb-canonicalize"


def run(module: ir.Module) -> None:
    """Run upstream canonicalize then cse."""
    PassManager.parse("builtin.module(canonicalize,cse)", context=module.context).run(module.operation)
