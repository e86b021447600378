/* sag_broadcast.c — van de Geijn broadcast: a binomial-tree scatter of p blocks from the root,
 * then an allgather of the blocks (recursive doubling for powers of two, a ring otherwise). */
#include "ncl_algo.h"

/* Ranks work in v = rank - root (mod p). Each channel (queue) runs the whole algorithm on its
 * portion of the buffer (ncl_part over plan->queues); the portion is cut into p blocks, block k
 * for v = k, at the same offset in every recv.
 *
 * Steps, on one channel:
 *  0. READY: every rank grants each rank that will write into its recv, once for the whole
 *     collective (powers of two: every v ^ 2^j; otherwise its scatter parent and its ring
 *     predecessor). A writer waits for that grant before its first write to a peer.
 *  1. Scatter (binomial tree as in tree_broadcast.c): v's subtree covers v .. v+lowbit(v)-1, so a
 *     parent sends child v+m the blocks [v+m, v+2m) in one message, farthest child first, from
 *     its input (the root) or from recv (others), then records DATA.
 *  2a. Powers of two, recursive doubling: at step m = 1, 2, .., p/2, v and v ^ m swap their groups
 *     of m blocks (v's group: the blocks [v & ~(m-1), +m)): write, record DATA, wait DATA.
 *  2b. Otherwise, ring: at step s = 0 .. p-2, v sends block v-s to v+1 and receives block v-1-s.
 *  Out of place the root keeps its block too: it sends block 0 straight from its input at the
 *  first allgather step and copies it SEND -> RECV while its partner's block comes in.
 *
 * Cost (alpha per message, beta per byte, n bytes per channel):
 *  powers of two: 2 lg p alpha + 2 ((p-1)/p) n beta, as REFERENCE.md;
 *  otherwise: (ceil(lg p) + p - 1) alpha + 2 ((p-1)/p) n beta (the ring allgather's p-1 steps).
 * What the schedule adds over that formula:
 *  - one READY handshake before the first write to each peer (the root waits for its first child's
 *    grant: about one alpha at the start; the others' grants are in flight meanwhile);
 *  - a message larger than a slice is cut into ceil(bytes / slice) writes, one DATA per step;
 *  - out of place, the root's local copy of its own block (n/p bytes), overlapped with step 2's
 *    first incoming block;
 *  - the allgather sends whole groups, also blocks the partner already got in the scatter (as the
 *    formula counts them). No scratch. */

static uint64_t channel_span(const ncl_plan *p, uint32_t q, uint64_t *off)
{
    return ncl_part(p->count, p->queues, q, off);
}

/* Blocks [b0, b1) of channel q's portion (b1 capped at p): their length in elements and their
 * first element (absolute) in *off. Consecutive blocks are contiguous. */
static uint64_t blocks(const ncl_plan *p, uint32_t q, uint64_t b0, uint64_t b1, uint64_t *off)
{
    uint64_t coff, lo, hi, n = (uint64_t)p->nranks;
    uint64_t span = channel_span(p, q, &coff);
    ncl_part(span, n, b0, &lo);
    ncl_part(span, n, b1 < n ? b1 : n, &hi); /* part n starts at the end of the span */
    *off = coff + lo;
    return hi - lo;
}

/* The rank at virtual position vv (any integer). */
static int rank_at(const ncl_plan *p, int64_t vv)
{
    return ncl_mod(vv + p->root, p->nranks);
}

static ncl_result prepare(ncl_plan *p)
{
    /* every channel gets at least one element per block */
    p->queues = ncl_channels_for(p->queues, p->count / (uint64_t)p->nranks);
    p->segments = 1;
    return NCL_SUCCESS;
}

/* Generator state: i = child mask / allgather step, k and m = first element and length of the
 * current message, j = offset of its current slice, n = step number (diagnostics). */
static int next(const ncl_plan *p, uint32_t q, ncl_gen *g, ncl_task *t)
{
    const int n = p->nranks, r = p->rank;
    const int64_t v = ncl_mod((int64_t)r - p->root, n);
    /* v has children v + m for the powers of two m < span */
    const uint64_t span = ncl_tree_child_span((uint64_t)v, (uint64_t)n);
    const uint64_t es = p->esize, slice = p->slice_elems;
    const int pow2 = (n & (n - 1)) == 0;
    const int keep_own = v == 0 && !p->inplace; /* the root's recv needs its own block too */
    const ncl_ref in = ncl_plan_input(p, r), recv = ncl_ref_make(NCL_BUF_RECV, 0);
    const uint32_t data = NCL_NOTIFY_DATA(q), ready = NCL_NOTIFY_READY(q);
    uint64_t off, len;

    NCL_GEN_BEGIN(g);
    if (channel_span(p, q, &off) == 0 || (n == 1 && p->inplace))
        return g->line = -1, 0;
    if (n == 1) {
        /* a lone root out of place: copy the portion */
        g->m = channel_span(p, q, &g->k);
        for (g->j = 0; g->j < g->m; g->j += slice) {
            len = ncl_min_u64(slice, g->m - g->j);
            off = (g->k + g->j) * es; /* bytes */
            ncl_task_copy(t, ncl_ref_add(in, off), ncl_ref_add(recv, off), len * es, 0);
            NCL_YIELD(g);
        }
        return g->line = -1, 0;
    }

    /* step 0: grant READY to every rank that writes into our recv */
    if (pow2) {
        for (g->i = 1; g->i < (uint64_t)n; g->i <<= 1) {
            ncl_task_record(t, rank_at(p, v ^ (int64_t)g->i), ready, 0);
            NCL_YIELD(g);
        }
    } else {
        if (v != 0) {
            ncl_task_record(t, rank_at(p, v - (int64_t)span), ready, 0); /* scatter parent */
            NCL_YIELD(g);
        }
        if ((v & 1) == 0) { /* odd v: the ring predecessor is the scatter parent, granted above */
            ncl_task_record(t, rank_at(p, v - 1), ready, 0);
            NCL_YIELD(g);
        }
    }

    /* scatter: receive our subtree's blocks, then hand each child its subtree's, farthest first */
    if (v != 0) {
        ncl_task_wait(t, rank_at(p, v - (int64_t)span), data, 1, 0);
        NCL_YIELD(g);
    }
    for (g->i = span >> 1; g->i; g->i >>= 1) {
        if (v + (int64_t)g->i >= n)
            continue;
        ncl_task_wait(t, rank_at(p, v + (int64_t)g->i), ready, 1, 0);
        NCL_YIELD(g);
        g->m = blocks(p, q, (uint64_t)v + g->i, (uint64_t)v + 2 * g->i, &g->k);
        for (g->j = 0; g->j < g->m; g->j += slice) {
            len = ncl_min_u64(slice, g->m - g->j);
            off = (g->k + g->j) * es; /* bytes */
            ncl_task_write(t, rank_at(p, v + (int64_t)g->i), ncl_ref_add(v == 0 ? in : recv, off),
                           ncl_ref_add(recv, off), len * es, 0);
            NCL_YIELD(g);
        }
        ncl_task_record(t, rank_at(p, v + (int64_t)g->i), data, 0);
        NCL_YIELD(g);
    }

    g->n = 1;
    if (pow2) {
        /* recursive doubling: swap groups of g->i blocks with v ^ g->i */
        for (g->i = 1; g->i < (uint64_t)n; g->i <<= 1, g->n++) {
            if (g->i >= span) { /* not our scatter child, whose grant we already consumed */
                ncl_task_wait(t, rank_at(p, v ^ (int64_t)g->i), ready, 1, (uint32_t)g->n);
                NCL_YIELD(g);
            }
            g->m = blocks(p, q, (uint64_t)v & ~(g->i - 1), ((uint64_t)v & ~(g->i - 1)) + g->i,
                          &g->k);
            for (g->j = 0; g->j < g->m; g->j += slice) {
                len = ncl_min_u64(slice, g->m - g->j);
                off = (g->k + g->j) * es; /* bytes */
                ncl_task_write(t, rank_at(p, v ^ (int64_t)g->i),
                               ncl_ref_add(keep_own && g->i == 1 ? in : recv, off),
                               ncl_ref_add(recv, off), len * es, (uint32_t)g->n);
                NCL_YIELD(g);
            }
            ncl_task_record(t, rank_at(p, v ^ (int64_t)g->i), data, (uint32_t)g->n);
            NCL_YIELD(g);
            for (g->j = 0; keep_own && g->i == 1 && g->j < g->m; g->j += slice) {
                len = ncl_min_u64(slice, g->m - g->j);
                off = (g->k + g->j) * es; /* bytes */
                ncl_task_copy(t, ncl_ref_add(in, off), ncl_ref_add(recv, off), len * es,
                              (uint32_t)g->n);
                NCL_YIELD(g);
            }
            ncl_task_wait(t, rank_at(p, v ^ (int64_t)g->i), data, 1, (uint32_t)g->n);
            NCL_YIELD(g);
        }
    } else {
        /* ring: step g->i sends block v - g->i to v + 1 */
        for (g->i = 0; g->i + 1 < (uint64_t)n; g->i++, g->n++) {
            if (g->i == 0 && !(span > 1 && v + 1 < n)) { /* v + 1 is not our scatter child */
                ncl_task_wait(t, rank_at(p, v + 1), ready, 1, (uint32_t)g->n);
                NCL_YIELD(g);
            }
            g->m = blocks(p, q, (uint64_t)ncl_mod(v - (int64_t)g->i, n),
                          (uint64_t)ncl_mod(v - (int64_t)g->i, n) + 1, &g->k);
            for (g->j = 0; g->j < g->m; g->j += slice) {
                len = ncl_min_u64(slice, g->m - g->j);
                off = (g->k + g->j) * es; /* bytes */
                ncl_task_write(t, rank_at(p, v + 1),
                               ncl_ref_add(keep_own && g->i == 0 ? in : recv, off),
                               ncl_ref_add(recv, off), len * es, (uint32_t)g->n);
                NCL_YIELD(g);
            }
            ncl_task_record(t, rank_at(p, v + 1), data, (uint32_t)g->n);
            NCL_YIELD(g);
            for (g->j = 0; keep_own && g->i == 0 && g->j < g->m; g->j += slice) {
                len = ncl_min_u64(slice, g->m - g->j);
                off = (g->k + g->j) * es; /* bytes */
                ncl_task_copy(t, ncl_ref_add(in, off), ncl_ref_add(recv, off), len * es,
                              (uint32_t)g->n);
                NCL_YIELD(g);
            }
            ncl_task_wait(t, rank_at(p, v - 1), data, 1, (uint32_t)g->n);
            NCL_YIELD(g);
        }
    }
    NCL_GEN_END(g);
}

const ncl_algo_desc ncl_algo_sag_broadcast = {"sag", NCL_COLL_BROADCAST, NCL_ALGO_SAG, prepare,
                                              next};
