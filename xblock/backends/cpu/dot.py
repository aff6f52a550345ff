"""Rule for xb.dot: a register-tiled outer-product kernel with fused multiply-add.

The output tile is covered by RM rows x NV chunks of accumulators held in registers across
the K loop; each step loads NV chunks of a row of B and broadcasts RM elements of A, so
every loaded B vector feeds RM FMAs. fp16/bf16 inputs are widened to fp32 as they are read.
"""

from __future__ import annotations

import math

from .elementwise import convert
from .emit import index_sum, is_float, vec
from .irtypes import FP8, float_elem, tensor_parts
from .rules import rule
from .values import VW, Buffer, storage, store_chunk

ROWS = 8  # accumulator rows of a register tile
CHUNKS = 2  # accumulator chunks per row


@rule("xb.dot")
def _lower_dot(ctx, op):
    e = ctx.e
    if any(float_elem(v.type) in FP8 for v in op.operands[:2]):
        raise ctx.error("dot of float8 blocks is not supported on cpu: convert them to float16 or float32 first")
    a, b, acc = (ctx.get(v) for v in op.operands)
    (M, K), (_, N) = a.shape, b.shape
    shape, ety, _ = tensor_parts(op.results[0].type)
    ct = ("f64" if ety == "f64" else "f32") if is_float(ety) else ("i64" if ety == "i64" else "i32")
    abuf, bbuf = a.buffer(e), b.buffer(e)
    out = e.alloca(M * N, storage(ety))
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
        accs = [convert(e, acc.chunk(e, index_sum(e, (m0, N), r * N, n0, v * w), w), ct)
                for r in range(rm) for v in range(nv)]

        def kstep(k, st):
            bs = [convert(e, bbuf.chunk(e, index_sum(e, (k, N), n0, v * w), w), ct) for v in range(nv)]
            st = list(st)
            for r in range(rm):
                s = convert(e, abuf.elem(e, index_sum(e, (m0, K), r * K, k)), ct)
                av = e.op(f"vector.broadcast {s} : {ct} to {vt}", vt)
                for v in range(nv):
                    st[r * nv + v] = fma(av, bs[v], st[r * nv + v])
            return st

        accs = e.range_(K, 1, kstep, accs)
        for r in range(rm):
            for v in range(nv):
                at = index_sum(e, (m0, N), r * N, n0, v * w)
                store_chunk(e, out, at, convert(e, accs[r * nv + v], ety), ety)

    e.range_(M, rm, lambda m0, _: e.range_(N, w * nv, lambda n0, _: tile(m0, n0)) and None)
    ctx.define(op.results[0], Buffer(out, shape, ety))
