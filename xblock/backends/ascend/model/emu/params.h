// xblock's CPU model of AscendC: the ranges of parameter-struct fields, and the pipe's event-id pool.
//
// Included by kernel_operator.h (after its per-core State and queue Slot); written from the public
// facts listed in docs/ASCEND_MODEL.md section 9, no CANN header or sample code is used.
//
// Fields. A field of a real parameter struct (Nd2NzParams::srcDValue is a uint16_t) keeps the low
// bits of a larger value: srcDValue = 131072 copies with a row stride of 0. The model's structs hold
// each field as a Field<Real>, which keeps the value the kernel gave whole; the API that takes the
// struct refuses a value outside the documented range (in_range), naming struct, field, value, range
// and where the range is documented. Reading a field gives Real, as the hardware would see it.
//
// Event ids. On Atlas A2 each HardEvent has 8 ids (QUE_MAX_EVENT), one pool per TPipe (so per core).
// TPipe's constructor on an AIC takes M_MTE1 ids 0, 1 and 2 for the whole kernel; a TQue buffer holds
// one id of its enqueue event from EnQue to DeQue and one of its free event from FreeTensor to its
// next AllocTensor (or the pipe's end); AllocEventID takes one until ReleaseEventID; FetchEventID
// returns the first id the pool does not hold and takes nothing. The model keeps that pool and
// refuses a kernel that needs a ninth id, or whose explicit SetFlag/WaitFlag uses an id the pool has
// given to a queue or to the pipe.
#pragma once

namespace xbemu {

// ----- fields of parameter structs ----------------------------------------------------------------

template <typename Real>
struct Field {
    static_assert(std::is_integral<Real>::value, "Field: an integer field of a parameter struct");
    int64_t v = 0;  // the value the kernel gave, not truncated to Real
    constexpr Field() = default;
    template <typename X, typename = typename std::enable_if<std::is_arithmetic<X>::value ||
                                                              std::is_enum<X>::value>::type>
    constexpr Field(X x) : v(static_cast<int64_t>(x)) {}
    constexpr operator Real() const { return static_cast<Real>(v); }
};

template <typename Real>
inline const char* int_name() {
    return sizeof(Real) == 1 ? "uint8_t" : sizeof(Real) == 2 ? "uint16_t" : sizeof(Real) == 4 ? "uint32_t" : "uint64_t";
}

// in_range's message: `truncated` where the field (its C type `type`) would hold another value, held_value.
XBEMU_RT void out_of_range(const char* api, const char* name, int64_t v, int64_t lo, int64_t hi, const char* doc,
                           bool truncated, const char* type, uint64_t held_value) {
    std::string held;
    if (truncated)
        held = "; the " + std::string(type) + " field would hold " + std::to_string(held_value) + ", silently";
    fail(api, std::string(name) + " = " + std::to_string(v) + " is outside its documented range [" +
                  std::to_string(lo) + ", " + std::to_string(hi) + "] (asc-devkit " + doc + ")" + held);
}
// Refuses field `name` ("Nd2NzParams.srcDValue") of the struct `api` reads when its value is outside
// [lo, hi], the range `doc` documents.
template <typename Real>
inline void in_range(const char* api, const char* name, const Field<Real>& f, int64_t lo, int64_t hi,
                     const char* doc) {
    if (f.v >= lo && f.v <= hi) return;
    out_of_range(api, name, f.v, lo, hi, doc, f.v != static_cast<int64_t>(static_cast<Real>(f.v)), int_name<Real>(),
                 static_cast<uint64_t>(static_cast<Real>(f.v)));
}

// A plain parameter of an API (a repeat count) checked like a field.
XBEMU_RT void arg_in_range(const char* api, const char* name, int64_t v, int64_t lo, int64_t hi, const char* doc) {
    in_range(api, name, Field<int64_t>(v), lo, hi, doc);
}

// ----- the event-id pool --------------------------------------------------------------------------

constexpr int kEventIds = 8;  // QUE_MAX_EVENT on Atlas A2 (asc-devkit impl/basic_api/kernel_macros.h)
constexpr int kHardEvents = 64;

enum Holder : uint8_t { ID_FREE = 0, ID_PIPE, ID_QUEUE, ID_USER };

XBEMU_RT const char* hard_event_name(int e) {
    static const char* names[] = {"MTE2_MTE1", "MTE1_MTE2", "MTE1_M", "M_MTE1", "MTE2_V", "V_MTE2", "MTE3_V",
                                  "V_MTE3", "M_V", "V_M", "V_V", "MTE3_MTE1", "MTE1_MTE3", "MTE1_V", "MTE2_M",
                                  "M_MTE2", "V_MTE1", "M_FIX", "FIX_M", "MTE3_MTE2", "MTE2_MTE3", "S_V", "V_S",
                                  "S_MTE2", "MTE2_S", "S_MTE3", "MTE3_S", "MTE2_FIX", "FIX_MTE2", "FIX_S", "M_S",
                                  "FIX_MTE3", "MTE1_FIX", "FIX_MTE1", "FIX_FIX"};
    return e >= 0 && e < static_cast<int>(sizeof names / sizeof names[0]) ? names[e] : "?";
}

// Hard events of the queues (asc-devkit impl/basic_api/kernel_event.h, GetQueEvt and GetBufferLogicPos):
// the enqueue event (producer -> consumer) and the free event (consumer -> producer) by the memory the
// queue's buffers live in and where their data comes from.
enum QueKind { QUE_VECIN = 0, QUE_VECOUT, QUE_L1, QUE_L0AB, QUE_BT, QUE_L0C };
constexpr int kQueEvents[][2] = {{4, 5},     // VECIN, GM -> UB: MTE2_V, V_MTE2
                                 {7, 6},     // VECOUT, UB -> GM: V_MTE3, MTE3_V
                                 {0, 1},     // A1/B1/C1, GM -> L1: MTE2_MTE1, MTE1_MTE2
                                 {2, 3},     // A2/B2, L1 -> L0A/L0B: MTE1_M, M_MTE1
                                 {2, 3},     // C2, L1 -> BiasTable: MTE1_M, M_MTE1
                                 {17, 18}};  // CO1, L0C -> GM: M_FIX, FIX_M
XBEMU_RT const char* que_name(int kind) {
    static const char* names[] = {"TQue<VECIN>", "TQue<VECOUT>", "TQue<A1/B1/C1>", "TQue<A2/B2>", "TQue<C2>",
                                  "TQue<CO1>"};
    return names[kind];
}

struct EventPool {
    uint8_t held[kHardEvents][kEventIds] = {};
    std::string who[kHardEvents][kEventIds];
    bool cube_ids = false;  // TPipe's M_MTE1 ids 0-2 are taken (an AIC)
};

// The running core's pool: its TPipe's, null while it has none.
XBEMU_RT std::unordered_map<const State*, EventPool*>& event_pools() {
    static std::unordered_map<const State*, EventPool*> m;
    return m;
}
XBEMU_RT EventPool* event_pool() {
    auto it = event_pools().find(&st());
    return it == event_pools().end() ? nullptr : it->second;
}

XBEMU_RT std::string holders(const EventPool& p, int e) {
    std::string s;
    for (int i = 0; i < kEventIds; i++)
        s += std::string(s.empty() ? "" : "; ") + "id " + std::to_string(i) + ": " + p.who[e][i];
    return s;
}

// Takes the lowest free id of event e for `who` (AllocEventID's sff0 on the pool's bitmask).
XBEMU_RT int pool_take(const char* api, int e, Holder h, const std::string& who) {
    EventPool* p = event_pool();
    if (!p) fail(api, "no TPipe: the event-id pool belongs to the pipe");
    for (int i = 0; i < kEventIds; i++) {
        if (p->held[e][i]) continue;
        if (h != ID_USER && st().flags[e][i])
            fail(api, who + " takes id " + std::to_string(i) + " of HardEvent::" + hard_event_name(e) +
                          " from the pipe's pool and sets it, but an explicit SetFlag of that id is still pending "
                          "(FetchEventID reserves nothing: wait for the flag first, or take the id with "
                          "AllocEventID)");
        p->held[e][i] = static_cast<uint8_t>(h);
        p->who[e][i] = who;
        return i;
    }
    fail(api, who + " needs an id of HardEvent::" + hard_event_name(e) + ", but all " + std::to_string(kEventIds) +
                  " ids of the pipe's pool are held (" + holders(*p, e) + "); on Atlas A2 each HardEvent has " +
                  std::to_string(kEventIds) + " ids (QUE_MAX_EVENT), shared by the queues, the pipe and "
                  "AllocEventID/FetchEventID: use fewer queue buffers");
}

XBEMU_RT void pool_give(int e, int id) {
    if (EventPool* p = event_pool()) {
        p->held[e][id] = ID_FREE;
        p->who[e][id].clear();
    }
}

// The first id of event e the pool does not hold (FetchEventID: takes nothing).
XBEMU_RT int pool_first_free(const char* api, int e) {
    EventPool* p = event_pool();
    if (!p) fail(api, "no TPipe");
    for (int i = 0; i < kEventIds; i++)
        if (!p->held[e][i]) return i;
    fail(api, "no id of HardEvent::" + std::string(hard_event_name(e)) + " is free: all " + std::to_string(kEventIds) +
                  " are held (" + holders(*p, e) + "); on Atlas A2 each HardEvent has " + std::to_string(kEventIds) +
                  " ids (QUE_MAX_EVENT), shared by the queues, the pipe and AllocEventID/FetchEventID");
}

// An explicit SetFlag/WaitFlag of (e, id): refused when the pool gave the id to a queue or the pipe,
// which set that flag and wait for it themselves.
XBEMU_RT void explicit_flag_ok(const char* api, int e, int id) {
    EventPool* p = event_pool();
    if (!p || (p->held[e][id] != ID_PIPE && p->held[e][id] != ID_QUEUE)) return;
    fail(api, std::string("id ") + std::to_string(id) + " of HardEvent::" + hard_event_name(e) + " is held by " +
                  p->who[e][id] + ", which sets and waits for that flag itself: take the id from the pipe "
                  "(FetchEventID/AllocEventID) instead of naming it");
}

// A queue buffer takes an id of its enqueue (EnQue) or free (FreeTensor) event; -1 when it has none.
XBEMU_RT int8_t que_take(const char* api, int kind, bool free_event, const std::string& what) {
    const int e = kQueEvents[kind][free_event ? 1 : 0];
    return static_cast<int8_t>(pool_take(api, e, ID_QUEUE, std::string("a ") + que_name(kind) + " buffer " + what));
}
XBEMU_RT void que_give(int kind, bool free_event, int8_t& id) {
    if (id < 0) return;
    pool_give(kQueEvents[kind][free_event ? 1 : 0], id);
    id = -1;
}

}  // namespace xbemu

namespace xbemu {

// TPipe's constructor on an AIC of Atlas A2 takes M_MTE1 ids 0, 1 and 2 and sets them for the whole
// kernel (for the high-level Matmul's L0 ping-pong and its bias load); the pipe's end waits for them
// (asc-devkit impl/basic_api/kernel_tpipe_impl.h, TPipe::Init and DestroyWithoutPipeAll, __NPU_ARCH__
// 2201). A core's role is known once the kernel declares its type: KERNEL_TASK_TYPE_DEFAULT calls this
// again (cube.h) for a pipe constructed before it.
XBEMU_RT void reserve_cube_ids() {
    EventPool* p = event_pool();
    const State& s = st();
    const bool aic = s.role == ROLE_AIC || (s.role == ROLE_ANY && s.kernel_type >= 0 &&
                                            s.kernel_type != KERNEL_TYPE_AIV_ONLY &&
                                            s.kernel_type != KERNEL_TYPE_MIX_AIV_1_0);
    if (!p || p->cube_ids || !aic) return;
    p->cube_ids = true;
    for (int i = 0; i < 3; i++)
        pool_take("TPipe::TPipe", 3, ID_PIPE, "TPipe (an AIC's pipe holds M_MTE1 ids 0-2 for the whole kernel)");
}

}  // namespace xbemu
