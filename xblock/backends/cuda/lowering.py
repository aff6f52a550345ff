"""xb -> Triton TTIR: one rule per op, in a table; upstream arith/math/scf ops pass through.

The two dialects are near 1:1 (`xb.load` is `tt.load`, `xb.arange` is `tt.make_range`, ...).
Kinds of reduction and scan become `tt.reduce`/`tt.scan` with a combine region, as Triton's
frontend writes them. `emit_ttir(module)` returns the text Triton's parser reads.
"""

from __future__ import annotations

from typing import Callable

from mlir import ir

from ...errors import CompilationError
from .emit import INPUT_PRECISION, MEM_SCOPE, MEM_SEMANTIC, RMW_OP, TTIRDialect, TTIRWriter, i32_array, string

Rule = Callable[["LoweringContext", ir.Operation], None]
RULES: dict[str, Rule] = {}

# upstream dialects whose ops Triton's TTIR takes as they are
PASSTHROUGH_DIALECTS = ("arith", "math", "scf")
# math ops Triton's NVIDIA backend does not lower itself: libdevice calls, as `tl.extra.cuda.libdevice`
LIBDEVICE = {
    "math.tanh": {"f32": "__nv_tanhf", "f64": "__nv_tanh"},
    "math.powf": {"f32": "__nv_powf", "f64": "__nv_pow"},
}
# xb hint attributes -> Triton's (frontend `multiple_of`, `max_contiguous`, `max_constancy`)
HINTS = {"xb.multiple_of": "tt.divisibility", "xb.max_contiguous": "tt.contiguity",
         "xb.max_constancy": "tt.constancy"}
# loop hints of `xl.range(...)` -> the attributes Triton's frontend puts on scf.for
LOOP_HINTS = {"xb." + n: "tt." + n for n in ("num_stages", "loop_unroll_factor", "disallow_acc_multi_buffer",
                                             "flatten", "warp_specialize")}


def rule(*names: str):
    def register(fn: Rule) -> Rule:
        for n in names:
            RULES[n] = fn
        return fn

    return register


class LoweringError(Exception):
    """An op the cuda target cannot lower; carries the op for its source location."""

    def __init__(self, op, message: str):
        super().__init__(message)
        self.op = op


class LoweringContext:
    """State of one lowering: the writer, the options and the terminator of the enclosing region."""

    def __init__(self, writer: TTIRWriter, debug: bool = False):
        self.w = writer
        self.debug = debug
        self.yield_as = "scf.yield"  # what `gpu.yield` becomes in the combine region being printed

    def refs(self, values) -> list[str]:
        return [self.w.ref(v) for v in values]

    def types(self, values) -> list[str]:
        return [self.w.type(v.type) for v in values]

    def emit(self, op, name: str, attrs=None, operands=None, regions=(), result_types=None) -> list[str]:
        """Print `name` with `op`'s operands, result types and location; bind `op`'s results."""
        operands = list(op.operands) if operands is None else operands
        rtypes = self.types(op.results) if result_types is None else result_types
        refs = self.w.op(name, self.refs(operands), self.types(operands), rtypes, attrs, loc(op), regions)
        for v, r in zip(op.results, refs):
            self.w.bind(v, r)
        return refs

    def lower_block(self, block, arg_types=None, arg_locs="") -> None:
        types = [self.w.type(a.type) for a in block.arguments] if arg_types is None else arg_types
        self.w.block(types, lambda _: [lower_op(self, o) for o in block.operations], list(block.arguments),
                     arg_locs)

    def region(self, region) -> Callable:
        def body():
            blocks = list(region.blocks)
            if len(blocks) > 1:
                raise LoweringError(region.owner, "regions of more than one block are not supported")
            for b in blocks:
                self.lower_block(b)

        return body


def loc(op) -> str:
    return str(op.location)


def lower_op(ctx: LoweringContext, op) -> None:
    op = op.operation
    name = op.name
    for r in op.results:
        _check_shape(op, r.type)
    fn = RULES.get(name)
    if fn is None and name.split(".")[0] in PASSTHROUGH_DIALECTS:
        fn = _lower_passthrough
    if fn is None:
        raise LoweringError(op, f"no 'cuda' lowering for {name}")
    fn(ctx, op)


def _check_shape(op, t) -> None:
    if isinstance(t, ir.RankedTensorType):
        shape = t.shape
        if any(d & (d - 1) for d in shape):
            raise LoweringError(op, f"the cuda target (Triton) needs block dimensions that are powers of 2, "
                                    f"got a block of shape {list(shape)}")


def elem_str(t) -> str:
    t = t.element_type if isinstance(t, ir.RankedTensorType) else t
    return str(t)


def is_float(t) -> bool:
    return elem_str(t) in ("f16", "bf16", "f32", "f64")


def attr(op, name: str):
    a = op.attributes[name]
    return a.value if hasattr(a, "value") else a


# ----------------------------------------------------------------------------------- upstream ops
def _attrs_of(op, inherent: bool = True) -> dict:
    """The attributes of an op, xb hints renamed to Triton's; `inherent=False` keeps only hints."""
    out = {}
    for name in op.attributes:
        a = op.attributes[name]
        if name in HINTS:
            vals = list(ir.DenseI32ArrayAttr(a))
            out[HINTS[name]] = f"dense<[{', '.join(str(v) for v in vals)}]> : tensor<{len(vals)}xi32>"
        elif name in LOOP_HINTS:
            out[LOOP_HINTS[name]] = str(a)
        elif inherent and not name.startswith("xb."):
            out[name] = str(a)
    return out


def _lower_passthrough(ctx: LoweringContext, op) -> None:
    if op.name in LIBDEVICE:
        return _lower_libdevice(ctx, op)
    ctx.emit(op, op.name, _attrs_of(op), regions=[ctx.region(r) for r in op.regions])


def _lower_libdevice(ctx: LoweringContext, op) -> None:
    symbol = LIBDEVICE[op.name].get(elem_str(op.results[0].type))
    if symbol is None:
        raise LoweringError(op, f"{op.name} on {elem_str(op.results[0].type)} is not supported on cuda")
    attrs = {"libname": '""', "libpath": '""', "pure": "true", "symbol": string(symbol)}
    ctx.emit(op, "tt.extern_elementwise", attrs)


@rule("arith.mului_extended")
def _lower_mului_extended(ctx: LoweringContext, op) -> None:
    a, b = op.operands
    t = ctx.types([a])[0]
    lo = ctx.w.op("arith.muli", ctx.refs([a, b]), [t, t], [t], None, loc(op))
    hi = ctx.w.op("tt.mulhiui", ctx.refs([a, b]), [t, t], [t], None, loc(op))
    ctx.w.bind(op.results[0], lo[0])
    ctx.w.bind(op.results[1], hi[0])


@rule("arith.negf")
def _lower_negf(ctx: LoweringContext, op) -> None:
    """Triton has no negf: -0.0 - x, which is exact negation (signed zeros and NaN included)."""
    t = ctx.types(op.results)[0]
    zero = f"dense<-0.0> : {t}" if t.startswith("tensor<") else f"-0.0 : {t}"
    z = ctx.w.op("arith.constant", [], [], [t], {"value": zero}, loc(op))
    r = ctx.w.op("arith.subf", z + ctx.refs(op.operands), [t, t], [t], _attrs_of(op), loc(op))
    ctx.w.bind(op.results[0], r[0])


@rule("gpu.yield")
def _lower_yield(ctx: LoweringContext, op) -> None:
    ctx.emit(op, ctx.yield_as)


@rule("func.return")
def _lower_return(ctx: LoweringContext, op) -> None:
    ctx.emit(op, "tt.return")


@rule("func.func")
def _lower_func(ctx: LoweringContext, op) -> None:
    fn_type = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
    arg_types = [ctx.w.type(t) for t in fn_type.inputs]
    arg_attrs = []
    all_attrs = op.attributes["arg_attrs"] if "arg_attrs" in op.attributes else None
    for i in range(len(arg_types)):
        d = ir.DictAttr(all_attrs[i]) if all_attrs is not None else None
        div = d["xb.divisibility"] if d is not None and "xb.divisibility" in d else None
        arg_attrs.append(f"{{tt.divisibility = {ir.IntegerAttr(div).value} : i32}}" if div is not None else "{}")
    attrs = {
        "arg_attrs": "[" + ", ".join(arg_attrs) + "]",
        "function_type": f"({', '.join(arg_types)}) -> ()",
        "noinline": "false",
        "sym_name": str(op.attributes["sym_name"]),
        "sym_visibility": '"public"',
    }
    body = op.regions[0].blocks[0]
    names = [ir.StringAttr(a).value for a in op.attributes["xb.arg_names"]] if "xb.arg_names" in op.attributes \
        else [f"arg{i}" for i in range(len(arg_types))]
    fn_loc = loc(op)[len("loc("):-1]
    arg_locs = [f"loc({string(n)}({fn_loc}))" for n in names]  # named as Triton names them
    ctx.w.op("tt.func", attrs=attrs, loc=loc(op), regions=[lambda: ctx.lower_block(body, arg_types, arg_locs)])


# ----------------------------------------------------------------------------------- xb ops
@rule("xb.program_id")
def _lower_program_id(ctx: LoweringContext, op) -> None:
    ctx.emit(op, "tt.get_program_id", {"axis": f"{attr(op, 'axis')} : i32"})


@rule("xb.num_programs")
def _lower_num_programs(ctx: LoweringContext, op) -> None:
    ctx.emit(op, "tt.get_num_programs", {"axis": f"{attr(op, 'axis')} : i32"})


@rule("xb.arange")
def _lower_arange(ctx: LoweringContext, op) -> None:
    ctx.emit(op, "tt.make_range", {"end": f"{attr(op, 'end')} : i32", "start": f"{attr(op, 'start')} : i32"})


@rule("xb.expand_dims")
def _lower_expand_dims(ctx: LoweringContext, op) -> None:
    ctx.emit(op, "tt.expand_dims", {"axis": f"{attr(op, 'axis')} : i32"})


@rule("xb.trans")
def _lower_trans(ctx: LoweringContext, op) -> None:
    ctx.emit(op, "tt.trans", {"order": i32_array(ir.DenseI32ArrayAttr(op.attributes["order"]))})


_SAME = {"xb.splat": "tt.splat", "xb.broadcast": "tt.broadcast", "xb.reshape": "tt.reshape",
         "xb.addptr": "tt.addptr", "xb.ptr_cast": "tt.bitcast"}


@rule(*_SAME)
def _lower_same(ctx: LoweringContext, op) -> None:
    ctx.emit(op, _SAME[op.name], _attrs_of(op, inherent=False))


def _segments(op) -> list[int]:
    return list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))


@rule("xb.load")
def _lower_load(ctx: LoweringContext, op) -> None:
    _, has_mask, has_other = _segments(op)
    operands = list(op.operands)
    if has_other and not has_mask:  # `other` without a mask is never read
        operands, has_other = operands[:1], 0
    attrs = ctx.w.dialect.memory_attrs(attr(op, "cache"), attr(op, "evict"))
    attrs["isVolatile"] = "true" if attr(op, "volatile") else "false"
    attrs["operandSegmentSizes"] = i32_array([1, has_mask, has_other])
    attrs.update(_attrs_of(op, inherent=False))
    ctx.emit(op, "tt.load", attrs, operands)


@rule("xb.store")
def _lower_store(ctx: LoweringContext, op) -> None:
    attrs = ctx.w.dialect.memory_attrs(attr(op, "cache"), attr(op, "evict"))
    ctx.emit(op, "tt.store", attrs)


def _sem_scope(op) -> dict:
    sem, scope = attr(op, "sem"), attr(op, "scope")
    if sem not in MEM_SEMANTIC or scope not in MEM_SCOPE:
        raise LoweringError(op, f"unknown memory semantic '{sem}' or scope '{scope}'")
    return {"scope": f"{MEM_SCOPE[scope]} : i32", "sem": f"{MEM_SEMANTIC[sem]} : i32"}


@rule("xb.atomic_rmw")
def _lower_atomic_rmw(ctx: LoweringContext, op) -> None:
    kind = attr(op, "kind")
    if kind not in RMW_OP:
        raise LoweringError(op, f"unknown atomic kind '{kind}'")
    ctx.emit(op, "tt.atomic_rmw", {"atomic_rmw_op": f"{RMW_OP[kind]} : i32", **_sem_scope(op)})


@rule("xb.atomic_cas")
def _lower_atomic_cas(ctx: LoweringContext, op) -> None:
    ctx.emit(op, "tt.atomic_cas", _sem_scope(op))


@rule("xb.dot")
def _lower_dot(ctx: LoweringContext, op) -> None:
    precision = attr(op, "input_precision")
    if elem_str(op.operands[0].type) != "f32":
        precision = "tf32"  # irrelevant below fp32: Triton's frontend writes its default
    if precision not in INPUT_PRECISION:
        raise LoweringError(op, f"unknown dot input precision '{precision}'")
    ctx.emit(op, "tt.dot", {"inputPrecision": f"{INPUT_PRECISION[precision]} : i32", "maxNumImpreciseAcc": "0 : i32"})


@rule("xb.print")
def _lower_print(ctx: LoweringContext, op) -> None:
    prefix = attr(op, "prefix")
    if op.operands:  # Triton's frontend: " prefix: " before the values
        prefix = (prefix if prefix.startswith(" ") else " " + prefix).rstrip(": ") + ": "
    signed = [0 if is_float(v.type) else 1 for v in op.operands]
    attrs = {"hex": "true" if attr(op, "hex") else "false", "isSigned": i32_array(signed), "prefix": string(prefix)}
    ctx.emit(op, "tt.print", attrs)


@rule("xb.assert")
def _lower_assert(ctx: LoweringContext, op) -> None:
    if ctx.debug:  # as Triton: device_assert is compiled only with debug=True
        ctx.emit(op, "tt.assert", {"message": string(attr(op, "message"))})


def emit_ttir(module: ir.Module, dialect: TTIRDialect | None = None, debug: bool = False) -> str:
    """The TTIR text of an xb module (after xb's passes): a `tt.func` per `xb.kernel` func.

    Raises:
        CompilationError: an op has no cuda lowering, at the op's source line.
    """
    w = TTIRWriter(dialect or TTIRDialect())
    ctx = LoweringContext(w, debug)
    kernels = [op for op in module.body.operations if "xb.kernel" in op.attributes]
    try:
        w.op("builtin.module", regions=[lambda: w.block([], lambda _: [lower_op(ctx, k) for k in kernels])],
             loc=str(module.operation.location))
    except LoweringError as e:
        raise _error(e.op, str(e)) from None
    return w.text()


def _error(op, message: str) -> CompilationError:
    from .diagnostics import error_at

    return error_at(str(op.location), message)


from . import reductions  # noqa: E402,F401  (registers the xb.reduce / xb.scan rules)
