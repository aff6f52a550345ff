"""Rules for xb.assert and xb.print on ascend.

A failing `device_assert` is reported through an extra GM argument, `assertStatus`: one int64 per
launched block, set to -1 by the host. The first failure a block sees (its programs run in
increasing order, so it is the block's lowest failing program) stores `(pid << 16) | assert id`
there with a scalar `SetValue` and a cache flush; the program then goes on, as the other lanes do.
The launcher reads the slots back and raises the lowest one as the sim words it. `device_print` has
no documented AscendC counterpart in the reference (no `printf`/`DumpTensor` facts), so it is a
compile-time error rather than something unverifiable.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from ...dialects import ascendc as A
from .context import Splat, Struct, Tile
from .rules import rule

STATUS_ARG = "assertStatus"


def status_buffer(L) -> ir.Value:
    """The GlobalTensor<int64_t> over the `assertStatus` argument (added to the kernel on first use)."""
    if "assert_status" in L.ext:
        return L.ext["assert_status"]
    fn = L.module.body.operations[0]
    entry = fn.regions[0].blocks[0]
    arg = entry.add_argument(A.gm_addr_type(), ir.Location.unknown())
    names = [ir.StringAttr(a).value for a in ir.ArrayAttr(fn.attributes["ascendc.arg_names"])] + [STATUS_ARG]
    fn.attributes["ascendc.arg_names"] = ir.ArrayAttr.get([ir.StringAttr.get(n) for n in names])
    fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get([a.type for a in entry.arguments], []))
    with L.before_grid:
        gm = A.op("set_global_buffer", [arg], A.global_type(L.i64), dtype="i64", name="assertStatusGm")
    L.meta.setdefault("extra_gm_args", []).append(STATUS_ARG)
    L.ext["assert_status"] = gm
    return gm


def _any_false(L, cond: ir.Value) -> ir.Value:
    """An i1 scalar: some lane of the mask block `cond` fails. The bit mask selects 1.0 or 0.0 per
    lane and a ReduceMin over the lanes finds a 0 (vector work, then one scalar read)."""
    from .memory import _reduce_all

    x = L.vmap.get(cond)
    if isinstance(x, Splat):
        return arith.CmpIOp(arith.CmpIPredicate.eq, L.splat_scalar(x), L.cst("i1", 0)).result
    bits = L.tile(cond) if isinstance(x, (Tile, Struct)) or x is None else x
    ones = L.temp("f32", bits.shape)
    A.op("duplicate", [ones.value, L.cst("f32", 1.0), L.c64(ones.count)])
    lanes = L.temp("f32", bits.shape)
    A.op("select", [lanes.value, bits.value, ones.value, L.cst("f32", 0.0), L.c64(lanes.count)],
         mode="VSEL_TENSOR_SCALAR_MODE")
    low, _ = _reduce_all(L, lanes, "min", None)
    return arith.CmpFOp(arith.CmpFPredicate.OLT, low, L.cst("f32", 0.5)).result


@rule("xb.assert")
def _assert(L, op):
    cond = op.operands[0]
    if str(cond.type).startswith("tensor<"):
        fail = _any_false(L, cond)
    else:
        fail = arith.XOrIOp(L.scalar(cond), L.cst("i1", 1)).result
    asserts = L.meta.setdefault("asserts", [])
    aid = len(asserts)
    asserts.append({"message": ir.StringAttr(op.attributes["message"]).value, "file": L.loc[0],
                    "line": L.loc[1]})
    gm = status_buffer(L)
    fail.owner.attributes["name"] = ir.StringAttr.get("assertFailed")
    outer = scf.IfOp(fail, [], has_else=False)
    with ir.InsertionPoint(outer.then_block):
        slot = L.at(gm, A.op("block_idx", [], L.i64))
        seen = A.op("get_value", [slot, L.c64(0)], L.i64, name="firstFailure")
        first = arith.CmpIOp(arith.CmpIPredicate.slt, seen, L.c64(0)).result
        inner = scf.IfOp(first, [], has_else=False)
        with ir.InsertionPoint(inner.then_block):
            key = arith.OrIOp(arith.ShLIOp(L.pid, L.c64(16)).result, L.c64(aid)).result
            A.op("set_value", [slot, L.c64(0), key])
            A.op("dcci", [slot])
            scf.YieldOp([])
        scf.YieldOp([])


@rule("xb.print")
def _print(L, op):
    raise L.error("ascend: device_print is not supported on ascend (the AscendC reference xblock follows "
                  "documents no printf/DumpTensor); run the kernel with target=\"sim\" to print")


def failed_assert(metadata: dict, status, grid) -> str | None:
    """The sim's message for the lowest failing program recorded in the status slots, or None."""
    keys = [int(k) for k in status if int(k) >= 0]
    if not keys:
        return None
    key = min(keys)
    lin, aid = key >> 16, key & 0xFFFF
    g0, g1, _ = grid
    pid = (lin % g0, lin // g0 % g1, lin // (g0 * g1))
    a = metadata["asserts"][aid]
    return f"{a['file']}:{a['line']}: device_assert failed in program {pid}: {a['message']}"
