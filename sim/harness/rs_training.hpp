// rs_training.hpp — a data-parallel training step on the model: compute as busy time, bucket allreduces as soon as back-propagation allows.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <vector>

#include "model/cluster.hpp"
#include "model/rs_spec.h"
#include "report/rs_report.h"
#include "rs_trace.hpp"

namespace rs {

/** Runs one allreduce of `count` elements on every rank, starting now; sets the simulated time
 *  (us) and the wrong elements (0 without a payload). false: an engine error (already printed). */
using BucketRun = std::function<bool(uint64_t count, double *us, uint64_t *wrong)>;

/** One fused gradient bucket of the last iteration (times from the iteration's start, us). */
struct TrainBucket {
    size_t first, last;   // tensors first..last, registration order
    uint64_t bytes;
    double ready, start, allreduce, end;
    int algo;             // what the engine ran (ncl_algo)
};

/** What a training run measured (per iteration, averaged over the timed iterations). */
struct TrainResult {
    double forward_us = 0, backward_us = 0; // compute
    double iteration_us = 0;
    double allreduce_us = 0;                // the buckets' allreduces added up
    double exposed_us = 0;                  // iteration - compute: communication not hidden
    uint64_t wrong = 0;
    std::vector<TrainBucket> buckets;
};

/** The workload's training step on cl: warm-up then timed iterations. Prints the report on out.
 *  Returns RS_EXIT_OK, RS_EXIT_WRONG or RS_EXIT_ENGINE (run returned false). */
int run_training(const rs_scenario &sc, model::Cluster &cl, Tracer *tracer, const BucketRun &run, FILE *out,
                 rs_report *rep, TrainResult *result = nullptr);

} // namespace rs
