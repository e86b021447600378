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
 * Landing zones (ncl_zone_*): a receiver's READY travels back to its predecessor, p-1 links on a
 * one-way ring, and the root waits for it before its first write. Instead the first segments (as
 * many as a zone holds; when not even one fits, the first segment's head, if others follow) go into
 * the next
 * rank's zone on every link of the chain, which needs no READY, only the credit of the zone's use
 * two collectives ago; the READY has arrived by the time the rest follows. When every segment is
 * zoned, the last rank's copy of the last one follows the chain's end (a task, o + its copy),
 * still less than the READY's trip on a one-way ring. A rank forwards a zoned
 * segment from its zone into next's, and its helper queue copies it into recv: the ring queue
 * records LOCAL after each zoned segment's DATA wait and once more after the DATA record that
 * ends its forwards, the helper copies after each LOCAL and then credits the zone. Every rank
 * takes its successor's credit when one is due and credits its own zone once (the root's, which
 * nobody writes, at once), whatever its place in the chain, so that the credits balance for any
 * sequence of roots.
 *
 * Out of place the root's recv must hold the result too. Its writes read the input and nobody
 * writes or reads its recv, so that copy input -> recv depends on nothing: with room for twice
 * the channels (queues and DMA engines: ncl_helper_room), channel c's part is copied on a helper queue (channels + c) beside the writes and
 * the pipeline's head issues a segment every alpha + s beta, as the formula has it. Without that
 * room the root copies each segment after its write, while next forwards it (a copy at the end
 * would wait for the whole pipeline on a device with one DMA engine). Copies move at most a
 * slice each. */

/* Chain queues: the plan's queues without the copy queues. */
static uint32_t channels_of(const ncl_plan *p)
{
    return p->queues - p->helper_queues;
}

/* Elements of segment s of channel c's portion; its first element in *off. May be 0 when the
 * portion is shorter than the segment count (the DATA record still marks the step). */
static uint64_t seg_of(const ncl_plan *p, uint32_t channels, uint32_t c, uint64_t s, uint64_t *off)
{
    uint64_t coff, soff;
    uint64_t len = ncl_part(ncl_channel_part(p, p->count, channels, c, &coff), p->segments, s, &soff);
    *off = coff + soff;
    return len;
}

static uint64_t seg(const ncl_plan *p, uint32_t c, uint64_t s, uint64_t *off)
{
    return seg_of(p, channels_of(p), c, s, off);
}

/* A pair's send: two ranks of a bigger ring, whose READY comes the long way back (zone_hops). Only
 * sub-communicators make such pairs, so a board built without them (NCL_NO_SPLIT) leaves it out. */
#ifndef NCL_NO_SPLIT
#define PAIR_OF_A_RING(p) ((p)->nranks == 2 && (p)->zone_far)
#else
#define PAIR_OF_A_RING(p) 0
#endif

/* Channel c's zoned segments: the first `zoned` land in the zone in slots of slot_bytes; head > 0:
 * only the first `head` elements of the one zoned segment do (a segment larger than the zone). */
typedef struct zoning {
    uint64_t zoned, slot_bytes, head;
} zoning;

static zoning zoning_of(const ncl_plan *p, uint32_t channels, uint32_t c)
{
    zoning z = {0, 0, 0};
    uint64_t off, span = ncl_channel_part(p, p->count, channels, c, &off);
    z.slot_bytes = ncl_div_ceil(span, p->segments) * p->esize;
    z.zoned = ncl_zone_slots(p, c, z.slot_bytes, p->segments);
    /* a head needs a segment after it to hide its copy: one segment pays two writes and the copy;
     * but a pair's send has nothing else to keep the link busy while its READY comes the long way
     * back, and the receiver copies the head beside the rest's arrival */
    if (z.zoned == 0 && c < p->zone_channels && span && (p->segments > 1 || PAIR_OF_A_RING(p)) &&
        p->zone_bytes >= p->esize) {
        z.head = p->zone_bytes / p->esize;
        z.zoned = 1;
    }
    return z;
}
/* Elements of segment s (of len) that land in the zone. */
static uint64_t zoned_len(const zoning *z, uint64_t s, uint64_t len)
{
    return s >= z->zoned ? 0 : z->head ? ncl_min_u64(z->head, len) : len;
}

/* Every segment lands whole in the zone: no READY needed. */
static int all_zoned(const zoning *z, uint64_t segments)
{
    return z->zoned == segments && !z->head;
}

static ncl_result prepare(ncl_plan *p)
{
    p->segments = 1;
    if (p->slice_elems == 0 || p->esize == 0)
        return NCL_ERR_INVALID_ARGUMENT;
    uint32_t channels = ncl_channels_for(p->queues, p->count);
    const int room = p->nranks > 1 && p->count != 0 && ncl_helper_room(p, channels);
    /* zones only with a helper queue to copy out of them: on the chain queue each costs an issue */
    p->zone_channels = p->zone_bytes && room ? channels : 0;
    /* the root's channel c copies its part of the input on queue channels + c, as every rank's
     * copies out of its zone */
    p->helper_queues = room && (!p->inplace || p->zone_channels) ? channels : 0;
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
    int zoned = 0;
    for (uint32_t q = 0; q < p->zone_channels; q++)
        zoned |= zoning_of(p, channels, q).zoned > 0;
    if (!zoned) { /* the segments are too small to gain from zones (or there are none) */
        p->zone_channels = 0;
        p->helper_queues = room && !p->inplace ? channels : 0;
        p->queues = channels + p->helper_queues;
    }
    return rc;
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

/* The segment whose writes first reach next's recv, before which next's READY is waited for:
 * the first that is not zoned, or the head-split one; the segment count when all are zoned. */
static uint64_t first_recv(const ncl_plan *p, uint32_t c)
{
    const zoning z = zoning_of(p, channels_of(p), c);
    return all_zoned(&z, p->segments) ? p->segments : z.zoned - (z.head ? 1u : 0u);
}

/* Piece `piece` of segment s as a write to next: 0 = the part that lands in next's zone (from our
 * zone, or the root's input), 1 = the rest (recv to recv, or the root's input). 0: no such piece. */
static int chain_write(const ncl_plan *p, uint32_t c, uint64_t s, int piece, int root, int nxt, ncl_task *t)
{
    const zoning z = zoning_of(p, channels_of(p), c);
    uint64_t off;
    const uint64_t len = seg(p, c, s, &off), zl = zoned_len(&z, s, len), es = p->esize;
    const uint64_t lo = piece ? zl : 0, hi = piece ? len : zl;
    if (lo >= hi)
        return 0;
    const ncl_ref at = ncl_ref_make(NCL_BUF_RECV, (off + lo) * es);
    const ncl_ref src = root ? ncl_ref_add(ncl_plan_input(p, p->rank), (off + lo) * es)
                        : piece ? at : ncl_zone_slot(p, c, z.slot_bytes, s);
    ncl_task_write(t, nxt, src, piece ? at : ncl_zone_slot(p, c, z.slot_bytes, s), (hi - lo) * es, (uint32_t)s);
    return 1;
}

/* Generator state: i = segment, m = copy offset in the channel's portion (the helper: the segment
 * it copies out of the zone). */
static int next(const ncl_plan *p, uint32_t q, ncl_gen *g, ncl_task *t)
{
    const uint32_t c = q % channels_of(p);
    const int n = p->nranks, r = p->rank, root_pos = ncl_ring_pos(p, c, p->root);
    const int v = ncl_mod((int64_t)ncl_ring_pos(p, c, r) - root_pos, n); /* the root is 0 */
    const int prev = ncl_ring_rank(p, c, (int64_t)root_pos + v - 1);
    const int nxt = ncl_ring_rank(p, c, (int64_t)root_pos + v + 1);
    const uint64_t k = p->segments;
    const uint32_t data = NCL_NOTIFY_DATA(c), ready = NCL_NOTIFY_READY(c);
    const int zones = c < p->zone_channels;
    zoning z = zoning_of(p, channels_of(p), c);
    uint64_t off, len;

    NCL_GEN_BEGIN(g);
    if (p->count == 0 || (n == 1 && p->inplace))
        return g->line = -1, 0;

    if (q >= channels_of(p)) {
        /* a copy queue: the root's own result, beside its writes */
        for (g->m = 0; v == 0 && !p->inplace && copy_task(p, c, g->m, t); g->m += p->slice_elems)
            NCL_YIELD(g);
        if (v == 0 || !zones || z.zoned == 0)
            return g->line = -1, 0;
        /* a receiver's zone: each zoned segment once it arrived, then (a forwarder) once its
         * forwards are done, then the credit */
        for (g->i = 0; g->i < zoning_of(p, channels_of(p), c).zoned + (v < n - 1 ? 1u : 0u); g->i++) {
            ncl_task_wait(t, r, NCL_NOTIFY_LOCAL(c), 1, 0);
            NCL_YIELD(g);
            z = zoning_of(p, channels_of(p), c);
            if (g->i < z.zoned && (len = zoned_len(&z, g->i, seg(p, c, g->i, &off))) != 0) {
                ncl_task_copy(t, ncl_zone_slot(p, c, z.slot_bytes, g->i), ncl_ref_make(NCL_BUF_RECV, off * p->esize),
                              len * p->esize, (uint32_t)g->i);
                NCL_YIELD(g);
            }
        }
        ncl_task_record(t, prev, NCL_NOTIFY_CREDIT(c), 0);
        NCL_YIELD(g);
        return g->line = -1, 0;
    }

    /* a writer takes its successor's credit first, when one is due (the last rank writes nothing,
     * but takes it as well: every use balances) */
    if (n > 1 && ncl_zone_credit_due(p, c)) {
        ncl_task_wait(t, nxt, NCL_NOTIFY_CREDIT(c), 1, 0);
        NCL_YIELD(g);
    }
    if (zones && (v == 0 || z.zoned == 0)) { /* nothing for us to read in our zone */
        ncl_task_record(t, prev, NCL_NOTIFY_CREDIT(c), 0);
        NCL_YIELD(g);
    }

    /* step 0: our recv is bound: prev may write the segments our zone does not take into it */
    if (v > 0 && !all_zoned(&z, k)) {
        ncl_task_record(t, prev, ready, 0);
        NCL_YIELD(g);
    }
    for (g->i = 0; n > 1 && g->i < k; g->i++) {
        /* step s: the root pushes segment s from its input; the others receive it from prev (the
         * last rank: all but the zoned ones at once) and forward it from their zone or recv. The
         * first segments go into next's zone, the rest once next has bound its recv. */
        if (v > 0) {
            if (v == n - 1 && g->i >= zoning_of(p, channels_of(p), c).zoned) {
                ncl_task_wait(t, prev, data, (uint32_t)(k - g->i), (uint32_t)(k - 1));
                NCL_YIELD(g);
                break;
            }
            ncl_task_wait(t, prev, data, 1, (uint32_t)g->i);
            NCL_YIELD(g);
            if (g->i < zoning_of(p, channels_of(p), c).zoned) { /* in our zone: the helper copies it out */
                ncl_task_record(t, r, NCL_NOTIFY_LOCAL(c), (uint32_t)g->i);
                NCL_YIELD(g);
            }
            if (v == n - 1)
                continue;
        }
        if (chain_write(p, c, g->i, 0, v == 0, nxt, t))
            NCL_YIELD(g);
        if (g->i == first_recv(p, c)) {
            ncl_task_wait(t, nxt, ready, 1, 0);
            NCL_YIELD(g);
        }
        if (chain_write(p, c, g->i, 1, v == 0, nxt, t))
            NCL_YIELD(g);
        ncl_task_record(t, nxt, data, (uint32_t)g->i);
        NCL_YIELD(g);
        if (v == 0) {
            /* out of place without copy queues: keep segment s too, while next forwards it */
            if (!p->inplace && p->helper_queues == 0 && (len = seg(p, c, g->i, &off)) != 0) {
                ncl_task_copy(t, ncl_ref_add(ncl_plan_input(p, r), off * p->esize),
                              ncl_ref_make(NCL_BUF_RECV, off * p->esize), len * p->esize, (uint32_t)g->i);
                NCL_YIELD(g);
            }
            continue;
        }
        z = zoning_of(p, channels_of(p), c);
        if (z.zoned && g->i + 1 == z.zoned) { /* our forwards out of the zone are done */
            ncl_task_record(t, r, NCL_NOTIFY_LOCAL(c), (uint32_t)g->i);
            NCL_YIELD(g);
        }
    }
    if (v == 0 && n == 1 && !p->inplace) /* alone: the copy is the whole collective */
        for (g->m = 0; copy_task(p, c, g->m, t); g->m += p->slice_elems)
            NCL_YIELD(g);
    NCL_GEN_END(g);
}

const ncl_algo_desc ncl_algo_chain_broadcast = {"chain", NCL_COLL_BROADCAST, NCL_ALGO_CHAIN,
                                                prepare, next};
