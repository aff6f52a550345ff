"""Semantics of the math functions of `xl.math` / libdevice (a mixin of `Semantic`).

Each function becomes upstream `math`/`arith` ops on tensors. Most have an upstream op
(`math.asin`, `math.erfc`, `math.roundeven`, `arith.remf`, ...) that every target lowers its own
way. The few without one are composed here from ops every target has, so all targets compute them
the same way: `isnan`/`isinf`/`isfinite` are comparisons, `signbit` reads the sign through
`math.copysign`, `exp10` is a Cody-Waite reduction to `exp` and `exp2`, `hypot` scales by the
larger magnitude, `remainder` is exact from `fmod`, and `erfinv` is a polynomial fit in
w = -log(1 - x^2) (plus two Newton steps on erf/erfc in fp64). Arguments are floats (an integer block is
an error, as in Triton; `pow`'s exponent may be an integer); fp16/bf16 arguments compute in fp32 and the
result is rounded back to the argument's type.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, math

from .. import language as xl
from ..language.core import _unwrap, tensor
from .types import SemanticError, _is_py

_P = arith.CmpFPredicate

# functions with an upstream math op: float -> float
_MATH1 = {"acos": math.acos, "asin": math.asin, "atan": math.atan, "acosh": math.acosh, "asinh": math.asinh,
          "atanh": math.atanh, "cosh": math.cosh, "sinh": math.sinh, "tan": math.tan, "cbrt": math.cbrt,
          "erfc": math.erfc, "expm1": math.expm1, "log10": math.log10, "log1p": math.log1p,
          "trunc": math.trunc, "round": math.round, "rint": math.roundeven, "nearbyint": math.roundeven}
_MATH2 = {"atan2": math.atan2, "pow": math.powf, "copysign": math.copysign, "fmod": arith.remf}
# libdevice names for functions xblock computes one way whatever the speed hint
_ALIASES = {"fast_expf": "exp", "fast_logf": "log", "fast_log2f": "log2", "fast_log10f": "log10",
            "fast_exp10f": "exp10", "fast_sinf": "sin", "fast_cosf": "cos", "fast_tanf": "tan",
            "rsqrt_rn": "rsqrt"}
_MAX = {"fp32": 3.4028234663852886e38, "fp64": 1.7976931348623157e308}

# exp10: 10^x = 2^n * e^(r ln10), n = rint(x log2(10)), r = x - n log10(2) with log10(2) in two parts
# whose first has few enough bits that n * hi is exact (|n| < 2^8 in fp32, 2^11 in fp64)
_EXP10 = {"fp32": (0.301025390625, 4.605039066518657e-06, -46.0, 39.5),
          "fp64": (0.30102999566361177, 3.694239077158931e-13, -330.0, 310.0)}
_LOG2_10, _LN10 = 3.321928094887362, 2.302585092994046

# erfinv(x) = x * P(w - 2.5) for w = -log((1 - x)(1 + x)) < 5, x * Q(sqrt(w) - 3) above: least-squares
# fits of erfinv(x)/x in relative error, made for xblock with mpmath, highest degree first. P: 6.5e-9 on
# w in [0, 5]; Q: 1.1e-8 on sqrt(w) in [2.24, 4.1] (fp32 reaches 4.08), 1e-6 on [2.24, 6.2] for fp64,
# whose two Newton steps then reach full precision
_ERFINV_P = (-8.941414091614953e-09, 2.3264800012303636e-08, 4.682669736601998e-07, -3.4630930682928576e-06,
             -4.973069669778278e-06, 0.0002183458867696395, -0.0012527252269104161, -0.004177388473879289,
             0.24664027848078246, 1.5014093595818256)
_ERFINV_Q = {"fp32": (0.00011497257572493158, -0.00031008206881399936, -5.457244103734918e-05,
                      0.001485671379216048, -0.0035991821004182664, 0.0056867247734528475, -0.007636804071932766,
                      0.009445329584095026, 1.001674933190056, 2.832976799898825),
             "fp64": (-2.4390060352801877e-06, 4.227987909825783e-05, -0.000310514241549603,
                      0.0012708485262073062, -0.0032421923409342306, 0.0056442404365603, -0.007758786318088215,
                      0.009476411003335483, 1.0016868559233087, 2.832975370546383)}


class MathOps:
    """Builders of the `xl.math` functions; `self` is the `Semantic` instance."""

    def math_fn(self, name: str, *args) -> tensor:
        fn, name = name, _ALIASES.get(name, name)
        if name in self._UNARY:
            return self.math_unary(name, *args, fn=fn)
        if name == "fast_dividef":
            return self.fdiv(*args)
        if name in ("div_rn", "rcp_rn"):  # IEEE division where `/` may be approximate: marked `xb.precise`
            a, b = (self._float_arg(args[0], fn), self._float_arg(args[1], fn)) if name == "div_rn" else \
                (1.0, self._float(args[0], fn))
            return self._precise(self.binary("truediv", a, b))
        if name == "sqrt_rn":
            x, dt = self._wide(args[0], fn)
            return self.cast(self._precise(self._m(math.sqrt, x)), dt)
        if len(args) == 1:
            x, dt = self._wide(args[0], fn)
            if name in _MATH1:
                return self.cast(self._m(_MATH1[name], x), dt)
            if name in ("isnan", "isinf", "isfinite"):
                return self._classify(name, x)
            if name == "signbit":
                neg = self._cmp(_P.OLT, self._m(math.copysign, self._c(1.0, x), x), self._c(0.0, x))
                return self.cast(neg, xl.int32)
            builder = {"exp10": self._exp10, "erfinv": self._erfinv}.get(name)
            if builder is not None:
                return self.cast(builder(x), dt)
        elif len(args) == 2:
            a = self._float_arg(args[0], fn)
            b = args[1] if name == "pow" else self._float_arg(args[1], fn)  # pow(x, n): libdevice's powi
            a, b = self._operands(a, b)
            a, b = self._float(a, fn), self._float(b, fn)
            dt = a.dtype
            if dt in (xl.float16, xl.bfloat16):
                a, b = self.cast(a, xl.float32), self.cast(b, xl.float32)
            if name in _MATH2:
                return self.cast(self._m(_MATH2[name], a, b), dt)
            builder = {"hypot": self._hypot, "remainder": self._remainder}.get(name)
            if builder is not None:
                return self.cast(builder(a, b), dt)
        raise SemanticError(f"math function {name} does not take {len(args)} arguments")

    # ----------------------------------------------------------------------------- helpers
    def _float_arg(self, v, fn: str):
        """A float block of math function `fn` as it is, a Python number left weak (it takes the other
        operand's type), an integer block an error (as in Triton)."""
        v = _unwrap(v)
        return v if _is_py(v) else self._float(v, fn)

    def _wide(self, x, fn: str):
        """(x as fp32 or fp64, the dtype to round the result back to)."""
        x = self._float(x, fn)
        if x.dtype in (xl.float16, xl.bfloat16):
            return self.cast(x, xl.float32), x.dtype
        return x, x.dtype

    def _precise(self, r: tensor) -> tensor:
        """Mark the op that computes r as correctly rounded (a target whose plain op is not says so)."""
        r.handle.owner.attributes["xb.precise"] = ir.UnitAttr.get()
        return r

    def _m(self, fn, *xs) -> tensor:
        return tensor(fn(*(v.handle for v in xs)), xs[0].dtype, xs[0].shape)

    def _c(self, v: float, like: tensor) -> tensor:
        return self.constant(v, like.dtype, like.shape)

    def _cmp(self, pred, a, b) -> tensor:
        return tensor(arith.cmpf(pred, a.handle, b.handle), xl.int1, a.shape)

    def _sel(self, c, a, b) -> tensor:
        return tensor(arith.select(c.handle, a.handle, b.handle), a.dtype, a.shape)

    def _add(self, a, b):
        return self._m(arith.addf, a, b)

    def _sub(self, a, b):
        return self._m(arith.subf, a, b)

    def _mul(self, a, b):
        return self._m(arith.mulf, a, b)

    def _poly(self, t, coefs):
        """Horner with fma: coefs[0] * t^(n-1) + ... + coefs[-1]."""
        p = self._c(coefs[0], t)
        for k in coefs[1:]:
            p = self._m(math.fma, p, t, self._c(k, t))
        return p

    # ----------------------------------------------------------------------------- functions
    def _classify(self, name, x) -> tensor:
        if name == "isnan":
            return self._cmp(_P.UNE, x, x)
        big = self._c(_MAX[x.dtype.name], x)
        ax = self._m(math.absf, x)
        return self._cmp(_P.OGT if name == "isinf" else _P.OLE, ax, big)

    def _exp10(self, x) -> tensor:
        hi, lo, xmin, xmax = _EXP10[x.dtype.name]
        xc = self._m(arith.minimumf, self._m(arith.maximumf, x, self._c(xmin, x)), self._c(xmax, x))
        n = self._m(math.roundeven, self._mul(xc, self._c(_LOG2_10, x)))
        r = self._sub(self._sub(xc, self._mul(n, self._c(hi, x))), self._mul(n, self._c(lo, x)))
        p = self._m(math.exp, self._mul(r, self._c(_LN10, x)))
        n1 = self._m(math.floor, self._mul(n, self._c(0.5, x)))
        n2 = self._sub(n, n1)
        return self._mul(self._mul(p, self._m(math.exp2, n1)), self._m(math.exp2, n2))

    def _hypot(self, x, y) -> tensor:
        a, b = self._m(math.absf, x), self._m(math.absf, y)
        hi, lo = self._m(arith.maximumf, a, b), self._m(arith.minimumf, a, b)
        q = self._m(arith.divf, lo, hi)
        h = self._mul(hi, self._m(math.sqrt, self._m(math.fma, q, q, self._c(1.0, q))))
        h = self._sel(self._cmp(_P.OEQ, hi, self._c(0.0, hi)), hi, h)
        big = self._c(_MAX[x.dtype.name], x)
        inf = self._m(arith.ori, self._cmp(_P.OGT, a, big), self._cmp(_P.OGT, b, big))
        return self._sel(inf, self._c(float("inf"), h), h)

    def _remainder(self, x, y) -> tensor:
        """x - n y with n = rint(x / y), exact: from r = fmod(x, 2|y|) (|r| < 2|y|, sign of x), subtract
        |y| once or twice (Sterbenz: exact), ties going to the even quotient."""
        a = self._m(math.absf, y)
        r = self._m(arith.remf, x, self._add(a, a))
        t = self._m(math.absf, r)
        u = self._sub(t, a)
        v = self._sub(u, a)
        m = self._sel(self._cmp(_P.OLT, u, self._sub(a, u)), u, v)
        m = self._sel(self._cmp(_P.OLE, t, self._sub(a, t)), t, m)
        return self._mul(self._m(math.copysign, self._c(1.0, r), r), m)

    def _erfinv(self, x) -> tensor:
        ax = self._m(math.absf, x)
        one = self._c(1.0, x)
        w = self._m(arith.negf, self._m(math.log, self._mul(self._sub(one, ax), self._add(one, ax))))
        small = self._poly(self._sub(w, self._c(2.5, w)), _ERFINV_P)
        large = self._poly(self._sub(self._m(math.sqrt, w), self._c(3.0, w)), _ERFINV_Q[x.dtype.name])
        z = self._mul(self._sel(self._cmp(_P.OLT, w, self._c(5.0, w)), small, large), ax)
        if x.dtype == xl.float64:
            z = self._erfinv_newton(ax, z)
            z = self._erfinv_newton(ax, z)
        z = self._sel(self._cmp(_P.OEQ, ax, one), self._c(float("inf"), z), z)
        z = self._sel(self._cmp(_P.UGT, ax, one), self._c(float("nan"), z), z)
        return self._m(math.copysign, z, x)

    def _erfinv_newton(self, a, z) -> tensor:
        """One Newton step on erf(z) = a; the residual (1 - a) - erfc(z) above 0.5 keeps the tail exact."""
        near = self._sub(self._m(math.erf, z), a)
        far = self._sub(self._sub(self._c(1.0, a), a), self._m(math.erfc, z))
        f = self._sel(self._cmp(_P.OGT, a, self._c(0.5, a)), far, near)
        slope = self._mul(self._c(1.1283791670955126, z), self._m(math.exp, self._m(arith.negf, self._mul(z, z))))
        step = self._sub(z, self._m(arith.divf, f, slope))
        ok = self._cmp(_P.OLT, a, self._c(1.0, a))
        return self._sel(ok, step, z)
