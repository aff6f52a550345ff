"""A kernel's source: the Python function behind an xblock, triton or plain function."""

from __future__ import annotations

import ast
import hashlib
import inspect
import textwrap
from dataclasses import dataclass, field
from functools import cached_property

from ..errors import ArgumentError, CompilationError

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
    raise ArgumentError(f"expected a function, an @xblock.jit or an @triton.jit kernel, got {obj!r}")


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
        try:
            raw_lines, self.first_line = inspect.getsourcelines(fn)
        except OSError:  # python -c, exec of a string, an interactive prompt without source
            code = fn.__code__
            raise CompilationError(code.co_filename, code.co_firstlineno, 1,
                                   f"cannot read the source of kernel '{fn.__name__}' (defined in "
                                   f"{code.co_filename}): xblock compiles a kernel from its source text, so "
                                   "define it in a .py file (or a notebook cell)") from None
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
            raise ArgumentError(f"{self.file}:{self.first_line}: {self.name} is not a function definition: a kernel "
                                "is written with `def` (a lambda cannot be one)")
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
    def pointer_params(self) -> set[str]:
        """Parameters the kernel visibly uses as pointers: they reach the pointer argument of a
        load, store or atomic, directly or through assignments (`p = x_ptr + offs`)."""
        pointer_fns = ("load", "store", "atomic_add", "atomic_max", "atomic_min", "atomic_xchg", "atomic_cas",
                       "atomic_and", "atomic_or", "atomic_xor", "make_block_ptr")
        used: set = set()
        for node in self._unguarded_nodes():
            if isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name)):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
                arg = node.args[0] if node.args else next(
                    (k.value for k in node.keywords if k.arg in ("pointer", "base")), None)
                if name in pointer_fns and arg is not None:
                    used |= {n.id for n in ast.walk(arg) if isinstance(n, ast.Name)}
        sources: dict = {}  # assigned name -> names its values come from
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
                for t in targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            sources.setdefault(n.id, set()).update(names)
        frontier = set(used)
        while frontier:
            frontier = set().union(*(sources.get(n, set()) for n in frontier)) - used
            used |= frontier
        params = set(self.params) - self.constexpr_params
        # only a parameter whose name reads as a pointer, or that is used bare, counts: offsets
        # (`x_ptr + offs`) reach the load too, and they are scalars
        return {p for p in params & used if p.endswith(("_ptr", "ptr", "_base")) or p in self._bare_pointers}

    def _unguarded_nodes(self):
        """The nodes of the kernel outside the branches of an `if` on constexprs (`if USE_FP8:`): what
        such a branch does depends on the constexprs of a launch, so its uses say nothing of the
        arguments (Triton types an argument by its value, not by its use; the compiled branch reports
        a non-pointer it dereferences at its line)."""
        static = set(self.constexpr_params)
        dynamic = set(self.params) - static  # and every name the kernel assigns, but `X: tl.constexpr = ...`
        for n in ast.walk(self.tree):
            if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name) and "constexpr" in ast.unparse(
                    n.annotation):
                static.add(n.target.id)
            elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                dynamic.add(n.id)
        dynamic -= static

        def is_static(test) -> bool:
            return not any(isinstance(n, ast.Call) or isinstance(n, ast.Name) and n.id in dynamic
                           for n in ast.walk(test))

        todo = [self.tree]
        while todo:
            node = todo.pop()
            yield node
            if isinstance(node, ast.If) and is_static(node.test):
                todo.append(node.test)
            else:
                todo.extend(ast.iter_child_nodes(node))

    @cached_property
    def _bare_pointers(self) -> set[str]:
        """Parameters passed alone (not inside an expression) as the pointer of a load or store."""
        out = set()
        for node in self._unguarded_nodes():
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args \
                    and node.func.attr in ("load", "store") and isinstance(node.args[0], ast.Name):
                out.add(node.args[0].id)
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
