/* rs_shape.c — one row of a sweep on one rank: counts, placement, input, poison, expected result, call, check. */
#include "rs_shape.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ncl/ncl_dtype.h"
#include "rs_data.h"

int rs_shape_reduces(int c) { return c == NCL_COLL_ALLREDUCE || c == NCL_COLL_REDUCE || c == NCL_COLL_REDUCE_SCATTER; }

int rs_shape_rooted(int c) { return c == NCL_COLL_BROADCAST || c == NCL_COLL_REDUCE; }

int rs_shape_per_rank(int c)
{
    return c == NCL_COLL_REDUCE_SCATTER || c == NCL_COLL_ALLGATHER || c == NCL_COLL_ALLTOALL || c == RS_COLL_ALLTOALLV;
}

int rs_shape_make(rs_shape *s, rs_coll rc, int nranks, ncl_dtype dt, ncl_op op, int root, double skew,
                  uint64_t bytes)
{
    if (rc == RS_COLL_ALLTOALLV)
        return rs_shape_make_a2av(s, nranks, dt, skew, bytes);
    const ncl_coll coll = rs_coll_engine(rc);
    uint64_t p = (uint64_t)nranks;
    memset(s, 0, sizeof *s);
    s->coll = coll;
    s->dt = dt;
    s->op = rs_shape_reduces(rc) ? op : NCL_MAX;
    s->root = rs_shape_rooted(rc) ? root : 0;
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
    if (rc == RS_COLL_SENDRECV) { /* a rank's buffer is the size, as sendrecv_perf's column */
        s->sendrecv = 1;
        s->result_elems = s->count * p;
        return s->count > 0 && nranks > 1; /* (one rank has no peer) */
    }
    return s->count > 0;
}

uint64_t rs_shape_a2av_len(const rs_shape *s, int from, int to)
{
    const uint64_t a = (uint64_t)(from < to ? from : to), b = (uint64_t)(from < to ? to : from);
    const uint64_t w = (a * 5 + b * 3 + a * b) % 9, k = s->a2av_skew; /* 4000 >= 4 k: never below 0 */
    return s->count * (4000 + k * w - 4 * k) / 4000;
}

uint64_t rs_shape_plan_count(const rs_shape *s)
{
    uint64_t most = s->a2av ? 0 : s->count;
    for (int i = 0; s->a2av && i < s->nranks; i++)
        for (int j = i; j < s->nranks; j++) { /* symmetric */
            const uint64_t n = rs_shape_a2av_len(s, i, j);
            most = n > most ? n : most;
        }
    return most;
}

/* Rank's row (what it sends) or column (what it receives) of the matrix. */
static uint64_t a2av_sum(const rs_shape *s, int rank, int column)
{
    uint64_t n = 0;
    for (int k = 0; k < s->nranks; k++)
        n += column ? rs_shape_a2av_len(s, k, rank) : rs_shape_a2av_len(s, rank, k);
    return n;
}

int rs_shape_make_a2av(rs_shape *s, int nranks, ncl_dtype dt, double skew, uint64_t bytes)
{
    rs_shape_make(s, (rs_coll)NCL_COLL_ALLTOALL, nranks, dt, NCL_MAX, 0, 0, bytes);
    s->a2av = 1;
    s->a2av_skew = (uint32_t)(skew > 0 ? (skew < 1 ? skew * 1000 + 0.5 : 1000) : 0);
    s->send_elems = s->recv_elems = s->result_elems = 0;
    for (int r = 0; r < nranks; r++) {
        const uint64_t row = a2av_sum(s, r, 0); /* = its column: the matrix is symmetric */
        s->send_elems = row > s->send_elems ? row : s->send_elems;
        s->result_elems += row;
    }
    s->recv_elems = s->send_elems;
    return s->result_elems > 0;
}

/* Every matrix asked for, one per (nranks, count, skew), kept for the process's life: a call's ranks
 * (threads, or one thread driving all) and a running non-blocking call read them meanwhile. */
typedef struct a2av_matrix {
    struct a2av_matrix *next;
    int nranks;
    uint64_t count;
    uint32_t skew;
    uint64_t counts[];
} a2av_matrix;

const uint64_t *rs_shape_a2av_counts(const rs_shape *s)
{
    static a2av_matrix *kept;
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    const size_t n = (size_t)s->nranks * (size_t)s->nranks;
    pthread_mutex_lock(&lock);
    a2av_matrix *m = kept;
    while (m && !(m->nranks == s->nranks && m->count == s->count && m->skew == s->a2av_skew))
        m = m->next;
    if (!m && (m = malloc(sizeof *m + n * sizeof m->counts[0])) != NULL) {
        m->nranks = s->nranks, m->count = s->count, m->skew = s->a2av_skew;
        for (int i = 0; i < s->nranks; i++)
            for (int j = 0; j < s->nranks; j++)
                m->counts[(size_t)i * (size_t)s->nranks + (size_t)j] = rs_shape_a2av_len(s, i, j);
        m->next = kept, kept = m;
    }
    pthread_mutex_unlock(&lock);
    return m ? m->counts : NULL; /* (out of memory: the call refuses a NULL matrix) */
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
    if (s->a2av)
        return a2av_sum(s, rank, 0);
    if (s->sendrecv)
        return s->send_elems;
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
    if (s->a2av) { /* receiver r's part (its column), block from k: rank k's block for r */
        int r = 0, k = 0;
        uint64_t base = 0, col;
        while (lo >= base + (col = a2av_sum(s, r, 1)))
            base += col, r++;
        while (lo >= base + rs_shape_a2av_len(s, k, r))
            base += rs_shape_a2av_len(s, k++, r);
        *from = k;
        *at = lo - base;
        for (int j = 0; j < r; j++)
            *at += rs_shape_a2av_len(s, k, j);
        const uint64_t left = base + rs_shape_a2av_len(s, k, r) - lo;
        return left < hi - lo ? left : hi - lo;
    }
    uint64_t k = lo / s->count, in_block = lo - k * s->count, p = (uint64_t)s->nranks;
    *from = (int)(s->coll == NCL_COLL_ALLTOALL ? k % p : s->sendrecv ? (k + p - 1) % p : k);
    *at = (s->coll == NCL_COLL_ALLTOALL ? k / p * s->count : 0) + in_block;
    return s->count - in_block < hi - lo ? s->count - in_block : hi - lo;
}

void rs_shape_expected(const rs_shape *s, uint64_t seed, uint64_t lo, uint64_t hi, void *out)
{
    unsigned char *o = out;
    if (s->coll == NCL_COLL_BROADCAST && !s->sendrecv) {
        rs_data_fill(o, hi - lo, s->dt, NCL_MAX, s->nranks, s->root, seed, lo);
    } else if (s->coll == NCL_COLL_ALLGATHER || s->coll == NCL_COLL_ALLTOALL || s->sendrecv) {
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
    if (s->coll == NCL_COLL_BROADCAST && !s->sendrecv) {
        memcpy(o, RS_IN(s->root, lo), (hi - lo) * es);
    } else if (s->coll == NCL_COLL_ALLGATHER || s->coll == NCL_COLL_ALLTOALL || s->sendrecv) {
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
    if (s->a2av) {
        for (int r = 0; r < rank; r++)
            *lo += a2av_sum(s, r, 1);
        *hi = *lo + a2av_sum(s, rank, 1);
    } else if (s->coll == NCL_COLL_REDUCE_SCATTER || s->coll == NCL_COLL_ALLTOALL || s->sendrecv) {
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

/* Both transfers of a rank's sendrecv (to rank + 1, from rank - 1), started together (neither
 * waits for the other's peer), then finished. */
static ncl_result sendrecv_call(const rs_shape *s, const void *send, void *recv, ncl_comm *comm)
{
    int rank = 0;
    ncl_comm_rank(comm, &rank);
    const int to = (rank + 1) % s->nranks, from = (rank + s->nranks - 1) % s->nranks;
    ncl_comm *out = NULL, *in = NULL;
    ncl_result rc = ncl_send_start(send, s->count, s->dt, to, comm, &out);
    ncl_result rc2 = rc == NCL_SUCCESS ? ncl_recv_start(recv, s->count, s->dt, from, comm, &in) : rc;
    if (rc == NCL_SUCCESS)
        rc = ncl_wait(out);
    if (in)
        rc2 = ncl_wait(in);
    return rc != NCL_SUCCESS ? rc : rc2;
}

ncl_result rs_shape_call(const rs_shape *s, const void *send, void *recv, ncl_comm *comm)
{
    if (s->sendrecv)
        return sendrecv_call(s, send, recv, comm);
    switch (s->coll) {
    case NCL_COLL_ALLREDUCE: return ncl_allreduce(send, recv, s->count, s->dt, s->op, comm);
    case NCL_COLL_BROADCAST: return ncl_broadcast(send, recv, s->count, s->dt, s->root, comm);
    case NCL_COLL_REDUCE: return ncl_reduce(send, recv, s->count, s->dt, s->op, s->root, comm);
    case NCL_COLL_REDUCE_SCATTER: return ncl_reduce_scatter(send, recv, s->count, s->dt, s->op, comm);
    case NCL_COLL_ALLGATHER: return ncl_allgather(send, recv, s->count, s->dt, comm);
    case NCL_COLL_ALLTOALL:
        return s->a2av ? ncl_alltoallv(send, recv, rs_shape_a2av_counts(s), s->dt, comm)
                       : ncl_alltoall(send, recv, s->count, s->dt, comm);
    default: return NCL_ERR_INVALID_ARGUMENT;
    }
}

ncl_result rs_shape_start(const rs_shape *s, const void *send, void *recv, ncl_comm *comm)
{
    if (s->sendrecv)
        return NCL_ERR_INVALID_ARGUMENT;
    switch (s->coll) {
    case NCL_COLL_ALLREDUCE: return ncl_allreduce_start(send, recv, s->count, s->dt, s->op, comm);
    case NCL_COLL_BROADCAST: return ncl_broadcast_start(send, recv, s->count, s->dt, s->root, comm);
    case NCL_COLL_REDUCE: return ncl_reduce_start(send, recv, s->count, s->dt, s->op, s->root, comm);
    case NCL_COLL_REDUCE_SCATTER: return ncl_reduce_scatter_start(send, recv, s->count, s->dt, s->op, comm);
    case NCL_COLL_ALLGATHER: return ncl_allgather_start(send, recv, s->count, s->dt, comm);
    case NCL_COLL_ALLTOALL:
        return s->a2av ? ncl_alltoallv_start(send, recv, rs_shape_a2av_counts(s), s->dt, comm)
                       : ncl_alltoall_start(send, recv, s->count, s->dt, comm);
    default: return NCL_ERR_INVALID_ARGUMENT;
    }
}
