/* test_alltoallv.c — ncl_alltoallv on the host backend: real data over count matrices, bit for bit, and what bad calls get. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ncl/ncl.h"
#include "ncl/ncl_host.h"

enum { MAXP = 8 };

/* One world's call: the matrix every rank passes (odd_rank's differs when odd_counts is set),
 * the algorithm, dtype and placement; per rank the result, its message and its wrong elements. */
typedef struct a2av_case {
    int p;
    uint64_t counts[MAXP * MAXP];
    const uint64_t *odd_counts; /* rank 1 passes this one instead (mismatch tests) */
    int null_counts;            /* every rank passes NULL */
    ncl_dtype dtype;
    int inplace, nonblocking;
    ncl_result rc[MAXP];
    char err[MAXP][320];
    uint64_t wrong[MAXP];
} a2av_case;

/* The byte at index k of the block rank `from` sends rank `to`: distinct per pair and place. */
static uint8_t pattern(int from, int to, uint64_t k)
{
    return (uint8_t)(from * 37 + to * 11 + k * 7 + (k >> 8) * 3 + 1);
}

static uint64_t elems(const uint64_t *c, int p, int from, int to)
{
    return c[(size_t)from * (size_t)p + (size_t)to];
}

static ncl_result rank_fn(ncl_comm *comm, void *arg)
{
    a2av_case *t = arg;
    int me, p = t->p;
    ncl_comm_rank(comm, &me);
    const uint64_t *counts = t->odd_counts && me == 1 ? t->odd_counts : t->counts;
    const size_t es = ncl_dtype_size(t->dtype);
    uint64_t sent = 0, received = 0;
    for (int j = 0; j < p; j++) {
        sent += elems(counts, p, me, j);
        received += elems(counts, p, j, me);
    }
    const uint64_t room = (received > sent ? received : sent) * es; /* in place: one buffer for both */
    uint8_t *send = malloc(sent * es + 1), *recv = malloc(room + 1);
    assert_non_null(send);
    assert_non_null(recv);
    uint64_t off = 0;
    for (int j = 0; j < p; j++)
        for (uint64_t k = 0; k < elems(counts, p, me, j) * es; k++)
            send[off++] = pattern(me, j, k);
    memset(recv, 0xee, room + 1);
    if (t->inplace)
        memcpy(recv, send, sent * es);
    const void *src = t->inplace ? (const void *)recv : send;
    const uint64_t *passed = t->null_counts ? NULL : counts;
    ncl_result rc = t->nonblocking ? ncl_alltoallv_start(src, recv, passed, t->dtype, comm)
                                   : ncl_alltoallv(src, recv, passed, t->dtype, comm);
    if (t->nonblocking && rc == NCL_SUCCESS)
        rc = ncl_wait(comm);
    t->rc[me] = rc;
    snprintf(t->err[me], sizeof t->err[me], "%s", ncl_comm_last_error(comm));
    if (rc == NCL_SUCCESS) {
        off = 0;
        for (int i = 0; i < p; i++)
            for (uint64_t k = 0; k < elems(counts, p, i, me) * es; k++)
                t->wrong[me] += recv[off++] != pattern(i, me, k);
        t->wrong[me] += recv[received * es] != 0xee; /* nothing past the last block */
    }
    free(send);
    free(recv);
    return NCL_SUCCESS;
}

static void run(a2av_case *t, ncl_algo algo, uint64_t slice_bytes)
{
    ncl_host_config cfg = NCL_HOST_CONFIG_INIT;
    cfg.nranks = t->p;
    cfg.scratch_bytes = 4096; /* in place: blocks of several rounds */
    cfg.comm.algorithm[NCL_COLL_ALLTOALL] = (uint8_t)algo;
    cfg.comm.slice_bytes = slice_bytes;
    cfg.comm.check_schedules = 1;
    cfg.comm.timeout_ns = 20ull * 1000 * 1000 * 1000;
    assert_int_equal(ncl_host_run_cfg(&cfg, rank_fn, t, NULL), NCL_SUCCESS);
}

/* A matrix of `shape` on p ranks (symmetric when asked): empty blocks, single elements, blocks of
 * several slices, a rank that takes no part. */
static void fill(a2av_case *t, int shape, int symmetric, uint64_t seed)
{
    for (int i = 0; i < t->p; i++)
        for (int j = 0; j < t->p; j++) {
            const int a = symmetric && j < i ? j : i, b = symmetric && j < i ? i : j;
            uint64_t x = (seed + (uint64_t)a * 2654435761u + (uint64_t)b * 40503u) * 6364136223846793005ull;
            uint64_t n = (x >> 33) % 3000;
            if (shape == 1 && (x >> 20) % 3 == 0)
                n = 0;
            if (shape == 2)
                n = (x >> 40) % 2;
            if (shape == 3 && (a == t->p - 1 || b == t->p - 1))
                n = 0;
            t->counts[i * t->p + j] = n;
        }
}

/* Every algorithm, several rank counts, dtypes of 1, 2, 4 and 8 bytes, in and out of place, the
 * blocking and the non-blocking form: every element of every block where the matrix puts it. */
static void test_alltoallv_bit_exact(void **state)
{
    (void)state;
    static const int ps[] = {1, 2, 3, 4, 7};
    static const ncl_algo algos[] = {NCL_ALGO_AUTO, NCL_ALGO_MESH, NCL_ALGO_PAIRWISE};
    static const ncl_dtype dtypes[] = {NCL_INT8, NCL_FLOAT16, NCL_INT32, NCL_FLOAT64};
    int cases = 0;
    for (size_t pi = 0; pi < sizeof ps / sizeof ps[0]; pi++)
        for (size_t ai = 0; ai < sizeof algos / sizeof algos[0]; ai++)
            for (int shape = 0; shape < 4; shape++)
                for (int inplace = 0; inplace < 2; inplace++) {
                    a2av_case t = {.p = ps[pi], .dtype = dtypes[(pi + ai + (size_t)shape) % 4], .inplace = inplace,
                                   .nonblocking = shape % 2};
                    fill(&t, shape, inplace, pi * 131 + ai * 17 + (size_t)shape);
                    run(&t, algos[ai], shape == 0 ? 1024 : 64 * 1024);
                    for (int r = 0; r < t.p; r++) {
                        if (t.rc[r] != NCL_SUCCESS || t.wrong[r])
                            fail_msg("p=%d %s shape %d %s %s: rank %d: %s, %llu wrong: %s", t.p,
                                     ncl_algo_name(algos[ai]), shape, ncl_dtype_name(t.dtype),
                                     inplace ? "in place" : "out of place", r, ncl_strerror(t.rc[r]),
                                     (unsigned long long)t.wrong[r], t.err[r]);
                    }
                    cases++;
                }
    print_message("alltoallv on host threads: %d calls, every element right\n", cases);
}

/* A NULL matrix, an asymmetric one in place, and ranks that pass different matrices: refused
 * with a message that says which, never a hang or wrong data. */
static void test_alltoallv_bad_calls(void **state)
{
    (void)state;
    a2av_case t = {.p = 3, .dtype = NCL_INT32, .null_counts = 1};
    fill(&t, 0, 0, 5);
    run(&t, NCL_ALGO_AUTO, 1 << 20);
    for (int r = 0; r < t.p; r++) {
        assert_int_equal(t.rc[r], NCL_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(t.err[r], "alltoallv: counts is NULL"));
    }

    a2av_case asym = {.p = 3, .dtype = NCL_INT32, .inplace = 1};
    fill(&asym, 0, 0, 9);
    asym.counts[0 * 3 + 1] = 5, asym.counts[1 * 3 + 0] = 6;
    run(&asym, NCL_ALGO_AUTO, 1 << 20);
    for (int r = 0; r < asym.p; r++) {
        assert_int_equal(asym.rc[r], NCL_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(asym.err[r], "needs a symmetric count matrix"));
    }

    a2av_case odd = {.p = 3, .dtype = NCL_INT32};
    fill(&odd, 0, 0, 11);
    uint64_t other[MAXP * MAXP];
    memcpy(other, odd.counts, sizeof other);
    other[2 * 3 + 1] += 1; /* rank 1 expects one more element from rank 2 */
    odd.odd_counts = other;
    setenv("NCL_HOST_LOG", "off", 1);
    run(&odd, NCL_ALGO_MESH, 1 << 20);
    unsetenv("NCL_HOST_LOG");
    int naming = 0;
    for (int r = 0; r < odd.p; r++) {
        assert_int_not_equal(odd.rc[r], NCL_SUCCESS);
        naming += strstr(odd.err[r], "another count matrix") != NULL;
    }
    if (naming < 2)
        fail_msg("the mismatch was not named: %s / %s / %s", odd.err[0], odd.err[1], odd.err[2]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alltoallv_bit_exact),
        cmocka_unit_test(test_alltoallv_bad_calls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
