/* hd_allreduce.c — halving-doubling (Rabenseifner) allreduce: reduce-scatter by recursive halving,
 * then allgather by recursive doubling; non-powers of two fold the extra ranks in and out. */
#include "ncl_algo.h"

/* Ranks. p' is the largest power of two <= p and r = p - p'. Ranks 2i and 2i+1 (i < r) fold: the
 * odd one hands its whole contribution to the even one first and gets the result back last. The
 * even one and every rank x >= 2r run the power-of-two algorithm as virtual rank v (2i -> i,
 * x -> x - r); below, "partner" and "rank" mean these p' participants.
 *
 * Blocks. Each channel (queue) takes its ncl_part portion of the buffer and cuts it into rounds of
 * at most p' * bmax elements; a round is split into p' blocks (ncl_part) and block u ends up fully
 * reduced on virtual rank u. Reduce-scatter step with mask m (m = p'/2, ..., 2, 1): of the 2m
 * blocks v still works on, it keeps the m from v & ~(m-1); partner v^m keeps the other m. So v
 * sends the partner's half and reduces the partner's copy of its own half in. After the last
 * step v holds block v; avg divides it there, once. The allgather walks the masks back up (1, 2,
 * ..., p'/2): v sends its m finished blocks to v^m, into the same place of the partner's recv.
 *
 * Reduction: the sender WRITEs into a scratch slot of the receiver and the receiver reduces the
 * slot into its recv (LOCAL_REDUCE). The alternative, WRITE_REDUCE into the partner's kept half,
 * needs a READY from the partner on every step (its half must have taken the previous step's
 * data first): one more latency per step. Slots cost scratch: the slot of mask m holds m blocks,
 * p'-1 blocks per channel in all, which bounds bmax (prepare drops channels when not even one
 * element per block fits, and refuses when one channel does not fit either). No slot needs a
 * READY of its own: a slot is written again only in the next round, and every reduce-scatter
 * partner hears from us again in the allgather, after we reduced its slot. The allgather writes
 * into the partner's half of a step, which the partner last touched before its DATA record of
 * that step. So the only READY is the one each rank records at the start to its lg p' partners
 * (they write into its slots and recv from then on).
 *
 * Out of place, a rank whose recv holds nothing yet (not a folded one) takes the first step's data
 * straight into its recv and reduces its send buffer into it: no pre-copy (its first slot idles).
 *
 * Cost beyond REFERENCE.md (2 lg p alpha + 2((p-1)/p) n beta + ((p-1)/p) n gamma; for p not a
 * power of two (2 floor(lg p) + 2) alpha + (2(p-1)/p + 2) n beta + (1 + (p-1)/p) n gamma):
 * - one READY latency before the first step (the other partners' READYs were recorded at the
 *   start and have arrived by the time they are waited for);
 * - a LOCAL_REDUCE task per reduce-scatter step and slice (its issue overhead; its bytes are the
 *   gamma term), and with avg a LOCAL_DIV of the rank's block per round;
 * - rounds: a channel's portion larger than p' * bmax elements (about p'/(p'-1) times the
 *   channel's share of scratch) repeats the 2 lg p' steps, and their alpha, once per round;
 * - transfers bigger than a slice are cut into ceil(bytes / slice) tasks;
 * - folding (p not a power of two): the odd rank's contribution goes in with one message per
 *   slice and the result comes back the same way; out of place the even rank reduces it in with
 *   LOCAL_REDUCE, in place the odd rank WRITE_REDUCEs straight into the even rank's recv (the
 *   even rank's recv holds its input, and nothing else writes there before the fold-in DATA). */

/* Scratch bytes of one channel (element aligned). */
static uint64_t channel_scratch(const ncl_plan *p)
{
    return p->scratch_bytes / p->queues / p->esize * p->esize;
}

/* Largest block of a round: a channel's whole portion in one round when the slots hold it. */
static uint64_t block_max(const ncl_plan *p)
{
    uint64_t p2 = ncl_pow2_floor((uint64_t)p->nranks);
    uint64_t b = ncl_div_ceil(ncl_div_ceil(p->count, p->queues), p2);
    if (p2 > 1)
        b = ncl_min_u64(b, channel_scratch(p) / p->esize / (p2 - 1));
    return b;
}

/* What the helpers need, derived from the plan on every call (no loops). */
typedef struct ctx {
    const ncl_plan *p;
    uint32_t q;
    uint64_t p2, r;      /* participants, folded pairs */
    uint64_t v;          /* our virtual rank (meaningless on an odd folded rank) */
    uint64_t bmax;       /* largest block of a round */
    uint64_t span, coff; /* the channel's portion of the buffer */
} ctx;

static void ctx_init(ctx *c, const ncl_plan *p, uint32_t q)
{
    const uint64_t x = (uint64_t)p->rank;
    c->p = p;
    c->q = q;
    c->p2 = ncl_pow2_floor((uint64_t)p->nranks);
    c->r = (uint64_t)p->nranks - c->p2;
    c->v = x < 2 * c->r ? x / 2 : x - c->r;
    c->bmax = block_max(p);
    c->span = ncl_part(p->count, p->queues, q, &c->coff);
}

/* The real rank of virtual rank u. */
static int real_rank(const ctx *c, uint64_t u)
{
    return (int)(u < c->r ? 2 * u : u + c->r);
}

/* Our partner at mask m. */
static int partner(const ctx *c, uint64_t m)
{
    return real_rank(c, c->v ^ m);
}

/* Whether virtual rank u's recv holds its contribution before the first step (in place, or
 * folded in). If not, the first step's data lands there and u reduces its send buffer into it. */
static int filled(const ctx *c, uint64_t u)
{
    return c->p->inplace || u < c->r;
}

/* Round i: its first element in *lo; returns its length, 0 past the last round. */
static uint64_t round_span(const ctx *c, uint64_t i, uint64_t *lo)
{
    const uint64_t size = c->p2 * c->bmax, start = i * size;
    *lo = c->coff + start;
    return start < c->span ? ncl_min_u64(size, c->span - start) : 0;
}

/* Blocks [u, u + m) of round i: their first element in *lo; returns their length. */
static uint64_t blocks(const ctx *c, uint64_t i, uint64_t u, uint64_t m, uint64_t *lo)
{
    uint64_t rlo, hi, rlen = round_span(c, i, &rlo);
    ncl_part(rlen, c->p2, u, lo);
    ncl_part(rlen, c->p2, u + m, &hi);
    hi -= *lo;
    *lo += rlo;
    return hi;
}

/* The slot of mask m on our channel: m blocks, after the slots of the larger masks. */
static ncl_ref slot(const ctx *c, uint64_t m)
{
    return ncl_ref_make(NCL_BUF_SCRATCH,
                        c->q * channel_scratch(c->p) + (c->p2 - 2 * m) * c->bmax * c->p->esize);
}

/* Where our data for element e stands before the step of mask m: in recv, or before the first
 * step in the input when recv has nothing yet. */
static ncl_ref ours(const ctx *c, uint64_t m, uint64_t e)
{
    if (m == c->p2 / 2 && !filled(c, c->v))
        return ncl_ref_add(ncl_plan_input(c->p, c->p->rank), e * c->p->esize);
    return ncl_ref_make(NCL_BUF_RECV, e * c->p->esize);
}

/* Where virtual rank u receives element e (the rel-th of its half) at the step of mask m: its
 * slot, or on the first step its recv when that has nothing yet. */
static ncl_ref landing(const ctx *c, uint64_t u, uint64_t m, uint64_t e, uint64_t rel)
{
    if (m == c->p2 / 2 && !filled(c, u))
        return ncl_ref_make(NCL_BUF_RECV, e * c->p->esize);
    return ncl_ref_add(slot(c, m), rel * c->p->esize);
}

static ncl_result prepare(ncl_plan *p)
{
    const uint64_t p2 = ncl_pow2_floor((uint64_t)p->nranks);
    /* One queue: every channel would exchange with the same partner over the same links, and a
     * channel's share of a block range is strided (one task per block) where one queue moves the
     * contiguous range in one task per step. */
    uint32_t q = 1;
    p->queues = q;
    p->segments = 1;
    if (p->count > 0 && p2 > 1 && p->scratch_bytes / q / p->esize < p2 - 1)
        return NCL_ERR_UNSUPPORTED;
    /* in place, the fold reduces inline into the even rank's input */
    if (p->inplace && p2 != (uint64_t)p->nranks && !ncl_inline_all(p))
        return NCL_ERR_UNSUPPORTED;
    return NCL_SUCCESS;
}

/* Generator state: i = round, k = mask, j = step number (diagnostics: 0 is the fold-in), m = the
 * element of the transfer in progress. */
static int next(const ncl_plan *p, uint32_t q, ncl_gen *g, ncl_task *t)
{
    ctx c;
    ctx_init(&c, p, q);
    const int x = p->rank, odd = (uint64_t)x < 2 * c.r && (x & 1), folded = (uint64_t)x < 2 * c.r && !(x & 1);
    const uint64_t es = p->esize, slice = p->slice_elems, coff = c.coff, span = c.span, v = c.v;
    const ncl_ref in = ncl_plan_input(p, x), recv = ncl_ref_make(NCL_BUF_RECV, 0);
    const uint32_t data = NCL_NOTIFY_DATA(q), ready = NCL_NOTIFY_READY(q);
    uint64_t lo, len;

    NCL_GEN_BEGIN(g);
    if (span == 0 || round_span(&c, 0, &lo) == 0)
        return g->line = -1, 0;
    if (p->nranks == 1) { /* out of place: copy the channel's portion */
        for (g->m = 0; !p->inplace && g->m < span; g->m += slice) {
            len = ncl_min_u64(slice, span - g->m);
            ncl_task_copy(t, ncl_ref_add(in, (coff + g->m) * es), ncl_ref_add(recv, (coff + g->m) * es),
                          len * es, 0);
            NCL_YIELD(g);
        }
        return g->line = -1, 0;
    }

    if (odd) {
        /* fold in: our contribution into the even rank's recv; in place that holds the even
         * rank's input (reduce inline), out of place it is empty (the even rank reduces) */
        ncl_task_wait(t, x - 1, ready, 1, 0);
        NCL_YIELD(g);
        for (g->m = 0; g->m < span; g->m += slice) {
            len = ncl_min_u64(slice, span - g->m);
            if (p->inplace)
                ncl_task_write_reduce(t, p, x - 1, ncl_ref_add(in, (coff + g->m) * es),
                                      ncl_ref_add(recv, (coff + g->m) * es), len * es, 0);
            else
                ncl_task_write(t, x - 1, ncl_ref_add(in, (coff + g->m) * es),
                               ncl_ref_add(recv, (coff + g->m) * es), len * es, 0);
            NCL_YIELD(g);
        }
        ncl_task_record(t, x - 1, data, 0);
        NCL_YIELD(g);
        /* fold out: the even rank writes the whole result into our recv (step number: after
         * its 2 lg p' steps per round) */
        for (g->j = 1, g->i = 0; round_span(&c, g->i, &lo) != 0; g->i++)
            for (g->k = 1; g->k < c.p2; g->k <<= 1)
                g->j += 2;
        ncl_task_wait(t, x - 1, data, 1, (uint32_t)g->j);
        NCL_YIELD(g);
        return g->line = -1, 0;
    }

    /* our recv and slots are bound: the odd rank of our pair and every partner may write */
    if (folded) {
        ncl_task_record(t, x + 1, ready, 0);
        NCL_YIELD(g);
    }
    for (g->k = c.p2 / 2; g->k; g->k >>= 1) {
        ncl_task_record(t, partner(&c, g->k), ready, 0);
        NCL_YIELD(g);
    }
    if (folded) {
        /* fold in: the odd rank's contribution has landed in our recv; out of place add ours */
        ncl_task_wait(t, x + 1, data, 1, 0);
        NCL_YIELD(g);
        for (g->m = 0; !p->inplace && g->m < span; g->m += slice) {
            len = ncl_min_u64(slice, span - g->m);
            ncl_task_reduce(t, p, ncl_ref_add(in, (coff + g->m) * es), ncl_ref_add(recv, (coff + g->m) * es),
                            len * es, 0);
            NCL_YIELD(g);
        }
    }

    g->j = 1;
    for (g->i = 0; round_span(&c, g->i, &lo) != 0; g->i++) {
        /* reduce-scatter by recursive halving, masks p'/2 .. 1 */
        for (g->k = c.p2 / 2; g->k; g->k >>= 1, g->j++) {
            if (g->i == 0) {
                ncl_task_wait(t, partner(&c, g->k), ready, 1, (uint32_t)g->j);
                NCL_YIELD(g);
            }
            /* the partner's half: from our recv (first step: our input, unless recv has it),
             * into the partner's slot (first step: straight into its recv, unless that has its
             * own contribution already) */
            for (g->m = 0; g->m < (len = blocks(&c, g->i, (v ^ g->k) & ~(g->k - 1), g->k, &lo));
                 g->m += slice) {
                ncl_task_write(t, partner(&c, g->k), ours(&c, g->k, lo + g->m),
                               landing(&c, v ^ g->k, g->k, lo + g->m, g->m),
                               ncl_min_u64(slice, len - g->m) * es, (uint32_t)g->j);
                NCL_YIELD(g);
            }
            ncl_task_record(t, partner(&c, g->k), data, (uint32_t)g->j);
            NCL_YIELD(g);
            ncl_task_wait(t, partner(&c, g->k), data, 1, (uint32_t)g->j);
            NCL_YIELD(g);
            /* our half: the partner's copy is in our slot (first step: maybe in recv, and our
             * contribution still in the input); reduce it into recv */
            for (g->m = 0; g->m < (len = blocks(&c, g->i, v & ~(g->k - 1), g->k, &lo)); g->m += slice) {
                ncl_task_reduce(t, p,
                                filled(&c, v) || g->k != c.p2 / 2 ? landing(&c, v, g->k, lo + g->m, g->m)
                                                                   : ours(&c, g->k, lo + g->m),
                                ncl_ref_add(recv, (lo + g->m) * es), ncl_min_u64(slice, len - g->m) * es,
                                (uint32_t)g->j);
                NCL_YIELD(g);
            }
        }
        /* block v is reduced over all ranks: finish avg once, before it is gathered */
        for (g->m = 0; p->avg && g->m < (len = blocks(&c, g->i, v, 1, &lo)); g->m += slice) {
            ncl_task_div(t, p, ncl_ref_add(recv, (lo + g->m) * es), ncl_min_u64(slice, len - g->m) * es,
                         (uint32_t)g->j);
            NCL_YIELD(g);
        }
        /* allgather by recursive doubling, masks 1 .. p'/2: our m finished blocks to v^m */
        for (g->k = 1; g->k < c.p2; g->k <<= 1, g->j++) {
            for (g->m = 0; g->m < (len = blocks(&c, g->i, v & ~(g->k - 1), g->k, &lo)); g->m += slice) {
                ncl_task_write(t, partner(&c, g->k), ncl_ref_add(recv, (lo + g->m) * es),
                               ncl_ref_add(recv, (lo + g->m) * es), ncl_min_u64(slice, len - g->m) * es,
                               (uint32_t)g->j);
                NCL_YIELD(g);
            }
            ncl_task_record(t, partner(&c, g->k), data, (uint32_t)g->j);
            NCL_YIELD(g);
            ncl_task_wait(t, partner(&c, g->k), data, 1, (uint32_t)g->j);
            NCL_YIELD(g);
        }
    }

    if (folded) {
        /* fold out: the whole result to the odd rank (its fold-in DATA said it is ready) */
        for (g->m = 0; g->m < span; g->m += slice) {
            len = ncl_min_u64(slice, span - g->m);
            ncl_task_write(t, x + 1, ncl_ref_add(recv, (coff + g->m) * es),
                           ncl_ref_add(recv, (coff + g->m) * es), len * es, (uint32_t)g->j);
            NCL_YIELD(g);
        }
        ncl_task_record(t, x + 1, data, (uint32_t)g->j);
        NCL_YIELD(g);
    }
    NCL_GEN_END(g);
}

const ncl_algo_desc ncl_algo_hd_allreduce = {"hd", NCL_COLL_ALLREDUCE, NCL_ALGO_HD, prepare, next};
