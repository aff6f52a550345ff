"""A `tl.interleave`d operand of a dot inside its K loop on ascend (vllm's awq_gemm_kernel): the join and
reshape make the loop more than a plain Cube K loop, so its dot goes to the vector core and the planner
also tries plans that split the rows of the accumulator (`xb-strip-mine`). The loop then runs whole per
chunk of rows, and its body is copied for the chunk: the interleaved `b`, off the split axis, is copied
as it is (it crashed the compile, taken for a reshaped repeated row). Against numpy in float64 and the
sim: a plain interleave of fp16 columns, and the AWQ form (int32 words interleaved three times, nibbles
shifted out, zeros subtracted, scaled, to fp16) over a grid of programs."""

from __future__ import annotations

import numpy as np
import pytest

import xblock
import xblock.language as xl


@xblock.jit
def interleaved_b(a_ptr, b_ptr, c_ptr, K, BM: xl.constexpr, BN: xl.constexpr, BK: xl.constexpr):
    rm = xl.arange(0, BM)
    rk = xl.arange(0, BK)
    rn = xl.arange(0, BN // 2)
    acc = xl.zeros((BM, BN), dtype=xl.float32)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * (BN // 2) + rn[None, :]
    for _ in range(0, xl.cdiv(K, BK)):
        b = xl.load(b_ptrs)
        acc = xl.dot(xl.load(a_ptrs), xl.interleave(b, b * 2.0), acc)
        a_ptrs += BK
        b_ptrs += BK * (BN // 2)
    xl.store(c_ptr + rm[:, None] * BN + xl.arange(0, BN)[None, :], acc)


@xblock.jit
def awq_gemm(a_ptr, b_ptr, z_ptr, s_ptr, c_ptr, M, N, K, group_size,
             BM: xl.constexpr, BN: xl.constexpr, BK: xl.constexpr):
    pid = xl.program_id(0)
    num_pid_n = (N + BN - 1) // BN
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n
    acc = xl.zeros((BM, BN), dtype=xl.float32)
    order = ((xl.arange(0, 2) * 4)[None, :] + xl.arange(0, 4)[:, None]).reshape(8)
    shifts = xl.broadcast_to((order * 4)[None, :], (BK * (BN // 8), 8))
    shifts = xl.reshape(shifts, (BK, BN))
    offs_am = pid_m * BM + xl.arange(0, BM)
    offs_bn = pid_n * (BN // 8) + xl.arange(0, BN // 8)
    offs_sn = pid_n * BN + xl.arange(0, BN)
    offs_k = xl.arange(0, BK)
    a_ptrs = a_ptr + K * offs_am[:, None] + offs_k[None, :]
    b_ptrs = b_ptr + (N // 8) * offs_k[:, None] + offs_bn[None, :]
    for k in range(0, xl.cdiv(K, BK)):
        a = xl.load(a_ptrs)
        b = xl.load(b_ptrs)
        b = xl.interleave(b, b)
        b = xl.interleave(b, b)
        b = xl.interleave(b, b)
        offs_szk = (BK * k) // group_size + xl.arange(0, 1)
        zeros = xl.load(z_ptr + (N // 8) * offs_szk[:, None] + offs_bn[None, :])
        zeros = xl.interleave(zeros, zeros)
        zeros = xl.interleave(zeros, zeros)
        zeros = xl.interleave(zeros, zeros)
        zeros = xl.broadcast_to(zeros, (BK, BN))
        scales = xl.broadcast_to(xl.load(s_ptr + N * offs_szk[:, None] + offs_sn[None, :]), (BK, BN))
        b = (b >> shifts) & 0xF
        zeros = (zeros >> shifts) & 0xF
        b = ((b - zeros) * scales).to(xl.float16)
        acc = xl.dot(a, b, acc, out_dtype=xl.float32)
        a_ptrs += BK
        b_ptrs += BK * (N // 8)
    offs_cm = pid_m * BM + xl.arange(0, BM)
    offs_cn = pid_n * BN + xl.arange(0, BN)
    xl.store(c_ptr + N * offs_cm[:, None] + offs_cn[None, :], acc.to(xl.float16))


def _on(kernel, grid, args, target, **meta):
    a = [v.copy() if isinstance(v, np.ndarray) else v for v in args]
    kernel[grid](*a, target=target, **meta)
    return a


@pytest.mark.parametrize("bm, bn, bk, steps", [(16, 32, 16, 2), (32, 64, 32, 3)])
def test_interleaved_b_of_a_dot_in_its_k_loop(bm, bn, bk, steps):
    rng = np.random.default_rng(bm + bn + steps)
    k = bk * steps
    a = rng.standard_normal((bm, k)).astype(np.float16)
    b = rng.standard_normal((k, bn // 2)).astype(np.float16)
    bb = np.stack([b, b * 2], axis=2).reshape(k, bn).astype(np.float64)  # interleave(b, 2b)
    want = a.astype(np.float64) @ bb
    args = (a, b, np.zeros((bm, bn), np.float32), k)
    got = {t: _on(interleaved_b, (1,), args, t, BM=bm, BN=bn, BK=bk)[2] for t in ("sim", "ascend")}
    np.testing.assert_allclose(got["ascend"], want, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(got["ascend"], got["sim"], rtol=1e-5, atol=1e-5)


_AWQ = [0, 2, 4, 6, 1, 3, 5, 7]  # the nibble of each of the 8 columns a word holds


def _unpack(q):
    """[R, W] int32 words -> [R, 8 W] nibbles in AWQ's order."""
    shifts = np.array([4 * _AWQ.index(j) for j in range(8)])
    return ((q[:, :, None] >> shifts[None, None, :]) & 0xF).reshape(q.shape[0], -1)


@pytest.mark.parametrize("m, n, k, bm, bn, bk", [(64, 64, 96, 32, 64, 32), (32, 128, 64, 16, 32, 16)])
def test_awq_gemm_unpacked_by_interleaves_in_the_k_loop(m, n, k, bm, bn, bk):
    rng = np.random.default_rng(m + n + k)
    group = bk
    a = (rng.standard_normal((m, k)) * 0.5).astype(np.float16)
    qb = rng.integers(0, 2**31 - 1, (k, n // 8), dtype=np.int64).astype(np.int32)
    qz = rng.integers(0, 2**31 - 1, (k // group, n // 8), dtype=np.int64).astype(np.int32)
    s = (rng.random((k // group, n)) * 0.1 + 0.01).astype(np.float16)
    w = (_unpack(qb) - np.repeat(_unpack(qz), group, 0)) * np.repeat(s.astype(np.float64), group, 0)
    want = a.astype(np.float64) @ w.astype(np.float16).astype(np.float64)  # b goes to fp16 before the dot
    grid = ((m // bm) * (n // bn),)
    args = (a, qb, qz, s, np.zeros((m, n), np.float16), m, n, k, group)
    got = {t: _on(awq_gemm, grid, args, t, BM=bm, BN=bn, BK=bk)[4].astype(np.float64) for t in ("sim", "ascend")}
    np.testing.assert_allclose(got["ascend"], want, rtol=2e-3, atol=2e-2)
    np.testing.assert_allclose(got["ascend"], got["sim"], rtol=1e-3, atol=1e-3)
