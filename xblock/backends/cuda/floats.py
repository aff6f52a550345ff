"""`xb.fp_to_fp` in TTIR: `tt.fp_to_fp`, as Triton's frontend writes it, and fp8e4b15 in integer ops.

Triton's NVIDIA backend converts f16, bf16 and f32 to and from fp8e4nv (f8E4M3FN, sm_89 and newer)
and fp8e5 (f8E5M2), and rounds toward zero from f32 only (to f16, bf16, fp8e5); xb only asks for
these (the frontend goes through f32 elsewhere). fp8e4b8/fp8e5b16 exist on AMD GPUs only: an error
here. fp8e4b15 is an i8 in TTIR (as Triton holds it); Triton's frontend converts it with inline
PTX, this module with the same arithmetic in integer ops (the sim's `floats.py` says what it is):
f16 bits -> |h| clamped to 0x3F00 (1.75), (2|h| + 0x80) >> 8, with the sign; back: sign << 8 |
(b & 0x7F) << 7. A helper of `lowering` (it registers no rule).
"""

from __future__ import annotations

from .emit import loc
from .rules import LoweringContext, elem_str

ROUNDING = {"rtz": "0 : i32", "rtne": "1 : i32"}  # Triton's RoundingMode enum
E4B15 = "f8E4M3B11FNUZ"


def fp_to_fp(ctx: LoweringContext, op) -> None:
    """The TTIR of one `xb.fp_to_fp` (float8 types the backend lacks were refused by `rules`)."""
    src, dst = elem_str(op.operands[0].type), elem_str(op.results[0].type)
    rounding = op.attributes["rounding"].value
    if E4B15 in (src, dst):
        return _e4b15(ctx, op, src, dst)
    attrs = {"rounding": ROUNDING[rounding]} if rounding else {}
    ctx.emit(op, "tt.fp_to_fp", attrs)


class _Int:
    """Integer ops on one shape of TTIR values (the shape of `op`'s result)."""

    def __init__(self, ctx: LoweringContext, op):
        self.ctx, self.loc = ctx, loc(op)
        rt = ctx.w.type(op.results[0].type)
        self.shape = rt[: rt.rindex("x") + 1] if rt.startswith("tensor<") else ""

    def ty(self, et: str) -> str:
        return f"{self.shape}{et}>" if self.shape else et

    def const(self, v: int, et: str = "i32") -> str:
        t = self.ty(et)
        value = f"dense<{v}> : {t}" if self.shape else f"{v} : {t}"
        return self.ctx.w.op("arith.constant", [], [], [t], {"value": value}, self.loc)[0]

    def op(self, name: str, a: str, b=None, et: str = "i32") -> str:
        t = self.ty(et)
        args = [a] if b is None else [a, b if isinstance(b, str) else self.const(b, et)]
        return self.ctx.w.op(name, args, [t] * len(args), [t], None, self.loc)[0]

    def cast(self, name: str, a: str, src: str, dst: str) -> str:
        return self.ctx.w.op(name, [a], [self.ty(src)], [self.ty(dst)], None, self.loc)[0]


def _e4b15(ctx: LoweringContext, op, src: str, dst: str) -> None:
    g = _Int(ctx, op)
    x = ctx.w.ref(op.operands[0])
    if dst == E4B15:  # f16 (or f32 rounded toward zero to f16) -> i8
        if src == "f32":
            x = ctx.w.op("tt.fp_to_fp", [x], [g.ty("f32")], [g.ty("f16")], {"rounding": ROUNDING["rtz"]}, g.loc)[0]
        elif src != "f16":
            raise ctx.error(f"no conversion from {src} to fp8e4b15")
        h = g.cast("arith.extui", g.cast("tt.bitcast", x, "f16", "i16"), "i16", "i32")
        mag = g.op("arith.minui", g.op("arith.andi", h, 0x7FFF), 0x3F00)
        r = g.op("arith.shrui", g.op("arith.addi", g.op("arith.shli", mag, 1), 0x80), 8)
        r = g.op("arith.ori", r, g.op("arith.andi", g.op("arith.shrui", h, 8), 0x80))
        ctx.w.bind(op.results[0], g.cast("arith.trunci", r, "i32", "i8"))
        return
    if dst not in ("f16", "f32"):
        raise ctx.error(f"no conversion from fp8e4b15 to {dst}")
    u = g.cast("arith.extui", x, "i8", "i32")
    bits = g.op("arith.ori", g.op("arith.shli", g.op("arith.andi", u, 0x80), 8),
                g.op("arith.shli", g.op("arith.andi", u, 0x7F), 7))
    h = g.cast("tt.bitcast", g.cast("arith.trunci", bits, "i32", "i16"), "i16", "f16")
    ctx.w.bind(op.results[0], h if dst == "f16" else g.cast("arith.extf", h, "f16", "f32"))


def e4b15_bits(value) -> int:
    """The bits of a (splat) f8E4M3B11FNUZ constant attribute, as a signed i8."""
    import ml_dtypes
    import numpy as np
    from mlir import ir

    if isinstance(value, ir.DenseElementsAttr):
        value = value.get_splat_value()
    return int(np.array(ir.FloatAttr(value).value).astype(ml_dtypes.float8_e4m3b11fnuz).view(np.int8))
