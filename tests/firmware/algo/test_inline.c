/* test_inline.c — the DMA's inline-reduce capability table: with a dtype/op the backend cannot
 * reduce inline, or an alignment its tasks do not meet, every algorithm either refuses or runs the
 * WRITE-to-scratch + LOCAL_REDUCE path (proven by the checker); ring allreduce, ring
 * reduce-scatter and tree reduce never refuse and take both paths task by task, bit-exact on the
 * host backend; and the checker rejects an inline reduce the backend cannot do. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ncl/ncl_check.h>
#include <ncl/ncl_host.h>

#include "ncl_algo.h"
#include "sweep/rs_data.h"

#define SCRATCH_BYTES (4ull << 20)

static void *alloc_fn(void *ud, size_t bytes)
{
    (void)ud;
    return malloc(bytes);
}

static void free_fn(void *ud, void *ptr)
{
    (void)ud;
    free(ptr);
}

/* A backend's capabilities: which ops each dtype reduces inline, and the alignment it needs. */
typedef struct caps {
    const char *name;
    uint16_t ops[NCL_DTYPE_COUNT];
    uint32_t align;
} caps;

static caps caps_none(void)
{
    caps c = {"no inline reduce", {0}, 0};
    return c;
}

/* Everything inline but only at 8-byte alignment: 4-byte and smaller elements mix both paths. */
static caps caps_align8(void)
{
    caps c = {"8-byte aligned inline reduce", {0}, 8};
    for (int d = 0; d < NCL_DTYPE_COUNT; d++)
        c.ops[d] = NCL_INLINE_ALL_OPS;
    return c;
}

/* Like the RTL stub's reduce datapath: int32/uint32 sum/max/min and fp32 sum only. */
static caps caps_rtl(void)
{
    caps c = {"int32/uint32 sum/max/min, fp32 sum", {0}, 4};
    c.ops[NCL_INT32] = c.ops[NCL_UINT32] = (1u << NCL_SUM) | (1u << NCL_MAX) | (1u << NCL_MIN);
    c.ops[NCL_FLOAT32] = 1u << NCL_SUM;
    return c;
}

static ncl_result make_plan(ncl_plan *plan, const caps *cp, ncl_coll coll, ncl_algo algo, int p, int root,
                            uint64_t count, ncl_dtype dt, ncl_op op, int inplace, uint64_t slice)
{
    ncl_plan_env env = {0};
    env.slice_bytes = slice;
    env.channels = 2;
    env.max_queues = NCL_MAX_QUEUES;
    env.scratch_bytes = SCRATCH_BYTES;
    env.link_alpha_ns = 2000;
    env.link_gbps = 20;
    env.inline_ops = cp->ops;
    env.inline_align = cp->align;
    return ncl_plan_make(plan, coll, algo, p, 0, root, count, dt, op, inplace, &env);
}

/* Task kinds of every stream of the plan, summed over ranks and queues. */
static void count_kinds(const ncl_plan *plan, uint64_t kinds[NCL_TASK_KIND_COUNT])
{
    const ncl_algo_desc *d = ncl_algo_find((ncl_coll)plan->coll, (ncl_algo)plan->algo);
    memset(kinds, 0, NCL_TASK_KIND_COUNT * sizeof kinds[0]);
    for (int r = 0; r < plan->nranks; r++) {
        ncl_plan pr = *plan;
        pr.rank = r;
        for (uint32_t q = 0; q < pr.queues; q++) {
            ncl_gen g;
            ncl_task t;
            memset(&g, 0, sizeof g);
            while (d->next(&pr, q, &g, &t))
                kinds[t.kind]++;
        }
    }
}

/* Must take the scratch path rather than refuse (given enough scratch). */
static int never_refuses(ncl_coll coll, ncl_algo algo)
{
    return algo == NCL_ALGO_RING && coll != NCL_COLL_REDUCE ? 1 : algo == NCL_ALGO_TREE && coll == NCL_COLL_REDUCE;
}

/* Every algorithm under every capability: refuses, or its schedule passes the checker (which also
 * rejects a WRITE_REDUCE the capabilities do not allow). */
static void test_checker(void **state)
{
    (void)state;
    const caps all[] = {caps_none(), caps_align8(), caps_rtl()};
    const int ranks[] = {2, 3, 5, 8};
    const ncl_dtype dts[] = {NCL_INT8, NCL_FLOAT16, NCL_FLOAT32, NCL_FLOAT64};
    const ncl_op ops[] = {NCL_SUM, NCL_AVG, NCL_MAX};
    int checked = 0, refused = 0, fails = 0;
    for (size_t ci = 0; ci < sizeof all / sizeof all[0]; ci++)
        for (int coll = 0; coll < NCL_COLL_COUNT; coll++)
            for (int algo = NCL_ALGO_AUTO + 1; algo < NCL_ALGO_COUNT; algo++) {
                if (!ncl_algo_find((ncl_coll)coll, (ncl_algo)algo) || algo == NCL_ALGO_USER || algo == NCL_ALGO_HIER)
                    continue;
                for (size_t ri = 0; ri < sizeof ranks / sizeof ranks[0]; ri++) {
                    int p = ranks[ri];
                    const uint64_t counts[] = {1, (uint64_t)p + 1, 1009};
                    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++)
                        for (size_t di = 0; di < sizeof dts / sizeof dts[0]; di++)
                            for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++)
                                for (int inplace = 0; inplace < 2; inplace++)
                                    for (int small = 0; small < 2; small++) {
                                        int root = coll == NCL_COLL_BROADCAST || coll == NCL_COLL_REDUCE ? p - 1 : 0;
                                        ncl_plan plan;
                                        ncl_result rc = make_plan(&plan, &all[ci], (ncl_coll)coll, (ncl_algo)algo, p,
                                                                  root, counts[k], dts[di], ops[oi], inplace,
                                                                  small ? 96 : 1u << 20);
                                        char msg[512] = "";
                                        if (rc == NCL_ERR_UNSUPPORTED && !never_refuses((ncl_coll)coll, (ncl_algo)algo)) {
                                            refused++;
                                            continue;
                                        }
                                        if (rc == NCL_SUCCESS)
                                            rc = ncl_check(&plan, NULL, alloc_fn, free_fn, NULL, msg, sizeof msg);
                                        checked++;
                                        if (rc != NCL_SUCCESS && fails++ < 10)
                                            print_message("FAIL %s/%s [%s] p=%d count=%llu %s %s %s slice=%s: %s: %s\n",
                                                          ncl_coll_name((ncl_coll)coll), ncl_algo_name((ncl_algo)algo),
                                                          all[ci].name, p, (unsigned long long)counts[k],
                                                          ncl_dtype_name(dts[di]), ncl_op_name(ops[oi]),
                                                          inplace ? "in-place" : "out-of-place", small ? "96" : "1M",
                                                          ncl_strerror(rc), msg);
                                    }
                }
            }
    print_message("%d plans checked, %d refused, %d failed\n", checked, refused, fails);
    assert_int_equal(fails, 0);
    assert_true(checked > refused);
}

/* Which path the ring and tree take: only scratch without inline reduce, both at 8-byte
 * alignment with 4-byte elements (chunks start at odd element offsets), only inline when all is
 * aligned. */
static void test_paths(void **state)
{
    (void)state;
    const struct {
        ncl_coll coll;
        ncl_algo algo;
        uint64_t count; /* some tasks start or end off the 8-byte grid, some on it */
    } algos[] = {{NCL_COLL_ALLREDUCE, NCL_ALGO_RING, 1042}, {NCL_COLL_REDUCE_SCATTER, NCL_ALGO_RING, 1009},
                 {NCL_COLL_REDUCE, NCL_ALGO_TREE, 1009}};
    for (size_t a = 0; a < sizeof algos / sizeof algos[0]; a++) {
        caps none = caps_none(), align8 = caps_align8();
        ncl_plan plan;
        uint64_t kinds[NCL_TASK_KIND_COUNT];
        /* tree reduce rounds are slices: 1009 elements in rounds of 24 and 23 */
        uint64_t slice = algos[a].algo == NCL_ALGO_TREE ? 96 : 1u << 20;
        assert_int_equal(make_plan(&plan, &none, algos[a].coll, algos[a].algo, 5, 0, algos[a].count, NCL_FLOAT32, NCL_SUM, 1, slice),
                         NCL_SUCCESS);
        count_kinds(&plan, kinds);
        assert_int_equal(kinds[NCL_TASK_WRITE_REDUCE], 0);
        assert_true(kinds[NCL_TASK_LOCAL_REDUCE] > 0);

        assert_int_equal(make_plan(&plan, &align8, algos[a].coll, algos[a].algo, 5, 0, algos[a].count, NCL_FLOAT32, NCL_SUM, 1,
                                   slice),
                         NCL_SUCCESS);
        count_kinds(&plan, kinds);
        print_message("%s/%s at 8-byte alignment, fp32: %llu inline, %llu staged\n",
                      ncl_coll_name(algos[a].coll), ncl_algo_name(algos[a].algo),
                      (unsigned long long)kinds[NCL_TASK_WRITE_REDUCE],
                      (unsigned long long)kinds[NCL_TASK_LOCAL_REDUCE]);
        assert_true(kinds[NCL_TASK_WRITE_REDUCE] > 0);
        assert_true(kinds[NCL_TASK_LOCAL_REDUCE] > 0);

        assert_int_equal(make_plan(&plan, &align8, algos[a].coll, algos[a].algo, 5, 0, algos[a].count, NCL_FLOAT64, NCL_SUM, 1,
                                   slice),
                         NCL_SUCCESS);
        count_kinds(&plan, kinds);
        assert_true(kinds[NCL_TASK_WRITE_REDUCE] > 0);
        assert_int_equal(kinds[NCL_TASK_LOCAL_REDUCE], 0);
    }
}

/* The checker rejects the plain ring (inline everywhere) under a backend that cannot reduce inline. */
static int inline_ring_next(void *ud, int rank, uint32_t queue, ncl_gen *gen, ncl_task *out)
{
    ncl_plan pr = *(const ncl_plan *)ud;
    pr.rank = rank;
    return ncl_algo_find(NCL_COLL_ALLREDUCE, NCL_ALGO_RING)->next(&pr, queue, gen, out);
}

static void test_checker_rejects(void **state)
{
    (void)state;
    caps full = caps_align8(), none = caps_none();
    full.align = 0;
    ncl_plan inline_plan, target;
    assert_int_equal(make_plan(&inline_plan, &full, NCL_COLL_ALLREDUCE, NCL_ALGO_RING, 4, 0, 1000, NCL_FLOAT32,
                               NCL_SUM, 1, 1u << 20),
                     NCL_SUCCESS);
    assert_int_equal(make_plan(&target, &none, NCL_COLL_ALLREDUCE, NCL_ALGO_RING, 4, 0, 1000, NCL_FLOAT32, NCL_SUM,
                               1, 1u << 20),
                     NCL_SUCCESS);
    ncl_check_source src = {inline_ring_next, &inline_plan, inline_plan.queues};
    target.queues = inline_plan.queues;
    char msg[512];
    assert_int_equal(ncl_check(&target, &src, alloc_fn, free_fn, NULL, msg, sizeof msg), NCL_ERR_SCHEDULE);
    assert_non_null(strstr(msg, "reduces inline, which the backend's DMA cannot do for float sum"));

    caps align = caps_align8();
    assert_int_equal(make_plan(&target, &align, NCL_COLL_ALLREDUCE, NCL_ALGO_RING, 4, 0, 1000, NCL_FLOAT32, NCL_SUM,
                               1, 1u << 20),
                     NCL_SUCCESS);
    target.queues = inline_plan.queues;
    assert_int_equal(ncl_check(&target, &src, alloc_fn, free_fn, NULL, msg, sizeof msg), NCL_ERR_SCHEDULE);
    assert_non_null(strstr(msg, "not aligned to the 8 bytes the backend's inline reduce needs"));
}

/* Real runs on the host backend under each capability: every dtype, op, in and out of place,
 * compared bit-exactly with the reference. */
enum { SEED = 7 };

typedef struct run {
    ncl_coll coll;
    int nranks;
    uint64_t wrong, cases;
    char first[256];
} run;

static ncl_result run_fn(ncl_comm *comm, void *arg)
{
    run *w = arg;
    int rank, p = w->nranks;
    ncl_comm_rank(comm, &rank);
    const uint64_t counts[] = {1, 1009, 40003};
    /* RINGSIM_MATRIX=quick (the sanitizer pass, ~10x slower): the largest count, where the slices
     * take several rounds, only for int8 and float64 with sum and avg (the narrowest and widest
     * elements, a plain and a dividing op), as test_matrix does; the Release pass runs them all */
    const char *mode = getenv("RINGSIM_MATRIX");
    const int quick = mode && !strcmp(mode, "quick");
    for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++)
        for (int dt = 0; dt < NCL_DTYPE_COUNT; dt++)
            for (int op = 0; op < NCL_OP_COUNT; op++)
                for (int inplace = 0; inplace < 2; inplace++) {
                    if (quick && ci == 2 && !((dt == NCL_INT8 || dt == NCL_FLOAT64) && (op == NCL_SUM || op == NCL_AVG)))
                        continue;
                    uint64_t count = counts[ci], es = ncl_dtype_size((ncl_dtype)dt);
                    int rs = w->coll == NCL_COLL_REDUCE_SCATTER, red = w->coll == NCL_COLL_REDUCE;
                    uint64_t in_count = rs ? count * (uint64_t)p : count;
                    char *a = malloc(in_count * es), *b = malloc(in_count * es), *want = malloc(in_count * es);
                    rs_data_fill(a, in_count, (ncl_dtype)dt, (ncl_op)op, p, rank, SEED, 0);
                    rs_data_expected(want, in_count, (ncl_dtype)dt, (ncl_op)op, p, SEED, 0, 1);
                    char *send = a, *recv = inplace ? (rs ? a + (uint64_t)rank * count * es : a) : b;
                    ncl_result rc;
                    if (w->coll == NCL_COLL_ALLREDUCE)
                        rc = ncl_allreduce(send, recv, count, (ncl_dtype)dt, (ncl_op)op, comm);
                    else if (rs)
                        rc = ncl_reduce_scatter(send, recv, count, (ncl_dtype)dt, (ncl_op)op, comm);
                    else
                        rc = ncl_reduce(send, recv, count, (ncl_dtype)dt, (ncl_op)op, 0, comm);
                    uint64_t wrong = 0;
                    if (rc == NCL_SUCCESS && (!red || rank == 0))
                        wrong = rs_data_count_wrong(recv, rs ? want + (uint64_t)rank * count * es : want, count,
                                                    (ncl_dtype)dt, (ncl_op)op);
                    if ((rc != NCL_SUCCESS || wrong) && w->wrong++ == 0)
                        snprintf(w->first, sizeof w->first, "rank %d count %llu %s %s %s: %s, %llu wrong", rank,
                                 (unsigned long long)count, ncl_dtype_name((ncl_dtype)dt), ncl_op_name((ncl_op)op),
                                 inplace ? "in-place" : "out-of-place", ncl_comm_last_error(comm),
                                 (unsigned long long)wrong);
                    w->cases += rank == 0;
                    free(a);
                    free(b);
                    free(want);
                    if (rc != NCL_SUCCESS)
                        return rc;
                }
    return NCL_SUCCESS;
}

static void host_runs(ncl_coll coll, ncl_algo algo)
{
    const caps all[] = {caps_none(), caps_align8(), caps_rtl()};
    for (size_t ci = 0; ci < sizeof all / sizeof all[0]; ci++)
        for (int p = 2; p <= 5; p += 3) {
            run w = {coll, p, 0, 0, ""};
            ncl_host_config cfg = NCL_HOST_CONFIG_INIT;
            cfg.nranks = p;
            cfg.comm.algorithm[coll] = (uint8_t)algo;
            cfg.comm.slice_bytes = 16u << 10; /* several rounds at the largest count */
            for (int d = 0; d < NCL_DTYPE_COUNT; d++)
                cfg.no_inline_ops[d] = (uint16_t)(NCL_INLINE_ALL_OPS & ~all[ci].ops[d]);
            cfg.inline_align = all[ci].align;
            ncl_result rc = ncl_host_run_cfg(&cfg, run_fn, &w, NULL);
            if (rc != NCL_SUCCESS || w.wrong)
                print_error("%s/%s [%s] p=%d: %llu failing; first: %s\n", ncl_coll_name(coll), ncl_algo_name(algo),
                            all[ci].name, p, (unsigned long long)w.wrong, w.first);
            assert_int_equal(rc, NCL_SUCCESS);
            assert_int_equal(w.wrong, 0);
            assert_true(w.cases > 0);
        }
}

static void test_host_ring_allreduce(void **s) { (void)s; host_runs(NCL_COLL_ALLREDUCE, NCL_ALGO_RING); }
static void test_host_ring_reduce_scatter(void **s) { (void)s; host_runs(NCL_COLL_REDUCE_SCATTER, NCL_ALGO_RING); }
static void test_host_tree_reduce(void **s) { (void)s; host_runs(NCL_COLL_REDUCE, NCL_ALGO_TREE); }
static void test_host_auto_allreduce(void **s) { (void)s; host_runs(NCL_COLL_ALLREDUCE, NCL_ALGO_AUTO); }

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_checker),
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_checker_rejects),
        cmocka_unit_test(test_host_ring_allreduce),
        cmocka_unit_test(test_host_ring_reduce_scatter),
        cmocka_unit_test(test_host_tree_reduce),
        cmocka_unit_test(test_host_auto_allreduce),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
