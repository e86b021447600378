// npu.cpp — the NPU device and the `sim` HAL backend (see npu.hpp for the timing model).
#include "model/npu.hpp"

#include "ncl_backend.h"

#include <cmath>
#include <map>

#include "model/rs_defaults.h"

namespace model {

namespace {

const ParamInfo k_params[] = {
    {"dma_engines", "", RS_DEFAULT_NPU_DMA_ENGINES, "data tasks the device runs at once (writes over its NIC take none: the NIC moves them); more wait in FIFO order"},
    {"queue_depth", "", RS_DEFAULT_NPU_QUEUE_DEPTH,
     "data tasks a queue may have in flight at once (the engine keeps at most 4): the next is issued "
     "while the ones before it still move"},
    {"memory_bandwidth", "B/s", RS_DEFAULT_NPU_MEMORY_BANDWIDTH,
     "shared fairly by DMA reads and writes and reductions: a write streams n bytes at each end, "
     "a write-reduce 2n at the destination, a two-source write (REDUCE_WRITE) 2n at the source, a local "
     "copy or divide 2n, a local reduce 3n"},
    {"reduce_bandwidth", "B/s", RS_DEFAULT_NPU_REDUCE_BANDWIDTH,
     "inline and local reductions run at this rate (a two-source write reduces at both ends at once)"},
    {"task_overhead", "s", RS_DEFAULT_NPU_TASK_OVERHEAD, "time to issue one data task (the o of alpha = L + o)"},
    {"launch_overhead", "s", "0 s",
     "from a call to its start on the device (a kernel launch, a doorbell): every call pays it once"},
    {"latency_path_overhead", "s", "task_overhead",
     "time to issue a data task of a call on the engine's latency path (workload.latency_path: calls up to "
     "that size, NCCL's LL protocols)"},
    {"latency_path_efficiency", "", "0.5",
     "useful bytes per wire byte of a latency-path write: its data and flags go in one stream (no notify of "
     "their own), so the wire carries bytes / efficiency"},
    {"memory", "B", RS_DEFAULT_NPU_MEMORY, "device memory (scratch comes out of it)"},
    {"inline_reduce", "", RS_DEFAULT_NPU_INLINE_REDUCE,
     "dtypes (and ops) the DMA reduces as it writes, or as it reads two sources (REDUCE_WRITE); a reducing "
     "write of any other is refused"},
    {"inline_align", "B", RS_DEFAULT_NPU_INLINE_ALIGN, "inline reduce needs offsets and lengths that are multiples of this"},
    {"scratch", "B", RS_DEFAULT_NPU_SCRATCH, "the engine's scratch (NCL_BUF_SCRATCH), out of memory; by default at most 16 MiB"},
};
const PortInfo k_ports[] = {
    {"net", "the network: one channel pair per link of the topology"},
};
const StatInfo k_stats[] = {
    {"tasks", "", "data tasks completed"},
    {"bytes", "B", "bytes written to peers"},
    {"memory_bytes", "B", "bytes through the device memory (reads + writes)"},
    {"memory_busy", "s", "time with at least one memory stream active"},
};

} // namespace

const ComponentInfo &Npu::info()
{
    static const ComponentInfo ci = MODEL_COMPONENT(
        "npu", "NPU device: DMA engines with inline reduce, notify registers, the firmware engine",
        k_params, k_ports, k_stats);
    return ci;
}

Npu::Npu(int rank, Network &net, const rs_device_params &dev, bool payload, uint64_t scratch_bytes,
         std::vector<Npu *> &all, Waker waker, void *waker_ud)
    : rank_(rank), memory_(&mem_), net_(net), sched_(net.scheduler()), dev_(dev), payload_(payload),
      scratch_bytes_(scratch_bytes), all_(all), waker_(waker), waker_ud_(waker_ud),
      mem_(net.scheduler(), dev.mem_bandwidth)
{
    if (payload_)
        scratch_.resize(scratch_bytes);
    bound_.base[NCL_BUF_SCRATCH] = payload_ ? scratch_.data() : nullptr;
    bound_.size[NCL_BUF_SCRATCH] = scratch_bytes_;
    counters_.assign(8, Counter{0, 0, false});
}

// A sub-communicator's context: the device's parameters, caps and waker, its own scratch (not
// zeroed: a device's scratch holds whatever was there).
Npu::Npu(Npu &device, int rank, std::vector<Npu *> &peers)
    : rank_(rank), device_(&device), memory_(&device.mem_), net_(device.net_), sched_(device.sched_),
      dev_(device.dev_), caps_queues_(device.caps_queues_), caps_engines_(device.caps_engines_),
      caps_depth_(device.caps_depth_), caps_zones_(device.caps_zones_), payload_(device.payload_),
      scratch_bytes_(device.scratch_bytes_), all_(peers), waker_(device.waker_), waker_ud_(device.waker_ud_),
      mem_(device.sched_, device.dev_.mem_bandwidth)
{
    if (payload_)
        own_scratch_.reset(new unsigned char[scratch_bytes_]);
    ext_scratch_ = own_scratch_.get();
    bound_.base[NCL_BUF_SCRATCH] = ext_scratch_;
    bound_.size[NCL_BUF_SCRATCH] = scratch_bytes_;
    counters_.assign(8, Counter{0, 0, false});
}

// The live sub-communicators by id, each with its members' contexts; released ones are kept
// until the machine goes (an event of theirs may still be on its way).
struct Npu::Groups {
    struct Group {
        std::vector<int32_t> devices;          // the members' devices
        std::vector<Npu *> ctx;                // the members' contexts, by rank: their all_
        std::vector<std::unique_ptr<Npu>> own;
        int released = 0;
    };
    std::map<uint32_t, std::unique_ptr<Group>> live;
    std::vector<std::unique_ptr<Group>> gone;
};

Npu::~Npu() = default;

Npu::Groups &Npu::groups()
{
    Npu *home = device_->all_[0];
    if (!home->groups_)
        home->groups_.reset(new Groups);
    return *home->groups_;
}

ncl_result Npu::split(uint32_t id, const int32_t *members, int n, int rank, ncl_hal *child)
{
    if (!id || !members || !child || n < 1 || rank < 0 || rank >= n || members[rank] != rank_)
        return NCL_ERR_BACKEND;
    std::vector<int32_t> devices((size_t)n);
    for (int i = 0; i < n; i++) {
        if (members[i] < 0 || (size_t)members[i] >= all_.size())
            return NCL_ERR_BACKEND;
        devices[(size_t)i] = all_[(size_t)members[i]]->device_->rank_;
    }
    Groups &g = groups();
    auto it = g.live.find(id);
    if (it != g.live.end() && it->second->devices != devices) {
        fault_ = "split: communicator " + std::to_string(id) + " exists with other members";
        return NCL_ERR_REMOTE;
    }
    if (it == g.live.end()) {
        std::unique_ptr<Groups::Group> grp(new Groups::Group);
        grp->devices = devices;
        grp->ctx.resize((size_t)n);
        std::vector<Npu *> &roots = device_->all_;
        for (int i = 0; i < n; i++) {
            grp->own.emplace_back(new Npu(*roots[(size_t)devices[(size_t)i]], i, grp->ctx));
            grp->ctx[(size_t)i] = grp->own.back().get();
        }
        it = g.live.emplace(id, std::move(grp)).first;
    }
    Npu *mine = it->second->ctx[(size_t)rank];
    if (mine->taken_) {
        fault_ = "split: this rank already made communicator " + std::to_string(id);
        return NCL_ERR_REMOTE;
    }
    mine->taken_ = true;
    *child = ncl_hal{&ops, mine};
    return NCL_SUCCESS;
}

void Npu::release()
{
    if (device_ == this || released_)
        return; // a device's own context lasts as long as it
    released_ = true;
    bound_.bound = false;
    Groups &g = groups();
    for (auto it = g.live.begin(); it != g.live.end(); ++it) {
        if (&it->second->ctx != &all_)
            continue;
        if (++it->second->released == (int)all_.size()) { // its id may be made again
            g.gone.push_back(std::move(it->second));
            g.live.erase(it);
        }
        break;
    }
    for (Npu *peer : all_) // whoever waits on this context learns it left
        if (peer != this)
            peer->wake();
}

// ---- HAL trampolines: one const table, `ctx` is the device ----------------------------------

static Npu *self(void *ctx) { return static_cast<Npu *>(ctx); }

const ncl_hal_ops Npu::ops = {
    [](void *c, ncl_hal_caps *o) { return self(c)->caps(o); },
    [](void *c, const ncl_hal_launch *l) { return self(c)->begin(l); },
    [](void *c, ncl_result r) { return self(c)->end(r); },
    [](void *c, uint32_t q, const ncl_task *t) { return self(c)->dma_submit(q, t); },
    [](void *c, uint32_t q, int *d) { return self(c)->dma_poll(q, d); },
    [](void *c, uint32_t q, int p, uint32_t id) { return self(c)->notify_record(q, p, id); },
    [](void *c, int p, uint32_t id, uint32_t n, int *d) { return self(c)->notify_try_wait(p, id, n, d); },
    nullptr, // wait_event: the driver is event-driven and never blocks
    [](void *c) { return self(c)->sched_.now() / 1000u; },
    nullptr, // log: errors reach the user through ncl_comm_last_error
    [](void *c, int p, uint32_t id, uint32_t *v) { return self(c)->notify_peek(p, id, v); },
    nullptr, // last_error: the driver reports fault() beside the engine's error
    [](void *c, uint32_t id, const int32_t *m, int n, int r, ncl_hal *child) { return self(c)->split(id, m, n, r, child); },
    [](void *c) { self(c)->release(); },
};

void Npu::caps_of(const rs_device_params &dev, uint64_t scratch, ncl_hal_caps *out)
{
    std::memset(out, 0, sizeof *out);
    out->scratch_bytes = scratch;
    out->max_queues = NCL_MAX_QUEUES;
    out->buf_align = 1;
    for (int d = 0; d < NCL_DTYPE_COUNT; d++)
        out->inline_ops[d] = (uint16_t)(NCL_INLINE_ALL_OPS & ~dev.no_inline_ops[d]);
    out->inline_align = dev.inline_align;
    // the vector unit converts like it reduces and reduces two sources on the way out; scratch is kept
    out->features = NCL_HAL_FEAT_WIDE | NCL_HAL_FEAT_ZONES | NCL_HAL_FEAT_REDUCE_WRITE;
    out->dma_engines = dev.dma_engines;
    out->queue_depth = dev.queue_depth;
}

ncl_result Npu::caps(ncl_hal_caps *out)
{
    caps_of(dev_, scratch_bytes_, out);
    out->max_queues = caps_queues_;
    if (caps_engines_)
        out->dma_engines = caps_engines_;
    if (caps_depth_)
        out->queue_depth = caps_depth_;
    if (!caps_zones_)
        out->features &= ~(NCL_HAL_FEAT_ZONES | NCL_HAL_FEAT_REDUCE_WRITE);
    return NCL_SUCCESS;
}

ncl_result Npu::begin(const ncl_hal_launch *l)
{
    bound_.base[NCL_BUF_SEND] = (unsigned char *)(uintptr_t)l->send;
    bound_.size[NCL_BUF_SEND] = l->send_bytes;
    bound_.base[NCL_BUF_RECV] = (unsigned char *)l->recv;
    bound_.size[NCL_BUF_RECV] = l->recv_bytes;
    bound_.base[NCL_BUF_SCRATCH] = ext_scratch_ ? ext_scratch_ : payload_ ? scratch_.data() : nullptr;
    bound_.size[NCL_BUF_SCRATCH] = scratch_bytes_;
    bound_.bound = true;
    launch_ = *l;
    launches_++;
    fault_.clear();
    for (Queue &q : queues_)
        q.landed_n = 0;
    if (mismatch_any()) { // refused: nothing of this call may touch the buffers
        bound_.bound = false;
        return NCL_ERR_REMOTE;
    }
    return NCL_SUCCESS;
}

// Whether `peer` began this call with other arguments (collective, count, dtype, op, root,
// placement, algorithm); if so fault() names the difference.
bool Npu::mismatch_with(int peer)
{
    const Npu *o = peer >= 0 && (size_t)peer < all_.size() ? all_[peer] : nullptr;
    if (!o || o == this || (peer == agreed_peer_ && launches_ == agreed_mine_ && o->launches_ == agreed_theirs_))
        return false;
    return mismatch_compare(peer, o);
}

// Out of line: the calls are compared only when the peer or either call is new since they agreed.
bool Npu::mismatch_compare(int peer, const Npu *o)
{
    char why[256];
    if (!ncl_launch_mismatch(&launch_, rank_, &o->launch_, peer, why, sizeof why)) {
        agreed_peer_ = peer, agreed_mine_ = launches_, agreed_theirs_ = o->launches_;
        return false;
    }
    fault_ = std::string("mismatch: ") + why;
    return true;
}

// At begin and at a successful end: every rank compares its call with rank 0's, and rank 0 with
// every rank's that began it (O(1) per rank, O(p) on rank 0): any disagreement differs from rank
// 0 somewhere. A rank that finishes before the odd one begins cannot know; that one fails.
bool Npu::mismatch_any()
{
    if (rank_ != 0)
        return mismatch_with(0);
    for (size_t r = 1; r < all_.size(); r++)
        if (mismatch_with((int)r))
            return true;
    return false;
}

ncl_result Npu::end(ncl_result result)
{
    bound_.bound = false;
    return result == NCL_SUCCESS && mismatch_any() ? NCL_ERR_REMOTE : NCL_SUCCESS;
}

ncl_result Npu::dma_submit(uint32_t queue, const ncl_task *task)
{
    if (queue >= NCL_MAX_QUEUES)
        return NCL_ERR_BACKEND;
    Queue &qs = queues_[queue];
    if (qs.count >= std::min(std::max(dev_.queue_depth, 1u), kDepth))
        return NCL_ERR_BACKEND; // the engine never submits past the depth it was told
    // the reduce unit refuses what it cannot do, as a DMA block flags a bad descriptor
    const bool pair = ncl_task_two_source(task->kind);
    if ((task->kind == NCL_TASK_WRITE_REDUCE || pair) &&
        (task->dtype >= NCL_DTYPE_COUNT || task->op >= NCL_OP_COUNT || (dev_.no_inline_ops[task->dtype] >> task->op & 1u) ||
         (dev_.inline_align > 1 && (task->src.off % dev_.inline_align || task->dst.off % dev_.inline_align ||
                                    task->bytes % dev_.inline_align || (pair && task->src2.off % dev_.inline_align)))))
        return NCL_ERR_UNSUPPORTED;
    Dma &d = qs.dma[(qs.head + qs.count++) % kDepth];
    d = Dma{};
    d.task = *task;
    d.nic = net_.has_nics() && ncl_task_is_remote(task->kind) && over_nic(task->peer);
    start_dma(queue);
    return NCL_SUCCESS;
}

bool Npu::over_nic(int peer)
{
    if (nic_to_.size() != all_.size())
        nic_to_.assign(all_.size(), 0);
    uint8_t &v = nic_to_[(size_t)peer];
    if (!v)
        v = net_.leaves_by_nic(device_->rank_, all_[(size_t)peer]->device_->rank_) ? 2 : 1;
    return v == 2;
}

// Issues the queue's tasks not issued yet, in order, one task_overhead after another. All but
// writes over the NIC need the queue to hold one of the device's DMA engines: without one the
// queue waits for it (FIFO among the device's queues), and its later tasks with it.
void Npu::start_dma(uint32_t queue)
{
    Queue &qs = queues_[queue];
    for (uint32_t k = 0; k < qs.count; k++) {
        uint32_t slot = (qs.head + k) % kDepth;
        if (qs.dma[slot].started)
            continue;
        if (!qs.dma[slot].nic && !qs.engine) {
            if (qs.waiting)
                return;
            if (device_->busy_engines_ >= dev_.dma_engines) {
                qs.waiting = true;
                device_->waiting_.emplace_back(this, queue);
                return;
            }
            device_->busy_engines_++;
            qs.engine = true;
        }
        qs.dma[slot].started = true;
        bool latency_path = (qs.dma[slot].task.flags & NCL_TASK_LATENCY_PATH) && dev_.latency_path_overhead >= 0;
        double o = latency_path ? dev_.latency_path_overhead : dev_.task_overhead;
        qs.issue_free_ps = std::max(qs.issue_free_ps, sched_.now()) + Scheduler::to_ps(o);
        sched_.at(qs.issue_free_ps, ev_issue, this, (uint64_t)queue * kDepth + slot);
    }
}

// The issue overhead has passed: the data moves now, a local task's once the tasks before it
// have finished.
void Npu::ev_issue(void *obj, uint64_t id)
{
    Npu *n = self(obj);
    Dma &d = n->dma_of(id);
    const Queue &qs = n->queues_[id / kDepth];
    if (!ncl_task_is_remote(d.task.kind)) {
        for (uint32_t slot = qs.head; slot != id % kDepth; slot = (slot + 1) % kDepth)
            if (!qs.dma[slot].done) {
                d.deferred = true;
                return;
            }
    }
    n->move(id);
}

// The data moves, a write once the queue's previous write has left: the engine feeds its
// descriptors to the wire in order, overlapping only their latencies.
void Npu::move(uint64_t id)
{
    if (ncl_task_is_remote(dma_of(id).task.kind)) {
        Queue &qs = queues_[id / kDepth];
        // (a write alone on its link has no sent event: ask whether it has left; never past
        // writes already waiting for it)
        if (qs.sending >= 0 && qs.send_waits == 0 && net_.left(qs.sending_msg))
            qs.sending = -1;
        if (qs.sending >= 0) {
            dma_of(id).send_wait = true;
            qs.send_waits++;
            net_.want_sent(qs.sending_msg);
            return;
        }
        qs.sending = (int)(id % kDepth);
    }
    launch(id);
}

// A write's last byte left: the queue's next waiting write goes on the wire.
void Npu::ev_sent(void *obj, uint64_t id)
{
    Npu *n = self(obj);
    Queue &qs = n->queues_[id / kDepth];
    qs.sending = -1;
    for (uint32_t k = 0; k < qs.count; k++) {
        uint32_t slot = (qs.head + k) % kDepth;
        if (qs.dma[slot].send_wait) {
            qs.dma[slot].send_wait = false;
            qs.send_waits--;
            qs.sending = (int)slot;
            n->sched_.at(n->sched_.now(), ev_launch, n, (id / kDepth) * kDepth + slot);
            return;
        }
    }
}

// The queue's write now on the wire is network message m; writes waiting behind it need its
// sent callback.
void Npu::sent_by(uint64_t id, uint32_t m)
{
    Queue &qs = queues_[id / kDepth];
    qs.sending_msg = m;
    if (qs.send_waits)
        net_.want_sent(m);
}

void Npu::ev_launch(void *obj, uint64_t id)
{
    self(obj)->launch(id);
}

void Npu::launch(uint64_t id)
{
    Dma &d = dma_of(id);
    const ncl_task &t = d.task;
    double bytes = (double)t.bytes;
    // a two-source write reduces at both ends at once, each stream at the reduce rate
    bool reduces = ncl_task_reduces(t.kind);
    // a widening reduce runs through the reduce unit at fp32 width: twice the narrow bytes
    if (t.kind == NCL_TASK_LOCAL_REDUCE_WIDE) {
        reduces = true;
        bytes *= 2;
    }
    d.issued_ps = sched_.now();
    d.min_ps = 0;
    // the latency path's flags ride in the data: the wire carries bytes / efficiency
    uint64_t wire = t.bytes;
    double eff = dev_.latency_path_efficiency;
    if ((t.flags & NCL_TASK_LATENCY_PATH) && eff > 0 && eff < 1)
        wire = (uint64_t)std::ceil((double)t.bytes / eff);
    if (reduces && dev_.reduce_bandwidth > 0) { // after the engine's earlier reduces
        Queue &qs = queues_[id / kDepth];
        qs.reduce_free_ps = std::max(qs.reduce_free_ps, d.issued_ps) + Scheduler::to_ps(bytes / dev_.reduce_bandwidth);
        d.min_ps = qs.reduce_free_ps - d.issued_ps;
    }
    switch ((ncl_task_kind)t.kind) {
    case NCL_TASK_WRITE:
    case NCL_TASK_WRITE_REDUCE:
        d.src_mem = memory_->start(t.bytes);
        d.dst_mem = all_[t.peer]->memory_->start(t.kind == NCL_TASK_WRITE ? t.bytes : 2 * t.bytes);
        sent_by(id, net_.transfer_sent(device_->rank_, all_[t.peer]->device_->rank_, wire, ev_written, this, id, ev_sent));
        return;
    case NCL_TASK_REDUCE_WRITE:
    case NCL_TASK_REDUCE_WRITE_REDUCE: // two sources read here
        d.src_mem = memory_->start(2 * t.bytes);
        d.dst_mem = all_[t.peer]->memory_->start(t.kind == NCL_TASK_REDUCE_WRITE ? t.bytes : 2 * t.bytes);
        sent_by(id, net_.transfer_sent(device_->rank_, all_[t.peer]->device_->rank_, wire, ev_written, this, id, ev_sent));
        return;
    case NCL_TASK_LOCAL_REDUCE: memory_->start(3 * t.bytes, ev_local_done, this, id); return;
    // wide accumulation (t.bytes = the narrow side, fp32 twice that): a convert reads one side
    // and writes the other like a copy; a widening reduce reads both and writes the fp32 side
    case NCL_TASK_LOCAL_WIDEN:
    case NCL_TASK_LOCAL_NARROW: memory_->start(3 * t.bytes, ev_local_done, this, id); return;
    case NCL_TASK_LOCAL_REDUCE_WIDE: memory_->start(5 * t.bytes, ev_local_done, this, id); return;
    default: /* LOCAL_COPY, LOCAL_DIV: read + write */ memory_->start(2 * t.bytes, ev_local_done, this, id); return;
    }
}

// The last byte of a write arrived: done once both memory streams are served too.
void Npu::ev_written(void *obj, uint64_t id)
{
    Npu *n = self(obj);
    Dma &d = n->dma_of(id);
    Memory &dst = *n->all_[d.task.peer]->memory_;
    d.damaged = n->net_.delivery_damaged();
    d.mem_pending = 2;
    if (n->memory_->done_or_wait(d.src_mem, ev_mem_done, n, id))
        d.mem_pending--;
    if (dst.done_or_wait(d.dst_mem, ev_mem_done, n, id))
        d.mem_pending--;
    if (d.mem_pending == 0)
        n->finish_dma(id);
}

void Npu::ev_mem_done(void *obj, uint64_t id)
{
    Npu *n = self(obj);
    if (--n->dma_of(id).mem_pending == 0)
        n->finish_dma(id);
}

void Npu::ev_local_done(void *obj, uint64_t id)
{
    self(obj)->finish_dma(id);
}

// The last byte arrived; an inline reduce may still need min_ps from its start to finish.
void Npu::finish_dma(uint64_t id)
{
    Dma &d = dma_of(id);
    uint64_t now = sched_.now();
    if (d.issued_ps + d.min_ps > now) {
        sched_.at(d.issued_ps + d.min_ps, ev_finish, this, id);
        return;
    }
    d.done = apply(d.task, d.damaged) ? 1 : 2;
    device_->tasks_done_++;
    if (ncl_task_is_remote(d.task.kind))
        device_->bytes_out_ += d.task.bytes;
    // the engine is free once every task of its queue has finished; a deferred local task moves
    // once the tasks before it have
    Queue &qs = queues_[id / kDepth];
    bool busy = false;
    for (uint32_t k = 0; k < qs.count; k++) {
        Dma &e = qs.dma[(qs.head + k) % kDepth];
        if (e.deferred && !busy) {
            e.deferred = false;
            move((id / kDepth) * kDepth + (qs.head + k) % kDepth);
        }
        busy |= e.done == 0 && !e.nic;
    }
    if (!busy && qs.engine) {
        qs.engine = false;
        Npu *d = device_;
        d->busy_engines_--;
        if (!d->waiting_.empty()) {
            std::pair<Npu *, uint32_t> next = d->waiting_.front();
            d->waiting_.pop_front();
            next.first->queues_[next.second].waiting = false;
            next.first->queues_[next.second].engine = true;
            d->busy_engines_++;
            next.first->start_dma(next.second);
        }
    }
    wake();
}

NpuStats Npu::stats()
{
    return NpuStats{tasks_done_, bytes_out_, mem_.bytes(), mem_.busy_s()};
}

void Npu::ev_finish(void *obj, uint64_t id)
{
    Npu *n = self(obj);
    n->dma_of(id).min_ps = 0;
    n->finish_dma(id);
}

unsigned char *Npu::resolve(const ncl_ref &ref, uint64_t bytes, bool write, const char *what)
{
    if (!addressable(ref.buf) || ref.buf >= NCL_BUF_COUNT || ref.off > bound_.size[ref.buf] ||
        bytes > bound_.size[ref.buf] - ref.off || (write && ref.buf == NCL_BUF_SEND))
        return unresolved(ref, bytes, what);
    return bound_.base[ref.buf] ? bound_.base[ref.buf] + ref.off : nullptr;
}

// Out of line: the fault's text is built only when a region is out of range.
unsigned char *Npu::unresolved(const ncl_ref &ref, uint64_t bytes, const char *what)
{
    {
        if (fault_.empty())
            fault_ = std::string(what) + " " +
                     ncl_buf_name(ref.buf) + "[" +
                     std::to_string(ref.off) + "..+" + std::to_string(bytes) + ") on rank " +
                     std::to_string(rank_) +
                     (bound_.bound ? ": outside the bound buffer" : ": no collective running there");
        return nullptr;
    }
}

// Moves the bytes (real payload only). false: a region was out of range or unbound. damaged: the
// write crossed a link that corrupts without a CRC, so what lands is not what was sent: its first
// byte at the destination (after an inline reduce: of the result) is flipped, XOR 0x5A, never a
// no-op, the same every run.
bool Npu::apply(const ncl_task &t, bool damaged)
{
    const bool remote = ncl_task_is_remote(t.kind), pair = ncl_task_two_source(t.kind);
    Npu *dst_dev = remote ? all_[t.peer] : this;
    unsigned char *src = resolve(t.src, ncl_task_src_bytes(&t), false, "source");
    unsigned char *src2 = pair ? resolve(t.src2, t.bytes, false, "second source") : nullptr;
    unsigned char *dst = dst_dev->resolve(t.dst, ncl_task_dst_bytes(&t), true, "destination");
    if ((!src && bound_.base[t.src.buf]) || (pair && !src2 && bound_.base[t.src2.buf]) ||
        (!dst && dst_dev->bound_.base[t.dst.buf]) ||
        !fault_.empty() || !dst_dev->fault_.empty()) {
        if (fault_.empty())
            fault_ = dst_dev->fault_;
        return false;
    }
    if (!payload_ || !src || !dst || (pair && !src2))
        return true;
    char why[128];
    // the CPU runners every backend shares
    if (!(pair ? ncl_bk_run_pair(&t, dst, src, src2, why, sizeof why) : ncl_bk_run(&t, dst, src, why, sizeof why))) {
        fault_ = std::string(ncl_task_kind_name(t.kind)) + " on rank " + std::to_string(rank_) + ": " + why;
        return false;
    }
    if (damaged && t.bytes > 0)
        dst[0] ^= 0x5A;
    return true;
}

ncl_result Npu::dma_poll(uint32_t queue, int *done)
{
    *done = 0;
    if (queue >= NCL_MAX_QUEUES)
        return NCL_ERR_BACKEND;
    Queue &qs = queues_[queue];
    while (qs.count && qs.dma[qs.head].done) { // report completions in submission order
        bool failed = qs.dma[qs.head].done == 2;
        if (*done == 0)
            qs.landed_n = 0; // the records of the writes reported before have been sent
        if (ncl_task_is_remote(qs.dma[qs.head].task.kind))
            qs.landed[qs.landed_n++] = qs.dma[qs.head].task.peer;
        qs.head = (qs.head + 1) % kDepth;
        qs.count--;
        if (failed)
            return NCL_ERR_BACKEND;
        ++*done;
    }
    return NCL_SUCCESS;
}

Npu::Counter *Npu::counter(uint64_t key, bool create)
{
    size_t mask = counters_.size() - 1;
    size_t i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 40) & mask;
    for (; counters_[i].used; i = (i + 1) & mask)
        if (counters_[i].key == key)
            return &counters_[i];
    if (!create)
        return nullptr;
    if ((counters_used_ + 1) * 2 > counters_.size()) { // grow at half full, then insert
        std::vector<Counter> old(counters_.size() * 2, Counter{0, 0, false});
        old.swap(counters_);
        counters_used_ = 0;
        for (const Counter &c : old)
            if (c.used)
                *counter(c.key, true) = c;
        return counter(key, true);
    }
    counters_used_++;
    counters_[i] = Counter{key, 0, true};
    return &counters_[i];
}

void Npu::add_record(int from, uint32_t id)
{
    counter(((uint64_t)(uint32_t)from << 32) | id, true)->count++;
    wake();
}

void Npu::ev_record(void *obj, uint64_t from_and_id)
{
    self(obj)->add_record((int)(from_and_id >> 32), (uint32_t)from_and_id);
}

ncl_result Npu::notify_record(uint32_t queue, int peer, uint32_t id)
{
    if (peer < 0 || peer >= (int)all_.size() || id >= NCL_NOTIFY_IDS || queue >= NCL_MAX_QUEUES)
        return NCL_ERR_BACKEND;
    Npu *dst = all_[peer];
    uint64_t arg = ((uint64_t)(uint32_t)rank_ << 32) | id;
    Queue &qs = queues_[queue];
    uint32_t k = 0;
    while (k < qs.landed_n && qs.landed[k] != peer)
        k++;
    if (peer == rank_ || k < qs.landed_n) {
        // Local, or chained behind a write that has landed there: no extra latency. The
        // counter changes now; whoever waits on it runs from its own progress event.
        if (k < qs.landed_n)
            qs.landed[k] = qs.landed[--qs.landed_n];
        dst->add_record(rank_, id);
        return NCL_SUCCESS;
    }
    net_.transfer(device_->rank_, dst->device_->rank_, 0, ev_record, dst, arg);
    return NCL_SUCCESS;
}

ncl_result Npu::notify_peek(int peer, uint32_t id, uint32_t *value)
{
    const Counter *c = counter(((uint64_t)(uint32_t)peer << 32) | id, false);
    *value = c ? c->count : 0;
    return NCL_SUCCESS;
}

ncl_result Npu::notify_try_wait(int peer, uint32_t id, uint32_t count, int *done)
{
    Counter *c = counter(((uint64_t)(uint32_t)peer << 32) | id, false);
    *done = c != nullptr && c->count >= count;
    if (*done)
        c->count -= count;
    if (mismatch_with(peer)) // done or not: no rank succeeds on a mismatched call
        return NCL_ERR_REMOTE;
    if (!*done && all_[peer]->released_) {
        fault_ = "rank " + std::to_string(peer) + " left the communicator (destroyed it) before recording notify " +
                 std::to_string(id);
        return NCL_ERR_REMOTE;
    }
    return NCL_SUCCESS;
}

// Co-simulation: an RTL peer's write or record, applied as a peer Npu's apply()/add_record would.
bool Npu::deliver_external(int from, uint32_t kind, const ncl_ref &dst, const void *data, uint64_t bytes,
                           uint32_t dtype, uint32_t op, uint32_t id)
{
    if (kind == NCL_TASK_NOTIFY_RECORD) {
        add_record(from, id);
        return true;
    }
    if (!addressable(dst.buf) || dst.buf >= NCL_BUF_COUNT || dst.buf == NCL_BUF_SEND || dst.off > bound_.size[dst.buf] ||
        bytes > bound_.size[dst.buf] - dst.off) {
        resolve(dst, bytes, true, "destination"); // names the fault
        return false;
    }
    unsigned char *p = bound_.base[dst.buf] ? bound_.base[dst.buf] + dst.off : nullptr;
    if (!payload_ || !p || !data)
        return true;
    ncl_task t{};
    t.kind = (uint8_t)(kind == NCL_TASK_WRITE_REDUCE ? NCL_TASK_WRITE_REDUCE : NCL_TASK_WRITE);
    t.dtype = (uint8_t)dtype;
    t.op = (uint8_t)op;
    t.bytes = bytes;
    char why[128];
    if (!ncl_bk_run(&t, p, data, why, sizeof why)) {
        fault_ = std::string("external ") + ncl_task_kind_name(t.kind) + " on rank " + std::to_string(rank_) + ": " +
                 why;
        return false;
    }
    return true;
}

} // namespace model
