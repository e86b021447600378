/* ncl_plan.c — the algorithm registry, algorithm choice by cost model, and plan construction. */
#include "ncl_algo.h"

#include <string.h>

static const ncl_algo_desc *const algo_table[] = {
    &ncl_algo_ring_allreduce, &ncl_algo_ring_reduce_scatter, &ncl_algo_ring_allgather,
    &ncl_algo_chain_broadcast, &ncl_algo_tree_broadcast,    &ncl_algo_ring_reduce,
    &ncl_algo_tree_reduce,
};

const ncl_algo_desc *ncl_algo_find(ncl_coll coll, ncl_algo algo)
{
    for (size_t i = 0; i < sizeof algo_table / sizeof algo_table[0]; i++)
        if (algo_table[i]->coll == coll && algo_table[i]->algo == algo)
            return algo_table[i];
    return NULL;
}

int ncl_algo_supported(ncl_coll coll, ncl_algo algo)
{
    if ((unsigned)coll >= NCL_COLL_COUNT)
        return 0;
    return algo == NCL_ALGO_AUTO || ncl_algo_find(coll, algo) != NULL;
}

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

/* Alpha-beta estimates in ns (REFERENCE.md), used to choose between a latency-bound tree and a
 * bandwidth-bound pipeline. Integer math: bytes / GB/s = ns. */
static uint64_t ceil_log2(uint64_t p)
{
    uint64_t lg = 0;
    while ((1ull << lg) < p)
        lg++;
    return lg;
}

static uint64_t cost_tree(const ncl_plan *p, uint64_t bytes)
{
    return ceil_log2((uint64_t)p->nranks) * (p->link_alpha_ns + bytes / p->link_gbps);
}

/* Pipelined chain of p ranks (broadcast from its head, or reduce to its tail), k segments:
 * (p - 2 + k)(alpha + n beta / k). */
static uint64_t cost_chain(const ncl_plan *p, uint64_t bytes, uint32_t k)
{
    uint64_t hops = (uint64_t)(p->nranks > 2 ? p->nranks - 2 : 0) + k;
    return hops * (p->link_alpha_ns + bytes / p->link_gbps / k);
}

static ncl_algo choose_auto(ncl_plan *plan)
{
    uint64_t bytes = plan->count * plan->esize;
    switch (plan->coll) {
    case NCL_COLL_BROADCAST:
    case NCL_COLL_REDUCE: {
        ncl_algo pipe = plan->coll == NCL_COLL_BROADCAST ? NCL_ALGO_CHAIN : NCL_ALGO_RING;
        ncl_plan probe = *plan;
        probe.algo = (uint8_t)pipe;
        if (ncl_algo_find((ncl_coll)plan->coll, pipe)->prepare(&probe) != NCL_SUCCESS)
            return NCL_ALGO_TREE;
        return cost_chain(plan, bytes, probe.segments ? probe.segments : 1) <
                       cost_tree(plan, bytes)
                   ? pipe
                   : NCL_ALGO_TREE;
    }
    default:
        return NCL_ALGO_RING;
    }
}

ncl_result ncl_plan_make(ncl_plan *plan, ncl_coll coll, ncl_algo algo, int nranks, int rank,
                         int root, uint64_t count, ncl_dtype dtype, ncl_op op, int inplace,
                         uint64_t slice_bytes, uint32_t channels, uint32_t max_queues,
                         uint64_t scratch_bytes, uint32_t link_alpha_ns, uint32_t link_gbps)
{
    memset(plan, 0, sizeof *plan);
    if ((unsigned)coll >= NCL_COLL_COUNT || (unsigned)algo >= NCL_ALGO_COUNT ||
        (unsigned)dtype >= NCL_DTYPE_COUNT || (unsigned)op >= NCL_OP_COUNT || nranks < 1 ||
        rank < 0 || rank >= nranks || channels < 1 || channels > max_queues ||
        max_queues > NCL_MAX_QUEUES)
        return NCL_ERR_INVALID_ARGUMENT;
    plan->coll = (uint8_t)coll;
    plan->dtype = (uint8_t)dtype;
    plan->avg = op == NCL_AVG;
    plan->op = (uint8_t)(op == NCL_AVG ? NCL_SUM : op);
    plan->inplace = inplace ? 1 : 0;
    plan->nranks = nranks;
    plan->rank = rank;
    plan->root = root;
    plan->count = count;
    plan->esize = (uint32_t)ncl_dtype_size(dtype);
    plan->slice_elems = slice_bytes / plan->esize ? slice_bytes / plan->esize : 1;
    plan->queues = channels; /* an upper bound; prepare() settles the real number */
    plan->max_queues = max_queues;
    plan->scratch_bytes = scratch_bytes;
    plan->link_alpha_ns = link_alpha_ns ? link_alpha_ns : 1;
    plan->link_gbps = link_gbps ? link_gbps : 1;
    if (algo == NCL_ALGO_AUTO)
        algo = choose_auto(plan);
    const ncl_algo_desc *d = ncl_algo_find(coll, algo);
    if (!d)
        return NCL_ERR_UNSUPPORTED;
    plan->algo = (uint8_t)algo;
    return d->prepare(plan);
}
