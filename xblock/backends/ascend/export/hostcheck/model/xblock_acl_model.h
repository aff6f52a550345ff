// xblock's model of what runs behind an exported main.cpp without an NPU: the ACL runtime calls
// (acl_model.cpp) and the launch functions CANN would generate, which here run the kernel's blocks
// one after another on xblock's AscendC CPU model (emu_launch.h).
//
// Included after kernel.cpp, where an NPU build hides the host C/C++ library (kernel_operator.h),
// so this header uses none of it: messages are printed by acl_model.cpp.
#pragma once

#include "acl/acl_base.h"

namespace xbacl {

// The aclrtMalloc buffer that holds p (its start and size); false when p is not device memory.
bool find_allocation(const void* p, uint8_t** base, uint64_t* bytes);
// Whether the launch may run now: ACL initialised, a device set, a live stream from
// aclrtCreateStream, numBlocks > 0 (else it prints why). On success the stream has work pending
// until aclrtSynchronizeStream.
bool begin_launch(const char* kernel, aclrtStream stream, uint32_t numBlocks);
void report_not_device(const char* kernel, const char* argument, const void* p);
void report_stopped(const char* kernel, const char* message);

#ifdef XBEMU_KERNEL_OPERATOR_H  // with the AscendC model (the launch functions' translation units)
// Runs `body` (the kernel call) over numBlocks blocks; the GM regions the model checks accesses
// against are the whole device buffers that the first `count` pointers point into. Returns 0 on
// success, as the generated launch function does, else 1 (and prints why).
template <int N, typename F>
uint32_t run_blocks(const char* kernel, uint32_t numBlocks, aclrtStream stream, void* const (&buffers)[N],
                    const char* const (&names)[N], int count, const uint32_t* soc, F body) {
    if (!begin_launch(kernel, stream, numBlocks)) return 1;
    uint8_t* bases[N] = {};
    uint64_t sizes[N] = {};
    for (int i = 0; i < count; i++) {
        if (!find_allocation(buffers[i], &bases[i], &sizes[i])) {
            report_not_device(kernel, names[i], buffers[i]);
            return 1;
        }
    }
    char err[4096] = {0};
    uint64_t counters[6] = {0};
    if (xbemu::run(numBlocks, bases, sizes, names, count, soc, err, static_cast<int>(sizeof err), counters, body) != 0) {
        report_stopped(kernel, err);
        return 1;
    }
    return 0;
}
#endif

}  // namespace xbacl
