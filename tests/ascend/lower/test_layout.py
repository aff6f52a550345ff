"""The ascend backend's layering: rule modules stand on helpers, and only `pipeline` imports them.

A rule module is one that registers rules (`@rule(...)` or `@before_walk`); they all live in
`lower/ops/`. If one imported another, or the driver imported one, the modules would grow back into
the circle of function-local imports this layout replaced. Every stage folder says in one line what
it holds.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parents[3] / "xblock" / "backends" / "ascend"
STAGES = ("plan", "lower", "lower/ops", "vector", "cube", "emit", "model", "export")


def _name(path: Path) -> str:
    """`lower.ops.load` for lower/ops/load.py; `cube` for cube/__init__.py."""
    rel = path.relative_to(HERE).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts) or "__init__"


def _modules() -> dict:
    return {_name(p): p for p in sorted(HERE.rglob("*.py"))}


def _tree(name: str) -> ast.Module:
    return ast.parse(_modules()[name].read_text())


def _registers_rules(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in node.decorator_list:
                target = d.func if isinstance(d, ast.Call) else d
                if isinstance(target, ast.Name) and target.id in ("rule", "before_walk", "after_walk"):
                    return True
    return False


def _backend_imports(name: str) -> set:
    """The backend's modules that `name` imports (relative imports), anywhere in it."""
    path = _modules()[name]
    pkg = name.split(".") if path.name == "__init__.py" and name != "__init__" else name.split(".")[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom) or not node.level:
            continue
        if node.level - 1 > len(pkg):
            continue  # above the backend
        base = pkg[:len(pkg) - (node.level - 1)] + (node.module.split(".") if node.module else [])
        for a in node.names:
            out.add(".".join(base + [a.name]) if ".".join(base + [a.name]) in _modules() else ".".join(base))
    return out


RULE_MODULES = sorted(m for m in _modules() if _registers_rules(_tree(m)))


def test_the_rule_modules_are_found_and_live_in_lower_ops():
    assert {"lower.ops.elementwise", "lower.ops.load", "lower.ops.store", "lower.ops.atomics", "lower.ops.layout",
            "lower.ops.reduce", "lower.ops.control", "lower.ops.debug", "lower.ops.dot"} <= set(RULE_MODULES)
    assert [m for m in RULE_MODULES if not m.startswith("lower.ops.")] == []


@pytest.mark.parametrize("name", [m for m in _modules() if m not in ("pipeline", "__init__")])
def test_only_pipeline_imports_rule_modules(name):
    imported = _backend_imports(name) & set(RULE_MODULES)
    assert imported == set(), f"{name} imports the rule modules {sorted(imported)}"


def test_pipeline_registers_every_rule_module():
    assert set(RULE_MODULES) <= _backend_imports("pipeline")


@pytest.mark.parametrize("stage", STAGES)
def test_every_stage_folder_says_what_it_holds(stage):
    doc = ast.get_docstring(ast.parse((HERE / stage / "__init__.py").read_text()))
    assert doc and len(doc.splitlines()) == 1, f"{stage}/__init__.py needs a one-line docstring"
