// rs_plan.cpp — `ringsim plan`'s table: for every collective, placement (in place, out of place) and
// size of a scenario's sweep, each algorithm's predicted time from the topology's cost model, the
// one `auto` picks, and with simulate every algorithm run on the model beside its prediction.
#include "rs_plan.h"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <ncl/ncl_dtype.h>
#include <ncl/ncl_sched.h>

#include "model/cluster.hpp"
#include "sweep/rs_shape.h"
#include "sweep/rs_sweep.h"
#include "scenario/rs_scenario.h"
#include "rs_sc.hpp"
#include "rs_setup.hpp"

namespace {

// Timing-only runs move no bytes: never-dereferenced, distinct addresses (as rs_simrun.cpp); out of
// place the receive buffer lies k_apart above the send buffer.
const uintptr_t k_fake = uintptr_t(1) << 44;
const uintptr_t k_apart = uintptr_t(1) << 42;

struct Cell {
    bool runs = false;         // the algorithm accepts the call
    double predicted_us = -1;  // -1: no cost (auto does not consider it)
    double simulated_us = -1;
};


/* The engine's planner on rank 0: does `algo` take the call, and at what predicted cost. */
Cell predict(const rs_scenario &sc, const rs::EngineSetup &setup, ncl_coll coll, ncl_algo algo, uint64_t count,
             int inplace)
{
    Cell cell;
    ncl_plan_env env = setup.plan_env();
    const rs_workload &w = sc.workload;
    bool reduces = coll == NCL_COLL_ALLREDUCE || coll == NCL_COLL_REDUCE || coll == NCL_COLL_REDUCE_SCATTER;
    ncl_plan plan;
    if (ncl_plan_make(&plan, coll, algo, sc.topo.nranks, 0, w.root, count, w.dtype, reduces ? w.op : NCL_SUM,
                      inplace, &env) != NCL_SUCCESS)
        return cell;
    cell.runs = true;
    uint64_t ns = ncl_plan_cost_ns(&plan, &env);
    cell.predicted_us = ns == UINT64_MAX ? -1 : (double)ns / 1e3;
    return cell;
}

ncl_algo auto_choice(const rs_scenario &sc, const rs::EngineSetup &setup, ncl_coll coll, uint64_t count, int inplace)
{
    ncl_plan_env env = setup.plan_env();
    const rs_workload &w = sc.workload;
    bool reduces = coll == NCL_COLL_ALLREDUCE || coll == NCL_COLL_REDUCE || coll == NCL_COLL_REDUCE_SCATTER;
    ncl_plan plan;
    if (ncl_plan_make(&plan, coll, NCL_ALGO_AUTO, sc.topo.nranks, 0, w.root, count, w.dtype,
                      reduces ? w.op : NCL_SUM, inplace, &env) != NCL_SUCCESS)
        return NCL_ALGO_AUTO;
    return (ncl_algo)plan.algo;
}

/* a2av: alltoallv's count matrix (coll alltoall, count its largest entry), else NULL. */
double simulate(model::Cluster &cl, const rs_scenario &sc, ncl_coll coll, uint64_t count, const uint64_t *a2av,
                int inplace)
{
    int p = cl.nranks();
    uint64_t es = ncl_dtype_size(sc.workload.dtype);
    for (int r = 0; r < p; r++) { // NCCL's placements, as the predictions assume
        unsigned char *a = reinterpret_cast<unsigned char *>(k_fake);
        uint64_t off = (uint64_t)r * count * es;
        if (!inplace)
            cl.set_buffers(r, a, a + k_apart);
        else if (coll == NCL_COLL_REDUCE_SCATTER)
            cl.set_buffers(r, a, a + off);
        else if (coll == NCL_COLL_ALLGATHER)
            cl.set_buffers(r, a + off, a);
        else
            cl.set_buffers(r, a, a);
    }
    bool reduces = coll == NCL_COLL_ALLREDUCE || coll == NCL_COLL_REDUCE || coll == NCL_COLL_REDUCE_SCATTER;
    model::Collective c{coll, count, sc.workload.dtype, reduces ? sc.workload.op : NCL_SUM, sc.workload.root, a2av};
    double us = -1;
    return cl.run(c, 1, &us) ? us : -1;
}

std::string fmt_us(double us, bool mark)
{
    char b[32];
    if (us < 0)
        std::snprintf(b, sizeof b, "-");
    else
        std::snprintf(b, sizeof b, "%s%.2f", mark ? "*" : "", us);
    return b;
}

int plan_body(const rs_scenario &sc, bool sim, FILE *out, FILE *err)
{
    std::unique_ptr<model::Topology> topo;
    try {
        topo.reset(new model::Topology(sc.topo));
    } catch (const std::exception &e) {
        std::fprintf(err, "ringsim: %s: %s\n", sc.path ? sc.path : "scenario", e.what());
        return RS_EXIT_USAGE;
    }
    rs::EngineSetup setup;
    rs::engine_setup(sc, *topo, setup);
    const rs_workload &w = sc.workload;
    int p = sc.topo.nranks;

    // --simulate: one model per algorithm (index: ncl_algo), each forcing it on every collective
    // it implements; every model exists before the first simulation starts
    std::vector<std::unique_ptr<model::Cluster>> models;
    if (sim) {
        models.resize(NCL_ALGO_COUNT);
        for (int a = NCL_ALGO_AUTO + 1; a < NCL_ALGO_COUNT; a++) {
            if (a == NCL_ALGO_USER && !setup.cfg.schedule)
                continue;
            bool used = false;
            for (int i = 0; i < w.colls_count; i++)
                used |= ncl_algo_find(rs_coll_engine((rs_coll)w.colls[i]), (ncl_algo)a) != nullptr;
            if (!used)
                continue;
            ncl_config cfg = setup.cfg;
            for (int c = 0; c < NCL_COLL_COUNT; c++)
                cfg.algorithm[c] = ncl_algo_find((ncl_coll)c, (ncl_algo)a) ? (uint8_t)a : (uint8_t)NCL_ALGO_AUTO;
            try {
                models[a].reset(
                    new model::Cluster(sc.topo, sc.fidelity, sc.device, false, setup.caps.scratch_bytes));
                for (size_t f = 0; f < sc.faults_count; f++)
                    models[a]->network().schedule_fault(sc.faults[f]);
            } catch (const std::exception &e) {
                std::fprintf(err, "ringsim: %s: %s\n", sc.path ? sc.path : "scenario", e.what());
                return RS_EXIT_USAGE;
            }
            ncl_result rc = models[a]->connect(cfg);
            if (rc != NCL_SUCCESS) {
                std::fprintf(err, "ringsim: cannot create the communicators: %s\n", ncl_strerror(rc));
                return RS_EXIT_ENGINE;
            }
        }
    }

    std::fprintf(out, "# plan: %s, %d ranks, %u channel%s on %s; times in us, in place and out of place\n", sc.name, p,
                 setup.cfg.channels, setup.cfg.channels == 1 ? "" : "s",
                 setup.rings.empty() ? "the ring 0..p-1"
                                     : (std::to_string(setup.rings.size()) + " ring(s) found from the topology").c_str());
    // unequal ring weights (a slow link on some ring): the data each ring carries
    bool weighted = false;
    for (uint32_t wgt : setup.ring_weights)
        weighted |= wgt != setup.ring_weights[0];
    if (weighted) {
        std::fprintf(out, "# ring weights (each ring's slowest link, MB/s; the ring family splits the data in "
                          "proportion):");
        for (uint32_t wgt : setup.ring_weights)
            std::fprintf(out, " %u", wgt);
        std::fprintf(out, "\n");
    }
    std::fprintf(out, "# predicted: the alpha-beta cost model over the topology's links and routes (what auto "
                      "uses); * = auto's choice; - = the algorithm does not take the call or has no cost\n");
    int status = RS_EXIT_OK;
    uint64_t es = ncl_dtype_size(w.dtype);
    for (int i = 0; i < w.colls_count * 2; i++) {
        const rs_coll table = (rs_coll)w.colls[i / 2];
        const ncl_coll coll = rs_coll_engine(table);
        int inplace = i % 2 == 0;
        if (table == RS_COLL_SENDRECV) { // no algorithm to choose: each pair's one transfer
            if (inplace)
                std::fprintf(out, "#\n# sendrecv: not planned (each rank's transfer to rank + 1 runs on a "
                                  "communicator of its own, as a chain broadcast of two ranks; `ringsim run` "
                                  "simulates it)\n");
            continue;
        }
        const char *placement = inplace ? "in place" : "out of place";
        std::vector<ncl_algo> algos;
        for (int a = NCL_ALGO_AUTO + 1; a < NCL_ALGO_COUNT; a++)
            if (ncl_algo_find(coll, (ncl_algo)a) && (a != NCL_ALGO_USER || setup.cfg.schedule))
                algos.push_back((ncl_algo)a);
        std::fprintf(out, "#\n# %s, %s%s\n#%13s  %-9s", rs_coll_name(table), placement,
                     table == RS_COLL_ALLTOALLV ? " (predicted as alltoall of the largest block, as auto prices it)"
                                                : "",
                     "size (B)", "");
        for (ncl_algo a : algos)
            std::fprintf(out, " %12s", ncl_algo_name(a));
        std::fprintf(out, "  %-8s%s\n", "auto", sim ? "  auto vs best simulated" : "");
        double worst = 0;
        uint64_t worst_size = 0;
        for (uint64_t size = w.begin_bytes, more = 1; more; more = rs_scenario_next_size(&w, size, &size)) {
            uint64_t count = size / es / (rs_shape_per_rank(table) ? (uint64_t)p : 1);
            const uint64_t *a2av = nullptr;
            rs_shape s;
            if (table == RS_COLL_ALLTOALLV) { // the engine plans its largest block
                a2av = rs_shape_make(&s, table, p, w.dtype, w.op, 0, w.a2av_skew, size) ? rs_shape_a2av_counts(&s)
                                                                                          : nullptr;
                count = a2av ? rs_shape_plan_count(&s) : 0;
            }
            if (count > 0) {
                ncl_algo choice = auto_choice(sc, setup, coll, count, inplace);
                std::vector<Cell> cells;
                for (ncl_algo a : algos)
                    cells.push_back(predict(sc, setup, coll, a, count, inplace));
                uint64_t shown = a2av ? s.size : count * es * (rs_shape_per_rank(table) ? (uint64_t)p : 1);
                std::fprintf(out, " %13llu  %-9s", (unsigned long long)shown, "predicted");
                for (size_t k = 0; k < algos.size(); k++)
                    std::fprintf(out, " %12s",
                                 fmt_us(cells[k].runs ? cells[k].predicted_us : -1, algos[k] == choice).c_str());
                std::fprintf(out, "  %-8s\n", ncl_algo_name(choice));
                if (sim) {
                    double best = -1, chosen = -1;
                    std::fprintf(out, " %13s  %-9s", "", "simulated");
                    for (size_t k = 0; k < algos.size(); k++) {
                        double t = -1;
                        if (cells[k].runs && models[algos[k]]) {
                            t = simulate(*models[algos[k]], sc, coll, count, a2av, inplace);
                            if (t < 0) {
                                std::fprintf(err, "ringsim: plan: %s with %s failed on the model: %s\n",
                                             rs_coll_name(table), ncl_algo_name(algos[k]),
                                             ncl_comm_last_error(models[algos[k]]->comm(
                                                 models[algos[k]]->failed_rank())));
                                status = RS_EXIT_ENGINE;
                            }
                        }
                        if (t >= 0 && (best < 0 || t < best))
                            best = t;
                        if (algos[k] == choice)
                            chosen = t;
                        std::fprintf(out, " %12s", fmt_us(t, false).c_str());
                    }
                    double off = best > 0 && chosen >= 0 ? (chosen / best - 1) * 100 : 0;
                    std::fprintf(out, "  %-8s  %+.1f %%\n", "", off);
                    if (off > worst)
                        worst = off, worst_size = shown;
                }
            }
        }
        if (sim)
            std::fprintf(out, "# %s, %s: auto is within %.1f %% of the best simulated algorithm at every size%s\n",
                         rs_coll_name(table), placement, worst,
                         worst > 0 ? (" (worst at " + std::to_string(worst_size) + " B)").c_str() : "");
    }
    return status;
}

} // namespace

extern "C" int rs_plan_print(const rs_scenario *sc, int simulate, FILE *out, FILE *err)
{
    if (!simulate)
        return plan_body(*sc, false, out, err);
    return rs::sc_enter([&] { return plan_body(*sc, true, out, err); });
}
