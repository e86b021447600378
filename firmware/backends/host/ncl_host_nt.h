/* ncl_host_nt.h — the host backend's streaming stores: a reduce into memory nothing reads soon, written past the cache. */
#ifndef NCL_HOST_NT_H
#define NCL_HOST_NT_H

#include <stdint.h>

#include "ncl/ncl.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A store to a line that is not in the cache first reads the line (write-allocate): reducing into
 * a buffer nobody read lately moves its bytes twice. Streaming (non-temporal) stores write whole
 * lines without reading them, and leave them out of the cache. They need SIMD intrinsics, which
 * the portable kernels (firmware/src, built for boards too) must not use: this file is the host
 * backend's only. x86-64 (and 32-bit x86 with SSE2 arithmetic) streams fp32 and fp64 sum, prod,
 * max, min (avg as sum); everything else, every other build, and the part of a range off a 64-byte
 * line (its head and tail) run the portable kernel.
 *
 * The values are the portable kernel's: the same operation on the same operands, lane by lane
 * (max/min as its selects). One thing C leaves to the compiler differs: the payload of a NaN that
 * a sum or product of two NaNs returns (x86 returns its first operand's, and which operand comes
 * first is the compiler's choice; the portable kernel's own vector loop and scalar tail need not
 * agree). A NaN stays a NaN.
 *
 * A call that streamed anything ends with a store fence: its bytes are visible to any thread that
 * sees something (a notify) this thread writes after the call.
 */

/** 1 when this build streams (x86 with SSE2), 0 when ncl_host_nt_reduce3 only runs the portable kernel. */
int ncl_host_nt_available(void);

/** dst[i] = a[i] op b[i] for i < count (ncl_reduce3_kernel's result), with streaming stores for the
 *  whole 64-byte lines of dst where the dtype and op have a streaming loop. dst must not overlap a
 *  or b; every pointer on its element's alignment. Returns the bytes streamed (0: the portable
 *  kernel did it all). */
uint64_t ncl_host_nt_reduce3(void *dst, const void *a, const void *b, uint64_t count, ncl_dtype dtype, ncl_op op);

#ifdef __cplusplus
}
#endif
#endif
