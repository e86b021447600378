/* test_zmq_backend.c — the zmq backend across forked processes: bit-exact collectives, dead peers, corrupt frames. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>

#include <cmocka.h>

#include "zt_world.h"

static const ncl_coll colls[] = {NCL_COLL_ALLREDUCE, NCL_COLL_BROADCAST, NCL_COLL_REDUCE_SCATTER,
                                 NCL_COLL_ALLGATHER, NCL_COLL_REDUCE};
typedef struct dt_op {
    ncl_dtype dt;
    ncl_op op;
} dt_op;
static const dt_op types[] = {{NCL_INT32, NCL_SUM}, {NCL_FLOAT32, NCL_SUM}, {NCL_FLOAT16, NCL_MAX}, {NCL_FLOAT32, NCL_AVG}};
static const uint64_t counts[] = {1, 7, 1000, 40961};

/* Every collective x type x count x placement; the root moves with the rank count. */
static int matrix_rank(zt_rank *r)
{
    const uint64_t *cs = r->arg ? (const uint64_t *)r->arg : counts;
    int n = 0;
    for (size_t c = 0; c < sizeof colls / sizeof colls[0]; c++)
        for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
            for (size_t k = 0; k < 4; k++)
                for (int pl = 0; pl < 2; pl++) {
                    int64_t w = zt_check(r, colls[c], types[t].dt, types[t].op, cs[k], pl, r->nranks - 1);
                    if (w != 0)
                        return w < 0 ? 3 : 1;
                    n++;
                }
    snprintf(r->msg, sizeof r->msg, "%d checks", n);
    return 0;
}

static void expect_all_ok(const zt_world *w, const zt_result *res)
{
    for (int i = 0; i < w->nranks; i++) {
        if (!res[i].exited || res[i].status != 0)
            fail_msg("rank %d: exit %d signal %d: %s", i, res[i].status, res[i].signal, res[i].msg);
        assert_string_equal(res[i].msg, "160 checks");
    }
}

static void run_matrix(int nranks, int tcp, uint32_t max_payload, const uint64_t *cs)
{
    zt_world w;
    memset(&w, 0, sizeof w);
    w.nranks = nranks;
    w.tcp = tcp;
    w.max_payload = max_payload;
    zt_result res[ZT_MAX_RANKS];
    double s = zt_run(&w, matrix_rank, (void *)cs, res);
    print_message("%d ranks over %s: 160 collectives each in %.2f s\n", nranks, tcp ? "tcp" : "ipc", s);
    expect_all_ok(&w, res);
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
    run_matrix(3, 1, 0, small);
}

/* Allreduces until something fails; returns 0 only if all 200 passed. */
static int loop_rank(zt_rank *r)
{
    for (int i = 0; i < 200; i++) {
        int64_t w = zt_check(r, NCL_COLL_ALLREDUCE, NCL_FLOAT32, NCL_SUM, 3000, 0, 0);
        if (w != 0)
            return w < 0 ? 3 : 1;
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ipc_2),       cmocka_unit_test(test_ipc_3_small_frames), cmocka_unit_test(test_ipc_4),
        cmocka_unit_test(test_tcp_3),       cmocka_unit_test(test_dead_peer),          cmocka_unit_test(test_corrupt_frame),
        cmocka_unit_test(test_missing_peer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
