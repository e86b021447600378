/* rs_report.c — prints nccl-tests' table layout and collects the rows as JSON with cJSON. */
#include "rs_report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "rs_junit.h"

/* Column layout shared by headers and rows so they always line up. */
#define RS_LEAD_FMT "%12s  %12s  %8s  %6s  %6s"
#define RS_PART_FMT "  %8s  %7s  %7s  %6s"
#define RS_PART_WIDTH 36 /* strlen of one RS_PART_FMT */
#define RS_MEMCPY_FMT "  %12s"

struct rs_report {
    const rs_sweep *sweep;
    FILE *out;
    cJSON *doc;       /* NULL when no JSON was asked for */
    cJSON *rows;
    cJSON *tables;
    /* the running table */
    rs_coll coll;
    char algo_desc[160];
    uint64_t wrong;
    double busbw_sum;
    int busbw_count;
    double memcpy_sum;
    int memcpy_count;
    double memcpy_last;
    uint64_t memcpy_last_size;
    int nrows;
    /* the whole run */
    uint64_t total_wrong;
    int error;
};

double rs_report_bus_factor(rs_coll coll, int nranks)
{
    double p = (double)nranks;
    switch (rs_coll_engine(coll)) {
    case NCL_COLL_ALLREDUCE: return 2.0 * (p - 1.0) / p;
    case NCL_COLL_REDUCE_SCATTER:
    case NCL_COLL_ALLGATHER:
    case NCL_COLL_ALLTOALL: return (p - 1.0) / p;
    default: return 1.0;
    }
}

rs_report *rs_report_create(const rs_sweep *sweep, FILE *out, int json)
{
    rs_report *rep = calloc(1, sizeof *rep);
    if (rep == NULL)
        return NULL;
    rep->sweep = sweep;
    rep->out = out;
    if (!json)
        return rep;
    rep->doc = cJSON_CreateObject();
    if (rep->doc == NULL) {
        free(rep);
        return NULL;
    }
    cJSON *d = rep->doc;
    cJSON_AddStringToObject(d, "program", "ringsim");
    cJSON_AddStringToObject(d, "command", "run");
    cJSON_AddStringToObject(d, "backend", rs_backend_name(sweep->backend));
    cJSON_AddNumberToObject(d, "ranks", sweep->nranks);
    cJSON_AddStringToObject(d, "algo", ncl_algo_name(sweep->algo));
    cJSON_AddNumberToObject(d, "channels", sweep->channels);
    cJSON_AddNumberToObject(d, "minbytes", (double)sweep->minbytes);
    cJSON_AddNumberToObject(d, "maxbytes", (double)sweep->maxbytes);
    if (sweep->stepfactor > 1)
        cJSON_AddNumberToObject(d, "stepfactor", (double)sweep->stepfactor);
    else
        cJSON_AddNumberToObject(d, "stepbytes", (double)sweep->stepbytes);
    cJSON_AddNumberToObject(d, "iters", sweep->iters);
    cJSON_AddNumberToObject(d, "warmup_iters", sweep->warmup_iters);
    cJSON_AddBoolToObject(d, "check", sweep->check);
    cJSON_AddNumberToObject(d, "root", sweep->root);
    /* as a string: a JSON number cannot hold every 64-bit seed exactly */
    char seed[32];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)sweep->seed);
    cJSON_AddStringToObject(d, "seed", seed);
    if (sweep->timeout_s > 0)
        cJSON_AddNumberToObject(d, "timeout_s", sweep->timeout_s);
    cJSON *colls = cJSON_AddArrayToObject(d, "collectives");
    for (int i = 0; i < sweep->ncolls; i++) {
        cJSON_AddItemToArray(colls, cJSON_CreateString(rs_coll_name(sweep->colls[i])));
        if (sweep->colls[i] == RS_COLL_ALLTOALLV)
            cJSON_AddNumberToObject(d, "alltoallv_skew", sweep->a2av_skew);
    }
    cJSON *dts = cJSON_AddArrayToObject(d, "datatypes");
    for (int i = 0; i < sweep->ndtypes; i++)
        cJSON_AddItemToArray(dts, cJSON_CreateString(ncl_dtype_name(sweep->dtypes[i])));
    cJSON *ops = cJSON_AddArrayToObject(d, "ops");
    for (int i = 0; i < sweep->nops; i++)
        cJSON_AddItemToArray(ops, cJSON_CreateString(ncl_op_name(sweep->ops[i])));
    rep->tables = cJSON_AddArrayToObject(d, "tables");
    rep->rows = cJSON_AddArrayToObject(d, "rows");
    return rep;
}

void rs_report_destroy(rs_report *rep)
{
    if (rep == NULL)
        return;
    cJSON_Delete(rep->doc);
    free(rep);
}

void rs_report_table_begin(rs_report *rep, rs_coll coll, const char *algo_desc)
{
    const rs_sweep *o = rep->sweep;
    rep->coll = coll;
    snprintf(rep->algo_desc, sizeof rep->algo_desc, "%s", algo_desc);
    rep->wrong = 0;
    rep->busbw_sum = 0;
    rep->busbw_count = 0;
    rep->memcpy_sum = 0;
    rep->memcpy_count = 0;
    rep->memcpy_last = -1;
    rep->memcpy_last_size = 0;
    rep->nrows = 0;

    FILE *f = rep->out;
    fprintf(f, "# ringsim run: %s on %d ranks, backend %s, algorithm %s, %u channel%s%s\n",
            rs_coll_name(coll), o->nranks, rs_backend_name(o->backend), algo_desc,
            (unsigned)o->channels, o->channels == 1 ? "" : "s",
            o->backend == RS_BACKEND_SIM ? " (times are simulated)" : "");
    fprintf(f, "# sizes %llu..%llu B, ", (unsigned long long)o->minbytes, (unsigned long long)o->maxbytes);
    if (o->stepfactor > 1)
        fprintf(f, "x%llu", (unsigned long long)o->stepfactor);
    else
        fprintf(f, "+%llu B", (unsigned long long)o->stepbytes);
    fprintf(f, ", %d iterations after %d warm-up, check %s, seed %llu\n", o->iters, o->warmup_iters,
            o->check ? "on" : "off", (unsigned long long)o->seed);
    if (coll == RS_COLL_ALLTOALLV)
        fprintf(f, "# blocks of %.3g .. %.3g x the size's mean block (skew %.3g), every rank's row a different mix; "
                   "size = the mean rank's buffer\n", 1 - o->a2av_skew, 1 + o->a2av_skew, o->a2av_skew);

    char line[512];
    int n;
    /* group titles centred over their four columns */
    const char *titles[2] = {"out-of-place", "in-place"};
    n = snprintf(line, sizeof line, RS_LEAD_FMT, "", "", "", "", "");
    for (int g = 0; g < 2; g++) {
        int tl = (int)strlen(titles[g]);
        int left = 2 + (RS_PART_WIDTH - 2 - tl) / 2;
        n += snprintf(line + n, sizeof line - (size_t)n, "%*s%s%*s", left, "", titles[g],
                      RS_PART_WIDTH - left - tl, "");
    }
    while (n > 0 && line[n - 1] == ' ')
        line[--n] = '\0';
    line[0] = '#';
    fprintf(f, "%s\n", line);

    n = snprintf(line, sizeof line, RS_LEAD_FMT RS_PART_FMT RS_PART_FMT, "size", "count", "type", "redop",
                 "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
    if (o->memprobe)
        snprintf(line + n, sizeof line - (size_t)n, RS_MEMCPY_FMT, "memcpy");
    line[0] = '#';
    fprintf(f, "%s\n", line);
    n = snprintf(line, sizeof line, RS_LEAD_FMT RS_PART_FMT RS_PART_FMT, "(B)", "(elements)", "", "", "",
                 "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
    if (o->memprobe)
        snprintf(line + n, sizeof line - (size_t)n, RS_MEMCPY_FMT, "(GB/s)");
    line[0] = '#';
    fprintf(f, "%s\n", line);
    fflush(f);
}

static void rs_format_time(char *buf, size_t len, double us)
{
    if (us < 10000.0)
        snprintf(buf, len, "%.2f", us);
    else if (us < 1e6)
        snprintf(buf, len, "%.1f", us);
    else
        snprintf(buf, len, "%.0f", us);
}

static cJSON *rs_result_json(const rs_result *r, int check)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "time_us", r->time_us);
    cJSON_AddNumberToObject(o, "algbw_gbps", r->algbw);
    cJSON_AddNumberToObject(o, "busbw_gbps", r->busbw);
    if (check)
        cJSON_AddNumberToObject(o, "wrong", (double)r->wrong);
    else
        cJSON_AddNullToObject(o, "wrong");
    return o;
}

void rs_report_row(rs_report *rep, const rs_row *row)
{
    const rs_sweep *o = rep->sweep;
    char size[32], count[32], root[16], t[2][32], a[2][32], b[2][32], w[2][32], mc[32];
    snprintf(size, sizeof size, "%llu", (unsigned long long)row->size);
    snprintf(count, sizeof count, "%llu", (unsigned long long)row->count);
    snprintf(root, sizeof root, "%d", row->root);
    for (int p = 0; p < 2; p++) {
        const rs_result *r = &row->res[p];
        if (r->time_us < 0) { /* a placement the collective does not run (sendrecv in place) */
            snprintf(t[p], sizeof t[p], "N/A");
            snprintf(a[p], sizeof a[p], "N/A");
            snprintf(b[p], sizeof b[p], "N/A");
            snprintf(w[p], sizeof w[p], "N/A");
            continue;
        }
        rs_format_time(t[p], sizeof t[p], r->time_us);
        snprintf(a[p], sizeof a[p], "%.2f", r->algbw);
        snprintf(b[p], sizeof b[p], "%.2f", r->busbw);
        if (o->check)
            snprintf(w[p], sizeof w[p], "%llu", (unsigned long long)r->wrong);
        else
            snprintf(w[p], sizeof w[p], "N/A");
        rep->wrong += o->check ? r->wrong : 0;
        rep->busbw_sum += r->busbw;
        rep->busbw_count++;
    }
    fprintf(rep->out, RS_LEAD_FMT RS_PART_FMT RS_PART_FMT, size, count, ncl_dtype_name(row->dtype),
            row->has_op ? ncl_op_name(row->op) : "none", root, t[0], a[0], b[0], w[0], t[1], a[1], b[1], w[1]);
    if (o->memprobe && row->memcpy_gbps < 0) {
        fprintf(rep->out, RS_MEMCPY_FMT, "-");
    } else if (o->memprobe) {
        snprintf(mc, sizeof mc, "%.2f", row->memcpy_gbps);
        fprintf(rep->out, RS_MEMCPY_FMT, mc);
        rep->memcpy_sum += row->memcpy_gbps;
        rep->memcpy_count++;
        if (row->size >= rep->memcpy_last_size) {
            rep->memcpy_last_size = row->size;
            rep->memcpy_last = row->memcpy_gbps;
        }
    }
    fputc('\n', rep->out);
    fflush(rep->out);
    rep->nrows++;

    if (rep->rows == NULL)
        return;
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "collective", rs_coll_name(row->coll));
    cJSON_AddStringToObject(j, "backend", rs_backend_name(o->backend));
    cJSON_AddNumberToObject(j, "ranks", o->nranks);
    cJSON_AddStringToObject(j, "algo", ncl_algo_name(row->algo));
    cJSON_AddNumberToObject(j, "channels", o->channels);
    cJSON_AddNumberToObject(j, "size", (double)row->size);
    cJSON_AddNumberToObject(j, "count", (double)row->count);
    cJSON_AddStringToObject(j, "type", ncl_dtype_name(row->dtype));
    cJSON_AddStringToObject(j, "redop", row->has_op ? ncl_op_name(row->op) : "none");
    cJSON_AddNumberToObject(j, "root", row->root);
    cJSON_AddItemToObject(j, "out_of_place", rs_result_json(&row->res[0], o->check));
    if (row->res[1].time_us < 0)
        cJSON_AddNullToObject(j, "in_place");
    else
        cJSON_AddItemToObject(j, "in_place", rs_result_json(&row->res[1], o->check));
    if (o->memprobe && row->memcpy_gbps >= 0)
        cJSON_AddNumberToObject(j, "memcpy_gbps", row->memcpy_gbps);
    else
        cJSON_AddNullToObject(j, "memcpy_gbps");
    cJSON_AddItemToArray(rep->rows, j);
}

uint64_t rs_report_table_end(rs_report *rep, int aborted)
{
    FILE *f = rep->out;
    double avg_bus = rep->busbw_count ? rep->busbw_sum / rep->busbw_count : 0.0;
    if (aborted)
        fprintf(f, "# Out of bounds values : %llu ERROR (stopped after %d rows: see the error above)\n",
                (unsigned long long)rep->wrong, rep->nrows);
    else
        fprintf(f, "# Out of bounds values : %llu %s\n", (unsigned long long)rep->wrong,
                rep->wrong ? "FAILED" : "OK");
    fprintf(f, "# Avg bus bandwidth    : %g\n", avg_bus);
    double avg_mc = rep->memcpy_count ? rep->memcpy_sum / rep->memcpy_count : 0.0;
    if (rep->sweep->memprobe && rep->memcpy_count)
        fprintf(f, "# Avg memcpy bandwidth : %g (1 thread, same sizes; %.2f GB/s at %llu B)\n", avg_mc,
                rep->memcpy_last, (unsigned long long)rep->memcpy_last_size);
    fprintf(f, "#\n");
    fflush(f);
    rep->total_wrong += rep->wrong;
    if (rep->tables) {
        cJSON *t = cJSON_CreateObject();
        cJSON_AddStringToObject(t, "collective", rs_coll_name(rep->coll));
        cJSON_AddStringToObject(t, "algo", rep->algo_desc);
        cJSON_AddNumberToObject(t, "rows", rep->nrows);
        cJSON_AddNumberToObject(t, "out_of_bounds", (double)rep->wrong);
        cJSON_AddNumberToObject(t, "avg_busbw_gbps", avg_bus);
        if (rep->sweep->memprobe && rep->memcpy_count)
            cJSON_AddNumberToObject(t, "avg_memcpy_gbps", avg_mc);
        cJSON_AddItemToArray(rep->tables, t);
    }
    return rep->wrong;
}

const rs_train_field rs_train_fields[RS_TRAIN_FIELDS] = {
    {"iteration_us", "iteration (us)", 1, offsetof(rs_train_summary, iteration_us)},
    {"compute_us", "compute (us)", 1, offsetof(rs_train_summary, compute_us)},
    {"allreduce_us", "allreduce (us)", 1, offsetof(rs_train_summary, allreduce_us)},
    {"exposed_us", "exposed (us)", 1, offsetof(rs_train_summary, exposed_us)},
    {"hidden", "hidden (%)", 100, offsetof(rs_train_summary, hidden)},
    {"samples_per_s", "samples/s", 1, offsetof(rs_train_summary, samples_per_s)},
    {"efficiency", "efficiency (%)", 100, offsetof(rs_train_summary, efficiency)},
};

void rs_report_training(rs_report *rep, const rs_train_summary *s)
{
    rep->total_wrong += s->wrong;
    if (rep->doc == NULL)
        return;
    cJSON *t = cJSON_AddObjectToObject(rep->doc, "training");
    cJSON_AddStringToObject(t, "model", s->model);
    cJSON_AddStringToObject(t, "fusion", s->fusion);
    cJSON_AddNumberToObject(t, "buckets", s->buckets);
    for (int i = 0; i < RS_TRAIN_FIELDS; i++)
        cJSON_AddNumberToObject(t, rs_train_fields[i].key,
                                *(const double *)((const char *)s + rs_train_fields[i].offset));
}

void rs_report_corruption(rs_report *rep, const rs_link_corruption *c)
{
    const char *unit = c->packets ? "packets" : "messages";
    if (c->crc)
        fprintf(rep->out, "# link %s: %llu of %llu %s damaged and replayed (crc, every: %u), +%.6g us on the link\n",
                c->link, (unsigned long long)c->damaged, (unsigned long long)c->counted, unit, c->every,
                c->replay_us);
    else /* notifies are not counted without a CRC (model/README.md) */
        fprintf(rep->out, "# link %s: %llu of %llu data %s damaged, not detected (crc: false, every: %u)\n", c->link,
                (unsigned long long)c->damaged, (unsigned long long)c->counted, unit, c->every);
    fflush(rep->out);
    if (rep->doc == NULL)
        return;
    cJSON *list = cJSON_GetObjectItem(rep->doc, "corrupt_links");
    if (list == NULL)
        list = cJSON_AddArrayToObject(rep->doc, "corrupt_links");
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "link", c->link);
    cJSON_AddNumberToObject(j, "every", c->every);
    cJSON_AddBoolToObject(j, "crc", c->crc);
    cJSON_AddStringToObject(j, "counted", unit);
    cJSON_AddNumberToObject(j, c->packets ? "packets" : "messages", (double)c->counted);
    cJSON_AddNumberToObject(j, "damaged", (double)c->damaged);
    cJSON_AddNumberToObject(j, "replayed", c->crc ? (double)c->damaged : 0.0);
    cJSON_AddNumberToObject(j, "replay_us", c->replay_us);
    cJSON_AddItemToArray(list, j);
}

void rs_report_set_error(rs_report *rep, const char *message)
{
    rep->error = 1;
    if (rep->doc && !cJSON_HasObjectItem(rep->doc, "error"))
        cJSON_AddStringToObject(rep->doc, "error", message);
}

int rs_report_write_junit(rs_report *rep, const char *path, FILE *err)
{
    rs_junit *j = rs_junit_new("ringsim run");
    if (!j || !rep->doc) {
        fprintf(err, "ringsim: --junit: cannot write '%s': out of memory\n", path);
        rs_junit_free(j);
        return 2;
    }
    static const char *const places[2] = {"out_of_place", "in_place"};
    const cJSON *row;
    cJSON_ArrayForEach(row, rep->rows) {
        char cls[96], name[200], why[96];
        snprintf(cls, sizeof cls, "ringsim.run.%s.%s", cJSON_GetStringValue(cJSON_GetObjectItem(row, "backend")),
                 cJSON_GetStringValue(cJSON_GetObjectItem(row, "collective")));
        for (int k = 0; k < 2; k++) {
            const cJSON *r = cJSON_GetObjectItem(row, places[k]);
            double wrong = cJSON_GetNumberValue(cJSON_GetObjectItem(r, "wrong")); /* NaN: not checked */
            double root = cJSON_GetNumberValue(cJSON_GetObjectItem(row, "root"));
            char rooted[32] = "";
            if (root >= 0)
                snprintf(rooted, sizeof rooted, " root %.0f", root);
            snprintf(name, sizeof name, "%.0f B %s %s%s, %s, %s", cJSON_GetNumberValue(cJSON_GetObjectItem(row, "size")),
                     cJSON_GetStringValue(cJSON_GetObjectItem(row, "type")),
                     cJSON_GetStringValue(cJSON_GetObjectItem(row, "redop")), rooted,
                     k ? "in place" : "out of place", cJSON_GetStringValue(cJSON_GetObjectItem(row, "algo")));
            snprintf(why, sizeof why, "%.0f wrong values (#wrong)", wrong);
            rs_junit_add(j, cls, name, cJSON_GetNumberValue(cJSON_GetObjectItem(r, "time_us")) * 1e-6,
                         wrong > 0 ? why : NULL);
        }
    }
    const char *error = cJSON_GetStringValue(cJSON_GetObjectItem(rep->doc, "error"));
    if (rep->error) /* the run stopped: the rows above are the ones it printed */
        rs_junit_add(j, "ringsim.run", "run", -1, error ? error : "the run failed: see its messages");
    return rs_junit_write(j, path, err);
}

int rs_report_write_json(rs_report *rep, FILE *f, const char *path, FILE *err)
{
    if (rep->doc == NULL || f == NULL)
        return 0;
    cJSON_AddNumberToObject(rep->doc, "out_of_bounds", (double)rep->total_wrong);
    cJSON_AddStringToObject(rep->doc, "result", rep->error ? "ERROR" : rep->total_wrong ? "FAILED" : "OK");
    char *text = cJSON_Print(rep->doc);
    if (text == NULL) {
        fprintf(err, "ringsim: --json: cannot write '%s': out of memory while formatting\n", path);
        fclose(f);
        return -1;
    }
    errno = 0;
    int bad = fputs(text, f) == EOF || fputc('\n', f) == EOF || fflush(f) != 0 || ferror(f);
    int saved = errno;
    free(text);
    if (fclose(f) != 0 && !bad) {
        bad = 1;
        saved = errno;
    }
    if (bad) {
        fprintf(err, "ringsim: --json: cannot write '%s': %s\n", path, saved ? strerror(saved) : "write error");
        return -1;
    }
    return 0;
}
