// npu.hpp — an NPU device of the model and the `sim` HAL backend: the unchanged firmware engine
// issues its tasks here, and they become timed DMA, link and notify activity with real bytes.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include <ncl/ncl_hal.h>

#include "model/memory.hpp"
#include "model/network.hpp"
#include "model/params.hpp"
#include "model/rs_spec.h"

namespace model {

/* Timing model (documented in model/README.md):
 *  - a queue's data tasks run on one of the device's DMA engines, held while any of them is
 *    unfinished (up to queue_depth at once); issuing one costs task_overhead, one after another
 *    on the engine, then its bytes move, while the writes issued before it may still be moving
 *    (their latency is on the wire); a local task's bytes wait for the tasks before it (an
 *    engine streams one local task at a time);
 *  - the device memory (memory_bandwidth, see memory.hpp) is shared fairly by everything that
 *    touches it at once: a WRITE reads n bytes at the source and writes n at the destination,
 *    a WRITE_REDUCE reads n at the source and reads + writes n at the destination, a local copy
 *    or divide moves 2n, a local reduce 3n (two reads, one write);
 *  - a WRITE* moves its bytes over the network route to the peer while both memories stream
 *    them; it completes when the last byte has arrived and both memory streams are served, and
 *    a WRITE_REDUCE no earlier than n / reduce_bandwidth after it started (the reduce unit
 *    streams with the data); a local reduce likewise takes at least n / reduce_bandwidth; the
 *    tasks of one queue in flight share its engine's reduce unit, one after another;
 *  - NOTIFY_RECORD is chained to a write to the same peer that the queue's latest completions
 *    reported (the write it is posted behind, or the one just before it): it lands with the
 *    data (the channel is in order), once per write; otherwise it is a small message over the
 *    route (it pays the latency: on a one-way ring the route back to the predecessor is p-1 hops,
 *    which is what the engine's READY handshake costs there). To self it is immediate.
 *    NOTIFY_WAIT costs nothing.
 * Checked against the REFERENCE.md alpha-beta formulas by tests/model/accuracy (model/README.md). */
/** What a device has done so far (see Npu::info() for the table). */
struct NpuStats {
    uint64_t tasks = 0;        // data tasks completed
    uint64_t bytes_out = 0;    // bytes written to peers
    uint64_t memory_bytes = 0; // bytes through the device memory
    double memory_busy_s = 0;  // time with a memory stream active
};

class Npu {
public:
    /** Called (in simulation context) whenever something this rank may be waiting for happened. */
    using Waker = void (*)(void *ud, int rank);

    Npu(int rank, Network &net, const rs_device_params &dev, bool payload, uint64_t scratch_bytes,
        std::vector<Npu *> &all, Waker waker, void *waker_ud);
    Npu(const Npu &) = delete;
    Npu &operator=(const Npu &) = delete;
    ~Npu();

    /** The HAL to create this rank's communicator with. */
    ncl_hal hal() { return ncl_hal{&ops, this}; }
    int rank() const { return rank_; }

    /** The first data-task failure of the current collective (bounds, unbound peer), or "". */
    const std::string &fault() const { return fault_; }
    NpuStats stats();

    static const ncl_hal_ops ops;
    static const ComponentInfo &info();

    /** Co-simulation (model/rtl_device.hpp): a device that is not an Npu (an RTL block, rank
     *  `from`) delivers what a peer Npu's task would: kind NCL_TASK_WRITE / WRITE_REDUCE of
     *  `bytes` from `data` at dst (dtype/op for the reduce), or NCL_TASK_NOTIFY_RECORD (from, id).
     *  Applied at once; false (and fault()) when dst is outside the bound buffers. */
    bool deliver_external(int from, uint32_t kind, const ncl_ref &dst, const void *data, uint64_t bytes,
                          uint32_t dtype, uint32_t op, uint32_t id);

    /** What an NPU of `dev` with `scratch` bytes of scratch reports to the engine (its HAL's
     *  caps): for tools that plan as its communicators will, without building one. */
    static void caps_of(const rs_device_params &dev, uint64_t scratch, ncl_hal_caps *out);

    /** Mixed fidelity: report these queues, DMA engines and queue depth to the engine
     *  (ncl_hal_caps) instead of the device's, so that every rank plans a collective alike (the
     *  timing stays the device's). */
    void report_caps(uint32_t max_queues, uint32_t dma_engines, uint32_t queue_depth)
    {
        caps_queues_ = max_queues;
        caps_engines_ = dma_engines;
        caps_depth_ = queue_depth;
        caps_zones_ = false; // the block's scratch is bound per collective, and its DMA reads one source
    }

    /** Mixed fidelity, an RTL rank's proxy: its scratch is the block's, in the block's memory
     *  image, so the SystemC ranks' writes into it (det's gather) land where the RTL's own would. */
    void bind_scratch(unsigned char *base, uint64_t bytes)
    {
        ext_scratch_ = base;
        scratch_bytes_ = bytes;
        bound_.base[NCL_BUF_SCRATCH] = base;
        bound_.size[NCL_BUF_SCRATCH] = bytes;
    }

private:
    struct Region {
        unsigned char *base[NCL_BUF_COUNT] = {nullptr, nullptr, nullptr};
        uint64_t size[NCL_BUF_COUNT] = {0, 0, 0};
        bool bound = false;
    };
    // A data task of a queue, from submission until dma_poll reports it.
    struct Dma {
        ncl_task task;
        uint64_t issued_ps = 0;   // when its data started moving
        uint64_t min_ps = 0;      // its reduce's minimum duration
        Memory::Id src_mem = {};  // a write's memory streams: read here ...
        Memory::Id dst_mem = {};  // ... and write at the peer
        uint8_t mem_pending = 0;  // streams still unserved after the last byte
        bool started = false;     // given to the queue's engine
        bool deferred = false;    // a local task issued while earlier ones still ran
        bool send_wait = false;   // a write waiting for the queue's previous one to leave
        bool damaged = false;     // a write that arrived damaged, unnoticed (corrupt fault, no crc)
        bool nic = false;         // a write over the device's NIC: the NIC moves it, it holds no DMA engine
        uint8_t done = 0;         // 1: finished, 2: failed
    };
    static constexpr uint32_t kDepth = NCL_MAX_IN_FLIGHT; // the most the engine keeps in flight
    // A queue's tasks in flight (oldest at head) and its hold on an engine.
    struct Queue {
        Dma dma[kDepth];
        uint32_t head = 0, count = 0;
        bool engine = false;       // holds a DMA engine (for its tasks but writes over the NIC)
        bool waiting = false;      // in waiting_ for one
        uint64_t issue_free_ps = 0; // when the engine can issue its next task
        uint64_t reduce_free_ps = 0; // when its reduce unit has finished the tasks issued so far
        // Peers of the writes the latest dma_poll reported that no record has followed yet: a
        // record to one of them rides that write (posted behind it, or the queue's last task).
        int landed[kDepth];
        uint32_t landed_n = 0;
        int sending = -1;          // slot of its write still feeding the wire, else -1 ...
        uint32_t sending_msg = 0;  // ... and its network message (Network::left)
        uint32_t send_waits = 0;   // writes waiting for it (send_wait)
    };

    // HAL operations
    ncl_result caps(ncl_hal_caps *out);
    ncl_result begin(const ncl_hal_launch *l);
    ncl_result end(ncl_result result);
    ncl_result dma_submit(uint32_t queue, const ncl_task *task);
    ncl_result dma_poll(uint32_t queue, int *done);
    ncl_result notify_record(uint32_t queue, int peer, uint32_t id);
    ncl_result notify_try_wait(int peer, uint32_t id, uint32_t count, int *done);
    ncl_result notify_peek(int peer, uint32_t id, uint32_t *value);
    ncl_result split(uint32_t id, const int32_t *members, int nmembers, int rank, ncl_hal *child);
    void release();
    inline bool mismatch_with(int peer);
    [[gnu::noinline]] bool mismatch_compare(int peer, const Npu *o);
    bool mismatch_any();

    Dma &dma_of(uint64_t id) { return queues_[id / kDepth].dma[id % kDepth]; }
    void start_dma(uint32_t queue);
    bool over_nic(int peer); // a write to peer leaves through the device's NIC (asked once per peer)
    void finish_dma(uint64_t id);
    bool apply(const ncl_task &t, bool damaged);
    inline unsigned char *resolve(const ncl_ref &ref, uint64_t bytes, bool write, const char *what);
    [[gnu::cold, gnu::noinline]] unsigned char *unresolved(const ncl_ref &ref, uint64_t bytes, const char *what);
    void add_record(int from, uint32_t id);
    void wake() { waker_(waker_ud_, device_->rank_); }

    static void ev_issue(void *self, uint64_t arg);
    void move(uint64_t id);
    void launch(uint64_t id);
    static void ev_sent(void *self, uint64_t id);
    static void ev_launch(void *self, uint64_t id);
    void sent_by(uint64_t id, uint32_t msg);
    static void ev_written(void *self, uint64_t id);
    static void ev_record(void *self, uint64_t from_and_id);
    static void ev_local_done(void *self, uint64_t arg);
    static void ev_mem_done(void *self, uint64_t id);
    static void ev_finish(void *self, uint64_t arg);

    // A sub-communicator's context (HAL split) on `device`: rank `rank` among `peers`.
    Npu(Npu &device, int rank, std::vector<Npu *> &peers);
    struct Groups;
    Groups &groups();

    int rank_;
    // Sub-communicators: a context has its own queues, counters, bound buffers, scratch and
    // launches; the DMA engines, the memory and the network port are its device's.
    Npu *device_ = this;
    Memory *memory_;         // device_->mem_
    Network &net_;
    Scheduler &sched_;
    rs_device_params dev_;
    uint32_t caps_queues_ = NCL_MAX_QUEUES, caps_engines_ = 0, caps_depth_ = 0; // 0: dev_'s
    bool caps_zones_ = true;
    // Scratch is the device's for good: peers write its landing zones between collectives too.
    bool addressable(uint32_t buf) const { return bound_.bound || buf == NCL_BUF_SCRATCH; }
    bool payload_;
    std::vector<unsigned char> scratch_;
    unsigned char *ext_scratch_ = nullptr; // scratch not in scratch_: bind_scratch's, or own_scratch_
    std::unique_ptr<unsigned char[]> own_scratch_; // a sub-communicator context's
    uint64_t scratch_bytes_;
    std::vector<Npu *> &all_;
    std::vector<uint8_t> nic_to_; // per peer: 0 not asked yet, 1 a route inside the server, 2 over the NIC
    Waker waker_;
    void *waker_ud_;

    Region bound_;
    // begin() calls so far, and the last peer found to agree with us, at which of its and our
    // calls: a wait asks every time, and rings ask the same peer again and again
    uint64_t launches_ = 0;
    int agreed_peer_ = -1;
    uint64_t agreed_mine_ = 0, agreed_theirs_ = 0;
    // Notify counters, (sender << 32 | id) -> records: a small open-addressing table (a rank
    // hears from few peers; entries stay once created, so there is no deletion). Beside the
    // agreement above: a wait reads both (one cache line of a device that is not in cache).
    struct Counter {
        uint64_t key;
        uint32_t count;
        bool used;
    };
    std::vector<Counter> counters_; // power-of-two size
    size_t counters_used_ = 0;
    Counter *counter(uint64_t key, bool create);
    uint32_t busy_engines_ = 0;
    std::deque<std::pair<Npu *, uint32_t>> waiting_; // (context, queue)s waiting for a free DMA engine, in order
    Queue queues_[NCL_MAX_QUEUES];
    Memory mem_;
    uint64_t tasks_done_ = 0, bytes_out_ = 0;

    std::string fault_;
    bool taken_ = false;     // a sub-communicator's context: a member made it (split) ...
    bool released_ = false;  // ... and destroyed its communicator (release)
    std::unique_ptr<Groups> groups_; // on the device all_[0]: every live sub-communicator
    ncl_hal_launch launch_{}; // the call this device began last: peers compare it (a mismatch at once)
};

} // namespace model
