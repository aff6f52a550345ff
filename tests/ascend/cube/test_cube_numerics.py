"""dot on the Cube unit against the sim: a plain dot kernel whose epilogue (ReLU, cast) is fused into
Fixpipe, with M, N, K off the tiles and K below one tile; the launch's block count; the counters.
The matmul example (leaky-ReLU on the vector core of a mixed kernel) runs in
tests/numerics/test_ascend.py with the other examples."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import xblock
from tests.ascend.cube.kernels import dot_kernel
from xblock.testing import check

BF16 = "bfloat16"
matmul = importlib.import_module("examples.matmul")


def _dtype(name):
    if name == BF16:
        import ml_dtypes

        return ml_dtypes.bfloat16
    return np.dtype(name)


@pytest.mark.parametrize("M,N,K,dtype,out,relu", [
    (40, 33, 70, "float16", "float32", 0),   # plain dot, fp32 out: Fixpipe NoQuant
    (17, 33, 5, BF16, "float32", 0),         # K below one tile
    (100, 70, 300, "float16", "float16", 1),  # ReLU and F322F16 in Fixpipe
])
def test_dot_fixpipe_epilogue(M, N, K, dtype, out, relu):
    rng = np.random.default_rng(1)
    dt = _dtype(dtype)
    a = rng.standard_normal((M, K), dtype=np.float32).astype(dt)
    b = (rng.standard_normal((K, N), dtype=np.float32) / np.sqrt(K)).astype(dt)
    meta = dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, RELU=relu)
    grid = (xblock.cdiv(M, 32), xblock.cdiv(N, 32))
    res = {}
    for target in ("sim", "ascend"):
        c = np.full((M, N), 7, np.dtype(out))
        dot_kernel[grid](a, b, c, M, N, K, K, N, N, target=target, **meta)
        res[target] = c.astype(np.float64)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    ref = np.maximum(ref, 0) if relu else ref
    np.testing.assert_allclose(res["ascend"], res["sim"], atol=1e-2, rtol=1e-2)
    np.testing.assert_allclose(res["ascend"], ref, atol=2e-2, rtol=2e-2)


def test_cube_counters_and_kernel_type():
    from xblock.backends.ascend.model.launch import cube_counters

    M = N = K = 64
    a = np.ones((M, K), np.float16)
    b = np.ones((K, N), np.float16)
    c = np.zeros((M, N), np.float32)
    dot_kernel[(2, 2)](a, b, c, M, N, K, K, N, N, target="ascend", BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, RELU=0)
    assert (c == 64).all()
    ck = xblock.compile(dot_kernel, target="ascend", signature=dict(
        a_ptr="*fp16", b_ptr="*fp16", c_ptr="*fp32", M="i32", N="i32", K="i32", stride_am="i32", stride_bk="i32",
        stride_cm="i32"), constexprs=dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, RELU=0))
    ck[(2, 2)](a, b, c, M, N, K, K, N, N)
    got = cube_counters(ck)
    # 4 programs x 2 K steps x (2 x 2 output fractals x 2 K fractals); each input element read once per program;
    # one Mmad a program: its L0 step spans both K steps of the deep L1 tile (tiling.deepen_l0)
    assert got["cube_ops"] == 4 * 2 * 8 and got["mmad_calls"] == 4
    assert got["gm_to_l1_bytes"] == 4 * 2 * (32 * 32 * 2) * 2 and got["l0c_to_gm_bytes"] == M * N * 4
    assert "KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);" in ck.asm["cpp"]


def _last_counters(kernel, *args, **meta) -> dict:
    """The model's counters of the last launch of `kernel` with these arguments (kept by its launcher)."""
    return kernel.warmup(*args, target="ascend", **meta).launcher.last_counters


def test_launch_blocks_are_cube_cores():
    """AIC-only and mixed kernels launch one block per AIC (20 on 910B3), not one per AIV (40)."""
    M = N = 160  # 25 programs of 32 x 32
    rng = np.random.default_rng(2)
    a = rng.standard_normal((M, 40), dtype=np.float32).astype(np.float16)
    b = rng.standard_normal((40, N), dtype=np.float32).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    args, meta = (a, b, c, M, N, 40, 40, N, N), dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, RELU=0)
    dot_kernel[(5, 5)](*args, target="ascend", **meta)
    assert _last_counters(dot_kernel, *args, **meta)["block_dim"] == 20
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), atol=2e-2, rtol=2e-2)
    case = matmul.case((300, 200, 333), np.float16)  # 70 programs, mixed: 20 groups of 1 AIC + 1 AIV
    got = case.copy_args()
    case.run("ascend", got)
    assert _last_counters(case.kernel, *got, **case.meta)["block_dim"] == 20
    check(case, got)
