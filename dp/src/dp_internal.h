/* dp_internal.h — dp's private helpers: the message formatter and the context layout. */
#ifndef DP_INTERNAL_H
#define DP_INTERNAL_H

#include "dp/dp.h"

#include <stdarg.h>

/** Formats into buf (always NUL-terminated when cap > 0, truncated if needed). The library has
 *  no stdio, so this supports only what dp's messages use: %s %d %u %llu %% and %f (a double
 *  with at most 4 decimals, trailing zeros dropped). Returns the length written. */
size_t dp_fmt(char *buf, size_t cap, const char *fmt, ...);
size_t dp_vfmt(char *buf, size_t cap, const char *fmt, va_list ap);

#define DP_MSG_CAP 320u

typedef enum dp_phase { DP_PHASE_REGISTER = 0, DP_PHASE_READY, DP_PHASE_STEP } dp_phase;

struct dp_ctx {
    ncl_comm *comm;
    int rank, size;
    dp_config cfg;
    size_t esize;
    dp_phase phase;

    dp_tensor *tensors; /* cfg.max_tensors, allocated at create */
    uint32_t ntensors;

    /* The strategy, copied (arrays included) by dp_set_fusion. */
    dp_fusion fusion;
    uint32_t fusion_index[DP_MAX_SEGMENTS];
    double fusion_percent[DP_MAX_SEGMENTS];

    dp_bucket *buckets; /* planned at prepare: at most ntensors */
    uint32_t nbuckets;
    unsigned char *buffer; /* the bucket buffer */
    uint64_t buffer_bytes;

    /* A running step: the bucket whose allreduce is in flight (nbuckets: none). */
    uint32_t cur;
    int running; /* an allreduce of bucket cur was started and not yet seen finished */

    char msg[DP_MSG_CAP];
};

/** Records a message in ctx->msg and returns r. */
dp_result dp_fail(dp_ctx *ctx, dp_result r, const char *fmt, ...);

#endif
