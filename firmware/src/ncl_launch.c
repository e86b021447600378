/* ncl_launch.c — the first field where two ranks' launches of one call disagree, as a message. */
#include <ncl/ncl_hal.h>
#include <ncl/ncl_names.h>

#include "ncl_fmt.h"

int ncl_launch_mismatch(const ncl_hal_launch *mine, int my_rank, const ncl_hal_launch *theirs, int their_rank,
                        char *buf, size_t len)
{
    if (!mine || !theirs || mine->seq != theirs->seq)
        return 0;
    unsigned long long seq = (unsigned long long)mine->seq;
    const char *name = ncl_coll_name((ncl_coll)mine->coll);
    int rooted = mine->coll == NCL_COLL_BROADCAST || mine->coll == NCL_COLL_REDUCE;
#if !defined(NCL_NO_ALGO_MESH) || !defined(NCL_NO_ALGO_PAIRWISE) /* else no alltoall runs (ncl_api.c) */
    int a2a = mine->coll == NCL_COLL_ALLTOALL && theirs->coll == NCL_COLL_ALLTOALL;
#else
    const int a2a = 0;
#endif
    if (a2a && mine->op != theirs->op)
        ncl_fmt(buf, len, "rank %d called %s #%llu, rank %d %s #%llu: every rank must call the same collectives "
                "in the same order", their_rank, theirs->op == NCL_LAUNCH_A2AV ? "alltoallv" : "alltoall", seq,
                my_rank, mine->op == NCL_LAUNCH_A2AV ? "alltoallv" : "alltoall", seq);
    else if (a2a && mine->op == NCL_LAUNCH_A2AV && mine->count != theirs->count)
        ncl_fmt(buf, len, "rank %d called alltoallv #%llu with another count matrix than rank %d (digests %016llx, "
                "%016llx): every rank must pass the same", their_rank, seq, my_rank,
                (unsigned long long)theirs->count, (unsigned long long)mine->count);
    else if (mine->coll != theirs->coll)
        ncl_fmt(buf, len, "rank %d called %s #%llu, rank %d %s #%llu: every rank must call the same collectives "
                "in the same order", their_rank, ncl_coll_name((ncl_coll)theirs->coll), seq, my_rank, name, seq);
    else if (mine->count != theirs->count)
        ncl_fmt(buf, len, "rank %d called %s #%llu with count %llu, rank %d with count %llu", their_rank, name, seq,
                (unsigned long long)theirs->count, my_rank, (unsigned long long)mine->count);
    else if (mine->dtype != theirs->dtype)
        ncl_fmt(buf, len, "rank %d called %s #%llu with dtype %s, rank %d with %s", their_rank, name, seq,
                ncl_dtype_name((ncl_dtype)theirs->dtype), my_rank, ncl_dtype_name((ncl_dtype)mine->dtype));
    else if (mine->op != theirs->op)
        ncl_fmt(buf, len, "rank %d called %s #%llu with op %s, rank %d with %s", their_rank, name, seq,
                ncl_op_name((ncl_op)theirs->op), my_rank, ncl_op_name((ncl_op)mine->op));
    else if (mine->root != theirs->root)
        ncl_fmt(buf, len, "rank %d called %s #%llu with root %d, rank %d with root %d", their_rank, name, seq,
                (int)theirs->root, my_rank, (int)mine->root);
    else if (mine->inplace != theirs->inplace && !rooted) /* a root's placement is its own */
        ncl_fmt(buf, len, "rank %d called %s #%llu %s, rank %d %s: the ranks must agree on the placement", their_rank,
                name, seq, theirs->inplace ? "in place" : "out of place", my_rank,
                mine->inplace ? "in place" : "out of place");
    else if (mine->algo != theirs->algo)
        ncl_fmt(buf, len, "rank %d runs %s #%llu with the %s algorithm, rank %d with %s: their configurations "
                "differ (ncl_config.algorithm, cost table or rings)", their_rank, name, seq,
                ncl_algo_name((ncl_algo)theirs->algo), my_rank, ncl_algo_name((ncl_algo)mine->algo));
    else
        return 0;
    return 1;
}
