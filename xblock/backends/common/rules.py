"""The rule table every backend's lowering stands on: `rule`/`dialect_rule` decorators, the ops a
target refuses (`UNSUPPORTED`), the coverage a test checks, and the error a rule raises."""

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
    """Rules keyed by op name, rules for whole dialects (their one-result ops without a rule of
    their own), and {op: reason} for the xb ops the target refuses (the reason is the user's error)."""

    def __init__(self, target: str):
        self.target = target
        self.rules: dict[str, Rule] = {}
        self.dialect_rules: dict[str, Rule] = {}
        self.unsupported: dict[str, str] = {}

    def rule(self, *names: str):
        """Register the decorated function as the rule of the ops `names`."""

        def register(fn: Rule) -> Rule:
            for n in names:
                self.rules[n] = fn
            return fn

        return register

    def dialect_rule(self, *dialects: str):
        """Register the decorated function as the rule of the ops of `dialects` without a rule."""

        def register(fn: Rule) -> Rule:
            for d in dialects:
                self.dialect_rules[d] = fn
            return fn

        return register

    def coverage(self) -> tuple[set, dict]:
        """(the ops with a rule, the refused ops and why); full once the rule modules are imported."""
        return set(self.rules), dict(self.unsupported)

    def lookup(self, op, one_result_only: bool = False) -> Rule:
        """The rule of `op`; a refused op raises its reason, an unknown one the missing-rule error."""
        name = op.name
        fn = self.rules.get(name)
        if fn is None and (not one_result_only or len(op.results) == 1):
            fn = self.dialect_rules.get(name.split(".")[0])
        if fn is not None:
            return fn
        if name in self.unsupported:
            raise LoweringError(self.unsupported[name], op)
        raise missing_rule(op, self.target)

    def apply(self, ctx, op, one_result_only: bool = False) -> None:
        """Run `op`'s rule; an error the rule raises without an op is placed at `op`."""
        fn = self.lookup(op, one_result_only)
        try:
            fn(ctx, op)
        except LoweringError as err:
            if err.op is None:
                err.op = op
            raise
