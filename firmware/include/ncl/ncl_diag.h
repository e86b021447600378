/* ncl_diag.h — hang forensics: each rank's open waits, and the wait-for graph across ranks. */
#ifndef NCL_DIAG_H
#define NCL_DIAG_H

#include <stddef.h>

#include "ncl.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * When a collective times out, the rank that gave up knows only whom it waited for. The question
 * people bringing up boards ask is different: who is everyone waiting for, and why did that one
 * never answer? Each rank reports its state (ncl_comm_state: which collective it is in, and the
 * task each of its queues is stuck on); whoever can see all ranks (the host runner, the
 * simulator, the zmq controller) joins them with ncl_diag_report into the wait-for graph and
 * names its first unsatisfied edge: "rank 5 waits for rank 6 (allreduce #42, step 9, notify 3);
 * rank 6 never started allreduce #42 (its last collective is #41)". Both are plain data and pure
 * functions, so every backend ships states the same way and the report reads the same.
 */

/** Where a rank is with its last collective. */
typedef enum ncl_rank_phase {
    NCL_PHASE_IDLE = 0, /**< no collective launched yet */
    NCL_PHASE_RUNNING,  /**< launched, not finished */
    NCL_PHASE_DONE,     /**< finished successfully */
    NCL_PHASE_FAILED    /**< finished with an error (`result`) */
} ncl_rank_phase;

/** A queue that is blocked: on a notify from `peer`, or on a data task towards it. */
typedef struct ncl_wait_info {
    uint32_t queue, step; /**< the queue, and the algorithm step of its task */
    uint32_t task;        /**< index of the task in the queue's stream */
    uint8_t kind;         /**< NCL_TASK_NOTIFY_WAIT, or the data task whose DMA did not complete */
    int32_t peer;         /**< the rank expected to record (or the data task's destination) */
    uint32_t notify;      /**< NOTIFY_WAIT: notify id */
    uint32_t count;       /**< NOTIFY_WAIT: records expected */
    uint64_t waited_ns;   /**< how long it had waited when the state was taken */
} ncl_wait_info;

/** One rank's state, as ncl_comm_state reports it. */
typedef struct ncl_rank_state {
    int32_t rank;
    uint64_t seq;         /**< the last collective launched (0: none) */
    uint8_t coll, algo;   /**< its collective and algorithm */
    uint8_t phase;        /**< ncl_rank_phase */
    int32_t result;       /**< NCL_PHASE_FAILED: the ncl_result it failed with */
    uint32_t nwaits;      /**< blocked queues, in waits[0..nwaits) */
    ncl_wait_info waits[NCL_MAX_QUEUES];
} ncl_rank_state;

/** This rank's state now (also after its collective failed: the waits it gave up on stay). */
ncl_result ncl_comm_state(const ncl_comm *comm, ncl_rank_state *out);

/**
 * Writes the wait-for report for states[0..nranks) (indexed by rank) into buf (NUL-terminated,
 * truncated to cap): the root cause line first ("hang: ..."), then one line per rank with its
 * collective and open waits. Returns the length written (a short buffer keeps the root cause,
 * which comes first). The root
 * cause is the first unsatisfied edge found by following waits from the lowest waiting rank: the
 * rank at its end never started that collective, runs a different one (a mismatch), failed on
 * its own, finished without the record arriving (lost on the link), or the waits form a cycle.
 */
size_t ncl_diag_report(const ncl_rank_state *states, int nranks, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
