// acc_sim.hpp — a small driver for the accuracy tests: one Network + one Npu and communicator per
// rank, collectives run timing-only (no payload) and timed in simulated picoseconds. Follows the
// driving pattern of sim/rs_simrun.cpp (event-driven ncl_*_start / ncl_test), but the test picks
// the engine config itself (1 channel, a slice larger than any step, a forced algorithm).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include <systemc>

#include <ncl/ncl.h>
#include <ncl/ncl_dtype.h>

#include "model/network.hpp"
#include "model/npu.hpp"

namespace acc {

static int g_failures = 0;

#define ACC_CHECK(cond)                                                                            \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);         \
            acc::g_failures++;                                                                     \
        }                                                                                          \
    } while (0)

// Never-dereferenced buffer addresses (timing-only runs move no bytes; see rs_simrun.cpp).
const uintptr_t k_fake_send = uintptr_t(1) << 44, k_fake_recv = uintptr_t(2) << 44;

/* Link / device parameters every accuracy case starts from: HCCS-like link, 1 us latency, 1 us
 * task overhead, reduce unit faster than the link (so gamma is hidden, see test_gamma). */
inline rs_link_params link_params(double bw = 30e9, double lat = 1e-6)
{
    rs_link_params p;
    p.bandwidth = bw;
    p.latency = lat;
    p.packet_bytes = 4096;
    p.header_bytes = 64;
    p.buffer_bytes = 1u << 20; // >> bandwidth x round trip (60 KB): credits never stall
    return p;
}

inline rs_device_params device_params()
{
    rs_device_params d;
    d.dma_engines = 4;
    d.queue_depth = 16;
    d.mem_bandwidth = 400e9;
    d.reduce_bandwidth = 200e9;
    d.task_overhead = 1e-6;
    d.memory_bytes = 64ull << 30;
    return d;
}

inline rs_topology_spec ring_spec(int p, rs_topo_kind kind = RS_TOPO_RING)
{
    rs_topology_spec s{};
    s.kind = kind;
    s.nranks = p;
    s.link = link_params();
    s.nic = link_params(12.5e9, 2e-6);
    s.sw.latency = 100e-9;
    s.sw.buffer_bytes = 1u << 20;
    return s;
}

/* REFERENCE.md alpha-beta terms for a link: alpha = L + o, beta = 1 / (B x payload fraction). */
struct Terms {
    double alpha, beta;
};
inline Terms terms(const rs_link_params &l, const rs_device_params &d)
{
    double frac = (double)l.packet_bytes / (double)(l.packet_bytes + l.header_bytes);
    return Terms{l.latency + d.task_overhead, 1.0 / (l.bandwidth * frac)};
}

class Sim {
public:
    /* Build during elaboration (before the first sc_start of the process). */
    Sim(const rs_topology_spec &spec, rs_fidelity fid, const rs_device_params &dev,
        uint64_t scratch_bytes = 4ull << 30)
        : spec_(spec), dev_(dev)
    {
        int p = spec.nranks;
        net_.reset(new model::Network(spec, fid));
        ptrs_.resize((size_t)p);
        ranks_.resize((size_t)p);
        for (int r = 0; r < p; r++) {
            ranks_[r].npu.reset(new model::Npu(r, *net_, dev, false, scratch_bytes, ptrs_, wake, this));
            ptrs_[r] = ranks_[r].npu.get();
        }
        ncl_config cfg = NCL_CONFIG_INIT;
        cfg.alloc = [](void *, size_t n) { return std::malloc(n); };
        cfg.free = [](void *, void *ptr) { std::free(ptr); };
        cfg.check_schedules = 0;
        cfg.channels = 1;              // one ring: what the formulas count
        cfg.slice_bytes = 1ull << 40;  // one round: no step is cut into slices
        cfg.algorithm[NCL_COLL_ALLREDUCE] = NCL_ALGO_RING;
        cfg.algorithm[NCL_COLL_REDUCE_SCATTER] = NCL_ALGO_RING;
        cfg.algorithm[NCL_COLL_ALLGATHER] = NCL_ALGO_RING;
        cfg.algorithm[NCL_COLL_BROADCAST] = NCL_ALGO_CHAIN;
        // the engine's cost model (chain segment count) sees the links, as in rs_simrun.cpp
        cfg.link_alpha_ns = (uint32_t)((spec.link.latency + dev.task_overhead) * 1e9);
        cfg.link_gbps = (uint32_t)(spec.link.bandwidth / 1e9) ? (uint32_t)(spec.link.bandwidth / 1e9) : 1;
        cfg_ = cfg;
        for (int r = 0; r < p; r++) {
            ncl_hal hal = ranks_[r].npu->hal();
            if (ncl_comm_create(&ranks_[r].comm, p, r, &hal, &cfg) != NCL_SUCCESS) {
                std::fprintf(stderr, "rank %d: ncl_comm_create failed\n", r);
                std::exit(2);
            }
        }
    }
    ~Sim()
    {
        for (Rank &r : ranks_)
            ncl_comm_destroy(r.comm);
    }
    Sim(const Sim &) = delete;
    Sim &operator=(const Sim &) = delete;

    int nranks() const { return (int)ranks_.size(); }
    model::Network &net() { return *net_; }
    const ncl_config &config() const { return cfg_; }

    /* One collective of `bytes` (n of REFERENCE.md: the buffer one rank sees; the gathered size for
     * allgather / reduce-scatter), fp32 sum, all ranks starting together. Simulated seconds from
     * the common start to the last rank's end; -1 on an engine error. */
    double run(ncl_coll coll, uint64_t bytes, bool inplace, int root = 0)
    {
        int p = nranks();
        coll_ = coll;
        root_ = root;
        bool per_rank = coll == NCL_COLL_ALLGATHER || coll == NCL_COLL_REDUCE_SCATTER;
        count_ = bytes / 4 / (per_rank ? (uint64_t)p : 1);
        model::Scheduler &s = net_->scheduler();
        uint64_t t0 = s.now();
        failed_ = false;
        for (int r = 0; r < p; r++) {
            Rank &rk = ranks_[r];
            uint64_t off = (uint64_t)r * count_ * 4;
            unsigned char *a = reinterpret_cast<unsigned char *>(k_fake_send);
            unsigned char *b = reinterpret_cast<unsigned char *>(k_fake_recv);
            if (!inplace)
                rk.send = a, rk.recv = b;
            else if (coll == NCL_COLL_REDUCE_SCATTER)
                rk.send = a, rk.recv = a + off;
            else if (coll == NCL_COLL_ALLGATHER)
                rk.send = a + off, rk.recv = a;
            else
                rk.send = rk.recv = a;
            rk.remaining = 1;
            rk.end_ps = t0;
        }
        for (int r = 0; r < p; r++)
            start(r);
        sc_core::sc_start();
        uint64_t end = t0;
        for (Rank &rk : ranks_) {
            if (rk.remaining)
                failed_ = true;
            end = rk.end_ps > end ? rk.end_ps : end;
        }
        if (failed_) {
            std::fprintf(stderr, "engine error: %s\n", ncl_comm_last_error(ranks_[0].comm));
            for (Rank &rk : ranks_)
                rk.remaining = 0;
            return -1;
        }
        return (double)(end - t0) * 1e-12;
    }

    /* Simulated seconds a zero-byte notify takes from `src` to `dst` (route latency + forwarding). */
    double notify_latency(int src, int dst)
    {
        double t0 = net_->now_s(), t = -1;
        net_->transfer(src, dst, 0, [this, &t] { t = net_->now_s(); });
        sc_core::sc_start();
        return t - t0;
    }

private:
    struct Rank {
        std::unique_ptr<model::Npu> npu;
        ncl_comm *comm = nullptr;
        const void *send = nullptr;
        void *recv = nullptr;
        int remaining = 0;
        bool pending = false;
        uint64_t end_ps = 0;
    };

    static void wake(void *self, int rank)
    {
        Sim *s = static_cast<Sim *>(self);
        Rank &r = s->ranks_[rank];
        if (r.pending || r.remaining == 0)
            return;
        r.pending = true;
        s->net_->scheduler().after(0, ev_progress, s, (uint64_t)rank);
    }
    static void ev_progress(void *self, uint64_t rank)
    {
        Sim *s = static_cast<Sim *>(self);
        s->ranks_[rank].pending = false;
        s->progress((int)rank);
    }
    void start(int rank)
    {
        Rank &r = ranks_[rank];
        ncl_result rc = NCL_ERR_INTERNAL;
        switch (coll_) {
        case NCL_COLL_ALLREDUCE: rc = ncl_allreduce_start(r.send, r.recv, count_, NCL_FLOAT32, NCL_SUM, r.comm); break;
        case NCL_COLL_BROADCAST: rc = ncl_broadcast_start(r.send, r.recv, count_, NCL_FLOAT32, root_, r.comm); break;
        case NCL_COLL_REDUCE_SCATTER: rc = ncl_reduce_scatter_start(r.send, r.recv, count_, NCL_FLOAT32, NCL_SUM, r.comm); break;
        case NCL_COLL_ALLGATHER: rc = ncl_allgather_start(r.send, r.recv, count_, NCL_FLOAT32, r.comm); break;
        default: break;
        }
        if (rc != NCL_SUCCESS) {
            std::fprintf(stderr, "rank %d: start failed: %s (%s)\n", rank, ncl_strerror(rc),
                         ncl_comm_last_error(r.comm));
            failed_ = true;
            return;
        }
        progress(rank);
    }
    void progress(int rank)
    {
        Rank &r = ranks_[rank];
        if (r.remaining == 0)
            return;
        int done = 0;
        ncl_result rc = ncl_test(r.comm, &done);
        if (!done)
            return;
        if (rc != NCL_SUCCESS) {
            std::fprintf(stderr, "rank %d: %s (%s)\n", rank, ncl_strerror(rc), ncl_comm_last_error(r.comm));
            failed_ = true;
            return; // remaining stays 1: run() reports the failure
        }
        r.end_ps = net_->scheduler().now();
        r.remaining = 0;
    }

    rs_topology_spec spec_;
    rs_device_params dev_;
    ncl_config cfg_{};
    std::unique_ptr<model::Network> net_;
    std::vector<model::Npu *> ptrs_;
    std::vector<Rank> ranks_;
    ncl_coll coll_ = NCL_COLL_ALLREDUCE;
    int root_ = 0;
    uint64_t count_ = 0;
    bool failed_ = false;
};

} // namespace acc
