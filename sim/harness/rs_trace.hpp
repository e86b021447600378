// rs_trace.hpp — `ringsim run SCENARIO --trace FILE`: a Chrome/Perfetto trace of every rank's
// tasks, recorded by wrapping each rank's HAL (the model stays untouched).
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <ncl/ncl_hal.h>

#include "model/network.hpp"
#include "model/npu.hpp"
#include "model/rtl_device.hpp"
#include "model/scheduler.hpp"

namespace rs {

/** Writes the "traceEvents" JSON as the simulation runs: one process per NPU (or RTL rank), thread 0 holds
 *  the rank's collectives, thread q+1 its queue q (a sub-communicator's, e.g. each ncl_send pair's,
 *  the same from tid 64 k, named "comm ID rank R: ..."); with observe(), one more process for links. A data task is a complete event from
 *  dma_submit to the dma_poll that reports it done (the driver polls in the same simulated
 *  instant the device finishes, so this is the device's completion time); a NOTIFY_RECORD is
 *  an instant event. Times are simulated microseconds. */
class Tracer {
public:
    /** f: opened for writing (closed by finish). max_events: stop recording after that many. */
    Tracer(FILE *f, std::string path, uint64_t max_events, model::Scheduler &sched, FILE *err);
    ~Tracer();
    Tracer(const Tracer &) = delete;
    Tracer &operator=(const Tracer &) = delete;

    /** The HAL rank `rank` should use instead of npu->hal(): forwards every op to the device. */
    ncl_hal wrap(int rank, model::Npu *npu);
    /** Co-simulation (device.fidelity rtl): the RTL ranks too, as process "rtlN" — their HALs
     *  wrapped as an NPU's (collectives, queue tasks = the block's descriptors from doorbell to
     *  completion, records), plus the block's own tracks: "rtl engine" (busy line high),
     *  "rtl link tx" (transfer from header beat to ack, args peer/kind/bytes/status),
     *  "rtl link rx" (likewise, received) and "rtl irq" (instants at the irq line's rising edge).
     *  Call before the Cluster connects. */
    void observe(model::RtlDomain &rtl);
    /** Also records every network transfer: a process "links" (pid = nranks) with one thread per
     *  channel; a transfer is a complete event on the first channel of its route, from its start
     *  to its delivery (multi-hop routes included in that span). */
    void observe(model::Network &net);
    /** A span of work the model does not simulate event by event (a training step's compute) on
     *  rank's thread `lane` ("compute" by default), from start_ps to end_ps. */
    void span(int rank, const char *name, uint64_t start_ps, uint64_t end_ps, const char *lane = "compute");
    /** Closes the JSON. 0, or -1 after "ringsim: --trace: cannot write ..." on err. */
    int finish();
    uint64_t events() const { return events_; }

    struct Rank; // per-rank state (public for the C trampolines)

private:
    friend struct TraceOps;
    bool room();
    void emit(const char *fmt, ...) __attribute__((format(printf, 2, 3)));
    void thread_name(Rank &r, unsigned tid);
    ncl_hal wrap_hal(int rank, const ncl_hal &inner, const char *process);
    // A sub-communicator's context on device's rank (HAL split), on tracks of its own.
    ncl_hal wrap_context(Rank &device, const ncl_hal &inner, uint32_t id, int rank);
    static constexpr unsigned kContextTids = 64; // tracks a context may use (lane_tid's, and then some)
    Rank *rank_of(int rank);
    static void on_rtl(void *self, const model::RtlDomain::Event &e);

    FILE *f_;
    std::string path_;
    uint64_t max_, events_ = 0;
    model::Scheduler &sched_;
    FILE *err_;
    bool first_ = true, truncated_ = false, finished_ = false;
    std::vector<std::unique_ptr<Rank>> ranks_;
    std::vector<std::unique_ptr<Rank>> contexts_; // the sub-communicators' (wrap_context)
    model::Network *net_ = nullptr;
    std::vector<bool> channel_named_;
    static void on_transfer(void *self, int src, int dst, uint64_t bytes, uint64_t start_ps,
                            uint64_t end_ps, int channel);
};

} // namespace rs
