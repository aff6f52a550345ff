"""Kernels whose blocks are sized for a GPU and overflow the Ascend unified buffer (issue #30): a
prompt-cache (context) attention forward with 128 x 128 blocks and head dim 128 (online softmax, two
dots per key block, causal with the cached prefix) and an AWQ int4 dequantization of 128 x 256 fp16
tiles (packed int32 words unpacked by three interleaves and nibble shifts, zero points and scales
per group), written as public Triton kernels write them. Unmodified @triton.jit kernels against
numpy on every target that runs here (ascend computes them in row chunks: tests/ascend/plan/
test_auto_split.py checks the plan), and compiled to cubin for cuda."""

import numpy as np
import pytest

import xblock
from xblock.backends.cuda.precompile import precompile

triton = pytest.importorskip("triton")
tl = triton.language

RUN_TARGETS = ["sim", "cpu", "ascend"]


@triton.jit
def context_attention_fwd(Q, K, V, Out, sm_scale, B_Start_Loc, B_Seqlen, B_Prompt_Cache_Len,
                          stride_qbs, stride_qh, stride_kbs, stride_kh, stride_vbs, stride_vh,
                          stride_obs, stride_oh, kv_group_num,
                          BLOCK_M: tl.constexpr, BLOCK_DMODEL: tl.constexpr, BLOCK_N: tl.constexpr):
    """One program: BLOCK_M new tokens of one (request, head). A request's keys and values are its
    `cache_len` cached tokens followed by its new ones; token i of the new ones sees keys 0 ..
    cache_len + i. Q/Out rows start at B_Start_Loc[b], K/V rows at B_Start_Loc[b] - cache_len."""
    cur_batch = tl.program_id(0)
    cur_head = tl.program_id(1)
    start_m = tl.program_id(2)
    cur_kv_head = cur_head // kv_group_num
    seq_len = tl.load(B_Seqlen + cur_batch)
    cache_len = tl.load(B_Prompt_Cache_Len + cur_batch)
    q_len = seq_len - cache_len
    q_start = tl.load(B_Start_Loc + cur_batch)
    kv_start = q_start - cache_len
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_DMODEL)
    q = tl.load(Q + (q_start + offs_m[:, None]) * stride_qbs + cur_head * stride_qh + offs_d[None, :],
                mask=offs_m[:, None] < q_len, other=0.0)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_DMODEL], dtype=tl.float32)
    end_n = tl.minimum(cache_len + (start_m + 1) * BLOCK_M, seq_len)
    for start_n in range(0, end_n, BLOCK_N):
        cols = start_n + offs_n
        k = tl.load(K + (kv_start + cols[None, :]) * stride_kbs + cur_kv_head * stride_kh + offs_d[:, None],
                    mask=cols[None, :] < seq_len, other=0.0)
        qk = tl.dot(q, k) * sm_scale
        qk = tl.where(offs_m[:, None] + cache_len >= cols[None, :], qk, -1.0e8)
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp(qk - m_ij[:, None])
        alpha = tl.exp(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(V + (kv_start + cols[:, None]) * stride_vbs + cur_kv_head * stride_vh + offs_d[None, :],
                    mask=cols[:, None] < seq_len, other=0.0)
        acc += tl.dot(p.to(v.dtype), v)
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(Out + (q_start + offs_m[:, None]) * stride_obs + cur_head * stride_oh + offs_d[None, :],
             acc.to(Out.dtype.element_ty), mask=offs_m[:, None] < q_len)


@triton.jit
def awq_dequantize(qweight_ptr, scales_ptr, zeros_ptr, out_ptr, n_rows, n_words, group_size,
                   BLOCK_R: tl.constexpr, BLOCK_W: tl.constexpr):
    """out[r, 8 w + j] = (nibble j of qweight[r, w] - nibble j of zeros[g, w]) * scales[g, 8 w + j], with
    g = r // group_size and the nibbles in AWQ's order (column j sits at bits 4 * (j // 2 + 4 * (j % 2))).
    A program's BLOCK_R rows lie in one group (BLOCK_R divides group_size)."""
    pid_r = tl.program_id(0)
    pid_w = tl.program_id(1)
    rows = pid_r * BLOCK_R + tl.arange(0, BLOCK_R)
    words = pid_w * BLOCK_W + tl.arange(0, BLOCK_W)
    wmask = (rows[:, None] < n_rows) & (words[None, :] < n_words)
    packed = tl.load(qweight_ptr + rows[:, None] * n_words + words[None, :], mask=wmask, other=0)
    packed = tl.interleave(packed, packed)
    packed = tl.interleave(packed, packed)
    packed = tl.interleave(packed, packed)
    nibble = tl.arange(0, 4)[:, None] + (tl.arange(0, 2) * 4)[None, :]
    shifts = tl.reshape(nibble, (8,)) * 4
    shifts = tl.reshape(tl.broadcast_to(shifts[None, :], (BLOCK_R * BLOCK_W, 8)), (BLOCK_R, BLOCK_W * 8))
    q = (packed >> shifts) & 0xF
    group = (pid_r * BLOCK_R) // group_size + tl.arange(0, 1)
    zp = tl.load(zeros_ptr + group[:, None] * n_words + words[None, :], mask=words[None, :] < n_words, other=0)
    zp = tl.interleave(zp, zp)
    zp = tl.interleave(zp, zp)
    zp = tl.interleave(zp, zp)
    z = (tl.broadcast_to(zp, (BLOCK_R, BLOCK_W * 8)) >> shifts) & 0xF
    cols = pid_w * BLOCK_W * 8 + tl.arange(0, BLOCK_W * 8)
    s = tl.load(scales_ptr + group[:, None] * (n_words * 8) + cols[None, :], mask=cols[None, :] < n_words * 8,
                other=0.0)
    w = (q - z).to(tl.float16) * tl.broadcast_to(s, (BLOCK_R, BLOCK_W * 8))
    omask = (rows[:, None] < n_rows) & (cols[None, :] < n_words * 8)
    tl.store(out_ptr + rows[:, None] * (n_words * 8) + cols[None, :], w, mask=omask)


# ----- inputs and numpy references ----------------------------------------------------------------
def attention_case(seqs, caches, heads=2, kv_group=1, head_dim=128, seed=0):
    """(kernel arguments, output array, the rows of it the kernel writes, numpy reference of them)."""
    rng = np.random.default_rng(seed)
    qlens = [s - c for s, c in zip(seqs, caches)]
    kv_starts = np.cumsum([0] + list(seqs[:-1]))
    q_starts = kv_starts + np.array(caches)
    tot, kv_heads = sum(seqs), heads // kv_group
    q = rng.standard_normal((tot, heads, head_dim)).astype(np.float16)
    k, v = (rng.standard_normal((tot, kv_heads, head_dim)).astype(np.float16) for _ in range(2))
    out = np.zeros_like(q)
    scale = float(1 / np.sqrt(head_dim))
    args = [q, k, v, out, scale, q_starts.astype(np.int32), np.array(seqs, np.int32), np.array(caches, np.int32),
            heads * head_dim, head_dim, kv_heads * head_dim, head_dim, kv_heads * head_dim, head_dim,
            heads * head_dim, head_dim, kv_group]
    want = np.zeros((tot, heads, head_dim), np.float32)
    for b, (seq, cache) in enumerate(zip(seqs, caches)):
        rows = slice(q_starts[b], q_starts[b] + qlens[b])
        keys = slice(kv_starts[b], kv_starts[b] + seq)
        for h in range(heads):
            s = q[rows, h].astype(np.float32) @ k[keys, h // kv_group].astype(np.float32).T * scale
            s = np.where(np.arange(qlens[b])[:, None] + cache >= np.arange(seq)[None, :], s, -np.inf)
            p = np.exp(s - s.max(1, keepdims=True))
            want[rows, h] = (p / p.sum(1, keepdims=True)) @ v[keys, h // kv_group].astype(np.float32)
    written = np.concatenate([np.arange(q_starts[b], q_starts[b] + qlens[b]) for b in range(len(seqs))])
    return args, out, written, want[written]


def attention_grid(seqs, caches, heads=2, block_m=128):
    return (len(seqs), heads, -(-max(s - c for s, c in zip(seqs, caches)) // block_m))


def awq_case(n_rows, n_words, group_size=128, seed=1):
    """(kernel arguments, output array, numpy reference)."""
    rng = np.random.default_rng(seed)
    groups = -(-n_rows // group_size)
    qweight = rng.integers(-2 ** 31, 2 ** 31, (n_rows, n_words), dtype=np.int64).astype(np.int32)
    zeros = rng.integers(-2 ** 31, 2 ** 31, (groups, n_words), dtype=np.int64).astype(np.int32)
    scales = (rng.standard_normal((groups, n_words * 8)) * 0.01).astype(np.float16)
    out = np.zeros((n_rows, n_words * 8), np.float16)
    shifts = np.array([4 * (j // 2 + 4 * (j % 2)) for j in range(8)], np.uint32)
    nib = lambda a: ((a.view(np.uint32)[:, :, None] >> shifts) & 0xF).reshape(len(a), -1).astype(np.int32)  # noqa: E731
    g = np.arange(n_rows) // group_size
    want = (nib(qweight) - nib(zeros)[g]).astype(np.float16) * scales[g]
    return [qweight, scales, zeros, out, n_rows, n_words, group_size], out, want


def awq_grid(n_rows, n_words, block_r=128, block_w=32):
    return (-(-n_rows // block_r), -(-n_words // block_w))


# ----- tests --------------------------------------------------------------------------------------
@pytest.mark.parametrize("target", RUN_TARGETS)
def test_prompt_cache_attention(target):
    seqs, caches = (200, 129), (73, 0)  # new tokens: 127 (a cached prefix), 129 (two query blocks)
    args, out, rows, want = attention_case(seqs, caches)
    xblock.jit(context_attention_fwd)[attention_grid(seqs, caches)](*args, BLOCK_M=128, BLOCK_DMODEL=128,
                                                                    BLOCK_N=128, target=target)
    np.testing.assert_allclose(out[rows].astype(np.float32), want, atol=1e-2, rtol=1e-2)


@pytest.mark.parametrize("target", RUN_TARGETS)
def test_awq_dequantize(target):
    args, out, want = awq_case(129, 31)  # a tail row block and a tail of words
    xblock.jit(awq_dequantize)[awq_grid(129, 31)](*args, BLOCK_R=128, BLOCK_W=32, target=target)
    np.testing.assert_array_equal(out, want)


def test_ub_split_kernels_compile_for_cuda():
    args, _, _, _ = attention_case((64,), (0,))
    assert "cubin" in precompile(context_attention_fwd, tuple(args),
                                 {"BLOCK_M": 128, "BLOCK_DMODEL": 128, "BLOCK_N": 128}).asm
    args, _, _ = awq_case(128, 32)
    assert "cubin" in precompile(awq_dequantize, tuple(args), {"BLOCK_R": 128, "BLOCK_W": 32}).asm
