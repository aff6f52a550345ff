"""Unsigned integers at and above the sign bit on ascend, against numpy: `<`, `<=`, `>`, `>=`, `//` and `%` of
uint8/16/32/64 blocks and scalars, and `tl.topk` of uint64 keys (vllm-omni's sampler packs a logit's ordered bits
over a token id into one). The C++ types are signed: an unsigned compare or division reads its operands as
unsigned (emit/cpp.py `as_unsigned`); uint32 and 64-bit blocks divide lane by lane (exact), not through floats."""

from __future__ import annotations

import numpy as np
import pytest

import xblock

triton = pytest.importorskip("triton")
tl = triton.language

pytestmark = pytest.mark.filterwarnings("ignore::xblock.errors.XBlockWarning")  # the scalar lane loops


@triton.jit
def unsigned_ops(X, Y, O, N: tl.constexpr):
    r = tl.arange(0, N)
    x = tl.load(X + r)
    y = tl.load(Y + r)
    tl.store(O + 0 * N + r, (x < y).to(x.dtype))
    tl.store(O + 1 * N + r, (x <= y).to(x.dtype))
    tl.store(O + 2 * N + r, (x > y).to(x.dtype))
    tl.store(O + 3 * N + r, (x >= y).to(x.dtype))
    tl.store(O + 4 * N + r, x // y)
    tl.store(O + 5 * N + r, x % y)
    xs = tl.load(X + 1)
    ys = tl.load(Y + 1)
    if xs > ys:  # a scalar unsigned compare
        tl.store(O + 6 * N + r, x // ys)
    else:
        tl.store(O + 6 * N + r, x % ys)
    tl.store(O + 7 * N, xs // ys)
    tl.store(O + 7 * N + 1, xs % ys)
    tl.store(O + 7 * N + 2, (xs < ys).to(x.dtype))


def _want(x, y, n):
    want = np.zeros(8 * n, x.dtype)
    for k, v in enumerate((x < y, x <= y, x > y, x >= y, x // y, x % y,
                           x // y[1] if x[1] > y[1] else x % y[1])):
        want[k * n:(k + 1) * n] = v
    want[7 * n:7 * n + 3] = x[1] // y[1], x[1] % y[1], x[1] < y[1]
    return want


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64])
def test_unsigned_compares_and_divisions_above_the_sign_bit(dtype):
    top = 1 << (np.dtype(dtype).itemsize * 8 - 1)
    x = np.array([top + 5, top + 100, 7, top + 2, 3, 9, 1, 4], dtype)
    y = np.array([6, 3, top + 1, 5, 2, top + 7, 1, 3], dtype)
    for target in ("ascend", "sim"):
        o = np.zeros(64, dtype)
        xblock.jit(unsigned_ops)[(1,)](x, y, o, N=8, target=target)
        np.testing.assert_array_equal(o, _want(x, y, 8), err_msg=target)


@triton.jit
def topk_keys(X, Y, N: tl.constexpr, K: tl.constexpr):
    tl.store(Y + tl.arange(0, K), tl.topk(tl.load(X + tl.arange(0, N)), K))


def test_topk_of_uint64_keys_with_the_top_bit_set():
    x = np.array([1, (1 << 63) + 5, 7, (1 << 63) + 2, 3, 9, 0, 4], np.uint64)
    for target in ("ascend", "sim"):
        y = np.zeros(2, np.uint64)
        xblock.jit(topk_keys)[(1,)](x, y, N=8, K=2, target=target)
        np.testing.assert_array_equal(y, np.sort(x)[::-1][:2], err_msg=target)
