"""int64 arithmetic with a scalar operand beyond 32 bits (RELIABILITY.md, failure AQ: open).

`k * offs - c` with `c` an int64 loaded from memory: sim and cpu give the 64-bit result; ascend
gives it modulo 2**32 today, a silent wrong answer. The ascend case is a strict xfail, so that the
fix turns it into a failure to be removed."""

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


@pytest.mark.parametrize("target", [
    "sim", "cpu",
    pytest.param("ascend", marks=pytest.mark.xfail(strict=True, reason="AQ: int64 scalar operand truncated")),
])
def test_an_int64_scalar_beyond_32_bits(target):
    k = np.array([8], np.int64)
    c = np.array([-239090557005], np.int64)
    out = np.zeros(5, np.int64)
    xblock.jit(affine_i64)[(1,)](k, c, out, 5, BLOCK=8, target=target)
    np.testing.assert_array_equal(out, k[0] * np.arange(5) - c[0])
