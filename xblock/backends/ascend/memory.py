"""Rules that move data or reshape it: load/store/atomics, reductions, scans, layout ops.

Loads and stores whose pointer-structure fits (rows of unit-stride elements, masks as bounds)
become one DataCopyPad through a double-buffered queue; masked-off lanes take `other` through
the copy's padding and a Duplicate of the rest. Everything else is a gather: a scalar
GetValue/SetValue loop, with a warning naming the line.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from ...dialects import ascendc as A
from .context import FLOAT, SIZE, Splat, Struct, Tile, elem_of, numel, round_up, shape_of
from .rules import RULES, rule

__all__ = ["RULES", "materialize", "rule"]


def _segments(op) -> list:
    return list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))


def _gm(L, root):
    g = L.vmap.get(root)
    if g is None or not A.is_global(g.type):
        raise L.error("ascend: this pointer does not come from a kernel argument")
    return g


def _counts(L, acc):
    """(rows, cols) of valid elements as i64 values, and whether they are the full tile."""
    def bound(limits, size):
        if not limits:
            return L.c64(size)
        v = L.lin(limits[0])
        for lim in limits[1:]:
            v = L.smin(v, L.lin(lim))
        return L.clamp(v, 0, size)

    rows, cols = bound(acc.row_limits, acc.rows), bound(acc.col_limits, acc.cols)
    for u in acc.uniform:
        c = L.const_of(L.lin(u))
        if c is not None:
            rows = rows if c > 0 else L.c64(0)
            continue
        on = arith.CmpIOp(arith.CmpIPredicate.sgt, L.lin(u), L.c64(0)).result
        rows = arith.SelectOp(on, rows, L.c64(0)).result
    for v, n in ((rows, "rows"), (cols, "cols")):
        if isinstance(v.owner, ir.Operation) or hasattr(v.owner, "attributes"):
            if v.owner.name != "arith.constant":
                v.owner.attributes["name"] = ir.StringAttr.get(n)
    full = not (acc.row_limits or acc.col_limits or acc.uniform)
    return rows, cols, full


def _dense(acc, sz) -> bool:
    """Unmasked, whole 32-byte blocks and contiguous rows: the count form of DataCopy fits."""
    if (acc.rows * acc.cols * sz) % 32:
        return False
    return acc.rows == 1 or acc.row_stride.as_const() == acc.cols


def _needs_scalar_loop(L, acc, sz) -> bool:
    """No DataCopy/DataCopyPad fits: a gather, rows not in whole 32-byte blocks, or no DataCopyPad."""
    if acc is None or (acc.rows > 1 and (acc.cols * sz) % 32):
        return True
    full = not (acc.row_limits or acc.col_limits or acc.uniform)
    return not L.soc.has_data_copy_pad and not (full and _dense(acc, sz))


def fill(L, t: Tile, offset, count, s: Splat) -> None:
    """Duplicate `s` into count elements of t from offset (through 16-bit patterns where needed)."""
    view, scalar, scale = t.value, None, 1
    if t.elem in ("f32", "f16", "i32", "i16"):
        scalar = L.splat_scalar(s)
    elif s.scalar is None and t.elem in ("bf16", "i8", "ui8"):
        import numpy as np

        if t.elem == "bf16":
            import ml_dtypes

            bits = int(np.array(s.const, dtype=ml_dtypes.bfloat16).view(np.int16))
        else:
            b = int(np.array(int(s.const)).astype(np.int8).view(np.uint8))
            bits, scale = int(np.array(b | (b << 8), dtype=np.uint16).view(np.int16)), 2
        view = A.op("reinterpret", [t.value], A.local_type(ir.Type.parse("i16")))
        scalar = L.cst("i16", bits)
    else:
        raise L.error(f"ascend: cannot fill a {t.elem} block with a runtime value")
    if scale != 1:
        offset = arith.DivSIOp(offset, L.c64(scale)).result
        count = arith.DivSIOp(count, L.c64(scale)).result
    A.op("duplicate", [L.at(view, offset), scalar, count])


# ----- loads and stores ----------------------------------------------------------------------------

@rule("xb.load")
def _load(L, op):
    r = op.result
    seg = _segments(op)
    ptr = op.operands[0]
    mask = op.operands[1] if seg[1] else None
    other = L.vmap.get(op.operands[1 + seg[1]]) if seg[2] else None
    elem = elem_of(r.type)
    if not str(r.type).startswith("tensor<"):
        return _scalar_load(L, op, ptr, mask, other, elem)
    acc = L.ps.tile_access(ptr, mask)
    sz = SIZE[elem]
    if _needs_scalar_loop(L, acc, sz):
        return _gather_load(L, op, ptr, mask, other, elem)
    name = L.name_for(op)
    shape = shape_of(r.type)
    nbytes = round_up(max(numel(shape), 1) * sz, 256)
    if nbytes > L.largest[0]:
        L.largest = (nbytes, L.loc)
    q = L.queue("VECIN", nbytes, name)
    local = A.local_type(ir.Type.parse(elem))
    t_in = A.op("alloc_tensor", [], local, queue=q.name, **({"name": name + "Local"} if name else {}))
    gm = L.at(_gm(L, acc.root), L.gm_offset(ptr, acc.base))
    if _dense(acc, sz) and not (acc.row_limits or acc.col_limits or acc.uniform):
        A.op("data_copy", [t_in, gm, L.c64(acc.rows * acc.cols)])
        A.op("enque", [t_in], queue=q.name)
        L.vmap[r] = Tile(A.op("deque", [], local, queue=q.name, **({"name": name} if name else {})),
                         elem, shape, nbytes, "vecin", q, line=L.loc[1])
        return
    rows, cols, _ = _counts(L, acc)
    blk = 32 // sz
    cols_al = L.round_up64(cols, blk)
    src_gap = L.mul(L.sub(L.lin(acc.row_stride), cols), L.c64(sz)) if acc.rows > 1 else L.c64(0)
    dst_gap = arith.DivSIOp(L.sub(L.c64(acc.cols * sz), L.mul(cols_al, L.c64(sz))), L.c64(32)).result \
        if acc.rows > 1 else L.c64(0)
    args = [t_in, gm, rows, L.named(L.mul(cols, L.c64(sz)), "rowBytes"), src_gap, dst_gap]
    if other is not None:
        if not isinstance(other, Splat):
            raise L.error("ascend: `other` of a load must be a scalar or a constant")
        args += [L.sub(cols_al, cols), L.splat_scalar(other) if elem not in ("bf16",) or other.scalar is not None
                 else L.cst("f32", other.const)]
    A.op("data_copy_pad", args, is_pad=other is not None)
    A.op("enque", [t_in], queue=q.name)
    t = A.op("deque", [], local, queue=q.name, **({"name": name} if name else {}))
    tile = Tile(t, elem, shape, nbytes, "vecin", q, line=L.loc[1])
    L.vmap[r] = tile
    if other is None:
        return
    if acc.row_limits or acc.uniform:  # whole rows past the last valid one
        if acc.rows == 1:  # all or nothing
            fill(L, tile, L.c64(0), L.mul(L.sub(L.c64(1), rows), L.c64(acc.cols)), other)
        else:
            start = L.mul(rows, L.c64(acc.cols))
            fill(L, tile, start, L.sub(L.c64(acc.rows * acc.cols), start), other)
    if acc.col_limits:  # the rest of each valid row after its padded 32-byte block
        start = L.smin(cols_al, L.c64(acc.cols))
        if acc.rows == 1:
            fill(L, tile, start, L.sub(L.c64(acc.cols), start), other)
        else:
            loop = L.for_range(L.c64(0), rows)
            with ir.InsertionPoint(loop.body):
                row = L.add(L.mul(loop.induction_variable, L.c64(acc.cols)), start)
                fill(L, tile, row, L.sub(L.c64(acc.cols), start), other)
                scf.YieldOp([])


def _scalar_load(L, op, ptr, mask, other, elem):
    p = L.ps.pointer(ptr)
    if p is None:
        raise L.error("ascend: this scalar load's address is not a kernel argument plus an offset")
    gm, off = _gm(L, p.root), L.lin(p.offset.base)
    name = L.name_for(op)
    kw = {"name": name} if name else {}
    if mask is None:
        L.vmap[op.result] = A.op("get_value", [gm, off], ir.Type.parse(elem), **kw)
        return
    ifop = scf.IfOp(L.scalar(mask), [ir.Type.parse(elem)], has_else=True)
    with ir.InsertionPoint(ifop.then_block):
        scf.YieldOp([A.op("get_value", [gm, off], ir.Type.parse(elem))])
    with ir.InsertionPoint(ifop.else_block):
        scf.YieldOp([L.splat_scalar(other) if isinstance(other, Splat) else
                     (L.scalar(op.operands[2]) if other is not None else L.cst(elem, 0))])
    L.vmap[op.result] = ifop.results[0]


def _lane_loops(L, shape, body):
    """Nested scf.for over every lane of `shape`; body(lane_index_i64, [i_d...])."""
    from contextlib import ExitStack

    dims = list(shape) or [1]
    idx = []
    with ExitStack() as stack:
        for d in dims:
            loop = L.for_range(0, d)
            idx.append(loop.induction_variable)
            stack.enter_context(ir.InsertionPoint(loop.body))
            stack.callback(scf.YieldOp, [])
        lane = idx[0]
        for d, i in zip(dims[1:], idx[1:]):
            lane = L.add(L.mul(lane, L.c64(d)), i)
        body(lane, idx[:len(shape)])


def _lane_on(L, bounds, idx):
    """i1 value: this lane is inside the mask's bounds."""
    on = None
    for d, lim in bounds.dims:
        c = arith.CmpIOp(arith.CmpIPredicate.slt, idx[d], L.lin(lim)).result
        on = c if on is None else arith.AndIOp(on, c).result
    for lim in bounds.uniform:
        c = arith.CmpIOp(arith.CmpIPredicate.sgt, L.lin(lim), L.c64(0)).result
        on = c if on is None else arith.AndIOp(on, c).result
    return on


def _scalar_access(L, ptr, mask, access: str, kind: str):
    """The pointer and mask structure of a gather/scatter run as a scalar loop, with its warning."""
    p = L.ps.pointer(ptr)
    b = L.ps.mask(mask) if mask is not None else None
    if p is None or (mask is not None and b is None):
        raise L.error(f"ascend: this {access}'s addresses or mask depend on data; {kind}s of that kind are not "
                      "supported yet")
    why = f"this {access} is a {kind} (not rows of contiguous elements)" if L.soc.has_data_copy_pad else \
        f"{L.soc.name} has no DataCopyPad for this masked or unaligned {access}, so it is a {kind}"
    L.warn(f"ascend: {why}; it runs as a scalar GetValue/SetValue loop")
    return p, b


def _gather_load(L, op, ptr, mask, other, elem):
    p, b = _scalar_access(L, ptr, mask, "load", "gather")
    shape = shape_of(op.result.type)
    out = L.new_tile(elem, shape, L.name_for(op), result=op.result)
    gm = _gm(L, p.root)
    t = ir.Type.parse(elem)

    def body(lane, idx):
        addr = L.lin(p.offset.base)
        for d, s in enumerate(p.offset.strides):
            if not s.is_zero():
                addr = L.add(addr, L.mul(idx[d], L.lin(s)))
        on = _lane_on(L, b, idx) if b is not None else None
        if on is None:
            v = A.op("get_value", [gm, addr], t)
        else:
            ifop = scf.IfOp(on, [t], has_else=True)
            with ir.InsertionPoint(ifop.then_block):
                scf.YieldOp([A.op("get_value", [gm, addr], t)])
            with ir.InsertionPoint(ifop.else_block):
                scf.YieldOp([L.splat_scalar(other) if isinstance(other, Splat) else L.cst(elem, 0)])
            v = ifop.results[0]
        A.op("set_value", [out.value, lane, v])

    _lane_loops(L, shape, body)
    _after_scalar_writes(L, out)
    L.vmap[op.result] = out


def _after_scalar_writes(L, t: Tile) -> None:
    L.sync("S_V")
    if t.kind == "vecout":
        L.sync("S_MTE3")


def _before_scalar_reads(L) -> None:
    L.sync("MTE2_S")
    L.sync("V_S")


def _to_vecout(L, value: ir.Value, elem: str, store) -> Tile:
    """The stored block in a VECOUT queue tensor (computed there already, or copied there)."""
    x = L.vmap.get(value)
    if isinstance(x, Tile) and x.kind == "vecout" and not x.freed:
        return x
    shape = shape_of(value.type)
    nbytes = round_up(max(numel(shape), 1) * SIZE[elem], 256)
    label = L.store_label(store)
    q = L.queue("VECOUT", nbytes, label)
    t = Tile(A.op("alloc_tensor", [], A.local_type(ir.Type.parse(elem)), queue=q.name, name=label + "Local"),
             elem, shape, nbytes, "vecout", q)
    if isinstance(x, Splat):
        fill(L, t, L.c64(0), L.c64(t.count), x)
    else:
        src = L.tile(value)
        A.op("data_copy", [t.value, src.value, L.c64(src.padded)])
    return t


def _store_tile(L, op, atomic: str | None):
    seg = _segments(op)
    ptr, value = op.operands[0], op.operands[1]
    mask = op.operands[2] if seg[2] else None
    elem = elem_of(value.type)
    acc = L.ps.tile_access(ptr, mask)
    sz = SIZE[elem]
    if _needs_scalar_loop(L, acc, sz):
        if atomic:
            raise L.error("ascend: atomics on gathered addresses are not supported")
        return _scatter_store(L, op, ptr, value, mask, elem)
    t = _to_vecout(L, value, elem, op)
    A.op("enque", [t.value], queue=t.queue.name)
    out = A.op("deque", [], t.value.type, queue=t.queue.name)
    gm = L.at(_gm(L, acc.root), L.gm_offset(ptr, acc.base))
    if atomic:
        A.op("set_atomic_add", [], dtype=elem)
    if _dense(acc, sz) and not (acc.row_limits or acc.col_limits or acc.uniform):
        A.op("data_copy", [gm, out, L.c64(acc.rows * acc.cols)])
    else:
        rows, cols, _ = _counts(L, acc)
        src_gap = arith.DivSIOp(L.sub(L.c64(acc.cols * sz), L.mul(L.round_up64(cols, 32 // sz), L.c64(sz))),
                                L.c64(32)).result if acc.rows > 1 else L.c64(0)
        dst_gap = L.mul(L.sub(L.lin(acc.row_stride), cols), L.c64(sz)) if acc.rows > 1 else L.c64(0)
        A.op("data_copy_pad", [gm, out, rows, L.named(L.mul(cols, L.c64(sz)), "rowBytes"), src_gap, dst_gap],
             is_pad=False)
    if atomic:
        A.op("set_atomic_none", [])
    A.op("free_tensor", [out], queue=t.queue.name)
    t.freed, t.queue.busy = True, False


def _scatter_store(L, op, ptr, value, mask, elem):
    p, b = _scalar_access(L, ptr, mask, "store", "scatter")
    src = L.tile(value)
    if src.kind == "vecout":  # computed into an output queue buffer: take it through the queue
        A.op("enque", [src.value], queue=src.queue.name)
        out = A.op("deque", [], src.value.type, queue=src.queue.name)
        src.freed, src.queue.busy = True, False
        src = Tile(out, src.elem, src.shape, src.bytes, "vecout", src.queue, refs=1)
        L.temps.append(src)
    gm = _gm(L, p.root)
    _before_scalar_reads(L)
    shape = shape_of(value.type)

    def body(lane, idx):
        addr = L.lin(p.offset.base)
        for d, s in enumerate(p.offset.strides):
            if not s.is_zero():
                addr = L.add(addr, L.mul(idx[d], L.lin(s)))
        on = _lane_on(L, b, idx) if b is not None else None
        if on is None:
            A.op("set_value", [gm, addr, A.op("get_value", [src.value, lane], ir.Type.parse(elem))])
        else:
            ifop = scf.IfOp(on, [], has_else=False)
            with ir.InsertionPoint(ifop.then_block):
                A.op("set_value", [gm, addr, A.op("get_value", [src.value, lane], ir.Type.parse(elem))])
                scf.YieldOp([])

    _lane_loops(L, shape, body)


@rule("xb.store")
def _store(L, op):
    value = op.operands[1]
    if str(value.type).startswith("tensor<"):
        return _store_tile(L, op, None)
    seg = _segments(op)
    p = L.ps.pointer(op.operands[0])
    if p is None:
        raise L.error("ascend: this scalar store's address is not a kernel argument plus an offset")
    gm = L.at(_gm(L, p.root), L.lin(p.offset.base))

    def put():
        A.op("set_value", [gm, L.c64(0), L.scalar(value)])
        A.op("dcci", [gm])

    if seg[2]:
        ifop = scf.IfOp(L.scalar(op.operands[2]), [], has_else=False)
        with ir.InsertionPoint(ifop.then_block):
            put()
            scf.YieldOp([])
    else:
        put()


@rule("xb.atomic_rmw")
def _atomic(L, op):
    kind = ir.StringAttr(op.attributes["kind"]).value
    if kind not in ("fadd", "add"):
        user = "atomic_" + kind.lstrip("fu") if kind not in ("xchg", "xor") else "atomic_" + kind
        raise L.error(f"ascend: {user} (xb.atomic_rmw {kind}) is not supported: the AscendC reference documents "
                      f"only the atomic-add copy path (SetAtomicAdd)")
    if any(True for _ in op.result.uses):
        raise L.error("ascend: the old value returned by an atomic is not available on ascend")
    if not str(op.operands[1].type).startswith("tensor<"):
        raise L.error("ascend: scalar atomics are not supported yet")
    elem = elem_of(op.operands[1].type)
    if elem not in ("f32", "f16", "i32"):
        raise L.error(f"ascend: atomic add of {elem} is not supported")
    _store_tile(L, op, "add")


# ----- materializing structure ---------------------------------------------------------------------

def materialize(L, v: ir.Value) -> Tile:
    """A Struct (integer or mask block) as a Tile: from iota tiles built once before the grid loop."""
    shape = shape_of(v.type)
    elem = elem_of(v.type)
    if elem == "i1":
        b = L.ps.mask(v)
        if b is None:
            raise L.error("internal: mask without structure")
        bits = L.new_tile("ui8", shape)
        conds = list(b.dims)
        if not conds:
            conds = [(0, None)]
        parts = []
        for k, (d, lim) in enumerate(conds):
            limit = L.c64(shape[d] if shape else 1) if lim is None else L.lin(lim)
            if k == 0:
                for u in b.uniform:
                    on = arith.CmpIOp(arith.CmpIPredicate.sgt, L.lin(u), L.c64(0)).result
                    limit = arith.SelectOp(on, limit, L.c64(0)).result
            io = L.iota(shape or (1,), d)
            dst = bits if k == 0 else L.temp("ui8", shape)
            A.op("compare_scalar", [dst.value, io.value, arith.SIToFPOp(ir.F32Type.get(), limit).result,
                                    L.c64(io.padded)], mode="LT")
            parts.append(dst)
        u16 = A.local_type(ir.Type.parse("ui16"))
        for p in parts[1:]:
            views = [A.op("reinterpret", [t.value], u16) for t in (bits, bits, p)]
            A.op("vec", views + [L.c64(bits.bytes // 2)], api="And")
        return bits
    if elem.startswith("!xb.ptr"):
        raise L.error("ascend: a block of pointers cannot be used as data")
    a = L.ps.affine(v)
    owner = v.owner
    if a is None and not isinstance(owner, ir.Block) and owner.name == "arith.remsi":
        from .lowering import divmod_tile  # a wrapped offset used as data after all

        return divmod_tile(L, owner, bind=False)
    if a is None and L.ps.affine(v, wrapped=True) is not None:
        raise L.error("ascend: offsets that wrap around (`% n`) can address the operands of a dot (the Cube path) "
                      "or be stored as they are; other uses are not supported yet")
    if a is None:
        raise L.error("internal: integer block without structure")
    f = L.new_tile("f32", shape)
    base = arith.SIToFPOp(ir.F32Type.get(), L.lin(a.base)).result
    A.op("duplicate", [f.value, base, L.c64(f.padded)])
    for d, s in enumerate(a.strides):
        if s.is_zero():
            continue
        io = L.iota(shape, d)
        if s.as_const() == 1:
            A.op("vec", [f.value, f.value, io.value, L.c64(f.count)], api="Add")
        else:
            tmp = L.temp("f32", shape)
            A.op("vec_scalar", [tmp.value, io.value, arith.SIToFPOp(ir.F32Type.get(), L.lin(s)).result,
                                L.c64(f.count)], api="Muls")
            A.op("vec", [f.value, f.value, tmp.value, L.c64(f.count)], api="Add")
    if elem == "f32":
        return f
    out = L.new_tile(elem, shape)
    A.op("cast", [out.value, f.value, L.c64(f.count)], round="CAST_RINT")
    L.release(f)
    return out


# ----- reductions and scans -----------------------------------------------------------------------

FOLD = {"sum": "Add", "max": "Max", "min": "Min"}
REDUCE = {"sum": "ReduceSum", "max": "ReduceMax", "min": "ReduceMin", "argmax": "ReduceMax",
          "argmin": "ReduceMin"}


def reduce_tmp_elems(count: int, sz: int, cal_index: bool) -> int:
    """Scratch ReduceMax/ReduceMin need (the emulator checks the same rule)."""
    per, blk = 256 // sz, 32 // sz
    first = max(1, -(-count // per))
    need = round_up(2 * first, blk)
    if cal_index:
        need += round_up(2 * -(-2 * first // per), blk)
    return need


def _reduce_all(L, t: Tile, kind: str, name):
    """A scalar: the fold-to-256-bytes idiom, then one count-form reduction."""
    ce = "f32" if t.elem not in ("f16", "f32") else t.elem
    if ce != t.elem:
        from .lowering import as_elem

        t = as_elem(L, t, ce)
    sz = SIZE[ce]
    per = 256 // sz
    n = t.count
    src, count = t, n
    if kind in FOLD and n >= 2 * per and n & (n - 1) == 0:
        half = n // 2
        work = L.temp(ce, half)
        A.op("vec", [work.value, t.value, L.at(t.value, half), L.c64(half)], api=FOLD[kind])
        while half > per:
            half //= 2
            A.op("vec", [work.value, work.value, L.at(work.value, half), L.c64(half)], api=FOLD[kind])
        src, count = work, half
    dst = L.temp(ce, 32 // sz)
    tmp = L.temp(ce, reduce_tmp_elems(count, sz, kind.startswith("arg")))
    A.op("reduce", [dst.value, src.value, tmp.value, L.c64(count)], api=REDUCE[kind],
         cal_index=kind.startswith("arg"))
    L.sync("V_S")
    kw = {"name": name} if name else {}
    if kind.startswith("arg"):
        it = "i32" if sz == 4 else "i16"  # the index is stored in the bits of dst[1]
        bits = A.op("reinterpret", [dst.value], A.local_type(ir.Type.parse(it)))
        idx = A.op("get_value", [bits, L.c64(1)], ir.Type.parse(it))
        if it == "i16":
            idx = arith.ExtUIOp(ir.IntegerType.get_signless(32), idx).result
        return idx, kw
    return A.op("get_value", [dst.value, L.c64(0)], ir.Type.parse(ce), **kw), kw


@rule("xb.reduce")
def _reduce(L, op):
    kind = ir.StringAttr(op.attributes["kind"]).value
    axis = int(ir.IntegerAttr(op.attributes["axis"]).value)
    from .scalar_reduce import KINDS, scalar_reduce

    if kind in KINDS:
        return scalar_reduce(L, op, kind, axis)
    if len(op.operands) != 1 or kind not in REDUCE:
        raise L.error(f"ascend: reduction '{kind}' is not supported yet")
    src = op.operands[0]
    shape = shape_of(src.type)
    t = L.tile(src)
    r = op.results[0]
    name = L.name_for(op)
    real = [d for d, s in enumerate(shape) if s != 1]
    if not str(r.type).startswith("tensor<") or real == [axis] or not real:
        v, kw = _reduce_all(L, t, kind, name)
        want = elem_of(r.type)
        if kind.startswith("arg"):
            if str(v.type) != want:
                v = arith.ExtSIOp(ir.Type.parse(want), v).result
            if kw:
                v.owner.attributes["name"] = ir.StringAttr.get(kw["name"])
        elif str(v.type) != want:
            from .lowering import scalar_convert

            v = scalar_convert(L, v, want)
        if str(r.type).startswith("tensor<"):
            L.vmap[r] = Splat(want, shape_of(r.type), scalar=v)
        else:
            L.vmap[r] = v
        return
    if len(real) != 2 or kind not in FOLD or axis not in real:
        raise L.error("ascend: only reductions of 1-D blocks, or of 2-D blocks along one axis, are supported")
    rows, cols = shape[real[0]], shape[real[1]]
    ce = "f32" if t.elem not in ("f16", "f32") else t.elem
    if ce != t.elem:
        from .lowering import as_elem

        t = as_elem(L, t, ce)
    out_shape = shape_of(r.type)
    if axis == real[0]:  # down the columns: row by row, one vector instruction each
        out = L.new_tile(ce, out_shape, name, result=r if elem_of(r.type) == ce else None)
        A.op("data_copy", [out.value, t.value, L.c64(round_up(cols, 32 // SIZE[ce]))])
        loop = L.for_range(1, rows)
        with ir.InsertionPoint(loop.body):
            row = L.at(t.value, L.mul(loop.induction_variable, L.c64(cols)))
            A.op("vec", [out.value, out.value, row, L.c64(cols)], api=FOLD[kind])
            scf.YieldOp([])
    else:  # along rows: one count-form reduction per row
        out = L.new_tile(ce, out_shape, name, result=r if elem_of(r.type) == ce else None)
        dst = L.temp(ce, 32 // SIZE[ce])
        tmp = L.temp(ce, reduce_tmp_elems(cols, SIZE[ce], False))
        loop = L.for_range(0, rows)
        with ir.InsertionPoint(loop.body):
            i = loop.induction_variable
            A.op("reduce", [dst.value, L.at(t.value, L.mul(i, L.c64(cols))), tmp.value, L.c64(cols)],
                 api=REDUCE[kind], cal_index=False)
            L.sync("V_S")
            A.op("set_value", [out.value, i, A.op("get_value", [dst.value, L.c64(0)], ir.Type.parse(ce))])
            L.sync("S_V")
            scf.YieldOp([])
    L.vmap[r] = out
    if elem_of(r.type) != ce:
        from .lowering import finish

        L.vmap.pop(r)
        finish(L, op, out, ce)


@rule("xb.scan")
def _scan(L, op):
    kind = ir.StringAttr(op.attributes["kind"]).value
    axis = int(ir.IntegerAttr(op.attributes["axis"]).value)
    reverse = ir.BoolAttr(op.attributes["reverse"]).value
    if len(op.operands) != 1 or kind not in ("cumsum", "cumprod"):
        raise L.error(f"ascend: scan '{kind}' is not supported yet")
    src = op.operands[0]
    shape = shape_of(src.type)
    if axis != len(shape) - 1:
        raise L.error("ascend: scans run along the last axis only")
    t = L.tile(src)
    elem = elem_of(op.results[0].type)
    et = ir.Type.parse(elem)
    out = L.new_tile(elem, shape, L.name_for(op), result=op.results[0])
    cols = shape[-1]
    rows = numel(shape) // cols
    _before_scalar_reads(L)
    outer = L.for_range(0, rows)
    with ir.InsertionPoint(outer.body):
        base = L.mul(outer.induction_variable, L.c64(cols))
        init = L.cst(elem, 0 if kind == "cumsum" else 1)
        inner = scf.ForOp(L.c64(0), L.c64(cols), L.c64(1), [init])
        with ir.InsertionPoint(inner.body):
            j = inner.induction_variable
            if reverse:
                j = L.sub(L.c64(cols - 1), j)
            k = L.add(base, j)
            x = A.op("get_value", [t.value, k], et)
            run = inner.inner_iter_args[0]
            nxt = (arith.AddFOp if elem in FLOAT else arith.AddIOp)(run, x).result if kind == "cumsum" else \
                (arith.MulFOp if elem in FLOAT else arith.MulIOp)(run, x).result
            A.op("set_value", [out.value, k, nxt])
            scf.YieldOp([nxt])
        scf.YieldOp([])
    _after_scalar_writes(L, out)
    L.vmap[op.results[0]] = out


# ----- layout -------------------------------------------------------------------------------------

def _view(L, op):
    x = L.vmap.get(op.operands[0])
    r = op.result
    if isinstance(x, Splat):
        L.vmap[r] = Splat(x.elem, shape_of(r.type), x.scalar, x.const)
    elif isinstance(x, Struct) or x is None or elem_of(r.type) == "i1" and L.ps.mask(r) is not None:
        L.vmap[r] = Struct(r)
    else:
        L.vmap[r] = Tile(x.value, x.elem, shape_of(r.type), x.bytes, "view", parent=L.hold(x))
    return x


@rule("xb.expand_dims", "xb.reshape", "xb.ptr_cast")
def _reshape(L, op):
    _view(L, op)


@rule("xb.broadcast")
def _broadcast(L, op):
    r = op.result
    x = L.vmap.get(op.operands[0])
    src_shape, shape = shape_of(op.operands[0].type), shape_of(r.type)
    if isinstance(x, (Splat, Struct)) or x is None or (elem_of(r.type) == "i1" and L.ps.mask(r) is not None) \
            or numel(src_shape) == numel(shape):
        return _view(L, op)
    t = L.tile(op.operands[0])
    out = L.new_tile(t.elem, shape, L.name_for(op), result=r)
    sz = SIZE[t.elem]
    if numel(src_shape) == 1:
        _before_scalar_reads(L)
        s = A.op("get_value", [t.value, L.c64(0)], ir.Type.parse(t.elem))
        A.op("duplicate", [out.value, s, L.c64(out.count)])
    elif len(shape) == 2 and src_shape[0] == 1 and (shape[1] * sz) % 32 == 0:
        loop = L.for_range(0, shape[0])
        with ir.InsertionPoint(loop.body):
            dst = L.at(out.value, L.mul(loop.induction_variable, L.c64(shape[1])))
            A.op("data_copy", [dst, t.value, L.c64(shape[1])])
            scf.YieldOp([])
    elif len(shape) == 2 and src_shape[1] == 1 and (shape[1] * sz) % 32 == 0:
        _before_scalar_reads(L)
        loop = L.for_range(0, shape[0])
        with ir.InsertionPoint(loop.body):
            i = loop.induction_variable
            s = A.op("get_value", [t.value, i], ir.Type.parse(t.elem))
            A.op("duplicate", [L.at(out.value, L.mul(i, L.c64(shape[1]))), s, L.c64(shape[1])])
            scf.YieldOp([])
    else:
        raise L.error(f"ascend: broadcast from {src_shape} to {shape} is not supported yet")
    L.vmap[r] = out


@rule("xb.trans")
def _trans(L, op):
    r = op.result
    x = L.vmap.get(op.operands[0])
    if isinstance(x, (Splat, Struct)) or x is None:
        return _view(L, op)
    shape = shape_of(op.operands[0].type)
    if len(shape) != 2:
        raise L.error("ascend: only 2-D transposes are supported")
    t = L.tile(op.operands[0])
    out = L.new_tile(t.elem, shape_of(r.type), L.name_for(op), result=r)
    rows, cols = shape
    et = ir.Type.parse(t.elem)
    _before_scalar_reads(L)
    outer = L.for_range(0, rows)
    with ir.InsertionPoint(outer.body):
        i = outer.induction_variable
        inner = L.for_range(0, cols)
        with ir.InsertionPoint(inner.body):
            j = inner.induction_variable
            v = A.op("get_value", [t.value, L.add(L.mul(i, L.c64(cols)), j)], et)
            A.op("set_value", [out.value, L.add(L.mul(j, L.c64(rows)), i), v])
            scf.YieldOp([])
        scf.YieldOp([])
    _after_scalar_writes(L, out)
    L.vmap[r] = out
