"""How blocks reach global memory: tile accesses as DataCopy/DataCopyPad, gathers as scalar loops.

Helpers of the load, store and atomic rules. A pointer block whose structure fits (rows of
unit-stride elements, masks as bounds; passes/pointer_structure.py) is one DataCopy, or a
DataCopyPad with its row count, row bytes and gaps, through a double-buffered queue. Anything else
is a gather or scatter: a scalar loop over the lanes, with a warning at the line; its addresses and
mask may be quasi-affine (integer `//` and `%` by scalars) or depend on data (lanes.py).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from ....dialects import ascendc as A
from ..irwalk import ancestor_in
from ..values import SIZE, Splat, Tile, elem_of, numel, round_up, shape_of
from .casts import mask_bytes
from .lanes import lane_access, lane_loops, release_offsets
from .store_order import order_store
from .tiles import before_scalar_reads, fill, mask_of


def segments(op) -> list:
    return list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))


def gm_tensor(ctx, root):
    g = ctx.vmap.get(root)
    if g is None or not A.is_global(g.type):
        raise ctx.error("this pointer does not come from a kernel argument")
    return g


def pointee(t) -> str:
    """'f16' of `!xb.ptr<f16>`."""
    return str(t)[len("!xb.ptr<"):-1]


def global_at(ctx, addr: ir.Value, elem: str, stem: str) -> ir.Value:
    """A GlobalTensor<elem> over the runtime GM address `addr` (an i64: a pointer table's entry), set
    where the address is known (GlobalTensor::SetGlobalBuffer takes any `__gm__ T*`). The export
    refuses kernels that make such pointers (export.py); `metadata["pointer_tables"]` says where."""
    at = f"{ctx.loc[0]}:{ctx.loc[1]}"
    tables = ctx.meta.setdefault("pointer_tables", [])
    if at not in tables:
        tables.append(at)
    return A.op("set_global_buffer", [addr], A.global_type(ir.Type.parse(elem)), dtype=elem, name=stem + "Gm")


def starts(ctx, acc):
    """(first row, first column) of the in-bounds part of the tile as i64 values, each None when no
    lower limit may cut it (offsets that may start before the tensor: `0 <= i` in the mask)."""
    def first(lowers, size, name):
        if not lowers:
            return None
        v = ctx.lin(lowers[0])
        for lo in lowers[1:]:
            v = ctx.smax(v, ctx.lin(lo))
        return ctx.named(ctx.clamp(v, 0, size), name)

    return first(acc.row_lower, acc.rows, "rowStart"), first(acc.col_lower, acc.cols, "colStart")


def counts(ctx, acc):
    """(rows, cols) of valid elements as i64 values (from `starts` on), and whether they are the full tile."""
    def bound(limits, size):
        if not limits:
            return ctx.c64(size)
        v = ctx.lin(limits[0])
        for lim in limits[1:]:
            v = ctx.smin(v, ctx.lin(lim))
        return ctx.clamp(v, 0, size)

    rows, cols = bound(acc.row_limits, acc.rows), bound(acc.col_limits, acc.cols)
    r0, c0 = starts(ctx, acc)
    if r0 is not None:
        rows = ctx.smax(ctx.sub(rows, r0), ctx.c64(0))
    if c0 is not None:
        cols = ctx.smax(ctx.sub(cols, c0), ctx.c64(0))
    for u in acc.uniform:
        c = ctx.const_of(ctx.lin(u))
        if c is not None:
            rows = rows if c > 0 else ctx.c64(0)
            continue
        on = arith.CmpIOp(arith.CmpIPredicate.sgt, ctx.lin(u), ctx.c64(0)).result
        rows = arith.SelectOp(on, rows, ctx.c64(0)).result
    for v, n in ((rows, "rows"), (cols, "cols")):
        if isinstance(v.owner, ir.Operation) or hasattr(v.owner, "attributes"):
            if v.owner.name != "arith.constant":
                v.owner.attributes["name"] = ir.StringAttr.get(n)
    return rows, cols, not acc.limited


def column_run(ctx, c0, cols, blk: int):
    """A row's valid columns [c0, c0 + cols) as DataCopyPad can move them between GM and a 32-byte
    aligned UB position: (run start, run length, head length). The run starts at c0 rounded up to a
    32-byte block; the head [c0, run start) (fewer than one block) goes element by element."""
    ca = ctx.named(ctx.round_up64(c0, blk), "runStart")
    end = ctx.add(c0, cols)
    run = ctx.named(ctx.smax(ctx.sub(end, ca), ctx.c64(0)), "runCols")
    head = ctx.named(ctx.smax(ctx.sub(ctx.smin(ca, end), c0), ctx.c64(0)), "headCols")
    return ca, run, head


def tile_offset(ctx, acc, r0, ca):
    """Element offset of (row r0, column ca) in the UB tile and in GM (None, None for (0, 0))."""
    ub = gm = None
    if r0 is not None:
        ub, gm = ctx.mul(r0, ctx.c64(acc.cols)), ctx.mul(r0, ctx.lin(acc.row_stride))
    if ca is not None:
        ub = ca if ub is None else ctx.add(ub, ca)
        gm = ca if gm is None else ctx.add(gm, ca)
    if r0 is not None and ca is not None:  # r0 = rows: nothing is copied, but the address must be in the tile
        ub = ctx.smin(ub, ctx.c64(acc.rows * acc.cols))
    return ub, gm


def dense(acc, sz) -> bool:
    """Unmasked, whole 32-byte blocks and contiguous rows: the count form of DataCopy fits."""
    if (acc.rows * acc.cols * sz) % 32:
        return False
    return acc.rows == 1 or acc.row_stride.as_const() == acc.cols


def needs_scalar_loop(ctx, acc, sz) -> bool:
    """No DataCopy/DataCopyPad fits: a gather, rows not in whole 32-byte blocks, or no DataCopyPad."""
    if acc is None or (acc.rows > 1 and (acc.cols * sz) % 32):
        return True
    stride = acc.row_stride.as_const() if acc.rows > 1 else None
    if stride is not None and stride < acc.cols:  # rows overlap (stride 0 repeats a row): a DataCopyPad
        return True  # gap between rows cannot be negative
    return not ctx.soc.has_data_copy_pad and not (not acc.limited and dense(acc, sz))


# ops whose result lane i depends only on lane i of their operands (no broadcast, reduction or shape change)
_LANEWISE = ("arith.", "math.", "xb.fp_to_fp")
# ops moving lane i of their operand to lanes of their result the same way for a mask of that shape
_VIEWS = ("xb.expand_dims", "xb.broadcast", "xb.reshape")
# pure ops two of which with the same operands and attributes give the same value
_PURE = ("arith.", "xb.splat", "xb.broadcast", "xb.expand_dims", "xb.reshape", "xb.arange", "xb.program_id",
         "xb.num_programs")


def lanes_unused(op) -> bool:
    """Whether no masked-off lane of the masked block load `op` can reach the kernel's result: its value
    goes, through lane-wise ops and views (expand_dims, broadcast, reshape) only, into the stored value
    of stores whose mask turns those lanes off too (the load's mask, through the same views, or a
    conjunction with it). Then the load leaves them as the copy does, instead of filling them with 0
    (a load without `other`)."""
    if not str(op.result.type).startswith("tensor<"):
        return False
    mask, seen, todo = op.operands[1], set(), [(op.result, ())]
    while todo:
        v, chain = todo.pop()
        for use in v.uses:
            u = use.owner
            u = getattr(u, "operation", u)
            if u.name == "xb.store":
                if use.operand_number != 1 or segments(u)[2] != 1 or not _implies(u.operands[2], mask, chain):
                    return False
                continue
            if u.name.startswith(_VIEWS) and use.operand_number == 0:
                chain_u = chain + ((u.name, _attrs(u), shape_of(u.results[0].type)),)
            elif u.name.startswith(_LANEWISE) and not len(u.regions) and \
                    all(shape_of(r.type) == shape_of(v.type) for r in u.results):
                chain_u = chain
            else:
                return False
            if (u, chain_u) not in seen:
                seen.add((u, chain_u))
                todo.extend((r, chain_u) for r in u.results)
    return True


def _implies(m: ir.Value, mask: ir.Value, chain: tuple, depth: int = 6) -> bool:
    """Whether the mask `m` is off wherever `mask` is, after the views `chain`: the same value or
    expression through those views, or `x & y` of one."""
    o = m.owner
    if isinstance(o, ir.Block):
        return not chain and m == mask
    o = getattr(o, "operation", o)
    if not chain and _same(m, mask, 8):
        return True
    if chain and (o.name, _attrs(o), shape_of(m.type)) == chain[-1] and _implies(o.operands[0], mask, chain[:-1]):
        return True
    return bool(depth) and o.name == "arith.andi" and any(_implies(v, mask, chain, depth - 1) for v in o.operands)


def _attrs(o) -> tuple:
    return tuple(sorted((n, str(o.attributes[n])) for n in o.attributes))


def _same(a: ir.Value, b: ir.Value, depth: int) -> bool:
    """Whether a and b are the same value, or pure ops of the same kind, attributes and operands."""
    if a == b:
        return True
    oa, ob = a.owner, b.owner
    if depth == 0 or isinstance(oa, ir.Block) or isinstance(ob, ir.Block) or str(a.type) != str(b.type):
        return False
    oa, ob = getattr(oa, "operation", oa), getattr(ob, "operation", ob)
    if oa.name != ob.name or not oa.name.startswith(_PURE) or len(oa.operands) != len(ob.operands) or \
            len(oa.regions) or a.result_number != b.result_number:
        return False
    return _attrs(oa) == _attrs(ob) and all(_same(x, y, depth - 1) for x, y in zip(oa.operands, ob.operands))


def used_after(op, value: ir.Value) -> bool:
    """Whether `value` has a user after `op` (a store consumes its VECOUT tile only at the last use)."""
    me = op.operation
    for use in value.uses:
        user = use.owner
        user = getattr(user, "operation", user)
        if user == me:
            continue
        user = ancestor_in(me.block, user)  # up to the store's own block
        if user is None or user == me or me.is_before_in_block(user):
            return True
    return False


def to_vecout(ctx, value: ir.Value, elem: str, store) -> Tile:
    """The stored block in a VECOUT queue tensor (computed there already, or copied there)."""
    x = ctx.vmap.get(value)
    if not isinstance(x, (Tile, Splat)):  # a structured value: materialized first, maybe into a VECOUT tensor
        x = ctx.tile(value)
        if x.kind == "vecout" and x in ctx.temps:  # the store takes it through the queue and frees it
            ctx.temps.remove(x)
    if isinstance(x, Tile) and x.kind == "vecout" and not x.freed and not used_after(store, value):
        return x
    shape = shape_of(value.type)
    nbytes = round_up(max(numel(shape), 1) * SIZE[elem], 256)
    label = ctx.store_label(store)
    q = ctx.queue("VECOUT", nbytes, label)
    t = Tile(A.op("alloc_tensor", [], A.local_type(ir.Type.parse(elem)), queue=q.name, name=label + "Local"),
             elem, shape, nbytes, "vecout", q)
    if isinstance(x, Splat):
        fill(ctx, t, ctx.c64(0), ctx.c64(t.count), x)
    else:
        src = x if isinstance(x, Tile) else ctx.tile(value)
        A.op("data_copy", [t.value, src.value, ctx.c64(src.padded)])
    return t


def store_tile(ctx, op, atomic: str | None):
    seg = segments(op)
    ptr, value = op.operands[0], op.operands[1]
    mask = op.operands[2] if seg[2] else None
    elem = elem_of(value.type)
    held = ctx.vmap.get(value)
    if elem == "i1" and not (isinstance(held, Tile) and held.elem == "i1"):
        # a mask (Compare's bits, bounds, a constant) stored as bools: a byte each, 0 or 1
        shape = shape_of(value.type)
        t = ctx.new_tile("i1", shape, result=value)
        mask_bytes(ctx, mask_of(ctx, value, shape), t)
        if isinstance(held, Tile):
            ctx.release(held)
        ctx.vmap[value] = t
    acc = ctx.ps.tile_access(ptr, mask)
    sz = SIZE[elem]
    if needs_scalar_loop(ctx, acc, sz):  # gathered addresses: lane by lane (an atomic per lane)
        return scatter_store(ctx, op, ptr, value, mask, elem, atomic)
    t = to_vecout(ctx, value, elem, op)
    if t.scalar_written:  # SetValue writes (scalar pipe) must land before MTE3 reads the buffer
        ctx.sync("S_MTE3")
    A.op("enque", [t.value], queue=t.queue.name)
    out = A.op("deque", [], t.value.type, queue=t.queue.name)
    gm = ctx.at(gm_tensor(ctx, acc.root), ctx.gm_offset(ptr, acc.base))
    if not atomic:  # atomics combine in any order
        order_store(ctx, op)
    if atomic:
        A.op(f"set_atomic_{atomic}", [], dtype=elem)  # add, max or min
    if dense(acc, sz) and not acc.limited:
        A.op("data_copy", [gm, out, ctx.c64(acc.rows * acc.cols)])
    else:
        rows, cols, _ = counts(ctx, acc)
        r0, c0 = starts(ctx, acc)
        ca, head = None, None
        if c0 is not None:  # a 32-byte aligned run, and the head before it through a scratch block per row
            ca, cols, head = column_run(ctx, c0, cols, 32 // sz)
        ub_off, gm_off = tile_offset(ctx, acc, r0, ca)
        src_gap = arith.DivSIOp(ctx.sub(ctx.c64(acc.cols * sz), ctx.mul(ctx.round_up64(cols, 32 // sz), ctx.c64(sz))),
                                ctx.c64(32)).result if acc.rows > 1 else ctx.c64(0)
        dst_gap = ctx.mul(ctx.sub(ctx.lin(acc.row_stride), cols), ctx.c64(sz)) if acc.rows > 1 else ctx.c64(0)
        A.op("data_copy_pad", [gm if gm_off is None else ctx.at(gm, gm_off), out if ub_off is None else
                               ctx.at(out, ub_off), rows, ctx.named(ctx.mul(cols, ctx.c64(sz)), "rowBytes"), src_gap,
                               dst_gap], is_pad=False)
        if head is not None:
            _store_head(ctx, acc, gm, out, elem, rows, r0, c0, head)
    if atomic:
        A.op("set_atomic_none", [])
    A.op("free_tensor", [out], queue=t.queue.name)
    t.freed, t.queue.busy = True, False


def _store_head(ctx, acc, gm, out, elem, rows, r0, c0, head):
    """The columns [c0, c0 + head) of each valid row, which do not start on a 32-byte block of the
    tile: moved element by element into one 32-byte block per row of a scratch tile, then one
    DataCopyPad (MTE3 writes exactly those bytes: no scalar GM writes, which would race on shared
    cache lines)."""
    sz, blk = SIZE[elem], 32 // SIZE[elem]
    h = ctx.temp(elem, (acc.rows * blk,))
    before_scalar_reads(ctx)
    first = r0 if r0 is not None else ctx.c64(0)
    rl = ctx.for_range(ctx.c64(0), rows)
    with ir.InsertionPoint(rl.body):
        r = rl.induction_variable
        jl = ctx.for_range(ctx.c64(0), head)
        with ir.InsertionPoint(jl.body):
            j = jl.induction_variable
            src = ctx.add(ctx.add(ctx.mul(ctx.add(first, r), ctx.c64(acc.cols)), c0), j)
            v = A.op("get_value", [out, src], ir.Type.parse(elem))
            A.op("set_value", [h.value, ctx.add(ctx.mul(r, ctx.c64(blk)), j), v])
            scf.YieldOp([])
        scf.YieldOp([])
    ctx.sync("S_MTE3")
    _, gm_off = tile_offset(ctx, acc, r0, c0)
    dst_gap = ctx.mul(ctx.sub(ctx.lin(acc.row_stride), head), ctx.c64(sz)) if acc.rows > 1 else ctx.c64(0)
    A.op("data_copy_pad", [ctx.at(gm, gm_off), h.value, rows, ctx.named(ctx.mul(head, ctx.c64(sz)), "headBytes"),
                           ctx.c64(0), dst_gap], is_pad=False)
    ctx.sync("MTE3_S")  # the scratch block may be written again by a scalar or a vector instruction
    ctx.sync("MTE3_V")  # (write-after-read)


def scalar_to_gm(ctx, gm, value, elem: str, atomic: str | None = None) -> None:
    """Store one scalar at `gm` (a GlobalTensor view) through UB: SetValue into a 32-byte scratch block,
    then a one-element DataCopyPad (MTE3 writes exactly those bytes). A GM SetValue would go through
    the core's DataCache, whose write-back of the whole 64-byte line races with other cores' rows.
    With `atomic` (add, max, min), the copy runs under that data-copy atomic."""
    if not ctx.soc.has_data_copy_pad:  # 310P: no exact-length copy; the line is flushed at once
        if atomic:
            raise ctx.error(f"a scalar atomic needs DataCopyPad (an exact one-element copy to GM), which "
                            f"{ctx.soc.name} lacks: use a block of values")
        A.op("set_value", [gm, ctx.c64(0), value])
        A.op("dcci", [gm])
        return
    h = ctx.temp(elem, (32 // SIZE[elem],))
    ctx.sync("V_S")  # the scratch block may still be read by an earlier vector instruction (write-after-read)
    A.op("set_value", [h.value, ctx.c64(0), value])
    ctx.sync("S_MTE3")
    if atomic:
        A.op(f"set_atomic_{atomic}", [], dtype=elem)
    A.op("data_copy_pad", [gm, h.value, ctx.c64(1), ctx.c64(SIZE[elem]), ctx.c64(0), ctx.c64(0)], is_pad=False)
    if atomic:
        A.op("set_atomic_none", [])
    ctx.sync("MTE3_S")  # the scratch block may be written again by the next scalar
    ctx.sync("MTE3_V")  # or by a vector instruction (write-after-read)


def scatter_store(ctx, op, ptr, value, mask, elem, atomic: str | None = None):
    """A store (or a data-copy atomic) lane by lane, each active lane one scalar_to_gm (lanes.py: the
    addresses may be affine, quasi-affine or depend on data)."""
    la = lane_access(ctx, ptr, mask, "atomic" if atomic else "store", "scatter")
    src = ctx.tile(value)
    if src.kind == "vecout":  # computed into an output queue buffer: take it through the queue
        A.op("enque", [src.value], queue=src.queue.name)
        out = A.op("deque", [], src.value.type, queue=src.queue.name)
        src.freed, src.queue.busy = True, False
        src = Tile(out, src.elem, src.shape, src.bytes, "vecout", src.queue, refs=1)
        ctx.temps.append(src)
    gm = gm_tensor(ctx, la.root)
    before_scalar_reads(ctx)
    shape = shape_of(value.type)
    if atomic and not ctx.soc.has_data_copy_pad:
        scalar_to_gm(ctx, gm, None, elem, atomic)  # the error: no exact one-element copy
    if atomic:  # set once around the loop: no other copy to GM runs inside it
        A.op(f"set_atomic_{atomic}", [], dtype=elem)
    else:  # the lanes' copies are ordered among themselves (scalar_to_gm waits for each)
        order_store(ctx, op)

    def body(lane, idx):
        addr = la.address(lane, idx)

        def put():
            scalar_to_gm(ctx, ctx.at(gm, addr), A.op("get_value", [src.value, lane], ir.Type.parse(elem)), elem)

        ctx.when(la.on(lane, idx), put)

    lane_loops(ctx, shape, body)
    if atomic:
        A.op("set_atomic_none", [])
    release_offsets(ctx, op, ptr)


def drop_copy(ctx, t) -> None:
    """Free the loaded block a select replaced: a VECOUT buffer (the load was to feed a store) goes
    through EnQue/DeQue first, as the queue protocol requires of every buffer it frees."""
    if t.kind == "vecout" and not t.freed:
        A.op("enque", [t.value], queue=t.queue.name)
        t = Tile(A.op("deque", [], t.value.type, queue=t.queue.name), t.elem, t.shape, t.bytes, "vecout", t.queue)
    ctx.release(t)
