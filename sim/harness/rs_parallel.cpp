// rs_parallel.cpp — a training step with tensor, pipeline and data parallelism (Megatron-LM's
// layout) as rank programs on the model: the layers split into pp stages, each layer's compute
// into tp shards with two allreduces of its activations forward and two backward, micro-batches
// through the stages in a one-forward-one-backward schedule with activations sent point to point,
// each layer's MLP block a mixture of experts over ep replicas (all-to-alls around it), and each
// stage's gradient shard allreduced over the dp replicas after its last backward.
#include "rs_parallel.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <ncl/ncl_diag.h>

#include "rs_program.hpp"
#include "scenario/rs_fusion.h"
#include "scenario/rs_layers.h"
#include "sweep/rs_shape.h"
#include "sweep/rs_sweep.h"

namespace rs {

namespace {

const uint64_t k_ps_per_us = 1000000;

uint64_t ps_of(double seconds) { return (uint64_t)(seconds * 1e12 + 0.5); }

// The slots of a rank's program (rs_program): one call in flight per kind at a time.
enum Slot : uint8_t { kTp, kDp, kRecvF, kRecvB, kSendF, kSendB, kEp, kDpExpert, kSlots };

// One stage's work per micro-batch, in ps (the table's per-sample times x micro_batch / tp).
struct StageWork {
    std::vector<uint64_t> attn_f, rest_f, attn_b, rest_b; // per layer of the stage
    uint64_t head_f = 0, head_b = 0;                      // tensors after the last layer (last stage)
    uint64_t params = 0;                                  // gradient elements of the stage ...
    uint64_t expert_params = 0;                           // ... of them in the layers' MLP blocks
    // The gradients the dp groups reduce (the experts' go apart), in the order the backward pass
    // produces them (elements of this rank's shard), and how many are ready after each part of it:
    // the head, then per layer (indexed as attn_b) its MLP block and its attention block; the
    // first stage's embeddings come last, with no compute of their own.
    std::vector<uint64_t> grads;
    size_t head_ready = 0;
    std::vector<size_t> rest_ready, attn_ready;
};

// The stage's dense gradients in produced order (StageWork.grads and the ready counts).
void order_gradients(const rs_training &t, const rs_layers &l, size_t lo, size_t hi, bool first, bool last, int tp,
                     bool experts_apart, StageWork &w)
{
    auto take = [&](size_t a, size_t b, bool expert) { // tensors b-1 down to a
        for (size_t i = b; i-- > a;)
            if (!(expert && experts_apart) && t.tensors[i].params)
                w.grads.push_back(t.tensors[i].params / (uint64_t)tp);
    };
    if (last)
        take(l.after, t.tensors_count, false);
    w.head_ready = w.grads.size();
    w.rest_ready.assign(hi - lo, 0), w.attn_ready.assign(hi - lo, 0);
    for (size_t k = hi; k-- > lo;) {
        size_t a = l.first[k], m = rs_layers_split(&t, &l, k), b = l.first[k + 1];
        take(m, b, true);
        w.rest_ready[k - lo] = w.grads.size();
        take(a, m, false);
        w.attn_ready[k - lo] = w.grads.size();
    }
    if (first)
        take(0, l.first[0], false);
}

std::vector<StageWork> split_stages(const rs_training &t, const rs_layers &l, int pp, int tp, double mb,
                                    bool experts_apart)
{
    std::vector<StageWork> st((size_t)pp);
    auto f = [&](size_t a, size_t b) {
        double s = 0;
        for (size_t i = a; i < b; i++)
            s += t.tensors[i].forward;
        return ps_of(s * mb / tp);
    };
    auto bw = [&](size_t a, size_t b) {
        double s = 0;
        for (size_t i = a; i < b; i++)
            s += t.tensors[i].backward;
        return ps_of(s * mb / tp);
    };
    for (int s = 0; s < pp; s++) { // consecutive layers, the first stages one more when uneven
        size_t lo = l.count * (size_t)s / (size_t)pp, hi = l.count * (size_t)(s + 1) / (size_t)pp;
        StageWork &w = st[(size_t)s];
        for (size_t k = lo; k < hi; k++) {
            size_t a = l.first[k], m = rs_layers_split(&t, &l, k), b = l.first[k + 1];
            w.attn_f.push_back(f(a, m)), w.rest_f.push_back(f(m, b));
            w.attn_b.push_back(bw(a, m)), w.rest_b.push_back(bw(m, b));
            for (size_t i = a; i < b; i++)
                w.params += t.tensors[i].params, w.expert_params += i >= m ? t.tensors[i].params : 0;
        }
        order_gradients(t, l, lo, hi, s == 0, s == pp - 1, tp, experts_apart, w);
    }
    for (size_t i = 0; i < l.first[0]; i++) // embeddings: the first stage's gradients, no compute
        st[0].params += t.tensors[i].params;
    StageWork &last = st.back();
    last.head_f = f(l.after, t.tensors_count), last.head_b = bw(l.after, t.tensors_count);
    for (size_t i = l.after; i < t.tensors_count; i++)
        last.params += t.tensors[i].params;
    for (StageWork &w : st)
        w.params /= (uint64_t)tp, w.expert_params /= (uint64_t)tp; // each tensor-parallel rank holds a shard
    return st;
}

ProgStep compute(uint64_t ps, const char *name) { return ProgStep{ProgStep::Compute, 0, 0, 0, 0, ps, name}; }
ProgStep start(uint8_t call, uint8_t slot, uint16_t comm, uint64_t count, int32_t peer, const char *lane)
{
    return ProgStep{ProgStep::Start, call, slot, comm, peer, count, lane};
}
ProgStep wait(uint8_t slot) { return ProgStep{ProgStep::Wait, 0, slot, 0, 0, 0, nullptr}; }

} // namespace

int run_parallel_training(const rs_scenario &sc, model::Cluster &cl, const EngineSetup &setup, Tracer *tracer,
                          FILE *out, FILE *err, rs_report *rep)
{
    const rs_training &t = sc.workload.training;
    const int P = cl.nranks(), tp = t.tp, pp = t.pp, dp = t.dp, M = t.micro_batches, ep = t.ep > 1 ? t.ep : 1;
    rs_layers layers;
    char why[256];
    if (rs_layers_find(&t, &layers, why, sizeof why) != 0) { // the loader checked it already
        std::fprintf(err, "ringsim: %s: workload.training.model: %s\n", sc.path, why);
        return RS_EXIT_USAGE;
    }
    const std::vector<StageWork> stages = split_stages(t, layers, pp, tp, (double)t.micro_batch, ep > 1);
    const size_t nlayers = layers.count;
    rs_layers_free(&layers);
    // what a tensor-parallel allreduce and a pipeline send carry: a micro-batch's activations
    const uint64_t act = (uint64_t)t.sequence * t.hidden * (uint64_t)t.micro_batch;
    const ncl_dtype dt = sc.workload.dtype;
    const uint64_t es = ncl_dtype_size(dt);
    // uneven token routing: the experts' all-to-alls over alltoallv's skewed matrix
    const uint64_t *a2av_counts = nullptr;
    if (ep > 1 && t.ep_skew > 0) {
        rs_shape a2av;
        if (rs_shape_make_a2av(&a2av, ep, dt, t.ep_skew, act * es))
            a2av_counts = rs_shape_a2av_counts(&a2av);
    }

    // with fusion, each stage's dense gradients in buckets reduced as the last backward produces
    // them (Megatron-LM's overlapped gradient reduction); without, all of them after it
    const bool overlap = t.fusion != nullptr && dp > 1;
    std::vector<std::vector<dp_bucket>> plans((size_t)pp);
    if (overlap) {
        rs_fusion fusion;
        if (rs_fusion_parse(t.fusion, &fusion, why, sizeof why) != 0) { // the loader checked it already
            std::fprintf(err, "ringsim: %s: workload.training.fusion: %s\n", sc.path, why);
            return RS_EXIT_USAGE;
        }
        for (int s = 0; s < pp; s++) {
            const std::vector<uint64_t> &g = stages[(size_t)s].grads;
            std::vector<uint64_t> bytes(g.size());
            for (size_t i = 0; i < g.size(); i++)
                bytes[i] = g[i] * es;
            std::vector<dp_bucket> &plan = plans[(size_t)s];
            plan.resize(g.size());
            uint32_t nb = g.empty() ? 0 : rs_fusion_buckets(&fusion, bytes.data(), (uint32_t)g.size(), plan.data(),
                                                            why, sizeof why);
            if (nb == 0 && !g.empty()) {
                std::fprintf(err, "ringsim: %s: workload.training.fusion: stage %d: %s\n", sc.path, s, why);
                return RS_EXIT_USAGE;
            }
            plan.resize(nb);
        }
    }

    // the groups: tensor-parallel ranks consecutive, stages next, replicas outermost
    auto rank_of = [&](int d, int s, int x) { return (d * pp + s) * tp + x; };
    std::vector<std::unique_ptr<GroupSetup>> cfgs; // the communicators point at their rings
    std::vector<ncl_comm *> tp_comm((size_t)P, nullptr), dp_comm((size_t)P, nullptr), ep_comm((size_t)P, nullptr),
        edp_comm((size_t)P, nullptr); // edp: the replicas that hold the same experts
    ncl_result rc = NCL_SUCCESS;
    auto make_group = [&](const std::vector<int> &members, uint32_t tag, std::vector<ncl_comm *> &comms) {
        cfgs.emplace_back(new GroupSetup);
        group_setup(sc, setup, cl.network().topology(), members, *cfgs.back());
        const std::vector<int32_t> m32(members.begin(), members.end());
        for (int r : members)
            if (rc == NCL_SUCCESS)
                rc = ncl_comm_create_group(cl.comm(r), m32.data(), (int)m32.size(), tag, &cfgs.back()->cfg,
                                           &comms[(size_t)r]);
    };
    for (int d = 0; d < dp && tp > 1; d++)
        for (int s = 0; s < pp; s++) {
            std::vector<int> m;
            for (int x = 0; x < tp; x++)
                m.push_back(rank_of(d, s, x));
            make_group(m, 1, tp_comm);
        }
    // replicas first, first + stride, ... of stage s's tensor-parallel index x
    auto replicas = [&](int s, int x, int first, int count, int stride) {
        std::vector<int> m;
        for (int k = 0; k < count; k++)
            m.push_back(rank_of(first + k * stride, s, x));
        return m;
    };
    for (int s = 0; s < pp && dp > 1; s++)
        for (int x = 0; x < tp; x++) {
            make_group(replicas(s, x, 0, dp, 1), 2, dp_comm);
            for (int g = 0; g < dp / ep && ep > 1; g++) // experts: blocks of ep consecutive replicas
                make_group(replicas(s, x, g * ep, ep, 1), 3, ep_comm);
            for (int j = 0; j < ep && ep > 1 && dp / ep > 1; j++) // ... and the replicas of each expert
                make_group(replicas(s, x, j, dp / ep, ep), 4, edp_comm);
        }
    auto destroy = [&] {
        for (ncl_comm *c : tp_comm)
            ncl_comm_destroy(c);
        for (ncl_comm *c : dp_comm)
            ncl_comm_destroy(c);
        for (ncl_comm *c : ep_comm)
            ncl_comm_destroy(c);
        for (ncl_comm *c : edp_comm)
            ncl_comm_destroy(c);
    };
    if (rc != NCL_SUCCESS) {
        std::fprintf(err, "ringsim: %s: making the parallel groups: %s\n", sc.path, ncl_strerror(rc));
        destroy();
        return RS_EXIT_ENGINE;
    }

    Programs prog(cl, tracer, dt); // the model's elements move as the workload's dtype
    for (int r = 0; r < P; r++) {
        const int s = r / tp % pp;
        const StageWork &w = stages[(size_t)s];
        const uint16_t tpc = tp > 1 ? prog.add_comm(r, tp_comm[(size_t)r]) : 0;
        const uint16_t dpc = dp > 1 ? prog.add_comm(r, dp_comm[(size_t)r]) : 0;
        const uint16_t epc = ep > 1 ? prog.add_comm(r, ep_comm[(size_t)r]) : 0;
        const uint16_t edpc = edp_comm[(size_t)r] ? prog.add_comm(r, edp_comm[(size_t)r]) : 0;
        bool send_f = false, send_b = false; // a send of that direction still in flight
        int backwards = 0;                   // backward passes written so far: the M-th is the last
        size_t next_bucket = 0;              // overlap: the first bucket not started
        const std::vector<dp_bucket> &plan = plans[(size_t)s];
        auto buckets_ready = [&](size_t ready) { // the last backward has produced `ready` gradients
            if (!overlap || backwards != M)
                return;
            for (; next_bucket < plan.size() && plan[next_bucket].last < ready; next_bucket++) {
                ProgStep st = start(NCL_COLL_ALLREDUCE, kDp, dpc, plan[next_bucket].bytes / es, 0, "dp");
                st.queued = true; // behind the bucket before it, as on the group's stream
                prog.add(r, st);
            }
        };
        auto tp_ar = [&] {
            if (tp > 1)
                prog.add(r, start(NCL_COLL_ALLREDUCE, kTp, tpc, act, 0, "tp")), prog.add(r, wait(kTp));
        };
        auto a2a = [&] { // tokens to their experts and back: act / ep elements to each peer (on average)
            if (ep > 1) {
                ProgStep st = start(a2av_counts ? (uint8_t)ProgStep::AllToAllV : (uint8_t)NCL_COLL_ALLTOALL, kEp, epc,
                                    act / (uint64_t)ep, 0, "ep");
                st.counts = a2av_counts;
                prog.add(r, st), prog.add(r, wait(kEp));
            }
        };
        auto forward = [&] {
            if (s > 0)
                prog.add(r, start(ProgStep::Recv, kRecvF, 0, act, r - tp, "pp")), prog.add(r, wait(kRecvF));
            for (size_t k = 0; k < w.attn_f.size(); k++)
                prog.add(r, compute(w.attn_f[k], "forward")), tp_ar(), a2a(),
                    prog.add(r, compute(w.rest_f[k], "forward")), a2a(), tp_ar();
            if (w.head_f)
                prog.add(r, compute(w.head_f, "forward"));
            if (s < pp - 1) {
                if (send_f)
                    prog.add(r, wait(kSendF));
                prog.add(r, start(ProgStep::Send, kSendF, 0, act, r + tp, "pp"));
                send_f = true;
            }
        };
        auto backward = [&] {
            backwards++;
            if (s < pp - 1)
                prog.add(r, start(ProgStep::Recv, kRecvB, 0, act, r + tp, "pp")), prog.add(r, wait(kRecvB));
            if (w.head_b)
                prog.add(r, compute(w.head_b, "backward"));
            buckets_ready(w.head_ready);
            for (size_t k = w.attn_b.size(); k-- > 0;) {
                a2a(), prog.add(r, compute(w.rest_b[k], "backward")), buckets_ready(w.rest_ready[k]), a2a(), tp_ar();
                prog.add(r, compute(w.attn_b[k], "backward")), buckets_ready(w.attn_ready[k]), tp_ar();
            }
            buckets_ready(w.grads.size());
            if (s > 0) {
                if (send_b)
                    prog.add(r, wait(kSendB));
                prog.add(r, start(ProgStep::Send, kSendB, 0, act, r - tp, "pp"));
                send_b = true;
            }
        };
        // 1F1B: pp - 1 - s forwards first, then one forward and one backward in turn, then the rest
        const int warm = std::min(pp - 1 - s, M);
        for (int m = 0; m < warm; m++)
            forward();
        for (int m = 0; m < M - warm; m++)
            forward(), backward();
        for (int m = 0; m < warm; m++)
            backward();
        if (send_f)
            prog.add(r, wait(kSendF));
        if (send_b)
            prog.add(r, wait(kSendB));
        // the gradients: with experts, the MLP blocks' over the replicas of the same experts only
        const uint64_t dense = ep > 1 ? w.params - w.expert_params : w.params;
        if (dp > 1 && dense && !overlap)
            prog.add(r, start(NCL_COLL_ALLREDUCE, kDp, dpc, dense, 0, "dp"));
        if (edpc && w.expert_params)
            prog.add(r, start(NCL_COLL_ALLREDUCE, kDpExpert, edpc, w.expert_params, 0, "dp"));
        if (dp > 1 && dense && (!overlap || !plan.empty()))
            prog.add(r, wait(kDp));
        if (edpc && w.expert_params)
            prog.add(r, wait(kDpExpert));
    }
    const bool ok = prog.run();
    destroy();
    if (!ok) {
        std::fprintf(err, "ringsim: %s: the training step failed: %s\n", sc.path, prog.error().c_str());
        return RS_EXIT_ENGINE;
    }

    // per rank: compute, waits by kind, calls' times; the iteration ends with the last rank
    uint64_t iter = 0, compute_max = 0;
    double blocked[kSlots] = {}, calls[kSlots] = {};
    for (int r = 0; r < P; r++) {
        const ProgRankTimes &x = prog.times(r);
        iter = std::max(iter, x.end), compute_max = std::max(compute_max, x.compute);
        for (int k = 0; k < kSlots; k++)
            blocked[k] += (double)x.blocked_slot[k] / P, calls[k] += (double)x.calls_slot[k] / P;
    }
    auto us = [](double ps) { return ps / (double)k_ps_per_us; };
    const double tp_wait = blocked[kTp], dp_wait = blocked[kDp] + blocked[kDpExpert], ep_wait = blocked[kEp];
    const double pp_wait = blocked[kRecvF] + blocked[kRecvB] + blocked[kSendF] + blocked[kSendB];
    double comm = 0;
    for (int k = 0; k < kSlots; k++)
        comm += calls[k];
    const double exposed = tp_wait + pp_wait + dp_wait + ep_wait;
    const double samples = (double)dp * M * t.micro_batch;

    const StageWork &w0 = stages[0];
    uint64_t f0 = 0, b0 = 0;
    for (size_t k = 0; k < w0.attn_f.size(); k++)
        f0 += w0.attn_f[k] + w0.rest_f[k], b0 += w0.attn_b[k] + w0.rest_b[k];
    std::fprintf(out, "# training: %s, tp %d x pp %d x dp %d = %d NPUs; %zu layers in %d stages; %d micro-batches of "
                 "%d sample%s (1F1B); %s\n", t.model_name, tp, pp, dp, P, nlayers, pp, M, t.micro_batch,
                 t.micro_batch == 1 ? "" : "s", ncl_dtype_name(dt));
    std::fprintf(out, "# per micro-batch on stage 0: forward %.1f us, backward %.1f us of compute (the table's times "
                 "x %d / tp); activations %.2f MB (sequence %u x hidden %u x %d): %s%s\n", us((double)f0),
                 us((double)b0), t.micro_batch, (double)(act * ncl_dtype_size(dt)) / 1e6, t.sequence, t.hidden,
                 t.micro_batch, tp > 1 ? "4 tensor-parallel allreduces per layer" : "no tensor parallelism",
                 pp > 1 ? ", a pipeline send each way per stage boundary" : "");
    if (ep > 1)
        std::fprintf(out, "# experts: each layer's MLP block over %d replicas, 4 all-to-alls of the activations per "
                     "layer%s; stage 0's expert gradients %.1f MB allreduced over the %d replicas of the same experts\n",
                     ep, a2av_counts ? " (alltoallv: uneven routing, blocks (1 +- ep_skew) x the mean)" : "",
                     (double)(w0.expert_params * ncl_dtype_size(dt)) / 1e6, dp / ep);
    if (dp > 1 && overlap)
        std::fprintf(out, "# gradients: stage 0's shard %.1f MB allreduced over %d replicas in %zu bucket%s (fusion %s) "
                     "as its last backward produces them\n",
                     (double)((ep > 1 ? w0.params - w0.expert_params : w0.params) * es) / 1e6, dp, plans[0].size(),
                     plans[0].size() == 1 ? "" : "s", t.fusion);
    else if (dp > 1)
        std::fprintf(out, "# gradients: stage 0's shard %.1f MB allreduced over %d replicas after its last backward\n",
                     (double)((ep > 1 ? w0.params - w0.expert_params : w0.params) * es) / 1e6, dp);
    std::fprintf(out, "#\n# %13s %12s %12s %14s %14s %14s%s %12s %11s\n", "iteration(us)", "compute(us)", "comm(us)",
                 "tp waits(us)", "pp waits(us)", "dp waits(us)", ep > 1 ? "   ep waits(us)" : "", "samples/s",
                 "efficiency");
    char epw[24] = "";
    if (ep > 1)
        std::snprintf(epw, sizeof epw, " %14.1f", us(ep_wait));
    std::fprintf(out, "  %13.1f %12.1f %12.1f %14.1f %14.1f %14.1f%s %12.1f %10.1f%%\n", us((double)iter),
                 us((double)compute_max), us(comm), us(tp_wait), us(pp_wait), us(dp_wait), epw,
                 samples / (us((double)iter) * 1e-6), 100.0 * (double)compute_max / (double)iter);
    std::fprintf(out, "# compute: the busiest rank's; comm: the calls' times and waits: what a rank spent blocked on "
                 "each group's calls, averaged over the ranks (pp waits hold the pipeline's bubbles); "
                 "efficiency: compute / iteration\n");
    char what[128];
    std::snprintf(what, sizeof what, "parallel tp %d x pp %d x dp %d%s, %d micro-batches", tp, pp, dp,
                  ep > 1 ? " (experts over ep replicas)" : "", M);
    rs_train_summary sum{t.model_name, what, pp, us((double)iter), us((double)compute_max), us(comm), us(exposed),
                         comm > 0 ? std::max(0.0, 1.0 - exposed / comm) : 1.0, samples / (us((double)iter) * 1e-6),
                         (double)compute_max / (double)iter, 0};
    if (rep)
        rs_report_training(rep, &sum);
    return RS_EXIT_OK;
}

} // namespace rs
