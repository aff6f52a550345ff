"""Gathers and scatters lane by lane: each lane's address and mask bit as C++ scalars.

A helper of access.py and the load rule. A pointer block whose offsets are affine or quasi-affine
(integer `//` and `%` by scalars; passes/pointer_structure.py) has each lane's address computed from
its indices. Anything else is a pointer whose offsets depend on data (`table + (x0 + 32 * idx)`,
`logits + (label + V * row)`): the offset blocks were computed as data in UB by the rules of the ops
that make them (int32 lanes, int64 ones lane by lane), and each lane adds up what its `addptr`s
contribute: a lane of each offset tile (LocalTensor::GetValue), the affine parts from its indices.
A mask that is not a conjunction of bounds or comparisons of quasi-affine blocks is read as the bit
mask Compare makes (bit i % 8 of byte i / 8), also lane by lane.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass
from typing import Callable

from mlir import ir
from mlir.dialects import arith, scf

from ....dialects import ascendc as A
from ....passes.pointer_structure import Quasi, QuasiMask
from ..irwalk import ancestor_in, block_of
from ..values import Splat, shape_of
from .tiles import mask_of

Idx = list  # one i64 ir.Value per dimension of the access


@dataclass
class Lanes:
    """How a gather or scatter reaches GM lane by lane: the pointer's root (a kernel argument's
    GlobalTensor in ctx.vmap), each lane's element offset from it, and whether the lane is on
    (None: always). `data`: the offsets depend on loaded data."""

    root: ir.Value
    address: Callable[[ir.Value, Idx], ir.Value]
    on: Callable[[ir.Value, Idx], ir.Value | None]
    data: bool


def lane_access(ctx, ptr, mask, access: str, kind: str) -> Lanes:
    """The lane-by-lane form of a gather or scatter (`access` "load", "store" or "atomic"; `kind`
    "gather" or "scatter"), with its warning at the line. Offset tiles and the mask's bits are made
    here, before the caller opens its lane loops (vector code cannot go inside them)."""
    p = ctx.ps.pointer(ptr) or ctx.ps.quasi_pointer(ptr)
    shape = shape_of(ptr.type)
    if p is not None:
        root, address, data = p.root, (lambda lane, idx: lane_address(ctx, p, idx)), False
    else:
        walked = _data_pointer(ctx, ptr)
        if walked is None:
            raise ctx.error(_not_structured(ctx, ptr, access, kind))
        root, data = walked[0], True
        address = lambda lane, idx: walked[1](idx)  # noqa: E731
    b = None if mask is None else ctx.ps.mask(mask, lower=True) or ctx.ps.quasi_mask(mask)
    if mask is None:
        on = lambda lane, idx: None  # noqa: E731
    elif b is not None:
        on = lambda lane, idx: lane_on(ctx, b, idx)  # noqa: E731
    else:
        bits = mask_of(ctx, mask, shape)
        if bits is not ctx.vmap.get(mask):  # made here: freed after the access
            ctx.temps.append(bits)
        on = lambda lane, idx: mask_bit(ctx, bits, lane)  # noqa: E731
        data = True
    if data:
        each = "reads GM with a GetValue" if kind == "gather" else \
            "writes GM with a one-element DataCopyPad" + (" under the atomic" if access == "atomic" else "")
        ctx.warn(f"this {access}'s addresses or mask depend on data; it runs lane by lane (each active lane {each})")
    elif ctx.soc.has_data_copy_pad:
        ctx.warn(f"this {access} is a {kind} (not rows of contiguous elements); it runs as a scalar GetValue/SetValue "
                 "loop")
    else:
        ctx.warn(f"{ctx.soc.name} has no DataCopyPad for this masked or unaligned {access}, so it is a {kind}; it "
                 "runs as a scalar GetValue/SetValue loop")
    return Lanes(root, address, on, data)


def mask_bit(ctx, bits, lane) -> ir.Value:
    """Lane `lane` of a Compare bit mask tile (ui8): bit lane % 8 of byte lane / 8, as an i1."""
    i8 = ir.IntegerType.get_signless(8)
    u8 = A.op("reinterpret", [bits.value], A.local_type(i8))
    byte = A.op("get_value", [u8, arith.ShRSIOp(lane, ctx.c64(3)).result], i8)
    wide = arith.ExtUIOp(ir.IntegerType.get_signless(64), byte).result
    bit = arith.AndIOp(arith.ShRSIOp(wide, arith.AndIOp(lane, ctx.c64(7)).result).result, ctx.c64(1)).result
    return arith.CmpIOp(arith.CmpIPredicate.ne, bit, ctx.c64(0)).result


# ----- pointers whose offsets depend on data -----------------------------------------------------

def _data_pointer(ctx, v: ir.Value):
    """(root, address(lane, idx)) of a pointer block built by addptr, broadcast, expand_dims, trans
    and size-1 reshapes from a structured pointer and integer offset blocks; None if it is not."""
    p = ctx.ps.pointer(v) or ctx.ps.quasi_pointer(v)
    if p is not None:
        return p.root, lambda idx: lane_address(ctx, p, idx)
    owner = v.owner
    if isinstance(owner, ir.Block) or v in ctx.ext.carried_ptrs:
        if v not in ctx.ext.carried_ptrs:
            return None
        init, shift = ctx.ext.carried_ptrs[v]  # a loop-carried block: its start plus the steps taken
        start = _data_pointer(ctx, init)
        return None if start is None else (start[0], lambda idx: ctx.add(start[1](idx), ctx.lin(shift)))
    op = owner.operation if hasattr(owner, "operation") else owner
    if op.name == "xb.addptr":
        base = _data_pointer(ctx, op.operands[0])
        off = _offset_lanes(ctx, op.operands[1])
        if base is None or off is None:
            return None
        return base[0], lambda idx: ctx.add(base[1](idx), off(idx))
    remap = _index_map(op, shape_of(op.operands[0].type) if op.operands else (), shape_of(v.type))
    if remap is None:
        return None
    src = _data_pointer(ctx, op.operands[0])
    return None if src is None else (src[0], lambda idx: src[1](remap(ctx, idx)))


def data_root(ctx, v: ir.Value):
    """The root of a pointer block that `_data_pointer` can follow lane by lane (a structured pointer plus
    offset blocks, through shape ops), found without making any tile; None when there is none."""
    p = ctx.ps.pointer(v) or ctx.ps.quasi_pointer(v)
    if p is not None:
        return p.root
    if v in ctx.ext.carried_ptrs:
        return data_root(ctx, ctx.ext.carried_ptrs[v][0])
    owner = v.owner
    if isinstance(owner, ir.Block):
        return None
    op = owner.operation if hasattr(owner, "operation") else owner
    if op.name != "xb.addptr" and _index_map(op, shape_of(op.operands[0].type) if op.operands else (),
                                             shape_of(v.type)) is None:
        return None
    return data_root(ctx, op.operands[0])


def _offset_lanes(ctx, off: ir.Value):
    """idx -> the i64 value of lane idx of the integer offset `off` (a block or a scalar)."""
    if not str(off.type).startswith("tensor<"):
        s = ctx.to64(ctx.scalar(off))
        return lambda idx: s
    ctx.ps.affine(off, wrapped=True)  # asked first, as the lowering does (see data_offsets)
    q = ctx.ps.quasi(off)
    if q is not None:
        return lambda idx: lane_value(ctx, q, idx)
    held = ctx.vmap.get(off)
    if isinstance(held, Splat):
        s = ctx.to64(ctx.splat_scalar(held))
        return lambda idx: s
    t = ctx.tile(off)
    shape = t.shape
    unsigned = t.elem.startswith("ui")
    et = ir.Type.parse(t.elem)

    def read(idx):
        lane = None
        for d, i in zip(shape, idx):
            lane = i if lane is None else ctx.add(ctx.mul(lane, ctx.c64(d)), i)
        v = A.op("get_value", [t.value, lane if lane is not None else ctx.c64(0)], et)
        if str(v.type) == "i64":
            return v
        return (arith.ExtUIOp if unsigned else arith.ExtSIOp)(ctx.i64, v).result

    return read


def _index_map(op, src_shape: tuple, shape: tuple):
    """(ctx, idx of the result) -> idx of the source, for a shape op on a pointer block; None otherwise."""
    n = op.name
    if n == "xb.broadcast":
        return lambda ctx, idx: [ctx.c64(0) if src_shape[d] == 1 else idx[d] for d in range(len(shape))]
    if n == "xb.expand_dims":
        axis = int(ir.IntegerAttr(op.attributes["axis"]).value)
        return lambda ctx, idx: idx[:axis] + idx[axis + 1:]
    if n == "xb.trans":
        order = list(ir.DenseI32ArrayAttr(op.attributes["order"]))

        def transposed(ctx, idx):
            src = [None] * len(order)
            for d, o in enumerate(order):
                src[o] = idx[d]
            return src
        return transposed
    if n == "xb.reshape":
        keep = [d for d in range(len(shape)) if shape[d] != 1]
        if [src_shape[d] for d in range(len(src_shape)) if src_shape[d] != 1] != [shape[d] for d in keep]:
            return None

        def reshaped(ctx, idx):
            it = iter(idx[d] for d in keep)
            return [ctx.c64(0) if x == 1 else next(it) for x in src_shape]
        return reshaped
    return None


# ----- affine and quasi-affine lanes -------------------------------------------------------------

def lane_loops(ctx, shape, body):
    """Nested scf.for over every lane of `shape`; body(lane_index_i64, [i_d...])."""
    dims = list(shape) or [1]
    idx = []
    with ExitStack() as stack:
        for d in dims:
            loop = ctx.for_range(0, d)
            idx.append(loop.induction_variable)
            stack.enter_context(ir.InsertionPoint(loop.body))
            stack.callback(scf.YieldOp, [])
        lane = idx[0]
        for d, i in zip(dims[1:], idx[1:]):
            lane = ctx.add(ctx.mul(lane, ctx.c64(d)), i)
        body(lane, idx[:len(shape)])


def lane_on(ctx, bounds, idx):
    """i1 value: this lane is inside the mask's bounds (or meets its QuasiMask's comparisons); None: on."""
    on = None
    if isinstance(bounds, QuasiMask):
        for pred, a, b in bounds.conds:
            c = arith.CmpIOp(arith.CmpIPredicate(pred), lane_value(ctx, a, idx), lane_value(ctx, b, idx)).result
            on = c if on is None else arith.AndIOp(on, c).result
        return on
    for d, lim in bounds.dims:
        c = arith.CmpIOp(arith.CmpIPredicate.slt, idx[d], ctx.lin(lim)).result
        on = c if on is None else arith.AndIOp(on, c).result
    for d, lo, _ in bounds.lower:
        c = arith.CmpIOp(arith.CmpIPredicate.sge, idx[d], ctx.lin(lo)).result
        on = c if on is None else arith.AndIOp(on, c).result
    for lim in bounds.uniform:
        c = arith.CmpIOp(arith.CmpIPredicate.sgt, ctx.lin(lim), ctx.c64(0)).result
        on = c if on is None else arith.AndIOp(on, c).result
    return on


def lane_address(ctx, p, idx) -> ir.Value:
    """The element offset of lane `idx` of pointer block `p` (a Pointer or a QuasiPointer)."""
    return lane_value(ctx, p.offset, idx)


def lane_value(ctx, a, idx) -> ir.Value:
    """Lane `idx` of an Affine (base + sum of index * stride) or Quasi block, as an i64 value."""
    if isinstance(a, Quasi):
        v = lane_value(ctx, a.affine, idx)
        for t, c in a.terms:
            q = _divide(ctx, lane_value(ctx, t.x, idx), ctx.lin(t.d), t.kind)
            v = ctx.add(v, q if c.as_const() == 1 else ctx.mul(q, ctx.lin(c)))
        return v
    v = ctx.lin(a.base)
    for d, s in enumerate(a.strides):
        if not s.is_zero():
            v = ctx.add(v, ctx.mul(idx[d], ctx.lin(s)))
    return v


def _divide(ctx, x, d, kind: str) -> ir.Value:
    """C's truncating x / d or x % d, and 0 for d == 0 as the simulator has it (no trap)."""
    op = arith.DivSIOp if kind == "div" else arith.RemSIOp
    if ctx.const_of(d) not in (None, 0):
        return op(x, d).result
    zero = arith.CmpIOp(arith.CmpIPredicate.eq, d, ctx.c64(0)).result
    q = op(x, arith.SelectOp(zero, ctx.c64(1), d).result).result
    return arith.SelectOp(zero, ctx.c64(0), q).result


def _not_structured(ctx, v: ir.Value, access: str, kind: str) -> str:
    """Why the addresses of a gather/scatter cannot be followed lane by lane."""
    return (f"this {access}'s pointer block is not a kernel argument plus offset blocks (addptr, broadcast, "
            f"expand_dims, trans of one): {kind}s through other pointer blocks (loop-carried, selected with "
            "tl.where, made from integers) are not supported on ascend")


# ----- the offset tiles a pointer block holds ----------------------------------------------------

_POINTER_OPS = ("xb.addptr", "xb.broadcast", "xb.expand_dims", "xb.trans", "xb.reshape", "xb.splat")


def data_offsets(ctx, op) -> bool:
    """Whether `op` (an xb.addptr) adds an offset block that depends on data to a pointer block."""
    off, r = op.operands[1], op.result
    # in the order the lowering asks (pointer before quasi_pointer, affine before quasi): the analysis
    # memoizes, and a form asked first while another is being derived would be cached as None
    return str(off.type).startswith("tensor<") and ctx.ps.pointer(r) is None and ctx.ps.quasi_pointer(r) is None \
        and ctx.ps.affine(off, wrapped=True) is None and ctx.ps.quasi(off) is None


def hold_offsets(ctx, op) -> None:
    """The offset tile of the data-dependent `op` (xb.addptr) stays live past the addptr, its last use
    as a value, until the last load, store or atomic through the pointer (release_offsets)."""
    off = op.operands[1]
    if isinstance(ctx.vmap.get(off), Splat):
        return
    ctx.ext.held_offsets[op.result] = ctx.hold(ctx.tile(off))


def release_offsets(ctx, op, ptr: ir.Value) -> None:
    """After `op` accessed memory through `ptr`: free the offset tiles of its addptr chain that no
    later op reaches."""
    held = ctx.ext.held_offsets
    stack, me = [ptr], op.operation
    while stack:
        v = stack.pop()
        owner = v.owner
        if isinstance(owner, ir.Block):
            continue
        src = owner.operation if hasattr(owner, "operation") else owner
        if v in held:
            if block_of(src) != me.block:
                raise ctx.error("this access's pointer block adds offsets that depend on data, and was made "
                                "outside the loop or `if` around the access: make it inside (next to the access)")
            if not _live_after(me, v):
                ctx.release(held.pop(v))
        stack.extend(o for o in src.operands if "xb.ptr" in str(o.type))


def release_carried(ctx, loop, start: ir.Value) -> None:
    """After `loop`, which carried a pointer block from `start` (offsets that depend on data): free the
    offset tiles of start's addptr chain, held through the loop, that nothing after the loop reaches."""
    held, stack = ctx.ext.held_offsets, [start]
    while stack:
        v = stack.pop()
        owner = v.owner
        if isinstance(owner, ir.Block):
            continue
        src = owner.operation if hasattr(owner, "operation") else owner
        if v in held and block_of(src) == loop.block and not _live_after(loop, v):
            ctx.release(held.pop(v))
        stack.extend(o for o in src.operands if "xb.ptr" in str(o.type))


def _live_after(me, v: ir.Value) -> bool:
    """Whether an op after `me` (in its block) uses `v`, or a pointer made from it."""
    for use in v.uses:
        user = use.owner
        user = getattr(user, "operation", user)
        if user == me:
            continue
        if user.name in _POINTER_OPS and len(user.results) and "xb.ptr" in str(user.results[0].type):
            if _live_after(me, user.results[0]):
                return True
            continue
        user = ancestor_in(me.block, user)
        if user is None or user == me or me.is_before_in_block(user):
            return True
    return False
