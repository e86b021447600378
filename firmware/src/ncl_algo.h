/* ncl_algo.h — what every algorithm file uses: generator macros, notify ids, the plan's queues, rings and inline reduce, and the algorithm table. */
#ifndef NCL_ALGO_H
#define NCL_ALGO_H

#include "ncl/ncl_sched.h"
#include "ncl_part.h"
#include "ncl_pipeline.h"
#include "ncl_task.h"

/* Protothread-style generators: write the algorithm as plain nested loops over fields of
 * ncl_gen (never over locals, which do not survive a yield) and NCL_YIELD after filling *out.
 * No `switch` statements inside a generator body. */
#define NCL_GEN_BEGIN(g)  switch ((g)->line) { case 0:
#define NCL_YIELD(g)                                                                       \
    do {                                                                                   \
        (g)->line = __LINE__;                                                              \
        return 1;                                                                          \
    case __LINE__:;                                                                        \
    } while (0)
#define NCL_GEN_END(g)                                                                     \
    default:                                                                               \
        break;                                                                             \
    }                                                                                      \
    (g)->line = -1;                                                                        \
    return 0

/* Notify ids: each channel owns a DATA and a READY id, and a LOCAL id for its queues to order
 * each other on one rank. Counters are per sender, so the same id from different peers never
 * aliases. */
#define NCL_NOTIFY_DATA(ch) (2u * (ch))
#define NCL_NOTIFY_READY(ch) (2u * (ch) + 1u)
#define NCL_NOTIFY_LOCAL(ch) (2u * NCL_MAX_QUEUES + (ch))
/* A landing zone's credit: its reader tells the writer it has read the zone (ncl_zone_*). */
#define NCL_NOTIFY_CREDIT(ch) (3u * NCL_MAX_QUEUES + (ch))

/* Room for a helper queue per data channel (a fill or copy queue beside the ring): a queue each,
 * and a DMA engine each (ncl_hal_caps.dma_engines; 0: unknown), since with every engine busy with
 * a channel's write a helper's copy only delays one. */
static inline int ncl_helper_room(const ncl_plan *p, uint32_t channels)
{
    return 2 * channels <= p->max_queues && (p->dma_engines == 0 || 2 * channels <= p->dma_engines);
}

/* A record behind a queue's data tasks: posted (the queue goes on while they land) where each of
 * `queues` queues has a DMA engine (0: unknown), else recorded (the queue waits for them): with
 * more queues than engines the writes then in flight queue for the engines and reach the links
 * out of step (7 ring channels on 4 engines ran up to 7 % slower). */
static inline void ncl_task_record_behind(const ncl_plan *p, uint32_t queues, ncl_task *t, int peer, uint32_t notify,
                                          uint32_t step)
{
    if (p->dma_engines == 0 || queues <= p->dma_engines)
        ncl_task_post(t, peer, notify, step);
    else
        ncl_task_record(t, peer, notify, step);
}

/* The order a ring-family queue runs `rounds` rounds of `steps` steps in. With several data tasks
 * in flight (ncl_plan.in_flight), a step's rounds back to back under one record, so that a round's
 * latency hides behind the transfer before it; with one, round by round, so that a round's data
 * stays in cache from step to step (the host backend). Unit u of the stream is step *step of round
 * *round; returns 1 when it is the last unit of its step. */
static inline int ncl_round_step(const ncl_plan *p, uint64_t u, uint64_t rounds, uint64_t steps, uint64_t *round,
                                 uint64_t *step)
{
    if (p->in_flight > 1) {
        *step = u / rounds;
        *round = u % rounds;
        return *round + 1 == rounds;
    }
    *round = u / steps;
    *step = u % steps;
    return 1;
}

/* Landing zones (ncl_plan.zone_*): channel c's zone on a rank is where its ring predecessor writes
 * the first `slots` units of a collective without a READY from it. The writer waits for the
 * credit of the zone's previous use first (ncl_zone_credit_due); the reader records one credit
 * per use, once it has read the zone for the last time, so that the writer may use it again two
 * collectives later. Slots of slot_bytes each, as many as the zone holds, at most `units`; 0 when
 * the channel has no zone in this plan. */
static inline uint64_t ncl_zone_slots(const ncl_plan *p, uint32_t c, uint64_t slot_bytes, uint64_t units)
{
    if (c >= p->zone_channels || slot_bytes == 0)
        return 0;
    uint64_t n = p->zone_bytes / slot_bytes;
    return n < units ? n : units;
}

/* Slot k of channel c's zone (this collective's one of the two). */
static inline ncl_ref ncl_zone_slot(const ncl_plan *p, uint32_t c, uint64_t slot_bytes, uint64_t k)
{
    uint64_t zone = 2u * c + (p->zone_state[c] & NCL_ZONE_ODD ? 1u : 0u);
    ncl_ref r;
    r.buf = NCL_BUF_SCRATCH;
    r.off = p->zone_base + zone * p->zone_bytes + k * slot_bytes;
    return r;
}

/* The writer of channel c's zone must wait for the credit of its previous use. */
static inline int ncl_zone_credit_due(const ncl_plan *p, uint32_t c)
{
    return c < p->zone_channels && (p->zone_state[c] & NCL_ZONE_CREDIT);
}

/* Channels worth a queue: at most `queues`, and no more than `units` (elements per rank or
 * per block) so that every channel moves at least one; at least 1. */
static inline uint32_t ncl_channels_for(uint32_t queues, uint64_t units)
{
    return units >= queues ? queues : units ? (uint32_t)units : 1u;
}

/* Whether a WRITE_REDUCE of `bytes` from src_off to dst_off can reduce inline on this backend
 * (ncl_hal_caps: dtype/op supported, offsets and length aligned). Sender and receiver both ask,
 * with the same arguments, so both know which path a task takes. */
static inline int ncl_inline_ok(const ncl_plan *p, uint64_t src_off, uint64_t dst_off, uint64_t bytes)
{
    uint64_t a = p->inline_align;
    return p->inline_reduce && (a <= 1 || (src_off % a == 0 && dst_off % a == 0 && bytes % a == 0));
}

/* Every task of the plan can reduce inline (any element offset and length is aligned): what the
 * algorithms without a scratch path need. */
static inline int ncl_inline_all(const ncl_plan *p)
{
    return p->inline_reduce && p->esize % p->inline_align == 0;
}

/* The largest power of two <= n (0 for 0): halving-doubling's core. */
static inline uint64_t ncl_pow2_floor(uint64_t n)
{
    n |= n >> 1;
    n |= n >> 2;
    n |= n >> 4;
    n |= n >> 8;
    n |= n >> 16;
    n |= n >> 32;
    return n - (n >> 1);
}

/* Ring c (channel c's logical ring): the position of `rank`, and the rank at position `pos`
 * (any integer: taken mod nranks). Without rings, ring c is 0, 1, ..., nranks-1. */
/* Ring c's row of the plan's ring tables (channels beyond the rings reuse them; no division in
 * the usual case: generators ask on every task). */
static inline size_t ncl_ring_row(const ncl_plan *p, uint32_t c)
{
    return (size_t)(c < p->ring_count ? c : c % p->ring_count) * (size_t)p->nranks;
}
static inline int ncl_ring_pos(const ncl_plan *p, uint32_t c, int rank)
{
    return p->ring_count ? p->ring_pos[ncl_ring_row(p, c) + (size_t)rank] : rank;
}
static inline int ncl_ring_rank(const ncl_plan *p, uint32_t c, int64_t pos)
{
    int i = ncl_mod(pos, p->nranks);
    return p->ring_count ? p->ring_order[ncl_ring_row(p, c) + (size_t)i] : (int)i;
}

/* Intra-server ring c of the two-level algorithms (over local indices 0..local_size-1): the
 * position of local index l, and the local index at position `pos` (taken mod local_size).
 * Without local rings, ring c is 0, 1, ..., local_size-1. */
static inline int ncl_local_pos(const ncl_plan *p, uint32_t c, int l)
{
    return p->local_ring_count ? p->local_pos[(size_t)(c % p->local_ring_count) * p->local_size + (size_t)l] : l;
}
static inline int ncl_local_rank(const ncl_plan *p, uint32_t c, int64_t pos)
{
    int i = ncl_mod(pos, (int64_t)p->local_size);
    return p->local_ring_count ? p->local_order[(size_t)(c % p->local_ring_count) * p->local_size + (size_t)i] : i;
}

/* The algorithm table entries, one per file under algo/. */
extern const ncl_algo_desc ncl_algo_ring_allreduce;
extern const ncl_algo_desc ncl_algo_ring_reduce_scatter;
extern const ncl_algo_desc ncl_algo_ring_allgather;
extern const ncl_algo_desc ncl_algo_chain_broadcast;
extern const ncl_algo_desc ncl_algo_tree_broadcast;
extern const ncl_algo_desc ncl_algo_ring_reduce;
extern const ncl_algo_desc ncl_algo_tree_reduce;
extern const ncl_algo_desc ncl_algo_hd_allreduce;
extern const ncl_algo_desc ncl_algo_hd_reduce_scatter;
extern const ncl_algo_desc ncl_algo_hd_allgather;
extern const ncl_algo_desc ncl_algo_mesh_allreduce;
extern const ncl_algo_desc ncl_algo_mesh_reduce_scatter;
extern const ncl_algo_desc ncl_algo_mesh_allgather;
extern const ncl_algo_desc ncl_algo_mesh_alltoall;
extern const ncl_algo_desc ncl_algo_pairwise_alltoall;
extern const ncl_algo_desc ncl_algo_sag_broadcast;
extern const ncl_algo_desc ncl_algo_dbtree_allreduce;
extern const ncl_algo_desc ncl_algo_det_allreduce;
extern const ncl_algo_desc ncl_algo_hier_allreduce;
extern const ncl_algo_desc ncl_algo_hier_broadcast;
extern const ncl_algo_desc ncl_algo_user_allreduce;
extern const ncl_algo_desc ncl_algo_user_broadcast;
extern const ncl_algo_desc ncl_algo_user_reduce;
extern const ncl_algo_desc ncl_algo_user_reduce_scatter;
extern const ncl_algo_desc ncl_algo_user_allgather;

#endif
