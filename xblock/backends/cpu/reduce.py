"""Rules for xb.reduce and xb.scan: vector accumulators along the axis or across inner lanes.

A reduction over the last axis keeps one vector accumulator per row and finishes with a
horizontal `vector.reduction`; a reduction over an outer axis accumulates whole chunks of the
inner dimensions (no horizontal step). Short axes, scans and generic combine regions run lane
by lane. fp16/bf16 accumulate in fp32, as the sim does.
"""

from __future__ import annotations

import math

from mlir import ir

from .elementwise import convert, with_elem
from .emit import V, elem_of, index_sum, is_float, vec
from .irtypes import scalar_type, tensor_parts
from .rules import lower_block, rule
from .values import VW, Buffer, storage, store_chunk

_SIMPLE = {  # kind -> (float op, int op, horizontal kind for float, for int)
    "sum": ("arith.addf", "arith.addi", "add", "add"),
    "prod": ("arith.mulf", "arith.muli", "mul", "mul"),
    "max": ("arith.maxnumf", "arith.maxsi", "maxnumf", "maxsi"),
    "min": ("arith.minnumf", "arith.minsi", "minnumf", "minsi"),
    "xor_sum": (None, "arith.xori", None, "xor"),
    "cumsum": ("arith.addf", "arith.addi", "add", "add"),
    "cumprod": ("arith.mulf", "arith.muli", "mul", "mul"),
}
_BOOL = {"max": ("arith.ori", "or"), "min": ("arith.andi", "and")}


def _acc_type(ety: str) -> str:
    return "f32" if ety in ("f16", "bf16") else ety


class Combiner:
    """How one reduction or scan kind starts, steps and finishes, on scalars or vectors."""

    def __init__(self, ctx, op, kind: str, src_ety: str, res_etys):
        self.ctx, self.e, self.op, self.kind = ctx, ctx.e, op, kind
        self.src_ety, self.res_etys = src_ety, res_etys
        self.acc = _acc_type(src_ety)
        if kind in _SIMPLE:
            fop, iop, fh, ih = _SIMPLE[kind]
            if src_ety == "i1" and kind in _BOOL:
                iop, ih = _BOOL[kind]
            self.fn, self.horiz = (fop, fh) if is_float(src_ety) else (iop, ih)

    def start(self, vals, idx):
        if self.kind == "generic":
            return list(vals)
        x = convert(self.e, vals[0], self.acc)
        if self.kind in ("argmax", "argmin"):
            return [self._fill(x), idx]
        return [x]

    def _fill(self, x):
        if not is_float(self.acc):
            return x
        e = self.e
        fill = e.const(float("-inf") if self.kind == "argmax" else float("inf"), x.type)
        nan = e.op(f"arith.cmpf uno, {x}, {x} : {x.type}", with_elem(x.type, "i1"))
        return _select(e, nan, fill, x)

    def step(self, state, vals, idx):
        e = self.e
        if self.kind == "generic":
            return inline_region(self.ctx, self.op.regions[0], state + list(vals))
        x = convert(e, vals[0], self.acc)
        if self.kind in ("argmax", "argmin"):
            x = self._fill(x)
            pred = ("ogt" if self.kind == "argmax" else "olt") if is_float(self.acc) else (
                "sgt" if self.kind == "argmax" else "slt")
            cmp = "cmpf" if is_float(self.acc) else "cmpi"
            take = e.op(f"arith.{cmp} {pred}, {x}, {state[0]} : {x.type}", with_elem(x.type, "i1"))
            return [_select(e, take, x, state[0]), _select(e, take, idx, state[1])]
        return [e.op(f"{self.fn} {state[0]}, {x} : {x.type}", x.type)]

    def horizontal(self, state) -> list:
        """Scalars of a vector state, after its lanes are combined."""
        e = self.e
        if self.kind in ("argmax", "argmin"):
            best, bidx = state
            f = is_float(self.acc)
            kind = ("maxnumf" if f else "maxsi") if self.kind == "argmax" else ("minnumf" if f else "minsi")
            m = e.op(f"vector.reduction <{kind}>, {best} : {best.type} into {self.acc}", self.acc)
            mv = e.op(f"vector.broadcast {m} : {self.acc} to {best.type}", best.type)
            eq = e.op(f"arith.{'cmpf oeq' if f else 'cmpi eq'}, {best}, {mv} : {best.type}",
                      with_elem(best.type, "i1"))
            it = elem_of(bidx.type)
            cand = _select(e, eq, bidx, e.const(2**31 - 1, bidx.type))
            return [m, e.op(f"vector.reduction <minsi>, {cand} : {cand.type} into {it}", it)]
        return [e.op(f"vector.reduction <{self.horiz}>, {state[0]} : {state[0].type} into {self.acc}", self.acc)]

    def results(self, state) -> list:
        if self.kind == "generic":
            return state
        if self.kind in ("argmax", "argmin"):
            return [convert(self.e, state[1], self.res_etys[0])]
        return [convert(self.e, state[0], self.res_etys[0])]


def _select(e, c, a, b):
    sig = f"{c.type}, {a.type}" if c.type.startswith("vector<") else a.type
    return e.op(f"arith.select {c}, {a}, {b} : {sig}", a.type)


def inline_region(ctx, region, args) -> list:
    block = region.blocks[0]
    for a, v in zip(block.arguments, args):
        ctx.vals[a] = v
    term = lower_block(ctx, block)
    return [ctx.get(v) for v in term.operands]


def _index_vec(e, k: V, w: int, lanes: bool, ity: str) -> V:
    """Index of each lane along the reduced axis: k + lane (lanes along the axis) or k."""
    s = e.op(f"arith.index_cast {k} : index to {ity}", ity)
    if w == 0:
        return s
    v = e.op(f"vector.broadcast {s} : {ity} to {vec(w, ity)}", vec(w, ity))
    return e.op(f"arith.addi {v}, {e.iota(w, ity)} : {vec(w, ity)}", vec(w, ity)) if lanes else v


@rule("xb.reduce")
def _lower_reduce(ctx, op):
    e = ctx.e
    kind = ir.StringAttr(op.attributes["kind"]).value
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    srcs = [ctx.get(v) for v in op.operands]
    shape = srcs[0].shape
    outer, size, inner = math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1 :])
    res = list(op.results)
    res_parts = [tensor_parts(r.type) for r in res]
    res_etys = [p[1] if p else scalar_type(r.type) for p, r in zip(res_parts, res)]
    comb = Combiner(ctx, op, kind, srcs[0].ety, res_etys)
    ity = res_etys[0] if kind in ("argmax", "argmin") else "i32"
    if kind != "generic" and inner == 1 and size % VW == 0:
        mode, w = "axis", VW
    elif kind != "generic" and inner % VW == 0:
        mode, w = "inner", VW
    else:
        mode, w = "scalar", 0
    outs = [e.alloca(max(outer * inner, 1), storage(t)) for t in res_etys] if res_parts[0] else None
    scalars = []

    def read(base, k):
        if mode == "axis":
            return [s.chunk(e, index_sum(e, base, (k, 1)), w) for s in srcs]
        if mode == "inner":
            return [s.chunk(e, index_sum(e, base, (k, inner)), w) for s in srcs]
        return [s.elem(e, index_sum(e, base, (k, inner))) for s in srcs]

    def reduce_one(o, j):
        base = index_sum(e, (o, size * inner), j)
        first = comb.start(read(base, e.idx(0)), _index_vec(e, e.idx(0), w, mode == "axis", ity))
        step = w if mode == "axis" else 1

        def body(k, st):
            return comb.step(st, read(base, k), _index_vec(e, k, w, mode == "axis", ity))

        st = e.for_(e.idx(step), e.idx(size), e.idx(step), body, first) if size > step else first
        vals = comb.results(comb.horizontal(st) if mode == "axis" else st)
        if outs is None:
            scalars.extend(vals)
            return
        at = index_sum(e, (o, inner), j)
        for mem, v, t in zip(outs, vals, res_etys):
            if mode == "inner":
                store_chunk(e, mem, at, v, t)
            else:
                if t == "i1":
                    v = e.op(f"arith.extui {v} : i1 to i8", "i8")
                e.line(f"memref.store {v}, {mem}[{at}] : {mem.type}")

    jstep = w if mode == "inner" else 1
    if outs is None:
        reduce_one(e.idx(0), e.idx(0))
        for r, v in zip(res, scalars):
            ctx.define(r, v)
        return
    e.range_(outer, 1, lambda o, _: e.range_(inner, jstep, lambda j, _: reduce_one(o, j)) and None)
    for r, mem, p in zip(res, outs, res_parts):
        ctx.define(r, Buffer(mem, p[0], p[1], p[2]))


@rule("xb.scan")
def _lower_scan(ctx, op):
    e = ctx.e
    kind = ir.StringAttr(op.attributes["kind"]).value
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    reverse = ir.BoolAttr(op.attributes["reverse"]).value
    srcs = [ctx.get(v) for v in op.operands]
    shape = srcs[0].shape
    outer, size, inner = math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1 :])
    res = list(op.results)
    parts = [tensor_parts(r.type) for r in res]
    etys = [p[1] for p in parts]
    comb = Combiner(ctx, op, kind, srcs[0].ety, etys)
    outs = [e.alloca(math.prod(shape), storage(t)) for t in etys]

    def pos(o, j, k):
        if reverse:
            k = e.op(f"arith.subi {e.idx(size - 1)}, {k} : index", "index")
        return index_sum(e, (o, size * inner), j, (k, inner))

    def write(at, state):
        for mem, v, t in zip(outs, comb.results(state), etys):
            if t == "i1":
                v = e.op(f"arith.extui {v} : i1 to i8", "i8")
            e.line(f"memref.store {v}, {mem}[{at}] : {mem.type}")

    def scan_one(o, j):
        at = pos(o, j, e.idx(0))
        st = comb.start([s.elem(e, at) for s in srcs], None)
        write(at, st)

        def body(k, st):
            at = pos(o, j, k)
            st = comb.step(st, [s.elem(e, at) for s in srcs], None)
            write(at, st)
            return st

        if size > 1:
            e.for_(e.idx(1), e.idx(size), e.idx(1), body, st)

    e.range_(outer, 1, lambda o, _: e.range_(inner, 1, lambda j, _: scan_one(o, j)) and None)
    for r, mem, p in zip(res, outs, parts):
        ctx.define(r, Buffer(mem, p[0], p[1], p[2]))
