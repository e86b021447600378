// rtl_device.cpp — the co-simulation domain: verilated rs_dev blocks clocked lazily from the model's scheduler, their links over the Network, the mmio backend's access functions (see rtl_device.hpp).
// The block verilated as a SystemC module (rtl_stub/engine.cmake); model/rtl.cmake sets VM_SC=1
// on this file, so Verilator's runtime headers take their SystemC flavour here, as there.
#include "Vrs_dev_sc.h"
#include "verilated.h"
#include "verilated_vcd_c.h"

#include "model/rtl_device.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <ncl/ncl_dtype.h>
#include <ncl/ncl_mmio_regs.h>

#include "model/npu.hpp"
#include "model/rs_defaults.h"
#include "rs_link_beat.hpp"

namespace model {

namespace {

const ParamInfo k_params[] = {
    {"fidelity", "", RS_DEFAULT_RTL_FIDELITY,
     "device.fidelity - systemc: the NPU model above; rtl: the devices (rtl_ranks) are the verilated rs_dev "
     "block (rtl_stub/) driven by the unchanged engine through the mmio backend, link transfers on these links"},
    {"rtl_clock", "Hz", RS_DEFAULT_RTL_CLOCK,
     "clock of the RTL devices (fidelity rtl): one cycle moves one 32-bit word through the memory "
     "port; clocked only while a block has work, idle time is skipped"},
    {"rtl_ranks", "", RS_DEFAULT_RTL_RANKS,
     "which ranks are RTL (e.g. \"0\" or \"0 2\"); the others are NPUs above on the same links (mixed "
     "fidelity: their writes and records reach an RTL block through a stand-in Npu, its RX port)"},
};
const PortInfo k_ports[] = {
    {"net", "the network: each link TX transfer goes to its peer in packet-sized chunks, paced at the route's bandwidth"},
};
const StatInfo k_stats[] = {
    {"cycles", "", "RTL cycles actually clocked (idle time is skipped, not ticked)"},
};

constexpr unsigned k_burst = 64;       // cycles per scheduler event while busy
constexpr uint64_t k_park_cycles = 4096; // cycles with nothing moving before the domain parks
constexpr uint64_t k_ring_at = 0x1000;  // device memory map (Layout)
constexpr uint32_t k_ring_entries = 256;
constexpr uint64_t k_scratch_at = 0x10000;
constexpr int k_rx_bad = 2;             // rs_link_pkg: the receiver's "no such node" status

uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

/* A zero-delay channel for one port of the SystemC module. sc_signal's write() only requests an
 * update, so the value would show after the kernel's next update phase, and the domain cannot
 * wait for one: its register reads must return inside a scheduler callback (the firmware's
 * backend calls them synchronously). Here write() sets the current value at once and notifies
 * nothing, so the kernel never schedules the module's SC_METHOD (it runs it once in the
 * initialisation phase, with inputs unchanged since the domain's last eval: no edge, no effect);
 * the domain evaluates the module itself on each clock edge (eval_now). Reads are sc_signal's. */
template <typename T>
class Wire final : public sc_core::sc_signal<T> {
public:
    explicit Wire(const char *base) : sc_core::sc_signal<T>(sc_core::sc_gen_unique_name(base)) {}
    using sc_core::sc_signal<T>::operator=;
    void write(const T &v) override
    {
        this->m_cur_val = v;
        this->m_new_val = v;
    }
};

/* The module's evaluation (what its SC_METHOD runs: inputs through port.read(), outputs through
 * port.write()) is private in Verilator 5.006's SystemC model. An explicit instantiation may name
 * a private member (C++17 [temp.explicit]/14), so this one hands the domain a friend that calls
 * it: the kernel's own entry point, called on the domain's clock instead of on signal events. */
template <void (Vrs_dev_sc::*Eval)()>
struct EvalAccess {
    friend void eval_now(Vrs_dev_sc &m) { (m.*Eval)(); }
};
template struct EvalAccess<&Vrs_dev_sc::eval_step>;
void eval_now(Vrs_dev_sc &m);

} // namespace

/* Every port of rs_dev (rs_dev.sv), its C++ type in the SystemC model: listed once, used to
 * declare the channels and to bind them. */
#define RS_DEV_PORTS(X)                                                                                 \
    X(bool, clk) X(bool, rst_n) X(uint64_t, mem_bytes)                                                  \
    X(bool, req_valid) X(bool, req_write) X(uint32_t, req_addr) X(uint32_t, req_wdata)                  \
    X(bool, req_ready) X(bool, rsp_valid) X(uint32_t, rsp_rdata) X(bool, rsp_err)                       \
    X(bool, mem_req_valid) X(bool, mem_req_ready) X(bool, mem_req_we) X(uint64_t, mem_req_addr)         \
    X(uint32_t, mem_req_wdata) X(uint32_t, mem_req_wstrb) X(bool, mem_rsp_valid) X(bool, mem_rsp_ready) \
    X(uint32_t, mem_rsp_rdata)                                                                          \
    X(bool, tx_valid) X(bool, tx_ready) X(bool, tx_hdr) X(bool, tx_last) X(uint32_t, tx_kind)           \
    X(uint32_t, tx_peer) X(uint64_t, tx_addr) X(uint32_t, tx_bytes) X(uint32_t, tx_dtype)               \
    X(uint32_t, tx_op) X(uint32_t, tx_notify) X(uint32_t, tx_data) X(bool, tx_ack_valid)                \
    X(uint32_t, tx_ack_status)                                                                          \
    X(bool, rx_valid) X(bool, rx_ready) X(bool, rx_hdr) X(uint32_t, rx_kind) X(uint64_t, rx_addr)       \
    X(uint32_t, rx_bytes) X(uint32_t, rx_dtype) X(uint32_t, rx_op) X(uint32_t, rx_notify)               \
    X(uint32_t, rx_data) X(bool, rx_ack_valid) X(uint32_t, rx_ack_status)                               \
    X(bool, irq) X(bool, busy)

/* One device's side of its ports: the domain reads and writes these (`pins.tx_valid`,
 * `pins.req_addr = ...`), the module sees them through its sc_in/sc_out. */
struct RtlDomain::Pins {
#define RS_DEV_WIRE(type, name) Wire<type> name{#name};
    RS_DEV_PORTS(RS_DEV_WIRE)
#undef RS_DEV_WIRE
    void bind(Vrs_dev_sc &m)
    {
#define RS_DEV_BIND(type, name) m.name(name);
        RS_DEV_PORTS(RS_DEV_BIND)
#undef RS_DEV_BIND
    }
};

/* One piece of a link transfer on its way through the Network. */
struct RtlDomain::Chunk {
    int src, dst;
    uint64_t seq;      // per (src, dst): chunks arrive in this order
    bool first, last;  // first: carries the header
    unsigned kind, dtype, op, notify;
    uint64_t addr;
    uint32_t bytes;    // the whole transfer's payload
    std::vector<uint8_t> data;
};

const ComponentInfo &RtlDomain::info()
{
    static const ComponentInfo ci = MODEL_COMPONENT(
        "rtl", "device.fidelity rtl: RTL devices (verilated rs_dev + mmio backend) co-simulated on the links",
        k_params, k_ports, k_stats);
    return ci;
}

RtlDomain::RtlDomain(Network &net, const std::vector<uint8_t> &rtl, double clock_hz, uint64_t mem_bytes,
                     uint64_t scratch_bytes, Waker waker, void *waker_ud, const std::vector<Npu *> *npus)
    : net_(net), sched_(net.scheduler()), waker_(waker), waker_ud_(waker_ud), nranks_((int)rtl.size()),
      npus_(npus)
{
    ipp_ = NCL_MMIO_NOTIFY_COUNT / (uint32_t)(nranks_ > 0 ? nranks_ : 1);
    if (ipp_ > NCL_NOTIFY_IDS)
        ipp_ = NCL_NOTIFY_IDS;
    double period = 1e12 / (clock_hz > 0 ? clock_hz : RS_DEFAULT_RTL_CLOCK_HZ);
    period_ps_ = period < 1 ? 1 : (uint64_t)(period + 0.5);
    lay_.ring = k_ring_at;
    lay_.ring_entries = k_ring_entries;
    lay_.scratch = k_scratch_at;
    lay_.scratch_bytes = round_up(scratch_bytes ? scratch_bytes : 4096, 4096);
    lay_.send = round_up(lay_.scratch + lay_.scratch_bytes, 65536);
    mem_bytes = mem_bytes / 4 * 4;
    if (mem_bytes < lay_.send + 2 * 65536)
        throw std::invalid_argument("device.memory (" + std::to_string(mem_bytes) +
                                    " B) leaves no room for buffers after the ring and " +
                                    std::to_string(lay_.scratch_bytes) + " B of scratch");
    lay_.buf_bytes = (mem_bytes - lay_.send) / 2 / 4096 * 4096;
    lay_.recv = lay_.send + lay_.buf_bytes;
    lay_.mem_bytes = mem_bytes;

    // SystemC models live in the thread's default context: tracing allowed, not started
    // (nothing is traced without open_waves)
    Verilated::traceEverOn(true);
    int n = (int)rtl.size();
    index_.assign(rtl.size(), -1);
    for (int r = 0; r < n; r++) {
        if (!rtl[r])
            continue;
        index_[r] = (int)devs_.size();
        std::unique_ptr<Dev> d(new Dev);
        d->rank = r;
        // the module's name is its VCD scope; a second domain in the process (`ringsim plan`
        // builds one Cluster per algorithm) gets SystemC's unique variant instead of a warning
        std::string name = "rank" + std::to_string(r);
        if (sc_core::sc_find_object(name.c_str()))
            name = sc_core::sc_gen_unique_name(name.c_str());
        d->pins.reset(new Pins);
        d->m.reset(new Vrs_dev_sc(name.c_str()));
        d->pins->bind(*d->m);
        // calloc: the pages of a large device memory are mapped only when touched
        d->mem = static_cast<uint8_t *>(std::calloc(1, mem_bytes));
        if (!d->mem)
            throw std::runtime_error("cannot allocate " + std::to_string(mem_bytes) + " B of RTL device memory");
        d->pins->mem_bytes = mem_bytes;
        d->seq_out.assign(rtl.size(), 0);
        d->seq_in.assign(rtl.size(), 0);
        d->port = Port{this, r};
        devs_.push_back(std::move(d));
    }
    // reset: rst_n low for a few cycles
    for (auto &d : devs_)
        d->pins->rst_n = 0;
    for (int i = 0; i < 3; i++)
        tick();
    for (auto &d : devs_)
        d->pins->rst_n = 1;
    tick();
    t_ps_ = 0; // reset takes no simulated time
}

RtlDomain::~RtlDomain()
{
    close_waves();
    // no ncl_mmio_fini: its register write would clock the block (and schedule) at teardown
    for (auto &d : devs_) {
        for (RxXfer *x : d->rx)
            delete x;
        for (auto &e : d->early)
            delete e.second;
        d->m->final();
        std::free(d->mem);
    }
    for (auto &e : ext_)
        for (auto &c : e.second.early)
            delete c.second;
}

uint8_t *RtlDomain::mem(int rank) { return dev(rank).mem; }
ncl_mmio *RtlDomain::mmio(int rank) { return dev(rank).mm; }
const ncl_hal *RtlDomain::hal(int rank)
{
    Dev &d = dev(rank);
    d.hal = ncl_hal{&cosim_ops, &d.port};
    if (!hal_wrap_)
        return &d.hal;
    d.outer = hal_wrap_(rank, d.hal);
    return &d.outer;
}

void RtlDomain::set_proxy(int rank, Npu *proxy)
{
    Dev &d = dev(rank);
    d.proxy = proxy;
    proxy->bind_scratch(d.mem + lay_.scratch, lay_.scratch_bytes);
}

// The rank's HAL: the mmio backend's, with begin/end also binding its proxy (mixed fidelity) to
// the block's memory image at the device addresses of the launch, so the SystemC ranks' writes
// land where the RTL's own would.
static const ncl_hal *mm_hal(void *ctx);
const ncl_hal_ops RtlDomain::cosim_ops = {
    [](void *c, ncl_hal_caps *o) { return mm_hal(c)->ops->caps(mm_hal(c)->ctx, o); },
    [](void *c, const ncl_hal_launch *l) {
        ncl_result rc = mm_hal(c)->ops->begin(mm_hal(c)->ctx, l);
        Port *p = static_cast<Port *>(c);
        Dev &d = p->d->dev(p->rank);
        if (rc == NCL_SUCCESS && d.proxy) {
            ncl_hal_launch l2 = *l;
            l2.send = l->send ? d.mem + (uintptr_t)l->send : nullptr;
            l2.recv = l->recv ? d.mem + (uintptr_t)l->recv : nullptr;
            Npu::ops.begin(d.proxy, &l2);
        }
        return rc;
    },
    [](void *c, ncl_result r) {
        Port *p = static_cast<Port *>(c);
        Dev &d = p->d->dev(p->rank);
        if (d.proxy)
            Npu::ops.end(d.proxy, r);
        return mm_hal(c)->ops->end(mm_hal(c)->ctx, r);
    },
    [](void *c, uint32_t q, const ncl_task *t) { return mm_hal(c)->ops->dma_submit(mm_hal(c)->ctx, q, t); },
    [](void *c, uint32_t q, int *dn) { return mm_hal(c)->ops->dma_poll(mm_hal(c)->ctx, q, dn); },
    [](void *c, uint32_t q, int peer, uint32_t id) { return mm_hal(c)->ops->notify_record(mm_hal(c)->ctx, q, peer, id); },
    [](void *c, int peer, uint32_t id, uint32_t n, int *dn) {
        return mm_hal(c)->ops->notify_try_wait(mm_hal(c)->ctx, peer, id, n, dn);
    },
    [](void *c, uint64_t t) { return mm_hal(c)->ops->wait_event(mm_hal(c)->ctx, t); },
    [](void *c) { return mm_hal(c)->ops->now_ns(mm_hal(c)->ctx); },
    [](void *c, int level, const char *msg) {
        if (mm_hal(c)->ops->log)
            mm_hal(c)->ops->log(mm_hal(c)->ctx, level, msg);
    },
    [](void *c, int peer, uint32_t id, uint32_t *v) { return ncl_hal_notify_peek(mm_hal(c), peer, id, v); },
    nullptr, // last_error: the driver reports the block's own error beside the engine's
    nullptr, // split: the register block has one communicator's counters
    nullptr,
};

ncl_mmio *RtlDomain::port_mmio(void *ctx)
{
    Port *p = static_cast<Port *>(ctx);
    return p->d->dev(p->rank).mm;
}
static const ncl_hal *mm_hal(void *ctx) { return ncl_mmio_hal(RtlDomain::port_mmio(ctx)); }

ncl_result RtlDomain::init(int rank)
{
    Dev &d = dev(rank);
    ncl_mmio_config c = NCL_MMIO_CONFIG_INIT;
    c.rank = rank;
    c.nranks = (int)index_.size();
    c.ring_base = lay_.ring;
    c.ring_entries = lay_.ring_entries;
    c.scratch_base = lay_.scratch;
    c.scratch_bytes = lay_.scratch_bytes;
    c.irq = 1;
    c.max_queues = kQueues;
    c.bounce = d.bounce;
    c.bounce_bytes = sizeof d.bounce;
    ncl_mmio_access a = {acc_rd, acc_wr, acc_mem_write, acc_mem_read, acc_wait_irq, nullptr, acc_now, nullptr, &d.port, nullptr};
    size_t bytes = round_up(ncl_mmio_mem_bytes(&c), 16);
    d.mm_mem.reset(new unsigned char[bytes + 16]);
    void *at = reinterpret_cast<void *>(round_up(reinterpret_cast<uintptr_t>(d.mm_mem.get()), 16));
    ncl_result rc = ncl_mmio_init(&d.mm, at, bytes, &c, &a);
    if (rc == NCL_SUCCESS)
        ncl_mmio_set_peer_recv(d.mm, lay_.recv); // reduce's non-roots write into the root's RECV
    return rc;
}

void RtlDomain::events_taken(int rank)
{
    Dev &d = dev(rank);
    if (d.mm)
        ncl_hal_wait_event(ncl_mmio_hal(d.mm), 0);
    d.irq_seen = false;
}

// ---- waves -------------------------------------------------------------------------------

// A SystemC model may be traced only once elaboration is done (Verilator's trace() refuses
// before the first sc_start), and the Cluster asks during elaboration: the file is checked and
// created now, the models are attached at the first cycle clocked after elaboration
// (start_waves). The bring-up's register accesses (during elaboration) are not in the VCD.
bool RtlDomain::open_waves(const char *path, std::string *why)
{
    std::FILE *f = std::fopen(path, "w");
    if (!f) {
        *why = std::string("cannot write '") + path + "': " + std::strerror(errno);
        return false;
    }
    std::fclose(f);
    waves_path_ = path;
    return true;
}

void RtlDomain::start_waves()
{
    vcd_.reset(new VerilatedVcdC);
    for (auto &d : devs_)
        d->m->trace(vcd_.get(), 99);
    vcd_->open(waves_path_.c_str());
    if (!vcd_->isOpen())
        throw std::runtime_error("--waves: cannot write '" + waves_path_ + "'");
    waves_path_.clear();
}

void RtlDomain::close_waves()
{
    waves_path_.clear();
    if (vcd_) {
        vcd_->close();
        vcd_.reset();
    }
}

// ---- the clock ---------------------------------------------------------------------------

bool RtlDomain::quiet() const
{
    for (const auto &p : devs_) {
        const Dev &d = *p;
        if (d.pins->busy || d.req || d.settle || d.tx_open || d.unacked || !d.acks.empty() || !d.rx.empty() ||
            !d.ack_to.empty() || !d.rsp.empty() || d.pins->tx_valid || d.pins->rx_ack_valid)
            return false;
    }
    return true;
}

// Brings the domain to the scheduler's time: a quiet domain jumps there (nothing can change
// while nothing is in flight), a busy one is clocked up to it (it normally runs ahead already).
void RtlDomain::sync()
{
    uint64_t now = sched_.now();
    if (t_ps_ >= now)
        return;
    if (quiet() || parked_) { // parked: nothing moves until the network or the firmware acts
        t_ps_ = now;
        return;
    }
    while (t_ps_ < now)
        tick();
}

bool RtlDomain::stalled() const
{
    return still_ >= k_park_cycles;
}

// Something from outside (a register access, a transfer's chunk or ack): the domain runs again.
void RtlDomain::ensure_running()
{
    parked_ = false;
    still_ = 0;
    schedule_burst();
}

void RtlDomain::schedule_burst()
{
    if (burst_pending_ || quiet())
        return;
    burst_pending_ = true;
    uint64_t now = sched_.now();
    sched_.at(t_ps_ > now ? t_ps_ : now, ev_burst, this, 0);
}

void RtlDomain::ev_burst(void *self, uint64_t)
{
    RtlDomain *d = static_cast<RtlDomain *>(self);
    d->burst_pending_ = false;
    d->sync();
    bool woke = false;
    for (unsigned k = 0; k < k_burst && !woke && !d->quiet(); k++) {
        d->tick();
        for (auto &p : d->devs_)
            if (p->pins->irq && !p->irq_seen) {
                // the firmware looks at this cycle's time, before the domain runs on
                p->irq_seen = true;
                d->sched_.at(d->t_ps_, ev_wake, d, (uint64_t)p->rank);
                woke = true;
            }
    }
    if (!woke && d->stalled()) {
        d->parked_ = true; // until ensure_running: the next chunk, ack or register access
        return;
    }
    d->schedule_burst();
}

void RtlDomain::ev_wake(void *self, uint64_t rank)
{
    RtlDomain *d = static_cast<RtlDomain *>(self);
    d->waker_(d->waker_ud_, (int)rank);
}

// One cycle of every RTL device (the harness's order: inputs from the outputs the last edge
// left, clk 0, this edge's memory transfers, clk 1), each phase one eval of the module.
void RtlDomain::tick()
{
    if (!waves_path_.empty() && sc_core::sc_get_curr_simcontext()->elaboration_done())
        start_waves();
    bool moved = false;
    for (auto &p : devs_) {
        Dev &d = *p;
        Pins &m = *d.pins;
        moved |= d.req || d.settle || !d.acks.empty() || m.tx_valid || m.mem_req_valid || m.rx_ack_valid;
        m.req_valid = d.req;
        m.req_write = d.req_write;
        m.req_addr = d.req_addr;
        m.req_wdata = d.req_wdata;
        d.req = false;
        m.mem_req_ready = 1;
        m.mem_rsp_valid = !d.rsp.empty();
        m.mem_rsp_rdata = d.rsp.empty() ? 0 : d.rsp.front();
        m.tx_ready = 0;
        m.tx_ack_valid = 0;
        m.tx_ack_status = 0;
        m.rx_valid = 0;
        if (!d.acks.empty()) { // one ack per cycle; a sender waits for each, so it takes them
            m.tx_ack_valid = 1;
            m.tx_ack_status = (uint8_t)d.acks.front();
            if (obs_ && !d.tx_log.empty()) { // acks come back in send order (one transfer at a time)
                const Dev::Open &o = d.tx_log.front();
                obs_(obs_ud_, Event{Event::TX, d.rank, o.peer, o.kind, o.bytes, o.start_ps, t_ps_ + period_ps_,
                                    d.acks.front()});
                d.tx_log.pop_front();
            }
            d.acks.pop_front();
            d.unacked--;
        }
        // RX: beats of the oldest transfer whose header arrived, as far as its chunks arrived
        if (!d.rx.empty() && m.rx_ready) {
            RxXfer &x = *d.rx.front();
            bool have = x.beats_sent == 0 ||
                        x.data.size() >= std::min<uint64_t>((uint64_t)x.beats_sent * 4, x.bytes);
            if (have && x.beats_sent <= rs_link_data_beats(x.kind, x.bytes)) {
                moved = true;
                bool last = rs_link_rx_beat(m, x.kind, x.addr, x.bytes, x.dtype, x.op, x.notify, x.data.data(),
                                            x.data.size(), x.beats_sent);
                if (x.beats_sent == 0) {
                    d.ack_to.push_back(x.src);
                    if (obs_)
                        d.rx_log.push_back(Dev::Open{t_ps_, x.src, x.kind, x.bytes});
                }
                x.beats_sent++;
                if (last) {
                    auto of = d.rx_of.find(x.src);
                    if (of != d.rx_of.end() && of->second == &x)
                        d.rx_of.erase(of);
                    d.rx.pop_front();
                    delete &x;
                }
            }
        }
        // TX: every beat is taken at once; the Network paces the chunks
        if (m.tx_valid) {
            m.tx_ready = 1;
            if (m.tx_hdr) {
                d.tx_open = true;
                int peer = (int)m.tx_peer;
                bool npu = npus_ && peer >= 0 && peer < nranks_ && !has(peer) && (*npus_)[(size_t)peer];
                d.tx_dst = (has(peer) || npu) && peer != d.rank ? peer : -2;
                d.tx_kind = m.tx_kind;
                d.tx_addr = m.tx_addr;
                d.tx_bytes = m.tx_kind == 3 ? 0 : m.tx_bytes;
                d.tx_dtype = m.tx_dtype;
                d.tx_op = m.tx_op;
                d.tx_notify = m.tx_notify;
                d.tx_taken = 0;
                d.tx_hdr_sent = false;
                d.tx_buf.clear();
                d.unacked++;
                if (obs_)
                    d.tx_log.push_back(Dev::Open{t_ps_, d.tx_dst >= 0 ? d.tx_dst : peer, d.tx_kind, d.tx_bytes});
            } else {
                uint32_t v = m.tx_data;
                for (int k = 0; k < 4 && d.tx_taken < d.tx_bytes; k++, d.tx_taken++)
                    d.tx_buf.push_back((uint8_t)(v >> (8 * k)));
            }
        }
    }
    for (auto &p : devs_) {
        p->pins->clk = 0;
        eval_now(*p->m);
    }
    if (vcd_) // the low half of the cycle, so viewers see the clock toggle
        vcd_->dump(t_ps_);
    // this edge's memory transfers and link beats
    for (auto &p : devs_) {
        Dev &d = *p;
        Pins &m = *d.pins;
        if (m.mem_rsp_valid)
            d.rsp.pop_front();
        if (m.mem_req_valid) {
            uint64_t a = m.mem_req_addr;
            if (a % 4 || a + 4 > lay_.mem_bytes)
                throw std::runtime_error("rs_dev rank " + std::to_string(d.rank) + ": memory access outside memory at " +
                                         std::to_string(a));
            if (m.mem_req_we) {
                for (int k = 0; k < 4; k++)
                    if (m.mem_req_wstrb >> k & 1)
                        d.mem[a + k] = (uint8_t)(m.mem_req_wdata >> (8 * k));
            } else {
                uint32_t v;
                std::memcpy(&v, d.mem + a, 4); // little-endian host
                d.rsp.push_back(v);
            }
        }
    }
    for (auto &p : devs_) {
        p->pins->clk = 1;
        eval_now(*p->m);
    }
    if (vcd_)
        vcd_->dump(t_ps_ + period_ps_ / 2);
    t_ps_ += period_ps_;
    cycles_++;
    still_ = moved ? 0 : still_ + 1;
    for (auto &p : devs_) {
        Dev &d = *p;
        if (d.settle)
            d.settle--;
        // transfers this cycle finished or filled a chunk: on their way (at the cycle's end)
        if (d.tx_open && (d.tx_taken == d.tx_bytes || (d.tx_dst >= 0 && d.tx_buf.size() >= flow(d.rank, d.tx_dst).packet) ||
                          (d.tx_dst < 0 && d.tx_buf.size() >= 4096)))
            flush_tx(d, d.tx_taken == d.tx_bytes);
        // an ack the receiver raised this cycle goes back to the transfer's sender
        if (d.pins->rx_ack_valid) {
            if (d.ack_to.empty())
                throw std::runtime_error("rs_dev rank " + std::to_string(d.rank) + ": an ack for no transfer");
            int s = d.ack_to.front();
            d.ack_to.pop_front();
            deliver_ack(s, d.pins->rx_ack_status);
        }
        if (obs_)
            observe_edges(d);
    }
}

// --trace: the cycle that just ended, as the observer's events (the ack raised, the irq and
// busy lines' edges); t_ps_ is its end.
void RtlDomain::observe_edges(Dev &d)
{
    const Pins &m = *d.pins;
    if (m.rx_ack_valid && !d.rx_log.empty()) {
        const Dev::Open &o = d.rx_log.front();
        obs_(obs_ud_, Event{Event::RX, d.rank, o.peer, o.kind, o.bytes, o.start_ps, t_ps_, (int)m.rx_ack_status});
        d.rx_log.pop_front();
    }
    if (m.irq && !d.irq_prev)
        obs_(obs_ud_, Event{Event::IRQ, d.rank, -1, 0, 0, t_ps_, t_ps_, 0});
    d.irq_prev = m.irq;
    if (m.busy && !d.busy_prev)
        d.busy_since = t_ps_ - period_ps_;
    else if (!m.busy && d.busy_prev)
        obs_(obs_ud_, Event{Event::BUSY, d.rank, -1, 0, 0, d.busy_since, t_ps_ - period_ps_, 0});
    d.busy_prev = m.busy;
}

void RtlDomain::deliver_ack(int sender, int status)
{
    if (has(sender))
        dev(sender).acks.push_back(status);
}

void RtlDomain::flush_tx(Dev &d, bool last)
{
    if (d.tx_dst < 0) { // no such RTL peer: the transfer is swallowed and fails (the harness's rule)
        if (last) {
            d.tx_open = false;
            d.acks.push_back(k_rx_bad);
        }
        d.tx_buf.clear();
        return;
    }
    Chunk *c = new Chunk;
    c->src = d.rank;
    c->dst = d.tx_dst;
    c->seq = d.seq_out[(size_t)d.tx_dst]++;
    c->first = !d.tx_hdr_sent;
    c->last = last;
    c->kind = d.tx_kind;
    c->dtype = d.tx_dtype;
    c->op = d.tx_op;
    c->notify = d.tx_notify;
    c->addr = d.tx_addr;
    c->bytes = d.tx_bytes;
    c->data.swap(d.tx_buf);
    d.tx_hdr_sent = true;
    if (last)
        d.tx_open = false;
    Flow &f = flow(c->src, c->dst);
    uint64_t start = t_ps_ > f.next_free ? t_ps_ : f.next_free;
    uint64_t n = c->data.size(), wire = n + (n + f.packet - 1) / f.packet * f.header;
    f.next_free = start + (uint64_t)((double)wire * f.ps_per_byte + 0.5);
    sched_.at(start, ev_send, this, (uint64_t)(uintptr_t)c);
}

RtlDomain::Flow &RtlDomain::flow(int src, int dst)
{
    if (flows_.empty())
        flows_.resize((size_t)nranks_ * (size_t)nranks_);
    Flow &f = flows_[(size_t)src * (size_t)nranks_ + (size_t)dst];
    if (!f.init) {
        f.init = true;
        const auto &chs = net_.topology().channels();
        double bw = 0;
        for (int ch : net_.topology().route(src, dst)) {
            const rs_link_params &p = chs[(size_t)ch].params;
            if (f.packet == 0) { // chunks are the first channel's packets
                f.packet = p.packet_bytes ? p.packet_bytes : 4096;
                f.header = p.header_bytes;
            }
            bw = bw == 0 || p.bandwidth < bw ? p.bandwidth : bw;
        }
        if (f.packet == 0)
            f.packet = 4096;
        f.ps_per_byte = bw > 0 ? 1e12 / bw : 0;
    }
    return f;
}

void RtlDomain::ev_send(void *self, uint64_t chunk)
{
    RtlDomain *d = static_cast<RtlDomain *>(self);
    Chunk *c = reinterpret_cast<Chunk *>((uintptr_t)chunk);
    d->net_.transfer(c->src, c->dst, c->data.size(), ev_arrive, d, chunk);
}

void RtlDomain::ev_arrive(void *self, uint64_t chunk)
{
    RtlDomain *d = static_cast<RtlDomain *>(self);
    d->sync();
    Chunk *c = reinterpret_cast<Chunk *>((uintptr_t)chunk);
    if (d->net_.delivery_damaged() && !c->data.empty()) // a corrupt fault without crc: as Npu::apply
        c->data[0] ^= 0x5A;
    if (d->has(c->dst))
        d->accept(c);
    else
        d->accept_ext(c);
    d->ensure_running();
}

// A chunk reached its destination: in order per sender (a later one that overtook an earlier
// one in the Network waits for it), appended to that sender's open transfer.
void RtlDomain::accept(Chunk *c)
{
    Dev &d = dev(c->dst);
    const int src = c->src;
    uint64_t &next = d.seq_in[(size_t)src];
    if (c->seq != next) {
        d.early[{src, c->seq}] = c;
        return;
    }
    while (c) {
        next++;
        if (c->first) {
            RxXfer *x = new RxXfer;
            x->src = src;
            x->kind = c->kind;
            x->dtype = c->dtype;
            x->op = c->op;
            x->notify = c->notify;
            x->addr = c->addr;
            x->bytes = c->bytes;
            d.rx_of[src] = x;
            d.rx.push_back(x);
        }
        auto it = d.rx_of.find(src);
        if (it != d.rx_of.end()) {
            it->second->data.insert(it->second->data.end(), c->data.begin(), c->data.end());
            it->second->complete = c->last;
        }
        delete c;
        c = nullptr;
        auto e = d.early.find({src, next});
        if (e != d.early.end()) {
            c = e->second;
            d.early.erase(e);
        }
    }
}

// ---- mixed fidelity: transfers between RTL devices and SystemC NPUs ---------------------

// Device address -> (buffer, offset) through the layout every RTL rank uses.
bool RtlDomain::device_ref(uint64_t addr, uint64_t bytes, ncl_ref *ref) const
{
    struct R {
        uint64_t at, size;
        uint32_t buf;
    } const rs[] = {{lay_.recv, lay_.buf_bytes, NCL_BUF_RECV}, {lay_.send, lay_.buf_bytes, NCL_BUF_SEND},
                    {lay_.scratch, lay_.scratch_bytes, NCL_BUF_SCRATCH}};
    for (const R &r : rs)
        if (addr >= r.at && addr - r.at <= r.size && bytes <= r.size - (addr - r.at)) {
            *ref = ncl_ref{r.buf, addr - r.at};
            return true;
        }
    return false;
}

// An RTL device's transfer to a SystemC rank: gathered chunk by chunk (in order), applied to
// the Npu when complete as a peer Npu's WRITE / WRITE_REDUCE / NOTIFY_RECORD, then acked.
void RtlDomain::accept_ext(Chunk *c)
{
    ExtRx &x = ext_[{c->src, c->dst}];
    if (c->seq != x.next) {
        x.early[c->seq] = c;
        return;
    }
    while (c) {
        x.next++;
        if (c->first) {
            x.open = true;
            x.kind = c->kind;
            x.dtype = c->dtype;
            x.op = c->op;
            x.notify = c->notify;
            x.addr = c->addr;
            x.bytes = c->bytes;
            x.data.clear();
        }
        x.data.insert(x.data.end(), c->data.begin(), c->data.end());
        int src = c->src, dst = c->dst;
        bool last = c->last;
        delete c;
        c = nullptr;
        if (last && x.open) {
            x.open = false;
            apply_ext(src, dst, x);
        }
        auto e = x.early.find(x.next);
        if (e != x.early.end()) {
            c = e->second;
            x.early.erase(e);
        }
    }
}

void RtlDomain::apply_ext(int src, int dst, ExtRx &x)
{
    Npu *n = (*npus_)[(size_t)dst];
    int status = 0;
    if (x.kind == 3) { // NOTIFY: the counter index names (sender distance, id) at the receiver
        uint32_t dist = x.notify / ipp_, id = x.notify % ipp_;
        if ((uint32_t)(((src - dst) % nranks_ + nranks_) % nranks_) != dist)
            status = 2;
        else
            n->deliver_external(src, NCL_TASK_NOTIFY_RECORD, ncl_ref{}, nullptr, 0, 0, 0, id);
    } else {
        ncl_ref ref;
        uint32_t kind = x.kind == 2 ? NCL_TASK_WRITE_REDUCE : NCL_TASK_WRITE;
        if (!device_ref(x.addr, x.bytes, &ref) ||
            !n->deliver_external(src, kind, ref, x.data.data(), x.bytes, x.dtype, x.op, 0))
            status = 1;
    }
    deliver_ack(src, status);
}

// The proxy heard from a SystemC rank (a record; writes have landed in the block's memory
// already): its counters become NOTIFY transfers into the block's RX port, as if that rank's
// own link had carried them.
void RtlDomain::proxy_wake(void *self, int rank)
{
    RtlDomain *d = static_cast<RtlDomain *>(self);
    d->sync();
    d->drain_proxy(rank);
    d->ensure_running();
}

void RtlDomain::drain_proxy(int rank)
{
    Dev &d = dev(rank);
    if (!d.proxy)
        return;
    for (int s = 0; s < nranks_; s++) {
        if (has(s) || s == rank)
            continue;
        uint32_t dist = (uint32_t)(((s - rank) % nranks_ + nranks_) % nranks_);
        for (uint32_t id = 0; id < ipp_; id++)
            for (;;) {
                int done = 0;
                Npu::ops.notify_try_wait(d.proxy, s, id, 1, &done);
                if (!done)
                    break;
                RxXfer *x = new RxXfer;
                x->src = s;
                x->kind = 3;
                x->dtype = x->op = 0;
                x->notify = dist * ipp_ + id;
                x->addr = 0;
                x->bytes = 0;
                x->complete = true;
                d.rx.push_back(x); // not in rx_of: nothing more arrives for it
            }
    }
}

// ---- the mmio backend's access functions ---------------------------------------------------

uint32_t RtlDomain::reg_access(int rank, bool write, uint32_t addr, uint32_t wdata)
{
    sync();
    Dev &d = dev(rank);
    d.req = true;
    d.req_write = write;
    d.req_addr = addr;
    d.req_wdata = wdata;
    d.settle = 4; // a doorbell or a soft reset shows in BUSY a cycle or two later
    tick();
    uint32_t v = d.pins->rsp_rdata;
    ensure_running();
    return v;
}

uint32_t RtlDomain::acc_rd(void *ctx, uint32_t off)
{
    Port *p = static_cast<Port *>(ctx);
    return p->d->reg_access(p->rank, false, off, 0);
}

void RtlDomain::acc_wr(void *ctx, uint32_t off, uint32_t v)
{
    Port *p = static_cast<Port *>(ctx);
    p->d->reg_access(p->rank, true, off, v);
}

int RtlDomain::acc_mem_write(void *ctx, uint64_t a, const void *src, uint64_t n)
{
    Port *p = static_cast<Port *>(ctx);
    if (a > p->d->lay_.mem_bytes || n > p->d->lay_.mem_bytes - a)
        return 1;
    std::memcpy(p->d->dev(p->rank).mem + a, src, n);
    return 0;
}

int RtlDomain::acc_mem_read(void *ctx, uint64_t a, void *dst, uint64_t n)
{
    Port *p = static_cast<Port *>(ctx);
    if (a > p->d->lay_.mem_bytes || n > p->d->lay_.mem_bytes - a)
        return 1;
    std::memcpy(dst, p->d->dev(p->rank).mem + a, n);
    return 0;
}

// Only a full ring waits inside the backend (the engine itself never blocks here): clock the
// domain synchronously until this rank's irq, a quiet domain, or the timeout.
int RtlDomain::acc_wait_irq(void *ctx, uint64_t timeout_ns)
{
    Port *p = static_cast<Port *>(ctx);
    return p->d->advance_for(p->rank, timeout_ns * 1000 / p->d->period_ps_ + 1, true);
}

int RtlDomain::advance_for(int rank, uint64_t cycles, bool until_irq)
{
    sync();
    Dev &d = dev(rank);
    for (uint64_t c = 0; c < cycles; c++) {
        if (until_irq && d.pins->irq)
            break;
        // nothing can happen (quiet), or nothing will before the network acts, which it cannot
        // while this call holds the simulation: let the time pass
        if (quiet() || stalled()) {
            t_ps_ += (cycles - c) * period_ps_;
            break;
        }
        tick();
    }
    ensure_running();
    return d.pins->irq;
}

uint64_t RtlDomain::acc_now(void *ctx)
{
    Port *p = static_cast<Port *>(ctx);
    uint64_t now = p->d->sched_.now();
    return (p->d->t_ps_ > now ? p->d->t_ps_ : now) / 1000u;
}

} // namespace model
