// rs_board.cpp — an emulated board per agent process: the verilated rs_dev block, its memory, and its link port carried over ZeroMQ as LINK / LINK_ACK wire messages.
//
// The clocking follows tests/rtl_stub/rs_dev_harness.hpp (one block instead of several): every output
// the board looks at depends only on flops, so per cycle it reads them as the last edge left
// them, computes every input (register request, memory response, link beats and acks), evaluates
// clk = 0, performs this edge's memory transfer, evaluates clk = 1. What the harness's router does
// between blocks in one process is split here between two processes: the sender's board collects
// a whole transfer (header + data beats, tx_ready always 1) and sends it as one LINK message; the
// receiver's board queues it and feeds it to its block's RX port beat by beat; the receiver
// block's ack goes back as LINK_ACK and is given to the sender's block as its tx_ack pulse. A
// block has at most one transfer waiting for its ack, so acks need no matching beyond a check.
#include "rs_board.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include <algorithm>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "Vrs_dev.h"
#include "rs_link_beat.hpp"
#include "ncl/ncl_wire.h"
#include "verilated.h"

namespace {

// LINK payload: the block's transfer header, then the data.
//   0 u8 kind (1 WRITE, 2 WRITE_REDUCE, 3 NOTIFY), 1 u8 dtype, 2 u8 op, 3 u8 notify, 4 u32 bytes,
//   8 u64 addr (in the receiver's device memory), 16 u64 transfer number (sender's count, from 1),
//   24.. bytes of data (none for NOTIFY).
// LINK_ACK payload: 0 u64 transfer number it answers, 8 u8 status (0 OK, 1 RANGE, 2 BAD), 9..15 0.
constexpr size_t kLinkHdr = 24, kAckLen = 16;
constexpr int kKindWrite = 1, kKindReduce = 2, kKindNotify = 3;
constexpr int kStatusBad = 2;
constexpr uint32_t kMaxPayload = (1u << 30) + 64;  // a descriptor moves at most 1 GiB
constexpr double kGraceS = 0.5;                     // a disconnect without BYE is death after this

double now_s()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

uint64_t now_ns()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
uint32_t get32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) v |= (uint32_t)p[i] << (8 * i);
    return v;
}
uint64_t get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

struct Xfer {
    int src = 0;
    uint64_t num = 0;
    int kind = 0;
    unsigned dtype = 0, op = 0, notify = 0;
    uint32_t bytes = 0;
    uint64_t addr = 0;
    std::vector<uint8_t> data;
    size_t beat = 0;  // RX: 0 = the header next
};

}  // namespace

struct rs_board {
    int rank = 0, nranks = 0;
    std::unique_ptr<VerilatedContext> vctx;
    std::unique_ptr<Vrs_dev> m;
    uint8_t *mem = nullptr;
    uint64_t mem_bytes = 0;
    std::deque<std::pair<uint64_t, uint32_t>> rsp;  // (cycle it may be returned, data)
    uint64_t cycles = 0, since_drain = 0;
    // register request for the next cycle
    bool req = false, req_write = false;
    uint32_t req_addr = 0, req_wdata = 0;
    uint64_t last_write = 0;  // cycle of the last register write
    uint64_t last_busy = 0;   // last cycle the block was busy or moved anything
    // TX: the transfer being collected, and the one waiting for its ack
    bool tx_open = false;
    Xfer tx;
    int wait_peer = -1;          // peer of the transfer waiting for its ack (-1: none)
    uint64_t wait_num = 0, tx_count = 0;
    bool ack_pending = false;    // an ack to give our block next cycle
    int ack_status = 0;
    // RX: transfers from peers not yet fully fed, and whom our block's acks go to
    std::deque<Xfer> rxq;
    std::deque<std::pair<int, uint64_t>> ack_to;
    // ZeroMQ
    void *zctx = nullptr, *router = nullptr;
    std::vector<void *> dealer, mon;
    std::vector<rs_board_link> link;
    std::vector<std::string> eps;  // peers' endpoints, to name them
    std::vector<int> hello_in, hello_ack, bye;
    std::vector<std::string> gone;  // per peer: the sentence saying why it records nothing more ("": it may)
    std::vector<double> lost_at;  // disconnect seen at (0: not)
    int dead = -1;
    // ABORT: the first one heard (origin rank, its reason), and whether this board sent its own
    int abort_origin = -1;
    std::string abort_why;
    bool abort_sent = false;
    bool news = false;  // a peer left, died or aborted since the last wait began: wake the waiter
    uint64_t die_nth = 0, corrupt_nth = 0;
    uint64_t seq = 0;
    std::string error;

    ~rs_board()
    {
        if (m) m->final();
        free(mem);
    }

    // ---- clocking ------------------------------------------------------------------------------

    void tick()
    {
        Vrs_dev &d = *m;
        d.req_valid = req;
        d.req_write = req_write;
        d.req_addr = req_addr;
        d.req_wdata = req_wdata;
        req = false;
        d.mem_req_ready = 1;
        d.mem_rsp_valid = !rsp.empty() && rsp.front().first <= cycles;
        d.mem_rsp_rdata = d.mem_rsp_valid ? rsp.front().second : 0;
        d.rx_valid = 0;
        d.tx_ready = 0;
        d.tx_ack_valid = 0;
        d.tx_ack_status = 0;
        if (ack_pending) {
            d.tx_ack_valid = 1;
            d.tx_ack_status = (uint8_t)ack_status;
            ack_pending = false;
        }
        if (d.rx_ack_valid) {
            if (!ack_to.empty()) {
                std::pair<int, uint64_t> to = ack_to.front();
                ack_to.pop_front();
                send_ack(to.first, to.second, d.rx_ack_status);
            }
        }
        if (d.tx_valid) {
            d.tx_ready = 1;
            if (d.tx_hdr) {
                tx = Xfer();
                tx_open = true;
                tx.src = (int)d.tx_peer;  // the destination, while collecting
                tx.kind = d.tx_kind;
                tx.addr = d.tx_addr;
                tx.bytes = d.tx_bytes;
                tx.dtype = d.tx_dtype;
                tx.op = d.tx_op;
                tx.notify = d.tx_notify;
                if (tx.kind != kKindNotify) tx.data.reserve(tx.bytes);
            } else if (tx_open) {
                uint32_t v = d.tx_data;
                for (int k = 0; k < 4 && tx.data.size() < tx.bytes; k++) tx.data.push_back((uint8_t)(v >> (8 * k)));
            }
            if (d.tx_last && tx_open) {
                tx_open = false;
                send_link();
            }
        }
        if (!rxq.empty() && d.rx_ready) {
            Xfer &x = rxq.front();
            bool last = rs_link_rx_beat(d, x.kind, x.addr, x.bytes, x.dtype, x.op, x.notify, x.data.data(),
                                        x.data.size(), x.beat);
            if (x.beat == 0) ack_to.emplace_back(x.src, x.num);
            x.beat++;
            if (last) rxq.pop_front();
        }
        d.clk = 0;
        d.eval();
        if (d.mem_rsp_valid) rsp.pop_front();
        if (d.mem_req_valid && d.mem_req_ready) {
            uint64_t a = d.mem_req_addr;
            if (a % 4 == 0 && a + 4 <= mem_bytes) {
                if (d.mem_req_we) {
                    for (int k = 0; k < 4; k++)
                        if (d.mem_req_wstrb >> k & 1) mem[a + k] = (uint8_t)(d.mem_req_wdata >> (8 * k));
                } else {
                    uint32_t v;
                    memcpy(&v, mem + a, 4);  // little-endian host
                    rsp.emplace_back(cycles + 1, v);
                }
            } else if (!d.mem_req_we) {
                rsp.emplace_back(cycles + 1, 0u);  // the block range-checks; never reached
            }
        }
        d.clk = 1;
        d.eval();
        cycles++;
        if (d.busy || d.tx_valid || d.rx_ack_valid || d.mem_req_valid) last_busy = cycles;
        if (++since_drain >= 256) {
            since_drain = 0;
            drain();
        }
    }

    // Nothing can change until a message arrives: no beat, ack or memory response to move, and
    // the engine idle or stalled on the ack of a transfer a peer holds. A register write takes a
    // few cycles to show in `busy` (the response is registered, DOORBELL is a pulse the engine
    // sees a cycle later): until then the block is not known to be idle.
    bool stalled() const
    {
        return rxq.empty() && ack_to.empty() && rsp.empty() && !ack_pending && !tx_open && !req &&
               cycles - last_write > 4 && (wait_peer >= 0 || (!m->busy && cycles - last_busy > 4));
    }

    // ---- link ----------------------------------------------------------------------------------

    void note(const std::string &s)
    {
        if (error.empty()) error = s;
    }

    // Encodes w (flags and, for a reply, seq already set) and sends it on the link to peer.
    int send_msg(int peer, ncl_wire_msg &w, bool damage = false)
    {
        if (!(w.flags & NCL_WIRE_FLAG_REPLY)) w.seq = ++seq;
        w.src = (uint32_t)rank;
        w.dst = (uint32_t)peer;
        w.time_ns = now_ns();
        size_t need = 0;
        ncl_wire_encode(&w, nullptr, 0, &need);
        zmq_msg_t f;
        if (zmq_msg_init_size(&f, need) != 0) return -1;
        size_t len = 0;
        if (ncl_wire_encode(&w, zmq_msg_data(&f), need, &len) != NCL_WIRE_OK) {
            zmq_msg_close(&f);
            return -1;
        }
        if (damage) static_cast<uint8_t *>(zmq_msg_data(&f))[len - 1] ^= 0x10;  // a flipped bit in transit
        if (zmq_msg_send(&f, dealer[(size_t)peer], 0) < 0) {
            zmq_msg_close(&f);
            return -1;
        }
        return 0;
    }

    void send_link()
    {
        int peer = tx.src;
        uint64_t num = ++tx_count;
        wait_peer = peer;
        wait_num = num;
        if (peer < 0 || peer >= nranks || peer == rank || dead == peer || bye[(size_t)peer]) {
            // no such node, or it is gone: the router's answer is a BAD ack (the block fails the
            // descriptor with ERR_STATUS.LINK, the backend names the peer)
            wait_peer = -1;
            ack_pending = true;
            ack_status = kStatusBad;
            if (peer >= 0 && peer < nranks && peer != rank)
                note("link to rank " + std::to_string(peer) + " (" + eps[(size_t)peer] + "): the peer is gone (" +
                     (bye[(size_t)peer] ? "it closed" : "disconnected without closing") + ")");
            return;
        }
        std::vector<uint8_t> p(kLinkHdr + tx.data.size());
        p[0] = (uint8_t)tx.kind;
        p[1] = (uint8_t)tx.dtype;
        p[2] = (uint8_t)tx.op;
        p[3] = (uint8_t)tx.notify;
        put32(&p[4], tx.bytes);
        put64(&p[8], tx.addr);
        put64(&p[16], num);
        if (!tx.data.empty()) memcpy(&p[kLinkHdr], tx.data.data(), tx.data.size());
        ncl_wire_msg w;
        memset(&w, 0, sizeof w);
        w.command = NCL_WIRE_LINK;
        w.payload = p.data();
        w.payload_len = (uint32_t)p.size();
        // test hook: the Nth transfer is damaged on the wire (its checksum fails at the peer)
        send_msg(peer, w, corrupt_nth && num == corrupt_nth);
        link[(size_t)peer].tx++;
        link[(size_t)peer].tx_bytes += tx.data.size();
        if (die_nth && num >= die_nth) {
            // test hook: the agent dies mid-collective, its LINKs in flight
            kill(getpid(), SIGKILL);
        }
    }

    // Our block's ack of a peer's transfer (peers only: take() refuses frames from ourselves).
    void send_ack(int to, uint64_t num, int status)
    {
        uint8_t p[kAckLen] = {0};
        put64(p, num);
        p[8] = (uint8_t)status;
        ncl_wire_msg w;
        memset(&w, 0, sizeof w);
        w.command = NCL_WIRE_LINK_ACK;
        w.payload = p;
        w.payload_len = kAckLen;
        send_msg(to, w);
    }

    ncl_wire_hello my_hello() const
    {
        ncl_wire_hello h;
        memset(&h, 0, sizeof h);
        h.min_version = h.max_version = NCL_WIRE_VERSION;
        h.max_payload = kMaxPayload;
        h.nranks = (uint32_t)nranks;
        h.caps = NCL_WIRE_CAP_LINK;
        return h;
    }

    // HELLO (ours), HELLO_ACK (the agreement, *agreed) or BYE.
    void send_simple(int peer, uint8_t cmd, uint16_t flags, uint64_t reply_seq,
                     const ncl_wire_hello *agreed = nullptr)
    {
        ncl_wire_msg w;
        memset(&w, 0, sizeof w);
        w.command = cmd;
        if (cmd == NCL_WIRE_HELLO) w.hello = my_hello();
        if (cmd == NCL_WIRE_HELLO_ACK && agreed) w.hello = *agreed;
        w.flags = flags;
        w.seq = reply_seq;
        send_msg(peer, w);
    }

    // A peer's frame on the ROUTER: [routing id "r<rank>"][message].
    void take(const char *id, size_t idlen, const uint8_t *buf, size_t len)
    {
        int from = -1;
        if (idlen >= 2 && id[0] == 'r') {
            from = 0;
            for (size_t i = 1; i < idlen && from >= 0; i++)
                from = id[i] >= '0' && id[i] <= '9' ? from * 10 + (id[i] - '0') : -1;
        }
        if (from < 0 || from >= nranks || from == rank) return;  // not one of ours
        ncl_wire_limits lim = {kMaxPayload, (uint32_t)nranks, (uint32_t)rank, NCL_WIRE_VERSION, NCL_WIRE_VERSION};
        ncl_wire_msg w;
        char why[300];
        ncl_wire_result r = ncl_wire_decode(buf, len, &lim, &w, why, sizeof why);
        if (r != NCL_WIRE_OK || (w.src != (uint32_t)from)) {
            std::string what = "frame of " + std::to_string(len) + " bytes rejected: " +
                               (r != NCL_WIRE_OK ? std::string(ncl_wire_result_name(r)) + ": " + why
                                                 : "src is not the link's rank");
            std::string said = "link from rank " + std::to_string(from) + " (" + eps[(size_t)from] + "): " + what;
            note(said);
            if (dead < 0) dead = from;
            lose(from, said);
            // the sender waits for the ack of what we could not read: tell it, the link is closed
            ncl_wire_msg e;
            memset(&e, 0, sizeof e);
            e.command = NCL_WIRE_ERROR;
            e.error_code = (uint32_t)r;
            std::string text = "rank " + std::to_string(rank) + ": your " + what;
            e.payload = (const uint8_t *)text.data();
            e.payload_len = (uint32_t)std::min(text.size(), (size_t)NCL_WIRE_ERROR_TEXT_MAX);
            send_msg(from, e);
            return;
        }
        switch (w.command) {
        case NCL_WIRE_HELLO: {
            // the zmq backend's negotiation; a peer without LINK is not a board (a zmq agent?)
            ncl_wire_hello mine = my_hello(), agreed;
            memset(&agreed, 0, sizeof agreed);
            char why2[200] = "";
            // LINK is outside NCL_WIRE_CAP_KNOWN (the agreement drops it): both must announce it
            ncl_wire_result ar = ncl_wire_hello_agree(&mine, &w.hello, &agreed, why2, sizeof why2);
            agreed.caps |= mine.caps & w.hello.caps & NCL_WIRE_CAP_LINK;
            if (ar != NCL_WIRE_OK || !(agreed.caps & NCL_WIRE_CAP_LINK)) {
                note("link from rank " + std::to_string(from) + ": HELLO refused: " +
                     (agreed.caps & NCL_WIRE_CAP_LINK ? std::string(why2)
                                                      : "no LINK capability (is it an agent on the zmq backend?)"));
                return;
            }
            hello_in[(size_t)from] = 1;
            send_simple(from, NCL_WIRE_HELLO_ACK, NCL_WIRE_FLAG_REPLY, w.seq, &agreed);
            break;
        }
        case NCL_WIRE_HELLO_ACK:
            if (!(w.hello.caps & NCL_WIRE_CAP_LINK)) {
                note("link from rank " + std::to_string(from) + ": HELLO_ACK without the LINK capability");
                return;
            }
            hello_ack[(size_t)from] = 1;
            break;
        case NCL_WIRE_BYE:
            bye[(size_t)from] = 1;
            lose(from, "rank " + std::to_string(from) + " (" + eps[(size_t)from] + ") closed its link");
            break;
        case NCL_WIRE_ERROR: {
            std::string text((const char *)w.payload, w.payload_len);
            std::string said = "link to rank " + std::to_string(from) + " (" + eps[(size_t)from] + ") closed by the peer: " + text;
            note(said);
            if (dead < 0) dead = from;
            lose(from, said);
            break;
        }
        case NCL_WIRE_ABORT:
            if (abort_origin < 0) {
                abort_origin = (int)w.origin;
                abort_why.assign((const char *)w.payload, w.payload_len);
            }
            news = true;
            break;
        case NCL_WIRE_LINK: {
            if (w.payload_len < kLinkHdr) {
                note("link from rank " + std::to_string(from) + ": LINK of " + std::to_string(w.payload_len) + " bytes");
                return;
            }
            const uint8_t *p = w.payload;
            Xfer x;
            x.src = from;
            x.kind = p[0];
            x.dtype = p[1];
            x.op = p[2];
            x.notify = p[3];
            x.bytes = get32(&p[4]);
            x.addr = get64(&p[8]);
            x.num = get64(&p[16]);
            size_t want = x.kind == kKindNotify ? 0 : x.bytes;
            if ((x.kind != kKindWrite && x.kind != kKindReduce && x.kind != kKindNotify) ||
                w.payload_len - kLinkHdr != want) {
                note("link from rank " + std::to_string(from) + ": LINK kind " + std::to_string(x.kind) + " with " +
                     std::to_string(w.payload_len - kLinkHdr) + " data bytes for " + std::to_string(x.bytes));
                send_ack(from, x.num, kStatusBad);
                return;
            }
            x.data.assign(p + kLinkHdr, p + kLinkHdr + want);
            link[(size_t)from].rx++;
            link[(size_t)from].rx_bytes += want;
            rxq.push_back(std::move(x));
            break;
        }
        case NCL_WIRE_LINK_ACK: {
            if (w.payload_len != kAckLen || wait_peer != from || get64(w.payload) != wait_num) {
                note("link from rank " + std::to_string(from) + ": an ack nobody waits for");
                return;
            }
            wait_peer = -1;
            ack_pending = true;
            ack_status = w.payload[8];
            break;
        }
        default:
            note("link from rank " + std::to_string(from) + ": unexpected " +
                 (ncl_wire_cmd_name(w.command) ? ncl_wire_cmd_name(w.command) : "?"));
            break;
        }
    }

    // The peer records nothing more (why): its transfer in flight fails now, not at the timeout,
    // and a wait for its notify ends (peer_check).
    void lose(int peer, const std::string &why)
    {
        if (gone[(size_t)peer].empty()) gone[(size_t)peer] = why;
        link[(size_t)peer].up = 0;
        news = true;
        fail_wait(peer);
    }

    // The transfer waiting for a peer that is gone gets the BAD ack the router would give.
    void fail_wait(int peer)
    {
        if (wait_peer == peer) {
            wait_peer = -1;
            ack_pending = true;
            ack_status = kStatusBad;
        }
    }

    // Everything that arrived, without waiting.
    void drain()
    {
        for (;;) {
            zmq_msg_t id, f;
            zmq_msg_init(&id);
            if (zmq_msg_recv(&id, router, ZMQ_DONTWAIT) < 0) {
                zmq_msg_close(&id);
                break;
            }
            zmq_msg_init(&f);
            int more = zmq_msg_more(&id);
            if (more && zmq_msg_recv(&f, router, 0) >= 0)
                take((const char *)zmq_msg_data(&id), zmq_msg_size(&id), (const uint8_t *)zmq_msg_data(&f),
                     zmq_msg_size(&f));
            zmq_msg_close(&f);
            zmq_msg_close(&id);
        }
        for (int p = 0; p < nranks; p++) {
            if (!mon[(size_t)p]) continue;
            for (;;) {
                zmq_msg_t ev, addr;
                zmq_msg_init(&ev);
                if (zmq_msg_recv(&ev, mon[(size_t)p], ZMQ_DONTWAIT) < 0) {
                    zmq_msg_close(&ev);
                    break;
                }
                uint16_t event = 0;
                if (zmq_msg_size(&ev) >= 2) memcpy(&event, zmq_msg_data(&ev), 2);
                zmq_msg_init(&addr);
                zmq_msg_recv(&addr, mon[(size_t)p], 0);
                zmq_msg_close(&addr);
                zmq_msg_close(&ev);
                if (event == ZMQ_EVENT_DISCONNECTED && !lost_at[(size_t)p]) lost_at[(size_t)p] = now_s();
            }
            if (lost_at[(size_t)p] && !bye[(size_t)p] && dead != p && now_s() - lost_at[(size_t)p] > kGraceS) {
                if (dead < 0) dead = p;
                link[(size_t)p].up = 0;
                std::string said = "rank " + std::to_string(p) + " (" + eps[(size_t)p] + ") disconnected without closing";
                note(said);
                lose(p, said);
            }
        }
    }

    // Waits up to ms for link traffic, then takes it in.
    void wait_link(long ms)
    {
        zmq_pollitem_t it = {router, 0, ZMQ_POLLIN, 0};
        zmq_poll(&it, 1, ms);
        drain();
    }

    // Clocks the block until pred() or the deadline; blocks on the link while nothing can move.
    template <class P> bool run_until(P pred, uint64_t deadline_ns)
    {
        for (;;) {
            for (int i = 0; i < 64; i++) {
                if (pred()) return true;
                if (stalled()) break;
                tick();
            }
            if (pred()) return true;
            uint64_t t = now_ns();
            if (t >= deadline_ns) return false;
            if (stalled()) {
                uint64_t left_ms = (deadline_ns - t) / 1000000ull;
                // lost peers are judged after a grace period: wake up for it
                wait_link((long)(left_ms < 100 ? (left_ms ? left_ms : 1) : 100));
            }
        }
    }

    // access.peer_check: an ABORT breaks the communicator; a peer that left or died records nothing more.
    ncl_result peer_check(int peer, char *why, size_t len)
    {
        // the awaited peer's own fate first: it names the rank that is really gone
        if (peer >= 0 && peer < nranks && peer != rank && !gone[(size_t)peer].empty()) {
            snprintf(why, len, "%s", gone[(size_t)peer].c_str());
            return NCL_ERR_LINK;
        }
        if (abort_origin >= 0) {
            snprintf(why, len, "rank %d aborted: %s", abort_origin, abort_why.c_str());
            return NCL_ERR_REMOTE;
        }
        return NCL_SUCCESS;
    }

    // ABORT to every peer still there, once: their waits end now, not at their timeouts.
    void abort_all(uint32_t code, const char *why)
    {
        if (abort_sent || abort_origin >= 0) return;  // a relay would only repeat the first
        abort_sent = true;
        for (int p = 0; p < nranks; p++) {
            if (p == rank || !hello_ack[(size_t)p] || bye[(size_t)p] || dead == p) continue;
            ncl_wire_msg w;
            memset(&w, 0, sizeof w);
            w.command = NCL_WIRE_ABORT;
            w.error_code = code;
            w.origin = (uint32_t)rank;
            w.payload = (const uint8_t *)why;
            w.payload_len = (uint32_t)strnlen(why, NCL_WIRE_ERROR_TEXT_MAX);
            send_msg(p, w);
        }
    }

    uint32_t reg_access(bool write, uint32_t off, uint32_t v)
    {
        req = true;
        req_write = write;
        req_addr = off;
        req_wdata = v;
        tick();
        if (write) last_write = cycles;
        return m->rsp_rdata;
    }
};

// ---- C API ----------------------------------------------------------------------------------------

static uint32_t b_rd(void *ctx, uint32_t off) { return static_cast<rs_board *>(ctx)->reg_access(false, off, 0); }
static void b_wr(void *ctx, uint32_t off, uint32_t v) { static_cast<rs_board *>(ctx)->reg_access(true, off, v); }

static int b_mem_write(void *ctx, uint64_t a, const void *src, uint64_t n)
{
    rs_board *b = static_cast<rs_board *>(ctx);
    if (a > b->mem_bytes || n > b->mem_bytes - a) return -1;
    if (n) memcpy(b->mem + a, src, n);
    return 0;
}

static int b_mem_read(void *ctx, uint64_t a, void *dst, uint64_t n)
{
    rs_board *b = static_cast<rs_board *>(ctx);
    if (a > b->mem_bytes || n > b->mem_bytes - a) return -1;
    if (n) memcpy(dst, b->mem + a, n);
    return 0;
}

static int b_wait_irq(void *ctx, uint64_t timeout_ns)
{
    rs_board *b = static_cast<rs_board *>(ctx);
    uint64_t t = now_ns();
    uint64_t deadline = timeout_ns > UINT64_MAX - t ? UINT64_MAX : t + timeout_ns;
    b->news = false;
    // a peer's departure or ABORT ends the wait too: the backend asks peer_check next
    return b->run_until([b] { return b->m->irq != 0 || b->news; }, deadline) && b->m->irq ? 1 : 0;
}

static ncl_result b_peer_check(void *ctx, int peer, char *why, size_t len)
{
    return static_cast<rs_board *>(ctx)->peer_check(peer, why, len);
}

static uint64_t b_now(void *) { return now_ns(); }

extern "C" {

int rs_board_create(rs_board **out, const rs_board_config *cfg, char *err, size_t errlen)
{
    *out = nullptr;
    if (cfg->nranks < 1 || cfg->rank < 0 || cfg->rank >= cfg->nranks || cfg->mem_bytes % 4 ||
        cfg->mem_bytes < RS_BOARD_HEAP_AT + 4096) {
        snprintf(err, errlen, "board: bad configuration (rank %d of %d, %llu bytes of memory)", cfg->rank,
                 cfg->nranks, (unsigned long long)cfg->mem_bytes);
        return -1;
    }
    std::unique_ptr<rs_board> b(new rs_board);
    b->rank = cfg->rank;
    b->nranks = cfg->nranks;
    b->die_nth = cfg->fault_die_nth;
    b->corrupt_nth = cfg->fault_corrupt_nth;
    b->mem_bytes = cfg->mem_bytes;
    b->mem = static_cast<uint8_t *>(calloc(1, cfg->mem_bytes));  // untouched pages cost nothing
    if (!b->mem) {
        snprintf(err, errlen, "board: cannot allocate %llu bytes of device memory", (unsigned long long)cfg->mem_bytes);
        return -1;
    }
    b->vctx.reset(new VerilatedContext);
    b->m.reset(new Vrs_dev(b->vctx.get()));
    b->m->mem_bytes = cfg->mem_bytes;
    b->m->rst_n = 0;
    for (int i = 0; i < 3; i++) b->tick();
    b->m->rst_n = 1;
    b->tick();

    size_t n = (size_t)cfg->nranks;
    b->dealer.assign(n, nullptr);
    b->mon.assign(n, nullptr);
    b->link.assign(n, rs_board_link());
    for (size_t p = 0; p < n; p++) b->eps.push_back(cfg->endpoints[p]);
    b->hello_in.assign(n, 0);
    b->hello_ack.assign(n, 0);
    b->bye.assign(n, 0);
    b->gone.assign(n, std::string());
    b->lost_at.assign(n, 0.0);
    b->zctx = zmq_ctx_new();
    b->router = zmq_socket(b->zctx, ZMQ_ROUTER);
    int linger = 1000, hwm = 0;
    int64_t maxmsg = (int64_t)kMaxPayload + NCL_WIRE_HDR_LEN;
    zmq_setsockopt(b->router, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(b->router, ZMQ_RCVHWM, &hwm, sizeof hwm);
    zmq_setsockopt(b->router, ZMQ_MAXMSGSIZE, &maxmsg, sizeof maxmsg);
    const char *ep = cfg->endpoints[cfg->rank];
    if (zmq_bind(b->router, ep) != 0) {
        int bound = 0;
        const char *colon = strrchr(ep, ':');
        if (!strncmp(ep, "tcp://", 6) && colon) {
            char any[300];
            snprintf(any, sizeof any, "tcp://*%s", colon);
            bound = zmq_bind(b->router, any) == 0;
        }
        if (!bound) {
            snprintf(err, errlen, "board rank %d: cannot bind %s: %s", cfg->rank, ep, zmq_strerror(errno));
            rs_board_destroy(b.release());
            return -1;
        }
    }
    char id[16];
    snprintf(id, sizeof id, "r%d", cfg->rank);
    for (int p = 0; p < cfg->nranks; p++) {
        if (p == cfg->rank) continue;
        void *d = zmq_socket(b->zctx, ZMQ_DEALER);
        b->dealer[(size_t)p] = d;
        zmq_setsockopt(d, ZMQ_ROUTING_ID, id, strlen(id));
        zmq_setsockopt(d, ZMQ_LINGER, &linger, sizeof linger);
        zmq_setsockopt(d, ZMQ_SNDHWM, &hwm, sizeof hwm);
        char mon[64];
        snprintf(mon, sizeof mon, "inproc://rs-board-mon-%d", p);
        zmq_socket_monitor(d, mon, ZMQ_EVENT_DISCONNECTED);
        b->mon[(size_t)p] = zmq_socket(b->zctx, ZMQ_PAIR);
        zmq_connect(b->mon[(size_t)p], mon);
        if (zmq_connect(d, cfg->endpoints[p]) != 0) {
            snprintf(err, errlen, "board rank %d: cannot connect to rank %d at %s: %s", cfg->rank, p, cfg->endpoints[p],
                     zmq_strerror(errno));
            rs_board_destroy(b.release());
            return -1;
        }
        b->send_simple(p, NCL_WIRE_HELLO, 0, 0);
    }
    double give_up = now_s() + (double)cfg->connect_timeout_ns * 1e-9;
    for (;;) {
        int missing = -1;
        for (int p = 0; p < cfg->nranks && missing < 0; p++)
            if (p != cfg->rank && !(b->hello_in[(size_t)p] && b->hello_ack[(size_t)p])) missing = p;
        if (missing < 0) break;
        if (cfg->stop && *cfg->stop) {
            snprintf(err, errlen, "board rank %d: stopped by a signal while waiting for HELLO from rank %d", cfg->rank,
                     missing);
            rs_board_destroy(b.release());
            return -1;
        }
        if (!b->error.empty() || now_s() > give_up) {
            snprintf(err, errlen, "board rank %d: no HELLO with rank %d (%s) within %.1f s%s%s", cfg->rank, missing,
                     cfg->endpoints[missing], (double)cfg->connect_timeout_ns * 1e-9, b->error.empty() ? "" : ": ",
                     b->error.c_str());
            rs_board_destroy(b.release());
            return -1;
        }
        b->wait_link(50);
    }
    for (int p = 0; p < cfg->nranks; p++) b->link[(size_t)p].up = p != cfg->rank;
    *out = b.release();
    return 0;
}

void rs_board_destroy(rs_board *b)
{
    if (!b) return;
    for (int p = 0; p < b->nranks; p++) {
        if (b->dealer[(size_t)p] && b->hello_ack[(size_t)p] && b->dead != p) b->send_simple(p, NCL_WIRE_BYE, 0, 0);
    }
    for (void *s : b->mon)
        if (s) zmq_close(s);
    for (void *s : b->dealer)
        if (s) zmq_close(s);
    if (b->router) zmq_close(b->router);
    if (b->zctx) zmq_ctx_term(b->zctx);
    delete b;
}

void rs_board_access(rs_board *b, ncl_mmio_access *a)
{
    memset(a, 0, sizeof *a);
    a->reg_read32 = b_rd;
    a->reg_write32 = b_wr;
    a->mem_write = b_mem_write;
    a->mem_read = b_mem_read;
    a->wait_irq = b_wait_irq;
    a->now_ns = b_now;
    a->ctx = b;
    a->peer_check = b_peer_check;
}

void rs_board_abort(rs_board *b, int code, const char *why) { b->abort_all((uint32_t)code, why); }

uint8_t *rs_board_mem(rs_board *b) { return b->mem; }
uint64_t rs_board_mem_bytes(const rs_board *b) { return b->mem_bytes; }
void *rs_board_socket(rs_board *b) { return b->router; }

void rs_board_service(rs_board *b)
{
    b->drain();
    // the link side only: what arrived is written and acked, an ack is handed to the engine;
    // bounded so a block that never settles cannot keep the agent from its controller
    b->run_until([b] { return b->stalled(); }, now_ns() + 100000000ull);
}

int rs_board_link_stats(const rs_board *b, int peer, rs_board_link *out)
{
    if (peer < 0 || peer >= b->nranks || peer == b->rank) return -1;
    *out = b->link[(size_t)peer];
    return 0;
}

uint64_t rs_board_cycles(const rs_board *b) { return b->cycles; }
int rs_board_dead_rank(const rs_board *b) { return b->dead; }
const char *rs_board_last_error(const rs_board *b) { return b->error.c_str(); }

}  // extern "C"
