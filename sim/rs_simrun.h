/* rs_simrun.h — `ringsim run SCENARIO`: the scenario's sweep on the SystemC model. */
#ifndef RS_SIMRUN_H
#define RS_SIMRUN_H

#include <stdio.h>

#include "model/rs_spec.h"
#include "rs_cli.h"
#include "rs_report.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The rs_opts a scenario's workload means (for the report's header and JSON). */
void rs_simrun_opts(const rs_scenario *sc, rs_opts *o);

/** Builds the model from sc, runs every collective of its workload over its sizes with the
 *  unchanged engine on every NPU (checking results bit-exactly with a real payload) and prints
 *  the tables through rep with simulated times. stats: print events, events/s and wall time.
 *  Returns RS_EXIT_OK, RS_EXIT_WRONG, RS_EXIT_USAGE (the model rejected the scenario) or
 *  RS_EXIT_ENGINE (an engine error, printed on err with rank, collective and link). Runs once
 *  per process (one SystemC simulation). */
int rs_simrun(const rs_scenario *sc, rs_report *rep, int stats, FILE *err);

#ifdef __cplusplus
}
#endif
#endif
