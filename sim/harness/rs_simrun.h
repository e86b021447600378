/* rs_simrun.h — `ringsim run SCENARIO`: the scenario's sweep on the SystemC model. */
#ifndef RS_SIMRUN_H
#define RS_SIMRUN_H

#include <stdint.h>
#include <stdio.h>

#include "model/rs_spec.h"
#include "sweep/rs_sweep.h"
#include "report/rs_report.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The sweep a scenario's workload means on the model (rs_scenario_sweep, with one channel per
 *  logical ring found in the topology unless the workload says how many). */
void rs_simrun_sweep(const rs_scenario *sc, rs_sweep *s);

/** What `ringsim run SCENARIO` reports besides the tables (all optional: zero = off). */
typedef struct rs_simrun_extras {
    int stats;                 /**< print events, events/s and wall time */
    int links;                 /**< per-link summary: 0 none, > 0 the top N by busy %, < 0 all */
    const char *trace_path;    /**< Chrome/Perfetto trace JSON of every task, or NULL */
    uint64_t trace_max_events; /**< stop tracing after this many events (0: 4 million) */
    int progress;              /**< a progress line on err, overwritten in place (a terminal) */
    /** Called with every row as it is printed (for --csv and --plot). */
    void (*on_row)(void *ud, const rs_row *row);
    void *row_ud;
    const char *waves_path;    /**< VCD of the RTL devices (device.fidelity rtl), or NULL */
    const char *chakra_prefix; /**< run the Chakra traces PREFIX.<rank>.et instead of the workload, or NULL */
    const char *chakra_groups; /**< their process groups: ASTRA-sim's comm group file (JSON), or NULL */
} rs_simrun_extras;

/** Builds the model from sc, runs every collective of its workload over its sizes with the
 *  unchanged engine on every NPU (checking results bit-exactly with a real payload) and prints
 *  the tables through rep with simulated times, then what x asks for (NULL: nothing).
 *  Returns RS_EXIT_OK, RS_EXIT_WRONG, RS_EXIT_USAGE (the model rejected the scenario) or
 *  RS_EXIT_ENGINE (an engine error, printed on err with rank, collective and link). Runs once
 *  per process (one SystemC simulation). */
int rs_simrun(const rs_scenario *sc, rs_report *rep, const rs_simrun_extras *x, FILE *err);

#ifdef __cplusplus
}
#endif
#endif
