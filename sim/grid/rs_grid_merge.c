/* rs_grid_merge.c — every point's run JSON and outcome into OUT/sweep.csv and OUT/sweep.json (the coordinates first, then the run's columns; training scenarios' figures also in OUT/sweep_training.csv), and the busbw plot through report/'s. */
#define _POSIX_C_SOURCE 200809L
#include "rs_grid_int.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "ncl/ncl_names.h"
#include "report/rs_rows.h"
#include "sweep/rs_sweep.h"

/* A point as the merge finds it on disk. */
typedef struct rs_found {
    cJSON *run;    /* its run JSON when complete, else NULL */
    cJSON *status; /* its STEM.status when written, else NULL */
    const char *state; /* "ok", "failed", "missing" (not run yet, or by another process) */
} rs_found;

/* Whether the point's YAML on disk is the one the grid makes now: results of an older grid (or
 * base) are not this grid's. */
static int rs_grid_current(rs_grid *g, const char *stem, size_t p)
{
    char file[PATH_MAX + 16];
    size_t len = 0, oldlen = 0;
    snprintf(file, sizeof file, "%s.yaml", stem);
    char *text = rs_grid_point_yaml(g, p, &len), *old = text ? rs_grid_slurp(file, &oldlen) : NULL;
    int same = old && oldlen == len && memcmp(old, text, len) == 0;
    free(text);
    free(old);
    return same;
}

static void rs_grid_find(rs_grid *g, size_t p, rs_found *f)
{
    char stem[PATH_MAX], file[PATH_MAX + 16];
    int ok = 0;
    rs_grid_point_stem(g, p, stem, sizeof stem);
    memset(f, 0, sizeof *f);
    f->state = "missing";
    if (!rs_grid_current(g, stem, p))
        return;
    snprintf(file, sizeof file, "%s.json", stem);
    f->run = rs_grid_read_run(file, &ok);
    snprintf(file, sizeof file, "%s.status", stem);
    char *text = rs_grid_slurp(file, NULL);
    f->status = text ? cJSON_Parse(text) : NULL;
    free(text);
    /* a point whose JSON is complete and OK finished, whatever an older status says (a status is
     * removed before a point reruns, so one beside an OK JSON is its own) */
    const cJSON *exit = cJSON_GetObjectItem(f->status, "exit");
    int exited0 = f->status == NULL || (cJSON_IsNumber(exit) && exit->valueint == 0);
    f->state = ok && exited0 ? "ok" : f->status || f->run ? "failed" : "missing";
}

int rs_grid_all_done(rs_grid *g, unsigned char *done)
{
    for (size_t p = 0; p < g->npoints; p++) {
        if (done[p])
            continue;
        rs_found f;
        rs_grid_find(g, p, &f);
        done[p] = strcmp(f.state, "missing") != 0;
        cJSON_Delete(f.run);
        cJSON_Delete(f.status);
        if (!done[p])
            return 0;
    }
    return 1;
}

/* A CSV field: quoted when it holds a comma, a quote or a line break. */
static void rs_csv_field(FILE *f, const char *s)
{
    if (strpbrk(s, ",\"\r\n") == NULL) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* One placement of a JSON row as report/'s result. */
static void rs_grid_result(const cJSON *o, rs_result *r, int *checked)
{
    if (cJSON_IsNull(o)) { /* a placement the collective does not run (sendrecv in place) */
        r->time_us = -1;
        return;
    }
    const cJSON *w = cJSON_GetObjectItem(o, "wrong");
    r->time_us = cJSON_GetNumberValue(cJSON_GetObjectItem(o, "time_us"));
    r->algbw = cJSON_GetNumberValue(cJSON_GetObjectItem(o, "algbw_gbps"));
    r->busbw = cJSON_GetNumberValue(cJSON_GetObjectItem(o, "busbw_gbps"));
    r->wrong = cJSON_IsNumber(w) ? (uint64_t)w->valuedouble : 0;
    *checked |= cJSON_IsNumber(w);
}

/* A run JSON row as report/'s row, which writes the run's CSV lines and plots: 0, or -1 when it
 * names something this build does not know. */
static int rs_grid_row(const cJSON *j, rs_row *r, int *checked)
{
    int dtype, op = 0, algo;
    rs_coll coll;
    const char *redop = cJSON_GetStringValue(cJSON_GetObjectItem(j, "redop"));
    memset(r, 0, sizeof *r);
    if (rs_coll_parse(cJSON_GetStringValue(cJSON_GetObjectItem(j, "collective")), &coll) != 0 ||
        ncl_name_parse(NCL_NAMES_DTYPE, cJSON_GetStringValue(cJSON_GetObjectItem(j, "type")), &dtype) != 0 ||
        ncl_name_parse(NCL_NAMES_ALGO, cJSON_GetStringValue(cJSON_GetObjectItem(j, "algo")), &algo) != 0)
        return -1;
    r->has_op = redop && strcmp(redop, "none") != 0 && ncl_name_parse(NCL_NAMES_OP, redop, &op) == 0;
    r->coll = coll;
    r->dtype = (ncl_dtype)dtype;
    r->op = (ncl_op)op;
    r->algo = (ncl_algo)algo;
    r->root = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(j, "root"));
    r->size = (uint64_t)cJSON_GetNumberValue(cJSON_GetObjectItem(j, "size"));
    r->count = (uint64_t)cJSON_GetNumberValue(cJSON_GetObjectItem(j, "count"));
    r->memcpy_gbps = -1;
    rs_grid_result(cJSON_GetObjectItem(j, "out_of_place"), &r->res[0], checked);
    rs_grid_result(cJSON_GetObjectItem(j, "in_place"), &r->res[1], checked);
    return 0;
}

/* A point's rows: kept for the plot, and as CSV lines (report/'s, as `run --csv` writes them)
 * each after the point's coordinates. */
static void rs_grid_csv_point(rs_grid *g, size_t p, const cJSON *run, rs_rows *rows, FILE *csv)
{
    size_t idx[64];
    char *text = NULL;
    size_t len = 0;
    rs_grid_coords(g, p, idx);
    memset(rows, 0, sizeof *rows);
    rows->nranks = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(run, "ranks"));
    for (int pass = 0; pass < 2; pass++) { /* first whether any row was checked, then the rows */
        const cJSON *j;
        int checked = 0;
        cJSON_ArrayForEach(j, cJSON_GetObjectItem(run, "rows")) {
            rs_row r;
            if (rs_grid_row(j, &r, &checked) == 0 && pass == 1)
                rs_rows_add(rows, &r);
        }
        if (pass == 0) {
            rows->check = checked;
            rows->csv = open_memstream(&text, &len);
        }
    }
    if (rows->csv == NULL)
        return;
    fclose(rows->csv);
    rows->csv = NULL;
    for (char *line = text; line && *line;) {
        size_t n = strcspn(line, "\n");
        for (size_t i = 0; i < g->naxes; i++) {
            rs_csv_field(csv, g->axes[i].texts[idx[i]]);
            fputc(',', csv);
        }
        fprintf(csv, "%zu,%.*s\n", p, (int)n, line);
        line += n + (line[n] == '\n');
    }
    free(text);
}

/* A point's entry in sweep.json, and its rows (the run's, after the coordinates and the point). */
static void rs_grid_json_point(rs_grid *g, size_t p, const rs_found *f, cJSON *points, cJSON *rows)
{
    size_t idx[64];
    char name[128];
    rs_grid_coords(g, p, idx);
    rs_grid_point_name(g, p, name, sizeof name);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "point", (double)p);
    cJSON_AddStringToObject(o, "name", name);
    cJSON *coords = cJSON_AddObjectToObject(o, "coordinates");
    for (size_t i = 0; i < g->naxes; i++)
        cJSON_AddStringToObject(coords, g->axes[i].key, g->axes[i].texts[idx[i]]);
    cJSON_AddStringToObject(o, "status", f->state);
    static const char *const copied[] = {"exit", "signal", "timed_out", "seconds", "error"};
    for (size_t k = 0; f->status && k < sizeof copied / sizeof *copied; k++) {
        const cJSON *v = cJSON_GetObjectItem(f->status, copied[k]);
        if (v)
            cJSON_AddItemToObject(o, copied[k], cJSON_Duplicate(v, 1));
    }
    const cJSON *run_rows = cJSON_GetObjectItem(f->run, "rows"), *j;
    cJSON_AddNumberToObject(o, "rows", cJSON_GetArraySize(run_rows));
    if (f->run && !cJSON_HasObjectItem(o, "error") && cJSON_HasObjectItem(f->run, "error"))
        cJSON_AddItemToObject(o, "error", cJSON_Duplicate(cJSON_GetObjectItem(f->run, "error"), 1));
    if (f->state[0] == 'm')
        cJSON_AddStringToObject(o, "error", "no outcome: not run yet, or its files are of an older grid or base");
    const cJSON *training = cJSON_GetObjectItem(f->run, "training"); /* a training scenario's figures */
    if (cJSON_IsObject(training))
        cJSON_AddItemToObject(o, "training", cJSON_Duplicate(training, 1));
    cJSON_AddItemToArray(points, o);
    cJSON_ArrayForEach(j, run_rows) {
        cJSON *row = cJSON_CreateObject(), *field;
        for (size_t i = 0; i < g->naxes; i++)
            cJSON_AddStringToObject(row, g->axes[i].key, g->axes[i].texts[idx[i]]);
        cJSON_AddNumberToObject(row, "point", (double)p);
        cJSON_ArrayForEach(field, j)
            cJSON_AddItemToObject(row, field->string, cJSON_Duplicate(field, 1));
        cJSON_AddItemToArray(rows, row);
    }
}

/* Writes a file whole through a temporary name; 0, or RS_EXIT_USAGE after a message. */
static int rs_grid_save(const char *path, const char *text, size_t len, FILE *err)
{
    char tmp[PATH_MAX + 64];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    int ok = f && fwrite(text, 1, len, f) == len;
    if (f)
        ok &= fclose(f) == 0;
    if (!ok || rename(tmp, path) != 0) {
        fprintf(err, "ringsim: sweep: cannot write '%s': %s\n", path, strerror(errno));
        return RS_EXIT_USAGE;
    }
    return 0;
}

static int rs_grid_plot(rs_grid *g, rs_rows *sets, const char *plot_path, FILE *err)
{
    const rs_rows **used = calloc(g->npoints + 1, sizeof *used);
    char **names = calloc(g->npoints + 1, sizeof *names);
    int n = 0, rc = RS_EXIT_USAGE;
    for (size_t p = 0; used && names && p < g->npoints; p++) {
        size_t idx[64], at = 0;
        char label[120] = "";
        if (sets[p].n == 0)
            continue;
        rs_grid_coords(g, p, idx);
        for (size_t i = 0; i < g->naxes && at < sizeof label; i++) /* the keys that vary name a curve */
            if (g->axes[i].nvalues > 1)
                at += (size_t)snprintf(label + at, sizeof label - at, "%s%s=%s", at ? " " : "", g->axes[i].label,
                                       g->axes[i].texts[idx[i]]);
        if (at == 0)
            snprintf(label, sizeof label, "point %zu", p);
        used[n] = &sets[p];
        if ((names[n++] = strdup(label)) == NULL)
            break;
    }
    char title[300];
    snprintf(title, sizeof title, "ringsim sweep: %s", g->name);
    if (used && names && n == 0) {
        fprintf(err, "ringsim: sweep: --plot: no point has rows yet: nothing to draw\n");
        rc = 0;
    } else if (used && names)
        rc = rs_rows_plot(used, (const char *const *)names, n, plot_path, title, err);
    else
        fprintf(err, "ringsim: sweep: --plot: out of memory\n");
    for (int i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
    free(used);
    return rc;
}

/* A training scenario's point in sweep_training.csv: the coordinates, the point, then the run's
 * `training` figures (what a fusion or micro-batch sweep compares). */
static const char *const training_fields[] = {"model", "fusion", "buckets", "iteration_us", "compute_us",
                                              "allreduce_us", "exposed_us", "hidden", "samples_per_s",
                                              "efficiency"};

static int rs_grid_training_point(rs_grid *g, size_t p, const cJSON *run, FILE *csv)
{
    const cJSON *t = cJSON_GetObjectItem(run, "training");
    if (!cJSON_IsObject(t))
        return 0;
    size_t idx[64];
    rs_grid_coords(g, p, idx);
    for (size_t i = 0; i < g->naxes; i++) {
        rs_csv_field(csv, g->axes[i].texts[idx[i]]);
        fputc(',', csv);
    }
    fprintf(csv, "%zu", p);
    for (size_t k = 0; k < sizeof training_fields / sizeof *training_fields; k++) {
        const cJSON *v = cJSON_GetObjectItem(t, training_fields[k]);
        fputc(',', csv);
        if (cJSON_IsString(v))
            rs_csv_field(csv, v->valuestring);
        else if (cJSON_IsNumber(v))
            fprintf(csv, "%.10g", v->valuedouble);
    }
    fputc('\n', csv);
    return 1;
}

int rs_grid_merge(rs_grid *g, const char *plot_path, rs_grid_merged *m, FILE *err)
{
    memset(m, 0, sizeof *m);
    char *csvtext = NULL, path[PATH_MAX];
    size_t csvlen = 0;
    FILE *csv = open_memstream(&csvtext, &csvlen);
    char *traintext = NULL;
    size_t trainlen = 0, trained = 0;
    FILE *train = open_memstream(&traintext, &trainlen);
    rs_rows *sets = calloc(g->npoints, sizeof *sets);
    cJSON *doc = cJSON_CreateObject();
    if (csv == NULL || train == NULL || sets == NULL || doc == NULL) {
        fprintf(err, "ringsim: sweep: out of memory\n");
        if (csv)
            fclose(csv);
        if (train)
            fclose(train);
        free(csvtext), free(traintext), free(sets), cJSON_Delete(doc);
        return RS_EXIT_USAGE;
    }
    for (size_t i = 0; i < g->naxes; i++) {
        rs_csv_field(train, g->axes[i].key);
        fputc(',', train);
    }
    fprintf(train, "point");
    for (size_t k = 0; k < sizeof training_fields / sizeof *training_fields; k++)
        fprintf(train, ",%s", training_fields[k]);
    fputc('\n', train);
    for (size_t i = 0; i < g->naxes; i++) {
        rs_csv_field(csv, g->axes[i].key);
        fputc(',', csv);
    }
    fprintf(csv, "point,");
    rs_rows_csv_header(csv);
    cJSON_AddStringToObject(doc, "program", "ringsim");
    cJSON_AddStringToObject(doc, "command", "sweep");
    cJSON_AddStringToObject(doc, "grid", g->path);
    cJSON_AddStringToObject(doc, "base", g->base);
    cJSON *keys = cJSON_AddArrayToObject(doc, "keys");
    for (size_t i = 0; i < g->naxes; i++)
        cJSON_AddItemToArray(keys, cJSON_CreateString(g->axes[i].key));
    cJSON *points = cJSON_AddArrayToObject(doc, "points"), *rows = cJSON_AddArrayToObject(doc, "rows");
    for (size_t p = 0; p < g->npoints; p++) {
        rs_found f;
        rs_grid_find(g, p, &f);
        m->ok += f.state[0] == 'o';
        m->failed += f.state[0] == 'f';
        m->missing += f.state[0] == 'm';
        if (f.run) {
            rs_grid_csv_point(g, p, f.run, &sets[p], csv);
            trained += (size_t)rs_grid_training_point(g, p, f.run, train);
        }
        rs_grid_json_point(g, p, &f, points, rows);
        cJSON_Delete(f.run);
        cJSON_Delete(f.status);
    }
    m->rows = (size_t)cJSON_GetArraySize(rows);
    m->trained = trained;
    cJSON *sum = cJSON_AddObjectToObject(doc, "summary");
    cJSON_AddNumberToObject(sum, "points", (double)g->npoints);
    cJSON_AddNumberToObject(sum, "ok", (double)m->ok);
    cJSON_AddNumberToObject(sum, "failed", (double)m->failed);
    cJSON_AddNumberToObject(sum, "missing", (double)m->missing);
    cJSON_AddNumberToObject(sum, "rows", (double)m->rows);
    cJSON_AddStringToObject(doc, "result", m->failed ? "FAILED" : m->missing ? "INCOMPLETE" : "OK");
    fclose(csv);
    fclose(train);
    char *json = cJSON_Print(doc);
    int rc = json ? 0 : RS_EXIT_USAGE;
    snprintf(path, sizeof path, "%s/sweep.csv", g->out);
    if (rc == 0)
        rc = rs_grid_save(path, csvtext, csvlen, err);
    snprintf(path, sizeof path, "%s/sweep_training.csv", g->out);
    if (rc == 0 && trained)
        rc = rs_grid_save(path, traintext, trainlen, err);
    snprintf(path, sizeof path, "%s/sweep.json", g->out);
    if (rc == 0)
        rc = rs_grid_save(path, json, strlen(json), err);
    if (rc == 0 && plot_path)
        rc = rs_grid_plot(g, sets, plot_path, err);
    for (size_t p = 0; p < g->npoints; p++)
        rs_rows_free(&sets[p]);
    free(sets), free(csvtext), free(traintext), free(json);
    cJSON_Delete(doc);
    return rc;
}
