"""`.to(T, bitcast=True)` of blocks on ascend: the same bytes seen as another type (a view of the
tile), against numpy's `view` and the sim."""

from __future__ import annotations

import numpy as np
import pytest

triton = pytest.importorskip("triton")
tl = triton.language

import xblock  # noqa: E402


@triton.jit
def float_bits(x_ptr, exp_ptr, half_ptr, back_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=1.0)
    bits = x.to(tl.int32, bitcast=True)
    tl.store(exp_ptr + offs, (bits >> 23) & 255, mask=m)
    tl.store(half_ptr + offs, x.to(tl.float16).to(tl.int16, bitcast=True), mask=m)
    tl.store(back_ptr + offs, (bits ^ -2147483648).to(tl.float32, bitcast=True), mask=m)  # the sign flipped


@pytest.mark.parametrize("target", ["sim", "ascend"])
def test_bitcasts_of_blocks_keep_the_bytes(target):
    x = np.random.default_rng(0).standard_normal(50).astype(np.float32)
    e, h, b = np.zeros(50, np.int32), np.zeros(50, np.int16), np.zeros(50, np.float32)
    xblock.jit(float_bits)[(1,)](x, e, h, b, 50, BLOCK=64, target=target)
    np.testing.assert_array_equal(e, (x.view(np.int32) >> 23) & 255)
    np.testing.assert_array_equal(h, x.astype(np.float16).view(np.int16))
    np.testing.assert_array_equal(b, -x)
