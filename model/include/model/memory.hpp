// memory.hpp — a device's memory port: every byte the DMA engines read or write and every byte a
// reduction touches goes through it, and streams active at once share its bandwidth fairly
// (processor sharing, as a link does in message fidelity).
//
// Streams come in two kinds. A stream someone waits for (a local copy) gets a completion event.
// A stream that runs beside a network transfer (the source read and destination write of a DMA
// write) is only asked at the transfer's end whether it is done — with memory far faster than a
// link it always is, and then it has cost no event at all; if not, it is waited for from then on.
#pragma once

#include <cstdint>
#include <vector>

#include "model/scheduler.hpp"

namespace model {

class Memory {
public:
    using Id = uint32_t;

    /** bandwidth in B/s (> 0). */
    Memory(Scheduler &sched, double bandwidth);
    Memory(const Memory &) = delete;
    Memory &operator=(const Memory &) = delete;

    /** Start a stream of `bytes` of memory traffic now. With fn, fn(obj, arg) runs once it has
     *  been served; without, ask done_or_wait() later (exactly once). */
    Id start(uint64_t bytes, Scheduler::Fn fn = nullptr, void *obj = nullptr, uint64_t arg = 0);
    /** For a stream started without fn: true if it has been served (it is forgotten); otherwise
     *  false and fn(obj, arg) runs when it is. */
    bool done_or_wait(Id id, Scheduler::Fn fn, void *obj, uint64_t arg);

    uint64_t bytes() const { return bytes_; }
    /** Time with at least one stream active, up to now. */
    double busy_s();
    uint64_t peak_streams() const { return peak_; }

private:
    struct Stream {
        Scheduler::Fn fn; // set: someone waits for it
        void *obj;
        uint64_t arg;
        bool active, served;
    };
    struct Tag { // an active stream in serving order: served once vtime_ reaches finish
        double finish;
        uint64_t seq;
        Id id;
    };
    void advance(uint64_t now);
    void reschedule();
    void served(Id id);
    static void ev_due(void *self, uint64_t gen);

    Scheduler &s_;
    double bw_, ps_per_byte_; // bytes per ps, and its inverse
    std::vector<Stream> streams_;
    std::vector<Id> free_;
    std::vector<Tag> active_; // sorted by (finish, seq): the order they will be served in
    uint32_t waiters_ = 0;   // active streams with fn
    Id due_ = 0;             // the stream the pending event is for
    double vtime_ = 0;       // bytes served to each active stream so far
    double last_ps_ = 0;
    uint64_t gen_ = 0, seq_ = 0, bytes_ = 0, peak_ = 0;
    double busy_ps_ = 0;
};

} // namespace model
