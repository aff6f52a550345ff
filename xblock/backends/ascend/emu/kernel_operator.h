// xblock's clean-room CPU model of the AscendC subset that xblock emits.
//
// Written from the public API facts in shared/ascendc/REFERENCE.md (names, parameter types and
// documented units); no CANN header, library or sample code is used. It is strict on purpose:
// whatever the hardware would silently get wrong (a DataCopy count it rounds down, a misaligned
// UB address, a read of data another pipe has not finished writing, queue misuse, unpaired
// flags, too much UB) is an error that names the API call. It counts GM bytes moved and vector
// instructions issued. One kernel launch runs its blocks one after another (see emu_launch.h).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
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

namespace xbemu {

struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

[[noreturn]] inline void fail(const std::string& api, const std::string& msg) {
    throw Error(api + ": " + msg);
}

enum Pipe { P_S = 0, P_V, P_MTE2, P_MTE3, P_NUM };
inline const char* pipe_name(int p) {
    static const char* names[] = {"S", "V", "MTE2", "MTE3"};
    return names[p];
}

struct Region {
    uint8_t* base;
    uint64_t bytes;
    std::string name;
};

// Per-core state; reset at the start of every block (each block models one AI Core's vector unit).
struct State {
    // SoC profile, set by the launcher
    uint32_t ub_total = 192 * 1024, ub_usable = 184 * 1024;
    bool has_pad = true;
    int64_t block_idx = 0, block_num = 1;
    std::vector<Region> regions;
    // unified buffer, with the writer pipe and its sequence number per 32-byte block
    std::vector<uint8_t> ub;
    std::vector<uint8_t> writer;
    std::vector<uint64_t> wseq;
    uint64_t seq[P_NUM] = {0, 0, 0, 0};
    uint64_t visible[P_NUM][P_NUM] = {};
    // pipe objects
    bool pipe_alive = false;
    uint32_t ub_used = 0, buffers = 0, que_buffers_in = 0, que_buffers_out = 0;
    // SetFlag/WaitFlag: pending sequence number + 1 per (event, id), 0 when none
    uint64_t flags[64][8] = {};
    int atomic = 0;  // 0 none, 1 add
    // counters
    uint64_t gm_read = 0, gm_write = 0, vec_instrs = 0, vec_repeats = 0, scalar_ub = 0, scalar_gm = 0;
};

inline State& st() {
    static State s;
    return s;
}

inline void begin_block(int64_t idx, int64_t num) {
    State& s = st();
    s.block_idx = idx;
    s.block_num = num;
    s.ub.assign(s.ub_total, 0xff);  // poison: uninitialized floats read as NaN
    s.writer.assign(s.ub_total / 32, 0xff);
    s.wseq.assign(s.ub_total / 32, 0);
    for (auto& q : s.seq) q = 0;
    std::memset(s.visible, 0, sizeof(s.visible));
    std::memset(s.flags, 0, sizeof(s.flags));
    s.pipe_alive = false;
    s.ub_used = s.buffers = s.que_buffers_in = s.que_buffers_out = 0;
    s.atomic = 0;
}

inline void end_block() {
    State& s = st();
    for (int e = 0; e < 64; e++)
        for (int i = 0; i < 8; i++)
            if (s.flags[e][i])
                fail("SetFlag", "event " + std::to_string(e) + " id " + std::to_string(i) +
                                    " was set and never waited for (unpaired SetFlag/WaitFlag)");
    if (s.atomic) fail("SetAtomicAdd", "atomic mode still on at kernel end (missing SetAtomicNone)");
}

inline std::string hexaddr(uint64_t off) {
    char b[32];
    std::snprintf(b, sizeof b, "UB+0x%llx", static_cast<unsigned long long>(off));
    return b;
}

inline uint64_t ub_off(const void* p) {
    return static_cast<uint64_t>(static_cast<const uint8_t*>(p) - st().ub.data());
}

// A pipe reads [p, p+n): every 32-byte block written by another pipe must be visible to it.
inline void ub_read(const char* api, int pipe, const void* p, uint64_t n) {
    State& s = st();
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
}

inline void ub_write(const char* api, int pipe, const void* p, uint64_t n) {
    State& s = st();
    if (n == 0) return;
    uint64_t off = ub_off(p);
    if (off + n > s.ub_total) fail(api, "writes past the end of the unified buffer");
    s.seq[pipe]++;
    for (uint64_t b = off / 32; b <= (off + n - 1) / 32; b++) {
        s.writer[b] = static_cast<uint8_t>(pipe);
        s.wseq[b] = s.seq[pipe];
    }
}

inline void make_visible(int from, int to) {
    State& s = st();
    if (s.visible[from][to] < s.seq[from]) s.visible[from][to] = s.seq[from];
}

inline const Region& gm_region(const char* api, const void* p) {
    for (const Region& r : st().regions)
        if (p >= r.base && p < r.base + (r.bytes ? r.bytes : 1)) return r;
    fail(api, "address is not inside any buffer passed to the kernel");
}

inline void gm_check(const char* api, const void* base, const void* p, uint64_t n, bool write) {
    if (n == 0) return;
    const Region& r = gm_region(api, base);
    const uint8_t* q = static_cast<const uint8_t*>(p);
    if (q < r.base || q + n > r.base + r.bytes)
        fail(api, std::string(write ? "writes " : "reads ") + std::to_string(n) + " B of GM at byte offset " +
                      std::to_string(static_cast<long long>(q - r.base)) + " of '" + r.name + "' (" +
                      std::to_string(r.bytes) + " B)");
    if (write)
        st().gm_write += n;
    else
        st().gm_read += n;
}

// Queue slot: one buffer of a TQue, with its state machine Alloc -> EnQue -> DeQue -> Free.
enum SlotState { FREE = 0, ALLOCATED, QUEUED, DEQUEUED };
struct Slot {
    uint32_t offset = 0;
    SlotState state = FREE;
    uint32_t gen = 0;
    bool vecin = true;
};

inline void vec_count(uint64_t bytes) {
    st().vec_instrs++;
    st().vec_repeats += (bytes + 255) / 256;
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
enum pipe_t { PIPE_S = 0, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_FIX, PIPE_ALL };
enum event_t : int32_t { EVENT_ID0 = 0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7 };
using TEventID = int8_t;

inline int64_t GetBlockIdx() { return xbemu::st().block_idx; }
inline int64_t GetBlockNum() { return xbemu::st().block_num; }

template <typename T>
class GlobalTensor {
   public:
    using PrimType = T;
    void SetGlobalBuffer(__gm__ T* buffer, uint64_t bufferSize) {
        SetGlobalBuffer(buffer);
        size_ = bufferSize;
    }
    void SetGlobalBuffer(__gm__ T* buffer) {
        xbemu::gm_region("GlobalTensor::SetGlobalBuffer", buffer);
        base_ = buffer;
        addr_ = buffer;
        size_ = 0;
    }
    T GetValue(const uint64_t offset) const {
        xbemu::gm_check("GlobalTensor::GetValue", base_, addr_ + offset, sizeof(T), false);
        xbemu::st().scalar_gm++;
        return addr_[offset];
    }
    void SetValue(const uint64_t offset, T value) {
        xbemu::gm_check("GlobalTensor::SetValue", base_, addr_ + offset, sizeof(T), true);
        xbemu::st().scalar_gm++;
        addr_[offset] = value;
    }
    uint64_t GetSize() const { return size_; }
    GlobalTensor operator[](const uint64_t offset) const {
        GlobalTensor g = *this;
        g.addr_ = addr_ + offset;
        return g;
    }
    __gm__ T* GetPhyAddr(const uint64_t offset = 0) const { return addr_ + offset; }
    // model state, not API
    T* base_ = nullptr;
    T* addr_ = nullptr;
    uint64_t size_ = 0;
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
        if (offset > size_) xbemu::fail("LocalTensor::operator[]", "offset " + std::to_string(offset) +
                                                                       " past the tensor's " + std::to_string(size_) +
                                                                       " elements");
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
    void check(const char* api, uint32_t index) const {
        live(api);
        if (index >= size_)
            xbemu::fail(api, "index " + std::to_string(index) + " past the tensor's " + std::to_string(size_) +
                                 " elements");
    }
    void live(const char* api) const {
        if (ptr_ == nullptr) xbemu::fail(api, "uses a LocalTensor that was never allocated");
        if (slot_ && (slot_->gen != gen_ || slot_->state == xbemu::FREE))
            xbemu::fail(api, "uses a LocalTensor after FreeTensor");
    }
    T* ptr_ = nullptr;
    uint32_t size_ = 0;
    xbemu::Slot* slot_ = nullptr;
    uint32_t gen_ = 0;
};

namespace detail {

// A pipe touches n elements of a tensor; checks liveness, queue state, alignment and visibility.
template <typename T>
inline void touch(const char* api, const LocalTensor<T>& t, int pipe, bool write, uint64_t n, bool aligned = true) {
    t.live(api);
    if (n > t.size_)
        xbemu::fail(api, std::to_string(n) + " elements exceed the tensor's " + std::to_string(t.size_));
    if (aligned && xbemu::ub_off(t.ptr_) % 32)
        xbemu::fail(api, "UB address " + xbemu::hexaddr(xbemu::ub_off(t.ptr_)) + " is not 32-byte aligned");
    if (t.slot_) {
        xbemu::SlotState s = t.slot_->state;
        bool ok;
        if (t.slot_->vecin)
            ok = pipe == xbemu::P_MTE2 ? s == xbemu::ALLOCATED : (pipe == xbemu::P_S ? s != xbemu::QUEUED
                                                                                     : s == xbemu::DEQUEUED);
        else
            ok = pipe == xbemu::P_MTE3 ? s == xbemu::DEQUEUED : (s == xbemu::ALLOCATED || (pipe == xbemu::P_S &&
                                                                                          s == xbemu::DEQUEUED));
        if (!ok)
            xbemu::fail(api, std::string("pipe ") + xbemu::pipe_name(pipe) + " uses a " +
                                 (t.slot_->vecin ? "VECIN" : "VECOUT") +
                                 " queue tensor in the wrong state (Alloc -> EnQue -> DeQue -> Free)");
    }
    if (write)
        xbemu::ub_write(api, pipe, t.ptr_, n * sizeof(T));
    else
        xbemu::ub_read(api, pipe, t.ptr_, n * sizeof(T));
}

template <typename T>
inline float tof(T v) { return static_cast<float>(v); }

// Integer vector arithmetic is integer arithmetic on the hardware (int16/int32 lanes), wrapping in
// two's complement; only half and float compute in floating point. Unsigned types of at least int's
// width keep the wrap defined in C++ (a uint16 product would otherwise overflow int).
template <typename T>
inline T arith(char op, T x, T y) {
    if constexpr (std::is_integral<T>::value) {
        using U = typename std::conditional<(sizeof(T) < sizeof(unsigned)), unsigned,
                                            typename std::make_unsigned<T>::type>::type;
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
    LocalTensor<T> AllocTensor() {
        for (auto& s : slots_)
            if (s.state == xbemu::FREE) {
                s.state = xbemu::ALLOCATED;
                s.gen++;
                if (pos == TPosition::VECOUT) {
                    // the buffer's last copy-out must be visible before the vector unit overwrites it
                    xbemu::make_visible(xbemu::P_MTE3, xbemu::P_V);
                }
                return make<T>(s);
            }
        if (slots_.empty()) xbemu::fail("TQue::AllocTensor", "the queue has no buffers (missing pipe.InitBuffer)");
        xbemu::fail("TQue::AllocTensor", "all " + std::to_string(slots_.size()) +
                                             " buffers of the queue are in use (missing FreeTensor?)");
    }
    template <typename T>
    bool EnQue(const LocalTensor<T>& tensor) {
        xbemu::Slot* s = own("TQue::EnQue", tensor);
        if (s->state != xbemu::ALLOCATED) xbemu::fail("TQue::EnQue", "tensor is not freshly allocated");
        if ((int32_t)queued_.size() >= (depth > 0 ? depth : 1))
            xbemu::fail("TQue::EnQue", "more than depth=" + std::to_string(depth) + " tensors enqueued");
        s->state = xbemu::QUEUED;
        queued_.push_back(s);
        return true;
    }
    template <typename T>
    LocalTensor<T> DeQue() {
        if (queued_.empty()) xbemu::fail("TQue::DeQue", "the queue is empty (missing EnQue)");
        xbemu::Slot* s = queued_.front();
        queued_.erase(queued_.begin());
        s->state = xbemu::DEQUEUED;
        if (pos == TPosition::VECIN)
            xbemu::make_visible(xbemu::P_MTE2, xbemu::P_V);
        else
            xbemu::make_visible(xbemu::P_V, xbemu::P_MTE3);
        return make<T>(*s);
    }
    template <typename T>
    void FreeTensor(LocalTensor<T>& tensor) {
        xbemu::Slot* s = own("TQue::FreeTensor", tensor);
        if (s->state != xbemu::DEQUEUED)
            xbemu::fail("TQue::FreeTensor", s->state == xbemu::FREE ? "tensor already freed"
                                                                    : "tensor freed before DeQue");
        s->state = xbemu::FREE;
    }
    bool VacantInQue() { return queued_.empty(); }
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
    template <typename T>
    xbemu::Slot* own(const char* api, const LocalTensor<T>& t) {
        for (auto& s : slots_)
            if (&s == t.slot_) {
                if (s.gen != t.gen_) xbemu::fail(api, "tensor was already freed");
                return &s;
            }
        xbemu::fail(api, "tensor does not belong to this queue");
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
        if (len_ == 0) xbemu::fail("TBuf::Get", "buffer has no memory (missing pipe.InitBuffer)");
        if (bufOffset + static_cast<uint64_t>(size) * sizeof(T) > len_)
            xbemu::fail("TBuf::GetWithOffset", std::to_string(size) + " elements at byte " +
                                                   std::to_string(bufOffset) + " exceed the " +
                                                   std::to_string(len_) + " B buffer");
        LocalTensor<T> t;
        t.ptr_ = reinterpret_cast<T*>(xbemu::st().ub.data() + offset_ + bufOffset);
        t.size_ = size;
        return t;
    }
    uint32_t offset_ = 0, len_ = 0;
};

class TPipe {
   public:
    TPipe() {
        if (xbemu::st().pipe_alive) xbemu::fail("TPipe::TPipe", "a second TPipe in one kernel");
        xbemu::st().pipe_alive = true;
    }
    ~TPipe() { xbemu::st().pipe_alive = false; }
    TPipe(const TPipe&) = delete;
    TPipe& operator=(const TPipe&) = delete;

    template <class T>
    bool InitBuffer(T& que, uint8_t num, uint32_t len) {
        xbemu::State& s = xbemu::st();
        uint32_t rounded = (len + 31) / 32 * 32;
        if (num == 0 || len == 0) xbemu::fail("TPipe::InitBuffer", "zero buffers or zero length");
        if (!que.slots_.empty()) xbemu::fail("TPipe::InitBuffer", "queue initialised twice");
        // queue buffers of one position share 8 event ids on A2
        uint32_t& per_pos = is_vecin<T>() ? s.que_buffers_in : s.que_buffers_out;
        per_pos += num;
        if (per_pos > 8)
            xbemu::fail("TPipe::InitBuffer", std::to_string(per_pos) + " queue buffers at one TPosition (at most 8)");
        reserve(static_cast<uint64_t>(rounded) * num, num);
        que.len_ = rounded;
        que.slots_.resize(num);
        for (uint32_t i = 0; i < num; i++) {
            que.slots_[i].offset = s.ub_used - rounded * (num - i);
            que.slots_[i].vecin = is_vecin<T>();
        }
        return true;
    }
    template <TPosition pos>
    bool InitBuffer(TBuf<pos>& buf, uint32_t len) {
        if (buf.len_) xbemu::fail("TPipe::InitBuffer", "TBuf initialised twice");
        uint32_t rounded = (len + 31) / 32 * 32;
        reserve(rounded, 1);
        buf.offset_ = xbemu::st().ub_used - rounded;
        buf.len_ = rounded;
        return true;
    }
    TEventID FetchEventID(HardEvent evt) {
        // the first id of this event that is not pending
        for (int i = 0; i < 8; i++)
            if (!xbemu::st().flags[static_cast<int>(evt)][i]) return static_cast<TEventID>(i);
        xbemu::fail("TPipe::FetchEventID", "all 8 event ids of this event are pending");
    }
    template <HardEvent evt>
    TEventID FetchEventID() { return FetchEventID(evt); }
    template <HardEvent evt>
    TEventID AllocEventID() { return FetchEventID(evt); }
    template <HardEvent evt>
    void ReleaseEventID(TEventID) {}
    void Destroy() {}
    void Reset() {}

   private:
    template <class T>
    static constexpr bool is_vecin() { return is_vecin_tag(static_cast<T*>(nullptr)); }
    template <TPosition p, int32_t d, auto m>
    static constexpr bool is_vecin_tag(TQue<p, d, m>*) { return p == TPosition::VECIN; }
    void reserve(uint64_t bytes, uint32_t nbuf) {
        xbemu::State& s = xbemu::st();
        s.buffers += nbuf;
        if (s.buffers > 64) xbemu::fail("TPipe::InitBuffer", "more than 64 buffers in one kernel");
        if (s.ub_used + bytes > s.ub_usable)
            xbemu::fail("TPipe::InitBuffer", "unified buffer overflow: " + std::to_string(s.ub_used + bytes) +
                                                 " B requested, " + std::to_string(s.ub_usable) + " B usable");
        s.ub_used += static_cast<uint32_t>(bytes);
    }
};

// ----- synchronisation -----------------------------------------------------------------------

namespace detail {
inline bool event_pipes(HardEvent e, int& from, int& to) {
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
        default: return false;
    }
}
}  // namespace detail

template <HardEvent event>
inline void SetFlag(int32_t eventID) {
    int from, to;
    if (!detail::event_pipes(event, from, to)) xbemu::fail("SetFlag", "event not modelled by the emulator");
    if (eventID < 0 || eventID > 7) xbemu::fail("SetFlag", "event id " + std::to_string(eventID) + " not in 0..7");
    uint64_t& f = xbemu::st().flags[static_cast<int>(event)][eventID];
    if (f) xbemu::fail("SetFlag", "same event and id set twice without a WaitFlag in between");
    f = xbemu::st().seq[from] + 1;
}

template <HardEvent event>
inline void WaitFlag(int32_t eventID) {
    int from, to;
    if (!detail::event_pipes(event, from, to)) xbemu::fail("WaitFlag", "event not modelled by the emulator");
    if (eventID < 0 || eventID > 7) xbemu::fail("WaitFlag", "event id " + std::to_string(eventID) + " not in 0..7");
    uint64_t& f = xbemu::st().flags[static_cast<int>(event)][eventID];
    if (!f) xbemu::fail("WaitFlag", "waits for an event id that was never set (unpaired SetFlag/WaitFlag)");
    uint64_t& v = xbemu::st().visible[from][to];
    if (v < f - 1) v = f - 1;
    f = 0;
}

template <pipe_t pipe>
inline void PipeBarrier() {
    static_assert(pipe != PIPE_S, "PipeBarrier<PIPE_S> is not allowed");
    if (pipe == PIPE_ALL)
        for (int a = 0; a < xbemu::P_NUM; a++)
            for (int b = 0; b < xbemu::P_NUM; b++) xbemu::make_visible(a, b);
}

template <typename T, CacheLine entireType, DcciDst dcciDst>
inline void DataCacheCleanAndInvalid(const GlobalTensor<T>& dst) {
    xbemu::gm_region("DataCacheCleanAndInvalid", dst.base_);
}

template <typename T>
inline void SetAtomicAdd() {
    if (xbemu::st().atomic) xbemu::fail("SetAtomicAdd", "atomic mode already on");
    xbemu::st().atomic = 1;
}
inline void SetAtomicNone() { xbemu::st().atomic = 0; }

// ----- data movement -------------------------------------------------------------------------

struct DataCopyParams {
    DataCopyParams() = default;
    DataCopyParams(const uint16_t count, const uint16_t len, const uint16_t srcStrideIn, const uint16_t dstStrideIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn) {}
    uint16_t blockCount = 1;
    uint16_t blockLen = 0;
    uint16_t srcStride = 0;
    uint16_t dstStride = 0;
};

struct DataCopyExtParams {
    DataCopyExtParams() = default;
    DataCopyExtParams(const uint16_t count, const uint32_t len, const uint32_t srcStrideIn,
                      const uint32_t dstStrideIn, const uint32_t rsvIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn), rsv(rsvIn) {}
    uint16_t blockCount = 1;
    uint32_t blockLen = 0;
    uint32_t srcStride = 0;
    uint32_t dstStride = 0;
    uint32_t rsv = 0;
};

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
template <typename T>
inline void count_copy_ok(const char* api, uint32_t count) {
    if ((static_cast<uint64_t>(count) * sizeof(T)) % 32)
        xbemu::fail(api, "count " + std::to_string(count) + " x " + std::to_string(sizeof(T)) + " B = " +
                             std::to_string(count * sizeof(T)) +
                             " B is not a multiple of 32 B (the hardware would round it down); use DataCopyPad");
}
}  // namespace detail

template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const uint32_t count) {
    detail::count_copy_ok<T>("DataCopy(GM->UB)", count);
    xbemu::gm_check("DataCopy(GM->UB)", src.base_, src.addr_, uint64_t(count) * sizeof(T), false);
    detail::touch("DataCopy(GM->UB)", dst, xbemu::P_MTE2, true, count);
    std::memcpy(dst.ptr_, src.addr_, uint64_t(count) * sizeof(T));
}

namespace detail {
template <typename T>
inline void gm_store(const char* api, const GlobalTensor<T>& dst, uint64_t off, const T* src, uint64_t n) {
    xbemu::gm_check(api, dst.base_, dst.addr_ + off, n * sizeof(T), true);
    if (xbemu::st().atomic) {
        for (uint64_t i = 0; i < n; i++) dst.addr_[off + i] = static_cast<T>(tof(dst.addr_[off + i]) + tof(src[i]));
    } else {
        std::memcpy(dst.addr_ + off, src, n * sizeof(T));
    }
}
}  // namespace detail

template <typename T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
    detail::count_copy_ok<T>("DataCopy(UB->GM)", count);
    detail::touch("DataCopy(UB->GM)", src, xbemu::P_MTE3, false, count);
    detail::gm_store("DataCopy(UB->GM)", dst, 0, src.ptr_, count);
}

template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
    detail::count_copy_ok<T>("DataCopy(UB->UB)", count);
    detail::touch("DataCopy(UB->UB)", src, xbemu::P_V, false, count);
    detail::touch("DataCopy(UB->UB)", dst, xbemu::P_V, true, count);
    std::memmove(dst.ptr_, src.ptr_, uint64_t(count) * sizeof(T));
    xbemu::vec_count(uint64_t(count) * sizeof(T));
}

// DataCopyParams: blockLen and gaps in 32-byte blocks.
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p) {
    if (p.blockCount > 4095) xbemu::fail("DataCopy(GM->UB)", "blockCount above 4095");
    uint64_t blk = uint64_t(p.blockLen) * 32 / sizeof(T);
    for (uint32_t i = 0; i < p.blockCount; i++) {
        uint64_t so = i * (blk + uint64_t(p.srcStride) * 32 / sizeof(T));
        uint64_t d = i * (blk + uint64_t(p.dstStride) * 32 / sizeof(T));
        xbemu::gm_check("DataCopy(GM->UB)", src.base_, src.addr_ + so, blk * sizeof(T), false);
        detail::touch("DataCopy(GM->UB)", dst[static_cast<uint32_t>(d)], xbemu::P_MTE2, true, blk);
        std::memcpy(dst.ptr_ + d, src.addr_ + so, blk * sizeof(T));
    }
}

template <typename T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
    if (p.blockCount > 4095) xbemu::fail("DataCopy(UB->GM)", "blockCount above 4095");
    uint64_t blk = uint64_t(p.blockLen) * 32 / sizeof(T);
    for (uint32_t i = 0; i < p.blockCount; i++) {
        uint64_t s = i * (blk + uint64_t(p.srcStride) * 32 / sizeof(T));
        uint64_t d = i * (blk + uint64_t(p.dstStride) * 32 / sizeof(T));
        detail::touch("DataCopy(UB->GM)", src[static_cast<uint32_t>(s)], xbemu::P_MTE3, false, blk);
        detail::gm_store("DataCopy(UB->GM)", dst, d, src.ptr_ + s, blk);
    }
}

// DataCopyExtParams for GM->UB: blockLen and srcStride in bytes (GM side), dstStride in 32-byte blocks.
// Each block lands 32-byte aligned in UB; its padding holds paddingValue (isPad) or its first element.
template <typename T>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& p,
                        const DataCopyPadExtParams<T>& pad) {
    const char* api = "DataCopyPad(GM->UB)";
    if (!xbemu::st().has_pad) xbemu::fail(api, "DataCopyPad does not exist on this SoC");
    if (p.blockCount > 4095) xbemu::fail(api, "blockCount " + std::to_string(p.blockCount) + " above 4095");
    if (p.blockLen > 2097151) xbemu::fail(api, "blockLen above 2097151 B");
    if (p.blockLen % sizeof(T)) xbemu::fail(api, "blockLen " + std::to_string(p.blockLen) +
                                                     " B is not a multiple of the element size");
    if ((pad.leftPadding + pad.rightPadding) * sizeof(T) > 32)
        xbemu::fail(api, "left + right padding above 32 B");
    if (p.blockCount == 0 || p.blockLen == 0) return;
    uint64_t elems = p.blockLen / sizeof(T);
    uint64_t row = (uint64_t(pad.leftPadding) * sizeof(T) + p.blockLen + pad.rightPadding * sizeof(T) + 31) / 32 * 32;
    const uint8_t* g = reinterpret_cast<const uint8_t*>(src.addr_);
    for (uint32_t i = 0; i < p.blockCount; i++) {
        const T* from = reinterpret_cast<const T*>(g + i * (uint64_t(p.blockLen) + p.srcStride));
        uint64_t d = i * (row + uint64_t(p.dstStride) * 32) / sizeof(T);
        xbemu::gm_check(api, src.base_, from, p.blockLen, false);
        LocalTensor<T> out = dst[static_cast<uint32_t>(d)];
        detail::touch(api, out, xbemu::P_MTE2, true, row / sizeof(T));
        T fill = pad.isPad ? pad.paddingValue : from[0];
        for (uint64_t k = 0; k < row / sizeof(T); k++) out.ptr_[k] = fill;
        std::memcpy(out.ptr_ + pad.leftPadding, from, p.blockLen);
    }
    (void)elems;
}

// DataCopyExtParams for UB->GM: srcStride in 32-byte blocks (UB side), dstStride in bytes (GM side);
// only blockLen bytes of each block reach GM.
template <typename T>
inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& p) {
    const char* api = "DataCopyPad(UB->GM)";
    if (!xbemu::st().has_pad) xbemu::fail(api, "DataCopyPad does not exist on this SoC");
    if (p.blockCount > 4095) xbemu::fail(api, "blockCount " + std::to_string(p.blockCount) + " above 4095");
    if (p.blockLen > 2097151) xbemu::fail(api, "blockLen above 2097151 B");
    if (p.blockLen % sizeof(T)) xbemu::fail(api, "blockLen " + std::to_string(p.blockLen) +
                                                     " B is not a multiple of the element size");
    if (p.blockCount == 0 || p.blockLen == 0) return;
    uint64_t row = (uint64_t(p.blockLen) + 31) / 32 * 32;
    for (uint32_t i = 0; i < p.blockCount; i++) {
        uint64_t s = i * (row + uint64_t(p.srcStride) * 32) / sizeof(T);
        uint64_t dbyte = i * (uint64_t(p.blockLen) + p.dstStride);
        LocalTensor<T> in = src[static_cast<uint32_t>(s)];
        detail::touch(api, in, xbemu::P_MTE3, false, p.blockLen / sizeof(T));
        if (dbyte % sizeof(T)) xbemu::fail(api, "GM destination not aligned to the element size");
        detail::gm_store(api, dst, dbyte / sizeof(T), in.ptr_, p.blockLen / sizeof(T));
    }
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

template <typename T>
inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, const int32_t& count) {
    detail::count_ok<T>("Duplicate", count);
    detail::touch("Duplicate", dst, xbemu::P_V, true, count);
    for (int32_t i = 0; i < count; i++) dst.ptr_[i] = scalarValue;
}

// High-dimensional form: mask = first N elements of each 256-byte repeat.
template <typename T, bool isSetMask = true>
inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, uint64_t mask, const uint8_t repeatTime,
                      const uint16_t dstBlockStride, const uint8_t dstRepeatStride) {
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
template <typename T>
inline T cvt(float x, RoundMode m, const char* api) {
    double r;
    switch (m) {
        case RoundMode::CAST_NONE:
        case RoundMode::CAST_RINT: r = std::nearbyint(x); break;
        case RoundMode::CAST_FLOOR: r = std::floor(x); break;
        case RoundMode::CAST_CEIL: r = std::ceil(x); break;
        case RoundMode::CAST_ROUND: r = std::round(x); break;
        case RoundMode::CAST_TRUNC: r = std::trunc(x); break;
        default: xbemu::fail(api, "round mode not modelled");
    }
    if (std::is_integral<T>::value) {
        if (std::isnan(r)) return T(0);
        double lo = static_cast<double>(std::numeric_limits<T>::min());
        double hi = static_cast<double>(std::numeric_limits<T>::max());
        return static_cast<T>(r < lo ? lo : (r > hi ? hi : r));
    }
    return static_cast<T>(r);
}
template <typename T, typename U>
constexpr bool same2() { return std::is_same<T, U>::value; }
}  // namespace detail

// Legal (src, dst, mode) combinations on A2 follow the reference's Cast table.
template <typename T, typename U>
inline void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode,
                 const uint32_t count) {
    const char* api = "Cast";
    using namespace detail;
    bool none = roundMode == RoundMode::CAST_NONE;
    bool lossy_modes = roundMode == RoundMode::CAST_RINT || roundMode == RoundMode::CAST_FLOOR ||
                       roundMode == RoundMode::CAST_CEIL || roundMode == RoundMode::CAST_ROUND ||
                       roundMode == RoundMode::CAST_TRUNC;
    bool ok;
    if ((same2<U, half>() || same2<U, bfloat16_t>() || same2<U, int16_t>()) && same2<T, float>())
        ok = none;
    else if ((same2<U, int8_t>() || same2<U, uint8_t>()) && same2<T, half>())
        ok = none;
    else if (same2<U, float>() && same2<T, half>())
        ok = true;
    else if (same2<U, int32_t>() && same2<T, float>())
        ok = true;
    else if ((same2<U, float>() && (same2<T, bfloat16_t>() || same2<T, int32_t>() || same2<T, int16_t>() ||
                                     same2<T, float>())) ||
             ((same2<U, half>() || same2<U, bfloat16_t>()) && same2<T, int32_t>()) ||
             (same2<U, half>() && same2<T, int16_t>()))
        ok = lossy_modes;
    else if (same2<U, half>() && same2<T, int8_t>())
        ok = true;
    else
        xbemu::fail(api, "this source/destination type pair has no Cast on A2");
    if (!ok) xbemu::fail(api, "round mode not allowed for this type pair on A2");
    count_ok<T>(api, count);
    xbemu::st().vec_repeats += (uint64_t(count) * (sizeof(T) > sizeof(U) ? sizeof(T) : sizeof(U)) + 255) / 256 -
                               (uint64_t(count) * sizeof(T) + 255) / 256;
    touch(api, src, xbemu::P_V, false, count);
    touch(api, dst, xbemu::P_V, true, count);
    for (uint32_t i = 0; i < count; i++) {
        float x = tof(src.ptr_[i]);
        if (std::is_floating_point<T>::value && !same2<T, float>() && !std::is_integral<T>::value) {
            dst.ptr_[i] = static_cast<T>(x);  // to half: round to nearest even
        } else if (same2<T, bfloat16_t>()) {
            dst.ptr_[i] = static_cast<T>(x);
        } else if (same2<T, float>() && same2<U, float>()) {
            dst.ptr_[i] = cvt<T>(x, roundMode, api);
        } else if (std::is_integral<T>::value) {
            dst.ptr_[i] = cvt<T>(x, roundMode, api);
        } else {
            dst.ptr_[i] = static_cast<T>(x);
        }
    }
}

namespace detail {
inline bool cmp(float a, float b, CMPMODE m) {
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

template <typename T, typename U>
inline void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar,
                          CMPMODE cmpMode, uint32_t count) {
    detail::touch("CompareScalar", src0, xbemu::P_V, false, count);
    detail::compare_checks<T>("CompareScalar", dst, count);
    float s = detail::tof(src1Scalar);
    for (uint32_t i = 0; i < count; i += 8) {
        uint8_t bits = 0;
        for (uint32_t k = 0; k < 8; k++) bits |= detail::cmp(detail::tof(src0.ptr_[i + k]), s, cmpMode) << k;
        dst.ptr_[i / 8] = static_cast<U>(bits);
    }
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

}  // namespace AscendC

// The Cube unit (L1/L0A/L0B/L0C, Nd2Nz, LoadData, Mmad, Fixpipe, cross-core flags).
#include "cube.h"
