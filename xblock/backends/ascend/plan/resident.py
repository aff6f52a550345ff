"""Loads every program makes alike (weights, biases): hoisted before the grid loop, resident in UB.

A load at the top level of the kernel body whose pointer, mask and `other` depend on neither the
program id nor memory (only on kernel arguments, which are tiling fields, and constants) reads the
same bytes in every iteration of the grid loop `for (pid = GetBlockIdx(); pid < numPrograms; ...)`.
It is lowered once per core instead, before that loop, under `if (GetBlockIdx() < numPrograms)` (a
core without programs reads nothing), into a scratch tile that `_finish` places after the scratch
peak and that is never freed (as `ctx.iota`'s tiles): an MTE2 -> V flag after the copy, then every
iteration reads it on the vector unit. Only plain row copies (DataCopy/DataCopyPad) are hoisted, of
arguments the kernel never writes (`metadata["written_args"]`), in kernels without dots (the Cube
path has its own loads). When the resident tiles do not fit in UB next to the rest of the plan,
`driver.Lowering` lowers the kernel again without hoisting (`NoRoom`).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from ....dialects.locations import kernel_of
from ....passes import written_args
from ..values import SIZE, Splat, Tile, elem_of
from ..vector.access import needs_scalar_loop, segments

# ops whose value differs between programs or comes from memory: a load depending on one stays in the loop
_VARYING = ("xb.program_id", "xb.num_programs", "xb.load", "xb.descriptor_load", "xb.int_to_ptr")


class NoRoom(Exception):
    """The resident tiles (`what` "resident") or the row caches ("cache", row_cache.py) do not fit in
    UB next to the rest of the plan: lower without them."""

    def __init__(self, what: str = "resident"):
        super().__init__(what)
        self.what = what


def candidates(ctx) -> list:
    """[(load, the top-level ops its operands are computed by, in order)] of the loads to hoist."""
    kernel = kernel_of(ctx.xb_module)
    entry = kernel.regions[0].blocks[0]
    written = ctx.meta.get("written_args")
    if written is None or _has_dot(kernel):
        return []
    order = {o.operation: i for i, o in enumerate(entry.operations)}
    found = []
    for op in entry.operations:
        if op.name != "xb.load" or op.operation in ctx.absorbed or not _plain(ctx, op):
            continue
        roots = written_args.roots(op.operands[0], entry)
        chain = _chain(op, entry)
        if roots is None or roots & set(written) or chain is None:
            continue
        found.append((op, sorted(chain, key=order.__getitem__)))
    return found


def _plain(ctx, op) -> bool:
    """A used, non-volatile block load that the load rule copies as rows (DataCopy/DataCopyPad)."""
    r = op.result
    if not str(r.type).startswith("tensor<") or not any(True for _ in r.uses):
        return False
    if "volatile" in op.attributes and ir.BoolAttr(op.attributes["volatile"]).value:
        return False
    seg = segments(op)
    acc = ctx.ps.tile_access(op.operands[0], op.operands[1] if seg[1] else None)
    return not needs_scalar_loop(ctx, acc, SIZE.get(elem_of(r.type), 0) or 1)


def _chain(op, entry: ir.Block) -> set | None:
    """The ops of `entry` that compute `op`'s operands, or None when one of them varies between
    programs, reads memory, or is a region op (a loop's or an `if`'s result)."""
    ops: set = set()
    stack = list(op.operands)
    while stack:
        v = stack.pop()
        owner = v.owner
        if isinstance(owner, ir.Block):
            if owner != entry:
                return None
            continue  # a kernel argument
        o = owner.operation if hasattr(owner, "operation") else owner
        if o in ops:
            continue
        if o.name in _VARYING or o.name.startswith("xb.atomic") or len(o.regions) or o.block != entry:
            return None
        ops.add(o)
        stack.extend(o.operands)
    return ops


def _has_dot(kernel) -> bool:
    found = []

    def visit(o):
        if o.name == "xb.dot":
            found.append(o)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    kernel.operation.walk(visit)
    return bool(found)


def hoist(ctx) -> None:
    """Lower the loads `candidates` finds before the grid loop, under `if (GetBlockIdx() < numPrograms)`;
    the walk then skips them (`ctx.absorbed`) and every use reads the resident tile."""
    found = candidates(ctx)
    if not found:
        return
    grid = ctx.grid.operation
    with ctx.before_grid:
        guard = scf.IfOp(arith.CmpIOp(arith.CmpIPredicate.slt, grid.operands[0], grid.operands[1]).result, [],
                         has_else=False)
        with ir.InsertionPoint(guard.then_block):
            end = scf.YieldOp([])
    # declarations (the tiles, queues, iota tables) go before the `if`, where the loop sees them
    ctx.resident_at = ir.InsertionPoint(guard.operation)
    before_grid, ctx.before_grid = ctx.before_grid, ctx.resident_at
    lines, args = [], set()
    kernel = kernel_of(ctx.xb_module)
    names = [ir.StringAttr(a).value for a in ir.ArrayAttr(kernel.attributes["xb.arg_names"])]
    try:
        with ir.InsertionPoint(end):
            for op, chain in found:
                roots = written_args.roots(op.operands[0], kernel.regions[0].blocks[0]) or ()
                if _hoist_one(ctx, op, chain):
                    lines.append(ctx.loc[1])
                    args.update(names[i] for i in roots)
    finally:
        ctx.resident_at, ctx.before_grid = None, before_grid
    if lines:
        ctx.meta["resident_loads"] = lines
        # read by every core alike: `options.launch_blocks` weighs them against the launch's bytes
        ctx.meta["per_core_args"] = sorted(args | set(ctx.meta.get("per_core_args") or ()))
    else:
        guard.operation.erase()


def _hoist_one(ctx, op, chain: list) -> bool:
    """Lower `chain` and then `op` at the current insertion point; True when `op` now has a resident tile.
    The chain's values are forgotten afterwards: the walk lowers them again inside the loop."""
    seg = segments(op)
    ok = False
    try:
        for o in chain:
            with ctx.located(o):
                ctx.lower_op(o)
        other = op.operands[1 + seg[1]] if seg[2] else None
        if other is None or isinstance(ctx.vmap.get(other), Splat):  # a block `other` is a Select in the loop
            with ctx.located(op):
                ctx.lower_op(op)
            ok = isinstance(ctx.vmap.get(op.result), Tile) and ctx.vmap[op.result].offset == -1
    finally:
        for t in ctx.temps:
            ctx.release(t)
        ctx.temps = []
        for o in chain:
            for r in o.results:
                x = ctx.vmap.pop(r, None)
                if isinstance(x, Tile):
                    ctx.release(x)
    if ok:
        ctx.absorb([op])
    return ok


__all__ = ["NoRoom", "candidates", "hoist"]
