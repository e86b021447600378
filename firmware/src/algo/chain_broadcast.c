/* chain_broadcast.c — pipelined chain broadcast: root -> root+1 -> ... -> root-1, the buffer cut
 * into segments whose number comes from the alpha-beta cost model. */
#include "ncl_algo.h"

/* Layout: segment s is part s of ncl_part(count, segments). Position v = rank - root (mod p) is
 * the rank's place in the chain. Every segment lands in the same place of every recv buffer, so
 * one READY per receiver covers the whole collective (no region is written twice) and the
 * pipeline never stalls on credits: rank v forwards segment s while v-1 already sends s+1. */

static ncl_result prepare(ncl_plan *p)
{
    p->queues = 1;
    p->segments = 1;
    if (p->slice_elems == 0 || p->esize == 0)
        return NCL_ERR_INVALID_ARGUMENT;
    if (p->count == 0)
        return NCL_SUCCESS;
    /* no task may move more than a slice */
    return ncl_pipeline_prepare(p, p->slice_elems);
}

/* Elements of segment s; its first element in *off. */
static uint64_t seg(const ncl_plan *p, uint64_t s, uint64_t *off)
{
    return ncl_part(p->count, p->segments, s, off);
}

static int next(const ncl_plan *p, uint32_t q, ncl_gen *g, ncl_task *t)
{
    const int n = p->nranks, r = p->rank;
    const int v = ncl_mod((int64_t)r - p->root, n); /* place in the chain; the root is 0 */
    const int prev = ncl_mod((int64_t)r - 1, n), nxt = ncl_mod((int64_t)r + 1, n);
    const uint64_t es = p->esize, k = p->segments;
    const ncl_ref in = ncl_plan_input(p, r), recv = ncl_ref_make(NCL_BUF_RECV, 0);
    const uint32_t data = NCL_NOTIFY_DATA(q), ready = NCL_NOTIFY_READY(q);
    uint64_t off, len;

    NCL_GEN_BEGIN(g);
    if (p->count == 0 || (n == 1 && p->inplace))
        return g->line = -1, 0;

    if (v == 0) {
        /* root. step 0: wait until root+1 has bound its recv (it may take every segment) */
        if (n > 1) {
            ncl_task_wait(t, nxt, ready, 1, 0);
            NCL_YIELD(g);
        }
        for (g->i = 0; g->i < k; g->i++) {
            /* step s: push segment s from our input to next, tell it, then keep our own copy
             * (out of place: recv must hold the result too; the copy overlaps next's forward) */
            if (n > 1) {
                len = seg(p, g->i, &off);
                ncl_task_write(t, nxt, ncl_ref_add(in, off * es), ncl_ref_add(recv, off * es),
                               len * es, (uint32_t)g->i);
                NCL_YIELD(g);
                ncl_task_record(t, nxt, data, (uint32_t)g->i);
                NCL_YIELD(g);
            }
            if (!p->inplace) {
                len = seg(p, g->i, &off);
                ncl_task_copy(t, ncl_ref_add(in, off * es), ncl_ref_add(recv, off * es), len * es,
                              (uint32_t)g->i);
                NCL_YIELD(g);
            }
        }
        return g->line = -1, 0;
    }

    /* step 0: our recv is bound: prev may write every segment into it */
    ncl_task_record(t, prev, ready, 0);
    NCL_YIELD(g);
    if (v == n - 1) {
        /* end of the chain: just wait for all segments to have landed */
        ncl_task_wait(t, prev, data, (uint32_t)k, (uint32_t)(k - 1));
        NCL_YIELD(g);
        return g->line = -1, 0;
    }
    ncl_task_wait(t, nxt, ready, 1, 0);
    NCL_YIELD(g);
    for (g->i = 0; g->i < k; g->i++) {
        /* step s: receive segment s from prev, forward it from our recv to next */
        ncl_task_wait(t, prev, data, 1, (uint32_t)g->i);
        NCL_YIELD(g);
        len = seg(p, g->i, &off);
        ncl_task_write(t, nxt, ncl_ref_add(recv, off * es), ncl_ref_add(recv, off * es), len * es,
                       (uint32_t)g->i);
        NCL_YIELD(g);
        ncl_task_record(t, nxt, data, (uint32_t)g->i);
        NCL_YIELD(g);
    }
    NCL_GEN_END(g);
}

const ncl_algo_desc ncl_algo_chain_broadcast = {"chain", NCL_COLL_BROADCAST, NCL_ALGO_CHAIN,
                                                prepare, next};
