"""Fused softmax as an unmodified Triton kernel (tutorial 02): persistent programs stride over rows.

The grid is smaller than the number of rows; each program walks rows with `tl.range` and a step
of `tl.num_programs(0)`.
"""

import functools

import numpy as np
import triton
import triton.language as tl

import xblock
from xblock.testing import Case, default_tolerance


@triton.jit
def softmax_kernel(
    output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols, BLOCK_SIZE: tl.constexpr
):
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=2):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        input_ptrs = row_start_ptr + col_offsets
        mask = col_offsets < n_cols
        row = tl.load(input_ptrs, mask=mask, other=-float("inf"))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        output_ptrs = output_row_start_ptr + col_offsets
        tl.store(output_ptrs, softmax_output, mask=mask)


@functools.cache
def kernel():
    return xblock.jit(softmax_kernel)


NUM_PROGRAMS = 64
SIZES = [(1, 1), (3, 127), (5, 128), (2, 129), (7, 1000), (823, 781)]  # (rows, cols)
DTYPES = [np.float32]  # tutorial 02 computes in the input dtype; fp32 only keeps the reference exact


def case(size, dtype=np.float32, seed=0) -> Case:
    dt = np.dtype(dtype)
    n_rows, n_cols = size
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(size, dtype=np.float32) * 3).astype(dt)
    out = np.empty(size, dtype=dt)
    x64 = x.astype(np.float64)
    num = np.exp(x64 - x64.max(axis=1, keepdims=True))
    expected = (num / num.sum(axis=1, keepdims=True)).astype(dt)
    atol, rtol = default_tolerance(dt)
    return Case(
        kernel(),
        (min(n_rows, NUM_PROGRAMS),),
        (out, x, n_cols, n_cols, n_rows, n_cols),
        dict(BLOCK_SIZE=triton.next_power_of_2(n_cols)),
        outputs={"out": 0},
        expected={"out": expected},
        atol=atol,
        rtol=rtol,
    )
