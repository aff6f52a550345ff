"""A masked load whose `other` is a block and whose mask is no bounds per dimension (`(r % L) >= k`,
pytorch-labs/applied-ai's causal_1d_conv: `tl.load(x_ptrs, mask=mask_x, other=initial_states)`): the
load takes the path it takes with a scalar `other` (masked-off lanes not read), and the mask is
computed as a bit mask, as tl.where computes it, to select `other`. Equal to numpy and to the sim."""

from __future__ import annotations

import numpy as np
import pytest

import xblock

triton = pytest.importorskip("triton")
tl = triton.language

pytestmark = pytest.mark.filterwarnings("ignore::xblock.errors.XBlockWarning")  # the loads are gathers


@triton.jit
def shifted_or_block(x_ptr, y_ptr, o_ptr, L, B: tl.constexpr):
    r = tl.arange(0, B)
    y = tl.load(y_ptr + r)
    x = tl.load(x_ptr + r - 1, mask=(r % L) >= 1, other=y)
    tl.store(o_ptr + r, x)


@triton.jit
def rows_shifted_or_block(x_ptr, y_ptr, o_ptr, L, n, R: tl.constexpr, C: tl.constexpr):
    rows = tl.arange(0, R)
    cols = tl.arange(0, C)
    y = tl.load(y_ptr + rows[:, None] * C + cols[None, :])
    mask = (rows[:, None] % L >= 1) & (cols[None, :] < n)
    x = tl.load(x_ptr + (rows[:, None] - 1) * C + cols[None, :], mask=mask, other=y)
    tl.store(o_ptr + rows[:, None] * C + cols[None, :], x)


@triton.jit
def window_or_block(x_ptr, y_ptr, o_ptr, lo, hi, B: tl.constexpr):
    r = tl.arange(0, B)
    y = tl.load(y_ptr + r)
    tl.store(o_ptr + r, tl.load(x_ptr + r, mask=(r >= lo) & (r < hi), other=y))


@triton.jit
def shifted_in_a_loop(x_ptr, y_ptr, o_ptr, L, N: tl.constexpr, B: tl.constexpr):
    r = tl.arange(0, B)
    for i in range(0, N, B):
        y = tl.load(y_ptr + i + r)
        tl.store(o_ptr + i + r, tl.load(x_ptr + i + r - 2, mask=((i + r) % L) >= 2, other=y * 3))


@triton.jit
def causal_conv1d(x_ptr, w_ptr, init_ptr, o_ptr, L, T: tl.constexpr, D: tl.constexpr, K: tl.constexpr):
    """x (T, D): sequences of L steps one after another; init (T // L, K - 1, D): the K - 1 steps
    before each sequence; w (K, D). out[t] = sum_k w[K - 1 - k] * x[t - k], the steps before a
    sequence's start taken from its initial states."""
    t = tl.arange(0, T)
    d = tl.arange(0, D)
    pos = t % L
    seq = t // L
    acc = tl.zeros((T, D), dtype=tl.float32)
    for k in tl.static_range(K):
        before = pos[:, None] < k
        initial_states = tl.load(init_ptr + (seq[:, None] * (K - 1) + K - 1 + pos[:, None] - k) * D + d[None, :],
                                 mask=before, other=0.0)
        x = tl.load(x_ptr + (t[:, None] - k) * D + d[None, :], mask=pos[:, None] >= k, other=initial_states)
        w = tl.load(w_ptr + (K - 1 - k) * D + d)
        acc += w[None, :].to(tl.float32) * x.to(tl.float32)
    tl.store(o_ptr + t[:, None] * D + d[None, :], acc)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("L", [1, 4, 5])
def test_a_wrapped_mask_selects_a_block_other(dtype, L):
    rng = np.random.default_rng(L)
    x, y = rng.standard_normal(32).astype(dtype), rng.standard_normal(32).astype(dtype)
    r = np.arange(32)
    want = np.where(r % L >= 1, np.concatenate([x[:1], x[:-1]]), y)  # lane 0 is off: never read
    for target in ("ascend", "sim"):
        o = np.zeros_like(x)
        xblock.jit(shifted_or_block)[(1,)](x, y, o, L, B=32, target=target)
        np.testing.assert_array_equal(o, want, err_msg=target)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_a_wrapped_mask_and_a_bound_select_a_2d_block_other(dtype):
    rng = np.random.default_rng(7)
    R, C, L, n = 8, 16, 3, 11
    x, y = rng.standard_normal((R, C)).astype(dtype), rng.standard_normal((R, C)).astype(dtype)
    rows, cols = np.arange(R)[:, None], np.arange(C)[None, :]
    shifted = np.concatenate([x[:1], x[:-1]])
    want = np.where((rows % L >= 1) & (cols < n), shifted, y)
    for target in ("ascend", "sim"):
        o = np.zeros_like(x)
        xblock.jit(rows_shifted_or_block)[(1,)](x, y, o, L, n, R=R, C=C, target=target)
        np.testing.assert_array_equal(o, want, err_msg=target)


def test_a_lower_bound_and_a_wrapped_mask_in_a_loop_select_a_block_other():
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(64).astype(np.float32), rng.standard_normal(64).astype(np.float32)
    r = np.arange(64)
    for target in ("ascend", "sim"):
        o = np.zeros_like(x)
        xblock.jit(window_or_block)[(1,)](x, y, o, 5, 50, B=64, target=target)
        np.testing.assert_array_equal(o, np.where((r >= 5) & (r < 50), x, y), err_msg=target)
        o = np.zeros_like(x)
        xblock.jit(shifted_in_a_loop)[(1,)](x, y, o, 7, N=64, B=16, target=target)
        np.testing.assert_array_equal(o, np.where(r % 7 >= 2, np.concatenate([x[:2], x[:-2]]), y * 3),
                                      err_msg=target)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_a_causal_conv1d_takes_the_initial_states_before_each_sequence(dtype):
    rng = np.random.default_rng(3)
    T, D, K, L = 16, 8, 4, 8
    S = T // L
    # small integers: every product and sum is exact in float32, so the result is exact too
    x = rng.integers(-4, 5, (T, D)).astype(dtype)
    w = rng.integers(-3, 4, (K, D)).astype(dtype)
    init = rng.integers(-4, 5, (S, K - 1, D)).astype(dtype)
    padded = np.concatenate([init, x.reshape(S, L, D)], axis=1).astype(np.float32)  # (S, K - 1 + L, D)
    want = sum(w[K - 1 - k].astype(np.float32) * padded[:, K - 1 - k:K - 1 - k + L] for k in range(K)).reshape(T, D)
    for target in ("ascend", "sim"):
        o = np.zeros((T, D), np.float32)
        xblock.jit(causal_conv1d)[(1,)](x, w, init, o, L, T=T, D=D, K=K, target=target)
        np.testing.assert_array_equal(o, want, err_msg=target)


@triton.jit
def batch_bounded_or_block(x_ptr, y_ptr, o_ptr, L, batch, B: tl.constexpr):
    # applied-ai's causal conv1d masks with the sequence index too: `(r // L < batch) & (r % L >= 1)`
    r = tl.arange(0, B)
    y = tl.load(y_ptr + r)
    x = tl.load(x_ptr + r - 1, mask=((r // L) < batch) & ((r % L) >= 1), other=y)
    tl.store(o_ptr + r, x)


@pytest.mark.parametrize("batch", [0, 3, 9])
def test_a_sequence_index_bound_in_the_mask_selects_a_block_other(batch):
    rng = np.random.default_rng(batch)
    x, y = rng.standard_normal(32).astype(np.float32), rng.standard_normal(32).astype(np.float32)
    r = np.arange(32)
    want = np.where((r // 4 < batch) & (r % 4 >= 1), np.concatenate([x[:1], x[:-1]]), y)
    for target in ("ascend", "sim"):
        o = np.zeros_like(x)
        xblock.jit(batch_bounded_or_block)[(1,)](x, y, o, 4, batch, B=32, target=target)
        np.testing.assert_array_equal(o, want, err_msg=target)
