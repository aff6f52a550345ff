"""How a scan combines rows: dst = acc (+) cur over whole rows of lanes, on the vector unit.

cumsum and cumprod are one Add/Mul per row. A user's combine function (`associative_scan`) is the
xb region of its scan op, whose ops take scalars; `RowCombine` re-types a copy of that region to
blocks of one row (`tensor<L x T>`) and lowers it with the rule table, its arguments bound to views
of the rows, so each op of the combine function is one vector instruction (or the few the rule
emits) over all L lanes at once. Values from outside the region and constants become splats.

A rule may read a source over its 256-byte-rounded extent (Compare and Select count whole
repeats), so a row view is given that extent: the tiles that rows are cut from keep `SLACK` bytes
after their last row (`work`). Not a rule module: `scan.py` uses it.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import func

from ....dialects import ascendc as A
from ..values import FLOAT, SIZE, Splat, Tile, round_up

SLACK = 256  # bytes after the last row of a tile that rows are cut from
VIEW_ELEMS = ("f16", "bf16", "f32", "i16", "i32")  # element types a combine function runs on as rows
BUILTIN = {"cumsum": "Add", "cumprod": "Mul"}


class RowCombine:
    """dst[k] = combine(acc[k], cur[k]) on rows of `length` lanes, for each operand k (LocalTensor
    values at the rows' starts; dst may be acc or cur)."""

    def __init__(self, ctx, op, kind: str, elems: list, length: int):
        self.ctx, self.op, self.kind, self.elems, self.length = ctx, op, kind, elems, length
        self.retyped = None if kind in BUILTIN else _Retyped(op, length)

    def __call__(self, dsts: list, accs: list, curs: list) -> None:
        ctx = self.ctx
        n = ctx.c64(self.length)
        if self.kind in BUILTIN:
            for d, a, c in zip(dsts, accs, curs):
                A.op("vec", [d, a, c, n], api=BUILTIN[self.kind])
            return
        rt = self.retyped
        k = len(self.elems)
        for arg, v, e in zip(list(rt.block.arguments)[:2 * k], accs + curs, self.elems * 2):
            ctx.vmap[arg] = Tile(v, e, (self.length,), round_up(self.length * SIZE[e], 256), "view", refs=1 << 30)
        for arg, bind in rt.binds:
            ctx.vmap[arg] = bind(ctx)

        def on_yield(y):
            srcs = [ctx.tile(v) for v in y.operands]
            for i, t in enumerate(srcs):  # a row the combine returns as it is, which an earlier copy overwrites
                if t.kind == "view" and any(t.value == d for d in dsts[:i]):
                    srcs[i] = ctx.temp(t.elem, t.shape)
                    A.op("data_copy", [srcs[i].value, t.value, n])
            for t, d in zip(srcs, dsts):
                A.op("data_copy", [d, t.value, n])

        lower_nested(ctx, rt.block, on_yield)


def lower_nested(ctx, block: ir.Block, on_yield) -> None:
    """Lower `block` inside a rule: the walk frees its temporaries after each op of `block`, so the
    rule's own temporaries are set aside meanwhile; errors point at the block's ops, then back."""
    saved = ctx.loc, ctx.where, ctx.temps
    ctx.temps = []
    try:
        ctx.lower_block(block, on_yield)
    finally:
        ctx.loc, ctx.where, ctx.temps = saved[0], saved[1], saved[2] + ctx.temps


def work(ctx, elem: str, count: int, generic: bool):
    """A scratch tile that rows are cut from: `count` elements, and SLACK bytes more for a combine
    function's rules."""
    return ctx.temp(elem, count + (SLACK // SIZE[elem] if generic else 0))


def vector_reason(op, kind: str, elems: list) -> str | None:
    """Why the combine of this scan cannot run on rows of the vector unit (None when it can)."""
    if kind in BUILTIN:
        ce = compute_elem(kind, elems[0])
        return None if ce in ("f16", "f32", "i16", "i32") else f"{elems[0]} {kind} (no vector {BUILTIN[kind]})"
    bad = [e for e in elems if e not in VIEW_ELEMS]
    if bad:
        return f"a combine function on {bad[0]} blocks"
    block = op.regions[0].blocks[0]
    inner = {a for a in block.arguments}
    for o in block.operations:
        if len(o.regions):
            return "a combine function with control flow (if/for/while)"
        for r in o.results:
            inner.add(r)
        for x in o.operands:
            if x not in inner and str(x.type).startswith(("tensor<", "!xb.ptr")):
                return "a combine function that uses a block from outside it"
    return None


def compute_elem(kind: str, elem: str) -> str:
    """The element type a scan runs in: cumsum/cumprod of half accumulate in float, as the sim does."""
    return "f32" if kind in BUILTIN and elem in ("f16", "bf16") else elem


class _Retyped:
    """A copy of a scan's combine region whose ops take rows (tensor<length x T>): region arguments
    and ops that depend on them become blocks; ops on constants and outer scalars stay scalars; a
    scalar operand of a block op becomes a splat, bound at lowering time (`binds`)."""

    def __init__(self, op, length: int):
        body = op.regions[0].blocks[0]
        args = list(body.arguments)
        self.outer = _outer_values(body)
        with op.context, ir.Location.unknown():
            self.module = ir.Module.create()
            row = [ir.RankedTensorType.get([length], a.type) for a in args]
            fn = func.FuncOp("combine", (row + [v.type for v in self.outer], []),
                             ip=ir.InsertionPoint(self.module.body))
            self.block = fn.add_entry_block()
        self.length = length
        self._splats: dict = {}
        new = list(self.block.arguments)
        self.map = dict(zip(args + self.outer, new))
        self.binds: list = [(a, lambda ctx, v=v: ctx.scalar(v)) for a, v in zip(new[len(args):], self.outer)]
        self.vector = set(args)
        with op.context, ir.InsertionPoint(self.block):
            for o in body.operations:
                self._clone(o.operation)

    def _clone(self, o) -> None:
        is_vec = any(x in self.vector for x in o.operands) or (o.name == "gpu.yield")
        if not is_vec:
            new = ir.Operation.create(o.name, results=[r.type for r in o.results],
                                      operands=[self.map[x] for x in o.operands],
                                      attributes=_attrs(o), loc=o.location)
            self.map.update(zip(o.results, new.results))
            return
        operands = []
        for i, x in enumerate(o.operands):
            if x in self.vector or (o.name == "arith.select" and i == 0):
                operands.append(self.map[x])  # a scalar select condition picks whole rows
            else:
                operands.append(self._splat(x, o.location))
        new = ir.Operation.create(o.name, results=[ir.RankedTensorType.get([self.length], r.type) for r in o.results],
                                  operands=operands, attributes=_attrs(o),
                                  loc=o.location)
        self.map.update(zip(o.results, new.results))
        self.vector.update(o.results)

    def _splat(self, x: ir.Value, loc) -> ir.Value:
        """The row of the scalar `x`: a block argument bound to a Splat where `x` is a constant or an
        outer value (so rules see a scalar operand: Adds, Muls, ...), else an xb.splat."""
        if x in self._splats:
            return self._splats[x]
        t = ir.RankedTensorType.get([self.length], x.type)
        const = _constant(x)
        elem = str(x.type)
        if (const is not None or x in self.outer) and elem != "i1":
            arg = self.block.add_argument(t, loc)
            shape = (self.length,)
            if const is not None:
                self.binds.append((arg, lambda ctx, e=elem, c=const: Splat(e, shape, const=c)))
            else:
                self.binds.append((arg, lambda ctx, e=elem, v=x: Splat(e, shape, scalar=ctx.scalar(v))))
            self._splats[x] = arg
            return arg
        s = ir.Operation.create("xb.splat", results=[t], operands=[self.map[x]], loc=loc).results[0]
        self._splats[x] = s
        return s


def _attrs(o) -> dict:
    return {k: o.attributes[k] for k in o.attributes}


def _outer_values(body: ir.Block) -> list:
    """The values the region uses but does not define, in first-use order."""
    inner = set(body.arguments)
    out: list = []
    for o in body.operations:
        for x in o.operands:
            if x not in inner and x not in out:
                out.append(x)
        inner.update(o.results)
    return out


def _constant(x: ir.Value):
    """The Python value of a scalar arith.constant, else None."""
    o = x.owner
    if isinstance(o, ir.Block) or o.name != "arith.constant":
        return None
    a = o.attributes["value"]
    return ir.FloatAttr(a).value if str(x.type) in FLOAT else ir.IntegerAttr(a).value


def combine_scalars(ctx, op, accs: list, xs: list) -> list:
    """The combine region of a generic reduce or scan `op`, lowered on scalars: combine(accs, xs)."""
    body = op.regions[0].blocks[0]
    for arg, v in zip(body.arguments, accs + xs):
        ctx.vmap[arg] = v
    out: list = []
    lower_nested(ctx, body, lambda y: out.extend(ctx.scalar(v) for v in y.operands))
    return out
