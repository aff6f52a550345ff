"""The exported checker's tolerances, per output, from the classes of floating-point ops the kernel uses.

An Ascend 910B does not compute bit for bit what xblock's reference simulator (numpy) computes:
its Exp, Ln, Div and Sqrt are accurate to about an ulp, not correctly rounded; it flushes subnormal
results to zero; its reductions and the Cube's K loop add in another order; atomic adds from many
cores land in any order. A fixed fp32 tolerance of 1e-5 assumes none of that. Instead, each op of the
kernel's xb IR (the module the compile started from, walked once; an op inside a loop counts once)
adds to an error budget by its class, in units of the epsilon of the type it computes in:

| class | ops | budget |
|---|---|---|
| exact | loads, stores, copies, shape ops, select, compare, max/min, abs, neg, extf, integer ops | 0 |
| rounded | addf, subf, mulf, fma, truncf, sitofp/uitofp | 1 ulp each (IEEE on the vector unit) |
| division | divf, sqrt, rsqrt, remf | 2 ulp each (hardware 1 ulp + numpy's half) |
| exponential | exp, exp2, powf | 4 ulp, and the error so far times max(1, input scale) (d e^x = e^x dx) |
| logarithm | log, log2, log10, log1p | 4 ulp, and the relative error so far becomes absolute |
| other transcendental | tanh, erf, sin, cos, ... | 4 ulp, and the error so far times the scale, absolute |
| reduction of n | reduce sum/prod/generic, scan, dot (n = K) | 2*ceil(log2 n) ulp; n ulp of the scale, absolute |
| atomic add | atomic_rmw fadd over the grid's n programs | as a reduction of n |

The relative budget plus one ulp of the output's type (the last rounding may flip) is `rtol`. The
absolute and relative budgets together, times the largest golden magnitude of the output (at least
1), are `atol` (a subtraction that cancels keeps an error relative to its operands, not to its
result), no less than the output type's smallest normal (subnormals flush to zero). A kernel with
no inexact floating-point op is compared exactly. The rows of the table are the 910B facts the
budget rests on: IEEE add/mul on the vector unit, Exp/Ln/Div/Sqrt within 1 ulp and no subnormals
(asc-devkit docs/zh/api/附录/Reg矢量计算接口精度标准汇总.md, the one public accuracy table, for
its Ascend 950 instructions), pairwise reductions (the same table), and numpy's pairwise sums.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

# machine epsilon (one ulp at 1.0) and smallest normal of the float types
EPS = {"f16": 2.0 ** -10, "bf16": 2.0 ** -7, "f32": 2.0 ** -23, "f64": 2.0 ** -52}
TINY = {"f16": 2.0 ** -14, "bf16": 2.0 ** -126, "f32": 2.0 ** -126, "f64": 2.0 ** -1022}
NUMPY_TYPE = {"float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64"}

ROUNDED = frozenset({"arith.addf", "arith.subf", "arith.mulf", "math.fma", "arith.truncf", "arith.sitofp",
                     "arith.uitofp"})
DIVISION = frozenset({"arith.divf", "math.sqrt", "math.rsqrt", "arith.remf"})
EXPONENTIAL = frozenset({"math.exp", "math.exp2", "math.expm1", "math.powf", "math.fpowi"})
LOGARITHM = frozenset({"math.log", "math.log2", "math.log10", "math.log1p"})
TRANSCENDENTAL = frozenset({"math.tanh", "math.erf", "math.sin", "math.cos", "math.tan", "math.atan",
                            "math.atan2", "math.sinh", "math.cosh", "math.asin", "math.acos", "math.erfc",
                            "math.cbrt"})
REDUCING = frozenset({"sum", "prod", "xor_sum", "generic"})  # xb.reduce / xb.scan kinds that round
TRANSCENDENTAL_ULPS, DIVISION_ULPS = 4, 2


@dataclass
class Budget:
    """The error budget of one kernel: relative (`rel`) and absolute in units of the output's scale
    (`absolute`), both as plain numbers; `basis` says which ops contributed, for the README."""

    rel: float = 0.0
    absolute: float = 0.0
    inexact: bool = False
    basis: dict = field(default_factory=dict)  # class -> count, or "reduction" -> [lengths]

    def note(self, cls: str, n: int | None = None) -> None:
        if n is None:
            self.basis[cls] = self.basis.get(cls, 0) + 1
        else:
            self.basis.setdefault(cls, []).append(n)


def _float_elem(t) -> str | None:
    """'f32' etc. for a float scalar or tensor type, None for anything else."""
    text = str(t)
    elem = text[text.rfind("x") + 1:-1] if text.startswith("tensor<") else text
    return elem if elem in EPS else None


def _shape(t) -> list:
    text = str(t)
    if not text.startswith("tensor<"):
        return []
    return [int(d) for d in text[len("tensor<"):-1].split("x")[:-1] if d.isdigit()]


def _walk(op):
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                yield inner
                yield from _walk(inner.operation)


def _string(op, name: str) -> str:
    attr = op.attributes[name] if name in op.attributes else None
    return str(attr).strip('"') if attr is not None else ""


def _reduction(b: Budget, n: int, e: float, cls: str) -> None:
    n = max(int(n), 1)
    steps = math.ceil(math.log2(n)) if n > 1 else 0
    b.rel += 2 * steps * e
    b.absolute += max(n, 2 * steps * math.ceil(math.sqrt(n))) * e
    b.note(cls, n)


def _visit(b: Budget, op, scale: float, programs: int) -> None:
    name = op.name
    elem = _float_elem(op.results[0].type) if len(op.results) else None
    if name in ("xb.reduce", "xb.scan") and _string(op, "kind") in REDUCING:
        src = op.operands[0].type
        if (e := _float_elem(src)) is not None:
            shape = _shape(src)
            axis = int(str(op.attributes["axis"]).split(":")[0])
            _reduction(b, shape[axis] if shape else 1, EPS[e], "reduction")
            b.inexact = True
        return
    if name == "xb.dot" and elem is not None:
        _reduction(b, (_shape(op.operands[0].type) or [1])[-1], EPS[elem], "dot")
        b.rel += EPS[elem]  # each product rounds once
        b.inexact = True
        return
    if name == "xb.atomic_rmw" and _string(op, "kind") == "fadd":
        e = _float_elem(op.operands[1].type)
        if e is not None:
            _reduction(b, programs, EPS[e], "atomic add")
            b.inexact = True
        return
    if elem is None:
        return
    e = EPS[elem]
    before = b.rel
    if name in ROUNDED:
        b.rel += e
    elif name in DIVISION:
        b.rel += DIVISION_ULPS * e
    elif name in EXPONENTIAL:
        b.rel = before * max(1.0, scale) + TRANSCENDENTAL_ULPS * e
    elif name in LOGARITHM:
        b.absolute += before
        b.rel += TRANSCENDENTAL_ULPS * e
    elif name in TRANSCENDENTAL:
        b.absolute += before * max(1.0, scale)
        b.rel += TRANSCENDENTAL_ULPS * e
    else:
        return
    b.inexact = True
    b.note(name.split(".", 1)[1])


def budget(xb_text: str, input_scale: float, programs: int) -> Budget:
    """The error budget of the kernel in `xb_text` (the compile's `xb` stage).

    Args:
        xb_text: the xb module, as printed.
        input_scale: the largest magnitude of the kernel's float inputs and scalars.
        programs: the number of program instances of the launch (atomic adds land in any order).
    """
    from mlir import ir

    from .....dialects import xb

    with xb.context():
        module = ir.Module.parse(xb_text)
        b = Budget()
        for op in _walk(module.operation):
            _visit(b, op, input_scale, programs)
    return b


def output_tolerance(b: Budget, dtype: str, golden: np.ndarray) -> tuple:
    """(atol, rtol) of one output buffer of numpy dtype name `dtype`, whose golden values are `golden`."""
    t = NUMPY_TYPE.get(dtype)
    if t is None or not b.inexact:
        return 0.0, 0.0
    rtol = b.rel + EPS[t]
    finite = np.abs(golden[np.isfinite(golden)]) if golden.size else golden
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    # the relative budget also bounds what a subtraction that cancels leaves, relative to its operands
    return max((b.absolute + b.rel) * scale, TINY[t]), rtol


def describe(b: Budget) -> str:
    """One line of what the budget counted, for kernel.json and the README."""
    if not b.inexact:
        return "no inexact floating-point op: compared exactly"
    parts = []
    for cls, v in b.basis.items():
        if isinstance(v, list):
            parts.append(f"{cls} of {', '.join(str(n) for n in v)}")
        else:
            parts.append(f"{v} x {cls}")
    return "; ".join(parts)
