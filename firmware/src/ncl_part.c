/* ncl_part.c — where a rank's data lives: a collective's input and output regions. */
#include "ncl_algo.h"

/* Apart from the planner (ncl_plan.c), which knows every algorithm: the algorithms and the checker
 * ask where data lives, and must not depend on the registry that depends on them. */

ncl_ref ncl_plan_input(const ncl_plan *plan, int rank)
{
    if (!plan->inplace)
        return ncl_ref_make(NCL_BUF_SEND, 0);
    if (plan->coll == NCL_COLL_ALLGATHER)
        return ncl_ref_make(NCL_BUF_RECV, (uint64_t)rank * plan->count * plan->esize);
    return ncl_ref_make(NCL_BUF_RECV, 0);
}

ncl_ref ncl_plan_output(const ncl_plan *plan, int rank)
{
    if (plan->inplace && plan->coll == NCL_COLL_REDUCE_SCATTER)
        return ncl_ref_make(NCL_BUF_RECV, (uint64_t)rank * plan->count * plan->esize);
    return ncl_ref_make(NCL_BUF_RECV, 0);
}
