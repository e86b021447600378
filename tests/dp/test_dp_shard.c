/* test_dp_shard.c — dataset sharding: shard(size, rank) gives element i to rank i mod size, every
 * element exactly once, for element counts not divisible by the rank count. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dp/dp.h"

#include <stdlib.h>
#include <string.h>

static size_t checked_cases;

/* Every (n, size): the shards' indices are ascending, on the right rank, and together cover
 * 0..n-1 exactly once; counts are ceil((n - rank) / size) and differ by at most one. */
static void check_cover(size_t n, int size)
{
    unsigned char *seen = calloc(n ? n : 1, 1);
    size_t *idx = malloc((n ? n : 1) * sizeof(size_t));
    assert_non_null(seen);
    assert_non_null(idx);
    size_t total = 0, lo = (size_t)-1, hi = 0;
    for (int r = 0; r < size; r++) {
        size_t c = dp_shard_indices(n, size, r, idx, n);
        assert_int_equal(c, dp_shard_count(n, size, r));
        assert_int_equal(c, (size_t)r < n ? (n - (size_t)r + (size_t)size - 1) / (size_t)size : 0);
        lo = c < lo ? c : lo;
        hi = c > hi ? c : hi;
        for (size_t j = 0; j < c; j++) {
            assert_true(idx[j] < n);
            assert_int_equal(idx[j] % (size_t)size, (size_t)r);
            assert_int_equal(idx[j], dp_shard_index(j, size, r));
            if (j)
                assert_true(idx[j] > idx[j - 1]);
            assert_int_equal(seen[idx[j]], 0);
            seen[idx[j]] = 1;
        }
        total += c;
    }
    assert_int_equal(total, n);
    assert_true(hi - lo <= 1);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(seen[i], 1);
    free(seen);
    free(idx);
    checked_cases++;
}

static void test_shard_covers_every_element_once(void **state)
{
    (void)state;
    checked_cases = 0;
    for (size_t n = 0; n <= 200; n++)
        for (int size = 1; size <= 17; size++)
            check_cover(n, size);
    static const size_t big[] = {1000, 1001, 4095, 4097, 65537};
    static const int sizes[] = {3, 7, 8, 13, 64, 100, 255};
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
            check_cover(big[i], sizes[k]);
    assert_int_equal(checked_cases, 201 * 17 + 5 * 7);
}

static void test_shard_edges(void **state)
{
    (void)state;
    /* More ranks than elements: the high ranks get nothing. */
    assert_int_equal(dp_shard_count(3, 8, 2), 1);
    assert_int_equal(dp_shard_count(3, 8, 3), 0);
    /* Out-of-range ranks and sizes give empty shards, not garbage. */
    assert_int_equal(dp_shard_count(10, 4, 4), 0);
    assert_int_equal(dp_shard_count(10, 4, -1), 0);
    assert_int_equal(dp_shard_count(10, 0, 0), 0);
    /* The seeds' example shape: 10 elements on 4 ranks -> 3, 3, 2, 2. */
    size_t want[4] = {3, 3, 2, 2};
    for (int r = 0; r < 4; r++)
        assert_int_equal(dp_shard_count(10, 4, r), want[r]);
    /* cap smaller than the shard: the full count comes back, only cap indices are written. */
    size_t out[3] = {99, 99, 99};
    assert_int_equal(dp_shard_indices(10, 2, 1, out, 2), 5);
    assert_int_equal(out[0], 1);
    assert_int_equal(out[1], 3);
    assert_int_equal(out[2], 99);
    assert_int_equal(dp_shard_indices(10, 2, 1, NULL, 0), 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shard_covers_every_element_once),
        cmocka_unit_test(test_shard_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
