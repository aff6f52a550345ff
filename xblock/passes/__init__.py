"""xb -> xb passes, one per file, run in this order by `run_pipeline`."""

from __future__ import annotations

from mlir import ir

from . import canonicalize, dce, fold_constants, inline_calls

PIPELINE = (inline_calls, fold_constants, canonicalize, dce)


def verify(module: ir.Module, stage: str) -> None:
    """Verify the module; a failure names the stage that broke it."""
    try:
        module.operation.verify()
    except ir.MLIRError as e:
        raise RuntimeError(f"internal error: the xb module does not verify after {stage}: {e}") from None


def run_pipeline(module: ir.Module, passes=PIPELINE) -> ir.Module:
    """Run the passes in order, verifying after each."""
    verify(module, "the frontend")
    for p in passes:
        p.run(module)
        verify(module, p.NAME)
    return module
