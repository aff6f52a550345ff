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

#include "kernel_operator.h"

namespace xbemu {

// soc = {ub_total, ub_usable, has_pad}; counters = {gm_read, gm_write, vec_instrs, vec_repeats,
// scalar_ub, scalar_gm}. Returns 0, or 1 with the message in err.
template <typename F>
inline int run(int64_t block_dim, uint8_t** bufs, const uint64_t* sizes, const char* const* names, int nbufs,
               const uint32_t* soc, char* err, int errlen, uint64_t* counters, F kernel) {
    State& s = st();
    s.ub_total = soc[0];
    s.ub_usable = soc[1];
    s.has_pad = soc[2] != 0;
    s.regions.clear();
    for (int i = 0; i < nbufs; i++) s.regions.push_back(Region{bufs[i], sizes[i], names[i]});
    s.gm_read = s.gm_write = s.vec_instrs = s.vec_repeats = s.scalar_ub = s.scalar_gm = 0;
    int rc = 0;
    int64_t b = 0;
    try {
        for (b = 0; b < block_dim; b++) {
            begin_block(b, block_dim);
            kernel();
            end_block();
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

}  // namespace xbemu
