/* ring_allreduce.c — ring allreduce: reduce-scatter then allgather around the ring, with inline
 * reduce at the destination, split over channels and cut into rounds of at most one slice; out
 * of place a fill queue per channel copies the rank's own contributions ahead of the ring. */
#include "ncl_algo.h"

/* Layout: the buffer is split into one contiguous portion per channel; each portion is split
 * into nranks chunks; each round moves at most slice_elems of every chunk. Channel c runs on its
 * logical ring (ncl_ring_*); below, i is a rank's position on it and chunk k the k-th.
 * Position i sends chunk i-1-s at reduce-scatter step s and so ends holding the fully reduced
 * chunk i, which it sends first in the allgather. It receives chunk i-2-s at step s, reduced
 * into its recv: out of place that chunk must first hold its own contribution, copied from the
 * input. Only chunk i-1 needs no copy (sent straight from the input at step 0, never reduced
 * into, overwritten by the allgather).
 *
 * Order (ncl_round_step): with several data tasks in flight per queue, the steps in order and each
 * step's rounds back to back under one DATA record, so that a step costs one latency whatever its
 * rounds; with one, round by round, a round's data hot in cache from its reduce-scatter to its
 * allgather. The staged path (below) records DATA after every round, each into its own slot.
 *
 * Out of place, with room for twice the channels (queues and DMA engines), channel c gets a fill
 * queue (channels + c) that copies those contributions in the order the steps receive them, round
 * by round, in batches (batch_end), and records READY to the predecessor after each batch (on the
 * fill queue's own READY id so that it never aliases the staged path's READY(c) below); the ring
 * queue waits for it before the first reduce-scatter write of each batch. Only the first copy is on
 * the critical path, the rest runs ahead of the ring; and that first chunk (round 0, step 0) is
 * copied and written in pieces that grow (ncl_lead_piece), so the ring waits for its first piece
 * only. Without that room the ring queue copies every chunk up front and then records a single
 * READY, as in place (where nothing is copied).
 *
 * Landing zones (ncl_zone_*), where the DMA reduces two sources on the way out (ncl_plan
 * .reduce_write): the READY (or the fill's first READY) travels from next back to us, p-1 links
 * on a one-way ring. So the first `zoned` reduce-scatter units of the stream (as many as next's
 * zone holds, none of the last reduce-scatter step) are plain writes into next's zone, which need
 * only the credit of the zone's use two collectives ago: step 0 writes our input's chunk, a later
 * step REDUCE_WRITEs our contribution op what prev put in our zone. The first unit past them
 * REDUCE_WRITE_REDUCEs the same into next's recv, after the READY, which has arrived by then;
 * later units run as above. The reduction order is the one without zones (ours op what arrived),
 * so results are bit-identical. The fill queue skips the zoned units (their targets are zones)
 * and starts its batches at the first unit past them. We credit our zone back to prev after the
 * step that read it last. */

/* Ring queues: the plan's queues without the fill queues. */
static uint32_t channels_of(const ncl_plan *p)
{
    return p->queues - p->helper_queues;
}

/* A step's records: posted where every channel has a DMA engine (as ring_allgather.c's). */
static void ring_record(const ncl_plan *p, ncl_task *t, int peer, uint32_t notify, uint32_t step)
{
    ncl_task_record_behind(p, channels_of(p), t, peer, notify, step);
}

static uint64_t channel_span(const ncl_plan *p, uint32_t c, uint64_t *off)
{
    return ncl_channel_part(p, p->count, channels_of(p), c, off);
}

/* Rounds of a channel portion of `span` elements: its largest chunk cut into slices. */
static uint64_t rounds_of(const ncl_plan *p, uint64_t span)
{
    return ncl_div_ceil(ncl_div_ceil(span, (uint64_t)p->nranks), p->slice_elems);
}

/* Unit u of a channel's stream (ncl_round_step over 2 (p-1) steps a round, `rounds` rounds) is
 * step *s of round *r; returns 1 when it ends its step. */
static int unit_of(const ncl_plan *p, uint64_t rounds, uint64_t u, uint64_t *r, uint64_t *s)
{
    return ncl_round_step(p, u, rounds, 2u * (uint64_t)(p->nranks - 1), r, s);
}

static uint64_t round_of(const ncl_plan *p, uint64_t rounds, uint64_t u)
{
    uint64_t r, s;
    unit_of(p, rounds, u, &r, &s);
    return r;
}

static int step_end(const ncl_plan *p, uint64_t rounds, uint64_t u)
{
    uint64_t r, s;
    return unit_of(p, rounds, u, &r, &s);
}

/* The turn of reduce-scatter unit u among the channel's reduce-scatter units (its staged slot). */
static uint64_t rs_turn(const ncl_plan *p, uint64_t rounds, uint64_t u)
{
    uint64_t r, s;
    unit_of(p, rounds, u, &r, &s);
    return p->in_flight > 1 ? u : r * (uint64_t)(p->nranks - 1) + s;
}

/* Elements of chunk k that round `round` moves, in the channel portion [coff, coff + span);
 * *off gets the first element (absolute). */
static uint64_t chunk_round(const ncl_plan *p, uint64_t span, uint64_t coff, int k, uint64_t round,
                            uint64_t *off)
{
    uint64_t koff;
    uint64_t klen = ncl_part(span, (uint64_t)p->nranks, (uint64_t)k, &koff);
    uint64_t lo = round * p->slice_elems;
    *off = coff + koff + lo;
    return lo >= klen ? 0 : ncl_min_u64(p->slice_elems, klen - lo);
}

/* Up-front pre-copy (no fill queue): part 0 is the channel span before chunk i-1, part 1 the span
 * after it (on one rank: the whole span, and nothing). */
static uint64_t precopy_part(const ncl_plan *p, uint32_t c, uint64_t part, uint64_t *off)
{
    uint64_t coff, koff;
    uint64_t span = channel_span(p, c, &coff);
    if (p->nranks == 1) {
        *off = coff;
        return part == 0 ? span : 0;
    }
    int skip = ncl_mod(ncl_ring_pos(p, c, p->rank) - 1, p->nranks);
    uint64_t klen = ncl_part(span, (uint64_t)p->nranks, (uint64_t)skip, &koff);
    if (part == 0) {
        *off = coff;
        return koff;
    }
    *off = coff + koff + klen;
    return span - koff - klen;
}

/* Landing zones: bytes of a slot (a round of the largest chunk), and how many of the channel's
 * reduce-scatter units land in next's zone (0 without zones; only where the stream is step-major,
 * and never the last reduce-scatter step, whose sums stay in recv). */
static uint64_t slot_bytes(const ncl_plan *p, uint64_t span)
{
    return ncl_min_u64(p->slice_elems, ncl_div_ceil(span, (uint64_t)p->nranks)) * p->esize;
}

static uint64_t zoned_of(const ncl_plan *p, uint32_t c, uint64_t span)
{
    const uint64_t rounds = rounds_of(p, span);
    if (c >= p->zone_channels || (p->in_flight <= 1 && rounds > 1))
        return 0;
    return ncl_zone_slots(p, c, slot_bytes(p, span), rounds * (uint64_t)(p->nranks - 2));
}

/* When not even one unit fits in the zone: the first unit's head that does (elements; 0: none).
 * Its tail goes to next's recv after the READY, and step 1 reads the head from our zone. */
static uint64_t head_of(const ncl_plan *p, uint32_t c, uint64_t span)
{
    if (c >= p->zone_channels || span == 0 || (p->in_flight <= 1 && rounds_of(p, span) > 1) || zoned_of(p, c, span))
        return 0;
    return p->zone_bytes / p->esize;
}

/* Out of place with a fill queue where the DMA reduces two sources on the way out: a reduce-
 * scatter unit lands in next's recv as it is (recv is not next's input), and next adds its
 * contribution when it sends the unit on (REDUCE_WRITE from its input and recv), so nothing is
 * filled ahead of the ring but each rank's own final chunk, which the last step reduces into
 * (REDUCE_WRITE_REDUCE). Step-major streams only, as the zones. */
static int landing(const ncl_plan *p, uint64_t span)
{
    return !p->inplace && p->helper_queues && p->reduce_write && ncl_inline_all(p) && p->nranks >= 3 &&
           (p->in_flight > 1 || rounds_of(p, span) == 1);
}

/* The reduce-scatter step that reads our zone last (0: none reads it). */
static uint64_t zone_last_step(const ncl_plan *p, uint32_t c, uint64_t span)
{
    const uint64_t z = zoned_of(p, c, span);
    return z ? (z - 1) / rounds_of(p, span) + 1 : head_of(p, c, span) ? 1 : 0;
}

/* Piece m of chunk k in reduce-scatter step s of round `round`: its length, its first element in
 * *off. With fill queues round 0's step 0 goes in ncl_lead_piece's pieces (each filled, READY and
 * written on its own, so that the ring waits for a small first fill only) when it reduces inline
 * and does not land in a zone; every other step is one piece (possibly empty: m = 0 still marks
 * the step). 0 past the last. */
static uint64_t step_piece(const ncl_plan *p, uint32_t c, uint64_t span, uint64_t coff, int k, uint64_t round,
                           uint64_t s, uint64_t m, uint64_t *off)
{
    const uint64_t es = p->esize;
    if (m > 0 && (round != 0 || s != 0)) /* every step but the first has one piece */
        return 0;
    uint64_t lo, len = chunk_round(p, span, coff, k, round, off);
    if (round == 0 && s == 0 && p->helper_queues && len && ncl_inline_ok(p, *off * es, *off * es, len * es) &&
        zone_last_step(p, c, span) == 0) {
        len = ncl_lead_piece(p, len, m, &lo);
        *off += lo;
        return len;
    }
    return m == 0 ? len : 0;
}

/* Fill queue: copy our own contribution into piece m of the chunk that step j of round `round`
 * receives, as a task stamped with that step; 0 (no task) when it has no elements. */
static int fill_task(const ncl_plan *p, uint32_t c, uint64_t span, uint64_t coff, uint64_t round,
                     uint64_t j, uint64_t m, ncl_task *t)
{
    const uint64_t es = p->esize;
    const ncl_ref in = ncl_plan_input(p, p->rank), recv = ncl_ref_make(NCL_BUF_RECV, 0);
    uint64_t off, len = step_piece(p, c, span, coff, ncl_mod(ncl_ring_pos(p, c, p->rank) - 2 - (int64_t)j, p->nranks),
                                   round, j, m, &off);
    if (len)
        ncl_task_copy(t, ncl_ref_add(in, off * es), ncl_ref_add(recv, off * es), len * es,
                      (uint32_t)(round * 2u * (uint64_t)(p->nranks - 1) + j));
    return len != 0;
}

/* Fill batches: with one round the fill queue copies the chunks of steps [j, batch_end(j)) in one
 * go and records one READY for them (steps z, z+1, z+2-3, z+4-7, ... from the first step z past
 * the zoned ones: a batch is no longer than the steps before it, so while memory is over 4x the
 * link its copy ends before the ring gets there), so a rank runs about lg p fills, not p - 1 (at
 * p = 1024 those tasks and records were most of the simulation). With more rounds the chunks'
 * parts are not contiguous: every step is a batch. Zoned steps (j < z) have none. */
static uint64_t batch_end(const ncl_plan *p, uint32_t c, uint64_t span, uint64_t j)
{
    const uint64_t z = zoned_of(p, c, span);
    if (j <= z || rounds_of(p, span) > 1)
        return j + 1;
    return ncl_min_u64(z + 2 * (j - z), (uint64_t)p->nranks - 1);
}

/* Whether step j starts a batch: z and z plus the powers of two, or every step with more rounds. */
static int batch_start(const ncl_plan *p, uint32_t c, uint64_t span, uint64_t j)
{
    if (rounds_of(p, span) > 1)
        return 1;
    const uint64_t z = zoned_of(p, c, span);
    return j >= z && ((j - z) & (j - z - 1)) == 0;
}

/* Elements [*first, *first + return) of the chunks lo..hi of one round (contiguous). */
static uint64_t chunk_run(const ncl_plan *p, uint64_t span, uint64_t coff, int lo, int hi, uint64_t *first)
{
    uint64_t last, hlen = chunk_round(p, span, coff, hi, 0, &last);
    chunk_round(p, span, coff, lo, 0, first);
    return last + hlen - *first;
}

/* Fill queue, one round: the copy of batch [j, e) (the chunks i-1-e .. i-2-j, contiguous but where
 * they wrap past chunk 0) from element k of it on, at most a slice, as a task; returns the
 * elements it copies, 0 once the batch is done. */
static uint64_t batch_task(const ncl_plan *p, uint32_t c, uint64_t span, uint64_t coff, uint64_t j, uint64_t e,
                           uint64_t k, ncl_task *t)
{
    const int n = p->nranks, i = ncl_ring_pos(p, c, p->rank);
    const int lo = ncl_mod(i - 1 - (int64_t)e, n), hi = ncl_mod(i - 2 - (int64_t)j, n);
    uint64_t first, len = chunk_run(p, span, coff, lo, lo > hi ? n - 1 : hi, &first);
    if (k >= len && lo > hi) { /* past the wrap: chunks 0..hi */
        k -= len;
        len = chunk_run(p, span, coff, 0, hi, &first);
    }
    if (k >= len)
        return 0;
    len = ncl_min_u64(p->slice_elems, len - k);
    ncl_task_copy(t, ncl_ref_add(ncl_plan_input(p, p->rank), (first + k) * p->esize),
                  ncl_ref_make(NCL_BUF_RECV, (first + k) * p->esize), len * p->esize, (uint32_t)j);
    return len;
}

/* Staged reduce-scatter, for a DMA that cannot reduce some task inline (ncl_inline_ok): such a
 * task writes into one of two scratch slots of the receiver's channel instead, and the receiver
 * reduces the slot into its chunk (LOCAL_REDUCE) before it sends that chunk on. A slot is
 * written again two steps later, once the receiver has recorded that it emptied it (READY(c),
 * one per step from the third on, every step of the plan alike so that records match waits).
 * With a fill queue the chunk's own contribution is ordered before that LOCAL_REDUCE through the
 * sender: its write waited for our fill's READY, our reduce waits for its DATA. */
static int staged(const ncl_plan *p)
{
    return p->nranks > 1 && !ncl_inline_all(p);
}

static ncl_ref slot(const ncl_plan *p, uint32_t c, uint64_t use)
{
    return ncl_ref_make(NCL_BUF_SCRATCH, (2u * c + use % 2u) * p->slice_elems * p->esize);
}

static ncl_result prepare(ncl_plan *p)
{
    /* Every channel needs at least one element per rank to be worth a queue. */
    uint32_t q = ncl_channels_for(p->queues, p->count / (uint64_t)p->nranks);
    p->segments = 1;
    /* c fills on q + c (without room, copying up front costs less than a fill delaying a write) */
    p->helper_queues = !p->inplace && p->nranks > 1 && ncl_helper_room(p, q) ? q : 0;
    p->queues = q + p->helper_queues;
    /* zones where units reach them with our contribution added on the way (REDUCE_WRITE) */
    p->zone_channels = p->zone_bytes && p->reduce_write && ncl_inline_all(p) && p->nranks >= 3 ? q : 0;
    if (staged(p)) { /* two slots per channel bound the slice */
        uint64_t room = p->scratch_bytes / (2u * q * p->esize);
        p->slice_elems = ncl_min_u64(p->slice_elems, room);
        if (p->slice_elems == 0)
            return NCL_ERR_UNSUPPORTED;
    }
    return NCL_SUCCESS;
}

/* Generator state: n = the channel portion's length, m = its first element, d[] what they give
 * (RA_*; all set once: they cost divisions), i = unit (unit_of), j = its step, k = piece of the
 * step (step_piece; in the up-front pre-copy k, j: the part and position). */
enum { RA_ROUNDS, RA_ZONED, RA_HEAD, RA_ZONE_LAST, RA_LANDING };

static int next(const ncl_plan *p, uint32_t q, ncl_gen *g, ncl_task *t)
{
    const uint32_t channels = channels_of(p), c = q < channels ? q : q - channels; /* fill queue c: channels + c */
    const int r = p->rank, n = p->nranks, i = ncl_ring_pos(p, c, r);
    const int next_rank = ncl_ring_rank(p, c, i + 1), prev_rank = ncl_ring_rank(p, c, i - 1);
    const int fill_queue = q >= channels, fills_here = p->helper_queues == 0;
    const uint32_t filled = NCL_NOTIFY_READY(channels + c); /* the fill queue's READY id */
    const uint64_t es = p->esize, steps = 2u * (uint64_t)(n - 1);
    const ncl_ref in = ncl_plan_input(p, r), recv = ncl_ref_make(NCL_BUF_RECV, 0);
    uint64_t off, len, round = 0;
    int inline_step;

    NCL_GEN_BEGIN(g);
    g->n = channel_span(p, c, &g->m);
    g->d[RA_ROUNDS] = rounds_of(p, g->n);
    g->d[RA_ZONED] = zoned_of(p, c, g->n);
    g->d[RA_HEAD] = head_of(p, c, g->n);
    g->d[RA_ZONE_LAST] = zone_last_step(p, c, g->n);
    g->d[RA_LANDING] = (uint64_t)landing(p, g->n);
    if (g->n == 0 && (fill_queue || c >= p->zone_channels))
        return g->line = -1, 0;
    if (fill_queue && g->d[RA_LANDING]) { /* our final chunk, all its rounds, then one READY */
        for (g->k = 0; g->k < ncl_part(g->n, (uint64_t)n, (uint64_t)i, &off); g->k += p->slice_elems) {
            len = ncl_min_u64(p->slice_elems, ncl_part(g->n, (uint64_t)n, (uint64_t)i, &off) - g->k);
            off += g->m + g->k;
            ncl_task_copy(t, ncl_ref_add(in, off * es), ncl_ref_add(recv, off * es), len * es, (uint32_t)(n - 2));
            NCL_YIELD(g);
        }
        ncl_task_record(t, prev_rank, filled, (uint32_t)(n - 2));
        NCL_YIELD(g);
        return g->line = -1, 0;
    }
    if (fill_queue) {
        /* every chunk of every round the ring reduces into (not the zones), in the order it needs them */
        for (g->i = g->d[RA_ZONED]; g->i < g->d[RA_ROUNDS] * steps; g->i++) {
            unit_of(p, g->d[RA_ROUNDS], g->i, &round, &g->j);
            if (g->j >= (uint64_t)(n - 1) || !batch_start(p, c, g->n, g->j))
                continue;
            if (batch_end(p, c, g->n, g->j) > g->j + 1) { /* several steps' chunks at once */
                for (g->k = 0;;) {
                    len = batch_task(p, c, g->n, g->m, g->j, batch_end(p, c, g->n, g->j), g->k, t);
                    if (len == 0)
                        break;
                    g->k += len;
                    NCL_YIELD(g);
                }
                ncl_task_record(t, prev_rank, filled, (uint32_t)g->j);
                NCL_YIELD(g);
                continue;
            }
            for (g->k = 0; g->k == 0 || step_piece(p, c, g->n, g->m, ncl_mod(i - 2 - (int)g->j, n),
                                                   round_of(p, g->d[RA_ROUNDS], g->i), g->j, g->k, &off) != 0; g->k++) {
                round = round_of(p, g->d[RA_ROUNDS], g->i);
                if (fill_task(p, c, g->n, g->m, round, g->j, g->k, t))
                    NCL_YIELD(g);
                ncl_task_record(t, prev_rank, filled, (uint32_t)(round_of(p, g->d[RA_ROUNDS], g->i) * steps + g->j));
                NCL_YIELD(g);
            }
        }
        return g->line = -1, 0;
    }
    /* no fill queue, out of place: fill recv with our own contributions up front (one rank: that
     * is all there is to do); copies are cut into slices like every task */
    if (!p->inplace && fills_here) {
        for (g->k = 0; g->k < 2; g->k++) {
            for (g->j = 0; g->j < precopy_part(p, c, g->k, &off); g->j += p->slice_elems) {
                len = ncl_min_u64(p->slice_elems, precopy_part(p, c, g->k, &off) - g->j);
                ncl_task_copy(t, ncl_ref_add(in, (off + g->j) * es),
                              ncl_ref_add(recv, (off + g->j) * es), len * es, 0);
                NCL_YIELD(g);
            }
        }
    }
    if (n == 1)
        return g->line = -1, 0;
    if ((fills_here || g->d[RA_LANDING]) && g->n) { /* prev may write (or reduce) into any chunk */
        ncl_task_record(t, prev_rank, NCL_NOTIFY_READY(c), 0);
        NCL_YIELD(g);
    }
    if (ncl_zone_credit_due(p, c)) { /* next read its zone's previous use */
        ncl_task_wait(t, next_rank, NCL_NOTIFY_CREDIT(c), 1, 0);
        NCL_YIELD(g);
    }
    if (c < p->zone_channels && g->d[RA_ZONE_LAST] == 0) { /* nothing of ours to read there */
        ncl_task_record(t, prev_rank, NCL_NOTIFY_CREDIT(c), 0);
        NCL_YIELD(g);
    }

    for (g->i = 0; g->i < g->d[RA_ROUNDS] * steps; g->i++) {
        unit_of(p, g->d[RA_ROUNDS], g->i, &round, &g->j);
        if (g->j >= (uint64_t)(n - 1))
            goto allgather;
        if (g->i == 0 && g->d[RA_HEAD]) { /* the first unit's head into next's zone */
            len = chunk_round(p, g->n, g->m, ncl_mod(i - 1, n), 0, &off);
            ncl_task_write(t, next_rank, ncl_ref_add(in, off * es), ncl_zone_slot(p, c, 0, 0),
                           ncl_min_u64(g->d[RA_HEAD], len) * es, 0);
            NCL_YIELD(g);
        }
        if ((fills_here || g->d[RA_LANDING]) && g->i == g->d[RA_ZONED]) { /* the first unit (or tail) for next's recv */
            ncl_task_wait(t, next_rank, NCL_NOTIFY_READY(c), 1, 0);
            NCL_YIELD(g);
        }
        /* reduce-scatter, step s = j: reduce chunk i-1-s into next's copy; step 0 reads our input */
        if (staged(p) && rs_turn(p, g->d[RA_ROUNDS], g->i) >= 2) { /* next emptied our slot */
            ncl_task_wait(t, next_rank, NCL_NOTIFY_READY(c), 1, (uint32_t)(round * steps + g->j));
            NCL_YIELD(g);
        }
        if (g->d[RA_LANDING] && g->i == (uint64_t)(n - 2) * g->d[RA_ROUNDS]) { /* next's final chunk is filled */
            ncl_task_wait(t, next_rank, filled, 1, (uint32_t)(n - 2));
            NCL_YIELD(g);
        }
        if (g->j > 0 && g->i - g->d[RA_ROUNDS] < g->d[RA_ZONED]) { /* what prev sent is in our zone */
            round = round_of(p, g->d[RA_ROUNDS], g->i);
            len = chunk_round(p, g->n, g->m, ncl_mod(i - 1 - (int)g->j, n), round, &off);
            if (!fills_here && !g->d[RA_LANDING] && g->i >= g->d[RA_ZONED] && batch_start(p, c, g->n, g->j)) {
                ncl_task_wait(t, next_rank, filled, 1, (uint32_t)(round * steps + g->j)); /* as below */
                NCL_YIELD(g);
                round = round_of(p, g->d[RA_ROUNDS], g->i);
                len = chunk_round(p, g->n, g->m, ncl_mod(i - 1 - (int)g->j, n), round, &off);
            }
            if (len) {
                const uint64_t from = g->i - g->d[RA_ROUNDS], zoned = g->i < g->d[RA_ZONED];
                const uint64_t slot = slot_bytes(p, g->n);
                ncl_task_reduce_write(t, p, next_rank, ncl_ref_add(in, off * es), ncl_zone_slot(p, c, slot, from),
                                      zoned ? ncl_zone_slot(p, c, slot, g->i) : ncl_ref_add(recv, off * es), len * es,
                                      !zoned && (!g->d[RA_LANDING] || g->j == (uint64_t)(n - 2)),
                                      (uint32_t)(round * steps + g->j));
                NCL_YIELD(g);
            }
            goto signal;
        }
        if (g->i < g->d[RA_ZONED]) { /* step 0 into next's zone */
            round = round_of(p, g->d[RA_ROUNDS], g->i);
            len = chunk_round(p, g->n, g->m, ncl_mod(i - 1 - (int)g->j, n), round, &off);
            if (len) {
                ncl_task_write(t, next_rank, ncl_ref_add(in, off * es), ncl_zone_slot(p, c, slot_bytes(p, g->n), g->i),
                               len * es, (uint32_t)(round * steps + g->j));
                NCL_YIELD(g);
            }
            goto signal;
        }
        if (g->d[RA_LANDING]) { /* what arrived in our recv, our contribution added on the way */
            round = round_of(p, g->d[RA_ROUNDS], g->i);
            len = chunk_round(p, g->n, g->m, ncl_mod(i - 1 - (int)g->j, n), round, &off);
            if (len && g->i == g->d[RA_ROUNDS] && g->d[RA_HEAD]) { /* the head is in our zone */
                ncl_task_reduce_write(t, p, next_rank, ncl_ref_add(in, off * es), ncl_zone_slot(p, c, 0, 0),
                                      ncl_ref_add(recv, off * es), ncl_min_u64(g->d[RA_HEAD], len) * es,
                                      g->j == (uint64_t)(n - 2), (uint32_t)(round * steps + g->j));
                NCL_YIELD(g);
                round = round_of(p, g->d[RA_ROUNDS], g->i);
                len = chunk_round(p, g->n, g->m, ncl_mod(i - 1 - (int)g->j, n), round, &off);
            }
            if ((g->i == 0 || g->i == g->d[RA_ROUNDS]) && g->d[RA_HEAD]) { /* the tail */
                off += ncl_min_u64(g->d[RA_HEAD], len);
                len -= ncl_min_u64(g->d[RA_HEAD], len);
            }
            if (len && g->j == 0)
                ncl_task_write(t, next_rank, ncl_ref_add(in, off * es), ncl_ref_add(recv, off * es), len * es,
                               (uint32_t)(round * steps));
            else if (len)
                ncl_task_reduce_write(t, p, next_rank, ncl_ref_add(in, off * es), ncl_ref_add(recv, off * es),
                                      ncl_ref_add(recv, off * es), len * es, g->j == (uint64_t)(n - 2),
                                      (uint32_t)(round * steps + g->j));
            if (len)
                NCL_YIELD(g);
            goto signal;
        }
        for (g->k = 0; g->k == 0 || step_piece(p, c, g->n, g->m, ncl_mod(i - 1 - (int)g->j, n), round_of(p, g->d[RA_ROUNDS], g->i),
                                               g->j, g->k, &off) != 0; g->k++) {
            if (!fills_here && batch_start(p, c, g->n, g->j)) {
                /* next's fill queue has put its contribution there (a READY per batch) */
                ncl_task_wait(t, next_rank, filled, 1, (uint32_t)(round_of(p, g->d[RA_ROUNDS], g->i) * steps + g->j));
                NCL_YIELD(g);
            }
            /* the step's whole chunk decides inline or staged (a piece keeps its alignment) */
            round = round_of(p, g->d[RA_ROUNDS], g->i);
            len = chunk_round(p, g->n, g->m, ncl_mod(i - 1 - (int)g->j, n), round, &off);
            inline_step = ncl_inline_ok(p, off * es, off * es, len * es);
            len = step_piece(p, c, g->n, g->m, ncl_mod(i - 1 - (int)g->j, n), round, g->j, g->k, &off);
            if (len && g->i == g->d[RA_ROUNDS] && g->d[RA_HEAD]) { /* our contribution to the head */
                ncl_task_reduce_write(t, p, next_rank, ncl_ref_add(in, off * es), ncl_zone_slot(p, c, 0, 0),
                                      ncl_ref_add(recv, off * es), ncl_min_u64(g->d[RA_HEAD], len) * es, 1,
                                      (uint32_t)(round * steps + g->j));
                NCL_YIELD(g);
                round = round_of(p, g->d[RA_ROUNDS], g->i);
                len = step_piece(p, c, g->n, g->m, ncl_mod(i - 1 - (int)g->j, n), round, g->j, g->k, &off);
                inline_step = 1; /* zones are used only where every task reduces inline */
            }
            if ((g->i == 0 || g->i == g->d[RA_ROUNDS]) && g->d[RA_HEAD]) { /* the tail */
                off += ncl_min_u64(g->d[RA_HEAD], len);
                len -= ncl_min_u64(g->d[RA_HEAD], len);
            }
            if (len) {
                if (inline_step)
                    ncl_task_write_reduce(t, p, next_rank, ncl_ref_add(g->j == 0 ? in : recv, off * es),
                                          ncl_ref_add(recv, off * es), len * es, (uint32_t)(round * steps + g->j));
                else
                    ncl_task_write(t, next_rank, ncl_ref_add(g->j == 0 ? in : recv, off * es),
                                   slot(p, c, rs_turn(p, g->d[RA_ROUNDS], g->i)), len * es, (uint32_t)(round * steps + g->j));
                NCL_YIELD(g);
            }
        }
    signal:
        if (staged(p) || step_end(p, g->d[RA_ROUNDS], g->i)) { /* staged: a slot per round, each signalled */
            ring_record(p, t, next_rank, NCL_NOTIFY_DATA(c), (uint32_t)(round_of(p, g->d[RA_ROUNDS], g->i) * steps + g->j));
            NCL_YIELD(g);
            /* the step that read our zone last is done: prev may use it again */
            if (g->j == g->d[RA_ZONE_LAST] && g->j) {
                ring_record(p, t, prev_rank, NCL_NOTIFY_CREDIT(c), 0);
                NCL_YIELD(g);
            }
            ncl_task_wait(t, prev_rank, NCL_NOTIFY_DATA(c), 1, (uint32_t)(round_of(p, g->d[RA_ROUNDS], g->i) * steps + g->j));
            NCL_YIELD(g);
        }
        if (staged(p)) {
            /* prev sent chunk i-2-s: into our copy, or into the slot we now reduce */
            round = round_of(p, g->d[RA_ROUNDS], g->i);
            len = chunk_round(p, g->n, g->m, ncl_mod(i - 2 - (int)g->j, n), round, &off);
            if (len && !ncl_inline_ok(p, off * es, off * es, len * es)) {
                ncl_task_reduce(t, p, slot(p, c, rs_turn(p, g->d[RA_ROUNDS], g->i)), ncl_ref_add(recv, off * es), len * es,
                                (uint32_t)(round * steps + g->j));
                NCL_YIELD(g);
            }
            if (rs_turn(p, g->d[RA_ROUNDS], g->i) + 2 < g->d[RA_ROUNDS] * (uint64_t)(n - 1)) {
                ncl_task_record(t, prev_rank, NCL_NOTIFY_READY(c), (uint32_t)(round_of(p, g->d[RA_ROUNDS], g->i) * steps + g->j));
                NCL_YIELD(g);
            }
        }
        continue;
    allgather:
        /* chunk i is now reduced over all ranks: finish avg once, before it is gathered */
        if (g->j == (uint64_t)(n - 1) && p->avg) {
            len = chunk_round(p, g->n, g->m, i, round, &off);
            if (len) {
                ncl_task_div(t, p, ncl_ref_add(recv, off * es), len * es, (uint32_t)(round * steps + g->j));
                NCL_YIELD(g);
            }
        }
        /* allgather, step s = j - (p-1): copy chunk i-s to next (step 0: our reduced chunk) */
        round = round_of(p, g->d[RA_ROUNDS], g->i);
        len = chunk_round(p, g->n, g->m, ncl_mod(i - (int)(g->j - (uint64_t)(n - 1)), n), round, &off);
        if (len) {
            ncl_task_write(t, next_rank, ncl_ref_add(recv, off * es), ncl_ref_add(recv, off * es), len * es,
                           (uint32_t)(round * steps + g->j));
            NCL_YIELD(g);
        }
        if (step_end(p, g->d[RA_ROUNDS], g->i)) {
            ring_record(p, t, next_rank, NCL_NOTIFY_DATA(c), (uint32_t)(round_of(p, g->d[RA_ROUNDS], g->i) * steps + g->j));
            NCL_YIELD(g);
            ncl_task_wait(t, prev_rank, NCL_NOTIFY_DATA(c), 1, (uint32_t)(round_of(p, g->d[RA_ROUNDS], g->i) * steps + g->j));
            NCL_YIELD(g);
        }
    }
    NCL_GEN_END(g);
}

const ncl_algo_desc ncl_algo_ring_allreduce = {"ring", NCL_COLL_ALLREDUCE, NCL_ALGO_RING, prepare, next};
