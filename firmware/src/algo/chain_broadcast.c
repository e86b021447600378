/* chain_broadcast.c — pipelined chain broadcast: each channel's part of the buffer runs down its
 * logical ring from the root, cut into segments whose number comes from the alpha-beta cost model. */
#include "ncl_algo.h"

/* Layout: the buffer is split into one portion per channel (queue); channel c's chain is its ring
 * (ncl_ring_*) read from the root on: position v = ring position - root's position (mod p) is a
 * rank's place in that chain. Segment s of a portion is part s of ncl_part(portion, segments).
 * Every segment lands in the same place of every recv buffer, so one READY per receiver and
 * channel covers the whole collective (no region is written twice) and the pipeline never stalls
 * on credits: position v forwards segment s while v-1 already sends s+1. With channels on
 * link-disjoint rings (the 8-NPU server's four) the chains run side by side at full bandwidth.
 *
 * Out of place the root's recv must hold the result too. Its writes read the input and nobody
 * writes or reads its recv, so that copy input -> recv depends on nothing: with room for twice
 * the channels (queues and DMA engines: ncl_helper_room), channel c's part is copied on a helper queue (channels + c) beside the writes and
 * the pipeline's head issues a segment every alpha + s beta, as the formula has it. Without that
 * room the root copies each segment after its write, while next forwards it (a copy at the end
 * would wait for the whole pipeline on a device with one DMA engine). Copies move at most a
 * slice each. */

static ncl_result prepare(ncl_plan *p)
{
    p->segments = 1;
    if (p->slice_elems == 0 || p->esize == 0)
        return NCL_ERR_INVALID_ARGUMENT;
    uint32_t channels = ncl_channels_for(p->queues, p->count);
    /* the root's channel c copies its part of the input on queue channels + c */
    p->helper_queues = !p->inplace && p->nranks > 1 && p->count != 0 && ncl_helper_room(p, channels)
                           ? channels : 0;
    p->queues = channels + p->helper_queues;
    if (p->count == 0)
        return NCL_SUCCESS;
    /* segments for one channel's portion (the largest, weights may make them unequal); no task
     * may move more than a slice */
    ncl_plan portion = *p;
    uint64_t off;
    portion.count = 0;
    for (uint32_t q = 0; q < channels; q++) {
        uint64_t len = ncl_channel_part(p, p->count, channels, q, &off);
        portion.count = len > portion.count ? len : portion.count;
    }
    ncl_result rc = ncl_pipeline_prepare(&portion, p->slice_elems);
    p->segments = portion.segments;
    return rc;
}

/* Chain queues: the plan's queues without the copy queues. */
static uint32_t channels_of(const ncl_plan *p)
{
    return p->queues - p->helper_queues;
}

/* Elements of segment s of channel c's portion; its first element in *off. May be 0 when the
 * portion is shorter than the segment count (the DATA record still marks the step). */
static uint64_t seg(const ncl_plan *p, uint32_t c, uint64_t s, uint64_t *off)
{
    uint64_t coff, soff;
    uint64_t len = ncl_part(ncl_channel_part(p, p->count, channels_of(p), c, &coff), p->segments, s, &soff);
    *off = coff + soff;
    return len;
}

/* The root's copy input -> recv of channel c's portion from element m of it on, at most a slice,
 * as a task; 0 (no task) once the portion is done. */
static int copy_task(const ncl_plan *p, uint32_t c, uint64_t m, ncl_task *t)
{
    uint64_t coff, len = ncl_channel_part(p, p->count, channels_of(p), c, &coff);
    if (m >= len)
        return 0;
    ncl_task_copy(t, ncl_ref_add(ncl_plan_input(p, p->rank), (coff + m) * p->esize),
                  ncl_ref_make(NCL_BUF_RECV, (coff + m) * p->esize),
                  ncl_min_u64(p->slice_elems, len - m) * p->esize, 0);
    return 1;
}

/* Generator state: i = segment, m = copy offset in the channel's portion. */
static int next(const ncl_plan *p, uint32_t q, ncl_gen *g, ncl_task *t)
{
    const uint32_t c = q % channels_of(p);
    const int n = p->nranks, r = p->rank, root_pos = ncl_ring_pos(p, c, p->root);
    const int v = ncl_mod((int64_t)ncl_ring_pos(p, c, r) - root_pos, n); /* the root is 0 */
    const int prev = ncl_ring_rank(p, c, (int64_t)root_pos + v - 1);
    const int nxt = ncl_ring_rank(p, c, (int64_t)root_pos + v + 1);
    const uint64_t es = p->esize, k = p->segments;
    const ncl_ref in = ncl_plan_input(p, r), recv = ncl_ref_make(NCL_BUF_RECV, 0);
    const uint32_t data = NCL_NOTIFY_DATA(c), ready = NCL_NOTIFY_READY(c);
    uint64_t off, len;

    NCL_GEN_BEGIN(g);
    if (p->count == 0 || (n == 1 && p->inplace))
        return g->line = -1, 0;

    if (q >= channels_of(p)) {
        /* a copy queue: the root's own result, beside its writes */
        for (g->m = 0; v == 0 && copy_task(p, c, g->m, t); g->m += p->slice_elems)
            NCL_YIELD(g);
        return g->line = -1, 0;
    }

    if (v == 0) {
        /* root. step 0: wait until the next in the chain has bound its recv (it may take every
         * segment) */
        if (n > 1) {
            ncl_task_wait(t, nxt, ready, 1, 0);
            NCL_YIELD(g);
        }
        for (g->i = 0; n > 1 && g->i < k; g->i++) {
            /* step s: push segment s from our input to next, tell it */
            if ((len = seg(p, c, g->i, &off)) != 0) {
                ncl_task_write(t, nxt, ncl_ref_add(in, off * es), ncl_ref_add(recv, off * es),
                               len * es, (uint32_t)g->i);
                NCL_YIELD(g);
            }
            ncl_task_record(t, nxt, data, (uint32_t)g->i);
            NCL_YIELD(g);
            /* out of place without copy queues: keep segment s too, while next forwards it */
            if (!p->inplace && p->helper_queues == 0 && (len = seg(p, c, g->i, &off)) != 0) {
                ncl_task_copy(t, ncl_ref_add(in, off * es), ncl_ref_add(recv, off * es), len * es,
                              (uint32_t)g->i);
                NCL_YIELD(g);
            }
        }
        if (n == 1 && !p->inplace) /* alone: the copy is the whole collective */
            for (g->m = 0; copy_task(p, c, g->m, t); g->m += p->slice_elems)
                NCL_YIELD(g);
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
        if ((len = seg(p, c, g->i, &off)) != 0) {
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
