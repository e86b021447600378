// model_test.hpp — tiny assertion helpers and spec builders shared by the model tests.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "model/rs_spec.h"

static int g_failures = 0;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);         \
            g_failures++;                                                                          \
        }                                                                                          \
    } while (0)

#define CHECK_NEAR(a, b, rel)                                                                      \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        if (!(std::fabs(a_ - b_) <= (rel) * std::fabs(b_))) {                                      \
            std::fprintf(stderr, "%s:%d: CHECK_NEAR failed: %s = %.9g vs %s = %.9g (rel %.3g)\n",  \
                         __FILE__, __LINE__, #a, a_, #b, b_, (double)(rel));                       \
            g_failures++;                                                                          \
        }                                                                                          \
    } while (0)

static inline rs_link_params test_link(double bw = 10e9, double lat = 1e-6)
{
    rs_link_params p{};
    p.bandwidth = bw;
    p.latency = lat;
    p.packet_bytes = 4096;
    p.header_bytes = 64;
    p.buffer_bytes = 1024 * 1024;
    return p;
}

static inline rs_topology_spec test_spec(rs_topo_kind kind, int nranks)
{
    rs_topology_spec s{};
    s.kind = kind;
    s.nranks = nranks;
    s.link = test_link();
    s.nic = test_link(5e9, 2e-6);
    s.sw.latency = 100e-9;
    s.sw.buffer_bytes = 1024 * 1024;
    return s;
}

static inline int test_result(const char *name)
{
    if (g_failures) {
        std::fprintf(stderr, "%s: %d check(s) failed\n", name, g_failures);
        return 1;
    }
    std::printf("%s: ok\n", name);
    return 0;
}
