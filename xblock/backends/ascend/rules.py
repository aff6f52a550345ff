"""The ascend lowering's rule table: one rule per op name, filled by `@rule(...)` in the rule modules.

A rule is `fn(ctx, op)`, `ctx` the `driver.Lowering` of the kernel. A rule may be guarded
(`@rule("scf.for", when=pred)`): it then takes the ops `pred(ctx, op)` accepts, ahead of the
plain rule for that name (the `scf.for` around a Cube `dot` versus any other loop). A module can
also register a hook that runs once before the walk (`@before_walk`), e.g. to claim the ops that
another op's rule will lower itself (`ctx.absorb`). `UNSUPPORTED` names the xb ops ascend
refuses, with the reason users see. The table is full once `pipeline` has imported the rule modules.
"""

from __future__ import annotations

from typing import Callable

TARGET = "ascend"
Rule = Callable  # (ctx: driver.Lowering, op) -> None

RULES: dict[str, Rule] = {}
GUARDED: dict[str, list] = {}  # op name -> [(when(ctx, op) -> bool, rule)], tried in registration order
BEFORE_WALK: list = []

# xb op -> why ascend refuses it: the error users get at the op's line
UNSUPPORTED: dict[str, str] = {
    "xb.atomic_cas": "xb.atomic_cas (atomic_cas) is not supported: the AscendC reference documents only the "
                     "atomic-add copy path (SetAtomicAdd), no compare-and-swap",
    "xb.print": "device_print is not supported on ascend (the AscendC reference xblock follows documents no "
                "printf/DumpTensor); run the kernel with target=\"sim\" to print",
}


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


def rule_for(ctx, op) -> Rule | None:
    """The rule that lowers `op`: the first guarded rule that accepts it, else the plain one."""
    for when, fn in GUARDED.get(op.name, ()):
        if when(ctx, op):
            return fn
    return RULES.get(op.name)


def before_walk(fn):
    """Register fn(ctx), called once per lowering after the kernel skeleton is built, before the walk."""
    BEFORE_WALK.append(fn)
    return fn


def coverage() -> tuple[set, dict]:
    """(the op names with a rule, UNSUPPORTED); complete once `pipeline` has imported the rule modules."""
    return set(RULES) | set(GUARDED), dict(UNSUPPORTED)
