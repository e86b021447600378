// test_accuracy.cpp — simulated collective times against the REFERENCE.md alpha-beta formulas on
// contention-free rings, plus gamma hiding, a contention case and determinism. One case per
// process (argv[1]): every Network must exist before the process's first sc_start.
//
// What the engine adds on top of the formulas (stated explicitly in every expectation):
//  - READY handshake: before the first write every rank records READY to its predecessor (the
//    writer) and waits for its successor's. On a one-way ring that notify travels the whole way
//    round: (p-1) L + (p-2) forwarding. Constant in n; measured with a zero-byte notify. On more
//    than 2 ranks the ring collectives and chain broadcast do not wait for it: their first units
//    land in the receiver's landing zone while the READY travels (ring_zoned, bc_zone_extra), and
//    ring allreduce and reduce-scatter fill nothing on the way (their units land as they are and
//    the receiver adds its contribution as it sends them on: REDUCE_WRITE).
//  - on 2 ranks ring reduce-scatter fills its target (the output) with the rank's own
//    contribution before the sender reduces into it (the inline reduce needs the receiver's value
//    in place): a fill queue writes it in pieces that grow (ncl_lead_piece), so only the first
//    piece's fill, o + 2 first / M, and one alpha per further piece are on the critical path
//    (none in place: the output holds the contribution already). Out-of-place allreduce on 2
//    ranks fills the chunk it reduces into the same way; out-of-place allgather and broadcast copy
//    input -> recv on a helper queue beside the ring or chain, off the critical path.
//  - gamma: the device streams the inline reduce with the data (max of wire and reduce time),
//    so with reduce_bandwidth >= link bandwidth the ((p-1)/p) n gamma term adds nothing.
//  - chain broadcast: k is the engine's own choice (cost model, integer ns and GB/s); the
//    formula is evaluated at that k, and separately compared with the formula's best k.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "acc_sim.hpp"
#include "model/npu.hpp"
#include "model/rings.hpp"

using acc::Sim;

namespace {

const char *coll_name(ncl_coll c)
{
    switch (c) {
    case NCL_COLL_ALLREDUCE: return "allreduce";
    case NCL_COLL_REDUCE_SCATTER: return "reduce_scatter";
    case NCL_COLL_ALLGATHER: return "allgather";
    case NCL_COLL_BROADCAST: return "broadcast";
    default: return "?";
    }
}

const ncl_coll k_colls[] = {NCL_COLL_ALLREDUCE, NCL_COLL_REDUCE_SCATTER, NCL_COLL_ALLGATHER,
                            NCL_COLL_BROADCAST};

uint64_t isqrt(uint64_t v)
{
    uint64_t r = (uint64_t)std::sqrt((double)v);
    while (r * r > v)
        r--;
    while ((r + 1) * (r + 1) <= v)
        r++;
    return r;
}

/* The engine's chain segment count (firmware ncl_pipeline_segments / ncl_pipeline_prepare with a
 * slice larger than the buffer): isqrt((p-2) n / (alpha_ns x gbps)), at least 1. */
uint64_t engine_k(int p, uint64_t bytes, const ncl_config &cfg)
{
    if (p <= 2)
        return 1;
    uint64_t k = isqrt((uint64_t)(p - 2) * bytes / ((uint64_t)cfg.link_alpha_ns * cfg.link_gbps));
    k = k ? k : 1;
    return k < bytes / 4 ? k : bytes / 4;
}

double chain_formula(int p, double n, double k, const acc::Terms &t)
{
    return ((p > 2 ? p - 2 : 0) + k) * (t.alpha + n * t.beta / k);
}

/* The formula's best integer k (T(k) is convex: check around the continuous optimum). */
double chain_best(int p, double n, const acc::Terms &t)
{
    double kc = p > 2 ? std::sqrt((p - 2) * n * t.beta / t.alpha) : 1.0;
    double best = chain_formula(p, n, 1, t);
    for (double k = std::floor(kc) - 1; k <= std::ceil(kc) + 1; k++)
        if (k >= 1)
            best = std::fmin(best, chain_formula(p, n, k, t));
    return best;
}

/* The engine's pieces of a first target of `bytes` (ncl_lead_piece: fp32, pieces growing by
 * r = (M - 3B) / 2B from alpha M / 2 bytes rounded up to 4 KiB; a rest under the first piece joins
 * the last; whole when under 2 first pieces or r < 2). Returns the piece count, the first in *first. */
uint64_t lead_pieces(uint64_t bytes, const ncl_config &cfg, uint64_t *first)
{
    uint64_t r = cfg.mem_gbps > 3u * cfg.link_gbps ? (cfg.mem_gbps - 3u * cfg.link_gbps) / (2u * cfg.link_gbps) : 0;
    uint64_t h = ((uint64_t)cfg.link_alpha_ns * cfg.mem_gbps / 2 + 4095) / 4096 * 4096, len = bytes / 4;
    h /= 4;
    *first = bytes;
    if (r < 2 || len / 2 < h)
        return 1;
    *first = h * 4;
    uint64_t k = 0, lo = 0, size = h;
    while (lo < len) {
        uint64_t rest = len - lo;
        lo += rest < size || rest - size < h ? rest : size;
        size *= r;
        k++;
    }
    return k;
}

/* What the sender's first write waits for beyond the READY: the receiver's fill of the first
 * piece of its target (o + 2 first / M). With one data task in flight per queue every later piece
 * costs its write one more alpha (the queue runs its writes one after another; the pieces' fills
 * run meanwhile); with several, a piece's write is issued while the one before it still moves. */
double lead_fill(double bytes, const ncl_config &cfg, const rs_device_params &d, const acc::Terms &t)
{
    uint64_t first, k = lead_pieces((uint64_t)bytes, cfg, &first);
    double later = d.queue_depth > 1 ? 0.0 : (double)(k - 1) * t.alpha;
    return d.task_overhead + 2.0 * (double)first / d.mem_bandwidth + later;
}

/* REFERENCE.md time (gamma hidden: see test_gamma). */
double formula(ncl_coll c, int p, double n, const acc::Terms &t, uint64_t k)
{
    double f = (double)(p - 1) / p;
    switch (c) {
    case NCL_COLL_ALLREDUCE: return 2 * (p - 1) * t.alpha + 2 * f * n * t.beta;
    case NCL_COLL_REDUCE_SCATTER:
    case NCL_COLL_ALLGATHER: return (p - 1) * t.alpha + f * n * t.beta;
    case NCL_COLL_BROADCAST: return chain_formula(p, n, (double)k, t);
    default: return 0;
    }
}

/* The bytes of each landing zone the engine sets up on this device (ncl_plan_env_zones), 0: none.
 * Ring allgather puts its first units there (or the first unit's head, when one does not fit) on
 * more than 2 ranks (the last group never lands there), and so does not wait for the READY. */
uint64_t zone_bytes(int p, const rs_device_params &d, const ncl_config &cfg, uint64_t scratch = 4ull << 30)
{
    ncl_hal_caps caps{};
    model::Npu::caps_of(d, scratch, &caps);
    ncl_plan_env env;
    ncl_plan_env_init(&env, &cfg, &caps);
    if (ncl_plan_env_zones(&env, &cfg, &caps, p) != NCL_SUCCESS)
        return 0;
    return env.zone_bytes;
}

/* Ring allgather, allreduce and reduce-scatter on more than 2 ranks put their first units in the
 * zones (the last two: the device reduces two sources on the way out, NCL_HAL_FEAT_REDUCE_WRITE). */
bool ring_zoned(int p, const rs_device_params &d, const ncl_config &cfg)
{
    return p > 2 && zone_bytes(p, d, cfg) > 0;
}

/* Chain broadcast puts its first segments (or, with more than one, the first one's head) in the
 * zones too, and waits for no READY. When the zone holds every segment of n / k bytes, the last
 * rank copies the last one out after the chain's end: a task overhead and the copy's read and
 * write of its bytes. */
double bc_zone_extra(int p, double n, uint64_t k, const rs_device_params &d, const ncl_config &cfg, double t_ready)
{
    uint64_t zone = zone_bytes(p, d, cfg);
    double seg = std::ceil(n / 4 / (double)k) * 4; // fp32 elements
    uint64_t slots = zone / (uint64_t)seg;
    if (p < 2 || zone == 0 || (slots == 0 && k == 1))
        return t_ready;
    return slots >= k ? d.task_overhead + 2 * seg / d.mem_bandwidth : 0;
}

/* The engine's schedule terms the formula does not count (see the top of the file). */
double engine_extra(ncl_coll c, int p, double n, bool inplace, double t_ready,
                    const rs_device_params &d, const acc::Terms &t, const ncl_config &cfg)
{
    if (p < 2)
        return t_ready;
    if ((c == NCL_COLL_ALLGATHER || c == NCL_COLL_ALLREDUCE || c == NCL_COLL_REDUCE_SCATTER) && ring_zoned(p, d, cfg))
        return 0; // out of place, allreduce and reduce-scatter fill only the output, off the path
    if (c == NCL_COLL_BROADCAST)
        return bc_zone_extra(p, n, engine_k(p, (uint64_t)n, cfg), d, cfg, t_ready);
    if (c == NCL_COLL_REDUCE_SCATTER && !(inplace && p == 2))
        return t_ready + lead_fill(n / p, cfg, d, t); // the first target's fill; the fill queue hides the rest
    if (c == NCL_COLL_ALLREDUCE && !inplace)
        return t_ready + lead_fill(n / p, cfg, d, t); // the same for the chunks it reduces into
    return t_ready; // out-of-place allgather and broadcast copy on a helper queue, off the path
}

struct Row {
    const char *fid;
    ncl_coll coll;
    int p;
    uint64_t bytes;
    double sim, form, extra;
};
std::vector<Row> g_rows;

void print_rows()
{
    std::printf("%-8s %-15s %4s %12s %14s %14s %12s %10s %10s\n", "fidelity", "collective", "p",
                "bytes", "sim(us)", "formula(us)", "extra(us)", "raw err", "adj err");
    for (const Row &r : g_rows) {
        double raw = (r.sim - r.form) / r.form, adj = (r.sim - r.extra - r.form) / r.form;
        std::printf("%-8s %-15s %4d %12llu %14.3f %14.3f %12.3f %9.4f%% %9.4f%%\n", r.fid,
                    coll_name(r.coll), r.p, (unsigned long long)r.bytes, r.sim * 1e6, r.form * 1e6,
                    r.extra * 1e6, raw * 100, adj * 100);
    }
}

/* Margins: >= 1 MiB the 1 %. Below 1 MiB the same formula + engine terms hold to 1 % as
 * well (packetisation rounds a step up to whole packets: < 1 header per step, ~2 ns against an
 * alpha of 2 us); what grows below 1 MiB is the *raw* error against the bare formula, because the
 * READY handshake is a constant (p-1) L: see the table's "raw err" column and model/README.md. */
const double k_tol_big = 0.01, k_tol_small = 0.01;

void sweep(Sim &s, const char *fid, uint64_t lo, uint64_t hi, uint64_t factor, bool inplace = true)
{
    int p = s.nranks();
    rs_device_params dev = acc::device_params();
    acc::Terms t = acc::terms(acc::ring_spec(p).link, dev);
    double t_ready = s.notify_latency(1 % p, 0); // successor -> rank 0: the READY's route
    for (ncl_coll c : k_colls) {
        for (uint64_t n = lo; n <= hi; n *= factor) {
            if (n / 4 < (uint64_t)p) // fewer elements than ranks: nothing per ring step
                continue;
            double sim = s.run(c, n, inplace);
            ACC_CHECK(sim > 0);
            uint64_t k = engine_k(p, n, s.config());
            double f = formula(c, p, (double)n, t, k);
            double x = engine_extra(c, p, (double)n, inplace, t_ready, dev, t, s.config());
            g_rows.push_back(Row{fid, c, p, n, sim, f, x});
            double tol = n >= (1u << 20) ? k_tol_big : k_tol_small;
            if (!(std::fabs(sim - x - f) <= tol * f)) {
                std::fprintf(stderr, "%s %s p=%d n=%llu: sim %.3f us vs formula %.3f + engine %.3f us\n",
                             fid, coll_name(c), p, (unsigned long long)n, sim * 1e6, f * 1e6, x * 1e6);
                acc::g_failures++;
            }
            if (c == NCL_COLL_BROADCAST && n >= (1u << 20) && inplace) {
                // the engine's k is (close to) the formula's best k
                double best = chain_best(p, (double)n, t);
                if (!(f <= best * 1.01)) {
                    std::fprintf(stderr, "chain p=%d n=%llu: engine k=%llu gives %.3f us, best %.3f us\n",
                                 p, (unsigned long long)n, (unsigned long long)k, f * 1e6, best * 1e6);
                    acc::g_failures++;
                }
            }
            if (c == NCL_COLL_ALLREDUCE && n == (256u << 20) && inplace) {
                // issue 3: busbw at 256 MiB >= 97 % of the link's payload bandwidth
                double busbw = (double)n / sim * 2.0 * (p - 1) / p;
                ACC_CHECK(busbw >= 0.97 / t.beta);
            }
        }
    }
}

int case_message()
{
    std::vector<std::unique_ptr<Sim>> sims;
    for (int p : {2, 4, 8, 16, 64})
        sims.emplace_back(new Sim(acc::ring_spec(p), RS_FIDELITY_MESSAGE, acc::device_params()));
    // bidirectional ring (REFERENCE.md's full-duplex links): the READY comes back over the reverse
    // link, one L (data still one way)
    std::vector<std::unique_ptr<Sim>> bi;
    for (int p : {2, 4, 8, 16, 64})
        bi.emplace_back(new Sim(acc::ring_spec(p, RS_TOPO_BIRING), RS_FIDELITY_MESSAGE, acc::device_params()));
    for (auto &s : sims)
        sweep(*s, "message", 1u << 10, 1ull << 30, 4);
    for (auto &s : bi)
        sweep(*s, "biring", 1u << 10, 1ull << 30, 4);
    // out of place: the same times but for allreduce's first fill, see engine_extra
    for (size_t i : {0, 2, 4})
        sweep(*sims[i], "oop", 64u << 10, 256u << 20, 16, false);
    print_rows();
    return 0;
}

int case_packet()
{
    std::vector<std::unique_ptr<Sim>> sims;
    for (int p : {2, 4, 8, 16})
        sims.emplace_back(new Sim(acc::ring_spec(p), RS_FIDELITY_PACKET, acc::device_params()));
    for (auto &s : sims)
        sweep(*s, "packet", 4u << 10, 256u << 20, 4);
    print_rows();
    return 0;
}

/* Gamma: the inline reduce streams with the data, a step takes o + max(L + wire / B, c / R).
 * R >= B: the reduce is hidden, times identical whatever R. R < B: the reduce sets the pace of the
 * reduce-scatter steps, and adds max (not sum) to them. */
int case_gamma()
{
    const int p = 8;
    const uint64_t n = 64u << 20;
    rs_topology_spec spec = acc::ring_spec(p);
    double B = spec.link.bandwidth;
    rs_device_params d_eq = acc::device_params(), d_fast = d_eq, d_slow = d_eq;
    d_eq.reduce_bandwidth = B;
    d_fast.reduce_bandwidth = 10 * B;
    d_slow.reduce_bandwidth = B / 4;
    Sim eq(spec, RS_FIDELITY_MESSAGE, d_eq), fast(spec, RS_FIDELITY_MESSAGE, d_fast),
        slow(spec, RS_FIDELITY_MESSAGE, d_slow);
    acc::Terms t = acc::terms(spec.link, d_eq);
    double t_ready = eq.notify_latency(1, 0);
    slow.notify_latency(1, 0), fast.notify_latency(1, 0);
    for (ncl_coll c : {NCL_COLL_ALLREDUCE, NCL_COLL_REDUCE_SCATTER}) {
        double te = eq.run(c, n, true), tf = fast.run(c, n, true), ts = slow.run(c, n, true);
        double f = formula(c, p, (double)n, t, 1);
        double x = engine_extra(c, p, (double)n, true, t_ready, d_eq, t, eq.config());
        double chunk = (double)n / p, R = d_slow.reduce_bandwidth;
        // slow reduce: every reduce-scatter step costs o + c / R instead of alpha + c beta, but
        // reduce-scatter's step 0, which lands its input as it is (REDUCE_WRITE from step 1 on)
        const int plain = c == NCL_COLL_REDUCE_SCATTER ? 1 : 0;
        double pred_slow = x + (p - 1 - plain) * (d_slow.task_overhead + chunk / R) +
                           (c == NCL_COLL_ALLREDUCE ? p - 1 : plain) * (t.alpha + chunk * t.beta);
        // and the REFERENCE.md additive gamma term (gamma = 1/R) overestimates it
        double additive = x + f + (double)(p - 1) / p * n / R;
        std::printf("gamma %-15s R=B %.3f us  R=10B %.3f us  formula+engine %.3f us | R=B/4 %.3f us "
                    "(max model %.3f us, additive gamma %.3f us)\n",
                    coll_name(c), te * 1e6, tf * 1e6, (f + x) * 1e6, ts * 1e6, pred_slow * 1e6,
                    additive * 1e6);
        ACC_CHECK(te == tf); // exactly: reduce hidden behind the wire
        ACC_CHECK(std::fabs(te - x - f) <= 0.01 * f);
        ACC_CHECK(std::fabs(ts - pred_slow) <= 0.01 * pred_slow);
        ACC_CHECK(ts < additive);
    }
    return 0;
}

/* Contention: a `links` topology 0->1->2->3 plus 3->1 and 2->0, no 3->0. The ring's last hop
 * 3->0 routes 3->1->2->0 and so shares channel 1->2 with the ring's own 1->2 flow. Fair sharing
 * predicts that channel serialises 2 chunks per allgather step: each step takes ~ o + 2 c beta
 * (plus the longer route's latencies) instead of o + L + c beta. */
int case_contention()
{
    const int p = 4;
    const uint64_t n = 64u << 20;
    rs_link_params lp = acc::link_params();
    std::vector<rs_link_spec> links;
    auto add = [&](int a, int b) {
        rs_link_spec l{};
        l.ends.a = a, l.ends.b = b, l.ends.both = 0, l.ends.line = 0;
        l.params = lp;
        links.push_back(l);
    };
    add(0, 1), add(1, 2), add(2, 3), add(3, 1), add(2, 0);
    rs_topology_spec shared = acc::ring_spec(p);
    shared.kind = RS_TOPO_LINKS;
    shared.links = links.data();
    shared.links_count = links.size();
    rs_topology_spec free_spec = acc::ring_spec(p);
    rs_device_params dev = acc::device_params();
    Sim sm(shared, RS_FIDELITY_MESSAGE, dev), sp(shared, RS_FIDELITY_PACKET, dev),
        fm(free_spec, RS_FIDELITY_MESSAGE, dev);
    acc::Terms t = acc::terms(lp, dev);
    double ready_shared = 0;
    for (int r = 0; r < p; r++) // the READY that arrives last sets the start
        ready_shared = std::fmax(ready_shared, sm.notify_latency((r + 1) % p, r));
    sp.notify_latency(1, 0);
    double lat30 = sm.notify_latency(3, 0); // the detour's latency
    fm.notify_latency(1, 0);
    double chunk = (double)n / p;
    double pred = ready_shared + (p - 1) * (dev.task_overhead + lat30 + 2 * chunk * t.beta);
    double tm = sm.run(NCL_COLL_ALLGATHER, n, true), tp = sp.run(NCL_COLL_ALLGATHER, n, true);
    double tf = fm.run(NCL_COLL_ALLGATHER, n, true);
    std::printf("contention allgather p=4 64 MiB: free %.3f us, shared-channel message %.3f us, packet "
                "%.3f us, fair-share prediction %.3f us (slowdown %.3f, predicted %.3f)\n",
                tf * 1e6, tm * 1e6, tp * 1e6, pred * 1e6, tm / tf, pred / tf);
    ACC_CHECK(std::fabs(tm - pred) <= 0.03 * pred);
    ACC_CHECK(std::fabs(tp - pred) <= 0.03 * pred);
    ACC_CHECK(tm / tf > 1.9);
    return 0;
}

/* Memory: the DMA's reads and writes share the device memory. A ring step moves c bytes out (the
 * sender reads c) and c in (the receiver writes c; a write-reduce reads and writes it: 2c), all
 * ranks at once, so with memory_bandwidth M below the link's every allgather step takes
 * o + 2c / M and every reduce-scatter step o + 3c / M instead of alpha + c beta. Reduce-scatter's
 * target fills (2c each, p-2 in place) then compete for the same memory: the whole collective is
 * its memory work over M, plus a few overheads. */
int case_memory()
{
    const int p = 4;
    const uint64_t n = 64u << 20;
    rs_device_params dev = acc::device_params();
    dev.mem_bandwidth = 20e9; // the link: 30 GB/s
    rs_topology_spec spec = acc::ring_spec(p);
    Sim s(spec, RS_FIDELITY_MESSAGE, dev);
    acc::Terms t = acc::terms(spec.link, dev);
    double o = dev.task_overhead, M = dev.mem_bandwidth, c = (double)n / p;
    double ag = (p - 1) * (o + 2 * c / M), rs = (p - 1) * (o + 3 * c / M);
    struct {
        ncl_coll coll;
        double pred, below, slack; // sim in [pred - below, pred + slack]
    } cases[] = {
        // no READY wait (landing zones), but the copy out of the zone reads and writes its bytes
        {NCL_COLL_ALLGATHER, ag, 0, 2 * (double)zone_bytes(p, dev, s.config()) / M + 2 * o},
        // no READY wait and no fills: step 0 writes (2c), the middle steps REDUCE_WRITE their
        // landed data (3c), the last REDUCE_WRITE_REDUCEs into the output (4c): 3c a step on
        // average; what lands in a zone a step early shifts a little of it (within o)
        {NCL_COLL_REDUCE_SCATTER, rs, o, o},
        {NCL_COLL_ALLREDUCE, rs + ag, o, o},
    };
    for (auto &k : cases) {
        double sim = s.run(k.coll, n, true);
        double link_bound = formula(k.coll, p, (double)n, t, 1);
        std::printf("memory-bound %-15s p=%d 64 MiB, M=20 GB/s: sim %.3f us, predicted %.3f us "
                    "(+ up to %.3f us; link-bound formula %.3f us)\n",
                    coll_name(k.coll), p, sim * 1e6, k.pred * 1e6, k.slack * 1e6, link_bound * 1e6);
        ACC_CHECK(sim >= (k.pred - k.below) * (1 - 1e-9) && sim <= (k.pred + k.slack) * (1 + 1e-9));
        ACC_CHECK(sim > 1.5 * link_bound);
    }
    return 0;
}

/* Multi-ring: on the Atlas-800-style server the rings found from the topology (four, no link
 * used twice) carry a quarter of the data each, all at full link bandwidth at once: allreduce
 * busbw at 256 MiB must reach >= 3.6x that of one of those rings alone. */
int case_multiring()
{
    rs_topology_spec spec = acc::ring_spec(8, RS_TOPO_SERVER8);
    model::Topology topo(spec);
    std::vector<std::vector<int>> rings = model::find_rings(topo, 4);
    ACC_CHECK(rings.size() == 4);
    if (rings.size() != 4)
        return 0;
    rs_device_params dev = acc::device_params();
    Sim four(spec, RS_FIDELITY_MESSAGE, dev, 4ull << 30, rings);
    Sim one(spec, RS_FIDELITY_MESSAGE, dev, 4ull << 30, {rings[0]});
    Sim four_pkt(spec, RS_FIDELITY_PACKET, dev, 4ull << 30, rings);
    const uint64_t n = 256u << 20;
    double t4 = four.run(NCL_COLL_ALLREDUCE, n, true), t1 = one.run(NCL_COLL_ALLREDUCE, n, true);
    double t4p = four_pkt.run(NCL_COLL_ALLREDUCE, n, true);
    double bus = 2.0 * 7 / 8 * (double)n;
    acc::Terms t = acc::terms(spec.link, dev);
    std::printf("server8 allreduce 256 MiB: one ring %.2f GB/s busbw, four rings %.2f GB/s (packet "
                "%.2f), ratio %.3f; link payload bandwidth %.2f GB/s\n",
                bus / t1 / 1e9, bus / t4 / 1e9, bus / t4p / 1e9, t1 / t4, 1 / t.beta / 1e9);
    ACC_CHECK(t1 / t4 >= 3.6);
    ACC_CHECK(t1 / t4p >= 3.6);
    return 0;
}

/* Same scenario twice (separate networks and devices) -> identical simulated times, both
 * fidelities, every collective. */
int case_determinism()
{
    rs_device_params dev = acc::device_params();
    Sim a(acc::ring_spec(8), RS_FIDELITY_PACKET, dev), b(acc::ring_spec(8), RS_FIDELITY_PACKET, dev);
    Sim c(acc::ring_spec(16), RS_FIDELITY_MESSAGE, dev), d(acc::ring_spec(16), RS_FIDELITY_MESSAGE, dev);
    for (ncl_coll coll : k_colls) {
        for (uint64_t n : {64ull << 10, 4ull << 20}) {
            for (bool inplace : {true, false}) {
                double ta = a.run(coll, n, inplace), tb = b.run(coll, n, inplace);
                double tc = c.run(coll, n, inplace), td = d.run(coll, n, inplace);
                ACC_CHECK(ta > 0 && ta == tb);
                ACC_CHECK(tc > 0 && tc == td);
            }
        }
    }
    // and a repeat on the same network gives the same duration again
    double t1 = c.run(NCL_COLL_ALLREDUCE, 1u << 20, true), t2 = c.run(NCL_COLL_ALLREDUCE, 1u << 20, true);
    ACC_CHECK(t1 == t2);
    return 0;
}

/* The topology-aware algorithms against REFERENCE.md on a contention-free full mesh: enough DMA
 * engines for every peer at once, memory faster than all links together (gamma = 1 / reduce
 * bandwidth), one round. What the schedules add is constant in n and stated per algorithm:
 *  - one READY latency before the first write (every algorithm);
 *  - the reduce-scatter halves reduce what lands in scratch slots with a LOCAL_REDUCE task each:
 *    lg p' tasks for halving-doubling, p - 1 for the full mesh (o each; their bytes are gamma);
 *  - halving-doubling on p not a power of two runs its core on p' = 2^floor(lg p) ranks, and the
 *    fold's reduce (inline, in place) streams with the data: REFERENCE.md's non-pow2 line, which
 *    uses p and adds n gamma for the fold, overstates it (the raw column shows by how much).
 * Asserted: simulated = the schedule's formula + those terms within 0.1 %, every size; printed:
 * the raw error against REFERENCE.md's line (within 1 % from 16 MiB for pow2 hd and sag, from
 * 256 MiB for the full mesh). */
int case_algos()
{
    rs_device_params dev = acc::device_params();
    dev.dma_engines = 8;
    dev.mem_bandwidth = 100e12;
    struct Case {
        int p;
        ncl_coll coll;
        ncl_algo algo;
    };
    const Case cases[] = {{8, NCL_COLL_ALLREDUCE, NCL_ALGO_HD},      {6, NCL_COLL_ALLREDUCE, NCL_ALGO_HD},
                          {8, NCL_COLL_REDUCE_SCATTER, NCL_ALGO_HD}, {8, NCL_COLL_ALLGATHER, NCL_ALGO_HD},
                          {8, NCL_COLL_ALLREDUCE, NCL_ALGO_MESH},    {8, NCL_COLL_REDUCE_SCATTER, NCL_ALGO_MESH},
                          {8, NCL_COLL_ALLGATHER, NCL_ALGO_MESH},    {8, NCL_COLL_BROADCAST, NCL_ALGO_SAG}};
    std::vector<std::unique_ptr<Sim>> sims;
    for (const Case &c : cases) {
        sims.emplace_back(new Sim(acc::ring_spec(c.p, RS_TOPO_FULL_MESH), RS_FIDELITY_MESSAGE, dev));
        sims.back()->force(c.coll, c.algo);
    }
    for (size_t i = 0; i < sims.size(); i++) {
        const Case &c = cases[i];
        acc::Terms t = acc::terms(acc::ring_spec(c.p).link, dev);
        const double g = 1.0 / dev.reduce_bandwidth, o = dev.task_overhead, f = (c.p - 1.0) / c.p;
        const double lg = std::log2((double)c.p), lgc = std::floor(lg), pc = std::exp2(lgc), fc = (pc - 1) / pc;
        const double ready = sims[i]->notify_latency(1, 0);
        const bool rs = c.coll == NCL_COLL_REDUCE_SCATTER, ar = c.coll == NCL_COLL_ALLREDUCE;
        for (uint64_t n : {1ull << 20, 16ull << 20, 256ull << 20}) {
            double sim = sims[i]->run(c.coll, n, true), N = (double)n, ref = 0, sched = 0, extra = ready;
            ACC_CHECK(sim > 0);
            if (c.algo == NCL_ALGO_HD && ar) {
                ref = pc == c.p ? 2 * lg * t.alpha + 2 * f * N * t.beta + f * N * g
                                : (2 * lgc + 2) * t.alpha + (2 * f + 2) * N * t.beta + (1 + f) * N * g;
                sched = pc == c.p ? ref : (2 * lgc + 2) * t.alpha + (2 * fc + 2) * N * t.beta + fc * N * g;
                extra += lgc * o;
            } else if (c.algo == NCL_ALGO_HD) { // the halves of Rabenseifner
                ref = sched = lg * t.alpha + f * N * t.beta + (rs ? f * N * g : 0);
                extra += rs ? lg * o : 0;
            } else if (c.algo == NCL_ALGO_MESH) {
                ref = sched = (ar ? 2 : 1) * t.alpha + (ar ? 2 : 1) * N / c.p * t.beta + (ar || rs ? f * N * g : 0);
                extra += ar || rs ? (c.p - 1) * o : 0;
            } else {
                ref = sched = 2 * lg * t.alpha + 2 * f * N * t.beta;
            }
            std::printf("%-15s %-5s p=%d %10llu B: sim %10.3f us  schedule %10.3f + %5.2f us (%+.4f %%)  "
                        "REFERENCE.md %10.3f us (raw %+.3f %%)\n",
                        coll_name(c.coll), ncl_algo_name(c.algo), c.p, (unsigned long long)n, sim * 1e6,
                        sched * 1e6, extra * 1e6, (sim - sched - extra) / sched * 100, ref * 1e6,
                        (sim - ref) / ref * 100);
            ACC_CHECK(std::fabs(sim - sched - extra) <= 0.001 * sched);
        }
    }
    return 0;
}

/* Double binary tree allreduce on a switch (every rank one port; the schedule's six queues and
 * as many DMA engines) against model/README.md's pipelined bound: with h = floor(lg p), k rounds
 * per tree, alpha = the route's latency + o,
 *   T = (2h - 1 + k)(alpha + n beta / 2k) + 3/2 n beta      at the best k
 * (a pipeline of 2h hops carrying n/2, while every port carries 2n; the engine picks k from its
 * own alpha, L + o here without a cost table). The simulation runs up to 3.6 % below it: the
 * per-round alpha hides partly behind the other tree's transfers, and a round's DATA rides its
 * write (the model sends no second notify over the route).
 * Asserted: from 16 MiB, both placements, p = 6, 8, 16: at most 3 % above, 4 % below. */
int case_dbtree()
{
    rs_device_params dev = acc::device_params();
    dev.dma_engines = 8;
    const int ps[] = {6, 8, 16};
    std::vector<std::unique_ptr<Sim>> sims;
    for (int p : ps) {
        sims.emplace_back(new Sim(acc::ring_spec(p, RS_TOPO_SWITCH), RS_FIDELITY_MESSAGE, dev));
        sims.back()->force(NCL_COLL_ALLREDUCE, NCL_ALGO_DBTREE);
    }
    for (size_t i = 0; i < sims.size(); i++) {
        const int p = ps[i];
        acc::Terms t = acc::terms(acc::ring_spec(p).link, dev);
        const double alpha = sims[i]->notify_latency(0, 1) + dev.task_overhead;
        const double h = std::floor(std::log2((double)p)), head = 2 * h - 1;
        for (uint64_t n : {16ull << 20, 64ull << 20, 256ull << 20}) {
            const double N = (double)n, kc = std::sqrt(head * N * t.beta / (2 * alpha));
            double bound = -1;
            for (double k = std::max(1.0, std::floor(kc)); k <= std::ceil(kc) + 1; k++) {
                double v = (head + k) * (alpha + N * t.beta / (2 * k)) + 1.5 * N * t.beta;
                bound = bound < 0 || v < bound ? v : bound;
            }
            for (bool inplace : {true, false}) {
                double sim = sims[i]->run(NCL_COLL_ALLREDUCE, n, inplace);
                std::printf("allreduce dbtree p=%2d %10llu B %s: sim %10.3f us  bound %10.3f us (%+.3f %%)\n", p,
                            (unsigned long long)n, inplace ? "in place    " : "out of place", sim * 1e6,
                            bound * 1e6, (sim - bound) / bound * 100);
                ACC_CHECK(sim > 0 && sim <= 1.03 * bound && sim >= 0.96 * bound);
            }
        }
    }
    return 0;
}

/* Binomial tree reduce on a switch (every rank one port) against model/README.md's bound: the
 * root's port takes ceil(lg p) children's writes of n, which the pipelined rounds keep busy,
 *   T = ceil(lg p) n beta + the first write's latencies (READY, o, the route)
 * (tree_reduce.c grants every child its rounds ahead; it granted one child at a time and waited
 * for its DATA, +10 % at 256 MiB on 8 ranks). Asserted: from 16 MiB, both placements, p = 8, 16:
 * at most 2 % above, never below the port's ceil(lg p) n beta. */
int case_tree_reduce()
{
    rs_device_params dev = acc::device_params();
    const int ps[] = {8, 16};
    std::vector<std::unique_ptr<Sim>> sims;
    for (int p : ps) {
        sims.emplace_back(new Sim(acc::ring_spec(p, RS_TOPO_SWITCH), RS_FIDELITY_MESSAGE, dev));
        sims.back()->force(NCL_COLL_REDUCE, NCL_ALGO_TREE);
    }
    for (size_t i = 0; i < sims.size(); i++) {
        const int p = ps[i];
        acc::Terms t = acc::terms(acc::ring_spec(p).link, dev);
        const double alpha = 2 * sims[i]->notify_latency(0, 1) + dev.task_overhead;
        const double h = std::ceil(std::log2((double)p));
        for (uint64_t n : {16ull << 20, 64ull << 20, 256ull << 20}) {
            const double port = h * (double)n * t.beta, bound = port + alpha;
            for (bool inplace : {true, false}) {
                double sim = sims[i]->run(NCL_COLL_REDUCE, n, inplace);
                std::printf("reduce tree p=%2d %10llu B %s: sim %10.3f us  bound %10.3f us (%+.3f %%)\n", p,
                            (unsigned long long)n, inplace ? "in place    " : "out of place", sim * 1e6,
                            bound * 1e6, (sim - bound) / bound * 100);
                ACC_CHECK(sim > 0 && sim <= 1.02 * bound && sim >= port);
            }
        }
    }
    return 0;
}

} // namespace

int sc_main(int argc, char **argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s message|packet|gamma|contention|determinism|memory|multiring|algos|dbtree|tree_reduce\n", argv[0]);
        return 2;
    }
    std::string c = argv[1];
    if (c == "message")
        case_message();
    else if (c == "packet")
        case_packet();
    else if (c == "gamma")
        case_gamma();
    else if (c == "contention")
        case_contention();
    else if (c == "determinism")
        case_determinism();
    else if (c == "memory")
        case_memory();
    else if (c == "multiring")
        case_multiring();
    else if (c == "algos")
        case_algos();
    else if (c == "dbtree")
        case_dbtree();
    else if (c == "tree_reduce")
        case_tree_reduce();
    else {
        std::fprintf(stderr, "unknown case %s\n", c.c_str());
        return 2;
    }
    if (acc::g_failures) {
        std::fprintf(stderr, "accuracy %s: %d check(s) failed\n", c.c_str(), acc::g_failures);
        return 1;
    }
    std::printf("accuracy %s: ok\n", c.c_str());
    return 0;
}
