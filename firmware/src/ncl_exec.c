/* ncl_exec.c — the executor: walks each queue's task stream and issues tasks through the HAL,
 * never blocking inside progress(); every wait is bounded by the communicator's timeout. */
#include "ncl_comm.h"
#include "ncl_fmt.h"

#include "ncl_algo.h"

#include <string.h>

void ncl_exec_start(ncl_comm *comm)
{
    memset(comm->queues, 0, sizeof comm->queues);
    for (uint32_t q = comm->plan.queues; q < NCL_MAX_QUEUES; q++)
        comm->queues[q].state = NCL_Q_DONE;
    comm->active = 1;
}

/* Ends the collective on this rank with `rc` (the HAL unbinds the buffers). */
static ncl_result finish(ncl_comm *comm, ncl_result rc)
{
    ncl_result end = ncl_hal_end(&comm->hal, rc);
    comm->active = 0;
    comm->broken = rc != NCL_SUCCESS;
    comm->last_rc = rc;
    if (rc == NCL_SUCCESS && end != NCL_SUCCESS) {
        const char *why = ncl_hal_last_error(&comm->hal);
        rc = ncl_comm_fail(comm, end, "%s #%llu: backend failed to end the collective: %s%s%s",
                           ncl_coll_name((ncl_coll)comm->plan.coll), (unsigned long long)comm->seq,
                           ncl_strerror(end), *why ? ": " : "", why);
    }
    return rc;
}

static ncl_result task_failed(ncl_comm *comm, uint32_t q, ncl_result rc)
{
    uint32_t index;
    uint64_t since;
    const ncl_task *t = ncl_queue_blocker(&comm->queues[q], 0, &index, &since);
    const char *why = ncl_hal_last_error(&comm->hal);
    return ncl_comm_fail(comm, rc, "%s #%llu (%s): queue %u step %u task %u (%s, peer %d): %s%s%s",
                         ncl_coll_name((ncl_coll)comm->plan.coll), (unsigned long long)comm->seq,
                         ncl_algo_name((ncl_algo)comm->plan.algo), q, t->step, index,
                         ncl_task_kind_name(t->kind), t->peer, ncl_strerror(rc), *why ? ": " : "", why);
}

/* At a wait's deadline: whether records reached its counter since the wait started or the last
 * deadline (a long stream of records, not yet all of them: healthy). If so the wait goes on, its
 * timeout counted from now. Asked only at deadlines, so a wait that stops moving is named within
 * two timeouts, and the hot path pays nothing. */
static int counter_moved(ncl_comm *comm, ncl_queue *qs, uint64_t now)
{
    uint32_t v = 0;
    if (ncl_hal_notify_peek(&comm->hal, qs->task.peer, qs->task.notify, &v) != NCL_SUCCESS || v == qs->wait_seen)
        return 0;
    qs->wait_seen = v;
    qs->wait_start = now;
    return 1;
}

static ncl_result timed_out(ncl_comm *comm, uint32_t q, uint64_t waited_ns)
{
    const ncl_queue *qs = &comm->queues[q];
    uint32_t index;
    uint64_t since;
    const ncl_task *t = ncl_queue_blocker(qs, 1, &index, &since);
    if (qs->state == NCL_Q_WAITING && t != &qs->task) { /* a transfer a posted record waits behind */
        uint64_t now = ncl_hal_now_ns(&comm->hal);
        waited_ns = now > since ? now - since : 0;
    }
    if (t != &qs->task || qs->state == NCL_Q_DMA)
        return ncl_comm_fail(comm, NCL_ERR_TIMEOUT,
                             "%s #%llu (%s) timed out: queue %u step %u: %s of %llu bytes to rank %d "
                             "did not complete in %llu ms",
                             ncl_coll_name((ncl_coll)comm->plan.coll), (unsigned long long)comm->seq,
                             ncl_algo_name((ncl_algo)comm->plan.algo), q, t->step,
                             ncl_task_kind_name(t->kind), (unsigned long long)t->bytes, t->peer,
                             (unsigned long long)(waited_ns / 1000000u));
    uint32_t got = 0;
    const char *what = "which never recorded it";
    char counted[64];
    if (ncl_hal_notify_peek(&comm->hal, t->peer, t->notify, &got) != NCL_SUCCESS)
        what = "which did not record them all"; /* the backend cannot tell how many it did */
    else if (got) {
        ncl_fmt(counted, sizeof counted, "which recorded %u of them, then none", got);
        what = counted;
    }
    return ncl_comm_fail(comm, NCL_ERR_TIMEOUT,
                         "%s #%llu (%s) timed out: queue %u step %u waited %llu ms for notify %u "
                         "(x%u) from rank %d, %s",
                         ncl_coll_name((ncl_coll)comm->plan.coll), (unsigned long long)comm->seq,
                         ncl_algo_name((ncl_algo)comm->plan.algo), q, t->step,
                         (unsigned long long)(waited_ns / 1000000u), t->notify, t->count, t->peer, what);
}

/* The rank whose memory a data task writes (its dst). */
static int written_rank(const ncl_task *t, int self)
{
    return ncl_task_is_remote(t->kind) ? t->peer : self;
}

static int overlap(ncl_ref a, uint64_t alen, ncl_ref b, uint64_t blen)
{
    return a.buf == b.buf && alen && blen && a.off < b.off + blen && b.off < a.off + alen;
}

/* Whether task t reads [r, r + len) of its own rank (src, and src2 for the two-source kinds). */
static int reads(const ncl_task *t, ncl_ref r, uint64_t len)
{
    const uint64_t n = t->kind == NCL_TASK_LOCAL_DIV ? 0 : ncl_task_src_bytes(t);
    return overlap(t->src, n, r, len) || (ncl_task_two_source(t->kind) && overlap(t->src2, t->bytes, r, len));
}

/* Whether data task b must wait for a (before it on the same queue) to complete: b writes what a
 * reads or writes, or reads what a writes. Sources are always local. */
static int depends(const ncl_task *a, const ncl_task *b, int self)
{
    const int wa = written_rank(a, self), wb = written_rank(b, self);
    return (wa == wb && overlap(a->dst, ncl_task_dst_bytes(a), b->dst, ncl_task_dst_bytes(b))) ||
           (wb == self && reads(a, b->dst, ncl_task_dst_bytes(b))) ||
           (wa == self && reads(b, a->dst, ncl_task_dst_bytes(a)));
}

/* Whether the queue's next task must wait for its data tasks in flight: a record for all of them
 * (a notify says everything before it landed) unless it is posted behind them (NCL_TASK_POSTED,
 * while there is room), a data task for those it depends on and behind a full queue. A wait
 * needs nothing: what it guards comes from the peer. */
static int held(const ncl_comm *comm, const ncl_queue *qs)
{
    if (qs->flights == 0 || qs->task.kind == NCL_TASK_NOTIFY_WAIT)
        return 0;
    if (qs->task.kind == NCL_TASK_NOTIFY_RECORD)
        return !(qs->task.flags & NCL_TASK_POSTED) || qs->posteds >= NCL_MAX_POSTED;
    if (qs->flights >= comm->plan.in_flight)
        return 1;
    for (uint32_t k = 0; k < qs->flights; k++)
        if (depends(&qs->flight[(qs->flight_head + k) % NCL_MAX_IN_FLIGHT].task, &qs->task, comm->rank))
            return 1;
    return 0;
}

/* Drops the queue's data tasks the HAL reports complete (oldest first) and posts the records
 * that followed them. */
static ncl_result retire(ncl_comm *comm, uint32_t q, int *moved)
{
    ncl_queue *qs = &comm->queues[q];
    int done = 0;
    ncl_result rc = ncl_hal_dma_poll(&comm->hal, q, &done);
    if (rc == NCL_SUCCESS && (done < 0 || (uint32_t)done > qs->flights))
        rc = NCL_ERR_BACKEND;
    if (rc != NCL_SUCCESS) {
        qs->state = NCL_Q_DMA; /* name the oldest task in flight */
        return task_failed(comm, q, rc);
    }
    for (; done > 0; done--) {
        ncl_flight *f = &qs->flight[qs->flight_head];
        for (; f->posts; f->posts--) {
            const ncl_posted *r = &qs->posted[qs->posted_head];
            rc = ncl_hal_notify_record(&comm->hal, q, r->peer, r->notify);
            if (rc != NCL_SUCCESS)
                return ncl_comm_fail(comm, rc, "%s #%llu (%s): queue %u step %u: notify %u to rank %d: %s",
                                     ncl_coll_name((ncl_coll)comm->plan.coll), (unsigned long long)comm->seq,
                                     ncl_algo_name((ncl_algo)comm->plan.algo), q, r->step, r->notify, r->peer,
                                     ncl_strerror(rc));
            qs->posted_head = (qs->posted_head + 1) % NCL_MAX_POSTED;
            qs->posteds--;
        }
        qs->flight_head = (qs->flight_head + 1) % NCL_MAX_IN_FLIGHT;
        qs->flights--;
        *moved = 1;
    }
    return NCL_SUCCESS;
}

/* Advances one queue as far as it can go now. *moved is set when anything happened. Completions
 * are polled on entry and again only where the queue would stop for its flights (DMA): in between,
 * fetching and issuing take no time, and a poll per task was most of the executor's cost. */
static ncl_result step_queue(ncl_comm *comm, uint32_t q, int *moved)
{
    ncl_queue *qs = &comm->queues[q];
    const ncl_hal *hal = &comm->hal;
    for (int entry = 1;; entry = 0) {
        ncl_result rc = NCL_SUCCESS;
        int done = 0;
        if (qs->flights && (entry || qs->state == NCL_Q_DMA) && (rc = retire(comm, q, moved)) != NCL_SUCCESS)
            return rc;
        switch ((ncl_qstate)qs->state) {
        case NCL_Q_FETCH:
            if (!comm->next(&comm->plan, q, &qs->gen, &qs->task)) {
                qs->ended = 1;
                qs->state = NCL_Q_DMA;
                *moved = 1;
                continue;
            }
            qs->index++;
            qs->state = NCL_Q_READY;
            continue;
        case NCL_Q_READY:
            if (held(comm, qs)) {
                qs->state = NCL_Q_DMA;
                continue;
            }
            switch ((ncl_task_kind)qs->task.kind) {
            case NCL_TASK_NOTIFY_RECORD:
                if (qs->flights) { /* posted behind the newest flight */
                    ncl_posted *r = &qs->posted[(qs->posted_head + qs->posteds++) % NCL_MAX_POSTED];
                    r->peer = qs->task.peer;
                    r->notify = qs->task.notify;
                    r->step = qs->task.step;
                    qs->flight[(qs->flight_head + qs->flights - 1) % NCL_MAX_IN_FLIGHT].posts++;
                } else {
                    rc = ncl_hal_notify_record(hal, q, qs->task.peer, qs->task.notify);
                }
                done = 1;
                break;
            case NCL_TASK_NOTIFY_WAIT:
                qs->wait_start = ncl_hal_now_ns(hal);
                qs->wait_seen = 0;
                qs->state = NCL_Q_WAITING;
                continue;
            default:
                if (qs->task.bytes == 0) {
                    done = 1;
                    break;
                }
                if (comm->latency_path)
                    qs->task.flags |= NCL_TASK_LATENCY_PATH;
                rc = ncl_hal_dma_submit(hal, q, &qs->task);
                if (rc != NCL_SUCCESS)
                    return task_failed(comm, q, rc);
                ncl_flight *f = &qs->flight[(qs->flight_head + qs->flights++) % NCL_MAX_IN_FLIGHT];
                f->task = qs->task;
                f->index = qs->index - 1;
                f->posts = 0;
                f->start = ncl_hal_now_ns(hal);
                done = 1;
                break;
            }
            break;
        case NCL_Q_DMA:
            if (qs->ended ? qs->flights == 0 : !held(comm, qs)) {
                qs->state = qs->ended ? NCL_Q_DONE : NCL_Q_READY;
                *moved = 1;
                continue;
            }
            uint64_t waited = ncl_hal_now_ns(hal) - qs->flight[qs->flight_head].start;
            if (waited > comm->cfg.timeout_ns)
                return timed_out(comm, q, waited);
            return NCL_SUCCESS;
        case NCL_Q_WAITING:
            rc = ncl_hal_notify_try_wait(hal, qs->task.peer, qs->task.notify, qs->task.count, &done);
            if (rc == NCL_SUCCESS && !done) {
                uint64_t now = ncl_hal_now_ns(hal), waited = now - qs->wait_start;
                if (waited > comm->cfg.timeout_ns && !counter_moved(comm, qs, now))
                    return timed_out(comm, q, waited);
            }
            break;
        case NCL_Q_DONE:
            return NCL_SUCCESS;
        }
        if (rc != NCL_SUCCESS)
            return task_failed(comm, q, rc);
        if (!done)
            return NCL_SUCCESS;
        qs->state = NCL_Q_FETCH;
        *moved = 1;
    }
}

ncl_result ncl_exec_progress(ncl_comm *comm)
{
    if (!comm->active)
        return NCL_SUCCESS;
    int moved;
    do {
        moved = 0;
        int pending = 0;
        for (uint32_t q = 0; q < comm->plan.queues; q++) {
            ncl_result rc = step_queue(comm, q, &moved);
            if (rc != NCL_SUCCESS)
                return finish(comm, rc);
            pending |= comm->queues[q].state != NCL_Q_DONE;
        }
        if (!pending)
            return finish(comm, NCL_SUCCESS);
    } while (moved);
    return NCL_IN_PROGRESS;
}

/* The longest the executor may sleep: until the earliest waiting queue would time out. */
static uint64_t sleep_budget(const ncl_comm *comm)
{
    uint64_t now = ncl_hal_now_ns(&comm->hal), budget = comm->cfg.timeout_ns;
    for (uint32_t q = 0; q < comm->plan.queues; q++) {
        const ncl_queue *qs = &comm->queues[q];
        if (qs->state != NCL_Q_WAITING && qs->state != NCL_Q_DMA)
            continue;
        uint32_t index;
        uint64_t since;
        ncl_queue_blocker(qs, 0, &index, &since);
        uint64_t deadline = since + comm->cfg.timeout_ns + 1;
        uint64_t left = deadline > now ? deadline - now : 0;
        if (left < budget)
            budget = left;
    }
    return budget;
}

ncl_result ncl_exec_wait(ncl_comm *comm)
{
    for (;;) {
        ncl_result rc = ncl_exec_progress(comm);
        if (rc != NCL_IN_PROGRESS)
            return rc;
        rc = ncl_hal_wait_event(&comm->hal, sleep_budget(comm));
        if (rc != NCL_SUCCESS)
            return finish(comm, ncl_comm_fail(comm, rc, "%s #%llu: waiting for an event failed: %s",
                                              ncl_coll_name((ncl_coll)comm->plan.coll),
                                              (unsigned long long)comm->seq, ncl_strerror(rc)));
    }
}
