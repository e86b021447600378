/* cmd_bringup.c — `ringsim bringup`: its options; the link tests are sim/zmq/rs_bringup.c. */
#include "rs_cmd.h"

#include "rs_cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "zmq/rs_bringup.h"

void rs_cmd_bringup_usage(FILE *out)
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
        "  --slow-factor F      slow = every sample, and a re-test's, below F x the links' median\n"
        "                       bandwidth (default 0.5; lowered by the run's noise: see below)\n"
        "  --timeout S          how long a rank waits for each transfer (default 2); also the engine's\n"
        "                       timeout of spawned agents (others keep their own --timeout)\n"
        "  --connect-timeout S  how long agents may take to come up (default 30)\n"
        "  --bytes B            bandwidth transfer size (default 2M; K, M, G suffixes)\n"
        "  --slot B             size of each pattern transfer (default 64K)\n"
        "  --reps N             timed bandwidth transfers per link: its median, min, max (default 5)\n"
        "  --pings N            ping-pong round trips per link (default 20)\n"
        "  --ring-bytes B       size of each ring allreduce (default 64K)\n"
        "  --seed S             seed of the pseudo-random pattern (default 1)\n"
        "  --json FILE          write the results as JSON\n"
        "  --junit FILE         write JUnit XML: a testcase per link ('link 0->1'), ring allreduce and\n"
        "                       unexpected rank; a bad one fails with its verdict and reason\n"
        "  --shutdown-agents    with --ranktable: send SHUTDOWN at the end\n"
        "  --inject A-B:FAULT   test hook (spawned agents only): damage the link A->B; FAULT = dead,\n"
        "                       slow:GBPS, corrupt or miswire:C (see 'ringsim agent --fault')\n"
        "  --agent-backend B    spawned agents' HAL: zmq (default) or mmio (emulated boards: a verilated\n"
        "                       block per agent, at most 4 ranks, no corrupt injection; sim/zmq/ZMQ.md)\n"
        "Slow and dead (the noise model): load only ever slows a transfer down, by a factor that varies.\n"
        "A link's N = --reps timed transfers (after an untimed warm-up) give its median, min and max\n"
        "GB/s; M = the median of the links' medians; the run's noise s = 1.4826 x the median of\n"
        "|ln(sample / its link's median)| over every sample; T = min(F, e^(-2 s)) x M. A link with every\n"
        "sample below T is a suspect, re-tested alone with 2N more transfers after all links: slow only\n"
        "if those all stay below T too. A transfer not there after --timeout is lost, not late (load\n"
        "delays one by milliseconds): a link that loses any of its 1 + N + 4 transfers is dead.\n"
        "Exit status: 0 every expected link good, 1 a link or ring is bad or a rank is missing,\n"
        "2 bad arguments or files, 130 interrupted.\n");
}

static int bu_parse_bytes(const char *flag, const char *v, uint64_t lo, uint64_t hi, uint64_t *out)
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
        fprintf(stderr, "ringsim bringup: %s: '%s' (allowed: %llu..%llu bytes, a multiple of 8; K, M, G suffixes)\n", flag,
                v, (unsigned long long)lo, (unsigned long long)hi);
        return -1;
    }
    *out = (uint64_t)x;
    return 0;
}

/* rs_cli_int into a long. */
static int rs_cli_long(const char *who, const char *flag, const char *text, long lo, long hi, long *out)
{
    long long v;
    if (rs_cli_int(who, flag, text, lo, hi, &v))
        return -1;
    *out = (long)v;
    return 0;
}

int rs_cmd_bringup(int argc, char **argv)
{
    rs_bringup_opts opts, *o = &opts;
    static const char *const with_value[] = {"--ranks", "--ranktable", "--expect", "--slow-factor", "--timeout",
                                              "--connect-timeout", "--bytes", "--slot", "--reps", "--pings",
                                              "--ring-bytes", "--seed", "--json", "--junit", "--inject",
                                              "--agent-backend"};
    rs_bringup_defaults(o);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            rs_cmd_bringup_usage(stdout);
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
            fprintf(stderr, "ringsim bringup: unknown option '%s' (see 'ringsim bringup --help')\n", a);
            return RS_EXIT_USAGE;
        }
        if (!v) {
            fprintf(stderr, "ringsim bringup: %s: missing value\n", a);
            return RS_EXIT_USAGE;
        }
        i++;
        int bad = 0;
        if (!strcmp(a, "--ranks"))
            bad = rs_cli_long("ringsim bringup", a, v, 2, RS_BU_MAX_LOCAL, &o->nranks);
        else if (!strcmp(a, "--ranktable"))
            o->table_path = v;
        else if (!strcmp(a, "--expect"))
            o->expect_spec = v;
        else if (!strcmp(a, "--json"))
            o->json_path = v;
        else if (!strcmp(a, "--junit"))
            o->junit_path = v;
        else if (!strcmp(a, "--agent-backend")) {
            o->agent_backend = v;
            if (strcmp(v, "zmq") && strcmp(v, "mmio")) {
                fprintf(stderr, "ringsim bringup: --agent-backend: '%s' (allowed: zmq, mmio)\n", v);
                bad = 1;
            }
        }
        else if (!strcmp(a, "--timeout"))
            bad = rs_cli_seconds("ringsim bringup", a, v, 1e5, &o->timeout_s);
        else if (!strcmp(a, "--connect-timeout"))
            bad = rs_cli_seconds("ringsim bringup", a, v, 1e5, &o->connect_s);
        else if (!strcmp(a, "--bytes"))
            bad = bu_parse_bytes(a, v, 8, 64u << 20, &o->bytes);
        else if (!strcmp(a, "--slot"))
            bad = bu_parse_bytes(a, v, 8, 1u << 20, &o->slot);
        else if (!strcmp(a, "--ring-bytes"))
            bad = bu_parse_bytes(a, v, 8, 64u << 20, &o->ring_bytes);
        else if (!strcmp(a, "--reps"))
            bad = rs_cli_long("ringsim bringup", a, v, 1, 100, &o->reps);
        else if (!strcmp(a, "--pings"))
            bad = rs_cli_long("ringsim bringup", a, v, 0, 1000, &o->pings);
        else if (!strcmp(a, "--seed"))
            bad = rs_cli_long("ringsim bringup", a, v, 0, 1L << 40, &o->seed);
        else if (!strcmp(a, "--slow-factor")) {
            char *end = NULL;
            o->slow_factor = strtod(v, &end);
            if (end == v || *end || !(o->slow_factor > 0) || o->slow_factor >= 1) {
                fprintf(stderr, "ringsim bringup: --slow-factor: '%s' (allowed: 0 < F < 1)\n", v);
                bad = 1;
            }
        } else if (o->ninject < RS_BU_MAX_INJECT) {
            o->inject[o->ninject++] = v;
        } else {
            fprintf(stderr, "ringsim bringup: --inject: more than %d\n", RS_BU_MAX_INJECT);
            bad = 1;
        }
        if (bad)
            return RS_EXIT_USAGE;
    }
    if (o->table_path && o->nranks) {
        fprintf(stderr, "ringsim bringup: --ranks and --ranktable (allowed: one of them)\n");
        return RS_EXIT_USAGE;
    }
    if (!strcmp(o->agent_backend, "mmio") && o->table_path) {
        fprintf(stderr, "ringsim bringup: --agent-backend mmio: only for spawned agents (allowed: leave it out with "
                "--ranktable: those agents run the backend they were started with)\n");
        return RS_EXIT_USAGE;
    }
    if (!strcmp(o->agent_backend, "mmio") && o->nranks > 4) {
        fprintf(stderr, "ringsim bringup: --agent-backend mmio: --ranks %ld (allowed: 2..4: the block's 128 notify "
                "counters give each peer 128 / ranks ids, the engine needs 32)\n", o->nranks);
        return RS_EXIT_USAGE;
    }
    if (o->table_path && o->ninject) {
        fprintf(stderr, "ringsim bringup: --inject works on spawned agents only (allowed with --ranktable: start the "
                "agents with --fault)\n");
        return RS_EXIT_USAGE;
    }
    return rs_bringup(o, stdout, stderr);
}

