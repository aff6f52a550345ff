"""Static data movements on the vector unit (vector/permute.py) against numpy, bit for bit: join and
interleave (two UB copies and one Gather), split (GatherMask even/odd, a Gather per half for 64-bit
elements), flip and the permutes TransDataTo5HD does not take (one Gather), broadcasts of rows that are
not whole 32-byte blocks, and the standard library's bitonic sorts of rows the native xb.sort does not
take (int32 keys, rows shorter than 32). Every dtype of 2, 4 and 8 bytes, and 8-bit ones (int8, uint8,
bools) through half lanes. The model's counters show the scalar UB accesses gone (what is left: the 8
SetValues that seed each 0, 1, 2, ... tile the offsets are built from, once before the grid loop). What
still runs as a scalar loop (gather, histogram, an unaligned cat) keeps its warning:
tests/ascend/lower/test_shape_ops.py."""

from __future__ import annotations

import numpy as np
import pytest

import xblock
import xblock.language as xl

from .._helpers import last_counters, run_ascend

DTYPES = [np.float16, np.float32, np.int16, np.int32, np.int64, np.float64]
SEED_WRITES = 8  # ctx.iota's vector build starts from 8 SetValues (once a length, before the grid loop)


def _data(rng, shape, dtype):
    """Random bit patterns of `dtype` (floats: NaNs, infinities and -0.0 included: the moves copy bits)."""
    dt = np.dtype(dtype)
    raw = rng.integers(0, 256, int(np.prod(shape)) * dt.itemsize, dtype=np.uint8)
    return raw.view(dt).reshape(shape).copy()


def _bits(x):
    return np.ascontiguousarray(x).view(f"u{x.dtype.itemsize}")


def _same(got, want):
    np.testing.assert_array_equal(_bits(got), _bits(np.ascontiguousarray(want)))


def _in_grid_loop(kernel, args, **meta) -> int:
    """GetValue/SetValue calls in the generated kernel's grid loop (the iota seeds come before it)."""
    cpp = kernel.warmup(*args, target="ascend", **meta).asm["cpp"]
    body = cpp[cpp.index("for (int64_t pid"):]
    return body.count("GetValue(") + body.count("SetValue(")


def _scalar(warns):
    """The warnings of shape ops left as scalar loops (not those of stores, comparisons, selects)."""
    return [w for w in warns if "scalar GetValue/SetValue" in w and
            any(k in w for k in ("join", "split", "permute", "broadcast"))]


@xblock.jit
def interleave_split(a_ptr, b_ptr, i_ptr, e_ptr, o_ptr, N: xl.constexpr):
    offs = xl.arange(0, N)
    a, b = xl.load(a_ptr + offs), xl.load(b_ptr + offs)
    xl.store(i_ptr + xl.arange(0, 2 * N), xl.interleave(a, b))
    x = xl.reshape(xl.load(i_ptr + xl.arange(0, 2 * N)), [N, 2])
    e, o = xl.split(x)
    xl.store(e_ptr + offs, o)  # swapped: the halves are not the loaded blocks
    xl.store(o_ptr + offs, e)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 2, 8, 64, 1024])
def test_interleave_split(n, dtype):
    rng = np.random.default_rng(n)
    a, b = _data(rng, n, dtype), _data(rng, n, dtype)
    i, e, o = np.zeros(2 * n, dtype), np.zeros(n, dtype), np.zeros(n, dtype)
    args = (a, b, i, e, o)
    warns = run_ascend(interleave_split, args, N=n)
    _same(i, np.stack([a, b], 1).ravel())
    _same(e, b)
    _same(o, a)
    assert not _scalar(warns)
    assert last_counters(interleave_split, args, N=n)["scalar_ub_accesses"] <= 2 * SEED_WRITES  # 2 lengths


@xblock.jit
def split_loaded(x_ptr, e_ptr, o_ptr, N: xl.constexpr, SCALE: xl.constexpr):
    x = xl.load(x_ptr + xl.arange(0, 2 * N))
    if SCALE:
        x = x * 3
    e, o = xl.split(xl.reshape(x, [N, 2]))
    offs = xl.arange(0, N)
    xl.store(e_ptr + offs, e)
    xl.store(o_ptr + offs, o)


@pytest.mark.parametrize("dtype,n,scale", [(np.float16, 16384, False), (np.float32, 4096, True),
                                           (np.int32, 1, True), (np.int16, 16, True)])
def test_split_long_and_short(dtype, n, scale):
    """More than 255 GatherMask repeats (two calls) in float16; one pair; pairs within one repeat."""
    x = (np.arange(2 * n) % 1000 - 500).astype(dtype)
    e, o = np.zeros(n, dtype), np.zeros(n, dtype)
    warns = run_ascend(split_loaded, (x, e, o), N=n, SCALE=scale)
    want = x * 3 if scale else x
    _same(e, want[0::2])
    _same(o, want[1::2])
    assert not _scalar(warns)


@xblock.jit
def flip2(x_ptr, y_ptr, z_ptr, R: xl.constexpr, C: xl.constexpr):
    offs = xl.arange(0, R)[:, None] * C + xl.arange(0, C)[None, :]
    x = xl.load(x_ptr + offs)
    xl.store(y_ptr + offs, xl.flip(x, 1))
    xl.store(z_ptr + offs, xl.flip(x, 0))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 2), (2, 1), (4, 8), (32, 64), (2, 128)])
def test_flip(shape, dtype):
    x = _data(np.random.default_rng(sum(shape)), shape, dtype)
    y, z = np.zeros_like(x), np.zeros_like(x)
    warns = run_ascend(flip2, (x, y, z), R=shape[0], C=shape[1])
    _same(y, x[:, ::-1])
    _same(z, x[::-1, :])
    assert not _scalar(warns)


@pytest.mark.parametrize("dtype", [np.float32, np.int16])
def test_flip_in_chunks(dtype):
    """4096 lanes: each Gather moves at most 2048 (permute.CHUNK), its offsets built per chunk."""
    test_flip((64, 64), dtype)


@xblock.jit
def permute3(x_ptr, y_ptr, A: xl.constexpr, B: xl.constexpr, C: xl.constexpr, P0: xl.constexpr,
             P1: xl.constexpr, P2: xl.constexpr):
    n: xl.constexpr = A * B * C
    y = xl.permute(xl.reshape(xl.load(x_ptr + xl.arange(0, n)), [A, B, C]), (P0, P1, P2))
    xl.store(y_ptr + xl.arange(0, n), xl.reshape(y, [n]))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,order", [((2, 4, 8), (2, 0, 1)), ((4, 2, 16), (1, 2, 0)), ((8, 4, 2), (2, 1, 0)),
                                         ((2, 64, 4), (0, 2, 1)), ((16, 1, 4), (2, 1, 0))])
def test_permute3(shape, order, dtype):
    x = _data(np.random.default_rng(sum(shape)), shape, dtype)
    y = np.zeros(x.size, dtype)
    args = (x.ravel(), y)
    meta = dict(A=shape[0], B=shape[1], C=shape[2], P0=order[0], P1=order[1], P2=order[2])
    warns = run_ascend(permute3, args, **meta)
    _same(y, np.transpose(x, order).ravel())
    assert not _scalar(warns)
    assert last_counters(permute3, args, **meta)["scalar_ub_accesses"] <= SEED_WRITES
    assert _in_grid_loop(permute3, args, **meta) == 0


@xblock.jit
def row_broadcast(x_ptr, y_ptr, R: xl.constexpr, C: xl.constexpr):
    v = xl.load(x_ptr + xl.arange(0, R))
    y = xl.broadcast_to(xl.reshape(v, [R, 1]), [R, C])
    xl.store(y_ptr + xl.arange(0, R)[:, None] * C + xl.arange(0, C)[None, :], y)


@pytest.mark.parametrize("dtype", [np.float16, np.int32, np.int64])
@pytest.mark.parametrize("shape", [(4, 2), (8, 4), (2, 1)])
def test_broadcast_short_rows(shape, dtype):
    """Rows shorter than a 32-byte block: a Gather at stride 0 (no Brcb), not the scalar loop."""
    x = _data(np.random.default_rng(3), shape[0], dtype)
    y = np.zeros(shape, dtype)
    warns = run_ascend(row_broadcast, (x, y), R=shape[0], C=shape[1])
    _same(y, np.broadcast_to(x[:, None], shape))
    assert not _scalar(warns)


@xblock.jit
def sort_rows(x_ptr, a_ptr, d_ptr, R: xl.constexpr, C: xl.constexpr):
    offs = xl.arange(0, R)[:, None] * C + xl.arange(0, C)[None, :]
    x = xl.load(x_ptr + offs)
    xl.store(a_ptr + offs, xl.sort(x))
    xl.store(d_ptr + offs, xl.sort(x, descending=True))


@pytest.mark.parametrize("dtype,shape", [(np.int32, (16, 64)), (np.int32, (1, 2)), (np.int16, (4, 32)),
                                         (np.float32, (8, 16)), (np.float16, (2, 16)), (np.int64, (4, 8))])
def test_bitonic_sort(dtype, shape):
    """The library's bitonic network (rows the native sort does not take) on the vector unit."""
    rng = np.random.default_rng(shape[1])
    x = rng.integers(-30000, 30000, shape).astype(dtype)
    a, d = np.zeros_like(x), np.zeros_like(x)
    args = (x, a, d)
    warns = run_ascend(sort_rows, args, R=shape[0], C=shape[1])
    np.testing.assert_array_equal(a, np.sort(x, 1))
    np.testing.assert_array_equal(d, np.sort(x, 1)[:, ::-1])
    assert not _scalar(warns)
    if np.dtype(dtype).itemsize < 8:  # (64-bit comparisons and selects are scalar loops of their own)
        assert _in_grid_loop(sort_rows, args, R=shape[0], C=shape[1]) == 0
        # what is left: 8 seeds (at most) of each length's 0, 1, 2, ... tile, once before the grid loop
        assert last_counters(sort_rows, args, R=shape[0], C=shape[1])["scalar_ub_accesses"] <= 8 * SEED_WRITES


@xblock.jit
def bytes_moves(x_ptr, y_ptr, j_ptr, e_ptr, f_ptr, t_ptr, N: xl.constexpr):
    offs = xl.arange(0, N)
    x, y = xl.load(x_ptr + offs), xl.load(y_ptr + offs)
    xl.store(j_ptr + xl.arange(0, 2 * N), xl.interleave(x, y))
    e, _o = xl.split(xl.reshape(xl.load(j_ptr + xl.arange(0, 2 * N)), [N, 2]))
    xl.store(e_ptr + offs, e)
    xl.store(f_ptr + offs, xl.flip(x, 0))
    t = xl.permute(xl.reshape(x, [2, 4, N // 8]), (2, 0, 1))
    xl.store(t_ptr + offs, xl.reshape(t, [N]))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.bool_])
@pytest.mark.parametrize("n", [16, 64])
def test_8bit_through_half_lanes(dtype, n):
    """Gather and GatherMask have no 8-bit elements: the bytes move as half lanes 0..255, exact."""
    rng = np.random.default_rng(n)
    x, y = (rng.integers(0, 2 if dtype is np.bool_ else 256, n).astype(dtype) for _ in range(2))
    j, e, f, t = np.zeros(2 * n, dtype), np.zeros(n, dtype), np.zeros(n, dtype), np.zeros(n, dtype)
    warns = run_ascend(bytes_moves, (x, y, j, e, f, t), N=n)
    _same(j, np.stack([x, y], 1).ravel())
    _same(e, x)
    _same(f, x[::-1])
    _same(t, np.transpose(x.reshape(2, 4, n // 8), (2, 0, 1)).ravel())
    assert not _scalar(warns)


# ----- a hand-written bitonic argsort in FlagGems' style (reshape, sums over a pair axis, xor swaps) -----

@xblock.jit
def _xor_cas(x, ids, flip, i: xl.constexpr, n_dims: xl.constexpr):
    n_outer: xl.constexpr = x.numel >> n_dims
    shape: xl.constexpr = [n_outer * 2**i, 2, 2**(n_dims - i - 1)]
    y = xl.reshape(x, shape)
    mask = xl.arange(0, 2)[None, :, None]
    left = xl.reshape(xl.broadcast_to(xl.sum(y * (1 - mask), 1)[:, None, :], shape).to(y.dtype), x.shape)
    right = xl.reshape(xl.broadcast_to(xl.sum(y * mask, 1)[:, None, :], shape).to(y.dtype), x.shape)
    y_idx = xl.reshape(ids, shape)
    left_idx = xl.reshape(xl.broadcast_to(xl.sum(y_idx * (1 - mask), 1)[:, None, :], shape), x.shape)
    right_idx = xl.reshape(xl.broadcast_to(xl.sum(y_idx * mask, 1)[:, None, :], shape), x.shape)
    ileft = left.to(xl.int32, bitcast=True)
    iright = right.to(xl.int32, bitcast=True)
    ix = x.to(xl.int32, bitcast=True)
    cond = (left > right) != flip
    ret = ix ^ xl.where(cond, ileft ^ iright, xl.zeros_like(ix))
    new_ids = ids ^ xl.where(cond, left_idx.to(xl.int32) ^ right_idx.to(xl.int32), xl.zeros_like(ids))
    return ret.to(x.dtype, bitcast=True), new_ids


@xblock.jit
def _xor_merge(x, ids, stage: xl.constexpr, order: xl.constexpr, n_dims: xl.constexpr):
    n_outer: xl.constexpr = x.numel >> n_dims
    if order == 2:
        shape: xl.constexpr = [n_outer * 2**(n_dims - 1 - stage), 2, 2**stage]
        flip = xl.reshape(xl.broadcast_to(xl.arange(0, 2)[None, :, None], shape), x.shape)
    else:
        flip = order
    for i in xl.static_range(stage):
        x, ids = _xor_cas(x, ids, flip, i + (n_dims - stage), n_dims)
    return x, ids


@xblock.jit
def xor_argsort(x_ptr, v_ptr, i_ptr, R: xl.constexpr, C: xl.constexpr, LOG: xl.constexpr):
    offs = xl.arange(0, R)[:, None] * C + xl.arange(0, C)[None, :]
    x = xl.load(x_ptr + offs)
    ids = xl.broadcast_to(xl.arange(0, C)[None, :], [R, C])
    for s in xl.static_range(1, LOG + 1):
        x, ids = _xor_merge(x, ids, s, 2 if s < LOG else 0, LOG)
    xl.store(v_ptr + offs, x)
    xl.store(i_ptr + offs, ids)


@pytest.mark.parametrize("shape", [(4, 16), (2, 64)])
def test_flaggems_style_argsort(shape):
    """The pair-axis broadcasts ([A, 1, B] -> [A, 2, B]) of a FlagGems-style argsort are Gathers at stride 0
    (no broadcast warning; its sums over the pair axis are the reduce rule's, outside these moves)."""
    R, C = shape
    x = np.random.default_rng(C).permutation(R * C).astype(np.float32).reshape(R, C)
    v, i = np.zeros_like(x), np.zeros((R, C), np.int32)
    warns = run_ascend(xor_argsort, (x, v, i), R=R, C=C, LOG=C.bit_length() - 1)
    np.testing.assert_array_equal(v, np.sort(x, 1))
    np.testing.assert_array_equal(i, np.argsort(x, 1))
    assert not _scalar(warns)
    assert "Gather(" in xor_argsort.warmup(x, v, i, target="ascend", R=R, C=C, LOG=C.bit_length() - 1).asm["cpp"]
