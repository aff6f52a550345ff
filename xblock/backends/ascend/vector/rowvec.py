"""Per-row work on a 2-D [rows, cols] tile in UB with vector instructions only (no scalar read-back).

The idiom of Huawei's norm kernels (REFERENCE.md 5, "Row reductions in UB"), for rows that are whole
32-byte blocks:

- a row reduction folds each row to one 256-byte repeat with mask/repeat-form Add/Max/Min (one
  instruction per 256-byte column chunk, its repeats running over the rows), then WholeReduceSum/Max/
  Min leaves one result per repeat = per row, the rows' results contiguous. When the rows are too far
  apart for a repeat stride (uint8, in blocks) or the rows are so few that a count-form reduction per
  row issues fewer instructions, each row is reduced into its own 32-byte slot and one WholeReduce
  with mask 1 packs the slots.
- a broadcast of per-row values [rows] -> [rows, cols]: Brcb puts each value in a 32-byte block,
  then Copy with source block stride 0 fills the rows, one instruction per row or per column chunk,
  whichever issues fewer.

WholeReduceSum/Max/Min are spelled so in every CANN generation: CANN 8.x and 9.0 declare them, CANN
9.1 renamed them ReduceRepeat<ReduceType::...> and keeps the old names (deprecated) in
impl/basic_api/kernel_operator_vec_reduce_intf_impl.h; ReduceRepeat is absent from CANN 9.0, and no
compiler macro tells the releases apart (docs/ASCEND_MODEL.md §1a), so the old names are kept.
Repeat counts above 255 are split (row groups of 248 float / 240 half rows keep every start 32-byte
aligned).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import scf

from ....dialects import ascendc as A
from ..values import SIZE, round_up
from .tiles import FOLD, REDUCE, reduce_tmp_elems

MAX_REPEAT = 255
WHOLE = {"sum": "WholeReduceSum", "max": "WholeReduceMax", "min": "WholeReduceMin"}
VECTOR_LANES = (2, 4)  # Brcb and Copy move 16- and 32-bit elements on A2


def _repeat_op(ctx, api: str, form: str, dst, srcs, repeat: int, strides, mask: int | None = None) -> None:
    """One mask/repeat-form call (printed by emit.AscendCEmitter.repeat_call)."""
    attrs = {"api": api, "form": form, "strides": ir.DenseI64ArrayAttr.get([int(s) for s in strides])}
    if mask is not None:
        attrs["mask"] = mask
    A.op("vec", [dst, *srcs, ctx.c64(repeat)], **attrs)


def _groups(n: int, limit: int):
    """(start, count) pieces of range(n), each at most `limit` long."""
    for start in range(0, n, limit):
        yield start, min(limit, n - start)


def _row_limit(sz: int) -> int:
    """Rows per instruction: at most 255 repeats, and a multiple of a block's elements so that every
    group's packed results start 32-byte aligned."""
    blk = 32 // sz
    return MAX_REPEAT // blk * blk


def fold_instructions(rows: int, cols: int, sz: int) -> int | None:
    """Vector instructions of the fold-then-WholeReduce plan, or None where repeat strides cannot
    express it (a row of more than 255 blocks)."""
    per, blk = 256 // sz, 32 // sz
    if cols // blk > MAX_REPEAT:
        return None
    chunks, tail = divmod(cols, per)
    if chunks == 0 or (chunks == 1 and not tail):
        n = 1  # one WholeReduce
    elif chunks == 1:
        n = 3  # two WholeReduces and a count-form combine
    else:
        n = chunks + (1 if tail else 0)  # chunks - 1 folds, the tail's, one WholeReduce
    return n * -(-rows // _row_limit(sz))


def row_reduce(ctx, src: ir.Value, out: ir.Value, kind: str, rows: int, cols: int, elem: str) -> None:
    """out[r] = sum/max/min of src[r, :cols] for r < rows (half or float, rows of whole 32-byte blocks)."""
    sz = SIZE[elem]
    folds = fold_instructions(rows, cols, sz)
    if folds is None or folds > 2 * (rows + 1):
        return _slot_reduce(ctx, src, out, kind, rows, cols, elem)
    per, blk = 256 // sz, 32 // sz
    stride = cols // blk  # blocks from one row to the next
    chunks, tail = divmod(cols, per)
    limit = _row_limit(sz)
    if chunks == 0 or (chunks == 1 and not tail):
        for r0, n in _groups(rows, limit):
            _whole(ctx, kind, ctx.at(out, r0), ctx.at(src, r0 * cols), min(cols, per), n, stride)
        return
    if chunks == 1:  # one full chunk and a tail: reduce both, then combine the two results
        first, last = ctx.temp(elem, rows), ctx.temp(elem, rows)
        for r0, n in _groups(rows, limit):
            _whole(ctx, kind, ctx.at(first.value, r0), ctx.at(src, r0 * cols), per, n, stride)
            _whole(ctx, kind, ctx.at(last.value, r0), ctx.at(src, r0 * cols + per), tail, n, stride)
        A.op("vec", [out, first.value, last.value, ctx.c64(rows)], api=FOLD[kind])
        return
    work = ctx.temp(elem, rows * per)  # one 256-byte repeat per row
    api = FOLD[kind]
    for r0, n in _groups(rows, limit):
        w, s = ctx.at(work.value, r0 * per), ctx.at(src, r0 * cols)
        _repeat_op(ctx, api, "binary", w, [s, ctx.at(s, per)], n, (1, 1, 1, 8, stride, stride), per)
        for c in range(2, chunks):
            _repeat_op(ctx, api, "binary", w, [w, ctx.at(s, c * per)], n, (1, 1, 1, 8, 8, stride), per)
        if tail:  # masked-off lanes keep the running values
            _repeat_op(ctx, api, "binary", w, [w, ctx.at(s, chunks * per)], n, (1, 1, 1, 8, 8, stride), tail)
        _whole(ctx, kind, ctx.at(out, r0), w, per, n, 8)


def _whole(ctx, kind: str, dst, src, mask: int, repeat: int, src_rep: int) -> None:
    """WholeReduce<kind>: one value per repeat, packed (dstRepStride 1, value only)."""
    _repeat_op(ctx, WHOLE[kind], "whole_reduce", dst, [src], repeat, (1, 1, src_rep), mask)


def _slot_reduce(ctx, src, out, kind: str, rows: int, cols: int, elem: str) -> None:
    """A count-form reduction per row into its own 32-byte slot, then one WholeReduce (mask 1) per
    group of rows packs the slots."""
    sz = SIZE[elem]
    blk = 32 // sz
    slots = ctx.temp(elem, rows * blk)
    tmp = ctx.temp(elem, reduce_tmp_elems(cols, sz, False))
    loop = ctx.for_range(0, rows)
    with ir.InsertionPoint(loop.body):
        i = loop.induction_variable
        A.op("reduce", [ctx.at(slots.value, ctx.mul(i, ctx.c64(blk))), ctx.at(src, ctx.mul(i, ctx.c64(cols))),
                        tmp.value, ctx.c64(cols)], api=REDUCE[kind], cal_index=False)
        scf.YieldOp([])
    for r0, n in _groups(rows, _row_limit(sz)):
        _whole(ctx, kind, ctx.at(out, r0), ctx.at(slots.value, r0 * blk), 1, n, 1)


def row_broadcast(ctx, src: ir.Value, out: ir.Value, elem: str, rows: int, cols: int) -> None:
    """out[r, c] = src[r] for r < rows, c < cols (16- or 32-bit elements, rows of whole 32-byte blocks)."""
    sz = SIZE[elem]
    per, blk = 256 // sz, 32 // sz
    stride = cols // blk
    chunks, tail = divmod(cols, per)
    blocks = ctx.temp(elem, round_up(rows, 8) * blk)  # block r holds src[r] in every lane
    for g0, n in _groups(-(-rows // 8), MAX_REPEAT):
        _repeat_op(ctx, "Brcb", "brcb", ctx.at(blocks.value, g0 * 8 * blk), [ctx.at(src, g0 * 8)], n, (1, 8))
    pieces = [(c * per, per) for c in range(chunks)] + ([(chunks * per, tail)] if tail else [])
    by_column = len(pieces) * -(-rows // MAX_REPEAT) if stride <= 4095 else None
    by_row = rows * (-(-chunks // MAX_REPEAT) + (1 if tail else 0))
    if by_column is not None and by_column <= by_row:  # repeats over the rows, one call per column chunk
        for r0, n in _groups(rows, MAX_REPEAT):
            for c0, mask in pieces:
                _repeat_op(ctx, "Copy", "copy", ctx.at(out, r0 * cols + c0), [ctx.at(blocks.value, r0 * blk)], n,
                           (1, 0, stride, 1), mask)
        return
    loop = ctx.for_range(0, rows)  # repeats along one row, one call per row
    with ir.InsertionPoint(loop.body):
        i = loop.induction_variable
        row, block = ctx.at(out, ctx.mul(i, ctx.c64(cols))), ctx.at(blocks.value, ctx.mul(i, ctx.c64(blk)))
        for c0, n in _groups(chunks, MAX_REPEAT):
            _repeat_op(ctx, "Copy", "copy", ctx.at(row, c0 * per), [block], n, (1, 0, 8, 0), per)
        if tail:
            _repeat_op(ctx, "Copy", "copy", ctx.at(row, chunks * per), [block], 1, (1, 0, 8, 0), tail)
        scf.YieldOp([])
