"""The rules of the shape ops: expand_dims, reshape, ptr_cast, broadcast, trans.

A row-major tile keeps its bytes under a new shape, so expand_dims and reshape (and a broadcast
that adds no elements) are views of the same LocalTensor. A real broadcast duplicates a scalar
or copies rows; trans is a scalar loop. Splats and symbolic blocks just take the new shape.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import scf

from ...dialects import ascendc as A
from .rules import rule
from .tiles import after_scalar_writes, before_scalar_reads
from .values import SIZE, Splat, Struct, Tile, elem_of, numel, shape_of


def _view(ctx, op):
    x = ctx.vmap.get(op.operands[0])
    r = op.result
    if isinstance(x, Splat):
        ctx.vmap[r] = Splat(x.elem, shape_of(r.type), x.scalar, x.const)
    elif isinstance(x, Struct) or x is None or elem_of(r.type) == "i1" and ctx.ps.mask(r) is not None:
        ctx.vmap[r] = Struct(r)
    else:
        ctx.vmap[r] = Tile(x.value, x.elem, shape_of(r.type), x.bytes, "view", parent=ctx.hold(x))
    return x


@rule("xb.expand_dims", "xb.reshape", "xb.ptr_cast")
def _reshape(ctx, op):
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
    key = ("ptr_cast", gm_op.operands[0], to)
    cast = ctx.ext.get(key)
    if cast is None:
        name = ir.StringAttr(gm_op.attributes["name"]).value if "name" in gm_op.attributes else "gm"
        with ctx.before_grid:
            cast = A.op("set_global_buffer", [gm_op.operands[0]], A.global_type(ir.Type.parse(to)), dtype=to,
                        name=f"{name[:-2] if name.endswith('Gm') else name}{to.capitalize()}Gm")
        ctx.ext[key] = cast
    ctx.vmap[r] = cast if offset.is_zero() else ctx.at(cast, ctx.mul(ctx.lin(offset), ctx.c64(old // new)))


@rule("xb.broadcast")
def _broadcast(ctx, op):
    r = op.result
    x = ctx.vmap.get(op.operands[0])
    src_shape, shape = shape_of(op.operands[0].type), shape_of(r.type)
    if isinstance(x, (Splat, Struct)) or x is None or (elem_of(r.type) == "i1" and ctx.ps.mask(r) is not None) \
            or numel(src_shape) == numel(shape):
        return _view(ctx, op)
    t = ctx.tile(op.operands[0])
    out = ctx.new_tile(t.elem, shape, ctx.name_for(op), result=r)
    sz = SIZE[t.elem]
    if numel(src_shape) == 1:
        before_scalar_reads(ctx)
        s = A.op("get_value", [t.value, ctx.c64(0)], ir.Type.parse(t.elem))
        A.op("duplicate", [out.value, s, ctx.c64(out.count)])
    elif len(shape) == 2 and src_shape[0] == 1 and (shape[1] * sz) % 32 == 0:
        loop = ctx.for_range(0, shape[0])
        with ir.InsertionPoint(loop.body):
            dst = ctx.at(out.value, ctx.mul(loop.induction_variable, ctx.c64(shape[1])))
            A.op("data_copy", [dst, t.value, ctx.c64(shape[1])])
            scf.YieldOp([])
    elif len(shape) == 2 and src_shape[1] == 1 and (shape[1] * sz) % 32 == 0:
        before_scalar_reads(ctx)
        loop = ctx.for_range(0, shape[0])
        with ir.InsertionPoint(loop.body):
            i = loop.induction_variable
            s = A.op("get_value", [t.value, i], ir.Type.parse(t.elem))
            A.op("duplicate", [ctx.at(out.value, ctx.mul(i, ctx.c64(shape[1]))), s, ctx.c64(shape[1])])
            scf.YieldOp([])
    else:
        raise ctx.error(f"broadcast from {src_shape} to {shape} is not supported yet")
    ctx.vmap[r] = out


@rule("xb.trans")
def _trans(ctx, op):
    r = op.result
    x = ctx.vmap.get(op.operands[0])
    if isinstance(x, (Splat, Struct)) or x is None:
        return _view(ctx, op)
    shape = shape_of(op.operands[0].type)
    if len(shape) != 2:
        raise ctx.error("only 2-D transposes are supported")
    t = ctx.tile(op.operands[0])
    out = ctx.new_tile(t.elem, shape_of(r.type), ctx.name_for(op), result=r)
    rows, cols = shape
    et = ir.Type.parse(t.elem)
    before_scalar_reads(ctx)
    outer = ctx.for_range(0, rows)
    with ir.InsertionPoint(outer.body):
        i = outer.induction_variable
        inner = ctx.for_range(0, cols)
        with ir.InsertionPoint(inner.body):
            j = inner.induction_variable
            v = A.op("get_value", [t.value, ctx.add(ctx.mul(i, ctx.c64(cols)), j)], et)
            A.op("set_value", [out.value, ctx.add(ctx.mul(j, ctx.c64(rows)), i), v])
            scf.YieldOp([])
        scf.YieldOp([])
    after_scalar_writes(ctx, out)
    ctx.vmap[r] = out
