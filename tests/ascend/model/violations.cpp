// Planted violations of the AscendC rules, one scenario each: xblock's AscendC model must stop each
// with an error that names the API call (tests/ascend/model/test_emulator.py). "ok" follows the rules.
#include <cstring>
#include <string>

#include "emu_launch.h"

using namespace AscendC;

static float gmData[256];

static void Scenario(const std::string& s) {
    TPipe pipe;
    GlobalTensor<float> xGm;
    xGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(gmData));
    if (s == "ok") xGm.SetL2CacheHint(CacheMode::CACHE_MODE_DISABLE);  // reads kept out of L2: allowed on A2
    if (s == "l2_hint_mode") {
        xGm.SetL2CacheHint(CacheMode::CACHE_MODE_PERSISTENT);  // announced for 950 only
        return;
    }
    if (s == "ub_overflow") {
        TBuf<TPosition::VECCALC> big;
        pipe.InitBuffer(big, 200 * 1024);
        return;
    }
    if (s == "too_many_queue_buffers") {
        TQue<TPosition::VECIN, 1> q0, q1, q2, q3, q4;
        pipe.InitBuffer(q0, 2, 256);
        pipe.InitBuffer(q1, 2, 256);
        pipe.InitBuffer(q2, 2, 256);
        pipe.InitBuffer(q3, 2, 256);
        pipe.InitBuffer(q4, 2, 256);
        // each buffer freed once holds an id of V_MTE2 until its next AllocTensor: the 9th has none
        for (TQue<TPosition::VECIN, 1>* q : {&q0, &q1, &q2, &q3, &q4}) {
            LocalTensor<float> a = q->AllocTensor<float>(), b = q->AllocTensor<float>();
            q->EnQue(a);
            a = q->DeQue<float>();
            q->EnQue(b);
            b = q->DeQue<float>();
            q->FreeTensor(a);
            q->FreeTensor(b);
        }
        return;
    }
    TQue<TPosition::VECIN, 1> inQ;
    pipe.InitBuffer(inQ, 1, 1024);
    TQue<TPosition::VECOUT, 1> outQ;
    pipe.InitBuffer(outQ, 1, 1024);
    TBuf<TPosition::VECCALC> calc;
    pipe.InitBuffer(calc, 4096);
    LocalTensor<float> t = calc.Get<float>();
    if (s == "ok") {
        LocalTensor<float> xIn = inQ.AllocTensor<float>();
        DataCopyPad(xIn, xGm, DataCopyExtParams(1, 100 * 4, 0, 0, 0), DataCopyPadExtParams<float>(true, 0, 4, 0.0f));
        inQ.EnQue(xIn);
        LocalTensor<float> x = inQ.DeQue<float>();
        LocalTensor<float> y = outQ.AllocTensor<float>();
        Muls(y, x, 2.0f, 104);
        inQ.FreeTensor(x);
        outQ.EnQue(y);
        LocalTensor<float> yOut = outQ.DeQue<float>();
        DataCopyPad(xGm, yOut, DataCopyExtParams(1, 100 * 4, 0, 0, 0));
        outQ.FreeTensor(yOut);
        Duplicate(t, 1.0f, 64);
        event_t e = static_cast<event_t>(pipe.FetchEventID(HardEvent::V_S));
        SetFlag<HardEvent::V_S>(e);
        WaitFlag<HardEvent::V_S>(e);
        (void)t.GetValue(0);
    } else if (s == "datacopy_rounds_down") {
        LocalTensor<float> x = inQ.AllocTensor<float>();
        DataCopy(x, xGm, 100);  // 400 B: not whole 32-byte blocks
    } else if (s == "misaligned") {
        Add(t[1], t[1], t[1], 8);
    } else if (s == "deque_empty") {
        inQ.DeQue<float>();
    } else if (s == "free_before_deque") {
        LocalTensor<float> x = inQ.AllocTensor<float>();
        inQ.FreeTensor(x);
    } else if (s == "alloc_exhausted") {
        inQ.AllocTensor<float>();
        inQ.AllocTensor<float>();
    } else if (s == "use_after_free") {
        LocalTensor<float> x = inQ.AllocTensor<float>();
        inQ.EnQue(x);
        LocalTensor<float> y = inQ.DeQue<float>();
        inQ.FreeTensor(y);
        Adds(t, y, 1.0f, 64);
    } else if (s == "compute_before_deque") {
        LocalTensor<float> x = inQ.AllocTensor<float>();
        DataCopy(x, xGm, 64);
        Adds(t, x, 1.0f, 64);
    } else if (s == "unpaired_set") {
        SetFlag<HardEvent::V_S>(0);
    } else if (s == "unpaired_wait") {
        WaitFlag<HardEvent::V_S>(0);
    } else if (s == "missing_sync") {
        Duplicate(t, 1.0f, 64);
        (void)t.GetValue(0);
    } else if (s == "repeat_out_of_range") {
        ReduceSum(t, t, t[512], 64, 300, 8);
    } else if (s == "mask_out_of_range") {
        Duplicate(t, 1.0f, 100, 1, 1, 8);
    } else if (s == "gm_out_of_bounds") {
        LocalTensor<float> x = inQ.AllocTensor<float>();
        DataCopy(x, xGm[200], 64);
    } else if (s == "compare_count") {
        CompareScalar(t.ReinterpretCast<uint8_t>(), t, 0.0f, CMPMODE::LT, 8);
    } else if (s == "cast_round_mode") {
        Cast(t.ReinterpretCast<int32_t>(), t, RoundMode::CAST_NONE, 64);
    }
}

extern "C" int run_scenario(const char* name, char* err, int errlen) {
    uint8_t* bufs[1] = {reinterpret_cast<uint8_t*>(gmData)};
    uint64_t sizes[1] = {sizeof(gmData)};
    const char* names[1] = {"x"};
    uint32_t soc[3] = {192 * 1024, 184 * 1024, 1};
    uint64_t counters[6];
    std::string s = name;
    return xbemu::run(1, bufs, sizes, names, 1, soc, err, errlen, counters, [&]() { Scenario(s); });
}
