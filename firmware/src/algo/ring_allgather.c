/* ring_allgather.c — ring allgather: each rank's block travels p-1 hops around the ring, split
 * over channels and cut into rounds of at most one slice. */
#include "ncl_algo.h"

/* recv holds nranks blocks of `count` elements; block k is rank k's input. Channel c runs on its
 * logical ring (ncl_ring_*): at step s position i forwards the block of the rank at position i-s
 * (step 0: its own, read from its input) and receives the one of position i-1-s. No scratch and
 * no reuse, so a single READY handshake up front is enough.
 *
 * Out of place our own block must also land in our recv, but nothing in the ring reads it there
 * (step 0 sends from the input) and nobody writes it (we receive every block but ours), so the
 * copy input -> recv has no dependency at all. With room for twice the channels (queues and DMA
 * engines: ncl_helper_room), channel c's copy runs on a helper queue (channels + c) beside the
 * ring and costs nothing on the critical path.
 * Without that room the ring queue copies between its READY record (prev is not held up) and its
 * wait for next's READY, where it overlaps that notify's latency. In place the block is already
 * there (the input is its place in recv). Every copy moves at most one slice. */

/* Ring queues: the plan's queues without the copy queues. */
static uint32_t channels_of(const ncl_plan *p)
{
    return p->queues - p->helper_queues;
}

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
    uint32_t c = ncl_channels_for(p->queues, p->count);
    p->segments = 1;
    /* channel c copies its part of our block on queue c + channels */
    p->helper_queues = !p->inplace && p->nranks > 1 && ncl_helper_room(p, c) ? c : 0;
    p->queues = c + p->helper_queues;
    return NCL_SUCCESS;
}

/* Generator state: [k, k + n) = the channel's portion of a block, m = copy offset in it,
 * i = unit of the ring (ncl_round_step), j = its step. */
static int next(const ncl_plan *p, uint32_t q, ncl_gen *g, ncl_task *t)
{
    const uint32_t channels = channels_of(p), c = q % channels;
    const int r = p->rank, n = p->nranks, i = ncl_ring_pos(p, c, r), copy_queue = q >= channels;
    const int next_rank = ncl_ring_rank(p, c, i + 1), prev_rank = ncl_ring_rank(p, c, i - 1);
    const uint64_t es = p->esize, steps = (uint64_t)(n - 1);
    const ncl_ref in = ncl_plan_input(p, r);
    uint64_t off, len, round;
    ncl_ref dst;

    NCL_GEN_BEGIN(g);
    /* the channel's portion, once (a weighted split costs a loop): n elements from k */
    g->n = ncl_channel_part(p, p->count, channels, c, &g->k);
    if (g->n == 0)
        return g->line = -1, 0;
    if (!copy_queue && n > 1) { /* let prev write the other blocks */
        ncl_task_record(t, prev_rank, NCL_NOTIFY_READY(c), 0);
        NCL_YIELD(g);
    }
    /* out of place: our own block into place (on the copy queue, if there is one) */
    for (g->m = 0; !p->inplace && copy_queue == (p->helper_queues != 0) && g->m < g->n;
         g->m += p->slice_elems) {
        ncl_task_copy(t, ncl_ref_add(in, (g->k + g->m) * es), block(p, r, g->k + g->m),
                      ncl_min_u64(p->slice_elems, g->n - g->m) * es, 0);
        NCL_YIELD(g);
    }
    if (copy_queue || n == 1)
        return g->line = -1, 0;
    ncl_task_wait(t, next_rank, NCL_NOTIFY_READY(c), 1, 0);
    NCL_YIELD(g);
    /* step s: forward position i-s's block (step 0: ours, from the input; in place the input is
     * our block), then wait for i-1-s's from prev; rounds in ncl_round_step's order */
    for (g->i = 0; g->i < ncl_div_ceil(g->n, p->slice_elems) * steps; g->i++) {
        ncl_round_step(p, g->i, ncl_div_ceil(g->n, p->slice_elems), steps, &round, &g->j);
        len = round_span(p, g->n, g->k, round, &off);
        dst = block(p, ncl_ring_rank(p, c, i - (int64_t)g->j), off);
        ncl_task_write(t, next_rank, g->j == 0 ? ncl_ref_add(in, off * es) : dst, dst, len * es,
                       (uint32_t)(round * steps + g->j));
        NCL_YIELD(g);
        if (ncl_round_step(p, g->i, ncl_div_ceil(g->n, p->slice_elems), steps, &round, &g->j)) {
            ncl_task_record(t, next_rank, NCL_NOTIFY_DATA(c), (uint32_t)(round * steps + g->j));
            NCL_YIELD(g);
            ncl_round_step(p, g->i, ncl_div_ceil(g->n, p->slice_elems), steps, &round, &g->j);
            ncl_task_wait(t, prev_rank, NCL_NOTIFY_DATA(c), 1, (uint32_t)(round * steps + g->j));
            NCL_YIELD(g);
        }
    }
    NCL_GEN_END(g);
}

const ncl_algo_desc ncl_algo_ring_allgather = {"ring", NCL_COLL_ALLGATHER, NCL_ALGO_RING, prepare, next};
