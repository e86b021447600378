/* rs_bench.c — checks and times one collective over a size sweep on host ranks (nccl-tests' loop). */
#define _POSIX_C_SOURCE 200809L
#include "rs_bench.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ncl/ncl_host.h"
#include "ncl/ncl_sched.h"
#include "sweep/rs_shape.h"

/* A sweep longer than this is a typo (e.g. -i 1 with a large -e), not a benchmark. */
#define RS_MAX_SIZES 100000

/* One row to run: its shape on every rank and what the engine will do with it. */
typedef struct rs_rowspec {
    rs_shape shape;
    ncl_algo algo;
    double memcpy_gbps;
} rs_rowspec;

/* Shared by every rank thread of one table. */
typedef struct rs_bench {
    const rs_sweep *o;
    rs_coll coll;
    int nranks;
    rs_rowspec *rows;
    size_t nrows;
    uint64_t a_max, b_max, expected_max;       /* bytes (rs_shape_place's a and b) */
    unsigned char *expected;                   /* the reference result, computed in slices */
    double *times;                             /* [placement * nranks + rank], microseconds */
    uint64_t *wrong;                           /* [placement * nranks + rank] */
    atomic_int failed;                         /* any rank failed: all stop at the next sync */
    atomic_int engine_error, alloc_error;
    rs_report *rep;
    FILE *err;
} rs_bench;

static const char *const rs_place_names[2] = {"out-of-place", "in-place"};

static double rs_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* The algorithm the engine will pick for a row (the forced one, or AUTO's choice). */
static ncl_algo rs_row_algo(const rs_sweep *o, const ncl_host_config *hc, rs_coll coll, ncl_algo forced,
                            const rs_rowspec *r)
{
    if (coll == RS_COLL_SENDRECV)
        return NCL_ALGO_CHAIN; /* what each pair's communicator runs (ncl_send) */
    if (forced != NCL_ALGO_AUTO)
        return forced;
    ncl_plan plan;
    ncl_plan_env env;
    ncl_hal_caps caps;
    ncl_host_caps(hc, &caps);
    ncl_plan_env_init(&env, &hc->comm, &caps);
    const rs_shape *sh = &r->shape;
    ncl_result rc = ncl_plan_make(&plan, rs_coll_engine(coll), NCL_ALGO_AUTO, o->nranks, 0, sh->root,
                                  rs_shape_plan_count(sh), sh->dt,
                                  rs_shape_reduces(coll) ? sh->op : NCL_SUM, 0, &env);
    return rc == NCL_SUCCESS ? (ncl_algo)plan.algo : NCL_ALGO_AUTO;
}

static void rs_engine_error(rs_bench *b, ncl_comm *comm, int rank, const rs_rowspec *r, const char *phase,
                            int inplace, ncl_result rc)
{
    const char *detail = ncl_comm_last_error(comm);
    /* the communicator's detail names what failed; ncl_strerror says what to do about it */
    fprintf(b->err, "ringsim: rank %d: %s %s (%s, %llu B %s %s): %s%s%s\n", rank, rs_coll_name(b->coll),
            rs_place_names[inplace], phase, (unsigned long long)r->shape.size, ncl_dtype_name(r->shape.dt),
            rs_shape_reduces(b->coll) ? ncl_op_name(r->shape.op) : "none", detail && *detail ? detail : "",
            detail && *detail ? " -- " : "", ncl_strerror(rc));
    atomic_store(&b->engine_error, 1);
    atomic_store(&b->failed, 1);
}

/* A barrier that also agrees on failure: the flag is read between two barriers, so every rank
 * sees the same value and they all stop at the same point (none is left waiting). */
static int rs_sync(rs_bench *b, ncl_comm *comm)
{
    if (ncl_host_barrier(comm) != NCL_SUCCESS) {
        atomic_store(&b->failed, 1);
        return 0;
    }
    int ok = !atomic_load(&b->failed);
    if (ncl_host_barrier(comm) != NCL_SUCCESS) {
        atomic_store(&b->failed, 1);
        return 0;
    }
    return ok;
}

static void rs_emit_row(rs_bench *b, const rs_rowspec *r)
{
    rs_row row;
    memset(&row, 0, sizeof row);
    row.coll = b->coll;
    row.dtype = r->shape.dt;
    row.has_op = rs_shape_reduces(b->coll);
    row.op = row.has_op ? r->shape.op : NCL_SUM;
    row.root = rs_shape_rooted(b->coll) ? r->shape.root : -1;
    row.size = r->shape.size;
    row.count = r->shape.count;
    row.algo = r->algo;
    row.memcpy_gbps = r->memcpy_gbps;
    double factor = rs_report_bus_factor(b->coll, b->nranks);
    for (int pl = 0; pl < 2; pl++) {
        double t = 0;
        uint64_t w = 0;
        for (int k = 0; k < b->nranks; k++) {
            double tk = b->times[pl * b->nranks + k];
            if (tk > t)
                t = tk;
            w += b->wrong[pl * b->nranks + k];
        }
        row.res[pl].time_us = t;
        row.res[pl].algbw = t > 0 ? (double)r->shape.size / t / 1e3 : 0.0; /* bytes/us/1e3 = GB/s */
        row.res[pl].busbw = row.res[pl].algbw * factor;
        row.res[pl].wrong = w;
    }
    if (r->shape.sendrecv)
        row.res[1].time_us = -1; /* out of place only */
    rs_report_row(b->rep, &row);
}

static unsigned char *rs_alloc(uint64_t bytes)
{
    uint64_t n = (bytes + 63) / 64 * 64;
    if (n == 0)
        n = 64;
    if (n > SIZE_MAX)
        return NULL;
    unsigned char *p = aligned_alloc(64, (size_t)n);
    if (p)
        memset(p, 0, (size_t)n); /* first touch here, not inside a timed loop */
    return p;
}

/* One rank: for every row, check out of place then in place, then time both. */
static ncl_result rs_rank_main(ncl_comm *comm, void *arg)
{
    rs_bench *b = arg;
    const rs_sweep *o = b->o;
    int rank = 0;
    ncl_comm_rank(comm, &rank);
    unsigned char *A = rs_alloc(b->a_max), *B = rs_alloc(b->b_max);
    if (A == NULL || B == NULL) {
        fprintf(b->err, "ringsim: rank %d: cannot allocate %llu + %llu bytes of buffers: %s (try a smaller -e "
                        "or fewer --ranks)\n", rank, (unsigned long long)b->a_max,
                (unsigned long long)b->b_max, strerror(ENOMEM));
        atomic_store(&b->alloc_error, 1);
        atomic_store(&b->failed, 1);
    }
    if (!rs_sync(b, comm))
        goto out;
    for (size_t i = 0; i < b->nrows; i++) {
        const rs_rowspec *r = &b->rows[i];
        const void *sb;
        void *rb;
        ncl_result rc = NCL_SUCCESS;
        const rs_shape *sh = &r->shape;
        if (o->check) {
            /* ranks compute disjoint slices of the reference result in parallel */
            uint64_t E = sh->result_elems, p = (uint64_t)b->nranks;
            uint64_t lo = E * (uint64_t)rank / p, hi = E * ((uint64_t)rank + 1) / p;
            rs_shape_expected(sh, o->seed, lo, hi, b->expected + lo * sh->es);
            if (!rs_sync(b, comm))
                goto out;
            for (int pl = 0; pl < 2 - sh->sendrecv; pl++) { /* sendrecv: out of place only */
                rs_shape_place(sh, rank, A, B, pl, &sb, &rb);
                rs_shape_prepare(sh, rank, o->seed, sb, rb);
                rc = rs_shape_call(sh, sb, rb, comm);
                if (rc != NCL_SUCCESS) {
                    rs_engine_error(b, comm, rank, r, "check", pl, rc);
                    break;
                }
                b->wrong[pl * b->nranks + rank] = rs_shape_count_wrong(sh, rank, rb, b->expected);
            }
            if (!rs_sync(b, comm))
                goto out;
        }
        for (int pl = 0; pl < 2 - sh->sendrecv; pl++) {
            rs_shape_place(sh, rank, A, B, pl, &sb, &rb);
            for (int it = 0; it < o->warmup_iters && rc == NCL_SUCCESS; it++)
                rc = rs_shape_call(sh, sb, rb, comm);
            if (rc != NCL_SUCCESS)
                rs_engine_error(b, comm, rank, r, "warm-up", pl, rc);
            if (!rs_sync(b, comm))
                goto out;
            double t0 = rs_now_us();
            for (int it = 0; it < o->iters && rc == NCL_SUCCESS; it++)
                rc = rs_shape_call(sh, sb, rb, comm);
            double t1 = rs_now_us();
            if (rc != NCL_SUCCESS)
                rs_engine_error(b, comm, rank, r, "timed loop", pl, rc);
            b->times[pl * b->nranks + rank] = (t1 - t0) / o->iters;
        }
        if (!rs_sync(b, comm))
            goto out;
        if (rank == 0)
            rs_emit_row(b, r);
    }
out:
    free(A);
    free(B);
    return atomic_load(&b->engine_error) ? NCL_ERR_REMOTE : NCL_SUCCESS;
}

/* Rows in nccl-tests' order: per datatype, per op, the size sweep. */
static int rs_plan_rows(rs_bench *b, const ncl_host_config *hc, ncl_algo forced, FILE *err)
{
    const rs_sweep *o = b->o;
    uint64_t *sizes = NULL;
    size_t nsizes = 0;
    char why[300];
    if (rs_sweep_sizes(o, RS_MAX_SIZES, &sizes, &nsizes, why, sizeof why) != 0) {
        fprintf(err, "ringsim: %s\n", why);
        return -1;
    }
    int nops = rs_shape_reduces(b->coll) ? o->nops : 1;
    size_t cap = nsizes * (size_t)o->ndtypes * (size_t)nops;
    b->rows = calloc(cap ? cap : 1, sizeof *b->rows);
    if (b->rows == NULL) {
        fprintf(err, "ringsim: cannot allocate the list of rows: %s\n", strerror(ENOMEM));
        free(sizes);
        return -1;
    }
    for (int d = 0; d < o->ndtypes; d++) {
        for (int k = 0; k < nops; k++) {
            for (size_t s = 0; s < nsizes; s++) {
                rs_rowspec *r = &b->rows[b->nrows];
                memset(r, 0, sizeof *r);
                rs_shape *sh = &r->shape;
                if (!rs_shape_make(sh, b->coll, b->nranks, o->dtypes[d], o->ops[k], o->root, o->a2av_skew, sizes[s]))
                    continue;
                if (rs_shape_a_bytes(sh) > b->a_max)
                    b->a_max = rs_shape_a_bytes(sh);
                if (rs_shape_b_bytes(sh) > b->b_max)
                    b->b_max = rs_shape_b_bytes(sh);
                if (sh->result_elems * sh->es > b->expected_max)
                    b->expected_max = sh->result_elems * sh->es;
                r->algo = rs_row_algo(o, hc, b->coll, forced, r);
                r->memcpy_gbps = -1;
                b->nrows++;
            }
        }
    }
    free(sizes);
    return 0;
}

static int rs_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The memcpy bandwidth of every row's size, measured once per distinct size. */
static void rs_probe_rows(rs_bench *b, rs_memprobe *probe)
{
    uint64_t *sizes = malloc((b->nrows ? b->nrows : 1) * sizeof *sizes);
    double *gbps = malloc((b->nrows ? b->nrows : 1) * sizeof *gbps);
    if (sizes == NULL || gbps == NULL) {
        free(sizes);
        free(gbps);
        return; /* rows keep -1: printed as "-" */
    }
    size_t n = 0;
    for (size_t i = 0; i < b->nrows; i++)
        sizes[i] = b->rows[i].shape.size;
    qsort(sizes, b->nrows, sizeof *sizes, rs_cmp_u64);
    for (size_t i = 0; i < b->nrows; i++)
        if (n == 0 || sizes[n - 1] != sizes[i])
            sizes[n++] = sizes[i];
    for (size_t k = 0; k < n; k++)
        gbps[k] = rs_memprobe_gbps(probe, (size_t)sizes[k]);
    for (size_t i = 0; i < b->nrows; i++) {
        const uint64_t *hit = bsearch(&b->rows[i].shape.size, sizes, n, sizeof *sizes, rs_cmp_u64);
        b->rows[i].memcpy_gbps = hit ? gbps[hit - sizes] : -1.0;
    }
    free(sizes);
    free(gbps);
}

/* "ring", or for auto the algorithms it picks over the sweep: "auto (tree, chain)". */
static void rs_algo_desc(const rs_bench *b, ncl_algo forced, char *buf, size_t len)
{
    const rs_sweep *o = b->o;
    if (forced != NCL_ALGO_AUTO) {
        snprintf(buf, len, "%s", ncl_algo_name(forced));
        return;
    }
    char picks[64] = "";
    int seen[NCL_ALGO_COUNT] = {0};
    size_t n = 0;
    for (size_t i = 0; i < b->nrows && n < sizeof picks; i++) {
        ncl_algo a = b->rows[i].algo;
        if ((unsigned)a >= NCL_ALGO_COUNT || a == NCL_ALGO_AUTO || seen[a])
            continue;
        seen[a] = 1;
        n += (size_t)snprintf(picks + n, sizeof picks - n, "%s%s", n ? ", " : "", ncl_algo_name(a));
    }
    if (o->algo != NCL_ALGO_AUTO)
        snprintf(buf, len, "auto (%s%s--algo %s does not implement %s)", picks, n ? "; " : "",
                 ncl_algo_name(o->algo), rs_coll_name(b->coll));
    else if (n)
        snprintf(buf, len, "auto (%s)", picks);
    else
        snprintf(buf, len, "auto");
}

int rs_bench_run(const rs_sweep *o, rs_coll coll, rs_report *rep, rs_memprobe *probe, FILE *err)
{
    rs_bench b;
    memset(&b, 0, sizeof b);
    b.o = o;
    b.coll = coll;
    b.nranks = o->nranks;
    b.rep = rep;
    b.err = err;
    atomic_init(&b.failed, 0);
    atomic_init(&b.engine_error, 0);
    atomic_init(&b.alloc_error, 0);

    ncl_host_config hc = NCL_HOST_CONFIG_INIT;
    hc.nranks = o->nranks;
    hc.comm.channels = o->channels;
    if (o->timeout_s > 0)
        hc.comm.timeout_ns = (uint64_t)(o->timeout_s * 1e9);
    hc.comm.deterministic = (uint8_t)o->deterministic;
    hc.comm.wide_accumulation = (uint8_t)o->wide_accumulation;
    const ncl_coll engine = rs_coll_engine(coll);
    ncl_algo forced = (o->algo != NCL_ALGO_AUTO && ncl_algo_supported(engine, o->algo)) ? o->algo : NCL_ALGO_AUTO;
    hc.comm.algorithm[engine] = (uint8_t)forced;

    int status = RS_EXIT_OK;
    if (rs_plan_rows(&b, &hc, forced, err) != 0) {
        free(b.rows);
        return RS_EXIT_USAGE;
    }
    /* Linux overcommits: a run bigger than the machine would be killed while touching its
     * buffers instead of failing an allocation, so refuse it up front. */
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    double need = (double)b.nranks * ((double)b.a_max + (double)b.b_max + (double)hc.scratch_bytes) +
                  (o->check ? (double)b.expected_max : 0.0) + (probe ? 2.0 * (double)o->maxbytes : 0.0);
    if (pages > 0 && page > 0 && need > 0.8 * (double)pages * (double)page) {
        fprintf(err, "ringsim: -e: %llu B on %d ranks needs about %.0f MiB of buffers, more than 80%% of this "
                     "machine's %.0f MiB (allowed: a smaller -e or fewer --ranks)\n",
                (unsigned long long)o->maxbytes, b.nranks, need / 1048576.0,
                (double)pages * (double)page / 1048576.0);
        free(b.rows);
        return RS_EXIT_USAGE;
    }
    if (probe)
        rs_probe_rows(&b, probe);
    char desc[160];
    rs_algo_desc(&b, forced, desc, sizeof desc);
    rs_report_table_begin(rep, coll, desc);

    b.times = calloc((size_t)b.nranks * 2, sizeof *b.times);
    b.wrong = calloc((size_t)b.nranks * 2, sizeof *b.wrong);
    b.expected = o->check ? (unsigned char *)aligned_alloc(64, (size_t)((b.expected_max + 63) / 64 * 64 + 64)) : NULL;
    if (b.times == NULL || b.wrong == NULL || (o->check && b.expected == NULL)) {
        fprintf(err, "ringsim: cannot allocate %llu bytes for the expected results: %s (try a smaller -e)\n",
                (unsigned long long)b.expected_max, strerror(ENOMEM));
        status = RS_EXIT_USAGE;
        goto out;
    }

    ncl_result rc = ncl_host_run_cfg(&hc, rs_rank_main, &b, NULL);
    uint64_t wrong = rs_report_table_end(rep, rc != NCL_SUCCESS || atomic_load(&b.failed));
    if (atomic_load(&b.engine_error)) {
        rs_report_set_error(rep, "engine error (see stderr)");
        status = RS_EXIT_ENGINE;
    } else if (atomic_load(&b.alloc_error)) {
        rs_report_set_error(rep, "out of memory");
        status = RS_EXIT_USAGE;
    } else if (rc != NCL_SUCCESS || atomic_load(&b.failed)) {
        fprintf(err, "ringsim: host backend on %d ranks: %s\n", o->nranks, ncl_strerror(rc));
        rs_report_set_error(rep, ncl_strerror(rc));
        status = RS_EXIT_ENGINE;
    } else if (wrong) {
        status = RS_EXIT_WRONG;
    }
out:
    free(b.rows);
    free(b.times);
    free(b.wrong);
    free(b.expected);
    return status;
}

int rs_host_run(const rs_sweep *s, rs_report *rep, FILE *err)
{
    rs_memprobe *probe = s->memprobe ? rs_memprobe_create((size_t)s->maxbytes) : NULL;
    if (s->memprobe && probe == NULL) {
        fprintf(err, "ringsim: out of memory\n");
        return RS_EXIT_USAGE;
    }
    int status = RS_EXIT_OK;
    for (int i = 0; i < s->ncolls; i++) {
        int st = rs_bench_run(s, s->colls[i], rep, probe, err);
        if (st > status)
            status = st;
        if (st == RS_EXIT_ENGINE || st == RS_EXIT_USAGE)
            break; /* the engine or the machine is in trouble: later tables would only repeat it */
    }
    rs_memprobe_destroy(probe);
    return status;
}
