/* main.c — the `ringsim` program: one table of commands, each dispatched with the arguments after its name. */
#include <stdio.h>
#include <string.h>

#include "ncl/ncl.h"
#include "model/params.h"
#include "rs_cli.h"
#include "rs_cmd.h"

#ifndef RINGSIM_VERSION
#define RINGSIM_VERSION "0.1.0"
#endif

typedef struct rs_command {
    const char *name;
    int (*run)(int argc, char **argv);
    void (*usage)(FILE *out); /* `ringsim help NAME`; NULL: the general usage */
} rs_command;

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
        "            writes a VCD of the RTL devices (device.fidelity: rtl), one scope per rank; --chakra\n"
        "            PREFIX runs Chakra execution traces PREFIX.<rank>.et (ASTRA-sim's workloads) instead\n"
        "            of the scenario's workload, --chakra-groups FILE their process groups (JSON)\n"
        "  compare A B [--json FILE] [--plot FILE] [--fusion-a SPEC] [--fusion-b SPEC]\n"
        "            run two scenarios and print their times side by side with ratios B/A\n"
        "  compare MACHINE --measured FILE... [--json FILE]\n"
        "            every measured row (the formats `measured` reads) against the machine scenario's\n"
        "            prediction: error per row, median / geomean / worst per file and collective\n"
        "  calibrate MACHINE MEASURED... [--fit KEYS] [--pin KEY=VALUE] [--hold-out SPEC] [--out FILE]\n"
        "            fit the machine scenario's link, NIC, switch and device values to measured tables on\n"
        "            the model and write the calibrated scenario ('ringsim calibrate --help')\n"
        "  plan SCENARIO [--simulate]\n"
        "            every algorithm's predicted time at every size of the scenario and auto's choice;\n"
        "            --simulate runs each on the model beside its prediction\n"
        "  run --backend host [flags | SCENARIO]\n"
        "            run collectives on N host threads, nccl-tests flags ('ringsim run --help')\n"
        "  run --backend zmq [--ranks N | --ranktable FILE] [SCENARIO | flags]\n"
        "            one process per rank joined by ZeroMQ: spawns N local agents (or uses the agents\n"
        "            a rank table lists) and runs the scenario's workload or the flags' sweep (sim/zmq/ZMQ.md)\n"
        "  train [--ranks N | --scenario FILE] [options]\n"
        "            data-parallel training (dp/) with N ranks against 1 rank, on host threads or a\n"
        "            scenario's simulated NPUs ('ringsim train --help')\n"
        "  agent     one rank's process for --backend zmq, on the zmq or the mmio HAL (an emulated\n"
        "            board) ('ringsim agent --help')\n"
        "  bringup   test every expected link of a set of agents: latency, bandwidth, data patterns,\n"
        "            ring allreduces; names dead, slow, corrupting, miswired links ('ringsim bringup --help')\n"
        "  measured FILE... [--collective NAME] [--ranks N] [--json OUT]\n"
        "            read measured benchmark tables (nccl-tests/rccl-tests text or -J JSON, HCCL Test,\n"
        "            OSU latency tables, ringsim run/bringup --json) and show them normalized; a bad\n"
        "            file is refused with FILE:LINE: and the reason ('ringsim measured --help')\n"
        "  sweep GRID [--jobs N] [--out DIR] [--force] [--timeout SEC] [--plot FILE] [--merge]\n"
        "            run a grid of scenarios (a base scenario's keys over lists and ranges) in parallel\n"
        "            processes, or shared among mpirun/srun processes, and merge them into one CSV and\n"
        "            JSON ('ringsim sweep --help')\n"
        "  params    every model component's parameters, ports and statistics\n"
        "  validate  check scenario files (YAML) without running them: keys, units, ranges, links\n"
        "  help      this text ('ringsim help COMMAND' for a command's options)\n"
        "  version   print the version\n");
}


static int rs_cmd_params(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    model_params_print(stdout);
    return RS_EXIT_OK;
}

static int rs_cmd_version(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("ringsim %s (engine ncl %d.%d)\n", RINGSIM_VERSION, NCL_VERSION_MAJOR, NCL_VERSION_MINOR);
    return RS_EXIT_OK;
}

static int rs_cmd_help(int argc, char **argv);

static const rs_command rs_commands[] = {
    {"run", rs_cmd_run, rs_cli_usage_run},
    {"compare", rs_cmd_compare, rs_cmd_compare_usage},
    {"plan", rs_cmd_plan, rs_cmd_plan_usage},
    {"train", rs_cmd_train, rs_cmd_train_usage},
    {"validate", rs_cmd_validate, rs_cmd_validate_usage},
    {"params", rs_cmd_params, NULL},
    {"agent", rs_cmd_agent, rs_cmd_agent_usage},
    {"bringup", rs_cmd_bringup, rs_cmd_bringup_usage},
    {"measured", rs_cmd_measured, rs_cmd_measured_usage},
    {"calibrate", rs_cmd_calibrate, rs_cmd_calibrate_usage},
    {"sweep", rs_cmd_sweep, rs_cmd_sweep_usage},
    {"help", rs_cmd_help, NULL},
    {"version", rs_cmd_version, NULL},
    /* the spellings every program takes */
    {"--help", rs_cmd_help, NULL},
    {"-h", rs_cmd_help, NULL},
    {"--version", rs_cmd_version, NULL},
};
#define RS_NCOMMANDS (sizeof rs_commands / sizeof rs_commands[0])

static const rs_command *rs_find_command(const char *name)
{
    for (size_t i = 0; i < RS_NCOMMANDS; i++)
        if (strcmp(rs_commands[i].name, name) == 0)
            return &rs_commands[i];
    return NULL;
}

static int rs_cmd_help(int argc, char **argv)
{
    const rs_command *c = argc > 0 ? rs_find_command(argv[0]) : NULL;
    if (c && c->usage)
        c->usage(stdout);
    else
        rs_usage(stdout);
    return RS_EXIT_OK;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        rs_usage(stderr);
        return RS_EXIT_USAGE;
    }
    const rs_command *c = rs_find_command(argv[1]);
    if (c)
        return c->run(argc - 2, argv + 2);
    fprintf(stderr, "ringsim: unknown command '%s' (allowed:", argv[1]);
    for (size_t i = 0; i < RS_NCOMMANDS && rs_commands[i].name[0] != '-'; i++)
        fprintf(stderr, "%s %s", i ? "," : "", rs_commands[i].name);
    fprintf(stderr, "; see 'ringsim help')\n");
    return RS_EXIT_USAGE;
}
