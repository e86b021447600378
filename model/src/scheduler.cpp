// scheduler.cpp — heap of timed callbacks driven by one SC_METHOD (see scheduler.hpp).
#include "model/scheduler.hpp"

#include <algorithm>
#include <cmath>

#include "model/topology.hpp" // ConfigError

namespace model {

namespace {
struct Later {
    template <class E> bool operator()(const E &a, const E &b) const
    {
        return a.t != b.t ? a.t > b.t : a.seq > b.seq;
    }
};
} // namespace

Scheduler::Scheduler(sc_core::sc_module_name name) : sc_core::sc_module(name)
{
    if (sc_core::sc_get_time_resolution() != sc_core::sc_time(1, sc_core::SC_PS))
        throw ConfigError("model: SystemC time resolution must be 1 ps (the default)");
    SC_METHOD(run);
    sensitive << ev_;
    heap_.reserve(1024);
}

uint64_t Scheduler::to_ps(double seconds)
{
    if (!(seconds > 0))
        return 0;
    return (uint64_t)std::llround(seconds * 1e12);
}

void Scheduler::at(uint64_t t, Fn fn, void *obj, uint64_t arg)
{
    uint64_t n = now();
    if (t < n)
        t = n;
    heap_.push_back(Ev{t, seq_++, fn, obj, arg});
    std::push_heap(heap_.begin(), heap_.end(), Later());
    // Inside run() the loop re-arms at its end; before the first run() the method's
    // initialisation call arms it.
    if (started_ && !in_run_ && t < armed_)
        arm(n);
}

void Scheduler::arm(uint64_t n)
{
    if (heap_.empty()) {
        armed_ = UINT64_MAX;
        return;
    }
    uint64_t t = heap_.front().t;
    armed_ = t;
    // An earlier notification overrides a pending later one; a later one is ignored.
    ev_.notify(sc_core::sc_time((double)(t - n), sc_core::SC_PS));
}

void Scheduler::run()
{
    started_ = true;
    in_run_ = true;
    uint64_t n = now();
    armed_ = UINT64_MAX;
    while (!heap_.empty() && heap_.front().t <= n) {
        std::pop_heap(heap_.begin(), heap_.end(), Later());
        Ev e = heap_.back();
        heap_.pop_back();
        events_++;
        e.fn(e.obj, e.arg);
    }
    in_run_ = false;
    arm(n);
}

} // namespace model
