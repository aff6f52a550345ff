"""xb.dot on the Cube unit: a K loop of `dot` becomes GM->L1 (Nd2Nz), LoadData, Mmad, Fixpipe.

The rules here join the vector rules' table: `scf.for` loops that are plain K loops of a dot
(cube_match.k_loop_dot; other loops keep the vector rule), `xb.dot` itself, and a hook before the
walk (`claim_dots`) that decides how each dot runs and claims the loads the Cube reads itself. A
dot of two loads outside a K loop is a *lone* dot (one K step). Any other dot (`acc += dot(a, b) *
s`, attention's) is handed to the vector core (cube_handoff.py), and then every dot of the kernel
is, and the kernel is split into AIC and AIV sections as a whole (cube_sections.py). Ops the Cube
lowering takes with it (operand loads, a fused epilogue and its store) are marked `ctx.absorb`ed,
so the walk skips them. The patterns are in cube_match.py, the tile plan in cube_plan.py, the
L1/L0 steps in cube_ops.py, the K loop's AIC/AIV protocol in cube_mixed.py, and the C++
spellings of the cube ops in cube_emit.py.

Epilogues: when the accumulator goes, optionally through ReLU (`maximum(x, 0)` or
`where(x > 0, x, 0)`) and a cast to the output dtype, straight to a masked store, that is one
`Fixpipe` (fp32 -> f16/bf16 and ReLU on the fly, NZ -> ND, mSize x nSize of the mask) and the
kernel is AIC-only. So it is when, before that, a K loop's accumulator gets a row vector added
(`acc + bias[None, :]`, the bias an fp32 load of the tile's columns that fits the 1 KB BiasTable):
the bias goes GM -> L1 -> BiasTable before the K loop and the loop's first Mmad starts from it
(`_bias_epilogue`). Any other epilogue (leaky-ReLU, a column-vector or full-tile add, scaling...)
runs on the vector core of a mixed kernel (KERNEL_TYPE_MIX_AIC_1_1, cube_mixed.py).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import replace

from mlir import ir
from mlir.dialects import arith, scf

from .....dialects import ascendc as A
from .....passes.pointer_structure import Affine, Lin, Pointer
from ...cube.batch import batch_tile, gate, is_batched, tile_at
from ...cube.depth import Steps, steps_side_by_side
from ...cube.handoff import cube_copyable, lower_handoff_dot, plan_handoffs, rows_apart, same_tile
from ...cube.match import (
    final_store,
    find_dot,
    k_loop_dot,
    match_bias_epilogue,
    match_epilogue,
    owner_of,
    splat_float,
    users_of,
)
from ...cube.mixed import QUANT, emit_mixed, lower_slice, state, tile_ready, to_workspace, walk_ops
from ...cube.ops import (
    BIAS_TABLE_BYTES,
    Operand,
    _load_b,
    bias_to_table,
    cube_plan_of,
    extent,
    load_a_tile,
    mmad_steps,
    nd2nz,
    queues,
    to_l1,
    widen,
)
from ...cube.tiling import deepen, deepen_l0
from ...cube.tiling import join as join_plan
from ...plan.plan import HAND_OFF, VectorCoreNeeded
from ...values import Splat, Tile, elem_of, shape_of
from ...vector.access import segments
from ..rules import before_walk, rule

# ----- lowering -----------------------------------------------------------------------------------

def _access(ctx, load, out, dim: int):
    """The tile access of dot operand `load` (A: dim 0, its rows; B: dim 1, its columns), and the
    GlobalTensor at its first element as a function (built when the copy needs it)."""
    seg = segments(load)
    mask = load.operands[1] if seg[1] else None
    if seg[2] and splat_float(load.operands[1 + seg[1]]) != 0.0:
        # the planner answers with the dot handed to the vector core, which loads any `other`
        raise VectorCoreNeeded(ctx.error("masked-off lanes of a dot operand must load as 0 (other=0.0) for the Cube "
                                         "to copy it from memory"), "dot_operand")
    index = state(ctx).batch
    if index is not None:  # one matrix of a batched dot
        bt = batch_tile(ctx.ps, load.operands[0], mask)
        if bt is None:
            raise ctx.error("an operand of a batched dot must be loaded as rows of unit-stride elements per matrix "
                            "(a [B, rows, cols] block with contiguous rows, offsets that do not wrap) to go "
                            "through the Cube unit")
        return bt.acc, (lambda: (tile_at(ctx, bt, load.operands[0], index), ctx.lin(bt.acc.row_stride))), \
            (lambda e: gate(ctx, bt, index, e))
    acc = ctx.ps.tile_access(load.operands[0], mask, wrapped=True)
    if acc is None or not rows_apart(acc) or not same_tile(acc, load):
        # the planner answers with the dot handed to the vector core, which loads any operand (a
        # transposed K-cache tile, a gather) and hands it to the Cube through the workspace
        raise VectorCoreNeeded(ctx.error(
            "a dot operand must be loaded as rows of unit-stride elements (a 2-D tile with contiguous rows "
            "that do not overlap) to go through the Cube unit"), "dot_operand")
    _no_lower_limits(ctx, acc, f"dot operand {'AB'[dim]}")
    if acc.assumed is not None:
        _check_wrap(ctx, acc.assumed, out, dim)
    return acc, _gm_at(ctx, load, acc), (lambda e: e)


def _no_lower_limits(ctx, acc, what: str) -> None:
    """The Cube path copies whole fractal rows and columns from a tile's first row and column; a tile
    whose offsets may start before the tensor (a negative offset, or one of unknown sign, masked by
    `0 <= i`) would need its copy to start inside the tile."""
    if acc.row_lower or acc.col_lower:
        axis = "rows" if acc.row_lower else "columns"
        raise ctx.error(f"the {axis} of this {what} may start before the tensor (an offset that is negative "
                        "or of unknown sign, masked by `0 <= i`); the Cube path needs offsets it can prove "
                        ">= 0 (built from program ids, loop counters and non-negative constants)")


def _check_wrap(ctx, assumed, out, dim: int) -> None:
    """Wrapped offsets (`% M`): the lanes past the wrap are not fetched, which is only right when
    the rows (of A) or columns (of B) of the product they feed are never stored."""
    what = ("rows", "M") if dim == 0 else ("columns", "N")
    acc = None
    if out is not None:
        seg = segments(out)
        acc = ctx.ps.tile_access(out.operands[0], out.operands[2] if seg[2] else None)
    stored = (acc.row_limits if dim == 0 else acc.col_limits) if acc is not None else ()
    if assumed.uniform or any(d != dim or lim not in stored for d, lim in assumed.dims):
        # the planner answers with the dot handed to the vector core, which loads the wrapped lanes too
        raise VectorCoreNeeded(ctx.error(
            f"this dot operand's offsets wrap around (`% {what[1]}`); the Cube path fetches only the "
            f"{what[0]} before the wrap, so the result must reach one store, through element-wise ops, whose "
            f"mask drops the same {what[0]} (`offs < {what[1]}`)"), "dot_operand")


def _carries_pointers(loop) -> bool:
    """The loop carries pointers (blocks, or scalars such as the `A += BLOCK_K * stride_ak` of
    TorchInductor's mm template), each seeded as start + iterations * step (_seed_pointers)."""
    return any("!xb.ptr" in str(v.type) for v in loop.operands[3:])


def _seed_pointers(ctx, loop, body, count: Lin):
    """Loop-carried pointer blocks advanced by a uniform step: p_k = p_0 + k * step (pointer structure),
    k the iterations done (`count`)."""
    y = body.operations[len(body.operations) - 1]
    for k, init in enumerate(loop.operands[3:]):
        if "!xb.ptr" not in str(init.type):
            continue
        arg, nxt = body.arguments[k + 1], owner_of(y.operands[k])
        p0 = ctx.ps.pointer(init, wrapped=True)
        step = ctx.ps.affine(nxt.operands[1]) if nxt is not None and nxt.name == "xb.addptr" and \
            nxt.operands[0] == arg else None
        if p0 is None or step is None or not step.uniform():
            raise ctx.error("pointers carried by a dot's K loop must advance by the same amount every step")
        base = p0.offset.base + count * step.base
        # the analysis alone sees a cycle at the block argument
        ctx.ps.assume_pointer(arg, Pointer(p0.root, p0.elem, Affine(p0.offset.shape, base, p0.offset.strides,
                                                                    p0.offset.exact)))


def _lower_ops(ctx, ops, skip) -> None:
    """Lower `ops` with the vector rules (scalars and pointer structure), skipping `skip`."""
    for op in ops:
        if op in skip or op.name == "scf.yield":
            continue
        with ctx.located(op):
            ctx.lower_op(op)


def _check_dot(ctx, dot, acc_init, result, k_loop: bool = False):
    """The plan and the fused epilogue of `dot`, whose accumulator starts at `acc_init`; with `k_loop` (a
    plain K loop's dot), the epilogue may add a bias row first (then also the bias: `_bias_epilogue`)."""
    a_load, b_load = (owner_of(v) for v in dot.operands[:2])
    if any(o is None or o.name != "xb.load" for o in (a_load, b_load)):
        # the planner answers with the dot handed to the vector core, which computes such operands
        raise VectorCoreNeeded(ctx.error("the Cube path needs `dot(load(...), load(...))`: both operands loaded "
                                         "from memory"), "dot_operand")
    init_val = ctx.vmap.get(acc_init) if acc_init is not None else None
    if not (isinstance(init_val, Splat) and init_val.scalar is None and init_val.const == 0):
        # the planner answers with the dot handed to the vector core, which adds the accumulator after
        raise VectorCoreNeeded(ctx.error("the accumulator of a dot on the Cube unit must start at zeros"),
                               "dot_operand")
    plan = cube_plan_of(ctx, dot)
    epi, bias = match_epilogue(result), None
    if epi is None and k_loop and not is_batched(dot) and (b := _bias_epilogue(ctx, result, plan)) is not None:
        bias, epi = b[0], b[1:]
    epi = epi or ([], False, None)  # no store: the epilogue runs on the vector core
    in_dtype = plan.in_dtype
    BM, BN, BK = plan.block_m, plan.block_n, plan.block_k
    absorbed, relu, store = epi
    _check_batch(ctx, dot, store)
    if store is not None and (plan.acc_dtype, elem_of(store.operands[1].type)) not in QUANT:
        raise ctx.error(f"Fixpipe cannot convert the {plan.acc_dtype} accumulator of this dot to "
                        f"{elem_of(store.operands[1].type)} on the way out", store)
    ctx.absorb(absorbed)
    state(ctx).out = store or final_store(result)
    ctx.meta.setdefault("cube", []).append({"plan": plan.describe(), "usage": plan.usage(), "tiles": plan.tiles,
                                            "relu": relu,
                                            "block": [BM, BN, BK], "dtype": in_dtype, "bias": bias is not None,
                                            "epilogue": "fixpipe" if store is not None else "vector"})
    if k_loop:
        return plan, a_load, b_load, store, relu, bias
    return plan, a_load, b_load, store, relu


def _bias_epilogue(ctx, result, plan):
    """(bias access, ops absorbed, relu, store) when the K loop's accumulator goes `+ bias[None, :]` ->
    [ReLU] -> [cast] -> masked store (cube_match.match_bias_epilogue) and the bias can start the accumulator
    from the BiasTable: an f32 row (Mmad's A2 bias type for f16/bf16/f32 products) of the tile's columns,
    loaded as unit-stride elements at offsets >= 0, masked-off lanes 0 (`other=0.0`), base_n floats within the
    1 KB table; and the store's column mask drops every column the bias's mask drops (the Cube copies only the
    bias columns the mask loads; the table's other columns reach no stored element). Else None: the add runs
    in a vector epilogue as before."""
    m = match_bias_epilogue(result)
    if m is None:
        return None
    load, absorbed, relu, store = m
    if plan.acc_dtype != "f32" or elem_of(load.results[0].type) != "f32" or \
            list(shape_of(load.results[0].type)) != [plan.block_n] or plan.base_n * 4 > BIAS_TABLE_BYTES:
        return None
    if (plan.acc_dtype, elem_of(store.operands[1].type)) not in QUANT:
        return None
    seg = segments(load)
    if seg[2] and splat_float(load.operands[1 + seg[1]]) != 0.0:
        return None
    acc = ctx.ps.tile_access(load.operands[0], load.operands[1] if seg[1] else None)
    if acc is None or (acc.rows, acc.cols) != (1, plan.block_n) or acc.uniform or acc.row_lower or acc.col_lower:
        return None
    sseg = segments(store)
    sacc = ctx.ps.tile_access(store.operands[0], store.operands[2] if sseg[2] else None)
    if sacc is None or any(lim not in sacc.col_limits for lim in acc.col_limits):
        return None
    return (load, acc), absorbed, relu, store


def _check_batch(ctx, dot, store) -> None:
    """A batched dot runs matrix by matrix, each stored by its Fixpipe: its result must go to one store."""
    if is_batched(dot) and store is None:
        raise ctx.error("the result of a batched (3-D) dot on ascend must go straight to a store (through ReLU and "
                        "a cast at most): the Cube path multiplies its matrices one at a time (Mmad has no batch) "
                        "and stores each by Fixpipe; any other use of it is not supported yet", dot)


def _has_dot(ctx, op) -> bool:
    """A plain Cube K loop (cube_match.k_loop_dot), in a kernel whose dots are not handed over."""
    return state(ctx).handoff is None and k_loop_dot(op) is not None


@rule("scf.for", when=_has_dot)
def _lower_for_cube_loop(ctx, loop) -> None:
    """The `scf.for` around an `xb.dot`: the whole K loop on the Cube unit, plus the fused epilogue."""
    dot = find_dot(loop)
    body = loop.regions[0].blocks[0]
    acc_arg = dot.operands[2]
    y = body.operations[len(body.operations) - 1]
    if not isinstance(acc_arg.owner, ir.Block) or acc_arg.owner != body:
        raise ctx.error("the Cube path needs `acc = dot(a, b, acc)` with acc carried by the K loop")
    k_res = list(body.arguments).index(acc_arg) - 1
    if y.operands[k_res] != dot.results[0]:
        raise ctx.error("the dot's result must be the loop's accumulator")
    plan, a_load, b_load, store, relu, bias = _check_dot(ctx, dot, loop.operands[3 + k_res], loop.results[k_res],
                                                         k_loop=True)
    joined = _joinable(ctx, loop, body, dot, plan, store, bias)
    if joined is not None:
        return _emit_joined(ctx, loop, body, dot, a_load, b_load, joined, store, relu)
    _emit_loop(ctx, loop, body, dot, a_load, b_load, plan, store, relu, bias)


@rule("xb.dot")
def _lower_dot(ctx, op):
    """A dot of two loads outside loops, or a dot handed over to the vector core; a dot in a plain K
    loop is lowered with its loop (_lower_for_cube_loop)."""
    h = state(ctx).handoff
    if h is not None and op.operation in h.sites:
        return lower_handoff_dot(ctx, op.operation)
    if op.operation not in state(ctx).lone:
        raise ctx.error("this dot cannot go to the Cube unit: it needs `acc = dot(load(...), load(...), acc)` "
                        "as the K loop's accumulator, or a dot of two loads that nothing else uses")
    lower_lone_dot(ctx, op.operation)


def lower_lone_dot(ctx, dot) -> None:
    """A dot outside any loop (a single K step, e.g. after a one-trip loop was folded away)."""
    plan, a_load, b_load, store, relu = _check_dot(ctx, dot, dot.operands[2], dot.results[0])

    def emit_aic():
        qs = queues(ctx, plan, mixed=store is None)
        with _each_matrix(ctx, dot):
            c1 = A.op("alloc_tensor", [], A.local_type(ir.Type.parse(plan.acc_dtype)), queue=qs["CO1"],
                      name="c1Local")
            _emit_step(ctx, plan, qs, a_load, b_load, c1, ir.Type.parse(plan.in_dtype),
                       arith.ConstantOp(ir.IntegerType.get_signless(1), 1).result)
            _finish_tile(ctx, qs, c1, store, plan, relu, elem_of(dot.results[0].type))

    if store is None:
        return emit_mixed(ctx, dot, emit_aic, plan, dot.results[0])
    emit_aic()
    ctx.vmap[dot.results[0]] = None


@rule("tensor.extract_slice")
def _lower_extract_slice(ctx, op):
    """Rows of a dot's result, read by an epilogue in chunks (cube_mixed.lower_slice)."""
    lower_slice(ctx, op.operation)


def keeps_whole(op) -> bool:
    """The ops `xb-strip-mine` leaves whole when it splits a kernel's epilogue into row chunks: a plain
    Cube K loop of a dot and a dot (their accumulator lives in L0C and the workspace, not in UB)."""
    return op.name == "xb.dot" or (op.name == "scf.for" and k_loop_dot(op) is not None)


@before_walk
def claim_dots(ctx) -> None:
    """Before the walk, decide how each dot runs. A plain K loop's dot stays with its loop; a dot of
    two loads that only it reads, outside a K loop, is a lone dot (its loads are claimed now: the
    walk reaches them first). If any other dot exists, every dot of the kernel is handed over to
    the vector core (cube_handoff.py): the kernel is then sectioned by core as a whole. So are they
    when the plan says so (`dots` HAND_OFF: the planner's answer to a Cube-only kernel that also has
    vector work of its own, or to a dot store Fixpipe cannot write)."""
    dots, stack = [], [ctx.xb_module.operation]
    while stack:
        o = stack.pop()
        for region in o.regions:
            for b in region.blocks:
                stack.extend(x.operation for x in reversed(list(b.operations)))
        if o.name == "xb.dot":
            dots.append(o)
    k_loops, lone, other = [], [], []
    for o in dots:
        parent = o.parent
        if parent is not None and parent.name == "scf.for" and (k := k_loop_dot(parent)) is not None and k == o:
            # a vector epilogue (emit_mixed) needs the K loop at the top level; inside another loop or
            # an `if` (a persistent tile loop), the dot is handed over step by step instead
            nested = parent.parent is None or parent.parent.name != "func.func"
            acc = parent.results[list(parent.regions[0].blocks[0].arguments).index(o.operands[2]) - 1] \
                if o.operands[2] in list(parent.regions[0].blocks[0].arguments) else None
            (other if nested and acc is not None and match_epilogue(acc) is None else k_loops).append(o)
            continue
        loads = [owner_of(v) for v in o.operands[:2]]
        ok = all(x is not None and x.name == "xb.load" and len(users_of(x.results[0])) == 1 and
                 cube_copyable(ctx, x, wrapped=True) for x in loads)
        # a vector epilogue (emit_mixed) takes the rest of the kernel's body: only at the top level
        top = parent is not None and parent.name == "func.func"
        (lone if ok and (top or match_epilogue(o.results[0]) is not None) else other).append(o)
    if other or (dots and ctx.plan.dots == HAND_OFF):  # (the kernel also has vector work of its own)
        return plan_handoffs(ctx, k_loops + lone + other)
    for o in lone:
        ctx.absorb([owner_of(v) for v in o.operands[:2]])
        state(ctx).lone.add(o)


def _emit_loop(ctx, loop, body, dot, a_load, b_load, plan, store, relu, bias=None):
    if store is None:
        used = [r for r in loop.results if not str(r.type).startswith("tensor<") and any(True for _ in r.uses)]
        if used:  # the K loop runs in the AIC section: its scalars do not reach the AIV section
            raise ctx.error("a scalar that the dot's K loop carries is used after the loop, whose epilogue runs "
                            "on the vector core; this is not supported yet (recompute it after the loop)")
        return emit_mixed(ctx, loop, lambda: _emit_loop_aic(ctx, loop, body, dot, a_load, b_load, plan, None, relu),
                           plan, loop.results[list(body.arguments).index(dot.operands[2]) - 1])
    _emit_loop_aic(ctx, loop, body, dot, a_load, b_load, plan, store, relu, bias)


@contextmanager
def _each_matrix(ctx, dot):
    """Emit the body once per matrix of a batched dot (a loop in the generated code), else once."""
    if not is_batched(dot):
        yield
        return
    st = state(ctx)
    loop = ctx.for_range(0, shape_of(dot.operands[0].type)[0])
    loop.attributes["name"] = ir.StringAttr.get("batch")
    st.batch = loop.induction_variable
    try:
        with ir.InsertionPoint(loop.body):
            yield
            scf.YieldOp([])
    finally:
        st.batch = None


def _emit_loop_aic(ctx, loop, body, dot, a_load, b_load, plan, store, relu, bias=None):
    qs = queues(ctx, plan, mixed=store is None)
    if is_batched(dot):
        used = [r for r in loop.results if not str(r.type).startswith("tensor<") and any(True for _ in r.uses)]
        if used:
            raise ctx.error("a scalar that the K loop of a batched dot carries is used after the loop; the loop "
                            "runs once per matrix of the batch: recompute it after the loop")
        with _each_matrix(ctx, dot):
            _emit_k_loop(ctx, loop, body, dot, a_load, b_load, plan, store, relu, qs)
        for r in loop.results:
            ctx.vmap[r] = None
        return
    _emit_k_loop(ctx, loop, body, dot, a_load, b_load, plan, store, relu, qs, bias)


def _emit_k_loop(ctx, loop, body, dot, a_load, b_load, plan, store, relu, qs, bias=None):
    in_t = ir.Type.parse(plan.in_dtype)
    bias2 = None
    if bias is not None:  # the bias row into the BiasTable, once per output tile (before the K loop)
        load, acc = bias
        with ctx.located(load):
            gm = ctx.at(ctx.vmap[acc.root], ctx.gm_offset(load.operands[0], acc.base))
            bias2 = bias_to_table(ctx, plan, gm, ctx.named(extent(ctx, acc.col_limits, acc.cols), "biasValid"))
    c1 = A.op("alloc_tensor", [], A.local_type(ir.Type.parse(plan.acc_dtype)), queue=qs["CO1"], name="c1Local")
    iv_xb = body.arguments[0]
    y = body.operations[len(body.operations) - 1]
    scalars = [k for k, init in enumerate(loop.operands[3:]) if not str(init.type).startswith("tensor<") and
               "!xb.ptr" not in str(init.type)]  # carried pointers are seeded instead
    lb, step = (ctx.const_of(ctx.scalar(v)) for v in (loop.operands[0], loop.operands[2]))
    counted = _carries_pointers(loop) and (lb, step) != (0, 1)  # `range(0, K, BK)`: count the iterations
    new = scf.ForOp(ctx.scalar(loop.operands[0]), ctx.scalar(loop.operands[1]), ctx.scalar(loop.operands[2]),
                    [ctx.scalar(loop.operands[3 + k]) for k in scalars] + ([ctx.c64(0)] if counted else []))
    iv_name = ctx.loop_name(loop)
    if iv_name:
        new.attributes["name"] = ir.StringAttr.get(iv_name)
    ctx.vmap[iv_xb] = new.induction_variable
    for j, k in enumerate(scalars):  # plain loop-carried scalars (`k0 += BLOCK_K`, a block pointer's offsets)
        ctx.vmap[body.arguments[k + 1]] = new.inner_iter_args[j]
    if counted:
        done = new.inner_iter_args[len(scalars)]
        ctx.vmap[done] = done  # a lowered counter stands for itself in the pointer structure's polynomials
        _seed_pointers(ctx, loop, body, ctx.ps.opaque(done))
    else:
        _seed_pointers(ctx, loop, body, Lin.var(ctx.ps.key(iv_xb)))
    with ctx.located(dot):
        plan, advance = _deepen(ctx, loop, body, new, dot, a_load, b_load, plan, scalars,
                                new.inner_iter_args[len(scalars)] if counted else None, bias2 is not None)
    with ir.InsertionPoint(new.body):
        _lower_ops(ctx, [o.operation for o in body.operations], {dot, a_load, b_load})
        with ctx.located(dot):
            first = arith.CmpIOp(arith.CmpIPredicate.eq, new.induction_variable, ctx.scalar(loop.operands[0])).result
            steps = _steps_here(ctx, loop, new, plan.k_depth) if plan.k_depth > 1 else None
            _emit_step(ctx, plan, qs, a_load, b_load, c1, in_t, first, bias2, steps)
        with ctx.located(y):
            more = [ctx.add(new.inner_iter_args[len(scalars)], ctx.c64(plan.k_depth))] if counted else []
            scf.YieldOp([_advanced(ctx, new.inner_iter_args[j], advance[k], plan.k_depth) if k in advance else
                         ctx.scalar(y.operands[k]) for j, k in enumerate(scalars)] + more)
    for r in loop.results:
        ctx.vmap[r] = None
    for j, k in enumerate(scalars):
        ctx.vmap[loop.results[k]] = new.results[j]
    if bias2 is not None:
        A.op("free_tensor", [bias2], queue=qs["C2"])
    _finish_tile(ctx, qs, c1, store, plan, relu, elem_of(dot.results[0].type))


def _deepen(ctx, loop, body, new, dot, a_load, b_load, plan, scalars, done, bias: bool):
    """(plan, advancing scalars) of the K loop `loop` (lowered as `new`): an L1 tile several of its steps deep
    (tiling.deepen) when its steps read consecutive K slices (cube/depth.py), else `plan`. A deeper plan steps
    `new` by k_depth iterations, widens the kernel's L1 queues and replaces the dot's entry in the metadata;
    the scalars the loop carries (`k0 += BLOCK_K`, a block pointer's offsets) must each advance by a
    loop-invariant amount, returned as {their index among the loop's carried values: the xb amount}, which
    the lowered loop then adds k_depth times a step."""
    if is_batched(dot) or not getattr(ctx.opts, "cube_depth", True):
        return plan, {}
    step = ctx.const_of(ctx.scalar(loop.operands[2]))
    deep = deepen(plan, plan.base_n * 4 if bias else 0)
    deep = deepen_l0(deep)  # an L0 step of several of the deep tile's K slices where L0A/L0B hold it
    if step is None or step <= 0 or deep is plan:
        return plan, {}
    moves = {ctx.ps.key(body.arguments[0]): Lin.const(step)}
    if done is not None:
        moves[ctx.ps.key(done)] = Lin.const(1)
    advance = _advancing(ctx, loop, body, scalars)
    if advance is None or any(any(True for _ in loop.results[k].uses) for k in scalars):
        return plan, {}  # (a carried scalar read after the loop would end k_depth steps' worth past its value)
    for k, x in advance.items():
        moves[ctx.ps.key(body.arguments[k + 1])] = ctx.ps.scalar(x)
    accs = []
    for load in (a_load, b_load):
        seg = segments(load)
        accs.append(ctx.ps.tile_access(load.operands[0], load.operands[1] if seg[1] else None, wrapped=True))
    if not steps_side_by_side(Steps(ctx.ps, loop, moves), *accs, plan.block_k):
        return plan, {}
    with ir.InsertionPoint(new.operation):  # the lowered loop moves k_depth of the kernel's steps a time
        st = new.operation.operands[2]
        new.operation.operands[2] = arith.ConstantOp(st.type, step * deep.k_depth).result
    widen(ctx, deep)
    entry = next(e for e in reversed(ctx.meta["cube"]) if e["plan"] == plan.describe())
    entry.update(plan=deep.describe(), usage=deep.usage(), tiles=deep.tiles, k_depth=deep.k_depth, l1_k=deep.l1_k)
    return deep, advance


def _advancing(ctx, loop, body, scalars) -> dict | None:
    """{k: x} when every carried scalar k of the loop is yielded as `arg + x` (or `x + arg`) with x the same in
    every step (built from values defined before the loop and constants); None otherwise."""
    y = body.operations[len(body.operations) - 1]
    still = Steps(ctx.ps, loop, {})
    out = {}
    for k in scalars:
        arg, o = body.arguments[k + 1], owner_of(y.operands[k])
        if o is None or o.name != "arith.addi" or arg not in list(o.operands):
            return None
        x = o.operands[1] if o.operands[0] == arg else o.operands[0]
        if x == arg or not still.known(ctx.ps.scalar(x)):
            return None
        out[k] = x
    return out


def _advanced(ctx, arg, x, depth: int):
    """`arg + depth * x` in the type of the carried scalar `arg` (x: the xb amount of one step)."""
    xv = ctx.scalar(x)
    c = ctx.const_of(xv)
    by = arith.ConstantOp(xv.type, c * depth).result if c is not None else \
        arith.MulIOp(xv, arith.ConstantOp(xv.type, depth).result).result
    return arith.AddIOp(arg, by).result


def _steps_here(ctx, loop, new, depth: int):
    """The kernel's K steps the deep tile at `new`'s index holds: min(depth, the steps left), as an i64."""
    iv, ub = ctx.to64(new.induction_variable), ctx.to64(ctx.scalar(loop.operands[1]))
    step = ctx.const_of(ctx.scalar(loop.operands[2]))
    left = ctx.sub(ub, iv)
    if step != 1:
        left = arith.DivSIOp(ctx.add(left, ctx.c64(step - 1)), ctx.c64(step)).result
    return ctx.named(ctx.smin(left, ctx.c64(depth)), "kStepsHere")


def _finish_tile(ctx, qs, c1, store, plan, relu, elem: str):
    A.op("enque", [c1], queue=qs["CO1"])
    c1d = A.op("deque", [], A.local_type(ir.Type.parse(plan.acc_dtype)), queue=qs["CO1"], name="c1Out")
    if store is not None:
        _emit_fixpipe(ctx, store, c1d, plan, relu)
    else:
        to_workspace(ctx, c1d, plan, elem)
    A.op("free_tensor", [c1d], queue=qs["CO1"])
    if store is None:
        tile_ready(ctx)


def _emit_step(ctx, plan, qs, a_load, b_load, c1, in_t, first, bias=None, steps=None):
    """One step of the kernel's K loop: copy the A and B slices to L1, then baseK-wide multiplies (the first
    step's first one from the BiasTable row `bias`, when given). With `steps` (an i64 value: a deep plan's
    tile, cube/depth.py), the `steps` steps from this one: their slices in one copy each, their K the first
    step's K limits over `steps` x BLOCK_K."""
    out = state(ctx).out
    (a, a_gm, a_on), (b, b_gm, b_on) = _access(ctx, a_load, out, 0), _access(ctx, b_load, out, 1)
    if out is not None:
        _check_stored_within(ctx, out, (a_load, a), (b_load, b))
    # rows of A (and C) in this program; none in a matrix of the batch that is masked off
    m_valid = ctx.named(a_on(extent(ctx, a.row_limits, a.rows)), "mValid")
    k_valid = ctx.named(_k_extent(ctx, a.col_limits, a.cols, steps), "kValid")  # K left in this step of the K loop
    n_valid = ctx.named(b_on(extent(ctx, b.col_limits, b.cols)), "nValid")
    k_rows = _k_extent(ctx, b.row_limits, b.rows, steps)
    if a.col_limits != b.row_limits:  # the Mmad's K: where both operands are valid (masked lanes are 0)
        k_valid = ctx.smin(k_valid, k_rows)
    a1, b1 = (to_l1(ctx, plan, qs, Operand(key, gm, rows, cols, None), in_t)
              for key, gm, rows, cols in (("a", a_gm, m_valid, k_valid), ("b", b_gm, k_rows, n_valid)))
    mmad_steps(ctx, plan, qs, a1, b1, False, False, k_valid, c1, in_t, first, bias)
    A.op("free_tensor", [a1], queue=qs["A1"])
    A.op("free_tensor", [b1], queue=qs["B1"])


def _k_extent(ctx, limits, size: int, steps):
    """The valid K of one step (`extent`), or of `steps` steps of a deep tile: min(limits, steps * size), >= 0."""
    if steps is None:
        return extent(ctx, limits, size)
    v = ctx.mul(steps, ctx.c64(size))
    for lim in limits:
        v = ctx.smin(v, ctx.lin(lim))
    return ctx.smax(v, ctx.c64(0))


def _check_stored_within(ctx, store, a, b) -> None:
    """The Cube computes the rows of A and the columns of B the operands' masks load (L0C holds
    nothing else), and Fixpipe stores the store's extent: a store that may write rows, columns or
    matrices the operands leave unloaded (where the dot is 0, from `other=0.0`) would write stale
    L0C there. Such a store is refused; masked as the operands are, it is right."""
    seg = segments(store)
    mask = store.operands[2] if seg[2] else None
    if state(ctx).batch is not None:
        sbt = batch_tile(ctx.ps, store.operands[0], mask)
        sacc, s_batch = (sbt.acc, sbt.limits) if sbt is not None else (None, ())
        batches = []
        for load, _ in (a, b):
            lseg = segments(load)
            lbt = batch_tile(ctx.ps, load.operands[0], load.operands[1] if lseg[1] else None)
            batches += list(lbt.limits) if lbt is not None else []
    else:
        sacc, s_batch, batches = ctx.ps.tile_access(store.operands[0], mask), (), []
    if sacc is None:
        return  # the Fixpipe refuses the store's shape itself
    missing = [lim for lim in a[1].row_limits if lim not in sacc.row_limits] + \
        [lim for lim in b[1].col_limits if lim not in sacc.col_limits] + [lim for lim in batches if lim not in s_batch]
    if missing:
        # the planner answers with the dot handed to the vector core, whose store takes any shape
        raise VectorCoreNeeded(ctx.error(
            "this store of a dot's result may write rows, columns or matrices that the dot's operands do not "
            "load (their masks drop them; the product is 0 there): the Cube unit computes only what the "
            "operands load, so mask the store as the operands are masked "
            "(e.g. `mask=(rows < M)[:, None] & (cols < N)[None, :]`)", store), "dot_store")


def _gm_at(ctx, load, acc):
    """The operand's GM tile and its row stride, built when the copy needs them."""
    return lambda: (ctx.at(ctx.vmap[acc.root], ctx.gm_offset(load.operands[0], acc.base)), ctx.lin(acc.row_stride))


def _emit_fixpipe(ctx, store, c1, plan, relu):
    seg = segments(store)
    mask = store.operands[2] if seg[2] else None
    index = state(ctx).batch
    bt = batch_tile(ctx.ps, store.operands[0], mask) if index is not None else None
    acc = bt.acc if bt is not None else ctx.ps.tile_access(store.operands[0], mask) if index is None else None
    out = elem_of(store.operands[1].type)
    with ctx.located(store):
        if acc is None or (acc.rows, acc.cols) != (plan.block_m, plan.block_n):
            raise VectorCoreNeeded(ctx.error("the dot's result must be stored as a 2-D tile with contiguous rows "
                                             "(a batched dot's as such a tile per matrix)"), "dot_store")
        _no_lower_limits(ctx, acc, "store of a dot's result")
        m = extent(ctx, acc.row_limits, acc.rows)
        n = extent(ctx, acc.col_limits, acc.cols)
        for u in acc.uniform:
            on = arith.CmpIOp(arith.CmpIPredicate.sgt, ctx.lin(u), ctx.c64(0)).result
            m = arith.SelectOp(on, m, ctx.c64(0)).result
        if bt is not None:
            m = gate(ctx, bt, index, m)
            gm = tile_at(ctx, bt, store.operands[0], index)
        else:
            gm = ctx.at(ctx.vmap[acc.root], ctx.gm_offset(store.operands[0], acc.base))
        stride = ctx.lin(acc.row_stride)
        if (c := acc.row_stride.as_const()) is not None and c < acc.cols:
            # Fixpipe needs dstStride >= nSize. Rows closer than that are apart only in the code when
            # one row is stored (a specialized M or N of 1): then the stride is not used
            one_row = arith.CmpIOp(arith.CmpIPredicate.sle, m, ctx.c64(1)).result
            stride = arith.SelectOp(one_row, arith.MaxSIOp(stride, n).result, stride).result
        A.op("fixpipe", [gm, c1, n, m, ctx.c64(plan.base_m), stride], quant=QUANT[(plan.acc_dtype, out)], relu=relu)




# ----- program joining (docs/DESIGN.md, "Program joining") ----------------------------------------------------------
# A core runs several programs of a small-tile dot together: the grid loop steps over groups of `join` consecutive
# programs of the core's contiguous range of programs, every program's scalars are lowered once per program
# (the ops before the K loop, with its program id), and one K loop copies, for each program, its A and B tiles
# into its slot of the L1 buffers, unless an earlier program of the group copies the same tile (same GM offset,
# extents and row stride: compared at run time, so any pid map is right), then multiplies each program's slots
# into its own L0C accumulator. Programs past the end of the core's range alias the group's first program:
# their copies are skipped by the same comparison, their multiplies and epilogues by `active`.

_PROLOGUE_OPS = ("xb.program_id", "xb.splat", "xb.broadcast", "xb.expand_dims", "xb.arange", "xb.addptr",
                 "xb.reshape", "xb.num_programs")


class JoinedGroup:
    """The programs of a joined kernel: this core's first program and count (i64 values before the grid loop),
    and per program of the group one iteration of the grid loop runs, (its lowered values, `active`: i1, None
    for the first, always active)."""

    def __init__(self, start, count, programs):
        self.start, self.count, self.programs = start, count, programs


def _on_pid(v, seen=None) -> bool:
    """Whether the xb value `v` may depend on the program id (conservative: any value of a region op does)."""
    seen = set() if seen is None else seen
    stack = [v]
    while stack:
        x = stack.pop()
        owner = x.owner
        if isinstance(owner, ir.Block):
            if owner.owner is not None and owner.owner.operation.name != "func.func":
                return True
            continue
        op = owner.operation if hasattr(owner, "operation") else owner
        if op in seen:
            continue
        seen.add(op)
        if op.name in ("xb.program_id",) or op.regions:
            return True
        stack.extend(op.operands)
    return False


def _index_op(o) -> bool:
    """Scalar or index arithmetic, splats and pointer offsets: what a joined program lowers once more."""
    return not o.regions and (o.name.startswith("arith.") or o.name in _PROLOGUE_OPS)


def _count_dots(ctx) -> int:
    n, stack = 0, [ctx.xb_module.operation]
    while stack:
        o = stack.pop()
        for region in o.regions:
            for b in region.blocks:
                stack.extend(x.operation for x in b.operations)
        n += o.name == "xb.dot"
    return n


def _joinable(ctx, loop, body, dot, plan, store, bias):
    """The joined plan (tiling.join) of this K loop's dot when its kernel can run several programs a core
    together, else None: the option `cube_join` on; the kernel's only dot, an f16/bf16 dot in a K loop at the
    kernel's top level, not batched, without a bias row; the ops before the loop scalar or index arithmetic
    (each program lowers them again); loop bounds that do not depend on the program id; the loop carrying no
    scalar but its pointers; after the loop, a Fixpipe epilogue and the index arithmetic of its store (a vector
    epilogue runs once per program in the AIV section); no resident load or row cache (they assume one program
    per iteration of the grid loop)."""
    if not getattr(ctx.opts, "cube_join", True) or bias is not None or is_batched(dot) or plan.esize != 2:
        return None
    parent = loop.operation.parent
    if parent is None or parent.name != "func.func" or _count_dots(ctx) != 1:
        return None
    if ctx.resident_ops or ctx.ext.row_cache or state(ctx).queues:
        return None
    ops = [o.operation for o in loop.operation.block.operations]
    at = ops.index(loop.operation)
    if not all(_index_op(o) for o in ops[:at]):
        return None
    if any(_on_pid(v) for v in list(loop.operands)[:3]):
        return None
    if any(not str(v.type).startswith("tensor<") and "!xb.ptr" not in str(v.type) for v in loop.operands[3:]):
        return None
    if store is not None and any(o.name != "func.return" and o not in ctx.absorbed and not _index_op(o)
                                 for o in ops[at + 1:]):
        return None  # (index and pointer arithmetic the Fixpipe's store reads through the pointer structure)
    operands = {owner_of(v) for v in dot.operands[:2]}
    if not all(_index_op(o) or o == dot or o in operands or o.name == "scf.yield"
               for o in (x.operation for x in body.operations)):
        return None  # (the body runs once per program, ungated: nothing with an effect of its own)
    if any(o.name in ("xb.program_id", "xb.print", "xb.assert") for o in walk_ops(ops[at + 1:])):
        return None  # (an epilogue lowered per program reads its program id only through the prologue)
    if any(o.name == "xb.program_id" for o in walk_ops([x.operation for x in body.operations])):
        return None  # (nor does the K loop's body: it is lowered once per program with the prologue's values)
    joined = join_plan(plan, pooled=getattr(ctx.opts, "cube_pool", True))
    return joined if joined.join > 1 else None


def _program_id_of(ctx, pid, axis: int):
    """program_id(axis) of the program `pid` (the linear program index), at the insertion point."""
    gx, gy = ctx.to64(ctx.grid_x), ctx.to64(ctx.grid_y)
    if axis == 0:
        v = arith.RemSIOp(pid, gx).result
    elif axis == 1:
        v = arith.RemSIOp(arith.DivSIOp(pid, gx).result, gy).result
    else:
        v = arith.DivSIOp(pid, ctx.mul(gx, gy)).result
    return arith.TruncIOp(ctx.i32, v).result


# A launch of at least ALIGNED_GROUPS x join programs a core hands each core whole groups of `join` consecutive
# programs starting at a multiple of `join` (cores then differ by at most one group: 1/ALIGNED_GROUPS of a core's
# work); a smaller one hands out single programs (cores differ by at most one program).
ALIGNED_GROUPS = 16
# The largest partner step a joined kernel looks for (_pair_step): a group of four is then p, p + 1, p + v,
# p + v + 1 (a 2 x 2 block of tiles in a grouped order, v = GROUP_M, or in a row- or column-major one, v = the
# tiles of a row or column up to PAIR_MAX).
PAIR_MAX = 64


def _is_scalar(v) -> bool:
    t = str(v.type)
    return not t.startswith("tensor<") and "!xb.ptr" not in t


def _frontier(loop, body, load, prologue: set):
    """The scalars of the prologue, depending on the program id, through which the pointer of dot operand `load`
    depends on it (where they enter a block or a pointer: `pid_m * BLOCK_M` of `pid_m * BLOCK_M + arange`);
    two programs whose frontier values are equal read the same tile. None when the pointer reads a
    program-dependent scalar made elsewhere (in the K loop)."""
    y = body.operations[len(body.operations) - 1]
    out, seen, stack = [], set(), [load.operands[0]]
    while stack:
        x = stack.pop()
        owner = x.owner
        if isinstance(owner, ir.Block):
            if owner == body:
                k = list(body.arguments).index(x)
                if k > 0:  # a carried value: its start and its step
                    for nxt in (loop.operands[3 + k - 1], y.operands[k - 1]):
                        if nxt not in seen:
                            seen.add(nxt)
                            stack.append(nxt)
                continue
            if owner.owner is not None and owner.owner.operation.name != "func.func":
                return None
            continue
        op = owner.operation if hasattr(owner, "operation") else owner
        if op.name == "xb.program_id" or op.regions:
            return None
        for v in op.operands:
            if v in seen:
                continue
            seen.add(v)
            if _is_scalar(v):
                if _on_pid(v):
                    if isinstance(v.owner, ir.Block) or v.owner.operation not in prologue or \
                            str(v.type) not in ("i1", "i8", "i16", "i32", "i64", "index"):
                        return None
                    out.append(v)
                continue
            stack.append(v)
    return out


def _pair_step(ctx, loop, body, a_load, b_load, prologue):
    """(v, on_b): the step v (an i64 value before the grid loop, even, 2 when none is found) such that programs 0
    and 1 share one operand tile and programs 0 and v the other, the smallest up to PAIR_MAX and num_programs - 2,
    and whether programs 0 and 1 share their B tile, not their A tile (an i1: a grouped order's columns): the
    prologue is evaluated for programs 0, 1 and each candidate v (scalar work once per core), and tiles are
    compared through their frontier scalars (_frontier). A hint only: which programs a group takes changes
    which copies the run-time comparison (_slots) skips, never the result. None when the frontier of an
    operand cannot be found (a constant 2 then)."""
    keep = set(prologue)
    fronts = [_frontier(loop, body, ld, keep) for ld in (a_load, b_load)]
    if any(f is None for f in fronts) or not any(fronts):
        return None
    base = ctx.vmap

    def keys(pid):
        vmap = dict(base)
        ctx.vmap = vmap
        ctx.program_id = lambda axis: _program_id_of(ctx, pid, axis)
        try:
            _lower_ops(ctx, prologue, set())
            return [[ctx.scalar(x) for x in f] for f in fronts]
        finally:
            del ctx.program_id
            ctx.vmap = base

    def same(k1, k2):
        eq = arith.ConstantOp(ir.IntegerType.get_signless(1), 1).result
        for x, y in zip(k1, k2):
            eq = arith.AndIOp(eq, arith.CmpIOp(arith.CmpIPredicate.eq, x, y).result).result
        return eq

    with ctx.before_grid:
        last = ctx.sub(ctx.num_programs, ctx.c64(1))  # (only programs of the launch are evaluated)
        k0, k1 = keys(ctx.c64(0)), keys(ctx.smin(ctx.c64(1), last))
        share1 = [same(k0[i], k1[i]) for i in (0, 1)]
        ub = ctx.smin(ctx.c64(PAIR_MAX + 1), last)
        loop_v = scf.ForOp(ctx.c64(2), ub, ctx.c64(2), [ctx.c64(0)])
        with ir.InsertionPoint(loop_v.body):
            v, best = loop_v.induction_variable, loop_v.inner_iter_args[0]
            kv = keys(v)
            sharev = [same(k0[i], kv[i]) for i in (0, 1)]
            ok = arith.OrIOp(arith.AndIOp(share1[0], sharev[1]).result,
                             arith.AndIOp(share1[1], sharev[0]).result).result
            ok = arith.AndIOp(ok, arith.CmpIOp(arith.CmpIPredicate.eq, best, ctx.c64(0)).result).result
            scf.YieldOp([arith.SelectOp(ok, v, best).result])
        found = loop_v.results[0]
        none = arith.CmpIOp(arith.CmpIPredicate.eq, found, ctx.c64(0)).result
        swap = arith.AndIOp(share1[1], arith.XOrIOp(share1[0], arith.ConstantOp(
            ir.IntegerType.get_signless(1), 1).result).result).result
        return ctx.named(arith.SelectOp(none, ctx.c64(2), found).result, "pairStep"), ctx.named(swap, "pairOnB")


def _most_a_core(ctx, unit, bnum):
    """The programs the busiest core gets when cores take whole units of `unit` programs (units / cores, one more
    on the first ones), capped by the launch."""
    units = arith.DivSIOp(ctx.add(ctx.num_programs, ctx.sub(unit, ctx.c64(1))), unit).result
    most = arith.DivSIOp(ctx.add(units, ctx.sub(bnum, ctx.c64(1))), bnum).result
    return ctx.smin(ctx.mul(most, unit), ctx.num_programs)


def _group(ctx, join: int, prologue, pair=None) -> JoinedGroup:
    """Give each core a contiguous range of the programs, make the grid loop step over it `join` programs at a
    time, and lower the ops before the K loop once more for each program of the group. The range is whole
    units of u programs, u = join when the launch has ALIGNED_GROUPS groups a core or more (groups then start
    at multiples of `join`, which a grouped or row-major pid order makes share operands), else 1: the first
    (units mod cores) cores take one unit more than units / cores.

    `pair` (join 4: (loop, body, A load, B load), _pair_step): with the partner step v found, the groups of the
    core's range are 2 x 2 blocks where they can be: each whole run of 2v programs of the range gives v / 2 groups
    q, q + 1, q + v, q + v + 1 (q = the run's start + 2i); of the r programs left (r < 2v), the first h (h = r - v
    rounded down to even, 0 when r <= v) pair with the h from v on the same way; the other r - 2h programs, in
    order, make groups of consecutive ones (the last one cut short, as without pairs). The groups are as many as
    ceil(count / 4) (2v is a multiple of 4). The unit is 2v instead of u when that leaves the busiest core no
    more programs. v = 2 gives consecutive groups."""
    found = _pair_step(ctx, *pair, prologue) if pair is not None and join in (4, 8) else None
    step, on_b = found if found is not None else (None, None)
    with ctx.before_grid:
        bidx, bnum = A.op("block_idx", [], ctx.i64), A.op("block_num", [], ctx.i64)
        big = arith.CmpIOp(arith.CmpIPredicate.sge, ctx.num_programs,
                           ctx.mul(bnum, ctx.c64(ALIGNED_GROUPS * join))).result
        unit = arith.SelectOp(big, ctx.c64(join), ctx.c64(1)).result
        if step is not None:
            run = ctx.mul(step, ctx.c64(2))
            wider = arith.AndIOp(
                arith.CmpIOp(arith.CmpIPredicate.sgt, step, ctx.c64(2)).result,
                arith.CmpIOp(arith.CmpIPredicate.sle, _most_a_core(ctx, run, bnum),
                             _most_a_core(ctx, unit, bnum)).result).result
            unit = arith.SelectOp(wider, run, unit).result
        unit = ctx.named(unit, "unit")
        units = arith.DivSIOp(ctx.add(ctx.num_programs, ctx.sub(unit, ctx.c64(1))), unit).result
        per_core = arith.DivSIOp(units, bnum).result
        extra = arith.RemSIOp(units, bnum).result
        start = ctx.named(ctx.mul(ctx.add(ctx.mul(bidx, per_core), ctx.smin(bidx, extra)), unit), "firstProgram")
        more = arith.ExtUIOp(ctx.i64, arith.CmpIOp(arith.CmpIPredicate.slt, bidx, extra).result).result
        end = ctx.named(ctx.smin(ctx.add(start, ctx.mul(ctx.add(per_core, more), unit)), ctx.num_programs),
                        "endProgram")
        count = ctx.named(ctx.sub(end, start), "programsHere")
        if step is not None:
            run = ctx.mul(step, ctx.c64(2))
            per_run = arith.DivSIOp(step, ctx.c64(2)).result
            runs = ctx.named(arith.DivSIOp(count, run).result, "pairedRuns")
            in_runs = ctx.named(ctx.mul(runs, per_run), "runGroups")
            rest_at = ctx.mul(runs, run)  # the first program after the whole runs (from start)
            rest = ctx.sub(count, rest_at)
            over = ctx.smax(ctx.sub(rest, step), ctx.c64(0))
            h = ctx.named(ctx.sub(over, arith.RemSIOp(over, ctx.c64(2)).result), "pairedLeft")
            paired = ctx.named(ctx.add(in_runs, arith.DivSIOp(h, ctx.c64(2)).result), "pairedGroups")
            left = ctx.sub(rest, ctx.mul(h, ctx.c64(2)))  # programs in consecutive groups
            first_part = ctx.sub(ctx.smin(step, rest), h)  # of them, those before the h paired ones above v
    grid = ctx.grid.operation
    grid.operands[0] = start
    grid.operands[1] = end
    grid.operands[2] = _const_before(ctx, join)
    base = ctx.vmap
    if step is None:
        pid0 = ctx.pid
        members = [(pid0, None)]
        for j in range(1, join):
            p = ctx.add(pid0, ctx.c64(j))
            active = arith.CmpIOp(arith.CmpIPredicate.slt, p, end).result
            members.append((ctx.named(arith.SelectOp(active, p, pid0).result, f"pid{j}"), active))
    else:
        # groups of 4 (quads) as above; a pooled join of 8 takes quads 2i and 2i + 1 (a 4 x 2 block of tiles
        # where runs hold an even number of quads: v a multiple of 4), each in the order that puts programs
        # sharing an A tile next to each other (q, q + v, q + 1, q + v + 1 when q and q + 1 share B): their Mmads
        # may then run as one over both B tiles (_joined_slice)
        with ctx.before_grid:
            second = (ctx.c64(1), step) if join == 4 else (arith.SelectOp(on_b, step, ctx.c64(1)).result,
                                                           arith.SelectOp(on_b, ctx.c64(1), step).result)
        g_join = arith.DivSIOp(ctx.sub(ctx.pid, start), ctx.c64(join)).result
        raw = []
        for t in range(join // 4):
            g = g_join if join == 4 else ctx.add(ctx.mul(g_join, ctx.c64(join // 4)), ctx.c64(t))
            in_pair = arith.CmpIOp(arith.CmpIPredicate.slt, g, paired).result
            in_run = arith.CmpIOp(arith.CmpIPredicate.slt, g, in_runs).result
            q_run = ctx.add(ctx.mul(arith.DivSIOp(g, per_run).result, run),
                            ctx.mul(arith.RemSIOp(g, per_run).result, ctx.c64(2)))
            q_left = ctx.add(rest_at, ctx.mul(ctx.sub(g, in_runs), ctx.c64(2)))
            q = ctx.add(start, arith.SelectOp(in_run, q_run, q_left).result)
            first_at = ctx.mul(ctx.sub(g, paired), ctx.c64(4))  # the quad's first place among the consecutive ones

            for j in range(4):
                # program j of a quad of consecutive ones, whether it exists: place e = first_at + j among them
                e = ctx.add(first_at, ctx.c64(j))
                beyond = arith.CmpIOp(arith.CmpIPredicate.sge, e, first_part).result
                at = ctx.add(ctx.add(ctx.add(start, rest_at), h),
                             ctx.add(e, arith.SelectOp(beyond, h, ctx.c64(0)).result))
                exists = arith.CmpIOp(arith.CmpIPredicate.slt, e, left).result
                p = arith.SelectOp(in_pair, ctx.add(q, (ctx.c64(0), *second, ctx.add(step, ctx.c64(1)))[j]),
                                   at).result
                raw.append((p, arith.OrIOp(in_pair, exists).result))
        pid0 = ctx.named(raw[0][0], "pid0")
        members = [(pid0, None)]
        for j in range(1, join):
            p, active = raw[j]
            members.append((ctx.named(arith.SelectOp(active, p, pid0).result, f"pid{j}"), active))
    programs = []
    for j, (pid, active) in enumerate(members):
        vmap = dict(base)
        ctx.vmap = vmap
        ctx.program_id = lambda axis, pid=pid: _program_id_of(ctx, pid, axis)
        try:
            _lower_ops(ctx, prologue, set())
        finally:
            del ctx.program_id
            ctx.vmap = base
        if any(isinstance(vmap.get(r), Tile) for o in prologue for r in o.results):
            raise ctx.error("internal error: a joined Cube kernel's scalar prologue made a block in UB")
        programs.append((vmap, None if active is None else ctx.named(active, f"active{j}")))
    return JoinedGroup(start, count, programs)


def _const_before(ctx, value: int):
    with ctx.before_grid:
        return ctx.c64(value)


def _emit_joined(ctx, loop, body, dot, a_load, b_load, plan, store, relu) -> None:
    """A K loop of `plan.join` programs of a core together (the section's head comment)."""
    st = state(ctx)
    st.join = plan.join
    entry = next(e for e in reversed(ctx.meta["cube"]) if e["plan"] == replace(plan, join=1, slots=0).describe())
    entry.update(plan=plan.describe(), usage=plan.usage(), join=plan.join)
    ops = [o.operation for o in loop.operation.block.operations]
    prologue = ops[:ops.index(loop.operation)]
    st.group = _group(ctx, plan.join, prologue, (loop, body, a_load, b_load))
    acc = loop.results[list(body.arguments).index(dot.operands[2]) - 1]

    def emit_aic():
        qs = queues(ctx, plan, mixed=store is None)
        _joined_k_loop(ctx, loop, body, dot, a_load, b_load, plan, store, relu, qs)

    if store is None:
        emit_mixed(ctx, loop, emit_aic, plan, acc)
    else:
        emit_aic()
    for r in loop.results:
        ctx.vmap[r] = None


def _each_program(ctx, fn) -> None:
    """fn(j) with program j's lowered values, under `if (active_j)` for all but the first."""
    st = state(ctx)
    base = ctx.vmap
    for j, (vmap, active) in enumerate(st.group.programs):
        ctx.vmap = vmap
        try:
            if active is None:
                fn(j)
                continue
            gate = scf.IfOp(active, [], has_else=False)
            with ir.InsertionPoint(gate.then_block):
                fn(j)
                scf.YieldOp([])
        finally:
            ctx.vmap = base


def _slots(ctx, keys):
    """For each program, the first program of the group whose operand tile has the same key (GM tensor, offset,
    extents, row stride): i64 values (program 0: 0)."""
    slots = [ctx.c64(0)]
    for j in range(1, len(keys)):
        s = ctx.c64(j)
        for i in reversed(range(j)):
            if keys[i][0] is not keys[j][0]:
                continue  # another tensor
            eq = None
            for x, y in zip(keys[i][1:], keys[j][1:]):
                e = arith.CmpIOp(arith.CmpIPredicate.eq, x, y).result
                eq = e if eq is None else arith.AndIOp(eq, e).result
            s = arith.SelectOp(eq, slots[i], s).result
        slots.append(ctx.named(s, f"slot{j}"))
    return slots


def _if(cond, fn) -> None:
    gate = scf.IfOp(cond, [], has_else=False)
    with ir.InsertionPoint(gate.then_block):
        fn()
        scf.YieldOp([])


def _joined_k_loop(ctx, loop, body, dot, a_load, b_load, plan, store, relu, qs) -> None:
    st = state(ctx)
    programs = st.group.programs
    in_t = ir.Type.parse(plan.in_dtype)
    local = A.local_type(in_t)
    c1 = A.op("alloc_tensor", [], A.local_type(ir.Type.parse(plan.acc_dtype)), queue=qs["CO1"], name="c1Local")
    iv_xb = body.arguments[0]
    lb, step = (ctx.const_of(ctx.scalar(v)) for v in (loop.operands[0], loop.operands[2]))
    counted = _carries_pointers(loop) and (lb, step) != (0, 1)
    new = scf.ForOp(ctx.scalar(loop.operands[0]), ctx.scalar(loop.operands[1]), ctx.scalar(loop.operands[2]),
                    [ctx.c64(0)] if counted else [])
    iv_name = ctx.loop_name(loop)
    if iv_name:
        new.attributes["name"] = ir.StringAttr.get(iv_name)
    for vmap, _ in programs:
        vmap[iv_xb] = new.induction_variable
    if counted:
        done = new.inner_iter_args[0]
        for vmap, _ in programs:
            vmap[done] = done
        _seed_pointers(ctx, loop, body, ctx.ps.opaque(done))
    else:
        _seed_pointers(ctx, loop, body, Lin.var(ctx.ps.key(iv_xb)))
    with ctx.located(dot):
        plan, _ = _deepen(ctx, loop, body, new, dot, a_load, b_load, plan, [],
                          new.inner_iter_args[0] if counted else None, False)
        if plan.k_depth == 1:
            widen(ctx, plan)
    a_elems, b_elems = plan.a1_bytes // plan.esize, plan.b1_bytes // plan.esize
    a2_elems, b2_elems, c1_elems = plan.a2_bytes // plan.esize, plan.b2_bytes // plan.esize, plan.c1_bytes // 4
    with ir.InsertionPoint(new.body):
        tiles = []
        base = ctx.vmap
        out = st.out
        for j, (vmap, _) in enumerate(programs):
            ctx.vmap = vmap
            try:
                _lower_ops(ctx, [o.operation for o in body.operations], {dot, a_load, b_load})
                with ctx.located(dot):
                    steps = _steps_here(ctx, loop, new, plan.k_depth) if plan.k_depth > 1 else None
                    (a, _, _), (b, _, _) = _access(ctx, a_load, out, 0), _access(ctx, b_load, out, 1)
                    if out is not None and j == 0:
                        _check_stored_within(ctx, out, (a_load, a), (b_load, b))
                    m_valid = ctx.named(extent(ctx, a.row_limits, a.rows), "mValid")
                    k_valid = ctx.named(_k_extent(ctx, a.col_limits, a.cols, steps), "kValid")
                    n_valid = ctx.named(extent(ctx, b.col_limits, b.cols), "nValid")
                    k_rows = _k_extent(ctx, b.row_limits, b.rows, steps)
                    if a.col_limits != b.row_limits:
                        k_valid = ctx.smin(k_valid, k_rows)
                    sides = []
                    for load, acc, rows, cols in ((a_load, a, m_valid, k_valid), (b_load, b, k_rows, n_valid)):
                        stride = ctx.lin(acc.row_stride)
                        if ctx.const_of(stride) == 0:
                            stride = cols  # one row (Operand: srcDValue must be at least a row)
                        sides.append((ctx.vmap[acc.root], ctx.gm_offset(load.operands[0], acc.base), rows, cols,
                                      stride))
                    tiles.append((sides, k_valid))
            finally:
                ctx.vmap = base
        with ctx.located(dot):
            first = arith.CmpIOp(arith.CmpIPredicate.eq, new.induction_variable, ctx.scalar(loop.operands[0])).result
            if plan.slots:
                _pooled_step(ctx, plan, qs, tiles, programs, first, c1, local,
                             (a_elems, b_elems, a2_elems, b2_elems, c1_elems))
            else:
                _slotted_step(ctx, plan, qs, tiles, programs, first, c1, local,
                              (a_elems, b_elems, a2_elems, b2_elems, c1_elems))
        with ctx.located(body.operations[len(body.operations) - 1]):
            scf.YieldOp([ctx.add(new.inner_iter_args[0], ctx.c64(plan.k_depth))] if counted else [])
    A.op("enque", [c1], queue=qs["CO1"])
    c1d = A.op("deque", [], A.local_type(ir.Type.parse(plan.acc_dtype)), queue=qs["CO1"], name="c1Out")
    elem = elem_of(dot.results[0].type)

    def epilogue(j):
        tile = ctx.at(c1d, ctx.c64(j * c1_elems))
        if store is not None:
            _emit_fixpipe(ctx, store, tile, plan, relu)
            return
        st.slot = j
        try:
            to_workspace(ctx, tile, plan, elem)
            tile_ready(ctx)
        finally:
            st.slot = 0
    _each_program(ctx, epilogue)
    A.op("free_tensor", [c1d], queue=qs["CO1"])


def _keys(tiles, side: int):
    """The run-time key of each program's operand tile of `side` (GM tensor, offset, extents, row stride) and the
    program's K extent: two programs with equal keys read the same tile and load the same fractals of it."""
    return [t[0][side] + (t[1],) for t in tiles]


def _slotted_step(ctx, plan, qs, tiles, programs, first, c1, local, elems) -> None:
    """One step of the K loop of a joined plan with a slot per program: each program's tiles copied into its own
    L1 slots unless an earlier program's are the same (_slots), then the K slices (_joined_slice; programs 2u
    and 2u + 1 on one A tile, each with its own B slot, pair their Mmads as in a pooled step)."""
    n = len(programs)
    a_elems, b_elems, a2_elems, b2_elems, c1_elems = elems
    slots = [_slots(ctx, _keys(tiles, side)) for side in (0, 1)]
    l1 = []
    for side, (pos, per, c0) in enumerate((("A1", a_elems, plan.base_m), ("B1", b_elems, plan.l1_k))):
        t = A.op("alloc_tensor", [], local, queue=qs[pos], name=f"{'ab'[side]}1Local")
        for j in range(n):
            root, off, rows, cols, stride = tiles[j][0][side]

            def copy(t=t, j=j, root=root, off=off, rows=rows, cols=cols, stride=stride, c0=c0, per=per):
                nd2nz(ctx, plan, ctx.at(t, ctx.c64(j * per)), ctx.at(root, off), rows, cols, stride, c0)
            if j == 0:
                copy()
            else:
                _if(arith.CmpIOp(arith.CmpIPredicate.eq, slots[side][j], ctx.c64(j)).result, copy)
        A.op("enque", [t], queue=qs[pos])
        l1.append(A.op("deque", [], local, queue=qs[pos], name=f"{'ab'[side]}1"))
    def sides(runs):
        def owns(side):
            return lambda j: runs[j] if j == 0 else arith.AndIOp(
                runs[j], arith.CmpIOp(arith.CmpIPredicate.eq, slots[side][j], ctx.c64(j)).result).result

        def use(side, elems):
            return lambda j: ctx.mul(slots[side][j], ctx.c64(elems))
        return ((lambda j: ctx.at(l1[0], j * a_elems), lambda j: j * a2_elems, owns(0), use(0, a2_elems)),
                (lambda j: ctx.at(l1[1], ctx.c64(j * b_elems)), lambda j: ctx.c64(j * b2_elems), owns(1),
                 use(1, b2_elems)))
    _k_slices(ctx, plan, qs, tiles, [active for _, active in programs], False, first, c1, local, c1_elems, sides,
              (slots[0], slots[1]))
    A.op("free_tensor", [l1[0]], queue=qs["A1"])
    A.op("free_tensor", [l1[1]], queue=qs["B1"])


def _pooled_step(ctx, plan, qs, tiles, programs, first, c1, local, elems) -> None:
    """One step of the K loop of a pooled plan (tiling.join, `slots`): the programs' distinct tiles share one L1
    pool of POOL_TILES tiles (A from its start, B from its end) and `slots` L0A/L0B slots a side. Run-time keys
    (_keys) number each side's distinct tiles in program order; when all the programs' tiles fit the pool (a 4 x 2
    block of tiles: 4 + 2) the step is one pass, else the programs run in passes of 4 (a 2 x 2 block fits), or of 2
    (always fits). Each pass copies its distinct tiles, loads each once per L0 step and runs every program's Mmad
    into its own accumulator."""
    a_elems, b_elems, a2_elems, b2_elems, c1_elems = elems
    n = len(programs)
    yes = arith.ConstantOp(ir.IntegerType.get_signless(1), 1).result
    actives = [True if active is None else active for _, active in programs]
    keys = [_keys(tiles, side) for side in (0, 1)]
    eq = [{}, {}]  # side -> {(i, j): i1} for i < j reading the same GM tensor
    for side in (0, 1):
        for j in range(1, n):
            for i in range(j):
                if keys[side][i][0] is not keys[side][j][0]:
                    continue
                e = None
                for x, y in zip(keys[side][i][1:], keys[side][j][1:]):
                    c = arith.CmpIOp(arith.CmpIPredicate.eq, x, y).result
                    e = c if e is None else arith.AndIOp(e, c).result
                eq[side][i, j] = e

    def both(x, y):  # x and y, either an i1 value or True
        return y if x is True else x if y is True else arith.AndIOp(x, y).result

    def numbered(members, side, with_slots=True):
        """(per program: whether its tile is the first of its key among the members, its slot), and the count of
        distinct tiles. A member is an i1 value, True, or None (not a member)."""
        news, slots, count = [], [], ctx.c64(0)
        for j in range(n):
            seen = None
            slot = count
            for i in reversed(range(j)):
                if (i, j) not in eq[side] or members[i] is None:
                    continue
                same = both(members[i], eq[side][i, j])
                seen = same if seen is None else arith.OrIOp(seen, same).result
                if with_slots:
                    slot = arith.SelectOp(same, slots[i], slot).result
            new = None if members[j] is None else members[j] if seen is None else \
                both(members[j], arith.XOrIOp(seen, yes).result)
            news.append(yes if new is True else new)
            slots.append(slot)
            if new is not None:
                count = ctx.add(count, ctx.c64(1) if new is True else arith.ExtUIOp(ctx.i64, new).result)
        return news, slots, count

    def fits(members):
        na, nb = (numbered(members, side, False)[2] for side in (0, 1))
        ok = arith.AndIOp(arith.CmpIOp(arith.CmpIPredicate.sle, na, ctx.c64(plan.slots)).result,
                          arith.CmpIOp(arith.CmpIPredicate.sle, nb, ctx.c64(plan.slots)).result).result
        room = ctx.add(ctx.mul(na, ctx.c64(plan.a1_bytes)), ctx.mul(nb, ctx.c64(plan.b1_bytes)))
        return arith.AndIOp(ok, arith.CmpIOp(arith.CmpIPredicate.sle, room, ctx.c64(plan.pool_bytes)).result).result

    half = n // 2
    fit_all = fits(actives)
    fit_halves = arith.AndIOp(fits(actives[:half] + [None] * (n - half)), fits([None] * half + actives[half:])).result
    size = arith.SelectOp(fit_all, ctx.c64(n), arith.SelectOp(fit_halves, ctx.c64(half), ctx.c64(2)).result).result
    size = ctx.named(size, "passSize")
    passes = ctx.for_range(ctx.c64(0), arith.DivSIOp(ctx.c64(n), size).result)
    passes.attributes["name"] = ir.StringAttr.get("pass")
    pool_elems = plan.pool_bytes // plan.esize
    with ir.InsertionPoint(passes.body):
        b = passes.induction_variable
        members = [both(act, arith.CmpIOp(arith.CmpIPredicate.eq, arith.DivSIOp(ctx.c64(j), size).result, b).result)
                   for j, act in enumerate(actives)]
        (new_a, slot_a, _), (new_b, slot_b, count_b) = (numbered(members, side) for side in (0, 1))
        slot_a = [ctx.named(x, f"aSlot{j}") for j, x in enumerate(slot_a)]
        slot_b = [ctx.named(x, f"bSlot{j}") for j, x in enumerate(slot_b)]
        b_first = ctx.named(ctx.sub(ctx.c64(pool_elems), ctx.mul(count_b, ctx.c64(b_elems))), "bPool")
        pool = A.op("alloc_tensor", [], local, queue=qs["A1"], name="l1Local")

        def a_at(j):
            return ctx.mul(slot_a[j], ctx.c64(a_elems))

        def b_at(j):  # B's slots in order at the pool's end: side by side tiles of slots 2t, 2t + 1 copy as one
            return ctx.add(b_first, ctx.mul(slot_b[j], ctx.c64(b_elems)))

        for j in range(n):
            root, off, rows, cols, stride = tiles[j][0][0]

            def copy_a(j=j, root=root, off=off, rows=rows, cols=cols, stride=stride):
                nd2nz(ctx, plan, ctx.at(pool, a_at(j)), ctx.at(root, off), rows, cols, stride, plan.base_m)
            _if(new_a[j], copy_a)
        for j, width, absorbed in _side_by_side(ctx, plan, tiles, new_b, slot_b):
            root, off, rows, _, stride = tiles[j][0][1]

            def copy_b(j=j, root=root, off=off, rows=rows, width=width, stride=stride):
                nd2nz(ctx, plan, ctx.at(pool, b_at(j)), ctx.at(root, off), rows, width, stride, plan.l1_k)
            _if(arith.AndIOp(new_b[j], arith.XOrIOp(absorbed, yes).result).result, copy_b)
        A.op("enque", [pool], queue=qs["A1"])
        l1 = A.op("deque", [], local, queue=qs["A1"], name="l1")

        def sides(runs):
            def owns(news):
                return lambda j: arith.AndIOp(runs[j], news[j]).result

            def l0(slots, elems):
                return lambda j: ctx.mul(slots[j], ctx.c64(elems))
            return ((lambda j: ctx.at(l1, a_at(j)), l0(slot_a, a2_elems), owns(new_a), l0(slot_a, a2_elems)),
                    (lambda j: ctx.at(l1, b_at(j)), l0(slot_b, b2_elems), owns(new_b), l0(slot_b, b2_elems)))
        _k_slices(ctx, plan, qs, tiles, members, True, first, c1, local, c1_elems, sides, (slot_a, slot_b))
        A.op("free_tensor", [l1], queue=qs["A1"])
        scf.YieldOp([])


def _k_slices(ctx, plan, qs, tiles, gates, gate_most: bool, first, c1, local, c1_elems, sides, slots=None) -> None:
    """The loop over the slice_k-wide slices of a joined step's L1 tiles: as many as the program that needs most
    (of the gated ones where `gate_most`), program j running slice f while f is below its slices (slice 0 always)
    and its gate (an i1, or None: always) holds; `sides(runs)` gives _joined_slice's L1/L0 places, `slots` its
    programs' A and B slots (a pooled step's, for Mmads over two B tiles)."""
    used = [arith.DivSIOp(ctx.add(kv, ctx.c64(plan.slice_k - 1)), ctx.c64(plan.slice_k)).result for _, kv in tiles]
    most = ctx.c64(1)
    for g, u in zip(gates, used):
        most = ctx.smax(most, arith.SelectOp(g, u, ctx.c64(1)).result if gate_most and g is not None else u)
    kk = ctx.for_range(ctx.c64(0), ctx.named(most, "kSlices"))
    kk.attributes["name"] = ir.StringAttr.get("kk")
    with ir.InsertionPoint(kk.body):
        f = kk.induction_variable
        at_first = arith.AndIOp(first, arith.CmpIOp(arith.CmpIPredicate.eq, f, ctx.c64(0)).result).result
        runs = []
        for g, u in zip(gates, used):
            r = arith.OrIOp(arith.CmpIOp(arith.CmpIPredicate.slt, f, u).result,
                            arith.CmpIOp(arith.CmpIPredicate.eq, f, ctx.c64(0)).result).result
            runs.append(r if g is None else arith.AndIOp(r, g).result)
        _joined_slice(ctx, plan, qs, tiles, runs, f, at_first, c1, local, c1_elems, sides(runs), slots)
        scf.YieldOp([])


def _side_by_side(ctx, plan, tiles, news, slots):
    """Per program j: (j, the columns its B copy moves, whether an earlier slot's copy moved its tile). The B tile
    of slot 2t + 1 that starts where the full-width tile of slot 2t ends in the same GM rows (same tensor, row
    stride, K rows; the stride holding both) is copied with it as one Nd2Nz of twice the columns: NZ puts the
    second tile's column blocks right after the first's, which is where its slot starts (a 4 x 2 block of a
    grouped order: its 2 B tiles; of a row-major one: 2 copies of 4)."""
    n = len(tiles)
    no = arith.ConstantOp(ir.IntegerType.get_signless(1), 0).result
    out, absorbed = [], [no] * n
    for j in range(n):
        root, off, rows, cols, stride = tiles[j][0][1]
        even = arith.CmpIOp(arith.CmpIPredicate.eq, arith.RemSIOp(slots[j], ctx.c64(2)).result, ctx.c64(0)).result
        lead = arith.AndIOp(arith.AndIOp(news[j], even).result,
                            arith.CmpIOp(arith.CmpIPredicate.eq, cols, ctx.c64(plan.base_n)).result).result
        width = cols
        for i in range(n):
            r, o, rw, c, st = tiles[i][0][1]
            if i == j or r is not root:
                continue
            cond = lead
            for x, y in ((slots[i], ctx.add(slots[j], ctx.c64(1))), (st, stride), (rw, rows),
                         (o, ctx.add(off, cols))):
                cond = arith.AndIOp(cond, arith.CmpIOp(arith.CmpIPredicate.eq, x, y).result).result
            cond = arith.AndIOp(arith.AndIOp(cond, news[i]).result, arith.CmpIOp(
                arith.CmpIPredicate.sge, stride, ctx.add(cols, c)).result).result
            width = arith.SelectOp(cond, ctx.add(cols, c), width).result
            absorbed[i] = arith.OrIOp(absorbed[i], cond).result
        out.append((j, ctx.named(width, f"bCols{j}")))
    return [(j, w, absorbed[j]) for j, w in out]


def _k_here(ctx, plan, tiles, f, s: int):
    """Per program: the K of L0 step `s` of slice `f` (k_here) and its K fractals."""
    heres, kfs = [], []
    k0 = plan.k0
    for _, k_valid in tiles:
        k_left = ctx.sub(k_valid, ctx.mul(f, ctx.c64(plan.slice_k)))
        k_here = ctx.smax(ctx.smin(ctx.sub(k_left, ctx.c64(s * plan.base_k)), ctx.c64(plan.base_k)), ctx.c64(0))
        heres.append(k_here)
        kfs.append(arith.DivSIOp(ctx.add(k_here, ctx.c64(k0 - 1)), ctx.c64(k0)).result)
    return heres, kfs


def _paired(ctx, runs, heres, slots):
    """Whether every running program of the step runs with its neighbour (programs 2u and 2u + 1) on one A slot
    and the B slots 2t and 2t + 1, with the same K (an i1): their Mmads then run as one of twice the columns over
    both B tiles, whose rows _joined_slice interleaves in L0B, into both accumulators (2u's and 2u + 1's are
    adjacent in L0C, the columns of one 64 x 128 NZ tile). A pooled 4 x 2 block in the order _group gives it:
    4 Mmads a K step where there were 8."""
    slot_a, slot_b = slots
    yes = arith.ConstantOp(ir.IntegerType.get_signless(1), 1).result

    def eq(x, y):
        return arith.CmpIOp(arith.CmpIPredicate.eq, x, y).result

    def all_of(*conds):
        out = conds[0]
        for c in conds[1:]:
            out = arith.AndIOp(out, c).result
        return out
    ok = yes
    for p, q in ((2 * u, 2 * u + 1) for u in range(len(runs) // 2)):
        match = all_of(eq(slot_a[p], slot_a[q]), eq(ctx.add(slot_b[p], ctx.c64(1)), slot_b[q]),
                       eq(arith.RemSIOp(slot_b[p], ctx.c64(2)).result, ctx.c64(0)), eq(heres[p], heres[q]))
        # both run and match, or neither runs: runs[p] == runs[q], and runs[p] only where they match
        not_p = arith.XOrIOp(runs[p], yes).result
        ok = all_of(ok, eq(runs[p], runs[q]), arith.OrIOp(not_p, match).result)
    return ok


def _joined_slice(ctx, plan, qs, tiles, runs, f, at_first, c1, local, c1_elems, sides, slots=None) -> None:
    """The baseK steps of slice `f` of the joined L1 tiles: the tiles each program owns loaded into their L0A/L0B
    slots, then every running program's Mmad into its own accumulator. `sides` (A, then B): functions of the
    program j giving its tile in L1, the L0 element offset it loads to, whether it loads (it runs and owns the
    tile), and the L0 element offset its Mmad reads. With `slots` (per program its A and B slot, i64 values), a
    step whose programs run in pairs (_paired) loads B slots 2t and 2t + 1 with their K fractal rows interleaved
    (NZ's Zn order for a 128-column B: slot 2t + 1's row r right after slot 2t's) and runs one Mmad a pair."""
    k0 = plan.k0
    kf1, bkf = plan.slice_k // k0, plan.base_k // k0
    no = arith.ConstantOp(ir.IntegerType.get_signless(1), 0).result
    n = len(tiles)
    (a_src, a_dst, a_own, a_use), (b_src, b_dst, b_own, b_use) = sides
    nf_elems = plan.base_n // 16 * plan.frac_elems
    for s in range(plan.k_steps):
        kcol = ctx.add(ctx.mul(f, ctx.c64(kf1)), ctx.c64(s * bkf))
        heres, kfs = _k_here(ctx, plan, tiles, f, s)
        paired = None if slots is None else ctx.named(_paired(ctx, runs, heres, slots), "paired")
        a2 = A.op("alloc_tensor", [], local, queue=qs["A2"], name="a2Local")
        for j in range(n):
            def load_a(j=j):
                load_a_tile(ctx, plan, ctx.at(a2, a_dst(j)), a_src(j), kcol, kfs[j])
            _if(a_own(j), load_a)
        A.op("enque", [a2], queue=qs["A2"])
        b2 = A.op("alloc_tensor", [], local, queue=qs["B2"], name="b2Local")
        for j in range(n):
            def load_b(j=j):
                dst, pitch = b_dst(j), None
                if paired is not None:  # paired: slot 2t + 1's rows start one row of nf fractals into slot 2t's
                    odd = arith.RemSIOp(slots[1][j], ctx.c64(2)).result
                    pair = ctx.mul(ctx.sub(slots[1][j], odd), ctx.c64(plan.b2_bytes // plan.esize))
                    dst = arith.SelectOp(paired, ctx.add(pair, ctx.mul(odd, ctx.c64(nf_elems))), dst).result
                    pitch = arith.SelectOp(paired, ctx.c64(2 * nf_elems), ctx.c64(nf_elems)).result
                _load_b(ctx, plan, b_src(j), ctx.at(b2, dst), False, s, heres[j], kfs[j], f, pitch)
            _if(b_own(j), load_b)
        A.op("enque", [b2], queue=qs["B2"])
        a2d = A.op("deque", [], local, queue=qs["A2"], name="a2")
        b2d = A.op("deque", [], local, queue=qs["B2"], name="b2")

        def mmads(programs, width, s=s, heres=heres, a2d=a2d, b2d=b2d):
            """The Mmads of `programs` (each running one), `width` columns of B from each one's B slot."""
            for j in programs:
                def mmad(j=j):
                    A.op("mmad", [ctx.at(c1, ctx.c64(j * c1_elems)), ctx.at(a2d, a_use(j)), ctx.at(b2d, b_use(j)),
                                  ctx.c64(plan.base_m), ctx.c64(width), heres[j], at_first if s == 0 else no])
                _if(runs[j], mmad)

        if paired is None:
            mmads(range(n), plan.base_n)
        else:
            gate = scf.IfOp(paired, [], has_else=True)
            with ir.InsertionPoint(gate.then_block):
                mmads(range(0, n, 2), 2 * plan.base_n)
                scf.YieldOp([])
            with ir.InsertionPoint(gate.else_block):
                mmads(range(n), plan.base_n)
                scf.YieldOp([])
        A.op("free_tensor", [a2d], queue=qs["A2"])
        A.op("free_tensor", [b2d], queue=qs["B2"])
