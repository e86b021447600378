/* test_dp_train.c — the numeric example: N-rank data-parallel training equals single-rank
 * training with the global batch (within the stated tolerance; bit-exactly in deterministic
 * mode against the rank-ordered reference), and the broadcast equalises different inits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dp/dp_train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEPS 40

typedef struct run {
    double loss[STEPS];
    float *params;
    dp_train_result res;
} run;

static void train(const dp_train_config *c, run *out)
{
    size_t n = dp_train_param_count(c);
    memset(&out->res, 0, sizeof out->res);
    out->params = calloc(n, sizeof(float));
    assert_non_null(out->params);
    out->res.loss = out->loss;
    out->res.params = out->params;
    dp_result r = dp_train_run(c, &out->res);
    if (r != DP_OK)
        fail_msg("train (%d ranks, %d shards): %s", c->ranks, c->shards, out->res.msg);
}

static dp_train_config base(int ranks, int batch)
{
    dp_train_config c = DP_TRAIN_CONFIG_INIT;
    c.ranks = ranks;
    c.batch = batch;
    c.steps = STEPS;
    return c;
}

/* max |a - b| over steps and parameters */
static void diffs(const run *a, const run *b, size_t n, double *dl, double *dp)
{
    *dl = *dp = 0;
    for (int t = 0; t < STEPS; t++)
        *dl = fmax(*dl, fabs(a->loss[t] - b->loss[t]));
    for (size_t i = 0; i < n; i++)
        *dp = fmax(*dp, fabs((double)a->params[i] - (double)b->params[i]));
}

/* DP == single rank within tolerance for ranks {1, 2, 3, 4, 8}, batches divisible and not by
 * the rank count, with and without momentum, an MLP and softmax regression. */
static void test_dp_matches_single_rank(void **state)
{
    (void)state;
    static const int ranks[] = {1, 2, 3, 4, 8};
    static const int batches[] = {64, 61};
    int compared = 0;
    for (int h = 0; h < 2; h++)
        for (size_t bi = 0; bi < 2; bi++)
            for (size_t k = 0; k < sizeof ranks / sizeof ranks[0]; k++) {
                dp_train_config c = base(ranks[k], batches[bi]);
                c.hidden = h ? 32 : 0;
                c.momentum = bi ? 0.9 : 0.0;
                run dp, ref;
                train(&c, &dp);
                dp_train_config cr = c;
                cr.ranks = 1;
                train(&cr, &ref);
                size_t n = dp_train_param_count(&c);
                double dl, dpar;
                diffs(&dp, &ref, n, &dl, &dpar);
                if (dl > DP_TRAIN_LOSS_ATOL || dpar > DP_TRAIN_PARAM_ATOL)
                    fail_msg("%d ranks, batch %d, hidden %d: loss diff %g, param diff %g", c.ranks, c.batch,
                             c.hidden, dl, dpar);
                assert_true(dp.res.ranks_identical); /* allreduce gives every rank the same bits */
                assert_true(dp.res.init_identical);
                assert_int_equal(dp.res.init_differed, ranks[k] > 1);
                /* It learned: the last steps' loss is far below the first (ln 4 = 1.39). */
                assert_true(dp.loss[0] > 1.0);
                assert_true(dp.loss[STEPS - 1] < 0.5 * dp.loss[0]);
                free(dp.params);
                free(ref.params);
                compared++;
            }
    assert_int_equal(compared, 20);
}

/* Deterministic mode: an N-rank run is bit-identical to the single rank that adds the N shard
 * gradients in rank order (and divides by N), whatever the fusion strategy. */
static void test_deterministic_bit_exact(void **state)
{
    (void)state;
    static const int ranks[] = {1, 2, 3, 4, 8};
    uint32_t ix[2] = {1, 2};
    double pct[2] = {70, 30};
    dp_fusion strategies[4] = {
        DP_FUSION_INIT,
        {DP_FUSION_INDEX, 2, ix, NULL, 0},
        {DP_FUSION_SIZE, 2, NULL, pct, 0},
        {DP_FUSION_THRESHOLD, 0, NULL, NULL, 1},
    };
    for (size_t k = 0; k < sizeof ranks / sizeof ranks[0]; k++) {
        dp_train_config c = base(ranks[k], 61);
        c.deterministic = 1;
        c.momentum = 0.5;
        dp_train_config co = c;
        co.ranks = 1;
        co.shards = ranks[k];
        run ord;
        train(&co, &ord);
        size_t n = dp_train_param_count(&c);
        for (int s = 0; s < 4; s++) {
            c.fusion = strategies[s];
            run dp;
            train(&c, &dp);
            if (memcmp(dp.loss, ord.loss, sizeof dp.loss) != 0 || memcmp(dp.params, ord.params, n * sizeof(float)))
                fail_msg("%d ranks, strategy %d: not bit-exact against the rank-ordered reference", ranks[k], s);
            assert_true(dp.res.ranks_identical);
            free(dp.params);
        }
        free(ord.params);
    }
}

/* Different random initialisations per rank: without the broadcast the ranks end apart, with it
 * (from any root) they all start from the root's parameters and end identical; the run equals
 * the single-rank run that starts from the root's initialisation. */
static void test_broadcast_equalises_initialisation(void **state)
{
    (void)state;
    dp_train_config c = base(4, 64);
    c.broadcast = 0;
    run nb;
    train(&c, &nb);
    assert_true(nb.res.init_differed);
    assert_false(nb.res.init_identical);
    assert_false(nb.res.ranks_identical);
    free(nb.params);

    for (int root = 0; root < 4; root += 3) {
        c = base(4, 64);
        c.root = root;
        c.deterministic = 1;
        run dp, ord;
        train(&c, &dp);
        assert_true(dp.res.init_differed);
        assert_true(dp.res.init_identical);
        assert_true(dp.res.ranks_identical);
        dp_train_config co = c;
        co.ranks = 1;
        co.shards = 4;
        train(&co, &ord);
        assert_memory_equal(dp.params, ord.params, dp_train_param_count(&c) * sizeof(float));
        free(dp.params);
        free(ord.params);
    }
}

static void test_bad_configs(void **state)
{
    (void)state;
    dp_train_config c = base(3, 64);
    uint32_t unsorted[2] = {2, 1};
    c.fusion.kind = DP_FUSION_INDEX;
    c.fusion.index = unsorted;
    c.fusion.count = 2;
    dp_train_result res;
    memset(&res, 0, sizeof res);
    assert_int_equal(dp_train_run(&c, &res), DP_ERR_STRATEGY);
    assert_non_null(strstr(res.msg, "not ascending"));
    c = base(8, 4);
    assert_int_equal(dp_train_run(&c, &res), DP_ERR_ARGUMENT);
    assert_non_null(strstr(res.msg, "every rank needs a sample"));
    c = base(4, 64);
    c.shards = 3;
    assert_int_equal(dp_train_run(&c, &res), DP_ERR_ARGUMENT);
    assert_non_null(strstr(res.msg, "only for ranks = 1"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dp_matches_single_rank),
        cmocka_unit_test(test_deterministic_bit_exact),
        cmocka_unit_test(test_broadcast_equalises_initialisation),
        cmocka_unit_test(test_bad_configs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
