"""Shared checks for the error tests: the reported location is the user's line, nothing internal leaks."""

from __future__ import annotations

import inspect
import linecache
import re

import pytest

import xblock

# Paths and words that belong to the compiler, not to the user's kernel.
INTERNAL = ("/xblock/frontend/", "/xblock/sim/", "/xblock/runtime/", "/xblock/passes/", "/xblock/dialects/",
            "/xblock/language/", "codegen.py", "semantic.py", "executor.py", "rules.py", "Traceback",
            "site-packages")


def _fn(kernel):
    return getattr(kernel, "fn", kernel)


def source_file(kernel) -> str:
    return inspect.getsourcefile(_fn(kernel))


def line_of(kernel, marker: str = "# ERR") -> int:
    """The absolute line number of the one line of `kernel` carrying `marker`."""
    lines, first = inspect.getsourcelines(_fn(kernel))
    hits = [i for i, text in enumerate(lines) if marker in text]
    assert len(hits) == 1, f"expected exactly one {marker!r} line in {kernel}"
    return first + hits[0]


def def_line(kernel) -> int:
    """The absolute line number of the kernel's `def` line."""
    lines, first = inspect.getsourcelines(_fn(kernel))
    return first + next(i for i, text in enumerate(lines) if text.lstrip().startswith("def "))


def assert_clean(text: str) -> None:
    for s in INTERNAL:
        assert s not in text, f"compiler-internal text {s!r} in the message:\n{text}"
    assert "mlir" not in text.lower(), f"MLIR shows in the message:\n{text}"


def assert_located(err: xblock.CompilationError, kernel, line: int, match: str | None = None) -> None:
    """`err` renders `file:line:col: message`, the source line and a caret under a non-blank column.

    `kernel` is the function whose file the error must name (a helper's, when the error is in it).
    """
    file = source_file(kernel)
    text = str(err)
    assert err.file == file, text
    assert err.line == line, f"reported line {err.line}, expected {line}:\n{text}"
    assert text.startswith(f"{file}:{line}:{err.col}: "), text
    rendered = text.split("\n")
    assert len(rendered) == 3, text
    src = linecache.getline(file, line)
    assert rendered[1] == src.rstrip("\n"), text
    assert rendered[2] == " " * (err.col - 1) + "^", text
    assert 1 <= err.col <= len(src) and not src[err.col - 1].isspace(), text
    assert_clean(text)
    if match is not None:
        assert re.search(match, err.message), f"{match!r} not in {err.message!r}"


def compile_error(kernel, signature, constexprs=None, match=None, marker="# ERR", line=None):
    """Compile `kernel` for the sim, expect a CompilationError at its `marker` line; return it."""
    with pytest.raises(xblock.CompilationError) as info:
        xblock.compile(kernel, target="sim", signature=signature, constexprs=constexprs)
    assert_located(info.value, kernel, line_of(kernel, marker) if line is None else line, match)
    return info.value
