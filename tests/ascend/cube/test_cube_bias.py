"""A row-vector bias through the BiasTable: `acc + bias[None, :]` after a Cube K loop.

The fp32 bias row goes GM -> L1 (C1) -> BiasTable (C2) once per output tile and the loop's first
Mmad starts the accumulator from it; the kernel stays AIC-only with ReLU and the cast in Fixpipe.
Other bias shapes (a column vector, a full tile) keep the vector epilogue of a mixed kernel. The
numbers are checked against numpy and the sim; the model's C2 checks by a C++ unit test
(cube_bias_model_test.cpp).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import xblock
import xblock.language as xl

HERE = Path(__file__).parent
EMU = HERE.parents[2] / "xblock" / "backends" / "ascend" / "model" / "emu"


@xblock.jit
def bias_dot_kernel(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                    BLOCK_M: xl.constexpr, BLOCK_N: xl.constexpr, BLOCK_K: xl.constexpr, RELU: xl.constexpr,
                    BIAS: xl.constexpr):
    """BIAS 0: acc + row bias; 1: row bias + acc; 2: column bias (bias[:, None]); 3: full-tile bias."""
    pid_m = xl.program_id(0)
    pid_n = xl.program_id(1)
    offs_m = pid_m * BLOCK_M + xl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + xl.arange(0, BLOCK_N)
    offs_k = xl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = xl.zeros((BLOCK_M, BLOCK_N), dtype=xl.float32)
    for k in range(0, xl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = xl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = xl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = xl.dot(a, b, acc=acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    if BIAS == 0:
        acc = acc + xl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0)[None, :]
    elif BIAS == 1:
        acc = xl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0)[None, :] + acc
    elif BIAS == 2:
        acc = acc + xl.load(bias_ptr + offs_m, mask=offs_m < M, other=0.0)[:, None]
    else:
        tile = bias_ptr + offs_m[:, None] * N + offs_n[None, :]
        acc = acc + xl.load(tile, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N), other=0.0)
    if RELU:
        acc = xl.maximum(acc, 0.0)
    c = acc.to(c_ptr.dtype.element_ty)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
    xl.store(c_ptrs, c, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


_OUT = {"float32": "*fp32", "float16": "*fp16"}


def _compile(out: str, blocks, relu: int, bias: int):
    sig = dict(a_ptr="*fp16", b_ptr="*fp16", bias_ptr="*fp32", c_ptr=_OUT[out], M="i32", N="i32", K="i32",
               stride_am="i32", stride_bk="i32", stride_cm="i32")
    bm, bn, bk = blocks
    return xblock.compile(bias_dot_kernel, target="ascend", signature=sig,
                          constexprs=dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, RELU=relu, BIAS=bias))


def _run(M, N, K, out: str, blocks, relu: int, bias: int):
    """The kernel's output on "ascend" and "sim", and numpy's (float64)."""
    rng = np.random.default_rng(M * 10007 + N * 101 + K)
    a = rng.standard_normal((M, K), dtype=np.float32).astype(np.float16)
    b = (rng.standard_normal((K, N), dtype=np.float32) / np.sqrt(K)).astype(np.float16)
    shape = {0: (N,), 1: (N,), 2: (M,), 3: (M, N)}[bias]
    bv = rng.standard_normal(shape, dtype=np.float32)
    bm, bn, bk = blocks
    grid = (xblock.cdiv(M, bm), xblock.cdiv(N, bn))
    res = {}
    for target in ("ascend", "sim"):
        c = np.full((M, N), 7, np.dtype(out))
        bias_dot_kernel[grid](a, b, bv, c, M, N, K, K, N, N, target=target, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                              RELU=relu, BIAS=bias)
        res[target] = c.astype(np.float64)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    ref = ref + (bv[:, None] if bias == 2 else bv).astype(np.float64)
    return res, np.maximum(ref, 0) if relu else ref


def _check(res, ref, out):
    tol = 2e-2 if out == "float16" else 2e-3
    np.testing.assert_allclose(res["ascend"], res["sim"], atol=tol, rtol=tol)
    np.testing.assert_allclose(res["ascend"], ref, atol=tol, rtol=tol)


@pytest.mark.parametrize("M,N,K,blocks,out,relu,bias", [
    (100, 70, 300, (64, 64, 32), "float32", 0, 0),
    (17, 33, 5, (64, 64, 32), "float16", 1, 1),      # K below one tile, bias + acc
    (129, 257, 65, (64, 64, 32), "float32", 1, 0),
    (100, 70, 300, (128, 256, 64), "float16", 0, 1),  # 256 fp32 columns: the whole 1 KB BiasTable
    (17, 33, 5, (128, 256, 64), "float32", 1, 0),
    (129, 257, 65, (128, 256, 64), "float16", 1, 0),
])
def test_row_bias_through_the_bias_table(M, N, K, blocks, out, relu, bias):
    cpp = _compile(out, blocks, relu, bias)
    src = cpp.asm["cpp"]
    bn4 = blocks[1] * 4
    for s in ("KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);", "TQue<TPosition::C1, 1> inQueueC1;",
              f"pipe.InitBuffer(outQueueC2, 1, {bn4});", f"DataCopyParams(1, {bn4 // 64}, 0, 0)",
              "Mmad(c1Local, a2, b2, bias2, MmadParams(", "Nd2NzParams(1, 1, biasValid, 0, "
              f"{blocks[1]}, 1, 1, 0)", "outQueueC2.FreeTensor(bias2);"):
        assert s in src, s
    # the bias Mmad only where the accumulator starts; every later one adds to C
    assert src.count("bias2, MmadParams(") == 1 and "false, true));" not in src
    assert "ASCEND_IS_AIV" not in src and "workspace_bytes" not in cpp.metadata
    assert f"fixParams.reluEn = {'true' if relu else 'false'};" in src
    assert cpp.metadata["cube"][0]["bias"] is True
    res, ref = _run(M, N, K, out, blocks, relu, bias)
    _check(res, ref, out)


@pytest.mark.parametrize("bias", [2, 3])
def test_other_bias_shapes_keep_the_vector_epilogue(bias):
    cpp = _compile("float32", (64, 64, 32), 1, bias)
    src = cpp.asm["cpp"]
    assert "KERNEL_TYPE_MIX_AIC_1_2" in src or "KERNEL_TYPE_MIX_AIC_1_1" in src
    assert "TPosition::C2" not in src and "DataCopyParams(" not in src and cpp.metadata["workspace_bytes"] > 0
    assert cpp.metadata["cube"][0]["bias"] is False
    res, ref = _run(100, 70, 300, "float32", (64, 64, 32), 1, bias)
    _check(res, ref, "float32")


PLANTED = {
    "table_overflow": "TPipe::InitBuffer: BiasTable overflow: 2048 B requested, 1024 B available",
    "copy_too_long": "DataCopy(L1->BiasTable, DataCopyParams): blockLen 17 x 64 B overflows the 1024-byte BiasTable",
    "copy_to_l1": "DataCopy(L1->BiasTable, DataCopyParams): dst must be in the BiasTable (TPosition C2), not in L1",
    "copy_misaligned": "DataCopy(L1->BiasTable, DataCopyParams): dst address BiasTable+0x20 is not 64-byte aligned",
    "bias_in_l1": "Mmad (bias): bias must be in BiasTable, not in L1",
    "init_zero": "Mmad (bias): cmatrixInitVal = true starts C at zero and ignores the bias",
}


@pytest.fixture(scope="module")
def model_binary(tmp_path_factory):
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("g++ is not installed")
    out = tmp_path_factory.mktemp("cube_bias") / "cube_bias_model_test"
    subprocess.run([cxx, "-std=c++17", "-Wall", "-Werror", "-O1", "-I", str(EMU),
                    str(HERE / "cube_bias_model_test.cpp"), "-o", str(out)], check=True, capture_output=True, text=True)
    return out


def _model(binary, case: str = "") -> str:
    return subprocess.run([str(binary), case], check=True, capture_output=True, text=True).stdout.strip()


def test_model_bias_from_the_table(model_binary):
    out = _model(model_binary)
    assert out == "ok maxerr=0 l1_to_bt=128 bias_mmad_calls=1 peak_bt=128", out


@pytest.mark.parametrize("case", sorted(PLANTED))
def test_model_bias_table_misuse(model_binary, case):
    out = _model(model_binary, case)
    assert out.startswith("error: " + PLANTED[case]), out
