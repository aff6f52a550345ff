"""The layering holds: the layer order of docs/DESIGN.md ("Layers and data flow"), no import circles,
no target names outside backends, every op covered per target."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from xblock.backends import get_backend, targets
from xblock.dialects.xb import ALL_OPS

ROOT = Path(__file__).resolve().parents[2] / "xblock"
# modules that are a target's own code: xblock/backends/* and the simulator's backend module
BACKEND_FILES = ("backends",)
SIM_BACKEND = ROOT / "sim" / "backend.py"


def _modules() -> dict:
    mods = {}
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT.parent).with_suffix("")
        name = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        mods[name] = path
    return mods


def _imports(name: str, path: Path, mods: dict) -> set:
    """Modules of xblock that `name` imports, anywhere in the file (also inside functions)."""
    pkg = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = pkg
            for _ in range(max(node.level - 1, 0)):
                base = base.rsplit(".", 1)[0]
            if node.level:
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module or ""
            for alias in node.names:
                if f"{base}.{alias.name}" in mods:
                    out.add(f"{base}.{alias.name}")
                elif base in mods:
                    out.add(base)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name in mods}
    out.discard(name)
    return out


def _cycles(graph: dict) -> list:
    """Strongly connected components of more than one module (Tarjan)."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_import_circles():
    mods = _modules()
    graph = {name: _imports(name, path, mods) for name, path in mods.items()}
    assert _cycles(graph) == []


# docs/DESIGN.md, "Layers and data flow": a module imports only modules of its own layer or of a lower
# number, anywhere in the file (imports inside functions too). Keys are packages or modules under xblock/;
# "xblock" is the package's __init__ (the glue that makes `xblock.jit`, `xblock.profile`, ...).
LAYERS = {
    1: ("language", "errors", "host", "_version", "progress", "testing"),
    2: ("dialects",),
    3: ("frontend", "passes"),
    4: ("backends", "sim"),
    5: ("runtime",),
    6: ("numdiff", "exporting", "demo", "cli", "__main__", "xblock"),
}
# imports that go up on purpose, each with its reason: none today (backends reach the runtime through
# backends/common/services.py, which the runtime fills when it is imported)
UPWARD_EXCEPTIONS: dict = {}


def _layer(module: str) -> int | None:
    parts = module.split(".")
    for layer, names in LAYERS.items():
        if module == "xblock" and "xblock" in names or len(parts) > 1 and parts[1] in names:
            return layer
    return None


def _upward(graph: dict) -> list:
    """'importer (layer) -> imported (layer)' of every import of a higher layer not in UPWARD_EXCEPTIONS."""
    return [f"{name} ({_layer(name)}) -> {dep} ({_layer(dep)})" for name in sorted(graph) for dep in sorted(graph[name])
            if _layer(dep) > _layer(name) and (name, dep) not in UPWARD_EXCEPTIONS]


def test_every_module_has_a_layer():
    """A new top-level module or package gets its place in LAYERS (and in docs/DESIGN.md's list)."""
    assert [m for m in _modules() if _layer(m) is None] == []


def test_layers_import_only_their_own_or_lower_layers():
    mods = _modules()
    graph = {name: _imports(name, path, mods) for name, path in mods.items()}
    assert _upward(graph) == []


def test_an_import_of_the_runtime_inside_a_backend_function_is_caught(tmp_path):
    """The check reads imports in function bodies too: a backend module that imports the runtime's
    `jit` where it calls it fails."""
    path = tmp_path / "late.py"
    path.write_text("def precompile(kernel):\n    from ...runtime.jit import jit\n\n    return jit(kernel)\n")
    mods = _modules()
    name = "xblock.backends.cuda.late"
    graph = {name: _imports(name, path, {**mods, name: path})}
    assert _upward(graph) == [f"{name} (4) -> xblock.runtime.jit (5)"]


def test_no_target_name_outside_backends():
    """Code outside backends/ asks the registry (REFERENCE, claims_arguments, option_names, ...)."""
    names = set(targets())
    found = []
    for path in ROOT.rglob("*.py"):
        if "backends" in path.relative_to(ROOT).parts or path == SIM_BACKEND:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and node.value in names:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    assert found == []


@pytest.mark.parametrize("target", targets())
def test_every_xb_op_has_a_rule_or_a_reason(target):
    covered, unsupported = get_backend(target).coverage()
    missing = [op for op in ALL_OPS if op not in covered and op not in unsupported]
    assert missing == [], f"{target}: xb ops with neither a rule nor an UNSUPPORTED reason"
    assert not set(covered) & set(unsupported), "an op is both lowered and refused"
    for op, reason in unsupported.items():
        assert isinstance(reason, str) and len(reason) > 10, (op, reason)


def test_backends_declare_their_options_and_device():
    for target in targets():
        backend = get_backend(target)
        assert {"num_warps", "num_stages"} <= backend.option_names
        assert isinstance(backend.device_name(), str) and backend.device_name()
