// rs_simworld.cpp — rank threads that take turns with the simulator (see rs_simworld.hpp), and
// `ringsim train --scenario`'s runner built on them.
#include "rs_simworld.hpp"
#include "rs_halfwd.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>

#include <systemc>

#include "rs_sc.hpp"
#include "scenario/rs_scenario.h"
#include "rs_setup.hpp"
#include "rs_simworld.h"

namespace rs {

struct SimWorld::Ctx {
    SimWorld::Rank *r;
    model::Npu *npu;
};

struct SimWorld::Rank {
    SimWorld *w = nullptr;
    int rank = 0;
    Ctx ctx{nullptr, nullptr}; // the world communicator's
    std::thread thread;
    bool started = false, waiting = false, finished = false;
    bool scheduled = false; // an ev_resume is pending
    unsigned short_polls = 0; // notify waits found short since the rank last gave the baton back
    uint64_t deadline_ps = 0; // when its engine's earliest wait times out (its last wait_event)
    bool warp_scheduled = false; // an ev_warp is pending ...
    uint64_t warp_ps = 0;        // ... at this time
    std::condition_variable cv;  // where its thread waits for the baton (one each: handing it over
                                 // wakes that thread alone, not all of them)
    ncl_result result = NCL_SUCCESS;
};

// The NPU's ops, with wait_event handing the baton back to the simulator.
struct WorldOps {
    static SimWorld::Ctx &C(void *ctx) { return *static_cast<SimWorld::Ctx *>(ctx); }
    static model::Npu *N(void *ctx) { return C(ctx).npu; }
    static const ncl_hal_ops &D() { return model::Npu::ops; }

    static ncl_result caps(void *ctx, ncl_hal_caps *out) { return D().caps(N(ctx), out); }
    static ncl_result begin(void *ctx, const ncl_hal_launch *l) { return D().begin(N(ctx), l); }
    static ncl_result end(void *ctx, ncl_result result) { return D().end(N(ctx), result); }
    static ncl_result dma_submit(void *ctx, uint32_t q, const ncl_task *t) { return D().dma_submit(N(ctx), q, t); }
    static ncl_result dma_poll(void *ctx, uint32_t q, int *done)
    {
        ncl_result rc = D().dma_poll(N(ctx), q, done);
        short_look(ctx, rc == NCL_SUCCESS && *done == 0);
        return rc;
    }
    static ncl_result notify_record(void *ctx, uint32_t q, int peer, uint32_t id)
    {
        return D().notify_record(N(ctx), q, peer, id);
    }
    // A program that polls (ncl_test in a loop, several communicators at once) never reaches
    // wait_event, and simulated time stands still while it runs: after enough looks in a row that
    // found nothing (a short counter, no completion) it gives the baton back until its NPU reports
    // progress, as the host backend yields its core. A blocking call's waits take turns with
    // wait_event and never get that far.
    static void short_look(void *ctx, bool found_nothing)
    {
        SimWorld::Rank &r = *C(ctx).r;
        if (!found_nothing)
            r.short_polls = 0;
        else if (++r.short_polls >= kPollsBeforeYield)
            wait_event(ctx, r.w->cl_.timeout_ns()); // (its communicators' own timeouts are the engine's)
    }
    static ncl_result notify_try_wait(void *ctx, int peer, uint32_t id, uint32_t count, int *done)
    {
        ncl_result rc = D().notify_try_wait(N(ctx), peer, id, count, done);
        short_look(ctx, rc == NCL_SUCCESS && !*done);
        return rc;
    }
    static constexpr unsigned kPollsBeforeYield = 64;
    static ncl_result wait_event(void *ctx, uint64_t timeout_ns)
    {
        SimWorld::Rank &r = *C(ctx).r;
        r.short_polls = 0;
        const uint64_t horizon_ns = UINT64_C(1) << 40; // about 18 minutes: far past any wait
        r.deadline_ps = D().now_ns(N(ctx)) * 1000 + std::min(timeout_ns, horizon_ns) * 1000;
        std::unique_lock<std::mutex> lk(r.w->mu_);
        r.waiting = true;
        r.w->baton_ = -1;
        r.w->sim_cv_.notify_one();
        r.cv.wait(lk, [&] { return r.w->baton_ == r.rank; });
        r.waiting = false;
        return NCL_SUCCESS;
    }
    static uint64_t now_ns(void *ctx) { return D().now_ns(N(ctx)); }
    static ncl_result notify_peek(void *ctx, int peer, uint32_t id, uint32_t *v)
    {
        return D().notify_peek(N(ctx), peer, id, v);
    }
    static void log(void *ctx, int level, const char *msg) { D().log(N(ctx), level, msg); }
    // the engine adds what the NPU saw (a bound, a peer that left) to the call's error
    static const char *last_error(void *ctx) { return N(ctx)->fault().c_str(); }
    static ncl_result split(void *ctx, uint32_t id, const int32_t *m, int n, int rank, ncl_hal *child)
    {
        SimWorld::Ctx &c = C(ctx);
        ncl_hal inner;
        ncl_result rc = D().split(c.npu, id, m, n, rank, &inner);
        if (rc != NCL_SUCCESS)
            return rc;
        SimWorld *w = c.r->w; // one rank thread runs at a time: the deque is never touched at once
        w->contexts_.push_back(SimWorld::Ctx{c.r, static_cast<model::Npu *>(inner.ctx)});
        *child = ncl_hal{&w->ops_, &w->contexts_.back()};
        return NCL_SUCCESS;
    }
    static void release(void *ctx) { D().release(N(ctx)); }
};

SimWorld::SimWorld(model::Cluster &cl) : cl_(cl), ranks_((size_t)cl.nranks())
{
    ops_ = rs_forward_ops<WorldOps>(model::Npu::ops);
    ops_.wait_event = WorldOps::wait_event; // the NPU has none: waiting is the world's own
    ops_.last_error = WorldOps::last_error;
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
    cl_.disconnect(); // their HALs (and their pairs' and splits') are this world's contexts
    cl_.set_waker(nullptr);
    for (Rank &r : ranks_)
        if (r.thread.joinable())
            r.thread.join();
}

ncl_hal SimWorld::wrap(int rank, model::Npu &npu)
{
    ranks_[rank].ctx = Ctx{&ranks_[rank], &npu};
    return ncl_hal{&ops_, &ranks_[rank].ctx};
}

void SimWorld::ev_resume(void *self, uint64_t rank)
{
    SimWorld *w = static_cast<SimWorld *>(self);
    w->ranks_[rank].scheduled = false;
    w->resume((int)rank);
}

// A rank's wait reached its deadline with nothing else to wake it (see run).
void SimWorld::ev_warp(void *self, uint64_t rank)
{
    SimWorld *w = static_cast<SimWorld *>(self);
    w->ranks_[rank].warp_scheduled = false;
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
    r.cv.notify_one();
    sim_cv_.wait(lk, [&] { return baton_ == -1; });
    // The last rank done ends the world: a fault due later must not pull simulated time to it,
    // nor a rank's deadline that no longer matters.
    if (r.finished && ++finished_ == (int)ranks_.size()) {
        uint64_t hold = cl_.network().next_fault_ps();
        for (const Rank &o : ranks_)
            if (o.warp_scheduled)
                hold = std::min(hold, o.warp_ps);
        cl_.network().scheduler().hold_from(hold);
    }
}

ncl_result SimWorld::run(ncl_host_fn fn, void *arg, ncl_result *results)
{
    int p = cl_.nranks();
    for (int i = 0; i < p; i++) {
        Rank &r = ranks_[i];
        r.thread = std::thread([this, &r, fn, arg] {
            {
                std::unique_lock<std::mutex> lk(mu_);
                r.cv.wait(lk, [&] { return baton_ == r.rank; });
            }
            r.result = fn(cl_.comm(r.rank), arg);
            std::lock_guard<std::mutex> lk(mu_);
            r.finished = true;
            baton_ = -1;
            sim_cv_.notify_one();
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
        // Nothing moves any more: let simulated time reach each rank's earliest timeout, so
        // waits that can never be satisfied fail with their diagnosis instead of hanging (a
        // communicator with a shorter timeout first: what it does next may wake the others).
        uint64_t now = cl_.network().scheduler().now();
        for (Rank &r : ranks_)
            if (!r.finished && !r.scheduled && !r.warp_scheduled) {
                r.warp_scheduled = true;
                r.warp_ps = std::max(r.deadline_ps + 1000, now);
                cl_.network().scheduler().after(r.warp_ps - now, ev_warp, this, (uint64_t)r.rank);
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
