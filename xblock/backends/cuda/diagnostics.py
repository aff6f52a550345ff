"""Errors of the cuda target rendered at the kernel's source line (from an MLIR location)."""

from __future__ import annotations

import linecache
import re

from ...errors import CompilationError

_LOC = re.compile(r'"([^"]+)":(\d+):(\d+)')


def error_at(location: str, message: str, default=None) -> CompilationError:
    """A CompilationError at the first `"file":line:col` of an MLIR location (or `default`)."""
    m = _LOC.search(location or "")
    if m is None:
        file, line, col = default or ("<unknown>", 0, 0)
    else:
        file, line, col = m.group(1), int(m.group(2)), int(m.group(3))
    src = linecache.getline(file, line) if line else ""
    return CompilationError(file, line, col, message, src or None)


def first_location(text: str):
    """(file, line, col) of the first MLIR diagnostic location in `text`, or None."""
    m = re.search(r'loc\(.*?"([^"]+)":(\d+):(\d+)', text or "")
    return (m.group(1), int(m.group(2)), int(m.group(3))) if m else None
