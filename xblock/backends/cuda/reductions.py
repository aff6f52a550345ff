"""Rules for `xb.reduce` and `xb.scan`: `tt.reduce`/`tt.scan` with the combine region Triton writes.

Kinds (sum, max, argmax, cumsum, ...) get a generated region; `generic` ones reuse the xb region,
whose `gpu.yield` becomes `tt.reduce.return`/`tt.scan.return`.
"""

from __future__ import annotations

from mlir import ir

from .lowering import LoweringContext, LoweringError, elem_str, is_float, loc, rule

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


def _binary_region(ctx: LoweringContext, op, combiner: str, et: str, terminator: str):
    def body():
        def inner(args):
            r = ctx.w.op(combiner, args, [et, et], [et], None, loc(op))
            ctx.w.op(terminator, r, [et], [], None, loc(op))

        ctx.w.block([et, et], inner, loc=loc(op))

    return body


def _combiner(op, kind: str, et: str) -> str:
    if kind not in COMBINE:
        raise LoweringError(op, f"unknown reduction kind '{kind}'")
    fl, it = COMBINE[kind]
    c = fl if et in ("f16", "bf16", "f32", "f64") else it
    if c is None:
        raise LoweringError(op, f"{kind} is not defined on {et}")
    return c


@rule("xb.reduce")
def _lower_reduce(ctx: LoweringContext, op) -> None:
    kind = op.attributes["kind"].value
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    attrs = {"axis": f"{axis} : i32"}
    if kind == "generic":
        return _lower_generic(ctx, op, "tt.reduce", "tt.reduce.return", attrs)
    if kind in ("argmax", "argmin"):
        return _lower_arg_reduce(ctx, op, kind, axis, attrs)
    et = elem_str(op.operands[0].type)
    ctx.emit(op, "tt.reduce", attrs,
             regions=[_binary_region(ctx, op, _combiner(op, kind, et), et, "tt.reduce.return")])


@rule("xb.scan")
def _lower_scan(ctx: LoweringContext, op) -> None:
    kind = op.attributes["kind"].value
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    reverse = ir.BoolAttr(op.attributes["reverse"]).value
    attrs = {"axis": f"{axis} : i32", "reverse": "true" if reverse else "false"}
    if kind == "generic":
        return _lower_generic(ctx, op, "tt.scan", "tt.scan.return", attrs)
    et = elem_str(op.operands[0].type)
    ctx.emit(op, "tt.scan", attrs, regions=[_binary_region(ctx, op, _combiner(op, kind, et), et, "tt.scan.return")])


def _lower_generic(ctx: LoweringContext, op, name: str, terminator: str, attrs: dict) -> None:
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


def _lower_arg_reduce(ctx: LoweringContext, op, kind: str, axis: int, attrs: dict) -> None:
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
