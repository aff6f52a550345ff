"""A kernel's source: the Python function behind an xblock, triton or plain function."""

from __future__ import annotations

import ast
import hashlib
import inspect
import textwrap
from dataclasses import dataclass, field
from functools import cached_property

XBLOCK_KERNEL = "__xblock_kernel__"  # the marker attribute of xblock's JITFunction (set by the runtime)
XBLOCK_TUNER = "__xblock_tuner__"  # the marker attribute of xblock's Autotuner and Heuristics wrappers
TRITON_TUNERS = ("Autotuner", "Heuristics")  # Triton's @autotune / @heuristics wrappers (triton.runtime.autotuner)


def is_triton_tuner(obj) -> bool:
    """True for the object `@triton.autotune` or `@triton.heuristics` returns."""
    t = type(obj)
    return t.__module__.startswith("triton.runtime") and t.__name__ in TRITON_TUNERS


def is_tuner(obj) -> bool:
    """True for a kernel wrapped in @autotune or @heuristics (xblock's or Triton's)."""
    return bool(getattr(type(obj), XBLOCK_TUNER, False)) or is_triton_tuner(obj)


def unwrap_function(obj):
    """The plain Python function behind `obj`.

    `obj` is a plain function, an `@xblock.jit` or `@triton.jit` kernel, or one wrapped in
    `@autotune`/`@heuristics` (xblock's or Triton's, stacked in any order): the wrappers keep the
    kernel they wrap in `.fn`.
    """
    if getattr(type(obj), XBLOCK_KERNEL, False):
        return obj.fn
    if is_tuner(obj):
        return unwrap_function(obj.fn)
    if type(obj).__module__.startswith("triton") and hasattr(obj, "fn"):
        return unwrap_function(obj.fn)
    if inspect.isfunction(obj):
        return obj
    raise TypeError(f"expected a function, an @xblock.jit or an @triton.jit kernel, got {obj!r}")


def is_jit_function(obj) -> bool:
    """True for an `@xblock.jit` or `@triton.jit` kernel (not one wrapped in @autotune/@heuristics)."""
    if getattr(type(obj), XBLOCK_KERNEL, False):
        return True
    t = type(obj)
    return t.__module__.startswith("triton.runtime") and t.__name__ in ("JITFunction", "JITCallable")


@dataclass
class KernelSource:
    """Source, location and globals of one kernel or helper function."""

    fn: object
    name: str = field(init=False)
    file: str = field(init=False)
    first_line: int = field(init=False)
    indent: int = field(init=False)
    src: str = field(init=False)
    lines: list = field(init=False)

    def __post_init__(self):
        fn = self.fn
        self.name = fn.__name__
        self.file = inspect.getsourcefile(fn) or fn.__code__.co_filename
        raw_lines, self.first_line = inspect.getsourcelines(fn)
        raw = "".join(raw_lines)
        self.src = textwrap.dedent(raw)
        first_raw = raw_lines[0]
        first_src = self.src.splitlines()[0] if self.src else ""
        self.indent = len(first_raw) - len(first_raw.lstrip()) - (len(first_src) - len(first_src.lstrip()))
        self.lines = raw_lines

    @property
    def globals(self) -> dict:
        return self.fn.__globals__

    @cached_property
    def tree(self) -> ast.FunctionDef:
        mod = ast.parse(self.src)
        node = mod.body[0]
        if not isinstance(node, ast.FunctionDef):
            raise TypeError(f"{self.name} is not a function definition")
        return node

    @cached_property
    def params(self) -> list[str]:
        return [a.arg for a in self.tree.args.args]

    @cached_property
    def constexpr_params(self) -> set[str]:
        """Parameters annotated `constexpr` (xl.constexpr, tl.constexpr, or the bare name)."""
        out = set()
        for a in self.tree.args.args:
            ann = a.annotation
            if ann is None:
                continue
            text = ast.unparse(ann)
            if text.split(".")[-1] == "constexpr" or "constexpr" in text:
                out.add(a.arg)
        return out

    @cached_property
    def defaults(self) -> dict:
        sig = inspect.signature(self.fn)
        return {k: p.default for k, p in sig.parameters.items() if p.default is not inspect.Parameter.empty}

    def abs_line(self, lineno: int) -> int:
        return self.first_line + lineno - 1

    def source_line(self, lineno: int) -> str:
        idx = lineno - 1
        return self.lines[idx] if 0 <= idx < len(self.lines) else ""

    @cached_property
    def digest(self) -> str:
        return hashlib.sha256(self.src.encode()).hexdigest()


_SOURCES: dict = {}


def source_of(obj) -> KernelSource:
    """The (cached) KernelSource of a kernel object; source is read once per function."""
    fn = unwrap_function(obj)
    ks = _SOURCES.get(fn)
    if ks is None:
        ks = _SOURCES[fn] = KernelSource(fn)
    return ks
