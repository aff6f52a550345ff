"""The rule of xb.assert on ascend (a device_assert), and why xb.print is refused.

A failing `device_assert` is reported through an extra GM argument, `assertStatus`: one 64-byte
slot (STATUS_SLOT int64s, a whole DataCache line, since aclrtMalloc aligns buffers to 64 bytes) per
launched block, set to -1 by the host. The first failure a block sees (its programs run in
increasing order, so it is the block's lowest failing program) stores `(pid << 16) | assert id`
in the slot's first int64 with a scalar `SetValue` and a cache flush: the block owns the whole line,
so the write-back cannot overwrite another core's slot. The program then goes on, as the other
lanes do.
The launcher reads the slots back and raises the lowest one as the sim words it
(`launch.failed_assert`). `device_print` has no documented AscendC counterpart in the reference (no
`printf`/`DumpTensor` facts), so xb.print is in `rules.UNSUPPORTED`: a compile-time error rather
than something unverifiable.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from .....dialects import ascendc as A
from ...options import STATUS_SLOT
from ...values import Splat, Struct, Tile
from ...vector.tiles import reduce_all
from ..rules import rule

STATUS_ARG = "assertStatus"


def status_buffer(ctx) -> ir.Value:
    """The GlobalTensor<int64_t> over the `assertStatus` argument (added to the kernel on first use)."""
    if ctx.ext.assert_status is not None:
        return ctx.ext.assert_status
    fn = ctx.module.body.operations[0]
    entry = fn.regions[0].blocks[0]
    arg = entry.add_argument(A.gm_addr_type(), ir.Location.unknown())
    names = [ir.StringAttr(a).value for a in ir.ArrayAttr(fn.attributes["ascendc.arg_names"])] + [STATUS_ARG]
    fn.attributes["ascendc.arg_names"] = ir.ArrayAttr.get([ir.StringAttr.get(n) for n in names])
    fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get([a.type for a in entry.arguments], []))
    with ctx.before_grid:
        gm = A.op("set_global_buffer", [arg], A.global_type(ctx.i64), dtype="i64", name="assertStatusGm")
    ctx.meta.setdefault("extra_gm_args", []).append(STATUS_ARG)
    ctx.ext.assert_status = gm
    return gm


def _any_false(ctx, cond: ir.Value) -> ir.Value:
    """An i1 scalar: some lane of the mask block `cond` fails. The bit mask selects 1.0 or 0.0 per
    lane and a ReduceMin over the lanes finds a 0 (vector work, then one scalar read)."""
    x = ctx.vmap.get(cond)
    if isinstance(x, Splat):
        return arith.CmpIOp(arith.CmpIPredicate.eq, ctx.splat_scalar(x), ctx.cst("i1", 0)).result
    bits = ctx.tile(cond) if isinstance(x, (Tile, Struct)) or x is None else x
    ones = ctx.temp("f32", bits.shape)
    A.op("duplicate", [ones.value, ctx.cst("f32", 1.0), ctx.c64(ones.count)])
    lanes = ctx.temp("f32", bits.shape)
    A.op("select", [lanes.value, bits.value, ones.value, ctx.cst("f32", 0.0), ctx.c64(lanes.count)],
         mode="VSEL_TENSOR_SCALAR_MODE")
    low, _ = reduce_all(ctx, lanes, "min", None)
    return arith.CmpFOp(arith.CmpFPredicate.OLT, low, ctx.cst("f32", 0.5)).result


@rule("xb.assert")
def _lower_assert(ctx, op):
    if "xb.assume" in op.attributes:  # tl.assume: a hint, not checked on the NPU (the sim checks it)
        return
    cond = op.operands[0]
    if str(cond.type).startswith("tensor<"):
        fail = _any_false(ctx, cond)
    else:
        fail = arith.XOrIOp(ctx.scalar(cond), ctx.cst("i1", 1)).result
    asserts = ctx.meta.setdefault("asserts", [])
    aid = len(asserts)
    asserts.append({"message": ir.StringAttr(op.attributes["message"]).value, "file": ctx.loc[0],
                    "line": ctx.loc[1]})
    gm = status_buffer(ctx)
    fail.owner.attributes["name"] = ir.StringAttr.get("assertFailed")
    outer = scf.IfOp(fail, [], has_else=False)
    with ir.InsertionPoint(outer.then_block):
        slot = ctx.at(gm, ctx.mul(A.op("block_idx", [], ctx.i64), ctx.c64(STATUS_SLOT)))
        seen = A.op("get_value", [slot, ctx.c64(0)], ctx.i64, name="firstFailure")
        first = arith.CmpIOp(arith.CmpIPredicate.slt, seen, ctx.c64(0)).result
        inner = scf.IfOp(first, [], has_else=False)
        with ir.InsertionPoint(inner.then_block):
            key = arith.OrIOp(arith.ShLIOp(ctx.pid, ctx.c64(16)).result, ctx.c64(aid)).result
            A.op("set_value", [slot, ctx.c64(0), key])
            A.op("dcci", [slot])
            scf.YieldOp([])
        scf.YieldOp([])
