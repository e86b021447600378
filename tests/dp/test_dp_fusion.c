/* test_dp_fusion.c — gradient fusion: the planned buckets for each strategy, byte-exact
 * pack/unpack of random tensor lists, and every invalid strategy rejected with its message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dp/dp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state = 0x1234;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Plans and returns the bucket count; asserts success. */
static uint32_t plan_ok(const dp_fusion *f, const uint64_t *bytes, uint32_t n, dp_bucket *b)
{
    uint32_t nb = 0;
    char msg[320];
    dp_result r = dp_fusion_plan(f, bytes, n, b, n, &nb, msg, sizeof msg);
    if (r != DP_OK)
        fail_msg("plan failed: %s", msg);
    return nb;
}

#define BK(i, f, l) \
    do { \
        assert_int_equal(b[i].first, (f)); \
        assert_int_equal(b[i].last, (l)); \
    } while (0)

static void test_plans_of_known_lists(void **state)
{
    (void)state;
    dp_bucket b[100];
    uint64_t bytes[100];
    for (int i = 0; i < 100; i++)
        bytes[i] = 4;
    /* Default 96.54 / 3.46 of 400 bytes: the first segment ends where the running total reaches
     * 386.16 bytes, i.e. after gradient 96 (388 bytes); the rest (97..99) is the second. */
    dp_fusion def = DP_FUSION_INIT;
    assert_int_equal(plan_ok(&def, bytes, 100, b), 2);
    BK(0, 0, 96);
    BK(1, 97, 99);
    assert_int_equal(b[0].bytes, 388);
    assert_int_equal(b[1].bytes, 12);
    assert_int_equal(b[1].offset % DP_BUCKET_ALIGN, 0);
    assert_true(b[1].offset >= b[0].offset + b[0].bytes);
    /* A last gradient larger than 3.46 %: gradients are not split, the second segment is empty
     * and dropped. */
    uint64_t few[4] = {512, 16, 2048, 128};
    assert_int_equal(plan_ok(&def, few, 4, b), 1);
    BK(0, 0, 3);
    /* Index list: inclusive end indices, the rest implied. */
    uint32_t ix[2] = {2, 5};
    dp_fusion fi = {DP_FUSION_INDEX, 2, ix, NULL, 0};
    assert_int_equal(plan_ok(&fi, bytes, 10, b), 3);
    BK(0, 0, 2);
    BK(1, 3, 5);
    BK(2, 6, 9);
    uint32_t ix_last[1] = {9};
    dp_fusion fl = {DP_FUSION_INDEX, 1, ix_last, NULL, 0};
    assert_int_equal(plan_ok(&fl, bytes, 10, b), 1);
    BK(0, 0, 9);
    uint32_t ix_each[3] = {0, 1, 2};
    dp_fusion fe = {DP_FUSION_INDEX, 3, ix_each, NULL, 0};
    assert_int_equal(plan_ok(&fe, bytes, 3, b), 3);
    /* Size percentages. */
    double half[2] = {50, 50};
    dp_fusion fs = {DP_FUSION_SIZE, 2, NULL, half, 0};
    assert_int_equal(plan_ok(&fs, bytes, 10, b), 2);
    BK(0, 0, 4);
    BK(1, 5, 9);
    double thirds[3] = {33.3333, 33.3333, 33.3334};
    dp_fusion ft3 = {DP_FUSION_SIZE, 3, NULL, thirds, 0};
    assert_int_equal(plan_ok(&ft3, bytes, 9, b), 3);
    BK(0, 0, 2);
    BK(1, 3, 5);
    BK(2, 6, 8);
    /* Threshold: pack while the bucket stays <= 16 bytes; a larger gradient alone; zero-size
     * gradients join whatever is open. */
    uint64_t tb[6] = {8, 8, 8, 100, 0, 4};
    dp_fusion ft = {DP_FUSION_THRESHOLD, 0, NULL, NULL, 16};
    assert_int_equal(plan_ok(&ft, tb, 6, b), 4);
    BK(0, 0, 1);
    BK(1, 2, 2);
    BK(2, 3, 3);
    BK(3, 4, 5);
    ft.threshold_bytes = 1; /* one bucket per (non-empty) gradient */
    assert_int_equal(plan_ok(&ft, bytes, 10, b), 10);
    /* All gradients empty: one bucket of 0 bytes for every strategy. */
    uint64_t zero[5] = {0};
    assert_int_equal(plan_ok(&def, zero, 5, b), 1);
    assert_int_equal(plan_ok(&fs, zero, 5, b), 1);
    assert_int_equal(b[0].bytes, 0);
}

/* A random strategy valid for n gradients. */
static dp_fusion random_strategy(uint32_t n, uint32_t *ix, double *pct)
{
    dp_fusion f = DP_FUSION_INIT;
    switch (rnd() % 4) {
    case 0: break;
    case 1: {
        f.kind = DP_FUSION_INDEX;
        uint32_t want = 1 + (uint32_t)(rnd() % DP_MAX_SEGMENTS);
        uint32_t last = 0;
        for (uint32_t k = 0; k < want; k++) {
            uint32_t lo = k ? last + 1 : 0;
            if (lo >= n)
                break;
            last = lo + (uint32_t)(rnd() % (n - lo < 4 ? n - lo : 4));
            ix[f.count++] = last;
        }
        if (ix[f.count - 1] != n - 1 && f.count == DP_MAX_SEGMENTS)
            ix[f.count - 1] = n - 1; /* keep the implied segment within the limit */
        f.index = ix;
        break;
    }
    case 2: {
        f.kind = DP_FUSION_SIZE;
        f.count = 1 + (uint32_t)(rnd() % DP_MAX_SEGMENTS);
        double left = 100;
        for (uint32_t k = 0; k + 1 < f.count; k++) {
            pct[k] = left / (double)(f.count - k) * (0.2 + (double)(rnd() % 1000) / 625.0);
            if (pct[k] >= left)
                pct[k] = left / 2;
            left -= pct[k];
        }
        pct[f.count - 1] = left;
        f.percent = pct;
        break;
    }
    default:
        f.kind = DP_FUSION_THRESHOLD;
        f.threshold_bytes = 1 + rnd() % 600;
        break;
    }
    return f;
}

/* Random tensor lists (zero-size and odd element counts included), every strategy: the buckets
 * cover the gradients in order exactly once, respect the limits, and pack + unpack restore every
 * gradient and parameter byte. */
static void test_pack_unpack_random_lists(void **state)
{
    (void)state;
    int per_kind[4] = {0};
    for (int iter = 0; iter < 400; iter++) {
        uint32_t n = 1 + (uint32_t)(rnd() % 24);
        ncl_dtype dt = (iter % 3) ? NCL_FLOAT32 : NCL_FLOAT64;
        size_t es = ncl_dtype_size(dt);
        size_t count[24];
        unsigned char *grad[24], *param[24], *gref[24], *pref[24];
        for (uint32_t i = 0; i < n; i++) {
            uint64_t k = rnd() % 8;
            count[i] = k == 0 ? 0 : k == 1 ? 1 : (size_t)(rnd() % 97) | 1; /* zero, one, odd */
            size_t bytes = count[i] * es;
            grad[i] = malloc(bytes + 1);
            param[i] = malloc(bytes + 1);
            gref[i] = malloc(bytes + 1);
            pref[i] = malloc(bytes + 1);
            for (size_t j = 0; j < bytes; j++) {
                gref[i][j] = (unsigned char)rnd(); /* any bit pattern, NaNs included: a copy is a copy */
                pref[i][j] = (unsigned char)rnd();
            }
            memcpy(grad[i], gref[i], bytes);
            memcpy(param[i], pref[i], bytes);
        }
        uint32_t ix[DP_MAX_SEGMENTS];
        double pct[DP_MAX_SEGMENTS];
        dp_fusion f = random_strategy(n, ix, pct);
        per_kind[f.kind]++;

        dp_config cfg = DP_CONFIG_INIT;
        cfg.dtype = dt;
        dp_ctx *ctx = NULL;
        char msg[320];
        assert_int_equal(dp_create(&ctx, NULL, &cfg, msg, sizeof msg), DP_OK);
        for (uint32_t i = 0; i < n; i++) {
            char name[16];
            snprintf(name, sizeof name, "t%u", i);
            assert_int_equal(dp_register(ctx, name, count[i], count[i] ? param[i] : NULL,
                                         count[i] ? grad[i] : NULL), DP_OK);
        }
        if (dp_set_fusion(ctx, &f) != DP_OK || dp_prepare(ctx) != DP_OK)
            fail_msg("iter %d: %s", iter, dp_last_error(ctx));
        uint32_t nb = dp_bucket_count(ctx);
        if (f.kind == DP_FUSION_INDEX || f.kind == DP_FUSION_SIZE || f.kind == DP_FUSION_DEFAULT)
            assert_true(nb <= DP_MAX_SEGMENTS);
        if (f.kind == DP_FUSION_INDEX) /* index lists are exact: one bucket per segment */
            assert_int_equal(nb, f.count + (ix[f.count - 1] < n - 1));
        uint32_t next = 0;
        uint64_t end = 0;
        for (uint32_t b = 0; b < nb; b++) {
            const dp_bucket *bk = dp_bucket_at(ctx, b);
            assert_int_equal(bk->first, next);
            assert_true(bk->last >= bk->first && bk->last < n);
            if (f.kind == DP_FUSION_INDEX && b < f.count)
                assert_int_equal(bk->last, ix[b]);
            uint64_t sum = 0;
            for (uint32_t i = bk->first; i <= bk->last; i++)
                sum += count[i] * es;
            assert_int_equal(bk->bytes, sum);
            if (f.kind == DP_FUSION_THRESHOLD && bk->last > bk->first)
                assert_true(sum <= f.threshold_bytes);
            assert_int_equal(bk->offset % DP_BUCKET_ALIGN, 0);
            assert_true(bk->offset >= end);
            end = bk->offset + bk->bytes;
            next = bk->last + 1;
        }
        assert_int_equal(next, n);
        unsigned char *buf = dp_bucket_buffer(ctx);
        for (uint32_t b = 0; b < nb; b++) {
            assert_int_equal(dp_pack(ctx, b), DP_OK);
            /* The bucket holds its gradients back to back, in order. */
            const dp_bucket *bk = dp_bucket_at(ctx, b);
            size_t at = (size_t)bk->offset;
            for (uint32_t i = bk->first; i <= bk->last; i++) {
                assert_memory_equal(buf + at, gref[i], count[i] * es);
                at += count[i] * es;
            }
        }
        for (uint32_t i = 0; i < n; i++)
            memset(grad[i], 0xA5, count[i] * es);
        for (uint32_t b = 0; b < nb; b++)
            assert_int_equal(dp_unpack(ctx, b), DP_OK);
        for (uint32_t b = 0; b < nb; b++)
            assert_int_equal(dp_pack_params(ctx, b), DP_OK);
        for (uint32_t i = 0; i < n; i++)
            memset(param[i], 0x5A, count[i] * es);
        for (uint32_t b = 0; b < nb; b++)
            assert_int_equal(dp_unpack_params(ctx, b), DP_OK);
        for (uint32_t i = 0; i < n; i++) {
            if (count[i]) {
                assert_memory_equal(grad[i], gref[i], count[i] * es);
                assert_memory_equal(param[i], pref[i], count[i] * es);
            }
            free(grad[i]);
            free(param[i]);
            free(gref[i]);
            free(pref[i]);
        }
        dp_destroy(ctx);
    }
    for (int k = 0; k < 4; k++)
        assert_true(per_kind[k] >= 60); /* every strategy was exercised many times */
}

/* Rejected with DP_ERR_STRATEGY and a message containing every fragment. */
static void expect_rejected(const dp_fusion *f, uint32_t n, const char *const *frags, int nfrag)
{
    uint64_t bytes[32];
    dp_bucket b[32];
    uint32_t nb = 77;
    char msg[320];
    for (uint32_t i = 0; i < 32; i++)
        bytes[i] = 4;
    assert_int_equal(dp_fusion_plan(f, bytes, n, b, 32, &nb, msg, sizeof msg), DP_ERR_STRATEGY);
    assert_int_equal(nb, 0);
    for (int k = 0; k < nfrag; k++)
        if (strstr(msg, frags[k]) == NULL)
            fail_msg("message '%s' lacks '%s'", msg, frags[k]);
}
#define REJECT(f, n, ...)                                                          \
    do {                                                                           \
        const char *const fr_[] = {__VA_ARGS__};                                   \
        expect_rejected((f), (n), fr_, (int)(sizeof fr_ / sizeof fr_[0]));          \
    } while (0)

static void test_invalid_strategies_rejected(void **state)
{
    (void)state;
    uint32_t unsorted[3] = {1, 5, 3};
    dp_fusion f = {DP_FUSION_INDEX, 3, unsorted, NULL, 0};
    REJECT(&f, 10, "not ascending", "3 (position 2) after 5", "must strictly increase");
    uint32_t dup[2] = {4, 4};
    f.index = dup, f.count = 2;
    REJECT(&f, 10, "not ascending", "4 (position 1) after 4");
    uint32_t beyond[2] = {3, 10};
    f.index = beyond;
    REJECT(&f, 10, "index 10 (position 1) is beyond the last gradient", "0..9", "10 gradients registered");
    uint32_t nine[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
    f.index = nine, f.count = 9;
    REJECT(&f, 10, "9 segments", "at most 8");
    f.count = 8; /* ends at 7 of 0..9: the implied ninth segment breaks the limit */
    REJECT(&f, 10, "implied last segment (gradients 8..9)", "make 9 segments", "at most 8", "end the list with 9");
    f.count = 0;
    REJECT(&f, 10, "index list is empty", "1 to 8 ascending end indices", "0..9");
    f.index = NULL, f.count = 3;
    REJECT(&f, 10, "index list is empty");

    double low[2] = {60, 39.5};
    dp_fusion s = {DP_FUSION_SIZE, 2, NULL, low, 0};
    REJECT(&s, 10, "sum to 99.5", "must sum to 100", "within 0.001");
    double high[3] = {50, 50, 0.01};
    s.percent = high, s.count = 3;
    REJECT(&s, 10, "sum to 100.01", "must sum to 100");
    double nine_pct[9] = {20, 10, 10, 10, 10, 10, 10, 10, 10};
    s.percent = nine_pct, s.count = 9;
    REJECT(&s, 10, "9 segments", "at most 8");
    double neg[3] = {110, -20, 10};
    s.percent = neg, s.count = 3;
    REJECT(&s, 10, "percentage 110 (position 0) is out of range", "> 0 and <= 100");
    double zero[2] = {100, 0};
    s.percent = zero, s.count = 2;
    REJECT(&s, 10, "percentage 0 (position 1) is out of range");
    s.count = 0;
    REJECT(&s, 10, "percentage list is empty", "summing to 100");
    /* Within the stated tolerance is accepted. */
    double close[2] = {96.5404, 3.46};
    s.percent = close, s.count = 2;
    uint64_t bytes[10] = {4, 4, 4, 4, 4, 4, 4, 4, 4, 4};
    dp_bucket b[10];
    uint32_t nb;
    assert_int_equal(dp_fusion_plan(&s, bytes, 10, b, 10, &nb, NULL, 0), DP_OK);

    dp_fusion t = {DP_FUSION_THRESHOLD, 0, NULL, NULL, 0};
    REJECT(&t, 10, "threshold is 0 bytes", "must be > 0");
    dp_fusion k = {(dp_fusion_kind)9, 0, NULL, NULL, 0};
    REJECT(&k, 10, "unknown strategy kind 9", "default, index, size or threshold");
    dp_fusion d = DP_FUSION_INIT;
    REJECT(&d, 0, "no gradients registered");
}

/* The same checks through a context: dp_set_fusion rejects what it can judge alone (and keeps
 * the previous strategy), dp_prepare rejects indices beyond the registered gradients. */
static void test_context_rejects(void **state)
{
    (void)state;
    float p[8], g[8];
    dp_ctx *ctx;
    assert_int_equal(dp_create(&ctx, NULL, NULL, NULL, 0), DP_OK);
    for (int i = 0; i < 4; i++) {
        char name[8] = {'w', (char)('0' + i), 0};
        assert_int_equal(dp_register(ctx, name, 2, p + 2 * i, g + 2 * i), DP_OK);
    }
    uint32_t unsorted[2] = {2, 1};
    dp_fusion f = {DP_FUSION_INDEX, 2, unsorted, NULL, 0};
    assert_int_equal(dp_set_fusion(ctx, &f), DP_ERR_STRATEGY);
    assert_non_null(strstr(dp_last_error(ctx), "not ascending"));
    double pct[2] = {50, 40};
    dp_fusion s = {DP_FUSION_SIZE, 2, NULL, pct, 0};
    assert_int_equal(dp_set_fusion(ctx, &s), DP_ERR_STRATEGY);
    assert_non_null(strstr(dp_last_error(ctx), "sum to 90"));
    uint32_t beyond[1] = {4};
    f.index = beyond, f.count = 1;
    assert_int_equal(dp_set_fusion(ctx, &f), DP_OK); /* the count is not known yet */
    beyond[0] = 0; /* the context copied the list: changing it now has no effect */
    assert_int_equal(dp_prepare(ctx), DP_ERR_STRATEGY);
    assert_non_null(strstr(dp_last_error(ctx), "index 4 (position 0) is beyond the last gradient"));
    assert_non_null(strstr(dp_strerror(DP_ERR_STRATEGY), "fusion strategy"));
    /* Fix it and go on; afterwards the phase rules hold. */
    uint32_t ok[2] = {1, 3};
    f.index = ok, f.count = 2;
    assert_int_equal(dp_set_fusion(ctx, &f), DP_OK);
    assert_int_equal(dp_prepare(ctx), DP_OK);
    assert_int_equal(dp_bucket_count(ctx), 2);
    assert_int_equal(dp_register(ctx, "late", 1, p, g), DP_ERR_STATE);
    assert_non_null(strstr(dp_last_error(ctx), "after dp_prepare"));
    assert_int_equal(dp_set_fusion(ctx, &f), DP_ERR_STATE);
    assert_int_equal(dp_broadcast_params(ctx, 0), DP_ERR_STATE);
    assert_non_null(strstr(dp_last_error(ctx), "no communicator"));
    assert_int_equal(dp_step(ctx, NULL, NULL), DP_ERR_STATE);
    dp_destroy(ctx);

    /* Registration errors. */
    assert_int_equal(dp_create(&ctx, NULL, NULL, NULL, 0), DP_OK);
    assert_int_equal(dp_register(ctx, "", 1, p, g), DP_ERR_ARGUMENT);
    assert_int_equal(dp_register(ctx, "x", 1, NULL, g), DP_ERR_ARGUMENT);
    assert_non_null(strstr(dp_last_error(ctx), "NULL parameter"));
    assert_int_equal(dp_register(ctx, "empty", 0, NULL, NULL), DP_OK);
    assert_int_equal(dp_prepare(ctx), DP_OK);
    dp_destroy(ctx);
    assert_int_equal(dp_create(&ctx, NULL, NULL, NULL, 0), DP_OK);
    assert_int_equal(dp_prepare(ctx), DP_ERR_STATE);
    assert_non_null(strstr(dp_last_error(ctx), "no tensors registered"));
    dp_destroy(ctx);
    dp_config bad = DP_CONFIG_INIT;
    bad.dtype = NCL_INT8;
    char msg[320];
    assert_int_equal(dp_create(&ctx, NULL, &bad, msg, sizeof msg), DP_ERR_ARGUMENT);
    assert_null(ctx);
    assert_non_null(strstr(msg, "use float32 or float64"));
    bad.dtype = NCL_FLOAT32;
    bad.op = NCL_MAX;
    assert_int_equal(dp_create(&ctx, NULL, &bad, msg, sizeof msg), DP_ERR_ARGUMENT);
    assert_non_null(strstr(msg, "not a mean"));
    bad.op = NCL_SUM;
    bad.max_tensors = 1;
    assert_int_equal(dp_create(&ctx, NULL, &bad, msg, sizeof msg), DP_OK);
    assert_int_equal(dp_register(ctx, "a", 1, p, g), DP_OK);
    assert_int_equal(dp_register(ctx, "b", 1, p, g), DP_ERR_ARGUMENT);
    assert_non_null(strstr(dp_last_error(ctx), "raise dp_config.max_tensors"));
    dp_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plans_of_known_lists),
        cmocka_unit_test(test_pack_unpack_random_lists),
        cmocka_unit_test(test_invalid_strategies_rejected),
        cmocka_unit_test(test_context_rejects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
