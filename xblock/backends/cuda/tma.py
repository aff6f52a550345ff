"""Host tensor descriptors on Triton's TMA path: which kernel arguments become one `!tt.tensordesc`.

Triton 3.6 passes a host `TensorDescriptor` to a kernel as a `!tt.tensordesc<...>` argument followed
by its shape (i32) and strides (i64): the launcher builds the CUtensorMap on the host. xblock's
runtime passes the same parts (base, shape, strides), so the cuda backend retypes the base argument
and the launcher (`launch.py`) regroups the parts into one descriptor object. A helper of the rules:
it registers none.
"""

from __future__ import annotations

from mlir import ir

from ...dialects.locations import kernel_of

MAKE = "xb.make_tensor_descriptor"


def _is_host_make(op) -> bool:
    return op.name == MAKE and "host" in op.attributes


def host_descriptor_args(kernel) -> dict[int, str]:
    """{position of a base argument: the xb type of its descriptor} for the host descriptors the kernel
    takes as Triton's tensordesc arguments: those whose base argument only feeds their host
    `xb.make_tensor_descriptor`s (a gather through one reads the base as a pointer, so it stays one)."""
    kernel = kernel.operation
    if "xb.arg_names" not in kernel.attributes:
        return {}
    names = [ir.StringAttr(a).value for a in kernel.attributes["xb.arg_names"]]
    entry = kernel.regions[0].blocks[0]
    found: dict[int, str] = {}

    def visit(op):
        if _is_host_make(op):
            found.setdefault(names.index(ir.StringAttr(op.attributes["host"]).value), str(op.results[0].type))
        return ir.WalkResult.ADVANCE

    kernel.walk(visit)
    out = {}
    for i, t in found.items():
        uses = list(entry.arguments[i].uses)
        if all(_is_host_make(u.owner) and u.operand_number == 0 for u in uses):
            out[i] = t
    return out


def launch_descriptors(module, arg_types: list) -> list[dict]:
    """What the launcher needs to pass each host descriptor to Triton's launcher: the position of its
    base among the runtime arguments, its rank, padding and Triton's signature (`tensordesc<fp16[64, 64]>`)."""
    kernel = kernel_of(module)
    out = []
    for i, t in sorted(host_descriptor_args(kernel).items()):
        block = ir.RankedTensorType(ir.Type.parse(t[len("!xb.tensordesc<"):-1]))
        shape = list(block.shape)
        out.append({"index": i, "ndim": len(shape), "padding": _padding(kernel, i),
                    "signature": f"tensordesc<{arg_types[i].lstrip('*')}{shape}>"})
    return out


def _padding(kernel, index: int) -> str:
    entry = kernel.operation.regions[0].blocks[0]
    for u in entry.arguments[index].uses:
        return ir.StringAttr(u.owner.attributes["padding"]).value
    return "zero"
