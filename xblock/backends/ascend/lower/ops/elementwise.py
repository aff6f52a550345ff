"""The rules of element-wise ops, constants, splats and the grid (program_id, num_programs).

Integer, pointer and mask blocks that the pointer-structure analysis describes stay symbolic
(`Struct`) and become DataCopyPad parameters where they are used; float blocks become
LocalTensors and count-form vector instructions, with the scalar forms (Adds/Muls/...) for a splat
operand; bf16 math goes through float; scalar math the scalar unit lacks runs on a 32-byte block.
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, scf

from .....dialects import ascendc as A
from ...values import FLOAT, Splat, Struct, Tile, elem_of, shape_of
from ...vector.access import used_after
from ...vector.intexact import Exact32
from ...vector.rowvec import RowBlocks, row_binary, row_binary_ok, rows_of
from ...vector.tiles import (
    VEC_TYPES,
    as_elem,
    block_only,
    by_lanes,
    cast,
    clone_scalar,
    compute_elem,
    divmod_tile,
    dst_tile,
    finish,
    is_block,
    mask_of,
    negate,
    reciprocal,
    select_types,
    structured,
    vec,
    vec_scalar,
)
from ...vector.vmath import Bits, VMath
from ..rules import rule

BINARY = {"arith.addf": "Add", "arith.subf": "Sub", "arith.mulf": "Mul", "arith.divf": "Div",
          "arith.maximumf": "Max", "arith.minimumf": "Min", "arith.maxnumf": "Max", "arith.minnumf": "Min",
          "arith.addi": "Add", "arith.subi": "Sub", "arith.muli": "Mul", "arith.maxsi": "Max", "arith.minsi": "Min"}
UNARY = {"math.exp": "Exp", "math.log": "Ln", "math.sqrt": "Sqrt", "math.rsqrt": "Rsqrt", "math.absf": "Abs",
         "arith.negf": "Neg", "math.exp2": "Exp2", "math.log2": "Log2", "math.floor": "Floor", "math.ceil": "Ceil"}
SCALAR_FORM = {"Add": "Adds", "Mul": "Muls", "Max": "Maxs", "Min": "Mins"}
CMP = {1: "EQ", 2: "GT", 3: "GE", 4: "LT", 5: "LE", 6: "NE", 8: "EQ", 9: "GT", 10: "GE", 11: "LT", 12: "LE",
       13: "NE"}
MIRROR = {"LT": "GT", "GT": "LT", "LE": "GE", "GE": "LE", "EQ": "EQ", "NE": "NE"}


# ----- scalars, constants, grid ------------------------------------------------------------------

@rule("arith.constant")
@block_only
def _lower_constant(ctx, op):
    r = op.result
    a = op.attributes["value"]
    if not a.is_splat:
        raise ctx.error("non-uniform constant blocks are not supported")
    e = elem_of(r.type)
    if e == "i1":
        ctx.vmap[r] = Struct(r)
        return
    v = a.get_splat_value()
    const = ir.FloatAttr(v).value if e in FLOAT else ir.IntegerAttr(v).value
    ctx.vmap[r] = Splat(e, shape_of(r.type), const=const)


@rule("xb.program_id")
def _lower_program_id(ctx, op):
    ctx.vmap[op.result] = ctx.program_id(int(ir.IntegerAttr(op.attributes["axis"]).value))


@rule("xb.num_programs")
def _lower_num_programs(ctx, op):
    axis = int(ir.IntegerAttr(op.attributes["axis"]).value)
    if axis == 0:
        ctx.vmap[op.result] = ctx.grid_x
    elif axis == 1:
        ctx.vmap[op.result] = ctx.grid_y
    else:
        gxy = ctx.mul(ctx.to64(ctx.grid_x), ctx.to64(ctx.grid_y))
        ctx.vmap[op.result] = arith.TruncIOp(ctx.i32, arith.DivSIOp(ctx.num_programs, gxy).result).result


@rule("xb.arange", "xb.addptr")
def _lower_structural(ctx, op):
    ctx.vmap[op.result] = Struct(op.result)


@rule("xb.splat")
def _lower_splat(ctx, op):
    r, src = op.result, op.operands[0]
    e = elem_of(r.type)
    if e in FLOAT:
        ctx.vmap[r] = Splat(e, shape_of(r.type), scalar=ctx.scalar(src))
    elif e.startswith("!xb.ptr") or ctx.ps.affine(r) is not None or e == "i1":
        ctx.vmap[r] = Struct(r)
    else:
        ctx.vmap[r] = Splat(e, shape_of(r.type), scalar=ctx.scalar(src))


# ----- elementwise ------------------------------------------------------------------------------

@rule(*BINARY)
@block_only
def _lower_binary(ctx, op):
    r = op.result
    if structured(ctx, r):
        ctx.vmap[r] = Struct(r)
        return
    api = BINARY[op.name]
    elem = elem_of(r.type)
    if elem == "i64" and api in VEC_TYPES:  # 910B has no 64-bit lanes: exact, wrapping C++ scalars
        return by_lanes(ctx, op, f"{api} of int64 blocks has no vector instruction (910B has no 64-bit lanes)")
    ce = compute_elem(ctx, elem, api)
    a, b = (ctx.vmap.get(o) for o in op.operands)
    if isinstance(a, RowBlocks) or isinstance(b, RowBlocks):  # `x - m[:, None]`: the per-row values as blocks
        rb, other = (a, b) if isinstance(a, RowBlocks) else (b, a)
        if ce == elem and not isinstance(other, Splat):
            other_t = ctx.tile(op.operands[1 if rb is a else 0])
            if row_binary_ok(rb, other_t):
                out = dst_tile(ctx, op, ce)
                row_binary(ctx, api, out, *((rb, other_t) if rb is a else (other_t, rb)))
                finish(ctx, op, out, ce)
                return
        # otherwise (a splat or another such operand, a conversion): the broadcast written out
        a, b = (rows_of(ctx, x) if isinstance(x, RowBlocks) else x for x in (a, b))
    a = a if isinstance(a, Splat) else (a if isinstance(a, Tile) else ctx.tile(op.operands[0]))
    b = b if isinstance(b, Splat) else (b if isinstance(b, Tile) else ctx.tile(op.operands[1]))
    a, b = as_elem(ctx, a, ce), as_elem(ctx, b, ce)
    if isinstance(a, Splat) and isinstance(b, Splat):
        a = ctx.tile(op.operands[0]) if ce == elem else as_elem(ctx, ctx.tile(op.operands[0]), ce)
    out = dst_tile(ctx, op, ce)
    exact = api == "Div" and "xb.precise" in op.attributes  # div_rn: no multiply by the reciprocal
    if isinstance(b, Splat) and api in ("Add", "Mul", "Max", "Min", "Sub", "Div") and not exact:
        s = negate(ctx, b) if api == "Sub" else (reciprocal(ctx, b) if api == "Div" else b)
        vec_scalar(ctx, SCALAR_FORM.get(api, "Adds" if api == "Sub" else "Muls"), out, a, s)
    elif isinstance(a, Splat) and api in SCALAR_FORM:
        vec_scalar(ctx, SCALAR_FORM[api], out, b, a)
    elif isinstance(a, Splat) and api == "Sub":  # s - x = (x * -1) + s
        vec_scalar(ctx, "Muls", out, b, Splat(ce, b.shape, const=-1.0 if ce in FLOAT else -1))
        vec_scalar(ctx, "Adds", out, out, a)
    else:
        if isinstance(a, Splat):
            t = ctx.temp(ce, b.shape)
            ctx.duplicate(t, a, t.count)
            a = t
        if isinstance(b, Splat):  # div_rn by a scalar
            t = ctx.temp(ce, a.shape)
            ctx.duplicate(t, b, t.count)
            b = t
        vec(ctx, api, out, a, b)
    finish(ctx, op, out, ce)


@rule(*UNARY)
def _lower_unary(ctx, op):
    r = op.result
    if not is_block(r):
        return _scalar_math(ctx, op)
    api = UNARY[op.name]
    elem = elem_of(r.type)
    ce = "f32" if elem == "bf16" else elem
    if ce not in ("f16", "f32"):
        raise ctx.error(f"{op.name} on {elem} blocks is not supported by the vector unit")
    src = as_elem(ctx, ctx.tile(op.operands[0]), ce)
    out = dst_tile(ctx, op, ce)
    _unary_tile(ctx, api, out, src, nonpositive=api == "Exp2" and not_above_zero(op.operands[0]))
    finish(ctx, op, out, ce)


def not_above_zero(v) -> bool:
    """Whether every lane of `v` is <= 0 or NaN by its construction in the IR: `u - max(u, w)` (either
    order, `tl.maximum` or `maximumf`), or `a - M[:, None]` broadcast along axis k where M is the max of `a`
    along k (`tl.max(a, k)`), possibly combined with more by a maximum (online softmax's
    `qk - maximum(m_i, tl.max(qk, 1))[:, None]`). A max that is NaN makes the lane NaN."""
    o = _owner(v)
    if o is None or o.name != "arith.subf":
        return False
    a, b = o.operands
    m = _owner(b)
    if m is not None and m.name in _MAXES and any(x == a for x in m.operands):
        return True
    if m is None or m.name != "xb.broadcast":
        return False
    e = _owner(m.operands[0])
    if e is None or e.name != "xb.expand_dims":
        return False
    axis = ir.IntegerAttr(e.attributes["axis"]).value
    return _covers_max(e.operands[0], a, axis)


_MAXES = ("arith.maxnumf", "arith.maximumf")


def _owner(v):
    o = v.owner
    return None if isinstance(o, ir.Block) else (o.operation if hasattr(o, "operation") else o)


def _covers_max(m, a, axis: int) -> bool:
    """`m` >= the max of `a` along `axis` lane by lane: that max, or a maximum with it as an operand."""
    o = _owner(m)
    if o is None:
        return False
    if o.name in _MAXES:
        return any(_covers_max(x, a, axis) for x in o.operands)
    return o.name == "xb.reduce" and len(o.operands) == 1 and o.operands[0] == a and \
        ir.StringAttr(o.attributes["kind"]).value == "max" and ir.IntegerAttr(o.attributes["axis"]).value == axis


def _unary_tile(ctx, api: str, out, src, nonpositive: bool = False) -> None:
    """out = api(src) for half or float tiles (`nonpositive`: Exp2's argument is known <= 0 or NaN)."""
    ce = out.elem
    if api == "Neg":
        vec_scalar(ctx, "Muls", out, src, Splat(ce, src.shape, const=-1.0))
    elif api == "Exp2":  # 2^rint(x) built exactly, times Exp of the fraction (vmath)
        tmp = out if ce == "f32" else ctx.temp("f32", src.shape)
        VMath(ctx, src.shape).exp2(as_elem(ctx, src, "f32"), tmp, nonpositive=nonpositive)
        if tmp is not out:
            cast(ctx, out, tmp)
    elif api == "Log2":
        vec(ctx, "Ln", out, src)
        vec_scalar(ctx, "Muls", out, out, Splat(ce, src.shape, const=1.0 / math.log(2.0)))
    elif api in ("Floor", "Ceil"):
        src32 = as_elem(ctx, src, "f32")
        tmp = out if ce == "f32" else ctx.temp("f32", src.shape)
        A.op("cast", [tmp.value, src32.value, ctx.c64(src.count)], round="CAST_" + api.upper())
        if tmp is not out:
            cast(ctx, out, tmp)
    else:
        vec(ctx, api, out, src)


def _scalar_math(ctx, op):
    """Scalar math the scalar unit lacks runs as one vector instruction on a 32-byte scratch block."""
    if op.name == "arith.negf":
        return clone_scalar(ctx, op)
    if op.name == "math.absf":  # a C++ select: no round trip through the vector unit
        x = ctx.scalar(op.operands[0])
        neg = arith.CmpFOp(arith.CmpFPredicate.OLT, x, ctx.cst(str(x.type), 0.0)).result
        ctx.vmap[op.result] = arith.SelectOp(neg, arith.NegFOp(x).result, x).result
        return
    api = UNARY[op.name]
    x = ctx.scalar(op.operands[0])
    elem = str(x.type)
    if elem not in ("f16", "bf16", "f32"):
        raise ctx.error(f"scalar {op.name} on {elem} is not supported")
    if elem != "f32":  # in float, rounded back
        x = arith.ExtFOp(ir.F32Type.get(), x).result
    t = ctx.temp("f32", 8)
    A.op("duplicate", [t.value, x, ctx.c64(8)])
    _unary_tile(ctx, api, t, t) if api in ("Exp", "Ln", "Sqrt", "Rsqrt", "Abs", "Neg") else \
        _unary_tile(ctx, api, t, _copy8(ctx, t))
    ctx.sync("V_S")
    v = A.op("get_value", [t.value, ctx.c64(0)], ir.F32Type.get(), **({"name": n} if (n := ctx.name_for(op)) else {}))
    ctx.vmap[op.result] = v if elem == "f32" else arith.TruncFOp(ir.Type.parse(elem), v).result


def _copy8(ctx, t):
    c = ctx.temp("f32", 8)
    A.op("data_copy", [c.value, t.value, ctx.c64(8)])
    return c


UNSIGNED_CASTS = ("arith.extui", "arith.uitofp", "arith.fptoui")


@rule("arith.extf", "arith.truncf", "arith.sitofp", "arith.fptosi", "arith.extsi", "arith.trunci", "arith.fptoui")
@block_only
def _lower_cast(ctx, op):
    """Element-type conversions (casts.plan: Cast pairs, exact chains, wrapping narrowing)."""
    r = op.result
    if structured(ctx, r):
        ctx.vmap[r] = Struct(r)
        return
    if elem_of(op.operands[0].type) == "i1":
        return _lower_from_mask(ctx, op)
    src = ctx.vmap.get(op.operands[0])
    e = elem_of(r.type)
    unsigned = op.name in UNSIGNED_CASTS
    if isinstance(src, Splat):
        ctx.vmap[r] = as_elem(ctx, src, e, unsigned)
        return
    src = ctx.tile(op.operands[0])
    out = ctx.new_tile(e, src.shape, ctx.name_for(op), result=r)
    cast(ctx, out, src, unsigned=unsigned)
    ctx.vmap[r] = out


@rule("arith.cmpf")
@block_only
def _lower_cmpf(ctx, op):
    r = op.result
    mode = CMP.get(int(ir.IntegerAttr(op.attributes["predicate"]).value))
    if mode is None:
        raise ctx.error("unsupported float comparison")
    a, b = (ctx.vmap.get(o) for o in op.operands)
    if isinstance(a, Splat):
        a, b, mode = b, a, MIRROR[mode]
        a = ctx.tile(op.operands[1])
    else:
        a = ctx.tile(op.operands[0])
        b = b if isinstance(b, Splat) else ctx.tile(op.operands[1])
    ce = "f32" if a.elem == "bf16" else a.elem
    a, b = as_elem(ctx, a, ce), as_elem(ctx, b, ce)
    out = ctx.new_tile("ui8", shape_of(r.type), ctx.name_for(op))
    if isinstance(b, Splat):
        A.op("compare_scalar", [out.value, a.value, ctx.splat_scalar(b), ctx.c64(a.padded)], mode=mode)
    else:
        A.op("compare", [out.value, a.value, b.value, ctx.c64(a.padded)], mode=mode)
    ctx.vmap[r] = out


@rule("arith.cmpi", "arith.andi", "arith.ori")
@block_only
def _lower_int_logic(ctx, op):
    r = op.result
    if structured(ctx, r):
        ctx.vmap[r] = Struct(r)
        return
    if op.name == "arith.cmpi":
        pred = int(ir.IntegerAttr(op.attributes["predicate"]).value)
        mode = ("EQ", "NE", "LT", "LE", "GT", "GE", "LT", "LE", "GT", "GE")[pred]
        unsigned = pred >= 6  # ult, ule, ugt, uge: zero-extended operands
        if elem_of(op.operands[0].type) == "i1":  # masks: logic on their bits
            return _compare_masks(ctx, op, pred, mode)
        x, y = op.operands
        if isinstance(ctx.vmap.get(x), Splat) and not isinstance(ctx.vmap.get(y), Splat):
            x, y, mode = y, x, MIRROR[mode]
        a = ctx.tile(x)
        if a.elem == "i64":
            return by_lanes(ctx, op, "a comparison of int64 blocks has no vector instruction (910B has no 64-bit "
                            "lanes)")
        if a.elem == "i32":  # Compare has int32 EQ only: exact through 16-bit halves (intexact.py)
            out = ctx.new_tile("ui8", shape_of(r.type), ctx.name_for(op))
            ctx.vmap[r] = Exact32(ctx, a.shape, unsigned).compare(out, a, ctx.tile(y), mode)
            return
        b = ctx.vmap.get(y) if isinstance(ctx.vmap.get(y), Splat) else ctx.tile(y)
        a, b = as_elem(ctx, a, "f32", unsigned), as_elem(ctx, b, "f32", unsigned)  # 8 and 16 bits: exact
        out = ctx.new_tile("ui8", shape_of(r.type), ctx.name_for(op))
        if isinstance(b, Splat):
            A.op("compare_scalar", [out.value, a.value, ctx.splat_scalar(b), ctx.c64(a.padded)], mode=mode)
        else:
            A.op("compare", [out.value, a.value, b.value, ctx.c64(a.padded)], mode=mode)
    else:
        if elem_of(r.type) != "i1":
            raise ctx.error(f"{op.name} on integer data blocks is not supported")
        a, b = mask_of(ctx, op.operands[0]), mask_of(ctx, op.operands[1])
        out = ctx.new_tile("ui8", shape_of(r.type), ctx.name_for(op))
        n = ctx.c64(out.bytes // 2)
        u16 = A.local_type(ir.Type.parse("ui16"))
        args = [A.op("reinterpret", [t.value], u16) for t in (out, a, b)]
        A.op("vec", args + [n], api="And" if op.name == "arith.andi" else "Or")
    ctx.vmap[r] = out


def _compare_masks(ctx, op, pred: int, mode: str) -> None:
    """A comparison of two bool blocks as logic on their bit masks: == is not xor, != xor; an order
    is an and/or with one side inverted (true is 1 unsigned, -1 signed, so signed orders flip)."""
    r = op.result
    shape = shape_of(r.type)
    bits = Bits(ctx, shape, "ui8")
    a, b = mask_of(ctx, op.operands[0], shape), mask_of(ctx, op.operands[1], shape)
    out = ctx.new_tile("ui8", shape, ctx.name_for(op))
    if mode in ("EQ", "NE"):
        bits.logic("xor", out, a, b)
        if mode == "EQ":
            bits.invert(out, out)
    else:
        if pred < 6:  # signed: true (-1) orders below false (0)
            mode = {"LT": "GT", "LE": "GE", "GT": "LT", "GE": "LE"}[mode]
        inv = bits.invert(bits.new("ui8"), b if mode in ("GT", "GE") else a)
        kind = "and" if mode in ("LT", "GT") else "or"
        bits.logic(kind, out, a if mode in ("GT", "GE") else inv, inv if mode in ("GT", "GE") else b)
    ctx.vmap[r] = out


@rule("arith.select")
@block_only
def _lower_select(ctx, op):
    r = op.result
    if structured(ctx, r):
        ctx.vmap[r] = Struct(r)
        return
    elem = elem_of(r.type)
    if elem == "i1":
        return _select_masks(ctx, op)
    if elem == "i64":
        return by_lanes(ctx, op, "a select of int64 blocks has no vector instruction (910B selects 16- and 32-bit "
                        "lanes)")
    if select_types(elem) is None:
        raise ctx.error(f"select on {elem} blocks is not supported on ascend: the 910B vector unit selects 16- and "
                        f"32-bit lanes")
    ce, fview = select_types(elem)
    a, b = (ctx.vmap.get(o) for o in op.operands[1:])
    if not is_block(op.operands[0]) and isinstance(a, Splat) and isinstance(b, Splat) and a.elem == b.elem:
        # a scalar condition between two uniform blocks: a uniform block (C++ `c ? a : b`)
        pick = arith.SelectOp(ctx.scalar(op.operands[0]), ctx.splat_scalar(a), ctx.splat_scalar(b)).result
        ctx.vmap[r] = Splat(a.elem, shape_of(r.type), scalar=pick)
        return
    if _select_when_partial(ctx, op, ce, fview, a, b):
        return
    mask = mask_of(ctx, op.operands[0], shape_of(r.type))
    a = as_elem(ctx, a if isinstance(a, Splat) else ctx.tile(op.operands[1]), ce)
    b = as_elem(ctx, b if isinstance(b, Splat) else ctx.tile(op.operands[2]), ce)
    if isinstance(a, Splat):
        t = ctx.temp(ce, shape_of(r.type))
        ctx.duplicate(t, a, t.count)
        a = t
    out = ctx.new_tile(ce, shape_of(r.type), ctx.name_for(op), result=r if ce == elem else None)
    ftype = A.local_type(ir.Type.parse(fview)) if fview else None
    view = (lambda t: A.op("reinterpret", [t.value], ftype)) if fview else (lambda t: t.value)
    n = ctx.c64(out.count)
    if isinstance(b, Splat):
        s = ctx.splat_scalar(b)
        if fview:
            s = arith.BitcastOp(ir.Type.parse(fview), s).result
        A.op("select", [view(out), mask.value, view(a), s, n], mode="VSEL_TENSOR_SCALAR_MODE")
    else:
        A.op("select", [view(out), mask.value, view(a), view(b), n], mode="VSEL_TENSOR_TENSOR_MODE")
    finish(ctx, op, out, ce, exact=True)


def _select_when_partial(ctx, op, ce, fview, a, b) -> bool:
    """`where(cols < n, x, s)` with a structured mask (row/column limits), a splat `s` and a block `x` that
    dies here: the select runs in place in x's tile, only when the mask is not all true at run time (a
    ragged last key block); else the result is x's tile unchanged. False when the form does not apply."""
    cond, x = op.operands[0], op.operands[1]
    shape = shape_of(op.result.type)
    t = a
    if not (isinstance(b, Splat) and isinstance(t, Tile) and not fview and ce == elem_of(op.result.type) == t.elem
            and t.kind == "buf" and t.refs == 1 and not isinstance(x.owner, ir.Block) and not used_after(op, x)
            and is_block(cond) and isinstance(ctx.vmap.get(cond), Struct) and tuple(t.shape) == tuple(shape)):
        return False
    bm = ctx.ps.mask(cond)
    if bm is None or not (bm.dims or bm.uniform):
        return False
    partial = None
    for d, lim in bm.dims:
        if lim is None:
            continue
        c = arith.CmpIOp(arith.CmpIPredicate.slt, ctx.lin(lim), ctx.c64(shape[d] if shape else 1)).result
        partial = c if partial is None else arith.OrIOp(partial, c).result
    for u in bm.uniform:
        c = arith.CmpIOp(arith.CmpIPredicate.sle, ctx.lin(u), ctx.c64(0)).result
        partial = c if partial is None else arith.OrIOp(partial, c).result
    if partial is None:
        return False
    branch = scf.IfOp(partial, [], has_else=False)
    with ir.InsertionPoint(branch.then_block):
        mask = mask_of(ctx, cond, shape)
        A.op("select", [t.value, mask.value, t.value, ctx.splat_scalar(b), ctx.c64(t.count)],
             mode="VSEL_TENSOR_SCALAR_MODE")
        scf.YieldOp([])
    ctx.vmap[op.result] = ctx.hold(t)
    return True


def _select_masks(ctx, op):
    """`where(c, a, b)` of bool blocks: their bit masks as (c & a) | (~c & b), 16 bits at a time."""
    r = op.result
    shape = shape_of(r.type)
    c, a, b = (mask_of(ctx, v, shape) for v in op.operands)
    ctx.vmap[r] = Bits(ctx, shape, "ui8").choose(ctx.new_tile("ui8", shape, ctx.name_for(op)), c, a, b)


@rule("arith.extui", "arith.uitofp")
@block_only
def _lower_from_mask(ctx, op):
    """A mask block as numbers (`(x > 0).to(tl.int32)`, libdevice's signbit): Select 1.0 (-1.0 for a
    signed extension) or 0.0, then an exact Cast; an unsigned integer block converts as `_lower_cast` does."""
    r = op.result
    if elem_of(op.operands[0].type) != "i1":
        return _lower_cast(ctx, op)
    elem = elem_of(r.type)
    mask = mask_of(ctx, op.operands[0], shape_of(r.type))
    vm = VMath(ctx, shape_of(r.type))
    out = dst_tile(ctx, op, "f32") if elem == "f32" else ctx.temp("f32", shape_of(r.type))
    one = -1.0 if op.name in ("arith.extsi", "arith.sitofp") else 1.0
    A.op("select", [out.value, mask.value, vm.const(one).value, ctx.cst("f32", 0.0), ctx.c64(out.count)],
         mode="VSEL_TENSOR_SCALAR_MODE")
    if elem == "f32":
        ctx.vmap[r] = out
        return
    res = ctx.new_tile(elem, out.shape, ctx.name_for(op), result=r)
    cast(ctx, res, out, exact=True)
    ctx.vmap[r] = res


# math with no vector instruction: compositions of documented ones (vmath), computed in float
VMATH = {"math.acos": "acos", "math.asin": "asin", "math.atan": "atan", "math.acosh": "acosh", "math.asinh": "asinh",
         "math.atanh": "atanh", "math.cosh": "cosh", "math.sinh": "sinh", "math.tanh": "tanh", "math.tan": "tan",
         "math.cbrt": "cbrt", "math.erf": "erf", "math.erfc": "erfc", "math.expm1": "expm1", "math.log1p": "log1p",
         "math.atan2": "atan2", "math.powf": "pow", "math.copysign": "copysign", "math.sin": "sin",
         "math.cos": "cos"}
ROUNDING = {"math.trunc": "CAST_TRUNC", "math.round": "CAST_ROUND", "math.roundeven": "CAST_RINT"}


@rule(*VMATH, *ROUNDING, "math.log10")
def _lower_vmath(ctx, op):
    r = op.result
    elem = elem_of(r.type)
    if elem not in ("f16", "bf16", "f32"):
        raise ctx.error(f"{op.name} on {elem} is not supported: the vector unit computes in half and float")
    if is_block(r):
        srcs = [as_elem(ctx, ctx.tile(o), "f32") for o in op.operands]
        out = dst_tile(ctx, op, "f32")
        _compose(ctx, op.name, out, srcs)
        finish(ctx, op, out, "f32")
        return
    # a scalar: the same instructions on one 32-byte block
    srcs = []
    for o in op.operands:
        t = ctx.temp("f32", 8)
        x = ctx.scalar(o)
        if str(x.type) != "f32":
            x = arith.ExtFOp(ir.F32Type.get(), x).result
        A.op("duplicate", [t.value, x, ctx.c64(8)])
        srcs.append(t)
    out = ctx.temp("f32", 8)
    _compose(ctx, op.name, out, srcs)
    ctx.sync("V_S")
    v = A.op("get_value", [out.value, ctx.c64(0)], ir.F32Type.get(), **({"name": n} if (n := ctx.name_for(op)) else {}))
    ctx.vmap[r] = v if elem == "f32" else arith.TruncFOp(ir.Type.parse(elem), v).result


def _compose(ctx, name, out, srcs):
    vm = VMath(ctx, out.shape)
    if name in ROUNDING:  # Cast float -> float with the round mode
        vm.round(srcs[0], ROUNDING[name], out=out)
    elif name == "math.log10":
        vm.muls(vm.op("Ln", srcs[0]), 1.0 / math.log(10.0), out=out)
    else:
        getattr(vm, VMATH[name])(*srcs, out)


@rule("math.fma")
@block_only
def _lower_fma(ctx, op):
    r = op.result
    elem = elem_of(r.type)
    ce = compute_elem(ctx, elem, "Mul")
    a, b, c = (as_elem(ctx, ctx.tile(o), ce) for o in op.operands)
    out = dst_tile(ctx, op, ce, single=False)
    tmp = ctx.temp(ce, out.shape)
    vec(ctx, "Mul", tmp, a, b)
    vec(ctx, "Add", out, tmp, c)
    finish(ctx, op, out, ce)


@rule("arith.divsi", "arith.divui", "arith.remsi", "arith.remui")
@block_only
def _lower_int_divmod(ctx, op):
    """Integer `//` and `%` of blocks. A wrapped offset (`(pid * B + arange(0, B)) % M`) stays
    symbolic for the Cube path's loads (pointer_structure, `wrapped`); as data it is `divmod_tile`."""
    r = op.result
    if structured(ctx, r):
        ctx.vmap[r] = Struct(r)
        return
    if elem_of(r.type) == "i64":  # C's `/` and `%` per lane (unsigned ones on unsigned C++ values: emit/cpp.py)
        return by_lanes(ctx, op, "integer division of int64 blocks has no vector instruction (910B has no 64-bit "
                        "lanes)")
    if elem_of(r.type) == "i32" and op.name in ("arith.divui", "arith.remui"):
        # the vector unit divides floats, exact for uint32 below 2**24 only; exact int32 (intexact.Exact32) is signed
        return by_lanes(ctx, op, "unsigned division of int32 blocks is exact only on C++ scalars (the vector unit "
                        "divides floats)")
    ctx.vmap[r] = divmod_tile(ctx, op)
