/* rs_calib_fit.c — `ringsim calibrate`: scenario values fitted to measured rows by least squares on the model (GSL's trust-region solver), rows held out of the fit, and the calibrated scenario written with its provenance. */
#define _POSIX_C_SOURCE 200809L
#include "calib/rs_calib.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_multimin.h>
#include <gsl/gsl_vector.h>

#include "harness/rs_simrun.h"
#include "scenario/rs_scenario.h"
#include "scenario/rs_units.h"

#define CALIB_KIND(k) (1u << RS_TOPO_##k)
#define CALIB_NO_LINK_FIELD SIZE_MAX

/* A scenario value calibrate may fit or pin: where it lives, its unit, the topologies that have it,
 * and the range a fitted value is kept in (the loader's own limits, or physical sense). */
typedef struct calib_key {
    const char *name;
    rs_unit_kind unit;
    size_t offset;     /* in rs_scenario */
    unsigned kinds;    /* a bit per rs_topo_kind that has it; 0: every kind */
    size_t link_field; /* topology.link.*: the field in rs_link_params, which a `links` list's links follow */
    double lo, hi;
    int whole;         /* stored as uint64_t bytes, not a double */
} calib_key;

static const calib_key calib_keys[] = {
    {"topology.link.bandwidth", RS_UNIT_BANDWIDTH, offsetof(rs_scenario, topo.link.bandwidth), 0,
     offsetof(rs_link_params, bandwidth), 1e6, 1e15, 0},
    {"topology.link.latency", RS_UNIT_TIME, offsetof(rs_scenario, topo.link.latency), 0,
     offsetof(rs_link_params, latency), 1e-12, 0.1, 0},
    {"topology.link.duplex_bandwidth", RS_UNIT_BANDWIDTH, offsetof(rs_scenario, topo.link.duplex_bandwidth), 0,
     offsetof(rs_link_params, duplex_bandwidth), 1e6, 1e15, 0},
    {"topology.nic.bandwidth", RS_UNIT_BANDWIDTH, offsetof(rs_scenario, topo.nic.bandwidth), CALIB_KIND(CLUSTER),
     CALIB_NO_LINK_FIELD, 1e6, 1e15, 0},
    {"topology.nic.latency", RS_UNIT_TIME, offsetof(rs_scenario, topo.nic.latency), CALIB_KIND(CLUSTER),
     CALIB_NO_LINK_FIELD, 1e-12, 0.1, 0},
    {"topology.nic.duplex_bandwidth", RS_UNIT_BANDWIDTH, offsetof(rs_scenario, topo.nic.duplex_bandwidth),
     CALIB_KIND(CLUSTER), CALIB_NO_LINK_FIELD, 1e6, 1e15, 0},
    {"topology.switch.latency", RS_UNIT_TIME, offsetof(rs_scenario, topo.sw.latency),
     CALIB_KIND(SWITCH) | CALIB_KIND(FAT_TREE) | CALIB_KIND(CLUSTER), CALIB_NO_LINK_FIELD, 1e-12, 0.1, 0},
    {"device.task_overhead", RS_UNIT_TIME, offsetof(rs_scenario, device.task_overhead), 0, CALIB_NO_LINK_FIELD,
     1e-12, 1.0, 0},
    {"device.memory_bandwidth", RS_UNIT_BANDWIDTH, offsetof(rs_scenario, device.mem_bandwidth), 0,
     CALIB_NO_LINK_FIELD, 1e6, 1e15, 0},
    {"device.reduce_bandwidth", RS_UNIT_BANDWIDTH, offsetof(rs_scenario, device.reduce_bandwidth), 0,
     CALIB_NO_LINK_FIELD, 1e6, 1e15, 0},
    {"device.launch_overhead", RS_UNIT_TIME, offsetof(rs_scenario, device.launch_overhead), 0, CALIB_NO_LINK_FIELD,
     1e-12, 1.0, 0},
    {"device.latency_path_overhead", RS_UNIT_TIME, offsetof(rs_scenario, device.latency_path_overhead), 0,
     CALIB_NO_LINK_FIELD, 1e-12, 1.0, 0},
    {"device.latency_path_efficiency", RS_UNIT_COUNT, offsetof(rs_scenario, device.latency_path_efficiency), 0,
     CALIB_NO_LINK_FIELD, 0.01, 1.0, 0},
    {"workload.latency_path", RS_UNIT_SIZE, offsetof(rs_scenario, workload.latency_path), 0, CALIB_NO_LINK_FIELD, 1,
     1099511627776.0, 1},
};
#define CALIB_NKEYS (sizeof calib_keys / sizeof calib_keys[0])

const char *rs_calib_keys_allowed(void)
{
    static char list[1024]; /* the table's names, with the topologies that have each where not all */
    if (list[0])
        return list;
    size_t used = 0;
    for (size_t i = 0; i < CALIB_NKEYS && used < sizeof list; i++) {
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", calib_keys[i].name);
        for (int kind = 0, first = 1; calib_keys[i].kinds && kind < RS_TOPO_KIND_COUNT && used < sizeof list; kind++)
            if (calib_keys[i].kinds >> kind & 1u) {
                used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", first ? " (" : "/",
                                         rs_scenario_kind_name((rs_topo_kind)kind));
                first = 0;
            }
        if (calib_keys[i].kinds && used < sizeof list)
            used += (size_t)snprintf(list + used, sizeof list - used, ")");
    }
    return list;
}

static const calib_key *calib_key_find(const char *name, size_t len)
{
    for (size_t i = 0; i < CALIB_NKEYS; i++)
        if (strlen(calib_keys[i].name) == len && strncmp(calib_keys[i].name, name, len) == 0)
            return &calib_keys[i];
    return NULL;
}

/* A key's value in the scenario (SI); the latency path's overhead, unset, is the task overhead. */
static double calib_get(const rs_scenario *sc, const calib_key *k)
{
    const char *at = (const char *)sc + k->offset;
    double v = k->whole ? (double)*(const uint64_t *)at : *(const double *)at;
    return v < 0 && k->offset == offsetof(rs_scenario, device.latency_path_overhead) ? sc->device.task_overhead : v;
}

/* Sets a key's value; a `links` list's links that had the old value (took the default) follow. */
static void calib_set(rs_scenario *sc, const calib_key *k, double value)
{
    char *at = (char *)sc + k->offset;
    if (k->whole) {
        *(uint64_t *)at = (uint64_t)llround(value);
        return;
    }
    double *f = (double *)at, old = *f;
    *f = value;
    if (k->link_field != CALIB_NO_LINK_FIELD && sc->topo.kind == RS_TOPO_LINKS)
        for (size_t i = 0; i < sc->topo.links_count; i++) {
            double *lf = (double *)((char *)&sc->topo.links[i].params + k->link_field);
            if (*lf == old)
                *lf = value;
        }
}

int rs_calib_param_parse(const rs_scenario *sc, const char *spec, int pinned, rs_calib_param *p, char *why,
                         size_t len)
{
    memset(p, 0, sizeof *p);
    p->tied = -1;
    const char *eq = strchr(spec, '=');
    size_t klen = eq ? (size_t)(eq - spec) : strlen(spec);
    const calib_key *k = calib_key_find(spec, klen);
    if (!k) {
        snprintf(why, len, "'%.*s' is not a key calibrate sets (allowed: %s)", (int)klen, spec,
                 rs_calib_keys_allowed());
        return -1;
    }
    if (k->kinds && !(k->kinds & (1u << sc->topo.kind))) {
        snprintf(why, len, "%s: the scenario's topology (%s) has none", k->name,
                 rs_scenario_kind_name(sc->topo.kind));
        return -1;
    }
    p->key = k->name;
    p->pinned = pinned;
    p->start = calib_get(sc, k);
    if (pinned && !eq) {
        snprintf(why, len, "--pin %s needs a value (KEY=VALUE, e.g. %s=%s)", k->name, k->name,
                 k->unit == RS_UNIT_TIME ? "2 us" : "25 GB/s");
        return -1;
    }
    if (eq) {
        char msg[160];
        if (rs_units_parse(eq + 1, k->unit, &p->start, msg, sizeof msg) != RS_UNITS_OK) {
            snprintf(why, len, "%s: %s (allowed: a %s in %s)", k->name, msg, rs_units_kind_name(k->unit),
                     rs_units_allowed(k->unit));
            return -1;
        }
    }
    /* a pinned time may be none at all: only fitted values live in log space */
    double lo = pinned && k->unit == RS_UNIT_TIME ? 0 : k->lo;
    if (!(p->start >= lo && p->start <= k->hi)) {
        char los[48], his[48], v[48];
        rs_units_format(lo, k->unit, los, sizeof los);
        rs_units_format(k->hi, k->unit, his, sizeof his);
        rs_units_format(p->start, k->unit, v, sizeof v);
        snprintf(why, len, "%s: %s %s (allowed: %s to %s%s)", k->name, pinned ? "pinned at" : "starts at", v, los, his,
                 pinned || eq ? "" : "; give a start with --fit KEY=VALUE");
        return -1;
    }
    p->value = p->start;
    p->sigma = NAN;
    return 0;
}

/* A fitted value as the scenario will say it: 4 significant digits (its uncertainty is larger). */
static double calib_round(double v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.4g", v);
    return strtod(buf, NULL);
}

/* ---- a bring-up's links: the boards on the bench ------------------------------------------------ */

/* Appends o to the scenario's overrides: where it went, or NULL when memory runs out. */
static rs_link_override *calib_override_add(rs_topology_spec *t, rs_link_override o)
{
    rs_link_override *grown = realloc(t->overrides, (t->overrides_count + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    t->overrides = grown;
    t->overrides[t->overrides_count] = o;
    return &t->overrides[t->overrides_count++];
}

/* The override of one-way link a->b, added when the scenario has none; one that covers both ways is
 * split in two first. NULL when memory runs out. */
static rs_link_override *calib_override(rs_scenario *sc, int a, int b)
{
    rs_topology_spec *t = &sc->topo;
    for (size_t i = 0; i < t->overrides_count; i++) {
        rs_link_override *o = &t->overrides[i];
        int same = o->ends.a == a && o->ends.b == b, back = o->ends.a == b && o->ends.b == a;
        if (same && !o->ends.both)
            return o;
        if (o->ends.both && (same || back)) {
            rs_link_override other = *o;
            other.ends.a = o->ends.b, other.ends.b = o->ends.a, other.ends.both = 0;
            rs_link_override *added = calib_override_add(t, other);
            if (!added)
                return NULL;
            t->overrides[i].ends.both = 0;
            return same ? &t->overrides[i] : added;
        }
    }
    rs_link_override fresh;
    memset(&fresh, 0, sizeof fresh);
    fresh.ends.a = a, fresh.ends.b = b;
    fresh.bandwidth = fresh.latency = -1;
    return calib_override_add(t, fresh);
}

int rs_calib_links(rs_scenario *sc, const rs_meas_table *const *tables, size_t ntables, rs_calib_fit *fit, FILE *err)
{
    for (size_t k = 0; k < ntables; k++)
        for (size_t i = 0; i < tables[k]->nlinks; i++) {
            const rs_meas_link *l = &tables[k]->links[i];
            const char *v = l->verdict;
            if (!rs_scenario_link_exists(&sc->topo, l->src, l->dst)) {
                fprintf(err, "ringsim: calibrate: %s:%d: the bring-up's link %d->%d is no link of the scenario's "
                        "topology (%s; allowed: a scenario of the boards as they are cabled)\n", tables[k]->name,
                        l->line, l->src, l->dst, rs_scenario_kind_name(sc->topo.kind));
                return RS_EXIT_USAGE;
            }
            if (strcmp(v, "good") && strcmp(v, "slow") && strcmp(v, "dead")) {
                fprintf(err, "ringsim: calibrate: %s:%d: link %d->%d is %s: fix it and run the bring-up again "
                        "(allowed: links the bring-up found good, slow or dead)\n", tables[k]->name, l->line, l->src,
                        l->dst, v);
                return RS_EXIT_USAGE;
            }
            rs_calib_link *grown = realloc(fit->links, (size_t)(fit->nlinks + 1) * sizeof *grown);
            if (!grown) {
                fprintf(err, "ringsim: calibrate: out of memory for the bring-up's links\n");
                return RS_EXIT_USAGE;
            }
            fit->links = grown;
            rs_calib_link *cl = &fit->links[fit->nlinks++];
            memset(cl, 0, sizeof *cl);
            cl->src = l->src, cl->dst = l->dst;
            snprintf(cl->verdict, sizeof cl->verdict, "%s", v);
            if (!strcmp(v, "dead")) { /* down from the start: the rings go around it */
                rs_fault *grown = realloc(sc->faults, (sc->faults_count + 1) * sizeof *grown);
                if (!grown)
                    return RS_EXIT_USAGE;
                sc->faults = grown;
                rs_fault *f = &sc->faults[sc->faults_count++];
                memset(f, 0, sizeof *f);
                f->kind = RS_FAULT_DOWN;
                f->ends.a = l->src, f->ends.b = l->dst;
                f->bandwidth = f->latency = -1;
                continue;
            }
            /* as measured: the transfers' median rate, half the ping's median round trip */
            cl->bandwidth = calib_round(l->gbps * 1e9);
            cl->latency = calib_round(l->rtt_median_us * 1e-6 / 2);
            rs_link_override *o = calib_override(sc, l->src, l->dst);
            if (!o || !(cl->bandwidth > 0) || !(cl->latency >= 0)) {
                fprintf(err, "ringsim: calibrate: %s:%d: link %d->%d: %s\n", tables[k]->name, l->line, l->src, l->dst,
                        o ? "no bandwidth or round trip measured (allowed: a link the bring-up measured)"
                          : "out of memory");
                return RS_EXIT_USAGE;
            }
            o->bandwidth = cl->bandwidth;
            o->latency = cl->latency;
        }
    return RS_EXIT_OK;
}

void rs_calib_fit_free(rs_calib_fit *fit)
{
    free(fit->links);
    fit->links = NULL;
    fit->nlinks = 0;
}

/* ---- rows held out of the fit ------------------------------------------------------------------ */

/* A size for --hold-out: with a unit ("1 MiB", "64KiB") or plain bytes. */
static int calib_size(const char *text, size_t len, double *bytes)
{
    char buf[64];
    if (len == 0 || len >= sizeof buf)
        return -1;
    memcpy(buf, text, len);
    buf[len] = 0;
    rs_units_status st = rs_units_parse(buf, RS_UNIT_SIZE, bytes, NULL, 0);
    if (st == RS_UNITS_MISSING) {
        char *end = NULL;
        unsigned long long v = strtoull(buf, &end, 10);
        if (end == buf || *end)
            return -1;
        *bytes = (double)v;
        return 0;
    }
    return st == RS_UNITS_OK && *bytes >= 0 ? 0 : -1;
}

/* Of the rows of r's file, collective and placement, how many distinct sizes are below r's. */
static size_t calib_size_index(const rs_calib *c, const rs_calib_row *r)
{
    size_t idx = 0;
    for (size_t i = 0; i < c->n; i++) {
        const rs_calib_row *o = &c->rows[i];
        if (o->table != r->table || o->m->coll != r->m->coll || o->place != r->place ||
            o->m->nccl_bytes >= r->m->nccl_bytes)
            continue;
        size_t first = 0; /* count each size once */
        while (first < i && !(c->rows[first].table == o->table && c->rows[first].m->coll == o->m->coll &&
                              c->rows[first].place == o->place && c->rows[first].m->nccl_bytes == o->m->nccl_bytes))
            first++;
        idx += first == i;
    }
    return idx;
}

int rs_calib_hold_out(rs_calib *c, const char *spec, char *why, size_t len)
{
    const char *t = spec;
    for (;;) {
        size_t tl = strcspn(t, ",");
        char term[256];
        if (tl == 0 || tl >= sizeof term) {
            snprintf(why, len, "--hold-out '%s': an empty or overlong term (allowed: a comma-separated list of "
                     "collectives, size ranges A..B, K/M and measured files)", spec);
            return -1;
        }
        memcpy(term, t, tl);
        term[tl] = 0;
        const char *dots = strstr(term, "..");
        rs_meas_coll coll;
        unsigned k = 0, m = 0;
        char tail;
        double lo = 0, hi = INFINITY;
        int kind; /* 0 collective, 1 sizes, 2 K of every M, 3 file */
        if (rs_meas_coll_parse(term, &coll) == 0) {
            kind = 0;
        } else if (dots) {
            kind = 1;
            if ((dots > term && calib_size(term, (size_t)(dots - term), &lo) != 0) ||
                (dots[2] && calib_size(dots + 2, strlen(dots + 2), &hi) != 0) || (dots == term && !dots[2]) || lo > hi) {
                snprintf(why, len, "--hold-out: '%s' is not a size range (allowed: A..B, A.. or ..B with sizes such "
                         "as 64KiB, 1 MiB or bytes, A <= B)", term);
                return -1;
            }
        } else if (sscanf(term, "%u/%u%c", &k, &m, &tail) == 2) {
            kind = 2;
            if (m < 2 || k < 1 || k >= m) {
                snprintf(why, len, "--hold-out: '%s': of every M sizes the last K (allowed: 1 <= K < M, e.g. 2/3 "
                         "fits on a third)", term);
                return -1;
            }
        } else {
            kind = 3;
            int found = 0;
            for (size_t i = 0; i < c->n && !found; i++)
                found = strcmp(c->rows[i].table->name, term) == 0;
            if (!found) {
                snprintf(why, len, "--hold-out: '%s' is not a collective (%s), a size range A..B, K/M or one of "
                         "the measured files", term, rs_meas_coll_allowed());
                return -1;
            }
        }
        for (size_t i = 0; i < c->n; i++) {
            rs_calib_row *r = &c->rows[i];
            double b = (double)r->m->nccl_bytes;
            int held = kind == 0   ? r->m->coll == coll
                       : kind == 1 ? b >= lo && b <= hi
                       : kind == 2 ? calib_size_index(c, r) % m >= m - k
                                   : strcmp(r->table->name, term) == 0;
            r->held_out |= held;
        }
        if (!t[tl])
            return 0;
        t += tl + 1;
    }
}

/* ---- the fit ----------------------------------------------------------------------------------- */

typedef struct calib_fit_ctx {
    rs_scenario *sc;
    rs_calib *c;
    rs_calib_fit *fit;
    const calib_key *keys[RS_CALIB_MAX_PARAMS]; /* of the fitted parameters, in x's order */
    int at[RS_CALIB_MAX_PARAMS];                /* their index in fit->params */
    int nx;
    FILE *err;
    int status;           /* a simulation's failure, which stops the solver */
    gsl_vector *scratch;  /* the simplex's residuals */
    double *weight;       /* per row: the square root of its weight in the sum of squares */
} calib_fit_ctx;

static int calib_fitted_row(const rs_calib_row *r)
{
    return !r->held_out && !r->why_not && r->m->time_us > 0;
}

/* x_j = ln(value / start): the solver works in relative terms, and values stay positive. */
static double calib_value(const calib_fit_ctx *x, int j, double xj)
{
    const calib_key *k = x->keys[j];
    double v = x->fit->params[x->at[j]].start * exp(xj);
    return v < k->lo ? k->lo : v > k->hi ? k->hi : v;
}

/* Residuals ln(predicted / measured) over the fitted rows at parameters xv. */
static int calib_residuals(const gsl_vector *xv, void *data, gsl_vector *f)
{
    calib_fit_ctx *x = data;
    for (int j = 0; j < x->nx; j++)
        calib_set(x->sc, x->keys[j], calib_value(x, j, gsl_vector_get(xv, (size_t)j)));
    int st = rs_calib_simulate(x->sc, x->c, 1, x->err);
    x->fit->simulations++;
    if (st != RS_EXIT_OK) {
        x->status = st;
        return GSL_EBADFUNC;
    }
    size_t k = 0;
    for (size_t i = 0; i < x->c->n; i++) {
        const rs_calib_row *r = &x->c->rows[i];
        if (!calib_fitted_row(r))
            continue;
        if (!(r->predicted_us > 0)) {
            fprintf(x->err, "ringsim: calibrate: %s:%d: the model predicted no time for %llu B\n", r->table->name,
                    r->m->line, (unsigned long long)r->m->nccl_bytes);
            x->status = RS_EXIT_ENGINE;
            return GSL_EBADFUNC;
        }
        gsl_vector_set(f, k++, x->weight[i] * log(r->predicted_us / r->m->time_us));
    }
    return GSL_SUCCESS;
}

/* The index of v in the ascending sizes[0..n) that hold it. */
static size_t size_index(const uint64_t *sizes, size_t n, uint64_t v)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sizes[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Row weights: the span of ln(size) each size stands for among the fitted sizes of its job (half
 * the way to each neighbour; an end, the whole way to its one neighbour), scaled to a mean of 1.
 * The sum of squares is then the error over every factor of size alike, however densely a table
 * sampled it: a linear sweep of 1 KiB steps to 1 MiB does not outweigh the sizes above it a
 * thousand to one. Geometric sweeps weigh every row 1. sqrt(weight) per row into w. */
static int calib_weights(const rs_calib *c, double *w)
{
    uint64_t *sizes = calloc(c->n ? c->n : 1, sizeof *sizes);
    double *span = calloc(c->n ? c->n : 1, sizeof *span);
    if (!sizes || !span) {
        free(sizes), free(span);
        return -1;
    }
    for (int ji = 0; ji < c->njobs; ji++) {
        size_t u = rs_calib_job_sizes(c, ji, 1, sizes);
        double total = 0, lo = INFINITY, hi = 0;
        for (size_t k = 0; k < u; k++) {
            double left = k > 0 ? log((double)sizes[k] / (double)sizes[k - 1]) : 0;
            double right = k + 1 < u ? log((double)sizes[k + 1] / (double)sizes[k]) : 0;
            span[k] = u == 1 ? 1 : k == 0 ? right : k + 1 == u ? left : (left + right) / 2;
            total += span[k];
            lo = fmin(lo, span[k]), hi = fmax(hi, span[k]);
        }
        int even = hi - lo <= 1e-9 * hi; /* a geometric sweep: exactly 1 each */
        for (size_t i = 0; i < c->n; i++) {
            if (c->job_of[i] != ji || !calib_fitted_row(&c->rows[i]))
                continue;
            size_t k = size_index(sizes, u, c->rows[i].m->nccl_bytes);
            w[i] = even ? 1.0 : sqrt(span[k] * (double)u / total);
        }
    }
    free(sizes), free(span);
    return 0;
}

static double calib_rms(const rs_calib *c)
{
    double s = 0;
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++)
        if (calib_fitted_row(&c->rows[i]) && c->rows[i].predicted_us > 0) {
            double l = log(c->rows[i].predicted_us / c->rows[i].m->time_us);
            s += l * l, n++;
        }
    return n ? sqrt(s / (double)n) : NAN;
}


/* The sum of squared residuals, for the simplex. */
static double calib_chisq(const gsl_vector *xv, void *data)
{
    calib_fit_ctx *x = data;
    if (x->status != RS_EXIT_OK || calib_residuals(xv, x, x->scratch) != GSL_SUCCESS)
        return GSL_POSINF;
    double s = 0;
    for (size_t i = 0; i < x->scratch->size; i++)
        s += gsl_vector_get(x->scratch, i) * gsl_vector_get(x->scratch, i);
    return s;
}

/* Each value the rows hardly or not determine (or determine only as many rows as values), and the
 * value it moves with: the one whose column of the Jacobian points the same way (|cosine| >= 0.95),
 * so the rows fix a combination of the two only (a cost per call against one per step on a fixed
 * rank count); pinning one from a separate measurement determines the other. */
static void calib_ties(calib_fit_ctx *x, const gsl_matrix *jac)
{
    for (int j = 0; j < x->nx; j++) {
        rs_calib_param *pj = &x->fit->params[x->at[j]];
        pj->tied = -1;
        if (pj->determined && pj->sigma <= 2.4)
            continue;
        gsl_vector_const_view cj = gsl_matrix_const_column(jac, (size_t)j);
        double nj = gsl_blas_dnrm2(&cj.vector);
        for (int k = 0; k < x->nx; k++) {
            gsl_vector_const_view ck = gsl_matrix_const_column(jac, (size_t)k);
            double nk = gsl_blas_dnrm2(&ck.vector), dot;
            if (k == j || !(nj > 0) || !(nk > 0))
                continue;
            gsl_blas_ddot(&cj.vector, &ck.vector, &dot);
            double r = dot / (nj * nk);
            if (fabs(r) >= 0.95 && (pj->tied < 0 || fabs(r) > fabs(pj->tied_corr)))
                pj->tied = x->at[k], pj->tied_corr = r;
        }
    }
}

/* Least squares in two phases, both GSL's: the trust-region solver (fast where the times are smooth
 * in the values), then a Nelder-Mead simplex from its answer, which steps over the jumps a smooth
 * solver stops at (auto switching algorithms, a slice or packet more). The Jacobian at the answer
 * gives the uncertainties. Sets fit->params' values and sigmas. */
static int calib_solve(calib_fit_ctx *x, size_t n, FILE *err)
{
    rs_calib_fit *fit = x->fit;
    size_t p = (size_t)x->nx;
    gsl_set_error_handler_off();
    gsl_multifit_nlinear_parameters params = gsl_multifit_nlinear_default_parameters();
    /* a finite-difference step of 0.1 % of a value: the model's times are whole picoseconds and
     * some of its costs are steps (packets, slices), so the default sqrt(eps) sees only noise */
    params.h_df = 1e-3;
    gsl_multifit_nlinear_fdf fdf;
    memset(&fdf, 0, sizeof fdf);
    fdf.f = calib_residuals;
    fdf.n = n;
    fdf.p = p;
    fdf.params = x;
    gsl_multifit_nlinear_workspace *w = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &params, n, p);
    gsl_multimin_fminimizer *nm = gsl_multimin_fminimizer_alloc(gsl_multimin_fminimizer_nmsimplex2, p);
    gsl_vector *x0 = gsl_vector_calloc(p), *step = gsl_vector_alloc(p), *best = gsl_vector_alloc(p);
    gsl_matrix *covar = gsl_matrix_alloc(p, p);
    x->scratch = gsl_vector_alloc(n);
    int st = RS_EXIT_OK, gs = GSL_ENOMEM, info = 0;
    if (w && nm && x0 && step && best && covar && x->scratch) {
        /* converged when a step changes no value by 0.01 %, or the gradient is flat */
        gs = gsl_multifit_nlinear_init(x0, &fdf, w);
        if (gs == GSL_SUCCESS)
            gs = gsl_multifit_nlinear_driver(100, 1e-4, 1e-8, 0.0, NULL, NULL, &info, w);
        fit->iterations = (int)gsl_multifit_nlinear_niter(w);
    }
    if (gs == GSL_SUCCESS || gs == GSL_EMAXITER) {
        gsl_vector_memcpy(best, gsl_multifit_nlinear_position(w));
        double chisq = calib_chisq(best, x);
        gsl_vector_set_all(step, 0.02); /* 2 % of each value */
        gsl_multimin_function f = {calib_chisq, p, x};
        int ms = gsl_multimin_fminimizer_set(nm, &f, best, step);
        for (int it = 0; ms == GSL_SUCCESS && it < 200 && x->status == RS_EXIT_OK; it++) {
            ms = gsl_multimin_fminimizer_iterate(nm);
            fit->iterations++;
            if (ms == GSL_SUCCESS && gsl_multimin_test_size(gsl_multimin_fminimizer_size(nm), 1e-4) == GSL_SUCCESS)
                break;
        }
        if (x->status == RS_EXIT_OK && gsl_multimin_fminimizer_minimum(nm) < chisq)
            gsl_vector_memcpy(best, gsl_multimin_fminimizer_x(nm));
        snprintf(fit->stopped, sizeof fit->stopped, "%s",
                 gs == GSL_EMAXITER ? "the trust region at its iteration limit (100), then the simplex"
                 : info == 1        ? "converged: no step changed a value by 0.01 %"
                                    : "converged: the gradient is flat");
        /* the Jacobian where it ended (init evaluates it there) */
        if (x->status == RS_EXIT_OK)
            gs = gsl_multifit_nlinear_init(best, &fdf, w);
    }
    if (x->status != RS_EXIT_OK) {
        st = x->status;
    } else if (gs != GSL_SUCCESS) {
        fprintf(err, "ringsim: calibrate: the solver failed: %s\n", gsl_strerror(gs));
        st = gs == GSL_ENOMEM ? RS_EXIT_USAGE : RS_EXIT_ENGINE;
    } else {
        const gsl_vector *res = gsl_multifit_nlinear_residual(w);
        double chisq = 0;
        for (size_t i = 0; i < n; i++)
            chisq += gsl_vector_get(res, i) * gsl_vector_get(res, i);
        /* columns the rows do not determine (no effect, or one another's) get no variance */
        gsl_multifit_nlinear_covar(gsl_multifit_nlinear_jac(w), 1e-7, covar);
        for (int j = 0; j < x->nx; j++) {
            rs_calib_param *pp = &fit->params[x->at[j]];
            pp->value = calib_round(calib_value(x, j, gsl_vector_get(best, (size_t)j)));
            double v = gsl_matrix_get(covar, (size_t)j, (size_t)j);
            pp->determined = v > 0;
            pp->sigma = n > p ? sqrt(v * chisq / (double)(n - p)) : NAN;
        }
        calib_ties(x, gsl_multifit_nlinear_jac(w));
    }
    if (w)
        gsl_multifit_nlinear_free(w);
    if (nm)
        gsl_multimin_fminimizer_free(nm);
    gsl_vector_free(x0), gsl_vector_free(step), gsl_vector_free(best), gsl_vector_free(x->scratch);
    if (covar)
        gsl_matrix_free(covar);
    return st;
}

/* From the starting values to the fitted ones: every row before, the solver, every row after. */
static int calib_fit_from_start(calib_fit_ctx *x, size_t n, FILE *err)
{
    /* where it starts: every row, held out too, at the scenario's (or the given) values */
    int st = rs_calib_simulate(x->sc, x->c, 0, err);
    x->fit->simulations++;
    if (st != RS_EXIT_OK)
        return st;
    x->fit->before = rs_calib_summary(x->c, -1);
    x->fit->rms_before = calib_rms(x->c);
    if (x->nx) {
        st = calib_solve(x, n, err);
        if (st != RS_EXIT_OK)
            return st;
    } else {
        snprintf(x->fit->stopped, sizeof x->fit->stopped, "nothing to fit: every key pinned");
    }
    /* every row, held out too, at the values the scenario will say */
    for (int i = 0; i < x->fit->nparams; i++)
        calib_set(x->sc, calib_key_find(x->fit->params[i].key, strlen(x->fit->params[i].key)),
                  x->fit->params[i].value);
    st = rs_calib_simulate(x->sc, x->c, 0, err);
    x->fit->simulations++;
    x->fit->rms_after = calib_rms(x->c);
    return st;
}

int rs_calib_fit_run(rs_scenario *sc, rs_calib *c, rs_calib_fit *fit, FILE *err)
{
    calib_fit_ctx x;
    memset(&x, 0, sizeof x);
    x.sc = sc, x.c = c, x.fit = fit, x.err = err;
    for (int i = 0; i < fit->nparams; i++) {
        const calib_key *k = calib_key_find(fit->params[i].key, strlen(fit->params[i].key));
        calib_set(sc, k, fit->params[i].start);
        if (!fit->params[i].pinned) {
            x.keys[x.nx] = k;
            x.at[x.nx++] = i;
        }
    }
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++)
        n += (size_t)calib_fitted_row(&c->rows[i]);
    fit->rows = (int)n;
    if (n == 0) {
        fprintf(err, "ringsim: calibrate: no row left to fit (every row held out or not simulated)\n");
        return RS_EXIT_USAGE;
    }
    if (n < (size_t)x.nx) {
        fprintf(err, "ringsim: calibrate: %zu rows cannot fit %d values (allowed: at least as many rows as values; "
                "hold out fewer rows or fit fewer keys)\n", n, x.nx);
        return RS_EXIT_USAGE;
    }
    x.weight = calloc(c->n, sizeof *x.weight);
    if (!x.weight || calib_weights(c, x.weight) != 0) {
        free(x.weight);
        fprintf(err, "ringsim: calibrate: out of memory for %zu rows\n", c->n);
        return RS_EXIT_USAGE;
    }
    int st = calib_fit_from_start(&x, n, err);
    free(x.weight);
    return st;
}

/* ---- what it says ------------------------------------------------------------------------------ */

static void calib_param_text(const rs_calib_fit *fit, const rs_calib_param *p, char *buf, size_t len)
{
    const calib_key *k = calib_key_find(p->key, strlen(p->key));
    char v[48], s[48];
    rs_units_format(p->value, k->unit, v, sizeof v);
    rs_units_format(p->start, k->unit, s, sizeof s);
    if (p->pinned)
        snprintf(buf, len, "%s: %s (pinned)", p->key, v);
    else if (p->value <= k->lo || p->value >= k->hi)
        snprintf(buf, len, "%s: %s (from %s; at the end of the range calibrate keeps it in: these rows want it "
                 "further, or do not depend on it)", p->key, v, s);
    else if (p->tied >= 0)
        snprintf(buf, len, "%s: %s (from %s; not determined apart from %s: these rows see the two only "
                 "together, their effects correlate %+.2f; pin one measured apart, --pin KEY=VALUE)", p->key, v,
                 s, fit->params[p->tied].key, p->tied_corr);
    else if (!p->determined)
        snprintf(buf, len, "%s: %s (from %s; not determined by these rows: they do not depend on it, or only "
                 "together with another value)", p->key, v, s);
    else if (isnan(p->sigma))
        snprintf(buf, len, "%s: %s (from %s; no uncertainty: as many rows as values)", p->key, v, s);
    else if (p->sigma > 2.4) /* a factor of 10 either way */
        snprintf(buf, len, "%s: %s (from %s; hardly determined: +- more than 1000 %%)", p->key, v, s);
    else
        snprintf(buf, len, "%s: %s +- %.2g %% (from %s)", p->key, v, 100 * (exp(p->sigma) - 1), s);
}

static void calib_stats_text(const rs_calib_stats *s, char *buf, size_t len)
{
    if (!s->n)
        snprintf(buf, len, "no row");
    else
        snprintf(buf, len, "%zu rows, |error| median %.1f %%, geomean %.1f %%, worst %+.1f %%", s->n, 100 * s->median,
                 100 * s->geomean, 100 * s->worst);
}

/* The provenance lines, each after `lead` ("# " in the scenario, "# " on stdout too). */
static void calib_provenance(const rs_calib *c, const rs_calib_fit *fit, const char *lead, FILE *out)
{
    const rs_meas_table *cur = NULL;
    for (size_t i = 0; i < c->n; i++)
        if (c->rows[i].table != cur) {
            cur = c->rows[i].table;
            size_t rows = 0;
            for (size_t j = 0; j < c->n; j++)
                rows += c->rows[j].table == cur;
            fprintf(out, "%smeasured: %s (%s%s%s, %d ranks, %zu rows)\n", lead, cur->name,
                    rs_meas_format_name(cur->format), cur->program[0] ? ", " : "", cur->program, c->rows[i].m->ranks,
                    rows);
        }
    int nx = 0;
    for (int i = 0; i < fit->nparams; i++)
        nx += !fit->params[i].pinned;
    fprintf(out, "%sfitted: %d value%s on %d rows by least squares of ln(predicted / measured), sizes weighted by "
            "the span of ln(size) each stands for, on the model "
            "(GSL: trust region, then a simplex), %d iterations, %d simulation rounds; %s\n",
            lead, nx, nx == 1 ? "" : "s", fit->rows, fit->iterations, fit->simulations, fit->stopped);
    for (int i = 0; i < fit->nparams; i++) {
        char text[512];
        calib_param_text(fit, &fit->params[i], text, sizeof text);
        fprintf(out, "%s  %s\n", lead, text);
    }
    for (int i = 0; i < fit->nlinks; i++) {
        const rs_calib_link *l = &fit->links[i];
        char bw[48], lat[48];
        rs_units_format(l->bandwidth, RS_UNIT_BANDWIDTH, bw, sizeof bw);
        rs_units_format(l->latency, RS_UNIT_TIME, lat, sizeof lat);
        if (!strcmp(l->verdict, "dead"))
            fprintf(out, "%s  link %d->%d: dead in the bring-up: down from 0 s\n", lead, l->src, l->dst);
        else
            fprintf(out, "%s  link %d->%d: %s, %s (%s in the bring-up: its transfers' median rate, half its median "
                    "round trip)\n", lead, l->src, l->dst, bw, lat, l->verdict);
    }
    char before[160], fitted[160], held[160];
    rs_calib_stats f = rs_calib_summary(c, 0), h = rs_calib_summary(c, 1);
    calib_stats_text(&fit->before, before, sizeof before);
    calib_stats_text(&f, fitted, sizeof fitted);
    calib_stats_text(&h, held, sizeof held);
    fprintf(out, "%sbefore (every row at the starting values): %s\n", lead, before);
    fprintf(out, "%sfitted rows: %s\n", lead, fitted);
    if (h.n)
        fprintf(out, "%sheld-out rows (not fitted, predicted): %s\n", lead, held);
}

void rs_calib_fit_print(const rs_calib *c, const rs_calib_fit *fit, FILE *out)
{
    fprintf(out, "# ringsim calibrate\n");
    calib_provenance(c, fit, "# ", out);
    rs_calib_print(c, out);
}

int rs_calib_write_scenario(const rs_scenario *sc, const rs_calib *c, const rs_calib_fit *fit,
                            const char *command, FILE *out)
{
    fprintf(out, "# calibrated by ringsim from %s: %s\n", sc->path, command);
    calib_provenance(c, fit, "# ", out);
    fprintf(out, "#\n");
    return rs_scenario_dump(sc, out);
}
