"""Vector add as an unmodified Triton kernel (tutorial 01): `xblock.jit` takes a `@triton.jit` function."""

import functools

import numpy as np
import triton
import triton.language as tl

import xblock
from xblock.testing import Case, default_tolerance


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    output = x + y
    tl.store(output_ptr + offsets, output, mask=mask)


@functools.cache
def kernel():
    """The xblock wrapper of the Triton kernel (built on first use, then shared by every case)."""
    return xblock.jit(add_kernel)


BLOCK_SIZE = 1024
SIZES = [1, 1023, 1024, 1025, 7919, 98432]
DTYPES = [np.float32, np.float16, "bfloat16"]


def case(size, dtype=np.float32, seed=0) -> Case:
    dt = xblock.testing.bf16() if str(dtype) == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(size, dtype=np.float32).astype(dt)
    y = rng.standard_normal(size, dtype=np.float32).astype(dt)
    out = np.empty(size, dtype=dt)
    expected = (x.astype(np.float64) + y.astype(np.float64)).astype(dt)
    atol, rtol = default_tolerance(dt)
    return Case(
        kernel(),
        (triton.cdiv(size, BLOCK_SIZE),),
        (x, y, out, size),
        dict(BLOCK_SIZE=BLOCK_SIZE),
        outputs={"out": 2},
        expected={"out": expected},
        atol=atol,
        rtol=rtol,
    )
