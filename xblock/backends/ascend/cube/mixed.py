"""Mixed AIC/AIV kernels: a dot's epilogue that Fixpipe cannot do runs on the vector core.

The AIC writes the fp32 accumulator tile to its slot of a GM `workspace` (an extra kernel argument
of `workspace_bytes` per launched block, recorded in the metadata) and sets a cross-core flag; the
AIV waits for it, copies the tile to UB, hands the slot back with another flag, and the rest of the
program instance is lowered by the vector rules inside `if ASCEND_IS_AIV { ... }`.

The hand-off is in the narrowest type the epilogue allows: when every use of the accumulator (or
of each chunk of it) is first converted to f16 or bf16 (`acc.to(tl.float16)`), Fixpipe converts
it on its way to the workspace (round to nearest even, as the conversion does) and the vector core
reads half the bytes.

An epilogue that `xb-strip-mine` split into row chunks (the K loop kept whole: pipeline.py) reads
its chunk of the tile from the workspace (`tensor.extract_slice` of the accumulator, `lower_slice`)
and hands the slot back after the last chunk. When every chunk loop only stores (no value carried
from chunk to chunk) the kernel is MIX_AIC_1_2: both vector cores of the AI Core wait for the tile,
each takes every other chunk (`GetSubBlockIdx()`), and the AIC takes the slot back once both have
set the flag (mode 2 counts an AIV flag when both AIVs have set it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir
from mlir.dialects import arith, scf

from ....dialects import ascendc as A
from ..builders import Builders
from ..options import MIX_AIC_1_2
from ..plan.plan import VectorCoreNeeded
from ..values import SIZE, Tile, elem_of, round_up, shape_of
from .match import users_of
from .sections import section_kernel

# Fixpipe's conversion of the L0C accumulator on its way out (asc-devkit L0C到GM数据搬运（Fixpipe）.md, Atlas A2:
# float -> half/bfloat16 round to nearest even; float -> float and int32 -> int32 as they are)
QUANT = {("f32", "f16"): "F322F16", ("f32", "bf16"): "F322BF16", ("f32", "f32"): "NoQuant", ("i32", "i32"): "NoQuant"}

FLAG_TILE_READY, FLAG_WS_FREE = 0, 1  # AIC -> AIV: a tile is in the workspace; AIV -> AIC: it was read


@dataclass
class CubeState:
    """What the Cube rules keep per lowering (in `ctx.ext.cube`)."""

    queues: dict | None = None  # TPosition -> queue name, declared once per kernel
    queue_decls: dict = field(default_factory=dict)  # TPosition -> its ascendc.tque op (sizes widened per dot)
    kernel_type: object = None  # the ascendc.kernel_type op
    workspace: object = None  # the GlobalTensor<float> over the `workspace` argument
    tail_wait: bool = False  # the AIC's last "workspace free" wait after the grid loop is emitted
    lone: set = field(default_factory=set)  # dots outside loops, lowered at the dot
    batch: object = None  # the loop index over the matrices of a batched dot being lowered (cube_batch.py)
    out: object = None  # the xb.store that the dot being lowered reaches (cube_match.final_store)
    handoff: object = None  # cube_handoff.Handoffs when the kernel hands dots to the vector core
    ws_arg: object = None  # the `workspace` kernel argument
    ws_views: dict = field(default_factory=dict)  # elem -> GlobalTensor<elem> over it
    narrow: str | None = None  # f16/bf16: the epilogue converts the accumulator first, Fixpipe does it
    prologue_sectioned: bool = False  # the after-walk hook that puts vector work in AIV sections is set
    join: int = 1  # programs a core runs together (dot.py `_emit_joined`): workspace slots per block
    slot: int = 0  # the slot of the program whose epilogue is being lowered
    group: object = None  # JoinedGroup of a joined kernel (the core's range of programs, each one's values)
    row_groups: tuple | None = None  # (group index, groups) of a row-grouped kernel's instance (cube/rowsplit.py)


@dataclass
class InWorkspace:
    """The value of a dot's result on the vector core while its chunks are read from the workspace."""

    plan: object
    elem: str


def state(ctx) -> CubeState:
    if ctx.ext.cube is None:
        ctx.ext.cube = CubeState()
    return ctx.ext.cube


def workspace(ctx, plan, elem: str = "f32"):
    """The GlobalTensor<elem> over the extra `workspace` kernel argument (one tile slot per block, `join` of
    them in a joined kernel; 4 bytes an element, the accumulator's size, whatever type Fixpipe writes there)."""
    return workspace_view(ctx, elem, plan.block_m * plan.block_n * 4 * state(ctx).join)


def slot_start(ctx, plan, block=None):
    """The element offset of this block's workspace slot (of the program `state.slot` in a joined kernel)."""
    st = state(ctx)
    tile = plan.block_m * plan.block_n
    block = A.op("block_idx", [], ctx.i64) if block is None else block
    if st.join == 1:
        return ctx.mul(block, ctx.c64(tile))
    return ctx.add(ctx.mul(block, ctx.c64(tile * st.join)), ctx.c64(tile * st.slot))


def workspace_view(ctx, elem: str, per_block: int):
    """A GlobalTensor<elem> over the extra `workspace` kernel argument of `per_block` bytes per block
    of the launch (added on first use)."""
    st = state(ctx)
    if elem in st.ws_views:
        return st.ws_views[elem]
    if st.ws_arg is None:
        fn = ctx.module.body.operations[0]
        entry = fn.regions[0].blocks[0]
        st.ws_arg = entry.add_argument(A.gm_addr_type(), ir.Location.unknown())
        names = [ir.StringAttr(a).value for a in ir.ArrayAttr(fn.attributes["ascendc.arg_names"])] + ["workspace"]
        fn.attributes["ascendc.arg_names"] = ir.ArrayAttr.get([ir.StringAttr.get(n) for n in names])
        fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get([a.type for a in entry.arguments], []))
        ctx.meta["workspace_bytes"] = per_block  # per block of the launch
        ctx.meta.setdefault("extra_gm_args", []).append("workspace")
    name = "workspaceGm" if elem == "f32" else f"workspace{elem.capitalize()}Gm"
    with ctx.before_grid:
        st.ws_views[elem] = A.op("set_global_buffer", [st.ws_arg], A.global_type(ir.Type.parse(elem)), dtype=elem,
                                 name=name)
    return st.ws_views[elem]


def to_workspace(ctx, c1, plan, elem: str) -> None:
    """The accumulator tile to this block's workspace slot as `elem` (the dot's result type: Fixpipe
    rounds fp32 to f16/bf16 on the way), once the vector core has read the previous one."""
    block = A.op("block_idx", [], ctx.i64)
    st = state(ctx)
    # a joined kernel's group g of this core reuses the slots of its group g - 1 (the grid loop starts at the
    # core's first program, dot.py _group)
    first = block if st.join == 1 else st.group.start
    again = arith.CmpIOp(arith.CmpIPredicate.ne, ctx.pid, first).result
    wait = scf.IfOp(again, [], has_else=False)
    with ir.InsertionPoint(wait.then_block):
        A.op("cross_core_wait_flag", [ctx.c64(FLAG_WS_FREE)])
        scf.YieldOp([])
    elem = state(ctx).narrow or elem
    ws = ctx.at(workspace(ctx, plan, elem), slot_start(ctx, plan, block))
    A.op("fixpipe", [ws, c1, ctx.c64(plan.block_n), ctx.c64(plan.block_m), ctx.c64(plan.base_m),
                     ctx.c64(plan.block_n)], quant=QUANT[(plan.acc_dtype, elem)], relu=False)


def tile_ready(ctx) -> None:
    A.op("cross_core_set_flag", [ctx.c64(FLAG_TILE_READY)], mode=2, pipe="PIPE_FIX")


def core_if(core: str):
    cond = A.op("core_is", [], ir.IntegerType.get_signless(1), core=core)
    return scf.IfOp(cond, [], has_else=False)


def emit_mixed(ctx, loop, emit_aic, plan, acc_result):
    """`if ASCEND_IS_AIC { K loop; Fixpipe to the workspace }`, then the rest of the program on the AIV.

    `loop` is the K loop (or the lone dot): everything after it in its block goes in the AIV section.
    """
    anchor_block = loop.operation.block
    last = list(anchor_block.operations)[-1].operation
    if last.name not in ("func.return",):  # the K loop sits in another loop's or an if's body
        raise ctx.error("this dot's epilogue runs on the vector core after the Cube (a mixed kernel), which "
                        "xblock builds only at the kernel's top level; here the K loop is inside another loop "
                        "or an `if` (a persistent tile loop): store the accumulator whole (a Fixpipe epilogue) "
                        "or give each tile its own program", loop)
    anchor = loop.operation
    block_ops = [o.operation for o in anchor.block.operations]
    rest = [o for o in block_ops[block_ops.index(anchor) + 1:] if o.name != "func.return"]
    later = next((o for o in walk_ops(rest) if o.name == "xb.dot"), None)
    if later is not None:
        # the rest of the program goes whole in the AIV section, which cannot hold the Cube's copies and
        # Mmad of a later dot: the planner hands every dot of the kernel to the vector core instead
        raise VectorCoreNeeded(ctx.error(f"this dot follows the dot of line {ctx.loc[1]}, whose epilogue runs on the "
                                         "vector core (a mixed kernel, its vector section taking the rest of the "
                                         "program), and the Cube cannot run inside that section; the kernel does not "
                                         "lower with every dot handed to the vector core either", later),
                               why="dot_store")
    sliced = _sliced(rest, acc_result)
    st = state(ctx)
    st.narrow = _narrow(acc_result, sliced)
    if not st.prologue_sectioned:
        # vector work the lowering put before the grid loop (index tiles, resident loads) runs on the
        # AIVs only: the AIC has no unified buffer
        st.prologue_sectioned = True
        ctx.ext.after_walk.append(lambda c: section_kernel(c, state(c).queues.values()))
    aic = core_if("AIC")
    with ir.InsertionPoint(aic.then_block):
        emit_aic()
        scf.YieldOp([])
    _after_grid_wait(ctx)
    aiv = core_if("AIV")
    # one epilogue, or in a joined kernel one per program of the group that exists (dot.py _emit_joined),
    # each reading its own workspace slot with its own lowered values
    programs = st.group.programs if st.group is not None else [(ctx.vmap, None)]
    keep = ctx.vmap
    with ir.InsertionPoint(aiv.then_block):
        for j, (vmap, active) in enumerate(programs):
            ctx.vmap, st.slot = vmap, j
            gate = scf.IfOp(active, [], has_else=False) if active is not None else None
            try:
                with ir.InsertionPoint(gate.then_block) if gate is not None else _here():
                    if sliced:
                        _emit_chunked(ctx, rest, plan, acc_result, j == len(programs) - 1)
                    else:
                        _emit_whole(ctx, anchor, rest, plan, acc_result, j == len(programs) - 1)
                    if gate is not None:
                        scf.YieldOp([])
            finally:
                ctx.vmap, st.slot = keep, 0
        scf.YieldOp([])


def _here():
    return ir.InsertionPoint(ir.InsertionPoint.current.block)


def _emit_whole(ctx, anchor, rest, plan, acc_result, last: bool) -> None:
    """The AIV section of an epilogue that reads the whole accumulator tile: wait for it, copy it to UB, hand
    the slot back, lower the rest of the program (`last`: the walk skips it from then on)."""
    st = state(ctx)
    A.op("cross_core_wait_flag", [ctx.c64(FLAG_TILE_READY)])
    shape = (plan.block_m, plan.block_n)
    elem = st.narrow or elem_of(acc_result.type)
    count = round_up(plan.block_m * plan.block_n, 32 // SIZE[elem])  # whole 32-byte blocks (the slot has room)
    nbytes = count * SIZE[elem]
    q = ctx.queue("VECIN", -(-nbytes // 256) * 256, "acc")
    local = A.local_type(ir.Type.parse(elem))
    t = A.op("alloc_tensor", [], local, queue=q.name, name="accLocal")
    ws = ctx.at(workspace(ctx, plan, elem), slot_start(ctx, plan))
    A.op("data_copy", [t, ws, ctx.c64(count)])
    A.op("enque", [t], queue=q.name)
    acc = A.op("deque", [], local, queue=q.name, name="acc")
    A.op("cross_core_set_flag", [ctx.c64(FLAG_WS_FREE)], mode=2, pipe="PIPE_MTE2")
    tile = Tile(acc, elem, shape, -(-nbytes // 256) * 256, "vecin", q, line=ctx.loc[1])
    _bind_converted(ctx, acc_result, tile)
    _lower_rest(ctx, anchor.block, rest, last)
    ctx.release(tile)  # its last use is in this section; the walk's later drop must not free it outside
    ctx.vmap[acc_result] = None


def _narrow(acc_result, sliced: bool) -> str | None:
    """f16/bf16 when every use of the accumulator (of each chunk of it) converts it to that type."""
    uses = [s for u in users_of(acc_result) for s in users_of(u.results[0])] if sliced else users_of(acc_result)
    kinds = {elem_of(u.results[0].type) if u.name == "arith.truncf" else None for u in uses}
    return kinds.pop() if len(kinds) == 1 and kinds <= {"f16", "bf16"} else None


def _bind_converted(ctx, v, tile) -> None:
    """`v` (an accumulator or its chunk) now in UB as `tile`; when the hand-off was narrowed, `tile`
    already holds its conversion: the convert ops take it and are skipped by the walk."""
    if state(ctx).narrow is None:
        ctx.vmap[v] = tile
        return
    converts = users_of(v)
    ctx.vmap[v] = None
    tile.refs = len(converts)
    for u in converts:
        ctx.vmap[u.results[0]] = tile
    ctx.absorb(converts)


def walk_ops(ops):
    """Every op of `ops` and of their regions, nested ones included."""
    for op in ops:
        stack = [op]
        while stack:
            o = stack.pop()
            yield o
            for region in o.regions:
                for b in region.blocks:
                    stack.extend(x.operation for x in b.operations)


def _sliced(rest, acc_result) -> bool:
    return any(o.name == "tensor.extract_slice" and o.operands[0] == acc_result for o in walk_ops(rest))


SIDE_EFFECTS = ("xb.store", "xb.atomic_rmw", "xb.atomic_cas", "xb.print", "xb.assert")


def _shared(rest) -> bool:
    """Whether the vector cores can share out the chunk loops: each only stores (carries nothing from
    chunk to chunk) and nothing outside them has a side effect."""
    chunks = [o for o in rest if o.name == "scf.for" and "xb.chunks" in o.attributes]
    if not chunks or any(len(o.operands) > 3 for o in chunks):
        return False
    outside = [o for o in walk_ops([o for o in rest if o not in chunks])]
    return not any(o.name in SIDE_EFFECTS for o in outside)


def _emit_chunked(ctx, rest, plan, acc_result, last: bool = True) -> None:
    """The AIV section of an epilogue computed in row chunks (module docstring), at the insertion point."""
    st = state(ctx)
    both = ctx.plan.vector_cores > 1 and _shared(rest)
    if both:
        mix_1_2(ctx)
        ctx.ext.share_loop = _every_other
    ctx.meta["cube"][-1]["vector_cores"] = 2 if both else 1
    A.op("cross_core_wait_flag", [ctx.c64(FLAG_TILE_READY)])
    ctx.vmap[acc_result] = InWorkspace(plan, st.narrow or elem_of(acc_result.type))
    try:
        _lower_rest(ctx, rest[0].block, rest, last)
    finally:
        ctx.ext.share_loop = None
    ctx.vmap[acc_result] = None
    A.op("cross_core_set_flag", [ctx.c64(FLAG_WS_FREE)], mode=2, pipe="PIPE_MTE2")


def mix_1_2(ctx) -> None:
    """The kernel is MIX_AIC_1_2 (the Cube queues' declaration made it MIX_AIC_1_1): the AIC and both AIVs."""
    state(ctx).kernel_type.attributes["type"] = ir.StringAttr.get(MIX_AIC_1_2)
    ctx.meta["kernel_type"] = MIX_AIC_1_2


def _every_other(op, lb, step):
    """The bounds of a chunk loop on one of two vector cores: chunks sub, sub + 2, ..."""
    if "xb.chunks" not in op.attributes:
        return lb, step
    return every_other(lb, step, A.op("sub_block_idx", [], ir.IntegerType.get_signless(64)))


def every_other(lb, step, sub):
    """The bounds of a chunk loop from lb by step that runs every other chunk from chunk `sub` (an i64)."""
    if lb.type != sub.type:
        sub = arith.TruncIOp(lb.type, sub).result
    lb0, step0 = Builders.const_of(lb), Builders.const_of(step)
    first = sub if lb0 == 0 else arith.AddIOp(lb, sub).result
    twice = arith.ConstantOp(step.type, 2 * step0).result if step0 is not None else \
        arith.MulIOp(step, arith.ConstantOp(step.type, 2).result).result
    return first, twice


def lower_slice(ctx, op) -> None:
    """Rows of a dot's result, which the AIC left in this block's workspace slot: DataCopy them to UB."""
    src = ctx.vmap.get(op.operands[0])
    if not isinstance(src, InWorkspace):
        raise ctx.error("internal: a chunk of a block that is not a dot's result in the workspace")
    plan, elem = src.plan, src.elem
    rows, cols = shape_of(op.result.type)
    if cols != plan.block_n or (rows * cols * SIZE[elem]) % 32:
        raise ctx.error(f"a chunk of {rows} x {cols} {elem} of the dot's result is not whole 32-byte blocks of "
                        "its rows in the workspace")
    at = op.operands[1].owner
    row0 = ctx.scalar(at.operands[0]) if getattr(at, "name", "") == "arith.index_cast" else ctx.scalar(op.operands[1])
    row0 = arith.ExtSIOp(ctx.i64, row0).result if row0.type != ctx.i64 else row0
    nbytes = -(-rows * cols * SIZE[elem] // 256) * 256
    q = ctx.queue("VECIN", nbytes, "acc")
    local = A.local_type(ir.Type.parse(elem))
    t = A.op("alloc_tensor", [], local, queue=q.name, name="accLocal")
    ws = ctx.at(workspace(ctx, plan, elem), ctx.add(slot_start(ctx, plan), ctx.mul(row0, ctx.c64(cols))))
    A.op("data_copy", [t, ws, ctx.c64(rows * cols)])
    A.op("enque", [t], queue=q.name)
    acc = A.op("deque", [], local, queue=q.name, name="acc")
    _bind_converted(ctx, op.result, Tile(acc, elem, (rows, cols), nbytes, "vecin", q, line=ctx.loc[1]))


def _after_grid_wait(ctx):
    """After the grid loop the AIC takes back the last 'workspace free' flag of its last program."""
    st = state(ctx)
    if st.tail_wait:
        return
    st.tail_wait = True
    with ir.InsertionPoint.after(ctx.grid.operation):
        aic = core_if("AIC")
        with ir.InsertionPoint(aic.then_block):
            block = A.op("block_idx", [], ctx.i64)
            if st.join > 1:
                # a joined kernel: the slots its first group used (`join` programs, fewer when the core has fewer)
                count = ctx.smin(st.group.count, ctx.c64(st.join))
                w = ctx.for_range(ctx.c64(0), ctx.named(count, "slotsUsed"))
                with ir.InsertionPoint(w.body):
                    A.op("cross_core_wait_flag", [ctx.c64(FLAG_WS_FREE)])
                    scf.YieldOp([])
                scf.YieldOp([])
                return
            any_prog = arith.CmpIOp(arith.CmpIPredicate.slt, block, ctx.num_programs).result
            w = scf.IfOp(any_prog, [], has_else=False)
            with ir.InsertionPoint(w.then_block):
                A.op("cross_core_wait_flag", [ctx.c64(FLAG_WS_FREE)])
                scf.YieldOp([])
            scf.YieldOp([])


def _lower_rest(ctx, block, ops, last: bool = True) -> None:
    """Lower the rest of the program (the epilogue and its store) here, and (`last`: the last program of a
    joined group lowers it) keep the walk off it."""
    ctx.lower_ops(block, ops)
    if last:
        ctx.absorb(ops)
