"""xb -> Triton TTIR: the rules, one per op; upstream arith/math/scf ops pass through.

The two dialects are near 1:1 (`xb.load` is `tt.load`, `xb.arange` is `tt.make_range`, ...).
Kinds of reduction and scan become `tt.reduce`/`tt.scan` with a combine region, as Triton's
frontend writes them (the regions come from `reductions`). `emit_ttir(module)` returns the text
Triton's parser reads. This is the backend's only rule module: importing it fills `rules.RULES`.
"""

from __future__ import annotations

import re

from mlir import ir

from ...dialects.locations import kernel_of
from . import floats, reductions
from .emit import INPUT_PRECISION, MEM_SCOPE, MEM_SEMANTIC, RMW_OP, TTIRDialect, TTIRWriter, i32_array, loc, string
from .rules import LoweringContext, attr, dialect_rule, elem_str, is_float, lower_kernel, rule
from .tma import host_descriptor_args

# math ops Triton's NVIDIA backend does not lower itself: libdevice calls, as `tl.extra.cuda.libdevice`
# emits them (`tt.extern_elementwise` with libdevice's symbol for the element type)
LIBDEVICE = {
    f"math.{op}": {"f32": f"__nv_{fn}f", "f64": f"__nv_{fn}"}
    for op, fn in {"tanh": "tanh", "powf": "pow", "acos": "acos", "asin": "asin", "atan": "atan", "acosh": "acosh",
                   "asinh": "asinh", "atanh": "atanh", "cosh": "cosh", "sinh": "sinh", "tan": "tan", "cbrt": "cbrt",
                   "erfc": "erfc", "expm1": "expm1", "log10": "log10", "log1p": "log1p", "trunc": "trunc",
                   "round": "round", "roundeven": "rint", "atan2": "atan2", "copysign": "copysign"}.items()
}
# ops the frontend marks `xb.precise` (sqrt_rn, div_rn): Triton's IEEE-rounded forms
PRECISE = {"math.sqrt": "tt.precise_sqrt", "arith.divf": "tt.precise_divf"}
# xb hint attributes -> Triton's (frontend `multiple_of`, `max_contiguous`, `max_constancy`)
HINTS = {"xb.multiple_of": "tt.divisibility", "xb.max_contiguous": "tt.contiguity",
         "xb.max_constancy": "tt.constancy"}
# loop hints of `xl.range(...)` -> the attributes Triton's frontend puts on scf.for
LOOP_HINTS = {"xb." + n: "tt." + n for n in ("num_stages", "loop_unroll_factor", "disallow_acc_multi_buffer",
                                             "flatten", "warp_specialize")}


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


@dialect_rule("arith", "math", "scf")  # the upstream dialects whose ops Triton's TTIR takes as they are
def _lower_passthrough(ctx: LoweringContext, op) -> None:
    if op.name in LIBDEVICE:
        return _lower_libdevice(ctx, op)
    if op.name in PRECISE and "xb.precise" in op.attributes and elem_str(op.results[0].type) == "f32":
        return ctx.emit(op, PRECISE[op.name], {})  # sqrt_rn, div_rn: Triton's math.sqrt and divf are approximate
    ctx.emit(op, op.name, _attrs_of(op), regions=[ctx.region(r) for r in op.regions])


def _lower_libdevice(ctx: LoweringContext, op) -> None:
    elem = elem_str(op.results[0].type)
    attrs = {"libname": '""', "libpath": '""', "pure": "true"}
    if elem in ("f16", "bf16"):  # libdevice has no 16-bit math: through fp32, rounded back
        t = ctx.types(op.results)[0]
        t32 = t.replace(elem, "f32") if t.startswith("tensor<") else "f32"
        wide = [ctx.w.op("arith.extf", [ref], [t], [t32], None, loc(op))[0] for ref in ctx.refs(op.operands)]
        attrs["symbol"] = string(LIBDEVICE[op.name]["f32"])
        r = ctx.w.op("tt.extern_elementwise", wide, [t32] * len(wide), [t32], attrs, loc(op))
        ctx.w.bind(op.results[0], ctx.w.op("arith.truncf", r, [t32], [t], None, loc(op))[0])
        return
    symbol = LIBDEVICE[op.name].get(elem)
    if symbol is None:
        raise ctx.error(f"{op.name} on {elem} is not supported")
    attrs["symbol"] = string(symbol)
    ctx.emit(op, "tt.extern_elementwise", attrs)


@rule("arith.mului_extended")
def _lower_mului_extended(ctx: LoweringContext, op) -> None:
    a, b = op.operands
    t = ctx.types([a])[0]
    lo = ctx.w.op("arith.muli", ctx.refs([a, b]), [t, t], [t], None, loc(op))
    hi = ctx.w.op("tt.mulhiui", ctx.refs([a, b]), [t, t], [t], None, loc(op))
    ctx.w.bind(op.results[0], lo[0])
    ctx.w.bind(op.results[1], hi[0])


@rule("xb.fp_to_fp")
def _lower_fp_to_fp(ctx: LoweringContext, op) -> None:
    floats.fp_to_fp(ctx, op)


@rule("arith.bitcast")
def _lower_bitcast(ctx: LoweringContext, op) -> None:
    """`tt.bitcast`, as Triton's frontend writes it (Triton's TTGIR conversion refuses arith.bitcast on
    blocks); none at all between fp8e4b15 and i8, one type in TTIR."""
    src, dst = ctx.types(op.operands)[0], ctx.types(op.results)[0]
    if src == dst:
        return ctx.w.bind(op.results[0], ctx.w.ref(op.operands[0]))
    ctx.emit(op, "tt.bitcast")


@rule("arith.constant")
def _lower_constant(ctx: LoweringContext, op) -> None:
    """Constants pass through, but for fp8e4b15 ones (canonicalization folds bitcasts into them),
    which become the i8 constants of their bits."""
    if elem_str(op.results[0].type) != floats.E4B15:
        return _lower_passthrough(ctx, op)
    t = ctx.types(op.results)[0]
    bits = floats.e4b15_bits(op.attributes["value"])
    value = f"dense<{bits}> : {t}" if t.startswith("tensor<") else f"{bits} : {t}"
    ctx.emit(op, "arith.constant", {"value": value})


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
    hosts = host_descriptor_args(op)  # host descriptors: their base argument is Triton's tensordesc
    for i, t in hosts.items():
        arg_types[i] = ctx.w.type(t)
    arg_attrs = []
    all_attrs = op.attributes["arg_attrs"] if "arg_attrs" in op.attributes else None
    for i in range(len(arg_types)):
        d = ir.DictAttr(all_attrs[i]) if all_attrs is not None and i not in hosts else None
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

    ctx.host_args = {names[i]: body.arguments[i] for i in hosts}
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
         "xb.addptr": "tt.addptr", "xb.ptr_cast": "tt.bitcast", "xb.int_to_ptr": "tt.int_to_ptr",
         "xb.ptr_to_int": "tt.ptr_to_int"}


@rule(*_SAME)
def _lower_same(ctx: LoweringContext, op) -> None:
    ctx.emit(op, _SAME[op.name], _attrs_of(op, inherent=False))


def _segments(op) -> list[int]:
    return list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))


def _as_bytes(t: str) -> str:
    """A type with its i1 elements (and pointees) as i8: booleans live in memory as bytes."""
    return re.sub(r"i1(?=[>,)\s]|$)", "i8", t)


def _bool_memory(ctx: LoweringContext, op, refs: list, types: list, values: dict) -> None:
    """Bytes in memory for a bool pointer, as Triton's frontend does: the pointer is cast to `i8`
    and the bool operands at positions `values` are zero-extended (LLVM cannot cast i1 memory)."""
    p8 = _as_bytes(types[0])
    refs[0] = ctx.w.op("tt.bitcast", [refs[0]], [types[0]], [p8], None, loc(op))[0]
    types[0] = p8
    for i in values:
        wide = _as_bytes(types[i])
        refs[i] = ctx.w.op("arith.extui", [refs[i]], [types[i]], [wide], None, loc(op))[0]
        types[i] = wide


@rule("xb.join", "xb.split", "xb.cat")
def _lower_join_split_cat(ctx: LoweringContext, op) -> None:
    ctx.emit(op, "tt." + op.name[3:], {})


@rule("xb.gather")
def _lower_gather(ctx: LoweringContext, op) -> None:
    ctx.emit(op, "tt.gather", {"axis": f"{attr(op, 'axis')} : i32"})


@rule("xb.histogram")
def _lower_histogram(ctx: LoweringContext, op) -> None:
    """`tt.histogram` bins by the value's low bits, so values outside the bins are masked off here
    (xb's histogram does not count them)."""
    src = op.operands[0]
    bins = attr(op, "num_bins")
    t = ctx.types([src])[0]
    bt = t.replace("xi32>", "xi1>")
    ref = ctx.refs([src])[0]

    def const(v):
        return ctx.w.op("arith.constant", [], [], [t], {"value": f"dense<{v}> : {t}"}, loc(op))[0]

    def cmp(pred, rhs):  # arith.cmpi predicates: 2 = slt, 5 = sge
        return ctx.w.op("arith.cmpi", [ref, rhs], [t, t], [bt], {"predicate": f"{pred} : i64"}, loc(op))[0]

    keep = ctx.w.op("arith.andi", [cmp(5, const(0)), cmp(2, const(bins))], [bt, bt], [bt], {}, loc(op))[0]
    if len(op.operands) > 1:
        keep = ctx.w.op("arith.andi", [keep, ctx.refs([op.operands[1]])[0]], [bt, bt], [bt], {}, loc(op))[0]
    rt = ctx.types(op.results)
    ctx.w.bind(op.result, ctx.w.op("tt.histogram", [ref, keep], [t, bt], rt, {}, loc(op))[0])


@rule("xb.load")
def _lower_load(ctx: LoweringContext, op) -> None:
    """`tt.load`. A masked load without `other` stays without it, as Triton's own frontend emits it:
    masked-off lanes read 0 (docs/LANGUAGE.md), which Triton's lowering gives such a load (its NVIDIA
    LoadOpToLLVM zero-initializes the registers of the predicated `ld` when there is no `other`; a
    pipelined load's cp.async zero-fills the lanes it skips)."""
    _, has_mask, has_other = _segments(op)
    operands = list(op.operands)
    if has_other and not has_mask:  # `other` without a mask is never read
        operands, has_other = operands[:1], 0
    attrs = ctx.w.dialect.memory_attrs(attr(op, "cache"), attr(op, "evict"))
    attrs["isVolatile"] = "true" if attr(op, "volatile") else "false"
    attrs["operandSegmentSizes"] = i32_array([1, has_mask, has_other])
    attrs.update(_attrs_of(op, inherent=False))
    if "!tt.ptr<i1>" not in ctx.w.type(operands[0].type):
        ctx.emit(op, "tt.load", attrs, operands)
        return
    refs, types = ctx.refs(operands), ctx.types(operands)
    _bool_memory(ctx, op, refs, types, [len(operands) - 1] if has_other else [])
    rt = ctx.types(op.results)[0]
    bytes_t = _as_bytes(rt)
    raw = ctx.w.op("tt.load", refs, types, [bytes_t], attrs, loc(op))[0]
    zero = ctx.w.op("arith.constant", [], [], [bytes_t],
                    {"value": f"dense<0> : {bytes_t}" if bytes_t.startswith("tensor<") else "0 : i8"}, loc(op))[0]
    ctx.w.bind(op.result, ctx.w.op("arith.cmpi", [raw, zero], [bytes_t, bytes_t], [rt],
                                   {"predicate": "1 : i64"}, loc(op))[0])


@rule("xb.store")
def _lower_store(ctx: LoweringContext, op) -> None:
    attrs = ctx.w.dialect.memory_attrs(attr(op, "cache"), attr(op, "evict"))
    if "!tt.ptr<i1>" not in ctx.w.type(op.operands[0].type):
        ctx.emit(op, "tt.store", attrs)
        return
    refs, types = ctx.refs(op.operands), ctx.types(op.operands)
    _bool_memory(ctx, op, refs, types, [1])
    ctx.w.op("tt.store", refs, types, [], attrs, loc(op))


def _sem_scope(ctx: LoweringContext, op) -> dict:
    sem, scope = attr(op, "sem"), attr(op, "scope")
    if sem not in MEM_SEMANTIC or scope not in MEM_SCOPE:
        raise ctx.error(f"unknown memory semantic '{sem}' or scope '{scope}'")
    return {"scope": f"{MEM_SCOPE[scope]} : i32", "sem": f"{MEM_SEMANTIC[sem]} : i32"}


@rule("xb.atomic_rmw")
def _lower_atomic_rmw(ctx: LoweringContext, op) -> None:
    kind = attr(op, "kind")
    if kind not in RMW_OP:
        raise ctx.error(f"unknown atomic kind '{kind}'")
    ctx.emit(op, "tt.atomic_rmw", {"atomic_rmw_op": f"{RMW_OP[kind]} : i32", **_sem_scope(ctx, op)})


@rule("xb.atomic_cas")
def _lower_atomic_cas(ctx: LoweringContext, op) -> None:
    ctx.emit(op, "tt.atomic_cas", _sem_scope(ctx, op))


@rule("xb.dot")
def _lower_dot(ctx: LoweringContext, op) -> None:
    """tt.dot, 2-D or 3-D (a batch); the operand sizes and defaults are those of Triton's NVIDIA backend."""
    ety = elem_str(op.operands[0].type)
    precision = attr(op, "input_precision") if ety == "f32" else "tf32"  # Triton's default below fp32
    if precision not in INPUT_PRECISION:
        raise ctx.error(f"unknown dot input precision '{precision}'")
    eight_bit = ety == "i8" or ety.startswith("f8")
    k = ir.RankedTensorType(op.operands[0].type).shape[-1]
    if k < (32 if eight_bit else 16):  # Triton's min_dot_size: the tensor cores' smallest K
        raise ctx.error(f"a dot of {ety} blocks needs K >= {32 if eight_bit else 16} on cuda (Triton's NVIDIA "
                        f"backend), got K = {k}: use a larger BLOCK_K (masked loads pad it with zeros)")
    if "max_num_imprecise_acc" in op.attributes:
        imprecise = attr(op, "max_num_imprecise_acc")
    else:  # Triton's default: fp8 products on sm_90 accumulate imprecisely for as long as they like
        imprecise = 2**30 if ety.startswith("f8") and ctx.arch == 90 else 0
    ctx.emit(op, "tt.dot", {"inputPrecision": f"{INPUT_PRECISION[precision]} : i32",
                            "maxNumImpreciseAcc": f"{imprecise} : i32"})


@rule("xb.reduce")
def _lower_reduce(ctx: LoweringContext, op) -> None:
    kind = op.attributes["kind"].value
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    attrs = {"axis": f"{axis} : i32"}
    if kind == "generic":
        return reductions.generic(ctx, op, "tt.reduce", "tt.reduce.return", attrs)
    if kind in ("argmax", "argmin"):
        return reductions.arg_reduce(ctx, op, kind, axis, attrs)
    et = elem_str(op.operands[0].type)
    ctx.emit(op, "tt.reduce", attrs, regions=[reductions.combine_region(ctx, op, kind, et, "tt.reduce.return")])


@rule("xb.scan")
def _lower_scan(ctx: LoweringContext, op) -> None:
    kind = op.attributes["kind"].value
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    reverse = ir.BoolAttr(op.attributes["reverse"]).value
    attrs = {"axis": f"{axis} : i32", "reverse": "true" if reverse else "false"}
    if kind == "generic":
        return reductions.generic(ctx, op, "tt.scan", "tt.scan.return", attrs)
    et = elem_str(op.operands[0].type)
    ctx.emit(op, "tt.scan", attrs, regions=[reductions.combine_region(ctx, op, kind, et, "tt.scan.return")])


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
    if "xb.assume" in op.attributes:  # tl.assume: LLVM's assume, as Triton emits it (scalars only)
        if not str(op.operands[0].type).startswith("tensor<"):
            ctx.emit(op, "llvm.intr.assume", {"op_bundle_sizes": "array<i32>",
                                              "operandSegmentSizes": "array<i32: 1, 0>"})
        return
    if ctx.debug:  # as Triton: device_assert is compiled only with debug=True
        ctx.emit(op, "tt.assert", {"message": string(attr(op, "message"))})


def emit_ttir(module: ir.Module, dialect: TTIRDialect | None = None, debug: bool = False, arch: int = 90) -> str:
    """The TTIR text of an xb module (after xb's passes): a `tt.func` for its `xb.kernel` func.

    Raises:
        CompilationError: an op has no cuda lowering, at the op's source line.
    """
    w = TTIRWriter(dialect or TTIRDialect())
    ctx = LoweringContext(w, debug, arch)
    kernel = kernel_of(module)
    w.op("builtin.module", regions=[lambda: w.block([], lambda _: lower_kernel(ctx, kernel))],
         loc=str(module.operation.location))
    return w.text()
