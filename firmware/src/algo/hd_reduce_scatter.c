/* hd_reduce_scatter.c — halving-doubling reduce-scatter by recursive halving; non-powers of two
 * fold the extra ranks in first and hand them their block at the end. */
#include "ncl_algo.h"

/* Blocks and ranks. Real block b (b < p) is elements [b*count, (b+1)*count) of every input and
 * ends reduced on rank b. p' is the largest power of two <= p and r = p - p'. Ranks 2i and 2i+1
 * (i < r) fold: the odd one sends its input to the even one, which reduces it in. The even one
 * and every rank x >= 2r run the power-of-two algorithm as virtual rank v (2i -> i, x -> x - r);
 * virtual rank u owns the real blocks [rb(u), rb(u+1)), rb(u) = u < r ? 2u : u + r. So the
 * folded pair's blocks 2i and 2i+1 both end on the even rank, which writes block 2i+1 into the
 * odd rank's output last. rb increases, so a range of virtual blocks is a range of real blocks.
 *
 * Steps. Mask m = p'/2, ..., 1: of the 2m virtual blocks v still works on it keeps the m from
 * v & ~(m-1); partner v^m keeps the other m. v sends the partner's half and reduces the
 * partner's copy of its own half in. After the last step v holds its own blocks; avg divides them
 * there, once.
 *
 * Rounds and places. Channel q takes elements [coff, coff + span) of every block (ncl_part),
 * round i the len <= e of them from coff + i*e. A partial sum moves as it is reduced: the
 * receiver of a step takes the partner's pieces into a scratch slot, packed (len elements per
 * real block), and reduces its own partial (its input, the fold slot, or the previous step's
 * slot) into them (LOCAL_REDUCE). The last step lands a rank's own block straight in its output.
 * So nothing but the output is ever written in the caller's buffers (in place: the rest of the
 * input stays intact), and after the first step every transfer is one run (but the last step's
 * to a folded rank: its two blocks land in its output and in its slot).
 * The exception: in place with p' = 2 and no fold, the only step would land on the rank's own
 * input before it was read; that step lands in the slot and is reduced into the output.
 *
 * Why WRITE + LOCAL_REDUCE and not WRITE_REDUCE into the partner's kept half: out of place the
 * partner has no room for a half outside scratch anyway, and inline reduce needs a READY from the
 * partner on every step after the previous step's data landed (one more latency per step). Here
 * a slot needs a READY only before it is rewritten in the next round, and that READY is recorded
 * as soon as the slot was read (a step later), a whole round before it is waited for.
 *
 * READYs (all recorded long before they are waited for, except the very first):
 * - slot of mask m >= 2 and the fold slot: round 0 at the start; round i+1 after the step that
 *   read the slot last in round i (mask m/2; for the fold slot the first step);
 * - mask 1: in round i, once the rank's own input piece (in place: its output) has been read —
 *   after the first step, or for p' = 2 at the start of the round (after the fold-in). It also
 *   follows the end of round i-1, where the slot of mask 1 was read last.
 * Scratch per channel: the slot of mask m holds at most f*m blocks of e elements (f = 2 when
 * folding, since a virtual block may be two real ones), the fold slot p blocks: e is as large as
 * fits, up to the channel's whole portion; prepare drops channels when not even e = 1 fits, and
 * refuses when one channel does not fit either.
 *
 * Cost beyond REFERENCE.md (lg p alpha + ((p-1)/p) n beta + ((p-1)/p) n gamma for p = p', n the
 * whole input of a rank; folding adds 2 alpha + (1 + 1/p) n beta + n gamma: the odd rank's input
 * in, its block out, and the even rank's reduce):
 * - one READY latency before the first step;
 * - a LOCAL_REDUCE task per step and slice (its issue overhead; its bytes are the gamma term), and
 *   with avg a LOCAL_DIV of the rank's blocks per round;
 * - the first step reads the input where it lies: with several channels (or rounds) the pieces of
 *   its blocks are not contiguous, so its WRITE and LOCAL_REDUCE are one task per real block
 *   (p'/2 or more instead of one); the fold-in likewise p of each;
 * - rounds: a channel's portion larger than e elements per block repeats the lg p' steps (and the
 *   fold's two messages) once per round;
 * - transfers bigger than a slice are cut into ceil(bytes / slice) tasks. */

/* Scratch bytes of one channel (element aligned). */
static uint64_t channel_scratch(const ncl_plan *p)
{
    return p->scratch_bytes / p->queues / p->esize * p->esize;
}

/* Blocks of e elements the slots of one channel hold: f*(p'-1) for the steps, p for the fold. */
static uint64_t slot_blocks(const ncl_plan *p)
{
    const uint64_t p2 = ncl_pow2_floor((uint64_t)p->nranks), r = (uint64_t)p->nranks - p2;
    return r ? 2 * (p2 - 1) + (uint64_t)p->nranks : p2 - 1;
}

/* Elements per block per round: the whole channel portion when the slots hold it. */
static uint64_t round_elems(const ncl_plan *p)
{
    uint64_t e = ncl_div_ceil(p->count, p->queues);
    if (p->nranks > 1)
        e = ncl_min_u64(e, channel_scratch(p) / p->esize / slot_blocks(p));
    return e;
}

enum { FOLD_IN, FOLD_REDUCE, SEND, REDUCE, DIVIDE, FOLD_OUT };

/* What the helpers need, derived from the plan on every call (no loops). */
typedef struct ctx {
    const ncl_plan *p;
    uint32_t q;
    int x;               /* our rank */
    uint64_t p2, r, f;   /* participants, folded pairs, real blocks per virtual block at most */
    uint64_t v;          /* our virtual rank (meaningless on an odd folded rank) */
    uint64_t e;          /* elements per block per round */
    uint64_t span, coff; /* the channel's portion of every block */
    uint64_t o, len;     /* the current round's portion of every block */
} ctx;

static void ctx_init(ctx *c, const ncl_plan *p, uint32_t q)
{
    const uint64_t x = (uint64_t)p->rank;
    c->p = p;
    c->q = q;
    c->x = p->rank;
    c->p2 = ncl_pow2_floor((uint64_t)p->nranks);
    c->r = (uint64_t)p->nranks - c->p2;
    c->f = c->r ? 2 : 1;
    c->v = x < 2 * c->r ? x / 2 : x - c->r;
    c->e = round_elems(p);
    c->span = ncl_part(p->count, p->queues, q, &c->coff);
    c->o = c->coff;
    c->len = 0;
}

/* Selects round i (len = 0 past the last one). */
static void set_round(ctx *c, uint64_t i)
{
    c->o = c->coff + i * c->e;
    c->len = i * c->e < c->span ? ncl_min_u64(c->e, c->span - i * c->e) : 0;
}

static int has_round(const ctx *c, uint64_t i)
{
    return i * c->e < c->span;
}

/* First real block of virtual rank u (u = p' gives p). */
static uint64_t rb(const ctx *c, uint64_t u)
{
    return u < c->r ? 2 * u : u + c->r;
}

static uint64_t virt(const ctx *c, int x)
{
    return (uint64_t)x < 2 * c->r ? (uint64_t)x / 2 : (uint64_t)x - c->r;
}

/* Our partner at mask m. */
static int partner(const ctx *c, uint64_t m)
{
    return (int)rb(c, c->v ^ m);
}

/* Rank x's input piece of block b, its output piece (this round). */
static ncl_ref input_at(const ctx *c, int x, uint64_t b)
{
    return ncl_ref_add(ncl_plan_input(c->p, x), (b * c->p->count + c->o) * c->p->esize);
}

static ncl_ref output_at(const ctx *c, int x)
{
    return ncl_ref_add(ncl_plan_output(c->p, x), c->o * c->p->esize);
}

/* Scratch of our channel: the slot of mask m (after those of the larger masks), then the fold
 * slot; both packed, len elements per real block. */
static ncl_ref fold_at(const ctx *c, uint64_t b)
{
    const uint64_t es = c->p->esize;
    return ncl_ref_make(NCL_BUF_SCRATCH, c->q * channel_scratch(c->p) + c->f * (c->p2 - 1) * c->e * es +
                                             b * c->len * es);
}

/* Participant x's slot of mask m, piece of block b (which is in x's half at that step). */
static ncl_ref slot_at(const ctx *c, int x, uint64_t m, uint64_t b)
{
    const uint64_t es = c->p->esize, first = rb(c, virt(c, x) & ~(m - 1));
    return ncl_ref_make(NCL_BUF_SCRATCH, c->q * channel_scratch(c->p) + c->f * (c->p2 - 2 * m) * c->e * es +
                                             (b - first) * c->len * es);
}

/* In place with p' = 2 and no fold, participant x's only step would land its own block on its
 * input before it was read. */
static int output_busy(const ctx *c, int x)
{
    return c->p->inplace && c->p2 == 2 && (uint64_t)x >= 2 * c->r;
}

/* Where participant x holds its partial sum of block b after the step of mask m (m = p': before
 * the first step, i.e. its input or the fold slot). Its own block ends in its output. */
static ncl_ref held(const ctx *c, int x, uint64_t m, uint64_t b)
{
    if (m == 1 && b == (uint64_t)x)
        return output_at(c, x);
    if (m == c->p2)
        return (uint64_t)x < 2 * c->r ? fold_at(c, b) : input_at(c, x, b);
    return slot_at(c, x, m, b);
}

/* Where the partner's piece of block b lands on participant x at the step of mask m. */
static ncl_ref landing(const ctx *c, int x, uint64_t m, uint64_t b)
{
    if (m == 1 && b == (uint64_t)x && !output_busy(c, x))
        return output_at(c, x);
    return slot_at(c, x, m, b);
}

static int same(ncl_ref a, ncl_ref b)
{
    return a.buf == b.buf && a.off == b.off;
}

/* Transfer `kind` (of the step of mask m): its real blocks [*b0, return), the rank it writes to. */
static uint64_t xfer_blocks(const ctx *c, int kind, uint64_t m, uint64_t *b0, int *peer)
{
    const uint64_t u = kind == SEND ? c->v ^ m : c->v, lo = u & ~(m - 1);
    *peer = kind == FOLD_IN ? c->x - 1 : kind == FOLD_OUT ? c->x + 1 : (int)rb(c, u);
    switch (kind) {
    case FOLD_IN:
    case FOLD_REDUCE:
        *b0 = 0;
        return (uint64_t)c->p->nranks;
    case FOLD_OUT:
        *b0 = (uint64_t)c->x + 1;
        return 1;
    case DIVIDE:
        *b0 = rb(c, c->v);
        return rb(c, c->v + 1) - *b0;
    default: /* SEND: the partner's half; REDUCE: ours */
        *b0 = rb(c, lo);
        return rb(c, lo + m) - *b0;
    }
}

/* Source and destination of transfer `kind`'s piece of block b. */
static void xfer_refs(const ctx *c, int kind, uint64_t m, int peer, uint64_t b, ncl_ref *src, ncl_ref *dst)
{
    switch (kind) {
    case FOLD_IN: /* the odd rank's input into the even rank's fold slot */
        *src = input_at(c, c->x, b);
        *dst = fold_at(c, b);
        return;
    case FOLD_REDUCE: /* ours into it */
        *src = input_at(c, c->x, b);
        *dst = fold_at(c, b);
        return;
    case SEND:
        *src = held(c, c->x, 2 * m, b);
        *dst = landing(c, peer, m, b);
        return;
    case REDUCE: /* the two operands are the landed piece and our partial; the sum goes where
                    we hold the block from now on (one of the two) */
        *dst = held(c, c->x, m, b);
        *src = same(*dst, landing(c, c->x, m, b)) ? held(c, c->x, 2 * m, b) : landing(c, c->x, m, b);
        return;
    case DIVIDE:
        *src = *dst = held(c, c->x, 1, b);
        return;
    default: /* FOLD_OUT: block 2i+1 into the odd rank's output */
        *src = held(c, c->x, 1, b);
        *dst = output_at(c, peer);
        return;
    }
}

/* The next task of round i's transfer `kind`, from element *el of its *j-th block: at most a
 * slice, running on into the next blocks while both sides stay contiguous. Advances (*j, *el);
 * 0 when done. */
static int xfer_next(const ctx *c0, uint64_t i, int kind, uint64_t m, uint64_t *j, uint64_t *el,
                     uint32_t step, ncl_task *t)
{
    ctx rc = *c0;
    const ctx *c = &rc;
    set_round(&rc, i);
    const ncl_plan *p = c->p;
    const uint64_t es = p->esize, slice = p->slice_elems, len = c->len;
    uint64_t b0, n, k;
    int peer;
    const uint64_t nb = xfer_blocks(c, kind, m, &b0, &peer);
    ncl_ref src, dst, s, d;
    if (len == 0 || *j >= nb)
        return 0;
    xfer_refs(c, kind, m, peer, b0 + *j, &src, &dst);
    src = ncl_ref_add(src, *el * es);
    dst = ncl_ref_add(dst, *el * es);
    n = ncl_min_u64(slice, len - *el);
    for (k = *j + 1; n < slice && *el + n == (k - *j) * len && k < nb; k++) {
        xfer_refs(c, kind, m, peer, b0 + k, &s, &d);
        if (!same(s, ncl_ref_add(src, n * es)) || !same(d, ncl_ref_add(dst, n * es)))
            break;
        n += ncl_min_u64(slice - n, len);
    }
    *j += (*el + n) / len;
    *el = (*el + n) % len;
    switch (kind) {
    case FOLD_IN:
    case SEND:
    case FOLD_OUT:
        ncl_task_write(t, peer, src, dst, n * es, step);
        return 1;
    case DIVIDE:
        ncl_task_div(t, p, dst, n * es, step);
        return 1;
    default:
        ncl_task_reduce(t, p, src, dst, n * es, step);
        return 1;
    }
}

static ncl_result prepare(ncl_plan *p)
{
    /* One queue: every channel would exchange with the same partner over the same links, and a
     * channel's share of a block range is strided (one task per block). */
    p->queues = 1;
    p->segments = 1;
    if (p->count > 0 && p->nranks > 1 && round_elems(p) == 0)
        return NCL_ERR_UNSUPPORTED;
    return NCL_SUCCESS;
}

/* Generator state: i = round, k = mask, j = step number (diagnostics), n and m = the block and
 * element of the transfer in progress. */
static int next(const ncl_plan *p, uint32_t q, ncl_gen *g, ncl_task *t)
{
    ctx c;
    ctx_init(&c, p, q);
    const int x = p->rank, odd = (uint64_t)x < 2 * c.r && (x & 1), folded = (uint64_t)x < 2 * c.r && !(x & 1);
    const uint64_t es = p->esize, slice = p->slice_elems, top = c.p2 / 2;
    const uint32_t data = NCL_NOTIFY_DATA(q), ready = NCL_NOTIFY_READY(q);
    uint64_t len;

    NCL_GEN_BEGIN(g);
    if (c.span == 0 || c.e == 0)
        return g->line = -1, 0;
    if (p->nranks == 1) { /* out of place: copy the channel's portion */
        for (g->m = 0; !p->inplace && g->m < c.span; g->m += slice) {
            len = ncl_min_u64(slice, c.span - g->m);
            ncl_task_copy(t, ncl_ref_add(ncl_plan_input(p, x), (c.coff + g->m) * es),
                          ncl_ref_add(ncl_plan_output(p, x), (c.coff + g->m) * es), len * es, 0);
            NCL_YIELD(g);
        }
        return g->line = -1, 0;
    }

    if (odd) {
        /* every round: our input into the even rank's fold slot, then our block back from it */
        for (g->i = 0, g->j = 0; has_round(&c, g->i); g->i++) {
            ncl_task_wait(t, x - 1, ready, 1, (uint32_t)g->j);
            NCL_YIELD(g);
            for (g->n = 0, g->m = 0; xfer_next(&c, g->i, FOLD_IN, 0, &g->n, &g->m, (uint32_t)g->j, t);)
                NCL_YIELD(g);
            ncl_task_record(t, x - 1, data, (uint32_t)g->j);
            NCL_YIELD(g);
            for (g->k = 1; g->k <= c.p2; g->k <<= 1)
                g->j++;
            ncl_task_wait(t, x - 1, data, 1, (uint32_t)g->j);
            NCL_YIELD(g);
            g->j++;
        }
        return g->line = -1, 0;
    }

    /* round 0 may write into our fold slot and the slots of masks >= 2 (mask 1: see below) */
    if (folded) {
        ncl_task_record(t, x + 1, ready, 0);
        NCL_YIELD(g);
    }
    for (g->k = top; g->k >= 2; g->k >>= 1) {
        ncl_task_record(t, partner(&c, g->k), ready, 0);
        NCL_YIELD(g);
    }

    for (g->i = 0, g->j = 0; has_round(&c, g->i); g->i++) {
        if (folded) {
            /* fold in: the odd rank's input is in our fold slot; reduce ours into it */
            ncl_task_wait(t, x + 1, data, 1, (uint32_t)g->j);
            NCL_YIELD(g);
            for (g->n = 0, g->m = 0; xfer_next(&c, g->i, FOLD_REDUCE, 0, &g->n, &g->m, (uint32_t)g->j, t);)
                NCL_YIELD(g);
            g->j++;
        }
        if (c.p2 == 2) {
            /* the only step is the last, and the partner may write now: a folded rank has read
             * its input piece in the fold-in, in place otherwise the step lands in the slot (see
             * output_busy), whose last reader was the previous round */
            g->k = 1;
            ncl_task_record(t, partner(&c, g->k), ready, (uint32_t)g->j);
            NCL_YIELD(g);
        }
        /* recursive halving, masks p'/2 .. 1 */
        for (g->k = top; g->k; g->k >>= 1, g->j++) {
            ncl_task_wait(t, partner(&c, g->k), ready, 1, (uint32_t)g->j);
            NCL_YIELD(g);
            for (g->n = 0, g->m = 0; xfer_next(&c, g->i, SEND, g->k, &g->n, &g->m, (uint32_t)g->j, t);)
                NCL_YIELD(g);
            ncl_task_record(t, partner(&c, g->k), data, (uint32_t)g->j);
            NCL_YIELD(g);
            ncl_task_wait(t, partner(&c, g->k), data, 1, (uint32_t)g->j);
            NCL_YIELD(g);
            for (g->n = 0, g->m = 0; xfer_next(&c, g->i, REDUCE, g->k, &g->n, &g->m, (uint32_t)g->j, t);)
                NCL_YIELD(g);
            /* what this step read for the last time may be written again */
            if (g->k == top && c.p2 > 2) { /* our input piece (in place: our output) */
                ncl_task_record(t, partner(&c, 1), ready, (uint32_t)g->j);
                NCL_YIELD(g);
            }
            if (g->k == top && folded && has_round(&c, g->i + 1)) { /* the fold slot, for the next round */
                ncl_task_record(t, x + 1, ready, (uint32_t)g->j);
                NCL_YIELD(g);
            }
            if (g->k < top && has_round(&c, g->i + 1)) { /* the previous step's slot, next round */
                ncl_task_record(t, partner(&c, 2 * g->k), ready, (uint32_t)g->j);
                NCL_YIELD(g);
            }
        }
        /* our blocks are reduced over all ranks: finish avg once; block 2i+1 to the odd rank */
        for (g->n = 0, g->m = 0; p->avg && xfer_next(&c, g->i, DIVIDE, 1, &g->n, &g->m, (uint32_t)g->j, t);)
            NCL_YIELD(g);
        if (folded) {
            for (g->n = 0, g->m = 0; xfer_next(&c, g->i, FOLD_OUT, 1, &g->n, &g->m, (uint32_t)g->j, t);)
                NCL_YIELD(g);
            ncl_task_record(t, x + 1, data, (uint32_t)g->j);
            NCL_YIELD(g);
        }
        g->j++;
    }
    NCL_GEN_END(g);
}

const ncl_algo_desc ncl_algo_hd_reduce_scatter = {"hd", NCL_COLL_REDUCE_SCATTER, NCL_ALGO_HD, prepare,
                                                  next};
