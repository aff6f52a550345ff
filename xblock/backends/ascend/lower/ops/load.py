"""The rules of xb.load (a tile through a VECIN queue: DataCopy/DataCopyPad, a scalar, or a gather)
and of xb.int_to_ptr (where a pointer table's addresses enter GM accesses).

Masked-off lanes take `other` through the copy's padding and a Duplicate of the rest (whole rows
past the last valid one, and each valid row after its padded 32-byte block). A masked load without
`other` reads 0 there, as Triton's GPU code and interpreter give it (docs/LANGUAGE.md): the same fill
with a zero `other`, left out only when no masked-off lane can reach the result (`lanes_unused`: the
value goes lane-wise only into stores masking those lanes off).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from .....dialects import ascendc as A
from .....dialects.locations import kernel_of
from ...plan import row_cache
from ...values import SIZE, Splat, Struct, Tile, elem_of, numel, round_up, shape_of
from ...vector.access import (
    column_run,
    counts,
    dense,
    drop_copy,
    global_at,
    gm_tensor,
    lanes_unused,
    needs_scalar_loop,
    pointee,
    segments,
    starts,
    tile_offset,
)
from ...vector.gathers import vector_gather
from ...vector.lanes import data_offsets, hold_offsets, lane_access, lane_loops, release_offsets
from ...vector.tiles import after_scalar_writes, as_elem, before_scalar_reads, fill, finish, mask_of, select_types
from ...vector.vmath import Bits
from ..rules import rule


@rule("xb.int_to_ptr")
def _lower_int_to_ptr(ctx, op):
    """A scalar pointer made from an int64 (`tl.load(table + g).to(tl.pointer_type(T))`): a GlobalTensor<T>
    whose buffer is set from that runtime address (access.global_at). It is a root like a kernel
    argument's GlobalTensor: loads, stores, atomics and the Cube's copies through `ptr + offsets` take
    the same DataCopy paths."""
    r = op.result
    if str(r.type).startswith("tensor<"):
        raise ctx.error("a block of pointers made from integers (each lane its own address) is not supported on "
                        "ascend: every GM access is a copy through one GlobalTensor, set from one address; make "
                        "the pointer from a scalar address (`tl.load(table + g).to(tl.pointer_type(T))`) and add "
                        "a block of offsets to it")
    name = ctx.name_for(op)
    stem = name[:-4] if name and name.endswith("_ptr") and len(name) > 4 else name or "table"
    ctx.vmap[r] = global_at(ctx, ctx.named(ctx.scalar(op.operands[0]), stem + "Addr"), pointee(r.type), stem)


def _null_test(ctx, op) -> bool:
    """`if ptr:` on a pointer argument (SGLang's optional `kv_start_idx`): the address only compared with 0."""
    arg = op.operands[0]
    if str(op.result.type).startswith("tensor<") or not isinstance(arg, ir.BlockArgument) or \
            arg.owner.owner.operation.name != "func.func":
        return False
    for u in op.result.uses:
        o = u.owner
        if o.name != "arith.cmpi" or ir.IntegerAttr(o.attributes["predicate"]).value not in (0, 1):  # eq, ne
            return False
        k = o.operands[1 - u.operand_number].owner
        if getattr(k, "name", None) != "arith.constant" or ir.IntegerAttr(k.attributes["value"]).value != 0:
            return False
    return True


@rule("xb.ptr_to_int", when=_null_test)
def _lower_pointer_null_test(ctx, op):
    """A pointer argument compared with 0: never null here, as Triton specializes a None pointer to a
    constexpr before compiling (the launch passes a GM buffer for every pointer argument), so any
    non-zero stand-in decides the test; the address itself never becomes a value."""
    ctx.vmap[op.result] = ctx.c64(1)


def _cast_of_int_address(ctx, op) -> bool:
    """A scalar pointer cast whose root is a GlobalTensor set from a runtime address (global_at)."""
    p = None if str(op.result.type).startswith("tensor<") else ctx.ps.pointer(op.operands[0])
    g = ctx.vmap.get(p.root) if p is not None else None
    return g is not None and A.is_global(g.type) and g.owner.name == "ascendc.set_global_buffer" and \
        str(g.owner.operands[0].type) == "i64"


@rule("xb.ptr_cast", when=_cast_of_int_address)
def _lower_ptr_cast_int_address(ctx, op):
    """`ptr.to(tl.pointer_type(U))` of a pointer made from an integer (plus an offset): a GlobalTensor<U>
    set from that address plus the offset's bytes."""
    p = ctx.ps.pointer(op.operands[0])
    addr = ctx.vmap[p.root].owner.operands[0]
    if not p.offset.base.is_zero():
        addr = ctx.add(addr, ctx.mul(ctx.lin(p.offset.base), ctx.c64(SIZE[p.elem])))
    ctx.vmap[op.result] = global_at(ctx, addr, pointee(op.result.type), ctx.name_for(op) or "cast")


@rule("xb.addptr", when=data_offsets)
def _lower_addptr_data_offsets(ctx, op):
    """A pointer block plus data offsets: symbolic, its offset tile held to its last access (lanes.py)."""
    ctx.vmap[op.result] = Struct(op.result)
    hold_offsets(ctx, op)


@rule("xb.load")
def _lower_load(ctx, op):
    seg = segments(op)
    other = _splat_other(ctx, op.operands[1 + seg[1]]) if seg[2] else None
    if seg[1] and seg[2] and str(op.result.type).startswith("tensor<") and not isinstance(other, Splat):
        return _load_then_select(ctx, op, op.operands[1], op.operands[2])
    if seg[2]:
        return _load_into(ctx, op, other)
    zero = seg[1] and not all(lanes_unused(o) for o in row_cache.group_of(ctx, op))  # a group shares its tiles
    return _load_into(ctx, op, Splat(elem_of(op.result.type), shape_of(op.result.type), const=0) if zero else None)


def _splat_other(ctx, other: ir.Value):
    """`other` as a Splat where it is one value for every lane: an integer scalar's splat (a runtime pad
    id, LightLLM's `other=pad_id`) is held as a symbolic offset (a Struct), not a Splat, by xb.splat."""
    held = ctx.vmap.get(other)
    d = other.owner
    if not isinstance(held, Splat) and getattr(d, "name", None) == "xb.splat" and \
            str(d.operands[0].type) not in ("i1",) and not str(d.operands[0].type).startswith("!xb.ptr"):
        return Splat(elem_of(other.type), shape_of(other.type), scalar=ctx.scalar(d.operands[0]))
    return held


def _load_then_select(ctx, op, mask, other):
    """A load whose `other` is a block: the masked copy as without `other`, then Select(mask, loaded,
    other) on the vector unit (the lanes the mask turns off are whatever the copy left there)."""
    r = op.result
    elem = elem_of(r.type)
    if elem == "i1":
        return _bool_load_then_select(ctx, op, mask, other)
    if select_types(elem) is None:
        raise ctx.error(f"a block `other` of a {elem} load is not supported on ascend (Select takes 16- and 32-bit "
                        "lanes): use a scalar `other`, or tl.where after the load")
    ce, fview = select_types(elem)
    _load_into(ctx, op, None)
    shape = shape_of(r.type)
    copied = ctx.vmap[r]  # freed once selected from (a queue buffer, in a loop too)
    loaded = as_elem(ctx, copied, ce)
    alt = ctx.vmap.get(other)
    alt = as_elem(ctx, alt if isinstance(alt, Splat) else ctx.tile(other), ce)
    bits = mask_of(ctx, mask, shape)
    out = ctx.new_tile(ce, shape, ctx.name_for(op), result=r if ce == elem else None)
    ftype = A.local_type(ir.Type.parse(fview)) if fview else None
    view = (lambda t: A.op("reinterpret", [t.value], ftype)) if fview else (lambda t: t.value)
    A.op("select", [view(out), bits.value, view(loaded), view(alt), ctx.c64(out.count)],
         mode="VSEL_TENSOR_TENSOR_MODE")
    drop_copy(ctx, copied)
    finish(ctx, op, out, ce, exact=True)


def _bool_load_then_select(ctx, op, mask, other):
    """A bool load whose `other` is a block: the masked copy, then the bit masks of the three blocks
    combined as (mask & loaded) | (~mask & other), 16 bits at a time (Select has no 8-bit lanes)."""
    r = op.result
    shape = shape_of(r.type)
    _load_into(ctx, op, None)
    copied = ctx.vmap[r]  # freed once its bits are taken (a queue buffer, in a loop too)
    on, loaded, alt = (mask_of(ctx, v, shape) for v in (mask, r, other))
    ctx.vmap[r] = Bits(ctx, shape, "ui8").choose(ctx.new_tile("ui8", shape, ctx.name_for(op)), on, loaded, alt)
    drop_copy(ctx, copied)



def _load_into(ctx, op, other):
    """The load `op` with `other` (a Splat, a scalar's value, or None: masked-off lanes left as the copy
    leaves them) in its masked-off lanes."""
    r = op.result
    seg = segments(op)
    ptr = op.operands[0]
    mask = op.operands[1] if seg[1] else None
    elem = elem_of(r.type)
    if not str(r.type).startswith("tensor<"):
        return _scalar_load(ctx, op, ptr, mask, other, elem)
    acc = ctx.ps.tile_access(ptr, mask)
    sz = SIZE[elem]
    if needs_scalar_loop(ctx, acc, sz):  # a Gather from a UB window where it fits, else lane by lane
        return vector_gather(ctx, op, ptr, mask, other, elem) or _gather_load(ctx, op, ptr, mask, other, elem)
    name = ctx.name_for(op)
    shape = shape_of(r.type)
    nbytes = round_up(max(numel(shape), 1) * sz, 256)
    if nbytes > ctx.largest[0]:
        ctx.largest = (nbytes, ctx.loc)
    after_own_stores(ctx, ptr)
    tile = _copy_in_tile(ctx, elem, shape, nbytes, name)
    cache = row_cache.begin(ctx, op, tile)  # a row several loops read: from UB after the first (row_cache.py)
    _copy_rows(ctx, op, acc, tile, other, cache)
    if cache is not None:
        cache.done(ctx, ctx.vmap[r])


def _copy_rows(ctx, op, acc, tile, other, cache):
    """The DataCopy/DataCopyPad of the load `op` into `tile`, then `other` into the lanes it left."""
    r, ptr = op.result, op.operands[0]
    elem, name = tile.elem, ctx.name_for(op)
    sz = SIZE[elem]
    t_in = tile.value
    gm = ctx.at(gm_tensor(ctx, acc.root), ctx.gm_offset(ptr, acc.base))
    if dense(acc, sz) and not acc.limited:
        A.op("data_copy", [t_in, gm, ctx.c64(acc.rows * acc.cols)])
        ctx.vmap[r] = _arrived(ctx, tile, name, cache)
        return
    rows, cols, _ = counts(ctx, acc)
    r0, c0 = starts(ctx, acc)
    blk = 32 // sz
    ca = head = None
    if c0 is not None:  # columns may start before the tensor: an aligned run plus a head (column_run)
        ca, cols, head = column_run(ctx, c0, cols, blk)
    ub_off, gm_off = tile_offset(ctx, acc, r0, ca)
    cols_al = ctx.round_up64(cols, blk)
    src_gap = ctx.mul(ctx.sub(ctx.lin(acc.row_stride), cols), ctx.c64(sz)) if acc.rows > 1 else ctx.c64(0)
    dst_gap = arith.DivSIOp(ctx.sub(ctx.c64(acc.cols * sz), ctx.mul(cols_al, ctx.c64(sz))), ctx.c64(32)).result \
        if acc.rows > 1 else ctx.c64(0)
    args = [t_in if ub_off is None else ctx.at(t_in, ub_off), gm if gm_off is None else ctx.at(gm, gm_off), rows,
            ctx.named(ctx.mul(cols, ctx.c64(sz)), "rowBytes"), src_gap, dst_gap]
    if other is not None:
        if not isinstance(other, Splat):
            raise ctx.error("`other` of a load must be a scalar or a constant")
        args += [ctx.sub(cols_al, cols), ctx.splat_scalar(other) if elem not in ("bf16",) or other.scalar is not None
                 else ctx.cst("f32", other.const)]
    A.op("data_copy_pad", args, is_pad=other is not None)
    ctx.vmap[r] = _arrived(ctx, tile, name, cache)
    if r0 is not None or c0 is not None:
        _fill_around(ctx, acc, tile, other, rows, r0, ca, cols_al)
        if head is not None:
            _load_head(ctx, acc, tile, gm, rows, r0, c0, head)
        return
    if other is None:
        return
    if acc.row_limits or acc.uniform:  # whole rows past the last valid one
        if acc.rows == 1:  # all or nothing
            fill(ctx, tile, ctx.c64(0), ctx.mul(ctx.sub(ctx.c64(1), rows), ctx.c64(acc.cols)), other)
        else:
            start = ctx.mul(rows, ctx.c64(acc.cols))
            fill(ctx, tile, start, ctx.sub(ctx.c64(acc.rows * acc.cols), start), other)
    if acc.col_limits:  # the rest of each valid row after its padded 32-byte block
        start = ctx.smin(cols_al, ctx.c64(acc.cols))
        if acc.rows == 1 and acc.cols * sz <= 32:
            # the row is one 32-byte block, which DataCopyPad padded whole: only a row with no valid
            # element is left to fill (a Duplicate past its start would be misaligned)
            empty = scf.IfOp(arith.CmpIOp(arith.CmpIPredicate.eq, cols, ctx.c64(0)).result, [], has_else=False)
            with ir.InsertionPoint(empty.then_block):
                fill(ctx, tile, ctx.c64(0), ctx.c64(acc.cols), other)
                scf.YieldOp([])
        elif acc.rows == 1 and acc.cols * sz % 32:  # (a block of 48 int8s: the padded copy may reach its end)
            rest = scf.IfOp(arith.CmpIOp(arith.CmpIPredicate.slt, start, ctx.c64(acc.cols)).result, [], has_else=False)
            with ir.InsertionPoint(rest.then_block):
                fill(ctx, tile, start, ctx.sub(ctx.c64(acc.cols), start), other)
                scf.YieldOp([])
        elif acc.rows == 1:
            fill(ctx, tile, start, ctx.sub(ctx.c64(acc.cols), start), other)
        else:
            loop = ctx.for_range(ctx.c64(0), rows)
            with ir.InsertionPoint(loop.body):
                row = ctx.add(ctx.mul(loop.induction_variable, ctx.c64(acc.cols)), start)
                fill(ctx, tile, row, ctx.sub(ctx.c64(acc.cols), start), other)
                scf.YieldOp([])


def _root(v: ir.Value):
    """The kernel argument a pointer value derives from (through addptr, splat, broadcast, loop-carried
    values), or None when it cannot be traced."""
    for _ in range(256):
        if isinstance(v, ir.BlockArgument):
            owner = v.owner.owner
            kind = owner.operation.name if owner is not None else None
            if kind in (None, "func.func"):
                return ("arg", v.arg_number)
            if kind == "scf.for" and v.arg_number > 0:
                v = owner.operands[3 + v.arg_number - 1]
                continue
            return None
        ptrs = [o for o in v.owner.operation.operands if "ptr" in str(o.type)]
        if not ptrs:
            return None
        v = ptrs[0]
    return None


def _stored_roots(ctx) -> set:
    """Roots (see `_root`) of every pointer the kernel stores through; None in the set when one of
    them cannot be traced. Computed once per kernel."""
    if ctx.ext.stored_roots is None:
        roots = set()

        def walk(op):
            for region in op.regions:
                for block in region.blocks:
                    for inner in block.operations:
                        if inner.name == "xb.store" or inner.name.startswith("xb.atomic"):
                            roots.add(_root(inner.operands[0]))
                        walk(inner.operation)

        walk(kernel_of(ctx.xb_module).operation)
        ctx.ext.stored_roots = roots
    return ctx.ext.stored_roots


def after_own_stores(ctx, ptr: ir.Value) -> None:
    """A copy-in from GM this kernel may also have written: wait for MTE3 (the store's copy-out) first,
    or the MTE2 read may see the bytes before the write lands."""
    if _reads_own_stores(ctx, ptr):
        ctx.sync("MTE3_MTE2")


def _reads_own_stores(ctx, ptr: ir.Value) -> bool:
    stored = _stored_roots(ctx)
    return bool(stored) and (None in stored or _root(ptr) in stored)


def _fresh_line(ctx, at: ir.Value) -> None:
    """Drop the DataCache line of a GM scalar this kernel may have written by DataCopy since the line
    was cached (REFERENCE 0.1: GetValue reads through the core's DataCache)."""
    A.op("dcci", [at])


def _copy_in_tile(ctx, elem, shape, nbytes, name) -> Tile:
    """Where a block copied in from GM lands: a VECIN queue buffer, or, when all 8 VECIN buffers hold
    live blocks, a VECCALC scratch tile (a TBuf has no queue events: MTE2 waits until the vector unit
    and MTE3 are done with that memory). A load hoisted before the grid loop (resident.py) lands in a
    tile of its own that stays for the whole kernel."""
    if ctx.resident_at is not None:
        return ctx.resident_tile(elem, shape, nbytes, name)
    q = ctx.queue("VECIN", nbytes, name, spill=True)
    if q is None:
        t = ctx.new_tile(elem, shape, name)
        ctx.sync("V_MTE2")
        ctx.sync("MTE3_MTE2")
        return t
    local = A.local_type(ir.Type.parse(elem))
    v = A.op("alloc_tensor", [], local, queue=q.name, **({"name": name + "Local"} if name else {}))
    return Tile(v, elem, shape, nbytes, "vecin", q, line=ctx.loc[1])


def _arrived(ctx, tile: Tile, name, cache=None) -> Tile:
    """The block once its copy-in is done: EnQue/DeQue of its queue buffer (the queue's MTE2 -> V
    event), or an explicit MTE2 -> V sync for a scratch tile. A cached row's GM copy goes under
    `if (!reuse)` first (row_cache.py)."""
    if cache is not None:
        cache.skip_copy(ctx)
    if tile.kind != "vecin":
        ctx.sync("MTE2_V")
    else:
        A.op("enque", [tile.value], queue=tile.queue.name)
        tile.value = A.op("deque", [], tile.value.type, queue=tile.queue.name, **({"name": name} if name else {}))
    if cache is not None:
        cache.arrived()
    return tile


def _fill_if(ctx, tile, start, count, other):
    """fill() of count >= 0 elements; nothing (not even an address check) when count is 0."""
    c = ctx.const_of(count)
    if c == 0:
        return
    if c is not None:
        return fill(ctx, tile, start, count, other)
    some = scf.IfOp(arith.CmpIOp(arith.CmpIPredicate.sgt, count, ctx.c64(0)).result, [], has_else=False)
    with ir.InsertionPoint(some.then_block):
        fill(ctx, tile, start, count, other)
        scf.YieldOp([])


def _fill_around(ctx, acc, tile, other, rows, r0, ca, run_al):
    """`other` into every lane the copy did not write, for a tile whose valid part starts at row r0
    and column ca (the run) and is `rows` rows of `run_al` padded columns; the head columns before
    the run are filled too, and then overwritten by _load_head."""
    if other is None:
        return
    C, total = acc.cols, acc.rows * acc.cols
    first = r0 if r0 is not None else ctx.c64(0)
    if r0 is not None:  # rows before the first valid one
        _fill_if(ctx, tile, ctx.c64(0), ctx.mul(r0, ctx.c64(C)), other)
    after = ctx.mul(ctx.add(first, rows), ctx.c64(C))
    _fill_if(ctx, tile, after, ctx.sub(ctx.c64(total), after), other)
    if ca is None and not acc.col_limits:
        return
    start = ctx.c64(0) if ca is None else ca
    end = ctx.smin(ctx.add(start, run_al), ctx.c64(C))
    loop = ctx.for_range(ctx.c64(0), rows)
    with ir.InsertionPoint(loop.body):
        row = ctx.mul(ctx.add(first, loop.induction_variable), ctx.c64(C))
        if ca is not None:
            _fill_if(ctx, tile, row, ctx.smin(ca, ctx.c64(C)), other)
        _fill_if(ctx, tile, ctx.add(row, end), ctx.sub(ctx.c64(C), end), other)
        scf.YieldOp([])


def _load_head(ctx, acc, tile, gm, rows, r0, c0, head):
    """The valid columns [c0, c0 + head) of each valid row before the aligned run: GetValue from GM,
    SetValue into the tile (fewer than 32 bytes a row)."""
    before_scalar_reads(ctx)
    first = r0 if r0 is not None else ctx.c64(0)
    et = ir.Type.parse(tile.elem)
    rl = ctx.for_range(ctx.c64(0), rows)
    with ir.InsertionPoint(rl.body):
        r = ctx.add(first, rl.induction_variable)
        jl = ctx.for_range(ctx.c64(0), head)
        with ir.InsertionPoint(jl.body):
            c = ctx.add(c0, jl.induction_variable)
            v = A.op("get_value", [gm, ctx.add(ctx.mul(r, ctx.lin(acc.row_stride)), c)], et)
            A.op("set_value", [tile.value, ctx.add(ctx.mul(r, ctx.c64(acc.cols)), c), v])
            scf.YieldOp([])
        scf.YieldOp([])
    after_scalar_writes(ctx, tile)


def _scalar_load(ctx, op, ptr, mask, other, elem):
    p = ctx.ps.pointer(ptr)
    if p is None:
        raise ctx.error("this scalar load's address is not a kernel argument plus an offset")
    gm, off = gm_tensor(ctx, p.root), ctx.lin(p.offset.base)
    name = ctx.name_for(op)
    kw = {"name": name} if name else {}
    own = _reads_own_stores(ctx, ptr)
    if own:
        ctx.sync("MTE3_S")
    if mask is None:
        if own:
            _fresh_line(ctx, ctx.at(gm, off))
        ctx.vmap[op.result] = A.op("get_value", [gm, off], ir.Type.parse(elem), **kw)
        return
    ifop = scf.IfOp(ctx.scalar(mask), [ir.Type.parse(elem)], has_else=True)
    with ir.InsertionPoint(ifop.then_block):
        if own:
            _fresh_line(ctx, ctx.at(gm, off))
        scf.YieldOp([A.op("get_value", [gm, off], ir.Type.parse(elem))])
    with ir.InsertionPoint(ifop.else_block):
        scf.YieldOp([ctx.splat_scalar(other) if isinstance(other, Splat) else
                     (ctx.scalar(op.operands[2]) if other is not None else ctx.cst(elem, 0))])
    ctx.vmap[op.result] = ifop.results[0]


def _gather_load(ctx, op, ptr, mask, other, elem):
    """Lane by lane (lanes.py): an active lane GetValue from GM (through the DataCache: a line this kernel
    may have written by DMA is cleaned and invalidated first, asc-devkit GlobalTensor/GetValue.md)."""
    la = lane_access(ctx, ptr, mask, "load", "gather")
    shape = shape_of(op.result.type)
    out = ctx.new_tile(elem, shape, ctx.name_for(op), result=op.result)
    gm = gm_tensor(ctx, la.root)
    t = ir.Type.parse(elem)
    own = _reads_own_stores(ctx, ptr)

    def read(addr):
        if own:
            _fresh_line(ctx, ctx.at(gm, addr))
        return A.op("get_value", [gm, addr], t)

    def body(lane, idx):
        on = la.on(lane, idx)
        if on is None:
            v = read(la.address(lane, idx))
        else:
            ifop = scf.IfOp(on, [t], has_else=True)
            with ir.InsertionPoint(ifop.then_block):
                scf.YieldOp([read(la.address(lane, idx))])
            with ir.InsertionPoint(ifop.else_block):
                scf.YieldOp([ctx.splat_scalar(other) if isinstance(other, Splat) else ctx.cst(elem, 0)])
            v = ifop.results[0]
        A.op("set_value", [out.value, lane, v])

    before_scalar_reads(ctx)  # the tile's UB may still be read by the vector unit (write after read)
    if own:
        ctx.sync("MTE3_S")
    lane_loops(ctx, shape, body)
    after_scalar_writes(ctx, out)
    ctx.vmap[op.result] = out
    release_offsets(ctx, op, ptr)
