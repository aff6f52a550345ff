// Launch support for xblock's AscendC CPU model: runs the blocks of one launch one after another
// on host buffers (the cores of a mixed kernel's block as cooperative contexts, cube.h), turns
// every model error into a message, and reports the counters.
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

// Per-core counters of the last launch: one entry per model core (a block of a mixed kernel has one
// for its AIC and one per AIV; other blocks one), kCoreEntry values each: the block, the core (0 the
// one core of a vector kernel, "AIV"; 1 an AIC, of a cube-only or mixed kernel; 2, 3 a mixed kernel's
// AIV0, AIV1), then kBlockCounters counters in this order (the cost model, backends/ascend/model/cost.py,
// takes the busiest block): GM bytes read and written, vector instructions and repeats, scalar UB
// and GM accesses, GM->UB and UB->GM DataCopy calls and bytes, then the Cube unit's: 16x16x16 cube
// ops, Mmad calls, GM->L1 bytes and calls, L1->L0A bytes, L1->L0B bytes (apart: LoadData moves them at
// different rates), LoadData calls, L0C->GM bytes, Fixpipe calls, cross-core flag sets.
constexpr int kBlockCounters = 20;
constexpr int kCoreEntry = kBlockCounters + 2;

XBEMU_RT std::vector<uint64_t>& block_counters() {
    static std::vector<uint64_t> v;
    return v;
}

XBEMU_RT void counter_snapshot(const State& s, const cube::Counters& c, uint64_t* v) {
    const uint64_t all[kBlockCounters] = {s.gm_read, s.gm_write, s.vec_instrs, s.vec_repeats, s.scalar_ub,
                                          s.scalar_gm, s.dc_in, s.dc_out, s.dc_in_bytes, s.dc_out_bytes,
                                          c.cube_ops, c.mmad_calls, c.gm_to_l1, c.gm_to_l1_calls,
                                          c.l1_to_l0a, c.l1_to_l0b, c.load_data_calls, c.l0c_to_gm,
                                          c.fixpipe_calls, c.cross_core_sets};
    for (int i = 0; i < kBlockCounters; i++) v[i] = all[i];
}

// Adds core c's counters to the launch's: its per-core entry, the vector totals (t) and the Cube's (ct).
XBEMU_RT void count_core(const State& s, const cube::Counters& c, State& t, cube::Counters& ct) {
    std::vector<uint64_t>& v = block_counters();
    v.push_back(static_cast<uint64_t>(s.block));
    v.push_back(s.mixed ? static_cast<uint64_t>(1 + s.slot) : s.role == ROLE_AIC ? 1u : 0u);
    uint64_t e[kBlockCounters];
    counter_snapshot(s, c, e);
    v.insert(v.end(), e, e + kBlockCounters);
    t.gm_read += s.gm_read, t.gm_write += s.gm_write, t.vec_instrs += s.vec_instrs, t.vec_repeats += s.vec_repeats;
    t.scalar_ub += s.scalar_ub, t.scalar_gm += s.scalar_gm;
    t.dc_in += s.dc_in, t.dc_out += s.dc_out, t.dc_in_bytes += s.dc_in_bytes, t.dc_out_bytes += s.dc_out_bytes;
    ct.cube_ops += c.cube_ops, ct.mmad_calls += c.mmad_calls, ct.gm_to_l1 += c.gm_to_l1;
    ct.l1_to_l0a += c.l1_to_l0a, ct.l1_to_l0b += c.l1_to_l0b, ct.l0c_to_gm += c.l0c_to_gm;
    ct.cross_core_sets += c.cross_core_sets, ct.gm_to_l1_calls += c.gm_to_l1_calls;
    ct.load_data_calls += c.load_data_calls, ct.fixpipe_calls += c.fixpipe_calls;
    ct.l1_to_bt += c.l1_to_bt, ct.bias_mmad_calls += c.bias_mmad_calls;
    for (int m = 0; m < cube::NMEM; m++) ct.peak[m] = std::max(ct.peak[m], c.peak[m]);
}

template <typename F>
inline void call_kernel(void* f) {
    (*static_cast<F*>(f))();
}

// soc = {ub_total, ub_usable, has_pad}; counters = {gm_read, gm_write, vec_instrs, vec_repeats,
// scalar_ub, scalar_gm}; hosts (may be null) = where the caller's array of each buffer lives, for the
// addresses a kernel reads from pointer tables (gm_address). Returns 0, or 1 with the message in err.
// The blocks run one after another; the cores of a block (cube.h) as cooperative contexts. After
// the launch the default core (st(), cube::cs()) holds the launch's totals (xblock_cube_counters).
// The buffers of the last launch, in the order the launcher passed them (region_reads' order).
XBEMU_RT std::vector<const uint8_t*>& launch_buffers() {
    static std::vector<const uint8_t*> v;
    return v;
}

// run, whatever the kernel's callable: each core calls call(kernel).
XBEMU_RT int run_launch(int64_t block_dim, uint8_t** bufs, const uint64_t* sizes, const char* const* names,
                        int nbufs, const uint64_t* hosts, const uint32_t* soc, char* err, int errlen,
                        uint64_t* counters, void (*call)(void*), void* kernel) {
    current_state() = &default_state();
    cube::current_cube() = &cube::default_cube();
    State& s = st();  // the launch's SoC profile and buffers, copied into every core
    s.ub_total = soc[0];
    s.ub_usable = soc[1];
    s.has_pad = soc[2] != 0;
    s.regions.clear();
    for (int i = 0; i < nbufs; i++) {
        const uint8_t* host = hosts ? reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(hosts[i])) : nullptr;
        s.regions.push_back(Region{bufs[i], sizes[i], names[i], host});
    }
    scalar_lines().clear();
    region_reads().clear();
    launch_buffers().assign(bufs, bufs + nbufs);
    s.gm_read = s.gm_write = s.vec_instrs = s.vec_repeats = s.scalar_ub = s.scalar_gm = 0;
    s.dc_in = s.dc_out = s.dc_in_bytes = s.dc_out_bytes = 0;
    cube::Counters totals;
    block_counters().clear();
    block_counters().reserve(static_cast<size_t>(block_dim) * kCoreEntry);
    std::string msg;
    for (int64_t b = 0; b < block_dim && msg.empty(); b++) {
        cube::BlockRun br;
        msg = cube::run_block(br, b, block_dim, call, kernel);
        for (int i = 0; i < br.n; i++)
            if (br.cores[i]->started) count_core(br.cores[i]->st, br.cores[i]->cube.c, s, totals);
    }
    cube::cs().c = totals;
    if (!msg.empty()) {
        std::strncpy(err, msg.c_str(), static_cast<size_t>(errlen) - 1);
        err[errlen - 1] = 0;
    }
    counters[0] = s.gm_read;
    counters[1] = s.gm_write;
    counters[2] = s.vec_instrs;
    counters[3] = s.vec_repeats;
    counters[4] = s.scalar_ub;
    counters[5] = s.scalar_gm;
    return msg.empty() ? 0 : 1;
}
template <typename F>
inline int run(int64_t block_dim, uint8_t** bufs, const uint64_t* sizes, const char* const* names, int nbufs,
               const uint64_t* hosts, const uint32_t* soc, char* err, int errlen, uint64_t* counters, F kernel) {
    return run_launch(block_dim, bufs, sizes, names, nbufs, hosts, soc, err, errlen, counters, &call_kernel<F>,
                      &kernel);
}

// Buffers without caller arrays (a test's, the export's device buffers): no address translation.
template <typename F>
inline int run(int64_t block_dim, uint8_t** bufs, const uint64_t* sizes, const char* const* names, int nbufs,
               const uint32_t* soc, char* err, int errlen, uint64_t* counters, F kernel) {
    return run(block_dim, bufs, sizes, names, nbufs, nullptr, soc, err, errlen, counters, kernel);
}

}  // namespace xbemu

// The per-core counters of the last launch (xbemu::block_counters, kCoreEntry values per core):
// copies up to n values into out and returns how many there are. Weak: several launch translation units may define it.
extern "C" __attribute__((weak)) int64_t xblock_emu_block_counters(uint64_t* out, int64_t n) {
    const std::vector<uint64_t>& v = xbemu::block_counters();
    for (int64_t i = 0; i < n && i < static_cast<int64_t>(v.size()); i++) out[i] = v[i];
    return static_cast<int64_t>(v.size());
}

// GM bytes the last launch read from each of its buffers (xbemu::region_reads), in launch order: copies
// up to n values into out and returns how many buffers there are. Weak, as above.
extern "C" __attribute__((weak)) int64_t xblock_emu_region_reads(uint64_t* out, int64_t n) {
    const std::vector<const uint8_t*>& b = xbemu::launch_buffers();
    for (int64_t i = 0; i < n && i < static_cast<int64_t>(b.size()); i++) {
        auto it = xbemu::region_reads().find(b[i]);
        out[i] = it == xbemu::region_reads().end() ? 0 : it->second;
    }
    return static_cast<int64_t>(b.size());
}
