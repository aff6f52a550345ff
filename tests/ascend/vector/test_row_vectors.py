"""Row reductions and per-row broadcasts of 2-D blocks on ascend run on the vector unit only
(backends/ascend/vector/rowvec.py: mask/repeat-form folds, WholeReduceSum/Max/Min and BlockReduceSum/Max/Min,
Brcb, Copy, binary ops reading a Brcb block per row): every target
matches numpy at boundary shapes (a last program with fewer valid rows; rows of 1 to 1024 columns; half
and float), the generated AscendC reads no scalar back, and the AscendC model refuses misuse of the
new API forms (unaligned operands, repeat counts above 255, masks above one repeat, stride 0)."""

from __future__ import annotations

import ctypes
import re
import shutil
import subprocess

import numpy as np
import pytest

import xblock
import xblock.language as xl

TARGETS = ["sim", "cpu", "ascend"]
R = 8


@xblock.jit
def row_stats(x_ptr, s_ptr, mx_ptr, mn_ptr, n_rows, n_cols, R: xl.constexpr, BLOCK: xl.constexpr):
    rows = xl.program_id(0) * R + xl.arange(0, R)
    cols = xl.arange(0, BLOCK)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    ptrs = x_ptr + rows[:, None] * n_cols + cols[None, :]
    s = xl.sum(xl.load(ptrs, mask=mask, other=0.0), axis=1)
    mx = xl.max(xl.load(ptrs, mask=mask, other=-float("inf")), axis=1)
    mn = xl.min(xl.load(ptrs, mask=mask, other=float("inf")), axis=1)
    xl.store(s_ptr + rows, s, mask=rows < n_rows)
    xl.store(mx_ptr + rows, mx, mask=rows < n_rows)
    xl.store(mn_ptr + rows, mn, mask=rows < n_rows)


@xblock.jit
def softmax_rows(out_ptr, x_ptr, n_rows, n_cols, R: xl.constexpr, BLOCK: xl.constexpr):
    rows = xl.program_id(0) * R + xl.arange(0, R)
    cols = xl.arange(0, BLOCK)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = xl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=-float("inf"))
    num = xl.exp(x - xl.max(x, axis=1)[:, None])
    out = num / xl.sum(num, axis=1)[:, None]
    xl.store(out_ptr + rows[:, None] * n_cols + cols[None, :], out, mask=mask)


@xblock.jit
def rms_rows(out_ptr, x_ptr, w_ptr, n_rows, n_cols, eps, R: xl.constexpr, BLOCK: xl.constexpr):
    rows = xl.program_id(0) * R + xl.arange(0, R)
    cols = xl.arange(0, BLOCK)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = xl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=0.0).to(xl.float32)
    w = xl.load(w_ptr + cols, mask=cols < n_cols, other=0.0).to(xl.float32)
    rstd = xl.rsqrt(xl.sum(x * x, axis=1) / n_cols + eps)
    xl.store(out_ptr + rows[:, None] * n_cols + cols[None, :], (x * rstd[:, None] * w[None, :]).to(xl.float16),
             mask=mask)


def _block(n: int) -> int:
    return max(8, 1 << (n - 1).bit_length())


def _run(kernel, target, grid, *args, **meta):
    if target == "cpu" and shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("the cpu target links with a C compiler")
    kernel[grid](*args, target=target, **meta)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("n", [1, 7, 8, 64, 1000, 1024])
def test_row_sum_max_min_match_numpy(target, dtype, n):
    m = 3 * R - 2  # the last program has 6 valid rows of 8
    x = np.random.default_rng(n).standard_normal((m, n)).astype(dtype)
    outs = [np.zeros(m, dtype) for _ in range(3)]
    _run(row_stats, target, (-(-m // R),), x, *outs, m, n, R=R, BLOCK=_block(n))
    s, mx, mn = outs
    np.testing.assert_array_equal(mx, x.max(1))
    np.testing.assert_array_equal(mn, x.min(1))
    tol = 1e-5 if dtype == np.float32 else 4e-3
    ref = x.astype(np.float64).sum(1)
    assert np.all(np.abs(s - ref) <= tol * (1 + np.abs(x).astype(np.float64).sum(1))), (s, ref)


@pytest.mark.parametrize("rows", [2, 4, 512])
@pytest.mark.parametrize("n", [64, 200])
def test_float_rows_through_block_reductions_match_numpy(rows, n):
    """Float rows folded to one repeat end in two BlockReduce passes (rowvec._blocks): 2 or 4 rows take the
    masked second pass alone, 512 rows three groups of 248, 248 and 16; a last program with fewer valid rows."""
    m = 2 * rows - 1
    x = np.random.default_rng(rows + n).standard_normal((m, n)).astype(np.float32)
    outs = [np.zeros(m, np.float32) for _ in range(3)]
    _run(row_stats, "ascend", (-(-m // rows),), x, *outs, m, n, R=rows, BLOCK=_block(n))
    s, mx, mn = outs
    np.testing.assert_array_equal(mx, x.max(1))
    np.testing.assert_array_equal(mn, x.min(1))
    ref = x.astype(np.float64).sum(1)
    assert np.all(np.abs(s - ref) <= 1e-5 * (1 + np.abs(x).astype(np.float64).sum(1))), (s, ref)
    src = _cpp(row_stats, {"x_ptr": "*fp32", "s_ptr": "*fp32", "mx_ptr": "*fp32", "mn_ptr": "*fp32", "n_rows": "i32",
                           "n_cols": "i32"}, R=rows, BLOCK=_block(n))
    assert "BlockReduceSum(" in src and "BlockReduceMax(" in src and "BlockReduceMin(" in src
    assert "WholeReduce" not in src


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("n", [8, 64, 1000, 1024])
def test_softmax_of_rows_matches_numpy(target, n):
    m = 3 * R - 2
    x = np.random.default_rng(n).standard_normal((m, n)).astype(np.float32)
    out = np.zeros_like(x)
    _run(softmax_rows, target, (-(-m // R),), out, x, m, n, R=R, BLOCK=_block(n))
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(1, keepdims=True), rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("n", [16, 1000, 1024])
def test_rmsnorm_of_half_rows_matches_numpy(target, n):
    m = 3 * R - 2
    rng = np.random.default_rng(n)
    x, w = rng.standard_normal((m, n)).astype(np.float16), rng.standard_normal(n).astype(np.float16)
    out = np.zeros_like(x)
    _run(rms_rows, target, (-(-m // R),), out, x, w, m, n, 1e-6, R=R, BLOCK=_block(n))
    xf = x.astype(np.float32)
    ref = xf / np.sqrt((xf * xf).mean(1, keepdims=True) + 1e-6) * w.astype(np.float32)
    np.testing.assert_allclose(out.astype(np.float32), ref, rtol=2e-3, atol=2e-3)


def _cpp(kernel, sig, **consts) -> str:
    return xblock.compile(kernel, target="ascend", signature=sig, constexprs=consts).asm["cpp"]


@pytest.mark.parametrize("rows, block", [(8, 1024), (64, 64), (16, 16), (300, 16)])
def test_row_reductions_and_broadcasts_read_no_scalar_back(rows, block):
    src = _cpp(softmax_rows, {"out_ptr": "*fp32", "x_ptr": "*fp32", "n_rows": "i32", "n_cols": "i32"},
               R=rows, BLOCK=block)
    assert "GetValue" not in src and "SetValue" not in src
    # float rows folded to one 256-byte repeat end in two BlockReduce passes, shorter rows in a WholeReduce
    red = "BlockReduce" if block >= 64 else "WholeReduce"
    assert f"{red}Max(" in src and f"{red}Sum(" in src and "Brcb(" in src
    # the per-row max and sum are read by the Sub and the Div straight from their Brcb blocks (rowvec.row_binary):
    # no Copy writes the broadcast out
    assert "BinaryRepeatParams(" in src and re.search(r"(?<![A-Za-z])Copy\(", src) is None
    if rows > 255:  # repeat counts are split at 248 rows (float): two WholeReduce calls per reduction
        assert src.count("WholeReduceMax(") == 2


def test_the_fold_does_not_grow_with_rows():
    sig = {"out_ptr": "*fp32", "x_ptr": "*fp32", "n_rows": "i32", "n_cols": "i32"}
    calls = [_cpp(softmax_rows, sig, R=r, BLOCK=512).count("Max(") for r in (8, 32, 128)]
    assert calls[0] == calls[1] == calls[2]


def test_the_profile_has_no_scalar_accesses():
    m, n = 64, 1024
    x = np.random.default_rng(0).standard_normal((m, n)).astype(np.float32)
    out = np.zeros_like(x)
    p = xblock.profile(softmax_rows, (m // R,), out, x, m, n, R=R, BLOCK=n)
    assert p.counters["scalar_ub_accesses"] == 0
    # float rows end in BlockReduce, which the dev kit prices at one cycle a repeat (not WholeReduce's 7)
    assert p.counters["reduce_repeats"] == 0 and p.counters["vector_repeats"] > 0


# ----- the model of the new API forms ---------------------------------------------------------------

MODEL_CPP = r"""
#include <string>
#include "emu_launch.h"
using namespace AscendC;
static int32_t gm[8];
static float got[64];

static void Case(const std::string& c) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> calc;
    pipe.InitBuffer(calc, 16384);
    LocalTensor<float> x = calc.Get<float>();
    Duplicate(x, 0.0f, 4096);
    LocalTensor<float> a = x[1024], b = x[2048], d = x[3072];
    if (c == "ok") {
        for (int i = 0; i < 4; i++) Duplicate(a[i * 128], float(i + 1), 128);
        Max(d, a, a[64], 64, 4, BinaryRepeatParams(1, 1, 1, 8, 16, 16));   // d[r] = max of row r's halves
        WholeReduceSum(b, d, 64, 4, 1, 1, 8);                               // b[r] = 64 * (r + 1)
        Brcb(d, b, 1, BrcbRepeatParams(1, 8));                              // block r of d = b[r]
        Copy(x[512], d, 64, 2, CopyRepeatParams(1, 0, 8, 1));               // 2 rows of 64 from blocks 0, 1
        WholeReduceMin(b[8], a, 64, 4, 1, 1, 16, ReduceOrder::ORDER_ONLY_VALUE);
    }
    if (c == "block") {
        for (int i = 0; i < 4; i++) Duplicate(a[i * 128], float(i + 1), 128);
        Duplicate(a[8], 9.0f, 8);                                           // block 1 of row 0
        BlockReduceSum(d, a, 4, 64, 1, 1, 16);                              // d[8r + j] = 8 (r + 1), row 0 block 1: 72
        BlockReduceSum(b, d, 1, 32, 1, 1, 8);                               // b[r] = 64 (r + 1) (+ 64 for row 0)
        BlockReduceMax(b[8], a, 1, 64, 1, 1, 8);                            // b[8 + j] = 1, 9, 1, 1, ...
    }
    if (c == "block_part") BlockReduceSum(d, a, 1, 60, 1, 1, 8);
    if (c == "block_dst") BlockReduceMax(d[4], a, 1, 64, 1, 1, 8);
    if (c == "unaligned") WholeReduceSum(b, a[4], 64, 1, 1, 1, 8);
    if (c == "unaligned_binary") Add(d, a, a[4], 64, 1, BinaryRepeatParams(1, 1, 1, 8, 8, 8));
    if (c == "repeat") WholeReduceMax(b, a, 64, 300, 1, 1, 0, ReduceOrder::ORDER_ONLY_VALUE);
    if (c == "mask") Copy(d, a, 65, 1, CopyRepeatParams(1, 1, 8, 8));
    if (c == "brcb_stride") Brcb(d, b, 1, BrcbRepeatParams(0, 8));
    if (c == "brcb_alias") Brcb(d, d, 1, BrcbRepeatParams(1, 8));
    if (c == "overlap") Add(a[8], a, b, 64, 1, BinaryRepeatParams(1, 1, 1, 8, 8, 8));
    event_t e = static_cast<event_t>(pipe.FetchEventID(HardEvent::V_S));
    SetFlag<HardEvent::V_S>(e);
    WaitFlag<HardEvent::V_S>(e);
    for (int i = 0; i < 12; i++) got[i] = b.GetValue(i);
    for (int i = 0; i < 2; i++) got[12 + i] = x.GetValue(512 + 64 * i + 63);
}

extern "C" int run_case(const char* c, char* err, int errlen, uint64_t* counters) {
    uint8_t* bufs[1] = {reinterpret_cast<uint8_t*>(gm)};
    uint64_t sizes[1] = {sizeof(gm)};
    const char* names[1] = {"gm"};
    uint32_t soc[3] = {192 * 1024, 184 * 1024, 1};
    std::string s = c;
    return xbemu::run(1, bufs, sizes, names, 1, soc, err, errlen, counters, [&]() { Case(s); });
}
extern "C" float result(int i) { return got[i]; }
"""


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    from xblock.backends.ascend.model.launch import EMU_DIR

    if shutil.which("g++") is None:
        pytest.skip("the AscendC model is built with g++")
    d = tmp_path_factory.mktemp("rowvec_model")
    (d / "m.cpp").write_text(MODEL_CPP)
    subprocess.run(["g++", "-std=c++17", "-Wall", "-Werror", "-O0", "-shared", "-fPIC", "-I", str(EMU_DIR),
                    str(d / "m.cpp"), "-o", str(d / "m.so")], check=True, capture_output=True, text=True)
    so = ctypes.CDLL(str(d / "m.so"))
    so.run_case.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_uint64)]
    so.result.restype = ctypes.c_float

    def run(case):
        err = ctypes.create_string_buffer(1024)
        counters = (ctypes.c_uint64 * 6)()
        rc = so.run_case(case.encode(), err, 1024, counters)
        return (err.value.decode() if rc else None), [so.result(i) for i in range(14)], list(counters)

    return run


def test_the_model_computes_the_documented_semantics(model):
    err, got, counters = model("ok")
    assert err is None, err
    assert got[:4] == [64.0, 128.0, 192.0, 256.0]  # WholeReduceSum of Max-folded rows
    assert got[8:12] == [1.0, 2.0, 3.0, 4.0]  # WholeReduceMin over rows of 128 (repeat stride 16 blocks)
    assert got[12:14] == [64.0, 128.0]  # Brcb then Copy with source block stride 0
    # 5 count-form Duplicates (64 + 4 x 2 repeats) and 5 mask/repeat-form calls, counted like the others
    assert counters[2] == 1 + 4 + 5 and counters[3] == 64 + 4 * 2 + (4 + 4 + 1 + 2 + 4)


def test_the_model_computes_block_reductions(model):
    err, got, _ = model("block")
    assert err is None, err
    assert got[:4] == [128.0, 128.0, 192.0, 256.0]  # the sums of the blocks' sums: rows of 64 lanes
    assert got[8:12] == [1.0, 9.0, 1.0, 1.0]  # the max of each block of row 0


@pytest.mark.parametrize("case, words", [
    ("block_part", "covers part of a DataBlock"),
    ("block_dst", "not 32-byte aligned"),
    ("unaligned", "not 32-byte aligned"),
    ("unaligned_binary", "src1 UB address"),
    ("repeat", "repeatTime 300 outside [0, 255]"),
    ("mask", "mask 65 above the 64 elements"),
    ("brcb_stride", "dstBlkStride 0 is undefined"),
    ("brcb_alias", "share memory"),
    ("overlap", "partly overlaps"),
])
def test_the_model_refuses_misuse(model, case, words):
    err, _, _ = model(case)
    assert err is not None and words in err, err


def test_a_constant_repeat_above_255_does_not_compile(tmp_path):
    """repeatTime is uint8_t in Brcb, Copy and the binary forms: a constant above 255 is an error with -Werror."""
    from xblock.backends.ascend.model.launch import EMU_DIR

    if shutil.which("g++") is None:
        pytest.skip("the AscendC model is built with g++")
    src = MODEL_CPP.replace('if (c == "mask")', 'if (c == "big") Brcb(d, b, 256, BrcbRepeatParams(1, 8));\n'
                                                '    if (c == "mask")')
    (tmp_path / "m.cpp").write_text(src)
    r = subprocess.run(["g++", "-std=c++17", "-Wall", "-Werror", "-fsyntax-only", "-I", str(EMU_DIR),
                        str(tmp_path / "m.cpp")], capture_output=True, text=True)
    assert r.returncode != 0 and "overflow" in r.stderr
