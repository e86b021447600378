// test_model_rings.cpp — logical rings found from the topology: every ring visits every rank
// once over direct channels, no channel serves two rings, and the shapes give what they should
// (the server's four rings use each of its 32 channels exactly once).
#include <cstdio>
#include <set>
#include <vector>

#include <systemc>

#include "model/rings.hpp"
#include "model_test.hpp"

using model::Topology;

namespace {

/* Checks the ring set is valid for t; returns the channels it uses. */
std::set<int> check_rings(const Topology &t, const std::vector<std::vector<int>> &rings)
{
    std::set<int> used;
    for (const std::vector<int> &ring : rings) {
        CHECK((int)ring.size() == t.nranks());
        CHECK(!ring.empty() && ring[0] == 0);
        std::set<int> seen(ring.begin(), ring.end());
        CHECK((int)seen.size() == t.nranks());
        for (size_t i = 0; i < ring.size(); i++) {
            int a = ring[i], b = ring[(i + 1) % ring.size()];
            int ch = t.direct(a, b);
            CHECK(ch >= 0);
            CHECK(used.insert(ch).second); // no channel twice
        }
    }
    return used;
}

rs_topology_spec spec(rs_topo_kind kind, int nranks)
{
    rs_topology_spec s = test_spec(kind, nranks);
    if (kind == RS_TOPO_TORUS2D)
        s.dims[0] = 4, s.dims[1] = nranks / 4;
    if (kind == RS_TOPO_CLUSTER)
        s.servers = nranks / 8;
    return s;
}

void expect(rs_topo_kind kind, int nranks, int want, size_t at_least, size_t at_most)
{
    Topology t(spec(kind, nranks));
    std::vector<std::vector<int>> rings = model::find_rings(t, want);
    std::printf("%-10s p=%-5d want %d: %zu ring(s)\n", Topology::kind_name(kind), nranks, want, rings.size());
    CHECK(rings.size() >= at_least && rings.size() <= at_most);
    check_rings(t, rings);
    CHECK(model::find_rings(t, want) == rings); // deterministic
}

} // namespace

int sc_main(int, char **)
{
    // The Atlas-800-style server: four rings, all 32 directed channels used once each.
    {
        Topology t(spec(RS_TOPO_SERVER8, 8));
        std::vector<std::vector<int>> rings = model::find_rings(t, 4);
        CHECK(rings.size() == 4);
        std::set<int> used = check_rings(t, rings);
        CHECK(used.size() == 32 && t.channels().size() == 32);
        for (const std::vector<int> &r : rings) {
            for (int x : r)
                std::printf(" %d", x);
            std::printf(" |");
        }
        std::printf("\n");
    }
    expect(RS_TOPO_RING, 1024, 8, 1, 1);    // one way round, the only ring
    expect(RS_TOPO_BIRING, 16, 8, 2, 2);    // both ways round
    // as deep as the loader allows (the search recursed once per rank: SIGSEGV near 40,300)
    expect(RS_TOPO_RING, 65536, 2, 1, 1);
    expect(RS_TOPO_BIRING, 65536, 2, 2, 2);
    expect(RS_TOPO_TORUS2D, 16, 4, 2, 4);   // 4x4: at least the two snake-free directions
    expect(RS_TOPO_FULL_MESH, 5, 4, 4, 4);  // K5 splits into 4 directed Hamiltonian cycles
    expect(RS_TOPO_FULL_MESH, 6, 5, 1, 4);  // K6 does not split into 5 (Tillson): bounded search
    expect(RS_TOPO_SWITCH, 8, 4, 0, 0);     // no direct NPU-to-NPU channel
    expect(RS_TOPO_CLUSTER, 16, 4, 0, 0);   // servers meet only at the switch
    return test_result("test_model_rings");
}
