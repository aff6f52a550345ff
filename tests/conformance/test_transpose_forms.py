"""A tile transposed in the two other ways public kernels write it: a column-major load (the tile read
down the columns of x) and a column-major store (the tile written down the columns of y), unmodified
@triton.jit kernels against numpy's x.T on every target that runs here, and compiled to cubin for cuda.
On ascend both are row copies and a transpose in the unified buffer (passes/column_accesses.py), 8-bit
data included."""

import numpy as np
import pytest

import xblock
from xblock.backends.cuda.precompile import precompile

triton = pytest.importorskip("triton")
tl = triton.language

RUN_TARGETS = ["sim", "cpu", "ascend"]


@triton.jit
def transpose_by_store(x_ptr, y_ptr, M, N, stride_x, stride_y, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tile = tl.load(x_ptr + rm[:, None] * stride_x + rn[None, :], mask=mask, other=0)
    tl.store(y_ptr + rn[None, :] * stride_y + rm[:, None], tile, mask=mask)


@triton.jit
def transpose_by_load(x_ptr, y_ptr, M, N, stride_x, stride_y, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # y is N x M: this program writes rows rn, columns rm of y, reading them down the columns of x
    rn = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    rm = tl.program_id(1) * BLOCK_M + tl.arange(0, BLOCK_M)
    mask = (rn[:, None] < N) & (rm[None, :] < M)
    tile = tl.load(x_ptr + rm[None, :] * stride_x + rn[:, None], mask=mask, other=0)
    tl.store(y_ptr + rn[:, None] * stride_y + rm[None, :], tile, mask=mask)


def _run(kernel, target, m, n, dtype, bm=32, bn=32):
    rng = np.random.default_rng(m * 1000 + n)
    x = (rng.standard_normal((m, n)) * 50).astype(dtype)
    y = np.zeros((n, m), dtype)
    by_store = kernel is transpose_by_store
    grid = (triton.cdiv(m, bm), triton.cdiv(n, bn)) if by_store else (triton.cdiv(n, bn), triton.cdiv(m, bm))
    xblock.jit(kernel)[grid](x, y, m, n, n, m, BLOCK_M=bm, BLOCK_N=bn, target=target)
    np.testing.assert_array_equal(y, x.T)


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("kernel", [transpose_by_store, transpose_by_load], ids=["store", "load"])
@pytest.mark.parametrize("m, n", [(1, 1), (32, 32), (45, 70)])
def test_transposes_match_numpy(target, kernel, m, n):
    _run(kernel, target, m, n, np.float32)


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("dtype", [np.float16, np.int32, np.int8])
def test_transposes_of_other_dtypes(target, dtype):
    _run(transpose_by_store, target, 40, 33, dtype)
    _run(transpose_by_load, target, 33, 40, dtype)


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("kernel", [transpose_by_store, transpose_by_load], ids=["store", "load"])
@pytest.mark.parametrize("m, n", [(1, 1), (32, 32), (33, 31), (64, 96)])
def test_8bit_transposes_at_boundary_shapes(target, kernel, m, n):
    """int8 tiles of 32 x 32: on ascend TransDataTo5HD's 8-bit form, the edges masked."""
    _run(kernel, target, m, n, np.int8)


def test_transposes_compile_for_cuda():
    x = np.zeros((64, 64), np.float32)
    for kernel in (transpose_by_store, transpose_by_load):
        ck = precompile(kernel, (x, x, 64, 64, 64, 64), {"BLOCK_M": 32, "BLOCK_N": 32})
        assert "cubin" in ck.asm
