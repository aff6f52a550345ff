"""Dot kernels for the Cube-path tests: a plain K loop with an fp32 or cast output, and ReLU."""

import xblock
import xblock.language as xl


@xblock.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
               BLOCK_M: xl.constexpr, BLOCK_N: xl.constexpr, BLOCK_K: xl.constexpr, RELU: xl.constexpr):
    pid_m = xl.program_id(0)
    pid_n = xl.program_id(1)
    offs_m = pid_m * BLOCK_M + xl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + xl.arange(0, BLOCK_N)
    offs_k = xl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = xl.zeros((BLOCK_M, BLOCK_N), dtype=xl.float32)
    for k in range(0, xl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = xl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = xl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = xl.dot(a, b, acc=acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    if RELU:
        acc = xl.maximum(acc, 0.0)
    c = acc.to(c_ptr.dtype.element_ty)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
    xl.store(c_ptrs, c, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@xblock.jit
def wrapped_dot_kernel(a_ptr, b_ptr, c_ptr, M, N, K, MASK_ROWS: xl.constexpr, BLOCK_M: xl.constexpr,
                       BLOCK_N: xl.constexpr, BLOCK_K: xl.constexpr):
    """Triton tutorial 03's addressing: `% M` / `% N` wrapped offsets instead of M and N load masks."""
    pid_m = xl.program_id(0)
    pid_n = xl.program_id(1)
    offs_am = (pid_m * BLOCK_M + xl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + xl.arange(0, BLOCK_N)) % N
    offs_k = xl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * K + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * N + offs_bn[None, :]
    acc = xl.zeros((BLOCK_M, BLOCK_N), dtype=xl.float32)
    for k in range(0, xl.cdiv(K, BLOCK_K)):
        a = xl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = xl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = xl.dot(a, b, acc=acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * N
    offs_cm = pid_m * BLOCK_M + xl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + xl.arange(0, BLOCK_N)
    rows = offs_cm[:, None] < M if MASK_ROWS else offs_cm[:, None] < BLOCK_M * xl.num_programs(0)
    xl.store(c_ptr + offs_cm[:, None] * N + offs_cn[None, :], acc, mask=rows & (offs_cn[None, :] < N))
