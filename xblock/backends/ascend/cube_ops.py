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

from ...dialects import ascendc as A
from .cube_mixed import state
from .options import AIC_ONLY, MIX_AIC_1_1

CUBE_QUEUES = ("A1", "B1", "A2", "B2", "CO1")


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
        if mixed and st.kernel_type.attributes["type"] != ir.StringAttr.get(MIX_AIC_1_1):
            raise ctx.error("a kernel mixing Fixpipe-only and vector epilogues of dots is not supported yet")
        widen(ctx, plan)
        return st.queues
    with ctx.before_grid:
        kind = MIX_AIC_1_1 if mixed else AIC_ONLY
        ctx.meta["kernel_type"] = kind  # the launch's blockDim counts AICs (options.launch_cores)
        with ir.InsertionPoint.at_block_begin(ctx.grid.operation.block):
            st.kernel_type = A.op("kernel_type", [], type=kind)
        qs, st.queue_decls = {}, {}
        for pos, num, nbytes in _sizes(plan):
            name = ("inQueue" if pos != "CO1" else "outQueue") + pos
            st.queue_decls[pos] = A.op("tque", [], sym_name=name, position=pos, depth=1, num=num, bytes=nbytes)
            qs[pos] = name
    st.queues = qs
    return qs


def _sizes(plan):
    return (("A1", plan.depth_a1, plan.a1_bytes), ("B1", plan.depth_b1, plan.b1_bytes),
            ("A2", plan.db_l0a, plan.a2_bytes), ("B2", plan.db_l0b, plan.b2_bytes), ("CO1", 1, plan.c1_bytes))


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
    for mem, poss, cap in (("L1", ("A1", "B1"), soc.l1_bytes), ("L0A", ("A2",), soc.l0a_bytes),
                           ("L0B", ("B2",), soc.l0b_bytes), ("L0C", ("CO1",), soc.l0c_bytes)):
        decls = [st.queue_decls[p] for p in poss]
        total = sum(ir.IntegerAttr(d.attributes["bytes"]).value * ir.IntegerAttr(d.attributes["num"]).value
                    for d in decls)
        if total > cap:
            for d in decls:
                d.attributes["num"] = ir.IntegerAttr.get(i64, 1)
            total = sum(ir.IntegerAttr(d.attributes["bytes"]).value for d in decls)
            if total > cap:
                raise ctx.error(f"the dots of this kernel together need {total} B of {mem}, which holds {cap} B "
                                f"on {soc.name}: use smaller blocks")


def to_l1(ctx, plan, qs, src: Operand, in_t):
    """GM -> L1 (ND -> NZ) of one operand; returns the dequeued L1 tensor."""
    q = qs["A1" if src.role == "a" else "B1"]
    # rows of the L1 fractal columns: the padded row count of the tile as GM holds it
    c0stride = {("a", False): plan.base_m, ("a", True): plan.k_pad, ("b", False): plan.k_pad,
                ("b", True): plan.base_n}[(src.role, src.trans)]
    local = A.local_type(in_t)
    t = A.op("alloc_tensor", [], local, queue=q, name=f"{src.role}1Local")
    gm, row_stride = src.gm() if callable(src.gm) else (src.gm, src.row_stride)
    A.op("data_copy_nd2nz", [t, gm, ctx.c64(1), src.rows, src.cols, ctx.c64(0), row_stride,
                             ctx.c64(c0stride), ctx.c64(1), ctx.c64(0)])
    A.op("enque", [t], queue=q)
    return A.op("deque", [], local, queue=q, name=f"{src.role}1")


def mmad_steps(ctx, plan, qs, a1, b1, a_trans: bool, b_trans: bool, k_valid, c1, in_t, first) -> None:
    """baseK-wide LoadData (L1 -> L0A/L0B) and Mmad steps over the K of one L1 slice."""
    local = A.local_type(in_t)
    mf, nf, kf1 = plan.base_m // 16, plan.base_n // 16, plan.k_pad // 16
    bkf = plan.base_k // 16
    for s in range(plan.k_steps):
        # valid K in this baseK step, and the fractals LoadData moves for it
        k_here = ctx.smax(ctx.smin(ctx.sub(k_valid, ctx.c64(s * plan.base_k)), ctx.c64(plan.base_k)), ctx.c64(0))
        k_here = ctx.named(k_here, f"kStep{s}" if plan.k_steps > 1 else "kStep")
        kf = arith.DivSIOp(ctx.add(k_here, ctx.c64(15)), ctx.c64(16)).result
        a2 = A.op("alloc_tensor", [], local, queue=qs["A2"], name="a2Local")
        rows = ctx.for_range(0, mf)
        with ir.InsertionPoint(rows.body):
            i = rows.induction_variable
            if a_trans:  # L1 holds A^T: the K fractals of M row i are consecutive; each one transposed
                start, stride = ctx.add(ctx.mul(i, ctx.c64(kf1)), ctx.c64(s * bkf)), ctx.c64(1)
            else:
                start, stride = ctx.add(i, ctx.c64(s * bkf * mf)), ctx.c64(mf)
            A.op("load_data", [ctx.at(a2, ctx.mul(ctx.mul(i, kf), ctx.c64(256))), a1, start, kf, stride],
                 transpose=a_trans)
            scf.YieldOp([])
        A.op("enque", [a2], queue=qs["A2"])
        b2 = A.op("alloc_tensor", [], local, queue=qs["B2"], name="b2Local")
        ks = ctx.for_range(ctx.c64(0), kf)
        with ir.InsertionPoint(ks.body):
            j = ks.induction_variable
            if b_trans:  # L1 holds B^T (N x K, as attention's K): already the L0B (Zn) fractal order
                start, stride = ctx.mul(ctx.add(j, ctx.c64(s * bkf)), ctx.c64(nf)), ctx.c64(1)
            else:
                start, stride = ctx.add(j, ctx.c64(s * bkf)), ctx.c64(kf1)
            A.op("load_data", [ctx.at(b2, ctx.mul(j, ctx.c64(nf * 256))), b1, start, ctx.c64(nf), stride],
                 transpose=not b_trans)
            scf.YieldOp([])
        A.op("enque", [b2], queue=qs["B2"])
        a2d = A.op("deque", [], local, queue=qs["A2"], name="a2")
        b2d = A.op("deque", [], local, queue=qs["B2"], name="b2")
        init = first if s == 0 else arith.ConstantOp(ir.IntegerType.get_signless(1), 0).result
        A.op("mmad", [c1, a2d, b2d, ctx.c64(plan.base_m), ctx.c64(plan.base_n), k_here, init])
        A.op("free_tensor", [a2d], queue=qs["A2"])
        A.op("free_tensor", [b2d], queue=qs["B2"])
