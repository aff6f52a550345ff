"""Vectorized fp32 math of the cpu lowering: exp, exp2, expm1, log, log2, log10, log1p, sin, cos, erf, tanh.

Each function is a branch-free polynomial on whole chunks (no libm call per lane), accurate to
about 2 ulp over the whole fp32 range, denormals, zeros, infinities and NaN included (tested
against numpy in tests/cpu/test_cpu_math.py and tests/conformance/test_libdevice.py). fp16/bf16
compute in fp32; fp64 keeps libm, except expm1/log1p: upstream lowers them to exp(x) - 1 and
log(1 + x), so they are Kahan's forms over libm's exp and log. The other math of `xl.math`
(asin, atan, cbrt, erfc, ...) calls libm per lane.
sin/cos reduce the argument with a three-part pi/2 (Cody-Waite, as numpy does) up to
|x| <= 117435.992; a chunk holding a larger, infinite or NaN lane calls libm for that chunk.
Coefficients: Cephes (exp, log, sin, cos), and fits made for this file (erf, tanh, expm1).
"""

from __future__ import annotations

from .elementwise import special, with_elem
from .emit import V, elem_of


class F32:
    """fp32 arithmetic on a scalar or vector type `ty`, written through the emitter `e`."""

    def __init__(self, e, ty: str):
        self.e, self.ty, self.it = e, ty, with_elem(ty, "i32")
        self.bt = with_elem(ty, "i1")

    def c(self, v: float) -> V:
        return self.e.const(v, self.ty)

    def ci(self, v: int) -> V:
        return self.e.const(v, self.it)

    def _bin(self, op, a, b, ty=None):
        ty = ty or a.type
        return self.e.op(f"{op} {a}, {b} : {ty}", ty)

    def add(self, a, b):
        return self._bin("arith.addf", a, b)

    def sub(self, a, b):
        return self._bin("arith.subf", a, b)

    def mul(self, a, b):
        return self._bin("arith.mulf", a, b)

    def div(self, a, b):
        return self._bin("arith.divf", a, b)

    def fma(self, a, b, c):
        return self.e.op(f"math.fma {a}, {b}, {c} : {self.ty}", self.ty)

    def poly(self, x, coefs):
        """Horner: coefs[0] * x^(n-1) + ... + coefs[-1]."""
        p = self.c(coefs[0])
        for k in coefs[1:]:
            p = self.fma(p, x, self.c(k))
        return p

    def unary(self, op, x):
        return self.e.op(f"{op} {x} : {x.type}", x.type)

    def cmp(self, pred, a, b):
        return self.e.op(f"arith.cmpf {pred}, {a}, {b} : {a.type}", self.bt)

    def icmp(self, pred, a, b):
        return self.e.op(f"arith.cmpi {pred}, {a}, {b} : {a.type}", self.bt)

    def sel(self, m, a, b):
        sig = f"{m.type}, {a.type}" if m.type.startswith("vector<") else a.type
        return self.e.op(f"arith.select {m}, {a}, {b} : {sig}", a.type)

    def ints(self, x):
        return self.e.op(f"arith.bitcast {x} : {self.ty} to {self.it}", self.it)

    def floats(self, i):
        return self.e.op(f"arith.bitcast {i} : {self.it} to {self.ty}", self.ty)

    def to_float(self, i):
        return self.e.op(f"arith.sitofp {i} : {self.it} to {self.ty}", self.ty)

    def to_int(self, x):
        return self.e.op(f"arith.fptosi {x} : {self.ty} to {self.it}", self.it)

    def iop(self, op, a, b):
        return self._bin(op, a, b, self.it)

    def any(self, m):
        if not m.type.startswith("vector<"):
            return m
        return self.e.op(f"vector.reduction <or>, {m} : {m.type} into i1", "i1")


def f32_math(*names, f64=None):
    """Register an fp32 approximation `fn(f, name, x)`; fp16/bf16 widen to it, fp64 calls libm (or `f64`)."""

    def deco(fn):
        def lower(e, name, attrs, ops, rtype):
            ety = elem_of(rtype)
            if ety == "f32":
                return fn(F32(e, rtype), name, ops[0])
            if ety in ("f16", "bf16"):
                f32 = with_elem(rtype, "f32")
                wide = e.op(f"arith.extf {ops[0]} : {ops[0].type} to {f32}", f32)
                r = fn(F32(e, f32), name, wide)
                return e.op(f"arith.truncf {r} : {f32} to {rtype}", rtype)
            if f64 is not None and ety == "f64":
                return f64(F32(e, rtype), name, ops[0])
            return libm(e, name, attrs, ops[0], rtype)

        return special(*names)(lower)

    return deco


def libm(e, name, attrs, x, rtype) -> V:
    """The op as it is: LLVM calls libm once per lane."""
    return e.op(f'"{name}"({x}) {attrs} : ({rtype}) -> {rtype}', rtype)


# ----------------------------------------------------------------------------------------- exp
_LOG2E = 1.44269504088896341
_LN2 = 0.6931471805599453
_EXP_POLY = (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1,
             5.0000001201e-1)


def _exp_poly(f: F32, r):
    """e^r for |r| <= ln2/2 (Cephes expf)."""
    y = f.fma(f.poly(r, _EXP_POLY), f.mul(r, r), r)
    return f.add(y, f.c(1.0))


def _ldexp(f: F32, y, n):
    """y * 2^n for an integral float n in [-150, 128], in two steps so results may be denormal."""
    ni = f.to_int(n)
    n1 = f.iop("arith.shrsi", ni, f.ci(1))
    n2 = f.iop("arith.subi", ni, n1)
    for k in (n1, n2):
        scale = f.iop("arith.shli", f.iop("arith.addi", k, f.ci(127)), f.ci(23))
        y = f.mul(y, f.floats(scale))
    return y


def _exp_core(f: F32, x):
    """e^x for x in [-103.9, 88.8], without the special cases."""
    n = f.unary("math.floor", f.fma(x, f.c(_LOG2E), f.c(0.5)))
    r = f.fma(n, f.c(-0.693359375), x)
    r = f.fma(n, f.c(2.12194440e-4), r)
    return _ldexp(f, _exp_poly(f, r), n)


@f32_math("math.exp", "math.exp2")
def _exp(f: F32, name, x):
    if name == "math.exp":
        lo, hi = -103.97208, 88.72284
        y = _exp_core(f, _clamp(f, x, lo, hi))
    else:
        lo, hi = -150.0, 128.0
        xc = _clamp(f, x, lo, hi)
        n = f.unary("math.floor", f.add(xc, f.c(0.5)))
        y = _ldexp(f, _exp_poly(f, f.mul(f.sub(xc, n), f.c(_LN2))), n)
    y = f.sel(f.cmp("ogt", x, f.c(hi)), f.c(float("inf")), y)
    y = f.sel(f.cmp("olt", x, f.c(lo)), f.c(0.0), y)
    return f.sel(f.cmp("uno", x, x), x, y)  # fptosi of NaN is poison: never select it


def _clamp(f: F32, x, lo, hi):
    return f.e.op(f"arith.minimumf {f.e.op(f'arith.maximumf {x}, {f.c(lo)} : {f.ty}', f.ty)}, {f.c(hi)} "
                  f": {f.ty}", f.ty)


def _min(f: F32, x, hi):
    return f.e.op(f"arith.minimumf {x}, {f.c(hi)} : {f.ty}", f.ty)


def _copysign(f: F32, mag, sign):
    return f.e.op(f"math.copysign {mag}, {sign} : {f.ty}", f.ty)


# ----------------------------------------------------------------------------------------- log
_LOG_POLY = (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
             -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1)
_LOG2EA = 0.44269504088896340736  # log2(e) - 1
_MIN_NORMAL = 1.1754943508222875e-38


def _log(f: F32, name, x):
    """x = 2^e * m with m in [sqrt(1/2), sqrt(2)); log(m) = t - t^2/2 + t^3 P(t), t = m - 1 (Cephes)."""
    tiny = f.cmp("olt", x, f.c(_MIN_NORMAL))  # denormals: scale into the normal range first
    bits = f.ints(f.sel(tiny, f.mul(x, f.c(2.0**23)), x))
    e = f.iop("arith.subi", f.iop("arith.shrui", bits, f.ci(23)), f.ci(127))
    m = f.floats(f.iop("arith.ori", f.iop("arith.andi", bits, f.ci(0x7FFFFF)), f.ci(0x3F800000)))
    big = f.cmp("ogt", m, f.c(1.4142135623730951))
    m = f.sel(big, f.mul(m, f.c(0.5)), m)
    e = f.iop("arith.addi", e, f.sel(big, f.ci(1), f.ci(0)))
    fe = f.sub(f.to_float(e), f.sel(tiny, f.c(23.0), f.c(0.0)))
    t = f.sub(m, f.c(1.0))
    z = f.mul(t, t)
    y = f.mul(f.mul(t, z), f.poly(t, _LOG_POLY))
    if name == "math.log":
        y = f.fma(fe, f.c(-2.12194440e-4), y)
        y = f.fma(z, f.c(-0.5), y)
        r = f.fma(fe, f.c(0.693359375), f.add(t, y))
    else:
        y = f.fma(z, f.c(-0.5), y)
        r = f.fma(t, f.c(_LOG2EA), f.mul(y, f.c(_LOG2EA)))
        r = f.add(f.add(f.add(r, y), t), fe)
    r = f.sel(f.cmp("oeq", x, f.c(float("inf"))), x, r)
    r = f.sel(f.cmp("oeq", x, f.c(0.0)), f.c(float("-inf")), r)
    return f.sel(f.cmp("ult", x, f.c(0.0)), f.c(float("nan")), r)


f32_math("math.log", "math.log2")(_log)


@f32_math("math.log10")
def _log10(f: F32, name, x):
    return f.mul(_log(f, "math.log", x), f.c(0.4342944819032518))


# ----------------------------------------------------------------------------------- expm1, log1p
# expm1(r) = r + r^2 Q(r) on |r| <= ln2/2: a fit made for this file (relative error 2.8e-9)
_EXPM1_POLY = (0.00019849566013367928, 0.001393383960172051, 0.008333373589077701, 0.041666463395969536,
               0.16666666492224716, 0.5000000013582577)


def _expm1_f64(f: F32, name, x):
    """fp64: (u - 1) * x / log(u) with u = e^x from libm (Kahan; upstream's lowering is exp(x) - 1)."""
    u = f.unary("math.exp", x)
    um1 = f.sub(u, f.c(1.0))
    r = f.mul(um1, f.div(x, f.unary("math.log", u)))
    r = f.sel(f.cmp("oeq", u, f.c(1.0)), x, r)
    r = f.sel(f.cmp("oeq", um1, f.c(-1.0)), f.c(-1.0), r)
    return f.sel(f.cmp("oeq", u, f.c(float("inf"))), u, r)


def _log1p_f64(f: F32, name, x):
    """fp64: log(u) * x / (u - 1) with u = 1 + x and libm's log (upstream's lowering is log(1 + x))."""
    u = f.add(x, f.c(1.0))
    d = f.sub(u, f.c(1.0))
    r = f.mul(f.unary("math.log", u), f.div(x, d))
    r = f.sel(f.cmp("oeq", d, f.c(0.0)), x, r)
    return f.sel(f.cmp("oeq", u, f.c(float("inf"))), u, r)


@f32_math("math.expm1", f64=_expm1_f64)
def _expm1(f: F32, name, x):
    """x = n ln2 + r: expm1(x) = 2^n expm1(r) + (2^n - 1); e^x above 17.5 (the -1 is below half an ulp)."""
    xc = _clamp(f, x, -17.5, 17.5)
    n = f.unary("math.roundeven", f.mul(xc, f.c(_LOG2E)))
    r = f.fma(n, f.c(-0.693359375), xc)
    r = f.fma(n, f.c(2.12194440e-4), r)
    p = f.fma(f.mul(r, r), f.poly(r, _EXPM1_POLY), r)
    t = _ldexp(f, f.c(1.0), n)
    y = f.fma(t, p, f.sub(t, f.c(1.0)))
    big = f.sel(f.cmp("ogt", x, f.c(88.72284)), f.c(float("inf")), _exp_core(f, _min(f, x, 88.72284)))
    y = f.sel(f.cmp("ogt", x, f.c(17.5)), big, y)
    y = f.sel(f.cmp("olt", x, f.c(-17.5)), f.c(-1.0), y)
    return f.sel(f.cmp("une", x, x), x, f.sel(f.cmp("oeq", x, f.c(0.0)), x, y))  # NaN, and -0 stays -0


@f32_math("math.log1p", f64=_log1p_f64)
def _log1p(f: F32, name, x):
    """log(u) * x / (u - 1) with u = 1 + x (Kahan): u - 1 is exact, the quotient repairs u's rounding."""
    u = f.add(x, f.c(1.0))
    d = f.sub(u, f.c(1.0))
    r = f.mul(_log(f, "math.log", u), f.div(x, d))
    r = f.sel(f.cmp("oeq", d, f.c(0.0)), x, r)  # |x| below half an ulp of 1 (and -0)
    return f.sel(f.cmp("oeq", u, f.c(float("inf"))), u, r)


# ------------------------------------------------------------------------------------- sin, cos
_PIO2 = (1.570796012878418, 3.1391647326017846e-07, 5.390302953474238e-15)  # 21 + 24 + 24 bits
_TWO_OVER_PI = 0.6366197723675814
_CODY_WAITE_MAX = 117435.992  # above this, q * pi/2 needs more bits than _PIO2 has
_SIN_POLY = (-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1)
_COS_POLY = (2.443315711809948e-05, -1.388731625493765e-03, 4.166664568298827e-02)


@f32_math("math.sin", "math.cos")
def _sincos(f: F32, name, x):
    far = f.cmp("ugt", f.unary("math.absf", x), f.c(_CODY_WAITE_MAX))  # NaN and inf too
    return f.e.if_(f.any(far), lambda: [libm(f.e, name, "", x, f.ty)],
                   lambda: [_sincos_poly(f, name, x)], [f.ty])[0]


def _sincos_poly(f: F32, name, x):
    """x = q pi/2 + r, |r| <= pi/4: sin and cos of r by polynomials, then the quadrant of q."""
    q = f.unary("math.roundeven", f.mul(x, f.c(_TWO_OVER_PI)))
    r = x
    for part in _PIO2:  # exact for the first part; one rounding each after
        r = f.fma(q, f.c(-part), r)
    z = f.mul(r, r)
    s = f.fma(f.mul(f.poly(z, _SIN_POLY), z), r, r)
    c = f.fma(f.mul(f.poly(z, _COS_POLY), z), z, f.fma(z, f.c(-0.5), f.c(1.0)))
    k = f.to_int(q)
    if name == "math.cos":
        k = f.iop("arith.addi", k, f.ci(1))
    odd = f.icmp("ne", f.iop("arith.andi", k, f.ci(1)), f.ci(0))
    neg = f.icmp("ne", f.iop("arith.andi", k, f.ci(2)), f.ci(0))
    v = f.sel(odd, c, s)
    v = f.sel(neg, f.unary("arith.negf", v), v)
    if name == "math.sin":  # keep the sign of a zero
        v = f.sel(f.cmp("oeq", x, f.c(0.0)), x, v)
    return v


# ----------------------------------------------------------------------------------------- erf
# erf(x) = x + x * P(x^2) for |x| < 1; erf(x) = 1 - exp(G(|x| - 2.5)) for 1 <= |x| < 3.93 (and
# 1 above, to fp32 precision). Minimax fits in double, rounded to fp32: max error 1.1 and 1.8 ulp.
_ERF_SMALL = (-9.680136827228125e-06, 0.00011270544928265736, -0.00084847112884745, 0.005221074912697077,
              -0.02686544507741928, 0.11283782869577408, -0.37612637877464294, 0.12837916612625122)
_ERFC_LOG = (1.6280430372717092e-06, -1.3281594874570146e-05, 7.734679820714518e-05, -0.0004202368436381221,
             0.0021652088034898043, -0.010858431458473206, -0.9438936710357666, -5.352680683135986,
             -7.806815147399902)


@f32_math("math.erf")
def _erf(f: F32, name, x):
    small = f.fma(x, f.poly(f.mul(x, x), _ERF_SMALL), x)
    a = f.unary("math.absf", x)
    g = f.poly(f.sub(_min(f, a, 3.93), f.c(2.5)), _ERFC_LOG)
    big = _copysign(f, f.sub(f.c(1.0), _exp_core(f, g)), x)
    r = f.sel(f.cmp("olt", a, f.c(1.0)), small, big)
    return f.sel(f.cmp("uno", x, x), x, r)


# ----------------------------------------------------------------------------------------- tanh
# tanh(x) = x + x^3 P(x^2) for |x| < 0.625 (minimax, 0.75 ulp); 1 - 2 / (e^(2|x|) + 1) above
# (1.3 ulp), which is 1 in fp32 from |x| = 9.01 on.
_TANH_SMALL = (0.0022989402059465647, -0.008350007236003876, 0.02177099511027336, -0.053959548473358154,
               0.13333305716514587, -0.3333333432674408)


@f32_math("math.tanh")
def _tanh(f: F32, name, x):
    s = f.mul(x, x)
    small = f.fma(x, f.mul(f.poly(s, _TANH_SMALL), s), x)
    a = f.unary("math.absf", x)
    ex = _exp_core(f, f.mul(_min(f, a, 9.5), f.c(2.0)))
    big = _copysign(f, f.sub(f.c(1.0), f.div(f.c(2.0), f.add(ex, f.c(1.0)))), x)
    r = f.sel(f.cmp("olt", a, f.c(0.625)), small, big)
    r = f.sel(f.cmp("oeq", x, f.c(0.0)), x, r)  # tanh(-0) = -0
    return f.sel(f.cmp("uno", x, x), x, r)
