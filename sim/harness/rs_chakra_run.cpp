// rs_chakra_run.cpp — a Chakra execution trace on the model (`ringsim run SCENARIO --chakra PREFIX`):
// every rank's graph in dependency order, compute as busy time on its lane, each collective on
// the simulated network with the engine on every NPU.
#include "rs_chakra_run.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <vector>

#include <ncl/ncl_diag.h>

#include "chakra/rs_chakra.h"
#include "sweep/rs_sweep.h"

namespace rs {

namespace {

const uint64_t k_ps_per_us = 1000000;

struct Trace {
    rs_et_trace t{};
    std::vector<size_t> order;       // nodes in dependency order, file order among the ready
    std::vector<size_t> colls;       // the collective nodes, in that order
    std::vector<uint64_t> end;       // per node: finish time in ps from the start, UINT64_MAX: not yet
    ~Trace() { rs_et_free(&t); }
};

// Kahn's algorithm taking the lowest file index among the ready nodes: the order the trace's
// author wrote wherever the dependencies leave a choice (rs_et_load refused cycles).
void sort_nodes(Trace &tr)
{
    const rs_et_trace &t = tr.t;
    std::vector<size_t> indeg(t.n, 0);
    std::vector<std::vector<size_t>> users(t.n);
    for (size_t i = 0; i < t.n; i++)
        for (size_t d = 0; d < t.nodes[i].ndeps; d++) {
            users[t.nodes[i].deps[d]].push_back(i); // (rs_et_load made the ids indices)
            indeg[i]++;
        }
    std::vector<size_t> ready;
    for (size_t i = 0; i < t.n; i++)
        if (!indeg[i])
            ready.push_back(i);
    while (!ready.empty()) {
        auto lowest = std::min_element(ready.begin(), ready.end());
        size_t i = *lowest;
        ready.erase(lowest);
        tr.order.push_back(i);
        if (t.nodes[i].kind == RS_ET_COLLECTIVE)
            tr.colls.push_back(i);
        for (size_t u : users[i])
            if (--indeg[u] == 0)
                ready.push_back(u);
    }
    tr.end.assign(t.n, UINT64_MAX);
}

ncl_coll engine_coll(int comm_type)
{
    switch (comm_type) {
    case RS_ET_REDUCE: return NCL_COLL_REDUCE;
    case RS_ET_ALL_GATHER: return NCL_COLL_ALLGATHER;
    case RS_ET_BROADCAST: return NCL_COLL_BROADCAST;
    case RS_ET_ALL_TO_ALL: return NCL_COLL_ALLTOALL;
    case RS_ET_REDUCE_SCATTER: return NCL_COLL_REDUCE_SCATTER;
    default: return NCL_COLL_ALLREDUCE; // ALL_REDUCE, and BARRIER as a one-element allreduce
    }
}

// Runs every node of the rank but collectives whose dependencies are done, in dependency order
// (one pass: a node's dependencies come before it), each compute node on its lane (NPU or host:
// one op at a time each) once the lane is free.
void compute(Trace &tr, uint64_t lane_free[2], Tracer *tracer, int rank, uint64_t t0)
{
    for (size_t i : tr.order) {
        const rs_et_node &nd = tr.t.nodes[i];
        if (tr.end[i] != UINT64_MAX || nd.kind == RS_ET_COLLECTIVE)
            continue;
        uint64_t ready = 0;
        bool ok = true;
        for (size_t d = 0; d < nd.ndeps && ok; d++) {
            uint64_t e = tr.end[nd.deps[d]];
            ok = e != UINT64_MAX;
            ready = std::max(ready, ok ? e : 0);
        }
        if (!ok)
            continue;
        uint64_t start = ready, dur = 0;
        if (nd.kind == RS_ET_COMPUTE) {
            uint64_t &lane = lane_free[nd.cpu ? 1 : 0];
            start = std::max(ready, lane);
            dur = nd.duration_us * k_ps_per_us;
            lane = start + dur;
            if (tracer && dur)
                tracer->span(rank, nd.name[0] ? nd.name : "compute", t0 + start, t0 + start + dur);
        }
        tr.end[i] = start + dur;
    }
}

} // namespace

int run_chakra(const rs_scenario &sc, model::Cluster &cl, Tracer *tracer, const char *prefix, const CollRun &run,
               FILE *out, FILE *err)
{
    const int p = cl.nranks();
    std::vector<Trace> tr((size_t)p);
    for (int r = 0; r < p; r++) {
        std::string path = std::string(prefix) + "." + std::to_string(r) + ".et";
        char why[RS_ET_ERRLEN];
        if (rs_et_load(path.c_str(), &tr[(size_t)r].t, why, sizeof why) != 0) {
            bool missing = std::strstr(why, ": cannot open: ") != nullptr;
            std::fprintf(err, "ringsim: --chakra: %s%s\n", why,
                         missing ? " (a trace is PREFIX.<rank>.et for every rank of the scenario's topology)" : "");
            return RS_EXIT_USAGE;
        }
        sort_nodes(tr[(size_t)r]);
    }
    // the k-th collective of every rank is one call: the same type and size everywhere
    const Trace &t0r = tr[0];
    for (int r = 1; r < p; r++) {
        const Trace &x = tr[(size_t)r];
        size_t k = 0;
        for (; k < std::min(x.colls.size(), t0r.colls.size()); k++) {
            const rs_et_node &a = t0r.t.nodes[t0r.colls[k]], &b = x.t.nodes[x.colls[k]];
            if (a.comm_type != b.comm_type || a.comm_size != b.comm_size) {
                std::fprintf(err, "ringsim: --chakra: %s.%d.et: node %llu, rank %d's collective #%zu, is %s of %llu B "
                             "but rank 0's (node %llu) is %s of %llu B (allowed: the same collectives in the "
                             "same order on every rank)\n", prefix, r, (unsigned long long)b.id, r, k + 1,
                             rs_et_comm_name(b.comm_type), (unsigned long long)b.comm_size,
                             (unsigned long long)a.id, rs_et_comm_name(a.comm_type),
                             (unsigned long long)a.comm_size);
                return RS_EXIT_USAGE;
            }
        }
        if (x.colls.size() != t0r.colls.size()) {
            std::fprintf(err, "ringsim: --chakra: %s.%d.et has %zu collectives, %s.0.et %zu (allowed: the same "
                         "collectives in the same order on every rank)\n", prefix, r, x.colls.size(), prefix,
                         t0r.colls.size());
            return RS_EXIT_USAGE;
        }
    }

    size_t computes = 0;
    for (size_t i = 0; i < t0r.t.n; i++)
        computes += t0r.t.nodes[i].kind == RS_ET_COMPUTE;
    std::fprintf(out, "# chakra: %s.<rank>.et, %d ranks, trace version %s: %zu nodes on rank 0 (%zu collectives, "
                 "%zu compute); %s, in place\n", prefix, p, t0r.t.version, t0r.t.n, t0r.colls.size(), computes,
                 ncl_dtype_name(sc.workload.dtype));
    std::fprintf(out, "#\n# %5s %8s %-24s %-15s %12s %12s %12s %12s  %s\n", "coll", "node", "name", "type", "bytes",
                 "start(us)", "time(us)", "end(us)", "algorithm");

    const uint64_t t0 = cl.network().scheduler().now();
    std::vector<std::array<uint64_t, 2>> lanes((size_t)p, {0, 0});
    uint64_t wrong_total = 0;
    double comm_us = 0;
    for (size_t k = 0; k <= t0r.colls.size(); k++) {
        for (int r = 0; r < p; r++)
            compute(tr[(size_t)r], lanes[(size_t)r].data(), tracer, r, t0);
        if (k == t0r.colls.size())
            break;
        // the call starts when its last rank is ready for it (the earlier ones wait in it)
        uint64_t start = 0;
        for (int r = 0; r < p; r++) {
            const Trace &x = tr[(size_t)r];
            const rs_et_node &nd = x.t.nodes[x.colls[k]];
            for (size_t d = 0; d < nd.ndeps; d++)
                start = std::max(start, x.end[nd.deps[d]]);
        }
        cl.idle_until(t0 + start);
        start = cl.network().scheduler().now() - t0;
        const rs_et_node &nd = t0r.t.nodes[t0r.colls[k]];
        uint64_t bytes = nd.comm_type == RS_ET_BARRIER ? ncl_dtype_size(sc.workload.dtype) : nd.comm_size;
        double us = 0;
        int algo = NCL_ALGO_AUTO;
        uint64_t wrong = 0;
        if (bytes > 0 && !run(engine_coll(nd.comm_type), bytes, &us, &algo, &wrong))
            return RS_EXIT_ENGINE;
        uint64_t end = start + (uint64_t)(us * k_ps_per_us + 0.5);
        for (int r = 0; r < p; r++)
            tr[(size_t)r].end[tr[(size_t)r].colls[k]] = end;
        wrong_total += wrong;
        comm_us += us;
        std::fprintf(out, "  %5zu %8llu %-24.24s %-15s %12llu %12.2f %12.2f %12.2f  %s\n", k,
                     (unsigned long long)nd.id, nd.name, rs_et_comm_name(nd.comm_type),
                     (unsigned long long)bytes, (double)start / k_ps_per_us, us, (double)end / k_ps_per_us,
                     bytes > 0 ? ncl_algo_name((ncl_algo)algo) : "-");
    }
    uint64_t finish = 0;
    for (int r = 0; r < p; r++)
        for (uint64_t e : tr[(size_t)r].end)
            finish = std::max(finish, e);
    cl.idle_until(t0 + finish);
    uint64_t npu_busy = 0;
    for (size_t i = 0; i < t0r.t.n; i++)
        if (t0r.t.nodes[i].kind == RS_ET_COMPUTE && !t0r.t.nodes[i].cpu)
            npu_busy += t0r.t.nodes[i].duration_us;
    std::fprintf(out, "#\n# %12s %14s %18s %7s\n", "total(us)", "collectives(us)", "rank 0 compute(us)", "#wrong");
    std::fprintf(out, "  %12.2f %14.2f %18.2f %7s\n", (double)finish / k_ps_per_us, comm_us, (double)npu_busy,
                 sc.payload_real ? std::to_string(wrong_total).c_str() : "N/A");
    return wrong_total ? RS_EXIT_WRONG : RS_EXIT_OK;
}

} // namespace rs
