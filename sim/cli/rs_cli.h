/* rs_cli.h — command-line options of `ringsim run` and their parser. */
#ifndef RS_CLI_H
#define RS_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "ncl/ncl.h"
#include "scenario/rs_scenario.h"
#include "sweep/rs_sweep.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What the flags of `ringsim run` (without a scenario) ask for. */
typedef struct rs_cli_run {
    rs_sweep sweep;
    const char *json_path; /**< NULL: no JSON */
    const char *junit_path; /**< NULL: no JUnit XML */
} rs_cli_run;

/** The defaults: rs_sweep_defaults, no JSON. */
void rs_cli_run_defaults(rs_cli_run *run);

/** Parses the arguments after `run`. Returns -1 when everything parsed (run it), else an
 *  exit status: RS_EXIT_OK after --help, RS_EXIT_USAGE after a message on `err`. */
int rs_cli_parse_run(int argc, char **argv, rs_cli_run *run, FILE *out, FILE *err);

/** 1 if arg is an option of `run` whose value is the next argument (not attached with = or -bVALUE). */
int rs_cli_option_has_arg(const char *arg);

/** Prints the usage of `ringsim run`. */
void rs_cli_usage_run(FILE *out);

/** A strict decimal integer in [lo, hi] for flag: 0, or -1 after "WHO: FLAG: 'TEXT' is not an
 *  integer / is out of range (allowed: LO..HI)" on stderr (who: "ringsim", "ringsim agent", ...). */
int rs_cli_int(const char *who, const char *flag, const char *text, long long lo, long long hi, long long *out);
/** Seconds, > 0 and <= max: 0, or -1 after "WHO: FLAG: 'TEXT' is not a time (allowed: ...)". */
int rs_cli_seconds(const char *who, const char *flag, const char *text, double max, double *out);
/** Loads a scenario: 0, or -1 after the loader's message (file:line: key: problem) on stderr. */
int rs_cli_load_scenario(const char *path, rs_scenario *sc);

/** Parses a byte size: digits with an optional K, M or G suffix (binary). 0 on success. */
int rs_cli_parse_size(const char *text, uint64_t *bytes);

#ifdef __cplusplus
}
#endif
#endif
