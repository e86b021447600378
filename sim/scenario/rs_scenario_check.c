/* rs_scenario_check.c — the scenario's semantic checks: what one key cannot say alone (topology and links, workload, device, training, user schedule, faults, memory). */
#define _POSIX_C_SOURCE 200809L
#include "rs_scenario_keys.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ncl/ncl_check.h>
#include <ncl/ncl_hal.h>

#include "model/rs_defaults.h"
#include "model/rs_topo.h"
#include "rs_fusion.h"
#include "rs_layers.h"
#include "rs_scenario.h"
#include "rs_usersched.h"

#define RS_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* The scenario being read, and what the checks keep while it is. */
static rs_scenario *rs_sc(rs_schema_ctx *c) { return c->root; }
static rs_scenario_check_state *rs_st(rs_schema_ctx *c) { return c->state; }

/* ---- topology --------------------------------------------------------------------------------- */

/* The links of a topology are model/rs_topo.h's; these are the scenario API's names for them. */
uint32_t rs_scenario_switch_count(const rs_topology_spec *t) { return rs_topo_switches(t); }

int rs_scenario_link_exists(const rs_topology_spec *t, int32_t a, int32_t b) { return rs_topo_has_link(t, a, b); }

uint64_t rs_scenario_link_count(const rs_topology_spec *t) { return rs_topo_link_count(t); }

/* rs_topo_has_link, through the sorted index for kind links (lists can be long). */
static int rs_has_link(rs_schema_ctx *c, int32_t a, int32_t b)
{
    if (rs_sc(c)->topo.kind != RS_TOPO_LINKS || rs_st(c)->chans == NULL)
        return rs_topo_has_link(&rs_sc(c)->topo, a, b);
    size_t lo = 0, hi = rs_st(c)->nchans;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const rs_scenario_chan *m = &rs_st(c)->chans[mid];
        if (m->a < a || (m->a == a && m->b < b))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < rs_st(c)->nchans && rs_st(c)->chans[lo].a == a && rs_st(c)->chans[lo].b == b;
}

/* Checks that a link named by a scenario (override, fault) exists. `item` names the entry in
 * messages ("overrides[2]", "link"), fa/fb its endpoint keys ("overrides[2].from", "link"). */
static int rs_check_ref(rs_schema_ctx *c, const rs_link_ref *r, const char *item, const char *fa, const char *fb,
                        int line_a, int line_b)
{
    const rs_topology_spec *t = &rs_sc(c)->topo;
    int64_t nodes = (int64_t)t->nranks + rs_topo_switches(t);
    if (r->a >= nodes || r->b >= nodes) {
        int bad_a = r->a >= nodes;
        if (nodes == t->nranks)
            return rs_yaml_fail(c->y, bad_a ? line_a : line_b, bad_a ? fa : fb, "%d is not a rank (allowed: 0 to %d)",
                                bad_a ? r->a : r->b, t->nranks - 1);
        return rs_yaml_fail(c->y, bad_a ? line_a : line_b, bad_a ? fa : fb,
                            "%d is not a node (allowed: ranks 0 to %d, switches %d to %lld)", bad_a ? r->a : r->b,
                            t->nranks - 1, t->nranks, (long long)nodes - 1);
    }
    if (r->a == r->b)
        return rs_yaml_fail(c->y, line_b, item, "both ends are rank %d (allowed: two different ranks)", r->a);
    int32_t x = r->a, y = r->b;
    int fwd = rs_has_link(c, x, y);
    if (!fwd || (r->both && !rs_has_link(c, y, x))) {
        if (fwd) {
            x = r->b;
            y = r->a;
        }
        return rs_yaml_fail(c->y, line_b, item, "kind %s has no link %d -> %d%s (allowed: %s)",
                            rs_scenario_kind_name(t->kind), x, y, fwd ? ", which both: true also names" : "",
                            rs_scenario_kind_links[t->kind]);
    }
    return 0;
}

static int rs_check_params(rs_schema_ctx *c, const rs_link_params *p, yaml_node_t *node, const char *pre)
{
    uint64_t need = (uint64_t)p->packet_bytes + p->header_bytes;
    if (p->buffer_bytes < need) {
        char key[96], have[48], pk[48], hd[48];
        snprintf(key, sizeof key, "%sbuffer", pre);
        rs_units_format(p->buffer_bytes, RS_UNIT_SIZE, have, sizeof have);
        rs_units_format(p->packet_bytes, RS_UNIT_SIZE, pk, sizeof pk);
        rs_units_format(p->header_bytes, RS_UNIT_SIZE, hd, sizeof hd);
        return rs_yaml_fail(c->y, rs_schema_key_line(c, node, "buffer"), key,
                            "%s cannot hold one %s packet + %s header (allowed: at least %llu B)", have, pk, hd,
                            (unsigned long long)need);
    }
    return 0;
}

int rs_scenario_check_link(rs_schema_ctx *c, yaml_node_t *node, void *base)
{
    return rs_check_params(c, base, node, "");
}

int rs_scenario_check_link_item(rs_schema_ctx *c, yaml_node_t *node, void *base)
{
    return rs_check_params(c, &((rs_link_spec *)base)->params, node, "");
}

void rs_scenario_init_link_item(void *item, const void *root)
{
    ((rs_link_spec *)item)->params = ((const rs_scenario *)root)->topo.link;
}

int rs_scenario_check_override(rs_schema_ctx *c, yaml_node_t *node, void *base)
{
    const rs_link_override *o = base;
    if (o->bandwidth < 0 && o->latency < 0)
        return rs_yaml_fail(c->y, rs_yaml_line(node), NULL,
                            "changes nothing (allowed: give bandwidth, latency or both)");
    return 0;
}

static int rs_chan_cmp(const void *x, const void *y)
{
    const rs_scenario_chan *p = x, *q = y;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    if (p->b != q->b)
        return p->b < q->b ? -1 : 1;
    return p->idx < q->idx ? -1 : p->idx > q->idx;
}

/* The index of a links list: every one-way link, with the entry it comes from. */
typedef struct rs_chan_fill {
    rs_scenario_chan *ch;
    size_t n;
} rs_chan_fill;

static int rs_chan_add(void *ud, const rs_topo_link *l)
{
    rs_chan_fill *f = ud;
    f->ch[f->n++] = (rs_scenario_chan){l->from, l->to, l->item};
    return 0;
}

/* kind links: every endpoint a rank, no link twice, every rank reaching every other. */
static int rs_check_link_list(rs_schema_ctx *c, yaml_node_t *node, rs_topology_spec *t)
{
    char key[64];
    int32_t n = t->nranks;
    for (size_t i = 0; i < t->links_count; i++) {
        const rs_link_ref *r = &t->links[i].ends;
        int32_t bad = r->a >= n ? r->a : r->b >= n ? r->b : -1;
        if (bad >= 0) {
            snprintf(key, sizeof key, "links[%zu].%s", i, r->a >= n ? "from" : "to");
            return rs_yaml_fail(c->y, rs_schema_item_line(c, node, "links", i, r->a >= n ? "from" : "to"), key,
                                "%d is not a rank (allowed: 0 to %d with ranks: %d)", bad, n - 1, n);
        }
        if (r->a == r->b) {
            snprintf(key, sizeof key, "links[%zu].to", i);
            return rs_yaml_fail(c->y, rs_schema_item_line(c, node, "links", i, "to"), key,
                                "both ends are rank %d (allowed: two different ranks)", r->a);
        }
    }
    size_t nch = (size_t)rs_topo_link_count(t);
    rs_scenario_chan *ch = malloc((nch ? nch : 1) * sizeof *ch);
    size_t *deg = calloc((size_t)n + 1, sizeof *deg), *rdeg = calloc((size_t)n + 1, sizeof *rdeg);
    int32_t *adj = malloc((nch ? nch : 1) * sizeof *adj), *radj = malloc((nch ? nch : 1) * sizeof *radj);
    int32_t *queue = malloc((size_t)n * sizeof *queue);
    unsigned char *seen = malloc((size_t)n);
    int rc = 0;
    if (!ch || !deg || !rdeg || !adj || !radj || !queue || !seen) {
        rc = rs_yaml_fail(c->y, rs_yaml_line(node), "links", "out of memory");
        goto out;
    }
    rs_chan_fill fill = {ch, 0};
    rs_topo_links(t, rs_chan_add, &fill);
    qsort(ch, nch, sizeof *ch, rs_chan_cmp);
    size_t dup = SIZE_MAX, first = 0;
    for (size_t i = 1; i < nch; i++)
        if (ch[i].a == ch[i - 1].a && ch[i].b == ch[i - 1].b && ch[i].idx != ch[i - 1].idx &&
            (dup == SIZE_MAX || ch[i].idx < dup)) {
            dup = ch[i].idx;
            first = ch[i - 1].idx;
        }
    if (dup != SIZE_MAX) {
        snprintf(key, sizeof key, "links[%zu]", dup);
        const rs_link_ref *r = &t->links[dup].ends;
        rc = rs_yaml_fail(c->y, rs_schema_item_line(c, node, "links", dup, NULL), key,
                          "a link %d -> %d is already in links[%zu] (allowed: each one-way link once; change "
                          "one with its own keys)",
                          r->a == t->links[first].ends.a ? r->a : r->b, r->a == t->links[first].ends.a ? r->b : r->a,
                          first);
        goto out;
    }
    /* strongly connected: every rank reached from rank 0 along links and against them */
    for (size_t i = 0; i < nch; i++) {
        deg[ch[i].a + 1]++;
        rdeg[ch[i].b + 1]++;
    }
    for (int32_t v = 0; v < n; v++) {
        deg[v + 1] += deg[v];
        rdeg[v + 1] += rdeg[v];
    }
    for (size_t i = 0; i < nch; i++) {
        adj[deg[ch[i].a]++] = ch[i].b;
        radj[rdeg[ch[i].b]++] = ch[i].a;
    }
    /* deg[v] now ends v's run; v's run starts at deg[v-1] (0 for v = 0) */
    for (int dir = 0; dir < 2 && rc == 0; dir++) {
        size_t *d = dir ? rdeg : deg;
        int32_t *e = dir ? radj : adj;
        memset(seen, 0, (size_t)n);
        size_t head = 0, tail = 0;
        queue[tail++] = 0;
        seen[0] = 1;
        while (head < tail) {
            int32_t v = queue[head++];
            for (size_t j = v ? d[v - 1] : 0; j < d[v]; j++)
                if (!seen[e[j]]) {
                    seen[e[j]] = 1;
                    queue[tail++] = e[j];
                }
        }
        for (int32_t v = 0; v < n; v++)
            if (!seen[v]) {
                rc = rs_yaml_fail(c->y, rs_schema_key_line(c, node, "links"), "links",
                                  dir ? "rank 0 cannot be reached from rank %d (allowed: a connected graph in which "
                                        "every rank reaches every other along links)"
                                      : "rank %d cannot be reached from rank 0 (allowed: a connected graph in which "
                                        "every rank reaches every other along links)",
                                  v);
                break;
            }
    }
out:
    free(rs_st(c)->chans);
    rs_st(c)->chans = ch;
    rs_st(c)->nchans = nch;
    free(deg);
    free(rdeg);
    free(adj);
    free(radj);
    free(queue);
    free(seen);
    return rc;
}

int rs_scenario_check_topology(rs_schema_ctx *c, yaml_node_t *node, void *base)
{
    rs_topology_spec *t = base;
    int64_t derived = 0;
    const char *why = "";
    char whybuf[96];
    switch (t->kind) {
    case RS_TOPO_TORUS2D:
        derived = rs_topo_ranks(t);
        if (derived > RS_SCENARIO_MAX_RANKS)
            return rs_yaml_fail(c->y, rs_schema_key_line(c, node, "dims"), "dims",
                                "%d x %d = %lld ranks is out of range (allowed: at most %d ranks)", t->dims[0],
                                t->dims[1], (long long)derived, RS_SCENARIO_MAX_RANKS);
        snprintf(whybuf, sizeof whybuf, "dims %d x %d", t->dims[0], t->dims[1]);
        why = whybuf;
        break;
    case RS_TOPO_SERVER8:
        derived = rs_topo_ranks(t);
        why = "kind server8";
        break;
    case RS_TOPO_CLUSTER:
        derived = rs_topo_ranks(t);
        snprintf(whybuf, sizeof whybuf, "%d servers of 8", t->servers);
        why = whybuf;
        break;
    case RS_TOPO_LINKS:
        if (t->nranks == 0) {
            for (size_t i = 0; i < t->links_count; i++) {
                const rs_link_ref *r = &t->links[i].ends;
                int32_t m = r->a > r->b ? r->a : r->b;
                if (m + 1 > derived)
                    derived = m + 1;
            }
        }
        break;
    default:
        break;
    }
    if (t->nranks != 0 && derived != 0 && t->nranks != derived)
        return rs_yaml_fail(c->y, rs_schema_key_line(c, node, "ranks"), "ranks",
                            "%d does not match %s (allowed: %lld, or leave ranks out)", t->nranks, why,
                            (long long)derived);
    if (t->nranks == 0)
        t->nranks = (int32_t)derived;
    if (t->kind == RS_TOPO_FAT_TREE) {
        if (t->per_leaf > t->nranks || t->nranks % t->per_leaf != 0)
            return rs_yaml_fail(c->y, rs_schema_key_line(c, node, "per_leaf"), "per_leaf",
                                "%d does not divide ranks %d (allowed: a divisor of ranks)", t->per_leaf, t->nranks);
        if (t->spines == 0)
            t->spines = t->per_leaf > 4096 ? 4096 : t->per_leaf;
    }
    if (t->kind == RS_TOPO_LINKS) {
        if (t->links_count == 0)
            return rs_yaml_fail(c->y, rs_schema_key_line(c, node, "links"), "links",
                                "the list is empty (allowed: at least one link)");
        if (rs_check_link_list(c, node, t) != 0)
            return -1;
    }
    if (t->nranks < 2) /* defensive: `ranks` starts at 2, and derived counts are at least 2 */
        return rs_yaml_fail(c->y, rs_schema_key_line(c, node, "ranks"), "ranks",
                            "%d rank%s (allowed: at least 2 ranks)", t->nranks, t->nranks == 1 ? "" : "s");
    /* a switch must hold one packet of what reaches it */
    if (t->kind == RS_TOPO_SWITCH || t->kind == RS_TOPO_FAT_TREE || t->kind == RS_TOPO_CLUSTER) {
        const rs_link_params *p = t->kind == RS_TOPO_CLUSTER ? &t->nic : &t->link;
        uint64_t need = (uint64_t)p->packet_bytes + p->header_bytes;
        if (t->sw.buffer_bytes < need) {
            char have[48];
            rs_units_format(t->sw.buffer_bytes, RS_UNIT_SIZE, have, sizeof have);
            return rs_yaml_fail(c->y, rs_schema_sub_key_line(c, node, "switch", "buffer"), "switch.buffer",
                                "%s cannot hold one packet of topology.%s (allowed: at least %llu B)", have,
                                t->kind == RS_TOPO_CLUSTER ? "nic" : "link", (unsigned long long)need);
        }
    }
    for (size_t i = 0; i < t->overrides_count; i++) {
        char item[48], fa[64], fb[64];
        snprintf(item, sizeof item, "overrides[%zu]", i);
        snprintf(fa, sizeof fa, "%s.from", item);
        snprintf(fb, sizeof fb, "%s.to", item);
        if (rs_check_ref(c, &t->overrides[i].ends, item, fa, fb,
                         rs_schema_item_line(c, node, "overrides", i, "from"),
                         rs_schema_item_line(c, node, "overrides", i, "to")) != 0)
            return -1;
    }
    return 0;
}

/* ---- workload and device ---------------------------------------------------------------------- */

int rs_scenario_check_sizes(rs_schema_ctx *c, yaml_node_t *node, void *base)
{
    const rs_workload *w = base;
    char b[48], e[48];
    rs_units_format((double)w->begin_bytes, RS_UNIT_SIZE, b, sizeof b);
    rs_units_format((double)w->end_bytes, RS_UNIT_SIZE, e, sizeof e);
    if (w->begin_bytes > w->end_bytes)
        return rs_yaml_fail(c->y, rs_schema_key_line(c, node, "begin"), "begin",
                            "%s is larger than end %s (allowed: begin <= end)", b, e);
    if (w->step_bytes && rs_yaml_get(c->y, node, "factor", NULL))
        return rs_yaml_fail(c->y, rs_schema_key_line(c, node, "step"), "step",
                            "given with factor (allowed: one of them; factor multiplies the size, step adds to it)");
    uint32_t n = rs_scenario_size_count(w);
    if (n > RS_MAX_SIZES)
        return rs_yaml_fail(c->y, rs_schema_key_line(c, node, "step"), "step",
                            "steps from %s to %s give more than %d sizes (allowed: at most %d; a larger step)", b, e,
                            RS_MAX_SIZES, RS_MAX_SIZES);
    size_t es = ncl_dtype_size(w->dtype);
    if (es && w->begin_bytes < es)
        return rs_yaml_fail(c->y, rs_schema_key_line(c, node, "begin"), "begin",
                            "%s holds no %s element (allowed: at least %zu B for dtype %s)", b,
                            rs_yaml_enum_name(&rs_scenario_dtypes, w->dtype), es,
                            rs_yaml_enum_name(&rs_scenario_dtypes, w->dtype));
    return 0;
}

static void *rs_check_alloc(void *ud, size_t bytes)
{
    (void)ud;
    return malloc(bytes);
}
static void rs_check_free(void *ud, void *ptr)
{
    (void)ud;
    free(ptr);
}

/* workload.schedule: loads the file (relative to the scenario), checks that the workload runs
 * exactly what it implements, and proves it with the checker in and out of place, at one
 * element and at 3 elements per chunk + 1 (chunks of unequal size), with the workload's dtype,
 * op and root, before anything runs. */
static int rs_check_schedule(rs_schema_ctx *c, yaml_node_t *node, rs_workload *w)
{
    int line = rs_schema_key_line(c, node, "schedule");
    if (w->schedule[0] == '\0')
        return rs_yaml_fail(c->y, line, "schedule",
                            "is empty (allowed: the path of a schedule file, relative to the scenario)");
    char *full = rs_yaml_sibling(c->y->file, w->schedule);
    if (full == NULL)
        return rs_yaml_fail(c->y, line, "schedule", "out of memory");
    char msg[RS_SCENARIO_ERRLEN];
    int rc = rs_usersched_load(full, w->schedule, &w->usersched, msg, sizeof msg);
    free(full);
    if (rc == -2)
        return rs_yaml_fail(c->y, line, "schedule",
                            "'%s': %s (allowed: a readable schedule file, relative to the scenario)", w->schedule, msg);
    if (rc != 0)
        return rs_yaml_fail(c->y, line, "schedule", "%s", msg);
    const ncl_user_schedule *s = &w->usersched->sched;
    const char *coll = rs_yaml_enum_name(&rs_scenario_colls, s->coll);
    if (w->colls_count != 1 || w->colls[0] != (int32_t)s->coll)
        return rs_yaml_fail(c->y, rs_schema_key_line(c, node, "collectives"), "collectives",
                            "must be the schedule's one collective (allowed: %s, with schedule %s)", coll,
                            w->usersched->name);
    if (w->algo != NCL_ALGO_AUTO)
        return rs_yaml_fail(
            c->y, rs_schema_key_line(c, node, "algorithm"), "algorithm",
            "'%s' cannot be forced with a schedule, which is the %s algorithm (allowed: auto, or leave it out)",
            rs_yaml_enum_name(&rs_scenario_algos, w->algo), coll);
    if (s->nranks != rs_sc(c)->topo.nranks)
        return rs_yaml_fail(c->y, line, "schedule",
                            "%s is written for %d ranks, the topology has %d (allowed: a schedule for "
                            "%d ranks)",
                            w->usersched->name, s->nranks, rs_sc(c)->topo.nranks, rs_sc(c)->topo.nranks);
    if (w->deterministic && s->coll == NCL_COLL_ALLREDUCE)
        return rs_yaml_fail(c->y, rs_schema_key_line(c, node, "deterministic"), "deterministic",
                            "true runs det instead of the schedule's allreduce (allowed: false with a schedule)");
    const uint64_t counts[2] = {1, 3ull * s->chunks + 1};
    for (int i = 0; i < 4; i++) {
        uint64_t count = counts[i / 2];
        int inplace = i % 2;
        /* a communicator with the schedule, on a backend with just the scratch it needs */
        ncl_config cfg = NCL_CONFIG_INIT;
        cfg.channels = 1;
        cfg.schedule = s;
        ncl_hal_caps caps;
        memset(&caps, 0, sizeof caps);
        caps.max_queues = NCL_MAX_QUEUES;
        caps.scratch_bytes = ncl_user_scratch_bytes(s, count, (uint32_t)ncl_dtype_size(w->dtype));
        ncl_plan_env env;
        ncl_plan_env_init(&env, &cfg, &caps);
        ncl_plan plan;
        char why[RS_SCENARIO_ERRLEN];
        ncl_result r = ncl_plan_make(&plan, (ncl_coll)s->coll, NCL_ALGO_USER, s->nranks, 0, w->root, count, w->dtype,
                                     w->op, inplace, &env);
        if (r == NCL_SUCCESS)
            r = ncl_check(&plan, NULL, rs_check_alloc, rs_check_free, NULL, why, sizeof why);
        else
            snprintf(why, sizeof why, "the engine refuses it: %s", ncl_strerror(r));
        if (r == NCL_ERR_UNSUPPORTED && plan.nranks > NCL_CHECK_MAX_RANKS)
            break; /* beyond the checker's rank limit: the engine runs it unproven too */
        if (r != NCL_SUCCESS)
            return rs_yaml_fail(c->y, line, "schedule", "rejected by the checker: %s (%s, count %llu, %s %s)", why,
                                inplace ? "in place" : "out of place", (unsigned long long)count,
                                rs_yaml_enum_name(&rs_scenario_dtypes, w->dtype),
                                rs_yaml_enum_name(&rs_scenario_ops, w->op));
    }
    return 0;
}

/* device.inline_reduce: "all", "none", or words "dtype" (every op) / "dtype:op" (one op). */
int rs_scenario_check_device(rs_schema_ctx *c, yaml_node_t *node, void *base)
{
    rs_device_params *d = base;
    const char *text = d->inline_reduce ? d->inline_reduce : "all";
    uint16_t inline_ops[NCL_DTYPE_COUNT] = {0};
    const uint16_t all = (1u << NCL_SUM) | (1u << NCL_PROD) | (1u << NCL_MAX) | (1u << NCL_MIN);
    char word[64];
    if (strcmp(text, "all") == 0) {
        for (int t = 0; t < NCL_DTYPE_COUNT; t++)
            inline_ops[t] = all;
    } else if (strcmp(text, "none") != 0) {
        for (const char *p = text; *p;) {
            size_t n = strcspn(p, " ,");
            if (n == 0) {
                p++;
                continue;
            }
            snprintf(word, sizeof word, "%.*s", (int)(n < sizeof word ? n : sizeof word - 1), p);
            p += n;
            char *colon = strchr(word, ':');
            if (colon)
                *colon++ = '\0';
            int dt = -1, op = -1;
            if (rs_yaml_enum_lookup(&rs_scenario_dtypes, word, &dt) != 0 ||
                (colon && (rs_yaml_enum_lookup(&rs_scenario_ops, colon, &op) != 0 || op == NCL_AVG))) {
                char dts[200];
                rs_yaml_enum_list(&rs_scenario_dtypes, dts, sizeof dts);
                return rs_yaml_fail(c->y, rs_schema_key_line(c, node, "inline_reduce"), "inline_reduce",
                                    "'%s%s%s' is not a dtype or dtype:op (allowed: all, none, or words like float or "
                                    "float:sum; dtypes %s; ops sum, prod, max, min)",
                                    word, colon ? ":" : "", colon ? colon : "", dts);
            }
            inline_ops[dt] |= colon ? (uint16_t)(1u << op) : all;
        }
    }
    for (int t = 0; t < NCL_DTYPE_COUNT; t++)
        d->no_inline_ops[t] = (uint16_t)(all & ~inline_ops[t]);
    /* rtl_clock: a number and Hz, kHz, MHz or GHz (no frequency unit in rs_units) */
    d->rtl_clock = RS_DEFAULT_RTL_CLOCK_HZ;
    if (d->rtl_clock_text) {
        char *end = NULL;
        double v = strtod(d->rtl_clock_text, &end);
        while (end && *end == ' ')
            end++;
        double scale = 0;
        if (end && strcmp(end, "Hz") == 0)
            scale = 1;
        else if (end && strcmp(end, "kHz") == 0)
            scale = 1e3;
        else if (end && strcmp(end, "MHz") == 0)
            scale = 1e6;
        else if (end && strcmp(end, "GHz") == 0)
            scale = 1e9;
        if (end == d->rtl_clock_text || scale == 0 || !(v * scale >= 1e6 && v * scale <= 1e10))
            return rs_yaml_fail(c->y, rs_schema_key_line(c, node, "rtl_clock"), "rtl_clock",
                                "'%s' is not a clock between 1 MHz and 10 GHz (allowed: a number with Hz, kHz, "
                                "MHz or GHz, e.g. 1 GHz)",
                                d->rtl_clock_text);
        d->rtl_clock = v * scale;
    }
    /* rtl_ranks: "all" or rank numbers (checked against the topology's ranks in rs_check_top) */
    d->rtl_ranks = 0;
    if (d->rtl_ranks_text && strcmp(d->rtl_ranks_text, "all") != 0) {
        const char *p = d->rtl_ranks_text;
        while (*p) {
            if (*p == ' ' || *p == ',') {
                p++;
                continue;
            }
            char *end = NULL;
            long r = strtol(p, &end, 10);
            if (end == p || r < 0 || r > 63)
                return rs_yaml_fail(c->y, rs_schema_key_line(c, node, "rtl_ranks"), "rtl_ranks",
                                    "'%s' is not a list of ranks (allowed: all, or rank numbers 0..63 separated by "
                                    "spaces or commas, e.g. \"0 2\")",
                                    d->rtl_ranks_text);
            d->rtl_ranks |= 1ull << r;
            p = end;
        }
        if (d->rtl_ranks == 0)
            return rs_yaml_fail(c->y, rs_schema_key_line(c, node, "rtl_ranks"), "rtl_ranks",
                                "is empty (allowed: all, or rank numbers like \"0 2\")");
    }
    /* scratch comes out of the device's memory */
    if (d->scratch_bytes > d->memory_bytes) {
        char scratch[48], memory[48];
        rs_units_format((double)d->scratch_bytes, RS_UNIT_SIZE, scratch, sizeof scratch);
        rs_units_format((double)d->memory_bytes, RS_UNIT_SIZE, memory, sizeof memory);
        return rs_yaml_fail(c->y, rs_schema_key_line(c, node, "scratch"), "scratch",
                            "%s is more than the device's memory, %s (allowed: 4 KiB up to memory)", scratch, memory);
    }
    return 0;
}

int rs_scenario_check_workload(rs_schema_ctx *c, yaml_node_t *node, void *base)
{
    const rs_workload *w = base;
    if (w->algo != NCL_ALGO_AUTO) {
        for (int i = 0; i < w->colls_count; i++) {
            const ncl_coll engine = rs_coll_engine((rs_coll)w->colls[i]);
            if (ncl_algo_supported(engine, w->algo))
                continue;
            char list[128];
            size_t used = 0;
            list[0] = '\0';
            for (int a = 0; a < NCL_ALGO_COUNT; a++) /* printed names, not their aliases; a user
                                                       schedule is given as data, not by name */
                if (a != NCL_ALGO_USER && ncl_algo_supported(engine, (ncl_algo)a))
                    used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "",
                                             rs_yaml_enum_name(&rs_scenario_algos, a));
            return rs_yaml_fail(c->y, rs_schema_key_line(c, node, "algorithm"), "algorithm",
                                "'%s' does not implement %s (allowed for %s: %s; or list collectives one algorithm "
                                "covers)",
                                rs_yaml_enum_name(&rs_scenario_algos, w->algo),
                                rs_yaml_enum_name(&rs_scenario_colls, w->colls[i]),
                                rs_yaml_enum_name(&rs_scenario_colls, w->colls[i]), list);
        }
    }
    if (w->algo == NCL_ALGO_HIER && rs_sc(c)->topo.kind != RS_TOPO_CLUSTER)
        return rs_yaml_fail(c->y, rs_schema_key_line(c, node, "algorithm"), "algorithm",
                            "'hier' runs inside each server, then across servers, and topology kind %s has no "
                            "servers (allowed: hier with kind cluster; here another algorithm or auto)",
                            rs_yaml_enum_name(&rs_scenario_kinds, rs_sc(c)->topo.kind));
    if (w->root >= rs_sc(c)->topo.nranks)
        return rs_yaml_fail(c->y, rs_schema_key_line(c, node, "root"), "root",
                            "%d is out of range (allowed: 0 to %d with %d ranks)", w->root, rs_sc(c)->topo.nranks - 1,
                            rs_sc(c)->topo.nranks);
    /* wide accumulation refines det's rank order, and widens only the 16-bit floats */
    if (w->wide_accumulation && !w->deterministic)
        return rs_yaml_fail(c->y, rs_schema_key_line(c, node, "wide_accumulation"), "wide_accumulation",
                            "true needs deterministic: true (allowed: false, or add deterministic: true)");
    if (w->wide_accumulation && w->dtype != NCL_FLOAT16 && w->dtype != NCL_BFLOAT16)
        return rs_yaml_fail(c->y, rs_schema_key_line(c, node, "wide_accumulation"), "wide_accumulation",
                            "true widens half and bfloat16 only, the dtype is %s (allowed: false, or dtype half or "
                            "bfloat16)",
                            rs_yaml_enum_name(&rs_scenario_dtypes, w->dtype));
    if (w->training.model) {
        /* a training step allreduces its gradient buckets: a sweep's keys would be ignored */
        static const char *const sweep_only[] = {"collectives", "sizes", "root", "schedule"};
        for (size_t i = 0; i < RS_COUNT(sweep_only); i++)
            if (rs_yaml_get(c->y, node, sweep_only[i], NULL))
                return rs_yaml_fail(c->y, rs_schema_key_line(c, node, sweep_only[i]), sweep_only[i],
                                    "means nothing in a training workload, which allreduces its gradient buckets "
                                    "(allowed: algorithm, dtype, op, iterations, warmup, channels, rings, "
                                    "deterministic, inter_algorithm, training)");
    }
    return w->schedule ? rs_check_schedule(c, node, base) : 0;
}

/* ---- training --------------------------------------------------------------------------------- */

/* workload.training.parallel: the sizes multiply to the NPUs (dp, when not given, takes the rest;
 * micro_batches, when not given, is pp), on a transformer's table with a layer per stage at least. */
static int rs_check_parallel(rs_schema_ctx *c, yaml_node_t *node, rs_training *t, int model_line)
{
    const int pline = rs_schema_key_line(c, node, "parallel");
    if (!rs_yaml_get(c->y, node, "parallel", NULL)) {
        if (rs_yaml_get(c->y, node, "micro_batches", NULL))
            return rs_yaml_fail(c->y, rs_schema_key_line(c, node, "micro_batches"), "micro_batches",
                                "means nothing without parallel (allowed: with workload.training.parallel)");
        return 0;
    }
    const int p = rs_sc(c)->topo.nranks;
    const long long tp = t->tp ? t->tp : 1, pp = t->pp ? t->pp : 1;
    if (p % (tp * pp) != 0)
        return rs_yaml_fail(c->y, pline, "parallel", "tp %lld x pp %lld does not divide the topology's %d NPUs "
                            "(allowed: tp x pp x dp = %d)", tp, pp, p, p);
    const long long dp = t->dp ? t->dp : p / (tp * pp);
    if (tp * pp * dp != p)
        return rs_yaml_fail(c->y, pline, "parallel", "tp %lld x pp %lld x dp %lld = %lld NPUs, the topology has %d "
                            "(allowed: tp x pp x dp = %d)", tp, pp, dp, tp * pp * dp, p, p);
    t->tp = (int32_t)tp, t->pp = (int32_t)pp, t->dp = (int32_t)dp;
    if (!t->ep)
        t->ep = 1;
    if (dp % t->ep != 0)
        return rs_yaml_fail(c->y, pline, "parallel", "ep %d does not divide dp %lld (allowed: expert groups of "
                            "replicas that divide dp)", t->ep, dp);
    if (t->ep_skew > 0 && t->ep < 2)
        return rs_yaml_fail(c->y, pline, "parallel", "ep_skew %g without experts (allowed: with ep of 2 or more)",
                            t->ep_skew);
    if (!t->micro_batches)
        t->micro_batches = t->pp;
    rs_fusion f;
    if (!rs_yaml_get(c->y, node, "fusion", NULL)) { /* not given: no buckets, all after the last backward */
        free(t->fusion);
        t->fusion = NULL;
    } else if (rs_fusion_parse(t->fusion, &f, NULL, 0) == 0 && f.dp.kind == DP_FUSION_INDEX)
        return rs_yaml_fail(c->y, rs_schema_key_line(c, node, "fusion"), "fusion", "with parallel each stage "
                            "buckets its own gradients, so indices into the whole model's name none of them "
                            "(allowed: threshold: SIZE, sizes: P1, P2, ..., single, none, default; or leave fusion "
                            "out: each stage's gradients at once after its last backward)");
    if (!t->hidden || !t->sequence)
        return rs_yaml_fail(c->y, model_line, "model", "'%s' gives no hidden and sequence: what tensor-parallel "
                            "allreduces and pipeline sends carry is unknown (allowed: a transformer's table with "
                            "both, e.g. models/gpt2_xl.yaml)", t->model);
    rs_layers layers;
    char why[RS_SCENARIO_ERRLEN];
    if (rs_layers_find(t, &layers, why, sizeof why) != 0)
        return rs_yaml_fail(c->y, model_line, "model", "'%s': %s", t->model, why);
    const size_t count = layers.count;
    rs_layers_free(&layers);
    if ((size_t)t->pp > count)
        return rs_yaml_fail(c->y, pline, "parallel", "pp %d stages for %zu layers (allowed: at most one stage per "
                            "layer)", t->pp, count);
    return 0;
}

int rs_scenario_check_training(rs_schema_ctx *c, yaml_node_t *node, void *base)
{
    rs_training *t = base;
    if (t->model == NULL) {
        const char *given = rs_yaml_get(c->y, node, "micro_batch", NULL)     ? "micro_batch"
                            : rs_yaml_get(c->y, node, "fusion", NULL)        ? "fusion"
                            : rs_yaml_get(c->y, node, "parallel", NULL)      ? "parallel"
                            : rs_yaml_get(c->y, node, "micro_batches", NULL) ? "micro_batches"
                                                                             : NULL;
        if (given)
            return rs_yaml_fail(c->y, rs_schema_key_line(c, node, given), given,
                                "means nothing without model (allowed: with "
                                "workload.training.model)");
        return 0;
    }
    int model_line = rs_schema_key_line(c, node, "model");
    if (t->model[0] == '\0')
        return rs_yaml_fail(c->y, model_line, "model",
                            "is empty (allowed: the path of a model table, relative to the scenario)");
    rs_fusion f;
    char why[RS_SCENARIO_ERRLEN];
    int fusion_line = rs_schema_key_line(c, node, "fusion");
    if (rs_fusion_parse(t->fusion, &f, why, sizeof why) != 0)
        return rs_yaml_fail(c->y, fusion_line, "fusion", "%s", why);
    if (rs_scenario_load_model_table(c, model_line, t) != 0)
        return -1;
    if (t->tensors_count > UINT32_MAX)
        return rs_yaml_fail(c->y, model_line, "model", "%zu tensors (allowed: at most %u)", t->tensors_count,
                            UINT32_MAX);
    int rc = rs_scenario_fusion_check(&f, t, why, sizeof why);
    if (rc == -2)
        return rs_yaml_fail(c->y, model_line, "model", "out of memory");
    if (rc != 0)
        return rs_yaml_fail(c->y, fusion_line, "fusion", "%s", why);
    return rs_check_parallel(c, node, t, model_line);
}

int rs_scenario_fusion_check(const rs_fusion *f, const rs_training *t, char *why, size_t whylen)
{
    size_t n = t->tensors_count; /* at most the loader's list limit: fits dp's uint32_t */
    uint64_t *bytes = malloc((n ? n : 1) * sizeof *bytes);
    dp_bucket *buckets = malloc((n ? n : 1) * sizeof *buckets);
    int rc = 0;
    if (bytes == NULL || buckets == NULL) {
        snprintf(why, whylen, "out of memory");
        rc = -2;
    } else {
        for (size_t i = 0; i < n; i++) /* produced order: the table's last tensor first (elements
                                           stand for bytes: what fails does not depend on the dtype) */
            bytes[i] = t->tensors[n - 1 - i].params;
        if (rs_fusion_buckets(f, bytes, (uint32_t)n, buckets, why, whylen) == 0)
            rc = -1;
    }
    free(bytes);
    free(buckets);
    return rc;
}

/* ---- faults and the whole scenario ------------------------------------------------------------ */

/* A key of one action given on a fault of another: "means nothing for action down". */
static int rs_fault_key_unused(rs_schema_ctx *c, yaml_node_t *node, const rs_fault *f, const char *key,
                               const char *owner)
{
    return rs_yaml_fail(c->y, rs_schema_key_line(c, node, key), key, "means nothing for action %s (allowed: with action %s)",
                        rs_yaml_enum_name(&rs_scenario_actions, f->kind), owner);
}

/* corrupt: how often (required) and whether the link layer catches it; a silent corruption needs
 * bytes to damage. */
static int rs_check_corrupt(rs_schema_ctx *c, yaml_node_t *node, const rs_fault *f)
{
    if (f->every == 0)
        return rs_yaml_fail(c->y, rs_schema_key_line(c, node, "every"), "every",
                            "missing: action corrupt needs it (allowed: a whole number from 1 to 1000000000)");
    const rs_scenario *sc = c->root;
    if (!f->crc && !sc->payload_real)
        return rs_yaml_fail(c->y, rs_schema_key_line(c, node, "crc"), "crc",
                            "false needs payload: real (with payload none no bytes move, so nothing can land "
                            "damaged; allowed: true, or payload: real)");
    return 0;
}

int rs_scenario_check_fault(rs_schema_ctx *c, yaml_node_t *node, void *base)
{
    const rs_fault *f = base;
    int line = rs_schema_key_line(c, node, "link");
    if (rs_check_ref(c, &f->ends, "link", "link", "link", line, line) != 0)
        return -1;
    if (f->kind != RS_FAULT_DEGRADE && (f->bandwidth >= 0 || f->latency >= 0))
        return rs_fault_key_unused(c, node, f, f->bandwidth >= 0 ? "bandwidth" : "latency", "degrade");
    /* crc has a default, so whether it was written is asked of the file, not of the struct */
    if (f->kind != RS_FAULT_CORRUPT && (f->every != 0 || rs_yaml_get(c->y, node, "crc", NULL) != NULL))
        return rs_fault_key_unused(c, node, f, f->every != 0 ? "every" : "crc", "corrupt");
    if (f->kind == RS_FAULT_DEGRADE && f->bandwidth < 0 && f->latency < 0)
        return rs_yaml_fail(c->y, rs_yaml_line(node), NULL,
                            "degrade changes nothing (allowed: give bandwidth, latency or both)");
    return f->kind == RS_FAULT_CORRUPT ? rs_check_corrupt(c, node, f) : 0;
}

/* MemAvailable of /proc/meminfo in bytes; 0 when unknown (another system: no check). */
static uint64_t rs_host_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    unsigned long long kb = 0;
    char line[128];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return (uint64_t)kb * 1024;
}

/* One-way channels the model builds for the topology (links: counted both ways, the default). */
static double rs_topo_channels(const rs_topology_spec *t)
{
    double p = t->nranks;
    switch (t->kind) {
    case RS_TOPO_RING: return p;
    case RS_TOPO_BIRING: return 2 * p;
    case RS_TOPO_FULL_MESH: return p * (p - 1);
    case RS_TOPO_TORUS2D: return 4 * p;
    case RS_TOPO_SWITCH: return 2 * p;
    case RS_TOPO_FAT_TREE: return 2 * p + 2.0 * (t->per_leaf > 0 ? p / t->per_leaf : 1) * t->spines;
    case RS_TOPO_SERVER8: return 32;
    case RS_TOPO_CLUSTER: return 32.0 * t->servers + 2 * p;
    default: return 2.0 * (double)t->links_count;
    }
}

/* The model's memory per one-way channel (its Link, credit and statistics state, and its routes'
 * share), measured: full_mesh of 512 ranks, 261,632 channels, 650 MiB peak. */
#define RS_MODEL_CHANNEL_BYTES 2450.0

/* The device scratch a rank gets: device.scratch, or a quarter of its memory up to the default cap. */
static uint64_t rs_scratch_bytes(const rs_device_params *d)
{
    if (d->scratch_bytes)
        return d->scratch_bytes;
    return d->memory_bytes / 4 < RS_DEFAULT_NPU_SCRATCH_MAX_BYTES ? d->memory_bytes / 4 : RS_DEFAULT_NPU_SCRATCH_MAX_BYTES;
}

/* Largest bytes one rank holds (send + receive buffers) at the largest size of the sweep. */
static uint64_t rs_memory_need(const rs_scenario *sc, const char **coll)
{
    uint64_t end = sc->workload.end_bytes, n = (uint64_t)(sc->topo.nranks > 0 ? sc->topo.nranks : 1), need = 0;
    const rs_training *t = &sc->workload.training;
    if (t->model) { /* a bucket's send and receive buffers, at most all the gradients */
        for (size_t i = 0; i < t->tensors_count; i++)
            need += 2 * t->tensors[i].params * ncl_dtype_size(sc->workload.dtype);
        *coll = "the gradients";
        return need;
    }
    for (int i = 0; i < sc->workload.colls_count; i++) {
        const int32_t cl = sc->workload.colls[i];
        uint64_t x = cl == NCL_COLL_REDUCE_SCATTER || cl == NCL_COLL_ALLGATHER ? end + (end + n - 1) / n : 2 * end;
        if (cl == RS_COLL_ALLTOALLV) /* the fullest rank's row and column: up to 1 + skew x the mean */
            x = (uint64_t)((double)x * (1 + sc->workload.a2av_skew));
        if (x > need) {
            need = x;
            *coll = rs_yaml_enum_name(&rs_scenario_colls, cl);
        }
    }
    return need;
}

int rs_scenario_check_top(rs_schema_ctx *c, yaml_node_t *node, void *base)
{
    rs_scenario *sc = base;
    if (sc->workload.training.dp && sc->payload_real) /* dp is set once parallel was checked */
        return rs_yaml_fail(c->y, rs_schema_key_line(c, node, "payload"), "payload", "real: a training step with "
                            "workload.training.parallel is timed only (allowed: none)");
    if (sc->name == NULL) {
        sc->name = rs_yaml_base_name(c->y->file);
        if (sc->name == NULL)
            return rs_yaml_fail(c->y, 1, "name", "out of memory");
    } else if (sc->name[0] == '\0') {
        return rs_yaml_fail(c->y, rs_schema_key_line(c, node, "name"), "name",
                            "is empty (allowed: a short name, or leave it "
                            "out for the file name)");
    }
    if (sc->device.fidelity == RS_DEVICE_RTL) {
        /* what the RTL block and its mmio backend can run (rtl_stub/README.md, co-simulation) */
        int dline = rs_yaml_get(c->y, node, "device", NULL) ? rs_schema_sub_key_line(c, node, "device", "fidelity")
                                              : rs_schema_key_line(c, node, "device");
        const rs_workload *w = &sc->workload;
        int reduces = 0;
        for (int i = 0; i < w->colls_count; i++)
            reduces |= w->colls[i] == NCL_COLL_ALLREDUCE || w->colls[i] == NCL_COLL_REDUCE ||
                       w->colls[i] == NCL_COLL_REDUCE_SCATTER;
        if (sc->topo.nranks > 4)
            return rs_yaml_fail(c->y, dline, "device.fidelity",
                                "rtl with %d ranks: the block's 128 notify counters give the mmio backend all "
                                "32 notify ids per peer only up to 4 ranks (allowed: 2 to 4 ranks, or "
                                "fidelity systemc)",
                                sc->topo.nranks);
        if (sc->device.rtl_ranks >> sc->topo.nranks)
            return rs_yaml_fail(c->y, rs_schema_sub_key_line(c, node, "device", "rtl_ranks"), "device.rtl_ranks",
                                "'%s' names a rank the topology does not have (allowed: all, or ranks 0 to %d)",
                                sc->device.rtl_ranks_text, sc->topo.nranks - 1);
        if (w->training.model)
            return rs_yaml_fail(c->y, dline, "device.fidelity",
                                "rtl runs size sweeps only, not workload.training (allowed: systemc)");
        if (w->dtype != NCL_INT32 && w->dtype != NCL_UINT32 && w->dtype != NCL_FLOAT32)
            return rs_yaml_fail(c->y, rs_schema_sub_key_line(c, node, "workload", "dtype"), "workload.dtype",
                                "%s on device.fidelity rtl: the block's datapath handles 32-bit words of "
                                "int32, uint32 and float (allowed: int32, uint32, float)",
                                ncl_dtype_name(w->dtype));
        if (reduces && w->op != NCL_SUM && w->op != NCL_MAX && w->op != NCL_MIN)
            return rs_yaml_fail(c->y, rs_schema_sub_key_line(c, node, "workload", "op"), "workload.op",
                                "%s on device.fidelity rtl: the block's reduce lanes do sum, max and min "
                                "(allowed: sum, max, min)",
                                ncl_op_name(w->op));
    }
    /* the model holds every channel in this host's memory: refused here, a 65536-rank full mesh
     * validated and then aborted with bad_alloc after 73 s */
    double channels = rs_topo_channels(&sc->topo), model = channels * RS_MODEL_CHANNEL_BYTES;
    uint64_t avail = rs_host_available();
    if (avail && model > (double)avail)
        return rs_yaml_fail(c->y, rs_schema_key_line(c, node, "topology"), "topology",
                            "%s of %d ranks has %.0f one-way links; the model needs about %.1f GiB for them "
                            "(%.1f KiB each), more than the %.1f GiB this host has available (allowed: fewer "
                            "ranks, or a kind with fewer links: switch, fat_tree, torus2d)",
                            rs_yaml_enum_name(&rs_scenario_kinds, sc->topo.kind), sc->topo.nranks, channels,
                            model / 1073741824.0, RS_MODEL_CHANNEL_BYTES / 1024.0, (double)avail / 1073741824.0);
    if (sc->workload.landing_zone > 0) { /* ncl_plan_env_zones: two zones per channel, at most half the scratch */
        uint64_t scratch = rs_scratch_bytes(&sc->device);
        uint32_t channels = sc->workload.channels ? sc->workload.channels : 2; /* at least 2 by default */
        uint64_t most = scratch / 2 / (2ull * channels) / 64 * 64;
        if (sc->workload.landing_zone > (double)most) {
            char zone[48], have[48], top[48];
            rs_units_format(sc->workload.landing_zone, RS_UNIT_SIZE, zone, sizeof zone);
            rs_units_format((double)scratch, RS_UNIT_SIZE, have, sizeof have);
            rs_units_format((double)most, RS_UNIT_SIZE, top, sizeof top);
            return rs_yaml_fail(c->y, rs_schema_sub_key_line(c, node, "workload", "landing_zone"),
                                "workload.landing_zone",
                                "%s: two zones per channel on %u channels take more than half of device.scratch "
                                "(%s) (allowed: 0 B to %s, or a larger device.scratch)",
                                zone, channels, have, top);
        }
    }
    if (sc->payload_real) {
        const char *coll = "";
        uint64_t need = rs_memory_need(sc, &coll);
        if (need > sc->device.memory_bytes) {
            char have[48], want[48], end[48];
            rs_units_format((double)sc->device.memory_bytes, RS_UNIT_SIZE, have, sizeof have);
            rs_units_format((double)need, RS_UNIT_SIZE, want, sizeof want);
            rs_units_format((double)sc->workload.end_bytes, RS_UNIT_SIZE, end, sizeof end);
            int line = rs_yaml_get(c->y, node, "device", NULL) ? rs_schema_sub_key_line(c, node, "device", "memory")
                                                 : rs_schema_key_line(c, node, "payload");
            return rs_yaml_fail(c->y, line, "device.memory",
                                "%s cannot hold the %s a rank needs for %s of %s (send + receive buffers) "
                                "(allowed: at least %s, or payload: none)",
                                have, want, coll, end, want);
        }
        /* the simulator holds every rank's buffers and device scratch, and the expected result,
         * in this host's memory: refused here, it ended in bad_alloc or the OOM killer mid-run */
        uint64_t scratch = rs_scratch_bytes(&sc->device);
        double host = ((double)sc->topo.nranks + 1) * (double)need + (double)sc->topo.nranks * (double)scratch;
        if (avail && host > (double)avail) {
            char hs[48], as[48], end[48], ns[48], ss[48];
            snprintf(hs, sizeof hs, "%.1f GiB", host / 1073741824.0);
            snprintf(as, sizeof as, "%.1f GiB", (double)avail / 1073741824.0);
            rs_units_format((double)sc->workload.end_bytes, RS_UNIT_SIZE, end, sizeof end);
            rs_units_format((double)need, RS_UNIT_SIZE, ns, sizeof ns);
            rs_units_format((double)scratch, RS_UNIT_SIZE, ss, sizeof ss);
            return rs_yaml_fail(c->y, rs_schema_key_line(c, node, "payload"), "payload",
                                "real: %s of %s on %d ranks needs about %s of this host's memory (%d x (buffers "
                                "%s + device scratch %s) + the expected result), more than the %s available "
                                "(allowed: none for timing only, or smaller workload.sizes, fewer ranks)",
                                coll, end, sc->topo.nranks, hs, sc->topo.nranks, ns, ss, as);
        }
    }
    return 0;
}
