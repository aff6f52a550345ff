"""Shape ops with Triton 3.6's semantics in unmodified @triton.jit kernels, against numpy: join,
split, interleave, cat, gather, histogram, flip, sort, topk, bitonic_merge, the standard helpers a
hand-written bitonic sort imports, and rank-3 blocks through elementwise ops, reductions and scans."""

import numpy as np
import pytest

import xblock
from xblock.backends.cuda.precompile import precompile
from xblock.errors import CompilationError, ExecutionError

triton = pytest.importorskip("triton")
tl = triton.language
from triton.language.standard import _bitonic_merge, _compare_and_swap, _indicator, _log2  # noqa: E402

TARGETS = ["sim", "cpu"]


def run(kernel, args, target, grid=(1,), **meta):
    xblock.jit(kernel)[grid](*args, target=target, **meta)


# ------------------------------------------------------------------------------ join / split
@triton.jit
def join_split(x_ptr, y_ptr, j_ptr, a_ptr, b_ptr, s_ptr, R: tl.constexpr, C: tl.constexpr):
    rows = tl.arange(0, R)[:, None]
    cols = tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + rows * C + cols)
    y = tl.load(y_ptr + cols)                      # broadcast against x, as join does
    j = tl.join(x, y)                              # [R, C, 2]
    two = tl.arange(0, 2)[None, None, :]
    tl.store(j_ptr + (rows * C + cols)[:, :, None] * 2 + two, j)
    a, b = tl.split(j * 2.0)
    tl.store(a_ptr + rows * C + cols, a)
    tl.store(b_ptr + rows * C + cols, b)
    lo, hi = tl.join(x_ptr + cols, y_ptr + cols).split()  # pointer blocks join too
    first, second = tl.split(tl.join(3.5, -1.0))          # two scalars, back as scalars
    tl.store(s_ptr + cols, first + tl.load(lo))
    tl.store(s_ptr + C + cols, second + tl.load(hi))


@pytest.mark.parametrize("target", TARGETS)
def test_join_split(target):
    R, C = 4, 8
    x = np.random.default_rng(1).standard_normal((R, C)).astype(np.float32)
    y = np.random.default_rng(2).standard_normal(C).astype(np.float32)
    j = np.zeros((R, C, 2), np.float32)
    a, b = np.zeros_like(x), np.zeros_like(x)
    s = np.zeros(2 * C, np.float32)
    run(join_split, (x, y, j, a, b, s), target, R=R, C=C)
    np.testing.assert_array_equal(j, np.stack([x, np.broadcast_to(y, x.shape)], -1))
    np.testing.assert_array_equal(a, 2 * x)
    np.testing.assert_array_equal(b, 2 * np.broadcast_to(y, x.shape))
    np.testing.assert_array_equal(s, np.concatenate([3.5 + x[0], -1.0 + y]))


@triton.jit
def interleave_cat(a_ptr, b_ptr, i_ptr, c_ptr, n_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    tl.store(i_ptr + tl.arange(0, 2 * N), tl.interleave(a, b))
    c = tl.cat(a, b, can_reorder=True)
    tl.store(c_ptr + tl.arange(0, 2 * N), c)
    tl.store(n_ptr, tl.sum(c, 0))  # order-insensitive: portable to every target


@pytest.mark.parametrize("target", TARGETS + ["ascend"])
def test_interleave_and_cat(target):
    N = 16
    a = np.arange(N, dtype=np.int32)
    b = 100 + np.arange(N, dtype=np.int32)
    i, c = np.zeros(2 * N, np.int32), np.zeros(2 * N, np.int32)
    n = np.zeros(1, np.int32)
    run(interleave_cat, (a, b, i, c, n), target, N=N)
    np.testing.assert_array_equal(i, np.stack([a, b], 1).ravel())
    np.testing.assert_array_equal(c, np.concatenate([a, b]))  # sim and cpu keep the order
    assert n[0] == a.sum() + b.sum()


# ------------------------------------------------------------------------------ gather / histogram
@triton.jit
def gather_rows(src_ptr, idx_ptr, out_ptr, col_ptr, cidx_ptr, R: tl.constexpr, C: tl.constexpr, K: tl.constexpr):
    rows = tl.arange(0, R)[:, None]
    cols = tl.arange(0, C)[None, :]
    src = tl.load(src_ptr + rows * C + cols)
    idx = tl.load(idx_ptr + rows * K + tl.arange(0, K)[None, :])
    tl.store(out_ptr + rows * K + tl.arange(0, K)[None, :], tl.gather(src, idx, 1))
    cidx = tl.load(cidx_ptr + tl.arange(0, 2)[:, None] * C + cols)
    tl.store(col_ptr + tl.arange(0, 2)[:, None] * C + cols, src.gather(cidx, axis=0))


@pytest.mark.parametrize("target", TARGETS)
def test_gather(target):
    R, C, K = 4, 8, 16
    rng = np.random.default_rng(3)
    src = rng.standard_normal((R, C)).astype(np.float32)
    idx = rng.integers(0, C, (R, K)).astype(np.int32)
    cidx = rng.integers(0, R, (2, C)).astype(np.int64)
    out, col = np.zeros((R, K), np.float32), np.zeros((2, C), np.float32)
    run(gather_rows, (src, idx, out, col, cidx), target, R=R, C=C, K=K)
    np.testing.assert_array_equal(out, np.take_along_axis(src, idx, 1))
    np.testing.assert_array_equal(col, np.take_along_axis(src, cidx, 0))


def test_gather_ascend():  # test_gather's int64 indices too (narrowed to int32 by GatherMask)
    R, C, K = 4, 8, 16
    rng = np.random.default_rng(3)
    src = rng.standard_normal((R, C)).astype(np.float32)
    idx = rng.integers(0, C, (R, K)).astype(np.int32)
    cidx = rng.integers(0, R, (2, C)).astype(np.int64)
    out, col = np.zeros((R, K), np.float32), np.zeros((2, C), np.float32)
    with pytest.warns(UserWarning, match="gather .*scalar GetValue/SetValue loop"):
        run(gather_rows, (src, idx, out, col, cidx), "ascend", R=R, C=C, K=K)
    np.testing.assert_array_equal(out, np.take_along_axis(src, idx, 1))
    np.testing.assert_array_equal(col, np.take_along_axis(src, cidx, 0))


@triton.jit
def histograms(x_ptr, n, h_ptr, hm_ptr, N: tl.constexpr, BINS: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(h_ptr + tl.arange(0, BINS), tl.histogram(x, BINS))
    tl.store(hm_ptr + tl.arange(0, BINS), x.histogram(BINS, mask=offs < n))


@pytest.mark.parametrize("target", TARGETS + ["ascend"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8])
def test_histogram(target, dtype):
    N, BINS, n = 64, 16, 37
    rng = np.random.default_rng(4)
    lo = 0 if dtype == np.uint8 else -5
    x = rng.integers(lo, 20, N).astype(dtype)
    if dtype == np.int64:
        x[3] = 2**32 + 2  # would land in bin 2 if narrowed: must not be counted
    h, hm = np.zeros(BINS, np.int32), np.zeros(BINS, np.int32)
    run(histograms, (x, n, h, hm), target, N=N, BINS=BINS)

    def ref(v):
        v = v.astype(np.int64)
        return np.bincount(v[(v >= 0) & (v < BINS)], minlength=BINS)

    np.testing.assert_array_equal(h, ref(x))
    np.testing.assert_array_equal(hm, ref(x[:n]))


# ------------------------------------------------------------------------------ flip / sort / topk
@triton.jit
def flips(x_ptr, f0_ptr, f1_ptr, f_ptr, R: tl.constexpr, C: tl.constexpr):
    rows = tl.arange(0, R)[:, None]
    cols = tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + rows * C + cols)
    tl.store(f0_ptr + rows * C + cols, tl.flip(x, 0))
    tl.store(f1_ptr + rows * C + cols, x.flip(1))
    tl.store(f_ptr + tl.arange(0, C), tl.flip(tl.load(x_ptr + tl.arange(0, C))))


@pytest.mark.parametrize("target", TARGETS + ["ascend"])
@pytest.mark.parametrize("shape", [(1, 2), (4, 8), (8, 32)])
def test_flip(target, shape):
    R, C = shape
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float16)
    f0, f1, f = np.zeros_like(x), np.zeros_like(x), np.zeros(C, x.dtype)
    run(flips, (x, f0, f1, f), target, R=R, C=C)
    np.testing.assert_array_equal(f0, x[::-1])
    np.testing.assert_array_equal(f1, x[:, ::-1])
    np.testing.assert_array_equal(f, x[0, ::-1])


@triton.jit
def sorts(x_ptr, b_ptr, s_ptr, d_ptr, t_ptr, m_ptr, R: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rows = tl.arange(0, R)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rows * N + cols)
    tl.store(s_ptr + rows * N + cols, tl.sort(x))
    tl.store(d_ptr + rows * N + cols, tl.sort(x, dim=1, descending=True))
    tl.store(t_ptr + rows * K + tl.arange(0, K)[None, :], tl.topk(x, K))
    bitonic = tl.load(b_ptr + rows * N + cols)  # ascending, then descending
    tl.store(m_ptr + rows * N + cols, tl.bitonic_merge(bitonic, descending=True))


# ascend sorts n=128 too, in about a minute a case (its scalar permute/join/split loops on the CPU model)
SORT_CASES = [(t, n, k) for t in TARGETS + ["ascend"] for n, k in [(2, 1), (16, 4), (128, 8)]
              if t != "ascend" or n < 128]


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("target,n,k", SORT_CASES)
def test_sort_topk(target, dtype, n, k):
    R = 4 if n < 128 else 2
    rng = np.random.default_rng(n)
    x = (rng.standard_normal((R, n)) * 50).astype(dtype)
    x[0, : n // 2] = x[0, 0]  # ties
    s, d, m = np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)
    t = np.zeros((R, k), dtype)
    half = np.sort(x, 1)
    bitonic = np.concatenate([half[:, : n // 2], half[:, n // 2:][:, ::-1]], 1)
    run(sorts, (x, bitonic, s, d, t, m), target, R=R, N=n, K=k)
    asc = np.sort(x, 1)
    np.testing.assert_array_equal(s, asc)
    np.testing.assert_array_equal(d, asc[:, ::-1])
    np.testing.assert_array_equal(t, asc[:, ::-1][:, :k])
    np.testing.assert_array_equal(m, asc[:, ::-1])


@triton.jit
def handmade_bitonic(x_ptr, o_ptr, t_ptr, N: tl.constexpr):
    # the way public kernels write a bitonic sort with triton.language.standard's helpers
    x = tl.load(x_ptr + tl.arange(0, N))
    n_dims: tl.constexpr = _log2(N)
    for i in tl.static_range(1, n_dims + 1):
        x = _bitonic_merge(x, i, 2 if i < n_dims else 1, n_dims)
    tl.store(o_ptr + tl.arange(0, N), x)
    h = tl.reshape(tl.load(x_ptr + tl.arange(0, N)), [2] * n_dims)
    h = _compare_and_swap(h, _indicator(n_dims, n_dims - 1), 0)
    tl.store(t_ptr + tl.arange(0, N), tl.reshape(h, [N]))


@pytest.mark.parametrize("target", TARGETS + ["ascend"])
def test_standard_helpers(target):
    N = 32
    x = np.random.default_rng(6).permutation(N).astype(np.float32)
    o, t = np.zeros_like(x), np.zeros_like(x)
    run(handmade_bitonic, (x, o, t), target, N=N)
    np.testing.assert_array_equal(o, np.sort(x)[::-1])
    # one compare-and-swap of neighbours, ascending in the first half, descending in the second
    pairs = x.reshape(-1, 2)
    lo, hi = pairs.min(1), pairs.max(1)
    up = np.arange(N // 2) < N // 4
    ref = np.stack([np.where(up, lo, hi), np.where(up, hi, lo)], 1).ravel()
    np.testing.assert_array_equal(t, ref)


# ------------------------------------------------------------------------------ rank 3
@triton.jit
def rank3(x_ptr, e_ptr, s0_ptr, s1_ptr, s2_ptr, p_ptr, c_ptr, A: tl.constexpr, B: tl.constexpr,
          C: tl.constexpr):
    a = tl.arange(0, A)[:, None, None]
    b = tl.arange(0, B)[None, :, None]
    c = tl.arange(0, C)[None, None, :]
    x = tl.load(x_ptr + a * B * C + b * C + c)
    tl.store(e_ptr + a * B * C + b * C + c, tl.exp(x) * 2.0 + x)
    tl.store(s0_ptr + tl.arange(0, B)[:, None] * C + tl.arange(0, C)[None, :], tl.sum(x, 0))
    tl.store(s1_ptr + tl.arange(0, A)[:, None] * C + tl.arange(0, C)[None, :], tl.max(x, 1))
    tl.store(s2_ptr + tl.arange(0, A)[:, None] * B + tl.arange(0, B)[None, :], tl.sum(x, axis=2))
    pa = tl.arange(0, C)[:, None, None]
    pb = tl.arange(0, A)[None, :, None]
    pc = tl.arange(0, B)[None, None, :]
    tl.store(p_ptr + pa * A * B + pb * B + pc, tl.permute(x, 2, 0, 1))
    tl.store(c_ptr + a * B * C + b * C + c, tl.cumsum(x, axis=1, reverse=True))


@pytest.mark.parametrize("target", TARGETS)
def test_rank3_blocks(target):
    A, B, C = 2, 4, 8
    x = np.random.default_rng(7).standard_normal((A, B, C)).astype(np.float32)
    e = np.zeros_like(x)
    s0, s1, s2 = np.zeros((B, C), np.float32), np.zeros((A, C), np.float32), np.zeros((A, B), np.float32)
    p = np.zeros((C, A, B), np.float32)
    c = np.zeros_like(x)
    run(rank3, (x, e, s0, s1, s2, p, c), target, A=A, B=B, C=C)
    np.testing.assert_allclose(e, np.exp(x) * 2 + x, rtol=1e-6)
    np.testing.assert_allclose(s0, x.sum(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(s1, x.max(1))
    np.testing.assert_allclose(s2, x.sum(2), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(p, x.transpose(2, 0, 1))
    np.testing.assert_allclose(c, np.flip(np.cumsum(np.flip(x, 1), 1), 1), rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------------------ other targets
def test_cuda_compiles_shape_ops():
    f = np.zeros(64, np.float32)
    i = np.zeros(64, np.int32)
    assert "cubin" in precompile(join_split, (f, f, f, f, f, f), {"R": 4, "C": 8}).asm
    assert "cubin" in precompile(interleave_cat, (i, i, i, i, i), {"N": 16}).asm
    # (Triton 3.6's own compile of gather_rows fails at R=4, C=8, K=16 in TritonGPUOptimizeThreadLocality)
    assert "cubin" in precompile(gather_rows, (f, i, f, f, i), {"R": 16, "C": 32, "K": 64}).asm
    assert "cubin" in precompile(histograms, (i, 5, i, i), {"N": 64, "BINS": 16}).asm
    assert "cubin" in precompile(sorts, (f, f, f, f, f, f), {"R": 2, "N": 16, "K": 4}).asm
    assert "cubin" in precompile(handmade_bitonic, (f, f, f), {"N": 32}).asm


@pytest.mark.parametrize("kernel,args,meta,name", [
    (join_split, 6, {"R": 4, "C": 8}, "join of pointer blocks is not supported on ascend"),
])
def test_ascend_refuses_with_reason(kernel, args, meta, name):
    arrays = [np.zeros(256, np.float32) for _ in range(args)]
    if kernel is histograms:
        arrays = [np.zeros(256, np.int64), 5, np.zeros(256, np.int32), np.zeros(256, np.int32)]
    if kernel is gather_rows:
        arrays[1] = np.zeros(256, np.int32)
        arrays[4] = np.zeros(256, np.int64)
    with pytest.raises(CompilationError, match=name):
        run(kernel, arrays, "ascend", **meta)


def test_sim_gather_index_out_of_range():
    src = np.zeros((4, 8), np.float32)
    idx = np.full((4, 16), 8, np.int32)
    with pytest.raises(ExecutionError, match=r"gather index 8 is outside \[0, 8\)"):
        run(gather_rows, (src, idx, np.zeros((4, 16), np.float32), np.zeros((2, 8), np.float32),
                          np.zeros((2, 8), np.int32)), "sim", R=4, C=8, K=16)


# ------------------------------------------------------------------------------ views, user combines
@triton.jit
def _argmax_pair(v1, i1, v2, i2):
    take = (v1 > v2) | ((v1 == v2) & (i1 < i2))
    return tl.where(take, v1, v2), tl.where(take, i1, i2)


@triton.jit
def _running_max_with_count(a, na, b, nb):
    return tl.maximum(a, b), na + nb


@triton.jit
def views_and_combines(x_ptr, v_ptr, t_ptr, i_ptr, m_ptr, s_ptr, c_ptr, A: tl.constexpr, B: tl.constexpr,
                       C: tl.constexpr):
    a = tl.arange(0, A)[:, None, None]
    b = tl.arange(0, B)[None, :, None]
    c = tl.arange(0, C)[None, None, :]
    offs = a * B * C + b * C + c
    x = tl.load(x_ptr + offs)
    flat = tl.ravel(x)
    tl.store(v_ptr + tl.arange(0, A * B * C), tl.view(tl.reshape(flat, [A * B, C]), [A * B * C]) * 2.0)
    t = tl.trans(x, 1, 2, 0)                       # [B, C, A]
    tl.store(t_ptr + tl.arange(0, B)[:, None, None] * C * A + tl.arange(0, C)[None, :, None] * A
             + tl.arange(0, A)[None, None, :], t)
    row = tl.arange(0, C)
    grid3 = tl.broadcast_to(row[None, None, :], [A, B, C]) + tl.expand_dims(tl.expand_dims(tl.arange(0, A), 1), 2)
    tl.store(i_ptr + offs, grid3)
    idx = tl.broadcast_to(c, [A, B, C])
    vmax, imax = tl.reduce((x, idx), 2, _argmax_pair)  # user combine over a tuple, rank 3
    ab = tl.arange(0, A)[:, None] * B + tl.arange(0, B)[None, :]
    tl.store(m_ptr + ab, vmax)
    tl.store(s_ptr + ab, imax)
    ones = tl.full([A, B, C], 1, tl.int32)
    run_max, count = tl.associative_scan((x, ones), 1, _running_max_with_count, reverse=True)
    tl.store(c_ptr + offs, run_max + count.to(tl.float32) * 1000.0)


@pytest.mark.parametrize("target", TARGETS)
def test_views_and_user_combines(target):
    A, B, C = 2, 4, 8
    x = np.random.default_rng(8).standard_normal((A, B, C)).astype(np.float32)
    x[0, 0, 3] = x[0, 0, 5] = 9.0  # a tie: the smaller index wins
    v, t = np.zeros(A * B * C, np.float32), np.zeros((B, C, A), np.float32)
    i = np.zeros((A, B, C), np.int32)
    m, s = np.zeros((A, B), np.float32), np.zeros((A, B), np.int32)
    c = np.zeros_like(x)
    run(views_and_combines, (x, v, t, i, m, s, c), target, A=A, B=B, C=C)
    np.testing.assert_array_equal(v, 2 * x.ravel())
    np.testing.assert_array_equal(t, x.transpose(1, 2, 0))
    np.testing.assert_array_equal(i, np.arange(C)[None, None, :] + np.arange(A)[:, None, None] + 0 * x.astype(int))
    np.testing.assert_array_equal(m, x.max(2))
    np.testing.assert_array_equal(s, x.argmax(2))
    rev_max = np.flip(np.maximum.accumulate(np.flip(x, 1), 1), 1)
    count = (np.arange(B, 0, -1)[None, :, None] * 1000).astype(np.float32)
    np.testing.assert_array_equal(c, rev_max + count)
