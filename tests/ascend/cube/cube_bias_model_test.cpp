// Unit test of the BiasTable side of xblock's Cube-unit model (emu/cube.h): one 40x24x50 fp16 matmul
// whose accumulator starts at an fp32 bias row, GM -> L1 (C1, Nd2Nz) -> BiasTable (C2) -> Mmad with
// the bias -> Fixpipe, checked against a plain loop; then planted misuses of C2, one per case name
// (argv[1]), each of which must stop with an error naming the API call. Prints "ok ..." or the error.
#define ASCENDC_CPU_DEBUG 1
#include <cstdio>
#include <string>
#include <vector>

#include "kernel_operator.h"

using namespace AscendC;

static std::vector<half> A, B;
static std::vector<float> Bias, C;

static void setup() {
    xbemu::State& s = xbemu::st();
    s.regions.clear();
    s.regions.push_back({reinterpret_cast<uint8_t*>(A.data()), A.size() * sizeof(half), "a"});
    s.regions.push_back({reinterpret_cast<uint8_t*>(B.data()), B.size() * sizeof(half), "b"});
    s.regions.push_back({reinterpret_cast<uint8_t*>(Bias.data()), Bias.size() * sizeof(float), "bias"});
    s.regions.push_back({reinterpret_cast<uint8_t*>(C.data()), C.size() * sizeof(float), "c"});
    xbemu::begin_block(0, 1);
}

static void kernel(const std::string& plant) {
    const int M = 40, N = 24, K = 50, BM = 48, BN = 32, BK = 64;
    TPipe pipe;
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
    GlobalTensor<half> aGm, bGm;
    GlobalTensor<float> biasGm, cGm;
    aGm.SetGlobalBuffer((__gm__ half*)A.data());
    bGm.SetGlobalBuffer((__gm__ half*)B.data());
    biasGm.SetGlobalBuffer((__gm__ float*)Bias.data());
    cGm.SetGlobalBuffer((__gm__ float*)C.data());
    TQue<TPosition::A1, 1> qA1;
    TQue<TPosition::B1, 1> qB1;
    TQue<TPosition::C1, 1> qBias1;
    TQue<TPosition::A2, 1> qA2;
    TQue<TPosition::B2, 1> qB2;
    TQue<TPosition::C2, 1> qBias2;
    TQue<TPosition::CO1, 1> qC;
    pipe.InitBuffer(qA1, 1, BM * BK * 2);
    pipe.InitBuffer(qB1, 1, BK * BN * 2);
    pipe.InitBuffer(qBias1, 1, 2048);
    pipe.InitBuffer(qA2, 1, BM * BK * 2);
    pipe.InitBuffer(qB2, 1, BK * BN * 2);
    pipe.InitBuffer(qBias2, 1, plant == "table_overflow" ? 2048 : BN * 4);
    pipe.InitBuffer(qC, 1, BM * BN * 4);
    // the bias row: GM -> L1 (one row, zero-padded to 32 B) -> BiasTable (blockLen in 64 B)
    LocalTensor<float> bias1 = qBias1.AllocTensor<float>();
    DataCopy(bias1, biasGm, Nd2NzParams(1, 1, N, 0, N, 1, 1, 0));
    qBias1.EnQue(bias1);
    bias1 = qBias1.DeQue<float>();
    LocalTensor<float> bias2 = qBias2.AllocTensor<float>();
    const uint16_t blockLen = plant == "copy_too_long" ? 17 : BN * 4 / 64;
    if (plant == "copy_to_l1")
        DataCopy(bias1[64], bias1, DataCopyParams(1, blockLen, 0, 0));
    DataCopy(plant == "copy_misaligned" ? bias2[8] : bias2, bias1, DataCopyParams(1, blockLen, 0, 0));
    qBias2.EnQue(bias2);
    bias2 = qBias2.DeQue<float>();
    LocalTensor<half> a1 = qA1.AllocTensor<half>();
    DataCopy(a1, aGm, Nd2NzParams(1, M, K, 0, K, BM, 1, 0));
    qA1.EnQue(a1);
    LocalTensor<half> b1 = qB1.AllocTensor<half>();
    DataCopy(b1, bGm, Nd2NzParams(1, K, N, 0, N, BK, 1, 0));
    qB1.EnQue(b1);
    a1 = qA1.DeQue<half>();
    b1 = qB1.DeQue<half>();
    const int mf = BM / 16, nf = BN / 16, kf = (K + 15) / 16;
    LocalTensor<half> a2 = qA2.AllocTensor<half>();
    for (int i = 0; i < mf; i++) LoadData(a2[i * kf * 256], a1, LoadData2DParams(i, kf, mf, 0, 0, false, 0));
    qA2.EnQue(a2);
    LocalTensor<half> b2 = qB2.AllocTensor<half>();
    for (int j = 0; j < kf; j++) LoadData(b2[j * nf * 256], b1, LoadData2DParams(j, nf, BK / 16, 0, 0, true, 0));
    qB2.EnQue(b2);
    a2 = qA2.DeQue<half>();
    b2 = qB2.DeQue<half>();
    LocalTensor<float> c1 = qC.AllocTensor<float>();
    Mmad(c1, a2, b2, plant == "bias_in_l1" ? bias1 : bias2,
         MmadParams(BM, BN, K, 0, false, plant == "init_zero" ? true : false));
    qBias1.FreeTensor(bias1);
    qBias2.FreeTensor(bias2);
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
    Fixpipe(cGm, c1, p);
    qC.FreeTensor(c1);
}

int main(int argc, char** argv) {
    std::string plant = argc > 1 ? argv[1] : "";
    const int M = 40, N = 24, K = 50;
    A.resize(M * K);
    B.resize(K * N);
    Bias.resize(N);
    C.assign(M * N, -1.0f);
    for (int i = 0; i < M * K; i++) A[i] = static_cast<half>(((i * 7) % 13 - 6) / 8.0f);
    for (int i = 0; i < K * N; i++) B[i] = static_cast<half>(((i * 5) % 11 - 5) / 4.0f);
    for (int j = 0; j < N; j++) Bias[j] = 100.0f * j - 1000.0f;
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
            double ref = Bias[j];
            for (int k = 0; k < K; k++) ref += double(float(A[i * K + k])) * double(float(B[k * N + j]));
            worst = std::max(worst, std::abs(ref - C[i * N + j]));
        }
    const xbemu::cube::Counters& c = xbemu::cube::cs().c;
    std::printf("ok maxerr=%g l1_to_bt=%llu bias_mmad_calls=%llu peak_bt=%llu\n", worst,
                (unsigned long long)c.l1_to_bt, (unsigned long long)c.bias_mmad_calls,
                (unsigned long long)c.peak[xbemu::cube::BT]);
    return 0;
}
