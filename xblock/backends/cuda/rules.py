"""The cuda lowering's rule table, its context, and the one walk that applies the rules.

`RULES[name](ctx, op)` prints the TTIR of one op; `lowering` fills the table with `@rule(...)`,
and `@dialect_rule("arith", "math", "scf")` covers the ops of the upstream dialects that Triton
takes as they are. `lower_op` applies the rules; a rule raises `ctx.error("...")`, and
`lower_kernel` puts that error at the op's source line with the "cuda: " prefix. `UNSUPPORTED`
lists the xb ops the cuda target refuses, with the reason users then see.
"""

from __future__ import annotations

from typing import Callable

from mlir import ir

from ...dialects.locations import error_at
from ..common.rules import LoweringError, RuleTable
from .emit import TTIRWriter, loc

TARGET = "cuda"
TABLE = RuleTable(TARGET)
RULES, DIALECT_RULES, UNSUPPORTED = TABLE.rules, TABLE.dialect_rules, TABLE.unsupported  # (every xb op has a rule)
rule, dialect_rule, coverage = TABLE.rule, TABLE.dialect_rule, TABLE.coverage


class LoweringContext:
    """State of one lowering: the writer, the options and the terminator of the enclosing region."""

    def __init__(self, writer: TTIRWriter, debug: bool = False, arch: int = 90):
        self.w = writer
        self.debug = debug
        self.arch = arch  # the compute capability compiled for (float8 types depend on it)
        self.yield_as = "scf.yield"  # what `gpu.yield` becomes in the combine region being printed
        self.host_args: dict = {}  # host descriptor base argument name -> its value (a `!tt.tensordesc`)

    def refs(self, values) -> list[str]:
        return [self.w.ref(v) for v in values]

    def types(self, values) -> list[str]:
        return [self.w.type(v.type) for v in values]

    def emit(self, op, name: str, attrs=None, operands=None, regions=(), result_types=None) -> list[str]:
        """Print `name` with `op`'s operands, result types and location; bind `op`'s results."""
        operands = list(op.operands) if operands is None else operands
        rtypes = self.types(op.results) if result_types is None else result_types
        refs = self.w.op(name, self.refs(operands), self.types(operands), rtypes, attrs, loc(op), regions)
        for v, r in zip(op.results, refs):
            self.w.bind(v, r)
        return refs

    def lower_block(self, block, arg_types=None, arg_locs="") -> None:
        types = [self.w.type(a.type) for a in block.arguments] if arg_types is None else arg_types
        self.w.block(types, lambda _: [lower_op(self, o) for o in block.operations], list(block.arguments),
                     arg_locs)

    def region(self, region) -> Callable:
        """A callable printing `region` (inside the rule of the op that holds it)."""

        def body():
            blocks = list(region.blocks)
            if len(blocks) > 1:
                raise self.error("regions of more than one block are not supported")
            for b in blocks:
                self.lower_block(b)

        return body

    def error(self, message: str) -> LoweringError:
        """The error a rule raises (`raise ctx.error("...")`): the walk places it at the op."""
        return LoweringError(message)


def lower_kernel(ctx: LoweringContext, kernel) -> None:
    """Lower the kernel's `func.func`; a rule's error becomes a CompilationError at its op."""
    try:
        lower_op(ctx, kernel)
    except LoweringError as err:
        raise error_at(err.op, str(err), TARGET) from None


def lower_op(ctx: LoweringContext, op) -> None:
    """Apply `op`'s rule (after checking its blocks' shapes); a rule's error is placed at `op`."""
    op = op.operation
    for r in op.results:
        _check_shape(op, r.type)
        _check_elem(ctx, op, r.type)
    TABLE.apply(ctx, op)


def _check_shape(op, t) -> None:
    if isinstance(t, ir.RankedTensorType):
        shape = t.shape
        if any(d & (d - 1) for d in shape):
            raise LoweringError(f"Triton needs block dimensions that are powers of 2, got a block of shape "
                                f"{list(shape)}", op)


# float8 types Triton's NVIDIA backend lacks: xb name -> Triton's
AMD_FP8 = {"f8E4M3FNUZ": "fp8e4b8", "f8E5M2FNUZ": "fp8e5b16"}


def _check_elem(ctx: LoweringContext, op, t) -> None:
    """An error for a value of a float8 type that Triton's NVIDIA backend cannot hold (for `ctx.arch`)."""
    et = elem_str(t)
    et = et[len("!xb.ptr<"):-1] if et.startswith("!xb.ptr<") else et
    if et in AMD_FP8:
        raise LoweringError(f"{AMD_FP8[et]} ({et}) is not supported by Triton's NVIDIA backend, only on AMD "
                            "GPUs (the fp8 dtypes it supports are fp8e4b15, fp8e4nv, fp8e5)", op)
    if et == "f8E4M3FN" and ctx.arch < 89:
        raise LoweringError(f"fp8e4nv (f8E4M3FN) needs compute capability 8.9 or newer; compiling for "
                            f"sm_{ctx.arch}", op)


# ----------------------------------------------------------------------------------- reading ops
def elem_str(t) -> str:
    t = t.element_type if isinstance(t, ir.RankedTensorType) else t
    return str(t)


def is_float(t) -> bool:
    return elem_str(t) in ("f16", "bf16", "f32", "f64")


def attr(op, name: str):
    a = op.attributes[name]
    return a.value if hasattr(a, "value") else a
