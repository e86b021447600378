/* ncl_exec.c — the executor: walks each queue's task stream and issues tasks through the HAL,
 * never blocking inside progress(); every wait is bounded by the communicator's timeout. */
#include "ncl_comm.h"

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
    if (rc == NCL_SUCCESS && end != NCL_SUCCESS)
        rc = ncl_comm_fail(comm, end, "%s #%llu: backend failed to end the collective: %s",
                           ncl_coll_name((ncl_coll)comm->plan.coll), (unsigned long long)comm->seq,
                           ncl_strerror(end));
    return rc;
}

static ncl_result task_failed(ncl_comm *comm, uint32_t q, ncl_result rc)
{
    const ncl_queue *qs = &comm->queues[q];
    const char *kind = ncl_task_kind_name(qs->task.kind);
    return ncl_comm_fail(comm, rc, "%s #%llu (%s): queue %u step %u task %u (%s, peer %d): %s",
                         ncl_coll_name((ncl_coll)comm->plan.coll), (unsigned long long)comm->seq,
                         ncl_algo_name((ncl_algo)comm->plan.algo), q, qs->task.step, qs->index - 1,
                         kind, qs->task.peer, ncl_strerror(rc));
}

static ncl_result timed_out(ncl_comm *comm, uint32_t q, uint64_t waited_ns)
{
    const ncl_queue *qs = &comm->queues[q];
    if (qs->state == NCL_Q_DMA)
        return ncl_comm_fail(comm, NCL_ERR_TIMEOUT,
                             "%s #%llu (%s) timed out: queue %u step %u: %s of %llu bytes to rank %d "
                             "did not complete in %llu ms",
                             ncl_coll_name((ncl_coll)comm->plan.coll), (unsigned long long)comm->seq,
                             ncl_algo_name((ncl_algo)comm->plan.algo), q, qs->task.step,
                             ncl_task_kind_name(qs->task.kind), (unsigned long long)qs->task.bytes,
                             qs->task.peer, (unsigned long long)(waited_ns / 1000000u));
    return ncl_comm_fail(comm, NCL_ERR_TIMEOUT,
                         "%s #%llu (%s) timed out: queue %u step %u waited %llu ms for notify %u "
                         "(x%u) from rank %d, which never recorded it",
                         ncl_coll_name((ncl_coll)comm->plan.coll), (unsigned long long)comm->seq,
                         ncl_algo_name((ncl_algo)comm->plan.algo), q, qs->task.step,
                         (unsigned long long)(waited_ns / 1000000u), qs->task.notify, qs->task.count,
                         qs->task.peer);
}

/* Advances one queue as far as it can go now. *moved is set when anything happened. */
static ncl_result step_queue(ncl_comm *comm, uint32_t q, int *moved)
{
    ncl_queue *qs = &comm->queues[q];
    const ncl_hal *hal = &comm->hal;
    for (;;) {
        ncl_result rc = NCL_SUCCESS;
        int done = 0;
        switch ((ncl_qstate)qs->state) {
        case NCL_Q_FETCH:
            if (!comm->next(&comm->plan, q, &qs->gen, &qs->task)) {
                qs->state = NCL_Q_DONE;
                *moved = 1;
                return NCL_SUCCESS;
            }
            qs->index++;
            qs->state = NCL_Q_READY;
            continue;
        case NCL_Q_READY:
            switch ((ncl_task_kind)qs->task.kind) {
            case NCL_TASK_NOTIFY_RECORD:
                rc = ncl_hal_notify_record(hal, q, qs->task.peer, qs->task.notify);
                done = 1;
                break;
            case NCL_TASK_NOTIFY_WAIT:
                qs->wait_start = ncl_hal_now_ns(hal);
                qs->state = NCL_Q_WAITING;
                continue;
            default:
                if (qs->task.bytes == 0) {
                    done = 1;
                    break;
                }
                rc = ncl_hal_dma_submit(hal, q, &qs->task);
                if (rc != NCL_SUCCESS)
                    return task_failed(comm, q, rc);
                qs->wait_start = ncl_hal_now_ns(hal);
                qs->state = NCL_Q_DMA;
                *moved = 1;
                continue;
            }
            break;
        case NCL_Q_DMA:
            rc = ncl_hal_dma_poll(hal, q, &done);
            if (rc == NCL_SUCCESS && !done) {
                uint64_t waited = ncl_hal_now_ns(hal) - qs->wait_start;
                if (waited > comm->cfg.timeout_ns)
                    return timed_out(comm, q, waited);
            }
            break;
        case NCL_Q_WAITING:
            rc = ncl_hal_notify_try_wait(hal, qs->task.peer, qs->task.notify, qs->task.count, &done);
            if (rc == NCL_SUCCESS && !done) {
                uint64_t waited = ncl_hal_now_ns(hal) - qs->wait_start;
                if (waited > comm->cfg.timeout_ns)
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
        uint64_t deadline = qs->wait_start + comm->cfg.timeout_ns + 1;
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
