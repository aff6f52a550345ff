"""`xl.math`: the math functions, also reachable as `xl.<name>` (as `triton.language.math`).

Beyond Triton 3.6's `tl.math`, this module holds the elementwise set of libdevice
(`tl.extra.cuda.libdevice`): inverse and hyperbolic trigonometry, `erfc`/`erfinv`, `exp10`,
`expm1`, `log10`, `log1p`, `pow`, `fmod`, `remainder`, the roundings, the classification
predicates, `copysign`, `hypot`, `cbrt`. Older Triton kernels call them as `tl.math.<name>`, newer
ones as `libdevice.<name>`; both resolve here. The arguments are named as in libdevice (`arg0`,
`arg1`). Integer blocks are an error, as in Triton (`pow`'s exponent excepted); fp16 and bf16 compute
in fp32 and round back (Triton's libdevice takes only fp32 and fp64). How each function is computed on
each target, and its measured accuracy, is in docs/LANGUAGE.md ("Math functions").
"""

from .core import (  # noqa: F401
    abs,
    builtin,
    cdiv,
    ceil,
    cos,
    div_rn,
    erf,
    exp,
    exp2,
    fdiv,
    floor,
    fma,
    log,
    log2,
    maximum,
    minimum,
    rsqrt,
    sigmoid,
    sin,
    sqrt,
    sqrt_rn,
    tanh,
    umulhi,
)


def _unary(name, doc):
    def impl(arg0, _semantic=None):
        return _semantic.math_fn(name, arg0)

    impl.__name__ = impl.__qualname__ = name
    impl.__doc__ = doc
    return builtin(impl)


def _binary(name, doc):
    def impl(arg0, arg1, _semantic=None):
        return _semantic.math_fn(name, arg0, arg1)

    impl.__name__ = impl.__qualname__ = name
    impl.__doc__ = doc
    return builtin(impl)


acos = _unary("acos", "Elementwise arc cosine.")
asin = _unary("asin", "Elementwise arc sine.")
atan = _unary("atan", "Elementwise arc tangent.")
acosh = _unary("acosh", "Elementwise inverse hyperbolic cosine.")
asinh = _unary("asinh", "Elementwise inverse hyperbolic sine.")
atanh = _unary("atanh", "Elementwise inverse hyperbolic tangent.")
cosh = _unary("cosh", "Elementwise hyperbolic cosine.")
sinh = _unary("sinh", "Elementwise hyperbolic sine.")
tan = _unary("tan", "Elementwise tangent.")
cbrt = _unary("cbrt", "Elementwise cube root.")
erfc = _unary("erfc", "Elementwise complementary error function, 1 - erf(x) without cancellation.")
erfinv = _unary("erfinv", "Elementwise inverse error function.")
exp10 = _unary("exp10", "Elementwise 10 ** x.")
expm1 = _unary("expm1", "Elementwise e ** x - 1 without cancellation near 0.")
log10 = _unary("log10", "Elementwise base-10 logarithm.")
log1p = _unary("log1p", "Elementwise log(1 + x) without cancellation near 0.")
trunc = _unary("trunc", "Elementwise rounding toward zero.")
round = _unary("round", "Elementwise rounding to the nearest integer, halfway cases away from zero (C round).")  # noqa: A001
rint = _unary("rint", "Elementwise rounding to the nearest integer, halfway cases to even.")
nearbyint = _unary("nearbyint", "Elementwise rounding to the nearest integer, halfway cases to even.")
isnan = _unary("isnan", "Elementwise x != x, as int1.")
isinf = _unary("isinf", "Elementwise |x| == inf, as int1.")
isfinite = _unary("isfinite", "Elementwise: x is neither infinite nor NaN, as int1.")
finitef = _unary("isfinite", "libdevice's name of isfinite for fp32.")
isfinited = _unary("isfinite", "libdevice's name of isfinite for fp64.")
signbit = _unary("signbit", "Elementwise sign bit of x (set for -0.0 and negative NaNs) as int32 0 or 1, "
                            "as libdevice returns it.")
fast_expf = _unary("fast_expf", "e ** x (xblock computes it as exp).")
fast_logf = _unary("fast_logf", "log(x) (xblock computes it as log).")
fast_log2f = _unary("fast_log2f", "log2(x) (xblock computes it as log2).")
fast_log10f = _unary("fast_log10f", "log10(x) (xblock computes it as log10).")
fast_exp10f = _unary("fast_exp10f", "10 ** x (xblock computes it as exp10).")
fast_sinf = _unary("fast_sinf", "sin(x) (xblock computes it as sin).")
fast_cosf = _unary("fast_cosf", "cos(x) (xblock computes it as cos).")
fast_tanf = _unary("fast_tanf", "tan(x) (xblock computes it as tan).")
rcp_rn = _unary("rcp_rn", "1 / x, correctly rounded.")
rsqrt_rn = _unary("rsqrt_rn", "1 / sqrt(x) (xblock computes it as rsqrt).")

atan2 = _binary("atan2", "Elementwise arc tangent of arg0 / arg1 in the quadrant of (arg1, arg0).")
pow = _binary("pow", "Elementwise arg0 ** arg1 (C pow; an integer exponent is converted to the base's type).")  # noqa: A001
fast_powf = _binary("pow", "arg0 ** arg1 (xblock computes it as pow).")
copysign = _binary("copysign", "Elementwise |arg0| with the sign bit of arg1.")
fmod = _binary("fmod", "Elementwise C fmod: arg0 - n * arg1 with n = trunc(arg0 / arg1), exact.")
remainder = _binary("remainder", "Elementwise IEEE remainder: arg0 - n * arg1 with n = rint(arg0 / arg1), exact.")
hypot = _binary("hypot", "Elementwise sqrt(arg0 ** 2 + arg1 ** 2) without overflow or underflow.")
fast_dividef = _binary("fast_dividef", "arg0 / arg1 (xblock computes it as /).")
