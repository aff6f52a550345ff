// Minimal ACL umbrella header for xblock's host check: process-wide initialisation plus the
// runtime calls of acl_rt.h. Declarations written from the CANN runtime API reference.
#ifndef XBLOCK_HOSTCHECK_ACL_H
#define XBLOCK_HOSTCHECK_ACL_H

#include "acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

aclError aclInit(const char* configPath);  // nullptr: no configuration file
aclError aclFinalize(void);

#ifdef __cplusplus
}
#endif

#endif  // XBLOCK_HOSTCHECK_ACL_H
