/* rs_meas_json.c — the readers of JSON tables: nccl-tests -J output, ringsim run --json, ringsim bringup --json; each element located by its line. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "rs_meas_int.h"

/*
 * cJSON keeps no positions, so the lines come from a second, tiny scan of the text (already
 * proven valid by cJSON): the line where each element of a top-level array starts. nccl-tests
 * writes its whole document on one line, so there every message says line 1 and names the
 * element (results[3]) as well; a pretty-printed file (ringsim's, or jq's) gets real lines.
 */

typedef struct json_doc {
    const char *text;
    size_t len;
} json_doc;

static int json_line_at(const json_doc *d, size_t off)
{
    int line = 1;
    for (size_t i = 0; i < off && i < d->len; i++)
        line += d->text[i] == '\n';
    return line;
}

/* Skips a string starting at text[i] == '"'; returns the index after its closing quote. */
static size_t json_skip_string(const json_doc *d, size_t i)
{
    for (i++; i < d->len; i++) {
        if (d->text[i] == '\\')
            i++;
        else if (d->text[i] == '"')
            return i + 1;
    }
    return d->len;
}

/* Lines of the top-level key `key` (*keyline) and of each element of its array value (lines[],
 * up to n); returns how many elements were found. */
static size_t json_array_lines(const json_doc *d, const char *key, int *keyline, int *lines, size_t n)
{
    size_t klen = strlen(key), found = 0;
    int depth = 0, line = 1, in_target = 0, expect_key = 0, want_elem = 0;
    size_t i = 0;
    *keyline = 1;
    const char *pending = NULL;
    size_t pending_len = 0;
    while (i < d->len) {
        char ch = d->text[i];
        if (ch == '\n') {
            line++;
            i++;
            continue;
        }
        if (ch == ' ' || ch == '\t' || ch == '\r') {
            i++;
            continue;
        }
        if (want_elem && ch != ']') {
            if (found < n)
                lines[found] = line;
            found++;
            want_elem = 0;
        }
        if (ch == '"') {
            size_t e = json_skip_string(d, i);
            if (depth == 1 && expect_key) {
                pending = d->text + i + 1;
                pending_len = e - i - 2;
                expect_key = 0;
            }
            for (size_t k = i; k < e; k++)
                line += d->text[k] == '\n';
            i = e;
            continue;
        }
        if (ch == '{' || ch == '[') {
            depth++;
            if (depth == 1 && ch == '{')
                expect_key = 1;
            if (depth == 2 && ch == '[' && pending && pending_len == klen && !memcmp(pending, key, klen)) {
                in_target = 1;
                want_elem = 1;
            }
        } else if (ch == '}' || ch == ']') {
            if (depth == 2 && in_target)
                in_target = 0;
            depth--;
        } else if (ch == ',') {
            if (depth == 1)
                expect_key = 1;
            else if (depth == 2 && in_target)
                want_elem = 1;
        } else if (ch == ':' && depth == 1 && pending && pending_len == klen && !memcmp(pending, key, klen)) {
            *keyline = line;
        }
        if (depth == 1 && ch == ',')
            pending = NULL;
        i++;
    }
    return found;
}

/* The lines of one top-level array, for the messages about its elements. */
typedef struct json_list {
    const char *key;
    int keyline;
    int *lines;
    size_t n;
} json_list;

static int json_list_init(rs_meas_ctx *c, const json_doc *d, const cJSON *arr, const char *key, json_list *L)
{
    memset(L, 0, sizeof *L);
    L->key = key;
    size_t n = (size_t)cJSON_GetArraySize(arr);
    L->lines = calloc(n ? n : 1, sizeof *L->lines);
    if (L->lines == NULL)
        return rs_meas_fail(c, 1, "out of memory");
    L->n = json_array_lines(d, key, &L->keyline, L->lines, n);
    for (size_t i = L->n; i < n; i++)
        L->lines[i] = L->keyline;
    return 0;
}

static int json_line(const json_list *L, int i)
{
    return i >= 0 && (size_t)i < L->n ? L->lines[i] : L->keyline;
}

/* ---- typed getters: each fails naming the element ("results[3].size") and its line ---------- */

typedef struct json_at {
    rs_meas_ctx *c;
    const char *list; /* "results" */
    int index;        /* -1: a top-level key */
    int line;
} json_at;

static const char *json_where(const json_at *a, const char *key, char *buf, size_t len)
{
    const char *dot = key[0] ? "." : "";
    if (a->index >= 0)
        snprintf(buf, len, "%s[%d]%s%s", a->list, a->index, dot, key);
    else if (a->list[0])
        snprintf(buf, len, "%s%s%s", a->list, dot, key);
    else
        snprintf(buf, len, "%s", key[0] ? key : "(document)");
    return buf;
}

static int json_bad(const json_at *a, const char *key, const char *what)
{
    char w[96];
    return rs_meas_fail(a->c, a->line, "%s: %s", json_where(a, key, w, sizeof w), what);
}

/* A required number (finite). */
static int json_num(const json_at *a, const cJSON *o, const char *key, double *v)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
    if (x == NULL)
        return json_bad(a, key, "missing (expected: a number)");
    if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble))
        return json_bad(a, key, cJSON_IsString(x) ? "a string where a number belongs (nccl-tests writes NaN as \"nan\")"
                                                  : "not a number");
    *v = x->valuedouble;
    return 0;
}

/* A number or null (NAN). */
static int json_num_or_null(const json_at *a, const cJSON *o, const char *key, double *v)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
    if (x == NULL || cJSON_IsNull(x)) {
        *v = NAN;
        return 0;
    }
    return json_num(a, o, key, v);
}

/* A whole number in [lo, hi]. */
static int json_whole(const json_at *a, const cJSON *o, const char *key, double lo, double hi, double *v)
{
    if (json_num(a, o, key, v) != 0)
        return -1;
    if (*v != floor(*v) || *v < lo || *v > hi) {
        char m[128];
        snprintf(m, sizeof m, "%.17g is not a whole number from %.0f to %.0f", *v, lo, hi);
        return json_bad(a, key, m);
    }
    return 0;
}

static const char *json_str(const json_at *a, const cJSON *o, const char *key)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
    if (x == NULL || !cJSON_IsString(x)) {
        json_bad(a, key, x ? "not a string" : "missing (expected: a string)");
        return NULL;
    }
    return x->valuestring;
}

/* Every key of o must be one of `keys` (NULL-terminated): an unknown key is a column this
 * reader does not know, and guessing what it means is what must not happen. */
static int json_known(const json_at *a, const cJSON *o, const char *const *keys, const char *allowed)
{
    for (const cJSON *x = o->child; x; x = x->next) {
        int ok = 0;
        for (size_t k = 0; keys[k] && !ok; k++)
            ok = x->string && strcmp(x->string, keys[k]) == 0;
        if (!ok) {
            char q[80], m[RS_MEAS_ERRLEN];
            snprintf(m, sizeof m, "unknown key '%s' (allowed: %s)",
                     rs_meas_quote(q, sizeof q, x->string ? x->string : "", x->string ? strlen(x->string) : 0), allowed);
            return json_bad(a, "", m);
        }
    }
    return 0;
}

/* ---- nccl-tests -J ------------------------------------------------------------------------- */

static int json_nccl_place(const json_at *a, const cJSON *row, const char *key, rs_meas_row *r)
{
    static const char *const keys[] = {"time", "cpu_time", "alg_bw", "bus_bw", "nwrong", NULL};
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(row, key);
    json_at in = *a;
    char w[64];
    snprintf(w, sizeof w, "%s[%d].%s", a->list, a->index, key);
    in.list = w;
    in.index = -1;
    if (!cJSON_IsObject(p))
        return json_bad(a, key, "not an object (expected: {time, alg_bw, bus_bw, nwrong})");
    if (json_known(&in, p, keys, "time or cpu_time, alg_bw, bus_bw, nwrong") != 0)
        return -1;
    const char *tk = cJSON_GetObjectItemCaseSensitive(p, "cpu_time") ? "cpu_time" : "time";
    r->cpu_time = tk[0] == 'c';
    char k1[96], k2[96], k3[96], k4[96];
    snprintf(k1, sizeof k1, "%s.%s", key, tk);
    snprintf(k2, sizeof k2, "%s.alg_bw", key);
    snprintf(k3, sizeof k3, "%s.bus_bw", key);
    snprintf(k4, sizeof k4, "%s.nwrong", key);
    /* the nested keys are read through the placement object, named from the row */
    const cJSON *x;
    double v = 0;
    struct {
        const char *key, *name;
        double *out;
    } nums[] = {{tk, k1, &r->time_us}, {"alg_bw", k2, &r->algbw}, {"bus_bw", k3, &r->busbw}};
    for (size_t i = 0; i < 3; i++) {
        x = cJSON_GetObjectItemCaseSensitive(p, nums[i].key);
        if (x == NULL || !cJSON_IsNumber(x) || !isfinite(x->valuedouble))
            return json_bad(a, nums[i].name, x == NULL ? "missing (expected: a number)" : "not a number");
        *nums[i].out = x->valuedouble;
    }
    x = cJSON_GetObjectItemCaseSensitive(p, "nwrong");
    if (x == NULL || cJSON_IsNull(x)) {
        r->wrong = -1;
        r->check = RS_MEAS_CHECK_NONE;
    } else if (cJSON_IsNumber(x) && (v = x->valuedouble) >= 0 && v == floor(v) && v < 9e18) {
        r->wrong = (int64_t)v;
        r->check = v > 0 ? RS_MEAS_CHECK_FAIL : RS_MEAS_CHECK_PASS;
    } else {
        return json_bad(a, k4, "not a count of elements (allowed: 0 and up, or null)");
    }
    /* "%lf": six decimals */
    r->time_res = r->algbw_res = r->busbw_res = 1e-6;
    return 0;
}

static int json_nccl_row(rs_meas_ctx *c, const cJSON *row, int index, int line, rs_meas_sweep *sw)
{
    static const char *const keys[] = {"size", "count", "type", "redop", "root", "out_of_place", "in_place",
                                       "out_of_place_per_iter", "in_place_per_iter", "actual_iterations",
                                       "experiment_name", NULL};
    json_at a = {c, "results", index, line};
    char q[80];
    if (!cJSON_IsObject(row))
        return json_bad(&a, "", "not an object (expected: {size, count, type, redop, root, out_of_place, in_place})");
    if (json_known(&a, row, keys, "size, count, type, redop, root, out_of_place, in_place, *_per_iter, "
                                  "actual_iterations, experiment_name") != 0)
        return -1;
    double size, count, iters = 0;
    if (json_whole(&a, row, "size", 0, 9007199254740992.0, &size) || json_whole(&a, row, "count", 0, 9007199254740992.0, &count))
        return -1;
    const char *type = json_str(&a, row, "type"), *op = json_str(&a, row, "redop"), *root = json_str(&a, row, "root");
    if (!type || !op || !root)
        return -1;
    const char *ctype, *cop;
    int ts, rt;
    if (rs_meas_dtype(type, strlen(type), &ctype, &ts) != 0) {
        char m[RS_MEAS_ERRLEN];
        snprintf(m, sizeof m, "'%s' is unknown (allowed: %s)", rs_meas_quote(q, sizeof q, type, strlen(type)),
                 rs_meas_dtype_allowed());
        return json_bad(&a, "type", m);
    }
    if (rs_meas_op(op, strlen(op), &cop) != 0)
        return json_bad(&a, "redop", "unknown (allowed: sum, prod, max, min, avg, mulsum, none)");
    /* the root is the text of "%6i": spaces, then the number */
    const char *rp = root;
    while (*rp == ' ')
        rp++;
    if (rs_meas_parse_int(rp, strlen(rp), &rt) != 0 || rt < -1)
        return json_bad(&a, "root", "not a rank (allowed: \"-1\" for none, or 0 and up)");
    if (cJSON_GetObjectItemCaseSensitive(row, "actual_iterations") &&
        json_whole(&a, row, "actual_iterations", 0, 1e12, &iters) != 0)
        return -1;
    if (rs_meas_nccl_sweep(c, sw, (uint64_t)size, ctype, cop, rt, line) != 0)
        return -1;
    static const char *const places[2] = {"out_of_place", "in_place"};
    int any = 0;
    for (int k = 0; k < 2; k++) {
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(row, places[k]);
        if (p == NULL || cJSON_IsNull(p))
            continue; /* not run (nccl-tests' in-place-only replays) */
        rs_meas_row *r = rs_meas_add_row(c, line);
        if (r == NULL)
            return -1;
        r->bytes = r->nccl_bytes = (uint64_t)size;
        r->count = (int64_t)count;
        snprintf(r->dtype, sizeof r->dtype, "%s", ctype);
        snprintf(r->op, sizeof r->op, "%s", cop);
        r->root = rt;
        r->place = k ? RS_MEAS_PLACE_IN : RS_MEAS_PLACE_OUT;
        r->iters = (long)iters;
        if (json_nccl_place(&a, row, places[k], r) != 0)
            return -1;
        char pk[32];
        snprintf(pk, sizeof pk, "%s_per_iter", places[k]);
        const cJSON *pi = cJSON_GetObjectItemCaseSensitive(row, pk);
        if (pi) {
            static const char *const ik[] = {"skipped_iterations", "min_us", "max_us", "avg_us", "p50_us", "p95_us",
                                             "p99_us", "stdev_us", "cv_pct", "times_us", "per_process_max_times_us", NULL};
            json_at in = a;
            char w[64];
            snprintf(w, sizeof w, "results[%d].%s", index, pk);
            in.list = w;
            in.index = -1;
            if (!cJSON_IsObject(pi) || json_known(&in, pi, ik, "skipped_iterations, min_us, max_us, avg_us, p50_us, "
                                                                "p95_us, p99_us, stdev_us, cv_pct, times_us, "
                                                                "per_process_max_times_us") != 0)
                return cJSON_IsObject(pi) ? -1 : json_bad(&a, pk, "not an object");
            /* single iterations' statistics, not bounds of the row's time (rs_meas_nccl.c) */
            double v;
            if (json_num(&in, pi, "min_us", &v) || json_num(&in, pi, "max_us", &v))
                return -1;
        }
        any = 1;
    }
    if (!any)
        return json_bad(&a, "", "neither out_of_place nor in_place has a result");
    return 0;
}

static int json_nccl(rs_meas_ctx *c, const json_doc *d, const cJSON *root)
{
    static const char *const keys[] = {"version", "start_time", "args", "env", "nccl_version", "config", "results",
                                       "out_of_bounds", "average_bus_bandwidth", "average_bus_bandwidith", "errors",
                                       "end_time", NULL};
    rs_meas_table *t = c->t;
    json_at top = {c, "", -1, 1};
    snprintf(t->tool, sizeof t->tool, "nccl-tests");
    t->format = RS_MEAS_FMT_NCCL_JSON;
    if (json_known(&top, root, keys, "version, start_time, args, env, nccl_version, config, results, out_of_bounds, "
                                     "average_bus_bandwidth, errors, end_time") != 0)
        return -1;
    double ver;
    if (json_whole(&top, root, "version", 1, 3, &ver) != 0)
        return -1;
    snprintf(t->version, sizeof t->version, "JSON v%.0f", ver);
    const cJSON *nv = cJSON_GetObjectItemCaseSensitive(root, "nccl_version");
    if (cJSON_IsNumber(nv))
        rs_meas_note(t, "NCCL %.0f", nv->valuedouble);

    /* args: the command line, and the collective from the program's name */
    rs_meas_coll prog = RS_MEAS_COLL_NONE;
    char where[96] = "";
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(root, "args");
    if (args) {
        if (!cJSON_IsArray(args))
            return json_bad(&top, "args", "not a list of strings");
        size_t used = 0;
        int i = 0;
        for (const cJSON *x = args->child; x; x = x->next, i++) {
            if (!cJSON_IsString(x))
                return json_bad(&top, "args", "not a list of strings");
            int n = snprintf(t->command + used, sizeof t->command - used, "%s%s", i ? " " : "", x->valuestring);
            used = n < 0 ? used : used + (size_t)n < sizeof t->command ? used + (size_t)n : sizeof t->command - 1;
            if (i == 0) {
                rs_meas_prog_kind kind;
                char base[64];
                if (rs_meas_program(x->valuestring, strlen(x->valuestring), &kind, &prog, base, sizeof base) == 0 &&
                    kind == RS_MEAS_PROG_NCCL) {
                    snprintf(t->program, sizeof t->program, "%s", base);
                    snprintf(where, sizeof where, "args[0] %s", base);
                } else {
                    prog = RS_MEAS_COLL_NONE;
                }
            }
        }
        for (char *p = t->command; *p; p++)
            if (*p < 0x20 || *p == 0x7f)
                *p = '?';
    }

    /* config: the sweep, and the devices (one per process: its first rank's line) */
    const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(root, "config");
    int found = 0;
    if (cfg) {
        json_at ca = {c, "", -1, 1};
        double v;
        if (!cJSON_IsObject(cfg))
            return json_bad(&top, "config", "not an object");
        if (json_whole(&ca, cfg, "nthreads", 1, 1e6, &v) != 0)
            return -1;
        t->nthreads = (int)v;
        if (json_whole(&ca, cfg, "ngpus", 1, 1e6, &v) != 0)
            return -1;
        t->ngpus = (int)v;
        if (cJSON_GetObjectItemCaseSensitive(cfg, "minimum_bytes") &&
            json_whole(&ca, cfg, "minimum_bytes", 0, 9007199254740992.0, &v) == 0)
            t->minbytes = (uint64_t)v;
        if (cJSON_GetObjectItemCaseSensitive(cfg, "maximum_bytes") &&
            json_whole(&ca, cfg, "maximum_bytes", 0, 9007199254740992.0, &v) == 0)
            t->maxbytes = (uint64_t)v;
        if (c->failed)
            return -1;
        const cJSON *it = cJSON_GetObjectItemCaseSensitive(cfg, "iterations");
        if (cJSON_IsNumber(it))
            t->iters = (int)it->valuedouble;
        const cJSON *wu = cJSON_GetObjectItemCaseSensitive(cfg, "warmup_iters");
        if (cJSON_IsNumber(wu))
            t->warmup_iters = (int)wu->valuedouble;
        const cJSON *devs = cJSON_GetObjectItemCaseSensitive(cfg, "devices");
        if (devs) {
            if (!cJSON_IsArray(devs))
                return json_bad(&top, "config.devices", "not a list");
            int i = 0;
            for (const cJSON *x = devs->child; x; x = x->next, i++) {
                json_at da = {c, "config.devices", i, 1};
                double rank, dev;
                const char *host;
                if (!cJSON_IsObject(x))
                    return json_bad(&da, "", "not an object");
                if (json_whole(&da, x, "rank", 0, 1e7, &rank) || json_whole(&da, x, "device", 0, 1e6, &dev) ||
                    (host = json_str(&da, x, "hostname")) == NULL)
                    return -1;
                rs_meas_device *dv = rs_meas_add_device(c, 1);
                if (dv == NULL)
                    return -1;
                dv->rank = (int)rank;
                dv->device = (int)dev;
                snprintf(dv->host, sizeof dv->host, "%s", host);
                const cJSON *info = cJSON_GetObjectItemCaseSensitive(x, "device_info");
                if (cJSON_IsString(info))
                    snprintf(dv->name, sizeof dv->name, "%s", info->valuestring);
            }
            if (t->ndevices) {
                found = (int)t->ndevices * t->nthreads * t->ngpus;
                snprintf(c->t->ranks_from, sizeof c->t->ranks_from, "config");
                int hosts = 0;
                for (size_t k = 0; k < t->ndevices; k++) {
                    size_t j = 0;
                    while (j < k && strcmp(t->devices[j].host, t->devices[k].host) != 0)
                        j++;
                    hosts += j == k;
                }
                t->hosts = hosts;
            }
        }
    }
    char rwhere[96];
    snprintf(rwhere, sizeof rwhere, "config: %zu device(s) x nthreads %d x ngpus %d", t->ndevices, t->nthreads, t->ngpus);
    if (rs_meas_settle_ranks(c, found, 1, rwhere) != 0)
        return -1;

    const cJSON *res = cJSON_GetObjectItemCaseSensitive(root, "results");
    if (!cJSON_IsArray(res))
        return json_bad(&top, "results", res ? "not a list" : "missing: the file holds no results (truncated run?)");
    json_list L;
    if (json_list_init(c, d, res, "results", &L) != 0)
        return -1;
    if (rs_meas_settle_coll(c, prog, 1, where) != 0) {
        free(L.lines);
        return -1;
    }
    rs_meas_sweep sw;
    memset(&sw, 0, sizeof sw);
    int i = 0, rc = 0;
    for (const cJSON *row = res->child; row && rc == 0; row = row->next, i++)
        rc = json_nccl_row(c, row, i, json_line(&L, i), &sw);
    int keyline = L.keyline;
    free(L.lines);
    if (rc != 0)
        return -1;
    if (t->nrows == 0)
        return rs_meas_fail(c, keyline, "results: no row (expected: one object per size)");
    const cJSON *oob = cJSON_GetObjectItemCaseSensitive(root, "out_of_bounds");
    if (oob) {
        json_at oa = {c, "out_of_bounds", -1, 1};
        double n;
        if (!cJSON_IsObject(oob) || json_whole(&oa, oob, "count", 0, 2147483647.0, &n) != 0)
            return c->failed ? -1 : json_bad(&top, "out_of_bounds", "not an object {count, okay}");
        if (rs_meas_nccl_oob(c, (long)n, 1) != 0)
            return -1;
    }
    const cJSON *avg = cJSON_GetObjectItemCaseSensitive(root, "average_bus_bandwidth");
    if (avg == NULL)
        avg = cJSON_GetObjectItemCaseSensitive(root, "average_bus_bandwidith"); /* version 1's spelling */
    if (avg && cJSON_IsObject(avg)) {
        const cJSON *bw = cJSON_GetObjectItemCaseSensitive(avg, "bandwidth");
        if (bw == NULL)
            bw = cJSON_GetObjectItemCaseSensitive(avg, "bandwidith");
        if (cJSON_IsNumber(bw))
            t->avg_busbw = bw->valuedouble;
    }
    return rs_meas_nccl_complete(c, keyline);
}

/* ---- ringsim run --json -------------------------------------------------------------------- */

static int json_ringsim_result(const json_at *a, const cJSON *row, const char *key, rs_meas_row *r)
{
    static const char *const keys[] = {"time_us", "algbw_gbps", "busbw_gbps", "wrong", NULL};
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(row, key);
    if (!cJSON_IsObject(p))
        return json_bad(a, key, p ? "not an object" : "missing (expected: {time_us, algbw_gbps, busbw_gbps, wrong})");
    json_at in = *a;
    char w[64];
    snprintf(w, sizeof w, "rows[%d].%s", a->index, key);
    in.list = w;
    in.index = -1;
    if (json_known(&in, p, keys, "time_us, algbw_gbps, busbw_gbps, wrong") != 0 ||
        json_num(&in, p, "time_us", &r->time_us) || json_num(&in, p, "algbw_gbps", &r->algbw) ||
        json_num(&in, p, "busbw_gbps", &r->busbw))
        return -1;
    double v = NAN;
    if (json_num_or_null(&in, p, "wrong", &v) != 0)
        return -1;
    if (isnan(v)) {
        r->wrong = -1;
        r->check = RS_MEAS_CHECK_NONE;
    } else if (v >= 0 && v == floor(v) && v < 9e18) {
        r->wrong = (int64_t)v;
        r->check = v > 0 ? RS_MEAS_CHECK_FAIL : RS_MEAS_CHECK_PASS;
    } else {
        return json_bad(&in, "wrong", "not a count of elements");
    }
    /* written at full precision (%.17g): the checks allow only rounding */
    r->time_res = r->algbw_res = r->busbw_res = 0;
    return 0;
}

static int json_ringsim_run(rs_meas_ctx *c, const json_doc *d, const cJSON *root)
{
    static const char *const keys[] = {"collective", "backend", "ranks", "algo", "channels", "size", "count", "type",
                                       "redop", "root", "out_of_place", "in_place", "memcpy_gbps", NULL};
    rs_meas_table *t = c->t;
    json_at top = {c, "", -1, 1};
    t->format = RS_MEAS_FMT_RINGSIM_RUN;
    snprintf(t->tool, sizeof t->tool, "ringsim run");
    snprintf(t->program, sizeof t->program, "ringsim");
    const cJSON *err = cJSON_GetObjectItemCaseSensitive(root, "error");
    if (err) {
        int line = 1;
        (void)json_array_lines(d, "error", &line, NULL, 0);
        char q[96];
        return rs_meas_fail(c, line, "the run failed ('%s'): its rows stop at the failure (allowed: the JSON of a run "
                            "that completed)", cJSON_IsString(err) ? rs_meas_quote(q, sizeof q, err->valuestring,
                                                                                  strlen(err->valuestring)) : "?");
    }
    const char *backend = json_str(&top, root, "backend");
    if (backend == NULL)
        return -1;
    rs_meas_note(t, "backend %.16s", backend);
    double ranks;
    if (json_whole(&top, root, "ranks", 1, 1e7, &ranks) != 0)
        return -1;
    /* the measurement's protocol, where the run says (a prediction repeats it) */
    double iters, warmup;
    if (cJSON_GetObjectItemCaseSensitive(root, "iters") && json_whole(&top, root, "iters", 0, 1e9, &iters) == 0)
        t->iters = (int)iters;
    if (cJSON_GetObjectItemCaseSensitive(root, "warmup_iters") &&
        json_whole(&top, root, "warmup_iters", 0, 1e9, &warmup) == 0)
        t->warmup_iters = (int)warmup;
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(root, "rows");
    if (!cJSON_IsArray(rows))
        return json_bad(&top, "rows", rows ? "not a list" : "missing (expected: the run's rows)");
    json_list L;
    if (json_list_init(c, d, rows, "rows", &L) != 0)
        return -1;
    if (rs_meas_settle_ranks(c, (int)ranks, 1, "ranks") != 0) {
        free(L.lines);
        return -1;
    }
    int i = 0, rc = 0;
    rs_meas_sweep sw[RS_MEAS_COLL_COUNT];
    memset(sw, 0, sizeof sw);
    for (const cJSON *row = rows->child; row && rc == 0; row = row->next, i++) {
        json_at a = {c, "rows", i, json_line(&L, i)};
        const char *coll, *type, *op, *ctype, *cop;
        double size, count, rk, rt;
        int ts;
        rs_meas_coll k;
        if (!cJSON_IsObject(row)) {
            rc = json_bad(&a, "", "not an object");
            break;
        }
        if (json_known(&a, row, keys, "collective, backend, ranks, algo, channels, size, count, type, redop, root, "
                                      "out_of_place, in_place, memcpy_gbps") != 0 ||
            (coll = json_str(&a, row, "collective")) == NULL || (type = json_str(&a, row, "type")) == NULL ||
            (op = json_str(&a, row, "redop")) == NULL || json_whole(&a, row, "size", 0, 9007199254740992.0, &size) ||
            json_whole(&a, row, "count", 0, 9007199254740992.0, &count) || json_whole(&a, row, "ranks", 1, 1e7, &rk) ||
            json_whole(&a, row, "root", -1, 1e7, &rt)) {
            rc = -1;
            break;
        }
        if (rs_meas_coll_parse(coll, &k) != 0) {
            /* alltoallv's rows run a skewed matrix no measured table describes */
            char why[200];
            snprintf(why, sizeof why, "'%s' is not a collective a measured table holds (allowed: %s)", coll,
                     rs_meas_coll_allowed());
            rc = json_bad(&a, "collective", why);
            break;
        }
        if (rs_meas_dtype(type, strlen(type), &ctype, &ts) != 0 || rs_meas_op(op, strlen(op), &cop) != 0) {
            rc = json_bad(&a, "type", "an unknown type or redop");
            break;
        }
        if ((int)rk != t->ranks) {
            rc = json_bad(&a, "ranks", "differs from the run's ranks");
            break;
        }
        if (rs_meas_nccl_sweep(c, &sw[k], (uint64_t)size, ctype, cop, (int)rt, a.line) != 0) {
            rc = -1;
            break;
        }
        for (int p = 0; p < 2 && rc == 0; p++) {
            if (p == 1 && cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(row, "in_place")))
                continue; /* a placement the collective does not run (sendrecv in place) */
            rs_meas_row *r = rs_meas_add_row(c, a.line);
            if (r == NULL) {
                rc = -1;
                break;
            }
            r->coll = k;
            r->ranks = (int)rk;
            r->bytes = r->nccl_bytes = (uint64_t)size;
            r->count = (int64_t)count;
            snprintf(r->dtype, sizeof r->dtype, "%s", ctype);
            snprintf(r->op, sizeof r->op, "%s", cop);
            r->root = (int)rt;
            r->place = p ? RS_MEAS_PLACE_IN : RS_MEAS_PLACE_OUT;
            rc = json_ringsim_result(&a, row, p ? "in_place" : "out_of_place", r);
        }
        if (rc == 0 && t->coll == RS_MEAS_COLL_NONE) {
            t->coll = k;
            snprintf(t->coll_from, sizeof t->coll_from, "rows:");
        }
        /* the file's collectives in their order, for the summary */
        char name[24];
        snprintf(name, sizeof name, " %s,", rs_meas_coll_name(k));
        size_t used = strlen(t->coll_from);
        if (rc == 0 && strstr(t->coll_from, name) == NULL && used + strlen(name) < sizeof t->coll_from)
            memcpy(t->coll_from + used, name, strlen(name) + 1);
    }
    int keyline = L.keyline;
    free(L.lines);
    if (rc != 0)
        return -1;
    if (t->nrows == 0)
        return rs_meas_fail(c, keyline, "rows: none (a training run's JSON has none; allowed: the JSON of a sweep)");
    /* --collective picks nothing from a file of several collectives: it must agree with every row */
    char from[sizeof t->coll_from];
    snprintf(from, sizeof from, "%s", t->coll_from);
    for (size_t r = 0; r < t->nrows; r++) {
        char w[96];
        snprintf(w, sizeof w, "rows, line %d", t->rows[r].line);
        rs_meas_coll keep = t->coll;
        if (rs_meas_settle_coll(c, t->rows[r].coll, t->rows[r].line, w) != 0)
            return -1;
        t->coll = keep;
    }
    snprintf(t->coll_from, sizeof t->coll_from, "%s", from);
    size_t fl = strlen(t->coll_from);
    if (fl && t->coll_from[fl - 1] == ',')
        t->coll_from[fl - 1] = '\0';
    return rs_meas_finish(c);
}

/* ---- ringsim bringup --json ---------------------------------------------------------------- */

static int json_bringup(rs_meas_ctx *c, const json_doc *d, const cJSON *root)
{
    static const char *const lkeys[] = {"src", "dst", "verdict", "detail", "rtt_median_us", "rtt_max_us", "gbps",
                                        "gbps_min", "gbps_max", "gbps_samples", "first_pass_samples", "retested",
                                        "transfers", "bytes_wrong", "first_bad_offset", "patterns", NULL};
    static const char *const rkeys[] = {"order", "ok", "bytes", "wrong", "time_us", "error", NULL};
    static const char *const verdicts[] = {"good", "slow", "dead", "corrupting", "miswired", "error", NULL};
    rs_meas_table *t = c->t;
    json_at top = {c, "", -1, 1};
    t->format = RS_MEAS_FMT_RINGSIM_BRINGUP;
    snprintf(t->tool, sizeof t->tool, "ringsim bringup");
    snprintf(t->program, sizeof t->program, "ringsim");
    double agents;
    if (json_whole(&top, root, "agents", 1, 1e6, &agents) != 0)
        return -1;
    const cJSON *ex = cJSON_GetObjectItemCaseSensitive(root, "expected");
    const cJSON *topo = cJSON_GetObjectItemCaseSensitive(ex, "topology");
    if (cJSON_IsString(topo))
        rs_meas_note(t, "expected %.40s", topo->valuestring);
    char where[64];
    snprintf(where, sizeof where, "agents");
    if (rs_meas_settle_ranks(c, (int)agents, 1, where) != 0)
        return -1;
    const cJSON *links = cJSON_GetObjectItemCaseSensitive(root, "links");
    const cJSON *rings = cJSON_GetObjectItemCaseSensitive(root, "rings");
    if (!cJSON_IsArray(links) || !cJSON_IsArray(rings))
        return json_bad(&top, cJSON_IsArray(links) ? "rings" : "links", "missing or not a list");
    json_list L;
    if (json_list_init(c, d, links, "links", &L) != 0)
        return -1;
    int i = 0, rc = 0;
    for (const cJSON *x = links->child; x && rc == 0; x = x->next, i++) {
        json_at a = {c, "links", i, json_line(&L, i)};
        double src, dst;
        const char *verdict;
        if (!cJSON_IsObject(x)) {
            rc = json_bad(&a, "", "not an object");
            break;
        }
        if (json_known(&a, x, lkeys, "src, dst, verdict, detail, rtt_median_us, rtt_max_us, gbps, gbps_min, gbps_max, "
                                     "gbps_samples, first_pass_samples, retested, transfers, bytes_wrong, "
                                     "first_bad_offset, patterns") ||
            json_whole(&a, x, "src", 0, agents - 1, &src) || json_whole(&a, x, "dst", 0, agents - 1, &dst) ||
            (verdict = json_str(&a, x, "verdict")) == NULL) {
            rc = -1;
            break;
        }
        int known = 0;
        for (size_t k = 0; verdicts[k] && !known; k++)
            known = strcmp(verdict, verdicts[k]) == 0;
        if (!known || src == dst) {
            rc = json_bad(&a, known ? "dst" : "verdict", known ? "the same rank as src"
                                                               : "unknown (allowed: good, slow, dead, corrupting, miswired, error)");
            break;
        }
        rs_meas_link *l = rs_meas_add_link(c, a.line);
        if (l == NULL) {
            rc = -1;
            break;
        }
        l->src = (int)src;
        l->dst = (int)dst;
        snprintf(l->verdict, sizeof l->verdict, "%s", verdict);
        if (json_num_or_null(&a, x, "rtt_median_us", &l->rtt_median_us) ||
            json_num_or_null(&a, x, "rtt_max_us", &l->rtt_max_us) || json_num_or_null(&a, x, "gbps", &l->gbps) ||
            json_num_or_null(&a, x, "gbps_min", &l->gbps_min) || json_num_or_null(&a, x, "gbps_max", &l->gbps_max)) {
            rc = -1;
            break;
        }
        double tol = 1e-9;
        if (l->rtt_median_us < 0 || l->gbps < 0 || l->gbps_min < 0 ||
            (!isnan(l->rtt_max_us) && l->rtt_median_us > l->rtt_max_us * (1 + tol)) ||
            (!isnan(l->gbps_min) && l->gbps < l->gbps_min * (1 - tol)) ||
            (!isnan(l->gbps_max) && l->gbps > l->gbps_max * (1 + tol))) {
            char m[200];
            snprintf(m, sizeof m, "contradicts itself: rtt median %g us, max %g us; gbps %g between min %g and max %g "
                     "(allowed: median <= max, min <= gbps <= max, none negative)", l->rtt_median_us, l->rtt_max_us,
                     l->gbps, l->gbps_min, l->gbps_max);
            rc = json_bad(&a, "", m);
        }
    }
    free(L.lines);
    if (rc != 0)
        return -1;
    if (json_list_init(c, d, rings, "rings", &L) != 0)
        return -1;
    i = 0;
    for (const cJSON *x = rings->child; x && rc == 0; x = x->next, i++) {
        json_at a = {c, "rings", i, json_line(&L, i)};
        double bytes = 0, wrong = 0, tus = 0;
        if (!cJSON_IsObject(x)) {
            rc = json_bad(&a, "", "not an object");
            break;
        }
        if (json_known(&a, x, rkeys, "order, ok, bytes, wrong, time_us, error")) {
            rc = -1;
            break;
        }
        const cJSON *order = cJSON_GetObjectItemCaseSensitive(x, "order");
        int n = cJSON_GetArraySize(order), bad = !cJSON_IsArray(order) || n < 2 || n > agents;
        unsigned char *seen = bad ? NULL : calloc((size_t)agents, 1);
        for (const cJSON *o = bad ? NULL : order->child; o && !bad; o = o->next) {
            double v = cJSON_IsNumber(o) ? o->valuedouble : -1;
            bad = !seen || v < 0 || v >= agents || v != floor(v) || seen[(size_t)v];
            if (!bad)
                seen[(size_t)v] = 1;
        }
        free(seen);
        if (bad) {
            rc = json_bad(&a, "order", "not a ring of distinct ranks (allowed: 2 or more of the agents, each once)");
            break;
        }
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(x, "error");
        if (cJSON_IsString(e) && e->valuestring[0]) {
            char q[96], m[200];
            snprintf(m, sizeof m, "the ring allreduce failed ('%s'): a failed ring has no time to read (allowed: a "
                     "bring-up whose rings completed)", rs_meas_quote(q, sizeof q, e->valuestring, strlen(e->valuestring)));
            rc = json_bad(&a, "error", m);
            break;
        }
        if (json_whole(&a, x, "bytes", 1, 9007199254740992.0, &bytes) || json_whole(&a, x, "wrong", 0, 9e15, &wrong) ||
            json_num(&a, x, "time_us", &tus)) {
            rc = -1;
            break;
        }
        rs_meas_row *r = rs_meas_add_row(c, a.line);
        if (r == NULL) {
            rc = -1;
            break;
        }
        /* rs_bringup.c: "ring ORDER: allreduce N B int32 sum" through the engine */
        r->coll = RS_MEAS_COLL_ALLREDUCE;
        r->ranks = n;
        r->bytes = r->nccl_bytes = (uint64_t)bytes;
        r->count = (int64_t)(bytes / 4);
        snprintf(r->dtype, sizeof r->dtype, "int32");
        snprintf(r->op, sizeof r->op, "sum");
        r->time_us = tus;
        r->wrong = (int64_t)wrong;
        const cJSON *ok = cJSON_GetObjectItemCaseSensitive(x, "ok");
        r->check = wrong > 0 || cJSON_IsFalse(ok) ? RS_MEAS_CHECK_FAIL : RS_MEAS_CHECK_PASS;
        if (r->check == RS_MEAS_CHECK_FAIL && wrong == 0) {
            rc = json_bad(&a, "ok", "false with #wrong 0 and no error");
            break;
        }
        if ((uint64_t)bytes % 4 != 0) {
            rc = json_bad(&a, "bytes", "not whole int32 elements");
            break;
        }
    }
    free(L.lines);
    if (rc != 0)
        return -1;
    if (t->nrows == 0 && t->nlinks == 0)
        return rs_meas_fail(c, 1, "no links and no rings: the bring-up measured nothing");
    t->coll = RS_MEAS_COLL_ALLREDUCE;
    snprintf(t->coll_from, sizeof t->coll_from, "bring-up rings");
    if (t->nrows) {
        rs_meas_coll keep = t->coll;
        if (rs_meas_settle_coll(c, RS_MEAS_COLL_ALLREDUCE, t->rows[0].line, "bring-up rings") != 0)
            return -1;
        t->coll = keep;
    }
    return rs_meas_finish(c);
}

int rs_meas_json_text(rs_meas_ctx *c, const char *text, size_t len)
{
    json_doc d = {text, len};
    for (size_t i = 0; i < len; i++)
        if (text[i] == '\0')
            return rs_meas_fail(c, json_line_at(&d, i), "a NUL byte: binary data, not JSON");
    int lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n' && i + 1 < len;
    c->t->nlines = lines;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (root == NULL) {
        size_t off = end && end >= text && end <= text + len ? (size_t)(end - text) : len;
        char q[96];
        /* cJSON points at the last character when the text ends inside a value */
        if (off + 1 >= len)
            return rs_meas_fail(c, json_line_at(&d, len ? len - 1 : 0), "the JSON ends early, inside a value "
                                "(truncated?)");
        /* cJSON stops just past the offending character: show it with what precedes it on its line */
        if (off > 0 && (text[off] == '\n' || text[off] == '\r'))
            off--;
        size_t ls = off, le = off;
        while (ls > 0 && text[ls - 1] != '\n' && off - ls < 24)
            ls--;
        while (le < len && text[le] != '\n' && text[le] != '\r' && le - off < 8)
            le++;
        size_t col = off;
        while (col > 0 && text[col - 1] != '\n')
            col--;
        return rs_meas_fail(c, json_line_at(&d, off), "not valid JSON at column %zu, near '%s' (allowed: a JSON "
                            "document)", off - col + 1, rs_meas_quote(q, sizeof q, text + ls, le - ls));
    }
    size_t off = (size_t)(end - text);
    while (off < len && (text[off] == ' ' || text[off] == '\t' || text[off] == '\r' || text[off] == '\n'))
        off++;
    int rc;
    if (off < len) {
        rc = rs_meas_fail(c, json_line_at(&d, off), "text after the JSON document (allowed: one document per file)");
    } else if (!cJSON_IsObject(root)) {
        rc = rs_meas_fail(c, 1, "the JSON is not an object (allowed: nccl-tests -J, ringsim run --json, ringsim "
                          "bringup --json)");
    } else {
        const cJSON *prog = cJSON_GetObjectItemCaseSensitive(root, "program");
        const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(root, "command");
        if (cJSON_IsString(prog) && strcmp(prog->valuestring, "ringsim") == 0) {
            if (cJSON_IsString(cmd) && strcmp(cmd->valuestring, "run") == 0)
                rc = json_ringsim_run(c, &d, root);
            else
            {
                char q[64];
                const char *w = cJSON_IsString(cmd) ? cmd->valuestring : "(no command)";
                rc = rs_meas_fail(c, 1, "ringsim %s JSON holds no measured rows (allowed: ringsim run --json, ringsim "
                                  "bringup --json)", rs_meas_quote(q, sizeof q, w, strlen(w)));
            }
        } else if (cJSON_GetObjectItemCaseSensitive(root, "results") || cJSON_GetObjectItemCaseSensitive(root, "version")) {
            rc = json_nccl(c, &d, root);
        } else if (cJSON_GetObjectItemCaseSensitive(root, "agents") && cJSON_GetObjectItemCaseSensitive(root, "links")) {
            rc = json_bringup(c, &d, root);
        } else {
            rc = rs_meas_fail(c, 1, "a JSON document of no format this reader knows (allowed: nccl-tests -J {version, "
                              "config, results}, ringsim run --json {program: ringsim, rows}, ringsim bringup --json "
                              "{agents, links, rings})");
        }
    }
    cJSON_Delete(root);
    return rc;
}
