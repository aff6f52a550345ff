"""The model refuses a parameter-struct field outside its documented range, and a kernel that needs more
event ids than the pipe's pool has (docs/ASCEND_MODEL.md section 9): one planted case each, in
param_ranges.cpp, built with the flags of generated kernels."""

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
def scenario(tmp_path_factory):
    lib = tmp_path_factory.mktemp("ranges") / "param_ranges.so"
    subprocess.run(["g++", "-std=c++17", "-Wall", "-Werror", "-O0", "-shared", "-fPIC", "-I", str(EMU_DIR),
                    str(HERE / "param_ranges.cpp"), "-o", str(lib)], check=True, capture_output=True, text=True)
    so = ctypes.CDLL(str(lib))

    def run(name: str) -> str | None:
        err = ctypes.create_string_buffer(4096)
        return err.value.decode() if so.run_scenario(name.encode(), err, 4096) else None

    return run


def test_in_range_is_silent(scenario):
    assert scenario("v:ok") is None
    assert scenario("c:ok") is None  # the AIC's M_MTE1 pool exactly full: 3 (pipe) + 2 L0A + 2 L0B + 1 C2


@pytest.mark.parametrize("name,api,field,value,range_", [
    ("v:datacopy_block_count", "DataCopy(GM->UB)", "DataCopyParams.blockCount", "5000", "[0, 4095]"),
    ("v:datacopy_block_len", "DataCopy(UB->GM)", "DataCopyParams.blockLen", "70000", "[0, 65535]"),
    ("v:datacopypad_block_len", "DataCopyPad(UB->GM)", "DataCopyExtParams.blockLen", "3000000", "[0, 2097151]"),
    ("v:datacopypad_src_stride", "DataCopyPad(GM->UB)", "DataCopyExtParams.srcStride", "4294967296",
     "[0, 4294967295]"),
    ("v:binary_rep_stride", "Add", "BinaryRepeatParams.dstRepStride", "300", "[0, 255]"),
    ("v:brcb_stride", "Brcb", "BrcbRepeatParams.dstRepStride", "70000", "[0, 65535]"),
    ("v:copy_stride", "Copy", "CopyRepeatParams.dstRepeatSize", "70000", "[0, 65535]"),
    ("v:event_id", "SetFlag", "eventID", "9", "[0, 7]"),
    ("c:nd2nz_src_d_value", "DataCopy(GM->L1, Nd2NzParams)", "Nd2NzParams.srcDValue", "131072", "[1, 65535]"),
    ("c:nd2nz_n_value", "DataCopy(GM->L1, Nd2NzParams)", "Nd2NzParams.nValue", "20000", "[0, 16384]"),
    ("c:load_data_repeat", "LoadData", "LoadData2DParams.repeatTimes", "300", "[0, 255]"),
    ("c:load_transpose_start", "LoadDataWithTranspose", "LoadData2dTransposeParams.startIndex", "70000",
     "[0, 65535]"),
    ("c:mmad_k", "Mmad", "MmadParams.k", "5000", "[0, 4095]"),
    ("c:fixpipe_m_size", "Fixpipe", "FixpipeParamsV220.mSize", "9000", "[0, 8192]"),
    ("c:fixpipe_dst_stride", "Fixpipe", "FixpipeParamsV220.dstStride", "0", "[1, 4294967295]"),
    ("c:cross_core_flag", "CrossCoreSetFlag", "flagId", "70003", "[0, 10]"),
])
def test_field_out_of_range_is_refused(scenario, name, api, field, value, range_):
    msg = scenario(name)
    assert msg is not None, f"{name} was not refused"
    assert msg.startswith(f"{api}: {field} = {value} is outside its documented range {range_} (asc-devkit "), msg


def test_truncation_is_named(scenario):
    """A value the real uint16_t field would silently wrap: the message says what the hardware would see."""
    msg = scenario("c:nd2nz_src_d_value")
    assert "GMToL1随路转换-ND2NZ搬运（DataCopy）.md" in msg and "the uint16_t field would hold 0, silently" in msg, msg


@pytest.mark.parametrize("name,api,words", [
    ("v:alloc_ninth_id", "TPipe::AllocEventID", "needs an id of HardEvent::V_S, but all 8 ids of the pipe's pool"),
    ("v:release_not_taken", "TPipe::ReleaseEventID", "was not taken by AllocEventID"),
    ("v:set_queue_id", "SetFlag", "id 0 of HardEvent::MTE2_V is held by a TQue<VECIN> buffer enqueued"),
    ("v:queue_takes_pending_id", "TQue::FreeTensor", "an explicit SetFlag of that id is still pending"),
    ("v:fetch_none_free", "TPipe::FetchEventID", "no id of HardEvent::S_V is free"),
    # the AIC's pipe holds M_MTE1 ids 0-2; L0A (3 buffers), L0B (2) and the BiasTable (1) need 6 more
    ("c:l0_queues_ninth_m_mte1", "TQue::FreeTensor", "a TQue<C2> buffer freed (FreeTensor) and not yet allocated "
     "again needs an id of HardEvent::M_MTE1, but all 8 ids of the pipe's pool are held (id 0: TPipe"),
])
def test_event_pool_overuse_is_refused(scenario, name, api, words):
    msg = scenario(name)
    assert msg is not None, f"{name} was not refused"
    assert msg.startswith(api + ": ") and words in msg, msg
