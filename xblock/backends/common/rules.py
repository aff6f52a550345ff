"""The rule table every backend's lowering stands on: `rule`/`dialect_rule` decorators, the ops a
target refuses (`UNSUPPORTED`), the coverage a test checks, and the error a rule raises.

A rule may be guarded (`@rule("scf.for", when=pred)`): it then takes the ops `pred(ctx, op)`
accepts, ahead of the plain rule of that name. Walk hooks (`@before_walk`, `@after_walk`) are
`fn(ctx)`, called once per lowering by the backends whose walk runs them (ascend)."""

from __future__ import annotations

from typing import Callable

from ...dialects.locations import missing_rule

Rule = Callable  # (ctx, op: ir.Operation) -> None


class LoweringError(Exception):
    """What a rule cannot lower; the walk sets `op` to the op being lowered."""

    def __init__(self, message: str, op=None):
        super().__init__(message)
        self.op = op


class RuleTable:
    """Rules keyed by op name, guarded rules tried before them, rules for whole dialects (their
    one-result ops without a rule of their own), {op: reason} for the xb ops the target refuses (the
    reason is the user's error), and the hooks run once per lowering before and after the walk."""

    def __init__(self, target: str):
        self.target = target
        self.rules: dict[str, Rule] = {}
        self.guarded: dict[str, list] = {}  # op name -> [(when(ctx, op) -> bool, rule)], in registration order
        self.dialect_rules: dict[str, Rule] = {}
        self.unsupported: dict[str, str] = {}
        self.before_walk_hooks: list[Callable] = []  # fn(ctx), once per lowering before the walk
        self.after_walk_hooks: list[Callable] = []  # fn(ctx), once per lowering after the walk

    def rule(self, *names: str, when: Callable | None = None):
        """Register the decorated function as the rule of the ops `names` (only of those
        `when(ctx, op)` accepts, ahead of the plain rule, when `when` is given)."""

        def register(fn: Rule) -> Rule:
            for n in names:
                if when is None:
                    self.rules[n] = fn
                else:
                    self.guarded.setdefault(n, []).append((when, fn))
            return fn

        return register

    def dialect_rule(self, *dialects: str):
        """Register the decorated function as the rule of the ops of `dialects` without a rule."""

        def register(fn: Rule) -> Rule:
            for d in dialects:
                self.dialect_rules[d] = fn
            return fn

        return register

    def before_walk(self, fn: Callable) -> Callable:
        """Register fn(ctx), called once per lowering before the walk (after the kernel skeleton)."""
        self.before_walk_hooks.append(fn)
        return fn

    def after_walk(self, fn: Callable) -> Callable:
        """Register fn(ctx), called once per lowering after the walk."""
        self.after_walk_hooks.append(fn)
        return fn

    def coverage(self) -> tuple[set, dict]:
        """(the ops with a rule, the refused ops and why); full once the rule modules are imported. An op
        with only guarded rules and a reason is lowered in the forms its guards accept and refused with
        the reason in any other (ascend's `xb.ptr_to_int`: a null test only): it counts as refused."""
        guarded = {n for n in self.guarded if n not in self.unsupported}
        return set(self.rules) | guarded, dict(self.unsupported)

    def rule_for(self, ctx, op, one_result_only: bool = False) -> Rule | None:
        """The rule that lowers `op`, or None: the first guarded rule that accepts it, else the rule
        of its name, else its dialect's (with `one_result_only`, only for an op of one result)."""
        name = op.name
        for when, fn in self.guarded.get(name, ()):
            if when(ctx, op):
                return fn
        fn = self.rules.get(name)
        if fn is None and (not one_result_only or len(op.results) == 1):
            fn = self.dialect_rules.get(name.split(".")[0])
        return fn

    def lookup(self, ctx, op, one_result_only: bool = False) -> Rule:
        """The rule of `op` (`rule_for`); a refused op raises its reason, an unknown one the
        missing-rule error."""
        fn = self.rule_for(ctx, op, one_result_only)
        if fn is not None:
            return fn
        if op.name in self.unsupported:
            raise LoweringError(self.unsupported[op.name], op)
        raise missing_rule(op, self.target)

    def apply(self, ctx, op, one_result_only: bool = False) -> None:
        """Run `op`'s rule; an error the rule raises without an op is placed at `op`."""
        fn = self.lookup(ctx, op, one_result_only)
        try:
            fn(ctx, op)
        except LoweringError as err:
            if err.op is None:
                err.op = op
            raise
