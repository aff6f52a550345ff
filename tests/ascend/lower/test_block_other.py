"""A load whose `other` is a block (`tl.load(p, mask=m, other=y * 2)`, the fuzzer's most frequent
ascend refusal): the masked copy, then Select(mask, loaded, other) on the vector unit; equal to numpy
on ascend. Element types Select lacks are a clear error at the line."""

from __future__ import annotations

import numpy as np
import pytest

import xblock

triton = pytest.importorskip("triton")
tl = triton.language


@triton.jit
def load_or_block(x_ptr, y_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    y = tl.load(y_ptr + offs)
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=offs < n, other=y * 2))


@triton.jit
def rows_or_block(x_ptr, y_ptr, o_ptr, R, C: tl.constexpr, BR: tl.constexpr):
    r = tl.program_id(0) * BR + tl.arange(0, BR)[:, None]
    c = tl.arange(0, C)[None, :]
    y = tl.load(y_ptr + r * C + c)
    tl.store(o_ptr + r * C + c, tl.load(x_ptr + r * C + c, mask=(r < R) & (c < C - 3), other=y - 1))


@triton.jit
def load_or_loaded(x_ptr, y_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=offs < n, other=tl.load(y_ptr + offs)))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
def test_a_block_other_is_selected_where_the_mask_is_off(dtype):
    x, y = (np.arange(256) * 3 % 101).astype(dtype), (np.arange(256) % 17 + 5).astype(dtype)
    o = np.zeros(256, dtype)
    xblock.jit(load_or_block)[(4,)](x, y, o, 201, BLOCK=64, target="ascend")
    np.testing.assert_array_equal(o, np.where(np.arange(256) < 201, x, y * 2).astype(dtype))


def test_a_block_other_in_a_2d_tile():
    x = np.arange(40 * 16, dtype=np.float32).reshape(40, 16)
    y = np.ones_like(x) * 7
    o = np.zeros_like(x)
    xblock.jit(rows_or_block)[(5,)](x, y, o, 37, C=16, BR=8, target="ascend")
    rr, cc = np.arange(40)[:, None], np.arange(16)[None, :]
    np.testing.assert_array_equal(o, np.where((rr < 37) & (cc < 13), x, y - 1))


def test_a_block_other_of_int8_is_selected_in_half_and_of_int64_is_a_clear_error():
    x, y = (np.arange(64) * 7 % 256 - 128).astype(np.int8), (np.arange(64) % 5 - 2).astype(np.int8)
    o = np.zeros(64, np.int8)
    xblock.jit(load_or_loaded)[(1,)](x, y, o, 60, BLOCK=64, target="ascend")
    np.testing.assert_array_equal(o, np.where(np.arange(64) < 60, x, y))
    z = np.zeros(64, np.int64)
    with pytest.raises(xblock.CompilationError, match="a block `other` of a i64 load is not supported on ascend"):
        xblock.jit(load_or_loaded)[(1,)](z, z.copy(), z.copy(), 60, BLOCK=64, target="ascend")


@triton.jit
def bools_or_block(x_ptr, y_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    y = tl.load(y_ptr + offs)
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=offs < n, other=y > 0.5))


@pytest.mark.parametrize("n", [1, 63, 64, 65, 190])
def test_a_bool_load_with_a_block_other_combines_the_bit_masks(n):
    rng = np.random.default_rng(n)
    x = rng.random(192) < 0.5
    y = rng.random(192).astype(np.float32)
    o = np.zeros(192, bool)
    xblock.jit(bools_or_block)[(3,)](x, y, o, n, BLOCK=64, target="ascend")
    np.testing.assert_array_equal(o, np.where(np.arange(192) < n, x, y > 0.5))


@triton.jit
def where_of_bools(c_ptr, x_ptr, y_ptr, o_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    m = i < n
    c = tl.load(c_ptr + i, mask=m, other=0) > 0
    x = tl.load(x_ptr + i, mask=m, other=0.0)
    y = tl.load(y_ptr + i, mask=m, other=0.0)
    tl.store(o_ptr + i, tl.where(c, x > 0.5, y < 0.2), mask=m)


@pytest.mark.parametrize("n", [1, 63, 64])
def test_where_between_bool_blocks_combines_the_bit_masks(n):
    rng = np.random.default_rng(n)
    c = rng.integers(-3, 3, 64).astype(np.int32)
    x, y = rng.random(64).astype(np.float32), rng.random(64).astype(np.float32)
    o = np.zeros(64, bool)
    xblock.jit(where_of_bools)[(1,)](c, x, y, o, n, BLOCK=64, target="ascend")
    want = np.where(c > 0, x > 0.5, y < 0.2)
    want[n:] = False
    np.testing.assert_array_equal(o, want)
