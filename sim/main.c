/* main.c — the `ringsim` program: dispatches subcommands (run, validate, help, version). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ncl/ncl.h"
#include "rs_bench.h"
#include "rs_cli.h"
#include "rs_memprobe.h"
#include "rs_report.h"
#include "rs_scenario.h"
#include "rs_simrun.h"
#include "model/params.h"

#ifndef RINGSIM_VERSION
#define RINGSIM_VERSION "0.1.0"
#endif
#ifndef RINGSIM_DEFAULT_SCENARIO
#define RINGSIM_DEFAULT_SCENARIO "scenarios/default.yaml"
#endif

static const char rs_subcommands[] = "run, validate, params, help, version";

static void rs_usage(FILE *f)
{
    fprintf(f,
        "usage: ringsim <command> [options]\n"
        "\n"
        "commands:\n"
        "  run       simulate scenarios/default.yaml (the 8-NPU server) on the SystemC model\n"
        "  run SCENARIO [--json FILE] [--stats]\n"
        "            simulate a scenario (YAML, see scenarios/) on the SystemC model\n"
        "  run --backend host [flags]\n"
        "            run collectives on N host threads, nccl-tests flags ('ringsim run --help')\n"
        "  params    every model component's parameters, ports and statistics\n"
        "  validate  check scenario files (YAML) without running them: keys, units, ranges, links\n"
        "  help      this text ('ringsim run --help', 'ringsim validate --help' for their options)\n"
        "  version   print the version\n");
}

/* `ringsim run SCENARIO [--json FILE] [--stats]`: the scenario's workload on the model. */
static int rs_cmd_run_scenario(const char *path, int argc, char **argv)
{
    const char *json_path = NULL;
    int stats = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--stats") == 0) {
            stats = 1;
        } else if (strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
            json_path = argv[++i];
        } else {
            fprintf(stderr, "ringsim: run %s: unknown option '%s' (allowed with a scenario: --json FILE, "
                            "--stats; the workload comes from the scenario)\n", path, argv[i]);
            return RS_EXIT_USAGE;
        }
    }
    rs_scenario sc;
    char err[RS_SCENARIO_ERRLEN];
    if (rs_scenario_load(path, &sc, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return RS_EXIT_USAGE;
    }
    FILE *json = NULL;
    if (json_path && (json = fopen(json_path, "w")) == NULL) {
        fprintf(stderr, "ringsim: --json: cannot write '%s': %s\n", json_path, strerror(errno));
        rs_scenario_free(&sc);
        return RS_EXIT_USAGE;
    }
    rs_opts o;
    rs_simrun_opts(&sc, &o);
    o.json_path = json_path;
    rs_report *rep = rs_report_create(&o, stdout, json != NULL);
    char summary[256];
    rs_scenario_summary(&sc, summary, sizeof summary);
    printf("# scenario %s: %s\n", sc.name, summary);
    int status = rep ? rs_simrun(&sc, rep, stats, stderr) : RS_EXIT_USAGE;
    if (status == RS_EXIT_WRONG)
        fprintf(stderr, "ringsim: run: some results were wrong (see #wrong)\n");
    if (json && rs_report_write_json(rep, json, json_path, stderr) != 0 && status == RS_EXIT_OK)
        status = RS_EXIT_USAGE;
    rs_report_destroy(rep);
    rs_scenario_free(&sc);
    return status;
}

static int rs_cmd_run(int argc, char **argv)
{
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
