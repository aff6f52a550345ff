"""xb -> upstream MLIR (vector/scf/memref/arith/math, llvm for global memory): one rule per op.

`RULES[name](cx, op)` lowers one op; `lower_block` is the one driver that walks ops and applies
them. Elementwise `arith`/`math` ops share one rule. Rules for memory, reductions and `dot` live
beside this file and register into the same table.
"""

from __future__ import annotations

import linecache
import re

from mlir import ir

from ...dialects import xb
from ...errors import CompilationError
from .elementwise import emit_op, is_elementwise, with_elem
from .emit import Emitter, V, elem_of
from .values import (
    Arange,
    Buffer,
    Lazy,
    Mapped,
    Splat,
    TVal,
    View,
    broadcast_coefs,
    materialize,
    storage,
    trans_coefs,
)

RULES: dict = {}
TARGET = "cpu"


def rule(*names):
    def deco(fn):
        for n in names:
            RULES[n] = fn
        return fn

    return deco


_LOC = re.compile(r'"([^"]+)":(\d+):(\d+)')


def location(op) -> tuple:
    m = _LOC.search(str(op.location))
    return (m.group(1), int(m.group(2)), int(m.group(3))) if m else ("<unknown>", 0, 0)


def op_error(op, message: str) -> CompilationError:
    file, line, col = location(op)
    src = linecache.getline(file, line) or None
    return CompilationError(file, line, col, message, src)


def scalar_type(t: ir.Type) -> str:
    return "i64" if xb.is_ptr(t) else str(t)


def tensor_parts(t: ir.Type):
    """(shape, element type, pointee or None) of a tensor type, or None for a scalar."""
    if not isinstance(t, ir.RankedTensorType):
        return None
    rt = ir.RankedTensorType(t)
    et = rt.element_type
    if xb.is_ptr(et):
        return tuple(rt.shape), "i64", str(xb.pointee(et))
    return tuple(rt.shape), str(et), None


def attr_text(op, skip=()) -> str:
    attrs = op.attributes
    items = [f"{k} = {attrs[k]}" for k in attrs if k not in skip]
    return "{" + ", ".join(items) + "}" if items else ""


class LoweringContext:
    """State of one kernel's lowering: the emitter, lowered values, uses and the axis info."""

    def __init__(self, func, info: dict, emitter: Emitter):
        self.e = emitter
        self.info = info
        self.vals: dict = {}
        self.uses: dict = {}
        self.cross: set = set()
        self.pending: list = []  # fused loads not yet evaluated (memory.LoadVal)
        self.prints: list = []  # per xb.print: prefix and value types (for the launcher)
        self.asserts: list = []  # per xb.assert: message, file, line
        self.nargs = 0
        self._count_uses(func)

    def _count_uses(self, func) -> None:
        home: dict = {}
        counter = [0]

        def walk(block, bid):
            for a in block.arguments:
                home[a] = bid
            for op in block.operations:
                for v in op.operands:
                    self.uses[v] = self.uses.get(v, 0) + 1
                    if home.get(v, bid) != bid:
                        self.cross.add(v)
                for r in op.results:
                    home[r] = bid
                for region in op.regions:
                    for b in region.blocks:
                        counter[0] += 1
                        walk(b, counter[0])

        walk(func.regions[0].blocks[0], 0)

    def get(self, v):
        return self.vals[v]

    def define(self, v, lowered) -> None:
        """Bind an xb value; a costly lazy block used more than once (or in a loop) is stored."""
        if isinstance(lowered, TVal) and not isinstance(lowered, Buffer):
            shared = self.uses.get(v, 0) > 1 or v in self.cross
            if (shared and lowered.cost > 4) or lowered.cost > 40:
                if hasattr(lowered, "flush"):
                    lowered.flush(self.e)
                else:
                    lowered = materialize(self.e, lowered)
        self.vals[v] = lowered


def lower_block(cx: LoweringContext, block, skip_terminator=True, top=False):
    """Lower every op of `block`; returns the terminator (not lowered) when skipped.

    In the kernel's top-level block (`top`), the ops after a device_assert run only when it held.
    """
    ops = list(block.operations)
    term = None
    if skip_terminator and ops and ops[-1].operation.name in ("scf.yield", "scf.condition", "gpu.yield",
                                                               "func.return"):
        term = ops.pop()
    guards = 0
    for k, op in enumerate(ops):
        lower_op(cx, op.operation)
        if top and op.operation.name == "xb.assert" and k + 1 < len(ops):
            cx.e.line(f"scf.if {cx.assert_ok} {{")
            cx.e.depth += 1
            guards += 1
    for _ in range(guards):
        cx.e.depth -= 1
        cx.e.line("}")
    return term


def lower_op(cx: LoweringContext, op) -> None:
    name = op.name
    fn = RULES.get(name)
    if fn is None and is_elementwise(name) and len(op.results) == 1:
        fn = _lower_elementwise
    if fn is None:
        raise op_error(op, f"no '{TARGET}' lowering for {name}")
    if name in WRITES or (op.regions and name not in PURE_REGIONS):
        _flush_loads(cx, op)
    fn(cx, op)


WRITES = ("xb.store", "xb.atomic_rmw", "xb.atomic_cas", "xb.print", "xb.assert")
PURE_REGIONS = ("xb.reduce", "xb.scan")


def _flush_loads(cx, op) -> None:
    """Before an op that writes memory (or holds regions), evaluate the pending fused loads.

    A store keeps the loads it reads lane for lane fused into its own chunk loop (each chunk
    is read before it is written); every other pending load is stored to a buffer first.
    """
    from .memory import fused_loads

    keep = set()
    if op.name == "xb.store":
        for v in op.operands:
            if v in cx.vals and isinstance(cx.vals[v], TVal):
                keep |= fused_loads(cx.vals[v])
    for lv in cx.pending:
        if id(lv) not in keep:
            lv.flush(cx.e)
    cx.pending = []


# ------------------------------------------------------------------------------ elementwise
_COST = {"math.": 12, "arith.div": 6, "arith.rem": 6}


def _weight(name: str) -> int:
    return next((c for p, c in _COST.items() if name.startswith(p)), 1)


def _lower_elementwise(cx, op):
    name, attrs = op.name, attr_text(op)
    res = op.results[0]
    parts = tensor_parts(res.type)
    if parts is None:
        ops = [cx.get(o) for o in op.operands]
        cx.define(res, emit_op(cx.e, name, attrs, ops, scalar_type(res.type)))
        return
    shape, ety, pointee = parts
    operands = [cx.get(o) for o in op.operands]

    def fn(e, vals, ty, name=name, attrs=attrs):
        return emit_op(e, name, attrs, vals, ty)

    cx.define(res, Lazy(fn, operands, shape, ety, pointee, _weight(name)))


@rule("arith.constant")
def _lower_constant(cx, op):
    res = op.results[0]
    attr = str(op.attributes["value"])
    parts = tensor_parts(res.type)
    if parts is None:
        cx.define(res, cx.e.const_attr(attr, scalar_type(res.type)))
        return
    shape, ety, _ = parts
    dense = op.attributes["value"]
    if isinstance(dense, ir.DenseElementsAttr) and dense.is_splat:
        lit = str(dense.get_splat_value())
        lit = lit if " : " in lit else f"{lit} : {ety}"
        cx.define(res, Splat(cx.e.const_attr(lit, ety), shape, ety))
        return
    # a non-splat constant: one whole-vector constant stored into a buffer where it is defined
    e = cx.e
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
    cx.define(res, Buffer(mem, shape, ety))


# ------------------------------------------------------------------------------ xb: grid and shapes
@rule("xb.program_id")
def _lower_program_id(cx, op):
    cx.define(op.results[0], cx.pids[int(ir.IntegerAttr(op.attributes["axis"]).value)])


@rule("xb.num_programs")
def _lower_num_programs(cx, op):
    cx.define(op.results[0], cx.nprogs[int(ir.IntegerAttr(op.attributes["axis"]).value)])


@rule("xb.arange")
def _lower_arange(cx, op):
    start = ir.IntegerAttr(op.attributes["start"]).value
    end = ir.IntegerAttr(op.attributes["end"]).value
    cx.define(op.results[0], Arange(start, end - start))


@rule("xb.splat")
def _lower_splat(cx, op):
    shape, ety, pointee = tensor_parts(op.results[0].type)
    cx.define(op.results[0], Splat(cx.get(op.operands[0]), shape, ety, pointee))


@rule("xb.broadcast")
def _lower_broadcast(cx, op):
    src = cx.get(op.operands[0])
    shape, _, _ = tensor_parts(op.results[0].type)
    if src.shape == shape:
        cx.define(op.results[0], src)
    else:
        cx.define(op.results[0], Mapped(src, shape, broadcast_coefs(src.shape, shape)))


@rule("xb.expand_dims", "xb.reshape")
def _lower_view(cx, op):
    shape, _, _ = tensor_parts(op.results[0].type)
    cx.define(op.results[0], View(cx.get(op.operands[0]), shape))


@rule("xb.trans")
def _lower_trans(cx, op):
    src = cx.get(op.operands[0])
    order = list(ir.DenseI32ArrayAttr(op.attributes["order"]))
    shape, _, _ = tensor_parts(op.results[0].type)
    cx.define(op.results[0], Mapped(src, shape, trans_coefs(src.shape, order)))


@rule("xb.ptr_cast")
def _lower_ptr_cast(cx, op):
    src = cx.get(op.operands[0])
    parts = tensor_parts(op.results[0].type)
    cx.define(op.results[0], src if parts is None else View(src, parts[0], pointee=parts[2]))


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
def _lower_addptr(cx, op):
    res = op.results[0]
    parts = tensor_parts(res.type)
    if parts is None:
        size = elem_size(str(xb.pointee(res.type)))
        off = _offset_bytes(cx.e, cx.get(op.operands[1]), size)
        cx.define(res, cx.e.op(f"arith.addi {cx.get(op.operands[0])}, {off} : i64", "i64"))
        return
    shape, ety, pointee = parts
    size = elem_size(pointee)

    def fn(e, vals, ty):
        return e.op(f"arith.addi {vals[0]}, {_offset_bytes(e, vals[1], size)} : {ty}", ty)

    cx.define(res, Lazy(fn, [cx.get(op.operands[0]), cx.get(op.operands[1])], shape, ety, pointee))
