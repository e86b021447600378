// rs_setup.cpp — the engine configuration of a scenario (see rs_setup.hpp).
#include "rs_setup.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>

#include <ncl/ncl_dtype.h>
#include <ncl/ncl_hal.h>

#include "model/costmodel.hpp"
#include "model/npu.hpp"
#include "model/rs_defaults.h"
#include "model/rings.hpp"
#include "scenario/rs_usersched.h"

namespace rs {

namespace {

/* rings: auto — channel-disjoint rings over direct links, no more than any rank has channels
 * out and in, nor than the channels asked for. */
std::vector<std::vector<int>> find_scenario_rings(const rs_scenario &sc, const model::Topology &t)
{
    if (sc.workload.rings != RS_RINGS_AUTO)
        return {};
    int want = (int)NCL_MAX_QUEUES;
    std::vector<int> out((size_t)t.nranks(), 0), in((size_t)t.nranks(), 0);
    for (const model::TopoChannel &c : t.channels())
        if (c.from < t.nranks() && c.to < t.nranks())
            out[(size_t)c.from]++, in[(size_t)c.to]++;
    for (int r = 0; r < t.nranks(); r++)
        want = std::min(want, std::min(out[(size_t)r], in[(size_t)r]));
    if (sc.workload.channels)
        want = std::min(want, (int)sc.workload.channels);
    return model::find_rings(t, want);
}

/* Two levels: a cluster's servers are 8 consecutive ranks each; their rings over local indices
 * are the rings of one server on its own (the same search, on the server's links). */
int scenario_local_size(const rs_scenario &sc)
{
    return sc.topo.kind == RS_TOPO_CLUSTER ? 8 : 0;
}

std::vector<std::vector<int>> find_local_rings(const rs_scenario &sc)
{
    if (sc.workload.rings != RS_RINGS_AUTO || scenario_local_size(sc) == 0)
        return {};
    rs_topology_spec server = sc.topo;
    server.kind = RS_TOPO_SERVER8;
    server.nranks = 8;
    server.servers = 1;
    server.overrides = nullptr; // node numbers of the cluster; the search needs only the shape
    server.overrides_count = 0;
    server.links = nullptr;
    server.links_count = 0;
    model::Topology t(server);
    return model::find_rings(t, sc.workload.channels ? (int)sc.workload.channels : (int)NCL_MAX_QUEUES);
}

uint32_t channels_for(const rs_scenario &sc, size_t rings)
{
    if (sc.workload.channels)
        return sc.workload.channels;
    return rings > 2 ? (uint32_t)rings : 2u;
}

// A degrade fault at 0 s is the topology the run starts on, as the equal override would be: the
// ring weights and the cost table are made on it. (A link down at 0 still fails the collectives
// that need it: no ring is routed around it.)
bool degraded_at_start(const rs_scenario &sc)
{
    for (size_t i = 0; i < sc.faults_count; i++)
        if (sc.faults[i].at == 0 && sc.faults[i].kind == RS_FAULT_DEGRADE)
            return true;
    return false;
}

// sc's topology with those faults as overrides (kept in `overrides`, which the spec points into).
rs_topology_spec starting_spec(const rs_scenario &sc, std::vector<rs_link_override> &overrides)
{
    overrides.assign(sc.topo.overrides, sc.topo.overrides + sc.topo.overrides_count);
    for (size_t i = 0; i < sc.faults_count; i++) {
        const rs_fault &f = sc.faults[i];
        if (f.at == 0 && f.kind == RS_FAULT_DEGRADE)
            overrides.push_back(rs_link_override{f.ends, f.bandwidth, f.latency});
    }
    rs_topology_spec spec = sc.topo;
    spec.overrides = overrides.data();
    spec.overrides_count = overrides.size();
    return spec;
}

} // namespace

namespace {
// The scratch the algorithms get: the device's, less the landing zones a communicator sets aside.
uint64_t algorithm_scratch(const ncl_config &cfg, const ncl_hal_caps &caps, int nranks)
{
    ncl_plan_env env;
    ncl_plan_env_init(&env, &cfg, &caps);
    if (ncl_plan_env_zones(&env, &cfg, &caps, nranks) != NCL_SUCCESS)
        return env.scratch_bytes;
    return env.scratch_bytes - 2 * env.channels * env.zone_bytes;
}

// What a cost table is made for: a communicator's rings, levels and devices (members: the NPUs of a
// sub-communicator, empty for the world).
struct CommShape {
    const std::vector<std::vector<int>> &rings, &local_rings;
    const ncl_hal_caps &caps;
    int nranks;
    const std::vector<int> &members;
};

// One path's lines (ncl_cost.path) of the cost table: every algorithm's lines on this topology for
// this device, for the engine configuration cfg and s's rings and caps; the latency path's only for
// the collectives that have one.
std::vector<ncl_cost> path_costs(const rs_scenario &sc, const rs_device_params &dev, const model::Topology &topo,
                                 const ncl_config &cfg, const CommShape &s, uint8_t path)
{
    model::CostModel cm(topo, dev, s.rings, cfg.channels);
    cm.set_members(s.members);
    {
        ncl_op op = sc.workload.op == NCL_AVG ? NCL_SUM : sc.workload.op;
        uint32_t es = (uint32_t)ncl_dtype_size(sc.workload.dtype), a = s.caps.inline_align;
        cm.set_staged(!(s.caps.inline_ops[sc.workload.dtype] >> op & 1u) || (a > 1 && es % a != 0));
        // the same rule as the planner's (ncl_plan.c): fp16/bf16 sums and products
        bool half = sc.workload.dtype == NCL_FLOAT16 || sc.workload.dtype == NCL_BFLOAT16;
        cm.set_wide(sc.workload.wide_accumulation && half && op != NCL_MAX && op != NCL_MIN);
    }
    cm.set_levels((int)cfg.local_size, s.local_rings, sc.workload.inter_algo);
    cm.set_slice(cfg.slice_bytes);
    cm.set_scratch(algorithm_scratch(cfg, s.caps, s.nranks));
    cm.set_zones(algorithm_scratch(cfg, s.caps, s.nranks) < s.caps.scratch_bytes);
    cm.set_reduce_write(s.caps.features & NCL_HAL_FEAT_REDUCE_WRITE);
    {
        ncl_plan_env env;
        ncl_plan_env_init(&env, &cfg, &s.caps);
        cm.set_queues(env.in_flight, 2 <= env.max_queues && (env.dma_engines == 0 || 2 <= env.dma_engines));
    }
    std::vector<ncl_cost> costs;
    auto entry = [path](const model::AlgoCost &a, double alpha_s, double beta_s, uint8_t floor) {
        return ncl_cost{(uint8_t)a.coll, (uint8_t)a.algo, (uint16_t)a.hops,
                        (uint64_t)(alpha_s * 1e9 + 0.5), (uint64_t)(beta_s * 1e15 + 0.5),
                        (int64_t)std::llround(a.fixed_s * 1e9), (uint64_t)(a.extra_beta_s * 1e15 + 0.5),
                        (uint32_t)a.chain_div, floor, (uint8_t)a.variant, (int64_t)std::llround(a.oop_alpha_s * 1e9),
                        (int64_t)std::llround(a.oop_beta_s * 1e15), (uint8_t)a.posted, path};
    };
    for (int c = 0; c < NCL_COLL_COUNT; c++) {
        if (path == NCL_COST_PATH_LATENCY && cfg.latency_path_bytes[c] == 0)
            continue;
        std::map<int, int> lines; // per algorithm: its lines so far (a line's own floors name it)
        for (const model::AlgoCost &a : cm.costs((ncl_coll)c)) {
            costs.push_back(entry(a, a.alpha_s, a.beta_s, a.floor ? 1 : 0));
            if (a.floor)
                continue;
            int line = lines[a.algo]++;
            for (const auto &f : a.own_floors)
                if (line + 2 <= UINT8_MAX)
                    costs.push_back(entry(a, f.first, f.second, (uint8_t)(line + 2)));
        }
    }
    return costs;
}

// The cost table auto chooses with: every algorithm's lines on this topology (its links' parameters
// as they are: at the start, or after faults). Calls on the latency path (workload.latency_path)
// run the same schedules at other task costs — each data task issued in the device's latency-path
// overhead, each write carrying its bytes / efficiency on the wire (npu.cpp) — so they get lines of
// their own, priced on that device and links (without them auto priced a latency-path allgather on
// 8 RTX 4090s at the bandwidth path's 5 us per task where it pays 0.47, and took the wrong one).
std::vector<ncl_cost> cost_table(const rs_scenario &sc, const model::Topology &topo, const ncl_config &cfg,
                                 const CommShape &s)
{
    std::vector<ncl_cost> costs = path_costs(sc, sc.device, topo, cfg, s, NCL_COST_PATH_BANDWIDTH);
    if (std::any_of(std::begin(cfg.latency_path_bytes), std::end(cfg.latency_path_bytes), [](uint64_t b) { return b > 0; })) {
        rs_device_params dev = sc.device;
        if (dev.latency_path_overhead >= 0)
            dev.task_overhead = dev.latency_path_overhead;
        model::Topology wire(topo.spec()); // the same channels, with topo's parameters (faults) scaled
        const double eff = dev.latency_path_efficiency > 0 && dev.latency_path_efficiency < 1 ? dev.latency_path_efficiency : 1;
        std::vector<rs_link_params> params;
        for (const model::TopoChannel &c : topo.channels()) {
            rs_link_params lp = c.params;
            lp.bandwidth *= eff;
            if (lp.duplex_bandwidth > 0)
                lp.duplex_bandwidth *= eff;
            params.push_back(lp);
        }
        wire.set_params(params);
        std::vector<ncl_cost> lp = path_costs(sc, dev, wire, cfg, s, NCL_COST_PATH_LATENCY);
        costs.insert(costs.end(), lp.begin(), lp.end());
    }
    if (costs.size() > NCL_MAX_COSTS) // a cut table would price some algorithms wrongly, silently
        throw model::ConfigError("cost table: " + std::to_string(costs.size()) +
                                 " entries, the engine holds at most " + std::to_string(NCL_MAX_COSTS) +
                                 " (NCL_MAX_COSTS)");
    return costs;
}
} // namespace

void group_setup(const rs_scenario &sc, const EngineSetup &world, const model::Topology &topo,
                 const std::vector<int> &members, GroupSetup &out)
{
    ncl_config cfg = world.cfg;
    if (!cfg.alloc || !cfg.free) { // as model::Cluster::connect gives the world's
        cfg.alloc = [](void *, size_t bytes) { return std::malloc(bytes); };
        cfg.free = [](void *, void *ptr) { std::free(ptr); };
    }
    cfg.rings = nullptr, cfg.ring_positions = nullptr, cfg.ring_weights = nullptr, cfg.ring_count = 0;
    cfg.costs = nullptr, cfg.cost_count = 0, cfg.cost_room = 0;
    cfg.local_size = 0, cfg.local_rings = nullptr, cfg.local_ring_count = 0, cfg.inter_algo = NCL_ALGO_AUTO;
    cfg.schedule = nullptr;
    for (int c = 0; c < NCL_COLL_COUNT; c++)
        if (cfg.algorithm[c] == NCL_ALGO_HIER || cfg.algorithm[c] == NCL_ALGO_USER)
            cfg.algorithm[c] = NCL_ALGO_AUTO;
    const size_t n = members.size();
    // as many rings as the members' links allow, each on a channel of its own
    std::vector<std::vector<int>> rings = n > 1 ? model::find_rings(topo, members, NCL_MAX_QUEUES)
                                                : std::vector<std::vector<int>>{};
    cfg.channels = std::max<uint32_t>(cfg.channels, (uint32_t)rings.size());
    out.ring_table.clear();
    out.ring_positions.assign(rings.size() * n, -1);
    std::vector<std::vector<int>> as_ranks; // the same rings in the topology's ranks, for the weights
    for (size_t k = 0; k < rings.size(); k++) {
        as_ranks.emplace_back();
        for (size_t i = 0; i < n; i++) {
            out.ring_table.push_back(rings[k][i]);
            out.ring_positions[k * n + (size_t)rings[k][i]] = (int32_t)i;
            as_ranks.back().push_back(members[(size_t)rings[k][i]]);
        }
    }
    if (!rings.empty()) {
        out.ring_weights = model::ring_weights(topo, as_ranks);
        cfg.rings = out.ring_table.data();
        cfg.ring_positions = out.ring_positions.data();
        cfg.ring_count = (uint32_t)rings.size();
        cfg.ring_weights = out.ring_weights.data();
    }
    // auto prices the group's algorithms on the members' own routes
    const std::vector<std::vector<int>> none;
    out.costs = cost_table(sc, topo, cfg, CommShape{rings, none, world.caps, (int)n, members});
    cfg.costs = out.costs.data();
    cfg.cost_count = (uint32_t)out.costs.size();
    out.cfg = cfg;
}

void engine_setup(const rs_scenario &sc, const model::Topology &built, EngineSetup &out)
{
    std::unique_ptr<model::Topology> degraded;
    if (degraded_at_start(sc)) {
        std::vector<rs_link_override> overrides;
        degraded.reset(new model::Topology(starting_spec(sc, overrides)));
    }
    const model::Topology &topo = degraded ? *degraded : built;
    ncl_config cfg = NCL_CONFIG_INIT;
    cfg.check_schedules = 0; // the tests prove every algorithm; launches here are timed
    // The engine's 30 s timeout is a wall-clock figure; a simulated network whose latency alone
    // comes near it (1 s links around a 64-ring: a notify takes 63 s to go round) is slow, not
    // dead. Such networks get the time a notify needs to go round the ranks four times on top.
    double hop = 0;
    for (const model::TopoChannel &c : topo.channels())
        hop = std::max(hop, c.params.latency + topo.forward_latency());
    double crossing_s = 4.0 * topo.nranks() * hop;
    if (crossing_s > 1e-3)
        cfg.timeout_ns += (uint64_t)(crossing_s * 1e9);
    // Devices take large DMA tasks: slices only bound a task; a step's rounds overlap in flight.
    cfg.slice_bytes = sc.workload.slice_bytes ? sc.workload.slice_bytes : RS_DEFAULT_ENGINE_SLICE_BYTES;
    cfg.in_flight = sc.workload.in_flight; // 0: the device's queue depth
    for (int c = 0; c < NCL_COLL_COUNT; c++) {
        double of = sc.workload.latency_path_of[c];
        cfg.latency_path_bytes[c] = of >= 0 ? (uint64_t)of : sc.workload.latency_path;
    }
    out.rings = find_scenario_rings(sc, topo);
    out.local_rings = find_local_rings(sc);
    cfg.channels = channels_for(sc, std::max(out.rings.size(), out.local_rings.size()));
    if (out.rings.size() > cfg.channels) // channel c runs on ring c: the rest would idle
        out.rings.resize(cfg.channels);
    out.ring_table.clear();
    for (const std::vector<int> &ring : out.rings)
        out.ring_table.insert(out.ring_table.end(), ring.begin(), ring.end());
    out.ring_positions.assign(out.ring_table.size(), -1);
    for (size_t i = 0; i < out.ring_table.size(); i++) { // (the engine checks it is the inverse)
        size_t row = i - i % (size_t)topo.nranks(), r = (size_t)out.ring_table[i];
        if (r < (size_t)topo.nranks())
            out.ring_positions[row + r] = (int32_t)(i - row);
    }
    if (!out.rings.empty()) {
        // each ring's weight (its slowest link's payload bandwidth at the start of the run): the
        // channel split follows it, so a slow link costs only its ring's share. A fault later in
        // the run reweights the rings at the next collective (model::Cluster::follow_links).
        out.ring_weights = model::ring_weights(topo, out.rings);
        cfg.rings = out.ring_table.data();
        cfg.ring_positions = out.ring_positions.data();
        cfg.ring_count = (uint32_t)out.rings.size();
        cfg.ring_weights = out.ring_weights.data();
    }
    if (out.local_rings.size() > cfg.channels)
        out.local_rings.resize(cfg.channels);
    out.local_table.clear();
    for (const std::vector<int> &ring : out.local_rings)
        out.local_table.insert(out.local_table.end(), ring.begin(), ring.end());
    cfg.local_size = (uint32_t)scenario_local_size(sc);
    cfg.inter_algo = (uint8_t)sc.workload.inter_algo;
    if (!out.local_rings.empty()) {
        cfg.local_rings = out.local_table.data();
        cfg.local_ring_count = (uint32_t)out.local_rings.size();
    }
    // The devices' caps (inline reduce, DMA engines, scratch): the planner sees what the HAL reports.
    model::Npu::caps_of(sc.device, scenario_scratch(sc), &out.caps);
    // The built-in cost model (chain segments, landing zones) sees the scenario's links.
    cfg.link_alpha_ns = (uint32_t)((sc.topo.link.latency + sc.device.task_overhead) * 1e9);
    cfg.link_gbps = (uint32_t)(sc.topo.link.bandwidth / 1e9) ? (uint32_t)(sc.topo.link.bandwidth / 1e9) : 1;
    cfg.mem_gbps = (uint32_t)(sc.device.mem_bandwidth / 1e9);
    const double zone = sc.workload.landing_zone;
    cfg.landing_zone_bytes = zone < 0 ? 0 : zone == 0 ? NCL_ZONES_OFF : (uint64_t)zone;
    out.nranks = sc.topo.nranks;
    const std::vector<int> world;
    out.costs = cost_table(sc, topo, cfg, CommShape{out.rings, out.local_rings, out.caps, out.nranks, world});
    cfg.costs = out.costs.data();
    cfg.cost_count = (uint32_t)out.costs.size();
    for (size_t i = 0; i < sc.faults_count; i++) // priced again after it (its table may be longer)
        if (sc.faults[i].at > 0 && sc.faults[i].kind == RS_FAULT_DEGRADE)
            cfg.cost_room = NCL_MAX_COSTS;
    if (sc.workload.algo != NCL_ALGO_AUTO)
        for (int c = 0; c < NCL_COLL_COUNT; c++)
            if (ncl_algo_supported((ncl_coll)c, sc.workload.algo))
                cfg.algorithm[c] = (uint8_t)sc.workload.algo;
    cfg.deterministic = sc.workload.deterministic;
    cfg.wide_accumulation = sc.workload.wide_accumulation;
    if (sc.workload.usersched) { // a schedule given as data is the algorithm of its one collective
        cfg.schedule = &sc.workload.usersched->sched;
        cfg.algorithm[sc.workload.usersched->sched.coll] = NCL_ALGO_USER;
    }
    out.cfg = cfg;
}

uint64_t scenario_scratch(const rs_scenario &sc)
{
    if (sc.device.scratch_bytes)
        return sc.device.scratch_bytes;
    return std::min<uint64_t>(sc.device.memory_bytes / 4, RS_DEFAULT_NPU_SCRATCH_MAX_BYTES);
}

std::vector<ncl_cost> EngineSetup::price(const rs_scenario &sc, const std::vector<rs_link_params> &live) const
{
    model::Topology topo(sc.topo);
    topo.set_params(live);
    const std::vector<int> world;
    return cost_table(sc, topo, cfg, CommShape{rings, local_rings, caps, nranks, world});
}

ncl_plan_env EngineSetup::plan_env() const
{
    ncl_plan_env env;
    ncl_plan_env_init(&env, &cfg, &caps);
    env.scratch_bytes = algorithm_scratch(cfg, caps, nranks);
    return env; // rings: the communicator's copies hold the positions; plan only needs costs
}

uint32_t scenario_channels(const rs_scenario &sc)
{
    try {
        model::Topology t(sc.topo);
        return channels_for(sc, std::max(find_scenario_rings(sc, t).size(), find_local_rings(sc).size()));
    } catch (const model::ConfigError &) {
        return channels_for(sc, 0); // the run reports it
    }
}

} // namespace rs
