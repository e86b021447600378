/* hd_allgather.c — halving-doubling allgather by recursive doubling; non-powers of two fold the
 * extra ranks' blocks in first and hand them the whole result last. */
#include "ncl_algo.h"

/* Blocks and ranks. recv holds p blocks of `count` elements; block b is rank b's input. p' is the
 * largest power of two <= p and r = p - p'. Ranks 2i and 2i+1 (i < r) fold: the odd one writes
 * its block into the even one's recv first and gets every other block from it last. The even one
 * and every rank x >= 2r run the power-of-two algorithm as virtual rank v (2i -> i, x -> x - r);
 * virtual rank u stands for the real blocks [rb(u), rb(u+1)), rb(u) = u < r ? 2u : u + r (a
 * folded pair's two blocks). rb increases, so a range of virtual blocks is a range of real blocks.
 *
 * Steps. Mask m = 1, 2, ..., p'/2: v holds the m virtual blocks from v & ~(m-1) and writes them
 * into the same place of partner v^m's recv, which holds the other m; both then hold 2m. Channel q
 * moves elements [coff, coff + span) of every block (ncl_part): with one channel whole blocks
 * follow each other in recv and a step is one run, otherwise one piece per real block.
 *
 * Every block lands in its own place of recv, written once: no scratch, no rounds, and one READY
 * per writer up front (each rank records READY to its lg p' partners, and a folded even rank to
 * its odd rank; the odd rank's fold-in DATA tells the even rank it is ready for the fold-out).
 *
 * Cost beyond REFERENCE.md (half of the halving-doubling allreduce's alpha and beta terms:
 * lg p alpha + ((p-1)/p) n beta for p = p'; folding adds 2 alpha + (1/p + (p-1)/p) n beta):
 * - one READY latency before the first step;
 * - out of place, the local copy of the rank's own block into recv (n/p);
 * - with several channels, one WRITE per real block of a step instead of one;
 * - transfers bigger than a slice are cut into ceil(bytes / slice) tasks. */

/* What the helpers need, derived from the plan on every call (no loops). */
typedef struct ctx {
    const ncl_plan *p;
    uint64_t p2, r;      /* participants, folded pairs */
    uint64_t v;          /* our virtual rank (meaningless on an odd folded rank) */
    uint64_t span, coff; /* the channel's portion of every block */
} ctx;

static void ctx_init(ctx *c, const ncl_plan *p, uint32_t q)
{
    const uint64_t x = (uint64_t)p->rank;
    c->p = p;
    c->p2 = ncl_pow2_floor((uint64_t)p->nranks);
    c->r = (uint64_t)p->nranks - c->p2;
    c->v = x < 2 * c->r ? x / 2 : x - c->r;
    c->span = ncl_part(p->count, p->queues, q, &c->coff);
}

/* First real block of virtual rank u (u = p' gives p). */
static uint64_t rb(const ctx *c, uint64_t u)
{
    return u < c->r ? 2 * u : u + c->r;
}

/* Our partner at mask m. */
static int partner(const ctx *c, uint64_t m)
{
    return (int)rb(c, c->v ^ m);
}

/* The next WRITE of our channel's pieces of real blocks [b0, b0 + nb) into the same place of
 * `peer`'s recv, from element *el of the *j-th block: at most a slice; with one channel the
 * blocks are one run. Advances (*j, *el); 0 when done. */
static int xfer_next(const ctx *c, int peer, uint64_t b0, uint64_t nb, uint64_t *j, uint64_t *el,
                     uint32_t step, ncl_task *t)
{
    const uint64_t es = c->p->esize, len = c->span;
    if (len == 0 || *j >= nb)
        return 0;
    const uint64_t run = len == c->p->count ? (nb - *j) * len : len;
    const uint64_t n = ncl_min_u64(c->p->slice_elems, run - *el);
    const ncl_ref at = ncl_ref_make(NCL_BUF_RECV, ((b0 + *j) * c->p->count + c->coff + *el) * es);
    ncl_task_write(t, peer, at, at, n * es, step);
    *j += (*el + n) / len;
    *el = (*el + n) % len;
    return 1;
}

static ncl_result prepare(ncl_plan *p)
{
    /* One queue: every channel would exchange with the same partner over the same links, and a
     * channel's share of a group of blocks is strided (one task per block) where one queue writes
     * the contiguous group in one task. */
    p->queues = 1;
    p->segments = 1;
    return NCL_SUCCESS;
}

/* Generator state: k = mask, j = step number (diagnostics), n and m = the block and element of
 * the transfer in progress. */
static int next(const ncl_plan *p, uint32_t q, ncl_gen *g, ncl_task *t)
{
    ctx c;
    ctx_init(&c, p, q);
    const int x = p->rank, odd = (uint64_t)x < 2 * c.r && (x & 1), folded = (uint64_t)x < 2 * c.r && !(x & 1);
    const uint64_t es = p->esize, slice = p->slice_elems, np = (uint64_t)p->nranks;
    const ncl_ref own = ncl_ref_make(NCL_BUF_RECV, ((uint64_t)x * p->count + c.coff) * es);
    const uint32_t data = NCL_NOTIFY_DATA(q), ready = NCL_NOTIFY_READY(q);

    NCL_GEN_BEGIN(g);
    if (c.span == 0)
        return g->line = -1, 0;
    /* out of place: our own block into its place first (the first step sends it from there) */
    for (g->m = 0; !p->inplace && g->m < c.span; g->m += slice) {
        ncl_task_copy(t, ncl_ref_add(ncl_plan_input(p, x), (c.coff + g->m) * es), ncl_ref_add(own, g->m * es),
                      ncl_min_u64(slice, c.span - g->m) * es, 0);
        NCL_YIELD(g);
    }
    if (np == 1)
        return g->line = -1, 0;

    if (odd) {
        /* fold in: our block into the even rank's recv; fold out: the others come back */
        ncl_task_wait(t, x - 1, ready, 1, 0);
        NCL_YIELD(g);
        for (g->n = 0, g->m = 0; xfer_next(&c, x - 1, (uint64_t)x, 1, &g->n, &g->m, 0, t);)
            NCL_YIELD(g);
        ncl_task_record(t, x - 1, data, 0);
        NCL_YIELD(g);
        for (g->j = 1, g->k = 1; g->k < c.p2; g->k <<= 1)
            g->j++;
        ncl_task_wait(t, x - 1, data, 1, (uint32_t)g->j);
        NCL_YIELD(g);
        return g->line = -1, 0;
    }

    /* our recv is bound: the odd rank of our pair and every partner may write */
    if (folded) {
        ncl_task_record(t, x + 1, ready, 0);
        NCL_YIELD(g);
    }
    for (g->k = 1; g->k < c.p2; g->k <<= 1) {
        ncl_task_record(t, partner(&c, g->k), ready, 0);
        NCL_YIELD(g);
    }
    if (folded) { /* fold in: block x+1 has landed */
        ncl_task_wait(t, x + 1, data, 1, 0);
        NCL_YIELD(g);
    }
    /* recursive doubling, masks 1 .. p'/2: our m virtual blocks to v^m */
    for (g->k = 1, g->j = 1; g->k < c.p2; g->k <<= 1, g->j++) {
        ncl_task_wait(t, partner(&c, g->k), ready, 1, (uint32_t)g->j);
        NCL_YIELD(g);
        for (g->n = 0, g->m = 0;
             xfer_next(&c, partner(&c, g->k), rb(&c, c.v & ~(g->k - 1)),
                       rb(&c, (c.v & ~(g->k - 1)) + g->k) - rb(&c, c.v & ~(g->k - 1)), &g->n, &g->m,
                       (uint32_t)g->j, t);)
            NCL_YIELD(g);
        ncl_task_record(t, partner(&c, g->k), data, (uint32_t)g->j);
        NCL_YIELD(g);
        ncl_task_wait(t, partner(&c, g->k), data, 1, (uint32_t)g->j);
        NCL_YIELD(g);
    }
    if (folded) {
        /* fold out: every block but the odd rank's own (its DATA of the fold-in was its READY) */
        for (g->n = 0, g->m = 0; xfer_next(&c, x + 1, 0, (uint64_t)x + 1, &g->n, &g->m, (uint32_t)g->j, t);)
            NCL_YIELD(g);
        for (g->n = 0, g->m = 0;
             xfer_next(&c, x + 1, (uint64_t)x + 2, np - (uint64_t)x - 2, &g->n, &g->m, (uint32_t)g->j, t);)
            NCL_YIELD(g);
        ncl_task_record(t, x + 1, data, (uint32_t)g->j);
        NCL_YIELD(g);
    }
    NCL_GEN_END(g);
}

const ncl_algo_desc ncl_algo_hd_allgather = {"hd", NCL_COLL_ALLGATHER, NCL_ALGO_HD, prepare, next};
