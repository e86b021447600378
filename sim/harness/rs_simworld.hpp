// rs_simworld.hpp — host-style rank programs (blocking ncl calls, one function per rank) run on the simulated machine.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include <ncl/ncl_host.h>

#include "model/cluster.hpp"

namespace rs {

/*
 * The host backend runs fn(comm, arg) on a thread per rank; so does this, but every rank's
 * communicator drives a simulated NPU and time is simulated time. The threads take turns with
 * the simulator under one baton, so exactly one of them runs at any moment and a run is
 * deterministic: a rank runs (issuing tasks to its NPU) until the engine would block
 * (wait_event); the baton then goes back to the simulator, which resumes the rank when its NPU
 * reports progress. Code between two blocking points takes no simulated time. A wait that
 * nothing will ever end is brought to the engine's timeout in simulated time, so every rank
 * ends (the same rule as model::Cluster::run). Sub-communicators (ncl_comm_split, ncl_send)
 * get contexts on the same NPUs, driven by the same rank threads.
 */
class SimWorld {
public:
    explicit SimWorld(model::Cluster &cl);
    ~SimWorld();
    SimWorld(const SimWorld &) = delete;
    SimWorld &operator=(const SimWorld &) = delete;

    /** The HAL rank `rank` must use (pass to Cluster::connect): the NPU's, with a blocking
     *  wait_event. */
    ncl_hal wrap(int rank, model::Npu &npu);

    /** Runs fn on every rank until all returned; results[r] gets rank r's (may be NULL).
     *  Returns the lowest failing rank's result, or NCL_SUCCESS. Call once. */
    ncl_result run(ncl_host_fn fn, void *arg, ncl_result *results);

    struct Rank; // public for the C trampolines
    struct Ctx;  // a communicator's HAL context on a rank: the world's, or a split's

private:
    void resume(int rank);
    void give_back(std::unique_lock<std::mutex> &lk);
    static void ev_resume(void *self, uint64_t rank);
    static void ev_warp(void *self, uint64_t rank);

    model::Cluster &cl_;
    std::vector<Rank> ranks_;
    std::deque<Ctx> contexts_; // the sub-communicators' (HAL split), in the order they were made
    std::mutex mu_;
    std::condition_variable sim_cv_; // where the simulator waits for the baton back
    int baton_ = -1; // -1: the simulator; r: rank r's thread
    int finished_ = 0; // ranks whose fn returned
    ncl_hal_ops ops_{};
    friend struct WorldOps;
};

} // namespace rs
