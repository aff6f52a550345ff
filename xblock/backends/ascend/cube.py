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
kernel is AIC-only. Any other epilogue (leaky-ReLU, bias, scaling...) runs on the vector core of a
mixed kernel (KERNEL_TYPE_MIX_AIC_1_1, cube_mixed.py).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from ...dialects import ascendc as A
from ...passes.pointer_structure import Affine, Lin, Pointer
from .access import segments
from .cube_handoff import cube_copyable, lower_handoff_dot, plan_handoffs
from .cube_match import final_store, find_dot, k_loop_dot, match_epilogue, owner_of, splat_float, users_of
from .cube_mixed import emit_mixed, state, tile_ready, to_workspace
from .cube_ops import Operand, extent, mmad_steps, queues, to_l1
from .cube_plan import CUBE_SOCS, CubeLimit, plan_cube
from .rules import before_walk, rule
from .values import Splat, elem_of, shape_of

QUANT = {("f32", "f16"): "F322F16", ("f32", "bf16"): "F322BF16", ("f32", "f32"): "NoQuant"}


# ----- lowering -----------------------------------------------------------------------------------

def _access(ctx, load, out, dim: int):
    """The tile access of dot operand `load` (A: dim 0, its rows; B: dim 1, its columns)."""
    seg = segments(load)
    mask = load.operands[1] if seg[1] else None
    acc = ctx.ps.tile_access(load.operands[0], mask, wrapped=True)
    if acc is None:
        raise ctx.error("a dot operand must be loaded as rows of unit-stride elements (a 2-D tile with "
                        "contiguous rows) to go through the Cube unit")
    if seg[2] and splat_float(load.operands[1 + seg[1]]) != 0.0:
        raise ctx.error("masked-off lanes of a dot operand must load as 0 (other=0.0)")
    _no_lower_limits(ctx, acc, f"dot operand {'AB'[dim]}")
    if acc.assumed is not None:
        _check_wrap(ctx, acc.assumed, out, dim)
    return acc


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
        raise ctx.error(f"this dot operand's offsets wrap around (`% {what[1]}`); the Cube path fetches "
                        f"only the {what[0]} before the wrap, so the result must reach one store, through "
                        f"element-wise ops, whose mask drops the same {what[0]} (`offs < {what[1]}`)")


def _seed_pointers(ctx, loop, body, iv_key):
    """Loop-carried pointer blocks advanced by a uniform step: p_k = p_0 + k * step (pointer structure)."""
    y = body.operations[len(body.operations) - 1]
    for k, init in enumerate(loop.operands[3:]):
        if not str(init.type).startswith("tensor<") or "!xb.ptr" not in str(init.type):
            continue
        arg, nxt = body.arguments[k + 1], owner_of(y.operands[k])
        p0 = ctx.ps.pointer(init, wrapped=True)
        step = ctx.ps.affine(nxt.operands[1]) if nxt is not None and nxt.name == "xb.addptr" and \
            nxt.operands[0] == arg else None
        if p0 is None or step is None or not step.uniform():
            raise ctx.error("pointers carried by a dot's K loop must advance by the same amount every step")
        base = p0.offset.base + Lin.var(iv_key) * step.base
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


def _check_dot(ctx, dot, acc_init, result):
    """The plan and the fused epilogue of `dot`, whose accumulator starts at `acc_init`."""
    a_load, b_load = (owner_of(v) for v in dot.operands[:2])
    if any(o is None or o.name != "xb.load" for o in (a_load, b_load)):
        raise ctx.error("the Cube path needs `dot(load(...), load(...))`: both operands loaded from memory")
    init_val = ctx.vmap.get(acc_init) if acc_init is not None else None
    if not (isinstance(init_val, Splat) and init_val.scalar is None and init_val.const == 0):
        raise ctx.error("the accumulator of a dot on the Cube unit must start at zeros")
    if elem_of(dot.results[0].type) != "f32":
        raise ctx.error("the Cube unit accumulates in fp32: use out_dtype=float32")
    epi = match_epilogue(result) or ([], False, None)  # no store: the epilogue runs on the vector core
    in_dtype = elem_of(dot.operands[0].type)
    BM, BK = shape_of(dot.operands[0].type)
    BN = shape_of(dot.operands[1].type)[1]
    soc = CUBE_SOCS.get(ctx.opts.soc)
    if soc is None:
        raise ctx.error(f"the Cube path targets the 910B (separated AIC/AIV) parts, not {ctx.opts.soc}")
    try:
        plan = plan_cube(BM, BN, BK, in_dtype, soc)
    except CubeLimit as e:
        raise ctx.error(str(e), dot) from None
    absorbed, relu, store = epi
    ctx.absorb(absorbed)
    state(ctx).out = store or final_store(result)
    ctx.meta.setdefault("cube", []).append({"plan": plan.describe(), "usage": plan.usage(), "relu": relu,
                                            "block": [BM, BN, BK], "dtype": in_dtype,
                                            "epilogue": "fixpipe" if store is not None else "vector"})
    return plan, a_load, b_load, store, relu


def _check_2d(ctx, dot) -> None:
    if len(shape_of(dot.operands[0].type)) != 2:
        raise ctx.error("a batched (3-D) dot is not supported on ascend: the Cube path multiplies one 2-D tile "
                        "per program (Mmad has no batch); put the batch on a grid axis (tl.program_id) and use "
                        "2-D dots", dot)


def _has_dot(ctx, op) -> bool:
    """A plain Cube K loop (cube_match.k_loop_dot), in a kernel whose dots are not handed over."""
    return state(ctx).handoff is None and k_loop_dot(op) is not None


@rule("scf.for", when=_has_dot)
def lower_cube_loop(ctx, loop) -> None:
    """The `scf.for` around an `xb.dot`: the whole K loop on the Cube unit, plus the fused epilogue."""
    dot = find_dot(loop)
    _check_2d(ctx, dot)
    body = loop.regions[0].blocks[0]
    acc_arg = dot.operands[2]
    y = body.operations[len(body.operations) - 1]
    if not isinstance(acc_arg.owner, ir.Block) or acc_arg.owner != body:
        raise ctx.error("the Cube path needs `acc = dot(a, b, acc)` with acc carried by the K loop")
    k_res = list(body.arguments).index(acc_arg) - 1
    if y.operands[k_res] != dot.results[0]:
        raise ctx.error("the dot's result must be the loop's accumulator")
    lb, step = (ctx.const_of(ctx.scalar(v)) for v in (loop.operands[0], loop.operands[2]))
    if lb != 0 or step != 1:
        raise ctx.error("a dot's K loop must run over range(0, n) with step 1")
    plan, a_load, b_load, store, relu = _check_dot(ctx, dot, loop.operands[3 + k_res], loop.results[k_res])
    _emit_loop(ctx, loop, body, dot, a_load, b_load, plan, store, relu)


@rule("xb.dot")
def _dot(ctx, op):
    """A dot of two loads outside loops, or a dot handed over to the vector core; a dot in a plain K
    loop is lowered with its loop (lower_cube_loop)."""
    _check_2d(ctx, op.operation)
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
        f32 = ir.F32Type.get()
        c1 = A.op("alloc_tensor", [], A.local_type(f32), queue=qs["CO1"], name="c1Local")
        _emit_step(ctx, plan, qs, a_load, b_load, c1, ir.Type.parse(plan.in_dtype),
                   arith.ConstantOp(ir.IntegerType.get_signless(1), 1).result)
        _finish_tile(ctx, qs, c1, store, plan, relu)

    if store is None:
        return emit_mixed(ctx, dot, emit_aic, plan, dot.results[0])
    emit_aic()
    ctx.vmap[dot.results[0]] = None


@before_walk
def claim_dots(ctx) -> None:
    """Before the walk, decide how each dot runs. A plain K loop's dot stays with its loop; a dot of
    two loads that only it reads, outside a K loop, is a lone dot (its loads are claimed now: the
    walk reaches them first). If any other dot exists, every dot of the kernel is handed over to
    the vector core (cube_handoff.py): the kernel is then sectioned by core as a whole."""
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
            k_loops.append(o)
            continue
        loads = [owner_of(v) for v in o.operands[:2]]
        ok = all(x is not None and x.name == "xb.load" and len(users_of(x.results[0])) == 1 and
                 cube_copyable(ctx, x, wrapped=True) for x in loads)
        # a vector epilogue (emit_mixed) takes the rest of the kernel's body: only at the top level
        top = parent is not None and parent.name == "func.func"
        (lone if ok and (top or match_epilogue(o.results[0]) is not None) else other).append(o)
    if other:
        return plan_handoffs(ctx, k_loops + lone + other)
    for o in lone:
        ctx.absorb([owner_of(v) for v in o.operands[:2]])
        state(ctx).lone.add(o)


def _emit_loop(ctx, loop, body, dot, a_load, b_load, plan, store, relu):
    if store is None:
        used = [r for r in loop.results if not str(r.type).startswith("tensor<") and any(True for _ in r.uses)]
        if used:  # the K loop runs in the AIC section: its scalars do not reach the AIV section
            raise ctx.error("a scalar that the dot's K loop carries is used after the loop, whose epilogue runs "
                            "on the vector core; this is not supported yet (recompute it after the loop)")
        return emit_mixed(ctx, loop, lambda: _emit_loop_aic(ctx, loop, body, dot, a_load, b_load, plan, None, relu),
                           plan, loop.results[list(body.arguments).index(dot.operands[2]) - 1])
    _emit_loop_aic(ctx, loop, body, dot, a_load, b_load, plan, store, relu)


def _emit_loop_aic(ctx, loop, body, dot, a_load, b_load, plan, store, relu):
    qs = queues(ctx, plan, mixed=store is None)
    in_t = ir.Type.parse(plan.in_dtype)
    f32 = ir.F32Type.get()
    c1 = A.op("alloc_tensor", [], A.local_type(f32), queue=qs["CO1"], name="c1Local")
    iv_xb = body.arguments[0]
    y = body.operations[len(body.operations) - 1]
    scalars = [k for k, init in enumerate(loop.operands[3:]) if not str(init.type).startswith("tensor<")]
    new = scf.ForOp(ctx.scalar(loop.operands[0]), ctx.scalar(loop.operands[1]), ctx.scalar(loop.operands[2]),
                    [ctx.scalar(loop.operands[3 + k]) for k in scalars])
    iv_name = ctx.loop_name(loop)
    if iv_name:
        new.attributes["name"] = ir.StringAttr.get(iv_name)
    ctx.vmap[iv_xb] = new.induction_variable
    for j, k in enumerate(scalars):  # plain loop-carried scalars (`k0 += BLOCK_K`, a block pointer's offsets)
        ctx.vmap[body.arguments[k + 1]] = new.inner_iter_args[j]
    _seed_pointers(ctx, loop, body, ctx.ps.key(iv_xb))
    with ir.InsertionPoint(new.body):
        _lower_ops(ctx, [o.operation for o in body.operations], {dot, a_load, b_load})
        with ctx.located(dot):
            first = arith.CmpIOp(arith.CmpIPredicate.eq, new.induction_variable, ctx.scalar(loop.operands[0])).result
            _emit_step(ctx, plan, qs, a_load, b_load, c1, in_t, first)
        with ctx.located(y):
            scf.YieldOp([ctx.scalar(y.operands[k]) for k in scalars])
    for r in loop.results:
        ctx.vmap[r] = None
    for j, k in enumerate(scalars):
        ctx.vmap[loop.results[k]] = new.results[j]
    _finish_tile(ctx, qs, c1, store, plan, relu)


def _finish_tile(ctx, qs, c1, store, plan, relu):
    f32 = ir.F32Type.get()
    A.op("enque", [c1], queue=qs["CO1"])
    c1d = A.op("deque", [], A.local_type(f32), queue=qs["CO1"], name="c1Out")
    if store is not None:
        _emit_fixpipe(ctx, store, c1d, plan, relu)
    else:
        to_workspace(ctx, c1d, plan)
    A.op("free_tensor", [c1d], queue=qs["CO1"])
    if store is None:
        tile_ready(ctx)


def _emit_step(ctx, plan, qs, a_load, b_load, c1, in_t, first):
    """One step of the kernel's K loop: copy the A and B slices to L1, then baseK-wide multiplies."""
    out = state(ctx).out
    a, b = _access(ctx, a_load, out, 0), _access(ctx, b_load, out, 1)
    m_valid = ctx.named(extent(ctx, a.row_limits, a.rows), "mValid")  # rows of A (and C) in this program
    k_valid = ctx.named(extent(ctx, a.col_limits, a.cols), "kValid")  # K left in this step of the K loop
    n_valid = ctx.named(extent(ctx, b.col_limits, b.cols), "nValid")
    k_rows = extent(ctx, b.row_limits, b.rows)
    if a.col_limits != b.row_limits:  # the Mmad's K: where both operands are valid (masked lanes are 0)
        k_valid = ctx.smin(k_valid, k_rows)
    a1, b1 = (to_l1(ctx, plan, qs, Operand(key, _gm_at(ctx, load, acc), rows, cols, None), in_t)
              for key, load, acc, rows, cols in (("a", a_load, a, m_valid, k_valid), ("b", b_load, b, k_rows, n_valid)))
    mmad_steps(ctx, plan, qs, a1, b1, False, False, k_valid, c1, in_t, first)
    A.op("free_tensor", [a1], queue=qs["A1"])
    A.op("free_tensor", [b1], queue=qs["B1"])


def _gm_at(ctx, load, acc):
    """The operand's GM tile and its row stride, built when the copy needs them."""
    return lambda: (ctx.at(ctx.vmap[acc.root], ctx.gm_offset(load.operands[0], acc.base)), ctx.lin(acc.row_stride))


def _emit_fixpipe(ctx, store, c1, plan, relu):
    seg = segments(store)
    acc = ctx.ps.tile_access(store.operands[0], store.operands[2] if seg[2] else None)
    out = elem_of(store.operands[1].type)
    with ctx.located(store):
        if acc is None or (acc.rows, acc.cols) != (plan.block_m, plan.block_n):
            raise ctx.error("the dot's result must be stored as a 2-D tile with contiguous rows")
        _no_lower_limits(ctx, acc, "store of a dot's result")
        m = extent(ctx, acc.row_limits, acc.rows)
        n = extent(ctx, acc.col_limits, acc.cols)
        for u in acc.uniform:
            on = arith.CmpIOp(arith.CmpIPredicate.sgt, ctx.lin(u), ctx.c64(0)).result
            m = arith.SelectOp(on, m, ctx.c64(0)).result
        gm = ctx.at(ctx.vmap[acc.root], ctx.gm_offset(store.operands[0], acc.base))
        stride = ctx.lin(acc.row_stride)
        if (c := acc.row_stride.as_const()) is not None and c < acc.cols:
            # Fixpipe needs dstStride >= nSize. Rows closer than that are apart only in the code when
            # one row is stored (a specialized M or N of 1): then the stride is not used
            one_row = arith.CmpIOp(arith.CmpIPredicate.sle, m, ctx.c64(1)).result
            stride = arith.SelectOp(one_row, arith.MaxSIOp(stride, n).result, stride).result
        A.op("fixpipe", [gm, c1, n, m, ctx.c64(plan.base_m), stride], quant=QUANT[("f32", out)], relu=relu)


