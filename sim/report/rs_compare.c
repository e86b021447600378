/* rs_compare.c — two runs side by side: reads their JSON documents, prints times, busbw and ratios (or two training steps' summaries), as a table, JSON and a chart. */
#include "rs_compare.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "ncl/ncl_names.h"


int rs_compare_read(rs_compare_side *s, const char *json_path, FILE *err)
{
    FILE *f = fopen(json_path, "r");
    char *text = NULL;
    long len = -1;
    if (f && fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (text = malloc((size_t)len + 1)) != NULL && fread(text, 1, (size_t)len, f) == (size_t)len)
        text[len] = '\0';
    else {
        free(text);
        text = NULL;
    }
    if (f)
        fclose(f);
    cJSON *doc = text ? cJSON_Parse(text) : NULL;
    free(text);
    cJSON *rows = doc ? cJSON_GetObjectItemCaseSensitive(doc, "rows") : NULL;
    cJSON *train = doc ? cJSON_GetObjectItemCaseSensitive(doc, "training") : NULL;
    if (cJSON_IsObject(train)) {
        s->training = 1;
        for (int i = 0; i < RS_TRAIN_FIELDS; i++) {
            cJSON *v = cJSON_GetObjectItemCaseSensitive(train, rs_train_fields[i].key);
            s->train[i] = cJSON_IsNumber(v) ? v->valuedouble : 0;
        }
        cJSON *f = cJSON_GetObjectItemCaseSensitive(train, "fusion");
        snprintf(s->fusion, sizeof s->fusion, "%s", cJSON_IsString(f) ? f->valuestring : "?");
    }
    if (!cJSON_IsArray(rows)) {
        fprintf(err, "ringsim: compare: scenario %s (%s): no readable results\n", s->label, s->path);
        cJSON_Delete(doc);
        return RS_EXIT_USAGE;
    }
    cJSON *r;
    cJSON_ArrayForEach(r, rows)
    {
        cJSON *coll = cJSON_GetObjectItemCaseSensitive(r, "collective");
        cJSON *size = cJSON_GetObjectItemCaseSensitive(r, "size");
        cJSON *oop = cJSON_GetObjectItemCaseSensitive(r, "out_of_place");
        cJSON *t = oop ? cJSON_GetObjectItemCaseSensitive(oop, "time_us") : NULL;
        cJSON *bw = oop ? cJSON_GetObjectItemCaseSensitive(oop, "busbw_gbps") : NULL;
        rs_coll c;
        if (!cJSON_IsString(coll) || rs_coll_parse(coll->valuestring, &c) != 0 || !cJSON_IsNumber(size) || !cJSON_IsNumber(t) || !cJSON_IsNumber(bw))
            continue;
        rs_row row;
        memset(&row, 0, sizeof row);
        row.coll = c;
        row.size = (uint64_t)size->valuedouble;
        row.res[0].time_us = t->valuedouble;
        row.res[0].busbw = bw->valuedouble;
        rs_rows_add(&s->rows, &row);
    }
    cJSON_Delete(doc);
    return 0;
}

static const rs_row *rs_compare_side_find(const rs_compare_side *s, int coll, uint64_t size)
{
    for (int i = 0; i < s->rows.n; i++)
        if ((int)s->rows.v[i].coll == coll && s->rows.v[i].size == size)
            return &s->rows.v[i];
    return NULL;
}

typedef struct rs_key {
    int coll;
    uint64_t size;
} rs_key;

static int rs_key_cmp(const void *a, const void *b)
{
    const rs_key *x = a, *y = b;
    if (x->coll != y->coll)
        return x->coll < y->coll ? -1 : 1;
    return x->size < y->size ? -1 : x->size > y->size;
}

static cJSON *rs_compare_side_json(const rs_compare_side *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "path", s->path);
    cJSON_AddStringToObject(o, "name", s->name);
    cJSON_AddStringToObject(o, "summary", s->summary);
    return o;
}

static cJSON *rs_point_json(const rs_row *r)
{
    if (r == NULL)
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "time_us", r->res[0].time_us);
    cJSON_AddNumberToObject(o, "busbw_gbps", r->res[0].busbw);
    return o;
}

static void rs_cell(char *buf, size_t len, const rs_row *r, int busbw)
{
    if (r == NULL)
        snprintf(buf, len, "-");
    else if (busbw)
        snprintf(buf, len, "%.2f", r->res[0].busbw);
    else
        snprintf(buf, len, r->res[0].time_us < 1e5 ? "%.2f" : "%.0f", r->res[0].time_us);
}

/* Writes doc to f (and closes it), then frees doc. 0, or -1 after the message. */
static int rs_compare_write_json(cJSON *doc, FILE *f, const char *path, FILE *err)
{
    char *text = cJSON_Print(doc);
    int bad = text == NULL || fputs(text, f) == EOF || fputc('\n', f) == EOF;
    bad |= fclose(f) != 0;
    if (bad)
        fprintf(err, "ringsim: --json: cannot write '%s'\n", path);
    free(text);
    cJSON_Delete(doc);
    return bad ? -1 : 0;
}


int rs_compare_print(const rs_compare_side side[2], FILE *out, FILE *json, const char *json_path, const char *plot_path,
                     FILE *err)
{
    int status = RS_EXIT_OK;
    if (side[0].training != side[1].training) {
        fprintf(err, "ringsim: compare: scenario %s is a training step and %s a size sweep: nothing to compare "
                "(allowed: two sweeps, or two training scenarios)\n", side[0].training ? "A" : "B",
                side[0].training ? "B" : "A");
        status = RS_EXIT_USAGE;
        goto out;
    }
    if (side[0].training) {
        fprintf(out, "# ringsim compare: training steps (per iteration; ratio = B / A)\n");
        for (int k = 0; k < 2; k++)
            fprintf(out, "# %s: %s (%s): %s\n", side[k].label, side[k].name, side[k].path, side[k].summary);
        fprintf(out, "#%15s  %14s  %14s  %8s\n", "", "A", "B", "B/A");
        for (int i = 0; i < RS_TRAIN_FIELDS; i++) {
            double a = side[0].train[i] * rs_train_fields[i].scale, b = side[1].train[i] * rs_train_fields[i].scale;
            char ratio[32] = "-";
            if (a > 0)
                snprintf(ratio, sizeof ratio, "%.3f", b / a);
            fprintf(out, " %15s  %14.1f  %14.1f  %8s\n", rs_train_fields[i].label, a, b, ratio);
        }
        if (json) {
            cJSON *doc = cJSON_CreateObject();
            cJSON_AddStringToObject(doc, "program", "ringsim");
            cJSON_AddStringToObject(doc, "command", "compare");
            for (int k = 0; k < 2; k++) {
                cJSON *j = rs_compare_side_json(&side[k]);
                cJSON *t = cJSON_AddObjectToObject(j, "training");
                cJSON_AddStringToObject(t, "fusion", side[k].fusion);
                for (int i = 0; i < RS_TRAIN_FIELDS; i++)
                    cJSON_AddNumberToObject(t, rs_train_fields[i].key, side[k].train[i]);
                cJSON_AddItemToObject(doc, k ? "b" : "a", j);
            }
            if (rs_compare_write_json(doc, json, json_path, err) != 0)
                status = RS_EXIT_USAGE;
            json = NULL;
        }
        goto out;
    }

    int nkeys = 0;
    rs_key *keys = calloc((size_t)(side[0].rows.n + side[1].rows.n) + 1, sizeof *keys);
    if (keys == NULL) {
        status = RS_EXIT_USAGE;
        goto out;
    }
    int missing = 0;
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < side[k].rows.n; i++) {
            const rs_row *r = &side[k].rows.v[i];
            if (k == 1 && rs_compare_side_find(&side[0], (int)r->coll, r->size))
                continue;
            if (k == 0 && !rs_compare_side_find(&side[1], (int)r->coll, r->size))
                missing = 1;
            if (k == 1)
                missing = 1;
            keys[nkeys++] = (rs_key){(int)r->coll, r->size};
        }
    qsort(keys, (size_t)nkeys, sizeof *keys, rs_key_cmp);

    fprintf(out, "# ringsim compare (simulated times, out of place; ratio = time B / time A)\n");
    for (int k = 0; k < 2; k++)
        fprintf(out, "# %s: %s (%s): %s\n", side[k].label, side[k].name, side[k].path, side[k].summary);
    if (missing)
        fprintf(out, "# note: the two scenarios do not run the same collectives and sizes; '-' marks a row "
                     "only the other one has\n");
    fprintf(out, "#%15s  %12s  %12s  %12s  %9s  %9s  %8s\n", "collective", "size", "time A", "time B",
            "busbw A", "busbw B", "B/A");
    fprintf(out, "#%15s  %12s  %12s  %12s  %9s  %9s  %8s\n", "", "(B)", "(us)", "(us)", "(GB/s)", "(GB/s)", "");
    cJSON *doc = json ? cJSON_CreateObject() : NULL, *jrows = NULL;
    if (doc) {
        cJSON_AddStringToObject(doc, "program", "ringsim");
        cJSON_AddStringToObject(doc, "command", "compare");
        cJSON_AddItemToObject(doc, "a", rs_compare_side_json(&side[0]));
        cJSON_AddItemToObject(doc, "b", rs_compare_side_json(&side[1]));
        jrows = cJSON_AddArrayToObject(doc, "rows");
    }
    for (int i = 0; i < nkeys; i++) {
        const rs_row *a = rs_compare_side_find(&side[0], keys[i].coll, keys[i].size);
        const rs_row *b = rs_compare_side_find(&side[1], keys[i].coll, keys[i].size);
        char ta[32], tb[32], ba[32], bb[32], ratio[32] = "-";
        rs_cell(ta, sizeof ta, a, 0);
        rs_cell(tb, sizeof tb, b, 0);
        rs_cell(ba, sizeof ba, a, 1);
        rs_cell(bb, sizeof bb, b, 1);
        double q = a && b && a->res[0].time_us > 0 ? b->res[0].time_us / a->res[0].time_us : 0;
        if (q > 0)
            snprintf(ratio, sizeof ratio, "%.3f", q);
        fprintf(out, " %15s  %12llu  %12s  %12s  %9s  %9s  %8s\n", rs_coll_name((rs_coll)keys[i].coll),
                (unsigned long long)keys[i].size, ta, tb, ba, bb, ratio);
        if (jrows) {
            cJSON *j = cJSON_CreateObject();
            cJSON_AddStringToObject(j, "collective", rs_coll_name((rs_coll)keys[i].coll));
            cJSON_AddNumberToObject(j, "size", (double)keys[i].size);
            cJSON_AddItemToObject(j, "a", rs_point_json(a));
            cJSON_AddItemToObject(j, "b", rs_point_json(b));
            if (q > 0)
                cJSON_AddNumberToObject(j, "ratio", q);
            else
                cJSON_AddNullToObject(j, "ratio");
            cJSON_AddItemToArray(jrows, j);
        }
    }
    fflush(out);
    free(keys);
    if (doc) {
        if (rs_compare_write_json(doc, json, json_path, err) != 0)
            status = RS_EXIT_USAGE;
        json = NULL;
    }
    if (plot_path) {
        const rs_rows *sets[2] = {&side[0].rows, &side[1].rows};
        char na[160], nb[160], title[400];
        snprintf(na, sizeof na, "A %s", side[0].name);
        snprintf(nb, sizeof nb, "B %s", side[1].name);
        const char *names[2] = {na, nb};
        snprintf(title, sizeof title, "ringsim compare: A %s vs B %s", side[0].name, side[1].name);
        int rc = rs_rows_plot(sets, names, 2, plot_path, title, err);
        status = rc > status ? rc : status;
    }

out:
    if (json)
        fclose(json);
    return status;
}

void rs_compare_side_free(rs_compare_side *s) { rs_rows_free(&s->rows); }
