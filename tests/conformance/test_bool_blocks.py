"""Bools read from memory and used as conditions, and runtime `if`s that yield constant blocks
(regressions found by tools/fuzz.py): against numpy on every target."""

import numpy as np
import pytest

import xblock

triton = pytest.importorskip("triton")
tl = triton.language

RUN_TARGETS = ["sim", "cpu", "ascend"]


@triton.jit
def select_by_loaded_bools(m_ptr, a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    m = tl.load(m_ptr + (n - 1 - offs), mask=mask)  # reversed: a gather on some targets
    a = tl.load(a_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)
    both = m & (a > 3)
    tl.store(out_ptr + offs, tl.where(m, a, b) + both.to(tl.float32), mask=mask)


@triton.jit
def if_yields_constant_blocks(flag_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    if tl.load(flag_ptr):
        v = tl.full((BM, BN), 2.0, tl.float16)
    else:
        v = tl.full((BM, BN), -1.5, tl.float16)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], v, mask=(rows[:, None] < M) & (cols[None, :] < N))


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("n", [1, 40, 64])
def test_where_on_bools_loaded_from_memory(target, n):
    m = np.arange(n) % 3 == 0
    a = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    xblock.jit(select_by_loaded_bools)[(1,)](m, a, -a, out, n, BLOCK=64, target=target)
    mr = m[::-1]
    np.testing.assert_array_equal(out, np.where(mr, a, -a) + (mr & (a > 3)))


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("flag", [True, False])
def test_runtime_if_yielding_constant_blocks(target, flag):
    out = np.zeros((3, 5), np.float16)
    xblock.jit(if_yields_constant_blocks)[(1,)](np.array([flag]), out, 3, 5, BM=4, BN=8, target=target)
    assert (out == (2.0 if flag else -1.5)).all()


@triton.jit
def row_sums_of_repeated_rows(p, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(p + offs[:, None] * 0 + offs[None, :])  # every row the same (row stride 0)
    tl.store(out_ptr + offs, tl.sum(a, 1))


@pytest.mark.parametrize("target", RUN_TARGETS)
def test_row_sums_of_a_block_with_stride_0_rows(target):
    """Rows that overlap take a gather (no negative DataCopyPad gap); per-row sums written by the
    scalar pipe are synchronised before they are copied out (ascend)."""
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(16, np.float32)
    xblock.jit(row_sums_of_repeated_rows)[(1,)](x, out, BLOCK=16, target=target)
    np.testing.assert_array_equal(out, np.full(16, x.sum()))


@triton.jit
def short_masked_copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + cols, mask=cols < n, other=7)
    tl.store(out_ptr + cols, v, mask=cols < n)


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
@pytest.mark.parametrize("n", [0, 1, 2])
def test_masked_load_of_a_block_shorter_than_32_bytes(target, dtype, n):
    x = (np.arange(2) + 1).astype(dtype)
    out = np.full(2, 5, dtype)
    xblock.jit(short_masked_copy)[(1,)](x, out, n, BLOCK=2, target=target)
    np.testing.assert_array_equal(out, np.where(np.arange(2) < n, x, 5).astype(dtype))


@triton.jit
def if_yields_loaded_blocks(flag_ptr, a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    if tl.load(flag_ptr):
        v = tl.load(a_ptr + offs, mask=mask, other=2.0)
    else:
        v = tl.load(b_ptr + offs, mask=mask, other=1.0)
    tl.store(out_ptr + offs, v, mask=mask)


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("flag", [True, False])
def test_runtime_if_yielding_loaded_blocks(target, flag):
    a, b = np.arange(20, dtype=np.float32), -np.arange(20, dtype=np.float32)
    out = np.zeros(20, np.float32)
    xblock.jit(if_yields_loaded_blocks)[(1,)](np.array([flag]), a, b, out, 20, BLOCK=32, target=target)
    np.testing.assert_array_equal(out, a if flag else b)


@triton.jit
def scalar_bits(x_ptr, out_ptr):
    tl.store(out_ptr, tl.load(x_ptr).to(tl.int32, bitcast=True))


@pytest.mark.parametrize("target", RUN_TARGETS)
def test_scalar_bitcast_keeps_the_bits(target):
    x = np.array([0.71], np.float32)
    out = np.zeros(1, np.int32)
    xblock.jit(scalar_bits)[(1,)](x, out, target=target)
    assert out[0] == x.view(np.int32)[0]


@triton.jit
def mixed_scalar_math(x_ptr, h_ptr, out_ptr):
    x = tl.load(x_ptr)
    h = tl.load(h_ptr)
    tl.store(out_ptr, x / (tl.abs(h) + 1.0))
    tl.store(out_ptr + 1, tl.fma(x, x, x))
    tl.store(out_ptr + 2, tl.maximum(h, -h).to(tl.float32))


@pytest.mark.parametrize("target", RUN_TARGETS)
def test_scalar_arithmetic_mixing_fp32_and_bf16(target):
    import ml_dtypes

    x = np.array([1.5], np.float32)
    h = np.array([-0.75], ml_dtypes.bfloat16)
    out = np.zeros(3, np.float32)
    xblock.jit(mixed_scalar_math)[(1,)](x, h, out, target=target)
    np.testing.assert_allclose(out, [1.5 / 1.75, 1.5 * 1.5 + 1.5, 0.75], rtol=1e-6)


@triton.jit
def bools_or_a_flag(m_ptr, flag_ptr, a_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = tl.load(m_ptr + offs) | tl.load(flag_ptr)
    tl.store(out_ptr + offs, tl.where(m, tl.load(a_ptr + offs), -1.0))


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("flag", [True, False])
def test_a_bool_block_or_a_bool_scalar(target, flag):
    m = np.arange(32) % 4 == 1
    a = np.arange(32, dtype=np.float32)
    out = np.zeros(32, np.float32)
    xblock.jit(bools_or_a_flag)[(1,)](m, np.array([flag]), a, out, BLOCK=32, target=target)
    np.testing.assert_array_equal(out, np.where(m | flag, a, -1.0))


@triton.jit
def store_comparison(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) > 0)


@pytest.mark.parametrize("target", RUN_TARGETS)
def test_storing_computed_bools(target):
    x = np.linspace(-1, 1, 32, dtype=np.float32)
    out = np.zeros(32, np.bool_)  # (ascend: Compare's bit mask becomes a byte per bool)
    xblock.jit(store_comparison)[(1,)](x, out, BLOCK=32, target=target)
    np.testing.assert_array_equal(out, x > 0)
