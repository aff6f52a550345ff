// Minimal declarations of the ACL runtime calls an exported main.cpp makes (xblock's host check).
//
// Signatures and enumerator values follow the CANN runtime API reference (device, stream and
// memory management chapters, and the aclrtMemMallocPolicy / aclrtMemcpyKind enumerations); the
// text is xblock's. Enumerations list only their leading members, with the documented values.
#ifndef XBLOCK_HOSTCHECK_ACL_RT_H
#define XBLOCK_HOSTCHECK_ACL_RT_H

#include "acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum aclrtMemMallocPolicy {
    ACL_MEM_MALLOC_HUGE_FIRST = 0,  // huge pages when available, else normal pages
    ACL_MEM_MALLOC_HUGE_ONLY = 1,
    ACL_MEM_MALLOC_NORMAL_ONLY = 2
} aclrtMemMallocPolicy;

typedef enum aclrtMemcpyKind {
    ACL_MEMCPY_HOST_TO_HOST = 0,
    ACL_MEMCPY_HOST_TO_DEVICE = 1,
    ACL_MEMCPY_DEVICE_TO_HOST = 2,
    ACL_MEMCPY_DEVICE_TO_DEVICE = 3
} aclrtMemcpyKind;

aclError aclrtSetDevice(int32_t deviceId);
aclError aclrtResetDevice(int32_t deviceId);
aclError aclrtCreateStream(aclrtStream* stream);
aclError aclrtDestroyStream(aclrtStream stream);
aclError aclrtSynchronizeStream(aclrtStream stream);
aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtFree(void* devPtr);
aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind);

#ifdef __cplusplus
}
#endif

#endif  // XBLOCK_HOSTCHECK_ACL_RT_H
