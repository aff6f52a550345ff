"""libdevice-style math (`tl.extra.cuda.libdevice`, `tl.extra.libdevice`) available on every target.

The functions are those of `xl.math` (which documents dtypes and argument names); this module only
gathers them under libdevice's names.
"""

from .. import core
from ..core import builtin
from ..math import (  # noqa: F401
    acos,
    acosh,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    cbrt,
    copysign,
    cosh,
    erfc,
    erfinv,
    exp10,
    expm1,
    fast_cosf,
    fast_dividef,
    fast_exp10f,
    fast_expf,
    fast_log2f,
    fast_log10f,
    fast_logf,
    fast_powf,
    fast_sinf,
    fast_tanf,
    finitef,
    fmod,
    hypot,
    isfinite,
    isfinited,
    isinf,
    isnan,
    log1p,
    log10,
    nearbyint,
    pow,
    rcp_rn,
    remainder,
    rint,
    round,
    rsqrt_rn,
    signbit,
    sinh,
    tan,
    trunc,
)


def _arg_names(fn, nargs):
    """A function of the language under libdevice's argument names (arg0, arg1, ...)."""
    if nargs == 1:
        def impl(arg0, _semantic=None):
            return fn(arg0, _semantic=_semantic)
    elif nargs == 2:
        def impl(arg0, arg1, _semantic=None):
            return fn(arg0, arg1, _semantic=_semantic)
    else:
        def impl(arg0, arg1, arg2, _semantic=None):
            return fn(arg0, arg1, arg2, _semantic=_semantic)
    impl.__name__ = impl.__qualname__ = fn.__name__
    impl.__doc__ = fn.__doc__
    return builtin(impl)


abs = _arg_names(core.abs, 1)  # noqa: A001
ceil, cos, erf, exp, exp2, floor, log, log2, rsqrt, sin, sqrt, sqrt_rn, tanh = (
    _arg_names(getattr(core, n), 1)
    for n in ("ceil", "cos", "erf", "exp", "exp2", "floor", "log", "log2", "rsqrt", "sin", "sqrt", "sqrt_rn", "tanh"))
div_rn = _arg_names(core.div_rn, 2)
fma = _arg_names(core.fma, 3)



# ------------------------------------------------------------------ rounding to an integer type
# libdevice's float -> integer conversions with a rounding mode: the float rounding (rint: to nearest,
# ties to even; round: ties away from zero; trunc, floor, ceil) then an exact conversion, so every
# target computes them with ops it has. A result outside the integer type (or NaN) is unspecified.
_ROUNDINGS = {"rn": "rint", "rz": "trunc", "rd": "floor", "ru": "ceil"}
_INT_TYPES = {"int": core.int32, "uint": core.uint32, "ll": core.int64, "ull": core.uint64}


def _to_int(name, rounding, out):
    def impl(arg0, _semantic=None):
        return _semantic.cast(_semantic.math_fn(rounding, _semantic._float(arg0, name)), out)

    impl.__name__ = impl.__qualname__ = name
    impl.__doc__ = f"arg0 rounded with {rounding}, as {out!r} (libdevice's {name})."
    return builtin(impl)


llrint = _to_int("llrint", "rint", core.int64)
llround = _to_int("llround", "round", core.int64)
for _src in ("float", "double"):
    for _kind, _out in _INT_TYPES.items():
        for _mode, _rounding in _ROUNDINGS.items():
            _name = f"{_src}2{_kind}_{_mode}"
            globals()[_name] = _to_int(_name, _rounding, _out)
del _src, _kind, _out, _mode, _rounding, _name

libdevice = None  # filled below so `extra.cuda.libdevice.X` resolves


def _self():
    import sys

    return sys.modules[__name__]


libdevice = _self()
