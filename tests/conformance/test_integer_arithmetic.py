"""Integer arithmetic is exact and wraps in two's complement, as in C and Triton, on every target:
int32 add/sub/mul/max/min (also with a scalar) at the edges of float32's exact range, and int64
multiply, shifts and division on the targets with 64-bit lanes; ascend names what 910B lacks."""

import numpy as np
import pytest

import xblock

triton = pytest.importorskip("triton")
tl = triton.language


@triton.jit
def int32_ops(a_ptr, b_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    tl.store(out_ptr + offs * 8, a + b)
    tl.store(out_ptr + offs * 8 + 1, a - b)
    tl.store(out_ptr + offs * 8 + 2, a * b)
    tl.store(out_ptr + offs * 8 + 3, tl.maximum(a, b))
    tl.store(out_ptr + offs * 8 + 4, tl.minimum(a, b))
    tl.store(out_ptr + offs * 8 + 5, a + 1)
    tl.store(out_ptr + offs * 8 + 6, a * 3)
    tl.store(out_ptr + offs * 8 + 7, tl.maximum(a, 5))


@triton.jit
def int64_ops(a_ptr, b_ptr, s_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    s = tl.load(s_ptr + offs)
    tl.store(out_ptr + offs * 5, a * b)
    tl.store(out_ptr + offs * 5 + 1, a << s)
    tl.store(out_ptr + offs * 5 + 2, a >> s)
    tl.store(out_ptr + offs * 5 + 3, (a.to(tl.uint64) >> s.to(tl.uint64)).to(tl.int64, bitcast=True))
    tl.store(out_ptr + offs * 5 + 4, a // b + a % b)


def _c_div(x, y):
    q = np.abs(x) // np.abs(y)
    return np.where((x < 0) ^ (y < 0), -q, q)


@pytest.mark.parametrize("target", ["sim", "cpu", "ascend"])
def test_int32_is_exact_and_wraps(target):
    edge = np.array([16777217, 4097, 2**31 - 1, -2**31, 2**24 + 3, -7, 46341, 0], np.int32)
    a = np.concatenate([edge, np.random.default_rng(9).integers(-2**31, 2**31, 24, dtype=np.int64).astype(np.int32)])
    b = np.concatenate([np.array([1, 4099, 1, -1, 5, 2, 46341, 0], np.int32),
                        np.random.default_rng(10).integers(-2**31, 2**31, 24, dtype=np.int64).astype(np.int32)])
    out = np.zeros(8 * 32, np.int32)
    xblock.jit(int32_ops)[(1,)](a, b, out, BLOCK=32, target=target)
    with np.errstate(over="ignore"):
        want = np.stack([a + b, a - b, a * b, np.maximum(a, b), np.minimum(a, b), a + np.int32(1),
                         a * np.int32(3), np.maximum(a, np.int32(5))], 1)
    np.testing.assert_array_equal(out.reshape(32, 8), want)


@pytest.mark.parametrize("target", ["sim", "cpu", "ascend"])  # ascend: lane by lane (no 64-bit lanes)
def test_int64_multiply_shift_divide(target):
    rng = np.random.default_rng(11)
    a = rng.integers(-2**62, 2**62, 16, dtype=np.int64)
    b = rng.integers(-2**40, 2**40, 16, dtype=np.int64)
    b[b == 0] = 3
    s = rng.integers(0, 64, 16, dtype=np.int64)
    s[:4] = [0, 31, 32, 63]
    out = np.zeros(80, np.int64)
    xblock.jit(int64_ops)[(1,)](a, b, s, out, BLOCK=16, target=target)
    q = _c_div(a, b)
    with np.errstate(over="ignore"):
        want = np.stack([a * b, a << s, a >> s, (a.view(np.uint64) >> s.view(np.uint64)).view(np.int64),
                         q + (a - q * b)], 1)
    np.testing.assert_array_equal(out.reshape(16, 5), want)


@triton.jit
def minus_a_scalar(x_ptr, s_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    s = tl.load(s_ptr).to(tl.int32)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask, other=1) - s + offs * 3, mask=mask)


@pytest.mark.parametrize("target", ["sim", "cpu", "ascend"])
def test_int32_block_and_a_large_scalar(target):
    """A scalar or index block used as int32 data is exact past 2**24 (ascend built it in float)."""
    x = np.array([158, -7, 2**30, 5], np.int32)
    s = np.array([-1016091033129], np.int64)
    out = np.zeros(4, np.int32)
    xblock.jit(minus_a_scalar)[(1,)](x, s, out, 4, BLOCK=8, target=target)
    with np.errstate(over="ignore"):
        want = x - s.astype(np.int32) + np.arange(4, dtype=np.int32) * 3
    np.testing.assert_array_equal(out, want)
