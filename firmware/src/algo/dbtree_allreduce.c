/* dbtree_allreduce.c — double binary tree allreduce: each half of the buffer is reduced up one of
 * two complementary binary trees and broadcast back down it, in pipelined rounds. */
#include "ncl_algo.h"

/* Trees. Positions 1..p form an in-order binary tree: position x with lowest set bit L has
 * children x - L/2 and x + L/2, and its parent is whichever of x - L, x + L has lowest set bit
 * 2L; positions beyond p are dropped and their in-range descendants hang from the nearest
 * in-range ancestor (a dropped node keeps at most one child: its left). The root is the largest
 * power of two <= p. Odd positions are exactly the leaves, even positions have a left child.
 * Tree 0 puts rank r at position r + 1. Tree 1 puts it at p - r (p even: every leaf of tree 0 is
 * interior in tree 1 and vice versa) or at ((r + 1) mod p) + 1 (p odd: the same, except rank
 * p-1, a leaf in both).
 *
 * Data. Tree t owns half t of the buffer (ncl_part(count, 2, t)), cut into k rounds
 * (plan->segments): the cost model's best count for a pipeline of 2h hops, at least enough that
 * no round exceeds a slice. Every rank accumulates in its recv (out of place an interior rank
 * first copies its input's round there; a leaf sends straight from its input), so no scratch.
 *
 * Steps of round i on a rank of tree t:
 *  gather: wait for the left child's DATA (it reduced its subtree's round i into our recv with
 *        inline reduce, after our READY for round i), grant READY for round i to the right child;
 *        then, out of place, copy our input's round i+1 into recv and grant the left child round
 *        i+1, so that its transfer overlaps the right one's; wait for the right child's DATA.
 *        Each region has one writer at a time and the reduction order is fixed: own + left +
 *        right. The root divides the finished round (avg). Round 0's copy and grant come first.
 *  send: wait for the parent's READY, WRITE_REDUCE our round into the parent's recv, post DATA.
 *  down: wait for the parent's DATA (the final round in our recv), WRITE it to each child's recv
 *        and post DATA. Our DATA up came before, so the parent writes into a rank that has
 *        signalled it entered the collective: no READY needed.
 * Every DATA is posted: the queue goes on while the write before it still moves.
 * Queues: with room for six (max_queues >= 6, whatever the ring channels), every tree's
 * gather, send and down steps run on queues of their own, so that a rank's grants never wait
 * for its parent, its writes up never behind its writes down: gather tells send (at the root,
 * down) that round i is reduced with a LOCAL notify. Otherwise a tree's steps share a queue
 * (trees on queues 0 and 1 when plan->queues >= 2 comes in, else alternating on queue 0, tree 0
 * first in every iteration), a rank at depth d running in iteration i the gather and send of
 * round i and the down of round i - d: its parent sent that round down in iteration i - 1, so
 * up and down phases of different rounds still overlap along the tree. Either way tree t uses
 * notify ids of channel t.
 * Deadlock freedom: a step waits only on steps of the same (iteration, tree) or earlier ones
 * (the left child's grant for round i+1 is issued in iteration i), and within one they form
 * tree_reduce.c's grant/data pattern.
 *
 * Cost (alpha per message, beta per byte, n bytes, depth h = floor(lg p)): a rank is interior in
 * one tree and a leaf in the other (p even), so its port carries 3c up and down the first and
 * c up the second per round of c bytes, 2n in all; round i's way up and down is a pipeline of 2h
 * hops carrying n/2. With split queues about
 *   (2h - 1 + k)(alpha + n beta / 2k) + 3/2 n beta + (2h - 1) alpha
 * (the last term: in the first round each hop's DATA follows its write). What the schedule adds:
 * the READY grant of every child transfer, one DATA per message, and out of place, on every
 * interior rank, a local copy of its input's rounds (n/2 bytes) into recv. No scratch. */

static uint64_t lowbit(uint64_t x)
{
    return x & (~x + 1);
}

/* Tree t's position of `rank`, and the rank at position x. */
static uint64_t pos_of(const ncl_plan *p, uint32_t tree, int rank)
{
    uint64_t n = (uint64_t)p->nranks, r = (uint64_t)rank;
    if (tree == 0)
        return r + 1;
    return n % 2 == 0 ? n - r : (r + 1) % n + 1;
}

static int rank_of(const ncl_plan *p, uint32_t tree, uint64_t x)
{
    uint64_t n = (uint64_t)p->nranks;
    if (tree == 0)
        return (int)(x - 1);
    if (n % 2 == 0)
        return (int)(n - x);
    return (int)(x >= 2 ? x - 2 : n - 1);
}

/* Parent position of x among positions 1..n, 0 for the root. */
static uint64_t parent_pos(uint64_t n, uint64_t x)
{
    if (x == lowbit(x) && 2 * x > n) /* the largest power of two <= n */
        return 0;
    uint64_t y = x;
    do {
        uint64_t l = lowbit(y);
        y = (y & 2 * l) ? y - l : y + l;
    } while (y > n);
    return y;
}

/* Child k (0 left, 1 right) of position x, 0 if none: the right one may be a dropped position's
 * left descendant. */
static uint64_t child_pos(uint64_t n, uint64_t x, uint64_t k)
{
    uint64_t h = lowbit(x) >> 1, y;
    if (h == 0)
        return 0;
    if (k == 0)
        return x - h;
    for (y = x + h; y > n && lowbit(y) > 1; y -= lowbit(y) >> 1)
        ;
    return y > n ? 0 : y;
}

/* Depth of x (root 0): its in-range ancestors, one per lowest-bit level above its own. */
static uint64_t depth_pos(uint64_t n, uint64_t x)
{
    uint64_t d = 0;
    for (uint64_t m = lowbit(x) << 1; m <= n; m <<= 1)
        if (((x & ~(2 * m - 1)) | m) <= n)
            d++;
    return d;
}

/* Queue layouts (prepare). Split (6 queues): queue q serves tree q % 2 in role q / 2 — gather
 * (grant the children, take their rounds in, and at the root divide), send (the reduced round up
 * to the parent) or down (the final round to the children). Otherwise 2 queues (tree q, every
 * role) or 1 (both trees, every role). */
enum { GATHER, SEND, DOWN, SPLIT_QUEUES = 6 };

static int split(const ncl_plan *p)
{
    return p->queues == SPLIT_QUEUES;
}

static uint32_t trees_on_queue(const ncl_plan *p)
{
    return p->queues == 1 ? 2u : 1u;
}

static int runs(const ncl_plan *p, uint32_t q, uint32_t role)
{
    return !split(p) || q / 2u == role;
}

/* Tree t's rounds: plan->segments (prepare), fewer when its half has fewer elements. */
static uint64_t rounds_of(const ncl_plan *p, uint32_t tree)
{
    uint64_t off;
    return ncl_min_u64(p->segments, ncl_part(p->count, 2, tree, &off));
}

/* Elements of round i of tree t; its first element in *off. */
static uint64_t round_part(const ncl_plan *p, uint32_t tree, uint64_t i, uint64_t *off)
{
    uint64_t toff, roff, span = ncl_part(p->count, 2, tree, &toff);
    uint64_t len = ncl_part(span, rounds_of(p, tree), i, &roff);
    *off = toff + roff;
    return len;
}

/* Iterations of queue q on this rank: up to its last round's down step in every tree it serves
 * (an up-only queue: its last round). */
static uint64_t iterations(const ncl_plan *p, uint32_t q)
{
    uint64_t it = 0, n = (uint64_t)p->nranks;
    for (uint32_t j = 0; j < trees_on_queue(p); j++) {
        uint32_t tree = q % 2u + j;
        uint64_t rounds = rounds_of(p, tree);
        uint64_t d = runs(p, q, DOWN) ? depth_pos(n, pos_of(p, tree, p->rank)) : 0;
        if (rounds && rounds + d > it)
            it = rounds + d;
    }
    return it;
}

static ncl_result prepare(ncl_plan *p)
{
    p->queues = p->max_queues >= SPLIT_QUEUES ? SPLIT_QUEUES : p->queues >= 2 ? 2u : 1u;
    /* rounds per tree: a pipeline of 2h hops (h up, h down) carrying half the buffer, the cost
     * model's best count (ncl_pipeline_segments), no round above a slice */
    uint64_t half = ncl_div_ceil(p->count, 2), h = 0;
    while ((2ull << h) <= (uint64_t)p->nranks)
        h++;
    uint64_t k = ncl_pipeline_segments(2 * h + 1, half * p->esize, p->link_alpha_ns, p->link_gbps);
    k = ncl_min_u64(ncl_max_u64(k, ncl_div_ceil(half, p->slice_elems)), half ? half : 1);
    if (k > UINT32_MAX)
        return NCL_ERR_UNSUPPORTED;
    p->segments = (uint32_t)k;
    /* every reduction is inline (no scratch): a DMA that cannot leaves it to the others */
    return p->nranks > 1 && !ncl_inline_all(p) ? NCL_ERR_UNSUPPORTED : NCL_SUCCESS;
}

/* Generator state: i = iteration, j = tree of this queue (tree q + j), k = child (down step),
 * n = iterations, m = this rank's depth in tree q + j (set at the start of each tree's part). */
static int next(const ncl_plan *p, uint32_t q, ncl_gen *g, ncl_task *t)
{
    const int r = p->rank;
    const uint64_t n = (uint64_t)p->nranks, es = p->esize;
    const ncl_ref in = ncl_plan_input(p, r), recv = ncl_ref_make(NCL_BUF_RECV, 0);
    uint64_t off, len;
/* Tree quantities follow g->j where they are used: one call may run on from one tree's part
 * into the other's without yielding, so they cannot be computed once on entry. */
#define TREE (q % 2u + (uint32_t)g->j)
#define X pos_of(p, TREE, r)
#define PARENT rank_of(p, TREE, parent_pos(n, X))
#define CHILD(k) rank_of(p, TREE, child_pos(n, X, (k)))
#define DATA NCL_NOTIFY_DATA(TREE)
#define READY NCL_NOTIFY_READY(TREE)

    NCL_GEN_BEGIN(g);
    if (n == 1) {
        /* a lone rank: out of place, copy our trees' halves */
        for (g->j = 0; !p->inplace && runs(p, q, GATHER) && g->j < trees_on_queue(p); g->j++) {
            for (g->i = 0; g->i < rounds_of(p, TREE); g->i++) {
                len = round_part(p, TREE, g->i, &off);
                ncl_task_copy(t, ncl_ref_add(in, off * es), ncl_ref_add(recv, off * es), len * es,
                              (uint32_t)g->i);
                NCL_YIELD(g);
            }
        }
        return g->line = -1, 0;
    }
    g->n = iterations(p, q);
    for (g->i = 0; g->i < g->n; g->i++) {
        for (g->j = 0; g->j < trees_on_queue(p); g->j++) {
            g->m = depth_pos(n, X);
            /* gather, round i: own input + left child's subtree + right child's. The left child
             * may reduce round i+1 while the right one reduces round i. */
            if (runs(p, q, GATHER) && g->i < rounds_of(p, TREE) && child_pos(n, X, 0)) {
                if (g->i == 0) {
                    if (!p->inplace) {
                        len = round_part(p, TREE, 0, &off);
                        ncl_task_copy(t, ncl_ref_add(in, off * es), ncl_ref_add(recv, off * es),
                                      len * es, 0);
                        NCL_YIELD(g);
                    }
                    ncl_task_record(t, CHILD(0), READY, 0);
                    NCL_YIELD(g);
                }
                ncl_task_wait(t, CHILD(0), DATA, 1, (uint32_t)g->i);
                NCL_YIELD(g);
                if (child_pos(n, X, 1)) {
                    ncl_task_record(t, CHILD(1), READY, (uint32_t)g->i);
                    NCL_YIELD(g);
                }
                if (g->i + 1 < rounds_of(p, TREE)) {
                    if (!p->inplace) {
                        len = round_part(p, TREE, g->i + 1, &off);
                        ncl_task_copy(t, ncl_ref_add(in, off * es), ncl_ref_add(recv, off * es),
                                      len * es, (uint32_t)g->i + 1);
                        NCL_YIELD(g);
                    }
                    ncl_task_record(t, CHILD(0), READY, (uint32_t)g->i + 1);
                    NCL_YIELD(g);
                }
                if (child_pos(n, X, 1)) {
                    ncl_task_wait(t, CHILD(1), DATA, 1, (uint32_t)g->i);
                    NCL_YIELD(g);
                }
                if (!parent_pos(n, X) && p->avg) {
                    /* the root: round i is fully reduced; avg divides it once, here */
                    len = round_part(p, TREE, g->i, &off);
                    ncl_task_div(t, p, ncl_ref_add(recv, off * es), len * es, (uint32_t)g->i);
                    NCL_YIELD(g);
                }
                if (split(p)) {
                    /* to this rank's send queue, or at the root its down queue */
                    ncl_task_record(t, r, NCL_NOTIFY_LOCAL(TREE), (uint32_t)g->i);
                    NCL_YIELD(g);
                }
            }
            /* send, round i: the reduced round up, once the parent has granted it */
            if (runs(p, q, SEND) && g->i < rounds_of(p, TREE) && parent_pos(n, X)) {
                if (split(p) && child_pos(n, X, 0)) {
                    ncl_task_wait(t, r, NCL_NOTIFY_LOCAL(TREE), 1, (uint32_t)g->i);
                    NCL_YIELD(g);
                }
                ncl_task_wait(t, PARENT, READY, 1, (uint32_t)g->i);
                NCL_YIELD(g);
                len = round_part(p, TREE, g->i, &off);
                ncl_task_write_reduce(t, p, PARENT,
                                      ncl_ref_add(child_pos(n, X, 0) ? recv : in, off * es),
                                      ncl_ref_add(recv, off * es), len * es, (uint32_t)g->i);
                NCL_YIELD(g);
                ncl_task_post(t, PARENT, DATA, (uint32_t)g->i);
                NCL_YIELD(g);
            }
            /* down, round i - depth: receive the result, pass it to the children */
            if (runs(p, q, DOWN) && g->i >= g->m && g->i - g->m < rounds_of(p, TREE)) {
                if (parent_pos(n, X)) {
                    ncl_task_wait(t, PARENT, DATA, 1, (uint32_t)(g->i - g->m));
                    NCL_YIELD(g);
                } else if (split(p)) {
                    ncl_task_wait(t, r, NCL_NOTIFY_LOCAL(TREE), 1, (uint32_t)g->i);
                    NCL_YIELD(g);
                }
                for (g->k = 0; g->k < 2; g->k++) {
                    if (!child_pos(n, X, g->k))
                        continue;
                    len = round_part(p, TREE, g->i - g->m, &off);
                    ncl_task_write(t, CHILD(g->k), ncl_ref_add(recv, off * es),
                                   ncl_ref_add(recv, off * es), len * es, (uint32_t)(g->i - g->m));
                    NCL_YIELD(g);
                    ncl_task_post(t, CHILD(g->k), DATA, (uint32_t)(g->i - g->m));
                    NCL_YIELD(g);
                }
            }
        }
    }
    NCL_GEN_END(g);
}
#undef TREE
#undef X
#undef PARENT
#undef CHILD
#undef DATA
#undef READY

const ncl_algo_desc ncl_algo_dbtree_allreduce = {"dbtree", NCL_COLL_ALLREDUCE, NCL_ALGO_DBTREE,
                                                 prepare, next};
