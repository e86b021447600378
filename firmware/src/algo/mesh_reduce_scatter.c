/* mesh_reduce_scatter.c — full-mesh reduce-scatter: every rank writes block k of its input to rank
 * k, to all its peers at once, into slots per sender that the receiver reduces in fixed order. */
#include "ncl_mesh.h"

/* Schedule. d = 1..p-1 indexes the peers (r+d below: the rank ncl_mesh_distance(d) after r,
 * ncl_mesh.h): rank r writes block r+d of its input to rank
 * r+d and receives block r from rank r-d. Sends to distance d run on send queue (d-1) % S, S =
 * min(p-1, max_queues, and the DMA engines for blocks of several rounds: ncl_mesh_send_queues),
 * so with enough queues every write is in flight at once. Each sender has
 * its own slot on the receiver (concurrent WRITE_REDUCEs into one region would race and make float
 * results depend on arrival order); the local queue reduces the slots into the output in the
 * fixed order d = 1..p-1, whatever order they arrive in. Out of place the sender at distance 1
 * writes straight into the output and the receiver reduces its own input into it (no pre-copy);
 * in place the output already holds the receiver's own block. Slots hold a round of E =
 * min(slice, scratch / slots) elements, so blocks move in ceil(count / E) rounds; with more than
 * one round each sender has two slots (ncl_mesh_buffers: round i in slot i % 2) and a slot is
 * reused only after the receiver consumed it and recorded READY back to its writer.
 *
 * Over the formula alpha + (1/p) n beta + ((p-1)/p) n gamma (n = p * count * esize), this adds:
 * - one READY per peer before the first write (the receiver has entered and its slot is free),
 *   and per further round one READY per peer plus that round's DATA latency; the READYs are
 *   messages of their own (they follow no write);
 * - p-1 LOCAL_REDUCE tasks per round, one after another (the gamma term, plus one task issue
 *   cost each); avg: one LOCAL_DIV per round;
 * - with fewer send queues than peers (S < p - 1) a queue writes to its peers one after
 *   another, so a round takes ceil((p-1) / S) writes in a row instead of one.
 * And it takes away: with more than one round, a slot is released as soon as it is reduced, so
 * round i's reduces overlap round i+1's writes where the formula adds them; with one round
 * (count <= slice and slots * count elements of scratch) only the terms above remain.
 * The local queue is a spare queue when S < max_queues, else the last send queue (which
 * serves the fewest peers). */

/* Block k of this rank's input, from block element `off`. */
static ncl_ref input_block(const ncl_plan *p, int k, uint64_t off)
{
    return ncl_ref_add(ncl_plan_input(p, p->rank), ((uint64_t)k * p->count + off) * p->esize);
}

static ncl_result prepare(ncl_plan *p)
{
    ncl_mesh_derive(p);
    return ncl_mesh_prepare(p, ncl_mesh_slot_elems_of(p));
}

/* Generator state: i = round, j = distance d, m = the round's first element within a block,
 * n = its length (m, n: the copy's offset and length on one rank). */
static int next(const ncl_plan *p, uint32_t q, ncl_gen *g, ncl_task *t)
{
    const int r = p->rank, np = p->nranks;
    const uint64_t es = p->esize, e = ncl_mesh_slot_elems(p), rounds = ncl_div_ceil(p->count, e);
    const uint32_t sq = ncl_mesh_send_queues(p), lq = ncl_mesh_local_queue(p);
    const ncl_ref out = ncl_plan_output(p, r);

    NCL_GEN_BEGIN(g);
    if (p->count == 0)
        return g->line = -1, 0;
    if (np == 1) { /* out of place: copy the input, slice by slice; in place: nothing to do */
        for (g->m = 0; !p->inplace && g->m < p->count; g->m += p->slice_elems) {
            g->n = ncl_min_u64(p->slice_elems, p->count - g->m);
            ncl_task_copy(t, input_block(p, 0, g->m), ncl_ref_add(out, g->m * es), g->n * es, 0);
            NCL_YIELD(g);
        }
        return g->line = -1, 0;
    }
    /* step 0: our slots are free for the first rounds, one per slot */
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
        g->m = g->i * e;
        g->n = ncl_min_u64(e, p->count - g->m);
        /* round i, send queues: block r+d to rank r+d, once its slot is free */
        for (g->j = q + 1; q < sq && g->j < (uint64_t)np; g->j += sq) {
            if (ncl_mesh_waits(p, g->j, g->i)) {
                ncl_task_wait(t, ncl_mesh_peer_to(p, g->j), NCL_NOTIFY_READY(q), 1, (uint32_t)g->i);
                NCL_YIELD(g);
            }
            ncl_task_write(t, ncl_mesh_peer_to(p, g->j),
                           input_block(p, ncl_mesh_peer_to(p, g->j), g->m),
                           ncl_mesh_target(p, ncl_mesh_peer_to(p, g->j), g->j, g->m, g->i), g->n * es,
                           (uint32_t)g->i);
            NCL_YIELD(g);
            ncl_mesh_data(p, t, ncl_mesh_peer_to(p, g->j), q, (uint32_t)g->i);
            NCL_YIELD(g);
        }
        /* round i, local queue: reduce the senders in the fixed order d = 1..p-1; each slot is
         * free for the next round as soon as it has been reduced */
        if (q == lq) {
            for (g->j = 1; g->j < (uint64_t)np; g->j++) {
                ncl_task_wait(t, ncl_mesh_peer_from(p, g->j), NCL_NOTIFY_DATA(ncl_mesh_queue_of(p, g->j)), 1,
                              (uint32_t)g->i);
                NCL_YIELD(g);
                if (!p->inplace && g->j == 1) /* the output holds the nearest sender's block */
                    ncl_task_reduce(t, p, input_block(p, r, g->m), ncl_ref_add(out, g->m * es), g->n * es,
                                    (uint32_t)g->i);
                else
                    ncl_task_reduce(t, p, ncl_mesh_target(p, r, g->j, g->m, g->i), ncl_ref_add(out, g->m * es), g->n * es,
                                    (uint32_t)g->i);
                NCL_YIELD(g);
                if (ncl_mesh_regrants(p, g->j, g->i, rounds)) { /* the slot is free for round i + buffers */
                    ncl_task_record(t, ncl_mesh_peer_from(p, g->j), NCL_NOTIFY_READY(ncl_mesh_queue_of(p, g->j)),
                                    (uint32_t)(g->i + ncl_mesh_buffers(p)));
                    NCL_YIELD(g);
                }
            }
            /* the round is reduced over all ranks: finish avg once */
            if (p->avg) {
                ncl_task_div(t, p, ncl_ref_add(out, g->m * es), g->n * es, (uint32_t)g->i);
                NCL_YIELD(g);
            }
        }
    }
    NCL_GEN_END(g);
}

const ncl_algo_desc ncl_algo_mesh_reduce_scatter = {"mesh", NCL_COLL_REDUCE_SCATTER, NCL_ALGO_MESH, prepare,
                                                    next};
