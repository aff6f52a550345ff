"""The rules of the ops that move elements between blocks: join, split, cat, gather, histogram.

Tiles are row-major and dense, so each op is an index map between flat tiles. cat of two 1-D
blocks is two UB->UB DataCopys when the first block ends on a 32-byte block (the second then
starts on one); otherwise the second half goes element by element. join and split interleave at
a stride of 2: a split is a GatherMask (even/odd lanes) and a join two UB copies and one Gather
(vector/permute.py; 8-bit elements, bools as bytes included, through half lanes; a split of a
permute's result, or a join of its halves, composed with it). gather reads at data-dependent
indices (clamped to the source block, so a bad index never reads outside the tile) and histogram
counts (bins zeroed first, values outside [0, num_bins) and masked-off lanes skipped): these, and a
join of two scalars, run as scalar GetValue/SetValue loops, with a warning at the line.
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, scf

from .....dialects import ascendc as A
from ...values import SIZE, Splat, elem_of, numel, shape_of
from ...vector.casts import mask_bytes
from ...vector.permute import can_move, deferred, is_bytes, join8, join_lanes, place, split8, split_lanes
from ...vector.tiles import after_scalar_writes, before_scalar_reads, is_block, mask_of
from ..rules import rule


def _scalar_warning(ctx, what: str) -> None:
    ctx.warn(f"{what} has no vector instruction in the AscendC API xblock models; it runs as a scalar "
             "GetValue/SetValue loop")


def _reader(ctx, v: ir.Value):
    """fn(i64 lane) -> that lane's scalar: GetValue of the block's tile, or the scalar itself."""
    if not is_block(v):
        s = ctx.scalar(v)
        return lambda i: s
    held = ctx.vmap.get(v)
    if isinstance(held, Splat):
        s = ctx.splat_scalar(held)
        return lambda i: s
    t = _tile(ctx, v)
    et = ir.Type.parse(t.elem)
    return lambda i: A.op("get_value", [t.value, i], et)


def _tile(ctx, v: ir.Value):
    """The block's tile; a bool block as bytes 0/1 (a bit mask from a comparison is widened: these
    ops move elements, and a bit is no addressable element)."""
    t = ctx.tile(v)
    if elem_of(v.type) != "i1" or t.elem == "i1":
        return t
    out = ctx.new_tile("i1", t.shape)
    mask_bytes(ctx, t, out)
    return out


def _no_pointers(ctx, v: ir.Value, what: str) -> None:
    if "!xb.ptr" in str(v.type):
        raise ctx.error(f"{what} of pointer blocks is not supported on ascend: the generated code keeps "
                        "pointer blocks as base + offsets (structure), and a joined or split pointer block "
                        "has none; join or split the loaded values instead")


def _result_tile(ctx, op, r):
    return ctx.new_tile(elem_of(r.type), shape_of(r.type), ctx.name_for(op), result=r)


def _loop(ctx, n: int, body) -> None:
    loop = ctx.for_range(0, n)
    with ir.InsertionPoint(loop.body):
        body(loop.induction_variable)
        scf.YieldOp([])


@rule("xb.join")
def _lower_join(ctx, op):
    a, b = op.operands
    _no_pointers(ctx, a, "join")
    r = op.result
    n = numel(shape_of(a.type)) if is_block(a) else 1
    if is_block(a) and can_move(elem_of(r.type)):  # two UB copies and one Gather (or composed: permute.py)
        join_lanes(ctx, op, a, b, r, ctx.name_for(op), lambda v: _tile(ctx, v))
        return
    if is_block(a) and is_bytes(elem_of(r.type)):  # 8-bit elements: through half lanes
        ta, tb = _tile(ctx, a), _tile(ctx, b)
        out = _result_tile(ctx, op, r)
        join8(ctx, ta, tb, out, n)
        ctx.vmap[r] = out
        return
    ra, rb = _reader(ctx, a), _reader(ctx, b)
    _scalar_warning(ctx, f"join of {elem_of(r.type)} blocks (an interleave at stride 2)" if is_block(a)
                    else "join of two scalars")
    out = _result_tile(ctx, op, r)
    before_scalar_reads(ctx)

    def body(i):
        two_i = ctx.mul(i, ctx.c64(2))
        A.op("set_value", [out.value, two_i, ra(i)])
        A.op("set_value", [out.value, ctx.add(two_i, ctx.c64(1)), rb(i)])

    _loop(ctx, n, body)
    after_scalar_writes(ctx, out)
    ctx.vmap[r] = out


@rule("xb.split")
def _lower_split(ctx, op):
    src = op.operands[0]
    _no_pointers(ctx, src, "split")
    read = _reader(ctx, src)
    if not is_block(op.results[0]):  # [2] -> two scalars
        before_scalar_reads(ctx)
        for k, r in enumerate(op.results):
            ctx.vmap[r] = read(ctx.c64(k))
        return
    n = numel(shape_of(op.results[0].type))
    if can_move(elem_of(src.type)) and deferred(ctx, src) is not None:  # composed with the moves before it
        lz = deferred(ctx, src)
        for k, r in enumerate(op.results):
            place(ctx, op, r, lz.half(k), ctx.name_for(op))
        return
    if can_move(elem_of(src.type)) or is_bytes(elem_of(src.type)):  # GatherMask (even/odd), or a Gather each
        t = _tile(ctx, src)
        outs = [_result_tile(ctx, op, r) for r in op.results]
        (split_lanes if can_move(t.elem) else split8)(ctx, t, outs, n)
        for r, out in zip(op.results, outs):
            ctx.vmap[r] = out
        return
    _scalar_warning(ctx, f"split of {elem_of(src.type)} blocks (a read at stride 2)")
    outs = [_result_tile(ctx, op, r) for r in op.results]
    before_scalar_reads(ctx)

    def body(i):
        two_i = ctx.mul(i, ctx.c64(2))
        for k, out in enumerate(outs):
            A.op("set_value", [out.value, i, read(ctx.add(two_i, ctx.c64(k)) if k else two_i)])

    _loop(ctx, n, body)
    for r, out in zip(op.results, outs):
        after_scalar_writes(ctx, out)
        ctx.vmap[r] = out


@rule("xb.cat")
def _lower_cat(ctx, op):
    a, b = op.operands
    _no_pointers(ctx, a, "cat")
    r = op.result
    elem = elem_of(r.type)
    na, nb = numel(shape_of(a.type)), numel(shape_of(b.type))
    ta, tb = _tile(ctx, a), _tile(ctx, b)
    out = _result_tile(ctx, op, r)
    blk = 32 // SIZE[elem]
    # the first half as whole 32-byte blocks (its tail block's padding is overwritten by the second)
    A.op("data_copy", [out.value, ta.value, ctx.c64(-(-na // blk) * blk)])
    if na % blk == 0:  # the second half starts on a 32-byte block: one DataCopy, within out's bytes
        A.op("data_copy", [ctx.at(out.value, ctx.c64(na)), tb.value, ctx.c64(-(-nb // blk) * blk)])
        ctx.vmap[r] = out
        return
    _scalar_warning(ctx, f"cat whose first block ({na} x {elem}) does not end on a 32-byte block")
    before_scalar_reads(ctx)
    et = ir.Type.parse(elem)
    _loop(ctx, nb, lambda i: A.op("set_value", [out.value, ctx.add(i, ctx.c64(na)),
                                                A.op("get_value", [tb.value, i], et)]))
    after_scalar_writes(ctx, out)
    ctx.vmap[r] = out


def _const(t: ir.Type, v: int) -> ir.Value:
    return arith.ConstantOp(t, ir.IntegerAttr.get(t, v)).result


def _strides(shape) -> list[int]:
    return [math.prod(shape[i + 1:]) for i in range(len(shape))]


@rule("xb.gather")
def _lower_gather(ctx, op):
    src, index = op.operands
    _no_pointers(ctx, src, "gather")
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    r = op.result
    held = ctx.vmap.get(src)
    if isinstance(held, Splat):  # every element the same: so is every gathered one (indices clamp here)
        ctx.vmap[r] = Splat(held.elem, shape_of(r.type), held.scalar, held.const)
        return
    sshape, ishape = shape_of(src.type), shape_of(index.type)
    ss, istr = _strides(sshape), _strides(ishape)
    read, idx = _reader(ctx, src), _reader(ctx, index)
    ielem = elem_of(index.type)
    _scalar_warning(ctx, "gather (a read at data-dependent indices)")
    out = _result_tile(ctx, op, r)
    before_scalar_reads(ctx)
    it = ir.Type.parse(ielem)
    last = _const(it, sshape[axis] - 1)

    def body(j):
        k = idx(j)
        # out of range (a negative index too) clamps to the last element, as cpu's unsigned min
        bad = arith.OrIOp(arith.CmpIOp(arith.CmpIPredicate.slt, k, _const(it, 0)).result,
                          arith.CmpIOp(arith.CmpIPredicate.sgt, k, last).result).result
        k = arith.SelectOp(bad, last, k).result
        if ielem != "i64":
            k = arith.ExtSIOp(ir.IntegerType.get_signless(64), k).result
        at = ctx.mul(k, ctx.c64(ss[axis])) if ss[axis] != 1 else k
        for d, (dim, st) in enumerate(zip(ishape, istr)):
            if d == axis or dim == 1:
                continue
            c = arith.DivSIOp(j, ctx.c64(st)).result if st != 1 else j
            c = arith.RemSIOp(c, ctx.c64(dim)).result if d else c
            at = ctx.add(at, ctx.mul(c, ctx.c64(ss[d])) if ss[d] != 1 else c)
        A.op("set_value", [out.value, j, read(at)])

    _loop(ctx, numel(ishape), body)
    after_scalar_writes(ctx, out)
    ctx.vmap[r] = out


@rule("xb.histogram")
def _lower_histogram(ctx, op):
    src = op.operands[0]
    mask = op.operands[1] if len(op.operands) > 1 else None
    bins = ir.IntegerAttr(op.attributes["num_bins"]).value
    r = op.result
    n = numel(shape_of(src.type))
    read = _reader(ctx, src)
    elem = elem_of(src.type)
    on = None
    if mask is not None:  # the mask's lanes as float 1.0/0.0 (Select), read back by the scalar loop
        bits = mask_of(ctx, mask, shape_of(src.type))
        ones = ctx.temp("f32", shape_of(src.type))
        A.op("duplicate", [ones.value, ctx.cst("f32", 1.0), ctx.c64(ones.padded)])
        lanes = ctx.temp("f32", shape_of(src.type))
        A.op("select", [lanes.value, bits.value, ones.value, ctx.cst("f32", 0.0), ctx.c64(lanes.padded)],
             mode="VSEL_TENSOR_SCALAR_MODE")
        on = lanes
    _scalar_warning(ctx, "histogram (a count at data-dependent bins)")
    out = _result_tile(ctx, op, r)
    i32 = ir.IntegerType.get_signless(32)
    zero = ctx.cst("i32", 0)
    before_scalar_reads(ctx)
    _loop(ctx, bins, lambda i: A.op("set_value", [out.value, i, zero]))  # bins zeroed first
    wide = elem != "i64" and bins > (1 << (8 * SIZE[elem] - 1)) - 1  # num_bins past the type's range
    i64 = ir.IntegerType.get_signless(64)

    def body(i):
        v = read(i)
        if wide:
            v = arith.ExtSIOp(i64, v).result
        vt = v.type
        ok = arith.AndIOp(arith.CmpIOp(arith.CmpIPredicate.sge, v, _const(vt, 0)).result,
                          arith.CmpIOp(arith.CmpIPredicate.slt, v, _const(vt, bins)).result).result
        if on is not None:
            m = A.op("get_value", [on.value, i], ir.F32Type.get())
            ok = arith.AndIOp(ok, arith.CmpFOp(arith.CmpFPredicate.ONE, m, ctx.cst("f32", 0.0)).result).result
        ifop = scf.IfOp(ok, [], has_else=False)
        with ir.InsertionPoint(ifop.then_block):
            at = arith.ExtSIOp(i64, v).result if str(vt) != "i64" else v
            old = A.op("get_value", [out.value, at], i32)
            A.op("set_value", [out.value, at, arith.AddIOp(old, ctx.cst("i32", 1)).result])
            scf.YieldOp([])

    _loop(ctx, n, body)
    after_scalar_writes(ctx, out)
    ctx.vmap[r] = out
