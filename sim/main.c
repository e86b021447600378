/* main.c — the `ringsim` program: dispatches subcommands (run, compare, plan, validate, ...). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ncl/ncl.h"
#include "rs_bench.h"
#include "rs_cli.h"
#include "rs_compare.h"
#include "rs_memprobe.h"
#include "rs_plan.h"
#include "rs_plot.h"
#include "rs_report.h"
#include "rs_rows.h"
#include "rs_scenario.h"
#include "rs_simrun.h"
#include "model/params.h"
#include "rs_simworld.h"
#include "rs_train.h"
#ifdef RINGSIM_HAVE_ZMQ
#include "rs_agent.h"
#include "rs_bringup.h"
#include "rs_zmqrun.h"
#endif

#ifndef RINGSIM_VERSION
#define RINGSIM_VERSION "0.1.0"
#endif
#ifndef RINGSIM_DEFAULT_SCENARIO
#define RINGSIM_DEFAULT_SCENARIO "scenarios/default.yaml"
#endif

static const char rs_subcommands[] = "run, compare, plan, train, validate, params, agent, bringup, help, version";

static void rs_usage(FILE *f)
{
    fprintf(f,
        "usage: ringsim <command> [options]\n"
        "\n"
        "commands:\n"
        "  run       simulate scenarios/default.yaml (the 8-NPU server) on the SystemC model\n"
        "  run SCENARIO [--json FILE] [--csv FILE] [--trace FILE] [--trace-max N] [--plot FILE]\n"
        "               [--links N|all|none] [--stats] [--fusion SPEC] [--micro-batch N]\n"
        "            simulate a scenario (YAML, see scenarios/) on the SystemC model; --trace writes a\n"
        "            Chrome/Perfetto trace (tasks per NPU and queue, transfers per link), --plot\n"
        "            busbw against size (.svg/.png, needs gnuplot),\n"
        "            --links how many channels the utilisation summary lists (default 16); --fusion and\n"
        "            --micro-batch override a training scenario's workload.training keys; --waves FILE\n"
        "            writes a VCD of the RTL devices (device.fidelity: rtl), one scope per rank\n"
        "  compare A B [--json FILE] [--plot FILE] [--fusion-a SPEC] [--fusion-b SPEC]\n"
        "            run two scenarios and print their times side by side with ratios B/A\n"
        "  plan SCENARIO [--simulate]\n"
        "            every algorithm's predicted time at every size of the scenario and auto's choice;\n"
        "            --simulate runs each on the model beside its prediction\n"
        "  run --backend host [flags]\n"
        "            run collectives on N host threads, nccl-tests flags ('ringsim run --help')\n"
        "  run --backend zmq [--ranks N | --ranktable FILE] [SCENARIO | flags]\n"
        "            one process per rank joined by ZeroMQ: spawns N local agents (or uses the agents\n"
        "            a rank table lists) and runs the scenario's workload or the flags' sweep (sim/ZMQ.md)\n"
        "  train [--ranks N | --scenario FILE] [options]\n"
        "            data-parallel training (dp/) with N ranks against 1 rank, on host threads or a\n"
        "            scenario's simulated NPUs ('ringsim train --help')\n"
        "  agent     one rank's process for --backend zmq, on the zmq or the mmio HAL (an emulated\n"
        "            board) ('ringsim agent --help')\n"
        "  bringup   test every expected link of a set of agents: latency, bandwidth, data patterns,\n"
        "            ring allreduces; names dead, slow, corrupting, miswired links ('ringsim bringup --help')\n"
        "  params    every model component's parameters, ports and statistics\n"
        "  validate  check scenario files (YAML) without running them: keys, units, ranges, links\n"
        "  help      this text ('ringsim run --help', 'ringsim validate --help' for their options)\n"
        "  version   print the version\n");
}

static const char rs_scenario_opts[] =
    "--json FILE, --stats, --csv FILE, --trace FILE, --trace-max N, --plot FILE, --links N|all|none, "
    "--waves FILE (RTL devices), and for a training scenario --fusion SPEC, --micro-batch N";

/* Opens an output file before the run: a bad path should fail before a long run, not after. */
static FILE *rs_open_out(const char *flag, const char *path)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        fprintf(stderr, "ringsim: %s: cannot write '%s': %s\n", flag, path, strerror(errno));
    return f;
}

/* `ringsim run SCENARIO [options]`: the scenario's workload on the model. */
static int rs_cmd_run_scenario(const char *path, int argc, char **argv)
{
    const char *json_path = NULL, *csv_path = NULL, *plot_path = NULL, *fusion = NULL;
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
        } else if (v == NULL && (strcmp(a, "--json") == 0 || strcmp(a, "--csv") == 0 || strcmp(a, "--trace") == 0 ||
                                 strcmp(a, "--plot") == 0 || strcmp(a, "--trace-max") == 0 ||
                                 strcmp(a, "--links") == 0 || strcmp(a, "--fusion") == 0 ||
                                 strcmp(a, "--micro-batch") == 0 || strcmp(a, "--waves") == 0)) {
            fprintf(stderr, "ringsim: %s: missing value\n", a);
            return RS_EXIT_USAGE;
        } else {
            fprintf(stderr, "ringsim: run %s: unknown option '%s' (allowed with a scenario: %s; "
                            "the workload comes from the scenario)\n", path, a, rs_scenario_opts);
            return RS_EXIT_USAGE;
        }
    }
    rs_scenario sc;
    char err[RS_SCENARIO_ERRLEN];
    if (rs_scenario_load(path, &sc, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return RS_EXIT_USAGE;
    }
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
    if (status != RS_EXIT_OK) {
        if (json)
            fclose(json);
        rs_scenario_free(&sc);
        return status;
    }
    rs_opts o;
    rs_simrun_opts(&sc, &o);
    o.json_path = json_path;
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
    rs_report *rep = rs_report_create(&o, stdout, json != NULL);
    char summary[256];
    rs_scenario_summary(&sc, summary, sizeof summary);
    printf("# scenario %s: %s\n", sc.name, summary);
    fflush(stdout);
    status = rep ? rs_simrun(&sc, rep, &x, stderr) : RS_EXIT_USAGE;
    if (status == RS_EXIT_WRONG)
        fprintf(stderr, "ringsim: run: some results were wrong (see #wrong)\n");
    if (json && rs_report_write_json(rep, json, json_path, stderr) != 0 && status == RS_EXIT_OK)
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

static int rs_cmd_run(int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if ((strcmp(argv[i], "--backend") == 0 && i + 1 < argc && strcmp(argv[i + 1], "zmq") == 0) ||
            strcmp(argv[i], "--backend=zmq") == 0) {
#ifdef RINGSIM_HAVE_ZMQ
            return rs_zmqrun_cmd(argc, argv, stdout, stderr);
#else
            fprintf(stderr, "ringsim: --backend zmq: this ringsim was built without ZeroMQ (install libzmq3-dev)\n");
            return RS_EXIT_USAGE;
#endif
        }
    if (argc == 0) /* the main job: the default scenario on the model */
        return rs_cmd_run_scenario(RINGSIM_DEFAULT_SCENARIO, 0, argv);
    if (argv[0][0] != '-')
        return rs_cmd_run_scenario(argv[0], argc - 1, argv + 1);
    rs_opts o;
    rs_cli_defaults(&o);
    int rc = rs_cli_parse_run(argc, argv, &o, stdout, stderr);
    if (rc >= 0)
        return rc;

    /* Open the JSON file first: a bad path should fail before a long run, not after it. */
    FILE *json = NULL;
    if (o.json_path) {
        json = fopen(o.json_path, "w");
        if (json == NULL) {
            fprintf(stderr, "ringsim: --json: cannot write '%s': %s\n", o.json_path, strerror(errno));
            return RS_EXIT_USAGE;
        }
    }
    rs_report *rep = rs_report_create(&o, stdout, json != NULL);
    rs_memprobe *probe = o.memprobe ? rs_memprobe_create((size_t)o.maxbytes) : NULL;
    if (rep == NULL || (o.memprobe && probe == NULL)) {
        fprintf(stderr, "ringsim: out of memory\n");
        if (json)
            fclose(json);
        rs_memprobe_destroy(probe);
        return RS_EXIT_USAGE;
    }

    int status = RS_EXIT_OK;
    for (int i = 0; i < o.ncolls; i++) {
        int s = rs_bench_run(&o, o.colls[i], rep, probe, stderr);
        if (s > status)
            status = s;
        if (s == RS_EXIT_ENGINE || s == RS_EXIT_USAGE)
            break; /* the engine or the machine is in trouble: later tables would only repeat it */
    }
    if (status == RS_EXIT_WRONG)
        fprintf(stderr, "ringsim: run: some results were wrong (see #wrong)\n");
    if (json && rs_report_write_json(rep, json, o.json_path, stderr) != 0 && status == RS_EXIT_OK)
        status = RS_EXIT_USAGE;
    rs_report_destroy(rep);
    rs_memprobe_destroy(probe);
    return status;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        rs_usage(stderr);
        return RS_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "run") == 0)
        return rs_cmd_run(argc - 2, argv + 2);
    if (strcmp(cmd, "compare") == 0)
        return rs_compare_cmd(argc - 2, argv + 2, rs_cmd_run_scenario, stdout, stderr);
    if (strcmp(cmd, "plan") == 0)
        return rs_plan_cmd(argc - 2, argv + 2, stdout, stderr);
#ifdef RINGSIM_HAVE_ZMQ
    if (strcmp(cmd, "agent") == 0)
        return rs_agent_cmd(argc - 2, argv + 2, stdout, stderr);
    if (strcmp(cmd, "bringup") == 0)
        return rs_bringup_cmd(argc - 2, argv + 2, stdout, stderr);
#endif
    if (strcmp(cmd, "train") == 0)
        return rs_train_main(argc - 1, argv + 1, rs_simworld_run_scenario);
    if (strcmp(cmd, "params") == 0) {
        model_params_print(stdout);
        return RS_EXIT_OK;
    }
    if (strcmp(cmd, "validate") == 0)
        return rs_scenario_cmd_validate(argc - 2, argv + 2, stdout, stderr);
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        if (argc > 2 && strcmp(argv[2], "run") == 0)
            rs_cli_usage_run(stdout);
        else if (argc > 2 && strcmp(argv[2], "validate") == 0)
            rs_scenario_usage_validate(stdout);
        else
            rs_usage(stdout);
        return RS_EXIT_OK;
    }
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("ringsim %s (engine ncl %d.%d)\n", RINGSIM_VERSION, NCL_VERSION_MAJOR, NCL_VERSION_MINOR);
        return RS_EXIT_OK;
    }
    fprintf(stderr, "ringsim: unknown command '%s' (allowed: %s; see 'ringsim help')\n", cmd, rs_subcommands);
    return RS_EXIT_USAGE;
}
