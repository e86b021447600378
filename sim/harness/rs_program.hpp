// rs_program.hpp — rank programs on the model without threads: each rank's list of compute, start and wait steps driven by the simulator's events.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ncl/ncl.h>

#include "model/cluster.hpp"
#include "rs_trace.hpp"

namespace rs {

/** One step of a rank's program. Steps run in order; a Start issues a non-blocking call and goes
 *  on, a Wait blocks until the call in its slot has finished, a Compute until its time passed. A
 *  queued Start on a slot whose call is still running goes behind it, as calls on a stream do (it
 *  starts when the one before finished; a Wait on the slot waits for the last). */
struct ProgStep {
    enum Kind : uint8_t { Compute, Start, Wait };
    // beside the ncl_coll values; Timer: count ps of busy time on the rank's second lane (a host
    // CPU's), one at a time in start order, beside the program (its slot is done at the end)
    enum Call : uint8_t { Send = NCL_COLL_COUNT, Recv, AllToAllV, Timer };
    Kind kind;
    uint8_t call;      // Start: an ncl_coll, Send or Recv
    uint8_t slot;      // Start / Wait: which of the rank's kProgSlots calls in flight
    uint16_t comm;     // Start: index of the rank's communicator (0: the world's)
    int32_t peer;      // Send / Recv: the peer's rank in that communicator; broadcast/reduce: root
    uint64_t count;    // Start: elements; Compute: duration in ps
    const char *label; // trace lane of a call ("tp", "dp", "pp"), or the compute span's name
    bool queued = false; // Start: behind the slot's running call instead of an error
    const uint64_t *counts = nullptr; // AllToAllV: the communicator's p x p block matrix (ncl_alltoallv)
};

enum { kProgSlots = 16 };

/** What one rank spent, in ps of simulated time. */
struct ProgRankTimes {
    uint64_t end = 0;                     // its last step
    uint64_t compute = 0;                 // in Compute steps
    uint64_t lane2 = 0;                   // in Timers on the second lane
    uint64_t blocked = 0;                 // in Wait steps (communication not hidden)
    uint64_t blocked_slot[kProgSlots] = {}; // ... by the slot waited on
    uint64_t calls_slot[kProgSlots] = {};   // calls' times (start to done) by slot
};

/**
 * Programs for every rank of cl, run on its devices at once: calls on several communicators of a
 * rank (the world's and sub-communicators made with ncl_comm_create_group / ncl_comm_split) progress
 * together whenever the rank's NPU makes progress. Counts are elements of dtype; op sum. Timing
 * only (placeholder buffers, a cluster built without payload), or with `payload` (a cluster built
 * with it): each call gets a buffer of its own filled with values every member can predict, and
 * its result is checked element by element when it is done (wrong(); alltoallv not taken).
 */
class Programs {
public:
    Programs(model::Cluster &cl, Tracer *tracer, ncl_dtype dtype = NCL_FLOAT32, bool payload = false);
    ~Programs();
    /** Adds a communicator to rank's list; returns its index (the world's is 0). */
    uint16_t add_comm(int rank, ncl_comm *comm);
    void add(int rank, const ProgStep &s) { ranks_[(size_t)rank].steps.push_back(s); }
    /** Runs every program from now to its end. false: a call failed (error() says which rank,
     *  step and communicator) or a Wait names a slot with nothing in it. */
    bool run();
    const std::string &error() const { return error_; }
    const ProgRankTimes &times(int rank) const { return ranks_[(size_t)rank].times; }
    /** With payload: elements that differed from what the call should leave, and elements checked. */
    uint64_t wrong() const { return wrong_; }
    uint64_t checked() const { return checked_; }
    uint64_t start_ps() const { return t0_; }
    uint64_t events() const { return steps_run_; }

private:
    struct Slot {
        ncl_comm *op = nullptr; // what ncl_test is called on (the call's communicator, or a pair's)
        bool busy = false, done = false;
        uint64_t start = 0, end = 0;
        const char *label = nullptr;
        std::vector<ProgStep> queue; // queued Starts behind the running call, oldest first
        size_t next = 0;             // the first of them not started
        // with payload: the call's buffer and what its result is checked against
        std::vector<unsigned char> buf;
        ProgStep call{};
        uint64_t key = 0; // the call's number on its communicator (a pair's: per direction)
        int n = 0, cr = 0; // its communicator's size and this rank's place there
    };
    struct Rank {
        std::vector<ProgStep> steps;
        std::vector<ncl_comm *> comms;
        Slot slots[kProgSlots];
        size_t pc = 0;
        bool computing = false, waiting = false, finished = false;
        uint64_t wait_from = 0;
        uint64_t lane2_free = 0; // when the second lane ends its last Timer
        std::vector<uint64_t> sent, received; // with payload: transfers so far per world peer
        ProgRankTimes times;
    };
    void advance(int rank);
    bool poll(int rank); // ncl_test on every call in flight; false: one failed
    bool issue(int rank, const ProgStep &s);
    void fail(int rank, const char *what, ncl_comm *comm, ncl_result rc);
    bool fill(int rank, Slot &sl, const ProgStep &s, ncl_comm *c); // payload: buffer and inputs
    void check(Slot &sl);                                           // payload: the result
    static void ev_compute_done(void *self, uint64_t rank);
    static void ev_wake(void *self, uint64_t rank);

    model::Cluster &cl_;
    Tracer *tracer_;
    ncl_dtype dtype_;
    bool payload_;
    uint64_t wrong_ = 0, checked_ = 0;
    std::vector<Rank> ranks_;
    std::vector<uint8_t> pending_; // a wake is scheduled for the rank
    uint64_t t0_ = 0, steps_run_ = 0;
    int running_ = 0; // ranks not at their end
    std::string error_;
};

} // namespace rs
