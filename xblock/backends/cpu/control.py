"""Rules for structured control flow: scf.for, scf.if, scf.while.

Scalars stay SSA values (loop-carried through `iter_args`); a block carried by a loop or
yielded by an `if` lives in one stack buffer (a slot) that the yields overwrite. A while loop
has two sets of slots: the blocks carried into its condition region, and the blocks that the
condition passes on to the body (which are also the loop's results).
"""

from __future__ import annotations

from .emit import V
from .irtypes import scalar_type, tensor_parts
from .rules import lower_block, rule
from .values import Buffer, materialize, storage, store_into


def _is_tensor(v) -> bool:
    return tensor_parts(v.type) is not None


def _slot_buffers(ctx, values):
    bufs = {}
    for k, v in enumerate(values):
        if _is_tensor(v):
            shape, ety, pointee = tensor_parts(v.type)
            n = 1
            for d in shape:
                n *= d
            bufs[k] = Buffer(ctx.e.alloca(n, storage(ety)), shape, ety, pointee)
    return bufs


def _write_slots(ctx, bufs, values) -> list:
    """Store yielded blocks into their slot buffers (through temporaries: a yield may read a slot)."""
    staged = {}
    for k, buf in bufs.items():
        tv = ctx.get(values[k])
        if tv is buf:
            continue
        slot_mems = {b.mem for b in bufs.values()}
        if isinstance(tv, Buffer) and tv.mem not in slot_mems:
            staged[k] = tv
        else:
            staged[k] = materialize(ctx.e, tv)
    for k, tv in staged.items():
        store_into(ctx.e, tv, bufs[k].mem)
    return [ctx.get(v) for k, v in enumerate(values) if k not in bufs]


@rule("scf.for")
def _lower_for(ctx, op):
    lb, ub, step = (ctx.get(v) for v in list(op.operands)[:3])
    inits = list(op.operands)[3:]
    block = op.regions[0].blocks[0]
    bufs = _slot_buffers(ctx, inits)
    for k, buf in bufs.items():
        store_into(ctx.e, ctx.get(inits[k]), buf.mem)
    scalars = [ctx.get(v) for k, v in enumerate(inits) if k not in bufs]

    def body(iv, iters):
        ctx.vals[block.arguments[0]] = iv
        it = iter(iters)
        for k, arg in enumerate(list(block.arguments)[1:]):
            ctx.vals[arg] = bufs[k] if k in bufs else next(it)
        term = lower_block(ctx, block)
        return _write_slots(ctx, bufs, list(term.operands))

    outs = iter(ctx.e.for_(lb, ub, step, body, scalars))
    ctx.pending = []  # loads of the body: evaluated there, or dead
    for k, r in enumerate(op.results):
        ctx.vals[r] = bufs[k] if k in bufs else next(outs)


@rule("scf.if")
def _lower_if(ctx, op):
    cond = ctx.get(op.operands[0])
    results = list(op.results)
    bufs = _slot_buffers(ctx, results)
    types = [scalar_type(r.type) for k, r in enumerate(results) if k not in bufs]

    def branch(region):
        if not region.blocks:
            return []
        term = lower_block(ctx, region.blocks[0])
        return _write_slots(ctx, bufs, list(term.operands)) if term is not None else []

    has_else = len(op.regions) > 1 and len(op.regions[1].blocks) > 0
    outs = iter(ctx.e.if_(cond, lambda: branch(op.regions[0]), (lambda: branch(op.regions[1])) if has_else
                         else None, types))
    ctx.pending = []
    for k, r in enumerate(results):
        ctx.vals[r] = bufs[k] if k in bufs else next(outs)


@rule("scf.while")
def _lower_while(ctx, op):
    e = ctx.e
    before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
    inits = list(op.operands)
    carried = _slot_buffers(ctx, inits)  # blocks carried into `before`, written by `after`'s yield
    passed = _slot_buffers(ctx, list(op.results))  # blocks passed on by scf.condition (and results)
    for k, buf in carried.items():
        store_into(e, ctx.get(inits[k]), buf.mem)
    scalars = [ctx.get(v) for k, v in enumerate(inits) if k not in carried]
    rtypes = [scalar_type(r.type) for k, r in enumerate(op.results) if k not in passed]
    res = e.fresh("w")
    bargs = [V(e.fresh("wb"), v.type) for v in scalars]
    pairs = ", ".join(f"{a} = {i}" for a, i in zip(bargs, scalars))
    e.line((f"{res}:{len(rtypes)} = " if rtypes else "") + "scf.while " + (f"({pairs}) " if pairs else "")
           + f": ({', '.join(v.type for v in scalars)}) -> ({', '.join(rtypes)}) {{")
    e.depth += 1
    _bind(ctx, before.arguments, carried, bargs)
    term = lower_block(ctx, before)
    cond = ctx.get(term.operands[0])
    fwd = _write_slots(ctx, passed, list(term.operands)[1:])
    e.line(f"scf.condition({cond})" + (f" {', '.join(map(str, fwd))} : {', '.join(v.type for v in fwd)}"
                                       if fwd else ""))
    e.depth -= 1
    aargs = [V(e.fresh("wa"), t) for t in rtypes]
    e.line("} do {")
    e.line("^bb0" + (f"({', '.join(f'{a}: {a.type}' for a in aargs)})" if aargs else "") + ":")
    e.depth += 1
    _bind(ctx, after.arguments, passed, aargs)
    term = lower_block(ctx, after)
    ys = _write_slots(ctx, carried, list(term.operands))
    e.line("scf.yield" + (f" {', '.join(map(str, ys))} : {', '.join(v.type for v in ys)}" if ys else ""))
    e.depth -= 1
    e.line("}")
    ctx.pending = []  # loads of the regions: evaluated there, or dead
    outs = iter(V(f"{res}#{k}", t) for k, t in enumerate(rtypes))
    for k, r in enumerate(op.results):
        ctx.vals[r] = passed[k] if k in passed else next(outs)


def _bind(ctx, args, bufs, scalars) -> None:
    """Block arguments: slot buffers where they are blocks, the given scalars elsewhere."""
    it = iter(scalars)
    for k, a in enumerate(args):
        ctx.vals[a] = bufs[k] if k in bufs else next(it)
