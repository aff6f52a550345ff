// Unit test of xblock's Cube-unit model (emu/cube.h): one correct 40x24x50 fp16 matmul through
// Nd2Nz -> LoadData -> Mmad -> Fixpipe checked against a plain loop, then planted violations, one
// per case name (argv[1]); each must stop with an error naming the API call. Prints "ok" or the error.
// A host program around a kernel: the model's CPU-debug build (host library usable after the model).
#define ASCENDC_CPU_DEBUG 1
#include <cstdio>
#include <string>
#include <vector>

#include "kernel_operator.h"

using namespace AscendC;

static std::vector<half> A, B;
static std::vector<float> C;

static void setup() {
    xbemu::State& s = xbemu::st();
    s.regions.clear();
    s.regions.push_back({reinterpret_cast<uint8_t*>(A.data()), A.size() * sizeof(half), "a"});
    s.regions.push_back({reinterpret_cast<uint8_t*>(B.data()), B.size() * sizeof(half), "b"});
    s.regions.push_back({reinterpret_cast<uint8_t*>(C.data()), C.size() * sizeof(float), "c"});
    xbemu::begin_block(0, 1);
}

// C[M x N] = A[M x K] B[K x N], one 48 x 32 x 64 tile (M=40, N=24, K=50 valid).
static void kernel(const std::string& plant) {
    const int M = 40, N = 24, K = 50, BM = 48, BN = 32, BK = 64;
    TPipe pipe;
    // a planted "no kernel type" is modelled by an invalid type (the macro declares a scoped object)
    KERNEL_TASK_TYPE_DEFAULT(plant == "no_kernel_type" ? -1 : KERNEL_TYPE_MIX_AIC_1_1);
    GlobalTensor<half> aGm, bGm;
    GlobalTensor<float> cGm;
    aGm.SetGlobalBuffer((__gm__ half*)A.data());
    bGm.SetGlobalBuffer((__gm__ half*)B.data());
    cGm.SetGlobalBuffer((__gm__ float*)C.data());
    TQue<TPosition::A1, 1> qA1;
    TQue<TPosition::B1, 1> qB1;
    TQue<TPosition::A2, 1> qA2;
    TQue<TPosition::B2, 1> qB2;
    TQue<TPosition::CO1, 1> qC;
    pipe.InitBuffer(qA1, 1, plant == "l1_overflow" ? 600 * 1024 : BM * BK * 2);
    pipe.InitBuffer(qB1, 1, BK * BN * 2);
    pipe.InitBuffer(qA2, 1, BM * BK * 2);
    pipe.InitBuffer(qB2, 1, BK * BN * 2);
    pipe.InitBuffer(qC, 1, BM * BN * 4);
    if (ASCEND_IS_AIC) {
        LocalTensor<half> a1 = qA1.AllocTensor<half>();
        DataCopy(a1, aGm, Nd2NzParams(1, M, K, 0, K, plant == "nd2nz_overlap" ? 8 : BM, 1, 0));
        qA1.EnQue(a1);
        LocalTensor<half> b1 = qB1.AllocTensor<half>();
        DataCopy(b1, bGm, Nd2NzParams(1, K, N, 0, N, BK, 1, 0));
        qB1.EnQue(b1);
        if (plant != "load_before_deque") a1 = qA1.DeQue<half>();
        b1 = qB1.DeQue<half>();
        const int mf = BM / 16, nf = BN / 16, kf = (K + 15) / 16;
        LocalTensor<half> a2 = qA2.AllocTensor<half>();
        for (int i = 0; i < mf; i++) {
            int off = i * kf * 256 + (plant == "l0a_misaligned" ? 8 : 0);
            LoadData(a2[off], a1, LoadData2DParams(i, plant == "load_past_end" ? 200 : kf, mf, 0, 0, false, 0));
        }
        qA2.EnQue(a2);
        LocalTensor<half> b2 = qB2.AllocTensor<half>();
        for (int j = 0; j < kf; j++) LoadData(b2[j * nf * 256], b1, LoadData2DParams(j, nf, BK / 16, 0, 0, true, 0));
        qB2.EnQue(b2);
        a2 = qA2.DeQue<half>();
        b2 = qB2.DeQue<half>();
        LocalTensor<float> c1 = qC.AllocTensor<float>();
        if (plant == "mmad_from_l1")
            Mmad(c1, a1, b2, MmadParams(BM, BN, K, 0, false, true));
        Mmad(c1, a2, b2, MmadParams(plant == "mmad_m_range" ? 5000 : BM, BN, K, 0, false, true));
        qA2.FreeTensor(a2);
        qB2.FreeTensor(b2);
        qA1.FreeTensor(a1);
        qB1.FreeTensor(b1);
        qC.EnQue(c1);
        c1 = qC.DeQue<float>();
        FixpipeParamsV220 p;
        p.nSize = N;
        p.mSize = M;
        p.srcStride = BM;
        p.dstStride = N;
        if (plant == "fixpipe_quant") p.quantPre = QuantMode_t::F322F16;
        if (plant == "fixpipe_gm_overflow") p.dstStride = N + 1;
        Fixpipe(cGm, c1, p);
        qC.FreeTensor(c1);
        if (plant == "unpaired_set") CrossCoreSetFlag<2, PIPE_FIX>(3);
        CrossCoreSetFlag<2, PIPE_FIX>(3);
        CrossCoreSetFlag<2, PIPE_FIX>(3);
    }
    if (ASCEND_IS_AIV) {
        CrossCoreWaitFlag(3);
        if (plant == "wait_never_set") CrossCoreWaitFlag(4);
        CrossCoreWaitFlag(3);
    }
}

int main(int argc, char** argv) {
    std::string plant = argc > 1 ? argv[1] : "";
    const int M = 40, N = 24, K = 50;
    A.resize(M * K);
    B.resize(K * N);
    C.assign(M * N, -1.0f);
    for (int i = 0; i < M * K; i++) A[i] = static_cast<half>(((i * 7) % 13 - 6) / 8.0f);
    for (int i = 0; i < K * N; i++) B[i] = static_cast<half>(((i * 5) % 11 - 5) / 4.0f);
    setup();
    try {
        kernel(plant);
    } catch (const std::exception& e) {
        std::printf("error: %s\n", e.what());
        return 0;
    }
    double worst = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double ref = 0;
            for (int k = 0; k < K; k++) ref += double(float(A[i * K + k])) * double(float(B[k * N + j]));
            worst = std::max(worst, std::abs(ref - C[i * N + j]));
        }
    uint64_t cnt[11];
    xblock_cube_counters(cnt, 11);
    std::printf("ok maxerr=%g cube_ops=%llu gm_to_l1=%llu l0c_to_gm=%llu peak_l1=%llu\n", worst,
                (unsigned long long)cnt[0], (unsigned long long)cnt[2], (unsigned long long)cnt[5],
                (unsigned long long)cnt[7]);
    return 0;
}
