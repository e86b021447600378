/* ring_allgather.c — ring allgather: each rank's block travels p-1 hops around the ring, split
 * over channels and cut into rounds of at most one slice. */
#include "ncl_algo.h"

/* recv holds nranks blocks of `count` elements; block k is rank k's input. Channel q runs on its
 * logical ring (ncl_ring_*): at step s position i forwards the block of the rank at position i-s
 * (step 0: its own) and receives the one of position i-1-s. No scratch and no reuse, so a single
 * READY handshake up front is enough. */

/* Elements of each block the round moves, of the channel's portion [coff, coff + span); *off =
 * first element within a block. */
static uint64_t round_span(const ncl_plan *p, uint64_t span, uint64_t coff, uint64_t round, uint64_t *off)
{
    uint64_t lo = round * p->slice_elems;
    *off = coff + lo;
    return lo >= span ? 0 : ncl_min_u64(p->slice_elems, span - lo);
}

static ncl_ref block(const ncl_plan *p, int k, uint64_t off)
{
    return ncl_ref_make(NCL_BUF_RECV, ((uint64_t)k * p->count + off) * p->esize);
}

static ncl_result prepare(ncl_plan *p)
{
    p->queues = ncl_channels_for(p->queues, p->count);
    p->segments = 1;
    return NCL_SUCCESS;
}

static int next(const ncl_plan *p, uint32_t q, ncl_gen *g, ncl_task *t)
{
    const int r = p->rank, n = p->nranks, i = ncl_ring_pos(p, q, r);
    const int next_rank = ncl_ring_rank(p, q, i + 1), prev_rank = ncl_ring_rank(p, q, i - 1);
    const uint64_t es = p->esize, steps = (uint64_t)(n - 1);
    uint64_t off, len;

    NCL_GEN_BEGIN(g);
    /* the channel's portion, once (a weighted split costs a loop): n elements from k */
    g->n = ncl_channel_part(p, p->count, p->queues, q, &g->k);
    if (g->n == 0)
        return g->line = -1, 0;
    /* prologue: our own block into place, then let prev write the others */
    for (g->m = 0; !p->inplace && g->m < g->n; g->m += p->slice_elems) {
        ncl_task_copy(t, ncl_ref_add(ncl_plan_input(p, r), (g->k + g->m) * es), block(p, r, g->k + g->m),
                      ncl_min_u64(p->slice_elems, g->n - g->m) * es, 0);
        NCL_YIELD(g);
    }
    if (n == 1)
        return g->line = -1, 0;
    ncl_task_record(t, prev_rank, NCL_NOTIFY_READY(q), 0);
    NCL_YIELD(g);
    ncl_task_wait(t, next_rank, NCL_NOTIFY_READY(q), 1, 0);
    NCL_YIELD(g);
    for (g->i = 0; round_span(p, g->n, g->k, g->i, &off) != 0; g->i++) {
        /* step s: forward position i-s's block (step 0: ours), then wait for i-1-s's from prev */
        for (g->j = 0; g->j < steps; g->j++) {
            len = round_span(p, g->n, g->k, g->i, &off);
            ncl_task_write(t, next_rank, block(p, ncl_ring_rank(p, q, i - (int64_t)g->j), off),
                           block(p, ncl_ring_rank(p, q, i - (int64_t)g->j), off), len * es,
                           (uint32_t)(g->i * steps + g->j));
            NCL_YIELD(g);
            ncl_task_record(t, next_rank, NCL_NOTIFY_DATA(q), (uint32_t)(g->i * steps + g->j));
            NCL_YIELD(g);
            ncl_task_wait(t, prev_rank, NCL_NOTIFY_DATA(q), 1, (uint32_t)(g->i * steps + g->j));
            NCL_YIELD(g);
        }
    }
    NCL_GEN_END(g);
}

const ncl_algo_desc ncl_algo_ring_allgather = {"ring", NCL_COLL_ALLGATHER, NCL_ALGO_RING, prepare, next};
