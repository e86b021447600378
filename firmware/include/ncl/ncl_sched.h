/* ncl_sched.h — the schedule IR: per-rank, per-queue task streams that every collective compiles to. */
#ifndef NCL_SCHED_H
#define NCL_SCHED_H

#include "ncl.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Task kinds: the instruction set real NPU engines expose.
 *  Tasks of one queue run in order, each starting after the previous one completed.
 *  Queues of a rank run concurrently; they order each other with NOTIFY_RECORD/WAIT on self. */
typedef enum ncl_task_kind {
    NCL_TASK_WRITE = 0,     /**< peer.dst <- src (DMA over the link) */
    NCL_TASK_WRITE_REDUCE,  /**< peer.dst <- peer.dst op src (inline reduce at the destination) */
    NCL_TASK_LOCAL_COPY,    /**< dst <- src, both local */
    NCL_TASK_LOCAL_REDUCE,  /**< dst <- dst op src, both local */
    NCL_TASK_LOCAL_DIV,     /**< dst <- dst / count (the final step of avg) */
    NCL_TASK_NOTIFY_RECORD, /**< add 1 to counter (self, notify) on rank `peer` */
    NCL_TASK_NOTIFY_WAIT,   /**< wait until counter (peer, notify) reaches `count`, then subtract it */
    /* Wide accumulation (ncl_config.wide_accumulation): an fp32 accumulator for fp16/bf16 data.
     * `dtype` is the narrow type (NCL_FLOAT16 or NCL_BFLOAT16), `bytes` the narrow side's size;
     * the fp32 side covers 2 * bytes and must be 4-byte aligned (ncl_task_src_bytes/dst_bytes). */
    NCL_TASK_LOCAL_WIDEN,        /**< dst (fp32) <- src (narrow), exact */
    NCL_TASK_LOCAL_REDUCE_WIDE,  /**< dst (fp32) <- dst op (fp32)src, one fp32 operation per element */
    NCL_TASK_LOCAL_NARROW,       /**< dst (narrow) <- src (fp32) / count, rounded once to nearest even
                                      (count 0 or 1: no division; avg's final step divides here) */
    /* Reduce on the way out (NCL_HAL_FEAT_REDUCE_WRITE): the DMA reads two local sources, reduces
     * them as it streams (src op src2, in that order) and writes the result to the peer, so that a
     * rank adds its contribution to data it received without a local task first. */
    NCL_TASK_REDUCE_WRITE,        /**< peer.dst <- src op src2 */
    NCL_TASK_REDUCE_WRITE_REDUCE, /**< peer.dst <- peer.dst op (src op src2) (inline reduce at both ends) */
    NCL_TASK_KIND_COUNT
} ncl_task_kind;

/** Buffers a task can name; the backend maps them to addresses on the rank that owns them. */
typedef enum ncl_buf {
    NCL_BUF_SEND = 0, /**< the caller's send buffer (read only) */
    NCL_BUF_RECV,     /**< the caller's receive buffer */
    NCL_BUF_SCRATCH,  /**< the backend's per-rank scratch (ncl_hal_caps.scratch_bytes) */
    NCL_BUF_COUNT
} ncl_buf;

typedef struct ncl_ref {
    uint32_t buf; /**< ncl_buf */
    uint64_t off; /**< byte offset */
} ncl_ref;

typedef struct ncl_task {
    uint8_t kind;    /**< ncl_task_kind */
    uint8_t dtype;   /**< reduce/div kinds: element type */
    uint8_t op;      /**< reduce kinds: ncl_op (never AVG: avg reduces with SUM then LOCAL_DIV) */
    uint8_t flags;   /**< NCL_TASK_POSTED */
    int32_t peer;    /**< WRITE*: destination rank; RECORD: rank to signal; WAIT: rank expected to record */
    uint32_t notify; /**< notify id (< NCL_NOTIFY_IDS) */
    uint32_t count;  /**< WAIT: records to consume; LOCAL_DIV: divisor */
    ncl_ref src;     /**< local source (data kinds) */
    ncl_ref src2;    /**< REDUCE_WRITE*: the second local source */
    ncl_ref dst;     /**< destination; on `peer` for WRITE and WRITE_REDUCE */
    uint64_t bytes;
    uint32_t step;   /**< algorithm step, for diagnostics */
} ncl_task;

/** RECORD: the queue goes on while the data tasks before it still move, and the record is sent
 *  once they have landed (without it the queue waits for them first). Either way the notify says
 *  everything before it landed; posting only lets the next transfers overlap its latency. */
#define NCL_TASK_POSTED 1u

/** A data task of a call on the latency path (ncl_config.latency_path_bytes): set by the executor
 *  as it hands the task to the backend, a hint on how to carry it; never part of a schedule. */
#define NCL_TASK_LATENCY_PATH 2u

/** 1 for the kinds that write into another rank's memory (`peer`). */
static inline int ncl_task_is_remote(uint32_t kind)
{
    return kind == NCL_TASK_WRITE || kind == NCL_TASK_WRITE_REDUCE || kind == NCL_TASK_REDUCE_WRITE ||
           kind == NCL_TASK_REDUCE_WRITE_REDUCE;
}
/** 1 for the kinds that reduce with the task's dtype and op (the wide kinds aside). */
static inline int ncl_task_reduces(uint32_t kind)
{
    return kind == NCL_TASK_WRITE_REDUCE || kind == NCL_TASK_LOCAL_REDUCE || kind == NCL_TASK_REDUCE_WRITE ||
           kind == NCL_TASK_REDUCE_WRITE_REDUCE;
}
/** 1 for the two-source kinds (REDUCE_WRITE, REDUCE_WRITE_REDUCE). */
static inline int ncl_task_two_source(uint32_t kind)
{
    return kind == NCL_TASK_REDUCE_WRITE || kind == NCL_TASK_REDUCE_WRITE_REDUCE;
}
/** 1 for the wide-accumulation kinds (LOCAL_WIDEN, LOCAL_REDUCE_WIDE, LOCAL_NARROW). */
static inline int ncl_task_is_wide(uint32_t kind)
{
    return kind >= NCL_TASK_LOCAL_WIDEN && kind <= NCL_TASK_LOCAL_NARROW;
}
/** Bytes a data task reads at src and writes at dst: `bytes`, except the fp32 side of the wide
 *  kinds, which is twice the narrow side. */
static inline uint64_t ncl_task_src_bytes(const ncl_task *t)
{
    return t->kind == NCL_TASK_LOCAL_NARROW ? 2 * t->bytes : t->bytes;
}
static inline uint64_t ncl_task_dst_bytes(const ncl_task *t)
{
    return t->kind == NCL_TASK_LOCAL_WIDEN || t->kind == NCL_TASK_LOCAL_REDUCE_WIDE ? 2 * t->bytes : t->bytes;
}
/** A wide task a backend can run: fp16/bf16, a valid op, whole elements. */
static inline int ncl_task_wide_ok(const ncl_task *t)
{
    return (t->dtype == NCL_FLOAT16 || t->dtype == NCL_BFLOAT16) && t->op < NCL_OP_COUNT && t->bytes % 2 == 0;
}
/** Runs a wide task (ncl_task_wide_ok) on local memory: dst and src hold ncl_task_dst_bytes and
 *  ncl_task_src_bytes. For the backends whose tasks run on the CPU. */
void ncl_task_run_wide(const ncl_task *t, void *dst, const void *src);

/** Notify ids per (peer, rank) pair; algorithms use 2 per channel plus a few local ones. */
#define NCL_NOTIFY_IDS 32u

/** Everything an algorithm needs to produce one rank's task streams. Identical on all ranks
 *  except `rank`. */
typedef struct ncl_plan {
    uint8_t coll, algo, dtype, op; /**< op: never AVG after planning; see `avg` */
    uint8_t inplace;
    uint8_t avg;           /**< 1: op was AVG — reduce with SUM, then LOCAL_DIV by nranks */
    uint8_t zone_far;      /**< with zones: a READY crosses more than one link back (ncl_config.zone_hops > 1) */
    int32_t nranks, rank, root;
    uint64_t count;        /**< allreduce/broadcast/reduce: elements; reduce_scatter: recvcount;
                                allgather: sendcount */
    uint32_t esize;        /**< bytes per element */
    uint32_t queues;       /**< queues this schedule uses (set by the algorithm's prepare) */
    uint32_t max_queues;   /**< queues the backend runs at once: room for helper queues */
    uint32_t helper_queues;/**< of `queues`, those that serve the data channels (set by prepare) */
    uint64_t slice_elems;  /**< largest DMA task, in elements */
    uint64_t scratch_bytes;/**< scratch the backend gives each rank */
    uint32_t segments;     /**< pipelined algorithms: segments (set by prepare from the cost model) */
    uint32_t link_alpha_ns, link_gbps; /**< cost model inputs */
    uint8_t posted_knee;   /**< a posted pipeline's segment count, % of its knee (ncl_cost.posted; 0: 50) */
    uint32_t mem_gbps;     /**< device memory bandwidth, GB/s (0: unknown; see ncl_lead_piece) */
    uint32_t dma_engines;  /**< ncl_hal_caps.dma_engines: DMA tasks at once (0: max_queues) */
    uint32_t in_flight;    /**< data tasks a queue keeps in flight (>= 1; ncl_config.in_flight) */
    /** Logical rings (the communicator's tables; NULL: identity): ring_order[c * nranks + i] is
     *  the rank at position i of ring c, ring_pos the inverse. Channel c uses ring c % count. */
    const int32_t *ring_order, *ring_pos;
    uint32_t ring_count;
    /** Relative bandwidth of each ring (ring_count entries, NULL: equal): the ring family splits
     *  the buffer over channels in proportion (ncl_channel_part in ncl_part.h). */
    const uint32_t *ring_weights;
    /** Two-level algorithms (see ncl_config.local_size): ranks per server (0: one level), the
     *  inter-server algorithm, and the intra-server rings over local indices (NULL: identity). */
    uint32_t local_size;
    uint8_t inter_algo;
    const int32_t *local_order, *local_pos;
    uint32_t local_ring_count;
    const struct ncl_user_schedule *schedule; /**< NCL_ALGO_USER's data */
    /** alltoallv (ncl_alltoallv): the nranks x nranks count matrix, counts[i * nranks + j] the
     *  elements rank i sends rank j, the caller's until the call ends (`count` is its largest
     *  entry); NULL: alltoall, every block `count`. */
    const uint64_t *a2a_counts;
    /** The backend's inline reduce for this plan's dtype and op (1: WRITE_REDUCE may be used),
     *  and the alignment its tasks need (ncl_inline_ok decides per task). */
    uint8_t inline_reduce;
    uint32_t inline_align;
    /** 1: the DMA runs the two-source kinds (NCL_HAL_FEAT_REDUCE_WRITE) for this dtype and op
     *  (where inline_reduce and ncl_inline_ok allow). */
    uint8_t reduce_write;
    /** 1: wide accumulation (det allreduce of fp16/bf16 with sum/prod/avg and
     *  ncl_config.wide_accumulation): every element accumulates in fp32 in rank order and is
     *  rounded once; the schedule uses the LOCAL_WIDEN / REDUCE_WIDE / NARROW kinds. */
    uint8_t wide;
    /** An algorithm with several cost lines (regimes) in the cost table: which of its non-floor
     *  lines for (coll, algo), in table order, is the cheapest at this size, and the schedule
     *  that line prices (its ncl_cost.variant); cost_line is NCL_COST_LINE_NONE when the table
     *  prices none, and the algorithm decides alone. */
    uint8_t cost_line, cost_variant;
    /** Landing zones (ncl_config.landing_zone_bytes): bytes of each zone (0: none), where they
     *  start in scratch (scratch_bytes above is what lies below them), and per channel whether
     *  this collective's zone is the odd one and whether its writer must first wait for the credit
     *  of the zone's previous use (NCL_ZONE_*). zone_channels: how many channels' zones the
     *  algorithm uses (set by prepare; the communicator advances their turns). */
    uint64_t zone_bytes, zone_base;
    uint8_t zone_state[NCL_MAX_QUEUES];
    uint32_t zone_channels;
    /** Values the algorithm's prepare derives once for every rank's generator (its own meaning
     *  per algorithm): each costs divisions, and a generator asks for them per task. */
    uint64_t derived[3];
} ncl_plan;

#define NCL_ZONE_ODD 1u    /* the channel's second zone */
#define NCL_ZONE_CREDIT 2u /* used before: its writer waits for the reader's credit first */

#define NCL_COST_LINE_NONE 0xffu

/** Where `rank`'s input lives, and where its result must end up. Out of place: SEND at 0 and
 *  RECV at 0. In place the collective works in one buffer, named RECV: allreduce, broadcast,
 *  reduce: input and output at RECV 0; allgather (RECV holds nranks*count): input at
 *  RECV + rank*count, output RECV 0; reduce_scatter (RECV is the caller's whole send buffer,
 *  nranks*count): input RECV 0, output RECV + rank*count. Offsets in bytes. */
ncl_ref ncl_plan_input(const ncl_plan *plan, int rank);
ncl_ref ncl_plan_output(const ncl_plan *plan, int rank);

/** Resumable generator state (protothread-style): loop variables live here, not on the stack,
 *  so a rank's tasks stream out one at a time in O(1) memory. */
typedef struct ncl_gen {
    int line;                /**< resume point: 0 = start, -1 = finished */
    uint64_t i, j, k, m, n;  /**< loop variables that survive a yield */
    uint64_t d[5];           /**< values a generator derives once per stream (they cost divisions) */
} ncl_gen;

/** Produces the next task of (plan->rank, queue) into *out. Returns 1, or 0 at the end. */
typedef int (*ncl_gen_fn)(const ncl_plan *plan, uint32_t queue, ncl_gen *gen, ncl_task *out);

/** One algorithm for one collective. */
typedef struct ncl_algo_desc {
    const char *name;
    uint8_t coll, algo;
    /** Fills plan->queues, plan->segments; checks resources (e.g. scratch) and may refuse. */
    ncl_result (*prepare)(ncl_plan *plan);
    ncl_gen_fn next;
} ncl_algo_desc;

/** The algorithm implementing (coll, algo), or NULL. algo must not be AUTO. */
const ncl_algo_desc *ncl_algo_find(ncl_coll coll, ncl_algo algo);

/** What a plan is made for besides the call: the engine's settings, the backend's resources and
 *  what is known of the topology. Identical on every rank. */
typedef struct ncl_plan_env {
    uint64_t slice_bytes;    /**< largest DMA task */
    uint32_t channels;       /**< parallel data paths of the ring-family algorithms */
    uint32_t max_queues;     /**< queues the backend runs at once (>= channels) */
    uint64_t scratch_bytes;  /**< per rank */
    uint32_t link_alpha_ns, link_gbps; /**< built-in cost model inputs */
    const int32_t *ring_order, *ring_pos; /**< logical rings (see ncl_plan), NULL: identity */
    uint32_t ring_count;
    const ncl_cost *costs;   /**< cost table for AUTO (see ncl_cost), may be NULL */
    uint32_t cost_count;
    int deterministic;       /**< ncl_config.deterministic: allreduce runs det whatever algo says */
    uint32_t local_size;     /**< two-level algorithms: see ncl_plan */
    uint8_t inter_algo;
    const int32_t *local_order, *local_pos;
    uint32_t local_ring_count;
    const struct ncl_user_schedule *schedule;
    const uint16_t *inline_ops; /**< ncl_hal_caps.inline_ops; NULL: every dtype and op inline */
    uint32_t inline_align;      /**< ncl_hal_caps.inline_align */
    const uint32_t *ring_weights; /**< per ring (see ncl_plan), NULL: equal shares */
    int wide_accumulation;      /**< ncl_config.wide_accumulation (with deterministic only) */
    uint32_t mem_gbps;          /**< ncl_config.mem_gbps */
    uint32_t dma_engines;       /**< ncl_hal_caps.dma_engines */
    uint32_t in_flight;         /**< ncl_config.in_flight within ncl_hal_caps.queue_depth (0: 1) */
    /** Landing zones: bytes of each (0: none; ncl_plan_env_zones sets it) and how many times each
     *  channel's zones were used so far (the communicator's counters; NULL: never). */
    uint64_t zone_bytes;
    const uint32_t *zone_uses;
    int reduce_write;           /**< ncl_hal_caps.features has NCL_HAL_FEAT_REDUCE_WRITE */
    uint32_t zone_hops;         /**< ncl_config.zone_hops, or nranks - 1 (ncl_plan_env_zones) */
    uint64_t latency_path_bytes[NCL_COLL_COUNT]; /**< ncl_config's: which calls the cost table's
                                                      latency-path lines price */
} ncl_plan_env;

struct ncl_hal_caps;

/** Fills *env the way a communicator created from `cfg` on a backend offering `caps` plans, so a
 *  tool that predicts what the engine does (which algorithm auto picks, what a plan costs) asks
 *  with the engine's own inputs: max_queues is caps->max_queues clamped to NCL_MAX_QUEUES, and
 *  channels cfg->channels clamped to max_queues; scratch_bytes, inline_ops, inline_align and
 *  dma_engines come from caps, in_flight is cfg's within caps->queue_depth; slice_bytes, the
 *  cost model's inputs (link_alpha_ns, link_gbps, mem_gbps, costs), deterministic,
 *  wide_accumulation, the two-level settings (local_size, inter_algo) and schedule from cfg.
 *  caps NULL: a backend with NCL_MAX_QUEUES queues of NCL_MAX_IN_FLIGHT, no scratch, every
 *  dtype and op reduced inline without alignment. env points into cfg's and
 *  caps' arrays (costs, inline_ops): they must outlive it. The logical rings are left out
 *  (identity): their inverse, each rank's position, is per communicator; ncl_plan_env_rings
 *  adds them into tables the caller provides. Nothing is validated here: ncl_comm_create
 *  refuses a config or caps it cannot run. */
void ncl_plan_env_init(ncl_plan_env *env, const ncl_config *cfg, const struct ncl_hal_caps *caps);

/** Adds cfg's logical rings to env for `nranks` ranks, as a communicator plans with them:
 *  ring_order = cfg->rings and ring_weights = cfg->ring_weights, ring_pos their inverse in the
 *  caller's table of cfg->ring_count * nranks entries (or cfg->ring_positions, checked to be
 *  that inverse; ring_pos may then be NULL); local_order = cfg->local_rings, local_pos
 *  their inverse over the local indices in a table of cfg->local_ring_count * cfg->local_size
 *  entries. A table may be NULL when its count is 0. NCL_ERR_INVALID_ARGUMENT, env unchanged,
 *  when a ring does not name every rank (local index) exactly once or a table is missing.
 *  cfg's arrays and the tables must outlive env. */
ncl_result ncl_plan_env_rings(ncl_plan_env *env, const ncl_config *cfg, int nranks, int32_t *ring_pos,
                              int32_t *local_pos);

/** Sizes env's landing zones as a communicator of `nranks` ranks created from cfg on a backend
 *  offering caps does (ncl_config.landing_zone_bytes): none without NCL_HAL_FEAT_ZONES, with
 *  NCL_ZONES_OFF, on one rank, or without queues and DMA engines for twice the channels (a helper
 *  queue per channel copies out of them).
 *  NCL_ERR_INVALID_ARGUMENT when cfg asks for a size that does not fit. */
ncl_result ncl_plan_env_zones(ncl_plan_env *env, const ncl_config *cfg, const struct ncl_hal_caps *caps, int nranks);

/** Builds and prepares a plan (algorithm choice for AUTO included). Pure: no HAL, no memory. */
ncl_result ncl_plan_make(ncl_plan *plan, ncl_coll coll, ncl_algo algo, int nranks, int rank,
                         int root, uint64_t count, ncl_dtype dtype, ncl_op op, int inplace,
                         const ncl_plan_env *env);

/** Predicted time in ns of the plan's collective with `algo` (which must have prepared): the
 *  least of the cost table's entries for it, else the built-in formula for ring, chain and tree;
 *  UINT64_MAX when the algorithm has no cost (AUTO does not consider it). */
uint64_t ncl_plan_cost_ns(const ncl_plan *plan, const ncl_plan_env *env);

#ifdef __cplusplus
}
#endif
#endif
