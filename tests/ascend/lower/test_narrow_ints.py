"""Narrow integer blocks whose lanes are all one scalar wrap as in C and Triton on ascend: int16
`-1 - 250 * 6289` is 613 (it went through float and saturated to -32768; fuzz campaign 7)."""

from __future__ import annotations

import numpy as np
import pytest

import xblock

triton = pytest.importorskip("triton")
tl = triton.language


@triton.jit
def uniform_product(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    full = tl.full((BLOCK,), -1, out_ptr.dtype.element_ty)
    prod = tl.load(a_ptr) * tl.load(b_ptr + tl.program_id(0))
    tl.store(out_ptr + offs, full - prod, mask=offs < n)


@pytest.mark.parametrize("dtype", [np.int16, np.int8])
def test_a_uniform_narrow_block_wraps(dtype):
    a = np.array([6289 if dtype == np.int16 else 117], dtype)
    b = np.array([250 if dtype == np.int16 else 77, -3], dtype)
    out = np.zeros(24, dtype)
    xblock.jit(uniform_product)[(2,)](a, b, out, 24, BLOCK=16, target="ascend")
    with np.errstate(over="ignore"):
        want = np.concatenate([np.full(16, dtype(-1) - a[0] * b[0], dtype), np.full(8, dtype(-1) - a[0] * b[1], dtype)])
    np.testing.assert_array_equal(out, want)
