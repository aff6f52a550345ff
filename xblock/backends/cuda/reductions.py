"""`tt.reduce`/`tt.scan` as Triton's frontend writes them: the op with its combine region.

A helper of the `xb.reduce`/`xb.scan` rules in `lowering` (it registers no rule): `combine_region`
generates the two-argument region of a kind (sum, max, cumsum, ...), `arg_reduce` prints argmax and
argmin as a reduction of (value, index) pairs, and `generic` reuses the xb op's own region, whose
`gpu.yield` becomes `tt.reduce.return`/`tt.scan.return`.
"""

from __future__ import annotations

from .emit import loc
from .rules import LoweringContext, elem_str, is_float

# kind -> (float combiner, integer combiner); max/min ignore NaN as `tl.max`/`tl.min` do
COMBINE = {
    "sum": ("arith.addf", "arith.addi"),
    "prod": ("arith.mulf", "arith.muli"),
    "max": ("arith.maxnumf", "arith.maxsi"),
    "min": ("arith.minnumf", "arith.minsi"),
    "xor_sum": (None, "arith.xori"),
    "cumsum": ("arith.addf", "arith.addi"),
    "cumprod": ("arith.mulf", "arith.muli"),
}
# -inf / +inf bit patterns, to make argmax/argmin skip NaN as the sim does
_NEG_INF = {"f16": "0xFC00", "bf16": "0xFF80", "f32": "0xFF800000", "f64": "0xFFF0000000000000"}
_POS_INF = {"f16": "0x7C00", "bf16": "0x7F80", "f32": "0x7F800000", "f64": "0x7FF0000000000000"}


def combine_region(ctx: LoweringContext, op, kind: str, et: str, terminator: str):
    """The region combining two `et` values with the arith op of reduction or scan `kind`."""
    combiner = _combiner(ctx, kind, et)

    def body():
        def inner(args):
            r = ctx.w.op(combiner, args, [et, et], [et], None, loc(op))
            ctx.w.op(terminator, r, [et], [], None, loc(op))

        ctx.w.block([et, et], inner, loc=loc(op))

    return body


def _combiner(ctx: LoweringContext, kind: str, et: str) -> str:
    if kind not in COMBINE:
        raise ctx.error(f"unknown reduction kind '{kind}'")
    fl, it = COMBINE[kind]
    c = fl if et in ("f16", "bf16", "f32", "f64") else it
    if c is None:
        raise ctx.error(f"{kind} is not defined on {et}")
    return c


def generic(ctx: LoweringContext, op, name: str, terminator: str, attrs: dict) -> None:
    """Print `name` with the xb op's own combine region, its `gpu.yield` printed as `terminator`."""
    block = op.regions[0].blocks[0]

    def body():
        saved, ctx.yield_as = ctx.yield_as, terminator
        try:
            ctx.lower_block(block)
        finally:
            ctx.yield_as = saved

    ctx.emit(op, name, attrs, regions=[body])


def _index_block(ctx: LoweringContext, op, shape: list, axis: int) -> str:
    """A tensor of `shape` holding each element's index along `axis` (make_range, expand, broadcast)."""
    w, lc = ctx.w, loc(op)
    n = shape[axis]
    ref = w.op("tt.make_range", [], [], [f"tensor<{n}xi32>"], {"end": f"{n} : i32", "start": "0 : i32"}, lc)[0]
    cur = [n]
    for where in [0] * axis + [None] * (len(shape) - axis - 1):
        pos = len(cur) if where is None else 0
        new = cur[:pos] + [1] + cur[pos:]
        ref = w.op("tt.expand_dims", [ref], [_tensor(cur, "i32")], [_tensor(new, "i32")], {"axis": f"{pos} : i32"},
                   lc)[0]
        cur = new
    if cur != list(shape):
        ref = w.op("tt.broadcast", [ref], [_tensor(cur, "i32")], [_tensor(shape, "i32")], None, lc)[0]
    return ref


def _tensor(shape, et: str) -> str:
    return "tensor<" + "x".join(str(d) for d in shape) + f"x{et}>"


def arg_reduce(ctx: LoweringContext, op, kind: str, axis: int, attrs: dict) -> None:
    """argmax/argmin: reduce (value, index) pairs; ties and NaN as the sim: the smallest index wins."""
    w, lc = ctx.w, loc(op)
    x = op.operands[0]
    shape = list(x.type.shape)
    et = elem_str(x.type)
    xt = w.type(x.type)
    xref = w.ref(x)
    if is_float(x.type):
        fill = (_NEG_INF if kind == "argmax" else _POS_INF)[et]
        i1 = _tensor(shape, "i1")
        isnan = w.op("arith.cmpf", [xref, xref], [xt, xt], [i1], {"predicate": "14 : i64"}, lc)[0]  # uno
        inf = w.op("arith.constant", [], [], [xt], {"value": f"dense<{fill}> : {xt}"}, lc)[0]
        xref = w.op("arith.select", [isnan, inf, xref], [i1, xt, xt], [xt], None, lc)[0]
    idx = _index_block(ctx, op, shape, axis)
    it = _tensor(shape, "i32")
    if is_float(x.type):
        better, equal = ("arith.cmpf", "2 : i64" if kind == "argmax" else "4 : i64"), ("arith.cmpf", "1 : i64")
    else:
        better, equal = ("arith.cmpi", "4 : i64" if kind == "argmax" else "2 : i64"), ("arith.cmpi", "0 : i64")

    def region():
        def inner(a):
            v1, i1_, v2, i2 = a
            gt = w.op(better[0], [v1, v2], [et, et], ["i1"], {"predicate": better[1]}, lc)[0]
            eq = w.op(equal[0], [v1, v2], [et, et], ["i1"], {"predicate": equal[1]}, lc)[0]
            lt = w.op("arith.cmpi", [i1_, i2], ["i32", "i32"], ["i1"], {"predicate": "2 : i64"}, lc)[0]  # slt
            tie = w.op("arith.andi", [eq, lt], ["i1", "i1"], ["i1"], None, lc)[0]
            take = w.op("arith.ori", [gt, tie], ["i1", "i1"], ["i1"], None, lc)[0]
            v = w.op("arith.select", [take, v1, v2], ["i1", et, et], [et], None, lc)[0]
            i = w.op("arith.select", [take, i1_, i2], ["i1", "i32", "i32"], ["i32"], None, lc)[0]
            w.op("tt.reduce.return", [v, i], [et, "i32"], [], None, lc)

        w.block([et, "i32", et, "i32"], inner, loc=lc)

    out_shape = shape[:axis] + shape[axis + 1:]
    rts = [_tensor(out_shape, et), _tensor(out_shape, "i32")] if out_shape else [et, "i32"]
    refs = w.op("tt.reduce", [xref, idx], [xt, it], rts, attrs, lc, [region])
    w.bind(op.results[0], refs[1])
