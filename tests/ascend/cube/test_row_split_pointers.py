"""Attention whose key loop advances its K and V pointers (`k_ptrs += BLOCK_N * stride`, as Triton's tutorial
and most public kernels write it) takes the row split like the form that recomputes them from the loop index:
the loads of the carried pointers are traced to their arguments (passes/written_args.py), and the values a loop
yields together are not one axis (passes/block_axes.py), so BLOCK_N == BLOCK_M does not put the split axis on
both dimensions of the score block. Checked against a float64 attention."""

from __future__ import annotations

import numpy as np
import pytest

import xblock
import xblock.language as xl


@xblock.jit
def advancing_attention(Q, K, V, Out, M, N, sm_scale, D: xl.constexpr, BLOCK_M: xl.constexpr,
                        BLOCK_N: xl.constexpr, CAUSAL: xl.constexpr):
    rows = xl.program_id(0) * BLOCK_M + xl.arange(0, BLOCK_M)
    offs_n = xl.arange(0, BLOCK_N)
    offs_d = xl.arange(0, D)
    q = xl.load(Q + rows[:, None] * D + offs_d[None, :], mask=rows[:, None] < M, other=0.0)
    k_ptrs = K + offs_n[None, :] * D + offs_d[:, None]
    v_ptrs = V + offs_n[:, None] * D + offs_d[None, :]
    m_i = xl.full((BLOCK_M,), float("-inf"), xl.float32)
    l_i = xl.zeros((BLOCK_M,), xl.float32)
    acc = xl.zeros((BLOCK_M, D), xl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + offs_n
        k = xl.load(k_ptrs, mask=cols[None, :] < N, other=0.0)
        s = xl.dot(q, k) * sm_scale
        keep = cols[None, :] < N
        if CAUSAL:
            keep = keep & (cols[None, :] <= rows[:, None])
        s = xl.where(keep, s, float("-inf"))
        m_new = xl.maximum(m_i, xl.max(s, 1))
        p = xl.exp(s - m_new[:, None])
        alpha = xl.exp(m_i - m_new)
        l_i = l_i * alpha + xl.sum(p, 1)
        v = xl.load(v_ptrs, mask=cols[:, None] < N, other=0.0)
        acc = xl.dot(p.to(xl.float16), v, acc * alpha[:, None])
        m_i = m_new
        k_ptrs += BLOCK_N * D
        v_ptrs += BLOCK_N * D
    xl.store(Out + rows[:, None] * D + offs_d[None, :], acc / l_i[:, None], mask=rows[:, None] < M)


def _reference(q, k, v, scale, causal):
    s = q.astype(np.float64) @ k.astype(np.float64).T * scale
    if causal:
        s = np.where(np.arange(k.shape[0])[None, :] <= np.arange(q.shape[0])[:, None], s, -np.inf)
    p = np.exp(s - s.max(1, keepdims=True))
    return (p / p.sum(1, keepdims=True)) @ v.astype(np.float64)


@pytest.mark.parametrize("D,BM,BN,causal", [(64, 32, 32, False), (64, 32, 64, True), (128, 64, 64, False)])
def test_advanced_pointers_take_the_row_split(D, BM, BN, causal):
    M, N = 100, 90  # ragged: masked query rows and key columns
    rng = np.random.default_rng(D + BM + BN)
    q, k, v = (rng.uniform(-1, 1, (s, D)).astype(np.float16) for s in (M, N, N))
    scale = float(1 / np.sqrt(D))  # a Python float: an fp32 argument, as in Triton
    out = np.zeros((M, D), np.float32)
    grid = (xblock.cdiv(M, BM),)
    meta = dict(D=D, BLOCK_M=BM, BLOCK_N=BN, CAUSAL=int(causal))
    advancing_attention[grid](q, k, v, out, M, N, scale, target="ascend", **meta)
    np.testing.assert_allclose(out, _reference(q, k, v, scale, causal), atol=3e-3, rtol=3e-3)
    md = advancing_attention.warmup(q, k, v, out, M, N, scale, grid=grid, target="ascend", **meta).metadata
    assert md["row_split"]["taken"] and md["kernel_type"] == "KERNEL_TYPE_MIX_AIC_1_2"
