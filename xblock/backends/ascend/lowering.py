"""xb -> ascendc: one rule per op (`RULES`), applied by driver.Lowering.

Integer, pointer and mask blocks stay symbolic (`Struct`) and become DataCopyPad parameters;
float blocks become LocalTensors and count-form vector instructions; bf16 math goes through
float (the vector unit has no bf16 arithmetic); reductions fold to one 256-byte repeat and finish
with a count-form ReduceSum/ReduceMax; what does not fit runs as scalar GetValue/SetValue loops.
"""

from __future__ import annotations

import functools
import math

from mlir import ir
from mlir.dialects import arith

from ...dialects import ascendc as A
from .context import FLOAT, SIZE, Splat, Struct, Tile, elem_of, shape_of
from .memory import materialize
from .rules import RULES, rule, rule_for

__all__ = ["RULES", "materialize", "rule_for"]

BINARY = {"arith.addf": "Add", "arith.subf": "Sub", "arith.mulf": "Mul", "arith.divf": "Div",
          "arith.maximumf": "Max", "arith.minimumf": "Min", "arith.maxnumf": "Max", "arith.minnumf": "Min",
          "arith.addi": "Add", "arith.subi": "Sub", "arith.muli": "Mul", "arith.maxsi": "Max", "arith.minsi": "Min"}
UNARY = {"math.exp": "Exp", "math.log": "Ln", "math.sqrt": "Sqrt", "math.rsqrt": "Rsqrt", "math.absf": "Abs",
         "arith.negf": "Neg", "math.exp2": "Exp2", "math.log2": "Log2", "math.floor": "Floor", "math.ceil": "Ceil"}
VEC_TYPES = {"Add": ("f16", "f32", "i16", "i32"), "Sub": ("f16", "f32", "i16", "i32"),
             "Mul": ("f16", "f32", "i16", "i32"), "Max": ("f16", "f32", "i16", "i32"),
             "Min": ("f16", "f32", "i16", "i32"), "Div": ("f16", "f32")}
SCALAR_FORM = {"Add": "Adds", "Mul": "Muls", "Max": "Maxs", "Min": "Mins"}
CMP = {1: "EQ", 2: "GT", 3: "GE", 4: "LT", 5: "LE", 6: "NE", 8: "EQ", 9: "GT", 10: "GE", 11: "LT", 12: "LE",
       13: "NE"}
MIRROR = {"LT": "GT", "GT": "LT", "LE": "GE", "GE": "LE", "EQ": "EQ", "NE": "NE"}


def _is_block(v: ir.Value) -> bool:
    return str(v.type).startswith("tensor<")


def compute_elem(L, elem: str, api: str) -> str:
    """The element type an instruction runs in: bf16 through float; an error where there is none."""
    if elem == "bf16":
        return "f32"
    allowed = VEC_TYPES.get(api, ("f16", "f32"))
    if elem not in allowed:
        raise L.error(f"ascend: the vector unit of {L.soc.name} has no {api} for {elem} "
                      f"(it has {', '.join(allowed)})")
    return elem


def as_elem(L, x, elem: str):
    """A Tile or Splat converted to `elem` (Cast into a temporary tile, or a scalar conversion)."""
    if isinstance(x, Splat):
        if x.elem == elem:
            return x
        if x.scalar is None:
            return Splat(elem, x.shape, const=x.const)
        return Splat(elem, x.shape, scalar=scalar_convert(L, x.scalar, elem))
    if x.elem == elem:
        return x
    t = L.temp(elem, x.shape)
    cast(L, t, x)
    return t


def scalar_convert(L, v: ir.Value, elem: str) -> ir.Value:
    src = str(v.type)
    t = ir.Type.parse(elem)
    if src == elem:
        return v
    if src in FLOAT and elem in FLOAT:
        return (arith.ExtFOp if SIZE[elem] > SIZE[src] or src == "bf16" else arith.TruncFOp)(t, v).result
    if src in FLOAT:
        return arith.FPToSIOp(t, v).result
    if elem in FLOAT:
        return arith.SIToFPOp(t, v).result
    return (arith.ExtSIOp if SIZE[elem] > SIZE[src] else arith.TruncIOp)(t, v).result


ROUND = {("f16", "f32"): "CAST_NONE", ("bf16", "f32"): "CAST_NONE", ("f32", "f16"): "CAST_RINT",
         ("f32", "bf16"): "CAST_RINT", ("i32", "f32"): "CAST_NONE", ("f32", "i32"): "CAST_TRUNC",
         ("i16", "f32"): "CAST_NONE", ("i8", "f16"): "CAST_NONE", ("f16", "i32"): "CAST_TRUNC",
         ("bf16", "i32"): "CAST_TRUNC", ("f16", "i8"): "CAST_TRUNC"}


def cast(L, dst: Tile, src: Tile, count=None) -> None:
    """Cast src into dst with the round mode A2 allows; through float where no direct pair exists."""
    pair = (src.elem, dst.elem)
    count = L.c64(count if count is not None else src.count)
    if pair in ROUND:
        A.op("cast", [dst.value, src.value, count], round=ROUND[pair])
        return
    if (src.elem, "f32") in ROUND and ("f32", dst.elem) in ROUND:
        mid = L.temp("f32", src.shape)
        A.op("cast", [mid.value, src.value, count], round=ROUND[(src.elem, "f32")])
        A.op("cast", [dst.value, mid.value, count], round=ROUND[("f32", dst.elem)])
        return
    raise L.error(f"ascend: no Cast from {src.elem} to {dst.elem} on {L.soc.name}")


def dst_tile(L, op, elem: str, single: bool = True) -> Tile:
    """The result tile of `op`; an accumulator updated in place when `op` feeds only the loop's yield,
    or the `if`'s result tile when it feeds only the branch's yield (control.py)."""
    r = op.result
    uses = list(r.uses)
    y = uses[0].owner.operation if len(uses) == 1 and hasattr(uses[0].owner, "operation") else None
    if single and y is not None and y.name == "scf.yield" and y.block.owner.name == "scf.if":
        held = L.ext.get("if_results", {}).get(y.block.owner.operation, {}).get(uses[0].operand_number)
        if isinstance(held, Tile) and held.elem == elem:
            return L.hold(held)
    loop = y.block.owner.name if y is not None and y.name == "scf.yield" else None
    if single and loop in ("scf.for", "scf.while"):  # a while's after block: its arguments are the carried
        body = y.block
        arg = body.arguments[uses[0].operand_number + (loop == "scf.for")]
        acc = L.vmap.get(arg)
        ops = [o.operation for o in body.operations]
        here = ops.index(op.operation)
        if isinstance(acc, Tile) and acc.elem == elem and all(
                ops.index(_in_block(u.owner, body)) <= here for u in arg.uses):
            return L.hold(acc)
    return L.new_tile(elem, shape_of(r.type), L.name_for(op), result=r if elem == elem_of(r.type) else None)


def _in_block(op, block: ir.Block):
    """The op of `block` that is `op` or holds it (a use inside an `if` in a loop body)."""
    o = op.operation if hasattr(op, "operation") else op
    while o.block != block:
        o = o.parent.operation
    return o


def finish(L, op, tile: Tile, elem: str) -> None:
    """Bind op's result: `tile` computed in `elem`, cast to the result's type when they differ."""
    want = elem_of(op.result.type)
    if want == elem:
        L.vmap[op.result] = tile
        return
    out = L.new_tile(want, tile.shape, L.name_for(op), result=op.result)
    cast(L, out, tile)
    L.vmap[op.result] = out


def negate(L, s: Splat) -> Splat:
    if s.scalar is None:
        return Splat(s.elem, s.shape, const=-s.const)
    v = arith.NegFOp(s.scalar).result if s.elem in FLOAT else arith.SubIOp(L.cst(s.elem, 0), s.scalar).result
    return Splat(s.elem, s.shape, scalar=v)


def reciprocal(L, s: Splat) -> Splat:
    if s.scalar is None:
        return Splat(s.elem, s.shape, const=1.0 / s.const if s.const else math.inf)
    return Splat(s.elem, s.shape, scalar=arith.DivFOp(L.cst(s.elem, 1.0), s.scalar).result)


def vec(L, api: str, dst: Tile, *srcs, count=None) -> None:
    count = L.c64(dst.count if count is None else count)
    A.op("vec", [dst.value] + [s.value for s in srcs] + [count], api=api)


def vec_scalar(L, api: str, dst: Tile, src: Tile, s: Splat, count=None) -> None:
    count = L.c64(dst.count if count is None else count)
    A.op("vec_scalar", [dst.value, src.value, L.splat_scalar(s), count], api=api)


# ----- scalars, constants, grid ------------------------------------------------------------------

def _clone_scalar(L, op) -> None:
    new = ir.Operation.create(op.name, results=[r.type for r in op.results],
                              operands=[L.scalar(o) for o in op.operands],
                              attributes={k: op.attributes[k] for k in op.attributes})
    name = L.name_for(op)
    if name and len(new.results) == 1:
        new.attributes["name"] = ir.StringAttr.get(name)
    elif len(new.results) == 1 and (part := L.line_name(op)):  # a part of `part = ...` (emit.temp_name)
        new.attributes["line_name"] = ir.StringAttr.get(part)
    for r, n in zip(op.results, new.results):
        L.vmap[r] = n


def block_only(fn):
    """A rule written for block results: a scalar result is cloned as C++ scalar code instead."""

    @functools.wraps(fn)
    def rule_or_scalar(L, op):
        if not _is_block(op.result):
            return _clone_scalar(L, op)
        return fn(L, op)

    return rule_or_scalar


@rule("arith.constant")
@block_only
def _constant(L, op):
    r = op.result
    a = op.attributes["value"]
    if not a.is_splat:
        raise L.error("ascend: non-uniform constant blocks are not supported")
    e = elem_of(r.type)
    if e == "i1":
        L.vmap[r] = Struct(r)
        return
    v = a.get_splat_value()
    const = ir.FloatAttr(v).value if e in FLOAT else ir.IntegerAttr(v).value
    L.vmap[r] = Splat(e, shape_of(r.type), const=const)


@rule("xb.program_id")
def _program_id(L, op):
    L.vmap[op.result] = L.program_id(int(ir.IntegerAttr(op.attributes["axis"]).value))


@rule("xb.num_programs")
def _num_programs(L, op):
    axis = int(ir.IntegerAttr(op.attributes["axis"]).value)
    if axis == 0:
        L.vmap[op.result] = L.grid_x
    elif axis == 1:
        L.vmap[op.result] = L.grid_y
    else:
        gxy = L.mul(L.to64(L.grid_x), L.to64(L.grid_y))
        L.vmap[op.result] = arith.TruncIOp(L.i32, arith.DivSIOp(L.num_programs, gxy).result).result


@rule("xb.arange", "xb.addptr")
def _structural(L, op):
    L.vmap[op.result] = Struct(op.result)


@rule("xb.splat")
def _splat(L, op):
    r, src = op.result, op.operands[0]
    e = elem_of(r.type)
    if e in FLOAT:
        L.vmap[r] = Splat(e, shape_of(r.type), scalar=L.scalar(src))
    elif e.startswith("!xb.ptr") or L.ps.affine(r) is not None or e == "i1":
        L.vmap[r] = Struct(r)
    else:
        L.vmap[r] = Splat(e, shape_of(r.type), scalar=L.scalar(src))


# ----- elementwise ------------------------------------------------------------------------------

def _structured(L, r) -> bool:
    e = elem_of(r.type)
    if e == "i1":
        return L.ps.mask(r) is not None
    return e not in FLOAT and L.ps.affine(r, wrapped=True) is not None


@rule(*BINARY)
@block_only
def _binary(L, op):
    r = op.result
    if _structured(L, r):
        L.vmap[r] = Struct(r)
        return
    api = BINARY[op.name]
    elem = elem_of(r.type)
    ce = compute_elem(L, elem, api)
    a, b = (L.vmap.get(o) for o in op.operands)
    a = a if isinstance(a, Splat) else L.tile(op.operands[0])
    b = b if isinstance(b, Splat) else L.tile(op.operands[1])
    a, b = as_elem(L, a, ce), as_elem(L, b, ce)
    if isinstance(a, Splat) and isinstance(b, Splat):
        a = L.tile(op.operands[0]) if ce == elem else as_elem(L, L.tile(op.operands[0]), ce)
    out = dst_tile(L, op, ce)
    if isinstance(b, Splat) and api in ("Add", "Mul", "Max", "Min", "Sub", "Div"):
        s = negate(L, b) if api == "Sub" else (reciprocal(L, b) if api == "Div" else b)
        vec_scalar(L, SCALAR_FORM.get(api, "Adds" if api == "Sub" else "Muls"), out, a, s)
    elif isinstance(a, Splat) and api in SCALAR_FORM:
        vec_scalar(L, SCALAR_FORM[api], out, b, a)
    elif isinstance(a, Splat) and api == "Sub":  # s - x = (x * -1) + s
        vec_scalar(L, "Muls", out, b, Splat(ce, b.shape, const=-1.0 if ce in FLOAT else -1))
        vec_scalar(L, "Adds", out, out, a)
    else:
        if isinstance(a, Splat):
            t = L.temp(ce, b.shape)
            L.duplicate(t, a, t.count)
            a = t
        vec(L, api, out, a, b)
    finish(L, op, out, ce)


@rule(*UNARY)
def _unary(L, op):
    r = op.result
    if not _is_block(r):
        return _scalar_math(L, op)
    api = UNARY[op.name]
    elem = elem_of(r.type)
    ce = "f32" if elem == "bf16" else elem
    if ce not in ("f16", "f32"):
        raise L.error(f"ascend: {op.name} on {elem} blocks is not supported by the vector unit")
    src = as_elem(L, L.tile(op.operands[0]), ce)
    out = dst_tile(L, op, ce)
    if api == "Neg":
        vec_scalar(L, "Muls", out, src, Splat(ce, src.shape, const=-1.0))
    elif api == "Exp2":
        vec_scalar(L, "Muls", out, src, Splat(ce, src.shape, const=math.log(2.0)))
        vec(L, "Exp", out, out)
    elif api == "Log2":
        vec(L, "Ln", out, src)
        vec_scalar(L, "Muls", out, out, Splat(ce, src.shape, const=1.0 / math.log(2.0)))
    elif api in ("Floor", "Ceil"):
        src32 = as_elem(L, src, "f32")
        tmp = out if ce == "f32" else L.temp("f32", src.shape)
        A.op("cast", [tmp.value, src32.value, L.c64(src.count)], round="CAST_" + api.upper())
        if tmp is not out:
            cast(L, out, tmp)
    else:
        vec(L, api, out, src)
    finish(L, op, out, ce)


def _scalar_math(L, op):
    """Scalar math the scalar unit lacks runs as one vector instruction on a 32-byte scratch block."""
    if op.name == "arith.negf":
        return _clone_scalar(L, op)
    if op.name == "math.absf":  # a C++ select: no round trip through the vector unit
        x = L.scalar(op.operands[0])
        neg = arith.CmpFOp(arith.CmpFPredicate.OLT, x, L.cst(str(x.type), 0.0)).result
        L.vmap[op.result] = arith.SelectOp(neg, arith.NegFOp(x).result, x).result
        return
    api = UNARY[op.name]
    x = L.scalar(op.operands[0])
    elem = str(x.type)
    if api not in ("Exp", "Ln", "Sqrt", "Rsqrt", "Abs") or elem != "f32":
        raise L.error(f"ascend: scalar {op.name} on {elem} is not supported")
    t = L.temp("f32", 8)
    A.op("duplicate", [t.value, x, L.c64(8)])
    A.op("vec", [t.value, t.value, L.c64(8)], api=api)
    L.sync("V_S")
    v = A.op("get_value", [t.value, L.c64(0)], ir.F32Type.get(), **({"name": n} if (n := L.name_for(op)) else {}))
    L.vmap[op.result] = v


@rule("arith.extf", "arith.truncf", "arith.sitofp", "arith.fptosi", "arith.extsi", "arith.trunci")
@block_only
def _cast(L, op):
    r = op.result
    if _structured(L, r):
        L.vmap[r] = Struct(r)
        return
    src = L.vmap.get(op.operands[0])
    e = elem_of(r.type)
    if isinstance(src, Splat):
        L.vmap[r] = as_elem(L, src, e)
        return
    src = L.tile(op.operands[0])
    out = L.new_tile(e, src.shape, L.name_for(op), result=r)
    cast(L, out, src)
    L.vmap[r] = out


@rule("arith.cmpf")
@block_only
def _cmpf(L, op):
    r = op.result
    mode = CMP.get(int(ir.IntegerAttr(op.attributes["predicate"]).value))
    if mode is None:
        raise L.error("ascend: unsupported float comparison")
    a, b = (L.vmap.get(o) for o in op.operands)
    if isinstance(a, Splat):
        a, b, mode = b, a, MIRROR[mode]
        a = L.tile(op.operands[1])
    else:
        a = L.tile(op.operands[0])
        b = b if isinstance(b, Splat) else L.tile(op.operands[1])
    ce = "f32" if a.elem == "bf16" else a.elem
    a, b = as_elem(L, a, ce), as_elem(L, b, ce)
    out = L.new_tile("ui8", shape_of(r.type), L.name_for(op))
    if isinstance(b, Splat):
        A.op("compare_scalar", [out.value, a.value, L.splat_scalar(b), L.c64(a.padded)], mode=mode)
    else:
        A.op("compare", [out.value, a.value, b.value, L.c64(a.padded)], mode=mode)
    L.vmap[r] = out


@rule("arith.cmpi", "arith.andi", "arith.ori")
@block_only
def _int_logic(L, op):
    r = op.result
    if _structured(L, r):
        L.vmap[r] = Struct(r)
        return
    if op.name == "arith.cmpi":
        mode = {0: "EQ", 1: "NE", 2: "LT", 3: "LE", 4: "GT", 5: "GE"}.get(
            int(ir.IntegerAttr(op.attributes["predicate"]).value))
        if mode is None:
            raise L.error("ascend: unsigned comparisons of data blocks are not supported")
        a = as_elem(L, L.tile(op.operands[0]), "f32")  # exact below 2**24
        b = as_elem(L, L.tile(op.operands[1]), "f32")
        out = L.new_tile("ui8", shape_of(r.type), L.name_for(op))
        A.op("compare", [out.value, a.value, b.value, L.c64(a.padded)], mode=mode)
    else:
        if elem_of(r.type) != "i1":
            raise L.error(f"ascend: {op.name} on integer data blocks is not supported")
        a, b = L.tile(op.operands[0]), L.tile(op.operands[1])
        out = L.new_tile("ui8", shape_of(r.type), L.name_for(op))
        n = L.c64(out.bytes // 2)
        u16 = A.local_type(ir.Type.parse("ui16"))
        args = [A.op("reinterpret", [t.value], u16) for t in (out, a, b)]
        A.op("vec", args + [n], api="And" if op.name == "arith.andi" else "Or")
    L.vmap[r] = out


@rule("arith.select")
@block_only
def _select(L, op):
    r = op.result
    if _structured(L, r):
        L.vmap[r] = Struct(r)
        return
    elem = elem_of(r.type)
    ce = "f32" if elem in ("bf16",) else elem
    reinterp = ce in ("i32",)
    if ce not in ("f16", "f32", "i32"):
        raise L.error(f"ascend: select on {elem} blocks is not supported")
    mask = L.tile(op.operands[0])
    a, b = (L.vmap.get(o) for o in op.operands[1:])
    a = as_elem(L, a if isinstance(a, Splat) else L.tile(op.operands[1]), ce)
    b = as_elem(L, b if isinstance(b, Splat) else L.tile(op.operands[2]), ce)
    if isinstance(a, Splat):
        t = L.temp(ce, shape_of(r.type))
        L.duplicate(t, a, t.count)
        a = t
    out = L.new_tile(ce, shape_of(r.type), L.name_for(op), result=r if ce == elem else None)
    f32 = A.local_type(ir.F32Type.get())
    view = (lambda t: A.op("reinterpret", [t.value], f32)) if reinterp else (lambda t: t.value)
    n = L.c64(out.count)
    if isinstance(b, Splat):
        s = L.splat_scalar(b)
        if reinterp:
            s = arith.BitcastOp(ir.F32Type.get(), s).result
        A.op("select", [view(out), mask.value, view(a), s, n], mode="VSEL_TENSOR_SCALAR_MODE")
    else:
        A.op("select", [view(out), mask.value, view(a), view(b), n], mode="VSEL_TENSOR_TENSOR_MODE")
    finish(L, op, out, ce)


@rule("math.fma")
@block_only
def _fma(L, op):
    r = op.result
    elem = elem_of(r.type)
    ce = compute_elem(L, elem, "Mul")
    a, b, c = (as_elem(L, L.tile(o), ce) for o in op.operands)
    out = dst_tile(L, op, ce, single=False)
    tmp = L.temp(ce, out.shape)
    vec(L, "Mul", tmp, a, b)
    vec(L, "Add", out, tmp, c)
    finish(L, op, out, ce)


@rule("arith.divsi", "arith.divui", "arith.remsi", "arith.remui")
@block_only
def _int_divmod(L, op):
    """Integer `//` and `%` of blocks. A wrapped offset (`(pid * B + arange(0, B)) % M`) stays
    symbolic for the Cube path's loads (pointer_structure, `wrapped`); as data it is `divmod_tile`."""
    r = op.result
    if _structured(L, r):
        L.vmap[r] = Struct(r)
        return
    L.vmap[r] = divmod_tile(L, op)


def divmod_tile(L, op, bind: bool = True) -> Tile:
    """C's truncating x / y or x % y of int32 blocks. The vector unit divides floats only: the
    quotient is a float Div cast to int32 with CAST_TRUNC, exact while |x| + |y| < 2**24.
    `bind`: the tile is op's result (else a temporary, e.g. for `materialize`)."""
    elem = elem_of(op.result.type)
    if elem != "i32":
        raise L.error(f"ascend: integer division of {elem} blocks is not supported (int32 is)")
    x, y = L.tile(op.operands[0]), L.tile(op.operands[1])
    q = L.temp("f32", x.shape)
    vec(L, "Div", q, as_elem(L, x, "f32"), as_elem(L, y, "f32"))
    name, result = (L.name_for(op), op.result) if bind else (None, None)
    if op.name in ("arith.divsi", "arith.divui"):
        out = L.new_tile("i32", x.shape, name, result=result)
        cast(L, out, q)
        return out
    qi = L.temp("i32", x.shape)
    cast(L, qi, q)
    vec(L, "Mul", qi, qi, y)
    out = L.new_tile("i32", x.shape, name, result=result)
    vec(L, "Sub", out, x, qi)
    return out


@rule("xb.atomic_cas")
def _unsupported(L, op):
    raise L.error("ascend: xb.atomic_cas (atomic_cas) is not supported: the AscendC reference documents only "
                  "the atomic-add copy path (SetAtomicAdd), no compare-and-swap")


# Control flow (control.py), device_assert/print (debug.py); the Cube unit's rules: `xb.dot`, and the `scf.for` K loops
# around it (backends/ascend/cube.py).
from . import control, cube, debug  # noqa: E402,F401
