"""The xb dialect: IRDL definitions, documentation and a snake_case builder per op.

IRDL ops print in MLIR's generic form and carry attributes (not properties). IRDL cannot
mark an op pure or as a terminator, so xblock's own passes (``xb-dce``) know which xb ops
are free of side effects (``PURE_OPS``), and combine regions of ``xb.reduce``/``xb.scan``
end with upstream ``gpu.yield``.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import irdl


@dataclass(frozen=True)
class OpDoc:
    """One op of the dialect: its name, IRDL body and documentation."""

    name: str
    irdl: str
    doc: str


_ANY = "%t = irdl.any\n"

# IRDL binds one type per constraint variable, so a variadic operand would force all its values to
# one type. Ops taking several values of different types (reduce/scan over values and indices,
# print) use MAX_SLOTS optional operands instead, each with its own variable.
MAX_SLOTS = 8


def _slots(var: str, name: str) -> str:
    return "".join(f"%{var}{i} = irdl.any\n" for i in range(MAX_SLOTS))


def _slot_operands(var: str, name: str) -> str:
    return "irdl.operands(" + ", ".join(f"{name}{i}: optional %{var}{i}" for i in range(MAX_SLOTS)) + ")\n"


def _slot_results(var: str, name: str) -> str:
    return "irdl.results(" + ", ".join(f"{name}{i}: optional %{var}{i}" for i in range(MAX_SLOTS)) + ")"

OPS: list[OpDoc] = [
    OpDoc(
        "program_id",
        "%i32 = irdl.is i32\n%a = irdl.any\nirdl.attributes {\"axis\" = %a}\nirdl.results(result: %i32)",
        "Index of this program instance along grid axis `axis` (0, 1 or 2), as i32.",
    ),
    OpDoc(
        "num_programs",
        "%i32 = irdl.is i32\n%a = irdl.any\nirdl.attributes {\"axis\" = %a}\nirdl.results(result: %i32)",
        "Number of program instances along grid axis `axis`, as i32.",
    ),
    OpDoc(
        "arange",
        "%t = irdl.any\n%s = irdl.any\n%e = irdl.any\n"
        "irdl.attributes {\"start\" = %s, \"end\" = %e}\nirdl.results(result: %t)",
        "`tensor<(end-start)xi32>` holding start, start+1, ..., end-1.",
    ),
    OpDoc(
        "splat",
        _ANY + "%r = irdl.any\nirdl.operands(src: %t)\nirdl.results(result: %r)",
        "Block of the result's shape with every element equal to the scalar operand.",
    ),
    OpDoc(
        "broadcast",
        _ANY + "%r = irdl.any\nirdl.operands(src: %t)\nirdl.results(result: %r)",
        "Block broadcast to the result's shape; the ranks agree and each source dim is 1 or equal.",
    ),
    OpDoc(
        "expand_dims",
        _ANY + "%r = irdl.any\n%a = irdl.any\nirdl.attributes {\"axis\" = %a}\n"
        "irdl.operands(src: %t)\nirdl.results(result: %r)",
        "Block with a new dimension of size 1 inserted at `axis`.",
    ),
    OpDoc(
        "reshape",
        _ANY + "%r = irdl.any\nirdl.operands(src: %t)\nirdl.results(result: %r)",
        "Block reshaped to the result's shape in row-major order (same number of elements).",
    ),
    OpDoc(
        "trans",
        _ANY + "%r = irdl.any\n%a = irdl.any\nirdl.attributes {\"order\" = %a}\n"
        "irdl.operands(src: %t)\nirdl.results(result: %r)",
        "Block with dimensions permuted: result dim i is source dim order[i].",
    ),
    OpDoc(
        "join",
        _ANY + "%r = irdl.any\nirdl.operands(lhs: %t, rhs: %t)\nirdl.results(result: %r)",
        "Two blocks of one shape joined along a new minor dimension of size 2: result[..., 0] is "
        "`lhs`, result[..., 1] is `rhs` (Triton's `tt.join`).",
    ),
    OpDoc(
        "split",
        _ANY + "%r = irdl.any\nirdl.operands(src: %t)\nirdl.results(lhs: %r, rhs: %r)",
        "The inverse of join: a block whose last dimension is 2 as its halves src[..., 0] and "
        "src[..., 1] (Triton's `tt.split`).",
    ),
    OpDoc(
        "cat",
        _ANY + "%r = irdl.any\nirdl.operands(lhs: %t, rhs: %t)\nirdl.results(result: %r)",
        "Two 1-D blocks of one shape concatenated: the elements of `lhs`, then those of `rhs`. "
        "Triton's `tt.cat` may reorder elements; xblock's targets keep this order except cuda, where "
        "Triton chooses (so only order-insensitive uses, such as reductions, are portable).",
    ),
    OpDoc(
        "gather",
        "%t = irdl.any\n%i = irdl.any\n%r = irdl.any\n%a = irdl.any\nirdl.attributes {\"axis\" = %a}\n"
        "irdl.operands(src: %t, index: %i)\nirdl.results(result: %r)",
        "Gather along `axis`: result[..., j, ...] = src[..., index[..., j, ...], ...]; `index` has the "
        "rank of `src` and its shape except along `axis`; the result has the shape of `index`. An index "
        "outside [0, src.shape[axis]) is an error on the sim, and reads an unspecified element of the "
        "same row elsewhere (never memory outside the block).",
    ),
    OpDoc(
        "histogram",
        "%t = irdl.any\n%m = irdl.any\n%r = irdl.any\n%n = irdl.any\nirdl.attributes {\"num_bins\" = %n}\n"
        "irdl.operands(src: %t, mask: optional %m)\nirdl.results(result: %r)",
        "Counts of the values of a 1-D integer block in bins 0..num_bins-1 of width 1, as i32. Lanes "
        "whose mask is false, and values outside the bins, are not counted.",
    ),
    OpDoc(
        "ptr_cast",
        _ANY + "%r = irdl.any\nirdl.operands(src: %t)\nirdl.results(result: %r)",
        "Pointer (or block of pointers) reinterpreted as pointing to another element type.",
    ),
    OpDoc(
        "int_to_ptr",
        _ANY + "%r = irdl.any\nirdl.operands(src: %t)\nirdl.results(result: %r)",
        "An i64 address (or block of them) as a pointer (Triton's `tt.int_to_ptr`). It may point into "
        "any buffer of the launch: which one is known only when the kernel runs.",
    ),
    OpDoc(
        "ptr_to_int",
        _ANY + "%r = irdl.any\nirdl.operands(src: %t)\nirdl.results(result: %r)",
        "A pointer (or block of them) as its i64 address (Triton's `tt.ptr_to_int`).",
    ),
    OpDoc(
        "fp_to_fp",
        _ANY + "%r = irdl.any\n%m = irdl.any\nirdl.attributes {\"rounding\" = %m}\n"
        "irdl.operands(src: %t)\nirdl.results(result: %r)",
        "Float conversion with Triton's `tt.fp_to_fp` semantics: to or from a float8 type (f16, bf16 or "
        "f32 on the other side), or a downcast with `rounding` \"rtz\" (f32 to f16/bf16). `rounding` is "
        "\"rtne\" or \"rtz\" for a downcast, \"\" for an upcast. Downcasts to f8E4M3FN/f8E5M2 saturate "
        "to the largest finite value (NaN -> 0x7F), to f8E4M3FNUZ/f8E5M2FNUZ saturate finite values (Inf "
        "and NaN -> NaN, -0 -> 0); f8E4M3B11FNUZ holds Triton's fp8e4b15 (bias 15, no Inf/NaN, |x| <= "
        "1.75, conversions through f16 as Triton's routine does them).",
    ),
    OpDoc(
        "addptr",
        "%p = irdl.any\n%o = irdl.any\nirdl.operands(ptr: %p, offset: %o)\nirdl.results(result: %p)",
        "Pointer plus an integer offset counted in elements of the pointee type; scalar or block.",
    ),
    OpDoc(
        "load",
        "%p = irdl.any\n%m = irdl.any\n%v = irdl.any\n%c = irdl.any\n%e = irdl.any\n%vol = irdl.any\n"
        "irdl.operands(ptr: %p, mask: optional %m, other: optional %v)\n"
        "irdl.attributes {\"cache\" = %c, \"evict\" = %e, \"volatile\" = %vol}\nirdl.results(result: %v)",
        "Masked gather from global memory. Lanes whose mask is false read nothing and take "
        "`other` (undefined without it). Operand segment sizes are in `operandSegmentSizes`.",
    ),
    OpDoc(
        "store",
        "%p = irdl.any\n%v = irdl.any\n%m = irdl.any\n%c = irdl.any\n%e = irdl.any\n"
        "irdl.operands(ptr: %p, value: %v, mask: optional %m)\n"
        "irdl.attributes {\"cache\" = %c, \"evict\" = %e}",
        "Masked scatter to global memory; lanes whose mask is false write nothing.",
    ),
    OpDoc(
        "reduce",
        _slots("t", "src") + _slots("u", "res") + "%k = irdl.any\n%a = irdl.any\n%r = irdl.region\n"
        + _slot_operands("t", "src") + "irdl.attributes {\"axis\" = %a, \"kind\" = %k}\n"
        "irdl.regions(combine: %r)\n" + _slot_results("u", "res"),
        "Reduction along `axis`. `kind` is sum, prod, max, min, argmax, argmin, xor_sum, or "
        "generic (the combine region takes 2N scalars and yields N with gpu.yield). argmax/argmin "
        "return the smallest index of the extreme value; max/min ignore NaN unless all are NaN. "
        f"Up to {MAX_SLOTS} inputs, each with its own type (operand/result segment sizes).",
    ),
    OpDoc(
        "scan",
        _slots("t", "src") + _slots("u", "res") + "%k = irdl.any\n%a = irdl.any\n%rev = irdl.any\n"
        "%r = irdl.region\n" + _slot_operands("t", "src")
        + "irdl.attributes {\"axis\" = %a, \"kind\" = %k, \"reverse\" = %rev}\n"
        "irdl.regions(combine: %r)\n" + _slot_results("u", "res"),
        "Inclusive scan along `axis`: cumsum, cumprod or generic (combine region as for reduce).",
    ),
    OpDoc(
        "dot",
        "%a = irdl.any\n%b = irdl.any\n%c = irdl.any\n%p = irdl.any\n%o = irdl.any\n"
        "irdl.operands(a: %a, b: %b, acc: %c)\n"
        "irdl.attributes {\"input_precision\" = %p, \"out_dtype\" = %o}\nirdl.results(result: %c)",
        "Block matrix product acc + a @ b for MxK and KxN blocks, or a batch of them (BxMxK and BxKxN), "
        "accumulated in the acc type. `input_precision` (tf32, tf32x3, ieee, bf16x3, bf16x6) says how f32 "
        "operands are multiplied (docs/LANGUAGE.md, \"dot precision\"); the frontend writes ieee for other "
        "types. An optional i32 `max_num_imprecise_acc` (Triton's, for float8 operands) is kept for cuda's "
        "tt.dot; without it cuda uses Triton's default.",
    ),
    OpDoc(
        "atomic_rmw",
        "%p = irdl.any\n%v = irdl.any\n%m = irdl.any\n%k = irdl.any\n%s = irdl.any\n%sc = irdl.any\n"
        "irdl.operands(ptr: %p, val: %v, mask: optional %m)\n"
        "irdl.attributes {\"kind\" = %k, \"sem\" = %s, \"scope\" = %sc}\nirdl.results(result: %v)",
        "Atomic read-modify-write (add, fadd, max, min, umax, umin, xchg, and, or, xor) of each "
        "lane's address; returns the old value. Masked-off lanes touch no memory.",
    ),
    OpDoc(
        "atomic_cas",
        "%p = irdl.any\n%v = irdl.any\n%s = irdl.any\n%sc = irdl.any\n"
        "irdl.operands(ptr: %p, cmp: %v, val: %v)\n"
        "irdl.attributes {\"sem\" = %s, \"scope\" = %sc}\nirdl.results(result: %v)",
        "Atomic compare-and-swap: stores `val` where memory equals `cmp`; returns the old value.",
    ),
    OpDoc(
        "print",
        _slots("t", "arg") + "%p = irdl.any\n%h = irdl.any\n" + _slot_operands("t", "arg")
        + "irdl.attributes {\"prefix\" = %p, \"hex\" = %h}",
        f"Device print of up to {MAX_SLOTS} operands (any types), prefixed with `prefix`, once per program.",
    ),
    OpDoc(
        "assert",
        "%v = irdl.any\n%m = irdl.any\nirdl.operands(cond: %v)\nirdl.attributes {\"message\" = %m}",
        "Device assert: every lane of `cond` must be true, or the launch fails with `message`.",
    ),
]

# Ops that reach only backends declaring a capability (`Backend.capabilities(options)`); the frontend
# lowers them away for every other target, so those need no rule for them (see docs/DESIGN.md,
# "Tensor descriptors on targets with TMA").
CAPABILITY_OPS: dict[str, list[OpDoc]] = {
    "tensor_descriptors": [
        OpDoc(
            "make_tensor_descriptor",
            "%p = irdl.any\n%i = irdl.any\n%l = irdl.any\n%d = irdl.any\n%pad = irdl.any\n"
            "irdl.operands(base: %p, shape: variadic %i, strides: variadic %l)\n"
            "irdl.attributes {\"padding\" = %pad}\nirdl.results(result: %d)",
            "A tensor descriptor (`!xb.tensordesc<tensor<BLOCK x T>>`, Triton's `tt.make_tensor_descriptor`) of "
            "the tensor at `base` with `shape` (i32) and `strides` (i64, the last 1), read and written in "
            "blocks; `padding` is \"zero\" or \"nan\" (what out-of-bounds elements read as). With the "
            "attribute `host` (a kernel argument's name), it stands for the host `TensorDescriptor` argument "
            "whose parts are `base`, `shape`, `strides`: a target with TMA takes it as one argument.",
        ),
        OpDoc(
            "descriptor_load",
            "%d = irdl.any\n%i = irdl.any\n%r = irdl.any\n"
            "irdl.operands(desc: %d, offsets: variadic %i)\nirdl.results(result: %r)",
            "The block at `offsets` (i32, one per dimension); out-of-bounds elements read as the padding.",
        ),
        OpDoc(
            "descriptor_store",
            "%d = irdl.any\n%v = irdl.any\n%i = irdl.any\n"
            "irdl.operands(desc: %d, value: %v, offsets: variadic %i)",
            "Store the block at `offsets`; out-of-bounds elements are not written.",
        ),
        OpDoc(
            "descriptor_reduce",
            "%d = irdl.any\n%v = irdl.any\n%i = irdl.any\n%k = irdl.any\n"
            "irdl.operands(desc: %d, value: %v, offsets: variadic %i)\nirdl.attributes {\"kind\" = %k}",
            "Atomically combine the block at `offsets` with `value` (`kind`: add, min, max, and, or, xor; "
            "Triton's `tt.descriptor_reduce`); out-of-bounds elements are untouched.",
        ),
    ],
    # tl.sort/tl.topk on targets with a vector sort unit (ascend: AscendC Sort/Extract); every other
    # target runs the language library's bitonic network (language/standard.py)
    "sort": [
        OpDoc(
            "sort",
            "%t = irdl.any\n%r = irdl.any\n%d = irdl.any\n%k = irdl.any\n"
            "irdl.operands(src: %t)\nirdl.attributes {\"descending\" = %d, \"k\" = %k}\nirdl.results(result: %r)",
            "`src` sorted along its last dimension (ascending, or descending when `descending` is 1), keeping "
            "the first `k` elements of each row (`k` = the row length for a sort; topk: descending, k < n). "
            "A stable sort: equal elements keep their order. The frontend emits it only for float16/float32 "
            "blocks whose rows are a multiple of 32 elements long, at most 4096, with no NaN expected: "
            "elsewhere tl.sort is the library's bitonic network, whose values it equals (the network may "
            "give -0.0 and 0.0, which compare equal, in another order or number).",
        ),
    ],
}

# xb ops without side effects: xb-dce may erase them when their results are unused.
PURE_OPS = frozenset(
    "xb." + n
    for n in (
        "program_id num_programs arange splat broadcast expand_dims reshape trans join split cat gather histogram "
        "ptr_cast int_to_ptr ptr_to_int fp_to_fp "
        "addptr reduce scan dot make_tensor_descriptor sort"
    ).split()
)
ALL_OPS = tuple("xb." + o.name for o in OPS)  # every target lowers or refuses these
NATIVE_OPS = {cap: tuple("xb." + o.name for o in ops) for cap, ops in CAPABILITY_OPS.items()}


def irdl_source() -> str:
    """The IRDL module that defines the dialect."""
    body = []
    for op in OPS + [o for ops in CAPABILITY_OPS.values() for o in ops]:
        inner = "\n    ".join(op.irdl.splitlines())
        body.append(f"  irdl.operation @{op.name} {{\n    {inner}\n  }}")
    ptr = "  irdl.type @ptr {\n    %0 = irdl.any\n    irdl.parameters(pointee: %0)\n  }"
    desc = "  irdl.type @tensordesc {\n    %0 = irdl.any\n    irdl.parameters(block: %0)\n  }"
    return "irdl.dialect @xb {\n" + ptr + "\n" + desc + "\n" + "\n".join(body) + "\n}\n"


_CONTEXT: ir.Context | None = None


def claim_namespaces() -> None:
    """Let MLIR's Python bindings find a module for the xb and ascendc namespaces: `xblock.dialects`.

    The bindings import `mlir.dialects.<namespace>` when they wrap an op of a namespace whose module
    they have not loaded yet, and do not remember an import that failed: for IRDL dialects, which have
    no such module, every `Block.operations` walk and `Value.owner` paid a failed import (0.1 ms each,
    about a third of the ascend backend's compile time). With `xblock.dialects` among the search
    prefixes the lookup finds `xblock.dialects.xb` / `xblock.dialects.ascendc` once and keeps it.
    """
    from mlir._mlir_libs import _mlir

    registry = getattr(_mlir, "globals", None)
    if registry is not None and __package__ not in registry.dialect_search_modules:
        registry.append_dialect_search_prefix(__package__)


def context() -> ir.Context:
    """A process-wide context with the xb dialect and all upstream dialects loaded."""
    global _CONTEXT
    if _CONTEXT is None:
        claim_namespaces()
        ctx = ir.Context()
        with ctx:
            irdl.load_dialects(ir.Module.parse(irdl_source()))
        _CONTEXT = ctx
    return _CONTEXT


# ---------------------------------------------------------------------------------------------
# Types


def ptr_type(pointee: ir.Type) -> ir.Type:
    """`!xb.ptr<pointee>`."""
    return ir.Type.parse(f"!xb.ptr<{pointee}>")


def is_ptr(t: ir.Type) -> bool:
    return str(t).startswith("!xb.ptr<")


def pointee(t: ir.Type) -> ir.Type:
    s = str(t)
    assert s.startswith("!xb.ptr<"), s
    return ir.Type.parse(s[len("!xb.ptr<") : -1])


def tensordesc_type(block: ir.Type) -> ir.Type:
    """`!xb.tensordesc<block>`: a tensor descriptor read and written in blocks of type `block` (whose
    integer elements carry their signedness, `si32`/`ui32`, as Triton's `!tt.tensordesc` does)."""
    return ir.Type.parse(f"!xb.tensordesc<{block}>")


def is_tensordesc(t: ir.Type) -> bool:
    return str(t).startswith("!xb.tensordesc<")


def i32_attr(v: int) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), int(v))


def str_attr(s: str) -> ir.Attribute:
    return ir.StringAttr.get(s)


def _create(name, results, operands=(), attributes=None, regions=0, loc=None, ip=None):
    return ir.Operation.create(
        "xb." + name,
        results=list(results),
        operands=list(operands),
        attributes=attributes or {},
        regions=regions,
        loc=loc,
        ip=ip,
    )


# ---------------------------------------------------------------------------------------------
# Builders: one per op, keyword-only loc/ip as the upstream bindings do.


def program_id(axis: int, *, loc=None, ip=None) -> ir.Value:
    i32 = ir.IntegerType.get_signless(32)
    return _create("program_id", [i32], attributes={"axis": i32_attr(axis)}, loc=loc, ip=ip).result


def num_programs(axis: int, *, loc=None, ip=None) -> ir.Value:
    i32 = ir.IntegerType.get_signless(32)
    return _create("num_programs", [i32], attributes={"axis": i32_attr(axis)}, loc=loc, ip=ip).result


def arange(start: int, end: int, *, loc=None, ip=None) -> ir.Value:
    t = ir.RankedTensorType.get([end - start], ir.IntegerType.get_signless(32))
    attrs = {"start": i32_attr(start), "end": i32_attr(end)}
    return _create("arange", [t], attributes=attrs, loc=loc, ip=ip).result


def splat(src: ir.Value, result_type: ir.Type, *, loc=None, ip=None) -> ir.Value:
    return _create("splat", [result_type], [src], loc=loc, ip=ip).result


def broadcast(src: ir.Value, result_type: ir.Type, *, loc=None, ip=None) -> ir.Value:
    return _create("broadcast", [result_type], [src], loc=loc, ip=ip).result


def expand_dims(src: ir.Value, axis: int, result_type: ir.Type, *, loc=None, ip=None) -> ir.Value:
    return _create("expand_dims", [result_type], [src], {"axis": i32_attr(axis)}, loc=loc, ip=ip).result


def reshape(src: ir.Value, result_type: ir.Type, *, loc=None, ip=None) -> ir.Value:
    return _create("reshape", [result_type], [src], loc=loc, ip=ip).result


def trans(src: ir.Value, order, result_type: ir.Type, *, loc=None, ip=None) -> ir.Value:
    attrs = {"order": ir.DenseI32ArrayAttr.get([int(o) for o in order])}
    return _create("trans", [result_type], [src], attrs, loc=loc, ip=ip).result


def join(lhs: ir.Value, rhs: ir.Value, result_type: ir.Type, *, loc=None, ip=None) -> ir.Value:
    return _create("join", [result_type], [lhs, rhs], loc=loc, ip=ip).result


def split(src: ir.Value, result_type: ir.Type, *, loc=None, ip=None) -> tuple[ir.Value, ir.Value]:
    op = _create("split", [result_type, result_type], [src], loc=loc, ip=ip)
    return op.results[0], op.results[1]


def cat(lhs: ir.Value, rhs: ir.Value, result_type: ir.Type, *, loc=None, ip=None) -> ir.Value:
    return _create("cat", [result_type], [lhs, rhs], loc=loc, ip=ip).result


def gather(src: ir.Value, index: ir.Value, axis: int, result_type: ir.Type, *, loc=None, ip=None) -> ir.Value:
    return _create("gather", [result_type], [src, index], {"axis": i32_attr(axis)}, loc=loc, ip=ip).result


def histogram(src: ir.Value, num_bins: int, result_type: ir.Type, mask=None, *, loc=None, ip=None) -> ir.Value:
    operands = [src] + ([mask] if mask is not None else [])
    return _create("histogram", [result_type], operands, {"num_bins": i32_attr(num_bins)}, loc=loc, ip=ip).result


def ptr_cast(src: ir.Value, result_type: ir.Type, *, loc=None, ip=None) -> ir.Value:
    return _create("ptr_cast", [result_type], [src], loc=loc, ip=ip).result


def int_to_ptr(src: ir.Value, result_type: ir.Type, *, loc=None, ip=None) -> ir.Value:
    return _create("int_to_ptr", [result_type], [src], loc=loc, ip=ip).result


def ptr_to_int(src: ir.Value, result_type: ir.Type, *, loc=None, ip=None) -> ir.Value:
    return _create("ptr_to_int", [result_type], [src], loc=loc, ip=ip).result


def fp_to_fp(src: ir.Value, result_type: ir.Type, rounding: str = "", *, loc=None, ip=None) -> ir.Value:
    return _create("fp_to_fp", [result_type], [src], {"rounding": str_attr(rounding)}, loc=loc, ip=ip).result


def addptr(ptr: ir.Value, offset: ir.Value, *, loc=None, ip=None) -> ir.Value:
    return _create("addptr", [ptr.type], [ptr, offset], loc=loc, ip=ip).result


def _segments(*present: int) -> ir.Attribute:
    return ir.DenseI32ArrayAttr.get(list(present))


def load(ptr, result_type, mask=None, other=None, *, cache="", evict="", volatile=False, loc=None, ip=None):
    operands = [ptr] + ([mask] if mask is not None else []) + ([other] if other is not None else [])
    attrs = {
        "cache": str_attr(cache),
        "evict": str_attr(evict),
        "volatile": ir.BoolAttr.get(bool(volatile)),
        "operandSegmentSizes": _segments(1, int(mask is not None), int(other is not None)),
    }
    return _create("load", [result_type], operands, attrs, loc=loc, ip=ip).result


def store(ptr, value, mask=None, *, cache="", evict="", loc=None, ip=None) -> ir.Operation:
    operands = [ptr, value] + ([mask] if mask is not None else [])
    attrs = {
        "cache": str_attr(cache),
        "evict": str_attr(evict),
        "operandSegmentSizes": _segments(1, 1, int(mask is not None)),
    }
    return _create("store", [], operands, attrs, loc=loc, ip=ip)


def _slot_segments(n: int) -> ir.Attribute:
    if n > MAX_SLOTS:
        raise ValueError(f"at most {MAX_SLOTS} values per reduce, scan or print, got {n}")
    return _segments(*([1] * n + [0] * (MAX_SLOTS - n)))


def reduce(srcs, axis: int, kind: str, result_types, *, loc=None, ip=None) -> ir.Operation:
    """Reduction; for kind == "generic" the caller fills region 0 (the combine function)."""
    attrs = {"axis": i32_attr(axis), "kind": str_attr(kind), "operandSegmentSizes": _slot_segments(len(srcs)),
             "resultSegmentSizes": _slot_segments(len(result_types))}
    return _create("reduce", result_types, srcs, attrs, regions=1, loc=loc, ip=ip)


def scan(srcs, axis: int, kind: str, reverse: bool, result_types, *, loc=None, ip=None) -> ir.Operation:
    attrs = {"axis": i32_attr(axis), "kind": str_attr(kind), "reverse": ir.BoolAttr.get(bool(reverse)),
             "operandSegmentSizes": _slot_segments(len(srcs)),
             "resultSegmentSizes": _slot_segments(len(result_types))}
    return _create("scan", result_types, srcs, attrs, regions=1, loc=loc, ip=ip)


def dot(a, b, acc, *, input_precision="ieee", out_dtype: ir.Type, max_num_imprecise_acc: int | None = None,
        loc=None, ip=None) -> ir.Value:
    attrs = {"input_precision": str_attr(input_precision), "out_dtype": ir.TypeAttr.get(out_dtype)}
    if max_num_imprecise_acc is not None:
        attrs["max_num_imprecise_acc"] = i32_attr(max_num_imprecise_acc)
    return _create("dot", [acc.type], [a, b, acc], attrs, loc=loc, ip=ip).result


def atomic_rmw(kind, ptr, val, mask=None, *, sem="acq_rel", scope="gpu", loc=None, ip=None) -> ir.Value:
    attrs = {
        "kind": str_attr(kind),
        "sem": str_attr(sem),
        "scope": str_attr(scope),
        "operandSegmentSizes": _segments(1, 1, int(mask is not None)),
    }
    operands = [ptr, val] + ([mask] if mask is not None else [])
    return _create("atomic_rmw", [val.type], operands, attrs, loc=loc, ip=ip).result


def atomic_cas(ptr, cmp, val, *, sem="acq_rel", scope="gpu", loc=None, ip=None) -> ir.Value:
    attrs = {"sem": str_attr(sem), "scope": str_attr(scope)}
    return _create("atomic_cas", [val.type], [ptr, cmp, val], attrs, loc=loc, ip=ip).result


def print_(prefix: str, args, hex: bool = False, *, loc=None, ip=None) -> ir.Operation:
    attrs = {"prefix": str_attr(prefix), "hex": ir.BoolAttr.get(bool(hex)),
             "operandSegmentSizes": _slot_segments(len(args))}
    return _create("print", [], list(args), attrs, loc=loc, ip=ip)


def assert_(cond, message: str, *, loc=None, ip=None) -> ir.Operation:
    return _create("assert", [], [cond], {"message": str_attr(message)}, loc=loc, ip=ip)


def make_tensor_descriptor(base, shape, strides, result_type, padding="zero", host=None, *, loc=None, ip=None):
    attrs = {"padding": str_attr(padding), "operandSegmentSizes": _segments(1, len(shape), len(strides))}
    if host is not None:
        attrs["host"] = str_attr(host)
    return _create("make_tensor_descriptor", [result_type], [base, *shape, *strides], attrs, loc=loc, ip=ip).result


def descriptor_load(desc, offsets, result_type, *, loc=None, ip=None) -> ir.Value:
    attrs = {"operandSegmentSizes": _segments(1, len(offsets))}
    return _create("descriptor_load", [result_type], [desc, *offsets], attrs, loc=loc, ip=ip).result


def descriptor_store(desc, value, offsets, *, loc=None, ip=None) -> ir.Operation:
    attrs = {"operandSegmentSizes": _segments(1, 1, len(offsets))}
    return _create("descriptor_store", [], [desc, value, *offsets], attrs, loc=loc, ip=ip)


def sort(src: ir.Value, descending: bool, k: int, result_type: ir.Type, *, loc=None, ip=None) -> ir.Value:
    attrs = {"descending": i32_attr(int(bool(descending))), "k": i32_attr(k)}
    return _create("sort", [result_type], [src], attrs, loc=loc, ip=ip).result


def descriptor_reduce(kind, desc, value, offsets, *, loc=None, ip=None) -> ir.Operation:
    attrs = {"kind": str_attr(kind), "operandSegmentSizes": _segments(1, 1, len(offsets))}
    return _create("descriptor_reduce", [], [desc, value, *offsets], attrs, loc=loc, ip=ip)
