// rs_chakra_run.hpp — a Chakra execution trace (one graph per rank) run on the model: compute nodes as busy time, collective nodes on the simulated network.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>

#include "model/cluster.hpp"
#include "scenario/rs_scenario.h"
#include "rs_setup.hpp"
#include "rs_trace.hpp"

namespace rs {

/** Runs one collective of `bytes` (sized as `ringsim run`'s rows: nccl-tests' convention) on
 *  every rank, starting now, in place; sets the simulated time (us), what the engine ran
 *  (ncl_algo) and the wrong elements (0 without a payload). false: an engine error (printed). */
using CollRun = std::function<bool(ncl_coll coll, uint64_t bytes, double *us, int *algo, uint64_t *wrong)>;

/** Loads PREFIX.<rank>.et for every rank of cl, runs the graphs and prints the collectives'
 *  table and the totals on out. Traces of world collectives run call by call with `run` (real
 *  payload when the scenario has one); traces with point-to-point nodes or collectives of process
 *  groups (pg_name, whose ranks `groups_path` gives: ASTRA-sim's comm group file, or the traces'
 *  process_group:init nodes) run as every rank's program at once on rs::Programs, each call's
 *  result checked with a real payload. Returns RS_EXIT_OK, RS_EXIT_WRONG,
 *  RS_EXIT_USAGE (a trace refused, its message on err) or RS_EXIT_ENGINE. */
int run_chakra(const rs_scenario &sc, model::Cluster &cl, const EngineSetup &setup, Tracer *tracer,
               const char *prefix, const char *groups_path, const CollRun &run, FILE *out, FILE *err);

} // namespace rs
