"""Rules for tensor descriptors: Triton's `tt.make_tensor_descriptor`, `tt.descriptor_load`,
`tt.descriptor_store` and `tt.descriptor_reduce`, which Triton's NVIDIA stages lower to TMA on sm_90.

The frontend emits these xb ops only for targets whose capabilities include "tensor_descriptors"
(cuda from sm_90); a host descriptor's `xb.make_tensor_descriptor {host}` is the kernel's
`!tt.tensordesc` argument itself when `tma.host_descriptor_args` retyped it (see `_lower_func`).
"""

from __future__ import annotations

from mlir import ir

from .emit import DESCRIPTOR_REDUCE_KIND, PADDING_OPTION
from .rules import LoweringContext, attr, rule


@rule("xb.make_tensor_descriptor")
def _lower_make_tensor_descriptor(ctx: LoweringContext, op) -> None:
    host = ir.StringAttr(op.attributes["host"]).value if "host" in op.attributes else None
    if host is not None and host in ctx.host_args:  # the kernel argument Triton's launcher fills from the host
        ctx.w.bind(op.result, ctx.w.ref(ctx.host_args[host]))
        return
    padding = attr(op, "padding")
    if padding not in PADDING_OPTION:
        raise ctx.error(f"unknown descriptor padding '{padding}' (\"zero\" or \"nan\")")
    ctx.emit(op, "tt.make_tensor_descriptor", {"padding": f"{PADDING_OPTION[padding]} : i32"})


@rule("xb.descriptor_load")
def _lower_descriptor_load(ctx: LoweringContext, op) -> None:
    ctx.emit(op, "tt.descriptor_load", ctx.w.dialect.memory_attrs("", ""))


@rule("xb.descriptor_store")
def _lower_descriptor_store(ctx: LoweringContext, op) -> None:
    ctx.emit(op, "tt.descriptor_store", {})


@rule("xb.descriptor_reduce")
def _lower_descriptor_reduce(ctx: LoweringContext, op) -> None:
    kind = attr(op, "kind")
    if kind not in DESCRIPTOR_REDUCE_KIND:
        raise ctx.error(f"unknown descriptor atomic kind '{kind}'")
    ctx.emit(op, "tt.descriptor_reduce", {"kind": f"{DESCRIPTOR_REDUCE_KIND[kind]} : i32"})
