"""The shared rule table: guarded rules ahead of the plain one, dialect rules, walk hooks, coverage."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from xblock.backends.common.rules import LoweringError, RuleTable


def _op(name: str, results: int = 1):
    return SimpleNamespace(name=name, results=[object()] * results)


def test_guarded_rules_come_first_in_registration_order():
    t = RuleTable("test")

    @t.rule("scf.for")
    def _lower_for(ctx, op):
        pass

    @t.rule("scf.for", when=lambda ctx, op: ctx == "a")
    def _lower_for_a(ctx, op):
        pass

    @t.rule("scf.for", when=lambda ctx, op: ctx in ("a", "b"))
    def _lower_for_b(ctx, op):
        pass

    op = _op("scf.for")
    assert t.rule_for("a", op) is _lower_for_a
    assert t.rule_for("b", op) is _lower_for_b
    assert t.rule_for("c", op) is _lower_for
    assert t.coverage() == ({"scf.for"}, {})


def test_a_guarded_rule_alone_covers_its_op_only_where_it_accepts():
    t = RuleTable("test")

    @t.rule("xb.addptr", when=lambda ctx, op: ctx)
    def _lower_addptr_data(ctx, op):
        pass

    assert t.rule_for(True, _op("xb.addptr")) is _lower_addptr_data
    assert t.rule_for(False, _op("xb.addptr")) is None
    assert t.coverage()[0] == {"xb.addptr"}


def test_dialect_rules_and_refused_ops():
    t = RuleTable("test")
    t.unsupported["xb.print"] = "no printing here"

    @t.dialect_rule("arith")
    def _lower_elementwise(ctx, op):
        pass

    assert t.rule_for(None, _op("arith.addf")) is _lower_elementwise
    assert t.rule_for(None, _op("arith.addui_extended", 2), one_result_only=True) is None
    assert t.rule_for(None, _op("xb.print", 0)) is None
    with pytest.raises(LoweringError, match="no printing here"):
        t.apply(None, _op("xb.print", 0))


def test_walk_hooks_are_kept_in_order():
    t = RuleTable("test")
    first, second, after = (lambda ctx: None), (lambda ctx: None), (lambda ctx: None)
    assert t.before_walk(first) is first and t.before_walk(second) is second and t.after_walk(after) is after
    assert t.before_walk_hooks == [first, second]
    assert t.after_walk_hooks == [after]
