/* test_rs_shape.c — ringsim_sweep (rs_shape): alltoallv's skewed matrix is what the run's header and the docs say it is, and the run's collective names parse back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sweep/rs_shape.h"

/* Every pair's block is within (1 - skew) .. (1 + skew) x the mean block (count), both ends met;
 * the matrix is symmetric (so in place works), the handed-out matrix is the same one, and send
 * and receive buffers hold the fullest rank's row. */
static void test_a2av_blocks_within_skew(void **state)
{
    (void)state;
    static const double skews[] = {0.0, 0.25, 0.5, 1.0};
    static const int ranks[] = {2, 3, 5, 8, 16};
    for (size_t si = 0; si < sizeof skews / sizeof skews[0]; si++)
        for (size_t ri = 0; ri < sizeof ranks / sizeof ranks[0]; ri++) {
            const int p = ranks[ri];
            rs_shape s;
            assert_int_equal(rs_shape_make(&s, RS_COLL_ALLTOALLV, p, NCL_FLOAT32, NCL_SUM, 0, skews[si],
                                           (uint64_t)p * 4000u * 4u),
                             1);
            assert_int_equal(s.count, 4000);
            assert_int_equal(s.coll, NCL_COLL_ALLTOALL);
            const uint64_t *m = rs_shape_a2av_counts(&s);
            assert_non_null(m);
            uint64_t lo = UINT64_MAX, hi = 0, row_max = 0;
            for (int i = 0; i < p; i++) {
                uint64_t row = 0;
                for (int j = 0; j < p; j++) {
                    uint64_t b = rs_shape_a2av_len(&s, i, j);
                    assert_int_equal(b, rs_shape_a2av_len(&s, j, i));
                    assert_int_equal(b, m[(size_t)i * (size_t)p + (size_t)j]);
                    lo = b < lo ? b : lo;
                    hi = b > hi ? b : hi;
                    row += b;
                }
                row_max = row > row_max ? row : row_max;
            }
            const double k = skews[si];
            assert_true((double)lo >= (1.0 - k) * 4000.0 - 1e-9);
            assert_true((double)hi <= (1.0 + k) * 4000.0 + 1e-9);
            assert_int_equal(s.send_elems, row_max);
            assert_int_equal(s.recv_elems, row_max);
            assert_int_equal(rs_shape_plan_count(&s), hi);
            if (k == 0.0)
                assert_int_equal(lo, hi); /* alltoall's blocks */
            if (p >= 8) { /* the pattern's 0 .. 8 all occur: the range is spanned */
                assert_int_equal(lo, (uint64_t)((1.0 - k) * 4000.0));
                assert_int_equal(hi, (uint64_t)((1.0 + k) * 4000.0));
            }
        }
}

/* The run's collectives: the engine's names and aliases, and alltoallv, which the engine runs as
 * alltoall. */
static void test_coll_names(void **state)
{
    (void)state;
    rs_coll c;
    assert_int_equal(rs_coll_parse("alltoallv", &c), 0);
    assert_int_equal(c, RS_COLL_ALLTOALLV);
    assert_string_equal(rs_coll_name(c), "alltoallv");
    assert_int_equal(rs_coll_engine(c), NCL_COLL_ALLTOALL);
    assert_int_equal(rs_coll_parse("all_reduce", &c), 0);
    assert_int_equal(c, (rs_coll)NCL_COLL_ALLREDUCE);
    assert_string_equal(rs_coll_name(c), "allreduce");
    assert_int_equal(rs_coll_engine(c), NCL_COLL_ALLREDUCE);
    assert_int_equal(rs_coll_parse("alltoallw", &c), -1);
    assert_int_equal(rs_coll_parse(NULL, &c), -1);
    assert_int_equal(rs_shape_per_rank(RS_COLL_ALLTOALLV), 1);
    assert_int_equal(rs_shape_reduces(RS_COLL_ALLTOALLV), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a2av_blocks_within_skew),
        cmocka_unit_test(test_coll_names),
    };
    return cmocka_run_group_tests_name("rs_shape", tests, NULL, NULL);
}
