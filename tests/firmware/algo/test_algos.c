/* test_algos.c — every registered algorithm over ranks x counts x roots x dtypes x ops x
 * in-place, proven by the schedule checker; plus scratch refusal and chain segment counts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncl/ncl_check.h"
#include "ncl_algo.h"

/* The plan parameters every case uses (the engine's defaults). */
#define SLICE_BYTES (1ull << 20)
#define CHANNELS 2u
#define SCRATCH_BYTES (4ull << 20)
#define ALPHA_NS 2000u
#define GBPS 20u
#define BIG_COUNT (1048576ull + 3) /* >= 4 MiB of fp32, not a multiple of anything */

static void *malloc_wrapper(void *ud, size_t bytes)
{
    (void)ud;
    return malloc(bytes);
}

static void free_wrapper(void *ud, void *ptr)
{
    (void)ud;
    free(ptr);
}

static const int rank_counts[] = {1, 2, 3, 4, 5, 7, 8, 16};
static const ncl_dtype dtypes[] = {NCL_INT8, NCL_FLOAT16, NCL_FLOAT32, NCL_FLOAT64};

static int rooted(ncl_coll c)
{
    return c == NCL_COLL_BROADCAST || c == NCL_COLL_REDUCE;
}

static int reducing(ncl_coll c)
{
    return c != NCL_COLL_BROADCAST && c != NCL_COLL_ALLGATHER && c != NCL_COLL_ALLTOALL;
}

/* Queues the "backend" runs at once: algorithms with helper queues use them only when there is
 * room beyond the channels; the small-slice matrix runs once each way. */
static uint32_t g_max_queues = NCL_MAX_QUEUES;

/* The two-level topology the plans are made for (hier): ranks per server (0: one level), the
 * inter-server algorithm and the local rings (NULL: identity). */
static uint32_t g_local_size = 0;
static uint8_t g_inter_algo = NCL_ALGO_AUTO;
static const int32_t *g_local_order = NULL, *g_local_pos = NULL;
static uint32_t g_local_ring_count = 0;

/* Weighted rings (test_ring_weights): the channels asked for, and g_weight_rings rings with
 * these weights (0: the identity ring, no weights). Ring k is the identity rotated by k, odd k
 * reversed, so that channels on different rings also run different orders. */
static uint32_t g_channels = CHANNELS;
static const uint32_t *g_ring_weights = NULL;
static uint32_t g_weight_rings = 0;
/* Element types a matrix runs: all; fp32 alone (the weighted matrix: the split is per element, fp32
 * stands for all); or the smallest and largest element (schedule variants whose shapes depend on
 * element size, not on the kernels, which the default variant proves for every type). */
enum { DTYPES_ALL, DTYPES_FP32, DTYPES_EDGES };
static int g_dtypes = DTYPES_ALL;
/* Data tasks a queue keeps in flight: the ring family orders rounds differently with more than one */
static uint32_t g_in_flight = 1;
/* Landing zones (test_landing_zones): bytes of each zone (0: none) and every channel's uses so far */
static uint64_t g_zone_bytes = 0;
static int g_reduce_write = 0; /* the backend runs REDUCE_WRITE (NCL_HAL_FEAT_REDUCE_WRITE) */
static uint32_t g_dma_engines = 0; /* ncl_hal_caps.dma_engines (0: unknown) */
static uint32_t g_zone_uses[NCL_MAX_QUEUES];

static void weighted_rings(int nranks, int32_t *order, int32_t *pos)
{
    for (uint32_t k = 0; k < g_weight_rings; k++)
        for (int i = 0; i < nranks; i++) {
            int r = (int)(((uint32_t)i + k) % (uint32_t)nranks);
            r = k % 2 ? nranks - 1 - r : r;
            order[k * (uint32_t)nranks + (uint32_t)i] = r;
            pos[k * (uint32_t)nranks + (uint32_t)r] = i;
        }
}

static ncl_result make_plan_sized(ncl_plan *plan, ncl_coll coll, ncl_algo algo, int nranks,
                                  int root, uint64_t count, ncl_dtype dtype, ncl_op op, int inplace,
                                  uint64_t slice_bytes, uint64_t scratch_bytes)
{
    static int32_t order[NCL_MAX_QUEUES * 16], pos[NCL_MAX_QUEUES * 16]; /* the plan points here */
    ncl_plan_env env = {slice_bytes, g_channels, g_max_queues, scratch_bytes, ALPHA_NS, GBPS,
                        NULL, NULL, 0, NULL, 0, 0, g_local_size, g_inter_algo, g_local_order,
                        g_local_pos, g_local_ring_count, NULL, NULL, 0, NULL, 0, 0, g_dma_engines, g_in_flight, g_zone_bytes,
                        g_zone_uses, g_reduce_write, 0, {0}};
    if (g_weight_rings && nranks <= 16) {
        weighted_rings(nranks, order, pos);
        env.ring_order = order, env.ring_pos = pos, env.ring_count = g_weight_rings;
        env.ring_weights = g_ring_weights;
    }
    return ncl_plan_make(plan, coll, algo, nranks, 0, root, count, dtype, op, inplace, &env);
}

static ncl_result make_plan(ncl_plan *plan, ncl_coll coll, ncl_algo algo, int nranks, int root,
                            uint64_t count, ncl_dtype dtype, ncl_op op, int inplace,
                            uint64_t scratch_bytes)
{
    return make_plan_sized(plan, coll, algo, nranks, root, count, dtype, op, inplace, SLICE_BYTES,
                           scratch_bytes);
}

/* Walks every stream of the plan's algorithm; returns 1 and the first data task bigger than a
 * slice in *big, or 0. The checker bounds regions, not task sizes, so this is checked here. */
static int oversized_task(const ncl_plan *plan, ncl_task *big)
{
    const ncl_algo_desc *d = ncl_algo_find((ncl_coll)plan->coll, (ncl_algo)plan->algo);
    for (int r = 0; r < plan->nranks; r++) {
        ncl_plan pr = *plan;
        pr.rank = r;
        for (uint32_t q = 0; q < plan->queues; q++) {
            ncl_gen g;
            memset(&g, 0, sizeof g);
            while (d->next(&pr, q, &g, big))
                if (big->kind <= NCL_TASK_LOCAL_DIV && big->bytes > plan->slice_elems * plan->esize) {
                    big->peer = r; /* report the issuing rank */
                    return 1;
                }
        }
    }
    return 0;
}

typedef struct pair {
    ncl_coll coll;
    ncl_algo algo;
} pair;

/* One case: plan, check, report. Returns 1 on failure, 0 on success, -1 when `may_refuse` and
 * the algorithm refused the resources (NCL_ERR_UNSUPPORTED from prepare). */
static int run_case(const pair *pp, int nranks, int root, uint64_t count, ncl_dtype dt, ncl_op op,
                    int inplace, uint64_t slice_bytes, uint64_t scratch_bytes, int may_refuse,
                    int *printed)
{
    ncl_plan plan;
    char msg[512];
    const char *what = "";
    ncl_result rc = make_plan_sized(&plan, pp->coll, pp->algo, nranks, root, count, dt, op,
                                    inplace, slice_bytes, scratch_bytes);
    if (rc == NCL_ERR_UNSUPPORTED && may_refuse)
        return -1;
    if (rc != NCL_SUCCESS) {
        what = "ncl_plan_make";
        snprintf(msg, sizeof msg, "%s", ncl_strerror(rc));
    } else {
        rc = ncl_check(&plan, NULL, malloc_wrapper, free_wrapper, NULL, msg, sizeof msg);
        what = "ncl_check";
        if (rc == NCL_SUCCESS) {
            static const char *const kinds[] = {"WRITE", "WRITE_REDUCE", "LOCAL_COPY",
                                                "LOCAL_REDUCE", "LOCAL_DIV"};
            ncl_task big;
            if (oversized_task(&plan, &big)) {
                rc = NCL_ERR_SCHEDULE;
                what = "slice";
                snprintf(msg, sizeof msg, "rank %d step %u: %s of %llu bytes exceeds the %llu-byte slice",
                         big.peer, big.step, kinds[big.kind], (unsigned long long)big.bytes,
                         (unsigned long long)(plan.slice_elems * plan.esize));
            }
        }
    }
    if (rc == NCL_SUCCESS)
        return 0;
    char topo[64] = "";
    if (g_local_size)
        snprintf(topo, sizeof topo, " L=%u inter=%s%s", g_local_size, ncl_algo_name((ncl_algo)g_inter_algo),
                 g_local_ring_count ? " local-rings" : "");
    if ((*printed)++ < 20)
        print_message("FAIL %s/%s nranks=%d root=%d count=%llu %s %s %s slice=%llu scratch=%llu"
                      "%s: %s: %s\n",
                      ncl_coll_name(pp->coll), ncl_algo_name(pp->algo), nranks, root,
                      (unsigned long long)count, ncl_dtype_name(dt), ncl_op_name(op),
                      inplace ? "in-place" : "out-of-place", (unsigned long long)slice_bytes,
                      (unsigned long long)scratch_bytes, topo, what, msg);
    return 1;
}

/* The matrix for one (collective, algorithm), one rank count and one slice/scratch size. */
static int run_ranks(const pair *pp, int p, uint64_t slice_bytes, uint64_t scratch_bytes, int with_big,
                     int *cases, int *refused, int *printed)
{
    int fails = 0;
    const uint64_t counts[] = {0, 1, (uint64_t)p - 1, (uint64_t)p + 1, 1009, BIG_COUNT};
    /* RINGSIM_MATRIX=quick (the sanitizer pass, ~10x slower): tiny slices stop at p + 1 elements,
     * still several rounds each, and rooted collectives take roots 0, p/2 and p-1 (the first, a
     * middle one, the one whose successor wraps around); the Release pass proves them all */
    const char *mode = getenv("RINGSIM_MATRIX");
    /* the tiniest slices (24 B) stop at p + 1 elements in Release too: 1009 elements are hundreds
     * of rounds a step there, and the 64 B slices take that count through the same round logic */
    int quick = mode && !strcmp(mode, "quick"), quick_small = (quick && slice_bytes < 1024) || slice_bytes < 32;
    for (size_t ci = 0; ci < sizeof counts / sizeof counts[0] - !with_big - (quick_small ? 1 : 0); ci++) {
        for (int root = 0; root < (rooted(pp->coll) ? p : 1); root++) {
            if (quick && root != 0 && root != p / 2 && root != p - 1)
                continue;
            for (int inplace = 0; inplace < 2; inplace++) {
                for (size_t di = 0; di < sizeof dtypes / sizeof dtypes[0]; di++) {
                    if ((g_dtypes == DTYPES_FP32 && dtypes[di] != NCL_FLOAT32) ||
                        (g_dtypes == DTYPES_EDGES && dtypes[di] != NCL_INT8 && dtypes[di] != NCL_FLOAT64))
                        continue;
                    const ncl_op ops[] = {NCL_SUM, NCL_AVG, NCL_MAX};
                    for (size_t oi = 0; oi < 3; oi++) {
                        if (oi > 0 && !reducing(pp->coll))
                            break;
                        if (ops[oi] == NCL_MAX && dtypes[di] != NCL_FLOAT32)
                            continue;
                        (*cases)++;
                        int rc = run_case(pp, p, root, counts[ci], dtypes[di], ops[oi], inplace,
                                          slice_bytes, scratch_bytes, refused != NULL, printed);
                        if (rc < 0)
                            (*refused)++;
                        else
                            fails += rc;
                    }
                }
            }
        }
    }
    return fails;
}

/* Two-level shapes (nranks, ranks per server): powers of two and not, on both levels. */
static const int hier_shapes[][2] = {{4, 2}, {6, 2}, {6, 3}, {8, 2}, {8, 4},
                                     {12, 4}, {16, 4}, {16, 8}, {9, 3}};

/* Local rings for L = 4: channel 0 on {0,2,3,1}, channel 1 on {3,1,0,2}. */
static const int32_t hier_rings4[2 * 4] = {0, 2, 3, 1, 3, 1, 0, 2};
static const int32_t hier_pos4[2 * 4] = {0, 3, 1, 2, 2, 1, 3, 0};

/* hier needs a two-level topology: every shape with the inter algorithm AUTO (ring when the
 * server count is not a power of two, halving-doubling otherwise) and the other one forced (ring
 * for power-of-two server counts; hd elsewhere, which prepare must refuse: no inter folding);
 * with L = 4 both again on two local rings. */
static int run_hier(const pair *pp, uint64_t slice_bytes, uint64_t scratch_bytes, int with_big,
                    int *cases, int *refused, int *printed)
{
    int fails = 0;
    for (size_t si = 0; si < sizeof hier_shapes / sizeof hier_shapes[0]; si++) {
        const int p = hier_shapes[si][0], L = hier_shapes[si][1], S = p / L;
        const int pow2 = (S & (S - 1)) == 0;
        for (int variant = 0; variant < (L == 4 ? 4 : 2); variant++) {
            const int other = variant % 2 == 1;
            if (other && !pow2 && variant > 1)
                continue; /* the refusal is checked once */
            g_local_size = (uint32_t)L;
            g_inter_algo = other ? (pow2 ? NCL_ALGO_RING : NCL_ALGO_HD) : NCL_ALGO_AUTO;
            if (variant >= 2) /* channel c on local ring c */
                g_local_order = hier_rings4, g_local_pos = hier_pos4, g_local_ring_count = 2;
            if (other && !pow2) {
                ncl_plan plan;
                (*cases)++;
                ncl_result rc = make_plan_sized(&plan, pp->coll, pp->algo, p, 0, 1009, NCL_FLOAT32, NCL_SUM,
                                                0, slice_bytes, scratch_bytes);
                if (rc != NCL_ERR_UNSUPPORTED) {
                    fails++;
                    if ((*printed)++ < 20)
                        print_message("FAIL %s/hier nranks=%d L=%d inter hd over %d servers: prepare gave %s, "
                                      "not unsupported\n", ncl_coll_name(pp->coll), p, L, S, ncl_strerror(rc));
                }
            } else {
                fails += run_ranks(pp, p, slice_bytes, scratch_bytes, with_big, cases, refused, printed);
            }
            g_local_size = 0, g_inter_algo = NCL_ALGO_AUTO;
            g_local_order = g_local_pos = NULL, g_local_ring_count = 0;
        }
    }
    return fails;
}

/* The matrix for one (collective, algorithm) and one slice/scratch size. */
static int run_matrix(const pair *pp, uint64_t slice_bytes, uint64_t scratch_bytes, int with_big,
                      int *cases, int *refused, int *printed)
{
    if (pp->algo == NCL_ALGO_HIER)
        return run_hier(pp, slice_bytes, scratch_bytes, with_big, cases, refused, printed);
    int fails = 0;
    for (size_t ri = 0; ri < sizeof rank_counts / sizeof rank_counts[0]; ri++)
        fails += run_ranks(pp, rank_counts[ri], slice_bytes, scratch_bytes, with_big, cases, refused,
                           printed);
    return fails;
}

/* The engine's defaults (1 MiB slices, 4 MiB scratch), every shape including >= 4 MiB. */
static void test_matrix(void **state)
{
    const pair *pp = (const pair *)*state;
    int cases = 0, printed = 0;
    int fails = run_matrix(pp, SLICE_BYTES, SCRATCH_BYTES, 1, &cases, NULL, &printed);
    print_message("%s/%s: %d cases, %d failed\n", ncl_coll_name(pp->coll), ncl_algo_name(pp->algo),
                  cases, fails);
    assert_int_equal(fails, 0);
}

/* Tiny slices and scratch: every count below 4 MiB becomes many rounds/segments, so pipelining,
 * credits and scratch-slot reuse are exercised on every shape (at 1 MiB slices they are only
 * reached by the largest count). An algorithm may refuse too little scratch. The second size
 * leaves no room for helper queues; each runs with one data task in flight and with several
 * (where the ring family runs a step's rounds back to back). */
static void test_matrix_small_slices(void **state)
{
    const pair *pp = (const pair *)*state;
    static const uint64_t sizes[][2] = {{64, 96}, {24, 16}};
    int cases = 0, refused = 0, printed = 0, fails = 0;
    /* the ring's reduce-scatter lands data as it is where the DMA reduces two sources on the way
     * out; the full-mesh family keeps its send queues to the DMA engines for blocks of several
     * rounds */
    const int landing = pp->algo == NCL_ALGO_RING && (pp->coll == NCL_COLL_ALLREDUCE || pp->coll == NCL_COLL_REDUCE_SCATTER);
    const int engines = pp->algo == NCL_ALGO_MESH || pp->algo == NCL_ALGO_DET;
    for (size_t i = 0; i < (landing || engines ? 4 : 2) * sizeof sizes / sizeof sizes[0]; i++) {
        g_max_queues = i % 2 == 0 ? NCL_MAX_QUEUES : CHANNELS;
        g_in_flight = i % 4 < 2 ? 1 : NCL_MAX_IN_FLIGHT;
        g_reduce_write = landing && i >= 4;
        g_dma_engines = engines && i >= 4 ? 3 : 0;
        g_dtypes = i < 2 ? DTYPES_ALL : DTYPES_EDGES;
        fails += run_matrix(pp, sizes[i % 2][0], sizes[i % 2][1], 0, &cases, &refused, &printed);
    }
    g_max_queues = NCL_MAX_QUEUES;
    g_in_flight = 1, g_reduce_write = 0, g_dma_engines = 0, g_dtypes = DTYPES_ALL;
    print_message("%s/%s small slices: %d cases, %d refused for scratch, %d failed\n",
                  ncl_coll_name(pp->coll), ncl_algo_name(pp->algo), cases, refused, fails);
    assert_int_equal(fails, 0);
}

static void expect_checked(ncl_coll coll, ncl_algo algo, int nranks, uint64_t count,
                           ncl_dtype dt, uint64_t scratch)
{
    for (int inplace = 0; inplace < 2; inplace++) {
        ncl_plan plan;
        char msg[512];
        assert_int_equal(make_plan(&plan, coll, algo, nranks, nranks - 1, count, dt, NCL_AVG,
                                   inplace, scratch),
                         NCL_SUCCESS);
        ncl_result rc = ncl_check(&plan, NULL, malloc_wrapper, free_wrapper, NULL, msg, sizeof msg);
        if (rc != NCL_SUCCESS)
            print_message("%s/%s nranks=%d scratch=%llu: %s\n", ncl_coll_name(coll),
                          ncl_algo_name(algo), nranks, (unsigned long long)scratch, msg);
        assert_int_equal(rc, NCL_SUCCESS);
    }
}

/* Logical rings: every channel on its own permutation of the ranks (as on a server with several
 * rings over disjoint links), proven by the checker for every ring algorithm, with few and many
 * rounds, both ways of filling reduce-scatter targets. */
static void test_rings(void **state)
{
    (void)state;
    static const pair ring_algos[] = {{NCL_COLL_ALLREDUCE, NCL_ALGO_RING},
                                      {NCL_COLL_REDUCE_SCATTER, NCL_ALGO_RING},
                                      {NCL_COLL_ALLGATHER, NCL_ALGO_RING},
                                      {NCL_COLL_BROADCAST, NCL_ALGO_CHAIN}};
    enum { MAXR = 8, NRINGS = 3 };
    int32_t order[NRINGS * MAXR], pos[NRINGS * MAXR];
    uint32_t seed = 12345;
    int cases = 0, fails = 0, printed = 0;
    for (int p = 1; p <= MAXR; p++) {
        for (int k = 0; k < NRINGS; k++) { /* ring 0: reversed; others: shuffled */
            int32_t *o = order + k * p;
            for (int i = 0; i < p; i++)
                o[i] = k == 0 ? p - 1 - i : i;
            for (int i = p - 1; k > 0 && i > 0; i--) {
                seed = seed * 1103515245u + 12345u;
                int j = (int)((seed >> 16) % (uint32_t)(i + 1));
                int32_t tmp = o[i];
                o[i] = o[j], o[j] = tmp;
            }
            for (int i = 0; i < p; i++)
                pos[k * p + o[i]] = i;
        }
        for (size_t a = 0; a < sizeof ring_algos / sizeof ring_algos[0]; a++) {
            for (int many_rounds = 0; many_rounds < 3; many_rounds++) { /* 2: rounds back to back */
                for (int inplace = 0; inplace < 2; inplace++) {
                    g_max_queues = many_rounds == 1 ? CHANNELS : NCL_MAX_QUEUES;
                    g_in_flight = many_rounds == 2 ? NCL_MAX_IN_FLIGHT : 1;
                    ncl_plan plan;
                    char msg[512];
                    uint64_t count = many_rounds ? 1009 : (uint64_t)p + 1;
                    ncl_result rc = make_plan_sized(&plan, ring_algos[a].coll, ring_algos[a].algo, p, p / 2, count,
                                                    NCL_FLOAT32, NCL_AVG, inplace, many_rounds ? 64 : SLICE_BYTES,
                                                    many_rounds ? 4096 : SCRATCH_BYTES);
                    if (rc == NCL_SUCCESS) {
                        plan.ring_order = order;
                        plan.ring_pos = pos;
                        plan.ring_count = NRINGS;
                        rc = ncl_check(&plan, NULL, malloc_wrapper, free_wrapper, NULL, msg, sizeof msg);
                    } else {
                        snprintf(msg, sizeof msg, "%s", ncl_strerror(rc));
                    }
                    cases++;
                    if (rc != NCL_SUCCESS) {
                        fails++;
                        if (printed++ < 10)
                            print_message("FAIL rings %s p=%d count=%llu %s: %s\n",
                                          ncl_coll_name(ring_algos[a].coll), p, (unsigned long long)count,
                                          inplace ? "in-place" : "out-of-place", msg);
                    }
                }
            }
        }
    }
    g_max_queues = NCL_MAX_QUEUES;
    g_in_flight = 1;
    print_message("rings: %d cases, %d failed\n", cases, fails);
    assert_int_equal(fails, 0);
}

/* The weighted split: every element in exactly one channel, in order, each channel at least one
 * element (count >= channels), shares in proportion to the weights (within one element of the
 * exact share, besides the reserved one), equal weights exactly ncl_part, no overflow at 2^50 or
 * with the largest weights. */
static void test_channel_part(void **state)
{
    (void)state;
    static const uint32_t w13[] = {1, 3}, w5112[] = {5, 1, 1, 2}, w77[] = {7, 7, 7},
                          wbig[] = {UINT32_MAX, 1, UINT32_MAX - 1, 12345};
    static const struct {
        const uint32_t *w;
        uint32_t rings;
    } sets[] = {{w13, 2}, {w5112, 4}, {w77, 3}, {wbig, 4}};
    static const uint64_t counts[] = {0, 1, 2, 3, 7, 8, 9, 1009, 1048579, 1ull << 50, (1ull << 50) + 12345};
    int32_t order[8] = {0}, pos[8] = {0};
    for (size_t si = 0; si < sizeof sets / sizeof sets[0]; si++) {
        for (uint32_t ch = 1; ch <= NCL_MAX_QUEUES; ch++) {
            for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
                ncl_plan p;
                memset(&p, 0, sizeof p);
                p.nranks = 1, p.ring_order = order, p.ring_pos = pos;
                p.ring_count = sets[si].rings, p.ring_weights = sets[si].w;
                const uint64_t count = counts[ci];
                uint64_t next = 0, total = 0, off, e;
                int equal = si == 2 || ch == 1 || (si == 0 && ch == 1);
                for (uint32_t c = 0; c < ch; c++)
                    total += ncl_channel_weight(&p, ch, c);
                for (uint32_t q = 0; q < ch; q++) {
                    uint64_t len = ncl_channel_part(&p, count, ch, q, &off);
                    assert_int_equal(off, next);
                    next = off + len;
                    if (count >= ch)
                        assert_true(len >= 1);
                    if (equal || count < ch) {
                        assert_int_equal(len, ncl_part(count, ch, q, &e));
                        assert_int_equal(off, e);
                    } else if (si != 3 && count < (1ull << 40)) { /* proportional (exact weights) */
                        double share = (double)(count - ch) * (double)ncl_channel_weight(&p, ch, q) / (double)total;
                        assert_true((double)len - 1.0 >= share - 1.0 && (double)len - 1.0 <= share + 1.0);
                    }
                }
                assert_int_equal(next, count);
            }
        }
    }
}

/* The ring family with the buffer split over channels by ring weights (some rings slower), over
 * the matrix (fp32) at the default and at tiny slices (64 bytes: many rounds per channel, scratch
 * for a few elements per reduce-scatter slot, so the case count stays affordable): two rings {1, 3} on 2 channels and on 3 (ring 0
 * then carries two channels, each half its weight), four rings {5, 1, 1, 2} on 4 channels. */
static void test_ring_weights(void **state)
{
    (void)state;
    static const pair ring_algos[] = {{NCL_COLL_ALLREDUCE, NCL_ALGO_RING},
                                      {NCL_COLL_REDUCE_SCATTER, NCL_ALGO_RING},
                                      {NCL_COLL_ALLGATHER, NCL_ALGO_RING},
                                      {NCL_COLL_BROADCAST, NCL_ALGO_CHAIN}};
    static const uint32_t w13[] = {1, 3}, w5112[] = {5, 1, 1, 2};
    static const struct {
        const uint32_t *w;
        uint32_t rings, channels;
    } sets[] = {{w13, 2, 2}, {w13, 2, 3}, {w5112, 4, 4}};
    int cases = 0, refused = 0, printed = 0, fails = 0;
    for (size_t si = 0; si < sizeof sets / sizeof sets[0]; si++) {
        g_ring_weights = sets[si].w, g_weight_rings = sets[si].rings, g_channels = sets[si].channels;
        g_dtypes = DTYPES_FP32;
        for (size_t a = 0; a < sizeof ring_algos / sizeof ring_algos[0]; a++) {
            fails += run_matrix(&ring_algos[a], SLICE_BYTES, SCRATCH_BYTES, 0, &cases, NULL, &printed);
            fails += run_matrix(&ring_algos[a], 64, 2048 * sets[si].channels, 0, &cases, &refused, &printed);
        }
    }
    /* the plan carries the weights: {1, 3} gives channel 1 three times channel 0's share */
    g_ring_weights = w13, g_weight_rings = 2, g_channels = 2;
    ncl_plan plan;
    uint64_t off;
    assert_int_equal(make_plan(&plan, NCL_COLL_ALLREDUCE, NCL_ALGO_RING, 4, 0, 1002, NCL_FLOAT32, NCL_SUM, 0,
                               SCRATCH_BYTES),
                     NCL_SUCCESS);
    assert_int_equal(ncl_channel_part(&plan, plan.count, plan.queues - plan.helper_queues, 0, &off), 251);
    assert_int_equal(ncl_channel_part(&plan, plan.count, plan.queues - plan.helper_queues, 1, &off), 751);
    assert_int_equal(off, 251);
    g_ring_weights = NULL, g_weight_rings = 0, g_channels = CHANNELS, g_dtypes = DTYPES_ALL;
    print_message("ring weights: %d cases, %d refused for scratch, %d failed\n", cases, refused, fails);
    assert_int_equal(fails, 0);
}

/* Landing zones: their users (ring allgather, chain broadcast, and ring allreduce and reduce-
 * scatter where the DMA reduces two sources on the way out) on every shape, with zones that hold
 * one small unit or many, at each turn (first use, second, then credits due on either zone), with
 * one and several tasks in flight, with and without room for the helper queues that copy out of
 * them (without, the plan uses none), on the identity and on weighted rings. */
static void test_landing_zones(void **state)
{
    (void)state;
    static const pair users[] = {{NCL_COLL_ALLGATHER, NCL_ALGO_RING},
                                 {NCL_COLL_BROADCAST, NCL_ALGO_CHAIN},
                                 {NCL_COLL_ALLREDUCE, NCL_ALGO_RING},
                                 {NCL_COLL_REDUCE_SCATTER, NCL_ALGO_RING}};
    static const uint32_t w13[] = {1, 3};
    int cases = 0, refused = 0, printed = 0, fails = 0;
    g_reduce_write = 1;
    for (int weighted = 0; weighted < 2; weighted++) {
        g_ring_weights = weighted ? w13 : NULL, g_weight_rings = weighted ? 2 : 0;
        g_dtypes = weighted ? DTYPES_FP32 : DTYPES_EDGES;
        /* every zone size at every turn; tasks in flight pairwise with both (not all 16 triples) */
        for (int v = 0; v < 8; v++) {
            g_zone_bytes = v % 2 ? 1024 : 64;
            for (uint32_t c = 0; c < NCL_MAX_QUEUES; c++)
                g_zone_uses[c] = (uint32_t)(v / 2);
            g_in_flight = (v % 2 + v / 2) % 2 ? NCL_MAX_IN_FLIGHT : 1;
            g_max_queues = v % 3 ? NCL_MAX_QUEUES : CHANNELS;
            for (size_t u = 0; u < sizeof users / sizeof users[0]; u++)
                fails += run_matrix(&users[u], 64, 4 * CHANNELS * g_zone_bytes, 0, &cases, &refused, &printed);
        }
    }
    /* the plan: zones at the top of scratch, out of the algorithms' reach, at the channel's turn */
    ncl_plan plan;
    g_zone_uses[0] = 3, g_zone_uses[1] = 0, g_max_queues = NCL_MAX_QUEUES;
    assert_int_equal(make_plan(&plan, NCL_COLL_ALLGATHER, NCL_ALGO_RING, 4, 0, 1000, NCL_FLOAT32, NCL_SUM, 0, 8192),
                     NCL_SUCCESS);
    assert_int_equal(plan.zone_bytes, 1024);
    assert_int_equal(plan.zone_base, 8192 - 4 * 1024);
    assert_int_equal(plan.scratch_bytes, plan.zone_base);
    assert_int_equal(plan.zone_channels, CHANNELS);
    assert_int_equal(plan.zone_state[0], NCL_ZONE_ODD | NCL_ZONE_CREDIT);
    assert_int_equal(plan.zone_state[1], 0);
    g_zone_bytes = 0, g_in_flight = 1, g_max_queues = NCL_MAX_QUEUES, g_reduce_write = 0;
    memset(g_zone_uses, 0, sizeof g_zone_uses);
    g_ring_weights = NULL, g_weight_rings = 0, g_dtypes = DTYPES_ALL;
    print_message("landing zones: %d cases, %d refused, %d failed\n", cases, refused, fails);
    assert_int_equal(fails, 0);
}

/* Reduce accumulates in scratch on intermediate ranks: too little scratch is refused by prepare,
 * just enough works (one-element slots), and none is needed where no rank accumulates there. */
static void test_small_scratch(void **state)
{
    (void)state;
    ncl_plan plan;
    /* ring: two slots of at least one element */
    assert_int_equal(make_plan(&plan, NCL_COLL_REDUCE, NCL_ALGO_RING, 4, 0, 100, NCL_FLOAT64, NCL_SUM,
                               0, 8),
                     NCL_ERR_UNSUPPORTED);
    assert_int_equal(make_plan(&plan, NCL_COLL_REDUCE, NCL_ALGO_RING, 3, 1, 100, NCL_FLOAT64, NCL_SUM,
                               1, 15),
                     NCL_ERR_UNSUPPORTED);
    expect_checked(NCL_COLL_REDUCE, NCL_ALGO_RING, 4, 100, NCL_FLOAT64, 16);
    expect_checked(NCL_COLL_REDUCE, NCL_ALGO_RING, 5, 37, NCL_FLOAT16, 7); /* 3-byte slots: 1 elem */
    expect_checked(NCL_COLL_REDUCE, NCL_ALGO_RING, 2, 100, NCL_FLOAT64, 0); /* no intermediates */
    /* tree: one element of scratch on the ranks with children */
    assert_int_equal(make_plan(&plan, NCL_COLL_REDUCE, NCL_ALGO_TREE, 4, 0, 100, NCL_FLOAT64, NCL_SUM,
                               0, 4),
                     NCL_ERR_UNSUPPORTED);
    expect_checked(NCL_COLL_REDUCE, NCL_ALGO_TREE, 8, 100, NCL_FLOAT64, 8);
    expect_checked(NCL_COLL_REDUCE, NCL_ALGO_TREE, 3, 100, NCL_FLOAT64, 0); /* only leaves below */
    /* count 0 needs nothing */
    assert_int_equal(make_plan(&plan, NCL_COLL_REDUCE, NCL_ALGO_RING, 4, 0, 0, NCL_FLOAT64, NCL_SUM, 0, 0),
                     NCL_SUCCESS);
}

/* Tree reduce on a backend with one queue: the gather sends each round up itself (no send queue,
 * no credits; the executor holds a slot's refill behind the write that reads it). Tiny
 * slices, so every shape runs many rounds through few slots, one and several tasks in flight. */
static void test_tree_reduce_one_queue(void **state)
{
    (void)state;
    static const pair tree = {NCL_COLL_REDUCE, NCL_ALGO_TREE};
    int cases = 0, refused = 0, printed = 0, fails = 0;
    g_max_queues = 1, g_channels = 1;
    for (int flights = 0; flights < 2; flights++) {
        g_in_flight = flights ? NCL_MAX_IN_FLIGHT : 1;
        fails += run_matrix(&tree, 64, 96, 0, &cases, &refused, &printed);
    }
    g_max_queues = NCL_MAX_QUEUES, g_channels = CHANNELS, g_in_flight = 1;
    print_message("reduce/tree on one queue: %d cases, %d refused for scratch, %d failed\n", cases, refused, fails);
    assert_int_equal(fails, 0);
}

/* Tree reduce with a queue per link of the chain (max_queues >= ceil(lg p) + 1): grant queue j
 * takes child j-1's DATA of round i and grants round i to child j, the same round (no lag); the
 * last queue takes the last child's round i, then writes it up (or, on the root, ends). With one
 * queue too few the plan falls back to the two-queue gather with its lag. The checker proves
 * both, with one and many tasks in flight. */
static void test_tree_reduce_triggered(void **state)
{
    (void)state;
    const ncl_algo_desc *d = ncl_algo_find(NCL_COLL_REDUCE, NCL_ALGO_TREE);
    assert_non_null(d);
    static const int ps[] = {2, 3, 5, 8, 13};
    static const uint64_t counts[] = {1, 1009, BIG_COUNT};
    for (size_t pi = 0; pi < sizeof ps / sizeof ps[0]; pi++) {
        const int p = ps[pi];
        uint32_t h = 0;
        while ((1 << h) < p)
            h++;
        for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
            for (int short_by_one = 0; short_by_one < 2; short_by_one++) {
                ncl_plan plan;
                g_max_queues = short_by_one ? h : h + 1;
                g_channels = 1;
                const ncl_result made =
                    make_plan(&plan, NCL_COLL_REDUCE, NCL_ALGO_TREE, p, 1, counts[ci], NCL_FLOAT32, NCL_SUM, 0,
                              SCRATCH_BYTES);
                assert_int_equal(made, NCL_SUCCESS);
                if (short_by_one) {
                    assert_int_equal(plan.queues, h >= 2 ? 2u : 1u);
                } else {
                    assert_int_equal(plan.queues, h + 1);
                    for (int r = 0; r < p; r++) {
                        const int v = (r - 1 + p) % p; /* tree position, root 1 */
                        uint32_t kids = 0;
                        for (uint32_t m = 1; m < (uint32_t)(v ? (v & -v) : 1 << h) && v + (int)m < p; m <<= 1)
                            kids++;
                        for (uint32_t q = 1; q < plan.queues; q++) {
                            ncl_plan pr = plan;
                            pr.rank = r;
                            ncl_gen g;
                            ncl_task t;
                            memset(&g, 0, sizeof g);
                            uint64_t waits = 0, grants = 0;
                            while (d->next(&pr, q, &g, &t)) {
                                if (q + 1 == plan.queues) { /* the last queue: its child's rounds, in order */
                                    if (t.kind == NCL_TASK_NOTIFY_WAIT && kids && t.peer == (r + (1 << (kids - 1))) % p)
                                        assert_int_equal(t.step, waits++);
                                    continue;
                                }
                                /* a grant queue: wait child q-1's round i, grant child q round i */
                                const int wait_from = (r + (1 << (q - 1))) % p, grant_to = (r + (1 << q)) % p;
                                if (t.kind == NCL_TASK_NOTIFY_WAIT) {
                                    assert_int_equal(t.peer, wait_from);
                                    assert_int_equal(t.step, waits++);
                                } else {
                                    assert_int_equal(t.kind, NCL_TASK_NOTIFY_RECORD);
                                    assert_int_equal(t.peer, grant_to);
                                    assert_int_equal(t.step, grants++);
                                    assert_int_equal(grants, waits);
                                }
                            }
                            if (q + 1 < plan.queues)
                                assert_int_equal(waits, q < kids ? plan.segments : 0);
                            else if (kids)
                                assert_int_equal(waits, plan.segments);
                        }
                    }
                }
                for (int flights = 0; flights < 2; flights++) {
                    char msg[512];
                    g_in_flight = flights ? NCL_MAX_IN_FLIGHT : 1;
                    assert_int_equal(make_plan(&plan, NCL_COLL_REDUCE, NCL_ALGO_TREE, p, 1, counts[ci], NCL_FLOAT32,
                                               NCL_SUM, 0, SCRATCH_BYTES),
                                     NCL_SUCCESS);
                    ncl_result rc = ncl_check(&plan, NULL, malloc_wrapper, free_wrapper, NULL, msg, sizeof msg);
                    if (rc != NCL_SUCCESS)
                        print_message("tree reduce p=%d count=%llu queues=%u: %s\n", p,
                                      (unsigned long long)counts[ci], plan.queues, msg);
                    assert_int_equal(rc, NCL_SUCCESS);
                }
                g_in_flight = 1;
            }
        }
    }
    g_max_queues = NCL_MAX_QUEUES, g_channels = CHANNELS;
}

/* Full mesh with blocks of several rounds and a send queue per peer: two slots per sender on the
 * receiver, round i in slot i % 2. The local queue grants each sender its first two rounds,
 * then round i + 2 once round i is reduced; the writes alternate between the two slots. One
 * round, or fewer send queues than peers, keep one slot per sender (one grant ahead). */
static void test_mesh_double_slots(void **state)
{
    (void)state;
    static const ncl_coll colls[] = {NCL_COLL_REDUCE_SCATTER, NCL_COLL_ALLREDUCE};
    const int p = 4;
    const uint64_t slice = 1024; /* 256 floats a round */
    for (size_t c = 0; c < 2; c++) {
        const ncl_algo_desc *d = ncl_algo_find(colls[c], NCL_ALGO_MESH);
        assert_non_null(d);
        for (int shape = 0; shape < 3; shape++) { /* several rounds; one round; fewer queues */
            const uint64_t block = shape == 1 ? 200 : 1000; /* elements a rank reduces */
            const uint64_t count = colls[c] == NCL_COLL_ALLREDUCE ? block * p : block;
            g_dma_engines = shape == 2 ? 2u : 0u;
            ncl_plan plan;
            assert_int_equal(make_plan_sized(&plan, colls[c], NCL_ALGO_MESH, p, 0, count, NCL_FLOAT32, NCL_SUM, 1,
                                             slice, SCRATCH_BYTES),
                             NCL_SUCCESS);
            const uint64_t buffers = shape == 0 ? 2 : 1, rounds = ncl_div_ceil(block, slice / 4);
            uint64_t grants[NCL_MAX_QUEUES * 4] = {0}, first_grants = 0;
            for (uint32_t q = 0; q < plan.queues; q++) {
                ncl_plan pr = plan;
                pr.rank = 0;
                ncl_gen g;
                ncl_task t;
                memset(&g, 0, sizeof g);
                while (d->next(&pr, q, &g, &t)) {
                    if (t.kind == NCL_TASK_NOTIFY_RECORD && t.notify % 2u == 1u && t.notify < 2u * NCL_MAX_QUEUES &&
                        t.peer != 0) { /* a READY (NCL_NOTIFY_READY) to a sender */
                        first_grants += t.step < buffers;
                        grants[t.peer]++;
                    }
                    if (t.kind == NCL_TASK_WRITE && t.dst.buf == NCL_BUF_SCRATCH && t.step < rounds) {
                        /* slot (d - 1) * buffers + i % buffers: consecutive rounds alternate */
                        const uint64_t slot = t.dst.off / (plan.slice_elems * 4);
                        assert_int_equal(slot % buffers, t.step % buffers);
                    }
                }
            }
            assert_int_equal(first_grants, (uint64_t)(p - 1) * ncl_min_u64(buffers, rounds));
            for (int peer = 1; peer < p; peer++) /* one grant per round the slot is reused for, plus the first */
                assert_int_equal(grants[peer], rounds);
            char msg[512];
            ncl_result rc = ncl_check(&plan, NULL, malloc_wrapper, free_wrapper, NULL, msg, sizeof msg);
            if (rc != NCL_SUCCESS)
                print_message("mesh %s shape %d: %s\n", ncl_coll_name(colls[c]), shape, msg);
            assert_int_equal(rc, NCL_SUCCESS);
        }
    }
    g_dma_engines = 0;
}

/* hier needs two real levels and an inter algorithm it runs: prepare refuses one level
 * (local_size 0, 1 or nranks), a local size that does not divide the ranks, halving-doubling
 * over a server count that is not a power of two, and any other inter algorithm. */
static void test_hier_refusals(void **state)
{
    (void)state;
    static const struct {
        int nranks;
        uint32_t local_size;
        uint8_t inter;
        ncl_result want;
    } cases[] = {
        {8, 0, NCL_ALGO_AUTO, NCL_ERR_UNSUPPORTED},  {8, 1, NCL_ALGO_AUTO, NCL_ERR_UNSUPPORTED},
        {8, 8, NCL_ALGO_AUTO, NCL_ERR_UNSUPPORTED},  {8, 3, NCL_ALGO_AUTO, NCL_ERR_UNSUPPORTED},
        {8, 16, NCL_ALGO_AUTO, NCL_ERR_UNSUPPORTED}, {6, 4, NCL_ALGO_RING, NCL_ERR_UNSUPPORTED},
        {6, 2, NCL_ALGO_HD, NCL_ERR_UNSUPPORTED},    {12, 2, NCL_ALGO_HD, NCL_ERR_UNSUPPORTED},
        {8, 2, NCL_ALGO_MESH, NCL_ERR_UNSUPPORTED},  {1, 1, NCL_ALGO_AUTO, NCL_ERR_UNSUPPORTED},
        {6, 2, NCL_ALGO_RING, NCL_SUCCESS},          {8, 2, NCL_ALGO_HD, NCL_SUCCESS},
        {8, 4, NCL_ALGO_AUTO, NCL_SUCCESS},          {12, 4, NCL_ALGO_AUTO, NCL_SUCCESS},
    };
    static const ncl_coll colls[] = {NCL_COLL_ALLREDUCE, NCL_COLL_BROADCAST};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (size_t c = 0; c < 2; c++) {
            for (int count = 0; count < 2; count++) { /* refused even with nothing to move */
                ncl_plan plan;
                g_local_size = cases[i].local_size;
                g_inter_algo = cases[i].inter;
                ncl_result rc = make_plan(&plan, colls[c], NCL_ALGO_HIER, cases[i].nranks, 0,
                                          count ? 1009 : 0, NCL_FLOAT32, NCL_SUM, 0, SCRATCH_BYTES);
                g_local_size = 0, g_inter_algo = NCL_ALGO_AUTO;
                if (rc != cases[i].want)
                    print_message("hier %s nranks=%d L=%u inter=%s count=%d: %s, want %s\n",
                                  ncl_coll_name(colls[c]), cases[i].nranks, cases[i].local_size,
                                  ncl_algo_name((ncl_algo)cases[i].inter), count ? 1009 : 0,
                                  ncl_strerror(rc), ncl_strerror(cases[i].want));
                assert_int_equal(rc, cases[i].want);
            }
        }
    }
}

/* floor(sqrt(x)) by bisection: an independent reference for the engine's integer sqrt. */
static uint64_t ref_isqrt(uint64_t x)
{
    uint64_t lo = 0, hi = 1ull << 32;
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (mid * mid <= x)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* floor(sqrt((p-2) n / (alpha gbps))), clamped to [ceil(count / slice), count] and >= 1, for one
 * channel's portion: the largest, ceil(count / channels). */
static uint64_t expected_segments(int p, uint64_t count, uint64_t esize, uint64_t channels)
{
    uint64_t slice = SLICE_BYTES / esize;
    count = (count + channels - 1) / channels;
    uint64_t k = p > 2 ? ref_isqrt((uint64_t)(p - 2) * count * esize / ((uint64_t)ALPHA_NS * GBPS)) : 1;
    if (k < 1)
        k = 1;
    if (k > count)
        k = count;
    if (k < (count + slice - 1) / slice)
        k = (count + slice - 1) / slice;
    return k;
}

/* The tasks of rank r's queue q in `plan`: how many, how many of each kind, the first's kind, the
 * bytes the LOCAL_COPYs move and the largest of them. */
typedef struct {
    uint64_t tasks, kinds[NCL_TASK_KIND_COUNT], copied, largest_copy;
    int first;
} queue_tasks;

static queue_tasks walk_queue(const ncl_algo_desc *d, const ncl_plan *plan, int r, uint32_t q)
{
    queue_tasks w;
    memset(&w, 0, sizeof w);
    w.first = -1;
    ncl_plan pr = *plan;
    ncl_gen g;
    ncl_task t;
    pr.rank = r;
    memset(&g, 0, sizeof g);
    while (d->next(&pr, q, &g, &t)) {
        if (w.tasks++ == 0)
            w.first = t.kind;
        w.kinds[t.kind]++;
        if (t.kind == NCL_TASK_LOCAL_COPY) {
            w.copied += t.bytes;
            w.largest_copy = t.bytes > w.largest_copy ? t.bytes : w.largest_copy;
        }
    }
    return w;
}

/* The chain broadcast splits the buffer over the channels and cuts each channel's portion into
 * the cost model's segment count; every rank's stream per channel has exactly the tasks that
 * implies: the root one WRITE per non-empty segment and one DATA record per segment, a middle
 * rank wait/WRITE/record per segment, the tail one wait. Out of place the root copies its
 * portion into its recv: one LOCAL_COPY per slice on a copy queue per channel when there is room
 * for twice the channels, else one per segment on its chain queue, after that segment's write. */
static void test_chain_segments(void **state)
{
    (void)state;
    static const int ps[] = {1, 2, 3, 4, 8, 16};
    static const uint64_t counts[] = {1, 7, 1009, 100000, BIG_COUNT, 5 * 262144ull + 1};
    const ncl_algo_desc *d = ncl_algo_find(NCL_COLL_BROADCAST, NCL_ALGO_CHAIN);
    assert_non_null(d);
    for (int room = 0; room < 2; room++) {
        g_max_queues = room ? NCL_MAX_QUEUES : CHANNELS;
        for (size_t pi = 0; pi < sizeof ps / sizeof ps[0]; pi++) {
            for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
                for (int inplace = 0; inplace < 2; inplace++) {
                    const int p = ps[pi], root = p / 2;
                    const uint64_t channels = counts[ci] < CHANNELS ? counts[ci] : CHANNELS;
                    const uint64_t helpers = !inplace && p > 1 && 2 * channels <= g_max_queues ? channels : 0;
                    ncl_plan plan;
                    assert_int_equal(make_plan(&plan, NCL_COLL_BROADCAST, NCL_ALGO_CHAIN, p, root,
                                               counts[ci], NCL_FLOAT32, NCL_SUM, inplace, SCRATCH_BYTES),
                                     NCL_SUCCESS);
                    const uint64_t k = plan.segments;
                    assert_int_equal(plan.queues, channels + helpers);
                    assert_int_equal(k, expected_segments(p, counts[ci], 4, channels));
                    for (int r = 0; r < p; r++) {
                        const int v = (r - root + p) % p;
                        for (uint32_t q = 0; q < plan.queues; q++) {
                            uint64_t full = 0, off;
                            const uint64_t portion = ncl_part(counts[ci], channels, q % channels, &off);
                            const uint64_t slices = inplace ? 0 : (portion + SLICE_BYTES / 4 - 1) / (SLICE_BYTES / 4);
                            for (uint64_t sg = 0; sg < k; sg++) /* segments with data in this channel */
                                full += ncl_part(portion, k, sg, &off) != 0;
                            const queue_tasks w = walk_queue(d, &plan, r, q);
                            /* the root's copies: one per slice on the copy queue, or without one on
                             * the chain queue one per segment with data (alone: per slice) */
                            const uint64_t want_copies = inplace || v != 0 ? 0
                                                         : helpers        ? (q >= channels ? slices : 0)
                                                         : p == 1         ? slices
                                                                          : full;
                            uint64_t want_tasks, want_writes = v < p - 1 && q < channels ? full : 0;
                            if (q >= channels)
                                want_tasks = want_copies;
                            else if (v == 0)
                                want_tasks = (p > 1) + (p > 1) * (k + full) + want_copies;
                            else if (v < p - 1)
                                want_tasks = 2 + 2 * k + full;
                            else
                                want_tasks = 2;
                            assert_int_equal(w.kinds[NCL_TASK_WRITE], want_writes);
                            assert_int_equal(w.kinds[NCL_TASK_LOCAL_COPY], want_copies);
                            assert_int_equal(w.tasks, want_tasks);
                        }
                    }
                    char msg[512];
                    ncl_result rc = ncl_check(&plan, NULL, malloc_wrapper, free_wrapper, NULL, msg,
                                              sizeof msg);
                    if (rc != NCL_SUCCESS)
                        print_message("chain p=%d count=%llu: %s\n", p, (unsigned long long)counts[ci], msg);
                    assert_int_equal(rc, NCL_SUCCESS);
                }
            }
        }
    }
    g_max_queues = NCL_MAX_QUEUES;
    /* count 0: no tasks at all */
    ncl_plan plan;
    assert_int_equal(make_plan(&plan, NCL_COLL_BROADCAST, NCL_ALGO_CHAIN, 4, 0, 0, NCL_FLOAT32,
                               NCL_SUM, 0, SCRATCH_BYTES),
                     NCL_SUCCESS);
    for (int r = 0; r < 4; r++) {
        ncl_gen g;
        ncl_task t;
        memset(&g, 0, sizeof g);
        plan.rank = r;
        assert_int_equal(d->next(&plan, 0, &g, &t), 0);
    }
}

/* The ring reduce's segments are as many as keep a segment's transfer at least its issue (its
 * knee, taken at 1/2 without a cost table) where the buffer is large: the pipeline of posted writes' optimum
 * (ncl_pipeline_segments_posted). An intermediate rank fills every segment once and forwards it
 * once. With room for two queues the fills are on the second, each refill after a LOCAL notify
 * the forward queue posts behind the forward that read the slot; with one queue a slot is
 * refilled lag forwards later (2 with 4 or more slots, else slots - 2), so the queue never waits
 * for a forward to land before the next. The checker proves it all, with scratch for 2, 3 and
 * many slots. */
/* One case of test_ring_reduce_posted: p ranks, count fp32, scratch for 2, 3 or many slots
 * (sc 0, 1, 2), the backend's queues (1, or room for the fill queue). */
static void ring_reduce_case(const ncl_algo_desc *d, int p, uint64_t count, int sc, int queues)
{
    ncl_plan plan;
    const uint64_t scratch = sc == 0 ? 2 * SLICE_BYTES : sc == 1 ? 3 * SLICE_BYTES : SCRATCH_BYTES;
    assert_int_equal(make_plan(&plan, NCL_COLL_REDUCE, NCL_ALGO_RING, p, 1, count, NCL_FLOAT32, NCL_SUM, 0, scratch),
                     NCL_SUCCESS);
    assert_int_equal(plan.queues, (uint32_t)queues);
    const uint64_t k = plan.segments, nbeta = count * 4 / GBPS, hops = (uint64_t)p - 1;
    const uint64_t by_slice = ncl_div_ceil(count, SLICE_BYTES / 4);
    const uint64_t posted = ncl_min_u64(ncl_pipeline_segments_posted(hops, nbeta, ALPHA_NS, 0), count);
    assert_int_equal(k, posted > by_slice ? posted : by_slice);
    if (nbeta / ALPHA_NS / 2 >= hops) /* bandwidth-bound segments, unless slices cut more */
        assert_true(k >= nbeta / ALPHA_NS / 2 && (k == by_slice || nbeta / k >= ALPHA_NS));
    const uint64_t seg_max = ncl_div_ceil(count, k), slots = scratch / 4 / seg_max;
    const uint64_t nslots = slots < 2 ? 2 : slots > 16 ? 16 : slots, lag = nslots >= 4 ? 2 : nslots - 2;
    for (int r = 0; r < p; r++) {
        const int u = (r - 1 - 1 + p) % p; /* chain position (root 1) */
        uint64_t copies = 0, forwards = 0, refills_posted = 0, refill_waits = 0, forwards_at_refill = UINT64_MAX;
        for (uint32_t q = 0; q < plan.queues; q++) {
            ncl_plan pr = plan;
            pr.rank = r;
            ncl_gen g;
            ncl_task t;
            memset(&g, 0, sizeof g);
            while (d->next(&pr, q, &g, &t)) {
                if (t.kind == NCL_TASK_LOCAL_COPY && copies++ == nslots && forwards_at_refill == UINT64_MAX)
                    forwards_at_refill = forwards;
                forwards += t.kind == NCL_TASK_WRITE_REDUCE;
                refills_posted += t.kind == NCL_TASK_NOTIFY_RECORD && t.peer == r;
                refill_waits += t.kind == NCL_TASK_NOTIFY_WAIT && t.peer == r;
                if (q == 1) /* the fill queue only copies, grants and waits for its own rank */
                    assert_true(t.kind == NCL_TASK_LOCAL_COPY || t.kind == NCL_TASK_NOTIFY_WAIT ||
                                (t.kind == NCL_TASK_NOTIFY_RECORD && t.peer == (r - 1 + p) % p));
            }
        }
        if (u == 0 || u == p - 1)
            continue;
        assert_int_equal(copies, k);
        assert_int_equal(forwards, k);
        const uint64_t refills = k > nslots ? k - nslots : 0;
        assert_int_equal(refills_posted, queues == 2 ? refills : 0);
        assert_int_equal(refill_waits, queues == 2 ? refills : 0);
        if (queues == 1 && k > nslots) /* the first refill comes lag forwards after the one it waits for */
            assert_int_equal(forwards_at_refill, lag + 1);
    }
    char msg[512];
    ncl_result rc = ncl_check(&plan, NULL, malloc_wrapper, free_wrapper, NULL, msg, sizeof msg);
    if (rc != NCL_SUCCESS)
        print_message("ring reduce p=%d count=%llu scratch=%llu queues=%d: %s\n", p, (unsigned long long)count,
                      (unsigned long long)scratch, queues, msg);
    assert_int_equal(rc, NCL_SUCCESS);
}

static void test_ring_reduce_posted(void **state)
{
    (void)state;
    const ncl_algo_desc *d = ncl_algo_find(NCL_COLL_REDUCE, NCL_ALGO_RING);
    assert_non_null(d);
    static const int ps[] = {3, 4, 8};
    static const uint64_t counts[] = {1, 1009, 100000, BIG_COUNT};
    for (int queues = 1; queues <= 2; queues++) {
        g_max_queues = queues == 1 ? 1 : NCL_MAX_QUEUES;
        g_channels = queues == 1 ? 1 : CHANNELS;
        for (size_t pi = 0; pi < sizeof ps / sizeof ps[0]; pi++)
            for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++)
                for (int sc = 0; sc < 3; sc++)
                    ring_reduce_case(d, ps[pi], counts[ci], sc, queues);
    }
    g_max_queues = NCL_MAX_QUEUES;
    g_channels = CHANNELS;
}

/* Where the DMA reduces two sources on the way out, ring allreduce and reduce-scatter use it: out
 * of place, the allreduce's fill queue copies only the rank's final chunk and records one READY;
 * with zones the first units go there (plain writes and REDUCE_WRITEs, no READY first). Without
 * the feature neither kind appears. */
static void test_reduce_write_plans(void **state)
{
    (void)state;
    const ncl_algo_desc *ar = ncl_algo_find(NCL_COLL_ALLREDUCE, NCL_ALGO_RING);
    const ncl_algo_desc *rs = ncl_algo_find(NCL_COLL_REDUCE_SCATTER, NCL_ALGO_RING);
    const int p = 5;
    const uint64_t count = 5 * 1000;
    g_in_flight = NCL_MAX_IN_FLIGHT;
    for (int feature = 0; feature < 2; feature++)
        for (int inplace = 0; inplace < 2; inplace++) {
            g_reduce_write = feature;
            g_zone_bytes = 4096;
            ncl_plan plan;
            assert_int_equal(make_plan_sized(&plan, NCL_COLL_ALLREDUCE, NCL_ALGO_RING, p, 0, count, NCL_FLOAT32,
                                             NCL_SUM, inplace, 1024, 1 << 20),
                             NCL_SUCCESS);
            assert_int_equal(plan.zone_channels, feature ? CHANNELS : 0);
            queue_tasks w = walk_queue(ar, &plan, 0, 0);
            assert_int_equal(w.kinds[NCL_TASK_REDUCE_WRITE] > 0, feature);
            assert_int_equal(w.kinds[NCL_TASK_REDUCE_WRITE_REDUCE] > 0, feature);
            if (feature && !inplace) { /* the fill queue: our final chunk (500 elements, 1024-byte slices) */
                w = walk_queue(ar, &plan, 0, CHANNELS);
                assert_int_equal(w.copied, 500 * 4);
                assert_int_equal(w.kinds[NCL_TASK_NOTIFY_RECORD], 1);
            }
            assert_int_equal(make_plan_sized(&plan, NCL_COLL_REDUCE_SCATTER, NCL_ALGO_RING, p, 0, count / p,
                                             NCL_FLOAT32, NCL_SUM, inplace, 1024, 1 << 20),
                             NCL_SUCCESS);
            w = walk_queue(rs, &plan, 0, 0);
            assert_int_equal(w.kinds[NCL_TASK_REDUCE_WRITE] > 0, feature);
            assert_int_equal(w.kinds[NCL_TASK_REDUCE_WRITE_REDUCE] > 0, feature);
            assert_int_equal(w.kinds[NCL_TASK_WRITE_REDUCE] > 0, !feature);
        }
    g_reduce_write = 0, g_zone_bytes = 0, g_in_flight = 1;
}

/* Ring reduce-scatter's landing stream with data tasks in flight: a channel's units run in blocks
 * of rounds, step by step (the writes' steps go 0, 0, ..., 1, 1, ... within a block), and every
 * DATA record is posted behind its write; with one task in flight, round by round (steps 0, 1, 2,
 * 3, 0, ...) and the same records. (Correctness: the checker, in the matrix tests.) */
static void test_reduce_scatter_blocks(void **state)
{
    (void)state;
    const ncl_algo_desc *rs = ncl_algo_find(NCL_COLL_REDUCE_SCATTER, NCL_ALGO_RING);
    const int p = 5;
    g_reduce_write = 1;
    for (int flights = 0; flights < 2; flights++) {
        g_in_flight = flights ? NCL_MAX_IN_FLIGHT : 1;
        ncl_plan plan;
        /* 8 rounds of 1 KiB per channel */
        assert_int_equal(make_plan_sized(&plan, NCL_COLL_REDUCE_SCATTER, NCL_ALGO_RING, p, 0, CHANNELS * 8 * 256,
                                         NCL_FLOAT32, NCL_SUM, 0, 1024, SCRATCH_BYTES),
                         NCL_SUCCESS);
        ncl_plan pr = plan;
        ncl_gen g;
        ncl_task t;
        uint32_t steps[64], n = 0, posted = 0, records = 0;
        memset(&g, 0, sizeof g);
        while (rs->next(&pr, 0, &g, &t)) {
            if (ncl_task_is_remote(t.kind) && n < 64)
                steps[n++] = t.step % (uint32_t)(p - 1);
            if (t.kind == NCL_TASK_NOTIFY_RECORD && t.notify == NCL_NOTIFY_DATA(0)) {
                records++;
                posted += t.flags == NCL_TASK_POSTED;
            }
        }
        assert_int_equal(n, 8 * (p - 1));
        assert_int_equal(records, n);
        assert_int_equal(posted, n);
        for (uint32_t u = 0; u < n; u++) /* 1 KiB rounds hide no latency alone: one block of all 8 */
            assert_int_equal(steps[u], flights ? u / 8 : u % (uint32_t)(p - 1));
    }
    g_reduce_write = 0, g_in_flight = 1;
}

/* Out-of-place ring allreduce with room for twice the channels: a fill queue per channel copies
 * the rank's contributions, each batch followed by a READY (one round: steps 0, 1, 2-3, 4-7, ...;
 * more rounds: every step of every round), and
 * the ring queue starts with the wait for the first of them, no copy of its own; the bytes copied
 * are the same as without the room, where the ring queue copies them all before its one READY. In
 * place: no fill queue, no copy. (Correctness: the checker, in the matrix tests.) */
static void test_allreduce_fill_queue(void **state)
{
    (void)state;
    static const int ps[] = {2, 3, 5, 8};
    static const uint64_t counts[] = {7, 1009, BIG_COUNT};
    const ncl_algo_desc *d = ncl_algo_find(NCL_COLL_ALLREDUCE, NCL_ALGO_RING);
    assert_non_null(d);
    for (size_t pi = 0; pi < sizeof ps / sizeof ps[0]; pi++)
        for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++)
            for (int inplace = 0; inplace < 2; inplace++) {
                const int p = ps[pi];
                uint64_t copied[2][8] = {{0}};
                for (int room = 0; room < 2; room++) {
                    g_max_queues = room ? NCL_MAX_QUEUES : CHANNELS;
                    ncl_plan plan;
                    assert_int_equal(make_plan_sized(&plan, NCL_COLL_ALLREDUCE, NCL_ALGO_RING, p, 0, counts[ci],
                                                     NCL_FLOAT32, NCL_SUM, inplace, 4096, SCRATCH_BYTES),
                                     NCL_SUCCESS);
                    const uint32_t channels = ncl_channels_for(CHANNELS, counts[ci] / (uint64_t)p);
                    const uint32_t helpers = !inplace && 2 * channels <= g_max_queues ? channels : 0;
                    assert_int_equal(plan.helper_queues, helpers);
                    assert_int_equal(plan.queues, channels + helpers);
                    for (int r = 0; r < p; r++)
                        for (uint32_t q = 0; q < plan.queues; q++) {
                            uint64_t off, span = ncl_part(counts[ci], channels, q % channels, &off);
                            uint64_t rounds = ncl_div_ceil(ncl_div_ceil(span, (uint64_t)p), plan.slice_elems);
                            const queue_tasks w = walk_queue(d, &plan, r, q);
                            const uint64_t copies = w.kinds[NCL_TASK_LOCAL_COPY];
                            if (helpers && q < channels && w.tasks)
                                assert_int_equal(w.first, NCL_TASK_NOTIFY_WAIT);
                            assert_true(w.largest_copy <= 4096);
                            copied[room][r] += w.copied;
                            if (q >= channels) { /* the fill queue: a READY per batch */
                                uint64_t batches = 0;
                                for (uint64_t j = 0; j < (uint64_t)(p - 1); j++)
                                    batches += rounds > 1 || (j & (j - 1)) == 0;
                                assert_int_equal(w.kinds[NCL_TASK_NOTIFY_RECORD], rounds * batches);
                                assert_int_equal(w.tasks, copies + w.kinds[NCL_TASK_NOTIFY_RECORD]);
                            } else if (helpers || inplace) {
                                assert_int_equal(copies, 0);
                            }
                        }
                }
                for (int r = 0; r < p; r++)
                    assert_int_equal(copied[0][r], copied[1][r]);
            }
    g_max_queues = NCL_MAX_QUEUES;
}

/* alltoallv: mesh and pairwise over count matrices with empty blocks, one-element blocks, blocks
 * of several slices and one rank that sends nothing; in place on symmetric matrices with scratch
 * for a few elements per slot (blocks of several rounds, parts past a short block's end empty).
 * Every rank's output is proven block by block against the matrix (the checker's verdict). */
static void test_alltoallv(void **state)
{
    (void)state;
    static const ncl_algo algos[] = {NCL_ALGO_MESH, NCL_ALGO_PAIRWISE};
    static const int ps[] = {1, 2, 3, 4, 5, 8};
    enum { MAXP = 8 };
    uint64_t counts[MAXP * MAXP];
    int cases = 0;
    for (size_t ai = 0; ai < sizeof algos / sizeof algos[0]; ai++)
        for (size_t pi = 0; pi < sizeof ps / sizeof ps[0]; pi++)
            for (int shape = 0; shape < 4; shape++)
                for (int inplace = 0; inplace < 2; inplace++)
                    for (int few = 0; few < 2; few++) {
                        const int p = ps[pi];
                        const uint32_t queues = few ? CHANNELS : NCL_MAX_QUEUES; /* few: queues write to several peers */
                        uint64_t largest = 0;
                        for (int i = 0; i < p; i++)
                            for (int j = 0; j < p; j++) {
                                const int a = inplace && j < i ? j : i, b = inplace && j < i ? i : j;
                                uint64_t n = (uint64_t)((a * 7 + b * 3 + shape * 5) % 11); /* 0 .. 10 */
                                if (shape == 1)
                                    n = n * 97 + 1; /* blocks of several 64-element slices */
                                if (shape == 2 && (a == p - 1 || b == p - 1))
                                    n = 0; /* the last rank takes no part */
                                if (shape == 3)
                                    n = (a + b) % 3 == 0 ? 0 : 1;
                                counts[i * p + j] = n;
                                largest = n > largest ? n : largest;
                            }
                        g_max_queues = queues;
                        ncl_plan plan;
                        ncl_result rc = make_plan_sized(&plan, NCL_COLL_ALLTOALL, algos[ai], p, 0, largest, NCL_INT32,
                                                        NCL_SUM, inplace, 64 * 4, 64);
                        g_max_queues = NCL_MAX_QUEUES;
                        if (largest == 0)
                            continue; /* nothing moves: the call returns before planning */
                        if (rc != NCL_SUCCESS)
                            fail_msg("alltoallv/%s p=%d shape %d %s, %u queues: plan: %s", ncl_algo_name(algos[ai]), p,
                                     shape, inplace ? "in place" : "out of place", queues, ncl_strerror(rc));
                        plan.a2a_counts = counts;
                        char msg[512];
                        rc = ncl_check(&plan, NULL, malloc_wrapper, free_wrapper, NULL, msg, sizeof msg);
                        if (rc != NCL_SUCCESS)
                            fail_msg("alltoallv/%s p=%d shape %d %s, %u queues: %s", ncl_algo_name(algos[ai]), p, shape,
                                     inplace ? "in place" : "out of place", queues, msg);
                        cases++;
                    }
    print_message("alltoallv: %d cases\n", cases);
    assert_true(cases > 100);
}

/* argv[1], if given, selects tests by cmocka filter pattern (e.g. "matrix_allreduce_hd*"). */
int main(int argc, char **argv)
{
    enum { MAXP = NCL_COLL_COUNT * (NCL_ALGO_COUNT - 1) };
    static pair pairs[MAXP];
    static char names[2 * MAXP][64];
    struct CMUnitTest tests[2 * MAXP + 16];
    size_t n = 0, np = 0;
    for (int c = 0; c < NCL_COLL_COUNT; c++) {
        for (int a = NCL_ALGO_AUTO + 1; a < NCL_ALGO_COUNT; a++) {
            /* a user schedule is data the plan carries: tests/firmware/algo/test_user.c proves those */
            if (!ncl_algo_find((ncl_coll)c, (ncl_algo)a) || a == NCL_ALGO_USER)
                continue;
            pairs[np].coll = (ncl_coll)c;
            pairs[np].algo = (ncl_algo)a;
            for (int small = 0; small < 2; small++) {
                snprintf(names[n], sizeof names[n], "matrix_%s_%s%s", ncl_coll_name((ncl_coll)c),
                         ncl_algo_name((ncl_algo)a), small ? "_small_slices" : "");
                struct CMUnitTest t = {names[n], small ? test_matrix_small_slices : test_matrix,
                                       NULL, NULL, &pairs[np]};
                tests[n++] = t;
            }
            np++;
        }
    }
    struct CMUnitTest rings = cmocka_unit_test(test_rings);
    tests[n++] = rings;
    struct CMUnitTest scratch = cmocka_unit_test(test_small_scratch);
    struct CMUnitTest chain = cmocka_unit_test(test_chain_segments);
    struct CMUnitTest ring_reduce = cmocka_unit_test(test_ring_reduce_posted);
    struct CMUnitTest one_queue = cmocka_unit_test(test_tree_reduce_one_queue);
    struct CMUnitTest triggered = cmocka_unit_test(test_tree_reduce_triggered);
    struct CMUnitTest double_slots = cmocka_unit_test(test_mesh_double_slots);
    tests[n++] = double_slots;
    tests[n++] = scratch;
    tests[n++] = one_queue;
    tests[n++] = triggered;
    tests[n++] = chain;
    tests[n++] = ring_reduce;
    struct CMUnitTest hier = cmocka_unit_test(test_hier_refusals);
    tests[n++] = hier;
    struct CMUnitTest part = cmocka_unit_test(test_channel_part);
    struct CMUnitTest weights = cmocka_unit_test(test_ring_weights);
    tests[n++] = part;
    tests[n++] = weights;
    struct CMUnitTest fill = cmocka_unit_test(test_allreduce_fill_queue);
    struct CMUnitTest zones = cmocka_unit_test(test_landing_zones);
    struct CMUnitTest two_source = cmocka_unit_test(test_reduce_write_plans);
    tests[n++] = fill;
    tests[n++] = zones;
    tests[n++] = two_source;
    struct CMUnitTest blocks = cmocka_unit_test(test_reduce_scatter_blocks);
    tests[n++] = blocks;
    struct CMUnitTest a2av = cmocka_unit_test(test_alltoallv);
    tests[n++] = a2av;
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return _cmocka_run_group_tests("algos", tests, n, NULL, NULL);
}
