/* ncl_hal.h — the hardware abstraction: one ops table per backend, reached through thin wrappers. */
#ifndef NCL_HAL_H
#define NCL_HAL_H

#include "ncl_sched.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What a backend offers one rank. */
typedef struct ncl_hal_caps {
    uint64_t scratch_bytes; /**< size of NCL_BUF_SCRATCH on every rank */
    uint32_t max_queues;    /**< queues the backend runs concurrently (>= 1) */
    uint32_t buf_align;     /**< required alignment of send/recv buffers in bytes (1 = none) */
    /** The DMA's inline reduce (WRITE_REDUCE): per dtype, bit (1 << op) for each op it reduces
     *  inline (NCL_SUM..NCL_MIN; avg reduces as sum). Where a bit is missing the engine writes to
     *  the peer's scratch and the peer reduces with LOCAL_REDUCE, or picks an algorithm that does. */
    uint16_t inline_ops[NCL_DTYPE_COUNT];
    /** Inline reduce also needs the source and destination offsets and the length to be multiples
     *  of this many bytes (0 or 1: any); tasks that are not take the scratch path. */
    uint32_t inline_align;
    /** NCL_HAL_FEAT_* bits: optional task kinds the backend runs. A communicator that needs one
     *  the backend leaves out fails at creation with NCL_ERR_UNSUPPORTED. */
    uint32_t features;
    /** DMA tasks (writes, copies, reduces) the device runs at once; 0: as many as max_queues.
     *  Helper queues that would only queue behind the data channels' DMA are left out. */
    uint32_t dma_engines;
    /** Data tasks one queue may have outstanding at once (0 or 1: one; the engine uses at most
     *  NCL_MAX_IN_FLIGHT). Completions are reported in submission order (dma_poll). */
    uint32_t queue_depth;
} ncl_hal_caps;

/** The backend runs LOCAL_WIDEN, LOCAL_REDUCE_WIDE and LOCAL_NARROW (ncl_config.wide_accumulation). */
#define NCL_HAL_FEAT_WIDE 1u
/** Peers may write a rank's scratch at any time, between and across collectives (not only while
 *  it runs the same one), and every notify id below NCL_NOTIFY_IDS reaches every peer: what
 *  landing zones need (ncl_config.landing_zone_bytes). */
#define NCL_HAL_FEAT_ZONES 2u
/** The DMA runs REDUCE_WRITE and REDUCE_WRITE_REDUCE for every dtype and op it reduces inline
 *  (inline_ops, inline_align): it reads two local sources and reduces them on the way out. */
#define NCL_HAL_FEAT_REDUCE_WRITE 4u

/** Every op inline: the inline_ops entry of a DMA that reduces a dtype with any op. */
#define NCL_INLINE_ALL_OPS ((uint16_t)((1u << NCL_SUM) | (1u << NCL_PROD) | (1u << NCL_MAX) | (1u << NCL_MIN)))

/** The collective about to run on this rank. */
typedef struct ncl_hal_launch {
    uint64_t seq;      /**< per-communicator sequence number, 1 for the first collective */
    uint8_t coll;      /**< ncl_coll */
    const void *send;  /**< local send buffer (may be NULL) */
    void *recv;        /**< local receive buffer (may be NULL on reduce non-roots) */
    uint64_t send_bytes, recv_bytes;
    /** The largest recv buffer any rank binds for this call: recv_bytes, but alltoallv's ranks
     *  receive different amounts. A backend that bounds a peer's regions by its own buffers (mmio's
     *  symmetric convention) bounds a peer's RECV by this. */
    uint64_t peer_recv_bytes;
    /* What every rank must pass alike. A backend that sees its peers' launches compares them
     * (ncl_launch_mismatch) and fails the call naming the difference instead of timing out. */
    uint64_t count;   /**< the call's count (elements) */
    uint8_t dtype;    /**< ncl_dtype */
    uint8_t op;       /**< ncl_op (reductions; else 0) */
    uint8_t algo;     /**< ncl_algo the plan runs */
    uint8_t inplace;  /**< 1: in place */
    int32_t root;     /**< broadcast / reduce root (else 0) */
} ncl_hal_launch;

/** ncl_hal_launch.op of an alltoallv (coll NCL_COLL_ALLTOALL): its count is a digest of the count
 *  matrix, so launches with different matrices differ in count. */
#define NCL_LAUNCH_A2AV 1u

/** Two ranks' launches of the same call (equal seq): 0 when they agree, or are not the same call;
 *  else 1, with the first difference in buf ("rank 1 called allreduce #3 with count 5, rank 0 with
 *  count 9"; NUL-terminated, cut to len). */
int ncl_launch_mismatch(const ncl_hal_launch *mine, int my_rank, const ncl_hal_launch *theirs, int their_rank,
                        char *buf, size_t len);

/** Backend operations. None may block except wait_event; all return NCL_SUCCESS or an error.
 *  A NULL op means "not supported". */
typedef struct ncl_hal_ops {
    ncl_result (*caps)(void *ctx, ncl_hal_caps *out);
    /** Binds this rank's buffers for the collective `l`. Peers may address them once this rank
     *  has recorded its first notify of the collective (scratch: always, with NCL_HAL_FEAT_ZONES). */
    ncl_result (*begin)(void *ctx, const ncl_hal_launch *l);
    /** The collective finished on this rank (with `result`); buffers are unbound. */
    ncl_result (*end)(void *ctx, ncl_result result);
    /** Starts a data task (WRITE, WRITE_REDUCE, LOCAL_*) on `queue`. At most caps.queue_depth
     *  (at least one) are outstanding per queue; completion is observed with dma_poll. */
    ncl_result (*dma_submit)(void *ctx, uint32_t queue, const ncl_task *task);
    /** *done = how many of the queue's oldest outstanding data tasks completed (their writes are
     *  visible) since the last poll, counted in submission order: with one outstanding, 0 or 1. */
    ncl_result (*dma_poll)(void *ctx, uint32_t queue, int *done);
    /** Adds 1 to counter (this rank, id) on rank `peer`; ordered after completed data tasks (the
     *  engine records only when none of the queue's is outstanding). */
    ncl_result (*notify_record)(void *ctx, uint32_t queue, int peer, uint32_t id);
    /** If counter (peer, id) >= count, subtracts count and sets *done = 1; else *done = 0. */
    ncl_result (*notify_try_wait)(void *ctx, int peer, uint32_t id, uint32_t count, int *done);
    /** Blocks until something may have changed (a record arrived, a task completed) or
     *  timeout_ns passed. Spurious returns are fine. */
    ncl_result (*wait_event)(void *ctx, uint64_t timeout_ns);
    /** Monotonic time in nanoseconds (simulated time on the sim backend). */
    uint64_t (*now_ns)(void *ctx);
    /** The engine's diagnostics (NCL_LOG_*), all of them, whatever sink ncl_config.log names: a
     *  backend may keep them (zmq: an ABORT's reason) and shows them on its own default sink only
     *  when the program gave no ncl_config.log (the engine delivers to that itself). */
    void (*log)(void *ctx, int level, const char *msg);
    /** *value = counter (peer, id) now, unchanged. Optional: with it a notify wait times out only
     *  when no record reached its counter for a whole timeout (a long stream of records is
     *  healthy); without it the timeout counts from the wait's start. */
    ncl_result (*notify_peek)(void *ctx, int peer, uint32_t id, uint32_t *value);
    /** The backend's account of its last failed op (optional; "" or NULL: none). The engine adds
     *  it to the call's error, so ncl_comm_last_error says what the backend saw. */
    const char *(*last_error)(void *ctx);
    /** Optional: the HAL of a sub-communicator (ncl_comm_split, and the pair communicators of
     *  ncl_send/ncl_recv): its ranks are `members` (nmembers ranks of this communicator, in the
     *  new rank order; this rank is members[rank]), and `id`, the same on every member, tells it
     *  from every other communicator on these devices (0 is never one: it names the communicator
     *  the backend started with). The child's notify counters, bound buffers, queues, scratch and
     *  launches are its own; the devices' DMA engines, links and memory are shared. Sets *child.
     *  NCL_ERR_REMOTE when a member already made `id` with other members. */
    ncl_result (*split)(void *ctx, uint32_t id, const int32_t *members, int nmembers, int rank, struct ncl_hal *child);
    /** Releases a HAL made by split once its communicator is destroyed: it records nothing more,
     *  and peers still waiting on it fail instead of timing out. */
    void (*release)(void *ctx);
} ncl_hal_ops;

typedef struct ncl_hal {
    const ncl_hal_ops *ops;
    void *ctx;
} ncl_hal;

static inline ncl_result ncl_hal_caps_get(const ncl_hal *h, ncl_hal_caps *out)
{
    return h->ops->caps ? h->ops->caps(h->ctx, out) : NCL_ERR_UNSUPPORTED;
}
static inline ncl_result ncl_hal_begin(const ncl_hal *h, const ncl_hal_launch *l)
{
    return h->ops->begin ? h->ops->begin(h->ctx, l) : NCL_SUCCESS;
}
static inline ncl_result ncl_hal_end(const ncl_hal *h, ncl_result result)
{
    return h->ops->end ? h->ops->end(h->ctx, result) : NCL_SUCCESS;
}
static inline ncl_result ncl_hal_dma_submit(const ncl_hal *h, uint32_t q, const ncl_task *t)
{
    return h->ops->dma_submit ? h->ops->dma_submit(h->ctx, q, t) : NCL_ERR_UNSUPPORTED;
}
static inline ncl_result ncl_hal_dma_poll(const ncl_hal *h, uint32_t q, int *done)
{
    return h->ops->dma_poll ? h->ops->dma_poll(h->ctx, q, done) : NCL_ERR_UNSUPPORTED;
}
static inline ncl_result ncl_hal_notify_record(const ncl_hal *h, uint32_t q, int peer, uint32_t id)
{
    return h->ops->notify_record ? h->ops->notify_record(h->ctx, q, peer, id) : NCL_ERR_UNSUPPORTED;
}
static inline ncl_result ncl_hal_notify_try_wait(const ncl_hal *h, int peer, uint32_t id,
                                                 uint32_t count, int *done)
{
    return h->ops->notify_try_wait ? h->ops->notify_try_wait(h->ctx, peer, id, count, done)
                                   : NCL_ERR_UNSUPPORTED;
}
static inline ncl_result ncl_hal_wait_event(const ncl_hal *h, uint64_t timeout_ns)
{
    return h->ops->wait_event ? h->ops->wait_event(h->ctx, timeout_ns) : NCL_SUCCESS;
}
static inline uint64_t ncl_hal_now_ns(const ncl_hal *h)
{
    return h->ops->now_ns ? h->ops->now_ns(h->ctx) : 0;
}
static inline ncl_result ncl_hal_notify_peek(const ncl_hal *h, int peer, uint32_t id, uint32_t *value)
{
    return h->ops->notify_peek ? h->ops->notify_peek(h->ctx, peer, id, value) : NCL_ERR_UNSUPPORTED;
}
static inline const char *ncl_hal_last_error(const ncl_hal *h)
{
    const char *e = h->ops->last_error ? h->ops->last_error(h->ctx) : NULL;
    return e ? e : "";
}
static inline ncl_result ncl_hal_split(const ncl_hal *h, uint32_t id, const int32_t *members, int nmembers,
                                       int rank, ncl_hal *child)
{
    return h->ops->split ? h->ops->split(h->ctx, id, members, nmembers, rank, child) : NCL_ERR_UNSUPPORTED;
}
static inline void ncl_hal_release(const ncl_hal *h)
{
    if (h->ops->release)
        h->ops->release(h->ctx);
}
static inline void ncl_hal_log(const ncl_hal *h, int level, const char *msg)
{
    if (h->ops->log)
        h->ops->log(h->ctx, level, msg);
}

/** The HAL a communicator was created with (backends use it to find their own context). */
const ncl_hal *ncl_comm_hal(const ncl_comm *comm);

#ifdef __cplusplus
}
#endif
#endif
