"""Math on scalars (a value loaded with `tl.load(ptr)`, not a block) on ascend: the scalar unit has no
exp2, log2, floor or ceil, so each runs as one vector instruction (or the block rule's sequence) on a
32-byte scratch block, in float for half and bfloat16; against numpy and the sim."""

from __future__ import annotations

import numpy as np
import pytest

triton = pytest.importorskip("triton")
tl = triton.language

import xblock  # noqa: E402


@triton.jit
def scalar_math(x_ptr, h_ptr, out_ptr, hout_ptr):
    x = tl.load(x_ptr)
    tl.store(out_ptr + 0, tl.exp2(x))
    tl.store(out_ptr + 1, tl.log2(tl.abs(x) + 1.0))
    tl.store(out_ptr + 2, tl.floor(x))
    tl.store(out_ptr + 3, tl.ceil(x))
    tl.store(out_ptr + 4, tl.exp(x))
    h = tl.load(h_ptr)
    tl.store(hout_ptr + 0, tl.exp2(h))
    tl.store(hout_ptr + 1, tl.floor(h))


@pytest.mark.parametrize("x", [-2.75, 0.4, 3.5])
def test_scalar_exp2_log2_floor_ceil(x):
    xs, hs = np.array([x], np.float32), np.array([x], np.float16)
    got = {}
    for target in ("sim", "ascend"):
        out, hout = np.zeros(5, np.float32), np.zeros(2, np.float16)
        xblock.jit(scalar_math)[(1,)](xs, hs, out, hout, target=target)
        got[target] = (out, hout)
    want = np.array([2.0 ** x, np.log2(abs(x) + 1.0), np.floor(x), np.ceil(x), np.exp(x)], np.float32)
    np.testing.assert_allclose(got["ascend"][0], want, rtol=2e-6)
    np.testing.assert_allclose(got["ascend"][1], np.array([2.0 ** x, np.floor(x)], np.float16), rtol=1e-3)
    np.testing.assert_allclose(got["ascend"][0], got["sim"][0], rtol=2e-6)
