/* cmd_validate.c — `ringsim validate [-v] [--keys] [--junit FILE] FILE...`: the flags; loading, the summary, the dump and the key reference are the scenario wing's. */
#include "rs_cmd.h"

#include <string.h>

#include "report/rs_junit.h"
#include "scenario/rs_scenario.h"

void rs_cmd_validate_usage(FILE *out)
{
    fprintf(out,
        "usage: ringsim validate [-v] [--junit FILE] FILE...\n"
        "       ringsim validate --keys\n"
        "\n"
        "Checks scenario files without running them: every key, unit, range and link.\n"
        "Prints 'FILE: ok (summary)' for a good file; for a bad one, one line on stderr:\n"
        "  FILE:LINE: KEY: PROBLEM (allowed: ...)\n"
        "Exit status: 0 when every file is valid, 2 otherwise (all files are checked).\n"
        "\n"
        "  -v, --verbose   also print each scenario as resolved: every default filled in\n"
        "  --keys          print the reference of every key (markdown), as in scenarios/README.md\n"
        "  --junit FILE    also write JUnit XML to FILE: a testcase per scenario, the message in a failed one\n"
        "  -h, --help      this text\n");
}

/* An argument that is an option: "-x" or "--x" before a "--" (a lone "-" is a file name). */
static int rs_is_option(const char *a, int opts_done) { return !opts_done && a[0] == '-' && a[1] != '\0'; }

int rs_cmd_validate(int argc, char **argv)
{
    int verbose = 0, keys = 0, nfiles = 0, opts_done = 0;
    const char *junit_path = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!rs_is_option(a, opts_done)) {
            nfiles++;
        } else if (strcmp(a, "--junit") == 0) {
            if (i + 1 >= argc || argv[i + 1][0] == '\0') {
                fprintf(stderr, "ringsim: validate: --junit: missing file name (allowed: a path to write)\n");
                return RS_EXIT_USAGE;
            }
            junit_path = argv[++i];
        } else if (strcmp(a, "--") == 0) {
            opts_done = 1;
        } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            verbose = 1;
        } else if (strcmp(a, "--keys") == 0) {
            keys = 1;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            rs_cmd_validate_usage(stdout);
            return RS_EXIT_OK;
        } else {
            fprintf(stderr, "ringsim: validate: unknown option '%s' (allowed: -v, --keys, --junit FILE, --help)\n", a);
            return RS_EXIT_USAGE;
        }
    }
    if (keys) {
        rs_scenario_print_keys(stdout);
        if (nfiles == 0)
            return RS_EXIT_OK;
    }
    if (nfiles == 0) {
        fprintf(stderr, "ringsim: validate: no scenario file given (allowed: one or more YAML files; see "
                        "'ringsim validate --help')\n");
        return RS_EXIT_USAGE;
    }
    /* every file is checked, whatever the ones before it were: one bad file makes the status 2 */
    int status = RS_EXIT_OK;
    rs_junit *junit = junit_path ? rs_junit_new("ringsim validate") : NULL;
    if (junit_path && !junit) {
        fprintf(stderr, "ringsim: validate: --junit: out of memory\n");
        return RS_EXIT_USAGE;
    }
    opts_done = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (rs_is_option(a, opts_done)) {
            opts_done |= strcmp(a, "--") == 0;
            i += strcmp(a, "--junit") == 0; /* its file name */
            continue;
        }
        rs_scenario sc;
        char msg[RS_SCENARIO_ERRLEN];
        int bad = rs_scenario_load(a, &sc, msg, sizeof msg) != 0;
        if (junit)
            rs_junit_add(junit, "ringsim.validate", a, -1, bad ? msg : NULL);
        if (bad) {
            fprintf(stderr, "%s\n", msg);
            status = RS_EXIT_USAGE;
            continue;
        }
        char summary[256];
        rs_scenario_summary(&sc, summary, sizeof summary);
        printf("%s: ok (%s)\n", a, summary);
        if (verbose)
            rs_scenario_dump(&sc, stdout);
        rs_scenario_free(&sc);
    }
    fflush(stdout);
    if (junit && rs_junit_write(junit, junit_path, stderr) != 0)
        status = RS_EXIT_USAGE;
    return status;
}
