"""Loops that advance pointers, on ascend against numpy and the sim.

A scalar pointer a loop carries (`p += stride`: a gated delta-rule recurrence, mamba's chunk-state
passing) is an int64 element offset carried beside its kernel argument (`p_gOffset` in the C++); a
pointer block advanced by the same step every iteration (`a_ptrs += BLOCK_K * stride_ak`) is its
start plus the iterations done times the step, also when the start's offsets depend on data (a
fused-MoE GEMM's A rows picked by sorted token ids, read lane by lane, with a warning). What cannot
be carried (a scalar pointer that switches tensors, a pointer block advanced by different amounts)
is an error at the kernel's line.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import xblock
import xblock.language as xl
from xblock.errors import CompilationError

FILE = "test_pointer_loops.py"


# ----------------------------------------------------------------------------- kernels
@xblock.jit
def delta_rule_scan(q_ptr, k_ptr, v_ptr, g_ptr, beta_ptr, o_ptr, T, K: xl.constexpr, V: xl.constexpr):
    """One head per program; state S [K, V]: S = S * exp(g_t); v_t -= k_t S; S += beta_t k_t v_t; o_t = q_t S."""
    h = xl.program_id(0)
    ik = xl.arange(0, K)
    iv = xl.arange(0, V)
    p_q = q_ptr + h * T * K + ik
    p_k = k_ptr + h * T * K + ik
    p_v = v_ptr + h * T * V + iv
    p_o = o_ptr + h * T * V + iv
    p_g = g_ptr + h * T  # scalar pointers, one step per timestep
    p_beta = beta_ptr + h * T
    S = xl.zeros([K, V], xl.float32)
    for _ in range(0, T):
        q = xl.load(p_q)
        k = xl.load(p_k)
        v = xl.load(p_v)
        S = S * xl.exp(xl.load(p_g))
        v = (v - xl.sum(S * k[:, None], 0)) * xl.load(p_beta)
        S = S + k[:, None] * v[None, :]
        xl.store(p_o, xl.sum(S * q[:, None], 0))
        p_q += K
        p_k += K
        p_v += V
        p_o += V
        p_g += 1
        p_beta += 1


@xblock.jit
def chunk_state_passing(states_ptr, dA_ptr, out_ptr, final_ptr, nchunks, dim, stride_chunk, stride_head,
                        BLOCK: xl.constexpr):
    """out[h, c] = the state entering chunk c; running = running * exp(dA[h, c]) + states[h, c]."""
    h = xl.program_id(0)
    offs = xl.program_id(1) * BLOCK + xl.arange(0, BLOCK)
    m = offs < dim
    s_ptrs = states_ptr + h * stride_head + offs
    o_ptrs = out_ptr + h * stride_head + offs
    dA_p = dA_ptr + h * nchunks
    running = xl.zeros([BLOCK], xl.float32)
    for _ in range(nchunks):
        xl.store(o_ptrs, running, mask=m)
        running = running * xl.exp(xl.load(dA_p)) + xl.load(s_ptrs, mask=m, other=0.0)
        s_ptrs += stride_chunk
        o_ptrs += stride_chunk
        dA_p += 1
    xl.store(final_ptr + h * dim + offs, running, mask=m)


@xblock.jit
def matmul_ptr_loop(a_ptr, b_ptr, c_ptr, M, N, K, s_am, s_ak, s_bk, s_bn, s_cm, s_cn,
                    BM: xl.constexpr, BN: xl.constexpr, BK: xl.constexpr):
    rm = xl.program_id(0) * BM + xl.arange(0, BM)
    rn = xl.program_id(1) * BN + xl.arange(0, BN)
    rk = xl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * s_am + rk[None, :] * s_ak
    b_ptrs = b_ptr + rk[:, None] * s_bk + rn[None, :] * s_bn
    acc = xl.zeros([BM, BN], c_ptr.dtype.element_ty)  # int32 for int8 operands
    for k in range(0, xl.cdiv(K, BK)):
        a = xl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < K - k * BK), other=0.0)
        b = xl.load(b_ptrs, mask=(rk[:, None] < K - k * BK) & (rn[None, :] < N), other=0.0)
        acc = xl.dot(a, b, acc, out_dtype=c_ptr.dtype.element_ty)
        a_ptrs += BK * s_ak
        b_ptrs += BK * s_bk
    xl.store(c_ptr + rm[:, None] * s_cm + rn[None, :] * s_cn, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@xblock.jit
def moe_grouped_gemm(a_ptr, w_ptr, c_ptr, topk_weights_ptr, sorted_ids_ptr, expert_ids_ptr, n_post_pad_ptr,
                     N, K, num_valid, s_am, s_ak, s_we, s_wn, s_wk, s_cm, s_cn,
                     BM: xl.constexpr, BN: xl.constexpr, BK: xl.constexpr, TOP_K: xl.constexpr):
    """C[token slot] = A[token // TOP_K] @ W[expert].T * routing weight, over the token ids sorted by expert."""
    pid = xl.program_id(0)
    n_tiles = xl.cdiv(N, BN)
    pid_m = pid // n_tiles
    pid_n = pid % n_tiles
    if pid_m * BM >= xl.load(n_post_pad_ptr):
        return
    tok = xl.load(sorted_ids_ptr + pid_m * BM + xl.arange(0, BM))
    valid = tok < num_valid  # padding slots hold num_valid
    e = xl.load(expert_ids_ptr + pid_m)
    rn = (pid_n * BN + xl.arange(0, BN)) % N
    rk = xl.arange(0, BK)
    a_ptrs = a_ptr + (tok[:, None] // TOP_K * s_am + rk[None, :] * s_ak)  # rows picked by token ids
    w_ptrs = w_ptr + e * s_we + (rk[:, None] * s_wk + rn[None, :] * s_wn)
    acc = xl.zeros((BM, BN), dtype=xl.float32)
    for k in range(0, xl.cdiv(K, BK)):
        a = xl.load(a_ptrs, mask=valid[:, None] & (rk[None, :] < K - k * BK), other=0.0)
        b = xl.load(w_ptrs, mask=rk[:, None] < K - k * BK, other=0.0)
        acc += xl.dot(a, b)
        a_ptrs += BK * s_ak
        w_ptrs += BK * s_wk
    acc = acc * xl.load(topk_weights_ptr + tok, mask=valid, other=0.0)[:, None]
    cn = pid_n * BN + xl.arange(0, BN)
    xl.store(c_ptr + tok[:, None] * s_cm + cn[None, :] * s_cn, acc, mask=valid[:, None] & (cn[None, :] < N))


@xblock.jit
def linked_walk(next_ptr, val_ptr, out_ptr, steps):
    """A while loop carrying a scalar pointer: follow `next` links, summing values."""
    i = xl.program_id(0)
    p = val_ptr + i
    j = i
    total = 0
    n = 0
    while n < steps:
        total += xl.load(p)
        j = xl.load(next_ptr + j)
        p = val_ptr + j  # jump to the next node
        n += 1
    xl.store(out_ptr + i, total)


@xblock.jit
def pick_row(x_ptr, out_ptr, n_cols, BLOCK: xl.constexpr):
    """An `if` yielding a scalar pointer into one tensor, then a stride loop of scalar steps."""
    row = xl.program_id(0)
    if row % 2 == 0:
        p = x_ptr + row * n_cols
    else:
        p = x_ptr + (row - 1) * n_cols + 1
    acc = 0.0
    for _ in range(BLOCK):
        acc += xl.load(p)
        p += 2
    xl.store(out_ptr + row, acc)


@xblock.jit
def switching_tensors(x_ptr, y_ptr, out_ptr, n):
    p = x_ptr
    acc = 0.0
    for i in range(n):
        acc += xl.load(p)
        p = y_ptr + i  # the carried pointer moves to another tensor
    xl.store(out_ptr, acc)


@xblock.jit
def uneven_steps(x_ptr, step_ptr, out_ptr, BLOCK: xl.constexpr):
    ptrs = x_ptr + xl.arange(0, BLOCK)
    acc = xl.zeros([BLOCK], xl.float32)
    for i in range(3):
        acc += xl.load(ptrs)
        ptrs += xl.load(step_ptr + i * BLOCK + xl.arange(0, BLOCK))  # a different step per lane
    xl.store(out_ptr + xl.arange(0, BLOCK), acc)


# ----------------------------------------------------------------------------- numpy references
def _delta_rule_ref(q, k, v, g, beta):
    H, T, _ = q.shape
    o = np.zeros(v.shape, np.float64)
    for h in range(H):
        S = np.zeros((q.shape[2], v.shape[2]))
        for t in range(T):
            S = S * np.exp(np.float64(g[h, t]))
            vt = (v[h, t] - (S * k[h, t][:, None]).sum(0)) * beta[h, t]
            S = S + k[h, t][:, None] * vt[None, :]
            o[h, t] = (S * q[h, t][:, None]).sum(0)
    return o


def _moe_inputs(rng, T, E, topk, BM, K, N):
    a = rng.standard_normal((T, K)).astype(np.float16)
    w = rng.standard_normal((E, N, K)).astype(np.float16)
    experts = np.stack([rng.choice(E, topk, replace=False) for _ in range(T)])
    weights = rng.random((T, topk)).astype(np.float32)
    flat = experts.reshape(-1)
    sorted_ids, expert_ids = [], []
    for e in range(E):
        ids = np.nonzero(flat == e)[0].tolist()
        if ids:
            ids += [T * topk] * ((-len(ids)) % BM)  # padding slots: an invalid token id
            sorted_ids += ids
            expert_ids += [e] * (len(ids) // BM)
    return a, w, experts, weights, np.array(sorted_ids, np.int32), np.array(expert_ids, np.int32)


def _launch(kernel, grid, args, target, **meta):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        kernel[grid](*args, target=target, **meta)
    return [str(x.message) for x in w]


# ----------------------------------------------------------------------------- tests
@pytest.mark.parametrize("T", [1, 5])
def test_delta_rule_recurrence_advances_scalar_pointers(T):
    rng = np.random.default_rng(T)
    H, K, V = 2, 16, 16
    q, k = (rng.standard_normal((H, T, K)).astype(np.float32) * 0.3 for _ in range(2))
    v = rng.standard_normal((H, T, V)).astype(np.float32)
    g = -rng.random((H, T)).astype(np.float32)
    beta = rng.random((H, T)).astype(np.float32)
    outs = {}
    for target in ("sim", "ascend"):
        o = np.zeros((H, T, V), np.float32)
        delta_rule_scan[(H,)](q, k, v, g, beta, o, T, K=K, V=V, target=target)
        outs[target] = o
    ref = _delta_rule_ref(q, k, v, g, beta)
    np.testing.assert_allclose(outs["ascend"], ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(outs["ascend"], outs["sim"], rtol=1e-5, atol=1e-6)


def test_scalar_pointer_offsets_are_named_cpp_variables():
    sig = {"q_ptr": "*fp32", "k_ptr": "*fp32", "v_ptr": "*fp32", "g_ptr": "*fp32", "beta_ptr": "*fp32",
           "o_ptr": "*fp32", "T": "i32"}
    cpp = xblock.compile(delta_rule_scan, target="ascend", signature=sig, constexprs={"K": 16, "V": 16}).asm["cpp"]
    assert "int64_t p_gOffset = " in cpp and "gGm.GetValue(p_gOffset)" in cpp
    assert "p_betaOffset = (1 + p_betaOffset);" in cpp


@pytest.mark.parametrize("dim", [31, 32, 33])
def test_chunk_state_passing(dim):
    rng = np.random.default_rng(dim)
    H, C, BLOCK = 2, 4, 32
    states = rng.standard_normal((H, C, dim)).astype(np.float32)
    dA = -rng.random((H, C)).astype(np.float32)
    ref, ref_final = np.zeros((H, C, dim)), np.zeros((H, dim))
    for h in range(H):
        r = np.zeros(dim)
        for c in range(C):
            ref[h, c] = r
            r = r * np.exp(np.float64(dA[h, c])) + states[h, c]
        ref_final[h] = r
    grid = (H, (dim + BLOCK - 1) // BLOCK)
    outs = {}
    for target in ("sim", "ascend"):
        out, final = np.zeros((H, C, dim), np.float32), np.zeros((H, dim), np.float32)
        chunk_state_passing[grid](states, dA, out, final, C, dim, dim, C * dim, BLOCK=BLOCK, target=target)
        outs[target] = (out, final)
    for got in outs.values():
        np.testing.assert_allclose(got[0], ref, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got[1], ref_final, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(outs["ascend"][0], outs["sim"][0], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float16, np.int8])
def test_matmul_advancing_pointer_blocks(dtype):
    rng = np.random.default_rng(7)
    M, N, K = 33, 20, 70
    if dtype == np.int8:
        a, b = rng.integers(-8, 8, (M, K)).astype(np.int8), rng.integers(-8, 8, (K, N)).astype(np.int8)
        out_t, ref = np.int32, a.astype(np.int64) @ b.astype(np.int64)
    else:
        a, b = rng.standard_normal((M, K)).astype(dtype), rng.standard_normal((K, N)).astype(dtype)
        out_t, ref = np.float32, a.astype(np.float64) @ b.astype(np.float64)
    outs = {}
    for target in ("sim", "ascend"):
        c = np.zeros((M, N), out_t)
        matmul_ptr_loop[(3, 1)](a, b, c, M, N, K, K, 1, N, 1, N, 1, BM=16, BN=32, BK=32, target=target)
        outs[target] = c
    if dtype == np.int8:
        np.testing.assert_array_equal(outs["ascend"], ref)
        np.testing.assert_array_equal(outs["sim"], ref)
    else:
        np.testing.assert_allclose(outs["ascend"], ref, rtol=1e-3, atol=1e-3)
        np.testing.assert_allclose(outs["ascend"], outs["sim"], rtol=1e-3, atol=1e-3)


def test_fused_moe_gemm_over_sorted_token_ids():
    rng = np.random.default_rng(3)
    T, E, topk, BM, BN, BK, K, N = 7, 3, 2, 16, 16, 32, 48, 40
    a, w, experts, weights, sids, eids = _moe_inputs(rng, T, E, topk, BM, K, N)
    n_post = np.array([len(sids)], np.int32)
    grid = (len(sids) // BM * ((N + BN - 1) // BN),)
    ref = np.zeros((T * topk, N))
    for t in range(T):
        for j in range(topk):
            ref[t * topk + j] = (a[t].astype(np.float64) @ w[experts[t, j]].astype(np.float64).T) * weights[t, j]
    outs, shown = {}, {}
    for target in ("sim", "ascend"):
        c = np.full((T * topk, N), -7.0, np.float32)  # every slot is written once
        shown[target] = _launch(moe_grouped_gemm, grid, (a, w, c, weights.reshape(-1), sids, eids, n_post, N, K,
                                                         T * topk, K, 1, N * K, K, 1, N, 1), target,
                                BM=BM, BN=BN, BK=BK, TOP_K=topk)
        outs[target] = c
    np.testing.assert_allclose(outs["ascend"], ref, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(outs["ascend"], outs["sim"], rtol=1e-4, atol=1e-4)
    # the gathered A rows are read lane by lane on the vector core, and it says so
    assert any("depend on data; it runs lane by lane" in m for m in shown["ascend"])


def test_while_and_if_carry_scalar_pointers():
    nxt = np.array([3, 0, 4, 1, 2], np.int32)  # node i links to nxt[i]
    vals = np.array([10, 20, 30, 40, 50], np.int32)
    out = np.zeros(5, np.int32)
    linked_walk[(5,)](nxt, vals, out, 4, target="ascend")
    ref = []
    for i in range(5):
        j, s = i, 0
        for _ in range(4):
            s += vals[j]
            j = nxt[j]
        ref.append(s)
    np.testing.assert_array_equal(out, ref)
    x = np.arange(6 * 20, dtype=np.float32)
    outs = {}
    for target in ("sim", "ascend"):
        o = np.zeros(6, np.float32)
        pick_row[(6,)](x, o, 20, BLOCK=8, target=target)
        outs[target] = o
    ref = [x[(r - r % 2) * 20 + r % 2:][:16:2].sum() for r in range(6)]
    np.testing.assert_array_equal(outs["ascend"], ref)
    np.testing.assert_array_equal(outs["sim"], ref)


def _error(kernel, args, **meta) -> str:
    with pytest.raises(CompilationError) as e:
        kernel[(1,)](*args, target="ascend", **meta)
    return str(e.value)


def test_a_scalar_pointer_that_switches_tensors_is_an_error_at_its_loop():
    x, y = np.ones(4, np.float32), np.ones(4, np.float32)
    msg = _error(switching_tensors, (x, y, np.zeros(1, np.float32), 4))
    assert FILE in msg and "must stay in one tensor" in msg and "xblock/backends" not in msg


def test_a_pointer_block_advanced_by_uneven_steps_is_an_error_at_its_loop():
    msg = _error(uneven_steps, (np.ones(64, np.float32), np.zeros(48, np.int32), np.zeros(16, np.float32)), BLOCK=16)
    assert FILE in msg and "pointer blocks" in msg and "xblock/backends" not in msg
