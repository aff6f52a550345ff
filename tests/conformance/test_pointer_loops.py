"""Loops that advance pointers, as public Triton kernels write them: scalar pointers stepped once per
timestep (a gated delta-rule recurrence, mamba's chunk-state passing), pointer blocks advanced once per
K step (a plain matmul, a fused-MoE GEMM whose A rows are picked by token ids sorted by expert, masked
by token validity). Unmodified @triton.jit kernels against numpy on every target that runs here, and
compiled to cubin for cuda."""

import numpy as np
import pytest

import xblock
from xblock.backends.cuda.precompile import precompile

triton = pytest.importorskip("triton")
tl = triton.language

RUN_TARGETS = ["sim", "cpu", "ascend"]


@triton.jit
def gated_delta_fwd(q_ptr, k_ptr, v_ptr, g_ptr, beta_ptr, o_ptr, T, K: tl.constexpr, V: tl.constexpr):
    i_h = tl.program_id(0)
    o_k = tl.arange(0, K)
    o_v = tl.arange(0, V)
    p_q = q_ptr + i_h * T * K + o_k
    p_k = k_ptr + i_h * T * K + o_k
    p_v = v_ptr + i_h * T * V + o_v
    p_o = o_ptr + i_h * T * V + o_v
    p_g = g_ptr + i_h * T
    p_beta = beta_ptr + i_h * T
    b_h = tl.zeros([K, V], dtype=tl.float32)
    for _ in range(0, T):
        b_q = tl.load(p_q).to(tl.float32)
        b_k = tl.load(p_k).to(tl.float32)
        b_v = tl.load(p_v).to(tl.float32)
        b_h *= tl.exp(tl.load(p_g))
        b_v -= tl.sum(b_h * b_k[:, None], 0)
        b_v *= tl.load(p_beta)
        b_h += b_k[:, None] * b_v[None, :]
        tl.store(p_o, tl.sum(b_h * b_q[:, None], 0).to(p_o.dtype.element_ty))
        p_q += K
        p_k += K
        p_v += V
        p_o += V
        p_g += 1
        p_beta += 1


@triton.jit
def state_passing_fwd(states_ptr, dA_ptr, out_ptr, nchunks, dim, stride_c, stride_h, BLOCK: tl.constexpr):
    pid_h = tl.program_id(0)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    states_ptrs = states_ptr + pid_h * stride_h + offs
    out_ptrs = out_ptr + pid_h * stride_h + offs
    dA_p = dA_ptr + pid_h * nchunks
    states = tl.zeros((BLOCK,), dtype=tl.float32)
    for c in range(nchunks):
        tl.store(out_ptrs, states, mask=offs < dim)
        new_states = tl.load(states_ptrs, mask=offs < dim, other=0.0).to(tl.float32)
        states = tl.exp(tl.load(dA_p)) * states + new_states
        states_ptrs += stride_c
        out_ptrs += stride_c
        dA_p += 1


@triton.jit
def matmul_advance(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < K - k * BLOCK_K), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < K - k * BLOCK_K) & (offs_n[None, :] < N), other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + stride_cm * offs_m[:, None] + stride_cn * offs_n[None, :]
    tl.store(c_ptrs, accumulator, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def fused_moe_gemm(a_ptr, b_ptr, c_ptr, topk_weights_ptr, sorted_token_ids_ptr, expert_ids_ptr,
                   num_tokens_post_padded_ptr, N, K, num_valid_tokens,
                   stride_am, stride_ak, stride_be, stride_bk, stride_bn, stride_cm, stride_cn,
                   BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                   MUL_ROUTED_WEIGHT: tl.constexpr, top_k: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n
    num_tokens_post_padded = tl.load(num_tokens_post_padded_ptr)
    if pid_m * BLOCK_SIZE_M >= num_tokens_post_padded:
        return
    offs_token_id = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_token = tl.load(sorted_token_ids_ptr + offs_token_id)
    token_mask = offs_token < num_valid_tokens
    off_experts = tl.load(expert_ids_ptr + pid_m)
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_token[:, None] // top_k * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + off_experts * stride_be + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=token_mask[:, None] & (offs_k[None, :] < K - k * BLOCK_SIZE_K), other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator += tl.dot(a, b)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    if MUL_ROUTED_WEIGHT:
        moe_weight = tl.load(topk_weights_ptr + offs_token, mask=token_mask, other=0)
        accumulator = accumulator * moe_weight[:, None]
    accumulator = accumulator.to(c_ptr.dtype.element_ty)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_token[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, accumulator, mask=token_mask[:, None] & (offs_cn[None, :] < N))


def _gdn_inputs():
    rng = np.random.default_rng(0)
    H, T, K, V = 2, 6, 16, 32
    q, k = (rng.standard_normal((H, T, K)).astype(np.float32) * 0.3 for _ in range(2))
    v = rng.standard_normal((H, T, V)).astype(np.float32)
    g = -rng.random((H, T)).astype(np.float32)
    beta = rng.random((H, T)).astype(np.float32)
    ref = np.zeros((H, T, V))
    for h in range(H):
        S = np.zeros((K, V))
        for t in range(T):
            S = S * np.exp(np.float64(g[h, t]))
            vt = (v[h, t] - (S * k[h, t][:, None]).sum(0)) * beta[h, t]
            S = S + k[h, t][:, None] * vt[None, :]
            ref[h, t] = (S * q[h, t][:, None]).sum(0)
    return (q, k, v, g, beta), ref, (H, T, K, V)


def _moe_inputs():
    rng = np.random.default_rng(5)
    T, E, topk, BM, K, N = 9, 4, 2, 16, 64, 48
    a = rng.standard_normal((T, K)).astype(np.float16)
    b = rng.standard_normal((E, N, K)).astype(np.float16)
    experts = np.stack([rng.choice(E, topk, replace=False) for _ in range(T)])
    weights = rng.random((T, topk)).astype(np.float32)
    flat = experts.reshape(-1)
    sids, eids = [], []
    for e in range(E):
        ids = np.nonzero(flat == e)[0].tolist()
        if ids:
            ids += [T * topk] * ((-len(ids)) % BM)
            sids += ids
            eids += [e] * (len(ids) // BM)
    ref = np.zeros((T * topk, N))
    for t in range(T):
        for j in range(topk):
            ref[t * topk + j] = (a[t].astype(np.float64) @ b[experts[t, j]].astype(np.float64).T) * weights[t, j]
    return a, b, weights.reshape(-1), np.array(sids, np.int32), np.array(eids, np.int32), ref, (T, topk, BM, K, N)


@pytest.mark.parametrize("target", RUN_TARGETS)
def test_gated_delta_rule_recurrence(target):
    ins, ref, (H, T, K, V) = _gdn_inputs()
    o = np.zeros((H, T, V), np.float32)
    xblock.jit(gated_delta_fwd)[(H,)](*ins, o, T, K=K, V=V, target=target)
    np.testing.assert_allclose(o, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("target", RUN_TARGETS)
def test_chunk_state_passing(target):
    rng = np.random.default_rng(1)
    H, C, D, BLOCK = 3, 5, 40, 32
    states = rng.standard_normal((H, C, D)).astype(np.float32)
    dA = -rng.random((H, C)).astype(np.float32)
    out = np.zeros((H, C, D), np.float32)
    xblock.jit(state_passing_fwd)[(H, 2)](states, dA, out, C, D, D, C * D, BLOCK=BLOCK, target=target)
    ref = np.zeros((H, C, D))
    for h in range(H):
        r = np.zeros(D)
        for c in range(C):
            ref[h, c] = r
            r = r * np.exp(np.float64(dA[h, c])) + states[h, c]
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("target", RUN_TARGETS)
def test_matmul_advancing_pointer_blocks(target):
    rng = np.random.default_rng(2)
    M, N, K = 40, 36, 70
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    xblock.jit(matmul_advance)[(3, 3)](a, b, c, M, N, K, K, 1, N, 1, N, 1, BLOCK_M=16, BLOCK_N=16, BLOCK_K=32,
                                       target=target)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("target", RUN_TARGETS)
def test_fused_moe_gemm(target):
    a, b, w, sids, eids, ref, (T, topk, BM, K, N) = _moe_inputs()
    c = np.full((T * topk, N), -7.0, np.float32)
    n_post = np.array([len(sids)], np.int32)
    BN = 32
    grid = (len(sids) // BM * ((N + BN - 1) // BN),)
    xblock.jit(fused_moe_gemm)[grid](a, b, c, w, sids, eids, n_post, N, K, T * topk, K, 1, N * K, 1, K, N, 1,
                                     BLOCK_SIZE_M=BM, BLOCK_SIZE_N=BN, BLOCK_SIZE_K=32, MUL_ROUTED_WEIGHT=True,
                                     top_k=topk, target=target)
    np.testing.assert_allclose(c, ref, rtol=1e-3, atol=1e-3)


def test_pointer_loops_compile_for_cuda():
    ins, _, (H, T, K, V) = _gdn_inputs()
    o = np.zeros((H, T, V), np.float32)
    assert "cubin" in precompile(gated_delta_fwd, (*ins, o, T), {"K": K, "V": V}).asm
    st = np.zeros((3, 5, 40), np.float32)
    assert "cubin" in precompile(state_passing_fwd, (st, np.zeros((3, 5), np.float32), st, 5, 40, 40, 200),
                                 {"BLOCK": 32}).asm
    a = np.zeros((40, 64), np.float16)
    assert "cubin" in precompile(matmul_advance, (a, a.T.copy(), np.zeros((40, 40), np.float32), 40, 40, 64, 64, 1,
                                                  40, 1, 40, 1), {"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 32}).asm
    a, b, w, sids, eids, _, (T, topk, BM, K, N) = _moe_inputs()
    meta = {"BLOCK_SIZE_M": BM, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32, "MUL_ROUTED_WEIGHT": True, "top_k": topk}
    assert "cubin" in precompile(fused_moe_gemm, (a, b, np.zeros((T * topk, N), np.float32), w, sids, eids,
                                                  np.array([len(sids)], np.int32), N, K, T * topk, K, 1, N * K, 1, K,
                                                  N, 1), meta).asm
