/* test_matrix.c — every algorithm x rank count x count x dtype x op x in/out of place x root on
 * the host backend, checked bit-exactly against the plain reference in sim/sweep/rs_data. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ncl/ncl.h>
#include <ncl/ncl_host.h>

#include "sweep/rs_data.h"

static const int rank_counts[] = {1, 2, 3, 4, 5, 7, 8, 16};
enum { SEED = 20261130 };

typedef struct world {
    ncl_coll coll;
    ncl_algo algo;
    int nranks;
    int full;                 /* every root at the large count too (RINGSIM_MATRIX=full) */
    int quick;                /* sanitizer builds: large count for a subset (RINGSIM_MATRIX=quick) */
    void *expected;           /* shared: each rank computes a slice */
    uint64_t expected_bytes;
    pthread_mutex_t lock;
    uint64_t cases, wrong_cases;
    char first_failure[512];
} world;

static void fail_case(world *w, const char *what, int rank, uint64_t count, ncl_dtype dt, ncl_op op,
                      int inplace, int root, const char *detail)
{
    pthread_mutex_lock(&w->lock);
    if (w->wrong_cases++ == 0)
        snprintf(w->first_failure, sizeof w->first_failure,
                 "%s %s p=%d rank %d count %llu %s %s %s root %d: %s", ncl_coll_name(w->coll),
                 ncl_algo_name(w->algo), w->nranks, rank, (unsigned long long)count,
                 ncl_dtype_name(dt), ncl_op_name(op), inplace ? "in-place" : "out-of-place", root,
                 detail ? detail : what);
    pthread_mutex_unlock(&w->lock);
}

static uint64_t div_ceil(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

static int reduces(ncl_coll c)
{
    return c == NCL_COLL_ALLREDUCE || c == NCL_COLL_REDUCE || c == NCL_COLL_REDUCE_SCATTER;
}

/* Fills this rank's slice of the shared expected output (the whole collective's result, as one
 * array: allreduce/reduce: count; reduce_scatter: p*count; broadcast: count; allgather: p*count). */
static void expected_slice(world *w, int rank, uint64_t count, ncl_dtype dt, ncl_op op, int root)
{
    int p = w->nranks;
    size_t es = ncl_dtype_size(dt);
    uint64_t total = (w->coll == NCL_COLL_ALLGATHER || w->coll == NCL_COLL_REDUCE_SCATTER) ? count * p : count;
    uint64_t lo = total * rank / p, hi = total * (rank + 1) / p;
    char *out = (char *)w->expected + lo * es;
    switch (w->coll) {
    case NCL_COLL_BROADCAST:
        rs_data_fill(out, hi - lo, dt, NCL_MAX, p, root, SEED, lo);
        break;
    case NCL_COLL_ALLGATHER:
        /* block k is rank k's input; split the slice at block boundaries */
        for (uint64_t e = lo; e < hi;) {
            uint64_t k = e / count, end = (k + 1) * count < hi ? (k + 1) * count : hi;
            rs_data_fill((char *)w->expected + e * es, end - e, dt, NCL_MAX, p, (int)k, SEED, e - k * count);
            e = end;
        }
        break;
    default:
        rs_data_expected(out, hi - lo, dt, op, p, SEED, lo, 1);
        break;
    }
}

/* Runs one case on this rank; returns 0 or records a failure. */
static void run_case(world *w, ncl_comm *comm, int rank, uint64_t count, ncl_dtype dt, ncl_op op,
                     int inplace, int root)
{
    const int p = w->nranks;
    const size_t es = ncl_dtype_size(dt);
    const ncl_op fill_op = reduces(w->coll) ? op : NCL_MAX; /* full-range values */
    uint64_t in_count = w->coll == NCL_COLL_REDUCE_SCATTER ? count * p : count;
    uint64_t out_count = w->coll == NCL_COLL_ALLGATHER ? count * p : count;
    int has_send = w->coll != NCL_COLL_BROADCAST || rank == root || inplace;
    int has_recv = w->coll != NCL_COLL_REDUCE || rank == root || inplace;

    /* Allocate: in place, one buffer big enough for both roles. */
    uint64_t big = (in_count > out_count ? in_count : out_count) * es;
    char *a = malloc(big ? big : 1), *b = NULL;
    char *send, *recv;
    if (inplace) {
        send = recv = a;
        if (w->coll == NCL_COLL_ALLGATHER)
            send = a + (uint64_t)rank * count * es;
        if (w->coll == NCL_COLL_REDUCE_SCATTER)
            recv = a + (uint64_t)rank * count * es;
        memset(a, 0xa5, big);
    } else {
        b = malloc(out_count ? out_count * es : 1);
        memset(b, 0xa5, out_count * es);
        send = has_send ? a : NULL;
        recv = has_recv ? b : NULL;
    }
    char *input_copy = NULL;
    if (has_send || inplace) {
        rs_data_fill(send, in_count, dt, fill_op, p, rank, SEED, 0);
        if (!inplace && count) {
            input_copy = malloc(in_count * es);
            memcpy(input_copy, send, in_count * es);
        }
    }

    ncl_result rc = NCL_SUCCESS;
    switch (w->coll) {
    case NCL_COLL_ALLREDUCE: rc = ncl_allreduce(send, recv, count, dt, op, comm); break;
    case NCL_COLL_BROADCAST: rc = ncl_broadcast(send, recv, count, dt, root, comm); break;
    case NCL_COLL_REDUCE: rc = ncl_reduce(send, recv, count, dt, op, root, comm); break;
    case NCL_COLL_REDUCE_SCATTER: rc = ncl_reduce_scatter(send, recv, count, dt, op, comm); break;
    case NCL_COLL_ALLGATHER: rc = ncl_allgather(send, recv, count, dt, comm); break;
    default: break;
    }
    if (rc != NCL_SUCCESS)
        fail_case(w, ncl_strerror(rc), rank, count, dt, op, inplace, root, ncl_comm_last_error(comm));

    /* Compare against the shared expected result (computed in slices by all ranks). */
    ncl_host_barrier(comm);
    if (rc == NCL_SUCCESS && count && has_recv && (w->coll != NCL_COLL_REDUCE || rank == root)) {
        const char *want = w->expected;
        if (w->coll == NCL_COLL_REDUCE_SCATTER)
            want += (uint64_t)rank * count * es;
        uint64_t n = w->coll == NCL_COLL_REDUCE_SCATTER ? count : out_count;
        uint64_t wrong = rs_data_count_wrong(recv, want, n, dt, reduces(w->coll) ? op : NCL_MAX);
        if (wrong) {
            char detail[64];
            snprintf(detail, sizeof detail, "%llu wrong elements", (unsigned long long)wrong);
            fail_case(w, "wrong", rank, count, dt, op, inplace, root, detail);
        }
    }
    /* Out of place, the input must be untouched. */
    if (rc == NCL_SUCCESS && input_copy && memcmp(input_copy, send, in_count * es))
        fail_case(w, "sendbuf modified", rank, count, dt, op, inplace, root, NULL);
    free(input_copy);
    pthread_mutex_lock(&w->lock);
    w->cases += rank == 0;
    pthread_mutex_unlock(&w->lock);
    free(a);
    free(b);
}

static ncl_result matrix_fn(ncl_comm *comm, void *arg)
{
    world *w = arg;
    int rank;
    ncl_comm_rank(comm, &rank);
    const int p = w->nranks;
    const uint64_t counts[] = {0, 1, (uint64_t)p - 1, (uint64_t)p + 1, 1009, 0 /* large, per dtype */};
    const int ncounts = sizeof counts / sizeof counts[0];
    int rooted = w->coll == NCL_COLL_BROADCAST || w->coll == NCL_COLL_REDUCE;
    for (int ci = 0; ci < ncounts; ci++) {
        for (int dt = 0; dt < NCL_DTYPE_COUNT; dt++) {
            size_t es = ncl_dtype_size((ncl_dtype)dt);
            int large = ci == ncounts - 1;
            /* >= 4 MiB in the collective's largest buffer, and not a multiple of anything */
            uint64_t per = (w->coll == NCL_COLL_ALLGATHER || w->coll == NCL_COLL_REDUCE_SCATTER) ? (uint64_t)p : 1;
            uint64_t count = large ? div_ceil((4u << 20) / es, per) + 3 : counts[ci];
            if (!large && ci > 0 && count == 0)
                continue;
            /* Under sanitizers (10x slower) the large count takes one type of each width. */
            if (large && w->quick && dt != NCL_INT8 && dt != NCL_BFLOAT16 && dt != NCL_FLOAT32 &&
                dt != NCL_FLOAT64)
                continue;
            int nops = reduces(w->coll) ? NCL_OP_COUNT : 1;
            for (int op = 0; op < nops; op++) {
                int nroots = rooted ? p : 1;
                for (int root = 0; root < nroots; root++) {
                    /* At the large count every root is costly: take the first and the last
                     * unless the full matrix is asked for. */
                    if (large && !w->full && root != 0 && root != p - 1)
                        continue;
                    /* Only broadcast's result depends on the root. */
                    if (root == 0 || w->coll == NCL_COLL_BROADCAST) {
                        ncl_host_barrier(comm); /* nobody still compares against the old one */
                        expected_slice(w, rank, count, (ncl_dtype)dt, (ncl_op)op, root);
                    }
                    for (int inplace = 0; inplace < 2; inplace++)
                        run_case(w, comm, rank, count, (ncl_dtype)dt, (ncl_op)op, inplace, root);
                }
            }
        }
    }
    return NCL_SUCCESS;
}

/* A two-level topology (hier): ranks per server, the inter-server algorithm, local rings. */
typedef struct two_level {
    int nranks;
    uint32_t local_size;
    uint8_t inter_algo;
    const int32_t *local_rings; /* local_ring_count orders of 0..local_size-1, or NULL */
    uint32_t local_ring_count;
} two_level;

/* allreduce_ring_weighted: every rank count on the two logical rings, weighted {1, 3} (the
 * second ring three times as fast: channel 1 carries three quarters of the buffer). */
static const uint32_t *g_ring_weights = NULL;

/* One rank count (i: its index, for the logical-ring variant), one level or two. */
static void run_world(ncl_coll coll, ncl_algo algo, size_t i, int nranks, const two_level *tl)
{
    const char *mode = getenv("RINGSIM_MATRIX");
    world w = {.coll = coll, .algo = algo, .nranks = nranks,
               .full = mode && !strcmp(mode, "full"), .quick = mode && !strcmp(mode, "quick")};
    pthread_mutex_init(&w.lock, NULL);
    w.expected_bytes = ((4u << 20) + 64) * (uint64_t)w.nranks;
    w.expected = malloc(w.expected_bytes);
    ncl_host_config cfg = NCL_HOST_CONFIG_INIT;
    cfg.nranks = w.nranks;
    cfg.comm.algorithm[coll] = (uint8_t)algo;
    /* every other rank count: the ring and chain algorithms on two logical rings, one per
     * channel: reversed, and stepping by a stride coprime with the rank count */
    int32_t rings[2 * 16];
    int p = w.nranks, stride = 1;
    for (int k = 2; k < p; k++)
        if (p % k != 0) {
            stride = k;
            break;
        }
    for (int r = 0; r < p; r++)
        rings[r] = p - 1 - r, rings[p + r] = (int32_t)(((int64_t)r * stride) % p);
    if ((i % 2 == 1 || g_ring_weights) && (algo == NCL_ALGO_RING || algo == NCL_ALGO_CHAIN) && p <= 16) {
        cfg.comm.rings = rings;
        cfg.comm.ring_count = 2;
        cfg.comm.ring_weights = g_ring_weights;
    }
    if (tl) {
        cfg.comm.local_size = tl->local_size;
        cfg.comm.inter_algo = tl->inter_algo;
        cfg.comm.local_rings = tl->local_rings;
        cfg.comm.local_ring_count = tl->local_ring_count;
    }
    cfg.comm.timeout_ns = 60ull * 1000 * 1000 * 1000;
    ncl_result rc = ncl_host_run_cfg(&cfg, matrix_fn, &w, NULL);
    if (rc != NCL_SUCCESS || w.wrong_cases) {
        char servers[48] = "";
        if (tl)
            snprintf(servers, sizeof servers, " (%u per server)", tl->local_size);
        print_error("%s/%s on %d ranks%s: %llu failing cases; first: %s\n", ncl_coll_name(coll),
                    ncl_algo_name(algo), w.nranks, servers, (unsigned long long)w.wrong_cases,
                    w.first_failure);
    }
    assert_int_equal(rc, NCL_SUCCESS);
    assert_int_equal(w.wrong_cases, 0);
    assert_true(w.cases > 0);
    free(w.expected);
    pthread_mutex_destroy(&w.lock);
}

static void run_matrix(ncl_coll coll, ncl_algo algo)
{
    for (size_t i = 0; i < sizeof rank_counts / sizeof rank_counts[0]; i++)
        run_world(coll, algo, i, rank_counts[i], NULL);
}

/* hier on two levels: both inter algorithms (AUTO is hd for power-of-two server counts, ring
 * otherwise; ring also forced where hd is the default), local rings (channel 0 {0,2,3,1},
 * channel 1 {3,1,0,2}), power-of-two and other shapes of both levels. */
static void run_matrix_hier(ncl_coll coll)
{
    static const int32_t rings4[] = {0, 2, 3, 1, 3, 1, 0, 2};
    static const two_level shapes[] = {
        {4, 2, NCL_ALGO_AUTO, NULL, 0},  {6, 2, NCL_ALGO_AUTO, NULL, 0},
        {6, 3, NCL_ALGO_AUTO, NULL, 0},  {8, 2, NCL_ALGO_RING, NULL, 0},
        {8, 4, NCL_ALGO_AUTO, rings4, 2}, {9, 3, NCL_ALGO_AUTO, NULL, 0},
        {16, 4, NCL_ALGO_HD, rings4, 2},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        run_world(coll, NCL_ALGO_HIER, 0, shapes[i].nranks, &shapes[i]);
}

/* One small allreduce; its result is the rank's. */
static ncl_result small_allreduce(ncl_comm *comm, void *arg)
{
    (void)arg;
    float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[8];
    return ncl_allreduce(x, y, 8, NCL_FLOAT32, NCL_SUM, comm);
}

/* The communicator takes the two-level settings only when they make sense: local_size dividing
 * the ranks (or 0), a known inter algorithm, local rings that are permutations of 0..L-1; hier
 * without a two-level topology is refused when the collective is planned. */
static void hier_config(void **s)
{
    (void)s;
    static const int32_t dup[] = {0, 1, 1, 3}, range[] = {0, 1, 2, 4}, ok[] = {1, 0};
    static const struct {
        uint32_t local_size;
        uint8_t inter;
        const int32_t *rings;
        uint32_t ring_count;
        ncl_result want;
    } cases[] = {
        {3, NCL_ALGO_AUTO, NULL, 0, NCL_ERR_INVALID_ARGUMENT},  /* does not divide 4 */
        {8, NCL_ALGO_AUTO, NULL, 0, NCL_ERR_INVALID_ARGUMENT},  /* more than the ranks */
        {2, NCL_ALGO_MESH, NULL, 0, NCL_ERR_INVALID_ARGUMENT},  /* not an inter algorithm */
        {4, NCL_ALGO_AUTO, dup, 1, NCL_ERR_INVALID_ARGUMENT},   /* a local index twice */
        {4, NCL_ALGO_AUTO, range, 1, NCL_ERR_INVALID_ARGUMENT}, /* out of range */
        {2, NCL_ALGO_AUTO, ok, 0, NCL_ERR_INVALID_ARGUMENT},    /* rings without a count */
        {2, NCL_ALGO_AUTO, NULL, 1, NCL_ERR_INVALID_ARGUMENT},  /* a count without rings */
        {0, NCL_ALGO_AUTO, ok, 1, NCL_ERR_INVALID_ARGUMENT},    /* rings of no server */
        {0, NCL_ALGO_AUTO, NULL, 0, NCL_ERR_UNSUPPORTED},       /* one level: hier refuses */
        {4, NCL_ALGO_AUTO, NULL, 0, NCL_ERR_UNSUPPORTED},       /* one server: likewise */
        {2, NCL_ALGO_HD, ok, 1, NCL_SUCCESS},
        {2, NCL_ALGO_RING, NULL, 0, NCL_SUCCESS},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ncl_host_config cfg = NCL_HOST_CONFIG_INIT;
        cfg.nranks = 4;
        cfg.comm.algorithm[NCL_COLL_ALLREDUCE] = NCL_ALGO_HIER;
        cfg.comm.local_size = cases[i].local_size;
        cfg.comm.inter_algo = cases[i].inter;
        cfg.comm.local_rings = cases[i].rings;
        cfg.comm.local_ring_count = cases[i].ring_count;
        ncl_result rc = ncl_host_run_cfg(&cfg, small_allreduce, NULL, NULL);
        if (rc != cases[i].want)
            print_error("case %zu: %s, want %s\n", i, ncl_strerror(rc), ncl_strerror(cases[i].want));
        assert_int_equal(rc, cases[i].want);
    }
}

static void allreduce_ring(void **s) { (void)s; run_matrix(NCL_COLL_ALLREDUCE, NCL_ALGO_RING); }
/* Weighted rings, bit-exact on every rank count; the communicator refuses a zero weight and
 * weights without rings. */
static void allreduce_ring_weighted(void **s)
{
    static const uint32_t weights[2] = {1, 3}, zero[2] = {1, 0};
    static const int32_t rings[2 * 4] = {0, 1, 2, 3, 3, 2, 1, 0};
    (void)s;
    for (int bad = 0; bad < 2; bad++) {
        ncl_host_config cfg = NCL_HOST_CONFIG_INIT;
        cfg.nranks = 4;
        cfg.comm.rings = bad ? NULL : rings;
        cfg.comm.ring_count = bad ? 0 : 2;
        cfg.comm.ring_weights = bad ? weights : zero;
        assert_int_equal(ncl_host_run_cfg(&cfg, small_allreduce, NULL, NULL), NCL_ERR_INVALID_ARGUMENT);
    }
    g_ring_weights = weights;
    run_matrix(NCL_COLL_ALLREDUCE, NCL_ALGO_RING);
    g_ring_weights = NULL;
}
static void reduce_scatter_ring(void **s) { (void)s; run_matrix(NCL_COLL_REDUCE_SCATTER, NCL_ALGO_RING); }
static void allgather_ring(void **s) { (void)s; run_matrix(NCL_COLL_ALLGATHER, NCL_ALGO_RING); }
static void broadcast_chain(void **s) { (void)s; run_matrix(NCL_COLL_BROADCAST, NCL_ALGO_CHAIN); }
static void broadcast_tree(void **s) { (void)s; run_matrix(NCL_COLL_BROADCAST, NCL_ALGO_TREE); }
static void reduce_ring(void **s) { (void)s; run_matrix(NCL_COLL_REDUCE, NCL_ALGO_RING); }
static void reduce_tree(void **s) { (void)s; run_matrix(NCL_COLL_REDUCE, NCL_ALGO_TREE); }
static void allreduce_hd(void **s) { (void)s; run_matrix(NCL_COLL_ALLREDUCE, NCL_ALGO_HD); }
static void reduce_scatter_hd(void **s) { (void)s; run_matrix(NCL_COLL_REDUCE_SCATTER, NCL_ALGO_HD); }
static void allgather_hd(void **s) { (void)s; run_matrix(NCL_COLL_ALLGATHER, NCL_ALGO_HD); }
static void allreduce_mesh(void **s) { (void)s; run_matrix(NCL_COLL_ALLREDUCE, NCL_ALGO_MESH); }
static void reduce_scatter_mesh(void **s) { (void)s; run_matrix(NCL_COLL_REDUCE_SCATTER, NCL_ALGO_MESH); }
static void allgather_mesh(void **s) { (void)s; run_matrix(NCL_COLL_ALLGATHER, NCL_ALGO_MESH); }
static void broadcast_sag(void **s) { (void)s; run_matrix(NCL_COLL_BROADCAST, NCL_ALGO_SAG); }
static void allreduce_dbtree(void **s) { (void)s; run_matrix(NCL_COLL_ALLREDUCE, NCL_ALGO_DBTREE); }
static void allreduce_det(void **s) { (void)s; run_matrix(NCL_COLL_ALLREDUCE, NCL_ALGO_DET); }
static void allreduce_hier(void **s) { (void)s; run_matrix_hier(NCL_COLL_ALLREDUCE); }
static void broadcast_hier(void **s) { (void)s; run_matrix_hier(NCL_COLL_BROADCAST); }

/* argv[1], if given, selects tests by cmocka filter pattern (CTest runs one per process). */
int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(allreduce_ring), cmocka_unit_test(allreduce_ring_weighted),
        cmocka_unit_test(reduce_scatter_ring),
        cmocka_unit_test(allgather_ring), cmocka_unit_test(broadcast_chain),
        cmocka_unit_test(broadcast_tree), cmocka_unit_test(reduce_ring),
        cmocka_unit_test(reduce_tree),         cmocka_unit_test(allreduce_hd),
        cmocka_unit_test(reduce_scatter_hd),   cmocka_unit_test(allgather_hd),
        cmocka_unit_test(allreduce_mesh),      cmocka_unit_test(reduce_scatter_mesh),
        cmocka_unit_test(allgather_mesh),      cmocka_unit_test(broadcast_sag),
        cmocka_unit_test(allreduce_dbtree),    cmocka_unit_test(allreduce_det),
        cmocka_unit_test(allreduce_hier),      cmocka_unit_test(broadcast_hier),
        cmocka_unit_test(hier_config),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
