// topology.hpp — builds nodes and unidirectional channels from an rs_topology_spec (its links are
// rs_topo.h's enumeration), validates it and computes hop-by-hop routing tables. Pure C++ (no
// SystemC): the network instantiates it.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/params.hpp"
#include "model/rs_spec.h"
#include "model/rs_topo.h"

namespace model {

/** A configuration error (bad spec, unreachable pair, ...): the message names the offending item
 *  and, where the spec carries one, its scenario line. The caller reports it and exits; the model
 *  never exits by itself. */
class ConfigError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/** A node: ranks 0..p-1 are NPUs, switches follow. */
struct TopoNode {
    int id;
    bool is_switch;
    std::string name;     // "npu3", "sw0", "leaf1", "spine0"
    std::vector<int> out; // channel ids leaving this node
    std::vector<int> in;  // channel ids arriving here
};

/** A unidirectional channel between two nodes. */
struct TopoChannel {
    int id;
    int from, to;
    rs_link_params params;
    bool nic; // cluster: NPU NIC <-> switch channel
};

class Topology {
public:
    /** Build and validate; throws ConfigError. */
    explicit Topology(const rs_topology_spec &spec);

    int nranks() const { return nranks_; }
    int nnodes() const { return (int)nodes_.size(); }
    const std::vector<TopoNode> &nodes() const { return nodes_; }
    const std::vector<TopoChannel> &channels() const { return channels_; }
    const rs_topology_spec &spec() const { return spec_; }
    rs_switch_params switch_params() const { return spec_.sw; }
    /** Latency added at every intermediate node (switch or NPU in transit) = the switch latency. */
    double forward_latency() const { return spec_.sw.latency; }

    /** The first channel a->b, or -1. */
    int direct(int a, int b) const;
    /** Channels matching a link reference (a->b, and b->a if `both`); throws when none exists. */
    std::vector<int> match(const rs_link_ref &ref, const char *what) const;

    /** Hop-by-hop table towards `dst`: next channel from every node, -1 where there is none.
     *  Computed on first use and cached. */
    const std::vector<int> &next_table(int dst) const;
    /** The channels from src to dst (empty when src == dst). Throws ConfigError if unreachable. */
    std::vector<int> route(int src, int dst) const;
    int hops(int src, int dst) const { return (int)route(src, dst).size(); }

    /** Gives every channel, in id order, these parameters (Network::link_params after faults: a
     *  model priced on the links as they are now). Routes count hops and stay. Throws ConfigError
     *  unless there is one entry per channel. */
    void set_params(const std::vector<rs_link_params> &params);

    /** Human-readable list of nodes and channels. */
    std::string describe() const;
    std::string channel_name(int ch) const;
    static const char *kind_name(rs_topo_kind k);

    /** Parameters of the topology itself (kind, sizes), for `ringsim params`. */
    static const ComponentInfo &info();

private:
    int add_node(bool is_switch, const std::string &name);
    int add_channel(int from, int to, const rs_link_params &p, bool nic = false);
    /** rs_topo_links' visitor: one channel per link, in its order (self: the Topology). */
    static int add_link(void *self, const rs_topo_link *l);
    void check_params(const rs_link_params &p, const std::string &where) const;
    void validate_connected() const;
    void compute_table(int dst, std::vector<int> &next) const;

    rs_topology_spec spec_;
    int nranks_ = 0;
    std::vector<TopoNode> nodes_;
    std::vector<TopoChannel> channels_;
    mutable std::vector<std::unique_ptr<std::vector<int>>> tables_; // per destination, lazy
};

} // namespace model
