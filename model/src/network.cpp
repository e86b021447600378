// network.cpp — the network facade: builds links and switches, runs messages at message or packet
// fidelity along computed routes, applies faults, reports statistics.
#include "model/network.hpp"

#include <algorithm>
#include <unordered_map>

#include "model/rs_defaults.h"

namespace model {

namespace {
const ParamInfo k_params[] = {
    {"fidelity", "-", RS_DEFAULT_NETWORK_FIDELITY,
     "message: one event per transfer and hop, fair bandwidth sharing (processor sharing) on "
     "each channel, cut-through across hops; packet: every packet serialised with credits and "
     "back-pressure, virtual cut-through at switches and transit NPUs"},
};
const PortInfo k_ports[] = {
    {"rank[0..p-1]", "transfer(src, dst, bytes, on_delivered) endpoints: the NPU devices"},
};
const StatInfo k_stats[] = {
    {"transfers", "-", "transfers started and delivered"},
    {"events", "-", "scheduler callbacks processed (shared with the devices)"},
};
} // namespace

const ComponentInfo &Network::info()
{
    static const ComponentInfo ci = MODEL_COMPONENT(
        "network", "moves messages between ranks along computed routes; faults; statistics",
        k_params, k_ports, k_stats);
    return ci;
}

Network::Network(const rs_topology_spec &spec, rs_fidelity fidelity, Scheduler *sched)
    : topo_(spec), fid_(fidelity), sched_(sched)
{
    if (fid_ != RS_FIDELITY_MESSAGE && fid_ != RS_FIDELITY_PACKET)
        throw ConfigError("network: unknown fidelity " + std::to_string((int)fid_));
    if (!sched_) {
        own_sched_ = std::make_unique<Scheduler>(sc_core::sc_gen_unique_name("net_sched"));
        sched_ = own_sched_.get();
    }
    fwd_ps_ = Scheduler::to_ps(topo_.forward_latency());
    const rs_switch_params swp = topo_.switch_params();
    for (const TopoChannel &c : topo_.channels()) {
        has_nics_ = has_nics_ || c.nic;
        if (fid_ == RS_FIDELITY_PACKET &&
            (uint64_t)c.params.buffer_bytes < (uint64_t)c.params.packet_bytes + c.params.header_bytes)
            throw ConfigError("channel " + topo_.channel_name(c.id) + ": buffer (" +
                              std::to_string(c.params.buffer_bytes) +
                              " B) must hold one packet + header (" +
                              std::to_string(c.params.packet_bytes + c.params.header_bytes) +
                              " B) for packet fidelity");
        uint32_t cap = topo_.nodes()[c.from].is_switch ? swp.buffer_bytes : 0;
        links_.push_back(std::make_unique<Link>(*this, *sched_, c.id, c.from, c.to, c.params, cap));
    }
    couple_duplex_pairs();
    // A duplex limit makes a channel's rate depend on the reverse one's flows: no solo flows then.
    solo_ok_ = fid_ == RS_FIDELITY_MESSAGE &&
               std::none_of(links_.begin(), links_.end(), [](auto &l) { return l->params().duplex_bandwidth > 0; });
    route_cache_.resize(topo_.nranks());
    switch_of_node_.assign(topo_.nnodes(), -1);
    for (const TopoNode &n : topo_.nodes())
        if (n.is_switch) {
            switch_of_node_[n.id] = (int)switches_.size();
            switches_.emplace_back(n.id, n.name, swp, n.in, n.out);
        }
}

// A duplex limit couples a channel with its opposite one.
void Network::couple_duplex_pairs()
{
    if (std::none_of(links_.begin(), links_.end(), [](auto &l) { return l->params().duplex_bandwidth > 0; }))
        return;
    std::unordered_map<uint64_t, Link *> by_ends;
    auto ends = [](int from, int to) { return (uint64_t)(uint32_t)from << 32 | (uint32_t)to; };
    for (auto &l : links_)
        by_ends.emplace(ends(l->from(), l->to()), l.get());
    for (auto &l : links_) {
        auto r = by_ends.find(ends(l->to(), l->from()));
        if (l->params().duplex_bandwidth > 0 && r != by_ends.end())
            l->set_reverse(r->second);
    }
}

Network::~Network() = default;

uint32_t Network::route_of(int src, int dst)
{
    RouteCache &c = route_cache_[src];
    if (c.dst[0] == dst)
        return c.route[0];
    uint32_t r;
    if (c.dst[1] == dst)
        r = c.route[1];
    else
        r = route_lookup(src, dst);
    c.dst[1] = c.dst[0];
    c.route[1] = c.route[0];
    c.dst[0] = dst;
    c.route[0] = r;
    return r;
}

uint32_t Network::route_lookup(int src, int dst)
{
    uint64_t key = (uint64_t)src * (uint64_t)topo_.nnodes() + (uint64_t)dst;
    auto it = route_idx_.find(key);
    if (it != route_idx_.end())
        return it->second;
    uint32_t idx = (uint32_t)routes_.size();
    routes_.push_back(topo_.route(src, dst));
    route_idx_.emplace(key, idx);
    return idx;
}

uint32_t Network::new_msg()
{
    if (!free_msgs_.empty()) {
        uint32_t m = free_msgs_.back();
        free_msgs_.pop_back();
        return m;
    }
    msgs_.emplace_back();
    return (uint32_t)(msgs_.size() - 1);
}

uint32_t Network::new_packet(uint32_t msg, uint32_t payload)
{
    uint32_t p;
    if (!free_pkts_.empty()) {
        p = free_pkts_.back();
        free_pkts_.pop_back();
    } else {
        pkts_.emplace_back();
        p = (uint32_t)(pkts_.size() - 1);
    }
    pkts_[p] = Packet{msg, payload, 0};
    return p;
}

void Network::transfer(int src, int dst, uint64_t bytes, std::function<void()> on_delivered)
{
    uint32_t m = new_msg();
    msgs_[m].fn = nullptr;
    msgs_[m].sent = nullptr;
    msgs_[m].cb = std::move(on_delivered);
    launch(m, src, dst, bytes);
}

void Network::transfer(int src, int dst, uint64_t bytes, Scheduler::Fn fn, void *obj, uint64_t arg)
{
    transfer(src, dst, bytes, fn, obj, arg, nullptr);
}

void Network::transfer(int src, int dst, uint64_t bytes, Scheduler::Fn fn, void *obj, uint64_t arg, Scheduler::Fn sent)
{
    transfer_sent(src, dst, bytes, fn, obj, arg, sent);
}

uint32_t Network::transfer_sent(int src, int dst, uint64_t bytes, Scheduler::Fn fn, void *obj, uint64_t arg,
                                Scheduler::Fn sent)
{
    uint32_t m = new_msg();
    msgs_[m].fn = fn;
    msgs_[m].sent = sent;
    msgs_[m].obj = obj;
    msgs_[m].arg = arg;
    launch(m, src, dst, bytes);
    return m;
}

bool Network::left(uint32_t m)
{
    Msg &msg = msgs_[m];
    if (!msg.solo || sched_->now() < msg.solo_end)
        return false;
    msg.sent = nullptr;
    return true;
}

void Network::want_sent(uint32_t m)
{
    Msg &msg = msgs_[m];
    if (!msg.solo || !msg.sent || msg.sent_ev)
        return;
    msg.sent_ev = true;
    sched_->at(msg.solo_end, &Network::solo_sent_ev, this, (uint64_t)msg.gen << 32 | m);
}

// A solo flow's last byte has left, and its source waits for that.
void Network::solo_sent_ev(void *self, uint64_t arg)
{
    Network &n = *static_cast<Network *>(self);
    uint32_t m = (uint32_t)arg;
    if (n.msgs_[m].gen == (uint32_t)(arg >> 32) && n.msgs_[m].solo)
        n.sent(m);
}

// Link::flow_start found the message's one hop free: its last byte leaves at end_ps, and it is
// delivered a latency later, as hop_done would have scheduled it then.
void Network::solo_started(uint32_t m, uint64_t end_ps)
{
    Msg &msg = msgs_[m];
    msg.solo = true;
    msg.solo_end = end_ps;
    sched_->at(end_ps + links_[routes_[msg.route][0]]->latency_ps(), &Network::solo_deliver_ev, this,
               (uint64_t)msg.gen << 32 | m);
}

void Network::solo_deliver_ev(void *self, uint64_t arg)
{
    Network &n = *static_cast<Network *>(self);
    uint32_t m = (uint32_t)arg;
    Msg &msg = n.msgs_[m];
    if (msg.gen != (uint32_t)(arg >> 32) || !msg.solo)
        return; // it came to share its channel: hop_done delivers it
    msg.solo = false;
    msg.hops_left = 0;
    n.sent(m); // (a callback nobody asked for: as hop_done runs it, before the delivery)
    n.deliver(m);
}

void Network::sent(uint32_t m)
{
    Msg &msg = msgs_[m];
    if (msg.sent) {
        Scheduler::Fn fn = msg.sent;
        msg.sent = nullptr;
        fn(msg.obj, msg.arg);
    }
}

void Network::launch(uint32_t m, int src, int dst, uint64_t bytes)
{
    int p = topo_.nranks();
    if (src < 0 || src >= p || dst < 0 || dst >= p) {
        msgs_[m].cb = nullptr;
        free_msgs_.push_back(m);
        throw ConfigError("transfer " + std::to_string(src) + "->" + std::to_string(dst) +
                          ": rank out of range (0.." + std::to_string(p - 1) + ")");
    }
    started_++;
    Msg &msg = msgs_[m];
    msg.src = src;
    msg.dst = dst;
    msg.bytes = bytes;
    msg.inject_left = bytes;
    msg.arrived = 0;
    msg.deliver_at = 0;
    msg.replay_ps = 0;
    msg.damaged = false;
    msg.solo = false;
    msg.sent_ev = false;
    msg.gen++;
    uint64_t now = sched_->now();
    msg.start_ps = now;
    if (src == dst) {
        msg.route = UINT32_MAX;
        sent(m);
        sched_->at(now, &Network::deliver_ev, this, m);
        return;
    }
    msg.route = route_of(src, dst);
    const std::vector<int> &r = routes_[msg.route];
    msg.hops_left = (uint32_t)r.size();
    if (bytes == 0) { // nothing to serialise: only the latencies
        sent(m);
        uint64_t t = now;
        for (size_t k = 0; k < r.size(); k++)
            t += links_[r[k]]->latency_ps() + (k ? fwd_ps_ : 0);
        if (corrupting_)
            t += control_replays(r);
        sched_->at(t, &Network::deliver_ev, this, m);
        return;
    }
    if (fid_ == RS_FIDELITY_PACKET) {
        links_[r[0]]->inject(m);
        return;
    }
    // Message fidelity, cut-through: hop k starts serialising when the head reaches it.
    links_[r[0]]->flow_start(m, 0, bytes, solo_ok_ && r.size() == 1);
    uint64_t t = now;
    for (size_t k = 1; k < r.size(); k++) {
        t += links_[r[k - 1]]->latency_ps() + fwd_ps_;
        sched_->at(t, &Network::hop_enter, this, ((uint64_t)m << 32) | k);
    }
}

void Network::hop_enter(void *self, uint64_t arg)
{
    Network &n = *static_cast<Network *>(self);
    uint32_t m = (uint32_t)(arg >> 32), k = (uint32_t)arg;
    const std::vector<int> &r = n.routes_[n.msgs_[m].route];
    n.links_[r[k]]->flow_start(m, k, n.msgs_[m].bytes);
}

void Network::hop_done(uint32_t m, uint32_t hop)
{
    Msg &msg = msgs_[m];
    const std::vector<int> &r = routes_[msg.route];
    if (hop == 0)
        sent(m);
    // Delivery = the latest over hops of (that hop's last byte out + latency downstream): the
    // slowest hop sets the pace, as in a cut-through pipeline.
    uint64_t t = sched_->now();
    for (size_t k = hop; k < r.size(); k++)
        t += links_[r[k]]->latency_ps() + (k > hop ? fwd_ps_ : 0);
    msg.deliver_at = std::max(msg.deliver_at, t);
    if (hop + 1 < r.size()) {
        int sw = switch_of_node_[links_[r[hop]]->to()];
        if (sw >= 0)
            switches_[sw].count_forward(msg.bytes);
    }
    if (--msg.hops_left == 0) // a hop's replay lands a latency after its second serialisation
        sched_->at(msg.deliver_at + msg.replay_ps, &Network::deliver_ev, this, m);
}

// A message without payload (a notify) across corrupting channels: each replay costs that
// channel's latency once more (such a message has no serialisation in this model).
uint64_t Network::control_replays(const std::vector<int> &route)
{
    uint64_t late = 0;
    for (int ch : route) {
        Link &l = *links_[ch];
        if (l.corruption().every && l.next_damage(false) == Link::Damage::replay)
            late += l.latency_ps();
    }
    return late;
}

void Network::deliver_ev(void *self, uint64_t m)
{
    static_cast<Network *>(self)->deliver((uint32_t)m);
}

void Network::deliver(uint32_t m)
{
    delivered_++;
    Msg &msg = msgs_[m];
    if (observer_)
        observer_(observer_ud_, msg.src, msg.dst, msg.bytes, msg.start_ps, sched_->now(),
                  msg.route == UINT32_MAX ? -1 : routes_[msg.route][0]);
    delivery_damaged_ = msg.damaged; // for the callback to ask
    if (msg.fn) {
        Scheduler::Fn fn = msg.fn;
        void *obj = msg.obj;
        uint64_t arg = msg.arg;
        free_msgs_.push_back(m); // the callback may start transfers that reuse the slot
        fn(obj, arg);
    } else {
        std::function<void()> cb = std::move(msg.cb);
        msg.cb = nullptr;
        free_msgs_.push_back(m);
        if (cb)
            cb();
    }
    delivery_damaged_ = false;
}

void Network::packet_sent(uint32_t pkt, Link &l, uint64_t tx_ps, uint64_t late_ps)
{
    // Called when the packet starts on the wire. At its destination it arrives whole:
    // start + serialisation + latency. At a switch or transit NPU it is forwarded cut-through
    // (virtual cut-through): once the header is in and the forwarding latency has passed, but
    // never so early that a faster next channel would finish before the last byte arrives.
    const Packet &pk = pkts_[pkt];
    const Msg &msg = msgs_[pk.msg];
    uint64_t now = sched_->now(), t;
    if (l.to() == msg.dst) {
        t = now + tx_ps + l.latency_ps();
    } else {
        const Link &next = *links_[routes_[msg.route][pk.hop + 1]];
        uint64_t next_ps =
            Scheduler::to_ps((double)(pk.payload + next.params().header_bytes) / next.params().bandwidth);
        t = now + l.latency_ps() + fwd_ps_ + (tx_ps > next_ps ? tx_ps - next_ps : 0);
    }
    // late_ps: a link-layer replay (corrupt fault), the packet's serialisation and latency again
    sched_->at(t + late_ps, &Network::packet_arrive, this, ((uint64_t)l.id() << 32) | pkt);
}

void Network::packet_arrive(void *self, uint64_t arg)
{
    Network &n = *static_cast<Network *>(self);
    Link &in = *n.links_[arg >> 32];
    uint32_t pkt = (uint32_t)arg;
    Packet &pk = n.pkts_[pkt];
    uint32_t m = pk.msg;
    Msg &msg = n.msgs_[m];
    if (in.to() == msg.dst) {
        // Consumed into device memory: the buffer slot frees at once.
        n.sched_->after(in.latency_ps(), &Link::credit_back, &in, pk.payload + in.params().header_bytes);
        msg.arrived += pk.payload;
        n.free_pkts_.push_back(pkt);
        if (msg.arrived == msg.bytes)
            n.deliver(m);
        return;
    }
    pk.hop++;
    int sw = n.switch_of_node_[in.to()];
    if (sw >= 0)
        n.switches_[sw].count_forward(pk.payload);
    n.links_[n.routes_[msg.route][pk.hop]]->forward(pkt, in);
}

void Network::schedule_fault(const rs_fault &f)
{
    static const char *const what[] = {"fault down", "fault degrade", "fault corrupt"};
    if ((unsigned)f.kind > RS_FAULT_CORRUPT)
        throw ConfigError("fault: unknown action " + std::to_string((int)f.kind));
    topo_.match(f.ends, what[f.kind]); // throws
    if (f.kind == RS_FAULT_DEGRADE && f.bandwidth == 0)
        throw ConfigError("fault degrade: bandwidth must be > 0 (use a down fault)");
    if (f.kind == RS_FAULT_CORRUPT && f.every == 0)
        throw ConfigError("fault corrupt: every must be at least 1 (every N-th message is damaged)");
    faults_.push_back(f);
    fault_done_.push_back(false);
    sched_->at(Scheduler::to_ps(f.at), &Network::fault_ev, this, faults_.size() - 1);
}

void Network::fault_ev(void *self, uint64_t idx)
{
    Network &n = *static_cast<Network *>(self);
    const rs_fault &f = n.faults_[idx];
    n.faults_applied_++;
    n.fault_done_[idx] = true;
    for (int ch : n.topo_.match(f.ends, "fault")) {
        switch (f.kind) {
        case RS_FAULT_DOWN: n.links_[ch]->set_down(); break;
        case RS_FAULT_DEGRADE: n.links_[ch]->degrade(f.bandwidth, f.latency); break;
        case RS_FAULT_CORRUPT:
            n.links_[ch]->corrupt(f.every, f.crc != 0);
            n.corrupting_ = true;
            break;
        }
    }
}

uint64_t Network::next_fault_ps() const
{
    uint64_t t = UINT64_MAX;
    for (size_t i = 0; i < faults_.size(); i++)
        if (!fault_done_[i] && Scheduler::to_ps(faults_[i].at) < t)
            t = Scheduler::to_ps(faults_[i].at);
    return t;
}

std::vector<rs_link_params> Network::link_params() const
{
    std::vector<rs_link_params> out;
    for (const auto &l : links_)
        out.push_back(l->params());
    return out;
}

std::vector<int> Network::down_channels() const
{
    std::vector<int> out;
    for (const auto &l : links_)
        if (!l->up())
            out.push_back(l->id());
    return out;
}

int Network::first_down_on_route(int src, int dst) const
{
    for (int ch : topo_.route(src, dst))
        if (!links_[ch]->up())
            return ch;
    return -1;
}

bool Network::link_down(int a, int b) const
{
    for (const auto &l : links_)
        if (!l->up() && ((l->from() == a && l->to() == b) || (l->from() == b && l->to() == a)))
            return true;
    return false;
}

void Network::for_each_channel(const std::function<void(const ChannelInfo &)> &fn)
{
    double now = now_s();
    for (const auto &l : links_) {
        const TopoChannel &c = topo_.channels()[l->id()];
        ChannelInfo ci{l->id(), l->from(), l->to(), topo_.channel_name(l->id()), l->params(),
                       l->up(), c.nic, l->stats_now(), 0.0, l->corruption()};
        ci.utilisation = now > 0 ? std::min(1.0, ci.stats.busy_s / now) : 0.0;
        fn(ci);
    }
}

} // namespace model
