"""`tl.dot` on the Cube unit beyond f16/bf16 2-D: fp32 and int8 operands, f16 results and batched (3-D) dots,
on the CPU model of AscendC against numpy and the sim; LoadDataWithTranspose's squares in the model (one g++
build of cube_transpose_test.cpp); the tile plan of each element size.

fp32: the Cube multiplies fp32 as fp32 (HF32 mode off), whatever the input_precision, so ascend is compared
with the exact ("ieee") model; int8: exact int32 sums; f16 results: the fp32 sum rounded once by Fixpipe."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import xblock
from xblock.backends.ascend.cube.tiling import CUBE_SOCS, plan_cube

triton = pytest.importorskip("triton")
tl = triton.language
HERE = Path(__file__).parent
EMU = HERE.parents[2] / "xblock" / "backends" / "ascend" / "model" / "emu"


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr, PRECISION: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=c_ptr.dtype.element_ty)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        rk = k * BLOCK_K + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION, out_dtype=c_ptr.dtype.element_ty)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def lone_dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, OUT: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b, out_dtype=OUT))


@triton.jit
def f16_acc_scaled_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                          BLOCK_K: tl.constexpr):
    """An f16 accumulator fed by `dot(...).to(f16)`: the dot is handed to the vector core."""
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float16)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        rk = k * BLOCK_K + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b).to(tl.float16)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def batched_kernel(a_ptr, b_ptr, c_ptr, B, M, N, K, BLOCK_B: tl.constexpr, BLOCK_M: tl.constexpr,
                   BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rb = tl.arange(0, BLOCK_B)[:, None, None]
    rm = tl.arange(0, BLOCK_M)[None, :, None]
    rn = tl.arange(0, BLOCK_N)[None, None, :]
    acc = tl.zeros((BLOCK_B, BLOCK_M, BLOCK_N), dtype=c_ptr.dtype.element_ty)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        ka = k * BLOCK_K + tl.arange(0, BLOCK_K)[None, None, :]
        kb = k * BLOCK_K + tl.arange(0, BLOCK_K)[None, :, None]
        a = tl.load(a_ptr + rb * M * K + rm * K + ka, mask=(rb < B) & (rm < M) & (ka < K), other=0)
        b = tl.load(b_ptr + rb * K * N + kb * N + rn, mask=(rb < B) & (kb < K) & (rn < N), other=0)
        acc = tl.dot(a, b, acc, out_dtype=c_ptr.dtype.element_ty)
    tl.store(c_ptr + rb * M * N + rm * N + rn, acc, mask=(rb < B) & (rm < M) & (rn < N))


def _exact(a, b):
    return a.astype(np.float64) @ b.astype(np.float64)


def _run(kernel, grid, args, target, **meta):
    xblock.jit(kernel)[grid](*args, target=target, **meta)


@pytest.mark.parametrize("M,N,K,block", [(40, 50, 70, (32, 32, 32)), (17, 33, 5, (32, 48, 16)),
                                         (64, 64, 128, (64, 64, 64))])
@pytest.mark.parametrize("precision", ["ieee", "tf32"])
def test_fp32_dot(M, N, K, block, precision):
    """fp32 operands: B reaches L0B through LoadDataWithTranspose (zZ bands in L1); the Cube keeps fp32."""
    rng = np.random.default_rng(M + K)
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    grid = (triton.cdiv(M, block[0]), triton.cdiv(N, block[1]))
    got = {}
    for target in ("sim", "ascend"):
        c = np.zeros((M, N), np.float32)
        _run(matmul_kernel, grid, (a, b, c, M, N, K), target, BLOCK_M=block[0], BLOCK_N=block[1],
             BLOCK_K=block[2], PRECISION=precision)
        got[target] = c
    want = _exact(a, b)
    tol = 2e-6 * np.sqrt(K) * np.abs(want).max()
    np.testing.assert_allclose(got["ascend"], want, rtol=0, atol=tol)
    if precision == "ieee":
        np.testing.assert_allclose(got["ascend"], got["sim"], rtol=0, atol=tol)
    else:  # the sim rounds to tf32 as an H200; the Cube does not (docs/STATUS.md)
        np.testing.assert_allclose(got["ascend"], got["sim"], rtol=0, atol=2e-3 * np.sqrt(K) * np.abs(want).max())


@pytest.mark.parametrize("M,N,K,block", [(40, 50, 1100, (32, 32, 128)), (17, 70, 33, (16, 64, 32))])
def test_int8_dot_is_exact_in_int32(M, N, K, block):
    """int8 x int8 -> int32: sums past 2^24 (K = 1100 of +-127^2) stay exact; N padded to 32 for b8 squares."""
    rng = np.random.default_rng(K)
    a = rng.integers(-128, 128, (M, K)).astype(np.int8)
    b = rng.integers(-128, 128, (K, N)).astype(np.int8)
    if K > 1000:
        a[0], b[:, 0] = -128, -128  # one sum of 1100 * 2^14 > 2^24
    grid = (triton.cdiv(M, block[0]), triton.cdiv(N, block[1]))
    c = np.zeros((M, N), np.int32)
    _run(matmul_kernel, grid, (a, b, c, M, N, K), "ascend", BLOCK_M=block[0], BLOCK_N=block[1], BLOCK_K=block[2],
         PRECISION="ieee")
    np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64))


@pytest.mark.parametrize("dtype,out,result", [(np.float16, tl.float16, np.float16),
                                              (np.float32, tl.float32, np.float32),
                                              (np.int8, tl.int32, np.int32)])
def test_lone_dot_out_dtype(dtype, out, result):
    rng = np.random.default_rng(3)
    a, b = (rng.integers(-3, 4, s).astype(dtype) for s in ((16, 32), (32, 48)))
    c = np.zeros((16, 48), result)
    _run(lone_dot_kernel, (1,), (a, b, c), "ascend", M=16, N=48, K=32, OUT=out)
    np.testing.assert_array_equal(c, _exact(a, b).astype(result))


def test_f16_accumulator_in_k_loop():
    """`acc = tl.dot(a, b, acc)` with an f16 acc: the Cube sums in fp32 over the whole K loop and Fixpipe rounds
    once (the sim rounds to f16 after every K step): closer to the exact sum, within f16 tolerance of the sim."""
    M, N, K = 40, 50, 200
    rng = np.random.default_rng(5)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = (rng.standard_normal((K, N)) / np.sqrt(K)).astype(np.float16)
    got = {}
    for target in ("sim", "ascend"):
        c = np.zeros((M, N), np.float16)
        _run(matmul_kernel, (2, 2), (a, b, c, M, N, K), target, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, PRECISION="ieee")
        got[target] = c.astype(np.float64)
    want = _exact(a, b)
    err_ascend, err_sim = np.abs(got["ascend"] - want).max(), np.abs(got["sim"] - want).max()
    assert err_ascend <= 2 ** -10 * np.abs(want).max() and err_ascend <= err_sim
    np.testing.assert_allclose(got["ascend"], got["sim"], rtol=1e-2, atol=1e-2)


def test_f16_accumulator_of_cast_dots_on_the_vector_core():
    M, N, K = 40, 24, 70
    rng = np.random.default_rng(6)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = (rng.standard_normal((K, N)) / np.sqrt(K)).astype(np.float16)
    got = {}
    for target in ("sim", "ascend"):
        c = np.zeros((M, N), np.float16)
        _run(f16_acc_scaled_kernel, (2, 1), (a, b, c, M, N, K), target, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32)
        got[target] = c.astype(np.float64)
    np.testing.assert_allclose(got["ascend"], got["sim"], rtol=1e-2, atol=1e-2)
    np.testing.assert_allclose(got["ascend"], _exact(a, b), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("dtype,out", [(np.float16, np.float32), (np.float32, np.float32), (np.int8, np.int32)])
@pytest.mark.parametrize("B,M,N,K,block_b", [(3, 17, 31, 50, 4), (1, 33, 16, 40, 1)])
def test_batched_dot(dtype, out, B, M, N, K, block_b):
    """[B, M, K] x [B, K, N]: a loop over the matrices in the generated code, each through the 2-D path; the
    fourth matrix of BLOCK_B = 4 is masked off (B = 3) and copies and stores nothing."""
    rng = np.random.default_rng(B * M + K)
    if dtype == np.int8:
        a, b = rng.integers(-128, 128, (B, M, K)).astype(dtype), rng.integers(-128, 128, (B, K, N)).astype(dtype)
    else:
        a, b = rng.standard_normal((B, M, K)).astype(dtype), rng.standard_normal((B, K, N)).astype(dtype)
    c = np.full((B, M, N), 7, out)
    meta = dict(BLOCK_B=block_b, BLOCK_M=triton.next_power_of_2(M), BLOCK_N=triton.next_power_of_2(N), BLOCK_K=16)
    _run(batched_kernel, (1,), (a, b, c, B, M, N, K), "ascend", **meta)
    want = _exact(a, b)
    if dtype == np.int8:
        np.testing.assert_array_equal(c, want)
    else:
        np.testing.assert_allclose(c, want, rtol=0, atol=2e-6 * np.sqrt(K) * np.abs(want).max())


def test_batched_dot_source_has_a_batch_loop():
    ck = xblock.compile(batched_kernel, target="ascend", signature=dict(
        a_ptr="*fp32", b_ptr="*fp32", c_ptr="*fp32", B="i32", M="i32", N="i32", K="i32"),
        constexprs=dict(BLOCK_B=4, BLOCK_M=32, BLOCK_N=32, BLOCK_K=16))
    cpp = ck.asm["cpp"]
    assert "for (int64_t batch = 0; batch < 4; batch++) {" in cpp
    assert "LoadDataWithTranspose(" in cpp and cpp.count("Fixpipe(") == 1


def test_plans_by_element_size():
    b3 = CUBE_SOCS["910B3"]
    f32, i8 = plan_cube(20, 40, 24, "f32", b3), plan_cube(20, 40, 24, "i8", b3)
    assert (f32.base_m, f32.base_n, f32.k_pad, f32.k0, f32.acc_dtype) == (32, 48, 32, 8, "f32")
    assert (i8.base_m, i8.base_n, i8.k_pad, i8.k0, i8.acc_dtype) == (32, 64, 32, 32, "i32")
    big = plan_cube(128, 256, 64, "f32", b3)  # 128 x 64 fp32 A is 32 KB: L0B (64 KB) takes 256 x 32 at most
    assert big.base_k == 32 and big.usage()["L0B"] == (65536, 65536)


@pytest.fixture(scope="module")
def transpose_binary(tmp_path_factory):
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("g++ is not installed")
    out = tmp_path_factory.mktemp("cube") / "cube_transpose_test"
    subprocess.run([cxx, "-std=c++17", "-Wall", "-Werror", "-O1", "-I", str(EMU),
                    str(HERE / "cube_transpose_test.cpp"), "-o", str(out)], check=True, capture_output=True, text=True)
    return out


@pytest.mark.parametrize("case,want", [
    ("", "ok bad32=0 bad8=0"),
    ("overlap", "error: LoadDataWithTranspose: dstGap 0 and dstFracGap 0 write two transposed fractals to one place"),
    ("addr_mode", "error: LoadDataWithTranspose: addrMode must be 0"),
    ("misaligned", "error: LoadDataWithTranspose: dst address L0B+0x20 is not 512-byte aligned"),
])
def test_load_data_with_transpose_model(transpose_binary, case, want):
    out = subprocess.run([str(transpose_binary), case], check=True, capture_output=True, text=True).stdout.strip()
    assert out.startswith(want), out
