/* rs_zmqrun.c — `ringsim run --backend zmq`: spawns or reaches the agents, runs the workload, gathers the table. */
#define _POSIX_C_SOURCE 200809L
#include "rs_zmqrun.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "ncl/ncl.h"
#include "ncl/ncl_diag.h"
#include "ncl/ncl_names.h"
#include "ncl/ncl_wire.h"
#include "sweep/rs_shape.h"
#include "sweep/rs_sweep.h"
#include "rs_ctl.h"
#include "rs_ranktable.h"
#include "rs_state_json.h"
#include "report/rs_report.h"
#include "scenario/rs_scenario.h"

#define ZR_MAX_SIZES 4096 /* what an agent takes in one RUN */
#define ZR_MAX_REPLY (64u << 20)
/* Local agents form a full mesh (N-1 connections each): beyond this one host thrashes. */
#define ZR_MAX_LOCAL 128

static double zr_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double zr_num(const cJSON *o, const char *key);

/* After a failed collective: every agent's engine state (STATE), joined into the wait-for report
 * (ncl_diag_report) that names the first unsatisfied edge. Only when every agent is there to
 * answer: a dead agent is already named, and its missing state would mislead the report. */
static void zr_hang_report(rs_ctl *z)
{
    for (int r = 0; r < z->n; r++)
        if (z->ag[r].lost) {
            fprintf(z->err, "ringsim: no wait-for report: agent rank %d is gone\n", r);
            return;
        }
    if (rs_ctl_all(z, NCL_WIRE_STATE, NULL, 3.0, "STATE") != 0)
        return;
    ncl_rank_state *st = calloc((size_t)z->n, sizeof *st);
    if (!st)
        return;
    int complete = 1;
    for (int r = 0; r < z->n && complete; r++)
        complete = rs_state_from_json(z->ag[r].reply, r, &st[r]) == 0;
    if (complete) {
        size_t cap = 4096 + (size_t)z->n * 256;
        char *text = malloc(cap);
        if (text) {
            ncl_diag_report(st, z->n, text, cap);
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

/* One collective's table: RUN on every agent, rows merged (time: slowest rank, #wrong: summed). */
static int zr_run_coll(rs_ctl *z, const rs_sweep *o, const uint64_t *sizes, size_t ns, rs_coll coll, ncl_dtype dt,
                       ncl_op op, rs_report *rep, FILE *out)
{
    ncl_algo algo =
        o->algo != NCL_ALGO_AUTO && ncl_algo_supported(rs_coll_engine(coll), o->algo) ? o->algo : NCL_ALGO_AUTO;
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "coll", rs_coll_name(coll));
    if (coll == RS_COLL_ALLTOALLV)
        cJSON_AddNumberToObject(req, "skew", o->a2av_skew);
    cJSON_AddStringToObject(req, "algo", ncl_algo_name(algo));
    cJSON_AddStringToObject(req, "dtype", ncl_dtype_name(dt));
    cJSON_AddStringToObject(req, "op", ncl_op_name(op));
    cJSON_AddNumberToObject(req, "root", o->root);
    cJSON *sz = cJSON_AddArrayToObject(req, "sizes");
    for (size_t i = 0; i < ns; i++)
        cJSON_AddItemToArray(sz, cJSON_CreateNumber((double)sizes[i]));
    cJSON_AddNumberToObject(req, "iters", o->iters);
    cJSON_AddNumberToObject(req, "warmup", o->warmup_iters);
    cJSON_AddNumberToObject(req, "check", o->check);
    cJSON_AddNumberToObject(req, "seed", (double)(o->seed & ((1ull << 53) - 1)));
    char *json = cJSON_PrintUnformatted(req);
    cJSON_Delete(req);
    int interrupted = rs_ctl_all(z, NCL_WIRE_RUN, json, 0, rs_coll_name(coll));
    free(json);

    /* Rows every rank reported, in order. */
    int nrows = -1;
    for (int r = 0; r < z->n; r++) {
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
    double factor = rs_report_bus_factor(coll, z->n);
    for (int i = 0; i < nrows; i++) {
        rs_row row;
        memset(&row, 0, sizeof row);
        const cJSON *r0 = cJSON_GetArrayItem(rows0, i);
        row.coll = coll;
        row.dtype = dt;
        row.op = op;
        row.has_op = rs_shape_reduces(coll);
        row.root = rs_shape_rooted(coll) ? o->root : -1;
        row.size = (uint64_t)zr_num(r0, "size");
        row.count = (uint64_t)zr_num(r0, "count");
        const cJSON *an = cJSON_GetObjectItemCaseSensitive(r0, "algo");
        if (!cJSON_IsString(an) || ncl_algo_parse(an->valuestring, &row.algo) != 0)
            row.algo = NCL_ALGO_AUTO;
        row.memcpy_gbps = -1;
        for (int pl = 0; pl < 2; pl++) {
            double t = 0, w = 0;
            int not_run = 0; /* an agent's time < 0: a placement the collective does not run (sendrecv in place) */
            for (int r = 0; r < z->n; r++) {
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
                not_run |= tr < 0;
                t = tr > t ? tr : t;
            }
            row.res[pl].time_us = not_run ? -1 : t;
            row.res[pl].algbw = t > 0 ? (double)row.size / t / 1e3 : 0.0;
            row.res[pl].busbw = row.res[pl].algbw * factor;
            row.res[pl].wrong = (uint64_t)w;
        }
        rs_report_row(rep, &row);
    }
    int failed = rs_ctl_any_failed(z);
    uint64_t wrong = rs_report_table_end(rep, failed || interrupted);
    fflush(out);
    if (interrupted)
        return RS_CTL_EXIT_INTERRUPTED;
    if (failed) {
        rs_ctl_print_failures(z);
        zr_hang_report(z);
        rs_ctl_print_failures(z);
        rs_report_set_error(rep, "engine error (see stderr)");
        return RS_EXIT_ENGINE;
    }
    return wrong ? RS_EXIT_WRONG : RS_EXIT_OK;
}

/* ---- the run ---------------------------------------------------------------------------------- */

int rs_zmqrun(const rs_zmqrun_config *cfg, const rs_sweep *sweep, const char *json_path, FILE *out, FILE *err)
{
    const char *table_path = cfg->table_path, *agent_backend = cfg->agent_backend;
    int ranks_given = cfg->ranks_given, status = RS_EXIT_OK;
    rs_sweep o = *sweep;
    rs_ctl z;
    memset(&z, 0, sizeof z);
    z.who = "ringsim";
    z.err = err;
    z.max_reply = ZR_MAX_REPLY;
    if (table_path) {
        char e[RS_RT_ERRLEN];
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
    int mmio = !strcmp(agent_backend, "mmio");
    FILE *json = NULL;
    if (!table_path && o.nranks > ZR_MAX_LOCAL) {
        fprintf(err, "ringsim: --ranks: %d local agents are too many for one host (allowed: 1..%d%s; or a rank "
                "table of agents on several hosts)\n", o.nranks, ZR_MAX_LOCAL,
                cfg->scenario && !ranks_given ? ", the scenario's rank count: give --ranks N to run its workload on fewer"
                                              : "");
        goto usage;
    }
    if (mmio && table_path) {
        fprintf(err, "ringsim: --agent-backend mmio: only for agents this controller spawns (allowed: leave it out "
                "with --ranktable: those agents run the backend they were started with)\n");
        goto usage;
    }
    /* the emulated board's limits, refused here rather than answered with a wrong result */
    if (mmio && (o.nranks > 4 || o.maxbytes > (24ull << 20))) {
        fprintf(err, "ringsim: --agent-backend mmio: %d ranks, -e %llu: %s\n", o.nranks, (unsigned long long)o.maxbytes,
                o.nranks > 4 ? "ranks (allowed: 1..4: the block's 128 notify counters give each peer 128 / ranks "
                               "notify ids, the engine needs 32)"
                             : "sizes (allowed: -e up to 24M: send and receive buffers share the board's 56 MiB of "
                               "device memory for buffers)");
        goto usage;
    }
    if (o.root >= o.nranks) {
        fprintf(err, "ringsim: root %d is out of range (allowed: 0..%d with %d ranks)\n", o.root, o.nranks - 1, o.nranks);
        goto usage;
    }
    uint64_t *sizes = NULL;
    size_t nsizes = 0;
    char why[300];
    if (rs_sweep_sizes(&o, ZR_MAX_SIZES, &sizes, &nsizes, why, sizeof why) != 0) {
        fprintf(err, "ringsim: %s\n", why);
        goto usage;
    }
    if (json_path && !(json = fopen(json_path, "w"))) {
        fprintf(err, "ringsim: --json: cannot write '%s': %s\n", json_path, strerror(errno));
        free(sizes);
        goto usage;
    }
    z.n = o.nranks;
    z.grace_s = 2.0 * (o.timeout_s > 0 ? o.timeout_s : 30.0) + 5.0;

    if (cfg->scenario) {
        char summary[256];
        rs_scenario_summary(cfg->scenario, summary, sizeof summary);
        fprintf(out, "# scenario %s: %s\n", cfg->scenario->name, summary);
        fprintf(out, "# zmq backend: %d agent processes; the scenario's topology, device and fault keys are ignored "
                "(the processes' real transport is the topology)\n", o.nranks);
    }
    rs_ctl_opts co = {.spawn = !table_path, .connect_s = cfg->connect_s,
                      .timeout_s = o.timeout_s > 0 ? o.timeout_s : 30.0, .channels = o.channels,
                      .backend = agent_backend, .job_prefix = ""};
    rs_report *rep = NULL;
    int rc = rs_ctl_start(&z, &co);
    if (rc >= 0) {
        status = rc;
        goto out;
    }
    rep = rs_report_create(&o, out, json != NULL || cfg->junit_path != NULL);
    if (!rep) {
        status = RS_EXIT_USAGE;
        goto out;
    }
    double run_t0 = zr_now();
    for (int c = 0; c < o.ncolls && status != RS_EXIT_ENGINE && status != RS_CTL_EXIT_INTERRUPTED; c++)
        for (int d = 0; d < o.ndtypes && status != RS_EXIT_ENGINE && status != RS_CTL_EXIT_INTERRUPTED; d++)
            for (int k = 0; k < (rs_shape_reduces(o.colls[c]) ? o.nops : 1); k++) {
                int s = zr_run_coll(&z, &o, sizes, nsizes, o.colls[c], o.dtypes[d],
                                    rs_shape_reduces(o.colls[c]) ? o.ops[k] : NCL_SUM, rep, out);
                if (s > status || s == RS_CTL_EXIT_INTERRUPTED)
                    status = s;
                if (status == RS_EXIT_ENGINE || status == RS_CTL_EXIT_INTERRUPTED)
                    break;
            }
    if (mmio && (status == RS_EXIT_OK || status == RS_EXIT_WRONG)) {
        /* what the emulated boards cost: the blocks' clock cycles (STATE) against the wall time */
        double wall = zr_now() - run_t0, cycles = 0;
        if (rs_ctl_all(&z, NCL_WIRE_STATE, NULL, 5.0, "STATE") == 0 && !rs_ctl_any_failed(&z)) {
            for (int r = 0; r < z.n; r++)
                cycles += zr_num(z.ag[r].reply, "cycles");
            fprintf(out, "# emulated boards (mmio): %d blocks clocked %.1f M cycles in %.2f s: %.2f M cycles/s per "
                    "block, %.2f M for all\n", z.n, cycles * 1e-6, wall, cycles * 1e-6 / wall / z.n,
                    cycles * 1e-6 / wall);
        }
    }
    if (status == RS_EXIT_WRONG)
        fprintf(err, "ringsim: run: some results were wrong (see #wrong)\n");
    if (status != RS_EXIT_OK && status != RS_EXIT_WRONG)
        rs_report_set_error(rep, "the run failed: see its messages on stderr");
    if (json) {
        if (rs_report_write_json(rep, json, json_path, err) != 0 && status == RS_EXIT_OK)
            status = RS_EXIT_USAGE;
        json = NULL;
    }
    if (cfg->junit_path && rs_report_write_junit(rep, cfg->junit_path, err) != 0 && status == RS_EXIT_OK)
        status = RS_EXIT_USAGE;
out:
    rs_report_destroy(rep);
    if (status == RS_CTL_EXIT_INTERRUPTED)
        fprintf(err, "ringsim: interrupted: stopping the agents\n");
    rs_ctl_finish(&z, cfg->shutdown_remote, status == RS_CTL_EXIT_INTERRUPTED);
    if (json)
        fclose(json);
    free(sizes);
    return status;
usage:
    rs_ranktable_free(&z.table);
    return RS_EXIT_USAGE;
}
