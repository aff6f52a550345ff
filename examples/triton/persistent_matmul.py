"""Persistent matmul as an unmodified Triton kernel, in the style of Triton's tutorial 09.

NUM_SMS programs walk the output tiles (`tl.range(start, end, step, flatten=True)`), each tile id
mapped to (pid_m, pid_n) in grouped order for cache reuse, a K loop of `tl.dot` into an fp32
accumulator, and an epilogue that can store the tile as two half-width subtiles, split out of the
accumulator with `reshape`/`permute`/`split` (what the tutorial does to overlap the stores).
"""

import triton
import triton.language as tl


@triton.jit
def _tile_coords(tile_id, num_pid_in_group, num_pid_m, GROUP_M: tl.constexpr):
    group_id = tile_id // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (tile_id % num_pid_in_group) % group_size_m
    pid_n = (tile_id % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@triton.jit
def matmul_persistent(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                      stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                      GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr, EPILOGUE_SUBTILE: tl.constexpr):
    start_pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    num_tiles = num_pid_m * num_pid_n
    num_pid_in_group = GROUP_M * num_pid_n
    offs_k = tl.arange(0, BLOCK_K)
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=True):
        pid_m, pid_n = _tile_coords(tile_id, num_pid_in_group, num_pid_m, GROUP_M)
        offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(k_tiles):
            ks = ki * BLOCK_K + offs_k
            a = tl.load(a_ptr + offs_m[:, None] * stride_am + ks[None, :] * stride_ak,
                        mask=(offs_m[:, None] < M) & (ks[None, :] < K), other=0.0)
            b = tl.load(b_ptr + ks[:, None] * stride_bk + offs_n[None, :] * stride_bn,
                        mask=(ks[:, None] < K) & (offs_n[None, :] < N), other=0.0)
            acc = tl.dot(a, b, acc)
        c_rows = c_ptr + offs_m[:, None] * stride_cm
        row_ok = offs_m[:, None] < M
        if EPILOGUE_SUBTILE:
            halves = tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1))
            left, right = tl.split(halves)
            cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N // 2)
            tl.store(c_rows + cols[None, :] * stride_cn, left.to(c_ptr.dtype.element_ty),
                     mask=row_ok & (cols[None, :] < N))
            cols = cols + BLOCK_N // 2
            tl.store(c_rows + cols[None, :] * stride_cn, right.to(c_ptr.dtype.element_ty),
                     mask=row_ok & (cols[None, :] < N))
        else:
            tl.store(c_rows + offs_n[None, :] * stride_cn, acc.to(c_ptr.dtype.element_ty),
                     mask=row_ok & (offs_n[None, :] < N))
