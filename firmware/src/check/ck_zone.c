/* ck_zone.c — the schedule checker's landing-zone rules: the credits a collective starts with, who may write a zone and when, its credit after the last read, and the balance at the end. */
#include "ck.h"

/* A collective sees one use of each zone it names (ncl_plan.zone_*): channel ch's zone on rank r
 * is written only by r's predecessor on ring ch, only after that writer's queue took the credit
 * of the zone's previous use (when there was one: NCL_ZONE_CREDIT), and r credits it back exactly
 * once, after every access to it, which then ends. The credits of earlier uses are counters the
 * collective starts with (no clock: they come from before), two when the zones of both turns
 * were used before. With one credit recorded per use and at most one taken, a use leaves the
 * counter as the next use expects, so the rules proven here for one collective hold for any
 * sequence of them. */

static int pred_of(const ck *c, int rank, uint32_t ch)
{
    return ncl_ring_rank(c->plan, ch, ncl_ring_pos(c->plan, ch, rank) - 1);
}

static int credit_id(const ck *c, uint32_t id, uint32_t *ch)
{
    *ch = id - NCL_NOTIFY_CREDIT(0);
    return id >= NCL_NOTIFY_CREDIT(0) && *ch < NCL_MAX_QUEUES && *ch < c->plan->zone_channels;
}

uint64_t ncl_ck_zone_end(const ck *c)
{
    const ncl_plan *p = c->plan;
    return p->zone_channels ? p->zone_base + 2ull * p->zone_channels * p->zone_bytes : p->scratch_bytes;
}

/* The zone [lo, hi) falls in, or -1 when it touches none; -2 when it spans more than one. */
static int zone_of(const ck *c, uint32_t buf, uint64_t lo, uint64_t hi)
{
    const ncl_plan *p = c->plan;
    if (buf != NCL_BUF_SCRATCH || !p->zone_channels || hi <= p->zone_base || lo >= ncl_ck_zone_end(c) || hi <= lo)
        return -1;
    if (lo < p->zone_base)
        return -2;
    uint64_t z = (lo - p->zone_base) / p->zone_bytes;
    return (hi - 1 - p->zone_base) / p->zone_bytes == z ? (int)z : -2;
}

static int this_turn(const ck *c, uint32_t ch)
{
    return (int)(2u * ch + (c->plan->zone_state[ch] & NCL_ZONE_ODD ? 1u : 0u));
}

ncl_result ncl_ck_zone_setup(ck *c)
{
    const ncl_plan *p = c->plan;
    if (!p->zone_channels)
        return NCL_SUCCESS;
    const size_t n = (size_t)c->nranks * NCL_MAX_QUEUES;
    if (!(c->zone_taken = ck_alloc(c, n * sizeof *c->zone_taken)) || !(c->zone_done = ck_alloc(c, n)))
        return ncl_ck_oom(c);
    memset(c->zone_taken, 0, n * sizeof *c->zone_taken);
    memset(c->zone_done, 0, n);
    for (int r = 0; r < c->nranks; r++) {
        for (uint32_t ch = 0; ch < p->zone_channels && (p->zone_state[ch] & NCL_ZONE_CREDIT); ch++) {
            counter *x = ncl_ck_ctr_get(c, pred_of(c, r, ch), r, NCL_NOTIFY_CREDIT(ch));
            if (!x)
                return ncl_ck_oom(c);
            for (int k = 0; k < 2; k++) { /* the credits of both earlier uses, from before */
                snap *s = pool_get(c, &c->snaps);
                if (!s || !ncl_ck_ctr_push(c, x, s))
                    return ncl_ck_oom(c);
                memset(s->vc, 0, c->nthreads * sizeof(uint32_t));
                s->refs = 1;
            }
        }
    }
    return NCL_SUCCESS;
}

ncl_result ncl_ck_zone_access(ck *c, uint32_t t, const ncl_task *k, int rank, uint32_t buf, uint64_t lo, uint64_t hi,
                              int remote_write)
{
    int z = zone_of(c, buf, lo, hi);
    if (z == -1)
        return NCL_SUCCESS;
    if (z == -2)
        return ncl_ck_task_fail(c, t, k, "rank %d SCRATCH [%llu,%llu) crosses a landing zone's edge", rank,
                                (unsigned long long)lo, (unsigned long long)hi);
    const uint32_t ch = (uint32_t)z / 2;
    if (z != this_turn(c, ch))
        return ncl_ck_task_fail(c, t, k, "rank %d SCRATCH [%llu,%llu) is channel %u's landing zone of the %s "
                                "collective, not this one's", rank, (unsigned long long)lo, (unsigned long long)hi, ch,
                                (c->plan->zone_state[ch] & NCL_ZONE_ODD) ? "previous" : "next");
    if (c->zone_done[(size_t)rank * NCL_MAX_QUEUES + ch])
        return ncl_ck_task_fail(c, t, k, "rank %d SCRATCH [%llu,%llu): channel %u's landing zone is accessed after "
                                "rank %d credited it back", rank, (unsigned long long)lo, (unsigned long long)hi, ch, rank);
    if (!remote_write)
        return NCL_SUCCESS;
    const int w = t_rank(c, t);
    if (w != pred_of(c, rank, ch))
        return ncl_ck_task_fail(c, t, k, "writes into rank %d's channel %u landing zone, which only its ring "
                                "predecessor (rank %d) writes", rank, ch, pred_of(c, rank, ch));
    if ((c->plan->zone_state[ch] & NCL_ZONE_CREDIT) && c->zone_taken[(size_t)w * NCL_MAX_QUEUES + ch] != t + 1)
        return ncl_ck_task_fail(c, t, k, "writes into rank %d's channel %u landing zone before this queue waited "
                                "for its credit (notify %u from rank %d)", rank, ch, NCL_NOTIFY_CREDIT(ch), rank);
    return NCL_SUCCESS;
}

int ncl_ck_zone_write(const ck *c, uint32_t buf, uint64_t lo, uint64_t hi)
{
    return zone_of(c, buf, lo, hi) >= 0;
}

void ncl_ck_zone_waited(ck *c, uint32_t t, const ncl_task *k)
{
    uint32_t ch;
    if (credit_id(c, k->notify, &ch))
        c->zone_taken[(size_t)t_rank(c, t) * NCL_MAX_QUEUES + ch] = t + 1;
}

ncl_result ncl_ck_zone_credit(ck *c, uint32_t t, const ncl_task *k)
{
    uint32_t ch;
    const int r = t_rank(c, t);
    if (k->notify < NCL_NOTIFY_CREDIT(0) || k->notify >= NCL_NOTIFY_CREDIT(NCL_MAX_QUEUES))
        return NCL_SUCCESS;
    if (!credit_id(c, k->notify, &ch))
        return ncl_ck_task_fail(c, t, k, "records a landing-zone credit (notify %u) for a channel whose zone the "
                                "plan does not use", k->notify);
    if (k->peer != pred_of(c, r, ch))
        return ncl_ck_task_fail(c, t, k, "credits channel %u's landing zone to rank %d, not to its writer (rank %d)",
                                ch, k->peer, pred_of(c, r, ch));
    uint8_t *done = &c->zone_done[(size_t)r * NCL_MAX_QUEUES + ch];
    if (*done)
        return ncl_ck_task_fail(c, t, k, "credits channel %u's landing zone a second time", ch);
    /* every access to the zone so far must come before the credit */
    const ncl_plan *p = c->plan;
    const uint64_t lo = p->zone_base + (uint64_t)this_turn(c, ch) * p->zone_bytes, hi = lo + p->zone_bytes;
    const amap *m = &mem_of(c, r, NCL_BUF_SCRATCH)->acc;
    const uint32_t *vc = vc_of(c, t);
    apos pos = am_find(m, lo);
    do {
        const aseg *s = am_at(m, pos);
        if (s->lo >= hi)
            break;
        for (const anode *e = s->head; e; e = e->next) {
            if (s->hi <= lo || e->thread == t || vc[e->thread] >= e->clock)
                continue;
            char who[96];
            ncl_ck_task_name(c, e->thread, e->step, e->kind, who, sizeof who);
            return ncl_ck_task_fail(c, t, k, "credits channel %u's landing zone while %s may still %s it", ch, who,
                                    e->write ? "write" : "read");
        }
    } while (am_next(m, &pos));
    *done = 1;
    return NCL_SUCCESS;
}

/* Each zone's credit counter must end as the next use expects: one credit recorded by this use,
 * one taken when one was due. */
ncl_result ncl_ck_zone_balance(ck *c)
{
    const ncl_plan *p = c->plan;
    for (int r = 0; r < c->nranks; r++) {
        for (uint32_t ch = 0; ch < p->zone_channels; ch++) {
            const counter *x = ncl_ck_ctr_get(c, pred_of(c, r, ch), r, NCL_NOTIFY_CREDIT(ch));
            if (!x)
                return ncl_ck_oom(c);
            const uint64_t want = (p->zone_state[ch] & NCL_ZONE_CREDIT) ? 2 : 1;
            if (x->count != want)
                return ncl_ck_fail(c, NCL_ERR_SCHEDULE, "channel %u's landing zone on rank %d: %llu credit(s) left for "
                                   "rank %d after the collective, expected %llu (one credit per use, one taken when due)",
                                   ch, r, (unsigned long long)x->count, pred_of(c, r, ch), (unsigned long long)want);
        }
    }
    return NCL_SUCCESS;
}

/* Counters the balance above accounts for, which the general leftover rule skips. */
int ncl_ck_zone_counter(const ck *c, const counter *x)
{
    uint32_t ch;
    return credit_id(c, x->id, &ch) && x->owner == pred_of(c, x->sender, ch);
}
