/* cmd_agent.c — `ringsim agent`: its options; the agent itself is sim/zmq/rs_agent.c. */
#include "rs_cmd.h"

#include "rs_cli.h"

#include <stdlib.h>
#include <string.h>

#include "zmq/rs_agent.h"
#include "zmq/rs_ranktable.h"

void rs_cmd_agent_usage(FILE *out)
{
    fprintf(out,
        "usage: ringsim agent [--ranktable FILE] [--rank R] [--ranks N --job NAME] [--timeout S]\n"
        "                     [--connect-timeout S] [--channels N] [--backend zmq|mmio]\n"
        "\n"
        "One rank of a multi-process run: joins the other ranks over ZeroMQ (the zmq backend) and\n"
        "serves a controller ('ringsim run --backend zmq') on its control endpoint.\n"
        "Where the ranks are, first match wins:\n"
        "  --ranktable FILE     a rank table (YAML or JSON: rank, host, endpoint[, control]); this\n"
        "                       agent's rank from --rank or the launcher's environment\n"
        "  --ranks N --rank R --job NAME\n"
        "                       N ranks on this host over ipc://@ringsim-NAME-<rank> (what\n"
        "                       'ringsim run --backend zmq --ranks N' spawns)\n"
        "  (neither)            under mpirun/srun: OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/PMI_SIZE or\n"
        "                       SLURM_PROCID/SLURM_NTASKS, endpoints from RINGSIM_ZMQ_BASE (see sim/zmq/ZMQ.md)\n"
        "  --timeout S          limit of every notify wait (default 30)\n"
        "  --connect-timeout S  limit of the HELLO exchange with every peer (default 30)\n"
        "  --channels N         parallel queues of the ring algorithms (default 2)\n"
        "  --backend B          the HAL the engine runs on (default zmq):\n"
        "                         zmq   tasks become ZeroMQ messages the peer agents apply\n"
        "                         mmio  an emulated board: the engine drives a verilated rs_dev block\n"
        "                               through the mmio backend; the block's link transfers travel to\n"
        "                               the peer agents' blocks over ZeroMQ (at most 4 ranks: 128 notify\n"
        "                               counters; 64 MiB of device memory; sim/zmq/ZMQ.md)\n"
        "  --quiet              do not print collective failures (the controller that spawned it does)\n"
        "  --fault SPEC         test hook of 'ringsim bringup': damage what this rank sends to one peer;\n"
        "                       SPEC = PEER:dead | PEER:slow:GBPS | PEER:corrupt | PEER:miswire:RANK, comma-separated\n"
        "Test hook: RINGSIM_ZMQ_FAULT=die:RANK:N | corrupt:RANK:N (kill this agent after its Nth data\n"
        "frame / flip a byte of its Nth data frame) when RANK is this agent's rank; with --backend mmio\n"
        "N counts link transfers.\n");
}

int rs_cmd_agent(int argc, char **argv)
{
    rs_agent_opts a = {.rank = -1, .timeout_ns = 30000000000ull, .connect_ns = 30000000000ull, .channels = 2,
                       .backend = "zmq"};
    for (int i = 0; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
            rs_cmd_agent_usage(stdout);
            return RS_EXIT_OK;
        }
        if (!strcmp(o, "--quiet")) {
            a.quiet = 1;
            continue;
        }
        if (!v) {
            fprintf(stderr, "ringsim agent: %s: missing value or unknown option (see 'ringsim agent --help')\n", o);
            return RS_EXIT_USAGE;
        }
        i++;
        if (!strcmp(o, "--ranktable")) {
            a.table_path = v;
        } else if (!strcmp(o, "--job")) {
            a.job = v;
        } else if (!strcmp(o, "--fault")) {
            a.fault_spec = v;
        } else if (!strcmp(o, "--backend")) {
            if (strcmp(v, "zmq") && strcmp(v, "mmio")) {
                fprintf(stderr, "ringsim agent: --backend: '%s' (allowed: zmq, mmio)\n", v);
                return RS_EXIT_USAGE;
            }
            a.backend = v;
        } else if (!strcmp(o, "--rank") || !strcmp(o, "--ranks") || !strcmp(o, "--channels")) {
            long long x;
            long long hi = !strcmp(o, "--channels") ? NCL_MAX_QUEUES : RS_RT_MAX_RANKS;
            if (rs_cli_int("ringsim agent", o, v, strcmp(o, "--rank") ? 1 : 0, hi, &x))
                return RS_EXIT_USAGE;
            if (!strcmp(o, "--rank"))
                a.rank = (int)x;
            else if (!strcmp(o, "--ranks"))
                a.nranks = (int)x;
            else
                a.channels = (uint32_t)x;
        } else if (!strcmp(o, "--timeout") || !strcmp(o, "--connect-timeout")) {
            double sec;
            if (rs_cli_seconds("ringsim agent", o, v, 1e6, &sec))
                return RS_EXIT_USAGE;
            *(!strcmp(o, "--timeout") ? &a.timeout_ns : &a.connect_ns) = (uint64_t)(sec * 1e9);
        } else {
            fprintf(stderr, "ringsim agent: unknown option '%s' (see 'ringsim agent --help')\n", o);
            return RS_EXIT_USAGE;
        }
    }
    return rs_agent_serve(&a, stderr);
}
