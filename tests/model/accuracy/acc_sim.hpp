// acc_sim.hpp — the accuracy tests' machine: a model::Cluster (as `ringsim run` uses) with the
// engine configured the way the formulas count (1 channel, a slice larger than any step, forced
// algorithms), collectives run timing-only and timed in simulated seconds.
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

#include "model/cluster.hpp"

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
    rs_link_params p{};
    p.bandwidth = bw;
    p.latency = lat;
    p.packet_bytes = 4096;
    p.header_bytes = 64;
    p.buffer_bytes = 1u << 20; // >> bandwidth x round trip (60 KB): credits never stall
    return p;
}

inline rs_device_params device_params()
{
    rs_device_params d{};
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

/* A model::Cluster set up the way the formulas count: 1 channel, one round per step, forced
 * ring / chain algorithms, timing only. */
class Sim {
public:
    /* Build during elaboration (before the first sc_start of the process). */
    Sim(const rs_topology_spec &spec, rs_fidelity fid, const rs_device_params &dev,
        uint64_t scratch_bytes = 4ull << 30, const std::vector<std::vector<int>> &rings = {})
        : cl_(spec, fid, dev, false, scratch_bytes)
    {
        ncl_config cfg = NCL_CONFIG_INIT;
        cfg.check_schedules = 0;
        cfg.channels = 1;              // one ring: what the formulas count
        std::vector<int32_t> table;    // or one channel per given logical ring
        for (const std::vector<int> &r : rings)
            table.insert(table.end(), r.begin(), r.end());
        if (!rings.empty()) {
            cfg.rings = table.data();
            cfg.ring_count = (uint32_t)rings.size();
            cfg.channels = (uint32_t)rings.size();
        }
        cfg.slice_bytes = 1ull << 40;  // one round: no step is cut into slices
        cfg.algorithm[NCL_COLL_ALLREDUCE] = NCL_ALGO_RING;
        cfg.algorithm[NCL_COLL_REDUCE_SCATTER] = NCL_ALGO_RING;
        cfg.algorithm[NCL_COLL_ALLGATHER] = NCL_ALGO_RING;
        cfg.algorithm[NCL_COLL_BROADCAST] = NCL_ALGO_CHAIN;
        // the engine's cost model (chain segment count) sees the links, as in rs_simrun.cpp
        cfg.link_alpha_ns = (uint32_t)((spec.link.latency + dev.task_overhead) * 1e9);
        cfg.link_gbps = (uint32_t)(spec.link.bandwidth / 1e9) ? (uint32_t)(spec.link.bandwidth / 1e9) : 1;
        cfg.mem_gbps = (uint32_t)(dev.mem_bandwidth / 1e9);
        if (cl_.connect(cfg) != NCL_SUCCESS) {
            std::fprintf(stderr, "ncl_comm_create failed\n");
            std::exit(2);
        }
        cfg_ = cfg;
        cfg_.rings = nullptr; // the communicators keep their own copy
    }

    int nranks() const { return cl_.nranks(); }

    /* Forces `algo` for `coll` on every rank (the constructor forces ring and chain). */
    void force(ncl_coll coll, ncl_algo algo)
    {
        for (int r = 0; r < nranks(); r++)
            ncl_comm_set_algorithm(cl_.comm(r), coll, algo);
    }
    model::Network &net() { return cl_.network(); }
    const ncl_config &config() const { return cfg_; }

    /* One collective of `bytes` (n of REFERENCE.md: the buffer one rank sees; the gathered size for
     * allgather / reduce-scatter), fp32 sum, all ranks starting together. Simulated seconds from
     * the common start to the last rank's end; -1 on an engine error. */
    double run(ncl_coll coll, uint64_t bytes, bool inplace, int root = 0)
    {
        int p = nranks();
        bool per_rank = coll == NCL_COLL_ALLGATHER || coll == NCL_COLL_REDUCE_SCATTER;
        uint64_t count = bytes / 4 / (per_rank ? (uint64_t)p : 1);
        for (int r = 0; r < p; r++) {
            uint64_t off = (uint64_t)r * count * 4;
            const unsigned char *a = reinterpret_cast<const unsigned char *>(k_fake_send);
            unsigned char *b = reinterpret_cast<unsigned char *>(k_fake_recv);
            unsigned char *one = reinterpret_cast<unsigned char *>(k_fake_send);
            if (!inplace)
                cl_.set_buffers(r, a, b);
            else if (coll == NCL_COLL_REDUCE_SCATTER)
                cl_.set_buffers(r, one, one + off);
            else if (coll == NCL_COLL_ALLGATHER)
                cl_.set_buffers(r, one + off, one);
            else
                cl_.set_buffers(r, one, one);
        }
        double us = 0;
        if (!cl_.run(model::Collective{coll, count, NCL_FLOAT32, NCL_SUM, root}, 1, &us)) {
            std::fprintf(stderr, "engine error: %s\n", ncl_comm_last_error(cl_.comm(cl_.failed_rank())));
            return -1;
        }
        return us * 1e-6;
    }

    /* Simulated seconds a zero-byte notify takes from `src` to `dst` (route latency + forwarding). */
    double notify_latency(int src, int dst)
    {
        model::Network &n = net();
        double t0 = n.now_s(), t = -1;
        n.transfer(src, dst, 0, [&n, &t] { t = n.now_s(); });
        sc_core::sc_start();
        return t - t0;
    }

private:
    model::Cluster cl_;
    ncl_config cfg_{};
};

} // namespace acc
