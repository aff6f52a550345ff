"""DataCopyExtParams fields reach the model unnarrowed, and a runtime row stride outside the GM gap's range
takes the row-by-row path (emit/cpp.py, op_data_copy_pad).

A row stride below the row length (rows that overlap or repeat: stride 0 broadcasts one row) gives a
negative gap between GM rows; `static_cast<uint32_t>` made it about 4 GB, silently (the model then read far
outside the buffer; the NPU would read whatever lies there). The gap is now tested at run time: inside
[0, 2^32 - 1] B one DataCopyPad copies every row, outside it one DataCopyPad a row. A negative gap given to
DataCopyExtParams itself is refused with its documented range.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import xblock
from tests.ascend.model.test_model_fidelity import build, kernel_source, metadata
from xblock.errors import ExecutionError

triton = pytest.importorskip("triton")
tl = triton.language

pytestmark = [pytest.mark.skipif(shutil.which("g++") is None, reason="the AscendC model is built with g++"),
              pytest.mark.filterwarnings("ignore::xblock.errors.XBlockWarning")]


@triton.jit
def strided_rows_kernel(x_ptr, out_ptr, stride, n_rows, BR: tl.constexpr, BC: tl.constexpr):
    r = tl.arange(0, BR)[:, None]
    c = tl.arange(0, BC)[None, :]
    x = tl.load(x_ptr + r * stride + c, mask=r < n_rows)
    tl.store(out_ptr + r * BC + c, x + 1.0, mask=r < n_rows)


@triton.jit
def store_rows_kernel(x_ptr, out_ptr, stride, n_rows, BR: tl.constexpr, BC: tl.constexpr):
    r = tl.arange(0, BR)[:, None]
    c = tl.arange(0, BC)[None, :]
    x = tl.load(x_ptr + r * BC + c, mask=r < n_rows)
    tl.store(out_ptr + r * stride + c, x, mask=r < n_rows)


SIG = {"x_ptr": "*fp32", "out_ptr": "*fp32", "stride": "i32", "n_rows": "i32"}


def test_the_params_are_printed_uncast_with_a_row_by_row_path():
    ck = xblock.compile(strided_rows_kernel, target="ascend", signature=SIG, constexprs={"BR": 16, "BC": 16})
    cpp = ck.asm["cpp"]
    assert "static_cast<uint32_t>" not in "".join(ln for ln in cpp.split("\n") if "DataCopyExtParams" in ln)
    assert "if (gmGap >= 0 && gmGap <= 4294967295LL) {" in cpp
    assert "DataCopyExtParams(1, 64, 0, 0, 0)" in cpp  # the row-by-row copy


@pytest.mark.parametrize("stride", [16, 40, 0, 3, 1])
def test_load_rows_at_any_runtime_stride(stride):
    x = np.arange(16 * 40 + 16, dtype=np.float32)
    out = np.zeros((16, 16), np.float32)
    xblock.jit(strided_rows_kernel)[(1,)](x, out, stride, 13, BR=16, BC=16, target="ascend")
    want = np.stack([x[r * stride:r * stride + 16] + 1.0 for r in range(13)])
    np.testing.assert_array_equal(out[:13], want)
    np.testing.assert_array_equal(out[13:], 0)


@pytest.mark.parametrize("stride", [16, 20, 3, 0])
def test_store_rows_at_any_runtime_stride(stride):
    """Rows that overlap in GM (stride < 16) are stored one after another, the later row winning."""
    x = np.arange(16 * 16, dtype=np.float32).reshape(16, 16) + 1
    out = np.zeros(16 * 20 + 16, np.float32)
    xblock.jit(store_rows_kernel)[(1,)](x, out, stride, 11, BR=16, BC=16, target="ascend")
    want = np.zeros_like(out)
    for r in range(11):
        want[r * stride:r * stride + 16] = x[r]
    np.testing.assert_array_equal(out, want)


def test_a_negative_gap_is_refused_with_its_range():
    body = """    GlobalTensor<float> xGm;
    xGm.SetGlobalBuffer((__gm__ float *)x);
    TQue<TPosition::VECIN, 1> inQ;
    pipe.InitBuffer(inQ, 1, 256);
    LocalTensor<float> t = inQ.AllocTensor<float>();
    const int64_t gap = (static_cast<int64_t>(tiling.stride) - 16) * 4;
    // planted.py:7: rows 3 elements apart, 16 wide
    DataCopyPad(t, xGm, DataCopyExtParams(2, 64, gap, 0, 0), DataCopyPadExtParams<float>(false, 0, 0, 0));
    inQ.EnQue(t);
    t = inQ.DeQue<float>();
    inQ.FreeTensor(t);
"""
    meta = metadata("gap", ["x"], [("stride", 0)], [])
    launch = build("gap", kernel_source("gap", "GM_ADDR x", body), meta)
    with pytest.raises(ExecutionError, match=r"DataCopyPad\(GM->UB\): DataCopyExtParams.srcStride = -52 is outside "
                                             r"its documented range \[0, 4294967295\]"):
        launch((1, 1, 1), [np.zeros(64, np.float32), 3])
