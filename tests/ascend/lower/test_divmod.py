"""Integer `//` and `%` of blocks on the vector unit (through float, truncating like C), and
wrapped offsets (`% M`) that the Cube path reads as a row or column limit, only when the store
drops the rows or columns past the wrap."""

from __future__ import annotations

import numpy as np

import xblock
import xblock.language as xl
from tests.ascend.cube.kernels import wrapped_dot_kernel


@xblock.jit
def divmod_kernel(x_ptr, y_ptr, q_ptr, r_ptr, w_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    mask = offs < n
    x = xl.load(x_ptr + offs, mask=mask, other=0)
    y = xl.load(y_ptr + offs, mask=mask, other=1)
    xl.store(q_ptr + offs, x // y, mask=mask)
    xl.store(r_ptr + offs, x % y, mask=mask)
    xl.store(w_ptr + offs, offs % 7, mask=mask)  # a wrapped offset, stored as data


def test_int_divmod_matches_the_sim():
    n = 300
    rng = np.random.default_rng(3)
    x = rng.integers(-5000, 5000, n, dtype=np.int32)
    y = rng.integers(1, 90, n, dtype=np.int32) * rng.choice(np.array([-1, 1], np.int32), n)
    res = {}
    for target in ("sim", "ascend"):
        outs = [np.zeros(n, np.int32) for _ in range(3)]
        divmod_kernel[(xblock.cdiv(n, 128),)](x, y, *outs, n, BLOCK=128, target=target)
        res[target] = outs
    for got, want in zip(res["ascend"], res["sim"]):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(res["ascend"][2], np.arange(n) % 7)
    np.testing.assert_array_equal(res["ascend"][1], np.fmod(x, y))  # C's remainder: the dividend's sign


def test_wrapped_offsets_on_the_cube_need_a_store_that_drops_the_wrapped_rows():
    """Where the store keeps the rows past the wrap, the dot goes to the vector core, which loads them."""
    sig = dict(a_ptr="*fp16", b_ptr="*fp16", c_ptr="*fp32", M="i32", N="i32", K="i32")
    meta = dict(MASK_ROWS=0, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32)
    kept = xblock.compile(wrapped_dot_kernel, target="ascend", signature=sig, constexprs=meta)
    assert "MIX" in kept.metadata["kernel_type"]
    M, N, K = 40, 33, 50
    rng = np.random.default_rng(4)
    a = rng.standard_normal((M, K), dtype=np.float32).astype(np.float16)
    b = rng.standard_normal((K, N), dtype=np.float32).astype(np.float16)
    c = np.zeros((64, N), np.float32)  # rows 40..63 are a's rows 0..23 again (offsets % M)
    wrapped_dot_kernel[(2, 2)](a, b, c, M, N, K, target="ascend", **meta)
    wrapped = a[np.arange(64) % M].astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c, wrapped, atol=2e-2, rtol=2e-2)
    c = np.zeros((M, N), np.float32)  # the row mask M and the column mask N drop what wraps: on the Cube
    wrapped_dot_kernel[(2, 2)](a, b, c, M, N, K, target="ascend", **dict(meta, MASK_ROWS=1))
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), atol=2e-2, rtol=2e-2)
