"""Dots of real kernels' shapes through the Cube hand-off on ascend, against numpy; no input takes the
compiler down (issue 29, item 7).

- a paged-attention step: K read as a [HEAD_DIM, TILE] tile through `offs_d[:, None] +
  offs_n[None, :] * stride` (column-major in memory), masked on n, or gathered through a block table
  with a mask built by `tl.where` (data, not structure), then `tl.dot(q, k)`. The transposed-bounds
  analysis took a data mask for structure (AttributeError); the Cube then refused the column-major
  operand instead of handing it over; a gathered operand lowered at the dot read a mask the walk had
  already freed (a wrong answer).
- chunk k·kᵀ in block pointers: `b_k = tl.load(p_k, boundary_check=(0, 1))`,
  `tl.dot(b_kb, tl.trans(b_k))` in a K loop, `b_a.to(p_a.dtype.element_ty)`. A block loaded before the
  loop and used after it walked the queue spill up to the module, whose block is an MLIR assertion (the
  process aborted); one used in the loop was spilled inside it, after the loop body had read it.
- any Python exception inside the ascend lowering is a CompilationError at the kernel's line.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import xblock
from xblock.errors import CompilationError

triton = pytest.importorskip("triton")
tl = triton.language


@triton.jit
def paged_qk(q_ptr, cache_ptr, table_ptr, out_ptr, seq_len, s_page, s_tok, s_head, s_dim,
             HEAD: tl.constexpr, HEAD_DIM: tl.constexpr, PAGE: tl.constexpr, TILE: tl.constexpr, M: tl.constexpr):
    pid = tl.program_id(0)
    offs_m = tl.arange(0, M)
    offs_d = tl.arange(0, HEAD_DIM)
    dim_ok = tl.where(offs_d < HEAD_DIM, 1, 0).to(tl.int1)
    q = tl.load(q_ptr + offs_m[:, None] * HEAD_DIM + offs_d[None, :], mask=dim_ok[None, :], other=0.0)
    pos = pid * TILE + tl.arange(0, TILE)
    in_seq = pos < seq_len
    page = tl.load(table_ptr + pos // PAGE, mask=in_seq, other=0)
    k_off = page[None, :] * s_page + HEAD * s_head + offs_d[:, None] * s_dim + (pos % PAGE)[None, :] * s_tok
    k = tl.load(cache_ptr + k_off, mask=dim_ok[:, None] & in_seq[None, :], other=0.0)
    s = tl.dot(q, k)
    tl.store(out_ptr + offs_m[:, None] * (TILE * 4) + pos[None, :], s * 0.5)


@triton.jit
def strided_qk(q_ptr, k_ptr, out_ptr, seq_len, stride, HEAD_DIM: tl.constexpr, TILE: tl.constexpr,
               M: tl.constexpr, DATA_MASK: tl.constexpr):
    pid = tl.program_id(0)
    offs_m = tl.arange(0, M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + offs_m[:, None] * HEAD_DIM + offs_d[None, :])
    offs_n = pid * TILE + tl.arange(0, TILE)
    mask = offs_n[None, :] < seq_len
    if DATA_MASK:
        mask = tl.where(offs_d < HEAD_DIM, 1, 0).to(tl.int1)[:, None] & mask
    k = tl.load(k_ptr + offs_d[:, None] + offs_n[None, :] * stride, mask=mask, other=0.0)
    tl.store(out_ptr + offs_m[:, None] * (TILE * 4) + offs_n[None, :], tl.dot(q, k))


def _keys(rng, n, d):
    return rng.standard_normal((n, d)).astype(np.float16)


@pytest.mark.parametrize("seq_len", [1, 15, 16, 17, 50, 64])
def test_paged_transposed_k_cache(seq_len):
    rng = np.random.default_rng(seq_len)
    M, D, TILE, PAGE, HEADS = 16, 32, 16, 8, 2
    q, keys = _keys(rng, M, D), _keys(rng, 64, D)
    perm = rng.permutation(8)
    cache = np.zeros((8, PAGE, HEADS, D), np.float16)
    for tok in range(64):
        cache[perm[tok // PAGE], tok % PAGE, 1] = keys[tok]
    out = np.zeros((M, TILE * 4), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a gather (the pages are data): its warning is not the point
        xblock.jit(paged_qk)[(4,)](q, cache, perm.astype(np.int32), out, seq_len,
                                   *(s // 2 for s in cache.strides), HEAD=1, HEAD_DIM=D, PAGE=PAGE, TILE=TILE, M=M,
                                   target="ascend")
    want = q.astype(np.float32) @ keys.astype(np.float32).T * 0.5
    want[:, seq_len:] = 0
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("data_mask", [False, True])
@pytest.mark.parametrize("seq_len", [1, 17, 50])
def test_strided_transposed_k(seq_len, data_mask):
    rng = np.random.default_rng(7)
    M, D, TILE = 16, 32, 16
    q, keys = _keys(rng, M, D), _keys(rng, 64, D)
    out = np.zeros((M, TILE * 4), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a data mask makes the load a gather: its warning is not the point
        xblock.jit(strided_qk)[(4,)](q, keys, out, seq_len, D, HEAD_DIM=D, TILE=TILE, M=M, DATA_MASK=data_mask,
                                     target="ascend")
    want = q.astype(np.float32) @ keys.astype(np.float32).T
    want[:, seq_len:] = 0
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


@triton.jit
def chunk_kkt(k_ptr, beta_ptr, a_ptr, T, K: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr,
              BETA_AFTER: tl.constexpr):
    i_t = tl.program_id(0)
    o_t = i_t * BT + tl.arange(0, BT)
    p_beta = tl.make_block_ptr(beta_ptr, (T,), (1,), (i_t * BT,), (BT,), (0,))
    b_beta = tl.load(p_beta, boundary_check=(0,))
    b_a = tl.zeros([BT, BT], dtype=tl.float32)
    for i_k in range(tl.cdiv(K, BK)):
        p_k = tl.make_block_ptr(k_ptr, (T, K), (K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
        b_k = tl.load(p_k, boundary_check=(0, 1))
        if BETA_AFTER:
            b_a += tl.dot(b_k, tl.trans(b_k))
        else:
            b_kb = (b_k * b_beta[:, None]).to(b_k.dtype)
            b_a += tl.dot(b_kb, tl.trans(b_k))
    if BETA_AFTER:
        b_a = b_a * b_beta[:, None]
    b_a = tl.where(o_t[:, None] > o_t[None, :], b_a, 0)
    p_a = tl.make_block_ptr(a_ptr, (T, BT), (BT, 1), (i_t * BT, 0), (BT, BT), (1, 0))
    tl.store(p_a, b_a.to(p_a.dtype.element_ty), boundary_check=(0, 1))


@triton.jit
def chunk_kkt_once(k_ptr, a_ptr, T, K: tl.constexpr, BT: tl.constexpr):
    i_t = tl.program_id(0)
    p_k = tl.make_block_ptr(k_ptr, (T, K), (K, 1), (i_t * BT, 0), (BT, K), (1, 0))
    p_a = tl.make_block_ptr(a_ptr, (T, BT), (BT, 1), (i_t * BT, 0), (BT, BT), (1, 0))
    b_k = tl.load(p_k, boundary_check=(0, 1))
    b_a = tl.dot(b_k, tl.trans(b_k))
    tl.store(p_a, b_a.to(p_a.dtype.element_ty), boundary_check=(0, 1))


def _kkt_reference(k, beta, T, BT, beta_after):
    kf = k.astype(np.float32)
    kb = kf if beta_after else (k * beta[:, None]).astype(np.float16).astype(np.float32)
    want = np.zeros((T, BT), np.float32)
    for i in range(0, T, BT):
        r = np.tril(kb[i:i + BT] @ kf[i:i + BT].T, -1)
        if beta_after:
            r = r * beta[i:i + BT, None].astype(np.float32)
        want[i:i + BT, :r.shape[1]] = r
    return want


@pytest.mark.parametrize("beta_after", [False, True])
@pytest.mark.parametrize("out_dtype", [np.float16, np.float32])
@pytest.mark.parametrize("T", [16, 50])
def test_chunk_kkt_in_block_pointers(T, out_dtype, beta_after):
    rng = np.random.default_rng(T)
    K, BT, BK = 64, 16, 32
    k = rng.standard_normal((T, K)).astype(np.float16)
    beta = rng.random(T).astype(np.float16)
    a = np.zeros((T, BT), out_dtype)
    xblock.jit(chunk_kkt)[(triton.cdiv(T, BT),)](k, beta, a, T, K=K, BT=BT, BK=BK, BETA_AFTER=beta_after,
                                                 target="ascend")
    want = _kkt_reference(k, beta, T, BT, beta_after)
    tol = 2e-2 if out_dtype == np.float16 else 1e-4
    np.testing.assert_allclose(a.astype(np.float32), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("T", [16, 50])
def test_chunk_kkt_one_dot(T):
    rng = np.random.default_rng(3)
    K, BT = 64, 16
    k = rng.standard_normal((T, K)).astype(np.float16)
    a = np.zeros((T, BT), np.float32)
    xblock.jit(chunk_kkt_once)[(triton.cdiv(T, BT),)](k, a, T, K=K, BT=BT, target="ascend")
    kf = k.astype(np.float32)
    want = np.zeros((T, BT), np.float32)
    for i in range(0, T, BT):
        r = kf[i:i + BT] @ kf[i:i + BT].T
        want[i:i + BT, :r.shape[1]] = r
    np.testing.assert_allclose(a, want, rtol=1e-4, atol=1e-4)


@triton.jit
def copy_rows(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)  # STORE_LINE


def test_an_exception_in_the_lowering_is_an_error_at_the_kernel_line(monkeypatch, tmp_path):
    from xblock.backends.ascend.lower import rules

    monkeypatch.setenv("XBLOCK_CACHE_DIR", str(tmp_path))  # compiled here, not found in the cache

    def broken(ctx, op):
        raise AttributeError("'NoneType' object has no attribute 'shape'")

    monkeypatch.setitem(rules.RULES, "xb.store", broken)
    x = np.arange(40, dtype=np.float32)
    with pytest.raises(CompilationError) as e:
        xblock.jit(copy_rows)[(2,)](x, np.zeros_like(x), 40, BLOCK=32, target="ascend")
    text = str(e.value)
    line = next(i for i, s in enumerate(open(__file__), 1) if s.rstrip().endswith("# STORE_LINE"))
    assert f"test_handoff_real_kernels.py:{line}:" in text
    assert "internal error" in text and "AttributeError" in text
    assert "Traceback" not in text and "xblock/backends" not in text


def test_walks_up_the_ir_stop_below_the_module():
    from mlir import ir

    from xblock.backends.ascend.irwalk import ancestor_in, block_of
    from xblock.dialects import xb

    with xb.context():
        m = ir.Module.parse("func.func @f() { return }")
        fn = m.body.operations[0].operation
        ret = fn.regions[0].blocks[0].operations[0].operation
        other = ir.Module.parse("func.func @g() { return }")
        assert block_of(m.operation) is None  # `.block` here is an MLIR assertion: the process would abort
        assert ancestor_in(fn.regions[0].blocks[0], ret) == ret
        assert ancestor_in(m.body, ret) == fn
        assert ancestor_in(other.body.operations[0].operation.regions[0].blocks[0], ret) is None
