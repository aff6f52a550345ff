"""User-facing errors: every one names the kernel's file and line."""

from __future__ import annotations

import os


class XBlockError(Exception):
    """Base class of xblock's user-facing errors."""


class XBlockWarning(UserWarning):
    """A warning about the user's kernel, shown at the kernel's line (`warnings.warn_explicit`)."""


class CompilationError(XBlockError):
    """A kernel cannot be compiled; rendered `file.py:LINE:COL: message`, the line and a caret."""

    def __init__(self, file: str, line: int, col: int, message: str, source_line: str | None = None):
        self.file, self.line, self.col, self.message = file, line, col, message
        self.source_line = source_line
        super().__init__(self.render())

    def render(self) -> str:
        head = f"{self.file}:{self.line}:{self.col}: {self.message}"
        if self.source_line is None:
            return head
        src = self.source_line.rstrip("\n")
        return f"{head}\n{src}\n{' ' * max(self.col - 1, 0)}^"


class LaunchError(XBlockError):
    """Bad arguments at launch; names the kernel and its definition line. User arrays are untouched."""

    def __init__(self, file: str, line: int, kernel: str, message: str):
        self.file, self.line, self.kernel, self.message = file, line, kernel, message
        super().__init__(f"{file}:{line}: {kernel}: {message}")


class ExecutionError(XBlockError):
    """A kernel failed while running (out-of-bounds access, race, device assert), at a kernel line."""


def debug() -> bool:
    return os.environ.get("XBLOCK_DEBUG", "") not in ("", "0")


def surface(err: XBlockError):
    """Drop compiler-internal frames from a user-facing error unless XBLOCK_DEBUG=1."""
    if debug():
        return err
    return err.with_traceback(None)
