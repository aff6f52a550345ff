"""Row-resident loops: a row that several loops of a program read is read from GM once, kept in UB.

layernorm reads its row in three loops `for off in range(0, N, BLOCK)`. Among the loops at the top
level of the kernel body, `plan` groups the loads (directly in a loop body, copied as rows, of an
argument the kernel never writes, not volatile, in a kernel without dots: as `resident.candidates`)
whose pointer, mask and `other` are the same expression of the loop's induction variable and of
values defined before the loops, in loops with the same bounds and a constant positive step:
iteration k of each of them reads the same bytes into the same tile. The first such load (in program
order) fills a UB buffer of `slots` tiles, slot k holding iteration k's tile as the load left it
(masked lanes already `other`, or 0 without one where a load of the group needs them: `group_of`);
the later ones copy slot k into their queue buffer (a UB -> UB DataCopy on the vector pipe) instead
of the DataCopyPad from GM, so nothing after the load changes.

A load whose expression does not depend on the program id either (a weight read in a loop) is the
same in every program of the core: its buffer is filled on the core's first program (`pid ==
GetBlockIdx()`) and read on the others.

The trip count is only known at run time, `slots` only once the UB plan is: iteration k = (iv - lb) /
step is cached when `iv - lb < slots * step` (the placeholder constant `place` sets), so a row longer
than the buffer keeps its first `slots` tiles in UB and reads the rest from GM in every loop. The
buffers go after the scratch peak, as the resident tiles, sized to the UB left over with the queues'
buffer counts unchanged; when fewer than MIN_SLOTS tiles fit, `driver.Lowering` lowers the kernel
again without them (`resident.NoRoom("cache")`). Every copy involved is on the vector pipe (UB -> UB
DataCopy) after the tile's DeQue, so the queue protocol and its MTE2 -> V event are unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir
from mlir.dialects import arith, scf

from ....dialects import ascendc as A
from ....dialects.locations import kernel_of
from ....passes import written_args
from ..values import SIZE, TILE_ALIGN, Tile, elem_of, round_up
from . import resident

MIN_SLOTS = 2  # fewer tiles than this in the buffer: not worth the code, lower without caching
SLOTS_ATTR = "xb.row_cache_slots"  # marks the placeholder constant `place` patches (kept apart by _cse)
_PURE = ("ascendc.ub_at", "ascendc.gm_at", "ascendc.reinterpret", "ascendc.get_with_offset",
         "ascendc.tiling_field", "ascendc.block_idx", "ascendc.block_num")
_COPIES = ("ascendc.data_copy", "ascendc.data_copy_pad")


@dataclass(eq=False)
class Group:
    """Loads reading the same tiles, iteration by iteration: one UB buffer of `slots` tiles."""

    per_core: bool  # the same in every program: filled on the core's first program
    name: str = "row"
    args: tuple = ()  # the names of the kernel arguments it reads
    tile_bytes: int = 0  # set when the filling load is lowered
    elem: str = ""
    buffer: ir.Value | None = None
    limits: list = field(default_factory=list)  # (placeholder constant op, step)


@dataclass(eq=False)
class Use:
    """One load of a group: `first` fills (and, per core, reuses on later programs); others reuse."""

    group: Group
    loop: ir.Operation
    first: bool


class _No(Exception):
    """The expression is not one `plan` can compare across loops."""


# ----- analysis ------------------------------------------------------------------------------
def plan(ctx) -> None:
    """ctx.ext.row_cache = {load op: Use} for the loads whose tiles are cached (see the module doc)."""
    ctx.ext.row_cache = uses = {}
    kernel = kernel_of(ctx.xb_module)
    entry = kernel.regions[0].blocks[0]
    written = ctx.meta.get("written_args")
    if written is None or resident._has_dot(kernel):
        return
    groups: dict = {}
    for loop in entry.operations:
        if loop.name != "scf.for" or loop.operation in ctx.absorbed:
            continue
        try:
            bounds = _bounds(loop, entry)
        except _No:
            continue
        body = loop.regions[0].blocks[0]
        for op in body.operations:
            if op.name != "xb.load" or op.operation in ctx.absorbed or elem_of(op.result.type) == "i1" or \
                    not resident._plain(ctx, op):
                continue
            roots = written_args.roots(op.operands[0], entry)
            if roots is None or roots & set(written):
                continue
            leaves: list = []
            try:
                key = (bounds[0], _attrs(op), str(op.result.type),
                       tuple(_canon(v, body, leaves) for v in op.operands))
            except _No:
                continue
            invariant = bounds[1] and all(_invariant(v, entry) for v in leaves)
            groups.setdefault(key, []).append((loop.operation, op, invariant, roots))
    names = [ir.StringAttr(a).value for a in ir.ArrayAttr(kernel.attributes["xb.arg_names"])]
    for members in groups.values():
        per_core, roots = members[0][2], members[0][3]
        if not per_core and len(members) < 2:
            continue  # read once per program: nothing to save
        g = Group(per_core, _stem(names[min(roots)]) if len(roots) == 1 else "row",
                  tuple(names[i] for i in sorted(roots)))
        for i, (loop, op, _, _) in enumerate(members):
            uses[op.operation] = Use(g, loop, i == 0)


def loop_weights(module: ir.Module, written) -> bool:
    """Whether a loop at the top level of the kernel reads, from an argument the kernel never writes,
    tiles that are the same in every program (a weight row read chunk by chunk, as layernorm's w and
    b): the row cache keeps them per core (`plan`'s per-core groups). The planner does not coarsen such
    a kernel (planner.Start.loop_weights). Before any lowering: no UB plan, no pointer analysis."""
    kernel = kernel_of(module)
    if written is None or resident._has_dot(kernel):
        return False
    entry = kernel.regions[0].blocks[0]
    for loop in entry.operations:
        if loop.name != "scf.for":
            continue
        try:
            lb_ub, same = _bounds(loop, entry)
        except _No:
            continue
        if not same:
            continue
        body = loop.regions[0].blocks[0]
        for op in body.operations:
            if op.name != "xb.load" or not str(op.result.type).startswith("tensor<") or \
                    elem_of(op.result.type) == "i1":
                continue
            roots = written_args.roots(op.operands[0], entry)
            if roots is None or roots & set(written):
                continue
            leaves: list = []
            try:
                for v in op.operands:
                    _canon(v, body, leaves)
            except _No:
                continue
            if all(_invariant(v, entry) for v in leaves):
                return True
    return False


def _stem(arg: str) -> str:
    """`x_ptr` -> `x` (the buffer is named `xCache`, as the GlobalTensor `xGm`)."""
    return arg[:-4] if arg.endswith("_ptr") and len(arg) > 4 else arg


def _bounds(loop, entry) -> tuple:
    """(a key of the loop's bounds, whether they are the same in every program); _No unless the step
    is a positive constant."""
    lb, ub, step = loop.operands[:3]
    s = step.owner
    if isinstance(s, ir.Block) or s.operation.name != "arith.constant" or \
            ir.IntegerAttr(s.operation.attributes["value"]).value <= 0:
        raise _No
    leaves: list = []
    key = tuple(_canon(v, None, leaves) for v in (lb, ub, step))
    return key, all(_invariant(v, entry) for v in leaves)


def _attrs(op) -> tuple:
    return tuple(sorted((k, str(op.attributes[k])) for k in op.attributes))


def _canon(v: ir.Value, body, leaves: list):
    """A hashable form of `v` that is equal for two loops' values exactly when they are the same
    function of the induction variable and of values defined before the loop (in `leaves`)."""
    owner = v.owner
    if isinstance(owner, ir.Block):
        if body is not None and owner == body and v.arg_number == 0:
            return ("iv",)
        if owner.owner is not None and owner.owner.operation.name == "func.func":
            return ("arg", v.arg_number)
        raise _No  # a loop-carried value
    o = owner.operation
    if o.name == "arith.constant":
        return ("const", str(o.attributes["value"]), str(v.type))
    if body is None or o.block != body:
        leaves.append(v)
        return ("outer", v)
    if o.name in resident._VARYING or o.name.startswith("xb.atomic") or len(o.regions) or len(o.results) != 1:
        raise _No
    return (o.name, _attrs(o), str(v.type), tuple(_canon(x, body, leaves) for x in o.operands))


def _invariant(v: ir.Value, entry) -> bool:
    """`v`, defined before the loops, is the same in every program (as resident.py's chains)."""
    owner = v.owner
    if isinstance(owner, ir.Block):
        return owner == entry
    o = owner.operation
    if o.name in resident._VARYING or o.name.startswith("xb.atomic") or len(o.regions) or o.block != entry:
        return False
    return resident._chain(o, entry) is not None


# ----- lowering ------------------------------------------------------------------------------
class Pending:
    """The row-cache side of one load's lowering: `begin`, `skip_copy` before the EnQue, `arrived`
    after the DeQue, `done` once the tile is complete."""

    def __init__(self, ctx, use: Use):
        self.use, self.g = use, use.group
        self.block = ir.InsertionPoint.current.block
        self.seen = {o.operation for o in self.block.operations}
        self.reuse = self.not_reuse = self.fill = None
        self.k = None

    def skip_copy(self, ctx) -> None:
        """Put the GM copy just emitted under `if (!reuse)` (nothing to do for the filling load of a row)."""
        self._conditions(ctx)
        if self.not_reuse is None:
            return
        copies = [o for o in self._new() if o.name in _COPIES]
        guard = scf.IfOp(self.not_reuse, [], has_else=False)
        with ir.InsertionPoint(guard.then_block):
            end = scf.YieldOp([])
        for o in copies:
            o.move_before(end)

    def arrived(self) -> None:
        """The tile's copy-in is done (EnQue/DeQue or the MTE2 -> V flag): what follows are its fills."""
        self.seen = {o.operation for o in self.block.operations}

    def done(self, ctx, tile: Tile) -> None:
        """After the load's tile is complete: the fills under `else` of `if (reuse)` copying the slot
        in; the filling load copies its tile to the slot."""
        g = self.g
        at = ctx.mul(self.k, ctx.c64(g.tile_bytes // _size(g.elem)))
        count = ctx.c64(g.tile_bytes // _size(g.elem))
        later = [o for o in self._new() if not (o.name.startswith("arith.") or o.name in _PURE)]
        _check_local(ctx, later)
        if self.reuse is not None:
            branch = scf.IfOp(self.reuse, [], has_else=True)
            with ir.InsertionPoint(branch.then_block):
                A.op("data_copy", [tile.value, ctx.at(g.buffer, at), count])
                scf.YieldOp([])
            with ir.InsertionPoint(branch.else_block):
                end = scf.YieldOp([])
            for o in later:
                o.move_before(end)
            where = ir.InsertionPoint(end)
        else:
            where = ir.InsertionPoint.current
        if self.fill is not None:
            with where:
                put = scf.IfOp(self.fill, [], has_else=False)
                with ir.InsertionPoint(put.then_block):
                    A.op("data_copy", [ctx.at(g.buffer, at), tile.value, count])
                    scf.YieldOp([])

    def _new(self) -> list:
        return [o.operation for o in self.block.operations if o.operation not in self.seen]

    def _conditions(self, ctx) -> None:
        """cached = iv - lb < slots * step (iteration k = (iv - lb) / step has a slot); then reuse and
        fill per role (per core: fill on the core's first program, reuse on the others)."""
        loop, g = self.use.loop, self.g
        lb, step = _i64(ctx, loop.operands[0]), _i64(ctx, loop.operands[2])
        iv = ctx.to64(ctx.scalar(loop.regions[0].blocks[0].arguments[0]))
        limit = arith.ConstantOp(ctx.i64, 0)
        limit.attributes[SLOTS_ATTR] = ir.UnitAttr.get()
        g.limits.append((limit, ctx.const_of(step)))
        rel = ctx.sub(iv, lb)
        cached = arith.CmpIOp(arith.CmpIPredicate.slt, rel, limit.result).result
        past = arith.CmpIOp(arith.CmpIPredicate.sge, rel, limit.result).result
        self.k = arith.DivSIOp(rel, step).result
        if not g.per_core:
            if self.use.first:
                self.fill = cached
            else:
                self.reuse, self.not_reuse = cached, past
            return
        bidx = ctx.grid.operation.operands[0]
        first = arith.CmpIOp(arith.CmpIPredicate.eq, ctx.pid, bidx).result
        later = arith.CmpIOp(arith.CmpIPredicate.ne, ctx.pid, bidx).result
        self.reuse = arith.AndIOp(cached, later).result
        self.not_reuse = arith.OrIOp(past, first).result
        if self.use.first:
            self.fill = arith.AndIOp(cached, first).result


def group_of(ctx, op) -> list:
    """The loads whose tiles are the load `op`'s (its row-cache group, filled once and read by all), or [op]."""
    use = ctx.ext.row_cache.get(op.operation)
    return [op] if use is None else [o for o, u in ctx.ext.row_cache.items() if u.group is use.group]


def begin(ctx, op, tile: Tile) -> Pending | None:
    """The row-cache state of the load `op` being lowered into `tile` (its GM copy not yet emitted),
    or None when it is not cached; a reuse whose group was never filled is lowered as is."""
    use = ctx.ext.row_cache.get(op.operation)
    if use is None:
        return None
    g = use.group
    if use.first:
        g.tile_bytes, g.elem = tile.bytes, tile.elem
        with ctx.before_grid:
            g.buffer = A.op("get_with_offset", [], A.local_type(ir.Type.parse(tile.elem)), buf="calcBuf",
                            count=tile.bytes // _size(tile.elem), offset=0, name=g.name + "Cache")
    elif g.buffer is None or (g.tile_bytes, g.elem) != (tile.bytes, tile.elem):
        return None
    return Pending(ctx, use)


def place(ctx) -> None:
    """Size the buffers to the UB the plan leaves (queue buffer counts unchanged), patch the slot
    limits and hand the buffers to the resident placement; NoRoom("cache") when too few slots fit."""
    groups = {id(u.group): u.group for u in ctx.ext.row_cache.values() if u.group.buffer is not None}
    if not groups:
        return
    lasting = sum(n for _, n in ctx.iota_ops + ctx.resident_ops)
    scratch = round_up(max(round_up(ctx.scratch.peak, TILE_ALIGN) + lasting, 32), 32)
    total = scratch + sum(q.num * q.bytes for q in ctx.queues)
    per_slot = sum(g.tile_bytes for g in groups.values())
    slots = (ctx.soc.ub_usable - total) // per_slot if total <= ctx.soc.ub_usable else 0
    if slots < MIN_SLOTS:
        raise resident.NoRoom("cache")
    for g in groups.values():
        for limit, step in g.limits:
            limit.attributes["value"] = ir.IntegerAttr.get(ctx.i64, slots * step)
            del limit.attributes[SLOTS_ATTR]
        g.buffer.owner.attributes["count"] = ir.IntegerAttr.get(ctx.i64, slots * g.tile_bytes // _size(g.elem))
        ctx.resident_ops.append((g.buffer.owner, slots * g.tile_bytes))
    ctx.meta["row_cache"] = {"slots": slots, "buffers": sorted(g.name for g in groups.values())}
    shared = {a for g in groups.values() if g.per_core for a in g.args}
    if shared:  # read by every core alike: `options.launch_blocks` weighs them against the launch's bytes
        ctx.meta["per_core_args"] = sorted(shared | set(ctx.meta.get("per_core_args") or ()))


def _check_local(ctx, ops: list) -> None:
    """The fill ops moved under `else` must not define values used after the load."""
    inside = set(ops)
    for o in ops:
        for r in o.results:
            for u in r.uses:
                user = u.owner.operation if hasattr(u.owner, "operation") else u.owner
                while user is not None and user not in inside:
                    parent = user.parent
                    user = parent.operation if parent is not None and hasattr(parent, "operation") else parent
                    if user is not None and user.name == "func.func":
                        user = None
                if user is None:
                    raise ctx.error("internal: a load's fill defines a value used after it (row cache)")


def _i64(ctx, v: ir.Value) -> ir.Value:
    """The lowered xb scalar `v` as i64 (a constant as an i64 literal)."""
    o = v.owner
    if not isinstance(o, ir.Block) and o.operation.name == "arith.constant":
        return ctx.c64(ir.IntegerAttr(o.operation.attributes["value"]).value)
    return ctx.to64(ctx.scalar(v))


def _size(elem: str) -> int:
    return SIZE[elem]


__all__ = ["MIN_SLOTS", "Group", "Pending", "Use", "begin", "place", "plan"]
