// costmodel.cpp — per-algorithm step patterns routed over the topology (see costmodel.hpp).
#include "model/costmodel.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "model/link.hpp"

namespace model {

namespace {

double payload_bandwidth(const rs_link_params &lp)
{
    return link_rate(lp) * (double)lp.packet_bytes / (double)(lp.packet_bytes + lp.header_bytes);
}

} // namespace

std::vector<uint32_t> ring_weights(const Topology &t, const std::vector<std::vector<int>> &rings,
                                   const std::vector<rs_link_params> *live)
{
    std::vector<uint32_t> w;
    for (const std::vector<int> &ring : rings) {
        double slowest = -1;
        for (size_t i = 0; i < ring.size(); i++)
            for (int ch : t.route(ring[i], ring[(i + 1) % ring.size()])) {
                double bw = payload_bandwidth(live ? (*live)[(size_t)ch] : t.channels()[(size_t)ch].params);
                slowest = slowest < 0 || bw < slowest ? bw : slowest;
            }
        double mbps = slowest < 0 ? 1.0 : std::floor(slowest / 1e6 + 0.5);
        w.push_back((uint32_t)std::min(std::max(mbps, 1.0), 4294967295.0));
    }
    return w;
}

namespace {

// The share of n each channel carries: the engine's ncl_channel_part in proportions, i.e. ring
// weights shared by the channels on one ring, equal without rings or when all rings weigh the
// same (the engine's one reserved element per channel is left out: negligible).
std::vector<double> channel_shares(const Topology &t, const std::vector<std::vector<int>> &rings, uint32_t channels)
{
    std::vector<double> share(channels, 1.0 / channels);
    if (rings.empty())
        return share;
    std::vector<uint32_t> w = ring_weights(t, rings);
    bool equal = true;
    for (size_t k = 1; k < w.size() && k < channels; k++)
        equal = equal && w[k] == w[0];
    if (equal || channels < 2)
        return share;
    double total = 0;
    for (uint32_t c = 0; c < channels; c++) {
        size_t ring = c % w.size();
        double on_ring = (double)(channels / w.size() + (ring < channels % w.size() ? 1 : 0));
        share[c] = (double)w[ring] / on_ring;
        total += share[c];
    }
    for (double &x : share)
        x /= total;
    return share;
}

// The lines of `lines` that are the highest somewhere in n >= 0, by increasing beta.
std::vector<std::pair<double, double>> upper_envelope(std::vector<std::pair<double, double>> lines)
{
    std::sort(lines.begin(), lines.end(), [](const std::pair<double, double> &a, const std::pair<double, double> &b) {
        return a.second < b.second || (a.second == b.second && a.first > b.first);
    });
    std::vector<std::pair<double, double>> hull;
    for (const auto &l : lines) {
        if (!hull.empty() && hull.back().second == l.second)
            continue; // same slope, lower
        while (!hull.empty() && hull.back().first <= l.first)
            hull.pop_back(); // below l at every n >= 0
        while (hull.size() >= 2) {
            // hull.back() is highest nowhere once l overtakes hull[-2] no later than it does
            const auto &a = hull[hull.size() - 2], &b = hull.back();
            double ab = (a.first - b.first) / (b.second - a.second), al = (a.first - l.first) / (l.second - a.second);
            if (al > ab)
                break;
            hull.pop_back();
        }
        hull.push_back(l);
    }
    return hull;
}

// The upper envelope of the sum of two (each the highest of its lines at n).
std::vector<std::pair<double, double>> envelope_sum(const std::vector<std::pair<double, double>> &a,
                                                     const std::vector<std::pair<double, double>> &b)
{
    std::vector<std::pair<double, double>> sum;
    for (const auto &x : a)
        for (const auto &y : b)
            sum.push_back({x.first + y.first, x.second + y.second});
    return upper_envelope(std::move(sum));
}

// `c` with its steps' alpha + beta n (drop) replaced by their envelope (steps): its line the
// steepest of the envelope, the others its own floors, so that it is priced as their highest.
AlgoCost with_envelope(AlgoCost c, std::pair<double, double> drop, const std::vector<std::pair<double, double>> &steps)
{
    std::vector<std::pair<double, double>> lines;
    for (const auto &l : steps)
        lines.push_back({c.alpha_s - drop.first + l.first, c.beta_s - drop.second + l.second});
    if (lines.empty())
        return c;
    c.alpha_s = lines.back().first, c.beta_s = lines.back().second;
    lines.pop_back();
    c.own_floors = lines;
    return c;
}
// `c` and its own floors, alpha_s and beta_s raised by the same terms.
void shift(AlgoCost &c, double alpha_s, double beta_s)
{
    c.alpha_s += alpha_s, c.beta_s += beta_s;
    for (auto &f : c.own_floors)
        f.first += alpha_s, f.second += beta_s;
}
} // namespace

double AlgoCost::predict(uint64_t bytes) const
{
    double n = (double)bytes;
    if (hops <= 0)
        return fixed_s + alpha_s + n * beta_s;
    if (posted) { // ncl_pipeline_segments_posted: `posted` % of the knee n beta / alpha, or the sqrt optimum
        double nb = n * beta_s, a = alpha_s > 0 ? alpha_s : 1e-9, knee = std::floor(nb / a * posted / 100);
        double kc = knee >= hops ? knee : std::sqrt(hops * nb / a), best = -1;
        for (double k = std::max(1.0, std::floor(kc)); k <= std::max(1.0, std::floor(kc)) + 1; k++) {
            double t = hops * (a + nb / k) + (k - 1) * std::max(a, nb / k);
            best = best < 0 || t < best ? t : best;
        }
        return fixed_s + extra_beta_s * n + best;
    }
    // the engine's segment count: the continuous optimum, rounded to the better neighbour
    double head = hops > 1 ? hops - 1 : 0;
    double kc = head > 0 && alpha_s > 0 ? std::sqrt(head * n * beta_s / alpha_s) : 1.0;
    double best = -1;
    for (double k = std::max(1.0, std::floor(kc)); k <= std::max(1.0, std::ceil(kc)); k++) {
        double t = (head + k) * (alpha_s + n * beta_s / k);
        best = best < 0 || t < best ? t : best;
    }
    return fixed_s + extra_beta_s * n + best;
}

CostModel::CostModel(const Topology &topo, const rs_device_params &dev,
                     const std::vector<std::vector<int>> &rings, uint32_t channels)
    : t_(topo), dev_(dev), rings_(rings), node_rings_(rings), channels_(channels ? channels : 1), p_(topo.nranks())
{
}

void CostModel::set_members(const std::vector<int> &members)
{
    members_ = members;
    p_ = members.empty() ? t_.nranks() : (int)members.size();
    node_rings_ = rings_;
    for (std::vector<int> &ring : node_rings_)
        for (int &r : ring)
            r = members.empty() ? r : members[(size_t)r];
    routes_.clear();
}

int CostModel::ring_rank(int c, int pos) const
{
    pos = ((pos % p_) + p_) % p_;
    return rings_.empty() ? pos : rings_[(size_t)c % rings_.size()][(size_t)pos];
}

const CostModel::Route &CostModel::route(int src, int dst) const
{
    auto found = routes_.find((int64_t)src * t_.nnodes() + dst);
    if (found != routes_.end())
        return found->second;
    Route r;
    r.channels = members_.empty() ? t_.route(src, dst) : t_.route(members_[(size_t)src], members_[(size_t)dst]);
    for (int ch : r.channels) {
        r.latency += t_.channels()[(size_t)ch].params.latency;
        double b = payload_bandwidth(t_.channels()[(size_t)ch].params);
        r.slowest = r.slowest == 0 ? b : std::min(r.slowest, b);
    }
    if (!r.channels.empty())
        r.latency += (double)(r.channels.size() - 1) * t_.forward_latency();
    return routes_.emplace((int64_t)src * t_.nnodes() + dst, std::move(r)).first->second;
}

// A device's writes on its DMA engines: each becomes ready when its READY has arrived and the
// write before it on the same queue (Flow::queue) has arrived; the engines take them in the order
// they become ready, each held from issue until its write has arrived (o + the route's latency,
// and hold_beta per byte of n: its bytes at the rate it gets). Returns when each arrives, in the
// writes' order; `per_byte`, if given, the per-byte part of each along the same chains.
struct EngineWrite {
    double ready, hold;
    int queue;
    double hold_beta = 0;
};
static std::vector<double> engines_arrive(const std::vector<EngineWrite> &writes, size_t engines,
                                          std::vector<double> *per_byte = nullptr)
{
    // the writes of each queue in order (a write without a queue is a group of its own)
    std::vector<std::vector<size_t>> groups;
    std::map<int, size_t> group_of;
    for (size_t k = 0; k < writes.size(); k++) {
        if (writes[k].queue < 0 || !group_of.count(writes[k].queue)) {
            if (writes[k].queue >= 0)
                group_of[writes[k].queue] = groups.size();
            groups.push_back({});
        }
        groups[writes[k].queue < 0 ? groups.size() - 1 : group_of[writes[k].queue]].push_back(k);
    }
    std::vector<size_t> next(groups.size(), 0);
    std::vector<double> free_at(engines, 0.0), arrive(writes.size(), 0.0), last(groups.size(), 0.0);
    std::vector<double> free_beta(engines, 0.0), arrive_beta(writes.size(), 0.0), last_beta(groups.size(), 0.0);
    for (size_t n = 0; n < writes.size(); n++) {
        size_t pick = groups.size();
        double pick_ready = 0;
        for (size_t g = 0; g < groups.size(); g++) {
            if (next[g] == groups[g].size())
                continue;
            double ready = std::max(writes[groups[g][next[g]]].ready, last[g]);
            if (pick == groups.size() || ready < pick_ready)
                pick = g, pick_ready = ready;
        }
        size_t k = groups[pick][next[pick]++];
        size_t e = (size_t)(std::min_element(free_at.begin(), free_at.end()) - free_at.begin());
        double ready_beta = last[pick] >= writes[k].ready ? last_beta[pick] : 0.0;
        double start_beta = free_at[e] >= pick_ready ? free_beta[e] : ready_beta;
        free_at[e] = std::max(free_at[e], pick_ready) + writes[k].hold;
        free_beta[e] = start_beta + writes[k].hold_beta;
        arrive[k] = last[pick] = free_at[e];
        arrive_beta[k] = last_beta[pick] = free_beta[e];
    }
    if (per_byte)
        *per_byte = arrive_beta;
    return arrive;
}

// One step of concurrent flows. alpha: the slowest flow's task overhead + route latency (after
// the READY that comes back from its destination, for a first step), or — when a device has more
// writes than DMA engines — when the engines, taking its writes as they become ready, have
// carried the last (engines_arrive). beta: the most loaded channel's bytes over its payload bandwidth,
// a rank's memory traffic (each flow read at its source, written at its destination) over the
// memory bandwidth, or with more writes than engines the engines' makespan of their wire times
// (whole writes, in waves, a queue's one after another), whichever is slowest.
CostModel::Step CostModel::step(const std::vector<Flow> &flows, bool ready_first) const
{
    // per channel: its load; its first flow's arrival there, its last flow's arrival and way on
    // from it (under fair sharing the last to arrive is the last to finish there)
    struct Use {
        double load, first, last, way_on;
    };
    const size_t nodes = (size_t)t_.nnodes();
    std::vector<Use> use(t_.channels().size());
    std::vector<char> in_use(t_.channels().size(), 0);
    std::vector<int> used; // channels with a flow, in the order first reached
    std::vector<double> mem(nodes, 0.0);
    std::vector<double> wire(nodes, 0.0);
    double o = dev_.task_overhead, alpha = 0;
    Step out{0, 0, std::vector<double>(flows.size(), 0.0)};
    const size_t engines = dev_.dma_engines ? dev_.dma_engines : 1u;
    std::vector<double> arrive_beta(flows.size(), 0.0); // per flow: per byte of n, along its engine chain
    std::vector<int> first_hop(flows.size(), -1);       // per flow: the channel it leaves on
    std::vector<double> ready_at(flows.size(), 0.0);    // per flow: its READY's arrival
    std::vector<size_t> per_src(nodes + 1, 0);          // flows by source (counting sort, flow order kept)
    for (size_t k = 0; k < flows.size(); k++) {
        const Flow &f = flows[k];
        if (f.src == f.dst)
            continue;
        const Route &r = route(f.src, f.dst);
        first_hop[k] = r.channels.front();
        double l = r.latency, ready = ready_first ? route_latency(f.dst, f.src) : 0.0;
        double bw = r.slowest; // how long the write holds its engine per byte
        double before = ready + o;
        for (int ch : r.channels) {
            double lat = t_.channels()[(size_t)ch].params.latency;
            double way_on = ready + o + l - before - lat;
            Use &u = use[(size_t)ch];
            if (!in_use[(size_t)ch]) {
                in_use[(size_t)ch] = 1;
                used.push_back(ch);
                u = Use{0, before, before, way_on};
            }
            u.load += f.frac;
            u.first = std::min(u.first, before);
            if (before > u.last || (before == u.last && way_on > u.way_on))
                u.last = before, u.way_on = way_on;
            before += lat + t_.forward_latency();
        }
        if (ready + o + l > alpha)
            out.lat_beta = bw > 0 ? f.frac / bw : 0.0;
        alpha = std::max(alpha, ready + o + l);
        out.arrive[k] = ready + o + l;
        mem[(size_t)f.src] += f.frac;
        mem[(size_t)f.dst] += f.frac;
        if (bw > 0)
            wire[(size_t)f.src] += f.frac / bw;
        arrive_beta[k] = bw > 0 ? f.frac / bw : 0.0;
        ready_at[k] = ready;
        per_src[(size_t)f.src + 1]++;
    }
    for (size_t v = 0; v < nodes; v++)
        per_src[v + 1] += per_src[v];
    std::vector<size_t> by_src(per_src[nodes]), fill(per_src.begin(), per_src.end() - 1);
    for (size_t k = 0; k < flows.size(); k++)
        if (flows[k].src != flows[k].dst)
            by_src[fill[(size_t)flows[k].src]++] = k;
    double beta = 0;
    std::vector<bool> waves(nodes, false); // a device whose writes wait for one another
    for (size_t v = 0; v < nodes; v++) {
        const size_t *mine = by_src.data() + per_src[v], count = per_src[v + 1] - per_src[v];
        bool chained = false; // some queue writes twice
        for (size_t a = 0; a < count && !chained; a++)
            for (size_t b = 0; b < a && !chained; b++)
                chained = flows[mine[a]].queue >= 0 && flows[mine[a]].queue == flows[mine[b]].queue;
        // writes over the device's NIC are the NIC's to move: they take none of the DMA engines
        size_t nics = 0;
        for (size_t a = 0; a < count; a++)
            nics += t_.channels()[(size_t)first_hop[mine[a]]].nic;
        const size_t eng = engines + nics;
        waves[v] = count > eng || chained;
        if (waves[v]) {
            std::vector<EngineWrite> writes, wires; // the device's writes, and the same at wire time per byte
            std::vector<size_t> flow_of(mine, mine + count);
            for (size_t k : flow_of) {
                const Route &r = route(flows[k].src, flows[k].dst);
                wires.push_back(EngineWrite{0.0, arrive_beta[k], flows[k].queue});
                writes.push_back(EngineWrite{ready_at[k], o + r.latency, flows[k].queue, arrive_beta[k]});
            }
            std::vector<double> per_byte;
            std::vector<double> arrive = engines_arrive(writes, eng);
            // each write's bytes share its first channel with the device's writes on it that are
            // issued before its bytes leave and still move then (issued together: a wave)
            for (size_t w = 0; w < arrive.size(); w++) {
                double issue = arrive[w] - writes[w].hold, shared = 0;
                for (size_t x = 0; x < arrive.size(); x++)
                    if (first_hop[flow_of[x]] == first_hop[flow_of[w]] &&
                        arrive[x] - writes[x].hold <= issue + o && arrive[x] > issue + 1e-12)
                        shared++;
                writes[w].hold_beta *= std::max(1.0, shared);
            }
            arrive = engines_arrive(writes, eng, &per_byte);
            for (size_t w = 0; w < arrive.size(); w++) {
                out.arrive[flow_of[w]] = arrive[w];
                arrive_beta[flow_of[w]] = per_byte[w];
                alpha = std::max(alpha, arrive[w]);
            }
            beta = std::max(beta, wire[v] / (double)std::min(eng, writes.size()));
            // the mesh family's blocks (writes on send queues): whole writes, not a fluid, that
            // the engines carry in waves, a queue's in order (the ring's channels move rounds
            // of a slice, which do share the engines evenly)
            bool queued = std::all_of(writes.begin(), writes.end(), [](const EngineWrite &w) { return w.queue >= 0; });
            if (queued)
                for (double t : engines_arrive(wires, eng))
                    beta = std::max(beta, t);
        }
    }
    double link_beta = 0, link_alpha = alpha; // the (beta, alpha) highest in that order: any channel order
    for (int ch : used) {
        const rs_link_params &lp = t_.channels()[(size_t)ch].params;
        const Use &u = use[(size_t)ch];
        double b = u.load / payload_bandwidth(lp), a = u.first + lp.latency + u.way_on;
        if (b > link_beta || (b == link_beta && a > link_alpha))
            link_beta = b, link_alpha = a;
    }
    double beta_engines = beta, beta_memory = 0;
    for (double m : mem)
        beta_memory = std::max(beta_memory, m / dev_.mem_bandwidth);
    beta = std::max({beta, link_beta, beta_memory});
    out.alpha = alpha, out.beta = beta;
    out.link_alpha = link_beta >= beta ? std::min(alpha, link_alpha) : alpha; // the link sets beta
    out.envelope = drain_lines(flows, out.arrive, arrive_beta);
    // a device's writes that leave on one channel: where its engines issue them in waves, each
    // wave's bytes after the one before has arrived, that channel carries all of them and idles
    // for the waves' latencies: the last one's arrival (latency part) + their bytes. (Writes on
    // engines and queues of their own move together from their own starts: drain_lines.)
    std::map<std::pair<int, int>, std::pair<double, double>> leaving; // (src, channel) -> line
    double first = alpha;
    for (size_t k = 0; k < flows.size(); k++)
        if (flows[k].src != flows[k].dst) {
            first = std::min(first, out.arrive[k]);
            out.envelope.push_back({out.arrive[k], arrive_beta[k]});
            if (!waves[(size_t)flows[k].src])
                continue;
            auto &l = leaving.emplace(std::make_pair(flows[k].src, first_hop[k]), std::make_pair(0.0, 0.0)).first->second;
            l.first = std::max(l.first, out.arrive[k]);
            l.second += flows[k].frac / payload_bandwidth(t_.channels()[(size_t)first_hop[k]].params);
        }
    for (const auto &kv : leaving)
        out.envelope.push_back(kv.second);
    out.envelope.push_back({first, std::max(beta_engines, beta_memory)});
    out.envelope = upper_envelope(std::move(out.envelope));
    return out;
}

// Per channel, its flows by when their heads reach it (each write issued when `arrive` says,
// less its o + route latency): from the k-th arrival on, the bytes of every flow arriving then or
// later pass after it, and the last of them still has its way on (the channel's latency and the
// hops after it). Lines (alpha, beta per byte of n), one per channel and arrival.
std::vector<std::pair<double, double>> CostModel::drain_lines(const std::vector<Flow> &flows,
                                                             const std::vector<double> &arrive,
                                                             const std::vector<double> &arrive_beta) const
{
    struct Head {
        double at, frac, way_on, at_beta; // at_beta: per byte of n, the writes before it on its engine
    };
    // every channel's heads in flow order, counted first and then placed (the sort below then
    // sees each channel's heads in the order of the flows)
    const size_t nch = t_.channels().size();
    std::vector<size_t> start(nch + 1, 0);
    for (const Flow &f : flows)
        if (f.src != f.dst)
            for (int ch : route(f.src, f.dst).channels)
                start[(size_t)ch + 1]++;
    for (size_t c = 0; c < nch; c++)
        start[c + 1] += start[c];
    std::vector<Head> heads(start[nch]);
    std::vector<size_t> fill(start.begin(), start.end() - 1);
    for (size_t k = 0; k < flows.size(); k++) {
        const Flow &f = flows[k];
        if (f.src == f.dst)
            continue;
        const Route &r = route(f.src, f.dst);
        double at = arrive[k] - r.latency; // issued + o
        double at_beta = std::max(0.0, arrive_beta[k] - (r.slowest > 0 ? f.frac / r.slowest : 0.0));
        for (int ch : r.channels) {
            heads[fill[(size_t)ch]++] = Head{at, f.frac, arrive[k] - at, at_beta};
            at += t_.channels()[(size_t)ch].params.latency + t_.forward_latency();
        }
    }
    std::vector<std::pair<double, double>> lines;
    for (size_t c = 0; c < nch; c++) {
        if (start[c] == start[c + 1])
            continue;
        Head *h = heads.data() + start[c];
        const size_t n = start[c + 1] - start[c];
        std::sort(h, h + n, [](const Head &a, const Head &b) {
            return a.at < b.at || (a.at == b.at && a.way_on < b.way_on);
        });
        double bw = payload_bandwidth(t_.channels()[c].params), after = 0;
        for (size_t k = n; k-- > 0;) {
            after += h[k].frac;
            if (k == 0 || h[k - 1].at < h[k].at)
                lines.push_back({h[k].at + h[n - 1].way_on, h[k].at_beta + after / bw});
        }
    }
    return lines;
}

// One ring step: every channel's ranks each send their share / p of n to the next.
std::vector<CostModel::Flow> CostModel::ring_step_flows(const std::vector<double> &share) const
{
    std::vector<Flow> flows;
    for (uint32_t ch = 0; ch < channels_; ch++)
        for (int i = 0; i < p_; i++)
            flows.push_back(Flow{ring_rank((int)ch, i), ring_rank((int)ch, i + 1), share[ch] / p_});
    return flows;
}

// Ring allreduce / reduce-scatter / allgather: every channel moves its share (channel_shares:
// 1/channels, or by ring bandwidth) / p of n per step, all channels at once; reduce-scatter's
// first target fill is on the critical path, whole or (pieced) its first piece's.
AlgoCost CostModel::ring(ncl_coll coll, bool pieced) const
{
    AlgoCost c{coll, NCL_ALGO_RING, 0, 0, 0};
    if (p_ < 2)
        return c;
    std::vector<double> share = channel_shares(t_, node_rings_, channels_);
    std::vector<Flow> flows = ring_step_flows(share);
    Step s = step(flows), s0 = step(flows, true);
    double steps = coll == NCL_COLL_ALLREDUCE ? 2.0 * (p_ - 1) : (double)(p_ - 1);
    // the first steps land in landing zones (on more than 2 ranks): no READY first; allreduce and
    // reduce-scatter also fill nothing on the path (landing(): units land as they are)
    const bool land = landing();
    bool zoned = zones_ && p_ > 2 && (coll == NCL_COLL_ALLGATHER || land);
    c.alpha_s = (zoned ? s.alpha : s0.alpha) + (steps - 1) * s.alpha;
    // allgather and allreduce post their records where every channel has a DMA engine
    // (ring_allgather.c, ring_allreduce.c); a staged allreduce waits for its slots anyway
    const bool engines = !dev_.dma_engines || channels_ <= dev_.dma_engines;
    const bool posted = (coll == NCL_COLL_ALLGATHER && engines) || (coll == NCL_COLL_ALLREDUCE && engines && !staged_) ||
                        (coll == NCL_COLL_REDUCE_SCATTER && land && !staged_);
    if (posted) {
        // their records are posted: a rank's next unit does not wait for its last one to land, so
        // the steps follow the chunks, each over its own links: the slowest chunk's p - 1 links'
        // latencies, not p - 1 times the slowest link's (a fat tree: 2 of 8 cross the spine)
        c.alpha_s = 0;
        for (uint32_t ch = 0; ch < channels_; ch++) {
            auto a = [&](const Step &st, long k) { return st.arrive[(size_t)ch * p_ + (size_t)(k % p_)]; };
            double later = 0; // the chunk's steps after its first, a window slid round the ring
            for (long k = 1; k < (long)steps; k++)
                later += a(s, k);
            for (long j = 0; j < p_; j++) {
                c.alpha_s = std::max(c.alpha_s, a(zoned ? s : s0, j) + later);
                later += a(s, j + (long)steps) - a(s, j + 1);
            }
        }
    }
    c.beta_s = steps * s.beta;
    if (staged_ && coll != NCL_COLL_ALLGATHER) {
        // every reduce-scatter step: the receiver reduces what landed (src + dst read, dst
        // written: 3 bytes of memory per byte, all channels' at once) before it sends on
        double chunk = *std::max_element(share.begin(), share.end()) / p_;
        double reduce = std::max(chunk / dev_.reduce_bandwidth, 3.0 / p_ / dev_.mem_bandwidth);
        c.alpha_s += (p_ - 1) * dev_.task_overhead;
        c.beta_s += (p_ - 1) * reduce;
    }
    if (coll == NCL_COLL_ALLREDUCE) {
        // out of place the chunks it reduces into first hold the rank's own contribution: with a
        // fill queue per channel only the first piece's copy is on the path; without room for
        // them (ncl_helper_room) every channel copies its span but one chunk up front, all
        // channels at once through the memory (2 bytes moved per byte)
        double E = dev_.dma_engines ? (double)dev_.dma_engines : NCL_MAX_QUEUES;
        bool fill = 2.0 * channels_ <= std::min((double)NCL_MAX_QUEUES, E);
        c.oop_alpha_s = fill && land ? 0.0 : dev_.task_overhead + (fill ? s.alpha : 0.0);
        c.oop_beta_s = fill ? 0.0 : 2.0 * (p_ - 1) / p_ / dev_.mem_bandwidth;
    }
    if (coll == NCL_COLL_REDUCE_SCATTER && land) {
        // nothing filled but the output, off the path
    } else if (coll == NCL_COLL_REDUCE_SCATTER && !staged_ && pieced) {
        c.alpha_s += dev_.task_overhead + 3 * s.alpha; // see ring_rs_pieced
    } else if (coll == NCL_COLL_REDUCE_SCATTER && !staged_) {
        // the first target's fill; without fill queues the ring queue does all p-2 in a row
        double fills = fill_queues() ? 1.0 : (double)(p_ - 2);
        c.alpha_s += fills * dev_.task_overhead;
        c.beta_s += fills * 2.0 * *std::max_element(share.begin(), share.end()) / p_ / dev_.mem_bandwidth;
        if (p_ == 2) {
            // 2 ranks fill only the output, out of place, before its READY: on the path, every
            // channel's at once through memory
            c.oop_alpha_s = dev_.task_overhead;
            c.oop_beta_s = 2.0 / p_ / dev_.mem_bandwidth;
        }
    }
    return c;
}

// Ring reduce-scatter with its first target filled and written in pieces (ncl_lead_piece: when
// memory is over 7x the link, from about alpha M / 2 bytes on): the first piece's fill, o + alpha,
// instead of the whole chunk's, and about one alpha more per piece (the line assumes 2 more).
std::vector<AlgoCost> CostModel::ring_rs_pieced() const
{
    if (staged_ || landing() || !fill_queues() || dev_.mem_bandwidth < 7.0 * t_.spec().link.bandwidth)
        return {};
    return {ring(NCL_COLL_REDUCE_SCATTER, true)};
}

// Ring reduce-scatter on 2 ranks out of place with a fill queue per channel, in rounds: only the
// first round's fill is on the path (the fill queues copy the later rounds while the ring
// writes), in place of ring()'s whole chunk: a slice per channel, or where memory is over 7x the
// link and a slice holds two, the first of ncl_lead_piece's pieces (alpha M / 2 bytes, alpha the
// engine's link latency + task overhead, in whole 4 KiB pages).
std::vector<AlgoCost> CostModel::ring_rs_pair_rounds() const
{
    if (p_ != 2 || staged_ || slice_ == 0 || 2 * channels_ > NCL_MAX_QUEUES)
        return {};
    const double M = dev_.mem_bandwidth, alpha = t_.spec().link.latency + dev_.task_overhead;
    const double first = std::ceil(alpha * M / 2.0 / 4096.0) * 4096.0;
    const bool pieces = M >= 7.0 * t_.spec().link.bandwidth && (double)slice_ >= 2.0 * first;
    AlgoCost c = ring(NCL_COLL_REDUCE_SCATTER);
    c.oop_alpha_s = dev_.task_overhead + 2.0 * channels_ * (pieces ? first : (double)slice_) / M;
    c.oop_beta_s = 0;
    return {c};
}

// Ring allreduce's and reduce-scatter's units land as they are and the receiver adds its
// contribution on the way out (ring_allreduce.c, ring_reduce_scatter.c): every step reduces
// inline, on more than 2 ranks, with REDUCE_WRITE.
bool CostModel::landing() const
{
    return reduce_write_ && !staged_ && p_ > 2;
}

// Ring allreduce on 3 ranks with landing zones: step 0 lands in the zone, but the last
// reduce-scatter step, here step 1, reduces into the receiver's recv after its READY, which out
// of place it records once its fill queue has copied its input there. With no step between them
// to hide it, that READY sets when step 1 starts: a floor of the READY's way (s0 - s: the notify
// and the wait that takes it), out of place after the fill (o + the chunk's copy, at most a
// step's transfer: only the first round's fill gates), then the line's steps after the first
// (a one-way 3-ring at 64 KiB out of place: 12.96 us priced, 14.44 simulated, 14.44 now).
std::vector<AlgoCost> CostModel::ring_ar_ready_floor(const AlgoCost &line) const
{
    const double E = dev_.dma_engines ? (double)dev_.dma_engines : NCL_MAX_QUEUES;
    if (p_ != 3 || !zones_ || !landing() || staged_ || 2.0 * channels_ > std::min((double)NCL_MAX_QUEUES, E))
        return {};
    std::vector<double> share = channel_shares(t_, node_rings_, channels_);
    std::vector<Flow> flows = ring_step_flows(share);
    Step s = step(flows), s0 = step(flows, true);
    AlgoCost ready{NCL_COLL_ALLREDUCE, NCL_ALGO_RING, s0.alpha - s.alpha + line.alpha_s - s.alpha,
                   line.beta_s - s.beta, 0};
    ready.floor = true;
    ready.oop_alpha_s = dev_.task_overhead;
    ready.oop_beta_s = std::min(2.0 * *std::max_element(share.begin(), share.end()) / p_ / dev_.mem_bandwidth, s.beta);
    return {ready};
}

// ring_reduce_scatter.c gives each channel a fill queue when twice the channels fit the queues
// (NCL_MAX_QUEUES on the model's NPU).
bool CostModel::fill_queues() const
{
    return p_ > 2 && 2 * channels_ <= NCL_MAX_QUEUES;
}

// Ring reduce-scatter's fills (the receiver's own contribution copied into each accumulation
// target, in place p-2 per channel) are DMA tasks too. On their fill queues they run beside the
// ring's writes, each of which holds a DMA engine until its data has arrived, so with as many
// channels as engines the engines set the pace (the 8-NPU server: 4 channels, 4 engines); and
// each step moves every byte through memory five times (read at the sender, read and written at
// the receiver, read and written by a fill). Floors under the step line, in place.
std::vector<AlgoCost> CostModel::ring_rs_floors() const
{
    if (staged_ || p_ < 3)
        return {};
    std::vector<Flow> flows = ring_step_flows(channel_shares(t_, node_rings_, channels_));
    Step s = step(flows), s0 = step(flows, true);
    double C = channels_, E = dev_.dma_engines ? (double)dev_.dma_engines : 1.0, o = dev_.task_overhead;
    double M = dev_.mem_bandwidth, steps = p_ - 1.0, fills = landing() ? 0.0 : p_ - 2.0;
    AlgoCost engines{NCL_COLL_REDUCE_SCATTER, NCL_ALGO_RING, (steps * C * s.alpha + fills * C * o) / E,
                     (steps * C * s.beta + fills * 2.0 / p_ / M) / E, 0};
    engines.floor = true;
    AlgoCost memory{NCL_COLL_REDUCE_SCATTER, NCL_ALGO_RING, landing() && zones_ ? s.alpha : s0.alpha,
                    (3.0 * steps + 2.0 * fills) / p_ / M, 0};
    memory.floor = true;
    std::vector<AlgoCost> out;
    if (fill_queues())
        out.push_back(engines);
    out.push_back(memory);
    return out;
}

// Pipelined chains from the root (rank 0) along each channel's ring, every channel carrying its
// share of n (channel_shares); reduce runs the same chain the other way. A segment's step costs the hop's
// alpha; filling the pipeline costs their sum, so alpha is the mean over hops; the most loaded
// channel sets the pace (beta).
AlgoCost CostModel::chain(ncl_coll coll) const
{
    AlgoCost c{coll, coll == NCL_COLL_BROADCAST ? NCL_ALGO_CHAIN : NCL_ALGO_RING, 0, 0, 0};
    if (p_ < 2)
        return c;
    std::vector<Flow> flows;
    uint32_t chans = coll == NCL_COLL_BROADCAST ? channels_ : 1;
    std::vector<double> share = chans > 1 ? channel_shares(t_, node_rings_, chans) : std::vector<double>{1.0};
    // a broadcast's chain follows the rings from the root; a reduce's (ring_reduce.c) runs in rank
    // order, root + 1 -> root + 2 -> ... -> root
    auto link = [&](uint32_t ch, int i) {
        return coll == NCL_COLL_BROADCAST ? std::make_pair(ring_rank((int)ch, i), ring_rank((int)ch, i + 1))
                                          : std::make_pair((i + 1) % p_, (i + 2) % p_);
    };
    for (uint32_t ch = 0; ch < chans; ch++)
        for (int i = 0; i + 1 < p_; i++)
            flows.push_back(Flow{link(ch, i).first, link(ch, i).second, share[ch]});
    Step s = step(flows);
    double sum = 0, slowest = 0;
    for (int i = 0; i + 1 < p_; i++) {
        const double hop = dev_.task_overhead + route_latency(link(0, i).first, link(0, i).second);
        sum += hop, slowest = std::max(slowest, hop);
    }
    c.beta_s = s.beta;
    c.hops = p_ - 1;
    // the engine sizes segments for its largest portion: one chain carries that share of n
    c.chain_div = (int)std::lround(1.0 / *std::max_element(share.begin(), share.end()));
    // the head waits for its successor's READY before the first segment (broadcast; a reduce's
    // tail gets the grants of its predecessor the same way); a broadcast's first segments land in
    // landing zones instead, and where they all do the last rank copies the last out at the end
    c.fixed_s = zones_ && coll == NCL_COLL_BROADCAST ? dev_.task_overhead : route_latency(link(0, 0).second, link(0, 0).first);
    if (coll != NCL_COLL_REDUCE || p_ < 3) {
        // a segment leaves a hop once the one before it has left it, so the slowest hop sets the
        // pace: sum alpha_i + (k - 1) alpha_max + (hops - 1 + k) n beta / k, the pipeline form
        // with alpha_max and fixed giving back sum - hops alpha_max (the engine's segment count
        // follows the same alpha). Priced with the mean, a 32-NPU fat tree's chain (3 of its 31
        // hops through the spine) ran 9-13 % over its price.
        c.alpha_s = slowest;
        c.fixed_s += sum - c.hops * slowest;
    } else {
        // ring_reduce.c posts every record, grants up to 16 slots ahead and refills them on a
        // queue of its own: a segment's latency overlaps the next ones' transfers, so each hop
        // pays o + its latency once, and a segment then costs its transfer or whichever is the
        // longest of: its forward's issue (o), its forward's way (o + L) over the writes the
        // queue keeps in flight, its share of a credit's round trip over the slots (a one-way
        // ring's goes p-1 hops back):
        //   sum (o + L) + hops n beta / k + (k - 1) max(alpha, n beta / k)
        // (one queue: the forward and the refill are issued there, 2 o)
        const double o = dev_.task_overhead;
        double seg = fill_queue_ ? o : 2 * o;
        for (int i = 0; i + 1 < p_; i++) {
            int a = link(0, i).first, b = link(0, i).second;
            seg = std::max(seg, (2 * o + route_latency(a, b) + route_latency(b, a)) / 16);
            seg = std::max(seg, (o + route_latency(a, b)) / in_flight_);
        }
        // and the first grant leaves once its slot's fill (a task) is done
        c.fixed_s += sum - c.hops * seg + dev_.task_overhead;
        c.alpha_s = seg;
        // segments at 3/4 of the knee, or at 60 % where two hops of the chain share a link
        // (ncl_pipeline_segments_posted)
        double alone = 0;
        for (const Flow &f : flows)
            alone = std::max(alone, step({f}).beta);
        c.posted = s.beta > 1.01 * alone ? 60 : 75;
    }
    return c;
}

// Binomial tree from rank 0 (REFERENCE.md: ceil(lg p) sends on the critical path), as the engine
// runs it: a parent sends to its children one after another, farthest (largest subtree) first,
// each child starting when its data has arrived; the first write to a child waits for its READY.
// A reduce runs in pipelined rounds (below).
// A broadcast's writes are posted: the next goes once the previous one has left the wire (n beta
// after it started), whenever its READY is in, and its DATA rides it. When a rank has its data is
// then the latest of several lines alpha + k n beta (a READY's latency, or k writes on the wire
// before it): the lines no other one exceeds at every n, the first as the line, the others floors.
std::vector<AlgoCost> CostModel::tree(ncl_coll coll) const
{
    AlgoCost c{coll, NCL_ALGO_TREE, 0, 0, 0};
    if (p_ < 2)
        return {c};
    int top = 1;
    while (top < p_)
        top <<= 1;
    const double o = dev_.task_overhead;
    double beta = 0;
    const bool down = coll == NCL_COLL_BROADCAST;
    for (int v = 0; v < p_; v++) // every write's own n beta, the slowest
        for (int m = (v ? (v & -v) : top) >> 1; m >= 1; m >>= 1)
            if (v + m < p_)
                beta = std::max(beta, step({down ? Flow{v, v + m, 1.0} : Flow{v + m, v, 1.0}}).beta);
    if (!down) {
        // tree_reduce.c: one round is a chain of grants and writes. Rank v's target is ready after
        // its fill (o; the root in place: at once); it grants c_0, takes its round in, grants c_1,
        // ...: child c_j's write starts once the grant has arrived and c_j has its subtree's sum,
        // and lands o + its route's latency later. done(v): when v holds its subtree's round.
        std::vector<double> done((size_t)p_, 0.0);
        for (int v = p_ - 1; v >= 0; v--) { // children (v + 2^j) come after their parent
            int span = v ? (v & -v) : top;
            if (span == 1 || v + 1 >= p_)
                continue; // a leaf: its input is its sum
            double t = v ? o : 0.0; // out of place the root's fill too: oop_alpha_s
            for (int m = 1; m < span && v + m < p_; m <<= 1)
                t = std::max(t + route_latency(v, v + m), done[(size_t)(v + m)]) + o + route_latency(v + m, v);
            done[(size_t)v] = t;
        }
        // Rounds pipeline (line 0; k of them, the engine's count from this line): children are
        // granted ahead; the first round crosses ceil(lg p) sends one after another at the root,
        // each later one adds its beta and, where rounds are few, a write's issue and the slowest
        // grant's way (alpha):  (h - 1 + k)(alpha + n beta / k) + done(0) - h alpha.
        // Where the children's writes share a channel (a switch port, a ring's last hop into
        // the root) that channel sets the pace instead: busy from the first write's arrival to
        // the last one's way on, with every child writing at once (a floor).
        std::vector<Flow> flows;
        for (int v = 1; v < p_; v++)
            flows.push_back(Flow{v, v - (v & -v), 1.0});
        Step all = step(flows, true);
        int h = 0;
        while ((1 << h) < p_)
            h++;
        double lat = 0; // the slowest grant's way to a child
        for (const Flow &f : flows)
            lat = std::max(lat, route_latency(f.dst, f.src));
        c.hops = h;
        c.alpha_s = o + lat;
        c.beta_s = beta;
        c.chain_div = 1;
        c.fixed_s = done[0] - h * c.alpha_s;
        c.oop_alpha_s = o;
        // Fine rounds (its own variant, which the engine runs where it is the cheaper): k = n beta / 2
        // alpha (NCL_TREE_ROUND_ALPHAS), a round's transfer twice its latency and issue, so that
        // both hide behind the transfers and only the first round's h sends in a row stay:
        //   done(0) - alpha + n beta + h n beta / k = done(0) + (2h - 1) alpha + n beta,
        // and once k reaches NCL_TREE_ROUNDS_MAX the floor done(0) - alpha + n beta (1 + h / kmax).
        AlgoCost fine = c, capped = c, shared = c;
        fine.hops = 0, fine.chain_div = 0, fine.fixed_s = 0, fine.variant = NCL_COST_VARIANT_TREE_FINE;
        fine.alpha_s = done[0] + (NCL_TREE_ROUND_ALPHAS * h - 1) * c.alpha_s;
        capped.hops = 0, capped.chain_div = 0, capped.fixed_s = 0, capped.floor = true;
        capped.alpha_s = done[0] - c.alpha_s;
        capped.beta_s = beta * (1.0 + (double)h / NCL_TREE_ROUNDS_MAX);
        shared.hops = 0, shared.chain_div = 0, shared.fixed_s = 0, shared.floor = true;
        shared.alpha_s = all.link_alpha + o; // the fill before the first grant
        shared.beta_s = all.beta;
        // After that channel has drained, the root's children after the last one whose writes
        // cross it still take their last round in, one after another (each is granted a round
        // once the child before it has landed it): per child its grant's way, an issue, its
        // write's way and a round's bytes, n beta_j / k with k the first line's round count,
        // sqrt((h - 1) n beta / alpha). As a pipeline floor (1 + k')(a + n beta
        // / k') + the rest: its 2 sqrt(n beta a) is those bytes when a = (sum beta_j)^2 alpha /
        // (4 (h - 1) beta^2).
        std::map<int, double> load; // per channel: seconds per byte of n, every child at once
        for (const Flow &f : flows)
            for (int ch : route(f.src, f.dst).channels)
                load[ch] += 1.0 / payload_bandwidth(t_.channels()[(size_t)ch].params);
        double busiest = 0;
        for (const auto &kv : load)
            busiest = std::max(busiest, kv.second);
        int last_shared = -1, d = 0; // the root's children c_j = 2^j
        for (int m = 1; m < p_; m <<= 1, d++)
            for (int ch : route(m, 0).channels)
                if (load[ch] >= 0.999 * busiest)
                    last_shared = d;
        double tail_lat = 0, tail_beta = 0;
        for (int j = last_shared + 1; last_shared >= 0 && j < d; j++) {
            tail_lat += route_latency(0, 1 << j) + o + route_latency(1 << j, 0);
            tail_beta += step({Flow{1 << j, 0, 1.0}}).beta;
        }
        if (tail_beta > 0 && h > 1 && beta > 0) {
            double a = tail_beta * tail_beta * c.alpha_s / (4.0 * (h - 1) * beta * beta);
            shared.hops = 2, shared.chain_div = 1;
            shared.alpha_s = a;
            shared.beta_s = beta;
            shared.extra_beta_s = all.beta - beta;
            shared.fixed_s = std::max(0.0, all.link_alpha + o + tail_lat - a);
        }
        // The engine counts its rounds by the algorithm's last pipelined entry (ncl_plan.c): the
        // first line's, or with trailing children this floor's, sqrt((h - 1) n beta / a) rounds,
        // 2 sqrt(h - 1) beta / sum beta_j times the first line's: rounds that small shorten the
        // tail and the first children's start alike (4 x 8 torus 2 MiB: 284.4 -> 257.4 us,
        // priced 254.6; a switch or the server has no trailing child and keeps its count).
        if (shared.hops)
            return {c, fine, capped, shared};
        return {shared, c, fine, capped};
    }
    using Lines = std::vector<std::pair<double, int>>; // alpha, writes on the wire before
    auto upper = [](Lines l) {                        // the lines no other one exceeds everywhere
        std::sort(l.begin(), l.end(), [](auto a, auto b) { return a.second != b.second ? a.second > b.second : a.first > b.first; });
        Lines out;
        for (auto &x : l)
            if (out.empty() || x.first > out.back().first)
                out.push_back(x);
        return out;
    };
    std::vector<Lines> at((size_t)p_);
    at[0] = {{0.0, 0}};
    Lines all;
    for (int v = 0; v < p_; v++) { // parents (v minus its lowest bit) come before their children
        Lines go = at[(size_t)v]; // when the next write may start
        for (int m = (v ? (v & -v) : top) >> 1; m >= 1; m >>= 1) {
            int child = v + m;
            if (child >= p_)
                continue;
            go.push_back({route_latency(child, v), 0}); // its READY
            go = upper(go);
            Lines arrive = go;
            for (auto &x : arrive)
                x.first += o + route_latency(v, child), x.second++;
            at[(size_t)child] = arrive;
            all.insert(all.end(), arrive.begin(), arrive.end());
            for (auto &x : go) // the next write waits for this one to leave the wire
                x.second++;
        }
    }
    std::vector<AlgoCost> out;
    for (auto &x : upper(all)) {
        AlgoCost l = c;
        l.alpha_s = x.first, l.beta_s = x.second * beta, l.floor = !out.empty();
        out.push_back(l);
    }
    return out;
}

// Halving-doubling (Rabenseifner): fold the ranks beyond the largest power of two p' onto their
// partners, reduce-scatter by recursive halving (partner r ^ mask, half the data each step),
// allgather by recursive doubling, unfold.
std::vector<AlgoCost> CostModel::halving_doubling(ncl_coll coll) const
{
    AlgoCost c{coll, NCL_ALGO_HD, 0, 0, 0};
    if (p_ < 2)
        return {c};
    int pp = 1;
    while (pp * 2 <= p_)
        pp *= 2;
    int extra = p_ - pp; // ranks 2i+1 (i < extra) fold onto 2i
    auto core = [&](int i) { return i < extra ? 2 * i : i + extra; };
    std::vector<Step> steps;
    std::vector<Flow> first;
    if (extra) {
        std::vector<Flow> fold;
        for (int i = 0; i < extra; i++)
            fold.push_back(Flow{2 * i + 1, 2 * i, coll == NCL_COLL_ALLGATHER ? 1.0 / p_ : 1.0});
        steps.push_back(step(fold, true));
        first = fold;
    }
    bool rs = coll != NCL_COLL_ALLGATHER, ag = coll != NCL_COLL_REDUCE_SCATTER;
    // the halving steps land in scratch slots the receiver then reduces: one more task each
    double reduce = std::max(1.0 / dev_.reduce_bandwidth, 3.0 / dev_.mem_bandwidth);
    for (int pass = 0; pass < 2; pass++) {
        if ((pass == 0 && !rs) || (pass == 1 && !ag))
            continue;
        for (int k = 0; (1 << k) < pp; k++) {
            int mask = pass == 0 ? pp >> (k + 1) : 1 << k; // halving: far first; doubling: near first
            double frac = (double)mask / pp; // halving: 1/2 first; doubling: 1/pp first
            std::vector<Flow> flows;
            for (int i = 0; i < pp; i++)
                flows.push_back(Flow{core(i), core(i ^ mask), frac});
            Step s = step(flows, first.empty());
            if (first.empty())
                first = flows;
            if (pass == 0) {
                s.alpha += dev_.task_overhead, s.link_alpha += dev_.task_overhead;
                s.beta += frac * reduce, s.lat_beta += frac * reduce;
            }
            steps.push_back(s);
        }
    }
    if (extra) { // the folded ranks get their share back: everything, all but their block, theirs
        double back = coll == NCL_COLL_ALLREDUCE ? 1.0 : coll == NCL_COLL_ALLGATHER ? 1.0 - 1.0 / p_ : 1.0 / p_;
        std::vector<Flow> unfold;
        for (int i = 0; i < extra; i++)
            unfold.push_back(Flow{2 * i, 2 * i + 1, back});
        steps.push_back(step(unfold));
    }
    if (coll == NCL_COLL_ALLGATHER) { // out of place the own block is copied into recv first, a slice a task
        c.oop_alpha_s = dev_.task_overhead;
        c.oop_beta_s = (2.0 / dev_.mem_bandwidth + (slice_ ? dev_.task_overhead / (double)slice_ : 0.0)) / p_;
    }
    // the line: each step's link work overlapping its latency; a floor: each step's slowest
    // flow, latency and its own bytes (where latency rules)
    AlgoCost slowest = c;
    slowest.floor = true;
    for (const Step &s : steps) {
        c.alpha_s += s.link_alpha, c.beta_s += s.beta;
        slowest.alpha_s += s.alpha, slowest.beta_s += s.lat_beta;
    }
    return {c, slowest};
}

// Full mesh: every rank writes its block for each peer at once; reduce-scatter then reduces the
// p-1 received blocks locally, one task each (3 bytes of memory traffic per byte, or the reduce
// unit's rate). `rounds`: the line for a reduce-scatter in several rounds (mesh_rounds); `waves`:
// the reduces go in the order of distance, which the blocks land in (not det's rank order).
// The full mesh's send queues as small buffers have them (ncl_mesh_send_queues): one per peer, at
// most the queues. (Large ones keep to the DMA engines, which changes their latency, not their
// bandwidth terms.)
int CostModel::mesh_send_queues() const
{
    return std::min(p_ - 1, (int)NCL_MAX_QUEUES);
}

// The distance of the peer at index d = 1..p-1 in the engine's order, and its inverse
// (ncl_mesh_distance: with a queue per peer from p/2 up, then 1 .. p/2 - 1; else nearest first).
int CostModel::mesh_distance(int d) const
{
    if (mesh_send_queues() < p_ - 1)
        return d;
    return (d - 1 + p_ / 2 - 1) % (p_ - 1) + 1;
}
int CostModel::mesh_index(int distance) const
{
    if (mesh_send_queues() < p_ - 1)
        return distance;
    return (distance - 1 + (p_ - 1) - (p_ / 2 - 1) % (p_ - 1)) % (p_ - 1) + 1;
}

// Every rank writes `frac` of n to each peer, in the engine's order: each rank's peers by index d
// (mesh_distance), index d on send queue (d-1) mod S (mesh_send_queues).
std::vector<CostModel::Flow> CostModel::mesh_flows(double frac) const
{
    const int send_queues = mesh_send_queues();
    std::vector<Flow> all;
    for (int a = 0; a < p_; a++)
        for (int d = 1; d < p_; d++)
            all.push_back(Flow{a, (a + mesh_distance(d)) % p_, frac, (d - 1) % send_queues});
    return all;
}

// When the receivers' p-1 local reduces on their local queue end, one task each, each once its
// block has arrived (s0.arrive) and the one before it is done: in the fixed order of distance
// (mesh, `by_distance`: of index) or of rank (det). They are DMA tasks too, sharing the engines with the
// device's own writes; without a spare queue the local queue is the last send queue, which
// writes first. The slowest receiver sets the end.
double CostModel::local_reduces_end(const std::vector<Flow> &all, const Step &s0, bool by_distance) const
{
    const int send_queues = mesh_send_queues();
    const int local = send_queues < (int)NCL_MAX_QUEUES ? send_queues : send_queues - 1;
    const size_t engines = dev_.dma_engines ? dev_.dma_engines : 1u;
    double end = 0;
    for (int v = 0; v < p_; v++) {
        std::vector<EngineWrite> tasks;
        std::vector<std::pair<int, double>> in; // (order key, arrival)
        for (size_t k = 0; k < all.size(); k++) {
            if (all[k].src == v)
                tasks.push_back(EngineWrite{s0.arrive[k] - dev_.task_overhead - route_latency(v, all[k].dst),
                                            dev_.task_overhead + route_latency(v, all[k].dst), all[k].queue});
            if (all[k].dst == v)
                in.push_back({by_distance ? mesh_index((v - all[k].src + p_) % p_) : all[k].src, s0.arrive[k]});
        }
        std::sort(in.begin(), in.end());
        for (const auto &a : in)
            tasks.push_back(EngineWrite{a.second, dev_.task_overhead, local});
        for (double t : engines_arrive(tasks, engines))
            end = std::max(end, t);
    }
    return end;
}

std::vector<AlgoCost> CostModel::mesh(ncl_coll coll, bool rounds, bool waves) const
{
    AlgoCost c{coll, NCL_ALGO_MESH, 0, 0, 0};
    if (p_ < 2)
        return {c};
    std::vector<Flow> all = mesh_flows(1.0 / p_);
    Step s = step(all), s0 = step(all, true);
    double reduce = (double)(p_ - 1) / p_ *
                    std::max(1.0 / dev_.reduce_bandwidth, 3.0 / dev_.mem_bandwidth);
    int phases = coll == NCL_COLL_ALLREDUCE ? 2 : 1;
    // allreduce: the local queue's record hands the reduced block to the send queues (a record
    // is posted with the reduce before it: no task of its own)
    c.alpha_s = s0.alpha + (phases - 1) * s.alpha;
    c.beta_s = phases * s.beta;
    if (coll != NCL_COLL_ALLGATHER) {
        double end = local_reduces_end(all, s0, waves);
        c.alpha_s += end - s0.alpha;
        if (rounds) {
            // each round's reduces run behind the next round's writes, the last round's after them
            double per_byte = std::max(1.0 / dev_.reduce_bandwidth, 3.0 / dev_.mem_bandwidth);
            double slot = scratch_ ? std::min((double)slice_, (double)scratch_ / (p_ - 1)) : (double)slice_;
            // and memory carries the writes out and in besides the reduces' three streams
            double memory = (double)(p_ - 1) / p_ * 5.0 / dev_.mem_bandwidth;
            c.beta_s += std::max({s.beta, reduce, memory}) - s.beta;
            c.alpha_s += (double)(p_ - 1) * slot * per_byte;
        } else {
            // one round: with more writes than DMA engines the blocks land in waves, and the
            // reduces of all but the last wave run while the later waves move
            double E = dev_.dma_engines && waves ? (double)dev_.dma_engines : (double)(p_ - 1);
            double landings = std::ceil((p_ - 1) / E), hidden = reduce * (landings - 1) / landings;
            c.beta_s += std::max(0.0, hidden - s.beta) + reduce - hidden;
        }
    }
    if (rounds)
        return {c};
    // Two estimates, the lesser taken (two lines of one algorithm): c, every write's latency
    // then the busiest link's bytes — right where one device's engine waves feed that link (a
    // switch port) — and each step as the envelope of its channels' drains and engine chains —
    // right where writes from many devices reach a link at different times (rings).
    std::vector<std::pair<double, double>> steps = s0.envelope;
    for (int ph = 1; ph < phases; ph++)
        steps = envelope_sum(steps, s.envelope);
    return {with_envelope(c, {s0.alpha + (phases - 1) * s.alpha, phases * s.beta}, steps), c};
}

// Full mesh with its reduce-scatter in several rounds (blocks larger than a slot of at most a
// slice): a slot is reduced while the next round's writes move, so the reduce-scatter runs at
// the slower of the writes and the reduces, plus the last round's reduces (a slot per sender: a
// slice, or its share of the scratch if smaller). With one round mesh()'s sum is
// cheaper, so auto's least-of-lines takes the right one.
std::vector<AlgoCost> CostModel::mesh_rounds(ncl_coll coll) const
{
    if (p_ < 2 || slice_ == 0 || coll == NCL_COLL_ALLGATHER)
        return {};
    return mesh(coll, true);
}

// Alltoall (mesh_alltoall.c, pairwise_alltoall.c). The full mesh moves what its allgather moves,
// every rank a block of n/p to each peer, and is priced as that. Pairwise runs p - 1 steps, step
// k every rank writing to rank + k after its READY, the next step once the DATA (posted behind
// the write) has arrived. In place both run rounds of `part` bytes of every block (what scratch
// holds for p - 1 slots), one after another, each first staging its parts in
// scratch (in slices): the first round the copies' task overheads, every later one those and its
// handshakes again, per byte the copies' memory traffic and tasks; out of place takes those off
// (oop_*).
std::vector<AlgoCost> CostModel::alltoall() const
{
    if (p_ < 2)
        return {AlgoCost{NCL_COLL_ALLTOALL, NCL_ALGO_MESH, 0, 0, 0}, AlgoCost{NCL_COLL_ALLTOALL, NCL_ALGO_PAIRWISE, 0, 0, 0}};
    const double o = dev_.task_overhead, M = dev_.mem_bandwidth;
    const double part = scratch_ ? (double)scratch_ / (p_ - 1) : (double)slice_; // ncl_a2a_round_elems
    auto in_place = [&](AlgoCost &c, double copies, double round_alpha, double copy_beta) {
        const double beta = copy_beta + (part > 0 ? round_alpha / (part * p_) : 0.0);
        c.alpha_s += copies, c.beta_s += beta;
        for (auto &f : c.own_floors)
            f.first += copies, f.second += beta;
        c.oop_alpha_s -= copies, c.oop_beta_s -= beta;
    };
    std::vector<AlgoCost> out;
    const double staged = std::ceil((p_ - 1.0) / mesh_send_queues()); // blocks a send queue stages
    const double handshake = step(mesh_flows(1.0 / p_), true).alpha;   // READY, then the write's way
    for (AlgoCost m : mesh(NCL_COLL_ALLGATHER)) {
        m.coll = NCL_COLL_ALLTOALL;
        in_place(m, staged * o, staged * o + handshake, staged * (2.0 / M + (slice_ ? o / slice_ : 0.0)) / p_);
        out.push_back(m);
    }
    AlgoCost pw{NCL_COLL_ALLTOALL, NCL_ALGO_PAIRWISE, 0, 0, 0};
    for (int k = 1; k < p_; k++) {
        std::vector<Flow> flows;
        for (int a = 0; a < p_; a++)
            flows.push_back(Flow{a, (a + k) % p_, 1.0 / p_, 0});
        Step s = step(flows, true);
        pw.alpha_s += s.alpha;
        pw.beta_s += s.beta;
    }
    in_place(pw, (p_ - 1) * o, (p_ - 1) * o + pw.alpha_s, (p_ - 1.0) / p_ * (2.0 / M + (slice_ ? o / slice_ : 0.0)));
    out.push_back(pw);
    return out;
}

// Scatter (binomial, farthest child first, a parent sends a child its whole subtree's blocks)
// then allgather of the p blocks: recursive doubling for a power of two, else a ring (rank 0 the
// root: v = rank).
AlgoCost CostModel::scatter_allgather() const
{
    AlgoCost c{NCL_COLL_BROADCAST, NCL_ALGO_SAG, 0, 0, 0};
    if (p_ < 2)
        return c;
    int pp = 1;
    while (pp < p_)
        pp *= 2;
    std::vector<Flow> first;
    for (int span = pp / 2; span >= 1; span /= 2) {
        std::vector<Flow> flows;
        for (int v = 0; v < p_; v += 2 * span)
            if (v + span < p_)
                flows.push_back(Flow{v, v + span, (double)(std::min(v + 2 * span, p_) - v - span) / p_});
        Step s = step(flows, first.empty());
        c.alpha_s += s.alpha, c.beta_s += s.beta;
        if (first.empty())
            first = flows;
    }
    if (pp == p_) {
        for (int mask = 1; mask < p_; mask *= 2) {
            std::vector<Flow> flows;
            for (int v = 0; v < p_; v++)
                flows.push_back(Flow{v, v ^ mask, (double)mask / p_});
            Step s = step(flows);
            c.alpha_s += s.alpha, c.beta_s += s.beta;
        }
    } else {
        std::vector<Flow> flows;
        for (int v = 0; v < p_; v++)
            flows.push_back(Flow{v, (v + 1) % p_, 1.0 / p_});
        Step s = step(flows);
        c.alpha_s += (p_ - 1) * s.alpha, c.beta_s += (p_ - 1) * s.beta;
    }
    return c;
}

// Double binary tree (in-order trees: tree 0 puts rank r at position r+1, tree 1 mirrors it),
// each tree reducing half of the buffer up and broadcasting it down in k rounds
// (dbtree_allreduce.c): a pipeline of 2h hops (h = floor(lg p) up, h down) carrying n/2, while a
// rank's port carries 2n in all (3/2 n more than the pipeline's n/2):
//   (2h - 1 + k)(alpha + n beta / 2k) + 3/2 n beta, best k = sqrt((2h - 1) n beta / 2 alpha),
// which the engine takes from this line (hops, chain_div 2), and the first round's notifies:
// each hop's DATA follows its write, (2h - 1) alpha more. alpha and beta: every rank sending to
// its parent in both trees at once, half the buffer each.
std::vector<AlgoCost> CostModel::double_tree() const
{
    AlgoCost c{NCL_COLL_ALLREDUCE, NCL_ALGO_DBTREE, 0, 0, 0};
    if (p_ < 2)
        return {c};
    int h = 0;
    while ((2 << h) <= p_) // the root sits at the largest power of two <= p: depth lg of it
        h++;
    // tree 1's position of rank r: p - r (p even) or (r + 1) mod p + 1 (p odd), as the engine's
    auto rank_in = [&](int tree, int pos) {
        return tree == 0 ? pos - 1 : p_ % 2 == 0 ? p_ - pos : pos >= 2 ? pos - 2 : p_ - 1;
    };
    std::vector<Flow> flows;
    std::vector<std::vector<int>> children((size_t)p_ + 1); // per position, left (lower) first
    for (int pos = 1; pos <= p_; pos++) {
        if (pos == (1 << h))
            continue; // the root
        int parent = pos; // the in-order parent, skipping positions beyond p
        do {
            int low = parent & -parent;
            parent = (parent & 2 * low) ? parent - low : parent + low;
        } while (parent > p_);
        children[(size_t)parent].push_back(pos);
        for (int tree = 0; tree < 2; tree++)
            flows.push_back(Flow{rank_in(tree, pos), rank_in(tree, parent), 0.5});
    }
    // The first round's way up and down, latencies only, as the engine runs it (in place): a
    // parent grants its left child at once and its right child when the left one's data has
    // landed; a child writes once granted and its own subtree is in; from the root down, each
    // rank writes its children one task apart once its parent's data has landed.
    const double o = dev_.task_overhead;
    double first_round = 0;
    for (int tree = 0; tree < 2; tree++) {
        auto rank = [&](int pos) { return rank_in(tree, pos); };
        std::function<double(int)> up = [&](int x) { // when x holds its subtree's round
            double t = 0, grant = 0;
            for (int ch : children[(size_t)x]) {
                t = std::max(grant + route_latency(rank(x), rank(ch)), up(ch)) + o + route_latency(rank(ch), rank(x));
                grant = t;
            }
            return t;
        };
        std::function<double(int, double)> down = [&](int x, double at) { // x has the result at `at`
            double end = at, issue = at;
            for (int ch : children[(size_t)x]) {
                issue += o;
                end = std::max(end, down(ch, issue + route_latency(rank(x), rank(ch))));
            }
            return end;
        };
        first_round = std::max(first_round, down(1 << h, up(1 << h)));
    }
    Step s = step(flows);
    c.hops = 2 * h;
    c.alpha_s = s.alpha;
    c.beta_s = s.beta / 2;
    c.extra_beta_s = 1.5 * s.beta;
    c.chain_div = 2;
    // one round (k = 1) at n = 0 is the first round's way: (2h - 1 + 1) alpha + fixed_s
    c.fixed_s = std::max(0.0, first_round - 2 * h * s.alpha);
    c.oop_alpha_s = o; // out of place an interior rank copies its input's round in before its first grant
    return {c};
}

// Deterministic allreduce: small buffers are gathered whole (every rank writes its input to all
// peers, then reduces the p-1 received ones in rank order after a local copy); large ones run the full-mesh
// reduce-scatter + allgather with the senders reduced in rank order. Each is priced the two ways
// mesh() prices a step (every write's latency then the busiest link's bytes; the envelope of the
// links' drains): four lines, the engine runs the cheapest's variant (gather or split).
std::vector<AlgoCost> CostModel::deterministic() const
{
    std::vector<AlgoCost> split = mesh(NCL_COLL_ALLREDUCE, false, false);
    double o = dev_.task_overhead, M = dev_.mem_bandwidth;
    for (AlgoCost &l : split) {
        // in place the sum starts with a copy of the own block (a task) that out of place
        // the first reduce does without
        l.algo = NCL_ALGO_DET;
        shift(l, o, 0);
        l.oop_alpha_s = wide_ ? 0.0 : -o;
    }
    if (p_ < 2)
        return split;
    std::vector<Flow> all = mesh_flows(1.0);
    Step s0 = step(all, true);
    double reduce = std::max(1.0 / dev_.reduce_bandwidth, 3.0 / M);
    // the p-1 reduces in rank order as the blocks land, and a local copy of n that starts (or
    // ends) the sum: one more task
    AlgoCost gather{NCL_COLL_ALLREDUCE, NCL_ALGO_DET, local_reduces_end(all, s0, false) + o,
                    s0.beta + (p_ - 1) * reduce + 2.0 / M, 0};
    if (wide_) {
        // fp32 accumulator (det_allreduce.c): the reduces run at twice the width through the
        // reduce unit and move 5 bytes of memory per narrow byte instead of 3; the copy becomes a
        // LOCAL_WIDEN (3 bytes per byte) and one LOCAL_NARROW (3 more) rounds the result
        double wide = std::max(2.0 / dev_.reduce_bandwidth, 5.0 / M);
        gather.alpha_s += o;
        gather.beta_s += (p_ - 1) * (wide - reduce) + 4.0 / M;
        for (AlgoCost &l : split)
            shift(l, 2 * o, (double)(p_ - 1) / p_ * (wide - reduce) + 6.0 / p_ / M);
    }
    gather.variant = NCL_COST_VARIANT_DET_GATHER;
    if (!wide_) { // out of place the first reduce reads the input where it is: no copy to start the sum
        gather.oop_alpha_s = -o;
        gather.oop_beta_s = -2.0 / M;
    }
    split.insert(split.begin(), with_envelope(gather, {s0.alpha, s0.beta}, s0.envelope));
    split.insert(split.begin(), gather);
    return split;
}

void CostModel::set_levels(int local_size, const std::vector<std::vector<int>> &local_rings, ncl_algo inter)
{
    local_size_ = local_size;
    local_rings_ = local_rings;
    inter_ = inter;
}

int CostModel::local_rank(int server, int c, int pos) const
{
    int L = local_size_;
    pos = ((pos % L) + L) % L;
    return server * L + (local_rings_.empty() ? pos : local_rings_[(size_t)c % local_rings_.size()][(size_t)pos]);
}

// The inter level's algorithm (firmware ncl_hier_inter_hd): hd for a power-of-two server count
// unless ring is forced; a forced hd on any other count does not run (the ring's cost stands in).
bool CostModel::inter_hd() const
{
    int S = local_size_ ? p_ / local_size_ : 0;
    bool pow2 = S > 0 && (S & (S - 1)) == 0;
    return pow2 && inter_ != NCL_ALGO_RING;
}

// Two-level broadcast from rank 0: the root writes each of its server's L chunks to the chunk's
// owner, one after another (per channel); each owner broadcasts its chunk across the servers as
// soon as it has it (ring: a pipelined chain over the owner's NIC; hd: a binomial tree); every
// server's rings allgather the chunks (L-1 steps). The last chunk written decides: two lines —
// it waits for the whole scatter and then has its NIC to itself (small n), or the NIC carries all
// C chunks of its local index back to back from the first write on (large n, a floor) — plus the
// allgather. Each chain is the AlgoCost's pipeline, the rest its fixed and extra_beta terms.
std::vector<AlgoCost> CostModel::hier_broadcast() const
{
    AlgoCost c{NCL_COLL_BROADCAST, NCL_ALGO_HIER, 0, 0, 0};
    int L = local_size_, S = L ? p_ / L : 0;
    if (L < 2 || S < 2 || L * S != p_)
        return {c};
    // scatter: every channel's writes one after another (alpha: the slowest channel's sum of
    // latencies), all channels at once (beta: their k-th writes share the links)
    double C = channels_, first_a = 0, all_a = 0, all_b = 0;
    for (uint32_t ch = 0; ch < channels_; ch++) {
        double sum = 0;
        for (int k = 1; k < L; k++)
            sum += step({Flow{local_rank(0, (int)ch, 0), local_rank(0, (int)ch, k), 1.0}}, k == 1).alpha;
        all_a = std::max(all_a, sum);
        first_a = std::max(first_a, step({Flow{local_rank(0, (int)ch, 0), local_rank(0, (int)ch, 1), 1.0}}, true).alpha);
    }
    for (int k = 1; k < L; k++) {
        std::vector<Flow> flows;
        for (uint32_t ch = 0; ch < channels_; ch++)
            flows.push_back(Flow{local_rank(0, (int)ch, 0), local_rank(0, (int)ch, k), 1.0 / (C * L)});
        all_b += step(flows).beta;
    }
    std::vector<Flow> intra;
    for (int s = 0; s < S; s++)
        for (uint32_t ch = 0; ch < channels_; ch++)
            for (int i = 0; i < L; i++)
                intra.push_back(Flow{local_rank(s, (int)ch, i), local_rank(s, (int)ch, i + 1), 1.0 / (C * L)});
    Step ag = step(intra);
    double ag_a = (L - 1) * ag.alpha, ag_b = (L - 1) * ag.beta;
    double ready = route_latency(L, 0); // the first server's READY to the root's server
    AlgoCost late = c, busy = c;        // the last chunk written; every chunk of one NIC
    late.fixed_s = all_a + ag_a + ready, late.extra_beta_s = all_b + ag_b;
    busy.fixed_s = first_a + ag_a + ready, busy.extra_beta_s = all_b + ag_b;
    busy.floor = true; // last: its view of the NIC sets the chain's segment count
    if (inter_hd()) { // binomial tree over servers: lg S sends of the whole chunk in a row
        for (int m = 1; m < S; m <<= 1) {
            std::vector<Flow> one, all;
            one.push_back(Flow{0, m * L, 1.0 / (C * L)});
            for (int l = 0; l < L; l++)
                all.push_back(Flow{l, m * L + l, 1.0 / L});
            Step a = step(one), b = step(all);
            late.alpha_s += a.alpha, late.beta_s += a.beta;
            busy.alpha_s += b.alpha, busy.beta_s += b.beta;
        }
        for (AlgoCost *x : {&late, &busy}) // linear: the scatter and allgather join alpha and beta
            x->alpha_s += x->fixed_s, x->beta_s += x->extra_beta_s, x->fixed_s = x->extra_beta_s = 0;
        return {late, busy};
    }
    std::vector<Flow> one, all;
    for (int s = 0; s + 1 < S; s++)
        one.push_back(Flow{s * L, (s + 1) * L, 1.0 / (C * L)});
    for (int l = 0; l < L; l++)
        for (int s = 0; s + 1 < S; s++)
            all.push_back(Flow{s * L + l, (s + 1) * L + l, 1.0 / L});
    Step a = step(one), b = step(all);
    late.hops = busy.hops = S - 1;
    late.chain_div = busy.chain_div = L * (int)channels_;
    late.alpha_s = a.alpha, late.beta_s = a.beta;
    busy.alpha_s = b.alpha, busy.beta_s = b.beta;
    return {late, busy};
}

// Two-level allreduce: every server's rings reduce-scatter its L chunks (L-1 steps of 1/(C L) of
// n per channel), the ranks of one local index allreduce their chunk across the S servers (ring:
// 2(S-1) steps of 1/(C L S); hd: halving then doubling), every server's rings allgather (L-1
// steps). All servers, local indices and channels at once: the step pattern routes them together.
AlgoCost CostModel::hier_allreduce() const
{
    AlgoCost c{NCL_COLL_ALLREDUCE, NCL_ALGO_HIER, 0, 0, 0};
    int L = local_size_, S = L ? p_ / L : 0;
    if (L < 2 || S < 2 || L * S != p_)
        return c;
    double C = channels_;
    std::vector<Flow> intra;
    for (int s = 0; s < S; s++)
        for (uint32_t ch = 0; ch < channels_; ch++)
            for (int i = 0; i < L; i++)
                intra.push_back(Flow{local_rank(s, (int)ch, i), local_rank(s, (int)ch, i + 1), 1.0 / (C * L)});
    Step si = step(intra), si0 = step(intra, true);
    c.alpha_s = si0.alpha + (2.0 * (L - 1) - 1) * si.alpha;
    c.beta_s = 2.0 * (L - 1) * si.beta;
    if (!inter_hd()) {
        std::vector<Flow> inter;
        for (int l = 0; l < L; l++)
            for (int s = 0; s < S; s++)
                inter.push_back(Flow{s * L + l, ((s + 1) % S) * L + l, 1.0 / (L * S)});
        Step st = step(inter);
        c.alpha_s += 2.0 * (S - 1) * st.alpha;
        c.beta_s += 2.0 * (S - 1) * st.beta;
        return c;
    }
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; (1 << k) < S; k++) {
            int mask = pass == 0 ? S >> (k + 1) : 1 << k; // halving: far first; doubling: near first
            std::vector<Flow> flows;
            for (int l = 0; l < L; l++)
                for (int s = 0; s < S; s++)
                    flows.push_back(Flow{s * L + l, (s ^ mask) * L + l, (double)mask / S / L});
            // a halving step's WRITE_REDUCE waits for the partner's READY (its kept half holds
            // the server's sum and took the previous step's data): one more crossing each
            Step st = step(flows, pass == 0);
            c.alpha_s += st.alpha, c.beta_s += st.beta;
        }
    return c;
}

// Patterns whose flows cross the network pairwise are routed flow by flow: past these sizes the
// model leaves them out (auto then never picks them) rather than spend seconds routing p^2 flows.
const int k_max_ranks_pairwise = 256, k_max_ranks_mesh = 64;

std::vector<AlgoCost> CostModel::costs(ncl_coll coll) const
{
    std::vector<AlgoCost> out;
    bool pairwise = p_ <= k_max_ranks_pairwise, all_pairs = p_ <= k_max_ranks_mesh;
    switch (coll) {
    case NCL_COLL_ALLREDUCE:
        out.push_back(ring(coll));
        for (const AlgoCost &f : ring_ar_ready_floor(out.back()))
            out.push_back(f);
        if (pairwise) {
            for (const AlgoCost &h : halving_doubling(coll))
                out.push_back(h);
            for (const AlgoCost &t : double_tree())
                out.push_back(t);
        }
        if (all_pairs) {
            for (const AlgoCost &m : mesh(coll))
                out.push_back(m);
            for (const AlgoCost &m : mesh_rounds(coll))
                out.push_back(m);
            for (const AlgoCost &d : deterministic())
                out.push_back(d);
        }
        if (local_size_ >= 2 && local_size_ < p_ && pairwise)
            out.push_back(hier_allreduce());
        break;
    case NCL_COLL_REDUCE_SCATTER:
    case NCL_COLL_ALLGATHER:
        if (coll == NCL_COLL_REDUCE_SCATTER) {
            // ring_reduce_scatter.c lands with a fill queue per channel: where twice the
            // channels do not fit the queues, it runs on as many channels as do
            CostModel rs = *this;
            if (landing() && !fill_queues())
                rs.channels_ = NCL_MAX_QUEUES / 2;
            out.push_back(rs.ring(coll));
            for (const AlgoCost &f : rs.ring_rs_floors())
                out.push_back(f);
            for (const AlgoCost &l : rs.ring_rs_pieced())
                out.push_back(l);
            for (const AlgoCost &l : rs.ring_rs_pair_rounds())
                out.push_back(l);
        } else {
            out.push_back(ring(coll));
        }
        if (pairwise)
            for (const AlgoCost &h : halving_doubling(coll))
                out.push_back(h);
        if (all_pairs) {
            for (const AlgoCost &m : mesh(coll))
                out.push_back(m);
            for (const AlgoCost &m : mesh_rounds(coll))
                out.push_back(m);
        }
        break;
    case NCL_COLL_BROADCAST:
        out.push_back(chain(coll));
        if (pairwise)
            for (const AlgoCost &t : tree(coll))
                out.push_back(t);
        if (pairwise)
            out.push_back(scatter_allgather());
        if (local_size_ >= 2 && local_size_ < p_ && pairwise)
            for (const AlgoCost &h : hier_broadcast())
                out.push_back(h);
        break;
    case NCL_COLL_REDUCE:
        out.push_back(chain(coll));
        if (pairwise)
            for (const AlgoCost &t : tree(coll))
                out.push_back(t);
        break;
    case NCL_COLL_ALLTOALL:
        if (all_pairs)
            out = alltoall();
        break;
    default:
        break;
    }
    // every call pays the launch once, whichever algorithm runs it (Cluster starts calls late by it)
    for (AlgoCost &c : out)
        c.fixed_s += dev_.launch_overhead;
    return out;
}

} // namespace model
