/* dbtree_allreduce.c — double binary tree allreduce: each half of the buffer is reduced up one of
 * two complementary binary trees and broadcast back down it, in pipelined rounds of a slice. */
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
 * Data. Tree t owns half t of the buffer (ncl_part(count, 2, t)), cut into rounds of at most a
 * slice. Every rank accumulates in its recv (out of place an interior rank first copies its
 * input's round there; a leaf sends straight from its input), so no scratch is needed.
 *
 * Steps of round i on a rank of tree t:
 *  up:   wait for the left child's DATA (it reduced its subtree's round i into our recv with
 *        inline reduce, after our READY for round i), grant READY for round i to the right child;
 *        then, out of place, copy our input's round i+1 into recv and grant the left child round
 *        i+1, so that its transfer overlaps ours; wait for the right child's DATA. Each region
 *        has one writer at a time and the reduction order is fixed: own + left + right. Then wait
 *        for the parent's READY, WRITE_REDUCE our round into the parent's recv, record DATA. The
 *        root instead divides the finished round (avg). Round 0's copy and grant come first.
 *  down: wait for the parent's DATA (the final round in our recv), WRITE it to each child's recv
 *        and record DATA. Our DATA up came before, so the parent writes into a rank that has
 *        signalled it entered the collective: no READY needed.
 * Pipelining: a rank at depth d runs, in iteration k, the up step of round k and the down step
 * of round k - d. Its parent sent that round down in iteration k - 1, so in steady state the
 * wait is already satisfied: the up and down phases of different rounds overlap along the
 * tree. The two trees run on queues 0 and 1 (plan->queues >= 2 coming in), or alternate on
 * queue 0, tree 0 first in every iteration; either way tree t uses notify ids of channel t.
 * Deadlock freedom: a step waits only on steps of the same (iteration, tree) or earlier ones
 * (the left child's grant for round i+1 is issued in iteration i), and within one they form
 * tree_reduce.c's grant/data pattern.
 *
 * Cost (alpha per message, beta per byte, n bytes; per tree R rounds of c <= slice bytes, depth
 * h = floor(lg p)): round 0 crosses 2h edges (up to the root and back down); after that, one
 * round per cycle of an interior rank's queue: its writes up and to two children (3 c beta) and
 * the right child's transfer into it (c beta, granted only once the left one's landed; the left
 * child's next round arrives meanwhile). About
 *   2h (alpha + c beta) + R (4 (alpha + c beta) + 2 alpha).
 * What the schedule adds: the READY grant of every child transfer (the right child's costs
 * about 2 alpha per round on the critical path), one DATA per message, and out of place, on
 * every interior rank, a local copy of its input's rounds (n/2 bytes) into recv. No scratch. */

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

/* Trees that queue q serves: tree q alone, or both on queue 0. */
static uint32_t trees_on_queue(const ncl_plan *p)
{
    return p->queues >= 2 ? 1u : 2u;
}

static uint64_t rounds_of(const ncl_plan *p, uint32_t tree)
{
    uint64_t off;
    return ncl_div_ceil(ncl_part(p->count, 2, tree, &off), p->slice_elems);
}

/* Elements of round i of tree t; its first element in *off. */
static uint64_t round_part(const ncl_plan *p, uint32_t tree, uint64_t i, uint64_t *off)
{
    uint64_t toff, span = ncl_part(p->count, 2, tree, &toff), lo = i * p->slice_elems;
    *off = toff + lo;
    return lo >= span ? 0 : ncl_min_u64(p->slice_elems, span - lo);
}

/* Iterations of queue q on this rank: up to the last round's down step in every tree. */
static uint64_t iterations(const ncl_plan *p, uint32_t q)
{
    uint64_t it = 0, n = (uint64_t)p->nranks;
    for (uint32_t j = 0; j < trees_on_queue(p); j++) {
        uint64_t rounds = rounds_of(p, q + j);
        uint64_t d = depth_pos(n, pos_of(p, q + j, p->rank));
        if (rounds && rounds + d > it)
            it = rounds + d;
    }
    return it;
}

static ncl_result prepare(ncl_plan *p)
{
    p->queues = p->queues >= 2 ? 2u : 1u;
    p->segments = 1;
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
#define TREE (q + (uint32_t)g->j)
#define X pos_of(p, TREE, r)
#define PARENT rank_of(p, TREE, parent_pos(n, X))
#define CHILD(k) rank_of(p, TREE, child_pos(n, X, (k)))
#define DATA NCL_NOTIFY_DATA(TREE)
#define READY NCL_NOTIFY_READY(TREE)

    NCL_GEN_BEGIN(g);
    if (n == 1) {
        /* a lone rank: out of place, copy our trees' halves */
        for (g->j = 0; !p->inplace && g->j < trees_on_queue(p); g->j++) {
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
            /* up, round i: own input + left child's subtree + right child's, then to the parent.
             * The left child may reduce round i+1 while the right one reduces round i. */
            if (g->i < rounds_of(p, TREE)) {
                if (g->i == 0 && child_pos(n, X, 0)) {
                    if (!p->inplace) {
                        len = round_part(p, TREE, 0, &off);
                        ncl_task_copy(t, ncl_ref_add(in, off * es), ncl_ref_add(recv, off * es),
                                      len * es, 0);
                        NCL_YIELD(g);
                    }
                    ncl_task_record(t, CHILD(0), READY, 0);
                    NCL_YIELD(g);
                }
                if (child_pos(n, X, 0)) {
                    ncl_task_wait(t, CHILD(0), DATA, 1, (uint32_t)g->i);
                    NCL_YIELD(g);
                }
                if (child_pos(n, X, 1)) {
                    ncl_task_record(t, CHILD(1), READY, (uint32_t)g->i);
                    NCL_YIELD(g);
                }
                if (child_pos(n, X, 0) && g->i + 1 < rounds_of(p, TREE)) {
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
                if (!parent_pos(n, X)) {
                    /* the root: round i is fully reduced; avg divides it once, here */
                    if (p->avg) {
                        len = round_part(p, TREE, g->i, &off);
                        ncl_task_div(t, p, ncl_ref_add(recv, off * es), len * es, (uint32_t)g->i);
                        NCL_YIELD(g);
                    }
                } else {
                    ncl_task_wait(t, PARENT, READY, 1, (uint32_t)g->i);
                    NCL_YIELD(g);
                    len = round_part(p, TREE, g->i, &off);
                    ncl_task_write_reduce(t, p, PARENT,
                                          ncl_ref_add(child_pos(n, X, 0) ? recv : in, off * es),
                                          ncl_ref_add(recv, off * es), len * es, (uint32_t)g->i);
                    NCL_YIELD(g);
                    ncl_task_record(t, PARENT, DATA, (uint32_t)g->i);
                    NCL_YIELD(g);
                }
            }
            /* down, round i - depth: receive the result, pass it to the children */
            if (g->i >= g->m && g->i - g->m < rounds_of(p, TREE)) {
                if (parent_pos(n, X)) {
                    ncl_task_wait(t, PARENT, DATA, 1, (uint32_t)(g->i - g->m));
                    NCL_YIELD(g);
                }
                for (g->k = 0; g->k < 2; g->k++) {
                    if (!child_pos(n, X, g->k))
                        continue;
                    len = round_part(p, TREE, g->i - g->m, &off);
                    ncl_task_write(t, CHILD(g->k), ncl_ref_add(recv, off * es),
                                   ncl_ref_add(recv, off * es), len * es, (uint32_t)(g->i - g->m));
                    NCL_YIELD(g);
                    ncl_task_record(t, CHILD(g->k), DATA, (uint32_t)(g->i - g->m));
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
