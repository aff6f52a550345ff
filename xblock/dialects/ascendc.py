"""The ascendc dialect: IRDL ops that mirror the AscendC API one call each, and their builders.

A kernel is a `func.func` marked `ascendc.kernel`. GM pointers are `!ascendc.gm_addr` arguments,
`GlobalTensor<T>` values are `!ascendc.global<T>`, `LocalTensor<T>` values `!ascendc.local<T>`;
scalars are builtin types, control flow is upstream `scf`, scalar math upstream `arith`/`math`.
Queues and scratch buffers are declared by `ascendc.tque`/`ascendc.tbuf` ops and named by their
`sym_name`. Each op documents the AscendC call it prints to (`API`), which is also what the test
of "every API call the backend emits is one the reference lists" checks.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir


@dataclass(frozen=True)
class ApiOp:
    """One op: its name, the AscendC call(s) it stands for, and what its operands are."""

    name: str
    api: tuple
    operands: str
    results: int = 0


_V = ("Add", "Sub", "Mul", "Div", "Max", "Min", "And", "Or", "Exp", "Ln", "Abs", "Sqrt", "Rsqrt", "Reciprocal", "Relu")
OPS: list[ApiOp] = [
    ApiOp("tiling_field", ("",), "{name}: a scalar field of the kernel's tiling struct", 1),
    ApiOp("set_global_buffer", ("GlobalTensor::SetGlobalBuffer",), "(gm_addr) {dtype}", 1),
    ApiOp("tque", ("TQue", "TPipe::InitBuffer"), "{sym_name, position, depth, num, bytes}"),
    ApiOp("tbuf", ("TBuf", "TPipe::InitBuffer"), "{sym_name, bytes}"),
    ApiOp("alloc_tensor", ("TQue::AllocTensor",), "{queue}", 1),
    ApiOp("enque", ("TQue::EnQue",), "(local) {queue}"),
    ApiOp("deque", ("TQue::DeQue",), "{queue}", 1),
    ApiOp("free_tensor", ("TQue::FreeTensor",), "(local) {queue}"),
    ApiOp("get_with_offset", ("TBuf::GetWithOffset",), "{buf, count, offset}", 1),
    ApiOp("block_idx", ("GetBlockIdx",), "", 1),
    ApiOp("block_num", ("GetBlockNum",), "", 1),
    ApiOp("gm_at", ("GlobalTensor::operator[]",), "(global, offset)", 1),
    ApiOp("ub_at", ("LocalTensor::operator[]",), "(local, offset)", 1),
    ApiOp("reinterpret", ("LocalTensor::ReinterpretCast",), "(local) -> local of another type", 1),
    ApiOp("data_copy", ("DataCopy",), "(dst, src, count)"),
    ApiOp("data_copy_pad", ("DataCopyPad",),
          "(dst, src, blockCount, blockLen, srcStride, dstStride[, rightPadding, paddingValue]) {is_pad}"),
    ApiOp("vec", _V, "(dst, src0[, src1], count) {api}"),
    ApiOp("vec_scalar", ("Adds", "Muls", "Maxs", "Mins"), "(dst, src, scalar, count) {api}"),
    ApiOp("duplicate", ("Duplicate",), "(dst, scalar, count)"),
    ApiOp("cast", ("Cast",), "(dst, src, count) {round}"),
    ApiOp("compare", ("Compare",), "(dst, src0, src1, count) {mode}"),
    ApiOp("compare_scalar", ("CompareScalar",), "(dst, src0, scalar, count) {mode}"),
    ApiOp("select", ("Select",), "(dst, mask, src0, src1 tensor or scalar, count) {mode}"),
    ApiOp("reduce", ("ReduceSum", "ReduceMax", "ReduceMin"), "(dst, src, tmp, count) {api, cal_index}"),
    ApiOp("get_value", ("LocalTensor::GetValue", "GlobalTensor::GetValue"), "(tensor, index)", 1),
    ApiOp("set_value", ("LocalTensor::SetValue", "GlobalTensor::SetValue"), "(tensor, index, value)"),
    ApiOp("fetch_event_id", ("TPipe::FetchEventID",), "{event}", 1),
    ApiOp("set_flag", ("SetFlag",), "(id) {event}"),
    ApiOp("wait_flag", ("WaitFlag",), "(id) {event}"),
    ApiOp("set_atomic_add", ("SetAtomicAdd",), "{dtype}"),
    ApiOp("set_atomic_none", ("SetAtomicNone",), ""),
    ApiOp("dcci", ("DataCacheCleanAndInvalid",), "(global)"),
]
OP_NAMES = tuple("ascendc." + o.name for o in OPS)


def irdl_source() -> str:
    """The IRDL module that defines the dialect: every op takes variadic operands and attributes."""
    ops = []
    for o in OPS:
        body = "%t = irdl.any\n    irdl.operands(args: variadic %t)"
        if o.results:
            body += "\n    %r = irdl.any\n    irdl.results(result: %r)"
        ops.append(f"  irdl.operation @{o.name} {{\n    {body}\n  }}")
    types = "".join(f"  irdl.type @{t} {{\n    %0 = irdl.any\n    irdl.parameters(elem: %0)\n  }}\n"
                    for t in ("global", "local"))
    types += "  irdl.type @gm_addr {\n  }\n"
    return "irdl.dialect @ascendc {\n" + types + "\n".join(ops) + "\n}\n"


_LOADED: set = set()


def load(ctx: ir.Context) -> None:
    """Load the dialect into `ctx` (once)."""
    from mlir.dialects import irdl

    if id(ctx) in _LOADED:
        return
    with ctx:
        irdl.load_dialects(ir.Module.parse(irdl_source()))
    _LOADED.add(id(ctx))


def global_type(elem: ir.Type) -> ir.Type:
    return ir.Type.parse(f"!ascendc.global<{elem}>")


def local_type(elem: ir.Type) -> ir.Type:
    return ir.Type.parse(f"!ascendc.local<{elem}>")


def gm_addr_type() -> ir.Type:
    return ir.Type.parse("!ascendc.gm_addr")


def elem_of(t: ir.Type) -> str:
    """'f32' of `!ascendc.local<f32>` or `!ascendc.global<f32>`."""
    s = str(t)
    return s[s.index("<") + 1 : -1]


def is_local(t: ir.Type) -> bool:
    return str(t).startswith("!ascendc.local<")


def is_global(t: ir.Type) -> bool:
    return str(t).startswith("!ascendc.global<")


def _attr(v) -> ir.Attribute:
    if isinstance(v, ir.Attribute):
        return v
    if isinstance(v, bool):
        return ir.BoolAttr.get(v)
    if isinstance(v, int):
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), v)
    return ir.StringAttr.get(str(v))


def op(name: str, operands=(), result_type: ir.Type | None = None, *, loc=None, ip=None, **attrs):
    """Create `ascendc.<name>`; returns its result when it has one, else the op.

    Attributes are given as Python values (str, int, bool) or MLIR attributes.
    """
    assert "ascendc." + name in OP_NAMES, name
    o = ir.Operation.create(
        "ascendc." + name,
        results=[result_type] if result_type is not None else [],
        operands=list(operands),
        attributes={k: _attr(v) for k, v in attrs.items()},
        loc=loc,
        ip=ip,
    )
    return o.result if result_type is not None else o
