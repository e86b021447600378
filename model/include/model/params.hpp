// params.hpp — SST-style component tables: each component type declares its parameters, ports and
// statistics in one place; the registry lists every type so `ringsim params` can print them all.
#pragma once

#include <cstddef>
#include <cstdio>
#include <vector>

namespace model {

/** One configurable parameter: scenario key, unit, default (as written in a scenario), meaning. */
struct ParamInfo {
    const char *name;
    const char *unit;
    const char *def;
    const char *description;
};

/** One port of a component (what it connects to). */
struct PortInfo {
    const char *name;
    const char *description;
};

/** One statistic a component reports. */
struct StatInfo {
    const char *name;
    const char *unit;
    const char *description;
};

/** The whole table of one component type. */
struct ComponentInfo {
    const char *type;
    const char *description;
    const ParamInfo *params;
    size_t nparams;
    const PortInfo *ports;
    size_t nports;
    const StatInfo *stats;
    size_t nstats;
};

#define MODEL_COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))
#define MODEL_COMPONENT(type, desc, params, ports, stats)                                          \
    ComponentInfo {                                                                                \
        type, desc, params, MODEL_COUNT_OF(params), ports, MODEL_COUNT_OF(ports), stats,           \
            MODEL_COUNT_OF(stats)                                                                  \
    }

/** Registry of component types. The list is explicit (see params.cpp): static-library objects
 *  that register themselves from constructors get dropped by the linker when unreferenced. */
class Params {
public:
    /** Every component type, in print order. */
    static const std::vector<const ComponentInfo *> &registry();
    /** The table of one type, or nullptr. */
    static const ComponentInfo *find(const char *type);
    /** Print all tables (what `ringsim params` shows). */
    static void print(FILE *out);
};

} // namespace model
