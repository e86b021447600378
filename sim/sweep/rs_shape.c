/* rs_shape.c — one row of a sweep on one rank: counts, placement, input, poison, expected result, call, check. */
#include "rs_shape.h"

#include <string.h>

#include "ncl/ncl_dtype.h"
#include "rs_data.h"

int rs_shape_reduces(ncl_coll c)
{
    return c == NCL_COLL_ALLREDUCE || c == NCL_COLL_REDUCE || c == NCL_COLL_REDUCE_SCATTER;
}

int rs_shape_rooted(ncl_coll c) { return c == NCL_COLL_BROADCAST || c == NCL_COLL_REDUCE; }

int rs_shape_per_rank(ncl_coll c)
{
    return c == NCL_COLL_REDUCE_SCATTER || c == NCL_COLL_ALLGATHER || c == NCL_COLL_ALLTOALL;
}

int rs_shape_make(rs_shape *s, ncl_coll coll, int nranks, ncl_dtype dt, ncl_op op, int root, uint64_t bytes)
{
    uint64_t p = (uint64_t)nranks;
    memset(s, 0, sizeof *s);
    s->coll = coll;
    s->dt = dt;
    s->op = rs_shape_reduces(coll) ? op : NCL_MAX;
    s->root = rs_shape_rooted(coll) ? root : 0;
    s->nranks = nranks;
    s->es = ncl_dtype_size(dt);
    uint64_t elems = s->es ? bytes / s->es : 0;
    switch (coll) {
    case NCL_COLL_REDUCE_SCATTER:
        s->count = elems / p;
        s->send_elems = s->result_elems = s->count * p;
        s->recv_elems = s->count;
        break;
    case NCL_COLL_ALLGATHER:
        s->count = elems / p;
        s->send_elems = s->count;
        s->recv_elems = s->result_elems = s->count * p;
        break;
    case NCL_COLL_ALLTOALL: /* the size is a rank's whole buffer; the result every rank's */
        s->count = elems / p;
        s->send_elems = s->recv_elems = s->count * p;
        s->result_elems = s->recv_elems * p;
        break;
    default:
        s->count = s->send_elems = s->recv_elems = s->result_elems = elems;
        break;
    }
    s->size = (coll == NCL_COLL_ALLTOALL ? s->recv_elems : s->result_elems) * s->es;
    return s->count > 0;
}

uint64_t rs_shape_a_bytes(const rs_shape *s)
{
    uint64_t n = s->send_elems > s->recv_elems ? s->send_elems : s->recv_elems;
    return n * s->es;
}

uint64_t rs_shape_b_bytes(const rs_shape *s) { return s->recv_elems * s->es; }

void rs_shape_place(const rs_shape *s, int rank, unsigned char *a, unsigned char *b, int inplace,
                    const void **send, void **recv)
{
    uint64_t off = (uint64_t)rank * s->count * s->es;
    if (!inplace) {
        *send = a;
        *recv = b;
    } else if (s->coll == NCL_COLL_REDUCE_SCATTER) {
        *send = a; /* the whole input; the result lands on this rank's block of it */
        *recv = a + off;
    } else if (s->coll == NCL_COLL_ALLGATHER) {
        *send = a + off;
        *recv = a;
    } else {
        *send = *recv = a;
    }
}

uint64_t rs_shape_input_elems(const rs_shape *s, int rank)
{
    return s->coll == NCL_COLL_BROADCAST && rank != s->root ? 0 : s->send_elems;
}

void rs_shape_input(const rs_shape *s, int rank, uint64_t seed, void *send)
{
    rs_data_fill(send, rs_shape_input_elems(s, rank), s->dt, s->op, s->nranks, rank, seed, 0);
}

void rs_shape_poison(const rs_shape *s, int rank, const void *send, void *recv)
{
    const unsigned char *in = send, *in_end = in + rs_shape_input_elems(s, rank) * s->es;
    unsigned char *out = recv, *out_end = out + s->recv_elems * s->es;
    if (in_end == in || in_end <= out || in >= out_end) { /* disjoint: all of it */
        memset(out, RS_SHAPE_POISON, (size_t)(out_end - out));
        return;
    }
    if (out < in)
        memset(out, RS_SHAPE_POISON, (size_t)(in - out));
    if (out_end > in_end)
        memset((void *)in_end, RS_SHAPE_POISON, (size_t)(out_end - in_end));
}

void rs_shape_prepare(const rs_shape *s, int rank, uint64_t seed, const void *send, void *recv)
{
    rs_shape_input(s, rank, seed, (void *)send);
    rs_shape_poison(s, rank, send, recv);
}

/* Of allgather's and alltoall's result, the run of elements from `lo` (before hi) that one rank's
 * input gives: *from that rank, *at the run's first element in its input. Returns its length.
 * Block k of the result is rank k's input (alltoall: of rank r's result, rank k's block r). */
static uint64_t rs_shape_block_run(const rs_shape *s, uint64_t lo, uint64_t hi, int *from, uint64_t *at)
{
    uint64_t k = lo / s->count, in_block = lo - k * s->count, p = (uint64_t)s->nranks;
    *from = (int)(s->coll == NCL_COLL_ALLTOALL ? k % p : k);
    *at = (s->coll == NCL_COLL_ALLTOALL ? k / p * s->count : 0) + in_block;
    return s->count - in_block < hi - lo ? s->count - in_block : hi - lo;
}

void rs_shape_expected(const rs_shape *s, uint64_t seed, uint64_t lo, uint64_t hi, void *out)
{
    unsigned char *o = out;
    if (s->coll == NCL_COLL_BROADCAST) {
        rs_data_fill(o, hi - lo, s->dt, NCL_MAX, s->nranks, s->root, seed, lo);
    } else if (s->coll == NCL_COLL_ALLGATHER || s->coll == NCL_COLL_ALLTOALL) {
        while (lo < hi) {
            int from;
            uint64_t at, n = rs_shape_block_run(s, lo, hi, &from, &at);
            rs_data_fill(o, n, s->dt, NCL_MAX, s->nranks, from, seed, at);
            o += n * s->es;
            lo += n;
        }
    } else {
        rs_data_expected(o, hi - lo, s->dt, s->op, s->nranks, seed, lo, 1);
    }
}

void rs_shape_expected_from(const rs_shape *s, const void *const *inputs, uint64_t lo, uint64_t hi, void *out)
{
    unsigned char *o = out;
    uint64_t es = s->es;
#define RS_IN(r, at) ((const unsigned char *)inputs[r] + (at) * es)
    if (s->coll == NCL_COLL_BROADCAST) {
        memcpy(o, RS_IN(s->root, lo), (hi - lo) * es);
    } else if (s->coll == NCL_COLL_ALLGATHER || s->coll == NCL_COLL_ALLTOALL) {
        while (lo < hi) {
            int from;
            uint64_t at, n = rs_shape_block_run(s, lo, hi, &from, &at);
            memcpy(o, RS_IN(from, at), n * es);
            o += n * es;
            lo += n;
        }
    } else {
        /* rank 0, then op with ranks 1..p-1 in order: rs_data_expected's (and the engine's) arithmetic */
        memcpy(o, RS_IN(0, lo), (hi - lo) * es);
        for (int r = 1; r < s->nranks; r++)
            ncl_reduce_kernel(o, RS_IN(r, lo), hi - lo, s->dt, s->op);
        if (s->op == NCL_AVG)
            ncl_div_kernel(o, hi - lo, s->dt, (uint32_t)s->nranks);
    }
#undef RS_IN
}

void rs_shape_checked(const rs_shape *s, int rank, uint64_t *lo, uint64_t *hi)
{
    *lo = 0;
    *hi = s->recv_elems;
    if (s->coll == NCL_COLL_REDUCE_SCATTER || s->coll == NCL_COLL_ALLTOALL) {
        *lo = (uint64_t)rank * s->recv_elems;
        *hi = *lo + s->recv_elems;
    } else if (s->coll == NCL_COLL_REDUCE && rank != s->root) {
        *hi = 0;
    }
}

uint64_t rs_shape_count_wrong(const rs_shape *s, int rank, const void *recv, const void *expected)
{
    uint64_t lo, hi;
    rs_shape_checked(s, rank, &lo, &hi);
    return rs_data_count_wrong(recv, (const unsigned char *)expected + lo * s->es, hi - lo, s->dt, s->op);
}

ncl_result rs_shape_call(const rs_shape *s, const void *send, void *recv, ncl_comm *comm)
{
    switch (s->coll) {
    case NCL_COLL_ALLREDUCE: return ncl_allreduce(send, recv, s->count, s->dt, s->op, comm);
    case NCL_COLL_BROADCAST: return ncl_broadcast(send, recv, s->count, s->dt, s->root, comm);
    case NCL_COLL_REDUCE: return ncl_reduce(send, recv, s->count, s->dt, s->op, s->root, comm);
    case NCL_COLL_REDUCE_SCATTER: return ncl_reduce_scatter(send, recv, s->count, s->dt, s->op, comm);
    case NCL_COLL_ALLGATHER: return ncl_allgather(send, recv, s->count, s->dt, comm);
    case NCL_COLL_ALLTOALL: return ncl_alltoall(send, recv, s->count, s->dt, comm);
    default: return NCL_ERR_INVALID_ARGUMENT;
    }
}

ncl_result rs_shape_start(const rs_shape *s, const void *send, void *recv, ncl_comm *comm)
{
    switch (s->coll) {
    case NCL_COLL_ALLREDUCE: return ncl_allreduce_start(send, recv, s->count, s->dt, s->op, comm);
    case NCL_COLL_BROADCAST: return ncl_broadcast_start(send, recv, s->count, s->dt, s->root, comm);
    case NCL_COLL_REDUCE: return ncl_reduce_start(send, recv, s->count, s->dt, s->op, s->root, comm);
    case NCL_COLL_REDUCE_SCATTER: return ncl_reduce_scatter_start(send, recv, s->count, s->dt, s->op, comm);
    case NCL_COLL_ALLGATHER: return ncl_allgather_start(send, recv, s->count, s->dt, comm);
    case NCL_COLL_ALLTOALL: return ncl_alltoall_start(send, recv, s->count, s->dt, comm);
    default: return NCL_ERR_INVALID_ARGUMENT;
    }
}
