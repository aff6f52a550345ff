"""Rules for elementwise ops, constants, the grid, shape ops and pointer arithmetic.

Elementwise `arith`/`math` ops share one rule (a lazy block evaluated in its consumer's loop);
shape ops are views of their source. Memory, control flow, reductions, `dot` and debug ops have
rule modules of their own beside this one; `pipeline` imports them all.
"""

from __future__ import annotations

from mlir import ir

from ...dialects import xb
from .elementwise import emit_op, with_elem
from .emit import V, elem_of
from .floats import convert as convert_float
from .irtypes import FP8, float_elem, scalar_type, tensor_parts
from .rules import RULES, dialect_rule, rule  # noqa: F401  (RULES: the table, as tools import it from here)
from .values import Arange, Buffer, Lazy, Splat, View, broadcast_coefs, mapped, storage, trans_coefs


def attr_text(op, skip=()) -> str:
    attrs = op.attributes
    items = [f"{k} = {attrs[k]}" for k in attrs if k not in skip]
    return "{" + ", ".join(items) + "}" if items else ""


# ------------------------------------------------------------------------------ elementwise
_COST = {"math.": 12, "arith.div": 6, "arith.rem": 6}


def _weight(name: str) -> int:
    return next((c for p, c in _COST.items() if name.startswith(p)), 1)


@dialect_rule("arith", "math")
def _lower_elementwise(ctx, op):
    name, attrs = op.name, attr_text(op)
    res = op.results[0]
    parts = tensor_parts(res.type)
    if parts is None:
        ops = [ctx.get(o) for o in op.operands]
        ctx.define(res, emit_op(ctx.e, name, attrs, ops, scalar_type(res.type)))
        return
    shape, ety, pointee = parts
    # a scalar operand of a block op (the condition of a select over blocks) is splat to the shape
    operands = [Splat(v, shape, v.type) if isinstance(v, V) else v for v in (ctx.get(o) for o in op.operands)]

    def fn(e, vals, ty, name=name, attrs=attrs):
        return emit_op(e, name, attrs, vals, ty)

    ctx.define(res, Lazy(fn, operands, shape, ety, pointee, _weight(name)))


@rule("arith.mului_extended")
def _lower_mului_extended(ctx, op):
    """The low and high halves of an unsigned full-width product (`umulhi` reads the high one)."""
    low, high = op.results
    parts = tensor_parts(low.type)
    operands = [ctx.get(o) for o in op.operands]

    def half(e, vals, ty, which):
        ety = elem_of(ty)
        bits = int(ety[1:])
        if which == "low":
            return e.op(f"arith.muli {vals[0]}, {vals[1]} : {ty}", ty)
        wide = with_elem(ty, f"i{2 * bits}")
        a, b = (e.op(f"arith.extui {v} : {ty} to {wide}", wide) for v in vals)
        prod = e.op(f"arith.muli {a}, {b} : {wide}", wide)
        hi = e.op(f"arith.shrui {prod}, {e.const(bits, wide)} : {wide}", wide)
        return e.op(f"arith.trunci {hi} : {wide} to {ty}", ty)

    for res, which in ((low, "low"), (high, "high")):
        if parts is None:
            ctx.define(res, half(ctx.e, operands, scalar_type(res.type), which))
        else:
            shape, ety, _ = parts
            ctx.define(res, Lazy(lambda e, vals, ty, which=which: half(e, vals, ty, which), operands, shape, ety,
                                 None, _weight("arith.muli")))


@rule("arith.bitcast")
def _lower_bitcast(ctx, op):
    """A bitcast to or from a float8 type (both held as i8) is the value itself."""
    src, res = op.operands[0], op.results[0]
    if float_elem(src.type) in FP8 or float_elem(res.type) in FP8:
        ctx.define(res, ctx.get(src))
        return
    _lower_elementwise(ctx, op)


@rule("xb.fp_to_fp")
def _lower_fp_to_fp(ctx, op):
    """Triton's fp_to_fp (float8 conversions, rounding toward zero): integer code from `floats`."""
    src, res = op.operands[0], op.results[0]
    kinds = (float_elem(src.type), float_elem(res.type), ir.StringAttr(op.attributes["rounding"]).value)

    def fn(e, vals, ty, kinds=kinds):
        return convert_float(e, vals[0], *kinds, ty)

    parts = tensor_parts(res.type)
    if parts is None:
        ctx.define(res, fn(ctx.e, [ctx.get(src)], scalar_type(res.type)))
    else:
        ctx.define(res, Lazy(fn, [ctx.get(src)], parts[0], parts[1], None, 12))


def _fp8_constant(ctx, op, res):
    """A float8 constant (canonicalization folds bitcasts into them) as its i8 bits."""
    import ml_dtypes
    import numpy as np

    kind = {"f8E4M3FN": "float8_e4m3fn", "f8E5M2": "float8_e5m2", "f8E4M3FNUZ": "float8_e4m3fnuz",
            "f8E5M2FNUZ": "float8_e5m2fnuz", "f8E4M3B11FNUZ": "float8_e4m3b11fnuz"}[float_elem(res.type)]
    value = op.attributes["value"]
    if isinstance(value, ir.DenseElementsAttr):
        if not value.is_splat:
            raise ctx.error("a float8 block constant that is not a splat is not supported on cpu")
        value = value.get_splat_value()
    bits = int(np.array(ir.FloatAttr(value).value).astype(getattr(ml_dtypes, kind)).view(np.int8))
    parts = tensor_parts(res.type)
    c = ctx.e.const(bits, "i8")
    ctx.define(res, c if parts is None else Splat(c, parts[0], "i8"))


@rule("arith.constant")
def _lower_constant(ctx, op):
    res = op.results[0]
    if float_elem(res.type) in FP8:
        return _fp8_constant(ctx, op, res)
    attr = str(op.attributes["value"])
    parts = tensor_parts(res.type)
    if parts is None:
        ctx.define(res, ctx.e.const_attr(attr, scalar_type(res.type)))
        return
    shape, ety, _ = parts
    dense = op.attributes["value"]
    if isinstance(dense, ir.DenseElementsAttr) and dense.is_splat:
        lit = str(dense.get_splat_value())
        lit = lit if " : " in lit or lit in ("true", "false") else f"{lit} : {ety}"  # bools carry their type
        ctx.define(res, Splat(ctx.e.const_attr(lit, ety), shape, ety))
        return
    # a non-splat constant: one whole-vector constant stored into a buffer where it is defined
    e = ctx.e
    n = 1
    for d in shape:
        n *= d
    vt = f"vector<{'x'.join(map(str, shape))}x{ety}>"
    c = e.const_attr(attr[: attr.rindex(":")] + f": {vt}", vt)
    flat = e.op(f"vector.shape_cast {c} : {vt} to vector<{n}x{ety}>", f"vector<{n}x{ety}>")
    mem = e.alloca(n, storage(ety))
    if ety == "i1":
        flat = e.op(f"arith.extui {flat} : vector<{n}xi1> to vector<{n}xi8>", f"vector<{n}xi8>")
    e.line(f"vector.store {flat}, {mem}[{e.idx(0)}] : {mem.type}, {flat.type}")
    ctx.define(res, Buffer(mem, shape, ety))


# ------------------------------------------------------------------------------ xb: grid and shapes
@rule("xb.program_id")
def _lower_program_id(ctx, op):
    ctx.define(op.results[0], ctx.pids[int(ir.IntegerAttr(op.attributes["axis"]).value)])


@rule("xb.num_programs")
def _lower_num_programs(ctx, op):
    ctx.define(op.results[0], ctx.nprogs[int(ir.IntegerAttr(op.attributes["axis"]).value)])


@rule("xb.arange")
def _lower_arange(ctx, op):
    start = ir.IntegerAttr(op.attributes["start"]).value
    end = ir.IntegerAttr(op.attributes["end"]).value
    ctx.define(op.results[0], Arange(start, end - start))


@rule("xb.splat")
def _lower_splat(ctx, op):
    shape, ety, pointee = tensor_parts(op.results[0].type)
    ctx.define(op.results[0], Splat(ctx.get(op.operands[0]), shape, ety, pointee))


@rule("xb.broadcast")
def _lower_broadcast(ctx, op):
    src = ctx.get(op.operands[0])
    shape, _, _ = tensor_parts(op.results[0].type)
    if src.shape == shape:
        ctx.define(op.results[0], src)
    else:
        ctx.define(op.results[0], mapped(ctx.e, src, shape, broadcast_coefs(src.shape, shape)))


@rule("xb.expand_dims", "xb.reshape")
def _lower_view(ctx, op):
    shape, _, _ = tensor_parts(op.results[0].type)
    ctx.define(op.results[0], View(ctx.get(op.operands[0]), shape))


@rule("xb.trans")
def _lower_trans(ctx, op):
    src = ctx.get(op.operands[0])
    order = list(ir.DenseI32ArrayAttr(op.attributes["order"]))
    shape, _, _ = tensor_parts(op.results[0].type)
    ctx.define(op.results[0], mapped(ctx.e, src, shape, trans_coefs(src.shape, order)))


@rule("xb.ptr_cast", "xb.int_to_ptr")
def _lower_ptr_cast(ctx, op):
    """Pointers are i64 addresses: a pointer of another type, or made from an int64, is the same value."""
    src = ctx.get(op.operands[0])
    parts = tensor_parts(op.results[0].type)
    ctx.define(op.results[0], src if parts is None else View(src, parts[0], pointee=parts[2]))


@rule("xb.ptr_to_int")
def _lower_ptr_to_int(ctx, op):
    src = ctx.get(op.operands[0])
    parts = tensor_parts(op.results[0].type)
    if parts is None:
        ctx.define(op.results[0], src)
        return
    view = View(src, parts[0])
    view.pointee = None
    ctx.define(op.results[0], view)


def elem_size(pointee: str) -> int:
    return {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "f16": 2, "bf16": 2, "f32": 4, "f64": 8}.get(
        pointee, 8)


def _offset_bytes(e, off: V, size: int) -> V:
    ty = off.type
    wide = with_elem(ty, "i64")
    if elem_of(ty) != "i64":
        off = e.op(f"arith.extsi {off} : {ty} to {wide}", wide)
    if size != 1:
        off = e.op(f"arith.muli {off}, {e.const(size, wide)} : {wide}", wide)
    return off


@rule("xb.addptr")
def _lower_addptr(ctx, op):
    res = op.results[0]
    parts = tensor_parts(res.type)
    if parts is None:
        size = elem_size(scalar_type(xb.pointee(res.type)))
        off = _offset_bytes(ctx.e, ctx.get(op.operands[1]), size)
        ctx.define(res, ctx.e.op(f"arith.addi {ctx.get(op.operands[0])}, {off} : i64", "i64"))
        return
    shape, ety, pointee = parts
    size = elem_size(pointee)

    def fn(e, vals, ty):
        return e.op(f"arith.addi {vals[0]}, {_offset_bytes(e, vals[1], size)} : {ty}", ty)

    ctx.define(res, Lazy(fn, [ctx.get(op.operands[0]), ctx.get(op.operands[1])], shape, ety, pointee))
