"""A failure of one of Triton's stages, rendered at the kernel line its diagnostic names.

Triton's pass manager, LLVM and ptxas report errors as text; an MLIR diagnostic in it carries the
`loc(...)` of the TTIR op, which is the location `lowering` printed from the xb op.
"""

from __future__ import annotations

import re

from ...dialects.locations import error_at
from ...errors import CompilationError
from .rules import TARGET

_DIAGNOSTIC_LOC = re.compile(r'loc\(.*?"([^"]+)":(\d+):(\d+)')


def first_location(text: str):
    """(file, line, col) of the first MLIR diagnostic location in Triton's `text`, or None."""
    m = _DIAGNOSTIC_LOC.search(text or "")
    return (m.group(1), int(m.group(2)), int(m.group(3))) if m else None


def stage_error(ext: str, err: Exception, metadata: dict, arch: int) -> CompilationError:
    """Triton's stage `ext` failed with `err`: an error at the line it names, else at the kernel's."""
    msg = str(err).strip()
    where = first_location(msg) or (metadata["file"], metadata["line"], 1)
    text = f"Triton's '{ext}' stage failed for kernel '{metadata['name']}' (sm_{arch}): {msg}"
    return error_at(where, text, TARGET)
