"""The Cube-unit model (emu/cube.h) computes a matmul through L1/L0 and stops every planted misuse.

One g++ build of cube_model_test.cpp; each case runs it with a planted violation and expects the
model's error to name the API call and the numbers.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).parent
EMU = HERE.parents[2] / "xblock" / "backends" / "ascend" / "model" / "emu"

PLANTED = {
    "no_kernel_type": "DataCopy(GM->L1, Nd2NzParams): cube API in a kernel without KERNEL_TASK_TYPE_DEFAULT",
    "l1_overflow": "TPipe::InitBuffer: L1 overflow: 614400 B requested, 524160 B available",
    "nd2nz_overlap": "DataCopy(GM->L1, Nd2NzParams): dstNzC0Stride 8 is too small for nValue 40 rows",
    "load_before_deque": "LoadData: src is a queue tensor in state 'enqueued', expected 'dequeued'",
    "l0a_misaligned": "LoadData: dst address L0A+0x10 is not 512-byte aligned",
    "load_past_end": "LoadData: src needs 306176 B but the tensor holds 6144 B",
    "mmad_from_l1": "Mmad: A must be in L0A, not in L1",
    "mmad_m_range": "Mmad: MmadParams.m = 5000 is outside its documented range [0, 4095] (asc-devkit docs "
                    "Mmad计算/Mmad.md",
    "fixpipe_quant": "Fixpipe: quantPre does not match the destination type",
    "fixpipe_gm_overflow": "Fixpipe: writes 96 B of GM at byte offset 3800 of 'c' (3840 B)",
    "unpaired_set": "CrossCoreSetFlag: flag 3 was set 1 time(s) more than it was waited for at kernel exit",
    "wait_never_set": "CrossCoreWaitFlag: waits for flag 4, which the other core never set (deadlock)",
}


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("g++ is not installed")
    out = tmp_path_factory.mktemp("cube") / "cube_model_test"
    subprocess.run([cxx, "-std=c++17", "-Wall", "-Werror", "-O1", "-I", str(EMU), str(HERE / "cube_model_test.cpp"),
                    "-o", str(out)], check=True, capture_output=True, text=True)
    return out


def _run(binary, case: str = "") -> str:
    return subprocess.run([str(binary), case], check=True, capture_output=True, text=True).stdout.strip()


def test_matmul_through_l1_l0(binary):
    out = _run(binary)
    assert out.startswith("ok maxerr=0 "), out
    # 3 x 2 output fractals x 4 K fractals (K=50); A 40x50 + B 50x24 halves into L1; 40x24 floats out
    assert "cube_ops=24 gm_to_l1=6400 l0c_to_gm=3840 peak_l1=10240" in out


@pytest.mark.parametrize("case", sorted(PLANTED))
def test_planted_violation(binary, case):
    out = _run(binary, case)
    assert out == "error: " + PLANTED[case] or out.startswith("error: " + PLANTED[case]), out
