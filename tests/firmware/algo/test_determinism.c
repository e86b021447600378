/* test_determinism.c — deterministic mode on the host backend: fp32/bf16 allreduce results are
 * bit-identical across algorithms, channels, slices, in/out of place and call splits, and equal
 * the rank-order reduction ((x_0 + x_1) + x_2) ... computed with the engine's own kernels; with
 * wide accumulation fp16/bf16 sums are the rank-order fp32 sum rounded once, just as stable. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncl/ncl_dtype.h"
#include "ncl/ncl_host.h"

static const int rank_counts[] = {2, 3, 5, 8};
/* What `algorithm` says; deterministic mode must not care. */
static const ncl_algo algos[] = {NCL_ALGO_RING, NCL_ALGO_HD, NCL_ALGO_MESH, NCL_ALGO_DBTREE,
                                 NCL_ALGO_AUTO};
enum { NALGOS = sizeof algos / sizeof algos[0], MAX_RANKS = 8, MAX_JOBS = 64 };

/* One allreduce, or a sequence of them over consecutive pieces of the buffer, on every rank. */
typedef struct job {
    ncl_dtype dt;
    ncl_op op;
    ncl_algo algo;
    int inplace;
    uint64_t count, split; /* split: elements per call, 0 = one call */
    const void *const *in; /* in[rank]: that rank's input (count elements) */
    void *out[MAX_RANKS];  /* each rank's result */
} job;

typedef struct world {
    job *jobs;
    int njobs;
} world;

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return *s = x;
}

/* Mixed magnitudes and signs: random mantissa times 2^(-20..20), so that the order of the
 * additions changes the rounded result (exact-integer inputs would hide any order). */
static void *make_input(ncl_dtype dt, uint64_t count, uint64_t seed)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
    void *buf = malloc(count * ncl_dtype_size(dt));
    for (uint64_t i = 0; i < count; i++) {
        uint64_t x = rng_next(&s);
        uint32_t sign = (uint32_t)(x >> 63), exp = (uint32_t)(127 - 20 + (x >> 32) % 41);
        if (dt == NCL_FLOAT32) {
            uint32_t bits = sign << 31 | exp << 23 | (uint32_t)(x & 0x7fffffu);
            memcpy((char *)buf + 4 * i, &bits, 4);
        } else if (dt == NCL_FLOAT16) { /* 2^(-8..8): a sum of 8 stays far below 65504 */
            uint16_t bits = (uint16_t)(sign << 15 | (15 - 8 + (x >> 32) % 17) << 10 | (uint32_t)(x & 0x3ffu));
            memcpy((char *)buf + 2 * i, &bits, 2);
        } else { /* bf16: the same shape in its 7 mantissa bits */
            uint16_t bits = (uint16_t)(sign << 15 | exp << 7 | (uint32_t)(x & 0x7fu));
            memcpy((char *)buf + 2 * i, &bits, 2);
        }
    }
    return buf;
}

/* The canonical result: x_0, then op x_1, ..., op x_{p-1}, with the engine's kernels (each
 * element on its own, so the kernel's vector length does not matter); avg divides once. */
static void *reference(const void *const *in, int p, ncl_dtype dt, ncl_op op, uint64_t count)
{
    size_t es = ncl_dtype_size(dt);
    char *acc = malloc(count * es);
    memcpy(acc, in[0], count * es);
    for (int r = 1; r < p; r++)
        for (uint64_t i = 0; i < count; i++)
            ncl_reduce_kernel(acc + i * es, (const char *)in[r] + i * es, 1, dt,
                              op == NCL_AVG ? NCL_SUM : op);
    if (op == NCL_AVG)
        for (uint64_t i = 0; i < count; i++)
            ncl_div_kernel(acc + i * es, 1, dt, (uint32_t)p);
    return acc;
}

/* Every job in order on every rank; the main thread compares afterwards. */
static ncl_result rank_fn(ncl_comm *comm, void *arg)
{
    world *w = arg;
    int r;
    ncl_comm_rank(comm, &r);
    for (int j = 0; j < w->njobs; j++) {
        job *jb = &w->jobs[j];
        size_t es = ncl_dtype_size(jb->dt);
        const char *in = jb->in[r];
        char *out = jb->out[r];
        uint64_t step = jb->split ? jb->split : jb->count;
        ncl_result rc = ncl_comm_set_algorithm(comm, NCL_COLL_ALLREDUCE, jb->algo);
        if (rc != NCL_SUCCESS)
            return rc;
        if (jb->inplace)
            memcpy(out, in, jb->count * es);
        for (uint64_t off = 0; off < jb->count; off += step) {
            uint64_t n = jb->count - off < step ? jb->count - off : step;
            rc = ncl_allreduce(jb->inplace ? out + off * es : in + off * es, out + off * es, n, jb->dt,
                               jb->op, comm);
            if (rc != NCL_SUCCESS) {
                fprintf(stderr, "rank %d job %d: %s: %s\n", r, j, ncl_strerror(rc),
                        ncl_comm_last_error(comm));
                return rc;
            }
        }
    }
    return NCL_SUCCESS;
}

/* run_world's `deterministic`: 0 off, 1 on, WIDE on with wide accumulation. */
enum { WIDE = 2 };

/* Runs the jobs on p ranks with these communicator options. */
static void run_world(int p, uint32_t channels, uint64_t slice_bytes, int deterministic, job *jobs,
                      int njobs)
{
    for (int j = 0; j < njobs; j++)
        for (int r = 0; r < p; r++) {
            jobs[j].out[r] = malloc(jobs[j].count * ncl_dtype_size(jobs[j].dt));
            memset(jobs[j].out[r], 0xa5, jobs[j].count * ncl_dtype_size(jobs[j].dt));
        }
    ncl_host_config cfg = NCL_HOST_CONFIG_INIT;
    cfg.nranks = p;
    cfg.comm.channels = channels;
    cfg.comm.slice_bytes = slice_bytes;
    cfg.comm.deterministic = deterministic != 0;
    cfg.comm.wide_accumulation = deterministic == WIDE;
    if (deterministic == WIDE) /* every wide schedule that runs is proven too, in Release as well */
        cfg.comm.check_schedules = 1;
    cfg.comm.timeout_ns = 60ull * 1000 * 1000 * 1000;
    world w = {jobs, njobs};
    assert_int_equal(ncl_host_run_cfg(&cfg, rank_fn, &w, NULL), NCL_SUCCESS);
}

static void free_outputs(job *jobs, int njobs, int p)
{
    for (int j = 0; j < njobs; j++)
        for (int r = 0; r < p; r++)
            free(jobs[j].out[r]);
}

/* Elements that differ bitwise between two results. */
static uint64_t count_diff(const void *a, const void *b, uint64_t count, ncl_dtype dt)
{
    size_t es = ncl_dtype_size(dt);
    uint64_t d = 0;
    for (uint64_t i = 0; i < count; i++)
        d += memcmp((const char *)a + i * es, (const char *)b + i * es, es) != 0;
    return d;
}

/* Every rank's output of every job bit-identical to the reference of its (dtype, op). */
static void expect_reference(const job *jobs, int njobs, int p, const void *const *refs,
                             const char *what)
{
    for (int j = 0; j < njobs; j++) {
        for (int r = 0; r < p; r++) {
            uint64_t d = count_diff(jobs[j].out[r], refs[j], jobs[j].count, jobs[j].dt);
            if (d)
                print_error("%s p=%d %s %s algo %s %s split %llu rank %d: %llu of %llu elements "
                            "differ from the rank-order reference\n",
                            what, p, ncl_dtype_name(jobs[j].dt), ncl_op_name(jobs[j].op),
                            ncl_algo_name(jobs[j].algo), jobs[j].inplace ? "in-place" : "out-of-place",
                            (unsigned long long)jobs[j].split, r, (unsigned long long)d,
                            (unsigned long long)jobs[j].count);
            assert_int_equal(d, 0);
        }
    }
}

/* The (dtype, op) cases of (a) and (d). */
typedef struct dcase {
    ncl_dtype dt;
    ncl_op op;
} dcase;
static const dcase cases[] = {{NCL_FLOAT32, NCL_SUM}, {NCL_FLOAT32, NCL_AVG}, {NCL_BFLOAT16, NCL_SUM}};
enum { NCASES = sizeof cases / sizeof cases[0], COUNT = 4099 };

typedef struct inputs {
    void *in[NCASES][MAX_RANKS];
    void *ref[NCASES];
} inputs;

static void make_inputs(inputs *x, int p, uint64_t count)
{
    for (int c = 0; c < NCASES; c++) {
        for (int r = 0; r < p; r++) /* fp32 sum and avg share inputs */
            x->in[c][r] = make_input(cases[c].dt, count,
                                     (uint64_t)(1000 * p + 10 * r + (cases[c].dt == NCL_BFLOAT16)));
        x->ref[c] = reference((const void *const *)x->in[c], p, cases[c].dt, cases[c].op, count);
    }
}

static void free_inputs(inputs *x, int p)
{
    for (int c = 0; c < NCASES; c++) {
        for (int r = 0; r < p; r++)
            free(x->in[c][r]);
        free(x->ref[c]);
    }
}

/* (a) + (b): deterministic mode, every forced algorithm, channels 1 and 3, slices 64 B and
 * 1 MiB, in and out of place: every rank's result is the rank-order reference, bit for bit
 * (and so all of them are identical). */
static void test_algorithms_channels_slices(void **state)
{
    (void)state;
    static const uint32_t channel_counts[] = {1, 3};
    static const uint64_t slices[] = {64, 1u << 20};
    for (size_t pi = 0; pi < sizeof rank_counts / sizeof rank_counts[0]; pi++) {
        const int p = rank_counts[pi];
        inputs x;
        make_inputs(&x, p, COUNT);
        for (size_t ci = 0; ci < 2; ci++) {
            for (size_t si = 0; si < 2; si++) {
                job jobs[MAX_JOBS];
                const void *refs[MAX_JOBS];
                int n = 0;
                for (int c = 0; c < NCASES; c++)
                    for (int a = 0; a < NALGOS; a++)
                        for (int inplace = 0; inplace < 2; inplace++) {
                            jobs[n] = (job){cases[c].dt, cases[c].op, algos[a], inplace, COUNT, 0,
                                            (const void *const *)x.in[c], {0}};
                            refs[n++] = x.ref[c];
                        }
                run_world(p, channel_counts[ci], slices[si], 1, jobs, n);
                char what[64];
                snprintf(what, sizeof what, "channels %u slice %llu", channel_counts[ci],
                         (unsigned long long)slices[si]);
                expect_reference(jobs, n, p, refs, what);
                free_outputs(jobs, n, p);
            }
        }
        free_inputs(&x, p);
    }
}

/* (c): 1 MiB of fp32 (and of bf16) reduced in one call and in calls of 8 B, 4 KiB and 100000 B:
 * identical bits, equal to the reference. One call at 1 MiB takes two rounds at 8 ranks (scratch
 * bounds a round), the small calls one each. The 8 B calls cover the first 64 KiB only (16384 or
 * 8192 calls): the whole MiB would be 131072 calls per case, minutes on a loaded machine. */
static void test_splits(void **state)
{
    (void)state;
    static const uint64_t split_bytes[] = {0, 8, 4096, 100000};
    enum { NSPLITS = sizeof split_bytes / sizeof split_bytes[0] };
    static const ncl_dtype dts[] = {NCL_FLOAT32, NCL_BFLOAT16};
    for (size_t pi = 0; pi < sizeof rank_counts / sizeof rank_counts[0]; pi++) {
        const int p = rank_counts[pi];
        for (size_t di = 0; di < 2; di++) {
            const ncl_dtype dt = dts[di];
            const size_t es = ncl_dtype_size(dt);
            const uint64_t count = (1u << 20) / es;
            void *in[MAX_RANKS];
            for (int r = 0; r < p; r++)
                in[r] = make_input(dt, count, (uint64_t)(7000 + 100 * p + 10 * r + (int)di));
            void *ref = reference((const void *const *)in, p, dt, NCL_SUM, count);
            job jobs[NSPLITS];
            const void *refs[NSPLITS];
            for (int s = 0; s < NSPLITS; s++) {
                uint64_t n = split_bytes[s] == 8 ? (64u << 10) / es : count;
                jobs[s] = (job){dt, NCL_SUM, NCL_ALGO_AUTO, s % 2, n, split_bytes[s] / es,
                                (const void *const *)in, {0}};
                refs[s] = ref;
            }
            run_world(p, 2, 512u << 10, 1, jobs, NSPLITS);
            for (int s = 1; s < NSPLITS; s++) /* the splits against the one call */
                assert_int_equal(count_diff(jobs[s].out[0], jobs[0].out[0], jobs[s].count, dt), 0);
            expect_reference(jobs, NSPLITS, p, refs, "splits");
            free_outputs(jobs, NSPLITS, p);
            free(ref);
            for (int r = 0; r < p; r++)
                free(in[r]);
        }
    }
}

/* (d): without deterministic mode the same inputs give different bits with different
 * algorithms (p >= 3: two addends commute exactly), so the agreement above is not luck of the
 * inputs; and at least one algorithm differs from the rank-order reference. */
static void test_inputs_order_sensitive(void **state)
{
    (void)state;
    for (size_t pi = 1; pi < sizeof rank_counts / sizeof rank_counts[0]; pi++) {
        const int p = rank_counts[pi];
        inputs x;
        make_inputs(&x, p, COUNT);
        for (int c = 0; c < NCASES; c++) {
            if (cases[c].op != NCL_SUM)
                continue;
            job jobs[NALGOS - 1];
            for (int a = 0; a < NALGOS - 1; a++) /* the forced ones */
                jobs[a] = (job){cases[c].dt, NCL_SUM, algos[a], 0, COUNT, 0,
                                (const void *const *)x.in[c], {0}};
            run_world(p, 2, 1u << 20, 0, jobs, NALGOS - 1);
            uint64_t pair_diff = 0, ref_diff = 0;
            for (int a = 0; a < NALGOS - 1; a++) {
                uint64_t d = count_diff(jobs[a].out[0], x.ref[c], COUNT, cases[c].dt);
                ref_diff = d > ref_diff ? d : ref_diff;
                for (int b = a + 1; b < NALGOS - 1; b++) {
                    d = count_diff(jobs[a].out[0], jobs[b].out[0], COUNT, cases[c].dt);
                    pair_diff = d > pair_diff ? d : pair_diff;
                }
            }
            print_message("p=%d %s sum, not deterministic: algorithms differ in up to %llu of %d "
                          "elements, from the rank-order reference in up to %llu\n",
                          p, ncl_dtype_name(cases[c].dt), (unsigned long long)pair_diff, COUNT,
                          (unsigned long long)ref_diff);
            assert_true(pair_diff > 0);
            assert_true(ref_diff > 0);
            free_outputs(jobs, NALGOS - 1, p);
        }
        free_inputs(&x, p);
    }
}


/* ---- wide accumulation ------------------------------------------------------------------------ */

/* The wide reference, in plain C: each element's fp32 sum in rank order (x_0 + x_1) + x_2 ...,
 * avg divided by p in fp32, then one round-to-nearest-even into the narrow type. Only the
 * conversions come from the engine (test_dtype checks them against every fp16/bf16 value). */
static void *wide_reference(const void *const *in, int p, ncl_dtype dt, ncl_op op, uint64_t count)
{
    uint16_t *out = malloc(count * 2);
    for (uint64_t i = 0; i < count; i++) {
        float acc = 0;
        for (int r = 0; r < p; r++) {
            uint16_t h;
            memcpy(&h, (const char *)in[r] + 2 * i, 2);
            float x = dt == NCL_FLOAT16 ? ncl_fp16_to_float(h) : ncl_bf16_to_float(h);
            acc = r == 0 ? x : acc + x;
        }
        if (op == NCL_AVG)
            acc = acc / (float)p;
        out[i] = dt == NCL_FLOAT16 ? ncl_float_to_fp16(acc) : ncl_float_to_bf16(acc);
    }
    return out;
}

static const dcase wide_cases[] = {
    {NCL_FLOAT16, NCL_SUM}, {NCL_FLOAT16, NCL_AVG}, {NCL_BFLOAT16, NCL_SUM}, {NCL_BFLOAT16, NCL_AVG}};
enum { NWIDE = sizeof wide_cases / sizeof wide_cases[0], WIDE_COUNT = 1031 };
/* Forced algorithm settings, det itself included: wide det must not care either. */
static const ncl_algo wide_algos[] = {NCL_ALGO_RING, NCL_ALGO_HD,   NCL_ALGO_MESH,
                                      NCL_ALGO_DBTREE, NCL_ALGO_AUTO, NCL_ALGO_DET};
enum { NWALGOS = sizeof wide_algos / sizeof wide_algos[0] };

/* (a) + (b): fp16/bf16 sum/avg, every algorithm setting, 1..4 channels, slices from 8 B (rounds
 * of 4 fp16) to 1 MiB (one gather), in and out of place: every rank's result is the wide
 * reference bit for bit, so all settings agree. 4 x 3 worlds of 48 allreduces. */
static void test_wide_algorithms_channels_slices(void **state)
{
    (void)state;
    static const struct {
        uint32_t channels;
        uint64_t slice;
    } settings[] = {{1, 8}, {2, 96}, {4, 1u << 20}};
    for (size_t pi = 0; pi < sizeof rank_counts / sizeof rank_counts[0]; pi++) {
        const int p = rank_counts[pi];
        void *in[NWIDE][MAX_RANKS], *ref[NWIDE];
        for (int c = 0; c < NWIDE; c++) {
            for (int r = 0; r < p; r++)
                in[c][r] = make_input(wide_cases[c].dt, WIDE_COUNT, (uint64_t)(5000 + 100 * p + 10 * r + c / 2));
            ref[c] = wide_reference((const void *const *)in[c], p, wide_cases[c].dt, wide_cases[c].op, WIDE_COUNT);
        }
        for (size_t si = 0; si < sizeof settings / sizeof settings[0]; si++) {
            job jobs[MAX_JOBS];
            const void *refs[MAX_JOBS];
            int n = 0;
            for (int c = 0; c < NWIDE; c++)
                for (int a = 0; a < NWALGOS; a++)
                    for (int inplace = 0; inplace < 2; inplace++) {
                        jobs[n] = (job){wide_cases[c].dt, wide_cases[c].op, wide_algos[a], inplace, WIDE_COUNT,
                                        0, (const void *const *)in[c], {0}};
                        refs[n++] = ref[c];
                    }
            run_world(p, settings[si].channels, settings[si].slice, WIDE, jobs, n);
            char what[64];
            snprintf(what, sizeof what, "wide, channels %u slice %llu", settings[si].channels,
                     (unsigned long long)settings[si].slice);
            expect_reference(jobs, n, p, refs, what);
            free_outputs(jobs, n, p);
        }
        for (int c = 0; c < NWIDE; c++) {
            for (int r = 0; r < p; r++)
                free(in[c][r]);
            free(ref[c]);
        }
    }
}

/* (a) splits: 1 MiB of fp16 (and bf16) sum in one call (rounds bounded by scratch at 8 ranks)
 * and in calls of 8 B (the first 4 KiB: 512 calls; test_splits runs thousands of narrow ones),
 * 4 KiB and 100000 B (not a multiple of anything): identical bits, equal to the wide reference.
 * The one call takes 3 rounds on 8 ranks (4 MiB scratch / (7 slots x 2 B + 4 B fp32)). */
static void test_wide_splits(void **state)
{
    (void)state;
    static const uint64_t split_bytes[] = {0, 8, 4096, 100000};
    enum { NSPLITS = sizeof split_bytes / sizeof split_bytes[0] };
    static const ncl_dtype dts[] = {NCL_FLOAT16, NCL_BFLOAT16};
    for (size_t pi = 0; pi < sizeof rank_counts / sizeof rank_counts[0]; pi++) {
        const int p = rank_counts[pi];
        for (size_t di = 0; di < 2; di++) {
            const ncl_dtype dt = dts[di];
            const uint64_t count = (1u << 20) / 2;
            void *in[MAX_RANKS];
            for (int r = 0; r < p; r++)
                in[r] = make_input(dt, count, (uint64_t)(9000 + 100 * p + 10 * r + (int)di));
            void *ref = wide_reference((const void *const *)in, p, dt, NCL_SUM, count);
            job jobs[NSPLITS];
            const void *refs[NSPLITS];
            for (int s = 0; s < NSPLITS; s++) {
                uint64_t n = split_bytes[s] == 8 ? (4u << 10) / 2 : count;
                jobs[s] = (job){dt, NCL_SUM, NCL_ALGO_AUTO, s % 2, n, split_bytes[s] / 2,
                                (const void *const *)in, {0}};
                refs[s] = ref;
            }
            run_world(p, 2, 512u << 10, WIDE, jobs, NSPLITS);
            for (int s = 1; s < NSPLITS; s++)
                assert_int_equal(count_diff(jobs[s].out[0], jobs[0].out[0], jobs[s].count, dt), 0);
            expect_reference(jobs, NSPLITS, p, refs, "wide splits");
            free_outputs(jobs, NSPLITS, p);
            free(ref);
            for (int r = 0; r < p; r++)
                free(in[r]);
        }
    }
}

/* (b) the option matters: on the same inputs narrow det (a rounding per step) and wide det
 * differ, narrow det is the narrow rank-order reference, wide det the wide one. And a case built
 * to show it: 1 + 8 x 2^-11 in fp16 stays 1 when rounded after every step (each 2^-11 is half
 * an ulp of 1: ties to even), while the fp32 sum 1.00390625 rounds to 1.00390625. */
static void test_wide_differs_from_narrow(void **state)
{
    (void)state;
    for (size_t pi = 0; pi < sizeof rank_counts / sizeof rank_counts[0]; pi++) {
        const int p = rank_counts[pi];
        for (int c = 0; c < NWIDE; c++) {
            const ncl_dtype dt = wide_cases[c].dt;
            const ncl_op op = wide_cases[c].op;
            void *in[MAX_RANKS];
            for (int r = 0; r < p; r++)
                in[r] = make_input(dt, WIDE_COUNT, (uint64_t)(3000 + 100 * p + 10 * r + c));
            void *nref = reference((const void *const *)in, p, dt, op, WIDE_COUNT);
            void *wref = wide_reference((const void *const *)in, p, dt, op, WIDE_COUNT);
            job narrow = {dt, op, NCL_ALGO_AUTO, 0, WIDE_COUNT, 0, (const void *const *)in, {0}};
            job wide = narrow;
            run_world(p, 2, 512u << 10, 1, &narrow, 1);
            run_world(p, 2, 512u << 10, WIDE, &wide, 1);
            const void *nr = nref, *wr = wref;
            expect_reference(&narrow, 1, p, &nr, "narrow det");
            expect_reference(&wide, 1, p, &wr, "wide det");
            uint64_t d = count_diff(narrow.out[0], wide.out[0], WIDE_COUNT, dt);
            if (c == 0 || c == 2)
                print_message("p=%d %s %s: narrow and wide det differ in %llu of %d elements\n", p,
                              ncl_dtype_name(dt), ncl_op_name(op), (unsigned long long)d, WIDE_COUNT);
            /* p = 2: one addition, rounded once either way (and /2 is exact): they must agree */
            if (p > 2)
                assert_true(d > 0);
            else
                assert_int_equal(d, 0);
            free_outputs(&narrow, 1, p);
            free_outputs(&wide, 1, p);
            free(nref);
            free(wref);
            for (int r = 0; r < p; r++)
                free(in[r]);
        }
    }
    /* the constructed case on 8 ranks: rank 0 holds 1.0, ranks 1..7 hold 2^-11 (and 2^-12 in
     * the second element, whose fp32 sum 1 + 7 * 2^-12 rounds to 1 + 2^-10) */
    enum { P = 8 };
    uint16_t in16[P][2];
    const void *ins[P];
    for (int r = 0; r < P; r++) {
        in16[r][0] = r == 0 ? 0x3c00u : 0x1000u; /* 1.0, 2^-11 */
        in16[r][1] = r == 0 ? 0x3c00u : 0x0c00u; /* 1.0, 2^-12 */
        ins[r] = in16[r];
    }
    job narrow = {NCL_FLOAT16, NCL_SUM, NCL_ALGO_AUTO, 0, 2, 0, ins, {0}};
    job wide = narrow;
    run_world(P, 1, 512u << 10, 1, &narrow, 1);
    run_world(P, 1, 512u << 10, WIDE, &wide, 1);
    for (int r = 0; r < P; r++) {
        const uint16_t *n = narrow.out[r], *w = wide.out[r];
        assert_int_equal(n[0], 0x3c00u); /* 1.0: every step rounds the 2^-11 away */
        assert_int_equal(n[1], 0x3c00u);
        assert_int_equal(w[0], 0x3c04u); /* 1 + 7 * 2^-11 = 1.00341..., nearest fp16 1 + 2^-8 */
        assert_int_equal(w[1], 0x3c02u); /* 1 + 7 * 2^-12 = 1.00171..., nearest fp16 1 + 2^-9 */
    }
    free_outputs(&narrow, 1, P);
    free_outputs(&wide, 1, P);
}

/* Runs one rank's communicator creation with these options; returns its result. */
static ncl_result create_fn(ncl_comm *comm, void *arg)
{
    (void)comm;
    (void)arg;
    return NCL_SUCCESS;
}

/* (d) the documented behaviour: wide_accumulation without deterministic is refused at
 * creation (NCL_ERR_INVALID_ARGUMENT); with other dtypes (fp32, int32) and with max/min of
 * fp16/bf16 it changes nothing: the same bits as narrow det. */
static void test_wide_option_rules(void **state)
{
    (void)state;
    ncl_host_config cfg = NCL_HOST_CONFIG_INIT;
    cfg.nranks = 2;
    cfg.comm.wide_accumulation = 1;
    assert_int_equal(ncl_host_run_cfg(&cfg, create_fn, NULL, NULL), NCL_ERR_INVALID_ARGUMENT);

    enum { P = 5 };
    static const dcase same[] = {{NCL_FLOAT32, NCL_SUM}, {NCL_FLOAT32, NCL_AVG}, {NCL_INT32, NCL_SUM},
                                 {NCL_FLOAT16, NCL_MAX}, {NCL_BFLOAT16, NCL_MIN}};
    enum { NSAME = sizeof same / sizeof same[0] };
    void *in[NSAME][P];
    job narrow[NSAME], wide[NSAME];
    for (int c = 0; c < NSAME; c++) {
        ncl_dtype gen = same[c].dt == NCL_INT32 ? NCL_FLOAT32 : same[c].dt; /* any bits do for int32 */
        for (int r = 0; r < P; r++)
            in[c][r] = make_input(gen, WIDE_COUNT, (uint64_t)(800 + 10 * r + c));
        narrow[c] = (job){same[c].dt, same[c].op, NCL_ALGO_AUTO, c % 2, WIDE_COUNT, 0,
                          (const void *const *)in[c], {0}};
        wide[c] = narrow[c];
    }
    run_world(P, 2, 512u << 10, 1, narrow, NSAME);
    run_world(P, 2, 512u << 10, WIDE, wide, NSAME);
    for (int c = 0; c < NSAME; c++) {
        for (int r = 0; r < P; r++)
            assert_int_equal(count_diff(narrow[c].out[r], wide[c].out[r], WIDE_COUNT, same[c].dt), 0);
        for (int r = 0; r < P; r++)
            free(in[c][r]);
    }
    free_outputs(narrow, NSAME, P);
    free_outputs(wide, NSAME, P);
}

/* `test_determinism wide` runs the long wide-accumulation sweeps (a CTest of their own, outside
 * the firmware label: under ASan with the checker on every launch they take ~20 s); without
 * it the narrow tests and the short wide ones run (argv[1], if given, filters them). */
int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_algorithms_channels_slices),
        cmocka_unit_test(test_splits),
        cmocka_unit_test(test_inputs_order_sensitive),
        cmocka_unit_test(test_wide_differs_from_narrow),
        cmocka_unit_test(test_wide_option_rules),
    };
    const struct CMUnitTest wide[] = {
        cmocka_unit_test(test_wide_algorithms_channels_slices),
        cmocka_unit_test(test_wide_splits),
    };
    if (argc > 1 && strcmp(argv[1], "wide") == 0)
        return cmocka_run_group_tests(wide, NULL, NULL);
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
