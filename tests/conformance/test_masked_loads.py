"""Masked-off lanes of a load without `other` read 0, on every target, for every dtype and load form,
as Triton's GPU code (predicated loads into zeroed registers) and its interpreter give them. Public
kernels rely on it (a cumsum's part sum over a partial last block loaded without `other`, a row sum,
a max whose masked lanes count as zeros). Unmodified @triton.jit kernels against numpy on every
target that runs here, and compiled to cubin for cuda."""

import numpy as np
import pytest

import xblock
from xblock.backends.cuda.precompile import precompile
from xblock.testing import bf16

triton = pytest.importorskip("triton")
tl = triton.language

RUN_TARGETS = ["sim", "cpu", "ascend"]


@triton.jit
def block_part_sums(x_ptr, out_ptr, part_ptr, n, BLOCK: tl.constexpr):
    """One block's inclusive scan and its total (the first pass of a two-pass cumsum)."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    valid = offs < n
    vals = tl.load(x_ptr + offs, mask=valid)
    if vals.dtype.is_fp16() or vals.dtype.is_bf16():
        vals = vals.to(tl.float32)
    tl.store(out_ptr + offs, tl.cumsum(vals, axis=0), mask=valid)
    tl.store(part_ptr + pid, tl.sum(vals, axis=0))


@triton.jit
def block_max(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + pid, tl.max(tl.load(x_ptr + offs, mask=offs < n), axis=0))


@triton.jit
def dump_lanes(x_ptr, out_ptr, n, SHIFT, BLOCK: tl.constexpr):
    """Every lane of a (shifted) block as loaded, into a dense [grid * BLOCK] output."""
    pid = tl.program_id(0)
    lanes = pid * BLOCK + tl.arange(0, BLOCK)
    offs = lanes - SHIFT
    tl.store(out_ptr + lanes, tl.load(x_ptr + offs, mask=(offs >= 0) & (offs < n)))


@triton.jit
def row_sums_2d(x_ptr, sums_ptr, tile_ptr, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, BN)
    x = tl.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=(rows[:, None] < M) & (cols[None, :] < N))
    tl.store(sums_ptr + rows, tl.sum(x, axis=1), mask=rows < M)
    tl.store(tile_ptr + rows[:, None] * BN + cols[None, :], x)


@triton.jit
def scalar_or_zero(x_ptr, out_ptr, n):
    pid = tl.program_id(0)
    tl.store(out_ptr + pid, tl.load(x_ptr + pid, mask=pid < n))


@triton.jit
def gather_by_index(x_ptr, idx_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    i = tl.load(idx_ptr + offs)
    tl.store(out_ptr + offs, tl.load(x_ptr + i, mask=i < n))


@triton.jit
def strided_gather(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + 2 * offs, mask=2 * offs < n))


@triton.jit
def norm_rows(x_ptr, y_ptr, w_ptr, stats_ptr, N, stride, BLOCK: tl.constexpr):
    """A row normalized in three loops over column tiles loaded without `other` (the row read by
    each loop), scaled by a weight every program loads alike."""
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride + cols, mask=cols < N)
    mean = tl.sum(acc, axis=0) / N
    sq = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < N)
        sq += x * x
    rstd = 1 / tl.sqrt(tl.sum(sq, axis=0) / N - mean * mean + 1e-5)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < N)
        tl.store(y_ptr + row * stride + cols, (x - mean) * rstd, mask=cols < N)
    first = tl.arange(0, BLOCK)
    w = tl.load(w_ptr + first, mask=first < N)
    tl.store(stats_ptr + row, tl.sum(w * w + w, axis=0))


@triton.jit
def block_ptr_tiles(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    src = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (pid_m * BM, pid_n * BN), (BM, BN), (1, 0))
    tile = tl.load(src, boundary_check=(0, 1))
    width = tl.num_programs(1) * BN
    rows = pid_m * BM + tl.arange(0, BM)
    cols = pid_n * BN + tl.arange(0, BN)
    tl.store(out_ptr + rows[:, None] * width + cols[None, :], tile)


@triton.jit
def matmul_ragged_k(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """A K loop whose operand tiles are loaded without `other`: the K tail must add zeros."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        ks = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * K + ks[None, :], mask=(rm[:, None] < M) & (ks < K)[None, :])
        b = tl.load(b_ptr + ks[:, None] * N + rn[None, :], mask=(ks < K)[:, None] & (rn[None, :] < N))
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def block_scan_with_other(x_ptr, out_ptr, part_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    vals = tl.load(x_ptr + offs, mask=offs < n, other=0.5)
    tl.store(out_ptr + offs, tl.cumsum(vals, axis=0), mask=offs < n)
    tl.store(part_ptr + pid, tl.sum(vals, axis=0))


def _padded(x: np.ndarray, blocks: int, block: int, shift: int = 0) -> np.ndarray:
    """x as dump_lanes sees it: lane l of the output holds x[l - shift] where that is in range, else 0."""
    out = np.zeros(blocks * block, x.dtype)
    lanes = np.arange(blocks * block) - shift
    ok = (lanes >= 0) & (lanes < len(x))
    out[ok] = x[lanes[ok]]
    return out


DTYPES = ["float32", "float16", "bfloat16", "int8", "uint8", "int16", "int32", "int64", "bool"]


def _np_dtype(name: str):
    return bf16() if name == "bfloat16" else np.dtype(name)


def _values(name: str, n: int, rng) -> np.ndarray:
    """Nonzero values (a masked lane that read memory or garbage would not read 0)."""
    if name == "bool":
        return np.ones(n, bool)
    if name in ("int8", "uint8", "int16", "int32", "int64"):
        v = rng.integers(1, 100, n)
        return (v if name == "uint8" else v * np.where(rng.random(n) < 0.5, -1, 1)).astype(name)
    return (rng.random(n) + 0.5).astype(_np_dtype(name))


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32"])
@pytest.mark.parametrize("n", [1000, 256, 5])
def test_cumsum_part_sums_of_a_partial_block(target, dtype, n):
    block = 256
    rng = np.random.default_rng(0)
    x = _values(dtype, n, rng)
    grid = triton.cdiv(n, block)
    out = np.full(n, 7, np.float32 if dtype != "int32" else np.int32)
    part = np.full(grid, 7, out.dtype)
    xblock.jit(block_part_sums)[(grid,)](x, out, part, n, BLOCK=block, target=target)
    wide = x.astype(np.float64 if dtype != "int32" else np.int64)
    padded = np.zeros(grid * block, wide.dtype)
    padded[:n] = wide
    ref_scan = np.cumsum(padded.reshape(grid, block), axis=1).reshape(-1)[:n]
    ref_part = padded.reshape(grid, block).sum(1)
    tol = 1e-3 if dtype != "int32" else 0
    np.testing.assert_allclose(part, ref_part, rtol=tol, atol=tol)
    np.testing.assert_allclose(out, ref_scan, rtol=tol, atol=tol)


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "int8"])
def test_max_sees_masked_lanes_as_zero(target, dtype):
    n, block = 300, 128
    rng = np.random.default_rng(1)
    x = -np.abs(_values(dtype, n, rng)).astype(_np_dtype(dtype))  # every value below zero
    grid = triton.cdiv(n, block) + 1  # the last program's lanes are all off
    out = np.full(grid, 7, x.dtype)
    xblock.jit(block_max)[(grid,)](x, out, n, BLOCK=block, target=target)
    ref = _padded(x, grid, block).reshape(grid, block).max(1)
    np.testing.assert_array_equal(out, ref)
    assert (out[-2:] == 0).all()


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n,block,shift", [(100, 64, 0), (37, 32, 0), (200, 64, 5), (3, 16, 0), (90, 64, 3)])
def test_every_dtype_reads_zero(target, dtype, n, block, shift):
    rng = np.random.default_rng(2)
    x = _values(dtype, n, rng)
    grid = triton.cdiv(n + shift, block) + 1
    out = np.full(grid * block, 1, x.dtype)
    xblock.jit(dump_lanes)[(grid,)](x, out, n, shift, BLOCK=block, target=target)
    np.testing.assert_array_equal(out.astype(np.float64) if dtype == "bfloat16" else out,
                                  _padded(x, grid, block, shift).astype(np.float64) if dtype == "bfloat16"
                                  else _padded(x, grid, block, shift))


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "int8", "bool"])
@pytest.mark.parametrize("m,n", [(37, 20), (16, 32), (5, 3)])
def test_2d_row_sums_and_tiles(target, dtype, m, n):
    bm, bn = 16, 32
    rng = np.random.default_rng(3)
    x = _values(dtype, m * n, rng).reshape(m, n)
    grid = triton.cdiv(m, bm)
    sum_dt = np.int32 if dtype == "bool" else x.dtype
    sums = np.full(m, 7, sum_dt)
    tile = np.full((grid * bm, bn), 1, x.dtype)
    xblock.jit(row_sums_2d)[(grid,)](x, sums, tile, m, n, n, BM=bm, BN=bn, target=target)
    ref_tile = np.zeros_like(tile)
    ref_tile[:m, :n] = x
    np.testing.assert_array_equal(tile, ref_tile)
    if dtype in ("float32", "float16"):
        np.testing.assert_allclose(sums.astype(np.float64), x.astype(np.float64).sum(1), rtol=2e-3)
    elif dtype != "int8":  # (an int8 sum wraps)
        np.testing.assert_array_equal(sums, x.astype(np.int64).sum(1).astype(sum_dt))


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("dtype", ["float32", "int32", "bfloat16", "bool"])
def test_scalar_loads(target, dtype):
    x = _values(dtype, 5, np.random.default_rng(4))
    out = np.full(9, 1, x.dtype)
    xblock.jit(scalar_or_zero)[(9,)](x, out, 5, target=target)
    ref = np.zeros(9, x.dtype)
    ref[:5] = x
    np.testing.assert_array_equal(out.astype(np.float64), ref.astype(np.float64))


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "int8"])
def test_gathers(target, dtype):
    n, block = 40, 64
    rng = np.random.default_rng(5)
    x = _values(dtype, n, rng)
    idx = rng.integers(0, 2 * n, block).astype(np.int32)  # about half the lanes off
    out = np.full(block, 1, x.dtype)
    xblock.jit(gather_by_index)[(1,)](x, idx, out, n, BLOCK=block, target=target)
    np.testing.assert_array_equal(out, np.where(idx < n, x[np.minimum(idx, n - 1)], 0).astype(x.dtype))
    out = np.full(block, 1, x.dtype)
    xblock.jit(strided_gather)[(1,)](x, out, n, BLOCK=block, target=target)
    lanes = 2 * np.arange(block)
    np.testing.assert_array_equal(out, np.where(lanes < n, x[np.minimum(lanes, n - 1)], 0).astype(x.dtype))


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("n", [100, 128, 300])
def test_row_loops_and_a_shared_weight(target, n):
    rows, block = 6, 64
    rng = np.random.default_rng(6)
    x = rng.standard_normal((rows, n)).astype(np.float32)
    w = rng.standard_normal(n).astype(np.float32)
    y = np.zeros_like(x)
    stats = np.zeros(rows, np.float32)
    xblock.jit(norm_rows)[(rows,)](x, y, w, stats, n, n, BLOCK=block, target=target)
    mean = x.astype(np.float64).mean(1, keepdims=True)
    var = (x.astype(np.float64) ** 2).mean(1, keepdims=True) - mean ** 2
    np.testing.assert_allclose(y, (x - mean) / np.sqrt(var + 1e-5), rtol=1e-3, atol=1e-3)
    w0 = w[:block].astype(np.float64)
    np.testing.assert_allclose(stats, np.full(rows, (w0 * w0 + w0).sum()), rtol=1e-4, atol=1e-4)


def test_row_cache_and_resident_load_fill_zeros():
    """On ascend, norm_rows' row is cached across its loops and its weight is resident: their tiles
    hold 0 in the masked lanes too (the fill is part of what is cached)."""
    x = np.ones((2, 100), np.float32)
    args = (x, np.zeros_like(x), np.ones(100, np.float32), np.zeros(2, np.float32), 100, 100)
    ck = xblock.jit(norm_rows).warmup(*args, BLOCK=64, target="ascend")
    assert ck.metadata.get("resident_loads") and ck.metadata.get("row_cache")


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "int8"])
@pytest.mark.parametrize("m,n", [(20, 37), (16, 16), (1, 5)])
def test_block_pointers_without_padding_option(target, dtype, m, n):
    """boundary_check without padding_option: out-of-bounds elements read 0, as Triton gives them
    (its interpreter pads with zeros; on GPUs the masked load it becomes has zeroed registers)."""
    bm, bn = 16, 16
    x = _values(dtype, m * n, np.random.default_rng(7)).reshape(m, n)
    gm, gn = triton.cdiv(m, bm), triton.cdiv(n, bn)
    out = np.full((gm * bm, gn * bn), 1, x.dtype)
    xblock.jit(block_ptr_tiles)[(gm, gn)](x, out, m, n, BM=bm, BN=bn, target=target)
    ref = np.zeros_like(out)
    ref[:m, :n] = x
    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("target", RUN_TARGETS)
def test_matmul_k_tail(target):
    m, n, k = 40, 36, 50
    rng = np.random.default_rng(8)
    a, b = rng.standard_normal((m, k)).astype(np.float16), rng.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), 7, np.float32)
    xblock.jit(matmul_ragged_k)[(triton.cdiv(m, 32), triton.cdiv(n, 32))](a, b, c, m, n, k, BM=32, BN=32, BK=32,
                                                                           target=target)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("target", RUN_TARGETS)
def test_a_given_other_is_kept(target):
    n, block = 300, 128
    x = np.ones(n, np.float32)
    grid = triton.cdiv(n, block)
    out, part = np.zeros(n, np.float32), np.zeros(grid, np.float32)
    xblock.jit(block_scan_with_other)[(grid,)](x, out, part, n, BLOCK=block, target=target)
    np.testing.assert_array_equal(part, [128, 128, 44 + 0.5 * 84])


@triton.jit
def affine(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, x * 2 + 1, mask=offs < n)


def test_ascend_fills_only_lanes_that_reach_the_result():
    """Stored lane-wise under the same mask, the masked-off lanes never reach memory: no fill on ascend.
    Summed, they do: the copy pads with 0."""
    x = np.zeros(1000, np.float32)
    cpp = xblock.jit(affine).warmup(x, x, 1000, BLOCK=256, target="ascend").asm["cpp"]
    assert "DataCopyPadExtParams<float>(false" in cpp and "Duplicate(" not in cpp
    cpp = xblock.jit(block_part_sums).warmup(x, x, x, 1000, BLOCK=256, target="ascend").asm["cpp"]
    assert "DataCopyPadExtParams<float>(true" in cpp


def test_masked_loads_compile_for_cuda():
    x = np.zeros(1000, np.float32)
    ck = precompile(block_part_sums, (x, x, x, 1000), {"BLOCK": 256})
    assert "cubin" in ck.asm
    i8 = np.zeros(64, np.int8)
    assert "cubin" in precompile(dump_lanes, (i8, i8, 64, 0), {"BLOCK": 64}).asm
    b = np.zeros(64, bool)
    assert "cubin" in precompile(dump_lanes, (b, b, 64, 0), {"BLOCK": 64}).asm
    f = np.zeros((16, 16), np.float32)
    assert "cubin" in precompile(block_ptr_tiles, (f, f, 16, 16), {"BM": 16, "BN": 16}).asm
    assert "cubin" in precompile(norm_rows, (f, f, x, x, 16, 16), {"BLOCK": 16}).asm
