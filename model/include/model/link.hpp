// link.hpp — one unidirectional channel (a full-duplex link is two). Message fidelity: a transfer
// is one flow, bandwidth shared fairly (processor sharing, virtual-time finish tags) at the rate
// the credits allow (link_rate). Packet fidelity: packets serialised one at a time with
// credit-based flow control against the receiver's buffer. Holds its state (up/down, degraded,
// corrupting) and statistics.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "model/params.hpp"
#include "model/rs_spec.h"
#include "model/scheduler.hpp"

namespace model {

class Network;

/** The wire bytes per second a channel sustains: its bandwidth, or what its credits allow when
 *  the receiver's buffer holds less than the bandwidth-delay product. A credit comes back a
 *  packet's time plus a round trip after its packet started, so a window of the whole packets the
 *  buffer holds sends at most window / (packet time + 2 latency): where packet fidelity's credit
 *  loop settles, what message fidelity serves at and what the cost model prices. */
double link_rate(const rs_link_params &p);

/** What a channel has done so far. */
struct LinkStats {
    uint64_t bytes = 0;      // payload bytes sent
    uint64_t wire_bytes = 0; // payload + headers
    uint64_t packets = 0;    // packets (message fidelity: ceil(payload / packet) per transfer)
    uint64_t transfers = 0;  // flows (message) / messages injected here (packet)
    double busy_s = 0;       // time with something on the wire
    uint64_t peak_queue = 0; // message: peak concurrent flows; packet: peak packets queued to send
    uint64_t peak_queue_bytes = 0; // packet: peak bytes in the sender-side output queue
    uint64_t credit_stalls = 0;    // packet: times a ready packet waited for credits
    // A corrupt fault (bit errors): what crossed since it began, what was damaged, and the wire
    // time the link layer's replays took (crc; they are in busy_s too).
    uint64_t corrupt_counted = 0; // messages (packet fidelity: packets) counted towards `every`
    uint64_t damaged = 0;         // of them, damaged: replayed (crc) or delivered wrong (no crc)
    double replay_s = 0;          // serialisation time of the replays
};

/** A corrupt fault's setting on a channel: every N-th message damaged (0: none), caught or not. */
struct LinkCorruption {
    uint32_t every = 0;
    bool crc = true;
};

class Link {
public:
    /** out_buffer: byte capacity of the sender-side output queue for forwarded packets (a
     *  switch's output port buffer); 0 = unlimited (an NPU forwarding from its memory). */
    Link(Network &net, Scheduler &sched, int id, int from, int to, const rs_link_params &p,
         uint32_t out_buffer);

    int id() const { return id_; }
    int from() const { return from_; }
    int to() const { return to_; }
    const rs_link_params &params() const { return p_; }
    bool up() const { return up_; }
    const LinkStats &stats() const { return st_; }
    /** Stats with busy time brought up to now (message fidelity accrues lazily). */
    LinkStats stats_now();
    /** Current queue: flows (message) or packets waiting + in service (packet). */
    uint64_t queued() const;

    /** Bytes on the wire for a payload: payload + ceil(payload / packet) * header. */
    uint64_t wire_bytes(uint64_t payload) const;
    uint64_t latency_ps() const { return lat_ps_; }

    // ---- message fidelity ----
    /** Start serialising a flow of `payload` bytes now; the network's hop_done(msg, hop) runs
     *  when its last byte has left (not counting latency). solo_ok: the flow is its message's
     *  only hop; if it also starts alone on a healthy channel, its end is known now and the
     *  network's solo_started(msg, end) is called instead of hop_done (see solo_). */
    void flow_start(uint32_t msg, uint32_t hop, uint64_t payload, bool solo_ok = false);

    // ---- packet fidelity ----
    /** Queue a message's packets for injection here (round-robin among injecting messages). */
    void inject(uint32_t msg);
    /** Forward a packet arriving from `in_link` (credits of in_link return once admitted). */
    void forward(uint32_t pkt, Link &in_link);

    // ---- faults ----
    void set_down();
    /** New bandwidth and/or latency from now; a value < 0 keeps the current one. */
    void degrade(double bandwidth, double latency);
    /** Bit errors from now: every `every`-th message (packet fidelity: packet) that starts across
     *  this channel is damaged. crc: the receiver detects it and the sender replays it at once (its
     *  serialisation again, and its latency again before it lands); no crc: it is delivered
     *  damaged (Network::delivery_damaged). Messages without payload (notifies) count only with crc:
     *  control messages are not left to corrupt silently. A later corrupt fault restarts the count. */
    void corrupt(uint32_t every, bool crc);
    const LinkCorruption &corruption() const { return corrupt_; }

    /** The opposite channel, where params().duplex_bandwidth makes the two share it (set by the
     *  network once every channel exists). */
    void set_reverse(Link *reverse) { reverse_ = reverse; }

    static const ComponentInfo &info();
    static rs_link_params defaults();     // NPU-NPU links (HCCS-like)
    static rs_link_params nic_defaults(); // cluster NIC links (100GE RoCE-like)

private:
    friend class Network; // credit_back for packets consumed at their destination
    struct Flow {
        double finish; // virtual-time finish tag
        uint64_t seq;
        uint32_t msg, hop;
    };
    struct FlowLater {
        bool operator()(const Flow &a, const Flow &b) const
        {
            return a.finish != b.finish ? a.finish > b.finish : a.seq > b.seq;
        }
    };
    void ps_advance(uint64_t now);
    void ps_reschedule(uint64_t now);
    // A solo flow is touched (another flow, a fault, stats): finished by now, it is retired as
    // its completion event would have; else that event is scheduled after all (the flow shares).
    void solo_settle(uint64_t now);
    // Wire bytes per second now: rate_, or less while the reverse channel shares the duplex limit.
    double share_rate() const;
    bool sending() const; // has bytes on the wire now (the reverse channel's view)
    // Around a change of whether this channel sends (or of its rate): the reverse channel's
    // flows are served at the old share up to now and rescheduled at the new one.
    void reverse_before(uint64_t now);
    void reverse_after(uint64_t now);
    static void ps_event(void *self, uint64_t gen);

    // What happens to the message (packet) now starting across a corrupting channel.
    enum class Damage { none, replay, silent };
    // Out of line and cold: only corrupting channels call them.
    [[gnu::cold]] Damage next_damage(bool has_payload);
    [[gnu::cold, gnu::noinline]] double damage_flow(uint32_t msg, double wire);
    [[gnu::cold, gnu::noinline]] void send_corrupting(uint32_t pkt, uint64_t tx_ps);

    void try_send();
    void admit(uint32_t pkt, Link &in_link);
    static void tx_done(void *self, uint64_t pkt);
    static void credit_back(void *self, uint64_t bytes);

    Network &net_;
    Scheduler &s_;
    int id_, from_, to_;
    rs_link_params p_;
    Link *reverse_ = nullptr;
    uint64_t lat_ps_;
    bool up_ = true;
    LinkStats st_;
    LinkCorruption corrupt_;
    uint32_t since_damage_ = 0; // messages counted since the last damaged one

    // message fidelity: processor sharing
    std::vector<Flow> flows_; // min-heap on finish tag
    double vtime_ = 0;        // bytes served to each active flow so far
    double rate_ = 0;         // wire bytes per second: bandwidth, capped by the credit window
    uint64_t last_ps_ = 0;
    uint64_t gen_ = 0, fseq_ = 0;
    // A flow that started alone on the channel and is its message's only hop: until something
    // else touches the channel its last byte leaves at solo_end_, so its message's delivery was
    // scheduled at once and no completion event runs (one event per transfer fewer). flows_
    // still holds it: the state is exactly the one the completion event would find.
    bool solo_ = false;
    uint32_t solo_msg_ = 0;
    uint64_t solo_end_ = 0;

    // packet fidelity
    std::deque<uint32_t> outq_;   // forwarded packets queued at the sender (switch output port)
    std::deque<std::pair<uint32_t, Link *>> waiters_; // (packet, its input) waiting for space
    std::deque<uint32_t> inject_; // messages injecting here, round robin
    uint64_t outq_bytes_ = 0;
    uint32_t out_cap_;
    int64_t credits_;
    bool busy_ = false, prefer_fwd_ = false, cur_fwd_ = false;
    uint32_t cur_wire_ = 0, cur_msg_ = 0;
    uint64_t cur_start_ = 0;
};

} // namespace model
