// link.cpp — unidirectional channel: processor-sharing flows (message fidelity) and credit-based
// packet serialisation (packet fidelity), faults and statistics.
#include "model/link.hpp"

#include <algorithm>
#include <cmath>

#include "model/network.hpp"
#include "model/rs_defaults.h"

namespace model {

namespace {

const ParamInfo k_params[] = {
    {"bandwidth", "B/s", RS_DEFAULT_LINK_BANDWIDTH, "bytes per second on the wire, headers included"},
    {"latency", "s", RS_DEFAULT_LINK_LATENCY, "first bit out to first bit in; also the credit-return delay"},
    {"packet", "B", RS_DEFAULT_LINK_PACKET, "payload bytes per packet (the last packet of a message may be short)"},
    {"header", "B", RS_DEFAULT_LINK_HEADER, "header bytes added to every packet: wire = payload + ceil(payload/packet)*header"},
    {"buffer", "B", RS_DEFAULT_LINK_BUFFER,
     "receiver buffer = credits; must hold one packet + header; a channel runs at most "
     "buffer / (2 * latency + a packet's time) (both fidelities), so full bandwidth needs buffer "
     ">= bandwidth * (2 * latency) + packet (the default holds 30 GB/s x 3 us + 4 KiB 2.7 times)"},
    {"duplex_bandwidth", "B/s", "none",
     "both directions of a link pair together while both send (a host bridge both cross; below the "
     "bandwidth: reads and writes that interfere, as host-staged copies do): each gets what the other "
     "leaves, at least half (packet fidelity: as a packet starts); one alone runs at its bandwidth"},
};
const PortInfo k_ports[] = {
    {"tx", "sender end: an NPU (injection, or transit on ring/torus) or a switch output port"},
    {"rx", "receiver end: an NPU or a switch input port"},
};
const StatInfo k_stats[] = {
    {"bytes", "B", "payload bytes carried"},
    {"wire_bytes", "B", "payload + header bytes carried"},
    {"packets", "-", "packets carried (message fidelity: counted per transfer)"},
    {"busy", "s", "time with data on the wire; utilisation = busy / simulated time"},
    {"peak_queue", "-",
     "message: peak concurrent transfers sharing the channel; packet: peak packets + injecting "
     "messages waiting at the sender"},
    {"peak_queue_bytes", "B", "packet: peak bytes in the sender-side output queue"},
    {"credit_stalls", "-", "packet: times a ready packet waited for receiver credits"},
    {"up", "-", "0 once a fault took the channel down"},
    {"corrupt_counted", "-", "messages (packet fidelity: packets) counted since a corrupt fault began"},
    {"damaged", "-", "of them, damaged: replayed by the link layer (crc) or delivered wrong (crc: false)"},
    {"replay", "s", "wire time of the replays (crc); part of busy"},
};

} // namespace

const ComponentInfo &Link::info()
{
    static const ComponentInfo ci = MODEL_COMPONENT(
        "link",
        "unidirectional channel (a full-duplex link is two); fidelity message (one event per "
        "transfer, fair bandwidth sharing) or packet (every packet, credits, back-pressure)",
        k_params, k_ports, k_stats);
    return ci;
}

rs_link_params Link::defaults()
{
    rs_link_params p{};
    p.bandwidth = RS_DEFAULT_LINK_BANDWIDTH_BPS;
    p.latency = RS_DEFAULT_LINK_LATENCY_S;
    p.packet_bytes = RS_DEFAULT_LINK_PACKET_BYTES;
    p.header_bytes = RS_DEFAULT_LINK_HEADER_BYTES;
    p.buffer_bytes = RS_DEFAULT_LINK_BUFFER_BYTES;
    p.duplex_bandwidth = -1;
    return p;
}

rs_link_params Link::nic_defaults()
{
    rs_link_params p{};
    p.bandwidth = RS_DEFAULT_NIC_BANDWIDTH_BPS;
    p.latency = RS_DEFAULT_NIC_LATENCY_S;
    p.packet_bytes = RS_DEFAULT_NIC_PACKET_BYTES;
    p.header_bytes = RS_DEFAULT_NIC_HEADER_BYTES;
    p.buffer_bytes = RS_DEFAULT_NIC_BUFFER_BYTES;
    p.duplex_bandwidth = -1;
    return p;
}

Link::Link(Network &net, Scheduler &sched, int id, int from, int to, const rs_link_params &p,
           uint32_t out_buffer)
    : net_(net), s_(sched), id_(id), from_(from), to_(to), p_(p),
      lat_ps_(Scheduler::to_ps(p.latency)), rate_(link_rate(p)), out_cap_(out_buffer),
      credits_(p.buffer_bytes)
{
}

double link_rate(const rs_link_params &p)
{
    uint64_t pkt = (uint64_t)p.packet_bytes + p.header_bytes;
    uint64_t window = std::max<uint64_t>(1, p.buffer_bytes / pkt) * pkt; // whole packets fit
    return std::min(p.bandwidth, (double)window / ((double)pkt / p.bandwidth + 2 * p.latency));
}

uint64_t Link::wire_bytes(uint64_t payload) const
{
    uint64_t pk = (payload + p_.packet_bytes - 1) / p_.packet_bytes;
    return payload + pk * p_.header_bytes;
}

uint64_t Link::queued() const
{
    if (net_.fidelity() == RS_FIDELITY_MESSAGE) // (a solo flow past its end has left)
        return flows_.size() - (solo_ && s_.now() >= solo_end_ ? 1 : 0);
    return outq_.size() + waiters_.size() + inject_.size() + (busy_ ? 1 : 0);
}

LinkStats Link::stats_now()
{
    uint64_t now = s_.now();
    if (net_.fidelity() == RS_FIDELITY_MESSAGE) {
        if (solo_) {
            solo_settle(now);
            if (!flows_.empty()) // still serialising: the event ps_reschedule would have set
                s_.at(solo_end_, &Link::ps_event, this, gen_);
        }
        ps_advance(now);
        return st_;
    }
    LinkStats s = st_;
    if (busy_)
        s.busy_s += Scheduler::to_s(now - cur_start_);
    return s;
}

// ---------------------------------------------------------------- message fidelity

bool Link::sending() const
{
    return net_.fidelity() == RS_FIDELITY_MESSAGE ? up_ && !flows_.empty() : busy_;
}

// Max-min fair between the two directions: while the reverse one sends, this one gets what the
// reverse leaves of the duplex limit, and at least half of it. Alone, a direction runs at its own
// rate: a limit below it (host-staged copies, whose reads and writes interfere) binds only while
// both directions send.
// Message fidelity starts from rate_ (the credit window's cap included); packet fidelity from the
// bandwidth (its credits are modelled packet by packet).
double Link::share_rate() const
{
    bool message = net_.fidelity() == RS_FIDELITY_MESSAGE;
    double own = message ? rate_ : p_.bandwidth, duplex = p_.duplex_bandwidth;
    if (!reverse_ || duplex <= 0)
        return own;
    if (!reverse_->sending())
        return own;
    double rev = message ? reverse_->rate_ : reverse_->p_.bandwidth;
    return std::min(own, duplex - std::min(rev, duplex / 2));
}

void Link::reverse_before(uint64_t now)
{
    if (reverse_ && net_.fidelity() == RS_FIDELITY_MESSAGE)
        reverse_->ps_advance(now);
}

void Link::reverse_after(uint64_t now)
{
    if (reverse_ && net_.fidelity() == RS_FIDELITY_MESSAGE)
        reverse_->ps_reschedule(now);
}

void Link::ps_advance(uint64_t now)
{
    if (!flows_.empty() && up_ && now > last_ps_) {
        double dt = Scheduler::to_s(now - last_ps_);
        vtime_ += dt * share_rate() / (double)flows_.size();
        st_.busy_s += dt;
    }
    last_ps_ = now;
}

void Link::ps_reschedule(uint64_t now)
{
    gen_++; // any completion event already scheduled is now stale
    if (flows_.empty() || !up_)
        return;
    double rem = std::max(0.0, flows_.front().finish - vtime_);
    double dt = rem * (double)flows_.size() / share_rate();
    s_.at(now + Scheduler::to_ps(dt), &Link::ps_event, this, gen_);
}

void Link::solo_settle(uint64_t now)
{
    solo_ = false;
    if (now < solo_end_) { // still serialising: from now on the usual way (every caller but
        net_.solo_cancel(solo_msg_); // stats_now reschedules at once, making an event stale)
        return;
    }
    // What ps_event did at solo_end_ (its hop_done is the delivery already scheduled)
    ps_advance(solo_end_);
    vtime_ = std::max(vtime_, flows_.front().finish);
    flows_.pop_back();
    gen_++;
}

void Link::flow_start(uint32_t msg, uint32_t hop, uint64_t payload, bool solo_ok)
{
    uint64_t now = s_.now();
    if (solo_)
        solo_settle(now);
    ps_advance(now);
    bool was_idle = flows_.empty();
    if (was_idle) {
        vtime_ = 0; // keep the tags small so their differences stay exact
        reverse_before(now);
    }
    uint64_t wire = wire_bytes(payload);
    st_.bytes += payload;
    st_.wire_bytes += wire;
    st_.packets += (payload + p_.packet_bytes - 1) / p_.packet_bytes;
    st_.transfers++;
    double size = (double)wire;
    if (corrupt_.every) // the one test a healthy channel pays
        size = damage_flow(msg, size);
    flows_.push_back(Flow{vtime_ + size, fseq_++, msg, hop});
    std::push_heap(flows_.begin(), flows_.end(), FlowLater());
    st_.peak_queue = std::max<uint64_t>(st_.peak_queue, flows_.size());
    if (solo_ok && was_idle && up_ && !reverse_ && !corrupt_.every) {
        // ps_reschedule's event time, but the delivery is scheduled instead of the event
        gen_++;
        solo_ = true;
        solo_msg_ = msg;
        solo_end_ = now + Scheduler::to_ps(size / share_rate());
        net_.solo_started(msg, solo_end_);
        return;
    }
    ps_reschedule(now);
    if (was_idle)
        reverse_after(now);
}

void Link::ps_event(void *self, uint64_t gen)
{
    Link &l = *static_cast<Link *>(self);
    if (gen != l.gen_)
        return;
    uint64_t now = l.s_.now();
    l.ps_advance(now);
    // The event was scheduled for the head flow; rounding to ps may leave a sliver of its bytes.
    l.vtime_ = std::max(l.vtime_, l.flows_.front().finish);
    double eps = 1e-9 * l.vtime_ + 1e-6;
    l.reverse_before(now); // this channel may fall idle
    Flow done[8];
    int nd = 0;
    std::vector<Flow> more;
    while (!l.flows_.empty() && l.flows_.front().finish <= l.vtime_ + eps) {
        std::pop_heap(l.flows_.begin(), l.flows_.end(), FlowLater());
        if (nd < 8)
            done[nd++] = l.flows_.back();
        else
            more.push_back(l.flows_.back());
        l.flows_.pop_back();
    }
    l.ps_reschedule(now);
    l.reverse_after(now);
    for (int i = 0; i < nd; i++)
        l.net_.hop_done(done[i].msg, done[i].hop);
    for (const Flow &f : more)
        l.net_.hop_done(f.msg, f.hop);
}

// ---------------------------------------------------------------- packet fidelity

void Link::inject(uint32_t msg)
{
    st_.transfers++;
    inject_.push_back(msg);
    st_.peak_queue = std::max(st_.peak_queue, queued());
    try_send();
}

void Link::forward(uint32_t pkt, Link &in_link)
{
    uint32_t wire = net_.pkts_[pkt].payload + p_.header_bytes;
    // FIFO behind earlier waiters; an empty queue always takes one packet so a buffer smaller
    // than a packet slows the port instead of stalling it forever.
    if (waiters_.empty() && (out_cap_ == 0 || outq_bytes_ == 0 || outq_bytes_ + wire <= out_cap_))
        admit(pkt, in_link);
    else
        waiters_.emplace_back(pkt, &in_link);
    st_.peak_queue = std::max(st_.peak_queue, queued());
}

void Link::admit(uint32_t pkt, Link &in_link)
{
    uint32_t payload = net_.pkts_[pkt].payload;
    outq_.push_back(pkt);
    outq_bytes_ += payload + p_.header_bytes;
    st_.peak_queue_bytes = std::max(st_.peak_queue_bytes, outq_bytes_);
    // The packet left the input buffer: its credits travel back over the input link.
    s_.after(in_link.lat_ps_, &Link::credit_back, &in_link, payload + in_link.p_.header_bytes);
    try_send();
}

void Link::credit_back(void *self, uint64_t bytes)
{
    Link &l = *static_cast<Link *>(self);
    l.credits_ += (int64_t)bytes;
    l.try_send();
}

void Link::try_send()
{
    if (busy_ || !up_)
        return;
    bool fwd;
    if (!outq_.empty() && !inject_.empty())
        fwd = prefer_fwd_; // alternate between transit traffic and our own
    else if (!outq_.empty())
        fwd = true;
    else if (!inject_.empty())
        fwd = false;
    else
        return;
    uint32_t payload;
    if (fwd)
        payload = net_.pkts_[outq_.front()].payload;
    else
        payload = (uint32_t)std::min<uint64_t>(p_.packet_bytes,
                                               net_.msgs_[inject_.front()].inject_left);
    uint32_t wire = payload + p_.header_bytes;
    if (credits_ < (int64_t)wire) {
        st_.credit_stalls++;
        return; // credit_back() retries
    }
    credits_ -= wire;
    uint32_t pkt;
    if (fwd) {
        pkt = outq_.front();
        outq_.pop_front();
    } else {
        uint32_t m = inject_.front();
        inject_.pop_front();
        net_.msgs_[m].inject_left -= payload;
        cur_msg_ = m;
        pkt = net_.new_packet(m, payload);
        if (net_.msgs_[m].inject_left == 0) // its last packet goes on the wire now
            net_.sent(m);
    }
    prefer_fwd_ = !fwd;
    busy_ = true;
    cur_fwd_ = fwd;
    cur_wire_ = wire;
    cur_start_ = s_.now();
    st_.bytes += payload;
    st_.wire_bytes += wire;
    st_.packets++;
    // a packet keeps the share of the duplex limit it started with (the reverse direction's
    // packets start and end between ours: an approximation message fidelity does not need)
    uint64_t dur = Scheduler::to_ps((double)wire / share_rate());
    if (corrupt_.every) { // the one test a healthy channel pays
        send_corrupting(pkt, dur);
        return;
    }
    s_.after(dur, &Link::tx_done, this, pkt);
    net_.packet_sent(pkt, *this, dur, 0);
}

void Link::tx_done(void *self, uint64_t pkt)
{
    Link &l = *static_cast<Link *>(self);
    uint64_t now = l.s_.now();
    l.busy_ = false;
    l.st_.busy_s += Scheduler::to_s(now - l.cur_start_);
    if (l.cur_fwd_) {
        l.outq_bytes_ -= l.cur_wire_;
        while (!l.waiters_.empty()) {
            auto w = l.waiters_.front();
            uint32_t wire = l.net_.pkts_[w.first].payload + l.p_.header_bytes;
            if (l.out_cap_ != 0 && l.outq_bytes_ != 0 && l.outq_bytes_ + wire > l.out_cap_)
                break;
            l.waiters_.pop_front();
            l.admit(w.first, *w.second);
        }
    }
    // Round robin among the messages injecting here: the one just sent goes behind every message
    // that asked meanwhile (the arbiter's pointer moves past the last grant), so a newcomer is
    // never made to wait an extra packet behind the incumbent.
    if (!l.cur_fwd_ && l.net_.msgs_[l.cur_msg_].inject_left > 0)
        l.inject_.push_back(l.cur_msg_);
    (void)pkt;
    l.try_send();
}

// ---------------------------------------------------------------- faults

void Link::set_down()
{
    uint64_t now = s_.now();
    if (solo_)
        solo_settle(now);
    ps_advance(now);
    reverse_before(now);
    up_ = false;
    gen_++; // frozen flows never complete
    reverse_after(now);
}

void Link::degrade(double bandwidth, double latency)
{
    uint64_t now = s_.now();
    if (solo_)
        solo_settle(now);
    ps_advance(now);
    reverse_before(now);
    if (bandwidth > 0)
        p_.bandwidth = bandwidth;
    if (latency >= 0) {
        p_.latency = latency;
        lat_ps_ = Scheduler::to_ps(latency);
    }
    rate_ = link_rate(p_);
    if (net_.fidelity() == RS_FIDELITY_MESSAGE)
        ps_reschedule(now);
    reverse_after(now);
}

void Link::corrupt(uint32_t every, bool crc)
{
    corrupt_ = LinkCorruption{every, crc};
    since_damage_ = 0;
}

// Counts a message (packet) starting across a corrupting channel; every `every`-th is damaged.
Link::Damage Link::next_damage(bool has_payload)
{
    if (!has_payload && !corrupt_.crc)
        return Damage::none; // unprotected control messages are not modelled: not counted either
    st_.corrupt_counted++;
    if (++since_damage_ < corrupt_.every)
        return Damage::none;
    since_damage_ = 0;
    st_.damaged++;
    return corrupt_.crc ? Damage::replay : Damage::silent;
}

// Message fidelity: a replayed flow serialises twice (its bytes stay on the channel's fair share,
// so the traffic beside and behind it waits) and lands a latency later; a silently damaged one
// marks its message. Returns the bytes the flow serialises.
double Link::damage_flow(uint32_t msg, double wire)
{
    switch (next_damage(true)) {
    case Damage::replay:
        st_.replay_s += wire / rate_;
        net_.msgs_[msg].replay_ps += lat_ps_;
        return 2 * wire;
    case Damage::silent:
        net_.msgs_[msg].damaged = true;
        break;
    case Damage::none:
        break;
    }
    return wire;
}

// Packet fidelity, the packet now on the wire of a corrupting channel: a replayed one keeps the
// wire for its serialisation again and lands that and a latency later; a silently damaged one
// marks its message.
void Link::send_corrupting(uint32_t pkt, uint64_t tx_ps)
{
    uint64_t busy = tx_ps, late = 0;
    switch (next_damage(true)) {
    case Damage::replay:
        st_.replay_s += Scheduler::to_s(tx_ps);
        busy += tx_ps;
        late = tx_ps + lat_ps_;
        break;
    case Damage::silent:
        net_.msgs_[net_.pkts_[pkt].msg].damaged = true;
        break;
    case Damage::none:
        break;
    }
    s_.after(busy, &Link::tx_done, this, pkt);
    net_.packet_sent(pkt, *this, tx_ps, late);
}

} // namespace model
