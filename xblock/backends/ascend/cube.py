"""xb.dot on the Cube unit: a K loop of `dot` becomes GM->L1 (Nd2Nz), LoadData, Mmad, Fixpipe.

The rules here join the vector rules' table: `scf.for` loops that contain an `xb.dot` (other loops
keep the vector rule), `xb.dot` itself (a dot of two loads outside any loop; anything else is an
error), and a hook before the walk that claims those loads. Ops the Cube lowering takes with it
(the operand loads, a fused epilogue and its store) are marked `Lowering.absorb`ed, so the walk
skips them. The C++ spellings of the cube ops are in cube_emit.py.

Epilogues: when the accumulator goes, optionally through ReLU (`maximum(x, 0)` or
`where(x > 0, x, 0)`) and a cast to the output dtype, straight to a masked store, that is one
`Fixpipe` (fp32 -> f16/bf16 and ReLU on the fly, NZ -> ND, mSize x nSize of the mask) and the
kernel is AIC-only. Any other epilogue (leaky-ReLU, bias, scaling...) runs on the vector core of a
mixed kernel (KERNEL_TYPE_MIX_AIC_1_1, cube_mixed.py).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from ...dialects import ascendc as A
from ...passes.pointer_structure import Affine, Lin, Pointer
from .context import Splat, elem_of, shape_of
from .cube_mixed import emit_mixed, state, tile_ready, to_workspace
from .cube_plan import CUBE_SOCS, CubeLimit, plan_cube
from .driver import source_loc
from .options import AIC_ONLY, MIX_AIC_1_1
from .rules import before_walk, rule

QUANT = {("f32", "f16"): "F322F16", ("f32", "bf16"): "F322BF16", ("f32", "f32"): "NoQuant"}


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


def _access(L, load, out, dim: int):
    """The tile access of dot operand `load` (A: dim 0, its rows; B: dim 1, its columns)."""
    seg = _segments(load)
    mask = load.operands[1] if seg[1] else None
    acc = L.ps.tile_access(load.operands[0], mask, wrapped=True)
    if acc is None:
        raise L.error("ascend: a dot operand must be loaded as rows of unit-stride elements (a 2-D tile with "
                      "contiguous rows) to go through the Cube unit")
    if seg[2] and _splat_float(L, load.operands[1 + seg[1]]) != 0.0:
        raise L.error("ascend: masked-off lanes of a dot operand must load as 0 (other=0.0)")
    if acc.assumed is not None:
        _check_wrap(L, acc.assumed, out, dim)
    return acc


def _check_wrap(L, assumed, out, dim: int) -> None:
    """Wrapped offsets (`% M`): the lanes past the wrap are not fetched, which is only right when
    the rows (of A) or columns (of B) of the product they feed are never stored."""
    what = ("rows", "M") if dim == 0 else ("columns", "N")
    acc = None
    if out is not None:
        seg = _segments(out)
        acc = L.ps.tile_access(out.operands[0], out.operands[2] if seg[2] else None)
    stored = (acc.row_limits if dim == 0 else acc.col_limits) if acc is not None else ()
    if assumed.uniform or any(d != dim or lim not in stored for d, lim in assumed.dims):
        raise L.error(f"ascend: this dot operand's offsets wrap around (`% {what[1]}`); the Cube path fetches "
                      f"only the {what[0]} before the wrap, so the result must reach one store, through "
                      f"element-wise ops, whose mask drops the same {what[0]} (`offs < {what[1]}`)")


def _final_store(result):
    """The one store that the dot's result reaches through element-wise ops only, else None."""
    seen, todo, store = set(), [result], None
    while todo:
        v = todo.pop()
        for u in _users(v):
            if u.name == "xb.store" and u.operands[1] == v and store in (None, u):
                store = u
            elif u.name.startswith(("arith.", "math.")) and str(u.results[0].type).startswith("tensor<"):
                if u not in seen:
                    seen.add(u)
                    todo.extend(u.results)
            else:
                return None
    return store


def _extent(L, limits, size: int):
    """min(limits..., size) clamped at 0, as an i64 value."""
    v = L.c64(size)
    for lim in limits:
        v = L.smin(v, L.lin(lim))
    return L.smax(v, L.c64(0))


def _seed_pointers(L, loop, body, iv_key):
    """Loop-carried pointer blocks advanced by a uniform step: p_k = p_0 + k * step (pointer structure)."""
    y = body.operations[len(body.operations) - 1]
    for k, init in enumerate(loop.operands[3:]):
        if not str(init.type).startswith("tensor<") or "!xb.ptr" not in str(init.type):
            continue
        arg, nxt = body.arguments[k + 1], _owner(y.operands[k])
        p0 = L.ps.pointer(init, wrapped=True)
        step = L.ps.affine(nxt.operands[1]) if nxt is not None and nxt.name == "xb.addptr" and \
            nxt.operands[0] == arg else None
        if p0 is None or step is None or not step.uniform():
            raise L.error("ascend: pointers carried by a dot's K loop must advance by the same amount every step")
        base = p0.offset.base + Lin.var(iv_key) * step.base
        # the analysis alone sees a cycle at the block argument
        L.ps.assume_pointer(arg, Pointer(p0.root, p0.elem, Affine(p0.offset.shape, base, p0.offset.strides,
                                                                  p0.offset.exact)))


def _lower_ops(L, ops, skip) -> None:
    """Lower `ops` with the vector rules (scalars and pointer structure), skipping `skip`."""
    for op in ops:
        if op in skip or op.name == "scf.yield":
            continue
        L.loc = source_loc(op.location)
        with ir.Location.file(L.loc[0] or "?", L.loc[1], L.loc[2]):
            L.lower_op(op)


def _check_dot(L, dot, acc_init, result):
    """The plan and the fused epilogue of `dot`, whose accumulator starts at `acc_init`."""
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
    L.absorb(absorbed)
    state(L).out = store or _final_store(result)
    L.meta.setdefault("cube", []).append({"plan": plan.describe(), "usage": plan.usage(), "relu": relu,
                                          "block": [BM, BN, BK], "dtype": in_dtype,
                                          "epilogue": "fixpipe" if store is not None else "vector"})
    return plan, a_load, b_load, store, relu


def _has_dot(L, op) -> bool:
    return find_dot(op) is not None


@rule("scf.for", when=_has_dot)
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


@rule("xb.dot")
def _dot(L, op):
    """A dot of two loads outside loops; a dot in a K loop is lowered with its loop (lower_cube_loop)."""
    if op.operation not in state(L).lone:
        raise L.error("ascend: this dot cannot go to the Cube unit: it needs `acc = dot(load(...), load(...), acc)` "
                      "as the K loop's accumulator, or a dot of two loads that nothing else uses")
    lower_lone_dot(L, op.operation)


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
        return emit_mixed(L, dot, emit_aic, plan, dot.results[0])
    emit_aic()
    L.vmap[dot.results[0]] = None


@before_walk
def claim_lone_dot_loads(L) -> None:
    """Dots outside loops: claim their loads now (the walk reaches them before the dot)."""
    lone = state(L).lone
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
            L.absorb(loads)
            lone.add(o)


def _queues(L, plan, mixed: bool = False):
    """TQue declarations for A1/B1/A2/B2/CO1 before the grid loop (once per kernel)."""
    st = state(L)
    if st.queues:
        if mixed and st.kernel_type.attributes["type"] != ir.StringAttr.get(MIX_AIC_1_1):
            raise L.error("ascend: a kernel mixing Fixpipe-only and vector epilogues of dots is not supported yet")
        return st.queues
    with L.before_grid:
        kind = MIX_AIC_1_1 if mixed else AIC_ONLY
        L.meta["kernel_type"] = kind  # the launch's blockDim counts AICs (options.launch_cores)
        with ir.InsertionPoint.at_block_begin(L.grid.operation.block):
            st.kernel_type = A.op("kernel_type", [], type=kind)
        qs = {}
        for pos, num, nbytes in (("A1", plan.depth_a1, plan.a1_bytes), ("B1", plan.depth_b1, plan.b1_bytes),
                                 ("A2", plan.db_l0a, plan.a2_bytes), ("B2", plan.db_l0b, plan.b2_bytes),
                                 ("CO1", 1, plan.c1_bytes)):
            name = ("inQueue" if pos != "CO1" else "outQueue") + pos
            A.op("tque", [], sym_name=name, position=pos, depth=1, num=num, bytes=nbytes)
            qs[pos] = name
    st.queues = qs
    return qs


def _emit_loop(L, loop, body, dot, a_load, b_load, plan, store, relu):
    if store is None:
        return emit_mixed(L, loop, lambda: _emit_loop_aic(L, loop, body, dot, a_load, b_load, plan, None, relu),
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
    else:
        to_workspace(L, c1d, plan)
    A.op("free_tensor", [c1d], queue=qs["CO1"])
    if store is None:
        tile_ready(L)


def _emit_step(L, plan, qs, a_load, b_load, c1, in_t, first):
    """One step of the kernel's K loop: copy the A and B slices to L1, then baseK-wide multiplies."""
    out = state(L).out
    a, b = _access(L, a_load, out, 0), _access(L, b_load, out, 1)
    m_valid = L.named(_extent(L, a.row_limits, a.rows), "mValid")  # rows of A (and C) in this program
    k_valid = L.named(_extent(L, a.col_limits, a.cols), "kValid")  # K left in this step of the K loop
    n_valid = L.named(_extent(L, b.col_limits, b.cols), "nValid")
    local = A.local_type(in_t)
    tiles = {}
    k_rows = _extent(L, b.row_limits, b.rows)
    for key, load, acc, rows, cols, c0stride, q in (("a", a_load, a, m_valid, k_valid, plan.base_m, qs["A1"]),
                                                    ("b", b_load, b, k_rows, n_valid, plan.k_pad, qs["B1"])):
        t = A.op("alloc_tensor", [], local, queue=q, name=f"{key}1Local")
        gm = L.at(L.vmap[acc.root], L.gm_offset(load.operands[0], acc.base))
        A.op("data_copy_nd2nz", [t, gm, L.c64(1), rows, cols, L.c64(0), L.lin(acc.row_stride), L.c64(c0stride),
                                 L.c64(1), L.c64(0)])
        A.op("enque", [t], queue=q)
        tiles[key] = A.op("deque", [], local, queue=q, name=f"{key}1")
    mf, nf, kf1 = plan.base_m // 16, plan.base_n // 16, plan.k_pad // 16
    bkf = plan.base_k // 16
    for s in range(plan.k_steps):
        # valid K in this baseK step, and the fractals LoadData moves for it
        k_here = L.smax(L.smin(L.sub(k_valid, L.c64(s * plan.base_k)), L.c64(plan.base_k)), L.c64(0))
        k_here = L.named(k_here, f"kStep{s}" if plan.k_steps > 1 else "kStep")
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
        gm = L.at(L.vmap[acc.root], L.gm_offset(store.operands[0], acc.base))
        A.op("fixpipe", [gm, c1, n, m, L.c64(plan.base_m), L.lin(acc.row_stride)], quant=QUANT[("f32", out)],
             relu=relu)


