"""The rules of xb.reduce and xb.scan.

sum/max/min/argmax/argmin of a block fold to one 256-byte repeat and finish with a count-form
ReduceSum/ReduceMax/ReduceMin (`tiles.reduce_all`); a 2-D block reduced along one axis runs one
vector instruction per row or a count-form reduction per row. cumsum/cumprod down the rows of a 2-D
block are one vector Add/Mul per row (bit-exact); along a row they are blocked vector scans over
TransDataTo5HD transposes (`_scan_blocked`); what neither covers is a scalar loop, with a warning.

prod, xor_sum and generic (`xl.reduce` with a combine function) have no vector instruction, and a
combine function is arbitrary scalar code, so they run on the scalar unit as GetValue/SetValue
loops, with the combine function lowered as C++ scalars. prod and xor_sum fold left to right
(exact for xor; a product is within rounding of numpy's). A combine function runs in the sim's
order, pairwise ((0,1), (2,3), ...; an odd last lane moves up), in place on a UB copy of the block,
so any combine, associative or not, gives the sim's bits.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from ...dialects import ascendc as A
from .rules import rule
from .tiles import (
    FOLD,
    REDUCE,
    after_scalar_writes,
    as_elem,
    before_scalar_reads,
    finish,
    reduce_all,
    reduce_tmp_elems,
    scalar_convert,
)
from .transpose import transpose
from .values import FLOAT, SIZE, Splat, elem_of, numel, round_up, shape_of

SCALAR_KINDS = ("prod", "xor_sum", "generic")  # reductions without a vector instruction


@rule("xb.reduce")
def _reduce(ctx, op):
    kind = ir.StringAttr(op.attributes["kind"]).value
    axis = int(ir.IntegerAttr(op.attributes["axis"]).value)
    if kind in SCALAR_KINDS:
        return _scalar_reduce(ctx, op, kind, axis)
    if len(op.operands) != 1 or kind not in REDUCE:
        raise ctx.error(f"reduction '{kind}' is not supported yet")
    src = op.operands[0]
    shape = shape_of(src.type)
    t = ctx.tile(src)
    r = op.results[0]
    name = ctx.name_for(op)
    real = [d for d, s in enumerate(shape) if s != 1]
    if not str(r.type).startswith("tensor<") or real == [axis] or not real:
        v, kw = reduce_all(ctx, t, kind, name)
        want = elem_of(r.type)
        if kind.startswith("arg"):
            if str(v.type) != want:
                v = arith.ExtSIOp(ir.Type.parse(want), v).result
            if kw:
                v.owner.attributes["name"] = ir.StringAttr.get(kw["name"])
        elif str(v.type) != want:
            v = scalar_convert(ctx, v, want)
        if str(r.type).startswith("tensor<"):
            ctx.vmap[r] = Splat(want, shape_of(r.type), scalar=v)
        else:
            ctx.vmap[r] = v
        return
    if len(real) != 2 or kind not in FOLD or axis not in real:
        raise ctx.error("only reductions of 1-D blocks, or of 2-D blocks along one axis, are supported")
    rows, cols = shape[real[0]], shape[real[1]]
    ce = "f32" if t.elem not in ("f16", "f32") else t.elem
    if ce != t.elem:
        t = as_elem(ctx, t, ce)
    out_shape = shape_of(r.type)
    if axis == real[0]:  # down the columns: row by row, one vector instruction each
        out = ctx.new_tile(ce, out_shape, name, result=r if elem_of(r.type) == ce else None)
        A.op("data_copy", [out.value, t.value, ctx.c64(round_up(cols, 32 // SIZE[ce]))])
        loop = ctx.for_range(1, rows)
        with ir.InsertionPoint(loop.body):
            row = ctx.at(t.value, ctx.mul(loop.induction_variable, ctx.c64(cols)))
            A.op("vec", [out.value, out.value, row, ctx.c64(cols)], api=FOLD[kind])
            scf.YieldOp([])
    else:  # along rows: one count-form reduction per row
        out = ctx.new_tile(ce, out_shape, name, result=r if elem_of(r.type) == ce else None)
        dst = ctx.temp(ce, 32 // SIZE[ce])
        tmp = ctx.temp(ce, reduce_tmp_elems(cols, SIZE[ce], False))
        loop = ctx.for_range(0, rows)
        with ir.InsertionPoint(loop.body):
            i = loop.induction_variable
            A.op("reduce", [dst.value, ctx.at(t.value, ctx.mul(i, ctx.c64(cols))), tmp.value, ctx.c64(cols)],
                 api=REDUCE[kind], cal_index=False)
            ctx.sync("V_S")
            A.op("set_value", [out.value, i, A.op("get_value", [dst.value, ctx.c64(0)], ir.Type.parse(ce))])
            ctx.sync("S_V")
            scf.YieldOp([])
        if out.kind == "vecout":  # the scalar writes go out next: MTE3 waits for the scalar pipe
            ctx.sync("S_MTE3")
        else:
            out.scalar_written = True
    ctx.vmap[r] = out
    if elem_of(r.type) != ce:
        ctx.vmap.pop(r)
        finish(ctx, op, out, ce)


@rule("xb.scan")
def _scan(ctx, op):
    kind = ir.StringAttr(op.attributes["kind"]).value
    axis = int(ir.IntegerAttr(op.attributes["axis"]).value)
    reverse = ir.BoolAttr(op.attributes["reverse"]).value
    if len(op.operands) != 1 or kind not in ("cumsum", "cumprod"):
        raise ctx.error(f"scan '{kind}' is not supported yet")
    src = op.operands[0]
    shape = shape_of(src.type)
    elem = elem_of(op.results[0].type)
    real = [d for d, s in enumerate(shape) if s != 1]
    vec = elem in SCAN_ELEMS and elem_of(src.type) == elem
    if shape[axis] == 1 and elem_of(src.type) == elem:  # a scan of one element: a copy
        t = ctx.tile(src)
        out = ctx.new_tile(elem, shape, ctx.name_for(op), result=op.results[0])
        A.op("data_copy", [out.value, t.value, ctx.c64(t.padded)])
        ctx.vmap[op.results[0]] = out
        return
    if vec and len(real) == 2 and axis == real[0] and real[1] == len(shape) - 1 \
            and (shape[-1] * SIZE[elem]) % 32 == 0:
        t = ctx.tile(src)
        out = ctx.new_tile(elem, shape, ctx.name_for(op), result=op.results[0])
        _scan_rows(ctx, kind, t, out, shape[real[0]], shape[-1], reverse)
        ctx.vmap[op.results[0]] = out
        return
    if axis != len(shape) - 1 and real != [axis] and real:
        raise ctx.error("scans run along the last axis, or along the rows of a 2-D block whose rows are whole "
                        "32-byte blocks, only")
    cols = shape[axis] if real == [axis] else shape[-1]
    if vec and not reverse and (cols * SIZE[elem]) % 32 == 0:
        t = ctx.tile(src)
        out = ctx.new_tile(elem, shape, ctx.name_for(op), result=op.results[0])
        _scan_blocked(ctx, kind, t, out, numel(shape) // cols, cols)
        ctx.vmap[op.results[0]] = out
        return
    why = ("reverse scans" if reverse else f"{elem} scans" if not vec else
           f"rows of {cols} {elem} (not whole 32-byte blocks)")
    ctx.warn(f"a {kind} of a {tuple(shape)} {elem} block runs as a scalar GetValue/SetValue loop (the vector "
             f"scan covers f16/f32/i16/i32 rows of whole 32-byte blocks, not {why})")
    _scan_scalar(ctx, op, kind, shape, elem, reverse)


SCAN_ELEMS = ("f16", "f32", "i16", "i32")  # Add/Mul on the vector unit of A2


def _scan_rows(ctx, kind, t, out, rows, cols, reverse) -> None:
    """A scan down the columns of a rows x cols tile: out[r] = out[r - 1] op t[r], one vector
    instruction per row, each lane in the sim's order (bit-exact)."""
    api = "Add" if kind == "cumsum" else "Mul"
    first, prev, step = (rows - 1, 1, -1) if reverse else (0, -1, 1)
    A.op("data_copy", [ctx.at(out.value, first * cols), ctx.at(t.value, first * cols), ctx.c64(cols)])
    if rows == 1:
        return
    loop = ctx.for_range(1, rows)
    with ir.InsertionPoint(loop.body):
        r = loop.induction_variable
        if reverse:
            r = ctx.sub(ctx.c64(rows - 1), r)
        at = ctx.mul(r, ctx.c64(cols))
        A.op("vec", [ctx.at(out.value, at), ctx.at(out.value, ctx.add(at, ctx.c64(prev * cols))),
                     ctx.at(t.value, at), ctx.c64(cols)], api=api)
        scf.YieldOp([])


def _scan_blocked(ctx, kind, t, out, rows, n) -> None:
    """An inclusive scan of each of `rows` rows of n elements (n * size a multiple of 32 bytes), with no
    scalar access: a row, padded with the identity to 256 * k elements, is a (B x 16) matrix Y
    (B = 16k). Z = Y^T (16 x B) is scanned down its rows (15 vector ops of B lanes): Z[w][b] is the
    prefix of row b of Y up to column w. Y2 = Z^T; a scan down the rows of Y2 that starts from the
    identity (B - 1 vector ops of 16 lanes) gives, in column 15, the exclusive prefix E of the row
    totals; E is row 15 of that matrix transposed. Z[w] op= E for every w, and out = Z^T. Integer
    scans are exact; a float scan adds each prefix of 16 in the sim's order, then the sum of the rows
    before (within rounding of the sim's sequential order). Transposes: `layout.transpose`."""
    elem = t.elem
    api = "Add" if kind == "cumsum" else "Mul"
    one = ctx.cst(elem, 0 if kind == "cumsum" else 1)
    npad = round_up(n, 256)
    b = npad // 16
    pad = npad != n
    y = ctx.temp(elem, npad) if pad else None
    z, y2, c = ctx.temp(elem, npad), ctx.temp(elem, npad), ctx.temp(elem, npad)
    ct = y if pad else ctx.temp(elem, npad)

    def row(base):
        src = t.value if base is None else ctx.at(t.value, base)
        dst = out.value if base is None else ctx.at(out.value, base)
        if pad:
            A.op("duplicate", [y.value, one, ctx.c64(npad)])
            A.op("data_copy", [y.value, src, ctx.c64(n)])
            src = y.value
        transpose(ctx, src, z.value, elem, b, 16)
        _chain(ctx, api, z.value, b, 1, 16)
        transpose(ctx, z.value, y2.value, elem, 16, b)
        A.op("duplicate", [c.value, one, ctx.c64(16)])
        _chain(ctx, api, c.value, 16, 1, b, y2.value)  # b >= 16
        transpose(ctx, c.value, ct.value, elem, b, 16)
        e = ctx.at(ct.value, 15 * b)
        loop = ctx.for_range(0, 16)
        with ir.InsertionPoint(loop.body):
            at = ctx.at(z.value, ctx.mul(loop.induction_variable, ctx.c64(b)))
            A.op("vec", [at, at, e, ctx.c64(b)], api=api)
            scf.YieldOp([])
        if pad:
            transpose(ctx, z.value, y2.value, elem, 16, b)
            A.op("data_copy", [dst, y2.value, ctx.c64(n)])
        else:
            transpose(ctx, z.value, dst, elem, 16, b)

    if rows == 1:
        row(None)
        return
    loop = ctx.for_range(0, rows)
    with ir.InsertionPoint(loop.body):
        row(ctx.mul(loop.induction_variable, ctx.c64(n)))
        scf.YieldOp([])


def _chain(ctx, api, v, count, first, rows, src=None) -> None:
    """v[r] = v[r - 1] op src[r - 1] for r in [first, rows) (rows of `count` elements); with no `src`,
    v[r] op= v[r - 1] in place."""
    loop = ctx.for_range(first, rows)
    with ir.InsertionPoint(loop.body):
        at = ctx.mul(loop.induction_variable, ctx.c64(count))
        before = ctx.sub(at, ctx.c64(count))
        if src is None:
            A.op("vec", [ctx.at(v, at), ctx.at(v, before), ctx.at(v, at), ctx.c64(count)], api=api)
        else:
            A.op("vec", [ctx.at(v, at), ctx.at(v, before), ctx.at(src, before), ctx.c64(count)], api=api)
        scf.YieldOp([])


def _scan_scalar(ctx, op, kind, shape, elem, reverse) -> None:
    """The scan as a scalar GetValue/SetValue loop along the last axis, in the sim's order."""
    t = ctx.tile(op.operands[0])
    et = ir.Type.parse(elem)
    out = ctx.new_tile(elem, shape, ctx.name_for(op), result=op.results[0])
    cols = shape[-1]
    rows = numel(shape) // cols
    before_scalar_reads(ctx)
    outer = ctx.for_range(0, rows)
    with ir.InsertionPoint(outer.body):
        base = ctx.mul(outer.induction_variable, ctx.c64(cols))
        init = ctx.cst(elem, 0 if kind == "cumsum" else 1)
        inner = scf.ForOp(ctx.c64(0), ctx.c64(cols), ctx.c64(1), [init])
        with ir.InsertionPoint(inner.body):
            j = inner.induction_variable
            if reverse:
                j = ctx.sub(ctx.c64(cols - 1), j)
            k = ctx.add(base, j)
            x = A.op("get_value", [t.value, k], et)
            run = inner.inner_iter_args[0]
            nxt = (arith.AddFOp if elem in FLOAT else arith.AddIOp)(run, x).result if kind == "cumsum" else \
                (arith.MulFOp if elem in FLOAT else arith.MulIOp)(run, x).result
            A.op("set_value", [out.value, k, nxt])
            scf.YieldOp([nxt])
        scf.YieldOp([])
    after_scalar_writes(ctx, out)
    ctx.vmap[op.results[0]] = out


# ----- reductions the vector unit has no instruction for: scalar loops ---------------------------

def _combine(ctx, op, kind: str, accs: list, xs: list) -> list:
    """The combined scalars of the running values `accs` and the next lanes `xs`."""
    a, x = accs[0], xs[0]
    if kind == "prod":
        return [(arith.MulFOp if str(a.type) in FLOAT else arith.MulIOp)(a, x).result]
    if kind == "xor_sum":
        return [arith.XOrIOp(a, x).result]
    body = op.regions[0].blocks[0]
    for arg, v in zip(body.arguments, accs + xs):
        ctx.vmap[arg] = v
    out: list = []
    ctx.lower_block(body, lambda y: out.extend(ctx.scalar(v) for v in y.operands))
    return out


def _pairwise(ctx, op, work: list, base, n: int, post: int) -> list:
    """The sim's pairwise reduction of lanes base + j * post (j < n) of the `work` tiles, in place:
    level by level, w[i] = combine(w[2i], w[2i+1]); an odd last lane moves to w[n // 2]."""
    types = [ir.Type.parse(w.elem) for w in work]

    def at(j):
        return ctx.add(base, ctx.mul(j, ctx.c64(post))) if post != 1 else ctx.add(base, j)

    length = n
    while length > 1:
        half = length // 2
        loop = ctx.for_range(0, half)
        with ir.InsertionPoint(loop.body):
            i = loop.induction_variable
            two_i = ctx.mul(i, ctx.c64(2))
            a = [A.op("get_value", [w.value, at(two_i)], t) for w, t in zip(work, types)]
            b = [A.op("get_value", [w.value, at(ctx.add(two_i, ctx.c64(1)))], t) for w, t in zip(work, types)]
            for w, v in zip(work, _combine(ctx, op, "generic", a, b)):
                A.op("set_value", [w.value, at(i), v])
            scf.YieldOp([])
        if length % 2:
            for w, t in zip(work, types):
                dst = at(ctx.c64(half))  # built before the source's index, as the C++ reads
                A.op("set_value", [w.value, dst, A.op("get_value", [w.value, at(ctx.c64(length - 1))], t)])
        length = half + length % 2
    return [A.op("get_value", [w.value, base], t) for w, t in zip(work, types)]


def _scalar_reduce(ctx, op, kind: str, axis: int) -> None:
    """Lower xb.reduce `op` of `kind` (one of SCALAR_KINDS) along `axis` as scalar loops."""
    srcs = list(op.operands)
    shape = shape_of(srcs[0].type)
    tiles = [ctx.tile(s) for s in srcs]
    if kind == "xor_sum" and tiles[0].elem in FLOAT:
        raise ctx.error("xor_sum of float blocks")
    if kind == "generic" and any(t.elem == "bf16" for t in tiles):
        raise ctx.error("a reduce with a combine function on bf16 blocks is not supported (cast to float)")
    work = ["f32" if kind == "prod" and t.elem in ("f16", "bf16") else t.elem for t in tiles]
    flat = not str(op.results[0].type).startswith("tensor<")
    pre, n, post = (1, numel(shape), 1) if flat else (numel(shape[:axis]), shape[axis], numel(shape[axis + 1:]))
    outs = None
    if pre * post > 1:
        outs = [ctx.new_tile(elem_of(r.type), shape_of(r.type), ctx.name_for(op) if len(srcs) == 1 else None, result=r)
                for r in op.results]
    before_scalar_reads(ctx)

    def lane(k, idx):
        v = A.op("get_value", [tiles[k].value, idx], ir.Type.parse(tiles[k].elem))
        return scalar_convert(ctx, v, work[k])

    def fold(base):
        """The reduction of lanes base + j * post, j < n, as scalars."""
        inits = [lane(k, base) for k in range(len(tiles))]
        if n == 1:
            return inits
        loop = scf.ForOp(ctx.c64(1), ctx.c64(n), ctx.c64(1), inits)
        with ir.InsertionPoint(loop.body):
            idx = ctx.add(base, ctx.mul(loop.induction_variable, ctx.c64(post)))
            xs = [lane(k, idx) for k in range(len(tiles))]
            scf.YieldOp(_combine(ctx, op, kind, list(loop.inner_iter_args), xs))
        return list(loop.results)

    if kind == "generic":
        copies = []
        for t in tiles:
            w = ctx.temp(t.elem, t.shape)
            A.op("data_copy", [w.value, t.value, ctx.c64(w.padded)])
            copies.append(w)
        before_scalar_reads(ctx)
        fold = lambda base: _pairwise(ctx, op, copies, base, n, post)  # noqa: E731

    if outs is None:
        vals = fold(ctx.c64(0))
        for r, v in zip(op.results, vals):
            v = scalar_convert(ctx, v, elem_of(r.type))
            ctx.vmap[r] = Splat(elem_of(r.type), shape_of(r.type), scalar=v) if not flat else v
        if flat and (name := ctx.name_for(op)) and len(vals) == 1 and not isinstance(ctx.vmap[op.results[0]].owner,
                                                                                       ir.Block):
            ctx.named(ctx.vmap[op.results[0]], name)
        return
    loop = ctx.for_range(0, pre * post)
    with ir.InsertionPoint(loop.body):
        m = loop.induction_variable
        if post == 1:
            base = ctx.mul(m, ctx.c64(n))
        else:
            base = ctx.add(ctx.mul(arith.DivSIOp(m, ctx.c64(post)).result, ctx.c64(n * post)),
                           arith.RemSIOp(m, ctx.c64(post)).result)
        for out, v in zip(outs, fold(base)):
            A.op("set_value", [out.value, m, scalar_convert(ctx, v, out.elem)])
        scf.YieldOp([])
    for out, r in zip(outs, op.results):
        after_scalar_writes(ctx, out)
        ctx.vmap[r] = out
