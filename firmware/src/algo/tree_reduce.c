/* tree_reduce.c — binomial-tree reduce: every subtree's partial result is reduced into its parent
 * with inline reduce at the destination, one child at a time, in rounds of bounded size. */
#include "ncl_algo.h"

/* Tree as in tree_broadcast.c: v = rank - root (mod p), parent = v minus its lowest set bit,
 * children v + 2^j for 2^j below that bit (root: all 2^j < p). Accumulation target: recv on the
 * root (pre-copied with its input unless in place), scratch [0, round) on every other rank with
 * children (pre-copied with its input segment each round). Leaves reduce straight from their
 * input. A parent grants READY to one child, waits for its DATA, then grants the next, so two
 * children never reduce into one region at the same time; nearest child first, since smaller
 * subtrees finish sooner. Scratch is refilled for round i+1 only after this rank's own reduce of
 * round i into its parent completed (same queue), so reuse across rounds is safe.
 *
 * A reduce the DMA cannot do inline (ncl_inline_ok) is staged: the child writes into the parent's
 * staging slot (scratch after the accumulation target) and the parent reduces the slot into the
 * target before it grants the next child, so one slot serves every child. */

/* Staging needs room for a second round-sized region on every rank that has children. */
static int staged(const ncl_plan *p)
{
    return p->nranks > 1 && !ncl_inline_all(p);
}

static ncl_result prepare(ncl_plan *p)
{
    p->queues = 1;
    p->segments = 1;
    if (p->slice_elems == 0 || p->esize == 0)
        return NCL_ERR_INVALID_ARGUMENT;
    if (p->count == 0)
        return NCL_SUCCESS;
    uint64_t round_max = p->slice_elems;
    if (p->nranks >= 4 || staged(p)) {
        /* v = 2 has child 3: a non-root with children, accumulating in scratch (and staging) */
        uint64_t cap = p->scratch_bytes / p->esize / (staged(p) ? 2u : 1u);
        if (cap == 0)
            return NCL_ERR_UNSUPPORTED;
        round_max = ncl_min_u64(round_max, cap);
    }
    uint64_t rounds = ncl_div_ceil(p->count, round_max);
    if (rounds > UINT32_MAX)
        return NCL_ERR_UNSUPPORTED;
    p->segments = (uint32_t)rounds;
    return NCL_SUCCESS;
}

static uint64_t round_part(const ncl_plan *p, uint64_t i, uint64_t *off)
{
    return ncl_part(p->count, p->segments, i, off);
}

/* Where round i (first element off) accumulates on the rank at tree position v. */
static ncl_ref target(const ncl_plan *p, uint64_t v, uint64_t off)
{
    if (v == 0)
        return ncl_ref_make(NCL_BUF_RECV, off * p->esize);
    return ncl_ref_make(NCL_BUF_SCRATCH, 0);
}

/* The staging slot: after the largest round's target. */
static ncl_ref staging(const ncl_plan *p)
{
    uint64_t first;
    return ncl_ref_make(NCL_BUF_SCRATCH, ncl_part(p->count, p->segments, 0, &first) * p->esize);
}

/* What the rank at tree position v sends its parent for round i (first element off). */
static ncl_ref subtree_sum(const ncl_plan *p, uint64_t v, uint64_t off)
{
    uint64_t n = (uint64_t)p->nranks;
    int leaf = ncl_tree_child_span(v, n) == 1 || v + 1 >= n;
    return leaf ? ncl_ref_add(ncl_plan_input(p, ncl_mod((int64_t)v + p->root, p->nranks)), off * p->esize)
                : target(p, v, off);
}

/* Whether position v's reduce into its parent (span below v) is inline for round i. */
static int inline_to_parent(const ncl_plan *p, uint64_t v, uint64_t span, uint64_t off, uint64_t len)
{
    return ncl_inline_ok(p, subtree_sum(p, v, off).off, target(p, v - span, off).off, len * p->esize);
}

static int next(const ncl_plan *p, uint32_t q, ncl_gen *g, ncl_task *t)
{
    const int n = p->nranks, r = p->rank;
    const uint64_t v = (uint64_t)ncl_mod((int64_t)r - p->root, n);
    const uint64_t span = ncl_tree_child_span(v, (uint64_t)n), es = p->esize, rounds = p->segments;
    const int parent = ncl_mod((int64_t)r - (int64_t)span, n); /* meaningless on the root */
    const int leaf = span == 1 || v + 1 >= (uint64_t)n;
    const ncl_ref in = ncl_plan_input(p, r);
    const uint32_t data = NCL_NOTIFY_DATA(q), ready = NCL_NOTIFY_READY(q);
    uint64_t off, len;

    NCL_GEN_BEGIN(g);
    if (p->count == 0 || (n == 1 && p->inplace))
        return g->line = -1, 0;

    for (g->i = 0; g->i < rounds; g->i++) {
        /* round i, step 0: pre-fill our target with our own input (root in place: it is;
         * a leaf has no target) */
        if (v == 0 ? !p->inplace : !leaf) {
            len = round_part(p, g->i, &off);
            ncl_task_copy(t, ncl_ref_add(in, off * es), target(p, v, off), len * es,
                          (uint32_t)g->i);
            NCL_YIELD(g);
        }
        if (v == 0 && leaf) {
            /* a lone root (p == 1): the copy was all */
            continue;
        }
        /* steps 1..: let each child reduce its subtree's round i into the target, one at a
         * time: grant, then wait for its data before granting the next */
        for (g->m = 1; g->m < span && v + g->m < (uint64_t)n; g->m <<= 1) {
            ncl_task_record(t, ncl_mod((int64_t)r + (int64_t)g->m, n), ready, (uint32_t)g->i);
            NCL_YIELD(g);
            ncl_task_wait(t, ncl_mod((int64_t)r + (int64_t)g->m, n), data, 1, (uint32_t)g->i);
            NCL_YIELD(g);
            len = round_part(p, g->i, &off);
            if (len && !inline_to_parent(p, v + g->m, g->m, off, len)) { /* it wrote to staging */
                ncl_task_reduce(t, p, staging(p), target(p, v, off), len * es, (uint32_t)g->i);
                NCL_YIELD(g);
            }
        }
        if (v == 0) {
            /* root, last step (avg): round i holds the full sum: divide it once */
            if (p->avg) {
                len = round_part(p, g->i, &off);
                ncl_task_div(t, p, target(p, 0, off), len * es, (uint32_t)g->i);
                NCL_YIELD(g);
            }
            continue;
        }
        /* last step: reduce our subtree's round i into the parent once it granted us */
        ncl_task_wait(t, parent, ready, 1, (uint32_t)g->i);
        NCL_YIELD(g);
        len = round_part(p, g->i, &off);
        if (inline_to_parent(p, v, span, off, len))
            ncl_task_write_reduce(t, p, parent, leaf ? ncl_ref_add(in, off * es) : target(p, v, off),
                                  target(p, v - span, off), len * es, (uint32_t)g->i);
        else
            ncl_task_write(t, parent, leaf ? ncl_ref_add(in, off * es) : target(p, v, off), staging(p),
                           len * es, (uint32_t)g->i);
        NCL_YIELD(g);
        ncl_task_record(t, parent, data, (uint32_t)g->i);
        NCL_YIELD(g);
    }
    NCL_GEN_END(g);
}

const ncl_algo_desc ncl_algo_tree_reduce = {"tree", NCL_COLL_REDUCE, NCL_ALGO_TREE, prepare, next};
