/* rs_zmqrun.c — `ringsim run --backend zmq`: spawns or reaches the agents, runs the workload, gathers the table. */
#define _GNU_SOURCE
#include "rs_zmqrun.h"
#include "rs_agents.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include <cjson/cJSON.h>

#include "ncl/ncl.h"
#include "ncl/ncl_diag.h"
#include "ncl/ncl_wire.h"
#include "sweep/rs_sweep.h"
#include "rs_ranktable.h"
#include "report/rs_report.h"
#include "scenario/rs_scenario.h"

#define ZR_MAX_SIZES 4096
#define ZR_MAX_REPLY (64u << 20)
#define ZR_EXIT_INTERRUPTED 130
/* Local agents form a full mesh (N-1 connections each): beyond this one host thrashes. */
#define ZR_MAX_LOCAL 128

static volatile sig_atomic_t zr_stop;

static void zr_on_signal(int sig)
{
    (void)sig;
    zr_stop = 1;
}

typedef struct zr_agent {
    void *req;
    pid_t pid;          /* 0: not ours (rank table) */
    int exited;         /* reaped */
    int waiting;        /* a request is out, no reply yet */
    int failed;         /* replied with an error, died or never answered */
    int busy;           /* its REQ socket waits for a reply it will never get: it cannot send */
    uint64_t seq;
    cJSON *reply;       /* the last JSON reply */
    char error[1600];
} zr_agent;

typedef struct zr {
    int nranks;
    rs_ranktable table;
    rs_agents procs;    /* spawned agents' process group */
    zr_agent *ag;
    void *ctx;
    double grace_s;     /* how long to wait for the rest once one agent failed */
    int shutting;       /* SHUTDOWN is out: a clean exit is the expected answer */
    const char *agent_backend; /* spawned agents' --backend: "zmq" or "mmio" (emulated boards) */
    FILE *out, *err;
} zr;

static double zr_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- agents: spawn, reap, stop ------------------------------------------------------------------ */

/* Reaps agents that exited and says so once. Returns how many are still running. */
static int zr_reap(zr *z)
{
    int running = 0;
    for (int r = 0; r < z->nranks; r++) {
        zr_agent *a = &z->ag[r];
        if (!a->pid || a->exited)
            continue;
        int st = 0;
        pid_t p = waitpid(a->pid, &st, WNOHANG);
        if (p == a->pid) {
            a->exited = 1;
            if (WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st) != 0) || (a->waiting && !z->shutting)) {
                a->failed = 1;
                a->waiting = 0;
                if (!a->error[0] || WIFSIGNALED(st))
                    snprintf(a->error, sizeof a->error, "agent rank %d (pid %d) %s %d%s", r, (int)a->pid,
                             WIFSIGNALED(st) ? "was killed by signal" : "exited with status",
                             WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st),
                             WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL ? " (SIGKILL)" : "");
            }
        } else {
            running++;
        }
    }
    return running;
}

static int zr_spawn(zr *z, const char *job, const rs_sweep *o, double connect_s)
{
    char nbuf[16], tbuf[32], cbuf[32], chbuf[16];
    snprintf(nbuf, sizeof nbuf, "%d", z->nranks);
    snprintf(tbuf, sizeof tbuf, "%.3f", o->timeout_s > 0 ? o->timeout_s : 30.0);
    snprintf(cbuf, sizeof cbuf, "%.3f", connect_s);
    snprintf(chbuf, sizeof chbuf, "%u", o->channels);
    for (int r = 0; r < z->nranks; r++) {
        char rbuf[16];
        snprintf(rbuf, sizeof rbuf, "%d", r);
        char *args[] = {"ringsim", "agent", "--quiet", "--ranks", nbuf, "--rank", rbuf, "--job", (char *)job,
                        "--timeout", tbuf, "--connect-timeout", cbuf, "--channels", chbuf,
                        "--backend", (char *)z->agent_backend, NULL};
        pid_t pid = rs_agents_start(&z->procs, args);
        if (pid < 0) {
            fprintf(z->err, "ringsim: cannot start agent rank %d: %s\n", r, strerror(errno));
            return -1;
        }
        z->ag[r].pid = pid;
    }
    z->procs.spawned = 1;
    return 0;
}

static int zr_reap_cb(void *ctx) { return zr_reap(ctx); }

static pid_t zr_alive(void *ctx, int r)
{
    const zr *z = ctx;
    return z->ag[r].exited ? 0 : z->ag[r].pid;
}

/* Ends every spawned agent: they had SHUTDOWN (or not); then SIGTERM, then SIGKILL, and waits for all. */
static void zr_stop_agents(zr *z, double grace_s)
{
    rs_agents_stop(&z->procs, z->nranks, grace_s, zr_reap_cb, zr_alive, z);
}

/* ---- requests and replies ----------------------------------------------------------------------- */

static int zr_send(zr *z, int r, uint8_t cmd, const char *json)
{
    zr_agent *a = &z->ag[r];
    ncl_wire_msg m;
    memset(&m, 0, sizeof m);
    m.command = cmd;
    m.seq = ++a->seq;
    m.src = NCL_WIRE_RANK_NONE;
    m.dst = (uint32_t)r;
    if (cmd == NCL_WIRE_HELLO) {
        m.hello.min_version = m.hello.max_version = NCL_WIRE_VERSION;
        m.hello.max_payload = ZR_MAX_REPLY;
        m.hello.nranks = (uint32_t)z->nranks;
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
        a->failed = 1;
        snprintf(a->error, sizeof a->error, "agent rank %d: cannot send %s: %s", r, ncl_wire_cmd_name(cmd),
                 zmq_strerror(errno));
        return -1;
    }
    cJSON_Delete(a->reply);
    a->reply = NULL;
    a->waiting = 1;
    return 0;
}

static void zr_take_reply(zr *z, int r, uint8_t cmd)
{
    zr_agent *a = &z->ag[r];
    zmq_msg_t f;
    zmq_msg_init(&f);
    if (zmq_msg_recv(&f, a->req, ZMQ_DONTWAIT) < 0) {
        zmq_msg_close(&f);
        return;
    }
    a->waiting = 0;
    ncl_wire_msg m;
    char why[300];
    ncl_wire_limits lim = {ZR_MAX_REPLY, (uint32_t)z->nranks, NCL_WIRE_RANK_NONE, NCL_WIRE_VERSION, NCL_WIRE_VERSION};
    ncl_wire_result wr = ncl_wire_decode(zmq_msg_data(&f), zmq_msg_size(&f), &lim, &m, why, sizeof why);
    if (wr != NCL_WIRE_OK) {
        a->failed = 1;
        snprintf(a->error, sizeof a->error, "agent rank %d: reply rejected: %s: %s", r, ncl_wire_result_name(wr), why);
    } else if (m.command == NCL_WIRE_ERROR) {
        a->failed = 1;
        snprintf(a->error, sizeof a->error, "%.*s", (int)m.payload_len, (const char *)m.payload);
    } else if (m.command != (cmd == NCL_WIRE_HELLO ? NCL_WIRE_HELLO_ACK : cmd) || m.seq != a->seq ||
               m.src != (uint32_t)r) {
        a->failed = 1;
        snprintf(a->error, sizeof a->error, "agent rank %d: answered %s #%llu from rank %u to %s #%llu (miswired table?)",
                 r, ncl_wire_cmd_name(m.command), (unsigned long long)m.seq, (unsigned)m.src, ncl_wire_cmd_name(cmd),
                 (unsigned long long)a->seq);
    } else if (cmd != NCL_WIRE_HELLO) {
        a->reply = cJSON_ParseWithLength((const char *)m.payload, m.payload_len);
        const cJSON *ok = a->reply ? cJSON_GetObjectItemCaseSensitive(a->reply, "ok") : NULL;
        const cJSON *e = a->reply ? cJSON_GetObjectItemCaseSensitive(a->reply, "error") : NULL;
        if (!a->reply) {
            a->failed = 1;
            snprintf(a->error, sizeof a->error, "agent rank %d: the reply is not JSON", r);
        } else if (cJSON_IsFalse(ok)) {
            a->failed = 1;
            snprintf(a->error, sizeof a->error, "%s", cJSON_IsString(e) ? e->valuestring : "failed");
        }
    }
    zmq_msg_close(&f);
}

/* Sends cmd to every agent that can take it and waits for the replies: until all answered, or
 * (limit_s) passed, or grace_s after the first failure. Returns 0, or -1 if interrupted. */
static int zr_gather(zr *z, uint8_t cmd, const char *json, double limit_s, const char *what)
{
    for (int r = 0; r < z->nranks; r++)
        if (!z->ag[r].busy && !z->ag[r].exited && (!z->ag[r].failed || cmd != NCL_WIRE_RUN))
            zr_send(z, r, cmd, json);
    double t0 = zr_now(), t_fail = 0;
    zmq_pollitem_t *items = calloc((size_t)z->nranks, sizeof *items);
    int *idx = calloc((size_t)z->nranks, sizeof *idx);
    int rc = 0;
    for (;;) {
        zr_reap(z);
        int n = 0, any_failed = 0;
        for (int r = 0; r < z->nranks; r++) {
            any_failed |= z->ag[r].failed;
            if (z->ag[r].waiting) {
                items[n].socket = z->ag[r].req;
                items[n].events = ZMQ_POLLIN;
                items[n].revents = 0;
                idx[n++] = r;
            }
        }
        if (n == 0)
            break;
        if (zr_stop) {
            rc = -1;
            break;
        }
        double now = zr_now();
        if (any_failed && t_fail == 0)
            t_fail = now;
        if ((limit_s > 0 && now - t0 > limit_s) || (t_fail > 0 && now - t_fail > z->grace_s)) {
            for (int k = 0; k < n; k++) {
                zr_agent *a = &z->ag[idx[k]];
                a->failed = 1;
                a->waiting = 0;
                a->busy = 1;
                if (!a->error[0])
                    snprintf(a->error, sizeof a->error, "agent rank %d (%s): no answer to %s within %.1f s%s", idx[k],
                             z->table.e[idx[k]].control, what, now - t0,
                             a->pid ? "" : " (is it running? started with the same rank table?)");
            }
            break;
        }
        if (zmq_poll(items, n, 100) > 0)
            for (int k = 0; k < n; k++)
                if (items[k].revents & ZMQ_POLLIN)
                    zr_take_reply(z, idx[k], cmd);
    }
    free(items);
    free(idx);
    return rc;
}

static int zr_any_failed(const zr *z)
{
    for (int r = 0; r < z->nranks; r++)
        if (z->ag[r].failed)
            return 1;
    return 0;
}

static void zr_print_failures(zr *z)
{
    for (int r = 0; r < z->nranks; r++)
        if (z->ag[r].failed && z->ag[r].error[0]) {
            fprintf(z->err, "ringsim: %s\n", z->ag[r].error);
            z->ag[r].error[0] = '\0'; /* once */
        }
}

static double zr_num(const cJSON *o, const char *key);

/* After a failed collective: every agent's engine state (STATE), joined into the wait-for report
 * (ncl_diag_report) that names the first unsatisfied edge. Only when every agent is there to
 * answer: a dead agent is already named, and its missing state would mislead the report. */
static void zr_hang_report(zr *z)
{
    for (int r = 0; r < z->nranks; r++)
        if (z->ag[r].exited || z->ag[r].busy) {
            fprintf(z->err, "ringsim: no wait-for report: agent rank %d is gone\n", r);
            return;
        }
    if (zr_gather(z, NCL_WIRE_STATE, NULL, 3.0, "STATE") != 0)
        return;
    ncl_rank_state *st = calloc((size_t)z->nranks, sizeof *st);
    if (!st)
        return;
    int complete = 1;
    for (int r = 0; r < z->nranks; r++) {
        const cJSON *c = z->ag[r].reply ? cJSON_GetObjectItemCaseSensitive(z->ag[r].reply, "comm") : NULL;
        if (!cJSON_IsObject(c)) {
            complete = 0;
            break;
        }
        st[r].rank = r;
        st[r].seq = (uint64_t)zr_num(c, "seq");
        st[r].coll = (uint8_t)zr_num(c, "coll");
        st[r].algo = (uint8_t)zr_num(c, "algo");
        st[r].phase = (uint8_t)zr_num(c, "phase");
        st[r].result = (int32_t)zr_num(c, "result");
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(c, "waits");
        for (const cJSON *x = cJSON_IsArray(w) ? w->child : NULL; x && st[r].nwaits < NCL_MAX_QUEUES; x = x->next) {
            ncl_wait_info *wi = &st[r].waits[st[r].nwaits++];
            wi->queue = (uint32_t)zr_num(x, "queue");
            wi->step = (uint32_t)zr_num(x, "step");
            wi->task = (uint32_t)zr_num(x, "task");
            wi->kind = (uint8_t)zr_num(x, "kind");
            wi->peer = (int32_t)zr_num(x, "peer");
            wi->notify = (uint32_t)zr_num(x, "notify");
            wi->count = (uint32_t)zr_num(x, "count");
            wi->waited_ns = (uint64_t)zr_num(x, "waited_ns");
        }
    }
    if (complete) {
        size_t cap = 4096 + (size_t)z->nranks * 256;
        char *text = malloc(cap);
        if (text) {
            ncl_diag_report(st, z->nranks, text, cap);
            fprintf(z->err, "ringsim: wait-for report (every agent's engine state):\n%s%s", text,
                    text[0] && text[strlen(text) - 1] != '\n' ? "\n" : "");
            free(text);
        }
    } else {
        fprintf(z->err, "ringsim: no wait-for report: not every agent answered STATE\n");
    }
    free(st);
}

/* ---- the workload ------------------------------------------------------------------------------ */

static int zr_sizes(const rs_sweep *o, uint64_t *s, int cap)
{
    int k = 0;
    uint64_t size = o->minbytes;
    while (k < cap) {
        s[k++] = size;
        if (!rs_sweep_next_size(o, size, &size))
            break;
    }
    return k;
}

/* A number from an agent's JSON (0 when missing: a reply is checked, never trusted). */
static double zr_num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : 0.0;
}

static double zr_num_at(const cJSON *o, const char *key, int i)
{
    const cJSON *v = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o, key), i);
    return cJSON_IsNumber(v) ? v->valuedouble : 0.0;
}

static int zr_is_reducing(ncl_coll c)
{
    return c == NCL_COLL_ALLREDUCE || c == NCL_COLL_REDUCE || c == NCL_COLL_REDUCE_SCATTER;
}

/* One collective's table: RUN on every agent, rows merged (time: slowest rank, #wrong: summed). */
static int zr_run_coll(zr *z, const rs_sweep *o, ncl_coll coll, ncl_dtype dt, ncl_op op, rs_report *rep)
{
    static uint64_t sizes[ZR_MAX_SIZES];
    int ns = zr_sizes(o, sizes, ZR_MAX_SIZES);
    ncl_algo algo = o->algo != NCL_ALGO_AUTO && ncl_algo_supported(coll, o->algo) ? o->algo : NCL_ALGO_AUTO;
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "coll", ncl_coll_name(coll));
    cJSON_AddStringToObject(req, "algo", ncl_algo_name(algo));
    cJSON_AddStringToObject(req, "dtype", ncl_dtype_name(dt));
    cJSON_AddStringToObject(req, "op", ncl_op_name(op));
    cJSON_AddNumberToObject(req, "root", o->root);
    cJSON *sz = cJSON_AddArrayToObject(req, "sizes");
    for (int i = 0; i < ns; i++)
        cJSON_AddItemToArray(sz, cJSON_CreateNumber((double)sizes[i]));
    cJSON_AddNumberToObject(req, "iters", o->iters);
    cJSON_AddNumberToObject(req, "warmup", o->warmup_iters);
    cJSON_AddNumberToObject(req, "check", o->check);
    cJSON_AddNumberToObject(req, "seed", (double)(o->seed & ((1ull << 53) - 1)));
    char *json = cJSON_PrintUnformatted(req);
    cJSON_Delete(req);
    int interrupted = zr_gather(z, NCL_WIRE_RUN, json, 0, ncl_coll_name(coll));
    free(json);

    /* Rows every rank reported, in order. */
    int nrows = -1;
    for (int r = 0; r < z->nranks; r++) {
        const cJSON *rows = z->ag[r].reply ? cJSON_GetObjectItemCaseSensitive(z->ag[r].reply, "rows") : NULL;
        int n = cJSON_IsArray(rows) ? cJSON_GetArraySize(rows) : 0;
        if (nrows < 0 || n < nrows)
            nrows = n;
    }
    const cJSON *rows0 = z->ag[0].reply ? cJSON_GetObjectItemCaseSensitive(z->ag[0].reply, "rows") : NULL;
    char desc[160];
    if (algo != NCL_ALGO_AUTO) {
        snprintf(desc, sizeof desc, "%s", ncl_algo_name(algo));
    } else {
        char picks[96] = "";
        size_t n = 0;
        for (int i = 0; i < nrows && n < sizeof picks - 16; i++) {
            const cJSON *a = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(rows0, i), "algo");
            if (cJSON_IsString(a) && !strstr(picks, a->valuestring))
                n += (size_t)snprintf(picks + n, sizeof picks - n, "%s%s", n ? ", " : "", a->valuestring);
        }
        snprintf(desc, sizeof desc, n ? "auto (%s)" : "auto", picks);
    }
    rs_report_table_begin(rep, coll, desc);
    double factor = rs_report_bus_factor(coll, z->nranks);
    for (int i = 0; i < nrows; i++) {
        rs_row row;
        memset(&row, 0, sizeof row);
        const cJSON *r0 = cJSON_GetArrayItem(rows0, i);
        row.coll = coll;
        row.dtype = dt;
        row.op = op;
        row.has_op = zr_is_reducing(coll);
        row.root = coll == NCL_COLL_BROADCAST || coll == NCL_COLL_REDUCE ? o->root : -1;
        row.size = (uint64_t)zr_num(r0, "size");
        row.count = (uint64_t)zr_num(r0, "count");
        const cJSON *an = cJSON_GetObjectItemCaseSensitive(r0, "algo");
        row.algo = NCL_ALGO_AUTO;
        for (int k = 0; cJSON_IsString(an) && k < NCL_ALGO_COUNT; k++)
            if (!strcmp(an->valuestring, ncl_algo_name((ncl_algo)k)))
                row.algo = (ncl_algo)k;
        row.memcpy_gbps = -1;
        for (int pl = 0; pl < 2; pl++) {
            double t = 0, w = 0;
            for (int r = 0; r < z->nranks; r++) {
                const cJSON *x = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(z->ag[r].reply, "rows"), i);
                double tr = zr_num_at(x, "time_us", pl);
                w += zr_num_at(x, "wrong", pl);
                if (zr_num(x, "size") != (double)row.size) {
                    w += 1; /* the ranks disagree on the row: never report it as correct */
                    if (!z->ag[r].failed)
                        snprintf(z->ag[r].error, sizeof z->ag[r].error, "agent rank %d: row %d is %.0f B, rank 0's is "
                                 "%llu B", r, i, zr_num(x, "size"), (unsigned long long)row.size);
                    z->ag[r].failed = 1;
                }
                t = tr > t ? tr : t;
            }
            row.res[pl].time_us = t;
            row.res[pl].algbw = t > 0 ? (double)row.size / t / 1e3 : 0.0;
            row.res[pl].busbw = row.res[pl].algbw * factor;
            row.res[pl].wrong = (uint64_t)w;
        }
        rs_report_row(rep, &row);
    }
    int failed = zr_any_failed(z);
    uint64_t wrong = rs_report_table_end(rep, failed || interrupted);
    fflush(z->out);
    if (interrupted)
        return ZR_EXIT_INTERRUPTED;
    if (failed) {
        zr_print_failures(z);
        zr_hang_report(z);
        zr_print_failures(z);
        rs_report_set_error(rep, "engine error (see stderr)");
        return RS_EXIT_ENGINE;
    }
    return wrong ? RS_EXIT_WRONG : RS_EXIT_OK;
}

/* ---- the run ---------------------------------------------------------------------------------- */

int rs_zmqrun(const rs_zmqrun_config *cfg, const rs_sweep *sweep, const char *json_path, FILE *out, FILE *err)
{
    const char *table_path = cfg->table_path, *agent_backend = cfg->agent_backend;
    const rs_scenario *sc = cfg->scenario;
    int ranks_given = cfg->ranks_given, status = RS_EXIT_OK;
    double connect_s = cfg->connect_s;
    rs_sweep o = *sweep;
    char e[RS_RT_ERRLEN] = "";
    zr z;
    memset(&z, 0, sizeof z);
    z.out = out;
    z.err = err;
    if (table_path) {
        if (rs_ranktable_load(table_path, &z.table, e, sizeof e)) {
            fprintf(err, "%s\n", e);
            return RS_EXIT_USAGE;
        }
        if (ranks_given && o.nranks != z.table.nranks) {
            fprintf(err, "ringsim: --ranks %d but %s lists %d ranks (allowed: leave --ranks out with a rank table)\n",
                    o.nranks, table_path, z.table.nranks);
            rs_ranktable_free(&z.table);
            return RS_EXIT_USAGE;
        }
        o.nranks = z.table.nranks;
    }
    if (!table_path && o.nranks > ZR_MAX_LOCAL) {
        fprintf(err, "ringsim: --ranks: %d local agents are too many for one host (allowed: 1..%d%s; or a rank "
                "table of agents on several hosts)\n", o.nranks, ZR_MAX_LOCAL,
                sc && !ranks_given ? ", the scenario's rank count: give --ranks N to run its workload on fewer" : "");
        return RS_EXIT_USAGE;
    }
    if (!strcmp(agent_backend, "mmio") && table_path) {
        fprintf(err, "ringsim: --agent-backend mmio: only for agents this controller spawns (allowed: leave it out with "
                "--ranktable: those agents run the backend they were started with)\n");
        rs_ranktable_free(&z.table);
        return RS_EXIT_USAGE;
    }
    if (!strcmp(agent_backend, "mmio")) {
        /* the emulated board's limits, refused here rather than answered with a wrong result */
        const char *bad = NULL;
        if (o.nranks > 4)
            bad = "ranks (allowed: 1..4: the block's 128 notify counters give each peer 128 / ranks notify ids, the "
                  "engine needs 32)";
        else if (o.maxbytes > (24ull << 20))
            bad = "sizes (allowed: -e up to 24M: send and receive buffers share the board's 56 MiB of device memory "
                  "for buffers)";
        if (bad) {
            fprintf(err, "ringsim: --agent-backend mmio: %d ranks, -e %llu: %s\n", o.nranks,
                    (unsigned long long)o.maxbytes, bad);
            rs_ranktable_free(&z.table);
            return RS_EXIT_USAGE;
        }
    }
    if (o.root >= o.nranks) {
        fprintf(err, "ringsim: root %d is out of range (allowed: 0..%d with %d ranks)\n", o.root, o.nranks - 1, o.nranks);
        rs_ranktable_free(&z.table);
        return RS_EXIT_USAGE;
    }
    FILE *json = NULL;
    if (json_path && !(json = fopen(json_path, "w"))) {
        fprintf(err, "ringsim: --json: cannot write '%s': %s\n", json_path, strerror(errno));
        rs_ranktable_free(&z.table);
        return RS_EXIT_USAGE;
    }
    z.nranks = o.nranks;
    z.agent_backend = agent_backend;
    z.grace_s = 2.0 * (o.timeout_s > 0 ? o.timeout_s : 30.0) + 5.0;
    z.ag = calloc((size_t)z.nranks, sizeof *z.ag);

    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = zr_on_signal; /* no SA_RESTART: zmq_poll returns EINTR */
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);

    if (sc) {
        char summary[256];
        rs_scenario_summary(sc, summary, sizeof summary);
        fprintf(out, "# scenario %s: %s\n", sc->name, summary);
        fprintf(out, "# zmq backend: %d agent processes; the scenario's topology, device and fault keys are ignored "
                "(the processes' real transport is the topology)\n", o.nranks);
    }
    if (!table_path) {
        char job[RS_RT_JOB_MAX];
        const char *ej = getenv("RINGSIM_JOB");
        snprintf(job, sizeof job, "%s", ej && *ej ? ej : "");
        if (!job[0])
            snprintf(job, sizeof job, "%d", (int)getpid());
        if (rs_ranktable_local(z.nranks, job, &z.table, e, sizeof e) || zr_spawn(&z, job, &o, connect_s)) {
            if (e[0])
                fprintf(err, "ringsim: %s\n", e);
            status = RS_EXIT_USAGE;
            goto out;
        }
    }
    z.ctx = zmq_ctx_new();
    for (int r = 0; r < z.nranks; r++) {
        int zero = 0;
        z.ag[r].req = zmq_socket(z.ctx, ZMQ_REQ);
        zmq_setsockopt(z.ag[r].req, ZMQ_LINGER, &zero, sizeof zero);
        if (zmq_connect(z.ag[r].req, z.table.e[r].control) != 0) {
            fprintf(err, "ringsim: agent rank %d: cannot connect to %s: %s\n", r, z.table.e[r].control,
                    zmq_strerror(errno));
            status = RS_EXIT_USAGE;
            goto out;
        }
    }
    /* Agents answer HELLO once they are connected to all their peers; spawned ones get the
     * same connect timeout for that, plus their start-up. */
    if (zr_gather(&z, NCL_WIRE_HELLO, NULL, z.procs.spawned ? connect_s + 5.0 : connect_s, "HELLO") != 0) {
        status = ZR_EXIT_INTERRUPTED;
        goto out;
    }
    if (zr_any_failed(&z)) {
        fprintf(err, "ringsim: the agents did not all come up:\n");
        zr_print_failures(&z);
        status = RS_EXIT_ENGINE;
        goto out;
    }
    rs_report *rep = rs_report_create(&o, out, json != NULL);
    if (!rep) {
        status = RS_EXIT_USAGE;
        goto out;
    }
    double run_t0 = zr_now();
    for (int c = 0; c < o.ncolls && status != RS_EXIT_ENGINE && status != ZR_EXIT_INTERRUPTED; c++)
        for (int d = 0; d < o.ndtypes && status != RS_EXIT_ENGINE && status != ZR_EXIT_INTERRUPTED; d++)
            for (int k = 0; k < (zr_is_reducing(o.colls[c]) ? o.nops : 1); k++) {
                int s = zr_run_coll(&z, &o, o.colls[c], o.dtypes[d], zr_is_reducing(o.colls[c]) ? o.ops[k] : NCL_SUM,
                                    rep);
                if (s > status || s == ZR_EXIT_INTERRUPTED)
                    status = s;
                if (status == RS_EXIT_ENGINE || status == ZR_EXIT_INTERRUPTED)
                    break;
            }
    if (!strcmp(z.agent_backend, "mmio") && (status == RS_EXIT_OK || status == RS_EXIT_WRONG)) {
        /* what the emulated boards cost: the blocks' clock cycles (STATE) against the wall time */
        double wall = zr_now() - run_t0, cycles = 0;
        if (zr_gather(&z, NCL_WIRE_STATE, NULL, 5.0, "STATE") == 0 && !zr_any_failed(&z)) {
            for (int r = 0; r < z.nranks; r++)
                cycles += zr_num(z.ag[r].reply, "cycles");
            fprintf(out, "# emulated boards (mmio): %d blocks clocked %.1f M cycles in %.2f s: %.2f M cycles/s per "
                    "block, %.2f M for all\n", z.nranks, cycles * 1e-6, wall, cycles * 1e-6 / wall / z.nranks,
                    cycles * 1e-6 / wall);
        }
    }
    if (status == RS_EXIT_WRONG)
        fprintf(err, "ringsim: run: some results were wrong (see #wrong)\n");
    if (json) {
        if (rs_report_write_json(rep, json, json_path, err) != 0 && status == RS_EXIT_OK)
            status = RS_EXIT_USAGE;
        json = NULL;
    }
    rs_report_destroy(rep);
out:
    if (status == ZR_EXIT_INTERRUPTED)
        fprintf(err, "ringsim: interrupted: stopping the agents\n");
    if (z.ctx && (z.procs.spawned || cfg->shutdown_remote) && status != ZR_EXIT_INTERRUPTED) {
        /* Orderly first: agents close their links with BYE and exit 0. One that never answered
         * its last request cannot take another (REQ): SIGTERM stops it below. */
        for (int r = 0; r < z.nranks; r++)
            if (z.ag[r].waiting) {
                z.ag[r].busy = 1;
                z.ag[r].waiting = 0;
            }
        z.shutting = 1;
        z.grace_s = 3.0;
        zr_gather(&z, NCL_WIRE_SHUTDOWN, "{}", 3.0, "SHUTDOWN");
    }
    zr_stop_agents(&z, status == ZR_EXIT_INTERRUPTED ? 0.2 : 3.0);
    if (json)
        fclose(json);
    for (int r = 0; z.ag && r < z.nranks; r++) {
        if (z.ag[r].req)
            zmq_close(z.ag[r].req);
        cJSON_Delete(z.ag[r].reply);
    }
    if (z.ctx)
        zmq_ctx_term(z.ctx);
    free(z.ag);
    rs_ranktable_free(&z.table);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    return status;
}
