// cluster.cpp — network + NPUs + communicators, and the event-driven loop that runs collectives.
#include "model/cluster.hpp"

#include <cstdlib>

#include <systemc>

namespace model {

Cluster::Cluster(const rs_topology_spec &topo, rs_fidelity fidelity, const rs_device_params &device,
                 bool payload, uint64_t scratch_bytes)
    : net_(new Network(topo, fidelity))
{
    int p = topo.nranks;
    ranks_.resize((size_t)p);
    npus_.resize((size_t)p);
    for (int r = 0; r < p; r++) {
        ranks_[r].npu.reset(new Npu(r, *net_, device, payload, scratch_bytes, npus_, wake, this));
        npus_[r] = ranks_[r].npu.get();
    }
}

Cluster::~Cluster()
{
    for (Rank &r : ranks_)
        ncl_comm_destroy(r.comm);
}

ncl_result Cluster::connect(const ncl_config &config, const HalWrap &wrap)
{
    ncl_config cfg = config;
    if (!cfg.alloc || !cfg.free) {
        cfg.alloc = [](void *, size_t n) { return std::malloc(n); };
        cfg.free = [](void *, void *ptr) { std::free(ptr); };
    }
    timeout_ns_ = cfg.timeout_ns;
    for (int r = 0; r < nranks(); r++) {
        ncl_hal hal = wrap ? wrap(r, *ranks_[r].npu) : ranks_[r].npu->hal();
        ncl_result rc = ncl_comm_create(&ranks_[r].comm, nranks(), r, &hal, &cfg);
        if (rc != NCL_SUCCESS)
            return rc;
    }
    return NCL_SUCCESS;
}

void Cluster::set_buffers(int rank, const void *send, void *recv)
{
    ranks_[rank].send = send;
    ranks_[rank].recv = recv;
}

void Cluster::wake(void *self, int rank)
{
    Cluster *c = static_cast<Cluster *>(self);
    if (c->waker_)
        return c->waker_(rank);
    Rank &r = c->ranks_[rank];
    if (r.pending || r.remaining == 0)
        return;
    r.pending = true;
    c->net_->scheduler().after(0, ev_progress, c, (uint64_t)rank);
}

void Cluster::ev_progress(void *self, uint64_t rank)
{
    Cluster *c = static_cast<Cluster *>(self);
    c->ranks_[rank].pending = false;
    c->progress((int)rank);
}

void Cluster::fail(int rank, ncl_result rc)
{
    ranks_[rank].remaining = 0;
    if (failed_rank_ < 0)
        failed_rank_ = rank, failed_rc_ = rc;
}

void Cluster::start(int rank)
{
    Rank &r = ranks_[rank];
    const Collective &c = call_;
    ncl_result rc = NCL_ERR_INTERNAL;
    switch (c.coll) {
    case NCL_COLL_ALLREDUCE: rc = ncl_allreduce_start(r.send, r.recv, c.count, c.dt, c.op, r.comm); break;
    case NCL_COLL_BROADCAST: rc = ncl_broadcast_start(r.send, r.recv, c.count, c.dt, c.root, r.comm); break;
    case NCL_COLL_REDUCE: rc = ncl_reduce_start(r.send, r.recv, c.count, c.dt, c.op, c.root, r.comm); break;
    case NCL_COLL_REDUCE_SCATTER: rc = ncl_reduce_scatter_start(r.send, r.recv, c.count, c.dt, c.op, r.comm); break;
    case NCL_COLL_ALLGATHER: rc = ncl_allgather_start(r.send, r.recv, c.count, c.dt, r.comm); break;
    default: break;
    }
    if (rc != NCL_SUCCESS)
        return fail(rank, rc);
    progress(rank);
}

void Cluster::progress(int rank)
{
    Rank &r = ranks_[rank];
    if (r.remaining == 0)
        return;
    int done = 0;
    ncl_result rc = ncl_test(r.comm, &done);
    if (!done)
        return;
    if (rc != NCL_SUCCESS)
        return fail(rank, rc);
    r.end_ps = net_->scheduler().now();
    if (--r.remaining > 0)
        start(rank); // back to back, like a loop of launches on a stream
}

void Cluster::idle_until(uint64_t t_ps)
{
    uint64_t now = net_->scheduler().now();
    if (t_ps > now)
        sc_core::sc_start(sc_core::sc_time((double)(t_ps - now), sc_core::SC_PS));
}

bool Cluster::run(const Collective &c, int k, double *time_us)
{
    call_ = c;
    failed_rank_ = -1; // this run's failure, not an earlier one's
    failed_rc_ = NCL_SUCCESS;
    Scheduler &s = net_->scheduler();
    uint64_t t0 = s.now();
    for (Rank &r : ranks_)
        r.remaining = k, r.end_ps = t0;
    for (int i = 0; i < nranks(); i++)
        start(i);
    for (;;) {
        sc_core::sc_start();
        bool stuck = false;
        for (Rank &r : ranks_)
            stuck |= r.remaining > 0;
        if (!stuck)
            break;
        // Nothing moves any more: let simulated time reach the engine's timeout, so the waits
        // that can never be satisfied fail with their diagnosis instead of hanging.
        uint64_t warp = (timeout_ns_ + 1) * 1000; // ps
        for (int i = 0; i < nranks(); i++)
            if (ranks_[i].remaining > 0)
                s.after(warp, ev_progress, this, (uint64_t)i), ranks_[i].pending = true;
    }
    uint64_t end = t0;
    for (Rank &r : ranks_)
        end = r.end_ps > end ? r.end_ps : end;
    *time_us = k > 0 ? (double)(end - t0) / 1e6 / k : 0.0;
    return failed_rank_ < 0;
}

} // namespace model
