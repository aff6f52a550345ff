"""Golden AscendC of the Cube path, limits as CompilationErrors, and the export.

The goldens protect the Cube lowering's output: the mixed matmul example (Cube K loop, Fixpipe to
a per-core workspace, cross-core flags, leaky-ReLU on the vector core) and the AIC-only dot whose
ReLU and fp16 cast are fused into Fixpipe. Each kernel has two goldens: `<name>.ascendc.mlir` (the
lowered dialect, file paths in locations cut to the file name) catches a lowering change, `<name>.cpp`
a printing change too. Regenerate with XBLOCK_REGEN_GOLDEN=1 after a reviewed change.
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import numpy as np
import pytest

import xblock
import xblock.language as xl
from tests.ascend.cube.kernels import dot_kernel
from tests.lit.golden import compare_golden, normalize_paths

GOLDEN = Path(__file__).parent / "golden"
# the unit strides as constants, as a launch with contiguous arrays specializes them (equal to 1)
MM_SIG = dict(a_ptr="*fp16", b_ptr="*fp16", c_ptr="*fp16", M="i32", N="i32", K="i32", stride_am="i32",
              stride_bk="i32", stride_cm="i32")
UNIT = dict(stride_ak=1, stride_bn=1, stride_cn=1)
DOT_SIG = dict(a_ptr="*fp16", b_ptr="*fp16", c_ptr="*fp16", M="i32", N="i32", K="i32", stride_am="i32",
               stride_bk="i32", stride_cm="i32")
DOT_META = dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, RELU=1)


def _matmul(**opts):
    mod = importlib.import_module("examples.matmul")
    return xblock.compile(mod.matmul_kernel, target="ascend", signature=MM_SIG, constexprs=dict(mod.META, **UNIT),
                          **opts)


def _compare(name: str, text: str) -> None:
    compare_golden(GOLDEN / name, text)


def _compare_mlir(name: str, ck) -> None:
    compare_golden(GOLDEN / f"{name}.ascendc.mlir", normalize_paths(ck.asm["ascendc.mlir"]))


def test_golden_matmul_mixed():
    ck = _matmul(cube_join=False)  # one program at a time (the joined kernel: tests/ascend/cube/test_cube_join.py)
    _compare_mlir("matmul_kernel_f16", ck)
    _compare("matmul_kernel_f16.cpp", ck.asm["cpp"])
    cpp = ck.asm["cpp"]
    # the leaky-ReLU on both vector cores of the AI Core: each takes every other 16-row chunk
    for api in ("KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);", "GetSubBlockIdx()", "Nd2NzParams(",
                "LoadData2DParams(", "MmadParams(", "Fixpipe(", "if ASCEND_IS_AIC {", "if ASCEND_IS_AIV {",
                "CrossCoreSetFlag<2, PIPE_FIX>(0);", "CrossCoreWaitFlag(0);", "CrossCoreSetFlag<2, PIPE_MTE2>(1);",
                "CrossCoreWaitFlag(1);", "Select("):
        assert api in cpp, api
    assert ck.metadata["workspace_bytes"] == 32 * 32 * 4
    # GM offsets and the scalars they use carry the kernel's names, not t_N
    for name in ("DataCopy(a1Local, aGm[a_ptrs]", "DataCopy(b1Local, bGm[b_ptrs]", "DataCopyPad(cGm[c_ptrs]",
                 "const int32_t first_pid_m_div = (pidx / num_pid_in_group);", "stride_am64",
                 "MmadParams(32, 32, kStep"):
        assert name in cpp, name


def test_golden_dot_fixpipe_relu():
    ck = xblock.compile(dot_kernel, target="ascend", signature=DOT_SIG, constexprs=DOT_META, cube_join=False)
    _compare_mlir("dot_kernel_relu_f16", ck)
    _compare("dot_kernel_relu_f16.cpp", ck.asm["cpp"])
    assert "fixParams.reluEn = true;" in ck.asm["cpp"] and "QuantMode_t::F322F16" in ck.asm["cpp"]
    assert "workspace_bytes" not in ck.metadata


def test_golden_dot_pooled_join():
    """The pooled join of 8 programs (lower/ops/dot.py `_pooled_step`): the pass loop, the tiles' run-time slots,
    the L1 pool's B copies side by side, one accumulator a program."""
    meta = dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, RELU=1)
    ck = xblock.compile(dot_kernel, target="ascend", signature=DOT_SIG, constexprs=meta)
    _compare_mlir("dot_kernel_pooled_f16", ck)
    _compare("dot_kernel_pooled_f16.cpp", ck.asm["cpp"])
    assert ck.metadata["cube"][0]["join"] == 8
    for name in ("inQueueL1", "passSize", "aSlot7", "bSlot7", "bPool", "bCols0", "kSlices"):
        assert name in ck.asm["cpp"], name


def test_accumulator_too_big_for_l0c_is_an_error_at_the_dot():
    meta = dict(BLOCK_M=256, BLOCK_N=256, BLOCK_K=32, RELU=0)
    with pytest.raises(xblock.CompilationError) as e:
        xblock.compile(dot_kernel, target="ascend", signature=DOT_SIG, constexprs=meta)
    msg = str(e.value)
    assert "kernels.py:22:" in msg and "needs 262144 B of L0C, which holds 131072 B" in msg
    assert "acc = xl.dot(a, b, acc=acc)" in msg and "Traceback" not in msg


def _kernel_params(cpp: str, name: str) -> list:
    m = re.search(r'extern "C" __global__ __aicore__ void ' + name + r"\(([^)]*)\)", cpp)
    return [p.strip().rsplit(" ", 1) for p in m.group(1).split(",")]


def _launch_args(host: str, name: str) -> list:
    m = re.search(r"ACLRT_LAUNCH_KERNEL\(" + name + r"\)\(([^)]*)\);", host)
    return [a.strip() for a in m.group(1).split(",")]


def test_export_has_the_cube_kernel_and_its_workspace(tmp_path):
    ck = _matmul()
    d = tmp_path / "mm"
    ck.export(d)
    kernel = (d / "kernel.cpp").read_text()
    assert kernel == ck.asm["cpp"] and "Mmad(" in kernel
    ws = ck.metadata["workspace_bytes"]
    info = json.loads((d / "kernel.json").read_text())
    assert info["workspace_bytes"] == ws and info["kernel_type"] == "KERNEL_TYPE_MIX_AIC_1_2"
    assert f"constexpr uint64_t MATMUL_KERNEL_WORKSPACE_BYTES = {ws};" in (d / "matmul_kernel_tiling.h").read_text()
    host = (d / "main.cpp").read_text()
    # workspace_bytes per block, on the device, after the GM arguments; blockDim counts AI Core groups (20 AICs)
    assert "const size_t workspaceBytes = MATMUL_KERNEL_WORKSPACE_BYTES * blockDim;" in host
    assert "aclrtMalloc(reinterpret_cast<void**>(&workspaceDevice), workspaceBytes" in host
    assert "aclrtFree(workspaceDevice)" in host and "tiling.numPrograms : 20" in host
    params, args = _kernel_params(kernel, "matmul_kernel"), _launch_args(host, "matmul_kernel")
    assert args[:2] == ["blockDim", "stream"] and len(args) - 2 == len(params)
    for (ctype, pname), arg in zip(params, args[2:]):
        assert arg == (pname + "Device" if ctype == "GM_ADDR" else "&" + pname), (ctype, pname, arg)
    assert [p for _, p in params][-2:] == ["workspace", "tiling"]


def test_export_of_an_aic_only_kernel_has_no_workspace(tmp_path):
    ck = xblock.compile(dot_kernel, target="ascend", signature=DOT_SIG, constexprs=DOT_META)
    d = tmp_path / "dot"
    ck.export(d)
    host = (d / "main.cpp").read_text()
    assert "workspace" not in host and "one block per cube core (AIC) (20 on Ascend910B3)" in host
    params, args = _kernel_params(ck.asm["cpp"], "dot_kernel"), _launch_args(host, "dot_kernel")
    assert len(args) - 2 == len(params) and args[-1] == "&tiling"  # the launch header takes T*


@xblock.jit
def dot_and_copy_kernel(a_ptr, b_ptr, c_ptr, d_ptr, B: xl.constexpr):
    offs = xl.arange(0, B)
    idx = offs[:, None] * B + offs[None, :]
    a = xl.load(a_ptr + idx)
    xl.store(c_ptr + idx, xl.dot(a, xl.load(b_ptr + idx)))
    xl.store(d_ptr + idx, a)  # the operand is used again: the Cube path cannot take its load


def test_dot_whose_operand_is_stored_too_is_handed_off():
    """The operand's load has another user: the vector core loads it (for the store) and the Cube reads
    it from GM itself; the loaded block, held across the dot's Cube section, moves to scratch."""
    rng = np.random.default_rng(0)
    a, b = (rng.integers(-3, 4, (32, 32)).astype(np.float16) for _ in range(2))
    c, d = np.zeros((32, 32), np.float32), np.zeros((32, 32), np.float16)
    dot_and_copy_kernel[(1,)](a, b, c, d, B=32, target="ascend")
    np.testing.assert_array_equal(c, a.astype(np.float32) @ b.astype(np.float32))
    np.testing.assert_array_equal(d, a)
