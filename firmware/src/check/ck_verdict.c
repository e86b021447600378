/* ck_verdict.c — the checker's verdicts: the deadlock report when no queue can run, and the final checks of a complete run. */
#include "ck.h"

/* Next wait-for edge of blocked thread u from its iterator: a blocked thread of the rank u
 * waits for (its own thread excluded: it cannot record while it waits), or NO_THREAD. */
static uint32_t next_edge(ck *c, uint32_t u)
{
    thread *th = &c->th[u];
    uint32_t base = (uint32_t)th->task.peer * c->queues;
    while (th->it < c->queues) {
        uint32_t v = base + th->it++;
        if (v != u && is_blocked(c, v))
            return v;
    }
    return NO_THREAD;
}

ncl_result ncl_ck_deadlock(ck *c)
{
    /* 1. a wait whose peer has nothing left that could record */
    for (uint32_t u = 0; u < c->nthreads; u++) {
        if (!is_blocked(c, u))
            continue;
        c->th[u].it = 0;
        if (next_edge(c, u) != NO_THREAD)
            continue;
        const ncl_task *k = &c->th[u].task;
        int r = t_rank(c, u);
        counter *x = ncl_ck_ctr_get(c, r, k->peer, k->notify);
        uint64_t have = x ? x->count : 0;
        char why[64], part[64];
        if (k->peer == r)
            ncl_fmt(why, sizeof why, "the other queues of rank %d finished", r);
        else
            ncl_fmt(why, sizeof why, "rank %d finished", k->peer);
        part[0] = '\0';
        if (have)
            ncl_fmt(part, sizeof part, "; %llu of %u records arrived", (unsigned long long)have, k->count);
        return ncl_ck_fail(c, NCL_ERR_SCHEDULE,
                    "rank %d queue %u step %u waits for notify %u from rank %d, which never records it (%s)%s", r,
                    t_queue(c, u), k->step, k->notify, k->peer, why, part);
    }
    /* 2. no sinks: every blocked thread waits on another blocked one, so there is a cycle */
    for (uint32_t u = 0; u < c->nthreads; u++) {
        c->th[u].color = 0;
        c->th[u].it = 0;
    }
    for (uint32_t s = 0; s < c->nthreads; s++) {
        if (!is_blocked(c, s) || c->th[s].color)
            continue;
        c->th[s].color = 1;
        c->th[s].parent = NO_THREAD;
        uint32_t cur = s;
        while (cur != NO_THREAD) {
            uint32_t v = next_edge(c, cur);
            if (v == NO_THREAD) {
                c->th[cur].color = 2;
                cur = c->th[cur].parent;
                continue;
            }
            if (c->th[v].color == 0) {
                c->th[v].color = 1;
                c->th[v].parent = cur;
                c->th[v].it = 0;
                cur = v;
                continue;
            }
            if (c->th[v].color != 1)
                continue;
            /* cycle v -> ... -> cur -> v: link it forwards, start at its smallest thread */
            uint32_t first = v;
            c->th[cur].cyc_next = v;
            for (uint32_t x = cur; x != v; x = c->th[x].parent) {
                c->th[c->th[x].parent].cyc_next = x;
                if (x < first)
                    first = x;
            }
            char *m = c->msg;
            size_t len = c->msg_len, pos = 0;
            if (m && len) {
                pos += ncl_fmt(m + pos, len - pos, "wait-for cycle: ");
                uint32_t x = first;
                do {
                    pos += ncl_fmt(m + pos, len - pos, "rank %d (q%u, step %u) -> ", t_rank(c, x), t_queue(c, x),
                                   c->th[x].task.step);
                    x = c->th[x].cyc_next;
                } while (x != first);
                ncl_fmt(m + pos, len - pos, "rank %d", t_rank(c, first));
            }
            return NCL_ERR_SCHEDULE;
        }
    }
    return ncl_ck_fail(c, NCL_ERR_INTERNAL, "schedule checker: deadlock without a cause (checker bug)");
}

ncl_result ncl_ck_check_leftovers(ck *c)
{
    const counter *best = NULL;
    for (size_t i = 0; i < c->ctr_cap; i++) {
        const counter *x = &c->ctr[i];
        if (!x->used || !x->count || ncl_ck_zone_counter(c, x))
            continue;
        if (!best || x->sender < best->sender || (x->sender == best->sender && x->owner < best->owner) ||
            (x->sender == best->sender && x->owner == best->owner && x->id < best->id))
            best = x;
    }
    if (!best)
        return NCL_SUCCESS;
    return ncl_ck_fail(c, NCL_ERR_SCHEDULE, "rank %d recorded notify %u to rank %d %llu more time(s) than it was waited for",
                best->sender, best->id, best->owner, (unsigned long long)best->count);
}

/* Every write into a rank by a peer must be ordered before that rank's end (some wait there
 * follows it), or the rank may return before the data lands. */
ncl_result ncl_ck_check_writes_covered(ck *c)
{
    for (int r = 0; r < c->nranks; r++) {
        for (uint32_t b = 0; b < NCL_BUF_COUNT; b++) {
            const mem *mm = mem_of(c, r, b);
            const amap *m = &mm->acc;
            if (!mm->bytes)
                continue;
            apos p = {0, 0};
            do {
                const aseg *s = am_at(m, p);
                for (const anode *e = s->head; e; e = e->next) {
                    if (!e->write || t_rank(c, e->thread) == r)
                        continue;
                    uint32_t q;
                    for (q = 0; q < c->queues; q++)
                        if (vc_of(c, (uint32_t)r * c->queues + q)[e->thread] >= e->clock)
                            break;
                    if (q < c->queues)
                        continue;
                    char who[96];
                    ncl_ck_task_name(c, e->thread, e->step, e->kind, who, sizeof who);
                    return ncl_ck_fail(c, NCL_ERR_SCHEDULE,
                                "%s writes into rank %d %s [%llu,%llu), but no wait on rank %d follows it (rank %d "
                                "may finish before the data lands)",
                                who, r, ncl_buf_name(b), (unsigned long long)s->lo,
                                (unsigned long long)ncl_ck_am_extent(m, p, mm->bytes, e), r, r);
                }
            } while (am_next(m, &p));
        }
    }
    return NCL_SUCCESS;
}

/* alltoallv: elements rank i sends rank j. */
static uint64_t a2av_count(const ncl_plan *p, int i, int j)
{
    return p->a2a_counts[(uint64_t)i * (uint64_t)p->nranks + (uint64_t)j];
}

ncl_result ncl_ck_check_result(ck *c)
{
    const ncl_plan *p = c->plan;
    const uint64_t cnt = p->count, es = c->esize;
    for (int r = 0; r < c->nranks; r++) {
        uint64_t n = cnt;
        if (p->coll == NCL_COLL_ALLGATHER || p->coll == NCL_COLL_ALLTOALL)
            n = cnt * (uint64_t)c->nranks;
        if (p->a2a_counts) { /* alltoallv: the column of the count matrix, block by block */
            n = 0;
            for (int i = 0; i < c->nranks; i++)
                n += a2av_count(p, i, r);
        }
        if (p->coll == NCL_COLL_REDUCE && r != p->root)
            continue;
        if (n == 0)
            continue;
        ncl_ref out = ncl_plan_output(p, r);
        const mem *m = mem_of(c, r, out.buf);
        if (out.buf >= NCL_BUF_COUNT || out.off % es || out.off / es + n > m->bytes / es)
            return ncl_ck_fail(c, NCL_ERR_INTERNAL, "schedule checker: rank %d output outside its buffer", r);
        uint64_t base = out.off / es;
        for (uint64_t e = 0; e < n;) {
            const seg *s = &m->segs.v[seg_find(&m->segs, base + e)];
            uint64_t end = min_u64(n, s->hi - base);
            uint64_t want_orig = e;
            uint64_t want[SET_WORDS];
            int full = 1, div = p->avg;
            char exp[64];
            switch (p->coll) {
            case NCL_COLL_BROADCAST:
                full = 0;
                div = 0;
                set_one(want, p->root);
                break;
            case NCL_COLL_REDUCE_SCATTER:
                want_orig = (uint64_t)r * cnt + e;
                break;
            case NCL_COLL_ALLTOALL:
                if (p->a2a_counts) { /* the block from rank i: its input's block for us */
                    int i = 0;
                    uint64_t lo = 0;
                    while (e >= lo + a2av_count(p, i, r))
                        lo += a2av_count(p, i++, r);
                    full = 0;
                    div = 0;
                    set_one(want, i);
                    want_orig = e - lo;
                    for (int k = 0; k < r; k++)
                        want_orig += a2av_count(p, i, k);
                    end = min_u64(end, lo + a2av_count(p, i, r));
                    break;
                }
                /* fall through */
            case NCL_COLL_ALLGATHER: /* block j from rank j: all of its input, or its block for us */
                full = 0;
                div = 0;
                set_one(want, (int)(e / cnt));
                want_orig = (p->coll == NCL_COLL_ALLTOALL ? (uint64_t)r * cnt : 0) + e % cnt;
                end = min_u64(end, (e / cnt + 1) * cnt);
                break;
            default:
                break;
            }
            if (full)
                memcpy(want, c->all, sizeof want);
            if (full)
                ncl_fmt(exp, sizeof exp, "all %d ranks", c->nranks);
            else
                ncl_fmt(exp, sizeof exp, "only rank %d", set_common(want, want));
            const char *bn = ncl_buf_name(out.buf);
            unsigned long long el = (unsigned long long)(base + e);
            if (!s->defined)
                return ncl_ck_fail(c, NCL_ERR_SCHEDULE, "rank %d %s element %llu: never written, expected %s", r, bn, el,
                            exp);
            if (s->wide)
                return ncl_ck_fail(c, NCL_ERR_SCHEDULE, "rank %d %s element %llu: holds half of an fp32 accumulator, not "
                            "the result (no LOCAL_NARROW)", r, bn, el);
            if (!set_eq(s->set, want)) {
                uint64_t miss[SET_WORDS], extra[SET_WORDS];
                int any_miss = 0, any_extra = 0;
                for (int w = 0; w < SET_WORDS; w++) {
                    miss[w] = want[w] & ~s->set[w];
                    extra[w] = s->set[w] & ~want[w];
                    any_miss |= miss[w] != 0;
                    any_extra |= extra[w] != 0;
                }
                char have[96], ms[96], xs[96], detail[200];
                ncl_ck_fmt_set(s->set, c->nranks, have, sizeof have);
                ncl_ck_fmt_set(miss, c->nranks, ms, sizeof ms);
                ncl_ck_fmt_set(extra, c->nranks, xs, sizeof xs);
                if (any_miss && any_extra)
                    ncl_fmt(detail, sizeof detail, "missing %s, extra %s", ms, xs);
                else if (any_miss)
                    ncl_fmt(detail, sizeof detail, "missing %s", ms);
                else
                    ncl_fmt(detail, sizeof detail, "extra %s", xs);
                return ncl_ck_fail(c, NCL_ERR_SCHEDULE, "rank %d %s element %llu: holds ranks {%s} (%s), expected %s", r,
                            bn, el, have, detail, exp);
            }
            uint64_t got_orig = s->orig + (base + e - s->lo);
            if (got_orig != want_orig)
                return ncl_ck_fail(c, NCL_ERR_SCHEDULE,
                            "rank %d %s element %llu: holds input element %llu, expected input element %llu", r, bn,
                            el, (unsigned long long)got_orig, (unsigned long long)want_orig);
            /* dividing by one rank is the identity: either way is right */
            if (s->divided != div && c->nranks > 1)
                return ncl_ck_fail(c, NCL_ERR_SCHEDULE,
                            div ? "rank %d %s element %llu: not divided by %d (avg needs one LOCAL_DIV)"
                                : "rank %d %s element %llu: divided by %d, but the result must not be",
                            r, bn, el, c->nranks);
            e = end;
        }
    }
    return NCL_SUCCESS;
}
