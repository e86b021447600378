// test_model_net.cpp — network timing: one case per process (one SystemC context each), chosen by
// argv[1]. Times are exact simulated values; message and packet networks run side by side.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "model/network.hpp"
#include "model_test.hpp"

using model::Network;

static const double B = 10e9, L = 1e-6, FWD = 100e-9;

static double wire(uint64_t w)
{
    return (double)(w + (w + 4095) / 4096 * 64);
}

// Starts one transfer and returns a slot that receives its delivery time (seconds, -1 = never).
struct Timer {
    double t0 = 0, t = -1;
    double elapsed() const { return t < 0 ? -1 : t - t0; }
};
static void send(Network &n, int a, int b, uint64_t w, Timer &tm)
{
    tm.t0 = n.now_s();
    tm.t = -1;
    n.transfer(a, b, w, [&n, &tm] { tm.t = n.now_s(); });
}

static void run()
{
    sc_core::sc_start();
}

static int channel(Network &n, int a, int b)
{
    return n.topology().direct(a, b);
}

// Contention-free time on one link: latency + wire bytes / bandwidth; packet agrees with message.
static void case_single()
{
    rs_topology_spec s = test_spec(RS_TOPO_RING, 2);
    Network nm(s, RS_FIDELITY_MESSAGE), np(s, RS_FIDELITY_PACKET);
    uint64_t total = 0;
    for (uint64_t w : {0ull, 1ull, 4096ull, 5000ull, 65536ull, 1ull << 20, 16ull << 20}) {
        Timer tm, tp;
        send(nm, 0, 1, w, tm);
        send(np, 0, 1, w, tp);
        run();
        total += w;
        double expect = L + wire(w) / B;
        CHECK_NEAR(tm.elapsed(), expect, 1e-3);
        CHECK(tp.elapsed() > 0);
        if (w >= 65536)
            CHECK_NEAR(tp.elapsed(), tm.elapsed(), 0.02);
        std::printf("%10llu B  message %.6f us  packet %.6f us  expected %.6f us\n",
                    (unsigned long long)w, tm.elapsed() * 1e6, tp.elapsed() * 1e6, expect * 1e6);
    }
    for (Network *n : {&nm, &np}) {
        int ch = channel(*n, 0, 1);
        n->for_each_channel([&](const model::ChannelInfo &c) {
            if (c.id != ch)
                return;
            CHECK(c.stats.bytes == total);
            CHECK(c.stats.wire_bytes == (uint64_t)wire(1) + (uint64_t)wire(4096) +
                                            (uint64_t)wire(5000) + (uint64_t)wire(65536) +
                                            (uint64_t)wire(1 << 20) + (uint64_t)wire(16 << 20));
            CHECK(c.utilisation > 0.9 && c.utilisation <= 1.0);
            CHECK(c.up);
        });
    }
    CHECK(nm.in_flight() == 0 && np.in_flight() == 0);
    // src == dst delivers at once.
    Timer ts;
    send(nm, 1, 1, 1000, ts);
    run();
    CHECK(ts.elapsed() == 0);
}

// The sender's side of a transfer: sent(obj, arg) once its last byte has left the source (message:
// the first hop's serialisation ends; packet: its last packet goes on the wire), the latencies
// later than that; at once for a transfer to self or of no bytes.
struct Sent {
    Network *n;
    double at = -1;
    static void fn(void *self, uint64_t) { static_cast<Sent *>(self)->at = static_cast<Sent *>(self)->n->now_s(); }
};
static void delivered(void *, uint64_t) {}

static void case_sent()
{
    rs_topology_spec s = test_spec(RS_TOPO_RING, 4);
    Network nm(s, RS_FIDELITY_MESSAGE), np(s, RS_FIDELITY_PACKET);
    const uint64_t w = 1 << 20;
    Sent m1{&nm}, p1{&np}, self{&nm}, empty{&nm};
    Timer tp;
    nm.transfer(0, 2, w, delivered, &m1, 0, Sent::fn); // two hops
    np.transfer(0, 1, w, delivered, &p1, 0, Sent::fn);
    send(np, 0, 1, w, tp);
    nm.transfer(1, 1, 1000, delivered, &self, 0, Sent::fn);
    nm.transfer(2, 3, 0, delivered, &empty, 0, Sent::fn);
    run();
    CHECK_NEAR(m1.at, wire(w) / B, 1e-6);          // the first hop's bytes, not the second's latency
    CHECK(self.at == 0 && empty.at == 0);
    // packet: its last packet starts two packets before the link's end (another transfer shares it
    // round robin), before anything is delivered
    CHECK(p1.at > 0 && p1.at < tp.t);
    CHECK_NEAR(p1.at, 2 * wire(w) / B, 0.01);
}

// Multi-hop, contention-free: message = sum of latencies + forwarding + wire/B (cut-through);
// packet (store-and-forward per packet) within 2% for >= 1 MiB.
static void case_multihop()
{
    rs_topology_spec st = test_spec(RS_TOPO_SWITCH, 3);
    rs_topology_spec r8 = test_spec(RS_TOPO_RING, 8);
    rs_topology_spec ft = test_spec(RS_TOPO_FAT_TREE, 8);
    ft.per_leaf = 2;
    ft.spines = 2;
    rs_topology_spec cl = test_spec(RS_TOPO_CLUSTER, 0);
    cl.servers = 2;
    Network sm(st, RS_FIDELITY_MESSAGE), sp(st, RS_FIDELITY_PACKET);
    Network rm(r8, RS_FIDELITY_MESSAGE), rp(r8, RS_FIDELITY_PACKET);
    Network fm(ft, RS_FIDELITY_MESSAGE), fp(ft, RS_FIDELITY_PACKET);
    Network cm(cl, RS_FIDELITY_MESSAGE), cp(cl, RS_FIDELITY_PACKET);
    for (uint64_t w : {1ull << 20, 8ull << 20}) {
        Timer t[8];
        send(sm, 0, 1, w, t[0]);
        send(sp, 0, 1, w, t[1]);
        send(rm, 0, 7, w, t[2]);
        send(rp, 0, 7, w, t[3]);
        send(fm, 0, 7, w, t[4]);
        send(fp, 0, 7, w, t[5]);
        send(cm, 0, 9, w, t[6]); // other server: NIC (5 GB/s, 2 us) -> switch -> NIC
        send(cp, 0, 9, w, t[7]);
        run();
        CHECK_NEAR(t[0].elapsed(), 2 * L + FWD + wire(w) / B, 1e-3);
        CHECK_NEAR(t[2].elapsed(), 7 * L + 6 * FWD + wire(w) / B, 1e-3);
        CHECK_NEAR(t[4].elapsed(), 4 * L + 3 * FWD + wire(w) / B, 1e-3);
        CHECK_NEAR(t[6].elapsed(), 2 * 2e-6 + FWD + wire(w) / 5e9, 1e-3);
        for (int i = 0; i < 8; i += 2) {
            CHECK_NEAR(t[i + 1].elapsed(), t[i].elapsed(), 0.02);
            std::printf("%8llu B  case %d  message %.4f us  packet %.4f us\n",
                        (unsigned long long)w, i / 2, t[i].elapsed() * 1e6,
                        t[i + 1].elapsed() * 1e6);
        }
    }
    CHECK(sm.switches().size() == 1 && sm.switches()[0].forwarded() == 2);
    CHECK(sp.switches()[0].forwarded() == (9ull << 20) / 4096);
}

// Two flows through one channel: each takes ~2x (message: exact fair share; packet: round robin
// at the source, output queueing + back-pressure through a switch with a small buffer).
static void case_share()
{
    const uint64_t w = 4ull << 20;
    rs_topology_spec r2 = test_spec(RS_TOPO_RING, 2);
    rs_topology_spec st = test_spec(RS_TOPO_SWITCH, 3);
    st.sw.buffer_bytes = 64 * 1024;
    Network rm(r2, RS_FIDELITY_MESSAGE), rp(r2, RS_FIDELITY_PACKET);
    Network sm(st, RS_FIDELITY_MESSAGE), sp(st, RS_FIDELITY_PACKET);
    Timer t[8];
    send(rm, 0, 1, w, t[0]);
    send(rm, 0, 1, w, t[1]);
    send(rp, 0, 1, w, t[2]);
    send(rp, 0, 1, w, t[3]);
    send(sm, 0, 2, w, t[4]);
    send(sm, 1, 2, w, t[5]);
    send(sp, 0, 2, w, t[6]);
    send(sp, 1, 2, w, t[7]);
    run();
    double same_src = L + 2 * wire(w) / B, via_sw = 2 * L + FWD + 2 * wire(w) / B;
    CHECK_NEAR(t[0].elapsed(), same_src, 1e-3);
    CHECK_NEAR(t[1].elapsed(), same_src, 1e-3);
    CHECK_NEAR(t[2].elapsed(), same_src, 0.03);
    CHECK_NEAR(t[3].elapsed(), same_src, 0.03);
    CHECK_NEAR(t[4].elapsed(), via_sw, 1e-3);
    CHECK_NEAR(t[5].elapsed(), via_sw, 1e-3);
    CHECK_NEAR(t[6].elapsed(), via_sw, 0.03);
    CHECK_NEAR(t[7].elapsed(), via_sw, 0.03);
    for (int i = 0; i < 8; i++)
        std::printf("flow %d: %.4f us\n", i, t[i].elapsed() * 1e6);
    int out = channel(sp, 3, 2); // switch -> npu2
    sp.for_each_channel([&](const model::ChannelInfo &c) {
        if (c.id == out) {
            CHECK(c.stats.peak_queue_bytes <= 64 * 1024 + 4096 + 64);
            CHECK(c.stats.peak_queue_bytes >= 32 * 1024);
            CHECK(c.utilisation > 0.95);
        }
        if (c.to == 3 && c.from < 2) // inputs were held back by credits once the output port filled
            CHECK(c.stats.credit_stalls > 0);
    });
    int shared = channel(rm, 0, 1);
    rm.for_each_channel([&](const model::ChannelInfo &c) {
        if (c.id == shared)
            CHECK(c.stats.peak_queue == 2);
    });
}

// A duplex limit (a host bridge both directions cross) of 1.5 x the bandwidth: one way alone runs
// at the bandwidth, both ways at once at 0.75 x each, and once the shorter one ends the longer
// one speeds up again; packet fidelity agrees within 3 %. One of 0.8 x: it binds only while both
// directions send.
static void case_duplex()
{
    const uint64_t w = 4ull << 20;
    rs_topology_spec s = test_spec(RS_TOPO_RING, 2);
    s.link.duplex_bandwidth = 1.5 * B;
    rs_topology_spec below = s;
    below.link.duplex_bandwidth = 0.8 * B;
    // every module before the first run (SystemC)
    Network nm(s, RS_FIDELITY_MESSAGE), np(s, RS_FIDELITY_PACKET);
    Network im(below, RS_FIDELITY_MESSAGE), ip(below, RS_FIDELITY_PACKET);
    Timer t[4];
    send(nm, 0, 1, w, t[0]);
    send(np, 0, 1, w, t[1]);
    run();
    CHECK_NEAR(t[0].elapsed(), L + wire(w) / B, 1e-3);
    CHECK_NEAR(t[1].elapsed(), L + wire(w) / B, 0.03);
    for (Network *n : {&nm, &np}) { /* both ways, the same bytes: 0.75 B each */
        Timer a, b;
        send(*n, 0, 1, w, a);
        send(*n, 1, 0, w, b);
        run();
        double tol = n == &nm ? 1e-3 : 0.03;
        CHECK_NEAR(a.elapsed(), L + wire(w) / (0.75 * B), tol);
        CHECK_NEAR(b.elapsed(), L + wire(w) / (0.75 * B), tol);
    }
    for (Network *n : {&nm, &np}) { /* half the bytes back: the rest of the long one at B */
        Timer a, b;
        send(*n, 0, 1, w, a);
        send(*n, 1, 0, w / 2, b);
        run();
        double tol = n == &nm ? 1e-3 : 0.03, t_short = wire(w / 2) / (0.75 * B);
        CHECK_NEAR(b.elapsed(), L + t_short, tol);
        CHECK_NEAR(a.elapsed(), L + t_short + (wire(w) - wire(w / 2)) / B, tol);
        std::printf("%s: both ways %.4f us, then alone: %.4f us\n", n == &nm ? "message" : "packet",
                    b.elapsed() * 1e6, a.elapsed() * 1e6);
    }
    // Below the bandwidth (reads and writes that interfere, as host-staged copies do): one way
    // alone still runs at the bandwidth, both ways at once 0.4 x each.
    for (Network *n : {&im, &ip}) {
        double tol = n == &im ? 1e-3 : 0.03;
        Timer alone, a, b;
        send(*n, 0, 1, w, alone);
        run();
        CHECK_NEAR(alone.elapsed(), L + wire(w) / B, tol);
        send(*n, 0, 1, w, a);
        send(*n, 1, 0, w, b);
        run();
        CHECK_NEAR(a.elapsed(), L + wire(w) / (0.4 * B), tol);
        CHECK_NEAR(b.elapsed(), L + wire(w) / (0.4 * B), tol);
    }
}

// Ring of 8, everyone sends to the next at once: no contention, each like a single transfer.
static void case_ring8()
{
    const uint64_t w = 1ull << 20;
    rs_topology_spec r8 = test_spec(RS_TOPO_RING, 8);
    rs_topology_spec b8 = test_spec(RS_TOPO_BIRING, 8);
    Network rm(r8, RS_FIDELITY_MESSAGE), rp(r8, RS_FIDELITY_PACKET);
    Network bm(b8, RS_FIDELITY_MESSAGE), bp(b8, RS_FIDELITY_PACKET);
    std::vector<Timer> t(8 * 6);
    for (int r = 0; r < 8; r++) {
        send(rm, r, (r + 1) % 8, w, t[r]);
        send(rp, r, (r + 1) % 8, w, t[8 + r]);
        send(bm, r, (r + 1) % 8, w, t[16 + r]);
        send(bm, r, (r + 7) % 8, w, t[24 + r]);
        send(bp, r, (r + 1) % 8, w, t[32 + r]);
        send(bp, r, (r + 7) % 8, w, t[40 + r]);
    }
    run();
    double single = L + wire(w) / B;
    for (int i = 0; i < 48; i++) {
        bool msg = i < 8 || (i >= 16 && i < 32); // message networks: rm, bm
        CHECK_NEAR(t[i].elapsed(), single, msg ? 1e-3 : 0.02);
    }
}

// Degrade: half the bandwidth doubles the serialisation; more latency adds to the time; a
// degrade in mid-flight changes the rate from then on.
static void case_degrade()
{
    const uint64_t w = 4ull << 20;
    rs_topology_spec r2 = test_spec(RS_TOPO_RING, 2);
    Network nm(r2, RS_FIDELITY_MESSAGE), np(r2, RS_FIDELITY_PACKET);
    Network *nets[2] = {&nm, &np};
    Timer t1[2], t2[2], t3[2], t4[2];
    for (int i = 0; i < 2; i++)
        send(*nets[i], 0, 1, w, t1[i]);
    run();
    rs_fault f{};
    f.kind = RS_FAULT_DEGRADE;
    f.ends = rs_link_ref{0, 1, 0, 7};
    f.at = nm.now_s() + 1e-6;
    f.bandwidth = B / 2;
    f.latency = -1;
    for (Network *n : nets)
        n->schedule_fault(f);
    run();
    for (int i = 0; i < 2; i++)
        send(*nets[i], 0, 1, w, t2[i]);
    run();
    for (int i = 0; i < 2; i++) {
        CHECK_NEAR(t2[i].elapsed() - L, 2 * (t1[i].elapsed() - L), i == 0 ? 1e-3 : 0.02);
        std::printf("%s: full %.3f us, half bandwidth %.3f us\n", i ? "packet" : "message",
                    t1[i].elapsed() * 1e6, t2[i].elapsed() * 1e6);
    }
    f.at = nm.now_s() + 1e-6;
    f.bandwidth = -1;
    f.latency = 3e-6;
    for (Network *n : nets)
        n->schedule_fault(f);
    run();
    for (int i = 0; i < 2; i++)
        send(*nets[i], 0, 1, w, t3[i]);
    run();
    for (int i = 0; i < 2; i++)
        CHECK_NEAR(t3[i].elapsed(), t2[i].elapsed() + 2e-6, i == 0 ? 1e-4 : 0.01);
    // Mid-flight (message): half the wire at B, then bandwidth B/4 -> the rest takes 4x.
    double start = nm.now_s();
    f.at = start + 0.5 * wire(w) / (B / 2);
    f.bandwidth = B / 8;
    f.latency = -1;
    nm.schedule_fault(f);
    send(nm, 0, 1, w, t4[0]);
    run();
    CHECK_NEAR(t4[0].elapsed(), 3e-6 + 0.5 * wire(w) / (B / 2) + 0.5 * wire(w) / (B / 8), 1e-3);
}

// Down: transfers across the dead channel never complete; the other direction still works; the
// network names the dead channel; the simulation runs dry instead of hanging.
static void case_down()
{
    rs_topology_spec b4 = test_spec(RS_TOPO_BIRING, 4);
    Network nm(b4, RS_FIDELITY_MESSAGE), np(b4, RS_FIDELITY_PACKET);
    Network *nets[2] = {&nm, &np};
    rs_fault f{};
    f.kind = RS_FAULT_DOWN;
    f.at = 10e-6;
    f.ends = rs_link_ref{0, 1, 0, 3};
    rs_fault g = f; // 2->3 goes down while a long transfer is on it
    g.ends = rs_link_ref{2, 3, 0, 4};
    Timer early[2], t01[2], t10[2], t02[2];
    for (int i = 0; i < 2; i++) {
        nets[i]->schedule_fault(f);
        nets[i]->schedule_fault(g);
        send(*nets[i], 2, 3, 1ull << 20, early[i]); // needs ~105 us: cut at 10 us
    }
    sc_core::sc_start(sc_core::sc_time(20, sc_core::SC_US));
    for (int i = 0; i < 2; i++) {
        CHECK(nets[i]->link_down(0, 1));
        CHECK(!nets[i]->link_down(0, 3));
        send(*nets[i], 0, 1, 65536, t01[i]);
        send(*nets[i], 1, 0, 65536, t10[i]);
        send(*nets[i], 0, 2, 65536, t02[i]); // 0 -> 1 -> 2 (lowest next id): dead too
    }
    run();
    for (int i = 0; i < 2; i++) {
        Network &n = *nets[i];
        CHECK(early[i].t < 0);
        CHECK(t01[i].t < 0);
        CHECK(t02[i].t < 0);
        CHECK_NEAR(t10[i].elapsed(), L + wire(65536) / B, 0.02);
        CHECK(n.in_flight() == 3);
        std::vector<int> down = n.down_channels();
        CHECK(down.size() == 2);
        int c01 = channel(n, 0, 1);
        CHECK(n.first_down_on_route(0, 1) == c01);
        CHECK(n.first_down_on_route(0, 2) == c01);
        CHECK(n.first_down_on_route(1, 0) == -1);
        CHECK(n.channel_name(c01) == "npu0->npu1");
        n.for_each_channel([&](const model::ChannelInfo &c) {
            if (c.id == c01)
                CHECK(!c.up);
        });
    }
    // A fault on a link that does not exist is a configuration error.
    rs_fault bad = f;
    bad.ends = rs_link_ref{0, 2, 0, 9};
    try {
        nm.schedule_fault(bad);
        g_failures++;
    } catch (const model::ConfigError &e) {
        CHECK(std::strstr(e.what(), "no such link") && std::strstr(e.what(), "line 9"));
    }
}

// Corrupt: every N-th message across a channel is damaged. With crc the link layer replays it: its
// serialisation again (the channel busy meanwhile) and its latency again, exactly; a notify's replay
// costs the latency; the channel counts both. Without crc the times stay, the delivery says the
// data is damaged, and notifies are not counted.
static rs_fault corrupt_fault(uint32_t every, int crc)
{
    rs_fault f{};
    f.kind = RS_FAULT_CORRUPT;
    f.ends = rs_link_ref{0, 1, 0, 5};
    f.bandwidth = f.latency = -1;
    f.every = every;
    f.crc = crc;
    return f;
}

static model::LinkStats stats_of(Network &n, int a, int b)
{
    model::LinkStats st;
    int ch = channel(n, a, b);
    n.for_each_channel([&](const model::ChannelInfo &c) {
        if (c.id == ch)
            st = c.stats;
    });
    return st;
}

static void case_corrupt()
{
    const uint64_t w = 4096; // one packet: both fidelities count the same
    const double s = wire(w) / B;
    rs_topology_spec r2 = test_spec(RS_TOPO_RING, 2);
    // every module exists before the first sc_start: replay (one at a time, then two at once), silent
    Network rm(r2, RS_FIDELITY_MESSAGE), rp(r2, RS_FIDELITY_PACKET);
    Network bm(r2, RS_FIDELITY_MESSAGE), bp(r2, RS_FIDELITY_PACKET);
    Network sm(r2, RS_FIDELITY_MESSAGE), sp(r2, RS_FIDELITY_PACKET);
    Network *replay[2] = {&rm, &rp}, *both[2] = {&bm, &bp}, *silent[2] = {&sm, &sp};
    for (int i = 0; i < 2; i++) {
        replay[i]->schedule_fault(corrupt_fault(2, 1));
        both[i]->schedule_fault(corrupt_fault(1, 1));
        silent[i]->schedule_fault(corrupt_fault(2, 0));
    }
    run(); // the faults happen at 0 s: before the first transfer (which would start at once)
    // One at a time: the 2nd and 4th are replayed; then two notifies, the 2nd of them replayed.
    for (int i = 0; i < 2; i++) {
        Network &n = *replay[i];
        for (int k = 0; k < 6; k++) {
            Timer t;
            send(n, 0, 1, k < 4 ? w : 0, t);
            run();
            double clean = k < 4 ? L + s : L;
            CHECK_NEAR(t.elapsed(), k % 2 ? clean + (k < 4 ? s : 0) + L : clean, 1e-6);
        }
        model::LinkStats st = stats_of(n, 0, 1);
        CHECK(st.corrupt_counted == 6 && st.damaged == 3);
        CHECK_NEAR(st.replay_s, 2 * s, 1e-6);
        CHECK(stats_of(n, 1, 0).corrupt_counted == 0); // the other direction is healthy
    }
    // Two at once, both replayed: the replays keep the channel, so the pair ends a pair's
    // serialisation later (packet: the second waits behind the first's replay; message: they share).
    for (int i = 0; i < 2; i++) {
        Timer a, b;
        send(*both[i], 0, 1, w, a);
        send(*both[i], 0, 1, w, b);
        run();
        CHECK_NEAR(b.elapsed(), 4 * s + 2 * L, 1e-6);
        CHECK_NEAR(a.elapsed(), i ? 2 * s + 2 * L : 4 * s + 2 * L, 1e-6);
    }
    // Silent: the same times, every 2nd data message delivered damaged, notifies not counted.
    for (int i = 0; i < 2; i++) {
        Network &n = *silent[i];
        std::vector<int> damaged;
        for (int k = 0; k < 5; k++) {
            double t0 = n.now_s(), t = -1;
            uint64_t bytes = k == 2 ? 0 : w;
            n.transfer(0, 1, bytes, [&n, &damaged, &t] {
                damaged.push_back(n.delivery_damaged());
                t = n.now_s();
            });
            run();
            CHECK_NEAR(t - t0, bytes ? L + s : L, 1e-6);
        }
        CHECK((damaged == std::vector<int>{0, 1, 0, 0, 1}));
        CHECK(!n.delivery_damaged()); // only inside the delivery
        model::LinkStats st = stats_of(n, 0, 1);
        CHECK(st.corrupt_counted == 4 && st.damaged == 2 && st.replay_s == 0);
    }
    // every 0 is not a fault the model takes.
    try {
        rm.schedule_fault(corrupt_fault(0, 1));
        g_failures++;
    } catch (const model::ConfigError &e) {
        CHECK(std::strstr(e.what(), "every") != nullptr);
    }
}

// Same inputs -> same times: two identical networks side by side, and a second phase that
// repeats the workload later must reproduce the first phase's durations.
struct Chain {
    Network *n;
    std::vector<uint64_t> times; // ps: integer, so phases at different absolute times compare
    uint64_t lcg;
    int left;
    int rank;
    void next()
    {
        if (left-- <= 0)
            return;
        lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t w = (lcg >> 33) % (3u << 20);
        int dst = (int)((lcg >> 20) % 8);
        uint64_t t0 = n->scheduler().now();
        n->transfer(rank, dst, w, [this, t0] {
            times.push_back(n->scheduler().now() - t0);
            next();
        });
    }
};

static std::vector<uint64_t> workload(Network &n)
{
    std::vector<Chain> ch(8);
    for (int r = 0; r < 8; r++) {
        ch[r] = Chain{&n, {}, 12345u + (uint64_t)r, 40, r};
    }
    for (auto &c : ch)
        c.next();
    run();
    std::vector<uint64_t> all;
    for (auto &c : ch)
        all.insert(all.end(), c.times.begin(), c.times.end());
    return all;
}

static void case_determinism()
{
    rs_topology_spec st = test_spec(RS_TOPO_SWITCH, 8);
    st.sw.buffer_bytes = 32 * 1024;
    rs_topology_spec sv = test_spec(RS_TOPO_SERVER8, 0);
    // Every module exists before the first sc_start: build all networks up front.
    std::vector<std::unique_ptr<Network>> nets;
    for (rs_fidelity fid : {RS_FIDELITY_MESSAGE, RS_FIDELITY_PACKET})
        for (const rs_topology_spec *s : {&st, &sv}) {
            nets.push_back(std::make_unique<Network>(*s, fid));
            nets.push_back(std::make_unique<Network>(*s, fid));
        }
    for (size_t i = 0; i < nets.size(); i += 2) {
        {
            Network &a = *nets[i], &b = *nets[i + 1];
            std::vector<uint64_t> ta = workload(a), tb = workload(b);
            std::vector<uint64_t> ta2 = workload(a);
            CHECK(ta.size() == 8 * 40);
            CHECK(ta == tb);
            CHECK(ta == ta2);
            uint64_t ea = a.scheduler().events();
            CHECK(ea > 0);
            std::printf("network %zu: %zu transfers, %llu events, last %llu ps\n", i, ta.size(),
                        (unsigned long long)ea, (unsigned long long)ta.back());
        }
    }
}

int sc_main(int argc, char **argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: test_model_net single|sent|multihop|share|ring8|duplex|degrade|down|corrupt|determinism\n");
        return 2;
    }
    std::string c = argv[1];
    try {
        if (c == "single") case_single();
        else if (c == "multihop") case_multihop();
        else if (c == "sent") case_sent();
        else if (c == "share") case_share();
        else if (c == "ring8") case_ring8();
        else if (c == "duplex") case_duplex();
        else if (c == "degrade") case_degrade();
        else if (c == "down") case_down();
        else if (c == "corrupt") case_corrupt();
        else if (c == "determinism") case_determinism();
        else {
            std::fprintf(stderr, "unknown case %s\n", c.c_str());
            return 2;
        }
    } catch (const std::exception &e) {
        std::fprintf(stderr, "exception: %s\n", e.what());
        return 1;
    }
    return test_result(("test_model_net " + c).c_str());
}
