"""Fused attention forward as an unmodified Triton kernel, in the style of Triton's tutorial 06.

One program owns BLOCK_M query rows of one (batch, head); it walks the key/value blocks with an
online softmax in base 2 (`exp2`, the scale folded into log2(e)), rescaling the running output
`acc = acc * alpha + dot(p, v)`. Causal attention runs in two stages: the blocks left of the
diagonal without a mask, then the diagonal block with one. Ragged sequence ends are masked, so any
length works; fp16 and bf16 inputs accumulate in fp32.
"""

import numpy as np
import triton
import triton.language as tl


@triton.jit
def _attn_blocks(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn, start_m, qk_scale, seq_len,
                 offs_m, offs_n, offs_d, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr,
                 WARP_SPECIALIZE: tl.constexpr):
    if STAGE == 1:  # causal, left of the diagonal: every key precedes every query of the block
        lo, hi = 0, start_m * BLOCK_M
    elif STAGE == 2:  # causal, the diagonal block
        lo, hi = start_m * BLOCK_M, tl.minimum((start_m + 1) * BLOCK_M, seq_len)
    else:  # not causal: every key
        lo, hi = 0, seq_len
    for start_n in tl.range(lo, hi, BLOCK_N, warp_specialize=WARP_SPECIALIZE):
        cols = start_n + offs_n
        k = tl.load(k_base + cols[None, :] * stride_kn + offs_d[:, None], mask=cols[None, :] < seq_len, other=0.0)
        qk = tl.dot(q, k) * qk_scale
        if STAGE == 2:
            qk = tl.where(offs_m[:, None] >= cols[None, :], qk, -1.0e6)
        qk = tl.where(cols[None, :] < seq_len, qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_base + cols[:, None] * stride_vn + offs_d[None, :], mask=cols[:, None] < seq_len, other=0.0)
        acc = acc * alpha[:, None]
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_new
    return acc, l_i, m_i


@triton.jit
def attention_fwd(q_ptr, k_ptr, v_ptr, o_ptr, sm_scale, stride_z, stride_h, stride_m, heads, seq_len,
                  HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
                  WARP_SPECIALIZE: tl.constexpr = False):
    """q, k, v, o: [Z, H, seq_len, HEAD_DIM] with a unit stride on the last dim; grid
    (cdiv(seq_len, BLOCK_M), Z * H)."""
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    base = (off_hz // heads).to(tl.int64) * stride_z + (off_hz % heads).to(tl.int64) * stride_h
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + base + offs_m[:, None] * stride_m + offs_d[None, :], mask=offs_m[:, None] < seq_len,
                other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    qk_scale = sm_scale * 1.4426950408889634  # exp(x) = exp2(x * log2(e))
    if CAUSAL:
        acc, l_i, m_i = _attn_blocks(acc, l_i, m_i, q, k_ptr + base, v_ptr + base, stride_m, stride_m, start_m,
                                     qk_scale, seq_len, offs_m, offs_n, offs_d, BLOCK_M, BLOCK_N, 1,
                                     WARP_SPECIALIZE)
        acc, l_i, m_i = _attn_blocks(acc, l_i, m_i, q, k_ptr + base, v_ptr + base, stride_m, stride_m, start_m,
                                     qk_scale, seq_len, offs_m, offs_n, offs_d, BLOCK_M, BLOCK_N, 2,
                                     WARP_SPECIALIZE)
    else:
        acc, l_i, m_i = _attn_blocks(acc, l_i, m_i, q, k_ptr + base, v_ptr + base, stride_m, stride_m, start_m,
                                     qk_scale, seq_len, offs_m, offs_n, offs_d, BLOCK_M, BLOCK_N, 3,
                                     WARP_SPECIALIZE)
    out = acc / l_i[:, None]
    tl.store(o_ptr + base + offs_m[:, None] * stride_m + offs_d[None, :], out.to(o_ptr.dtype.element_ty),
             mask=offs_m[:, None] < seq_len)


def grid(seq_len, batch, heads, block_m):
    return (triton.cdiv(seq_len, block_m), batch * heads)


def reference(q, k, v, sm_scale, causal):
    """numpy attention in fp32 (inputs upcast): softmax(q k^T * scale [+ causal mask]) v."""
    q, k, v = (np.asarray(t, np.float32) for t in (q, k, v))
    s = np.einsum("zhmd,zhnd->zhmn", q, k) * sm_scale
    if causal:
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    s = s - s.max(-1, keepdims=True)
    p = np.exp(s)
    return np.einsum("zhmn,zhnd->zhmd", p / p.sum(-1, keepdims=True), v)
