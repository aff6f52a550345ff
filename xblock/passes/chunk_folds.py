"""The values xb-strip-mine's chunk loops carry: reductions and scans along the split axis.

Per chunk, a reduction along the split axis is the same reduction of the chunk (the partial),
combined with the accumulator the loop carries; a scan is the chunk's scan combined with the
running total of the chunks before it, which the loop carries. `init` builds a loop's initial
values, `step` one chunk's part (returning the values carried to the next chunk), `finish` the
results after the loop. Sums of f16/bf16 accumulate in f32, as the reduction itself does.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from ..dialects import xb
from .block_axes import shape_of


def _elem(t: ir.Type) -> ir.Type:
    return t.element_type if isinstance(t, ir.RankedTensorType) else t


def _with_elem(t: ir.Type, e: ir.Type) -> ir.Type:
    return ir.RankedTensorType.get(t.shape, e) if isinstance(t, ir.RankedTensorType) else e


def _is_float(t: ir.Type) -> bool:
    return isinstance(_elem(t), ir.FloatType)


def _wide(t: ir.Type) -> ir.Type:
    """f16/bf16 (scalar or block) widened to f32; other types as they are."""
    e = _elem(t)
    return _with_elem(t, ir.F32Type.get()) if isinstance(e, ir.FloatType) and e.width < 32 else t


def _const(t: ir.Type, value) -> ir.Value:
    e = _elem(t)
    attr = ir.FloatAttr.get(e, float(value)) if isinstance(e, ir.FloatType) else ir.IntegerAttr.get(e, int(value))
    if isinstance(t, ir.RankedTensorType):
        attr = ir.DenseElementsAttr.get_splat(t, attr)
    return arith.constant(t, attr)


def _extreme(t: ir.Type, largest: bool, nan: bool = False):
    """The smallest (or largest) value of `t`'s elements: infinities for floats (NaN if `nan`)."""
    if _is_float(t):
        return float("nan") if nan else (float("inf") if largest else float("-inf"))
    w = _elem(t).width
    return (1 << (w - 1)) - 1 if largest else -(1 << (w - 1))


def _combine(kind: str, a: ir.Value, x: ir.Value) -> ir.Value:
    """acc `a` combined with the chunk's partial `x` (same type)."""
    f = _is_float(a.type)
    if kind in ("sum", "cumsum"):
        return arith.addf(a, x) if f else arith.addi(a, x)
    if kind in ("prod", "cumprod"):
        return arith.mulf(a, x) if f else arith.muli(a, x)
    if kind == "xor_sum":
        return arith.xori(a, x)
    big = kind == "max"
    if not f:
        return arith.maxsi(a, x) if big else arith.minsi(a, x)
    if shape_of(a) is not None:  # a block accumulator starts at -inf/+inf
        return arith.maxnumf(a, x) if big else arith.minnumf(a, x)
    # a scalar accumulator starts at NaN: the first number replaces it; a NaN partial (a chunk of
    # NaNs) never does, so NaN is the result only when every element is NaN, as for the reduction
    better = arith.cmpf(arith.CmpFPredicate.OGT if big else arith.CmpFPredicate.OLT, x, a)
    unset = arith.cmpf(arith.CmpFPredicate.UNE, a, a)
    return arith.select(unset, x, arith.select(better, x, a))


def _kind(op) -> str:
    return "histogram" if op.name == "xb.histogram" else ir.StringAttr(op.attributes["kind"]).value


def _axis(op) -> int:
    return int(ir.IntegerAttr(op.attributes["axis"]).value)


class Folds:
    """Initial values, per-chunk steps and results of the carried values of one chunk loop."""

    def __init__(self, miner):
        self.miner = miner

    def init(self, op) -> list:
        """The values the loop starts with for reduction or scan `op`."""
        kind = _kind(op)
        if op.name == "xb.scan":
            return [_const(_wide(self._run_type(op)), 0 if kind == "cumsum" else 1)]
        if kind in ("histogram", "generic"):
            return [_const(r.type, 0) for r in op.results]
        t = op.results[0].type
        if kind in ("argmax", "argmin"):
            vt = _with_elem(t, _elem(op.operands[0].type))
            return [_const(vt, _extreme(vt, kind == "argmin")), _const(t, 0)]
        if kind in ("max", "min"):
            return [_const(t, _extreme(t, kind == "min", nan=shape_of(op.results[0]) is None))]
        return [_const(_wide(t) if kind == "sum" else t, 1 if kind == "prod" else 0)]

    def step(self, op, m: dict, carry: list, iv: ir.Value) -> list:
        """Chunk `m`'s part of `op`; returns the values carried to the next chunk."""
        with op.location:
            if op.name == "xb.scan":
                return self._scan(op, m, carry[0])
            kind = _kind(op)
            if kind in ("argmax", "argmin"):
                return self._arg(op, m, carry, kind)
            parts = list(self.miner.copy(op, m).results)
            if kind == "histogram":
                return [arith.addi(carry[0], parts[0])]
            if kind == "generic":
                first = arith.cmpi(arith.CmpIPredicate.eq, iv, _const(iv.type, 0))
                both = self._apply(op.regions[0].blocks[0], carry + parts)
                return [arith.select(first, p, c) for p, c in zip(parts, both)]
            x = parts[0]
            if x.type != carry[0].type:
                x = arith.extf(carry[0].type, x)
            return [_combine(kind, carry[0], x)]

    def finish(self, op, results: list) -> list:
        """The values that replace reduction `op`'s results, from the loop's results."""
        if _kind(op) in ("argmax", "argmin"):
            results = results[1:]
        return [v if v.type == r.type else arith.truncf(r.type, v) for r, v in zip(op.results, results)]

    def _arg(self, op, m, carry, kind) -> list:
        """argmax/argmin: the chunk's extreme value and its index; an earlier chunk wins ties."""
        best, idx = carry
        src = m[op.operands[0]]
        part = self.miner.copy(op, m).results[0]
        val = xb.reduce([src], _axis(op), "max" if kind == "argmax" else "min", [best.type]).results[0]
        base = self.miner.base
        at = arith.addi(part, base if shape_of(part) is None else xb.splat(base, part.type))
        if _is_float(best.type):
            take = arith.cmpf(arith.CmpFPredicate.OGT if kind == "argmax" else arith.CmpFPredicate.OLT, val, best)
        else:
            take = arith.cmpi(arith.CmpIPredicate.sgt if kind == "argmax" else arith.CmpIPredicate.slt, val, best)
        return [arith.select(take, val, best), arith.select(take, at, idx)]

    def _apply(self, body: ir.Block, args: list) -> list:
        """The values a combine region yields for `args` (its ops copied here)."""
        m = dict(zip(body.arguments, args))
        ops = [o.operation for o in body.operations]
        for o in ops[:-1]:
            self.miner.copy(o, m)
        return [m.get(v, v) for v in ops[-1].operands]

    def _run_type(self, op) -> ir.Type:
        """The type of a scan's running total: the block without the split axis (a scalar in 1-D)."""
        src = op.operands[0]
        shape = list(shape_of(src))
        del shape[self.miner.dim(src)]
        return ir.RankedTensorType.get(shape, _elem(src.type)) if shape else _elem(src.type)

    def _scan(self, op, m, run) -> list:
        """The chunk's scan plus the running total (in f32 for f16/bf16); the total moves on by the
        chunk's sum (product)."""
        kind = _kind(op)
        d = self.miner.dim(op.operands[0])
        src = m[op.operands[0]]
        r = self.miner.copy(op, m).results[0]
        wide = r if _elem(r.type) == _elem(run.type) else arith.extf(_with_elem(r.type, _elem(run.type)), r)
        if shape_of(run) is None:
            spread = xb.splat(run, wide.type)
        else:
            one = list(shape_of(wide))
            one[d] = 1
            spread = xb.broadcast(xb.expand_dims(run, d, ir.RankedTensorType.get(one, _elem(run.type))), wide.type)
        out = _combine(kind, wide, spread)
        m[op.results[0]] = out if out.type == r.type else arith.truncf(r.type, out)
        total = xb.reduce([src], d, "sum" if kind == "cumsum" else "prod", [self._run_type(op)]).results[0]
        if total.type != run.type:
            total = arith.extf(run.type, total)
        return [_combine(kind, run, total)]
