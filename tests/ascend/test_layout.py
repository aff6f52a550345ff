"""The ascend backend's layering: rule modules stand on helpers, and only `pipeline` imports them.

A rule module is one that registers rules (`@rule(...)` or `@before_walk`). If one imported another,
or the driver imported one, the modules would grow back into the circle of function-local imports
this layout replaced.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parents[2] / "xblock" / "backends" / "ascend"


def _tree(name: str) -> ast.Module:
    return ast.parse((HERE / f"{name}.py").read_text())


def _modules() -> list:
    return sorted(p.stem for p in HERE.glob("*.py"))


def _registers_rules(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in node.decorator_list:
                target = d.func if isinstance(d, ast.Call) else d
                if isinstance(target, ast.Name) and target.id in ("rule", "before_walk"):
                    return True
    return False


def _local_imports(tree: ast.Module) -> set:
    """The sibling modules a module imports (`from .x import ...`, `from . import x`), anywhere in it."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            out |= {node.module} if node.module else {a.name for a in node.names}
    return out


RULE_MODULES = sorted(m for m in _modules() if _registers_rules(_tree(m)))


def test_the_rule_modules_are_found():
    assert {"lowering", "load", "store", "atomics", "layout", "reduce", "control", "debug", "cube"} <= \
        set(RULE_MODULES)


@pytest.mark.parametrize("name", [m for m in _modules() if m not in ("pipeline", "__init__")])
def test_only_pipeline_imports_rule_modules(name):
    imported = _local_imports(_tree(name)) & set(RULE_MODULES)
    assert imported == set(), f"{name}.py imports the rule modules {sorted(imported)}"


def test_pipeline_registers_every_rule_module():
    assert set(RULE_MODULES) <= _local_imports(_tree("pipeline"))

