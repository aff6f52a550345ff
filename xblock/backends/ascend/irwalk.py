"""Walks up the IR that cannot take the process down: blocks and ancestors of ops.

MLIR's Python bindings assert (and so abort the interpreter, whatever Python code is around) when
asked for the block of an operation they hold as attached but that has no parent: the module, at
the top of every walk up from an op through `.parent`. Every walk over blocks and ancestors in the
ascend backend goes through these helpers, which stop below the module.
"""

from __future__ import annotations

from mlir import ir


def as_op(x) -> ir.Operation:
    """The `ir.Operation` of an op view (`arith.AddIOp`, an op's `owner`) or of an operation."""
    return x.operation if hasattr(x, "operation") else x


def block_of(op) -> ir.Block | None:
    """The block holding `op`, or None for an op without a parent (the module)."""
    op = as_op(op)
    return None if op.parent is None else op.block


def ancestor_in(block: ir.Block, op) -> ir.Operation | None:
    """The op of `block` that is `op` or encloses it, or None when `op` is not inside `block`."""
    op = as_op(op)
    while op.parent is not None:
        if op.block == block:
            return op
        op = as_op(op.parent)
    return None
