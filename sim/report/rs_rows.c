/* rs_rows.c — keeps a run's rows; writes them as CSV and hands them to the plot. */
#include "rs_rows.h"

#include <stdlib.h>
#include <string.h>

#include "rs_plot.h"

void rs_rows_csv_header(FILE *f)
{
    fprintf(f, "collective,backend,ranks,algo,size,count,type,redop,root,placement,time_us,algbw_gbps,"
               "busbw_gbps,wrong\n");
}

/* Shortest of %.15g / %.17g that reads back as v: the same text cJSON writes for the JSON. */
static const char *rs_num(char *buf, size_t len, double v)
{
    snprintf(buf, len, "%.15g", v);
    if (strtod(buf, NULL) != v)
        snprintf(buf, len, "%.17g", v);
    return buf;
}

void rs_rows_add(void *ud, const rs_row *row)
{
    rs_rows *r = ud;
    if (r->n == r->cap) {
        int cap = r->cap ? 2 * r->cap : 64;
        rs_row *v = realloc(r->v, (size_t)cap * sizeof *v);
        if (v == NULL)
            return; /* the table is printed anyway; the CSV/plot lose this row */
        r->v = v;
        r->cap = cap;
    }
    r->v[r->n++] = *row;
    if (r->csv == NULL)
        return;
    static const char *const place[2] = {"out_of_place", "in_place"};
    for (int p = 0; p < 2; p++) {
        const rs_result *x = &row->res[p];
        char wrong[32] = "", t[40], a[40], b[40];
        if (x->time_us < 0) /* a placement it does not run (sendrecv in place) */
            continue;
        if (r->check)
            snprintf(wrong, sizeof wrong, "%llu", (unsigned long long)x->wrong);
        fprintf(r->csv, "%s,sim,%d,%s,%llu,%llu,%s,%s,%d,%s,%s,%s,%s,%s\n", rs_coll_name(row->coll),
                r->nranks, ncl_algo_name(row->algo), (unsigned long long)row->size,
                (unsigned long long)row->count, ncl_dtype_name(row->dtype),
                row->has_op ? ncl_op_name(row->op) : "none", row->root, place[p], rs_num(t, sizeof t, x->time_us),
                rs_num(a, sizeof a, x->algbw), rs_num(b, sizeof b, x->busbw), wrong);
    }
}

void rs_rows_free(rs_rows *r)
{
    free(r->v);
    r->v = NULL;
    r->n = r->cap = 0;
}

int rs_rows_plot(const rs_rows *const *sets, const char *const *names, int nsets, const char *path,
                 const char *title, FILE *err)
{
    int total = 0;
    for (int s = 0; s < nsets; s++)
        total += sets[s]->n;
    double *x = calloc((size_t)total + 1, sizeof *x), *y = calloc((size_t)total + 1, sizeof *y);
    rs_plot_series *series = calloc((size_t)nsets * RS_COLL_COUNT + 1, sizeof *series);
    char (*titles)[128] = calloc((size_t)nsets * RS_COLL_COUNT + 1, sizeof *titles);
    if (!x || !y || !series || !titles) {
        fprintf(err, "ringsim: --plot: out of memory\n");
        free(x), free(y), free(series), free(titles);
        return RS_EXIT_USAGE;
    }
    int ns = 0, used = 0;
    for (int s = 0; s < nsets; s++)
        for (int c = 0; c < RS_COLL_COUNT; c++) {
            int start = used;
            for (int i = 0; i < sets[s]->n; i++)
                if (sets[s]->v[i].coll == (rs_coll)c) {
                    x[used] = (double)sets[s]->v[i].size;
                    y[used] = sets[s]->v[i].res[0].busbw;
                    used++;
                }
            if (used == start)
                continue;
            if (names && names[s])
                snprintf(titles[ns], sizeof titles[ns], "%s: %s", names[s], rs_coll_name((rs_coll)c));
            else
                snprintf(titles[ns], sizeof titles[ns], "%s", rs_coll_name((rs_coll)c));
            series[ns] = (rs_plot_series){titles[ns], used - start, x + start, y + start};
            ns++;
        }
    int rc = rs_plot_busbw(path, title, series, ns, err);
    free(x), free(y), free(series), free(titles);
    return rc;
}
