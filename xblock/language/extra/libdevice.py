"""libdevice-style math (`tanh`, `erf`, `pow`, ...) available on every target."""

from ..core import _unary_math, builtin, ceil, cos, erf, exp, exp2, floor, log, log2, rsqrt, sin, sqrt, tanh  # noqa: F401

libdevice = None  # filled below so `extra.cuda.libdevice.X` resolves


@builtin
def pow(x, y, _semantic=None):
    return _semantic.math_binary("pow", x, y)


@builtin
def fast_expf(x, _semantic=None):
    return _semantic.math_unary("exp", x)


@builtin
def fast_dividef(x, y, _semantic=None):
    return _semantic.binary("truediv", x, y)


def _self():
    import sys

    return sys.modules[__name__]


libdevice = _self()
