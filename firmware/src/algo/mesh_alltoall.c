/* mesh_alltoall.c — full-mesh alltoall: every rank writes each peer's block to it, to all its
 * peers at once. */
#include "ncl_a2a.h"
#include "ncl_mesh.h"

/* Schedule. Peers by index d = 1..p-1 (ncl_mesh.h's order); the pair of rank r and j = r+d runs on
 * queue (d-1) % S of r (S = ncl_mesh_send_queues), both ways: r grants j its READY (j may write
 * into r's recv block j), waits for j's, writes its block j into j's recv block r in writes of at
 * most a slice, and records DATA behind them; at the end it waits for j's DATA. The notify ids
 * are channel 0's for every pair (counters are per sender: one pair never sees another's).
 * Out of place a spare queue (else the last send queue, after its sends) copies our own block.
 * In place (ncl_a2a.h) every round first copies its part of the block for j into j's scratch
 * slot and only then grants j, who writes where that part was; the next round's copy into the
 * slot waits for the write that reads it (the executor's same-queue dependencies).
 *
 * Over the formula alpha + (p-1)/p n beta (n = p * count * esize, every rank's p - 1 blocks leave
 * at once), this adds: one READY per pair and round before the writes; ceil(count / slice) writes
 * per block; with fewer send queues than peers, ceil((p-1) / S) blocks in a row per queue; out of
 * place a local copy of n/p bytes (on a spare queue, overlapping the writes); in place a copy of
 * every outgoing part before its round. */

static ncl_result prepare(ncl_plan *p)
{
    ncl_mesh_derive(p);
    ncl_mesh_layout(p, !p->inplace);
    return p->count > 0 && ncl_a2a_rounds(p) == 0 ? NCL_ERR_UNSUPPORTED : NCL_SUCCESS;
}

/* Generator state: i = round, j = index d, k = element offset of the current write, n = the
 * round's part of our block for that peer (alltoallv: blocks differ, and a part may be empty). */
static int next(const ncl_plan *p, uint32_t q, ncl_gen *g, ncl_task *t)
{
    const int r = p->rank, np = p->nranks;
    const uint64_t es = p->esize, sl = p->slice_elems;
    const uint32_t sq = ncl_mesh_send_queues(p);

    NCL_GEN_BEGIN(g);
    if (p->count == 0)
        return g->line = -1, 0;
    if (q < sq) {
        g->d[0] = ncl_a2a_rounds(p);
        g->d[1] = ncl_a2a_round_elems(p);
        for (g->i = 0; g->i < g->d[0]; g->i++) {
            /* grant each peer of this queue its round (in place once our part for it is safe) */
            for (g->j = q + 1; g->j < (uint64_t)np; g->j += sq) {
                g->n = ncl_a2a_part(p, ncl_a2a_len(p, r, ncl_mesh_peer_to(p, g->j)), g->i);
                for (g->k = 0; p->inplace && g->k < g->n; g->k += sl) {
                    ncl_task_copy(t, ncl_a2a_block(p, ncl_mesh_peer_to(p, g->j), g->i * g->d[1] + g->k),
                                  ncl_ref_add(ncl_a2a_slot(p, g->j), g->k * es), ncl_min_u64(sl, g->n - g->k) * es,
                                  (uint32_t)g->i);
                    NCL_YIELD(g);
                }
                ncl_task_record(t, ncl_mesh_peer_to(p, g->j), NCL_NOTIFY_READY(0), (uint32_t)g->i);
                NCL_YIELD(g);
            }
            /* our part of the round to each of them, as each grants it */
            for (g->j = q + 1; g->j < (uint64_t)np; g->j += sq) {
                ncl_task_wait(t, ncl_mesh_peer_to(p, g->j), NCL_NOTIFY_READY(0), 1, (uint32_t)g->i);
                NCL_YIELD(g);
                g->n = ncl_a2a_part(p, ncl_a2a_len(p, r, ncl_mesh_peer_to(p, g->j)), g->i);
                for (g->k = 0; g->k < g->n; g->k += sl) {
                    ncl_task_write(t, ncl_mesh_peer_to(p, g->j),
                                   ncl_ref_add(ncl_a2a_source(p, ncl_mesh_peer_to(p, g->j), g->j, g->i * g->d[1]), g->k * es),
                                   ncl_a2a_output(p, r, ncl_mesh_peer_to(p, g->j), g->i * g->d[1] + g->k),
                                   ncl_min_u64(sl, g->n - g->k) * es, (uint32_t)g->i);
                    NCL_YIELD(g);
                }
            }
        }
        for (g->j = q + 1; g->j < (uint64_t)np; g->j += sq) {
            ncl_task_post(t, ncl_mesh_peer_to(p, g->j), NCL_NOTIFY_DATA(0), 1);
            NCL_YIELD(g);
        }
    }
    if (!p->inplace && q == ncl_mesh_local_queue(p)) { /* our own block */
        for (g->k = 0; g->k < ncl_a2a_len(p, r, r); g->k += sl) {
            ncl_task_copy(t, ncl_a2a_block(p, r, g->k), ncl_a2a_output(p, r, r, g->k),
                          ncl_min_u64(sl, ncl_a2a_len(p, r, r) - g->k) * es, 1);
            NCL_YIELD(g);
        }
    }
    if (q < sq) { /* the end: every block of this queue's peers has landed */
        for (g->j = q + 1; g->j < (uint64_t)np; g->j += sq) {
            ncl_task_wait(t, ncl_mesh_peer_to(p, g->j), NCL_NOTIFY_DATA(0), 1, 1);
            NCL_YIELD(g);
        }
    }
    NCL_GEN_END(g);
}

const ncl_algo_desc ncl_algo_mesh_alltoall = {"mesh", NCL_COLL_ALLTOALL, NCL_ALGO_MESH, prepare, next};
