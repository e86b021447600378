/* test_simworld.c — host-style rank programs on the simulated machine: collectives bit-exact, a mismatch reported at once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness/rs_simworld.h"

static const char *g_scenario;

/* Allreduce, then broadcast from every root, checked on every rank; a rank given as
 * `mismatcher` calls broadcast where the others call allreduce, or (short) the allreduce with a
 * smaller count. */
typedef struct prog {
    int mismatcher;
    int short_count;
    int silent;      /* this rank returns without calling anything (-1: none) */
    int checked;     /* ranks whose results were right (written by each rank thread in turn) */
    char err[8][320]; /* each rank's last error */
} prog;

static ncl_result rank_fn(ncl_comm *comm, void *arg)
{
    prog *pg = arg;
    int rank, p;
    ncl_comm_rank(comm, &rank);
    ncl_comm_size(comm, &p);
    if (rank == pg->silent)
        return NCL_SUCCESS;
    enum { N = 1001 };
    int32_t *buf = malloc(N * sizeof *buf);
    if (!buf)
        return NCL_ERR_OUT_OF_MEMORY;
    for (int i = 0; i < N; i++)
        buf[i] = rank * 1000 + i;
    ncl_result rc = rank == pg->mismatcher && !pg->short_count
                        ? ncl_broadcast(buf, buf, N, NCL_INT32, 0, comm)
                        : ncl_allreduce(buf, buf, rank == pg->mismatcher ? N - 4 : N, NCL_INT32, NCL_SUM, comm);
    int ok = rc == NCL_SUCCESS;
    for (int i = 0; ok && i < N; i++)
        ok = buf[i] == 1000 * p * (p - 1) / 2 + p * i;
    for (int root = 0; ok && root < p; root++) {
        for (int i = 0; i < N; i++)
            buf[i] = rank == root ? root * 7 + i : -1;
        rc = ncl_broadcast(buf, buf, N, NCL_INT32, root, comm);
        for (int i = 0; rc == NCL_SUCCESS && i < N; i++)
            ok &= buf[i] == root * 7 + i;
        ok &= rc == NCL_SUCCESS;
    }
    free(buf);
    pg->checked += ok;
    snprintf(pg->err[rank], sizeof pg->err[rank], "%s", ncl_comm_last_error(comm));
    return rc;
}

static void test_collectives(void **state)
{
    (void)state;
    prog pg = {.mismatcher = -1, .silent = -1};
    ncl_config cfg = NCL_CONFIG_INIT;
    ncl_result results[8];
    assert_int_equal(rs_simworld_run_scenario((void *)g_scenario, &cfg, 8, rank_fn, &pg, results), NCL_SUCCESS);
    assert_int_equal(pg.checked, 8);
}

/* Rank 3 calls broadcast as its first collective, or allreduce with another count, where the
 * others call allreduce: the ranks learn at once that the calls differ (NCL_ERR_REMOTE), nobody
 * waits for the timeout (NCL_ERR_TIMEOUT) and nobody succeeds. */
static void run_mismatch(int short_count)
{
    prog pg = {.mismatcher = 3, .short_count = short_count, .silent = -1};
    ncl_config cfg = NCL_CONFIG_INIT;
    ncl_result results[8];
    assert_int_not_equal(rs_simworld_run_scenario((void *)g_scenario, &cfg, 8, rank_fn, &pg, results), NCL_SUCCESS);
    int remote = 0;
    for (int r = 0; r < 8; r++) {
        assert_int_not_equal(results[r], NCL_ERR_TIMEOUT);
        assert_int_not_equal(results[r], NCL_SUCCESS);
        remote += results[r] == NCL_ERR_REMOTE;
    }
    assert_true(remote > 0);
}

static void test_mismatch(void **state)
{
    (void)state;
    run_mismatch(0);
}

static void test_count_mismatch(void **state)
{
    (void)state;
    run_mismatch(1);
}

/* Rank 5 never calls: every other rank times out (1 s of simulated time: at once) naming rank 5 as
 * the peer that never recorded; none succeeds. */
static void test_silent_rank(void **state)
{
    (void)state;
    prog pg = {.mismatcher = -1, .silent = 5};
    ncl_config cfg = NCL_CONFIG_INIT;
    cfg.timeout_ns = 1000000000ull; /* 1 s of simulated time */
    ncl_result results[8];
    assert_int_not_equal(rs_simworld_run_scenario((void *)g_scenario, &cfg, 8, rank_fn, &pg, results), NCL_SUCCESS);
    int naming = 0;
    for (int r = 0; r < 8; r++) {
        if (r == 5)
            continue;
        print_message("rank %d: %s: %s\n", r, ncl_strerror(results[r]), pg.err[r]);
        assert_int_equal(results[r], NCL_ERR_TIMEOUT);
        naming += strstr(pg.err[r], "from rank 5, which never recorded it") != NULL;
    }
    assert_int_equal(naming, 7);
}

/* One simulation per process: argv[2] picks the case. */
int main(int argc, char **argv)
{
    g_scenario = argc > 1 ? argv[1] : "scenarios/default.yaml";
    const struct CMUnitTest collectives[] = {cmocka_unit_test(test_collectives)};
    const struct CMUnitTest mismatch[] = {cmocka_unit_test(test_mismatch)};
    const struct CMUnitTest count_mismatch[] = {cmocka_unit_test(test_count_mismatch)};
    const struct CMUnitTest silent[] = {cmocka_unit_test(test_silent_rank)};
    if (argc > 2 && strcmp(argv[2], "silent") == 0)
        return cmocka_run_group_tests(silent, NULL, NULL);
    if (argc > 2 && strcmp(argv[2], "mismatch") == 0)
        return cmocka_run_group_tests(mismatch, NULL, NULL);
    if (argc > 2 && strcmp(argv[2], "count_mismatch") == 0)
        return cmocka_run_group_tests(count_mismatch, NULL, NULL);
    return cmocka_run_group_tests(collectives, NULL, NULL);
}
