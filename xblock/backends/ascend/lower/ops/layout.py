"""The rules of the shape ops: expand_dims, reshape, ptr_cast, broadcast, trans.

A row-major tile keeps its bytes under a new shape, so expand_dims and reshape (and a broadcast
that adds no elements) are views of the same LocalTensor. A real broadcast duplicates a scalar
or copies rows (a Gather at stride 0 where rows are not whole 32-byte blocks, a scalar loop for
8-bit ones; a bit mask goes through float lanes). A permute that keeps the row-major order is a view
too; a 2-D transpose (or a batch of them) of 16/32-bit elements in whole 16 x 16 / 16 x 8 blocks is
TransDataTo5HD on the vector unit; any other of 16-, 32- or 64-bit elements one Gather
(vector/permute.py), of 8-bit ones a scalar loop nest. Splats and symbolic blocks just take the new shape, unless
the analysis loses an integer block's structure at a reshape (tl.sort's of an arange): then its
tile is materialized and viewed.
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, scf

from .....dialects import ascendc as A
from ...values import SIZE, Splat, Struct, Tile, elem_of, numel, shape_of
from ...vector.permute import can_move, deferred, is_bytes, move, move8, place, strided
from ...vector.rowvec import VECTOR_LANES, row_blocks, row_broadcast
from ...vector.tiles import after_scalar_writes, before_scalar_reads, clone_scalar, data_wanted, fill, mask_of
from ...vector.transpose import can_transpose, transpose
from ..rules import rule


def _unstructured(ctx, src: ir.Value, r: ir.Value) -> bool:
    """An integer block whose structure (base + strides) the analysis loses at this op (a reshape
    that splits or merges dims, as tl.sort's of an arange): it is viewed as the tile of its source."""
    elem = elem_of(r.type)
    return elem != "i1" and not elem.startswith("!xb.ptr") and ctx.ps.affine(r, wrapped=True) is None \
        and ctx.ps.affine(src) is not None


def _view(ctx, op):
    x = ctx.vmap.get(op.operands[0])
    r = op.result
    if (isinstance(x, Struct) or x is None) and (_unstructured(ctx, op.operands[0], r) or data_wanted(ctx, r)):
        x = ctx.tile(op.operands[0])
    if isinstance(x, Splat):
        ctx.vmap[r] = Splat(x.elem, shape_of(r.type), x.scalar, x.const)
    elif isinstance(x, Struct) or x is None or elem_of(r.type) == "i1" and ctx.ps.mask(r) is not None:
        ctx.vmap[r] = Struct(r)
    else:
        ctx.vmap[r] = Tile(x.value, x.elem, shape_of(r.type), x.bytes, "view", parent=ctx.hold(x))
    return x


@rule("arith.bitcast")
def _lower_bitcast(ctx, op):
    """`x.to(T, bitcast=True)` of a block: the same bytes seen as T (a view of the tile; scalars and
    splats are C++ bit casts)."""
    r = op.result
    if not str(r.type).startswith("tensor<"):
        return clone_scalar(ctx, op)
    e = elem_of(r.type)
    if "i1" in (e, elem_of(op.operands[0].type)):
        raise ctx.error("a bitcast to or from bool blocks is not supported on ascend (bools are bytes here)")
    x = ctx.vmap.get(op.operands[0])
    if isinstance(x, Splat):
        ctx.vmap[r] = Splat(e, shape_of(r.type), scalar=arith.BitcastOp(ir.Type.parse(e), ctx.splat_scalar(x)).result)
        return
    t = ctx.tile(op.operands[0])
    view = A.op("reinterpret", [t.value], A.local_type(ir.Type.parse(e)))
    ctx.vmap[r] = Tile(view, e, shape_of(r.type), t.bytes, "view", parent=ctx.hold(t))


@rule("xb.expand_dims", "xb.reshape", "xb.ptr_cast")
def _lower_reshape(ctx, op):
    if op.name == "xb.ptr_cast" and not str(op.result.type).startswith("tensor<"):
        return _scalar_ptr_cast(ctx, op)
    _view(ctx, op)


def _scalar_ptr_cast(ctx, op):
    """`ptr.to(tl.pointer_type(T))` of a kernel argument (plus an offset): a GlobalTensor<T> over the
    same GM_ADDR (what the frontend builds for a block pointer over `*i1`, which reads as int8)."""
    src, r = op.operands[0], op.result
    p = ctx.ps.pointer(src)
    g = ctx.vmap.get(p.root) if p is not None else None
    gm_op = g.owner if g is not None and A.is_global(g.type) else None
    if gm_op is None or gm_op.name != "ascendc.set_global_buffer":
        raise ctx.error("a pointer cast (`ptr.to(tl.pointer_type(...))`) on ascend needs a kernel argument "
                        "(plus an offset) as its source")
    to = str(r.type)[len("!xb.ptr<"):-1]
    old, new = SIZE[p.elem], SIZE[to]
    offset = p.offset.base
    if not offset.is_zero() and old % new:
        raise ctx.error(f"a cast of a pointer with an offset from {p.elem} to the wider {to} is "
                        "not supported on ascend (the offset may not fall on a whole element): cast the "
                        "kernel argument first, then add the offset")
    key = (gm_op.operands[0], to)
    cast = ctx.ext.ptr_casts.get(key)
    if cast is None:
        name = ir.StringAttr(gm_op.attributes["name"]).value if "name" in gm_op.attributes else "gm"
        with ctx.before_grid:
            cast = A.op("set_global_buffer", [gm_op.operands[0]], A.global_type(ir.Type.parse(to)), dtype=to,
                        name=f"{name[:-2] if name.endswith('Gm') else name}{to.capitalize()}Gm")
        ctx.ext.ptr_casts[key] = cast
    ctx.vmap[r] = cast if offset.is_zero() else ctx.at(cast, ctx.mul(ctx.lin(offset), ctx.c64(old // new)))


def _broadcast_dims(src_shape, shape):
    """(source, result) shapes of the same broadcast with size-1 result dims dropped and adjacent dims
    that are both broadcast (or both kept) merged."""
    runs: list[list[int]] = []
    for s, d in zip(src_shape, shape):
        if d == 1:
            continue
        if runs and (runs[-1][0] == 1) == (s == 1):
            runs[-1] = [runs[-1][0] * s, runs[-1][1] * d]
        else:
            runs.append([s, d])
    return tuple(r[0] for r in runs), tuple(r[1] for r in runs)


@rule("xb.broadcast")
def _lower_broadcast(ctx, op):
    r = op.result
    x = ctx.vmap.get(op.operands[0])
    src_shape, shape = shape_of(op.operands[0].type), shape_of(r.type)
    symbolic = (isinstance(x, Struct) or x is None) and not data_wanted(ctx, r)
    if isinstance(x, Splat) or symbolic or (elem_of(r.type) == "i1" and ctx.ps.mask(r) is not None) \
            or numel(src_shape) == numel(shape):
        return _view(ctx, op)
    if elem_of(r.type) == "i1":  # a bit mask: its lanes as 1.0/0.0 (Select), broadcast, compared back
        lanes = _mask_lanes(ctx, op.operands[0], src_shape, "f32")
        wide = ctx.temp("f32", shape)
        _broadcast_tile(ctx, lanes, wide, src_shape, shape)
        _lanes_to_mask(ctx, op, wide)
        return
    t = ctx.tile(op.operands[0])
    rows = _row_values(op, t, src_shape, shape)
    if rows is not None:  # only binary ops read it: one block per row, read with block stride 0 (rowvec.py)
        ctx.vmap[r] = row_blocks(ctx, t.value, t.elem, rows[0], rows[1], ctx.name_for(op))
        return
    out = ctx.new_tile(t.elem, shape, ctx.name_for(op), result=r)
    _broadcast_tile(ctx, t, out, src_shape, shape)
    ctx.vmap[r] = out


_ROW_BINARY = ("arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.maximumf", "arith.minimumf",
               "arith.maxnumf", "arith.minnumf")


def _row_values(op, t, src_shape, shape):
    """(rows, cols) when the broadcast `op` spreads per-row values of `t` along the rows of a 2-D half/float
    block of whole 32-byte rows, and every user is a float binary op of that type taking it once (each then
    reads the values as rowvec.RowBlocks), else None."""
    src_shape, shape = _broadcast_dims(src_shape, shape)
    if len(shape) != 2 or src_shape != (shape[0], 1) or t.elem not in ("f16", "f32") or \
            (shape[1] * SIZE[t.elem]) % 32:
        return None
    r = op.result
    for u in r.uses:
        user = u.owner.operation if hasattr(u.owner, "operation") else u.owner
        if isinstance(user, ir.Block) or user.name not in _ROW_BINARY or elem_of(user.results[0].type) != t.elem or \
                sum(1 for x in user.operands if x == r) != 1:
            return None
    return shape


def _broadcast_tile(ctx, t, out, src_shape, shape) -> None:
    """`out` (of `shape`) = the tile `t` (of `src_shape`) broadcast: a Duplicate of one element, a
    DataCopy per row, or per-row values through Brcb and Copy (16/32-bit; 8-bit elements: a Duplicate
    per row) where the rows are whole 32-byte blocks, else a scalar loop nest."""
    sz = SIZE[t.elem]
    src_shape, shape = _broadcast_dims(src_shape, shape)
    if numel(src_shape) == 1:
        before_scalar_reads(ctx)
        s = A.op("get_value", [t.value, ctx.c64(0)], ir.Type.parse(t.elem))
        fill(ctx, out, 0, out.count, Splat(t.elem, shape, scalar=s))  # (8- and 64-bit lanes as 16/32-bit)
    elif len(shape) == 2 and src_shape[0] == 1 and (shape[1] * sz) % 32 == 0:
        loop = ctx.for_range(0, shape[0])
        with ir.InsertionPoint(loop.body):
            dst = ctx.at(out.value, ctx.mul(loop.induction_variable, ctx.c64(shape[1])))
            A.op("data_copy", [dst, t.value, ctx.c64(shape[1])])
            scf.YieldOp([])
    elif len(shape) == 2 and src_shape[1] == 1 and (shape[1] * sz) % 32 == 0 and sz in VECTOR_LANES:
        row_broadcast(ctx, t.value, out.value, t.elem, shape[0], shape[1])  # Brcb + Copy, no read-back
    elif len(shape) == 2 and src_shape[1] == 1 and (shape[1] * sz) % 32 == 0:
        before_scalar_reads(ctx)
        loop = ctx.for_range(0, shape[0])
        with ir.InsertionPoint(loop.body):
            i = loop.induction_variable
            s = A.op("get_value", [t.value, i], ir.Type.parse(t.elem))
            fill(ctx, out, ctx.mul(i, ctx.c64(shape[1])), shape[1], Splat(t.elem, shape, scalar=s))
            scf.YieldOp([])
    else:
        strides = [0 if s == 1 else numel(src_shape[d + 1:]) for d, s in enumerate(src_shape)]
        if can_move(t.elem):  # a selection at stride 0: one Gather (vector/permute.py)
            move(ctx, t, out, shape, strides)
            return
        if is_bytes(t.elem):  # 8-bit elements: through half lanes
            move8(ctx, t, out, shape, strides)
            return
        ctx.warn(f"a broadcast of {t.elem} from {src_shape} to {shape} (rows not whole 32-byte blocks, 8-bit "
                 "elements) runs as a scalar GetValue/SetValue loop")
        _index_loop(ctx, t, out, shape, strides)


def _index_loop(ctx, t, out, dims, src_strides) -> None:
    """out[i0, i1, ...] (row-major over `dims`) = t[sum(i_k * src_strides[k])]: a scalar loop nest."""
    et = ir.Type.parse(t.elem)
    before_scalar_reads(ctx)

    def nest(k, src_at, dst_at):
        if k == len(dims):
            A.op("set_value", [out.value, dst_at, A.op("get_value", [t.value, src_at], et)])
            return
        loop = ctx.for_range(0, dims[k])
        with ir.InsertionPoint(loop.body):
            i = loop.induction_variable
            nest(k + 1, ctx.add(src_at, ctx.mul(i, ctx.c64(src_strides[k]))),
                 ctx.add(dst_at, ctx.mul(i, ctx.c64(numel(dims[k + 1:])))))
            scf.YieldOp([])

    nest(0, ctx.c64(0), ctx.c64(0))
    after_scalar_writes(ctx, out)


def _collapse(shape, order):
    """The permutation with size-1 dims dropped and runs of source dims that stay adjacent (and in
    order) merged: (source shape, order) of the smallest equivalent permute."""
    keep = [d for d in order if shape[d] != 1]
    runs: list[list[int]] = []
    for d in keep:
        if runs and runs[-1][-1] + 1 == d:
            runs[-1].append(d)
        else:
            runs.append([d])
    by_src = sorted(range(len(runs)), key=lambda k: runs[k][0])
    src_shape = [math.prod(shape[d] for d in runs[k]) for k in by_src]
    rank_of = {k: i for i, k in enumerate(by_src)}
    return src_shape, [rank_of[k] for k in range(len(runs))]


@rule("xb.trans")
def _lower_trans(ctx, op):
    """A permute of any rank. Size-1 dims and source dims that stay adjacent merge first, so a
    permute that keeps the row-major order is a view, and flip's and sort's permutes of the last
    two dims become a batch of 2-D transposes. A 2-D transpose of 8-, 16- or 32-bit elements whose
    dims are whole TransDataTo5HD blocks runs on the vector unit (`transpose`); any other permute of
    16-, 32- or 64-bit elements is one Gather at offsets built on the vector unit (vector/permute.py);
    8-bit ones left over run as a scalar GetValue/SetValue loop nest, with a warning at the line."""
    r = op.result
    x = ctx.vmap.get(op.operands[0])
    if isinstance(x, (Splat, Struct)) or x is None or elem_of(r.type) == "i1" and ctx.ps.mask(r) is not None:
        return _view(ctx, op)
    order = list(ir.DenseI32ArrayAttr(op.attributes["order"]))
    if deferred(ctx, op.operands[0]) is not None:  # a move not made yet: the composed map (vector/permute.py)
        return place(ctx, op, r, strided(ctx, op.operands[0]).permuted(order), ctx.name_for(op))
    src_shape, perm = _collapse(shape_of(op.operands[0].type), order)
    if perm == sorted(perm):  # the same row-major data
        return _view(ctx, op)
    mask = elem_of(r.type) == "i1"  # a bit mask: permuted as half lanes of 1.0/0.0, compared back
    if mask:
        t = _mask_lanes(ctx, op.operands[0], shape_of(op.operands[0].type), "f16")
        out = ctx.temp("f16", shape_of(r.type))
    else:
        t = ctx.tile(op.operands[0])
        if can_move(t.elem) and not (perm in ([1, 0], [0, 2, 1]) and can_transpose(t.elem, *src_shape[-2:])):
            # one Gather at offsets built on the vector unit, or composed with splits right after it
            return place(ctx, op, r, strided(ctx, op.operands[0], t).permuted(order), ctx.name_for(op))
        out = ctx.new_tile(t.elem, shape_of(r.type), ctx.name_for(op), result=r)
    if perm in ([1, 0], [0, 2, 1]) and can_transpose(t.elem, *src_shape[-2:]):
        batch = src_shape[0] if len(src_shape) == 3 else 1
        rows, cols = src_shape[-2:]
        transpose(ctx, t.value, out.value, t.elem, rows, cols, batch)
        if mask:
            return _lanes_to_mask(ctx, op, out)
        ctx.vmap[r] = out
        return
    dims = [src_shape[p] for p in perm]
    src_strides = [math.prod(src_shape[d + 1:]) for d in range(len(src_shape))]
    if can_move(t.elem):  # a bit mask's half lanes: one Gather (vector/permute.py)
        move(ctx, t, out, dims, [src_strides[p] for p in perm])
    elif is_bytes(t.elem):  # 8-bit elements: through half lanes
        move8(ctx, t, out, dims, [src_strides[p] for p in perm])
    else:
        ctx.warn(f"a permute of a {tuple(src_shape)} {t.elem} block (order {tuple(perm)}) is not a 2-D transpose "
                 "of 8-, 16- or 32-bit elements in whole 32 x 32 (8-bit) TransDataTo5HD blocks, and Gather has no "
                 "8-bit elements; it runs as a scalar GetValue/SetValue loop")
        _index_loop(ctx, t, out, dims, [src_strides[p] for p in perm])
    if mask:
        return _lanes_to_mask(ctx, op, out)
    ctx.vmap[r] = out


def _mask_lanes(ctx, value, shape, elem: str):
    """The bit mask `value` as a tile of 1.0 and 0.0 in `elem` (a Select)."""
    bits = mask_of(ctx, value, shape)
    ones = ctx.temp(elem, shape)
    A.op("duplicate", [ones.value, ctx.cst(elem, 1.0), ctx.c64(ones.padded)])
    lanes = ctx.temp(elem, shape)
    A.op("select", [lanes.value, bits.value, ones.value, ctx.cst(elem, 0.0), ctx.c64(lanes.padded)],
         mode="VSEL_TENSOR_SCALAR_MODE")
    return lanes


def _lanes_to_mask(ctx, op, lanes) -> None:
    """op's result: the bit mask of the nonzero lanes of `lanes`."""
    r = op.result
    out = ctx.new_tile("ui8", shape_of(r.type), ctx.name_for(op))  # (bits: never the tile a store sends)
    A.op("compare_scalar", [out.value, lanes.value, ctx.cst(lanes.elem, 0.0), ctx.c64(lanes.padded)], mode="NE")
    ctx.vmap[r] = out
