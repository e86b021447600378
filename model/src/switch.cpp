// switch.cpp — switch node bookkeeping and its component table.
#include "model/switch.hpp"

#include "model/rs_defaults.h"

namespace model {

namespace {
const ParamInfo k_params[] = {
    {"latency", "s", RS_DEFAULT_SWITCH_LATENCY,
     "forwarding latency through the switch; also charged per hop where an NPU forwards "
     "(ring, torus, server8 non-adjacent pairs)"},
    {"buffer", "B", RS_DEFAULT_SWITCH_BUFFER, "output-port buffer (output queueing); full -> packets wait in the "
                             "input buffer, holding the input link's credits (back-pressure)"},
};
const PortInfo k_ports[] = {
    {"port[i]", "one channel pair per attached node; output port queues hold forwarded packets"},
};
const StatInfo k_stats[] = {
    {"forwarded", "-", "packets (packet fidelity) or transfers (message fidelity) forwarded"},
    {"forwarded_bytes", "B", "payload bytes forwarded"},
    {"peak_queue_bytes", "B", "per output port: see the link statistic of that port's channel"},
};
} // namespace

const ComponentInfo &Switch::info()
{
    static const ComponentInfo ci = MODEL_COMPONENT(
        "switch",
        "output-queued switch; routes by the hop-by-hop table the topology builder computed",
        k_params, k_ports, k_stats);
    return ci;
}

rs_switch_params Switch::defaults()
{
    rs_switch_params p;
    p.latency = RS_DEFAULT_SWITCH_LATENCY_S;
    p.buffer_bytes = RS_DEFAULT_SWITCH_BUFFER_BYTES;
    return p;
}

Switch::Switch(int node, std::string name, const rs_switch_params &p, std::vector<int> in_ports,
               std::vector<int> out_ports)
    : node_(node), name_(std::move(name)), p_(p), in_(std::move(in_ports)),
      out_(std::move(out_ports))
{
}

} // namespace model
