"""Rules for runtime control flow: `scf.for`, `scf.if` and `scf.while` as plain C++ inside the grid loop.

Divergence is per program (one iteration of the grid loop), so a kernel's `if` and `while` become
C++ `if`/`while` around the generated statements. Blocks carried by a loop or yielded by an `if`
live in UB tiles allocated before the construct; each branch or iteration copies its block into
them (`DataCopy`, or `Duplicate` for a splat); a mask block is carried as its bit mask. Scalars stay
C++ variables.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import scf

from .....dialects import ascendc as A
from .....passes.pointer_structure import Affine, Pointer
from ...cube.handoff import spill_around_handoffs
from ...irwalk import ancestor_in
from ...values import FLOAT, Splat, Struct, Tile, elem_of, shape_of
from ...vector.tiles import fill, is_block, mask_of
from ..rules import rule


def _copy_into(ctx, acc: Tile, x) -> None:
    if isinstance(x, Tile) and x.value == acc.value:
        return
    if isinstance(x, Splat):
        fill(ctx, acc, ctx.c64(0), ctx.c64(acc.count), x)
    else:
        src = x if isinstance(x, Tile) else None
        if src is None:
            raise ctx.error("internal: loop-carried block without a tile")
        A.op("data_copy", [acc.value, src.value, ctx.c64(acc.padded)])


def _holder(ctx, v: ir.Value, yielded: ir.Value | None, default: str) -> Tile:
    """A UB tile for the block `v` that a loop carries or an `if` yields."""
    elem = elem_of(v.type)
    if elem.startswith("!xb.ptr"):
        raise ctx.error("a loop or `if` that carries pointer blocks is not supported (carry a scalar "
                        "offset instead and build the pointer block from it inside)")
    name = None
    if yielded is not None and not isinstance(yielded.owner, ir.Block):
        name = ctx.name_for(yielded.owner)
    return ctx.new_tile("ui8" if elem == "i1" else elem, shape_of(v.type), name or default)  # masks: their bits


def _value_of(ctx, v: ir.Value):
    if elem_of(v.type) == "i1":
        return mask_of(ctx, v)  # the bit mask Compare makes and Select reads
    x = ctx.vmap.get(v)
    return x if isinstance(x, (Splat, Tile)) else ctx.tile(v)


def _copy_yields(ctx, carried: dict, operands) -> None:
    """acc_k = operands[k] for every carried block; a source that is another carried tile is copied
    aside first, so swaps (`a, b = b, a`) read the old values."""
    srcs = {k: _value_of(ctx, operands[k]) for k in carried}
    accs = {acc.value for acc in carried.values()}
    for k, x in srcs.items():
        if isinstance(x, Tile) and x.value in accs and x.value != carried[k].value:
            t = ctx.temp(x.elem, x.shape)
            A.op("data_copy", [t.value, x.value, ctx.c64(t.padded)])
            srcs[k] = t
    for k, acc in carried.items():
        _copy_into(ctx, acc, srcs[k])


def _advance(ctx, body, y, k):
    """(initial structure, uniform step) when the block carried in slot k is a pointer or integer block
    advanced by the same amount every iteration (`ptrs += BLOCK_K`, `offs += BLOCK`), else None."""
    arg, nxt = body.arguments[k + 1], y.operands[k]
    o = None if isinstance(nxt.owner, ir.Block) else nxt.owner
    if o is None or o.name not in ("xb.addptr", "arith.addi"):
        return None
    ops = list(o.operands)
    if o.name == "arith.addi" and ops[1] == arg:
        ops.reverse()
    if ops[0] != arg or not _loop_invariant(ops[1], body):
        return None
    step = ctx.ps.affine(ops[1])
    return step if step is not None and step.uniform() else None


def _loop_invariant(v, body) -> bool:
    """Whether `v` has one value in every iteration of the loop whose body is `body`: it is defined
    outside the loop, or computed inside from such values only (not from the induction variable or a
    carried value; `offs += k` with `k` the induction variable is not a uniform step)."""
    seen: dict = {}

    def walk(x) -> bool:
        if isinstance(x.owner, ir.Block):
            return x.owner != body and not _inside(x.owner.owner, body)
        o = x.owner
        if not _inside(o, body):
            return True
        key = o.result.get_name() if len(o.results) == 1 else id(o)
        if key not in seen:
            seen[key] = len(o.regions) == 0 and all(walk(a) for a in o.operands)
        return seen[key]

    return walk(v)


def _inside(op, body) -> bool:
    """Whether operation `op` is nested in the block `body`."""
    return ancestor_in(body, op) is not None


def _seed(ctx, op, k, step, count) -> None:
    """Block arg and result k of loop `op` as structures: start + count * step (count: iterations done)."""
    init = op.operands[3 + k]
    body = op.regions[0].blocks[0]
    for v, n in ((body.arguments[k + 1], count[0]), (op.results[k], count[1])):
        ctx.vmap[n] = n  # a lowered counter stands for itself in the pointer structure's polynomials
        shift = ctx.ps.opaque(n) * step.base
        if elem_of(init.type).startswith("!xb.ptr"):
            p0 = ctx.ps.pointer(init, wrapped=True)
            o = p0.offset
            ctx.ps.assume_pointer(v, Pointer(p0.root, p0.elem, Affine(o.shape, o.base + shift, o.strides, o.exact)))
        else:
            a0 = ctx.ps.affine(init, wrapped=True)
            ctx.ps.assume_affine(v, Affine(a0.shape, a0.base + shift, a0.strides, a0.exact))
        ctx.vmap[v] = Struct(v)


def _seedable(ctx, init, step) -> bool:
    elem = elem_of(init.type)
    if elem.startswith("!xb.ptr"):
        return step is not None and ctx.ps.pointer(init, wrapped=True) is not None
    return step is not None and elem not in FLOAT and elem != "i1" and ctx.ps.affine(init, wrapped=True) is not None


@rule("scf.for")
def _lower_for(ctx, op):
    spill_around_handoffs(ctx, op.operation)
    lb, ub, step = (ctx.scalar(o) for o in op.operands[:3])
    share = ctx.ext.share_loop  # a loop whose iterations the cores of a section share out
    if share is not None:
        lb, step = share(op, lb, step)
    inits = list(op.operands[3:])
    body = op.regions[0].blocks[0]
    y = body.operations[len(body.operations) - 1]
    carried, scalars, seeded = {}, [], {}
    for k, init in enumerate(inits):
        if is_block(init):
            adv = _advance(ctx, body, y, k)
            if _seedable(ctx, init, adv):  # advanced by a uniform step: a structure, not a tile
                seeded[k] = adv
                continue
            acc = _holder(ctx, init, y.operands[k], "acc")
            _copy_into(ctx, acc, _value_of(ctx, init))
            carried[k] = acc
        else:
            scalars.append(k)
    counter = [ctx.c64(0)] if seeded else []
    loop = scf.ForOp(lb, ub, step, [ctx.scalar(inits[k]) for k in scalars] + counter)
    iv = ctx.loop_name(op)
    if iv:
        loop.attributes["name"] = ir.StringAttr.get(iv)
    ctx.vmap[body.arguments[0]] = loop.induction_variable
    for j, k in enumerate(scalars):
        ctx.vmap[body.arguments[k + 1]] = loop.inner_iter_args[j]
        ctx.vmap[op.results[k]] = loop.results[j]
    for k, acc in carried.items():
        ctx.vmap[body.arguments[k + 1]] = ctx.hold(acc)
        ctx.vmap[op.results[k]] = acc
    for k, adv in seeded.items():
        _seed(ctx, op, k, adv, (loop.inner_iter_args[len(scalars)], loop.results[len(scalars)]))

    def on_yield(y):
        _copy_yields(ctx, carried, y.operands)
        more = [ctx.add(loop.inner_iter_args[len(scalars)], ctx.c64(1))] if seeded else []
        scf.YieldOp([ctx.scalar(y.operands[k]) for k in scalars] + more)

    with ir.InsertionPoint(loop.body):
        ctx.lower_block(body, on_yield)


@rule("scf.if")
def _lower_if(ctx, op):
    spill_around_handoffs(ctx, op.operation)
    has_else = len(op.regions[1].blocks) > 0
    then_yield = op.regions[0].blocks[0].operations[len(op.regions[0].blocks[0].operations) - 1]
    blocks = {k: _holder(ctx, r, then_yield.operands[k], "sel") for k, r in enumerate(op.results) if is_block(r)}
    scalars = [k for k, r in enumerate(op.results) if not is_block(r)]
    ifop = scf.IfOp(ctx.scalar(op.operands[0]), [op.results[k].type for k in scalars], has_else=has_else)
    ctx.ext.if_results[op.operation] = blocks  # the branches compute into them (dst_tile)

    def on_yield(y):
        _copy_yields(ctx, blocks, y.operands)
        scf.YieldOp([ctx.scalar(y.operands[k]) for k in scalars])

    for region, block in ((op.regions[0], ifop.then_block), (op.regions[1], ifop.else_block if has_else else None)):
        if block is not None:
            with ir.InsertionPoint(block):
                ctx.lower_block(region.blocks[0], on_yield)
    for j, k in enumerate(scalars):
        ctx.vmap[op.results[k]] = ifop.results[j]
    for k, t in blocks.items():
        ctx.vmap[op.results[k]] = t


@rule("scf.while")
def _lower_while(ctx, op):
    """`while (true) { before; if (!cond) break; after }`: the frontend forwards the before block's
    arguments to the after block unchanged, so a carried block is one tile for both regions."""
    spill_around_handoffs(ctx, op.operation)
    before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
    cond = before.operations[len(before.operations) - 1]
    y = after.operations[len(after.operations) - 1]
    inits, fwd = list(op.operands), list(cond.operands[1:])
    if len(fwd) != len(inits) or any(is_block(f) and f != before.arguments[k] for k, f in enumerate(fwd)):
        raise ctx.error("a `while` whose condition forwards new blocks is not supported")
    carried, scalars = {}, []
    for k, init in enumerate(inits):
        if is_block(init):
            carried[k] = _holder(ctx, init, y.operands[k], "acc")
            _copy_into(ctx, carried[k], _value_of(ctx, init))
        else:
            scalars.append(k)
    types = [inits[k].type for k in scalars]
    loop = scf.WhileOp(types, [ctx.scalar(inits[k]) for k in scalars])
    names = [ctx.name_for(y.operands[k].owner) if not isinstance(y.operands[k].owner, ir.Block) else None
             for k in scalars]
    loop.attributes["names"] = ir.ArrayAttr.get([ir.StringAttr.get(n or "run") for n in names])
    nb = loop.before.blocks.append(*types)
    na = loop.after.blocks.append(*types)
    for j, k in enumerate(scalars):
        ctx.vmap[before.arguments[k]] = nb.arguments[j]
        ctx.vmap[after.arguments[k]] = na.arguments[j]
        ctx.vmap[op.results[k]] = loop.results[j]
    for k, acc in carried.items():
        ctx.vmap[before.arguments[k]] = ctx.hold(acc)
        ctx.vmap[after.arguments[k]] = ctx.hold(acc)
        ctx.vmap[op.results[k]] = acc

    def on_cond(c):
        scf.ConditionOp(ctx.scalar(c.operands[0]), [ctx.scalar(c.operands[1 + k]) for k in scalars])

    def on_yield(y):
        _copy_yields(ctx, carried, y.operands)
        scf.YieldOp([ctx.scalar(y.operands[k]) for k in scalars])

    with ir.InsertionPoint(nb):
        ctx.lower_block(before, on_cond)
    with ir.InsertionPoint(na):
        ctx.lower_block(after, on_yield)
