// network.hpp — the facade the NPU device and the `sim` HAL backend use: builds the topology's
// links and switches, moves messages between ranks at the chosen fidelity, injects faults and
// exposes per-channel statistics. Deterministic: same inputs -> same simulated times.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/link.hpp"
#include "model/params.hpp"
#include "model/rs_spec.h"
#include "model/scheduler.hpp"
#include "model/switch.hpp"
#include "model/topology.hpp"

namespace model {

/** One channel's identity, parameters, state and statistics (see Network::for_each_channel). */
struct ChannelInfo {
    int id;
    int from, to;
    std::string name;       // "npu0->npu1"
    rs_link_params params;  // current (after overrides and faults)
    bool up;
    bool nic;
    LinkStats stats;
    double utilisation;     // busy time / simulated time so far, 0..1
    LinkCorruption corruption; // a corrupt fault's setting (every 0: none has happened)
};

class Network {
public:
    /** Build everything (during SystemC elaboration: before the first sc_start). Throws
     *  ConfigError. `sched` may be shared with the devices; null = the network makes its own. */
    Network(const rs_topology_spec &spec, rs_fidelity fidelity, Scheduler *sched = nullptr);
    ~Network();
    Network(const Network &) = delete;
    Network &operator=(const Network &) = delete;

    /** Send `bytes` from rank src to rank dst starting now; on_delivered runs in simulation
     *  context once the last byte has arrived. src == dst delivers at once (zero time). A transfer
     *  whose route crosses a down link never completes (first_down_on_route() tells where). */
    void transfer(int src, int dst, uint64_t bytes, std::function<void()> on_delivered);
    /** The same with a plain callback: fn(obj, arg) on delivery. Allocates nothing (the devices
     *  use it for every DMA write and notify). */
    void transfer(int src, int dst, uint64_t bytes, Scheduler::Fn fn, void *obj, uint64_t arg);
    /** The same, and sent(obj, arg) once the last byte has left src: a DMA engine feeds a queue's
     *  transfers to the wire one after another. sent runs inside the network's own processing:
     *  it must not start transfers itself (schedule an event for that). */
    void transfer(int src, int dst, uint64_t bytes, Scheduler::Fn fn, void *obj, uint64_t arg, Scheduler::Fn sent);
    /** The same, returning the message's id for left() and want_sent() (valid until sent has run
     *  or left() said yes). */
    uint32_t transfer_sent(int src, int dst, uint64_t bytes, Scheduler::Fn fn, void *obj, uint64_t arg,
                           Scheduler::Fn sent);
    /** Whether message m's last byte has left its source by now without its sent callback having
     *  run (a solo flow: its end is known, the callback is not run for it); if so the callback
     *  never runs. Otherwise false: the callback will run when it leaves. */
    bool left(uint32_t m);
    /** Someone waits for message m's sent callback: a solo flow gets an event at its end for it. */
    void want_sent(uint32_t m);

    /** Apply a fault at f.at (simulated seconds; now if already past). Throws ConfigError when
     *  its link does not exist. Endpoints are node ids: ranks, then switches. */
    void schedule_fault(const rs_fault &f);
    /** Inside an on-delivery callback: whether that transfer was damaged on the way and nobody
     *  noticed (a corrupt fault with crc false). The receiver's data must then land wrong. */
    bool delivery_damaged() const { return delivery_damaged_; }

    void for_each_channel(const std::function<void(const ChannelInfo &)> &fn);
    /** Every channel's parameters now (faults that happened included), by channel id. */
    std::vector<rs_link_params> link_params() const;
    /** When the earliest fault still to happen is due, in ps (UINT64_MAX: none). */
    uint64_t next_fault_ps() const;
    /** How many faults have happened so far. */
    uint64_t faults_applied() const { return faults_applied_; }
    std::string describe() const { return topo_.describe(); }
    const Topology &topology() const { return topo_; }
    /** A transfer from node src to dst leaves src through its NIC (a cluster's inter-server
     *  route): the NIC's own engine moves it, not one of the device's DMA engines. */
    bool leaves_by_nic(int src, int dst)
    {
        const std::vector<int> &r = routes_[route_lookup(src, dst)];
        return !r.empty() && topo_.channels()[(size_t)r.front()].nic;
    }
    /** Some channel is a NIC's: leaves_by_nic can say yes (the devices skip asking otherwise). */
    bool has_nics() const { return has_nics_; }
    Scheduler &scheduler() { return *sched_; }
    rs_fidelity fidelity() const { return fid_; }
    int nranks() const { return topo_.nranks(); }
    const std::vector<Switch> &switches() const { return switches_; }
    Link &link(int ch) { return *links_.at(ch); }

    /** Channels currently down, in id order. */
    std::vector<int> down_channels() const;
    /** First down channel on the route src->dst, or -1 (for the engine's timeout message). */
    int first_down_on_route(int src, int dst) const;
    /** True when some channel a->b (or b->a) is down. */
    bool link_down(int a, int b) const;
    std::string channel_name(int ch) const { return topo_.channel_name(ch); }

    uint64_t transfers_started() const { return started_; }
    uint64_t transfers_delivered() const { return delivered_; }
    uint64_t in_flight() const { return started_ - delivered_; }
    double now_s() const { return Scheduler::to_s(sched_->now()); }

    /** Called on every delivery with the transfer's ends, size, start and end (ps) and the first
     *  channel of its route (-1 for a transfer to self): what `--trace` shows as link activity. */
    using Observer = void (*)(void *ud, int src, int dst, uint64_t bytes, uint64_t start_ps,
                              uint64_t end_ps, int first_channel);
    void set_observer(Observer fn, void *ud) { observer_ = fn, observer_ud_ = ud; }

    /** Fidelity and network-wide parameters, for `ringsim params`. */
    static const ComponentInfo &info();

private:
    friend class Link;
    struct Msg {
        int src, dst;
        uint32_t route;      // index into routes_
        uint64_t bytes;
        uint64_t inject_left; // packet: payload not yet packetised
        uint64_t arrived;     // packet: payload consumed at dst
        uint32_t hops_left;   // message: hops still serialising
        uint64_t deliver_at;  // message: latest (serial end + downstream latency) so far
        uint64_t start_ps;    // when the transfer started (for the observer)
        uint64_t replay_ps;   // message fidelity: latency its link-layer replays add to delivery
        bool damaged;         // silently damaged on some hop (corrupt fault without crc)
        bool solo;            // message fidelity: one hop, alone on it (Link::solo_): its
        bool sent_ev;         // delivery is scheduled at launch; an event at solo_end runs sent
        uint32_t gen;         // launches of this slot so far: the solo events name theirs
        uint64_t solo_end;    // when its last byte leaves
        Scheduler::Fn fn;     // on delivery: fn(obj, arg) ...
        Scheduler::Fn sent;   // when the last byte left src: sent(obj, arg), or null
        void *obj;
        uint64_t arg;
        std::function<void()> cb; // ... or cb (when fn is null)
    };
    struct Packet {
        uint32_t msg;
        uint32_t payload;
        uint32_t hop;
    };

    void couple_duplex_pairs();
    uint32_t route_of(int src, int dst);
    uint32_t route_lookup(int src, int dst);
    uint32_t new_msg();
    void launch(uint32_t m, int src, int dst, uint64_t bytes);
    uint32_t new_packet(uint32_t msg, uint32_t payload);
    void deliver(uint32_t msg);
    void sent(uint32_t msg);
    // message fidelity
    void hop_done(uint32_t msg, uint32_t hop);
    void solo_started(uint32_t msg, uint64_t end_ps);
    void solo_cancel(uint32_t msg) { msgs_[msg].solo = false; }
    static void solo_deliver_ev(void *self, uint64_t gen_and_msg);
    static void solo_sent_ev(void *self, uint64_t gen_and_msg);
    static void hop_enter(void *self, uint64_t arg);
    static void deliver_ev(void *self, uint64_t msg);
    // packet fidelity
    void packet_sent(uint32_t pkt, Link &l, uint64_t tx_ps, uint64_t late_ps);
    static void packet_arrive(void *self, uint64_t pkt_and_link);
    static void fault_ev(void *self, uint64_t idx);
    uint64_t control_replays(const std::vector<int> &route);

    Topology topo_;
    rs_fidelity fid_;
    std::unique_ptr<Scheduler> own_sched_;
    Scheduler *sched_;
    uint64_t fwd_ps_;
    std::vector<std::unique_ptr<Link>> links_;
    std::vector<Switch> switches_;
    std::vector<int> switch_of_node_; // -1 for NPUs

    std::vector<std::vector<int>> routes_;
    std::unordered_map<uint64_t, uint32_t> route_idx_;
    // Last two routes each source used (dst, route; dst -1 = none): a rank mostly talks to
    // the same one or two peers, so most transfers skip the hash lookup.
    struct RouteCache {
        int dst[2] = {-1, -1};
        uint32_t route[2] = {0, 0};
    };
    std::vector<RouteCache> route_cache_;
    std::vector<Msg> msgs_;
    std::vector<uint32_t> free_msgs_;
    std::vector<Packet> pkts_;
    std::vector<uint32_t> free_pkts_;
    uint64_t faults_applied_ = 0;
    std::vector<rs_fault> faults_;
    std::vector<bool> fault_done_; // by index in faults_
    bool solo_ok_ = false;          // message fidelity without duplex limits: solo flows allowed
    bool has_nics_ = false;         // some channel is a NIC's (a cluster)
    bool corrupting_ = false;       // some channel has had a corrupt fault
    bool delivery_damaged_ = false; // see delivery_damaged()
    uint64_t started_ = 0, delivered_ = 0;
    Observer observer_ = nullptr;
    void *observer_ud_ = nullptr;
};

} // namespace model
