/* ring_reduce.c — ring reduce: a pipelined chain root+1 -> root+2 -> ... -> root-1 -> root whose
 * partial sums flow with inline reduce at the destination, through slots of scratch. */
#include "ncl_algo.h"

/* Position u = rank - root - 1 (mod p): u = 0 heads the chain, u = p-1 is the root.
 * Segment s is part s of ncl_part(count, segments). Accumulation targets:
 *  - the root: recv, pre-copied with its own input (in place it already is);
 *  - an intermediate rank: scratch slot s % K, pre-copied with its own input segment; K slots
 *    of the largest segment, as many as the scratch holds, 2 to 16 (slots(): with 8 a credit's
 *    round trip over a fat tree's spine, 20 us, still paced 80 KiB segments).
 * The head reduces straight from its input. A READY record is one credit: "segment s may now be
 * reduced into me"; an intermediate grants every slot at the start and slot s % K again for
 * segment s+K once it has forwarded s, so K segments can be on their way to it: the credit's
 * round trip (on a one-way ring p-1 hops back) is shared by K segments. The fill of s+K must
 * wait for the forward of s that reads the slot:
 * - with a second queue (ncl_helper_room) the fills and grants run there: the forward queue posts
 *   a LOCAL notify to itself behind the forward of s (it fires once that write has landed), the
 *   fill queue waits for it, refills the slot and grants it. The forwards never wait for a fill,
 *   and as many are in flight as the queue takes (ncl_plan.in_flight), so over a long route a
 *   segment costs its transfer, not its latency;
 * - with one queue the executor holds the fill until the forward has landed (it holds a task
 *   that overwrites what one in flight still reads), so the fill is queued lag segments later
 *   (after the forward of s + lag) and the queue forwards on meanwhile.
 * Every record is posted (NCL_TASK_POSTED): a grant goes once its slot's fill has landed, a DATA
 * once its write has, while the queue goes on. A segment then costs its forward's issue or its
 * transfer, whichever is longer; the segment count is the optimum of that pipeline
 * (ncl_pipeline_prepare_posted). */

enum { FORWARD, FILL };

#define MAX_SLOTS 16u

/* Scratch slots of an intermediate rank: as many of the largest segment as fit, at least 2
 * (prepare() keeps a segment within half the scratch). */
static uint64_t slots(const ncl_plan *p)
{
    uint64_t seg_max = ncl_div_ceil(p->count, p->segments);
    uint64_t n = seg_max ? p->scratch_bytes / p->esize / seg_max : 2;
    return n < 2 ? 2 : n > MAX_SLOTS ? MAX_SLOTS : n;
}

/* Forwards an intermediate rank keeps in flight ahead of its refills (see next()): MAX_LAG,
 * fewer where that would leave less than two slots' credits with its predecessor. Two were
 * enough in every case measured (model/README.md, "Ring reduce"). */
#define MAX_LAG 2u

static uint64_t lag(const ncl_plan *p)
{
    uint64_t k = slots(p);
    return k >= MAX_LAG + 2 ? MAX_LAG : k - 2;
}

/* Bytes of one scratch slot, whole elements. */
static uint64_t slot_bytes(const ncl_plan *p)
{
    return p->scratch_bytes / slots(p) / p->esize * p->esize;
}

static ncl_result prepare(ncl_plan *p)
{
    p->queues = p->nranks >= 3 && ncl_helper_room(p, 1) ? 2 : 1; /* FORWARD, FILL */
    p->helper_queues = p->queues - 1;
    p->segments = 1;
    if (p->slice_elems == 0 || p->esize == 0)
        return NCL_ERR_INVALID_ARGUMENT;
    if (p->count == 0)
        return NCL_SUCCESS;
    if (p->nranks > 1 && !ncl_inline_all(p)) /* no scratch path: the tree reduce has one */
        return NCL_ERR_UNSUPPORTED;
    uint64_t seg_max = p->slice_elems;
    if (p->nranks >= 3) {
        /* intermediate ranks accumulate in scratch: at least two slots of one element */
        uint64_t slot_elems = p->scratch_bytes / 2 / p->esize;
        if (slot_elems == 0)
            return NCL_ERR_UNSUPPORTED;
        seg_max = ncl_min_u64(seg_max, slot_elems);
    }
    return ncl_pipeline_prepare_posted(p, seg_max);
}

static uint64_t seg(const ncl_plan *p, uint64_t s, uint64_t *off)
{
    return ncl_part(p->count, p->segments, s, off);
}

/* Where segment s (first element off) accumulates on the rank at chain position u. */
static ncl_ref target(const ncl_plan *p, int u, uint64_t s, uint64_t off)
{
    if (u == p->nranks - 1)
        return ncl_ref_make(NCL_BUF_RECV, off * p->esize);
    return ncl_ref_make(NCL_BUF_SCRATCH, (s % slots(p)) * slot_bytes(p));
}

static int next(const ncl_plan *p, uint32_t q, ncl_gen *g, ncl_task *t)
{
    const int n = p->nranks, r = p->rank;
    const int u = ncl_mod((int64_t)r - p->root - 1, n); /* chain position; the root is n-1 */
    const int prev = ncl_mod((int64_t)r - 1, n), nxt = ncl_mod((int64_t)r + 1, n);
    const uint64_t es = p->esize, k = p->segments, nslots = slots(p);
    const ncl_ref in = ncl_plan_input(p, r), recv = ncl_ref_make(NCL_BUF_RECV, 0);
    /* one channel: the fill queue grants with the forward queue's READY id */
    const uint32_t data = NCL_NOTIFY_DATA(FORWARD), ready = NCL_NOTIFY_READY(FORWARD),
                   refill = NCL_NOTIFY_LOCAL(FILL);
    uint64_t off, len;

    NCL_GEN_BEGIN(g);
    if (p->count == 0 || (n == 1 && p->inplace))
        return g->line = -1, 0;
    if (q == FILL && (u == 0 || u == n - 1)) /* only intermediate ranks fill slots */
        return g->line = -1, 0;

    if (u == n - 1) {
        /* root. step s (prologue): pre-fill recv's segment s with our input, grant prev one
         * credit for it; all segments are distinct regions, so credits need not wait */
        for (g->i = 0; g->i < k; g->i++) {
            if (!p->inplace) {
                len = seg(p, g->i, &off);
                ncl_task_copy(t, ncl_ref_add(in, off * es), ncl_ref_add(recv, off * es), len * es,
                              (uint32_t)g->i);
                NCL_YIELD(g);
            }
            if (n > 1) {
                ncl_task_post(t, prev, ready, (uint32_t)g->i);
                NCL_YIELD(g);
            }
        }
        if (n == 1)
            return g->line = -1, 0;
        if (!p->avg) {
            /* every segment has been reduced into recv once prev has sent them all */
            ncl_task_wait(t, prev, data, (uint32_t)k, (uint32_t)(k - 1));
            NCL_YIELD(g);
            return g->line = -1, 0;
        }
        /* avg: segment s is complete when it arrives; divide it while the next ones flow */
        for (g->i = 0; g->i < k; g->i++) {
            ncl_task_wait(t, prev, data, 1, (uint32_t)g->i);
            NCL_YIELD(g);
            len = seg(p, g->i, &off);
            ncl_task_div(t, p, ncl_ref_add(recv, off * es), len * es, (uint32_t)g->i);
            NCL_YIELD(g);
        }
        return g->line = -1, 0;
    }

    if (u == 0) {
        /* head. step s: once next has pre-filled its target, reduce our input segment into it */
        for (g->i = 0; g->i < k; g->i++) {
            ncl_task_wait(t, nxt, ready, 1, (uint32_t)g->i);
            NCL_YIELD(g);
            len = seg(p, g->i, &off);
            ncl_task_write_reduce(t, p, nxt, ncl_ref_add(in, off * es),
                                  target(p, u + 1, g->i, off), len * es, (uint32_t)g->i);
            NCL_YIELD(g);
            ncl_task_post(t, nxt, data, (uint32_t)g->i);
            NCL_YIELD(g);
        }
        return g->line = -1, 0;
    }

    /* intermediate. prologue: pre-fill every slot with our first segments and grant prev a
     * credit for each, so prev may have that many segments on their way to us */
    if (q == FILL || p->queues == 1) {
        for (g->j = 0; g->j < nslots && g->j < k; g->j++) {
            len = seg(p, g->j, &off);
            ncl_task_copy(t, ncl_ref_add(in, off * es), target(p, u, g->j, off), len * es, (uint32_t)g->j);
            NCL_YIELD(g);
            ncl_task_post(t, prev, ready, (uint32_t)g->j);
            NCL_YIELD(g);
        }
    }
    if (q == FILL) {
        /* refill the slot of segment s with our segment s+K once its forward has landed */
        for (g->i = 0; g->i + nslots < k; g->i++) {
            ncl_task_wait(t, r, refill, 1, (uint32_t)g->i);
            NCL_YIELD(g);
            len = seg(p, g->i + nslots, &off);
            ncl_task_copy(t, ncl_ref_add(in, off * es), target(p, u, g->i + nslots, off), len * es,
                          (uint32_t)(g->i + nslots));
            NCL_YIELD(g);
            ncl_task_post(t, prev, ready, (uint32_t)(g->i + nslots));
            NCL_YIELD(g);
        }
        return g->line = -1, 0;
    }
    for (g->i = 0; g->i < k; g->i++) {
        /* step s: segment s has been reduced into slot s % K; forward it into next's target
         * once next granted it */
        ncl_task_wait(t, prev, data, 1, (uint32_t)g->i);
        NCL_YIELD(g);
        ncl_task_wait(t, nxt, ready, 1, (uint32_t)g->i);
        NCL_YIELD(g);
        len = seg(p, g->i, &off);
        ncl_task_write_reduce(t, p, nxt, target(p, u, g->i, off), target(p, u + 1, g->i, off),
                              len * es, (uint32_t)g->i);
        NCL_YIELD(g);
        ncl_task_post(t, nxt, data, (uint32_t)g->i);
        NCL_YIELD(g);
        if (p->queues == 2 && g->i + nslots < k) { /* the slot is read: the fill queue may refill it */
            ncl_task_post(t, r, refill, (uint32_t)g->i);
            NCL_YIELD(g);
        }
        /* one queue: refill the slot of segment s - lag with our segment s - lag + K once its
         * forward has read it (the executor holds the copy until then) and grant it: lag
         * forwards stay in flight behind it, so the queue never waits for a forward to land
         * before the next */
        if (p->queues == 1 && g->i >= lag(p) && g->i - lag(p) + nslots < k) {
            len = seg(p, g->i - lag(p) + nslots, &off);
            ncl_task_copy(t, ncl_ref_add(in, off * es), target(p, u, g->i - lag(p) + nslots, off), len * es,
                          (uint32_t)(g->i - lag(p) + nslots));
            NCL_YIELD(g);
            ncl_task_post(t, prev, ready, (uint32_t)(g->i - lag(p) + nslots));
            NCL_YIELD(g);
        }
    }
    NCL_GEN_END(g);
}

const ncl_algo_desc ncl_algo_ring_reduce = {"ring", NCL_COLL_REDUCE, NCL_ALGO_RING, prepare, next};
