// rs_program.cpp — rank programs driven by the simulator's events: a rank advances when its
// compute ends or its NPU makes progress, testing every call it has in flight (the engine issues
// tasks only inside ncl_test), so thousands of ranks need no thread each.
#include "rs_program.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include <ncl/ncl_diag.h>
#include <ncl/ncl_dtype.h>

namespace rs {

namespace {

// Placeholder buffers (timing only: the devices move no bytes), far from any real mapping.
const uintptr_t k_fake = uintptr_t(3) << 44;

// What a payload call's buffers hold: small integers every member can compute, exact in every
// dtype. Moved data: member m's element i of call `key`; reduced data: so small that any sum of
// a group's inputs stays exact (bfloat16: up to 128 members).
int64_t moved(int64_t m, uint64_t key, uint64_t i) { return (m * 31 + (int64_t)(key * 7 + i)) % 97; }
int64_t reduced(int64_t m, uint64_t key, uint64_t i) { return (m + (int64_t)((key + i) % 3)) % 3; }

void put(ncl_dtype dt, unsigned char *p, uint64_t i, int64_t v)
{
    switch (dt) {
    case NCL_INT8: case NCL_UINT8: p[i] = (unsigned char)(uint8_t)v; break;
    case NCL_INT32: case NCL_UINT32: { uint32_t x = (uint32_t)v; std::memcpy(p + 4 * i, &x, 4); break; }
    case NCL_INT64: { std::memcpy(p + 8 * i, &v, 8); break; }
    case NCL_FLOAT16: { uint16_t h = ncl_float_to_fp16((float)v); std::memcpy(p + 2 * i, &h, 2); break; }
    case NCL_BFLOAT16: { uint16_t h = ncl_float_to_bf16((float)v); std::memcpy(p + 2 * i, &h, 2); break; }
    case NCL_FLOAT32: { float f = (float)v; std::memcpy(p + 4 * i, &f, 4); break; }
    default: { double d = (double)v; std::memcpy(p + 8 * i, &d, 8); break; }
    }
}

bool reduces(uint8_t call) { return call == NCL_COLL_ALLREDUCE || call == NCL_COLL_REDUCE || call == NCL_COLL_REDUCE_SCATTER; }

} // namespace

Programs::Programs(model::Cluster &cl, Tracer *tracer, ncl_dtype dtype, bool payload)
    : cl_(cl), tracer_(tracer), dtype_(dtype), payload_(payload), ranks_((size_t)cl.nranks()),
      pending_((size_t)cl.nranks(), 0)
{
    for (int r = 0; r < cl.nranks(); r++) {
        ranks_[(size_t)r].comms.push_back(cl.comm(r));
        if (payload)
            ranks_[(size_t)r].sent.assign((size_t)cl.nranks(), 0), ranks_[(size_t)r].received = ranks_[(size_t)r].sent;
    }
}

bool Programs::fill(int rank, Slot &sl, const ProgStep &s, ncl_comm *c)
{
    Rank &k = ranks_[(size_t)rank];
    int n = 1, cr = 0;
    ncl_comm_size(c, &n);
    ncl_comm_rank(c, &cr);
    const uint64_t es = ncl_dtype_size(dtype_);
    uint64_t elems = s.count, key = 0;
    switch (s.call) {
    case NCL_COLL_REDUCE_SCATTER: case NCL_COLL_ALLGATHER: case NCL_COLL_ALLTOALL: elems = (uint64_t)n * s.count; break;
    case ProgStep::Send: key = k.sent[(size_t)s.peer]++; break;
    case ProgStep::Recv: key = k.received[(size_t)s.peer]++; break;
    case ProgStep::AllToAllV: fail(rank, "alltoallv with payload (not taken)", nullptr, NCL_SUCCESS); return false;
    default: break;
    }
    if (s.call != ProgStep::Send && s.call != ProgStep::Recv) { // its number on the communicator
        ncl_rank_state st;
        ncl_comm_state(c, &st);
        key = st.seq;
    }
    sl.buf.assign(elems * es, 0xA5); // what no call leaves: poison where this rank gives no input
    sl.call = s, sl.key = key, sl.n = n, sl.cr = cr;
    unsigned char *b = sl.buf.data();
    const uint64_t cnt = s.count;
    switch (s.call) {
    case NCL_COLL_ALLREDUCE: case NCL_COLL_REDUCE: case NCL_COLL_REDUCE_SCATTER:
        for (uint64_t i = 0; i < elems; i++)
            put(dtype_, b, i, reduced(cr, key, i));
        break;
    case NCL_COLL_BROADCAST:
        for (uint64_t i = 0; i < elems && cr == s.peer; i++)
            put(dtype_, b, i, moved(cr, key, i));
        break;
    case NCL_COLL_ALLGATHER:
        for (uint64_t j = 0; j < cnt; j++)
            put(dtype_, b, (uint64_t)cr * cnt + j, moved(cr, key, j));
        break;
    case NCL_COLL_ALLTOALL:
        for (uint64_t i = 0; i < elems; i++)
            put(dtype_, b, i, moved(cr, key, i));
        break;
    case ProgStep::Send:
        for (uint64_t i = 0; i < elems; i++)
            put(dtype_, b, i, moved(cr, key, i));
        break;
    default: break; // a receive: poison until the data lands
    }
    return true;
}

void Programs::check(Slot &sl)
{
    const ProgStep &s = sl.call;
    const int n = sl.n, cr = sl.cr;
    const uint64_t es = ncl_dtype_size(dtype_), cnt = s.count, key = sl.key;
    if (s.call == ProgStep::Send || (s.call == NCL_COLL_REDUCE && cr != s.peer) ||
        (reduces(s.call) && dtype_ == NCL_BFLOAT16 && n > 128)) { // nothing to check, or not exactly
        sl.buf.clear();
        return;
    }
    uint64_t first = 0, elems = sl.buf.size() / es;
    if (s.call == NCL_COLL_REDUCE_SCATTER)
        first = (uint64_t)cr * cnt, elems = cnt; // this rank's block of the sum
    unsigned char want[8];
    for (uint64_t i = first; i < first + elems; i++) {
        int64_t v = 0;
        switch (s.call) {
        case NCL_COLL_ALLREDUCE: case NCL_COLL_REDUCE: case NCL_COLL_REDUCE_SCATTER:
            for (int m = 0; m < n; m++)
                v += reduced(m, key, i);
            break;
        case NCL_COLL_BROADCAST: v = moved(s.peer, key, i); break;
        case NCL_COLL_ALLGATHER: v = moved((int64_t)(i / cnt), key, i % cnt); break;
        case NCL_COLL_ALLTOALL: v = moved((int64_t)(i / cnt), key, (uint64_t)cr * cnt + i % cnt); break;
        default: v = moved(s.peer, key, i); break; // a receive: the sender's data
        }
        put(dtype_, want, 0, v);
        wrong_ += std::memcmp(want, sl.buf.data() + i * es, es) != 0;
    }
    checked_ += elems;
    sl.buf.clear();
}

Programs::~Programs() { cl_.set_waker(nullptr); }

uint16_t Programs::add_comm(int rank, ncl_comm *comm)
{
    std::vector<ncl_comm *> &c = ranks_[(size_t)rank].comms;
    c.push_back(comm);
    return (uint16_t)(c.size() - 1);
}

void Programs::fail(int rank, const char *what, ncl_comm *comm, ncl_result rc)
{
    if (!error_.empty())
        return;
    const Rank &k = ranks_[(size_t)rank];
    char buf[768];
    std::snprintf(buf, sizeof buf, "rank %d, step %zu of %zu: %s%s%s%s%s", rank, k.pc, k.steps.size(), what,
                  rc != NCL_SUCCESS ? ": " : "", rc != NCL_SUCCESS ? ncl_strerror(rc) : "",
                  comm ? ": " : "", comm ? ncl_comm_last_error(comm) : "");
    error_ = buf;
}

bool Programs::issue(int rank, const ProgStep &s)
{
    Rank &k = ranks_[(size_t)rank];
    if (s.slot >= kProgSlots || (k.slots[s.slot].busy && !s.queued) || s.comm >= k.comms.size()) {
        fail(rank, "a call started in a slot in use or out of range, or on a communicator not added", nullptr,
             NCL_SUCCESS);
        return false;
    }
    Slot &sl = k.slots[s.slot];
    if (sl.busy && !sl.done) { // queued behind the running call: poll starts it when that one is done
        sl.queue.push_back(s);
        return true;
    }
    if (s.call == ProgStep::Timer) { // the second lane: after its previous op, beside the program
        model::Scheduler &sched = cl_.network().scheduler();
        const uint64_t begin = std::max(sched.now(), k.lane2_free);
        k.lane2_free = begin + s.count;
        sl.op = nullptr, sl.busy = true, sl.done = false, sl.start = begin, sl.end = k.lane2_free, sl.label = s.label;
        sched.at(sl.end, ev_wake, this, (uint64_t)rank);
        return true;
    }
    ncl_comm *c = k.comms[s.comm], *op = c;
    int cr = 0;
    ncl_comm_rank(c, &cr);
    const ncl_dtype dt = dtype_;
    const uint64_t block = s.count * ncl_dtype_size(dt);
    unsigned char *buf = reinterpret_cast<unsigned char *>(k_fake);
    if (payload_) {
        if (!fill(rank, sl, s, c))
            return false;
        buf = sl.buf.data();
    }
    ncl_result rc = NCL_ERR_INVALID_ARGUMENT;
    switch (s.call) { // in place, as frameworks call them on their tensors
    case NCL_COLL_ALLREDUCE: rc = ncl_allreduce_start(buf, buf, s.count, dt, NCL_SUM, c); break;
    case NCL_COLL_BROADCAST: rc = ncl_broadcast_start(buf, buf, s.count, dt, s.peer, c); break;
    case NCL_COLL_REDUCE: rc = ncl_reduce_start(buf, buf, s.count, dt, NCL_SUM, s.peer, c); break;
    case NCL_COLL_REDUCE_SCATTER:
        rc = ncl_reduce_scatter_start(buf, buf + (uint64_t)cr * block, s.count, dt, NCL_SUM, c);
        break;
    case NCL_COLL_ALLGATHER: rc = ncl_allgather_start(buf + (uint64_t)cr * block, buf, s.count, dt, c); break;
    case NCL_COLL_ALLTOALL: rc = ncl_alltoall_start(buf, buf, s.count, dt, c); break;
    case ProgStep::AllToAllV: rc = ncl_alltoallv_start(buf, buf, s.counts, dt, c); break;
    case ProgStep::Send: rc = ncl_send_start(buf, s.count, dt, s.peer, c, &op); break;
    case ProgStep::Recv: rc = ncl_recv_start(buf, s.count, dt, s.peer, c, &op); break;
    default: break;
    }
    if (rc != NCL_SUCCESS) {
        fail(rank, "starting a call", c, rc);
        return false;
    }
    int done = 0;
    rc = ncl_test(op, &done); // what it can issue now goes out now
    if (rc != NCL_SUCCESS) {
        fail(rank, "a call", op, rc);
        return false;
    }
    const uint64_t now = cl_.network().scheduler().now();
    sl.op = op, sl.busy = true, sl.done = done != 0, sl.start = now, sl.end = now, sl.label = s.label;
    if (payload_ && sl.done)
        check(sl);
    return true; // (a call done at once took no time: calls_slot is unchanged)
}

bool Programs::poll(int rank)
{
    Rank &k = ranks_[(size_t)rank];
    const uint64_t now = cl_.network().scheduler().now();
    for (Slot &sl : k.slots) {
        if (!sl.busy || sl.done)
            continue;
        int done = 0;
        ncl_result rc = sl.op ? ncl_test(sl.op, &done) : NCL_SUCCESS;
        if (!sl.op) // a Timer: done at its end
            done = now >= sl.end;
        if (rc != NCL_SUCCESS) {
            fail(rank, "a call", sl.op, rc);
            return false;
        }
        if (done) {
            sl.done = true, sl.end = now;
            if (payload_ && sl.op)
                check(sl);
            k.times.calls_slot[&sl - k.slots] += now - sl.start;
            if (tracer_ && now > sl.start)
                tracer_->span(rank, sl.label ? sl.label : "call", sl.start, now, sl.label ? sl.label : "calls");
            if (!sl.op)
                k.times.lane2 += now - sl.start;
            while (sl.done && sl.next < sl.queue.size()) { // the next queued call on this slot starts now
                const ProgStep next = sl.queue[sl.next++];
                if (sl.next == sl.queue.size())
                    sl.queue.clear(), sl.next = 0;
                if (!issue(rank, next))
                    return false;
            }
        }
    }
    return true;
}

void Programs::advance(int rank)
{
    Rank &k = ranks_[(size_t)rank];
    model::Scheduler &s = cl_.network().scheduler();
    if (!error_.empty() || !poll(rank))
        return;
    while (k.pc < k.steps.size()) {
        const ProgStep &st = k.steps[k.pc];
        const uint64_t now = s.now();
        if (st.kind == ProgStep::Compute) {
            if (k.computing)
                return; // ev_compute_done moves on
            k.computing = true;
            k.times.compute += st.count;
            if (tracer_ && st.count)
                tracer_->span(rank, st.label ? st.label : "compute", now, now + st.count);
            s.at(now + st.count, ev_compute_done, this, (uint64_t)rank);
            return;
        }
        if (st.kind == ProgStep::Start) {
            if (!issue(rank, st))
                return;
        } else {
            if (st.slot >= kProgSlots || !k.slots[st.slot].busy) {
                fail(rank, "a wait for a slot with no call in it", nullptr, NCL_SUCCESS);
                return;
            }
            Slot &sl = k.slots[st.slot];
            if (!sl.done || sl.next < sl.queue.size()) {
                if (!k.waiting)
                    k.waiting = true, k.wait_from = now;
                return; // the NPU's progress wakes it
            }
            if (k.waiting) {
                k.times.blocked += now - k.wait_from, k.times.blocked_slot[st.slot] += now - k.wait_from;
                k.waiting = false;
            }
            sl.busy = false;
        }
        k.pc++;
        steps_run_++;
    }
    if (!k.finished) {
        k.finished = true;
        k.times.end = s.now() - t0_;
        running_--;
    }
}

void Programs::ev_compute_done(void *self, uint64_t rank)
{
    Programs *p = static_cast<Programs *>(self);
    Rank &k = p->ranks_[rank];
    k.computing = false;
    k.pc++;
    p->steps_run_++;
    p->advance((int)rank);
}

void Programs::ev_wake(void *self, uint64_t rank)
{
    Programs *p = static_cast<Programs *>(self);
    p->pending_[rank] = 0;
    p->advance((int)rank);
}

bool Programs::run()
{
    model::Scheduler &s = cl_.network().scheduler();
    t0_ = s.now();
    running_ = (int)ranks_.size();
    // the NPU's progress comes from inside its event: the rank's calls are tested after it, once
    cl_.set_waker([this, &s](int rank) {
        if (!pending_[(size_t)rank])
            pending_[(size_t)rank] = 1, s.after(0, ev_wake, this, (uint64_t)rank);
    });
    s.hold_from(UINT64_MAX);
    for (int r = 0; r < (int)ranks_.size(); r++)
        advance(r);
    for (int warps = 0; error_.empty() && running_ > 0;) {
        sc_core::sc_start();
        if (s.overflowed()) {
            error_ = "simulated time passed the model's clock horizon (2^62 ps)";
            break;
        }
        if (!error_.empty() || running_ == 0)
            break;
        // Nothing moves: let time reach the engine's timeout so the waits that can never be met
        // fail with their diagnosis (the communicator, step and peer) instead of hanging.
        if (++warps > 3) {
            error_ = "the programs are stuck: a rank waits for a call whose peers never make it";
            break;
        }
        const uint64_t warp = (cl_.timeout_ns() + 1) * 1000;
        for (int r = 0; r < (int)ranks_.size(); r++)
            if (!ranks_[(size_t)r].finished)
                s.after(warp, ev_wake, this, (uint64_t)r), pending_[(size_t)r] = 1;
    }
    cl_.set_waker(nullptr);
    return error_.empty();
}

} // namespace rs
