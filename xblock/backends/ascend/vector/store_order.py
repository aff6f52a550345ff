"""Which copies to GM must wait for the earlier ones: PipeBarrier<PIPE_MTE3> before a store that may
overwrite bytes an earlier store of the same program wrote.

The copies of one DMA pipe may complete out of order: two DataCopy/DataCopyPad to GM whose destinations
overlap need PipeBarrier<PIPE_MTE3> between them, or the older bytes may land last (ADK
docs/api/context/基础数据搬运.md, constraints; 同步控制简介.md: MTE2/MTE3 copies with overlapping
addresses are the developer's to order; docs/ASCEND_MODEL.md 4). A program's stores take effect in
program order on every other target, so a store gets the barrier when an earlier store of its program
may write the same bytes: another store site of the same kernel argument that can run before it (earlier
in the body, or anywhere in a loop around both), or the same site in an earlier iteration of a loop
whose step does not move the tile past its own extent. Stores of different kernel arguments, and a
chunk loop's tiles (`base + start + arange(BLOCK)`, step BLOCK), stay unordered.
"""

from __future__ import annotations

from ....dialects import ascendc as A
from ....dialects.locations import kernel_of

LOOPS = ("scf.for", "scf.while")


def order_store(ctx, op) -> None:
    """PipeBarrier<PIPE_MTE3> before the copies of store `op` when an earlier store may overlap them."""
    if needs_mte3_barrier(ctx, op):
        A.op("pipe_barrier", [], pipe="PIPE_MTE3")


def needs_mte3_barrier(ctx, op) -> bool:
    """True when the store or atomic `op` may write GM bytes an earlier store of its program wrote."""
    me = _root(ctx, op)
    for other in _store_sites(ctx):
        if other == op.operation:
            continue
        root = _root(ctx, other)
        if me is not None and root is not None and root != me:
            continue
        if _may_run_before(other, op.operation):
            return True
    return _repeats(ctx, op)


def _store_sites(ctx) -> list:
    """Every store and atomic of the kernel (computed once per lowering)."""
    if ctx.ext.store_sites is None:
        sites = []

        def walk(o):
            for region in o.regions:
                for block in region.blocks:
                    for inner in block.operations:
                        if inner.name == "xb.store" or inner.name.startswith("xb.atomic"):
                            sites.append(inner.operation)
                        walk(inner.operation)

        walk(kernel_of(ctx.xb_module).operation)
        ctx.ext.store_sites = sites
    return ctx.ext.store_sites


def _root(ctx, op):
    """The kernel argument the store's pointer derives from, or None when the structure analysis cannot
    tell (then it may alias anything)."""
    p = ctx.ps.pointer(op.operands[0])
    return None if p is None else p.root


def _ancestors(op) -> list:
    """The ops enclosing `op`, innermost first, up to (not including) the kernel function."""
    out = []
    o = op.parent
    while o is not None and o.name != "func.func":
        o = o.operation
        out.append(o)
        o = o.parent
    return out


def _may_run_before(a, b) -> bool:
    """Whether store `a` can execute before store `b` in one program: `a` comes first in the body, or a
    loop encloses both (an earlier iteration's `a`)."""
    up_a, up_b = _ancestors(a), _ancestors(b)
    common = [o for o in up_b if o in up_a]
    if any(o.name in LOOPS for o in common):
        return True
    # the children of the innermost common ancestor (or of the body) that hold a and b
    def child(op, ups):
        chain = [op] + ups
        for i, o in enumerate(chain[1:], 1):
            if common and o == common[0]:
                return chain[i - 1]
        return chain[-1]

    ca, cb = child(a, up_a), child(b, up_b)
    if ca.block != cb.block:
        return False  # the two branches of one `if`
    ops = [o.operation for o in ca.block.operations]
    return ops.index(ca) < ops.index(cb)


def _repeats(ctx, op) -> bool:
    """Whether `op` inside a loop may write, in one iteration, bytes it wrote in an earlier one."""
    loops = [o for o in _ancestors(op.operation) if o.name in LOOPS]
    if not loops:
        return False
    if len(loops) > 1 or loops[0].name != "scf.for":
        return True
    p = ctx.ps.pointer(op.operands[0])
    if p is None:
        return True
    span = 1
    for s, n in zip(p.offset.strides, p.offset.shape):
        c = s.as_const()
        if c is None:
            return True
        span += abs(c) * (n - 1)
    loop = loops[0]
    step = ctx.ps.scalar(loop.operands[2]).as_const()
    k = ctx.ps.key(loop.regions[0].blocks[0].arguments[0])
    terms = {m: c for m, c in p.offset.base.terms.items() if k in m}
    if step is None or list(terms) != [(k,)]:
        return True
    return abs(terms[(k,)] * step) < span
