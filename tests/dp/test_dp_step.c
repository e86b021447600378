/* test_dp_step.c — the distributed step on host ranks: exact means for every strategy and op,
 * the non-blocking form, the broadcast, SGD, and no allocation after dp_prepare. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dp/dp.h"
#include "ncl/ncl_host.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cmocka's asserts must stay on the main thread: ranks report with EXPECT. */
#define EXPECT(cond)                                                                       \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "%s:%d: rank %d: check failed: %s (%s)\n", __FILE__, __LINE__, \
                    rank, #cond, ctx ? dp_last_error(ctx) : "");                           \
            rc = NCL_ERR_INTERNAL;                                                         \
            goto out;                                                                      \
        }                                                                                  \
    } while (0)

#define NT 7
/* Element counts, zero and odd ones included; with fp32 that is 4 x count bytes. */
static const size_t counts[NT] = {5, 0, 33, 1, 100, 0, 17};

/* A counting allocator (one per rank) that can fail its Nth call. */
typedef struct counting {
    int allocs, frees, fail_at;
} counting;

static void *c_alloc(void *ud, size_t n)
{
    counting *c = ud;
    if (c->fail_at && c->allocs + 1 == c->fail_at)
        return NULL;
    c->allocs++;
    return malloc(n);
}

static void c_free(void *ud, void *p)
{
    counting *c = ud;
    c->frees++;
    free(p);
}

typedef struct job {
    dp_fusion fusion;
    ncl_op op;
    int nonblocking;
    int root;
    int steps;
    counting alloc[8];
    int update_calls[8];
    atomic_int checked;
} job;

typedef struct upd {
    int rank;
    int calls;
    int bad;
} upd;

static void count_update(void *ud, uint32_t i, const dp_tensor *t, ncl_dtype dt)
{
    upd *u = ud;
    if ((int)i != u->calls || dt != NCL_FLOAT32 || t->count != counts[i])
        u->bad = 1;
    u->calls++;
}

/* Gradient element j of tensor i on rank r in step s: small integers, so any summation order
 * gives the same exact sum and the mean is sum / p rounded once, as dp and the engine's avg do. */
static float gval(int r, uint32_t i, size_t j, int s)
{
    return (float)((int)((r * 7 + (int)i * 3 + (int)j + s * 5) % 23) - 11);
}

static ncl_result step_rank(ncl_comm *comm, void *arg)
{
    job *J = arg;
    int rank = 0, p = 1;
    ncl_comm_rank(comm, &rank);
    ncl_comm_size(comm, &p);
    ncl_result rc = NCL_SUCCESS;
    dp_ctx *ctx = NULL;
    float *param[NT] = {0}, *grad[NT] = {0};
    counting *ca = &J->alloc[rank];
    dp_config cfg = DP_CONFIG_INIT;
    cfg.alloc = c_alloc, cfg.free = c_free, cfg.alloc_ud = ca;
    cfg.op = J->op;
    for (int i = 0; i < NT; i++) {
        param[i] = malloc((counts[i] + 1) * sizeof(float));
        grad[i] = malloc((counts[i] + 1) * sizeof(float));
        for (size_t j = 0; j < counts[i]; j++)
            param[i][j] = (float)(rank * 1000 + i * 100 + (int)j); /* differs per rank */
    }
    EXPECT(dp_create(&ctx, comm, &cfg, NULL, 0) == DP_OK);
    for (int i = 0; i < NT; i++) {
        char name[8] = {'t', (char)('0' + i), 0};
        EXPECT(dp_register(ctx, name, counts[i], param[i], grad[i]) == DP_OK);
    }
    EXPECT(dp_set_fusion(ctx, &J->fusion) == DP_OK);
    EXPECT(dp_prepare(ctx) == DP_OK);
    int after_prepare = ca->allocs;

    /* Broadcast: every rank ends with the root's initial parameters. */
    EXPECT(dp_broadcast_params(ctx, J->root) == DP_OK);
    for (int i = 0; i < NT; i++)
        for (size_t j = 0; j < counts[i]; j++)
            EXPECT(param[i][j] == (float)(J->root * 1000 + i * 100 + (int)j));

    for (int s = 0; s < J->steps; s++) {
        for (int i = 0; i < NT; i++)
            for (size_t j = 0; j < counts[i]; j++)
                grad[i][j] = gval(rank, (uint32_t)i, j, s);
        upd u = {rank, 0, 0};
        if (J->nonblocking) {
            EXPECT(dp_step_start(ctx) == DP_OK);
            EXPECT(dp_step_start(ctx) == DP_ERR_STATE); /* one step at a time */
            int done = 0, polls = 0;
            while (!done) {
                EXPECT(dp_step_test(ctx, &done) == DP_OK);
                if (!done && ++polls % 64 == 0)
                    sched_yield();
            }
            EXPECT(dp_apply(ctx, count_update, &u) == DP_OK);
        } else {
            EXPECT(dp_step(ctx, count_update, &u) == DP_OK);
        }
        EXPECT(u.calls == NT && !u.bad);
        J->update_calls[rank] += u.calls;
        for (int i = 0; i < NT; i++)
            for (size_t j = 0; j < counts[i]; j++) {
                float sum = 0;
                for (int r = 0; r < p; r++)
                    sum += gval(r, (uint32_t)i, j, s);
                EXPECT(grad[i][j] == sum / (float)p);
            }
    }
    /* No allocation after dp_prepare: broadcast and steps used only the buffers made before. */
    EXPECT(ca->allocs == after_prepare);
    atomic_fetch_add(&J->checked, 1);
out:
    dp_destroy(ctx);
    for (int i = 0; i < NT; i++) {
        free(param[i]);
        free(grad[i]);
    }
    return rc;
}

static void run_job(job *J, int p)
{
    ncl_host_config hc = NCL_HOST_CONFIG_INIT;
    hc.nranks = p;
    hc.comm.timeout_ns = 10000000000ull;
    atomic_store(&J->checked, 0);
    memset(J->alloc, 0, sizeof J->alloc);
    memset(J->update_calls, 0, sizeof J->update_calls);
    assert_int_equal(ncl_host_run_cfg(&hc, step_rank, J, NULL), NCL_SUCCESS);
    assert_int_equal(atomic_load(&J->checked), p);
    for (int r = 0; r < p; r++) {
        assert_int_equal(J->alloc[r].allocs, J->alloc[r].frees); /* dp_destroy released everything */
        assert_int_equal(J->update_calls[r], NT * J->steps);
    }
}

static void test_step_means_every_strategy(void **state)
{
    (void)state;
    static const int ranks[] = {1, 2, 3, 4, 8};
    uint32_t ix[3] = {0, 3, 5};
    double pct[3] = {10, 60, 30};
    dp_fusion strategies[5] = {
        DP_FUSION_INIT,
        {DP_FUSION_INDEX, 3, ix, NULL, 0},
        {DP_FUSION_SIZE, 3, NULL, pct, 0},
        {DP_FUSION_THRESHOLD, 0, NULL, NULL, 64},
        {DP_FUSION_THRESHOLD, 0, NULL, NULL, 1}, /* one bucket per gradient */
    };
    int runs = 0;
    for (size_t k = 0; k < sizeof ranks / sizeof ranks[0]; k++)
        for (int s = 0; s < 5; s++)
            for (int op = 0; op < 2; op++) {
                job J;
                memset(&J, 0, sizeof J);
                J.fusion = strategies[s];
                J.op = op ? NCL_AVG : NCL_SUM;
                J.nonblocking = (s + op) % 2;
                J.root = ranks[k] - 1;
                J.steps = 3;
                run_job(&J, ranks[k]);
                runs++;
            }
    assert_int_equal(runs, 50);
}

/* Fault injection: the allocator fails its 1st, 2nd, ... call; every failure is DP_ERR_NOMEM
 * from the call that allocates, and nothing leaks. */
static void test_allocation_failures(void **state)
{
    (void)state;
    float p[64], g[64];
    int failures = 0;
    for (int n = 1; n < 20; n++) {
        counting ca = {0, 0, n};
        dp_config cfg = DP_CONFIG_INIT;
        cfg.alloc = c_alloc, cfg.free = c_free, cfg.alloc_ud = &ca;
        dp_ctx *ctx = NULL;
        dp_sgd sgd;
        memset(&sgd, 0, sizeof sgd);
        dp_result r = dp_create(&ctx, NULL, &cfg, NULL, 0);
        if (r == DP_OK)
            r = dp_register(ctx, "a", 32, p, g);
        if (r == DP_OK)
            r = dp_register(ctx, "b", 32, p + 32, g + 32);
        if (r == DP_OK)
            r = dp_sgd_init(&sgd, ctx, 0.1, 0.9);
        if (r == DP_OK)
            r = dp_prepare(ctx);
        if (r != DP_OK) {
            assert_int_equal(r, DP_ERR_NOMEM);
            failures++;
        }
        dp_sgd_release(&sgd);
        dp_destroy(ctx);
        assert_int_equal(ca.allocs, ca.frees);
    }
    assert_int_equal(failures, 7); /* create x2, sgd x2, prepare x3 (buckets, sizes, buffer) */
}

/* SGD with momentum against the formula, fp32 and fp64. */
static void test_sgd(void **state)
{
    (void)state;
    float p[3] = {1, 2, 3}, g[3] = {0.5f, -1, 2};
    dp_ctx *ctx;
    assert_int_equal(dp_create(&ctx, NULL, NULL, NULL, 0), DP_OK);
    assert_int_equal(dp_register(ctx, "w", 3, p, g), DP_OK);
    dp_sgd sgd;
    assert_int_equal(dp_sgd_init(&sgd, ctx, 0.1, 0.9), DP_OK);
    assert_int_equal(dp_prepare(ctx), DP_OK);
    float v[3] = {0}, want[3] = {1, 2, 3};
    for (int s = 0; s < 3; s++) {
        assert_int_equal(dp_apply(ctx, dp_sgd_update, &sgd), DP_OK);
        for (int i = 0; i < 3; i++) {
            v[i] = 0.9f * v[i] + g[i];
            want[i] -= 0.1f * v[i];
            assert_true(p[i] == want[i]);
        }
    }
    dp_sgd_release(&sgd);
    dp_destroy(ctx);
    assert_int_equal(dp_sgd_init(&sgd, NULL, 0.1, 0), DP_ERR_ARGUMENT);

    double pd[2] = {1, 1}, gd[2] = {1, -1};
    dp_config cfg = DP_CONFIG_INIT;
    cfg.dtype = NCL_FLOAT64;
    assert_int_equal(dp_create(&ctx, NULL, &cfg, NULL, 0), DP_OK);
    assert_int_equal(dp_register(ctx, "w", 2, pd, gd), DP_OK);
    assert_int_equal(dp_sgd_init(&sgd, ctx, 0.25, 0), DP_OK);
    assert_int_equal(dp_sgd_init(&sgd, ctx, -1, 0), DP_ERR_ARGUMENT);
    assert_int_equal(dp_sgd_init(&sgd, ctx, 0.25, 0), DP_OK);
    assert_int_equal(dp_prepare(ctx), DP_OK);
    assert_int_equal(dp_apply(ctx, dp_sgd_update, &sgd), DP_OK);
    assert_true(pd[0] == 0.75 && pd[1] == 1.25);
    dp_sgd_release(&sgd);
    dp_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_step_means_every_strategy),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_sgd),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
