/* rs_meas_out.c — a measured table shown: its format, metadata and normalized rows as text, or all of it as JSON. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "rs_meas_int.h"

/* Decimals a number of resolution res was printed with; 3 for full precision. */
static int rs_out_decimals(double res)
{
    if (!(res > 0))
        return 3;
    int d = (int)ceil(-log10(res) - 1e-9);
    return d < 0 ? 0 : d > 6 ? 6 : d;
}

static const char *rs_out_num(char *buf, size_t len, double v, double res)
{
    if (isnan(v))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.*f", rs_out_decimals(res), v);
    return buf;
}

static const char *rs_out_check(rs_meas_check c)
{
    return c == RS_MEAS_CHECK_PASS ? "pass" : c == RS_MEAS_CHECK_FAIL ? "FAIL" : "-";
}

void rs_meas_print(const rs_meas_table *t, FILE *out)
{
    const char *fmt = rs_meas_format_name(t->format);
    fprintf(out, "# %s: %s", t->name ? t->name : "(input)", fmt);
    /* the tool when the format's name does not say it (rccl-tests), its version when printed */
    if (t->version[0] || (t->tool[0] && strncmp(fmt, t->tool, strlen(t->tool)) != 0))
        fprintf(out, " (%s%s%s)", t->tool, t->version[0] ? " " : "", t->version);
    if (t->program[0])
        fprintf(out, ", %s", t->program);
    fputc('\n', out);
    if (strncmp(t->coll_from, "rows: ", 6) == 0) /* a ringsim run of several collectives */
        fprintf(out, "#   collectives %s", t->coll_from + 6);
    else
        fprintf(out, "#   collective %s (%s)", t->coll ? rs_meas_coll_name(t->coll) : "?",
                t->coll_from[0] ? t->coll_from : "not named");
    if (t->ranks > 0)
        fprintf(out, "; %d ranks (%s)", t->ranks, t->ranks_from);
    else
        fprintf(out, "; ranks unknown");
    if (t->hosts > 0)
        fprintf(out, " on %d host%s", t->hosts, t->hosts > 1 ? "s" : "");
    if (t->nthreads > 0)
        fprintf(out, "; nThread %d nGpus %d", t->nthreads, t->ngpus);
    if (t->accel[0])
        fprintf(out, "; buffers %s", t->accel);
    if (t->dtype[0])
        fprintf(out, "; type %s", t->dtype);
    fputc('\n', out);
    if (t->command[0])
        fprintf(out, "#   command: %s\n", t->command);
    if (t->maxbytes || t->iters >= 0) {
        fprintf(out, "#  ");
        if (t->maxbytes)
            fprintf(out, " sweep %llu..%llu B;", (unsigned long long)t->minbytes, (unsigned long long)t->maxbytes);
        if (t->iters >= 0)
            fprintf(out, " %d iterations", t->iters);
        if (t->warmup_iters >= 0)
            fprintf(out, " after %d warm-up", t->warmup_iters);
        fputc('\n', out);
    }
    if (t->out_of_bounds >= 0 || !isnan(t->avg_busbw) || t->log_lines) {
        fprintf(out, "#  ");
        if (t->out_of_bounds >= 0)
            fprintf(out, " out of bounds values %ld;", t->out_of_bounds);
        if (!isnan(t->avg_busbw))
            fprintf(out, " avg bus bandwidth %g GB/s;", t->avg_busbw);
        if (t->log_lines)
            fprintf(out, " %ld NCCL debug line%s between the table's lines (not rows);", t->log_lines,
                    t->log_lines > 1 ? "s" : "");
        fputc('\n', out);
    }
    if (t->notes[0])
        fprintf(out, "#   notes: %s\n", t->notes);
    /* the device lines by host: "node1: 8 ranks (0-7)", and the device names once */
    if (t->ndevices) {
        fprintf(out, "#   devices:");
        int shown = 0;
        for (size_t i = 0; i < t->ndevices; i++) {
            size_t j = 0;
            while (j < i && strcmp(t->devices[j].host, t->devices[i].host) != 0)
                j++;
            if (j < i)
                continue;
            if (shown++ == 8) {
                fprintf(out, " ...");
                break;
            }
            int n = 0, lo = t->devices[i].rank, hi = lo;
            for (size_t k = i; k < t->ndevices; k++)
                if (strcmp(t->devices[k].host, t->devices[i].host) == 0) {
                    n++;
                    lo = t->devices[k].rank < lo ? t->devices[k].rank : lo;
                    hi = t->devices[k].rank > hi ? t->devices[k].rank : hi;
                }
            fprintf(out, "%s %s: %d rank%s (%d-%d)", shown > 1 ? "," : "", t->devices[i].host, n, n > 1 ? "s" : "", lo, hi);
        }
        for (size_t i = 0; i < t->ndevices; i++) {
            size_t j = 0;
            while (j < i && strcmp(t->devices[j].name, t->devices[i].name) != 0)
                j++;
            if (j == i && t->devices[i].name[0])
                fprintf(out, "; %s", t->devices[i].name);
        }
        fputc('\n', out);
    }
    if (t->nrows) {
        fprintf(out, "# %14s %6s %14s %14s %12s %12s %9s %9s %8s %5s %6s\n", "collective", "ranks", "bytes", "nccl_bytes",
                "placement", "time_us", "algbw", "busbw", "#wrong", "check", "line");
        for (size_t i = 0; i < t->nrows; i++) {
            const rs_meas_row *r = &t->rows[i];
            char ranks[16], nb[24], tm[32], a[32], b[32], w[24];
            snprintf(ranks, sizeof ranks, r->ranks > 0 ? "%d" : "-", r->ranks);
            snprintf(nb, sizeof nb, r->nccl_bytes || !r->bytes ? "%llu" : "-", (unsigned long long)r->nccl_bytes);
            snprintf(w, sizeof w, r->wrong >= 0 ? "%lld" : "-", (long long)r->wrong);
            fprintf(out, "  %14s %6s %14llu %14s %12s %12s %9s %9s %8s %5s %6d\n", rs_meas_coll_name(r->coll), ranks,
                    (unsigned long long)r->bytes, nb, rs_meas_place_name(r->place),
                    rs_out_num(tm, sizeof tm, r->time_us, r->time_res), rs_out_num(a, sizeof a, r->algbw, r->algbw_res),
                    rs_out_num(b, sizeof b, r->busbw, r->busbw_res), w, rs_out_check(r->check), r->line);
        }
    }
    if (t->nlinks) {
        fprintf(out, "# %8s %-11s %12s %12s %9s %9s %9s %6s\n", "link", "verdict", "rtt_med_us", "rtt_max_us", "gbps",
                "gbps_min", "gbps_max", "line");
        for (size_t i = 0; i < t->nlinks; i++) {
            const rs_meas_link *l = &t->links[i];
            char name[32], m[32], x[32], g[32], gl[32], gh[32];
            snprintf(name, sizeof name, "%d->%d", l->src, l->dst);
            fprintf(out, "  %8s %-11s %12s %12s %9s %9s %9s %6d\n", name, l->verdict,
                    rs_out_num(m, sizeof m, l->rtt_median_us, 0.1), rs_out_num(x, sizeof x, l->rtt_max_us, 0.1),
                    rs_out_num(g, sizeof g, l->gbps, 0.001), rs_out_num(gl, sizeof gl, l->gbps_min, 0.001),
                    rs_out_num(gh, sizeof gh, l->gbps_max, 0.001), l->line);
        }
    }
}

/* A number, or null for NAN (and for an unknown count given as < 0 where `neg_null`). */
static void rs_out_add_num(cJSON *o, const char *key, double v)
{
    if (isnan(v) || !isfinite(v))
        cJSON_AddNullToObject(o, key);
    else
        cJSON_AddNumberToObject(o, key, v);
}

static void rs_out_add_str(cJSON *o, const char *key, const char *s)
{
    if (s && s[0])
        cJSON_AddStringToObject(o, key, s);
    else
        cJSON_AddNullToObject(o, key);
}

static cJSON *rs_out_table(const rs_meas_table *t)
{
    cJSON *o = cJSON_CreateObject();
    if (o == NULL)
        return NULL;
    cJSON_AddStringToObject(o, "path", t->name ? t->name : "");
    cJSON_AddStringToObject(o, "format", rs_meas_format_name(t->format));
    rs_out_add_str(o, "tool", t->tool);
    rs_out_add_str(o, "version", t->version);
    rs_out_add_str(o, "program", t->program);
    rs_out_add_str(o, "command", t->command);
    rs_out_add_str(o, "collective", t->coll ? rs_meas_coll_name(t->coll) : NULL);
    rs_out_add_str(o, "collective_from", t->coll_from);
    rs_out_add_num(o, "ranks", t->ranks > 0 ? t->ranks : NAN);
    rs_out_add_str(o, "ranks_from", t->ranks_from);
    rs_out_add_num(o, "hosts", t->hosts > 0 ? t->hosts : NAN);
    rs_out_add_num(o, "nthreads", t->nthreads > 0 ? t->nthreads : NAN);
    rs_out_add_num(o, "ngpus", t->ngpus > 0 ? t->ngpus : NAN);
    rs_out_add_num(o, "minbytes", t->maxbytes ? (double)t->minbytes : NAN);
    rs_out_add_num(o, "maxbytes", t->maxbytes ? (double)t->maxbytes : NAN);
    rs_out_add_num(o, "iters", t->iters >= 0 ? t->iters : NAN);
    rs_out_add_num(o, "warmup_iters", t->warmup_iters >= 0 ? t->warmup_iters : NAN);
    rs_out_add_str(o, "accel", t->accel);
    rs_out_add_str(o, "type", t->dtype);
    cJSON_AddNumberToObject(o, "nccl_log_lines", (double)t->log_lines);
    rs_out_add_num(o, "out_of_bounds", t->out_of_bounds >= 0 ? (double)t->out_of_bounds : NAN);
    rs_out_add_num(o, "avg_busbw_gbps", t->avg_busbw);
    rs_out_add_str(o, "notes", t->notes);
    cJSON *devs = cJSON_AddArrayToObject(o, "devices");
    for (size_t i = 0; devs && i < t->ndevices; i++) {
        const rs_meas_device *d = &t->devices[i];
        cJSON *j = cJSON_CreateObject();
        if (j == NULL)
            break;
        cJSON_AddNumberToObject(j, "rank", d->rank);
        cJSON_AddStringToObject(j, "host", d->host);
        cJSON_AddNumberToObject(j, "device", d->device);
        cJSON_AddStringToObject(j, "name", d->name);
        cJSON_AddNumberToObject(j, "line", d->line);
        cJSON_AddItemToArray(devs, j);
    }
    cJSON *rows = cJSON_AddArrayToObject(o, "rows");
    for (size_t i = 0; rows && i < t->nrows; i++) {
        const rs_meas_row *r = &t->rows[i];
        cJSON *j = cJSON_CreateObject();
        if (j == NULL)
            break;
        cJSON_AddStringToObject(j, "collective", rs_meas_coll_name(r->coll));
        rs_out_add_num(j, "ranks", r->ranks > 0 ? r->ranks : NAN);
        cJSON_AddNumberToObject(j, "bytes", (double)r->bytes);
        rs_out_add_num(j, "nccl_bytes", r->nccl_bytes || !r->bytes ? (double)r->nccl_bytes : NAN);
        rs_out_add_num(j, "count", r->count >= 0 ? (double)r->count : NAN);
        rs_out_add_str(j, "type", r->dtype);
        rs_out_add_str(j, "redop", r->op);
        cJSON_AddNumberToObject(j, "root", r->root);
        rs_out_add_str(j, "placement", r->place ? rs_meas_place_name(r->place) : NULL);
        cJSON_AddNumberToObject(j, "time_us", r->time_us);
        cJSON_AddBoolToObject(j, "cpu_time", r->cpu_time);
        rs_out_add_num(j, "algbw_gbps", r->algbw);
        rs_out_add_num(j, "busbw_gbps", r->busbw);
        rs_out_add_num(j, "wrong", r->wrong >= 0 ? (double)r->wrong : NAN);
        rs_out_add_str(j, "check", r->check == RS_MEAS_CHECK_PASS ? "pass" : r->check == RS_MEAS_CHECK_FAIL ? "fail" : NULL);
        rs_out_add_num(j, "min_us", r->min_us);
        rs_out_add_num(j, "max_us", r->max_us);
        rs_out_add_num(j, "iterations", r->iters > 0 ? (double)r->iters : NAN);
        cJSON_AddNumberToObject(j, "time_res_us", r->time_res);
        cJSON_AddNumberToObject(j, "algbw_res_gbps", r->algbw_res);
        cJSON_AddNumberToObject(j, "busbw_res_gbps", r->busbw_res);
        cJSON_AddNumberToObject(j, "line", r->line);
        cJSON_AddItemToArray(rows, j);
    }
    cJSON *links = cJSON_AddArrayToObject(o, "links");
    for (size_t i = 0; links && i < t->nlinks; i++) {
        const rs_meas_link *l = &t->links[i];
        cJSON *j = cJSON_CreateObject();
        if (j == NULL)
            break;
        cJSON_AddNumberToObject(j, "src", l->src);
        cJSON_AddNumberToObject(j, "dst", l->dst);
        cJSON_AddStringToObject(j, "verdict", l->verdict);
        rs_out_add_num(j, "rtt_median_us", l->rtt_median_us);
        rs_out_add_num(j, "rtt_max_us", l->rtt_max_us);
        rs_out_add_num(j, "gbps", l->gbps);
        rs_out_add_num(j, "gbps_min", l->gbps_min);
        rs_out_add_num(j, "gbps_max", l->gbps_max);
        cJSON_AddNumberToObject(j, "line", l->line);
        cJSON_AddItemToArray(links, j);
    }
    return o;
}

char *rs_meas_json(const rs_meas_table *const *tables, size_t ntables)
{
    cJSON *doc = cJSON_CreateObject();
    if (doc == NULL)
        return NULL;
    cJSON_AddStringToObject(doc, "program", "ringsim");
    cJSON_AddStringToObject(doc, "command", "measured");
    cJSON *files = cJSON_AddArrayToObject(doc, "files");
    for (size_t i = 0; files && i < ntables; i++) {
        cJSON *t = rs_out_table(tables[i]);
        if (t == NULL) {
            cJSON_Delete(doc);
            return NULL;
        }
        cJSON_AddItemToArray(files, t);
    }
    char *text = cJSON_Print(doc);
    cJSON_Delete(doc);
    return text;
}
