"""xb.dot on the Cube unit: a K loop of `dot` becomes GM->L1 (Nd2Nz), LoadData, Mmad, Fixpipe.

`install()` plugs this into the vector backend without changing its walk: it adds the cube ops
to the ascendc dialect, a rule for `scf.for` loops that contain an `xb.dot` (other loops keep the
vector rule) and for dots of two loads outside loops, the matching C++ printers, and a filter
that skips the ops the cube lowering absorbed.

Epilogues: when the accumulator goes, optionally through ReLU (`maximum(x, 0)` or
`where(x > 0, x, 0)`) and a cast to the output dtype, straight to a masked store, that is one
`Fixpipe` (fp32 -> f16/bf16 and ReLU on the fly, NZ -> ND, mSize x nSize of the mask) and the
kernel is AIC-only. Any other epilogue (leaky-ReLU, bias, scaling...) runs on the vector core of a
mixed kernel (KERNEL_TYPE_MIX_AIC_1_1): the AIC writes the fp32 tile to its slot of a GM
`workspace` (an extra kernel argument, `workspace_bytes` per core in the metadata) and sets a
cross-core flag; the AIV waits for it, copies the tile to UB, hands the slot back with another
flag, and the rest of the program instance is lowered by the vector rules inside
`if ASCEND_IS_AIV { ... }`.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from ...dialects import ascendc as A
from .context import Splat, elem_of, shape_of
from .cube_plan import CUBE_SOCS, CubeLimit, plan_cube
from .options import AIC_ONLY, MIX_AIC_1_1

CUBE_OPS = [
    A.ApiOp("kernel_type", ("KERNEL_TASK_TYPE_DEFAULT",), "{type}", arity=(0, 0)),
    A.ApiOp("data_copy_nd2nz", ("DataCopy", "Nd2NzParams"),
            "(dst, src, ndNum, nValue, dValue, srcNdMatrixStride, srcDValue, dstNzC0Stride, dstNzNStride, "
            "dstNzMatrixStride)", arity=(10, 0)),
    A.ApiOp("load_data", ("LoadData", "LoadData2DParams"),
            "(dst, src, startIndex, repeatTimes, srcStride) {transpose}", arity=(5, 0)),
    A.ApiOp("mmad", ("Mmad", "MmadParams"), "(c, a, b, m, n, k, init)", arity=(7, 0)),
    A.ApiOp("fixpipe", ("Fixpipe", "FixpipeParamsV220"), "(gm, c, nSize, mSize, srcStride, dstStride) {quant, relu}",
            arity=(6, 0)),
    A.ApiOp("core_is", ("ASCEND_IS_AIC", "ASCEND_IS_AIV"), "{core}: an i1 for `if ASCEND_IS_<core> {`", 1,
            arity=(0, 0)),
    A.ApiOp("cross_core_set_flag", ("CrossCoreSetFlag",), "(flagId) {mode, pipe}", arity=(1, 0)),
    A.ApiOp("cross_core_wait_flag", ("CrossCoreWaitFlag",), "(flagId)", arity=(1, 0)),
]
QUANT = {("f32", "f16"): "F322F16", ("f32", "bf16"): "F322BF16", ("f32", "f32"): "NoQuant"}


def register_ops() -> None:
    """Add the cube ops to the ascendc dialect (idempotent; before a context loads it)."""
    for o in CUBE_OPS:
        if o.name not in A._BY_NAME:
            A.OPS.append(o)
            A._BY_NAME[o.name] = o
    A.OP_NAMES = tuple("ascendc." + o.name for o in A.OPS)


# ----- analysis -----------------------------------------------------------------------------------

def _owner(v):
    o = v.owner
    return None if isinstance(o, ir.Block) else (o.operation if hasattr(o, "operation") else o)


def _users(v) -> list:
    return [u.owner.operation if hasattr(u.owner, "operation") else u.owner for u in v.uses]


def find_dot(loop) -> object | None:
    body = loop.regions[0].blocks[0]
    dots = [o.operation for o in body.operations if o.operation.name == "xb.dot"]
    return dots[0] if dots else None


def _splat_float(L, v) -> float | None:
    o = _owner(v)
    if o is None:
        return None
    if o.name == "arith.constant":
        a = o.attributes["value"]
        if isinstance(a, ir.DenseElementsAttr) and a.is_splat:
            return ir.FloatAttr(a.get_splat_value()).value
        return None
    if o.name == "xb.splat":
        inner = _owner(o.operands[0])
        if inner is not None and inner.name == "arith.constant" and isinstance(inner.attributes["value"], ir.FloatAttr):
            return ir.FloatAttr(inner.attributes["value"]).value
    return None


def match_epilogue(L, acc: ir.Value):
    """(ops absorbed, relu, store op) when acc -> [relu] -> [cast] -> store; else None."""
    absorbed, relu, v = [], False, acc
    users = _users(v)
    if len(users) == 1 and users[0].name in ("arith.maximumf", "arith.maxnumf"):
        op = users[0]
        other = op.operands[1] if op.operands[0] == v else op.operands[0]
        if _splat_float(L, other) == 0.0:
            absorbed, relu, v = [op], True, op.results[0]
    elif len(users) == 2 and {u.name for u in users} == {"arith.cmpf", "arith.select"}:
        cmp = next(u for u in users if u.name == "arith.cmpf")
        sel = next(u for u in users if u.name == "arith.select")
        pred = int(ir.IntegerAttr(cmp.attributes["predicate"]).value)  # ogt=2 oge=3
        if cmp.operands[0] == v and pred in (2, 3) and _splat_float(L, cmp.operands[1]) == 0.0 and \
                sel.operands[0] == cmp.results[0] and sel.operands[1] == v and _splat_float(L, sel.operands[2]) == 0.0:
            absorbed, relu, v = [cmp, sel], True, sel.results[0]
    users = _users(v)
    if len(users) == 1 and users[0].name == "arith.truncf":
        absorbed.append(users[0])
        v = users[0].results[0]
        users = _users(v)
    if len(users) == 1 and users[0].name == "xb.store" and users[0].operands[1] == v:
        return absorbed + [users[0]], relu, users[0]
    return None


# ----- lowering -----------------------------------------------------------------------------------

def _segments(op) -> list:
    return list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))


def _access(L, load):
    seg = _segments(load)
    mask = load.operands[1] if seg[1] else None
    acc = L.ps.tile_access(load.operands[0], mask)
    if acc is None:
        raise L.error("ascend: a dot operand must be loaded as rows of unit-stride elements (a 2-D tile with "
                      "contiguous rows) to go through the Cube unit")
    if seg[2] and _splat_float(L, load.operands[1 + seg[1]]) != 0.0:
        raise L.error("ascend: masked-off lanes of a dot operand must load as 0 (other=0.0)")
    return acc


def _extent(L, limits, size: int):
    """min(limits..., size) clamped at 0, as an i64 value."""
    v = L.c64(size)
    for lim in limits:
        v = L.smin(v, L.lin(lim))
    return L.smax(v, L.c64(0))


def _seed_pointers(L, loop, body, iv_key):
    """Loop-carried pointer blocks advanced by a uniform step: p_k = p_0 + k * step (pointer structure)."""
    from ...passes.pointer_structure import Affine, Lin, Pointer

    y = body.operations[len(body.operations) - 1]
    for k, init in enumerate(loop.operands[3:]):
        if not str(init.type).startswith("tensor<") or "!xb.ptr" not in str(init.type):
            continue
        arg, nxt = body.arguments[k + 1], _owner(y.operands[k])
        p0 = L.ps.pointer(init)
        step = L.ps.affine(nxt.operands[1]) if nxt is not None and nxt.name == "xb.addptr" and \
            nxt.operands[0] == arg else None
        if p0 is None or step is None or not step.uniform():
            raise L.error("ascend: pointers carried by a dot's K loop must advance by the same amount every step")
        base = p0.offset.base + Lin.var(iv_key) * step.base
        # a cached answer for the block argument (the analysis alone sees a cycle there)
        L.ps._memo[("ptr", arg)] = Pointer(p0.root, p0.elem, Affine(p0.offset.shape, base, p0.offset.strides))


def _lower_ops(L, ops, skip) -> None:
    """Lower `ops` with the vector rules (scalars and pointer structure), skipping `skip`."""
    for op in ops:
        if op in skip or op.name == "scf.yield":
            continue
        from .driver import source_loc

        L.loc = source_loc(op.location)
        with ir.Location.file(L.loc[0] or "?", L.loc[1], L.loc[2]):
            L.lower_op(op)


def _check_dot(L, dot, acc_init, result):
    """The plan and the fused epilogue of `dot`, whose accumulator starts at `acc_init`."""
    from .driver import source_loc

    a_load, b_load = (_owner(v) for v in dot.operands[:2])
    if any(o is None or o.name != "xb.load" for o in (a_load, b_load)):
        raise L.error("ascend: the Cube path needs `dot(load(...), load(...))`: both operands loaded from memory")
    init_val = L.vmap.get(acc_init) if acc_init is not None else None
    if not (isinstance(init_val, Splat) and init_val.scalar is None and init_val.const == 0):
        raise L.error("ascend: the accumulator of a dot on the Cube unit must start at zeros")
    if elem_of(dot.results[0].type) != "f32":
        raise L.error("ascend: the Cube unit accumulates in fp32: use out_dtype=float32")
    epi = match_epilogue(L, result) or ([], False, None)  # no store: the epilogue runs on the vector core
    in_dtype = elem_of(dot.operands[0].type)
    BM, BK = shape_of(dot.operands[0].type)
    BN = shape_of(dot.operands[1].type)[1]
    soc = CUBE_SOCS.get(L.opts.soc)
    if soc is None:
        raise L.error(f"ascend: the Cube path targets the 910B (separated AIC/AIV) parts, not {L.opts.soc}")
    try:
        plan = plan_cube(BM, BN, BK, in_dtype, soc)
    except CubeLimit as e:
        raise L.error(f"ascend: {e}", source_loc(dot.location)) from None
    absorbed, relu, store = epi
    L.cube_consumed.update(absorbed)
    L.meta.setdefault("cube", []).append({"plan": plan.describe(), "usage": plan.usage(), "relu": relu,
                                          "block": [BM, BN, BK], "dtype": in_dtype,
                                          "epilogue": "fixpipe" if store is not None else "vector"})
    return plan, a_load, b_load, store, relu


def lower_cube_loop(L, loop) -> None:
    """The `scf.for` around an `xb.dot`: the whole K loop on the Cube unit, plus the fused epilogue."""
    dot = find_dot(loop)
    body = loop.regions[0].blocks[0]
    acc_arg = dot.operands[2]
    y = body.operations[len(body.operations) - 1]
    if not isinstance(acc_arg.owner, ir.Block) or acc_arg.owner != body:
        raise L.error("ascend: the Cube path needs `acc = dot(a, b, acc)` with acc carried by the K loop")
    k_res = list(body.arguments).index(acc_arg) - 1
    if y.operands[k_res] != dot.results[0]:
        raise L.error("ascend: the dot's result must be the loop's accumulator")
    lb, step = (L.const_of(L.scalar(v)) for v in (loop.operands[0], loop.operands[2]))
    if lb != 0 or step != 1:
        raise L.error("ascend: a dot's K loop must run over range(0, n) with step 1")
    plan, a_load, b_load, store, relu = _check_dot(L, dot, loop.operands[3 + k_res], loop.results[k_res])
    _emit_loop(L, loop, body, dot, a_load, b_load, plan, store, relu)


def lower_lone_dot(L, dot) -> None:
    """A dot outside any loop (a single K step, e.g. after a one-trip loop was folded away)."""
    plan, a_load, b_load, store, relu = _check_dot(L, dot, dot.operands[2], dot.results[0])

    def emit_aic():
        qs = _queues(L, plan, mixed=store is None)
        f32 = ir.F32Type.get()
        c1 = A.op("alloc_tensor", [], A.local_type(f32), queue=qs["CO1"], name="c1Local")
        _emit_step(L, plan, qs, a_load, b_load, c1, ir.Type.parse(plan.in_dtype),
                   arith.ConstantOp(ir.IntegerType.get_signless(1), 1).result)
        _finish_tile(L, qs, c1, store, plan, relu)

    if store is None:
        return _emit_mixed(L, dot, emit_aic, plan, dot.results[0])
    emit_aic()
    L.vmap[dot.results[0]] = None


def prepare(L) -> None:
    """Before the walk: claim the loads of dots outside loops (the walk reaches them before the dot)."""
    L.__dict__["_cube_prepared"] = True
    L.__dict__["_cube_lone"] = lone = set()
    stack = [L.xb_module.operation]
    while stack:
        o = stack.pop()
        for region in o.regions:
            for b in region.blocks:
                stack.extend(x.operation for x in b.operations)
        if o.name != "xb.dot":
            continue
        parent = o.parent
        if parent is not None and parent.name == "scf.for" and find_dot(parent) == o:
            continue
        loads = [_owner(v) for v in o.operands[:2]]
        if all(x is not None and x.name == "xb.load" and len(_users(x.results[0])) == 1 for x in loads):
            L.cube_consumed.update(loads)
            lone.add(o)


def _queues(L, plan, mixed: bool = False):
    """TQue declarations for A1/B1/A2/B2/CO1 before the grid loop (once per kernel)."""
    if getattr(L, "cube_queues", None):
        if mixed and L.cube_kernel_type.attributes["type"] != ir.StringAttr.get(MIX_AIC_1_1):
            raise L.error("ascend: a kernel mixing Fixpipe-only and vector epilogues of dots is not supported yet")
        return L.cube_queues
    with L.before_grid:
        kind = MIX_AIC_1_1 if mixed else AIC_ONLY
        L.meta["kernel_type"] = kind  # the launch's blockDim counts AICs (options.launch_cores)
        with ir.InsertionPoint.at_block_begin(L.grid.operation.block):
            L.cube_kernel_type = A.op("kernel_type", [], type=kind)
        qs = {}
        for pos, num, nbytes in (("A1", plan.depth_a1, plan.a1_bytes), ("B1", plan.depth_b1, plan.b1_bytes),
                                 ("A2", plan.db_l0a, plan.a2_bytes), ("B2", plan.db_l0b, plan.b2_bytes),
                                 ("CO1", 1, plan.c1_bytes)):
            name = ("inQueue" if pos != "CO1" else "outQueue") + pos
            A.op("tque", [], sym_name=name, position=pos, depth=1, num=num, bytes=nbytes)
            qs[pos] = name
    L.cube_queues = qs
    return qs


def _emit_loop(L, loop, body, dot, a_load, b_load, plan, store, relu):
    if store is None:
        return _emit_mixed(L, loop, lambda: _emit_loop_aic(L, loop, body, dot, a_load, b_load, plan, None, relu),
                           plan, loop.results[list(body.arguments).index(dot.operands[2]) - 1])
    _emit_loop_aic(L, loop, body, dot, a_load, b_load, plan, store, relu)


def _emit_loop_aic(L, loop, body, dot, a_load, b_load, plan, store, relu):
    qs = _queues(L, plan, mixed=store is None)
    in_t = ir.Type.parse(plan.in_dtype)
    f32 = ir.F32Type.get()
    c1 = A.op("alloc_tensor", [], A.local_type(f32), queue=qs["CO1"], name="c1Local")
    iv_xb = body.arguments[0]
    new = scf.ForOp(L.scalar(loop.operands[0]), L.scalar(loop.operands[1]), L.scalar(loop.operands[2]))
    iv_name = L.names.loop_var(*L.loc[:2])
    if iv_name:
        new.attributes["name"] = ir.StringAttr.get(iv_name)
    L.vmap[iv_xb] = new.induction_variable
    _seed_pointers(L, loop, body, L.ps.key(iv_xb))
    with ir.InsertionPoint(new.body):
        _lower_ops(L, [o.operation for o in body.operations], {dot, a_load, b_load})
        from .driver import source_loc

        L.loc = source_loc(dot.location)
        with ir.Location.file(L.loc[0] or "?", L.loc[1], L.loc[2]):
            first = arith.CmpIOp(arith.CmpIPredicate.eq, new.induction_variable, L.scalar(loop.operands[0])).result
            _emit_step(L, plan, qs, a_load, b_load, c1, in_t, first)
        scf.YieldOp([])
    for r in loop.results:
        L.vmap[r] = None
    _finish_tile(L, qs, c1, store, plan, relu)


def _finish_tile(L, qs, c1, store, plan, relu):
    f32 = ir.F32Type.get()
    A.op("enque", [c1], queue=qs["CO1"])
    c1d = A.op("deque", [], A.local_type(f32), queue=qs["CO1"], name="c1Out")
    if store is not None:
        _emit_fixpipe(L, store, c1d, plan, relu)
    else:  # the fp32 tile to this core's workspace slot, once the vector core has read the previous one
        block = A.op("block_idx", [], L.i64)
        again = arith.CmpIOp(arith.CmpIPredicate.ne, L.pid, block).result
        wait = scf.IfOp(again, [], has_else=False)
        with ir.InsertionPoint(wait.then_block):
            A.op("cross_core_wait_flag", [L.c64(FLAG_WS_FREE)])
            scf.YieldOp([])
        ws = L.at(_workspace(L, plan), L.mul(block, L.c64(plan.block_m * plan.block_n)))
        A.op("fixpipe", [ws, c1d, L.c64(plan.block_n), L.c64(plan.block_m), L.c64(plan.base_m),
                         L.c64(plan.block_n)], quant="NoQuant", relu=False)
    A.op("free_tensor", [c1d], queue=qs["CO1"])
    if store is None:
        A.op("cross_core_set_flag", [L.c64(FLAG_TILE_READY)], mode=2, pipe="PIPE_FIX")


# ----- mixed kernels: the epilogue on the vector core ---------------------------------------------

FLAG_TILE_READY, FLAG_WS_FREE = 0, 1  # AIC -> AIV: a tile is in the workspace; AIV -> AIC: it was read


def _workspace(L, plan):
    """The GlobalTensor<float> over the extra `workspace` kernel argument (one tile slot per core)."""
    if getattr(L, "cube_ws", None) is not None:
        return L.cube_ws
    fn = L.module.body.operations[0]
    entry = fn.regions[0].blocks[0]
    arg = entry.add_argument(A.gm_addr_type(), ir.Location.unknown())
    names = [ir.StringAttr(a).value for a in ir.ArrayAttr(fn.attributes["ascendc.arg_names"])] + ["workspace"]
    fn.attributes["ascendc.arg_names"] = ir.ArrayAttr.get([ir.StringAttr.get(n) for n in names])
    fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get([a.type for a in entry.arguments], []))
    with L.before_grid:
        L.cube_ws = A.op("set_global_buffer", [arg], A.global_type(ir.F32Type.get()), dtype="f32",
                         name="workspaceGm")
    L.meta["workspace_bytes"] = plan.block_m * plan.block_n * 4  # per core
    return L.cube_ws


def _core_if(core: str):
    cond = A.op("core_is", [], ir.IntegerType.get_signless(1), core=core)
    return scf.IfOp(cond, [], has_else=False)


def _emit_mixed(L, loop, emit_aic, plan, acc_result):
    """`if ASCEND_IS_AIC { K loop; Fixpipe to the workspace }`, then the rest of the program on the AIV.

    `loop` is the K loop (or the lone dot): everything after it in its block goes in the AIV section.
    """
    from .context import Tile

    aic = _core_if("AIC")
    with ir.InsertionPoint(aic.then_block):
        emit_aic()
        scf.YieldOp([])
    _after_grid_wait(L)
    aiv = _core_if("AIV")
    with ir.InsertionPoint(aiv.then_block):
        A.op("cross_core_wait_flag", [L.c64(FLAG_TILE_READY)])
        shape = (plan.block_m, plan.block_n)
        nbytes = plan.block_m * plan.block_n * 4
        q = L.queue("VECIN", -(-nbytes // 256) * 256, "acc")
        local = A.local_type(ir.F32Type.get())
        t = A.op("alloc_tensor", [], local, queue=q.name, name="accLocal")
        ws = L.at(_workspace(L, plan), L.mul(A.op("block_idx", [], L.i64), L.c64(plan.block_m * plan.block_n)))
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
    if getattr(L, "cube_tail_wait", False):
        return
    L.cube_tail_wait = True
    with ir.InsertionPoint.after(L.grid.operation):
        aic = _core_if("AIC")
        with ir.InsertionPoint(aic.then_block):
            any_prog = arith.CmpIOp(arith.CmpIPredicate.slt, A.op("block_idx", [], L.i64), L.num_programs).result
            w = scf.IfOp(any_prog, [], has_else=False)
            with ir.InsertionPoint(w.then_block):
                A.op("cross_core_wait_flag", [L.c64(FLAG_WS_FREE)])
                scf.YieldOp([])
            scf.YieldOp([])


def _lower_rest(L, block, ops) -> None:
    """Lower the rest of the program (the epilogue and its store) here, and keep the walk off it."""
    from .driver import source_loc

    dying = L._last_uses(block, ops)
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
        L.cube_consumed.add(op)


def _emit_step(L, plan, qs, a_load, b_load, c1, in_t, first):
    """One step of the kernel's K loop: copy the A and B slices to L1, then baseK-wide multiplies."""
    a, b = _access(L, a_load), _access(L, b_load)
    m_valid = _extent(L, a.row_limits, a.rows)
    k_valid = _extent(L, a.col_limits, a.cols)
    n_valid = _extent(L, b.col_limits, b.cols)
    local = A.local_type(in_t)
    tiles = {}
    for key, acc, rows, cols, c0stride, q in (("a", a, m_valid, k_valid, plan.base_m, qs["A1"]),
                                              ("b", b, _extent(L, b.row_limits, b.rows), n_valid, plan.k_pad,
                                               qs["B1"])):
        t = A.op("alloc_tensor", [], local, queue=q, name=f"{key}1Local")
        gm = L.at(L.vmap[acc.root], L.lin(acc.base))
        A.op("data_copy_nd2nz", [t, gm, L.c64(1), rows, cols, L.c64(0), L.lin(acc.row_stride), L.c64(c0stride),
                                 L.c64(1), L.c64(0)])
        A.op("enque", [t], queue=q)
        tiles[key] = A.op("deque", [], local, queue=q, name=f"{key}1")
    mf, nf, kf1 = plan.base_m // 16, plan.base_n // 16, plan.k_pad // 16
    bkf = plan.base_k // 16
    for s in range(plan.k_steps):
        # valid K in this baseK step, and the fractals LoadData moves for it
        k_here = L.smax(L.smin(L.sub(k_valid, L.c64(s * plan.base_k)), L.c64(plan.base_k)), L.c64(0))
        kf = arith.DivSIOp(L.add(k_here, L.c64(15)), L.c64(16)).result
        a2 = A.op("alloc_tensor", [], local, queue=qs["A2"], name="a2Local")
        rows = L.for_range(0, mf)
        with ir.InsertionPoint(rows.body):
            i = rows.induction_variable
            A.op("load_data", [L.at(a2, L.mul(L.mul(i, kf), L.c64(256))), tiles["a"],
                               L.add(i, L.c64(s * bkf * mf)), kf, L.c64(mf)], transpose=False)
            scf.YieldOp([])
        A.op("enque", [a2], queue=qs["A2"])
        b2 = A.op("alloc_tensor", [], local, queue=qs["B2"], name="b2Local")
        ks = L.for_range(L.c64(0), kf)
        with ir.InsertionPoint(ks.body):
            j = ks.induction_variable
            A.op("load_data", [L.at(b2, L.mul(j, L.c64(nf * 256))), tiles["b"], L.add(j, L.c64(s * bkf)),
                               L.c64(nf), L.c64(kf1)], transpose=True)
            scf.YieldOp([])
        A.op("enque", [b2], queue=qs["B2"])
        a2d = A.op("deque", [], local, queue=qs["A2"], name="a2")
        b2d = A.op("deque", [], local, queue=qs["B2"], name="b2")
        init = first if s == 0 else arith.ConstantOp(ir.IntegerType.get_signless(1), 0).result
        A.op("mmad", [c1, a2d, b2d, L.c64(plan.base_m), L.c64(plan.base_n), k_here, init])
        A.op("free_tensor", [a2d], queue=qs["A2"])
        A.op("free_tensor", [b2d], queue=qs["B2"])
    A.op("free_tensor", [tiles["a"]], queue=qs["A1"])
    A.op("free_tensor", [tiles["b"]], queue=qs["B1"])


def _emit_fixpipe(L, store, c1, plan, relu):
    from .driver import source_loc

    L.loc = source_loc(store.location)
    seg = _segments(store)
    acc = L.ps.tile_access(store.operands[0], store.operands[2] if seg[2] else None)
    out = elem_of(store.operands[1].type)
    if acc is None or (acc.rows, acc.cols) != (plan.block_m, plan.block_n):
        raise L.error("ascend: the dot's result must be stored as a 2-D tile with contiguous rows")
    with ir.Location.file(L.loc[0] or "?", L.loc[1], L.loc[2]):
        m = _extent(L, acc.row_limits, acc.rows)
        n = _extent(L, acc.col_limits, acc.cols)
        for u in acc.uniform:
            on = arith.CmpIOp(arith.CmpIPredicate.sgt, L.lin(u), L.c64(0)).result
            m = arith.SelectOp(on, m, L.c64(0)).result
        gm = L.at(L.vmap[acc.root], L.lin(acc.base))
        A.op("fixpipe", [gm, c1, n, m, L.c64(plan.base_m), L.lin(acc.row_stride)], quant=QUANT[("f32", out)],
             relu=relu)


# ----- printing -----------------------------------------------------------------------------------

class CubeEmitter:
    """The AscendC spellings of the cube ops (mixed into the AscendC emitter by install())."""

    def op_kernel_type(self, op):
        self.line(f"KERNEL_TASK_TYPE_DEFAULT({self._attr(op, 'type')});")

    def op_data_copy_nd2nz(self, op):
        o = list(op.operands)
        args = ", ".join(self.as_int(v, "uint16_t") for v in o[2:])
        self.line(f"DataCopy({self.expr(o[0])}, {self.expr(o[1])}, Nd2NzParams({args}));")

    def op_load_data(self, op):
        d, s, start, rep, stride = op.operands
        tr = "true" if self._attr(op, "transpose") else "false"
        self.line(f"LoadData({self.expr(d)}, {self.expr(s)}, LoadData2DParams({self.as_int(start, 'uint16_t')}, "
                  f"{self.as_int(rep, 'uint8_t')}, {self.as_int(stride, 'uint16_t')}, 0, 0, {tr}, 0));")

    def op_mmad(self, op):
        c, a, b, m, n, k, init = op.operands
        self.line(f"Mmad({self.expr(c)}, {self.expr(a)}, {self.expr(b)}, MmadParams({self.as_int(m, 'uint16_t')}, "
                  f"{self.as_int(n, 'uint16_t')}, {self.as_int(k, 'uint16_t')}, 0, false, {self.expr(init)}));")

    def op_fixpipe(self, op):
        gm, c, n, m, src_stride, dst_stride = op.operands
        p = self.fresh("fixParams")
        self.line(f"FixpipeParamsV220 {p};")
        self.line(f"{p}.nSize = {self.as_int(n, 'uint16_t')};")
        self.line(f"{p}.mSize = {self.as_int(m, 'uint16_t')};")
        self.line(f"{p}.srcStride = {self.as_int(src_stride, 'uint16_t')};")
        self.line(f"{p}.dstStride = {self.as_int(dst_stride, 'uint32_t')};")
        self.line(f"{p}.quantPre = QuantMode_t::{self._attr(op, 'quant')};")
        if self._attr(op, "relu"):
            self.line(f"{p}.reluEn = true;")
        self.line(f"Fixpipe({self.expr(gm)}, {self.expr(c)}, {p});")

    def op_cross_core_set_flag(self, op):
        self.line(f"CrossCoreSetFlag<{self._attr(op, 'mode')}, {self._attr(op, 'pipe')}>"
                  f"({self.as_int(op.operands[0], 'uint16_t')});")

    def op_cross_core_wait_flag(self, op):
        self.line(f"CrossCoreWaitFlag({self.as_int(op.operands[0], 'uint16_t')});")

    def op_core_is(self, op):  # only ever the condition of an scf.if (see emit_if)
        pass


_INSTALLED = False


def install() -> None:
    """Register the cube ops, rules and printers with the ascend backend (idempotent)."""
    global _INSTALLED
    if _INSTALLED:
        return
    from .driver import Lowering
    from .emit import AscendCEmitter
    from .memory import RULES

    register_ops()
    for name in ("op_kernel_type", "op_data_copy_nd2nz", "op_load_data", "op_mmad", "op_fixpipe",
                 "op_cross_core_set_flag", "op_cross_core_wait_flag", "op_core_is"):
        setattr(AscendCEmitter, name, getattr(CubeEmitter, name))
    vector_if, vector_inlinable = AscendCEmitter.emit_if, AscendCEmitter.inlinable

    def emit_if(self, op):
        cond = _owner(op.operands[0])
        if cond is None or cond.name != "ascendc.core_is":
            return vector_if(self, op)
        self.line(f"if ASCEND_IS_{ir.StringAttr(cond.attributes['core']).value} {{")
        self.depth += 1
        self.block(op.regions[0].blocks[0])
        self.depth -= 1
        self.line("}")

    AscendCEmitter.emit_if = emit_if
    AscendCEmitter.inlinable = lambda self, op: op.name == "ascendc.core_is" or vector_inlinable(self, op)
    Lowering.cube_consumed = _Consumed()
    vector_for = RULES["scf.for"]

    def _for(L, op):
        return lower_cube_loop(L, op) if find_dot(op) is not None else vector_for(L, op)

    RULES["scf.for"] = _for
    vector_dot = RULES["xb.dot"]

    def _dot(L, op):
        """A dot in a K loop is lowered with its loop, a dot of two loads on its own; others are errors."""
        loop = op.operation.parent
        if loop is not None and loop.name == "scf.for" and find_dot(loop) == op.operation:
            return None
        if op.operation in L.__dict__.get("_cube_lone", ()):
            return lower_lone_dot(L, op.operation) if hasattr(L, "grid") else None
        return vector_dot(L, op)

    RULES["xb.dot"] = _dot
    for name, fn in list(RULES.items()):
        RULES[name] = _skipping(fn)
    _INSTALLED = True


class _Consumed:
    """Per-Lowering set of ops the cube lowering absorbed (created on first use)."""

    def __get__(self, L, owner):
        if L is None:
            return self
        s = L.__dict__.get("_cube_consumed")
        if s is None:
            s = L.__dict__["_cube_consumed"] = set()
        return s


def _skipping(fn):
    def rule(L, op):
        if "_cube_prepared" not in L.__dict__:
            prepare(L)
        if op.operation in L.cube_consumed:
            return None
        return fn(L, op)

    rule.__wrapped__ = fn
    return rule


COUNTER_NAMES = ("cube_ops", "mmad_calls", "gm_to_l1_bytes", "l1_to_l0a_bytes", "l1_to_l0b_bytes",
                 "l0c_to_gm_bytes", "cross_core_sets", "peak_l1_bytes", "peak_l0a_bytes", "peak_l0b_bytes",
                 "peak_l0c_bytes")


def cube_counters(ck) -> dict:
    """The Cube counters of the last launch of compiled kernel `ck` on the CPU model."""
    import ctypes
    import hashlib

    from ...runtime.cache import cache_dir

    path = cache_dir() / "ascend-emu" / f"{hashlib.sha256(ck.asm['so']).hexdigest()[:32]}.so"
    out = (ctypes.c_uint64 * len(COUNTER_NAMES))()
    n = ctypes.CDLL(str(path)).xblock_cube_counters(out, len(COUNTER_NAMES))
    return dict(zip(COUNTER_NAMES, list(out)[:n]))
