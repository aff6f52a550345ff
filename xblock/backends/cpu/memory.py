"""Rules for global memory: xb.load, xb.store (contiguous vector access or gather/scatter), atomics.

A pointer block whose axis info shows runs of at least one chunk of contiguous addresses along
its last dimension is read with one (masked) vector load per chunk, from the chunk's first
pointer; any other pattern is a masked gather or scatter. Masked-off lanes touch no memory.
"""

from __future__ import annotations

import math

from mlir import ir

from ...passes.axis_info import mask_bounds
from .bounds import Check, checks_on, lane_addresses
from .emit import V, vec
from .irtypes import scalar_type, tensor_parts
from .rules import rule
from .values import VW, Buffer, TVal, storage, store_chunk

_ORDER = {"relaxed": "monotonic", "acquire": "acquire", "release": "release", "acq_rel": "acq_rel"}


def mem_type(ety: str) -> str:
    return "i8" if ety == "i1" else ety


def _size(ety: str) -> int:
    """Bytes of one element in memory (a bool is one byte)."""
    return {"i1": 1, "i8": 1, "i16": 2, "f16": 2, "bf16": 2, "i32": 4, "f32": 4}.get(ety, 8)


def _check(ctx, op, what: str):
    return Check(ctx, op, what, op.operands[0]) if checks_on(ctx) else None


def _align(ety: str) -> int:
    return max(1, {"i1": 8, "i8": 8, "i16": 16, "f16": 16, "bf16": 16, "i32": 32, "f32": 32}.get(ety, 64) // 8)


def contiguous(ctx, value, shape, w: int) -> bool:
    """Whether every chunk of `w` lanes of the pointer block `value` is `w` consecutive elements."""
    info = ctx.info.get(value)
    if info is None or not shape or shape[-1] % w:
        return False
    return info.contiguity[-1] % w == 0


def _segments(op):
    seg = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    ops = list(op.operands)
    out, k = [], 0
    for n in seg:
        out.append(ops[k] if n else None)
        k += n
    return out


def _to_ptr(e, addr: V) -> V:
    if addr.type.startswith("vector<"):
        w = addr.type[len("vector<") : addr.type.index("x")]
        return e.op(f"llvm.inttoptr {addr} : {addr.type} to vector<{w}x!llvm.ptr>", f"vector<{w}x!llvm.ptr>")
    return e.op(f"llvm.inttoptr {addr} : i64 to !llvm.ptr", "!llvm.ptr")


def _as_mem(e, v: V, ety: str) -> V:
    """A value in its memory type (i1 is stored as one byte)."""
    if ety != "i1":
        return v
    t = v.type.replace("i1", "i8")
    return e.op(f"arith.extui {v} : {v.type} to {t}", t)


def _from_mem(e, v: V, ety: str) -> V:
    if ety != "i1":
        return v
    t = v.type.replace("i8", "i1")
    zero = e.const(0, v.type)
    return e.op(f"arith.cmpi ne, {v}, {zero} : {v.type}", t)


@rule("xb.load")
def _lower_load(ctx, op):
    ptr_v, mask_v, other_v = _segments(op)
    res = op.results[0]
    e = ctx.e
    parts = tensor_parts(res.type)
    check = _check(ctx, op, "load")
    if parts is None:
        ety = scalar_type(res.type)
        raw = ctx.get(ptr_v)
        addr = _to_ptr(e, raw)

        def load():
            v = e.op(f"llvm.load {addr} {{alignment = {_align(ety)} : i64}} : !llvm.ptr -> {mem_type(ety)}",
                     mem_type(ety))
            return [_from_mem(e, v, ety)]

        active = ctx.get(mask_v) if mask_v is not None else None
        if check is not None:
            active = check.scalar(raw, _size(ety), active)
        if active is None:
            ctx.define(res, load()[0])
        else:
            alt = ctx.get(other_v) if other_v is not None else e.const(0, ety)
            ctx.define(res, e.if_(active, load, lambda: [alt], [ety])[0])
        return
    shape, ety, _ = parts
    mask = ctx.get(mask_v) if mask_v is not None else None
    other = ctx.get(other_v) if other_v is not None else None
    lv = LoadVal(ctx.get(ptr_v), mask, other, shape, ety, contiguous(ctx, ptr_v, shape, math.gcd(math.prod(shape), VW)))
    lv.full = full_check(ctx, mask_v)
    lv.check = check
    ctx.pending.append(lv)
    ctx.define(res, lv)


class LoadVal(TVal):
    """A block load evaluated in its consumer's chunk loop (fused), or stored once if it must be.

    The driver stores ("flushes") every pending load before an op that writes memory or holds
    regions, so a fused load never reads memory later than the program order allows.
    """

    cost = 5

    def __init__(self, ptr, mask, other, shape, ety, dense: bool):
        super().__init__(shape, ety)
        self.ptr, self.mask, self.other, self.dense = ptr, mask, other, dense
        self.buf = None
        self.consumed = False  # evaluated in a consumer's loop: nothing left to flush
        self.full = None  # emits "every lane of the mask is on" from scalars (full_check)
        self.check = None  # the access's bounds check (bounds.Check), if checks are on

    def flush(self, e) -> None:
        if self.buf is None and not self.consumed:
            mem = e.alloca(self.n, storage(self.ety))
            w = self.w

            def body(i, _):
                store_chunk(e, mem, i, self.chunk(e, i, w), self.ety)

            masked_loop(e, self.n, w, self.mask if self.dense else None, body, self.full)
            self.buf = Buffer(mem, self.shape, self.ety)
            self.consumed = False

    def buffer(self, e):
        self.flush(e)
        return self.buf

    def chunk(self, e, i, w):
        if self.buf is not None:
            return self.buf.chunk(e, i, w)
        self.consumed = True
        ety, mty = self.ety, mem_type(self.ety)
        vt, al = vec(w, mty), _align(ety)
        m = self.mask.chunk(e, i, w) if self.mask is not None and id(self.mask) not in e.full_masks else None
        pas = _as_mem(e, self.other.chunk(e, i, w), ety) if self.other is not None else e.const(0, vt)
        if self.dense:
            first = self.ptr.elem(e, i)
            addr = _to_ptr(e, first)

            def dense(m):
                if m is None:
                    return [e.op(f"llvm.load {addr} {{alignment = {al} : i64}} : !llvm.ptr -> {vt}", vt)]
                return [e.op(f"llvm.intr.masked.load {addr}, {m}, {pas} {{alignment = {al} : i32}} : "
                             f"(!llvm.ptr, {m.type}, {vt}) -> {vt}", vt)]

            if self.check is None:
                v = dense(m)[0]
            else:  # the whole chunk inside one argument: as unchecked; else lane by lane
                size = _size(ety)
                v = e.if_(self.check.ok(first, w * size), lambda: dense(m),
                          lambda: dense(self.check.lanes(lane_addresses(e, first, w, size), m, size, w)), [vt])[0]
        else:
            raw = self.ptr.chunk(e, i, w)
            ptrs = _to_ptr(e, raw)
            if self.check is not None:
                m = self.check.lanes(raw, m, _size(ety), w)
            m = m if m is not None else e.const(1, vec(w, "i1"))
            v = e.op(f"llvm.intr.masked.gather {ptrs}, {m}, {pas} {{alignment = {al} : i32}} : "
                     f"({ptrs.type}, {m.type}, {vt}) -> {vt}", vt)
        return _from_mem(e, v, ety)

    def elem(self, e, i):
        if self.buf is not None:
            return self.buf.elem(e, i)
        self.consumed = True
        ety, mty = self.ety, mem_type(self.ety)
        raw = self.ptr.elem(e, i)
        addr = _to_ptr(e, raw)

        def load():
            v = e.op(f"llvm.load {addr} {{alignment = {_align(ety)} : i64}} : !llvm.ptr -> {mty}", mty)
            return [_from_mem(e, v, ety)]

        active = self.mask.elem(e, i) if self.mask is not None else None
        if self.check is not None:
            active = self.check.scalar(raw, _size(ety), active)
        if active is None:
            return load()[0]
        alt = self.other.elem(e, i) if self.other is not None else e.const(0, ety)
        return e.if_(active, load, lambda: [alt], [ety])[0]

    def fused_loads(self) -> set:
        return {id(self)} if self.buf is None else set()


@rule("xb.store")
def _lower_store(ctx, op):
    ptr_v, val_v, mask_v = _segments(op)
    e = ctx.e
    parts = tensor_parts(val_v.type)
    check = _check(ctx, op, "store")
    if parts is None:
        ety = scalar_type(val_v.type)
        raw = ctx.get(ptr_v)
        addr = _to_ptr(e, raw)
        val = _as_mem(e, ctx.get(val_v), ety)

        def store():
            e.line(f"llvm.store {val}, {addr} {{alignment = {_align(ety)} : i64}} : {val.type}, !llvm.ptr")

        active = ctx.get(mask_v) if mask_v is not None else None
        if check is not None:
            active = check.scalar(raw, _size(ety), active)
        if active is None:
            store()
        else:
            e.if_(active, store)
        return
    shape, ety, _ = parts
    ptr, val = ctx.get(ptr_v), ctx.get(val_v)
    mask = ctx.get(mask_v) if mask_v is not None else None
    n = math.prod(shape)
    w = math.gcd(n, VW)
    dense = contiguous(ctx, ptr_v, shape, w)
    al = _align(ety)

    def body(i, _):
        v = _as_mem(e, val.chunk(e, i, w), ety)
        m = mask.chunk(e, i, w) if mask is not None and id(mask) not in e.full_masks else None
        if dense:
            first = ptr.elem(e, i)
            addr = _to_ptr(e, first)
            plain = f"llvm.store {v}, {addr} {{alignment = {al} : i64}} : {v.type}, !llvm.ptr"

            def plain_or_masked(m):
                if m is None:
                    e.line(plain)
                else:  # full-chunk fast path: masked stores are slow on some x86 cores (AMD)
                    full = e.op(f"vector.reduction <and>, {m} : {m.type} into i1", "i1")
                    e.if_(full, lambda: e.line(plain), lambda: e.line(
                        f"llvm.intr.masked.store {v}, {addr}, {m} {{alignment = {al} : i32}} : "
                        f"{v.type}, {m.type} into !llvm.ptr"))

            if check is None:
                plain_or_masked(m)
            else:  # the whole chunk inside one argument: as unchecked; else lane by lane
                size = _size(ety)
                e.if_(check.ok(first, w * size), lambda: plain_or_masked(m),
                      lambda: plain_or_masked(check.lanes(lane_addresses(e, first, w, size), m, size, w)))
        else:
            raw = ptr.chunk(e, i, w)
            ptrs = _to_ptr(e, raw)
            if check is not None:
                m = check.lanes(raw, m, _size(ety), w)
            m = m if m is not None else e.const(1, vec(w, "i1"))
            e.line(f"llvm.intr.masked.scatter {v}, {ptrs}, {m} {{alignment = {al} : i32}} : "
                   f"{v.type}, {m.type} into {ptrs.type}")

    masked_loop(e, n, w, mask if dense else None, body, full_check(ctx, mask_v))


def masked_loop(e, n: int, w: int, mask, body, full_fn=None) -> None:
    """The chunk loop of a masked dense access, with a fast path for a block whose mask is all true.

    Whether every lane is on comes from scalar bounds (`full_fn`, see `full_check`) or, for another
    cheap mask, from one pass over it. Then the loop runs with the mask known true
    (`e.full_masks`), so its loads and stores are plain vector accesses.
    """
    if mask is None or n <= w or (full_fn is None and mask.cost > 6):
        e.range_(n, w, body)
        return
    if full_fn is not None:
        full = full_fn(e)
    else:
        ones = e.const(1, vec(w, "i1"))
        acc = e.range_(n, w, lambda i, it: [e.op(f"arith.andi {it[0]}, {mask.chunk(e, i, w)} : {ones.type}",
                                                 ones.type)], [ones])[0]
        full = e.op(f"vector.reduction <and>, {acc} : {ones.type} into i1", "i1")

    def fast():
        e.full_masks.add(id(mask))
        e.range_(n, w, body)
        e.full_masks.discard(id(mask))

    e.if_(full, fast, lambda: e.range_(n, w, body))


_I32_MIN, _I32_MAX = -(1 << 31), (1 << 31) - 1
_HOLDS = {"slt": ("hi", "slt"), "sle": ("hi", "sle"), "sgt": ("lo", "sgt"), "sge": ("lo", "sge")}


def full_check(ctx, mask_v):
    """A function emitting an i1 scalar, true iff every lane of the block mask `mask_v` is on.

    It reads only scalars: the bounds the mask's structure shows (axis_info.mask_bounds), checked
    at the first and last lane in i64 (with the lanes' i32 range, so no lane wrapped). None where
    the structure shows no bounds.
    """
    bounds = mask_bounds(mask_v) if mask_v is not None else None
    if not bounds:
        return None

    def emit(e) -> V:
        ok = None
        for b in bounds:
            lo = _sum64(ctx, e, b.lanes.terms, b.lanes.start)
            hi = e.op(f"arith.addi {lo}, {e.const(b.lanes.count - 1, 'i64')} : i64", "i64")
            lim = _sum64(ctx, e, *b.limit)
            lim = e.op(f"arith.extsi {e.op(f'arith.trunci {lim} : i64 to i32', 'i32')} : i32 to i64", "i64")
            side, pred = _HOLDS[b.pred]
            for c in (f"arith.cmpi sge, {lo}, {e.const(_I32_MIN, 'i64')} : i64",
                      f"arith.cmpi sle, {hi}, {e.const(_I32_MAX, 'i64')} : i64",
                      f"arith.cmpi {pred}, {hi if side == 'hi' else lo}, {lim} : i64"):
                v = e.op(c, "i1")
                ok = v if ok is None else e.op(f"arith.andi {ok}, {v} : i1", "i1")
        return ok

    return emit


def _sum64(ctx, e, terms, const: int) -> V:
    total = e.const(const, "i64")
    for t, sign in terms:
        v = e.op(f"arith.extsi {ctx.get(t)} : i32 to i64", "i64")
        total = e.op(f"arith.{'addi' if sign > 0 else 'subi'} {total}, {v} : i64", "i64")
    return total


# ------------------------------------------------------------------------------------ atomics
_RMW = {"add": "add", "fadd": "fadd", "max": "max", "min": "min", "umax": "umax", "umin": "umin",
        "xchg": "xchg", "and": "_and", "or": "_or", "xor": "_xor"}


def _rmw_kind(ctx, kind: str, ety: str) -> str:
    if ety in ("f16", "f32", "f64"):
        fkind = {"add": "fadd", "max": "fmax", "min": "fmin", "fadd": "fadd", "xchg": "xchg"}.get(kind)
        if fkind is None:
            raise ctx.error(f"no floating-point atomic {kind}")
        return fkind
    if ety == "bf16":
        raise ctx.error("atomics on bfloat16 are not supported")
    return _RMW[kind]


def _atomic_elems(ctx, op, ptr, n, mask, emit_one):
    """Run `emit_one(addr, i)` lane by lane (program order), under the lane's mask."""
    e = ctx.e
    res = op.results[0]
    parts = tensor_parts(res.type)
    ety = scalar_type(res.type) if parts is None else parts[1]

    check = _check(ctx, op, "atomic")

    def one(i):
        raw = ptr.elem(e, i) if parts is not None else ptr
        addr = _to_ptr(e, raw)
        m = (mask.elem(e, i) if parts is not None else mask) if mask is not None else None
        if check is not None:
            m = check.scalar(raw, _size(ety), m)
        if m is None:
            return emit_one(addr, i)
        return e.if_(m, lambda: [emit_one(addr, i)], lambda: [e.const(0, ety)], [ety])[0]

    if parts is None:
        ctx.define(res, one(None))
        return
    out = e.alloca(n, storage(ety))

    def body(i, _):
        e.line(f"memref.store {one(i)}, {out}[{i}] : {out.type}")

    e.range_(n, 1, body)
    ctx.define(res, Buffer(out, parts[0], ety))


def _str(op, name) -> str:
    return ir.StringAttr(op.attributes[name]).value


@rule("xb.atomic_rmw")
def _lower_atomic_rmw(ctx, op):
    ptr_v, val_v, mask_v = _segments(op)
    parts = tensor_parts(val_v.type)
    ety = scalar_type(val_v.type) if parts is None else parts[1]
    kind = _rmw_kind(ctx, _str(op, "kind"), ety)
    order = _ORDER.get(_str(op, "sem"), "acq_rel")
    val = ctx.get(val_v)
    mask = ctx.get(mask_v) if mask_v is not None else None
    e = ctx.e

    def one(addr, i):
        v = val.elem(e, i) if parts is not None else val
        return e.op(f"llvm.atomicrmw {kind} {addr}, {v} {order} : !llvm.ptr, {ety}", ety)

    _atomic_elems(ctx, op, ctx.get(ptr_v), math.prod(parts[0]) if parts else 1, mask, one)


@rule("xb.atomic_cas")
def _lower_atomic_cas(ctx, op):
    ptr_v, cmp_v, val_v = list(op.operands)
    parts = tensor_parts(val_v.type)
    ety = scalar_type(val_v.type) if parts is None else parts[1]
    order = _ORDER.get(_str(op, "sem"), "acq_rel")
    fail = {"acq_rel": "acquire", "release": "monotonic"}.get(order, order)
    cmp, val = ctx.get(cmp_v), ctx.get(val_v)
    ity = {"f16": "i16", "f32": "i32", "f64": "i64"}.get(ety, ety)
    e = ctx.e

    def one(addr, i):
        c = cmp.elem(e, i) if parts is not None else cmp
        v = val.elem(e, i) if parts is not None else val
        if ity != ety:
            c = e.op(f"arith.bitcast {c} : {ety} to {ity}", ity)
            v = e.op(f"arith.bitcast {v} : {ety} to {ity}", ity)
        st = f"!llvm.struct<({ity}, i1)>"
        r = e.op(f"llvm.cmpxchg {addr}, {c}, {v} {order} {fail} : !llvm.ptr, {ity}", st)
        old = e.op(f"llvm.extractvalue {r}[0] : {st}", ity)
        return e.op(f"arith.bitcast {old} : {ity} to {ety}", ety) if ity != ety else old

    _atomic_elems(ctx, op, ctx.get(ptr_v), math.prod(parts[0]) if parts else 1, None, one)
