/* ncl_mesh.h — what the full-mesh family shares (mesh reduce-scatter, allgather, allreduce, det):
 * peers named by their distance d = 1..p-1, one send queue per peer as far as the backend
 * allows, a local queue that grants READY, waits for DATA and reduces, and the scratch slots
 * senders write into, a round at a time. */
#ifndef NCL_MESH_H
#define NCL_MESH_H

#include "ncl_algo.h"

/* Queues that write to peers: one per peer as far as the backend allows. Where a block for a peer
 * takes more than one round (more than a slice, or than a scratch slot per peer), no more than
 * the DMA engines (ncl_hal_caps.dma_engines): writes beyond them only queue for one, and the
 * local queue's reduces, which free the slots the next round writes into, then wait behind long
 * writes (on a 16-NPU fat tree the full mesh ran 1.5-1.8x slower so). Small blocks keep a queue
 * per peer: their writes are latency, not engine time. */
static inline uint32_t ncl_mesh_send_queues_of(const ncl_plan *p)
{
    uint32_t peers = (uint32_t)p->nranks - 1, most = p->max_queues;
    const uint64_t block = p->coll == NCL_COLL_ALLREDUCE ? p->count / (uint64_t)p->nranks : p->count;
    const uint64_t slot = peers ? p->scratch_bytes / peers / p->esize : 0;
    if (p->dma_engines && p->dma_engines < most && block > ncl_min_u64(p->slice_elems, slot))
        most = p->dma_engines;
    return peers < most ? peers : most;
}

/* What ncl_mesh_derive() stores in plan->derived once per plan: the generators ask per task, and
 * each costs divisions (a fifth of the checker's time on a mesh reduce-scatter of small slices). */
enum { NCL_MESH_D_SEND_QUEUES, NCL_MESH_D_BUFFERS, NCL_MESH_D_ROUND_ELEMS };

static inline uint32_t ncl_mesh_send_queues(const ncl_plan *p)
{
    return (uint32_t)p->derived[NCL_MESH_D_SEND_QUEUES];
}

/* The local queue: a spare one when there is room, else the last send queue (fewest peers). */
static inline uint32_t ncl_mesh_local_queue(const ncl_plan *p)
{
    uint32_t s = ncl_mesh_send_queues(p);
    return s < p->max_queues ? s : s - 1;
}

/* The send queue of the pair at distance d (on the sender; the receiver uses its notify ids). */
static inline uint32_t ncl_mesh_queue_of(const ncl_plan *p, uint64_t d)
{
    return (uint32_t)((d - 1) % ncl_mesh_send_queues(p));
}

/* A rank visits its peers in the order of index d = 1..p-1 (its queues, slots and reduces follow
 * it; index d is written on send queue (d-1) % S), the peer at index d being ncl_mesh_distance(d)
 * places away. Every rank's d-th write goes the same distance, so each wave of writes (the d-th
 * of every queue) is a permutation, one to each rank.
 * - With a queue per peer every write is issued at once and the DMA engines take them in queue
 *   order; nearest-first made every sender of a leaf write its first remote block to the same
 *   rank of the next leaf where consecutive ranks share a switch (an 8-NPU fat tree's mesh
 *   reduce-scatter and allgather 37.6 / 33.9 % behind the ring at 8 MiB; 10.0 / 5.2 % now). So
 *   the order starts at p/2, the far half first: p/2, ..., p-1, 1, ..., p/2 - 1.
 * - With fewer queues than peers (blocks of several rounds) a queue's writes go one after
 *   another, and the order is nearest-first: far-first, or each queue a run of distances, made a
 *   32-NPU fat tree's reduce-scatter 6-20 % slower from 64 MiB. */
static inline uint64_t ncl_mesh_distance(const ncl_plan *p, uint64_t d)
{
    const uint64_t peers = (uint64_t)p->nranks - 1;
    if (peers == 0 || ncl_mesh_send_queues(p) < peers)
        return d;
    return (d - 1 + (uint64_t)p->nranks / 2 - 1) % peers + 1;
}

/* Its inverse: the index of the peer `distance` places away. */
static inline uint64_t ncl_mesh_index(const ncl_plan *p, uint64_t distance)
{
    const uint64_t peers = (uint64_t)p->nranks - 1;
    if (peers == 0 || ncl_mesh_send_queues(p) < peers)
        return distance;
    return (distance - 1 + peers - ((uint64_t)p->nranks / 2 - 1) % peers) % peers + 1;
}

/* The rank at index d after us, and the one that has us at its index d. */
static inline int ncl_mesh_peer_to(const ncl_plan *p, uint64_t d)
{
    return ncl_mod((int64_t)p->rank + (int64_t)ncl_mesh_distance(p, d), p->nranks);
}
static inline int ncl_mesh_peer_from(const ncl_plan *p, uint64_t d)
{
    return ncl_mod((int64_t)p->rank - (int64_t)ncl_mesh_distance(p, d), p->nranks);
}

/* Queues of a schedule: the send queues, plus the local queue when it is a spare one and the
 * schedule needs it (`local`); at least one. Sets the plan's layout (no segments, no helpers). */
static inline void ncl_mesh_layout(ncl_plan *p, int local)
{
    uint32_t s = ncl_mesh_send_queues(p);
    p->segments = 1;
    p->helper_queues = 0;
    p->queues = s + (local && ncl_mesh_local_queue(p) == s ? 1u : 0u);
    if (p->queues == 0) /* one rank and no local work: nothing to do, on one queue */
        p->queues = 1;
}

/* Elements per round of `slots` scratch slots: one slice, and the slots (plus `extra` bytes per
 * element, e.g. det's fp32 accumulator) must fit in scratch; 0 when not one element fits. */
static inline uint64_t ncl_mesh_round_elems(const ncl_plan *p, uint64_t slots, uint64_t extra)
{
    return slots ? ncl_min_u64(p->slice_elems, p->scratch_bytes / (slots * p->esize + extra)) : p->slice_elems;
}

/* Mesh reduce-scatter slots per receiver: one per sender, except out of place the nearest one
 * (d = 1), which writes into the output directly. */
static inline uint64_t ncl_mesh_slots(const ncl_plan *p)
{
    return p->nranks < 2 ? 0 : (uint64_t)p->nranks - 1 - (p->inplace ? 0 : 1);
}

/* The largest block a rank reduces (the rounds every rank runs): the reduce-scatter's count, the
 * allreduce's block 0. */
static inline uint64_t ncl_mesh_block_max(const ncl_plan *p)
{
    uint64_t first;
    return p->coll == NCL_COLL_ALLREDUCE ? ncl_part(p->count, (uint64_t)p->nranks, 0, &first) : p->count;
}

/* Slots per sender: two where a block takes more than one round of one slot and every peer has a
 * send queue, round i in slot i % 2, so a sender's next round lands while the receiver reduces
 * this one (with one, each write waited for that reduce: a 4-NPU full mesh's 32 MiB
 * reduce-scatter ran 464 us, now 379, the ring 428); else one. With fewer queues than peers a
 * queue's other peers come between two rounds to one receiver, time enough for its reduce, and
 * halving the rounds only added their handshakes (a 32-NPU fat tree 10 % slower from 64 MiB). */
static inline uint64_t ncl_mesh_buffers_of(const ncl_plan *p)
{
    const uint64_t slots = ncl_mesh_slots(p);
    return slots && ncl_mesh_send_queues(p) + 1u == (uint32_t)p->nranks &&
                   ncl_mesh_block_max(p) > ncl_mesh_round_elems(p, slots, 0) &&
                   ncl_mesh_round_elems(p, 2 * slots, 0) > 0
               ? 2u
               : 1u;
}

static inline uint64_t ncl_mesh_buffers(const ncl_plan *p)
{
    return p->derived[NCL_MESH_D_BUFFERS];
}

/* A send queue's DATA record: posted behind its write where every queue, the local one too, has a
 * DMA engine, so the queue's next write follows at once instead of a task issue after this one
 * has landed (a 2-rank pair's reduce-scatter paid one per round: 2.7 % from 64 MiB). Without an
 * engine for the local queue its reduces, which free the slots, would wait behind those writes. */
static inline void ncl_mesh_data(const ncl_plan *p, ncl_task *t, int peer, uint32_t q, uint32_t step)
{
    ncl_task_record_behind(p, p->queues, t, peer, NCL_NOTIFY_DATA(q), step);
}

/* Whether the sender at index d writes into the receiver's output (out of place, d = 1): its
 * rounds land in places of their own, so one READY grants them all and none waits for the
 * reduce of the round before (each did: a 2-rank pair's allreduce ran 7 % over its price from
 * 64 MiB, the link idle a reduce and a READY per round). */
static inline int ncl_mesh_direct(const ncl_plan *p, uint64_t d)
{
    return !p->inplace && d == 1;
}

/* The READYs the receiver grants the sender at index d before its first reduce: one per slot, or
 * one for every round of a direct sender. */
static inline uint64_t ncl_mesh_first_grants(const ncl_plan *p, uint64_t d, uint64_t rounds)
{
    return ncl_min_u64(ncl_mesh_direct(p, d) ? 1 : ncl_mesh_buffers(p), rounds);
}

/* Whether the sender at index d waits for a READY before round i (direct: the first only). */
static inline int ncl_mesh_waits(const ncl_plan *p, uint64_t d, uint64_t i)
{
    return i == 0 || !ncl_mesh_direct(p, d);
}

/* Whether the receiver grants the sender at index d round i + buffers once round i is reduced. */
static inline int ncl_mesh_regrants(const ncl_plan *p, uint64_t d, uint64_t i, uint64_t rounds)
{
    return !ncl_mesh_direct(p, d) && i + ncl_mesh_buffers(p) < rounds;
}

/* Elements per round of the mesh reduce-scatter's slots (before ncl_mesh_derive). */
static inline uint64_t ncl_mesh_slot_elems_of(const ncl_plan *p)
{
    return ncl_mesh_round_elems(p, ncl_mesh_slots(p) * ncl_mesh_buffers(p), 0);
}

/* Elements per round of the schedule's slots, as its prepare gave ncl_mesh_prepare(). */
static inline uint64_t ncl_mesh_slot_elems(const ncl_plan *p)
{
    return p->derived[NCL_MESH_D_ROUND_ELEMS];
}

/* The first step of every mesh-family prepare: the send queues and slots per sender, which the
 * generators and the round size below read back. */
static inline void ncl_mesh_derive(ncl_plan *p)
{
    p->derived[NCL_MESH_D_SEND_QUEUES] = ncl_mesh_send_queues_of(p);
    p->derived[NCL_MESH_D_BUFFERS] = ncl_mesh_buffers_of(p);
}

/* Where the sender at distance d puts round i, starting at output element `off`, on `rank`: the
 * output itself (out of place, d = 1), else its slot in scratch (ncl_mesh_buffers per sender). */
static inline ncl_ref ncl_mesh_target(const ncl_plan *p, int rank, uint64_t d, uint64_t off, uint64_t i)
{
    if (!p->inplace && d == 1)
        return ncl_ref_add(ncl_plan_output(p, rank), off * p->esize);
    const uint64_t b = ncl_mesh_buffers(p), slot = (d - 1 - (p->inplace ? 0 : 1)) * b + i % b;
    return ncl_ref_make(NCL_BUF_SCRATCH, slot * ncl_mesh_slot_elems(p) * p->esize);
}

/* prepare() of a schedule with slots (the local queue reduces them), after ncl_mesh_derive: its
 * round size, the layout, and a refusal when scratch cannot hold one element per slot
 * (round_elems 0). */
static inline ncl_result ncl_mesh_prepare(ncl_plan *p, uint64_t round_elems)
{
    p->derived[NCL_MESH_D_ROUND_ELEMS] = round_elems;
    ncl_mesh_layout(p, 1);
    return p->count > 0 && round_elems == 0 ? NCL_ERR_UNSUPPORTED : NCL_SUCCESS;
}

/* Elements of block k (ncl_part of the buffer over the ranks) in round i of rounds of e elements;
 * *off = its first (absolute) element. 0 past the block's end. */
static inline uint64_t ncl_mesh_block_round(const ncl_plan *p, int k, uint64_t i, uint64_t e, uint64_t *off)
{
    uint64_t boff, blen = ncl_part(p->count, (uint64_t)p->nranks, (uint64_t)k, &boff), lo = i * e;
    *off = boff + lo;
    return lo >= blen ? 0 : ncl_min_u64(e, blen - lo);
}

#endif
