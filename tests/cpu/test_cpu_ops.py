"""Ops the examples do not reach, on the cpu target against the sim: generic reduce and scan,
argmin, cumprod, integer division by zero, transposes of small blocks, atomics, if and while."""

import numpy as np
import pytest

import xblock
import xblock.language as xl


def _both(kernel, grid, make_args, **meta):
    """Run on cpu and on sim with identical inputs; return both argument tuples."""
    a, b = make_args(), make_args()
    kernel[grid](*a, target="cpu", **meta)
    kernel[grid](*b, target="sim", **meta)
    return a, b


@xblock.jit
def _combine(a, b):
    return xl.maximum(a, b) + 0.0


@xblock.jit
def _reductions(x_ptr, out_ptr, N: xl.constexpr, M: xl.constexpr):
    r = xl.arange(0, M)[:, None]
    c = xl.arange(0, N)[None, :]
    x = xl.load(x_ptr + r * N + c)
    xl.store(out_ptr + xl.arange(0, M), xl.reduce(x, 1, _combine))
    xl.store(out_ptr + M + xl.arange(0, N), xl.argmin(x, axis=0).to(xl.float32))
    xl.store(out_ptr + M + N + xl.arange(0, N), xl.min(x, axis=0))
    xl.store(out_ptr + M + 2 * N + r * N + c, xl.associative_scan(x, 0, _combine))
    xl.store(out_ptr + M + 2 * N + M * N + r * N + c, xl.cumprod(x, axis=1, reverse=True))


@pytest.mark.parametrize("shape", [(4, 8), (16, 32), (2, 64)])
def test_generic_and_other_reductions(shape):
    M, N = shape
    x = np.random.default_rng(1).uniform(0.5, 1.5, (M, N)).astype(np.float32)
    x[0, 1] = x[1, 1] = x.min() - 1  # a tie for argmin: the lowest index wins
    a, b = _both(_reductions, (1,), lambda: (x.copy(), np.zeros(M + 2 * N + 2 * M * N, np.float32)), N=N, M=M)
    np.testing.assert_allclose(a[1], b[1], rtol=1e-5)


@xblock.jit
def _intops(a_ptr, b_ptr, out_ptr, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    a, b = xl.load(a_ptr + offs), xl.load(b_ptr + offs)
    xl.store(out_ptr + offs, a // b)
    xl.store(out_ptr + BLOCK + offs, a % b)
    xl.store(out_ptr + 2 * BLOCK + offs, (a << (b & 7)) ^ (a >> 2))


def test_integer_division_by_zero_is_zero_like_the_sim():
    rng = np.random.default_rng(2)
    a = rng.integers(-100, 100, 64).astype(np.int32)
    b = rng.integers(-4, 4, 64).astype(np.int32)
    a_, b_ = _both(_intops, (1,), lambda: (a.copy(), b.copy(), np.zeros(192, np.int32)), BLOCK=64)
    np.testing.assert_array_equal(a_[2], b_[2])


@xblock.jit
def _small_trans(x_ptr, out_ptr, M: xl.constexpr, N: xl.constexpr):
    r = xl.arange(0, M)[:, None]
    c = xl.arange(0, N)[None, :]
    x = xl.load(x_ptr + r * N + c)
    xl.store(out_ptr + c * M + r, x)  # a scatter
    y = xl.trans(x) * 2
    xl.store(out_ptr + M * N + r * 0 + c * 0 + xl.arange(0, 1)[:, None], xl.sum(xl.sum(y, 1), 0) + r * 0.0 + c * 0.0)


@pytest.mark.parametrize("shape", [(2, 4), (4, 16), (8, 2)])
def test_transposes_and_scatters(shape):
    M, N = shape
    x = np.arange(M * N, dtype=np.float32)
    a, b = _both(_small_trans, (1,), lambda: (x.copy(), np.zeros(M * N + 1, np.float32)), M=M, N=N)
    np.testing.assert_allclose(a[1], b[1])


@xblock.jit
def _atomics(cnt_ptr, x_ptr, n, BLOCK: xl.constexpr):
    pid = xl.program_id(0)
    offs = pid * BLOCK + xl.arange(0, BLOCK)
    mask = offs < n
    x = xl.load(x_ptr + offs, mask=mask, other=0)
    xl.atomic_add(cnt_ptr + (x % 4), 1, mask=mask)
    xl.atomic_max(cnt_ptr + 4, xl.max(x, axis=0))
    xl.atomic_xchg(cnt_ptr + 5, 7)
    xl.atomic_cas(cnt_ptr + 6, 0, pid + 1)
    if pid == 0:
        i = 0
        while i < 3:
            xl.atomic_add(cnt_ptr + 7, i)
            i += 1


def test_atomics_if_and_while():
    x = np.random.default_rng(3).integers(0, 1000, 1000).astype(np.int32)
    cnt = np.zeros(8, np.int32)
    _atomics[(8,)](cnt, x, 1000, BLOCK=128, target="cpu")
    assert list(cnt[:4]) == [int((x % 4 == k).sum()) for k in range(4)]
    assert cnt[4] == x.max() and cnt[5] == 7 and 1 <= cnt[6] <= 8 and cnt[7] == 3


@xblock.jit
def _while_blocks(x_ptr, out_ptr, n_ptr, M: xl.constexpr, N: xl.constexpr):
    r = xl.arange(0, M)[:, None]
    c = xl.arange(0, N)[None, :]
    x = xl.load(x_ptr + r * N + c)
    acc = xl.zeros((M, N), xl.float32)
    steps = xl.zeros((M,), xl.int32)
    i = 0
    while xl.max(xl.max(xl.abs(x), axis=1), axis=0) > 1.0:  # blocks and a scalar carried
        x = x * 0.5
        acc = acc + x
        steps += (xl.max(xl.abs(x), axis=1) > 1.0).to(xl.int32)
        i += 1
    y = xl.arange(0, N)
    while xl.sum(y, axis=0) < 10 * N:  # only a block carried
        y = y + 3
    xl.store(out_ptr + r * N + c, acc + x)
    xl.store(n_ptr + xl.arange(0, M), steps + i)
    xl.store(n_ptr + M + xl.arange(0, N), y)


@pytest.mark.parametrize("shape", [(1, 16), (4, 8), (8, 32)])
def test_while_carrying_blocks(shape):
    M, N = shape
    x = np.random.default_rng(4).uniform(-300, 300, (M, N)).astype(np.float32)
    a, b = _both(_while_blocks, (1,), lambda: (x.copy(), np.zeros((M, N), np.float32),
                                              np.zeros(M + N, np.int32)), M=M, N=N)
    np.testing.assert_array_equal(a[1], b[1])
    np.testing.assert_array_equal(a[2], b[2])
    assert a[2][:M].max() > 3
