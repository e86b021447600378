/* test_matrix.c — the correctness matrix's host world: every algorithm x rank count x count x dtype
 * x op x in/out of place x root on the host backend (ranks are threads), through tests/common's body. */
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

#include "matrix.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

static const int rank_counts[] = {1, 2, 3, 4, 5, 7, 8, 16};

/* ---- the world: a host communicator of threads, configured for one (collective, algorithm) ------- */

typedef struct host_world {
    mx_world w;
    ncl_host_config cfg;
    const mx_case *cases;
    mx_result *res;
    size_t n;
    void *expected;        /* the whole expected result, shared: each rank computes a slice */
    uint64_t a_bytes, b_bytes; /* the largest buffers a case needs (rs_shape_a_bytes, _b_bytes) */
    pthread_mutex_t lock;  /* mx_result_fail is not thread-safe */
} host_world;

/* A case uses the first `used` bytes of a buffer allocated for the largest case: under ASan the rest
 * is made unaddressable, so an overrun is caught as it would be in an allocation of the exact size. */
static void fit(unsigned char *buf, uint64_t used, uint64_t cap)
{
#if defined(__SANITIZE_ADDRESS__)
    ASAN_UNPOISON_MEMORY_REGION(buf, cap);
    ASAN_POISON_MEMORY_REGION(buf + used, cap - used);
#else
    (void)buf, (void)used, (void)cap;
#endif
}

/* Whether cases a and b have the same expected result (the in-place twin, reduce's other roots). */
static int same_result(const mx_case *a, const mx_case *b)
{
    return a->coll == b->coll && a->count == b->count && a->dt == b->dt && a->op == b->op &&
           (a->coll != NCL_COLL_BROADCAST || a->root == b->root);
}

static void host_fail(host_world *hw, size_t i, int rank, ncl_result rc, uint64_t wrong, const char *what)
{
    pthread_mutex_lock(&hw->lock);
    mx_result_fail(&hw->res[i], rank, rc, wrong, "%s", what);
    pthread_mutex_unlock(&hw->lock);
}

static ncl_result host_rank(ncl_comm *comm, void *arg)
{
    host_world *hw = arg;
    int rank;
    ncl_comm_rank(comm, &rank);
    /* buffers for the largest case, touched once: fresh pages per case would cost more than the cases */
    unsigned char *a = malloc(hw->a_bytes), *b = malloc(hw->b_bytes);
    for (size_t i = 0; i < hw->n; i++) {
        const mx_case *c = &hw->cases[i];
        rs_shape s;
        mx_shape(&s, c, hw->w.nranks);
        if (i == 0 || !same_result(c, &hw->cases[i - 1])) {
            ncl_host_barrier(comm); /* nobody still compares against the old one */
            uint64_t lo = s.result_elems * (uint64_t)rank / (uint64_t)s.nranks;
            uint64_t hi = s.result_elems * (uint64_t)(rank + 1) / (uint64_t)s.nranks;
            rs_shape_expected(&s, MX_SEED, lo, hi, (char *)hw->expected + lo * s.es);
            ncl_host_barrier(comm);
        }
        fit(a, rs_shape_a_bytes(&s), hw->a_bytes);
        fit(b, rs_shape_b_bytes(&s), hw->b_bytes);
        const void *send;
        void *recv;
        mx_place(&s, rank, a, b, c->inplace, &send, &recv);
        mx_prepare(&s, rank, NULL, send, recv);
        uint64_t in_bytes = rs_shape_input_elems(&s, rank) * s.es;
        void *input = NULL;
        if (!c->inplace && send && in_bytes) { /* out of place, the input must stay as it was */
            input = malloc(in_bytes);
            memcpy(input, send, in_bytes);
        }
        ncl_result rc = rs_shape_call(&s, send, recv, comm);
        if (rc != NCL_SUCCESS) {
            host_fail(hw, i, rank, rc, 0, ncl_comm_last_error(comm));
        } else {
            char what[MX_DETAIL];
            uint64_t wrong = mx_check(&s, rank, send, recv, input, hw->expected, what, sizeof what);
            if (wrong)
                host_fail(hw, i, rank, NCL_SUCCESS, wrong, what);
        }
        free(input);
    }
    fit(a, hw->a_bytes, hw->a_bytes);
    fit(b, hw->b_bytes, hw->b_bytes);
    free(a);
    free(b);
    return NCL_SUCCESS;
}

static size_t host_run(mx_world *w, const mx_case *cases, size_t n, mx_result *res)
{
    host_world *hw = (host_world *)w;
    uint64_t most = 1;
    hw->a_bytes = hw->b_bytes = 1;
    for (size_t i = 0; i < n; i++) {
        rs_shape s;
        mx_shape(&s, &cases[i], w->nranks);
        most = s.result_elems * s.es > most ? s.result_elems * s.es : most;
        hw->a_bytes = rs_shape_a_bytes(&s) > hw->a_bytes ? rs_shape_a_bytes(&s) : hw->a_bytes;
        hw->b_bytes = rs_shape_b_bytes(&s) > hw->b_bytes ? rs_shape_b_bytes(&s) : hw->b_bytes;
    }
    hw->cases = cases;
    hw->res = res;
    hw->n = n;
    hw->expected = malloc(most);
    ncl_result rc = ncl_host_run_cfg(&hw->cfg, host_rank, hw, NULL);
    free(hw->expected);
    if (rc != NCL_SUCCESS) /* a rank could not start: no case ran */
        return 0;
    for (size_t i = 0; i < n; i++) /* every rank went through every case */
        res[i].run = 1;
    return n;
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

/* The matrix's axes on p ranks: counts 0, 1, p-1, p+1, 1009 with every root, and a large count
 * (>= 4 MiB in the collective's largest buffer, a multiple of nothing) with the first and the last
 * root. The small counts take every type with every op. The large count takes every type with one
 * op, turning with the world (world i: type t with op (t + i) mod 5): slicing and segment edges
 * depend on the element size only, the kernels' vector bodies and tails are the small counts' too,
 * and over the eight rank counts every (type, op) still meets the large count once. That keeps
 * the fill, most of the matrix's time, to a fifth (RINGSIM_MATRIX=full takes every op and root
 * at the large count too). Under the sanitizers (RINGSIM_MATRIX=quick, 3-10x slower) the small
 * counts turn the ops too and take roots 0, p/2 and p-1 only (the first, a middle one and the
 * one whose successor wraps around); the large count takes the narrowest and the widest type
 * (int8, float64), one with sum and the other with avg (the one that ends with a division), the
 * two swapping from world to world, and the last root. */
typedef struct axes_ctx {
    int large, quick, full;
    size_t world; /* the rank count's index: which op each type takes where ops turn */
} axes_ctx;

static size_t host_counts(const mx_axes *a, int p, ncl_dtype dt, uint64_t out[MX_MAX_COUNTS])
{
    const axes_ctx *x = a->ctx;
    if (x->large) {
        uint64_t per = rs_shape_per_rank(a->coll) ? (uint64_t)p : 1;
        uint64_t es = ncl_dtype_size(dt);
        out[0] = ((4u << 20) / es + per - 1) / per + 3;
        return 1;
    }
    size_t n = 0;
    out[n++] = 0;
    out[n++] = 1;
    if (p > 1)
        out[n++] = (uint64_t)p - 1;
    out[n++] = (uint64_t)p + 1;
    out[n++] = 1009;
    return n;
}

static int host_keep(const mx_axes *a, int p, const mx_case *c)
{
    (void)p;
    const axes_ctx *x = a->ctx;
    if (x->large && x->quick) /* int8 and float64, one with sum and the other with avg, turning */
        return (c->dt == NCL_INT8 || c->dt == NCL_FLOAT64) &&
               (!rs_shape_reduces(c->coll) ||
                c->op == ((c->dt == NCL_INT8) == (x->world % 2 == 0) ? NCL_SUM : NCL_AVG));
    int ops_turn = x->large ? !x->full : x->quick;
    if (!ops_turn || !rs_shape_reduces(c->coll))
        return 1;
    return (size_t)c->op == ((size_t)c->dt + x->world) % NCL_OP_COUNT;
}

/* One rank count or two-level shape (i: its index, for the logical-ring variant and the ops that turn). */
static void run_world(ncl_coll coll, ncl_algo algo, size_t i, int nranks, const two_level *tl)
{
    const char *mode = getenv("RINGSIM_MATRIX");
    int full = mode && !strcmp(mode, "full"), quick = mode && !strcmp(mode, "quick");
    host_world hw = {.w = {.name = "host", .nranks = nranks, .run = host_run}};
    pthread_mutex_init(&hw.lock, NULL);
    ncl_host_config cfg = NCL_HOST_CONFIG_INIT;
    cfg.nranks = nranks;
    cfg.comm.algorithm[coll] = (uint8_t)algo;
    /* every other rank count: the ring and chain algorithms on two logical rings, one per
     * channel: reversed, and stepping by a stride coprime with the rank count */
    int32_t rings[2 * 16];
    int p = nranks, stride = 1;
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
    hw.cfg = cfg;

    char name[64] = "host";
    if (tl)
        snprintf(name, sizeof name, "host (%u per server)", tl->local_size);
    hw.w.name = name;
    mx_matrix m;
    mx_init(&m);
    m.print_groups = getenv("RINGSIM_MATRIX_VERBOSE") != NULL;
    axes_ctx small = {0, quick, full, i}, large = {1, quick, full, i};
    mx_axes ax = {.coll = coll, .algo = algo, .counts = host_counts, .roots = quick ? MX_ROOTS_SOME : MX_ROOTS_ALL,
                  .places = MX_BOTH_PLACES, .keep = host_keep, .ctx = &small};
    mx_add_axes(&m, &ax, nranks);
    ax.ctx = &large;
    ax.roots = full ? MX_ROOTS_ALL : quick ? MX_ROOTS_LAST : MX_ROOTS_ENDS;
    mx_add_axes(&m, &ax, nranks);
    if (coll == NCL_COLL_ALLTOALL) { /* and alltoallv over a skewed matrix, at the small counts */
        ax.ctx = &small, ax.a2av = 1;
        mx_add_axes(&m, &ax, nranks);
    }
    size_t cases = m.n;
    uint64_t failed = mx_run(&m, &hw.w);
    if (failed)
        print_error("%s/%s on %d ranks: %llu failing cases; first: %s\n", ncl_coll_name(coll),
                    ncl_algo_name(algo), nranks, (unsigned long long)failed, m.first);
    assert_int_equal(failed, 0);
    assert_true(cases > 0 && m.run == cases);
    mx_free(&m);
    pthread_mutex_destroy(&hw.lock);
}

static void run_matrix(ncl_coll coll, ncl_algo algo)
{
    /* RINGSIM_MATRIX=quick (the sanitizer pass): 1, 2, 3, 7 and 8 ranks (odd and power-of-two
     * counts, the logical rings on 7); the Release pass takes 4, 5 and 16 as well */
    const char *mode = getenv("RINGSIM_MATRIX");
    const int quick = mode && !strcmp(mode, "quick");
    for (size_t i = 0; i < sizeof rank_counts / sizeof rank_counts[0]; i++)
        if (!quick || (rank_counts[i] != 4 && rank_counts[i] != 5 && rank_counts[i] != 16))
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
        run_world(coll, NCL_ALGO_HIER, i, shapes[i].nranks, &shapes[i]);
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
static void alltoall_mesh(void **s) { (void)s; run_matrix(NCL_COLL_ALLTOALL, NCL_ALGO_MESH); }
static void alltoall_pairwise(void **s) { (void)s; run_matrix(NCL_COLL_ALLTOALL, NCL_ALGO_PAIRWISE); }
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
        cmocka_unit_test(alltoall_mesh),       cmocka_unit_test(alltoall_pairwise),
        cmocka_unit_test(hier_config),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
