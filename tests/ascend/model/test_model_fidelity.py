"""xblock's AscendC model against facts of the real API that a shared misunderstanding could miss.

Planted, hand-written kernels (not the generator's: these must hold whatever it emits) go through
the launcher's own path, `build_emulator_library` + `load`, so compile errors and model errors
come back as they do for generated kernels, at the Python line of the `// planted.py:N:` comment
above the C++ that failed. Facts and sources: docs/ASCEND_MODEL.md.

- NPU build: kernel code sees no host library (<cmath>, INFINITY, printf, std::, memcpy ...).
- DataCache: GlobalTensor::SetValue/GetValue go through per-core 64-byte lines; two cores storing
  into one line race; stale reads, DMA reads of dirty bytes and whole-line write-backs over newer
  DMA data are errors; dirty lines are written back at kernel end.
- Kernel types (KERNEL_TYPE_AIV_ONLY), the CANN 9 names (Compares, DisableDmaAtomic) and the
  CANN 8 build of a kernel that picks spellings by version.
"""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from xblock.backends.ascend.emit.cpp import tiling_struct_name
from xblock.backends.ascend.model.launch import EMU_DIR, build_emulator_library, load
from xblock.errors import ExecutionError

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the AscendC model is built with g++")

PLANTED = "/planted/planted.py"  # the kernel's "Python file": model errors name its lines


def metadata(name: str, pointers: list, fields: list, written: list) -> dict:
    return {"name": name, "file": PLANTED, "line": 1, "soc": "910B3", "arg_names": pointers + [n for n, _ in fields],
            "arg_types": ["*fp32"] * len(pointers) + ["i32"] * len(fields),
            "tiling_fields": [(n, "i32") for n, _ in fields] + [("numPrograms", "i64"), ("gridX", "i32"),
                                                                ("gridY", "i32")],
            "written_args": written}


def kernel_source(name: str, params: str, body: str, before: str = "") -> str:
    return (f'{before}#include "kernel_operator.h"\n#include "{name}_tiling.h"\n\nusing namespace AscendC;\n\n'
            f'extern "C" __global__ __aicore__ void {name}({params}, {tiling_struct_name(name)} tiling)\n'
            f"{{\n    TPipe pipe;\n{body}}}\n")


def build(name: str, cpp: str, meta: dict):
    """The launcher (grid, args) of planted kernel.cpp `cpp`, built as a generated kernel is."""
    so = build_emulator_library(cpp, meta)
    return load({"so": so, "cpp": cpp}, meta)


# ----- NPU build: no host library in kernel code ---------------------------------------------------

NPU_BODY = """    GlobalTensor<float> xGm;
    xGm.SetGlobalBuffer((__gm__ float *)x);
    if (GetBlockIdx() == 0) {{
        // planted.py:5: v = xl.load(x)
        float v = xGm.GetValue(0);
        // planted.py:7: {py}
        {stmt}
    }}
"""
NPU_META = metadata("npu", ["x"], [], [0])


@pytest.mark.parametrize("stmt, name, before", [
    ("xGm.SetValue(0, sqrtf(v));", "sqrtf", "#include <cmath>\n"),  # <cmath> before the model's header
    ("xGm.SetValue(0, v < INFINITY ? v : 0.0f);", "INFINITY", ""),
    ('printf("%f", v);', "printf", ""),
    ("xGm.SetValue(0, std::exp(v));", "std", ""),
    ("float w; memcpy(&w, &v, 4); xGm.SetValue(0, w);", "memcpy", ""),
    ("xGm.SetValue(0, isnan(v) ? 0.0f : v);", "isnan", "#include <math.h>\n"),
])
def test_host_library_names_do_not_compile(stmt, name, before):
    cpp = kernel_source("npu", "GM_ADDR x", NPU_BODY.format(py="xl.store(x, f(v))", stmt=stmt), before)
    with pytest.raises(ExecutionError) as e:
        build("npu", cpp, NPU_META)
    msg = str(e.value)
    assert msg.startswith(f"{PLANTED}:7: ") and "does not compile" in msg, msg[:400]
    assert f"kernel code uses {name}, which an NPU build of kernel_operator.h does not declare" in msg, msg[:600]
    assert f"XBEMU_NPU_BUILD_HAS_NO_{name}" in msg


def test_builtins_and_own_names_that_shadow_libm_compile_and_run():
    # compiler builtins are what an NPU build has for special values; a kernel's own `nan` or `std`
    # is just a name (an NPU build declares no such function), so it must not trip the check
    stmt = ('float nan = __builtin_nanf(""); float std = v * 2.0f; '
            "xGm.SetValue(0, nan != nan && std < __builtin_inff() ? std : v);")
    cpp = kernel_source("npu", "GM_ADDR x", NPU_BODY.format(py="xl.store(x, 2 * v)", stmt=stmt))
    x = np.array([3.0] + [0.0] * 15, np.float32)
    build("npu", cpp, NPU_META)((1, 1, 1), [x])
    assert x[0] == 6.0


def _syntax(tmp_path, src: str, *defines: str) -> subprocess.CompletedProcess:
    f = tmp_path / "k.cpp"
    f.write_text(src)
    return subprocess.run(["g++", "-std=c++17", "-Wall", "-Werror", "-fsyntax-only", *defines, "-I", str(EMU_DIR),
                           str(f)], capture_output=True, text=True)


def test_cpu_debug_build_keeps_the_host_library(tmp_path):
    src = '#include "kernel_operator.h"\nfloat f(float x) { return std::sqrt(x) + sqrtf(x) + INFINITY; }\n'
    assert _syntax(tmp_path, src).returncode != 0  # NPU build (the default)
    r = _syntax(tmp_path, src, "-DASCENDC_CPU_DEBUG=1")
    assert r.returncode == 0, r.stderr[-2000:]
    # a host program that includes the model's launcher first is a CPU-debug build too
    r = _syntax(tmp_path, '#include "emu_launch.h"\n' + src)
    assert r.returncode == 0, r.stderr[-2000:]


# ----- DataCache -----------------------------------------------------------------------------------

DCACHE_BODY = """    GlobalTensor<float> xGm;
    xGm.SetGlobalBuffer((__gm__ float *)x);
    GlobalTensor<float> yGm;
    yGm.SetGlobalBuffer((__gm__ float *)y);
    TQue<TPosition::VECIN, 1> inQ;
    pipe.InitBuffer(inQ, 1, 64);
    TQue<TPosition::VECOUT, 1> outQ;
    pipe.InitBuffer(outQ, 1, 64);
    const int32_t mode = tiling.mode, flush = tiling.flush, offset = tiling.offset;
    const int64_t b = GetBlockIdx();
    if (mode == 0 && b == 0) {  // a scalar read, a DMA write of the same line, a scalar read again
        // planted.py:10: a = xl.load(x)
        float a = xGm.GetValue(0);
        LocalTensor<float> t = outQ.AllocTensor<float>();
        Duplicate(t, a + 1.0f, 16);
        outQ.EnQue(t);
        LocalTensor<float> u = outQ.DeQue<float>();
        // planted.py:12: xl.store(x + offs, a + 1)
        DataCopy(xGm, u, 16);
        outQ.FreeTensor(u);
        Flush(xGm, flush);
        // planted.py:14: xl.store(y, xl.load(x))
        yGm.SetValue(0, xGm.GetValue(0));
    }
    if (mode == 1 && b == 0) {  // a scalar store, then a DMA read of it
        // planted.py:20: xl.store(x, 5.0)
        xGm.SetValue(0, 5.0f);
        Flush(xGm, flush);
        LocalTensor<float> t = inQ.AllocTensor<float>();
        // planted.py:23: v = xl.load(x + offs)
        DataCopy(t, xGm, 16);
        inQ.EnQue(t);
        LocalTensor<float> u = inQ.DeQue<float>();
        event_t e = static_cast<event_t>(pipe.FetchEventID(HardEvent::MTE2_S));
        SetFlag<HardEvent::MTE2_S>(e);
        WaitFlag<HardEvent::MTE2_S>(e);
        yGm.SetValue(0, u.GetValue(0));
        inQ.FreeTensor(u);
    }
    if (mode == 2 && b == 0) {  // a scalar store, then a DMA write into the rest of its line
        // planted.py:30: xl.store(x, 5.0)
        xGm.SetValue(0, 5.0f);
        Flush(xGm, flush);
        LocalTensor<float> t = outQ.AllocTensor<float>();
        Duplicate(t, 7.0f, 16);
        outQ.EnQue(t);
        LocalTensor<float> u = outQ.DeQue<float>();
        // planted.py:33: xl.store(x + 1 + offs, 7.0, mask=offs < 7)
        DataCopyPad(xGm[1], u, DataCopyExtParams(1, 7 * sizeof(float), 0, 0, 0));
        outQ.FreeTensor(u);
    }
    if (mode == 3) {  // block 0 stores a scalar, block 1 copies into GM at `offset`
        if (b == 0) {
            // planted.py:40: xl.store(x, 5.0)
            xGm.SetValue(0, 5.0f);
            Flush(xGm, flush);
        } else {
            LocalTensor<float> t = outQ.AllocTensor<float>();
            Duplicate(t, 7.0f, 16);
            outQ.EnQue(t);
            LocalTensor<float> u = outQ.DeQue<float>();
            // planted.py:45: xl.store(x + offset + offs, 7.0, mask=offs < 7)
            DataCopyPad(xGm[offset], u, DataCopyExtParams(1, 7 * sizeof(float), 0, 0, 0));
            outQ.FreeTensor(u);
        }
    }
    if (mode == 4) {  // every block stores one scalar at b * offset
        // planted.py:50: xl.store(x + pid * offset, pid)
        xGm.SetValue(b * offset, static_cast<float>(b));
        Flush(xGm[b * offset], flush);
    }
"""
DCACHE_HELPER = """static __aicore__ inline void Flush(const GlobalTensor<float>& g, int32_t how)
{
    if (how == 1) DataCacheCleanAndInvalid<float, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(g);
    if (how == 2) DataCacheCleanAndInvalid<float, CacheLine::ENTIRE_DATA_CACHE, DcciDst::CACHELINE_OUT>(g);
}
"""


@pytest.fixture(scope="module")
def dcache():
    meta = metadata("dcache", ["x", "y"], [("mode", 0), ("flush", 0), ("offset", 0)], [0, 1])
    cpp = kernel_source("dcache", "GM_ADDR x, GM_ADDR y", DCACHE_BODY)
    cpp = cpp.replace("using namespace AscendC;\n\n", "using namespace AscendC;\n\n" + DCACHE_HELPER + "\n")
    launch = build("dcache", cpp, meta)

    def run(mode, flush=0, offset=0, blocks=1):
        x = np.arange(64, dtype=np.float32)
        y = np.zeros(16, np.float32)
        launch((blocks, 1, 1), [x, y, mode, flush, offset])
        return x, y

    return run


def _fails(run, *args, **kw) -> str:
    with pytest.raises(ExecutionError) as e:
        run(*args, **kw)
    return str(e.value)


def test_two_cores_storing_scalars_into_one_line_race(dcache):
    # ADK DataCacheCleanAndInvalid example 3: each core writes its whole 64-byte line back
    for flush in (0, 1):
        msg = _fails(dcache, 4, flush=flush, offset=1, blocks=4)
        assert msg.startswith(f"{PLANTED}:50: dcache: "), msg
        assert "GlobalTensor::SetValue: block 1 stores into the 64-byte DataCache line at bytes [0, 64) of 'x', " \
               "which block 0 also stores into (planted.py:50)" in msg, msg


def test_cores_storing_scalars_into_lines_they_own_pass(dcache):
    for flush in (0, 1, 2):  # without a flush, the compiler's flush at kernel end writes the lines back
        x, _ = dcache(4, flush=flush, offset=16, blocks=4)
        want = np.arange(64, dtype=np.float32)
        want[[0, 16, 32, 48]] = [0, 1, 2, 3]
        np.testing.assert_array_equal(x, want)


def test_a_read_hits_the_cached_line_until_it_is_invalidated(dcache):
    msg = _fails(dcache, 0)  # the DMA wrote x[0] = 1 after GetValue cached the line
    assert msg.startswith(f"{PLANTED}:14: dcache: ") and "GlobalTensor::GetValue: reads a stale DataCache line" \
        in msg, msg
    for flush in (1, 2):
        x, y = dcache(0, flush=flush)
        assert y[0] == 1.0 and x[0] == 1.0


def test_a_dma_read_misses_a_scalar_store_not_yet_written_back(dcache):
    msg = _fails(dcache, 1)
    assert msg.startswith(f"{PLANTED}:20: dcache: ") and "DataCopy(GM->UB): reads byte 0 of 'x', which a SetValue " \
        "of this core left in its DataCache" in msg, msg
    for flush in (1, 2):
        _, y = dcache(1, flush=flush)
        assert y[0] == 5.0


def test_a_whole_line_write_back_must_not_overwrite_newer_dma_data(dcache):
    msg = _fails(dcache, 2)  # the line is written back at kernel end, after the DMA wrote x[1..7]
    assert msg.startswith(f"{PLANTED}:30: dcache: ") and "writes back the 64-byte line at bytes [0, 64) of 'x' " \
        "whole" in msg and "kernel end" in msg, msg
    x, _ = dcache(2, flush=1)
    np.testing.assert_array_equal(x[:9], [5, 7, 7, 7, 7, 7, 7, 7, 8])


def test_a_copy_into_a_line_another_core_stores_scalars_into_races(dcache):
    msg = _fails(dcache, 3, flush=1, offset=1, blocks=2)
    assert "DataCopyPad(UB->GM): block 1 copies into the 64-byte line at bytes [0, 64) of 'x', which block 0 " \
        "stores scalars into" in msg and "(planted.py:40)" in msg, msg
    x, _ = dcache(3, flush=1, offset=16, blocks=2)
    assert x[0] == 5.0 and list(x[16:24]) == [7] * 7 + [23]


# ----- hazards the compiler's auto-sync does not fix: copies of one pipe, and GM through DMA ------

PIPES_BODY = """    GlobalTensor<float> xGm;
    xGm.SetGlobalBuffer((__gm__ float *)x);
    TBuf<TPosition::VECCALC> calc;
    pipe.InitBuffer(calc, 1024);
    LocalTensor<float> a = calc.Get<float>(16);
    LocalTensor<float> c = calc.GetWithOffset<float>(16, 512);
    const int32_t mode = tiling.mode, sync = tiling.sync;
    if (GetBlockIdx() != 0) return;
    if (mode == 0) {  // two copies to overlapping GM
        Duplicate(a, 1.0f, 16);
        Duplicate(c, 2.0f, 16);
        event_t e = static_cast<event_t>(pipe.FetchEventID(HardEvent::V_MTE3));
        SetFlag<HardEvent::V_MTE3>(e);
        WaitFlag<HardEvent::V_MTE3>(e);
        DataCopy(xGm, a, 16);
        if (sync) PipeBarrier<PIPE_MTE3>();
        DataCopy(xGm[8], c, 16);
    }
    if (mode == 1) {  // two copies into overlapping UB
        DataCopy(a, xGm, 16);
        if (sync) PipeBarrier<PIPE_MTE2>();
        DataCopy(a, xGm[16], 16);
    }
    if (mode == 2) {  // a copy to GM, then a copy back from the same GM
        Duplicate(a, 3.0f, 16);
        event_t e = static_cast<event_t>(pipe.FetchEventID(HardEvent::V_MTE3));
        SetFlag<HardEvent::V_MTE3>(e);
        WaitFlag<HardEvent::V_MTE3>(e);
        DataCopy(xGm, a, 16);
        if (sync) {
            event_t f = static_cast<event_t>(pipe.FetchEventID(HardEvent::MTE3_MTE2));
            SetFlag<HardEvent::MTE3_MTE2>(f);
            WaitFlag<HardEvent::MTE3_MTE2>(f);
        }
        DataCopy(c, xGm, 16);
        event_t g = static_cast<event_t>(pipe.FetchEventID(HardEvent::MTE2_S));
        SetFlag<HardEvent::MTE2_S>(g);
        WaitFlag<HardEvent::MTE2_S>(g);
        xGm.SetValue(32, c.GetValue(0));
    }
    if (mode >= 3) {  // write-after-read: a vector instruction or a copy-out reads a, then a is overwritten
        Duplicate(a, 4.0f, 16);
        event_t e = static_cast<event_t>(pipe.FetchEventID(HardEvent::V_MTE3));
        SetFlag<HardEvent::V_MTE3>(e);
        WaitFlag<HardEvent::V_MTE3>(e);
        if (mode == 3) Adds(c, a, 1.0f, 16);  // V reads a
        else DataCopy(xGm[32], a, 16);        // MTE3 reads a
        if (mode == 3 && sync) {
            event_t f = static_cast<event_t>(pipe.FetchEventID(HardEvent::V_MTE2));
            SetFlag<HardEvent::V_MTE2>(f);
            WaitFlag<HardEvent::V_MTE2>(f);
        }
        if (mode == 4 && sync) {
            event_t f = static_cast<event_t>(pipe.FetchEventID(HardEvent::MTE3_MTE2));
            SetFlag<HardEvent::MTE3_MTE2>(f);
            WaitFlag<HardEvent::MTE3_MTE2>(f);
        }
        if (mode == 5 && sync) {
            event_t f = static_cast<event_t>(pipe.FetchEventID(HardEvent::MTE3_V));
            SetFlag<HardEvent::MTE3_V>(f);
            WaitFlag<HardEvent::MTE3_V>(f);
        }
        if (mode == 5) Duplicate(a, 5.0f, 16);  // V overwrites what MTE3 copies out
        else DataCopy(a, xGm, 16);              // MTE2 overwrites what V or MTE3 reads
    }
"""


@pytest.fixture(scope="module")
def pipes():
    meta = metadata("pipes", ["x"], [("mode", 0), ("sync", 0)], [0])
    launch = build("pipes", kernel_source("pipes", "GM_ADDR x", PIPES_BODY), meta)

    def run(mode, sync):
        x = np.arange(64, dtype=np.float32)
        launch((1, 1, 1), [x, mode, sync])
        return x

    return run


@pytest.mark.parametrize("mode, words", [
    (0, "DataCopy(UB->GM): writes bytes [32, 96) of 'x', which an earlier copy to GM (MTE3) also writes"),
    (1, "DataCopy(GM->UB): writes UB+0x0, which an earlier MTE2 copy also writes"),
    (2, "DataCopy(GM->UB): reads bytes of 'x' that an earlier copy to GM (MTE3) of this core may still be writing"),
    (3, "DataCopy(GM->UB): writes UB+0x0, which an earlier V instruction reads, with no V->MTE2 synchronisation "
        "in between (write-after-read"),
    (4, "DataCopy(GM->UB): writes UB+0x0, which an earlier MTE3 instruction reads, with no MTE3->MTE2"),
    (5, "Duplicate: writes UB+0x0, which an earlier MTE3 instruction reads, with no MTE3->V"),
])
def test_unordered_copies_that_overlap_fail(pipes, mode, words):
    msg = _fails(pipes, mode, 0)
    assert words in msg, msg


def test_ordered_copies_that_overlap_pass(pipes):
    x = pipes(0, 1)
    assert list(x[:24]) == [1.0] * 8 + [2.0] * 16
    pipes(1, 1)
    assert pipes(2, 1)[32] == 3.0
    for mode in (3, 4, 5):  # write-after-read with the sync
        assert list(pipes(mode, 1)[32:48]) == ([4.0] * 16 if mode > 3 else list(range(32, 48))), mode


# ----- kernel types and the CANN 9 names -----------------------------------------------------------

KTYPE_BODY = """    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    GlobalTensor<half> xGm;
    xGm.SetGlobalBuffer((__gm__ half *)x);
    if (GetBlockIdx() != 0) return;
    if (ASCEND_IS_AIC) {  // an AIV_ONLY kernel starts no Cube core
        xGm.SetValue(0, static_cast<half>(1.0f));
    }
    if (ASCEND_IS_AIV) {
        xGm.SetValue(1, static_cast<half>(2.0f));
    }
    if (tiling.mode == 1) {
        TQue<TPosition::A1, 1> qA1;
        pipe.InitBuffer(qA1, 1, 512);
        LocalTensor<half> a1 = qA1.AllocTensor<half>();
        // planted.py:9: a = xl.load(a_ptr + offs)
        DataCopy(a1, xGm, Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0));
    }
"""


def test_cube_api_in_an_aiv_only_kernel_fails():
    meta = metadata("ktype", ["x"], [("mode", 0)], [0])
    launch = build("ktype", kernel_source("ktype", "GM_ADDR x", KTYPE_BODY), meta)
    x = np.zeros(256, np.float16)
    launch((1, 1, 1), [x, 0])
    assert list(x[:2]) == [0.0, 2.0]  # ASCEND_IS_AIC is false, ASCEND_IS_AIV true
    with pytest.raises(ExecutionError, match="DataCopy\\(GM->L1, Nd2NzParams\\): cube API in a KERNEL_TYPE_AIV_ONLY "
                                             "kernel"):
        launch((1, 1, 1), [x, 1])


VERSIONED_BODY = """    GlobalTensor<float> yGm;
    yGm.SetGlobalBuffer((__gm__ float *)y);
    TBuf<TPosition::VECCALC> calc;
    pipe.InitBuffer(calc, 1024);
    LocalTensor<float> v = calc.Get<float>(64);
    LocalTensor<uint8_t> m = calc.GetWithOffset<uint8_t>(32, 512);
    Duplicate(v, 1.0f, 64);
    // planted.py:6: m = v < 2.0
#if XBLOCK_CANN_API >= 9
    Compares(m, v, 2.0f, CMPMODE::LT, 64);
    DisableDmaAtomic();
#else
    CANN8_COMPARE(m, v, 2.0f, CMPMODE::LT, 64);
    SetAtomicNone();
#endif
    event_t e = static_cast<event_t>(pipe.FetchEventID(HardEvent::V_S));
    SetFlag<HardEvent::V_S>(e);
    WaitFlag<HardEvent::V_S>(e);
    if (GetBlockIdx() == 0) {
        yGm.SetValue(0, static_cast<float>(m.GetValue(0)));
    }
"""
# a hand-written version switch, keyed on a version macro (here the model's own: every CANN from 8.3
# defines __NPU_ARCH__, so that macro cannot tell 8 from 9; tests/ascend/emit/test_cann_versions.py)
VERSION_SWITCH = """#ifndef XBLOCK_CANN_API
#if defined(XBEMU_CANN_VERSION) && XBEMU_CANN_VERSION < 9
#define XBLOCK_CANN_API 8
#else
#define XBLOCK_CANN_API 9
#endif
#endif
"""


def _versioned(cann8_call: str) -> str:
    body = VERSIONED_BODY.replace("CANN8_COMPARE", cann8_call)
    return kernel_source("versioned", "GM_ADDR y", body).replace("using namespace AscendC;",
                                                                 VERSION_SWITCH + "\nusing namespace AscendC;")


def test_cann9_names_run_and_the_cann8_build_is_checked():
    meta = metadata("versioned", ["y"], [], [0])
    y = np.zeros(16, np.float32)
    build("versioned", _versioned("CompareScalar"), meta)((1, 1, 1), [y])
    assert y[0] == 255.0  # 8 lanes of 1.0 < 2.0
    # Compares is CANN 9's name: a CANN 8 build (its branch of the version switch) does not have it
    with pytest.raises(ExecutionError) as e:
        build("versioned", _versioned("Compares"), meta)
    msg = str(e.value)
    assert "as a CANN 8 build" in msg and "Compares" in msg and msg.startswith(f"{PLANTED}:6: "), msg[:600]
