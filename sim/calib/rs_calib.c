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
#include "ncl/ncl_names.h"
#include "scenario/rs_scenario.h"

/* The engine's collective for a measured one; -1 where the engine has none yet. */
static int calib_coll(rs_meas_coll k)
{
    switch (k) {
    case RS_MEAS_COLL_ALLREDUCE: return NCL_COLL_ALLREDUCE;
    case RS_MEAS_COLL_BROADCAST: return NCL_COLL_BROADCAST;
    case RS_MEAS_COLL_REDUCE: return NCL_COLL_REDUCE;
    case RS_MEAS_COLL_REDUCE_SCATTER: return NCL_COLL_REDUCE_SCATTER;
    case RS_MEAS_COLL_ALLGATHER: return NCL_COLL_ALLGATHER;
    default: return -1;
    }
}

/* One simulated sweep: a collective, dtype, op and root over sizes begin * factor^i <= end. */
typedef struct calib_job {
    ncl_coll coll;
    ncl_dtype dtype;
    ncl_op op;
    int root;
    int iters, warmup; /* the measurement's, where its file says (capped), else 1 and 1 */
    uint64_t begin, end;
    uint32_t factor;
} calib_job;

/* What a row asks to simulate (sizes aside). 0, or -1 with why. */
static int calib_job_of(const rs_meas_table *t, const rs_meas_row *r, calib_job *j, char *why, size_t len)
{
    memset(j, 0, sizeof *j);
    int k = calib_coll(r->coll);
    if (k < 0) {
        snprintf(why, len, "%s: the engine has no %s yet (allowed: allreduce, broadcast, reduce, reduce_scatter, "
                 "allgather)", t->name, rs_meas_coll_name(r->coll));
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

/* Runs job j in a child; its rows' times go to the rows of c that asked for them (job index ji). */
static int calib_run(const rs_scenario *sc, const calib_job *j, rs_calib *c, const int *job_of, int ji, FILE *err)
{
    FILE *tmp = tmpfile();
    if (!tmp) {
        fprintf(err, "ringsim: compare: cannot create a temporary file: %s\n", strerror(errno));
        return RS_EXIT_USAGE;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (freopen("/dev/null", "w", stdout) == NULL) /* the run's own lines (rings found, ...) */
            _exit(RS_EXIT_USAGE);
        int st = calib_child(sc, j, tmp);
        fflush(NULL);
        _exit(st);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) < 0) {
        fprintf(err, "ringsim: compare: cannot run the simulation: %s\n", strerror(errno));
        fclose(tmp);
        return RS_EXIT_USAGE;
    }
    int status = WIFEXITED(st) ? WEXITSTATUS(st) : RS_EXIT_ENGINE;
    if (status != RS_EXIT_OK) {
        fprintf(err, "ringsim: compare: simulating %s %s %s root %d, %llu..%llu B, failed (exit status %d%s)\n",
                ncl_coll_name(j->coll), ncl_dtype_name(j->dtype), ncl_op_name(j->op), j->root,
                (unsigned long long)j->begin, (unsigned long long)j->end, status,
                WIFSIGNALED(st) ? ", killed by a signal" : "");
        fclose(tmp);
        return status;
    }
    rewind(tmp);
    unsigned long long size;
    double t[2];
    while (fscanf(tmp, "%llu %lg %lg", &size, &t[0], &t[1]) == 3)
        for (size_t i = 0; i < c->n; i++)
            if (job_of[i] == ji && c->rows[i].m->nccl_bytes == size)
                c->rows[i].predicted_us = t[c->rows[i].place == RS_MEAS_PLACE_IN];
    fclose(tmp);
    c->runs++;
    return RS_EXIT_OK;
}

/* The factor f >= 2 with sizes[i] = sizes[0] f^i for all i (sorted, distinct), or 0. */
static uint32_t calib_factor(const uint64_t *sizes, size_t n)
{
    if (n < 2)
        return 2;
    if (sizes[1] % sizes[0])
        return 0;
    uint64_t f = sizes[1] / sizes[0];
    if (f < 2 || f > UINT32_MAX)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (sizes[i] / sizes[i - 1] != f || sizes[i] % sizes[i - 1])
            return 0;
    return (uint32_t)f;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int rs_calib_predict(const rs_scenario *sc, const rs_meas_table *const *tables, size_t ntables, rs_calib *out,
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
    calib_job *jobs = calloc(total ? total : 1, sizeof *jobs);
    int *job_of = calloc(total ? total : 1, sizeof *job_of);
    uint64_t *sizes = calloc(total ? total : 1, sizeof *sizes);
    if (!out->rows || !jobs || !job_of || !sizes) {
        fprintf(err, "ringsim: compare: out of memory for %zu rows\n", total);
        free(jobs), free(job_of), free(sizes);
        return RS_EXIT_USAGE;
    }
    /* every row first: a table that cannot be compared is refused before anything runs */
    int njobs = 0;
    char why[400];
    for (size_t k = 0; k < ntables; k++) {
        const rs_meas_table *t = tables[k];
        if (t->ranks && t->ranks != ranks) {
            fprintf(err, "ringsim: compare: %s: %d ranks (%s), the scenario %d (allowed: a machine scenario of "
                    "the measured rank count)\n", t->name, t->ranks, t->ranks_from, ranks);
            free(jobs), free(job_of), free(sizes);
            return RS_EXIT_USAGE;
        }
        for (size_t i = 0; i < t->nrows; i++) {
            const rs_meas_row *r = &t->rows[i];
            calib_job j;
            if (calib_job_of(t, r, &j, why, sizeof why) != 0) {
                fprintf(err, "ringsim: compare: %s\n", why);
                free(jobs), free(job_of), free(sizes);
                return RS_EXIT_USAGE;
            }
            rs_calib_row *cr = &out->rows[out->n];
            cr->table = t;
            cr->m = r;
            cr->place = r->place == RS_MEAS_PLACE_IN ? RS_MEAS_PLACE_IN : RS_MEAS_PLACE_OUT;
            cr->predicted_us = cr->error = NAN;
            /* what the engine cannot be asked: an empty buffer, a part of an element (of each rank's) */
            uint64_t unit = ncl_dtype_size(j.dtype) *
                            (j.coll == NCL_COLL_ALLGATHER || j.coll == NCL_COLL_REDUCE_SCATTER ? (uint64_t)ranks : 1);
            if (r->nccl_bytes == 0)
                cr->why_not = "0 B: nothing to simulate";
            else if (r->nccl_bytes % unit)
                cr->why_not = "not a whole number of elements (of each rank's)";
            int ji = 0;
            while (ji < njobs && !calib_same_kind(&jobs[ji], &j))
                ji++;
            if (ji == njobs)
                jobs[njobs++] = j;
            job_of[out->n++] = ji;
        }
    }
    int status = RS_EXIT_OK;
    for (int ji = 0; ji < njobs && status == RS_EXIT_OK; ji++) {
        /* the kind's distinct sizes (0 B moves nothing: not simulated) */
        size_t ns = 0;
        for (size_t i = 0; i < out->n; i++)
            if (job_of[i] == ji && !out->rows[i].why_not)
                sizes[ns++] = out->rows[i].m->nccl_bytes;
        qsort(sizes, ns, sizeof *sizes, cmp_u64);
        size_t d = 0;
        for (size_t i = 0; i < ns; i++)
            if (d == 0 || sizes[i] != sizes[d - 1])
                sizes[d++] = sizes[i];
        calib_job j = jobs[ji];
        uint32_t f = calib_factor(sizes, d);
        if (d && f) { /* one sweep covers them */
            j.begin = sizes[0];
            j.end = sizes[d - 1];
            j.factor = f;
            status = calib_run(sc, &j, out, job_of, ji, err);
        } else { /* sizes of no common factor: one simulation each */
            for (size_t s = 0; s < d && status == RS_EXIT_OK; s++) {
                j.begin = j.end = sizes[s];
                j.factor = 2;
                status = calib_run(sc, &j, out, job_of, ji, err);
            }
        }
    }
    for (size_t i = 0; i < out->n; i++)
        if (!isnan(out->rows[i].predicted_us) && out->rows[i].m->time_us > 0)
            out->rows[i].error = out->rows[i].predicted_us / out->rows[i].m->time_us - 1;
    free(jobs), free(job_of), free(sizes);
    return status;
}

/* ---- summaries ------------------------------------------------------------------------------- */

typedef struct calib_stats {
    size_t n;
    double median, geomean, worst; /* of |error|; worst keeps its sign */
    const rs_calib_row *worst_row;
} calib_stats;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Over the rows of c with an error: those of like's file, collective and placement, or all (NULL). */
static calib_stats calib_summary(const rs_calib *c, const rs_calib_row *like)
{
    calib_stats s;
    memset(&s, 0, sizeof s);
    double *v = malloc((c->n ? c->n : 1) * sizeof *v), logsum = 0;
    if (!v)
        return s;
    for (size_t i = 0; i < c->n; i++) {
        const rs_calib_row *r = &c->rows[i];
        if (isnan(r->error) || (like && (r->table != like->table || r->m->coll != like->m->coll || r->place != like->place)))
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

static void calib_print_stats(FILE *out, const char *what, const calib_stats *s)
{
    if (!s->n) {
        fprintf(out, "# %s: no row predicted\n", what);
        return;
    }
    fprintf(out, "# %s: %zu rows, |error| median %.1f %%, geomean %.1f %%, worst %+.1f %% at %llu B (%s:%d)\n", what,
            s->n, 100 * s->median, 100 * s->geomean, 100 * s->worst, (unsigned long long)s->worst_row->m->nccl_bytes,
            s->worst_row->table->name, s->worst_row->m->line);
}

void rs_calib_print(const rs_calib *c, FILE *out)
{
    fprintf(out, "# ringsim compare: the machine %s\n", c->machine);
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
        fprintf(out, "%14s %12llu %13s %13.2f %13s %9s %6d%s%s%s\n", rs_meas_coll_name(r->m->coll),
                (unsigned long long)r->m->nccl_bytes, rs_meas_place_name(r->place), r->m->time_us, pred, e, r->m->line,
                r->why_not ? "  (" : "", r->why_not ? r->why_not : "", r->why_not ? ")" : "");
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
        calib_stats s = calib_summary(c, r);
        calib_print_stats(out, what, &s);
    }
    calib_stats all = calib_summary(c, NULL);
    calib_print_stats(out, "all", &all);
}

int rs_calib_write_json(const rs_calib *c, FILE *f)
{
    cJSON *j = cJSON_CreateObject(), *rows = cJSON_AddArrayToObject(j, "rows");
    cJSON_AddStringToObject(j, "machine", c->machine);
    cJSON_AddNumberToObject(j, "simulations", c->runs);
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
        cJSON_AddItemToArray(rows, o);
    }
    calib_stats all = calib_summary(c, NULL);
    cJSON *s = cJSON_AddObjectToObject(j, "summary");
    cJSON_AddNumberToObject(s, "rows", (double)all.n);
    cJSON_AddNumberToObject(s, "median_abs_error", all.median);
    cJSON_AddNumberToObject(s, "geomean_abs_error", all.geomean);
    cJSON_AddNumberToObject(s, "worst_error", all.worst);
    char *text = cJSON_Print(j);
    int rc = text && fputs(text, f) >= 0 && fputc('\n', f) != EOF ? 0 : -1;
    free(text);
    cJSON_Delete(j);
    return rc;
}

void rs_calib_free(rs_calib *c)
{
    free(c->rows);
    memset(c, 0, sizeof *c);
}
