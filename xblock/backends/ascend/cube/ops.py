"""The Cube unit's side of one dot: its operands into L1 (Nd2Nz), then LoadData and Mmad into L0C.

Helpers of the Cube rules (cube.py) and of the hand-off of dots to the vector cores
(cube_handoff.py); they register no rule. An `Operand` says where the Cube reads a dot operand:
a tile of GM (a load's rows of unit-stride elements, or the slot of the workspace where the
vector core put a block it computed) and whether GM holds it transposed (a column-major load, or
`tl.trans` of a load: attention's K^T). Transposed operands change only the L1 layout and the
LoadData pattern (a transposed B goes to L0B without the fractal transpose; a transposed A with it).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, scf

from ....dialects import ascendc as A
from ..options import AIC_ONLY, MIX_AIC_1_1, MIX_AIC_1_2
from ..plan.plan import SECTIONS, VectorCoreNeeded
from ..values import elem_of, shape_of
from .mixed import state
from .sections import section_kernel
from .tiling import ACC_DTYPE, CUBE_SOCS, FREE_EVENTS, QUE_MAX_EVENT, CubeLimit, event_ids_over, plan_cube

CUBE_QUEUES = ("A1", "B1", "A2", "B2", "CO1")
# Nd2NzParams.srcDValue, the GM row stride of a copy into L1, is a uint16_t in [1, 65535] elements
# (asc-devkit docs GMToL1随路转换-ND2NZ搬运（DataCopy）.md, table 4).
SRC_D_VALUE_MAX = 65535


@dataclass
class Operand:
    """A dot operand as the Cube copies it: a rows x cols tile of GM (valid extents as i64 values)."""

    role: str  # "a" (M x K) or "b" (K x N)
    gm: object  # GlobalTensor at the tile's first element, or a function giving (it, row_stride) when copied
    rows: ir.Value  # valid rows of the tile as GM holds it
    cols: ir.Value
    row_stride: ir.Value | None  # elements between its rows in GM (None: from `gm`)
    trans: bool = False  # GM holds the operand transposed (A as K x M, B as N x K)

    @property
    def k_extent(self) -> ir.Value:
        """Valid K: A's columns and B's rows, as the operand is (not as GM holds it)."""
        on_cols = (self.role == "a") != self.trans
        return self.cols if on_cols else self.rows

    @property
    def outer_extent(self) -> ir.Value:
        """Valid M (of A) or N (of B)."""
        on_cols = (self.role == "a") != self.trans
        return self.rows if on_cols else self.cols


def cube_plan_of(ctx, dot, rows: int | None = None):
    """The tile plan of `dot` (2-D, or each 2-D matrix of a batched one), or the user's error at the dot;
    `rows`: the Cube's M when it is not the dot's own (a row split: both vector cores' rows, cube/rowsplit.py).

    The Cube unit accumulates f16/bf16/f32 products in fp32 and int8 ones in int32 (Mmad's A2 type combos);
    an f16 or bf16 result (`out_dtype=tl.float16`, an f16 accumulator) is that fp32 sum rounded once, by
    Fixpipe, at the end: closer to the exact sum than a GPU's f16 accumulation."""
    in_dtype, out = elem_of(dot.operands[0].type), elem_of(dot.results[0].type)
    acc = ACC_DTYPE.get(in_dtype)
    if acc is not None and not (out == acc or (acc == "f32" and out in ("f16", "bf16"))):
        raise ctx.error(f"the Cube unit accumulates {in_dtype} dots in {acc}: use out_dtype="
                        f"{'tl.int32' if acc == 'i32' else 'tl.float32 (or tl.float16)'}", dot)
    *_, BM, BK = shape_of(dot.operands[0].type)
    BM = rows or BM
    BN = shape_of(dot.operands[1].type)[-1]
    soc = CUBE_SOCS.get(ctx.opts.soc)
    if soc is None:
        raise ctx.error(f"the Cube path targets the 910B (separated AIC/AIV) parts, not {ctx.opts.soc}", dot)
    try:
        return plan_cube(BM, BN, BK, in_dtype, soc)
    except CubeLimit as e:
        raise ctx.error(str(e), dot) from None


def extent(ctx, limits, size: int):
    """min(limits..., size) clamped at 0, as an i64 value."""
    v = ctx.c64(size)
    for lim in limits:
        v = ctx.smin(v, ctx.lin(lim))
    return ctx.smax(v, ctx.c64(0))


def queues(ctx, plan, mixed: bool = False):
    """TQue declarations for A1/B1/A2/B2/CO1 before the grid loop (once per kernel); every plan of the
    kernel widens them (`widen`)."""
    st = state(ctx)
    if st.queues:
        if mixed and st.kernel_type.attributes["type"] not in (ir.StringAttr.get(MIX_AIC_1_1),
                                                               ir.StringAttr.get(MIX_AIC_1_2)):
            # the planner answers with every dot handed to the vector core
            raise VectorCoreNeeded(ctx.error("a kernel mixing Fixpipe-only and vector epilogues of dots is not "
                                             "supported yet"), "dot_store")
        widen(ctx, plan)
        return st.queues
    sectioned = ctx.plan.dots == SECTIONS and not mixed  # Fixpipe-only dots beside vector work of their own
    if sectioned:
        ctx.ext.after_walk.append(lambda c: section_kernel(c, state(c).queues.values()))
    with ctx.before_grid:
        kind = MIX_AIC_1_1 if mixed or sectioned else AIC_ONLY
        ctx.meta["kernel_type"] = kind  # the launch's blockDim counts AICs (options.launch_cores)
        with ir.InsertionPoint.at_block_begin(ctx.grid.operation.block):
            st.kernel_type = A.op("kernel_type", [], type=kind)
        qs, st.queue_decls = {}, {}
        for pos, num, nbytes in _sizes(plan):
            name = ("inQueue" if pos != "CO1" else "outQueue") + ("L1" if plan.slots and pos == "A1" else pos)
            st.queue_decls[pos] = A.op("tque", [], sym_name=name, position=pos, depth=1, num=num, bytes=nbytes)
            qs[pos] = name
    st.queues = qs
    return qs


def _sizes(plan):
    if plan.slots:  # a pooled plan (tiling.join): one L1 pool for both sides, `slots` tiles a side in L0A/L0B
        t = plan.slots
        return (("A1", plan.depth_a1, plan.pool_bytes), ("A2", plan.db_l0a, t * plan.a2_bytes),
                ("B2", plan.db_l0b, t * plan.b2_bytes), ("CO1", 1, plan.join * plan.c1_bytes))
    j = plan.join  # a joined plan (tiling.join): one slot per program in each buffer
    return (("A1", plan.depth_a1, j * plan.a1_bytes), ("B1", plan.depth_b1, j * plan.b1_bytes),
            ("A2", plan.db_l0a, j * plan.a2_bytes), ("B2", plan.db_l0b, j * plan.b2_bytes),
            ("CO1", 1, j * plan.c1_bytes))


def widen(ctx, plan) -> None:
    """The cube queues hold the largest tiles of every dot of the kernel; buffers single when doubled
    ones of those sizes would not fit a memory."""
    st = state(ctx)
    i64 = ir.IntegerType.get_signless(64)
    for pos, num, nbytes in _sizes(plan):
        d = st.queue_decls[pos]
        old_b = ir.IntegerAttr(d.attributes["bytes"]).value
        old_n = ir.IntegerAttr(d.attributes["num"]).value
        d.attributes["bytes"] = ir.IntegerAttr.get(i64, max(old_b, nbytes))
        d.attributes["num"] = ir.IntegerAttr.get(i64, min(old_n, num))
    soc = plan.soc
    for mem, poss, cap in (("L1", tuple(p for p in ("A1", "B1", "C1") if p in st.queue_decls), soc.l1_bytes),
                           ("L0A", ("A2",), soc.l0a_bytes),
                           ("L0B", ("B2",), soc.l0b_bytes), ("L0C", ("CO1",), soc.l0c_bytes)):
        decls = [st.queue_decls[p] for p in poss]
        total = sum(ir.IntegerAttr(d.attributes["bytes"]).value * ir.IntegerAttr(d.attributes["num"]).value
                    for d in decls)
        if total > cap:
            for d in decls:  # (the bias queue C1 is single already)
                d.attributes["num"] = ir.IntegerAttr.get(i64, 1)
            total = sum(ir.IntegerAttr(d.attributes["bytes"]).value for d in decls)
            if total > cap:
                raise ctx.error(f"the dots of this kernel together need {total} B of {mem}, which holds {cap} B "
                                f"on {soc.name}: use smaller blocks")
    _keep_event_ids(ctx)


def _keep_event_ids(ctx) -> None:
    """Single-buffer the cube queues of a free event whose ids the pipe's pool cannot hold (tiling.event_ids_over)."""
    st = state(ctx)
    i64 = ir.IntegerType.get_signless(64)
    nums = {p: ir.IntegerAttr(d.attributes["num"]).value for p, d in st.queue_decls.items()}
    for event in event_ids_over(nums):
        for p in FREE_EVENTS[event][0]:
            if p in st.queue_decls:
                st.queue_decls[p].attributes["num"] = ir.IntegerAttr.get(i64, 1)
    nums = {p: ir.IntegerAttr(d.attributes["num"]).value for p, d in st.queue_decls.items()}
    over = event_ids_over(nums)
    if over:
        event, need = next(iter(over.items()))
        raise ctx.error(f"the Cube queues of this kernel would hold {need} ids of HardEvent::{event}, and the pipe "
                        f"has {QUE_MAX_EVENT} per event on Atlas A2: use fewer dots with a bias")


def to_l1(ctx, plan, qs, src: Operand, in_t):
    """GM -> L1 (ND -> NZ) of one operand; returns the dequeued L1 tensor."""
    q = qs["A1" if src.role == "a" else "B1"]
    # rows of the L1 fractal columns: the padded row count of the tile as GM holds it
    c0stride = {("a", False): plan.base_m, ("a", True): plan.l1_k, ("b", False): plan.l1_k,
                ("b", True): plan.base_n}[(src.role, src.trans)]
    local = A.local_type(in_t)
    t = A.op("alloc_tensor", [], local, queue=q, name=f"{src.role}1Local")
    gm, row_stride = src.gm() if callable(src.gm) else (src.gm, src.row_stride)
    if ctx.const_of(row_stride) == 0:
        # srcDValue must be at least a row (asc-devkit: [1, 65535]); a stride of 0 reaches here only for
        # one row (overlapping rows go through the vector core), which the copy never steps by
        row_stride = src.cols
    if src.role == "b" and not src.trans and plan.esize == 4:
        _b32_rows_to_l1(ctx, plan, t, gm, src, row_stride)
    else:
        nd2nz(ctx, plan, t, gm, src.rows, src.cols, row_stride, c0stride)
    A.op("enque", [t], queue=q)
    return A.op("deque", [], local, queue=q, name=f"{src.role}1")


def _b32_rows_to_l1(ctx, plan, t, gm, src, row_stride) -> None:
    """A row-major fp32 B to L1 as zZ: each 16 rows of K is one band of 16 x 8 fractals side by side, the pairs
    LoadDataWithTranspose joins into its 16 x 16 squares (asc-devkit: b32 squares are two consecutive fractals,
    left and right). One Nd2Nz copy per band (dstNzC0Stride 16: the band's fractals follow each other)."""
    bands = arith.DivSIOp(ctx.add(src.rows, ctx.c64(15)), ctx.c64(16)).result
    loop = ctx.for_range(ctx.c64(0), bands)
    with ir.InsertionPoint(loop.body):
        g = loop.induction_variable
        first = ctx.mul(g, ctx.c64(16))
        rows = ctx.smin(ctx.sub(src.rows, first), ctx.c64(16))
        dst, at = ctx.at(t, ctx.mul(g, ctx.c64(16 * plan.base_n))), ctx.at(gm, ctx.mul(first, row_stride))
        nd2nz(ctx, plan, dst, at, rows, src.cols, row_stride, 16)
        scf.YieldOp([])


def nd2nz(ctx, plan, dst, gm, rows, cols, row_stride, c0stride: int) -> None:
    """GM -> L1 (ND -> NZ) of a rows x cols tile whose rows lie `row_stride` elements apart in GM: one Nd2Nz
    copy where the stride fits Nd2NzParams.srcDValue ([1, 65535]), else one copy per row (an LM head's
    [K, 128k-vocabulary] weight): CATLASS falls back the same way at its STRIDE_LIMIT (hicann/catlass
    include/catlass/gemm/tile/atlasa2/copy_gm_to_l1.hpp, CopyGmToL1 of a row-major tile). A runtime
    stride picks the path at run time."""
    def whole():
        A.op("data_copy_nd2nz", [dst, gm, ctx.c64(1), rows, cols, ctx.c64(0), row_stride, ctx.c64(c0stride),
                                 ctx.c64(1), ctx.c64(0)])

    def by_row():
        loop = ctx.for_range(ctx.c64(0), rows)
        with ir.InsertionPoint(loop.body):
            r = loop.induction_variable
            # row r of the NZ tile starts r 32-byte rows into the tile (dstNzNStride 1); a one-row copy
            # never steps by srcDValue, which only has to be in range
            A.op("data_copy_nd2nz", [ctx.at(dst, ctx.mul(r, ctx.c64(32 // plan.esize))),
                                     ctx.at(gm, ctx.mul(r, row_stride)), ctx.c64(1), ctx.c64(1), cols, ctx.c64(0),
                                     ctx.smax(cols, ctx.c64(1)), ctx.c64(c0stride), ctx.c64(1), ctx.c64(0)])
            scf.YieldOp([])

    c = ctx.const_of(row_stride)
    if c is not None:
        (whole if 1 <= c <= SRC_D_VALUE_MAX else by_row)()
        return
    fits = arith.AndIOp(arith.CmpIOp(arith.CmpIPredicate.sge, row_stride, ctx.c64(1)).result,
                        arith.CmpIOp(arith.CmpIPredicate.sle, row_stride, ctx.c64(SRC_D_VALUE_MAX)).result).result
    branch = scf.IfOp(fits, [], has_else=True)
    with ir.InsertionPoint(branch.then_block):
        whole()
        scf.YieldOp([])
    with ir.InsertionPoint(branch.else_block):
        by_row()
        scf.YieldOp([])


def mmad_steps(ctx, plan, qs, a1, b1, a_trans: bool, b_trans: bool, k_valid, c1, in_t, first, bias=None) -> None:
    """baseK-wide LoadData (L1 -> L0A/L0B) and Mmad steps over the K of one L1 tile. `first` (i1): this tile
    starts the accumulator (at zero, or at the row of `bias`, a BiasTable tensor, when given). A tile of
    plan.k_depth K steps of the kernel (tiling.deepen) runs its steps in a loop over the ones `k_valid` reaches
    (at least one, so that a first tile always starts the accumulator)."""
    if a_trans and plan.esize != 2:
        raise ctx.error(f"a transposed (column-major or tl.trans) A operand of a {plan.in_dtype} dot is not supported "
                        "on the Cube unit yet (its L0A load needs LoadDataWithTranspose squares): load A row-major")
    if plan.k_depth == 1:
        _slice_steps(ctx, plan, qs, a1, b1, a_trans, b_trans, k_valid, c1, in_t, first, bias, None)
        return
    if a_trans or b_trans:
        raise ctx.error("internal error: a deep L1 tile of a transposed dot operand")  # deepen() is never asked
    w = plan.slice_k  # a k_pad slice, or an L0 step of several (tiling.deepen_l0)
    used = arith.DivSIOp(ctx.add(k_valid, ctx.c64(w - 1)), ctx.c64(w)).result
    loop = ctx.for_range(ctx.c64(0), ctx.named(ctx.smax(used, ctx.c64(1)), "kSlices"))
    loop.attributes["name"] = ir.StringAttr.get("kk")
    with ir.InsertionPoint(loop.body):
        f = loop.induction_variable
        at_first = arith.AndIOp(first, arith.CmpIOp(arith.CmpIPredicate.eq, f, ctx.c64(0)).result).result
        k_left = ctx.sub(k_valid, ctx.mul(f, ctx.c64(w)))
        _slice_steps(ctx, plan, qs, a1, b1, False, False, k_left, c1, in_t, at_first, bias, f)
        scf.YieldOp([])


def _slice_steps(ctx, plan, qs, a1, b1, a_trans: bool, b_trans: bool, k_valid, c1, in_t, first, bias, f) -> None:
    """The baseK steps of one slice_k-wide slice of the L1 tile (k_pad, or a deeper L0 step: tiling.deepen_l0):
    slice `f` (an i64 value; None: the tile's only slice), whose fractal columns start f * slice_k / K0 into
    the tile."""
    local = A.local_type(in_t)
    k0, frac = plan.k0, plan.frac_elems
    mf, kf1 = plan.base_m // 16, plan.slice_k // k0
    bkf = plan.base_k // k0
    for s in range(plan.k_steps):
        # valid K in this baseK step, and the fractals LoadData moves for it
        k_here = ctx.smax(ctx.smin(ctx.sub(k_valid, ctx.c64(s * plan.base_k)), ctx.c64(plan.base_k)), ctx.c64(0))
        k_here = ctx.named(k_here, f"kStep{s}" if plan.k_steps > 1 else "kStep")
        kf = arith.DivSIOp(ctx.add(k_here, ctx.c64(k0 - 1)), ctx.c64(k0)).result
        kcol = ctx.c64(s * bkf) if f is None else ctx.add(ctx.mul(f, ctx.c64(kf1)), ctx.c64(s * bkf))
        a2 = A.op("alloc_tensor", [], local, queue=qs["A2"], name="a2Local")
        if a_trans:
            rows = ctx.for_range(0, mf)
            with ir.InsertionPoint(rows.body):
                i = rows.induction_variable
                # L1 holds A^T: the K fractals of M row i are consecutive; each one transposed
                start, stride = ctx.add(ctx.mul(i, ctx.c64(kf1)), kcol), ctx.c64(1)
                A.op("load_data", [ctx.at(a2, ctx.mul(ctx.mul(i, kf), ctx.c64(frac))), a1, start, kf, stride],
                     transpose=True)
                scf.YieldOp([])
        else:
            load_a_tile(ctx, plan, a2, a1, kcol, kf)
        A.op("enque", [a2], queue=qs["A2"])
        b2 = A.op("alloc_tensor", [], local, queue=qs["B2"], name="b2Local")
        _load_b(ctx, plan, b1, b2, b_trans, s, k_here, kf, f)
        A.op("enque", [b2], queue=qs["B2"])
        a2d = A.op("deque", [], local, queue=qs["A2"], name="a2")
        b2d = A.op("deque", [], local, queue=qs["B2"], name="b2")
        no = arith.ConstantOp(ir.IntegerType.get_signless(1), 0).result
        dims = [ctx.c64(plan.base_m), ctx.c64(plan.base_n), k_here]
        if s == 0 and bias is not None:
            # the first step of the K loop starts C at the bias row (the BiasTable); the others add to C
            pick = scf.IfOp(first, [], has_else=True)
            with ir.InsertionPoint(pick.then_block):
                A.op("mmad", [c1, a2d, b2d, *dims, no, bias])
                scf.YieldOp([])
            with ir.InsertionPoint(pick.else_block):
                A.op("mmad", [c1, a2d, b2d, *dims, no])
                scf.YieldOp([])
        else:
            A.op("mmad", [c1, a2d, b2d, *dims, first if s == 0 else no])
        A.op("free_tensor", [a2d], queue=qs["A2"])
        A.op("free_tensor", [b2d], queue=qs["B2"])


def load_a_tile(ctx, plan, a2, a1, kcol, kf) -> None:
    """A row-major A from its NZ L1 tile to L0A (zZ: per 16-row fractal row of M, its kf K fractals side by side),
    the kf fractal columns that start `kcol` fractal columns into the L1 tile (i64 values).

    One LoadData (2D) moves `repeatTimes` fractals, the source's `srcStride` fractals apart, each destination
    fractal `dstGap` fractals after the end of the one before (asc-devkit docs/api/context/Load2D.md,
    LoadData2DParams): one arithmetic progression on each side. NZ puts fractal (i, k) of the tile at
    k * mf + i, zZ at i * kf + k, so one call covers a whole fractal row (kf fractals, srcStride mf) or a whole
    fractal column (mf fractals, srcStride 1, dstGap kf - 1), and a tile of several rows and columns takes
    min(mf, kf) calls (the whole tile in one only when mf or kf is 1). The fewer: by fractal columns when the
    step's K has fewer fractals than the tile's M (baseK / K0 < baseM / 16: a 64 x 32 fp16 step, 2 calls
    instead of 4)."""
    k0, frac = plan.k0, plan.frac_elems
    mf = plan.base_m // 16
    if plan.base_k // k0 >= mf:
        rows = ctx.for_range(0, mf)
        with ir.InsertionPoint(rows.body):
            i = rows.induction_variable
            start = ctx.add(i, ctx.mul(kcol, ctx.c64(mf)))
            A.op("load_data", [ctx.at(a2, ctx.mul(ctx.mul(i, kf), ctx.c64(frac))), a1, start, kf, ctx.c64(mf)],
                 transpose=False)
            scf.YieldOp([])
        return
    cols = ctx.for_range(ctx.c64(0), kf)
    with ir.InsertionPoint(cols.body):
        c = cols.induction_variable
        start = ctx.mul(ctx.add(kcol, c), ctx.c64(mf))
        A.op("load_data", [ctx.at(a2, ctx.mul(c, ctx.c64(frac))), a1, start, ctx.c64(mf), ctx.c64(1),
                           ctx.sub(kf, ctx.c64(1))], transpose=False)
        scf.YieldOp([])


def _load_b(ctx, plan, b1, b2, b_trans: bool, s: int, k_here, kf, f=None, pitch=None) -> None:
    """B from L1 to L0B (Zn: per K fractal row, nf fractals of 16 columns x K0, each stored as its transpose).

    b_trans: L1 holds B^T (N x K, as attention's K), already in that fractal order: plain LoadData. Otherwise
    each fractal is transposed on the way: b16 LoadData's ifTranspose (16 x 16), b8 and b32
    LoadDataWithTranspose, whose squares join two fractals (asc-devkit LoadDataWithTranspose.md): b8 the two K
    fractals 16 x 32 above one another in the NZ L1 tile (a 32 x 32 square -> N fractals 2u, 2u+1, side by side
    in L0B); b32 two 16 x 8 N fractals side by side in the zZ L1 tile (_b32_rows_to_l1: a 16 x 16 square -> the
    K fractals 2t, 2t+1, nf fractals apart in L0B). `f`: the slice_k-wide slice of a deep L1 tile (mmad_steps).
    `pitch` (b16 B only, an i64 value): the L0B elements from one K fractal row to the next, nf fractals' by
    default; a joined step whose Mmads cover two B tiles side by side interleaves their rows (_joined_slice)."""
    k0, frac = plan.k0, plan.frac_elems
    nf, kf1, bkf = plan.base_n // 16, plan.l1_k // k0, plan.base_k // k0
    # the first K fractal (b16, b8) or 16-row band (b32) of this step in the L1 tile
    first_kf = ctx.c64(s * bkf) if f is None else ctx.add(ctx.mul(f, ctx.c64(plan.slice_k // k0)), ctx.c64(s * bkf))
    if b_trans or plan.esize == 2:
        ks = ctx.for_range(ctx.c64(0), kf)
        with ir.InsertionPoint(ks.body):
            j = ks.induction_variable
            if b_trans:
                start, stride = ctx.mul(ctx.add(j, first_kf), ctx.c64(nf)), ctx.c64(1)
            else:
                start, stride = ctx.add(j, first_kf), ctx.c64(kf1)
            A.op("load_data", [ctx.at(b2, ctx.mul(j, ctx.c64(nf * frac) if pitch is None else pitch)), b1, start,
                               ctx.c64(nf), stride],
                 transpose=not b_trans)
            scf.YieldOp([])
        return
    if plan.esize == 1:  # one 32-row K square per K fractal; N squares l1_k / 32 squares apart in L1
        loop = ctx.for_range(ctx.c64(0), kf)
        with ir.InsertionPoint(loop.body):
            t = loop.induction_variable
            A.op("load_data_with_transpose", [ctx.at(b2, ctx.mul(t, ctx.c64(nf * frac))), b1,
                                              ctx.add(t, first_kf), ctx.c64(plan.base_n // 32),
                                              ctx.c64(plan.l1_k // 32), ctx.c64(1), ctx.c64(0)])
            scf.YieldOp([])
        return
    band0 = ctx.c64(s * plan.base_k // 16) if f is None else \
        ctx.add(ctx.mul(f, ctx.c64(plan.slice_k // 16)), ctx.c64(s * plan.base_k // 16))
    bands = arith.DivSIOp(ctx.add(k_here, ctx.c64(15)), ctx.c64(16)).result  # b32: 16 rows of K per square
    loop = ctx.for_range(ctx.c64(0), bands)
    with ir.InsertionPoint(loop.body):
        t = loop.induction_variable
        start = ctx.mul(ctx.add(t, band0), ctx.c64(nf))
        A.op("load_data_with_transpose", [ctx.at(b2, ctx.mul(t, ctx.c64(2 * nf * frac))), b1, start, ctx.c64(nf),
                                          ctx.c64(1), ctx.c64(0), ctx.c64(nf - 1)])
        scf.YieldOp([])


BIAS_TABLE_BYTES = 1024  # the BiasTable (TPosition C2) of Atlas A2/A3 (asc-devkit L1ToBiasTable-Buffer DataCopy doc)


def bias_to_table(ctx, plan, bias_gm, n_valid):
    """The bias row of one output tile GM -> L1 (C1) -> BiasTable (C2), before the K loop; returns the dequeued
    C2 tensor (free it in queue C2 after the last Mmad). GM -> L1 is an Nd2Nz copy of one row of the n_valid
    columns the mask loads (no read past them; it zero-pads to 32 B): A2 has no DataCopyPad into L1, and this
    is the ADK's own bias idiom (examples data_copy_gm2l1, scenario 4). L1 -> C2 moves base_n floats in 64-byte
    units; the columns past n_valid hold stale L1 bytes, which reach only accumulator columns the store's mask
    drops (cube._bias_epilogue checks that)."""
    qs = _bias_queues(ctx, plan)
    local = A.local_type(ir.F32Type.get())
    t = A.op("alloc_tensor", [], local, queue=qs["C1"], name="bias1Local")
    A.op("data_copy_nd2nz", [t, bias_gm, ctx.c64(1), ctx.c64(1), n_valid, ctx.c64(0), ctx.c64(plan.base_n),
                             ctx.c64(1), ctx.c64(1), ctx.c64(0)])
    A.op("enque", [t], queue=qs["C1"])
    b1 = A.op("deque", [], local, queue=qs["C1"], name="bias1")
    b2 = A.op("alloc_tensor", [], local, queue=qs["C2"], name="bias2Local")
    A.op("data_copy_bt", [b2, b1, ctx.c64(plan.base_n * 4 // 64)])
    A.op("enque", [b2], queue=qs["C2"])
    A.op("free_tensor", [b1], queue=qs["C1"])
    return A.op("deque", [], local, queue=qs["C2"], name="bias2")


def _bias_queues(ctx, plan):
    """TQue<C1> and TQue<C2> of base_n floats, declared before the grid loop with the other cube queues (once per
    kernel, widened per dot); the L1 total then counts C1 (widen)."""
    st = state(ctx)
    i64 = ir.IntegerType.get_signless(64)
    nbytes = plan.base_n * 4
    if "C1" not in st.queue_decls:
        with ctx.before_grid:
            for pos, name in (("C1", "inQueueC1"), ("C2", "outQueueC2")):
                st.queue_decls[pos] = A.op("tque", [], sym_name=name, position=pos, depth=1, num=1, bytes=nbytes)
                st.queues[pos] = name
    for pos in ("C1", "C2"):
        d = st.queue_decls[pos]
        d.attributes["bytes"] = ir.IntegerAttr.get(i64, max(ir.IntegerAttr(d.attributes["bytes"]).value, nbytes))
    widen(ctx, plan)
    return st.queues
