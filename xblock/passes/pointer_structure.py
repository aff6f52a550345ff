"""xb-analyze-pointer-structure: blocks of pointers as base + scalar offset + per-dimension strides.

An integer block is *affine* when every element is `base + sum_d stride_d * i_d`, with `i_d` the
element's index along dimension d and `base`, `stride_d` polynomials in scalar SSA values (`Lin`).
A pointer block is a root pointer plus an affine offset (in elements). A mask is *bounded* when it
is a conjunction of `i_d < limit` per dimension (and of uniform conditions `0 < limit`). What does
not fit is None: the backend then treats the access as a gather. The analysis is read-only and
memoized per value; backends ask for what they need (`affine`, `pointer`, `mask`, `tile_access`).

Wrapped offsets (`(pid * BLOCK + arange(0, BLOCK)) % M`, Triton's way to avoid load masks) are
affine only on the lanes where the remainder is the dividend (`x < M`, for `x > -M`): a structure
with `exact` bounds. Only callers that ask (`wrapped=True`) see such structures, with the exact
lanes as limits (`TileAccess.assumed`); they must show that the other lanes do not matter.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

NAME = "xb-analyze-pointer-structure"


class Lin:
    """A polynomial with integer coefficients in scalar SSA values: {monomial: coeff}."""

    __slots__ = ("terms",)

    def __init__(self, terms=None):
        self.terms = {m: c for m, c in (terms or {}).items() if c != 0}

    @staticmethod
    def const(c: int) -> Lin:
        return Lin({(): int(c)})

    @staticmethod
    def var(key: int) -> Lin:
        return Lin({(key,): 1})

    def __add__(self, o: Lin) -> Lin:
        t = dict(self.terms)
        for m, c in o.terms.items():
            t[m] = t.get(m, 0) + c
        return Lin(t)

    def __neg__(self) -> Lin:
        return Lin({m: -c for m, c in self.terms.items()})

    def __sub__(self, o: Lin) -> Lin:
        return self + (-o)

    def __mul__(self, o: Lin) -> Lin:
        t: dict = {}
        for m1, c1 in self.terms.items():
            for m2, c2 in o.terms.items():
                m = tuple(sorted(m1 + m2))
                t[m] = t.get(m, 0) + c1 * c2
        return Lin(t)

    def is_zero(self) -> bool:
        return not self.terms

    def as_const(self) -> int | None:
        if not self.terms:
            return 0
        if list(self.terms) == [()]:
            return self.terms[()]
        return None

    def __eq__(self, o) -> bool:
        return isinstance(o, Lin) and self.terms == o.terms

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.terms.items())))

    def __repr__(self) -> str:
        return " + ".join(f"{c}*{'*'.join(f'v{k}' for k in m) or '1'}" for m, c in self.terms.items()) or "0"


ZERO = Lin()


@dataclass(frozen=True)
class Bounds:
    """Lane i is on iff i[d] < limit for every (d, limit) in dims, and 0 < limit for each uniform."""

    shape: tuple
    dims: tuple  # ((d, Lin), ...)
    uniform: tuple = ()  # (Lin, ...)

    def __and__(self, o: Bounds | None) -> Bounds:
        return self if o is None else Bounds(self.shape, self.dims + o.dims, self.uniform + o.uniform)


def _both(a: Bounds | None, b: Bounds | None) -> Bounds | None:
    return b if a is None else a & b


@dataclass(frozen=True)
class Affine:
    """Element i of the block is base + sum_d strides[d] * i[d]."""

    shape: tuple
    base: Lin
    strides: tuple
    exact: Bounds | None = None  # the lanes where the value is this affine form (None: all of them)

    def uniform(self) -> bool:
        return all(s.is_zero() for s in self.strides)


@dataclass(frozen=True)
class Pointer:
    """A root pointer (a kernel argument or an opaque scalar pointer) plus an affine offset."""

    root: ir.Value
    elem: str
    offset: Affine


@dataclass(frozen=True)
class TileAccess:
    """A load/store of `rows` x `cols` elements: row r starts at base + r * row_stride, unit stride in a row."""

    root: ir.Value
    elem: str
    base: Lin
    rows: int
    cols: int
    row_stride: Lin
    row_limits: tuple
    col_limits: tuple
    uniform: tuple
    assumed: Bounds | None = None  # wrapped offsets: only these lanes are fetched (tile_access(wrapped=True))


def _shape(t: ir.Type) -> tuple:
    return tuple(ir.RankedTensorType(t).shape) if str(t).startswith("tensor<") else ()


def _elem(t: ir.Type) -> str:
    s = str(ir.RankedTensorType(t).element_type) if str(t).startswith("tensor<") else str(t)
    return s[len("!xb.ptr<"):-1] if s.startswith("!xb.ptr<") else s


def _splat_int(op) -> int | None:
    """The value of an integer or bool splat `arith.constant`, else None."""
    if op.name != "arith.constant":
        return None
    a = op.attributes["value"]
    if isinstance(a, ir.IntegerAttr):
        return int(a.value)
    if isinstance(a, ir.DenseIntElementsAttr) and a.is_splat:
        return int(ir.IntegerAttr(a.get_splat_value()).value)
    return None


class PointerStructure:
    """Memoized structure of the integer, pointer and mask values of one kernel."""

    def __init__(self):
        self._keys: dict = {}
        self.values: list = []  # key -> scalar ir.Value
        self._memo: dict = {}

    # ----- scalars -------------------------------------------------------------------------
    def key(self, v: ir.Value) -> int:
        if v not in self._keys:
            self._keys[v] = len(self.values)
            self.values.append(v)
        return self._keys[v]

    def scalar(self, v: ir.Value) -> Lin:
        """A scalar integer as a polynomial in opaque scalar values."""
        owner = v.owner
        if isinstance(owner, ir.Block):
            return Lin.var(self.key(v))
        op = owner.operation if hasattr(owner, "operation") else owner
        c = _splat_int(op)
        if c is not None:
            return Lin.const(c)
        n = op.name
        if n in ("arith.addi", "arith.subi", "arith.muli"):
            a, b = self.scalar(op.operands[0]), self.scalar(op.operands[1])
            return a + b if n == "arith.addi" else (a - b if n == "arith.subi" else a * b)
        if n in ("arith.extsi", "arith.index_cast"):
            return self.scalar(op.operands[0])
        return Lin.var(self.key(v))

    # ----- blocks --------------------------------------------------------------------------
    def _cached(self, kind, v, fn):
        k = (kind, v)
        if k not in self._memo:
            self._memo[k] = None  # cycles (loop-carried values) resolve to "not structured"
            self._memo[k] = fn(v)
        return self._memo[k]

    def affine(self, v: ir.Value, wrapped: bool = False) -> Affine | None:
        """The affine form of an integer block (or scalar, with shape ()), or None.

        With `wrapped`, also a form that holds on some lanes only (see `Affine.exact`).
        """
        a = self._cached("aff", v, self._affine)
        return a if wrapped or a is None or a.exact is None else None

    def _affine(self, v):
        shape = _shape(v.type)
        if not shape:
            return Affine((), self.scalar(v), ())
        owner = v.owner
        if isinstance(owner, ir.Block):
            return None
        op = owner.operation if hasattr(owner, "operation") else owner
        n = op.name
        c = _splat_int(op)
        if c is not None:
            return Affine(shape, Lin.const(c), (ZERO,) * len(shape))
        if n == "xb.arange":
            start = int(ir.IntegerAttr(op.attributes["start"]).value)
            return Affine(shape, Lin.const(start), (Lin.const(1),))
        if n == "xb.splat":
            return Affine(shape, self.scalar(op.operands[0]), (ZERO,) * len(shape))
        if n in ("arith.addi", "arith.subi", "arith.muli"):
            a, b = self.affine(op.operands[0], True), self.affine(op.operands[1], True)
            if a is None or b is None:
                return None
            exact = _both(a.exact, b.exact)
            if n == "arith.addi":
                return Affine(shape, a.base + b.base, tuple(x + y for x, y in zip(a.strides, b.strides)), exact)
            if n == "arith.subi":
                return Affine(shape, a.base - b.base, tuple(x - y for x, y in zip(a.strides, b.strides)), exact)
            if b.uniform():
                a, b = b, a
            if not a.uniform():
                return None
            return Affine(shape, a.base * b.base, tuple(a.base * s for s in b.strides), exact)
        if n in ("arith.extsi", "arith.trunci", "arith.index_cast"):
            return self.affine(op.operands[0], True)
        if n == "arith.remsi":
            return self._wrapped(op, shape)
        return self._reshaped(op, shape, lambda x: self.affine(x, True), lambda a, strides, exact: Affine(
            shape, a.base, strides, exact))

    def _wrapped(self, op, shape):
        """`x % m` with x affine along one dimension (unit stride) and m uniform: x on the lanes x < m."""
        x, m = self.affine(op.operands[0]), self.affine(op.operands[1])
        if x is None or m is None or not m.uniform():
            return None
        varying = [d for d, s in enumerate(x.strides) if not s.is_zero()]
        if len(varying) != 1 or x.strides[varying[0]].as_const() != 1:
            return None
        return Affine(shape, x.base, x.strides, Bounds(shape, ((varying[0], m.base - x.base),)))

    def _reshaped(self, op, shape, get, make):
        """broadcast / expand_dims / trans / trivial reshape applied to a structured value."""
        n = op.name
        if n not in ("xb.broadcast", "xb.expand_dims", "xb.trans", "xb.reshape"):
            return None
        src = op.operands[0]
        s = get(src)
        if s is None:
            return None
        old = s.offset.strides if isinstance(s, Pointer) else getattr(s, "strides", None)
        src_shape = _shape(src.type)
        if isinstance(s, Bounds):
            return self._reshape_bounds(op, s, shape, src_shape)
        exact = s.offset.exact if isinstance(s, Pointer) else s.exact
        if exact is not None:
            exact = self._reshape_bounds(op, exact, shape, src_shape)
            if exact is None:
                return None
        if n == "xb.broadcast":
            strides = tuple(ZERO if src_shape[d] == 1 and shape[d] != 1 else old[d] for d in range(len(shape)))
        elif n == "xb.expand_dims":
            axis = int(ir.IntegerAttr(op.attributes["axis"]).value)
            strides = old[:axis] + (ZERO,) + old[axis:]
        elif n == "xb.trans":
            order = list(ir.DenseI32ArrayAttr(op.attributes["order"]))
            strides = tuple(old[o] for o in order)
        else:
            keep = [d for d in range(len(src_shape)) if src_shape[d] != 1]
            if [src_shape[d] for d in keep] != [x for x in shape if x != 1]:
                return None
            it = iter(keep)
            strides = tuple(ZERO if x == 1 else old[next(it)] for x in shape)
        if isinstance(s, Pointer):
            return Pointer(s.root, s.elem, Affine(shape, s.offset.base, strides, exact))
        return make(s, strides, exact)

    def _reshape_bounds(self, op, s: Bounds, shape, src_shape):
        n = op.name
        if n == "xb.broadcast":
            # a condition on a broadcast size-1 dimension holds for index 0 only: it is uniform
            spread = [d for d in range(len(shape)) if src_shape[d] == 1 and shape[d] != 1]
            return Bounds(shape, tuple((d, lim) for d, lim in s.dims if d not in spread),
                          s.uniform + tuple(lim for d, lim in s.dims if d in spread))
        if n == "xb.expand_dims":
            axis = int(ir.IntegerAttr(op.attributes["axis"]).value)
            return Bounds(shape, tuple((d + (d >= axis), lim) for d, lim in s.dims), s.uniform)
        if n == "xb.trans":
            order = list(ir.DenseI32ArrayAttr(op.attributes["order"]))
            return Bounds(shape, tuple((order.index(d), lim) for d, lim in s.dims), s.uniform)
        return None

    def pointer(self, v: ir.Value, wrapped: bool = False) -> Pointer | None:
        """The structure of a pointer (scalar or block), or None (`wrapped`: as for `affine`)."""
        p = self._cached("ptr", v, self._pointer)
        return p if wrapped or p is None or p.offset.exact is None else None

    def _pointer(self, v):
        shape = _shape(v.type)
        owner = v.owner
        if isinstance(owner, ir.Block):
            if shape:
                return None
            return Pointer(v, _elem(v.type), Affine((), ZERO, ()))
        op = owner.operation if hasattr(owner, "operation") else owner
        n = op.name
        if n == "xb.addptr":
            p, o = self.pointer(op.operands[0], True), self.affine(op.operands[1], True)
            if p is None or o is None:
                return None
            strides = tuple(a + b for a, b in zip(p.offset.strides, o.strides)) if shape else ()
            exact = _both(p.offset.exact, o.exact)
            return Pointer(p.root, p.elem, Affine(shape, p.offset.base + o.base, strides, exact))
        if n == "xb.splat":
            p = self.pointer(op.operands[0])
            return None if p is None else Pointer(p.root, p.elem, Affine(shape, p.offset.base, (ZERO,) * len(shape)))
        if not shape:
            return Pointer(v, _elem(v.type), Affine((), ZERO, ()))
        return self._reshaped(op, shape, lambda x: self.pointer(x, True), None)

    def assume_pointer(self, v: ir.Value, p: Pointer) -> None:
        """Record the structure of `v`, which the analysis cannot derive on its own (a loop-carried
        pointer block: its client knows `p_k = p_0 + k * step` from the loop)."""
        self._memo[("ptr", v)] = p

    def mask(self, v: ir.Value) -> Bounds | None:
        """The bounds of an i1 block, or None when it is data rather than structure."""
        return self._cached("mask", v, self._mask)

    def _mask(self, v):
        shape = _shape(v.type)
        owner = v.owner
        if isinstance(owner, ir.Block) or not shape:
            return None
        op = owner.operation if hasattr(owner, "operation") else owner
        n = op.name
        c = _splat_int(op)
        if c is not None:
            return Bounds(shape, ()) if c else Bounds(shape, (), (ZERO,))
        if n == "arith.andi":
            a, b = self.mask(op.operands[0]), self.mask(op.operands[1])
            if a is None or b is None:
                return None
            return Bounds(shape, a.dims + b.dims, a.uniform + b.uniform)
        if n == "arith.cmpi":
            return self._compare(op, shape)
        return self._reshaped(op, shape, self.mask, None)

    def _compare(self, op, shape):
        pred = int(ir.IntegerAttr(op.attributes["predicate"]).value)
        # arith.cmpi predicates: eq=0 ne=1 slt=2 sle=3 sgt=4 sge=5 ult=6 ule=7 ugt=8 uge=9
        a, b = self.affine(op.operands[0]), self.affine(op.operands[1])
        if a is None or b is None or pred not in (2, 3, 4, 6, 7, 8):
            return None
        if pred in (4, 8):  # a > b  <=>  b < a
            a, b, pred = b, a, 2
        if not b.uniform():
            return None
        limit = b.base - a.base + (Lin.const(1) if pred in (3, 7) else ZERO)
        varying = [d for d, s in enumerate(a.strides) if not s.is_zero()]
        if not varying:
            return Bounds(shape, (), (limit,))
        if len(varying) != 1 or a.strides[varying[0]].as_const() != 1:
            return None
        return Bounds(shape, ((varying[0], limit),))

    def tile_access(self, ptr: ir.Value, mask: ir.Value | None, wrapped: bool = False) -> TileAccess | None:
        """A load/store as rows of unit-stride elements, or None for a gather.

        With `wrapped`, wrapped offsets are accepted: their exact lanes join the limits and are
        reported in `assumed` (the caller fetches those lanes only).
        """
        p = self.pointer(ptr, wrapped)
        if p is None:
            return None
        b = self.mask(mask) if mask is not None else Bounds(p.offset.shape, ())
        if b is None:
            return None
        assumed = p.offset.exact
        b = b & assumed
        shape = p.offset.shape
        real = [d for d, x in enumerate(shape) if x != 1]
        if len(real) > 2:
            return None
        strides = p.offset.strides
        if len(real) == 0:
            rows, cols, rs, inner, outer = 1, 1, ZERO, None, None
        elif len(real) == 1:
            inner, outer = real[0], None
            rows, cols, rs = 1, shape[inner], ZERO
        else:
            outer, inner = real
            rows, cols, rs = shape[outer], shape[inner], strides[outer]
        if inner is not None and strides[inner].as_const() != 1:
            return None
        row_l = tuple(lim for d, lim in b.dims if d == outer and outer is not None)
        col_l = tuple(lim for d, lim in b.dims if d == inner and inner is not None)
        uni = b.uniform + tuple(lim for d, lim in b.dims if d not in (inner, outer))
        return TileAccess(p.root, p.elem, p.offset.base, rows, cols, rs, row_l, col_l, uni, assumed)
