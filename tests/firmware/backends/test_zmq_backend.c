/* test_zmq_backend.c — the zmq backend across forked processes: the correctness matrix on its world, dead peers, corrupt frames, fault propagation. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>

#include <cmocka.h>

#include "ncl/ncl_dtype.h"
#include "zt_world.h"

/* The zmq world's matrix: every collective x these (dtype, op) x four counts x both placements, the
 * algorithm the communicator chooses, the root the last rank: 192 cases per world. */
static const ncl_coll colls[] = {NCL_COLL_ALLREDUCE, NCL_COLL_BROADCAST, NCL_COLL_REDUCE_SCATTER,
                                 NCL_COLL_ALLGATHER, NCL_COLL_REDUCE, NCL_COLL_ALLTOALL};
static const mx_type types[] = {{NCL_INT32, NCL_SUM}, {NCL_FLOAT32, NCL_SUM}, {NCL_FLOAT16, NCL_MAX}, {NCL_FLOAT32, NCL_AVG}};
#define NCOUNTS 4
static const uint64_t counts[NCOUNTS] = {1, 7, 1000, 40961};

static size_t world_counts(const mx_axes *a, int nranks, ncl_dtype dt, uint64_t out[MX_MAX_COUNTS])
{
    (void)nranks;
    (void)dt;
    memcpy(out, a->ctx, NCOUNTS * sizeof *out);
    return NCOUNTS;
}

static void run_matrix(int nranks, int tcp, uint32_t max_payload, const uint64_t *cs)
{
    zt_world cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.nranks = nranks;
    cfg.tcp = tcp;
    cfg.max_payload = max_payload;
    zt_mx_world z;
    zt_mx_init(&z, &cfg);
    mx_matrix m;
    mx_init(&m);
    m.print_groups = 1;
    for (size_t c = 0; c < sizeof colls / sizeof colls[0]; c++) {
        mx_axes a = {colls[c], NCL_ALGO_AUTO, world_counts, types, sizeof types / sizeof types[0],
                     MX_ROOTS_LAST, MX_BOTH_PLACES, NULL, cs ? cs : counts, 0};
        mx_add_axes(&m, &a, nranks);
        if (colls[c] == NCL_COLL_ALLTOALL) { /* and alltoallv over a skewed matrix */
            a.a2av = 1;
            mx_add_axes(&m, &a, nranks);
        }
    }
    size_t n = m.n;
    uint64_t failed = mx_run(&m, &z.world);
    mx_free(&m);
    if (failed)
        fail_msg("%s", m.first);
    assert_int_equal(n, 224);
    assert_int_equal(m.run, 224);
}

static void test_ipc_2(void **state)
{
    (void)state;
    run_matrix(2, 0, 0, NULL);
}

static void test_ipc_3_small_frames(void **state)
{
    (void)state;
    /* 4 KiB frames: every large write is cut into many, reduces at element boundaries */
    run_matrix(3, 0, 4096, NULL);
}

static void test_ipc_4(void **state)
{
    (void)state;
    run_matrix(4, 0, 0, NULL);
}

static void test_tcp_3(void **state)
{
    (void)state;
    static const uint64_t small[] = {1, 5, 333, 4099};
    /* same-host ranks would use shared-memory rings (test_zmq_shm.c): off, so tcp carries the data */
    setenv("NCL_ZMQ_SHM", "off", 1);
    run_matrix(3, 1, 0, small);
    unsetenv("NCL_ZMQ_SHM");
}

/* One allreduce out of place, checked as a matrix case is: 0 when it passed, else its words in
 * r->msg and 3 for an engine error, 1 for a wrong result. */
static int allreduce_checked(zt_rank *r, ncl_dtype dt, uint64_t count)
{
    const mx_case c = {NCL_COLL_ALLREDUCE, NCL_ALGO_AUTO, count, dt, NCL_SUM, 0, 0, 0};
    ncl_result rc;
    uint64_t wrong;
    char what[MX_DETAIL];
    if (!zt_case(r, &c, &rc, &wrong, what, sizeof what))
        return 0;
    snprintf(r->msg, sizeof r->msg, "allreduce %s %llu out of place: %s%s%s", ncl_dtype_name(dt),
             (unsigned long long)count, rc != NCL_SUCCESS ? ncl_strerror(rc) : "", rc != NCL_SUCCESS ? " | " : "",
             what);
    return rc != NCL_SUCCESS ? 3 : 1;
}

/* Allreduces until something fails; returns 0 only if all 200 passed. */
static int loop_rank(zt_rank *r)
{
    for (int i = 0; i < 200; i++) {
        int st = allreduce_checked(r, NCL_FLOAT32, 3000);
        if (st != 0)
            return st;
    }
    snprintf(r->msg, sizeof r->msg, "200 allreduces");
    return 0;
}

static void test_dead_peer(void **state)
{
    (void)state;
    zt_world w;
    memset(&w, 0, sizeof w);
    w.nranks = 4;
    w.timeout_ns = 2000000000ull;
    w.die_nth[1] = 40; /* mid-collective: a ring allreduce sends ~14 data frames per rank */
    zt_result res[ZT_MAX_RANKS];
    double s = zt_run(&w, loop_rank, NULL, res);
    print_message("rank 1 killed; the others returned in %.2f s\n", s);
    assert_false(res[1].exited);
    assert_int_equal(res[1].signal, SIGKILL);
    for (int i = 0; i < 4; i++) {
        if (i == 1)
            continue;
        if (res[i].status != 3 || !strstr(res[i].msg, "rank 1"))
            fail_msg("rank %d: exit %d: %s", i, res[i].status, res[i].msg);
        assert_non_null(strstr(res[i].msg, "remote error"));
    }
    assert_true(s < 10.0); /* the engine timeout is 2 s: nobody waited for it to pass much */
}

/* Wide accumulation (deterministic + fp32 accumulator): every rank's fp16 sum equals the fold
 * x_0 + x_1 + ... in fp32, rounded once, computed here with the same kernels; inputs chosen so
 * that a 16-bit accumulator would round differently on many elements. */
#define WIDE_COUNT 4099
static uint16_t wide_input(int rank, uint64_t i)
{
    return ncl_float_to_fp16(1.0f + (float)((i * 7919u + (uint64_t)rank * 104729u) % 2048u) / 1024.0f);
}

static int wide_rank(zt_rank *r)
{
    static uint16_t S[WIDE_COUNT], R[WIDE_COUNT], want[WIDE_COUNT], narrow[WIDE_COUNT], x[WIDE_COUNT];
    static float acc[WIDE_COUNT];
    for (uint64_t i = 0; i < WIDE_COUNT; i++)
        S[i] = wide_input(r->rank, i);
    for (int k = 0; k < r->nranks; k++) {
        for (uint64_t i = 0; i < WIDE_COUNT; i++)
            x[i] = wide_input(k, i);
        if (k == 0) {
            ncl_widen_kernel(acc, x, WIDE_COUNT, NCL_FLOAT16);
            memcpy(narrow, x, sizeof narrow);
        } else {
            ncl_reduce_wide_kernel(acc, x, WIDE_COUNT, NCL_FLOAT16, NCL_SUM);
            ncl_reduce_kernel(narrow, x, WIDE_COUNT, NCL_FLOAT16, NCL_SUM);
        }
    }
    ncl_narrow_kernel(want, acc, WIDE_COUNT, NCL_FLOAT16, 1);
    ncl_result rc = ncl_allreduce(S, R, WIDE_COUNT, NCL_FLOAT16, NCL_SUM, r->comm);
    if (rc != NCL_SUCCESS) {
        snprintf(r->msg, sizeof r->msg, "allreduce: %s", ncl_zmq_last_error(r->zmq));
        return 1;
    }
    int wrong = 0, differ = 0;
    for (uint64_t i = 0; i < WIDE_COUNT; i++) {
        wrong += R[i] != want[i];
        differ += want[i] != narrow[i];
    }
    snprintf(r->msg, sizeof r->msg, "wrong=%d wide-vs-narrow=%d", wrong, differ);
    return wrong != 0 || differ == 0;
}

static void test_wide_accumulation(void **state)
{
    (void)state;
    zt_world w;
    memset(&w, 0, sizeof w);
    w.nranks = 4;
    w.wide = 1;
    zt_result res[ZT_MAX_RANKS];
    zt_run(&w, wide_rank, NULL, res);
    for (int i = 0; i < 4; i++) {
        print_message("rank %d: exit %d: %s\n", i, res[i].status, res[i].msg);
        assert_int_equal(res[i].status, 0);
    }
}

static void test_corrupt_frame(void **state)
{
    (void)state;
    zt_world w;
    memset(&w, 0, sizeof w);
    w.nranks = 3;
    w.timeout_ns = 2000000000ull;
    w.corrupt_nth[0] = 9;
    zt_result res[ZT_MAX_RANKS];
    zt_run(&w, loop_rank, NULL, res);
    /* the frame went from rank 0 to one of its ring neighbours: that rank names the link */
    int named = 0;
    for (int i = 1; i < 3; i++) {
        print_message("rank %d: exit %d: %s\n", i, res[i].status, res[i].msg);
        if (res[i].status == 3 && strstr(res[i].msg, "link error") && strstr(res[i].msg, "link from rank 0") &&
            strstr(res[i].msg, "checksum"))
            named++;
    }
    assert_int_equal(named, 1);
    for (int i = 0; i < 3; i++)
        assert_int_not_equal(res[i].status, 0);
}

/* ---- mismatch and abort (run as their own CTest entry, test_zmq_faults, with a CTest timeout of
 * 30 s under an engine timeout of 60 s: passing at all proves nobody waited for the timeout) ---- */

#define FAULT_TIMEOUT_NS 60000000000ull

/* After the failure: the backend says it is broken, and the next collective fails at once. */
static int after_failure(zt_rank *r, ncl_result first)
{
    char err[ZT_MSG];
    snprintf(err, sizeof err, "%s", ncl_zmq_last_error(r->zmq));
    int32_t one = 1, sum = 0;
    ncl_result next = ncl_allreduce(&one, &sum, 1, NCL_INT32, NCL_SUM, r->comm);
    snprintf(r->msg, sizeof r->msg, "first=%d next=%d status=%d origin=%d | %.900s", (int)first, (int)next,
             (int)ncl_zmq_status(r->zmq), ncl_zmq_abort_origin(r->zmq), err);
    return 3;
}

/* Two good allreduces, then call #3: rank `arg` calls broadcast, the others allreduce. */
static int mismatch_rank(zt_rank *r)
{
    int odd = *(const int *)r->arg;
    for (int i = 0; i < 2; i++)
        if (allreduce_checked(r, NCL_FLOAT32, 1000) != 0)
            return 1;
    static float S[1000], R[1000];
    ncl_result rc = r->rank == odd ? ncl_broadcast(S, R, 1000, NCL_FLOAT32, 0, r->comm)
                                   : ncl_allreduce(S, R, 1000, NCL_FLOAT32, NCL_SUM, r->comm);
    if (rc == NCL_SUCCESS) {
        snprintf(r->msg, sizeof r->msg, "call #3 succeeded");
        return 0;
    }
    return after_failure(r, rc);
}

static void expect_broken(const zt_result *res, int i, int first)
{
    char want[64];
    snprintf(want, sizeof want, "first=%d next=", first);
    if (res[i].status != 3 || strncmp(res[i].msg, want, strlen(want)) != 0 || strstr(res[i].msg, "next=0 ") ||
        strstr(res[i].msg, "status=0 "))
        fail_msg("rank %d: exit %d, want a failure (%s) and a broken communicator after it: %s", i, res[i].status,
                 want, res[i].msg);
}

/* fn on 4 ranks, rank `odd` the odd one, under the faults' engine timeout; the wall seconds. */
static double run_odd(zt_fn fn, int odd, zt_result *res)
{
    zt_world w;
    memset(&w, 0, sizeof w);
    w.nranks = 4;
    w.timeout_ns = FAULT_TIMEOUT_NS;
    return zt_run(&w, fn, &odd, res);
}

static void test_fault_mismatch(void **state)
{
    (void)state;
    zt_result res[ZT_MAX_RANKS];
    double s = run_odd(mismatch_rank, 2, res);
    print_message("rank 2 called broadcast, the others allreduce: all returned in %.2f s (timeout 60 s)\n", s);
    for (int i = 0; i < 4; i++) {
        print_message("rank %d: %s\n", i, res[i].msg);
        expect_broken(res, i, NCL_ERR_REMOTE);
        /* whoever noticed first, every rank's message names both calls and the call number */
        if (!strstr(res[i].msg, "mismatch: rank ") || !strstr(res[i].msg, "broadcast #3") ||
            !strstr(res[i].msg, "allreduce #3"))
            fail_msg("rank %d does not name the mismatch: %s", i, res[i].msg);
    }
    /* the odd rank and at least one other noticed it themselves or were told by an ABORT */
    int told = 0;
    for (int i = 0; i < 4; i++)
        told += strstr(res[i].msg, " aborted allreduce #3: ") != NULL || strstr(res[i].msg, " aborted broadcast #3: ");
    print_message("%d of 4 ranks learnt it from an ABORT\n", told);
}

/* Two good allreduces, then call #3 with half the count on rank `arg`: the descriptor its NOTIFYs
 * carry (NCL_WIRE_CAP_DESC) names the count on every rank; none succeeds, nobody waits for the
 * timeout (it used to: the kinds agreed, so only the timeout could tell). */
static int count_mismatch_rank(zt_rank *r)
{
    int odd = *(const int *)r->arg;
    for (int i = 0; i < 2; i++)
        if (allreduce_checked(r, NCL_FLOAT32, 1000) != 0)
            return 1;
    static float S[1000], R[1000];
    ncl_result rc = ncl_allreduce(S, R, r->rank == odd ? 500 : 1000, NCL_FLOAT32, NCL_SUM, r->comm);
    if (rc == NCL_SUCCESS) {
        snprintf(r->msg, sizeof r->msg, "call #3 succeeded");
        return 0;
    }
    return after_failure(r, rc);
}

static void test_fault_count_mismatch(void **state)
{
    (void)state;
    zt_result res[ZT_MAX_RANKS];
    double s = run_odd(count_mismatch_rank, 1, res);
    print_message("rank 1 called allreduce #3 with count 500, the others 1000: all returned in %.2f s\n", s);
    int naming = 0;
    for (int i = 0; i < 4; i++) {
        print_message("rank %d: %s\n", i, res[i].msg);
        expect_broken(res, i, NCL_ERR_REMOTE);
        naming += strstr(res[i].msg, "mismatch: rank ") && strstr(res[i].msg, "allreduce #3 with count ") &&
                  strstr(res[i].msg, "count 500") && strstr(res[i].msg, "count 1000");
    }
    if (naming < 2)
        fail_msg("%d ranks name the counts, want the odd one and a peer at least", naming);
}

/* Allreduces until the corrupted frame breaks one; then checks the communicator is broken. */
static int corrupt_rank(zt_rank *r)
{
    for (int i = 0; i < 200; i++) {
        static float S[3000], R[3000];
        ncl_result rc = ncl_allreduce(S, R, 3000, NCL_FLOAT32, NCL_SUM, r->comm);
        if (rc != NCL_SUCCESS)
            return after_failure(r, rc);
    }
    snprintf(r->msg, sizeof r->msg, "200 allreduces");
    return 0;
}

static void test_fault_abort_after_corrupt(void **state)
{
    (void)state;
    zt_world w;
    memset(&w, 0, sizeof w);
    w.nranks = 4;
    w.timeout_ns = FAULT_TIMEOUT_NS;
    /* in allreduce #3 (~14 data frames per rank each): every rank is past its handshake (rank 0
     * finished #2, which needs them all), so each learns it inside a collective */
    w.corrupt_nth[0] = 40;
    zt_result res[ZT_MAX_RANKS];
    double s = zt_run(&w, corrupt_rank, NULL, res);
    print_message("rank 0 corrupted a frame: all returned in %.2f s (timeout 60 s)\n", s);
    int detector = -1;
    for (int i = 0; i < 4; i++) {
        print_message("rank %d: %s\n", i, res[i].msg);
        if (strstr(res[i].msg, "link from rank 0") && strstr(res[i].msg, "checksum") && !strstr(res[i].msg, "aborted"))
            detector = i;
    }
    if (detector < 1)
        fail_msg("no rank named the corrupting link from rank 0");
    char origin[32], told[64], rejected[64];
    snprintf(origin, sizeof origin, "origin=%d ", detector);
    snprintf(told, sizeof told, "rank %d aborted ", detector); /* directly or relayed by rank 0 */
    snprintf(rejected, sizeof rejected, "rank %d rejected your frame: checksum", detector);
    expect_broken(res, detector, NCL_ERR_LINK);
    /* the sender learns it from the detector's ERROR, or first from a bystander's relay of the
     * detector's ABORT (which can overtake the ERROR on a loaded machine): either names the cause */
    if (strstr(res[0].msg, "first=6 ")) {
        expect_broken(res, 0, NCL_ERR_REMOTE);
        if (!strstr(res[0].msg, told) || !strstr(res[0].msg, "link from rank 0") || !strstr(res[0].msg, "checksum"))
            fail_msg("rank 0 was told, but not of its rejected frame: %s", res[0].msg);
    } else {
        expect_broken(res, 0, NCL_ERR_LINK);
        assert_non_null(strstr(res[0].msg, rejected));
    }
    for (int i = 1; i < 4; i++) {
        if (i == detector)
            continue;
        /* the bystanders: the detector's ABORT (or rank 0's relay of it), naming it and the checksum */
        expect_broken(res, i, NCL_ERR_REMOTE);
        if (!strstr(res[i].msg, origin) || !strstr(res[i].msg, told) || !strstr(res[i].msg, "checksum"))
            fail_msg("rank %d was not told by rank %d's ABORT: %s", i, detector, res[i].msg);
    }
}

/* Rank 2 comes late to call #2: the others time out (1 s) and say so; rank 2's call then fails at
 * once, naming the origin and its timeout, instead of waiting out a timeout of its own. */
/* Call #2, which the fault under test should make fail: "call #2 succeeded" (status 0) or what
 * after_failure found. */
static int second_allreduce(zt_rank *r)
{
    static int32_t S[100], R[100];
    ncl_result rc = ncl_allreduce(S, R, 100, NCL_INT32, NCL_SUM, r->comm);
    if (rc == NCL_SUCCESS) {
        snprintf(r->msg, sizeof r->msg, "call #2 succeeded");
        return 0;
    }
    return after_failure(r, rc);
}

static int late_rank(zt_rank *r)
{
    if (allreduce_checked(r, NCL_INT32, 100) != 0)
        return 1;
    if (r->rank == 2) {
        struct timespec ts = {2, 500000000};
        nanosleep(&ts, NULL);
    }
    return second_allreduce(r);
}

static void test_fault_timeout_abort(void **state)
{
    (void)state;
    zt_world w;
    memset(&w, 0, sizeof w);
    w.nranks = 3;
    w.timeout_ns = 1000000000ull;
    zt_result res[ZT_MAX_RANKS];
    zt_run(&w, late_rank, NULL, res);
    for (int i = 0; i < 3; i++)
        print_message("rank %d: %s\n", i, res[i].msg);
    /* ranks 0 and 1 wait for rank 2 with the same limit: at least one times out on its own; the
     * other either too or, when the first one's ABORT arrives before its own limit (a loaded
     * machine), fails remote with that timeout as the reason */
    char own_timeout[32];
    snprintf(own_timeout, sizeof own_timeout, "first=%d ", NCL_ERR_TIMEOUT);
    int own = 0;
    for (int i = 0; i < 2; i++) {
        int timed_out = strncmp(res[i].msg, own_timeout, strlen(own_timeout)) == 0;
        expect_broken(res, i, timed_out ? NCL_ERR_TIMEOUT : NCL_ERR_REMOTE);
        assert_non_null(strstr(res[i].msg, "timed out"));
        own += timed_out;
    }
    assert_true(own >= 1);
    /* remote, not a timeout of its own: the ABORTs were there when it began */
    expect_broken(res, 2, NCL_ERR_REMOTE);
    assert_true(strstr(res[2].msg, " aborted allreduce #2: rank ") != NULL ||
                strstr(res[2].msg, " aborted (relayed by rank ") != NULL); /* directly or relayed */
    assert_non_null(strstr(res[2].msg, "timed out"));
}

/* ncl_zmq_abort (ncclCommAbort): rank 1 aborts between collectives; the others' next one fails. */
static int abort_api_rank(zt_rank *r)
{
    if (allreduce_checked(r, NCL_INT32, 100) != 0)
        return 1;
    if (r->rank == 1)
        ncl_zmq_abort(r->zmq, "the operator stopped the job");
    return second_allreduce(r);
}

static void test_fault_abort_api(void **state)
{
    (void)state;
    zt_world w;
    memset(&w, 0, sizeof w);
    w.nranks = 3;
    w.timeout_ns = FAULT_TIMEOUT_NS;
    zt_result res[ZT_MAX_RANKS];
    zt_run(&w, abort_api_rank, NULL, res);
    for (int i = 0; i < 3; i++)
        print_message("rank %d: %s\n", i, res[i].msg);
    expect_broken(res, 1, NCL_ERR_INVALID_USAGE);
    assert_non_null(strstr(res[1].msg, "origin=-1 | aborted on this rank: the operator stopped the job"));
    for (int i = 0; i < 3; i += 2) {
        expect_broken(res, i, NCL_ERR_REMOTE);
        /* told by rank 1 itself, or by the other bystander's relay: the origin and reason are the same */
        assert_non_null(strstr(res[i].msg, "origin=1 | rank 1 aborted "));
        assert_non_null(strstr(res[i].msg, ": aborted on this rank: the operator stopped the job"));
    }
}

static int nop_rank(zt_rank *r)
{
    (void)r;
    return 0;
}

static void test_missing_peer(void **state)
{
    (void)state;
    zt_world w;
    memset(&w, 0, sizeof w);
    w.nranks = 3;
    w.connect_timeout_ns = 300000000ull;
    w.absent[2] = 1;
    zt_result res[ZT_MAX_RANKS];
    zt_run(&w, nop_rank, NULL, res);
    for (int i = 0; i < 2; i++) {
        print_message("rank %d: exit %d: %s\n", i, res[i].status, res[i].msg);
        assert_int_equal(res[i].status, 10 + NCL_ERR_TIMEOUT);
        assert_non_null(strstr(res[i].msg, "no HELLO within 0.3 s from rank 2 (ipc://@rs-zt-"));
    }
}

/* argv[1]: a cmocka filter ("test_fault_*": the fault cases), or "-PATTERN": skip those. */
int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ipc_2),       cmocka_unit_test(test_ipc_3_small_frames), cmocka_unit_test(test_ipc_4),
        cmocka_unit_test(test_tcp_3),       cmocka_unit_test(test_dead_peer),          cmocka_unit_test(test_corrupt_frame),
        cmocka_unit_test(test_missing_peer),  cmocka_unit_test(test_wide_accumulation),
        cmocka_unit_test(test_fault_mismatch), cmocka_unit_test(test_fault_count_mismatch),
        cmocka_unit_test(test_fault_abort_after_corrupt),
        cmocka_unit_test(test_fault_abort_api), cmocka_unit_test(test_fault_timeout_abort),
    };
    if (argc > 1 && argv[1][0] == '-')
        cmocka_set_skip_filter(argv[1] + 1);
    else if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
