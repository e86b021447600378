// costmodel.hpp — predicted collective times from the topology's links: each algorithm's steps as
// flows over the computed routes; a step costs the task overhead plus its slowest flow's route
// latency (alpha), plus the bytes on its most loaded channel over that channel's payload
// bandwidth (beta, with contention). What `algorithm: auto` chooses with (ncl_config.costs) and
// what `ringsim plan` prints beside the simulated times.
#pragma once

#include <cstdint>
#include <utility>
#include <unordered_map>
#include <vector>

#include <ncl/ncl.h>

#include "model/rs_spec.h"
#include "model/topology.hpp"

namespace model {

/** One algorithm's predicted time for n bytes (nccl-tests' size): linear, alpha + n beta; or,
 *  for a pipeline over `hops` links (chain), fixed + the best segment count k of
 *  (hops - 1 + k)(alpha + n beta / k). */
struct AlgoCost {
    ncl_coll coll;
    ncl_algo algo;
    double alpha_s;
    double beta_s;      // per byte
    int hops;           // 0: linear
    double fixed_s = 0;      // pipelines: what comes before the first segment (the head's READY)
    double extra_beta_s = 0; // pipelines: per byte of n in phases around the pipeline
    int chain_div = 0;       // pipelines: one chain carries n / chain_div (0: n / channels)
    bool floor = false;      // a lower bound on the algorithm's other lines (ncl_cost.floor)
    // lower bounds of this line only (ncl_cost.floor = its index + 2): with them the line is the
    // upper envelope of several, as a step whose flows reach a link at different times is
    std::vector<std::pair<double, double>> own_floors = {}; // (alpha_s, beta_s)
    double oop_alpha_s = 0, oop_beta_s = 0; // out of place only: added, or taken off if negative (ncl_cost.oop_*)
    int variant = NCL_COST_VARIANT_DEFAULT;  // the schedule this line prices (ncl_cost.variant)
    int posted = 0;                          // pipelines of posted writes: % of the knee (ncl_cost.posted)
    double predict(uint64_t bytes) const;
};

/** Each ring's weight for the engine's channel split (ncl_config.ring_weights): the payload
 *  bandwidth of its slowest link (every channel of every hop's route), in MB/s, at least 1. The
 *  links as built (overrides applied), or `live`: every channel's parameters now, faults
 *  included (Network::link_params; the Cluster rebalances with it). The cost model prices the
 *  split with the same weights. */
std::vector<uint32_t> ring_weights(const Topology &t, const std::vector<std::vector<int>> &rings,
                                   const std::vector<rs_link_params> *live = nullptr);

class CostModel {
public:
    /** rings: the logical rings the ring and chain algorithms run on (empty: 0, 1, ..., p-1);
     *  channels: how many run at once (channel c on ring c mod rings). */
    CostModel(const Topology &topo, const rs_device_params &dev, const std::vector<std::vector<int>> &rings,
              uint32_t channels);

    /** Two levels (the hier algorithms): servers of local_size consecutive ranks, intra-server
     *  rings over local indices (empty: 0..local_size-1), the inter level's algorithm (AUTO: ring
     *  unless the server count is a power of two, then hd). */
    void set_levels(int local_size, const std::vector<std::vector<int>> &local_rings, ncl_algo inter);

    /** A communicator on some of the topology's NPUs (a sub-communicator): its rank r is NPU
     *  members[r]; rings (constructor) are in its ranks. Before any costs(); empty: every NPU. */
    void set_members(const std::vector<int> &members);

    /** The workload's dtype/op is not reduced inline by the DMA: the ring's reduce-scatter steps
     *  write to scratch and the receiver reduces (a LOCAL_REDUCE task per step). */
    void set_staged(bool staged) { staged_ = staged; }
    /** The engine's largest DMA task (ncl_config.slice_bytes): algorithms that move a buffer in
     *  rounds of a slice pay their per-round terms once per slice (0: not priced). */
    void set_slice(uint64_t bytes) { slice_ = bytes; }
    /** The engine's scratch per rank (ncl_hal_caps.scratch_bytes): it bounds the full mesh's slots. */
    void set_scratch(uint64_t bytes) { scratch_ = bytes; }
    /** Deterministic allreduce accumulates in fp32 (ncl_config.wide_accumulation on fp16/bf16). */
    void set_wide(bool wide) { wide_ = wide; }
    /** The communicators have landing zones (ncl_plan_env_zones): ring allgather and chain
     *  broadcast then wait for no READY before their first write. */
    void set_zones(bool zones) { zones_ = zones; }
    /** The DMA reduces two sources on the way out (NCL_HAL_FEAT_REDUCE_WRITE): ring allreduce and
     *  reduce-scatter on more than 2 ranks fill nothing on their path and use the zones too. */
    void set_reduce_write(bool on) { reduce_write_ = on; }
    /** Data tasks a queue keeps in flight (ncl_plan_env.in_flight), and whether a pipeline's
     *  helper queue fits beside it (ncl_helper_room: the ring reduce refills its slots there). */
    void set_queues(uint32_t in_flight, bool fill_queue)
    {
        in_flight_ = in_flight ? in_flight : 1;
        fill_queue_ = fill_queue;
    }

    /** Every algorithm the engine has for coll, with its cost on this topology. */
    std::vector<AlgoCost> costs(ncl_coll coll) const;

private:
    struct Flow {
        int src, dst;
        double frac;    // of n
        int queue = -1; // the engine queue it is written from (>= 0): a queue's writes go one after another
    };
    struct Step {
        double alpha, beta;         // seconds, seconds per byte of n
        std::vector<double> arrive; // per flow: when its write has arrived (the latency part)
        // Where a link's load sets beta: when that link's work can end, latency part (its first
        // flow's arrival at it, its own latency, the longest way on after it): alpha + beta n
        // over-prices by the latency its bytes overlap. Else alpha.
        double link_alpha = 0;
        double lat_beta = 0; // the slowest flow alone: its own bytes at its route's bandwidth
        // The step's end as the upper envelope of lines (alpha, beta): per channel, the flows
        // whose heads reach it from each arrival on (all of their bytes after it, then the last
        // one's way on); the slowest write alone; the engines' and memory's bandwidth. Tighter
        // than alpha + beta n where the flows of the busiest link arrive over time.
        std::vector<std::pair<double, double>> envelope = {};
    };
    /** ready_first: the flows are a collective's first writes, each after its READY. */
    Step step(const std::vector<Flow> &flows, bool ready_first = false) const;
    std::vector<std::pair<double, double>> drain_lines(const std::vector<Flow> &flows,
                                                       const std::vector<double> &arrive,
                                                       const std::vector<double> &arrive_beta) const;
    int mesh_send_queues() const;
    int mesh_distance(int d) const;
    int mesh_index(int distance) const;
    std::vector<Flow> mesh_flows(double frac) const;
    double local_reduces_end(const std::vector<Flow> &all, const Step &s0, bool by_distance) const;
    /** A route as the model prices it, computed once per (src, dst): flows of a step ask
     *  several times each, and a 64-ring's mesh has thousands of multi-hop routes. */
    struct Route {
        std::vector<int> channels;
        double latency = 0;  // every channel's latency + a forward latency per switch between
        double slowest = 0;  // the slowest channel's payload bandwidth (0: no channel)
    };
    const Route &route(int src, int dst) const;
    double route_latency(int src, int dst) const { return route(src, dst).latency; }
    int ring_rank(int c, int pos) const;

    std::vector<Flow> ring_step_flows(const std::vector<double> &share) const;
    AlgoCost ring(ncl_coll coll, bool pieced = false) const;
    bool fill_queues() const;
    bool landing() const;
    std::vector<AlgoCost> ring_rs_floors() const;
    std::vector<AlgoCost> ring_rs_pair_rounds() const;
    std::vector<AlgoCost> ring_ar_ready_floor(const AlgoCost &line) const; // line: ring(ALLREDUCE)
    std::vector<AlgoCost> mesh_rounds(ncl_coll coll) const;
    std::vector<AlgoCost> alltoall() const;
    std::vector<AlgoCost> ring_rs_pieced() const;
    AlgoCost chain(ncl_coll coll) const;
    std::vector<AlgoCost> tree(ncl_coll coll) const;
    std::vector<AlgoCost> halving_doubling(ncl_coll coll) const;
    std::vector<AlgoCost> mesh(ncl_coll coll, bool rounds = false, bool waves = true) const;
    AlgoCost scatter_allgather() const;
    std::vector<AlgoCost> double_tree() const;
    std::vector<AlgoCost> deterministic() const;
    AlgoCost hier_allreduce() const;
    std::vector<AlgoCost> hier_broadcast() const;
    bool inter_hd() const;
    int local_rank(int server, int c, int pos) const;

    const Topology &t_;
    rs_device_params dev_;
    std::vector<std::vector<int>> rings_;
    std::vector<int> members_;                 // set_members (empty: rank r is NPU r)
    std::vector<std::vector<int>> node_rings_; // rings_ in the topology's NPUs
    uint32_t channels_;
    int p_;
    int local_size_ = 0;
    std::vector<std::vector<int>> local_rings_;
    ncl_algo inter_ = NCL_ALGO_AUTO;
    bool staged_ = false;
    bool wide_ = false;
    bool zones_ = false;
    bool reduce_write_ = false;
    uint32_t in_flight_ = 1;
    bool fill_queue_ = false;
    mutable std::unordered_map<int64_t, Route> routes_;
    uint64_t slice_ = 0, scratch_ = 0;
};

} // namespace model
