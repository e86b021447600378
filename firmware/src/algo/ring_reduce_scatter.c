/* ring_reduce_scatter.c — ring reduce-scatter with inline reduce at the destination; partial sums
 * in flight live in per-channel scratch slots, pre-filled with the receiver's own contribution by
 * a helper queue that runs ahead of the ring. */
#include "ncl_algo.h"

/* Channel c runs on its logical ring (ncl_ring_*): position i holds rank ring_rank(i), and "chunk
 * k" below is the chunk rank ring_rank(k) ends with. Position i sends chunk i-1-s at step s (step
 * 0 straight from its input) and receives chunk i-2-s; the chunk received at the last step, p-2,
 * is its own: its target is the output, the targets of earlier steps are scratch slots.
 * Each round moves at most `round_elems` of every chunk of the channel's portion.
 *
 * Slots: with a fill queue, the targets of the steps before the last take turns (round by round,
 * step by step) on a ring of K slots per channel (ring_slots: from 3 up to p-2, as the scratch
 * holds rounds of a slice): a slot is refilled once the ring queue has sent on what it held K
 * turns before, so rounds do not shrink as p grows (at least scratch / 3 per channel) and the
 * fills run up to K-1 turns ahead. Without one, the ring queue fills a round's p-2 targets up
 * front, each in its own slot.
 *
 * A target must hold the receiver's own contribution before the sender reduces into it: the
 * receiver copies it there, then records READY to the sender, one READY per step. With room for
 * twice the channels, each channel c gets a fill queue (channels + c) that does these copies
 * while the ring queue c moves data: the ring waits for the first slot only, not for all p-2,
 * and that first one (the first round's step 0) is filled and written in pieces that grow, so
 * the ring waits for the first piece only (ncl_lead_piece): no wait that grows with the buffer.
 * A slot is refilled once the ring queue has sent it on (LOCAL record, self).
 * Without that room the ring queue fills all targets itself at the start of each round.
 *
 * A step the DMA cannot reduce inline (ncl_inline_ok) is staged: the sender writes its partial
 * into the target unfilled and the receiver reduces its own contribution into it after the DATA
 * (LOCAL_REDUCE). In place the last target is the output, which already holds the contribution:
 * there the partial lands in one more scratch slot, reduced into the output.
 *
 * Landing, where the DMA reduces two sources on the way out (ncl_plan.reduce_write), every step
 * reduces inline and there is a fill queue, on 3 ranks or more (next_landing): a target before
 * the last takes a step's data as it is, and its receiver adds its contribution when it sends the
 * data on (REDUCE_WRITE from its input and the target, ours op theirs: the order of the reduction
 * above, so the bits are the same). Only the output is filled (out of place; in place it holds
 * the contribution), so no fill is ever on the ring's path and the READYs only hand out slots.
 * The last step REDUCE_WRITE_REDUCEs into it. With data tasks in flight the units run in blocks
 * of rounds, step by step, so that a DATA's latency hides behind the block's other rounds.
 * The first READY still travels p-1 links on a one-way ring: the stream's first `zoned` units (as
 * many as next's landing zone holds, none of a last step) go to next's zone instead (ncl_zone_*),
 * which needs only the credit of the zone's use two collectives ago; when not even one unit fits,
 * unit 0's head does and its tail follows the READY. Nobody records a READY for a zoned unit or
 * refills its slot. We credit our zone back after the unit that read it last. */

/* Some step may take the staged path. */
static int staged(const ncl_plan *p)
{
    return p->nranks > 1 && !ncl_inline_all(p);
}

static uint64_t scratch_per_channel(const ncl_plan *p, uint32_t channels)
{
    return p->scratch_bytes / channels / p->esize * p->esize;
}

/* Ring queues: the plan's queues without the fill queues. */
static uint32_t channels_of(const ncl_plan *p)
{
    return p->queues - p->helper_queues;
}

/* Steps can land as they are, their receivers adding their contribution on the way out... */
static int can_land(const ncl_plan *p)
{
    return p->reduce_write && ncl_inline_all(p) && p->nranks >= 3;
}

/* ... and do, with a fill queue to hand out the slots (see the top). */
static int landing(const ncl_plan *p)
{
    return can_land(p) && p->helper_queues;
}

/* Rounds per block of the landing stream (see next_landing): with data tasks in flight, enough
 * that a block's other rounds hide a DATA's latency and a slot's READY (two alphas) behind
 * their transfers, at least two; else 1 (round by round). Rounds here are at most a sixth of
 * the channel's scratch, so that three blocks' slots fit. */
static uint64_t block_rounds_of(const ncl_plan *p)
{
    if (!landing(p) || p->in_flight <= 1)
        return 1;
    uint64_t bytes = ncl_min_u64(p->slice_elems, scratch_per_channel(p, channels_of(p)) / p->esize / 6u) * p->esize;
    uint64_t unit_ns = bytes / (p->link_gbps ? p->link_gbps : 1u); /* bytes / (GB/s) = ns */
    return ncl_max_u64(1u + ncl_div_ceil(2u * (uint64_t)p->link_alpha_ns, unit_ns ? unit_ns : 1u), 2u);
}

/* Slots the steps before the last take turns on (see the top): as many of a round's size (a
 * slice, or the channel's whole chunk when smaller) as the scratch holds, up to a block's turns
 * (every step of a block's rounds its own, so that short steps never wait for a slot's credit to
 * travel back: p-1 links on a one-way ring), and at least three blocks' worth: one landing, one
 * being sent on, one for the credits to come back (rounds shrink to fit). */
static uint64_t ring_slots_of(const ncl_plan *p)
{
    const uint64_t extra = staged(p) && p->inplace ? 1u : 0u;
    if (p->nranks <= 2)
        return 0;
    if (!p->helper_queues)
        return (uint64_t)p->nranks - 2;
    const uint64_t least = 3u * block_rounds_of(p);
    uint64_t want = ncl_min_u64(p->slice_elems, ncl_div_ceil(p->count, channels_of(p)));
    uint64_t fit = scratch_per_channel(p, channels_of(p)) / p->esize / (want ? want : 1u);
    fit = fit > extra ? fit - extra : 0;
    return ncl_min_u64(ncl_max_u64(fit, least), ncl_max_u64(block_rounds_of(p) * ((uint64_t)p->nranks - 2), least));
}

/* Elements a round moves per chunk at most: a slice, or what the slots leave of the scratch. */
static uint64_t round_elems_of(const ncl_plan *p)
{
    uint64_t slots = ring_slots_of(p) + (staged(p) && p->inplace ? 1u : 0u);
    uint64_t e = p->slice_elems;
    if (slots)
        e = ncl_min_u64(e, scratch_per_channel(p, channels_of(p)) / p->esize / slots);
    return e;
}

/* What prepare derived (plan->derived): the three above. */
enum { D_BLOCK_ROUNDS, D_RING_SLOTS, D_ROUND_ELEMS };

static uint64_t block_rounds(const ncl_plan *p)
{
    return p->derived[D_BLOCK_ROUNDS];
}

static uint64_t ring_slots(const ncl_plan *p)
{
    return p->derived[D_RING_SLOTS];
}

static uint64_t round_elems(const ncl_plan *p)
{
    return p->derived[D_ROUND_ELEMS];
}

/* Elements the round moves per chunk; *off = first element within a chunk. */
static uint64_t round_span(const ncl_plan *p, uint32_t c, uint64_t round, uint64_t *off)
{
    uint64_t coff, span = ncl_channel_part(p, p->count, channels_of(p), c, &coff), e = round_elems(p), lo = round * e;
    *off = coff + lo;
    return lo >= span ? 0 : ncl_min_u64(e, span - lo);
}

/* Rounds of channel c: its portion cut into round_elems. */
static uint64_t rounds_of(const ncl_plan *p, uint32_t c)
{
    uint64_t coff;
    return ncl_div_ceil(ncl_channel_part(p, p->count, channels_of(p), c, &coff), round_elems(p));
}

/* Rounds in channel c's block b (block_rounds each, the last one what is left). */
static uint64_t block_width(const ncl_plan *p, uint32_t c, uint64_t b)
{
    const uint64_t w = block_rounds(p);
    return ncl_min_u64(w, rounds_of(p, c) - b * w);
}

/* The stream's order (see next_landing; round by round when blocks are one round): unit u is step
 * *s of round *round. */
static void unit_at(const ncl_plan *p, uint32_t c, uint64_t u, uint64_t *round, uint64_t *s)
{
    const uint64_t w = block_rounds(p), steps = (uint64_t)p->nranks - 1, b = u / (w * steps), e = u - b * w * steps;
    *s = e / block_width(p, c, b);
    *round = b * w + e % block_width(p, c, b);
}

static uint64_t unit_index(const ncl_plan *p, uint32_t c, uint64_t round, uint64_t s)
{
    const uint64_t w = block_rounds(p), b = round / w;
    return b * w * ((uint64_t)p->nranks - 1) + s * block_width(p, c, b) + round % w;
}

/* The turn of step s (< p-2) of round `round` on the slots: the stream's order without the last
 * steps. */
static uint64_t turn_of(const ncl_plan *p, uint32_t c, uint64_t round, uint64_t s)
{
    const uint64_t w = block_rounds(p), b = round / w;
    return b * w * ((uint64_t)p->nranks - 2) + s * block_width(p, c, b) + round % w;
}

/* Where the chunk rank `rank` receives at step s of round `round` accumulates, for round elements
 * at `off`. */
static ncl_ref target(const ncl_plan *p, uint32_t c, int rank, uint64_t round, uint64_t s, uint64_t off)
{
    if (s == (uint64_t)p->nranks - 2)
        return ncl_ref_add(ncl_plan_output(p, rank), off * p->esize);
    return ncl_ref_make(NCL_BUF_SCRATCH, c * scratch_per_channel(p, channels_of(p)) +
                                             turn_of(p, c, round, s) % ring_slots(p) * round_elems(p) * p->esize);
}

static ncl_ref input_chunk(const ncl_plan *p, int k, uint64_t off)
{
    return ncl_ref_add(ncl_plan_input(p, p->rank), ((uint64_t)k * p->count + off) * p->esize);
}

/* Whether step s of round `round` (elements at `off`), sent by the rank at ring position `from`,
 * reduces inline (sender and receiver both ask). */
static int step_inline(const ncl_plan *p, uint32_t c, int from, uint64_t round, uint64_t s, uint64_t off,
                       uint64_t len)
{
    ncl_ref src = s == 0 ? input_chunk(p, ncl_ring_rank(p, c, from - 1), off) : target(p, c, 0, round, s - 1, off);
    ncl_ref dst = target(p, c, ncl_ring_rank(p, c, from + 1), round, s, off);
    return ncl_inline_ok(p, src.off, dst.off, len * p->esize);
}

/* Where a staged step s lands on `rank`: its target, or in place at the last step the extra slot
 * (after the ring's). */
static ncl_ref staged_target(const ncl_plan *p, uint32_t c, int rank, uint64_t round, uint64_t s, uint64_t off)
{
    if (p->inplace && s == (uint64_t)p->nranks - 2)
        return ncl_ref_make(NCL_BUF_SCRATCH, c * scratch_per_channel(p, channels_of(p)) +
                                                 ring_slots(p) * round_elems(p) * p->esize);
    return target(p, c, rank, round, s, off);
}

static ncl_result prepare(ncl_plan *p)
{
    uint32_t q = ncl_channels_for(p->queues, p->count);
    /* the landing stream needs a fill queue per channel: where twice the channels do not fit,
     * fewer channels that land beat more that fill every target on the ring's path */
    if (can_land(p) && 2 * q > p->max_queues && p->max_queues >= 2)
        q = p->max_queues / 2;
    p->segments = 1;
    /* channel c fills on q + c (2 ranks have a target to fill out of place only: the output) */
    p->helper_queues = (p->nranks > 2 || (p->nranks == 2 && !p->inplace)) && 2 * q <= p->max_queues ? q : 0;
    p->queues = q + p->helper_queues;
    p->zone_channels = p->zone_bytes && landing(p) ? q : 0;
    p->derived[D_BLOCK_ROUNDS] = block_rounds_of(p);
    p->derived[D_RING_SLOTS] = ring_slots_of(p);
    p->derived[D_ROUND_ELEMS] = round_elems_of(p);
    return round_elems(p) == 0 ? NCL_ERR_UNSUPPORTED : NCL_SUCCESS;
}

/* Whether the receiver of step s (round elements at `off`, sent by ring position `from`) fills its
 * target first: the step reduces inline, into a target that does not hold the contribution yet. */
static int filled(const ncl_plan *p, uint32_t c, int from, uint64_t round, uint64_t s, uint64_t off, uint64_t len)
{
    return !(p->inplace && s == (uint64_t)p->nranks - 2) && step_inline(p, c, from, round, s, off, len);
}

/* Landing zones: how many of the stream's first units land in next's zone, in slots of round 0's
 * span (0 without zones; only units of the first block's steps before the last); when none fits,
 * the elements of unit 0's head that do (else 0). */
static uint64_t zoned_of(const ncl_plan *p, uint32_t c)
{
    uint64_t off;
    return ncl_zone_slots(p, c, round_span(p, c, 0, &off) * p->esize,
                          block_width(p, c, 0) * ((uint64_t)p->nranks - 2));
}

static uint64_t head_of(const ncl_plan *p, uint32_t c)
{
    uint64_t off;
    return c < p->zone_channels && zoned_of(p, c) == 0 && round_span(p, c, 0, &off) ? p->zone_bytes / p->esize : 0;
}

/* The unit that reads our zone last, plus one (0: none does): the one after the last zoned unit's
 * (or unit 0's head's) in its round, a block's width later in the stream. */
static uint64_t zone_reader_end(const ncl_plan *p, uint32_t c)
{
    const uint64_t w = block_width(p, c, 0);
    return zoned_of(p, c) ? zoned_of(p, c) + w : head_of(p, c) ? w + 1 : 0;
}

/* Slot k of channel c's zone, in slots of round 0's span. */
static ncl_ref zone_slot(const ncl_plan *p, uint32_t c, uint64_t k)
{
    uint64_t off;
    return ncl_zone_slot(p, c, round_span(p, c, 0, &off) * p->esize, k);
}

#define NO_ZONE UINT64_MAX

/* Landing: our part of step s of round `round` (round elements at `off`, from element lo on) to
 * next: step 0 our input's chunk, a later one our contribution op what prev sent, which is in
 * `arrived` (our target of step s-1, or our zone); into next's zone slot `zone` (NO_ZONE: into
 * its target; the last step reduces into the output). */
static void landing_write(const ncl_plan *p, uint32_t c, uint64_t round, uint64_t s, uint64_t off, uint64_t lo,
                          uint64_t len, ncl_ref arrived, uint64_t zone, ncl_task *t)
{
    const int i = ncl_ring_pos(p, c, p->rank), next_rank = ncl_ring_rank(p, c, i + 1);
    const uint64_t es = p->esize;
    const ncl_ref own = input_chunk(p, ncl_ring_rank(p, c, i - 1 - (int64_t)s), off + lo);
    const ncl_ref dst =
        zone != NO_ZONE ? zone_slot(p, c, zone) : ncl_ref_add(target(p, c, next_rank, round, s, off), lo * es);
    const uint32_t step = (uint32_t)(round * (uint64_t)(p->nranks - 1) + s);
    if (s == 0)
        ncl_task_write(t, next_rank, own, dst, len * es, step);
    else
        ncl_task_reduce_write(t, p, next_rank, own, arrived, dst, len * es, s == (uint64_t)p->nranks - 2, step);
}

/* Where what prev sent at step s of round `round` (round elements at `off`) is on this rank, from
 * element lo on: our zone, else our target. */
static ncl_ref arrived_at(const ncl_plan *p, uint32_t c, uint64_t round, uint64_t s, uint64_t off, uint64_t lo)
{
    const uint64_t v = unit_index(p, c, round, s);
    if (v < zoned_of(p, c) || (v == 0 && head_of(p, c) && lo < head_of(p, c)))
        return ncl_ref_add(zone_slot(p, c, v), lo * p->esize);
    return ncl_ref_add(target(p, c, p->rank, round, s, off), lo * p->esize);
}

/* Divides (avg) channel c's output of round `round` (a task is at most a slice: a block's rounds
 * are divided one by one). */
static void div_round(const ncl_plan *p, uint32_t c, uint64_t round, ncl_task *t)
{
    uint64_t off, len = round_span(p, c, round, &off);
    ncl_task_div(t, p, ncl_ref_add(ncl_plan_output(p, p->rank), off * p->esize), len * p->esize,
                 (uint32_t)(round * (uint64_t)(p->nranks - 1) + (uint64_t)p->nranks - 2));
}

/* Fill piece [lo, lo + len) of target j of round `round` with our own contribution, as a task. */
static void fill_task(const ncl_plan *p, uint32_t c, uint64_t round, uint64_t j, uint64_t lo, uint64_t len,
                      ncl_task *t)
{
    uint64_t off;
    round_span(p, c, round, &off);
    int k = ncl_ring_rank(p, c, ncl_ring_pos(p, c, p->rank) - 2 - (int64_t)j);
    ncl_task_copy(t, input_chunk(p, k, off + lo),
                  ncl_ref_add(target(p, c, p->rank, round, j, off), lo * p->esize), len * p->esize,
                  (uint32_t)(round * (uint64_t)(p->nranks - 1) + j));
}

/* The landing stream (landing()): channel c's units, each a step of a round, run in blocks of
 * block_rounds rounds, step by step, a step's rounds of the block back to back. Each unit's DATA
 * is posted behind its write (NCL_TASK_POSTED), so the next unit's write follows at once; a unit
 * needs prev's DATA for the same round's step before, which came a block's width of units earlier
 * in prev's stream, so the other rounds of the block hide its latency (one round per block: round
 * by round, each step paying it). Slots turn in the stream's order; the zone takes the stream's
 * first units. Generator state: i = unit, j and k = its round and step, m = prev's DATAs consumed,
 * n = blocks divided (avg). */
static int next_landing(const ncl_plan *p, uint32_t q, ncl_gen *g, ncl_task *t)
{
    const int n = p->nranks;
    const uint32_t channels = channels_of(p), c = q % channels;
    const uint64_t steps = (uint64_t)n - 1, units = rounds_of(p, c) * steps;
    const int i = ncl_ring_pos(p, c, p->rank);
    const int next_rank = ncl_ring_rank(p, c, i + 1), prev_rank = ncl_ring_rank(p, c, i - 1);
    const uint64_t zoned = zoned_of(p, c), head = head_of(p, c);
    uint64_t off, len, lo, need;

    NCL_GEN_BEGIN(g);
    if (round_span(p, c, 0, &off) == 0 && (q >= channels || c >= p->zone_channels)) /* else: the zone's credits */
        return g->line = -1, 0;
    if (q >= channels) {
        /* the fill queue: a READY per unit past the zone, in the stream's order, once its slot is
         * sent on (K turns before) and, out of place, the output filled at the last step */
        for (g->i = zoned; g->i < units; g->i++) {
            unit_at(p, c, g->i, &g->j, &g->k);
            if (g->k < steps - 1 && turn_of(p, c, g->j, g->k) >= ring_slots(p) + zoned) {
                ncl_task_wait(t, p->rank, NCL_NOTIFY_LOCAL(c), 1, (uint32_t)(g->j * steps + g->k));
                NCL_YIELD(g);
            }
            if (!p->inplace && g->k == steps - 1) {
                fill_task(p, c, g->j, g->k, 0, round_span(p, c, g->j, &off), t);
                NCL_YIELD(g);
            }
            ncl_task_record(t, prev_rank, NCL_NOTIFY_READY(c), (uint32_t)(g->j * steps + g->k));
            NCL_YIELD(g);
        }
        return g->line = -1, 0;
    }
    if (ncl_zone_credit_due(p, c)) { /* next read its zone's previous use */
        ncl_task_wait(t, next_rank, NCL_NOTIFY_CREDIT(c), 1, 0);
        NCL_YIELD(g);
    }
    if (c < p->zone_channels && zone_reader_end(p, c) == 0) { /* nothing of ours to read there */
        ncl_task_record(t, prev_rank, NCL_NOTIFY_CREDIT(c), 0);
        NCL_YIELD(g);
    }
    g->m = g->n = 0;
    for (g->i = 0; g->i <= units; g->i++) {
        /* prev's DATAs up to the unit we send on (all of them at the end), then the blocks whose
         * last steps have all arrived are divided (avg) */
        need = units;
        if (g->i < units) {
            unit_at(p, c, g->i, &g->j, &g->k);
            need = g->k ? unit_index(p, c, g->j, g->k - 1) + 1 : 0;
        }
        if (need > g->m) { /* named by the last one awaited */
            uint64_t round, s;
            unit_at(p, c, need - 1, &round, &s);
            ncl_task_wait(t, prev_rank, NCL_NOTIFY_DATA(c), (uint32_t)(need - g->m), (uint32_t)(round * steps + s));
            g->m = need;
            NCL_YIELD(g);
        }
        for (; p->avg && g->n < rounds_of(p, c) &&
               ncl_min_u64((g->n / block_rounds(p) + 1) * block_rounds(p) * steps, units) <= g->m;
             g->n++) {
            div_round(p, c, g->n, t);
            NCL_YIELD(g);
        }
        if (g->i == units)
            break;
        len = round_span(p, c, g->j, &off);
        if (g->i < zoned) { /* before the READY, into next's zone */
            landing_write(p, c, g->j, g->k, off, 0, len,
                          g->k ? arrived_at(p, c, g->j, g->k - 1, off, 0) : zone_slot(p, c, 0), g->i, t);
            NCL_YIELD(g);
            goto sent;
        }
        if (g->i == 0 && head) { /* unit 0's head before the READY */
            landing_write(p, c, 0, 0, off, 0, ncl_min_u64(head, len), zone_slot(p, c, 0), 0, t);
            NCL_YIELD(g);
        }
        ncl_task_wait(t, next_rank, NCL_NOTIFY_READY(c), 1, (uint32_t)(g->j * steps + g->k));
        NCL_YIELD(g);
        len = round_span(p, c, g->j, &off);
        lo = g->i == 0 && head ? ncl_min_u64(head, len) : 0;
        if (g->k && unit_index(p, c, g->j, g->k - 1) == 0 && head) { /* prev's head, in our zone */
            landing_write(p, c, g->j, g->k, off, 0, ncl_min_u64(head, len), arrived_at(p, c, g->j, g->k - 1, off, 0),
                          NO_ZONE, t);
            NCL_YIELD(g);
            len = round_span(p, c, g->j, &off);
            lo = ncl_min_u64(head, len);
        }
        if (lo < len) {
            landing_write(p, c, g->j, g->k, off, lo, len - lo,
                          g->k ? arrived_at(p, c, g->j, g->k - 1, off, lo) : zone_slot(p, c, 0), NO_ZONE, t);
            NCL_YIELD(g);
        }
    sent:
        ncl_task_post(t, next_rank, NCL_NOTIFY_DATA(c), (uint32_t)(g->j * steps + g->k));
        NCL_YIELD(g);
        if (g->i + 1 == zone_reader_end(p, c)) { /* our zone is read: prev may reuse it */
            ncl_task_post(t, prev_rank, NCL_NOTIFY_CREDIT(c), 0);
            NCL_YIELD(g);
        }
        if (g->k && turn_of(p, c, g->j, g->k - 1) >= zoned &&
            turn_of(p, c, g->j, g->k - 1) + ring_slots(p) < rounds_of(p, c) * (uint64_t)(n - 2)) {
            /* the slot of step k-1 is sent on: the fill queue may refill it */
            ncl_task_post(t, p->rank, NCL_NOTIFY_LOCAL(c), (uint32_t)(g->j * steps + g->k));
            NCL_YIELD(g);
        }
    }
    NCL_GEN_END(g);
}

/* Piece m of step s of round `round`, sent by ring position `from`: the elements of the round
 * span from *lo on. With a fill queue, round 0's step 0 goes in ncl_lead_piece's pieces (each
 * filled, READY and written on its own) so that only a small first fill delays the ring; every
 * other step is one piece, its fill done ahead of the ring. Pieces need the fills to run while
 * the ring writes: a DMA engine for each queue (ncl_helper_room). 0 past the last piece. */
static uint64_t step_piece(const ncl_plan *p, uint32_t c, int from, uint64_t round, uint64_t s, uint64_t m,
                           uint64_t *lo)
{
    *lo = 0;
    if (m > 0 && (round != 0 || s != 0)) /* every step but the first has one piece */
        return 0;
    uint64_t off, len = round_span(p, c, round, &off);
    if (round == 0 && s == 0 && p->helper_queues && ncl_helper_room(p, channels_of(p)) &&
        filled(p, c, from, round, s, off, len))
        return ncl_lead_piece(p, len, m, lo);
    return m == 0 ? len : 0;
}

/* The round-by-round stream's overlap, where every step reduces inline and no avg divides: nothing
 * in the stream reads what a round's last step brought, so prev's DATA for it is waited for after
 * the next round's first writes; where every queue has a DMA engine each DATA is posted behind
 * its write, so a round's writes follow the last one's at once; and in place the last step's
 * target, the receiver's own chunk (never sent, a new part every round), needs only the first
 * round's READY. Before, each round waited for its own write and prev's to land and then paid a
 * task issue with the link idle: a 2-rank pair's reduce-scatter ran 2.6 % over its price from
 * 64 MiB, every round so. */
static int overlaps(const ncl_plan *p)
{
    return ncl_inline_all(p) && !p->avg;
}

/* Whether the sender waits for (and the receiver grants) a READY before step s of `round`. */
static int needs_ready(const ncl_plan *p, int overlap, uint64_t round, uint64_t s)
{
    return !(overlap && p->inplace && round > 0 && s == (uint64_t)p->nranks - 2);
}

/* Generator state: i = round, j = step, k = piece of the step (step_piece). */
static int next(const ncl_plan *p, uint32_t q, ncl_gen *g, ncl_task *t)
{
    const int r = p->rank, n = p->nranks;
    const uint64_t es = p->esize;
    const uint32_t channels = channels_of(p), c = q % channels;
    const int i = ncl_ring_pos(p, c, r);
    const int next_rank = ncl_ring_rank(p, c, i + 1), prev_rank = ncl_ring_rank(p, c, i - 1);
    const int fill_queue = q >= channels, fills_here = p->helper_queues == 0, overlap = overlaps(p);
    uint64_t off, len, lo;
    int inline_step;

    if (landing(p))
        return next_landing(p, q, g, t);
    NCL_GEN_BEGIN(g);
    if (round_span(p, c, 0, &off) == 0)
        return g->line = -1, 0;
    if (n == 1) { /* out of place: copy the channel's portion */
        for (g->m = 0; !p->inplace && g->m < ncl_channel_part(p, p->count, channels, c, &off); g->m += p->slice_elems) {
            len = ncl_min_u64(p->slice_elems, ncl_channel_part(p, p->count, channels, c, &off) - g->m);
            ncl_task_copy(t, input_chunk(p, 0, off + g->m), ncl_ref_add(ncl_plan_output(p, r), (off + g->m) * es),
                          len * es, 0);
            NCL_YIELD(g);
        }
        return g->line = -1, 0;
    }
    if (fill_queue) {
        /* the fill queue: every target of every round, in the order the ring needs them */
        for (g->i = 0; round_span(p, c, g->i, &off) != 0; g->i++) {
            for (g->j = 0; g->j < (uint64_t)(n - 1); g->j++) {
                /* the slot was sent on K turns ago (in place, staged: the extra slot was reduced
                 * last round) */
                if (g->j < (uint64_t)n - 2 ? turn_of(p, c, g->i, g->j) >= ring_slots(p)
                                           : g->i > 0 && staged(p) && p->inplace) {
                    ncl_task_wait(t, r, g->j < (uint64_t)n - 2 ? NCL_NOTIFY_LOCAL(c) : NCL_NOTIFY_LOCAL(channels + c), 1,
                                  (uint32_t)g->j);
                    NCL_YIELD(g);
                }
                for (g->k = 0; step_piece(p, c, i - 1, g->i, g->j, g->k, &lo) != 0; g->k++) {
                    len = round_span(p, c, g->i, &off);
                    /* in place chunk r is in place; a staged target is not filled */
                    if (filled(p, c, i - 1, g->i, g->j, off, len)) {
                        len = step_piece(p, c, i - 1, g->i, g->j, g->k, &lo);
                        fill_task(p, c, g->i, g->j, lo, len, t);
                        NCL_YIELD(g);
                    }
                    if (needs_ready(p, overlap, g->i, g->j)) {
                        ncl_task_record(t, prev_rank, NCL_NOTIFY_READY(c), (uint32_t)g->j);
                        NCL_YIELD(g);
                    }
                }
            }
        }
        return g->line = -1, 0;
    }
    for (g->i = 0; round_span(p, c, g->i, &off) != 0; g->i++) {
        if (fills_here) {
            for (g->j = 0; g->j < (uint64_t)(n - 1); g->j++) {
                len = round_span(p, c, g->i, &off);
                if (filled(p, c, i - 1, g->i, g->j, off, len)) {
                    fill_task(p, c, g->i, g->j, 0, len, t);
                    NCL_YIELD(g);
                }
                if (needs_ready(p, overlap, g->i, g->j)) {
                    ncl_task_record(t, prev_rank, NCL_NOTIFY_READY(c), (uint32_t)g->j);
                    NCL_YIELD(g);
                }
            }
        }
        /* step s: reduce chunk i-1-s into next's target for it (step 0 from our input) */
        for (g->j = 0; g->j < (uint64_t)(n - 1); g->j++) {
            for (g->k = 0; step_piece(p, c, i, g->i, g->j, g->k, &lo) != 0; g->k++) {
                if (needs_ready(p, overlap, g->i, g->j)) {
                    ncl_task_wait(t, next_rank, NCL_NOTIFY_READY(c), 1, (uint32_t)(g->i * (uint64_t)(n - 1) + g->j));
                    NCL_YIELD(g);
                }
                len = round_span(p, c, g->i, &off);
                inline_step = step_inline(p, c, i, g->i, g->j, off, len);
                len = step_piece(p, c, i, g->i, g->j, g->k, &lo);
                if (inline_step)
                    ncl_task_write_reduce(t, p, next_rank,
                                          g->j == 0 ? input_chunk(p, ncl_ring_rank(p, c, i - 1), off + lo)
                                                    : target(p, c, r, g->i, g->j - 1, off),
                                          ncl_ref_add(target(p, c, next_rank, g->i, g->j, off), lo * es), len * es,
                                          (uint32_t)(g->i * (uint64_t)(n - 1) + g->j));
                else
                    ncl_task_write(t, next_rank,
                                   g->j == 0 ? input_chunk(p, ncl_ring_rank(p, c, i - 1), off)
                                             : target(p, c, r, g->i, g->j - 1, off),
                                   staged_target(p, c, next_rank, g->i, g->j, off), len * es,
                                   (uint32_t)(g->i * (uint64_t)(n - 1) + g->j));
                NCL_YIELD(g);
            }
            if (overlap)
                ncl_task_record_behind(p, p->queues, t, next_rank, NCL_NOTIFY_DATA(c),
                                       (uint32_t)(g->i * (uint64_t)(n - 1) + g->j));
            else
                ncl_task_record(t, next_rank, NCL_NOTIFY_DATA(c), (uint32_t)(g->i * (uint64_t)(n - 1) + g->j));
            NCL_YIELD(g);
            if (!fills_here && g->j > 0 &&
                turn_of(p, c, g->i, g->j - 1) + ring_slots(p) < rounds_of(p, c) * (uint64_t)(n - 2)) {
                /* the slot of step j-1 is sent on: the fill queue may refill it */
                ncl_task_record(t, r, NCL_NOTIFY_LOCAL(c), (uint32_t)(g->i * (uint64_t)(n - 1) + g->j));
                NCL_YIELD(g);
            }
            /* prev's DATA for this step, and at step 0 the round before's last step's if deferred
             * (one counter: the two in order) */
            len = (uint64_t)(overlap && g->j == 0 && g->i > 0) + !(overlap && g->j == (uint64_t)n - 2);
            if (len == 0)
                continue;
            ncl_task_wait(t, prev_rank, NCL_NOTIFY_DATA(c), (uint32_t)len, (uint32_t)(g->i * (uint64_t)(n - 1) + g->j));
            NCL_YIELD(g);
            len = round_span(p, c, g->i, &off);
            if (!step_inline(p, c, i - 1, g->i, g->j, off, len)) { /* our share joins the partial */
                if (p->inplace && g->j == (uint64_t)n - 2)
                    ncl_task_reduce(t, p, staged_target(p, c, r, g->i, g->j, off), target(p, c, r, g->i, g->j, off),
                                    len * es, (uint32_t)(g->i * (uint64_t)(n - 1) + g->j));
                else
                    ncl_task_reduce(t, p, input_chunk(p, ncl_ring_rank(p, c, i - 2 - (int64_t)g->j), off),
                                    target(p, c, r, g->i, g->j, off), len * es,
                                    (uint32_t)(g->i * (uint64_t)(n - 1) + g->j));
                NCL_YIELD(g);
            }
            if (!fills_here && staged(p) && p->inplace && g->j == (uint64_t)n - 2 &&
                round_span(p, c, g->i + 1, &off) != 0) { /* the extra slot is free again (its own id:
                                                            * its credits come in another order) */
                ncl_task_record(t, r, NCL_NOTIFY_LOCAL(channels + c), (uint32_t)(g->i * (uint64_t)(n - 1) + g->j));
                NCL_YIELD(g);
            }
        }
        if (p->avg) {
            len = round_span(p, c, g->i, &off);
            ncl_task_div(t, p, target(p, c, r, g->i, (uint64_t)n - 2, off), len * es,
                         (uint32_t)(g->i * (uint64_t)(n - 1) + (uint64_t)n - 2));
            NCL_YIELD(g);
        }
    }
    if (overlap && g->i > 0) { /* the last round's last step */
        ncl_task_wait(t, prev_rank, NCL_NOTIFY_DATA(c), 1, (uint32_t)(g->i * (uint64_t)(n - 1) - 1));
        NCL_YIELD(g);
    }
    NCL_GEN_END(g);
}

const ncl_algo_desc ncl_algo_ring_reduce_scatter = {"ring", NCL_COLL_REDUCE_SCATTER, NCL_ALGO_RING,
                                                    prepare, next};
