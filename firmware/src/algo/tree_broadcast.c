/* tree_broadcast.c — binomial-tree broadcast: ceil(lg p) hops, the buffer cut into rounds of at
 * most one slice that follow each other down the tree. */
#include "ncl_algo.h"

/* Tree: v = rank - root (mod p). v's parent is v minus its lowest set bit; its children are
 * v + 2^j for every 2^j below that bit (the root: every 2^j < p). A parent sends to its farthest
 * child first, since that child heads the largest subtree. Every round lands in the same place
 * of every recv, so each child grants one READY for the whole collective. Each DATA is posted
 * behind its write (NCL_TASK_POSTED): a parent's writes follow each other without waiting for one
 * to land, so a round's latency hides behind the next transfer. */

static uint64_t rounds_needed(const ncl_plan *p)
{
    return ncl_div_ceil(p->count, p->slice_elems);
}

static ncl_result prepare(ncl_plan *p)
{
    p->queues = 1;
    p->segments = 1;
    if (p->slice_elems == 0 || p->esize == 0)
        return NCL_ERR_INVALID_ARGUMENT;
    if (p->count == 0)
        return NCL_SUCCESS;
    uint64_t rounds = rounds_needed(p);
    if (rounds > UINT32_MAX)
        return NCL_ERR_UNSUPPORTED;
    p->segments = (uint32_t)rounds;
    return NCL_SUCCESS;
}

/* Elements of round i; its first element in *off. */
static uint64_t round_part(const ncl_plan *p, uint64_t i, uint64_t *off)
{
    return ncl_part(p->count, p->segments, i, off);
}

static int next(const ncl_plan *p, uint32_t q, ncl_gen *g, ncl_task *t)
{
    const int n = p->nranks, r = p->rank;
    const uint64_t v = (uint64_t)ncl_mod((int64_t)r - p->root, n);
    const uint64_t span = ncl_tree_child_span(v, (uint64_t)n), es = p->esize, rounds = p->segments;
    const int parent = ncl_mod((int64_t)r - (int64_t)span, n); /* meaningless on the root */
    const int leaf = span == 1 || v + 1 >= (uint64_t)n;        /* no v + 2^j < p below span */
    const ncl_ref in = ncl_plan_input(p, r), recv = ncl_ref_make(NCL_BUF_RECV, 0);
    const ncl_ref src = v == 0 ? in : recv; /* non-roots forward what they received */
    const uint32_t data = NCL_NOTIFY_DATA(q), ready = NCL_NOTIFY_READY(q);
    uint64_t off, len;

    NCL_GEN_BEGIN(g);
    if (p->count == 0 || (n == 1 && p->inplace))
        return g->line = -1, 0;

    if (v != 0) {
        /* step 0: our recv is bound: the parent may write every round into it */
        ncl_task_record(t, parent, ready, 0);
        NCL_YIELD(g);
        if (leaf) {
            /* a leaf forwards nothing: wait for all rounds at once */
            ncl_task_wait(t, parent, data, (uint32_t)rounds, (uint32_t)(rounds - 1));
            NCL_YIELD(g);
            return g->line = -1, 0;
        }
    }

    for (g->i = 0; g->i < rounds; g->i++) {
        /* round i, step 0 (non-root): round i has arrived from the parent */
        if (v != 0) {
            ncl_task_wait(t, parent, data, 1, (uint32_t)g->i);
            NCL_YIELD(g);
        }
        /* steps 1..: push round i to each child, farthest (largest subtree) first; before the
         * first write to a child, wait until it has bound its recv */
        for (g->m = span >> 1; g->m; g->m >>= 1) {
            if (v + g->m >= (uint64_t)n)
                continue;
            if (g->i == 0) {
                ncl_task_wait(t, ncl_mod((int64_t)r + (int64_t)g->m, n), ready, 1, 0);
                NCL_YIELD(g);
            }
            len = round_part(p, g->i, &off);
            ncl_task_write(t, ncl_mod((int64_t)r + (int64_t)g->m, n), ncl_ref_add(src, off * es),
                           ncl_ref_add(recv, off * es), len * es, (uint32_t)g->i);
            NCL_YIELD(g);
            ncl_task_post(t, ncl_mod((int64_t)r + (int64_t)g->m, n), data, (uint32_t)g->i);
            NCL_YIELD(g);
        }
        /* last step (root, out of place): keep our own copy of round i */
        if (v == 0 && !p->inplace) {
            len = round_part(p, g->i, &off);
            ncl_task_copy(t, ncl_ref_add(in, off * es), ncl_ref_add(recv, off * es), len * es,
                          (uint32_t)g->i);
            NCL_YIELD(g);
        }
    }
    NCL_GEN_END(g);
}

const ncl_algo_desc ncl_algo_tree_broadcast = {"tree", NCL_COLL_BROADCAST, NCL_ALGO_TREE, prepare,
                                               next};
