"""Block values of the cpu lowering: lazily evaluated, read in native-width chunks.

A block (`tensor<...>`) is never a whole vector. Each lowered block knows how to produce the
chunk of `w` lanes starting at a flat (row-major) index, and one element. Splats, aranges,
shape views and single-use elementwise chains stay lazy, so their consumer's chunk loop fuses
them; everything else lives in a stack buffer (`memref<N x T>`, i1 stored as i8).
"""

from __future__ import annotations

import math

from .emit import V, vec

VW = 16  # lanes of one chunk: 512-bit vectors of fp32


def storage(ety: str) -> str:
    return "i8" if ety == "i1" else ety


class TVal:
    """A lowered block: shape, element type (pointers are i64 with `pointee`), chunk and elem."""

    cost = 1

    def __init__(self, shape, ety: str, pointee: str | None = None):
        self.shape = tuple(shape)
        self.ety = ety
        self.pointee = pointee

    @property
    def n(self) -> int:
        return math.prod(self.shape)

    @property
    def w(self) -> int:
        return math.gcd(self.n, VW)

    def chunk(self, e, idx: V, w: int) -> V:
        raise NotImplementedError

    def elem(self, e, idx: V) -> V:
        raise NotImplementedError

    def buffer(self, e) -> "Buffer":
        return materialize(e, self)

    def fused_loads(self) -> set:
        """Ids of the pending loads an elementwise consumer of this block reads lane for lane."""
        return set()


class Buffer(TVal):
    cost = 1

    def __init__(self, mem: V, shape, ety, pointee=None):
        super().__init__(shape, ety, pointee)
        self.mem = mem

    def chunk(self, e, idx, w):
        v = e.op(f"vector.load {self.mem}[{idx}] : {self.mem.type}, {vec(w, storage(self.ety))}",
                 vec(w, storage(self.ety)))
        if self.ety == "i1":
            v = e.op(f"arith.trunci {v} : {v.type} to {vec(w, 'i1')}", vec(w, "i1"))
        return v

    def elem(self, e, idx):
        v = e.op(f"memref.load {self.mem}[{idx}] : {self.mem.type}", storage(self.ety))
        if self.ety == "i1":
            v = e.op(f"arith.trunci {v} : i8 to i1", "i1")
        return v

    def buffer(self, e):
        return self


class Splat(TVal):
    cost = 0

    def __init__(self, scalar: V, shape, ety, pointee=None):
        super().__init__(shape, ety, pointee)
        self.scalar = scalar

    def chunk(self, e, idx, w):
        return e.op(f"vector.broadcast {self.scalar} : {self.ety} to {vec(w, self.ety)}", vec(w, self.ety))

    def elem(self, e, idx):
        return self.scalar


class Arange(TVal):
    cost = 1

    def __init__(self, start: int, n: int):
        super().__init__((n,), "i32")
        self.start = start

    def _base(self, e, idx):
        i = e.op(f"arith.index_cast {idx} : index to i32", "i32")
        if self.start:
            i = e.op(f"arith.addi {i}, {e.const(self.start, 'i32')} : i32", "i32")
        return i

    def chunk(self, e, idx, w):
        b = e.op(f"vector.broadcast {self._base(e, idx)} : i32 to {vec(w, 'i32')}", vec(w, "i32"))
        return e.op(f"arith.addi {b}, {e.iota(w)} : {vec(w, 'i32')}", vec(w, "i32"))

    def elem(self, e, idx):
        return self._base(e, idx)


class View(TVal):
    """The same row-major elements under another shape (expand_dims, reshape, ptr_cast)."""

    def __init__(self, src: TVal, shape, ety=None, pointee=None):
        super().__init__(shape, ety or src.ety, pointee if pointee is not None else src.pointee)
        self.src = src
        self.cost = src.cost

    def chunk(self, e, idx, w):
        return self.src.chunk(e, idx, w)

    def elem(self, e, idx):
        return self.src.elem(e, idx)

    def fused_loads(self) -> set:
        return self.src.fused_loads()


class Lazy(TVal):
    """An elementwise op evaluated in its consumer's loop: `fn(e, operand_values) -> V`."""

    def __init__(self, fn, operands, shape, ety, pointee=None, weight=1):
        super().__init__(shape, ety, pointee)
        self.fn = fn
        self.operands = operands
        self.cost = weight + sum(o.cost for o in operands)

    def chunk(self, e, idx, w):
        return self.fn(e, [o.chunk(e, idx, w) for o in self.operands], vec(w, self.ety))

    def elem(self, e, idx):
        return self.fn(e, [o.elem(e, idx) for o in self.operands], self.ety)

    def fused_loads(self) -> set:
        return set().union(*(o.fused_loads() for o in self.operands)) if self.operands else set()


class Mapped(TVal):
    """Broadcast, transpose or split: result element j reads source element
    offset + sum_i coord_i(j) * coef[i]."""

    def __init__(self, src: TVal, shape, coefs, offset: int = 0):
        super().__init__(shape, src.ety, src.pointee)
        self.src = src
        self.coefs = list(coefs)
        self.offset = offset
        self.strides = [math.prod(self.shape[i + 1 :]) for i in range(len(self.shape))]
        self.cost = src.cost + 2

    def _map(self, e, flat: V, ty: str) -> V:
        total = None
        for dim, stride, coef in zip(self.shape, self.strides, self.coefs):
            if coef == 0 or dim == 1:
                continue
            c = flat
            if stride != 1:
                c = e.op(f"arith.divui {c}, {e.const(stride, ty)} : {ty}", ty)
            if stride * dim < self.n:
                c = e.op(f"arith.remui {c}, {e.const(dim, ty)} : {ty}", ty)
            if coef != 1:
                c = e.op(f"arith.muli {c}, {e.const(coef, ty)} : {ty}", ty)
            total = c if total is None else e.op(f"arith.addi {total}, {c} : {ty}", ty)
        if total is None:
            return e.const(self.offset, ty)
        return e.op(f"arith.addi {total}, {e.const(self.offset, ty)} : {ty}", ty) if self.offset else total

    def chunk(self, e, idx, w):
        last = self.shape[-1] if self.shape else 1
        if last % w == 0 and self.coefs[-1] == 1:
            return self.src.chunk(e, self._map(e, idx, "index"), w)
        if last % w == 0 and self.coefs[-1] == 0:
            s = self.src.elem(e, self._map(e, idx, "index"))
            return e.op(f"vector.broadcast {s} : {self.ety} to {vec(w, self.ety)}", vec(w, self.ety))
        buf = self.src.buffer(e)
        vt = vec(w, "i32")
        base = e.op(f"arith.index_cast {idx} : index to i32", "i32")
        lanes = e.op(f"arith.addi {e.op(f'vector.broadcast {base} : i32 to {vt}', vt)}, {e.iota(w)} : {vt}", vt)
        return gather_lanes(e, buf, self._map(e, lanes, vt), w)

    def elem(self, e, idx):
        return self.src.elem(e, self._map(e, idx, "index"))


def gather_lanes(e, buf: Buffer, at: V, w: int) -> V:
    """A chunk of `w` lanes read from `buf` at the flat offsets `at` (a vector of i32 or index)."""
    st = vec(w, storage(buf.ety))
    v = e.op(f"vector.gather {buf.mem}[{e.idx(0)}] [{at}], {e.const(1, vec(w, 'i1'))}, "
             f"{e.const(0, st)} : {buf.mem.type}, {at.type}, {vec(w, 'i1')}, {st} into {st}", st)
    if buf.ety == "i1":
        v = e.op(f"arith.trunci {v} : {st} to {vec(w, 'i1')}", vec(w, "i1"))
    return v


def mapped(e, src: TVal, shape, coefs, offset: int = 0) -> Mapped:
    """A `Mapped` view whose source is stored first when chunks would gather from it: a lazy source
    is then evaluated once, here, rather than once per chunk inside the consumer's loop."""
    m = Mapped(src, shape, coefs, offset)
    last = m.shape[-1] if m.shape else 1
    if not (last % m.w == 0 and m.coefs and m.coefs[-1] in (0, 1)) and not isinstance(src, Buffer):
        m.src = src.buffer(e)
    return m


def broadcast_coefs(src_shape, shape):
    strides = [math.prod(src_shape[i + 1 :]) for i in range(len(src_shape))]
    return [s if d == r else 0 for s, d, r in zip(strides, src_shape, shape)]


def trans_coefs(src_shape, order):
    strides = [math.prod(src_shape[i + 1 :]) for i in range(len(src_shape))]
    return [strides[o] for o in order]


def store_chunk(e, mem: V, idx: V, v: V, ety: str) -> None:
    if ety == "i1":
        v = e.op(f"arith.extui {v} : {v.type} to {v.type.replace('i1>', 'i8>')}", v.type.replace("i1>", "i8>"))
    e.line(f"vector.store {v}, {mem}[{idx}] : {mem.type}, {v.type}")


def store_into(e, tv: TVal, mem: V) -> None:
    """Write every element of `tv` into the buffer `mem`, chunk by chunk."""
    w = tv.w

    def body(i, _):
        store_chunk(e, mem, i, tv.chunk(e, i, w), tv.ety)

    e.range_(tv.n, w, body)


def materialize(e, tv: TVal) -> Buffer:
    mem = e.alloca(tv.n, storage(tv.ety))
    store_into(e, tv, mem)
    return Buffer(mem, tv.shape, tv.ety, tv.pointee)
