"""The rule of xb.reduce (xb.scan is in `scan.py`).

sum/max/min/argmax/argmin of a block fold to one 256-byte repeat and finish with a count-form
ReduceSum/ReduceMax/ReduceMin (`tiles.reduce_all`); a 2-D block reduced down its columns runs one
vector instruction per row, and along its rows (of whole 32-byte blocks) mask/repeat-form folds and
WholeReduceSum/Max/Min over all rows at once (`rowvec.row_reduce`), with no scalar read-back.

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

from .....dialects import ascendc as A
from ...values import FLOAT, SIZE, Splat, Tile, elem_of, numel, round_up, shape_of
from ...vector.combine import combine_scalars
from ...vector.rowvec import row_reduce
from ...vector.tiles import (
    FOLD,
    REDUCE,
    after_scalar_writes,
    as_elem,
    before_scalar_reads,
    cast,
    finish,
    reduce_all,
    reduce_tmp_elems,
    scalar_convert,
)
from ..rules import rule

SCALAR_KINDS = ("prod", "xor_sum", "generic")  # reductions without a vector instruction


@rule("xb.reduce")
def _lower_reduce(ctx, op):
    kind = ir.StringAttr(op.attributes["kind"]).value
    axis = int(ir.IntegerAttr(op.attributes["axis"]).value)
    if kind in SCALAR_KINDS:
        return _scalar_reduce(ctx, op, kind, axis)
    if len(op.operands) != 1 or kind not in REDUCE:
        raise ctx.error(f"reduction '{kind}' is not supported yet")
    src = op.operands[0]
    shape = shape_of(src.type)
    t = ctx.tile(src)
    if t.elem == "i64":
        return _reduce_i64(ctx, op, t, kind, axis)
    r = op.results[0]
    name = ctx.name_for(op)
    real = [d for d, s in enumerate(shape) if s != 1]
    exact_int = t.elem in ("i16", "i32") and kind in FOLD  # Add/Max/Min have int16/int32 lanes; the
    # count-form reductions (ReduceSum...) only half and float, which would round sums past 2**24
    if not str(r.type).startswith("tensor<") or real == [axis] or not real:
        v, kw = _reduce_int(ctx, t, kind, name) if exact_int else reduce_all(ctx, t, kind, name)
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
    if shape[axis] == 1:  # along an axis of one element: each result is its one element (argmax: 0)
        return _along_one(ctx, op, t, kind)
    if len(real) == 2 and axis in real and kind.startswith("arg"):
        return _arg_along(ctx, op, t, kind, axis, shape[real[0]], shape[real[1]], axis == real[1])
    if len(real) > 2 and kind in FOLD and axis in real:  # blocks of rank 3 and more: exact scalar loops
        return _scalar_reduce(ctx, op, kind, axis)
    if len(real) != 2 or kind not in FOLD or axis not in real:
        raise ctx.error("only reductions of 1-D blocks, or of 2-D blocks along one axis, are supported")
    rows, cols = shape[real[0]], shape[real[1]]
    ce = t.elem if exact_int or t.elem in ("f16", "f32") else "f32"
    if exact_int and axis != real[0]:
        return _scalar_reduce(ctx, op, kind, axis)  # exact integer sums along rows: scalar loops
    if rows > 1 and cols * SIZE[ce] % 32:
        # rows that are not whole 32-byte blocks: the vector unit cannot address row 1 on; scalar loops
        return _scalar_reduce(ctx, op, kind, axis)
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
    else:  # along rows: folds and WholeReduce over all rows, vector instructions only (rowvec.py)
        out = ctx.new_tile(ce, out_shape, name, result=r if elem_of(r.type) == ce else None)
        row_reduce(ctx, t.value, out.value, kind, rows, cols, ce)
    ctx.vmap[r] = out
    if elem_of(r.type) != ce:
        ctx.vmap.pop(r)
        finish(ctx, op, out, ce)


# ----- argmax/argmin of a 2-D block along one axis ------------------------------------------------

def _along_one(ctx, op, t, kind: str) -> None:
    """A reduction along an axis of length 1 to a block: the source seen without that axis (a view of
    its tile, dense and row-major, so dropping a unit dimension keeps every element's place), in the
    result's type; the index of argmax/argmin is 0."""
    r = op.results[0]
    want, out_shape = elem_of(r.type), shape_of(r.type)
    if kind.startswith("arg"):
        ctx.vmap[r] = Splat(want, out_shape, const=0)
        return
    view = Tile(t.value, t.elem, out_shape, t.bytes, "view", parent=ctx.hold(t))
    if t.elem == want:
        ctx.vmap[r] = view
        return
    out = ctx.new_tile(want, out_shape, ctx.name_for(op), result=r)
    cast(ctx, out, view)
    ctx.vmap[r] = out


def _arg_along(ctx, op, t, kind: str, axis: int, rows: int, cols: int, along_rows: bool) -> None:
    """argmax/argmin along one axis of a 2-D block: along rows of whole 32-byte blocks of half or float,
    one count-form ReduceMax/ReduceMin with its index per row; otherwise scalar loops that keep the
    first index of the extreme (the sim's and numpy's ties; a NaN wins, as in numpy)."""
    r = op.results[0]
    out_elem = elem_of(r.type)
    if not (along_rows and t.elem in ("f16", "f32") and cols * SIZE[t.elem] % 32 == 0):
        return _scalar_arg(ctx, op, t, kind, axis, rows, cols, along_rows)
    ce, sz = t.elem, SIZE[t.elem]
    out = ctx.new_tile("i32", shape_of(r.type), ctx.name_for(op), result=r if out_elem == "i32" else None)
    dst = ctx.temp(ce, 32 // sz)
    tmp = ctx.temp(ce, reduce_tmp_elems(cols, sz, True))
    it = "i32" if sz == 4 else "i16"  # the index is stored in the bits of dst[1]
    bits = A.op("reinterpret", [dst.value], A.local_type(ir.Type.parse(it)))
    loop = ctx.for_range(0, rows)
    with ir.InsertionPoint(loop.body):
        i = loop.induction_variable
        A.op("reduce", [dst.value, ctx.at(t.value, ctx.mul(i, ctx.c64(cols))), tmp.value, ctx.c64(cols)],
             api=REDUCE[kind], cal_index=True)
        ctx.sync("V_S")
        idx = A.op("get_value", [bits, ctx.c64(1)], ir.Type.parse(it))
        if it == "i16":
            idx = arith.ExtUIOp(ir.IntegerType.get_signless(32), idx).result
        A.op("set_value", [out.value, i, idx])
        ctx.sync("S_V")
        scf.YieldOp([])
    after_scalar_writes(ctx, out)
    ctx.vmap[r] = out
    if out_elem != "i32":
        ctx.vmap.pop(r)
        finish(ctx, op, out, "i32")


def _scalar_arg(ctx, op, t, kind: str, axis: int, rows: int, cols: int, along_rows: bool) -> None:
    r = op.results[0]
    out_elem = elem_of(r.type)
    n, lines = (cols, rows) if along_rows else (rows, cols)
    out = ctx.new_tile(out_elem, shape_of(r.type), ctx.name_for(op), result=r)
    before_scalar_reads(ctx)
    loop = ctx.for_range(0, lines)
    with ir.InsertionPoint(loop.body):
        m = loop.induction_variable
        base = ctx.mul(m, ctx.c64(cols)) if along_rows else m
        A.op("set_value", [out.value, m, _arg_fold(ctx, t, kind, base, n, 1 if along_rows else cols, out_elem)])
        scf.YieldOp([])
    after_scalar_writes(ctx, out)
    ctx.vmap[r] = out


def _arg_fold(ctx, t, kind: str, base, n: int, step: int, out_elem: str) -> ir.Value:
    """The index (of type `out_elem`) of the first extreme of lanes base + j * step, j < n, as
    scalars (a NaN wins, as in numpy)."""
    ty, ity = ir.Type.parse(t.elem), ir.Type.parse(out_elem)
    first = A.op("get_value", [t.value, base], ty)
    inner = scf.ForOp(ctx.c64(1), ctx.c64(n), ctx.c64(1), [first, arith.ConstantOp(ity, 0).result])
    with ir.InsertionPoint(inner.body):
        j = inner.induction_variable
        acc, at = inner.inner_iter_args
        x = A.op("get_value", [t.value, ctx.add(base, ctx.mul(j, ctx.c64(step)))], ty)
        if t.elem in FLOAT:
            pred = arith.CmpFPredicate.OGT if kind == "argmax" else arith.CmpFPredicate.OLT
            better = arith.CmpFOp(pred, x, acc).result
            nan_x = arith.CmpFOp(arith.CmpFPredicate.UNE, x, x).result
            ord_acc = arith.CmpFOp(arith.CmpFPredicate.OEQ, acc, acc).result
            better = arith.OrIOp(better, arith.AndIOp(nan_x, ord_acc).result).result
        else:
            pred = arith.CmpIPredicate.sgt if kind == "argmax" else arith.CmpIPredicate.slt
            better = arith.CmpIOp(pred, x, acc).result
        jj = j if out_elem == "i64" else arith.TruncIOp(ity, j).result  # loop counters are i64
        scf.YieldOp([arith.SelectOp(better, x, acc).result, arith.SelectOp(better, jj, at).result])
    return inner.results[1]


def _reduce_i64(ctx, op, t, kind: str, axis: int) -> None:
    """Reductions of int64 blocks (no 64-bit lanes): exact scalar loops."""
    if kind in FOLD:
        return _scalar_reduce(ctx, op, kind, axis)
    shape = shape_of(op.operands[0].type)
    real = [d for d, s in enumerate(shape) if s != 1]
    r = op.results[0]
    if len(real) == 2:
        return _arg_along(ctx, op, t, kind, axis, shape[real[0]], shape[real[1]], axis == real[1])
    before_scalar_reads(ctx)
    v = _arg_fold(ctx, t, kind, ctx.c64(0), numel(shape), 1, elem_of(r.type))
    ctx.vmap[r] = Splat(elem_of(r.type), shape_of(r.type), scalar=v) if str(r.type).startswith("tensor<") else v


# ----- reductions the vector unit has no instruction for: scalar loops ---------------------------

def _reduce_int(ctx, t, kind: str, name):
    """An exact int16/int32 sum, max or min of a whole tile: halves folded with the vector unit's
    integer Add/Max/Min while both halves start on 32-byte blocks, then the rest as scalars."""
    per = 32 // SIZE[t.elem]
    n, src = t.count, t
    if n % 2 == 0 and n // 2 >= per and (n // 2) % per == 0:
        work = ctx.temp(t.elem, n // 2)
        while n % 2 == 0 and n // 2 >= per and (n // 2) % per == 0:
            n //= 2
            A.op("vec", [work.value, src.value, ctx.at(src.value, ctx.c64(n)), ctx.c64(n)], api=FOLD[kind])
            src = work
    before_scalar_reads(ctx)
    ty = ir.Type.parse(t.elem)
    loop = scf.ForOp(ctx.c64(1), ctx.c64(n), ctx.c64(1), [A.op("get_value", [src.value, ctx.c64(0)], ty)])
    with ir.InsertionPoint(loop.body):
        x = A.op("get_value", [src.value, loop.induction_variable], ty)
        scf.YieldOp(_combine(ctx, None, kind, [loop.inner_iter_args[0]], [x]))
    v = loop.results[0]
    kw = {"name": name} if name else {}
    return v, kw


def _combine(ctx, op, kind: str, accs: list, xs: list) -> list:
    """The combined scalars of the running values `accs` and the next lanes `xs`."""
    a, x = accs[0], xs[0]
    if kind == "prod":
        return [(arith.MulFOp if str(a.type) in FLOAT else arith.MulIOp)(a, x).result]
    if kind == "xor_sum":
        return [arith.XOrIOp(a, x).result]
    if kind in ("sum", "max", "min"):  # the sim's: NaN-ignoring float max/min (np.fmax/np.fmin)
        fl = str(a.type) in FLOAT
        cls = {"sum": (arith.AddFOp, arith.AddIOp), "max": (arith.MaxNumFOp, arith.MaxSIOp),
               "min": (arith.MinNumFOp, arith.MinSIOp)}[kind][0 if fl else 1]
        return [cls(a, x).result]
    return combine_scalars(ctx, op, accs, xs)


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
    work = ["f32" if kind in ("prod", "sum", "max", "min") and t.elem in ("f16", "bf16") else t.elem for t in tiles]
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
        if kind == "generic":  # the copies were written by the scalar unit: their UB is reused by vector ops
            ctx.sync("S_V")
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
        base = ctx.line_base(m, n, post)
        for out, v in zip(outs, fold(base)):
            A.op("set_value", [out.value, m, scalar_convert(ctx, v, out.elem)])
        scf.YieldOp([])
    for out, r in zip(outs, op.results):
        after_scalar_writes(ctx, out)
        ctx.vmap[r] = out
