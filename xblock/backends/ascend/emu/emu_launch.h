// Launch support for xblock's AscendC CPU model: runs the blocks of one launch one after another
// on host buffers, turns every model error into a message, and reports the counters.
//
// Included before kernel_operator.h, it makes the translation unit a host program that embeds a
// kernel (a test), the counterpart of CANN's CPU-debug build: the host library stays usable.
// kernel_operator.h itself includes it (before poisoning the host names), so generated kernels
// and the launch shim see it too.
#pragma once

#ifndef XBEMU_KERNEL_OPERATOR_H
#define XBEMU_CPU_DEBUG 1
#endif

#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "kernel_operator.h"

namespace xbemu {

// Per-block counters of the last launch, kBlockCounters values per block in this order (the cost
// model, backends/ascend/cost.py, takes the busiest core): GM bytes read and written, vector
// instructions and repeats, scalar UB and GM accesses, GM->UB and UB->GM DataCopy calls and bytes,
// then the Cube unit's: 16x16x16 cube ops, Mmad calls, GM->L1 bytes and calls, L1->L0A/L0B bytes,
// LoadData calls, L0C->GM bytes, Fixpipe calls, cross-core flag sets.
constexpr int kBlockCounters = 19;

inline std::vector<uint64_t>& block_counters() {
    static std::vector<uint64_t> v;
    return v;
}

inline void counter_snapshot(uint64_t* v) {
    const State& s = st();
    const cube::Counters& c = cube::cs().c;
    const uint64_t all[kBlockCounters] = {s.gm_read, s.gm_write, s.vec_instrs, s.vec_repeats, s.scalar_ub,
                                          s.scalar_gm, s.dc_in, s.dc_out, s.dc_in_bytes, s.dc_out_bytes,
                                          c.cube_ops, c.mmad_calls, c.gm_to_l1, c.gm_to_l1_calls,
                                          c.l1_to_l0a + c.l1_to_l0b, c.load_data_calls, c.l0c_to_gm,
                                          c.fixpipe_calls, c.cross_core_sets};
    for (int i = 0; i < kBlockCounters; i++) v[i] = all[i];
}

// soc = {ub_total, ub_usable, has_pad}; counters = {gm_read, gm_write, vec_instrs, vec_repeats,
// scalar_ub, scalar_gm}; hosts (may be null) = where the caller's array of each buffer lives, for the
// addresses a kernel reads from pointer tables (gm_address). Returns 0, or 1 with the message in err.
template <typename F>
inline int run(int64_t block_dim, uint8_t** bufs, const uint64_t* sizes, const char* const* names, int nbufs,
               const uint64_t* hosts, const uint32_t* soc, char* err, int errlen, uint64_t* counters, F kernel) {
    State& s = st();
    s.ub_total = soc[0];
    s.ub_usable = soc[1];
    s.has_pad = soc[2] != 0;
    s.regions.clear();
    for (int i = 0; i < nbufs; i++) {
        const uint8_t* host = hosts ? reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(hosts[i])) : nullptr;
        s.regions.push_back(Region{bufs[i], sizes[i], names[i], host});
    }
    s.gm_read = s.gm_write = s.vec_instrs = s.vec_repeats = s.scalar_ub = s.scalar_gm = 0;
    s.dc_in = s.dc_out = s.dc_in_bytes = s.dc_out_bytes = 0;
    cube::cs().c = cube::Counters();  // block 0 resets them too (cube.h KernelScope)
    std::vector<uint64_t>& per_block = block_counters();
    per_block.assign(static_cast<size_t>(block_dim) * kBlockCounters, 0);
    uint64_t before[kBlockCounters], after[kBlockCounters];
    int rc = 0;
    int64_t b = 0;
    try {
        for (b = 0; b < block_dim; b++) {
            counter_snapshot(before);
            begin_block(b, block_dim);
            kernel();
            end_block();
            counter_snapshot(after);
            for (int i = 0; i < kBlockCounters; i++) per_block[b * kBlockCounters + i] = after[i] - before[i];
        }
    } catch (const std::exception& e) {
        std::string msg = "block " + std::to_string(b) + ": " + e.what();
        std::strncpy(err, msg.c_str(), static_cast<size_t>(errlen) - 1);
        err[errlen - 1] = 0;
        rc = 1;
    }
    counters[0] = s.gm_read;
    counters[1] = s.gm_write;
    counters[2] = s.vec_instrs;
    counters[3] = s.vec_repeats;
    counters[4] = s.scalar_ub;
    counters[5] = s.scalar_gm;
    return rc;
}

// Buffers without caller arrays (a test's, the export's device buffers): no address translation.
template <typename F>
inline int run(int64_t block_dim, uint8_t** bufs, const uint64_t* sizes, const char* const* names, int nbufs,
               const uint32_t* soc, char* err, int errlen, uint64_t* counters, F kernel) {
    return run(block_dim, bufs, sizes, names, nbufs, nullptr, soc, err, errlen, counters, kernel);
}

}  // namespace xbemu

// The per-block counters of the last launch (xbemu::block_counters): copies up to n values into out
// and returns how many there are. Weak: several launch translation units may define it.
extern "C" __attribute__((weak)) int64_t xblock_emu_block_counters(uint64_t* out, int64_t n) {
    const std::vector<uint64_t>& v = xbemu::block_counters();
    for (int64_t i = 0; i < n && i < static_cast<int64_t>(v.size()); i++) out[i] = v[i];
    return static_cast<int64_t>(v.size());
}
