/* chain_broadcast.c — pipelined chain broadcast: each channel's part of the buffer runs down its
 * logical ring from the root, cut into segments whose number comes from the alpha-beta cost model. */
#include "ncl_algo.h"

/* Layout: the buffer is split into one portion per channel (queue); channel c's chain is its ring
 * (ncl_ring_*) read from the root on: position v = ring position - root's position (mod p) is a
 * rank's place in that chain. Segment s of a portion is part s of ncl_part(portion, segments).
 * Every segment lands in the same place of every recv buffer, so one READY per receiver and
 * channel covers the whole collective (no region is written twice) and the pipeline never stalls
 * on credits: position v forwards segment s while v-1 already sends s+1. With channels on
 * link-disjoint rings (the 8-NPU server's four) the chains run side by side at full bandwidth. */

static ncl_result prepare(ncl_plan *p)
{
    p->segments = 1;
    if (p->slice_elems == 0 || p->esize == 0)
        return NCL_ERR_INVALID_ARGUMENT;
    p->queues = ncl_channels_for(p->queues, p->count);
    if (p->count == 0)
        return NCL_SUCCESS;
    /* segments for one channel's portion (the largest, weights may make them unequal); no task
     * may move more than a slice */
    ncl_plan portion = *p;
    uint64_t off;
    portion.count = 0;
    for (uint32_t q = 0; q < p->queues; q++) {
        uint64_t len = ncl_channel_part(p, p->count, p->queues, q, &off);
        portion.count = len > portion.count ? len : portion.count;
    }
    ncl_result rc = ncl_pipeline_prepare(&portion, p->slice_elems);
    p->segments = portion.segments;
    return rc;
}

/* Elements of segment s of channel q's portion; its first element in *off. May be 0 when the
 * portion is shorter than the segment count (the DATA record still marks the step). */
static uint64_t seg(const ncl_plan *p, uint32_t q, uint64_t s, uint64_t *off)
{
    uint64_t coff, soff, len = ncl_part(ncl_channel_part(p, p->count, p->queues, q, &coff), p->segments, s, &soff);
    *off = coff + soff;
    return len;
}

static int next(const ncl_plan *p, uint32_t q, ncl_gen *g, ncl_task *t)
{
    const int n = p->nranks, r = p->rank, root_pos = ncl_ring_pos(p, q, p->root);
    const int v = ncl_mod((int64_t)ncl_ring_pos(p, q, r) - root_pos, n); /* the root is 0 */
    const int prev = ncl_ring_rank(p, q, (int64_t)root_pos + v - 1);
    const int nxt = ncl_ring_rank(p, q, (int64_t)root_pos + v + 1);
    const uint64_t es = p->esize, k = p->segments;
    const ncl_ref in = ncl_plan_input(p, r), recv = ncl_ref_make(NCL_BUF_RECV, 0);
    const uint32_t data = NCL_NOTIFY_DATA(q), ready = NCL_NOTIFY_READY(q);
    uint64_t off, len;

    NCL_GEN_BEGIN(g);
    if (p->count == 0 || (n == 1 && p->inplace))
        return g->line = -1, 0;

    if (v == 0) {
        /* root. step 0: wait until the next in the chain has bound its recv (it may take every
         * segment) */
        if (n > 1) {
            ncl_task_wait(t, nxt, ready, 1, 0);
            NCL_YIELD(g);
        }
        for (g->i = 0; g->i < k; g->i++) {
            /* step s: push segment s from our input to next, tell it, then keep our own copy
             * (out of place: recv must hold the result too; the copy overlaps next's forward) */
            if (n > 1) {
                if ((len = seg(p, q, g->i, &off)) != 0) {
                    ncl_task_write(t, nxt, ncl_ref_add(in, off * es), ncl_ref_add(recv, off * es),
                                   len * es, (uint32_t)g->i);
                    NCL_YIELD(g);
                }
                ncl_task_record(t, nxt, data, (uint32_t)g->i);
                NCL_YIELD(g);
            }
            if (!p->inplace && (len = seg(p, q, g->i, &off)) != 0) {
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
        if ((len = seg(p, q, g->i, &off)) != 0) {
            ncl_task_write(t, nxt, ncl_ref_add(recv, off * es), ncl_ref_add(recv, off * es),
                           len * es, (uint32_t)g->i);
            NCL_YIELD(g);
        }
        ncl_task_record(t, nxt, data, (uint32_t)g->i);
        NCL_YIELD(g);
    }
    NCL_GEN_END(g);
}

const ncl_algo_desc ncl_algo_chain_broadcast = {"chain", NCL_COLL_BROADCAST, NCL_ALGO_CHAIN,
                                                prepare, next};
