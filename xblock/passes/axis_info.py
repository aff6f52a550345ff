"""The axis-info analysis: contiguity, divisibility and constancy of integer and pointer values.

For each integer or pointer value (scalar or block), per dimension d (Triton's AxisInfo):
- contiguity[d]: the values come in runs of this many consecutive integers along d (runs start
  at multiples of it);
- divisibility[d]: the first value of each run is a multiple of this (pointers: in bytes);
- constancy[d]: the values come in runs of this many equal values along d.
All three are powers of two. `constant` is the value when it is known at compile time.
Backends use it to turn pointer blocks into contiguous vector accesses. Loop-carried values
are solved to a fixpoint.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir

from ..dialects import xb

NAME = "xb-analyze-axis-info"
MAX_DIV = 1 << 30


@dataclass(frozen=True)
class AxisInfo:
    contiguity: tuple
    divisibility: tuple
    constancy: tuple
    constant: int | None = None

    def meet(self, other: "AxisInfo") -> "AxisInfo":
        return AxisInfo(tuple(map(math.gcd, self.contiguity, other.contiguity)),
                        tuple(map(math.gcd, self.divisibility, other.divisibility)),
                        tuple(map(math.gcd, self.constancy, other.constancy)),
                        self.constant if self.constant == other.constant else None)


def _pow2_div(v: int) -> int:
    return MAX_DIV if v == 0 else min(MAX_DIV, v & -v)


def _shape(t: ir.Type) -> tuple:
    return tuple(ir.RankedTensorType(t).shape) if isinstance(t, ir.RankedTensorType) else (1,)


def _elem(t: ir.Type) -> ir.Type:
    return ir.RankedTensorType(t).element_type if isinstance(t, ir.RankedTensorType) else t


def _tracked(t: ir.Type) -> bool:
    e = _elem(t)
    return isinstance(e, ir.IntegerType) or xb.is_ptr(e)


def unknown(shape, div: int = 1) -> AxisInfo:
    r = len(shape)
    return AxisInfo((1,) * r, (div,) * r, (1,) * r)


def constant(shape, value: int) -> AxisInfo:
    return AxisInfo((1,) * len(shape), (_pow2_div(value),) * len(shape), tuple(shape), value)


def _elem_bytes(t: ir.Type) -> int:
    e = _elem(t)
    if not xb.is_ptr(e):
        return 1
    p = str(xb.pointee(e))
    if p.startswith("f8E"):  # float8 types
        return 1
    return {"i1": 1, "i8": 1, "i16": 2, "f16": 2, "bf16": 2, "i32": 4, "f32": 4}.get(p, 8)


def _add(a: AxisInfo, b: AxisInfo, scale: int, sub=False) -> AxisInfo:
    if sub:
        contig = tuple(math.gcd(ac, bk) for ac, bk in zip(a.contiguity, b.constancy))
    else:
        contig = tuple(max(math.gcd(ac, bk), math.gcd(ak, bc))
                       for ac, ak, bc, bk in zip(a.contiguity, a.constancy, b.contiguity, b.constancy))
    div = tuple(math.gcd(ad, min(MAX_DIV, bd * scale)) for ad, bd in zip(a.divisibility, b.divisibility))
    const = tuple(map(math.gcd, a.constancy, b.constancy))
    value = None
    if a.constant is not None and b.constant is not None:
        value = a.constant - b.constant if sub else a.constant + b.constant * scale
    return AxisInfo(contig, div, const, value)


def _mul(a: AxisInfo, b: AxisInfo) -> AxisInfo:
    if b.constant == 1:
        return a
    if a.constant == 1:
        return b
    const = tuple(map(math.gcd, a.constancy, b.constancy))
    div = tuple(min(MAX_DIV, x * y) for x, y in zip(a.divisibility, b.divisibility))
    value = a.constant * b.constant if a.constant is not None and b.constant is not None else None
    return AxisInfo((1,) * len(const), div, const, value)


class _Analysis:
    def __init__(self):
        self.info: dict = {}

    def get(self, v) -> AxisInfo:
        if v not in self.info:
            self.info[v] = unknown(_shape(v.type))
        return self.info[v]

    def block(self, block) -> None:
        for op in block.operations:
            self.op(op.operation)

    def op(self, op) -> None:
        name = op.name
        if name == "scf.for":
            self._for(op)
            return
        if name == "scf.if":
            for region in op.regions:
                for b in region.blocks:
                    self.block(b)
            ys = [list(r.blocks[0].operations)[-1] for r in op.regions if r.blocks]
            for k, res in enumerate(op.results):
                infos = [self.get(y.operands[k]) for y in ys if len(y.operands) > k]
                if infos and len(infos) == len(op.regions):
                    self.info[res] = infos[0].meet(infos[1]) if len(infos) > 1 else infos[0]
            return
        for region in op.regions:
            for b in region.blocks:
                self.block(b)
        if len(op.results) != 1 or not _tracked(op.results[0].type):
            return
        res = op.results[0]
        self.info[res] = self.rule(op, name, res)

    def _for(self, op) -> None:
        block = op.regions[0].blocks[0]
        ops = list(op.operands)
        lb, step, inits = self.get(ops[0]), self.get(ops[2]), ops[3:]
        iv = block.arguments[0]
        self.info[iv] = AxisInfo((1,), (math.gcd(lb.divisibility[0], step.divisibility[0]),), (1,))
        args = list(block.arguments)[1:]
        for a, v in zip(args, inits):
            self.info[a] = self.get(v)
        for _ in range(3):
            self.block(block)
            yields = list(list(block.operations)[-1].operands)
            changed = False
            for a, y in zip(args, yields):
                new = self.info[a].meet(self.get(y))
                if new != self.info[a]:
                    self.info[a], changed = new, True
            if not changed:
                break
        for r, a in zip(op.results, args):
            self.info[r] = self.info[a]

    def rule(self, op, name, res) -> AxisInfo:
        shape = _shape(res.type)
        ins = [self.get(v) for v in op.operands]
        if name == "arith.constant":
            attr = op.attributes["value"]
            if isinstance(attr, ir.IntegerAttr):
                return constant(shape, ir.IntegerAttr(attr).value)
            if isinstance(attr, ir.DenseIntElementsAttr) and ir.DenseElementsAttr(attr).is_splat:
                return constant(shape, ir.IntegerAttr(ir.DenseElementsAttr(attr).get_splat_value()).value)
            return unknown(shape)
        if name == "xb.arange":
            start = ir.IntegerAttr(op.attributes["start"]).value
            return AxisInfo((shape[0],), (_pow2_div(start),), (1,))
        if name == "xb.splat":
            s = ins[0]
            return AxisInfo((1,) * len(shape), (s.divisibility[0],) * len(shape), shape, s.constant)
        if name == "xb.broadcast":
            s, src = ins[0], _shape(op.operands[0].type)
            return AxisInfo(tuple(c if d == r else 1 for c, d, r in zip(s.contiguity, src, shape)),
                            s.divisibility,
                            tuple(k if d == r else r for k, d, r in zip(s.constancy, src, shape)), s.constant)
        if name == "xb.expand_dims":
            s = ins[0]
            ax = ir.IntegerAttr(op.attributes["axis"]).value
            ins_at = lambda t, v: t[:ax] + (v,) + t[ax:]  # noqa: E731
            return AxisInfo(ins_at(s.contiguity, 1), ins_at(s.divisibility, min(s.divisibility)),
                            ins_at(s.constancy, 1), s.constant)
        if name == "xb.trans":
            s = ins[0]
            order = list(ir.DenseI32ArrayAttr(op.attributes["order"]))
            return AxisInfo(tuple(s.contiguity[o] for o in order), tuple(s.divisibility[o] for o in order),
                            tuple(s.constancy[o] for o in order), s.constant)
        if name in ("xb.int_to_ptr", "xb.ptr_to_int", "xb.ptr_cast"):
            # the same byte addresses: runs of consecutive elements stay runs if the element size does
            s = ins[0]
            size_in = _elem_bytes(op.operands[0].type) if name != "xb.int_to_ptr" else 1
            size_out = _elem_bytes(res.type) if name != "xb.ptr_to_int" else 1
            if size_in == size_out:
                return s
            return AxisInfo((1,) * len(shape), s.divisibility, s.constancy, s.constant)
        if name in ("arith.extsi", "arith.extui", "arith.trunci", "arith.index_cast"):
            return ins[0]
        if name in ("xb.program_id", "xb.num_programs"):
            return unknown(shape)
        if name == "xb.addptr":
            return _add(ins[0], ins[1], _elem_bytes(res.type))
        if name == "arith.addi":
            return _add(ins[0], ins[1], 1)
        if name == "arith.subi":
            return _add(ins[0], ins[1], 1, sub=True)
        if name == "arith.muli":
            return _mul(ins[0], ins[1])
        if name in ("arith.remsi", "arith.remui") and ins[1].constant:
            c = ins[1].constant
            return AxisInfo(tuple(math.gcd(x, _pow2_div(c)) for x in ins[0].contiguity),
                            (1,) * len(shape), ins[0].constancy)
        if name in ("arith.divsi", "arith.divui") and ins[1].constant:
            c = _pow2_div(ins[1].constant)
            return AxisInfo((1,) * len(shape), (1,) * len(shape),
                            tuple(max(k, math.gcd(x, c)) for k, x in zip(ins[0].constancy, ins[0].contiguity)))
        if name == "arith.select" and len(ins) == 3:
            return ins[1].meet(ins[2])
        if ins and all(len(i.constancy) == len(shape) for i in ins):
            return AxisInfo((1,) * len(shape), (1,) * len(shape),
                            tuple(math.gcd(*(i.constancy[d] for i in ins)) for d in range(len(shape))))
        return unknown(shape)


def analyze(func) -> dict:
    """AxisInfo of every integer and pointer value of a kernel `func.func`."""
    a = _Analysis()
    block = func.regions[0].blocks[0]
    for arg in block.arguments:
        attrs = None
        div = 1
        try:
            attrs = func.arg_attrs[arg.arg_number] if func.arg_attrs is not None else None
        except (AttributeError, IndexError):
            attrs = None
        if attrs is not None and "xb.divisibility" in ir.DictAttr(attrs):
            div = ir.IntegerAttr(ir.DictAttr(attrs)["xb.divisibility"]).value
        a.info[arg] = unknown((1,), div)
    a.block(block)
    return a.info


# ------------------------------------------------------------------------------ mask bounds
@dataclass(frozen=True)
class Lanes:
    """The lanes of an i32 block are `sum(sign * scalar for scalar, sign in terms) + start + i`,
    for i in [0, count) (each value repeated any number of times, in any order)."""

    terms: tuple
    start: int
    count: int


@dataclass(frozen=True)
class Bound:
    """Every lane `x` of `lanes` satisfies `x <pred> limit`; `limit` is (terms, constant), lane-invariant."""

    pred: str
    lanes: Lanes
    limit: tuple


_SWAP = {"slt": "sgt", "sle": "sge", "sgt": "slt", "sge": "sle"}
_PREDICATES = {2: "slt", 3: "sle", 4: "sgt", 5: "sge"}
_VIEWS = ("xb.broadcast", "xb.expand_dims", "xb.reshape")


def _defining(v):
    owner = v.owner
    if isinstance(owner, ir.Block):
        return None, None
    op = owner.operation if hasattr(owner, "operation") else owner
    return op.name, op


def _is_i32(v) -> bool:
    return str(_elem(v.type)) == "i32"


def _invariant(v):
    """A lane-invariant integer block as (terms, constant), or None."""
    name, op = _defining(v)
    if name == "xb.splat":
        return ((op.operands[0], 1),), 0
    if name == "arith.constant":
        attr = op.attributes["value"]
        if isinstance(attr, ir.DenseIntElementsAttr) and ir.DenseElementsAttr(attr).is_splat:
            return (), ir.IntegerAttr(ir.DenseElementsAttr(attr).get_splat_value()).value
        return None
    if name in _VIEWS:
        return _invariant(op.operands[0])
    if name in ("arith.addi", "arith.subi"):
        a, b = _invariant(op.operands[0]), _invariant(op.operands[1])
        if a is None or b is None:
            return None
        if name == "arith.subi":
            b = (tuple((t, -s) for t, s in b[0]), -b[1])
        return a[0] + b[0], a[1] + b[1]
    return None


def _lanes(v):
    """The block as Lanes (a scalar plus an arange), or None."""
    name, op = _defining(v)
    if name == "xb.arange":
        start = ir.IntegerAttr(op.attributes["start"]).value
        return Lanes((), start, ir.IntegerAttr(op.attributes["end"]).value - start)
    if name in _VIEWS:
        return _lanes(op.operands[0])
    if name in ("arith.addi", "arith.subi"):
        a, b = op.operands
        la, ib = _lanes(a), _invariant(b)
        if la is None and name == "arith.addi":
            la, ib = _lanes(b), _invariant(a)
        if la is None or ib is None:
            return None
        sign = -1 if name == "arith.subi" else 1
        return Lanes(la.terms + tuple((t, sign * s) for t, s in ib[0]), la.start + sign * ib[1], la.count)
    return None


def mask_bounds(mask) -> list | None:
    """The i1 block `mask` as a conjunction of Bounds, when its structure shows one.

    Masks like `offs < n` with `offs = pid * BLOCK + arange(0, BLOCK)` (and `&` of such, broadcast)
    are all true iff each bound holds at the end lanes: a backend decides full-block-ness from
    scalars, without evaluating the mask.
    """
    name, op = _defining(mask)
    if name in _VIEWS:
        return mask_bounds(op.operands[0])
    if name == "arith.andi":
        a, b = mask_bounds(op.operands[0]), mask_bounds(op.operands[1])
        return a + b if a is not None and b is not None else None
    if name != "arith.cmpi" or not _is_i32(op.operands[0]):
        return None
    pred = _PREDICATES.get(ir.IntegerAttr(op.attributes["predicate"]).value)
    if pred is None:
        return None
    lhs, rhs = op.operands
    lanes, limit = _lanes(lhs), _invariant(rhs)
    if lanes is None or limit is None:
        lanes, limit, pred = _lanes(rhs), _invariant(lhs), _SWAP[pred]
    if lanes is None or limit is None:
        return None
    return [Bound(pred, lanes, limit)]
