"""Rule for xb.dot: a register-tiled outer-product kernel with fused multiply-add.

The output tile is covered by RM rows x NV chunks of accumulators held in registers across
the K loop; each step loads NV chunks of a row of B and broadcasts RM elements of A, so
every loaded B vector feeds RM FMAs. fp16/bf16 inputs are widened to fp32 as they are read.
A 3-D dot (a batch of matrices) runs that kernel once per matrix of the batch.

f32 operands are multiplied as `input_precision` says (docs/LANGUAGE.md, "dot precision"), as the
sim does (`sim/rules.py`, DOT_SPLITS): the operands are split into tf32 or bf16 parts first, and
the kernel runs once per pair of parts.
"""

from __future__ import annotations

import math

from mlir import ir

from .elementwise import convert, with_elem
from .emit import index_sum, is_float, vec
from .irtypes import FP8, float_elem, tensor_parts
from .rules import rule
from .values import VW, Buffer, Lazy, Splat, materialize, storage, store_chunk

ROWS = 8  # accumulator rows of a register tile
CHUNKS = 2  # accumulator chunks per row
# input_precision -> (how operands split, parts per operand, (a part, b part) pairs of the small sum);
# the same table as the sim's
DOT_SPLITS = {"tf32": ("tf32", 1, ()), "tf32x3": ("tf32", 2, ((1, 0), (0, 1))),
              "bf16x3": ("bf16", 2, ((1, 0), (0, 1))),
              "bf16x6": ("bf16", 3, ((1, 1), (2, 0), (0, 2), (1, 0), (0, 1)))}


@rule("xb.dot")
def _lower_dot(ctx, op):
    e = ctx.e
    if any(float_elem(v.type) in FP8 for v in op.operands[:2]):
        raise ctx.error("dot of float8 blocks is not supported on cpu: convert them to float16 or float32 first")
    a, b, acc = (ctx.get(v) for v in op.operands)
    shape, ety, _ = tensor_parts(op.results[0].type)
    split = DOT_SPLITS.get(ir.StringAttr(op.attributes["input_precision"]).value) if a.ety == "f32" else None
    out = _gemm(e, a.buffer(e), b.buffer(e), acc, ety) if split is None else _split_gemm(e, a, b, acc, *split)
    ctx.define(op.results[0], Buffer(out, shape, ety))


def _gemm(e, abuf, bbuf, init, ety):
    """A buffer holding init + a @ b (of element `ety`), batched over a leading axis if any."""
    *batch, M, K = abuf.shape
    N = bbuf.shape[-1]
    out = e.alloca(math.prod(batch) * M * N, storage(ety))
    if not batch:
        _matrix(e, abuf, bbuf, init, out, ety, ((), (), ()))
        return out

    def one(bi, _):
        _matrix(e, abuf, bbuf, init, out, ety, (((bi, M * K),), ((bi, K * N),), ((bi, M * N),)))

    e.range_(batch[0], 1, one)
    return out


def _matrix(e, abuf, bbuf, init, out, ety, base):
    """One M x K by K x N product into `out`; `base` holds the index terms of this matrix in a, b, out."""
    M, K = abuf.shape[-2:]
    N = bbuf.shape[-1]
    oa, ob, oc = base
    ct = ("f64" if ety == "f64" else "f32") if is_float(ety) else ("i64" if ety == "i64" else "i32")
    w = math.gcd(N, VW)
    nv = CHUNKS if (N // w) % CHUNKS == 0 else 1
    rm = math.gcd(M, ROWS)
    vt = vec(w, ct)

    def fma(x, y, z):
        if is_float(ct):
            return e.op(f"math.fma {x}, {y}, {z} : {vt}", vt)
        p = e.op(f"arith.muli {x}, {y} : {vt}", vt)
        return e.op(f"arith.addi {p}, {z} : {vt}", vt)

    def tile(m0, n0):
        accs = [convert(e, init.chunk(e, index_sum(e, *oc, (m0, N), r * N, n0, v * w), w), ct)
                for r in range(rm) for v in range(nv)]

        def kstep(k, st):
            bs = [convert(e, bbuf.chunk(e, index_sum(e, *ob, (k, N), n0, v * w), w), ct) for v in range(nv)]
            st = list(st)
            for r in range(rm):
                s = convert(e, abuf.elem(e, index_sum(e, *oa, (m0, K), r * K, k)), ct)
                av = e.op(f"vector.broadcast {s} : {ct} to {vt}", vt)
                for v in range(nv):
                    st[r * nv + v] = fma(av, bs[v], st[r * nv + v])
            return st

        accs = e.range_(K, 1, kstep, accs)
        for r in range(rm):
            for v in range(nv):
                at = index_sum(e, *oc, (m0, N), r * N, n0, v * w)
                store_chunk(e, out, at, convert(e, accs[r * nv + v], ety), ety)

    e.range_(M, rm, lambda m0, _: e.range_(N, w * nv, lambda n0, _: tile(m0, n0)) and None)


# ------------------------------------------------------------------------------------ f32 precisions
def _split_gemm(e, a, b, acc, kind, n, pairs):
    """acc + a @ b of f32 blocks, their products taken part by part (the sim's `_dot_parts`)."""
    pa, pb = _split(e, a.buffer(e), kind, n), _split(e, b.buffer(e), kind, n)
    if not pairs:
        return _gemm(e, pa[0], pb[0], acc, "f32")
    small = Splat(e.const(0.0, "f32"), acc.shape, "f32")
    for i, j in pairs:
        small = Buffer(_gemm(e, pa[i], pb[j], small, "f32"), acc.shape, "f32")
    small = Lazy(_nan_to_zero, [small], acc.shape, "f32")
    big = Buffer(_gemm(e, pa[0], pb[0], small, "f32"), acc.shape, "f32")
    return materialize(e, Lazy(lambda e, xs, ty: e.op(f"arith.addf {xs[0]}, {xs[1]} : {ty}", ty),
                               [big, acc], acc.shape, "f32")).mem


def _split(e, x, kind, n) -> list:
    """The parts of f32 buffer `x`, each in a buffer of its own."""
    if kind == "bf16":
        parts, rest = [], x
        for _ in range(n):
            parts.append(materialize(e, Lazy(_bf16, [rest], x.shape, "f32")))
            rest = materialize(e, Lazy(lambda e, xs, ty: e.op(f"arith.subf {xs[0]}, {xs[1]} : {ty}", ty),
                                       [rest, parts[-1]], x.shape, "f32"))
        return parts
    if n == 1:
        return [materialize(e, Lazy(_tf32_truncated, [x], x.shape, "f32"))]
    big = materialize(e, Lazy(_tf32_rounded, [x], x.shape, "f32"))
    small = Lazy(lambda e, xs, ty: _tf32_truncated(e, [e.op(f"arith.subf {xs[0]}, {xs[1]} : {ty}", ty)], ty),
                 [x, big], x.shape, "f32")
    return [big, materialize(e, small)]


def _tf32_truncated(e, xs, ty):
    return _tf32(e, xs[0], ty, 0)


def _tf32_rounded(e, xs, ty):
    return _tf32(e, xs[0], ty, 0x1000)


def _tf32(e, x, ty, half):
    """f32 values kept to tf32's 10 mantissa bits: truncated (half=0) or rounded half away (0x1000)."""
    it = with_elem(ty, "i32")
    bits = e.op(f"arith.bitcast {x} : {ty} to {it}", it)
    kept = e.op(f"arith.addi {bits}, {e.const(half, it)} : {it}", it) if half else bits
    kept = e.op(f"arith.andi {kept}, {e.const(-0x2000, it)} : {it}", it)
    y = e.op(f"arith.bitcast {kept} : {it} to {ty}", ty)
    inf = e.const(0x7F800000, it)  # Inf and NaN (all exponent bits set) stay as they are
    exp = e.op(f"arith.andi {bits}, {inf} : {it}", it)
    finite = e.op(f"arith.cmpi ne, {exp}, {inf} : {it}", with_elem(ty, "i1"))
    return _select(e, finite, y, x)


def _bf16(e, xs, ty):
    """f32 values rounded to bf16 (to nearest even), as f32."""
    bt = with_elem(ty, "bf16")
    h = e.op(f"arith.truncf {xs[0]} : {ty} to {bt}", bt)
    return e.op(f"arith.extf {h} : {bt} to {ty}", ty)


def _nan_to_zero(e, xs, ty):
    nan = e.op(f"arith.cmpf uno, {xs[0]}, {xs[0]} : {ty}", with_elem(ty, "i1"))
    return _select(e, nan, e.const(0.0, ty), xs[0])


def _select(e, c, x, y):
    sig = f"{c.type}, {x.type}" if x.type.startswith("vector<") else x.type
    return e.op(f"arith.select {c}, {x}, {y} : {sig}", x.type)
