"""Reductions the vector unit has no instruction for: prod, xor_sum and generic (`xl.reduce` with a
combine function), as scalar GetValue/SetValue loops over the lanes.

AscendC has ReduceSum/Max/Min but no product or xor reduction, and a combine function is arbitrary
scalar code, so these run on the scalar unit, with the combine function lowered as C++ scalars.
prod and xor_sum fold left to right (exact for xor; a product is within rounding of numpy's).
A combine function runs in the sim's order, pairwise ((0,1), (2,3), ...; an odd last lane moves
up), in place on a UB copy of the block, so any combine, associative or not, gives the sim's bits.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from ...dialects import ascendc as A
from .context import FLOAT, Splat, elem_of, numel, shape_of
from .memory import _after_scalar_writes, _before_scalar_reads

KINDS = ("prod", "xor_sum", "generic")


def _combine(L, op, kind: str, accs: list, xs: list) -> list:
    """The combined scalars of the running values `accs` and the next lanes `xs`."""
    a, x = accs[0], xs[0]
    if kind == "prod":
        return [(arith.MulFOp if str(a.type) in FLOAT else arith.MulIOp)(a, x).result]
    if kind == "xor_sum":
        return [arith.XOrIOp(a, x).result]
    body = op.regions[0].blocks[0]
    for arg, v in zip(body.arguments, accs + xs):
        L.vmap[arg] = v
    out: list = []
    L.lower_block(body, lambda y: out.extend(L.scalar(v) for v in y.operands))
    return out


def _pairwise(L, op, work: list, base, n: int, post: int) -> list:
    """The sim's pairwise reduction of lanes base + j * post (j < n) of the `work` tiles, in place:
    level by level, w[i] = combine(w[2i], w[2i+1]); an odd last lane moves to w[n // 2]."""
    types = [ir.Type.parse(w.elem) for w in work]

    def at(j):
        return L.add(base, L.mul(j, L.c64(post))) if post != 1 else L.add(base, j)

    length = n
    while length > 1:
        half = length // 2
        loop = L.for_range(0, half)
        with ir.InsertionPoint(loop.body):
            i = loop.induction_variable
            two_i = L.mul(i, L.c64(2))
            a = [A.op("get_value", [w.value, at(two_i)], t) for w, t in zip(work, types)]
            b = [A.op("get_value", [w.value, at(L.add(two_i, L.c64(1)))], t) for w, t in zip(work, types)]
            for w, v in zip(work, _combine(L, op, "generic", a, b)):
                A.op("set_value", [w.value, at(i), v])
            scf.YieldOp([])
        if length % 2:
            for w, t in zip(work, types):
                A.op("set_value", [w.value, at(L.c64(half)), A.op("get_value", [w.value, at(L.c64(length - 1))], t)])
        length = half + length % 2
    return [A.op("get_value", [w.value, base], t) for w, t in zip(work, types)]


def scalar_reduce(L, op, kind: str, axis: int) -> None:
    """Lower xb.reduce `op` of `kind` (one of KINDS) along `axis` as scalar loops."""
    from .lowering import scalar_convert

    srcs = list(op.operands)
    shape = shape_of(srcs[0].type)
    tiles = [L.tile(s) for s in srcs]
    if kind == "xor_sum" and tiles[0].elem in FLOAT:
        raise L.error("ascend: xor_sum of float blocks")
    if kind == "generic" and any(t.elem == "bf16" for t in tiles):
        raise L.error("ascend: a reduce with a combine function on bf16 blocks is not supported (cast to float)")
    work = ["f32" if kind == "prod" and t.elem in ("f16", "bf16") else t.elem for t in tiles]
    flat = not str(op.results[0].type).startswith("tensor<")
    pre, n, post = (1, numel(shape), 1) if flat else (numel(shape[:axis]), shape[axis], numel(shape[axis + 1:]))
    outs = None
    if pre * post > 1:
        outs = [L.new_tile(elem_of(r.type), shape_of(r.type), L.name_for(op) if len(srcs) == 1 else None, result=r)
                for r in op.results]
    _before_scalar_reads(L)

    def lane(k, idx):
        v = A.op("get_value", [tiles[k].value, idx], ir.Type.parse(tiles[k].elem))
        return scalar_convert(L, v, work[k])

    def fold(base):
        """The reduction of lanes base + j * post, j < n, as scalars."""
        inits = [lane(k, base) for k in range(len(tiles))]
        if n == 1:
            return inits
        loop = scf.ForOp(L.c64(1), L.c64(n), L.c64(1), inits)
        with ir.InsertionPoint(loop.body):
            idx = L.add(base, L.mul(loop.induction_variable, L.c64(post)))
            xs = [lane(k, idx) for k in range(len(tiles))]
            scf.YieldOp(_combine(L, op, kind, list(loop.inner_iter_args), xs))
        return list(loop.results)

    if kind == "generic":
        copies = []
        for t in tiles:
            w = L.temp(t.elem, t.shape)
            A.op("data_copy", [w.value, t.value, L.c64(w.padded)])
            copies.append(w)
        _before_scalar_reads(L)
        fold = lambda base: _pairwise(L, op, copies, base, n, post)  # noqa: E731

    if outs is None:
        vals = fold(L.c64(0))
        for r, v in zip(op.results, vals):
            v = scalar_convert(L, v, elem_of(r.type))
            L.vmap[r] = Splat(elem_of(r.type), shape_of(r.type), scalar=v) if not flat else v
        if flat and (name := L.name_for(op)) and len(vals) == 1 and not isinstance(L.vmap[op.results[0]].owner,
                                                                                       ir.Block):
            L.named(L.vmap[op.results[0]], name)
        return
    loop = L.for_range(0, pre * post)
    with ir.InsertionPoint(loop.body):
        m = loop.induction_variable
        base = L.mul(m, L.c64(n)) if post == 1 else L.add(L.mul(arith.DivSIOp(m, L.c64(post)).result, L.c64(n * post)),
                                         arith.RemSIOp(m, L.c64(post)).result)
        for out, v in zip(outs, fold(base)):
            A.op("set_value", [out.value, m, scalar_convert(L, v, out.elem)])
        scf.YieldOp([])
    for out, r in zip(outs, op.results):
        _after_scalar_writes(L, out)
        L.vmap[r] = out
