"""xb -> xb passes, one per file, run in this order by `run_pipeline`."""

from __future__ import annotations

from mlir import ir

from ..dialects.locations import source_loc
from . import canonicalize, dce, fold_constants, inline_calls

PIPELINE = (inline_calls, fold_constants, canonicalize, dce)


class VerificationError(Exception):
    """The module does not verify; `where` is the (file, line, col) of the first diagnostic, if known."""

    def __init__(self, message: str, where=None):
        super().__init__(message)
        self.where = where


def verify(module: ir.Module, stage: str) -> None:
    """Verify the module; a failure names the stage that broke it and the op's source location."""
    try:
        module.operation.verify()
    except ir.MLIRError as e:
        where, msg = None, str(e).splitlines()[-1].strip()
        for d in getattr(e, "error_diagnostics", []) or []:
            found = source_loc(d.location)
            if found[1]:
                where, msg = found, d.message
                break
        raise VerificationError(f"internal error: the IR does not verify after {stage}: {msg}", where) from None


def run_pipeline(module: ir.Module, passes=PIPELINE) -> ir.Module:
    """Run the passes in order, verifying after each."""
    verify(module, "the frontend")
    for p in passes:
        p.run(module)
        verify(module, p.NAME)
    return module
