/* ncl_diag.c — hang forensics: a rank's open waits (ncl_comm_state) and the wait-for report across ranks. */
#include "ncl/ncl_diag.h"

#include "ncl_comm.h"
#include "ncl_fmt.h"

#include <stdarg.h>
#include <string.h>

ncl_result ncl_comm_state(const ncl_comm *comm, ncl_rank_state *out)
{
    if (!comm || !out)
        return NCL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    out->rank = comm->rank;
    out->seq = comm->seq;
    out->coll = comm->plan.coll;
    out->algo = comm->plan.algo;
    out->result = comm->last_rc;
    if (comm->seq == 0)
        out->phase = NCL_PHASE_IDLE;
    else if (comm->active)
        out->phase = NCL_PHASE_RUNNING;
    else
        out->phase = comm->last_rc == NCL_SUCCESS ? NCL_PHASE_DONE : NCL_PHASE_FAILED;
    if (out->phase != NCL_PHASE_RUNNING && out->phase != NCL_PHASE_FAILED)
        return NCL_SUCCESS;
    uint64_t now = ncl_hal_now_ns(&comm->hal);
    for (uint32_t q = 0; q < comm->plan.queues && q < NCL_MAX_QUEUES; q++) {
        const ncl_queue *qs = &comm->queues[q];
        if (qs->state != NCL_Q_WAITING && qs->state != NCL_Q_DMA)
            continue;
        ncl_wait_info *w = &out->waits[out->nwaits++];
        uint64_t since;
        /* after its own timeout the flights were polled at the deadline */
        const ncl_task *t = ncl_queue_blocker(qs, comm->last_rc == NCL_ERR_TIMEOUT, &w->task, &since);
        w->queue = q;
        w->step = t->step;
        w->kind = t->kind;
        w->peer = t->peer;
        w->notify = t->notify;
        w->count = t->count;
        w->waited_ns = now > since ? now - since : 0;
    }
    return NCL_SUCCESS;
}

/* The report grows in a caller's buffer; `len` counts what was written (truncation is silent:
 * the root cause comes first, so a short buffer keeps the part that matters). */
typedef struct out_buf {
    char *buf;
    size_t cap, len;
} out_buf;

static void put(out_buf *o, const char *fmt, ...)
{
    if (o->cap == 0 || o->len + 1 >= o->cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    o->len += ncl_vfmt(o->buf + o->len, o->cap - o->len, fmt, ap);
    va_end(ap);
}

/* "timeout" */
static void put_result(out_buf *o, int32_t rc)
{
    put(o, "%s", ncl_result_name((ncl_result)rc));
}

static const char *coll_of(const ncl_rank_state *s)
{
    return ncl_coll_name((ncl_coll)s->coll);
}

/* "allreduce #42" */
static void put_call(out_buf *o, const ncl_rank_state *s)
{
    put(o, "%s #%llu", coll_of(s), (unsigned long long)s->seq);
}

/* "rank 5 waits for rank 6 (allreduce #42, queue 0 step 9, notify 3 x1, 2000 ms)" */
static void put_edge(out_buf *o, const ncl_rank_state *s, const ncl_wait_info *w)
{
    if (w->kind == NCL_TASK_NOTIFY_WAIT)
        put(o, "rank %d waits for rank %d (", s->rank, w->peer);
    else
        put(o, "rank %d's %s towards rank %d does not complete (", s->rank, ncl_task_kind_name(w->kind), w->peer);
    put_call(o, s);
    put(o, ", queue %u step %u task %u", w->queue, w->step, w->task);
    if (w->kind == NCL_TASK_NOTIFY_WAIT)
        put(o, ", notify %u x%u", w->notify, w->count);
    put(o, ", %llu ms)", (unsigned long long)(w->waited_ns / 1000000u));
}

/* The edge a walk follows out of s: a transfer of its that does not complete (stuck between the
 * two ranks: the walk ends there), else its first wait on another rank (waits on itself are the
 * rank's queues ordering each other; they resolve once the wait on the peer does). */
static const ncl_wait_info *out_edge(const ncl_rank_state *s, int nranks)
{
    const ncl_wait_info *notify = NULL;
    for (uint32_t i = 0; i < s->nwaits; i++) {
        const ncl_wait_info *w = &s->waits[i];
        if (w->peer < 0 || w->peer >= nranks)
            continue;
        if (w->kind != NCL_TASK_NOTIFY_WAIT)
            return w;
        if (!notify && w->peer != s->rank)
            notify = w;
    }
    return notify;
}

/* Whether the walk stops at t when coming from s over an edge: t does not wait for anyone in
 * s's collective, so the edge s -> t is the first unsatisfied one. */
static int is_root(const ncl_rank_state *s, const ncl_rank_state *t, int nranks)
{
    if (t->seq != s->seq || t->coll != s->coll)
        return 1;
    if (t->phase != NCL_PHASE_RUNNING && t->phase != NCL_PHASE_FAILED)
        return 1;
    /* a rank that gave up waiting (timeout, or a peer that is gone) passes the question on */
    if (t->phase == NCL_PHASE_FAILED && t->result != NCL_ERR_TIMEOUT && t->result != NCL_ERR_REMOTE)
        return 1;
    return out_edge(t, nranks) == NULL;
}

/* "mismatch: rank 1 runs broadcast #2 while rank 0 runs allreduce #2 - ..." */
static void put_mismatch(out_buf *o, const ncl_rank_state *t, const ncl_rank_state *s)
{
    put(o, "mismatch: rank %d runs ", t->rank);
    put_call(o, t);
    put(o, " while rank %d runs ", s->rank);
    put_call(o, s);
    put(o, " - the ranks called different collectives");
}

/* Why t never answered s: the sentence after the edge. */
static void put_cause(out_buf *o, const ncl_rank_state *s, const ncl_rank_state *t, const ncl_wait_info *w)
{
    if (w->kind != NCL_TASK_NOTIFY_WAIT) {
        put(o, "the transfer is stuck on the way from rank %d to rank %d (a link on the route is down, or "
               "the destination does not accept it)", s->rank, t->rank);
        return;
    }
    if (t->phase == NCL_PHASE_IDLE || t->seq < s->seq) {
        put(o, "rank %d never started ", t->rank);
        put_call(o, s);
        if (t->phase == NCL_PHASE_IDLE) {
            put(o, " (it has not launched any collective)");
        } else {
            put(o, " (its last collective is ");
            put_call(o, t);
            put(o, ")");
        }
    } else if (t->seq == s->seq && t->coll != s->coll) {
        put_mismatch(o, t, s);
    } else if (t->seq > s->seq) {
        put(o, "rank %d has moved on to ", t->rank);
        put_call(o, t);
        put(o, ": it finished #%llu, but what rank %d waits for never arrived (lost on the link from rank %d, "
               "or a schedule bug)", (unsigned long long)s->seq, s->rank, t->rank);
    } else if (t->phase == NCL_PHASE_DONE) {
        put(o, "rank %d finished ", t->rank);
        put_call(o, t);
        if (w->kind == NCL_TASK_NOTIFY_WAIT)
            put(o, ", but its notify %u never reached rank %d (lost on the link from rank %d, or a schedule bug)",
                w->notify, s->rank, t->rank);
        else
            put(o, ", but rank %d's transfer to it never completed (the link from rank %d to rank %d)", s->rank,
                s->rank, t->rank);
    } else if (t->phase == NCL_PHASE_FAILED) {
        put(o, "rank %d failed ", t->rank);
        put_call(o, t);
        put(o, " first (");
        put_result(o, t->result);
        put(o, ") and stopped answering");
    } else {
        put(o, "rank %d is in ", t->rank);
        put_call(o, t);
        put(o, " but blocked on nobody: it is slow, or nothing drives its progress");
    }
}

static void put_root_cause(out_buf *o, const ncl_rank_state *st, int nranks)
{
    int start = -1;
    for (int r = 0; r < nranks && start < 0; r++)
        if ((st[r].phase == NCL_PHASE_RUNNING || st[r].phase == NCL_PHASE_FAILED) && out_edge(&st[r], nranks))
            start = r;
    if (start < 0) { /* nobody waits: a rank that refused or failed alone, say which */
        put(o, "hang: no rank waits for another rank");
        const ncl_rank_state *first = NULL, *failed = NULL;
        for (int r = 0; r < nranks; r++) {
            const ncl_rank_state *t = &st[r];
            if (t->phase == NCL_PHASE_IDLE)
                continue;
            if (!failed && t->phase == NCL_PHASE_FAILED)
                failed = t;
            if (!first) {
                first = t;
            } else if (t->seq == first->seq && t->coll != first->coll) {
                put(o, "; ");
                put_mismatch(o, t, first);
                put(o, "\n");
                return;
            }
        }
        if (failed) {
            put(o, "; rank %d failed ", failed->rank);
            put_call(o, failed);
            put(o, " (");
            put_result(o, failed->result);
            put(o, ") without waiting on another rank");
        }
        put(o, "\n");
        return;
    }
    /* Follow one edge per rank. A walk longer than nranks edges has entered a cycle (no
     * memory for a visited set in firmware): then list the cycle from the rank reached. */
    int cur = start;
    for (int hops = 0; hops <= nranks; hops++) {
        const ncl_wait_info *w = out_edge(&st[cur], nranks);
        const ncl_rank_state *t = &st[w->peer];
        if (w->kind != NCL_TASK_NOTIFY_WAIT || is_root(&st[cur], t, nranks)) {
            put(o, "hang: ");
            put_edge(o, &st[cur], w);
            put(o, "; ");
            put_cause(o, &st[cur], t, w);
            put(o, "\n");
            if (cur != start) {
                put(o, "wait chain: rank %d", start);
                int r = start, shown = 0;
                while (r != cur && shown < 32) {
                    r = out_edge(&st[r], nranks)->peer;
                    put(o, " -> %d", r);
                    shown++;
                }
                put(o, r == cur ? " -> %d\n" : " ... -> %d\n", w->peer);
            }
            return;
        }
        cur = w->peer;
    }
    put(o, "hang: the waits form a cycle (a deadlock: a schedule bug or records lost on the links): rank %d", cur);
    int r = out_edge(&st[cur], nranks)->peer, shown = 0;
    while (r != cur && shown < 32) {
        put(o, " -> %d", r);
        r = out_edge(&st[r], nranks)->peer;
        shown++;
    }
    put(o, " -> %d\n", cur);
}

size_t ncl_diag_report(const ncl_rank_state *states, int nranks, char *buf, size_t cap)
{
    out_buf o = {buf, cap, 0};
    if (cap)
        buf[0] = '\0';
    if (!states || nranks < 1)
        return 0;
    put_root_cause(&o, states, nranks);
    put(&o, "wait-for graph:\n");
    for (int r = 0; r < nranks; r++) {
        const ncl_rank_state *s = &states[r];
        put(&o, "  rank %d: ", r);
        if (s->phase == NCL_PHASE_IDLE) {
            put(&o, "no collective launched\n");
            continue;
        }
        put_call(&o, s);
        put(&o, " (%s) ", ncl_algo_name((ncl_algo)s->algo));
        if (s->phase == NCL_PHASE_RUNNING) {
            put(&o, "running");
        } else if (s->phase == NCL_PHASE_DONE) {
            put(&o, "done");
        } else {
            put(&o, "failed (");
            put_result(&o, s->result);
            put(&o, ")");
        }
        for (uint32_t i = 0; i < s->nwaits; i++) {
            put(&o, i ? "; " : ": ");
            const ncl_wait_info *w = &s->waits[i];
            if (w->kind == NCL_TASK_NOTIFY_WAIT)
                put(&o, "queue %u step %u waits for notify %u x%u from rank %d", w->queue, w->step, w->notify,
                    w->count, w->peer);
            else
                put(&o, "queue %u step %u %s to rank %d in flight", w->queue, w->step,
                    ncl_task_kind_name(w->kind), w->peer);
        }
        put(&o, "\n");
    }
    return o.len;
}
