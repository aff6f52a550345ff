// Parameter-struct fields out of their documented ranges, and overuse of the pipe's event-id pool:
// one planted case each, which xblock's AscendC model must refuse (tests/ascend/model/test_param_ranges.py).
// "ok" uses every struct inside its range and fills the M_MTE1 pool exactly.
#include <cstring>
#include <string>

#include "emu_launch.h"

using namespace AscendC;

static float gmData[4096];
static half gmHalf[8192];

// Vector-core cases: GM <-> UB copies, mask/repeat forms, SetFlag/WaitFlag and the pool's V_MTE2 ids.
static void Vector(const std::string& s) {
    TPipe pipe;
    GlobalTensor<float> xGm;
    xGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(gmData), 4096);
    TQue<TPosition::VECIN, 1> inQ;
    pipe.InitBuffer(inQ, 1, 4096);
    TBuf<TPosition::VECCALC> calc;
    pipe.InitBuffer(calc, 8192);
    LocalTensor<float> t = calc.Get<float>();
    if (s == "datacopy_block_count") DataCopy(t, xGm, DataCopyParams(5000, 1, 0, 0));
    if (s == "datacopy_block_len") DataCopy(xGm, t, DataCopyParams(1, 70000, 0, 0));
    if (s == "datacopypad_block_len") DataCopyPad(xGm, t, DataCopyExtParams(1, 3000000, 0, 0, 0));
    if (s == "datacopypad_src_stride") {
        DataCopyExtParams p(2, 64, 0, 0, 0);
        p.srcStride = int64_t(1) << 32;  // a uint32_t field would hold 0
        DataCopyPad(t, xGm, p, DataCopyPadExtParams<float>(false, 0, 0, 0.0f));
    }
    if (s == "binary_rep_stride") Add(t, t, t, 64, 1, BinaryRepeatParams(1, 1, 1, 300, 8, 8));
    if (s == "brcb_stride") Brcb(t[2048], t, 1, BrcbRepeatParams(1, 70000));
    if (s == "copy_stride") Copy(t[1024], t, 64, 1, CopyRepeatParams(1, 1, 70000, 8));
    if (s == "event_id") SetFlag<HardEvent::V_S>(9);
    if (s == "alloc_ninth_id")
        for (int i = 0; i < 9; i++) pipe.AllocEventID<HardEvent::V_S>();
    if (s == "release_not_taken") pipe.ReleaseEventID<HardEvent::V_S>(3);
    if (s == "set_queue_id") {  // the queue set MTE2_V id 0 at EnQue and waits for it at DeQue
        LocalTensor<float> a = inQ.AllocTensor<float>();
        inQ.EnQue(a);
        SetFlag<HardEvent::MTE2_V>(0);
    }
    if (s == "queue_takes_pending_id") {  // FetchEventID reserves nothing: FreeTensor takes the same id
        LocalTensor<float> a = inQ.AllocTensor<float>();
        inQ.EnQue(a);
        a = inQ.DeQue<float>();
        event_t e = static_cast<event_t>(pipe.FetchEventID(HardEvent::V_MTE2));
        SetFlag<HardEvent::V_MTE2>(e);
        inQ.FreeTensor(a);
    }
    if (s == "fetch_none_free") {
        for (int i = 0; i < 8; i++) pipe.AllocEventID<HardEvent::S_V>();
        pipe.FetchEventID(HardEvent::S_V);
    }
    if (s == "ok") {
        DataCopy(t, xGm, DataCopyParams(4, 8, 0, 0));
        PipeBarrier<PIPE_ALL>();
        DataCopyPad(xGm, t, DataCopyExtParams(4, 256, 0, 0, 0));
        PipeBarrier<PIPE_ALL>();
        Add(t, t, t, 64, 2, BinaryRepeatParams(1, 1, 1, 8, 8, 8));
        TEventID ids[8];
        for (TEventID& id : ids) id = pipe.AllocEventID<HardEvent::V_S>();  // all 8: none is held by the pipe
        for (TEventID id : ids) pipe.ReleaseEventID<HardEvent::V_S>(id);
        event_t e = static_cast<event_t>(pipe.FetchEventID(HardEvent::V_S));
        SetFlag<HardEvent::V_S>(e);
        WaitFlag<HardEvent::V_S>(e);
    }
}

// Cube cases: an AIC kernel (run directly: one "fused" core), its queues' M_MTE1 ids and the cube structs.
static void Cube(const std::string& s) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
    TPipe pipe;
    GlobalTensor<half> aGm;
    aGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(gmHalf), 8192);
    GlobalTensor<float> cGm;
    cGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(gmData), 4096);
    const bool bias3 = s == "l0_queues_ninth_m_mte1";  // 3 buffers in A2: 3 (pipe) + 3 + 2 + 1 > 8
    TQue<TPosition::A1, 1> qA1;
    pipe.InitBuffer(qA1, 1, 16 * 32 * 2);
    TQue<TPosition::A2, 1> qA2;
    pipe.InitBuffer(qA2, bias3 ? 3 : 2, 512);
    TQue<TPosition::B2, 1> qB2;
    pipe.InitBuffer(qB2, 2, 512);
    TQue<TPosition::C2, 1> qC2;
    pipe.InitBuffer(qC2, 1, 64);
    TQue<TPosition::CO1, 1> qCO1;
    pipe.InitBuffer(qCO1, 1, 1024);
    LocalTensor<half> a1 = qA1.AllocTensor<half>();
    uint32_t stride = s == "nd2nz_src_d_value" ? 131072 : 32;
    DataCopy(a1, aGm, Nd2NzParams(1, s == "nd2nz_n_value" ? 20000 : 16, 16, 0, stride, 16, 1, 0));
    qA1.EnQue(a1);
    a1 = qA1.DeQue<half>();
    // every L0A/L0B/C2 buffer used and freed once: each then holds an M_MTE1 id until its next AllocTensor
    const int na2 = bias3 ? 3 : 2;
    LocalTensor<half> a2s[3];
    for (int i = 0; i < na2; i++) a2s[i] = qA2.AllocTensor<half>();
    for (int i = 0; i < na2; i++) {
        LoadData(a2s[i], a1, LoadData2DParams(0, s == "load_data_repeat" ? 300 : 1, 0, 0, 0, false, 0));
        qA2.EnQue(a2s[i]);
        a2s[i] = qA2.DeQue<half>();
    }
    for (int i = 0; i < na2; i++) qA2.FreeTensor(a2s[i]);
    LocalTensor<half> b2a = qB2.AllocTensor<half>(), b2b = qB2.AllocTensor<half>();
    if (s == "load_transpose_start") LoadDataWithTranspose(b2a, a1, LoadData2dTransposeParams(70000, 1, 0, 0, 0));
    LoadData(b2a, a1, LoadData2DParams(0, 1, 0, 0, 0, true, 0));
    LoadData(b2b, a1, LoadData2DParams(0, 1, 0, 0, 0, true, 0));
    qB2.EnQue(b2a);
    b2a = qB2.DeQue<half>();
    qB2.EnQue(b2b);
    b2b = qB2.DeQue<half>();
    LocalTensor<half> a2 = qA2.AllocTensor<half>();
    LoadData(a2, a1, LoadData2DParams(0, 1, 0, 0, 0, false, 0));
    qA2.EnQue(a2);
    a2 = qA2.DeQue<half>();
    LocalTensor<float> c1 = qCO1.AllocTensor<float>();
    Mmad(c1, a2, b2a, MmadParams(16, 16, s == "mmad_k" ? 5000 : 16, 0, false, true));
    qA2.FreeTensor(a2);
    qB2.FreeTensor(b2a);
    qB2.FreeTensor(b2b);
    LocalTensor<float> bt = qC2.AllocTensor<float>();
    qC2.EnQue(bt);
    bt = qC2.DeQue<float>();
    qC2.FreeTensor(bt);  // the 8th M_MTE1 id (3 of the pipe, 2 A2, 2 B2, 1 C2)
    qA1.FreeTensor(a1);
    qCO1.EnQue(c1);
    c1 = qCO1.DeQue<float>();
    FixpipeParamsV220 p{};
    p.nSize = 16;
    p.mSize = s == "fixpipe_m_size" ? 9000 : 16;
    p.srcStride = 16;
    p.dstStride = s == "fixpipe_dst_stride" ? 0 : 16;
    Fixpipe(cGm, c1, p);
    qCO1.FreeTensor(c1);
    if (s == "cross_core_flag") CrossCoreSetFlag<2, PIPE_FIX>(70000 + 3);
}

extern "C" int run_scenario(const char* name, char* err, int errlen) {
    std::string s = name;
    try {
        xbemu::State& st = xbemu::st();
        st.regions.clear();
        st.regions.push_back({reinterpret_cast<uint8_t*>(gmData), sizeof gmData, "x"});
        st.regions.push_back({reinterpret_cast<uint8_t*>(gmHalf), sizeof gmHalf, "a"});
        xbemu::begin_block(0, 1);
        if (s.rfind("v:", 0) == 0)
            Vector(s.substr(2));
        else
            Cube(s.substr(2));
        xbemu::end_block();
    } catch (const std::exception& e) {
        std::strncpy(err, e.what(), errlen - 1);
        err[errlen - 1] = 0;
        return 1;
    }
    return 0;
}
