// xblock's CPU model of the AscendC Cube unit (AIC) on the 910B: L1, L0A, L0B and L0C with their
// capacities and alignments, the NZ / Zz / Zn fractal layouts, GM->L1 DataCopy with Nd2NzParams,
// LoadData (2D), Mmad (with and without a bias from the BiasTable), L1 -> BiasTable DataCopy, Fixpipe
// to GM, the cube-side queues (TPosition A1/B1/C1/A2/B2/C2/CO1), the cross-core flags of mixed
// kernels, and counters (16x16x16 cube ops, bytes per level).
//
// Written from the public API facts in shared/ascendc/REFERENCE.md (sections 1.11-1.13, 2.1);
// no CANN header, library or sample code is used. Strict like kernel_operator.h: an overflowing
// buffer, a misaligned L0 address, a parameter out of its documented range, a queue tensor used
// in the wrong state, or an unpaired cross-core flag is an error that names the API call.
//
// Mixed kernels (KERNEL_TYPE_MIX_AIC_1_1 / MIX_AIC_1_2) run as on the hardware: every block (one AI
// Core) runs the kernel function once on its AIC and once on each of its one or two AIVs, each a
// model core with its own State and CubeState; GM and the SoC profile are shared. The kernel type is
// known only once the kernel runs KERNEL_TASK_TYPE_DEFAULT: the block's first core starts the kernel,
// becomes the AIC when a mixed type is declared, and the AIVs are added then (they start the kernel
// from its beginning). The cores are cooperative contexts (ucontext) on the launching thread: a core
// runs until CrossCoreWaitFlag finds its flag counter at zero, then the next runnable core in slot
// order (AIC, AIV0, AIV1) runs; all unfinished cores waiting is a deadlock, reported with the flags
// they wait for. Cross-core flags (mode 2, AIC <-> AIVs; mode 1, AIV <-> AIV) carry what the setting
// core's pipe knew, so a wait orders the waiting core after the setter's earlier work. Vector-only
// and cube-only kernels run one core per block. A kernel called directly, outside emu_launch.h's
// launcher (unit tests), still runs "fused": one core executes both kinds of section in program
// order, and the cross-core flags are only counted.
//
// XBEMU_CUBE_COUNT_ONLY=1 in the environment skips the arithmetic and data movement (every check
// and counter still runs): the figures for large shapes in docs/BENCHMARKS.md come from it.
#pragma once

#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <memory>
#include <type_traits>

#include "kernel_operator.h"

namespace xbemu {
namespace cube {

enum Mem { L1 = 0, L0A, L0B, L0C, BT, NMEM };
enum Core { ANY = 0, AIC, AIV };

struct Space {
    const char* name;
    uint32_t capacity, align;
    uint32_t used = 0, peak = 0;
    std::vector<uint8_t> bytes;
    // per 32-byte block: the pipe that wrote it last (0xff: none) and that instruction's number (State::seq),
    // and, for the Cube pipes that read local memory (MTE1, M, FIX), the number of the latest that read it
    std::vector<uint8_t> writer;
    std::vector<uint64_t> wseq;
    std::vector<uint64_t> rseq[P_NUM];
};

struct Counters {
    uint64_t cube_ops = 0;       // 16x16x16 (b16) fractal multiply-accumulates issued by Mmad
    uint64_t mmad_calls = 0;
    uint64_t gm_to_l1 = 0;       // bytes, DataCopy with Nd2NzParams
    uint64_t l1_to_l0a = 0;      // bytes, LoadData
    uint64_t l1_to_l0b = 0;
    uint64_t l0c_to_gm = 0;      // bytes written to GM by Fixpipe
    uint64_t l1_to_bt = 0;       // bytes, DataCopy L1 -> BiasTable (C2)
    uint64_t bias_mmad_calls = 0;  // Mmad calls whose C starts at a BiasTable row
    uint64_t cross_core_sets = 0;
    uint64_t peak[NMEM] = {0, 0, 0, 0, 0};
    uint64_t gm_to_l1_calls = 0;  // DataCopy GM->L1 calls (one DMA instruction each)
    uint64_t load_data_calls = 0;  // LoadData L1->L0A/L0B calls
    uint64_t fixpipe_calls = 0;
};

struct CubeState {
    // 910B (dav-c220): L1 512 KB minus 128 B reserved, L0A/L0B 64 KB (512-B aligned), L0C 128 KB (64-B aligned),
    // the BiasTable (TPosition C2) 1 KB, 64-B aligned (ADK L1ToBiasTable-Buffer数据搬运（DataCopy）.md, Mmad.md)
    Space mem[NMEM] = {{"L1", 512 * 1024 - 128, 32}, {"L0A", 64 * 1024, 512}, {"L0B", 64 * 1024, 512},
                       {"L0C", 128 * 1024, 64}, {"BiasTable", 1024, 64}};
    Core core = ANY;
    int flags[16] = {};
    bool count_only = false;
    size_t fix_prune_at = 4096;
    Site site;  // the Cube API call being run (its kernel.cpp line, for messages), empty between calls
    Counters c;
};

// The running core's cube state (switched with st(): the scheduler below); one default core outside a launch.
XBEMU_RT CubeState& default_cube() {
    static CubeState s;
    return s;
}
XBEMU_RT CubeState*& current_cube() {
    static CubeState* p = &default_cube();
    return p;
}
XBEMU_RT CubeState& cs() { return *current_cube(); }

XBEMU_RT void poison_all() {
    for (Space& sp : cs().mem) {
        sp.bytes.assign(sp.capacity, 0xff);  // uninitialised b16/fp32 data reads as NaN
        sp.used = 0;
        sp.writer.assign(sp.capacity / 32, 0xff);
        sp.wseq.assign(sp.capacity / 32, 0);
        for (int p : {P_MTE1, P_M, P_FIX}) sp.rseq[p].assign(sp.capacity / 32, 0);
    }
    cs().fix_prune_at = 4096;
}

// Which space a local tensor lives in (by address), or -1 for the unified buffer.
template <typename T>
inline int space_of(const AscendC::LocalTensor<T>& t) {
    const uint8_t* p = reinterpret_cast<const uint8_t*>(t.ptr_);
    for (int m = 0; m < NMEM; m++) {
        Space& sp = cs().mem[m];
        if (!sp.bytes.empty() && p >= sp.bytes.data() && p < sp.bytes.data() + sp.capacity) return m;
    }
    return -1;
}

template <typename T>
inline uint64_t offset_in(const AscendC::LocalTensor<T>& t, int m) {
    return static_cast<uint64_t>(reinterpret_cast<const uint8_t*>(t.ptr_) - cs().mem[m].bytes.data());
}

XBEMU_RT std::string addr(int m, uint64_t off) {
    char b[48];
    std::snprintf(b, sizeof b, "%s+0x%llx", cs().mem[m].name, static_cast<unsigned long long>(off));
    return b;
}

// ----- hazards between the Cube's pipes ----------------------------------------------------------
// The Cube pipes run the instructions the scalar unit issues asynchronously, as the vector core's do: MTE2
// (GM -> L1), MTE1 (L1 -> L0A/L0B/BiasTable: LoadData, DataCopy to C2), M (Mmad) and FIX (Fixpipe: L0C -> GM).
// On the AIC the compiler inserts no synchronisation; the TPipe-TQue queues insert every one between two
// different pipes (EnQue/DeQue: read-after-write, FreeTensor/AllocTensor: write-after-read), and code outside
// the queues needs SetFlag/WaitFlag (asc-devkit docs/zh/api/SIMD-API/基础API/同步控制/核内同步/关键特性说明.md,
// table 2; guide .../基于TPipe-TQue框架编程/TPipe-TQue框架编程原理.md, data-dependency-sync). Each Cube
// instruction is numbered on its pipe when issued (State::seq); a read of a block another pipe wrote, or a
// write of a block another pipe reads or wrote, must come after that instruction is known complete to the
// accessing pipe (State::visible: flags, barriers, queues), as kernel_operator.h's ub_read / war_check do
// for the unified buffer. Accesses by one pipe (M after M, MTE1 after MTE1) are not checked.

XBEMU_RT uint64_t cube_issue(int pipe) { return ++st().seq[pipe]; }

// The call site of the Cube API being run (the trailing __builtin_FILE/__builtin_LINE parameters), for messages.
struct SiteScope {
    explicit SiteScope(const char* file, int line) { cs().site = Site{file, line}; }
    ~SiteScope() { cs().site = Site{}; }
};

XBEMU_RT std::string hazard_sync(int from, int to, const char* queue) {
    return std::string(" (SetFlag/WaitFlag<HardEvent::") + pipe_name(from) + "_" + pipe_name(to) + ">, or the queue's " +
           queue + ")";
}

// Pipe `pipe`'s instruction `num` reads [off, off + n) of space m: every block another pipe wrote must be complete.
XBEMU_RT void cube_read(const char* api, int m, int pipe, uint64_t off, uint64_t n, uint64_t num) {
    if (n == 0) return;
    Space& sp = cs().mem[m];
    const State& s = st();
    for (uint64_t b = off / 32; b <= (off + n - 1) / 32 && b < sp.writer.size(); b++) {
        const int w = sp.writer[b];
        if (w != 0xff && w != pipe && sp.wseq[b] > s.visible[w][pipe])
            fail(api, "reads " + addr(m, b * 32) + ", which an earlier " + pipe_name(w) + " instruction writes, with no " +
                          pipe_name(w) + "->" + pipe_name(pipe) + " synchronisation in between (read-after-write" +
                          hazard_sync(w, pipe, "EnQue/DeQue") + ")" + where(cs().site));
        if (!sp.rseq[pipe].empty()) sp.rseq[pipe][b] = num;
    }
}

// Pipe `pipe`'s instruction `num` writes [off, off + n) of space m: the reads and writes of other pipes before it
// must be complete (write-after-read, write-after-write).
XBEMU_RT void cube_write(const char* api, int m, int pipe, uint64_t off, uint64_t n, uint64_t num) {
    if (n == 0) return;
    Space& sp = cs().mem[m];
    const State& s = st();
    for (uint64_t b = off / 32; b <= (off + n - 1) / 32 && b < sp.writer.size(); b++) {
        for (int r : {P_MTE1, P_M, P_FIX})
            if (r != pipe && sp.rseq[r][b] > s.visible[r][pipe])
                fail(api, "writes " + addr(m, b * 32) + ", which an earlier " + pipe_name(r) + " instruction reads, "
                              "with no " + pipe_name(r) + "->" + pipe_name(pipe) + " synchronisation in between "
                              "(write-after-read" + hazard_sync(r, pipe, "FreeTensor/AllocTensor") + ")" +
                              where(cs().site));
        const int w = sp.writer[b];
        if (w != 0xff && w != pipe && sp.wseq[b] > s.visible[w][pipe])
            fail(api, "writes " + addr(m, b * 32) + ", which an earlier " + pipe_name(w) + " instruction also writes, "
                          "with no " + pipe_name(w) + "->" + pipe_name(pipe) + " synchronisation in between "
                          "(write-after-write" + hazard_sync(w, pipe, "FreeTensor/AllocTensor") + ")" +
                          where(cs().site));
        sp.writer[b] = static_cast<uint8_t>(pipe);
        sp.wseq[b] = num;
    }
}

// The same for a tensor: bytes [at, at + n) from its start.
template <typename T>
inline void tensor_read(const char* api, const AscendC::LocalTensor<T>& t, int m, int pipe, uint64_t at, uint64_t n,
                        uint64_t num) {
    cube_read(api, m, pipe, static_cast<uint64_t>(reinterpret_cast<const uint8_t*>(t.ptr_) -
                                                  cs().mem[m].bytes.data()) + at, n, num);
}
template <typename T>
inline void tensor_write(const char* api, const AscendC::LocalTensor<T>& t, int m, int pipe, uint64_t at, uint64_t n,
                         uint64_t num) {
    cube_write(api, m, pipe, static_cast<uint64_t>(reinterpret_cast<const uint8_t*>(t.ptr_) -
                                                   cs().mem[m].bytes.data()) + at, n, num);
}

// Fixpipe (FIX) writes [p, p + n) of GM as instruction `seq`. FIX copies whose GM bytes overlap need
// PipeBarrier<PIPE_FIX> between them (the AIC's table 2 of 关键特性说明.md: FIX -> FIX is a manual PipeBarrier;
// atomics exempt, as for MTE3); the bytes are kept until known complete (fix_gm_read).
XBEMU_RT void fix_gm_write(const char* api, const uint8_t* p, uint64_t n, uint64_t seq) {
    State& s = st();
    if (n == 0) return;
    uintptr_t lo = reinterpret_cast<uintptr_t>(p), hi = lo + n;
    std::vector<std::pair<uintptr_t, std::pair<uintptr_t, uint64_t>>> keep;
    auto it = s.fix_gm.lower_bound(lo);
    if (it != s.fix_gm.begin()) --it;
    while (it != s.fix_gm.end() && it->first < hi) {
        const uintptr_t a = it->first, b = it->second.first;
        const uint64_t q = it->second.second;
        if (b <= lo || q == seq) {
            ++it;
            continue;
        }
        if (q > s.visible[P_FIX][P_FIX] && !s.atomic) {
            const Region& r = gm_region(api, p);
            fail(api, "writes bytes [" + std::to_string(lo - reinterpret_cast<uintptr_t>(r.base)) + ", " +
                          std::to_string(hi - reinterpret_cast<uintptr_t>(r.base)) + ") of '" + r.name +
                          "', which an earlier Fixpipe (FIX) also writes and may still be writing: put "
                          "PipeBarrier<PIPE_FIX> between them" + where(cs().site));
        }
        if (a < lo) keep.push_back({a, {lo, q}});
        if (b > hi) keep.push_back({hi, {b, q}});
        it = s.fix_gm.erase(it);
    }
    for (auto& k : keep) s.fix_gm[k.first] = k.second;
    s.fix_gm[lo] = {hi, seq};
    if (s.fix_gm.size() > cs().fix_prune_at) {  // drop the copies FIX and MTE2 know complete
        const uint64_t done = std::min(s.visible[P_FIX][P_FIX], s.visible[P_FIX][P_MTE2]);
        for (auto j = s.fix_gm.begin(); j != s.fix_gm.end();) j = j->second.second <= done ? s.fix_gm.erase(j) : ++j;
        cs().fix_prune_at = std::max<size_t>(4096, 2 * s.fix_gm.size());
    }
}

}  // namespace cube

// A DMA (MTE2) read of GM bytes a Fixpipe may still be writing: this core's needs FIX -> MTE2 (SetFlag/
// WaitFlag<HardEvent::FIX_MTE2>), another core's a cross-core flag set on PIPE_FIX (or on a pipe that waited
// for FIX) after the Fixpipe, which this core waited for.
XBEMU_RT void fix_gm_read(const char* api, const Region& r, const uint8_t* p, uint64_t n) {
    const State& s = st();
    const uintptr_t lo = reinterpret_cast<uintptr_t>(p), hi = lo + n;
    for (int c = 0; c < kMaxCores; c++) {
        const State* o = c == s.slot ? &s : s.peers[c];
        if (!o || o->fix_gm.empty() || (o == &s && c != s.slot)) continue;
        const uint64_t known = o == &s ? s.visible[P_FIX][P_MTE2] : s.xknow[c][P_FIX][P_MTE2];
        auto it = o->fix_gm.lower_bound(lo);
        if (it != o->fix_gm.begin()) --it;
        for (; it != o->fix_gm.end() && it->first < hi; ++it)
            if (it->second.first > lo && it->second.second > known) {
                if (o == &s)
                    fail(api, "reads bytes of '" + r.name + "' that an earlier Fixpipe (FIX) of this core may still "
                                  "be writing: SetFlag/WaitFlag<HardEvent::FIX_MTE2> (or PipeBarrier<PIPE_ALL>) first" +
                                  where(cube::cs().site));
                fail(api, "reads bytes of '" + r.name + "' that a Fixpipe (FIX) of " + core_name(s.block, c) +
                              " may still be writing: nothing orders that Fixpipe before this read (that core's "
                              "CrossCoreSetFlag must come after the Fixpipe completes, set on PIPE_FIX, and this core "
                              "must wait for it)" + where(cube::cs().site));
            }
    }
}

namespace cube {

// A cube API touches `bytes` of tensor t: it must live in `want` (a bitmask of Mem), be aligned,
// fit in the tensor, and its queue slot must be in `state`.
XBEMU_RT int ub_touch(const char* api, const char* role, const Ub& t, unsigned want, uint64_t bytes, SlotState state) {
    tensor_live(api, t.ptr, t.slot, t.gen);
    int m = -1;  // space_of(t)
    for (int k = 0; k < NMEM && m < 0; k++) {
        Space& sp = cs().mem[k];
        if (!sp.bytes.empty() && t.ptr >= sp.bytes.data() && t.ptr < sp.bytes.data() + sp.capacity) m = k;
    }
    if (m < 0 || !(want & (1u << m))) {
        std::string where;
        for (int k = 0; k < NMEM; k++)
            if (want & (1u << k)) where += std::string(where.empty() ? "" : " or ") + cs().mem[k].name;
        fail(api, std::string(role) + " must be in " + where + (m < 0 ? ", not in the unified buffer"
                                                                      : std::string(", not in ") + cs().mem[m].name));
    }
    uint64_t off = static_cast<uint64_t>(t.ptr - cs().mem[m].bytes.data());  // offset_in(t, m)
    if (off % cs().mem[m].align)
        fail(api, std::string(role) + " address " + addr(m, off) + " is not " + std::to_string(cs().mem[m].align) +
                      "-byte aligned");
    if (bytes > static_cast<uint64_t>(t.size) * t.elem)
        fail(api, std::string(role) + " needs " + std::to_string(bytes) + " B but the tensor holds " +
                      std::to_string(static_cast<uint64_t>(t.size) * t.elem) + " B");
    if (t.slot && t.slot->state != state) {
        static const char* names[] = {"free", "allocated", "enqueued", "dequeued"};
        fail(api, std::string(role) + " is a queue tensor in state '" + names[t.slot->state] + "', expected '" +
                      names[state] + "' (AllocTensor -> write -> EnQue -> DeQue -> read -> FreeTensor)");
    }
    return m;
}
template <typename T>
inline int touch(const char* api, const char* role, const AscendC::LocalTensor<T>& t, unsigned want,
                 uint64_t bytes, SlotState state) {
    return ub_touch(api, role, AscendC::detail::ub(t), want, bytes, state);
}

// Kernel types that start no Cube core / no vector core (ADK Kernel-Tiling/设置Kernel类型.md).
XBEMU_RT bool vector_only(int type) { return type == KERNEL_TYPE_AIV_ONLY || type == KERNEL_TYPE_MIX_AIV_1_0; }
XBEMU_RT bool cube_only(int type) { return type == KERNEL_TYPE_AIC_ONLY || type == KERNEL_TYPE_MIX_AIC_1_0; }

XBEMU_RT void need_aic(const char* api) {
    const int type = st().kernel_type;
    if (type < 0)
        fail(api, "cube API in a kernel without KERNEL_TASK_TYPE_DEFAULT (the Cube unit needs an AIC or mixed kernel)");
    if (vector_only(type))
        fail(api, std::string("cube API in a ") +
                      (type == KERNEL_TYPE_AIV_ONLY ? "KERNEL_TYPE_AIV_ONLY" : "KERNEL_TYPE_MIX_AIV_1_0") +
                      " kernel: it starts vector cores only, no Cube core");
    if (cs().core == AIV) fail(api, "cube API called in an ASCEND_IS_AIV section");
    if (st().role == ROLE_AIV) fail(api, "cube API on an AIV (vector core): only the AIC has the Cube unit");
}

XBEMU_RT bool count_only() { return cs().count_only; }

// ----- the cores of one block: cooperative contexts and cross-core flags -------------------------

#if defined(__SANITIZE_ADDRESS__)
#define XBEMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define XBEMU_ASAN 1
#endif
#endif
#ifdef XBEMU_ASAN
extern "C" void __sanitizer_start_switch_fiber(void** fake_stack_save, const void* bottom, size_t size);
extern "C" void __sanitizer_finish_switch_fiber(void* fake_stack_save, const void** bottom_old, size_t* size_old);
#endif

// A cross-core flag in flight: what the setting core's pipe knew complete when the flag was set,
// k[c][x]: core c's (slot's) pipe x instructions up to this number (State::seq).
struct Msg {
    uint64_t k[kMaxCores][P_NUM];
};

constexpr int kCrossFlags = 16;
constexpr size_t kStackBytes = size_t(8) << 20;  // each core's stack (the main thread's usual 8 MB)

// Thrown into a waiting core to unwind it when the launch stops (another core failed, or deadlock);
// not a std::exception, so kernel code and the model's own handlers let it through.
struct Cancel {};

struct CoreCtx {
    State st;
    CubeState cube;
    enum Status { READY, BLOCKED, DONE, FAILED } status = READY;
    bool started = false, cancel = false;
    int wait_flag = -1;  // the flag a BLOCKED core waits for
    Site wait_site;
    std::string error;
    std::deque<Msg> in[kCrossFlags];     // flags that reached this core, not yet waited for (the counter)
    std::deque<Msg> pend2[kCrossFlags];  // an AIV's mode-2 sets the AIC does not count yet (the other AIV has not set)
    std::deque<Msg> pend1[kCrossFlags];  // an AIV's mode-1 sets the other AIV has not matched yet
    ucontext_t ctx;
    uint8_t* stack = nullptr;  // kStackBytes above one inaccessible guard page
    size_t guard = 0;
    void* asan_fake = nullptr;
    CoreCtx() = default;
    CoreCtx(const CoreCtx&) = delete;
    CoreCtx& operator=(const CoreCtx&) = delete;
    ~CoreCtx() {
        if (stack) munmap(stack - guard, kStackBytes + guard);
    }
};

// One block being run: its cores (slot 0 first; for a mixed kernel the AIC, then AIV0, AIV1).
struct BlockRun {
    int64_t idx = 0, num = 1;
    int n = 0;          // cores in the block so far
    int cur = -1;       // the running core, -1 in the scheduler
    int type = -1;      // the kernel type, once the first core declared it
    CoreCtx* cores[kMaxCores] = {};
    void (*call)(void*) = nullptr;  // runs the kernel function
    void* arg = nullptr;
    ucontext_t sched;
    void* sched_fake = nullptr;
    const void* sched_bottom = nullptr;
    size_t sched_size = 0;
};

XBEMU_RT BlockRun*& running() {
    static BlockRun* b = nullptr;
    return b;
}

XBEMU_RT std::vector<std::unique_ptr<CoreCtx>>& core_pool() {
    static std::vector<std::unique_ptr<CoreCtx>> v;
    return v;
}

XBEMU_RT std::string core_label(const State& s) {
    return "block " + std::to_string(s.block) + (s.mixed ? std::string(" ") + slot_name(s.slot) : std::string());
}

// Adds core `slot` to block b, fresh for the block: the launch's SoC profile and buffers, zero counters.
XBEMU_RT CoreCtx& add_core(BlockRun& b, int slot, int role, bool mixed, int sub_idx, int sub_num) {
    std::vector<std::unique_ptr<CoreCtx>>& pool = core_pool();
    while (static_cast<int>(pool.size()) <= slot) pool.emplace_back(new CoreCtx);
    CoreCtx& c = *pool[slot];
    c.status = CoreCtx::READY;
    c.started = c.cancel = false;
    c.wait_flag = -1;
    c.error.clear();
    for (int f = 0; f < kCrossFlags; f++) c.in[f].clear(), c.pend2[f].clear(), c.pend1[f].clear();
    State& s = c.st;
    const State& d = default_state();
    s.ub_total = d.ub_total;
    s.ub_usable = d.ub_usable;
    s.has_pad = d.has_pad;
    s.regions = d.regions;
    reset_core(s, b.idx, b.num);
    s.slot = slot;
    s.role = role;
    s.mixed = mixed;
    s.sub_idx = sub_idx;
    s.sub_num = sub_num;
    if (role == ROLE_AIV && sub_num == 2) s.block_idx = 2 * b.idx + sub_idx;
    for (State*& p : s.peers) p = nullptr;
    s.gm_read = s.gm_write = s.vec_instrs = s.vec_repeats = s.scalar_ub = s.scalar_gm = 0;
    s.dc_in = s.dc_out = s.dc_in_bytes = s.dc_out_bytes = 0;
    CubeState& q = c.cube;
    for (Space& sp : q.mem) sp.used = sp.peak = 0;  // the bytes are poisoned when an AIC kernel starts
    q.core = ANY;
    for (int& f : q.flags) f = 0;
    q.count_only = false;
    q.c = Counters();
    b.cores[slot] = &c;
    if (b.n <= slot) b.n = slot + 1;
    for (int i = 0; i < b.n; i++)
        for (int j = 0; j < kMaxCores; j++) b.cores[i]->st.peers[j] = j < b.n ? &b.cores[j]->st : nullptr;
    return c;
}

// Leaves the running core for the scheduler (for good when `exiting`).
XBEMU_RT void to_scheduler(bool exiting) {
    BlockRun& b = *running();
    CoreCtx& c = *b.cores[b.cur];
#ifdef XBEMU_ASAN
    __sanitizer_start_switch_fiber(exiting ? nullptr : &c.asan_fake, b.sched_bottom, b.sched_size);
#else
    (void)exiting;
#endif
    swapcontext(&c.ctx, &b.sched);
#ifdef XBEMU_ASAN
    __sanitizer_finish_switch_fiber(c.asan_fake, &b.sched_bottom, &b.sched_size);
#endif
}

// The body of every core's context: the kernel function, then this core's kernel end (emu: end_block).
// Errors stay in the context (they cannot unwind past it): the scheduler reports them.
XBEMU_RT void core_main() {
    BlockRun& b = *running();
    CoreCtx& c = *b.cores[b.cur];
#ifdef XBEMU_ASAN
    __sanitizer_finish_switch_fiber(nullptr, &b.sched_bottom, &b.sched_size);
#endif
    try {
        b.call(b.arg);
        end_block();
        c.status = CoreCtx::DONE;
    } catch (const Cancel&) {
        c.status = CoreCtx::DONE;
    } catch (const std::exception& e) {
        c.error = e.what();
        c.status = CoreCtx::FAILED;
    } catch (...) {
        c.error = "an exception that is not a std::exception";
        c.status = CoreCtx::FAILED;
    }
    to_scheduler(true);
}

// Runs core i until it waits, finishes or fails.
XBEMU_RT void resume(BlockRun& b, int i) {
    CoreCtx& c = *b.cores[i];
    if (!c.started) {
        if (!c.stack) {
            const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
            void* m = mmap(nullptr, kStackBytes + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (m == MAP_FAILED) fail("launch", "cannot allocate a core's stack");
            mprotect(m, page, PROT_NONE);  // an overflow faults instead of writing over other memory
            c.stack = static_cast<uint8_t*>(m) + page;
            c.guard = page;
        }
        getcontext(&c.ctx);
        c.ctx.uc_stack.ss_sp = c.stack;
        c.ctx.uc_stack.ss_size = kStackBytes;
        c.ctx.uc_link = nullptr;
        makecontext(&c.ctx, core_main, 0);
        c.started = true;
    }
    b.cur = i;
    current_state() = &c.st;
    current_cube() = &c.cube;
#ifdef XBEMU_ASAN
    __sanitizer_start_switch_fiber(&b.sched_fake, c.stack, kStackBytes);
#endif
    swapcontext(&b.sched, &c.ctx);
#ifdef XBEMU_ASAN
    __sanitizer_finish_switch_fiber(b.sched_fake, nullptr, nullptr);
#endif
    current_state() = &default_state();
    current_cube() = &default_cube();
    b.cur = -1;
}

XBEMU_RT bool runnable(const CoreCtx& c) {
    return c.status == CoreCtx::READY || (c.status == CoreCtx::BLOCKED && !c.in[c.wait_flag].empty());
}

XBEMU_RT std::string deadlock(const BlockRun& b) {
    const State& first = b.cores[0]->st;
    std::string waits, done;
    bool at = false;
    for (int i = 0; i < b.n; i++) {
        const CoreCtx& c = *b.cores[i];
        if (c.status == CoreCtx::BLOCKED) {
            waits += std::string(waits.empty() ? "" : ", ") + (first.mixed ? slot_name(i) : "its core") +
                     " waits for flag " + std::to_string(c.wait_flag) + (at ? ref(c.wait_site) : where(c.wait_site));
            at = true;
        } else if (c.status == CoreCtx::DONE) {
            done += std::string(done.empty() ? "" : ", ") + slot_name(i);
        }
    }
    if (!first.mixed)
        return "block " + std::to_string(b.idx) + ": CrossCoreWaitFlag: deadlock: " + waits + ", and no other core "
               "runs: only a mixed kernel (KERNEL_TYPE_MIX_AIC_1_1 / MIX_AIC_1_2) has an AIC and AIVs that set flags "
               "for each other";
    const bool aic_waits = b.cores[0]->status == CoreCtx::BLOCKED;
    return "block " + std::to_string(b.idx) + ": CrossCoreWaitFlag: deadlock: " + waits +
           (done.empty() ? std::string() : "; " + done + " finished") + ": no core is left to set those flags" +
           (aic_waits && b.n == 3 ? " (the AIC's counter counts a flag once both AIVs have set it)" : "");
}

// Flags set and never waited for, once every core of the block finished ("" if none).
XBEMU_RT std::string leftover_flags(const BlockRun& b) {
    for (int i = 0; i < b.n; i++) {
        const CoreCtx& c = *b.cores[i];
        for (int f = 0; f < kCrossFlags; f++) {
            if (!c.in[f].empty())
                return core_label(c.st) + ": CrossCoreSetFlag: flag " + std::to_string(f) + " was set " +
                       std::to_string(c.in[f].size()) + " time(s) more than it was waited for at kernel exit";
            if (!c.pend2[f].empty())
                return core_label(c.st) + ": CrossCoreSetFlag: flag " + std::to_string(f) + " (mode 2) was set " +
                       std::to_string(c.pend2[f].size()) + " time(s) more than the other AIV set it: the AIC counts "
                       "a flag only once both AIVs have set it, so it was never waited for at kernel exit";
            if (!c.pend1[f].empty())
                return core_label(c.st) + ": CrossCoreSetFlag: flag " + std::to_string(f) + " (mode 1) was set " +
                       std::to_string(c.pend1[f].size()) + " time(s) more than the other AIV set it at kernel exit";
        }
    }
    return "";
}

// Runs one block: its first core, then the AIVs it adds (declare), switching at waits. Returns the
// error that stopped it ("" if none), prefixed with the core ("block 3 AIV1: ..."); the cores
// that were still waiting are unwound (Cancel) before it returns.
XBEMU_RT std::string run_block(BlockRun& b, int64_t idx, int64_t num, void (*call)(void*), void* arg) {
    b.idx = idx;
    b.num = num;
    b.call = call;
    b.arg = arg;
    running() = &b;
    std::string err;
    try {
        add_core(b, 0, ROLE_ANY, false, 0, 1);
        for (int next = 0;;) {
            int pick = -1;
            bool all_done = true;
            for (int k = 0; k < b.n; k++) {
                const int i = (next + k) % b.n;
                if (b.cores[i]->status != CoreCtx::DONE) all_done = false;
                if (pick < 0 && runnable(*b.cores[i])) pick = i;
            }
            if (pick < 0) {
                if (!all_done) err = deadlock(b);
                break;
            }
            resume(b, pick);
            const CoreCtx& c = *b.cores[pick];
            if (c.status == CoreCtx::FAILED) {
                err = core_label(c.st) + ": " + c.error;
                break;
            }
            next = pick + 1;
        }
        if (err.empty()) err = leftover_flags(b);
        for (int i = 0; i < b.n; i++) {  // unwind the cores that still wait
            CoreCtx& c = *b.cores[i];
            if (c.started && c.status == CoreCtx::BLOCKED) {
                c.cancel = true;
                resume(b, i);
            }
        }
    } catch (const std::exception& e) {
        err = "block " + std::to_string(idx) + ": " + e.what();
    }
    running() = nullptr;
    current_state() = &default_state();
    current_cube() = &default_cube();
    return err;
}

// KERNEL_TASK_TYPE_DEFAULT(type) on a core of block b: the first core learns what it is (the AIC
// of a mixed kernel adds its AIVs, which start the kernel from its beginning when they first run).
XBEMU_RT void declare(BlockRun& b, int type) {
    State& s = st();
    if (s.slot > 0) {  // an AIV added when the AIC declared the type
        if (type != b.type)
            fail("KERNEL_TASK_TYPE_DEFAULT", "the AIV declares kernel type " + std::to_string(type) +
                                                 ", the AIC declared " + std::to_string(b.type));
        return;
    }
    b.type = type;
    if (type == KERNEL_TYPE_AIV_ONLY || type == KERNEL_TYPE_MIX_AIV_1_0) {
        s.role = ROLE_AIV;
    } else if (type == KERNEL_TYPE_AIC_ONLY || type == KERNEL_TYPE_MIX_AIC_1_0) {
        s.role = ROLE_AIC;
    } else if (type == KERNEL_TYPE_MIX_AIC_1_1 || type == KERNEL_TYPE_MIX_AIC_1_2) {
        const int aivs = type == KERNEL_TYPE_MIX_AIC_1_2 ? 2 : 1;
        s.role = ROLE_AIC;
        s.mixed = true;
        for (int v = 0; v < aivs; v++) add_core(b, 1 + v, ROLE_AIV, true, v, aivs);
    }
}

// The model pipe a cross-core flag is set or waited on: the pipe by name, PIPE_ALL all of them (-1).
XBEMU_RT int flag_pipe(int p) {
    switch (p) {
        case AscendC::PIPE_V: return P_V;
        case AscendC::PIPE_MTE2: return P_MTE2;
        case AscendC::PIPE_MTE3: return P_MTE3;
        case AscendC::PIPE_MTE1: return P_MTE1;
        case AscendC::PIPE_M: return P_M;
        case AscendC::PIPE_FIX: return P_FIX;
        case AscendC::PIPE_ALL: return -1;
        default: return P_S;
    }
}

// What core s's pipe p (-1: all) knows complete, of itself and of the other cores.
XBEMU_RT Msg knowledge(const State& s, int p) {
    Msg m;
    for (int c = 0; c < kMaxCores; c++)
        for (int x = 0; x < P_NUM; x++) {
            uint64_t v = 0;
            for (int q = 0; q < P_NUM; q++)
                if ((p < 0 || q == p) && s.xknow[c][x][q] > v) v = s.xknow[c][x][q];
            m.k[c][x] = v;
        }
    for (int x = 0; x < P_NUM; x++) m.k[s.slot][x] = p < 0 ? s.seq[x] : (x == p ? s.seq[x] : s.visible[x][p]);
    return m;
}

// A wait on pipe p (-1: all) passed with flag m: p's next instructions (all pipes' after a wait on
// the scalar pipe, which stalls the issue of everything after it) come after what m says is complete.
XBEMU_RT void learn_flag(State& s, int p, const Msg& m) {
    for (int q = 0; q < P_NUM; q++) {
        if (p >= 0 && p != P_S && q != p) continue;
        for (int x = 0; x < P_NUM; x++) {
            if (s.visible[x][q] < m.k[s.slot][x]) s.visible[x][q] = m.k[s.slot][x];
            for (int c = 0; c < kMaxCores; c++)
                if (c != s.slot && s.xknow[c][x][q] < m.k[c][x]) s.xknow[c][x][q] = m.k[c][x];
        }
    }
}

XBEMU_RT void deliver(const char* api, CoreCtx& to, int flag, const Msg& m) {
    if (to.in[flag].size() >= 15)
        fail(api, "flag " + std::to_string(flag) + " set more than 15 times without a wait");
    to.in[flag].push_back(m);
}

XBEMU_RT void merge(Msg& into, const Msg& m) {
    for (int c = 0; c < kMaxCores; c++)
        for (int x = 0; x < P_NUM; x++)
            if (into.k[c][x] < m.k[c][x]) into.k[c][x] = m.k[c][x];
}

// CrossCoreSetFlag<mode, pipe>(flag) on the running core of a launch (the flag semantics: cube.h header).
XBEMU_RT void cross_set(const char* api, int mode, int pipe, int flag) {
    BlockRun& b = *running();
    CoreCtx& me = *b.cores[b.cur];
    if (flag_pipe(pipe) != P_S) close_reads(me.st, flag_pipe(pipe));  // number what the flag reports complete
    const State& s = me.st;
    if (mode == 0) fail(api, "mode 0 (synchronising all the cores of the launch) is not modelled");
    if (!s.mixed)
        fail(api, "mode " + std::to_string(mode) + " synchronises the cores of one AI Core of a mixed kernel "
                  "(KERNEL_TYPE_MIX_AIC_1_1 or MIX_AIC_1_2); this kernel runs one core per block");
    if (mode == 1 && s.role != ROLE_AIV) fail(api, "mode 1 synchronises the AIVs of one AI Core: called on the AIC");
    const Msg m = knowledge(s, pipe);
    if (mode == 2 && s.role == ROLE_AIC) {  // counts on every AIV of the AI Core
        for (int v = 1; v < b.n; v++) deliver(api, *b.cores[v], flag, m);
        return;
    }
    std::deque<Msg>& mine = mode == 2 ? me.pend2[flag] : me.pend1[flag];
    if (mine.size() >= 15) fail(api, "flag " + std::to_string(flag) + " set more than 15 times without a wait");
    mine.push_back(m);
    // once every AIV has set it: one count on the AIC (mode 2) or on every AIV (mode 1)
    for (;;) {
        for (int v = 1; v < b.n; v++)
            if ((mode == 2 ? b.cores[v]->pend2[flag] : b.cores[v]->pend1[flag]).empty()) return;
        Msg all = m;
        for (int v = 1; v < b.n; v++) {
            std::deque<Msg>& q = mode == 2 ? b.cores[v]->pend2[flag] : b.cores[v]->pend1[flag];
            if (v == 1)
                all = q.front();
            else
                merge(all, q.front());
            q.pop_front();
        }
        if (mode == 2)
            deliver(api, *b.cores[0], flag, all);
        else
            for (int v = 1; v < b.n; v++) deliver(api, *b.cores[v], flag, all);
    }
}

// CrossCoreWaitFlag<mode, pipe>(flag) on the running core of a launch: waits (other cores run) while
// its counter is 0, then takes one count.
XBEMU_RT void cross_wait(int pipe, int flag, Site site) {
    BlockRun& b = *running();
    CoreCtx& me = *b.cores[b.cur];
    while (me.in[flag].empty()) {
        me.status = CoreCtx::BLOCKED;
        me.wait_flag = flag;
        me.wait_site = site;
        to_scheduler(false);
        if (me.cancel) throw Cancel{};
    }
    me.status = CoreCtx::READY;
    me.wait_flag = -1;
    const Msg m = me.in[flag].front();
    me.in[flag].pop_front();
    learn_flag(me.st, pipe, m);
}

// Reset at kernel entry (KERNEL_TASK_TYPE_DEFAULT); at exit every cross-core flag must be consumed.
struct KernelScope {
    explicit KernelScope(int type);
    ~KernelScope() noexcept(false);
};
XBEMU_RT KernelScope::KernelScope(int type) {
    CubeState& s = cs();
    if (st().kernel_type >= 0) fail("KERNEL_TASK_TYPE_DEFAULT", "the kernel type is set twice");
    if (type > KERNEL_TYPE_MIX_AIC_1_2)
        fail("KERNEL_TASK_TYPE_DEFAULT", "kernel type " + std::to_string(type) + " is not supported on Atlas A2 "
             "(AIV_ONLY, AIC_ONLY, MIX_AIV_1_0, MIX_AIC_1_0, MIX_AIC_1_1 or MIX_AIC_1_2)");
    // a kernel called directly: block 0 starts a launch (the launcher counts per core: emu_launch.h)
    if (!running() && AscendC::GetBlockIdx() == 0) s.c = Counters();
    const char* env = std::getenv("XBEMU_CUBE_COUNT_ONLY");
    s.count_only = env && env[0] == '1';
    if (running()) declare(*running(), type);
    if (!vector_only(type) && st().role != ROLE_AIV) poison_all();  // an AIV's L1/L0 are never read
    st().kernel_type = type;
    reserve_cube_ids();  // an AIC's pipe built before this line takes its M_MTE1 ids now (params.h)
    s.core = ANY;
    for (int& f : s.flags) f = 0;
}
XBEMU_RT KernelScope::~KernelScope() noexcept(false) {
    CubeState& s = cs();
    st().kernel_type = -1;
    if (std::uncaught_exceptions()) return;
    if (running()) {  // this core's counters (flags set after it ends: run_block's check)
        const CoreCtx& me = *running()->cores[running()->cur];
        for (int i = 0; i < kCrossFlags; i++)
            if (!me.in[i].empty())
                fail("CrossCoreSetFlag", "flag " + std::to_string(i) + " was set " +
                                             std::to_string(me.in[i].size()) +
                                             " time(s) more than it was waited for at kernel exit");
        return;
    }
    for (int i = 0; i < 16; i++)
        if (s.flags[i])
            fail("CrossCoreSetFlag", "flag " + std::to_string(i) + " was set " + std::to_string(s.flags[i]) +
                                         " time(s) more than it was waited for at kernel exit");
}

// ASCEND_IS_AIC / ASCEND_IS_AIV: true on the core of that kind. Before the kernel type is known, or
// for a kernel run outside the launcher, false only for the core a kernel type does not start (the
// fused model: one core runs both kinds of section in order).
XBEMU_RT bool on_core(Core c) {
    if (st().role != ROLE_ANY) {
        if (c != (st().role == ROLE_AIC ? AIC : AIV)) return false;
        cs().core = c;
        return true;
    }
    const int type = st().kernel_type;
    if ((c == AIC && vector_only(type)) || (c == AIV && cube_only(type))) return false;
    cs().core = c;
    return true;
}

// Queues of the cube positions: buffers carved from L1 (A1/B1/C1) / L0A / L0B / L0C / the BiasTable (C2)
// by TPipe::InitBuffer (the position -> memory map of ADK 通用说明和约束.md, table 1).
constexpr int mem_of(AscendC::TPosition pos) {
    return (pos == AscendC::TPosition::A1 || pos == AscendC::TPosition::B1 || pos == AscendC::TPosition::C1) ? L1
           : pos == AscendC::TPosition::A2 ? L0A : pos == AscendC::TPosition::B2 ? L0B
           : pos == AscendC::TPosition::C2 ? BT : L0C;
}

// The CubeQue members (producer / consumer pipes and queue kind of its position), whatever the element type.
XBEMU_RT Slot& cube_alloc(std::vector<Slot>& slots, int mem, int producer, int kind) {
    for (auto& s : slots)
        if (s.state == FREE) {
            s.state = ALLOCATED;
            s.gen++;
            // waits for the buffer's free event: the consumer's reads are complete before the producer writes
            if (s.freed) learn(producer, s.fre);
            que_give(kind, true, s.free_id);  // waits for the buffer's free event: the id goes back
            return s;
        }
    if (slots.empty()) fail("TQue::AllocTensor", "the queue has no buffers (missing pipe.InitBuffer)");
    fail("TQue::AllocTensor", std::string("all buffers of the ") + cs().mem[mem].name +
                                  " queue are in use (missing FreeTensor?)");
}
XBEMU_RT void cube_enque(std::vector<Slot>& slots, std::vector<Slot*>& queued, const Slot* slot, uint32_t gen,
                         int producer, int kind) {
    Slot* s = que_own("TQue::EnQue", slots, slot, gen);
    if (s->state != ALLOCATED) fail("TQue::EnQue", "tensor is not freshly allocated");
    s->state = QUEUED;
    snapshot(producer, s->enq);  // SetFlag of the enqueue event on the producer's pipe
    s->enq_id = que_take("TQue::EnQue", kind, false, "enqueued (EnQue) and not yet dequeued");
    queued.push_back(s);
}
XBEMU_RT Slot& cube_deque(std::vector<Slot*>& queued, int consumer, int kind) {
    if (queued.empty()) fail("TQue::DeQue", "the queue is empty (missing EnQue)");
    Slot* s = queued.front();
    queued.erase(queued.begin());
    s->state = DEQUEUED;
    learn(consumer, s->enq);  // WaitFlag of the enqueue event: the producer's writes are complete
    que_give(kind, false, s->enq_id);
    return *s;
}
XBEMU_RT void cube_free(std::vector<Slot>& slots, const Slot* slot, uint32_t gen, int consumer, int kind) {
    Slot* s = que_own("TQue::FreeTensor", slots, slot, gen);
    if (s->state != DEQUEUED)
        fail("TQue::FreeTensor", s->state == FREE ? "tensor already freed" : "tensor freed before DeQue");
    s->state = FREE;
    s->freed = true;
    snapshot(consumer, s->fre);  // SetFlag of the free event on the consumer's pipe
    s->free_id = que_take("TQue::FreeTensor", kind, true, "freed (FreeTensor) and not yet allocated again");
}

// Carves `len` bytes (num buffers) of space sp for a queue or TBuf; returns the first one's offset.
XBEMU_RT uint32_t carve(Space& sp, uint8_t num, uint32_t len, uint32_t& rounded) {
    if (num == 0 || len == 0) fail("TPipe::InitBuffer", "zero buffers or zero length");
    rounded = (len + sp.align - 1) / sp.align * sp.align;
    uint64_t need = static_cast<uint64_t>(rounded) * num;
    if (sp.used + need > sp.capacity)
        fail("TPipe::InitBuffer", std::string(sp.name) + " overflow: " + std::to_string(sp.used + need) +
                                      " B requested, " + std::to_string(sp.capacity) + " B available");
    State& st0 = st();
    st0.buffers += num;
    if (st0.buffers > 64) fail("TPipe::InitBuffer", "more than 64 buffers in one kernel");
    const uint32_t first = sp.used;
    sp.used += static_cast<uint32_t>(need);
    if (sp.used > sp.peak) sp.peak = sp.used;
    return first;
}

template <AscendC::TPosition pos>
struct CubeQue {
    static constexpr int mem() { return mem_of(pos); }
    // the pipes that write (producer) and read (consumer) the buffers: GM -> L1 MTE2 then MTE1; L1 -> L0A/L0B
    // and L1 -> BiasTable MTE1 then M; L0C M then FIX (the queue events of params.h, kQueEvents)
    static constexpr int producer() { return mem() == L1 ? P_MTE2 : mem() == L0C ? P_M : P_MTE1; }
    static constexpr int consumer() { return mem() == L1 ? P_MTE1 : mem() == L0C ? P_FIX : P_M; }
    template <typename T>
    AscendC::LocalTensor<T> AllocTensor() { return make<T>(cube_alloc(slots_, mem(), producer(), kind())); }
    template <typename T>
    bool EnQue(const AscendC::LocalTensor<T>& t) {
        cube_enque(slots_, queued_, t.slot_, t.gen_, producer(), kind());
        return true;
    }
    template <typename T>
    AscendC::LocalTensor<T> DeQue() { return make<T>(cube_deque(queued_, consumer(), kind())); }
    template <typename T>
    void FreeTensor(AscendC::LocalTensor<T>& t) { cube_free(slots_, t.slot_, t.gen_, consumer(), kind()); }
    // the queue's events (params.h): by memory, and for L1 by the data's source (GM)
    static constexpr int kind() {
        return mem() == L1 ? QUE_L1 : mem() == L0A || mem() == L0B ? QUE_L0AB : mem() == BT ? QUE_BT : QUE_L0C;
    }
    bool VacantInQue() { return queued_.empty(); }
    bool HasTensorInQue() { return !queued_.empty(); }
    void init(uint8_t num, uint32_t len) {
        if (cs().mem[mem()].bytes.empty()) poison_all();
        Space& sp = cs().mem[mem()];
        if (!slots_.empty()) fail("TPipe::InitBuffer", "queue initialised twice");
        uint32_t rounded = 0;
        const uint32_t first = carve(sp, num, len, rounded);
        slots_.resize(num);
        for (uint32_t i = 0; i < num; i++) slots_[i].offset = first + rounded * i;
        if (sp.used > cs().c.peak[mem()]) cs().c.peak[mem()] = sp.used;
        len_ = rounded;
    }
    std::vector<Slot> slots_;
    std::vector<Slot*> queued_;
    uint32_t len_ = 0;

   private:
    template <typename T>
    AscendC::LocalTensor<T> make(Slot& s) {
        AscendC::LocalTensor<T> t;
        t.ptr_ = reinterpret_cast<T*>(cs().mem[mem()].bytes.data() + s.offset);
        t.size_ = len_ / sizeof(T);
        t.slot_ = &s;
        t.gen_ = s.gen;
        return t;
    }
};

// TBuf of a Cube position (A1, B1: L1; A2: L0A; B2: L0B; CO1: L0C; asc-devkit TBuf构造函数.md lists VECIN,
// VECOUT, A1, A2, B1, B2, CO1, CO2): one buffer with no queue and so no synchronisation of its own; the kernel
// orders its pipes' accesses with SetFlag/WaitFlag (the hazard checks above).
template <AscendC::TPosition pos>
struct CubeBuf {
    template <typename T>
    AscendC::LocalTensor<T> Get() { return GetWithOffset<T>(len_ / sizeof(T), 0); }
    template <typename T>
    AscendC::LocalTensor<T> Get(uint32_t len) { return GetWithOffset<T>(len, 0); }
    template <typename T>
    AscendC::LocalTensor<T> GetWithOffset(uint32_t size, uint32_t bufOffset) {
        tbuf_get(len_, size, bufOffset, sizeof(T));
        AscendC::LocalTensor<T> t;
        t.ptr_ = reinterpret_cast<T*>(cs().mem[mem_of(pos)].bytes.data() + offset_ + bufOffset);
        t.size_ = size;
        return t;
    }
    void init(uint32_t len) {
        if (cs().mem[mem_of(pos)].bytes.empty()) poison_all();
        if (len_) fail("TPipe::InitBuffer", "TBuf initialised twice");
        Space& sp = cs().mem[mem_of(pos)];
        offset_ = carve(sp, 1, len, len_);
        if (sp.used > cs().c.peak[mem_of(pos)]) cs().c.peak[mem_of(pos)] = sp.used;
    }
    uint32_t offset_ = 0, len_ = 0;
};

template <typename T>
constexpr uint32_t c0() { return 32 / sizeof(T); }  // elements in one 32-byte row of a fractal

}  // namespace cube
}  // namespace xbemu

namespace AscendC {

// KernelMetaType is declared at global scope in kernel_operator.h (as in the ADK).
#define KERNEL_TASK_TYPE_DEFAULT(value) ::xbemu::cube::KernelScope xbemu_kernel_scope_(value)
#define ASCEND_IS_AIC (::xbemu::cube::on_core(::xbemu::cube::AIC))
#define ASCEND_IS_AIV (::xbemu::cube::on_core(::xbemu::cube::AIV))

#define XBEMU_CUBE_QUE(POS)                                                                               \
    template <int32_t depth, auto mask>                                                                   \
    class TQue<TPosition::POS, depth, mask> : public ::xbemu::cube::CubeQue<TPosition::POS> {};           \
    template <>                                                                                           \
    inline bool TPipe::InitBuffer<TQue<TPosition::POS, 1>>(TQue<TPosition::POS, 1> & que, uint8_t num,   \
                                                           uint32_t len) {                                \
        que.init(num, len);                                                                               \
        return true;                                                                                      \
    }
XBEMU_CUBE_QUE(A1)
XBEMU_CUBE_QUE(B1)
XBEMU_CUBE_QUE(C1)
XBEMU_CUBE_QUE(C2)
XBEMU_CUBE_QUE(A2)
XBEMU_CUBE_QUE(B2)
XBEMU_CUBE_QUE(CO1)
#undef XBEMU_CUBE_QUE

#define XBEMU_CUBE_BUF(POS)                                                                                \
    template <>                                                                                            \
    class TBuf<TPosition::POS> : public ::xbemu::cube::CubeBuf<TPosition::POS> {};                         \
    template <>                                                                                            \
    inline bool TPipe::InitBuffer<TPosition::POS>(TBuf<TPosition::POS> & buf, uint32_t len) {             \
        buf.init(len);                                                                                     \
        return true;                                                                                       \
    }
XBEMU_CUBE_BUF(A1)
XBEMU_CUBE_BUF(B1)
XBEMU_CUBE_BUF(A2)
XBEMU_CUBE_BUF(B2)
XBEMU_CUBE_BUF(CO1)
#undef XBEMU_CUBE_BUF

// ----- GM -> L1 with ND -> NZ ----------------------------------------------------------------

struct Nd2NzParams {
    Nd2NzParams() = default;
    // (every field a uint16_t in the API; the model keeps a larger value whole to refuse it: params.h)
    Nd2NzParams(const xbemu::Field<uint16_t> ndNumIn, const xbemu::Field<uint16_t> nValueIn, const xbemu::Field<uint16_t> dValueIn,
                const xbemu::Field<uint16_t> srcNdMatrixStrideIn, const xbemu::Field<uint16_t> srcDValueIn,
                const xbemu::Field<uint16_t> dstNzC0StrideIn, const xbemu::Field<uint16_t> dstNzNStrideIn,
                const xbemu::Field<uint16_t> dstNzMatrixStrideIn)
        : ndNum(ndNumIn), nValue(nValueIn), dValue(dValueIn), srcNdMatrixStride(srcNdMatrixStrideIn),
          srcDValue(srcDValueIn), dstNzC0Stride(dstNzC0StrideIn), dstNzNStride(dstNzNStrideIn),
          dstNzMatrixStride(dstNzMatrixStrideIn) {}
    xbemu::Field<uint16_t> ndNum = 0;              // 0 by default (ADK kernel_struct_data_copy.h): set it
    xbemu::Field<uint16_t> nValue = 0;             // rows
    xbemu::Field<uint16_t> dValue = 0;             // elements per row
    xbemu::Field<uint16_t> srcNdMatrixStride = 0;  // elements between ND matrices in GM
    xbemu::Field<uint16_t> srcDValue = 0;          // elements between rows in GM
    xbemu::Field<uint16_t> dstNzC0Stride = 0;      // 32-byte rows between the starts of consecutive C0 column blocks
    xbemu::Field<uint16_t> dstNzNStride = 0;       // 32-byte rows between consecutive rows (0 by default, as ndNum)
    xbemu::Field<uint16_t> dstNzMatrixStride = 0;  // elements between NZ matrices
};

namespace detail {
// asc-devkit docs 矩阵计算（ISASI）/.../GMToL1随路转换-ND2NZ搬运（DataCopy）.md, table 4.
XBEMU_RT void check_params(const char* api, const Nd2NzParams& p) {
    const char* doc = "docs GMToL1随路转换-ND2NZ搬运（DataCopy）.md, table 4 (Nd2NzParams)";
    xbemu::in_range(api, "Nd2NzParams.ndNum", p.ndNum, 0, 4095, doc);
    xbemu::in_range(api, "Nd2NzParams.nValue", p.nValue, 0, 16384, doc);
    xbemu::in_range(api, "Nd2NzParams.dValue", p.dValue, 0, 65535, doc);
    xbemu::in_range(api, "Nd2NzParams.srcNdMatrixStride", p.srcNdMatrixStride, 0, 65535, doc);
    xbemu::in_range(api, "Nd2NzParams.srcDValue", p.srcDValue, 1, 65535, doc);
    xbemu::in_range(api, "Nd2NzParams.dstNzC0Stride", p.dstNzC0Stride, 1, 16384, doc);
    xbemu::in_range(api, "Nd2NzParams.dstNzNStride", p.dstNzNStride, 1, 16384, doc);
    xbemu::in_range(api, "Nd2NzParams.dstNzMatrixStride", p.dstNzMatrixStride, 0, 16384, doc);
}
}  // namespace detail

// Row r, element c of the ND source lands at (c / C0) * dstNzC0Stride * C0 + r * dstNzNStride * C0 + c % C0.
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const Nd2NzParams& p,
                     const char* file_ = __builtin_FILE(), int line_ = __builtin_LINE()) {
    const char* api = "DataCopy(GM->L1, Nd2NzParams)";
    xbemu::cube::SiteScope at(file_, line_);
    using namespace xbemu::cube;
    need_aic(api);
    detail::check_params(api, p);
    constexpr uint32_t C0 = c0<T>();
    if (p.ndNum == 0 || p.nValue == 0 || p.dValue == 0) return;
    if (p.nValue > 1 && p.srcDValue < p.dValue)
        xbemu::fail(api, "srcDValue " + std::to_string(p.srcDValue) + " is smaller than dValue " +
                             std::to_string(p.dValue) + " (source rows would overlap)");
    if (uint64_t(p.dstNzC0Stride) < uint64_t(p.nValue - 1) * p.dstNzNStride + 1)
        xbemu::fail(api, "dstNzC0Stride " + std::to_string(p.dstNzC0Stride) + " is too small for nValue " +
                             std::to_string(p.nValue) + " rows: C0 column blocks would overlap");
    uint64_t blocks = (p.dValue + C0 - 1) / C0;
    uint64_t extent = (p.ndNum - 1) * uint64_t(p.dstNzMatrixStride) +
                      ((blocks - 1) * p.dstNzC0Stride + uint64_t(p.nValue - 1) * p.dstNzNStride + 1) * C0;
    touch(api, "dst", dst, 1u << L1, extent * sizeof(T), xbemu::ALLOCATED);
    cs().c.gm_to_l1_calls++;
    const uint64_t num = cube_issue(xbemu::P_MTE2);
    for (uint64_t nd = 0; nd < p.ndNum; nd++)  // one 32-byte block per C0 columns of a row
        for (uint64_t r = 0; r < p.nValue; r++)
            for (uint64_t cb = 0; cb < blocks; cb++)
                tensor_write(api, dst, L1, xbemu::P_MTE2,
                             (nd * p.dstNzMatrixStride + (r * p.dstNzNStride + cb * p.dstNzC0Stride) * C0) * sizeof(T), 32,
                             num);
    for (uint32_t nd = 0; nd < p.ndNum; nd++)
        for (uint32_t r = 0; r < p.nValue; r++) {
            const T* row = src.addr_ + nd * uint64_t(p.srcNdMatrixStride) + r * uint64_t(p.srcDValue);
            xbemu::gm_check(api, src.base_, row, p.dValue * sizeof(T), false, true, cs().site);
            cs().c.gm_to_l1 += p.dValue * sizeof(T);
            if (count_only()) continue;
            T* base = dst.ptr_ + nd * uint64_t(p.dstNzMatrixStride) + r * uint64_t(p.dstNzNStride) * C0;
            for (uint32_t c = 0; c < p.dValue; c++) base[(c / C0) * uint64_t(p.dstNzC0Stride) * C0 + c % C0] = row[c];
        }
}

// ----- L1 -> BiasTable (C1 -> C2) ---------------------------------------------------------------
// ADK 矩阵计算（ISASI）/.../L1ToBiasTable-Buffer数据搬运（DataCopy）.md (Atlas A2): dst in the BiasTable
// (C2, 1 KB, 64-byte aligned), src in L1 (32-byte aligned); dst types float and int32_t; blockLen and
// dstGap count 64-byte units, srcGap 32-byte units; blockCount in [0, 4095]; blockCount or blockLen 0 is a
// NOP; writing past the BiasTable is an exception. The model takes one block (blockCount 1) of one type:
// the doc's reading of a zero gap between several blocks (the first block again) and the
// type-converting overload are not modelled.
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
    const char* api = "DataCopy(L1->BiasTable, DataCopyParams)";
    using namespace xbemu::cube;
    static_assert(std::is_same<T, float>::value || std::is_same<T, int32_t>::value,
                  "DataCopy(L1->BiasTable): the BiasTable holds float or int32_t on Atlas A2");
    need_aic(api);
    detail::check_params(api, p);
    if (p.blockCount == 0 || p.blockLen == 0) return;
    if (p.blockCount != 1)
        xbemu::fail(api, "blockCount " + std::to_string(p.blockCount) + ": only one block (blockCount 1) is modelled");
    const uint64_t bytes = uint64_t(p.blockLen) * 64;  // blockLen counts 64-byte units on Atlas A2
    if (space_of(dst) != BT)
        xbemu::fail(api, std::string("dst must be in the BiasTable (TPosition C2), not in ") +
                             (space_of(dst) < 0 ? "the unified buffer" : cs().mem[space_of(dst)].name));
    if (bytes > cs().mem[BT].capacity)
        xbemu::fail(api, "blockLen " + std::to_string(p.blockLen) + " x 64 B overflows the " +
                             std::to_string(cs().mem[BT].capacity) + "-byte BiasTable");
    touch(api, "src", src, 1u << L1, bytes, xbemu::DEQUEUED);
    touch(api, "dst", dst, 1u << BT, bytes, xbemu::ALLOCATED);
    cs().c.l1_to_bt += bytes;
    const uint64_t num = cube_issue(xbemu::P_MTE1);
    tensor_read(api, src, L1, xbemu::P_MTE1, 0, bytes, num);
    tensor_write(api, dst, BT, xbemu::P_MTE1, 0, bytes, num);
    if (count_only()) return;
    std::memcpy(dst.ptr_, src.ptr_, bytes);
}

// ----- L1 -> L0A / L0B ---------------------------------------------------------------------------

struct LoadData2DParams {
    LoadData2DParams() = default;
    LoadData2DParams(const xbemu::Field<uint16_t> startIndexIn, const xbemu::Field<uint8_t> repeatTimesIn,
                     const xbemu::Field<uint16_t> srcStrideIn, const xbemu::Field<uint8_t> sidIn, const xbemu::Field<uint16_t> dstGapIn,
                     const bool ifTransposeIn, const xbemu::Field<uint8_t> addrModeIn)
        : startIndex(startIndexIn), repeatTimes(repeatTimesIn), srcStride(srcStrideIn), sid(sidIn),
          dstGap(dstGapIn), ifTranspose(ifTransposeIn), addrMode(addrModeIn) {}
    xbemu::Field<uint16_t> startIndex = 0;  // first source fractal (512 B each)
    xbemu::Field<uint8_t> repeatTimes = 0;  // fractals to move
    xbemu::Field<uint16_t> srcStride = 0;   // source fractals between repeats
    xbemu::Field<uint8_t> sid = 0;
    xbemu::Field<uint16_t> dstGap = 0;      // destination fractals skipped between repeats
    bool ifTranspose = false;  // transpose each 16x16 fractal (b16 only)
    xbemu::Field<uint8_t> addrMode = 0;
};
using LoadData2dParams = LoadData2DParams;

namespace detail {
XBEMU_RT void check_params(const char* api, const LoadData2DParams& p) {
    const char* doc = "docs 矩阵数据搬入至L0-Buffer/LoadData_2D.md, LoadData2DParams";
    xbemu::in_range(api, "LoadData2DParams.startIndex", p.startIndex, 0, 65535, doc);
    xbemu::in_range(api, "LoadData2DParams.repeatTimes", p.repeatTimes, 0, 255, doc);
    xbemu::in_range(api, "LoadData2DParams.srcStride", p.srcStride, 0, 65535, doc);
    xbemu::in_range(api, "LoadData2DParams.dstGap", p.dstGap, 0, 65535, doc);
}
}  // namespace detail

template <typename T>
inline void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData2DParams& p,
                     const char* file_ = __builtin_FILE(), int line_ = __builtin_LINE()) {
    const char* api = "LoadData";
    xbemu::cube::SiteScope at(file_, line_);
    using namespace xbemu::cube;
    need_aic(api);
    detail::check_params(api, p);
    if (p.ifTranspose && sizeof(T) != 2) xbemu::fail(api, "ifTranspose needs a 16-bit type");
    if (p.sid != 0 || p.addrMode != 0) xbemu::fail(api, "sid and addrMode must be 0");
    if (p.repeatTimes == 0) return;
    constexpr uint64_t F = 512 / sizeof(T);  // elements per fractal
    uint64_t src_need = (p.startIndex + uint64_t(p.repeatTimes - 1) * p.srcStride + 1) * 512;
    uint64_t dst_need = (uint64_t(p.repeatTimes - 1) * (1 + p.dstGap) + 1) * 512;
    touch(api, "src", src, 1u << L1, src_need, xbemu::DEQUEUED);
    int md = touch(api, "dst", dst, (1u << L0A) | (1u << L0B), dst_need, xbemu::ALLOCATED);
    (md == L0A ? cs().c.l1_to_l0a : cs().c.l1_to_l0b) += uint64_t(p.repeatTimes) * 512;
    cs().c.load_data_calls++;
    const uint64_t num = cube_issue(xbemu::P_MTE1);
    for (uint64_t r = 0; r < p.repeatTimes; r++) {  // one 512-byte fractal a repeat
        tensor_read(api, src, L1, xbemu::P_MTE1, (p.startIndex + r * p.srcStride) * 512, 512, num);
        tensor_write(api, dst, md, xbemu::P_MTE1, r * (1 + uint64_t(p.dstGap)) * 512, 512, num);
    }
    if (count_only()) return;
    for (uint32_t r = 0; r < p.repeatTimes; r++) {
        const T* s = src.ptr_ + (p.startIndex + uint64_t(r) * p.srcStride) * F;
        T* d = dst.ptr_ + uint64_t(r) * (1 + p.dstGap) * F;
        if (!p.ifTranspose) {
            std::memcpy(d, s, 512);
        } else {
            for (int i = 0; i < 16; i++)
                for (int j = 0; j < 16; j++) d[j * 16 + i] = s[i * 16 + j];
        }
    }
}

// LoadDataWithTranspose (A2: L1 -> L0A/L0B, b8/b16/b32): each repeat reads one *square* of the source,
// 512 B fractals of 16 rows x C0 that it joins and transposes: b16 one 16 x 16 fractal; b32 two consecutive
// 16 x 8 fractals side by side (left, right) as a 16 x 16 square; b8 two consecutive 16 x 32 fractals one
// above the other as a 32 x 32 square. The transposed square is split again into fractals of 16 rows of
// 32 B (rows 0-15 and 16-31 for b8; columns 0-7 and 8-15 of the transposed 16 x 16 for b32), written
// `dstFracGap` fractals apart. startIndex and srcStride count squares; dstGap counts 512 B fractals between
// the end of one repeat's first fractal and the next repeat's (asc-devkit LoadDataWithTranspose.md and its
// pseudo-code script; modelled from the documented semantics).
struct LoadData2dTransposeParams {
    LoadData2dTransposeParams() = default;
    LoadData2dTransposeParams(const xbemu::Field<uint16_t> startIndexIn, const xbemu::Field<uint8_t> repeatTimesIn,
                              const xbemu::Field<uint16_t> srcStrideIn, const xbemu::Field<uint16_t> dstGapIn,
                              const xbemu::Field<uint16_t> dstFracGapIn, const xbemu::Field<uint8_t> addrModeIn = 0)
        : startIndex(startIndexIn), repeatTimes(repeatTimesIn), srcStride(srcStrideIn), dstGap(dstGapIn),
          dstFracGap(dstFracGapIn), addrMode(addrModeIn) {}
    xbemu::Field<uint16_t> startIndex = 0;  // first source square
    xbemu::Field<uint8_t> repeatTimes = 0;  // squares to move (0: no-op)
    xbemu::Field<uint16_t> srcStride = 0;   // source squares between repeats
    xbemu::Field<uint16_t> dstGap = 0;      // fractals between one repeat's first destination fractal's end and the next one's
    xbemu::Field<uint16_t> dstFracGap = 0;  // fractals between the destination fractals of one repeat (b8/b32 only)
    xbemu::Field<uint8_t> addrMode = 0;  // 0: increasing source addresses
};

namespace detail {
XBEMU_RT void check_params(const char* api, const LoadData2dTransposeParams& p) {
    const char* doc = "docs 矩阵数据搬入至L0-Buffer/LoadDataWithTranspose.md, LoadData2dTransposeParams";
    xbemu::in_range(api, "LoadData2dTransposeParams.startIndex", p.startIndex, 0, 65535, doc);
    xbemu::in_range(api, "LoadData2dTransposeParams.repeatTimes", p.repeatTimes, 0, 255, doc);
    xbemu::in_range(api, "LoadData2dTransposeParams.srcStride", p.srcStride, 0, 65535, doc);
    xbemu::in_range(api, "LoadData2dTransposeParams.dstGap", p.dstGap, 0, 65535, doc);
    xbemu::in_range(api, "LoadData2dTransposeParams.dstFracGap", p.dstFracGap, 0, 65535, doc);
}
}  // namespace detail

template <typename T>
inline void LoadDataWithTranspose(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                  const LoadData2dTransposeParams& p, const char* file_ = __builtin_FILE(),
                                  int line_ = __builtin_LINE()) {
    const char* api = "LoadDataWithTranspose";
    xbemu::cube::SiteScope at(file_, line_);
    using namespace xbemu::cube;
    detail::check_params(api, p);
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4,
                  "LoadDataWithTranspose: Atlas A2 moves b8, b16 and b32 types (int8_t, uint8_t, half, bfloat16_t, "
                  "int32_t, uint32_t, float)");
    need_aic(api);
    if (p.addrMode != 0) xbemu::fail(api, "addrMode must be 0 (decreasing addresses are not modelled)");
    if (p.repeatTimes == 0) return;
    constexpr uint64_t F = 512 / sizeof(T);          // elements per fractal
    constexpr uint64_t NF = sizeof(T) == 2 ? 1 : 2;  // fractals per square
    constexpr uint64_t SQ = NF * F;                  // elements per square
    if (sizeof(T) == 2 && p.dstFracGap != 0) xbemu::fail(api, "dstFracGap applies to b8 and b32 types only: set 0");
    // every destination fractal once: no two land on one another ("the transposed fractals must not overlap")
    std::vector<uint64_t> slots;
    for (uint64_t r = 0; r < p.repeatTimes; r++)
        for (uint64_t j = 0; j < NF; j++) slots.push_back(r * (1 + uint64_t(p.dstGap)) + j * (1 + uint64_t(p.dstFracGap)));
    std::vector<uint64_t> sorted_slots = slots;
    std::sort(sorted_slots.begin(), sorted_slots.end());
    if (std::adjacent_find(sorted_slots.begin(), sorted_slots.end()) != sorted_slots.end())
        xbemu::fail(api, "dstGap " + std::to_string(p.dstGap) + " and dstFracGap " + std::to_string(p.dstFracGap) +
                             " write two transposed fractals to one place");
    uint64_t src_need = (p.startIndex + uint64_t(p.repeatTimes - 1) * p.srcStride + 1) * SQ * sizeof(T);
    uint64_t dst_need = (sorted_slots.back() + 1) * 512;
    touch(api, "src", src, 1u << L1, src_need, xbemu::DEQUEUED);
    int md = touch(api, "dst", dst, (1u << L0A) | (1u << L0B), dst_need, xbemu::ALLOCATED);
    (md == L0A ? cs().c.l1_to_l0a : cs().c.l1_to_l0b) += uint64_t(p.repeatTimes) * NF * 512;
    cs().c.load_data_calls++;
    const uint64_t num = cube_issue(xbemu::P_MTE1);
    for (uint64_t r = 0; r < p.repeatTimes; r++)
        tensor_read(api, src, L1, xbemu::P_MTE1, (p.startIndex + r * p.srcStride) * SQ * sizeof(T), SQ * sizeof(T), num);
    for (uint64_t slot : slots) tensor_write(api, dst, md, xbemu::P_MTE1, slot * 512, 512, num);
    if (count_only()) return;
    constexpr uint64_t C0 = 32 / sizeof(T);
    for (uint64_t r = 0; r < p.repeatTimes; r++) {
        const T* s = src.ptr_ + (p.startIndex + r * p.srcStride) * SQ;
        // element (row, col) of the source square
        auto at = [&](uint64_t row, uint64_t col) -> T {
            if (sizeof(T) == 4) return s[(col / C0) * F + row * C0 + col % C0];  // left | right fractal
            return s[row * C0 + col];  // b16: one fractal; b8: the second fractal holds rows 16-31
        };
        for (uint64_t j = 0; j < NF; j++) {
            T* d = dst.ptr_ + slots[r * NF + j] * F;
            for (uint64_t row = 0; row < 16; row++)
                for (uint64_t c = 0; c < C0; c++) {
                    // destination fractal j, (row, c): the transposed square's element at
                    // b8: (16 j + row, c); b16: (row, c); b32: (row, 8 j + c)
                    uint64_t tr = sizeof(T) == 1 ? 16 * j + row : row;
                    uint64_t tc = sizeof(T) == 4 ? 8 * j + c : c;
                    d[row * C0 + c] = at(tc, tr);
                }
        }
    }
}

// ----- Mmad: C (L0C, Nz) (+)= A (L0A, Zz) x B (L0B, Zn) ------------------------------------------

struct MmadParams {
    MmadParams() = default;
    MmadParams(const xbemu::Field<uint16_t> mIn, const xbemu::Field<uint16_t> nIn, const xbemu::Field<uint16_t> kIn,
               const xbemu::Field<uint8_t> unitFlagIn, const bool cmatrixSourceIn, const bool cmatrixInitValIn)
        : m(mIn), n(nIn), k(kIn), unitFlag(unitFlagIn), cmatrixSource(cmatrixSourceIn),
          cmatrixInitVal(cmatrixInitValIn) {}
    xbemu::Field<uint16_t> m = 0, n = 0, k = 0;
    xbemu::Field<uint8_t> unitFlag = 0;
    bool cmatrixSource = false;
    bool cmatrixInitVal = true;  // true: C = A x B; false: C += A x B (the bias overload: C = bias + A x B)
};

}  // namespace AscendC

namespace xbemu {
namespace cube {

// The Mmad of both overloads: C (m x n, Nz in L0C) = A x B, plus C's old value (cmatrixInitVal false, no bias)
// or plus the bias row broadcast over the m rows (bias: n values in the BiasTable).
template <typename T, typename U, typename S, typename V>
inline void mmad(const char* api, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<U>& fm,
                 const AscendC::LocalTensor<S>& filter, const AscendC::LocalTensor<V>* bias,
                 const AscendC::MmadParams& p) {
    need_aic(api);
    const char* doc = "docs Mmad计算/Mmad.md, MmadParams: m, n, k in [0, 4095]";
    xbemu::in_range(api, "MmadParams.m", p.m, 0, 4095, doc);
    xbemu::in_range(api, "MmadParams.n", p.n, 0, 4095, doc);
    xbemu::in_range(api, "MmadParams.k", p.k, 0, 4095, doc);
    if (p.unitFlag != 0) xbemu::fail(api, "unitFlag is not modelled");
    if (!bias && p.cmatrixSource)
        xbemu::fail(api, "cmatrixSource = true (C from the BiasTable) is not modelled without a bias tensor: use the "
                         "Mmad overload that takes the bias (C2) tensor");
    if (bias && p.cmatrixInitVal)
        xbemu::fail(api, "cmatrixInitVal = true starts C at zero and ignores the bias: set it false so that C starts "
                         "at the bias row (ADK Mmad.md, MmadParams; the bias overload takes the C source from the bias "
                         "tensor's position)");
    if (p.m == 0 || p.n == 0 || p.k == 0) return;
    constexpr uint64_t K0 = c0<U>();  // fractal: 16 rows x K0 columns = 512 B
    uint64_t mf = (p.m + 15) / 16, nf = (p.n + 15) / 16, kf = (p.k + K0 - 1) / K0;
    touch(api, "A", fm, 1u << L0A, mf * kf * 512, xbemu::DEQUEUED);
    touch(api, "B", filter, 1u << L0B, kf * nf * 512, xbemu::DEQUEUED);
    int mc = touch(api, "C", dst, 1u << L0C, mf * nf * 256 * sizeof(T), xbemu::ALLOCATED);
    if (offset_in(dst, mc) % 1024)  // the Mmad doc requires a 1024-byte aligned C in L0C
        xbemu::fail(api, "C address " + addr(mc, offset_in(dst, mc)) + " is not 1024-byte aligned");
    if (bias) {
        // a bias in CO1 (C from L0C) is a real variant (ADK MmadImpl); the generator never emits it
        if (space_of(*bias) == L0C)
            xbemu::fail(api, "a bias tensor in L0C (CO1) is not modelled: the bias must be in the BiasTable (C2)");
        // one value per column of C's 16-column fractals
        touch(api, "bias", *bias, 1u << BT, nf * 16 * sizeof(V), xbemu::DEQUEUED);
        cs().c.bias_mmad_calls++;
    }
    {
        const uint64_t num = cube_issue(xbemu::P_M);
        tensor_read(api, fm, L0A, xbemu::P_M, 0, mf * kf * 512, num);
        tensor_read(api, filter, L0B, xbemu::P_M, 0, kf * nf * 512, num);
        if (bias) tensor_read(api, *bias, BT, xbemu::P_M, 0, nf * 16 * sizeof(V), num);
        if (!bias && !p.cmatrixInitVal) tensor_read(api, dst, L0C, xbemu::P_M, 0, mf * nf * 256 * sizeof(T), num);
        tensor_write(api, dst, L0C, xbemu::P_M, 0, mf * nf * 256 * sizeof(T), num);
    }
    cs().c.mmad_calls++;
    cs().c.cube_ops += mf * nf * kf;  // one 16 x K0 x 16 product a cycle: b32 at half, b8 at twice the b16 K rate
    if (count_only()) return;
    // m = 1 is a GEMV: the hardware reads A from L0A as ND, K contiguous elements (Mmad constraints;
    // Mmad计算/关键特性说明/GEMV.md); C keeps its layout, one 1024-byte block per 16 columns.
    const bool gemv = p.m == 1;
    for (uint64_t i = 0; i < p.m; i++)
        for (uint64_t j = 0; j < p.n; j++) {
            // A (i, k): fractal (i/16, k/K0) in Zz order, row-major inside
            // B (k, j): fractal (k/K0, j/16) in Zn order, column-major inside (stored as its transpose)
            // float inputs accumulate in float; int8 x int8 exactly in int32 (wrapping as the hardware's adder)
            using Acc = typename std::conditional<std::is_same<T, int32_t>::value, int64_t, float>::type;
            Acc acc = 0;
            for (uint64_t k = 0; k < p.k; k++) {
                Acc a = static_cast<Acc>(
                    gemv ? fm.ptr_[k] : fm.ptr_[((i / 16) * kf + k / K0) * 16 * K0 + (i % 16) * K0 + k % K0]);
                Acc b = static_cast<Acc>(filter.ptr_[((k / K0) * nf + j / 16) * 16 * K0 + (j % 16) * K0 + k % K0]);
                acc += a * b;
            }
            T& c = dst.ptr_[((j / 16) * mf + i / 16) * 256 + (i % 16) * 16 + j % 16];
            // C's starting value: the bias of column j, 0 (cmatrixInitVal), or what C holds
            const T init = bias ? static_cast<T>(bias->ptr_[j]) : p.cmatrixInitVal ? static_cast<T>(0) : c;
            if (std::is_same<T, int32_t>::value)
                c = static_cast<T>(static_cast<uint32_t>(static_cast<uint64_t>(acc) + static_cast<uint32_t>(init)));
            else
                c = static_cast<T>(init + acc);
        }
}

}  // namespace cube
}  // namespace xbemu

namespace AscendC {

template <typename T, typename U, typename S>
inline void Mmad(const LocalTensor<T>& dst, const LocalTensor<U>& fm, const LocalTensor<S>& filter,
                 const MmadParams& p, const char* file_ = __builtin_FILE(), int line_ = __builtin_LINE()) {
    static_assert(std::is_same<U, S>::value, "Mmad: A and B must have the same type");
    xbemu::cube::SiteScope at(file_, line_);
    static_assert((std::is_same<T, float>::value &&
                   (std::is_same<U, half>::value || std::is_same<U, bfloat16_t>::value ||
                    std::is_same<U, float>::value)) ||
                      (std::is_same<T, int32_t>::value && std::is_same<U, int8_t>::value),
                  "Mmad: the Cube unit has half x half -> float, bfloat16 x bfloat16 -> float, float x float -> "
                  "float and int8 x int8 -> int32");
    xbemu::cube::mmad<T, U, S, T>("Mmad", dst, fm, filter, nullptr, p);
}

// The bias overload (A2: half/bfloat16/float inputs with a float bias, int8 with an int32 bias; ADK Mmad.md
// table 8): with the bias in the BiasTable (C2) and cmatrixInitVal false, C starts at the bias row broadcast
// over the m rows; cmatrixSource is not read (the tensor's position decides, ADK MmadImpl).
template <typename T, typename U, typename S, typename V>
inline void Mmad(const LocalTensor<T>& dst, const LocalTensor<U>& fm, const LocalTensor<S>& filter,
                 const LocalTensor<V>& bias, const MmadParams& p, const char* file_ = __builtin_FILE(),
                 int line_ = __builtin_LINE()) {
    static_assert(std::is_same<U, S>::value, "Mmad (bias): A and B must have the same type");
    xbemu::cube::SiteScope at(file_, line_);
    static_assert((std::is_same<T, float>::value && std::is_same<V, float>::value &&
                   (std::is_same<U, half>::value || std::is_same<U, bfloat16_t>::value ||
                    std::is_same<U, float>::value)) ||
                      (std::is_same<T, int32_t>::value && std::is_same<V, int32_t>::value &&
                       std::is_same<U, int8_t>::value),
                  "Mmad (bias): Atlas A2 has half/bfloat16/float x same with a float bias -> float and int8 x int8 "
                  "with an int32 bias -> int32");
    xbemu::cube::mmad("Mmad (bias)", dst, fm, filter, &bias, p);
}

// ----- Fixpipe: L0C (Nz, fp32) -> GM (ND), with the output conversion and ReLU on the fly ----------

enum class QuantMode_t : uint8_t { NoQuant = 0, F322F16, F322BF16, DEQF16, VDEQF16, QF322B8_PRE, VQF322B8_PRE };
enum class CO2Layout : uint8_t { NZ = 0, ROW_MAJOR, COLUMN_MAJOR };
struct FixpipeConfig {
    CO2Layout format;
};
constexpr FixpipeConfig CFG_ROW_MAJOR = {CO2Layout::ROW_MAJOR};

struct FixpipeParamsV220 {
    xbemu::Field<uint16_t> nSize = 0;      // columns written
    xbemu::Field<uint16_t> mSize = 0;      // rows written
    xbemu::Field<uint16_t> srcStride = 0;  // rows between the starts of consecutive 16-column fractal blocks in L0C
    xbemu::Field<uint32_t> dstStride = 0;  // elements between rows in GM
    QuantMode_t quantPre = QuantMode_t::NoQuant;
    uint64_t deqScalar = 0;
    xbemu::Field<uint16_t> ndNum = 1;
    xbemu::Field<uint16_t> srcNdStride = 0;
    xbemu::Field<uint16_t> dstNdStride = 0;
    bool reluEn = false;
    xbemu::Field<uint8_t> unitFlag = 0;
};

template <typename T, typename U, const FixpipeConfig& config = CFG_ROW_MAJOR>
inline void Fixpipe(const GlobalTensor<T>& dst, const LocalTensor<U>& src, const FixpipeParamsV220& p,
                    const char* file_ = __builtin_FILE(), int line_ = __builtin_LINE()) {
    const char* api = "Fixpipe";
    xbemu::cube::SiteScope at(file_, line_);
    using namespace xbemu::cube;
    static_assert(config.format == CO2Layout::ROW_MAJOR, "Fixpipe: only the row-major (ND) output is modelled");
    need_aic(api);
    {  // asc-devkit docs 矩阵计算的搬出/L0C到GM数据搬运（Fixpipe）.md, table 4 (FixpipeParamsV220; NZ2ND mSize)
        const char* doc = "docs L0C到GM数据搬运（Fixpipe）.md, table 4 (FixpipeParamsV220), the ND output";
        xbemu::in_range(api, "FixpipeParamsV220.nSize", p.nSize, 0, 4095, doc);
        xbemu::in_range(api, "FixpipeParamsV220.mSize", p.mSize, 0, 8192, doc);
        xbemu::in_range(api, "FixpipeParamsV220.srcStride", p.srcStride, 0, 65535, doc);
        xbemu::in_range(api, "FixpipeParamsV220.dstStride", p.dstStride, 1, 4294967295LL, doc);
        xbemu::in_range(api, "FixpipeParamsV220.ndNum", p.ndNum, 0, 65535, doc);
        xbemu::in_range(api, "FixpipeParamsV220.srcNdStride", p.srcNdStride, 0, 512, doc);
        xbemu::in_range(api, "FixpipeParamsV220.dstNdStride", p.dstNdStride, 0, 65535, doc);
    }
    // Atlas A2 pairs without a quantization scale (asc-devkit L0C到GM数据搬运（Fixpipe）.md): float -> float,
    // half (F322F16), bfloat16 (F322BF16); int32 -> int32 (NoQuant). int32 -> half/int8 need deqScalar: not modelled
    static_assert(std::is_same<U, float>::value || std::is_same<U, int32_t>::value,
                  "Fixpipe: the source is the float or int32_t accumulator in L0C");
    static_assert(!std::is_same<U, int32_t>::value || std::is_same<T, int32_t>::value,
                  "Fixpipe: an int32_t accumulator is modelled to int32_t only (the quantizing modes need deqScalar)");
    static_assert(!std::is_same<U, float>::value || std::is_same<T, float>::value || std::is_same<T, half>::value ||
                      std::is_same<T, bfloat16_t>::value,
                  "Fixpipe: a float accumulator goes to float, half or bfloat16_t");
    QuantMode_t want = std::is_same<T, half>::value ? QuantMode_t::F322F16
                       : std::is_same<T, bfloat16_t>::value ? QuantMode_t::F322BF16 : QuantMode_t::NoQuant;
    if (p.quantPre != want)
        xbemu::fail(api, "quantPre does not match the destination type (float -> half needs F322F16, "
                         "float -> bfloat16 F322BF16, float -> float and int32 -> int32 NoQuant)");
    if (p.ndNum != 1 || p.unitFlag != 0) xbemu::fail(api, "ndNum must be 1 and unitFlag 0");
    if (p.mSize == 0 || p.nSize == 0) return;
    if (p.srcStride % 16 || p.srcStride < p.mSize)
        xbemu::fail(api, "srcStride " + std::to_string(p.srcStride) + " must be a multiple of 16 and at least mSize " +
                             std::to_string(p.mSize));
    if (p.dstStride < p.nSize)
        xbemu::fail(api, "dstStride " + std::to_string(p.dstStride) + " is smaller than nSize " + std::to_string(p.nSize));
    uint64_t nf = (p.nSize + 15) / 16;
    touch(api, "src", src, 1u << L0C, ((nf - 1) * p.srcStride * 16 + uint64_t(p.srcStride) * 16) * sizeof(U),
          xbemu::DEQUEUED);
    cs().c.fixpipe_calls++;
    const uint64_t num = cube_issue(xbemu::P_FIX);
    for (uint64_t c = 0; c < nf; c++)  // column block c: mSize rows of 16 elements
        tensor_read(api, src, L0C, xbemu::P_FIX, c * uint64_t(p.srcStride) * 16 * sizeof(U), p.mSize * 16 * sizeof(U), num);
    for (uint64_t r = 0; r < p.mSize; r++) {
        T* row = dst.addr_ + r * p.dstStride;
        xbemu::gm_check(api, dst.base_, row, p.nSize * sizeof(T), true, true, cs().site);
        fix_gm_write(api, reinterpret_cast<const uint8_t*>(row), p.nSize * sizeof(T), num);
        cs().c.l0c_to_gm += p.nSize * sizeof(T);
        if (count_only()) continue;
        for (uint64_t c = 0; c < p.nSize; c++) {
            U v = src.ptr_[(c / 16) * uint64_t(p.srcStride) * 16 + r * 16 + c % 16];
            if (p.reluEn && !(v > U(0))) v = v != v ? v : U(0);  // NaN stays NaN
            row[c] = static_cast<T>(v);
        }
    }
}

// ----- cross-core flags ---------------------------------------------------------------------------
// Each core has a counter per flag id (0-10, at most 15). Mode 2 (AIC <-> AIVs of one AI Core): the
// AIC's set adds one on every AIV of its AI Core; the AIC's counter gains one once every AIV has set
// the flag. Mode 1 (AIV <-> AIV): every AIV's counter gains one once every AIV has set it. A wait
// blocks while the core's counter is 0, then takes one. Mode 0 (all cores of the launch) is not
// modelled. Run outside the launcher (fused), one counter per flag for the one model core.

template <uint8_t modeId, pipe_t pipe>
inline void CrossCoreSetFlag(xbemu::Field<uint16_t> flagIdIn) {
    const char* api = "CrossCoreSetFlag";
    if (modeId > 2) xbemu::fail(api, "modeId must be 0, 1 or 2");
    xbemu::in_range(api, "flagId", flagIdIn, 0, 10, "docs 核间同步/CrossCoreSetFlag(ISASI).md: ids 0-10 between an AIC "
                    "and its AIVs (11-14 are SyncAll's)");
    const uint16_t flagId = flagIdIn;
    if (xbemu::cube::running()) {
        xbemu::cube::cross_set(api, modeId, xbemu::cube::flag_pipe(pipe), flagId);
        xbemu::cube::cs().c.cross_core_sets++;
        return;
    }
    int& f = xbemu::cube::cs().flags[flagId];
    if (++f > 15) xbemu::fail(api, "flag " + std::to_string(flagId) + " set more than 15 times without a wait");
    xbemu::cube::cs().c.cross_core_sets++;
}

template <uint8_t modeId = 0, pipe_t pipe = PIPE_S>
inline void CrossCoreWaitFlag(xbemu::Field<uint16_t> flagIdIn, const char* file_ = __builtin_FILE(),
                              int line_ = __builtin_LINE()) {
    const char* api = "CrossCoreWaitFlag";
    xbemu::in_range(api, "flagId", flagIdIn, 0, 10, "docs 核间同步/CrossCoreWaitFlag(ISASI).md: ids 0-10 between an "
                    "AIC and its AIVs (11-14 are SyncAll's)");
    const uint16_t flagId = flagIdIn;
    if (xbemu::cube::running()) {  // the modeId of a wait does not matter: it takes one count of the core's flag
        xbemu::cube::cross_wait(xbemu::cube::flag_pipe(pipe), flagId, xbemu::Site{file_, line_});
        return;
    }
    int& f = xbemu::cube::cs().flags[flagId];
    if (f == 0) xbemu::fail(api, "waits for flag " + std::to_string(flagId) + ", which the other core never set (deadlock)");
    f--;
    // fused (outside the launcher): the other core's section ran before, in program order: all of it is done
    for (int a = 0; a < xbemu::P_NUM; a++)
        for (int b = 0; b < xbemu::P_NUM; b++) xbemu::make_visible(a, b);
}

}  // namespace AscendC

// Counters of the last launch, for the Python side: {cube_ops, mmad_calls, gm_to_l1, l1_to_l0a,
// l1_to_l0b, l0c_to_gm, cross_core_sets, peak L1, peak L0A, peak L0B, peak L0C, gm_to_l1_calls,
// load_data_calls, fixpipe_calls}.
extern "C" __attribute__((weak)) int xblock_cube_counters(uint64_t* out, int n) {
    const xbemu::cube::Counters& c = xbemu::cube::cs().c;
    uint64_t v[] = {c.cube_ops, c.mmad_calls, c.gm_to_l1, c.l1_to_l0a, c.l1_to_l0b, c.l0c_to_gm, c.cross_core_sets,
                    c.peak[0], c.peak[1], c.peak[2], c.peak[3], c.gm_to_l1_calls, c.load_data_calls, c.fixpipe_calls};
    int k = 0;
    for (; k < n && k < static_cast<int>(sizeof v / sizeof v[0]); k++) out[k] = v[k];
    return k;
}
