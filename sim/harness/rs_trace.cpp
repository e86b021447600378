// rs_trace.cpp — the tracing HAL: forwards each op to the device (an NPU or an RTL rank's mmio
// HAL) and streams Chrome trace events (ts/dur in simulated µs) to the --trace file as they happen.
#include "rs_trace.hpp"
#include "rs_halfwd.hpp"

#include <cerrno>
#include <cstdarg>
#include <cstring>

#include <ncl/ncl.h>

namespace rs {

struct Tracer::Rank {
    Tracer *t;
    ncl_hal in;      // the device's HAL every op is forwarded to
    ncl_hal_ops ops; // the trampolines, NULL where the device's op is NULL
    int rank;
    // A sub-communicator's context (HAL split) draws on tracks of its own in its device's process:
    // tids from tid_base, named after the communicator; the device's context counts them.
    unsigned tid_base = 0;
    char label[48] = "";
    unsigned contexts = 0;
    uint64_t named = 0; // bit tid (from tid_base): thread_name emitted
    uint8_t coll = 0;
    uint64_t seq = 0, begin_ps = 0, bytes = 0;
    bool in_coll = false;
    // A queue's data tasks in flight, oldest first; each drawn on a lane of its own (lane 0: the
    // queue's track, lane k: "queue q +k"), so that overlapping tasks never share a track.
    struct Flight {
        ncl_task task{};
        uint64_t submit_ps = 0;
        unsigned lane = 0;
    };
    struct Q {
        Flight f[NCL_MAX_IN_FLIGHT];
        unsigned head = 0, count = 0;
    } q[NCL_MAX_QUEUES];
};

namespace {
// The track of lane `lane` of queue q: lane 0 is tid q + 1, the others follow every queue's.
unsigned lane_tid(uint32_t q, unsigned lane)
{
    return lane == 0 ? q + 1 : 1 + NCL_MAX_QUEUES + q * (NCL_MAX_IN_FLIGHT - 1) + (lane - 1);
}
} // namespace

namespace {

const char *kind_name(unsigned k)
{
    return k < NCL_TASK_KIND_COUNT ? ncl_task_kind_name(k) : "TASK";
}

// ps -> µs with ps resolution, as the trace format wants microseconds.
struct Us {
    char s[32];
    explicit Us(uint64_t ps) { std::snprintf(s, sizeof s, "%llu.%06llu", (unsigned long long)(ps / 1000000),
                                             (unsigned long long)(ps % 1000000)); }
};

} // namespace

// The trampolines: ctx is the Rank; each forwards to the device's own op.
struct TraceOps {
    static Tracer::Rank &R(void *ctx) { return *static_cast<Tracer::Rank *>(ctx); }

    static ncl_result caps(void *ctx, ncl_hal_caps *out) { return R(ctx).in.ops->caps(R(ctx).in.ctx, out); }
    static ncl_result begin(void *ctx, const ncl_hal_launch *l)
    {
        Tracer::Rank &r = R(ctx);
        r.coll = l->coll;
        r.seq = l->seq;
        r.bytes = l->recv_bytes > l->send_bytes ? l->recv_bytes : l->send_bytes;
        r.begin_ps = r.t->sched_.now();
        r.in_coll = true;
        return r.in.ops->begin(r.in.ctx, l);
    }
    static ncl_result end(void *ctx, ncl_result result)
    {
        Tracer::Rank &r = R(ctx);
        if (r.in_coll && r.t->room()) {
            r.t->thread_name(r, 0);
            uint64_t now = r.t->sched_.now();
            r.t->emit("{\"ph\":\"X\",\"pid\":%d,\"tid\":%u,\"ts\":%s,\"dur\":%s,\"name\":\"%s\","
                      "\"args\":{\"seq\":%llu,\"bytes\":%llu,\"result\":\"%s\"}}",
                      r.rank, r.tid_base, Us(r.begin_ps).s, Us(now - r.begin_ps).s, ncl_coll_name((ncl_coll)r.coll),
                      (unsigned long long)r.seq, (unsigned long long)r.bytes, ncl_strerror(result));
        }
        r.in_coll = false;
        return r.in.ops->end(r.in.ctx, result);
    }
    static ncl_result dma_submit(void *ctx, uint32_t queue, const ncl_task *task)
    {
        Tracer::Rank &r = R(ctx);
        ncl_result rc = r.in.ops->dma_submit(r.in.ctx, queue, task);
        Tracer::Rank::Q &q = r.q[queue < NCL_MAX_QUEUES ? queue : 0];
        if (rc == NCL_SUCCESS && queue < NCL_MAX_QUEUES && q.count < NCL_MAX_IN_FLIGHT) {
            unsigned used = 0;
            for (unsigned k = 0; k < q.count; k++)
                used |= 1u << q.f[(q.head + k) % NCL_MAX_IN_FLIGHT].lane;
            Tracer::Rank::Flight &f = q.f[(q.head + q.count++) % NCL_MAX_IN_FLIGHT];
            f.task = *task;
            f.submit_ps = r.t->sched_.now();
            for (f.lane = 0; used >> f.lane & 1u; f.lane++) {
            }
        }
        return rc;
    }
    static ncl_result dma_poll(void *ctx, uint32_t queue, int *done)
    {
        Tracer::Rank &r = R(ctx);
        ncl_result rc = r.in.ops->dma_poll(r.in.ctx, queue, done);
        for (int n = 0; rc == NCL_SUCCESS && queue < NCL_MAX_QUEUES && n < *done && r.q[queue].count; n++) {
            Tracer::Rank::Q &q = r.q[queue];
            const Tracer::Rank::Flight f = q.f[q.head];
            q.head = (q.head + 1) % NCL_MAX_IN_FLIGHT;
            q.count--;
            if (r.t->room()) {
                const unsigned tid = lane_tid(queue, f.lane);
                r.t->thread_name(r, tid);
                const ncl_task &t = f.task;
                r.t->emit("{\"ph\":\"X\",\"pid\":%d,\"tid\":%u,\"ts\":%s,\"dur\":%s,\"name\":\"%s\","
                          "\"args\":{\"peer\":%d,\"bytes\":%llu,\"collective\":\"%s\",\"seq\":%llu,"
                          "\"step\":%u}}",
                          r.rank, r.tid_base + tid, Us(f.submit_ps).s, Us(r.t->sched_.now() - f.submit_ps).s,
                          kind_name(t.kind), (int)t.peer, (unsigned long long)t.bytes,
                          ncl_coll_name((ncl_coll)r.coll), (unsigned long long)r.seq, (unsigned)t.step);
            }
        }
        return rc;
    }
    static ncl_result notify_record(void *ctx, uint32_t queue, int peer, uint32_t id)
    {
        Tracer::Rank &r = R(ctx);
        if (r.t->room()) {
            r.t->thread_name(r, queue + 1);
            r.t->emit("{\"ph\":\"i\",\"s\":\"t\",\"pid\":%d,\"tid\":%u,\"ts\":%s,\"name\":\"NOTIFY_RECORD\","
                      "\"args\":{\"peer\":%d,\"id\":%u,\"collective\":\"%s\",\"seq\":%llu}}",
                      r.rank, r.tid_base + queue + 1, Us(r.t->sched_.now()).s, peer, id, ncl_coll_name((ncl_coll)r.coll),
                      (unsigned long long)r.seq);
        }
        return r.in.ops->notify_record(r.in.ctx, queue, peer, id);
    }
    static ncl_result notify_try_wait(void *ctx, int peer, uint32_t id, uint32_t count, int *done)
    {
        return R(ctx).in.ops->notify_try_wait(R(ctx).in.ctx, peer, id, count, done);
    }
    static ncl_result wait_event(void *ctx, uint64_t timeout_ns) { return R(ctx).in.ops->wait_event(R(ctx).in.ctx, timeout_ns); }
    static uint64_t now_ns(void *ctx) { return R(ctx).in.ops->now_ns(R(ctx).in.ctx); }
    static ncl_result notify_peek(void *ctx, int peer, uint32_t id, uint32_t *v)
    {
        return R(ctx).in.ops->notify_peek(R(ctx).in.ctx, peer, id, v);
    }
    static void log(void *ctx, int level, const char *msg) { R(ctx).in.ops->log(R(ctx).in.ctx, level, msg); }
    static ncl_result split(void *ctx, uint32_t id, const int32_t *m, int n, int rank, ncl_hal *child)
    {
        Tracer::Rank &r = R(ctx);
        ncl_hal inner;
        ncl_result rc = r.in.ops->split(r.in.ctx, id, m, n, rank, &inner);
        if (rc == NCL_SUCCESS)
            *child = r.t->wrap_context(r, inner, id, rank);
        return rc;
    }
    static void release(void *ctx) { R(ctx).in.ops->release(R(ctx).in.ctx); }
};

Tracer::Tracer(FILE *f, std::string path, uint64_t max_events, model::Scheduler &sched, FILE *err)
    : f_(f), path_(std::move(path)), max_(max_events ? max_events : 4000000), sched_(sched), err_(err)
{
    std::fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", f_);
}

Tracer::~Tracer()
{
    if (!finished_)
        finish();
}

ncl_hal Tracer::wrap(int rank, model::Npu *npu) { return wrap_hal(rank, npu->hal(), "npu"); }

ncl_hal Tracer::wrap_hal(int rank, const ncl_hal &inner, const char *process)
{
    std::unique_ptr<Rank> r(new Rank{});
    r->t = this;
    r->in = inner;
    r->rank = rank;
    r->ops = rs_forward_ops<TraceOps>(*inner.ops);
    emit("{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\",\"args\":{\"name\":\"%s%d\"}}", rank, process, rank);
    emit("{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":%d}}", rank, rank);
    ranks_.push_back(std::move(r));
    return ncl_hal{&ranks_.back()->ops, ranks_.back().get()};
}

ncl_hal Tracer::wrap_context(Rank &device, const ncl_hal &inner, uint32_t id, int rank)
{
    std::unique_ptr<Rank> r(new Rank{});
    r->t = this;
    r->in = inner;
    r->rank = device.rank;
    r->tid_base = kContextTids * ++device.contexts;
    std::snprintf(r->label, sizeof r->label, "comm %08x rank %d: ", (unsigned)id, rank);
    r->ops = rs_forward_ops<TraceOps>(*inner.ops);
    contexts_.push_back(std::move(r));
    return ncl_hal{&contexts_.back()->ops, contexts_.back().get()};
}

// The Rank of rank `rank`: ranks_ holds them in the order the Cluster wrapped them, which is
// rank order unless some ranks were not wrapped.
Tracer::Rank *Tracer::rank_of(int rank)
{
    if (rank >= 0 && (size_t)rank < ranks_.size() && ranks_[(size_t)rank]->rank == rank)
        return ranks_[(size_t)rank].get();
    for (auto &r : ranks_)
        if (r->rank == rank)
            return r.get();
    return nullptr;
}

void Tracer::observe(model::RtlDomain &rtl)
{
    rtl.set_hal_wrap([this](int rank, const ncl_hal &inner) { return wrap_hal(rank, inner, "rtl"); });
    rtl.set_observer(on_rtl, this);
}

// The block's own tracks, under the queues and the compute lane (tids 24..27).
void Tracer::on_rtl(void *self, const model::RtlDomain::Event &e)
{
    using E = model::RtlDomain::Event;
    Tracer &t = *static_cast<Tracer *>(self);
    static const char *const lanes[] = {"rtl link tx", "rtl link rx", "rtl irq", "rtl engine"};
    static const char *const link_kinds[] = {"none", "write", "write_reduce", "notify"};
    static const char *const statuses[] = {"ok", "range", "bad", "?"};
    Rank *r = t.rank_of(e.rank);
    if (!r || !t.room())
        return;
    const unsigned tid = 24 + (unsigned)e.kind;
    if (!(r->named >> tid & 1u)) {
        r->named |= 1u << tid;
        t.emit("{\"ph\":\"M\",\"pid\":%d,\"tid\":%u,\"name\":\"thread_name\",\"args\":{\"name\":\"%s\"}}",
               e.rank, tid, lanes[e.kind]);
    }
    switch (e.kind) {
    case E::TX:
    case E::RX:
        t.emit("{\"ph\":\"X\",\"pid\":%d,\"tid\":%u,\"ts\":%s,\"dur\":%s,\"name\":\"%s\","
               "\"args\":{\"%s\":%d,\"bytes\":%llu,\"ack\":\"%s\"}}",
               e.rank, tid, Us(e.start_ps).s, Us(e.end_ps - e.start_ps).s, link_kinds[e.link_kind & 3],
               e.kind == E::TX ? "dst" : "src", e.peer, (unsigned long long)e.bytes, statuses[e.status & 3]);
        break;
    case E::IRQ:
        t.emit("{\"ph\":\"i\",\"s\":\"t\",\"pid\":%d,\"tid\":%u,\"ts\":%s,\"name\":\"IRQ\"}", e.rank, tid,
               Us(e.start_ps).s);
        break;
    case E::BUSY:
        t.emit("{\"ph\":\"X\",\"pid\":%d,\"tid\":%u,\"ts\":%s,\"dur\":%s,\"name\":\"busy\"}", e.rank, tid,
               Us(e.start_ps).s, Us(e.end_ps - e.start_ps).s);
        break;
    }
}

void Tracer::span(int rank, const char *name, uint64_t start_ps, uint64_t end_ps, const char *lane)
{
    // one thread below the queues' (tid 1..NCL_MAX_QUEUES), so compute sorts under the collectives
    const unsigned tid = 20;
    Rank *rp = rank_of(rank);
    if (!rp || !room())
        return;
    Rank &r = *rp;
    if (!(r.named >> tid & 1u)) {
        r.named |= 1u << tid;
        emit("{\"ph\":\"M\",\"pid\":%d,\"tid\":%u,\"name\":\"thread_name\",\"args\":{\"name\":\"%s\"}}", rank, tid,
             lane);
    }
    std::string safe(name); // names come from files: nothing in them may end the JSON string
    for (char &ch : safe)
        if (ch == '"' || ch == '\\' || (unsigned char)ch < 0x20)
            ch = '?';
    emit("{\"ph\":\"X\",\"pid\":%d,\"tid\":%u,\"ts\":%s,\"dur\":%s,\"name\":\"%s\"}", rank, tid, Us(start_ps).s,
         Us(end_ps - start_ps).s, safe.c_str());
}

void Tracer::observe(model::Network &net)
{
    net_ = &net;
    int pid = net.nranks();
    emit("{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\",\"args\":{\"name\":\"links\"}}", pid);
    emit("{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":%d}}", pid, pid);
    net.set_observer(on_transfer, this);
}

void Tracer::on_transfer(void *self, int src, int dst, uint64_t bytes, uint64_t start_ps, uint64_t end_ps,
                         int channel)
{
    Tracer &t = *static_cast<Tracer *>(self);
    if (channel < 0 || !t.room())
        return;
    int pid = t.net_->nranks();
    if ((size_t)channel >= t.channel_named_.size())
        t.channel_named_.resize((size_t)channel + 1, false);
    if (!t.channel_named_[channel]) {
        t.channel_named_[channel] = true;
        t.emit("{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"thread_name\",\"args\":{\"name\":\"%s\"}}",
               pid, channel, t.net_->channel_name(channel).c_str());
    }
    t.emit("{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%s,\"dur\":%s,\"name\":\"%s\","
           "\"args\":{\"src\":%d,\"dst\":%d,\"bytes\":%llu}}",
           pid, channel, Us(start_ps).s, Us(end_ps - start_ps).s, bytes ? "transfer" : "notify", src, dst,
           (unsigned long long)bytes);
}

void Tracer::thread_name(Rank &r, unsigned tid)
{
    if (tid >= 64 || (r.named >> tid & 1u))
        return;
    r.named |= 1ull << tid;
    if (tid == 0)
        emit("{\"ph\":\"M\",\"pid\":%d,\"tid\":%u,\"name\":\"thread_name\",\"args\":{\"name\":\"%scollectives\"}}",
             r.rank, r.tid_base, r.label);
    else if (tid <= NCL_MAX_QUEUES)
        emit("{\"ph\":\"M\",\"pid\":%d,\"tid\":%u,\"name\":\"thread_name\",\"args\":{\"name\":\"%squeue %u\"}}",
             r.rank, r.tid_base + tid, r.label, tid - 1);
    else // a lane for the queue's overlapping tasks (lane_tid)
        emit("{\"ph\":\"M\",\"pid\":%d,\"tid\":%u,\"name\":\"thread_name\",\"args\":{\"name\":\"%squeue %u +%u\"}}",
             r.rank, r.tid_base + tid, r.label, (tid - 1 - NCL_MAX_QUEUES) / (NCL_MAX_IN_FLIGHT - 1),
             (tid - 1 - NCL_MAX_QUEUES) % (NCL_MAX_IN_FLIGHT - 1) + 1);
}

bool Tracer::room()
{
    if (events_ < max_) {
        events_++;
        return true;
    }
    if (!truncated_) {
        truncated_ = true;
        std::fprintf(err_, "ringsim: --trace: '%s' stops after %llu events (the rest of the run is not traced)\n",
                     path_.c_str(), (unsigned long long)max_);
        emit("{\"ph\":\"i\",\"s\":\"g\",\"pid\":0,\"tid\":0,\"ts\":%s,\"name\":\"ringsim: trace truncated after "
             "%llu events\"}", Us(sched_.now()).s, (unsigned long long)max_);
    }
    return false;
}

void Tracer::emit(const char *fmt, ...)
{
    if (!first_)
        std::fputs(",\n", f_);
    first_ = false;
    va_list ap;
    va_start(ap, fmt);
    std::vfprintf(f_, fmt, ap);
    va_end(ap);
}

int Tracer::finish()
{
    finished_ = true;
    std::fputs("\n],\"otherData\":{\"program\":\"ringsim\",\"time_unit\":\"simulated us\",", f_);
    if (truncated_)
        std::fprintf(f_, "\"warning\":\"trace truncated after %llu events\",", (unsigned long long)max_);
    std::fprintf(f_, "\"events\":%llu}}\n", (unsigned long long)events_);
    errno = 0;
    int bad = std::fflush(f_) != 0 || std::ferror(f_);
    int saved = errno;
    if (std::fclose(f_) != 0 && !bad)
        bad = 1, saved = errno;
    if (bad) {
        std::fprintf(err_, "ringsim: --trace: cannot write '%s': %s\n", path_.c_str(),
                     saved ? std::strerror(saved) : "write error");
        return -1;
    }
    return 0;
}

} // namespace rs
