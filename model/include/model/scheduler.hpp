// scheduler.hpp — the model's event kernel: one SC_METHOD on one sc_event drains timed callbacks
// in (time in ps, insertion order): a 4-ary min-heap of distinct times, each with a FIFO bucket
// of its callbacks, plus a FIFO of callbacks due now. Few SystemC events, deterministic order,
// no thread per transfer; links, switches and the NPU devices all schedule through it.
#pragma once

#include <cstdint>
#include <vector>

#include <systemc>

namespace model {

class Scheduler : public sc_core::sc_module {
public:
    /** A callback: plain function + object + argument, so scheduling never allocates. */
    using Fn = void (*)(void *obj, uint64_t arg);

    SC_HAS_PROCESS(Scheduler);
    explicit Scheduler(sc_core::sc_module_name name);

    /** Simulated time now, in ps (SystemC's default resolution, checked at construction). */
    uint64_t now() const { return in_run_ ? run_now_ : (uint64_t)sc_core::sc_time_stamp().value(); }
    /** Run fn(obj, arg) at absolute time t_ps (>= now; earlier is clamped to now). Callbacks at
     *  the same time run in the order they were scheduled. Callable during elaboration, from
     *  callbacks, from other SystemC processes, or between sc_start() calls. */
    void at(uint64_t t_ps, Fn fn, void *obj, uint64_t arg)
    {
        // Inside run(), the common cases inline: due now, or at the time scheduled last.
        if (in_run_ && t_ps < k_horizon_ps) {
            if (t_ps <= run_now_) {
                now_.push_back(Due{fn, obj, arg});
                return;
            }
            if (last_t_ == t_ps && last_b_ != k_none) {
                buckets_[last_b_].due.push_back(Due{fn, obj, arg});
                timed_++;
                return;
            }
        }
        at_any(t_ps, fn, obj, arg);
    }
    void after(uint64_t d_ps, Fn fn, void *obj, uint64_t arg) { at(now() + d_ps, fn, obj, arg); }

    /** Callbacks run so far (the "events processed" figure of --stats). */
    uint64_t events() const { return events_; }
    size_t pending() const { return timed_ + (now_.size() - now_head_); }

    /** The clock's horizon, 2^62 ps (about 53 days): to_ps saturates there, and a callback due
     *  at or beyond it is dropped and marks the run overflowed (never a wrapped time). */
    static constexpr uint64_t k_horizon_ps = 1ull << 62;
    bool overflowed() const { return overflowed_; }

    /** Hold back the callbacks due at or after t_ps: sc_start() returns once nothing earlier is
     *  pending (UINT64_MAX holds nothing). Set when a collective ends, so a fault due later waits
     *  for the run that reaches its time instead of pulling simulated time forward. */
    void hold_from(uint64_t t_ps);

    static uint64_t to_ps(double seconds) // (inline: every transfer converts a few times)
    {
        if (!(seconds > 0))
            return 0;
        double ps = seconds * 1e12 + 0.5; // round half up, as llround does for positives
        return ps < (double)k_horizon_ps ? (uint64_t)ps : k_horizon_ps;
    }
    static double to_s(uint64_t ps) { return (double)ps * 1e-12; }

private:
    struct Due {
        Fn fn;
        void *obj;
        uint64_t arg;
    };
    struct Bucket { // every callback due at time t, in scheduling order (a freed bucket keeps
        uint64_t t;    // its array's capacity for the next time it is used: no allocation then)
        std::vector<Due> due;
    };
    struct Slot { // open-addressing index time -> bucket (bucket == k_none: empty)
        uint64_t t;
        uint32_t bucket;
    };
    static constexpr uint32_t k_none = UINT32_MAX;
    void run();
    void at_any(uint64_t t_ps, Fn fn, void *obj, uint64_t arg);
    void arm(uint64_t now);
    uint32_t bucket_for(uint64_t t);
    void index_erase(uint64_t t);
    void heap_pop();

    // A collective at scale schedules many callbacks for the very same instant (every rank's
    // step issues, serialisation ends and deliveries coincide), so the heap holds distinct times
    // only and each time keeps a FIFO of its callbacks: appending to it is exactly insertion
    // order. Callbacks due now (a zero delay: notifications, wake-ups) go to a separate FIFO.
    // Every bucket due at the current time was filled before that time was reached, so it
    // precedes every now-FIFO entry in scheduling order: draining the due bucket first, then
    // the FIFO, runs exactly the (time, insertion) order one heap of (t, seq) would.
    std::vector<uint64_t> heap_;    // 4-ary min-heap of bucket times ...
    std::vector<uint32_t> heap_b_;  // ... and their buckets (parallel arrays)
    std::vector<Bucket> buckets_;
    std::vector<uint32_t> free_buckets_;
    uint64_t last_t_ = 0;          // the time and bucket at() used last: a wave of callbacks ...
    uint32_t last_b_ = k_none;     // ... for one instant skips the index (k_none: none)
    std::vector<Slot> index_;      // power-of-two size, linear probing
    size_t index_used_ = 0;
    size_t timed_ = 0;             // timed callbacks pending
    std::vector<Due> running_;     // the due bucket's callbacks while they run
    std::vector<Due> now_;
    size_t now_head_ = 0;
    uint64_t run_now_ = 0; // the time run() is draining (now() without asking SystemC)
    uint64_t armed_ = UINT64_MAX; // time the sc_event is notified for, MAX = not armed
    uint64_t hold_ = UINT64_MAX;  // timed callbacks at or after this wait (hold_from)
    uint64_t events_ = 0;
    bool overflowed_ = false;
    bool started_ = false, in_run_ = false;
    sc_core::sc_event ev_;
};

} // namespace model
