"""Dots in any expression: the Cube computes each dot, the vector core does the rest.

`acc += dot(a, b) * scale`, `acc = acc * alpha[:, None] + dot(p, v)`, a dot feeding a reduction,
fused attention's two dots per step: a dot that is not a plain Cube K loop (`acc = dot(a, b, acc)`
with nothing else in the loop) is *handed off*. At the dot, in program order:
  1. AIV: operands the vector core computed (attention's `p.to(fp16)`) go to the workspace's
     input slot (wait IN_FREE, DataCopy UB -> GM, set IN_READY);
  2. AIC: wait IN_READY; copy the operands to L1 (from their loads in GM, transposed ones too, or
     from the input slot), set IN_FREE; LoadData/Mmad into L0C; wait OUT_FREE; Fixpipe the fp32
     tile to the output slot; set OUT_READY;
  3. AIV: wait OUT_READY; DataCopy the tile to UB; set OUT_FREE; zero the rows and columns no
     operand row or column backs (masked-off lanes load as 0 in Triton: their products are 0);
     add the accumulator operand when it is not zero.
With a row split (cube/rowsplit.py) the program is lowered for half the rows, once on each vector core
of the AI Core (MIX_AIC_1_2), and the Cube runs each dot for both halves at once.
The sections of the two cores are then drawn by cube_sections.py. Each core pair has one output
and one input slot in the GM `workspace` (metadata `workspace_bytes` per block) and four
cross-core flags; the "free" flags start credited (set once before the grid loop, taken back
after it), so every use is wait-free / write / ready.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, scf

from ....dialects import ascendc as A
from ....passes.pointer_structure import PointerStructure
from ..plan.plan import HandOffRefused
from ..values import SIZE, Splat, Tile, elem_of, numel, round_up, shape_of
from ..vector.access import segments, used_after
from ..vector.tiles import dst_tile
from .batch import batch_tile, is_batched
from .match import owner_of, splat_float, users_of
from .mixed import QUANT, mix_1_2, state, workspace_view
from .ops import Operand, cube_plan_of, extent, mmad_steps, queues, to_l1
from .rowsplit import half_offset, plan_row_split, share_rows, sub_block
from .sections import section_kernel

OUT_READY, OUT_FREE, IN_READY, IN_FREE = 2, 3, 4, 5  # cross-core flag ids (0 and 1: cube_mixed's K loops)
SLOT_ALIGN = 512


@dataclass
class Source:
    """Where the Cube reads one operand: `gm` (a load: its tile in GM) or `ub` (the vector core's block)."""

    kind: str
    load: object = None
    trans: bool = False  # the operand is `tl.trans` of the load


@dataclass
class Site:
    dot: object
    srcs: tuple
    plan: object
    in_offsets: tuple  # byte offsets of the operands in the input slot (where the vector core puts them)


@dataclass
class Handoffs:
    sites: dict
    out_bytes: int
    in_bytes: int
    split: object = None  # rowsplit.RowSplit: each vector core computes `split.rows` rows of every dot

    @property
    def per_block(self) -> int:
        return round_up(self.out_bytes, SLOT_ALIGN) + round_up(self.in_bytes, SLOT_ALIGN)


# ----- planning (before the walk) -----------------------------------------------------------

def plan_handoffs(ctx, dots) -> None:
    """Plan every handed-off dot: operand sources (claiming loads only a dot reads), tile plans,
    workspace slots; credit the flags before the grid loop and take them back after it."""
    sites, absorb = {}, []
    out_bytes = in_bytes = 0
    split = plan_row_split(ctx, dots)
    for dot in dots:
        with ctx.located(dot):
            plan = _plan(ctx, dot, split)
            srcs = []
            for i in (0, 1):
                src, claimed = _source(ctx, dot, i, dots)
                srcs.append(src)
                absorb += claimed
                for o in claimed:  # _resolve may lower it at the dot: its operands live until then
                    ctx.ext.deferred[_op(o)] = _op(dot)
            offs, used = [], 0
            for i in (0, 1):  # room for both: a load the Cube cannot copy is handed over too (_resolve)
                offs.append(used)
                halves = split.cores if split is not None and i == 0 else 1  # A: both vector cores' rows
                used += round_up(numel(shape_of(dot.operands[i].type)) * plan.esize * halves, 32)
            sites[dot] = Site(dot, tuple(srcs), plan, tuple(offs))
            out_bytes = max(out_bytes, plan.block_m * plan.block_n * 4)
            in_bytes = max(in_bytes, used)
    ctx.absorb(absorb)
    h = Handoffs(sites, out_bytes, in_bytes, split)
    state(ctx).handoff = h
    if split is not None:
        ctx.ext.share_loop = share_rows(ctx)  # AIV k runs chunks k, k + 2, ...; the AIC chunks 0, 2, ...
    ctx.ext.after_walk.append(_section)
    with ctx.before_grid:
        _flag("set", OUT_FREE, "AIV", "PIPE_MTE2")
        if in_bytes:
            _flag("set", IN_FREE, "AIC", "PIPE_MTE2")
    with ir.InsertionPoint.after(ctx.grid.operation):
        _flag("wait", OUT_FREE, "AIC")
        if in_bytes:
            _flag("wait", IN_FREE, "AIV")


def _section(ctx) -> None:
    section_kernel(ctx, state(ctx).queues.values() if state(ctx).queues else ())


BATCHED = "a batched (3-D) dot cannot be handed to the vector core (it multiplies 2-D tiles)"
BATCHED_HINT = "put the batch on a grid axis (tl.program_id) and use 2-D dots"


def _plan(ctx, dot, split=None):
    if is_batched(dot):
        # shown alone when every dot of the kernel is handed over; after the Cube path's own reason when
        # the planner handed the dots over because of this one (pipeline._handoff_refused)
        raise HandOffRefused(ctx.error(f"{BATCHED}, as every dot of this kernel must be (one of them is not a Cube "
                                       "K loop or a dot of two loads whose result goes straight to a store); "
                                       f"{BATCHED_HINT}"), BATCHED, BATCHED_HINT)
    plan = cube_plan_of(ctx, dot, split.rows * split.cores if split is not None else None)
    BM, BN, BK = plan.block_m, plan.block_n, plan.block_k
    ctx.meta.setdefault("cube", []).append({"plan": plan.describe(), "usage": plan.usage(), "tiles": plan.tiles,
                                            "relu": False,
                                            "block": [BM, BN, BK], "dtype": plan.in_dtype, "epilogue": "handoff",
                                            "vector_cores": split.cores if split is not None else 1})
    return plan


def _source(ctx, dot, i, dots):
    """(Source, ops to claim) of operand i: a load (or `tl.trans` of one) the Cube may read from GM
    itself, else the vector core's block. Whether the load's tile fits the Cube's copy is known
    only at the dot (loop-carried pointers get their structure from their loop): `_resolve`."""
    v = dot.operands[i]
    o, trans, claim = owner_of(v), False, []
    if o is not None and o.name == "xb.trans" and len(users_of(v)) == 1:
        inner = owner_of(o.operands[0])
        if inner is not None and inner.name == "xb.load":
            claim, trans, v, o = [o], True, o.operands[0], inner
    if o is None or o.name != "xb.load" or len(shape_of(v.type)) != 2:
        return Source("ub"), []
    seg = segments(o)
    if seg[2] and splat_float(o.operands[1 + seg[1]]) != 0.0:
        return Source("ub"), []  # masked lanes are not 0: the vector core loads it
    users = users_of(o.results[0])
    if users == [claim[0] if claim else dot]:
        claim.append(o)  # only this dot reads it: the vector core does not load it at all
    elif all(u in dots for u in users) and cube_copyable(ctx, o):
        claim.append(o)  # only dots read it (attention's q, in both causal stages), each from GM
    return Source("gm", o, trans), claim


def cube_copyable(ctx, load, wrapped: bool = False) -> bool:
    """Whether the Cube can copy the load's tile from GM (as far as the structure is known before the
    walk: a loop-carried pointer's is not, and such a load counts as copyable)."""
    seg = segments(load)
    mask = load.operands[1] if seg[1] else None
    ps = PointerStructure()  # its own memo: a loop-carried block gets its structure only in the walk
    p = ps.pointer(load.operands[0], wrapped=True)
    if p is None and _loop_carried(load.operands[0]):
        return True
    if p is not None and len(p.offset.shape) == 3:  # one tile per matrix of a batched dot (cube_batch.py)
        return batch_tile(ps, load.operands[0], mask) is not None
    for col_major in (False, True):
        acc = ps.tile_access(load.operands[0], mask, wrapped=wrapped, transposed=col_major)
        if acc is not None and not (acc.row_lower or acc.col_lower) and rows_apart(acc) and \
                same_tile(acc, load, col_major):
            return True
    return False


def same_tile(acc, load, col_major: bool = False) -> bool:
    """Whether the access's rows and columns are the loaded block's (its columns and rows when read
    column-major): an [M, 1] block of contiguous rows is also one row of M elements in memory, which
    the Cube would take for M = 1."""
    shape = tuple(shape_of(load.results[0].type))
    if len(shape) != 2 or (col_major and 1 in shape):  # a vector read column-major: the vector core loads it
        return False
    return (acc.rows, acc.cols) == (shape[::-1] if col_major else shape)


def rows_apart(acc) -> bool:
    """Whether the tile's rows do not overlap (Nd2Nz reads each row from its own srcDValue stride, at
    least the row's length): a broadcast load (row stride 0) goes through the vector core instead."""
    c = acc.row_stride.as_const()
    return acc.rows <= 1 or c is None or c >= acc.cols


def _loop_carried(v) -> bool:
    """`v` is computed from a block argument of a loop (a carried pointer or offsets block)."""
    todo, seen = [v], set()
    while todo:
        x = todo.pop()
        if x in seen or not str(x.type).startswith("tensor<"):
            continue
        seen.add(x)
        o = owner_of(x)
        if o is None:
            return True
        todo.extend(o.operands)
    return False


def _resolve(ctx, site, i):
    """The access of a `gm` operand's load (row- or column-major), or None after lowering the load
    (and its `tl.trans`) on the vector core here, when the Cube cannot copy its tile."""
    src = site.srcs[i]
    if src.kind != "gm":
        return None
    load = src.load
    seg = segments(load)
    mask = load.operands[1] if seg[1] else None
    for col_major in (False, True):
        acc = ctx.ps.tile_access(load.operands[0], mask, transposed=col_major)
        if acc is not None and not (acc.row_lower or acc.col_lower) and rows_apart(acc) and \
                same_tile(acc, load, col_major):
            return acc, col_major
    for o in (load, owner_of(site.dot.operands[i])):
        if o in ctx.absorbed:
            ctx.absorbed.discard(o)
            with ctx.located(o):
                ctx.lower_op(o)
    return None


def _op(x):
    return x.operation if hasattr(x, "operation") else x


def _flag(what: str, flag: int, core: str, pipe: str = "PIPE_S") -> None:
    """A cross-core flag op of `core` (cube_sections.py puts it in that core's section)."""
    fid = arith.ConstantOp(ir.IntegerType.get_signless(64), flag).result
    if what == "set":
        A.op("cross_core_set_flag", [fid], mode=2, pipe=pipe, xb_core=core)
    else:
        A.op("cross_core_wait_flag", [fid], xb_core=core)


# ----- lowering (at the dot) -----------------------------------------------------------------

def lower_handoff_dot(ctx, dot) -> None:
    """The three steps of the module docstring at `dot`; its result becomes a vector-core Tile."""
    h = state(ctx).handoff
    site = h.sites[dot]
    plan = site.plan
    qs = queues(ctx, plan, mixed=True)
    if h.split is not None:
        mix_1_2(ctx)
    in_t = ir.Type.parse(plan.in_dtype)
    accs = [_resolve(ctx, site, i) for i in (0, 1)]
    _spill_queue_tiles(ctx, dot)
    ub = [i for i in (0, 1) if accs[i] is None]
    if ub:
        _flag("wait", IN_FREE, "AIV")
        tiles = {i: ctx.tile(site.dot.operands[i]) for i in ub}  # a constant block is filled here (V)
        ctx.sync("V_MTE3")
        for i in ub:
            _put_operand(ctx, site, i, tiles[i])
        _flag("set", IN_READY, "AIV", "PIPE_MTE3")
        _flag("wait", IN_READY, "AIC")
    a, b = (_operand(ctx, site, i, accs[i]) for i in (0, 1))
    m_valid = a.outer_extent if h.split is None else _half_rows(ctx, site, accs[0])
    k_valid = a.k_extent if _k_limits(site, accs, 0) == _k_limits(site, accs, 1) else \
        ctx.smin(a.k_extent, b.k_extent)
    acc_t = ir.Type.parse(plan.acc_dtype)  # float, or int32 for int8 operands
    c1 = A.op("alloc_tensor", [], A.local_type(acc_t), queue=qs["CO1"], name="c1Local")
    a1, b1 = to_l1(ctx, plan, qs, a, in_t), to_l1(ctx, plan, qs, b, in_t)
    if ub:
        _flag("set", IN_FREE, "AIC", "PIPE_MTE2")
    mmad_steps(ctx, plan, qs, a1, b1, a.trans, b.trans, k_valid, c1, in_t,
               arith.ConstantOp(ir.IntegerType.get_signless(1), 1).result)
    A.op("free_tensor", [a1], queue=qs["A1"])
    A.op("free_tensor", [b1], queue=qs["B1"])
    result_to_vector(ctx, qs, c1, plan, dot.results[0], m_valid, b.outer_extent, dot.operands[2])


def spill_around_handoffs(ctx, op) -> None:
    """Before a loop or `if` whose body holds a handed-off dot: the queue-held blocks used in it or
    after it move to scratch there, not at the dot (in the body, the copy would be made in every
    iteration, after the body's first uses had read the queue tensor and a later one freed it)."""
    h = state(ctx).handoff
    if h is None or not op.regions:
        return
    for dot in h.sites:
        a = dot.parent
        while a is not None and a != op:
            a = a.parent
        if a is not None:
            _spill_queue_tiles(ctx, op)
            return


def _spill_queue_tiles(ctx, at) -> None:
    """Blocks held in a VECIN/VECOUT queue buffer and used by `at` (the dot, or a loop or `if` holding
    it), inside it or after it move to scratch tiles: the dot's Cube section splits the vector core's
    code in two, and a queue tensor is declared (and must be freed) in the section that dequeued it
    (scratch tiles are declared outside the sections). So do the operands of the ops claimed for
    the dot (`tl.trans` of a load the vector core also reads): their last use counts at the dot."""
    claimed = [o for o, d in ctx.ext.deferred.items() if d == at]
    for v, t in list(ctx.vmap.items()):
        if not (isinstance(t, Tile) and t.kind in ("vecin", "vecout") and not t.freed and t.refs == 1):
            continue
        if not isinstance(v, ir.Value) or not (used_after(at, v) or v in list(at.operands) or
                                               any(v in list(o.operands) for o in claimed)):
            continue
        if t.kind == "vecout":
            A.op("enque", [t.value], queue=t.queue.name)  # a VECOUT tensor is read after its DeQue
            t = Tile(A.op("deque", [], t.value.type, queue=t.queue.name), t.elem, t.shape, t.bytes, "vecout",
                     t.queue)
        copy = ctx.new_tile(t.elem, t.shape)
        A.op("data_copy", [copy.value, t.value, ctx.c64(t.padded)])
        ctx.release(t)
        ctx.vmap[v] = copy


def result_to_vector(ctx, qs, c1, plan, result, m_valid, n_valid, acc=None) -> None:
    """L0C -> the output slot (AIC), then the slot -> a UB tile bound to `result` (AIV)."""
    h = state(ctx).handoff
    elem = elem_of(result.type)  # Fixpipe writes the slot in the dot's result type (rounding fp32 to f16 on the way)
    A.op("enque", [c1], queue=qs["CO1"])
    c1d = A.op("deque", [], A.local_type(ir.Type.parse(plan.acc_dtype)), queue=qs["CO1"], name="c1Out")
    _flag("wait", OUT_FREE, "AIC")
    BM, BN = plan.block_m, plan.block_n
    A.op("fixpipe", [_slot(ctx, h, elem, 0), c1d, ctx.c64(BN), ctx.c64(BM), ctx.c64(plan.base_m), ctx.c64(BN)],
         quant=QUANT[(plan.acc_dtype, elem)], relu=False)
    A.op("free_tensor", [c1d], queue=qs["CO1"])
    _flag("set", OUT_READY, "AIC", "PIPE_FIX")
    _flag("wait", OUT_READY, "AIV")
    half = None  # with a row split this vector core reads its rows of the tile (after the AIC's section)
    if h.split is not None:
        BM = h.split.rows
        half = half_offset(ctx, BM * BN)
    shape = (BM, BN)
    zero = ctx.const_of(m_valid) == BM and ctx.const_of(n_valid) == BN
    acc_v = ctx.vmap.get(acc) if acc is not None else None
    plain = acc is None or isinstance(acc_v, Splat) and acc_v.scalar is None and acc_v.const == 0
    rows_by_fill = (BN * SIZE[elem]) % 32 == 0  # rows >= m_valid: one Duplicate of the tile's tail, no row iota
    limits = None if zero else _mask_limits(ctx, shape, BM if rows_by_fill else m_valid, n_valid)
    # a scratch tile (not the VECOUT buffer of a store: MTE2 writes it, and the model has no MTE2->MTE3 event)
    t = ctx.new_tile(elem, shape, ctx.name_for(_op(result.owner)) if plain else None)
    if not plain:
        ctx.temps.append(t)
    # MTE2 overwrites scratch that issued vector instructions (the last iteration's, and whatever used these
    # bytes before) or a copy-out may still be reading: CrossCoreWaitFlag drains neither (write-after-read)
    ctx.sync("V_MTE2")
    ctx.sync("MTE3_MTE2")
    # whole 32-byte blocks (the slot holds 4 bytes an element)
    A.op("data_copy", [t.value, _slot(ctx, h, elem, 0, half), ctx.c64(round_up(BM * BN, 32 // SIZE[elem]))])
    _flag("set", OUT_FREE, "AIV", "PIPE_MTE2")
    ctx.sync("MTE2_V")
    if limits:  # columns >= n_valid (and rows >= m_valid) to 0, in place, when the tile is partial (at run time)
        partial = None
        for _, lim, size in limits:
            c = arith.CmpIOp(arith.CmpIPredicate.slt, ctx.to64(lim), ctx.c64(size)).result
            partial = c if partial is None else arith.OrIOp(partial, c).result
        branch = scf.IfOp(partial, [], has_else=False)
        with ir.InsertionPoint(branch.then_block):
            bits = _valid_mask(ctx, shape, limits)
            # Select takes half/float: an int32 tile is selected as float lanes (0.0f is the bits of 0)
            sel_t = "f32" if elem == "i32" else elem
            view = t.value if sel_t == elem else A.op("reinterpret", [t.value], A.local_type(ir.Type.parse(sel_t)))
            A.op("select", [view, bits.value, view, ctx.cst(sel_t, 0.0), ctx.c64(t.count)],
                 mode="VSEL_TENSOR_SCALAR_MODE")
            scf.YieldOp([])
    if rows_by_fill and not zero and ctx.const_of(m_valid) != BM:  # rows >= m_valid to 0, when there are any
        start = ctx.mul(m_valid, ctx.c64(BN))
        branch = scf.IfOp(arith.CmpIOp(arith.CmpIPredicate.slt, ctx.to64(m_valid), ctx.c64(BM)).result, [],
                          has_else=False)
        with ir.InsertionPoint(branch.then_block):
            A.op("duplicate", [ctx.at(t.value, start), ctx.cst(elem, 0), ctx.sub(ctx.c64(BM * BN), start)])
            scf.YieldOp([])
    ctx.vmap[result] = t if plain else _add_acc(ctx, t, acc, acc_v, result)


def _k_limits(site, accs, i):
    """The limits on K of operand i's tile (equal ones: one extent serves both)."""
    if accs[i] is None:
        return ()
    acc, col_major = accs[i]
    on_cols = (i == 0) != (site.srcs[i].trans != col_major)  # K is A's columns, B's rows, unless transposed
    return (acc.col_limits if on_cols else acc.row_limits), (acc.cols if on_cols else acc.rows)


def _mask_limits(ctx, shape, m, n) -> list:
    """(dim, limit, size) of the dims whose valid extent (rows m, columns n) is not statically the whole tile."""
    return [(d, lim, size) for d, lim, size in ((0, m, shape[0]), (1, n, shape[1]))
            if not isinstance(lim, int) and ctx.const_of(lim) != size]


def _valid_mask(ctx, shape, limits):
    """The bit mask of the lanes inside `limits` (_mask_limits; Compare against iota tiles)."""
    bits = None
    u16 = A.local_type(ir.Type.parse("ui16"))
    for d, lim, size in limits:
        io = ctx.iota(shape, d)
        dst = ctx.temp("ui8", shape)
        A.op("compare_scalar", [dst.value, io.value, arith.SIToFPOp(ir.F32Type.get(), lim).result,
                                ctx.c64(io.padded)], mode="LT")
        if bits is not None:
            views = [A.op("reinterpret", [x.value], u16) for x in (bits, bits, dst)]
            A.op("vec", views + [ctx.c64(bits.bytes // 2)], api="And")
        else:
            bits = dst
    return bits


def _add_acc(ctx, t: Tile, acc, acc_v, result):
    """dot(a, b, acc) = acc + a @ b: the accumulator operand, added on the vector core (in the result type: an
    f16 result is the rounded product plus acc, rounded again)."""
    # the loop's accumulator tile itself when the dot feeds only the loop's yield (tiles.dst_tile): no copy at
    # the end of each iteration
    out = dst_tile(ctx, _op(result.owner), t.elem)
    if isinstance(acc_v, Splat):
        A.op("vec_scalar", [out.value, t.value, ctx.splat_scalar(acc_v), ctx.c64(out.count)], api="Adds")
    else:
        src = ctx.tile(acc)
        if src.elem != t.elem:
            raise ctx.error(f"the accumulator of this dot must be {t.elem}")
        A.op("vec", [out.value, src.value, t.value, ctx.c64(out.count)], api="Add")
    return out


def _slot(ctx, h, elem: str, byte_offset: int, more=None):
    """This block's slot at `byte_offset` (0: the output slot; the input slot after it) as GlobalTensor<elem>,
    `more` elements further (a vector core's half of a row-split tile)."""
    g = workspace_view(ctx, elem, h.per_block)
    es = SIZE[elem]
    base = ctx.mul(A.op("block_idx", [], ctx.i64), ctx.c64(h.per_block // es))
    at = ctx.add(base, ctx.c64(byte_offset // es)) if byte_offset else base
    return ctx.at(g, ctx.add(at, more) if more is not None else at)


def _in_offset(h, site, i) -> int:
    return round_up(h.out_bytes, SLOT_ALIGN) + site.in_offsets[i]


def _half_rows(ctx, site, access):
    """The valid rows of this vector core's half of a row-split dot (its own chunk's, from A's limits)."""
    rows = shape_of(site.dot.operands[0].type)[0]
    if access is None:
        return ctx.c64(rows)
    acc, _ = access  # (no condition on the whole tile: _operand refuses one under a row split)
    with ctx.located(site.srcs[0].load):
        return extent(ctx, acc.row_limits, acc.rows)


def _put_operand(ctx, site, i, t) -> None:
    """The vector core's block for operand i (its tile `t`) to the input slot (UB -> GM)."""
    h = state(ctx).handoff
    v = site.dot.operands[i]
    if t.elem != site.plan.in_dtype:
        raise ctx.error(f"the operands of a dot must have one type: {elem_of(site.dot.operands[0].type)} and "
                        f"{elem_of(site.dot.operands[1].type)}")
    count = round_up(numel(shape_of(v.type)), 32 // SIZE[t.elem])  # whole 32-byte blocks: the slot's size
    if h.split is None:
        A.op("data_copy", [_slot(ctx, h, t.elem, _in_offset(h, site, i)), t.value, ctx.c64(count)])
        return
    if i == 0:  # A's rows: this vector core's half, after the other's when it is AIV 1
        if count != numel(shape_of(v.type)):
            raise ctx.error(f"a vector core's half of this dot's operand ({numel(shape_of(v.type))} {t.elem}) is "
                            "not whole 32-byte blocks (row split)")
        more = half_offset(ctx, count)
        A.op("data_copy", [_slot(ctx, h, t.elem, _in_offset(h, site, i), more), t.value, ctx.c64(count)])
        return
    # B is whole on both vector cores: AIV 0 writes it
    first = arith.CmpIOp(arith.CmpIPredicate.eq, sub_block(ctx), ctx.c64(0)).result
    only = scf.IfOp(first, [], has_else=False)
    with ir.InsertionPoint(only.then_block):
        A.op("data_copy", [_slot(ctx, h, t.elem, _in_offset(h, site, i)), t.value, ctx.c64(count)])
        scf.YieldOp([])


def _operand(ctx, site, i, access) -> Operand:
    """Operand i as the Cube copies it: its load's tile in GM, or the input slot."""
    role = "ab"[i]
    h = state(ctx).handoff
    both = h.split.cores if h.split is not None and i == 0 else 1  # a row split: the Cube takes both halves of A
    if access is None:
        rows, cols = shape_of(site.dot.operands[i].type)
        return Operand(role, _slot(ctx, h, site.plan.in_dtype, _in_offset(h, site, i)), ctx.c64(rows * both),
                       ctx.c64(cols), ctx.c64(cols))
    src, (acc, col_major) = site.srcs[i], access
    load = src.load
    if both > 1 and (src.trans != col_major or acc.uniform):
        # (the Cube copies both halves from the first one's access: its rows must be the first of the pair, and a
        # condition on the whole tile the same for both)
        raise ctx.error("this dot's A operand is read transposed from GM, or under a condition on the whole tile, "
                        "which a row split cannot take for both vector cores' rows")
    with ctx.located(load):
        rows, cols = extent(ctx, acc.row_limits, acc.rows * both), extent(ctx, acc.col_limits, acc.cols)
        for u in acc.uniform:  # a condition on the whole tile: no rows when it fails
            on = arith.CmpIOp(arith.CmpIPredicate.sgt, ctx.lin(u), ctx.c64(0)).result
            rows = arith.SelectOp(on, rows, ctx.c64(0)).result
    gm = (lambda: (ctx.at(ctx.vmap[acc.root], ctx.gm_offset(load.operands[0], acc.base)), ctx.lin(acc.row_stride)))
    return Operand(role, gm, rows, cols, None, src.trans != col_major)
