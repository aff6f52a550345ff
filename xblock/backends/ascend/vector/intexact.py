"""Exact int32 comparisons and truncating division on the 910B vector unit, which compares int32
lanes for equality only (`Compare.md`: A2 int32_t, EQ) and divides floats only.

Comparison. Rounding to float is monotonic, so where float(x) != float(y) the float difference
float(x) - float(y) (never zero, never of the wrong sign, for two different floats) has the sign of
x - y. Where they round to the same float, |x - y| < 2^8 (float keeps 24 of int32's 32 bits), so
the int32 difference x - y does not overflow and converts to float exactly. One Select of the two
gives a float whose sign is that of x - y for every pair of int32 (or uint32, converted as unsigned)
values, and `CompareScalar(d, 0.0, mode)` is the exact predicate.

Division. A float quotient is off by up to a few hundred for |x| near 2^31 (float keeps 24 bits).
q1 = trunc(x / y) in float, r1 = x - q1 * y in int32 lanes (exact: the true r1 fits), then one more
float step on r1, whose quotient is small, leaves q at most one away from C's truncating quotient.
The last step compares r exactly with 0 and with +-|y| and moves q and r by one where C's rules
(r has x's sign, |r| < |y|) say so. Division by zero stays what the float path gives; Triton leaves
it undefined."""

from __future__ import annotations

from mlir import ir

from ....dialects import ascendc as A
from ..values import SIZE, Tile
from .casts import cast


class Exact32:
    """Exact int32 comparison and division over tiles of one shape."""

    def __init__(self, ctx, shape: tuple, unsigned: bool = False):
        self.ctx, self.shape, self.unsigned = ctx, shape, unsigned
        self.f32 = A.local_type(ir.F32Type.get())

    def new(self, elem: str = "i32") -> Tile:
        return self.ctx.temp(elem, self.shape)

    def _vec(self, api: str, out: Tile, *srcs: Tile) -> Tile:
        A.op("vec", [out.value] + [s.value for s in srcs] + [self.ctx.c64(out.count)], api=api)
        return out

    def _view(self, t: Tile, elem: str) -> ir.Value:
        return t.value if t.elem == elem else A.op("reinterpret", [t.value], A.local_type(ir.Type.parse(elem)))

    def _float(self, x: Tile, unsigned: bool = False) -> Tile:
        f = self.new("f32")
        cast(self.ctx, f, x, unsigned=unsigned)
        return f

    def difference_sign(self, x: Tile, y: Tile) -> Tile:
        """A float tile whose lanes have the sign of x - y (zero exactly where x == y)."""
        fx, fy = self._float(x, self.unsigned), self._float(y, self.unsigned)
        self._vec("Sub", fx, fx, fy)  # right wherever x and y round to different floats
        d = self._vec("Sub", self.new(), x, y)  # exact where they round to the same float
        cast(self.ctx, fy, d)
        self.free(d)
        tie = self.mask(fx, "EQ")
        out = self.new("f32")
        A.op("select", [out.value, tie.value, fy.value, fx.value, self.ctx.c64(out.count)],
             mode="VSEL_TENSOR_TENSOR_MODE")
        self.free(fx, fy, tie)
        return out

    def mask(self, f: Tile, mode: str, out: Tile | None = None) -> Tile:
        """The bit mask of `f mode 0.0` (f a float tile)."""
        out = out or self.new("ui8")
        A.op("compare_scalar", [out.value, f.value, self.ctx.cst("f32", 0.0), self.ctx.c64(f.padded)], mode=mode)
        return out

    def compare(self, out: Tile, x: Tile, y: Tile, mode: str) -> Tile:
        d = self.difference_sign(x, y)
        self.mask(d, mode, out)
        self.free(d)
        return out

    def free(self, *tiles: Tile) -> None:
        for t in tiles:
            self.ctx.release(t)

    # ----- division ---------------------------------------------------------------------------

    def _select(self, m: Tile, a: Tile, b: Tile | None = None) -> Tile:
        """a where the mask is set, b (or 0) elsewhere: Select moves the int32 bits through a float view."""
        out = self.new()
        view = [A.op("reinterpret", [t.value], self.f32) for t in (out, a) + ((b,) if b is not None else ())]
        n = self.ctx.c64(out.count)
        if b is None:
            A.op("select", [view[0], m.value, view[1], self.ctx.cst("f32", 0.0), n], mode="VSEL_TENSOR_SCALAR_MODE")
        else:
            A.op("select", [view[0], m.value, view[1], view[2], n], mode="VSEL_TENSOR_TENSOR_MODE")
        return out

    def _const(self, v: int) -> Tile:
        t = self.new()
        A.op("duplicate", [t.value, self.ctx.cst("i32", v), self.ctx.c64(t.padded)])
        return t

    def _negated(self, x: Tile) -> Tile:
        out = self.new()
        A.op("vec_scalar", [out.value, x.value, self.ctx.cst("i32", -1), self.ctx.c64(out.count)], api="Muls")
        return out

    def _quotient_step(self, q: Tile, r: Tile, x: Tile, y: Tile, fy: Tile) -> None:
        """q = trunc(float(x) / float(y)) and r = x - q * y (int32 lanes, wrapping as C)."""
        fx = self._float(x)
        self._vec("Div", fx, fx, fy)
        cast(self.ctx, q, fx)  # float -> int32 truncates, as fptosi
        self.free(fx)
        self._vec("Mul", r, q, y)
        self._vec("Sub", r, x, r)

    def _sign_mask(self, x: Tile, mode: str) -> Tile:
        f = self._float(x)  # int32 -> float keeps the sign and zero exactly
        m = self.mask(f, mode)
        self.free(f)
        return m

    def divmod(self, x: Tile, y: Tile) -> tuple[Tile, Tile]:
        """C's truncating quotient and remainder of int32 lanes (new tiles)."""
        fy = self._float(y)
        q, r1 = self.new(), self.new()
        self._quotient_step(q, r1, x, y, fy)
        q2, r = self.new(), self.new()
        self._quotient_step(q2, r, r1, y, fy)
        self._vec("Add", q, q, q2)
        self.free(q2, r1, fy)
        # r is at most one |y| away from C's remainder, which has x's sign and |r| < |y|
        ylt0 = self._sign_mask(y, "LT")
        neg_y, minus1, plus1 = self._negated(y), self._const(-1), self._const(1)
        ay, sy = self._select(ylt0, neg_y, y), self._select(ylt0, minus1, plus1)
        self.free(ylt0, neg_y, minus1, plus1)
        neg_ay = self._negated(ay)
        xlt0 = self._sign_mask(x, "LT")
        xge0 = self._not(xlt0)
        rlt0, rgt0 = self._sign_mask(r, "LT"), self._sign_mask(r, "GT")
        d = self.difference_sign(r, ay)
        r_ge_ay = self.mask(d, "GE")
        self.free(d)
        d = self.difference_sign(r, neg_ay)
        r_le_nay = self.mask(d, "LE")
        self.free(d, neg_ay)
        low = self._or(self._and(xge0, rlt0), self._and(xlt0, r_le_nay))  # one |y| too low
        high = self._or(self._and(xge0, r_ge_ay), self._and(xlt0, rgt0))  # one |y| too high
        self.free(xlt0, xge0, rlt0, rgt0, r_ge_ay, r_le_nay)
        for m, api_r, api_q in ((low, "Add", "Sub"), (high, "Sub", "Add")):
            step, unit = self._select(m, ay), self._select(m, sy)
            self._vec(api_r, r, r, step)
            self._vec(api_q, q, q, unit)
            self.free(step, unit, m)
        self.free(ay, sy)
        return q, r

    def _masks(self, api: str, *srcs: Tile) -> Tile:
        """And/Or/Not of bit masks, 16 bits at a time (the vector unit's logic ops are 16-bit only)."""
        out = self.new("ui8")
        A.op("vec", [self._view(t, "ui16") for t in (out, *srcs)] + [self.ctx.c64(out.bytes // SIZE["ui16"])],
             api=api)
        return out

    def _not(self, m: Tile) -> Tile:
        return self._masks("Not", m)

    def _and(self, a: Tile, b: Tile) -> Tile:
        return self._masks("And", a, b)

    def _or(self, a: Tile, b: Tile) -> Tile:
        out = self._masks("Or", a, b)
        self.free(a, b)
        return out
