"""Hazards between the Cube's pipes (docs/ASCEND_MODEL.md section 4b): MTE2 (GM -> L1), MTE1 (LoadData),
M (Mmad) and FIX (Fixpipe) run asynchronously; outside the queues only SetFlag/WaitFlag orders them.

Each planted kernel below (hand-written, not the generator's) breaks one rule when `sync` is 0 and is
refused with the hazard and the missing event named; with `sync` 1 it carries the event and runs, and its
result is checked against numpy. The Cube tensors come from TBuf<A1/A2/B2/CO1> (no queue, so no
synchronisation of their own); the generator's queue code is covered by tests/ascend/cube and the Cube
conformance tests, which run with these checks on.
"""

from __future__ import annotations

import shutil
import textwrap

import numpy as np
import pytest

from tests.ascend.model.test_model_fidelity import PLANTED, build, kernel_source, metadata
from xblock.errors import ExecutionError

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the AscendC model is built with g++")

# One 16 x 16 x 16 half product: A and B go GM -> L1 (Nd2Nz, one fractal each), L1 -> L0A / L0B (LoadData, B
# transposed into Zn), Mmad into L0C, Fixpipe to c (float). `mode` picks the rule the kernel tests; `sync` 0
# leaves out the event that rule needs. The `// planted.py:N:` lines name the failing call in messages.
# the Fixpipe parameters of one 16 x 16 fp32 tile written as it is (no ReLU, no quantization)
FIX16 = """FixpipeParamsV220 fix;
fix.deqScalar = 0;
fix.ndNum = 1;
fix.srcNdStride = 0;
fix.dstNdStride = 0;
fix.reluEn = false;
fix.unitFlag = 0;
fix.nSize = 16;
fix.mSize = 16;
fix.srcStride = 16;
fix.dstStride = 16;
fix.quantPre = QuantMode_t::NoQuant;
"""
CUBE_BODY = """    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
#define SYNC(E)                                                                 \\
    do {                                                                        \\
        event_t e_ = static_cast<event_t>(pipe.FetchEventID(HardEvent::E));     \\
        SetFlag<HardEvent::E>(e_);                                              \\
        WaitFlag<HardEvent::E>(e_);                                             \\
    } while (0)
    const int32_t mode = tiling.mode;
    const bool sync = tiling.sync != 0;
    GlobalTensor<half> aGm;
    aGm.SetGlobalBuffer((__gm__ half *)a);
    GlobalTensor<half> bGm;
    bGm.SetGlobalBuffer((__gm__ half *)b);
    GlobalTensor<float> cGm;
    cGm.SetGlobalBuffer((__gm__ float *)c);
    GlobalTensor<half> cHalf;  // c's first 512 bytes as half: read back into L1 by mode 5
    cHalf.SetGlobalBuffer((__gm__ half *)c);
    TBuf<TPosition::A1> l1;
    pipe.InitBuffer(l1, 1024);
    TBuf<TPosition::A2> l0a;
    pipe.InitBuffer(l0a, 512);
    TBuf<TPosition::B2> l0b;
    pipe.InitBuffer(l0b, 512);
    TBuf<TPosition::CO1> l0c;
    pipe.InitBuffer(l0c, 1024);
    LocalTensor<half> a1 = l1.Get<half>();
    LocalTensor<half> a2 = l0a.Get<half>();
    LocalTensor<half> b2 = l0b.Get<half>();
    LocalTensor<float> c1 = l0c.Get<float>();
""" + textwrap.indent(FIX16, " " * 4) + """    DataCopy(a1, aGm, Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0));
    DataCopy(a1[256], bGm, Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0));
    if (mode != 0 || sync) SYNC(MTE2_MTE1);
    // planted.py:10: LoadData after the copy into L1 (read-after-write, MTE2 -> MTE1)
    LoadData(a2, a1, LoadData2DParams(0, 1, 0, 0, 0, false, 0));
    LoadData(b2, a1, LoadData2DParams(1, 1, 0, 0, 0, true, 0));
    if (mode == 1) {
        if (sync) SYNC(MTE1_MTE2);
        // planted.py:20: a new copy into L1 while LoadData may still read it (write-after-read, MTE1 -> MTE2)
        DataCopy(a1, aGm, Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0));
    }
    if (mode != 2 || sync) SYNC(MTE1_M);
    // planted.py:30: Mmad after LoadData (read-after-write, MTE1 -> M)
    Mmad(c1, a2, b2, MmadParams(16, 16, 16, 0, false, true));
    if (mode == 3) {
        if (sync) SYNC(M_MTE1);
        // planted.py:40: LoadData into L0A while Mmad may still read it (write-after-read, M -> MTE1)
        LoadData(a2, a1, LoadData2DParams(0, 1, 0, 0, 0, false, 0));
        SYNC(MTE1_M);
    }
    if (mode != 4 || sync) SYNC(M_FIX);
    // planted.py:50: Fixpipe after Mmad (read-after-write, M -> FIX)
    Fixpipe(cGm, c1, fix);
    if (mode == 5) {
        SYNC(MTE1_MTE2);
        if (sync) SYNC(FIX_MTE2);
        // planted.py:60: a copy from GM of bytes the Fixpipe may still be writing (FIX -> MTE2)
        DataCopy(a1, cHalf, Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0));
    }
    if (mode == 6) {
        if (sync) SYNC(FIX_M);
        // planted.py:70: Mmad into L0C while Fixpipe may still read it (write-after-read, FIX -> M)
        Mmad(c1, a2, b2, MmadParams(16, 16, 16, 0, false, true));
        SYNC(M_FIX);
        // planted.py:75: the product again, after the first one
        if (sync) PipeBarrier<PIPE_FIX>();
        Fixpipe(cGm[256], c1, fix);
    }
    if (mode == 7) {
        if (sync) PipeBarrier<PIPE_FIX>();
        // planted.py:80: a second Fixpipe over the bytes the first may still be writing (FIX -> FIX)
        Fixpipe(cGm, c1, fix);
    }
"""

CUBE_META = metadata("cubehaz", ["a", "b", "c"], [("mode", 0), ("sync", 0)], [2])


@pytest.fixture(scope="module")
def cube():
    launch = build("cubehaz", kernel_source("cubehaz", "GM_ADDR a, GM_ADDR b, GM_ADDR c", CUBE_BODY), CUBE_META)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((16, 16)).astype(np.float16)
    b = rng.standard_normal((16, 16)).astype(np.float16)
    want = a.astype(np.float32) @ b.astype(np.float32)

    def run(mode, sync):
        c = np.zeros(512, np.float32)
        launch((1, 1, 1), [a, b, c, mode, sync])
        return c, want

    return run


RULES = [  # mode, planted line, the error
    (0, 10, "LoadData: reads L1+0x0, which an earlier MTE2 instruction writes, with no MTE2->MTE1 synchronisation "
            "in between (read-after-write (SetFlag/WaitFlag<HardEvent::MTE2_MTE1>, or the queue's EnQue/DeQue))"),
    (1, 20, "DataCopy(GM->L1, Nd2NzParams): writes L1+0x0, which an earlier MTE1 instruction reads, with no "
            "MTE1->MTE2 synchronisation in between (write-after-read (SetFlag/WaitFlag<HardEvent::MTE1_MTE2>, or "
            "the queue's FreeTensor/AllocTensor))"),
    (2, 30, "Mmad: reads L0A+0x0, which an earlier MTE1 instruction writes, with no MTE1->M synchronisation"),
    (3, 40, "LoadData: writes L0A+0x0, which an earlier M instruction reads, with no M->MTE1 synchronisation in "
            "between (write-after-read (SetFlag/WaitFlag<HardEvent::M_MTE1>"),
    (4, 50, "Fixpipe: reads L0C+0x0, which an earlier M instruction writes, with no M->FIX synchronisation in "
            "between (read-after-write (SetFlag/WaitFlag<HardEvent::M_FIX>"),
    (5, 60, "DataCopy(GM->L1, Nd2NzParams): reads bytes of 'c' that an earlier Fixpipe (FIX) of this core may still "
            "be writing: SetFlag/WaitFlag<HardEvent::FIX_MTE2>"),
    (6, 70, "Mmad: writes L0C+0x0, which an earlier FIX instruction reads, with no FIX->M synchronisation in between "
            "(write-after-read (SetFlag/WaitFlag<HardEvent::FIX_M>"),
    (7, 80, "Fixpipe: writes bytes [0, 64) of 'c', which an earlier Fixpipe (FIX) also writes and may still be "
            "writing: put PipeBarrier<PIPE_FIX> between them"),
]


@pytest.mark.parametrize("mode, line, words", RULES, ids=[f"mode{r[0]}" for r in RULES])
def test_unsynchronised_cube_pipes_are_refused(cube, mode, line, words):
    with pytest.raises(ExecutionError) as e:
        cube(mode, 0)
    msg = str(e.value)
    assert msg.startswith(f"{PLANTED}:{line}: "), msg[:300]
    assert words in msg, msg


@pytest.mark.parametrize("mode", [r[0] for r in RULES])
def test_synchronised_cube_pipes_run(cube, mode):
    c, want = cube(mode, 1)
    np.testing.assert_allclose(c[:256].reshape(16, 16), want, rtol=1e-5, atol=1e-5)
    if mode == 6:  # the second product, after FIX -> M
        np.testing.assert_allclose(c[256:].reshape(16, 16), want, rtol=1e-5, atol=1e-5)


# A mixed kernel: the AIC's Fixpipe writes a workspace tile, the AIV copies it into UB after the AIC's flag.
# The flag must be set on PIPE_FIX (it fires once the Fixpipe has completed); set on PIPE_S it fires when the
# scalar unit gets there, with the Fixpipe maybe still writing (the AIV's read is refused).
XCORE_BODY = """    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_1);
    GlobalTensor<float> wGm;
    wGm.SetGlobalBuffer((__gm__ float *)w);
    GlobalTensor<float> yGm;
    yGm.SetGlobalBuffer((__gm__ float *)y);
    if ASCEND_IS_AIC {
        TQue<TPosition::CO1, 1> qC;
        pipe.InitBuffer(qC, 1, 1024);
        TQue<TPosition::A2, 1> qA;
        pipe.InitBuffer(qA, 1, 512);
        TQue<TPosition::B2, 1> qB;
        pipe.InitBuffer(qB, 1, 512);
        LocalTensor<half> a2 = qA.AllocTensor<half>();
        LocalTensor<half> b2 = qB.AllocTensor<half>();
        qA.EnQue(a2);
        qB.EnQue(b2);
        a2 = qA.DeQue<half>();
        b2 = qB.DeQue<half>();
        LocalTensor<float> c1 = qC.AllocTensor<float>();
        Mmad(c1, a2, b2, MmadParams(16, 16, 16, 0, false, true));  // (L0A/L0B uninitialised: NaN, not read back)
        qA.FreeTensor(a2);
        qB.FreeTensor(b2);
        qC.EnQue(c1);
        c1 = qC.DeQue<float>();
""" + textwrap.indent(FIX16, " " * 8) + """        Fixpipe(wGm, c1, fix);
        qC.FreeTensor(c1);
        if (tiling.sync) CrossCoreSetFlag<2, PIPE_FIX>(0);
        else CrossCoreSetFlag<2, PIPE_S>(0);
    }
    if ASCEND_IS_AIV {
        TQue<TPosition::VECIN, 1> inQ;
        pipe.InitBuffer(inQ, 1, 1024);
        CrossCoreWaitFlag(0);
        LocalTensor<float> t = inQ.AllocTensor<float>();
        DataCopy(t, wGm, 256);
        inQ.EnQue(t);
        t = inQ.DeQue<float>();
        inQ.FreeTensor(t);
    }
"""


def test_fixpipe_to_another_core_needs_a_flag_on_pipe_fix():
    meta = metadata("xcore", ["w", "y"], [("sync", 0)], [1])
    launch = build("xcore", kernel_source("xcore", "GM_ADDR w, GM_ADDR y", XCORE_BODY), meta)
    w, y = np.zeros(256, np.float32), np.zeros(8, np.float32)
    launch((1, 1, 1), [w, y, 1])
    with pytest.raises(ExecutionError) as e:
        launch((1, 1, 1), [w, y, 0])
    msg = str(e.value)
    assert ("block 0 AIV0: DataCopy(GM->UB): reads bytes of 'w' that a Fixpipe (FIX) of block 0 AIC may still be "
            "writing") in msg, msg


def test_cube_events_on_a_vector_core_are_refused():
    body = """    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    // planted.py:5: a Cube event on an AIV
    SetFlag<HardEvent::M_FIX>(0);
    WaitFlag<HardEvent::M_FIX>(0);
"""
    meta = metadata("aivevt", ["x"], [], [0])
    launch = build("aivevt", kernel_source("aivevt", "GM_ADDR x", body), meta)
    with pytest.raises(ExecutionError, match="SetFlag: HardEvent::M_FIX is not an AIV event on Atlas A2"):
        launch((1, 1, 1), [np.zeros(8, np.float32)])
