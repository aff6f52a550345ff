"""Rules for the ops that move elements between blocks: join, split, cat, gather, histogram.

join and split are index maps of their sources (lazy, like broadcast and trans); cat stores both
halves into one buffer; gather reads a stored source at indices computed lane by lane (clamped to
the block, so a bad index never reads outside it); histogram counts in a scalar loop.
"""

from __future__ import annotations

import math

from mlir import ir

from .emit import V, vec
from .irtypes import tensor_parts
from .rules import rule
from .values import Arange, Buffer, Lazy, TVal, gather_lanes, mapped, storage, store_chunk


def _strides(shape) -> list[int]:
    return [math.prod(shape[i + 1:]) for i in range(len(shape))]


@rule("xb.join")
def _lower_join(ctx, op):
    a, b = (ctx.get(o) for o in op.operands)
    shape, ety, _ = tensor_parts(op.results[0].type)
    # each source read at [..., j] for both positions of the new minor dim; a lane-parity select
    spread = [mapped(ctx.e, s, shape, _strides(s.shape) + [0]) for s in (a, b)]
    parity = mapped(ctx.e, Arange(0, 2), shape, [0] * (len(shape) - 1) + [1])

    def fn(e, vals, ty):
        p, x, y = vals
        first = e.op(f"arith.cmpi eq, {p}, {e.const(0, p.type)} : {p.type}", p.type.replace("i32", "i1"))
        return e.op(f"arith.select {first}, {x}, {y} : {first.type}, {ty}", ty)

    ctx.define(op.results[0], Lazy(fn, [parity] + spread, shape, ety, a.pointee, 2))


@rule("xb.split")
def _lower_split(ctx, op):
    src = ctx.get(op.operands[0]).buffer(ctx.e)  # both halves read it with a stride of 2
    shape, _, _ = tensor_parts(op.results[0].type)
    coefs = _strides(src.shape)[:-1]
    for k, res in enumerate(op.results):
        ctx.define(res, mapped(ctx.e, src, shape, coefs, offset=k))


@rule("xb.cat")
def _lower_cat(ctx, op):
    e = ctx.e
    a, b = (ctx.get(o) for o in op.operands)
    shape, ety, pointee = tensor_parts(op.results[0].type)
    mem = e.alloca(math.prod(shape), storage(ety))
    for src, base in ((a, 0), (b, a.n)):
        w = src.w

        def body(i, _, src=src, base=base, w=w):
            at = e.op(f"arith.addi {i}, {e.idx(base)} : index", "index") if base else i
            store_chunk(e, mem, at, src.chunk(e, i, w), ety)

        e.range_(src.n, w, body)
    ctx.define(op.results[0], Buffer(mem, shape, ety, pointee))


class Gathered(TVal):
    """result[j] = src[coords of j, with the axis coordinate replaced by index[j]] (index clamped)."""

    cost = 6

    def __init__(self, src: Buffer, index: TVal, axis: int):
        super().__init__(index.shape, src.ety, src.pointee)
        self.src, self.index, self.axis = src, index, axis
        self.src_strides = _strides(src.shape)
        self.strides = _strides(index.shape)

    def _address(self, e, flat: V, index: V, ty: str) -> V:
        """The source's flat offset of result lanes `flat` (index or vector<index>) reading `index`."""
        it = ty.replace("index", "i32")
        n = self.src.shape[self.axis]
        # unsigned min: a negative index becomes huge and clamps to the last element
        idx = e.op(f"arith.minui {index}, {e.const(n - 1, it)} : {it}", it)
        idx = e.op(f"arith.index_cast {idx} : {it} to {ty}", ty)
        total = e.op(f"arith.muli {idx}, {e.const(self.src_strides[self.axis], ty)} : {ty}", ty)
        for d, (dim, stride) in enumerate(zip(self.shape, self.strides)):
            if d == self.axis or dim == 1:
                continue
            c = e.op(f"arith.divui {flat}, {e.const(stride, ty)} : {ty}", ty) if stride != 1 else flat
            c = e.op(f"arith.remui {c}, {e.const(dim, ty)} : {ty}", ty)
            c = e.op(f"arith.muli {c}, {e.const(self.src_strides[d], ty)} : {ty}", ty)
            total = e.op(f"arith.addi {total}, {c} : {ty}", ty)
        return total

    def chunk(self, e, idx, w):
        vt = vec(w, "index")
        lanes = e.op(f"arith.addi {e.op(f'vector.broadcast {idx} : index to {vt}', vt)}, "
                     f"{e.iota(w, 'index')} : {vt}", vt)
        return gather_lanes(e, self.src, self._address(e, lanes, self.index.chunk(e, idx, w), vt), w)

    def elem(self, e, idx):
        return self.src.elem(e, self._address(e, idx, self.index.elem(e, idx), "index"))


@rule("xb.gather")
def _lower_gather(ctx, op):
    src, index = (ctx.get(o) for o in op.operands)
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    ctx.define(op.results[0], Gathered(src.buffer(ctx.e), index, axis))


@rule("xb.histogram")
def _lower_histogram(ctx, op):
    e = ctx.e
    src = ctx.get(op.operands[0])
    mask = ctx.get(op.operands[1]) if len(op.operands) > 1 else None
    bins = ir.IntegerAttr(op.attributes["num_bins"]).value
    out = e.alloca(bins, "i32")
    zero = e.const(0, "i32")

    def clear(i, _):
        e.line(f"memref.store {zero}, {out}[{i}] : {out.type}")

    e.range_(bins, 1, clear)

    def count(i, _):
        v = src.elem(e, i)
        ok = e.op(f"arith.cmpi ult, {v}, {e.const(bins, 'i32')} : i32", "i1")  # negative values too
        if mask is not None:
            ok = e.op(f"arith.andi {ok}, {mask.elem(e, i)} : i1", "i1")

        def bump():
            at = e.op(f"arith.index_cast {v} : i32 to index", "index")
            old = e.op(f"memref.load {out}[{at}] : {out.type}", "i32")
            one = e.const(1, "i32")
            new = e.op(f"arith.addi {old}, {one} : i32", "i32")
            e.line(f"memref.store {new}, {out}[{at}] : {out.type}")

        e.if_(ok, bump)

    e.range_(src.n, 1, count)
    shape, _, _ = tensor_parts(op.results[0].type)
    ctx.define(op.results[0], Buffer(out, shape, "i32"))

