// xblock's model of the ACL runtime calls an exported main.cpp makes, for running the project on
// the AscendC CPU model. Device memory is host memory tracked by address; a stream is a handle.
// Every call checks what the runtime documentation asks of its caller (aclInit first, a device
// set, pointers aclrtMalloc returned, copies that fit their destination and go the stated way)
// and also what only a real device would reveal: reading results back, or freeing a buffer,
// while a launched kernel may still run (no aclrtSynchronizeStream in between).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

#include "acl/acl.h"
#include "xblock_acl_model.h"

namespace {

// documented return codes (CANN runtime API reference, aclError)
const aclError kInvalidParam = 100000;   // ACL_ERROR_INVALID_PARAM
const aclError kUninitialized = 100001;  // ACL_ERROR_UNINITIALIZE
const aclError kRepeatInit = 100002;     // ACL_ERROR_REPEAT_INITIALIZE

struct Runtime {
    bool initialized = false;
    int32_t device = -1;
    std::map<const uint8_t*, size_t> allocations;  // start -> bytes
    std::set<aclrtStream> streams;
    std::set<aclrtStream> pending;  // streams with a launch not yet synchronised
};

Runtime& rt() {
    static Runtime r;
    return r;
}

aclError fail(const char* api, aclError code, const char* why) {
    std::fprintf(stderr, "%s (xblock ACL model): %s\n", api, why);
    return code;
}

aclError ready(const char* api) {
    if (!rt().initialized) return fail(api, kUninitialized, "called before aclInit");
    if (rt().device < 0) return fail(api, kInvalidParam, "no device set (aclrtSetDevice)");
    return ACL_SUCCESS;
}

// The allocation whose bytes include [p, p + n) (with n = 0: the byte at p), or allocations.end().
std::map<const uint8_t*, size_t>::iterator holding(const void* p, size_t n) {
    auto& all = rt().allocations;
    const uint8_t* q = static_cast<const uint8_t*>(p);
    auto it = all.upper_bound(q);
    if (it == all.begin()) return all.end();
    --it;
    const size_t offset = static_cast<size_t>(q - it->first);
    if (offset >= it->second || n > it->second - offset) return all.end();
    return it;
}

bool is_device(const void* p) { return holding(p, 0) != rt().allocations.end(); }

}  // namespace

namespace xbacl {

bool find_allocation(const void* p, uint8_t** base, uint64_t* bytes) {
    auto it = holding(p, 0);
    if (it == rt().allocations.end()) return false;
    *base = const_cast<uint8_t*>(it->first);
    *bytes = it->second;
    return true;
}

bool begin_launch(const char* kernel, aclrtStream stream, uint32_t numBlocks) {
    if (ready("aclrtlaunch") != ACL_SUCCESS) return false;
    if (!rt().streams.count(stream)) {
        std::fprintf(stderr, "aclrtlaunch_%s: the stream is not one aclrtCreateStream returned\n", kernel);
        return false;
    }
    if (numBlocks == 0) {
        std::fprintf(stderr, "aclrtlaunch_%s: numBlocks is 0\n", kernel);
        return false;
    }
    rt().pending.insert(stream);
    return true;
}

void report_not_device(const char* kernel, const char* argument, const void* p) {
    std::fprintf(stderr, "aclrtlaunch_%s: argument %s (%p) is not device memory from aclrtMalloc\n", kernel, argument,
                 p);
}

void report_stopped(const char* kernel, const char* message) {
    std::fprintf(stderr, "aclrtlaunch_%s: the AscendC model stopped the kernel: %s\n", kernel, message);
}

}  // namespace xbacl

extern "C" {

aclError aclInit(const char* configPath) {
    (void)configPath;
    if (rt().initialized) return fail("aclInit", kRepeatInit, "called twice");
    rt().initialized = true;
    return ACL_SUCCESS;
}

aclError aclFinalize(void) {
    if (!rt().initialized) return fail("aclFinalize", kUninitialized, "called before aclInit");
    if (!rt().allocations.empty() || !rt().streams.empty())
        std::fprintf(stderr, "aclFinalize (xblock ACL model): %zu device buffers and %zu streams never released\n",
                     rt().allocations.size(), rt().streams.size());
    rt().initialized = false;
    return ACL_SUCCESS;
}

aclError aclrtSetDevice(int32_t deviceId) {
    if (!rt().initialized) return fail("aclrtSetDevice", kUninitialized, "called before aclInit");
    if (deviceId != 0) return fail("aclrtSetDevice", kInvalidParam, "the model has one device, id 0");
    rt().device = deviceId;
    return ACL_SUCCESS;
}

aclError aclrtResetDevice(int32_t deviceId) {
    if (deviceId != rt().device) return fail("aclrtResetDevice", kInvalidParam, "not the device that was set");
    rt().device = -1;
    return ACL_SUCCESS;
}

aclError aclrtCreateStream(aclrtStream* stream) {
    if (aclError e = ready("aclrtCreateStream")) return e;
    if (stream == nullptr) return fail("aclrtCreateStream", kInvalidParam, "stream is a null pointer");
    *stream = new char(0);
    rt().streams.insert(*stream);
    return ACL_SUCCESS;
}

aclError aclrtDestroyStream(aclrtStream stream) {
    if (!rt().streams.erase(stream)) return fail("aclrtDestroyStream", kInvalidParam, "unknown stream");
    rt().pending.erase(stream);
    delete static_cast<char*>(stream);
    return ACL_SUCCESS;
}

aclError aclrtSynchronizeStream(aclrtStream stream) {
    if (aclError e = ready("aclrtSynchronizeStream")) return e;
    if (!rt().streams.count(stream)) return fail("aclrtSynchronizeStream", kInvalidParam, "unknown stream");
    rt().pending.erase(stream);  // the model ran the kernel during the launch call
    return ACL_SUCCESS;
}

aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy) {
    if (aclError e = ready("aclrtMalloc")) return e;
    if (devPtr == nullptr || size == 0) return fail("aclrtMalloc", kInvalidParam, "null devPtr or size 0");
    if (policy != ACL_MEM_MALLOC_HUGE_FIRST && policy != ACL_MEM_MALLOC_HUGE_ONLY &&
        policy != ACL_MEM_MALLOC_NORMAL_ONLY)
        return fail("aclrtMalloc", kInvalidParam, "unknown policy");
    void* p = std::aligned_alloc(64, (size + 63) / 64 * 64);  // documented: 64-byte aligned
    if (p == nullptr) return fail("aclrtMalloc", kInvalidParam, "out of host memory");
    std::memset(p, 0xA5, size);  // device memory is not zeroed
    rt().allocations[static_cast<const uint8_t*>(p)] = size;
    *devPtr = p;
    return ACL_SUCCESS;
}

aclError aclrtFree(void* devPtr) {
    auto it = rt().allocations.find(static_cast<const uint8_t*>(devPtr));
    if (it == rt().allocations.end()) return fail("aclrtFree", kInvalidParam, "not a pointer aclrtMalloc returned");
    if (!rt().pending.empty())
        return fail("aclrtFree", kInvalidParam, "a launched kernel may still use it: aclrtSynchronizeStream first");
    rt().allocations.erase(it);
    std::free(devPtr);
    return ACL_SUCCESS;
}

aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind) {
    if (aclError e = ready("aclrtMemcpy")) return e;
    if (dst == nullptr || src == nullptr) return fail("aclrtMemcpy", kInvalidParam, "null pointer");
    if (count > destMax) return fail("aclrtMemcpy", kInvalidParam, "count is larger than destMax");
    const bool dst_dev = kind == ACL_MEMCPY_HOST_TO_DEVICE || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
    const bool src_dev = kind == ACL_MEMCPY_DEVICE_TO_HOST || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
    if (kind != ACL_MEMCPY_HOST_TO_HOST && !dst_dev && !src_dev)
        return fail("aclrtMemcpy", kInvalidParam, "unknown copy kind");
    if (dst_dev ? holding(dst, count) == rt().allocations.end() : is_device(dst))
        return fail("aclrtMemcpy", kInvalidParam, dst_dev ? "dst + count is not inside one device buffer"
                                                          : "dst is device memory but the kind says host");
    if (src_dev ? holding(src, count) == rt().allocations.end() : is_device(src))
        return fail("aclrtMemcpy", kInvalidParam, src_dev ? "src + count is not inside one device buffer"
                                                          : "src is device memory but the kind says host");
    if ((dst_dev || src_dev) && !rt().pending.empty())
        return fail("aclrtMemcpy", kInvalidParam,
                    "device memory copied while a launched kernel may still run: aclrtSynchronizeStream first");
    std::memmove(dst, src, count);
    return ACL_SUCCESS;
}

}  // extern "C"
