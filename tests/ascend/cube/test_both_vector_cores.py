"""A dot's vector epilogue in row chunks shared by both vector cores of the AI Core (MIX_AIC_1_2).

The K loop stays whole on the Cube; xb-strip-mine splits the epilogue into row chunks that read
their rows of the accumulator from the workspace (cube_mixed.py). Numerics against numpy at
boundary shapes (a partial last tile, M and N of 1, K off the tile), the structure of the
generated AscendC, and the cases that keep one vector core (a value carried from chunk to chunk).
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import xblock
import xblock.language as xl

matmul = importlib.import_module("examples.matmul")


def _leaky(ref):
    return np.where(ref >= 0, ref, 0.01 * ref)


def _run_matmul(M, N, K, dtype, BM, BN, BK):
    rng = np.random.default_rng(M * 7 + N * 3 + K)
    dt = np.dtype(dtype)
    a = rng.standard_normal((M, K), dtype=np.float32).astype(dt)
    b = (rng.standard_normal((K, N), dtype=np.float32) / np.sqrt(K)).astype(dt)
    c = np.full((M, N), 5, dt)
    meta = dict(BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=8)
    grid = (xblock.cdiv(M, BM) * xblock.cdiv(N, BN),)
    matmul.matmul_kernel[grid](a, b, c, M, N, K, K, 1, N, 1, N, 1, target="ascend", **meta)
    ref = _leaky(a.astype(np.float64) @ b.astype(np.float64))
    return c, ref


@pytest.mark.parametrize("M,N,K,BM,BN,BK", [
    (300, 200, 333, 128, 256, 64),  # the CATLASS-sized tile: its epilogue does not fit UB whole
    (129, 257, 65, 128, 256, 64),   # one row and one column past a tile
    (1, 1, 1, 64, 64, 32),
    (65, 31, 32, 32, 32, 32),       # the example's own tiles
])
def test_matmul_leaky_relu_on_both_vector_cores(M, N, K, BM, BN, BK):
    c, ref = _run_matmul(M, N, K, "float16", BM, BN, BK)
    np.testing.assert_allclose(c.astype(np.float64), ref, atol=2e-2, rtol=2e-2)


def test_fp32_inputs():
    c, ref = _run_matmul(70, 90, 50, "float32", 64, 64, 32)
    np.testing.assert_allclose(c.astype(np.float64), ref, atol=1e-3, rtol=1e-3)


def test_the_generated_kernel_shares_the_chunks_between_the_two_aivs():
    S = 512
    a, b, c = (np.zeros((S, S), np.float16) for _ in range(3))
    ck = matmul.matmul_kernel.warmup(a, b, c, S, S, S, S, 1, S, 1, S, 1, target="ascend", grid=(8,),
                                     BLOCK_M=128, BLOCK_N=256, BLOCK_K=256, GROUP_M=8)
    md, cpp = ck.metadata, ck.asm["cpp"]
    assert md["kernel_type"] == "KERNEL_TYPE_MIX_AIC_1_2"
    assert md["cube"][0]["vector_cores"] == 2 and md["split"]["rows"]
    assert "KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);" in cpp
    assert "GetSubBlockIdx()" in cpp and "(GetBlockIdx() / GetSubBlockNum())" in cpp
    # the plan of the CATLASS structure: L1 128x256 (K 256), L0 steps of 64, both double-buffered
    plan = md["cube"][0]["plan"]
    assert "baseM=128 baseN=256 baseK=64" in plan and "depthA1=2 depthB1=2 L0A x2 L0B x2" in plan
    # the workspace holds one fp32 tile per AI Core, far below the fp16 output of a 4096^2 matmul
    assert md["workspace_bytes"] == 128 * 256 * 4


@xblock.jit
def dot_colsum(a_ptr, b_ptr, c_ptr, s_ptr, M, N, K, BM: xl.constexpr, BN: xl.constexpr, BK: xl.constexpr):
    rows = xl.arange(0, BM)
    cols = xl.arange(0, BN)
    ks = xl.arange(0, BK)
    acc = xl.zeros((BM, BN), dtype=xl.float32)
    for k in range(0, xl.cdiv(K, BK)):
        a = xl.load(a_ptr + rows[:, None] * K + (k * BK + ks)[None, :],
                    mask=(rows[:, None] < M) & ((k * BK + ks)[None, :] < K), other=0.0)
        b = xl.load(b_ptr + (k * BK + ks)[:, None] * N + cols[None, :],
                    mask=((k * BK + ks)[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = xl.dot(a, b, acc)
    y = acc * 2.0
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    xl.store(c_ptr + rows[:, None] * N + cols[None, :], y, mask=mask)
    xl.store(s_ptr + cols, xl.sum(xl.where(mask, y, 0.0), axis=0), mask=cols < N)


def test_a_sum_across_the_chunks_keeps_one_vector_core():
    M, N, K = 200, 96, 40
    rng = np.random.default_rng(3)
    a = rng.standard_normal((M, K), dtype=np.float32).astype(np.float16)
    b = rng.standard_normal((K, N), dtype=np.float32).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    s = np.zeros(N, np.float32)
    meta = dict(BM=256, BN=128, BK=32)
    dot_colsum[(1,)](a, b, c, s, M, N, K, target="ascend", **meta)
    ck = dot_colsum.warmup(a, b, c, s, M, N, K, target="ascend", grid=(1,), **meta)
    assert ck.metadata["kernel_type"] == "KERNEL_TYPE_MIX_AIC_1_1" and ck.metadata["split"]["rows"]
    ref = 2.0 * (a.astype(np.float64) @ b.astype(np.float64))
    np.testing.assert_allclose(c, ref, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(s, ref.sum(axis=0), rtol=1e-3, atol=1e-2)


@xblock.jit
def dot_to_half_then_scale(a_ptr, b_ptr, c_ptr, M, N, K, BM: xl.constexpr, BN: xl.constexpr, BK: xl.constexpr):
    rows = xl.program_id(0) * BM + xl.arange(0, BM)
    cols = xl.arange(0, BN)
    ks = xl.arange(0, BK)
    acc = xl.zeros((BM, BN), dtype=xl.float32)
    for k in range(0, xl.cdiv(K, BK)):
        a = xl.load(a_ptr + rows[:, None] * K + (k * BK + ks)[None, :],
                    mask=(rows[:, None] < M) & ((k * BK + ks)[None, :] < K), other=0.0)
        b = xl.load(b_ptr + (k * BK + ks)[:, None] * N + cols[None, :],
                    mask=((k * BK + ks)[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = xl.dot(a, b, acc)
    h = acc.to(xl.float16)
    xl.store(c_ptr + rows[:, None] * N + cols[None, :], h * 3.0 - 1.0, mask=(rows[:, None] < M) & (cols[None, :] < N))


def test_an_epilogue_that_converts_first_gets_the_tile_converted_by_fixpipe():
    M, N, K = 150, 64, 70
    rng = np.random.default_rng(5)
    a = rng.standard_normal((M, K), dtype=np.float32).astype(np.float16)
    b = (rng.standard_normal((K, N), dtype=np.float32) / np.sqrt(K)).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    meta = dict(BM=64, BN=64, BK=32)
    grid = (xblock.cdiv(M, 64),)
    dot_to_half_then_scale[grid](a, b, c, M, N, K, target="ascend", **meta)
    ck = dot_to_half_then_scale.warmup(a, b, c, M, N, K, target="ascend", grid=grid, **meta)
    cpp = ck.asm["cpp"]
    # the workspace carries fp16 (Fixpipe's F322F16), half the bytes of the fp32 accumulator
    assert "GlobalTensor<half> workspaceF16Gm;" in cpp and "QuantMode_t::F322F16" in cpp
    assert "GlobalTensor<float> workspaceGm" not in cpp
    h = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)  # round to nearest even once
    want = (h * np.float16(3.0) - np.float16(1.0)).astype(np.float16)
    np.testing.assert_allclose(c.astype(np.float32), want.astype(np.float32), atol=2e-2, rtol=1e-2)
