"""The pooled join (lower/ops/dot.py `_pooled_step`, cube/tiling.py `join`): 8 programs of a core run together,
their distinct operand tiles numbered at run time into one L1 pool of 6 tiles and 4 L0 slots a side. Two 2 x 2
groups side by side (a 4 x 2 block of tiles) fit in one pass; other groups run in passes of 4 or 2. Numpy, the
join of 4 (`cube_pool=False`) and one program at a time agree; the tiles of a 4 x 2 block are copied once."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import xblock
import xblock.language as xl
from examples import matmul
from tests.ascend.cube.kernels import dot_kernel
from tests.ascend.cube.test_cube_join import _agree, _inputs, ordered_dot
from xblock.backends.ascend.cube.tiling import CUBE_SOCS, deepen, deepen_l0, join, plan_cube

B3 = CUBE_SOCS["910B3"]


@pytest.mark.parametrize("block,dtype,pooled", [
    ((64, 64, 32), "f16", True),    # 8 x 16 KB accumulators: all of L0C; 256-deep tiles in a 384 KB pool pair
    ((32, 32, 32), "bf16", True),
    ((64, 128, 32), "f16", False),  # 8 x 32 KB accumulators do not fit L0C: the join of 2
    ((128, 128, 64), "f16", False),
])
def test_pool_is_chosen_from_the_shapes(block, dtype, pooled):
    p = plan_cube(*block, dtype, B3)
    d = deepen_l0(deepen(join(p)))
    assert (d.join == 8 and d.slots == 4) == pooled
    assert all(u <= c for u, c in d.usage().values())
    if pooled:
        assert d.l1_k * d.esize == 512  # A's rows of 512 B, as one program alone
        assert d.usage()["L1"][0] == 2 * d.pool_bytes == 2 * 6 * d.a1_bytes  # square tiles: 6 of either side
        assert (d.db_l0a, d.db_l0b) == (2, 2) and "an L1 pool of 6" in d.describe()
    assert join(p, pooled=False).slots == 0


def test_a_4x2_block_of_tiles_is_one_pass():
    """Row-major order, 8 tiles a row (partner step 8): the 8 programs of a group are q..q+3 and q+8..q+11, two A
    tiles and four B tiles; one pass copies 6 tiles where 8 programs alone copy 16, the B tiles two at a time
    (`_side_by_side`); programs 2u and 2u + 1 share their A tile and B slots 2t, 2t + 1, so each pair runs one
    Mmad over both B tiles (`_paired`): half the Mmads, the same fractal products; the AscendC names the pool and
    the pass size."""
    M, N, K = 1280, 256, 96  # 40 x 8 = 320 programs of 32 x 32: 16 a core
    a, b, ref = _inputs(M, N, K, 21)
    c = np.zeros((M, N), np.float32)
    grid = (xblock.cdiv(M, 32) * xblock.cdiv(N, 32),)
    meta = dict(ORDER=0, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32)
    ordered_dot[grid](a, b, c, M, N, K, target="ascend", **meta)
    np.testing.assert_allclose(c, np.where(ref > 0, ref, ref * 0.5), atol=1e-2, rtol=1e-2)
    on = xblock.profile(ordered_dot, grid, a, b, c, M, N, K, **meta).counters
    off = xblock.profile(ordered_dot, grid, a, b, c, M, N, K, cube_join=False, **meta).counters
    assert on["mmad_calls"] * 2 == off["mmad_calls"] and on["cube_ops"] == off["cube_ops"]
    assert on["gm_to_l1_bytes"] * 16 == off["gm_to_l1_bytes"] * 6
    # the B tiles of slots 0, 1 and of 2, 3 lie side by side: 2 copies of A and 2 of B a group, 16 alone
    assert on["gm_to_l1_calls"] * 4 == off["gm_to_l1_calls"]
    cpp = ordered_dot.warmup(a, b, c, M, N, K, target="ascend", **meta).asm["cpp"]
    assert "inQueueL1" in cpp and "passSize" in cpp and "inQueueB1" not in cpp


@pytest.mark.parametrize("order", [1, 2, 3])
def test_groups_that_do_not_fit_run_in_passes(order):
    """Column-major (consecutive programs share B: 8 distinct A tiles, so two passes of 4), scrambled (no tile
    shared: passes of 2) and a backwards grouped order (groups straddling the map's 4-row groups), 16 programs a
    core with M, N and K tails: numpy, the join of 4 and one program at a time agree, and no pass copies a tile
    twice: the pooled kernel copies no more than the join of 4 (scrambled: than one program at a time; a quad
    of the join of 4 may share a tile by chance that passes of 2 do not)."""
    M, N, K = 620, 490, 70  # 20 x 16 = 320 programs of 32 x 32 (prime to 7)
    a, b, ref = _inputs(M, N, K, 22 + order)
    want = np.where(ref > 0, ref, ref * 0.5)
    grid = (xblock.cdiv(M, 32) * xblock.cdiv(N, 32),)
    meta = dict(ORDER=order, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32)
    outs = {}
    for name, opts in (("pooled", {}), ("four", {"cube_pool": False}), ("alone", {"cube_join": False})):
        c = np.full((M, N), 7, np.float32)
        ordered_dot[grid](a, b, c, M, N, K, target="ascend", **meta, **opts)
        np.testing.assert_allclose(c, want, atol=1e-2, rtol=1e-2)
        outs[name] = c
    _agree(outs["pooled"], outs["four"])
    _agree(outs["pooled"], outs["alone"])
    pooled = xblock.profile(ordered_dot, grid, a, b, c, M, N, K, **meta).counters
    other = xblock.profile(ordered_dot, grid, a, b, c, M, N, K, **{"cube_pool" if order != 2 else "cube_join": False},
                           **meta).counters
    assert pooled["gm_to_l1_bytes"] <= other["gm_to_l1_bytes"]


@pytest.mark.parametrize("K,dtype", [(33, "f16"), (300, "bf16")])
def test_pooled_k_tails_and_bf16(K, dtype):
    """The grouped matmul of examples/matmul.py (leaky-ReLU on both vector cores, one epilogue per program of the
    group) at 64 x 64 x 32: K of one partial fractal column, and K over two 256-deep L1 tiles (256 + 44), f16 and
    bf16, against a float64 reference."""
    M, N = 250, 1030  # 4 x 17 = 68 programs: 3 or 4 a core, groups of 8 cut short
    a, b, ref = _inputs(M, N, K, K)
    if dtype == "bf16":
        a, b = a.astype(ml_dtypes.bfloat16), b.astype(ml_dtypes.bfloat16)
        ref = a.astype(np.float64) @ b.astype(np.float64)
    c = np.zeros((M, N), np.float16)
    grid = (xblock.cdiv(M, 64) * xblock.cdiv(N, 64),)
    meta = dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8)
    matmul.matmul_kernel[grid](a, b, c, M, N, K, K, 1, N, 1, N, 1, target="ascend", **meta)
    np.testing.assert_allclose(c.astype(np.float64), np.where(ref >= 0, ref, 0.01 * ref), atol=2e-2, rtol=2e-2)
    md = matmul.matmul_kernel.warmup(a, b, c, M, N, K, K, 1, N, 1, N, 1, target="ascend", **meta).metadata
    assert md["cube"][0]["join"] == 8 and tuple(md["cube"][0]["tiles"]) == (64, 64, 64, 256)


def test_aic_only_2d_grid_pooled():
    """dot_kernel's 2-D grid (ReLU and the fp16 conversion in Fixpipe, AIC only) at 64 x 64 x 32, 20 x 4 tiles: the
    partner step is the grid's x (20, not a multiple of 4: groups of two 2 x 2 blocks that are not side by side
    run in passes of 4)."""
    M, N, K = 1270, 250, 130
    a, b, ref = _inputs(M, N, K, 31)
    c = np.full((M, N), 3, np.float16)
    grid = (xblock.cdiv(M, 64), xblock.cdiv(N, 64))
    dot_kernel[grid](a, b, c, M, N, K, K, N, N, target="ascend", BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, RELU=1)
    np.testing.assert_allclose(c.astype(np.float64), np.maximum(ref, 0), atol=1e-2, rtol=1e-2)
    md = dot_kernel.warmup(a, b, c, M, N, K, K, N, N, target="ascend", BLOCK_M=64, BLOCK_N=64, BLOCK_K=32,
                           RELU=1).metadata
    assert md["kernel_type"] == "KERNEL_TYPE_AIC_ONLY" and md["cube"][0]["join"] == 8


@pytest.mark.parametrize("block", [(16, 128, 32), (128, 16, 32)])
def test_pooled_tiles_of_unequal_sides(block):
    """Programs whose A and B tiles differ in size (an LM head's 16 x 128 tiles, and the transpose): the pool is
    sized for 4 tiles of the larger side and 2 of the other, B's slots end at the pool's end (not at a multiple
    of its tile), 6 or 7 programs a core (groups of 8 cut short, in passes); numpy agrees."""
    bm, bn, bk = block
    M, N, K = (5, 16384, 40) if bm == 16 else (16384, 15, 40)
    a, b, ref = _inputs(M, N, K, 41 + bm)
    c = np.zeros((M, N), np.float32)
    grid = (xblock.cdiv(M, bm), xblock.cdiv(N, bn))
    meta = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, RELU=0)
    dot_kernel[grid](a, b, c, M, N, K, K, N, N, target="ascend", **meta)
    np.testing.assert_allclose(c, ref, atol=1e-2, rtol=1e-2)
    md = dot_kernel.warmup(a, b, c, M, N, K, K, N, N, target="ascend", **meta).metadata
    assert md["cube"][0]["join"] == 8


@xblock.jit
def alternating_dot(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: xl.constexpr, BLOCK_N: xl.constexpr,
                    BLOCK_K: xl.constexpr):
    """Row-major tiles whose A rows move down BLOCK_M on odd K steps of odd columns of tiles: on even steps the
    programs of a row of tiles share their A tile, on odd ones only every other one does (A has M + BLOCK_M rows)."""
    pid = xl.program_id(0)
    num_n = xl.cdiv(N, BLOCK_N)
    pid_m = pid // num_n
    pid_n = pid % num_n
    shift = (pid_n % 2) * BLOCK_M
    offs_m = pid_m * BLOCK_M + xl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + xl.arange(0, BLOCK_N)
    offs_k = xl.arange(0, BLOCK_K)
    acc = xl.zeros((BLOCK_M, BLOCK_N), dtype=xl.float32)
    for k in range(0, xl.cdiv(K, BLOCK_K)):
        rows = offs_m + (k % 2) * shift
        a = xl.load(a_ptr + rows[:, None] * K + (k * BLOCK_K + offs_k)[None, :],
                    mask=(offs_k[None, :] < K - k * BLOCK_K), other=0.0)
        b = xl.load(b_ptr + (k * BLOCK_K + offs_k)[:, None] * N + offs_n[None, :],
                    mask=(offs_k[:, None] < K - k * BLOCK_K) & (offs_n[None, :] < N), other=0.0)
        acc = xl.dot(a, b, acc=acc)
    xl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def test_pairs_of_programs_run_one_mmad_over_two_b_tiles():
    """Programs 2u, 2u + 1 on one A tile with B slots 2t, 2t + 1 run one Mmad of 2 x 64 columns (B's rows
    interleaved in L0B, both accumulators as one 64 x 128 tile); a step where that does not hold runs one Mmad a
    program into the same accumulators. Alternating steps (paired on even K steps only), a grouped order with N
    and K tails (its quads reordered to pair on A): float64 numpy and the unpaired join of 4 agree."""
    M, N, K = 512, 1000, 200  # 8 x 16 = 128 programs of 64 x 64 (N tail 40, K tail 8): 8 a core on 16 cores
    a, b, _ = _inputs(M + 64, N, K, 31)
    bk = 32
    ref = np.zeros((M, N))
    rows = np.arange(M)
    for k in range(-(-K // bk)):
        ks = slice(k * bk, min(K, (k + 1) * bk))
        for pn in range(-(-N // 64)):
            cols = slice(pn * 64, min(N, (pn + 1) * 64))
            src = rows + (k % 2) * (pn % 2) * 64
            ref[:, cols] += a[src, ks].astype(np.float64) @ b[ks, cols].astype(np.float64)
    meta = dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=bk)
    grid = (8 * 16,)
    outs = {}
    for name, opts in (("pooled", {}), ("four", {"cube_pool": False})):
        c = np.full((M, N), 7, np.float32)
        alternating_dot[grid](a, b, c, M, N, K, target="ascend", **meta, **opts)
        np.testing.assert_allclose(c, ref, atol=1e-2, rtol=1e-2)
        outs[name] = c
    _agree(outs["pooled"], outs["four"])
    on = xblock.profile(alternating_dot, grid, a, b, c, M, N, K, **meta).counters
    off = xblock.profile(alternating_dot, grid, a, b, c, M, N, K, cube_join=False, **meta).counters
    assert on["cube_ops"] == off["cube_ops"] and off["mmad_calls"] / 2 < on["mmad_calls"] < off["mmad_calls"]

    M, N, K = 1280, 1000, 200  # grouped order, GROUP_M 8: 20 x 16 = 320 programs of 64 x 64, 16 a core
    a, b, ref = _inputs(M, N, K, 32)
    ref = np.where(ref > 0, ref, ref * 0.01)
    grid = (20 * 16,)
    args = (M, N, K, K, 1, N, 1, N, 1)
    meta = dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8)
    outs = {}
    for name, opts in (("pooled", {}), ("four", {"cube_pool": False})):
        c = np.full((M, N), 7, np.float16)
        matmul.matmul_kernel[grid](a, b, c, *args, target="ascend", **meta, **opts)
        np.testing.assert_allclose(c.astype(np.float64), ref, atol=2e-2, rtol=2e-2)
        outs[name] = c
    _agree(outs["pooled"], outs["four"])
    on = xblock.profile(matmul.matmul_kernel, grid, a, b, c, *args, **meta).counters
    off = xblock.profile(matmul.matmul_kernel, grid, a, b, c, *args, cube_pool=False, **meta).counters
    assert on["cube_ops"] == off["cube_ops"] and on["mmad_calls"] < off["mmad_calls"]
    md = matmul.matmul_kernel.warmup(a, b, c, *args, target="ascend", **meta).metadata
    assert md["cube"][0]["join"] == 8
