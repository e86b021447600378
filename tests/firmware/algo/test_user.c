/* test_user.c — user-defined schedules (ncl/ncl_user.h): hand-written ones proven by the checker
 * and run bit-exactly on the host backend; broken ones rejected with the rule they break. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ncl/ncl.h>
#include <ncl/ncl_check.h>
#include <ncl/ncl_host.h>
#include <ncl/ncl_sched.h>
#include <ncl/ncl_user.h>

#include "sweep/rs_data.h"

enum { SEED = 4242, MAX_STEPS = 1024, DATA = 0, READY = 1 };

/* ---- building schedules ----------------------------------------------------------------------- */

typedef struct sb {
    ncl_user_step steps[MAX_STEPS];
    ncl_user_schedule s;
} sb;

static void sb_init(sb *b, const char *name, ncl_coll coll, int p, uint32_t chunks, uint32_t queues)
{
    memset(b, 0, sizeof *b);
    b->s.name = name;
    b->s.coll = (uint8_t)coll;
    b->s.nranks = p;
    b->s.chunks = chunks;
    b->s.queues = queues;
    b->s.steps = b->steps;
}

static ncl_user_step *sb_add(sb *b, int rank, uint32_t q, ncl_task_kind kind)
{
    assert_true(b->s.step_count < MAX_STEPS);
    ncl_user_step *st = &b->steps[b->s.step_count++];
    memset(st, 0, sizeof *st);
    st->rank = rank;
    st->queue = q;
    st->kind = (uint8_t)kind;
    return st;
}

static void sb_data(sb *b, int rank, uint32_t q, ncl_task_kind kind, int peer, ncl_buf sbuf, uint32_t sc,
                    ncl_buf dbuf, uint32_t dc, uint32_t chunks)
{
    ncl_user_step *st = sb_add(b, rank, q, kind);
    st->peer = peer;
    st->src_buf = (uint8_t)sbuf;
    st->src_chunk = sc;
    st->dst_buf = (uint8_t)dbuf;
    st->dst_chunk = dc;
    st->chunks = chunks;
}

static void sb_record(sb *b, int rank, uint32_t q, int peer, uint32_t id)
{
    ncl_user_step *st = sb_add(b, rank, q, NCL_TASK_NOTIFY_RECORD);
    st->peer = peer;
    st->notify = id;
}

static void sb_wait(sb *b, int rank, uint32_t q, int peer, uint32_t id)
{
    ncl_user_step *st = sb_add(b, rank, q, NCL_TASK_NOTIFY_WAIT);
    st->peer = peer;
    st->notify = id;
    st->count = 1;
}

static int md(int a, int p) { return ((a % p) + p) % p; }

/* Ring allgather on queue q over chunk `c` of each block (chunks per block: `chunks`), in
 * direction dir (+1: to rank+1). `late_waits` (a broken variant): rank 1 puts off its DATA
 * waits to the end, so it forwards blocks before they arrived. */
static void ring_allgather_q(sb *b, int p, uint32_t q, uint32_t chunks, uint32_t c, int dir, int late_waits)
{
    for (int r = 0; r < p; r++) {
        int next = md(r + dir, p), prev = md(r - dir, p);
        sb_data(b, r, q, NCL_TASK_LOCAL_COPY, -1, NCL_BUF_SEND, c, NCL_BUF_RECV, (uint32_t)r * chunks + c, 1);
        if (p == 1)
            continue;
        sb_record(b, r, q, prev, 2 * q + READY);
        sb_wait(b, r, q, next, 2 * q + READY);
        for (int s = 0; s < p - 1; s++) {
            uint32_t blk = (uint32_t)md(r - dir * s, p) * chunks + c;
            sb_data(b, r, q, NCL_TASK_WRITE, next, NCL_BUF_RECV, blk, NCL_BUF_RECV, blk, 1);
            sb_record(b, r, q, next, 2 * q + DATA);
            if (!(late_waits && r == 1))
                sb_wait(b, r, q, prev, 2 * q + DATA);
        }
        if (late_waits && r == 1)
            for (int s = 0; s < p - 1; s++)
                sb_wait(b, r, q, prev, 2 * q + DATA);
    }
}

static void ring_allgather(sb *b, int p)
{
    sb_init(b, "ring_allgather", NCL_COLL_ALLGATHER, p, 1, 1);
    ring_allgather_q(b, p, 0, 1, 0, +1, 0);
}

/* Two queues: chunk 0 of every block goes around the ring forwards on queue 0, chunk 1
 * backwards on queue 1. */
static void biring_allgather(sb *b, int p)
{
    sb_init(b, "biring_allgather", NCL_COLL_ALLGATHER, p, 2, 2);
    ring_allgather_q(b, p, 0, 2, 0, +1, 0);
    ring_allgather_q(b, p, 1, 2, 1, -1, 0);
}

/* Allreduce on 3 ranks (works for any p): direct reduce-scatter through scratch (rank k's
 * share of chunk r lands in r's scratch block k), the owner reduces it into its recv chunk,
 * divides for avg, and writes the result to every peer. `twice`: a broken variant where rank 0
 * reduces one peer's share twice. */
static void direct_allreduce(sb *b, int p, int twice)
{
    sb_init(b, "direct_allreduce", NCL_COLL_ALLREDUCE, p, (uint32_t)p, 1);
    uint32_t P = (uint32_t)p;
    for (int r = 0; r < p; r++) {
        uint32_t R = (uint32_t)r;
        sb_data(b, r, 0, NCL_TASK_LOCAL_COPY, -1, NCL_BUF_SEND, 0, NCL_BUF_RECV, 0, P);
        for (int d = 1; d < p; d++)
            sb_record(b, r, 0, md(r + d, p), READY); /* my scratch is free, my recv holds my input */
        for (int d = 1; d < p; d++) {
            int k = md(r + d, p);
            sb_wait(b, r, 0, k, READY);
            sb_data(b, r, 0, NCL_TASK_WRITE, k, NCL_BUF_SEND, (uint32_t)k, NCL_BUF_SCRATCH, R * P + (uint32_t)k, 1);
            sb_record(b, r, 0, k, DATA);
        }
        for (int d = 1; d < p; d++) {
            int k = md(r + d, p);
            sb_wait(b, r, 0, k, DATA);
            sb_data(b, r, 0, NCL_TASK_LOCAL_REDUCE, -1, NCL_BUF_SCRATCH, (uint32_t)k * P + R, NCL_BUF_RECV, R, 1);
            if (twice && r == 0 && d == 1)
                sb_data(b, r, 0, NCL_TASK_LOCAL_REDUCE, -1, NCL_BUF_SCRATCH, (uint32_t)k * P + R, NCL_BUF_RECV, R, 1);
        }
        sb_data(b, r, 0, NCL_TASK_LOCAL_DIV, -1, NCL_BUF_RECV, R, NCL_BUF_RECV, R, 1);
        for (int d = 1; d < p; d++) {
            int k = md(r + d, p);
            sb_data(b, r, 0, NCL_TASK_WRITE, k, NCL_BUF_RECV, R, NCL_BUF_RECV, R, 1);
            sb_record(b, r, 0, k, 2 + DATA);
        }
        for (int d = 1; d < p; d++)
            sb_wait(b, r, 0, md(r + d, p), 2 + DATA);
    }
}

/* Chain broadcast written for root 0 (other roots rotate it): 0 -> 1 -> ... -> p-1. */
static void chain_broadcast(sb *b, int p)
{
    sb_init(b, "chain_broadcast", NCL_COLL_BROADCAST, p, 1, 1);
    sb_data(b, 0, 0, NCL_TASK_LOCAL_COPY, -1, NCL_BUF_SEND, 0, NCL_BUF_RECV, 0, 1);
    for (int r = 0; r < p; r++) {
        if (r > 0) {
            sb_record(b, r, 0, r - 1, READY);
            sb_wait(b, r, 0, r - 1, DATA);
        }
        if (r < p - 1) {
            sb_wait(b, r, 0, r + 1, READY);
            sb_data(b, r, 0, NCL_TASK_WRITE, r + 1, NCL_BUF_RECV, 0, NCL_BUF_RECV, 0, 1);
            sb_record(b, r, 0, r + 1, DATA);
        }
    }
}

/* ---- proving ---------------------------------------------------------------------------------- */

static void *t_alloc(void *ud, size_t n) { (void)ud; return malloc(n); }
static void t_free(void *ud, void *ptr) { (void)ud; free(ptr); }

static ncl_result make_plan(ncl_plan *plan, const ncl_user_schedule *s, uint64_t count, ncl_dtype dt, ncl_op op,
                            int inplace, int root, uint64_t slice_bytes, uint64_t scratch, uint32_t max_queues)
{
    ncl_plan_env env;
    memset(&env, 0, sizeof env);
    env.slice_bytes = slice_bytes;
    env.channels = 1;
    env.max_queues = max_queues;
    env.scratch_bytes = scratch;
    env.link_alpha_ns = 1000;
    env.link_gbps = 20;
    env.schedule = s;
    return ncl_plan_make(plan, (ncl_coll)s->coll, NCL_ALGO_USER, s->nranks, 0, root, count, dt, op, inplace, &env);
}

static ncl_result prove(const ncl_user_schedule *s, uint64_t count, ncl_dtype dt, ncl_op op, int inplace, int root,
                        uint64_t slice_bytes, char *msg, size_t len)
{
    ncl_plan plan;
    ncl_result rc = make_plan(&plan, s, count, dt, op, inplace, root, slice_bytes, 64ull << 20, NCL_MAX_QUEUES);
    if (rc != NCL_SUCCESS) {
        snprintf(msg, len, "plan: %s", ncl_strerror(rc));
        return rc;
    }
    return ncl_check(&plan, NULL, t_alloc, t_free, NULL, msg, len);
}

static int reduces(ncl_coll c) { return c == NCL_COLL_ALLREDUCE || c == NCL_COLL_REDUCE || c == NCL_COLL_REDUCE_SCATTER; }

/* The checker over counts (uneven chunks, empty chunks, many slices), every dtype and op, in
 * and out of place, every root, normal and tiny slices. */
static void prove_all(const ncl_user_schedule *s)
{
    const int p = s->nranks;
    const uint64_t counts[] = {1, (uint64_t)p - 1, (uint64_t)p + 1, 1009, 1048579};
    int rooted = s->coll == NCL_COLL_BROADCAST || s->coll == NCL_COLL_REDUCE;
    unsigned long cases = 0;
    for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
        if (counts[ci] == 0)
            continue;
        for (int dt = 0; dt < NCL_DTYPE_COUNT; dt++)
            for (int op = 0; op < (reduces((ncl_coll)s->coll) ? NCL_OP_COUNT : 1); op++)
                for (int root = 0; root < (rooted ? p : 1); root++)
                    for (int inplace = 0; inplace < 2; inplace++)
                        for (int tiny = 0; tiny < 2; tiny++) {
                            if (tiny && counts[ci] > 1009)
                                continue;
                            size_t es = ncl_dtype_size((ncl_dtype)dt);
                            char msg[512];
                            ncl_result rc = prove(s, counts[ci], (ncl_dtype)dt, (ncl_op)op, inplace, root,
                                                  tiny ? 3 * es : 512u << 10, msg, sizeof msg);
                            if (rc != NCL_SUCCESS)
                                fail_msg("%s on %d ranks, count %llu %s %s %s root %d%s: %s", s->name, p,
                                         (unsigned long long)counts[ci], ncl_dtype_name((ncl_dtype)dt),
                                         ncl_op_name((ncl_op)op), inplace ? "in place" : "out of place", root,
                                         tiny ? " tiny slices" : "", msg);
                            cases++;
                        }
    }
    assert_true(cases > 0);
}

/* ---- running on the host backend -------------------------------------------------------------- */

typedef struct world {
    const ncl_user_schedule *s;
    pthread_mutex_t lock;
    unsigned long cases, wrong;
    char first[512];
    ncl_result rc0;
    char err0[512]; /* rank 0's last_error of the first failing call */
} world;

static void note(world *w, int rank, const char *what, uint64_t count, ncl_dtype dt, ncl_op op, int inplace,
                 int root)
{
    pthread_mutex_lock(&w->lock);
    if (w->wrong++ == 0)
        snprintf(w->first, sizeof w->first, "%s rank %d count %llu %s %s %s root %d: %s", w->s->name, rank,
                 (unsigned long long)count, ncl_dtype_name(dt), ncl_op_name(op), inplace ? "in place" : "out of place",
                 root, what);
    pthread_mutex_unlock(&w->lock);
}

/* One call of the schedule's collective on this rank, checked against rs_data's reference. */
static void run_case(world *w, ncl_comm *comm, int rank, uint64_t count, ncl_dtype dt, ncl_op op, int inplace,
                     int root)
{
    const ncl_coll coll = (ncl_coll)w->s->coll;
    const int p = w->s->nranks;
    const size_t es = ncl_dtype_size(dt);
    const ncl_op fill_op = reduces(coll) ? op : NCL_MAX;
    uint64_t in_count = coll == NCL_COLL_REDUCE_SCATTER ? count * p : count;
    uint64_t out_count = coll == NCL_COLL_ALLGATHER ? count * p : count;
    int has_send = coll != NCL_COLL_BROADCAST || rank == root || inplace;
    int has_recv = coll != NCL_COLL_REDUCE || rank == root || inplace;
    uint64_t big = (in_count > out_count ? in_count : out_count) * es;
    char *a = malloc(big), *b = NULL, *send, *recv;
    if (inplace) {
        send = recv = a;
        if (coll == NCL_COLL_ALLGATHER)
            send = a + (uint64_t)rank * count * es;
        if (coll == NCL_COLL_REDUCE_SCATTER)
            recv = a + (uint64_t)rank * count * es;
        memset(a, 0xa5, big);
    } else {
        b = malloc(out_count * es);
        memset(b, 0xa5, out_count * es);
        send = has_send ? a : NULL;
        recv = has_recv ? b : NULL;
    }
    if (has_send)
        rs_data_fill(send, in_count, dt, fill_op, p, rank, SEED, 0);
    char *want = malloc(out_count * es);
    if (coll == NCL_COLL_ALLGATHER)
        for (int k = 0; k < p; k++)
            rs_data_fill(want + (uint64_t)k * count * es, count, dt, NCL_MAX, p, k, SEED, 0);
    else if (coll == NCL_COLL_BROADCAST)
        rs_data_fill(want, count, dt, NCL_MAX, p, root, SEED, 0);
    else
        rs_data_expected(want, count, dt, op, p, SEED, coll == NCL_COLL_REDUCE_SCATTER ? (uint64_t)rank * count : 0, 1);

    ncl_result rc = NCL_ERR_INTERNAL;
    switch (coll) {
    case NCL_COLL_ALLREDUCE: rc = ncl_allreduce(send, recv, count, dt, op, comm); break;
    case NCL_COLL_BROADCAST: rc = ncl_broadcast(send, recv, count, dt, root, comm); break;
    case NCL_COLL_REDUCE: rc = ncl_reduce(send, recv, count, dt, op, root, comm); break;
    case NCL_COLL_REDUCE_SCATTER: rc = ncl_reduce_scatter(send, recv, count, dt, op, comm); break;
    case NCL_COLL_ALLGATHER: rc = ncl_allgather(send, recv, count, dt, comm); break;
    default: break;
    }
    if (rc != NCL_SUCCESS) {
        pthread_mutex_lock(&w->lock);
        if (rank == 0 && w->rc0 == NCL_SUCCESS) {
            w->rc0 = rc;
            snprintf(w->err0, sizeof w->err0, "%s", ncl_comm_last_error(comm));
        }
        pthread_mutex_unlock(&w->lock);
        note(w, rank, ncl_comm_last_error(comm), count, dt, op, inplace, root);
    } else if (has_recv && (coll != NCL_COLL_REDUCE || rank == root)) {
        uint64_t n = coll == NCL_COLL_REDUCE_SCATTER ? count : out_count;
        uint64_t bad = rs_data_count_wrong(recv, want, n, dt, reduces(coll) ? op : NCL_MAX);
        if (bad) {
            char d[64];
            snprintf(d, sizeof d, "%llu wrong elements", (unsigned long long)bad);
            note(w, rank, d, count, dt, op, inplace, root);
        }
    }
    pthread_mutex_lock(&w->lock);
    w->cases += rank == 0;
    pthread_mutex_unlock(&w->lock);
    free(want);
    free(a);
    free(b);
}

typedef struct runspec {
    world *w;
    const uint64_t *counts;
    size_t ncounts;
    const ncl_dtype *dts;
    size_t ndts;
} runspec;

static ncl_result run_fn(ncl_comm *comm, void *arg)
{
    runspec *rs = arg;
    world *w = rs->w;
    int rank = 0;
    ncl_comm_rank(comm, &rank);
    ncl_coll coll = (ncl_coll)w->s->coll;
    int rooted = coll == NCL_COLL_BROADCAST || coll == NCL_COLL_REDUCE;
    static const ncl_op ops[] = {NCL_SUM, NCL_PROD, NCL_MAX, NCL_MIN, NCL_AVG};
    for (size_t ci = 0; ci < rs->ncounts; ci++)
        for (size_t di = 0; di < rs->ndts; di++)
            for (size_t oi = 0; oi < (reduces(coll) ? 5u : 1u); oi++)
                for (int root = 0; root < (rooted ? w->s->nranks : 1); root++)
                    for (int inplace = 0; inplace < 2; inplace++) {
                        ncl_host_barrier(comm);
                        run_case(w, comm, rank, rs->counts[ci], rs->dts[di], ops[oi], inplace, root);
                    }
    return NCL_SUCCESS;
}

/* Runs every count x dtype x op x root x in/out of place; returns the world for inspection. */
static void host_run(world *w, const ncl_user_schedule *s, uint64_t slice_bytes, const uint64_t *counts,
                     size_t ncounts)
{
    static const ncl_dtype dts[] = {NCL_FLOAT32, NCL_INT32, NCL_BFLOAT16, NCL_FLOAT64, NCL_INT8};
    memset(w, 0, sizeof *w);
    w->s = s;
    pthread_mutex_init(&w->lock, NULL);
    ncl_host_config cfg = NCL_HOST_CONFIG_INIT;
    cfg.nranks = s->nranks;
    cfg.comm.schedule = s;
    cfg.comm.algorithm[s->coll] = NCL_ALGO_USER;
    cfg.comm.slice_bytes = slice_bytes;
    cfg.comm.timeout_ns = 60ull * 1000 * 1000 * 1000;
    runspec rs = {w, counts, ncounts, dts, sizeof dts / sizeof dts[0]};
    ncl_result rc = ncl_host_run_cfg(&cfg, run_fn, &rs, NULL);
    assert_int_equal(rc, NCL_SUCCESS);
    pthread_mutex_destroy(&w->lock);
}

static void run_exact(const ncl_user_schedule *s)
{
    static const uint64_t counts[] = {1, 2, 7, 1009, 100003};
    for (int small = 0; small < 2; small++) {
        world w;
        host_run(&w, s, small ? 256 : (512u << 10), counts, sizeof counts / sizeof counts[0]);
        if (w.wrong)
            fail_msg("%lu failing cases; first: %s", w.wrong, w.first);
        assert_true(w.cases > 0);
    }
}

/* ---- valid schedules -------------------------------------------------------------------------- */

static void test_validate_good(void **state)
{
    (void)state;
    static sb b;
    char msg[256];
    ring_allgather(&b, 4);
    assert_int_equal(ncl_user_validate(&b.s, NULL, msg, sizeof msg), NCL_SUCCESS);
    assert_string_equal(msg, "");
    direct_allreduce(&b, 3, 0);
    assert_int_equal(ncl_user_validate(&b.s, NULL, msg, sizeof msg), NCL_SUCCESS);
    /* scratch: blocks up to rank 2's share, 3 blocks of count elements */
    assert_int_equal(ncl_user_scratch_bytes(&b.s, 10, 4), 3 * 10 * 4);
    ring_allgather(&b, 4);
    assert_int_equal(ncl_user_scratch_bytes(&b.s, 10, 4), 0);
}

static void test_ring_allgather(void **state)
{
    (void)state;
    static sb b;
    for (int p = 1; p <= 5; p++) {
        ring_allgather(&b, p);
        prove_all(&b.s);
    }
    ring_allgather(&b, 4);
    run_exact(&b.s);
}

static void test_direct_allreduce(void **state)
{
    (void)state;
    static sb b;
    for (int p = 2; p <= 4; p++) {
        direct_allreduce(&b, p, 0);
        prove_all(&b.s);
    }
    direct_allreduce(&b, 3, 0);
    run_exact(&b.s);
}

static void test_two_queues(void **state)
{
    (void)state;
    static sb b;
    for (int p = 2; p <= 5; p++) {
        biring_allgather(&b, p);
        prove_all(&b.s);
    }
    biring_allgather(&b, 4);
    run_exact(&b.s);
}

static void test_broadcast_roots(void **state)
{
    (void)state;
    static sb b;
    chain_broadcast(&b, 4);
    prove_all(&b.s); /* every root: the schedule is rotated */
    run_exact(&b.s);
}

/* ---- rejected schedules ----------------------------------------------------------------------- */

/* Through the API: rank 0's result and message for a small allgather/allreduce call. */
static ncl_result api_reject(const ncl_user_schedule *s, char *err, size_t len)
{
    static const uint64_t counts[] = {13};
    world w;
    memset(&w, 0, sizeof w);
    w.s = s;
    pthread_mutex_init(&w.lock, NULL);
    ncl_host_config cfg = NCL_HOST_CONFIG_INIT;
    cfg.nranks = s->nranks;
    cfg.comm.schedule = s;
    cfg.comm.algorithm[s->coll] = NCL_ALGO_USER;
    cfg.comm.timeout_ns = 10ull * 1000 * 1000 * 1000;
    static const ncl_dtype dts[] = {NCL_FLOAT32};
    runspec rs = {&w, counts, 1, dts, 1};
    /* one op only: enough to see the refusal */
    ncl_host_run_cfg(&cfg, run_fn, &rs, NULL);
    pthread_mutex_destroy(&w.lock);
    snprintf(err, len, "%s", w.err0);
    return w.rc0;
}

static void expect_checker(const ncl_user_schedule *s, const char *substring)
{
    char err[512];
    ncl_result rc = api_reject(s, err, sizeof err);
    print_message("%s: %s: %s\n", s->name, ncl_strerror(rc), err);
    assert_int_equal(rc, NCL_ERR_SCHEDULE);
    char want[128];
    snprintf(want, sizeof want, "%s (user): schedule rejected: ", ncl_coll_name((ncl_coll)s->coll));
    if (!strstr(err, want) || !strstr(err, substring))
        fail_msg("last_error '%s' lacks '%s' / '%s'", err, want, substring);
}

static void test_reject_race(void **state)
{
    (void)state;
    static sb b;
    sb_init(&b, "late_waits", NCL_COLL_ALLGATHER, 4, 1, 1);
    ring_allgather_q(&b, 4, 0, 1, 0, +1, 1);
    assert_int_equal(ncl_user_validate(&b.s, NULL, NULL, 0), NCL_SUCCESS); /* well formed */
    expect_checker(&b.s, "race on rank 1 RECV [0,52): written by rank 0 q0 step 3 (WRITE) while rank 1 q0 "
                         "step 5 may read it");
}

static void test_reject_deadlock(void **state)
{
    (void)state;
    static sb b;
    ring_allgather(&b, 4);
    b.s.name = "lonely_wait";
    sb_wait(&b, 0, 0, 2, 5); /* rank 2 never records notify 5 */
    expect_checker(&b.s, "rank 0 queue 0 step 12 waits for notify 5 from rank 2, which never records it");
}

static void test_reject_reduced_twice(void **state)
{
    (void)state;
    static sb b;
    direct_allreduce(&b, 3, 1);
    b.s.name = "reduced_twice";
    expect_checker(&b.s, "contribution counted twice");
}

static void test_reject_unbalanced(void **state)
{
    (void)state;
    static sb b;
    ring_allgather(&b, 3);
    b.s.name = "extra_record";
    sb_record(&b, 2, 0, 0, 7);
    expect_checker(&b.s, "rank 2 recorded notify 7 to rank 0 1 more time(s) than it was waited for");
}

/* Structural faults: ncl_user_validate names them; the API refuses with INVALID_ARGUMENT. */
static void expect_invalid(const ncl_user_schedule *s, uint32_t step, const char *field, const char *substring)
{
    char msg[256];
    ncl_user_where where = {0, NULL};
    assert_int_equal(ncl_user_validate(s, &where, msg, sizeof msg), NCL_ERR_INVALID_ARGUMENT);
    print_message("%s: step %u %s: %s\n", s->name, where.step, where.field, msg);
    assert_int_equal(where.step, step);
    assert_string_equal(where.field, field);
    if (!strstr(msg, substring))
        fail_msg("'%s' lacks '%s'", msg, substring);
    char err[512];
    assert_int_equal(api_reject(s, err, sizeof err), NCL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err, "the schedule is malformed"));
}

static void test_reject_structure(void **state)
{
    (void)state;
    static sb b;
    ring_allgather(&b, 4);
    b.s.name = "write_into_send";
    b.steps[3].dst_buf = NCL_BUF_SEND; /* rank 0's first write */
    assert_int_equal(b.steps[3].kind, NCL_TASK_WRITE);
    expect_invalid(&b.s, 3, "dst", "writes into send, which is read only");

    ring_allgather(&b, 4);
    b.s.name = "bad_peer";
    b.steps[3].peer = 9;
    expect_invalid(&b.s, 3, "peer", "peer 9 is out of range (allowed: 0 to 3");

    ring_allgather(&b, 4);
    b.s.name = "write_to_self";
    b.steps[3].peer = 0;
    expect_invalid(&b.s, 3, "peer", "not the rank 0 itself");

    ring_allgather(&b, 4);
    b.s.name = "bad_notify";
    b.steps[1].notify = 40;
    expect_invalid(&b.s, 1, "notify", "notify id 40 is out of range (allowed: 0 to 31)");

    ring_allgather(&b, 4);
    b.s.name = "past_the_end";
    b.steps[3].dst_chunk = 4;
    expect_invalid(&b.s, 3, "dst", "chunks 4..4 are past the end of recv (allowed: chunks 0..3)");

    ring_allgather(&b, 4);
    b.s.name = "reduce_in_allgather";
    b.steps[3].kind = NCL_TASK_WRITE_REDUCE;
    expect_invalid(&b.s, 3, "kind", "allgather does not reduce");

    ring_allgather(&b, 4);
    b.s.name = "bad_queue";
    b.steps[2].queue = 1;
    expect_invalid(&b.s, 2, "queue", "queue 1 is out of range (allowed: 0 to 0)");

    biring_allgather(&b, 4);
    b.s.name = "chunk_mismatch";
    b.steps[0].dst_chunk = 1; /* send chunk 0 into recv chunk 1: another position in its block */
    expect_invalid(&b.s, 0, "dst", "the same chunk of a block");

    ring_allgather(&b, 4);
    b.s.queues = 0;
    b.s.name = "no_queues";
    expect_invalid(&b.s, NCL_USER_NO_STEP, "queues", "0 queues (allowed: 1 to ");
}

/* The plan must match: collective, rank count (INVALID_ARGUMENT), queues and scratch the
 * backend has (UNSUPPORTED). */
static void test_plan_mismatch(void **state)
{
    (void)state;
    static sb b;
    ncl_plan plan;
    direct_allreduce(&b, 3, 0);
    assert_int_equal(make_plan(&plan, &b.s, 10, NCL_FLOAT32, NCL_SUM, 0, 0, 4096, 1 << 20, 4), NCL_SUCCESS);
    assert_int_equal(plan.queues, 1);
    assert_int_equal(make_plan(&plan, &b.s, 10, NCL_FLOAT32, NCL_SUM, 0, 0, 4096, 3 * 10 * 4 - 1, 4),
                     NCL_ERR_UNSUPPORTED);
    biring_allgather(&b, 4);
    assert_int_equal(make_plan(&plan, &b.s, 10, NCL_FLOAT32, NCL_SUM, 0, 0, 4096, 0, 1), NCL_ERR_UNSUPPORTED);
    assert_int_equal(make_plan(&plan, &b.s, 10, NCL_FLOAT32, NCL_SUM, 0, 0, 4096, 0, 2), NCL_SUCCESS);
    assert_int_equal(plan.queues, 2);
    /* another rank count or collective than the schedule's */
    ncl_plan_env env;
    memset(&env, 0, sizeof env);
    env.slice_bytes = 4096;
    env.channels = 1;
    env.max_queues = 4;
    env.schedule = &b.s;
    assert_int_equal(ncl_plan_make(&plan, NCL_COLL_ALLGATHER, NCL_ALGO_USER, 5, 0, 0, 10, NCL_FLOAT32, NCL_SUM, 0, &env),
                     NCL_ERR_INVALID_ARGUMENT);
    assert_int_equal(ncl_plan_make(&plan, NCL_COLL_ALLREDUCE, NCL_ALGO_USER, 4, 0, 0, 10, NCL_FLOAT32, NCL_SUM, 0, &env),
                     NCL_ERR_INVALID_ARGUMENT);
    env.schedule = NULL;
    assert_int_equal(ncl_plan_make(&plan, NCL_COLL_ALLGATHER, NCL_ALGO_USER, 4, 0, 0, 10, NCL_FLOAT32, NCL_SUM, 0, &env),
                     NCL_ERR_INVALID_ARGUMENT);
    /* auto never picks a user schedule while a built-in algorithm accepts the plan */
    env.schedule = &b.s;
    assert_int_equal(ncl_plan_make(&plan, NCL_COLL_ALLGATHER, NCL_ALGO_AUTO, 4, 0, 0, 10, NCL_FLOAT32, NCL_SUM, 0, &env),
                     NCL_SUCCESS);
    assert_int_not_equal(plan.algo, NCL_ALGO_USER);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validate_good),       cmocka_unit_test(test_ring_allgather),
        cmocka_unit_test(test_direct_allreduce),    cmocka_unit_test(test_two_queues),
        cmocka_unit_test(test_broadcast_roots),     cmocka_unit_test(test_reject_race),
        cmocka_unit_test(test_reject_deadlock),     cmocka_unit_test(test_reject_reduced_twice),
        cmocka_unit_test(test_reject_unbalanced),   cmocka_unit_test(test_reject_structure),
        cmocka_unit_test(test_plan_mismatch),
    };
    return cmocka_run_group_tests_name("user", tests, NULL, NULL);
}
