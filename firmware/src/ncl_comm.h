/* ncl_comm.h — the communicator's internals, shared by the API layer and the executor. */
#ifndef NCL_COMM_H
#define NCL_COMM_H

#include "ncl/ncl_hal.h"

/* One queue's progress through its task stream. DMA: the stream's next task (or its end) waits
 * for data tasks in flight to complete. */
typedef enum ncl_qstate { NCL_Q_FETCH = 0, NCL_Q_READY, NCL_Q_DMA, NCL_Q_WAITING, NCL_Q_DONE } ncl_qstate;

/* A data task the HAL is moving. */
typedef struct ncl_flight {
    ncl_task task;
    uint32_t index;      /* its place in the queue's stream */
    uint32_t posts;      /* records that follow it in the stream, posted when it completes */
    uint64_t start;      /* when it was submitted */
} ncl_flight;

/* A posted record (NCL_TASK_POSTED) the stream reached while data tasks before it were in flight:
 * sent once they have completed, while the queue goes on. */
#define NCL_MAX_POSTED (3u * NCL_MAX_IN_FLIGHT) /* a DATA, a LOCAL and a CREDIT behind each flight */
typedef struct ncl_posted {
    int32_t peer;
    uint32_t notify;
    uint32_t step;
} ncl_posted;

typedef struct ncl_queue {
    ncl_gen gen;
    ncl_task task;        /* the stream's next task when state is READY, DMA or WAITING */
    uint8_t state;        /* ncl_qstate */
    uint8_t ended;        /* the stream has no more tasks (state DMA: waiting for the last flights) */
    uint32_t index;       /* tasks fetched so far (the current task is index - 1) */
    uint64_t wait_start;  /* when the current NOTIFY_WAIT started, or last saw its counter move */
    uint32_t wait_seen;   /* its counter then (notify_peek at deadlines), 0 at first */
    ncl_flight flight[NCL_MAX_IN_FLIGHT]; /* in flight, oldest at flight_head */
    uint32_t flight_head, flights;
    ncl_posted posted[NCL_MAX_POSTED]; /* records behind the flights, oldest at posted_head */
    uint32_t posted_head, posteds;
} ncl_queue;

/* What a queue is stuck on, for timeouts and hang reports: its oldest data task in flight while
 * it waits for completions (state DMA), else its current task. `behind_posted`: also where it
 * waits on a peer but still owes records posted behind its flights (it went on, those who wait
 * for the records did not): the oldest flight holds them; asked only where the flights were
 * just polled (a wait's timeout), so what is still in flight did not complete. */
static inline const ncl_task *ncl_queue_blocker(const ncl_queue *qs, int behind_posted, uint32_t *index,
                                                uint64_t *since)
{
    if (qs->flights &&
        (qs->state == NCL_Q_DMA || (behind_posted && qs->state == NCL_Q_WAITING && qs->posteds))) {
        const ncl_flight *f = &qs->flight[qs->flight_head];
        *index = f->index;
        *since = f->start;
        return &f->task;
    }
    *index = qs->index ? qs->index - 1 : 0;
    *since = qs->wait_start;
    return &qs->task;
}

struct ncl_comm {
    ncl_config cfg;
    ncl_hal hal;
    ncl_hal_caps caps;
    int nranks, rank;
    /* The planner's input (ncl_plan_env_init + ncl_plan_env_rings), built once at creation. Its
     * cost table and rings point at copies of the config's, which live right after this struct
     * (one allocation): the caller's arrays may go away. */
    ncl_plan_env env;
    uint32_t *ring_weights;    /* ring_count entries after this struct (NULL without rings) */
    uint32_t cost_room;        /* entries the cost table after this struct has room for */
    uint64_t seq;              /* sequence number of the last launched collective */
    uint32_t zone_uses[NCL_MAX_QUEUES]; /* launched collectives that used each channel's zones */
    /* the running collective */
    int active;
    int broken;                /* a collective failed mid-way: peers' state is unknown */
    ncl_result last_rc;        /* how the last launched collective ended (ncl_comm_state) */
    ncl_plan plan;
    int latency_path;          /* the running call's data tasks go NCL_TASK_LATENCY_PATH */
    ncl_gen_fn next;
    ncl_queue queues[NCL_MAX_QUEUES];
    /* the last plan the checker proved (rank excluded), so repeated launches are not rechecked */
    ncl_plan checked;
    int checked_valid;
    char err[384];
    /* sub-communicators (ncl_split.c) */
    uint32_t id;              /* the HAL's name for it: 0 when made by ncl_comm_create */
    uint32_t splits;          /* ncl_comm_split calls on it so far */
    int owns_hal;             /* its HAL came from the backend's split: released with it */
    char label[64];           /* what its errors start with ("split #1 color 3"); "" for none */
    struct ncl_comm **pairs;  /* ncl_send/ncl_recv's communicators, 2 x nranks, made at first use:
                                 [peer] sends to peer, [nranks + peer] receives from it */
    struct ncl_comm *owner;   /* a pair's: the communicator whose pair it is, which its failures
                                 explain too (ncl_comm_last_error of the one the user called) */
};

/** Records a formatted error detail on the communicator (ncl_comm_last_error) and logs it. */
ncl_result ncl_comm_fail(ncl_comm *comm, ncl_result result, const char *fmt, ...);

/** Starts executing comm->plan (already bound through hal begin). */
void ncl_exec_start(ncl_comm *comm);
/** Does all that is possible now. NCL_SUCCESS when finished, NCL_IN_PROGRESS, or an error
 *  (the collective is then over on this rank). */
ncl_result ncl_exec_progress(ncl_comm *comm);
/** Blocks (through hal wait_event) until the collective finishes or fails. */
ncl_result ncl_exec_wait(ncl_comm *comm);

#endif
