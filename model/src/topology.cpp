// topology.cpp — topology builder (nodes, and channels from rs_topo_links), overrides, validation and routing tables.
#include "model/topology.hpp"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <sstream>

namespace model {

namespace {

std::string line_of(const rs_link_ref &r)
{
    return r.line > 0 ? " (line " + std::to_string(r.line) + ")" : std::string();
}

// The shape has no defaults: a scenario names it ("required": where the kind uses the key).
const ParamInfo k_params[] = {
    {"kind", "-", "required",
     "ring | biring | full_mesh | torus2d | switch | fat_tree | server8 | cluster | links"},
    {"nranks", "-", "required",
     "NPUs (ring, biring, full_mesh, switch, fat_tree); derived otherwise (links: the largest endpoint + 1 "
     "when not given)"},
    {"dims", "-", "required", "torus2d: rows x columns, rank = row * columns + column"},
    {"per_leaf", "-", "required", "fat_tree: NPUs per leaf switch (leaves = nranks / per_leaf)"},
    {"spines", "-", "per_leaf", "fat_tree: spine switches, each linked to every leaf (default: full bisection)"},
    {"servers", "-", "required", "cluster: number of 8-NPU servers (ranks 8*s .. 8*s+7)"},
    {"overrides", "-", "none",
     "per-link changes {a, b, both, bandwidth, latency}; node ids: ranks, then switches"},
};
const PortInfo k_ports[] = {
    {"npu[0..p-1]", "ranks; every NPU forwards only its own traffic unless the topology has no "
                    "other path (ring, torus, server8 non-adjacent pairs): then it forwards with "
                    "the switch latency per hop"},
    {"sw[p..]", "switches follow the ranks in node numbering"},
};
const StatInfo k_stats[] = {
    {"hops", "-", "route length between two ranks (shortest by hops; ties: lowest next node id, "
                  "among switches the (dst mod n)-th, which spreads fat-tree traffic over spines)"},
};

} // namespace

const ComponentInfo &Topology::info()
{
    static const ComponentInfo ci = MODEL_COMPONENT(
        "topology", "builds NPUs, switches and channels from the scenario; routing is computed",
        k_params, k_ports, k_stats);
    return ci;
}

const char *Topology::kind_name(rs_topo_kind k)
{
    switch (k) {
    case RS_TOPO_RING: return "ring";
    case RS_TOPO_BIRING: return "biring";
    case RS_TOPO_FULL_MESH: return "full_mesh";
    case RS_TOPO_TORUS2D: return "torus2d";
    case RS_TOPO_SWITCH: return "switch";
    case RS_TOPO_FAT_TREE: return "fat_tree";
    case RS_TOPO_SERVER8: return "server8";
    case RS_TOPO_CLUSTER: return "cluster";
    case RS_TOPO_LINKS: return "links";
    default: return "?";
    }
}

int Topology::add_node(bool is_switch, const std::string &name)
{
    int id = (int)nodes_.size();
    nodes_.push_back(TopoNode{id, is_switch, name, {}, {}});
    return id;
}

int Topology::add_channel(int from, int to, const rs_link_params &p, bool nic)
{
    int id = (int)channels_.size();
    channels_.push_back(TopoChannel{id, from, to, p, nic});
    nodes_[from].out.push_back(id);
    nodes_[to].in.push_back(id);
    return id;
}

int Topology::add_link(void *self, const rs_topo_link *l)
{
    static_cast<Topology *>(self)->add_channel(l->from, l->to, *l->params, l->nic != 0);
    return 0;
}

void Topology::check_params(const rs_link_params &p, const std::string &where) const
{
    if (!(p.bandwidth > 0))
        throw ConfigError(where + ": bandwidth must be > 0");
    if (!(p.latency >= 0))
        throw ConfigError(where + ": latency must be >= 0");
    if (p.packet_bytes == 0)
        throw ConfigError(where + ": packet size must be > 0");
}

Topology::Topology(const rs_topology_spec &spec) : spec_(spec)
{
    // The spec's arrays belong to the caller; keep only what is copied below.
    spec_.links = nullptr;
    spec_.links_count = 0;
    spec_.overrides = nullptr;
    spec_.overrides_count = 0;
    const char *kn = kind_name(spec.kind);
    std::string where = std::string("topology ") + kn;

    switch (spec.kind) {
    case RS_TOPO_TORUS2D:
        if (spec.dims[0] < 1 || spec.dims[1] < 1)
            throw ConfigError(where + ": dims must be >= 1 (got " + std::to_string(spec.dims[0]) +
                              " x " + std::to_string(spec.dims[1]) + ")");
        break;
    case RS_TOPO_CLUSTER:
        if (spec.servers < 1)
            throw ConfigError(where + ": servers must be >= 1");
        break;
    case RS_TOPO_FAT_TREE:
        if (spec.per_leaf < 1 || spec.spines < 1)
            throw ConfigError(where + ": per_leaf and spines must be >= 1");
        if (spec.nranks < 1 || spec.nranks % spec.per_leaf != 0)
            throw ConfigError(where + ": nranks (" + std::to_string(spec.nranks) +
                              ") must be a positive multiple of per_leaf (" +
                              std::to_string(spec.per_leaf) + ")");
        break;
    default: break;
    }
    if (spec.kind < 0 || spec.kind >= RS_TOPO_KIND_COUNT)
        throw ConfigError("topology: unknown kind " + std::to_string((int)spec.kind));
    int p = (int)rs_topo_ranks(&spec);
    if (p < 2)
        throw ConfigError(where + ": needs at least 2 ranks (got " + std::to_string(p) + ")");
    nranks_ = p;
    spec_.nranks = p;
    check_params(spec.link, where + " link");
    if (spec.kind == RS_TOPO_CLUSTER)
        check_params(spec.nic, where + " nic");
    if (!(spec.sw.latency >= 0))
        throw ConfigError(where + ": switch latency must be >= 0");
    if (spec.kind == RS_TOPO_LINKS) {
        if (spec.links_count == 0 || !spec.links)
            throw ConfigError(where + ": the link list is empty");
        for (size_t i = 0; i < spec.links_count; i++) {
            const rs_link_spec &l = spec.links[i];
            std::string lw = "link " + std::to_string(l.ends.a) + "-" + std::to_string(l.ends.b) +
                             line_of(l.ends);
            if (l.ends.a < 0 || l.ends.a >= p || l.ends.b < 0 || l.ends.b >= p)
                throw ConfigError(lw + ": endpoint out of range (ranks are 0.." +
                                  std::to_string(p - 1) + ")");
            if (l.ends.a == l.ends.b)
                throw ConfigError(lw + ": a link needs two different endpoints");
            check_params(l.params, lw);
        }
    }

    // Nodes: the ranks, then the switches (fat_tree: leaves, then spines), as rs_topo numbers
    // them; then every channel in rs_topo_links' order, so channel ids are its link indices.
    for (int r = 0; r < p; r++)
        add_node(false, "npu" + std::to_string(r));
    if (spec.kind == RS_TOPO_FAT_TREE) {
        for (int l = 0; l < p / spec.per_leaf; l++)
            add_node(true, "leaf" + std::to_string(l));
        for (int s = 0; s < spec.spines; s++)
            add_node(true, "spine" + std::to_string(s));
    } else if (rs_topo_switches(&spec) == 1) {
        add_node(true, "sw0");
    }
    rs_topo_links(&spec, add_link, this);

    for (size_t i = 0; i < spec.overrides_count; i++) {
        const rs_link_override &o = spec.overrides[i];
        for (int ch : match(o.ends, "override")) {
            if (o.bandwidth >= 0) {
                if (o.bandwidth == 0)
                    throw ConfigError("override " + channel_name(ch) + line_of(o.ends) +
                                      ": bandwidth must be > 0");
                channels_[ch].params.bandwidth = o.bandwidth;
            }
            if (o.latency >= 0)
                channels_[ch].params.latency = o.latency;
        }
    }
    tables_.resize(nodes_.size());
    validate_connected();
}

int Topology::direct(int a, int b) const
{
    if (a < 0 || a >= nnodes())
        return -1;
    for (int ch : nodes_[a].out)
        if (channels_[ch].to == b)
            return ch;
    return -1;
}

std::vector<int> Topology::match(const rs_link_ref &ref, const char *what) const
{
    std::string w = std::string(what) + " " + std::to_string(ref.a) + (ref.both ? "<->" : "->") +
                    std::to_string(ref.b) + line_of(ref);
    int n = nnodes();
    if (ref.a < 0 || ref.a >= n || ref.b < 0 || ref.b >= n)
        throw ConfigError(w + ": endpoint out of range (nodes are 0.." + std::to_string(n - 1) +
                          ": ranks 0.." + std::to_string(nranks_ - 1) + ", then switches)");
    std::vector<int> out;
    for (int ch : nodes_[ref.a].out)
        if (channels_[ch].to == ref.b)
            out.push_back(ch);
    if (ref.both)
        for (int ch : nodes_[ref.b].out)
            if (channels_[ch].to == ref.a)
                out.push_back(ch);
    if (out.empty())
        throw ConfigError(w + ": no such link in this topology");
    return out;
}

void Topology::validate_connected() const
{
    // With transit allowed everywhere, every pair of ranks is connected iff rank 0 reaches every
    // rank and every rank reaches rank 0 (strong connectivity); routing falls back to NPU transit
    // only when no switch-only path exists, so this check is exact for the routes used.
    int n = nnodes();
    for (int dir = 0; dir < 2; dir++) {
        std::vector<char> seen(n, 0);
        std::deque<int> q{0};
        seen[0] = 1;
        while (!q.empty()) {
            int v = q.front();
            q.pop_front();
            for (int ch : dir == 0 ? nodes_[v].out : nodes_[v].in) {
                int w = dir == 0 ? channels_[ch].to : channels_[ch].from;
                if (!seen[w]) {
                    seen[w] = 1;
                    q.push_back(w);
                }
            }
        }
        for (int r = 0; r < nranks_; r++)
            if (!seen[r]) {
                int a = dir == 0 ? 0 : r, b = dir == 0 ? r : 0;
                throw ConfigError(std::string("topology ") + kind_name(spec_.kind) +
                                  ": rank " + std::to_string(a) + " cannot reach rank " +
                                  std::to_string(b) + " (no path; add a link)");
            }
    }
}

void Topology::set_params(const std::vector<rs_link_params> &params)
{
    if (params.size() != channels_.size())
        throw ConfigError("topology: " + std::to_string(params.size()) + " link parameter sets for " +
                          std::to_string(channels_.size()) + " channels");
    for (size_t i = 0; i < params.size(); i++)
        channels_[i].params = params[i];
}

void Topology::compute_table(int dst, std::vector<int> &next) const
{
    int n = nnodes();
    next.assign(n, -1);
    // Phase A: transit through switches only. Phase B (for nodes phase A leaves unreached):
    // transit through any node, i.e. NPUs forward for others because nothing else connects them.
    for (int phase = 0; phase < 2; phase++) {
        std::vector<int> dist(n, -1);
        std::deque<int> q{dst};
        dist[dst] = 0;
        while (!q.empty()) {
            int v = q.front();
            q.pop_front();
            if (phase == 0 && v != dst && !nodes_[v].is_switch)
                continue;
            for (int ch : nodes_[v].in) {
                int u = channels_[ch].from;
                if (dist[u] < 0) {
                    dist[u] = dist[v] + 1;
                    q.push_back(u);
                }
            }
        }
        std::vector<std::pair<int, int>> cand; // (node, channel)
        for (int u = 0; u < n; u++) {
            if (u == dst || dist[u] <= 0 || next[u] >= 0)
                continue;
            cand.clear();
            bool all_sw = true;
            for (int ch : nodes_[u].out) {
                int w = channels_[ch].to;
                if (dist[w] != dist[u] - 1)
                    continue;
                if (phase == 0 && w != dst && !nodes_[w].is_switch)
                    continue;
                cand.emplace_back(w, ch);
                all_sw = all_sw && nodes_[w].is_switch;
            }
            if (cand.empty())
                continue;
            std::sort(cand.begin(), cand.end());
            // Distinct next nodes only: parallel channels to one node go to the lowest id.
            cand.erase(std::unique(cand.begin(), cand.end(),
                                   [](const std::pair<int, int> &x, const std::pair<int, int> &y) {
                                       return x.first == y.first;
                                   }),
                       cand.end());
            size_t pick = all_sw && cand.size() > 1 ? (size_t)dst % cand.size() : 0;
            next[u] = cand[pick].second;
        }
    }
}

const std::vector<int> &Topology::next_table(int dst) const
{
    if (dst < 0 || dst >= nnodes())
        throw ConfigError("route: node " + std::to_string(dst) + " out of range");
    if (!tables_[dst]) {
        tables_[dst] = std::make_unique<std::vector<int>>();
        compute_table(dst, *tables_[dst]);
    }
    return *tables_[dst];
}

std::vector<int> Topology::route(int src, int dst) const
{
    if (src < 0 || src >= nranks_ || dst < 0 || dst >= nranks_)
        throw ConfigError("route " + std::to_string(src) + "->" + std::to_string(dst) +
                          ": rank out of range (0.." + std::to_string(nranks_ - 1) + ")");
    std::vector<int> r;
    if (src == dst)
        return r;
    int d = direct(src, dst); // one hop is always shortest: no table needed (full mesh stays cheap)
    if (d >= 0) {
        r.push_back(d);
        return r;
    }
    const std::vector<int> &t = next_table(dst);
    int v = src;
    while (v != dst) {
        int ch = t[v];
        if (ch < 0 || (int)r.size() > nnodes())
            throw ConfigError("route " + std::to_string(src) + "->" + std::to_string(dst) +
                              ": unreachable");
        r.push_back(ch);
        v = channels_[ch].to;
    }
    return r;
}

std::string Topology::channel_name(int ch) const
{
    const TopoChannel &c = channels_.at(ch);
    return nodes_[c.from].name + "->" + nodes_[c.to].name;
}

std::string Topology::describe() const
{
    std::ostringstream o;
    int nsw = nnodes() - nranks_;
    o << "topology " << kind_name(spec_.kind) << ": " << nranks_ << " NPUs, " << nsw
      << " switches, " << channels_.size() << " channels\n";
    for (const TopoNode &n : nodes_)
        if (n.is_switch)
            o << "  node " << n.id << " " << n.name << " switch, " << n.out.size() << " ports\n";
    char buf[256];
    for (const TopoChannel &c : channels_) {
        std::snprintf(buf, sizeof buf,
                      "  ch%-5d %-14s %9.3f GB/s %8.3f us  packet %u+%u B  buffer %u B%s\n", c.id,
                      channel_name(c.id).c_str(), c.params.bandwidth / 1e9,
                      c.params.latency * 1e6, c.params.packet_bytes, c.params.header_bytes,
                      c.params.buffer_bytes, c.nic ? "  (nic)" : "");
        o << buf;
    }
    return o.str();
}

} // namespace model
