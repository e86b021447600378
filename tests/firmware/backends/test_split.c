/* test_split.c — ncl_comm_split, ncl_comm_create_group and ncl_send/ncl_recv on host threads (built with SPLIT_ON_MODEL: on the simulated machine; SPLIT_ON_ZMQ: rank processes over the zmq backend): groups that run at once, bit for bit, and their failures named. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ncl/ncl.h"
#include "ncl/ncl_diag.h"
#include "ncl/ncl_host.h"
#ifdef SPLIT_ON_MODEL
#include "harness/rs_simworld.h"
#endif
#ifdef SPLIT_ON_ZMQ
#include <sys/mman.h>
#include "zt_world.h"
#endif

enum { P = 8, N = 300001 }; /* N int32: over 1 MiB, several slices and rounds per step */

/* Rank functions run on their own threads: a failed check is printed and counted, never longjmp'd. */
#define EXPECT(cond)                                                                                  \
    do {                                                                                              \
        if (!(cond)) {                                                                                \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);                  \
            return NCL_ERR_INTERNAL;                                                                  \
        }                                                                                             \
    } while (0)

/* Runs fn on p ranks: host threads, or rank threads on the simulated machine of a scenario with p
 * ranks (argv). timeout_ns: the world communicator's (0: the default). */
#ifdef SPLIT_ON_MODEL
static const char *g_scenario8, *g_scenario2;
static ncl_result run_world(int p, ncl_host_fn fn, void *arg, uint64_t timeout_ns)
{
    ncl_config cfg = NCL_CONFIG_INIT;
    if (timeout_ns)
        cfg.timeout_ns = timeout_ns;
    ncl_result results[P];
    return rs_simworld_run_scenario((void *)(p == 2 ? g_scenario2 : g_scenario8), &cfg, p, fn, arg, results);
}
#elif defined(SPLIT_ON_ZMQ)
typedef struct zmq_job {
    ncl_host_fn fn;
    void *arg;
} zmq_job;

static int zmq_rank(zt_rank *r)
{
    const zmq_job *j = r->arg;
    ncl_result rc = j->fn(r->comm, j->arg);
    if (rc != NCL_SUCCESS)
        snprintf(r->msg, sizeof r->msg, "%s (%s)", ncl_strerror(rc), ncl_zmq_last_error(r->zmq));
    return rc != NCL_SUCCESS;
}

static ncl_result run_world(int p, ncl_host_fn fn, void *arg, uint64_t timeout_ns)
{
    zt_world w;
    memset(&w, 0, sizeof w);
    w.nranks = p;
    w.timeout_ns = timeout_ns;
    zmq_job job = {fn, arg};
    zt_result res[P];
    zt_run(&w, zmq_rank, &job, res);
    ncl_result rc = NCL_SUCCESS;
    for (int r = 0; r < p; r++)
        if (!res[r].exited || res[r].status) {
            fprintf(stderr, "rank %d: %s %d: %s\n", r, res[r].exited ? "exit" : "signal",
                    res[r].exited ? res[r].status : res[r].signal, res[r].msg);
            rc = NCL_ERR_INTERNAL;
        }
    return rc;
}
#else
static ncl_result run_world(int p, ncl_host_fn fn, void *arg, uint64_t timeout_ns)
{
    ncl_host_config cfg = NCL_HOST_CONFIG_INIT;
    cfg.nranks = p;
    if (timeout_ns)
        cfg.comm.timeout_ns = timeout_ns;
    cfg.comm.log_level = NCL_LOG_OFF; /* the failures below are expected; their messages are checked */
    return ncl_host_run_cfg(&cfg, fn, arg, NULL);
}
#endif

/* What ranks write for the test to check: in memory the rank processes share under zmq. */
static void *case_new(size_t bytes)
{
#ifdef SPLIT_ON_ZMQ
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(p != MAP_FAILED);
    return p; /* zeroed */
#else
    return test_calloc(1, bytes);
#endif
}

static void case_free(void *p, size_t bytes)
{
#ifdef SPLIT_ON_ZMQ
    munmap(p, bytes);
#else
    (void)bytes;
    test_free(p);
#endif
}

static void *split_alloc(void *ud, size_t bytes)
{
    (void)ud;
    return malloc(bytes);
}

static void split_free(void *ud, void *ptr)
{
    (void)ud;
    free(ptr);
}

static int rank_of(const ncl_comm *c)
{
    int r = -1;
    ncl_comm_rank(c, &r);
    return r;
}

static int size_of(const ncl_comm *c)
{
    int n = 0;
    ncl_comm_size(c, &n);
    return n;
}

static int32_t value(int world_rank, size_t i)
{
    return (int32_t)(world_rank * 1000003 + (int)(i % 9973) - 4000);
}

/* Allreduce (sum) of value(member, i) over the members of a group, checked element by element. */
static uint64_t wrong_sum(const int32_t *got, const int *members, int n)
{
    uint64_t wrong = 0;
    for (size_t i = 0; i < N; i++) {
        int64_t want = 0;
        for (int m = 0; m < n; m++)
            want += value(members[m], i);
        wrong += got[i] != (int32_t)want;
    }
    return wrong;
}

static int32_t *filled(int world_rank)
{
    int32_t *b = malloc(N * sizeof *b);
    for (size_t i = 0; b && i < N; i++)
        b[i] = value(world_rank, i);
    return b;
}

/* Odd and even ranks apart, each group ranked backwards (key -rank): sizes, ranks, sums, and each
 * group's own sequence numbers. */
static ncl_result groups_fn(ncl_comm *world, void *arg)
{
    (void)arg;
    int me = rank_of(world);
    int32_t *buf = filled(me);
    EXPECT(buf);
    EXPECT(ncl_allreduce(buf, buf, 16, NCL_INT32, NCL_SUM, world) == NCL_SUCCESS); /* world #1 */
    free(buf);
    buf = filled(me);
    ncl_comm *half = NULL;
    EXPECT(ncl_comm_split(world, me % 2, -me, NULL, &half) == NCL_SUCCESS);
    EXPECT(half && size_of(half) == P / 2 && rank_of(half) == (P - 1 - me) / 2);
    EXPECT(ncl_allreduce(buf, buf, N, NCL_INT32, NCL_SUM, half) == NCL_SUCCESS);
    int members[P / 2];
    for (int m = 0; m < P / 2; m++)
        members[m] = 2 * m + me % 2;
    EXPECT(wrong_sum(buf, members, P / 2) == 0);
    ncl_rank_state st;
    EXPECT(ncl_comm_state(half, &st) == NCL_SUCCESS && st.seq == 1); /* its own count */
    EXPECT(ncl_comm_state(world, &st) == NCL_SUCCESS && st.seq == 2); /* #1, the split's exchange */
    ncl_comm_destroy(half);
    free(buf);
    return NCL_SUCCESS;
}

static void test_split_groups(void **state)
{
    (void)state;
    assert_int_equal(run_world(P, groups_fn, NULL, 0), NCL_SUCCESS);
}

/* Allreduces on the rank's tensor-parallel group (its block of 4 ranks), its data-parallel pair
 * (r mod 4 and r mod 4 + 4) and the world, all three in flight at once and progressed together
 * until each has finished, each result checked. */
static ncl_result three_at_once(ncl_comm *world, ncl_comm *tp, ncl_comm *dp)
{
    const int me = rank_of(world);
    int tpm[4], dpm[2] = {me % 4, me % 4 + 4}, all[P];
    for (int m = 0; m < 4; m++)
        tpm[m] = me / 4 * 4 + m;
    for (int m = 0; m < P; m++)
        all[m] = m;
    int32_t *a = filled(me), *b = filled(me), *c = filled(me);
    EXPECT(a && b && c);
    EXPECT(ncl_allreduce_start(a, a, N, NCL_INT32, NCL_SUM, tp) == NCL_SUCCESS);
    EXPECT(ncl_allreduce_start(b, b, N, NCL_INT32, NCL_SUM, dp) == NCL_SUCCESS);
    EXPECT(ncl_allreduce_start(c, c, N, NCL_INT32, NCL_SUM, world) == NCL_SUCCESS);
    ncl_comm *running[3] = {tp, dp, world};
    for (int left = 3; left;) {
        left = 0;
        for (int k = 0; k < 3; k++) {
            int done = 1;
            if (running[k]) {
                EXPECT(ncl_test(running[k], &done) == NCL_SUCCESS);
                if (done)
                    running[k] = NULL;
            }
            left += !done;
        }
    }
    EXPECT(wrong_sum(a, tpm, 4) == 0 && wrong_sum(b, dpm, 2) == 0 && wrong_sum(c, all, P) == 0);
    free(a), free(b), free(c);
    return NCL_SUCCESS;
}

/* Tensor-parallel groups of 4 consecutive ranks, data-parallel groups across them, and the world:
 * three allreduces in flight at once on every rank, progressed together, each bit-exact. */
static ncl_result concurrent_fn(ncl_comm *world, void *arg)
{
    (void)arg;
    int me = rank_of(world);
    ncl_comm *tp = NULL, *dp = NULL;
    EXPECT(ncl_comm_split(world, me / 4, me, NULL, &tp) == NCL_SUCCESS);
    EXPECT(ncl_comm_split(world, me % 4, me, NULL, &dp) == NCL_SUCCESS);
    EXPECT(three_at_once(world, tp, dp) == NCL_SUCCESS);
    ncl_comm_destroy(tp);
    ncl_comm_destroy(dp);
    return NCL_SUCCESS;
}

static void test_split_concurrent(void **state)
{
    (void)state;
    assert_int_equal(run_world(P, concurrent_fn, NULL, 0), NCL_SUCCESS);
}

/* Ranks 0 and 5 join no group; the rest split into pairs of pairs and then split again (a split of
 * a split), broadcasting from the new rank 1. */
static ncl_result nested_fn(ncl_comm *world, void *arg)
{
    (void)arg;
    int me = rank_of(world);
    ncl_comm *g = NULL, *h = NULL;
    int color = me == 0 || me == 5 ? NCL_SPLIT_NOCOLOR : me % 2;
    EXPECT(ncl_comm_split(world, color, 0, NULL, &g) == NCL_SUCCESS);
    if (color == NCL_SPLIT_NOCOLOR) {
        EXPECT(g == NULL);
        return NCL_SUCCESS;
    }
    EXPECT(size_of(g) == 3); /* odd: 1 3 7; even: 2 4 6 */
    EXPECT(ncl_comm_split(g, 0, 0, NULL, &h) == NCL_SUCCESS);
    EXPECT(size_of(h) == 3 && rank_of(h) == rank_of(g));
    int32_t *buf = filled(me);
    EXPECT(buf);
    EXPECT(ncl_broadcast(buf, buf, N, NCL_INT32, 1, h) == NCL_SUCCESS);
    int root = me % 2 ? 3 : 4; /* rank 1 of each group */
    uint64_t wrong = 0;
    for (size_t i = 0; i < N; i++)
        wrong += buf[i] != value(root, i);
    EXPECT(wrong == 0);
    free(buf);
    ncl_comm_destroy(h);
    ncl_comm_destroy(g);
    return NCL_SUCCESS;
}

static void test_split_nested(void **state)
{
    (void)state;
    assert_int_equal(run_world(P, nested_fn, NULL, 0), NCL_SUCCESS);
}

/* In group 0 of a split made with a short timeout, rank 2 never calls the allreduce (it waits in
 * the world's next call instead, and leaves the group only after that): its group peers fail
 * with a message that names the group, one of them by timing out; group 1 is not disturbed. With
 * `leave`, rank 2 destroys its part at once: the peer that waits on it fails without waiting for
 * the timeout, told that it left (the others time out waiting on that one). */
typedef struct hang_case {
    int leave;
    ncl_result rc[P];
    char err[P][400];
} hang_case;

static ncl_result hang_fn(ncl_comm *world, void *arg)
{
    hang_case *t = arg;
    int me = rank_of(world);
    ncl_config gc = NCL_CONFIG_INIT;
    gc.alloc = split_alloc, gc.free = split_free;
    gc.timeout_ns = 300000000ull;
    gc.log_level = NCL_LOG_OFF;
    ncl_comm *g = NULL;
    EXPECT(ncl_comm_split(world, me / 4, 0, &gc, &g) == NCL_SUCCESS);
    int32_t *buf = filled(me);
    EXPECT(buf);
    if (me == 2 && t->leave) {
        ncl_comm_destroy(g);
        g = NULL;
    } else if (me != 2) {
        t->rc[me] = ncl_allreduce(buf, buf, 1024, NCL_INT32, NCL_SUM, g);
        snprintf(t->err[me], sizeof t->err[me], "%s", ncl_comm_last_error(g));
    }
    EXPECT(ncl_allreduce(buf, buf, 16, NCL_INT32, NCL_SUM, world) == NCL_SUCCESS);
    free(buf);
    ncl_comm_destroy(g);
    return NCL_SUCCESS;
}

static void hang_check(int leave)
{
    hang_case *t = case_new(sizeof *t);
    t->leave = leave;
    assert_int_equal(run_world(P, hang_fn, t, 0), NCL_SUCCESS);
    int direct = 0;
    for (int r = 0; r < 4; r++) {
        if (r == 2)
            continue;
        fprintf(stderr, "rank %d: %s\n", r, t->err[r]);
        assert_int_not_equal(t->rc[r], NCL_SUCCESS);
        assert_non_null(strstr(t->err[r], "split #1 color 0"));
        direct += leave ? t->rc[r] == NCL_ERR_REMOTE && strstr(t->err[r], "left") != NULL
                        : t->rc[r] == NCL_ERR_TIMEOUT && strstr(t->err[r], "timed out") != NULL;
    }
    assert_true(direct >= 1); /* whoever waits on rank 2 itself; the rest may wait on them */
    for (int r = 4; r < P; r++)
        assert_int_equal(t->rc[r], NCL_SUCCESS);
    case_free(t, sizeof *t);
}

static void test_split_hang_names_group(void **state)
{
    (void)state;
    hang_check(0);
}

static void test_split_leaver(void **state)
{
    (void)state;
    hang_check(1);
}

/* Groups every rank knows in advance, made without an exchange: tensor-parallel blocks of 4
 * listed backwards, data-parallel pairs across them, both in flight with an allreduce on the
 * world, each bit-exact; making them leaves the world's sequence alone; bad lists are refused. */
static ncl_result create_group_fn(ncl_comm *world, void *arg)
{
    (void)arg;
    const int me = rank_of(world);
    int32_t tpm[4], dpm[2] = {me % 4, me % 4 + 4};
    for (int m = 0; m < 4; m++)
        tpm[m] = me / 4 * 4 + 3 - m;
    ncl_comm *tp = NULL, *dp = NULL;
    EXPECT(ncl_comm_create_group(world, tpm, 4, 1, NULL, &tp) == NCL_SUCCESS);
    EXPECT(size_of(tp) == 4 && rank_of(tp) == 3 - me % 4);
    EXPECT(ncl_comm_create_group(world, dpm, 2, 2, NULL, &dp) == NCL_SUCCESS);
    EXPECT(size_of(dp) == 2 && rank_of(dp) == me / 4);
    EXPECT(three_at_once(world, tp, dp) == NCL_SUCCESS);
    ncl_rank_state st;
    EXPECT(ncl_comm_state(world, &st) == NCL_SUCCESS && st.seq == 1);

    ncl_comm *x = NULL;
    const int32_t twice[2] = {me, me}, other[1] = {(me + 1) % P}, past[1] = {P};
    EXPECT(ncl_comm_create_group(world, twice, 2, 9, NULL, &x) == NCL_ERR_INVALID_ARGUMENT && !x);
    EXPECT(strstr(ncl_comm_last_error(world), "group 9: rank") && strstr(ncl_comm_last_error(world), "each rank once"));
    EXPECT(ncl_comm_create_group(world, other, 1, 9, NULL, &x) == NCL_ERR_INVALID_USAGE);
    EXPECT(strstr(ncl_comm_last_error(world), "is not among its 1 members"));
    EXPECT(ncl_comm_create_group(world, past, 1, 9, NULL, &x) == NCL_ERR_INVALID_ARGUMENT);
    EXPECT(strstr(ncl_comm_last_error(world), "allowed: 0..7"));
    EXPECT(ncl_comm_create_group(world, tpm, 0, 9, NULL, &x) == NCL_ERR_INVALID_ARGUMENT);
    ncl_comm_destroy(tp);
    ncl_comm_destroy(dp);
    return NCL_SUCCESS;
}

static void test_create_group(void **state)
{
    (void)state;
    assert_int_equal(run_world(P, create_group_fn, NULL, 0), NCL_SUCCESS);
}

/* Two members that disagree on the tag make two communicators that never meet: each one's
 * allreduce times out naming its group; the world goes on. */
static ncl_result group_mismatch_fn(ncl_comm *world, void *arg)
{
    char(*err)[400] = arg;
    const int me = rank_of(world);
    ncl_config gc = NCL_CONFIG_INIT;
    gc.alloc = split_alloc, gc.free = split_free;
    gc.timeout_ns = 200000000ull;
    gc.log_level = NCL_LOG_OFF;
    const int32_t pair[2] = {0, 1};
    ncl_comm *g = NULL;
    EXPECT(ncl_comm_create_group(world, pair, 2, 5 + (uint32_t)me, &gc, &g) == NCL_SUCCESS);
    int32_t buf[64] = {0};
    EXPECT(ncl_allreduce(buf, buf, 64, NCL_INT32, NCL_SUM, g) == NCL_ERR_TIMEOUT);
    snprintf(err[me], sizeof err[me], "%s", ncl_comm_last_error(g));
    /* the world is undisturbed, and keeps both alive until both timed out (a rank process that
     * leaves would end its peer's wait early) */
    EXPECT(ncl_allreduce(buf, buf, 1, NCL_INT32, NCL_SUM, world) == NCL_SUCCESS);
    ncl_comm_destroy(g);
    return NCL_SUCCESS;
}

static void test_create_group_mismatch(void **state)
{
    (void)state;
    char(*err)[400] = case_new(2 * sizeof *err);
    assert_int_equal(run_world(2, group_mismatch_fn, err, 0), NCL_SUCCESS);
    fprintf(stderr, "rank 0: %s\nrank 1: %s\n", err[0], err[1]);
    assert_non_null(strstr(err[0], "group 5"));
    assert_non_null(strstr(err[1], "group 6"));
    assert_non_null(strstr(err[0], "timed out"));
    case_free(err, 2 * sizeof *err);
}

/* Point to point: a ring shift with both directions started at once (every rank sends to its
 * successor and receives from its predecessor), then three messages in order down a chain. */
static ncl_result p2p_fn(ncl_comm *world, void *arg)
{
    (void)arg;
    int me = rank_of(world), next = (me + 1) % P, prev = (me + P - 1) % P;
    int32_t *out = filled(me), *in = malloc(N * sizeof *in);
    EXPECT(out && in);
    ncl_comm *s = NULL, *r = NULL;
    EXPECT(ncl_send_start(out, N, NCL_INT32, next, world, &s) == NCL_SUCCESS);
    EXPECT(ncl_recv_start(in, N, NCL_INT32, prev, world, &r) == NCL_SUCCESS);
    EXPECT(s && r && s != r && s != world);
    EXPECT(ncl_wait(s) == NCL_SUCCESS && ncl_wait(r) == NCL_SUCCESS);
    uint64_t wrong = 0;
    for (size_t i = 0; i < N; i++)
        wrong += in[i] != value(prev, i);
    EXPECT(wrong == 0);
    /* the chain 0 -> 1 -> ... -> P-1: message k is rank 0's value(k); each rank forwards it */
    for (int k = 0; k < 3; k++) {
        if (me == 0) {
            for (size_t i = 0; i < N; i++)
                out[i] = value(k, i);
        } else {
            EXPECT(ncl_recv(out, N, NCL_INT32, me - 1, world) == NCL_SUCCESS);
        }
        if (me + 1 < P)
            EXPECT(ncl_send(out, N, NCL_INT32, me + 1, world) == NCL_SUCCESS);
        wrong = 0;
        for (size_t i = 0; i < N; i++)
            wrong += out[i] != value(k, i);
        EXPECT(wrong == 0);
    }
    EXPECT(ncl_send(out, 0, NCL_INT32, next, world) == NCL_SUCCESS); /* nothing to move: no call */
    free(out), free(in);
    return NCL_SUCCESS;
}

static void test_p2p(void **state)
{
    (void)state;
    assert_int_equal(run_world(P, p2p_fn, NULL, 0), NCL_SUCCESS);
}

/* What bad point-to-point calls get: a peer out of range or itself, NULL buffers, and a receive
 * whose count differs from the send's: the receiver fails naming the pair and both counts; the
 * sender too (its write refused, or its wait told), unless its few bytes went eagerly into the
 * receiver's landing zone first. */
typedef struct bad_case {
    ncl_result rc[2];
    char err[2][400];
} bad_case;

static ncl_result bad_fn(ncl_comm *world, void *arg)
{
    bad_case *t = arg;
    int me = rank_of(world);
    int32_t buf[16] = {0};
    EXPECT(ncl_send(buf, 4, NCL_INT32, me, world) == NCL_ERR_INVALID_ARGUMENT);
    EXPECT(strstr(ncl_comm_last_error(world), "peer") != NULL);
    EXPECT(ncl_send(buf, 4, NCL_INT32, 2, world) == NCL_ERR_INVALID_ARGUMENT);
    EXPECT(ncl_recv(NULL, 4, NCL_INT32, 1 - me, world) == NCL_ERR_INVALID_ARGUMENT);
    EXPECT(ncl_send_start(buf, 4, NCL_INT32, 1 - me, world, NULL) == NCL_ERR_INVALID_ARGUMENT);
    t->rc[me] = me == 0 ? ncl_send(buf, 10, NCL_INT32, 1, world) : ncl_recv(buf, 12, NCL_INT32, 0, world);
    snprintf(t->err[me], sizeof t->err[me], "%s", ncl_comm_last_error(world));
    return NCL_SUCCESS;
}

static void test_p2p_bad_calls(void **state)
{
    (void)state;
    bad_case *t = case_new(sizeof *t);
    assert_int_equal(run_world(2, bad_fn, t, 2000000000ull), NCL_SUCCESS);
    for (int r = 0; r < 2; r++)
        fprintf(stderr, "rank %d: %s: %s\n", r, ncl_strerror(t->rc[r]), t->err[r]);
    assert_int_equal(t->rc[1], NCL_ERR_REMOTE);
    for (int r = 0; r < 2; r++) {
        if (t->rc[r] == NCL_SUCCESS)
            continue;
        assert_non_null(strstr(t->err[r], "send 0 -> 1"));
        assert_non_null(strstr(t->err[r], "count 10"));
        assert_non_null(strstr(t->err[r], "count 12"));
    }
    case_free(t, sizeof *t);
}

#ifdef SPLIT_ON_MODEL
#include "ncl/ncl_hal.h"

/* Simulated time on the model: what the rank's HAL reads. */
static uint64_t sim_ns(ncl_comm *c)
{
    return ncl_hal_now_ns(ncl_comm_hal(c));
}

/* Contention, measured on the simulated server: a 2-rank group's allreduce alone, beside another
 * group's on two other NPUs (nothing shared: the same time), and beside a second group on the same
 * two NPUs (their link, engines and memory shared: about twice the time). */
typedef struct contention_case {
    uint64_t alone, beside, shared;
} contention_case;

static ncl_result contention_fn(ncl_comm *world, void *arg)
{
    contention_case *t = arg;
    int me = rank_of(world);
    ncl_comm *a = NULL, *b = NULL;
    EXPECT(ncl_comm_split(world, me < 4 ? me / 2 : NCL_SPLIT_NOCOLOR, 0, NULL, &a) == NCL_SUCCESS); /* {0,1} {2,3} */
    EXPECT(ncl_comm_split(world, me < 2 ? 0 : NCL_SPLIT_NOCOLOR, 0, NULL, &b) == NCL_SUCCESS);       /* {0,1} again */
    int32_t *x = filled(me), *y = filled(me), sync = 0;
    EXPECT(x && y);
    /* phase 0 warms the group up (its first call finds every landing zone credited) */
    for (int phase = 0; phase < 4; phase++) {
        EXPECT(ncl_allreduce(&sync, &sync, 1, NCL_INT32, NCL_SUM, world) == NCL_SUCCESS); /* all start together */
        uint64_t t0 = sim_ns(world);
        if (phase <= 1 && me < 2)
            EXPECT(ncl_allreduce(x, x, N, NCL_INT32, NCL_SUM, a) == NCL_SUCCESS);
        if (phase == 2 && a)
            EXPECT(ncl_allreduce(x, x, N, NCL_INT32, NCL_SUM, a) == NCL_SUCCESS);
        if (phase == 3 && b) {
            EXPECT(ncl_allreduce_start(x, x, N, NCL_INT32, NCL_SUM, a) == NCL_SUCCESS);
            EXPECT(ncl_allreduce_start(y, y, N, NCL_INT32, NCL_SUM, b) == NCL_SUCCESS);
            EXPECT(ncl_wait(a) == NCL_SUCCESS && ncl_wait(b) == NCL_SUCCESS);
        }
        if (me == 0 && phase > 0)
            *(phase == 1 ? &t->alone : phase == 2 ? &t->beside : &t->shared) = sim_ns(world) - t0;
    }
    free(x), free(y);
    ncl_comm_destroy(a);
    ncl_comm_destroy(b);
    return NCL_SUCCESS;
}

static void test_split_contention(void **state)
{
    (void)state;
    contention_case t = {0, 0, 0};
    assert_int_equal(run_world(P, contention_fn, &t, 0), NCL_SUCCESS);
    fprintf(stderr, "allreduce of a 2-rank group: alone %llu ns, beside another group %llu ns, sharing its NPUs "
            "with another %llu ns\n", (unsigned long long)t.alone, (unsigned long long)t.beside,
            (unsigned long long)t.shared);
    assert_true(t.alone > 0);
    assert_true(t.beside * 100 <= t.alone * 101 && t.beside * 100 >= t.alone * 99);
    assert_true(t.shared * 10 >= t.alone * 17 && t.shared * 10 <= t.alone * 23);
}
#endif

int main(int argc, char **argv)
{
#ifdef SPLIT_ON_MODEL
    /* one simulation per process (SystemC's kernel runs once): one test per run */
    if (argc < 4) {
        fprintf(stderr, "usage: %s SCENARIO_OF_8_RANKS SCENARIO_OF_2_RANKS TEST\n", argv[0]);
        return 2;
    }
    g_scenario8 = argv[1], g_scenario2 = argv[2];
    cmocka_set_test_filter(argv[3]);
#else
    (void)argc, (void)argv;
#endif
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_groups),      cmocka_unit_test(test_split_concurrent),
        cmocka_unit_test(test_split_nested),      cmocka_unit_test(test_split_hang_names_group),
        cmocka_unit_test(test_split_leaver),      cmocka_unit_test(test_p2p),
        cmocka_unit_test(test_p2p_bad_calls),     cmocka_unit_test(test_create_group),
        cmocka_unit_test(test_create_group_mismatch),
#ifdef SPLIT_ON_MODEL
        cmocka_unit_test(test_split_contention),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
