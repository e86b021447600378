// scheduler.cpp — heap of timed callbacks driven by one SC_METHOD (see scheduler.hpp).
#include "model/scheduler.hpp"

#include <algorithm>
#include <cmath>

#include "model/topology.hpp" // ConfigError

namespace model {

namespace {
inline size_t hash_t(uint64_t t, size_t mask)
{
    return (size_t)((t * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}
} // namespace

Scheduler::Scheduler(sc_core::sc_module_name name) : sc_core::sc_module(name)
{
    if (sc_core::sc_get_time_resolution() != sc_core::sc_time(1, sc_core::SC_PS))
        throw ConfigError("model: SystemC time resolution must be 1 ps (the default)");
    SC_METHOD(run);
    sensitive << ev_;
    heap_.reserve(1024);
    heap_b_.reserve(1024);
    now_.reserve(1024);
    index_.assign(1024, Slot{0, k_none});
}

void Scheduler::at_any(uint64_t t, Fn fn, void *obj, uint64_t arg)
{
    if (t >= k_horizon_ps) { // past what the clock holds: the run ends here, marked
        overflowed_ = true;
        return;
    }
    uint64_t n = now();
    if (t <= n) {
        // Due now: after everything already due (FIFO), exactly as a (t, seq) heap orders it.
        now_.push_back(Due{fn, obj, arg});
        if (started_ && !in_run_ && n < armed_)
            arm(n);
        return;
    }
    uint32_t b = last_b_ != k_none && last_t_ == t ? last_b_ : bucket_for(t);
    last_t_ = t, last_b_ = b;
    buckets_[b].due.push_back(Due{fn, obj, arg});
    timed_++;
    // Inside run() the loop re-arms at its end; before the first run() the method's
    // initialisation call arms it.
    if (started_ && !in_run_ && t < armed_)
        arm(n);
}

// The bucket of time t, created (and pushed on the heap) if there is none yet.
uint32_t Scheduler::bucket_for(uint64_t t)
{
    size_t mask = index_.size() - 1;
    size_t i = hash_t(t, mask);
    for (; index_[i].bucket != k_none; i = (i + 1) & mask)
        if (index_[i].t == t)
            return index_[i].bucket;
    uint32_t b;
    if (!free_buckets_.empty()) {
        b = free_buckets_.back();
        free_buckets_.pop_back();
    } else {
        b = (uint32_t)buckets_.size();
        buckets_.emplace_back();
    }
    buckets_[b].t = t; // (its due array is empty, capacity kept)
    index_[i] = Slot{t, b};
    if (++index_used_ * 2 > index_.size()) { // keep probes short: rehash at half full
        std::vector<Slot> old(index_.size() * 2, Slot{0, k_none});
        old.swap(index_);
        mask = index_.size() - 1;
        for (const Slot &sl : old)
            if (sl.bucket != k_none) {
                size_t j = hash_t(sl.t, mask);
                while (index_[j].bucket != k_none)
                    j = (j + 1) & mask;
                index_[j] = sl;
            }
    }
    // 4-ary heap push: half the depth of a binary heap; times are distinct, so t alone orders.
    size_t k = heap_.size();
    heap_.push_back(t);
    heap_b_.push_back(b);
    uint64_t *h = heap_.data();
    uint32_t *hb = heap_b_.data();
    while (k > 0) {
        size_t p = (k - 1) / 4;
        if (h[p] <= t)
            break;
        h[k] = h[p];
        hb[k] = hb[p];
        k = p;
    }
    h[k] = t;
    hb[k] = b;
    return b;
}

// Linear probing with backward-shift deletion (no tombstones).
void Scheduler::index_erase(uint64_t t)
{
    size_t mask = index_.size() - 1;
    size_t i = hash_t(t, mask);
    while (index_[i].t != t || index_[i].bucket == k_none)
        i = (i + 1) & mask;
    for (size_t j = (i + 1) & mask;; j = (j + 1) & mask) {
        if (index_[j].bucket == k_none)
            break;
        size_t home = hash_t(index_[j].t, mask);
        // Move j into the hole at i when its home is not in (i, j] (cyclically).
        if (((j - home) & mask) >= ((j - i) & mask)) {
            index_[i] = index_[j];
            i = j;
        }
    }
    index_[i].bucket = k_none;
    index_used_--;
}

void Scheduler::heap_pop()
{
    uint64_t last = heap_.back();
    uint32_t last_b = heap_b_.back();
    heap_.pop_back();
    heap_b_.pop_back();
    size_t n = heap_.size();
    if (n == 0)
        return;
    uint64_t *h = heap_.data();
    uint32_t *hb = heap_b_.data();
    size_t i = 0;
    for (;;) {
        size_t c = 4 * i + 1;
        if (c >= n)
            break;
        size_t best = c;
        size_t end = c + 4 < n ? c + 4 : n;
        for (size_t k = c + 1; k < end; k++)
            if (h[k] < h[best])
                best = k;
        if (h[best] >= last)
            break;
        h[i] = h[best];
        hb[i] = hb[best];
        i = best;
    }
    h[i] = last;
    hb[i] = last_b;
}

void Scheduler::hold_from(uint64_t t_ps)
{
    hold_ = t_ps;
    if (started_ && !in_run_) { // (inside run() its last arm() sees the hold)
        ev_.cancel(); // re-arm from scratch: a held time may be armed, a released one not
        armed_ = UINT64_MAX;
        arm(now());
    }
}

void Scheduler::arm(uint64_t n)
{
    uint64_t t;
    if (now_head_ < now_.size())
        t = n;
    else if (!heap_.empty() && heap_.front() < hold_)
        t = heap_.front();
    else {
        armed_ = UINT64_MAX;
        return;
    }
    armed_ = t;
    // An earlier notification overrides a pending later one; a later one is ignored.
    ev_.notify(sc_core::sc_time((double)(t - n), sc_core::SC_PS));
}

void Scheduler::run()
{
    started_ = true;
    uint64_t n = (uint64_t)sc_core::sc_time_stamp().value();
    run_now_ = n;
    in_run_ = true;
    armed_ = UINT64_MAX;
    for (;;) {
        if (!heap_.empty() && heap_.front() <= n && heap_.front() < hold_) {
            // The earliest bucket is due: unhook it first (nothing can join it now: whatever
            // is scheduled for <= now goes to the now-FIFO), then run its callbacks in order.
            // Its array is taken out while the callbacks run (they may add buckets, moving
            // buckets_) and the bucket is freed only after them, so none of them reuses it.
            uint32_t b = heap_b_.front();
            index_erase(heap_.front());
            heap_pop();
            if (last_b_ == b)
                last_b_ = k_none;
            running_.swap(buckets_[b].due);
            for (size_t k = 0; k < running_.size(); k++) {
                const Due d = running_[k];
                timed_--;
                events_++;
                d.fn(d.obj, d.arg);
            }
            running_.clear();
            running_.swap(buckets_[b].due);
            free_buckets_.push_back(b);
        } else if (now_head_ < now_.size()) {
            Due d = now_[now_head_++];
            events_++;
            d.fn(d.obj, d.arg);
        } else {
            break;
        }
    }
    now_.clear();
    now_head_ = 0;
    in_run_ = false;
    arm(n);
}

} // namespace model
