/* ring_reduce_scatter.c — ring reduce-scatter with inline reduce at the destination; partial sums
 * in flight live in per-channel scratch slots, pre-filled with the receiver's own contribution. */
#include "ncl_algo.h"

/* Rank r sends chunk r-1-s at step s (step 0 straight from its input) and receives chunk r-2-s;
 * the chunk received at the last step, p-2, is chunk r: its target is r's output, the targets of
 * earlier steps are scratch slots 0..p-3. Each round moves at most `round_elems` of every chunk
 * of the channel's portion and starts with a READY handshake, because the slots are reused. */

static uint64_t channel_span(const ncl_plan *p, uint32_t q, uint64_t *off)
{
    return ncl_part(p->count, p->queues, q, off);
}

static uint64_t scratch_per_channel(const ncl_plan *p)
{
    return p->scratch_bytes / p->queues / p->esize * p->esize;
}

static uint64_t round_elems(const ncl_plan *p)
{
    uint64_t slots = p->nranks > 2 ? (uint64_t)p->nranks - 2 : 0;
    uint64_t e = p->slice_elems;
    if (slots)
        e = ncl_min_u64(e, scratch_per_channel(p) / p->esize / slots);
    return e;
}

/* Elements the round moves per chunk; *off = first element within a chunk. */
static uint64_t round_span(const ncl_plan *p, uint32_t q, uint64_t round, uint64_t *off)
{
    uint64_t coff, span = channel_span(p, q, &coff), e = round_elems(p), lo = round * e;
    *off = coff + lo;
    return lo >= span ? 0 : ncl_min_u64(e, span - lo);
}

/* Where the chunk rank `rank` receives at step s accumulates, for round elements at `off`. */
static ncl_ref target(const ncl_plan *p, uint32_t q, int rank, uint64_t s, uint64_t off)
{
    if (s == (uint64_t)p->nranks - 2)
        return ncl_ref_add(ncl_plan_output(p, rank), off * p->esize);
    return ncl_ref_make(NCL_BUF_SCRATCH, q * scratch_per_channel(p) + s * round_elems(p) * p->esize);
}

static ncl_ref input_chunk(const ncl_plan *p, int k, uint64_t off)
{
    return ncl_ref_add(ncl_plan_input(p, p->rank), ((uint64_t)k * p->count + off) * p->esize);
}

static ncl_result prepare(ncl_plan *p)
{
    uint32_t q = p->queues;
    while (q > 1 && p->count < q)
        q--;
    p->queues = q;
    p->segments = 1;
    return round_elems(p) == 0 ? NCL_ERR_UNSUPPORTED : NCL_SUCCESS;
}

static int next(const ncl_plan *p, uint32_t q, ncl_gen *g, ncl_task *t)
{
    const int r = p->rank, n = p->nranks;
    const int next_rank = ncl_mod(r + 1, n), prev_rank = ncl_mod(r - 1, n);
    const uint64_t es = p->esize;
    uint64_t off, len, coff, span = channel_span(p, q, &coff);

    NCL_GEN_BEGIN(g);
    if (span == 0)
        return g->line = -1, 0;
    if (n == 1) {
        for (g->m = 0; !p->inplace && g->m < span; g->m += p->slice_elems) {
            ncl_task_copy(t, input_chunk(p, 0, coff + g->m),
                          ncl_ref_add(ncl_plan_output(p, r), (coff + g->m) * es),
                          ncl_min_u64(p->slice_elems, span - g->m) * es, 0);
            NCL_YIELD(g);
        }
        return g->line = -1, 0;
    }
    for (g->i = 0; (len = round_span(p, q, g->i, &off)) != 0; g->i++) {
        /* prologue: put our own contribution where each incoming partial will accumulate */
        for (g->j = 0; g->j < (uint64_t)(n - 1); g->j++) {
            len = round_span(p, q, g->i, &off);
            if (p->inplace && g->j == (uint64_t)n - 2)
                continue; /* our output already holds our contribution to chunk r */
            ncl_task_copy(t, input_chunk(p, ncl_mod(r - 2 - (int)g->j, n), off),
                          target(p, q, r, g->j, off), len * es, (uint32_t)(g->i * (uint64_t)(n - 1)));
            NCL_YIELD(g);
        }
        ncl_task_record(t, prev_rank, NCL_NOTIFY_READY(q), (uint32_t)(g->i * (uint64_t)(n - 1)));
        NCL_YIELD(g);
        ncl_task_wait(t, next_rank, NCL_NOTIFY_READY(q), 1, (uint32_t)(g->i * (uint64_t)(n - 1)));
        NCL_YIELD(g);
        /* step s: reduce chunk r-1-s into next's target for it (step 0 from our input) */
        for (g->j = 0; g->j < (uint64_t)(n - 1); g->j++) {
            len = round_span(p, q, g->i, &off);
            ncl_task_write_reduce(t, p, next_rank,
                                  g->j == 0 ? input_chunk(p, ncl_mod(r - 1, n), off)
                                            : target(p, q, r, g->j - 1, off),
                                  target(p, q, next_rank, g->j, off), len * es,
                                  (uint32_t)(g->i * (uint64_t)(n - 1) + g->j));
            NCL_YIELD(g);
            ncl_task_record(t, next_rank, NCL_NOTIFY_DATA(q), (uint32_t)(g->i * (uint64_t)(n - 1) + g->j));
            NCL_YIELD(g);
            ncl_task_wait(t, prev_rank, NCL_NOTIFY_DATA(q), 1, (uint32_t)(g->i * (uint64_t)(n - 1) + g->j));
            NCL_YIELD(g);
        }
        if (p->avg) {
            len = round_span(p, q, g->i, &off);
            ncl_task_div(t, p, target(p, q, r, (uint64_t)n - 2, off), len * es,
                         (uint32_t)(g->i * (uint64_t)(n - 1) + (uint64_t)n - 2));
            NCL_YIELD(g);
        }
    }
    NCL_GEN_END(g);
}

const ncl_algo_desc ncl_algo_ring_reduce_scatter = {"ring", NCL_COLL_REDUCE_SCATTER, NCL_ALGO_RING,
                                                    prepare, next};
