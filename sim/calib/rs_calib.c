/* rs_calib.c — measured rows predicted on a machine scenario (one child process per simulated sweep), their errors and summaries. */
#define _POSIX_C_SOURCE 200809L
#include "calib/rs_calib.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "harness/rs_simrun.h"
#include "report/rs_plot.h"
#include "ncl/ncl_names.h"
#include "scenario/rs_scenario.h"
#include "sweep/rs_shape.h"

/* The engine's collective for a measured one; -1 where the engine has none yet. */
static int calib_coll(rs_meas_coll k)
{
    switch (k) {
    case RS_MEAS_COLL_ALLREDUCE: return NCL_COLL_ALLREDUCE;
    case RS_MEAS_COLL_BROADCAST: return NCL_COLL_BROADCAST;
    case RS_MEAS_COLL_REDUCE: return NCL_COLL_REDUCE;
    case RS_MEAS_COLL_REDUCE_SCATTER: return NCL_COLL_REDUCE_SCATTER;
    case RS_MEAS_COLL_ALLGATHER: return NCL_COLL_ALLGATHER;
    case RS_MEAS_COLL_ALLTOALL: return NCL_COLL_ALLTOALL;
    default: return -1;
    }
}

/* One simulated sweep: a collective, dtype, op and root over sizes from begin to end, times factor
 * or plus step (step > 0) each time. */
typedef struct rs_calib_job {
    ncl_coll coll;
    ncl_dtype dtype;
    ncl_op op;
    int root;
    int iters, warmup; /* the measurement's, where its file says (capped), else 1 and 1 */
    uint64_t begin, end, step;
    uint32_t factor;
} calib_job;

/* What a row asks to simulate (sizes aside). 0, or -1 with why. */
static int calib_job_of(const rs_meas_table *t, const rs_meas_row *r, calib_job *j, char *why, size_t len)
{
    memset(j, 0, sizeof *j);
    int k = calib_coll(r->coll);
    if (k < 0) {
        snprintf(why, len, "%s: the engine has no %s yet (allowed: allreduce, broadcast, reduce, reduce_scatter, "
                 "allgather, alltoall)", t->name, rs_meas_coll_name(r->coll));
        return -1;
    }
    j->coll = (ncl_coll)k;
    /* a file that names no dtype (OSU without -T): what OSU moves, floats where it reduces, else bytes */
    int reduces = k == NCL_COLL_ALLREDUCE || k == NCL_COLL_REDUCE || k == NCL_COLL_REDUCE_SCATTER;
    j->dtype = reduces ? NCL_FLOAT32 : NCL_INT8;
    if (r->dtype[0] && ncl_dtype_parse(r->dtype, &j->dtype) != 0) {
        snprintf(why, len, "%s:%d: dtype '%s' is not one the engine reduces (allowed: int8, uint8, int32, uint32, "
                 "int64, uint64, half, bfloat16, float, double)", t->name, r->line, r->dtype);
        return -1;
    }
    j->op = NCL_SUM;
    if (r->op[0] && strcmp(r->op, "none") != 0 && ncl_op_parse(r->op, &j->op) != 0) {
        snprintf(why, len, "%s:%d: redop '%s' is not one the engine has (allowed: sum, prod, max, min, avg)", t->name,
                 r->line, r->op);
        return -1;
    }
    j->root = r->root > 0 ? r->root : 0;
    /* as measured: the first calls of a collective are not its steady state (landing zones'
     * credits, the READY of a cold ring); more than 20 + 5 changes nothing but the cost */
    j->iters = t->iters > 0 ? (t->iters < 20 ? t->iters : 20) : 1;
    j->warmup = t->warmup_iters >= 0 && t->iters > 0 ? (t->warmup_iters < 5 ? t->warmup_iters : 5) : 1;
    return 0;
}

static int calib_same_kind(const calib_job *a, const calib_job *b)
{
    return a->coll == b->coll && a->dtype == b->dtype && a->op == b->op && a->root == b->root &&
           a->iters == b->iters && a->warmup == b->warmup;
}

/* ---- the child: one sweep on the model ------------------------------------------------------- */

static void calib_on_row(void *ud, const rs_row *row)
{
    fprintf((FILE *)ud, "%llu %.17g %.17g\n", (unsigned long long)row->size, row->res[0].time_us, row->res[1].time_us);
}

/* In the child: the machine with its workload replaced by the job, timing only; rows to `to`. */
static int calib_child(const rs_scenario *machine, const calib_job *j, FILE *to)
{
    rs_scenario sc = *machine; /* the child's own copy: nothing goes back */
    rs_workload *w = &sc.workload;
    w->colls[0] = j->coll;
    w->colls_count = 1;
    w->dtype = j->dtype;
    w->op = j->op;
    w->root = j->root;
    w->begin_bytes = j->begin;
    w->end_bytes = j->end;
    w->factor = j->factor;
    w->step_bytes = j->step;
    w->iters = j->iters;
    w->warmup = j->warmup;
    memset(&w->training, 0, sizeof w->training);
    sc.payload_real = 0;
    FILE *quiet = fopen("/dev/null", "w");
    if (!quiet)
        return RS_EXIT_USAGE;
    rs_sweep o;
    rs_simrun_sweep(&sc, &o);
    rs_report *rep = rs_report_create(&o, quiet, 0);
    rs_simrun_extras x;
    memset(&x, 0, sizeof x);
    x.on_row = calib_on_row;
    x.row_ud = to;
    int st = rep ? rs_simrun(&sc, rep, &x, stderr) : RS_EXIT_USAGE;
    rs_report_destroy(rep);
    fclose(quiet);
    return st;
}

/* One child simulating one sweep of a job: where its rows go. */
typedef struct calib_child_run {
    pid_t pid;
    FILE *rows; /* the child's output */
    int ji;
    calib_job j;
} calib_child_run;

static int calib_start(const rs_scenario *sc, const calib_job *j, int ji, calib_child_run *run, FILE *err)
{
    run->rows = tmpfile();
    if (!run->rows) {
        fprintf(err, "ringsim: compare: cannot create a temporary file: %s\n", strerror(errno));
        return RS_EXIT_USAGE;
    }
    run->ji = ji;
    run->j = *j;
    fflush(NULL);
    run->pid = fork();
    if (run->pid == 0) {
        if (freopen("/dev/null", "w", stdout) == NULL) /* the run's own lines (rings found, ...) */
            _exit(RS_EXIT_USAGE);
        int st = calib_child(sc, j, run->rows);
        fflush(NULL);
        _exit(st);
    }
    if (run->pid < 0) {
        fprintf(err, "ringsim: compare: cannot run the simulation: %s\n", strerror(errno));
        fclose(run->rows);
        return RS_EXIT_USAGE;
    }
    return RS_EXIT_OK;
}

/* Waits for one of the children; its rows' times go to the rows of c that asked for them. */
static int calib_finish(calib_child_run *runs, int *nrun, rs_calib *c, int only_fit, FILE *err)
{
    int st = 0, k = *nrun;
    while (k == *nrun) {
        pid_t pid = wait(&st);
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid < 0) { /* no child left to wait for: their rows are lost */
            fprintf(err, "ringsim: compare: cannot run the simulation: %s\n", strerror(errno));
            for (k = 0; k < *nrun; k++)
                fclose(runs[k].rows);
            *nrun = 0;
            return RS_EXIT_USAGE;
        }
        for (k = 0; k < *nrun && runs[k].pid != pid; k++)
            ;
    }
    calib_child_run run = runs[k];
    runs[k] = runs[--*nrun];
    int status = WIFEXITED(st) ? WEXITSTATUS(st) : RS_EXIT_ENGINE;
    if (status != RS_EXIT_OK) {
        const calib_job *j = &run.j;
        fprintf(err, "ringsim: compare: simulating %s %s %s root %d, %llu..%llu B, failed (exit status %d%s)\n",
                ncl_coll_name(j->coll), ncl_dtype_name(j->dtype), ncl_op_name(j->op), j->root,
                (unsigned long long)j->begin, (unsigned long long)j->end, status,
                WIFSIGNALED(st) ? ", killed by a signal" : "");
        fclose(run.rows);
        return status;
    }
    rewind(run.rows);
    unsigned long long size;
    double t[2];
    while (fscanf(run.rows, "%llu %lg %lg", &size, &t[0], &t[1]) == 3)
        for (size_t i = 0; i < c->n; i++)
            if (c->job_of[i] == run.ji && c->rows[i].m->nccl_bytes == size && !(only_fit && c->rows[i].held_out))
                c->rows[i].predicted_us = t[c->rows[i].place == RS_MEAS_PLACE_IN];
    fclose(run.rows);
    c->runs++;
    return RS_EXIT_OK;
}

int rs_calib_read(const rs_scenario *sc, const char *const *files, int n, const rs_meas_opts *opts,
                  rs_meas_table *tables, FILE *err)
{
    int status = RS_EXIT_OK;
    for (int i = 0; i < n; i++) {
        char msg[RS_MEAS_ERRLEN];
        rs_meas_opts o = *opts;
        int rc = rs_meas_read(files[i], &o, &tables[i], msg, sizeof msg);
        if (rc == 0 && tables[i].ranks == 0 && !o.ranks) {
            /* a file without its rank count is the machine's: read again with it */
            rs_meas_free(&tables[i]);
            o.ranks = (int)sc->topo.nranks;
            rc = rs_meas_read(files[i], &o, &tables[i], msg, sizeof msg);
            if (rc == 0)
                snprintf(tables[i].ranks_from, sizeof tables[i].ranks_from, "the scenario's");
        }
        if (rc != 0) {
            fprintf(err, "%s\n", msg);
            status = RS_EXIT_USAGE;
            memset(&tables[i], 0, sizeof tables[i]);
            continue;
        }
    }
    if (status != RS_EXIT_OK) /* the refused ones are zeroed */
        for (int i = 0; i < n; i++)
            rs_meas_free(&tables[i]);
    return status;
}

/* How many of the sorted, distinct sizes s[0..n) from the first one sweep covers, and that sweep in
 * *j: the longer of the geometric run (a factor as workload.sizes allows) and the arithmetic one
 * (a step), as nccl-tests sweeps are (-f, or -f 0 -i). */
static size_t calib_run(const uint64_t *s, size_t n, calib_job *j)
{
    j->begin = j->end = s[0], j->factor = 2, j->step = 0;
    if (n == 1)
        return 1;
    size_t geo = 1, lin = 2;
    uint64_t f = s[1] % s[0] ? 0 : s[1] / s[0];
    if (f >= 2 && f <= 1024)
        while (geo < n && s[geo] % s[geo - 1] == 0 && s[geo] / s[geo - 1] == f)
            geo++;
    while (lin < n && lin < RS_MAX_SIZES && s[lin] - s[lin - 1] == s[1] - s[0])
        lin++;
    if (geo >= lin) {
        j->end = s[geo - 1], j->factor = (uint32_t)f;
        return geo;
    }
    j->end = s[lin - 1], j->step = s[1] - s[0];
    return lin;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int rs_calib_rows(const rs_scenario *sc, const rs_meas_table *const *tables, size_t ntables, rs_calib *out,
                  FILE *err)
{
    memset(out, 0, sizeof *out);
    char summary[256];
    rs_scenario_summary(sc, summary, sizeof summary);
    snprintf(out->machine, sizeof out->machine, "%s: %s", sc->name ? sc->name : sc->path, summary);
    int ranks = (int)sc->topo.nranks;
    size_t total = 0;
    for (size_t k = 0; k < ntables; k++)
        total += tables[k]->nrows;
    out->rows = calloc(total ? total : 1, sizeof *out->rows);
    out->jobs = calloc(total ? total : 1, sizeof *out->jobs);
    out->job_of = calloc(total ? total : 1, sizeof *out->job_of);
    if (!out->rows || !out->jobs || !out->job_of) {
        fprintf(err, "ringsim: compare: out of memory for %zu rows\n", total);
        rs_calib_free(out);
        return RS_EXIT_USAGE;
    }
    /* every row first: a table that cannot be compared is refused before anything runs */
    char why[400];
    for (size_t k = 0; k < ntables; k++) {
        const rs_meas_table *t = tables[k];
        if (t->ranks && t->ranks != ranks) {
            fprintf(err, "ringsim: compare: %s: %d ranks (%s), the scenario %d (allowed: a machine scenario of "
                    "the measured rank count)\n", t->name, t->ranks, t->ranks_from, ranks);
            rs_calib_free(out);
            return RS_EXIT_USAGE;
        }
        for (size_t i = 0; i < t->nrows; i++) {
            const rs_meas_row *r = &t->rows[i];
            calib_job j;
            if (calib_job_of(t, r, &j, why, sizeof why) != 0) {
                fprintf(err, "ringsim: compare: %s\n", why);
                rs_calib_free(out);
                return RS_EXIT_USAGE;
            }
            rs_calib_row *cr = &out->rows[out->n];
            cr->table = t;
            cr->m = r;
            cr->place = r->place == RS_MEAS_PLACE_IN ? RS_MEAS_PLACE_IN : RS_MEAS_PLACE_OUT;
            cr->predicted_us = cr->error = NAN;
            /* what the engine cannot be asked: an empty buffer, a part of an element (of each rank's) */
            uint64_t unit = ncl_dtype_size(j.dtype) * (rs_shape_per_rank(j.coll) ? (uint64_t)ranks : 1);
            if (r->nccl_bytes == 0)
                cr->why_not = "0 B: nothing to simulate";
            else if (r->nccl_bytes % unit)
                cr->why_not = "not a whole number of elements (of each rank's)";
            int ji = 0;
            while (ji < out->njobs && !calib_same_kind(&out->jobs[ji], &j))
                ji++;
            if (ji == out->njobs)
                out->jobs[out->njobs++] = j;
            out->job_of[out->n++] = ji;
        }
    }
    return RS_EXIT_OK;
}

size_t rs_calib_job_sizes(const rs_calib *c, int ji, int fitted_only, uint64_t *sizes)
{
    size_t ns = 0;
    for (size_t i = 0; i < c->n; i++)
        if (c->job_of[i] == ji && !c->rows[i].why_not && !(fitted_only && c->rows[i].held_out))
            sizes[ns++] = c->rows[i].m->nccl_bytes;
    qsort(sizes, ns, sizeof *sizes, cmp_u64);
    size_t d = 0;
    for (size_t i = 0; i < ns; i++)
        if (d == 0 || sizes[i] != sizes[d - 1])
            sizes[d++] = sizes[i];
    return d;
}

/* The simulations a job needs: its sizes cut into geometric and arithmetic runs, a sweep each.
 * Appends them to todo (room for every row) and returns how many. */
static int calib_plan_job(const rs_calib *c, int ji, int only_fit, uint64_t *sizes, calib_job *todo)
{
    size_t d = rs_calib_job_sizes(c, ji, only_fit, sizes);
    int runs = 0;
    for (size_t s = 0; s < d; runs++) {
        todo[runs] = c->jobs[ji];
        s += calib_run(sizes + s, d - s, &todo[runs]);
    }
    return runs;
}

int rs_calib_simulate(const rs_scenario *sc, rs_calib *c, int only_fit, FILE *err)
{
    uint64_t *sizes = calloc(c->n ? c->n : 1, sizeof *sizes);
    calib_job *todo = calloc(c->n ? c->n : 1, sizeof *todo);
    int *todo_ji = calloc(c->n ? c->n : 1, sizeof *todo_ji);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int width = cores < 1 ? 1 : cores > 64 ? 64 : (int)cores; /* children at once */
    calib_child_run *runs = calloc((size_t)width, sizeof *runs);
    if (!sizes || !todo || !todo_ji || !runs) {
        fprintf(err, "ringsim: compare: out of memory for %zu rows\n", c->n);
        free(sizes), free(todo), free(todo_ji), free(runs);
        return RS_EXIT_USAGE;
    }
    int ntodo = 0;
    c->runs = 0;
    for (int ji = 0; ji < c->njobs; ji++) {
        int k = calib_plan_job(c, ji, only_fit, sizes, todo + ntodo);
        for (int i = 0; i < k; i++)
            todo_ji[ntodo + i] = ji;
        ntodo += k;
    }
    for (size_t i = 0; i < c->n; i++)
        if (!(only_fit && c->rows[i].held_out))
            c->rows[i].predicted_us = c->rows[i].error = NAN;
    /* a SystemC simulation runs once per process: a child per sweep, as many at once as cores */
    int status = RS_EXIT_OK, nrun = 0, next = 0;
    while ((next < ntodo && status == RS_EXIT_OK) || nrun) {
        if (next < ntodo && status == RS_EXIT_OK && nrun < width) {
            status = calib_start(sc, &todo[next], todo_ji[next], &runs[nrun], err);
            if (status == RS_EXIT_OK)
                nrun++;
            next++;
            continue;
        }
        int st = calib_finish(runs, &nrun, c, only_fit, err);
        if (status == RS_EXIT_OK)
            status = st;
    }
    for (size_t i = 0; i < c->n; i++)
        if (!isnan(c->rows[i].predicted_us) && c->rows[i].m->time_us > 0)
            c->rows[i].error = c->rows[i].predicted_us / c->rows[i].m->time_us - 1;
    free(sizes), free(todo), free(todo_ji), free(runs);
    return status;
}

int rs_calib_predict(const rs_scenario *sc, const rs_meas_table *const *tables, size_t ntables, rs_calib *out,
                     FILE *err)
{
    int status = rs_calib_rows(sc, tables, ntables, out, err);
    return status == RS_EXIT_OK ? rs_calib_simulate(sc, out, 0, err) : status;
}

/* ---- summaries ------------------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Over the rows of c with an error: those of like's file, collective and placement, or all (NULL);
 * of those, the held-out ones (held 1), the fitted ones (0) or both (-1). */
static rs_calib_stats calib_summary_band(const rs_calib *c, const rs_calib_row *like, int held, uint64_t lo,
                                         uint64_t hi);
static rs_calib_stats calib_summary(const rs_calib *c, const rs_calib_row *like, int held)
{
    return calib_summary_band(c, like, held, 0, UINT64_MAX);
}

/* The same over the rows of lo <= size < hi. */
static rs_calib_stats calib_summary_band(const rs_calib *c, const rs_calib_row *like, int held, uint64_t lo,
                                         uint64_t hi)
{
    rs_calib_stats s;
    memset(&s, 0, sizeof s);
    double *v = malloc((c->n ? c->n : 1) * sizeof *v), logsum = 0;
    if (!v)
        return s;
    for (size_t i = 0; i < c->n; i++) {
        const rs_calib_row *r = &c->rows[i];
        if (isnan(r->error) || (like && (r->table != like->table || r->m->coll != like->m->coll || r->place != like->place)) ||
            (held >= 0 && r->held_out != held) || r->m->nccl_bytes < lo || r->m->nccl_bytes >= hi)
            continue;
        double a = fabs(r->error);
        v[s.n++] = a;
        logsum += log(a > 1e-9 ? a : 1e-9); /* an exact match would make the mean of logs -inf */
        if (!s.worst_row || a > fabs(s.worst)) {
            s.worst = r->error;
            s.worst_row = r;
        }
    }
    if (s.n) {
        qsort(v, s.n, sizeof *v, cmp_double);
        s.median = s.n % 2 ? v[s.n / 2] : (v[s.n / 2 - 1] + v[s.n / 2]) / 2;
        s.geomean = exp(logsum / (double)s.n);
    }
    free(v);
    return s;
}

rs_calib_stats rs_calib_summary(const rs_calib *c, int held)
{
    return calib_summary(c, NULL, held);
}

static void calib_print_stats(FILE *out, const char *what, const rs_calib_stats *s)
{
    if (!s->n) {
        fprintf(out, "# %s: no row predicted\n", what);
        return;
    }
    fprintf(out, "# %s: %zu rows, |error| median %.1f %%, geomean %.1f %%, worst %+.1f %% at %llu B (%s:%d)\n", what,
            s->n, 100 * s->median, 100 * s->geomean, 100 * s->worst, (unsigned long long)s->worst_row->m->nccl_bytes,
            s->worst_row->table->name, s->worst_row->m->line);
}

/* The summaries apart from "all" where a calibration held rows out: the fitted rows, the held-out
 * ones, and those in the bands issue 18's acceptance names (bandwidth-bound sizes, the rest). */
static const struct {
    const char *text, *json;
    int held;
    uint64_t lo, hi;
} calib_groups[] = {
    {"fitted rows", "fitted", 0, 0, UINT64_MAX},
    {"held-out rows", "held_out", 1, 0, UINT64_MAX},
    {"held-out rows >= 1 MiB", "held_out_from_1mib", 1, 1u << 20, UINT64_MAX},
    {"held-out rows < 1 MiB", "held_out_below_1mib", 1, 0, 1u << 20},
};

static int calib_any_held_out(const rs_calib *c)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->rows[i].held_out)
            return 1;
    return 0;
}

static void calib_json_stats(cJSON *parent, const char *name, const rs_calib_stats *s)
{
    cJSON *o = cJSON_AddObjectToObject(parent, name);
    cJSON_AddNumberToObject(o, "rows", (double)s->n);
    cJSON_AddNumberToObject(o, "median_abs_error", s->median);
    cJSON_AddNumberToObject(o, "geomean_abs_error", s->geomean);
    cJSON_AddNumberToObject(o, "worst_error", s->worst);
}

void rs_calib_print(const rs_calib *c, FILE *out)
{
    fprintf(out, "# the machine %s\n", c->machine);
    fprintf(out, "#   its workload replaced by each file's rows: %d simulation(s), timing only, with the files' "
            "iterations and warm-ups (at most 20 and 5; 1 and 1 where a file does not say)\n", c->runs);
    const rs_meas_table *cur = NULL;
    for (size_t i = 0; i < c->n; i++) {
        const rs_calib_row *r = &c->rows[i];
        if (r->table != cur) {
            cur = r->table;
            fprintf(out, "#\n# %s: %s%s%s, %d ranks (%s)\n", cur->name, rs_meas_format_name(cur->format),
                    cur->program[0] ? ", " : "", cur->program, r->m->ranks, cur->ranks_from);
            fprintf(out, "#%13s %12s %13s %13s %13s %9s %6s\n", "collective", "size (B)", "placement", "measured_us",
                    "predicted_us", "error %", "line");
        }
        char pred[32] = "-", e[32] = "-";
        if (!isnan(r->predicted_us))
            snprintf(pred, sizeof pred, "%.2f", r->predicted_us);
        if (!isnan(r->error))
            snprintf(e, sizeof e, "%+.1f", 100 * r->error);
        fprintf(out, "%14s %12llu %13s %13.2f %13s %9s %6d%s%s%s%s\n", rs_meas_coll_name(r->m->coll),
                (unsigned long long)r->m->nccl_bytes, rs_meas_place_name(r->place), r->m->time_us, pred, e, r->m->line,
                r->why_not ? "  (" : "", r->why_not ? r->why_not : "", r->why_not ? ")" : "",
                r->held_out ? "  (held out)" : "");
    }
    fprintf(out, "#\n");
    /* per file, collective and placement, in the order they first appear */
    for (size_t i = 0; i < c->n; i++) {
        const rs_calib_row *r = &c->rows[i];
        size_t first = 0;
        while (first < i && !(c->rows[first].table == r->table && c->rows[first].m->coll == r->m->coll &&
                              c->rows[first].place == r->place))
            first++;
        if (first != i)
            continue;
        char what[400];
        snprintf(what, sizeof what, "%s %s (%s)", rs_meas_coll_name(r->m->coll), rs_meas_place_name(r->place),
                 r->table->name);
        rs_calib_stats s = calib_summary(c, r, -1);
        calib_print_stats(out, what, &s);
    }
    for (size_t g = 0; calib_any_held_out(c) && g < sizeof calib_groups / sizeof calib_groups[0]; g++) {
        rs_calib_stats st = calib_summary_band(c, NULL, calib_groups[g].held, calib_groups[g].lo, calib_groups[g].hi);
        calib_print_stats(out, calib_groups[g].text, &st);
    }
    rs_calib_stats all = calib_summary(c, NULL, -1);
    calib_print_stats(out, "all", &all);
}

/* The fit's values and how it ended, as the "fit" object of calibrate's JSON. */
static void calib_fit_json(const rs_calib_fit *fit, cJSON *into)
{
    cJSON *o = cJSON_AddObjectToObject(into, "fit"), *ps = cJSON_AddArrayToObject(o, "values");
    for (int i = 0; i < fit->nparams; i++) {
        const rs_calib_param *p = &fit->params[i];
        cJSON *v = cJSON_CreateObject();
        cJSON_AddStringToObject(v, "key", p->key);
        cJSON_AddNumberToObject(v, "start", p->start);
        cJSON_AddNumberToObject(v, "value", p->value);
        if (p->pinned)
            cJSON_AddTrueToObject(v, "pinned");
        else if (isnan(p->sigma) || !p->determined)
            cJSON_AddNullToObject(v, "relative_uncertainty");
        else
            cJSON_AddNumberToObject(v, "relative_uncertainty", exp(p->sigma) - 1);
        if (p->tied >= 0) {
            cJSON_AddStringToObject(v, "moves_with", fit->params[p->tied].key);
            cJSON_AddNumberToObject(v, "correlation", p->tied_corr);
        }
        cJSON_AddItemToArray(ps, v);
    }
    cJSON_AddNumberToObject(o, "rows", fit->rows);
    cJSON_AddNumberToObject(o, "iterations", fit->iterations);
    cJSON_AddNumberToObject(o, "simulation_rounds", fit->simulations);
    cJSON_AddNumberToObject(o, "rms_log_error_before", fit->rms_before);
    cJSON_AddNumberToObject(o, "rms_log_error_after", fit->rms_after);
    cJSON_AddStringToObject(o, "stopped", fit->stopped);
}

int rs_calib_write_json(const rs_calib *c, const rs_calib_fit *fit, FILE *f)
{
    cJSON *j = cJSON_CreateObject(), *rows = cJSON_AddArrayToObject(j, "rows");
    cJSON_AddStringToObject(j, "machine", c->machine);
    cJSON_AddNumberToObject(j, "simulations", c->runs);
    if (fit)
        calib_fit_json(fit, j);
    for (size_t i = 0; i < c->n; i++) {
        const rs_calib_row *r = &c->rows[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "file", r->table->name);
        cJSON_AddNumberToObject(o, "line", r->m->line);
        cJSON_AddStringToObject(o, "collective", rs_meas_coll_name(r->m->coll));
        cJSON_AddNumberToObject(o, "ranks", r->m->ranks);
        cJSON_AddNumberToObject(o, "size", (double)r->m->nccl_bytes);
        cJSON_AddStringToObject(o, "placement", rs_meas_place_name(r->place));
        cJSON_AddNumberToObject(o, "measured_us", r->m->time_us);
        if (isnan(r->predicted_us))
            cJSON_AddNullToObject(o, "predicted_us");
        else
            cJSON_AddNumberToObject(o, "predicted_us", r->predicted_us);
        if (isnan(r->error))
            cJSON_AddNullToObject(o, "error");
        else
            cJSON_AddNumberToObject(o, "error", r->error);
        if (r->why_not)
            cJSON_AddStringToObject(o, "not_simulated", r->why_not);
        if (r->held_out)
            cJSON_AddTrueToObject(o, "held_out");
        cJSON_AddItemToArray(rows, o);
    }
    rs_calib_stats all = calib_summary(c, NULL, -1);
    calib_json_stats(j, "summary", &all);
    for (size_t g = 0; calib_any_held_out(c) && g < sizeof calib_groups / sizeof calib_groups[0]; g++) {
        rs_calib_stats st = calib_summary_band(c, NULL, calib_groups[g].held, calib_groups[g].lo, calib_groups[g].hi);
        calib_json_stats(j, calib_groups[g].json, &st);
    }
    char *text = cJSON_Print(j);
    int rc = text && fputs(text, f) >= 0 && fputc('\n', f) != EOF ? 0 : -1;
    free(text);
    cJSON_Delete(j);
    return rc;
}

int rs_calib_plot(const rs_calib *c, const char *path, const char *title, FILE *err)
{
    /* per file, collective and placement: the measured curve and the predicted one */
    size_t ng = 0;
    const rs_calib_row **first = calloc(c->n ? c->n : 1, sizeof *first);
    rs_plot_series *series = calloc(2 * (c->n ? c->n : 1), sizeof *series);
    double *size = calloc(2 * (c->n ? c->n : 1), sizeof *size), *bw = calloc(2 * (c->n ? c->n : 1), sizeof *bw);
    char (*titles)[160] = calloc(2 * (c->n ? c->n : 1), sizeof *titles);
    int st = first && series && size && bw && titles ? 0 : -1;
    size_t used = 0;
    for (size_t i = 0; i < c->n && st == 0; i++) {
        const rs_calib_row *r = &c->rows[i];
        size_t g = 0;
        while (g < ng && !(first[g]->table == r->table && first[g]->m->coll == r->m->coll && first[g]->place == r->place))
            g++;
        if (g < ng)
            continue;
        first[ng++] = r;
        for (int pred = 0; pred < 2; pred++) {
            rs_plot_series *s = &series[2 * (ng - 1) + (size_t)pred];
            snprintf(titles[2 * (ng - 1) + (size_t)pred], sizeof titles[0], "%s %s %s (%s)",
                     rs_meas_coll_name(r->m->coll), rs_meas_place_name(r->place), pred ? "predicted" : "measured",
                     strrchr(r->table->name, '/') ? strrchr(r->table->name, '/') + 1 : r->table->name);
            s->title = titles[2 * (ng - 1) + (size_t)pred];
            s->size = size + used;
            s->busbw = bw + used;
            for (size_t k = i; k < c->n; k++) {
                const rs_calib_row *o = &c->rows[k];
                double t = pred ? o->predicted_us : o->m->time_us;
                if (o->table != r->table || o->m->coll != r->m->coll || o->place != r->place || !(t > 0))
                    continue;
                size[used] = (double)o->m->nccl_bytes;
                bw[used++] = (double)o->m->nccl_bytes / t / 1e3 * rs_meas_bus_factor(o->m->coll, o->m->ranks);
                s->n++;
            }
        }
    }
    if (st == 0)
        st = rs_plot_busbw(path, title, series, (int)(2 * ng), err);
    else
        fprintf(err, "ringsim: --plot: out of memory\n");
    free(first), free(series), free(size), free(bw), free(titles);
    return st ? RS_EXIT_USAGE : RS_EXIT_OK;
}

void rs_calib_free(rs_calib *c)
{
    free(c->rows);
    free(c->jobs);
    free(c->job_of);
    memset(c, 0, sizeof *c);
}
