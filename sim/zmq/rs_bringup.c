/* rs_bringup.c — `ringsim bringup`: tests every expected link of a set of agents and names the bad ones. */
#define _GNU_SOURCE
#include "rs_bringup.h"
#include "rs_agents.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "ncl/ncl.h"
#include "ncl/ncl_wire.h"
#include "sweep/rs_sweep.h"
#include "rs_ranktable.h"
#include "scenario/rs_scenario.h"

#define BU_MAX_LOCAL 64
#define BU_MAX_REPLY (16u << 20)
#define BU_MAX_INJECT 16
#define BU_MAX_RINGS 64
#define BU_EXIT_BAD 1
#define BU_EXIT_INTERRUPTED 130

static volatile sig_atomic_t bu_stop;

static void bu_on_signal(int sig)
{
    (void)sig;
    bu_stop = 1;
}

static double bu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- agents --------------------------------------------------------------------------------------- */

typedef struct bu_agent {
    void *req;
    pid_t pid;        /* 0: not ours */
    int exited, waiting, lost;
    uint64_t seq;
    uint8_t cmd;
    cJSON *reply;
    char error[1024];
} bu_agent;

typedef struct bu_ctl {
    int n;
    rs_ranktable table;
    bu_agent *ag;
    void *ctx;
    rs_agents procs;           /* spawned agents' process group */
    const char *agent_backend; /* spawned agents' --backend: zmq, or mmio (emulated boards) */
    FILE *out, *err;
} bu_ctl;

/* Reaps agents that exited (says why once); returns how many still run. */
static int bu_reap(bu_ctl *c)
{
    int running = 0;
    for (int r = 0; r < c->n; r++) {
        bu_agent *a = &c->ag[r];
        int st = 0;
        if (a->pid && !a->exited && waitpid(a->pid, &st, WNOHANG) == a->pid) {
            a->exited = 1;
            if (a->waiting || WIFSIGNALED(st) || WEXITSTATUS(st)) {
                a->lost = 1;
                a->waiting = 0;
                if (!a->error[0])
                    snprintf(a->error, sizeof a->error, "agent rank %d (pid %d) %s %d", r, (int)a->pid,
                             WIFSIGNALED(st) ? "was killed by signal" : "exited with status",
                             WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
            }
        }
        running += a->pid && !a->exited;
    }
    return running;
}

static int bu_spawn(bu_ctl *c, const char *job, double timeout_s, double connect_s, char faults[][64])
{
    char nbuf[16], tbuf[32], cbuf[32];
    snprintf(nbuf, sizeof nbuf, "%d", c->n);
    snprintf(tbuf, sizeof tbuf, "%.3f", timeout_s);
    snprintf(cbuf, sizeof cbuf, "%.3f", connect_s);
    for (int r = 0; r < c->n; r++) {
        char rbuf[16];
        snprintf(rbuf, sizeof rbuf, "%d", r);
        char *args[20] = {"ringsim", "agent", "--quiet", "--ranks", nbuf, "--rank", rbuf, "--job", (char *)job,
                          "--timeout", tbuf, "--connect-timeout", cbuf, "--channels", "1",
                          "--backend", (char *)(c->agent_backend ? c->agent_backend : "zmq"), NULL};
        int k = 17;
        if (faults[r][0]) {
            args[k++] = "--fault";
            args[k++] = faults[r];
        }
        args[k] = NULL;
        pid_t pid = rs_agents_start(&c->procs, args);
        if (pid < 0) {
            fprintf(c->err, "ringsim bringup: cannot start agent rank %d: %s\n", r, strerror(errno));
            return -1;
        }
        c->ag[r].pid = pid;
    }
    c->procs.spawned = 1;
    return 0;
}

static int bu_reap_cb(void *ctx) { return bu_reap(ctx); }

static pid_t bu_alive(void *ctx, int r)
{
    const bu_ctl *c = ctx;
    return c->ag[r].exited ? 0 : c->ag[r].pid;
}

/* Waits up to grace_s for spawned agents to exit, then SIGTERM, then SIGKILL; reaps them all. */
static void bu_stop_agents(bu_ctl *c, double grace_s)
{
    rs_agents_stop(&c->procs, c->n, grace_s, bu_reap_cb, bu_alive, c);
}

static int bu_send(bu_ctl *c, int r, uint8_t cmd, const char *json)
{
    bu_agent *a = &c->ag[r];
    if (a->lost || a->exited)
        return -1;
    ncl_wire_msg m;
    memset(&m, 0, sizeof m);
    m.command = cmd;
    m.seq = ++a->seq;
    m.src = NCL_WIRE_RANK_NONE;
    m.dst = (uint32_t)r;
    if (cmd == NCL_WIRE_HELLO) {
        m.hello.min_version = m.hello.max_version = NCL_WIRE_VERSION;
        m.hello.max_payload = BU_MAX_REPLY;
        m.hello.nranks = (uint32_t)c->n;
        m.hello.caps = NCL_WIRE_CAP_CONTROL;
    } else if (json) {
        m.payload = (const uint8_t *)json;
        m.payload_len = (uint32_t)strlen(json);
    }
    size_t need = 0, len = 0;
    ncl_wire_encode(&m, NULL, 0, &need);
    zmq_msg_t f;
    zmq_msg_init_size(&f, need);
    if (ncl_wire_encode(&m, zmq_msg_data(&f), need, &len) != NCL_WIRE_OK || zmq_msg_send(&f, a->req, ZMQ_DONTWAIT) < 0) {
        zmq_msg_close(&f);
        a->lost = 1;
        snprintf(a->error, sizeof a->error, "agent rank %d: cannot send %s: %s", r, ncl_wire_cmd_name(cmd),
                 zmq_strerror(errno));
        return -1;
    }
    cJSON_Delete(a->reply);
    a->reply = NULL;
    a->error[0] = '\0';
    a->cmd = cmd;
    a->waiting = 1;
    return 0;
}

static void bu_take(bu_ctl *c, int r)
{
    bu_agent *a = &c->ag[r];
    zmq_msg_t f;
    zmq_msg_init(&f);
    if (zmq_msg_recv(&f, a->req, ZMQ_DONTWAIT) < 0) {
        zmq_msg_close(&f);
        return;
    }
    a->waiting = 0;
    ncl_wire_msg m;
    char why[300];
    ncl_wire_limits lim = {BU_MAX_REPLY, (uint32_t)c->n, NCL_WIRE_RANK_NONE, NCL_WIRE_VERSION, NCL_WIRE_VERSION};
    ncl_wire_result wr = ncl_wire_decode(zmq_msg_data(&f), zmq_msg_size(&f), &lim, &m, why, sizeof why);
    uint8_t want = a->cmd == NCL_WIRE_HELLO ? NCL_WIRE_HELLO_ACK : a->cmd;
    if (wr != NCL_WIRE_OK)
        snprintf(a->error, sizeof a->error, "agent rank %d: reply rejected: %s: %s", r, ncl_wire_result_name(wr), why);
    else if (m.command == NCL_WIRE_ERROR)
        snprintf(a->error, sizeof a->error, "%.*s", (int)m.payload_len, (const char *)m.payload);
    else if (m.command != want || m.src != (uint32_t)r)
        snprintf(a->error, sizeof a->error, "agent rank %d: answered %s from rank %u (miswired rank table?)", r,
                 ncl_wire_cmd_name(m.command), (unsigned)m.src);
    else if (want != NCL_WIRE_HELLO_ACK && !(a->reply = cJSON_ParseWithLength((const char *)m.payload, m.payload_len)))
        snprintf(a->error, sizeof a->error, "agent rank %d: the reply is not JSON", r);
    zmq_msg_close(&f);
}

/* Waits for every outstanding reply, at most limit_s. An agent that does not answer is lost
 * (its REQ socket is relaxed, but a rank that stopped answering is not asked again).
 * Returns -1 when interrupted. */
static int bu_gather(bu_ctl *c, double limit_s, const char *what)
{
    zmq_pollitem_t *it = calloc((size_t)c->n, sizeof *it);
    int *idx = calloc((size_t)c->n, sizeof *idx);
    double t0 = bu_now();
    int rc = 0;
    for (;;) {
        bu_reap(c);
        int k = 0;
        for (int r = 0; r < c->n; r++)
            if (c->ag[r].waiting) {
                it[k].socket = c->ag[r].req;
                it[k].events = ZMQ_POLLIN;
                it[k].revents = 0;
                idx[k++] = r;
            }
        if (!k)
            break;
        if (bu_stop) {
            rc = -1;
            break;
        }
        if (bu_now() - t0 > limit_s) {
            for (int i = 0; i < k; i++) {
                bu_agent *a = &c->ag[idx[i]];
                a->waiting = 0;
                a->lost = 1;
                snprintf(a->error, sizeof a->error, "agent rank %d (%s): no answer to %s within %.1f s", idx[i],
                         c->table.e[idx[i]].control, what, limit_s);
            }
            break;
        }
        if (zmq_poll(it, k, 50) > 0)
            for (int i = 0; i < k; i++)
                if (it[i].revents & ZMQ_POLLIN)
                    bu_take(c, idx[i]);
    }
    free(it);
    free(idx);
    return rc;
}

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

void rs_bringup_usage(FILE *out)
{
    fprintf(out,
        "usage: ringsim bringup [--ranks N | --ranktable FILE] [--expect TOPOLOGY] [options]\n"
        "\n"
        "Brings up a set of agents (one process per rank, as 'ringsim run --backend zmq'): tests every\n"
        "expected link in both directions through the HAL (bandwidth, ping-pong latency, data patterns),\n"
        "runs ring allreduces through the engine whose orders together cover the links, and names each\n"
        "bad link: dead, slow, corrupting or miswired; links of ranks that are not there are missing.\n"
        "  --ranks N            spawn N local agents (default 4)\n"
        "  --ranktable FILE     use the running agents FILE lists instead\n"
        "  --expect TOPOLOGY    ring:N, biring:N, mesh:N, torus:RxC, switch:N, server8, cluster:S, or a\n"
        "                       scenario file (its topology section); default: a ring over the agents\n"
        "  --slow-factor F      slow = bandwidth below F x the median of the links (default 0.5)\n"
        "  --timeout S          how long a rank waits for each transfer (default 2); also the engine's\n"
        "                       timeout of spawned agents (others keep their own --timeout)\n"
        "  --connect-timeout S  how long agents may take to come up (default 30)\n"
        "  --bytes B            bandwidth transfer size (default 2M; K, M, G suffixes)\n"
        "  --slot B             size of each pattern transfer (default 64K)\n"
        "  --reps N             bandwidth transfers per link, the best counts (default 3)\n"
        "  --pings N            ping-pong round trips per link (default 20)\n"
        "  --ring-bytes B       size of each ring allreduce (default 64K)\n"
        "  --seed S             seed of the pseudo-random pattern (default 1)\n"
        "  --json FILE          write the results as JSON\n"
        "  --shutdown-agents    with --ranktable: send SHUTDOWN at the end\n"
        "  --inject A-B:FAULT   test hook (spawned agents only): damage the link A->B; FAULT = dead,\n"
        "                       slow:GBPS, corrupt or miswire:C (see 'ringsim agent --fault')\n"
        "  --agent-backend B    spawned agents' HAL: zmq (default) or mmio (emulated boards: a verilated\n"
        "                       block per agent, at most 4 ranks, no corrupt injection; sim/zmq/ZMQ.md)\n"
        "Exit status: 0 every expected link good, 1 a link or ring is bad or a rank is missing,\n"
        "2 bad arguments or files, 130 interrupted.\n");
}

static int bu_parse_seconds(const char *flag, const char *v, double *out, FILE *err)
{
    char *end = NULL;
    double s = strtod(v, &end);
    if (end == v || *end || !(s > 0) || s > 1e5) {
        fprintf(err, "ringsim bringup: %s: '%s' is not a time (allowed: seconds > 0, e.g. 0.5)\n", flag, v);
        return -1;
    }
    *out = s;
    return 0;
}

static int bu_parse_bytes(const char *flag, const char *v, uint64_t lo, uint64_t hi, uint64_t *out, FILE *err)
{
    char *end = NULL;
    double x = strtod(v, &end);
    if (end != v && *end) {
        double m = 0;
        if (!strcmp(end, "K") || !strcmp(end, "KiB"))
            m = 1024;
        else if (!strcmp(end, "M") || !strcmp(end, "MiB"))
            m = 1048576;
        else if (!strcmp(end, "G") || !strcmp(end, "GiB"))
            m = 1073741824.0;
        if (m > 0) {
            x *= m;
            end += strlen(end);
        }
    }
    if (end == v || *end || !(x >= (double)lo) || x > (double)hi || x != floor(x) || (uint64_t)x % 8) {
        fprintf(err, "ringsim bringup: %s: '%s' (allowed: %llu..%llu bytes, a multiple of 8; K, M, G suffixes)\n", flag,
                v, (unsigned long long)lo, (unsigned long long)hi);
        return -1;
    }
    *out = (uint64_t)x;
    return 0;
}

static int bu_parse_int(const char *flag, const char *v, long lo, long hi, long *out, FILE *err)
{
    char *end = NULL;
    long x = strtol(v, &end, 10);
    if (end == v || *end || x < lo || x > hi) {
        fprintf(err, "ringsim bringup: %s: '%s' (allowed: %ld..%ld)\n", flag, v, lo, hi);
        return -1;
    }
    *out = x;
    return 0;
}

typedef struct bu_opts {
    const char *table_path, *expect_spec, *json_path;
    double slow_factor, timeout_s, connect_s;
    uint64_t bytes, slot, ring_bytes;
    long nranks, reps, pings, seed;
    int shutdown_remote;
    const char *inject[BU_MAX_INJECT];
    int ninject;
    const char *agent_backend;
} bu_opts;

/* Returns -1 to go on, else the exit status (help, bad usage). */
static int bu_parse_args(int argc, char **argv, bu_opts *o, FILE *out, FILE *err)
{
    static const char *const with_value[] = {"--ranks", "--ranktable", "--expect", "--slow-factor", "--timeout",
                                              "--connect-timeout", "--bytes", "--slot", "--reps", "--pings",
                                              "--ring-bytes", "--seed", "--json", "--inject", "--agent-backend"};
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
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            rs_bringup_usage(out);
            return RS_EXIT_OK;
        }
        if (!strcmp(a, "--shutdown-agents")) {
            o->shutdown_remote = 1;
            continue;
        }
        int known = 0;
        for (size_t k = 0; k < sizeof with_value / sizeof *with_value; k++)
            known |= !strcmp(a, with_value[k]);
        if (!known) {
            fprintf(err, "ringsim bringup: unknown option '%s' (see 'ringsim bringup --help')\n", a);
            return RS_EXIT_USAGE;
        }
        if (!v) {
            fprintf(err, "ringsim bringup: %s: missing value\n", a);
            return RS_EXIT_USAGE;
        }
        i++;
        int bad = 0;
        if (!strcmp(a, "--ranks"))
            bad = bu_parse_int(a, v, 2, BU_MAX_LOCAL, &o->nranks, err);
        else if (!strcmp(a, "--ranktable"))
            o->table_path = v;
        else if (!strcmp(a, "--expect"))
            o->expect_spec = v;
        else if (!strcmp(a, "--json"))
            o->json_path = v;
        else if (!strcmp(a, "--agent-backend")) {
            o->agent_backend = v;
            if (strcmp(v, "zmq") && strcmp(v, "mmio")) {
                fprintf(err, "ringsim bringup: --agent-backend: '%s' (allowed: zmq, mmio)\n", v);
                bad = 1;
            }
        }
        else if (!strcmp(a, "--timeout"))
            bad = bu_parse_seconds(a, v, &o->timeout_s, err);
        else if (!strcmp(a, "--connect-timeout"))
            bad = bu_parse_seconds(a, v, &o->connect_s, err);
        else if (!strcmp(a, "--bytes"))
            bad = bu_parse_bytes(a, v, 8, 64u << 20, &o->bytes, err);
        else if (!strcmp(a, "--slot"))
            bad = bu_parse_bytes(a, v, 8, 1u << 20, &o->slot, err);
        else if (!strcmp(a, "--ring-bytes"))
            bad = bu_parse_bytes(a, v, 8, 64u << 20, &o->ring_bytes, err);
        else if (!strcmp(a, "--reps"))
            bad = bu_parse_int(a, v, 1, 100, &o->reps, err);
        else if (!strcmp(a, "--pings"))
            bad = bu_parse_int(a, v, 0, 1000, &o->pings, err);
        else if (!strcmp(a, "--seed"))
            bad = bu_parse_int(a, v, 0, 1L << 40, &o->seed, err);
        else if (!strcmp(a, "--slow-factor")) {
            char *end = NULL;
            o->slow_factor = strtod(v, &end);
            if (end == v || *end || !(o->slow_factor > 0) || o->slow_factor >= 1) {
                fprintf(err, "ringsim bringup: --slow-factor: '%s' (allowed: 0 < F < 1)\n", v);
                bad = 1;
            }
        } else if (o->ninject < BU_MAX_INJECT) {
            o->inject[o->ninject++] = v;
        } else {
            fprintf(err, "ringsim bringup: --inject: more than %d\n", BU_MAX_INJECT);
            bad = 1;
        }
        if (bad)
            return RS_EXIT_USAGE;
    }
    if (o->table_path && o->nranks) {
        fprintf(err, "ringsim bringup: --ranks and --ranktable (allowed: one of them)\n");
        return RS_EXIT_USAGE;
    }
    if (o->agent_backend && !strcmp(o->agent_backend, "mmio") && o->table_path) {
        fprintf(err, "ringsim bringup: --agent-backend mmio: only for spawned agents (allowed: leave it out with "
                "--ranktable: those agents run the backend they were started with)\n");
        return RS_EXIT_USAGE;
    }
    if (o->agent_backend && !strcmp(o->agent_backend, "mmio") && o->nranks > 4) {
        fprintf(err, "ringsim bringup: --agent-backend mmio: --ranks %ld (allowed: 2..4: the block's 128 notify "
                "counters give each peer 128 / ranks ids, the engine needs 32)\n", o->nranks);
        return RS_EXIT_USAGE;
    }
    if (o->table_path && o->ninject) {
        fprintf(err, "ringsim bringup: --inject works on spawned agents only (allowed with --ranktable: start the "
                "agents with --fault)\n");
        return RS_EXIT_USAGE;
    }
    return -1;
}

/* --inject A-B:FAULT becomes agent A's --fault B:FAULT (checked as the agent will). 0 or -1. */
static int bu_make_faults(const bu_opts *o, int n, char (*faults)[64], FILE *err)
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
static int bu_start(bu_ctl *c, const bu_opts *o, char (*faults)[64])
{
    char e[RS_RT_ERRLEN] = "";
    c->agent_backend = o->agent_backend;
    if (!o->table_path) {
        char job[RS_RT_JOB_MAX];
        const char *ej = getenv("RINGSIM_JOB");
        snprintf(job, sizeof job, "%s", ej && *ej ? ej : "");
        if (!job[0])
            snprintf(job, sizeof job, "bu%d", (int)getpid());
        if (rs_ranktable_local(c->n, job, &c->table, e, sizeof e) || bu_spawn(c, job, o->timeout_s, o->connect_s, faults)) {
            if (e[0])
                fprintf(c->err, "ringsim bringup: %s\n", e);
            return RS_EXIT_USAGE;
        }
    }
    c->ctx = zmq_ctx_new();
    for (int r = 0; r < c->n; r++) {
        int zero = 0, one = 1;
        c->ag[r].req = zmq_socket(c->ctx, ZMQ_REQ);
        zmq_setsockopt(c->ag[r].req, ZMQ_LINGER, &zero, sizeof zero);
        zmq_setsockopt(c->ag[r].req, ZMQ_REQ_RELAXED, &one, sizeof one);
        zmq_setsockopt(c->ag[r].req, ZMQ_REQ_CORRELATE, &one, sizeof one);
        if (zmq_connect(c->ag[r].req, c->table.e[r].control) != 0) {
            fprintf(c->err, "ringsim bringup: agent rank %d: cannot connect to %s: %s\n", r, c->table.e[r].control,
                    zmq_strerror(errno));
            return RS_EXIT_USAGE;
        }
    }
    for (int r = 0; r < c->n; r++)
        bu_send(c, r, NCL_WIRE_HELLO, NULL);
    if (bu_gather(c, o->connect_s + 5.0, "HELLO"))
        return BU_EXIT_INTERRUPTED;
    int up = 1;
    for (int r = 0; r < c->n; r++)
        if (c->ag[r].error[0]) {
            fprintf(c->err, "ringsim bringup: %s\n", c->ag[r].error);
            up = 0;
        }
    if (!up) {
        fprintf(c->err, "ringsim bringup: the agents did not all come up: no link was tested\n");
        return BU_EXIT_BAD;
    }
    return -1;
}

/* Sends one bring-up step to every agent and waits. -1 interrupted, 1 an agent failed, 0 ok. */
static int bu_all(bu_ctl *c, const char *req, double limit_s, const char *what)
{
    for (int r = 0; r < c->n; r++)
        bu_send(c, r, NCL_WIRE_SELFTEST, req);
    if (bu_gather(c, limit_s, what))
        return -1;
    int failed = 0;
    for (int r = 0; r < c->n; r++)
        if (c->ag[r].error[0]) {
            fprintf(c->err, "ringsim bringup: %s\n", c->ag[r].error);
            failed = 1;
        }
    return failed;
}

/* One directed link: arm the destination, then run both sides. 0, or -1 when interrupted. */
static int bu_test_link(bu_ctl *c, const bu_opts *o, bu_link *l)
{
    char req[256];
    long tmo_ms = (long)(o->timeout_s * 1000);
    if (l->src >= c->n || l->dst >= c->n) {
        bu_set(l, "missing", "rank %d has no agent (%d agents: 0..%d)", l->src >= c->n ? l->src : l->dst, c->n, c->n - 1);
        return 0;
    }
    l->tested = 1;
    snprintf(req, sizeof req, "{\"test\":\"arm\",\"src\":%d}", l->src);
    bu_send(c, l->dst, NCL_WIRE_SELFTEST, req);
    if (bu_gather(c, o->timeout_s + 10, "SELFTEST arm"))
        return -1;
    if (c->ag[l->dst].error[0]) {
        bu_set(l, "error", "%s", c->ag[l->dst].error);
        return 0;
    }
    snprintf(req, sizeof req, "{\"test\":\"link\",\"src\":%d,\"dst\":%d,\"reps\":%ld,\"pings\":%ld,\"timeout_ms\":%ld}",
             l->src, l->dst, o->reps, o->pings, tmo_ms);
    bu_send(c, l->src, NCL_WIRE_SELFTEST, req);
    bu_send(c, l->dst, NCL_WIRE_SELFTEST, req);
    /* each side waits at most about two timeouts per step */
    if (bu_gather(c, 2 * o->timeout_s * (double)(o->reps + RS_BU_PATTERNS + 2 + o->pings) + 10, "SELFTEST link"))
        return -1;
    bu_agent *as = &c->ag[l->src], *ad = &c->ag[l->dst];
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
static int bu_end_all(bu_ctl *c, const bu_opts *o, const bu_link *L, int nlinks, cJSON *end_replies)
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
        bu_send(c, r, NCL_WIRE_SELFTEST, req);
    }
    if (bu_gather(c, o->timeout_s + 10, "SELFTEST end"))
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
static double bu_judge(const bu_opts *o, bu_link *L, int nlinks, const cJSON *end_replies)
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
static int bu_rings(bu_ctl *c, const bu_opts *o, const bu_link *L, int nlinks, cJSON *rings_json, bu_ring_stats *st)
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
            fprintf(c->out, "# rings: link %d->%d (%s) and %d->%d are left out of the ring allreduces\n", L[i].src,
                    L[i].dst, L[i].verdict, L[i].dst, L[i].src);
            st->left_out++;
        }
    for (int i = 0; edge && cov.covered && cov.path && cov.used && i < nlinks && !bu_stop; i++) {
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
            bu_send(c, r, NCL_WIRE_SELFTEST, req);
        if (bu_gather(c, 6 * o->timeout_s + 20, "SELFTEST ring")) {
            rc = -1;
            break;
        }
        double wrong = 0, t = 0;
        char fail[1100] = "";
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
            fprintf(c->out, "# ring %s: allreduce %llu B int32 sum FAILED: %s\n", order, (unsigned long long)o->ring_bytes,
                    fail);
            break; /* the engine's state after a failed collective would blame the next rings */
        }
        fprintf(c->out, "# ring %s: allreduce %llu B int32 sum, #wrong %.0f, %.1f us\n", order,
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

static int bu_write_json(FILE *json, const char *path, const bu_ctl *c, const bu_opts *o, const bu_expect *x,
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

int rs_bringup_cmd(int argc, char **argv, FILE *out, FILE *err)
{
    bu_opts o;
    int rc = bu_parse_args(argc, argv, &o, out, err);
    if (rc >= 0)
        return rc;
    bu_ctl c;
    memset(&c, 0, sizeof c);
    c.out = out;
    c.err = err;
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
    c.ag = calloc((size_t)c.n, sizeof *c.ag);
    cJSON *end_replies = cJSON_CreateArray(), *rings_json = cJSON_CreateArray();
    if (!L || !c.ag || !end_replies || !rings_json)
        goto out;
    for (int p = 0; p < x.npairs; p++)
        for (int d = 0; d < 2; d++) {
            L[2 * p + d].src = x.pairs[p][d];
            L[2 * p + d].dst = x.pairs[p][1 - d];
        }

    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = bu_on_signal; /* no SA_RESTART: zmq_poll returns EINTR */
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    fprintf(out, "# ringsim bringup: %d agents%s, expected topology %s: %d ranks, %d link%s (%d directed)\n", c.n,
            o.table_path ? " (rank table)"
            : o.agent_backend && !strcmp(o.agent_backend, "mmio") ? " (spawned, emulated boards: mmio, links over ipc)"
                                                                   : " (spawned, zmq over ipc)", x.desc, x.nranks, x.npairs,
            x.npairs == 1 ? "" : "s", nlinks);
    fflush(out);
    status = bu_start(&c, &o, faults);
    if (status >= 0)
        goto stop;
    status = BU_EXIT_INTERRUPTED;
    /* 1. every directed link, one at a time (a link's bandwidth is its own), between begin and end */
    char req[256];
    snprintf(req, sizeof req, "{\"test\":\"begin\",\"bytes\":%llu,\"slot\":%llu,\"seed\":%ld}",
             (unsigned long long)o.bytes, (unsigned long long)o.slot, o.seed);
    rc = bu_all(&c, req, 30, "SELFTEST begin");
    if (rc)
        goto stop_rc;
    for (int i = 0; i < nlinks; i++)
        if (bu_stop || bu_test_link(&c, &o, &L[i]))
            goto stop;
    if (bu_end_all(&c, &o, L, nlinks, end_replies))
        goto stop;
    /* 2. verdicts, 3. rings over the links, 4. the report */
    double median = bu_judge(&o, L, nlinks, end_replies);
    bu_ring_stats rs;
    if (bu_rings(&c, &o, L, nlinks, rings_json, &rs))
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
    status = rc < 0 ? BU_EXIT_INTERRUPTED : BU_EXIT_BAD;
stop:
    if (status == BU_EXIT_INTERRUPTED)
        fprintf(err, "ringsim bringup: interrupted: stopping the agents\n");
    if (c.ctx && (c.procs.spawned || o.shutdown_remote) && status != BU_EXIT_INTERRUPTED) {
        for (int r = 0; r < c.n; r++)
            if (!c.ag[r].lost)
                bu_send(&c, r, NCL_WIRE_SHUTDOWN, "{}");
        bu_gather(&c, 3.0, "SHUTDOWN");
    }
    bu_stop_agents(&c, status == BU_EXIT_INTERRUPTED ? 0.2 : 3.0);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
out:
    for (int r = 0; c.ag && r < c.n; r++) {
        if (c.ag[r].req)
            zmq_close(c.ag[r].req);
        cJSON_Delete(c.ag[r].reply);
    }
    if (c.ctx)
        zmq_ctx_term(c.ctx);
    for (int i = 0; L && i < nlinks; i++) {
        cJSON_Delete(L[i].src_reply);
        cJSON_Delete(L[i].dst_reply);
    }
    cJSON_Delete(end_replies);
    cJSON_Delete(rings_json);
    free(L);
    free(c.ag);
early:
    if (json)
        fclose(json);
    free(faults);
    free(x.pairs);
    rs_ranktable_free(&c.table);
    return status;
}
