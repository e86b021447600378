/* mesh_allreduce.c — full-mesh allreduce: a full-mesh reduce-scatter into per-sender slots, then
 * a full-mesh allgather of the reduced blocks, each rank writing to all its peers at once. */
#include "ncl_mesh.h"

/* Schedule. The buffer is split into p blocks (ncl_part); rank r reduces block r. d = 1..p-1 indexes
 * the peers (r+d below: the rank ncl_mesh_distance(d) after r, ncl_mesh.h); the pair at index d uses send queue (d-1) % S of the sender, S =
 * min(p-1, max_queues, and the DMA engines for blocks of several rounds: ncl_mesh_send_queues),
 * so with enough queues every write is in flight at once.
 * - Reduce-scatter: rank r writes block r+d of its input to rank r+d, into a slot of its own
 *   there (concurrent WRITE_REDUCEs into one region would race and make float results depend on
 *   arrival order); the local queue reduces the slots into recv block r in the fixed order
 *   d = 1..p-1. Out of place the sender at distance 1 writes straight into recv block r and the
 *   receiver reduces its own input into it (no pre-copy); in place recv block r already holds
 *   it. Slots hold a round of E = min(slice, scratch / slots) elements; blocks move in
 *   ceil(largest block / E) rounds, and a slot is reused only after the receiver reduced it and
 *   recorded READY back to its writer.
 * - Allgather: once block r is fully reduced (avg: divided), the local queue tells the send
 *   queues (LOCAL notify on self) and each writes block r into recv block r of its peers, in
 *   writes of at most a slice, then one DATA. These writes need no READY: the receiver granted
 *   the reduce-scatter's READY, and its recv block r is no longer read by then (in place it was
 *   sent on in the reduce-scatter, which the writer waited for).
 *
 * Over the formula 2 alpha + (2/p) n beta + ((p-1)/p) n gamma, this adds:
 * - one READY per peer before the first reduce-scatter write, and per further reduce-scatter
 *   round one READY per peer plus that round's DATA latency; the READYs are messages of their
 *   own (they follow no write); the allgather needs none;
 * - p-1 LOCAL_REDUCE tasks per round, one after another (the gamma term, plus one task issue
 *   cost each); avg: one LOCAL_DIV per round;
 * - the allgather moves block r in ceil(block / slice) writes per peer, one task each;
 * - LOCAL notifies (self) from the local queue to the other send queues between the phases;
 * - with fewer send queues than peers (S < p - 1) a queue writes to its peers one after
 *   another, so each phase takes ceil((p-1) / S) writes in a row instead of one.
 * And it takes away: with more than one reduce-scatter round, a slot is released as soon as it
 * is reduced, so round i's reduces overlap round i+1's writes where the formula adds them; with
 * one round (block <= slice and slots * block elements of scratch) only the terms above remain.
 * The local queue is a spare queue when S < max_queues, else the last send queue (which
 * serves the fewest peers). The allgather starts after the whole reduce-scatter on a rank. */

static ncl_result prepare(ncl_plan *p)
{
    ncl_mesh_derive(p);
    return ncl_mesh_prepare(p, ncl_mesh_slot_elems_of(p));
}

/* Generator state: i = round, j = distance d (the LOCAL notify loop: queue), m = the first
 * element of the current task, n = its length. The reduce-scatter has the same round count on
 * every rank (that of block 0, the largest), so READY and DATA counts match; rounds past the
 * end of a smaller block move nothing but keep the handshakes. */
static int next(const ncl_plan *p, uint32_t q, ncl_gen *g, ncl_task *t)
{
    const int r = p->rank, np = p->nranks;
    uint64_t first;
    const uint64_t es = p->esize, e = ncl_mesh_slot_elems(p);
    const uint64_t rounds = ncl_div_ceil(ncl_part(p->count, (uint64_t)np, 0, &first), e);
    const uint32_t sq = ncl_mesh_send_queues(p), lq = ncl_mesh_local_queue(p);
    const ncl_ref in = ncl_plan_input(p, r), recv = ncl_ref_make(NCL_BUF_RECV, 0);
    const uint32_t ag = (uint32_t)rounds; /* allgather step, for diagnostics */

    NCL_GEN_BEGIN(g);
    if (p->count == 0)
        return g->line = -1, 0;
    if (np == 1) { /* out of place: copy the input, slice by slice; in place: nothing to do */
        for (g->m = 0; !p->inplace && g->m < p->count; g->m += p->slice_elems) {
            g->n = ncl_min_u64(p->slice_elems, p->count - g->m);
            ncl_task_copy(t, ncl_ref_add(in, g->m * es), ncl_ref_add(recv, g->m * es), g->n * es, 0);
            NCL_YIELD(g);
        }
        return g->line = -1, 0;
    }
    /* reduce-scatter, step 0: our slots are free for the first rounds, one per slot */
    if (q == lq) {
        for (g->j = 1; g->j < (uint64_t)np; g->j++) {
            for (g->i = 0; g->i < ncl_mesh_first_grants(p, g->j, rounds); g->i++) {
                ncl_task_record(t, ncl_mesh_peer_from(p, g->j), NCL_NOTIFY_READY(ncl_mesh_queue_of(p, g->j)),
                                (uint32_t)g->i);
                NCL_YIELD(g);
            }
        }
    }
    for (g->i = 0; g->i < rounds; g->i++) {
        /* round i, send queues: block r+d to rank r+d, once its slot is free */
        for (g->j = q + 1; q < sq && g->j < (uint64_t)np; g->j += sq) {
            if (ncl_mesh_waits(p, g->j, g->i)) {
                ncl_task_wait(t, ncl_mesh_peer_to(p, g->j), NCL_NOTIFY_READY(q), 1, (uint32_t)g->i);
                NCL_YIELD(g);
            }
            g->n = ncl_mesh_block_round(p, ncl_mesh_peer_to(p, g->j), g->i, e, &g->m);
            if (g->n) {
                ncl_task_write(t, ncl_mesh_peer_to(p, g->j), ncl_ref_add(in, g->m * es),
                               ncl_mesh_target(p, ncl_mesh_peer_to(p, g->j), g->j, g->m, g->i), g->n * es,
                               (uint32_t)g->i);
                NCL_YIELD(g);
            }
            ncl_mesh_data(p, t, ncl_mesh_peer_to(p, g->j), q, (uint32_t)g->i);
            NCL_YIELD(g);
        }
        /* round i, local queue: reduce the senders in the fixed order d = 1..p-1; each slot is
         * free for the next round as soon as it has been reduced */
        if (q == lq) {
            g->n = ncl_mesh_block_round(p, r, g->i, e, &g->m);
            for (g->j = 1; g->j < (uint64_t)np; g->j++) {
                ncl_task_wait(t, ncl_mesh_peer_from(p, g->j), NCL_NOTIFY_DATA(ncl_mesh_queue_of(p, g->j)), 1,
                              (uint32_t)g->i);
                NCL_YIELD(g);
                if (g->n) {
                    if (!p->inplace && g->j == 1) /* recv holds the nearest sender's part */
                        ncl_task_reduce(t, p, ncl_ref_add(in, g->m * es), ncl_ref_add(recv, g->m * es),
                                        g->n * es, (uint32_t)g->i);
                    else
                        ncl_task_reduce(t, p, ncl_mesh_target(p, r, g->j, g->m, g->i), ncl_ref_add(recv, g->m * es),
                                        g->n * es, (uint32_t)g->i);
                    NCL_YIELD(g);
                }
                if (ncl_mesh_regrants(p, g->j, g->i, rounds)) { /* the slot is free for round i + buffers */
                    ncl_task_record(t, ncl_mesh_peer_from(p, g->j), NCL_NOTIFY_READY(ncl_mesh_queue_of(p, g->j)),
                                    (uint32_t)(g->i + ncl_mesh_buffers(p)));
                    NCL_YIELD(g);
                }
            }
            /* the round is reduced over all ranks: finish avg once, before it is gathered */
            if (p->avg && g->n) {
                ncl_task_div(t, p, ncl_ref_add(recv, g->m * es), g->n * es, (uint32_t)g->i);
                NCL_YIELD(g);
            }
        }
    }
    /* allgather: block r is final; the local queue releases the other send queues */
    if (q == lq) {
        for (g->j = 0; g->j < sq; g->j++) {
            if (g->j != lq) {
                ncl_task_record(t, r, NCL_NOTIFY_LOCAL(g->j), ag);
                NCL_YIELD(g);
            }
        }
    }
    if (q < sq) {
        if (q != lq) {
            ncl_task_wait(t, r, NCL_NOTIFY_LOCAL(q), 1, ag);
            NCL_YIELD(g);
        }
        /* block r to each peer of this queue, then DATA behind its last write */
        for (g->j = q + 1; g->j < (uint64_t)np; g->j += sq) {
            for (g->i = 0; (g->n = ncl_mesh_block_round(p, r, g->i, p->slice_elems, &g->m)) != 0; g->i++) {
                ncl_task_write(t, ncl_mesh_peer_to(p, g->j), ncl_ref_add(recv, g->m * es),
                               ncl_ref_add(recv, g->m * es), g->n * es, ag);
                NCL_YIELD(g);
            }
            ncl_mesh_data(p, t, ncl_mesh_peer_to(p, g->j), q, ag);
            NCL_YIELD(g);
        }
    }
    /* the allgather ends when every peer's block has landed; these DATA waits follow the
     * reduce-scatter's on the same queue, in the order each sender recorded them */
    if (q == lq) {
        for (g->j = 1; g->j < (uint64_t)np; g->j++) {
            ncl_task_wait(t, ncl_mesh_peer_from(p, g->j), NCL_NOTIFY_DATA(ncl_mesh_queue_of(p, g->j)), 1, ag);
            NCL_YIELD(g);
        }
    }
    NCL_GEN_END(g);
}

const ncl_algo_desc ncl_algo_mesh_allreduce = {"mesh", NCL_COLL_ALLREDUCE, NCL_ALGO_MESH, prepare, next};
