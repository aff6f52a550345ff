"""Mixed kernels on the AscendC model run as separate cores: per block one AIC and one (MIX_AIC_1_1)
or two (MIX_AIC_1_2) AIVs, each with its own state, switching at CrossCoreWaitFlag (emu/cube.h).

One hand-written kernel (not the generator's), built and launched through the launcher's own path
(`build_emulator_library` + `load`); its `mode` tiling field picks the case, and the kernel type
with it (the model's KERNEL_TASK_TYPE_DEFAULT takes a runtime value).

- mode 0 / 1: per program a 32x32x32 matmul tile on the AIC (Nd2Nz -> LoadData -> Mmad -> Fixpipe to
  the block's GM workspace slot), handed over with flag 0; each AIV copies its rows (GetSubBlockIdx,
  GetSubBlockNum), hands the slot back with flag 1 and writes 2 * C + 1 + its GetSubBlockIdx(); the
  AIC waits for flag 1 before it reuses the slot. 0: MIX_AIC_1_2, 1: MIX_AIC_1_1.
- mode 2 / 3 / 4: every core writes GetBlockIdx, GetBlockNum, GetSubBlockIdx, GetSubBlockNum and
  which section ran to its own 64-byte line of `idx` (2: MIX_AIC_1_2, 3: MIX_AIC_1_1, 4: AIV_ONLY).
- mode 5: the AIVs wait for flag 5, which nobody sets (deadlock).
- mode 6: the AIC waits for flag 2, then sets flag 3 that the AIVs wait for; only AIV0 sets flag 2,
  so the AIC's wait never passes (deadlock). mode 7: both AIVs set it, and all runs.
- mode 9 / 10: each AIV copies its rows of a tile to `ws` (MTE3) and sets flag 2, on PIPE_MTE3 (9)
  or on PIPE_S (10), which does not wait for the copy; the AIC then reads the tile (MTE2).
- mode 11 / 12: mode-1 flag 6 between the AIVs: both set it and wait (11); only AIV0 sets it (12).
- mode 13: the AIC sets flag 8, which the AIVs never wait for; mode 14: only AIV0 sets flag 7.
- mode 8: the AIC waits for a flag nobody sets while AIV1 reads past the end of `ws` (a model error
  inside an AIV section stops the launch, and the waiting AIC is unwound).
"""

from __future__ import annotations

import ctypes
import shutil

import numpy as np
import pytest

from xblock.backends.ascend.emit.cpp import tiling_struct_name
from xblock.backends.ascend.model import cost
from xblock.backends.ascend.model import launch as L
from xblock.backends.common.native import load_library
from xblock.errors import ExecutionError

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the AscendC model is built with g++")

NAME = "mixed_cores"
KERNEL = """#include "kernel_operator.h"
#include "mixed_cores_tiling.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void mixed_cores(GM_ADDR a, GM_ADDR b, GM_ADDR ws, GM_ADDR y, GM_ADDR idx,
                                                  TILING tiling)
{
    const int32_t mode = tiling.mode;
    KERNEL_TASK_TYPE_DEFAULT(mode == 1 || mode == 3 ? KERNEL_TYPE_MIX_AIC_1_1
                             : mode == 4            ? KERNEL_TYPE_AIV_ONLY
                                                    : KERNEL_TYPE_MIX_AIC_1_2);
    TPipe pipe;
    GlobalTensor<half> aGm, bGm;
    aGm.SetGlobalBuffer((__gm__ half *)a);
    bGm.SetGlobalBuffer((__gm__ half *)b);
    GlobalTensor<float> wsGm, yGm;
    wsGm.SetGlobalBuffer((__gm__ float *)ws);
    yGm.SetGlobalBuffer((__gm__ float *)y);
    GlobalTensor<int32_t> idxGm;
    idxGm.SetGlobalBuffer((__gm__ int32_t *)idx);
    const int64_t tiles = tiling.tiles;
    TQue<TPosition::A1, 1> qA1;
    TQue<TPosition::B1, 1> qB1;
    TQue<TPosition::A2, 1> qA2;
    TQue<TPosition::B2, 1> qB2;
    TQue<TPosition::CO1, 1> qC;
    TQue<TPosition::VECIN, 1> inQ;
    TQue<TPosition::VECOUT, 1> outQ;
    if (mode <= 1) {
        if ASCEND_IS_AIC {
            pipe.InitBuffer(qA1, 1, 2048);
            pipe.InitBuffer(qB1, 1, 2048);
            pipe.InitBuffer(qA2, 1, 2048);
            pipe.InitBuffer(qB2, 1, 2048);
            pipe.InitBuffer(qC, 1, 4096);
            const int64_t core = GetBlockIdx();
            int64_t n = 0;
            for (int64_t t = core; t < tiles; t += GetBlockNum(), n++) {
                if (n > 0) CrossCoreWaitFlag(1);  // the AIVs have read the previous tile: the slot is free
                LocalTensor<half> a1 = qA1.AllocTensor<half>();
                DataCopy(a1, aGm[t * 1024], Nd2NzParams(1, 32, 32, 0, 32, 32, 1, 0));
                qA1.EnQue(a1);
                LocalTensor<half> b1 = qB1.AllocTensor<half>();
                DataCopy(b1, bGm, Nd2NzParams(1, 32, 32, 0, 32, 32, 1, 0));
                qB1.EnQue(b1);
                a1 = qA1.DeQue<half>();
                b1 = qB1.DeQue<half>();
                LocalTensor<half> a2 = qA2.AllocTensor<half>();
                for (int i = 0; i < 2; i++) LoadData(a2[i * 512], a1, LoadData2DParams(i, 2, 2, 0, 0, false, 0));
                qA2.EnQue(a2);
                LocalTensor<half> b2 = qB2.AllocTensor<half>();
                for (int j = 0; j < 2; j++) LoadData(b2[j * 512], b1, LoadData2DParams(j, 2, 2, 0, 0, true, 0));
                qB2.EnQue(b2);
                a2 = qA2.DeQue<half>();
                b2 = qB2.DeQue<half>();
                LocalTensor<float> c1 = qC.AllocTensor<float>();
                Mmad(c1, a2, b2, MmadParams(32, 32, 32, 0, false, true));
                qA2.FreeTensor(a2);
                qB2.FreeTensor(b2);
                qA1.FreeTensor(a1);
                qB1.FreeTensor(b1);
                qC.EnQue(c1);
                c1 = qC.DeQue<float>();
                FixpipeParamsV220 p;
                p.nSize = 32;
                p.mSize = 32;
                p.srcStride = 32;
                p.dstStride = 32;
                Fixpipe(wsGm[core * 1024], c1, p);
                qC.FreeTensor(c1);
                CrossCoreSetFlag<2, PIPE_FIX>(0);  // the tile is in the slot
            }
            if (n > 0) CrossCoreWaitFlag(1);
        }
        if ASCEND_IS_AIV {
            const int64_t core = GetBlockIdx() / GetSubBlockNum();
            const int64_t rows = 32 / GetSubBlockNum(), row0 = GetSubBlockIdx() * rows;
            pipe.InitBuffer(inQ, 1, 4096);
            pipe.InitBuffer(outQ, 1, 4096);
            for (int64_t t = core; t < tiles; t += GetBlockNum()) {
                CrossCoreWaitFlag(0);
                LocalTensor<float> x = inQ.AllocTensor<float>();
                DataCopy(x, wsGm[core * 1024 + row0 * 32], static_cast<uint32_t>(rows * 32));
                CrossCoreSetFlag<2, PIPE_MTE2>(1);  // read: the AIC may reuse the slot
                inQ.EnQue(x);
                x = inQ.DeQue<float>();
                LocalTensor<float> z = outQ.AllocTensor<float>();
                Muls(z, x, 2.0f, static_cast<int32_t>(rows * 32));
                Adds(z, z, 1.0f + GetSubBlockIdx(), static_cast<int32_t>(rows * 32));
                inQ.FreeTensor(x);
                outQ.EnQue(z);
                z = outQ.DeQue<float>();
                DataCopy(yGm[t * 1024 + row0 * 32], z, static_cast<uint32_t>(rows * 32));
                outQ.FreeTensor(z);
            }
        }
    }
    if (mode >= 2 && mode <= 4) {  // one 64-byte line per core: 3 per GetBlockIdx() value
        const int64_t aic = ASCEND_IS_AIC ? 1 : 0, aiv = ASCEND_IS_AIV ? 1 : 0;
        const int64_t line = (GetBlockIdx() * 3 + (aic ? 0 : 1 + GetSubBlockIdx())) * 16;
        idxGm.SetValue(line, 1);
        idxGm.SetValue(line + 1, static_cast<int32_t>(GetBlockIdx()));
        idxGm.SetValue(line + 2, static_cast<int32_t>(GetBlockNum()));
        idxGm.SetValue(line + 3, static_cast<int32_t>(GetSubBlockIdx()));
        idxGm.SetValue(line + 4, static_cast<int32_t>(GetSubBlockNum()));
        idxGm.SetValue(line + 5, static_cast<int32_t>(aic));
        idxGm.SetValue(line + 6, static_cast<int32_t>(aiv));
    }
    if (mode == 5) {
        if ASCEND_IS_AIV {
            CrossCoreWaitFlag(5);
        }
    }
    if (mode == 6 || mode == 7) {
        if ASCEND_IS_AIC {
            CrossCoreWaitFlag(2);
            CrossCoreSetFlag<2, PIPE_S>(3);
        }
        if ASCEND_IS_AIV {
            if (GetSubBlockIdx() == 0 || mode == 7) CrossCoreSetFlag<2, PIPE_S>(2);
            CrossCoreWaitFlag(3);
        }
    }
    if (mode == 9 || mode == 10) {  // each AIV writes its rows of a half tile to ws; the AIC reads the tile
        GlobalTensor<half> wsH;
        wsH.SetGlobalBuffer((__gm__ half *)ws);
        if ASCEND_IS_AIV {
            const int64_t rows = 32 / GetSubBlockNum(), row0 = GetSubBlockIdx() * rows;
            pipe.InitBuffer(outQ, 1, 4096);
            LocalTensor<half> h = outQ.AllocTensor<half>();
            Duplicate(h, static_cast<half>(1.0f + GetSubBlockIdx()), static_cast<int32_t>(rows * 32));
            outQ.EnQue(h);
            h = outQ.DeQue<half>();
            DataCopy(wsH[row0 * 32], h, static_cast<uint32_t>(rows * 32));
            outQ.FreeTensor(h);
            if (mode == 9)
                CrossCoreSetFlag<2, PIPE_MTE3>(2);  // after the copy has landed
            else
                CrossCoreSetFlag<2, PIPE_S>(2);  // the scalar pipe does not wait for MTE3
        }
        if ASCEND_IS_AIC {
            pipe.InitBuffer(qA1, 1, 2048);
            CrossCoreWaitFlag(2);
            LocalTensor<half> a1 = qA1.AllocTensor<half>();
            DataCopy(a1, wsH, Nd2NzParams(1, 32, 32, 0, 32, 32, 1, 0));
            qA1.EnQue(a1);
            a1 = qA1.DeQue<half>();
            qA1.FreeTensor(a1);
        }
    }
    if (mode == 11 || mode == 12) {  // mode 1: the two AIVs meet
        if ASCEND_IS_AIV {
            if (GetSubBlockIdx() == 0 || mode == 11) CrossCoreSetFlag<1, PIPE_S>(6);
            CrossCoreWaitFlag(6);
        }
    }
    if (mode == 13) {
        if ASCEND_IS_AIC {
            CrossCoreSetFlag<2, PIPE_S>(8);
        }
    }
    if (mode == 14) {
        if ASCEND_IS_AIV {
            if (GetSubBlockIdx() == 0) CrossCoreSetFlag<2, PIPE_S>(7);
        }
    }
    if (mode == 8) {
        if ASCEND_IS_AIC {
            CrossCoreWaitFlag(4);
        }
        if ASCEND_IS_AIV {
            pipe.InitBuffer(inQ, 1, 4096);
            LocalTensor<float> x = inQ.AllocTensor<float>();
            DataCopy(x, wsGm[GetSubBlockIdx() == 1 ? 1 << 20 : 0], 64);
            inQ.EnQue(x);
            x = inQ.DeQue<float>();
            inQ.FreeTensor(x);
        }
    }
}
""".replace("TILING", tiling_struct_name(NAME))

META = {"name": NAME, "file": "/planted/mixed.py", "line": 1, "soc": "910B3",
        "arg_names": ["a", "b", "ws", "y", "idx", "mode", "tiles"],
        "arg_types": ["*fp16", "*fp16", "*fp32", "*fp32", "*i32", "i32", "i32"],
        "tiling_fields": [("mode", "i32"), ("tiles", "i32"), ("numPrograms", "i64"), ("gridX", "i32"),
                          ("gridY", "i32")],
        "written_args": [2, 3, 4], "kernel_type": "KERNEL_TYPE_MIX_AIC_1_2"}
BLOCKS = 2  # every launch: grid (2,), one program per block
TILES = 5


@pytest.fixture(scope="module")
def kernel():
    so = L.build_emulator_library(KERNEL, META)
    return so, L.load({"so": so, "cpp": KERNEL}, META)


def _args(tiles: int = TILES, seed: int = 0):
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, (tiles, 32, 32)).astype(np.float16)
    b = rng.integers(-3, 4, (32, 32)).astype(np.float16)
    ws = np.zeros((BLOCKS, 32, 32), np.float32)
    y = np.zeros((tiles, 32, 32), np.float32)
    idx = np.zeros((BLOCKS * 2 * 3, 16), np.int32)
    return a, b, ws, y, idx


def _run(kernel, mode: int, args=None):
    args = args or _args()
    kernel[1]((BLOCKS, 1, 1), [*args, mode, TILES])
    return args


@pytest.mark.parametrize("mode, aivs", [(0, 2), (1, 1)])
def test_aic_tile_post_processed_by_the_aivs(kernel, mode, aivs):
    a, b, _, y, _ = _run(kernel, mode)
    c = a.astype(np.float32) @ b.astype(np.float32)
    want = 2 * c + 1
    if aivs == 2:  # AIV1 took rows 16..31 and adds its GetSubBlockIdx()
        want[:, 16:] += 1
    np.testing.assert_array_equal(y, want)
    # per-core counters: the AIC multiplies, the AIVs copy; totals are their sums
    cores = kernel[1].last_block_counters
    names = ["AIC", "AIV0", "AIV1"][:1 + aivs]
    assert [(e["block"], e["core"]) for e in cores] == [(blk, n) for blk in range(BLOCKS) for n in names]
    for e in cores:
        progs = len(range(e["block"], TILES, BLOCKS))
        if e["core"] == "AIC":
            assert e["mmad_calls"] == progs and e["cube_ops"] == progs * 8 and e["datacopy_in_calls"] == 0
            assert e["cross_core_sets"] == progs and e["fixpipe_calls"] == progs
        else:
            assert e["mmad_calls"] == 0 and e["datacopy_in_calls"] == progs and e["datacopy_out_calls"] == progs
            assert e["datacopy_in_bytes"] == progs * 4096 // aivs and e["cross_core_sets"] == progs
    assert kernel[1].last_counters["datacopy_in_calls"] == sum(e["datacopy_in_calls"] for e in cores) == TILES * aivs
    assert kernel[1].last_counters["gm_write_bytes"] == sum(e["gm_write_bytes"] for e in cores)
    cube = dict(zip(L.CUBE_COUNTERS, _cube_counters(kernel[0])))
    assert cube["mmad_calls"] == TILES and cube["cross_core_sets"] == TILES * (1 + aivs)
    # the cost model groups a block's cores
    prof = cost.estimate(META, dict(kernel[1].last_counters), [dict(e) for e in cores], a.nbytes + b.nbytes + y.nbytes,
                         "910B3")
    assert prof.blocks == BLOCKS and prof.counters["mmad_calls"] == TILES and prof.estimate_us > 0


def _cube_counters(so) -> list:
    out = (ctypes.c_uint64 * len(L.CUBE_COUNTERS))()
    load_library(so, L.KIND).xblock_cube_counters(out, len(L.CUBE_COUNTERS))
    return list(out)


def test_count_only_mode(kernel, monkeypatch):
    monkeypatch.setenv("XBEMU_CUBE_COUNT_ONLY", "1")
    _run(kernel, 0)
    assert sum(e["cube_ops"] for e in kernel[1].last_block_counters) == TILES * 8


@pytest.mark.parametrize("mode, kind", [(2, "1:2"), (3, "1:1"), (4, "aiv")])
def test_block_and_sub_block_indices(kernel, mode, kind):
    *_, idx = _run(kernel, mode)
    got = sorted(tuple(int(v) for v in row[1:7]) for row in idx if row[0] == 1)
    # (GetBlockIdx, GetBlockNum, GetSubBlockIdx, GetSubBlockNum, ASCEND_IS_AIC, ASCEND_IS_AIV)
    if kind == "1:2":
        want = [(blk, BLOCKS, 0, 1, 1, 0) for blk in range(BLOCKS)] + \
               [(2 * blk + s, BLOCKS, s, 2, 0, 1) for blk in range(BLOCKS) for s in range(2)]
        cores = [(blk, n) for blk in range(BLOCKS) for n in ("AIC", "AIV0", "AIV1")]
    elif kind == "1:1":
        want = [(blk, BLOCKS, 0, 1, 1, 0) for blk in range(BLOCKS)] + [(blk, BLOCKS, 0, 1, 0, 1)
                                                                        for blk in range(BLOCKS)]
        cores = [(blk, n) for blk in range(BLOCKS) for n in ("AIC", "AIV0")]
    else:
        want = [(blk, BLOCKS, 0, 1, 0, 1) for blk in range(BLOCKS)]
        cores = [(blk, "AIV") for blk in range(BLOCKS)]
    assert got == sorted(want)
    assert [(e["block"], e["core"]) for e in kernel[1].last_block_counters] == cores


def test_wait_nobody_sets_is_a_deadlock(kernel):
    with pytest.raises(ExecutionError) as e:
        _run(kernel, 5)
    msg = str(e.value)
    assert "block 0: CrossCoreWaitFlag: deadlock: AIV0 waits for flag 5 [at kernel.cpp:" in msg, msg
    assert "AIV1 waits for flag 5 (kernel.cpp:" in msg and "AIC finished" in msg, msg


def test_aic_wait_needs_both_aivs(kernel):
    with pytest.raises(ExecutionError) as e:
        _run(kernel, 6)
    msg = str(e.value)
    assert "block 0: CrossCoreWaitFlag: deadlock: AIC waits for flag 2 [at kernel.cpp:" in msg, msg
    assert "AIV0 waits for flag 3" in msg and "AIV1 waits for flag 3" in msg, msg
    _run(kernel, 7)  # both AIVs set flag 2: the AIC's wait passes, then theirs
    assert [e["cross_core_sets"] for e in kernel[1].last_block_counters] == [1, 1, 1] * BLOCKS


def test_error_in_an_aiv_names_the_core(kernel):
    with pytest.raises(ExecutionError) as e:
        _run(kernel, 8)
    msg = str(e.value)
    assert "the AscendC model stopped the kernel: block 0 AIV1: DataCopy" in msg, msg
    assert "of 'ws'" in msg, msg
    test_aic_tile_post_processed_by_the_aivs(kernel, 0, 2)  # the next launch runs normally


def test_a_flag_orders_the_setters_copies_to_gm_only_when_set_after_them(kernel):
    _run(kernel, 9)
    with pytest.raises(ExecutionError) as e:
        _run(kernel, 10)
    msg = str(e.value)
    assert "block 0 AIC: DataCopy(GM->L1, Nd2NzParams): reads bytes of 'ws' that a copy to GM (MTE3) of " \
           "block 0 AIV0 may still be writing" in msg, msg


def test_mode_1_flags_meet_both_aivs(kernel):
    _run(kernel, 11)
    with pytest.raises(ExecutionError) as e:
        _run(kernel, 12)
    msg = str(e.value)
    assert "deadlock: AIV0 waits for flag 6 [at kernel.cpp:" in msg and "AIV1 waits for flag 6" in msg, msg


@pytest.mark.parametrize("mode, want", [
    (13, "block 0 AIV0: CrossCoreSetFlag: flag 8 was set 1 time(s) more than it was waited for at kernel exit"),
    (14, "block 0 AIV0: CrossCoreSetFlag: flag 7 (mode 2) was set 1 time(s) more than the other AIV set it"),
])
def test_flags_left_set_at_kernel_exit(kernel, mode, want):
    with pytest.raises(ExecutionError) as e:
        _run(kernel, mode)
    assert want in str(e.value), str(e.value)
