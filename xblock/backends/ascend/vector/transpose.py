"""2-D transposes on the vector unit (TransDataTo5HD), shared by the permute rule (layout.py) and
the blocked scans (reduce.py); not a rule module."""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from ....dialects import ascendc as A

B8, B16, B32 = ("i8", "ui8"), ("f16", "bf16", "i16", "ui16"), ("f32", "i32", "ui32")


def can_transpose(elem: str, rows: int, cols: int) -> bool:
    """Whether `transpose` covers a rows x cols tile of `elem`: 16-bit elements in 16 x 16 blocks,
    32-bit in 16 x 8 (rows a multiple of 16, so that every output row is whole 32-byte blocks), 8-bit
    in 32 x 32 (rows and columns whole 32-byte DataBlocks)."""
    if elem in B8:
        return rows % 32 == 0 and cols % 32 == 0 and cols // 32 <= 255
    per = 16 if elem in B16 else 8 if elem in B32 else 0
    return per > 0 and rows % 16 == 0 and cols % per == 0 and cols // per <= 255


def transpose(ctx, src: ir.Value, dst: ir.Value, elem: str, rows: int, cols: int, batch: int = 1) -> None:
    """dst (batch x cols x rows) = src (batch x rows x cols) transposed, by TransDataTo5HD: one call per
    16 source rows, repeating over the column blocks (16 columns of 16-bit, 8 of 32-bit data per
    repeat). Source DataBlock j of a repeat is row j of the 16-row group; the output rows are `rows`
    elements apart, so each repeat moves the destination on by `rows` DataBlocks. bfloat16 moves as
    half (the instruction copies bits). 8-bit elements: `_transpose_b8`."""
    if elem in B8:
        _transpose_b8(ctx, src, dst, rows, cols, batch)
        return
    if elem == "bf16":
        half = ir.Type.parse("f16")
        src = A.op("reinterpret", [src], A.local_type(half))
        dst = A.op("reinterpret", [dst], A.local_type(half))
        elem = "f16"
    per = 16 if elem in B16 else 8
    reps = cols // per
    step = 1 if reps > 1 else 0  # one repeat still adds its stride once: 0 keeps the lists' addresses

    def call(b, q):
        base = ctx.mul(b, ctx.c64(rows * cols))
        s_at = _at(ctx, src, ctx.add(base, ctx.mul(q, ctx.c64(16 * cols))))
        d_at = _at(ctx, dst, ctx.add(base, ctx.mul(q, ctx.c64(16))))
        A.op("trans_data_5hd", [d_at, s_at], src_stride=cols, dst_stride=rows, repeat=reps,
             dst_rep=rows * step, src_rep=step)

    _each_group(ctx, batch, rows // 16, call)


def _transpose_b8(ctx, src: ir.Value, dst: ir.Value, rows: int, cols: int, batch: int) -> None:
    """The 8-bit form: a DataBlock holds 32 elements and one repeat transposes 16 x 16 of them, from
    one half of each of 16 source blocks (srcHighHalf) into one half of each of 16 destination blocks
    (dstHighHalf). Per 32 x 32 block: source rows 16v..16v+15 (v = 0, 1) become the half v of the
    output columns, source columns 16h..16h+15 (h = srcHighHalf) the output rows 16h..16h+15. So four
    calls per 32-row group, each repeating over the column blocks: the source moves on by one
    DataBlock, the destination by 32 output rows (`rows` DataBlocks)."""
    reps = cols // 32
    step = 1 if reps > 1 else 0  # repeatTimes == 1 still adds its stride once (the documented quirk)
    n = rows // 32  # 32-row groups per matrix

    def call(b, q):
        base = ctx.mul(b, ctx.c64(rows * cols))
        s_row = ctx.add(base, ctx.mul(q, ctx.c64(32 * cols)))  # the group's first source row
        d_col = ctx.add(base, ctx.mul(q, ctx.c64(32)))  # its output columns' DataBlock in output row 0
        for v in (0, 1):
            for h in (0, 1):
                s_at = _at(ctx, src, ctx.add(s_row, ctx.c64(16 * v * cols)))  # whole blocks: h picks the half
                d_at = _at(ctx, dst, ctx.add(d_col, ctx.c64(16 * h * rows)))
                A.op("trans_data_5hd", [d_at, s_at], src_stride=cols, dst_stride=rows, repeat=reps,
                     dst_rep=rows * step, src_rep=step, dst_high=v, src_high=h)

    _each_group(ctx, batch, n, call)


def _each_group(ctx, batch: int, n: int, call) -> None:
    """call(b, q) for every row group q < n of every matrix b < batch: inline for one group, else in a
    loop over batch * n."""
    def split(g):
        if batch == 1:
            return ctx.c64(0), g
        if n == 1:
            return g, ctx.c64(0)
        return arith.DivSIOp(g, ctx.c64(n)).result, arith.RemSIOp(g, ctx.c64(n)).result

    if batch * n == 1:
        call(ctx.c64(0), ctx.c64(0))
        return
    loop = ctx.for_range(0, batch * n)
    with ir.InsertionPoint(loop.body):
        call(*split(loop.induction_variable))
        scf.YieldOp([])


def _at(ctx, v: ir.Value, offset: ir.Value) -> ir.Value:
    """v[offset], or v itself at offset 0."""
    return v if ctx.const_of(offset) == 0 else ctx.at(v, offset)
