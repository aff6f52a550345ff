// xblock's clean-room model of the AscendC sort family on Atlas A2 (910B): Sort32, MrgSort (both
// forms), Sort<T, isFullSort>, Concat, Extract, GetSortOffset, GetSortLen, with MrgSort4Info and
// MrgSortSrcList. Written from the facts in shared/ascendc/REFERENCE.md and the dev kit's API docs
// (names, parameter types, units, constraints); no CANN header, library or sample code is used.
//
// The data are (score, index) pairs of 8 bytes ("排布方式一" of A2): the score in the low bytes (a float
// takes 4, a half 2 followed by 2 reserved bytes) and the uint32 index in the high 4. Sort32 sorts
// each group of 32 scores (with their indices) in descending order; MrgSort merges up to 4 sorted
// lists into one, in descending order; both are stable: of two equal scores, the one at the lower
// position (in the concatenation of the lists) comes first (Sort32.md, MrgSort.md: "score[i] ==
// score[j], i > j: score[j] first"), so -0.0 and 0.0, which compare equal, keep their order.
// The order the hardware gives NaN scores is not documented: the model refuses them.
// Sort<T, true> is Sort32 then merges of the groups, through `tmp`, into one descending list; on A2
// Concat is the identity (`concat` becomes `src`) and Extract splits pairs into scores and indices.
#pragma once

#include "kernel_operator.h"

namespace AscendC {

constexpr int32_t MRG_SORT_ELEMENT_LEN = 4;

struct MrgSort4Info {
    MrgSort4Info() {}
    MrgSort4Info(const uint16_t elementLengthsIn[MRG_SORT_ELEMENT_LEN], const bool ifExhaustedSuspensionIn,
                 const uint16_t validBitIn, const uint16_t repeatTimesIn)
        : ifExhaustedSuspension(ifExhaustedSuspensionIn), validBit(validBitIn),
          repeatTimes(static_cast<uint8_t>(repeatTimesIn)) {
        for (int32_t i = 0; i < MRG_SORT_ELEMENT_LEN; i++) elementLengths[i] = elementLengthsIn[i];
    }
    uint16_t elementLengths[MRG_SORT_ELEMENT_LEN] = {0, 0, 0, 0};
    bool ifExhaustedSuspension = false;
    uint16_t validBit = 0;
    uint8_t repeatTimes = 1;
};

template <typename T>
struct MrgSortSrcList {
    MrgSortSrcList() {}
    MrgSortSrcList(const LocalTensor<T>& src1In, const LocalTensor<T>& src2In, const LocalTensor<T>& src3In,
                   const LocalTensor<T>& src4In)
        : src1(src1In), src2(src2In), src3(src3In), src4(src4In) {}
    LocalTensor<T> src1;
    LocalTensor<T> src2;
    LocalTensor<T> src3;
    LocalTensor<T> src4;
};

namespace detail {

// Elements of T per 8-byte pair.
template <typename T>
constexpr uint32_t pair_elems() { return 8 / sizeof(T); }

template <typename T>
inline void sort_types(const char* api) {
    (void)api;
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                  "the sort APIs take half and float scores only");
}

XBEMU_RT void sort_repeat(const char* api, int32_t repeatTime, int32_t lo = 0) {
    if (repeatTime < lo || repeatTime > 255)
        xbemu::fail(api, "repeatTime " + std::to_string(repeatTime) + " outside " + std::to_string(lo) + "..255");
}

XBEMU_RT void sort_align(const char* api, const char* what, const void* p, uint64_t bytes) {
    if (xbemu::ub_off(p) % bytes)
        xbemu::fail(api, std::string(what) + " at " + xbemu::hexaddr(xbemu::ub_off(p)) + " is not " +
                             std::to_string(bytes) + "-byte aligned");
}

template <typename T>
inline void write_pair(T* pairs, uint64_t i, T score, uint32_t index) {
    uint8_t* b = reinterpret_cast<uint8_t*>(pairs) + 8 * i;
    std::memcpy(b, &score, sizeof(T));
    if (sizeof(T) == 2) std::memset(b + 2, 0, 2);  // reserved
    std::memcpy(b + 4, &index, 4);
}

XBEMU_RT void no_nan(const char* api, float s) {
    if (std::isnan(s))
        xbemu::fail(api, "a NaN score: the order the hardware gives NaN is not documented (Sort32.md, "
                         "MrgSort.md), so the model does not guess it");
}

// Stable descending order of `items` (scores with their pairs' bytes) by score.
template <typename T>
inline void stable_descending(const char* api, std::vector<std::pair<T, uint32_t>>& items) {
    for (const auto& it : items) no_nan(api, tof(it.first));
    std::stable_sort(items.begin(), items.end(),
                     [](const std::pair<T, uint32_t>& a, const std::pair<T, uint32_t>& b) {
                         return tof(a.first) > tof(b.first);
                     });
}

template <typename T>
inline std::vector<std::pair<T, uint32_t>> read_pairs(const LocalTensor<T>& t, uint64_t n) {
    std::vector<std::pair<T, uint32_t>> out(n);
    for (uint64_t i = 0; i < n; i++) {
        const uint8_t* b = reinterpret_cast<const uint8_t*>(t.ptr_) + 8 * i;
        std::memcpy(&out[i].first, b, sizeof(T));
        std::memcpy(&out[i].second, b + 4, 4);
    }
    return out;
}

template <typename T>
inline void write_pairs(const LocalTensor<T>& t, const std::vector<std::pair<T, uint32_t>>& items) {
    for (uint64_t i = 0; i < items.size(); i++) write_pair(t.ptr_, i, items[i].first, items[i].second);
}

XBEMU_RT bool overlap(const void* a, uint64_t an, const void* b, uint64_t bn) {
    const uint8_t *x = static_cast<const uint8_t*>(a), *y = static_cast<const uint8_t*>(b);
    return x < y + bn && y < x + an;
}

// The merge of MrgSort: `lists` sorted descending, merged stably (list q before list q + 1 on ties);
// with `exhausted`, it stops when one list runs out. `taken[q]`: the pairs consumed from list q.
template <typename T>
inline std::vector<std::pair<T, uint32_t>> merge_lists(const char* api,
                                                       std::vector<std::vector<std::pair<T, uint32_t>>>& lists,
                                                       bool exhausted, uint32_t taken[4]) {
    std::vector<std::pair<T, uint32_t>> out;
    std::vector<size_t> at(lists.size(), 0);
    for (auto& l : lists)
        for (size_t i = 0; i < l.size(); i++) {
            no_nan(api, tof(l[i].first));
            if (i && tof(l[i].first) > tof(l[i - 1].first))
                xbemu::fail(api, "a source list is not sorted in descending order (MrgSort merges lists that "
                                 "Sort32 or an earlier MrgSort sorted)");
        }
    while (true) {
        int best = -1;
        bool ran_out = false;
        for (size_t q = 0; q < lists.size(); q++) {
            if (at[q] == lists[q].size()) {
                ran_out = true;
                continue;
            }
            if (best < 0 || tof(lists[q][at[q]].first) > tof(lists[best][at[best]].first)) best = int(q);
        }
        if (best < 0 || (exhausted && ran_out)) break;
        out.push_back(lists[best][at[best]++]);
    }
    for (size_t q = 0; q < 4; q++) taken[q] = q < lists.size() ? static_cast<uint32_t>(at[q]) : 0;
    return out;
}

template <typename T>
inline void mrg_sort(const char* api, const LocalTensor<T>& dst, const MrgSortSrcList<T>& src,
                     const uint16_t lens[4], uint32_t sortedNum[4], uint16_t validBit, int32_t repeatTime,
                     bool exhausted) {
    sort_types<T>(api);
    if (validBit != 3 && validBit != 7 && validBit != 15)
        xbemu::fail(api, "validBit " + std::to_string(validBit) + " is not 0b11, 0b111 or 0b1111");
    sort_repeat(api, repeatTime, 1);
    const int nq = validBit == 3 ? 2 : validBit == 7 ? 3 : 4;
    const LocalTensor<T>* q[4] = {&src.src1, &src.src2, &src.src3, &src.src4};
    for (int i = 0; i < nq; i++)
        if (lens[i] > 4095) xbemu::fail(api, "list length " + std::to_string(lens[i]) + " outside 0..4095");
    if (repeatTime > 1) {  // the repeat form: 4 equal lists stored one after another, not exhausted mode
        bool ok = nq == 4 && !exhausted;
        for (int i = 1; ok && i < 4; i++)
            ok = lens[i] == lens[0] && q[i]->ptr_ == q[0]->ptr_ + uint64_t(i) * lens[0] * pair_elems<T>();
        if (!ok)
            xbemu::fail(api, "repeatTime > 1 needs 4 lists of one length stored one after another, validBit "
                             "0b1111 and no exhausted suspension");
    }
    sort_align(api, "dst", dst.ptr_, 32);
    uint64_t total = 0;
    for (int i = 0; i < nq; i++) {
        q[i]->live(api);
        sort_align(api, "a source list", q[i]->ptr_, 8);
        total += lens[i];
    }
    const uint64_t pe = pair_elems<T>();
    for (int32_t r = 0; r < repeatTime; r++) {
        std::vector<std::vector<std::pair<T, uint32_t>>> lists;
        for (int i = 0; i < nq; i++) {
            LocalTensor<T> l = (*q[i])[static_cast<uint32_t>(r * total * pe)];
            touch(api, l, xbemu::P_V, false, lens[i] * pe, false);
            lists.push_back(read_pairs(l, lens[i]));
        }
        LocalTensor<T> d = dst[static_cast<uint32_t>(r * total * pe)];
        for (int i = 0; i < nq; i++)
            if (overlap(d.ptr_, total * 8, (*q[i])[static_cast<uint32_t>(r * total * pe)].ptr_, lens[i] * 8ull))
                xbemu::fail(api, "the destination overlaps a source list");
        uint32_t taken[4];
        auto merged = merge_lists(api, lists, exhausted, taken);
        touch(api, d, xbemu::P_V, true, merged.size() * pe, false);
        write_pairs(d, merged);
        if (sortedNum)
            for (int i = 0; i < 4; i++) sortedNum[i] = taken[i];
    }
    xbemu::vec_count(uint64_t(repeatTime) * total * 8);
}

}  // namespace detail

// Sort32: each of `repeatTime` groups of 32 scores (src0) and indices (src1) sorted, descending and
// stable, into 32 pairs at dst. src0 advances 32 elements, src1 128 bytes and dst 256 bytes a repeat;
// src0 128-byte (float) / 64-byte (half) aligned, src1 128-byte, dst 256-byte; repeatTime 0 is a NOP.
template <typename T>
inline void Sort32(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<uint32_t>& src1,
                   const int32_t repeatTime) {
    const char* api = "Sort32";
    detail::sort_types<T>(api);
    detail::sort_repeat(api, repeatTime);
    if (repeatTime == 0) return;
    detail::sort_align(api, "src0", src0.ptr_, 32 * sizeof(T));
    detail::sort_align(api, "src1", src1.ptr_, 128);
    detail::sort_align(api, "dst", dst.ptr_, 256);
    const uint64_t n = uint64_t(repeatTime) * 32;
    detail::touch(api, src0, xbemu::P_V, false, n);
    detail::touch(api, src1, xbemu::P_V, false, n);
    if (detail::overlap(dst.ptr_, n * 8, src0.ptr_, n * sizeof(T)) || detail::overlap(dst.ptr_, n * 8, src1.ptr_, n * 4))
        xbemu::fail(api, "dst overlaps a source");
    std::vector<std::pair<T, uint32_t>> all;
    for (int32_t r = 0; r < repeatTime; r++) {
        std::vector<std::pair<T, uint32_t>> g(32);
        for (int i = 0; i < 32; i++) g[i] = {src0.ptr_[r * 32 + i], src1.ptr_[r * 32 + i]};
        detail::stable_descending(api, g);
        all.insert(all.end(), g.begin(), g.end());
    }
    detail::touch(api, dst, xbemu::P_V, true, n * detail::pair_elems<T>());
    detail::write_pairs(dst, all);
    xbemu::vec_count(n * 8);
}

// MrgSort (basic form): the first 2, 3 or 4 lists of `src` (validBit 0b11/0b111/0b1111), of
// params.elementLengths pairs each (0..4095), merged into one descending list at dst.
template <typename T>
inline void MrgSort(const LocalTensor<T>& dst, const MrgSortSrcList<T>& src, const MrgSort4Info& params) {
    detail::mrg_sort("MrgSort", dst, src, params.elementLengths, nullptr, params.validBit, params.repeatTimes,
                     params.ifExhaustedSuspension);
}

// MrgSort (the form Sort's docs pair it with): `sortedNum` gets the pairs taken from each list.
template <typename T, bool isExhaustedSuspension = false>
inline void MrgSort(const LocalTensor<T>& dst, const MrgSortSrcList<T>& sortList, const uint16_t elementCountList[4],
                    uint32_t sortedNum[4], uint16_t validBit, const int32_t repeatTime) {
    detail::mrg_sort("MrgSort", dst, sortList, elementCountList, sortedNum, validBit, repeatTime,
                     isExhaustedSuspension);
}

// Concat: on A2 the scores need no preparation; `concat` becomes `src` (tmp is not used).
template <typename T>
inline void Concat(LocalTensor<T>& concat, const LocalTensor<T>& src, const LocalTensor<T>& tmp,
                   const int32_t repeatTime) {
    detail::sort_types<T>("Concat");
    detail::sort_repeat("Concat", repeatTime);
    (void)tmp;
    src.live("Concat");
    concat = src;
}

// Sort: Sort32 over `repeatTime` groups of 32; with isFullSort, the groups then merged (4 lists at a
// time, through `tmp`, which holds as many pairs as dst) into one descending, stable list of
// 32 * repeatTime pairs at dst. dst and tmp: 8 bytes a pair.
template <typename T, bool isFullSort>
inline void Sort(const LocalTensor<T>& dst, const LocalTensor<T>& concat, const LocalTensor<uint32_t>& index,
                 LocalTensor<T>& tmp, const int32_t repeatTime) {
    const char* api = "Sort";
    detail::sort_types<T>(api);
    detail::sort_repeat(api, repeatTime);
    Sort32(dst, concat, index, repeatTime);
    if (!isFullSort || repeatTime <= 1) return;
    const uint64_t n = uint64_t(repeatTime) * 32, pe = detail::pair_elems<T>();
    detail::sort_align(api, "tmp", tmp.ptr_, 32);
    if (detail::overlap(tmp.ptr_, n * 8, dst.ptr_, n * 8)) xbemu::fail(api, "tmp overlaps dst");
    detail::touch(api, tmp, xbemu::P_V, true, n * pe);  // the merge passes go through tmp
    std::vector<std::pair<T, uint32_t>> all = detail::read_pairs(dst, n);
    uint32_t run = 32;
    while (run < n) {  // one MrgSort per pass of 4-list merges (the last lists of a pass may be fewer)
        for (uint64_t lo = 0; lo < n; lo += 4ull * run) {
            std::vector<std::vector<std::pair<T, uint32_t>>> lists;
            for (uint64_t s = lo; s < n && s < lo + 4ull * run; s += run)
                lists.emplace_back(all.begin() + s, all.begin() + std::min<uint64_t>(s + run, n));
            uint32_t taken[4];
            auto merged = detail::merge_lists(api, lists, false, taken);
            std::copy(merged.begin(), merged.end(), all.begin() + lo);
        }
        xbemu::vec_count(n * 8);
        run *= 4;
    }
    detail::touch(api, dst, xbemu::P_V, true, n * pe);
    detail::write_pairs(dst, all);
    detail::write_pairs(tmp, all);
}

// Extract: the scores and the indices of 32 * repeatTime pairs of `sorted`, one after another.
template <typename T>
inline void Extract(const LocalTensor<T>& dstValue, const LocalTensor<uint32_t>& dstIndex,
                    const LocalTensor<T>& sorted, const int32_t repeatTime) {
    const char* api = "Extract";
    detail::sort_types<T>(api);
    detail::sort_repeat(api, repeatTime);
    if (repeatTime == 0) return;
    const uint64_t n = uint64_t(repeatTime) * 32;
    detail::touch(api, sorted, xbemu::P_V, false, n * detail::pair_elems<T>());
    auto pairs = detail::read_pairs(sorted, n);
    detail::touch(api, dstValue, xbemu::P_V, true, n);
    detail::touch(api, dstIndex, xbemu::P_V, true, n);
    for (uint64_t i = 0; i < n; i++) {
        dstValue.ptr_[i] = pairs[i].first;
        dstIndex.ptr_[i] = pairs[i].second;
    }
    xbemu::vec_count(n * 8);
    xbemu::vec_count(n * 8);
}

// The offset (in elements of T) of pair `elemOffset` of a sorted list, and the length of `elemCount`
// pairs: 8 bytes a pair.
template <typename T>
inline uint32_t GetSortOffset(const uint32_t elemOffset) {
    detail::sort_types<T>("GetSortOffset");
    return elemOffset * detail::pair_elems<T>();
}
template <typename T>
inline uint32_t GetSortLen(const uint32_t elemCount) {
    detail::sort_types<T>("GetSortLen");
    return elemCount * detail::pair_elems<T>();
}

}  // namespace AscendC
