// test_model_topology.cpp — builder and routing: route lengths on every topology kind, overrides,
// builder errors, describe() and the params tables. No simulation runs here.
#include <cstdlib>
#include <cstring>
#include <string>

#include <systemc>

#include "model/params.h"
#include "model/params.hpp"
#include "model_test.hpp"
#include "model/topology.hpp"

using model::ConfigError;
using model::Topology;

static int max_hops(const Topology &t)
{
    int m = 0;
    for (int a = 0; a < t.nranks(); a++)
        for (int b = 0; b < t.nranks(); b++)
            m = std::max(m, t.hops(a, b));
    return m;
}

// Builds `s` expecting a ConfigError whose message contains `want`.
static void expect_error(const rs_topology_spec &s, const char *want)
{
    try {
        Topology t(s);
        std::fprintf(stderr, "expected error containing '%s', got none\n", want);
        g_failures++;
    } catch (const ConfigError &e) {
        if (!std::strstr(e.what(), want)) {
            std::fprintf(stderr, "error '%s' lacks '%s'\n", e.what(), want);
            g_failures++;
        }
    }
}

static void test_ring()
{
    Topology t(test_spec(RS_TOPO_RING, 8));
    CHECK(t.channels().size() == 8);
    CHECK(t.hops(0, 1) == 1);
    CHECK(t.hops(0, 7) == 7); // one direction: NPU transit is the only way
    CHECK(t.hops(5, 4) == 7);
    Topology b(test_spec(RS_TOPO_BIRING, 8));
    CHECK(b.channels().size() == 16);
    CHECK(b.hops(0, 7) == 1);
    CHECK(max_hops(b) == 4);
    Topology b2(test_spec(RS_TOPO_BIRING, 2));
    CHECK(b2.channels().size() == 2);
}

static void test_mesh_torus()
{
    Topology m(test_spec(RS_TOPO_FULL_MESH, 5));
    CHECK(m.channels().size() == 20);
    CHECK(max_hops(m) == 1);
    rs_topology_spec s = test_spec(RS_TOPO_TORUS2D, 0);
    s.dims[0] = 4;
    s.dims[1] = 4;
    Topology t(s);
    CHECK(t.nranks() == 16);
    CHECK(t.channels().size() == 64); // 16 nodes x 4 neighbours
    CHECK(max_hops(t) == 4);
    CHECK(t.hops(0, 10) == 4);
    CHECK(t.hops(0, 3) == 1); // wrap-around
    // Deterministic tie-break: 0 -> 5 (row 1, col 1) goes via the lowest-id neighbour, 1.
    std::vector<int> r = t.route(0, 5);
    CHECK(r.size() == 2 && t.channels()[r[0]].to == 1);
    s.dims[0] = 2;
    s.dims[1] = 3;
    Topology t23(s);
    CHECK(t23.nranks() == 6);
    CHECK(max_hops(t23) == 2);
}

static void test_switch_fat_tree()
{
    Topology s(test_spec(RS_TOPO_SWITCH, 6));
    CHECK(s.nnodes() == 7);
    CHECK(max_hops(s) == 2);
    CHECK(s.hops(0, 1) == 2);
    rs_topology_spec f = test_spec(RS_TOPO_FAT_TREE, 16);
    f.per_leaf = 4;
    f.spines = 2;
    Topology t(f);
    CHECK(t.nnodes() == 16 + 4 + 2);
    CHECK(t.hops(0, 3) == 2);
    CHECK(t.hops(0, 4) == 4);
    CHECK(max_hops(t) == 4);
    // Up-links spread over the spines by destination (d mod k).
    std::vector<int> r4 = t.route(0, 4), r5 = t.route(0, 5);
    CHECK(t.channels()[r4[1]].to != t.channels()[r5[1]].to);
    f.per_leaf = 3;
    expect_error(f, "multiple of per_leaf");
}

static void test_server8_cluster()
{
    Topology s(test_spec(RS_TOPO_SERVER8, 0));
    CHECK(s.nranks() == 8);
    CHECK(s.channels().size() == 2 * (6 + 6 + 4));
    for (int a = 0; a < 8; a++)
        for (int b = 0; b < 8; b++) {
            if (a == b)
                continue;
            bool adjacent = (a / 4 == b / 4) || (a % 4 == b % 4);
            CHECK(s.hops(a, b) == (adjacent ? 1 : 2));
        }
    rs_topology_spec c = test_spec(RS_TOPO_CLUSTER, 0);
    c.servers = 2;
    Topology t(c);
    CHECK(t.nranks() == 16);
    CHECK(t.nnodes() == 17);
    CHECK(t.hops(0, 3) == 1);
    CHECK(t.hops(8, 12) == 1);
    std::vector<int> r = t.route(0, 9); // other server: NIC -> switch -> NIC
    CHECK(r.size() == 2);
    CHECK(t.channels()[r[0]].nic && t.channels()[r[1]].nic);
    CHECK(t.channels()[r[0]].to == 16);
    CHECK(t.channels()[r[0]].params.bandwidth == 5e9);
    CHECK(t.hops(0, 5) == 2);
    CHECK(max_hops(t) == 2);
}

static void test_links_and_errors()
{
    rs_link_spec l[3];
    for (int i = 0; i < 3; i++) {
        l[i].ends = rs_link_ref{i, i + 1, 1, 10 + i};
        l[i].params = test_link();
    }
    rs_topology_spec s = test_spec(RS_TOPO_LINKS, 4);
    s.links = l;
    s.links_count = 3;
    {
        Topology t(s);
        CHECK(t.channels().size() == 6);
        CHECK(t.hops(0, 3) == 3); // a chain: NPUs forward because nothing else connects them
        CHECK(t.hops(3, 0) == 3);
    }
    // Missing link 1-2: {0,1} and {2,3} are not connected.
    l[1].ends = rs_link_ref{2, 3, 1, 11};
    expect_error(s, "cannot reach rank");
    l[1].ends = rs_link_ref{1, 2, 1, 11};
    // Endpoint out of range, with the scenario line.
    l[2].ends = rs_link_ref{2, 9, 1, 42};
    expect_error(s, "out of range");
    expect_error(s, "line 42");
    l[2].ends = rs_link_ref{2, 3, 0, 12}; // one direction only: 3 cannot reach anyone
    expect_error(s, "rank 3 cannot reach rank 0");
    l[2].ends = rs_link_ref{2, 3, 1, 12};

    // Overrides: a slow link and an asymmetric one.
    rs_link_override o[2] = {{{1, 2, 1, 20}, 1e9, -1}, {{2, 3, 0, 21}, -1, 5e-6}};
    s.overrides = o;
    s.overrides_count = 2;
    {
        Topology t(s);
        CHECK(t.channels()[t.direct(1, 2)].params.bandwidth == 1e9);
        CHECK(t.channels()[t.direct(2, 1)].params.bandwidth == 1e9);
        CHECK(t.channels()[t.direct(2, 3)].params.latency == 5e-6);
        CHECK(t.channels()[t.direct(3, 2)].params.latency == 1e-6);
    }
    o[1].ends = rs_link_ref{0, 3, 0, 22};
    expect_error(s, "no such link");
    s.overrides_count = 0;

    rs_topology_spec t = test_spec(RS_TOPO_TORUS2D, 0);
    expect_error(t, "dims");
    rs_topology_spec r1 = test_spec(RS_TOPO_RING, 1);
    expect_error(r1, "at least 2 ranks");
    rs_topology_spec bw = test_spec(RS_TOPO_RING, 4);
    bw.link.bandwidth = 0;
    expect_error(bw, "bandwidth");
    rs_topology_spec empty = test_spec(RS_TOPO_LINKS, 4);
    expect_error(empty, "empty");
    try {
        Topology ok(test_spec(RS_TOPO_RING, 4));
        ok.route(0, 7);
        g_failures++;
    } catch (const ConfigError &e) {
        CHECK(std::strstr(e.what(), "out of range"));
    }
}

static void test_describe_params()
{
    Topology t(test_spec(RS_TOPO_SWITCH, 3));
    std::string d = t.describe();
    CHECK(d.find("npu0->sw0") != std::string::npos);
    CHECK(d.find("3 NPUs, 1 switches, 6 channels") != std::string::npos);
    char *buf = nullptr;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    model_params_print(f);
    std::fclose(f);
    std::string out(buf, len);
    std::free(buf);
    for (const char *want : {"link", "switch", "network", "topology", "bandwidth", "latency",
                             "packet", "header", "buffer", "duplex_bandwidth", "peak_queue", "busy",
                             "statistics", "ports"})
        CHECK(out.find(want) != std::string::npos);
    CHECK(model::Params::find("link") && model::Params::find("link")->nparams == 6);
    CHECK(model::Params::find("nothing") == nullptr);
}

int sc_main(int, char **)
{
    test_ring();
    test_mesh_torus();
    test_switch_fat_tree();
    test_server8_cluster();
    test_links_and_errors();
    test_describe_params();
    return test_result("test_model_topology");
}
