/* rs_memprobe.h — single-thread memcpy bandwidth: the physical limit of the host backend. */
#ifndef RS_MEMPROBE_H
#define RS_MEMPROBE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rs_memprobe rs_memprobe;

/** A probe for copies of up to max_bytes; its buffers are allocated (and warmed) on first use. */
rs_memprobe *rs_memprobe_create(size_t max_bytes);
void rs_memprobe_destroy(rs_memprobe *probe);

/** Best-of-several memcpy bandwidth for `bytes` (<= max_bytes), decimal GB/s; -1 when the
 *  buffers cannot be allocated. Small sizes repeat the copy so each measurement lasts long
 *  enough for the clock. */
double rs_memprobe_gbps(rs_memprobe *probe, size_t bytes);

#ifdef __cplusplus
}
#endif
#endif
