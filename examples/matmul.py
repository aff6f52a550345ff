"""Matmul with a fused leaky-ReLU epilogue (after Triton tutorial 03).

A K loop of `xl.dot` into an fp32 accumulator, grouped program order (GROUP_M row tiles sweep
the column tiles together, for cache reuse), masks on the M, N and K tails, and a nested jitted
helper for the activation. fp16 inputs give an fp16 output, fp32 inputs an fp32 output.
"""

import numpy as np

import xblock
import xblock.language as xl
from xblock.testing import Case


@xblock.jit
def leaky_relu(x):
    return xl.where(x >= 0, x, 0.01 * x)


@xblock.jit
def matmul_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    BLOCK_M: xl.constexpr,
    BLOCK_N: xl.constexpr,
    BLOCK_K: xl.constexpr,
    GROUP_M: xl.constexpr,
):
    pid = xl.program_id(0)
    num_pid_m = xl.cdiv(M, BLOCK_M)
    num_pid_n = xl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    first_pid_m = (pid // num_pid_in_group) * GROUP_M
    group_size_m = xl.minimum(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (pid % num_pid_in_group) % group_size_m
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + xl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + xl.arange(0, BLOCK_N)
    offs_k = xl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = xl.zeros((BLOCK_M, BLOCK_N), dtype=xl.float32)
    for k in range(0, xl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = xl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = xl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = xl.dot(a, b, acc=acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = leaky_relu(acc)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    xl.store(c_ptrs, c, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


SIZES = [(1, 1, 1), (17, 33, 65), (64, 64, 64), (65, 31, 32), (300, 200, 333)]  # (M, N, K)
DTYPES = [np.float16, np.float32]
META = dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, GROUP_M=8)


def case(size, dtype=np.float16, seed=0) -> Case:
    dt = np.dtype(dtype)
    M, N, K = size
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((M, K), dtype=np.float32).astype(dt)
    b = (rng.standard_normal((K, N), dtype=np.float32) / np.sqrt(K)).astype(dt)  # keeps |c| ~ 1
    c = np.empty((M, N), dtype=dt)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    ref = np.where(ref >= 0, ref, 0.01 * ref)
    grid = (xblock.cdiv(M, META["BLOCK_M"]) * xblock.cdiv(N, META["BLOCK_N"]),)
    args = (a, b, c, M, N, K, K, 1, N, 1, N, 1)  # contiguous row-major strides, in elements
    # 1e-2 covers fp16 rounding of the output and tf32 products where fp32 dot uses tensor cores
    return Case(
        matmul_kernel,
        grid,
        args,
        META,
        outputs={"c": 2},
        expected={"c": ref.astype(dt)},
        atol=1e-2,
        rtol=1e-2,
    )
