// Unit test of LoadDataWithTranspose in xblock's Cube-unit model (emu/cube.h), checked against the squares
// asc-devkit's LoadDataWithTranspose page describes: b32 joins two consecutive 16 x 8 fractals (left, right)
// into a 16 x 16 square, b8 two consecutive 16 x 32 fractals (top, bottom) into a 32 x 32 square; each
// square is transposed and split into 512-byte fractals again, dstFracGap fractals apart. argv[1]: "" (the
// checks) or a planted misuse ("overlap", "addr_mode", "misaligned"). Prints "ok" or the error.
#define ASCENDC_CPU_DEBUG 1
#include <cstdio>
#include <string>
#include <vector>

#include "kernel_operator.h"

using namespace AscendC;

// the transposed square's element (r, c) for b32: r, c < 16; the square's (c, r) is fractal c / 8, row r, col c % 8
static float b32_expect(const float* src, int square, int r, int c) {
    return src[square * 256 + (r / 8) * 128 + c * 8 + r % 8];
}

template <typename T>
static int check(const std::string& plant) {
    TPipe pipe;
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
    TQue<TPosition::B1, 1> q1;
    TQue<TPosition::B2, 1> q2;
    pipe.InitBuffer(q1, 1, 4096);
    pipe.InitBuffer(q2, 1, 4096);
    int bad = 0;
    if (ASCEND_IS_AIC) {
        LocalTensor<T> s = q1.AllocTensor<T>();
        const int n = 4096 / sizeof(T);
        for (int i = 0; i < n; i++) s.ptr_[i] = static_cast<T>(sizeof(T) == 1 ? (i * 7) % 251 - 125 : i);  // L1: no scalar API
        q1.EnQue(s);
        s = q1.DeQue<T>();
        LocalTensor<T> d = q2.AllocTensor<T>();
        // two squares (4 fractals), the second one's fractals 3 apart from the first: dst slots 0, 3 | 1, 4
        uint16_t frac_gap = plant == "overlap" ? 0 : 2, gap = 0;
        LoadDataWithTranspose(d[plant == "misaligned" ? 8 : 0], s,
                              LoadData2dTransposeParams(1, 2, 1, gap, frac_gap, plant == "addr_mode" ? 1 : 0));
        const int F = 512 / sizeof(T);
        for (int r = 0; r < 2; r++)
            for (int j = 0; j < 2; j++)
                for (int row = 0; row < 16; row++)
                    for (int c = 0; c < F / 16; c++) {
                        T got = d.ptr_[(r + 3 * j) * F + row * (F / 16) + c];
                        T want;
                        if (sizeof(T) == 4) {  // fractal j holds columns 8j..8j+7 of the transposed 16 x 16 square
                            want = static_cast<T>(b32_expect(reinterpret_cast<const float*>(s.ptr_), 1 + r, row, 8 * j + c));
                        } else {  // fractal j holds rows 16j..16j+15 of the transposed 32 x 32 square
                            int tr = 16 * j + row, tc = c;  // transposed (tr, tc) = square (tc, tr): row tc, column tr
                            want = s.ptr_[(1 + r) * 1024 + tc * 32 + tr];
                        }
                        if (got != want) bad++;
                    }
        q2.EnQue(d);
        d = q2.DeQue<T>();
        q1.FreeTensor(s);
        q2.FreeTensor(d);
    }
    return bad;
}

int main(int argc, char** argv) {
    std::string plant = argc > 1 ? argv[1] : "";
    try {
        xbemu::begin_block(0, 1);
        int bad32 = check<float>(plant);
        xbemu::begin_block(0, 1);
        int bad8 = check<int8_t>(plant);
        std::printf("ok bad32=%d bad8=%d\n", bad32, bad8);
    } catch (const std::exception& e) {
        std::printf("error: %s\n", e.what());
    }
    return 0;
}
