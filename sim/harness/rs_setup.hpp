// rs_setup.hpp — how ringsim configures the engine for a scenario: logical rings found from the
// topology, channels, the cost table `auto` chooses with, slices and scratch. Shared by `run`
// and `plan`, so what plan predicts is what run runs.
#pragma once

#include <cstdint>
#include <vector>

#include <ncl/ncl.h>
#include <ncl/ncl_hal.h>
#include <ncl/ncl_sched.h>

#include "model/rs_spec.h"
#include "model/topology.hpp"

namespace rs {

/** The engine configuration of a scenario. cfg points into the vectors, and the communicators
 *  keep pointing at the ring tables (one copy for every rank, not one each): keep the setup
 *  alive, and do not copy it, until the communicators are destroyed. */
struct EngineSetup {
    std::vector<std::vector<int>> rings; // the logical rings in use (empty: 0, 1, ..., p-1)
    std::vector<int32_t> ring_table;
    std::vector<int32_t> ring_positions; // its inverse: where each rank sits on each ring
    std::vector<uint32_t> ring_weights; // per ring: its slowest link's payload bandwidth, MB/s
    std::vector<std::vector<int>> local_rings; // two levels: a server's rings over local indices
    std::vector<int32_t> local_table;
    std::vector<ncl_cost> costs;
    ncl_config cfg;
    ncl_hal_caps caps; // what the devices' HAL reports (scratch: scenario_scratch)
    int nranks = 0;

    EngineSetup() = default;
    EngineSetup(const EngineSetup &) = delete;
    EngineSetup &operator=(const EngineSetup &) = delete;

    /** The planner's view of the same configuration (for ncl_plan_make): its scratch is what the
     *  algorithms get once the communicators set their landing zones aside (no zones here: a
     *  plan that prices or chooses needs none). */
    ncl_plan_env plan_env() const;
    /** The cost table again for sc's topology with its channels' parameters as they are now
     *  (model::Network::link_params: after faults), the rest of this configuration unchanged. */
    std::vector<ncl_cost> price(const rs_scenario &sc, const std::vector<rs_link_params> &live) const;
};

/** A sub-communicator's configuration (ncl_comm_create_group / ncl_comm_split's config): the
 *  world's options less what names the world's ranks (as the engine's own default for a child),
 *  plus logical rings over the direct links between the members, weighted by their slowest link,
 *  and a cost table priced on the members' own routes (auto chooses for the group, not for the
 *  world). cfg points into the vectors: keep it alive, uncopied, while the communicators live. */
struct GroupSetup {
    std::vector<int32_t> ring_table, ring_positions;
    std::vector<uint32_t> ring_weights;
    std::vector<ncl_cost> costs; // auto's prices on the members' routes
    ncl_config cfg;

    GroupSetup() = default;
    GroupSetup(const GroupSetup &) = delete;
    GroupSetup &operator=(const GroupSetup &) = delete;
};
void group_setup(const rs_scenario &sc, const EngineSetup &world, const model::Topology &topo,
                 const std::vector<int> &members, GroupSetup &out);

/** Fills `out` for sc on its topology (rings: auto searches it); ring weights and costs see the
 *  degrade faults at 0 s as part of it. */
void engine_setup(const rs_scenario &sc, const model::Topology &topo, EngineSetup &out);

/** Scratch per device for the engine: what the ring algorithms need for 1 MiB slices, within
 *  the device's memory. */
uint64_t scenario_scratch(const rs_scenario &sc);

/** Channels a scenario runs with: as it says, or one per ring found (at least 2). */
uint32_t scenario_channels(const rs_scenario &sc);

} // namespace rs
