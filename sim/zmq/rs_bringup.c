/* rs_bringup.c — `ringsim bringup`: tests every expected link of a set of agents and names the bad ones. */
#define _GNU_SOURCE
#include "rs_bringup.h"
#include "rs_ctl.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ncl/ncl.h"
#include "ncl/ncl_wire.h"
#include "report/rs_junit.h"
#include "sweep/rs_sweep.h"
#include "rs_ranktable.h"
#include "scenario/rs_scenario.h"

#define BU_MAX_REPLY (16u << 20)
#define BU_MAX_RINGS 64
#define BU_EXIT_BAD 1
#define BU_MAX_REPS 100   /* the agent's limit of timed transfers per link test */
#define BU_NOISE_K 2.0    /* a slow link's gap must exceed this many noise sigmas */
#define BU_WHY 4096       /* both agents' errors (rs_ctl_agent.error) */

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
    double *bw;             /* bandwidth samples (GB/s): the first pass's, then the re-test's */
    int nbw, nbw_first;
    int retested;
    double gbps, bw_min, bw_max; /* median, min, max of bw */
    double rtt_med, rtt_max;
    double time_s;          /* wall time of its link tests */
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

/* Median of v[0..n) (sorts v); 0 when n is 0. */
static double bu_median(double *v, int n)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, bu_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double bu_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
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

/* Appends a source reply's bandwidth samples to l->bw and refreshes their median, min and max. */
static void bu_add_samples(bu_link *l, const cJSON *src_reply)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(src_reply, "samples_gbps");
    int n = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;
    double *bw = n ? realloc(l->bw, (size_t)(l->nbw + n) * sizeof *bw) : NULL;
    if (!bw)
        return;
    l->bw = bw;
    for (const cJSON *x = a->child; x; x = x->next)
        if (cJSON_IsNumber(x) && x->valuedouble > 0)
            l->bw[l->nbw++] = x->valuedouble;
    double *v = malloc((size_t)l->nbw * sizeof *v);
    if (!v || !l->nbw) {
        free(v);
        return;
    }
    memcpy(v, l->bw, (size_t)l->nbw * sizeof *v);
    l->gbps = bu_median(v, l->nbw);
    l->bw_min = v[0];
    l->bw_max = v[l->nbw - 1];
    free(v);
}

/* Fills the measured fields of l from both sides' replies. */
static void bu_link_measure(bu_link *l)
{
    const cJSON *s = l->src_reply, *d = l->dst_reply;
    bu_add_samples(l, s);
    l->nbw_first = l->nbw;
    l->no_ack = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "no_ack"));
    const cJSON *rtt = cJSON_GetObjectItemCaseSensitive(s, "rtt_us");
    int n = cJSON_IsArray(rtt) ? cJSON_GetArraySize(rtt) : 0;
    if (n > 0) {
        double *v = calloc((size_t)n, sizeof *v);
        int k = 0;
        for (const cJSON *x = rtt->child; v && x; x = x->next)
            v[k++] = x->valuedouble;
        if (v && k) {
            l->rtt_med = bu_median(v, k);
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
    o->reps = 5;
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

/* One run of the link test l->src -> l->dst (reps timed transfers, the patterns, pings): arm the
 * destination, then run both sides; the replies go to *src and *dst (owned by the caller), a
 * problem to why. 0, or -1 when interrupted. Link tests never overlap: a link's numbers are its own. */
static int bu_link_run(rs_ctl *c, const rs_bringup_opts *o, const bu_link *l, long reps, long pings, cJSON **src,
                       cJSON **dst, char *why, size_t len)
{
    char req[256];
    long tmo_ms = (long)(o->timeout_s * 1000);
    why[0] = '\0';
    snprintf(req, sizeof req, "{\"test\":\"arm\",\"src\":%d}", l->src);
    rs_ctl_send(c, l->dst, NCL_WIRE_SELFTEST, req);
    if (rs_ctl_wait(c, o->timeout_s + 10, "SELFTEST arm"))
        return -1;
    if (c->ag[l->dst].error[0]) {
        snprintf(why, len, "%s", c->ag[l->dst].error);
        return 0;
    }
    snprintf(req, sizeof req, "{\"test\":\"link\",\"src\":%d,\"dst\":%d,\"reps\":%ld,\"pings\":%ld,\"timeout_ms\":%ld}",
             l->src, l->dst, reps, pings, tmo_ms);
    rs_ctl_send(c, l->src, NCL_WIRE_SELFTEST, req);
    rs_ctl_send(c, l->dst, NCL_WIRE_SELFTEST, req);
    /* each side waits at most about two timeouts per step */
    if (rs_ctl_wait(c, 2 * o->timeout_s * (double)(1 + reps + RS_BU_PATTERNS + 2 + pings) + 10, "SELFTEST link"))
        return -1;
    rs_ctl_agent *as = &c->ag[l->src], *ad = &c->ag[l->dst];
    *src = as->reply;
    *dst = ad->reply;
    as->reply = ad->reply = NULL;
    const char *se = as->error[0] ? as->error : bu_str(*src, "error");
    const char *de = ad->error[0] ? ad->error : bu_str(*dst, "error");
    if (*se || *de)
        snprintf(why, len, "%s%s%s", se, *se && *de ? "; " : "", de);
    return 0;
}

/* The first pass over one directed link. 0, or -1 when interrupted. */
static int bu_test_link(rs_ctl *c, const rs_bringup_opts *o, bu_link *l)
{
    char why[BU_WHY];
    if (l->src >= c->n || l->dst >= c->n) {
        bu_set(l, "missing", "rank %d has no agent (%d agents: 0..%d)", l->src >= c->n ? l->src : l->dst, c->n, c->n - 1);
        return 0;
    }
    l->tested = 1;
    double t0 = bu_now_s();
    int rc = bu_link_run(c, o, l, o->reps, o->pings, &l->src_reply, &l->dst_reply, why, sizeof why);
    l->time_s = bu_now_s() - t0;
    if (rc)
        return -1;
    if (l->src_reply && l->dst_reply)
        bu_link_measure(l);
    if (why[0])
        bu_set(l, "error", "%s", why);
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

/* ---- bandwidth: the noise model (sim/zmq/ZMQ.md, "The noise model") ------------------------------- */

/* Load on the hosts only ever slows a transfer down (a preempted sender or receiver), never speeds
 * it up, and it comes and goes: a link is slow only when all its samples, and a later re-test's,
 * stay below a bound that the run's own noise has widened. */
typedef struct bu_bw {
    double median;  /* M: the median of the timed links' first-pass medians, GB/s */
    double sigma;   /* the run's noise: 1.4826 x the median |ln(sample / its link's median)| */
    double factor;  /* min(--slow-factor, e^(-BU_NOISE_K sigma)) */
    double bound;   /* factor x M */
    int suspects, cleared;
} bu_bw;

/* A link whose bandwidth is judged: timed, and everything arrived intact (else it is judged on that). */
static int bu_timed(const bu_link *l)
{
    return l->tested && !l->verdict[0] && l->nbw > 0 && !l->wrong && l->transfers == l->expected_transfers;
}

static double bu_max(const double *v, int n)
{
    double m = 0;
    for (int i = 0; i < n; i++)
        m = v[i] > m ? v[i] : m;
    return m;
}

/* M, the noise and the slow bound from the first pass. */
static void bu_noise(const rs_bringup_opts *o, const bu_link *L, int nlinks, bu_bw *bw)
{
    int nl = 0, ns = 0;
    memset(bw, 0, sizeof *bw);
    for (int i = 0; i < nlinks; i++)
        if (bu_timed(&L[i])) {
            nl++;
            ns += L[i].nbw;
        }
    double *med = calloc((size_t)nl + 1, sizeof *med), *dev = calloc((size_t)ns + 1, sizeof *dev);
    int k = 0, m = 0;
    for (int i = 0; med && dev && i < nlinks; i++)
        if (bu_timed(&L[i])) {
            med[k++] = L[i].gbps;
            for (int j = 0; j < L[i].nbw; j++)
                dev[m++] = fabs(log(L[i].bw[j] / L[i].gbps));
        }
    bw->median = bu_median(med, k);
    bw->sigma = 1.4826 * bu_median(dev, m); /* 1.4826 x the MAD: a normal distribution's sigma */
    double noise = exp(-BU_NOISE_K * bw->sigma);
    bw->factor = o->slow_factor < noise ? o->slow_factor : noise;
    bw->bound = bw->factor * bw->median;
    free(med);
    free(dev);
}

/* Suspects (every first-pass sample below the bound) get 2 x --reps more transfers, alone like the
 * first pass, after it: a burst of load rarely lasts that long. 0, or -1 when interrupted. */
static int bu_retest(rs_ctl *c, const rs_bringup_opts *o, bu_link *L, int nlinks, bu_bw *bw)
{
    long reps = 2 * o->reps < BU_MAX_REPS ? 2 * o->reps : BU_MAX_REPS;
    for (int i = 0; i < nlinks && !rs_ctl_stopped(); i++) {
        bu_link *l = &L[i];
        if (!bu_timed(l) || !(l->bw_max < bw->bound))
            continue;
        cJSON *src = NULL, *dst = NULL;
        char why[BU_WHY];
        double t0 = bu_now_s();
        int rc = bu_link_run(c, o, l, reps, 0, &src, &dst, why, sizeof why);
        l->time_s += bu_now_s() - t0;
        bw->suspects++;
        l->retested = 1;
        if (!rc && !why[0])
            bu_add_samples(l, src);
        cJSON_Delete(src);
        cJSON_Delete(dst);
        if (rc)
            return -1;
        if (why[0])
            bu_set(l, "error", "re-test of a slow suspect: %s", why);
        else
            bw->cleared += !(l->bw_max < bw->bound);
    }
    return rs_ctl_stopped() ? -1 : 0;
}

/* Verdicts of the tested links (see sim/zmq/ZMQ.md, "Verdicts"). */
static void bu_judge(const rs_bringup_opts *o, const bu_bw *bw, bu_link *L, int nlinks, const cJSON *end_replies)
{
    char lowered[96] = "";
    if (bw->factor < o->slow_factor)
        snprintf(lowered, sizeof lowered, ", lowered from %.2f by this run's noise +-%.0f %%", o->slow_factor,
                 100 * (exp(bw->sigma) - 1));
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
            /* a link that slow cannot be told from a dead one within the timeout: say both */
            bu_set(l, "dead", "nothing arrives: rank %d got no DATA from rank %d within %.1f s (--timeout): the link "
                   "is down, or too slow to carry %llu B in that time (below %.2g GB/s; a longer --timeout or "
                   "smaller --bytes would tell)", l->dst, l->src, o->timeout_s, (unsigned long long)o->bytes,
                   (double)o->bytes / (o->timeout_s * 1e9));
        else if (l->wrong && l->bad_transfers == l->transfers &&
                 l->poison >= (o->bytes + RS_BU_PATTERNS * o->slot) * 9 / 10)
            bu_set(l, "miswired", "rank %d's notifies arrive but none of its data: it lands elsewhere", l->src);
        else if (l->wrong)
            bu_set(l, "corrupting", "%llu B wrong in %d of %d transfers, first at offset %lld (%s)",
                   (unsigned long long)l->wrong, l->bad_transfers, l->transfers, (long long)l->first_bad,
                   l->first_pattern ? l->first_pattern : "?");
        else if (l->transfers < l->expected_transfers) {
            /* the bandwidth transfers come first, then the patterns' slots */
            uint64_t next = l->transfers < l->expected_transfers - RS_BU_PATTERNS ? o->bytes : o->slot;
            bu_set(l, "dead", "only %d of %d transfers arrived, the next not within %.1f s (--timeout): the link "
                   "stopped, or is too slow to carry %llu B in that time (below %.2g GB/s)", l->transfers,
                   l->expected_transfers, o->timeout_s, (unsigned long long)next, (double)next / (o->timeout_s * 1e9));
        } else if (l->retested && l->bw_max < bw->bound)
            bu_set(l, "slow", "%.3f GB/s is below %.2f x the median %.3f GB/s (--slow-factor%s), and so is every one "
                   "of %d samples, first pass and re-test (fastest %.3f GB/s)", l->gbps, bw->factor, bw->median,
                   lowered, l->nbw, l->bw_max);
        else if (l->retested)
            bu_set(l, "good", "re-tested: every first-pass sample was below %.3f GB/s, the re-test reached %.3f GB/s "
                   "(load, not the link)", bw->bound, bu_max(l->bw + l->nbw_first, l->nbw - l->nbw_first));
        else if (l->no_ack)
            bu_set(l, "good", "data arrives intact; not timed: no answer on %d->%d", l->dst, l->src);
        else
            bu_set(l, "good", "%s", "");
    }
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

/* The noise line and the table; returns the number of links that are not good. */
static int bu_print_table(FILE *out, const rs_bringup_opts *o, const bu_bw *bw, const bu_link *L, int nlinks)
{
    int bad = 0;
    if (bw->median > 0)
        fprintf(out, "#\n# bandwidth: median of the links' medians %.3f GB/s, noise +-%.0f %% (sigma %.3f of ln GB/s); "
                "slow below %.3f GB/s (%.2f x the median%s); %d suspect(s) re-tested, %d cleared\n", bw->median,
                100 * (exp(bw->sigma) - 1), bw->sigma, bw->bound, bw->factor,
                bw->factor < o->slow_factor ? ", lowered by the noise from --slow-factor" : "", bw->suspects,
                bw->cleared);
    fprintf(out, "#\n#  %-10s %10s %10s %10s %10s %10s  %-22s %s\n", "link", "rtt med", "rtt max", "bw med", "bw min",
            "bw max", "integrity", "verdict");
    fprintf(out, "#  %-10s %10s %10s %10s %10s %10s\n", "", "(us)", "(us)", "(GB/s)", "(GB/s)", "(GB/s)");
    for (int i = 0; i < nlinks; i++) {
        const bu_link *l = &L[i];
        char name[32], med[24], mx[24], gb[24], gbmin[24], gbmax[24], integ[64];
        snprintf(name, sizeof name, "%d->%d", l->src, l->dst);
        bu_fmt_num(med, sizeof med, l->rtt_med, "%.1f");
        bu_fmt_num(mx, sizeof mx, l->rtt_max, "%.1f");
        bu_fmt_num(gb, sizeof gb, l->gbps, "%.3f");
        bu_fmt_num(gbmin, sizeof gbmin, l->bw_min, "%.3f");
        bu_fmt_num(gbmax, sizeof gbmax, l->bw_max, "%.3f");
        bu_integrity(l, integ, sizeof integ);
        bad += strcmp(l->verdict, "good") != 0;
        fprintf(out, "   %-10s %10s %10s %10s %10s %10s  %-22s %s%s%s\n", name, med, mx, gb, gbmin, gbmax, integ,
                l->verdict, l->detail[0] ? ": " : "", l->detail);
    }
    return bad;
}

static int bu_write_json(FILE *json, const char *path, const rs_ctl *c, const rs_bringup_opts *o, const bu_expect *x,
                         const bu_bw *bw, const bu_link *L, int nlinks, cJSON *rings_json, int extra, int ok, FILE *err)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "agents", c->n);
    cJSON *ex = cJSON_AddObjectToObject(j, "expected");
    cJSON_AddStringToObject(ex, "topology", x->desc);
    cJSON_AddNumberToObject(ex, "ranks", x->nranks);
    cJSON_AddNumberToObject(ex, "links", x->npairs);
    cJSON_AddNumberToObject(j, "median_gbps", bw->median);
    cJSON_AddNumberToObject(j, "slow_factor", o->slow_factor);
    cJSON_AddNumberToObject(j, "noise_sigma", bw->sigma);
    cJSON_AddNumberToObject(j, "slow_effective_factor", bw->factor);
    cJSON_AddNumberToObject(j, "slow_below_gbps", bw->bound);
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
        cJSON_AddNumberToObject(e, "gbps_min", l->bw_min);
        cJSON_AddNumberToObject(e, "gbps_max", l->bw_max);
        cJSON_AddItemToObject(e, "gbps_samples", cJSON_CreateDoubleArray(l->bw ? l->bw : (double[]){0}, l->nbw));
        cJSON_AddNumberToObject(e, "first_pass_samples", l->nbw_first);
        cJSON_AddBoolToObject(e, "retested", l->retested);
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

/* JUnit XML: a testcase per expected link ("link 0->1"), ring allreduce ("ring 0 1 2 3") and agent
 * without a place in the topology ("rank 4"); a failure holds the verdict and its reason. 0 or -1. */
static int bu_write_junit(const char *path, const bu_link *L, int nlinks, const cJSON *rings_json, int nexpected,
                          int extra, uint64_t ring_bytes, FILE *err)
{
    rs_junit *j = rs_junit_new("ringsim bringup");
    if (!j) {
        fprintf(err, "ringsim bringup: --junit: cannot write '%s': out of memory\n", path);
        return -1;
    }
    char name[1100], fail[600];
    for (int i = 0; i < nlinks; i++) {
        const bu_link *l = &L[i];
        snprintf(name, sizeof name, "link %d->%d", l->src, l->dst);
        snprintf(fail, sizeof fail, "%s%s%s", l->verdict, l->detail[0] ? ": " : "", l->detail);
        rs_junit_add(j, "ringsim.bringup.link", name, l->tested ? l->time_s : -1, strcmp(l->verdict, "good") ? fail : NULL);
    }
    for (const cJSON *r = rings_json->child; r; r = r->next) {
        const cJSON *ord = cJSON_GetObjectItemCaseSensitive(r, "order");
        size_t k = (size_t)snprintf(name, sizeof name, "ring");
        for (const cJSON *v = cJSON_IsArray(ord) ? ord->child : NULL; v && k < sizeof name - 16; v = v->next)
            k += (size_t)snprintf(name + k, sizeof name - k, " %d", v->valueint);
        const char *e = bu_str(r, "error");
        if (*e)
            snprintf(fail, sizeof fail, "allreduce %llu B int32 sum failed: %s", (unsigned long long)ring_bytes, e);
        else
            snprintf(fail, sizeof fail, "allreduce %llu B int32 sum: #wrong %.0f", (unsigned long long)ring_bytes,
                     bu_num(r, "wrong"));
        rs_junit_add(j, "ringsim.bringup.ring", name, bu_num(r, "time_us") * 1e-6,
                     cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "ok")) ? NULL : fail);
    }
    for (int r = nexpected; r < nexpected + extra; r++) {
        snprintf(name, sizeof name, "rank %d", r);
        snprintf(fail, sizeof fail, "unexpected: rank %d has an agent but no place in the expected topology (%d ranks)",
                 r, nexpected);
        rs_junit_add(j, "ringsim.bringup.rank", name, -1, fail);
    }
    return rs_junit_write(j, path, err) ? -1 : 0;
}

/* JUnit XML of a bring-up that stopped before its verdicts: one failed testcase, so CI never reads
 * the empty file tried at the start as a pass. */
static void bu_write_junit_stopped(const char *path, int status, FILE *err)
{
    rs_junit *j = rs_junit_new("ringsim bringup");
    char why[200];
    if (!j) {
        fprintf(err, "ringsim bringup: --junit: cannot write '%s': out of memory\n", path);
        return;
    }
    if (status == RS_CTL_EXIT_INTERRUPTED)
        snprintf(why, sizeof why, "interrupted before the verdicts");
    else
        snprintf(why, sizeof why, "no verdicts: the agents did not all come up or failed a bring-up step (exit status "
                 "%d; its messages say which)", status);
    rs_junit_add(j, "ringsim.bringup", "bring-up", -1, why); /* out of memory: the file says so */
    rs_junit_write(j, path, err);
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
    /* --junit's file is written at the end (it needs the verdicts): tried now all the same */
    if (!rs_junit_try(o.junit_path, "ringsim bringup", err))
        goto early;
    int junit_due = o.junit_path != NULL;
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
    /* 2. the run's noise, then slow suspects re-tested, while the buffers are still bound */
    bu_bw bw;
    bu_noise(&o, L, nlinks, &bw);
    if (bu_retest(&c, &o, L, nlinks, &bw) || bu_end_all(&c, &o, L, nlinks, end_replies))
        goto stop;
    /* 3. verdicts, 4. rings over the links, 5. the report */
    bu_judge(&o, &bw, L, nlinks, end_replies);
    bu_ring_stats rs;
    if (bu_rings(&c, &o, L, nlinks, rings_json, &rs, out))
        goto stop;
    int bad = bu_print_table(out, &o, &bw, L, nlinks);
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
        if (bu_write_json(j, o.json_path, &c, &o, &x, &bw, L, nlinks, rings_json, extra, ok, err) && ok)
            status = RS_EXIT_USAGE;
    }
    if (junit_due) {
        junit_due = 0;
        if (bu_write_junit(o.junit_path, L, nlinks, rings_json, x.nranks, extra, o.ring_bytes, err) && ok)
            status = RS_EXIT_USAGE;
    }
    goto stop;
stop_rc:
    status = rc < 0 ? RS_CTL_EXIT_INTERRUPTED : BU_EXIT_BAD;
stop:
    if (status == RS_CTL_EXIT_INTERRUPTED)
        fprintf(err, "ringsim bringup: interrupted: stopping the agents\n");
    if (junit_due)
        bu_write_junit_stopped(o.junit_path, status, err);
out:
    rs_ctl_finish(&c, o.shutdown_remote, status == RS_CTL_EXIT_INTERRUPTED);
    for (int i = 0; L && i < nlinks; i++) {
        cJSON_Delete(L[i].src_reply);
        cJSON_Delete(L[i].dst_reply);
        free(L[i].bw);
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
