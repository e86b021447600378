// rs_simworld.cpp — rank threads that take turns with the simulator (see rs_simworld.hpp), and
// `ringsim train --scenario`'s runner built on them.
#include "rs_simworld.hpp"
#include "rs_halfwd.hpp"

#include <cstdio>
#include <exception>

#include <systemc>

#include "rs_sc.hpp"
#include "scenario/rs_scenario.h"
#include "rs_setup.hpp"
#include "rs_simworld.h"

namespace rs {

struct SimWorld::Rank {
    SimWorld *w = nullptr;
    int rank = 0;
    model::Npu *npu = nullptr;
    std::thread thread;
    bool started = false, waiting = false, finished = false;
    bool scheduled = false; // an ev_resume is pending
    ncl_result result = NCL_SUCCESS;
};

// The NPU's ops, with wait_event handing the baton back to the simulator.
struct WorldOps {
    static SimWorld::Rank &R(void *ctx) { return *static_cast<SimWorld::Rank *>(ctx); }
    static const ncl_hal_ops &D() { return model::Npu::ops; }

    static ncl_result caps(void *ctx, ncl_hal_caps *out) { return D().caps(R(ctx).npu, out); }
    static ncl_result begin(void *ctx, const ncl_hal_launch *l) { return D().begin(R(ctx).npu, l); }
    static ncl_result end(void *ctx, ncl_result result) { return D().end(R(ctx).npu, result); }
    static ncl_result dma_submit(void *ctx, uint32_t q, const ncl_task *t) { return D().dma_submit(R(ctx).npu, q, t); }
    static ncl_result dma_poll(void *ctx, uint32_t q, int *done) { return D().dma_poll(R(ctx).npu, q, done); }
    static ncl_result notify_record(void *ctx, uint32_t q, int peer, uint32_t id)
    {
        return D().notify_record(R(ctx).npu, q, peer, id);
    }
    static ncl_result notify_try_wait(void *ctx, int peer, uint32_t id, uint32_t count, int *done)
    {
        return D().notify_try_wait(R(ctx).npu, peer, id, count, done);
    }
    static ncl_result wait_event(void *ctx, uint64_t)
    {
        SimWorld::Rank &r = R(ctx);
        std::unique_lock<std::mutex> lk(r.w->mu_);
        r.waiting = true;
        r.w->baton_ = -1;
        r.w->cv_.notify_all();
        r.w->cv_.wait(lk, [&] { return r.w->baton_ == r.rank; });
        r.waiting = false;
        return NCL_SUCCESS;
    }
    static uint64_t now_ns(void *ctx) { return D().now_ns(R(ctx).npu); }
    static ncl_result notify_peek(void *ctx, int peer, uint32_t id, uint32_t *v)
    {
        return D().notify_peek(R(ctx).npu, peer, id, v);
    }
    static void log(void *ctx, int level, const char *msg) { D().log(R(ctx).npu, level, msg); }
};

SimWorld::SimWorld(model::Cluster &cl) : cl_(cl), ranks_((size_t)cl.nranks())
{
    ops_ = rs_forward_ops<WorldOps>(model::Npu::ops);
    ops_.wait_event = WorldOps::wait_event; // the NPU has none: waiting is the world's own
    for (int i = 0; i < cl.nranks(); i++) {
        ranks_[i].w = this;
        ranks_[i].rank = i;
    }
    // Progress on an NPU resumes its rank, later at the same simulated time: the NPU may report
    // it from inside an op its own rank is calling.
    cl_.set_waker([this](int rank) {
        Rank &r = ranks_[rank];
        if (r.scheduled || r.finished)
            return;
        r.scheduled = true;
        cl_.network().scheduler().after(0, ev_resume, this, (uint64_t)rank);
    });
}

SimWorld::~SimWorld()
{
    cl_.set_waker(nullptr);
    for (Rank &r : ranks_)
        if (r.thread.joinable())
            r.thread.join();
}

ncl_hal SimWorld::wrap(int rank, model::Npu &npu)
{
    ranks_[rank].npu = &npu;
    return ncl_hal{&ops_, &ranks_[rank]};
}

void SimWorld::ev_resume(void *self, uint64_t rank)
{
    SimWorld *w = static_cast<SimWorld *>(self);
    w->ranks_[rank].scheduled = false;
    w->resume((int)rank);
}

// On the simulator: lets the rank run until it blocks again or returns.
void SimWorld::resume(int rank)
{
    Rank &r = ranks_[rank];
    std::unique_lock<std::mutex> lk(mu_);
    if (r.finished || (r.started && !r.waiting))
        return;
    r.started = true;
    baton_ = rank;
    cv_.notify_all();
    cv_.wait(lk, [&] { return baton_ == -1; });
    // The last rank done ends the world: a fault due later must not pull simulated time to it.
    if (r.finished && ++finished_ == (int)ranks_.size())
        cl_.network().scheduler().hold_from(cl_.network().next_fault_ps());
}

ncl_result SimWorld::run(ncl_host_fn fn, void *arg, ncl_result *results)
{
    int p = cl_.nranks();
    for (int i = 0; i < p; i++) {
        Rank &r = ranks_[i];
        r.thread = std::thread([this, &r, fn, arg] {
            {
                std::unique_lock<std::mutex> lk(mu_);
                cv_.wait(lk, [&] { return baton_ == r.rank; });
            }
            r.result = fn(cl_.comm(r.rank), arg);
            std::lock_guard<std::mutex> lk(mu_);
            r.finished = true;
            baton_ = -1;
            cv_.notify_all();
        });
        r.scheduled = true;
        cl_.network().scheduler().after(0, ev_resume, this, (uint64_t)i);
    }
    for (;;) {
        sc_core::sc_start();
        bool all = true;
        for (Rank &r : ranks_)
            all &= r.finished;
        if (all)
            break;
        // Nothing moves any more: let simulated time reach the engine's timeout, so waits that
        // can never be satisfied fail with their diagnosis instead of hanging.
        uint64_t warp = (cl_.timeout_ns() + 1) * 1000;
        for (Rank &r : ranks_)
            if (!r.finished && !r.scheduled) {
                r.scheduled = true;
                cl_.network().scheduler().after(warp, ev_resume, this, (uint64_t)r.rank);
            }
    }
    ncl_result rc = NCL_SUCCESS;
    for (Rank &r : ranks_) {
        r.thread.join();
        if (results)
            results[r.rank] = r.result;
        if (rc == NCL_SUCCESS)
            rc = r.result;
    }
    return rc;
}

} // namespace rs

extern "C" ncl_result rs_simworld_run_scenario(void *scenario_path, const ncl_config *comm, int nranks,
                                               ncl_host_fn fn, void *arg, ncl_result *results)
{
    const char *path = static_cast<const char *>(scenario_path);
    rs_scenario sc;
    char err[RS_SCENARIO_ERRLEN];
    if (rs_scenario_load(path, &sc, err, sizeof err) != 0) {
        std::fprintf(stderr, "%s\n", err);
        return NCL_ERR_INVALID_ARGUMENT;
    }
    ncl_result out = NCL_ERR_INVALID_ARGUMENT;
    if (sc.topo.nranks != nranks) {
        std::fprintf(stderr, "ringsim: %s has %d ranks, the run needs %d\n", path, sc.topo.nranks, nranks);
    } else {
        rs::sc_enter([&] {
            try {
                // real bytes: the rank programs compute with what the collectives deliver
                rs::EngineSetup setup; // outlives cl: the communicators point at its ring tables
                model::Cluster cl(sc.topo, sc.fidelity, sc.device, true, rs::scenario_scratch(sc));
                rs::engine_setup(sc, cl.network().topology(), setup);
                ncl_config cfg = setup.cfg;
                cfg.deterministic = comm->deterministic;
                cfg.timeout_ns = comm->timeout_ns;
                for (size_t i = 0; i < sc.faults_count; i++) // as `ringsim run` applies them
                    cl.network().schedule_fault(sc.faults[i]);
                rs::SimWorld world(cl);
                out = cl.connect(cfg, [&](int r, model::Npu &npu) { return world.wrap(r, npu); });
                if (out == NCL_SUCCESS)
                    out = world.run(fn, arg, results);
                std::printf("# simulated machine: %s (%s), %.3f ms of simulated time\n", sc.name, path,
                            cl.network().now_s() * 1e3);
            } catch (const std::exception &e) {
                std::fprintf(stderr, "ringsim: %s: %s\n", path, e.what());
                out = NCL_ERR_INVALID_ARGUMENT;
            }
            return 0;
        });
    }
    rs_scenario_free(&sc);
    return out;
}
