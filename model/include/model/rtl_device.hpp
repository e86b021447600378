// rtl_device.hpp — co-simulation: ranks whose device is the verilated rs_dev block, driven by the unchanged engine through the mmio backend, their link transfers carried by the model's Network.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <ncl/ncl_hal.h>
#include <ncl/ncl_mmio.h>

#include "model/network.hpp"
#include "model/params.hpp"

namespace model {
class Npu;
}
class VerilatedVcdC;
class Vrs_dev_sc;

namespace model {

/* How it works (model/README.md, "Co-simulation"; rtl_stub/README.md for the numbers):
 *  - each RTL device is the block verilated as a SystemC module (Vrs_dev_sc), its ports bound
 *    to zero-delay channels (a write is visible at once, no kernel update phase) and its eval
 *    called by the domain on every clock edge: the SystemC kernel never clocks it, so a register
 *    read returns its value inside the scheduler callback that asked;
 *  - one clock domain for every RTL device of the machine (rtl_clock): they tick in lock step,
 *    so one VCD holds them all on one time axis. The domain is clocked lazily from the model's
 *    scheduler: in bursts of at most k_burst cycles while anything is in flight (an engine busy,
 *    link beats or acks pending, a read outstanding), not at all when quiet — then its time
 *    jumps to the scheduler's on the next access. A burst ends early when an irq line rises, so
 *    the firmware reacts at that cycle's time;
 *  - the firmware's register accesses are bus transfers of one cycle each (they cost simulated
 *    time, as on a board); ring slots and buffers are written straight into device memory;
 *  - a link TX transfer is cut through the Network in chunks of one packet (the route's first
 *    channel's packet payload; the header travels with the first): each chunk is one Network
 *    transfer to the peer, starting once its last beat left and the previous chunk of the flow
 *    has been serialised on the route's slowest channel (pacing: a flow's chunks never share a
 *    channel among themselves), so the link's bandwidth, latency, packet headers and credits
 *    apply as to the SystemC NPUs' writes. At the receiver the chunks are fed to the RX port as
 *    beats, in order, one transfer at a time (header-arrival order);
 *  - the receiver's ack goes back to the sender at the cycle it is raised, without link
 *    traffic: the SystemC NPU likewise knows a write is complete when its last byte has landed,
 *    so both fidelities pay the same for completion (no return trip), and one-way rings keep
 *    working without a reverse channel. */
class RtlDomain {
public:
    /** Queues the mmio backend reports for a block (its one descriptor ring runs them all, one
     *  data task at a time: ncl_hal_caps.dma_engines 1). */
    static constexpr uint32_t kQueues = 4;

    /** Called (from a scheduler callback) when rank's irq line rose: its firmware has work. */
    using Waker = void (*)(void *ud, int rank);

    /** Device memory map of every RTL rank (the same on all of them: the mmio backend's
     *  symmetric convention). */
    struct Layout {
        uint64_t ring, scratch, scratch_bytes, send, recv, buf_bytes, mem_bytes;
        uint32_t ring_entries;
    };

    /** rtl[r] != 0: rank r is an RTL device. clock_hz: the block's clock. mem_bytes: device
     *  memory (ring, scratch, send and receive buffers are laid out in it). npus: the machine's
     *  Npu per rank (the SystemC ranks' devices; at RTL ranks a proxy, set_proxy), which the RTL
     *  devices' transfers to SystemC ranks are delivered to. */
    RtlDomain(Network &net, const std::vector<uint8_t> &rtl, double clock_hz, uint64_t mem_bytes,
              uint64_t scratch_bytes, Waker waker, void *waker_ud, const std::vector<Npu *> *npus);
    ~RtlDomain();
    RtlDomain(const RtlDomain &) = delete;
    RtlDomain &operator=(const RtlDomain &) = delete;

    bool has(int rank) const { return rank >= 0 && (size_t)rank < index_.size() && index_[rank] >= 0; }
    /** Mixed fidelity: the Npu that stands in for RTL rank `rank` towards the SystemC ranks.
     *  Their writes land through it in the block's memory (its buffers are bound to the block's
     *  memory image at the addresses the rank's launch names) and their records are taken from
     *  it and fed to the block's RX port as NOTIFY transfers. Build it with proxy_wake and this
     *  domain as its waker and with no scratch. */
    void set_proxy(int rank, Npu *proxy);
    static void proxy_wake(void *self, int rank);
    /** The mmio backend behind a Port (for the HAL wrapper). */
    static ncl_mmio *port_mmio(void *port_ctx);

    /** Brings rank's block up through the mmio backend (interrupt mode). */
    ncl_result init(int rank);
    const ncl_hal *hal(int rank);
    ncl_mmio *mmio(int rank);
    const Layout &layout() const { return lay_; }
    uint8_t *mem(int rank);

    /** The rank's firmware is about to look: take (and clear) its pending IRQ events so the
     *  next one raises irq again. */
    void events_taken(int rank);

    /** One VCD of every RTL device (scopes rank0, rank1, ...): the file is created now (false +
     *  why if it cannot be), filled from the first cycle clocked after elaboration. */
    bool open_waves(const char *path, std::string *why);
    void close_waves();

    /** What a block did, for `ringsim run --trace` (sim/harness/rs_trace.cpp draws a track of each per
     *  RTL rank). Times are the domain's (it may run up to one burst ahead of the scheduler). */
    struct Event {
        enum Kind { TX, RX, IRQ, BUSY } kind;
        int rank;
        int peer;           // TX: destination, RX: sender; -1 for IRQ and BUSY
        unsigned link_kind; // TX, RX: rs_link_pkg's kind (1 write, 2 write-reduce, 3 notify)
        uint64_t bytes;
        uint64_t start_ps, end_ps; // TX: header beat to ack taken; RX: header beat to ack raised;
                                   // BUSY: the engine's busy line high; IRQ: the rising edge
        int status;                // TX, RX: the ack's (0 ok, 1 out of range, 2 bad)
    };
    using Observer = void (*)(void *ud, const Event &e);
    /** Reports every Event from now on (nothing is recorded without one). */
    void set_observer(Observer fn, void *ud)
    {
        obs_ = fn;
        obs_ud_ = ud;
    }
    /** hal(rank) hands out wrap(rank, the rank's HAL) instead (e.g. the tracing HAL); set it
     *  before the Cluster connects. */
    using HalWrap = std::function<ncl_hal(int rank, const ncl_hal &inner)>;
    void set_hal_wrap(HalWrap wrap) { hal_wrap_ = std::move(wrap); }

    uint64_t cycles() const { return cycles_; }
    uint64_t now_ps() const { return t_ps_; }

    static const ComponentInfo &info();

    // access functions of the mmio backend (ctx = Port)
    struct Port {
        RtlDomain *d;
        int rank;
    };

private:
    struct Chunk;
    struct Pins; // the zero-delay channels bound to one module's ports (rtl_device.cpp)
    struct RxXfer {
        int src;
        unsigned kind, dtype, op, notify;
        uint64_t addr;
        uint32_t bytes;
        std::vector<uint8_t> data; // arrived so far
        uint32_t beats_sent = 0;   // beats driven into RX (0: the header next)
        bool complete = false;     // every chunk arrived
    };
    struct Dev {
        int rank;
        // the channels outlive the module bound to them (members are destroyed in reverse)
        std::unique_ptr<Pins> pins;
        std::unique_ptr<Vrs_dev_sc> m; // the block, verilated as a SystemC module
        uint8_t *mem = nullptr;
        std::deque<uint32_t> rsp; // read data due next cycle, in order
        // register request for the next cycle
        bool req = false, req_write = false;
        uint32_t req_addr = 0, req_wdata = 0;
        unsigned settle = 0; // cycles to keep clocking after a register access
        // TX: the open transfer
        bool tx_open = false;
        int tx_dst = -1; // -2: no such RTL peer (swallowed, BAD ack)
        unsigned tx_kind = 0, tx_dtype = 0, tx_op = 0, tx_notify = 0;
        uint64_t tx_addr = 0;
        uint32_t tx_bytes = 0, tx_taken = 0; // payload bytes announced / received from TX
        bool tx_hdr_sent = false;            // the header has gone out in a chunk
        std::vector<uint8_t> tx_buf;         // payload not yet sent
        uint32_t unacked = 0;                // transfers sent, ack not yet back
        std::deque<int> acks;                // acks to drive into tx_ack, in order
        // RX
        std::deque<RxXfer *> rx;              // header-arrival order; front is being driven
        std::map<int, RxXfer *> rx_of;        // open incoming transfer per sender
        std::vector<uint64_t> seq_out;        // per destination: chunks sent
        std::vector<uint64_t> seq_in;         // per sender: next chunk to accept
        std::map<std::pair<int, uint64_t>, Chunk *> early; // chunks that overtook others
        std::deque<int> ack_to;               // sender of each RX transfer not yet acked
        bool irq_seen = false;
        std::unique_ptr<unsigned char[]> mm_mem;
        ncl_mmio *mm = nullptr;
        alignas(16) unsigned char bounce[4096];
        Port port;
        ncl_hal hal{};          // the mmio HAL, wrapped (begin/end also bind the proxy)
        ncl_hal outer{};        // hal_wrap_'s HAL around it
        // --trace (obs_ set): transfers in flight, in ack order, and the lines' last values
        struct Open {
            uint64_t start_ps;
            int peer;
            unsigned kind;
            uint64_t bytes;
        };
        std::deque<Open> tx_log, rx_log;
        bool irq_prev = false, busy_prev = false;
        uint64_t busy_since = 0;
        Npu *proxy = nullptr;   // mixed fidelity: this rank's stand-in among the Npus
    };
    /* An RTL device's transfer to a SystemC rank, gathered from its chunks. */
    struct ExtRx {
        uint64_t next = 0; // next chunk expected
        std::map<uint64_t, Chunk *> early;
        bool open = false;
        unsigned kind = 0, dtype = 0, op = 0, notify = 0;
        uint64_t addr = 0;
        uint32_t bytes = 0;
        std::vector<uint8_t> data;
    };

    Dev &dev(int rank) { return *devs_[(size_t)index_[rank]]; }
    void sync();
    void tick();
    void start_waves();
    bool quiet() const;
    void ensure_running();
    void schedule_burst();
    bool stalled() const;
    void flush_tx(Dev &d, bool last);
    void accept(Chunk *c);
    void accept_ext(Chunk *c);
    void apply_ext(int src, int dst, ExtRx &x);
    void drain_proxy(int rank);
    bool device_ref(uint64_t addr, uint64_t bytes, ncl_ref *ref) const;
    static const ncl_hal_ops cosim_ops;
    void deliver_ack(int sender, int status);
    uint32_t reg_access(int rank, bool write, uint32_t addr, uint32_t wdata);
    int advance_for(int rank, uint64_t cycles, bool until_irq);

    static void ev_burst(void *self, uint64_t);
    static void ev_send(void *self, uint64_t chunk);
    static void ev_arrive(void *self, uint64_t chunk);
    static void ev_wake(void *self, uint64_t rank);

    static uint32_t acc_rd(void *ctx, uint32_t off);
    static void acc_wr(void *ctx, uint32_t off, uint32_t v);
    static int acc_mem_write(void *ctx, uint64_t a, const void *src, uint64_t n);
    static int acc_mem_read(void *ctx, uint64_t a, void *dst, uint64_t n);
    static int acc_wait_irq(void *ctx, uint64_t timeout_ns);
    static uint64_t acc_now(void *ctx);

    Network &net_;
    Scheduler &sched_;
    uint64_t period_ps_;
    Layout lay_{};
    Waker waker_;
    void *waker_ud_;
    std::unique_ptr<VerilatedVcdC> vcd_;
    std::string waves_path_; // --waves asked, the models not attached yet (start_waves)
    std::vector<std::unique_ptr<Dev>> devs_;
    std::vector<int> index_; // rank -> devs_ index, -1: not RTL
    uint64_t t_ps_ = 0;      // start of the domain's next cycle
    uint64_t cycles_ = 0;    // cycles actually ticked
    bool burst_pending_ = false;
    // Stall detection: a block that moved nothing (no memory access, link beat, ack or register
    // access) for k_park_cycles waits for the network (an ack over a link that is down) or the
    // firmware, and only they can wake it: the domain parks instead of clocking towards the
    // engine's timeout a cycle at a time (a co-simulation with a dead link never ended).
    uint64_t still_ = 0;       // cycles in a row in which nothing moved
    bool parked_ = false;
    int nranks_;
    uint32_t ipp_;                     // notify ids per peer (the mmio backend's mapping)
    const std::vector<Npu *> *npus_;
    std::map<std::pair<int, int>, ExtRx> ext_; // (src, dst) -> transfer on its way to an Npu
    /* Pacing of one (src, dst) flow: chunks enter the Network no faster than the route's
     * slowest channel carries them, so they never share it (message fidelity would share it
     * fairly and deliver them all at the end) and arrive in a steady stream. */
    struct Flow {
        bool init = false;
        uint64_t next_free = 0; // ps: when the next chunk may start
        double ps_per_byte = 0; // wire time of the route's slowest channel
        uint32_t packet = 0, header = 0;
    };
    std::vector<Flow> flows_; // src * nranks + dst
    Flow &flow(int src, int dst);
    Observer obs_ = nullptr;
    void *obs_ud_ = nullptr;
    HalWrap hal_wrap_;
    void observe_edges(Dev &d);
};

} // namespace model
