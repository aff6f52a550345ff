"""xb-analyze-pointer-structure: blocks of pointers as base + scalar offset + per-dimension strides.

An integer block is *affine* when every element is `base + sum_d stride_d * i_d`, with `i_d` the
element's index along dimension d and `base`, `stride_d` polynomials in scalar SSA values (`Lin`).
A pointer block is a root pointer plus an affine offset (in elements). A mask is *bounded* when it
is a conjunction of `lower <= i_d < limit` per dimension (and of uniform conditions `0 < limit`).
Lower limits come from `x >= lo` and from unsigned compares: `0 <= x < n` is one `x ult n` (how
block pointers and descriptors check their bounds), so a tile whose offsets start before the tensor
starts its copy at the first in-bounds element. A lower limit that the analysis proves is <= 0
(offsets built from program ids, loop counters and non-negative constants) is dropped. What does
not fit is None: the backend then treats the access as a gather. The analysis is read-only and
memoized per value; backends ask for what they need (`affine`, `pointer`, `mask`, `tile_access`).

Wrapped offsets (`(pid * BLOCK + arange(0, BLOCK)) % M`, Triton's way to avoid load masks) are
affine only on the lanes where the remainder is the dividend (`x < M`, for `x > -M`): a structure
with `exact` bounds. Only callers that ask (`wrapped=True`) see such structures, with the exact
lanes as limits (`TileAccess.assumed`); they must show that the other lanes do not matter.

Integer division and remainder by a uniform value (`offs // d`, `offs % n_cols` with `d`, `n_cols`
scalars) make an offset *quasi-affine* (`Quasi`): affine plus multiples of such quotients, with C's
truncating division (Triton's `//` and `%` on signed integers). Such pointers and masks
(`quasi_pointer`, `quasi_mask`) can be evaluated lane by lane. A row/col decomposition put back
together, `(x // d) * d + x % d`, is x again, so `row * n_cols + col` is affine (a division by zero
is undefined behaviour in Triton; the simulator's 0 is not kept there).

Integers narrower than 64 bits wrap, as in Triton: `pid * 2**30` is negative in program 2. A polynomial
is exact in the integers, and add, sub and mul are the same modulo 2**32, so an i32 value is its
polynomial wrapped where it is read as a number: an i32 offset of `addptr`, an i32 compare, a sign
extension (`extsi`, `index_cast`) or a truncation. There the base becomes `Wrapped(lin, 32)`, one more
opaque value (`values` holds it; a backend computes the polynomial and wraps it), unless it cannot
wrap (a constant, or one value of that width). The lanes' part (`strides`) is not wrapped: a tile
whose lanes cross 2**31 is described as if they did not. Sign proofs (`nonneg`) look through the wrap.
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
class Wrapped:
    """`lin` wrapped to a `bits`-bit two's complement integer (an entry of `PointerStructure.values`)."""

    lin: Lin
    bits: int


def _int_bits(t: ir.Type) -> int | None:
    """The width of an integer (or integer block) type; None for other types (index: 64)."""
    e = ir.RankedTensorType(t).element_type if str(t).startswith("tensor<") else t
    if isinstance(e, ir.IndexType):
        return 64
    return ir.IntegerType(e).width if isinstance(e, ir.IntegerType) else None


@dataclass(frozen=True)
class Bounds:
    """Lane i is on iff i[d] < limit for every (d, limit) in dims, i[d] >= lo for every (d, lo, _) in
    lower, and 0 < limit for each uniform."""

    shape: tuple
    dims: tuple  # ((d, Lin), ...)
    uniform: tuple = ()  # (Lin, ...)
    lower: tuple = ()  # ((d, Lin, signed), ...): signed from `x >= lo`, unsigned from `x ult n` (lo = -x0)

    def __and__(self, o: Bounds | None) -> Bounds:
        if o is None:
            return self
        return Bounds(self.shape, self.dims + o.dims, self.uniform + o.uniform, self.lower + o.lower)


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
    row_lower: tuple = ()  # rows r >= each of these are on (offsets that may start before the tensor)
    col_lower: tuple = ()

    @property
    def limited(self) -> bool:
        """Some lanes may be off: the copy is not the whole tile."""
        return bool(self.row_limits or self.col_limits or self.uniform or self.row_lower or self.col_lower)


@dataclass(frozen=True)
class Quotient:
    """`x // d` ("div") or `x % d` ("rem") of a quasi-affine block x by a uniform d, truncating."""

    kind: str
    x: Quasi
    d: Lin


@dataclass(frozen=True)
class Quasi:
    """A quasi-affine integer block: element i is affine(i) + sum of coeff * q(i) over the
    (Quotient q, Lin coeff) pairs of `terms`."""

    affine: Affine
    terms: frozenset = frozenset()

    def uniform(self) -> bool:
        return not self.terms and self.affine.uniform()


@dataclass(frozen=True)
class QuasiPointer:
    """A root pointer plus a quasi-affine offset (in elements)."""

    root: ir.Value
    elem: str
    offset: Quasi


@dataclass(frozen=True)
class QuasiMask:
    """Lane i is on iff a(i) pred b(i) for every (pred, a, b) of `conds` (arith.cmpi predicates, Quasi
    operands)."""

    shape: tuple
    conds: tuple


def _zero(shape: tuple) -> Quasi:
    return Quasi(Affine(shape, ZERO, (ZERO,) * len(shape)))


def _qadd(a: Quasi, b: Quasi, sign: int = 1) -> Quasi:
    k = Lin.const(sign)
    fa, fb = a.affine, b.affine
    aff = Affine(fa.shape, fa.base + fb.base * k, tuple(x + y * k for x, y in zip(fa.strides, fb.strides)))
    terms = dict(a.terms)
    for t, c in b.terms:
        terms[t] = terms.get(t, ZERO) + c * k
    return _collapse(aff, {t: c for t, c in terms.items() if not c.is_zero()})


def _qscale(a: Quasi, k: Lin) -> Quasi:
    f = a.affine
    aff = Affine(f.shape, f.base * k, tuple(s * k for s in f.strides))
    return Quasi(aff, frozenset((t, c * k) for t, c in a.terms if not (c * k).is_zero()))


def _collapse(aff: Affine, terms: dict) -> Quasi:
    """c * d * (x // d) + c * (x % d) is c * x: C's division has x == (x / d) * d + x % d."""
    for t, c in terms.items():
        r = Quotient("rem", t.x, t.d)
        if t.kind == "div" and r in terms and c == t.d * terms[r]:
            rest = Quasi(aff, frozenset((u, k) for u, k in terms.items() if u not in (t, r)))
            return _qadd(rest, _qscale(t.x, terms[r]))
    return Quasi(aff, frozenset(terms.items()))


def _qmap(q: Quasi, strides) -> Quasi:
    """q under a shape op: `strides(old)` gives each affine part's new strides (all parts have q's shape)."""
    shape, new = strides(q.affine.strides)
    terms = frozenset((Quotient(t.kind, _qmap(t.x, strides), t.d), c) for t, c in q.terms)
    return Quasi(Affine(shape, q.affine.base, new), terms)


# arith.cmpi predicates: eq=0 ne=1 slt=2 sle=3 sgt=4 sge=5 ult=6 ule=7 ugt=8 uge=9
_SWAPPED = {2: 4, 3: 5, 4: 2, 5: 3, 6: 8, 7: 9, 8: 6, 9: 7}
# with the lanes' side on the left, `x0 + i  pred  lim` as (kind, shift) conditions on i:
# "<": i < lim - x0 + shift; ">=": i >= lim - x0 + shift; "unsigned>=": i >= -x0 (x >= 0)
_LANE_CONDS = {2: (("<", 0),), 3: (("<", 1),), 4: ((">=", 1),), 5: ((">=", 0),),
               6: (("unsigned>=", 0), ("<", 0)), 7: (("unsigned>=", 0), ("<", 1))}


_SHAPE_OPS = ("xb.broadcast", "xb.expand_dims", "xb.trans", "xb.reshape")
_QUASI_OPS = ("arith.addi", "arith.subi", "arith.muli", "arith.divsi", "arith.remsi", "arith.extsi", "arith.trunci",
              "arith.index_cast") + _SHAPE_OPS


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
        self._assumed: set = set()  # memo keys a client recorded (assume_pointer, assume_affine)

    # ----- scalars -------------------------------------------------------------------------
    def key(self, v) -> int:
        """The variable of an opaque scalar: an `ir.Value`, or a `Wrapped` polynomial."""
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
            return self.wrap(self.scalar(op.operands[0]), op.operands[0].type)
        return Lin.var(self.key(v))

    def wrap(self, lin: Lin, t: ir.Type) -> Lin:
        """`lin`, the value of an integer of type `t` computed without wrapping, as that integer
        (wrapped to its width) where it is read as a number."""
        bits = _int_bits(t)
        if bits is None or bits >= 64:
            return lin
        c = lin.as_const()
        if c is not None:
            c &= (1 << bits) - 1
            return Lin.const(c - (1 << bits) if c >> (bits - 1) else c)
        if len(lin.terms) == 1:
            (mono, coeff), = lin.terms.items()
            if coeff == 1 and len(mono) == 1 and self._fits(self.values[mono[0]], bits):
                return lin
        return Lin.var(self.key(Wrapped(lin, bits)))

    @staticmethod
    def _fits(x, bits: int) -> bool:
        if isinstance(x, Wrapped):
            return x.bits <= bits
        b = _int_bits(x.type)
        return b is not None and b <= bits

    def _wrap_affine(self, a: Affine | None, t: ir.Type) -> Affine | None:
        return a if a is None else Affine(a.shape, self.wrap(a.base, t), a.strides, a.exact)

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
            if a is None or b is None:  # quotients that cancel (`row * n_cols + col`) leave an affine form
                q = self.quasi(v)
                return q.affine if q is not None and not q.terms else None
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
        if n in ("arith.extsi", "arith.index_cast"):
            return self._wrap_affine(self.affine(op.operands[0], True), op.operands[0].type)
        if n == "arith.trunci":
            return self._wrap_affine(self.affine(op.operands[0], True), v.type)
        if n == "arith.remsi":
            return self._wrapped(op, shape)
        return self._reshaped(op, shape, lambda x: self.affine(x, True), lambda a, strides, exact: Affine(
            shape, a.base, strides, exact))

    def _wrapped(self, op, shape):
        """`x % m` with x affine along one dimension (unit stride) and m uniform: x on the lanes x < m."""
        x, m = (self._wrap_affine(self.affine(o), o.type) for o in op.operands)  # read as numbers
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
        strides = _restride(op, old, src_shape, shape)
        if strides is None:
            return None
        if isinstance(s, Pointer):
            return Pointer(s.root, s.elem, Affine(shape, s.offset.base, strides, exact))
        return make(s, strides, exact)

    def _reshape_bounds(self, op, s: Bounds, shape, src_shape):
        n = op.name
        if n == "xb.broadcast":
            # a condition on a broadcast size-1 dimension holds for index 0 only: it is uniform
            spread = [d for d in range(len(shape)) if src_shape[d] == 1 and shape[d] != 1]
            return Bounds(shape, tuple((d, lim) for d, lim in s.dims if d not in spread),
                          s.uniform + tuple(lim for d, lim in s.dims if d in spread) +
                          tuple(Lin.const(1) - lo for d, lo, _ in s.lower if d in spread),
                          tuple(x for x in s.lower if x[0] not in spread))
        if n == "xb.expand_dims":
            axis = int(ir.IntegerAttr(op.attributes["axis"]).value)
            return Bounds(shape, tuple((d + (d >= axis), lim) for d, lim in s.dims), s.uniform,
                          tuple((d + (d >= axis), lo, sg) for d, lo, sg in s.lower))
        if n == "xb.trans":
            order = list(ir.DenseI32ArrayAttr(op.attributes["order"]))
            return Bounds(shape, tuple((order.index(d), lim) for d, lim in s.dims), s.uniform,
                          tuple((order.index(d), lo, sg) for d, lo, sg in s.lower))
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
            p, o = self.pointer(op.operands[0], True), self._wrap_affine(self.affine(op.operands[1], True),
                                                                         op.operands[1].type)
            if p is None or o is None:  # `x_ptr + row * n_cols + col`: the quotients may cancel
                q = self.quasi_pointer(v)
                return None if q is None or q.offset.terms else Pointer(q.root, q.elem, q.offset.affine)
            strides = tuple(a + b for a, b in zip(p.offset.strides, o.strides)) if shape else ()
            exact = _both(p.offset.exact, o.exact)
            return Pointer(p.root, p.elem, Affine(shape, p.offset.base + o.base, strides, exact))
        if n == "xb.splat":
            p = self.pointer(op.operands[0])
            return None if p is None else Pointer(p.root, p.elem, Affine(shape, p.offset.base, (ZERO,) * len(shape)))
        if not shape:
            return Pointer(v, _elem(v.type), Affine((), ZERO, ()))
        return self._reshaped(op, shape, lambda x: self.pointer(x, True), None)

    # ----- quasi-affine blocks: `//` and `%` by a uniform value ------------------------------
    def quasi(self, v: ir.Value) -> Quasi | None:
        """The quasi-affine form of an integer block (affine ones included), or None."""
        return self._cached("quasi", v, self._quasi)

    def _quasi(self, v):
        a = self.affine(v)
        if a is not None:
            return Quasi(a)
        shape = _shape(v.type)
        owner = v.owner
        if isinstance(owner, ir.Block) or not shape:
            return None
        op = owner.operation if hasattr(owner, "operation") else owner
        n = op.name
        if n in ("arith.addi", "arith.subi", "arith.muli", "arith.divsi", "arith.remsi"):
            a, b = self.quasi(op.operands[0]), self.quasi(op.operands[1])
            if a is None or b is None:
                return None
            if n in ("arith.addi", "arith.subi"):
                return _qadd(a, b, 1 if n == "arith.addi" else -1)
            if n == "arith.muli" and a.uniform():
                a, b = b, a
            if not b.uniform():  # a product of two varying blocks, or a division by one
                return None
            if n == "arith.muli":
                return _qscale(a, b.affine.base)
            a, b = (Quasi(self._wrap_affine(x.affine, o.type), x.terms) for x, o in zip((a, b), op.operands))
            q = Quotient("div" if n == "arith.divsi" else "rem", a, b.affine.base)
            return Quasi(_zero(shape).affine, frozenset({(q, Lin.const(1))}))
        if n in ("arith.extsi", "arith.trunci", "arith.index_cast"):
            return self.quasi(op.operands[0])
        src = self._restrided(op, shape, self.quasi)
        return None if src is None else _qmap(src[0], src[1])

    def _restrided(self, op, shape, get):
        """(structure of a shape op's source, old strides -> (shape, new strides)), or None."""
        if op.name not in _SHAPE_OPS:
            return None
        src = op.operands[0]
        s = get(src)
        src_shape = _shape(src.type)
        if s is None or _restride(op, (ZERO,) * len(src_shape), src_shape, shape) is None:
            return None
        return s, lambda old: (shape, _restride(op, old, src_shape, shape))

    def quasi_pointer(self, v: ir.Value) -> QuasiPointer | None:
        """A pointer block as a root plus a quasi-affine offset, or None."""
        return self._cached("qptr", v, self._quasi_pointer)

    def _quasi_pointer(self, v):
        p = self.pointer(v)
        if p is not None:
            return QuasiPointer(p.root, p.elem, Quasi(p.offset))
        shape = _shape(v.type)
        owner = v.owner
        if isinstance(owner, ir.Block) or not shape:
            return None
        op = owner.operation if hasattr(owner, "operation") else owner
        if op.name == "xb.addptr":
            p, o = self.quasi_pointer(op.operands[0]), self.quasi(op.operands[1])
            return None if p is None or o is None else QuasiPointer(p.root, p.elem, _qadd(p.offset, o))
        src = self._restrided(op, shape, self.quasi_pointer)
        return None if src is None else QuasiPointer(src[0].root, src[0].elem, _qmap(src[0].offset, src[1]))

    def quasi_mask(self, v: ir.Value) -> QuasiMask | None:
        """An i1 block as a conjunction of comparisons of quasi-affine blocks, or None."""
        return self._cached("qmask", v, self._quasi_mask)

    def _quasi_mask(self, v):
        shape = _shape(v.type)
        owner = v.owner
        if isinstance(owner, ir.Block) or not shape:
            return None
        op = owner.operation if hasattr(owner, "operation") else owner
        n = op.name
        c = _splat_int(op)
        if c is not None:  # false: 0 < 0
            return QuasiMask(shape, () if c else ((2, _zero(shape), _zero(shape)),))
        if n == "arith.andi":
            a, b = self.quasi_mask(op.operands[0]), self.quasi_mask(op.operands[1])
            return None if a is None or b is None else QuasiMask(shape, a.conds + b.conds)
        if n == "arith.cmpi":
            a, b = self.quasi(op.operands[0]), self.quasi(op.operands[1])
            pred = int(ir.IntegerAttr(op.attributes["predicate"]).value)
            return None if a is None or b is None else QuasiMask(shape, ((pred, a, b),))
        src = self._restrided(op, shape, self.quasi_mask)
        if src is None:
            return None
        return QuasiMask(shape, tuple((p, _qmap(a, src[1]), _qmap(b, src[1])) for p, a, b in src[0].conds))

    def addresses_only(self, v: ir.Value) -> bool:
        """Whether the integer or i1 block `v` only feeds pointers and masks of loads and stores that
        `quasi_pointer`/`quasi_mask` describe, through address arithmetic: it need not exist as data."""
        k = ("addr", v)
        if k not in self._memo:
            self._memo[k] = False
            self._memo[k] = all(self._address_use(u) for u in v.uses)
        return self._memo[k]

    def _address_use(self, use) -> bool:
        op = use.owner.operation if hasattr(use.owner, "operation") else use.owner
        n, i = op.name, use.operand_number
        if n == "xb.addptr":
            return i == 1 and self.quasi_pointer(op.results[0]) is not None
        if n in ("xb.load", "xb.store"):
            seg = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
            return i == (1 if n == "xb.load" else 2) and seg[1 if n == "xb.load" else 2] == 1
        if n in ("arith.cmpi", "arith.andi") or (n in _SHAPE_OPS and _elem(op.results[0].type) == "i1"):
            return self.quasi_mask(op.results[0]) is not None and self.addresses_only(op.results[0])
        if n in _QUASI_OPS:
            return self.quasi(op.results[0]) is not None and self.addresses_only(op.results[0])
        return False

    def assume_pointer(self, v: ir.Value, p: Pointer) -> None:
        """Record the structure of `v`, which the analysis cannot derive on its own (a loop-carried
        pointer block: its client knows `p_k = p_0 + k * step` from the loop)."""
        self._memo[("ptr", v)] = p
        self._assumed.add(("ptr", v))

    def assume_affine(self, v: ir.Value, a: Affine) -> None:
        """As `assume_pointer`, for a loop-carried integer block (`offs_k += BLOCK_K`)."""
        self._memo[("aff", v)] = a
        self._assumed.add(("aff", v))

    def forget(self) -> None:
        """Drop every structure derived so far, keeping the assumed ones: values derived from a carried
        value before its client assumed its structure are derived again."""
        self._memo = {k: v for k, v in self._memo.items() if k in self._assumed}

    def opaque(self, v: ir.Value) -> Lin:
        """`v` (any scalar, also one that is not an xb value: a counter a backend adds) as a variable."""
        return Lin.var(self.key(v))

    def mask(self, v: ir.Value, lower: bool = False) -> Bounds | None:
        """The bounds of an i1 block, or None when it is data rather than structure.

        Without `lower`, a mask with lower limits is seen as before they were known: one from a
        signed `x >= lo` is data (None), an unsigned `x ult n` is its upper limit only (right for
        offsets that do not start before the tensor). Accesses ask with `lower=True`."""
        b = self._cached("mask", v, self._mask)
        if b is None or lower or not b.lower:
            return b
        if any(signed for _, _, signed in b.lower):
            return None
        return Bounds(b.shape, b.dims, b.uniform)

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
            a, b = self.mask(op.operands[0], True), self.mask(op.operands[1], True)
            if a is None or b is None:
                return None
            return a & b
        if n == "arith.cmpi":
            return self._compare(op, shape)
        return self._reshaped(op, shape, lambda x: self.mask(x, True), None)

    def _compare(self, op, shape):
        pred = int(ir.IntegerAttr(op.attributes["predicate"]).value)
        a, b = (self._wrap_affine(self.affine(x), x.type) for x in op.operands)
        if a is None or b is None:
            return None
        if not b.uniform():  # the lanes' side on the left: `lim > x` is `x < lim`
            a, b, pred = b, a, _SWAPPED.get(pred)
        if not b.uniform() or pred not in _LANE_CONDS:
            return None
        varying = [d for d, s in enumerate(a.strides) if not s.is_zero()]
        if len(varying) > 1 or (varying and a.strides[varying[0]].as_const() != 1):
            return None
        # element i compares x0 + i with lim: i < lim - x0 (+1 for <=), i >= lim - x0 (+1 for >)
        x0, lim = a.base, b.base
        dims, lower, uniform = [], [], []
        for kind, shift in _LANE_CONDS[pred]:
            t = (lim if kind != "unsigned>=" else ZERO) - x0 + Lin.const(shift)
            if kind == "<":
                if varying:
                    dims.append((varying[0], t))
                else:
                    uniform.append(t)
            elif self.nonneg(-t):  # i >= t with t <= 0: every lane
                continue
            elif varying:
                lower.append((varying[0], t, kind == ">="))
            else:
                uniform.append(Lin.const(1) - t)  # 0 >= t
        return Bounds(shape, tuple(dims), tuple(uniform), tuple(lower))

    # ----- signs ---------------------------------------------------------------------------
    def nonneg(self, lin: Lin) -> bool:
        """Whether `lin` is >= 0 for sure: non-negative coefficients on products of values known
        to be >= 0 (program ids, grid sizes, counters of loops that start at >= 0 and step up,
        loop-carried values that start at >= 0 and only grow, and sums, products, quotients of those)."""
        for mono, c in lin.terms.items():
            if c < 0 or not all(self._nonneg_value(self.values[k]) for k in mono):
                return False
        return True

    def _nonneg_value(self, v) -> bool:
        if isinstance(v, Wrapped):  # as if it did not wrap: where it does, the copy starts before the tensor
            return self.nonneg(v.lin)  # and the target's bounds check refuses it
        k = ("nonneg", v)
        if k not in self._memo:
            before = set(self._memo)
            self._memo[k] = False  # a cycle through a loop-carried value proves nothing
            self._memo[k] = self._nonneg_of(v)
            if not self._memo[k]:  # what was proved assuming v >= 0 does not hold
                for x in set(self._memo) - before - {k}:
                    if x[0] == "nonneg":
                        del self._memo[x]
        return self._memo[k]

    def _nonneg_of(self, v: ir.Value) -> bool:
        owner = v.owner
        if isinstance(owner, ir.Block):
            loop = owner.owner
            if loop is None or loop.name != "scf.for":
                return False
            args = list(owner.arguments)
            i = args.index(v)
            if i == 0:  # the counter: >= its lower bound
                return self.nonneg(self.scalar(loop.operands[0]))
            y = owner.operations[len(owner.operations) - 1]
            init, nxt = loop.operands[3 + i - 1], y.operands[i - 1]
            self._memo[("nonneg", v)] = True  # induction: if it is >= 0 now, does it stay so?
            ok = self.nonneg(self.scalar(init)) and self.nonneg(self.scalar(nxt) - Lin.var(self.key(v)))
            return ok
        op = owner.operation if hasattr(owner, "operation") else owner
        n = op.name
        if n in ("xb.program_id", "xb.num_programs"):
            return True
        c = _splat_int(op)
        if c is not None:
            return c >= 0
        if n in ("arith.divsi", "arith.divui", "arith.remsi", "arith.remui", "arith.minsi", "arith.ceildivsi",
                 "arith.floordivsi", "arith.muli", "arith.addi"):
            return all(self.nonneg(self.scalar(x)) for x in op.operands)
        if n == "arith.maxsi":
            return any(self.nonneg(self.scalar(x)) for x in op.operands)
        if n in ("arith.extsi", "arith.extui", "arith.trunci", "arith.index_cast"):
            return n == "arith.extui" or self.nonneg(self.scalar(op.operands[0]))
        return False

    def tile_access(self, ptr: ir.Value, mask: ir.Value | None, wrapped: bool = False,
                    transposed: bool = False) -> TileAccess | None:
        """A load/store as rows of unit-stride elements, or None for a gather.

        With `wrapped`, wrapped offsets are accepted: their exact lanes join the limits and are
        reported in `assumed` (the caller fetches those lanes only). With `transposed`, a 2-D
        block is read as its transpose (its columns as the rows: a column-major tile).
        """
        p = self.pointer(ptr, wrapped)
        if p is None:
            return None
        b = self.mask(mask, True) if mask is not None else Bounds(p.offset.shape, ())
        if b is None:  # a mask computed as data (`tl.where(...).to(tl.int1)`): a gather
            return None
        if transposed:
            if len(p.offset.shape) != 2:
                return None
            p, b = _transposed(p), _transposed_bounds(b)
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
        uni = b.uniform + tuple(lim for d, lim in b.dims if d not in (inner, outer)) + \
            tuple(Lin.const(1) - lo for d, lo, _ in b.lower if d not in (inner, outer))
        row_lo = tuple(lo for d, lo, _ in b.lower if d == outer and outer is not None)
        col_lo = tuple(lo for d, lo, _ in b.lower if d == inner and inner is not None)
        return TileAccess(p.root, p.elem, p.offset.base, rows, cols, rs, row_l, col_l, uni, assumed, row_lo, col_lo)


def _restride(op, old: tuple, src_shape: tuple, shape: tuple) -> tuple | None:
    """The strides of a shape op's result (broadcast, expand_dims, trans, a reshape that only adds or
    drops size-1 dims) from those of its source; None for another reshape."""
    n = op.name
    if n == "xb.broadcast":
        return tuple(ZERO if src_shape[d] == 1 and shape[d] != 1 else old[d] for d in range(len(shape)))
    if n == "xb.expand_dims":
        axis = int(ir.IntegerAttr(op.attributes["axis"]).value)
        return old[:axis] + (ZERO,) + old[axis:]
    if n == "xb.trans":
        order = list(ir.DenseI32ArrayAttr(op.attributes["order"]))
        return tuple(old[o] for o in order)
    keep = [d for d in range(len(src_shape)) if src_shape[d] != 1]
    if [src_shape[d] for d in keep] != [x for x in shape if x != 1]:
        return None
    it = iter(keep)
    return tuple(ZERO if x == 1 else old[next(it)] for x in shape)


def _transposed(p: Pointer) -> Pointer:
    o = p.offset
    ex = _transposed_bounds(o.exact) if o.exact is not None else None
    return Pointer(p.root, p.elem, Affine(o.shape[::-1], o.base, o.strides[::-1], ex))


def _transposed_bounds(b: Bounds) -> Bounds:
    return Bounds(b.shape[::-1], tuple((1 - d, lim) for d, lim in b.dims), b.uniform,
                  tuple((1 - d, lo, sg) for d, lo, sg in b.lower))
