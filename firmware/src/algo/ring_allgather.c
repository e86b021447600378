/* ring_allgather.c — ring allgather: each rank's block travels p-1 hops around the ring, split
 * over channels and cut into rounds of at most one slice. */
#include "ncl_algo.h"

/* recv holds nranks blocks of `count` elements; block k is rank k's input. Channel c runs on its
 * logical ring (ncl_ring_*): at step s position i forwards the block of the rank at position i-s
 * (step 0: its own, read from its input) and receives the one of position i-1-s. No scratch and
 * no reuse, so a single READY handshake up front is enough. Where every channel has a DMA engine,
 * its DATA and LOCAL records are posted (NCL_TASK_POSTED): each goes once the writes before it
 * have landed while the queue goes on to its next wait and write, so a step follows its block's
 * arrival, not our own last write's: on a ring of unequal links the slow ones no longer set every
 * rank's pace. (With more channels than engines the writes that would then be in flight queue
 * for the engines and reach the links out of step: 7 channels on 4 engines ran up to 7 % slower.)
 *
 * Landing zones (ncl_zone_*): that READY travels from next back to us, p-1 links on a one-way
 * ring. The first units of the stream (as many as next's zone holds; when not even one fits, the
 * first unit's head) go into next's zone instead, which needs no READY, only the credit of the
 * zone's use two collectives ago. The zone is sized to what the links carry while the READY
 * travels, so it has arrived when the units for next's recv begin. The receiver forwards a zoned
 * unit from its zone, copies it into its recv on its helper queue, and credits the zone back once
 * both have read it. The last group (below) never lands there: its copies would follow the ring.
 *
 * Helper queues. Out of place our own block must also land in our recv, but nothing in the ring
 * reads it there (step 0 sends from the input) and nobody writes it (we receive every block but
 * ours), so that copy has no dependency at all; the copies out of the zone depend only on the
 * data's arrival. The ring runs with no spare time (a step's data and notify arrive as our own
 * write completes), so any task on its queue delays it by an issue. With room for twice the
 * channels (queues and DMA engines: ncl_helper_room), channel c's copies run on a helper queue
 * (channels + c): the ring queue records LOCAL after each DATA wait whose group holds zoned units,
 * and once more after the DATA record that follows the last forward out of the zone; the helper
 * copies a group's units after each LOCAL and credits the zone after the last one. Zones are used
 * only then. Without that room the ring queue copies its own block between its READY record (prev
 * is not held up) and its wait for next's READY, where it overlaps that notify's latency. In place
 * our block is already there (the input is its place in recv). Every copy moves at most one
 * slice. */

/* Ring queues: the plan's queues without the copy queues. */
static uint32_t channels_of(const ncl_plan *p)
{
    return p->queues - p->helper_queues;
}

/* The ring's records: posted where every channel has a DMA engine. */
static void ring_record(const ncl_plan *p, ncl_task *t, int peer, uint32_t notify, uint32_t step)
{
    ncl_task_record_behind(p, channels_of(p), t, peer, notify, step);
}

/* Elements of each block the round moves, of the channel's portion [coff, coff + span); *off =
 * first element within a block. */
static uint64_t round_span(const ncl_plan *p, uint64_t span, uint64_t coff, uint64_t round, uint64_t *off)
{
    uint64_t lo = round * p->slice_elems;
    *off = coff + lo;
    return lo >= span ? 0 : ncl_min_u64(p->slice_elems, span - lo);
}

static ncl_ref block(const ncl_plan *p, int k, uint64_t off)
{
    return ncl_ref_make(NCL_BUF_RECV, ((uint64_t)k * p->count + off) * p->esize);
}

/* The channel's stream: `rounds` rounds of `steps` steps in ncl_round_step's order (a group: the
 * units between two DATA records, a step's rounds or one unit). The first `zoned` units land in
 * the receiver's zone in slots of slot_bytes; head > 0: only the first `head` elements of the one
 * zoned unit do (a unit larger than the zone). */
typedef struct stream {
    uint64_t rounds, steps, units, zoned, slot_bytes, head;
} stream;

static stream stream_of(const ncl_plan *p, uint32_t c, uint64_t span)
{
    stream s;
    s.rounds = ncl_div_ceil(span, p->slice_elems);
    s.steps = (uint64_t)(p->nranks - 1);
    s.units = s.rounds * s.steps;
    s.slot_bytes = ncl_min_u64(p->slice_elems, span) * p->esize;
    s.head = 0;
    const uint64_t last = p->in_flight > 1 ? s.rounds : 1u; /* the last group's units */
    s.zoned = s.units > last ? ncl_zone_slots(p, c, s.slot_bytes, s.units - last) : 0;
    if (s.units > last && s.zoned == 0 && c < p->zone_channels && p->zone_bytes >= p->esize) {
        s.head = p->zone_bytes / p->esize;
        s.zoned = 1;
    }
    return s;
}

/* Elements of `unit` (of len) that land in the zone. */
static uint64_t zoned_len(const stream *s, uint64_t unit, uint64_t len)
{
    return unit >= s->zoned ? 0 : s->head ? ncl_min_u64(s->head, len) : len;
}

static ncl_result prepare(ncl_plan *p)
{
    uint32_t c = ncl_channels_for(p->queues, p->count);
    p->segments = 1;
    /* zones only with a helper queue for their copies: on the ring queue each costs an issue */
    p->zone_channels = p->zone_bytes && p->nranks > 1 && ncl_helper_room(p, c) ? c : 0;
    int zoned = 0;
    for (uint32_t ch = 0; ch < p->zone_channels && !zoned; ch++) {
        uint64_t k;
        zoned = stream_of(p, ch, ncl_channel_part(p, p->count, c, ch, &k)).zoned > 0;
    }
    /* channel c copies on queue c + channels */
    p->helper_queues = (!p->inplace || zoned) && p->nranks > 1 && ncl_helper_room(p, c) ? c : 0;
    p->queues = c + p->helper_queues;
    return NCL_SUCCESS;
}

/* The unit of (round, step) in the stream: ncl_round_step's inverse. */
static uint64_t unit_of(const ncl_plan *p, const stream *s, uint64_t round, uint64_t step)
{
    return p->in_flight > 1 ? step * s->rounds + round : round * s->steps + step;
}

static uint64_t group_of(const ncl_plan *p, const stream *s, uint64_t unit)
{
    return p->in_flight > 1 ? unit / s->rounds : unit;
}

/* For the generator (whose locals do not survive a yield): the channel's stream, the group of a
 * unit, the last zoned unit's group (zoned > 0), whether a group follows it. */
static stream stream_at(const ncl_plan *p, uint32_t c, const ncl_gen *g)
{
    return stream_of(p, c, g->n);
}

static uint64_t group_at(const ncl_plan *p, uint32_t c, const ncl_gen *g, uint64_t unit)
{
    const stream s = stream_at(p, c, g);
    return group_of(p, &s, unit);
}

static uint64_t last_zoned_group(const ncl_plan *p, uint32_t c, const ncl_gen *g)
{
    return group_at(p, c, g, stream_at(p, c, g).zoned - 1);
}

static int more_groups(const ncl_plan *p, uint32_t c, const ncl_gen *g)
{
    return last_zoned_group(p, c, g) < group_at(p, c, g, stream_at(p, c, g).units - 1);
}

/* Write `piece` (0 or 1) of ring unit g->i into *t: a unit goes whole, or in two pieces where it
 * crosses the zone's edge, on our side (a head that arrived in our zone) or next's (a head that
 * lands in next's zone). Returns 0 when there is no such piece. */
static int ring_write(const ncl_plan *p, uint32_t c, const ncl_gen *g, int piece, ncl_task *t)
{
    const stream s = stream_at(p, c, g);
    const int i = ncl_ring_pos(p, c, p->rank);
    const uint64_t es = p->esize;
    uint64_t round, step, off;
    ncl_round_step(p, g->i, s.rounds, s.steps, &round, &step);
    const uint64_t len = round_span(p, g->n, g->k, round, &off);
    const uint64_t from = step ? unit_of(p, &s, round, step - 1) : s.units; /* where we received it */
    const uint64_t ours = step ? zoned_len(&s, from, len) : 0, theirs = zoned_len(&s, g->i, len);
    const uint64_t cut = ours && ours < len ? ours : theirs && theirs < len ? theirs : len;
    const uint64_t lo = piece ? cut : 0, hi = piece ? len : cut;
    if (lo >= hi)
        return 0;
    const ncl_ref dst = block(p, ncl_ring_rank(p, c, i - (int64_t)step), off + lo);
    const ncl_ref src = step == 0 ? ncl_ref_add(ncl_plan_input(p, p->rank), (off + lo) * es)
                        : lo < ours ? ncl_zone_slot(p, c, s.slot_bytes, from)
                                    : dst;
    ncl_task_write(t, ncl_ring_rank(p, c, i + 1), src, lo < theirs ? ncl_zone_slot(p, c, s.slot_bytes, g->i) : dst,
                   (hi - lo) * es, (uint32_t)(round * s.steps + step));
    return 1;
}

/* Unit g->m of `group` out of our zone into our recv: 1 with *t filled, 0 when that unit was not
 * zoned, 2 past the group's end. */
static int copy_out(const ncl_plan *p, uint32_t c, const ncl_gen *g, uint64_t group, ncl_task *t)
{
    const stream s = stream_at(p, c, g);
    uint64_t round, step, off, len;
    if (p->in_flight > 1) {
        if (g->m >= s.rounds)
            return 2;
        round = g->m;
        step = group;
    } else {
        if (g->m >= 1)
            return 2;
        ncl_round_step(p, group, s.rounds, s.steps, &round, &step);
    }
    const uint64_t x = unit_of(p, &s, round, step);
    len = zoned_len(&s, x, round_span(p, g->n, g->k, round, &off));
    if (len == 0)
        return 0;
    ncl_task_copy(t, ncl_zone_slot(p, c, s.slot_bytes, x),
                  block(p, ncl_ring_rank(p, c, ncl_ring_pos(p, c, p->rank) - 1 - (int64_t)step), off), len * p->esize,
                  (uint32_t)(round * s.steps + step));
    return 1;
}

/* Generator state: [k, k + n) = the channel's portion of a block, m = copy offset in it (or the
 * unit of a group being copied out of the zone), i = unit of the ring (the helper: the group it
 * copies), j = its step. */
static int next(const ncl_plan *p, uint32_t q, ncl_gen *g, ncl_task *t)
{
    const uint32_t channels = channels_of(p), c = q % channels;
    const int r = p->rank, n = p->nranks, i = ncl_ring_pos(p, c, r), copy_queue = q >= channels;
    const int next_rank = ncl_ring_rank(p, c, i + 1), prev_rank = ncl_ring_rank(p, c, i - 1);
    const uint64_t es = p->esize;
    const ncl_ref in = ncl_plan_input(p, r);
    uint64_t round;
    int x;
    stream s;

    NCL_GEN_BEGIN(g);
    /* the channel's portion, once (a weighted split costs a loop): n elements from k */
    g->n = ncl_channel_part(p, p->count, channels, c, &g->k);
    if (copy_queue && g->n == 0)
        return g->line = -1, 0;
    s = stream_at(p, c, g);
    if (!copy_queue && s.zoned < s.units) { /* let prev write the blocks its zone cannot hold */
        ncl_task_record(t, prev_rank, NCL_NOTIFY_READY(c), 0);
        NCL_YIELD(g);
    }
    /* out of place: our own block into place (on the copy queue, if there is one) */
    for (g->m = 0; !p->inplace && copy_queue == (p->helper_queues != 0) && g->m < g->n; g->m += p->slice_elems) {
        ncl_task_copy(t, ncl_ref_add(in, (g->k + g->m) * es), block(p, r, g->k + g->m),
                      ncl_min_u64(p->slice_elems, g->n - g->m) * es, 0);
        NCL_YIELD(g);
    }
    if (copy_queue) { /* each zoned group when the ring queue says it arrived, then the credit */
        if (stream_at(p, c, g).zoned == 0)
            return g->line = -1, 0;
        for (g->i = 0; g->i <= last_zoned_group(p, c, g) + (more_groups(p, c, g) ? 1 : 0); g->i++) {
            ncl_task_wait(t, r, NCL_NOTIFY_LOCAL(c), 1, 0);
            NCL_YIELD(g);
            for (g->m = 0; g->i <= last_zoned_group(p, c, g) && (x = copy_out(p, c, g, g->i, t)) != 2; g->m++) {
                if (x) {
                    NCL_YIELD(g);
                }
            }
        }
        ncl_task_record(t, prev_rank, NCL_NOTIFY_CREDIT(c), 0);
        NCL_YIELD(g);
        return g->line = -1, 0;
    }
    if (n == 1)
        return g->line = -1, 0;
    if (ncl_zone_credit_due(p, c)) {
        ncl_task_wait(t, next_rank, NCL_NOTIFY_CREDIT(c), 1, 0);
        NCL_YIELD(g);
    }
    if (c < p->zone_channels && stream_at(p, c, g).zoned == 0) { /* nothing of ours to read there */
        ncl_task_record(t, prev_rank, NCL_NOTIFY_CREDIT(c), 0);
        NCL_YIELD(g);
    }
    /* step s: forward position i-s's block (step 0: ours, from the input; in place the input is
     * our block; a zoned one from our zone), then wait for i-1-s's from prev */
    for (g->i = 0; g->i < stream_at(p, c, g).units; g->i++) {
        if (g->i == stream_at(p, c, g).zoned && !stream_at(p, c, g).head) { /* the first unit for next's recv */
            ncl_task_wait(t, next_rank, NCL_NOTIFY_READY(c), 1, 0);
            NCL_YIELD(g);
        }
        if (ring_write(p, c, g, 0, t)) {
            NCL_YIELD(g);
        }
        if (g->i == 0 && stream_at(p, c, g).head) { /* the rest of a unit whose head went to the zone */
            ncl_task_wait(t, next_rank, NCL_NOTIFY_READY(c), 1, 0);
            NCL_YIELD(g);
        }
        if (ring_write(p, c, g, 1, t)) {
            NCL_YIELD(g);
        }
        s = stream_at(p, c, g);
        if (!ncl_round_step(p, g->i, s.rounds, s.steps, &round, &g->j))
            continue;
        ring_record(p, t, next_rank, NCL_NOTIFY_DATA(c), (uint32_t)(round * s.steps + g->j));
        NCL_YIELD(g);
        /* the forwards out of the zone are done: the helper may credit it once it has copied */
        if (stream_at(p, c, g).zoned && group_at(p, c, g, g->i) == last_zoned_group(p, c, g) + 1) {
            ring_record(p, t, r, NCL_NOTIFY_LOCAL(c), 0);
            NCL_YIELD(g);
        }
        s = stream_at(p, c, g);
        ncl_round_step(p, g->i, s.rounds, s.steps, &round, &g->j);
        ncl_task_wait(t, prev_rank, NCL_NOTIFY_DATA(c), 1, (uint32_t)(round * s.steps + g->j));
        NCL_YIELD(g);
        if (stream_at(p, c, g).zoned && group_at(p, c, g, g->i) <= last_zoned_group(p, c, g)) {
            ring_record(p, t, r, NCL_NOTIFY_LOCAL(c), 0); /* this group's zoned units arrived */
            NCL_YIELD(g);
        }
    }
    NCL_GEN_END(g);
}

const ncl_algo_desc ncl_algo_ring_allgather = {"ring", NCL_COLL_ALLGATHER, NCL_ALGO_RING, prepare, next};
