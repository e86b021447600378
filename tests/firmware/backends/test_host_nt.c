/* test_host_nt.c — the host backend's streaming-store reduce: the portable kernel's bits, alone and inside out-of-place allreduces. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ncl/ncl_dtype.h"
#include "ncl/ncl_host.h"
#include "ncl_host_nt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const ncl_dtype all_dtypes[] = {NCL_INT8,    NCL_UINT8,    NCL_INT32,   NCL_UINT32, NCL_INT64,
                                       NCL_FLOAT16, NCL_BFLOAT16, NCL_FLOAT32, NCL_FLOAT64};
#define NDTYPES (sizeof all_dtypes / sizeof all_dtypes[0])

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Random bits (every float class: NaNs with payloads, infinities, subnormals, zeros of both
 * signs), with some elements set equal to the other operand's or to its negation. */
static void fill_bits(unsigned char *p, size_t bytes, uint64_t seed)
{
    for (size_t i = 0; i < bytes; i++)
        p[i] = (unsigned char)rng_next(&seed);
}

/* 1 when a NaN's payload is up to the compiler: a float sum or product of two NaNs is one of
 * them, and which one depends on the order the compiler gave the operands to the instruction (the
 * portable kernel's own vector loop and scalar tail need not agree, nor two builds of it). max
 * and min return the canonical quiet NaN, integers have none. */
static int nan_free(ncl_dtype dt, ncl_op op)
{
    const int fp = dt == NCL_FLOAT16 || dt == NCL_BFLOAT16 || dt == NCL_FLOAT32 || dt == NCL_FLOAT64;
    return fp && (op == NCL_SUM || op == NCL_PROD || op == NCL_AVG);
}

static int is_nan(const unsigned char *p, ncl_dtype dt)
{
    uint64_t u = 0;
    memcpy(&u, p, ncl_dtype_size(dt)); /* little-endian */
    switch (dt) {
    case NCL_FLOAT16:
        return (u & 0x7c00u) == 0x7c00u && (u & 0x03ffu);
    case NCL_BFLOAT16:
        return (u & 0x7f80u) == 0x7f80u && (u & 0x007fu);
    case NCL_FLOAT32:
        return (u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu);
    case NCL_FLOAT64:
        return (u & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (u & 0x000fffffffffffffull);
    default:
        return 0;
    }
}

/* The first byte where a and b differ (n: none), elements of dt from `base` on; two NaNs at the
 * same element count as equal where nan_free(dt, op). */
static size_t first_difference(const unsigned char *a, const unsigned char *b, size_t n, size_t base, ncl_dtype dt,
                               ncl_op op)
{
    const size_t es = ncl_dtype_size(dt);
    for (size_t i = 0; i < n; i++) {
        if (a[i] == b[i])
            continue;
        if (nan_free(dt, op) && i >= base) {
            const size_t e = base + (i - base) / es * es;
            if (e + es <= n && is_nan(a + e, dt) && is_nan(b + e, dt)) {
                i = e + es - 1;
                continue;
            }
        }
        return i;
    }
    return n;
}

/* ---- the kernels alone ---------------------------------------------------------------------- */

enum { KMAX = 3 * 4096 + 640 }; /* bytes: more than a few of the reduce's 2 KiB pieces */

/* One case: dst at byte offset doff of a 64-aligned area, sources at aoff and boff, count
 * elements; the streamed reduce and the portable one give the same bytes, and neither touches a
 * byte outside [dst, dst + count * es). Returns the bytes streamed. */
static uint64_t check_reduce(ncl_dtype dt, ncl_op op, size_t count, size_t doff, size_t aoff, size_t boff,
                             uint64_t seed)
{
    const size_t es = ncl_dtype_size(dt), bytes = count * es, area = KMAX / 64 * 64 + 256;
    unsigned char *a = aligned_alloc(64, area), *b = aligned_alloc(64, area);
    unsigned char *want = aligned_alloc(64, area), *got = aligned_alloc(64, area);
    assert_true(a && b && want && got);
    fill_bits(a, area, seed);
    fill_bits(b, area, seed ^ 0x5555);
    for (size_t i = 0; i + es <= bytes; i += 3 * es) /* equal operands: max/min's +0/-0 rule */
        memcpy(b + boff + i, a + aoff + i, es);
    memset(want, 0xA5, area);
    memset(got, 0xA5, area);
    ncl_reduce3_kernel(want + doff, a + aoff, b + boff, count, dt, op);
    uint64_t streamed = ncl_host_nt_reduce3(got + doff, a + aoff, b + boff, count, dt, op);
    if (memcmp(want, got, area) != 0) {
        size_t i = first_difference(want, got, area, doff, dt, op);
        if (i < area)
            fail_msg("dtype %d op %d count %zu offsets %zu/%zu/%zu: byte %zu (element %zd) is %02x, portable %02x", dt,
                 op, count, doff, aoff, boff, i, ((ptrdiff_t)i - (ptrdiff_t)doff) / (ptrdiff_t)es, got[i], want[i]);
    }
    free(a);
    free(b);
    free(want);
    free(got);
    return streamed;
}

static void test_reduce_bits(void **state)
{
    (void)state;
    const size_t counts_bytes[] = {0, 1, 2, 8, 63, 64, 65, 127, 128, 191, 2047, 2048, 2049, 4095, 4160, 3 * 4096 + 1};
    uint64_t streamed = 0, seed = 1;
    for (size_t d = 0; d < NDTYPES; d++) { /* fp32 and fp64 stream, the rest must fall back whole */
        const ncl_dtype dt = all_dtypes[d];
        const size_t es = ncl_dtype_size(dt);
        for (int op = 0; op < NCL_OP_COUNT; op++)
            for (size_t c = 0; c < sizeof counts_bytes / sizeof counts_bytes[0]; c++) {
                const size_t count = counts_bytes[c] / es;
                /* dst on a line boundary, an element past one, an element before the next, and
                 * between; the sources anywhere on their elements (the kernels' contract: every
                 * pointer on its element's alignment) */
                const size_t doffs[] = {0, es, 64 - es, 16, 40 - es};
                for (size_t k = 0; k < sizeof doffs / sizeof doffs[0]; k++) {
                    const uint64_t n = check_reduce(dt, (ncl_op)op, count, doffs[k], (k * 5 * es) % 64,
                                                    ((k * 11 + 1) * es) % 64, seed++);
                    if (dt != NCL_FLOAT32 && dt != NCL_FLOAT64)
                        assert_true(n == 0);
                    streamed += n;
                }
            }
    }
    /* this machine streams: the cases above took the streaming path, not only the fallback */
    if (ncl_host_nt_available())
        assert_true(streamed > 0);
    else
        assert_true(streamed == 0);
}

/* ---- inside the engine: out-of-place allreduces, streaming or not ------------------------------ */

enum { MAXR = 3, MODES = 3 }; /* modes: NCL_HOST_NT=off out of place, then streaming, then off in place */

typedef struct nt_run {
    ncl_dtype dt;
    ncl_op op;
    size_t count;
    size_t send_skew, recv_skew; /* bytes past a 64-byte boundary */
    int mode;
    unsigned char *out[MODES][MAXR]; /* each rank's result */
} nt_run;

static ncl_result nt_rank(ncl_comm *comm, void *arg)
{
    nt_run *t = arg;
    int me = -1;
    ncl_comm_rank(comm, &me);
    const size_t es = ncl_dtype_size(t->dt), bytes = t->count * es;
    const size_t area = (bytes + 128 + 63) / 64 * 64; /* aligned_alloc: a multiple of the alignment */
    unsigned char *sarea = aligned_alloc(64, area), *rarea = aligned_alloc(64, area);
    if (!sarea || !rarea) {
        free(sarea);
        free(rarea);
        return NCL_ERR_OUT_OF_MEMORY;
    }
    unsigned char *send = sarea + t->send_skew, *recv = rarea + t->recv_skew;
    /* finite values, so that the sums round (an order change would show) */
    uint64_t seed = 1000u + (uint64_t)me;
    for (size_t i = 0; i < t->count; i++) {
        const double v = (double)(int64_t)(rng_next(&seed) % 2000001u - 1000000) / 997.0;
        if (t->dt == NCL_FLOAT32) {
            const float f = (float)(t->op == NCL_PROD ? 1.0 + v / 1e6 : v);
            memcpy(send + i * es, &f, es);
        } else if (t->dt == NCL_FLOAT64) {
            const double f = t->op == NCL_PROD ? 1.0 + v / 1e6 : v;
            memcpy(send + i * es, &f, es);
        } else if (t->dt == NCL_FLOAT16 || t->dt == NCL_BFLOAT16) {
            const uint16_t h = t->dt == NCL_FLOAT16 ? ncl_float_to_fp16((float)v / 100.0f) : ncl_float_to_bf16((float)v);
            memcpy(send + i * es, &h, es);
        } else {
            const uint64_t x = rng_next(&seed);
            memcpy(send + i * es, &x, es);
        }
    }
    memset(recv, 0xEE, bytes);
    ncl_result rc;
    if (t->mode == 2) { /* in place: the reduce reads and writes the same buffer (portable kernel) */
        memcpy(recv, send, bytes);
        rc = ncl_allreduce(recv, recv, t->count, t->dt, t->op, comm);
    } else {
        rc = ncl_allreduce(send, recv, t->count, t->dt, t->op, comm);
    }
    if (rc == NCL_SUCCESS)
        memcpy(t->out[t->mode][me], recv, bytes);
    free(sarea);
    free(rarea);
    return rc;
}

/* One shape on `ranks` ranks in the three modes; all results equal bit for bit, on every rank. */
static void check_allreduce(int ranks, ncl_dtype dt, ncl_op op, size_t count, size_t send_skew, size_t recv_skew,
                            uint64_t slice, const char *streaming)
{
    nt_run t = {.dt = dt, .op = op, .count = count, .send_skew = send_skew, .recv_skew = recv_skew};
    const size_t bytes = count * ncl_dtype_size(dt);
    for (int m = 0; m < MODES; m++)
        for (int r = 0; r < ranks; r++)
            assert_non_null(t.out[m][r] = malloc(bytes ? bytes : 1));
    for (t.mode = 0; t.mode < MODES; t.mode++) {
        setenv("NCL_HOST_NT", t.mode == 1 ? streaming : "off", 1);
        ncl_host_config cfg = NCL_HOST_CONFIG_INIT;
        cfg.nranks = ranks;
        if (slice) /* else the default */
            cfg.comm.slice_bytes = slice;
        cfg.comm.algorithm[NCL_COLL_ALLREDUCE] = NCL_ALGO_RING;
        assert_int_equal(ncl_host_run_cfg(&cfg, nt_rank, &t, NULL), NCL_SUCCESS);
    }
    unsetenv("NCL_HOST_NT");
    for (int m = 0; m < MODES; m++)
        for (int r = 0; r < ranks; r++) {
            const size_t i = first_difference(t.out[m][r], t.out[0][0], bytes, 0, dt, op);
            if (i < bytes)
                fail_msg("%d ranks dtype %d op %d count %zu skews %zu/%zu slice %llu: mode %d rank %d differs at byte %zu",
                         ranks, dt, op, count, send_skew, recv_skew, (unsigned long long)slice, m, r, i);
        }
    for (int m = 0; m < MODES; m++)
        for (int r = 0; r < ranks; r++)
            free(t.out[m][r]);
}

/* Every op of fp32 and fp64, and a few other dtypes, on 2 and 3 ranks; odd counts and buffers off
 * their lines, small slices so that ranges start and end anywhere; "always" streams every range. */
static void test_allreduce_small(void **state)
{
    (void)state;
    const ncl_dtype dts[] = {NCL_FLOAT32, NCL_FLOAT64};
    const size_t counts[] = {1, 17, 1001, 12345, 65537};
    for (int ranks = 2; ranks <= 3; ranks++)
        for (size_t d = 0; d < 2; d++)
            for (int op = 0; op < NCL_OP_COUNT; op++)
                for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
                    const size_t es = ncl_dtype_size(dts[d]);
                    check_allreduce(ranks, dts[d], (ncl_op)op, counts[c], (c * es) % 64, (3 * es * (c + 1)) % 64,
                                    c % 2 ? 4096 : 1000 * es, "always");
                }
    check_allreduce(3, NCL_FLOAT16, NCL_SUM, 40001, 2, 6, 4096, "always");
    check_allreduce(2, NCL_BFLOAT16, NCL_MAX, 40001, 10, 0, 4096, "always");
    check_allreduce(3, NCL_INT32, NCL_PROD, 40001, 4, 12, 4096, "always");
    check_allreduce(2, NCL_UINT8, NCL_MIN, 40001, 1, 3, 4096, "always");
}

/* Large enough for the default thresholds, with the default slices: what a benchmark runs. */
static void test_allreduce_large(void **state)
{
    (void)state;
    const size_t count = (9u << 20) / 4 + 3; /* 9 MiB + 12 B of fp32 */
    check_allreduce(2, NCL_FLOAT32, NCL_SUM, count, 4, 8, 0, "on");
    check_allreduce(3, NCL_FLOAT32, NCL_MAX, count, 0, 36, 0, "on");
    check_allreduce(2, NCL_FLOAT64, NCL_PROD, (9u << 20) / 8 + 3, 8, 0, 0, "on");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reduce_bits),
        cmocka_unit_test(test_allreduce_small),
        cmocka_unit_test(test_allreduce_large),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
