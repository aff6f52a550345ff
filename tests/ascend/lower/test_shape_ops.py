"""join, split, cat, gather and histogram on ascend against numpy, at boundary sizes (1, 2, 8, 64
lanes; 6 valid lanes of 8 through a mask where a block size must be a power of two) and in f32,
f16 and i32: cat as UB->UB DataCopys where its first half ends on a 32-byte block (else its second
half element by element), join and split on the vector unit (vector/permute.py), gather and histogram
as scalar GetValue/SetValue loops with a warning."""

from __future__ import annotations

import numpy as np
import pytest

import xblock
import xblock.language as xl
from xblock.errors import CompilationError

from .._helpers import data, run_ascend

SIZES = [1, 2, 8, 64]
DTYPES = [np.float32, np.float16, np.int32]


@xblock.jit
def join_split_cat(x_ptr, y_ptr, j_ptr, a_ptr, b_ptr, c_ptr, N: xl.constexpr):
    offs = xl.arange(0, N)
    x = xl.load(x_ptr + offs)
    y = xl.load(y_ptr + offs)
    xl.store(j_ptr + offs[:, None] * 2 + xl.arange(0, 2)[None, :], xl.join(x, y))
    pairs = xl.load(j_ptr + offs[:, None] * 2 + xl.arange(0, 2)[None, :])  # [N, 2]: back apart
    a, b = xl.split(pairs)
    xl.store(a_ptr + offs, a)
    xl.store(b_ptr + offs, b)
    xl.store(c_ptr + xl.arange(0, 2 * N), xl.cat(x, y, can_reorder=True))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_join_split_cat(n, dtype):
    rng = np.random.default_rng(n)
    x, y = data(rng, n, dtype), data(rng, n, dtype)
    j, a, b, c = np.zeros(2 * n, dtype), np.zeros(n, dtype), np.zeros(n, dtype), np.zeros(2 * n, dtype)
    warns = run_ascend(join_split_cat, (x, y, j, a, b, c), N=n)
    np.testing.assert_array_equal(j, np.stack([x, y], 1).ravel())
    np.testing.assert_array_equal(a, x)
    np.testing.assert_array_equal(b, y)
    np.testing.assert_array_equal(c, np.concatenate([x, y]))
    assert not any(("join" in w or "split" in w) and "scalar GetValue/SetValue loop" in w for w in warns)
    aligned = (n * np.dtype(dtype).itemsize) % 32 == 0  # cat is two DataCopys, no scalar loop
    assert aligned != any("cat whose first block" in w for w in warns)


@xblock.jit
def join_2d(x_ptr, y_ptr, j_ptr, R: xl.constexpr, C: xl.constexpr):
    rows = xl.arange(0, R)[:, None]
    cols = xl.arange(0, C)[None, :]
    x = xl.load(x_ptr + rows * C + cols)
    y = xl.load(y_ptr + cols)  # broadcast against x
    xl.store(j_ptr + (rows * C + cols)[:, :, None] * 2 + xl.arange(0, 2)[None, None, :], xl.join(x, y))


def test_join_of_2d_blocks():
    rng = np.random.default_rng(0)
    x, y = data(rng, (4, 8), np.float32), data(rng, 8, np.float32)
    j = np.zeros((4, 8, 2), np.float32)
    run_ascend(join_2d, (x, y, j), R=4, C=8)
    np.testing.assert_array_equal(j, np.stack([x, np.broadcast_to(y, x.shape)], -1))


@xblock.jit
def gathers(src_ptr, idx_ptr, out_ptr, cidx_ptr, col_ptr, R: xl.constexpr, C: xl.constexpr, K: xl.constexpr):
    rows = xl.arange(0, R)[:, None]
    cols = xl.arange(0, C)[None, :]
    src = xl.load(src_ptr + rows * C + cols)
    ks = xl.arange(0, K)[None, :]
    xl.store(out_ptr + rows * K + ks, xl.gather(src, xl.load(idx_ptr + rows * K + ks), 1))
    cidx = xl.load(cidx_ptr + xl.arange(0, 2)[:, None] * C + cols)
    xl.store(col_ptr + xl.arange(0, 2)[:, None] * C + cols, xl.gather(src, cidx, 0))


def _clamped(idx, n):
    return np.where((idx < 0) | (idx >= n), n - 1, idx)  # out of range reads the last element


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("r,c,k", [(1, 1, 1), (2, 2, 8), (2, 8, 2), (4, 64, 8), (2, 8, 64)])
def test_gather_clamps_out_of_range(r, c, k, dtype):
    rng = np.random.default_rng(r * c * k)
    src = data(rng, (r, c), dtype)
    idx = rng.integers(-3, c + 3, (r, k)).astype(np.int32)
    cidx = rng.integers(-2, r + 2, (2, c)).astype(np.int32)
    out, col = np.zeros((r, k), dtype), np.zeros((2, c), dtype)
    warns = run_ascend(gathers, (src, idx, out, cidx, col), R=r, C=c, K=k)
    np.testing.assert_array_equal(out, np.take_along_axis(src, _clamped(idx, c), 1))
    np.testing.assert_array_equal(col, np.take_along_axis(src, _clamped(cidx, r), 0))
    assert any("gather" in w and "scalar GetValue/SetValue loop" in w for w in warns)


@xblock.jit
def histograms(x_ptr, n, h_ptr, hm_ptr, N: xl.constexpr, BINS: xl.constexpr):
    offs = xl.arange(0, N)
    x = xl.load(x_ptr + offs)
    xl.store(h_ptr + xl.arange(0, BINS), xl.histogram(x, BINS))
    xl.store(hm_ptr + xl.arange(0, BINS), xl.histogram(x, BINS, mask=offs < n))


@pytest.mark.parametrize("n_lanes,bins,valid", [(1, 1, 1), (2, 2, 1), (8, 8, 6), (64, 64, 37), (64, 2, 6),
                                                 (8, 256, 6)])
def test_histogram(n_lanes, bins, valid):
    rng = np.random.default_rng(bins)
    x = rng.integers(-3, bins + 3, n_lanes).astype(np.int32)
    h = np.full(bins, 7, np.int32)  # stale values: the bins are zeroed first
    hm = np.full(bins, 7, np.int32)
    warns = run_ascend(histograms, (x, valid, h, hm), N=n_lanes, BINS=bins)

    def ref(v):
        return np.bincount(v[(v >= 0) & (v < bins)], minlength=bins)

    np.testing.assert_array_equal(h, ref(x))
    np.testing.assert_array_equal(hm, ref(x[:valid]))
    assert any("histogram" in w and "scalar GetValue/SetValue loop" in w for w in warns)


@xblock.jit
def join_pointers(x_ptr, y_ptr, o_ptr, N: xl.constexpr):
    offs = xl.arange(0, N)
    lo, hi = xl.split(xl.join(x_ptr + offs, y_ptr + offs))
    xl.store(o_ptr + offs, xl.load(lo) + xl.load(hi))


def test_join_of_pointer_blocks_is_refused():
    f = np.zeros(8, np.float32)
    with pytest.raises(CompilationError, match="join of pointer blocks is not supported on ascend"):
        join_pointers[(1,)](f, f, f, N=8, target="ascend")


@xblock.jit
def gather_of_full(idx_ptr, out_ptr, R: xl.constexpr, C: xl.constexpr):
    offs = xl.arange(0, R)[:, None] * C + xl.arange(0, C)[None, :]
    ones = xl.full((R, C), 1.5, xl.float32)
    xl.store(out_ptr + offs, xl.gather(ones, xl.load(idx_ptr + offs), 0))


def test_gather_of_a_uniform_block_is_that_block():  # fuzz campaign 7, entry P: C++ that did not compile
    idx = (np.arange(32, dtype=np.int32) * 7 % 4).reshape(4, 8)
    out = np.zeros((4, 8), np.float32)
    assert run_ascend(gather_of_full, (idx, out), R=4, C=8) == []
    np.testing.assert_array_equal(out, np.full((4, 8), 1.5, np.float32))


@xblock.jit
def _bool_moves(x_ptr, idx_ptr, o1, o2, o3, o4, n, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    x = xl.load(x_ptr + offs, mask=offs < n, other=0)
    b = x > 0
    c = x < -1
    j = xl.join(b, c)
    xl.store(o1 + offs[:, None] * 2 + xl.arange(0, 2)[None, :], j)
    lo, hi = xl.split(j)
    xl.store(o2 + offs, lo != hi)
    xl.store(o3 + xl.arange(0, 2 * BLOCK), xl.cat(b, c, can_reorder=True))
    xl.store(o4 + offs, xl.gather(b, xl.load(idx_ptr + offs), 0))


@pytest.mark.parametrize("block", [1, 16, 64])
def test_join_split_cat_gather_of_bool_blocks(block):
    """Bool blocks from comparisons are bit masks on ascend; these ops move elements, so the masks
    are widened to bytes first (they used to be refused: "split of bool blocks is not supported")."""
    x = (np.arange(block, dtype=np.int32) * 7919 % 17 - 8).astype(np.int32)
    idx = ((np.arange(block) * 5) % block).astype(np.int32)
    b, c = x > 0, x < -1
    expected = [np.stack([b, c], 1), b != c, np.concatenate([b, c]), b[idx]]
    for target in ("sim", "ascend"):
        outs = [np.zeros((block, 2), np.bool_), np.zeros(block, np.bool_), np.zeros(2 * block, np.bool_),
                np.zeros(block, np.bool_)]
        _bool_moves[(1,)](x, idx, *outs, block, BLOCK=block, target=target)
        for got, want in zip(outs, expected):
            np.testing.assert_array_equal(got, want, err_msg=target)
