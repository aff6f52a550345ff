"""The ascendc dialect: IRDL ops that mirror the AscendC API one call each, and their builders.

A kernel is a `func.func` marked `ascendc.kernel`. GM pointers are `!ascendc.gm_addr` arguments,
`GlobalTensor<T>` values are `!ascendc.global<T>`, `LocalTensor<T>` values `!ascendc.local<T>`;
scalars are builtin types, control flow is upstream `scf`, scalar math upstream `arith`/`math`.
Ops take their operands positionally (`arity`), with optional trailing ones counted in
`operandSegmentSizes`. Queues and scratch buffers are declared by `ascendc.tque`/`ascendc.tbuf` ops and named by their
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
    arity: tuple = (0, 0)  # (required operands, optional trailing operands)


_V = ("Add", "Sub", "Mul", "Div", "Max", "Min", "And", "Or", "Exp", "Ln", "Abs", "Sqrt", "Rsqrt", "Reciprocal", "Relu")
OPS: list[ApiOp] = [
    ApiOp("tiling_field", ("",), "{name}: a scalar field of the kernel's tiling struct", 1, arity=(0, 0)),
    ApiOp("set_global_buffer", ("GlobalTensor::SetGlobalBuffer",), "(gm_addr) {dtype}", 1, arity=(1, 0)),
    ApiOp("l2_cache_hint", ("GlobalTensor::SetL2CacheHint", "CacheMode"),
          "(global) {mode}: mode \"disable\" keeps the tensor's reads out of L2 (CACHE_MODE_DISABLE)", arity=(1, 0)),
    ApiOp("tque", ("TQue", "TPipe::InitBuffer"), "{sym_name, position, depth, num, bytes}", arity=(0, 0)),
    ApiOp("tbuf", ("TBuf", "TPipe::InitBuffer"), "{sym_name, bytes}", arity=(0, 0)),
    ApiOp("alloc_tensor", ("TQue::AllocTensor",), "{queue}", 1, arity=(0, 0)),
    ApiOp("enque", ("TQue::EnQue",), "(local) {queue}", arity=(1, 0)),
    ApiOp("deque", ("TQue::DeQue",), "{queue}", 1, arity=(0, 0)),
    ApiOp("free_tensor", ("TQue::FreeTensor",), "(local) {queue}", arity=(1, 0)),
    ApiOp("get_with_offset", ("TBuf::GetWithOffset",), "{buf, count, offset}", 1, arity=(0, 0)),
    ApiOp("block_idx", ("GetBlockIdx",), "", 1, arity=(0, 0)),
    ApiOp("block_num", ("GetBlockNum",), "", 1, arity=(0, 0)),
    ApiOp("sub_block_idx", ("GetSubBlockIdx",), "", 1, arity=(0, 0)),
    ApiOp("sub_block_num", ("GetSubBlockNum",), "", 1, arity=(0, 0)),
    ApiOp("gm_at", ("GlobalTensor::operator[]",), "(global, offset)", 1, arity=(2, 0)),
    ApiOp("ub_at", ("LocalTensor::operator[]",), "(local, offset)", 1, arity=(2, 0)),
    ApiOp("reinterpret", ("LocalTensor::ReinterpretCast",), "(local) -> local of another type", 1, arity=(1, 0)),
    ApiOp("trans_data_5hd", ("TransDataTo5HD", "TransDataTo5HDParams"),
          "(dst, src) {src_stride, dst_stride, repeat, dst_rep, src_rep[, dst_high, src_high]}: srcList[j] = "
          "src[j * src_stride]; dstList[i] = dst[i * dst_stride] (8- and 16-bit), dst[(i / 2) * dst_stride + "
          "(i % 2) * 8] (32-bit); dst_high/src_high: the DataBlock halves an 8-bit call writes and reads",
          arity=(2, 0)),
    ApiOp("data_copy", ("DataCopy",), "(dst, src, count)", arity=(3, 0)),
    ApiOp("data_copy_pad", ("DataCopyPad",),
          "(dst, src, blockCount, blockLen, srcStride, dstStride[, rightPadding, paddingValue]) {is_pad}",
          arity=(6, 2)),
    ApiOp("vec", _V, "(dst, src0[, src1], count) {api}", arity=(3, 1)),
    ApiOp("vec_scalar", ("Adds", "Muls", "Maxs", "Mins"), "(dst, src, scalar, count) {api}", arity=(4, 0)),
    ApiOp("duplicate", ("Duplicate",), "(dst, scalar, count)", arity=(3, 0)),
    ApiOp("cast", ("Cast",), "(dst, src, count) {round}", arity=(3, 0)),
    ApiOp("gather_mask", ("GatherMask", "GatherMaskParams"),
          "(dst, src) {pattern, repeat, mask}: built-in pattern; normal mode over `repeat` 256-byte repeats "
          "(mask 0), or counter mode over the first `mask` elements of one repeat", arity=(2, 0)),
    ApiOp("gather", ("Gather",), "(dst, src, srcOffset (uint32 bytes), srcBaseAddr, count)", arity=(5, 0)),
    ApiOp("sort", ("Sort",), "(dst, concat, index, tmp, repeatTime): Sort<T, isFullSort = true>, the "
          "32 * repeatTime scores of `concat` (indices: `index`) as (score, index) pairs, descending, stable",
          arity=(5, 0)),
    ApiOp("extract", ("Extract",), "(dstValue, dstIndex, sorted, repeatTime): the scores and indices of "
          "32 * repeatTime pairs", arity=(4, 0)),
    ApiOp("compare", ("Compare",), "(dst, src0, src1, count) {mode}", arity=(4, 0)),
    ApiOp("compare_scalar", ("CompareScalar",), "(dst, src0, scalar, count) {mode}", arity=(4, 0)),
    ApiOp("select", ("Select",), "(dst, mask, src0, src1 tensor or scalar, count) {mode}", arity=(5, 0)),
    ApiOp("reduce", ("ReduceSum", "ReduceMax", "ReduceMin"), "(dst, src, tmp, count) {api, cal_index}",
          arity=(4, 0)),
    ApiOp("get_value", ("LocalTensor::GetValue", "GlobalTensor::GetValue"), "(tensor, index)", 1, arity=(2, 0)),
    ApiOp("set_value", ("LocalTensor::SetValue", "GlobalTensor::SetValue"), "(tensor, index, value)", arity=(3, 0)),
    ApiOp("fetch_event_id", ("TPipe::FetchEventID",), "{event}", 1, arity=(0, 0)),
    ApiOp("set_flag", ("SetFlag",), "(id) {event}", arity=(1, 0)),
    ApiOp("wait_flag", ("WaitFlag",), "(id) {event}", arity=(1, 0)),
    ApiOp("pipe_barrier", ("PipeBarrier",), "{pipe}", arity=(0, 0)),
    ApiOp("set_atomic_add", ("SetAtomicAdd",), "{dtype}", arity=(0, 0)),
    ApiOp("set_atomic_max", ("SetAtomicMax",), "{dtype}", arity=(0, 0)),
    ApiOp("set_atomic_min", ("SetAtomicMin",), "{dtype}", arity=(0, 0)),
    ApiOp("set_atomic_none", ("SetAtomicNone",), "", arity=(0, 0)),
    ApiOp("dcci", ("DataCacheCleanAndInvalid",), "(global)", arity=(1, 0)),
    # the Cube unit (AIC) and mixed AIC/AIV kernels (backends/ascend/lower/ops/dot.py)
    ApiOp("kernel_type", ("KERNEL_TASK_TYPE_DEFAULT",), "{type}", arity=(0, 0)),
    ApiOp("data_copy_nd2nz", ("DataCopy", "Nd2NzParams"),
          "(dst, src, ndNum, nValue, dValue, srcNdMatrixStride, srcDValue, dstNzC0Stride, dstNzNStride, "
          "dstNzMatrixStride)", arity=(10, 0)),
    ApiOp("load_data", ("LoadData", "LoadData2DParams"),
          "(dst, src, startIndex, repeatTimes, srcStride[, dstGap]) {transpose}", arity=(5, 1)),
    ApiOp("load_data_with_transpose", ("LoadDataWithTranspose", "LoadData2dTransposeParams"),
          "(dst, src, startIndex, repeatTimes, srcStride, dstGap, dstFracGap): b8/b32 squares of two fractals",
          arity=(7, 0)),
    ApiOp("data_copy_bt", ("DataCopy", "DataCopyParams"),
          "(dst, src, blockLen): L1 (C1) -> BiasTable (C2), one block of blockLen x 64 B", arity=(3, 0)),
    ApiOp("mmad", ("Mmad", "MmadParams"),
          "(c, a, b, m, n, k, init[, bias]): with bias (C2), C starts at the bias row (init must be false)",
          arity=(7, 1)),
    ApiOp("fixpipe", ("Fixpipe", "FixpipeParamsV220"), "(gm, c, nSize, mSize, srcStride, dstStride) {quant, relu}",
          arity=(6, 0)),
    ApiOp("core_is", ("ASCEND_IS_AIC", "ASCEND_IS_AIV"), "{core}: an i1 for `if ASCEND_IS_<core> {`", 1,
          arity=(0, 0)),
    ApiOp("cross_core_set_flag", ("CrossCoreSetFlag",), "(flagId) {mode, pipe}", arity=(1, 0)),
    ApiOp("cross_core_wait_flag", ("CrossCoreWaitFlag",), "(flagId)", arity=(1, 0)),
]
OP_NAMES = tuple("ascendc." + o.name for o in OPS)
_BY_NAME = {o.name: o for o in OPS}


def irdl_source() -> str:
    """The IRDL module that defines the dialect: positional operands of any type, and attributes."""
    ops = []
    for o in OPS:
        req, opt = o.arity
        slots = [f"a{i}: %t{i}" for i in range(req)] + [f"o{i}: optional %t{req + i}" for i in range(opt)]
        body = "".join(f"%t{i} = irdl.any\n    " for i in range(req + opt))
        body += f"irdl.operands({', '.join(slots)})"
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


def op(name: str, operands=(), result_type: ir.Type | None = None, /, *, loc=None, ip=None, **attrs):
    """Create `ascendc.<name>`; returns its result when it has one, else the op.

    Attributes are given as Python values (str, int, bool) or MLIR attributes.
    """
    spec = _BY_NAME[name]
    req, opt = spec.arity
    if not req <= len(operands) <= req + opt:
        raise ValueError(f"internal error: ascendc.{name} takes {req} to {req + opt} operands, got {len(operands)}")
    if opt:
        present = len(operands) - req
        attrs["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get([1] * req + [1] * present + [0] * (opt - present))
    o = ir.Operation.create(
        "ascendc." + name,
        results=[result_type] if result_type is not None else [],
        operands=list(operands),
        attributes={k: _attr(v) for k, v in attrs.items()},
        loc=loc,
        ip=ip,
    )
    return o.result if result_type is not None else o
