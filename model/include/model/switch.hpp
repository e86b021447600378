// switch.hpp — a switch node: ports (channel pairs), output queueing with a byte buffer per output
// port (held by the output channel's sender-side queue), a forwarding latency, and routing from
// the hop-by-hop table the topology builder computed. Statistics per switch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/params.hpp"
#include "model/rs_spec.h"

namespace model {

class Switch {
public:
    Switch(int node, std::string name, const rs_switch_params &p, std::vector<int> in_ports,
           std::vector<int> out_ports);

    int node() const { return node_; }
    const std::string &name() const { return name_; }
    const rs_switch_params &params() const { return p_; }
    const std::vector<int> &in_ports() const { return in_; }   // channel ids arriving
    const std::vector<int> &out_ports() const { return out_; } // channel ids leaving
    /** Count one packet (packet fidelity) or message (message fidelity) forwarded. */
    void count_forward(uint64_t bytes)
    {
        forwarded_++;
        forwarded_bytes_ += bytes;
    }
    uint64_t forwarded() const { return forwarded_; }
    uint64_t forwarded_bytes() const { return forwarded_bytes_; }

    static const ComponentInfo &info();
    static rs_switch_params defaults();

private:
    int node_;
    std::string name_;
    rs_switch_params p_;
    std::vector<int> in_, out_;
    uint64_t forwarded_ = 0, forwarded_bytes_ = 0;
};

} // namespace model
