"""The Cube path takes a dot's K loop in the forms public kernels write it: `range(0, cdiv(K, BK))`
with offsets from the counter, `range(0, K, BK)` with pointers advanced every step (the counter
then counts BK at a time, so the Cube lowering counts the iterations itself), and block pointers
advanced by `tl.advance` (offsets the loop carries), against numpy; each with deep L1 tiles."""

from __future__ import annotations

import numpy as np
import pytest

triton = pytest.importorskip("triton")
tl = triton.language

import xblock  # noqa: E402


@triton.jit
def matmul_k_step(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] + k < K), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] + k < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BK
        b_ptrs += BK * N
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def matmul_k_offsets(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        rk = k + tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def matmul_block_ptrs(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    pa = tl.make_block_ptr(a_ptr, (M, K), (K, 1), (pm * BM, 0), (BM, BK), (1, 0))
    pb = tl.make_block_ptr(b_ptr, (K, N), (N, 1), (0, pn * BN), (BK, BN), (1, 0))
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(pa, boundary_check=(0, 1), padding_option="zero")
        b = tl.load(pb, boundary_check=(0, 1), padding_option="zero")
        acc += tl.dot(a, b)
        pa = tl.advance(pa, (0, BK))
        pb = tl.advance(pb, (BK, 0))
    pc = tl.make_block_ptr(c_ptr, (M, N), (N, 1), (pm * BM, pn * BN), (BM, BN), (1, 0))
    tl.store(pc, acc, boundary_check=(0, 1))


# K = 300: two deep L1 tiles of 8 K steps (cube/depth.py), the second one of 44 (a partial last step)
@pytest.mark.parametrize("kernel", [matmul_k_step, matmul_k_offsets, matmul_block_ptrs], ids=lambda k: k.__name__)
@pytest.mark.parametrize("K", [32, 100, 300])
def test_k_loops_with_a_step_run_on_the_cube(kernel, K):
    rng = np.random.default_rng(K)
    M, N = 40, 48
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    jk = xblock.jit(kernel)
    jk[(2, 2)](a, b, c, M, N, K, BM=32, BN=32, BK=32, target="ascend")
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)
    # every form steps side by side: one copy of A and of B for 8 K steps (256 of K) in L1
    assert jk.warmup(a, b, c, M, N, K, BM=32, BN=32, BK=32, target="ascend").metadata["cube"][0]["k_depth"] == 8


@triton.jit
def scaled_dots(a_ptr, b_ptr, c_ptr, d_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    r = tl.arange(0, BM)
    c = tl.arange(0, BN)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        kk = k + tl.arange(0, BK)
        a = tl.load(a_ptr + r[:, None] * K + kk[None, :], mask=kk[None, :] < K, other=0.0)
        b = tl.load(b_ptr + kk[:, None] * BN + c[None, :], mask=kk[:, None] < K, other=0.0)
        acc += tl.dot(a, b) * 0.5  # a dot in an expression: handed to the vector core every step
    tl.store(c_ptr + r[:, None] * BN + c[None, :], acc)
    tl.store(d_ptr + r[:, None] * BN + c[None, :], tl.dot(tl.load(a_ptr + r[:, None] * K + c[None, :]),
                                                         tl.load(b_ptr + r[:, None] * BN + c[None, :])))


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_handed_off_dots_of_each_float_type(dtype):
    """fp32 operands reach L0B through LoadDataWithTranspose, a Cube op in the AIC section of a mixed
    kernel too (fuzz seed 12, kernel 11: it was taken for vector work)."""
    rng = np.random.default_rng(5)
    K, BM = 40, 16
    a = rng.standard_normal((BM, K)).astype(dtype)
    b = rng.standard_normal((K, BM)).astype(dtype)
    c, d = np.zeros((BM, BM), np.float32), np.zeros((BM, BM), np.float32)
    xblock.jit(scaled_dots)[(1,)](a, b, c, d, K, BM=BM, BN=BM, BK=16, target="ascend")
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    np.testing.assert_allclose(c, a32 @ b32 * 0.5, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(d, a32[:, :BM] @ b32[:BM], rtol=1e-3, atol=1e-3)


@triton.jit
def int8_dot_of_computed_operands(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BK: tl.constexpr):
    r = tl.arange(0, BM)
    k = tl.arange(0, BK)
    a = (tl.load(a_ptr + r[:, None] * BK + k[None, :]) * 2).to(tl.int8)  # computed: handed to the Cube
    b = tl.load(b_ptr + k[:, None] * BM + r[None, :]).to(tl.int8)
    tl.store(c_ptr + r[:, None] * BM + r[None, :], tl.dot(a, b, out_dtype=tl.int32))


def test_handed_off_int8_dot_accumulates_in_int32():
    """Fuzz seed 12, kernel 69: the L0C tile of a handed-off int8 dot was declared float."""
    rng = np.random.default_rng(6)
    a = rng.integers(-60, 60, (32, 64)).astype(np.int16)
    b = rng.integers(-127, 128, (64, 32)).astype(np.int16)
    c = np.zeros((32, 32), np.int32)
    xblock.jit(int8_dot_of_computed_operands)[(1,)](a, b, c, BM=32, BK=64, target="ascend")
    np.testing.assert_array_equal(c, (a.astype(np.int32) * 2) @ b.astype(np.int32))


@triton.jit
def dot_of_a_broadcast_load(p, out_ptr):
    offs = tl.arange(0, 16)
    a = tl.load(p + offs[:, None] * 0 + offs[None, :])  # every row the same: row stride 0
    tl.store(out_ptr + offs, tl.sum(tl.dot(a, a, input_precision="ieee"), 1))


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_a_broadcast_operand_goes_through_the_vector_core(dtype):
    """Rows that overlap (stride 0) cannot be one Nd2Nz copy (its source stride must be at least a
    row): the operand is loaded on the vector core and handed over (docs/LANGUAGE.md's tl.dot probe)."""
    x = np.random.default_rng(0).standard_normal(16).astype(dtype)
    out = np.zeros(16, np.float32)
    xblock.jit(dot_of_a_broadcast_load)[(1,)](x, out, target="ascend")
    a = np.tile(x.astype(np.float32), (16, 1))
    np.testing.assert_allclose(out, (a @ a).sum(1), rtol=1e-3, atol=1e-3)


@triton.jit
def one_by_one_dot(a_ptr, c_ptr, M, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rows = tl.arange(0, BM)
    ks = tl.arange(0, BK)
    a = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=(rows < M)[:, None] & (ks < K)[None, :], other=0.0)
    c = tl.dot(a, tl.full((BK, BN), 1.0, tl.float32), input_precision="ieee")
    tl.store(c_ptr + rows[:, None] * BN + tl.arange(0, BN)[None, :], c, mask=(rows < M)[:, None])


def test_a_one_row_operand_copies_with_a_stride_of_its_row():
    """Fuzz seed 45, kernel 18 (model-rejected): a 1 x 1 fp32 dot (K specialized to 1) copied its one
    row with srcDValue 0, below the row's length (asc-devkit's range starts at 1)."""
    a, c = np.array([[4.0]], np.float32), np.zeros((1, 1), np.float32)
    xblock.jit(one_by_one_dot)[(1,)](a, c, 1, 1, BM=1, BN=1, BK=1, target="ascend")
    np.testing.assert_array_equal(c, [[4.0]])
