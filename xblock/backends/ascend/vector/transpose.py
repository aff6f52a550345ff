"""2-D transposes on the vector unit (TransDataTo5HD), shared by the permute rule (layout.py) and
the blocked scans (reduce.py); not a rule module."""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from ....dialects import ascendc as A

B16, B32 = ("f16", "bf16", "i16", "ui16"), ("f32", "i32", "ui32")


def can_transpose(elem: str, rows: int, cols: int) -> bool:
    """Whether `transpose` covers a rows x cols tile of `elem`: 16-bit elements in 16 x 16 blocks,
    32-bit in 16 x 8 (rows a multiple of 16, so that every output row is whole 32-byte blocks)."""
    per = 16 if elem in B16 else 8 if elem in B32 else 0
    return per > 0 and rows % 16 == 0 and cols % per == 0 and cols // per <= 255


def transpose(ctx, src: ir.Value, dst: ir.Value, elem: str, rows: int, cols: int, batch: int = 1) -> None:
    """dst (batch x cols x rows) = src (batch x rows x cols) transposed, by TransDataTo5HD: one call per
    16 source rows, repeating over the column blocks (16 columns of 16-bit, 8 of 32-bit data per
    repeat). Source DataBlock j of a repeat is row j of the 16-row group; the output rows are `rows`
    elements apart, so each repeat moves the destination on by `rows` DataBlocks. bfloat16 moves as
    half (the instruction copies bits)."""
    if elem == "bf16":
        half = ir.Type.parse("f16")
        src = A.op("reinterpret", [src], A.local_type(half))
        dst = A.op("reinterpret", [dst], A.local_type(half))
        elem = "f16"
    per = 16 if elem in B16 else 8
    reps = cols // per
    groups = batch * (rows // 16)
    step = 1 if reps > 1 else 0  # one repeat still adds its stride once: 0 keeps the lists' addresses

    def call(g):
        n = rows // 16  # 16-row groups per matrix
        if batch == 1:
            b, q = ctx.c64(0), g
        elif n == 1:
            b, q = g, ctx.c64(0)
        else:
            b, q = arith.DivSIOp(g, ctx.c64(n)).result, arith.RemSIOp(g, ctx.c64(n)).result
        base = ctx.mul(b, ctx.c64(rows * cols))
        s_at = _at(ctx, src, ctx.add(base, ctx.mul(q, ctx.c64(16 * cols))))
        d_at = _at(ctx, dst, ctx.add(base, ctx.mul(q, ctx.c64(16))))
        A.op("trans_data_5hd", [d_at, s_at], src_stride=cols, dst_stride=rows, repeat=reps,
             dst_rep=rows * step, src_rep=step)

    if groups == 1:
        call(ctx.c64(0))
        return
    loop = ctx.for_range(0, groups)
    with ir.InsertionPoint(loop.body):
        call(loop.induction_variable)
        scf.YieldOp([])



def _at(ctx, v: ir.Value, offset: ir.Value) -> ir.Value:
    """v[offset], or v itself at offset 0."""
    return v if ctx.const_of(offset) == 0 else ctx.at(v, offset)
