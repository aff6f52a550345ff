"""The rule of xb.scan: cumsum, cumprod and associative_scan, along any axis, on the vector unit.

A scan is a chain of row combines, row i = combine(row i - 1, row i) (`combine.RowCombine`: one
Add/Mul for cumsum/cumprod, the user's combine function lowered by the rule table otherwise), each
over all the lanes of the other axes at once. Reverse scans run the chain from the last row, with
the later rows as the accumulator, as the sim does. Which rows:

- `_rows`: the axis is not the last (axis 0 of an [M, N] block): the block's own rows of N lanes.
- `_transposed`: along the last axis of R rows of L: TransDataTo5HD turns the block (rows padded
  to 16) into L rows of R lanes, the chain runs down them, and a second transpose brings it back.
- `_blocked`: along each of a few long rows (a 1-D block): the row, padded to 256 k lanes, is a
  (B x 16) matrix; a chain down its transpose scans every 16-lane segment, a chain of 16-lane rows
  carries the segment totals, and one combine per segment column adds each segment's carry.
The cheaper of the last two (counted in combines) is used. Rows must be whole 32-byte blocks; what
no plan covers (rows of 4 floats, int8/int64 data, a combine function with control flow) is a
scalar GetValue/SetValue loop in the sim's order, with a warning.

Order: `_rows` and `_transposed` combine each lane in the sim's order (bit-exact); `_blocked`
combines within segments of 16 and then across segments, which gives the sim's result for an
associative combine (Triton requires one): integer scans are exact, a float sum is within rounding
of numpy's sequential one. cumsum/cumprod of half run in float and round once, as the sim does.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from .....dialects import ascendc as A
from ...values import FLOAT, SIZE, Splat, elem_of, numel, round_up, shape_of
from ...vector.combine import BUILTIN, RowCombine, combine_scalars, compute_elem, vector_reason, work
from ...vector.tiles import after_scalar_writes, as_elem, before_scalar_reads, cast, fill, scalar_convert
from ...vector.transpose import can_transpose, transpose
from ..rules import rule


@rule("xb.scan")
def _lower_scan(ctx, op):
    kind = ir.StringAttr(op.attributes["kind"]).value
    axis = int(ir.IntegerAttr(op.attributes["axis"]).value)
    reverse = ir.BoolAttr(op.attributes["reverse"]).value
    if kind not in BUILTIN and kind != "generic":
        raise ctx.error(f"scan '{kind}' is not supported")
    shape = shape_of(op.operands[0].type)
    elems = [elem_of(r.type) for r in op.results]
    pre, n, post = numel(shape[:axis]), shape[axis], numel(shape[axis + 1:])
    ces = [compute_elem(kind, e) for e in elems]
    why = vector_reason(op, kind, elems)
    plan = None if why else "copy" if n == 1 else _plan(pre, n, post, ces)
    if plan is None:
        why = why or (f"rows of {post if post > 1 else n} {ces[0]} lanes, not whole 32-byte blocks")
        ctx.warn(f"{_article(kind)} of a {tuple(shape)} {elems[0]} block runs as a scalar GetValue/SetValue "
                 f"loop (the vector scan needs rows of whole 32-byte blocks of f16/f32/i16/i32 lanes: {why})")
        return _scalar(ctx, op, kind, shape, axis, reverse)
    srcs = [as_elem(ctx, ctx.tile(s), ce) for s, ce in zip(op.operands, ces)]
    name = ctx.name_for(op) if len(elems) == 1 else None
    outs = [ctx.new_tile(ce, shape, name, result=r) if ce == e else ctx.temp(ce, shape)
            for r, e, ce in zip(op.results, elems, ces)]
    if plan == "copy":  # a scan of one element
        for s, o in zip(srcs, outs):
            A.op("data_copy", [o.value, s.value, ctx.c64(s.padded)])
    else:
        PLANS[plan](ctx, op, kind, ces, srcs, outs, (pre, n, post), reverse)
    for r, e, ce, o in zip(op.results, elems, ces, outs):
        if ce != e:
            final = ctx.new_tile(e, shape, name, result=r)
            cast(ctx, final, o)
            o = final
        ctx.vmap[r] = o


def _article(kind: str) -> str:
    return "an associative_scan" if kind == "generic" else f"a {kind}"


def _plan(pre: int, n: int, post: int, ces: list) -> str | None:
    """The cheapest way to run the scan on rows of whole 32-byte blocks, or None."""
    if post > 1:
        return "rows" if all(post * SIZE[c] % 32 == 0 for c in ces) else None
    rows, cols = pre, n
    rp = round_up(rows, 16)
    costs = []
    if cols % 16 == 0 and all(can_transpose(c, rp, cols) and can_transpose(c, cols, rp) for c in ces):
        costs.append((cols, "transposed"))
    lp = round_up(cols, 256)
    if all(cols * SIZE[c] % 32 == 0 and can_transpose(c, 16, lp // 16) for c in ces):
        costs.append((rows * (31 + lp // 16), "blocked"))
    return min(costs)[1] if costs else None


def _at(ctx, v: ir.Value, offset) -> ir.Value:
    """v[offset], or v itself at a constant offset 0."""
    zero = offset == 0 if isinstance(offset, int) else ctx.const_of(offset) == 0
    return v if zero else ctx.at(v, offset)


def _loop(ctx, lo: int, hi: int, body) -> None:
    """body(i) for i in [lo, hi): an scf.for, or one call inline."""
    if hi - lo <= 0:
        return
    if hi - lo == 1:
        body(ctx.c64(lo))
        return
    loop = ctx.for_range(lo, hi)
    with ir.InsertionPoint(loop.body):
        body(loop.induction_variable)
        scf.YieldOp([])


def _chain(ctx, comb, vals: list, rows: int, stride: int, reverse: bool, base=None) -> None:
    """In place, row r = comb(row r - 1, row r) for r = 1 .. rows - 1 (rows `stride` elements apart
    from `base`), or from the last row down with row r + 1 as the accumulator."""
    def at(v, r):
        off = ctx.mul(r, ctx.c64(stride))
        return _at(ctx, v, off if base is None else ctx.add(base, off))

    def step(i):
        r = ctx.sub(ctx.c64(rows - 1), i) if reverse else i
        prev = ctx.add(r, ctx.c64(1)) if reverse else ctx.sub(r, ctx.c64(1))
        cur = [at(v, r) for v in vals]
        comb(cur, [at(v, prev) for v in vals], cur)

    _loop(ctx, 1, rows, step)


def _rows(ctx, op, kind, ces, srcs, outs, dims, reverse) -> None:
    """The axis is not the last: the block's own rows (`post` lanes each), chained in place."""
    pre, n, post = dims
    generic = kind not in BUILTIN
    comb = RowCombine(ctx, op, kind, ces, post)
    works = [work(ctx, ce, s.count, True) for ce, s in zip(ces, srcs)] if generic else outs
    for w, s in zip(works, srcs):
        A.op("data_copy", [w.value, s.value, ctx.c64(s.padded)])
    vals = [w.value for w in works]
    _loop(ctx, 0, pre, lambda p: _chain(ctx, comb, vals, n, post, reverse, ctx.mul(p, ctx.c64(n * post))))
    if generic:
        for o, w in zip(outs, works):
            A.op("data_copy", [o.value, w.value, ctx.c64(o.padded)])


def _transposed(ctx, op, kind, ces, srcs, outs, dims, reverse) -> None:
    """Along the last axis of R rows of L: transpose (rows padded to 16 with zeros), chain down the
    L transposed rows of Rp lanes, transpose back."""
    rows, cols, _ = dims
    rp = round_up(rows, 16)
    generic = kind not in BUILTIN
    comb = RowCombine(ctx, op, kind, ces, rp)
    ts, pads = [], []
    for ce, s in zip(ces, srcs):
        src = s
        if rp != rows:
            src = ctx.temp(ce, rp * cols)
            A.op("data_copy", [src.value, s.value, ctx.c64(rows * cols)])
            fill(ctx, src, ctx.c64(rows * cols), ctx.c64((rp - rows) * cols), Splat(ce, (1,), const=0))
            pads.append(src)
        t = work(ctx, ce, rp * cols, generic)
        transpose(ctx, src.value, t.value, ce, rp, cols)
        ts.append(t)
    _chain(ctx, comb, [t.value for t in ts], cols, rp, reverse)
    for i, (ce, t, o) in enumerate(zip(ces, ts, outs)):
        if rp == rows:
            transpose(ctx, t.value, o.value, ce, cols, rp)
        else:
            transpose(ctx, t.value, pads[i].value, ce, cols, rp)
            A.op("data_copy", [o.value, pads[i].value, ctx.c64(rows * cols)])


def _blocked(ctx, op, kind, ces, srcs, outs, dims, reverse) -> None:
    """Along each of R long rows of L lanes (L * size a multiple of 32 bytes), one row at a time.

    The row, padded to Lp = 256 k lanes (after it; before it for a reverse scan, so the padding comes
    last in scan order), is Y (B x 16), B = Lp / 16. Z = Y^T (16 x B) chained down its rows scans
    each 16-lane segment of Y. Y2 = Z^T holds the segments' totals in column 15 (column 0 reversed);
    a chain of B 16-lane rows C[b] = C[b - 1] (+) Y2[b - 1] puts the carry into segment b (the total
    of the segments before it) in C[b][15]; row 15 of C^T is the carries E, and Z[w] = E (+) Z[w]
    for each of the 16 rows. Segment 0 has no carry: its lanes are taken from Y2 unchanged."""
    rows, cols, _ = dims
    generic = kind not in BUILTIN
    lp = round_up(cols, 256)
    b = lp // 16
    lead = lp - cols if reverse else 0  # where the row sits in the padded one
    seg = 0 if reverse else 15  # the column of the segment totals
    fix = (b - 1) * 16 if reverse else 0  # the segment without a carry
    k = len(ces)
    ys = [work(ctx, ce, lp, generic) if lp != cols else None for ce in ces]
    zs, y2s, cs = ([work(ctx, ce, lp, generic) for ce in ces] for _ in range(3))
    cts = [y if y is not None else work(ctx, ce, lp, generic) for y, ce in zip(ys, ces)]
    by_b, by_16 = RowCombine(ctx, op, kind, ces, b), RowCombine(ctx, op, kind, ces, 16)

    def one(base):
        for i in range(k):
            ce, src = ces[i], _at(ctx, srcs[i].value, base)
            if ys[i] is not None:
                fill(ctx, ys[i], ctx.c64(0), ctx.c64(lp), Splat(ce, (1,), const=0))
                A.op("data_copy", [_at(ctx, ys[i].value, lead), src, ctx.c64(cols)])
                src = ys[i].value
            transpose(ctx, src, zs[i].value, ce, b, 16)
        _chain(ctx, by_b, [z.value for z in zs], 16, b, reverse)
        for i in range(k):
            transpose(ctx, zs[i].value, y2s[i].value, ces[i], 16, b)
        _carries(ctx, by_16, [c.value for c in cs], [y.value for y in y2s], b, reverse)
        for i in range(k):
            transpose(ctx, cs[i].value, cts[i].value, ces[i], b, 16)
        carry = [_at(ctx, ct.value, seg * b) for ct in cts]

        def add_carry(w):
            z = [_at(ctx, zv.value, ctx.mul(w, ctx.c64(b))) for zv in zs]
            by_b(z, carry, z)

        _loop(ctx, 0, 16, add_carry)
        for i in range(k):
            dst = _at(ctx, outs[i].value, base)
            full = ys[i] is None
            transpose(ctx, zs[i].value, dst if full else cs[i].value, ces[i], 16, b)
            A.op("data_copy", [_at(ctx, dst if full else cs[i].value, fix), _at(ctx, y2s[i].value, fix),
                               ctx.c64(16)])
            if not full:
                A.op("data_copy", [dst, _at(ctx, cs[i].value, lead), ctx.c64(cols)])

    _loop(ctx, 0, rows, lambda r: one(ctx.mul(r, ctx.c64(cols))))


def _carries(ctx, comb, cs: list, y2s: list, b: int, reverse: bool) -> None:
    """C[b] = C[b - 1] (+) Y2[b - 1] for b >= 2, C[1] = Y2[0] (C[0] = Y2[0], unused); reversed, from
    the last row down with C[b + 1] (+) Y2[b + 1]."""
    first, second = (b - 1, b - 2) if reverse else (0, 1)
    src = (b - 1) * 16 if reverse else 0
    for c, y in zip(cs, y2s):
        A.op("data_copy", [_at(ctx, c, first * 16), _at(ctx, y, src), ctx.c64(16)])
        A.op("data_copy", [_at(ctx, c, second * 16), _at(ctx, y, src), ctx.c64(16)])

    def step(i):
        r = ctx.sub(ctx.c64(b - 1), i) if reverse else i
        prev = ctx.mul(ctx.add(r, ctx.c64(1)) if reverse else ctx.sub(r, ctx.c64(1)), ctx.c64(16))
        at = ctx.mul(r, ctx.c64(16))
        comb([ctx.at(c, at) for c in cs], [ctx.at(c, prev) for c in cs], [ctx.at(y, prev) for y in y2s])

    _loop(ctx, 2, b, step)


PLANS = {"rows": _rows, "transposed": _transposed, "blocked": _blocked}


# ----- the scalar fallback ---------------------------------------------------------------------

def _scalar(ctx, op, kind, shape, axis, reverse) -> None:
    """The scan as scalar GetValue/SetValue loops along `axis`, lane by lane, in the sim's order."""
    elems = [elem_of(r.type) for r in op.results]
    tiles = [ctx.tile(s) for s in op.operands]
    accs = [compute_elem(kind, e) for e in elems]
    name = ctx.name_for(op) if len(elems) == 1 else None
    outs = [ctx.new_tile(e, shape, name, result=r) for e, r in zip(elems, op.results)]
    pre, n, post = numel(shape[:axis]), shape[axis], numel(shape[axis + 1:])
    before_scalar_reads(ctx)
    lanes = ctx.for_range(0, pre * post)
    with ir.InsertionPoint(lanes.body):
        m = lanes.induction_variable
        base = ctx.line_base(m, n, post)

        def at(j):
            j = ctx.sub(ctx.c64(n - 1), j) if reverse else j
            return ctx.add(base, ctx.mul(j, ctx.c64(post)))

        def lane(idx):
            return [scalar_convert(ctx, A.op("get_value", [t.value, idx], ir.Type.parse(t.elem)), a)
                    for t, a in zip(tiles, accs)]

        def put(idx, vals):
            for o, v in zip(outs, vals):
                A.op("set_value", [o.value, idx, scalar_convert(ctx, v, o.elem)])

        first = at(ctx.c64(0))
        init = lane(first)
        put(first, init)
        loop = scf.ForOp(ctx.c64(1), ctx.c64(n), ctx.c64(1), init)
        with ir.InsertionPoint(loop.body):
            idx = at(loop.induction_variable)
            nxt = _scalar_combine(ctx, op, kind, list(loop.inner_iter_args), lane(idx))
            put(idx, nxt)
            scf.YieldOp(nxt)
        scf.YieldOp([])
    for o, r in zip(outs, op.results):
        after_scalar_writes(ctx, o)
        ctx.vmap[r] = o


def _scalar_combine(ctx, op, kind: str, accs: list, xs: list) -> list:
    """combine(accs, xs) as C++ scalars: an add or multiply, or the combine region lowered on scalars."""
    a, x = accs[0], xs[0]
    if kind in BUILTIN:
        f = str(a.type) in FLOAT
        cls = (arith.AddFOp if f else arith.AddIOp) if kind == "cumsum" else (arith.MulFOp if f else arith.MulIOp)
        return [cls(a, x).result]
    return combine_scalars(ctx, op, accs, xs)
