"""Mixed AIC/AIV kernels: a dot's epilogue that Fixpipe cannot do runs on the vector core.

The AIC writes the fp32 accumulator tile to its slot of a GM `workspace` (an extra kernel argument
of `workspace_bytes` per launched block, recorded in the metadata) and sets a cross-core flag; the
AIV waits for it, copies the tile to UB, hands the slot back with another flag, and the rest of the
program instance is lowered by the vector rules inside `if ASCEND_IS_AIV { ... }`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir
from mlir.dialects import arith, scf

from ...dialects import ascendc as A
from .context import Tile
from .driver import source_loc

FLAG_TILE_READY, FLAG_WS_FREE = 0, 1  # AIC -> AIV: a tile is in the workspace; AIV -> AIC: it was read


@dataclass
class CubeState:
    """What the Cube rules keep per lowering (in `Lowering.ext["cube"]`)."""

    queues: dict | None = None  # TPosition -> queue name, declared once per kernel
    kernel_type: object = None  # the ascendc.kernel_type op
    workspace: object = None  # the GlobalTensor<float> over the `workspace` argument
    tail_wait: bool = False  # the AIC's last "workspace free" wait after the grid loop is emitted
    lone: set = field(default_factory=set)  # dots outside loops, lowered at the dot
    out: object = None  # the xb.store that the dot being lowered reaches (cube._final_store)


def state(L) -> CubeState:
    return L.ext.setdefault("cube", CubeState())


def workspace(L, plan):
    """The GlobalTensor<float> over the extra `workspace` kernel argument (one tile slot per block)."""
    st = state(L)
    if st.workspace is not None:
        return st.workspace
    fn = L.module.body.operations[0]
    entry = fn.regions[0].blocks[0]
    arg = entry.add_argument(A.gm_addr_type(), ir.Location.unknown())
    names = [ir.StringAttr(a).value for a in ir.ArrayAttr(fn.attributes["ascendc.arg_names"])] + ["workspace"]
    fn.attributes["ascendc.arg_names"] = ir.ArrayAttr.get([ir.StringAttr.get(n) for n in names])
    fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get([a.type for a in entry.arguments], []))
    with L.before_grid:
        st.workspace = A.op("set_global_buffer", [arg], A.global_type(ir.F32Type.get()), dtype="f32",
                            name="workspaceGm")
    L.meta["workspace_bytes"] = plan.block_m * plan.block_n * 4  # per block of the launch
    L.meta.setdefault("extra_gm_args", []).append("workspace")
    return st.workspace


def to_workspace(L, c1, plan) -> None:
    """The fp32 tile to this block's workspace slot, once the vector core has read the previous one."""
    block = A.op("block_idx", [], L.i64)
    again = arith.CmpIOp(arith.CmpIPredicate.ne, L.pid, block).result
    wait = scf.IfOp(again, [], has_else=False)
    with ir.InsertionPoint(wait.then_block):
        A.op("cross_core_wait_flag", [L.c64(FLAG_WS_FREE)])
        scf.YieldOp([])
    ws = L.at(workspace(L, plan), L.mul(block, L.c64(plan.block_m * plan.block_n)))
    A.op("fixpipe", [ws, c1, L.c64(plan.block_n), L.c64(plan.block_m), L.c64(plan.base_m),
                     L.c64(plan.block_n)], quant="NoQuant", relu=False)


def tile_ready(L) -> None:
    A.op("cross_core_set_flag", [L.c64(FLAG_TILE_READY)], mode=2, pipe="PIPE_FIX")


def core_if(core: str):
    cond = A.op("core_is", [], ir.IntegerType.get_signless(1), core=core)
    return scf.IfOp(cond, [], has_else=False)


def emit_mixed(L, loop, emit_aic, plan, acc_result):
    """`if ASCEND_IS_AIC { K loop; Fixpipe to the workspace }`, then the rest of the program on the AIV.

    `loop` is the K loop (or the lone dot): everything after it in its block goes in the AIV section.
    """
    aic = core_if("AIC")
    with ir.InsertionPoint(aic.then_block):
        emit_aic()
        scf.YieldOp([])
    _after_grid_wait(L)
    aiv = core_if("AIV")
    with ir.InsertionPoint(aiv.then_block):
        A.op("cross_core_wait_flag", [L.c64(FLAG_TILE_READY)])
        shape = (plan.block_m, plan.block_n)
        nbytes = plan.block_m * plan.block_n * 4
        q = L.queue("VECIN", -(-nbytes // 256) * 256, "acc")
        local = A.local_type(ir.F32Type.get())
        t = A.op("alloc_tensor", [], local, queue=q.name, name="accLocal")
        ws = L.at(workspace(L, plan), L.mul(A.op("block_idx", [], L.i64), L.c64(plan.block_m * plan.block_n)))
        A.op("data_copy", [t, ws, L.c64(plan.block_m * plan.block_n)])
        A.op("enque", [t], queue=q.name)
        acc = A.op("deque", [], local, queue=q.name, name="acc")
        A.op("cross_core_set_flag", [L.c64(FLAG_WS_FREE)], mode=2, pipe="PIPE_MTE2")
        tile = Tile(acc, "f32", shape, -(-nbytes // 256) * 256, "vecin", q, line=L.loc[1])
        L.vmap[acc_result] = tile
        anchor = loop.operation
        block_ops = [o.operation for o in anchor.block.operations]
        rest = [o for o in block_ops[block_ops.index(anchor) + 1:] if o.name != "func.return"]
        _lower_rest(L, anchor.block, rest)
        L.release(tile)  # its last use is in this section; the walk's later drop must not free it outside
        L.vmap[acc_result] = None
        scf.YieldOp([])


def _after_grid_wait(L):
    """After the grid loop the AIC takes back the last 'workspace free' flag of its last program."""
    st = state(L)
    if st.tail_wait:
        return
    st.tail_wait = True
    with ir.InsertionPoint.after(L.grid.operation):
        aic = core_if("AIC")
        with ir.InsertionPoint(aic.then_block):
            any_prog = arith.CmpIOp(arith.CmpIPredicate.slt, A.op("block_idx", [], L.i64), L.num_programs).result
            w = scf.IfOp(any_prog, [], has_else=False)
            with ir.InsertionPoint(w.then_block):
                A.op("cross_core_wait_flag", [L.c64(FLAG_WS_FREE)])
                scf.YieldOp([])
            scf.YieldOp([])


def _lower_rest(L, block, ops) -> None:
    """Lower the rest of the program (the epilogue and its store) here, and keep the walk off it."""
    dying = L.last_uses(block, ops)
    for i, op in enumerate(ops):
        L.loc = source_loc(op.location)
        with ir.Location.file(L.loc[0] or "?", L.loc[1], L.loc[2]):
            L.lower_op(op)
            for t in L.temps:
                L.release(t)
            L.temps = []
            for v in dying.get(i, ()):
                L.drop(v)
            for r in op.results:
                if not any(True for _ in r.uses):
                    L.drop(r)
        L.absorb([op])
