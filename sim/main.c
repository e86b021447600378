/* main.c — the `ringsim` program: dispatches subcommands (run, help, version). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ncl/ncl.h"
#include "rs_bench.h"
#include "rs_cli.h"
#include "rs_memprobe.h"
#include "rs_report.h"

#ifndef RINGSIM_VERSION
#define RINGSIM_VERSION "0.1.0"
#endif

static const char rs_subcommands[] = "run, help, version";

static void rs_usage(FILE *f)
{
    fprintf(f,
        "usage: ringsim <command> [options]\n"
        "\n"
        "commands:\n"
        "  run       run collectives on N ranks, print an nccl-tests-style table, check results\n"
        "            (default: allreduce + broadcast on 8 host ranks, float sum, 8 B .. 16 MiB)\n"
        "  help      this text ('ringsim run --help' for the options of run)\n"
        "  version   print the version\n");
}

static int rs_cmd_run(int argc, char **argv)
{
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
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        if (argc > 2 && strcmp(argv[2], "run") == 0)
            rs_cli_usage_run(stdout);
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
