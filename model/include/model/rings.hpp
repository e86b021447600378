// rings.hpp — logical rings for the ring algorithms, found from the topology: directed
// Hamiltonian cycles over direct NPU-to-NPU channels, no channel in two rings, so that every ring
// runs at full link bandwidth at the same time (on the Atlas-800-style server: four rings that use
// every link once in each direction, found by search rather than taken from a table).
#pragma once

#include <cstdint>
#include <vector>

#include "model/topology.hpp"

namespace model {

/** Up to `want` rings, each an order of all ranks starting at rank 0 in which every rank has a
 *  direct channel to the next (and the last to the first), no channel used twice. The search
 *  backtracks (a first ring can block the others) within `budget` search steps in all, then
 *  returns the most rings it found — possibly none: a switch has no direct NPU-to-NPU channels,
 *  and clusters connect servers only through their NICs. Deterministic. */
std::vector<std::vector<int>> find_rings(const Topology &topo, int want, uint64_t budget = 2000000);
/** The same over the direct channels between `members` only (a sub-communicator's ranks): each
 *  ring an order of member indices 0..n-1 (members[i] is rank i of the group), starting at 0. */
std::vector<std::vector<int>> find_rings(const Topology &topo, const std::vector<int> &members, int want,
                                         uint64_t budget = 2000000);

} // namespace model
