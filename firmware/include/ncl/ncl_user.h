/* ncl_user.h — user-defined schedules: a collective's per-rank task streams given as data. */
#ifndef NCL_USER_H
#define NCL_USER_H

#include "ncl_sched.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * A schedule in the spirit of MSCCL's XML: for every (rank, queue) an ordered list of steps,
 * each one task of the schedule IR (ncl_sched.h) on symbolic chunks instead of byte offsets,
 * so that one schedule serves every count, dtype, op and in/out-of-place call.
 *
 * Chunks. A buffer of `count` elements is cut into `chunks` chunks with ncl_part (the first
 * count % chunks are one element longer; chunks may be empty when count < chunks). A buffer
 * of nranks*count elements (allgather's recv, reduce_scatter's send) is nranks blocks of
 * `chunks` chunks: chunk b*chunks + k is chunk k of block b. SCRATCH is laid out like that
 * too, with as many blocks as the schedule names (it needs (highest block + 1) * count
 * elements of the backend's scratch; less is NCL_ERR_UNSUPPORTED). A step names `chunks`
 * consecutive chunks from src_chunk and from dst_chunk; both ranges must start at the same
 * chunk of their block (src_chunk % chunks == dst_chunk % chunks), which makes them the same
 * size for every count.
 *
 * Buffers. SEND is the rank's input and RECV its output as if out of place (sizes per
 * collective as in ncl_sched.h). In place they are mapped onto the one buffer
 * (ncl_plan_input / ncl_plan_output), and a LOCAL_COPY whose source and destination then
 * coincide is skipped (the input already sits where the output goes). SEND is read only.
 *
 * Steps. WRITE / WRITE_REDUCE: src on `rank`, dst on `peer` (!= rank); LOCAL_COPY /
 * LOCAL_REDUCE: both on `rank`; LOCAL_DIV: dst /= nranks, emitted only when the op is avg
 * (write it after the full sum, once per output element; other ops skip it); NOTIFY_RECORD /
 * NOTIFY_WAIT: `peer` (may be `rank` itself, to order queues), `notify` < NCL_NOTIFY_IDS,
 * WAIT consumes `count` (>= 1) records. Reduce kinds and DIV only in reducing collectives
 * (allreduce, reduce, reduce_scatter). Steps that move no element are skipped; a step moving
 * more than the plan's slice is cut into several tasks with the same step number. The step
 * number of a task (in the checker's messages) is the step's index within its (rank, queue)
 * stream.
 *
 * Rooted collectives (broadcast, reduce) are written for root 0: with root r, schedule rank x
 * runs on rank (x + r) mod nranks (peers likewise).
 *
 * The protocol of ncl_sched.h applies (READY before writes, DATA after them, records balanced);
 * the checker proves every user schedule before it runs (ncl_api) and names the first broken
 * rule.
 */
typedef struct ncl_user_step {
    int32_t rank;        /**< the rank whose stream holds the step (0..nranks-1) */
    uint32_t queue;      /**< its queue (< queues) */
    uint8_t kind;        /**< ncl_task_kind */
    uint8_t src_buf;     /**< ncl_buf of the source (data kinds except LOCAL_DIV) */
    uint8_t dst_buf;     /**< ncl_buf of the destination (data kinds; not SEND) */
    int32_t peer;        /**< WRITE*: destination rank; RECORD: rank signalled; WAIT: recording rank */
    uint32_t src_chunk;  /**< first source chunk */
    uint32_t dst_chunk;  /**< first destination chunk */
    uint32_t chunks;     /**< data kinds: consecutive chunks moved (>= 1) */
    uint32_t notify;     /**< RECORD/WAIT: notify id (< NCL_NOTIFY_IDS) */
    uint32_t count;      /**< WAIT: records consumed (>= 1) */
    uint8_t flags;       /**< RECORD: NCL_TASK_POSTED (the queue goes on while the data before it lands) */
} ncl_user_step;

typedef struct ncl_user_schedule {
    const char *name;           /**< for messages; may be NULL */
    uint8_t coll;               /**< ncl_coll: the one collective it implements */
    int32_t nranks;             /**< the rank count it is written for */
    uint32_t chunks;            /**< chunks per count-element block (>= 1) */
    uint32_t queues;            /**< queues per rank (1..NCL_MAX_QUEUES; at most the backend's) */
    const ncl_user_step *steps; /**< every stream's steps; each stream in order */
    uint32_t step_count;
} ncl_user_schedule;

/** Where ncl_user_validate found a problem: step index (NCL_USER_NO_STEP: the schedule's own
 *  fields) and the field's name ("coll", "nranks", "chunks", "queues", "steps", or a step's
 *  "rank", "queue", "kind", "peer", "src", "dst", "chunks", "notify", "count"). */
#define NCL_USER_NO_STEP 0xffffffffu
typedef struct ncl_user_where {
    uint32_t step;
    const char *field;
} ncl_user_where;

/** Structural checks of a schedule on its own (no plan): what the algorithm's prepare refuses
 *  with NCL_ERR_INVALID_ARGUMENT. Returns NCL_SUCCESS, or NCL_ERR_INVALID_ARGUMENT with the
 *  problem in msg ("... (allowed: ...)") and its place in *where (may be NULL). */
ncl_result ncl_user_validate(const ncl_user_schedule *s, ncl_user_where *where, char *msg, size_t msg_len);

/** Bytes of scratch per rank the schedule needs for `count` elements of `esize` bytes
 *  (UINT64_MAX if that overflows). */
uint64_t ncl_user_scratch_bytes(const ncl_user_schedule *s, uint64_t count, uint32_t esize);

#ifdef __cplusplus
}
#endif
#endif
