/* test_rs_data.c — ringsim_sweep (rs_data): inputs reduce exactly in any order, slices agree, comparison counts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ncl/ncl_dtype.h"
#include "sweep/rs_data.h"

static const int test_ranks[] = {1, 2, 3, 5, 8, 16, 300, 5000};

/* Reduces the inputs in the order given by perm (a permutation of ranks) with the engine's kernels. */
static void reduce_in_order(void *out, uint64_t n, ncl_dtype dt, ncl_op op, int p, const int *perm,
                            uint64_t seed, uint64_t base)
{
    size_t es = ncl_dtype_size(dt);
    void *tmp = malloc(n * es);
    assert_non_null(tmp);
    rs_data_fill(out, n, dt, op, p, perm[0], seed, base);
    for (int k = 1; k < p; k++) {
        rs_data_fill(tmp, n, dt, op, p, perm[k], seed, base);
        ncl_reduce_kernel(out, tmp, n, dt, op);
    }
    if (op == NCL_AVG)
        ncl_div_kernel(out, n, dt, (uint32_t)p);
    free(tmp);
}

/* Whatever the order (reverse, or a shuffle), every dtype x op gives the same bits. */
static void test_order_independent(void **state)
{
    (void)state;
    for (size_t ri = 0; ri < sizeof test_ranks / sizeof test_ranks[0]; ri++) {
        int p = test_ranks[ri];
        uint64_t n = p > 100 ? 16 : 1000;
        int *perm = malloc((size_t)p * sizeof *perm);
        assert_non_null(perm);
        for (int dt = 0; dt < NCL_DTYPE_COUNT; dt++) {
            for (int op = 0; op < NCL_OP_COUNT; op++) {
                size_t es = ncl_dtype_size((ncl_dtype)dt);
                unsigned char *want = malloc(n * es), *got = malloc(n * es);
                assert_non_null(want);
                assert_non_null(got);
                rs_data_expected(want, n, (ncl_dtype)dt, (ncl_op)op, p, 42, 7, 1);
                for (int k = 0; k < p; k++)
                    perm[k] = p - 1 - k;
                reduce_in_order(got, n, (ncl_dtype)dt, (ncl_op)op, p, perm, 42, 7);
                assert_int_equal(rs_data_count_wrong(got, want, n, (ncl_dtype)dt, (ncl_op)op), 0);
                srand((unsigned)(p * 131 + dt * 7 + op));
                for (int k = p - 1; k > 0; k--) {
                    int j = rand() % (k + 1), t = perm[k];
                    perm[k] = perm[j];
                    perm[j] = t;
                }
                reduce_in_order(got, n, (ncl_dtype)dt, (ncl_op)op, p, perm, 42, 7);
                /* bit-exact even for avg: the sum is exact, the division identical */
                assert_memory_equal(got, want, n * es);
                free(want);
                free(got);
            }
        }
        free(perm);
    }
}

/* A slice generated on its own equals the same elements of the whole. */
static void test_slices(void **state)
{
    (void)state;
    for (int dt = 0; dt < NCL_DTYPE_COUNT; dt++) {
        size_t es = ncl_dtype_size((ncl_dtype)dt);
        unsigned char whole[300 * 8], part[300 * 8];
        rs_data_fill(whole, 300, (ncl_dtype)dt, NCL_SUM, 4, 2, 9, 0);
        rs_data_fill(part, 100, (ncl_dtype)dt, NCL_SUM, 4, 2, 9, 123);
        assert_memory_equal(part, whole + 123 * es, 100 * es);
        rs_data_expected(whole, 300, (ncl_dtype)dt, NCL_MAX, 4, 9, 0, 1);
        rs_data_expected(part, 100, (ncl_dtype)dt, NCL_MAX, 4, 9, 123, 1);
        assert_memory_equal(part, whole + 123 * es, 100 * es);
    }
}

/* Inputs differ between ranks and seeds, and float inputs are finite. */
static void test_inputs_vary_and_finite(void **state)
{
    (void)state;
    float a[256], b[256], c[256];
    rs_data_fill(a, 256, NCL_FLOAT32, NCL_MAX, 8, 0, 1, 0);
    rs_data_fill(b, 256, NCL_FLOAT32, NCL_MAX, 8, 1, 1, 0);
    rs_data_fill(c, 256, NCL_FLOAT32, NCL_MAX, 8, 0, 2, 0);
    assert_memory_not_equal(a, b, sizeof a);
    assert_memory_not_equal(a, c, sizeof a);
    uint16_t h[4096];
    for (int dt = NCL_FLOAT16; dt <= NCL_BFLOAT16; dt++) {
        rs_data_fill(h, 4096, (ncl_dtype)dt, NCL_MIN, 3, 1, 5, 0);
        uint16_t mask = dt == NCL_FLOAT16 ? 0x7c00 : 0x7f80;
        for (int i = 0; i < 4096; i++)
            assert_true((h[i] & mask) != mask);
    }
    /* fp16/bf16 sum and prod inputs are integers in their canonical encoding (the fill builds
     * the bits itself: they must be what the engine's conversion gives), spanning the range */
    static const int fill_ranks[] = {1, 2, 3, 16, 5000};
    for (int dt = NCL_FLOAT16; dt <= NCL_BFLOAT16; dt++) {
        for (size_t ri = 0; ri < sizeof fill_ranks / sizeof fill_ranks[0]; ri++) {
            for (int op = NCL_SUM; op <= NCL_PROD; op++) {
                rs_data_fill(h, 4096, (ncl_dtype)dt, (ncl_op)op, fill_ranks[ri], 0, 5, 0);
                float most = 0.0f;
                for (int i = 0; i < 4096; i++) {
                    float f = dt == NCL_FLOAT16 ? ncl_fp16_to_float(h[i]) : ncl_bf16_to_float(h[i]);
                    uint16_t again = dt == NCL_FLOAT16 ? ncl_float_to_fp16(f) : ncl_float_to_bf16(f);
                    assert_true(f == (float)(int)f);
                    assert_int_equal(again, h[i]);
                    most = f > most ? f : most;
                }
                if (op == NCL_SUM && fill_ranks[ri] == 1) /* one rank: up to the exact limit */
                    assert_true(most >= (dt == NCL_FLOAT16 ? 2000.0f : 250.0f));
            }
        }
    }
    /* prod on floats: magnitudes 1 or 2, and at most one 2 per element across ranks */
    float pr[8][64];
    for (int r = 0; r < 8; r++)
        rs_data_fill(pr[r], 64, NCL_FLOAT32, NCL_PROD, 8, r, 3, 0);
    for (int i = 0; i < 64; i++) {
        int twos = 0;
        for (int r = 0; r < 8; r++) {
            float m = pr[r][i] < 0 ? -pr[r][i] : pr[r][i];
            assert_true(m == 1.0f || m == 2.0f);
            twos += m == 2.0f;
        }
        assert_true(twos <= 1);
    }
}

static void test_count_wrong(void **state)
{
    (void)state;
    int32_t x[5] = {1, 2, 3, 4, 5}, y[5] = {1, 2, 0, 4, 6};
    assert_int_equal(rs_data_count_wrong(x, y, 5, NCL_INT32, NCL_SUM), 2);
    assert_int_equal(rs_data_count_wrong(x, x, 5, NCL_INT32, NCL_SUM), 0);
    /* floats compare bits: -0 != +0 outside avg */
    float z[1] = {0.0f}, nz[1] = {-0.0f};
    assert_int_equal(rs_data_count_wrong(z, nz, 1, NCL_FLOAT32, NCL_SUM), 1);
    /* avg on floats allows 2 ULP, not 3 */
    float base = 3.0f, near2, near3;
    uint32_t u;
    memcpy(&u, &base, 4);
    u += 2;
    memcpy(&near2, &u, 4);
    u += 1;
    memcpy(&near3, &u, 4);
    assert_int_equal(rs_data_count_wrong(&near2, &base, 1, NCL_FLOAT32, NCL_AVG), 0);
    assert_int_equal(rs_data_count_wrong(&near3, &base, 1, NCL_FLOAT32, NCL_AVG), 1);
    assert_int_equal(rs_data_count_wrong(&near2, &base, 1, NCL_FLOAT32, NCL_SUM), 1);
    /* integer avg stays exact */
    int8_t i1 = 3, i2 = 4;
    assert_int_equal(rs_data_count_wrong(&i1, &i2, 1, NCL_INT8, NCL_AVG), 1);
    /* a NaN is never within tolerance */
    uint16_t hn = 0x7e00, hinf = 0x7c00;
    assert_int_equal(rs_data_count_wrong(&hn, &hinf, 1, NCL_FLOAT16, NCL_AVG), 1);
    /* a long mostly-equal buffer: exactly the changed elements are counted */
    uint8_t big[10000], big2[10000];
    rs_data_fill(big, 10000, NCL_UINT8, NCL_MAX, 2, 0, 1, 0);
    memcpy(big2, big, sizeof big);
    big2[17] ^= 1;
    big2[9999] ^= 0x80;
    assert_int_equal(rs_data_count_wrong(big2, big, 10000, NCL_UINT8, NCL_MAX), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_independent),
        cmocka_unit_test(test_slices),
        cmocka_unit_test(test_inputs_vary_and_finite),
        cmocka_unit_test(test_count_wrong),
    };
    return cmocka_run_group_tests_name("rs_data", tests, NULL, NULL);
}
