/* ncl_comm.h — the communicator's internals, shared by the API layer and the executor. */
#ifndef NCL_COMM_H
#define NCL_COMM_H

#include "ncl/ncl_hal.h"

/* One queue's progress through its task stream. */
typedef enum ncl_qstate { NCL_Q_FETCH = 0, NCL_Q_READY, NCL_Q_DMA, NCL_Q_WAITING, NCL_Q_DONE } ncl_qstate;

typedef struct ncl_queue {
    ncl_gen gen;
    ncl_task task;        /* current task when state is READY, DMA or WAITING */
    uint8_t state;        /* ncl_qstate */
    uint32_t index;       /* tasks fetched so far (the current task is index - 1) */
    uint64_t wait_start;  /* when the current NOTIFY_WAIT started, or the current DMA was issued */
} ncl_queue;

struct ncl_comm {
    ncl_config cfg;
    ncl_hal hal;
    ncl_hal_caps caps;
    int nranks, rank;
    /* The planner's input (ncl_plan_env_init + ncl_plan_env_rings), built once at creation. Its
     * cost table and rings point at copies of the config's, which live right after this struct
     * (one allocation): the caller's arrays may go away. */
    ncl_plan_env env;
    uint64_t seq;              /* sequence number of the last launched collective */
    /* the running collective */
    int active;
    int broken;                /* a collective failed mid-way: peers' state is unknown */
    ncl_result last_rc;        /* how the last launched collective ended (ncl_comm_state) */
    ncl_plan plan;
    ncl_gen_fn next;
    ncl_queue queues[NCL_MAX_QUEUES];
    /* the last plan the checker proved (rank excluded), so repeated launches are not rechecked */
    ncl_plan checked;
    int checked_valid;
    char err[384];
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
