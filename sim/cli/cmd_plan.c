/* cmd_plan.c — `ringsim plan SCENARIO [--simulate]`: its options; the table is sim/harness/rs_plan.cpp. */
#include "rs_cmd.h"

#include <string.h>

#include "harness/rs_plan.h"
#include "rs_cli.h"

void rs_cmd_plan_usage(FILE *out)
{
    fprintf(out,
        "usage: ringsim plan SCENARIO [--simulate]\n"
        "\n"
        "For every collective and size of the scenario's workload: each algorithm's predicted time\n"
        "from the cost model over the topology's links and routes (what auto chooses with) and the\n"
        "one auto picks (*), in place and out of place. Times in us.\n"
        "  --simulate   also run every algorithm on the model beside its prediction, and say how far\n"
        "               auto's pick is from the best simulated algorithm\n"
        "  -h, --help   this text\n");
}

int rs_cmd_plan(int argc, char **argv)
{
    const char *path = NULL;
    int simulate = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--simulate") == 0) {
            simulate = 1;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            rs_cmd_plan_usage(stdout);
            return RS_EXIT_OK;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "ringsim: plan: unknown option '%s' (allowed: --simulate, --help)\n", argv[i]);
            return RS_EXIT_USAGE;
        } else if (path) {
            fprintf(stderr, "ringsim: plan: one scenario at a time (got '%s' and '%s')\n", path, argv[i]);
            return RS_EXIT_USAGE;
        } else {
            path = argv[i];
        }
    }
    if (!path) {
        fprintf(stderr, "usage: ringsim plan SCENARIO [--simulate]\n");
        return RS_EXIT_USAGE;
    }
    rs_scenario sc;
    if (rs_cli_load_scenario(path, &sc) != 0)
        return RS_EXIT_USAGE;
    int status = rs_plan_print(&sc, simulate, stdout, stderr);
    rs_scenario_free(&sc);
    return status;
}
