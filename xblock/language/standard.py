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





# ------------------------------------------------------------------------------------ sorting
# Bitonic networks built from split/join: a compare-and-swap at distance d views the sorted axis as
# [..., groups, 2, d], moves the pair axis last and splits it into the left and right elements of
# every pair. Ranks stay small (the leading dims plus three), which every target handles.


def constexpr_function(fn):
    """Marks a plain Python function of this module that kernels call on constexprs (run at compile time)."""
    fn.__xblock_constexpr__ = True
    return fn


@constexpr_function
def _log2(i):
    """floor(log2(i)) of a constexpr integer (0 for 0 and 1), as triton.language.standard's."""
    i = int(i)
    return i.bit_length() - 1 if i > 1 else 0


@constexpr_function
def _is_power_of_two(i):
    i = int(i)
    return i > 0 and (i & (i - 1)) == 0


def _pairs(x, d: xl.constexpr):
    """The elements of `x` (sorted axis last, power-of-two length) paired at distance `d`: two blocks
    of shape [..., n // (2d), d], the left and right member of each pair."""
    lead = list(x.shape[:-1])
    n: xl.constexpr = x.shape[len(x.shape) - 1]
    r: xl.constexpr = len(lead)
    h = xl.reshape(x, lead + [n // (2 * d), 2, d])
    return xl.split(xl.permute(h, list(range(r)) + [r, r + 2, r + 1]))


def _unpair(left, right, shape):
    """The inverse of `_pairs`: the pairs' members back in place, as a block of `shape`."""
    r: xl.constexpr = len(left.shape) - 2
    h = xl.join(left, right)
    return xl.reshape(xl.permute(h, list(range(r)) + [r, r + 2, r + 1]), shape)


def _swap_pairs(left, right, flip_left, flip_right):
    """Triton's compare-and-swap rule, member by member: a left member keeps the smaller of its pair
    (the larger where `flip` is set), a right member the other one; ties keep the element in place."""
    new_left = xl.where((left > right) != flip_left, right, left)
    new_right = xl.where((right > left) == flip_right, left, right)
    return new_left, new_right


def _indicator(n_dims: xl.constexpr, j: xl.constexpr):
    """Bit `j` of the position in a hypercube block of `n_dims` dims of 2: a broadcastable 0/1 block."""
    return xl.reshape(xl.arange(0, 2), [1] * (n_dims - j - 1) + [2] + [1] * j)


def _compare_and_swap(x, flip, i: xl.constexpr):
    """One compare-and-swap step on a block of 2**n elements: elements whose positions differ in bit
    `i` form a pair, ordered ascending, or descending where `flip` (a block broadcastable to x, or a
    constant) is set."""
    xl.static_assert(_is_power_of_two(x.numel), "compare-and-swap needs a power-of-two number of elements")
    flat = xl.reshape(x, [x.numel])
    f = xl.reshape(xl.broadcast_to(flip, x.shape), [x.numel]) if isinstance(flip, xl.tensor) else flip
    left, right = _pairs(flat, 1 << i)
    if isinstance(flip, xl.tensor):
        f_left, f_right = _pairs(f, 1 << i)
        new_left, new_right = _swap_pairs(left, right, f_left != 0, f_right != 0)
    else:
        new_left, new_right = _swap_pairs(left, right, flip != 0, flip != 0)
    return _unpair(new_left, new_right, x.shape)


def _bitonic_merge_hypercube(x, stage: xl.constexpr, order: xl.constexpr):
    """`stage` compare-and-swap rounds (bits stage-1 .. 0). `order` 0 sorts runs ascending, 1
    descending, 2 alternates by bit `stage` of the position."""
    if order == 2:
        flip = _indicator(_log2(x.numel), stage)
    else:
        flip = order
    for i in xl.static_range(stage):
        x = _compare_and_swap(x, flip, stage - 1 - i)
    return x


def _bitonic_merge(x, stage: xl.constexpr, order: xl.constexpr, n_dims: xl.constexpr):
    h = xl.reshape(x, [2] * _log2(x.numel))
    h = _bitonic_merge_hypercube(h, stage, order)
    return xl.reshape(h, x.shape)


def _merge_step(x, i: xl.constexpr, stage: xl.constexpr, last: xl.constexpr, descending: xl.constexpr):
    """Compare-and-swap at distance 2**i along the last axis, inside runs of 2**stage elements: the
    last stage in the requested order, earlier ones alternating (run bit `stage` set: descending)."""
    d: xl.constexpr = 1 << i
    left, right = _pairs(x, d)
    if stage == last:
        down = xl.full(left.shape, descending, xl.int1)
    else:
        groups: xl.constexpr = left.shape[len(left.shape) - 2]
        bit = (xl.arange(0, groups) >> (stage - i - 1)) & 1
        down = xl.broadcast_to(xl.reshape(bit != 0, [groups, 1]), left.shape)
    new_left, new_right = _swap_pairs(left, right, down, down)
    return _unpair(new_left, new_right, x.shape)


def _first(x, k: xl.constexpr):
    """The first `k` elements along the last axis (both powers of two), halving the axis each step."""
    n: xl.constexpr = x.shape[len(x.shape) - 1]
    for _ in xl.static_range(_log2(n) - _log2(k)):
        half: xl.constexpr = x.shape[len(x.shape) - 1] // 2
        x, _rest = _pairs(x, half)
        x = xl.reshape(x, list(x.shape[:-2]) + [half])
    return x


def sort_impl(x, k: xl.constexpr = None, dim: xl.constexpr = None, descending: xl.constexpr = 0):
    """Bitonic sort along the last dimension (the only one Triton 3.6 sorts along); with `k`, the
    first `k` elements of the sorted block (topk)."""
    last_dim: xl.constexpr = len(x.shape) - 1
    d: xl.constexpr = last_dim if dim is None else (dim + len(x.shape) if dim < 0 else dim)
    xl.static_assert(d == last_dim, "sort and topk work along the last dimension only (as in Triton 3.6)")
    n: xl.constexpr = x.shape[last_dim]
    xl.static_assert(_is_power_of_two(n), "sort and topk need a power-of-two length along the sorted dim")
    if k is not None:
        xl.static_assert(_is_power_of_two(k) and k <= n, "topk needs a power-of-two k no larger than the dim")
    if _sorts_natively(x, k):  # a target with a vector sort unit: one xb.sort
        x = _native_sort(x, k, descending)
    else:
        m: xl.constexpr = _log2(n)
        for stage in xl.static_range(1, m + 1):
            for j in xl.static_range(stage):
                x = _merge_step(x, stage - 1 - j, stage, m, descending)
        if k is not None:
            x = _first(x, k)
    return x


@xl.builtin
def _sorts_natively(x, k=None, _semantic=None):
    """(compile time) Whether the target sorts `x` along its last dimension with one `xb.sort`."""
    return _semantic.sorts_natively(x, k)


@xl.builtin
def _native_sort(x, k=None, descending=0, _semantic=None):
    return _semantic.native_sort(x, k, descending)


def sort(x, dim: xl.constexpr = None, descending: xl.constexpr = 0):
    """`x` sorted along its last dimension (ascending, or descending)."""
    return sort_impl(x, dim=dim, descending=descending)


def topk(x, k: xl.constexpr, dim: xl.constexpr = None):
    """The `k` largest elements along the last dimension, in descending order."""
    return sort_impl(x, k=k, dim=dim, descending=1)


def bitonic_merge(x, dim: xl.constexpr = None, descending: xl.constexpr = 0):
    """Compare-and-swap rounds at distances n/2, ..., 1 along the last dimension, all in one order:
    sorts a bitonic sequence."""
    last_dim: xl.constexpr = len(x.shape) - 1
    d: xl.constexpr = last_dim if dim is None else (dim + len(x.shape) if dim < 0 else dim)
    xl.static_assert(d == last_dim, "bitonic_merge works along the last dimension only (as in Triton 3.6)")
    m: xl.constexpr = _log2(x.shape[last_dim])
    for j in xl.static_range(m):
        x = _merge_step(x, m - 1 - j, m, m, descending)
    return x


def flip(x, dim: xl.constexpr = None):
    """`x` reversed along `dim` (the last by default; its length a power of two): reversing a
    position's bits one at a time, each a swap of the halves of one pair axis."""
    rank: xl.constexpr = len(x.shape)
    d: xl.constexpr = rank - 1 if dim is None else (dim + rank if dim < 0 else dim)
    xl.static_assert(0 <= d and d < rank, "flip dim out of range")
    n: xl.constexpr = x.shape[d]
    xl.static_assert(_is_power_of_two(n), "flip needs a power-of-two length along the flipped dim")
    outer: xl.constexpr = _prod(x.shape[:d])
    inner: xl.constexpr = x.numel // (outer * n)
    y = xl.reshape(x, [outer, n, inner])
    for i in xl.static_range(_log2(n)):
        step: xl.constexpr = 1 << i
        h = xl.reshape(y, [outer, n // (2 * step), 2, step * inner])
        a, b = xl.split(xl.permute(h, [0, 1, 3, 2]))
        y = xl.reshape(xl.permute(xl.join(b, a), [0, 1, 3, 2]), [outer, n, inner])
    return xl.reshape(y, x.shape)


@constexpr_function
def _prod(dims):
    out = 1
    for v in dims:
        out *= int(v)
    return out


def interleave(a, b):
    """The elements of `a` and `b` alternating along the last dimension (`join` then merge the two
    minor dims); two scalars give a block of 2."""
    c = xl.join(a, b)
    if len(c.shape) == 1:
        return c
    return xl.reshape(c, list(c.shape[:-2]) + [2 * c.shape[len(c.shape) - 2]])


__all__ = ["add", "sub", "mul", "reduce_or", "ravel", "softmax", "swizzle2d", "sort", "topk", "bitonic_merge",
           "flip", "interleave", "sort_impl"]
