/* rs_zmqrun.h — `ringsim run --backend zmq`: the controller of a multi-process run. */
#ifndef RS_ZMQRUN_H
#define RS_ZMQRUN_H

#include <stdio.h>

#include "scenario/rs_scenario.h"
#include "sweep/rs_sweep.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Where the agents are and how to reach them. */
typedef struct rs_zmqrun_config {
    const char *table_path;       /**< a rank table of running agents; NULL: spawn sweep->nranks local ones */
    double connect_s;             /**< how long agents may take to reach each other */
    const char *agent_backend;    /**< spawned agents' --backend: "zmq" or "mmio" (emulated boards) */
    int shutdown_remote;          /**< SHUTDOWN the rank table's agents at the end too */
    int ranks_given;              /**< sweep->nranks was given (--ranks): it must match the table */
    const rs_scenario *scenario;  /**< the workload's scenario, for the header lines (may be NULL) */
    const char *junit_path;       /**< JUnit XML of the rows too (may be NULL) */
} rs_zmqrun_config;

/** Spawns sweep->nranks local agents over ipc:// (or talks to the agents cfg's rank table lists),
 *  runs the sweep, prints the nccl-tests table with #wrong (and JSON to json_path) and returns
 *  the exit status. Leaves no spawned agent behind on success, failure or SIGINT/SIGTERM. */
int rs_zmqrun(const rs_zmqrun_config *cfg, const rs_sweep *sweep, const char *json_path, FILE *out, FILE *err);

#ifdef __cplusplus
}
#endif
#endif
