"""Deep L1 tiles (cube/depth.py, tiling.deepen): the backend copies several steps of a dot's K loop into L1
at once, whatever the user's BLOCK_K. The depth is chosen from the block shape, dtype and SoC; the kernel's
K tail (K not a multiple of the deep tile, K below one BLOCK_K) stays exact; loops whose steps are not side
by side keep the user's tile."""

from __future__ import annotations

import numpy as np
import pytest

import xblock
import xblock.language as xl
from tests.ascend.cube.kernels import dot_kernel
from xblock.backends.ascend.cube.tiling import CUBE_SOCS, deepen, plan_cube

B3 = CUBE_SOCS["910B3"]
DOT_SIG = dict(a_ptr="*fp16", b_ptr="*fp16", c_ptr="*fp32", M="i32", N="i32", K="i32", stride_am="i32",
               stride_bk="i32", stride_cm="i32")


@pytest.mark.parametrize("block,dtype,depth", [
    ((128, 256, 64), "f16", 4),   # the GPU-style tile: 256-deep L1 tiles (512-B rows of A), as CATLASS's
    ((64, 64, 32), "f16", 8),
    ((32, 32, 32), "f32", 4),     # 128 fp32 = 512 B
    ((32, 32, 128), "i8", 4),     # 512 int8
    ((128, 256, 256), "f16", 1),  # already 512-B rows
    ((32, 32, 24), "f16", 1),     # BLOCK_K not whole fractals: the steps would not lie side by side in L1
])
def test_depth_is_chosen_from_the_shapes(block, dtype, depth):
    p = plan_cube(*block, dtype, B3)
    d = deepen(p)
    assert d.k_depth == depth and d.l1_k == depth * p.k_pad
    assert 2 * (d.a1_bytes + d.b1_bytes) <= B3.l1_bytes  # still double-buffered
    assert (d.base_m, d.base_n, d.base_k) == (p.base_m, p.base_n, p.base_k)  # the L0 tiles are unchanged
    if depth > 1:
        assert f"K depth in L1 {d.l1_k}" in d.describe() and "depthA1=2 depthB1=2" in d.describe()


def test_depth_leaves_room_for_the_bias_row():
    p = plan_cube(128, 256, 64, "f16", B3)
    assert deepen(p, reserved_l1=B3.l1_bytes - 2 * (p.a1_bytes + p.b1_bytes)).k_depth == 1


def test_plan_reports_the_cube_tiles():
    # one program at a time (cube_join=False): joined programs share L1 and take a shallower tile (test_cube_join)
    ck = xblock.compile(dot_kernel, target="ascend", signature=DOT_SIG, cube_join=False,
                        constexprs=dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, RELU=0))
    cube = ck.metadata["cube"][0]
    assert cube["k_depth"] == 8 and cube["l1_k"] == 256 and "K depth in L1 256" in cube["plan"]
    assert ck.metadata["plan"]["cube_tiles"] == [64, 64, 256, 256]  # one L0 step of 8 K slices (tiling.deepen_l0)
    assert "K depth in L1 256" in ck.asm["cpp"]  # the file header's plan line
    M = N = K = 64  # xblock.profile's report prints the plan with its tiles
    a, b, c = np.ones((M, K), np.float16), np.ones((K, N), np.float16), np.zeros((M, N), np.float32)
    prof = xblock.profile(dot_kernel, (1, 1), a, b, c, M, N, K, K, N, N, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, RELU=0,
                          cube_join=False)
    assert "Cube L0 tile 64x64x256, L1 K depth 256" in prof.report()
    off = xblock.compile(dot_kernel, target="ascend", signature=DOT_SIG, cube_depth=False,
                         constexprs=dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, RELU=0))
    assert off.metadata["cube"][0].get("k_depth", 1) == 1 and off.metadata["plan"]["cube_tiles"] == [64, 64, 32, 32]


def _dtype(name):
    if name == "bfloat16":
        import ml_dtypes

        return ml_dtypes.bfloat16
    return np.dtype(name)


@pytest.mark.parametrize("M,N,K,dtype,block", [
    (40, 33, 300, "float16", (32, 32, 32)),  # 256-deep tiles: one whole, one of 44 (a partial last step)
    (17, 20, 5, "bfloat16", (32, 32, 32)),   # K below one BLOCK_K
    (33, 70, 256, "float16", (32, 64, 32)),  # K exactly one deep tile; M and N tails
    (20, 40, 130, "float32", (16, 32, 32)),  # fp32: 128-deep tiles, B in zZ bands
])
def test_deep_tiles_keep_the_k_tail_exact(M, N, K, dtype, block):
    rng = np.random.default_rng(K)
    dt = _dtype(dtype)
    a = rng.standard_normal((M, K), dtype=np.float32).astype(dt)
    b = (rng.standard_normal((K, N), dtype=np.float32) / np.sqrt(K)).astype(dt)
    grid = (xblock.cdiv(M, block[0]), xblock.cdiv(N, block[1]))
    meta = dict(BLOCK_M=block[0], BLOCK_N=block[1], BLOCK_K=block[2], RELU=0)
    c = np.full((M, N), 7, np.float32)
    args = (a, b, c, M, N, K, K, N, N)
    dot_kernel[grid](*args, target="ascend", **meta)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, ref, atol=1e-2 if dtype != "float32" else 1e-4, rtol=1e-2)
    md = dot_kernel.warmup(*args, target="ascend", **meta).metadata
    assert md["cube"][0]["k_depth"] > 1


@xblock.jit
def carried_offset_dot(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK: xl.constexpr, SKIP: xl.constexpr):
    """A K loop that carries a scalar offset of its own (`k0 += BLOCK`); with SKIP it multiplies every other
    K slice (the steps are not side by side: the user's tile stays)."""
    offs = xl.arange(0, BLOCK)
    acc = xl.zeros((BLOCK, BLOCK), dtype=xl.float32)
    k0 = 0
    for _ in range(0, xl.cdiv(K, BLOCK * (1 + SKIP))):
        ks = k0 + offs
        a = xl.load(a_ptr + offs[:, None] * K + ks[None, :], mask=(offs[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = xl.load(b_ptr + ks[:, None] * N + offs[None, :], mask=(ks[:, None] < K) & (offs[None, :] < N), other=0.0)
        acc = xl.dot(a, b, acc=acc)
        k0 += BLOCK * (1 + SKIP)
    xl.store(c_ptr + offs[:, None] * N + offs[None, :], acc, mask=(offs[:, None] < M) & (offs[None, :] < N))


@pytest.mark.parametrize("skip", [0, 1])
def test_a_carried_scalar_advances_by_whole_tiles(skip):
    M, N, K = 20, 24, 300
    rng = np.random.default_rng(3)
    a = rng.standard_normal((M, K), dtype=np.float32).astype(np.float16)
    b = rng.standard_normal((K, N), dtype=np.float32).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    carried_offset_dot[(1,)](a, b, c, M, N, K, target="ascend", BLOCK=32, SKIP=skip)
    keep = (np.arange(K) // 32) % 2 == 0 if skip else np.ones(K, bool)
    ref = a[:, keep].astype(np.float32) @ b[keep].astype(np.float32)
    np.testing.assert_allclose(c, ref, atol=1e-2, rtol=1e-2)
    md = carried_offset_dot.warmup(a, b, c, M, N, K, target="ascend", BLOCK=32, SKIP=skip).metadata
    assert md["cube"][0].get("k_depth", 1) == (1 if skip else 8)


def test_int8_deep_tiles_stay_exact():
    """int8: 512-deep L1 tiles (4 steps of BLOCK_K 128), K = 1100 = 2 whole tiles and one of 76; int32 sums."""
    pytest.importorskip("triton")
    from tests.ascend.cube.test_cube_dtypes import matmul_kernel

    M, N, K = 40, 50, 1100
    rng = np.random.default_rng(5)
    a = rng.integers(-128, 128, (M, K)).astype(np.int8)
    b = rng.integers(-128, 128, (K, N)).astype(np.int8)
    c = np.zeros((M, N), np.int32)
    jk = xblock.jit(matmul_kernel)
    meta = dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=128, PRECISION="ieee")
    jk[(2, 2)](a, b, c, M, N, K, target="ascend", **meta)
    np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64))
    assert jk.warmup(a, b, c, M, N, K, target="ascend", **meta).metadata["cube"][0]["k_depth"] == 4
