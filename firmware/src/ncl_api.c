/* ncl_api.c — the public collectives: argument checks, planning, schedule proof, launch. */
#include "ncl_comm.h"

#include "ncl/ncl_check.h"
#include "ncl/ncl_user.h"
#include "ncl/ncl_dtype.h"

#include <string.h>

/* A collective call as the user made it. */
typedef struct call {
    ncl_coll coll;
    const void *send;
    void *recv;
    uint64_t count;
    ncl_dtype dtype;
    ncl_op op;
    int root;
    const uint64_t *counts; /* alltoallv's count matrix (count: its largest entry); else NULL */
} call;

static int overlaps(const void *a, uint64_t abytes, const void *b, uint64_t bbytes)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return abytes && bbytes && x < y + bbytes && y < x + abytes;
}

/* alltoallv runs on the alltoall algorithms: a board built without both leaves its checks out and
 * refuses it (the smallest board's 64 KiB of text, tests/firmware/port/limits.txt) */
#if !defined(NCL_NO_ALGO_MESH) || !defined(NCL_NO_ALGO_PAIRWISE)
#define NCL_A2AV 1
#endif

#ifdef NCL_A2AV
/* alltoallv's matrix, in one pass: this rank's row and column sums (what it sends and receives),
 * the largest column (some rank's whole recv), whether it is symmetric, and a digest every rank's
 * launch carries as its count (ncl_launch_mismatch). No sum overflows: the call's count is the
 * largest entry, and count x nranks elements already had to fit the address space. */
static void a2av_matrix(const ncl_comm *comm, const uint64_t *counts, uint64_t *sent, uint64_t *received,
                        uint64_t *most_received, int *symmetric, uint64_t *digest)
{
    const uint64_t p = (uint64_t)comm->nranks;
    *sent = *received = *most_received = 0, *symmetric = 1, *digest = 0xcbf29ce484222325ull; /* FNV-1a */
    for (uint64_t a = 0; a < p; a++) {
        uint64_t row = 0, column = 0;
        for (uint64_t b = 0; b < p; b++) {
            const uint64_t out = counts[a * p + b], in = counts[b * p + a];
            row += out, column += in;
            *symmetric &= out == in;
            for (int bit = 0; bit < 64; bit += 8)
                *digest = (*digest ^ (out >> bit & 0xffu)) * 0x100000001b3ull;
        }
        if (a == (uint64_t)comm->rank)
            *sent = row, *received = column;
        *most_received = column > *most_received ? column : *most_received;
    }
}
#endif

/* Checks the call, fills the HAL launch description and whether it runs in place. Touches no
 * buffer. */
static ncl_result validate(ncl_comm *comm, const call *c, ncl_hal_launch *l, int *inplace)
{
    const char *name = c->counts ? "alltoallv" : ncl_coll_name(c->coll);
    int p = comm->nranks, r = comm->rank;
    if ((unsigned)c->dtype >= NCL_DTYPE_COUNT)
        return ncl_comm_fail(comm, NCL_ERR_INVALID_ARGUMENT,
                             "%s: unknown datatype %d (allowed: 0..%d, see ncl_dtype)", name,
                             (int)c->dtype, NCL_DTYPE_COUNT - 1);
    if ((unsigned)c->op >= NCL_OP_COUNT)
        return ncl_comm_fail(comm, NCL_ERR_INVALID_ARGUMENT,
                             "%s: unknown op %d (allowed: sum, prod, max, min, avg)", name, (int)c->op);
    int rooted = c->coll == NCL_COLL_BROADCAST || c->coll == NCL_COLL_REDUCE;
    if (rooted && (c->root < 0 || c->root >= p))
        return ncl_comm_fail(comm, NCL_ERR_INVALID_ARGUMENT,
                             "%s: root %d out of range (allowed: 0..%d)", name, c->root, p - 1);
    uint64_t es = ncl_dtype_size(c->dtype);
    const int a2a = c->coll == NCL_COLL_ALLTOALL;
    uint64_t blocks = c->coll == NCL_COLL_ALLGATHER || c->coll == NCL_COLL_REDUCE_SCATTER || a2a ? (uint64_t)p : 1;
    if (c->count > UINT64_MAX / es / blocks || c->count * es * blocks > (uint64_t)PTRDIFF_MAX)
        return ncl_comm_fail(comm, NCL_ERR_INVALID_ARGUMENT,
                             "%s: count %llu x %llu bytes overflows the address space", name,
                             (unsigned long long)c->count, (unsigned long long)(es * blocks));
    uint64_t bytes = c->count * es;
    uint64_t send_bytes = c->coll == NCL_COLL_REDUCE_SCATTER || a2a ? bytes * blocks : bytes;
    uint64_t recv_bytes = c->coll == NCL_COLL_ALLGATHER || a2a ? bytes * blocks : bytes;
    uint64_t digest = 0, most_received = 0;
    int symmetric = 1;
#ifdef NCL_A2AV
    if (c->counts) {
        uint64_t sent, received;
        a2av_matrix(comm, c->counts, &sent, &received, &most_received, &symmetric, &digest);
        send_bytes = sent * es, recv_bytes = received * es;
    }
#endif
    int needs_send = c->coll != NCL_COLL_BROADCAST || r == c->root;
    int needs_recv = c->coll != NCL_COLL_REDUCE || r == c->root;
    if (needs_send && !c->send && (c->counts ? send_bytes : bytes))
        return ncl_comm_fail(comm, NCL_ERR_INVALID_ARGUMENT, "%s: sendbuf is NULL", name);
    if (needs_recv && !c->recv && (c->counts ? recv_bytes : bytes))
        return ncl_comm_fail(comm, NCL_ERR_INVALID_ARGUMENT, "%s: recvbuf is NULL", name);
    uint64_t align = comm->caps.buf_align;
    if ((needs_send && (uintptr_t)c->send % align) || (needs_recv && (uintptr_t)c->recv % align))
        return ncl_comm_fail(comm, NCL_ERR_INVALID_ARGUMENT,
                             "%s: buffers must be aligned to %llu bytes on this backend", name,
                             (unsigned long long)align);

    /* In place per NCCL's rules; any other overlap would silently corrupt the result. */
    const char *send = c->send;
    char *recv = c->recv;
    switch (c->coll) {
    case NCL_COLL_REDUCE_SCATTER: *inplace = recv && recv == send + (uint64_t)r * bytes; break;
    case NCL_COLL_ALLGATHER: *inplace = send && send == recv + (uint64_t)r * bytes; break;
    default: *inplace = needs_send && needs_recv && send == recv && (send || !c->counts); break;
    }
    if (c->counts && *inplace && !symmetric)
        return ncl_comm_fail(comm, NCL_ERR_INVALID_ARGUMENT,
                             "alltoallv: in place (recvbuf == sendbuf) needs a symmetric count matrix "
                             "(counts[i][j] == counts[j][i]): a block for rank j must fit where j's block lands");
    if (!*inplace && needs_send && needs_recv && overlaps(send, send_bytes, recv, recv_bytes))
        return ncl_comm_fail(comm, NCL_ERR_INVALID_ARGUMENT,
                             "%s: sendbuf and recvbuf overlap without being in place", name);

    memset(l, 0, sizeof *l);
    l->coll = (uint8_t)c->coll;
    l->count = c->counts ? digest : c->count;
    l->dtype = (uint8_t)c->dtype;
    l->op = c->coll == NCL_COLL_BROADCAST || c->coll == NCL_COLL_ALLGATHER || a2a ? 0 : (uint8_t)c->op;
    if (c->counts)
        l->op = NCL_LAUNCH_A2AV; /* count is the matrix's digest */
    l->root = rooted ? c->root : 0;
    l->inplace = (uint8_t)*inplace;
    if (*inplace) {
        /* One buffer, bound as RECV (see ncl_plan_input). */
        l->recv = c->coll == NCL_COLL_REDUCE_SCATTER ? (void *)(uintptr_t)send : recv;
        l->recv_bytes = c->coll == NCL_COLL_REDUCE_SCATTER ? send_bytes : recv_bytes;
    } else {
        l->send = needs_send ? send : NULL;
        l->send_bytes = needs_send ? send_bytes : 0;
        l->recv = needs_recv ? recv : NULL;
        l->recv_bytes = needs_recv ? recv_bytes : 0;
    }
    l->peer_recv_bytes = c->counts ? most_received * es : l->recv_bytes;
    return NCL_SUCCESS;
}

static int same_shape(const ncl_plan *a, const ncl_plan *b)
{
    if (a->a2a_counts || b->a2a_counts) /* the same matrix address may hold other counts */
        return 0;
    ncl_plan x = *a, y = *b;
    x.rank = y.rank = 0;
    /* which of a channel's two zones is used moves the schedule by one zone, nothing else */
    for (uint32_t c = 0; c < NCL_MAX_QUEUES; c++) {
        x.zone_state[c] &= (uint8_t)~NCL_ZONE_ODD;
        y.zone_state[c] &= (uint8_t)~NCL_ZONE_ODD;
    }
    return memcmp(&x, &y, sizeof x) == 0;
}

/* Proves the plan's schedule for all ranks, unless this exact shape was proven already. */
static ncl_result prove(ncl_comm *comm)
{
#ifdef NCL_NO_CHECKER /* a board built without the checker (firmware/sources.cmake) */
    return ncl_comm_fail(comm, NCL_ERR_UNSUPPORTED, "%s (%s): this engine was built without the schedule checker "
                         "(NCL_NO_CHECKER): a user schedule or check_schedules needs it",
                         ncl_coll_name((ncl_coll)comm->plan.coll), ncl_algo_name((ncl_algo)comm->plan.algo));
#endif
    if (comm->checked_valid && same_shape(&comm->checked, &comm->plan))
        return NCL_SUCCESS;
    char msg[256];
    ncl_result rc = ncl_check(&comm->plan, NULL, comm->cfg.alloc, comm->cfg.free,
                              comm->cfg.alloc_ud, msg, sizeof msg);
    if (rc == NCL_ERR_UNSUPPORTED)
        return NCL_SUCCESS; /* beyond the checker's rank limit: run unproven */
    if (rc != NCL_SUCCESS)
        return ncl_comm_fail(comm, rc, "%s (%s): schedule rejected: %s",
                             ncl_coll_name((ncl_coll)comm->plan.coll),
                             ncl_algo_name((ncl_algo)comm->plan.algo), msg);
    comm->checked = comm->plan;
    comm->checked_valid = 1;
    return NCL_SUCCESS;
}

static ncl_result start(ncl_comm *comm, const call *c)
{
    if (!comm)
        return NCL_ERR_INVALID_ARGUMENT;
    if (comm->active)
        return ncl_comm_fail(comm, NCL_ERR_INVALID_USAGE,
                             "%s: collective #%llu is still running; call ncl_wait() first",
                             ncl_coll_name(c->coll), (unsigned long long)comm->seq);
    if (comm->broken) { /* this call's message, with the failure that broke it */
        char earlier[sizeof comm->err];
        memcpy(earlier, comm->err, sizeof earlier);
        return ncl_comm_fail(comm, NCL_ERR_INVALID_USAGE,
                             "%s: refused: the communicator broke when collective #%llu failed (destroy it and "
                             "create another) -- %s", ncl_coll_name(c->coll), (unsigned long long)comm->seq, earlier);
    }
    comm->err[0] = '\0';
    ncl_hal_launch l;
    int inplace = 0;
    ncl_result rc = validate(comm, c, &l, &inplace);
    if (rc != NCL_SUCCESS || c->count == 0)
        return rc;

    const ncl_plan_env *env = &comm->env;
    rc = ncl_plan_make(&comm->plan, c->coll, (ncl_algo)comm->cfg.algorithm[c->coll], comm->nranks,
                       comm->rank, c->root, c->count, c->dtype, c->op, inplace, env);
    comm->plan.a2a_counts = c->counts; /* the schedules take the blocks from it; prepare needs the largest */
#ifndef NCL_NO_ALGO_USER /* (a board built without user schedules refuses them at creation) */
    char why[200];
    if (rc == NCL_ERR_INVALID_ARGUMENT && comm->cfg.algorithm[c->coll] == NCL_ALGO_USER && comm->cfg.schedule &&
        ncl_user_validate(comm->cfg.schedule, NULL, why, sizeof why) != NCL_SUCCESS)
        return ncl_comm_fail(comm, rc, "%s (user): the schedule is malformed: %s", ncl_coll_name(c->coll), why);
#endif
    if (rc != NCL_SUCCESS)
        return ncl_comm_fail(comm, rc, "%s: the %s algorithm cannot run %llu x %s %s on %d ranks (%u per "
                             "server) with %llu bytes of scratch%s",
                             ncl_coll_name(c->coll), ncl_algo_name((ncl_algo)comm->cfg.algorithm[c->coll]),
                             (unsigned long long)c->count, ncl_dtype_name(c->dtype), ncl_op_name(c->op),
                             comm->nranks, comm->cfg.local_size ? comm->cfg.local_size : (uint32_t)comm->nranks,
                             (unsigned long long)comm->caps.scratch_bytes,
                             env->inline_ops && !(env->inline_ops[c->dtype] >> (c->op == NCL_AVG ? NCL_SUM : c->op) & 1u)
                                 ? ", and the DMA cannot reduce it inline"
                                 : "");
    /* a user schedule is data from outside: always proven before it runs */
    if ((comm->cfg.check_schedules || comm->plan.algo == NCL_ALGO_USER) && (rc = prove(comm)) != NCL_SUCCESS)
        return rc;
    comm->next = ncl_algo_find(c->coll, (ncl_algo)comm->plan.algo)->next;
    /* count x size as NCCL's tuning counts it: a rank's share for allgather and reduce-scatter
     * (2 A100s switch protocols at 128 KiB of allreduce and at 256 KiB of gathered allgather) */
    comm->latency_path = c->count * comm->plan.esize <= comm->cfg.latency_path_bytes[c->coll];
    l.seq = ++comm->seq;
    l.algo = comm->plan.algo;
    rc = ncl_hal_begin(&comm->hal, &l);
    comm->last_rc = rc;
    if (rc != NCL_SUCCESS) {
        const char *why = ncl_hal_last_error(&comm->hal);
        return ncl_comm_fail(comm, rc, "%s #%llu: backend refused to start: %s%s%s", ncl_coll_name(c->coll),
                             (unsigned long long)l.seq, ncl_strerror(rc), *why ? ": " : "", why);
    }
    for (uint32_t ch = 0; ch < comm->plan.zone_channels; ch++)
        comm->zone_uses[ch]++; /* the same on every rank: every rank launches the same plans */
    ncl_exec_start(comm);
    return NCL_SUCCESS;
}

static ncl_result run(ncl_comm *comm, const call *c)
{
    ncl_result rc = start(comm, c);
    return rc == NCL_SUCCESS ? ncl_exec_wait(comm) : rc;
}

ncl_result ncl_test(ncl_comm *comm, int *done)
{
    if (!comm || !done)
        return NCL_ERR_INVALID_ARGUMENT;
    ncl_result rc = ncl_exec_progress(comm);
    *done = rc != NCL_IN_PROGRESS;
    return rc == NCL_IN_PROGRESS ? NCL_SUCCESS : rc;
}

ncl_result ncl_wait(ncl_comm *comm)
{
    if (!comm)
        return NCL_ERR_INVALID_ARGUMENT;
    return ncl_exec_wait(comm);
}

#define CALL(coll, send, recv, count, dtype, op, root) \
    (call){(coll), (send), (recv), (count), (dtype), (op), (root), NULL}

/* alltoallv: the plan's count is the matrix's largest entry (NULL matrix: refused, count 0 then) */
static call a2av_call(const void *s, void *r, const uint64_t *counts, ncl_dtype d, const ncl_comm *comm)
{
    call c = {NCL_COLL_ALLTOALL, s, r, 0, d, NCL_SUM, 0, counts};
    for (uint64_t i = 0; counts && comm && i < (uint64_t)comm->nranks * (uint64_t)comm->nranks; i++)
        c.count = counts[i] > c.count ? counts[i] : c.count;
    return c;
}

static ncl_result a2av(const void *s, void *r, const uint64_t *counts, ncl_dtype d, ncl_comm *comm, int wait)
{
#ifndef NCL_A2AV
    (void)s, (void)r, (void)counts, (void)d, (void)wait;
    return comm ? ncl_comm_fail(comm, NCL_ERR_UNSUPPORTED, "alltoallv: this engine was built without the alltoall "
                                "algorithms (mesh, pairwise)")
                : NCL_ERR_INVALID_ARGUMENT;
#endif
    if (comm && !counts)
        return ncl_comm_fail(comm, NCL_ERR_INVALID_ARGUMENT, "alltoallv: counts is NULL (an nranks x nranks matrix)");
    call c = a2av_call(s, r, counts, d, comm);
    return wait ? run(comm, &c) : start(comm, &c);
}

ncl_result ncl_allreduce(const void *s, void *r, size_t n, ncl_dtype d, ncl_op op, ncl_comm *c)
{
    return run(c, &CALL(NCL_COLL_ALLREDUCE, s, r, n, d, op, 0));
}
ncl_result ncl_broadcast(const void *s, void *r, size_t n, ncl_dtype d, int root, ncl_comm *c)
{
    return run(c, &CALL(NCL_COLL_BROADCAST, s, r, n, d, NCL_SUM, root));
}
ncl_result ncl_reduce(const void *s, void *r, size_t n, ncl_dtype d, ncl_op op, int root, ncl_comm *c)
{
    return run(c, &CALL(NCL_COLL_REDUCE, s, r, n, d, op, root));
}
ncl_result ncl_reduce_scatter(const void *s, void *r, size_t n, ncl_dtype d, ncl_op op, ncl_comm *c)
{
    return run(c, &CALL(NCL_COLL_REDUCE_SCATTER, s, r, n, d, op, 0));
}
ncl_result ncl_allgather(const void *s, void *r, size_t n, ncl_dtype d, ncl_comm *c)
{
    return run(c, &CALL(NCL_COLL_ALLGATHER, s, r, n, d, NCL_SUM, 0));
}
ncl_result ncl_alltoall(const void *s, void *r, size_t n, ncl_dtype d, ncl_comm *c)
{
    return run(c, &CALL(NCL_COLL_ALLTOALL, s, r, n, d, NCL_SUM, 0));
}
ncl_result ncl_allreduce_start(const void *s, void *r, size_t n, ncl_dtype d, ncl_op op, ncl_comm *c)
{
    return start(c, &CALL(NCL_COLL_ALLREDUCE, s, r, n, d, op, 0));
}
ncl_result ncl_broadcast_start(const void *s, void *r, size_t n, ncl_dtype d, int root, ncl_comm *c)
{
    return start(c, &CALL(NCL_COLL_BROADCAST, s, r, n, d, NCL_SUM, root));
}
ncl_result ncl_reduce_start(const void *s, void *r, size_t n, ncl_dtype d, ncl_op op, int root,
                            ncl_comm *c)
{
    return start(c, &CALL(NCL_COLL_REDUCE, s, r, n, d, op, root));
}
ncl_result ncl_reduce_scatter_start(const void *s, void *r, size_t n, ncl_dtype d, ncl_op op,
                                    ncl_comm *c)
{
    return start(c, &CALL(NCL_COLL_REDUCE_SCATTER, s, r, n, d, op, 0));
}
ncl_result ncl_allgather_start(const void *s, void *r, size_t n, ncl_dtype d, ncl_comm *c)
{
    return start(c, &CALL(NCL_COLL_ALLGATHER, s, r, n, d, NCL_SUM, 0));
}
ncl_result ncl_alltoall_start(const void *s, void *r, size_t n, ncl_dtype d, ncl_comm *c)
{
    return start(c, &CALL(NCL_COLL_ALLTOALL, s, r, n, d, NCL_SUM, 0));
}
ncl_result ncl_alltoallv(const void *s, void *r, const uint64_t *counts, ncl_dtype d, ncl_comm *c)
{
    return a2av(s, r, counts, d, c, 1);
}
ncl_result ncl_alltoallv_start(const void *s, void *r, const uint64_t *counts, ncl_dtype d, ncl_comm *c)
{
    return a2av(s, r, counts, d, c, 0);
}
