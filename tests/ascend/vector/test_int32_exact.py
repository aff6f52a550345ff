"""int32 comparisons and `//`/`%` on ascend are exact over the whole int32 range (the 910B compares
int32 lanes for equality only and divides floats only: backends/ascend/vector/intexact.py), int64 `+ - *`,
comparisons and `where` run lane by lane, and argmax/argmin run along either axis of a 2-D block:
against numpy and the sim."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

triton = pytest.importorskip("triton")
tl = triton.language

import xblock  # noqa: E402


@triton.jit
def divmod_compare(x_ptr, y_ptr, q_ptr, r_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=1)
    y = tl.load(y_ptr + offs, mask=m, other=1)
    tl.store(q_ptr + offs, x // y, mask=m)
    tl.store(r_ptr + offs, x % y, mask=m)
    c = (x < y).to(tl.int32) + 2 * (x <= y).to(tl.int32) + 4 * (x == y).to(tl.int32) + \
        8 * (x > y).to(tl.int32) + 16 * (x >= 7).to(tl.int32) + 32 * (x != y).to(tl.int32)
    tl.store(c_ptr + offs, c, mask=m)


def _int32_operands(n):
    rng = np.random.default_rng(0)
    x = rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
    wide = rng.integers(-2**31, 2**31, n)
    y = np.where(rng.random(n) < 0.5, wide, rng.integers(-300, 300, n)).astype(np.int32)
    y[y == 0] = 3
    edges_x = [2**31 - 1, -2**31 + 1, 16777217, 16777216, -16777217, 5, -5, 5, -5, 0, 2**31 - 193, 2**30 + 3]
    edges_y = [2, 3, 16777216, 16777217, 7, -3, 3, 3, -3, -7, 2**30 + 1, -(2**29) - 40]
    x[:12], y[:12] = edges_x, edges_y
    y[12], y[13] = x[12], x[13] + 1
    return x, y


def _numpy_divmod_compare(x, y):
    x64, y64 = x.astype(np.int64), y.astype(np.int64)
    q = np.abs(x64) // np.abs(y64) * np.sign(x64) * np.sign(y64)  # C's truncating quotient
    c = (x < y) + 2 * (x <= y) + 4 * (x == y) + 8 * (x > y) + 16 * (x >= 7) + 32 * (x != y)
    return q.astype(np.int32), (x64 - q * y64).astype(np.int32), c.astype(np.int32)


@pytest.mark.parametrize("target", ["sim", "ascend"])
def test_int32_divmod_and_compares_are_exact_past_2_24(target):
    n = 3000
    x, y = _int32_operands(n)
    q, r, c = (np.zeros(n, np.int32) for _ in range(3))
    xblock.jit(divmod_compare)[(-(-n // 1024),)](x, y, q, r, c, n, BLOCK=1024, target=target)
    wq, wr, wc = _numpy_divmod_compare(x, y)
    np.testing.assert_array_equal(q, wq)
    np.testing.assert_array_equal(r, wr)
    np.testing.assert_array_equal(c, wc)


@triton.jit
def unsigned_compare(x_ptr, y_ptr, c_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(c_ptr + offs, (x < y).to(tl.int32) + 2 * (x >= y).to(tl.int32) + 4 * (x > 2147483648).to(tl.int32))


@pytest.mark.parametrize("target", ["sim", "ascend"])
def test_uint32_compares_are_exact(target):
    rng = np.random.default_rng(1)
    x = rng.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
    y = rng.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
    x[:4], y[:4] = [0, 2**32 - 1, 2**31, 2**24 + 1], [2**32 - 1, 0, 2**31 - 1, 2**24]
    c = np.zeros(64, np.int32)
    xblock.jit(unsigned_compare)[(1,)](x, y, c, BLOCK=64, target=target)
    np.testing.assert_array_equal(c, (x < y) + 2 * (x >= y) + 4 * (x > 2147483648))


@triton.jit
def int64_lanes(idx_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    i = tl.load(idx_ptr + offs, mask=m, other=0)
    wrapped = tl.where(i < 0, i + 61, i)  # Inductor's negative-index wrap, on int64
    tl.store(out_ptr + offs, wrapped * 3 - 1, mask=m)
    tl.store(out_ptr + BLOCK + offs, (i > 2**40).to(tl.int64) + i * i, mask=m)


@pytest.mark.parametrize("target", ["sim", "ascend"])
def test_int64_arithmetic_and_where_run_lane_by_lane(target):
    i = np.array([-5, 3, 0, -61, 60, 2**41, -(2**41), 7, 9], np.int64)
    out = np.zeros(32, np.int64)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        xblock.jit(int64_lanes)[(1,)](i, out, i.size, BLOCK=16, target=target)
    np.testing.assert_array_equal(out[:9], np.where(i < 0, i + 61, i) * 3 - 1)
    np.testing.assert_array_equal(out[16:25], (i > 2**40) + i * i)
    if target == "ascend":
        assert any("int64 blocks has no vector instruction" in str(x.message) for x in w)


@triton.jit
def arg_along(x_ptr, rows_ptr, cols_ptr, M: tl.constexpr, N: tl.constexpr, IS_MAX: tl.constexpr):
    r = tl.arange(0, M)
    c = tl.arange(0, N)
    x = tl.load(x_ptr + r[:, None] * N + c[None, :])
    if IS_MAX:
        tl.store(rows_ptr + r, tl.argmax(x, 1))
        tl.store(cols_ptr + c, tl.argmax(x, 0))
    else:
        tl.store(rows_ptr + r, tl.argmin(x, 1))
        tl.store(cols_ptr + c, tl.argmin(x, 0))


@pytest.mark.parametrize("dtype,n", [(np.float32, 64), (np.float16, 16), (np.float32, 4), (np.int32, 8)])
@pytest.mark.parametrize("is_max", [True, False])
def test_argmax_and_argmin_along_either_axis(dtype, n, is_max):
    rng = np.random.default_rng(2)
    m = 8
    x = (rng.integers(-4, 4, (m, n)) if dtype == np.int32 else rng.standard_normal((m, n))).astype(dtype)
    x[1, :] = x[1, 0]  # ties: the first index wins
    for target in ("sim", "ascend"):
        rows, cols = np.zeros(m, np.int32), np.zeros(n, np.int32)
        xblock.jit(arg_along)[(1,)](x, rows, cols, M=m, N=n, IS_MAX=is_max, target=target)
        f = np.argmax if is_max else np.argmin
        np.testing.assert_array_equal(rows, f(x, 1), err_msg=target)
        np.testing.assert_array_equal(cols, f(x, 0), err_msg=target)


@triton.jit
def int64_reductions(x_ptr, out_ptr, rows_ptr, M: tl.constexpr, N: tl.constexpr):
    r = tl.arange(0, M)
    c = tl.arange(0, N)
    x = tl.load(x_ptr + r[:, None] * N + c[None, :])
    flat = tl.reshape(x, (M * N,))
    tl.store(out_ptr + 0, tl.sum(flat, 0))
    tl.store(out_ptr + 1, tl.max(flat, 0))
    tl.store(out_ptr + 2, tl.min(flat, 0))
    tl.store(out_ptr + 3, tl.argmax(flat, 0).to(tl.int64))
    tl.store(out_ptr + 4, tl.argmin(flat, 0).to(tl.int64))
    tl.store(rows_ptr + r, tl.max(x, 1))
    tl.store(rows_ptr + M + r, tl.argmin(x, 1).to(tl.int64))


@pytest.mark.parametrize("target", ["sim", "ascend"])
def test_int64_reductions_are_exact(target):
    """Fuzz seed 12, kernel 75: tl.max of an int64 block went through float (2001603752 came back as
    2001603712)."""
    rng = np.random.default_rng(3)
    x = rng.integers(-2**40, 2**40, (4, 8), dtype=np.int64)
    x[1, 3] = 2001603752
    out, rows = np.zeros(5, np.int64), np.zeros(8, np.int64)
    xblock.jit(int64_reductions)[(1,)](x, out, rows, M=4, N=8, target=target)
    f = x.reshape(-1)
    np.testing.assert_array_equal(out, [f.sum(), f.max(), f.min(), f.argmax(), f.argmin()])
    np.testing.assert_array_equal(rows, np.concatenate([x.max(1), x.argmin(1)]))
