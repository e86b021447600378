// test_model_memory.cpp — the device memory port: streams active at once share its bandwidth
// fairly; waited-for streams complete by event, streams beside a transfer are asked when it ends.
// Times are exact simulated picoseconds (M = 100 GB/s: 1 byte = 10 ps).
#include <cstdint>
#include <vector>

#include <systemc>

#include "model/memory.hpp"
#include "model_test.hpp"

using model::Memory;
using model::Scheduler;

namespace {

const double M = 100e9;
const uint64_t n = 1 << 20; // bytes; n / M = 10485760 ps

uint64_t ps(double bytes) { return (uint64_t)(bytes * 1e12 / M + 0.5); }

struct World {
    Scheduler sched{"sched"};
    Memory mem{sched, M};
    std::vector<uint64_t> done_at = std::vector<uint64_t>(9, 0);
    static void done(void *w, uint64_t i)
    {
        World &x = *static_cast<World *>(w);
        x.done_at[i] = x.sched.now();
    }
    void start_at(uint64_t t, uint64_t bytes, uint64_t i)
    {
        struct Arg {
            World *w;
            uint64_t bytes, i;
        };
        Arg *a = new Arg{this, bytes, i};
        sched.at(t, [](void *p, uint64_t) {
            Arg *a = static_cast<Arg *>(p);
            a->w->mem.start(a->bytes, &World::done, a->w, a->i);
            delete a;
        }, a, 0);
    }
};

} // namespace

int sc_main(int, char **)
{
    World w;
    // 0: alone, n bytes -> n / M. 1 and 2 start together at 100 us with n and 2n: each gets
    // M / 2 until stream 1 is served (2n / M later), then stream 2 runs alone for its last n.
    w.start_at(0, n, 0);
    uint64_t t1 = 100000000; // 100 us
    w.start_at(t1, n, 1);
    w.start_at(t1, 2 * n, 2);
    // 3 runs alone from 200 us; 4 joins after half of it is served: both then at M / 2.
    uint64_t t3 = 200000000;
    w.start_at(t3, 2 * n, 3);
    w.start_at(t3 + ps(n), n, 4);
    // A stream beside a "transfer": started at 300 us with nobody waiting, together with a
    // waited-for one of the same size. Asked before it is served it waits; asked after, it is
    // simply done (and cost no event).
    uint64_t t5 = 300000000;
    Memory::Id polled = 0, polled2 = 0;
    bool early_done = true, late_done = false;
    struct Poll {
        World *w;
        Memory::Id *id;
        bool *result;
    };
    Poll start5{&w, &polled, nullptr};
    w.sched.at(t5, [](void *p, uint64_t) {
        Poll &q = *static_cast<Poll *>(p);
        *q.id = q.w->mem.start(n);
    }, &start5, 0);
    w.start_at(t5, n, 5);
    Poll ask_early{&w, &polled, &early_done};
    w.sched.at(t5 + ps(n), [](void *p, uint64_t) { // halfway: not served yet, so waits -> done_at[6]
        Poll &q = *static_cast<Poll *>(p);
        *q.result = q.w->mem.done_or_wait(*q.id, &World::done, q.w, 6);
    }, &ask_early, 0);
    uint64_t t7 = 400000000;
    Poll start7{&w, &polled2, nullptr};
    w.sched.at(t7, [](void *p, uint64_t) {
        Poll &q = *static_cast<Poll *>(p);
        *q.id = q.w->mem.start(n);
    }, &start7, 0);
    Poll ask_late{&w, &polled2, &late_done};
    w.sched.at(t7 + ps(2 * n), [](void *p, uint64_t) {
        Poll &q = *static_cast<Poll *>(p);
        *q.result = q.w->mem.done_or_wait(*q.id, &World::done, q.w, 7);
    }, &ask_late, 0);
    // Zero bytes: served at once.
    w.start_at(t7 + ps(4 * n), 0, 8);
    sc_core::sc_start();

    CHECK(w.done_at[0] == ps(n));
    CHECK(w.done_at[1] == t1 + ps(2 * n));
    CHECK(w.done_at[2] == t1 + ps(3 * n));
    CHECK(w.done_at[4] == t3 + ps(3 * n)); // n alone, then 2n at M / 2 each
    CHECK(w.done_at[3] == t3 + ps(3 * n));
    CHECK(w.done_at[5] == t5 + ps(2 * n));
    CHECK(!early_done);
    CHECK(w.done_at[6] == t5 + ps(2 * n)); // the polled stream finished with its twin
    CHECK(late_done);
    CHECK(w.done_at[7] == 0); // never waited for
    CHECK(w.done_at[8] == t7 + ps(4 * n));
    CHECK(w.mem.bytes() == 10 * n);
    CHECK(w.mem.peak_streams() == 2);
    CHECK_NEAR(w.mem.busy_s(), (double)ps(10 * n) * 1e-12, 1e-9);
    for (int i = 0; i < 9; i++)
        std::printf("stream %d done at %.6f us\n", i, (double)w.done_at[i] * 1e-6);
    return test_result("test_model_memory");
}
