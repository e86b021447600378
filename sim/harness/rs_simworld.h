/* rs_simworld.h — from C: run host-style rank programs on a scenario's simulated machine. */
#ifndef RS_SIMWORLD_H
#define RS_SIMWORLD_H

#include <ncl/ncl_host.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Like ncl_host_run_cfg, but rank r's communicator drives NPU r of the scenario at
 *  scenario_path (a const char *; its rank count must be nranks), with real data and simulated
 *  time; the engine's settings come from the scenario, deterministic and timeout_ns from comm.
 *  Prints the simulated time on stdout. One simulation per process: call it once. */
ncl_result rs_simworld_run_scenario(void *scenario_path, const ncl_config *comm, int nranks, ncl_host_fn fn,
                                    void *arg, ncl_result *results);

#ifdef __cplusplus
}
#endif
#endif
