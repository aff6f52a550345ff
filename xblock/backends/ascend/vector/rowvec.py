"""Per-row work on a 2-D [rows, cols] tile in UB with vector instructions only (no scalar read-back).

The idiom of Huawei's norm kernels (REFERENCE.md 5, "Row reductions in UB"), for rows that are whole
32-byte blocks:

- a row reduction folds each row to one 256-byte repeat with mask/repeat-form Add/Max/Min (one
  instruction per 256-byte column chunk, its repeats running over the rows), then WholeReduceSum/Max/
  Min leaves one result per repeat = per row, the rows' results contiguous. When the rows are too far
  apart for a repeat stride (uint8, in blocks) or the rows are so few that a count-form reduction per
  row issues fewer instructions, each row is reduced into its own 32-byte slot and one WholeReduce
  with mask 1 packs the slots.
  Float rows folded to one repeat end in two BlockReduceSum/Max/Min passes instead (`_blocks`): the
  same binary tree of lanes, at one cycle a repeat where WholeReduce takes 7 (dev kit table 8).
- a broadcast of per-row values [rows] -> [rows, cols]: Brcb puts each value in a 32-byte block,
  then Copy with source block stride 0 fills the rows, one instruction per row or per column chunk,
  whichever issues fewer. When only binary ops read the broadcast (`x - m[:, None]`, `acc *
  alpha[:, None]`), it stays the Brcb blocks (`RowBlocks`) and each op reads them with source block
  stride 0 (`row_binary`): the Copy and the full tile are never made.

WholeReduceSum/Max/Min are spelled so in every CANN generation: CANN 8.x and 9.0 declare them, CANN
9.1 renamed them ReduceRepeat<ReduceType::...> and keeps the old names (deprecated) in
impl/basic_api/kernel_operator_vec_reduce_intf_impl.h; ReduceRepeat is absent from CANN 9.0, and no
compiler macro tells the releases apart (docs/ASCEND_MODEL.md §1a), so the old names are kept.
Repeat counts above 255 are split (row groups of 248 float / 240 half rows keep every start 32-byte
aligned).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import scf

from ....dialects import ascendc as A
from ..values import SIZE, Tile, round_up
from .tiles import FOLD, REDUCE, reduce_tmp_elems

MAX_REPEAT = 255
WHOLE = {"sum": "WholeReduceSum", "max": "WholeReduceMax", "min": "WholeReduceMin"}
BLOCK = {"sum": "BlockReduceSum", "max": "BlockReduceMax", "min": "BlockReduceMin"}
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
            if cols == per and elem == "f32":
                _blocks(ctx, kind, ctx.at(out, r0), ctx.at(src, r0 * cols), n, stride)
            else:
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
        if elem == "f32":
            _blocks(ctx, kind, ctx.at(out, r0), w, n, 8)
        else:
            _whole(ctx, kind, ctx.at(out, r0), w, per, n, 8)


def _blocks(ctx, kind: str, dst, src, repeat: int, src_rep: int) -> None:
    """One float result per 64-lane repeat of `src` (a row each) in two BlockReduce<kind> passes: the 8 blocks
    of each repeat to 8 partials (contiguous), then each row's 8 partials (one block) to its result. A float
    BlockReduce moves 64 elements a cycle, WholeReduce 64/7 (dev kit table 8), and a sum adds the same
    binary tree of lanes as WholeReduceSum."""
    part = ctx.temp("f32", repeat * 8)
    _repeat_op(ctx, BLOCK[kind], "block_reduce", part.value, [src], repeat, (1, 1, src_rep), 64)
    full, left = divmod(repeat, 8)
    if full:
        _repeat_op(ctx, BLOCK[kind], "block_reduce", dst, [part.value], full, (1, 1, 8), 64)
    if left:  # the last rows' partials: a masked repeat of whole blocks, `left` results
        _repeat_op(ctx, BLOCK[kind], "block_reduce", ctx.at(dst, full * 8), [ctx.at(part.value, full * 64)], 1,
                   (1, 1, 8), left * 8)


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


def _brcb(ctx, src: ir.Value, blocks: ir.Value, elem: str, rows: int) -> None:
    """Block r of `blocks` = src[r] in every lane (Brcb, 8 rows a repeat)."""
    blk = 32 // SIZE[elem]
    for g0, n in _groups(-(-rows // 8), MAX_REPEAT):
        _repeat_op(ctx, "Brcb", "brcb", ctx.at(blocks, g0 * 8 * blk), [ctx.at(src, g0 * 8)], n, (1, 8))


@dataclass
class RowBlocks(Tile):
    """A [rows, cols] block of per-row values (`v[:, None]` broadcast along the row) held as one 32-byte block
    per row, each lane the row's value (Brcb): the binary ops that read it (`x - m[:, None]`, `acc *
    alpha[:, None]`) take the block with a source block stride of 0 (`row_binary`), so the broadcast is
    never written out. `shape` is the logical [rows, cols]; `bytes` the blocks'."""

    rows: int = 0
    cols: int = 0


def row_blocks(ctx, src: ir.Value, elem: str, rows: int, cols: int, name: str | None = None) -> RowBlocks:
    """src [rows] as a RowBlocks of [rows, cols] (16/32-bit elements, rows of whole 32-byte blocks)."""
    blk = 32 // SIZE[elem]
    t = ctx.new_tile(elem, (round_up(rows, 8) * blk,), name)
    _brcb(ctx, src, t.value, elem, rows)
    return RowBlocks(t.value, elem, (rows, cols), t.bytes, t.kind, t.queue, t.offset, t.parent, t.refs, line=t.line,
                     rows=rows, cols=cols)


def row_binary_ok(rb: RowBlocks, other) -> bool:
    """Whether `row_binary` can combine `rb` with the tile `other` (same type and shape; repeat strides of
    at most 255 blocks, uint8 in BinaryRepeatParams)."""
    return isinstance(other, Tile) and not isinstance(other, RowBlocks) and other.elem == rb.elem and \
        tuple(other.shape) == (rb.rows, rb.cols) and rb.cols // (32 // SIZE[rb.elem]) <= MAX_REPEAT


def row_binary(ctx, api: str, out, a, b) -> None:
    """out = a <api> b where one of a, b is a RowBlocks and the other a full [rows, cols] tile: per 256-byte
    column chunk, one mask/repeat-form instruction whose repeats run over the rows, the row's block read
    with block stride 0 (repeat stride 1 block)."""
    rb, first = (a, True) if isinstance(a, RowBlocks) else (b, False)
    full = b if first else a
    sz = SIZE[rb.elem]
    per, blk = 256 // sz, 32 // sz
    rows, cols = rb.rows, rb.cols
    stride = cols // blk
    chunks, tail = divmod(cols, per)
    pieces = [(c * per, per) for c in range(chunks)] + ([(chunks * per, tail)] if tail else [])
    strides = (1, 0, 1, stride, 1, stride) if first else (1, 1, 0, stride, stride, 1)

    def piece(r0, n, c0, mask):
        f = ctx.at(full.value, ctx.add(ctx.c64(r0 * cols), c0) if isinstance(c0, ir.Value) else r0 * cols + c0)
        r = ctx.at(rb.value, r0 * blk)
        dst = ctx.at(out.value, ctx.add(ctx.c64(r0 * cols), c0) if isinstance(c0, ir.Value) else r0 * cols + c0)
        _repeat_op(ctx, api, "binary", dst, [r, f] if first else [f, r], n, strides, mask)

    for r0, n in _groups(rows, MAX_REPEAT):
        if chunks > 2:  # a loop over the full column chunks (readable C++), then the tail
            loop = ctx.for_range(0, chunks)
            with ir.InsertionPoint(loop.body):
                piece(r0, n, ctx.mul(loop.induction_variable, ctx.c64(per)), per)
                scf.YieldOp([])
            if tail:
                piece(r0, n, chunks * per, tail)
            continue
        for c0, mask in pieces:
            piece(r0, n, c0, mask)


def rows_of(ctx, rb: RowBlocks) -> Tile:
    """The RowBlocks written out as a full [rows, cols] tile (a scratch tile of the op being lowered), for a
    user `row_binary` cannot serve."""
    out = ctx.temp(rb.elem, (rb.rows, rb.cols))
    _copy_rows(ctx, rb.value, out.value, rb.elem, rb.rows, rb.cols)
    return out


def row_broadcast(ctx, src: ir.Value, out: ir.Value, elem: str, rows: int, cols: int) -> None:
    """out[r, c] = src[r] for r < rows, c < cols (16- or 32-bit elements, rows of whole 32-byte blocks)."""
    blk = 32 // SIZE[elem]
    blocks = ctx.temp(elem, round_up(rows, 8) * blk)  # block r holds src[r] in every lane
    _brcb(ctx, src, blocks.value, elem, rows)
    _copy_rows(ctx, blocks.value, out, elem, rows, cols)


def _copy_rows(ctx, blocks: ir.Value, out: ir.Value, elem: str, rows: int, cols: int) -> None:
    """out[r, :cols] = the lanes of block r of `blocks` (Copy with source block stride 0)."""
    sz = SIZE[elem]
    per, blk = 256 // sz, 32 // sz
    stride = cols // blk
    chunks, tail = divmod(cols, per)
    pieces = [(c * per, per) for c in range(chunks)] + ([(chunks * per, tail)] if tail else [])
    by_column = len(pieces) * -(-rows // MAX_REPEAT) if stride <= 4095 else None
    by_row = rows * (-(-chunks // MAX_REPEAT) + (1 if tail else 0))
    if by_column is not None and by_column <= by_row:  # repeats over the rows, one call per column chunk
        for r0, n in _groups(rows, MAX_REPEAT):
            for c0, mask in pieces:
                _repeat_op(ctx, "Copy", "copy", ctx.at(out, r0 * cols + c0), [ctx.at(blocks, r0 * blk)], n,
                           (1, 0, stride, 1), mask)
        return
    loop = ctx.for_range(0, rows)  # repeats along one row, one call per row
    with ir.InsertionPoint(loop.body):
        i = loop.induction_variable
        row, block = ctx.at(out, ctx.mul(i, ctx.c64(cols))), ctx.at(blocks, ctx.mul(i, ctx.c64(blk)))
        for c0, n in _groups(chunks, MAX_REPEAT):
            _repeat_op(ctx, "Copy", "copy", ctx.at(row, c0 * per), [block], n, (1, 0, 8, 0), per)
        if tail:
            _repeat_op(ctx, "Copy", "copy", ctx.at(row, chunks * per), [block], 1, (1, 0, 8, 0), tail)
        scf.YieldOp([])
