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

libdevice = None  # filled below so `extra.cuda.libdevice.X` resolves


def _self():
    import sys

    return sys.modules[__name__]


libdevice = _self()
