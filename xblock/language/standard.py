"""Helpers of `triton.language.standard` and the operator functions of `triton.language.core`
(`tl.add`, `tl.swizzle2d`, `tl.softmax`, ...), written in the block language.

Like `random.py`, these are plain functions the frontend specializes and inlines as helpers, so
every target runs them with the ops it already has.
"""

from . import core as xl


def add(x, y, sanitize_overflow: xl.constexpr = True):
    """`x + y` (Triton checks integer overflow only in debug builds; xblock's sim checks nothing)."""
    return x + y


def sub(x, y, sanitize_overflow: xl.constexpr = True):
    """`x - y`."""
    return x - y


def mul(x, y, sanitize_overflow: xl.constexpr = True):
    """`x * y`."""
    return x * y


def _or(a, b):
    return a | b


def reduce_or(input, axis, keep_dims: xl.constexpr = False):
    """Bitwise or of the elements of an integer block along `axis`."""
    xl.static_assert(input.dtype.is_int(), "reduce_or takes integer blocks")
    return xl.reduce(input, axis, _or, keep_dims=keep_dims)


def ravel(x, can_reorder: xl.constexpr = False):
    """`x` as a 1-D block, in row-major order."""
    return xl.reshape(x, [x.numel], can_reorder=can_reorder)


def softmax(x, dim: xl.constexpr = None, keep_dims: xl.constexpr = False, ieee_rounding: xl.constexpr = False):
    """exp(x - max(x)) / sum(...) along `dim` (0 by default)."""
    axis: xl.constexpr = 0 if dim is None else dim
    num = xl.exp(x - xl.max(x, axis, keep_dims=keep_dims))
    den = xl.sum(num, axis, keep_dims=keep_dims)
    if ieee_rounding:
        return xl.div_rn(num, den)
    return num / den


def swizzle2d(i, j, size_i, size_j, size_g):
    """Row-major (i, j) of a `size_i` x `size_j` grid to the order that walks groups of `size_g`
    rows column by column (tiles of a matmul visited for L2 reuse). The last group may be shorter."""
    linear = i * size_j + j
    group_size = size_g * size_j
    first_row = (linear // group_size) * size_g
    rows_here = xl.minimum(size_i - first_row, size_g)
    within = linear % group_size
    return first_row + within % rows_here, within // rows_here


__all__ = ["add", "sub", "mul", "reduce_or", "ravel", "softmax", "swizzle2d"]
