// memory.cpp — a device's memory port, fair-shared among its streams (see memory.hpp).
#include "model/memory.hpp"

#include <algorithm>
#include <stdexcept>

namespace model {

Memory::Memory(Scheduler &sched, double bandwidth)
    : s_(sched), bw_(bandwidth * 1e-12), ps_per_byte_(1e12 / bandwidth)
{
    if (!(bandwidth > 0))
        throw std::invalid_argument("memory bandwidth must be > 0");
    streams_.reserve(8);
    active_.reserve(8);
    free_.reserve(8);
}

// Serve the active streams up to `now`: between two completions each of the k streams gets
// bw / k, so walk the completions in tag order.
void Memory::advance(uint64_t now)
{
    double t = (double)now;
    while (!active_.empty()) {
        double k = (double)active_.size();
        const Tag &head = active_.front();
        double to_head = std::max(0.0, head.finish - vtime_) * k * ps_per_byte_;
        if (last_ps_ + to_head > t) {
            if (t > last_ps_) {
                vtime_ += (t - last_ps_) * bw_ / k;
                busy_ps_ += t - last_ps_;
                last_ps_ = t;
            }
            return;
        }
        busy_ps_ += to_head;
        last_ps_ += to_head;
        vtime_ = std::max(vtime_, head.finish);
        Id id = head.id;
        active_.erase(active_.begin());
        served(id);
    }
    last_ps_ = std::max(last_ps_, t);
}

void Memory::served(Id id)
{
    Stream &st = streams_[id];
    st.active = false;
    st.served = true;
    if (st.fn) { // someone waits: tell them (after this call returns), and forget the stream
        waiters_--;
        s_.after(0, st.fn, st.obj, st.arg);
        free_.push_back(id);
    }
}

// One event, for the first stream in serving order that someone waits for.
void Memory::reschedule()
{
    gen_++;
    if (waiters_ == 0) // the usual case: streams beside transfers, nobody waiting yet
        return;
    double v = vtime_, dt = 0, k = (double)active_.size();
    for (const Tag &tag : active_) {
        dt += (tag.finish - v) * k * ps_per_byte_;
        v = tag.finish;
        k -= 1;
        if (streams_[tag.id].fn) {
            due_ = tag.id;
            double t = last_ps_ + dt + 0.5; // saturated: the scheduler drops what is past its horizon
            uint64_t at = t < (double)Scheduler::k_horizon_ps ? (uint64_t)t : Scheduler::k_horizon_ps;
            s_.at(at > s_.now() ? at : s_.now(), ev_due, this, gen_);
            return;
        }
    }
}

void Memory::ev_due(void *self, uint64_t gen)
{
    Memory &m = *static_cast<Memory *>(self);
    if (gen != m.gen_)
        return;
    m.advance(m.s_.now());
    // Rounding to whole ps may leave a sliver: the stream this event was for, and the ones
    // ahead of it, are served now.
    while (m.streams_[m.due_].active) {
        Tag head = m.active_.front();
        Id id = head.id;
        m.vtime_ = std::max(m.vtime_, head.finish);
        m.active_.erase(m.active_.begin());
        m.served(id);
    }
    m.reschedule();
}

Memory::Id Memory::start(uint64_t bytes, Scheduler::Fn fn, void *obj, uint64_t arg)
{
    advance(s_.now());
    if (active_.empty())
        vtime_ = 0; // keep the tags small so their differences stay exact
    Id id;
    if (!free_.empty()) {
        id = free_.back();
        free_.pop_back();
    } else {
        id = (Id)streams_.size();
        streams_.push_back(Stream{});
    }
    streams_[id] = Stream{fn, obj, arg, true, false};
    waiters_ += fn != nullptr;
    bytes_ += bytes;
    Tag tag{vtime_ + (double)bytes, seq_++, id};
    auto before = [](const Tag &x, const Tag &y) {
        return x.finish != y.finish ? x.finish < y.finish : x.seq < y.seq;
    };
    active_.insert(std::upper_bound(active_.begin(), active_.end(), tag, before), tag);
    peak_ = std::max<uint64_t>(peak_, active_.size());
    reschedule(); // every stream's share just shrank, the waited-for ones' too
    return id;
}

bool Memory::done_or_wait(Id id, Scheduler::Fn fn, void *obj, uint64_t arg)
{
    advance(s_.now());
    Stream &st = streams_[id];
    if (st.served) {
        free_.push_back(id);
        return true;
    }
    st.fn = fn, st.obj = obj, st.arg = arg;
    waiters_++;
    reschedule();
    return false;
}

double Memory::busy_s()
{
    advance(s_.now());
    return busy_ps_ * 1e-12;
}

} // namespace model
