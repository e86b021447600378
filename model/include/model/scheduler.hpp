// scheduler.hpp — the model's event kernel: one SC_METHOD on one sc_event drains a min-heap of
// timed callbacks (time in ps, then insertion order). Few SystemC events, deterministic order,
// no thread per transfer. Links, switches and (next) the NPU devices all schedule through it.
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
    uint64_t now() const { return (uint64_t)sc_core::sc_time_stamp().value(); }
    /** Run fn(obj, arg) at absolute time t_ps (>= now; earlier is clamped to now). Callbacks at
     *  the same time run in the order they were scheduled. Callable during elaboration, from
     *  callbacks, from other SystemC processes, or between sc_start() calls. */
    void at(uint64_t t_ps, Fn fn, void *obj, uint64_t arg);
    void after(uint64_t d_ps, Fn fn, void *obj, uint64_t arg) { at(now() + d_ps, fn, obj, arg); }

    /** Callbacks run so far (the "events processed" figure of --stats). */
    uint64_t events() const { return events_; }
    size_t pending() const { return heap_.size(); }

    static uint64_t to_ps(double seconds);
    static double to_s(uint64_t ps) { return (double)ps * 1e-12; }

private:
    struct Ev {
        uint64_t t, seq;
        Fn fn;
        void *obj;
        uint64_t arg;
    };
    void run();
    void arm(uint64_t now);

    std::vector<Ev> heap_;
    uint64_t seq_ = 0;
    uint64_t armed_ = UINT64_MAX; // time the sc_event is notified for, MAX = not armed
    uint64_t events_ = 0;
    bool started_ = false, in_run_ = false;
    sc_core::sc_event ev_;
};

} // namespace model
