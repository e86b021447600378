/* rs_compare.h — `ringsim compare A B`: two scenarios side by side with time ratios. */
#ifndef RS_COMPARE_H
#define RS_COMPARE_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Runs one scenario with the given run options (`ringsim run SCENARIO ...`); an exit status. */
typedef int (*rs_compare_run_fn)(const char *path, int argc, char **argv);

/** `compare A B [--json FILE] [--plot FILE] [--fusion-a SPEC] [--fusion-b SPEC]`: argv after
 *  "compare" (--fusion-a/-b: a training scenario's fusion for that side, as run --fusion). Each scenario runs in a
 *  child process (one SystemC simulation per process) writing JSON to a temporary file; the
 *  parent reads both and prints time A, time B, busbw A, busbw B and B/A per collective and
 *  size. Non-zero when either run failed (naming it) or on a usage error. */
int rs_compare_cmd(int argc, char **argv, rs_compare_run_fn run, FILE *out, FILE *err);

#ifdef __cplusplus
}
#endif
#endif
