"""A kernel whose dots would go out through Fixpipe alone is cube-only (AIC); with vector work beside
them (a tile copy that does not use the dot) its dots are handed to the vector core instead, so the
kernel is a mixed one (fuzz campaign 7, entry O: this was refused at the line, and before that the model
refused the generated code)."""

from __future__ import annotations

import numpy as np
import pytest

import xblock

triton = pytest.importorskip("triton")
tl = triton.language


@triton.jit
def dot_and_copy(a_ptr, b_ptr, x_ptr, c_ptr, y_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    r = tl.arange(0, BM)
    c = tl.arange(0, BN)
    kk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptr + r[:, None] * K + (k * BK + kk)[None, :])
        b = tl.load(b_ptr + (k * BK + kk)[:, None] * BN + c[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + r[:, None] * BN + c[None, :], acc)
    tl.store(y_ptr + r[:, None] * BN + c[None, :], tl.load(x_ptr + r[:, None] * BN + c[None, :]))


def test_vector_work_beside_a_fixpipe_dot_makes_a_mixed_kernel():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((16, 32)).astype(np.float16), rng.standard_normal((32, 16)).astype(np.float16)
    x = rng.standard_normal((16, 16)).astype(np.float32)
    c, y = np.zeros((16, 16), np.float32), np.zeros((16, 16), np.float32)
    ck = xblock.jit(dot_and_copy).warmup(a, b, x, c, y, 32, BM=16, BN=16, BK=16, grid=(1,), target="ascend")
    assert "KERNEL_TYPE_MIX_AIC_1_1" in ck.asm["cpp"]
    xblock.jit(dot_and_copy)[(1,)](a, b, x, c, y, 32, BM=16, BN=16, BK=16, target="ascend")
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)
    np.testing.assert_array_equal(y, x)


@triton.jit
def dot_and_constant_store(a_ptr, b_ptr, c_ptr, y_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    r = tl.arange(0, BM)
    c = tl.arange(0, BN)
    kk = tl.arange(0, BK)
    acc = tl.dot(tl.load(a_ptr + r[:, None] * BK + kk[None, :]), tl.load(b_ptr + kk[:, None] * BN + c[None, :]))
    tl.store(c_ptr + r[:, None] * BN + c[None, :], acc)
    tl.store(y_ptr + r[:, None] * BN + c[None, :], tl.full((BM, BN), -1.5, tl.float32))


def test_a_constant_block_beside_a_fixpipe_dot_makes_a_mixed_kernel():
    """Fuzz seed 41, kernel 457 (model-rejected): a constant block filled in the unified buffer, in no
    queue, did not count as vector work, so the kernel stayed cube-only with a Duplicate in it."""
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((16, 16)).astype(np.float16), rng.standard_normal((16, 16)).astype(np.float16)
    c, y = np.zeros((16, 16), np.float32), np.zeros((16, 16), np.float32)
    xblock.jit(dot_and_constant_store)[(1,)](a, b, c, y, BM=16, BN=16, BK=16, target="ascend")
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)
    assert (y == -1.5).all()


@triton.jit
def masked_operands_unmasked_store(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                                   BK: tl.constexpr):
    r = tl.arange(0, BM)
    c = tl.arange(0, BN)
    kk = tl.arange(0, BK)
    a = tl.load(a_ptr + r[:, None] * K + kk[None, :], mask=(r[:, None] < M) & (kk[None, :] < K), other=0.0)
    b = tl.load(b_ptr + kk[:, None] * N + c[None, :], mask=(kk[:, None] < K) & (c[None, :] < N), other=0.0)
    tl.store(c_ptr + r[:, None] * BN + c[None, :], tl.dot(a, b))


def test_a_store_wider_than_the_loaded_operands_goes_through_the_vector_core():
    """Fuzz seed 41, kernel 365 (wrong answer): the store wrote the whole tile, but the Cube had
    computed only the rows and columns the operands load, so stale L0C went out where the product
    is 0. That became a clear error (fuzz campaign 48 met it 4 times in 500 kernels); now the dot is
    handed to the vector core, whose tile is 0 where the operands load nothing, as on the sim."""
    a, b = np.ones((10, 7), np.float16), np.ones((7, 12), np.float16)
    want = np.zeros((16, 16), np.float32)
    want[:10, :12] = 7.0
    for target in ("sim", "ascend"):
        c = np.full((16, 16), -1.0, np.float32)
        xblock.jit(masked_operands_unmasked_store)[(1,)](a, b, c, 10, 12, 7, BM=16, BN=16, BK=16, target=target)
        np.testing.assert_array_equal(c, want, err_msg=target)


@triton.jit
def transposed_dot_store(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    a = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
    b = tl.load(b_ptr + ks[:, None] * N + cols[None, :], mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
    tl.store(c_ptr + cols[None, :] * M + rows[:, None], tl.dot(a, b), mask=(rows[:, None] < M) & (cols[None, :] < N))


def test_a_transposed_store_of_a_dot_goes_through_the_vector_core():
    """Refused before ("the dot's result must be stored as a 2-D tile with contiguous rows"; 6 of 500
    kernels of fuzz campaign 48): Fixpipe writes rows, so the dot is handed to the vector core."""
    rng = np.random.default_rng(0)
    M, N, K = 20, 24, 16
    a, b = rng.standard_normal((M, K)).astype(np.float16), rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((N, M), np.float32)
    xblock.jit(transposed_dot_store)[(2, 2)](a, b, c, M, N, K, BM=16, BN=16, BK=16, target="ascend")
    np.testing.assert_allclose(c, (a.astype(np.float32) @ b.astype(np.float32)).T, rtol=1e-5, atol=1e-5)
