"""xblock's AscendC model stops code the hardware would mis-execute: one planted violation each.

The scenarios are in violations.cpp, built once with the same strict flags as generated kernels.
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

import pytest

from xblock.backends.ascend.model.launch import EMU_DIR

HERE = Path(__file__).parent

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the AscendC model is built with g++")


@pytest.fixture(scope="module")
def scenarios(tmp_path_factory):
    lib = tmp_path_factory.mktemp("emu") / "violations.so"
    cmd = ["g++", "-std=c++17", "-Wall", "-Werror", "-O0", "-shared", "-fPIC", "-I", str(EMU_DIR),
           str(HERE / "violations.cpp"), "-o", str(lib)]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    so = ctypes.CDLL(str(lib))

    def run(name: str) -> str | None:
        err = ctypes.create_string_buffer(2048)
        rc = so.run_scenario(name.encode(), err, 2048)
        return err.value.decode() if rc else None

    return run


def test_rules_followed_is_silent(scenarios):
    assert scenarios("ok") is None


@pytest.mark.parametrize("name,api,words", [
    ("ub_overflow", "TPipe::InitBuffer", "unified buffer overflow"),
    ("too_many_queue_buffers", "TQue::FreeTensor", "all 8 ids of the pipe's pool are held"),
    ("datacopy_rounds_down", "DataCopy(GM->UB)", "round it down"),
    ("misaligned", "Add", "not 32-byte aligned"),
    ("deque_empty", "TQue::DeQue", "queue is empty"),
    ("free_before_deque", "TQue::FreeTensor", "freed before DeQue"),
    ("alloc_exhausted", "TQue::AllocTensor", "missing FreeTensor"),
    ("use_after_free", "Adds", "after FreeTensor"),
    ("compute_before_deque", "Adds", "wrong state"),
    ("unpaired_set", "SetFlag", "never waited for"),
    ("unpaired_wait", "WaitFlag", "never set"),
    ("missing_sync", "LocalTensor::GetValue", "V->S"),
    ("repeat_out_of_range", "ReduceSum", "repeatTime 300"),
    ("mask_out_of_range", "Duplicate", "mask 100"),
    ("gm_out_of_bounds", "DataCopy(GM->UB)", "'x'"),
    ("compare_count", "CompareScalar", "256 B"),
    ("cast_round_mode", "Cast", "round mode"),
    ("l2_hint_mode", "GlobalTensor::SetL2CacheHint", "not one Atlas A2/A3 supports"),
])
def test_violation_is_caught(scenarios, name, api, words):
    msg = scenarios(name)
    assert msg is not None, f"{name} was not caught"
    assert f"{api}:" in msg and words in msg, msg
