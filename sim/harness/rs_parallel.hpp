// rs_parallel.hpp — a training step with tensor, pipeline and data parallelism at once (workload.training.parallel) on the model.
#pragma once

#include <cstdio>

#include "model/cluster.hpp"
#include "report/rs_report.h"
#include "rs_setup.hpp"
#include "rs_trace.hpp"

namespace rs {

/** One iteration of sc's training step with sc.workload.training's tp x pp x dp on cl (timing
 *  only): every group's traffic at once on the shared network, rank programs driven by the
 *  simulator (rs_program). Prints the report on out; RS_EXIT_OK or RS_EXIT_ENGINE (the failure
 *  on err, naming the rank, step and communicator). */
int run_parallel_training(const rs_scenario &sc, model::Cluster &cl, const EngineSetup &setup, Tracer *tracer,
                          FILE *out, FILE *err, rs_report *rep);

} // namespace rs
