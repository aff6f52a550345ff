"""int64 arithmetic with a scalar operand beyond 32 bits (RELIABILITY.md, failure AQ: fixed).

`k * offs - c` with `c` an int64 loaded from memory is an affine int64 block; ascend computed it in
int32 lanes and sign-extended them (the result modulo 2**32). It is now computed lane by lane in
int64 scalar code (A2 has no 64-bit vector Add or Mul)."""

import numpy as np
import pytest

import xblock

triton = pytest.importorskip("triton")
tl = triton.language


@triton.jit
def affine_i64(k_ptr, c_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    k = tl.load(k_ptr)
    c = tl.load(c_ptr)
    tl.store(out_ptr + offs, k * offs - c, mask=offs < n)


@pytest.mark.parametrize("target", ["sim", "cpu", "ascend"])
def test_an_int64_scalar_beyond_32_bits(target):
    k = np.array([8], np.int64)
    c = np.array([-239090557005], np.int64)
    out = np.zeros(5, np.int64)
    xblock.jit(affine_i64)[(1,)](k, c, out, 5, BLOCK=8, target=target)
    np.testing.assert_array_equal(out, k[0] * np.arange(5) - c[0])
