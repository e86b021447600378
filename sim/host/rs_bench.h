/* rs_bench.h — the nccl-tests-style sweep on the host backend: ranks are threads of this process. */
#ifndef RS_BENCH_H
#define RS_BENCH_H

#include <stdio.h>

#include "ncl/ncl.h"
#include "sweep/rs_sweep.h"
#include "rs_memprobe.h"
#include "report/rs_report.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Runs every collective of the sweep (rs_bench_run each, with a memcpy probe when
 *  s->memprobe), stopping at the first engine or usage error. Returns the worst exit status. */
int rs_host_run(const rs_sweep *s, rs_report *rep, FILE *err);

/** Runs every (dtype, op, size) row of `coll` on opts->nranks host ranks, checks and times
 *  them, and prints the table through rep. probe may be NULL (no memcpy column).
 *  Returns an exit status: RS_EXIT_OK, RS_EXIT_WRONG, RS_EXIT_USAGE (memory, sweep too long)
 *  or RS_EXIT_ENGINE (an engine error, printed on err with the rank and its detail). */
int rs_bench_run(const rs_sweep *opts, rs_coll coll, rs_report *rep, rs_memprobe *probe, FILE *err);

#ifdef __cplusplus
}
#endif
#endif
