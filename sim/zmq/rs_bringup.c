/* rs_bringup.c — `ringsim bringup`: tests every expected link of a set of agents and names the bad ones. */
#define _GNU_SOURCE
#include "rs_bringup.h"
#include "rs_ctl.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ncl/ncl.h"
#include "ncl/ncl_wire.h"
#include "sweep/rs_sweep.h"
#include "rs_ranktable.h"
#include "scenario/rs_scenario.h"

#define BU_MAX_REPLY (16u << 20)
#define BU_MAX_RINGS 64
#define BU_EXIT_BAD 1

/* ---- expected topology ------------------------------------------------------------------------------ */

typedef struct bu_expect {
    char desc[128];
    int nranks;
    int npairs;
    int (*pairs)[2]; /* a < b */
} bu_expect;

/* "ring:4", "biring:4", "mesh:4", "torus:4x4", "switch:8", "server8", "cluster:2", or a scenario
 * file (its topology section). 0, or -1 with the message printed. */
static int bu_expect_load(const char *spec, int agents, bu_expect *x, FILE *err)
{
    rs_scenario sc;
    char e[RS_SCENARIO_ERRLEN];
    memset(x, 0, sizeof *x);
    int rc;
    if (!spec) {
        char text[96];
        snprintf(text, sizeof text, "topology: {kind: ring, ranks: %d}\n", agents);
        rc = rs_scenario_load_string(text, strlen(text), "--expect", &sc, e, sizeof e);
        snprintf(x->desc, sizeof x->desc, "ring:%d (default)", agents);
    } else if (strchr(spec, '/') || strstr(spec, ".yaml") || strstr(spec, ".yml") || strstr(spec, ".json")) {
        rc = rs_scenario_load(spec, &sc, e, sizeof e);
        snprintf(x->desc, sizeof x->desc, "%s", spec);
    } else {
        char kind[32] = "", text[160];
        int a = 0, b = 0, n = 0;
        static const char *const allowed = "(allowed: ring:N, biring:N, mesh:N, torus:RxC, switch:N, server8, "
                                           "cluster:SERVERS, or a scenario file)";
        if (sscanf(spec, "%31[a-z_0-9]%n", kind, &n) != 1) {
            fprintf(err, "ringsim bringup: --expect: '%s' %s\n", spec, allowed);
            return -1;
        }
        const char *rest = spec + n;
        if (!strcmp(kind, "mesh"))
            snprintf(kind, sizeof kind, "full_mesh");
        if (!strcmp(kind, "torus"))
            snprintf(kind, sizeof kind, "torus2d");
        int ok = 0;
        if (!strcmp(kind, "server8") && !*rest) {
            snprintf(text, sizeof text, "topology: {kind: server8}\n");
            ok = 1;
        } else if (!strcmp(kind, "torus2d") && sscanf(rest, ":%dx%d%n", &a, &b, &n) == 2 && !rest[n]) {
            snprintf(text, sizeof text, "topology: {kind: torus2d, dims: [%d, %d]}\n", a, b);
            ok = 1;
        } else if (!strcmp(kind, "cluster") && sscanf(rest, ":%d%n", &a, &n) == 1 && !rest[n]) {
            snprintf(text, sizeof text, "topology: {kind: cluster, servers: %d}\n", a);
            ok = 1;
        } else if ((!strcmp(kind, "ring") || !strcmp(kind, "biring") || !strcmp(kind, "full_mesh") ||
                    !strcmp(kind, "switch")) && sscanf(rest, ":%d%n", &a, &n) == 1 && !rest[n]) {
            snprintf(text, sizeof text, "topology: {kind: %s, ranks: %d}\n", kind, a);
            ok = 1;
        }
        if (!ok) {
            fprintf(err, "ringsim bringup: --expect: '%s' %s\n", spec, allowed);
            return -1;
        }
        rc = rs_scenario_load_string(text, strlen(text), "--expect", &sc, e, sizeof e);
        snprintf(x->desc, sizeof x->desc, "%s", spec);
    }
    if (rc) {
        fprintf(err, "%s\n", e);
        return -1;
    }
    x->nranks = sc.topo.nranks;
    if (x->nranks < 2 || x->nranks > 4096) {
        fprintf(err, "ringsim bringup: --expect %s: %d ranks (allowed: 2..4096)\n", x->desc, x->nranks);
        rs_scenario_free(&sc);
        return -1;
    }
    /* Ranks behind switches reach each other through them: every pair is expected to talk. */
    int switched = sc.topo.kind == RS_TOPO_SWITCH || sc.topo.kind == RS_TOPO_FAT_TREE || sc.topo.kind == RS_TOPO_CLUSTER;
    x->pairs = calloc((size_t)x->nranks * (size_t)(x->nranks - 1) / 2, sizeof *x->pairs);
    for (int a = 0; x->pairs && a < x->nranks; a++)
        for (int b = a + 1; b < x->nranks; b++)
            if (switched || rs_scenario_link_exists(&sc.topo, a, b) || rs_scenario_link_exists(&sc.topo, b, a)) {
                x->pairs[x->npairs][0] = a;
                x->pairs[x->npairs][1] = b;
                x->npairs++;
            }
    rs_scenario_free(&sc);
    return x->pairs ? 0 : -1;
}

/* ---- results ------------------------------------------------------------------------------------------- */

typedef struct bu_link {
    int src, dst;
    int tested;
    double gbps, rtt_med, rtt_max;
    int no_ack;
    uint64_t wrong, poison;
    int64_t first_bad;
    const char *first_pattern;
    int bad_transfers, transfers, expected_transfers;
    char verdict[16];
    char detail[400];
    cJSON *src_reply, *dst_reply; /* owned */
} bu_link;

static int bu_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double bu_num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static const char *bu_str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* Fills the measured fields of l from both sides' replies. */
static void bu_link_measure(bu_link *l)
{
    const cJSON *s = l->src_reply, *d = l->dst_reply;
    l->gbps = bu_num(s, "gbps");
    l->no_ack = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "no_ack"));
    const cJSON *rtt = cJSON_GetObjectItemCaseSensitive(s, "rtt_us");
    int n = cJSON_IsArray(rtt) ? cJSON_GetArraySize(rtt) : 0;
    if (n > 0) {
        double *v = calloc((size_t)n, sizeof *v);
        int k = 0;
        for (const cJSON *x = rtt->child; v && x; x = x->next)
            v[k++] = x->valuedouble;
        if (v) {
            qsort(v, (size_t)k, sizeof *v, bu_cmp_double);
            l->rtt_med = k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
            l->rtt_max = v[k - 1];
        }
        free(v);
    }
    l->transfers = (int)bu_num(d, "transfers");
    l->expected_transfers = (int)bu_num(d, "expected_transfers");
    l->first_bad = -1;
    const cJSON *pats = cJSON_GetObjectItemCaseSensitive(d, "patterns");
    for (const cJSON *p = cJSON_IsArray(pats) ? pats->child : NULL; p; p = p->next) {
        uint64_t w = (uint64_t)bu_num(p, "wrong");
        if (!w)
            continue;
        l->bad_transfers++;
        l->wrong += w;
        l->poison += (uint64_t)bu_num(p, "poison_bytes");
        if (l->first_bad < 0) {
            l->first_bad = (int64_t)bu_num(p, "first_bad");
            l->first_pattern = bu_str(p, "name");
        }
    }
}

static void bu_set(bu_link *l, const char *verdict, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void bu_set(bu_link *l, const char *verdict, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    snprintf(l->verdict, sizeof l->verdict, "%s", verdict);
    vsnprintf(l->detail, sizeof l->detail, fmt, ap);
    va_end(ap);
}

/* A link is bad for the rings (data would be wrong or never arrive); slow links still carry them. */
static int bu_breaks_rings(const bu_link *l)
{
    return strcmp(l->verdict, "good") && strcmp(l->verdict, "slow");
}

/* ---- rings that cover the expected links ------------------------------------------------------------ */

typedef struct bu_cover {
    int n;
    const unsigned char *edge;  /* n*n: expected directed links among the agents */
    unsigned char *covered;     /* n*n */
    int *path;
    unsigned char *used;
    long budget;
} bu_cover;

/* Depth-first search for a Hamiltonian cycle continuing path[0..k), uncovered links first. */
static int bu_ham(bu_cover *c, int k)
{
    if (--c->budget < 0)
        return 0;
    int u = c->path[k - 1];
    if (k == c->n)
        return c->edge[u * c->n + c->path[0]];
    for (int pass = 0; pass < 2; pass++)
        for (int v = 0; v < c->n; v++) {
            if (c->used[v] || !c->edge[u * c->n + v] || (c->covered[u * c->n + v] != 0) != pass)
                continue;
            c->used[v] = 1;
            c->path[k] = v;
            if (bu_ham(c, k + 1))
                return 1;
            c->used[v] = 0;
        }
    return 0;
}

/* ---- output --------------------------------------------------------------------------------------- */

static void bu_fmt_num(char *b, size_t len, double v, const char *fmt)
{
    if (v > 0)
        snprintf(b, len, fmt, v);
    else
        snprintf(b, len, "-");
}

static void bu_integrity(const bu_link *l, char *b, size_t len)
{
    if (!l->tested || !strcmp(l->verdict, "error"))
        snprintf(b, len, "-");
    else if (!l->transfers)
        snprintf(b, len, "nothing arrived");
    else if (l->wrong)
        snprintf(b, len, "%llu B wrong", (unsigned long long)l->wrong);
    else if (l->transfers < l->expected_transfers)
        snprintf(b, len, "%d/%d arrived", l->transfers, l->expected_transfers);
    else
        snprintf(b, len, "ok (%d transfers)", l->transfers);
}

/* ---- the command ---------------------------------------------------------------------------------- */

void rs_bringup_defaults(rs_bringup_opts *o)
{
    memset(o, 0, sizeof *o);
    o->slow_factor = 0.5;
    o->timeout_s = 2;
    o->connect_s = 30;
    o->bytes = 2u << 20;
    o->slot = 64u << 10;
    o->ring_bytes = 64u << 10;
    o->reps = 3;
    o->pings = 20;
    o->seed = 1;
    o->agent_backend = "zmq";
}

/* --inject A-B:FAULT becomes agent A's --fault B:FAULT (checked as the agent will). 0 or -1. */
static int bu_make_faults(const rs_bringup_opts *o, int n, char (*faults)[64], FILE *err)
{
    char e[300];
    for (int k = 0; k < o->ninject; k++) {
        int a = -1, b = -1, at = 0;
        if (sscanf(o->inject[k], "%d-%d:%n", &a, &b, &at) != 2 || !at || a < 0 || a >= n || b < 0 || b >= n || a == b ||
            strlen(faults[a]) + strlen(o->inject[k]) + 12 > sizeof faults[a]) {
            fprintf(err, "ringsim bringup: --inject: '%s' (allowed: A-B:FAULT with ranks A != B in 0..%d, FAULT = dead, "
                    "slow:GBPS, corrupt or miswire:C)\n", o->inject[k], n - 1);
            return -1;
        }
        size_t len = strlen(faults[a]);
        snprintf(faults[a] + len, sizeof faults[a] - len, "%s%d:%s", len ? "," : "", b, o->inject[k] + at);
        rs_bu_shim probe;
        memset(&probe, 0, sizeof probe);
        if (rs_bu_shim_parse(&probe, a, n, faults[a], e, sizeof e)) {
            fprintf(err, "ringsim bringup: --inject '%s': %s\n", o->inject[k], e);
            return -1;
        }
    }
    return 0;
}

/* Spawns the agents (or takes the table's), connects and waits for every HELLO. Returns -1 when
 * all are up, else the exit status. */
static int bu_start(rs_ctl *c, const rs_bringup_opts *o, char (*faults)[64])
{
    rs_ctl_opts co = {.spawn = !o->table_path, .connect_s = o->connect_s, .timeout_s = o->timeout_s,
                      .channels = 1, .backend = o->agent_backend, .job_prefix = "bu", .faults = faults};
    int rc = rs_ctl_start(c, &co);
    if (rc == RS_EXIT_ENGINE) {
        fprintf(c->err, "ringsim bringup: no link was tested\n");
        return BU_EXIT_BAD;
    }
    return rc;
}

/* Sends one bring-up step to every agent and waits. -1 interrupted, 1 an agent failed, 0 ok. */
static int bu_all(rs_ctl *c, const char *req, double limit_s, const char *what)
{
    if (rs_ctl_all(c, NCL_WIRE_SELFTEST, req, limit_s, what))
        return -1;
    return rs_ctl_print_failures(c) > 0;
}

/* One directed link: arm the destination, then run both sides. 0, or -1 when interrupted. */
static int bu_test_link(rs_ctl *c, const rs_bringup_opts *o, bu_link *l)
{
    char req[256];
    long tmo_ms = (long)(o->timeout_s * 1000);
    if (l->src >= c->n || l->dst >= c->n) {
        bu_set(l, "missing", "rank %d has no agent (%d agents: 0..%d)", l->src >= c->n ? l->src : l->dst, c->n, c->n - 1);
        return 0;
    }
    l->tested = 1;
    snprintf(req, sizeof req, "{\"test\":\"arm\",\"src\":%d}", l->src);
    rs_ctl_send(c, l->dst, NCL_WIRE_SELFTEST, req);
    if (rs_ctl_wait(c, o->timeout_s + 10, "SELFTEST arm"))
        return -1;
    if (c->ag[l->dst].error[0]) {
        bu_set(l, "error", "%s", c->ag[l->dst].error);
        return 0;
    }
    snprintf(req, sizeof req, "{\"test\":\"link\",\"src\":%d,\"dst\":%d,\"reps\":%ld,\"pings\":%ld,\"timeout_ms\":%ld}",
             l->src, l->dst, o->reps, o->pings, tmo_ms);
    rs_ctl_send(c, l->src, NCL_WIRE_SELFTEST, req);
    rs_ctl_send(c, l->dst, NCL_WIRE_SELFTEST, req);
    /* each side waits at most about two timeouts per step */
    if (rs_ctl_wait(c, 2 * o->timeout_s * (double)(o->reps + RS_BU_PATTERNS + 2 + o->pings) + 10, "SELFTEST link"))
        return -1;
    rs_ctl_agent *as = &c->ag[l->src], *ad = &c->ag[l->dst];
    l->src_reply = as->reply;
    l->dst_reply = ad->reply;
    as->reply = ad->reply = NULL;
    if (as->error[0] || ad->error[0]) {
        bu_set(l, "error", "%s%s%s", as->error, as->error[0] && ad->error[0] ? "; " : "", ad->error);
        return 0;
    }
    bu_link_measure(l);
    const char *se = bu_str(l->src_reply, "error"), *de = bu_str(l->dst_reply, "error");
    if (*se || *de)
        bu_set(l, "error", "%s%s%s", se, *se && *de ? "; " : "", de);
    return 0;
}

/* "end" on every rank: fence, scan for misplaced data, unbind. Replies go to end_replies. */
static int bu_end_all(rs_ctl *c, const rs_bringup_opts *o, const bu_link *L, int nlinks, cJSON *end_replies)
{
    char req[4096];
    long tmo_ms = (long)(o->timeout_s * 1000);
    for (int r = 0; r < c->n; r++) {
        /* no use waiting for the fence of a sender whose link to r delivered nothing */
        int k = snprintf(req, sizeof req, "{\"test\":\"end\",\"timeout_ms\":%ld,\"skip\":[", tmo_ms < 500 ? tmo_ms : 500);
        for (int i = 0, first = 1; i < nlinks && k < (int)sizeof req - 16; i++)
            if (L[i].dst == r && L[i].tested && !L[i].verdict[0] && L[i].dst_reply &&
                bu_num(L[i].dst_reply, "transfers") == 0) {
                k += snprintf(req + k, sizeof req - (size_t)k, "%s%d", first ? "" : ",", L[i].src);
                first = 0;
            }
        snprintf(req + k, sizeof req - (size_t)k, "]}");
        rs_ctl_send(c, r, NCL_WIRE_SELFTEST, req);
    }
    if (rs_ctl_wait(c, o->timeout_s + 10, "SELFTEST end"))
        return -1;
    for (int r = 0; r < c->n; r++) {
        if (c->ag[r].reply) {
            cJSON_AddItemToArray(end_replies, c->ag[r].reply);
            c->ag[r].reply = NULL;
        } else if (c->ag[r].error[0]) {
            fprintf(c->err, "ringsim bringup: %s\n", c->ag[r].error);
        }
    }
    return 0;
}

/* Verdicts of the tested links (see sim/zmq/ZMQ.md, "Verdicts"). Returns the median bandwidth. */
static double bu_judge(const rs_bringup_opts *o, bu_link *L, int nlinks, const cJSON *end_replies)
{
    double *bw = calloc((size_t)nlinks + 1, sizeof *bw), median = 0;
    int nbw = 0;
    for (int i = 0; bw && i < nlinks; i++)
        if (L[i].tested && !L[i].verdict[0] && L[i].gbps > 0 && !L[i].wrong)
            bw[nbw++] = L[i].gbps;
    if (bw && nbw) {
        qsort(bw, (size_t)nbw, sizeof *bw, bu_cmp_double);
        median = nbw % 2 ? bw[nbw / 2] : (bw[nbw / 2 - 1] + bw[nbw / 2]) / 2;
    }
    free(bw);
    for (int i = 0; i < nlinks; i++) {
        bu_link *l = &L[i];
        if (!l->tested || l->verdict[0])
            continue;
        int at = -1;
        for (const cJSON *r = end_replies->child; r && at < 0; r = r->next) {
            const cJSON *fl = cJSON_GetObjectItemCaseSensitive(r, "foreign");
            for (const cJSON *f = cJSON_IsArray(fl) ? fl->child : NULL; f; f = f->next)
                if ((int)bu_num(f, "slot_src") == l->src && (int)bu_num(f, "slot_dst") == l->dst)
                    at = (int)bu_num(r, "rank");
        }
        if (at >= 0)
            bu_set(l, "miswired", "rank %d's data for rank %d arrives at rank %d", l->src, l->dst, at);
        else if (!l->transfers)
            bu_set(l, "dead", "nothing arrives: rank %d got no DATA from rank %d within %.1f s (--timeout)", l->dst,
                   l->src, o->timeout_s);
        else if (l->wrong && l->bad_transfers == l->transfers &&
                 l->poison >= (o->bytes + RS_BU_PATTERNS * o->slot) * 9 / 10)
            bu_set(l, "miswired", "rank %d's notifies arrive but none of its data: it lands elsewhere", l->src);
        else if (l->wrong)
            bu_set(l, "corrupting", "%llu B wrong in %d of %d transfers, first at offset %lld (%s)",
                   (unsigned long long)l->wrong, l->bad_transfers, l->transfers, (long long)l->first_bad,
                   l->first_pattern ? l->first_pattern : "?");
        else if (l->transfers < l->expected_transfers)
            bu_set(l, "dead", "only %d of %d transfers arrived within %.1f s", l->transfers, l->expected_transfers,
                   o->timeout_s);
        else if (l->gbps > 0 && median > 0 && l->gbps < o->slow_factor * median)
            bu_set(l, "slow", "%.3f GB/s is below %.2f x the median %.3f GB/s (--slow-factor)", l->gbps, o->slow_factor,
                   median);
        else if (l->no_ack)
            bu_set(l, "good", "data arrives intact; not timed: no answer on %d->%d", l->dst, l->src);
        else
            bu_set(l, "good", "%s", "");
    }
    return median;
}

typedef struct bu_ring_stats {
    int run, bad, left_out, uncoverable;
} bu_ring_stats;

/* Ring allreduces through the engine whose orders cover the expected links among the agents.
 * Returns 0, or -1 when interrupted. */
static int bu_rings(rs_ctl *c, const rs_bringup_opts *o, const bu_link *L, int nlinks, cJSON *rings_json, bu_ring_stats *st,
                    FILE *out)
{
    int n = c->n, rc = 0;
    bu_cover cov = {n, NULL, calloc((size_t)n * (size_t)n, 1), calloc((size_t)n, sizeof(int)), calloc((size_t)n, 1), 0};
    unsigned char *edge = calloc((size_t)n * (size_t)n, 1);
    cov.edge = edge;
    memset(st, 0, sizeof *st);
    /* A ring writes one way but its receivers record READY the other way: a link that would
     * lose or damage data takes its reverse out of the rings too. The rings cover what is left. */
    for (int i = 0; edge && i < nlinks; i++)
        if (L[i].src < n && L[i].dst < n)
            edge[L[i].src * n + L[i].dst] = 1;
    for (int i = 0; edge && i < nlinks; i++)
        if (L[i].src < n && L[i].dst < n && bu_breaks_rings(&L[i])) {
            edge[L[i].src * n + L[i].dst] = edge[L[i].dst * n + L[i].src] = 0;
            fprintf(out, "# rings: link %d->%d (%s) and %d->%d are left out of the ring allreduces\n", L[i].src,
                    L[i].dst, L[i].verdict, L[i].dst, L[i].src);
            st->left_out++;
        }
    for (int i = 0; edge && cov.covered && cov.path && cov.used && i < nlinks && !rs_ctl_stopped(); i++) {
        const bu_link *l = &L[i];
        if (l->src >= n || l->dst >= n || cov.covered[l->src * n + l->dst] || !edge[l->src * n + l->dst])
            continue;
        memset(cov.used, 0, (size_t)n);
        cov.path[0] = l->src;
        cov.path[1] = l->dst;
        cov.used[l->src] = cov.used[l->dst] = 1;
        cov.budget = 200000;
        if (st->run >= BU_MAX_RINGS || !bu_ham(&cov, 2)) {
            st->uncoverable++;
            cov.covered[l->src * n + l->dst] = 2; /* on no ring of the expected links */
            continue;
        }
        for (int k = 0; k < n; k++) {
            int u = cov.path[k], v = cov.path[(k + 1) % n];
            if (!cov.covered[u * n + v])
                cov.covered[u * n + v] = 1;
        }
        char order[1024] = "", req[1200];
        size_t ol = 0;
        for (int k = 0; k < n && ol < sizeof order - 16; k++)
            ol += (size_t)snprintf(order + ol, sizeof order - ol, "%s%d", k ? " " : "", cov.path[k]);
        cJSON *rj = cJSON_CreateObject();
        cJSON_AddItemToObject(rj, "order", cJSON_CreateIntArray(cov.path, n));
        cJSON_AddItemToArray(rings_json, rj);
        int k = snprintf(req, sizeof req, "{\"test\":\"ring\",\"bytes\":%llu,\"order\":[", (unsigned long long)o->ring_bytes);
        for (int j = 0; j < n && k < (int)sizeof req - 16; j++)
            k += snprintf(req + k, sizeof req - (size_t)k, "%s%d", j ? "," : "", cov.path[j]);
        snprintf(req + k, sizeof req - (size_t)k, "]}");
        st->run++;
        for (int r = 0; r < n; r++)
            rs_ctl_send(c, r, NCL_WIRE_SELFTEST, req);
        if (rs_ctl_wait(c, 6 * o->timeout_s + 20, "SELFTEST ring")) {
            rc = -1;
            break;
        }
        double wrong = 0, t = 0;
        char fail[sizeof c->ag[0].error] = "";
        for (int r = 0; r < n; r++) {
            const cJSON *rp = c->ag[r].reply;
            wrong += bu_num(rp, "wrong");
            t = bu_num(rp, "time_us") > t ? bu_num(rp, "time_us") : t;
            const char *msg = c->ag[r].error[0] ? c->ag[r].error : bu_str(rp, "error");
            if (!fail[0] && *msg)
                snprintf(fail, sizeof fail, "%s", msg);
        }
        int ok = !fail[0] && wrong == 0;
        st->bad += !ok;
        cJSON_AddBoolToObject(rj, "ok", ok);
        cJSON_AddNumberToObject(rj, "bytes", (double)o->ring_bytes);
        cJSON_AddNumberToObject(rj, "wrong", wrong);
        cJSON_AddNumberToObject(rj, "time_us", t);
        cJSON_AddStringToObject(rj, "error", fail);
        if (fail[0]) {
            fprintf(out, "# ring %s: allreduce %llu B int32 sum FAILED: %s\n", order, (unsigned long long)o->ring_bytes,
                    fail);
            break; /* the engine's state after a failed collective would blame the next rings */
        }
        fprintf(out, "# ring %s: allreduce %llu B int32 sum, #wrong %.0f, %.1f us\n", order,
                (unsigned long long)o->ring_bytes, wrong, t);
    }
    free(edge);
    free(cov.covered);
    free(cov.path);
    free(cov.used);
    return rc;
}

/* The table; returns the number of links that are not good. */
static int bu_print_table(FILE *out, const bu_link *L, int nlinks)
{
    int bad = 0;
    fprintf(out, "#\n#  %-10s %10s %10s %10s  %-22s %s\n", "link", "rtt med", "rtt max", "bandwidth", "integrity", "verdict");
    fprintf(out, "#  %-10s %10s %10s %10s\n", "", "(us)", "(us)", "(GB/s)");
    for (int i = 0; i < nlinks; i++) {
        const bu_link *l = &L[i];
        char name[32], med[24], mx[24], gb[24], integ[64];
        snprintf(name, sizeof name, "%d->%d", l->src, l->dst);
        bu_fmt_num(med, sizeof med, l->rtt_med, "%.1f");
        bu_fmt_num(mx, sizeof mx, l->rtt_max, "%.1f");
        bu_fmt_num(gb, sizeof gb, l->gbps, "%.3f");
        bu_integrity(l, integ, sizeof integ);
        bad += strcmp(l->verdict, "good") != 0;
        fprintf(out, "   %-10s %10s %10s %10s  %-22s %s%s%s\n", name, med, mx, gb, integ, l->verdict,
                l->detail[0] ? ": " : "", l->detail);
    }
    return bad;
}

static int bu_write_json(FILE *json, const char *path, const rs_ctl *c, const rs_bringup_opts *o, const bu_expect *x,
                         double median, const bu_link *L, int nlinks, cJSON *rings_json, int extra, int ok, FILE *err)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "agents", c->n);
    cJSON *ex = cJSON_AddObjectToObject(j, "expected");
    cJSON_AddStringToObject(ex, "topology", x->desc);
    cJSON_AddNumberToObject(ex, "ranks", x->nranks);
    cJSON_AddNumberToObject(ex, "links", x->npairs);
    cJSON_AddNumberToObject(j, "median_gbps", median);
    cJSON_AddNumberToObject(j, "slow_factor", o->slow_factor);
    cJSON *ls = cJSON_AddArrayToObject(j, "links");
    for (int i = 0; i < nlinks; i++) {
        const bu_link *l = &L[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "src", l->src);
        cJSON_AddNumberToObject(e, "dst", l->dst);
        cJSON_AddStringToObject(e, "verdict", l->verdict);
        cJSON_AddStringToObject(e, "detail", l->detail);
        cJSON_AddNumberToObject(e, "rtt_median_us", l->rtt_med);
        cJSON_AddNumberToObject(e, "rtt_max_us", l->rtt_max);
        cJSON_AddNumberToObject(e, "gbps", l->gbps);
        cJSON_AddNumberToObject(e, "transfers", l->transfers);
        cJSON_AddNumberToObject(e, "bytes_wrong", (double)l->wrong);
        cJSON_AddNumberToObject(e, "first_bad_offset", (double)l->first_bad);
        const cJSON *pats = l->dst_reply ? cJSON_GetObjectItemCaseSensitive(l->dst_reply, "patterns") : NULL;
        cJSON_AddItemToObject(e, "patterns", pats ? cJSON_Duplicate(pats, 1) : cJSON_CreateArray());
        cJSON_AddItemToArray(ls, e);
    }
    cJSON_AddItemReferenceToObject(j, "rings", rings_json);
    cJSON *un = cJSON_AddArrayToObject(j, "unexpected");
    for (int r = x->nranks; r < x->nranks + extra; r++)
        cJSON_AddItemToArray(un, cJSON_CreateNumber(r));
    cJSON_AddBoolToObject(j, "ok", ok);
    char *s = cJSON_Print(j);
    int bad = !s || fprintf(json, "%s\n", s) < 0;
    bad |= fclose(json) != 0;
    if (bad)
        fprintf(err, "ringsim bringup: --json: cannot write '%s'\n", path);
    free(s);
    cJSON_Delete(j);
    return bad ? -1 : 0;
}

int rs_bringup(const rs_bringup_opts *opts, FILE *out, FILE *err)
{
    rs_bringup_opts o = *opts;
    rs_ctl c;
    memset(&c, 0, sizeof c);
    c.who = "ringsim bringup";
    c.err = err;
    c.max_reply = BU_MAX_REPLY;
    int rc;
    char e[RS_RT_ERRLEN];
    if (o.table_path && rs_ranktable_load(o.table_path, &c.table, e, sizeof e)) {
        fprintf(err, "%s\n", e);
        return RS_EXIT_USAGE;
    }
    c.n = o.table_path ? c.table.nranks : o.nranks ? (int)o.nranks : 4;
    char (*faults)[64] = calloc((size_t)c.n, sizeof *faults);
    bu_expect x;
    memset(&x, 0, sizeof x);
    FILE *json = NULL;
    int status = RS_EXIT_USAGE;
    if (!faults || bu_make_faults(&o, c.n, faults, err) || bu_expect_load(o.expect_spec, c.n, &x, err))
        goto early;
    if (o.json_path && !(json = fopen(o.json_path, "w"))) {
        fprintf(err, "ringsim bringup: --json: cannot write '%s': %s\n", o.json_path, strerror(errno));
        goto early;
    }
    /* The memory every agent binds grows with n^2 pattern slots: keep it bounded. */
    while ((uint64_t)c.n * (uint64_t)c.n * RS_BU_PATTERNS * o.slot > (64u << 20) && o.slot > 256)
        o.slot /= 2;
    int nlinks = 2 * x.npairs;
    bu_link *L = calloc((size_t)nlinks + 1, sizeof *L);
    cJSON *end_replies = cJSON_CreateArray(), *rings_json = cJSON_CreateArray();
    if (!L || !end_replies || !rings_json)
        goto out;
    for (int p = 0; p < x.npairs; p++)
        for (int d = 0; d < 2; d++) {
            L[2 * p + d].src = x.pairs[p][d];
            L[2 * p + d].dst = x.pairs[p][1 - d];
        }

    fprintf(out, "# ringsim bringup: %d agents%s, expected topology %s: %d ranks, %d link%s (%d directed)\n", c.n,
            o.table_path ? " (rank table)"
            : !strcmp(o.agent_backend, "mmio") ? " (spawned, emulated boards: mmio, links over ipc)"
                                                                   : " (spawned, zmq over ipc)", x.desc, x.nranks, x.npairs,
            x.npairs == 1 ? "" : "s", nlinks);
    fflush(out);
    status = bu_start(&c, &o, faults);
    if (status >= 0)
        goto stop;
    status = RS_CTL_EXIT_INTERRUPTED;
    /* 1. every directed link, one at a time (a link's bandwidth is its own), between begin and end */
    char req[256];
    snprintf(req, sizeof req, "{\"test\":\"begin\",\"bytes\":%llu,\"slot\":%llu,\"seed\":%ld}",
             (unsigned long long)o.bytes, (unsigned long long)o.slot, o.seed);
    rc = bu_all(&c, req, 30, "SELFTEST begin");
    if (rc)
        goto stop_rc;
    for (int i = 0; i < nlinks; i++)
        if (rs_ctl_stopped() || bu_test_link(&c, &o, &L[i]))
            goto stop;
    if (bu_end_all(&c, &o, L, nlinks, end_replies))
        goto stop;
    /* 2. verdicts, 3. rings over the links, 4. the report */
    double median = bu_judge(&o, L, nlinks, end_replies);
    bu_ring_stats rs;
    if (bu_rings(&c, &o, L, nlinks, rings_json, &rs, out))
        goto stop;
    int bad = bu_print_table(out, L, nlinks);
    int extra = c.n > x.nranks ? c.n - x.nranks : 0;
    for (int r = x.nranks; r < c.n; r++)
        fprintf(out, "# unexpected: rank %d has an agent but no place in the expected topology (%d ranks)\n", r,
                x.nranks);
    if (rs.uncoverable)
        fprintf(out, "# %d good directed link(s) lie on no ring of the good expected links among the agents: tested by "
                "the link tests only\n", rs.uncoverable);
    int ok = !bad && !rs.bad && !extra;
    fprintf(out, "# %d of %d links good, %d bad; %d ring allreduce(s): %d correct, %d failed; %s\n", nlinks - bad,
            nlinks, bad, rs.run, rs.run - rs.bad, rs.bad, ok ? "all good" : "BRING-UP FAILED");
    status = ok ? RS_EXIT_OK : BU_EXIT_BAD;
    if (json) {
        FILE *j = json;
        json = NULL;
        if (bu_write_json(j, o.json_path, &c, &o, &x, median, L, nlinks, rings_json, extra, ok, err) && ok)
            status = RS_EXIT_USAGE;
    }
    goto stop;
stop_rc:
    status = rc < 0 ? RS_CTL_EXIT_INTERRUPTED : BU_EXIT_BAD;
stop:
    if (status == RS_CTL_EXIT_INTERRUPTED)
        fprintf(err, "ringsim bringup: interrupted: stopping the agents\n");
out:
    rs_ctl_finish(&c, o.shutdown_remote, status == RS_CTL_EXIT_INTERRUPTED);
    for (int i = 0; L && i < nlinks; i++) {
        cJSON_Delete(L[i].src_reply);
        cJSON_Delete(L[i].dst_reply);
    }
    cJSON_Delete(end_replies);
    cJSON_Delete(rings_json);
    free(L);
early:
    if (json)
        fclose(json);
    free(faults);
    free(x.pairs);
    rs_ranktable_free(&c.table);
    return status;
}
