/* ring_allreduce.c — ring allreduce: reduce-scatter then allgather around the ring, with inline
 * reduce at the destination, split over channels and cut into rounds of at most one slice. */
#include "ncl_algo.h"

/* Layout: the buffer is split into one contiguous portion per channel (queue); each portion is
 * split into nranks chunks; each round moves at most slice_elems of every chunk. Channel c runs
 * on its logical ring (ncl_ring_*); below, i is a rank's position on it and chunk k the k-th.
 * Position i sends chunk i-1-s at reduce-scatter step s and so ends holding the fully reduced
 * chunk i, which it sends first in the allgather. Only chunk i-1 of position i is never reduced
 * into (it is sent straight from the input at step 0), so out of place every other chunk is
 * pre-copied to recv. */

static uint64_t channel_span(const ncl_plan *p, uint32_t q, uint64_t *off)
{
    return ncl_channel_part(p, p->count, p->queues, q, off);
}

/* Elements of chunk k that round `round` moves, in the channel portion [coff, coff + span);
 * *off gets the first element (absolute). */
static uint64_t chunk_round(const ncl_plan *p, uint64_t span, uint64_t coff, int k, uint64_t round,
                            uint64_t *off)
{
    uint64_t koff;
    uint64_t klen = ncl_part(span, (uint64_t)p->nranks, (uint64_t)k, &koff);
    uint64_t lo = round * p->slice_elems;
    *off = coff + koff + lo;
    return lo >= klen ? 0 : ncl_min_u64(p->slice_elems, klen - lo);
}

/* Out-of-place pre-copy: part 0 is the channel span before chunk i-1, part 1 the span after it
 * (on one rank: the whole span, and nothing). */
static uint64_t precopy_part(const ncl_plan *p, uint32_t q, uint64_t part, uint64_t *off)
{
    uint64_t coff, koff;
    uint64_t span = channel_span(p, q, &coff);
    if (p->nranks == 1) {
        *off = coff;
        return part == 0 ? span : 0;
    }
    int skip = ncl_mod(ncl_ring_pos(p, q, p->rank) - 1, p->nranks);
    uint64_t klen = ncl_part(span, (uint64_t)p->nranks, (uint64_t)skip, &koff);
    if (part == 0) {
        *off = coff;
        return koff;
    }
    *off = coff + koff + klen;
    return span - koff - klen;
}

/* Staged reduce-scatter, for a DMA that cannot reduce some task inline (ncl_inline_ok): such a
 * task writes into one of two scratch slots of the receiver's channel instead, and the receiver
 * reduces the slot into its chunk (LOCAL_REDUCE) before it sends that chunk on. A slot is
 * written again two steps later, once the receiver has recorded that it emptied it (READY, one
 * per step from the third on, every step of the plan alike so that records match waits). */
static int staged(const ncl_plan *p)
{
    return p->nranks > 1 && !ncl_inline_all(p);
}

static ncl_ref slot(const ncl_plan *p, uint32_t q, uint64_t use)
{
    return ncl_ref_make(NCL_BUF_SCRATCH, (2u * q + use % 2u) * p->slice_elems * p->esize);
}

static ncl_result prepare(ncl_plan *p)
{
    /* Every channel needs at least one element per rank to be worth a queue. */
    p->queues = ncl_channels_for(p->queues, p->count / (uint64_t)p->nranks);
    p->segments = 1;
    if (staged(p)) { /* two slots per channel bound the slice */
        uint64_t room = p->scratch_bytes / (2u * p->queues * p->esize);
        p->slice_elems = ncl_min_u64(p->slice_elems, room);
        if (p->slice_elems == 0)
            return NCL_ERR_UNSUPPORTED;
    }
    return NCL_SUCCESS;
}

/* Generator state: n = the channel portion's length, m = its first element (set once: they
 * cost divisions), i = round, j = step (k, j: the pre-copy's part and position; k: the staged
 * reduce-scatter's step count over all rounds). */
static int next(const ncl_plan *p, uint32_t q, ncl_gen *g, ncl_task *t)
{
    const int r = p->rank, n = p->nranks, i = ncl_ring_pos(p, q, r);
    const int next_rank = ncl_ring_rank(p, q, i + 1), prev_rank = ncl_ring_rank(p, q, i - 1);
    const uint64_t es = p->esize, steps = 2u * (uint64_t)(n - 1);
    const ncl_ref in = ncl_plan_input(p, r), recv = ncl_ref_make(NCL_BUF_RECV, 0);
    uint64_t off, len;

    NCL_GEN_BEGIN(g);
    g->n = channel_span(p, q, &g->m);
    if (g->n == 0)
        return g->line = -1, 0;
    /* prologue: fill recv with our own contributions (one rank: that is all there is to do),
     * then tell prev it may reduce into it; copies are cut into slices like every task */
    if (!p->inplace) {
        for (g->k = 0; g->k < 2; g->k++) {
            for (g->j = 0; g->j < precopy_part(p, q, g->k, &off); g->j += p->slice_elems) {
                len = ncl_min_u64(p->slice_elems, precopy_part(p, q, g->k, &off) - g->j);
                ncl_task_copy(t, ncl_ref_add(in, (off + g->j) * es),
                              ncl_ref_add(recv, (off + g->j) * es), len * es, 0);
                NCL_YIELD(g);
            }
        }
    }
    if (n == 1)
        return g->line = -1, 0;
    ncl_task_record(t, prev_rank, NCL_NOTIFY_READY(q), 0);
    NCL_YIELD(g);
    ncl_task_wait(t, next_rank, NCL_NOTIFY_READY(q), 1, 0);
    NCL_YIELD(g);

    g->k = ncl_div_ceil(ncl_div_ceil(g->n, (uint64_t)n), p->slice_elems) * (uint64_t)(n - 1);
    for (g->i = 0; g->i < ncl_div_ceil(ncl_div_ceil(g->n, (uint64_t)n), p->slice_elems); g->i++) {
        /* reduce-scatter, step s: reduce chunk i-1-s into next's copy; step 0 reads our input */
        for (g->j = 0; g->j < (uint64_t)(n - 1); g->j++) {
            if (staged(p) && g->i * (uint64_t)(n - 1) + g->j >= 2) { /* next emptied our slot */
                ncl_task_wait(t, next_rank, NCL_NOTIFY_READY(q), 1, (uint32_t)(g->i * steps + g->j));
                NCL_YIELD(g);
            }
            len = chunk_round(p, g->n, g->m, ncl_mod(i - 1 - (int)g->j, n), g->i, &off);
            if (len) {
                if (ncl_inline_ok(p, off * es, off * es, len * es))
                    ncl_task_write_reduce(t, p, next_rank, ncl_ref_add(g->j == 0 ? in : recv, off * es),
                                          ncl_ref_add(recv, off * es), len * es,
                                          (uint32_t)(g->i * steps + g->j));
                else
                    ncl_task_write(t, next_rank, ncl_ref_add(g->j == 0 ? in : recv, off * es),
                                   slot(p, q, g->i * (uint64_t)(n - 1) + g->j), len * es,
                                   (uint32_t)(g->i * steps + g->j));
                NCL_YIELD(g);
            }
            ncl_task_record(t, next_rank, NCL_NOTIFY_DATA(q), (uint32_t)(g->i * steps + g->j));
            NCL_YIELD(g);
            ncl_task_wait(t, prev_rank, NCL_NOTIFY_DATA(q), 1, (uint32_t)(g->i * steps + g->j));
            NCL_YIELD(g);
            if (staged(p)) {
                /* prev sent chunk i-2-s: into our copy, or into the slot we now reduce */
                len = chunk_round(p, g->n, g->m, ncl_mod(i - 2 - (int)g->j, n), g->i, &off);
                if (len && !ncl_inline_ok(p, off * es, off * es, len * es)) {
                    ncl_task_reduce(t, p, slot(p, q, g->i * (uint64_t)(n - 1) + g->j),
                                    ncl_ref_add(recv, off * es), len * es, (uint32_t)(g->i * steps + g->j));
                    NCL_YIELD(g);
                }
                if (g->i * (uint64_t)(n - 1) + g->j + 2 < g->k) {
                    ncl_task_record(t, prev_rank, NCL_NOTIFY_READY(q), (uint32_t)(g->i * steps + g->j));
                    NCL_YIELD(g);
                }
            }
        }
        /* chunk i is now reduced over all ranks: finish avg once, before it is gathered */
        if (p->avg) {
            len = chunk_round(p, g->n, g->m, i, g->i, &off);
            if (len) {
                ncl_task_div(t, p, ncl_ref_add(recv, off * es), len * es,
                             (uint32_t)(g->i * steps + (uint64_t)n - 1));
                NCL_YIELD(g);
            }
        }
        /* allgather, step s: copy chunk i-s to next (step 0: our reduced chunk) */
        for (g->j = 0; g->j < (uint64_t)(n - 1); g->j++) {
            len = chunk_round(p, g->n, g->m, ncl_mod(i - (int)g->j, n), g->i, &off);
            if (len) {
                ncl_task_write(t, next_rank, ncl_ref_add(recv, off * es), ncl_ref_add(recv, off * es),
                               len * es, (uint32_t)(g->i * steps + (uint64_t)n - 1 + g->j));
                NCL_YIELD(g);
            }
            ncl_task_record(t, next_rank, NCL_NOTIFY_DATA(q),
                            (uint32_t)(g->i * steps + (uint64_t)n - 1 + g->j));
            NCL_YIELD(g);
            ncl_task_wait(t, prev_rank, NCL_NOTIFY_DATA(q), 1,
                          (uint32_t)(g->i * steps + (uint64_t)n - 1 + g->j));
            NCL_YIELD(g);
        }
    }
    NCL_GEN_END(g);
}

const ncl_algo_desc ncl_algo_ring_allreduce = {"ring", NCL_COLL_ALLREDUCE, NCL_ALGO_RING, prepare, next};
