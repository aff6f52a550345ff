"""The ascend lowering's rule table: one rule per op name, filled by `@rule(...)` in the rule modules.

`lowering.py` and `memory.py` register the vector rules, `cube.py` the Cube unit's. A rule may be
guarded (`@rule("scf.for", when=pred)`): it then takes the ops `pred(L, op)` accepts, ahead of
the plain rule for that name (the `scf.for` around a Cube `dot` versus any other loop). A module
can also register a hook that runs once before the walk (`@before_walk`), e.g. to claim the ops
that another op's rule will lower itself (`Lowering.absorb`).
"""

from __future__ import annotations

from typing import Callable

Rule = Callable  # (L: driver.Lowering, op) -> None

RULES: dict[str, Rule] = {}
GUARDED: dict[str, list] = {}  # op name -> [(when(L, op) -> bool, rule)], tried in registration order
BEFORE_WALK: list = []


def rule(*names: str, when: Callable | None = None):
    """Register the decorated function as the lowering of the ops `names` (only those `when` accepts)."""

    def deco(fn):
        for n in names:
            if when is None:
                RULES[n] = fn
            else:
                GUARDED.setdefault(n, []).append((when, fn))
        return fn

    return deco


def rule_for(L, op) -> Rule | None:
    """The rule that lowers `op`: the first guarded rule that accepts it, else the plain one."""
    for when, fn in GUARDED.get(op.name, ()):
        if when(L, op):
            return fn
    return RULES.get(op.name)


def before_walk(fn):
    """Register fn(L), called once per lowering after the kernel skeleton is built, before the walk."""
    BEFORE_WALK.append(fn)
    return fn
