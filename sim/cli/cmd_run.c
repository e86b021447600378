/* cmd_run.c — `ringsim run`: a scenario on the model, the flags' sweep on host threads, or either on zmq agents. */
#define _POSIX_C_SOURCE 200809L
#include "rs_cmd.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/rs_simrun.h"
#include "host/rs_bench.h"
#include "report/rs_junit.h"
#include "report/rs_plot.h"
#include "report/rs_report.h"
#include "report/rs_rows.h"
#include "rs_cli.h"
#include "scenario/rs_scenario.h"
#include "zmq/rs_zmqrun.h"

static const char rs_scenario_opts[] =
    "--json FILE, --junit FILE, --stats, --csv FILE, --trace FILE, --trace-max N, --plot FILE, --links N|all|none, "
    "--waves FILE (RTL devices), --chakra PREFIX [--chakra-groups FILE], and for a training scenario --fusion SPEC, "
    "--micro-batch N";

/* Opens an output file before the run: a bad path should fail before a long run, not after. */
static FILE *rs_open_out(const char *flag, const char *path)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        fprintf(stderr, "ringsim: %s: cannot write '%s': %s\n", flag, path, strerror(errno));
    return f;
}

/* `ringsim run SCENARIO [options]`: the scenario's workload on the model. */
int rs_cmd_run_scenario(const char *path, int argc, char **argv)
{
    const char *json_path = NULL, *junit_path = NULL, *csv_path = NULL, *plot_path = NULL, *fusion = NULL;
    long micro_batch = 0;
    rs_simrun_extras x;
    memset(&x, 0, sizeof x);
    x.links = 16;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--stats") == 0) {
            x.stats = 1;
        } else if (strcmp(a, "--json") == 0 && v) {
            json_path = argv[++i];
        } else if (strcmp(a, "--junit") == 0 && v) {
            junit_path = argv[++i];
        } else if (strcmp(a, "--csv") == 0 && v) {
            csv_path = argv[++i];
        } else if (strcmp(a, "--trace") == 0 && v) {
            x.trace_path = argv[++i];
        } else if (strcmp(a, "--plot") == 0 && v) {
            plot_path = argv[++i];
        } else if (strcmp(a, "--waves") == 0 && v) {
            x.waves_path = argv[++i];
        } else if (strcmp(a, "--fusion") == 0 && v) {
            fusion = argv[++i];
        } else if (strcmp(a, "--chakra") == 0 && v) {
            x.chakra_prefix = argv[++i];
        } else if (strcmp(a, "--chakra-groups") == 0 && v) {
            x.chakra_groups = argv[++i];
        } else if (strcmp(a, "--micro-batch") == 0 && v) {
            char *end;
            micro_batch = strtol(v, &end, 10);
            if (*end || end == v || micro_batch < 1 || micro_batch > 1000000) {
                fprintf(stderr, "ringsim: --micro-batch: '%s' is not allowed (allowed: 1 to 1000000 samples)\n", v);
                return RS_EXIT_USAGE;
            }
            i++;
        } else if (strcmp(a, "--trace-max") == 0 && v) {
            char *end;
            errno = 0;
            unsigned long long n = strtoull(v, &end, 10);
            if (errno || *end || end == v || n == 0 || v[0] == '-') {
                fprintf(stderr, "ringsim: --trace-max: '%s' is not a positive integer (events)\n", v);
                return RS_EXIT_USAGE;
            }
            x.trace_max_events = n;
            i++;
        } else if (strcmp(a, "--links") == 0 && v) {
            char *end;
            long n = strtol(v, &end, 10);
            if (strcmp(v, "all") == 0)
                x.links = -1;
            else if (strcmp(v, "none") == 0)
                x.links = 0;
            else if (*end == '\0' && end != v && n > 0 && n < 1000000)
                x.links = (int)n;
            else {
                fprintf(stderr, "ringsim: --links: '%s' is not allowed (allowed: a count > 0, all, none)\n", v);
                return RS_EXIT_USAGE;
            }
            i++;
        } else if (v == NULL && (strcmp(a, "--json") == 0 || strcmp(a, "--junit") == 0 || strcmp(a, "--csv") == 0 || strcmp(a, "--trace") == 0 ||
                                 strcmp(a, "--plot") == 0 || strcmp(a, "--trace-max") == 0 ||
                                 strcmp(a, "--links") == 0 || strcmp(a, "--fusion") == 0 ||
                                 strcmp(a, "--micro-batch") == 0 || strcmp(a, "--waves") == 0 ||
                                 strcmp(a, "--chakra") == 0 || strcmp(a, "--chakra-groups") == 0)) {
            fprintf(stderr, "ringsim: %s: missing value\n", a);
            return RS_EXIT_USAGE;
        } else {
            fprintf(stderr, "ringsim: run %s: unknown option '%s' (allowed with a scenario: %s; "
                            "the workload comes from the scenario)\n", path, a, rs_scenario_opts);
            return RS_EXIT_USAGE;
        }
    }
    if (x.chakra_groups && !x.chakra_prefix) {
        fprintf(stderr, "ringsim: run %s: --chakra-groups names the process groups of --chakra PREFIX's traces "
                        "(allowed: with --chakra)\n", path);
        return RS_EXIT_USAGE;
    }
    if (x.chakra_prefix && (json_path || junit_path || csv_path || plot_path || fusion || micro_batch)) {
        fprintf(stderr, "ringsim: run %s: --chakra prints its own table (allowed with it: --stats, --trace FILE, "
                        "--trace-max N, --links N|all|none)\n", path);
        return RS_EXIT_USAGE;
    }
    rs_scenario sc;
    if (rs_cli_load_scenario(path, &sc) != 0)
        return RS_EXIT_USAGE;
    char err[RS_SCENARIO_ERRLEN];
    if ((fusion || micro_batch) && rs_scenario_set_training(&sc, fusion, (int)micro_batch, err, sizeof err) != 0) {
        fprintf(stderr, "ringsim: run %s: %s: %s\n", path, fusion ? "--fusion" : "--micro-batch", err);
        rs_scenario_free(&sc);
        return RS_EXIT_USAGE;
    }
    FILE *json = NULL, *csv = NULL;
    int status = RS_EXIT_OK;
    if (plot_path && rs_plot_check(plot_path, stderr) != 0)
        status = RS_EXIT_USAGE;
    if (status == RS_EXIT_OK && json_path && (json = rs_open_out("--json", json_path)) == NULL)
        status = RS_EXIT_USAGE;
    if (status == RS_EXIT_OK && csv_path && (csv = rs_open_out("--csv", csv_path)) == NULL)
        status = RS_EXIT_USAGE;
    if (status == RS_EXIT_OK && !rs_junit_try(junit_path, "ringsim", stderr))
        status = RS_EXIT_USAGE;
    if (status != RS_EXIT_OK) {
        if (json)
            fclose(json);
        rs_scenario_free(&sc);
        return status;
    }
    rs_sweep o;
    rs_simrun_sweep(&sc, &o);
    rs_rows rows;
    memset(&rows, 0, sizeof rows);
    rows.nranks = o.nranks;
    rows.check = o.check;
    rows.csv = csv;
    if (csv)
        rs_rows_csv_header(csv);
    x.on_row = rs_rows_add;
    x.row_ud = &rows;
    x.progress = isatty(STDERR_FILENO);
    rs_report *rep = rs_report_create(&o, stdout, json != NULL || junit_path != NULL);
    char summary[256];
    rs_scenario_summary(&sc, summary, sizeof summary);
    printf("# scenario %s: %s\n", sc.name, summary);
    fflush(stdout);
    status = rep ? rs_simrun(&sc, rep, &x, stderr) : RS_EXIT_USAGE;
    if (rep && status != RS_EXIT_OK && status != RS_EXIT_WRONG) /* never "OK" in the JSON of a failed run */
        rs_report_set_error(rep, "the run failed: see its messages on stderr");
    if (status == RS_EXIT_WRONG)
        fprintf(stderr, "ringsim: run: some results were wrong (see #wrong)\n");
    if (json && rs_report_write_json(rep, json, json_path, stderr) != 0 && status == RS_EXIT_OK)
        status = RS_EXIT_USAGE;
    if (rep && junit_path && rs_report_write_junit(rep, junit_path, stderr) != 0 && status == RS_EXIT_OK)
        status = RS_EXIT_USAGE;
    if (csv && (fflush(csv) != 0 || ferror(csv) || fclose(csv) != 0)) {
        fprintf(stderr, "ringsim: --csv: cannot write '%s': %s\n", csv_path, strerror(errno));
        if (status == RS_EXIT_OK)
            status = RS_EXIT_USAGE;
    }
    if (plot_path && rows.n > 0) {
        const rs_rows *sets[1] = {&rows};
        char title[300];
        snprintf(title, sizeof title, "ringsim: %s", sc.name);
        int rc = rs_rows_plot(sets, NULL, 1, plot_path, title, stderr);
        if (rc && status == RS_EXIT_OK)
            status = rc;
    }
    rs_rows_free(&rows);
    rs_report_destroy(rep);
    rs_scenario_free(&sc);
    return status;
}

/* The scenario among `run --backend host|zmq` arguments (the one word that is not an option or an
 * option's value), or NULL; the others go to rest[] (argc + 1 entries). *bad = the first option
 * that does not go with a scenario (the workload comes from it). -1 after a message when there
 * are two. */
static int rs_split_scenario(int argc, char **argv, const char **scenario, char **rest, int *nrest,
                             const char **bad)
{
    *scenario = *bad = NULL;
    *nrest = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-') {
            if (*scenario) {
                fprintf(stderr, "ringsim: run: two scenarios '%s' and '%s' (allowed: one)\n", *scenario, a);
                return -1;
            }
            *scenario = a;
            continue;
        }
        if (!*bad && strncmp(a, "--backend", 9) && strncmp(a, "--ranks", 7) && strncmp(a, "--timeout", 9) &&
            strncmp(a, "--json", 6) && strncmp(a, "--junit", 7) && strcmp(a, "-h") && strcmp(a, "--help"))
            *bad = a;
        rest[(*nrest)++] = argv[i];
        if (rs_cli_option_has_arg(a) && i + 1 < argc)
            rest[(*nrest)++] = argv[++i];
    }
    return 0;
}

/* `ringsim run [--backend host] FLAGS | SCENARIO`: the sweep on host threads, from the flags or
 * from a scenario's workload (its topology, device and faults do not apply to threads). */
static int rs_run_host(int argc, char **argv)
{
    const char *scenario, *bad;
    char **rest = calloc((size_t)argc + 1, sizeof *rest);
    int nrest = 0;
    if (!rest || rs_split_scenario(argc, argv, &scenario, rest, &nrest, &bad) != 0) {
        free(rest);
        return RS_EXIT_USAGE;
    }
    rs_cli_run run;
    rs_cli_run_defaults(&run);
    int rc = rs_cli_parse_run(nrest, rest, &run, stdout, stderr);
    free(rest);
    if (rc >= 0)
        return rc;
    if (scenario) {
        if (bad) {
            fprintf(stderr, "ringsim: run %s: option '%s' does not go with a scenario (allowed with --backend host "
                    "and a scenario: --ranks, --timeout, --json, --junit; the workload comes from the scenario)\n", scenario, bad);
            return RS_EXIT_USAGE;
        }
        rs_scenario sc;
        if (rs_cli_load_scenario(scenario, &sc) != 0)
            return RS_EXIT_USAGE;
        int ranks_given = 0;
        for (int i = 0; i < argc; i++)
            ranks_given |= !strncmp(argv[i], "--ranks", 7);
        rs_sweep s;
        rs_scenario_sweep(&sc, &s);
        s.backend = RS_BACKEND_HOST;
        s.nranks = ranks_given ? run.sweep.nranks : sc.topo.nranks;
        s.timeout_s = run.sweep.timeout_s;
        char summary[256];
        rs_scenario_summary(&sc, summary, sizeof summary);
        printf("# scenario %s: %s\n", sc.name, summary);
        printf("# host backend: %d threads; the scenario's topology, device and fault keys are ignored (times are "
               "this machine's memory, not the modelled network)\n", s.nranks);
        run.sweep = s;
        rs_scenario_free(&sc);
    }
    FILE *json = NULL;
    if (!rs_junit_try(run.junit_path, "ringsim", stderr))
        return RS_EXIT_USAGE;
    if (run.json_path && (json = rs_open_out("--json", run.json_path)) == NULL)
        return RS_EXIT_USAGE;
    rs_report *rep = rs_report_create(&run.sweep, stdout, json != NULL || run.junit_path != NULL);
    int status = rep ? rs_host_run(&run.sweep, rep, stderr) : RS_EXIT_USAGE;
    if (status == RS_EXIT_WRONG)
        fprintf(stderr, "ringsim: run: some results were wrong (see #wrong)\n");
    if (rep && status != RS_EXIT_OK && status != RS_EXIT_WRONG)
        rs_report_set_error(rep, "the run failed: see its messages on stderr");
    if (json && rs_report_write_json(rep, json, run.json_path, stderr) != 0 && status == RS_EXIT_OK)
        status = RS_EXIT_USAGE;
    if (rep && run.junit_path && rs_report_write_junit(rep, run.junit_path, stderr) != 0 && status == RS_EXIT_OK)
        status = RS_EXIT_USAGE;
    rs_report_destroy(rep);
    return status;
}

/* `ringsim run --backend zmq [--ranks N | --ranktable FILE] [SCENARIO | FLAGS]`: the zmq
 * controller's own flags here, the sweep's through rs_cli_parse_run or from the scenario. */
static int rs_run_zmq(int argc, char **argv)
{
    rs_zmqrun_config cfg = {.connect_s = 30, .agent_backend = "zmq"};
    const char *scenario = NULL, *scenario_only_bad = NULL;
    char **mine = calloc((size_t)argc + 1, sizeof *mine), **rest = calloc((size_t)argc + 1, sizeof *rest);
    int nmine = 0, nrest = 0, status = RS_EXIT_USAGE;
    if (mine == NULL || rest == NULL)
        goto out;
    for (int i = 0; i < argc; i++) { /* the controller's own options; the rest as for the host */
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--ranktable") || !strcmp(a, "--connect-timeout")) {
            if (!v) {
                fprintf(stderr, "ringsim: %s: missing value\n", a);
                goto out;
            }
            i++;
            if (a[2] == 'r')
                cfg.table_path = v;
            else if (rs_cli_seconds("ringsim", a, v, 1e6, &cfg.connect_s))
                goto out;
        } else if (!strcmp(a, "--agent-backend")) {
            if (!v || (strcmp(v, "zmq") && strcmp(v, "mmio"))) {
                fprintf(stderr, "ringsim: --agent-backend: '%s' (allowed: zmq, mmio)\n", v ? v : "");
                goto out;
            }
            cfg.agent_backend = argv[++i];
        } else if (!strcmp(a, "--shutdown-agents")) {
            cfg.shutdown_remote = 1;
        } else {
            mine[nmine++] = argv[i];
        }
    }
    if (rs_split_scenario(nmine, mine, &scenario, rest, &nrest, &scenario_only_bad) != 0)
        goto out;
    for (int i = 0; i < nrest; i++)
        cfg.ranks_given |= !strncmp(rest[i], "--ranks", 7);
    rs_cli_run run;
    rs_cli_run_defaults(&run);
    rs_sweep *o = &run.sweep;
    if (cfg.table_path || scenario)
        o->nranks = RS_MAX_RANKS; /* the rank count comes later: -r is checked against it then */
    int rc = rs_cli_parse_run(nrest, rest, &run, stdout, stderr);
    if (rc >= 0) {
        status = rc;
        goto out;
    }
    if (!cfg.ranks_given && !cfg.table_path && !scenario)
        o->nranks = 8;
    rs_scenario sc;
    memset(&sc, 0, sizeof sc);
    if (scenario) {
        if (scenario_only_bad) {
            fprintf(stderr, "ringsim: run %s: option '%s' does not go with a scenario (allowed with --backend zmq "
                    "and a scenario: --ranks, --ranktable, --timeout, --connect-timeout, --json, --junit; the workload comes "
                    "from the scenario)\n", scenario, scenario_only_bad);
            goto out;
        }
        if (rs_cli_load_scenario(scenario, &sc) != 0)
            goto out;
        // the agents' communicators exist before the run: deterministic mode is the det algorithm
        // (all it changes is allreduce's), wide accumulation would need them created with it
        if (sc.workload.wide_accumulation) {
            fprintf(stderr, "%s: workload.wide_accumulation: not with --backend zmq: the agents' communicators are "
                    "created before the run, without it (allowed: false here; the host backend and the model take "
                    "it)\n", scenario);
            rs_scenario_free(&sc);
            goto out;
        }
        rs_sweep s;
        rs_scenario_sweep(&sc, &s);
        s.nranks = cfg.ranks_given ? o->nranks : sc.topo.nranks;
        s.timeout_s = o->timeout_s;
        if (sc.workload.deterministic)
            s.algo = NCL_ALGO_DET;
        *o = s;
        cfg.scenario = &sc;
    }
    o->backend = RS_BACKEND_ZMQ;
    o->memprobe = 0;
    cfg.junit_path = run.junit_path;
    if (rs_junit_try(run.junit_path, "ringsim", stderr))
        status = rs_zmqrun(&cfg, o, run.json_path, stdout, stderr);
    rs_scenario_free(&sc);
out:
    free(mine);
    free(rest);
    return status;
}

int rs_cmd_run(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        const char *b = !strcmp(argv[i], "--backend") && i + 1 < argc ? argv[i + 1]
                        : !strncmp(argv[i], "--backend=", 10) ? argv[i] + 10 : "";
        if (!strcmp(b, "zmq"))
            return rs_run_zmq(argc, argv);
        if (!strcmp(b, "host"))
            return rs_run_host(argc, argv);
    }
    if (argc == 0) /* the main job: the default scenario on the model */
        return rs_cmd_run_scenario(RINGSIM_DEFAULT_SCENARIO, 0, argv);
    if (argv[0][0] != '-')
        return rs_cmd_run_scenario(argv[0], argc - 1, argv + 1);
    return rs_run_host(argc, argv);
}
