"""fp32 math the AscendC vector API has no instruction for, composed from the instructions it has.

Only the vector APIs of the reference (../shared/ascendc/REFERENCE.md, §1.7-1.9) are used: Add,
Sub, Mul, Div, Max, Min, Exp, Ln, Abs, Sqrt, Adds, Muls, Maxs, Mins, Duplicate, Cast (float->float
with RINT/FLOOR/ROUND/TRUNC, float<->int32), CompareScalar/Compare, Select and the 16-bit And/Or
(sign bits). A helper of the rule modules (`lowering` registers the rules): it registers none.

- 2^n for an integral n is built exactly in an int32 tile ((n + 127) * 2^23, reinterpreted), so
  `exp2` is 2^rint(x) * Exp(f ln2) (|f| <= 1/2) instead of Exp(x ln2).
- expm1 and log1p use Kahan's forms (exact u - 1 over the logarithm), so they stay accurate near 0;
  sinh, cosh, tanh, asinh, acosh, atanh build on them.
- atan, asin, acos, sin, cos, tan, erf, erfc: range reduction plus polynomials fitted for xblock
  (relative least squares with mpmath); erfc splits x^2 exactly (x = xh + xl, xh on 12 bits).
- sin, cos, tan reduce by a three-part pi/2 whose first two parts have 11 bits: exact while
  |x| < 2^13 pi/2 (about 12868); larger arguments are not reduced accurately.
- pow is Exp(y Ln|x|) with C99's special cases and signs: its error grows with |y ln x| (2^-24 each).
- cbrt is Exp(Ln|x| / 3) plus one Newton step.
The measured accuracy of each is in docs/LANGUAGE.md ("Math functions").

`Bits` does the integer bit operations, exactly (docs/DESIGN.md, "Integer bit operations"): And,
Or and Not exist for 16-bit lanes only, so every width goes through uint16 views; ShiftLeft and
ShiftRight take one scalar count for a whole tile; there is no high-half multiply, so umulhi is
built from 16-bit pieces.
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith

from ....dialects import ascendc as A
from ..values import SIZE, Splat, Tile
from .tiles import vec, vec_scalar

F32_MAX = 3.4028234663852886e38
_LN2 = 0.6931471805599453
_PIO2 = (1.5707963705062866, -4.371138828673793e-08)  # pi/2 in fp32, and the rest
_PI = (3.1415927410125732, -8.742277657347586e-08)
_PIO4 = 0.7853981852531433
_TAN_PIO8 = 0.41421356237309503
_TRIG_PARTS = (1.5703125, 0.0004837512969970703, 7.549790126404332e-08)  # 11 + 11 bits + the rest of pi/2
# polynomials, highest degree first: atan(t) = t + t z P(z), z = t^2, |t| <= tan(pi/8)
_ATAN = (0.05045854667195934, -0.08623691243511789, 0.11071216131869249, -0.1428414198490632, 0.1999997705857732,
         -0.33333333278554206)
# asin(s) = s + s z Q(z), z = s^2 <= 1/4
_ASIN = (0.03368482943128942, 0.01715299987988486, 0.031099839888301457, 0.04459947498235448, 0.07500094314117933,
         0.16666666338575495)
# sin(r) = r + r z S(z) and cos(r) = 1 - z/2 + z^2 C(z), z = r^2 <= (pi/4)^2
_SIN = (2.724932358850387e-06, -0.0001984008123183112, 0.00833333186212755, -0.16666666663812588)
_COS = (-2.7300616890990445e-07, 2.4800597270537017e-05, -0.0013888887664966312, 0.04166666666429748)
# tan(r) = r + r z T(z), z = r^2 <= (pi/4)^2
_TAN = (0.003823788893226689, 0.0012207033555110547, 0.009937949623143627, 0.021628728120950135,
        0.053993390807039375, 0.13333236454726918, 0.3333333393413638)
# erf(x) = x + x P(x^2) for |x| < 1; 1 - exp(G(|x| - 2.5)) for 1 <= |x| <= 3.93 (the cpu target's fits)
_ERF_SMALL = (-9.680136827228125e-06, 0.00011270544928265736, -0.00084847112884745, 0.005221074912697077,
              -0.02686544507741928, 0.11283782869577408, -0.37612637877464294, 0.12837916612625122)
_ERFC_LOG = (1.6280430372717092e-06, -1.3281594874570146e-05, 7.734679820714518e-05, -0.0004202368436381221,
             0.0021652088034898043, -0.010858431458473206, -0.9438936710357666, -5.352680683135986,
             -7.806815147399902)
# erfc(x) = t exp(-x^2 + H(t - 1/2)), t = 1 / (1 + x/2), for x >= 1/2 (|error of H| < 1.5e-9)
_ERFC_H = (0.2589189939724889, -0.05061139145048954, -0.2919574691855427, 0.11337118364399099, 0.2820345399776495,
           -0.15798368662564324, -0.3751582530576555, 0.18937340787101004, 1.3452864135841465, -0.6717940842797469)


class VMath:
    """Vector instructions on fp32 tiles of one shape, each writing a new scratch tile (or `out`).

    `done(*tiles)` hands back the scratch of this object's tiles that are dead (inputs, `out` and the
    filled constants are left alone), so that a long composition needs a few tiles, not one per step.
    """

    def __init__(self, ctx, shape: tuple):
        self.ctx, self.shape = ctx, shape
        self._consts: dict = {}
        self._owned: dict = {}  # id -> the scratch tile to release

    def new(self, elem: str = "f32") -> Tile:
        t = self.ctx.temp(elem, self.shape)
        self._owned[id(t)] = t
        return t

    def done(self, *tiles) -> None:
        for t in tiles:
            t = self._owned.pop(id(t), None)
            if t is not None:
                self.ctx.release(t)

    def _s(self, v, elem="f32") -> Splat:
        return Splat(elem, self.shape, const=v)

    def op(self, api, *srcs, out=None) -> Tile:
        out = out or self.new()
        vec(self.ctx, api, out, *srcs)
        return out

    def sop(self, api, src, c, out=None) -> Tile:
        out = out or self.new(src.elem)
        vec_scalar(self.ctx, api, out, src, self._s(c, src.elem))
        return out

    def add(self, a, b, out=None):
        return self.op("Add", a, b, out=out)

    def sub(self, a, b, out=None):
        return self.op("Sub", a, b, out=out)

    def mul(self, a, b, out=None):
        return self.op("Mul", a, b, out=out)

    def div(self, a, b, out=None):
        return self.op("Div", a, b, out=out)

    def adds(self, a, c, out=None):
        return self.sop("Adds", a, c, out)

    def muls(self, a, c, out=None):
        return self.sop("Muls", a, c, out)

    def const(self, c) -> Tile:
        """A tile filled with c (Duplicate), made once per op."""
        key = repr(float(c))  # -0.0 and 0.0 are different fills
        if key not in self._consts:
            t = self.ctx.temp("f32", self.shape)
            self.ctx.duplicate(t, self._s(c), t.padded)
            self._consts[key] = t
        return self._consts[key]

    def rsub(self, c, a, out=None):
        """c - a."""
        t = self.muls(a, -1.0, out=out)
        return self.adds(t, c, out=t)

    def round(self, a, mode: str, out=None, elem="f32") -> Tile:
        """Cast to `elem` with a round mode (float->float rounds to an integral value)."""
        out = out or self.new(elem)
        A.op("cast", [out.value, a.value, self.ctx.c64(a.count)], round=mode)
        return out

    def cmps(self, a, c, mode: str) -> Tile:
        m = self.new("ui8")
        A.op("compare_scalar", [m.value, a.value, self.ctx.cst("f32", c), self.ctx.c64(a.padded)], mode=mode)
        return m

    def cmp(self, a, b, mode: str) -> Tile:
        m = self.new("ui8")
        A.op("compare", [m.value, a.value, b.value, self.ctx.c64(a.padded)], mode=mode)
        return m

    def _bits(self, api, a, b, out) -> Tile:
        u16 = A.local_type(ir.Type.parse("ui16"))
        views = [A.op("reinterpret", [t.value], u16) for t in (out, a, b)]
        A.op("vec", views + [self.ctx.c64(out.bytes // 2)], api=api)
        return out

    def mask_and(self, m1, m2) -> Tile:
        r = self._bits("And", m1, m2, self.new("ui8"))
        self.done(m1, m2)
        return r

    def mask_or(self, m1, m2) -> Tile:
        r = self._bits("Or", m1, m2, self.new("ui8"))
        self.done(m1, m2)
        return r

    def sel(self, m, a, b, out=None) -> Tile:
        """m ? a : b, with b a tile or a float; the mask is used up (freed)."""
        out = out or self.new()
        n = self.ctx.c64(out.count)
        if isinstance(b, Tile):
            A.op("select", [out.value, m.value, a.value, b.value, n], mode="VSEL_TENSOR_TENSOR_MODE")
        else:
            A.op("select", [out.value, m.value, a.value, self.ctx.cst("f32", b), n], mode="VSEL_TENSOR_SCALAR_MODE")
        self.done(m)
        return out

    def sel_c(self, m, c, b, out=None) -> Tile:
        """m ? c : b for a float c."""
        return self.sel(m, self.const(c), b, out=out)

    def poly(self, t, coefs) -> Tile:
        """Horner (Mul, Adds): coefs[0] * t^(n-1) + ... + coefs[-1]."""
        p = self.adds(self.muls(t, coefs[0]), coefs[1])
        for k in coefs[2:]:
            self.mul(p, t, out=p)
            self.adds(p, k, out=p)
        return p

    def odd_poly(self, s, z, coefs, out=None) -> Tile:
        """s + s z P(z) (frees z)."""
        p = self.poly(z, coefs)
        self.mul(p, z, out=p)
        self.mul(p, s, out=p)
        self.done(z)
        return self.add(s, p, out=p if out is None else out)

    # ------------------------------------------------------------------------------ signs, powers
    def sign_bits(self, x) -> Tile:
        """x with every bit but the sign cleared (+0.0 or -0.0), through 16-bit And."""
        return self._bits("And", x, self.const(-0.0), self.new())

    def copysign(self, mag, sgn, out=None) -> Tile:
        """|mag| with sgn's sign bit (frees mag when owned)."""
        m = self.op("Abs", mag)
        self.done(mag)
        sb = self.sign_bits(sgn)
        r = self._bits("Or", m, sb, out or self.new())
        self.done(m, sb)
        return r

    def signbit(self, x) -> Tile:
        """A mask: x's sign bit is set (-0.0 and negative NaNs included)."""
        sb = self.sign_bits(x)
        one = self._bits("Or", sb, self.const(1.0), sb)
        m = self.cmps(one, 0.0, "LT")
        self.done(one)
        return m

    def pow2(self, k) -> Tile:
        """2^k for integral k in [-126, 127], exactly: (k + 127) * 2^23 in an int32 tile, read as float."""
        ki = self.round(k, "CAST_RINT", elem="i32")
        self.sop("Adds", ki, 127, out=ki)
        self.sop("Muls", ki, 1 << 23, out=ki)
        view = A.op("reinterpret", [ki.value], A.local_type(ir.F32Type.get()))
        t = Tile(view, "f32", ki.shape, ki.bytes, "view", parent=ki)
        self._owned[id(t)] = ki
        return t

    def scale(self, y, n, out=None) -> Tile:
        """y * 2^n for integral n in [-151, 129], in two exact steps (one rounding into denormals)."""
        n1 = self.muls(n, 0.5)
        self.round(n1, "CAST_FLOOR", out=n1)
        n2 = self.sub(n, n1)
        p1 = self.pow2(n1)
        r = self.mul(y, p1)
        self.done(n1, p1)
        p2 = self.pow2(n2)
        self.mul(r, p2, out=out)
        self.done(n2, p2, r)
        return out

    # ------------------------------------------------------------------------------ exp and log
    def exp2(self, x, out, nonpositive: bool = False) -> Tile:
        """2^x; `nonpositive`: x <= 0 or NaN is known (the caller proved it from the IR), so that n = rint(x)
        lies in [-151, 0] and one exact power of two does the scale (`scale_nonpositive`)."""
        xc = self.sop("Maxs", x, -151.0)
        if not nonpositive:
            self.sop("Mins", xc, 129.0, out=xc)  # NaN stays NaN
        n = self.round(xc, "CAST_RINT")
        f = self.sub(xc, n, out=xc)
        self.muls(f, _LN2, out=f)
        self.op("Exp", f, out=f)
        if nonpositive:
            self.scale_nonpositive(f, n, out=out)
        else:
            self.scale(f, n, out=out)
        self.done(n, f)
        return out

    def scale_nonpositive(self, y, n, out) -> Tile:
        """y * 2^n for integral n in [-151, 0] and y in [2^-1/2, 2^1/2]: y * 2^(n + 64) is exact (a normal
        float), and the product with 2^-64 rounds once (into denormals where it must), as `scale`."""
        k = self.adds(n, 64.0 + 127.0)  # the biased exponent of 2^(n + 64), in [40, 191]
        ki = self.round(k, "CAST_RINT", elem="i32")
        self.done(k)
        self.sop("Muls", ki, 1 << 23, out=ki)
        view = A.op("reinterpret", [ki.value], A.local_type(ir.F32Type.get()))
        p = Tile(view, "f32", ki.shape, ki.bytes, "view", parent=ki)
        self.mul(y, p, out=out)
        self.done(ki)
        self.muls(out, 2.0 ** -64, out=out)
        return out

    def expm1(self, x, out=None) -> Tile:
        """(u - 1) * x / ln(u), u = e^x (Kahan): u - 1 is exact near 0, the quotient repairs u's rounding."""
        u = self.op("Exp", x)
        um1 = self.adds(u, -1.0)
        r = self.op("Ln", u)
        self.div(x, r, out=r)
        self.mul(um1, r, out=r)
        self.sel(self.cmps(u, 1.0, "EQ"), x, r, out=r)
        self.sel_c(self.cmps(um1, -1.0, "EQ"), -1.0, r, out=r)
        out = self.sel(self.cmps(u, F32_MAX, "GT"), u, r, out=out)
        self.done(u, um1, r)
        return out

    def log1p(self, x, out=None) -> Tile:
        """ln(u) * x / (u - 1), u = 1 + x (Kahan)."""
        u = self.adds(x, 1.0)
        d = self.adds(u, -1.0)
        self.div(x, d, out=d)
        r = self.op("Ln", u)
        self.mul(r, d, out=r)
        self.done(d)
        self.sel(self.cmps(u, 1.0, "EQ"), x, r, out=r)
        out = self.sel(self.cmps(u, F32_MAX, "GT"), u, r, out=out)
        self.done(u, r)
        return out

    def _half_exp(self, a) -> Tile:
        """(e^(a/2) / 2) * e^(a/2): e^a / 2 without overflow below 89.4."""
        y = self.muls(a, 0.5)
        self.op("Exp", y, out=y)
        h = self.muls(y, 0.5)
        self.mul(h, y, out=h)
        self.done(y)
        return h

    def sinh(self, x, out) -> Tile:
        a = self.op("Abs", x)
        e = self.expm1(a)
        t = self.adds(e, 1.0)
        self.div(e, t, out=t)
        self.add(e, t, out=e)
        self.muls(e, 0.5, out=e)
        self.done(t)
        big = self._half_exp(a)
        self.sel(self.cmps(a, 20.0, "GT"), big, e, out=e)
        self.done(a, big)
        return self.copysign(e, x, out=out)

    def cosh(self, x, out) -> Tile:
        a = self.op("Abs", x)
        e = self.op("Exp", a)
        h = self.div(self.const(0.5), e)
        self.muls(e, 0.5, out=e)
        self.add(e, h, out=e)
        self.done(h)
        big = self._half_exp(a)
        self.sel(self.cmps(a, 20.0, "GT"), big, e, out=out)
        self.done(a, e, big)
        return out

    def tanh(self, x, out) -> Tile:
        a = self.op("Abs", x)
        self.sop("Mins", a, 9.5, out=a)
        self.muls(a, 2.0, out=a)
        e = self.expm1(a)
        self.done(a)
        t = self.adds(e, 2.0)
        self.div(e, t, out=t)
        self.done(e)
        return self.copysign(t, x, out=out)

    def asinh(self, x, out) -> Tile:
        a = self.op("Abs", x)
        a2 = self.mul(a, a)
        t = self.adds(a2, 1.0)
        self.op("Sqrt", t, out=t)
        self.adds(t, 1.0, out=t)
        self.div(a2, t, out=t)
        self.done(a2)
        self.add(a, t, out=t)
        r = self.log1p(t)
        self.done(t)
        big = self.op("Ln", a)
        self.adds(big, _LN2, out=big)
        self.sel(self.cmps(a, 4096.0, "GT"), big, r, out=r)
        self.done(a, big)
        return self.copysign(r, x, out=out)

    def acosh(self, x, out) -> Tile:
        t = self.adds(x, -1.0)
        s = self.adds(t, 2.0)
        self.op("Sqrt", s, out=s)
        v = self.op("Sqrt", t)
        self.mul(v, s, out=v)  # NaN below 1: sqrt(x - 1)
        self.add(t, v, out=v)
        self.done(t, s)
        r = self.log1p(v)
        self.done(v)
        big = self.op("Ln", x)
        self.adds(big, _LN2, out=big)
        self.sel(self.cmps(x, 4096.0, "GT"), big, r, out=out)
        self.done(r, big)
        return out

    def atanh(self, x, out) -> Tile:
        a = self.op("Abs", x)
        d = self.rsub(1.0, a)
        self.muls(a, 2.0, out=a)
        self.div(a, d, out=d)
        self.done(a)
        r = self.log1p(d)
        self.done(d)
        self.muls(r, 0.5, out=r)
        return self.copysign(r, x, out=out)

    # ------------------------------------------------------------------------------ inverse trigonometry
    def atan01(self, a) -> Tile:
        """atan(a) for a in [0, 1] (NaN passes): (a - 1) / (a + 1) above tan(pi/8), plus pi/4."""
        b = self.adds(a, -1.0)
        den = self.adds(a, 1.0)
        self.div(b, den, out=b)
        self.done(den)
        self.sel(self.cmps(a, _TAN_PIO8, "GT"), b, a, out=b)
        r = self.odd_poly(b, self.mul(b, b), _ATAN)
        self.done(b)
        shifted = self.adds(r, _PIO4)
        self.sel(self.cmps(a, _TAN_PIO8, "GT"), shifted, r, out=r)
        self.done(shifted)
        return r

    def from_pio2(self, r, out=None) -> Tile:
        """pi/2 - r, with pi/2 in two parts."""
        t = self.rsub(_PIO2[0], r, out=out)
        return self.adds(t, _PIO2[1], out=t)

    def from_pi(self, r, out=None) -> Tile:
        t = self.rsub(_PI[0], r, out=out)
        return self.adds(t, _PI[1], out=t)

    def atan(self, x, out) -> Tile:
        a = self.op("Abs", x)
        t = self.div(self.const(1.0), a)
        self.sel(self.cmps(a, 1.0, "GT"), t, a, out=t)
        r = self.atan01(t)
        self.done(t)
        c = self.from_pio2(r)
        self.sel(self.cmps(a, 1.0, "GT"), c, r, out=r)
        self.done(a, c)
        return self.copysign(r, x, out=out)

    def atan2(self, y, x, out) -> Tile:
        ay, ax = self.op("Abs", y), self.op("Abs", x)
        hi, t = self.op("Max", ay, ax), self.op("Min", ay, ax)
        swap = self.cmp(ay, ax, "GT")
        self.done(ay, ax)
        both_inf = self.cmps(t, F32_MAX, "GT")
        self.div(t, hi, out=t)
        self.sel_c(self.cmps(hi, 0.0, "EQ"), 0.0, t, out=t)  # atan2(0, 0) = 0
        self.sel_c(both_inf, 1.0, t, out=t)  # pi/4
        self.done(hi)
        r = self.atan01(t)
        self.done(t)
        c = self.from_pio2(r)
        self.sel(swap, c, r, out=r)
        self.from_pi(r, out=c)
        self.sel(self.signbit(x), c, r, out=r)
        self.done(c)
        return self.copysign(r, y, out=out)

    def _asin_abs(self, a) -> Tile:
        """asin(a) for a = |x| <= 1: s + s z Q(z) of s = a, or 2 of it at s = sqrt((1 - a) / 2) from pi/2."""
        zb = self.muls(a, -0.5)
        self.adds(zb, 0.5, out=zb)
        s = self.op("Sqrt", zb)
        self.sel(self.cmps(a, 0.5, "LE"), a, s, out=s)
        z = self.mul(a, a)
        self.sel(self.cmps(a, 0.5, "LE"), z, zb, out=z)
        self.done(zb)
        p = self.odd_poly(s, z, _ASIN)
        self.done(s)
        return p

    def asin(self, x, out) -> Tile:
        a = self.op("Abs", x)
        p = self._asin_abs(a)
        big = self.muls(p, 2.0)
        self.from_pio2(big, out=big)
        self.sel(self.cmps(a, 0.5, "GT"), big, p, out=p)
        self.done(a, big)
        return self.copysign(p, x, out=out)

    def acos(self, x, out) -> Tile:
        a = self.op("Abs", x)
        p = self._asin_abs(a)
        large = self.muls(p, 2.0)  # x > 1/2: 2 asin(s); x < -1/2: pi - 2 asin(s)
        alt = self.from_pi(large)
        self.sel(self.cmps(x, 0.0, "LT"), alt, large, out=large)
        self.copysign(p, x, out=alt)
        self.from_pio2(alt, out=alt)  # |x| <= 1/2: pi/2 - asin(x)
        self.sel(self.cmps(a, 0.5, "GT"), large, alt, out=out)
        self.done(a, p, large, alt)
        return out

    # ------------------------------------------------------------------------------ tan, erf, erfc
    def _reduce_pio2(self, x):
        """(q, r, scratch): x = q pi/2 + r, q = rint(2x/pi), |r| <= pi/4 (exact products while |q| < 2^13)."""
        q = self.muls(x, 2.0 / math.pi)
        self.round(q, "CAST_RINT", out=q)
        r = self.muls(x, 1.0)
        part = self.new()
        for c in _TRIG_PARTS:
            self.muls(q, -c, out=part)
            self.add(r, part, out=r)
        return q, r, part

    def _mod(self, k, m: float, out) -> Tile:
        """k - m floor(k / m) for integral k (exact)."""
        self.muls(k, 1.0 / m, out=out)
        self.round(out, "CAST_FLOOR", out=out)
        self.muls(out, -m, out=out)
        return self.add(k, out, out=out)

    def sincos(self, x, out, cos: bool) -> Tile:
        q, r, part = self._reduce_pio2(x)
        z = self.mul(r, r)
        s = self.odd_poly(r, self.muls(z, 1.0), _SIN)
        c = self.poly(z, _COS)  # 1 - z/2 + z^2 C(z)
        self.mul(c, z, out=c)
        self.adds(c, -0.5, out=c)
        self.mul(c, z, out=c)
        self.adds(c, 1.0, out=c)
        self.done(z, r)
        if cos:
            self.adds(q, 1.0, out=q)
        self._mod(q, 4.0, out=part)  # the quadrant
        self.sel(self.cmps(self._mod(part, 2.0, out=q), 1.0, "EQ"), c, s, out=s)
        self.muls(s, -1.0, out=c)
        self.sel(self.cmps(part, 2.0, "GE"), c, s, out=s)
        self.done(q, c, part)
        if not cos:  # sin(-0) = -0
            self.sel(self.cmps(x, 0.0, "EQ"), x, s, out=s)
        return self.muls(s, 1.0, out=out)

    def sin(self, x, out) -> Tile:
        return self.sincos(x, out, cos=False)

    def cos(self, x, out) -> Tile:
        return self.sincos(x, out, cos=True)

    def tan(self, x, out) -> Tile:
        q, r, part = self._reduce_pio2(x)
        t = self.odd_poly(r, self.mul(r, r), _TAN)
        self.done(r)
        self.muls(q, 0.5, out=part)
        self.round(part, "CAST_FLOOR", out=part)
        self.muls(part, -2.0, out=part)
        self.add(q, part, out=q)  # 1 for odd q, else 0
        self.div(self.const(-1.0), t, out=part)
        self.sel(self.cmps(q, 1.0, "EQ"), part, t, out=t)
        self.done(q, part)
        self.sel(self.cmps(x, 0.0, "EQ"), x, t, out=out)  # tan(-0) = -0
        self.done(t)
        return out

    def erf(self, x, out) -> Tile:
        a = self.op("Abs", x)
        z = self.mul(a, a)
        p = self.poly(z, _ERF_SMALL)
        self.done(z)
        self.mul(p, a, out=p)
        self.add(a, p, out=p)
        g = self.sop("Mins", a, 3.93)
        self.adds(g, -2.5, out=g)
        gp = self.poly(g, _ERFC_LOG)
        self.done(g)
        self.op("Exp", gp, out=gp)
        self.rsub(1.0, gp, out=gp)
        self.sel(self.cmps(a, 1.0, "LT"), p, gp, out=p)
        self.done(a, gp)
        return self.copysign(p, x, out=out)

    def erfc(self, x, out) -> Tile:
        xc = self.sop("Mins", x, 10.5)
        t = self.muls(xc, 0.5)
        self.adds(t, 1.0, out=t)
        self.div(self.const(1.0), t, out=t)
        xh = self.muls(xc, 256.0)
        self.round(xh, "CAST_RINT", out=xh)
        self.muls(xh, 1.0 / 256, out=xh)  # 12 bits: xh^2 is exact
        e = self.sub(xc, xh)
        s = self.add(xc, xh)
        self.mul(e, s, out=e)  # x^2 - xh^2
        self.done(s, xc)
        h = self.adds(t, -0.5)
        hp = self.poly(h, _ERFC_H)
        self.done(h)
        self.sub(hp, e, out=e)
        self.done(hp)
        self.op("Exp", e, out=e)
        self.mul(xh, xh, out=xh)
        self.muls(xh, -1.0, out=xh)
        self.op("Exp", xh, out=xh)
        self.mul(t, e, out=t)
        self.mul(t, xh, out=t)
        self.done(e, xh)
        near = self.erf(x, self.new())
        self.rsub(1.0, near, out=near)
        self.sel(self.cmps(x, 0.5, "LT"), near, t, out=out)
        self.done(t, near)
        return out

    # ------------------------------------------------------------------------------ pow, cbrt
    def cbrt(self, x, out) -> Tile:
        a = self.op("Abs", x)
        r = self.op("Ln", a)
        self.muls(r, 1.0 / 3, out=r)
        self.op("Exp", r, out=r)
        q = self.mul(r, r)
        self.div(a, q, out=q)
        self.muls(r, 2.0, out=r)
        self.add(r, q, out=r)
        self.muls(r, 1.0 / 3, out=r)  # one Newton step
        self.done(q)
        self.sel(self.cmps(a, 0.0, "EQ"), a, r, out=r)
        self.sel(self.cmps(a, F32_MAX, "GT"), a, r, out=r)
        self.done(a)
        return self.copysign(r, x, out=out)

    def pow(self, x, y, out) -> Tile:
        a = self.op("Abs", x)
        one = self.mask_or(self.cmps(y, 0.0, "EQ"), self.cmps(x, 1.0, "EQ"))
        ay = self.op("Abs", y)
        one = self.mask_or(one, self.mask_and(self.cmps(a, 1.0, "EQ"), self.cmps(ay, F32_MAX, "GT")))
        self.done(ay)
        tr = self.round(y, "CAST_TRUNC")
        isint, isint2 = self.cmp(tr, y, "EQ"), self.cmp(tr, y, "EQ")
        self.muls(y, 0.5, out=tr)
        self.round(tr, "CAST_TRUNC", out=tr)
        self.muls(tr, 2.0, out=tr)
        odd = self.mask_and(isint, self.cmp(tr, y, "NE"))
        self.done(tr)
        base = self.sel(self.mask_or(isint2, self.cmps(x, -F32_MAX, "LT")), a, x)  # else Ln(x < 0) is NaN
        self.done(a)
        r = self.op("Ln", base, out=base)
        self.mul(r, y, out=r)
        self.op("Exp", r, out=r)
        neg = self.muls(r, -1.0)
        self.sel(self.mask_and(odd, self.signbit(x)), neg, r, out=r)
        self.done(neg)
        self.sel_c(one, 1.0, r, out=out)
        self.done(r)
        return out


# ------------------------------------------------------------------------------ integer bits
_UNSIGNED = {"i16": "ui16", "i32": "ui32"}
_FLOAT_VIEW = {"i16": "f16", "i32": "f32"}  # Select moves half/float lanes only: the same bits


def wrap(value: int, width: int) -> int:
    """`value` as a signed `width`-bit integer (two's complement)."""
    value &= (1 << width) - 1
    return value - (1 << width) if value >> (width - 1) else value


class Bits:
    """Exact bit operations on int8/int16/int32 tiles of one shape (`elem`), each into `out`.

    The 910B vector unit has And, Or and Not for 16-bit lanes only: bitwise ops on any width run on
    uint16 views of the whole tile, and xor is (a | b) - (a & b), a subtraction that never borrows.
    ShiftLeft and ShiftRight shift 16- and 32-bit lanes by one scalar count, logically for unsigned
    and arithmetically for signed lanes (a signed ShiftLeft keeps the sign bit, so `<<` shifts an
    unsigned view); int8 lanes shift as pairs in uint16 lanes, with a byte mask. A block of counts
    shifts by 1, 2, 4, ... under a Select on each bit of the count (mod the width, as the sim).
    umulhi multiplies 16-bit pieces in int32 lanes, whose Mul and Add keep the low 32 bits.
    """

    def __init__(self, ctx, shape: tuple, elem: str):
        self.ctx, self.shape, self.elem = ctx, shape, elem
        self.width = 8 * SIZE[elem]

    def new(self, elem: str | None = None) -> Tile:
        return self.ctx.temp(elem or self.elem, self.shape)

    def done(self, *tiles) -> None:
        for t in tiles:
            self.ctx.release(t)

    def view(self, t: Tile, elem: str) -> ir.Value:
        if elem == t.elem:
            return t.value
        return A.op("reinterpret", [t.value], A.local_type(ir.Type.parse(elem)))

    def _n(self, t: Tile, elem: str) -> ir.Value:
        return self.ctx.c64(t.bytes // SIZE[elem])

    def lanes16(self, api: str, out: Tile, *srcs) -> Tile:
        """`api` (And, Or, Not; Sub on int16) over the whole tiles, as 16-bit lanes."""
        e = "i16" if api == "Sub" else "ui16"
        A.op("vec", [self.view(t, e) for t in (out, *srcs)] + [self._n(out, e)], api=api)
        return out

    def fill(self, s: Splat) -> Tile:
        """A tile of the splat's value (int8: its byte twice in each 16-bit lane)."""
        t = self.new()
        if self.elem != "i8":
            self.ctx.duplicate(t, s, t.padded)
            return t
        if s.scalar is None:
            b = int(s.const) & 0xFF
            pattern = self.ctx.cst("i16", wrap(b * 0x101, 16))
        else:
            b = arith.AndIOp(arith.ExtSIOp(self.ctx.i32, s.scalar).result, self.ctx.cst("i32", 0xFF)).result
            pattern = arith.TruncIOp(ir.IntegerType.get_signless(16),
                                     arith.MulIOp(b, self.ctx.cst("i32", 0x101)).result).result
        A.op("duplicate", [self.view(t, "i16"), pattern, self._n(t, "i16")])
        return t

    def fill16(self, pattern) -> Tile:
        """A tile whose every 16-bit lane holds `pattern` (an int, or an i32 scalar value)."""
        t = self.new()
        v = (self.ctx.cst("i16", wrap(pattern, 16)) if isinstance(pattern, int)
             else arith.TruncIOp(ir.IntegerType.get_signless(16), pattern).result)
        A.op("duplicate", [self.view(t, "i16"), v, self._n(t, "i16")])
        return t

    # ----- and, or, xor, not
    def logic(self, kind: str, out: Tile, a: Tile, b: Tile) -> Tile:
        if kind == "xor":
            both = self.lanes16("And", self.new(), a, b)
            either = self.lanes16("Or", self.new(), a, b)
            self.lanes16("Sub", out, either, both)  # the and's bits are a subset of the or's: no borrow
            self.done(both, either)
            return out
        return self.lanes16("And" if kind == "and" else "Or", out, a, b)

    def invert(self, out: Tile, a: Tile) -> Tile:
        return self.lanes16("Not", out, a)

    def choose(self, out: Tile, c: Tile, a: Tile, b: Tile) -> Tile:
        """The bits of `a` where `c`'s are set, of `b` elsewhere: (c & a) | (~c & b) (bit masks,
        which Select cannot move: it has no 1-bit lanes)."""
        off = self.invert(self.new(), c)
        self.logic("and", off, off, b)
        self.logic("and", out, c, a)
        self.logic("or", out, out, off)
        self.done(off)
        return out

    # ----- shifts
    def shift(self, kind: str, out: Tile, x: Tile, count) -> Tile:
        """x shifted by a scalar count in [0, width) (an int, or a scalar value already reduced)."""
        if self.width == 8:
            return self._shift8(kind, out, x, count)
        e = self.elem if kind == "shrsi" else _UNSIGNED[self.elem]
        c = count if isinstance(count, ir.Value) else self.ctx.cst(self.elem, count)
        A.op("vec_scalar", [self.view(out, e), self.view(x, e), c, self._n(out, e)],
             api="ShiftLeft" if kind == "shli" else "ShiftRight")
        return out

    def _shift16(self, api: str, signed: bool, out: Tile, x: Tile, count) -> Tile:
        e = "i16" if signed else "ui16"
        c = count if isinstance(count, ir.Value) else self.ctx.cst("i16", count)
        A.op("vec_scalar", [self.view(out, e), self.view(x, e), c, self._n(out, e)], api=api)
        return out

    def _byte_mask(self, kind: str, count):
        """The bits of each byte that a logical shift by `count` keeps, in both bytes of a lane."""
        if isinstance(count, int):
            keep = (0xFF << count) & 0xFF if kind == "shli" else 0xFF >> count
            return keep * 0x101
        ctx = self.ctx
        c32 = arith.ExtSIOp(ctx.i32, count).result
        ff = ctx.cst("i32", 0xFF)
        moved = arith.ShLIOp(ff, c32) if kind == "shli" else arith.ShRSIOp(ff, c32)
        keep = arith.AndIOp(moved.result, ff).result
        return arith.MulIOp(keep, ctx.cst("i32", 0x101)).result

    def _shift8(self, kind: str, out: Tile, x: Tile, count) -> Tile:
        """Two int8 lanes per uint16 lane: a logical shift masks the bits that cross between the
        bytes; an arithmetic one shifts each byte from the top of an int16 lane."""
        if kind != "shrsi":
            t = self._shift16("ShiftLeft" if kind == "shli" else "ShiftRight", False, self.new(), x, count)
            m = self.fill16(self._byte_mask(kind, count))
            self.lanes16("And", out, t, m)
            self.done(t, m)
            return out
        hi = self._shift16("ShiftRight", True, self.new(), x, count)  # the high byte, sign-filled
        m = self.fill16(0xFF00)
        self.lanes16("And", hi, hi, m)
        lo = self._shift16("ShiftLeft", False, self.new(), x, 8)  # the low byte on top
        self._shift16("ShiftRight", True, lo, lo, count)
        self._shift16("ShiftRight", False, lo, lo, 8)
        self.lanes16("Or", out, hi, lo)
        self.done(hi, m, lo)
        return out

    def shift_by(self, kind: str, out: Tile, x: Tile, counts: Tile) -> Tile:
        """x shifted lane by lane by `counts` mod the width: for each bit k of the count, Select the
        lane shifted by 2^k (Select moves the same bits through a float view)."""
        if self.width == 8:
            raise self.ctx.error("shifting int8 lanes by a block of counts is not supported on ascend: the "
                                 "910B vector unit shifts a whole tile by one count and selects 16- or "
                                 "32-bit lanes only (shift by a scalar, or widen the data to int16/int32)")
        ctx, f = self.ctx, _FLOAT_VIEW[self.elem]
        steps = self.width.bit_length() - 1
        cur = x
        for k in range(steps):
            bit = self.shift("shli", self.new(), counts, self.width - 1 - k)
            self.shift("shrui", bit, bit, self.width - 1)
            fb = ctx.temp("f32", self.shape)
            A.op("cast", [fb.value, bit.value, ctx.c64(x.count)], round="CAST_NONE")  # 0 or 1, exact
            m = ctx.temp("ui8", self.shape)
            A.op("compare_scalar", [m.value, fb.value, ctx.cst("f32", 0.5), ctx.c64(fb.padded)], mode="GT")
            moved = self.shift(kind, self.new(), cur, 1 << k)
            nxt = out if k == steps - 1 else self.new()
            A.op("select", [self.view(nxt, f), m.value, self.view(moved, f), self.view(cur, f), ctx.c64(x.count)],
                 mode="VSEL_TENSOR_TENSOR_MODE")
            self.done(bit, fb, m, moved, *([cur] if cur is not x else []))
            cur = nxt
        return out

    # ----- umulhi
    def _lo16(self, t: Tile, out: Tile | None = None) -> Tile:
        out = self.shift("shli", out or self.new(), t, 16)
        return self.shift("shrui", out, out, 16)

    def mul(self, a: Tile, b, out: Tile) -> Tile:
        if isinstance(b, Tile):
            vec(self.ctx, "Mul", out, a, b, count=out.padded)
        else:
            c = b if isinstance(b, ir.Value) else self.ctx.cst("i32", b)
            A.op("vec_scalar", [out.value, a.value, c, self.ctx.c64(out.padded)], api="Muls")
        return out

    def _add(self, a: Tile, b: Tile, out: Tile) -> Tile:
        vec(self.ctx, "Add", out, a, b, count=out.padded)
        return out

    def halves(self, b):
        """(low, high) 16-bit halves of an int32 tile, int or i32 scalar value, as non-negative int32s."""
        if isinstance(b, Tile):
            return self._lo16(b), self.shift("shrui", self.new(), b, 16)
        if isinstance(b, int):
            return b & 0xFFFF, (b >> 16) & 0xFFFF
        mask = self.ctx.cst("i32", 0xFFFF)
        hi = arith.AndIOp(arith.ShRSIOp(b, self.ctx.cst("i32", 16)).result, mask).result
        return arith.AndIOp(b, mask).result, hi

    def umulhi(self, out: Tile, a: Tile, b) -> Tile:
        """The high 32 bits of the unsigned 64-bit product (Hacker's Delight mulhu): every partial
        sum fits in 32 unsigned bits, so low-32-bit Add and Mul give it exactly."""
        if self.width != 32:
            raise self.ctx.error(f"umulhi of {self.elem} lanes is not supported on ascend (int32/uint32 is)")
        al, ah = self.halves(a)
        bl, bh = self.halves(b)
        t = self.mul(al, bl, self.new())
        self.shift("shrui", t, t, 16)  # (al bl) >> 16
        p = self.mul(al, bh, self.new())
        self._add(p, t, t)  # t = al bh + (al bl >> 16) < 2^32
        u = self._lo16(t, out=p)
        self.done(al)
        lo = self.mul(ah, bl, self.new())
        self._add(lo, u, u)  # u = ah bl + (t & 0xFFFF) < 2^32
        hi = self.mul(ah, bh, lo)
        self.shift("shrui", t, t, 16)
        self._add(hi, t, hi)
        self.shift("shrui", u, u, 16)
        self._add(hi, u, out)
        self.done(ah, t, u, hi, *(x for x in (bl, bh) if isinstance(x, Tile)))
        return out
