// test_defaults.cpp — one truth for component defaults: every parameter `ringsim params` prints has a scenario key with the same default, and the model's own default values are what a scenario gets.
#include <cstdio>
#include <cstring>
#include <string>

#include <systemc>

#include "model/link.hpp"
#include "model/params.hpp"
#include "model/rs_defaults.h"
#include "model/switch.hpp"
#include "scenario/rs_scenario.h"

static int g_failures = 0;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            std::fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                   \
            std::fprintf(stderr, __VA_ARGS__);                                                     \
            std::fputc('\n', stderr);                                                              \
            g_failures++;                                                                          \
        }                                                                                          \
    } while (0)

// Where each component's parameters are keys of a scenario. A component the model adds to
// `ringsim params` must be placed here, so its defaults are compared too.
static const struct {
    const char *component, *prefix;
} k_homes[] = {
    {"topology", "topology."}, {"network", ""},  {"link", "topology.link."}, {"switch", "topology.switch."},
    {"npu", "device."},        {"rtl", "device."},
};

// The one parameter the model's table names otherwise than the scenario does.
static std::string scenario_name(const char *component, const char *param)
{
    if (std::strcmp(component, "topology") == 0 && std::strcmp(param, "nranks") == 0)
        return "ranks";
    return param;
}

// `ringsim params` prints, for each parameter, the default the scenario schema gives its key:
// the value, "required", or the first words of what the key reference says ("per_leaf" of
// "per_leaf (full bisection)").
static void test_params_match_schema()
{
    int compared = 0;
    for (const model::ComponentInfo *c : model::Params::registry()) {
        const char *prefix = nullptr;
        for (const auto &h : k_homes)
            if (std::strcmp(h.component, c->type) == 0)
                prefix = h.prefix;
        CHECK(prefix != nullptr, "component '%s' has no place in a scenario in k_homes", c->type);
        if (!prefix)
            continue;
        for (size_t i = 0; i < c->nparams; i++) {
            const model::ParamInfo &p = c->params[i];
            std::string key = prefix + scenario_name(c->type, p.name);
            const char *def = rs_scenario_key_default(key.c_str());
            CHECK(def != nullptr, "%s.%s: the scenario has no key %s", c->type, p.name, key.c_str());
            if (!def)
                continue;
            std::string want = def;
            size_t remark = want.find(" (");
            if (remark != std::string::npos)
                want.resize(remark);
            CHECK(want == p.def, "%s.%s: ringsim params says '%s', a scenario's %s gets '%s'", c->type, p.name, p.def,
                  key.c_str(), def);
            compared++;
        }
    }
    CHECK(compared >= 25, "only %d parameters compared", compared);
}

static bool same(const rs_link_params &a, const rs_link_params &b)
{
    return a.bandwidth == b.bandwidth && a.latency == b.latency && a.packet_bytes == b.packet_bytes &&
           a.header_bytes == b.header_bytes && a.buffer_bytes == b.buffer_bytes;
}

// The values the model builds with when no scenario gives them (benchmarks, the RTL domain's
// clock) are the values a scenario that leaves the keys out gets.
static void test_model_values_match_scenario()
{
    /* device: {} so that its check turns device.rtl_clock's text into Hz (a scenario without
     * `device` leaves it 0, which the model reads as RS_DEFAULT_RTL_CLOCK_HZ) */
    static const char text[] = "topology: {kind: ring, ranks: 2}\ndevice: {}\n";
    rs_scenario sc;
    char err[RS_SCENARIO_ERRLEN];
    int rc = rs_scenario_load_string(text, sizeof text - 1, "defaults.yaml", &sc, err, sizeof err);
    CHECK(rc == 0, "%s", err);
    if (rc != 0)
        return;
    CHECK(same(sc.topo.link, model::Link::defaults()), "topology.link differs from Link::defaults()");
    CHECK(same(sc.topo.nic, model::Link::nic_defaults()), "topology.nic differs from Link::nic_defaults()");
    rs_switch_params sw = model::Switch::defaults();
    CHECK(sc.topo.sw.latency == sw.latency && sc.topo.sw.buffer_bytes == sw.buffer_bytes,
          "topology.switch differs from Switch::defaults()");
    CHECK(sc.device.rtl_clock == RS_DEFAULT_RTL_CLOCK_HZ, "device.rtl_clock %g differs from %g", sc.device.rtl_clock,
          RS_DEFAULT_RTL_CLOCK_HZ);
    rs_scenario_free(&sc);
}

int sc_main(int, char **)
{
    test_params_match_schema();
    test_model_values_match_scenario();
    if (g_failures) {
        std::fprintf(stderr, "test_defaults: %d check(s) failed\n", g_failures);
        return 1;
    }
    std::printf("test_defaults: ok\n");
    return 0;
}
