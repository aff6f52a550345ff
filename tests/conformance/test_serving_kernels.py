"""Serving kernels in the forms SGLang, LightLLM and TorchInductor write them (written here, not copied):
unmodified @triton.jit kernels against numpy on every target that runs here, and compiled to cubin for
cuda. A sigmoid top-k router over packed uint64 keys, a vocab-parallel embedding with a runtime pad id,
Inductor's mm template (wrapped `% M` rows, EVEN_K or K masks), `if ptr:` on an optional pointer, float
`%` with negative operands (C's fmod), and tutorial 09's persistent matmul."""

import numpy as np
import pytest

import xblock
from xblock.backends.cuda.precompile import precompile

triton = pytest.importorskip("triton")
tl = triton.language

RUN_TARGETS = ["sim", "cpu", "ascend"]
pytestmark = pytest.mark.filterwarnings("ignore::xblock.errors.XBlockWarning")  # ascend: lane-by-lane ops


@triton.jit
def sigmoid_topk_router(logits_ptr, bias_ptr, ids_ptr, weights_ptr, n_experts, TOPK: tl.constexpr,
                        BLOCK: tl.constexpr):
    """Top-k experts of a token: sigmoid scores plus a correction bias pick the experts (a key packs the
    biased score's bits over the reversed expert index; tl.max over uint64 keys), the unbiased scores
    weigh them, renormalized."""
    tok = tl.program_id(0)
    e = tl.arange(0, BLOCK)
    live = e < n_experts
    s = tl.sigmoid(tl.load(logits_ptr + tok * n_experts + e, mask=live, other=0.0).to(tl.float32))
    biased = s + tl.load(bias_ptr + e, mask=live, other=0.0)
    key = (biased.to(tl.uint32, bitcast=True).to(tl.uint64) << 32) | (BLOCK - 1 - e).to(tl.uint64)
    key = tl.where(live, key, 0)
    total = 0.0
    for k in tl.static_range(TOPK):
        best = tl.max(key, axis=0)
        idx = (BLOCK - 1) - (best & 0xFFFFFFFF).to(tl.int32)
        w = tl.sum(tl.where(e == idx, s, 0.0), axis=0)
        tl.store(ids_ptr + tok * TOPK + k, idx)
        tl.store(weights_ptr + tok * TOPK + k, w)
        total += w
        key = tl.where(e == idx, 0, key)
    ks = tl.arange(0, TOPK)
    tl.store(weights_ptr + tok * TOPK + ks, tl.load(weights_ptr + tok * TOPK + ks) / total)


@pytest.mark.parametrize("target", RUN_TARGETS)
def test_sigmoid_topk_router(target):
    rng = np.random.default_rng(0)
    tokens, experts, topk = 5, 24, 4
    logits = rng.standard_normal((tokens, experts)).astype(np.float32)
    bias = (rng.standard_normal(experts) * 0.1).astype(np.float32)
    ids, weights = np.zeros((tokens, topk), np.int32), np.zeros((tokens, topk), np.float32)
    xblock.jit(sigmoid_topk_router)[(tokens,)](logits, bias, ids, weights, experts, TOPK=topk, BLOCK=32,
                                               target=target)
    s = 1 / (1 + np.exp(-logits.astype(np.float64)))
    want = np.argsort(-(s + bias), axis=1, kind="stable")[:, :topk]
    np.testing.assert_array_equal(ids, want)
    w = np.take_along_axis(s, want, 1)
    np.testing.assert_allclose(weights, w / w.sum(1, keepdims=True), rtol=1e-5)


@triton.jit
def vocab_parallel_embedding(ids_ptr, weight_ptr, out_ptr, n_tokens, vocab_start, vocab_end, pad_id,
                             HIDDEN: tl.constexpr, BLOCK_N: tl.constexpr):
    """One tensor-parallel shard's rows: tokens of other shards (and the pad past the end) read zeros."""
    offs = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    ids = tl.load(ids_ptr + offs, mask=offs < n_tokens, other=pad_id)
    mine = (ids >= vocab_start) & (ids < vocab_end)
    local = tl.where(mine, ids - vocab_start, 0)
    h = tl.arange(0, HIDDEN)
    rows = tl.load(weight_ptr + local[:, None] * HIDDEN + h[None, :], mask=mine[:, None], other=0.0)
    tl.store(out_ptr + offs[:, None] * HIDDEN + h[None, :], rows, mask=(offs < n_tokens)[:, None])


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("id_dtype,pad", [(np.int64, -1), (np.int64, 2**40), (np.int32, 7)])
def test_vocab_parallel_embedding_with_a_runtime_pad_id(target, id_dtype, pad):
    rng = np.random.default_rng(1)
    n, lo, hi, hidden = 45, 16, 48, 16
    ids = rng.integers(0, 64, n).astype(id_dtype)
    weight = rng.standard_normal((hi - lo, hidden)).astype(np.float32)
    out = np.full((n, hidden), 7, np.float32)
    xblock.jit(vocab_parallel_embedding)[(triton.cdiv(n, 16),)](ids, weight, out, n, lo, hi, pad, HIDDEN=hidden,
                                                                BLOCK_N=16, target=target)
    mine = (ids >= lo) & (ids < hi)
    np.testing.assert_array_equal(out, np.where(mine[:, None], weight[np.clip(ids - lo, 0, hi - lo - 1)], 0))


@triton.jit
def inductor_mm(A, B, C, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                EVEN_K: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """TorchInductor's mm template: rows and columns wrapped `% M`/`% N` (no load masks on them), masks on
    K only unless EVEN_K, `acc += tl.dot(a, b)`, the store masked to the real rows and columns."""
    pid = tl.program_id(0)
    grid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // grid_n
    pid_n = pid % grid_n
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ram = tl.max_contiguous(tl.multiple_of(rm % M, BLOCK_M), BLOCK_M)
    rbn = tl.max_contiguous(tl.multiple_of(rn % N, BLOCK_N), BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    A = A + (ram[:, None] * stride_am + rk[None, :] * stride_ak)
    B = B + (rk[:, None] * stride_bk + rbn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(K, 0, -BLOCK_K):
        if EVEN_K:
            a = tl.load(A)
            b = tl.load(B)
        else:
            a = tl.load(A, mask=rk[None, :] < k, other=0.)
            b = tl.load(B, mask=rk[:, None] < k, other=0.)
        acc += tl.dot(a, b, allow_tf32=False)
        A += BLOCK_K * stride_ak
        B += BLOCK_K * stride_bk
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    idx_m = rm[:, None]
    idx_n = rn[None, :]
    mask = (idx_m < M) & (idx_n < N)
    tl.store(C + (idx_m * stride_cm + idx_n * stride_cn), acc.to(C.dtype.element_ty), mask=mask)


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("M,N,K,even_k", [(37, 45, 64, True), (37, 45, 50, False), (70, 20, 96, True)])
def test_inductor_mm_template(target, M, N, K, even_k):
    rng = np.random.default_rng(M + N + K)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    grid = (triton.cdiv(M, 32) * triton.cdiv(N, 32),)
    xblock.jit(inductor_mm)[grid](a, b, c, M, N, K, K, 1, N, 1, N, 1, EVEN_K=even_k, BLOCK_M=32, BLOCK_N=32,
                                  BLOCK_K=32, target=target)
    np.testing.assert_allclose(c.astype(np.float32), a.astype(np.float32) @ b.astype(np.float32), atol=3e-2,
                               rtol=1e-2)


@triton.jit
def paged_positions(x_ptr, kv_start_idx, out_ptr, n, BLOCK: tl.constexpr):
    """`if kv_start_idx:` where the pointer may be None (Triton specializes None to a constexpr)."""
    req = tl.program_id(0)
    if kv_start_idx:
        start = tl.load(kv_start_idx + req)
    else:
        start = 0
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + start + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + req * BLOCK + offs, x, mask=offs < n)


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("given", [False, True])
def test_an_optional_pointer_tested_for_truth(target, given):
    x = np.arange(100, dtype=np.float32)
    starts = np.array([5, 50, 17], np.int32) if given else None
    out = np.full((3, 32), -1, np.float32)
    xblock.jit(paged_positions)[(3,)](x, starts, out, 20, BLOCK=32, target=target)
    first = starts if given else np.zeros(3, np.int32)
    want = np.full((3, 32), -1, np.float32)
    want[:, :20] = x[first[:, None] + np.arange(20)]
    np.testing.assert_array_equal(out, want)


@triton.jit
def float_remainder(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    on = offs < n
    x = tl.load(x_ptr + offs, mask=on, other=1.0)
    y = tl.load(y_ptr + offs, mask=on, other=1.0)
    tl.store(out_ptr + offs, x % y, mask=on)
    tl.store(out_ptr + n + offs, x % 0.75, mask=on)


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_float_mod_takes_the_sign_of_the_dividend(target, dtype):
    rng = np.random.default_rng(2)
    n = 200
    x = (rng.standard_normal(n) * 40).astype(dtype)
    y = (rng.standard_normal(n) * 3).astype(dtype)
    out = np.zeros(2 * n, dtype)
    xblock.jit(float_remainder)[(triton.cdiv(n, 64),)](x, y, out, n, BLOCK=64, target=target)
    want = np.concatenate([np.fmod(x, y), np.fmod(x, dtype(0.75))])
    np.testing.assert_array_equal(out, want)
    assert (np.sign(out[:n])[out[:n] != 0] == np.sign(x)[out[:n] != 0]).all()


@triton.jit
def _tile_coords(tile_id, tiles_in_group, tiles_m, GROUP_M: tl.constexpr):
    group = tile_id // tiles_in_group
    first_m = group * GROUP_M
    size_m = min(tiles_m - first_m, GROUP_M)
    return first_m + (tile_id % size_m), (tile_id % tiles_in_group) // size_m


@triton.jit
def persistent_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                      stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                      GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr):
    """Tutorial 09's persistent loop: NUM_SMS programs walk the tiles; the epilogue's tile id runs apart."""
    start_pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    num_tiles = tiles_m * tiles_n
    tiles_in_group = GROUP_M * tiles_n
    tile_id_c = start_pid - NUM_SMS
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=True):
        pid_m, pid_n = _tile_coords(tile_id, tiles_in_group, tiles_m, GROUP_M)
        offs_am = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_bn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        offs_am = tl.where(offs_am < M, offs_am, 0)
        offs_bn = tl.where(offs_bn < N, offs_bn, 0)
        offs_am = tl.max_contiguous(tl.multiple_of(offs_am, BLOCK_M), BLOCK_M)
        offs_bn = tl.max_contiguous(tl.multiple_of(offs_bn, BLOCK_N), BLOCK_N)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(k_tiles):
            offs_k = ki * BLOCK_K + tl.arange(0, BLOCK_K)
            a = tl.load(a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak),
                        mask=offs_k[None, :] < K, other=0.0)
            b = tl.load(b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn),
                        mask=offs_k[:, None] < K, other=0.0)
            acc = tl.dot(a, b, acc)
        tile_id_c += NUM_SMS
        pid_m, pid_n = _tile_coords(tile_id_c, tiles_in_group, tiles_m, GROUP_M)
        offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
        tl.store(c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :], acc.to(tl.float16),
                 mask=c_mask)


@pytest.mark.parametrize("target", RUN_TARGETS)
def test_persistent_matmul(target):
    rng = np.random.default_rng(3)
    M, N, K = 100, 70, 72
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    xblock.jit(persistent_matmul)[(3,)](a, b, c, M, N, K, K, 1, N, 1, N, 1, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32,
                                        GROUP_M=2, NUM_SMS=3, target=target)
    np.testing.assert_allclose(c.astype(np.float32), a.astype(np.float32) @ b.astype(np.float32), atol=3e-2,
                               rtol=1e-2)


def test_serving_kernels_compile_for_cuda():
    f32, f16, i32, i64 = (np.zeros(64, t) for t in (np.float32, np.float16, np.int32, np.int64))
    builds = [
        precompile(sigmoid_topk_router, (f32, f32, i32, f32, 24), {"TOPK": 4, "BLOCK": 32}),
        precompile(vocab_parallel_embedding, (i64, f32, f32, 45, 16, 48, -1), {"HIDDEN": 16, "BLOCK_N": 16}),
        precompile(paged_positions, (f32, None, f32, 20), {"BLOCK": 32}),
        precompile(paged_positions, (f32, i32, f32, 20), {"BLOCK": 32}),
        precompile(float_remainder, (f32, f32, f32, 64), {"BLOCK": 64}),
        precompile(persistent_matmul, (f16, f16, f16, 100, 70, 72, 72, 1, 70, 1, 70, 1),
                   {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 2, "NUM_SMS": 3}),
    ]
    for even_k in (True, False):
        builds.append(precompile(inductor_mm, (f16, f16, f16, 37, 45, 50, 50, 1, 45, 1, 45, 1),
                                 {"EVEN_K": even_k, "BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32}))
    for ck in builds:
        assert "cubin" in ck.asm
