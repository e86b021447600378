/* ncl_check.h — the schedule checker: proves a schedule deadlock-free, race-free and correct. */
#ifndef NCL_CHECK_H
#define NCL_CHECK_H

#include "ncl_sched.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Task streams to check. `next` produces the tasks of (rank, queue) one at a time, like an
 *  algorithm's generator; `gen` starts zeroed for every stream. */
typedef struct ncl_check_source {
    int (*next)(void *ud, int rank, uint32_t queue, ncl_gen *gen, ncl_task *out);
    void *ud;
    uint32_t queues; /**< queues per rank */
} ncl_check_source;

/** Largest rank count the checker accepts (its vector clocks grow with ranks x queues). */
#define NCL_CHECK_MAX_RANKS 256

/**
 * Checks the schedule `src` against the collective `plan` describes (coll, nranks, root,
 * count, esize, dtype, op, avg, inplace, scratch_bytes; plan->rank is ignored). With
 * src == NULL the plan's own algorithm is checked. Rejects, with the first violated rule in
 * `msg`:
 *  - a malformed task (unknown kind, bad peer, notify id, dtype/op, misaligned or out of
 *    bounds region, a write into the send buffer);
 *  - a wait whose record never comes, a cycle of ranks waiting on each other, and records
 *    nobody consumes;
 *  - two accesses to one region, at least one a write, not ordered by notifies (a region
 *    written while a peer may still read or write it);
 *  - a final state that is not the collective's result (symbolic execution: every output
 *    element must hold exactly the right contributions, once each, divided once for avg),
 *    and reads of memory nobody wrote.
 * Returns NCL_SUCCESS, NCL_ERR_SCHEDULE, NCL_ERR_OUT_OF_MEMORY or NCL_ERR_INVALID_ARGUMENT.
 * Memory comes from alloc/free only.
 */
ncl_result ncl_check(const ncl_plan *plan, const ncl_check_source *src, ncl_alloc_fn alloc,
                     ncl_free_fn free_fn, void *alloc_ud, char *msg, size_t msg_len);

#ifdef __cplusplus
}
#endif
#endif
