// test_topo_links.cpp — rs_topo: the enumeration of a topology's links is the model's channels (ids and order), and its constant-time answers (has_link, link_count) say what it enumerates, for every kind over many shapes.
#include <cstdio>
#include <set>
#include <utility>
#include <vector>

#include <systemc>

#include "model/rs_topo.h"
#include "model/topology.hpp"
#include "model_test.hpp"

using Links = std::vector<rs_topo_link>;

static int collect(void *ud, const rs_topo_link *l)
{
    static_cast<Links *>(ud)->push_back(*l);
    return 0;
}

static void check_spec(const rs_topology_spec &s, const char *what)
{
    Links links;
    CHECK(rs_topo_links(&s, collect, &links) == 0);
    int64_t nodes = rs_topo_ranks(&s) + rs_topo_switches(&s);
    if (rs_topo_link_count(&s) != links.size())
        std::fprintf(stderr, "%s: link_count %llu, enumerated %zu\n", what,
                     (unsigned long long)rs_topo_link_count(&s), links.size());
    CHECK(rs_topo_link_count(&s) == links.size());

    std::set<std::pair<int, int>> set;
    for (const rs_topo_link &l : links) {
        CHECK(l.from >= 0 && l.from < nodes && l.to >= 0 && l.to < nodes && l.from != l.to);
        CHECK(set.insert({l.from, l.to}).second); // no link twice: the model would build parallel channels
    }
    for (int a = -1; a <= nodes; a++)
        for (int b = -1; b <= nodes; b++) {
            int want = set.count({a, b}) ? 1 : 0;
            if (rs_topo_has_link(&s, a, b) != want) {
                std::fprintf(stderr, "%s: has_link(%d, %d) = %d, the enumeration says %d\n", what, a, b,
                             rs_topo_has_link(&s, a, b), want);
                g_failures++;
            }
        }

    // The model builds one channel per link, in this order: channel i is link i.
    model::Topology t(s);
    CHECK(t.nnodes() == nodes);
    CHECK(t.channels().size() == links.size());
    for (size_t i = 0; i < links.size() && i < t.channels().size(); i++) {
        const model::TopoChannel &c = t.channels()[i];
        if (c.from != links[i].from || c.to != links[i].to || c.nic != (links[i].nic != 0) ||
            c.params.bandwidth != links[i].params->bandwidth) {
            std::fprintf(stderr, "%s: channel %zu is %d->%d, link %zu is %d->%d\n", what, i, c.from, c.to, i,
                         links[i].from, links[i].to);
            g_failures++;
            break;
        }
    }
}

static int stop_at_third(void *ud, const rs_topo_link *)
{
    return ++*static_cast<int *>(ud) == 3 ? 7 : 0;
}

int sc_main(int, char **)
{
    char what[96];
    for (int p = 2; p <= 7; p++)
        for (rs_topo_kind k : {RS_TOPO_RING, RS_TOPO_BIRING, RS_TOPO_FULL_MESH, RS_TOPO_SWITCH}) {
            std::snprintf(what, sizeof what, "%s %d", model::Topology::kind_name(k), p);
            check_spec(test_spec(k, p), what);
        }
    for (int rows = 1; rows <= 5; rows++)
        for (int cols = 1; cols <= 5; cols++) {
            if (rows * cols < 2)
                continue;
            rs_topology_spec s = test_spec(RS_TOPO_TORUS2D, 0);
            s.dims[0] = rows;
            s.dims[1] = cols;
            std::snprintf(what, sizeof what, "torus2d %dx%d", rows, cols);
            check_spec(s, what);
        }
    for (int p : {2, 4, 6, 12})
        for (int per_leaf : {1, 2, 3, 4, 6})
            for (int spines : {1, 2, 3}) {
                if (p % per_leaf)
                    continue;
                rs_topology_spec s = test_spec(RS_TOPO_FAT_TREE, p);
                s.per_leaf = per_leaf;
                s.spines = spines;
                std::snprintf(what, sizeof what, "fat_tree %d/%d/%d", p, per_leaf, spines);
                check_spec(s, what);
            }
    check_spec(test_spec(RS_TOPO_SERVER8, 0), "server8");
    for (int servers = 1; servers <= 3; servers++) {
        rs_topology_spec s = test_spec(RS_TOPO_CLUSTER, 0);
        s.servers = servers;
        std::snprintf(what, sizeof what, "cluster %d", servers);
        check_spec(s, what);
    }
    // An explicit list: one-way and both ways, own parameters, items named.
    rs_link_spec l[4] = {};
    const int ends[4][3] = {{0, 1, 1}, {1, 2, 0}, {2, 0, 1}, {3, 1, 1}};
    for (int i = 0; i < 4; i++) {
        l[i].ends = rs_link_ref{ends[i][0], ends[i][1], ends[i][2], 10 + i};
        l[i].params = test_link(1e9 * (i + 1));
    }
    rs_topology_spec s = test_spec(RS_TOPO_LINKS, 4);
    s.links = l;
    s.links_count = 4;
    check_spec(s, "links");
    Links links;
    rs_topo_links(&s, collect, &links);
    CHECK(links.size() == 7 && links[2].from == 1 && links[2].to == 2 && links[2].item == 1);
    CHECK(links[2].params == &l[1].params);

    int seen = 0;
    CHECK(rs_topo_links(&s, stop_at_third, &seen) == 7 && seen == 3);

    // Too large to enumerate, answered in constant time.
    rs_topology_spec big = test_spec(RS_TOPO_FULL_MESH, 65536);
    CHECK(rs_topo_link_count(&big) == 65536ull * 65535ull);
    CHECK(rs_topo_has_link(&big, 65535, 0) && !rs_topo_has_link(&big, 7, 7));
    return test_result("test_topo_links");
}
