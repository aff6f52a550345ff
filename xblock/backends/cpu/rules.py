"""The cpu lowering's rule table, its context, and the one walk that applies the rules.

`RULES[name](ctx, op)` lowers one op; the rule modules fill it with `@rule("xb.load")`, and
`@dialect_rule("arith", "math")` covers the one-result ops of a dialect that have no rule of their
own (the elementwise ops). `lower_block` walks a block and applies them. A rule raises
`ctx.error("...")`; the walk puts that error at the op's source line with the "cpu: " prefix.
`UNSUPPORTED` lists the xb ops the cpu target refuses, with the reason users then see.
"""

from __future__ import annotations

from ...dialects.locations import error_at
from ..common.rules import LoweringError, RuleTable
from .values import Buffer, TVal, materialize

TARGET = "cpu"
TABLE = RuleTable(TARGET)
RULES, DIALECT_RULES, UNSUPPORTED = TABLE.rules, TABLE.dialect_rules, TABLE.unsupported  # (every xb op has a rule)
rule, dialect_rule, coverage = TABLE.rule, TABLE.dialect_rule, TABLE.coverage

WRITES = ("xb.store", "xb.atomic_rmw", "xb.atomic_cas", "xb.print", "xb.assert")
PURE_REGIONS = ("xb.reduce", "xb.scan")
TERMINATORS = ("scf.yield", "scf.condition", "gpu.yield", "func.return")


class LoweringContext:
    """State of one kernel's lowering: the emitter, lowered values, uses and the axis info."""

    def __init__(self, func, info: dict, emitter):
        self.e = emitter
        self.info = info
        self.vals: dict = {}
        self.uses: dict = {}
        self.cross: set = set()
        self.pending: list = []  # fused loads not yet evaluated (memory.LoadVal)
        self.prints: list = []  # per xb.print: prefix and value types (for the launcher)
        self.asserts: list = []  # per xb.assert: message, file, line
        self.pids: list = []  # the program id and grid size, per axis (set by the caller)
        self.nprogs: list = []
        self.assert_ok = None  # after a top-level xb.assert: whether it held
        self.nargs = 0
        self._count_uses(func)

    def _count_uses(self, func) -> None:
        home: dict = {}
        counter = [0]

        def walk(block, bid):
            for a in block.arguments:
                home[a] = bid
            for op in block.operations:
                for v in op.operands:
                    self.uses[v] = self.uses.get(v, 0) + 1
                    if home.get(v, bid) != bid:
                        self.cross.add(v)
                for r in op.results:
                    home[r] = bid
                for region in op.regions:
                    for b in region.blocks:
                        counter[0] += 1
                        walk(b, counter[0])

        walk(func.regions[0].blocks[0], 0)

    def get(self, v):
        return self.vals[v]

    def define(self, v, lowered) -> None:
        """Bind an xb value; a costly lazy block used more than once (or in a loop) is stored."""
        if isinstance(lowered, TVal) and not isinstance(lowered, Buffer):
            shared = self.uses.get(v, 0) > 1 or v in self.cross
            if (shared and lowered.cost > 4) or lowered.cost > 40:
                if hasattr(lowered, "flush"):
                    lowered.flush(self.e)
                else:
                    lowered = materialize(self.e, lowered)
        self.vals[v] = lowered

    def error(self, message: str) -> LoweringError:
        """The error a rule raises (`raise ctx.error("...")`): the walk places it at the op."""
        return LoweringError(message)


def lower_body(ctx: LoweringContext, block) -> None:
    """Lower the kernel's top-level block; a rule's error becomes a CompilationError at its op."""
    try:
        lower_block(ctx, block, top=True)
    except LoweringError as err:
        raise error_at(err.op, str(err), TARGET) from None


def lower_block(ctx: LoweringContext, block, skip_terminator=True, top=False):
    """Lower every op of `block`; returns the terminator (not lowered) when skipped.

    In the kernel's top-level block (`top`), the ops after a device_assert run only when it held.
    """
    ops = list(block.operations)
    term = None
    if skip_terminator and ops and ops[-1].operation.name in TERMINATORS:
        term = ops.pop()
    guards = 0
    for k, op in enumerate(ops):
        lower_op(ctx, op.operation)
        if top and op.operation.name == "xb.assert" and k + 1 < len(ops) and ctx.assert_ok is not None:
            ctx.e.line(f"scf.if {ctx.assert_ok} {{")
            ctx.e.depth += 1
            guards += 1
    for _ in range(guards):
        ctx.e.depth -= 1
        ctx.e.line("}")
    return term


def lower_op(ctx: LoweringContext, op) -> None:
    """Apply `op`'s rule, after evaluating the pending loads where `op` may write memory."""
    if op.name in WRITES or (op.regions and op.name not in PURE_REGIONS):
        _flush_loads(ctx, op)
    TABLE.apply(ctx, op, one_result_only=True)


def _flush_loads(ctx: LoweringContext, op) -> None:
    """Before an op that writes memory (or holds regions), evaluate the pending fused loads.

    A store keeps the loads it reads lane for lane fused into its own chunk loop (each chunk
    is read before it is written); every other pending load is stored to a buffer first.
    """
    keep = set()
    if op.name == "xb.store":
        for v in op.operands:
            if v in ctx.vals and isinstance(ctx.vals[v], TVal):
                keep |= ctx.vals[v].fused_loads()
    for lv in ctx.pending:
        if id(lv) not in keep:
            lv.flush(ctx.e)
    ctx.pending = []
