/* test_api.c — the public API's contracts: bad arguments, timeouts, non-blocking use, determinism. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ncl/ncl.h>
#include <ncl/ncl_diag.h>
#include <ncl/ncl_hal.h>
#include <ncl/ncl_host.h>

static void *alloc_cb(void *ud, size_t n) { (void)ud; return malloc(n); }
static void free_cb(void *ud, void *p) { (void)ud; free(p); }

/* ---- a mock backend: records calls, demands 64-byte alignment, never moves data ---- */

typedef struct mock {
    int begins;
} mock;

static ncl_result mock_caps(void *ctx, ncl_hal_caps *out)
{
    (void)ctx;
    out->scratch_bytes = 1 << 16;
    out->max_queues = 2;
    out->buf_align = 64;
    for (int d = 0; d < NCL_DTYPE_COUNT; d++)
        out->inline_ops[d] = NCL_INLINE_ALL_OPS;
    return NCL_SUCCESS;
}

static ncl_result mock_begin(void *ctx, const ncl_hal_launch *l)
{
    (void)l;
    ((mock *)ctx)->begins++;
    return NCL_SUCCESS;
}

static const ncl_hal_ops mock_ops = {.caps = mock_caps, .begin = mock_begin};

static ncl_comm *mock_comm(mock *m, int nranks, int rank)
{
    static ncl_hal hal; /* test-only; the comm copies it */
    hal.ops = &mock_ops;
    hal.ctx = m;
    ncl_config cfg = NCL_CONFIG_INIT;
    cfg.alloc = alloc_cb;
    cfg.free = free_cb;
    ncl_comm *comm = NULL;
    assert_int_equal(ncl_comm_create(&comm, nranks, rank, &hal, &cfg), NCL_SUCCESS);
    return comm;
}

/* Every bad argument returns invalid-argument with a message, and neither the backend nor the
 * buffers are touched. */
static void test_bad_arguments(void **state)
{
    (void)state;
    mock m = {0};
    ncl_comm *comm = mock_comm(&m, 4, 1);
    _Alignas(64) float buf[64], out[64];
    memset(buf, 0xab, sizeof buf);
    memset(out, 0xcd, sizeof out);

    struct {
        ncl_result got;
        const char *needle;
    } cases[] = {
        {ncl_allreduce(NULL, out, 8, NCL_FLOAT32, NCL_SUM, comm), "sendbuf is NULL"},
        {ncl_allreduce(buf, NULL, 8, NCL_FLOAT32, NCL_SUM, comm), "recvbuf is NULL"},
        {ncl_allreduce(buf, out, 8, (ncl_dtype)42, NCL_SUM, comm), "unknown datatype"},
        {ncl_allreduce(buf, out, 8, NCL_FLOAT32, (ncl_op)9, comm), "unknown op"},
        {ncl_allreduce(buf, out, SIZE_MAX / 2, NCL_FLOAT32, NCL_SUM, comm), "overflows"},
        {ncl_allgather(buf, out, SIZE_MAX / 8, NCL_FLOAT64, comm), "overflows"},
        {ncl_broadcast(buf, out, 8, NCL_FLOAT32, 4, comm), "root 4 out of range"},
        {ncl_reduce(buf, out, 8, NCL_FLOAT32, NCL_MAX, -1, comm), "root -1 out of range"},
        {ncl_allreduce(buf, (char *)buf + 64, 32, NCL_FLOAT32, NCL_SUM, comm), "overlap"},
        {ncl_allreduce((char *)buf + 4, out, 8, NCL_FLOAT32, NCL_SUM, comm), "aligned to 64"},
        {ncl_reduce_scatter(buf, out, 4, (ncl_dtype)-1, NCL_SUM, comm), "unknown datatype"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(cases[i].got, NCL_ERR_INVALID_ARGUMENT);
    }
    /* Messages: re-run each case to read its own message. */
    assert_int_equal(ncl_allreduce(NULL, out, 8, NCL_FLOAT32, NCL_SUM, comm), NCL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(ncl_comm_last_error(comm), "sendbuf is NULL"));
    assert_int_equal(ncl_broadcast(buf, out, 8, NCL_FLOAT32, 4, comm), NCL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(ncl_comm_last_error(comm), "root 4 out of range (allowed: 0..3)"));
    assert_int_equal(ncl_allreduce(buf, out, 8, (ncl_dtype)42, NCL_SUM, comm), NCL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(ncl_comm_last_error(comm), "unknown datatype 42"));
    assert_int_equal(ncl_allreduce((char *)buf + 4, out, 8, NCL_FLOAT32, NCL_SUM, comm),
                     NCL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(ncl_comm_last_error(comm), "aligned to 64 bytes"));

    assert_int_equal(m.begins, 0);
    for (size_t i = 0; i < sizeof buf; i++)
        assert_int_equal(((unsigned char *)buf)[i], 0xab);
    for (size_t i = 0; i < sizeof out; i++)
        assert_int_equal(((unsigned char *)out)[i], 0xcd);

    /* Broadcast's sendbuf is only read on the root; reduce's recvbuf only on the root. */
    assert_int_equal(ncl_broadcast(NULL, NULL, 8, NCL_FLOAT32, 0, comm), NCL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(ncl_comm_last_error(comm), "recvbuf is NULL"));
    /* Count 0 is a successful no-op, even with NULL buffers. */
    assert_int_equal(ncl_allreduce(NULL, NULL, 0, NCL_FLOAT32, NCL_SUM, comm), NCL_SUCCESS);
    assert_int_equal(m.begins, 0);
    ncl_comm_destroy(comm);
}

static void test_comm_create_rejects_bad_config(void **state)
{
    (void)state;
    mock m = {0};
    ncl_hal hal = {&mock_ops, &m};
    ncl_config cfg = NCL_CONFIG_INIT;
    cfg.alloc = alloc_cb;
    cfg.free = free_cb;
    ncl_comm *comm = (ncl_comm *)0x1;
    assert_int_equal(ncl_comm_create(&comm, 0, 0, &hal, &cfg), NCL_ERR_INVALID_ARGUMENT);
    assert_null(comm);
    assert_int_equal(ncl_comm_create(&comm, 2, 2, &hal, &cfg), NCL_ERR_INVALID_ARGUMENT);
    ncl_config bad = cfg;
    bad.version = 99;
    assert_int_equal(ncl_comm_create(&comm, 2, 0, &hal, &bad), NCL_ERR_INVALID_ARGUMENT);
    bad = cfg;
    bad.channels = NCL_MAX_QUEUES + 1;
    assert_int_equal(ncl_comm_create(&comm, 2, 0, &hal, &bad), NCL_ERR_INVALID_ARGUMENT);
    bad = cfg;
    bad.algorithm[NCL_COLL_ALLREDUCE] = NCL_ALGO_TREE; /* tree does not implement allreduce */
    assert_int_equal(ncl_comm_create(&comm, 2, 0, &hal, &bad), NCL_ERR_INVALID_ARGUMENT);
    bad = cfg;
    bad.alloc = NULL;
    assert_int_equal(ncl_comm_create(&comm, 2, 0, &hal, &bad), NCL_ERR_INVALID_ARGUMENT);
    /* rings: each must name every rank once; a count needs the array and the array a count */
    const int32_t dup[] = {0, 1, 1}, out_of_range[] = {0, 1, 3}, ok[] = {2, 0, 1, 0, 2, 1};
    bad = cfg;
    bad.rings = dup, bad.ring_count = 1;
    assert_int_equal(ncl_comm_create(&comm, 3, 0, &hal, &bad), NCL_ERR_INVALID_ARGUMENT);
    bad.rings = out_of_range;
    assert_int_equal(ncl_comm_create(&comm, 3, 0, &hal, &bad), NCL_ERR_INVALID_ARGUMENT);
    bad.rings = NULL;
    assert_int_equal(ncl_comm_create(&comm, 3, 0, &hal, &bad), NCL_ERR_INVALID_ARGUMENT);
    bad.rings = ok, bad.ring_count = 0;
    assert_int_equal(ncl_comm_create(&comm, 3, 0, &hal, &bad), NCL_ERR_INVALID_ARGUMENT);
    bad.ring_count = 2;
    assert_int_equal(ncl_comm_create(&comm, 3, 0, &hal, &bad), NCL_SUCCESS);
    ncl_comm_destroy(comm);

    assert_int_equal(ncl_comm_create(&comm, 3, 2, &hal, &cfg), NCL_SUCCESS);
    int v = -1;
    assert_int_equal(ncl_comm_rank(comm, &v), NCL_SUCCESS);
    assert_int_equal(v, 2);
    assert_int_equal(ncl_comm_size(comm, &v), NCL_SUCCESS);
    assert_int_equal(v, 3);
    assert_int_equal(ncl_comm_set_algorithm(comm, NCL_COLL_BROADCAST, NCL_ALGO_RING), NCL_ERR_INVALID_ARGUMENT);
    assert_int_equal(ncl_comm_set_algorithm(comm, NCL_COLL_BROADCAST, NCL_ALGO_TREE), NCL_SUCCESS);
    const uint32_t weights[] = {3, 1};
    assert_int_equal(ncl_comm_set_ring_weights(comm, weights), NCL_ERR_INVALID_ARGUMENT); /* no rings */
    assert_int_equal(ncl_comm_set_ring_weights(NULL, weights), NCL_ERR_INVALID_ARGUMENT);
    ncl_comm_destroy(comm);
    bad = cfg;
    bad.rings = ok, bad.ring_count = 2; /* rings without weights: they can be set later */
    assert_int_equal(ncl_comm_create(&comm, 3, 0, &hal, &bad), NCL_SUCCESS);
    assert_int_equal(ncl_comm_set_ring_weights(comm, weights), NCL_SUCCESS);
    const uint32_t zero[] = {3, 0};
    assert_int_equal(ncl_comm_set_ring_weights(comm, zero), NCL_ERR_INVALID_ARGUMENT);
    assert_int_equal(ncl_comm_set_ring_weights(comm, NULL), NCL_SUCCESS);
    ncl_comm_destroy(comm);
}

static void test_strerror_and_names(void **state)
{
    (void)state;
    for (int r = 0; r < NCL_RESULT_COUNT; r++) {
        assert_non_null(ncl_strerror((ncl_result)r));
        for (int s = 0; s < r; s++)
            assert_string_not_equal(ncl_strerror((ncl_result)r), ncl_strerror((ncl_result)s));
    }
    assert_non_null(strstr(ncl_strerror((ncl_result)1234), "unknown"));
    assert_string_equal(ncl_dtype_name(NCL_FLOAT32), "float");
    assert_string_equal(ncl_op_name(NCL_AVG), "avg");
    assert_string_equal(ncl_coll_name(NCL_COLL_REDUCE_SCATTER), "reduce_scatter");
    assert_string_equal(ncl_algo_name(NCL_ALGO_CHAIN), "chain");
    assert_int_equal(ncl_dtype_size(NCL_BFLOAT16), 2);
    assert_true(ncl_algo_supported(NCL_COLL_BROADCAST, NCL_ALGO_CHAIN));
    assert_false(ncl_algo_supported(NCL_COLL_ALLREDUCE, NCL_ALGO_CHAIN));
}

/* ---- on the host backend ---- */

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

typedef struct absent_world {
    int absent;                /* this rank never calls the collective (but stays alive) */
    atomic_int returned;       /* ranks that returned from the collective */
    char errors[8][400];
    uint64_t elapsed_ms[8];
} absent_world;

static ncl_result absent_rank_fn(ncl_comm *comm, void *arg)
{
    absent_world *w = arg;
    int rank;
    ncl_comm_rank(comm, &rank);
    if (rank == w->absent) {
        /* Alive but silent, like a rank stuck elsewhere, until all the others gave up. */
        while (atomic_load(&w->returned) < 4)
            nanosleep(&(struct timespec){0, 1000000}, NULL);
        return NCL_SUCCESS;
    }
    float buf[256];
    for (int i = 0; i < 256; i++)
        buf[i] = (float)i;
    uint64_t t0 = now_ms();
    ncl_result rc = ncl_allreduce(buf, buf, 256, NCL_FLOAT32, NCL_SUM, comm);
    w->elapsed_ms[rank] = now_ms() - t0;
    atomic_fetch_add(&w->returned, 1);
    snprintf(w->errors[rank], sizeof w->errors[rank], "%s", ncl_comm_last_error(comm));
    /* The communicator is unusable afterwards, and says so: this call, with the failure that broke it. */
    if (ncl_allreduce(buf, buf, 256, NCL_FLOAT32, NCL_SUM, comm) != NCL_ERR_INVALID_USAGE)
        return NCL_ERR_INTERNAL;
    char first[61]; /* the earlier failure's opening words are in it (the whole may be cut) */
    snprintf(first, sizeof first, "%s", w->errors[rank]);
    if (!strstr(ncl_comm_last_error(comm), "allreduce: refused: the communicator broke when collective #1 failed") ||
        !strstr(ncl_comm_last_error(comm), first))
        return NCL_ERR_INTERNAL;
    return rc;
}

/* A rank that never joins: every other rank returns a timeout within the configured time, and the
 * ranks next to it name it. */
static void test_absent_rank_times_out(void **state)
{
    (void)state;
    {
        absent_world w = {.absent = 3};
        ncl_host_config cfg = NCL_HOST_CONFIG_INIT;
        cfg.nranks = 5;
        cfg.comm.timeout_ns = 200u * 1000u * 1000u;
        ncl_result results[5];
        ncl_result rc = ncl_host_run_cfg(&cfg, absent_rank_fn, &w, results);
        assert_int_equal(rc, results[0]);
        for (int r = 0; r < 5; r++) {
            if (r == w.absent) {
                assert_int_equal(results[r], NCL_SUCCESS);
                continue;
            }
            /* Ranks further away may instead see their own peer give up first (remote error). */
            assert_true(results[r] == NCL_ERR_TIMEOUT || results[r] == NCL_ERR_REMOTE);
            assert_non_null(strstr(w.errors[r], "allreduce #1 (ring)"));
            /* Generous bound: the chain of waits behind the missing rank is at most 4 long. */
            assert_true(w.elapsed_ms[r] < 5 * 200 + 2000);
        }
        /* Its ring neighbours wait on it directly, and time out naming it. */
        assert_int_equal(results[2], NCL_ERR_TIMEOUT);
        assert_int_equal(results[4], NCL_ERR_TIMEOUT);
        assert_non_null(strstr(w.errors[2], "timed out: queue 0 step 0 waited"));
        assert_non_null(strstr(w.errors[2], "from rank 3, which never recorded it"));
        assert_non_null(strstr(w.errors[4], "from rank 3, which never recorded it"));
    }
}

typedef struct nb_world {
    atomic_int failures;
} nb_world;

static ncl_result nonblocking_fn(ncl_comm *comm, void *arg)
{
    nb_world *w = arg;
    int rank, n;
    ncl_comm_rank(comm, &rank);
    ncl_comm_size(comm, &n);
    enum { COUNT = 10007 };
    int32_t *send = malloc(COUNT * sizeof *send), *recv = malloc(COUNT * sizeof *recv);
    for (int i = 0; i < COUNT; i++)
        send[i] = i * (rank + 1);
    ncl_result rc = ncl_allreduce_start(send, recv, COUNT, NCL_INT32, NCL_SUM, comm);
    if (rc == NCL_SUCCESS) {
        /* A second collective while one runs is refused, and the first one is unharmed. */
        if (ncl_allreduce_start(send, recv, COUNT, NCL_INT32, NCL_SUM, comm) != NCL_ERR_INVALID_USAGE)
            atomic_fetch_add(&w->failures, 1);
        int done = 0;
        while (rc == NCL_SUCCESS && !done)
            rc = ncl_test(comm, &done);
        if (rc == NCL_SUCCESS)
            rc = ncl_wait(comm); /* already done: returns at once */
    }
    int sum_ranks = n * (n + 1) / 2;
    for (int i = 0; i < COUNT && rc == NCL_SUCCESS; i++)
        if (recv[i] != i * sum_ranks) {
            atomic_fetch_add(&w->failures, 1);
            break;
        }
    /* ncl_wait form with a broadcast */
    if (rc == NCL_SUCCESS)
        rc = ncl_broadcast_start(send, recv, COUNT, NCL_INT32, n - 1, comm);
    if (rc == NCL_SUCCESS)
        rc = ncl_wait(comm);
    for (int i = 0; i < COUNT && rc == NCL_SUCCESS; i++)
        if (recv[i] != i * n) {
            atomic_fetch_add(&w->failures, 1);
            break;
        }
    free(send);
    free(recv);
    return rc;
}

static void test_nonblocking(void **state)
{
    (void)state;
    nb_world w = {0};
    assert_int_equal(ncl_host_run(4, nonblocking_fn, &w), NCL_SUCCESS);
    assert_int_equal(atomic_load(&w.failures), 0);
}

/* Same inputs => identical results on every rank and every run, even for float sums whose value
 * depends on the order of additions. */
enum { DET_COUNT = 50021, DET_RANKS = 7 };
typedef struct det_world {
    float results[DET_RANKS][DET_COUNT];
} det_world;

static ncl_result determinism_fn(ncl_comm *comm, void *arg)
{
    det_world *w = arg;
    int rank;
    ncl_comm_rank(comm, &rank);
    float *send = malloc(DET_COUNT * sizeof *send);
    uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t)(rank + 1);
    for (int i = 0; i < DET_COUNT; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        send[i] = (float)(x % 100000) / 7.0f - 5000.0f; /* not exactly summable */
    }
    ncl_result rc = ncl_allreduce(send, w->results[rank], DET_COUNT, NCL_FLOAT32, NCL_SUM, comm);
    free(send);
    return rc;
}

static void test_determinism(void **state)
{
    (void)state;
    det_world *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    ncl_host_config cfg = NCL_HOST_CONFIG_INIT;
    cfg.nranks = DET_RANKS;
    cfg.comm.slice_bytes = 4096; /* many rounds and both channels */
    assert_int_equal(ncl_host_run_cfg(&cfg, determinism_fn, a, NULL), NCL_SUCCESS);
    assert_int_equal(ncl_host_run_cfg(&cfg, determinism_fn, b, NULL), NCL_SUCCESS);
    for (int r = 0; r < DET_RANKS; r++) {
        assert_memory_equal(a->results[r], a->results[0], sizeof a->results[0]);
        assert_memory_equal(b->results[r], a->results[0], sizeof a->results[0]);
    }
    free(a);
    free(b);
}

/* The checker runs on launch when asked for, and a proven shape is not re-proven. */
static ncl_result checked_fn(ncl_comm *comm, void *arg)
{
    (void)arg;
    int64_t buf[33];
    for (int i = 0; i < 33; i++)
        buf[i] = i;
    ncl_result rc = NCL_SUCCESS;
    for (int it = 0; it < 3 && rc == NCL_SUCCESS; it++)
        rc = ncl_allreduce(buf, buf, 33, NCL_INT64, NCL_MAX, comm);
    for (int i = 0; i < 33 && rc == NCL_SUCCESS; i++)
        if (buf[i] != i)
            rc = NCL_ERR_INTERNAL;
    return rc;
}

static void test_checked_launch(void **state)
{
    (void)state;
    ncl_host_config cfg = NCL_HOST_CONFIG_INIT;
    cfg.nranks = 3;
    cfg.comm.check_schedules = 1;
    assert_int_equal(ncl_host_run_cfg(&cfg, checked_fn, NULL, NULL), NCL_SUCCESS);
}

/* ---- the planner's input from a config and a backend's capabilities ---- */

/* ncl_plan_env_init copies what the planner reads, clamped as a communicator clamps it. */
static void test_plan_env_from_config(void **state)
{
    (void)state;
    static const ncl_cost costs[1] = {{NCL_COLL_ALLREDUCE, NCL_ALGO_HD, 0, 100, 1000, 0, 0, 0, 0, 0, 0, 0, 0, 0}};
    ncl_config cfg = NCL_CONFIG_INIT;
    cfg.channels = 4;
    cfg.slice_bytes = 12345;
    cfg.link_alpha_ns = 77;
    cfg.link_gbps = 9;
    cfg.mem_gbps = 400;
    cfg.costs = costs;
    cfg.cost_count = 1;
    cfg.deterministic = 1;
    cfg.wide_accumulation = 1;
    cfg.local_size = 2;
    cfg.inter_algo = NCL_ALGO_HD;
    ncl_hal_caps caps;
    memset(&caps, 0, sizeof caps);
    mock_caps(NULL, &caps); /* 2 queues, 64 KiB of scratch */
    caps.inline_align = 4;
    caps.dma_engines = 3;
    ncl_plan_env env;
    memset(&env, 0xa5, sizeof env);
    ncl_plan_env_init(&env, &cfg, &caps);
    assert_int_equal(env.max_queues, 2);
    assert_int_equal(env.channels, 2); /* 4 asked, clamped to the backend's queues */
    assert_int_equal(env.slice_bytes, 12345);
    assert_int_equal(env.scratch_bytes, 1 << 16);
    assert_int_equal(env.link_alpha_ns, 77);
    assert_int_equal(env.link_gbps, 9);
    assert_int_equal(env.mem_gbps, 400);
    assert_ptr_equal(env.costs, costs);
    assert_int_equal(env.cost_count, 1);
    assert_int_equal(env.deterministic, 1);
    assert_int_equal(env.wide_accumulation, 1);
    assert_int_equal(env.local_size, 2);
    assert_int_equal(env.inter_algo, NCL_ALGO_HD);
    assert_null(env.schedule);
    assert_ptr_equal(env.inline_ops, caps.inline_ops);
    assert_int_equal(env.inline_align, 4);
    assert_int_equal(env.dma_engines, 3);
    /* the rings are the communicator's: identity until ncl_plan_env_rings */
    assert_null(env.ring_order);
    assert_null(env.ring_pos);
    assert_null(env.ring_weights);
    assert_int_equal(env.ring_count, 0);
    assert_null(env.local_order);
    assert_null(env.local_pos);
    assert_int_equal(env.local_ring_count, 0);

    /* no caps: every queue, no scratch, everything inline; queues above NCL_MAX_QUEUES clamp */
    ncl_plan_env_init(&env, &cfg, NULL);
    assert_int_equal(env.max_queues, NCL_MAX_QUEUES);
    assert_int_equal(env.channels, 4);
    assert_int_equal(env.scratch_bytes, 0);
    assert_null(env.inline_ops);
    assert_int_equal(env.dma_engines, 0);
    caps.max_queues = 1000;
    ncl_plan_env_init(&env, &cfg, &caps);
    assert_int_equal(env.max_queues, NCL_MAX_QUEUES);
}

/* ncl_plan_env_rings: the rings, their inverse in the caller's tables, bad rings refused. */
static void test_plan_env_rings(void **state)
{
    (void)state;
    static const int32_t rings[8] = {0, 1, 2, 3, 3, 1, 0, 2};
    static const uint32_t weights[2] = {5, 7};
    static const int32_t local_rings[2] = {1, 0};
    ncl_config cfg = NCL_CONFIG_INIT;
    cfg.rings = rings;
    cfg.ring_count = 2;
    cfg.ring_weights = weights;
    cfg.local_size = 2;
    cfg.local_rings = local_rings;
    cfg.local_ring_count = 1;
    ncl_plan_env env;
    ncl_plan_env_init(&env, &cfg, NULL);
    int32_t pos[8], lpos[2];
    assert_int_equal(ncl_plan_env_rings(&env, &cfg, 4, pos, lpos), NCL_SUCCESS);
    assert_ptr_equal(env.ring_order, rings);
    assert_ptr_equal(env.ring_pos, pos);
    assert_ptr_equal(env.ring_weights, weights);
    assert_int_equal(env.ring_count, 2);
    for (int c = 0; c < 2; c++)
        for (int i = 0; i < 4; i++)
            assert_int_equal(pos[c * 4 + rings[c * 4 + i]], i);
    assert_ptr_equal(env.local_order, local_rings);
    assert_ptr_equal(env.local_pos, lpos);
    assert_int_equal(env.local_ring_count, 1);
    assert_int_equal(lpos[1], 0);
    assert_int_equal(lpos[0], 1);

    /* a ring naming a rank twice, a rank out of range, a missing table: refused, env unchanged */
    ncl_plan_env before = env;
    static const int32_t twice[8] = {0, 1, 1, 3, 0, 1, 2, 3}, outside[8] = {0, 1, 2, 4, 0, 1, 2, 3};
    cfg.rings = twice;
    assert_int_equal(ncl_plan_env_rings(&env, &cfg, 4, pos, lpos), NCL_ERR_INVALID_ARGUMENT);
    cfg.rings = outside;
    assert_int_equal(ncl_plan_env_rings(&env, &cfg, 4, pos, lpos), NCL_ERR_INVALID_ARGUMENT);
    cfg.rings = rings;
    assert_int_equal(ncl_plan_env_rings(&env, &cfg, 4, NULL, lpos), NCL_ERR_INVALID_ARGUMENT);
    assert_int_equal(ncl_plan_env_rings(&env, &cfg, 4, pos, NULL), NCL_ERR_INVALID_ARGUMENT);
    assert_memory_equal(&env, &before, sizeof env);

    /* no rings: identity, no tables needed */
    ncl_config plain = NCL_CONFIG_INIT;
    ncl_plan_env_init(&env, &plain, NULL);
    assert_int_equal(ncl_plan_env_rings(&env, &plain, 4, NULL, NULL), NCL_SUCCESS);
    assert_null(env.ring_order);
    assert_null(env.local_order);

    /* rings given with their inverse: env points at both and needs no table; an inverse that is
     * not, or one without rings, is refused */
    static const int32_t inverse[8] = {0, 1, 2, 3, 2, 1, 3, 0}, wrong[8] = {0, 1, 2, 3, 2, 1, 0, 3};
    cfg.ring_positions = inverse;
    assert_int_equal(ncl_plan_env_rings(&env, &cfg, 4, NULL, lpos), NCL_SUCCESS);
    assert_ptr_equal(env.ring_order, rings);
    assert_ptr_equal(env.ring_pos, inverse);
    before = env;
    cfg.ring_positions = wrong;
    assert_int_equal(ncl_plan_env_rings(&env, &cfg, 4, NULL, lpos), NCL_ERR_INVALID_ARGUMENT);
    plain.ring_positions = inverse;
    assert_int_equal(ncl_plan_env_rings(&env, &plain, 4, NULL, NULL), NCL_ERR_INVALID_ARGUMENT);
    assert_memory_equal(&env, &before, sizeof env);
}

/* A tool that plans with ncl_plan_env_init from the communicator's config and its backend's
 * caps picks the algorithm the communicator runs (auto, with a cost table and rings). */
typedef struct predict_world {
    const ncl_config *cfg;
    atomic_int mismatches, runs, seen; /* seen: 1 << algo of every run */
} predict_world;

static ncl_result predict_fn(ncl_comm *comm, void *arg)
{
    predict_world *w = arg;
    int rank, nranks;
    ncl_comm_rank(comm, &rank);
    ncl_comm_size(comm, &nranks);
    ncl_hal_caps caps;
    memset(&caps, 0, sizeof caps);
    ncl_result rc = ncl_hal_caps_get(ncl_comm_hal(comm), &caps);
    int32_t pos[NCL_MAX_QUEUES * 8];
    ncl_plan_env env;
    ncl_plan_env_init(&env, w->cfg, &caps);
    if (rc == NCL_SUCCESS)
        rc = ncl_plan_env_rings(&env, w->cfg, nranks, pos, NULL);
    static float buf[8][1 << 14];
    for (size_t count = 1; count <= (1u << 14) && rc == NCL_SUCCESS; count *= 8) {
        rc = ncl_allreduce(buf[rank], buf[rank], count, NCL_FLOAT32, NCL_SUM, comm);
        ncl_rank_state st;
        ncl_comm_state(comm, &st);
        ncl_plan plan;
        if (rc == NCL_SUCCESS &&
            ncl_plan_make(&plan, NCL_COLL_ALLREDUCE, NCL_ALGO_AUTO, nranks, rank, 0, count, NCL_FLOAT32, NCL_SUM,
                          1, &env) == NCL_SUCCESS) {
            atomic_fetch_add(&w->runs, 1);
            atomic_fetch_or(&w->seen, 1 << st.algo);
            if (plan.algo != st.algo)
                atomic_fetch_add(&w->mismatches, 1);
        }
    }
    return rc;
}

static void test_plan_env_predicts_auto(void **state)
{
    (void)state;
    /* ring costs a lot of latency, hd a lot per byte: small buffers go hd, large ones ring */
    static const ncl_cost costs[2] = {{NCL_COLL_ALLREDUCE, NCL_ALGO_RING, 0, 1000000, 1000, 0, 0, 0, 0, 0, 0, 0, 0, 0},
                                      {NCL_COLL_ALLREDUCE, NCL_ALGO_HD, 0, 1000, 100000000, 0, 0, 0, 0, 0, 0, 0, 0, 0}};
    static const int32_t rings[8] = {0, 1, 2, 3, 3, 2, 1, 0};
    ncl_host_config cfg = NCL_HOST_CONFIG_INIT;
    cfg.nranks = 4;
    cfg.comm.costs = costs;
    cfg.comm.cost_count = 2;
    cfg.comm.rings = rings;
    cfg.comm.ring_count = 2;
    predict_world w = {&cfg.comm, 0, 0, 0};
    assert_int_equal(ncl_host_run_cfg(&cfg, predict_fn, &w, NULL), NCL_SUCCESS);
    assert_int_equal(atomic_load(&w.runs), 4 * 5);
    assert_int_equal(atomic_load(&w.mismatches), 0);
    assert_int_equal(atomic_load(&w.seen), (1 << NCL_ALGO_HD) | (1 << NCL_ALGO_RING)); /* both regimes ran */
}

/* The planner's input from a default config with these cost lines (and a backend's caps, or none). */
static void plan_env_with_costs(ncl_plan_env *env, const ncl_cost *costs, uint32_t count, const ncl_hal_caps *caps)
{
    ncl_config cfg = NCL_CONFIG_INIT;
    cfg.costs = costs;
    cfg.cost_count = count;
    ncl_plan_env_init(env, &cfg, caps);
}

/* A cost line's out-of-place terms count only out of place: there auto may choose otherwise. */
static void test_cost_placement(void **state)
{
    (void)state;
    static const ncl_cost costs[2] = {{NCL_COLL_ALLREDUCE, NCL_ALGO_RING, 0, 1000, 0, 0, 0, 0, 0, 0, 5000, 1000, 0, 0},
                                      {NCL_COLL_ALLREDUCE, NCL_ALGO_DBTREE, 0, 3000, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}};
    ncl_plan_env env;
    plan_env_with_costs(&env, costs, 2, NULL);
    for (int inplace = 0; inplace < 2; inplace++) {
        ncl_plan plan;
        assert_int_equal(ncl_plan_make(&plan, NCL_COLL_ALLREDUCE, NCL_ALGO_AUTO, 4, 0, 0, 1000, NCL_FLOAT32, NCL_SUM,
                                       inplace, &env),
                         NCL_SUCCESS);
        assert_int_equal(plan.algo, inplace ? NCL_ALGO_RING : NCL_ALGO_DBTREE); /* no scratch: no hd */
        plan.algo = NCL_ALGO_RING; /* 4000 bytes: 1000 ns, out of place + 5000 + 4 ns */
        assert_int_equal(ncl_plan_cost_ns(&plan, &env), inplace ? 1000u : 6004u);
    }
}

/* Negative out-of-place terms take work off (never below 0): in place needs a copy out of place not. */
static void test_cost_placement_negative(void **state)
{
    (void)state;
    static const ncl_cost costs[2] = {{NCL_COLL_ALLREDUCE, NCL_ALGO_RING, 0, 5000, 0, 0, 0, 0, 0, 0, -2000, -1000000, 0, 0},
                                      {NCL_COLL_ALLREDUCE, NCL_ALGO_HD, 0, 5000, 0, 0, 0, 0, 0, 0, -9000, 0, 0, 0}};
    ncl_plan_env env;
    plan_env_with_costs(&env, costs, 2, NULL);
    const uint64_t want[2][2] = {{5000 - 2000 - 1000, 5000}, {0, 5000}}; /* [algo][inplace], 1000 bytes */
    for (int a = 0; a < 2; a++)
        for (int inplace = 0; inplace < 2; inplace++) {
            ncl_plan plan;
            memset(&plan, 0, sizeof plan);
            plan.coll = NCL_COLL_ALLREDUCE;
            plan.algo = a ? NCL_ALGO_HD : NCL_ALGO_RING;
            plan.nranks = 4;
            plan.count = 250;
            plan.esize = 4;
            plan.inplace = (uint8_t)inplace;
            assert_int_equal(ncl_plan_cost_ns(&plan, &env), want[a][inplace]);
        }
}

/* A floor bounds the line it names (floor = line + 2) or every line (1); the plan runs the line
 * that is cheapest once raised to its floors. */
static void test_cost_line_floors(void **state)
{
    (void)state;
    static const ncl_cost costs[5] = {{NCL_COLL_ALLREDUCE, NCL_ALGO_RING, 0, 1000, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
                                      {NCL_COLL_ALLREDUCE, NCL_ALGO_RING, 0, 5000, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0},
                                      {NCL_COLL_ALLREDUCE, NCL_ALGO_RING, 0, 3000, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
                                      {NCL_COLL_ALLREDUCE, NCL_ALGO_RING, 0, 2000, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0},
                                      {NCL_COLL_ALLREDUCE, NCL_ALGO_RING, 0, 4000, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0}};
    const uint32_t counts[2] = {4, 5}, cost[2] = {3000, 4000};
    for (int k = 0; k < 2; k++) {
        ncl_plan_env env;
        plan_env_with_costs(&env, costs, counts[k], NULL);
        ncl_plan plan;
        assert_int_equal(ncl_plan_make(&plan, NCL_COLL_ALLREDUCE, NCL_ALGO_RING, 4, 0, 0, 1000, NCL_FLOAT32, NCL_SUM, 1,
                                       &env),
                         NCL_SUCCESS);
        assert_int_equal(plan.cost_line, 1); /* line 0: 1000 raised to 5000 by its own floor */
        assert_int_equal(ncl_plan_cost_ns(&plan, &env), cost[k]);
    }
}

/* The plan runs the schedule its cheapest line prices (ncl_cost.variant), whatever its index. */
static void test_cost_line_variant(void **state)
{
    (void)state;
    static const ncl_cost costs[3] = {{NCL_COLL_ALLREDUCE, NCL_ALGO_RING, 0, 5000, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0},
                                      {NCL_COLL_ALLREDUCE, NCL_ALGO_RING, 0, 2000, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0},
                                      {NCL_COLL_ALLREDUCE, NCL_ALGO_RING, 0, 3000, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}};
    /* from: first entry given; the cheapest line and its variant */
    const uint32_t from[3] = {0, 1, 2}, line[3] = {1, 0, 0}, variant[3] = {1, 1, 0};
    for (int k = 0; k < 3; k++) {
        ncl_plan_env env;
        plan_env_with_costs(&env, costs + from[k], 3 - from[k], NULL);
        ncl_plan plan;
        assert_int_equal(ncl_plan_make(&plan, NCL_COLL_ALLREDUCE, NCL_ALGO_RING, 4, 0, 0, 1000, NCL_FLOAT32, NCL_SUM, 1,
                                       &env),
                         NCL_SUCCESS);
        assert_int_equal(plan.cost_line, line[k]);
        assert_int_equal(plan.cost_variant, variant[k]);
    }
}

/* Latency-path lines (ncl_cost.path) price the calls on the latency path alone, the others every
 * other call; without a latency path, or without such lines for the collective, they are not used.
 * Here the ring is the cheaper on the bandwidth path and the double binary tree on the latency path. */
static void test_cost_latency_path(void **state)
{
    (void)state;
    static const ncl_cost costs[4] = {
        {NCL_COLL_ALLREDUCE, NCL_ALGO_RING, 0, 1000, 0, 0, 0, 0, 0, 0, 0, 0, 0, NCL_COST_PATH_BANDWIDTH},
        {NCL_COLL_ALLREDUCE, NCL_ALGO_DBTREE, 0, 3000, 0, 0, 0, 0, 0, 0, 0, 0, 0, NCL_COST_PATH_BANDWIDTH},
        {NCL_COLL_ALLREDUCE, NCL_ALGO_RING, 0, 900, 0, 0, 0, 0, 0, 0, 0, 0, 0, NCL_COST_PATH_LATENCY},
        {NCL_COLL_ALLREDUCE, NCL_ALGO_DBTREE, 0, 400, 0, 0, 0, 0, 0, 0, 0, 0, 0, NCL_COST_PATH_LATENCY}};
    ncl_config cfg = NCL_CONFIG_INIT;
    cfg.costs = costs;
    cfg.cost_count = 4;
    cfg.latency_path_bytes[NCL_COLL_ALLREDUCE] = 1024; /* 256 floats */
    ncl_plan_env env;
    ncl_plan_env_init(&env, &cfg, NULL);
    /* count, algo auto picks, the cost it is priced at */
    const uint64_t count[3] = {256, 257, 4096};
    const ncl_algo algo[3] = {NCL_ALGO_DBTREE, NCL_ALGO_RING, NCL_ALGO_RING};
    const uint64_t ns[3] = {400, 1000, 1000};
    for (int k = 0; k < 3; k++) {
        ncl_plan plan;
        assert_int_equal(ncl_plan_make(&plan, NCL_COLL_ALLREDUCE, NCL_ALGO_AUTO, 4, 0, 0, count[k], NCL_FLOAT32,
                                       NCL_SUM, 1, &env),
                         NCL_SUCCESS);
        assert_int_equal(plan.algo, algo[k]);
        assert_int_equal(ncl_plan_cost_ns(&plan, &env), ns[k]);
    }
    /* another collective on the latency path has no lines of its own: the bandwidth path's */
    static const ncl_cost gather[2] = {
        {NCL_COLL_ALLGATHER, NCL_ALGO_RING, 0, 1000, 0, 0, 0, 0, 0, 0, 0, 0, 0, NCL_COST_PATH_BANDWIDTH},
        {NCL_COLL_ALLREDUCE, NCL_ALGO_RING, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, NCL_COST_PATH_LATENCY}};
    cfg.costs = gather;
    cfg.cost_count = 2;
    cfg.latency_path_bytes[NCL_COLL_ALLGATHER] = 1024;
    ncl_plan_env_init(&env, &cfg, NULL);
    ncl_plan plan;
    assert_int_equal(ncl_plan_make(&plan, NCL_COLL_ALLGATHER, NCL_ALGO_RING, 4, 0, 0, 16, NCL_FLOAT32, NCL_SUM, 0, &env),
                     NCL_SUCCESS);
    assert_int_equal(ncl_plan_cost_ns(&plan, &env), 1000);
}

/* Of a reduce (or broadcast) only the root knows the placement: the root in place and the other
 * ranks (one buffer each, out of place to the engine) must still choose the same algorithm,
 * here where the in-place lines favour the tree and the out-of-place ones the ring. */
static void test_cost_placement_rooted(void **state)
{
    (void)state;
    static const ncl_cost costs[2] = {{NCL_COLL_REDUCE, NCL_ALGO_RING, 0, 2000, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
                                      {NCL_COLL_REDUCE, NCL_ALGO_TREE, 0, 1000, 0, 0, 0, 0, 0, 0, 5000, 0, 0, 0}};
    ncl_hal_caps caps;
    memset(&caps, 0, sizeof caps);
    mock_caps(NULL, &caps); /* the chain reduce stages in scratch */
    ncl_plan_env env;
    plan_env_with_costs(&env, costs, 2, &caps);
    for (int rank = 0; rank < 4; rank++) {
        ncl_plan plan;
        assert_int_equal(ncl_plan_make(&plan, NCL_COLL_REDUCE, NCL_ALGO_AUTO, 4, rank, 1, 1000, NCL_FLOAT32,
                                       NCL_SUM, rank == 1, &env),
                         NCL_SUCCESS);
        assert_int_equal(plan.algo, NCL_ALGO_RING);
    }
}

/* ncl_comm_set_costs: a table priced again (a link degraded) changes what auto runs from the next
 * collective on, on every rank alike; a bigger table than the communicator's or a bad entry is
 * refused and leaves the table as it was. */
static const ncl_cost reprice_start[2] = {{NCL_COLL_ALLREDUCE, NCL_ALGO_RING, 0, 1000, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
                                          {NCL_COLL_ALLREDUCE, NCL_ALGO_HD, 0, 5000, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}};

static ncl_result reprice_fn(ncl_comm *comm, void *arg)
{
    (void)arg;
    int rank;
    ncl_comm_rank(comm, &rank);
    static float buf[4][64];
    ncl_rank_state st;
    ncl_result rc = ncl_allreduce(buf[rank], buf[rank], 64, NCL_FLOAT32, NCL_SUM, comm);
    ncl_comm_state(comm, &st);
    if (rc != NCL_SUCCESS || st.algo != NCL_ALGO_RING)
        return NCL_ERR_INTERNAL;
    ncl_cost repriced[2] = {reprice_start[0], reprice_start[1]};
    repriced[0].alpha_ns = 9000; /* the ring's link slowed: hd is now the cheaper */
    ncl_cost four[4] = {repriced[0], repriced[1], repriced[1], repriced[1]};
    ncl_cost bad[2] = {repriced[0], repriced[1]};
    bad[1].algo = NCL_ALGO_COUNT;
    ncl_cost bad_path[2] = {repriced[0], repriced[1]};
    bad_path[0].path = NCL_COST_PATH_LATENCY + 1;
    if (ncl_comm_set_costs(comm, four, 4) != NCL_ERR_INVALID_ARGUMENT ||
        !strstr(ncl_comm_last_error(comm), "room for 3") ||
        ncl_comm_set_costs(comm, bad_path, 2) != NCL_ERR_INVALID_ARGUMENT ||
        !strstr(ncl_comm_last_error(comm), "path 2") ||
        ncl_comm_set_costs(comm, bad, 2) != NCL_ERR_INVALID_ARGUMENT || ncl_comm_set_costs(NULL, bad, 2) == NCL_SUCCESS)
        return NCL_ERR_INTERNAL;
    rc = ncl_allreduce(buf[rank], buf[rank], 64, NCL_FLOAT32, NCL_SUM, comm); /* refused tables changed nothing */
    ncl_comm_state(comm, &st);
    if (rc != NCL_SUCCESS || st.algo != NCL_ALGO_RING || ncl_comm_set_costs(comm, repriced, 2) != NCL_SUCCESS)
        return NCL_ERR_INTERNAL;
    rc = ncl_allreduce(buf[rank], buf[rank], 64, NCL_FLOAT32, NCL_SUM, comm);
    ncl_comm_state(comm, &st);
    if (rc != NCL_SUCCESS || st.algo != NCL_ALGO_HD || ncl_comm_set_costs(comm, four, 3) != NCL_SUCCESS)
        return NCL_ERR_INTERNAL; /* a longer table, within the room asked for */
    rc = ncl_allreduce(buf[rank], buf[rank], 64, NCL_FLOAT32, NCL_SUM, comm);
    return rc == NCL_SUCCESS ? NCL_SUCCESS : NCL_ERR_INTERNAL;
}

static void test_set_costs(void **state)
{
    (void)state;
    ncl_host_config cfg = NCL_HOST_CONFIG_INIT;
    cfg.nranks = 4;
    cfg.comm.costs = reprice_start;
    cfg.comm.cost_count = 2;
    cfg.comm.cost_room = 3;
    assert_int_equal(ncl_host_run_cfg(&cfg, reprice_fn, NULL, NULL), NCL_SUCCESS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_comm_create_rejects_bad_config),
        cmocka_unit_test(test_strerror_and_names),
        cmocka_unit_test(test_absent_rank_times_out),
        cmocka_unit_test(test_nonblocking),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_checked_launch),
        cmocka_unit_test(test_plan_env_from_config),
        cmocka_unit_test(test_plan_env_rings),
        cmocka_unit_test(test_plan_env_predicts_auto),
        cmocka_unit_test(test_cost_placement),
        cmocka_unit_test(test_cost_placement_rooted),
        cmocka_unit_test(test_cost_placement_negative),
        cmocka_unit_test(test_cost_line_floors),
        cmocka_unit_test(test_cost_line_variant),
        cmocka_unit_test(test_cost_latency_path),
        cmocka_unit_test(test_set_costs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
