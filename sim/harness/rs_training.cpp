// rs_training.cpp — a data-parallel training step on the model (workload.training): the forward
// and backward passes as busy time taken from the model table, each fused gradient bucket
// allreduced on the simulated network as soon as back-propagation has produced it.
#include "rs_training.hpp"

#include <string>

#include <ncl/ncl_diag.h>

#include "sweep/rs_sweep.h"
#include "scenario/rs_fusion.h"

namespace rs {

namespace {

const uint64_t k_ps_per_us = 1000000;

uint64_t ps_of(double seconds) { return (uint64_t)(seconds * 1e12 + 0.5); }

} // namespace

/*
 * The model of one iteration, the same on every rank (data parallelism keeps ranks in step):
 * the forward pass (F), then back-propagation from the last tensor to the first; tensor i's
 * gradient is ready when its backward time, and every later tensor's, has passed. Bucket k
 * (tensors first_k..last_k) is ready with its first tensor, and its allreduce starts at
 * max(ready_k, end of the previous bucket's allreduce): one communication stream, as HCCL and
 * NCCL run fused gradients, so allreduces never overlap each other but do overlap the backward
 * compute still going on. The optimizer update waits for every bucket; its own time is not
 * modelled (it is small against the passes and the same with or without fusion). Compute is not
 * simulated event by event (the device's DMA engines and links stay free for the allreduces, and
 * compute does not take memory bandwidth from them): it is busy time on a timeline.
 */
int run_training(const rs_scenario &sc, model::Cluster &cl, Tracer *tracer, const BucketRun &run, FILE *out,
                 rs_report *rep, TrainResult *result)
{
    const rs_workload &w = sc.workload;
    const rs_training &t = w.training;
    const size_t n = t.tensors_count;
    const uint64_t es = ncl_dtype_size(w.dtype);
    const int p = cl.nranks();
    const double mb = (double)t.micro_batch;

    // gradients in the order back-propagation produces them (dp's numbering): tensor n-1 first
    std::vector<uint64_t> bytes(n);
    uint64_t total_bytes = 0, params = 0;
    for (size_t g = 0; g < n; g++) {
        bytes[g] = t.tensors[n - 1 - g].params * es;
        total_bytes += bytes[g];
        params += t.tensors[n - 1 - g].params;
    }
    rs_fusion fusion;
    char why[256];
    std::vector<dp_bucket> plan(n);
    uint32_t nb = 0;
    if (rs_fusion_parse(t.fusion, &fusion, why, sizeof why) == 0) // the loader checked both already
        nb = rs_fusion_buckets(&fusion, bytes.data(), (uint32_t)n, plan.data(), why, sizeof why);
    if (nb == 0) {
        std::fprintf(stderr, "ringsim: %s: workload.training.fusion: %s\n", sc.path, why);
        return RS_EXIT_USAGE;
    }

    // compute timeline of one iteration, in ps from its start: forward, then each tensor's
    // gradient ready at done[i] (back-propagation runs from tensor n-1 down to 0)
    uint64_t forward = 0;
    for (size_t i = 0; i < n; i++)
        forward += ps_of(t.tensors[i].forward * mb);
    std::vector<uint64_t> done(n + 1);
    done[n] = forward;
    for (size_t i = n; i-- > 0;)
        done[i] = done[i + 1] + ps_of(t.tensors[i].backward * mb);
    const uint64_t compute = done[0];

    std::fprintf(out, "# training: %s, %zu gradient tensors, %.2f M parameters, %s gradients (%.1f MB)\n",
                 t.model_name, n, (double)params / 1e6, ncl_dtype_name(w.dtype), (double)total_bytes / 1e6);
    std::fprintf(out, "# %d NPUs x micro-batch %d = %lld samples per iteration; fusion %s: %u bucket%s\n", p,
                 t.micro_batch, (long long)p * t.micro_batch, fusion.text, nb, nb == 1 ? "" : "s");
    std::fprintf(out, "# compute per iteration: forward %.1f us, backward %.1f us (the table's per-sample times "
                 "x %d)\n", (double)forward / k_ps_per_us, (double)(compute - forward) / k_ps_per_us,
                 t.micro_batch);

    TrainResult res;
    res.forward_us = (double)forward / k_ps_per_us;
    res.backward_us = (double)(compute - forward) / k_ps_per_us;
    const int iters = w.warmup + w.iters;
    for (int it = 0; it < iters; it++) {
        bool timed = it >= w.warmup;
        uint64_t t0 = cl.network().scheduler().now();
        if (tracer) {
            for (int r = 0; r < p; r++) {
                tracer->span(r, "forward", t0, t0 + forward);
                for (size_t i = n; i-- > 0;)
                    if (done[i] > done[i + 1])
                        tracer->span(r, t.tensors[i].name, t0 + done[i + 1], t0 + done[i]);
            }
        }
        std::vector<TrainBucket> buckets;
        uint64_t prev_end = t0;
        double comm_us = 0;
        for (uint32_t k = 0; k < nb; k++) { // bucket 0 is produced first
            // gradients plan[k].first..last are tensors n-1-last .. n-1-first; the bucket is
            // ready with its last gradient, the lowest tensor
            size_t first = n - 1 - plan[k].last, last = n - 1 - plan[k].first;
            uint64_t b = plan[k].bytes;
            uint64_t ready = t0 + done[first], start = ready > prev_end ? ready : prev_end;
            cl.idle_until(start);
            start = cl.network().scheduler().now();
            double us = 0;
            uint64_t wrong = 0;
            if (!run(b / es, &us, &wrong))
                return RS_EXIT_ENGINE;
            ncl_rank_state st;
            ncl_comm_state(cl.comm(0), &st);
            uint64_t end = start + ps_of(us * 1e-6);
            prev_end = end;
            comm_us += us;
            if (timed)
                res.wrong += wrong;
            buckets.push_back(TrainBucket{first, last, b, (double)(ready - t0) / k_ps_per_us,
                                          (double)(start - t0) / k_ps_per_us, us,
                                          (double)(end - t0) / k_ps_per_us, st.algo});
        }
        uint64_t iter_end = prev_end > t0 + compute ? prev_end : t0 + compute;
        cl.idle_until(iter_end);
        if (timed) {
            double iter_us = (double)(iter_end - t0) / k_ps_per_us;
            res.iteration_us += iter_us / w.iters;
            res.allreduce_us += comm_us / w.iters;
            res.buckets = buckets;
        }
    }
    res.exposed_us = res.iteration_us - (res.forward_us + res.backward_us);

    // what fusion saves: with one bucket nothing overlaps and the whole allreduce is exposed
    double single_us = -1;
    if (nb > 1) {
        uint64_t wrong = 0;
        if (!run(total_bytes / es, &single_us, &wrong))
            return RS_EXIT_ENGINE;
        res.wrong += wrong;
    }

    std::fprintf(out, "#\n# %7s %9s %14s %12s %12s %14s %12s  %s\n", "bucket", "tensors", "bytes", "ready(us)",
                 "start(us)", "allreduce(us)", "end(us)", "algorithm");
    for (const TrainBucket &b : res.buckets) {
        char range[48];
        std::snprintf(range, sizeof range, "%zu-%zu", b.first, b.last);
        std::fprintf(out, "  %7zu %9s %14llu %12.1f %12.1f %14.1f %12.1f  %s\n", &b - res.buckets.data(), range,
                     (unsigned long long)b.bytes, b.ready, b.start, b.allreduce, b.end,
                     ncl_algo_name((ncl_algo)b.algo));
    }
    double compute_us = res.forward_us + res.backward_us;
    double hidden = res.allreduce_us > 0 ? (res.allreduce_us - res.exposed_us) / res.allreduce_us : 1.0;
    hidden = hidden < 0 ? 0 : hidden; // rounding of the microsecond sums
    std::fprintf(out, "#\n# %13s %12s %14s %12s %11s %12s %11s %7s\n", "iteration(us)", "compute(us)",
                 "allreduce(us)", "exposed(us)", "hidden", "samples/s", "efficiency", "#wrong");
    std::fprintf(out, "  %13.1f %12.1f %14.1f %12.1f %10.1f%% %12.1f %10.1f%% %7s\n", res.iteration_us, compute_us,
                 res.allreduce_us, res.exposed_us, 100.0 * hidden, (double)p * mb / (res.iteration_us * 1e-6),
                 100.0 * compute_us / res.iteration_us, sc.payload_real ? std::to_string(res.wrong).c_str() : "N/A");
    std::fprintf(out, "# efficiency: samples/s against %d NPUs that never communicate (one NPU's compute-only "
                 "rate x %d); hidden: share of the allreduce time under back-propagation\n", p, p);
    if (single_us >= 0)
        std::fprintf(out, "# against one bucket (fusion single: the allreduce of all %.1f MB after back-propagation, "
                     "%.1f us, all exposed): %.1f us less exposed (%.1f %%), the iteration %.1f %% shorter\n",
                     (double)total_bytes / 1e6, single_us, single_us - res.exposed_us,
                     single_us > 0 ? 100.0 * (single_us - res.exposed_us) / single_us : 0.0,
                     100.0 * (single_us - res.exposed_us) / (compute_us + single_us));
    rs_train_summary sum{t.model_name, fusion.text, (int)nb, res.iteration_us, compute_us, res.allreduce_us,
                         res.exposed_us, hidden, (double)p * mb / (res.iteration_us * 1e-6),
                         compute_us / res.iteration_us, res.wrong};
    if (rep)
        rs_report_training(rep, &sum);
    if (result)
        *result = res;
    return res.wrong ? RS_EXIT_WRONG : RS_EXIT_OK;
}

} // namespace rs
