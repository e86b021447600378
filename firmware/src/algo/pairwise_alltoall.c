/* pairwise_alltoall.c — pairwise-exchange alltoall: p - 1 steps, each rank sending to one peer and
 * receiving from one per step, so no rank takes more than one block at a time (no incast). */
#include "ncl_a2a.h"

/* Schedule, on queue 0. Step k = 1..p-1 of round i: grant rank r-k its READY (it may write into
 * our recv block r-k), wait for rank r+k's, write our block r+k into its recv block r in writes
 * of at most a slice, record DATA behind them, and wait for r-k's DATA before the next step (the
 * exchange stays one peer at a time). Out of place queue 1, when there is one, copies our own
 * block meanwhile (else queue 0 does, first). In place (ncl_a2a.h) a round copies its part of
 * every outgoing block into that peer's scratch slot (index k) before its first grant.
 *
 * Over the formula (p-1)(alpha + n/p beta) (n = p * count * esize), this adds: one READY per
 * step and round; ceil(count / slice) writes per block; out of place a local copy of n/p bytes
 * (overlapping the steps on queue 1); in place a copy of every outgoing part before its round. */

static ncl_result prepare(ncl_plan *p)
{
    p->segments = 1;
    p->helper_queues = 0;
    p->queues = !p->inplace && p->nranks > 1 && p->max_queues >= 2 ? 2u : 1u;
    return p->count > 0 && ncl_a2a_rounds(p) == 0 ? NCL_ERR_UNSUPPORTED : NCL_SUCCESS;
}

/* The rank k places after us (k may be negative). */
static int peer_at(const ncl_plan *p, int64_t k)
{
    return ncl_mod((int64_t)p->rank + k, p->nranks);
}

/* Generator state: i = round, j = step k, k = element offset of the current write or copy, n =
 * the round's part of the block at hand (alltoallv: blocks differ, and a part may be empty). */
static int next(const ncl_plan *p, uint32_t q, ncl_gen *g, ncl_task *t)
{
    const int r = p->rank, np = p->nranks;
    const uint64_t es = p->esize, sl = p->slice_elems;

    NCL_GEN_BEGIN(g);
    if (p->count == 0)
        return g->line = -1, 0;
    if (!p->inplace && q + 1 == p->queues) { /* our own block: on queue 1, or first on queue 0 */
        for (g->k = 0; g->k < ncl_a2a_len(p, r, r); g->k += sl) {
            ncl_task_copy(t, ncl_a2a_block(p, r, g->k), ncl_a2a_output(p, r, r, g->k),
                          ncl_min_u64(sl, ncl_a2a_len(p, r, r) - g->k) * es, 0);
            NCL_YIELD(g);
        }
    }
    if (q == 0) {
        g->d[0] = ncl_a2a_rounds(p);
        g->d[1] = ncl_a2a_round_elems(p);
        for (g->i = 0; g->i < g->d[0]; g->i++) {
            for (g->j = 1; p->inplace && g->j < (uint64_t)np; g->j++) {
                g->n = ncl_a2a_part(p, ncl_a2a_len(p, r, peer_at(p, (int64_t)g->j)), g->i);
                for (g->k = 0; g->k < g->n; g->k += sl) {
                    ncl_task_copy(t, ncl_a2a_block(p, peer_at(p, (int64_t)g->j), g->i * g->d[1] + g->k),
                                  ncl_ref_add(ncl_a2a_slot(p, g->j), g->k * es), ncl_min_u64(sl, g->n - g->k) * es,
                                  (uint32_t)g->j);
                    NCL_YIELD(g);
                }
            }
            for (g->j = 1; g->j < (uint64_t)np; g->j++) {
                ncl_task_record(t, peer_at(p, -(int64_t)g->j), NCL_NOTIFY_READY(0), (uint32_t)g->j);
                NCL_YIELD(g);
                ncl_task_wait(t, peer_at(p, (int64_t)g->j), NCL_NOTIFY_READY(0), 1, (uint32_t)g->j);
                NCL_YIELD(g);
                g->n = ncl_a2a_part(p, ncl_a2a_len(p, r, peer_at(p, (int64_t)g->j)), g->i);
                for (g->k = 0; g->k < g->n; g->k += sl) {
                    ncl_task_write(t, peer_at(p, (int64_t)g->j),
                                   ncl_ref_add(ncl_a2a_source(p, peer_at(p, (int64_t)g->j), g->j,
                                                              g->i * g->d[1]),
                                               g->k * es),
                                   ncl_a2a_output(p, r, peer_at(p, (int64_t)g->j), g->i * g->d[1] + g->k),
                                   ncl_min_u64(sl, g->n - g->k) * es, (uint32_t)g->j);
                    NCL_YIELD(g);
                }
                ncl_task_post(t, peer_at(p, (int64_t)g->j), NCL_NOTIFY_DATA(0), (uint32_t)g->j);
                NCL_YIELD(g);
                ncl_task_wait(t, peer_at(p, -(int64_t)g->j), NCL_NOTIFY_DATA(0), 1, (uint32_t)g->j);
                NCL_YIELD(g);
            }
        }
    }
    NCL_GEN_END(g);
}

const ncl_algo_desc ncl_algo_pairwise_alltoall = {"pairwise", NCL_COLL_ALLTOALL, NCL_ALGO_PAIRWISE, prepare, next};
