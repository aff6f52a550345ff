// xblock's clean-room CPU model of the AscendC subset that xblock emits.
//
// Written from the public API facts in shared/ascendc/REFERENCE.md (names, parameter types and
// documented units); no CANN header, library or sample code is used. It is strict on purpose:
// whatever the hardware would silently get wrong (a DataCopy count it rounds down, a misaligned
// UB address, a read of data another pipe has not finished writing, queue misuse, unpaired
// flags, too much UB, a scalar GM store into a 64-byte DataCache line another core also stores
// into) is an error that names the API call. It counts GM bytes moved and vector instructions
// issued. One kernel launch runs its blocks one after another (see emu_launch.h); a block of a
// mixed kernel is one AIC and one or two AIVs, each a model core with its own State (cube.h).
//
// Build modes (docs/ASCEND_MODEL.md):
//  * NPU build, the default: after this header, kernel code sees only what an NPU build of
//    kernel_operator.h declares. The host library names (<cmath>, <cstdio>, <cstdlib>, <cstring>,
//    `std::`, INFINITY, NAN, printf, memcpy, ...) are poisoned at the end of this file, so a kernel
//    that uses one fails to compile here as it does with CANN's compiler.
//  * CPU-debug build (ASCENDC_CPU_DEBUG defined, or emu_launch.h included before this header, as a
//    host test program does): nothing is poisoned, like CANN's CPU twin, which sees host headers.
//  * XBEMU_CANN_VERSION (default 9) picks the API generation: 9 declares the CANN 9 names
//    (Compares, DisableDmaAtomic) beside the deprecated ones; 8 declares only the CANN 8 names
//    and also defines __CCE_AICORE__ 220. Both define __NPU_ARCH__ 2201, as the compilers of
//    CANN 8.3, 8.5 and 9 do for Atlas A2, so __NPU_ARCH__ cannot tell the generations apart here.
#pragma once
// XBEMU_RT marks the model's out-of-line functions (a definition that starts a line with it): inline
// by default (a kernel.cpp with this header is a whole program, as in the export's model toolkit);
// xblock's own kernel builds compile them once, in a translation unit that defines XBEMU_RUNTIME_TU,
// and build each kernel with XBEMU_PREBUILT_RUNTIME against copies of these headers where each such
// definition is only its declaration (model/launch.py, elide_runtime and _prebuilt). Only at -O0,
// where g++ inlines none of them: an inlined copy would have static locals of its own. Member
// functions so marked are defined outside their class.
#ifndef XBEMU_RT
#if defined(XBEMU_RUNTIME_TU) || defined(XBEMU_PREBUILT_RUNTIME)
#define XBEMU_RT
#else
#define XBEMU_RT inline
#endif
#endif
#define XBEMU_KERNEL_OPERATOR_H 1

#ifndef XBEMU_CANN_VERSION
#define XBEMU_CANN_VERSION 9
#endif
#ifndef __NPU_ARCH__
#define __NPU_ARCH__ 2201
#endif
#if XBEMU_CANN_VERSION < 9
#ifndef __CCE_AICORE__
#define __CCE_AICORE__ 220
#endif
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#define __global__
#define __aicore__
#define __gm__
#define GM_ADDR uint8_t*

using half = _Float16;

// bfloat16 storage type: 16 bits, converted to and from float with round-to-nearest-even.
struct bfloat16_t {
    uint16_t bits = 0;
    bfloat16_t() = default;
    bfloat16_t(float f) {
        uint32_t u;
        std::memcpy(&u, &f, 4);
        if ((u & 0x7fffffffu) > 0x7f800000u) {
            bits = static_cast<uint16_t>((u >> 16) | 0x40);
        } else {
            u += 0x7fffu + ((u >> 16) & 1u);
            bits = static_cast<uint16_t>(u >> 16);
        }
    }
    operator float() const {
        uint32_t u = static_cast<uint32_t>(bits) << 16;
        float f;
        std::memcpy(&f, &u, 4);
        return f;
    }
};

// Kernel types (KERNEL_TASK_TYPE_DEFAULT, cube.h). Declared at global scope with uint8_t as its
// underlying type, as in the ADK; Atlas A2 accepts the first six.
enum KernelMetaType : uint8_t {
    KERNEL_TYPE_AIV_ONLY,
    KERNEL_TYPE_AIC_ONLY,
    KERNEL_TYPE_MIX_AIV_1_0,
    KERNEL_TYPE_MIX_AIC_1_0,
    KERNEL_TYPE_MIX_AIC_1_1,
    KERNEL_TYPE_MIX_AIC_1_2,
    KERNEL_TYPE_AICORE,
    KERNEL_TYPE_VECTORCORE,
    KERNEL_TYPE_MIX_AICORE,
    KERNEL_TYPE_MIX_VECTOR_CORE,
    KERNEL_TYPE_MAX,
};

namespace xbemu {

struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

XBEMU_RT __attribute__((noreturn)) void fail(const std::string& api, const std::string& msg) {
    throw Error(api + ": " + msg);
}

// The pipes the model numbers: the vector core's (S, V, MTE2, MTE3) and the Cube's (MTE1: L1 -> L0A/L0B and
// the BiasTable, M: Mmad, FIX: Fixpipe), as in asc-devkit impl/basic_api/kernel_event.h (SUPPORTED_PIPE).
enum Pipe { P_S = 0, P_V, P_MTE2, P_MTE3, P_MTE1, P_M, P_FIX, P_NUM };
XBEMU_RT const char* pipe_name(int p) {
    static const char* names[] = {"S", "V", "MTE2", "MTE3", "MTE1", "M", "FIX"};
    return names[p];
}

// A GM buffer of the launch. The launcher runs the kernel on copies of the caller's arrays; `host` is
// where the caller's array lives (its `arr.ctypes.data`), the address a pointer table holds.
struct Region {
    uint8_t* base;
    uint64_t bytes;
    std::string name;
    const uint8_t* host = nullptr;
};

// Where an API was called in the kernel source (__builtin_FILE/__builtin_LINE of the call), for
// messages: where() marks the call the error is about (" [at kernel.cpp:123]"), ref() another
// call it mentions (" (kernel.cpp:120)"). The launcher maps kernel.cpp lines to the Python source.
struct Site {
    const char* file = nullptr;
    int line = 0;
};
XBEMU_RT std::string site_text(const Site& s) {
    const char* b = std::strrchr(s.file, '/');
    return std::string(b ? b + 1 : s.file) + ":" + std::to_string(s.line);
}
XBEMU_RT std::string where(const Site& s) { return s.file ? " [at " + site_text(s) + "]" : ""; }
XBEMU_RT std::string ref(const Site& s) { return s.file ? " (" + site_text(s) + ")" : ""; }

// The DataCache: scalar GM access (GlobalTensor::GetValue/SetValue) goes through 64-byte lines
// held per core. A line is loaded whole on the first scalar read or write of one of its bytes;
// SetValue changes only the cached copy (the line turns dirty); DataCacheCleanAndInvalid, or the
// flush the compiler appends at the end of a kernel, writes the whole line back and drops it.
// Lines are counted from the start of each GM buffer (aclrtMalloc'd buffers are line-aligned).
constexpr uint64_t kLine = 64;
struct DLine {
    uint8_t* gm = nullptr;  // the line's first byte in GM
    uint32_t n = kLine;     // bytes of the line inside its buffer (a buffer's last line may be shorter)
    const char* buffer = "";
    uint8_t data[kLine];    // the cached bytes
    uint8_t loaded[kLine];  // GM as it was when the line was loaded
    uint64_t dirty = 0;     // bit i: byte i stored by SetValue and not yet written back
    Site store;             // the last SetValue into the line
};
// A line some core stored scalars into during this launch: the first core to do so (its block
// and its slot in the block: 0 the first core, the AIC of a mixed kernel; 1 and 2 its AIVs).
struct LineOwner {
    int64_t block;
    int slot;
    Site site;
};

constexpr int kMaxCores = 3;  // model cores of one block: one AIC and up to two AIVs (cube.h)
enum Role { ROLE_ANY = 0, ROLE_AIC, ROLE_AIV };  // ROLE_ANY: a kernel without KERNEL_TASK_TYPE_DEFAULT (yet)

// Per-core state: one per model core. A launch runs its blocks one after another; a block is one
// core, or, for a mixed kernel, one AIC and its AIVs, each with its own State (cube.h's scheduler).
// The SoC profile and the GM buffers are the launch's, copied into every core.
struct State {
    // SoC profile, set by the launcher
    uint32_t ub_total = 192 * 1024, ub_usable = 184 * 1024;
    bool has_pad = true;
    // GetBlockIdx() (an AIV of a MIX_AIC_1_2 kernel counts AIVs: 2 * block + sub_idx), GetBlockNum()
    int64_t block_idx = 0, block_num = 1;
    int64_t block = 0;  // the block (AI Core) this core belongs to
    int slot = 0;       // 0: the block's first core (the AIC of a mixed kernel); 1, 2: AIV0, AIV1
    int role = ROLE_ANY;
    bool mixed = false;            // one of the cores of a MIX_AIC_1_1 / MIX_AIC_1_2 block
    int sub_idx = 0, sub_num = 1;  // GetSubBlockIdx(), GetSubBlockNum()
    // the cores of this block (null when the block is one core run outside the scheduler), and what
    // this core's pipes know of theirs: xknow[c][x][q], core c's pipe x instructions up to this number
    // are complete before this core's pipe q's next one (learnt through cross-core flags)
    State* peers[kMaxCores] = {};
    uint64_t xknow[kMaxCores][P_NUM][P_NUM] = {};
    std::vector<Region> regions;
    // unified buffer, with the writer pipe and its sequence number per 32-byte block
    std::vector<uint8_t> ub;
    std::vector<uint8_t> writer;
    std::vector<uint64_t> wseq;
    // rseq[p][b]: the number of pipe p's latest instruction that read 32-byte block b (V and MTE3;
    // a scalar read completes before the scalar unit goes on); read_open[p]: pipe p's latest reading
    // instruction has no number yet (it wrote nothing so far: close_reads numbers it)
    std::vector<uint64_t> rseq[P_NUM];
    bool read_open[P_NUM] = {};
    // seq[p]: instructions of pipe p so far (those that write UB, and every MTE3 copy to GM);
    // visible[p][q]: pipe p's instructions up to this number are complete before pipe q's next one
    uint64_t seq[P_NUM] = {};
    uint64_t visible[P_NUM][P_NUM] = {};
    // copies to GM by MTE3 that may still be in flight: first byte -> (end, MTE3 seq); disjoint
    std::map<uintptr_t, std::pair<uintptr_t, uint64_t>> mte3_gm;
    size_t mte3_prune_at = 4096;
    // the same for the Cube's Fixpipe writes to GM (pipe FIX, cube.h)
    std::map<uintptr_t, std::pair<uintptr_t, uint64_t>> fix_gm;
    // pipe objects
    bool pipe_alive = false;
    uint32_t ub_used = 0, buffers = 0, que_buffers_in = 0, que_buffers_out = 0;
    // SetFlag/WaitFlag: pending sequence number + 1 per (event, id), 0 when none
    uint64_t flags[64][8] = {};
    uint64_t carry[64][8][P_NUM] = {};  // what the setting pipe knew (visible[*][from]) at SetFlag
    int atomic = 0;  // the data-copy atomic: 0 none, 1 add, 2 max, 3 min (SetAtomicAdd/Max/Min)
    const void* atomic_type = nullptr;  // the T it was set for (atomic_tag<T>())
    // the last small GM read (spin_watch): where, how many bytes, their value, and how often in a row
    const uint8_t* spin_at = nullptr;
    uint64_t spin_n = 0, spin_bits = 0, spin_reads = 0;
    int kernel_type = -1;  // KERNEL_TASK_TYPE_DEFAULT of the running kernel, -1 when none (cube.h)
    // this core's DataCache (line address -> line)
    std::unordered_map<uintptr_t, DLine> dcache;
    // counters
    uint64_t gm_read = 0, gm_write = 0, vec_instrs = 0, vec_repeats = 0, scalar_ub = 0, scalar_gm = 0;
    // DataCopy/DataCopyPad calls between GM and UB (one DMA instruction each) and the bytes they move
    uint64_t dc_in = 0, dc_out = 0, dc_in_bytes = 0, dc_out_bytes = 0;
    // the bytes' worth of the 512-B GM windows DMA rows touch beyond the fewest their length needs (a row of n
    // bytes at offset o of its buffer touches ceil((o % 512 + n) / 512) windows; its time is priced per window:
    // cost.py); the profile build reads them around each DMA
    double gm_read_excess = 0, gm_write_excess = 0;
};

// The running core's State: the launcher points it at each core in turn (cube.h's scheduler);
// outside a launch it is one default core (tests that call a kernel directly use it).
XBEMU_RT State& default_state() {
    static State s;
    return s;
}
XBEMU_RT State*& current_state() {
    static State* p = &default_state();
    return p;
}
XBEMU_RT State& st() { return *current_state(); }

// The 64-byte lines scalars were stored into during this launch, by line address (launch-wide).
XBEMU_RT std::unordered_map<uintptr_t, LineOwner>& scalar_lines() {
    static std::unordered_map<uintptr_t, LineOwner> m;
    return m;
}

XBEMU_RT const char* slot_name(int slot) {
    static const char* names[] = {"AIC", "AIV0", "AIV1"};
    return names[slot];
}
// A core in messages: "block 3" (a block of one core), "block 3 AIV1" (a core of a mixed kernel).
XBEMU_RT std::string core_name(int64_t block, int slot) {
    return "block " + std::to_string(block) + (st().mixed ? std::string(" ") + slot_name(slot) : std::string());
}
XBEMU_RT std::string core_name() { return core_name(st().block, st().slot); }

// One GM<->UB DataCopy/DataCopyPad call moving `bytes` (the cost model's transfer granularity).
XBEMU_RT void dma_call(bool to_gm, uint64_t bytes) {
    State& s = st();
    (to_gm ? s.dc_out : s.dc_in)++;
    (to_gm ? s.dc_out_bytes : s.dc_in_bytes) += bytes;
}

// Resets core s for a new block (its other identity fields stay as they are).
XBEMU_RT void reset_core(State& s, int64_t idx, int64_t num) {
    s.block_idx = idx;
    s.block = idx;
    s.block_num = num;
    s.ub.assign(s.ub_total, 0xff);  // poison: uninitialized floats read as NaN
    s.writer.assign(s.ub_total / 32, 0xff);
    s.wseq.assign(s.ub_total / 32, 0);
    s.rseq[P_V].assign(s.ub_total / 32, 0);
    s.rseq[P_MTE3].assign(s.ub_total / 32, 0);
    for (auto& o : s.read_open) o = false;
    for (auto& q : s.seq) q = 0;
    std::memset(s.visible, 0, sizeof(s.visible));
    std::memset(s.flags, 0, sizeof(s.flags));
    s.mte3_gm.clear();
    s.mte3_prune_at = 4096;
    s.fix_gm.clear();
    s.pipe_alive = false;
    s.ub_used = s.buffers = s.que_buffers_in = s.que_buffers_out = 0;
    s.atomic = 0;
    s.spin_reads = 0;
    s.kernel_type = -1;
    s.dcache.clear();
    std::memset(s.xknow, 0, sizeof(s.xknow));
}

// A block run as one core on the running State (tests that call a kernel directly; emu_launch.h
// runs its cores through cube.h's scheduler instead).
XBEMU_RT void begin_block(int64_t idx, int64_t num) {
    reset_core(st(), idx, num);
    if (idx == 0) scalar_lines().clear();  // block 0 starts a launch
}

XBEMU_RT void dc_flush_all(const char* api);

XBEMU_RT void end_block() {
    State& s = st();
    // the compiler ends a (non-SuperKernel) kernel with a whole-DCache DataCacheCleanAndInvalid
    // (ADK docs/zh/guide/编程指南/高级编程/SuperKernel/算子适配说明.md)
    dc_flush_all("kernel end (the compiler's whole-DCache flush)");
    for (int e = 0; e < 64; e++)
        for (int i = 0; i < 8; i++)
            if (s.flags[e][i])
                fail("SetFlag", "event " + std::to_string(e) + " id " + std::to_string(i) +
                                    " was set and never waited for (unpaired SetFlag/WaitFlag)");
    if (s.atomic) fail("SetAtomicAdd", "atomic mode still on at kernel end (missing DisableDmaAtomic/SetAtomicNone)");
}

XBEMU_RT std::string hexaddr(uint64_t off) {
    char b[32];
    std::snprintf(b, sizeof b, "UB+0x%llx", static_cast<unsigned long long>(off));
    return b;
}

XBEMU_RT uint64_t ub_off(const void* p) {
    return static_cast<uint64_t>(static_cast<const uint8_t*>(p) - st().ub.data());
}

// The AIC of a mixed kernel has no vector unit and no unified buffer (the model gives every core a UB).
XBEMU_RT void not_on_aic(const char* api, const State& s) {
    if (s.mixed && s.role == ROLE_AIC)
        fail(api, "vector/UB API on the AIC of a mixed kernel: the Cube core has no vector unit and no unified "
                  "buffer (put it in an `if ASCEND_IS_AIV` section)");
}

// A pipe reads [p, p+n): every 32-byte block written by another pipe must be visible to it.
XBEMU_RT void ub_read(const char* api, int pipe, const void* p, uint64_t n) {
    State& s = st();
    not_on_aic(api, s);
    if (n == 0) return;
    uint64_t off = ub_off(p);
    if (off + n > s.ub_total) fail(api, "reads past the end of the unified buffer");
    for (uint64_t b = off / 32; b <= (off + n - 1) / 32; b++) {
        int w = s.writer[b];
        if (w == 0xff || w == pipe) continue;
        if (s.wseq[b] > s.visible[w][pipe])
            fail(api, std::string("reads ") + hexaddr(b * 32) + " written by pipe " + pipe_name(w) +
                          " with no " + pipe_name(w) + "->" + pipe_name(pipe) +
                          " synchronisation in between (EnQue/DeQue or SetFlag/WaitFlag)");
    }
    if (pipe != P_V && pipe != P_MTE3) return;
    // the reading instruction's number: an MTE3 copy is numbered when issued (mte3_issue, before its
    // reads); a vector instruction when it writes (ub_write), or by close_reads if it writes nothing
    const uint64_t num = pipe == P_MTE3 ? s.seq[P_MTE3] : s.seq[P_V] + 1;
    if (pipe == P_V) s.read_open[P_V] = true;
    for (uint64_t b = off / 32; b <= (off + n - 1) / 32; b++) s.rseq[pipe][b] = num;
}

// Pipe p's (all pipes', p < 0) reading instruction that wrote nothing gets its number now, before
// what p has done is made known to another pipe or core (a flag, a barrier).
XBEMU_RT void close_reads(State& s, int p) {
    for (int q = 0; q < P_NUM; q++)
        if ((p < 0 || q == p) && s.read_open[q]) {
            s.seq[q]++;
            s.read_open[q] = false;
        }
}

// A pipe writes UB block b that pipes V or MTE3 read before: those reads must be complete before
// this write (write-after-read). Outside the queues, whose AllocTensor waits for the FreeTensor of the
// consumer, nothing orders them but SetFlag/WaitFlag or a barrier: a later instruction of another
// pipe may overwrite bytes an issued vector instruction or copy-out is still reading (ADK
// docs/api/context/同步控制简介.md: the pipes run asynchronously; every pair of V, MTE2, MTE3 and S
// needs a sync in both directions).
XBEMU_RT void war_check(const char* api, const State& s, int pipe, uint64_t b) {
    for (int r : {P_V, P_MTE3}) {
        if (r == pipe || s.rseq[r].empty() || s.rseq[r][b] <= s.visible[r][pipe]) continue;
        fail(api, "writes " + hexaddr(b * 32) + ", which an earlier " + pipe_name(r) + " instruction reads, with no " +
                      pipe_name(r) + "->" + pipe_name(pipe) + " synchronisation in between (write-after-read: " +
                      "SetFlag/WaitFlag<HardEvent::" + pipe_name(r) + "_" + pipe_name(pipe) +
                      ">, or the queue's FreeTensor/AllocTensor)");
    }
}

// A pipe writes [p, p+n). Two MTE2 copies whose UB destinations overlap must be ordered
// (PipeBarrier<PIPE_MTE2>, or a flag chain through another pipe): DMA copies of one pipe may
// overlap in flight, and the compiler's auto-sync does not order them (ADK PipeBarrier doc).
XBEMU_RT void ub_write(const char* api, int pipe, const void* p, uint64_t n) {
    State& s = st();
    not_on_aic(api, s);
    if (n == 0) return;
    uint64_t off = ub_off(p);
    if (off + n > s.ub_total) fail(api, "writes past the end of the unified buffer");
    if (pipe == P_MTE2)
        for (uint64_t b = off / 32; b <= (off + n - 1) / 32; b++)
            if (s.writer[b] == P_MTE2 && s.wseq[b] > s.visible[P_MTE2][P_MTE2])
                fail(api, "writes " + hexaddr(b * 32) + ", which an earlier MTE2 copy also writes, with nothing " +
                              "ordering the two copies (PipeBarrier<PIPE_MTE2>, or the queue's Free/Alloc)");
    for (uint64_t b = off / 32; b <= (off + n - 1) / 32; b++) war_check(api, s, pipe, b);
    s.seq[pipe]++;
    s.read_open[pipe] = false;
    for (uint64_t b = off / 32; b <= (off + n - 1) / 32; b++) {
        s.writer[b] = static_cast<uint8_t>(pipe);
        s.wseq[b] = s.seq[pipe];
    }
}

XBEMU_RT void make_visible(int from, int to) {
    State& s = st();
    close_reads(s, from);
    if (s.visible[from][to] < s.seq[from]) s.visible[from][to] = s.seq[from];
}

XBEMU_RT const Region& gm_region(const char* api, const void* p, Site site = Site{});

// Flags carry what the setting pipe knew: a flag from -> to fires once `from` has finished its
// earlier instructions, which include its own waits; so `to` learns, transitively, what `from`
// had learnt of the other pipes. A wait on the scalar pipe stalls the issue of everything after.
XBEMU_RT void snapshot(int from, uint64_t* out) {
    State& s = st();
    close_reads(s, from);
    for (int x = 0; x < P_NUM; x++) out[x] = s.visible[x][from];
    out[from] = s.seq[from];
}
XBEMU_RT void learn(int to, const uint64_t* what) {
    State& s = st();
    for (int q = 0; q < P_NUM; q++) {
        if (to != P_S && q != to) continue;
        for (int x = 0; x < P_NUM; x++)
            if (s.visible[x][q] < what[x]) s.visible[x][q] = what[x];
    }
}

// One MTE3 copy to GM (one instruction, possibly several rows): its number.
XBEMU_RT uint64_t mte3_issue() { return ++st().seq[P_MTE3]; }

// MTE3 writes [p, p+n) of GM as instruction `seq`: it must not overlap a copy still in flight
// (PipeBarrier<PIPE_MTE3> between copies whose GM destinations overlap; ADK PipeBarrier doc).
XBEMU_RT void mte3_gm_write(const char* api, const uint8_t* p, uint64_t n, uint64_t seq) {
    State& s = st();
    if (n == 0) return;
    uintptr_t lo = reinterpret_cast<uintptr_t>(p), hi = lo + n;
    std::vector<std::pair<uintptr_t, std::pair<uintptr_t, uint64_t>>> keep;  // parts outside [lo, hi)
    auto it = s.mte3_gm.lower_bound(lo);
    if (it != s.mte3_gm.begin()) --it;
    while (it != s.mte3_gm.end() && it->first < hi) {
        const uintptr_t a = it->first, b = it->second.first;
        const uint64_t q = it->second.second;
        if (b <= lo || q == seq) {
            ++it;
            continue;
        }
        if (q > s.visible[P_MTE3][P_MTE3] && !s.atomic) {
            const Region& r = gm_region(api, p);
            fail(api, "writes bytes [" + std::to_string(lo - reinterpret_cast<uintptr_t>(r.base)) + ", " +
                          std::to_string(hi - reinterpret_cast<uintptr_t>(r.base)) + ") of '" + r.name +
                          "', which an earlier copy to GM (MTE3) also writes and may still be writing: copies of "
                          "one pipe may overlap in flight; put PipeBarrier<PIPE_MTE3> between them");
        }
        if (a < lo) keep.push_back({a, {lo, q}});
        if (b > hi) keep.push_back({hi, {b, q}});
        it = s.mte3_gm.erase(it);  // ordered before this copy: this copy's bytes are the newer ones
    }
    for (auto& k : keep) s.mte3_gm[k.first] = k.second;
    s.mte3_gm[lo] = {hi, seq};
    if (s.mte3_gm.size() > s.mte3_prune_at) {  // drop the copies both MTE3 and MTE2 know complete
        uint64_t done = s.visible[P_MTE3][P_MTE3] < s.visible[P_MTE3][P_MTE2] ? s.visible[P_MTE3][P_MTE3]
                                                                              : s.visible[P_MTE3][P_MTE2];
        for (auto j = s.mte3_gm.begin(); j != s.mte3_gm.end();) j = j->second.second <= done ? s.mte3_gm.erase(j) : ++j;
        s.mte3_prune_at = 2 * s.mte3_gm.size() > 4096 ? 2 * s.mte3_gm.size() : 4096;
    }
}

XBEMU_RT const Region* region_holding(const void* p) {
    for (const Region& r : st().regions)
        if (p >= r.base && p < r.base + (r.bytes ? r.bytes : 1)) return &r;
    return nullptr;
}

XBEMU_RT const Region& gm_region(const char* api, const void* p, Site site) {
    if (const Region* r = region_holding(p)) return *r;
    char a[32];
    std::snprintf(a, sizeof a, "0x%llx", static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(p)));
    fail(api, "address " + std::string(a) + " is outside every buffer passed to the kernel" +
                  " (a GlobalTensor set from an address no argument of the launch holds, as a pointer table's entry" +
                  " may be)" + where(site));
}

// SetGlobalBuffer of an address the kernel read or computed (a pointer table's entry, `(__gm__ T*)addr`).
// Pointer tables hold the caller's addresses (arr.ctypes.data) and the kernel runs on copies, so an
// address inside an argument's caller array (or just past its end) stands for the same byte of its
// copy: the device address an NPU table would hold. Returns that address and its buffer (nullptr for
// an address in no argument: it stays as it is, and every access through it is an error).
XBEMU_RT uint8_t* gm_address(const void* p, const Region** in) {
    const uint8_t* q = static_cast<const uint8_t*>(p);
    if ((*in = region_holding(q))) return const_cast<uint8_t*>(q);  // a kernel argument's own GM_ADDR
    for (int past = 0; past < 2; past++)  // inside a caller's array first, then one past its end
        for (const Region& r : st().regions)
            if (r.host && q >= r.host && (past ? q == r.host + r.bytes : q < r.host + r.bytes)) {
                *in = &r;
                return r.base + (q - r.host);
            }
    *in = nullptr;
    return const_cast<uint8_t*>(q);
}

XBEMU_RT void dc_dma(const char* api, const Region& r, const uint8_t* p, uint64_t n, bool write);

// GM access of n bytes at p inside the buffer holding `base`: bounds and counters; a DMA access
// (dma) is also checked against the DataCache (dc_dma).
// A block that reads the same few GM bytes over and over, unchanged, writing nothing to GM in between,
// waits for another core to change them (a flag or a lock). Blocks run one after another here, so no
// other core runs meanwhile: the wait would never end. The model stops it after kSpinLimit such reads.
constexpr uint64_t kSpinLimit = uint64_t(1) << 22;
XBEMU_RT void spin_watch(const char* api, const Region& r, const uint8_t* q, uint64_t n, bool write, Site site) {
    State& s = st();
    if (write || n > 8) {
        s.spin_reads = 0;
        return;
    }
    uint64_t bits = 0;
    std::memcpy(&bits, q, n);
    if (s.spin_reads == 0 || s.spin_at != q || s.spin_n != n || s.spin_bits != bits) {
        s.spin_at = q, s.spin_n = n, s.spin_bits = bits, s.spin_reads = 1;
        return;
    }
    if (++s.spin_reads < kSpinLimit) return;
    fail(api, core_name() + " cannot make progress: it read the same " + std::to_string(n) +
                  " B of GM (byte offset " + std::to_string(static_cast<long long>(q - r.base)) + " of '" + r.name +
                  "') " + std::to_string(kSpinLimit) + " times in a row, unchanged, writing nothing to GM: it waits "
                  "for another core (a flag or a lock another program sets), and this model runs the blocks one "
                  "after another and switches between the cores of a block only at CrossCoreWaitFlag, so nothing "
                  "else can change them (run programs that wait for one another with target=\"sim\")" + where(site));
}

// GM bytes read per buffer of the launch, all cores together (the cost model's L2 estimate: a buffer
// read more often than it is large is read again from L2); keyed by the buffer's first byte.
XBEMU_RT std::map<const uint8_t*, uint64_t>& region_reads() {
    static std::map<const uint8_t*, uint64_t> m;
    return m;
}

// The most a DMA row's extra 512-B windows add to its time, as a fraction of its bytes (the profile build sets
// it from cost.py's `unaligned_rate`: 1 / 0.7 - 1, "down to 70%")
XBEMU_RT double& window_excess_cap() {
    static double cap = 1.0;
    return cap;
}

XBEMU_RT void gm_check(const char* api, const void* base, const void* p, uint64_t n, bool write, bool dma = true,
                     Site site = Site{}) {
    if (n == 0) return;
    const Region& r = gm_region(api, base, site);
    const uint8_t* q = static_cast<const uint8_t*>(p);
    if (q < r.base || q + n > r.base + r.bytes)
        fail(api, std::string(write ? "writes " : "reads ") + std::to_string(n) + " B of GM at byte offset " +
                      std::to_string(static_cast<long long>(q - r.base)) + " of '" + r.name + "' (" +
                      std::to_string(r.bytes) + " B)" + where(site));
    spin_watch(api, r, q, n, write, site);
    if (dma) {
        const uint64_t off = static_cast<uint64_t>(q - r.base) % 512, w0 = (n + 511) / 512;
        const uint64_t w = (off + n + 511) / 512;
        if (w > w0)
            (write ? st().gm_write_excess : st().gm_read_excess) +=
                double(n) * std::min(double(w - w0) / double(w0), window_excess_cap());
    }
    if (write) {
        st().gm_write += n;
    } else {
        st().gm_read += n;
        region_reads()[r.base] += n;
    }
    if (dma) dc_dma(api, r, q, n, write);
}

// ----- the DataCache -------------------------------------------------------------------------

XBEMU_RT std::string line_desc(const DLine& L, const Region& r) {
    uint64_t off = static_cast<uint64_t>(L.gm - r.base);
    return "the 64-byte line at bytes [" + std::to_string(off) + ", " + std::to_string(off + kLine) + ") of '" +
           r.name + "'";
}

XBEMU_RT uintptr_t line_key(const Region& r, const uint8_t* p) {
    return reinterpret_cast<uintptr_t>(r.base + (static_cast<uint64_t>(p - r.base) & ~(kLine - 1)));
}

// The cached line holding p, loaded from GM on a miss; `hit` tells which.
XBEMU_RT DLine& dc_line(const Region& r, const uint8_t* p, bool& hit) {
    State& s = st();
    uintptr_t k = line_key(r, p);
    auto it = s.dcache.find(k);
    hit = it != s.dcache.end();
    if (hit) return it->second;
    DLine& L = s.dcache[k];
    L.gm = reinterpret_cast<uint8_t*>(k);
    uint64_t left = r.bytes - static_cast<uint64_t>(L.gm - r.base);
    L.n = static_cast<uint32_t>(left < kLine ? left : kLine);
    L.buffer = r.name.c_str();
    std::memcpy(L.data, L.gm, L.n);
    std::memcpy(L.loaded, L.gm, L.n);
    return L;
}

XBEMU_RT const Region& region_of_line(const DLine& L) {
    for (const Region& r : st().regions)
        if (L.gm >= r.base && L.gm < r.base + r.bytes) return r;
    fail("DataCache", "internal: a cached line outside every buffer");
}

// Clean (write the whole line back, if dirty) and invalidate. Bytes this core did not store go
// back as they were loaded: if GM changed there since (a DMA of this core wrote them), the
// write-back would silently put stale bytes over the new ones.
XBEMU_RT void dc_writeback(const char* api, DLine& L) {
    if (L.dirty) {
        for (uint32_t i = 0; i < L.n; i++)
            if (!((L.dirty >> i) & 1) && L.gm[i] != L.loaded[i]) {
                const Region& r = region_of_line(L);
                fail(api, "writes back " + line_desc(L, r) + " whole, with SetValue's bytes, and so puts stale bytes " +
                              "back over byte " + std::to_string(static_cast<uint64_t>(L.gm - r.base) + i) +
                              ", which GM received (by DMA) after the line was loaded: flush the line " +
                              "(DataCacheCleanAndInvalid) before a DataCopy writes into it, or keep scalar stores " +
                              "and copies in separate lines" + where(L.store));
            }
        std::memcpy(L.gm, L.data, L.n);
        L.dirty = 0;
    }
}

XBEMU_RT void dc_flush_all(const char* api) {
    State& s = st();
    for (auto& kv : s.dcache) dc_writeback(api, kv.second);
    s.dcache.clear();
}

// DataCacheCleanAndInvalid of the line holding p (or of the whole cache).
XBEMU_RT void dcci(const char* api, const void* base, const void* p, bool entire) {
    if (entire) return dc_flush_all(api);
    const Region& r = gm_region(api, base);
    const uint8_t* q = static_cast<const uint8_t*>(p);
    if (q < r.base || q >= r.base + r.bytes) fail(api, "address outside the buffer '" + r.name + "'");
    State& s = st();
    auto it = s.dcache.find(line_key(r, q));
    if (it == s.dcache.end()) return;
    dc_writeback(api, it->second);
    s.dcache.erase(it);
}

// Calls f(key, value) for the entries of map m whose line overlaps [p, p + n) of region r.
template <typename M, typename F>
inline void lines_in(M& m, const Region& r, const uint8_t* p, uint64_t n, F f) {
    if (m.empty() || n == 0) return;
    uintptr_t lo = line_key(r, p), hi = line_key(r, p + n - 1);
    if ((hi - lo) / kLine + 1 <= m.size()) {
        for (uintptr_t k = lo; k <= hi; k += kLine) {
            auto it = m.find(k);
            if (it != m.end()) f(k, it->second);
        }
    } else {
        for (auto& kv : m)
            if (kv.first >= lo && kv.first <= hi) f(kv.first, kv.second);
    }
}

// A DMA access to GM meets the DataCache: a read must not see GM bytes that a SetValue of this
// core still holds dirty in its cache (the DMA would read the old value); a write must not go
// into a line that another core stores scalars into (that core's whole-line write-back and this
// copy race: whichever lands last wins).
XBEMU_RT void fix_gm_read(const char* api, const Region& r, const uint8_t* p, uint64_t n);  // cube.h
XBEMU_RT void dc_dma(const char* api, const Region& r, const uint8_t* p, uint64_t n, bool write) {
    State& s = st();
    if (!write && !s.mte3_gm.empty()) {  // a read of GM this core's MTE3 may still be writing
        uintptr_t lo = reinterpret_cast<uintptr_t>(p), hi = lo + n;
        auto it = s.mte3_gm.lower_bound(lo);
        if (it != s.mte3_gm.begin()) --it;
        for (; it != s.mte3_gm.end() && it->first < hi; ++it)
            if (it->second.first > lo && it->second.second > s.visible[P_MTE3][P_MTE2])
                fail(api, "reads bytes of '" + r.name + "' that an earlier copy to GM (MTE3) of this core may still " +
                              "be writing: SetFlag/WaitFlag<HardEvent::MTE3_MTE2> (or PipeBarrier<PIPE_ALL>) first");
    }
    if (!write) fix_gm_read(api, r, p, n);  // GM a Fixpipe (this core's or another's) may still be writing
    if (!write)
        for (int c = 0; c < kMaxCores; c++) {  // GM another core of the block may still be writing
            const State* o = s.peers[c];
            if (!o || o == &s || o->mte3_gm.empty()) continue;
            uintptr_t lo = reinterpret_cast<uintptr_t>(p), hi = lo + n;
            auto it = o->mte3_gm.lower_bound(lo);
            if (it != o->mte3_gm.begin()) --it;
            for (; it != o->mte3_gm.end() && it->first < hi; ++it)
                if (it->second.first > lo && it->second.second > s.xknow[c][P_MTE3][P_MTE2])
                    fail(api, "reads bytes of '" + r.name + "' that a copy to GM (MTE3) of " + core_name(s.block, c) +
                                  " may still be writing: nothing orders that copy before this read (that core's "
                                  "CrossCoreSetFlag must come after the copy completes, e.g. set on PIPE_MTE3, and "
                                  "this core must wait for it)");
        }
    if (!write) {
        lines_in(s.dcache, r, p, n, [&](uintptr_t, DLine& L) {
            for (uint32_t i = 0; i < L.n; i++)
                if (((L.dirty >> i) & 1) && L.gm + i >= p && L.gm + i < p + n)
                    fail(api, "reads byte " + std::to_string(static_cast<uint64_t>(L.gm + i - r.base)) + " of '" +
                                  r.name + "', which a SetValue of this core left in its DataCache: the copy reads " +
                                  "GM, where the value is not yet (DataCacheCleanAndInvalid after the SetValue)" +
                                  where(L.store));
        });
        return;
    }
    lines_in(scalar_lines(), r, p, n, [&](uintptr_t k, LineOwner& o) {
        if (o.block == s.block && o.slot == s.slot) return;
        uint64_t off = static_cast<uint64_t>(reinterpret_cast<uint8_t*>(k) - r.base);
        fail(api, core_name() + " copies into the 64-byte line at bytes [" + std::to_string(off) + ", " +
                      std::to_string(off + kLine) + ") of '" + r.name + "', which " + core_name(o.block, o.slot) +
                      " stores scalars into (GlobalTensor::SetValue): that core writes " +
                      "the whole line back from its DataCache, so the two writes race" + ref(o.site));
    });
}

template <typename T>
inline T scalar_gm_read(const char* api, const void* base, const T* p, Site site) {
    gm_check(api, base, p, sizeof(T), false, false, site);
    st().scalar_gm++;
    const Region& r = gm_region(api, base);
    const uint8_t* q = reinterpret_cast<const uint8_t*>(p);
    uint32_t o = static_cast<uint32_t>(static_cast<uint64_t>(q - r.base) % kLine);
    if (o + sizeof(T) > kLine) fail(api, "a misaligned element straddles two 64-byte lines" + where(site));
    bool hit;
    DLine& L = dc_line(r, q, hit);
    if (hit)
        for (uint32_t i = o; i < o + sizeof(T); i++)
            if (!((L.dirty >> i) & 1) && L.data[i] != L.gm[i])
                fail(api, "reads a stale DataCache line: byte " + std::to_string(static_cast<uint64_t>(q - r.base)) +
                              " of '" + r.name + "' changed in GM (by DMA) after this core cached " + line_desc(L, r) +
                              "; the read returns the old value (DataCacheCleanAndInvalid before GetValue)" +
                              where(site));
    T v;
    std::memcpy(&v, L.data + o, sizeof(T));
    return v;
}

template <typename T>
inline void scalar_gm_write(const char* api, const void* base, T* p, const T& value, Site site) {
    gm_check(api, base, p, sizeof(T), true, false);
    State& s = st();
    s.scalar_gm++;
    const Region& r = gm_region(api, base);
    const uint8_t* q = reinterpret_cast<const uint8_t*>(p);
    uint32_t o = static_cast<uint32_t>(static_cast<uint64_t>(q - r.base) % kLine);
    if (o + sizeof(T) > kLine) fail(api, "a misaligned element straddles two 64-byte lines" + where(site));
    uintptr_t k = line_key(r, q);
    auto own = scalar_lines().find(k);
    if (own == scalar_lines().end()) {
        scalar_lines().emplace(k, LineOwner{s.block, s.slot, site});
    } else if (own->second.block != s.block || own->second.slot != s.slot) {
        uint64_t off = static_cast<uint64_t>(reinterpret_cast<uint8_t*>(k) - r.base);
        fail(api, core_name() + " stores into the 64-byte DataCache line at bytes [" +
                      std::to_string(off) + ", " + std::to_string(off + kLine) + ") of '" + r.name +
                      "', which " + core_name(own->second.block, own->second.slot) + " also stores into" +
                      ref(own->second.site) + ": each core writes the whole line back, so one overwrites the " +
                      "other at random. Only a core that owns the whole 64-byte line may store scalars to it; " +
                      "go through UB and DataCopyPad" + where(site));
    }
    bool hit;
    DLine& L = dc_line(r, q, hit);
    std::memcpy(L.data + o, &value, sizeof(T));
    for (uint32_t i = o; i < o + sizeof(T); i++) L.dirty |= uint64_t(1) << i;
    L.store = site;
}

// Queue slot: one buffer of a TQue, with its state machine Alloc -> EnQue -> DeQue -> Free.
enum SlotState { FREE = 0, ALLOCATED, QUEUED, DEQUEUED };
// The queue's own flags travel with the slot: EnQue sets the producer -> consumer flag that DeQue
// waits for; FreeTensor sets the consumer -> producer flag that the slot's next AllocTensor waits
// for (VECIN: MTE2 -> V, then V -> MTE2; VECOUT: V -> MTE3, then MTE3 -> V).
struct Slot {
    uint32_t offset = 0;
    SlotState state = FREE;
    uint32_t gen = 0;
    bool vecin = true;
    bool freed = false;  // a FreeTensor has set the flag the next AllocTensor waits for
    uint64_t enq[P_NUM] = {}, fre[P_NUM] = {};
    int8_t enq_id = -1, free_id = -1;  // the event ids the buffer holds from the pipe's pool (params.h)
};

XBEMU_RT void vec_count(uint64_t bytes) {
    st().vec_instrs++;
    st().vec_repeats += (bytes + 255) / 256;
}

// A LocalTensor without its element type: the model's checks that do not depend on it are compiled
// once, in the runtime (XBEMU_RT), and take this (AscendC::detail::ub(tensor)).
struct Ub {
    uint8_t* ptr;
    uint32_t size;  // elements
    Slot* slot;
    uint32_t gen;
    uint64_t elem;  // sizeof(T)
};

XBEMU_RT void tensor_live(const char* api, const void* ptr, const Slot* slot, uint32_t gen) {
    if (ptr == nullptr) fail(api, "uses a LocalTensor that was never allocated");
    if (slot && (slot->gen != gen || slot->state == FREE)) fail(api, "uses a LocalTensor after FreeTensor");
}
XBEMU_RT void tensor_index(const char* api, const void* ptr, const Slot* slot, uint32_t gen, uint32_t index,
                           uint32_t size) {
    tensor_live(api, ptr, slot, gen);
    if (index >= size)
        fail(api, "index " + std::to_string(index) + " past the tensor's " + std::to_string(size) + " elements");
}
XBEMU_RT void tensor_offset(uint32_t offset, uint32_t size) {
    if (offset > size)
        fail("LocalTensor::operator[]", "offset " + std::to_string(offset) + " past the tensor's " +
                                            std::to_string(size) + " elements");
}
// t[offset]
XBEMU_RT Ub ub_at(const Ub& t, uint64_t offset) {
    tensor_offset(static_cast<uint32_t>(offset), t.size);
    Ub r = t;
    r.ptr = t.ptr + static_cast<uint32_t>(offset) * t.elem;
    r.size = t.size - static_cast<uint32_t>(offset);
    return r;
}

}  // namespace xbemu

#include "params.h"

namespace xbemu {

// The TQue members (kind: QUE_VECIN or QUE_VECOUT, params.h), whatever the queue's element type.
XBEMU_RT Slot& que_alloc(std::vector<Slot>& slots, int kind) {
    for (auto& s : slots)
        if (s.state == FREE) {
            s.state = ALLOCATED;
            s.gen++;
            // the buffer's last consumer is done before its producer writes it again
            if (s.freed) learn(kind == QUE_VECIN ? P_MTE2 : P_V, s.fre);
            que_give(kind, true, s.free_id);  // waits for its free event, gives the id back
            return s;
        }
    if (slots.empty()) fail("TQue::AllocTensor", "the queue has no buffers (missing pipe.InitBuffer)");
    fail("TQue::AllocTensor", "all " + std::to_string(slots.size()) +
                                  " buffers of the queue are in use (missing FreeTensor?)");
}
XBEMU_RT Slot* que_own(const char* api, std::vector<Slot>& slots, const Slot* slot, uint32_t gen) {
    for (auto& s : slots)
        if (&s == slot) {
            if (s.gen != gen) fail(api, "tensor was already freed");
            return &s;
        }
    fail(api, "tensor does not belong to this queue");
}
XBEMU_RT void que_enque(std::vector<Slot>& slots, std::vector<Slot*>& queued, const Slot* slot, uint32_t gen,
                        int32_t depth, int kind) {
    Slot* s = que_own("TQue::EnQue", slots, slot, gen);
    if (s->state != ALLOCATED) fail("TQue::EnQue", "tensor is not freshly allocated");
    if ((int32_t)queued.size() >= (depth > 0 ? depth : 1))
        fail("TQue::EnQue", "more than depth=" + std::to_string(depth) + " tensors enqueued");
    s->state = QUEUED;
    snapshot(kind == QUE_VECIN ? P_MTE2 : P_V, s->enq);
    s->enq_id = que_take("TQue::EnQue", kind, false, "enqueued (EnQue) and not yet dequeued");
    queued.push_back(s);
}
XBEMU_RT Slot& que_deque(std::vector<Slot*>& queued, int kind) {
    if (queued.empty()) fail("TQue::DeQue", "the queue is empty (missing EnQue)");
    Slot* s = queued.front();
    queued.erase(queued.begin());
    s->state = DEQUEUED;
    learn(kind == QUE_VECIN ? P_V : P_MTE3, s->enq);
    que_give(kind, false, s->enq_id);
    return *s;
}
XBEMU_RT void que_free(std::vector<Slot>& slots, const Slot* slot, uint32_t gen, int kind) {
    Slot* s = que_own("TQue::FreeTensor", slots, slot, gen);
    if (s->state != DEQUEUED)
        fail("TQue::FreeTensor", s->state == FREE ? "tensor already freed" : "tensor freed before DeQue");
    s->state = FREE;
    s->freed = true;
    snapshot(kind == QUE_VECIN ? P_V : P_MTE3, s->fre);
    s->free_id = que_take("TQue::FreeTensor", kind, true, "freed (FreeTensor) and not yet allocated again");
}
XBEMU_RT void tbuf_get(uint32_t len, uint32_t size, uint32_t bufOffset, uint64_t elem) {
    if (len == 0) fail("TBuf::Get", "buffer has no memory (missing pipe.InitBuffer)");
    if (bufOffset + static_cast<uint64_t>(size) * elem > len)
        fail("TBuf::GetWithOffset", std::to_string(size) + " elements at byte " + std::to_string(bufOffset) +
                                        " exceed the " + std::to_string(len) + " B buffer");
}

}  // namespace xbemu

namespace AscendC {

enum class TPosition : uint8_t { GM, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, LCM = VECCALC, SPM,
                                 SHM = SPM, TSCM, C2PIPE2GM, C2PIPE2LOCAL, MAX };
using QuePosition = TPosition;
enum class HardEvent : uint8_t { MTE2_MTE1, MTE1_MTE2, MTE1_M, M_MTE1, MTE2_V, V_MTE2, MTE3_V, V_MTE3, M_V, V_M,
                                 V_V, MTE3_MTE1, MTE1_MTE3, MTE1_V, MTE2_M, M_MTE2, V_MTE1, M_FIX, FIX_M,
                                 MTE3_MTE2, MTE2_MTE3, S_V, V_S, S_MTE2, MTE2_S, S_MTE3, MTE3_S, MTE2_FIX,
                                 FIX_MTE2, FIX_S, M_S, FIX_MTE3, MTE1_FIX, FIX_MTE1, FIX_FIX, MAX };
enum class RoundMode : uint8_t { CAST_NONE = 0, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC, CAST_ODD };
enum class CMPMODE : uint8_t { LT = 0, GT, EQ, LE, GE, NE };
enum class SELMODE : uint8_t { VSEL_CMPMASK_SPR = 0, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };
enum class CacheLine : uint8_t { SINGLE_CACHE_LINE = 0, ENTIRE_DATA_CACHE };
enum class DcciDst : uint8_t { CACHELINE_ALL = 0, CACHELINE_UB, CACHELINE_OUT, CACHELINE_ATOMIC };
// GlobalTensor::SetL2CacheHint's modes (asc-devkit impl/basic_api/utils/kernel_utils_macros.h; rwMode is reserved)
enum class CacheMode { CACHE_MODE_DISABLE = 0, CACHE_MODE_NORMAL = 1, CACHE_MODE_LAST = 2, CACHE_MODE_PERSISTENT = 4 };
enum class CacheRwMode { READ = 1, WRITE = 2, RW = 3 };
enum pipe_t { PIPE_S = 0, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_FIX, PIPE_ALL };
enum event_t : int32_t { EVENT_ID0 = 0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7 };
using TEventID = int8_t;

// The block index: the AI Core's on its AIC and on the AIV of a MIX_AIC_1_1 kernel; on an AIV of a
// MIX_AIC_1_2 kernel the AIV's, 2 * AI Core + GetSubBlockIdx() (CATLASS divides it by
// GetSubBlockNum() there). GetBlockNum(): the launch's blockDim (AI Cores), on every core.
XBEMU_RT int64_t GetBlockIdx() { return xbemu::st().block_idx; }
XBEMU_RT int64_t GetBlockNum() { return xbemu::st().block_num; }
// An AIV's index in its AI Core (0 or 1), 0 on the AIC; the AIVs per AI Core seen from an AIV (2 in
// MIX_AIC_1_2, else 1), 1 on the AIC (GetSubBlockNum(ISASI) doc).
__aicore__ inline uint8_t GetSubBlockIdx() { return static_cast<uint8_t>(xbemu::st().sub_idx); }
__aicore__ inline int64_t GetSubBlockNum() { return xbemu::st().sub_num; }

template <typename T>
class GlobalTensor {
   public:
    using PrimType = T;
    void SetGlobalBuffer(__gm__ T* buffer, uint64_t bufferSize) {
        SetGlobalBuffer(buffer);
        size_ = bufferSize;
    }
    // Any address is accepted, as on the NPU (an address the kernel computed or read from a table,
    // too: xbemu::gm_address); an access through it is checked against the buffer it lies in.
    void SetGlobalBuffer(__gm__ T* buffer) {
        const xbemu::Region* in = nullptr;
        addr_ = reinterpret_cast<T*>(xbemu::gm_address(buffer, &in));
        base_ = in ? reinterpret_cast<T*>(in->base) : addr_;
        size_ = 0;
    }
    // Scalar GM access goes through the core's DataCache (xbemu::scalar_gm_read/write). The two
    // trailing parameters are the model's: the call site, for messages.
    T GetValue(const uint64_t offset, const char* file_ = __builtin_FILE(), int line_ = __builtin_LINE()) const {
        return xbemu::scalar_gm_read<T>("GlobalTensor::GetValue", base_, addr_ + offset, xbemu::Site{file_, line_});
    }
    void SetValue(const uint64_t offset, T value, const char* file_ = __builtin_FILE(),
                  int line_ = __builtin_LINE()) {
        xbemu::scalar_gm_write<T>("GlobalTensor::SetValue", base_, addr_ + offset, value, xbemu::Site{file_, line_});
    }
    uint64_t GetSize() const { return size_; }
    GlobalTensor operator[](const uint64_t offset) const {
        GlobalTensor g = *this;
        g.addr_ = addr_ + offset;
        return g;
    }
    __gm__ T* GetPhyAddr(const uint64_t offset = 0) const { return addr_ + offset; }
    // The L2 hint (asc-devkit GlobalTensor/SetL2CacheHint.md): CACHE_MODE_DISABLE keeps the tensor's
    // accesses out of L2. The mode stays with the tensor, its views and a later SetGlobalBuffer (which
    // applies it to the new address, impl/basic_api/kernel_tensor_impl.h). Atlas A2/A3 take DISABLE and
    // NORMAL (PERSISTENT is announced for 950; LAST is undocumented). The data the model moves is the
    // same either way; the profile build counts the bytes read through a DISABLE tensor (profile_shim.py).
    template <CacheRwMode rwMode = CacheRwMode::RW>
    void SetL2CacheHint(CacheMode mode, const char* file_ = __builtin_FILE(), int line_ = __builtin_LINE()) {
        static_assert(rwMode == CacheRwMode::RW, "SetL2CacheHint: rwMode is reserved, use the default (RW)");
        if (mode != CacheMode::CACHE_MODE_DISABLE && mode != CacheMode::CACHE_MODE_NORMAL)
            xbemu::fail("GlobalTensor::SetL2CacheHint",
                        "mode " + std::to_string(static_cast<int>(mode)) + " is not one Atlas A2/A3 supports "
                        "(CACHE_MODE_DISABLE, CACHE_MODE_NORMAL)" + xbemu::where(xbemu::Site{file_, line_}));
        l2_bypass_ = mode == CacheMode::CACHE_MODE_DISABLE;
    }
    // model state, not API
    T* base_ = nullptr;
    T* addr_ = nullptr;
    uint64_t size_ = 0;
    bool l2_bypass_ = false;
};

template <typename T>
class LocalTensor {
   public:
    using PrimType = T;
    LocalTensor() = default;
    T GetValue(const uint32_t index) const {
        check("LocalTensor::GetValue", index);
        xbemu::ub_read("LocalTensor::GetValue", xbemu::P_S, ptr_ + index, sizeof(T));
        xbemu::st().scalar_ub++;
        return ptr_[index];
    }
    template <typename S>
    void SetValue(const uint32_t index, const S value) const {
        check("LocalTensor::SetValue", index);
        xbemu::ub_write("LocalTensor::SetValue", xbemu::P_S, ptr_ + index, sizeof(T));
        xbemu::st().scalar_ub++;
        ptr_[index] = static_cast<T>(value);
    }
    LocalTensor operator[](const uint32_t offset) const {
        xbemu::tensor_offset(offset, size_);
        LocalTensor t = *this;
        t.ptr_ = ptr_ + offset;
        t.size_ = size_ - offset;
        return t;
    }
    template <typename U>
    LocalTensor<U> ReinterpretCast() const {
        LocalTensor<U> t;
        t.ptr_ = reinterpret_cast<U*>(ptr_);
        t.size_ = static_cast<uint32_t>(size_ * sizeof(T) / sizeof(U));
        t.slot_ = slot_;
        t.gen_ = gen_;
        return t;
    }
    uint32_t GetSize() const { return size_; }
    void SetSize(const uint32_t size) { size_ = size; }
    uint64_t GetPhyAddr() const { return xbemu::ub_off(ptr_); }
    // model state, not API
    void check(const char* api, uint32_t index) const { xbemu::tensor_index(api, ptr_, slot_, gen_, index, size_); }
    void live(const char* api) const { xbemu::tensor_live(api, ptr_, slot_, gen_); }
    T* ptr_ = nullptr;
    uint32_t size_ = 0;
    xbemu::Slot* slot_ = nullptr;
    uint32_t gen_ = 0;
};

namespace detail {

template <typename T>
inline xbemu::Ub ub(const LocalTensor<T>& t) {
    return xbemu::Ub{reinterpret_cast<uint8_t*>(t.ptr_), t.size_, t.slot_, t.gen_, sizeof(T)};
}

// A pipe touches n elements of a tensor; checks liveness, queue state, alignment and visibility.
XBEMU_RT void ub_touch(const char* api, const xbemu::Ub& t, int pipe, bool write, uint64_t n, bool aligned = true) {
    xbemu::tensor_live(api, t.ptr, t.slot, t.gen);
    const int kt = xbemu::st().kernel_type;
    if (kt == KERNEL_TYPE_AIC_ONLY || kt == KERNEL_TYPE_MIX_AIC_1_0)
        xbemu::fail(api, "vector/UB API in a cube-only kernel (KERNEL_TYPE_AIC_ONLY and KERNEL_TYPE_MIX_AIC_1_0 "
                         "start no vector core)");
    if (n > t.size)
        xbemu::fail(api, std::to_string(n) + " elements exceed the tensor's " + std::to_string(t.size));
    if (aligned && xbemu::ub_off(t.ptr) % 32)
        xbemu::fail(api, "UB address " + xbemu::hexaddr(xbemu::ub_off(t.ptr)) + " is not 32-byte aligned");
    if (t.slot) {
        xbemu::SlotState s = t.slot->state;
        bool ok;
        if (t.slot->vecin)
            ok = pipe == xbemu::P_MTE2 ? s == xbemu::ALLOCATED : (pipe == xbemu::P_S ? s != xbemu::QUEUED
                                                                                     : s == xbemu::DEQUEUED);
        else
            ok = pipe == xbemu::P_MTE3 ? s == xbemu::DEQUEUED : (s == xbemu::ALLOCATED || (pipe == xbemu::P_S &&
                                                                                          s == xbemu::DEQUEUED));
        if (!ok)
            xbemu::fail(api, std::string("pipe ") + xbemu::pipe_name(pipe) + " uses a " +
                                 (t.slot->vecin ? "VECIN" : "VECOUT") +
                                 " queue tensor in the wrong state (Alloc -> EnQue -> DeQue -> Free)");
    }
    if (write)
        xbemu::ub_write(api, pipe, t.ptr, n * t.elem);
    else
        xbemu::ub_read(api, pipe, t.ptr, n * t.elem);
}
template <typename T>
inline void touch(const char* api, const LocalTensor<T>& t, int pipe, bool write, uint64_t n, bool aligned = true) {
    ub_touch(api, ub(t), pipe, write, n, aligned);
}

template <typename T, typename... Us>
constexpr bool one_of() { return (std::is_same<T, Us>::value || ...); }
template <typename T>
inline float tof(T v) { return static_cast<float>(v); }

// Integer vector arithmetic is integer arithmetic on the hardware (int16/int32 lanes), wrapping in
// two's complement; only half and float compute in floating point. Unsigned types of at least int's
// width keep the wrap defined in C++ (a uint16 product would otherwise overflow int).
template <typename T, bool = (sizeof(T) < sizeof(unsigned))>
struct wrap_type { using type = unsigned; };  // (bool included: make_unsigned<bool> is ill-formed)
template <typename T>
struct wrap_type<T, false> { using type = typename std::make_unsigned<T>::type; };
template <typename T>
inline T arith(char op, T x, T y) {
    if constexpr (std::is_integral<T>::value) {
        using U = typename wrap_type<T>::type;
        U a = static_cast<U>(x), b = static_cast<U>(y);
        return static_cast<T>(op == '+' ? a + b : op == '-' ? a - b : a * b);
    } else {
        float a = tof(x), b = tof(y);
        return static_cast<T>(op == '+' ? a + b : op == '-' ? a - b : a * b);
    }
}
// Max/Min keep the first operand when it is NaN (floating point) or larger/smaller.
template <typename T>
inline bool greater(T x, T y) {
    if constexpr (std::is_integral<T>::value) {
        return x > y;
    } else {
        return std::isnan(tof(x)) || tof(x) > tof(y);
    }
}
template <typename T>
inline bool less(T x, T y) {
    if constexpr (std::is_integral<T>::value) {
        return x < y;
    } else {
        return std::isnan(tof(x)) || tof(x) < tof(y);
    }
}

template <typename T>
constexpr bool is_vec_arith() {
    return std::is_same<T, half>::value || std::is_same<T, float>::value || std::is_same<T, int16_t>::value ||
           std::is_same<T, int32_t>::value;
}
template <typename T>
constexpr bool is_vec_float() { return std::is_same<T, half>::value || std::is_same<T, float>::value; }

template <typename T>
inline void count_ok(const char* api, int64_t count) {
    if (count < 0) xbemu::fail(api, "negative count");
    xbemu::vec_count(static_cast<uint64_t>(count) * sizeof(T));
}

}  // namespace detail

// ----- TPipe / TQue / TBuf -------------------------------------------------------------------

template <TPosition pos, int32_t depth, auto mask = 0>
class TQue {
   public:
    template <typename T>
    LocalTensor<T> AllocTensor() { return make<T>(xbemu::que_alloc(slots_, kind())); }
    template <typename T>
    bool EnQue(const LocalTensor<T>& tensor) {
        xbemu::que_enque(slots_, queued_, tensor.slot_, tensor.gen_, depth, kind());
        return true;
    }
    template <typename T>
    LocalTensor<T> DeQue() { return make<T>(xbemu::que_deque(queued_, kind())); }
    template <typename T>
    void FreeTensor(LocalTensor<T>& tensor) { xbemu::que_free(slots_, tensor.slot_, tensor.gen_, kind()); }
    bool VacantInQue() { return queued_.empty(); }
    static constexpr int kind() { return pos == TPosition::VECIN ? xbemu::QUE_VECIN : xbemu::QUE_VECOUT; }
    bool HasTensorInQue() { return !queued_.empty(); }
    // model state
    std::vector<xbemu::Slot> slots_;
    std::vector<xbemu::Slot*> queued_;
    uint32_t len_ = 0;

   private:
    template <typename T>
    LocalTensor<T> make(xbemu::Slot& s) {
        LocalTensor<T> t;
        t.ptr_ = reinterpret_cast<T*>(xbemu::st().ub.data() + s.offset);
        t.size_ = len_ / sizeof(T);
        t.slot_ = &s;
        t.gen_ = s.gen;
        return t;
    }
};

template <TPosition pos = TPosition::LCM>
class TBuf {
   public:
    template <typename T>
    LocalTensor<T> Get() { return Get<T>(len_ / sizeof(T)); }
    template <typename T>
    LocalTensor<T> Get(uint32_t len) { return GetWithOffset<T>(len, 0); }
    template <typename T>
    LocalTensor<T> GetWithOffset(uint32_t size, uint32_t bufOffset) {
        xbemu::tbuf_get(len_, size, bufOffset, sizeof(T));
        LocalTensor<T> t;
        t.ptr_ = reinterpret_cast<T*>(xbemu::st().ub.data() + offset_ + bufOffset);
        t.size_ = size;
        return t;
    }
    uint32_t offset_ = 0, len_ = 0;
};

class TPipe {
   public:
    TPipe();
    ~TPipe();
    TPipe(const TPipe&) = delete;
    TPipe& operator=(const TPipe&) = delete;

    template <class T>
    bool InitBuffer(T& que, uint8_t num, uint32_t len) {
        init_que(que.slots_, que.len_, num, len, is_vecin<T>());
        return true;
    }
    template <TPosition pos>
    bool InitBuffer(TBuf<pos>& buf, uint32_t len) {
        init_buf(buf.offset_, buf.len_, len);
        return true;
    }
    // The first id of the event that the pool does not hold; it stays free (asc-devkit
    // impl/basic_api/kernel_tpipe_impl.h: FetchEventID reads the pool, AllocEventID also marks the id).
    TEventID FetchEventID(HardEvent evt) {
        return static_cast<TEventID>(xbemu::pool_first_free("TPipe::FetchEventID", static_cast<int>(evt)));
    }
    template <HardEvent evt>
    TEventID FetchEventID() { return FetchEventID(evt); }
    template <HardEvent evt>
    TEventID AllocEventID() {
        return static_cast<TEventID>(xbemu::pool_take("TPipe::AllocEventID", static_cast<int>(evt), xbemu::ID_USER,
                                                      "AllocEventID (until ReleaseEventID)"));
    }
    template <HardEvent evt>
    void ReleaseEventID(TEventID id) { release_event(static_cast<int>(evt), id); }
    void Destroy() {}
    void Reset() {}

   private:
    template <class T>
    static constexpr bool is_vecin() { return is_vecin_tag(static_cast<T*>(nullptr)); }
    template <TPosition p, int32_t d, auto m>
    static constexpr bool is_vecin_tag(TQue<p, d, m>*) { return p == TPosition::VECIN; }
    xbemu::EventPool pool_;
    xbemu::State* owner_ = nullptr;
    void init_que(std::vector<xbemu::Slot>& slots, uint32_t& que_len, uint8_t num, uint32_t len, bool vecin);
    void init_buf(uint32_t& offset, uint32_t& buf_len, uint32_t len);
    void release_event(int e, TEventID id);
    void reserve(uint64_t bytes, uint32_t nbuf);
};

XBEMU_RT TPipe::TPipe() {
    if (xbemu::st().pipe_alive) xbemu::fail("TPipe::TPipe", "a second TPipe in one kernel");
    xbemu::st().pipe_alive = true;
    owner_ = &xbemu::st();
    xbemu::event_pools()[owner_] = &pool_;
    xbemu::reserve_cube_ids();
}
XBEMU_RT TPipe::~TPipe() {
    xbemu::st().pipe_alive = false;
    xbemu::event_pools().erase(owner_);
}
XBEMU_RT void TPipe::init_que(std::vector<xbemu::Slot>& slots, uint32_t& que_len, uint8_t num, uint32_t len,
                              bool vecin) {
    xbemu::State& s = xbemu::st();
    uint32_t rounded = (len + 31) / 32 * 32;
    if (num == 0 || len == 0) xbemu::fail("TPipe::InitBuffer", "zero buffers or zero length");
    if (!slots.empty()) xbemu::fail("TPipe::InitBuffer", "queue initialised twice");
    // (the queue buffers' event ids come from the pipe's pool as they are used: params.h)
    (vecin ? s.que_buffers_in : s.que_buffers_out) += num;
    reserve(static_cast<uint64_t>(rounded) * num, num);
    que_len = rounded;
    slots.resize(num);
    for (uint32_t i = 0; i < num; i++) {
        slots[i].offset = s.ub_used - rounded * (num - i);
        slots[i].vecin = vecin;
    }
}
XBEMU_RT void TPipe::init_buf(uint32_t& offset, uint32_t& buf_len, uint32_t len) {
    if (buf_len) xbemu::fail("TPipe::InitBuffer", "TBuf initialised twice");
    uint32_t rounded = (len + 31) / 32 * 32;
    reserve(rounded, 1);
    offset = xbemu::st().ub_used - rounded;
    buf_len = rounded;
}
XBEMU_RT void TPipe::release_event(int e, TEventID id) {
    if (id < 0 || id >= xbemu::kEventIds || pool_.held[e][id] != xbemu::ID_USER)
        xbemu::fail("TPipe::ReleaseEventID", "id " + std::to_string(id) + " of HardEvent::" +
                                                 xbemu::hard_event_name(e) + " was not taken by AllocEventID");
    xbemu::pool_give(e, id);
}
XBEMU_RT void TPipe::reserve(uint64_t bytes, uint32_t nbuf) {
    xbemu::State& s = xbemu::st();
    s.buffers += nbuf;
    if (s.buffers > 64) xbemu::fail("TPipe::InitBuffer", "more than 64 buffers in one kernel");
    if (s.ub_used + bytes > s.ub_usable)
        xbemu::fail("TPipe::InitBuffer", "unified buffer overflow: " + std::to_string(s.ub_used + bytes) +
                                             " B requested, " + std::to_string(s.ub_usable) + " B usable");
    s.ub_used += static_cast<uint32_t>(bytes);
}

// ----- synchronisation -----------------------------------------------------------------------

namespace detail {
XBEMU_RT bool event_pipes(HardEvent e, int& from, int& to) {
    switch (e) {
        case HardEvent::MTE2_V: from = xbemu::P_MTE2; to = xbemu::P_V; return true;
        case HardEvent::V_MTE3: from = xbemu::P_V; to = xbemu::P_MTE3; return true;
        case HardEvent::V_S: from = xbemu::P_V; to = xbemu::P_S; return true;
        case HardEvent::S_V: from = xbemu::P_S; to = xbemu::P_V; return true;
        case HardEvent::MTE2_S: from = xbemu::P_MTE2; to = xbemu::P_S; return true;
        case HardEvent::S_MTE3: from = xbemu::P_S; to = xbemu::P_MTE3; return true;
        case HardEvent::MTE3_S: from = xbemu::P_MTE3; to = xbemu::P_S; return true;
        case HardEvent::S_MTE2: from = xbemu::P_S; to = xbemu::P_MTE2; return true;
        case HardEvent::V_MTE2: from = xbemu::P_V; to = xbemu::P_MTE2; return true;
        case HardEvent::MTE3_V: from = xbemu::P_MTE3; to = xbemu::P_V; return true;
        case HardEvent::MTE3_MTE2: from = xbemu::P_MTE3; to = xbemu::P_MTE2; return true;
        case HardEvent::V_V: from = xbemu::P_V; to = xbemu::P_V; return true;
        case HardEvent::MTE2_MTE3: from = xbemu::P_MTE2; to = xbemu::P_MTE3; return true;
        // the Cube's (AIC) events: asc-devkit impl/basic_api/kernel_event.h, HardEventAic and SetFlagImpl
        case HardEvent::MTE2_MTE1: from = xbemu::P_MTE2; to = xbemu::P_MTE1; return true;
        case HardEvent::MTE1_MTE2: from = xbemu::P_MTE1; to = xbemu::P_MTE2; return true;
        case HardEvent::MTE1_M: from = xbemu::P_MTE1; to = xbemu::P_M; return true;
        case HardEvent::M_MTE1: from = xbemu::P_M; to = xbemu::P_MTE1; return true;
        case HardEvent::MTE3_MTE1: from = xbemu::P_MTE3; to = xbemu::P_MTE1; return true;
        case HardEvent::MTE1_MTE3: from = xbemu::P_MTE1; to = xbemu::P_MTE3; return true;
        case HardEvent::MTE2_M: from = xbemu::P_MTE2; to = xbemu::P_M; return true;
        case HardEvent::M_MTE2: from = xbemu::P_M; to = xbemu::P_MTE2; return true;
        case HardEvent::M_FIX: from = xbemu::P_M; to = xbemu::P_FIX; return true;
        case HardEvent::FIX_M: from = xbemu::P_FIX; to = xbemu::P_M; return true;
        case HardEvent::MTE2_FIX: from = xbemu::P_MTE2; to = xbemu::P_FIX; return true;
        case HardEvent::FIX_MTE2: from = xbemu::P_FIX; to = xbemu::P_MTE2; return true;
        case HardEvent::FIX_S: from = xbemu::P_FIX; to = xbemu::P_S; return true;
        case HardEvent::M_S: from = xbemu::P_M; to = xbemu::P_S; return true;
        case HardEvent::FIX_MTE3: from = xbemu::P_FIX; to = xbemu::P_MTE3; return true;
        case HardEvent::MTE1_FIX: from = xbemu::P_MTE1; to = xbemu::P_FIX; return true;
        case HardEvent::FIX_MTE1: from = xbemu::P_FIX; to = xbemu::P_MTE1; return true;
        case HardEvent::FIX_FIX: from = xbemu::P_FIX; to = xbemu::P_FIX; return true;
        default: return false;
    }
}
// On Atlas A2 an AIV has the events between S, V, MTE2 and MTE3, an AIC those between S, MTE1, MTE2, MTE3, M and
// FIX (asc-devkit impl/basic_api/kernel_event.h, HardEventAiv / HardEventAic: EventToIndex maps any other to MAX).
XBEMU_RT void event_on_core(const char* api, HardEvent e, int from, int to) {
    const int role = xbemu::st().role;
    const bool vec = from <= xbemu::P_MTE3 && to <= xbemu::P_MTE3;
    const bool cube = from != xbemu::P_V && to != xbemu::P_V;
    if ((role == xbemu::ROLE_AIV && !vec) || (role == xbemu::ROLE_AIC && !cube))
        xbemu::fail(api, std::string("HardEvent::") + xbemu::hard_event_name(static_cast<int>(e)) + " is not an " +
                             (role == xbemu::ROLE_AIV ? "AIV" : "AIC") + " event on Atlas A2 (asc-devkit "
                             "impl/basic_api/kernel_event.h, HardEvent" + (role == xbemu::ROLE_AIV ? "Aiv" : "Aic") + ")");
}
XBEMU_RT void set_flag(HardEvent event, int32_t eventID) {
    int from, to;
    if (!event_pipes(event, from, to)) xbemu::fail("SetFlag", "event not modelled by the emulator");
    event_on_core("SetFlag", event, from, to);
    xbemu::arg_in_range("SetFlag", "eventID", eventID, 0, xbemu::kEventIds - 1,
                        "impl/basic_api/kernel_event.h: eventID in [0, QUE_MAX_EVENT), 8 on Atlas A2");
    xbemu::explicit_flag_ok("SetFlag", static_cast<int>(event), eventID);
    uint64_t& f = xbemu::st().flags[static_cast<int>(event)][eventID];
    if (f) xbemu::fail("SetFlag", "same event and id set twice without a WaitFlag in between");
    f = xbemu::st().seq[from] + 1;
    xbemu::snapshot(from, xbemu::st().carry[static_cast<int>(event)][eventID]);
}
XBEMU_RT void wait_flag(HardEvent event, int32_t eventID) {
    int from, to;
    if (!event_pipes(event, from, to)) xbemu::fail("WaitFlag", "event not modelled by the emulator");
    event_on_core("WaitFlag", event, from, to);
    xbemu::arg_in_range("WaitFlag", "eventID", eventID, 0, xbemu::kEventIds - 1,
                        "impl/basic_api/kernel_event.h: eventID in [0, QUE_MAX_EVENT), 8 on Atlas A2");
    xbemu::explicit_flag_ok("WaitFlag", static_cast<int>(event), eventID);
    uint64_t& f = xbemu::st().flags[static_cast<int>(event)][eventID];
    if (!f) xbemu::fail("WaitFlag", "waits for an event id that was never set (unpaired SetFlag/WaitFlag)");
    xbemu::learn(to, xbemu::st().carry[static_cast<int>(event)][eventID]);
    f = 0;
}
}  // namespace detail

template <HardEvent event>
inline void SetFlag(int32_t eventID) { detail::set_flag(event, eventID); }

template <HardEvent event>
inline void WaitFlag(int32_t eventID) { detail::wait_flag(event, eventID); }

template <pipe_t pipe>
inline void PipeBarrier() {
    static_assert(pipe != PIPE_S, "PipeBarrier<PIPE_S> is not allowed");
    if (pipe == PIPE_ALL)
        for (int a = 0; a < xbemu::P_NUM; a++)
            for (int b = 0; b < xbemu::P_NUM; b++) xbemu::make_visible(a, b);
    // one pipe's earlier instructions complete before its next one
    if (pipe == PIPE_V) xbemu::make_visible(xbemu::P_V, xbemu::P_V);
    if (pipe == PIPE_MTE2) xbemu::make_visible(xbemu::P_MTE2, xbemu::P_MTE2);
    if (pipe == PIPE_MTE3) xbemu::make_visible(xbemu::P_MTE3, xbemu::P_MTE3);
    if (pipe == PIPE_MTE1) xbemu::make_visible(xbemu::P_MTE1, xbemu::P_MTE1);
    if (pipe == PIPE_M) xbemu::make_visible(xbemu::P_M, xbemu::P_M);
    if (pipe == PIPE_FIX) xbemu::make_visible(xbemu::P_FIX, xbemu::P_FIX);
}

// SINGLE_CACHE_LINE cleans and invalidates the one 64-byte line holding dst's address (written
// back whole); ENTIRE_DATA_CACHE the whole DCache (dst's address is ignored). CACHELINE_ALL and
// CACHELINE_OUT keep the DCache coherent with GM; CACHELINE_ATOMIC is not supported on Atlas A2.
template <typename T, CacheLine entireType, DcciDst dcciDst>
inline void DataCacheCleanAndInvalid(const GlobalTensor<T>& dst) {
    static_assert(dcciDst != DcciDst::CACHELINE_ATOMIC, "DataCacheCleanAndInvalid: CACHELINE_ATOMIC is not "
                                                        "supported on Atlas A2");
    if (dcciDst == DcciDst::CACHELINE_UB) return;  // the lines cached from UB; the model caches none
    xbemu::dcci("DataCacheCleanAndInvalid", dst.base_, dst.addr_, entireType == CacheLine::ENTIRE_DATA_CACHE);
}
template <typename T, CacheLine entireType>
inline void DataCacheCleanAndInvalid(const GlobalTensor<T>& dst) {
    DataCacheCleanAndInvalid<T, entireType, DcciDst::CACHELINE_OUT>(dst);
}
template <typename T, CacheLine entireType, DcciDst dcciDst>
inline void DataCacheCleanAndInvalid(const LocalTensor<T>& dst) {
    static_assert(dcciDst != DcciDst::CACHELINE_ATOMIC, "DataCacheCleanAndInvalid: CACHELINE_ATOMIC is not "
                                                        "supported on Atlas A2");
    dst.live("DataCacheCleanAndInvalid");  // scalar UB access is not cached in the model: nothing to do
}

// The data-copy atomics (ADK docs/zh/api/SIMD-API/基础API/原子操作/SetAtomicAdd.md, SetAtomicMax(ISASI).md,
// SetAtomicMin(ISASI).md): later copies to GM combine with what GM holds, element by element, in T:
// int8_t, int16_t, half, bfloat16_t, int32_t or float on Atlas A2. A copy of another type while one is
// on, or a NaN under max/min (what the hardware does then is not documented), stops the model.
namespace detail {
template <typename T>
inline const void* atomic_tag() {
    static const char tag = 0;
    return &tag;
}
template <typename T>
inline void set_atomic(const char* api, int kind) {
    static_assert(std::is_same<T, int8_t>::value || std::is_same<T, int16_t>::value || std::is_same<T, half>::value ||
                      std::is_same<T, bfloat16_t>::value || std::is_same<T, int32_t>::value ||
                      std::is_same<T, float>::value,
                  "SetAtomicAdd/Max/Min: T must be int8_t, int16_t, half, bfloat16_t, int32_t or float on Atlas A2");
    if (xbemu::st().atomic) xbemu::fail(api, "atomic mode already on (DisableDmaAtomic first)");
    xbemu::st().atomic = kind;
    xbemu::st().atomic_type = atomic_tag<T>();
}
}  // namespace detail

template <typename T>
inline void SetAtomicAdd() { detail::set_atomic<T>("SetAtomicAdd", 1); }
template <typename T>
inline void SetAtomicMax() { detail::set_atomic<T>("SetAtomicMax", 2); }
template <typename T>
inline void SetAtomicMin() { detail::set_atomic<T>("SetAtomicMin", 3); }
#if XBEMU_CANN_VERSION >= 9
XBEMU_RT void DisableDmaAtomic() { xbemu::st().atomic = 0; }
#endif
// CANN 9 deprecates it for DisableDmaAtomic (still declared there).
XBEMU_RT void SetAtomicNone() { xbemu::st().atomic = 0; }

// ----- data movement -------------------------------------------------------------------------

struct DataCopyParams {
    DataCopyParams() = default;
    DataCopyParams(const xbemu::Field<uint16_t> count, const xbemu::Field<uint16_t> len,
                   const xbemu::Field<uint16_t> srcStrideIn, const xbemu::Field<uint16_t> dstStrideIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn) {}
    xbemu::Field<uint16_t> blockCount = 1;
    xbemu::Field<uint16_t> blockLen = 0;
    xbemu::Field<uint16_t> srcStride = 0;
    xbemu::Field<uint16_t> dstStride = 0;
};

struct DataCopyExtParams {
    DataCopyExtParams() = default;
    DataCopyExtParams(const xbemu::Field<uint16_t> count, const xbemu::Field<uint32_t> len,
                      const xbemu::Field<uint32_t> srcStrideIn, const xbemu::Field<uint32_t> dstStrideIn,
                      const xbemu::Field<uint32_t> rsvIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn), rsv(rsvIn) {}
    xbemu::Field<uint16_t> blockCount = 1;
    xbemu::Field<uint32_t> blockLen = 0;
    xbemu::Field<uint32_t> srcStride = 0;
    xbemu::Field<uint32_t> dstStride = 0;
    xbemu::Field<uint32_t> rsv = 0;
};

namespace detail {
// The documented ranges (params.h): DataCopyParams of the GM <-> UB copies (and UB -> UB, L1 -> C2),
// DataCopyExtParams of DataCopyPad.
XBEMU_RT void check_params(const char* api, const DataCopyParams& p) {
    const char* doc = "docs GM与UB高维切分数据搬运(DataCopy).md, DataCopyParams table";
    xbemu::in_range(api, "DataCopyParams.blockCount", p.blockCount, 0, 4095, doc);
    xbemu::in_range(api, "DataCopyParams.blockLen", p.blockLen, 0, 65535, doc);
    xbemu::in_range(api, "DataCopyParams.srcStride", p.srcStride, 0, 65535, doc);
    xbemu::in_range(api, "DataCopyParams.dstStride", p.dstStride, 0, 65535, doc);
}
XBEMU_RT void check_params(const char* api, const DataCopyExtParams& p) {
    const char* doc = "docs GMToUB非对齐数据搬运(DataCopyPad).md and UBToGM非对齐数据搬运(DataCopyPad).md, "
                      "DataCopyExtParams table";
    xbemu::in_range(api, "DataCopyExtParams.blockCount", p.blockCount, 0, 4095, doc);
    xbemu::in_range(api, "DataCopyExtParams.blockLen", p.blockLen, 0, 2097151, doc);
    xbemu::in_range(api, "DataCopyExtParams.srcStride", p.srcStride, 0, 4294967295LL, doc);
    xbemu::in_range(api, "DataCopyExtParams.dstStride", p.dstStride, 0, 4294967295LL, doc);
}
}  // namespace detail

template <typename T>
struct DataCopyPadExtParams {
    DataCopyPadExtParams() = default;
    DataCopyPadExtParams(const bool isPadValue, const uint8_t leftPadValue, const uint8_t rightPadValue, T padValue)
        : isPad(isPadValue), leftPadding(leftPadValue), rightPadding(rightPadValue), paddingValue(padValue) {}
    bool isPad = false;
    uint8_t leftPadding = 0;
    uint8_t rightPadding = 0;
    T paddingValue = T(0);
};

namespace detail {
XBEMU_RT void count_copy_ok(const char* api, uint32_t count, uint64_t elem) {
    if ((static_cast<uint64_t>(count) * elem) % 32)
        xbemu::fail(api, "count " + std::to_string(count) + " x " + std::to_string(elem) + " B = " +
                             std::to_string(count * elem) +
                             " B is not a multiple of 32 B (the hardware would round it down); use DataCopyPad");
}

// The element types of the data-copy atomics, numbered for the runtime's gm_store (0: none of them).
template <typename T>
constexpr int atomic_code() {
    return one_of<T, int8_t>() ? 1 : one_of<T, int16_t>() ? 2 : one_of<T, half>() ? 3 : one_of<T, bfloat16_t>() ? 4
           : one_of<T, int32_t>() ? 5 : one_of<T, float>() ? 6 : 0;
}

// A GlobalTensor without its element type (and the atomic tag and number of that type).
struct Gm {
    const void* base;
    uint8_t* addr;
    uint64_t elem;
    const void* tag;
    int code;
};
template <typename T>
inline Gm gm(const GlobalTensor<T>& g) {
    return Gm{g.base_, reinterpret_cast<uint8_t*>(g.addr_), sizeof(T), atomic_tag<T>(), atomic_code<T>()};
}

template <typename T>
inline void atomic_store(const char* api, int kind, T* dst, const T* src, uint64_t n) {
    static const char* names[] = {"", "SetAtomicAdd", "SetAtomicMax", "SetAtomicMin"};
    for (uint64_t i = 0; i < n; i++) {
        T& g = dst[i];
        if (kind == 1) {
            g = arith('+', g, src[i]);  // integers wrap, half/bfloat16 round once from float
            continue;
        }
        if constexpr (!std::is_integral<T>::value) {
            if (std::isnan(tof(g)) || std::isnan(tof(src[i])))
                xbemu::fail(api, std::string(names[kind]) + " of a NaN: the hardware's result is not documented");
        }
        if (kind == 2 ? greater(src[i], g) : less(src[i], g)) g = src[i];
    }
}

// n elements from src to GM at element off of dst, by MTE3 instruction seq; under a data-copy atomic
// they combine with GM's elements in their type.
XBEMU_RT void gm_store(const char* api, const Gm& dst, uint64_t off, const uint8_t* src, uint64_t n, uint64_t seq,
                       xbemu::Site site) {
    uint8_t* to = dst.addr + off * dst.elem;
    xbemu::gm_check(api, dst.base, to, n * dst.elem, true, true, site);
    xbemu::mte3_gm_write(api, to, n * dst.elem, seq);
    if (int kind = xbemu::st().atomic) {
        static const char* names[] = {"", "SetAtomicAdd", "SetAtomicMax", "SetAtomicMin"};
        if (xbemu::st().atomic_type != dst.tag)
            xbemu::fail(api, std::string("copies another type than the one ") + names[kind] + " was set for");
        switch (dst.code) {  // the tag matched: the type is one set_atomic takes
            case 1: atomic_store(api, kind, reinterpret_cast<int8_t*>(to), reinterpret_cast<const int8_t*>(src), n); break;
            case 2: atomic_store(api, kind, reinterpret_cast<int16_t*>(to), reinterpret_cast<const int16_t*>(src), n); break;
            case 3: atomic_store(api, kind, reinterpret_cast<half*>(to), reinterpret_cast<const half*>(src), n); break;
            case 4:
                atomic_store(api, kind, reinterpret_cast<bfloat16_t*>(to), reinterpret_cast<const bfloat16_t*>(src), n);
                break;
            case 5: atomic_store(api, kind, reinterpret_cast<int32_t*>(to), reinterpret_cast<const int32_t*>(src), n); break;
            case 6: atomic_store(api, kind, reinterpret_cast<float*>(to), reinterpret_cast<const float*>(src), n); break;
            default: xbemu::fail(api, "a data-copy atomic of a type it does not take");
        }
    } else {
        std::memcpy(to, src, n * dst.elem);
    }
}

// The DataCopy / DataCopyPad forms below, whatever the element type (dst.elem == src.elem).
XBEMU_RT void copy_in(const char* api, const xbemu::Ub& dst, const Gm& src, uint32_t count, xbemu::Site site) {
    count_copy_ok(api, count, dst.elem);
    xbemu::gm_check(api, src.base, src.addr, uint64_t(count) * dst.elem, false, true, site);
    xbemu::dma_call(false, uint64_t(count) * dst.elem);
    ub_touch(api, dst, xbemu::P_MTE2, true, count);
    std::memcpy(dst.ptr, src.addr, uint64_t(count) * dst.elem);
}
XBEMU_RT void copy_out(const char* api, const Gm& dst, const xbemu::Ub& src, uint32_t count, xbemu::Site site) {
    count_copy_ok(api, count, src.elem);
    const uint64_t seq = xbemu::mte3_issue();  // numbered before its UB reads (ub_read)
    ub_touch(api, src, xbemu::P_MTE3, false, count);
    gm_store(api, dst, 0, src.ptr, count, seq, site);
    xbemu::dma_call(true, uint64_t(count) * src.elem);
}
XBEMU_RT void copy_ub(const char* api, const xbemu::Ub& dst, const xbemu::Ub& src, uint32_t count) {
    count_copy_ok(api, count, dst.elem);
    ub_touch(api, src, xbemu::P_V, false, count);
    ub_touch(api, dst, xbemu::P_V, true, count);
    std::memmove(dst.ptr, src.ptr, uint64_t(count) * dst.elem);
    xbemu::vec_count(uint64_t(count) * dst.elem);
}
XBEMU_RT void copy_in(const char* api, const xbemu::Ub& dst, const Gm& src, const DataCopyParams& p,
                      xbemu::Site site) {
    const uint64_t e = dst.elem;
    check_params(api, p);
    if (p.blockCount > 4095) xbemu::fail(api, "blockCount above 4095");
    uint64_t blk = uint64_t(p.blockLen) * 32 / e;
    xbemu::dma_call(false, uint64_t(p.blockCount) * blk * e);
    for (uint32_t i = 0; i < p.blockCount; i++) {
        uint64_t so = i * (blk + uint64_t(p.srcStride) * 32 / e);
        uint64_t d = i * (blk + uint64_t(p.dstStride) * 32 / e);
        xbemu::gm_check(api, src.base, src.addr + so * e, blk * e, false, true, site);
        ub_touch(api, xbemu::ub_at(dst, static_cast<uint32_t>(d)), xbemu::P_MTE2, true, blk);
        std::memcpy(dst.ptr + d * e, src.addr + so * e, blk * e);
    }
}
XBEMU_RT void copy_out(const char* api, const Gm& dst, const xbemu::Ub& src, const DataCopyParams& p,
                       xbemu::Site site) {
    const uint64_t e = src.elem;
    check_params(api, p);
    if (p.blockCount > 4095) xbemu::fail(api, "blockCount above 4095");
    const uint64_t seq = xbemu::mte3_issue();
    uint64_t blk = uint64_t(p.blockLen) * 32 / e;
    xbemu::dma_call(true, uint64_t(p.blockCount) * blk * e);
    for (uint32_t i = 0; i < p.blockCount; i++) {
        uint64_t s = i * (blk + uint64_t(p.srcStride) * 32 / e);
        uint64_t d = i * (blk + uint64_t(p.dstStride) * 32 / e);
        ub_touch(api, xbemu::ub_at(src, static_cast<uint32_t>(s)), xbemu::P_MTE3, false, blk);
        gm_store(api, dst, d, src.ptr + s * e, blk, seq, site);
    }
}
// the checks of a DataCopyPad's parameters in either direction (e: the element size)
XBEMU_RT void check_pad(const char* api, const DataCopyExtParams& p, uint64_t e) {
    check_params(api, p);
    if (!xbemu::st().has_pad) xbemu::fail(api, "DataCopyPad does not exist on this SoC");
    if (p.blockCount > 4095) xbemu::fail(api, "blockCount " + std::to_string(p.blockCount) + " above 4095");
    if (p.blockLen > 2097151) xbemu::fail(api, "blockLen above 2097151 B");
    if (p.blockLen % e) xbemu::fail(api, "blockLen " + std::to_string(p.blockLen) +
                                             " B is not a multiple of the element size");
}
// DataCopyPad GM->UB; pad: the padding's element (isPad), else null
XBEMU_RT void copy_pad_in(const char* api, const xbemu::Ub& dst, const Gm& src, const DataCopyExtParams& p,
                          uint8_t leftPadding, uint8_t rightPadding, const void* pad, xbemu::Site site) {
    const uint64_t e = dst.elem;
    check_pad(api, p, e);
    if ((leftPadding + rightPadding) * e > 32) xbemu::fail(api, "left + right padding above 32 B");
    if (p.blockCount == 0 || p.blockLen == 0) return;
    xbemu::dma_call(false, uint64_t(p.blockCount) * p.blockLen);
    uint64_t row = (uint64_t(leftPadding) * e + p.blockLen + rightPadding * e + 31) / 32 * 32;
    for (uint32_t i = 0; i < p.blockCount; i++) {
        const uint8_t* from = src.addr + i * (uint64_t(p.blockLen) + p.srcStride);
        uint64_t d = i * (row + uint64_t(p.dstStride) * 32) / e;
        xbemu::gm_check(api, src.base, from, p.blockLen, false, true, site);
        xbemu::Ub out = xbemu::ub_at(dst, static_cast<uint32_t>(d));
        ub_touch(api, out, xbemu::P_MTE2, true, row / e);
        const uint8_t* fill = pad ? static_cast<const uint8_t*>(pad) : from;  // the element itself, else the first
        for (uint64_t k = 0; k < row / e; k++) std::memcpy(out.ptr + k * e, fill, e);
        std::memcpy(out.ptr + leftPadding * e, from, p.blockLen);
    }
}
XBEMU_RT void copy_pad_out(const char* api, const Gm& dst, const xbemu::Ub& src, const DataCopyExtParams& p,
                           xbemu::Site site) {
    const uint64_t e = src.elem;
    check_pad(api, p, e);
    if (p.blockCount == 0 || p.blockLen == 0) return;
    const uint64_t seq = xbemu::mte3_issue();
    xbemu::dma_call(true, uint64_t(p.blockCount) * p.blockLen);
    uint64_t row = (uint64_t(p.blockLen) + 31) / 32 * 32;
    for (uint32_t i = 0; i < p.blockCount; i++) {
        uint64_t s = i * (row + uint64_t(p.srcStride) * 32) / e;
        uint64_t dbyte = i * (uint64_t(p.blockLen) + p.dstStride);
        xbemu::Ub in = xbemu::ub_at(src, static_cast<uint32_t>(s));
        ub_touch(api, in, xbemu::P_MTE3, false, p.blockLen / e);
        if (dbyte % e) xbemu::fail(api, "GM destination not aligned to the element size");
        gm_store(api, dst, dbyte / e, in.ptr, p.blockLen / e, seq, site);
    }
}
}  // namespace detail

template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const uint32_t count,
                     const char* file_ = __builtin_FILE(), int line_ = __builtin_LINE()) {
    detail::copy_in("DataCopy(GM->UB)", detail::ub(dst), detail::gm(src), count, xbemu::Site{file_, line_});
}

template <typename T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count,
                     const char* file_ = __builtin_FILE(), int line_ = __builtin_LINE()) {
    detail::copy_out("DataCopy(UB->GM)", detail::gm(dst), detail::ub(src), count, xbemu::Site{file_, line_});
}

template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
    detail::copy_ub("DataCopy(UB->UB)", detail::ub(dst), detail::ub(src), count);
}

// DataCopyParams: blockLen and gaps in 32-byte blocks.
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p,
                     const char* file_ = __builtin_FILE(), int line_ = __builtin_LINE()) {
    detail::copy_in("DataCopy(GM->UB)", detail::ub(dst), detail::gm(src), p, xbemu::Site{file_, line_});
}

template <typename T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p,
                     const char* file_ = __builtin_FILE(), int line_ = __builtin_LINE()) {
    detail::copy_out("DataCopy(UB->GM)", detail::gm(dst), detail::ub(src), p, xbemu::Site{file_, line_});
}

// DataCopyExtParams for GM->UB: blockLen and srcStride in bytes (GM side), dstStride in 32-byte blocks.
// Each block lands 32-byte aligned in UB; its padding holds paddingValue (isPad) or its first element.
template <typename T>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& p,
                        const DataCopyPadExtParams<T>& pad, const char* file_ = __builtin_FILE(), int line_ = __builtin_LINE()) {
    detail::copy_pad_in("DataCopyPad(GM->UB)", detail::ub(dst), detail::gm(src), p, pad.leftPadding,
                        pad.rightPadding, pad.isPad ? &pad.paddingValue : nullptr, xbemu::Site{file_, line_});
}

// DataCopyExtParams for UB->GM: srcStride in 32-byte blocks (UB side), dstStride in bytes (GM side);
// only blockLen bytes of each block reach GM.
template <typename T>
inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& p,
                        const char* file_ = __builtin_FILE(), int line_ = __builtin_LINE()) {
    detail::copy_pad_out("DataCopyPad(UB->GM)", detail::gm(dst), detail::ub(src), p, xbemu::Site{file_, line_});
}

// ----- vector compute, count form ("first count elements") ----------------------------------

namespace detail {
template <typename T, typename F>
inline void binary(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b,
                   int32_t count, F f) {
    count_ok<T>(api, count);
    touch(api, a, xbemu::P_V, false, count);
    touch(api, b, xbemu::P_V, false, count);
    touch(api, dst, xbemu::P_V, true, count);
    for (int32_t i = 0; i < count; i++) dst.ptr_[i] = static_cast<T>(f(a.ptr_[i], b.ptr_[i]));
}
template <typename T, typename F>
inline void unary(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& a, int32_t count, F f) {
    count_ok<T>(api, count);
    touch(api, a, xbemu::P_V, false, count);
    touch(api, dst, xbemu::P_V, true, count);
    for (int32_t i = 0; i < count; i++) dst.ptr_[i] = static_cast<T>(f(a.ptr_[i]));
}
}  // namespace detail

#define XBEMU_BINARY(NAME, CHECK, EXPR)                                                                        \
    template <typename T>                                                                                      \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,        \
                     const int32_t& count) {                                                                   \
        static_assert(CHECK<T>(), #NAME ": data type not supported by the vector unit on this SoC");           \
        detail::binary(#NAME, dst, src0, src1, count, [](T x, T y) { return EXPR; });                          \
    }
XBEMU_BINARY(Add, detail::is_vec_arith, detail::arith<T>('+', x, y))
XBEMU_BINARY(Sub, detail::is_vec_arith, detail::arith<T>('-', x, y))
XBEMU_BINARY(Mul, detail::is_vec_arith, detail::arith<T>('*', x, y))
XBEMU_BINARY(Div, detail::is_vec_float, detail::tof(x) / detail::tof(y))
XBEMU_BINARY(Max, detail::is_vec_arith, detail::greater<T>(x, y) ? x : y)
XBEMU_BINARY(Min, detail::is_vec_arith, detail::less<T>(x, y) ? x : y)
#undef XBEMU_BINARY

// ----- TransDataTo5HD: 16 addressed DataBlocks in, 16 out, per repeat (vec_transpose_intf.h) -------
// One repeat reads DataBlock k of each of the 16 source addresses and writes 16 DataBlocks: for 16-bit
// types dst block i = {src_j[i], j < 16} (a 16x16 transpose); for 32-bit types dst block 2i + h =
// {src_j[i], 8h <= j < 8h + 8} (16 rows of 8 -> 8 rows of 16); for 8-bit types (32 per DataBlock) one
// half of each: dst block i, half dstHighHalf = {src_j[16 * srcHighHalf + i], j < 16} (a 16x16 transpose
// of bytes), the other half of dst block i left as it was (ADK docs/api/context/TransDataTo5HD.md, the
// 8-bit rule and its int8_t example). Repeat r adds r * RepStride DataBlocks to every address; with
// repeatTimes == 1 the stride is still added once (the documented quirk: set the strides to 0).
// Addresses 32-byte aligned; no source block may overlap a destination block.
constexpr int32_t NCHW_CONV_ADDR_LIST_SIZE = 16;
struct TransDataTo5HDParams {
    TransDataTo5HDParams() = default;
    TransDataTo5HDParams(const bool dstHighHalfIn, const bool srcHighHalfIn, const uint8_t repeatTimesIn,
                         const uint16_t dstRepStrideIn, const uint16_t srcRepStrideIn)
        : dstHighHalf(dstHighHalfIn), srcHighHalf(srcHighHalfIn), repeatTimes(repeatTimesIn),
          dstRepStride(dstRepStrideIn), srcRepStride(srcRepStrideIn) {}
    bool dstHighHalf = false;
    bool srcHighHalf = false;
    uint8_t repeatTimes = 1;
    uint16_t dstRepStride = 0;
    uint16_t srcRepStride = 0;
};
template <typename T>
inline void TransDataTo5HD(const LocalTensor<T> (&dstList)[NCHW_CONV_ADDR_LIST_SIZE],
                           const LocalTensor<T> (&srcList)[NCHW_CONV_ADDR_LIST_SIZE],
                           const TransDataTo5HDParams& p) {
    static_assert(std::is_same<T, int8_t>::value || std::is_same<T, uint8_t>::value ||
                      std::is_same<T, half>::value || std::is_same<T, int16_t>::value ||
                      std::is_same<T, uint16_t>::value || std::is_same<T, float>::value ||
                      std::is_same<T, int32_t>::value || std::is_same<T, uint32_t>::value,
                  "TransDataTo5HD: int8/uint8/half/int16/uint16/float/int32/uint32");
    const char* api = "TransDataTo5HD";
    if (sizeof(T) != 1 && (p.dstHighHalf || p.srcHighHalf))
        xbemu::fail(api, "dstHighHalf/srcHighHalf apply to 8-bit types only");
    constexpr uint32_t n = 32 / sizeof(T);  // elements per DataBlock
    const uint32_t reps = p.repeatTimes;
    xbemu::vec_count(512ull * reps);
    for (uint32_t r = 0; r < reps; r++) {
        const uint32_t k = reps == 1 ? 1 : r;
        LocalTensor<T> s[16], d[16];
        for (int i = 0; i < 16; i++) {
            s[i] = srcList[i][k * p.srcRepStride * n];
            d[i] = dstList[i][k * p.dstRepStride * n];
            detail::touch(api, s[i], xbemu::P_V, false, n);
        }
        for (int i = 0; i < 16; i++) {
            for (int j = 0; j < 16; j++) {
                const T* a = s[j].ptr_;
                if (a < d[i].ptr_ + n && d[i].ptr_ < a + n)
                    xbemu::fail(api, "a destination DataBlock overlaps a source DataBlock");
            }
        }
        T v[16][n];
        for (int j = 0; j < 16; j++)
            for (uint32_t e = 0; e < n; e++) v[j][e] = s[j].ptr_[e];
        if constexpr (sizeof(T) == 1) {  // half a DataBlock written: the other half is kept
            const uint32_t dh = p.dstHighHalf ? 16 : 0, sh = p.srcHighHalf ? 16 : 0;
            for (int i = 0; i < 16; i++) {
                if (xbemu::ub_off(d[i].ptr_) % 32)
                    xbemu::fail(api, "UB address " + xbemu::hexaddr(xbemu::ub_off(d[i].ptr_)) +
                                         " is not 32-byte aligned");
                detail::touch(api, d[i][dh], xbemu::P_V, true, 16, false);
                for (int j = 0; j < 16; j++) d[i].ptr_[dh + j] = v[j][sh + i];
            }
        } else if constexpr (sizeof(T) == 2) {
            for (int i = 0; i < 16; i++) detail::touch(api, d[i], xbemu::P_V, true, n);
            for (int i = 0; i < 16; i++)
                for (int j = 0; j < 16; j++) d[i].ptr_[j] = v[j][i];
        } else {
            for (int i = 0; i < 16; i++) detail::touch(api, d[i], xbemu::P_V, true, n);
            for (int i = 0; i < 8; i++)
                for (int j = 0; j < 16; j++) d[2 * i + j / 8].ptr_[j % 8] = v[j][i];
        }
    }
}

template <typename T>
constexpr bool is_bitwise() { return std::is_same<T, int16_t>::value || std::is_same<T, uint16_t>::value; }
template <typename T>
inline void And(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                const int32_t& count) {
    static_assert(is_bitwise<T>(), "And: int16_t/uint16_t only");
    detail::binary("And", dst, src0, src1, count, [](T x, T y) { return static_cast<T>(x & y); });
}
template <typename T>
inline void Or(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
               const int32_t& count) {
    static_assert(is_bitwise<T>(), "Or: int16_t/uint16_t only");
    detail::binary("Or", dst, src0, src1, count, [](T x, T y) { return static_cast<T>(x | y); });
}
template <typename T>
inline void Not(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
    static_assert(is_bitwise<T>(), "Not: int16_t/uint16_t only");
    detail::unary("Not", dst, src, count, [](T x) { return static_cast<T>(~x); });
}

// ShiftLeft/ShiftRight (A2): 16- and 32-bit integer lanes, one scalar count in [0, bit width] of
// the lane's type. Unsigned lanes shift logically. Signed lanes shift arithmetically: right fills
// with the sign bit, and left drops the bit below the sign bit and keeps the sign bit itself.
template <typename T>
constexpr bool is_shiftable() {
    return std::is_same<T, int16_t>::value || std::is_same<T, uint16_t>::value ||
           std::is_same<T, int32_t>::value || std::is_same<T, uint32_t>::value;
}
namespace detail {
template <typename T>
inline int shift_count(const char* api, T s) {
    const int64_t bits = 8 * sizeof(T), v = static_cast<int64_t>(s);
    if (v < 0 || v > bits)
        xbemu::fail(api, "scalarValue " + std::to_string(v) + " outside [0, " + std::to_string(bits) + "]");
    return static_cast<int>(v);
}
template <typename T>
inline T shift_left(T x, int s) {
    using U = typename std::make_unsigned<T>::type;
    const uint64_t bits = 8 * sizeof(T), all = (uint64_t(1) << bits) - 1, top = uint64_t(1) << (bits - 1);
    uint64_t u = static_cast<U>(x), r = s >= static_cast<int>(bits) ? 0 : (u << s) & all;
    if (std::is_signed<T>::value) r = (r & ~top) | (u & top);
    return static_cast<T>(static_cast<U>(r));
}
template <typename T>
inline T shift_right(T x, int s) {
    using U = typename std::make_unsigned<T>::type;
    if (std::is_signed<T>::value) return static_cast<T>(static_cast<int64_t>(x) >> s);
    return static_cast<T>(s >= static_cast<int>(8 * sizeof(T)) ? 0 : static_cast<uint64_t>(static_cast<U>(x)) >> s);
}
}  // namespace detail
template <typename T, bool isSetMask = true>
inline void ShiftLeft(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,
                      const int32_t& count) {
    static_assert(is_shiftable<T>(), "ShiftLeft: int16_t/uint16_t/int32_t/uint32_t only on A2");
    const int s = detail::shift_count("ShiftLeft", scalarValue);
    detail::unary("ShiftLeft", dst, src, count, [s](T x) { return detail::shift_left(x, s); });
}
template <typename T, bool isSetMask = true>
inline void ShiftRight(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,
                       const int32_t& count) {
    static_assert(is_shiftable<T>(), "ShiftRight: int16_t/uint16_t/int32_t/uint32_t only on A2");
    const int s = detail::shift_count("ShiftRight", scalarValue);
    detail::unary("ShiftRight", dst, src, count, [s](T x) { return detail::shift_right(x, s); });
}

#define XBEMU_UNARY(NAME, EXPR)                                                                                \
    template <typename T>                                                                                      \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {             \
        static_assert(detail::is_vec_float<T>(), #NAME ": half and float only on this SoC");                   \
        detail::unary(#NAME, dst, src, count, [](T v) { float x = detail::tof(v); return EXPR; });             \
    }
XBEMU_UNARY(Exp, std::exp(x))
XBEMU_UNARY(Ln, std::log(x))
XBEMU_UNARY(Abs, std::fabs(x))
XBEMU_UNARY(Sqrt, std::sqrt(x))
XBEMU_UNARY(Rsqrt, 1.0f / std::sqrt(x))
XBEMU_UNARY(Reciprocal, 1.0f / x)
XBEMU_UNARY(Relu, x > 0 ? x : 0.0f)
#undef XBEMU_UNARY

#define XBEMU_SCALAR(NAME, EXPR)                                                                               \
    template <typename T, bool isSetMask = true>                                                               \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,               \
                     const int32_t& count) {                                                                   \
        static_assert(detail::is_vec_arith<T>(), #NAME ": data type not supported by the vector unit");        \
        const T s = scalarValue;                                                                               \
        detail::unary(#NAME, dst, src, count, [s](T x) { return EXPR; });                                      \
    }
XBEMU_SCALAR(Adds, detail::arith<T>('+', x, s))
XBEMU_SCALAR(Muls, detail::arith<T>('*', x, s))
XBEMU_SCALAR(Maxs, detail::greater<T>(x, s) ? x : s)
XBEMU_SCALAR(Mins, detail::less<T>(x, s) ? x : s)
#undef XBEMU_SCALAR

// Duplicate.md, Atlas A2: T is int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t or float.
template <typename T>
constexpr bool is_duplicable() {
    return detail::one_of<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float>();
}
template <typename T>
inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, const int32_t& count) {
    static_assert(is_duplicable<T>(), "Duplicate: 16- and 32-bit types only on A2 (no 8- or 64-bit lanes)");
    detail::count_ok<T>("Duplicate", count);
    detail::touch("Duplicate", dst, xbemu::P_V, true, count);
    for (int32_t i = 0; i < count; i++) dst.ptr_[i] = scalarValue;
}

// High-dimensional form: mask = first N elements of each 256-byte repeat.
template <typename T, bool isSetMask = true>
inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, uint64_t mask, const uint8_t repeatTime,
                      const uint16_t dstBlockStride, const uint8_t dstRepeatStride) {
    static_assert(is_duplicable<T>(), "Duplicate: 16- and 32-bit types only on A2 (no 8- or 64-bit lanes)");
    const uint64_t per = 256 / sizeof(T);
    if (mask > per) xbemu::fail("Duplicate", "mask " + std::to_string(mask) + " above " + std::to_string(per) +
                                                 " elements per repeat for this type");
    if (dstBlockStride == 0) xbemu::fail("Duplicate", "dstBlockStride 0 is undefined");
    xbemu::vec_count(uint64_t(repeatTime) * 256);
    const uint64_t blk = 32 / sizeof(T);
    for (uint32_t r = 0; r < repeatTime; r++)
        for (uint64_t k = 0; k < mask; k++) {
            uint64_t e = r * dstRepeatStride * blk + (k / blk) * dstBlockStride * blk + k % blk;
            detail::touch("Duplicate", dst[static_cast<uint32_t>(e)], xbemu::P_V, true, 1, false);
            dst.ptr_[e] = scalarValue;
        }
}

namespace detail {
// Cast's arithmetic (ADK docs/zh/api/SIMD-API/基础API/数据结构/precision_conversion.md): a value is
// rounded with the round mode (CAST_NONE = CAST_RINT where precision is lost); a result outside the
// destination's range saturates ("溢出默认按照饱和模式处理"), integer to integer too (int32 -> int16
// of 2^31 - 1 is 2^15 - 1, int64 -> int32 of 2^31 is 2^31 - 1). NaN to an integer gives 0 (not
// documented; modelled). Every source value is exact in long double.
template <typename T>
inline long double wide(T v) {
    if constexpr (std::is_integral<T>::value) return static_cast<long double>(v);
    else return static_cast<long double>(static_cast<float>(v));
}
XBEMU_RT long double round_int(long double x, RoundMode m, const char* api) {
    switch (m) {
        case RoundMode::CAST_NONE:
        case RoundMode::CAST_RINT: return std::nearbyint(x);
        case RoundMode::CAST_FLOOR: return std::floor(x);
        case RoundMode::CAST_CEIL: return std::ceil(x);
        case RoundMode::CAST_ROUND: return std::round(x);
        case RoundMode::CAST_TRUNC: return std::trunc(x);
        default: xbemu::fail(api, "round mode not modelled");
    }
    return x;
}
template <typename T>
inline T saturate(long double r) {
    if (std::isnan(r)) return T(0);
    if (r <= static_cast<long double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
    if (r >= static_cast<long double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(r);
}
// The next value of a float type F (bits B) from a finite v toward +inf (dir > 0) or -inf.
template <typename F, typename B>
inline F step(F v, int dir) {
    B b;
    std::memcpy(&b, static_cast<const void*>(&v), sizeof b);
    const B sign = B(1) << (8 * sizeof(B) - 1);
    if ((b & ~sign) == 0) b = dir > 0 ? B(1) : B(sign | 1);
    else if (((b & sign) == 0) == (dir > 0)) b = B(b + 1);
    else b = B(b - 1);
    std::memcpy(static_cast<void*>(&v), &b, sizeof b);
    return v;
}
// x rounded to the float type F with the round mode. Sources of half and bfloat16 results (float,
// int16) are exact in float, so the float conversion below rounds once.
template <typename F, typename B>
inline F round_float(long double x, RoundMode m, const char* api) {
    F r = static_cast<F>(static_cast<float>(x));
    if (m == RoundMode::CAST_NONE || m == RoundMode::CAST_RINT || std::isnan(x)) return r;
    if (m == RoundMode::CAST_ODD) xbemu::fail(api, "CAST_ODD not modelled");
    long double rv = wide(r);
    if (rv == x) return r;
    F lo = r, hi = r;
    if (std::isinf(rv)) (rv > 0 ? lo : hi) = step<F, B>(r, rv > 0 ? -1 : 1);  // past the largest finite
    else if (rv < x) hi = step<F, B>(r, 1);
    else lo = step<F, B>(r, -1);
    switch (m) {
        case RoundMode::CAST_FLOOR: return lo;
        case RoundMode::CAST_CEIL: return hi;
        case RoundMode::CAST_TRUNC: return x > 0 ? lo : hi;
        case RoundMode::CAST_ROUND: {
            long double dl = x - wide(lo), dh = wide(hi) - x;
            return dl < dh ? lo : (dh < dl ? hi : (x > 0 ? hi : lo));
        }
        default: xbemu::fail(api, "round mode not modelled");
    }
    return r;
}
// float -> float rounds to a whole number ("取整": 0.5 is 0.0 under CAST_RINT, 1.0 under CAST_CEIL).
template <typename T>
inline T convert(long double x, bool from_int, bool to_whole, RoundMode m, const char* api) {
    if (to_whole) return static_cast<T>(round_int(x, m, api));
    if constexpr (std::is_integral<T>::value) return saturate<T>(from_int ? x : round_int(x, m, api));
    else if constexpr (std::is_same<T, float>::value) return round_float<float, uint32_t>(x, m, api);
    else if constexpr (std::is_same<T, half>::value) return round_float<half, uint16_t>(x, m, api);
    else return round_float<bfloat16_t, uint16_t>(x, m, api);
}
template <typename T, typename U>
constexpr bool same2() { return std::is_same<T, U>::value; }
// The round modes A2 allows for dst T from src U: 0 = no such Cast; bit 1 = CAST_NONE; bit 2 = the
// five rounding modes; bit 4 = CAST_ODD (ADK Cast.md, table of Atlas A2; int32 -> half needs
// SetDeqScale, not modelled).
template <typename T, typename U>
constexpr int cast_modes() {
    constexpr int N = 1, L = 2, O = 4;
    if constexpr (one_of<U, int8_t, uint8_t>() && same2<T, half>()) return N;
    else if constexpr (same2<U, int16_t>() && same2<T, half>()) return N | L;
    else if constexpr (one_of<U, int16_t, half, bfloat16_t>() && same2<T, float>()) return N;
    else if constexpr (same2<U, half>() && one_of<T, int8_t, uint8_t>()) return N | L;
    else if constexpr (same2<U, half>() && one_of<T, int16_t, int32_t>()) return L;
    else if constexpr (same2<U, bfloat16_t>() && same2<T, int32_t>()) return L;
    else if constexpr (same2<U, int32_t>() && same2<T, int16_t>()) return N;
    else if constexpr (same2<U, int32_t>() && same2<T, float>()) return N | L;
    else if constexpr (same2<U, int32_t>() && same2<T, int64_t>()) return N;
    else if constexpr (same2<U, float>() && one_of<T, int16_t, bfloat16_t, int32_t, float, int64_t>()) return L;
    else if constexpr (same2<U, float>() && same2<T, half>()) return N | L | O;
    else if constexpr (same2<U, int64_t>() && same2<T, int32_t>()) return N;
    else if constexpr (same2<U, int64_t>() && same2<T, float>()) return L;
    else return 0;
}
}  // namespace detail

// Legal (src, dst, mode) combinations on A2 follow the ADK's Cast table for Atlas A2.
template <typename T, typename U>
inline void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode,
                 const uint32_t count) {
    const char* api = "Cast";
    using namespace detail;
    constexpr int modes = cast_modes<T, U>();
    if (modes == 0) xbemu::fail(api, "this source/destination type pair has no Cast on A2");
    const int bit = roundMode == RoundMode::CAST_NONE ? 1 : (roundMode == RoundMode::CAST_ODD ? 4 : 2);
    if (!(modes & bit)) xbemu::fail(api, "round mode not allowed for this type pair on A2");
    count_ok<T>(api, count);
    xbemu::st().vec_repeats += (uint64_t(count) * (sizeof(T) > sizeof(U) ? sizeof(T) : sizeof(U)) + 255) / 256 -
                               (uint64_t(count) * sizeof(T) + 255) / 256;
    touch(api, src, xbemu::P_V, false, count);
    touch(api, dst, xbemu::P_V, true, count);
    for (uint32_t i = 0; i < count; i++)
        dst.ptr_[i] = convert<T>(wide(src.ptr_[i]), std::is_integral<U>::value, same2<T, float>() && same2<U, float>(),
                                 roundMode, api);
}

// ----- GatherMask with a built-in pattern (vec_gather_mask_intf.h; GatherMask.md) -----------------
// Pattern 1..7 picks, in each repeat, the even elements, the odd ones, the 1st/2nd/3rd/4th of every
// four, or all; the picked elements are written one after another from dst[0]. Normal mode
// (reduceMode false): each repeat reads 256 bytes (mask unused). Counter mode (true; A2 "配置方式一"):
// each repeat reads the first `mask` elements. T: 16- and 32-bit types on A2.
enum class GatherMaskMode : uint8_t { VERSION_V1 = 0, VERSION_V2 = 1 };
struct GatherMaskParams {
    GatherMaskParams() {}
    GatherMaskParams(const uint8_t src0BlockStrideIn, const uint16_t repeatTimesIn, const uint16_t src0RepeatStrideIn,
                     const uint8_t src1RepeatStrideIn)
        : src0BlockStride(src0BlockStrideIn), repeatTimes(repeatTimesIn), src0RepeatStride(src0RepeatStrideIn),
          src1RepeatStride(src1RepeatStrideIn) {}
    uint8_t src0BlockStride = 1;
    uint16_t repeatTimes = 0;
    uint16_t src0RepeatStride = 8;
    uint8_t src1RepeatStride = 8;
};
template <typename T>
inline void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const uint8_t src1Pattern,
                       const bool reduceMode, const uint32_t mask, const GatherMaskParams& params, uint64_t& rsvdCnt) {
    const char* api = "GatherMask";
    static_assert(detail::one_of<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float>(),
                  "GatherMask: 16- and 32-bit types only on A2");
    if (src1Pattern < 1 || src1Pattern > 7) xbemu::fail(api, "src1Pattern " + std::to_string(src1Pattern) +
                                                                  " outside the built-in patterns 1..7");
    const uint64_t per = 256 / sizeof(T), blk = 32 / sizeof(T);
    const uint64_t n = reduceMode ? mask : per;
    if (reduceMode && (mask == 0 || mask > per))
        xbemu::fail(api, "counter-mode mask " + std::to_string(mask) + " outside [1, " + std::to_string(per) +
                             "] elements of one repeat (longer masks are not modelled)");
    if (params.src0BlockStride == 0) xbemu::fail(api, "src0BlockStride 0");
    const int p = src1Pattern;
    auto picked = [p](uint64_t k) {
        return p == 7 || (p <= 2 ? k % 2 == uint64_t(p - 1) : k % 4 == uint64_t(p - 3));
    };
    uint64_t span = 0, out = 0;
    for (uint32_t r = 0; r < params.repeatTimes; r++)
        for (uint64_t k = 0; k < n; k++) {
            uint64_t e = r * params.src0RepeatStride * blk + (k / blk) * params.src0BlockStride * blk + k % blk;
            span = e + 1 > span ? e + 1 : span;
            out += picked(k);
        }
    xbemu::vec_count(uint64_t(params.repeatTimes) * 256);
    detail::touch(api, src0, xbemu::P_V, false, span);
    detail::touch(api, dst, xbemu::P_V, true, out);
    std::vector<T> vals;
    vals.reserve(out);
    for (uint32_t r = 0; r < params.repeatTimes; r++)
        for (uint64_t k = 0; k < n; k++)
            if (picked(k))
                vals.push_back(src0.ptr_[r * params.src0RepeatStride * blk + (k / blk) * params.src0BlockStride * blk +
                                         k % blk]);
    for (uint64_t i = 0; i < out; i++) dst.ptr_[i] = vals[i];
    rsvdCnt = out;
}

// ----- Gather, the count form (vec_gather_intf.h; Gather.md) -------------------------------------
// dst[i] = the element of src at byte srcBaseAddr + srcOffset[i], for i < count (UB to UB). T: 16-
// and 32-bit types on A2; the offsets and srcBaseAddr are bytes and must be multiples of sizeof(T);
// src and dst must not share memory; count 0 is a no-op. The hardware reads whatever UB holds at an
// offset past src (up to the end of UB): the model refuses any element outside the src tensor.
template <typename T>
inline void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint32_t>& srcOffset,
                   const uint32_t srcBaseAddr, const uint32_t count) {
    const char* api = "Gather";
    static_assert(detail::one_of<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float>(),
                  "Gather: 16- and 32-bit types only on A2");
    if (srcBaseAddr % sizeof(T))
        xbemu::fail(api, "srcBaseAddr " + std::to_string(srcBaseAddr) + " is not a multiple of the element size");
    if (count == 0) return;
    detail::count_ok<T>(api, count);
    detail::touch(api, srcOffset, xbemu::P_V, false, count);
    std::vector<uint64_t> idx(count);
    uint64_t span = 0;
    for (uint32_t i = 0; i < count; i++) {
        const uint64_t b = uint64_t(srcBaseAddr) + srcOffset.ptr_[i];
        if (srcOffset.ptr_[i] % sizeof(T))
            xbemu::fail(api, "srcOffset[" + std::to_string(i) + "] = " + std::to_string(srcOffset.ptr_[i]) +
                                 " bytes is not a multiple of the element size");
        idx[i] = b / sizeof(T);
        if (idx[i] >= src.size_)
            xbemu::fail(api, "srcOffset[" + std::to_string(i) + "] = " + std::to_string(srcOffset.ptr_[i]) +
                                 " bytes reads element " + std::to_string(idx[i]) + " past the source's " +
                                 std::to_string(src.size_) + " elements");
        span = idx[i] + 1 > span ? idx[i] + 1 : span;
    }
    detail::touch(api, src, xbemu::P_V, false, span);
    detail::touch(api, dst, xbemu::P_V, true, count);
    const uintptr_t d0 = reinterpret_cast<uintptr_t>(dst.ptr_), s0 = reinterpret_cast<uintptr_t>(src.ptr_);
    if (d0 < s0 + span * sizeof(T) && s0 < d0 + uint64_t(count) * sizeof(T))
        xbemu::fail(api, "the source and the destination share memory");
    std::vector<T> vals(count);
    for (uint32_t i = 0; i < count; i++) vals[i] = src.ptr_[idx[i]];
    for (uint32_t i = 0; i < count; i++) dst.ptr_[i] = vals[i];
}

namespace detail {
XBEMU_RT bool cmp(float a, float b, CMPMODE m) {
    switch (m) {
        case CMPMODE::LT: return a < b;
        case CMPMODE::GT: return a > b;
        case CMPMODE::EQ: return a == b;
        case CMPMODE::LE: return a <= b;
        case CMPMODE::GE: return a >= b;
        default: return a != b;
    }
}
template <typename T, typename U>
inline void compare_checks(const char* api, const LocalTensor<U>& dst, uint32_t count) {
    static_assert(std::is_same<U, uint8_t>::value || std::is_same<U, int8_t>::value, "Compare: 8-bit mask");
    static_assert(is_vec_float<T>() || std::is_same<T, int32_t>::value, "Compare: half, float or int32_t");
    if ((uint64_t(count) * sizeof(T)) % 256)
        xbemu::fail(api, "count " + std::to_string(count) + " x " + std::to_string(sizeof(T)) +
                             " B is not a multiple of 256 B (the unaligned tail would not be compared)");
    count_ok<T>(api, count);
    touch(api, dst, xbemu::P_V, true, count / 8);
}
}  // namespace detail

template <typename T, typename U>
inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                    CMPMODE cmpMode, uint32_t count) {
    detail::touch("Compare", src0, xbemu::P_V, false, count);
    detail::touch("Compare", src1, xbemu::P_V, false, count);
    if (std::is_same<T, int32_t>::value && cmpMode != CMPMODE::EQ) xbemu::fail("Compare", "int32_t supports EQ only");
    detail::compare_checks<T>("Compare", dst, count);
    for (uint32_t i = 0; i < count; i += 8) {
        uint8_t bits = 0;
        for (uint32_t k = 0; k < 8; k++)
            bits |= detail::cmp(detail::tof(src0.ptr_[i + k]), detail::tof(src1.ptr_[i + k]), cmpMode) << k;
        dst.ptr_[i / 8] = static_cast<U>(bits);
    }
}

namespace detail {
template <typename T, typename U>
inline void compare_scalar(const char* api, const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar,
                           CMPMODE cmpMode, uint32_t count) {
    touch(api, src0, xbemu::P_V, false, count);
    compare_checks<T>(api, dst, count);
    float s = tof(src1Scalar);
    for (uint32_t i = 0; i < count; i += 8) {
        uint8_t bits = 0;
        for (uint32_t k = 0; k < 8; k++) bits |= cmp(tof(src0.ptr_[i + k]), s, cmpMode) << k;
        dst.ptr_[i / 8] = static_cast<U>(bits);
    }
}
}  // namespace detail

// CANN 9 name of CompareScalar (same parameters); absent from CANN 8.
#if XBEMU_CANN_VERSION >= 9
template <typename T, typename U>
inline void Compares(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar, CMPMODE cmpMode,
                     uint32_t count) {
    detail::compare_scalar("Compares", dst, src0, src1Scalar, cmpMode, count);
}
#endif
// CANN 9 deprecates it for Compares (still declared there).
template <typename T, typename U>
inline void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar,
                          CMPMODE cmpMode, uint32_t count) {
    detail::compare_scalar("CompareScalar", dst, src0, src1Scalar, cmpMode, count);
}

template <typename T, typename U>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                   const LocalTensor<T>& src1, SELMODE selMode, uint32_t count) {
    static_assert(detail::is_vec_float<T>(), "Select: half and float only on A2");
    if (selMode != SELMODE::VSEL_TENSOR_TENSOR_MODE) xbemu::fail("Select", "tensor-tensor form needs mode 2");
    detail::count_ok<T>("Select", count);
    detail::touch("Select", selMask, xbemu::P_V, false, (count + 8 * sizeof(U) - 1) / (8 * sizeof(U)));
    detail::touch("Select", src0, xbemu::P_V, false, count);
    detail::touch("Select", src1, xbemu::P_V, false, count);
    detail::touch("Select", dst, xbemu::P_V, true, count);
    const uint8_t* m = reinterpret_cast<const uint8_t*>(selMask.ptr_);
    for (uint32_t i = 0; i < count; i++) dst.ptr_[i] = ((m[i / 8] >> (i % 8)) & 1) ? src0.ptr_[i] : src1.ptr_[i];
}

template <typename T, typename U>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0, T src1,
                   SELMODE selMode, uint32_t count) {
    static_assert(detail::is_vec_float<T>(), "Select: half and float only on A2");
    if (selMode != SELMODE::VSEL_TENSOR_SCALAR_MODE) xbemu::fail("Select", "tensor-scalar form needs mode 1");
    detail::count_ok<T>("Select", count);
    detail::touch("Select", selMask, xbemu::P_V, false, (count + 8 * sizeof(U) - 1) / (8 * sizeof(U)));
    detail::touch("Select", src0, xbemu::P_V, false, count);
    detail::touch("Select", dst, xbemu::P_V, true, count);
    const uint8_t* m = reinterpret_cast<const uint8_t*>(selMask.ptr_);
    for (uint32_t i = 0; i < count; i++) dst.ptr_[i] = ((m[i / 8] >> (i % 8)) & 1) ? src0.ptr_[i] : src1;
}

// ----- reductions ----------------------------------------------------------------------------

namespace detail {
// Scratch elements ReduceMax/ReduceMin need (count form): 2 per first-round repeat, rounded up to
// 32 B; with calIndex, also the rounds that follow. xblock sizes its scratch with the same rule.
template <typename T>
inline uint32_t reduce_tmp_elems(int32_t count, bool calIndex) {
    const int32_t per = 256 / sizeof(T), blk = 32 / sizeof(T);
    int32_t first = (count + per - 1) / per;
    if (first < 1) first = 1;
    int32_t need = (2 * first + blk - 1) / blk * blk;
    if (calIndex) {
        int32_t second = (2 * first + per - 1) / per;
        need += (2 * second + blk - 1) / blk * blk;
    }
    return static_cast<uint32_t>(need);
}
template <typename T>
inline void reduce_extreme(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& src,
                           const LocalTensor<T>& tmp, int32_t count, bool calIndex, bool is_max) {
    static_assert(is_vec_float<T>(), "ReduceMax/ReduceMin: half and float only on A2");
    if (count <= 0) xbemu::fail(api, "count must be positive");
    uint32_t need = reduce_tmp_elems<T>(count, calIndex);
    if (tmp.size_ < need)
        xbemu::fail(api, "sharedTmpBuffer holds " + std::to_string(tmp.size_) + " elements, needs " +
                             std::to_string(need));
    count_ok<T>(api, count);
    touch(api, src, xbemu::P_V, false, count);
    touch(api, tmp, xbemu::P_V, true, need);
    touch(api, dst, xbemu::P_V, true, 2);
    int32_t best = 0;
    for (int32_t i = 1; i < count; i++) {
        float v = tof(src.ptr_[i]), b = tof(src.ptr_[best]);
        if (std::isnan(b) && !std::isnan(v)) best = i;
        else if (is_max ? v > b : v < b) best = i;
    }
    dst.ptr_[0] = src.ptr_[best];
    if (calIndex) {
        if (sizeof(T) == 4) {
            uint32_t idx = static_cast<uint32_t>(best);
            std::memcpy(&dst.ptr_[1], &idx, 4);
        } else {
            uint16_t idx = static_cast<uint16_t>(best);
            std::memcpy(&dst.ptr_[1], &idx, 2);
        }
    }
}
}  // namespace detail

template <typename T>
inline void ReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                      const int32_t count, bool calIndex = 0) {
    detail::reduce_extreme("ReduceMax", dst, src, sharedTmpBuffer, count, calIndex, true);
}
template <typename T>
inline void ReduceMin(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                      const int32_t count, bool calIndex = 0) {
    detail::reduce_extreme("ReduceMin", dst, src, sharedTmpBuffer, count, calIndex, false);
}

// Count form: repeat results accumulated in order; the scratch buffer is not used on A2.
template <typename T, bool isSetMask = true>
inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                      const int32_t count) {
    static_assert(detail::is_vec_float<T>(), "ReduceSum: half and float only on A2");
    (void)sharedTmpBuffer;
    if (count <= 0) xbemu::fail("ReduceSum", "count must be positive");
    detail::count_ok<T>("ReduceSum", count);
    detail::touch("ReduceSum", src, xbemu::P_V, false, count);
    detail::touch("ReduceSum", dst, xbemu::P_V, true, 1);
    const int32_t per = 256 / sizeof(T);
    float total = 0;
    for (int32_t r = 0; r < count; r += per) {
        float part = 0;
        for (int32_t i = r; i < count && i < r + per; i++) part += detail::tof(src.ptr_[i]);
        total += part;
    }
    dst.ptr_[0] = static_cast<T>(total);
}

// Mask/repeat form: `mask` elements of each of `repeatTime` repeats, srcRepStride in 32-byte blocks.
template <typename T>
inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                      const int32_t mask, const int32_t repeatTime, const int32_t srcRepStride) {
    static_assert(detail::is_vec_float<T>(), "ReduceSum: half and float only on A2");
    const int32_t per = 256 / sizeof(T), blk = 32 / sizeof(T);
    if (repeatTime < 0 || repeatTime > 255)
        xbemu::fail("ReduceSum", "repeatTime " + std::to_string(repeatTime) + " outside 0..255");
    if (mask < 0 || mask > per)
        xbemu::fail("ReduceSum", "mask " + std::to_string(mask) + " outside 0.." + std::to_string(per));
    uint32_t need = static_cast<uint32_t>((repeatTime + blk - 1) / blk * blk);
    if (sharedTmpBuffer.size_ < need) xbemu::fail("ReduceSum", "sharedTmpBuffer too small");
    xbemu::vec_count(uint64_t(repeatTime) * 256);
    float total = 0;
    for (int32_t r = 0; r < repeatTime; r++) {
        LocalTensor<T> row = src[static_cast<uint32_t>(r * srcRepStride * blk)];
        detail::touch("ReduceSum", row, xbemu::P_V, false, mask);
        for (int32_t i = 0; i < mask; i++) total += detail::tof(row.ptr_[i]);
    }
    detail::touch("ReduceSum", dst, xbemu::P_V, true, 1);
    dst.ptr_[0] = static_cast<T>(total);
}


// ----- mask/repeat ("high-dimensional", Level 0) forms used for per-row work ------------------
// REFERENCE.md 1.6 (ADK docs .../SIMD计算说明/高维切分.md, 掩码/通用说明.md): one repeat is 8 DataBlocks of
// 32 B; `repeatTime` <= 255; a block stride is the distance between the 8 blocks of one repeat and a
// repeat stride the distance between repeats, both in 32-byte blocks; the continuous mask is the
// first `mask` elements of each repeat (at most 256 / sizeof(T)); masked-off destination elements
// keep their value; mask 0 or repeatTime 0 is a NOP (still one instruction issued). Every operand's
// start address is 32-byte aligned. Each call counts one vector instruction and `repeatTime` repeats.

struct BinaryRepeatParams {
    BinaryRepeatParams() {}
    BinaryRepeatParams(const xbemu::Field<uint8_t> dstBlkStrideIn, const xbemu::Field<uint8_t> src0BlkStrideIn,
                       const xbemu::Field<uint8_t> src1BlkStrideIn, const xbemu::Field<uint8_t> dstRepStrideIn,
                       const xbemu::Field<uint8_t> src0RepStrideIn, const xbemu::Field<uint8_t> src1RepStrideIn)
        : dstBlkStride(dstBlkStrideIn), src0BlkStride(src0BlkStrideIn), src1BlkStride(src1BlkStrideIn),
          dstRepStride(dstRepStrideIn), src0RepStride(src0RepStrideIn), src1RepStride(src1RepStrideIn) {}
    uint32_t blockNumber = 8;
    xbemu::Field<uint8_t> dstBlkStride = 1;
    xbemu::Field<uint8_t> src0BlkStride = 1;
    xbemu::Field<uint8_t> src1BlkStride = 1;
    xbemu::Field<uint8_t> dstRepStride = 8;
    xbemu::Field<uint8_t> src0RepStride = 8;
    xbemu::Field<uint8_t> src1RepStride = 8;
    bool repeatStrideMode = false;
    bool strideSizeMode = false;
};

struct BrcbRepeatParams {
    BrcbRepeatParams() {}
    BrcbRepeatParams(const xbemu::Field<uint16_t> dstBlkStrideIn, const xbemu::Field<uint16_t> dstRepStrideIn)
        : dstRepStride(dstRepStrideIn), dstBlkStride(dstBlkStrideIn) {}
    uint32_t blockNumber = 8;
    xbemu::Field<uint16_t> dstRepStride = 8;
    xbemu::Field<uint16_t> dstBlkStride = 1;
    uint8_t src0BlkStride = 1;
    uint8_t src1BlkStride = 1;
    uint8_t src0RepStride = 8;
    uint8_t src1RepStride = 8;
    bool repeatStrideMode = false;
    bool strideSizeMode = false;
};

struct CopyRepeatParams {
    CopyRepeatParams() {}
    CopyRepeatParams(const xbemu::Field<uint16_t> dstStrideIn, const xbemu::Field<uint16_t> srcStrideIn,
                     xbemu::Field<uint16_t> dstRepeatSizeIn, xbemu::Field<uint16_t> srcRepeatSizeIn)
        : dstStride(dstStrideIn), srcStride(srcStrideIn), dstRepeatSize(dstRepeatSizeIn),
          srcRepeatSize(srcRepeatSizeIn) {}
    xbemu::Field<uint16_t> dstStride = 1;
    xbemu::Field<uint16_t> srcStride = 1;
    xbemu::Field<uint16_t> dstRepeatSize = 8;
    xbemu::Field<uint16_t> srcRepeatSize = 8;
};

namespace detail {
// The strides of the mask/repeat forms have their struct's field widths as range (asc-devkit docs
// 辅助数据结构/BinaryRepeatParams.md, 数据填充/Brcb.md, UBToUB掩码式高维数据搬运(Copy).md). repeatTime stays a
// uint8_t parameter, as in the API: a constant above 255 does not compile (-Woverflow under -Werror).
XBEMU_RT void check_params(const char* api, const BinaryRepeatParams& p) {
    const char* doc = "docs 辅助数据结构/BinaryRepeatParams.md: uint8_t strides";
    xbemu::in_range(api, "BinaryRepeatParams.dstBlkStride", p.dstBlkStride, 0, 255, doc);
    xbemu::in_range(api, "BinaryRepeatParams.src0BlkStride", p.src0BlkStride, 0, 255, doc);
    xbemu::in_range(api, "BinaryRepeatParams.src1BlkStride", p.src1BlkStride, 0, 255, doc);
    xbemu::in_range(api, "BinaryRepeatParams.dstRepStride", p.dstRepStride, 0, 255, doc);
    xbemu::in_range(api, "BinaryRepeatParams.src0RepStride", p.src0RepStride, 0, 255, doc);
    xbemu::in_range(api, "BinaryRepeatParams.src1RepStride", p.src1RepStride, 0, 255, doc);
}
XBEMU_RT void check_params(const char* api, const BrcbRepeatParams& p) {
    const char* doc = "docs 数据填充/Brcb.md: uint16_t strides";
    xbemu::in_range(api, "BrcbRepeatParams.dstBlkStride", p.dstBlkStride, 0, 65535, doc);
    xbemu::in_range(api, "BrcbRepeatParams.dstRepStride", p.dstRepStride, 0, 65535, doc);
}
XBEMU_RT void check_params(const char* api, const CopyRepeatParams& p) {
    const char* doc = "docs UBToUB掩码式高维数据搬运(Copy).md: uint16_t strides";
    xbemu::in_range(api, "CopyRepeatParams.dstStride", p.dstStride, 0, 65535, doc);
    xbemu::in_range(api, "CopyRepeatParams.srcStride", p.srcStride, 0, 65535, doc);
    xbemu::in_range(api, "CopyRepeatParams.dstRepeatSize", p.dstRepeatSize, 0, 65535, doc);
    xbemu::in_range(api, "CopyRepeatParams.srcRepeatSize", p.srcRepeatSize, 0, 65535, doc);
}
}  // namespace detail

enum class ReduceOrder : uint8_t { ORDER_VALUE_INDEX = 0, ORDER_INDEX_VALUE, ORDER_ONLY_VALUE, ORDER_ONLY_INDEX };

namespace detail {
// The element offsets, from the operand's start, of the first `mask` lanes of repeat `r`.
XBEMU_RT uint64_t lane_at(uint64_t r, uint64_t k, uint64_t blk, uint64_t blk_stride, uint64_t rep_stride) {
    return r * rep_stride * blk + (k / blk) * blk_stride * blk + k % blk;
}
// (elem: sizeof(T) of the typed forms below)
XBEMU_RT void mask_ok(const char* api, uint64_t mask, int64_t repeat, uint64_t elem) {
    const uint64_t per = 256 / elem;
    if (repeat < 0 || repeat > 255)
        xbemu::fail(api, "repeatTime " + std::to_string(repeat) + " outside [0, 255]");
    if (mask > per)
        xbemu::fail(api, "mask " + std::to_string(mask) + " above the " + std::to_string(per) +
                             " elements of one 256-byte repeat for this type (continuous mask mode)");
}
template <typename T>
inline void mask_ok(const char* api, uint64_t mask, int64_t repeat) { mask_ok(api, mask, repeat, sizeof(T)); }
XBEMU_RT void aligned32(const char* api, const xbemu::Ub& t, const char* what) {
    xbemu::tensor_live(api, t.ptr, t.slot, t.gen);
    if (xbemu::ub_off(t.ptr) % 32)
        xbemu::fail(api, std::string(what) + " UB address " + xbemu::hexaddr(xbemu::ub_off(t.ptr)) +
                             " is not 32-byte aligned");
}
template <typename T>
inline void aligned32(const char* api, const LocalTensor<T>& t, const char* what) { aligned32(api, ub(t), what); }
// The pipe V touches the lanes [k0, k0 + n) of one DataBlock at element offset `e` of `t`.
XBEMU_RT void touch_block(const char* api, const xbemu::Ub& t, uint64_t e, uint64_t n, bool write) {
    if (e + n > t.size)
        xbemu::fail(api, std::string(write ? "writes" : "reads") + " element " + std::to_string(e + n - 1) +
                             ", past the tensor's " + std::to_string(t.size) + " elements");
    ub_touch(api, xbemu::ub_at(t, static_cast<uint32_t>(e)), xbemu::P_V, write, n, false);
}
template <typename T>
inline void touch_block(const char* api, const LocalTensor<T>& t, uint64_t e, uint64_t n, bool write) {
    touch_block(api, ub(t), e, n, write);
}
// Touch every DataBlock the first `mask` lanes of `repeat` repeats cover.
XBEMU_RT void touch_lanes(const char* api, const xbemu::Ub& t, uint64_t mask, uint64_t repeat, uint64_t bs,
                          uint64_t rs, bool write) {
    const uint64_t blk = 32 / t.elem;
    for (uint64_t r = 0; r < repeat; r++)
        for (uint64_t k = 0; k < mask; k += blk)
            touch_block(api, t, lane_at(r, k, blk, bs, rs), std::min(blk, mask - k), write);
}
template <typename T>
inline void touch_lanes(const char* api, const LocalTensor<T>& t, uint64_t mask, uint64_t repeat, uint64_t bs,
                        uint64_t rs, bool write) {
    touch_lanes(api, ub(t), mask, repeat, bs, rs, write);
}
// Within one repeat the destination and a source cover the same DataBlocks or disjoint ones (ADK docs
// 通用说明和约束.md, address overlap: 100% or none).
XBEMU_RT void overlap_ok(const char* api, const uint8_t* d, const uint8_t* s, uint64_t elem, uint64_t mask,
                         uint64_t repeat, uint64_t dbs, uint64_t drs, uint64_t sbs, uint64_t srs) {
    const uint64_t blk = 32 / elem;
    std::vector<const uint8_t*> db, sb;
    for (uint64_t r = 0; r < repeat; r++) {
        db.clear();
        sb.clear();
        for (uint64_t k = 0; k < mask; k += blk) {
            db.push_back(d + lane_at(r, k, blk, dbs, drs) * elem);
            sb.push_back(s + lane_at(r, k, blk, sbs, srs) * elem);
        }
        if (db == sb) continue;
        for (const uint8_t* x : db)
            for (const uint8_t* y : sb)
                if (x < y + blk * elem && y < x + blk * elem)
                    xbemu::fail(api, "the destination of a repeat partly overlaps a source (only the same blocks "
                                     "or disjoint ones are allowed)");
    }
}
template <typename T>
inline void overlap_ok(const char* api, const T* d, const T* s, uint64_t mask, uint64_t repeat, uint64_t dbs,
                       uint64_t drs, uint64_t sbs, uint64_t srs) {
    overlap_ok(api, reinterpret_cast<const uint8_t*>(d), reinterpret_cast<const uint8_t*>(s), sizeof(T), mask, repeat,
               dbs, drs, sbs, srs);
}
template <typename T, typename F>
inline void binary_rep(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b,
                       uint64_t mask, uint8_t repeat, const BinaryRepeatParams& p, F f) {
    mask_ok<T>(api, mask, repeat);
    aligned32(api, dst, "dst");
    aligned32(api, a, "src0");
    aligned32(api, b, "src1");
    const uint64_t blk = 32 / sizeof(T);
    if (p.dstBlkStride == 0 && mask > blk)
        xbemu::fail(api, "dstBlkStride 0 (the blocks of one repeat on one another) is undefined");
    xbemu::vec_count(uint64_t(repeat) * 256);
    if (mask == 0 || repeat == 0) return;
    overlap_ok(api, dst.ptr_, a.ptr_, mask, repeat, p.dstBlkStride, p.dstRepStride, p.src0BlkStride, p.src0RepStride);
    overlap_ok(api, dst.ptr_, b.ptr_, mask, repeat, p.dstBlkStride, p.dstRepStride, p.src1BlkStride, p.src1RepStride);
    touch_lanes(api, a, mask, repeat, p.src0BlkStride, p.src0RepStride, false);
    touch_lanes(api, b, mask, repeat, p.src1BlkStride, p.src1RepStride, false);
    touch_lanes(api, dst, mask, repeat, p.dstBlkStride, p.dstRepStride, true);
    std::vector<T> v(mask);
    for (uint64_t r = 0; r < repeat; r++) {  // one repeat reads all its sources before it writes
        for (uint64_t k = 0; k < mask; k++)
            v[k] = static_cast<T>(f(a.ptr_[lane_at(r, k, blk, p.src0BlkStride, p.src0RepStride)],
                                    b.ptr_[lane_at(r, k, blk, p.src1BlkStride, p.src1RepStride)]));
        for (uint64_t k = 0; k < mask; k++) dst.ptr_[lane_at(r, k, blk, p.dstBlkStride, p.dstRepStride)] = v[k];
    }
}
}  // namespace detail

#define XBEMU_BINARY_REP(NAME, CHECK, EXPR)                                                                    \
    template <typename T, bool isSetMask = true>                                                               \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,        \
                     uint64_t mask, const uint8_t repeatTime, const BinaryRepeatParams& repeatParams) {        \
        static_assert(CHECK<T>(), #NAME ": data type not supported by the vector unit on this SoC");           \
        detail::check_params(#NAME, repeatParams);                                                             \
        detail::binary_rep(#NAME, dst, src0, src1, mask, repeatTime, repeatParams,                             \
                           [](T x, T y) { return EXPR; });                                                     \
    }
XBEMU_BINARY_REP(Add, detail::is_vec_arith, detail::arith<T>('+', x, y))
XBEMU_BINARY_REP(Sub, detail::is_vec_arith, detail::arith<T>('-', x, y))
XBEMU_BINARY_REP(Mul, detail::is_vec_arith, detail::arith<T>('*', x, y))
XBEMU_BINARY_REP(Div, detail::is_vec_float, detail::tof(x) / detail::tof(y))
XBEMU_BINARY_REP(Max, detail::is_vec_arith, detail::greater<T>(x, y) ? x : y)
XBEMU_BINARY_REP(Min, detail::is_vec_arith, detail::less<T>(x, y) ? x : y)
#undef XBEMU_BINARY_REP

// Brcb (ADK docs .../数据填充/Brcb.md; A2: 16- and 32-bit T): repeat i reads src[8i .. 8i+7] and fills
// DataBlock i * dstRepStride + j * dstBlkStride of dst with src[8i + j]. dstBlkStride 0 is undefined;
// src and dst may not share memory.
template <typename T>
inline void Brcb(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const uint8_t repeatTime,
                 const BrcbRepeatParams& repeatParams) {
    static_assert(is_duplicable<T>(), "Brcb: 16- and 32-bit types only on A2");
    const char* api = "Brcb";
    detail::check_params(api, repeatParams);
    detail::aligned32(api, dst, "dst");
    detail::aligned32(api, src0, "src");
    if (repeatParams.dstBlkStride == 0) xbemu::fail(api, "dstBlkStride 0 is undefined");
    xbemu::vec_count(uint64_t(repeatTime) * 256);
    if (repeatTime == 0) return;
    const uint64_t blk = 32 / sizeof(T), n = 8 * uint64_t(repeatTime);
    detail::touch_block(api, src0, 0, n, false);
    const T* s0 = src0.ptr_;
    for (uint64_t i = 0; i < repeatTime; i++)
        for (uint64_t j = 0; j < 8; j++) {
            const uint64_t e = (i * repeatParams.dstRepStride + j * repeatParams.dstBlkStride) * blk;
            if (dst.ptr_ + e < s0 + n && s0 < dst.ptr_ + e + blk)
                xbemu::fail(api, "source and destination share memory");
            detail::touch_block(api, dst, e, blk, true);
        }
    std::vector<T> v(s0, s0 + n);
    for (uint64_t i = 0; i < repeatTime; i++)
        for (uint64_t j = 0; j < 8; j++) {
            T* b = dst.ptr_ + (i * repeatParams.dstRepStride + j * repeatParams.dstBlkStride) * blk;
            for (uint64_t k = 0; k < blk; k++) b[k] = v[i * 8 + j];
        }
}

// Copy, mask/repeat form (ADK docs .../UB与UB数据搬运/UBToUB掩码式高维数据搬运(Copy).md; A2: 16- and
// 32-bit T): block strides dstStride/srcStride, repeat strides dstRepeatSize/srcRepeatSize in [0, 4095],
// all in 32-byte blocks; a source stride 0 re-reads one block (the broadcast of a block).
template <typename T, bool isSetMask = true>
inline void Copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask, const uint8_t repeatTime,
                 const CopyRepeatParams& repeatParams) {
    static_assert(is_duplicable<T>(), "Copy: 16- and 32-bit types only on A2");
    const char* api = "Copy";
    detail::check_params(api, repeatParams);
    const CopyRepeatParams& p = repeatParams;
    detail::mask_ok<T>(api, mask, repeatTime);
    detail::aligned32(api, dst, "dst");
    detail::aligned32(api, src, "src");
    if (p.dstRepeatSize > 4095 || p.srcRepeatSize > 4095)
        xbemu::fail(api, "dstRepeatSize/srcRepeatSize above 4095");
    const uint64_t blk = 32 / sizeof(T);
    if (p.dstStride == 0 && mask > blk)
        xbemu::fail(api, "dstStride 0 (the blocks of one repeat on one another) is undefined");
    xbemu::vec_count(uint64_t(repeatTime) * 256);
    if (mask == 0 || repeatTime == 0) return;
    detail::overlap_ok(api, dst.ptr_, src.ptr_, mask, repeatTime, p.dstStride, p.dstRepeatSize, p.srcStride,
                       p.srcRepeatSize);
    detail::touch_lanes(api, src, mask, repeatTime, p.srcStride, p.srcRepeatSize, false);
    detail::touch_lanes(api, dst, mask, repeatTime, p.dstStride, p.dstRepeatSize, true);
    std::vector<T> v(mask);
    for (uint64_t r = 0; r < repeatTime; r++) {
        for (uint64_t k = 0; k < mask; k++) v[k] = src.ptr_[detail::lane_at(r, k, blk, p.srcStride, p.srcRepeatSize)];
        for (uint64_t k = 0; k < mask; k++) dst.ptr_[detail::lane_at(r, k, blk, p.dstStride, p.dstRepeatSize)] = v[k];
    }
}

// WholeReduceSum/Max/Min (CANN 8 and 9.0 declare them; CANN 9.1 keeps them, deprecated, beside
// ReduceRepeat<ReduceType>; ADK docs .../归约计算/ReduceRepeat.md): one result per repeat, of the first
// `mask` lanes (srcBlkStride/srcRepStride in blocks, [0, 65535]); results go to dst[i * dstRepStride]
// in units of one result: sizeof(T) for a sum or ORDER_ONLY_VALUE, 2 * sizeof(T) for value and index,
// 4 bytes for ORDER_ONLY_INDEX; dst is aligned to that unit (src to 32 B). A2: half and float. A sum
// adds the lanes as a binary tree (modelled in float, rounded once); max/min keep the first extreme
// (its index is the lane within the repeat) and skip NaN unless every lane is NaN, as ReduceMax does.
namespace detail {
template <typename T>
inline void whole_reduce(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& src, int32_t mask,
                         int32_t repeat, int32_t dstRep, int32_t srcBlk, int32_t srcRep, int kind,
                         ReduceOrder order) {
    static_assert(is_vec_float<T>(), "WholeReduceSum/Max/Min: half and float only on A2");
    if (mask < 0) xbemu::fail(api, "negative mask");
    mask_ok<T>(api, static_cast<uint64_t>(mask), repeat);
    for (int32_t s : {dstRep, srcBlk, srcRep})
        if (s < 0 || s > 65535) xbemu::fail(api, "stride " + std::to_string(s) + " outside [0, 65535]");
    aligned32(api, src, "src");
    const bool index = kind != 0 && order != ReduceOrder::ORDER_ONLY_VALUE;
    const uint64_t unit = kind == 0 || order == ReduceOrder::ORDER_ONLY_VALUE ? sizeof(T)
                          : order == ReduceOrder::ORDER_ONLY_INDEX ? 4 : 2 * sizeof(T);
    dst.live(api);
    if (xbemu::ub_off(dst.ptr_) % unit)
        xbemu::fail(api, "dst UB address " + xbemu::hexaddr(xbemu::ub_off(dst.ptr_)) + " is not " +
                             std::to_string(unit) + "-byte aligned");
    xbemu::vec_count(uint64_t(repeat) * 256);
    if (mask == 0 || repeat == 0) return;
    const uint64_t blk = 32 / sizeof(T), m = static_cast<uint64_t>(mask);
    touch_lanes(api, src, m, repeat, srcBlk, srcRep, false);
    std::vector<float> lanes(m);
    for (int32_t r = 0; r < repeat; r++) {
        for (uint64_t k = 0; k < m; k++) lanes[k] = tof(src.ptr_[lane_at(r, k, blk, srcBlk, srcRep)]);
        uint8_t* out = reinterpret_cast<uint8_t*>(dst.ptr_) + uint64_t(r) * dstRep * unit;
        LocalTensor<T> at = dst[static_cast<uint32_t>((out - reinterpret_cast<uint8_t*>(dst.ptr_)) / sizeof(T))];
        touch(api, at, xbemu::P_V, true, unit / sizeof(T) ? unit / sizeof(T) : 1, false);
        if (kind == 0) {
            for (uint64_t w = 1; w < m; w *= 2)  // pairwise: lane k takes lane k + w
                for (uint64_t k = 0; k + w < m; k += 2 * w) lanes[k] += lanes[k + w];
            at.ptr_[0] = static_cast<T>(lanes[0]);
            continue;
        }
        uint64_t best = 0;
        for (uint64_t k = 1; k < m; k++) {
            if (std::isnan(lanes[best]) && !std::isnan(lanes[k])) best = k;
            else if (kind == 1 ? lanes[k] > lanes[best] : lanes[k] < lanes[best]) best = k;
        }
        const T v = static_cast<T>(src.ptr_[lane_at(r, best, blk, srcBlk, srcRep)]);
        using I = typename std::conditional<sizeof(T) == 4, uint32_t, uint16_t>::type;
        const I idx = static_cast<I>(best);
        uint8_t* p = reinterpret_cast<uint8_t*>(at.ptr_);
        if (order == ReduceOrder::ORDER_ONLY_INDEX) {
            const uint32_t i32 = static_cast<uint32_t>(best);
            std::memcpy(p, &i32, 4);
        } else if (order == ReduceOrder::ORDER_INDEX_VALUE) {
            std::memcpy(p, &idx, sizeof(T));
            std::memcpy(p + sizeof(T), &v, sizeof(T));
        } else {
            std::memcpy(p, &v, sizeof(T));
            if (index) std::memcpy(p + sizeof(T), &idx, sizeof(T));
        }
    }
}
}  // namespace detail

template <typename T, bool isSetMask = true>
inline void WholeReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask,
                           const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,
                           const int32_t srcRepStride) {
    detail::whole_reduce("WholeReduceSum", dst, src, mask, repeatTime, dstRepStride, srcBlkStride, srcRepStride, 0,
                         ReduceOrder::ORDER_ONLY_VALUE);
}
template <typename T, bool isSetMask = true>
inline void WholeReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask,
                           const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,
                           const int32_t srcRepStride, ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX) {
    detail::whole_reduce("WholeReduceMax", dst, src, mask, repeatTime, dstRepStride, srcBlkStride, srcRepStride, 1,
                         order);
}
template <typename T, bool isSetMask = true>
inline void WholeReduceMin(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask,
                           const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,
                           const int32_t srcRepStride, ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX) {
    detail::whole_reduce("WholeReduceMin", dst, src, mask, repeatTime, dstRepStride, srcBlkStride, srcRepStride, 2,
                         order);
}

// BlockReduceSum/Max/Min (CANN 8 and 9.0 declare them; CANN 9.1 keeps them, deprecated, beside
// ReduceDataBlock<ReduceType>: asc-devkit impl/basic_api/kernel_operator_vec_reduce_intf_impl.h): one result
// per DataBlock of each repeat (8 a repeat), the results of repeat i at dst[i * dstRepStride * 8]
// (dstRepStride in units of one repeat's 8 results), the results of a repeat contiguous; dst aligned to
// 16 B (half) or 32 B (float), src to 32 B. The model takes a continuous mask of whole blocks only (a
// partly masked block is refused). A sum adds a block's lanes as a binary tree (the dev kit's
// description), max/min as WholeReduceMax/Min (first extreme, NaN skipped unless every lane is NaN).
namespace detail {
template <typename T>
inline void block_reduce(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& src, int32_t repeat,
                         int32_t mask, int32_t dstRep, int32_t srcBlk, int32_t srcRep, int kind) {
    static_assert(is_vec_float<T>(), "BlockReduceSum/Max/Min: half and float only on A2");
    const uint64_t blk = 32 / sizeof(T);
    if (mask < 0) xbemu::fail(api, "negative mask");
    mask_ok<T>(api, static_cast<uint64_t>(mask), repeat);
    if (static_cast<uint64_t>(mask) % blk)
        xbemu::fail(api, "mask " + std::to_string(mask) + " covers part of a DataBlock (the model takes whole blocks)");
    for (int32_t s : {dstRep, srcBlk, srcRep})
        if (s < 0 || s > 65535) xbemu::fail(api, "stride " + std::to_string(s) + " outside [0, 65535]");
    aligned32(api, src, "src");
    dst.live(api);
    if (xbemu::ub_off(dst.ptr_) % (sizeof(T) * 8))
        xbemu::fail(api, "dst UB address " + xbemu::hexaddr(xbemu::ub_off(dst.ptr_)) + " is not " +
                             std::to_string(sizeof(T) * 8) + "-byte aligned");
    xbemu::vec_count(uint64_t(repeat) * 256);
    if (mask == 0 || repeat == 0) return;
    const uint64_t m = static_cast<uint64_t>(mask), nb = m / blk;
    touch_lanes(api, src, m, repeat, srcBlk, srcRep, false);
    std::vector<float> lanes(blk);
    std::vector<T> out(nb);
    for (int32_t r = 0; r < repeat; r++) {
        for (uint64_t b = 0; b < nb; b++) {
            for (uint64_t k = 0; k < blk; k++) lanes[k] = tof(src.ptr_[lane_at(r, b * blk + k, blk, srcBlk, srcRep)]);
            if (kind == 0) {
                for (uint64_t w = 1; w < blk; w *= 2)
                    for (uint64_t k = 0; k + w < blk; k += 2 * w) lanes[k] += lanes[k + w];
                out[b] = static_cast<T>(lanes[0]);
                continue;
            }
            uint64_t best = 0;
            for (uint64_t k = 1; k < blk; k++) {
                if (std::isnan(lanes[best]) && !std::isnan(lanes[k])) best = k;
                else if (kind == 1 ? lanes[k] > lanes[best] : lanes[k] < lanes[best]) best = k;
            }
            out[b] = src.ptr_[lane_at(r, b * blk + best, blk, srcBlk, srcRep)];
        }
        LocalTensor<T> at = dst[static_cast<uint32_t>(uint64_t(r) * dstRep * 8)];
        touch(api, at, xbemu::P_V, true, nb, false);
        for (uint64_t b = 0; b < nb; b++) at.ptr_[b] = out[b];
    }
}
}  // namespace detail

template <typename T, bool isSetMask = true>
inline void BlockReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime,
                           const int32_t mask, const int32_t dstRepStride, const int32_t srcBlkStride,
                           const int32_t srcRepStride) {
    detail::block_reduce("BlockReduceSum", dst, src, repeatTime, mask, dstRepStride, srcBlkStride, srcRepStride, 0);
}
template <typename T, bool isSetMask = true>
inline void BlockReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime,
                           const int32_t mask, const int32_t dstRepStride, const int32_t srcBlkStride,
                           const int32_t srcRepStride) {
    detail::block_reduce("BlockReduceMax", dst, src, repeatTime, mask, dstRepStride, srcBlkStride, srcRepStride, 1);
}
template <typename T, bool isSetMask = true>
inline void BlockReduceMin(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime,
                           const int32_t mask, const int32_t dstRepStride, const int32_t srcBlkStride,
                           const int32_t srcRepStride) {
    detail::block_reduce("BlockReduceMin", dst, src, repeatTime, mask, dstRepStride, srcBlkStride, srcRepStride, 2);
}

}  // namespace AscendC

// The sort family (Sort32, MrgSort, Sort, Concat, Extract) on (score, index) pairs.
#include "sort.h"
// The Cube unit (L1/L0A/L0B/L0C, Nd2Nz, LoadData, Mmad, Fixpipe, cross-core flags).
#include "cube.h"
// The launcher that runs the blocks of a launch (the model's side of the host; no kernel API).
#include "emu_launch.h"

#if !defined(ASCENDC_CPU_DEBUG) && !defined(XBEMU_CPU_DEBUG)
// NPU build. An NPU build of kernel_operator.h includes no host C/C++ library header (the ADK's
// public headers include <cstdio>, <string>, ... only under ASCENDC_CPU_DEBUG; REFERENCE.md 0.1),
// so kernel code cannot use libm, stdio, stdlib, string.h or namespace std. The model needs them
// and includes them above; for the code that follows, each of their names is turned into
// XBEMU_NPU_BUILD_HAS_NO_<name>, which nothing declares: `sqrtf(x)`, `INFINITY`, `printf(...)`,
// `std::exp(x)` fail to compile here as with CANN's compiler, while a kernel's own variable that
// happens to be called `nan` or `std` is renamed consistently and still compiles (unlike with
// #pragma GCC poison). Special values: __builtin_inff(), __builtin_nanf(""), or bit patterns.
// Host programs that embed a kernel (tests) define ASCENDC_CPU_DEBUG, or include emu_launch.h
// first: that is CANN's CPU-debug build, which sees the host headers.
#undef std
#define std XBEMU_NPU_BUILD_HAS_NO_std
#undef INFINITY
#define INFINITY XBEMU_NPU_BUILD_HAS_NO_INFINITY
#undef NAN
#define NAN XBEMU_NPU_BUILD_HAS_NO_NAN
#undef HUGE_VAL
#define HUGE_VAL XBEMU_NPU_BUILD_HAS_NO_HUGE_VAL
#undef HUGE_VALF
#define HUGE_VALF XBEMU_NPU_BUILD_HAS_NO_HUGE_VALF
#undef M_PI
#define M_PI XBEMU_NPU_BUILD_HAS_NO_M_PI
#undef M_E
#define M_E XBEMU_NPU_BUILD_HAS_NO_M_E
#undef M_LN2
#define M_LN2 XBEMU_NPU_BUILD_HAS_NO_M_LN2
#undef M_LOG2E
#define M_LOG2E XBEMU_NPU_BUILD_HAS_NO_M_LOG2E
#undef M_SQRT2
#define M_SQRT2 XBEMU_NPU_BUILD_HAS_NO_M_SQRT2
#undef sqrt
#define sqrt XBEMU_NPU_BUILD_HAS_NO_sqrt
#undef sqrtf
#define sqrtf XBEMU_NPU_BUILD_HAS_NO_sqrtf
#undef cbrt
#define cbrt XBEMU_NPU_BUILD_HAS_NO_cbrt
#undef cbrtf
#define cbrtf XBEMU_NPU_BUILD_HAS_NO_cbrtf
#undef exp
#define exp XBEMU_NPU_BUILD_HAS_NO_exp
#undef expf
#define expf XBEMU_NPU_BUILD_HAS_NO_expf
#undef exp2
#define exp2 XBEMU_NPU_BUILD_HAS_NO_exp2
#undef exp2f
#define exp2f XBEMU_NPU_BUILD_HAS_NO_exp2f
#undef expm1
#define expm1 XBEMU_NPU_BUILD_HAS_NO_expm1
#undef expm1f
#define expm1f XBEMU_NPU_BUILD_HAS_NO_expm1f
#undef log
#define log XBEMU_NPU_BUILD_HAS_NO_log
#undef logf
#define logf XBEMU_NPU_BUILD_HAS_NO_logf
#undef log2
#define log2 XBEMU_NPU_BUILD_HAS_NO_log2
#undef log2f
#define log2f XBEMU_NPU_BUILD_HAS_NO_log2f
#undef log10
#define log10 XBEMU_NPU_BUILD_HAS_NO_log10
#undef log10f
#define log10f XBEMU_NPU_BUILD_HAS_NO_log10f
#undef log1p
#define log1p XBEMU_NPU_BUILD_HAS_NO_log1p
#undef log1pf
#define log1pf XBEMU_NPU_BUILD_HAS_NO_log1pf
#undef pow
#define pow XBEMU_NPU_BUILD_HAS_NO_pow
#undef powf
#define powf XBEMU_NPU_BUILD_HAS_NO_powf
#undef fabs
#define fabs XBEMU_NPU_BUILD_HAS_NO_fabs
#undef fabsf
#define fabsf XBEMU_NPU_BUILD_HAS_NO_fabsf
#undef floor
#define floor XBEMU_NPU_BUILD_HAS_NO_floor
#undef floorf
#define floorf XBEMU_NPU_BUILD_HAS_NO_floorf
#undef ceil
#define ceil XBEMU_NPU_BUILD_HAS_NO_ceil
#undef ceilf
#define ceilf XBEMU_NPU_BUILD_HAS_NO_ceilf
#undef round
#define round XBEMU_NPU_BUILD_HAS_NO_round
#undef roundf
#define roundf XBEMU_NPU_BUILD_HAS_NO_roundf
#undef lround
#define lround XBEMU_NPU_BUILD_HAS_NO_lround
#undef llround
#define llround XBEMU_NPU_BUILD_HAS_NO_llround
#undef trunc
#define trunc XBEMU_NPU_BUILD_HAS_NO_trunc
#undef truncf
#define truncf XBEMU_NPU_BUILD_HAS_NO_truncf
#undef rint
#define rint XBEMU_NPU_BUILD_HAS_NO_rint
#undef rintf
#define rintf XBEMU_NPU_BUILD_HAS_NO_rintf
#undef nearbyint
#define nearbyint XBEMU_NPU_BUILD_HAS_NO_nearbyint
#undef nearbyintf
#define nearbyintf XBEMU_NPU_BUILD_HAS_NO_nearbyintf
#undef fmod
#define fmod XBEMU_NPU_BUILD_HAS_NO_fmod
#undef fmodf
#define fmodf XBEMU_NPU_BUILD_HAS_NO_fmodf
#undef remainder
#define remainder XBEMU_NPU_BUILD_HAS_NO_remainder
#undef fmin
#define fmin XBEMU_NPU_BUILD_HAS_NO_fmin
#undef fminf
#define fminf XBEMU_NPU_BUILD_HAS_NO_fminf
#undef fmax
#define fmax XBEMU_NPU_BUILD_HAS_NO_fmax
#undef fmaxf
#define fmaxf XBEMU_NPU_BUILD_HAS_NO_fmaxf
#undef fma
#define fma XBEMU_NPU_BUILD_HAS_NO_fma
#undef fmaf
#define fmaf XBEMU_NPU_BUILD_HAS_NO_fmaf
#undef copysign
#define copysign XBEMU_NPU_BUILD_HAS_NO_copysign
#undef copysignf
#define copysignf XBEMU_NPU_BUILD_HAS_NO_copysignf
#undef hypot
#define hypot XBEMU_NPU_BUILD_HAS_NO_hypot
#undef hypotf
#define hypotf XBEMU_NPU_BUILD_HAS_NO_hypotf
#undef ldexp
#define ldexp XBEMU_NPU_BUILD_HAS_NO_ldexp
#undef ldexpf
#define ldexpf XBEMU_NPU_BUILD_HAS_NO_ldexpf
#undef frexp
#define frexp XBEMU_NPU_BUILD_HAS_NO_frexp
#undef frexpf
#define frexpf XBEMU_NPU_BUILD_HAS_NO_frexpf
#undef modf
#define modf XBEMU_NPU_BUILD_HAS_NO_modf
#undef modff
#define modff XBEMU_NPU_BUILD_HAS_NO_modff
#undef sin
#define sin XBEMU_NPU_BUILD_HAS_NO_sin
#undef sinf
#define sinf XBEMU_NPU_BUILD_HAS_NO_sinf
#undef cos
#define cos XBEMU_NPU_BUILD_HAS_NO_cos
#undef cosf
#define cosf XBEMU_NPU_BUILD_HAS_NO_cosf
#undef tan
#define tan XBEMU_NPU_BUILD_HAS_NO_tan
#undef tanf
#define tanf XBEMU_NPU_BUILD_HAS_NO_tanf
#undef asin
#define asin XBEMU_NPU_BUILD_HAS_NO_asin
#undef asinf
#define asinf XBEMU_NPU_BUILD_HAS_NO_asinf
#undef acos
#define acos XBEMU_NPU_BUILD_HAS_NO_acos
#undef acosf
#define acosf XBEMU_NPU_BUILD_HAS_NO_acosf
#undef atan
#define atan XBEMU_NPU_BUILD_HAS_NO_atan
#undef atanf
#define atanf XBEMU_NPU_BUILD_HAS_NO_atanf
#undef atan2
#define atan2 XBEMU_NPU_BUILD_HAS_NO_atan2
#undef atan2f
#define atan2f XBEMU_NPU_BUILD_HAS_NO_atan2f
#undef sinh
#define sinh XBEMU_NPU_BUILD_HAS_NO_sinh
#undef sinhf
#define sinhf XBEMU_NPU_BUILD_HAS_NO_sinhf
#undef cosh
#define cosh XBEMU_NPU_BUILD_HAS_NO_cosh
#undef coshf
#define coshf XBEMU_NPU_BUILD_HAS_NO_coshf
#undef tanh
#define tanh XBEMU_NPU_BUILD_HAS_NO_tanh
#undef tanhf
#define tanhf XBEMU_NPU_BUILD_HAS_NO_tanhf
#undef erf
#define erf XBEMU_NPU_BUILD_HAS_NO_erf
#undef erff
#define erff XBEMU_NPU_BUILD_HAS_NO_erff
#undef erfc
#define erfc XBEMU_NPU_BUILD_HAS_NO_erfc
#undef erfcf
#define erfcf XBEMU_NPU_BUILD_HAS_NO_erfcf
#undef tgamma
#define tgamma XBEMU_NPU_BUILD_HAS_NO_tgamma
#undef lgamma
#define lgamma XBEMU_NPU_BUILD_HAS_NO_lgamma
#undef isnan
#define isnan XBEMU_NPU_BUILD_HAS_NO_isnan
#undef isinf
#define isinf XBEMU_NPU_BUILD_HAS_NO_isinf
#undef isfinite
#define isfinite XBEMU_NPU_BUILD_HAS_NO_isfinite
#undef signbit
#define signbit XBEMU_NPU_BUILD_HAS_NO_signbit
#undef fpclassify
#define fpclassify XBEMU_NPU_BUILD_HAS_NO_fpclassify
#undef nan
#define nan XBEMU_NPU_BUILD_HAS_NO_nan
#undef nanf
#define nanf XBEMU_NPU_BUILD_HAS_NO_nanf
#undef printf
#define printf XBEMU_NPU_BUILD_HAS_NO_printf
#undef fprintf
#define fprintf XBEMU_NPU_BUILD_HAS_NO_fprintf
#undef sprintf
#define sprintf XBEMU_NPU_BUILD_HAS_NO_sprintf
#undef snprintf
#define snprintf XBEMU_NPU_BUILD_HAS_NO_snprintf
#undef vprintf
#define vprintf XBEMU_NPU_BUILD_HAS_NO_vprintf
#undef vfprintf
#define vfprintf XBEMU_NPU_BUILD_HAS_NO_vfprintf
#undef vsnprintf
#define vsnprintf XBEMU_NPU_BUILD_HAS_NO_vsnprintf
#undef puts
#define puts XBEMU_NPU_BUILD_HAS_NO_puts
#undef putchar
#define putchar XBEMU_NPU_BUILD_HAS_NO_putchar
#undef fputs
#define fputs XBEMU_NPU_BUILD_HAS_NO_fputs
#undef fputc
#define fputc XBEMU_NPU_BUILD_HAS_NO_fputc
#undef fopen
#define fopen XBEMU_NPU_BUILD_HAS_NO_fopen
#undef fclose
#define fclose XBEMU_NPU_BUILD_HAS_NO_fclose
#undef fread
#define fread XBEMU_NPU_BUILD_HAS_NO_fread
#undef fwrite
#define fwrite XBEMU_NPU_BUILD_HAS_NO_fwrite
#undef fflush
#define fflush XBEMU_NPU_BUILD_HAS_NO_fflush
#undef perror
#define perror XBEMU_NPU_BUILD_HAS_NO_perror
#undef scanf
#define scanf XBEMU_NPU_BUILD_HAS_NO_scanf
#undef FILE
#define FILE XBEMU_NPU_BUILD_HAS_NO_FILE
#undef stdin
#define stdin XBEMU_NPU_BUILD_HAS_NO_stdin
#undef stdout
#define stdout XBEMU_NPU_BUILD_HAS_NO_stdout
#undef stderr
#define stderr XBEMU_NPU_BUILD_HAS_NO_stderr
#undef malloc
#define malloc XBEMU_NPU_BUILD_HAS_NO_malloc
#undef calloc
#define calloc XBEMU_NPU_BUILD_HAS_NO_calloc
#undef realloc
#define realloc XBEMU_NPU_BUILD_HAS_NO_realloc
#undef free
#define free XBEMU_NPU_BUILD_HAS_NO_free
#undef abort
#define abort XBEMU_NPU_BUILD_HAS_NO_abort
#undef exit
#define exit XBEMU_NPU_BUILD_HAS_NO_exit
#undef atexit
#define atexit XBEMU_NPU_BUILD_HAS_NO_atexit
#undef getenv
#define getenv XBEMU_NPU_BUILD_HAS_NO_getenv
#undef system
#define system XBEMU_NPU_BUILD_HAS_NO_system
#undef atoi
#define atoi XBEMU_NPU_BUILD_HAS_NO_atoi
#undef atol
#define atol XBEMU_NPU_BUILD_HAS_NO_atol
#undef atof
#define atof XBEMU_NPU_BUILD_HAS_NO_atof
#undef strtol
#define strtol XBEMU_NPU_BUILD_HAS_NO_strtol
#undef strtoul
#define strtoul XBEMU_NPU_BUILD_HAS_NO_strtoul
#undef strtod
#define strtod XBEMU_NPU_BUILD_HAS_NO_strtod
#undef strtof
#define strtof XBEMU_NPU_BUILD_HAS_NO_strtof
#undef qsort
#define qsort XBEMU_NPU_BUILD_HAS_NO_qsort
#undef bsearch
#define bsearch XBEMU_NPU_BUILD_HAS_NO_bsearch
#undef abs
#define abs XBEMU_NPU_BUILD_HAS_NO_abs
#undef labs
#define labs XBEMU_NPU_BUILD_HAS_NO_labs
#undef llabs
#define llabs XBEMU_NPU_BUILD_HAS_NO_llabs
#undef rand
#define rand XBEMU_NPU_BUILD_HAS_NO_rand
#undef srand
#define srand XBEMU_NPU_BUILD_HAS_NO_srand
#undef memcpy
#define memcpy XBEMU_NPU_BUILD_HAS_NO_memcpy
#undef memmove
#define memmove XBEMU_NPU_BUILD_HAS_NO_memmove
#undef memset
#define memset XBEMU_NPU_BUILD_HAS_NO_memset
#undef memcmp
#define memcmp XBEMU_NPU_BUILD_HAS_NO_memcmp
#undef memchr
#define memchr XBEMU_NPU_BUILD_HAS_NO_memchr
#undef strlen
#define strlen XBEMU_NPU_BUILD_HAS_NO_strlen
#undef strcpy
#define strcpy XBEMU_NPU_BUILD_HAS_NO_strcpy
#undef strncpy
#define strncpy XBEMU_NPU_BUILD_HAS_NO_strncpy
#undef strcat
#define strcat XBEMU_NPU_BUILD_HAS_NO_strcat
#undef strncat
#define strncat XBEMU_NPU_BUILD_HAS_NO_strncat
#undef strcmp
#define strcmp XBEMU_NPU_BUILD_HAS_NO_strcmp
#undef strncmp
#define strncmp XBEMU_NPU_BUILD_HAS_NO_strncmp
#undef strchr
#define strchr XBEMU_NPU_BUILD_HAS_NO_strchr
#undef strrchr
#define strrchr XBEMU_NPU_BUILD_HAS_NO_strrchr
#undef strstr
#define strstr XBEMU_NPU_BUILD_HAS_NO_strstr
#undef strdup
#define strdup XBEMU_NPU_BUILD_HAS_NO_strdup
#endif  // NPU build
