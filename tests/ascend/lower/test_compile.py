"""Compile-time behaviour of the ascend target: UB limits at the kernel line, export, SoC profiles."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import xblock
from examples import add, softmax

ADD_SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}
SOFTMAX_SIG = {"out_ptr": "*fp32", "x_ptr": "*fp32", "x_row_stride": "i32", "out_row_stride": "i32",
               "n_cols": "i32"}
needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="the AscendC model is built with g++")


def test_blocks_past_the_unified_buffer_are_computed_in_chunks():
    # three 128 KB blocks: split into chunks (xb-strip-mine); a kernel that cannot be split keeps the
    # error at its line (tests/ascend/plan/test_big_blocks.py)
    ck = xblock.compile(add.add_kernel, target="ascend", soc="910B3", signature=ADD_SIG,
                        constexprs={"BLOCK": 32768})
    split = ck.metadata["split"]
    assert split["extent"] == 32768 and split["chunk"] * split["factor"] == 32768 and split["loops"] == 1
    assert ck.metadata["ub_plan"]["total"] <= 188416


@pytest.mark.filterwarnings("ignore:.*no DataCopyPad")
def test_310p_has_more_ub():
    # 3 x 2 x 32 KB = 192 KB: double-buffered in 310P's 248 KB; 910B's 184 KB holds single buffers
    # only, and 3 x 64 KB not even those (computed in chunks of 4096, which fit double-buffered)
    ck = xblock.compile(add.add_kernel, target="ascend", soc="910B1", signature=ADD_SIG, constexprs={"BLOCK": 16384})
    assert ck.metadata["split"]["chunk"] == 4096
    assert {q["buffers"] for q in ck.metadata["ub_plan"]["queues"].values()} == {2}
    ck = xblock.compile(add.add_kernel, target="ascend", soc="910B1", signature=ADD_SIG, constexprs={"BLOCK": 8192})
    assert {q["buffers"] for q in ck.metadata["ub_plan"]["queues"].values()} == {1}
    ck = xblock.compile(add.add_kernel, target="ascend", soc="310P", signature=ADD_SIG, constexprs={"BLOCK": 8192})
    assert ck.metadata["ub_plan"]["total"] <= 248 * 1024
    assert {q["buffers"] for q in ck.metadata["ub_plan"]["queues"].values()} == {2}


def test_unknown_soc():
    with pytest.raises(xblock.CompilationError, match="unknown Ascend soc"):
        xblock.compile(add.add_kernel, target="ascend", soc="910C9", signature=ADD_SIG, constexprs={"BLOCK": 1024})


@needs_gxx
def test_310p_runs_without_data_copy_pad(tmp_path, monkeypatch):
    """310P has no DataCopyPad: tiles go through scalar loops (with a warning at the kernel's line,
    given when the kernel compiles: a fresh cache and a fresh jit) and still match."""
    monkeypatch.setenv("XBLOCK_CACHE_DIR", str(tmp_path))
    case = add.case(1025, np.float32)
    args = case.copy_args()
    kernel = xblock.jit(case.kernel.fn)
    with pytest.warns(xblock.errors.XBlockWarning, match="gather") as record:
        kernel[case.grid](*args, target="ascend", soc="310P", **case.meta)
    np.testing.assert_allclose(args[2], case.expected["out"], rtol=1e-6)
    shown = [w for w in record if "gather" in str(w.message)]
    assert all(w.filename == add.__file__ for w in shown), [(w.filename, w.lineno) for w in shown]  # the user's line
    assert all(w.lineno > 1 for w in shown)


@needs_gxx
def test_export_layout(tmp_path):
    ck = xblock.compile(softmax.softmax_kernel, target="ascend", soc="910B3", signature=SOFTMAX_SIG,
                        constexprs={"BLOCK": 1024})
    ck.export(tmp_path / "proj")
    d = tmp_path / "proj"
    names = sorted(p.name for p in d.iterdir())
    assert names == sorted(["kernel.cpp", "softmax_kernel_tiling.h", "main.cpp", "CMakeLists.txt", "README.md",
                            "kernel.json"])
    assert (d / "kernel.cpp").read_text() == ck.asm["cpp"]  # the file the CPU model compiled
    assert "struct SoftmaxKernelTilingData" in (d / "softmax_kernel_tiling.h").read_text()
    host = (d / "main.cpp").read_text()
    for word in ("aclrtMalloc", "ACL_MEMCPY_HOST_TO_DEVICE", "ACLRT_LAUNCH_KERNEL(softmax_kernel)",
                 "aclrtSynchronizeStream", "aclrtFree"):
        assert word in host
    cmake = (d / "CMakeLists.txt").read_text()
    assert "ascendc_library(kernels STATIC kernel.cpp)" in cmake and "Ascend910B3" in cmake
    assert "cmake -B build" in (d / "README.md").read_text()


@needs_gxx
def test_cli_export(tmp_path):
    from xblock.cli import main

    out = tmp_path / "cli"
    rc = main(["export", "examples/add.py:add_kernel", "--target", "ascend", "-o", str(out),
               "--signature", "x_ptr=*fp32,y_ptr=*fp32,out_ptr=*fp32,n=i32", "-D", "BLOCK=1024"])
    assert rc in (0, None)
    assert (out / "kernel.cpp").exists()


@needs_gxx
def test_counters_show_minimal_gm_traffic():
    case = softmax.case((7, 1000), np.float32)
    args = case.copy_args()
    case.run("ascend", args)
    counters = case.kernel.warmup(*args, target="ascend", **case.meta).launcher.last_counters  # that launch's
    assert counters["gm_read_bytes"] == 7 * 1000 * 4
    assert counters["gm_write_bytes"] == 7 * 1000 * 4
