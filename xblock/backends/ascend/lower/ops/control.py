"""Rules for runtime control flow: `scf.for`, `scf.if` and `scf.while` as plain C++ inside the grid loop.

Divergence is per program (one iteration of the grid loop), so a kernel's `if` and `while` become
C++ `if`/`while` around the generated statements. Blocks carried by a loop or yielded by an `if`
live in UB tiles allocated before the construct; each branch or iteration copies its block into
them (`DataCopy`, or `Duplicate` for a splat); a mask block is carried as its bit mask. Scalars stay
C++ variables.

Pointers are never C++ variables: every GM access goes through the GlobalTensor of a root (a kernel
argument). A scalar pointer that a loop carries or an `if` yields (`p += stride` in a recurrence) is
carried as an int64 element offset from its root, beside it; a pointer block advanced by the same
amount every iteration (`a_ptrs += BLOCK_K * stride_ak`) is its start plus the iterations done times
that step, whether the start is structured (an affine offset: copies) or offsets that depend on data
(rows picked by token ids: lanes.py reads `ctx.ext.carried_ptrs`).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import scf

from .....dialects import ascendc as A
from .....passes.pointer_structure import Affine, Pointer
from ...cube.handoff import spill_around_handoffs
from ...irwalk import ancestor_in
from ...values import FLOAT, Splat, Struct, Tile, elem_of, shape_of
from ...vector.lanes import data_root, release_carried
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


def _is_ptr(v: ir.Value) -> bool:
    return str(v.type).startswith("!xb.ptr")


def _carry_in(ctx, k: int, v: ir.Value, roots: dict) -> ir.Value:
    """The C++ scalar that slot k of a loop or `if` starts with or yields: the scalar itself, or, for a
    pointer, its element offset from its root (the first pointer of the slot fixes the root)."""
    if not _is_ptr(v):
        return ctx.scalar(v)
    p = ctx.ps.pointer(v, wrapped=True)
    if p is None:
        raise ctx.error("this loop or `if` carries a scalar pointer that is not a kernel argument plus an offset; "
                        "ascend reaches GM only through the GlobalTensor of an argument")
    first = roots.setdefault(k, p)
    if p.root != first.root or p.elem != first.elem:
        raise ctx.error("a scalar pointer that a loop carries or an `if` yields must stay in one tensor on ascend "
                        "(one kernel argument plus an offset that changes): each GM access goes through the "
                        "GlobalTensor of one argument; carry an integer offset and add it to each pointer instead")
    return ctx.lin(p.offset.base)


def _carry_out(ctx, k: int, v: ir.Value, lowered: ir.Value, roots: dict) -> None:
    """Bind `v` (a carried value or a result) of slot k to `lowered`: a pointer as its root plus that offset."""
    if k not in roots:
        ctx.vmap[v] = lowered
        return
    p = roots[k]
    ctx.vmap[lowered] = lowered  # a lowered offset stands for itself in the pointer structure's polynomials
    ctx.ps.assume_pointer(v, Pointer(p.root, p.elem, Affine((), ctx.ps.opaque(lowered), ())))
    ctx.vmap[v] = Struct(v)


def _offset_name(ctx, v: ir.Value) -> str:
    """The C++ name of a carried pointer's offset: `p_gOffset` for the Python name `p_g`."""
    name = None if isinstance(v.owner, ir.Block) else ctx.name_for(v.owner)
    return (name or "ptr") + "Offset"


def _carried_type(v: ir.Value) -> ir.Type:
    return ir.IntegerType.get_signless(64) if _is_ptr(v) else v.type


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
            # lane by lane, a start whose offsets depend on data or wrap (`% N`) is followed from here (lanes.py)
            ctx.ext.carried_ptrs[v] = (init, shift)
        p0 = ctx.ps.pointer(init, wrapped=True) if elem_of(init.type).startswith("!xb.ptr") else None
        if p0 is not None:
            o = p0.offset
            ctx.ps.assume_pointer(v, Pointer(p0.root, p0.elem, Affine(o.shape, o.base + shift, o.strides, o.exact)))
        elif not elem_of(init.type).startswith("!xb.ptr"):
            a0 = ctx.ps.affine(init, wrapped=True)
            ctx.ps.assume_affine(v, Affine(a0.shape, a0.base + shift, a0.strides, a0.exact))
        ctx.vmap[v] = Struct(v)


def _seedable(ctx, init, step) -> bool:
    elem = elem_of(init.type)
    if elem.startswith("!xb.ptr"):
        return step is not None and (ctx.ps.pointer(init, wrapped=True) is not None or data_root(ctx, init) is not None)
    return step is not None and elem not in FLOAT and elem != "i1" and ctx.ps.affine(init, wrapped=True) is not None


@rule("scf.for")
def _lower_for(ctx, op):
    spill_around_handoffs(ctx, op.operation)
    lb, ub, step = (ctx.scalar(o) for o in op.operands[:3])
    share = ctx.ext.share_loop  # a loop whose iterations the cores of a section share out
    if share is not None:  # (lb, step), or (lb, step, ub) where the share also ends earlier
        lb, step, *end = share(op, lb, step)
        ub = end[0] if end else ub
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
    roots: dict = {}  # slot -> the structure of the scalar pointer it starts with
    loop = scf.ForOp(lb, ub, step, [_carry_in(ctx, k, inits[k], roots) for k in scalars] + counter)
    iv = ctx.loop_name(op)
    if iv:
        loop.attributes["name"] = ir.StringAttr.get(iv)
    ctx.vmap[body.arguments[0]] = loop.induction_variable
    for j, k in enumerate(scalars):
        _carry_out(ctx, k, body.arguments[k + 1], loop.inner_iter_args[j], roots)
        _carry_out(ctx, k, op.results[k], loop.results[j], roots)
    for k, acc in carried.items():
        ctx.vmap[body.arguments[k + 1]] = ctx.hold(acc)
        ctx.vmap[op.results[k]] = acc
    for k, adv in seeded.items():
        _seed(ctx, op, k, adv, (loop.inner_iter_args[len(scalars)], loop.results[len(scalars)]))
    if roots:
        ctx.ps.forget()  # what was derived from the carried pointers before they were bound
        names = [_offset_name(ctx, y.operands[k]) if k in roots else "run" for k in scalars] + ["run"] * len(counter)
        loop.attributes["names"] = ir.ArrayAttr.get([ir.StringAttr.get(n) for n in names])

    def on_yield(y):
        _copy_yields(ctx, carried, y.operands)
        more = [ctx.add(loop.inner_iter_args[len(scalars)], ctx.c64(1))] if seeded else []
        scf.YieldOp([_carry_in(ctx, k, y.operands[k], roots) for k in scalars] + more)

    with ir.InsertionPoint(loop.body):
        ctx.lower_block(body, on_yield)
    for k in seeded:
        if elem_of(inits[k].type).startswith("!xb.ptr"):
            release_carried(ctx, op.operation, inits[k])  # the offset tiles of a start that depends on data


@rule("scf.if")
def _lower_if(ctx, op):
    spill_around_handoffs(ctx, op.operation)
    has_else = len(op.regions[1].blocks) > 0
    then_yield = op.regions[0].blocks[0].operations[len(op.regions[0].blocks[0].operations) - 1]
    blocks = {k: _holder(ctx, r, then_yield.operands[k], "sel") for k, r in enumerate(op.results) if is_block(r)}
    scalars = [k for k, r in enumerate(op.results) if not is_block(r)]
    ifop = scf.IfOp(ctx.scalar(op.operands[0]), [_carried_type(op.results[k]) for k in scalars], has_else=has_else)
    ctx.ext.if_results[op.operation] = blocks  # the branches compute into them (dst_tile)
    roots: dict = {}

    def on_yield(y):
        _copy_yields(ctx, blocks, y.operands)
        scf.YieldOp([_carry_in(ctx, k, y.operands[k], roots) for k in scalars])

    for region, block in ((op.regions[0], ifop.then_block), (op.regions[1], ifop.else_block if has_else else None)):
        if block is not None:
            with ir.InsertionPoint(block):
                ctx.lower_block(region.blocks[0], on_yield)
    for j, k in enumerate(scalars):
        _carry_out(ctx, k, op.results[k], ifop.results[j], roots)
    if roots:
        ctx.ps.forget()
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
    types = [_carried_type(inits[k]) for k in scalars]
    roots: dict = {}
    loop = scf.WhileOp(types, [_carry_in(ctx, k, inits[k], roots) for k in scalars])
    names = [ctx.name_for(y.operands[k].owner) if not isinstance(y.operands[k].owner, ir.Block) else None
             for k in scalars]
    loop.attributes["names"] = ir.ArrayAttr.get([ir.StringAttr.get(n or "run") for n in names])
    nb = loop.before.blocks.append(*types)
    na = loop.after.blocks.append(*types)
    for j, k in enumerate(scalars):
        _carry_out(ctx, k, before.arguments[k], nb.arguments[j], roots)
        _carry_out(ctx, k, after.arguments[k], na.arguments[j], roots)
        _carry_out(ctx, k, op.results[k], loop.results[j], roots)
    if roots:
        ctx.ps.forget()
    for k, acc in carried.items():
        ctx.vmap[before.arguments[k]] = ctx.hold(acc)
        ctx.vmap[after.arguments[k]] = ctx.hold(acc)
        ctx.vmap[op.results[k]] = acc

    def on_cond(c):
        scf.ConditionOp(ctx.scalar(c.operands[0]), [_carry_in(ctx, k, c.operands[1 + k], roots) for k in scalars])

    def on_yield(y):
        _copy_yields(ctx, carried, y.operands)
        scf.YieldOp([_carry_in(ctx, k, y.operands[k], roots) for k in scalars])

    with ir.InsertionPoint(nb):
        ctx.lower_block(before, on_cond)
    with ir.InsertionPoint(na):
        ctx.lower_block(after, on_yield)
