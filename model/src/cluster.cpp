// cluster.cpp — network + NPUs + communicators, and the event-driven loop that runs collectives.
#include "model/cluster.hpp"

#include <cstdlib>
#include <cstring>

#include <systemc>

#include <ncl/ncl_dtype.h>

#include "model/costmodel.hpp"

namespace model {

Cluster::Cluster(const rs_topology_spec &topo, rs_fidelity fidelity, const rs_device_params &device,
                 bool payload, uint64_t scratch_bytes)
    : net_(new Network(topo, fidelity)), payload_(payload), launch_ps_(Scheduler::to_ps(device.launch_overhead))
{
    int p = topo.nranks;
    ranks_.resize((size_t)p);
    npus_.resize((size_t)p);
    rtl_fault_.resize((size_t)p);
    bool mixed = false;
    if (device.fidelity == RS_DEVICE_RTL) {
        std::vector<uint8_t> rtl((size_t)p, 1);
        for (int r = 0; r < p && device.rtl_ranks; r++)
            rtl[r] = r < 64 && (device.rtl_ranks >> r & 1);
        for (uint8_t x : rtl)
            mixed |= x == 0;
        rtl_.reset(new RtlDomain(*net_, rtl, device.rtl_clock, device.memory_bytes, scratch_bytes, wake, this, &npus_));
    }
    for (int r = 0; r < p; r++) {
        if (is_rtl(r)) {
            // mixed: an Npu stands in for the RTL rank towards the SystemC ranks (their writes and
            // records reach the block through it; its scratch is the block's: RtlDomain::set_proxy)
            if (mixed) {
                proxies_.emplace_back(new Npu(r, *net_, device, payload, 0, npus_, RtlDomain::proxy_wake, rtl_.get()));
                npus_[r] = proxies_.back().get();
                rtl_->set_proxy(r, npus_[r]);
            }
            continue;
        }
        ranks_[r].npu.reset(new Npu(r, *net_, device, payload, scratch_bytes, npus_, wake, this));
        npus_[r] = ranks_[r].npu.get();
        if (mixed) // every rank must plan alike: the NPUs report the block's queues and engine
            npus_[r]->report_caps(RtlDomain::kQueues, 1, 1);
    }
}

Cluster::~Cluster()
{
    disconnect();
}

void Cluster::disconnect()
{
    for (Rank &r : ranks_) {
        ncl_comm_destroy(r.comm);
        r.comm = nullptr;
    }
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
        if (is_rtl(r)) { // bring the block up (register accesses clock it), then its mmio HAL
            ncl_result rc = rtl_->init(r);
            if (rc != NCL_SUCCESS) {
                rtl_fault_[r] = ncl_mmio_last_error(rtl_->mmio(r));
                return rc;
            }
            rc = ncl_comm_create(&ranks_[r].comm, nranks(), r, rtl_->hal(r), &cfg);
            if (rc != NCL_SUCCESS)
                return rc;
            continue;
        }
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

// A call starts on the devices launch_overhead after the host makes it: every call of a run pays
// it, back to back ones one after another (as launches on one stream).
void Cluster::launch(int rank)
{
    if (launch_ps_ == 0)
        return start(rank);
    ranks_[rank].launching = true;
    net_->scheduler().after(launch_ps_, ev_start, this, (uint64_t)rank);
}

void Cluster::ev_start(void *self, uint64_t rank)
{
    Cluster *c = static_cast<Cluster *>(self);
    c->ranks_[rank].launching = false;
    c->start((int)rank);
}

void Cluster::ev_progress(void *self, uint64_t rank)
{
    Cluster *c = static_cast<Cluster *>(self);
    c->ranks_[rank].pending = false;
    c->progress((int)rank);
}

// Called as each rank finishes its calls. When the last one does, the run is over: the network's
// trailing events (credits on their way back) still drain, but a fault due later waits for the
// run that reaches its time — without the hold, sc_start() would jump to it and the next
// collective would start on the faulted network.
void Cluster::rank_done()
{
    if (--busy_ranks_ == 0)
        net_->scheduler().hold_from(net_->next_fault_ps());
}

void Cluster::fail(int rank, ncl_result rc)
{
    if (ranks_[rank].remaining > 0)
        rank_done();
    ranks_[rank].remaining = 0;
    if (failed_rank_ < 0)
        failed_rank_ = rank, failed_rc_ = rc;
}

const char *Cluster::last_error(int rank)
{
    const Rank &r = ranks_[rank];
    return ncl_comm_last_error(r.failed_op ? r.failed_op : r.comm);
}

std::string Cluster::device_fault(int rank)
{
    if (!is_rtl(rank))
        return ranks_[rank].npu->fault();
    if (!rtl_fault_[rank].empty())
        return rtl_fault_[rank];
    return rtl_->mmio(rank) ? ncl_mmio_last_error(rtl_->mmio(rank)) : "";
}

// An RTL rank works on device addresses (the mmio backend's symmetric convention): the host
// buffers set_buffers gave are copied into its memory before the calls (in) and the result
// back out after them. Out of place: SEND and RECV of the layout; in place (the buffers
// overlap, NCCL's rules) the whole region sits at RECV with the same offsets, so every rank
// names the same RECV address.
void Cluster::rtl_map(int rank, bool in)
{
    Rank &r = ranks_[rank];
    const Collective &c = call_;
    const RtlDomain::Layout &lay = rtl_->layout();
    uint64_t es = ncl_dtype_size(c.dt), p = (uint64_t)nranks();
    uint64_t in_bytes = (c.coll == NCL_COLL_REDUCE_SCATTER || c.coll == NCL_COLL_ALLTOALL ? c.count * p : c.count) * es;
    uint64_t out_bytes = (c.coll == NCL_COLL_ALLGATHER || c.coll == NCL_COLL_ALLTOALL ? c.count * p : c.count) * es;
    uintptr_t s = (uintptr_t)r.send, d = (uintptr_t)r.recv;
    bool inplace = s && d && s < d + out_bytes && d < s + in_bytes;
    uint8_t *mem = rtl_->mem(rank);
    if (in) {
        rtl_fault_[rank].clear();
        if (inplace) {
            uintptr_t base = s < d ? s : d, end = s + in_bytes > d + out_bytes ? s + in_bytes : d + out_bytes;
            r.dev_send = (const void *)(uintptr_t)(lay.recv + (s - base));
            r.dev_recv = (void *)(uintptr_t)(lay.recv + (d - base));
            if (end - base > lay.buf_bytes)
                rtl_fault_[rank] = "the call needs " + std::to_string(end - base) + " B of device memory at RECV, device.memory leaves " +
                                   std::to_string(lay.buf_bytes) + " B";
            else if (payload_)
                std::memcpy(mem + lay.recv, (const void *)base, end - base);
        } else {
            r.dev_send = (const void *)(uintptr_t)lay.send;
            r.dev_recv = (void *)(uintptr_t)lay.recv;
            if (in_bytes > lay.buf_bytes || out_bytes > lay.buf_bytes)
                rtl_fault_[rank] = "the call needs " + std::to_string(in_bytes > out_bytes ? in_bytes : out_bytes) +
                                   " B buffers, device.memory leaves " + std::to_string(lay.buf_bytes) + " B each";
            else if (payload_) {
                if (s)
                    std::memcpy(mem + lay.send, (const void *)s, in_bytes);
                if (d) // the host's poisoned output: results never written show as #wrong
                    std::memcpy(mem + lay.recv, (const void *)d, out_bytes);
            }
        }
        return;
    }
    if (payload_ && d && rtl_fault_[rank].empty())
        std::memcpy((void *)d, mem + (uintptr_t)r.dev_recv, out_bytes);
}

void Cluster::follow_links(std::vector<std::vector<int>> rings, std::vector<uint32_t> initial, Pricer price)
{
    rings_ = std::move(rings);
    price_ = std::move(price);
    views_.assign(1, LinkView{std::move(initial), {}});
    call_view_.clear();
    faults_seen_ = net_->faults_applied();
    for (Rank &r : ranks_)
        r.calls = 0, r.view = 0;
}

void Cluster::update_view(int rank)
{
    Rank &r = ranks_[rank];
    uint64_t call = r.calls++;
    if (call == call_view_.size()) { // the first rank to start this call decides its view
        if (net_->faults_applied() != faults_seen_) {
            faults_seen_ = net_->faults_applied();
            std::vector<rs_link_params> live = net_->link_params();
            LinkView v;
            if (!rings_.empty())
                v.weights = ring_weights(net_->topology(), rings_, &live);
            if (price_)
                v.costs = price_(live);
            views_.push_back(std::move(v));
        }
        call_view_.push_back((uint32_t)(views_.size() - 1));
    }
    uint32_t want = call_view_[call];
    if (want == r.view)
        return;
    const LinkView &v = views_[want];
    // neither can fail between collectives; should one, the rank's next call tries again
    if (!v.weights.empty() && ncl_comm_set_ring_weights(r.comm, v.weights.data()) != NCL_SUCCESS)
        return;
    if (!v.costs.empty() && ncl_comm_set_costs(r.comm, v.costs.data(), (uint32_t)v.costs.size()) != NCL_SUCCESS)
        return;
    r.view = want;
}

void Cluster::start(int rank)
{
    Rank &r = ranks_[rank];
    if (!views_.empty())
        update_view(rank);
    const Collective &c = call_;
    ncl_result rc = NCL_ERR_INTERNAL;
    const void *send = r.send;
    void *recv = r.recv;
    if (is_rtl(rank)) {
        if (!rtl_fault_[rank].empty())
            return fail(rank, NCL_ERR_INVALID_ARGUMENT);
        send = r.dev_send;
        recv = r.dev_recv;
    }
    r.failed_op = nullptr;
    if (c.sendrecv) { // both transfers at once: neither waits for the other's peer
        int p = nranks();
        rc = ncl_send_start(send, c.count, c.dt, (rank + 1) % p, r.comm, &r.ops[0]);
        if (rc == NCL_SUCCESS)
            rc = ncl_recv_start(recv, c.count, c.dt, (rank + p - 1) % p, r.comm, &r.ops[1]);
        if (rc != NCL_SUCCESS) {
            r.ops[0] = r.ops[1] = nullptr;
            return fail(rank, rc);
        }
        return progress(rank);
    }
    switch (c.coll) {
    case NCL_COLL_ALLREDUCE: rc = ncl_allreduce_start(send, recv, c.count, c.dt, c.op, r.comm); break;
    case NCL_COLL_BROADCAST: rc = ncl_broadcast_start(send, recv, c.count, c.dt, c.root, r.comm); break;
    case NCL_COLL_REDUCE: rc = ncl_reduce_start(send, recv, c.count, c.dt, c.op, c.root, r.comm); break;
    case NCL_COLL_REDUCE_SCATTER: rc = ncl_reduce_scatter_start(send, recv, c.count, c.dt, c.op, r.comm); break;
    case NCL_COLL_ALLGATHER: rc = ncl_allgather_start(send, recv, c.count, c.dt, r.comm); break;
    case NCL_COLL_ALLTOALL:
        rc = c.a2av ? ncl_alltoallv_start(send, recv, c.a2av, c.dt, r.comm)
                    : ncl_alltoall_start(send, recv, c.count, c.dt, r.comm);
        break;
    default: break;
    }
    if (rc != NCL_SUCCESS)
        return fail(rank, rc);
    progress(rank);
}

void Cluster::progress(int rank)
{
    Rank &r = ranks_[rank];
    if (r.remaining == 0 || r.launching)
        return;
    if (is_rtl(rank)) // take the block's events, so its next one raises irq again
        rtl_->events_taken(rank);
    int done = 0;
    ncl_result rc = NCL_SUCCESS;
    if (call_.sendrecv) { // done when both transfers are
        done = 1;
        for (ncl_comm *&op : r.ops) {
            int fin = 1;
            ncl_result orc = op ? ncl_test(op, &fin) : NCL_SUCCESS;
            if (orc != NCL_SUCCESS && rc == NCL_SUCCESS)
                rc = orc, r.failed_op = op;
            if (fin)
                op = nullptr;
            done &= fin;
        }
        if (rc != NCL_SUCCESS) {
            r.ops[0] = r.ops[1] = nullptr;
            return fail(rank, rc);
        }
    } else {
        rc = ncl_test(r.comm, &done);
    }
    if (!done)
        return;
    if (rc != NCL_SUCCESS)
        return fail(rank, rc);
    r.end_ps = net_->scheduler().now();
    if (--r.remaining > 0)
        launch(rank); // back to back, like a loop of launches on a stream
    else
        rank_done();
}

void Cluster::idle_until(uint64_t t_ps)
{
    uint64_t now = net_->scheduler().now();
    net_->scheduler().hold_from(UINT64_MAX); // idle time passes: faults due before t_ps happen
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
    busy_ranks_ = k > 0 ? nranks() : 0;
    s.hold_from(UINT64_MAX); // while the run goes on, every fault happens at its time
    for (int i = 0; i < nranks(); i++)
        if (is_rtl(i))
            rtl_map(i, true);
    for (int i = 0; i < nranks(); i++)
        launch(i);
    for (;;) {
        sc_core::sc_start();
        if (s.overflowed()) { // the clock cannot hold this run's times: no result, never a wrapped one
            fault_ = "simulated time passed the model's clock horizon (2^62 ps, about 53 days) during " +
                     std::string(ncl_coll_name(c.coll)) + " of " + std::to_string(c.count) +
                     " elements: the links or devices are too slow for this size";
            failed_rank_ = 0, failed_rc_ = NCL_ERR_UNSUPPORTED;
            return false;
        }
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
    for (int i = 0; i < nranks(); i++)
        if (is_rtl(i))
            rtl_map(i, false);
    uint64_t end = t0;
    for (Rank &r : ranks_)
        end = r.end_ps > end ? r.end_ps : end;
    *time_us = k > 0 ? (double)(end - t0) / 1e6 / k : 0.0;
    return failed_rank_ < 0;
}

} // namespace model
