// Minimal declarations of the ACL base types, for xblock's host check of exported projects.
//
// Written by xblock from the documented API (CANN runtime docs: aclError, aclrtStream and the
// return code ACL_SUCCESS); it is not CANN's header and declares only what an exported main.cpp
// and the generated launch header use. Building for an NPU uses the toolkit's own headers.
#ifndef XBLOCK_HOSTCHECK_ACL_BASE_H
#define XBLOCK_HOSTCHECK_ACL_BASE_H

#include <stddef.h>
#include <stdint.h>

typedef int aclError;       // a return code: ACL_SUCCESS or an error number
typedef void* aclrtStream;  // an opaque stream handle

static const int ACL_SUCCESS = 0;

#endif  // XBLOCK_HOSTCHECK_ACL_BASE_H
