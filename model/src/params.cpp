// params.cpp — the registry of component tables and `ringsim params` output.
#include "model/params.h"
#include "model/params.hpp"

#include <cstring>

#include "model/link.hpp"
#include "model/network.hpp"
#include "model/npu.hpp"
#include "model/rtl_device.hpp"
#include "model/switch.hpp"
#include "model/topology.hpp"

namespace model {

const std::vector<const ComponentInfo *> &Params::registry()
{
    // Add new component types here.
    static const std::vector<const ComponentInfo *> r = {
        &Topology::info(), &Network::info(), &Link::info(), &Switch::info(), &Npu::info(),
        &RtlDomain::info(),
    };
    return r;
}

const ComponentInfo *Params::find(const char *type)
{
    for (const ComponentInfo *c : registry())
        if (std::strcmp(c->type, type) == 0)
            return c;
    return nullptr;
}

void Params::print(FILE *out)
{
    bool first = true;
    for (const ComponentInfo *c : registry()) {
        if (!first)
            std::fputc('\n', out);
        first = false;
        std::fprintf(out, "%s — %s\n", c->type, c->description);
        std::fprintf(out, "  parameters:\n");
        std::fprintf(out, "    %-12s %-5s %-10s %s\n", "name", "unit", "default", "description");
        for (size_t i = 0; i < c->nparams; i++)
            std::fprintf(out, "    %-12s %-5s %-10s %s\n", c->params[i].name, c->params[i].unit,
                         c->params[i].def, c->params[i].description);
        std::fprintf(out, "  ports:\n");
        for (size_t i = 0; i < c->nports; i++)
            std::fprintf(out, "    %-12s %s\n", c->ports[i].name, c->ports[i].description);
        std::fprintf(out, "  statistics:\n");
        for (size_t i = 0; i < c->nstats; i++)
            std::fprintf(out, "    %-16s %-5s %s\n", c->stats[i].name, c->stats[i].unit,
                         c->stats[i].description);
    }
}

} // namespace model

extern "C" void model_params_print(FILE *out)
{
    model::Params::print(out);
}
