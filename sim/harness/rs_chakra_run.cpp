// rs_chakra_run.cpp — a Chakra execution trace on the model (`ringsim run SCENARIO --chakra PREFIX`):
// every rank's graph in dependency order, compute as busy time on its lane, each collective on
// the simulated network with the engine on every NPU.
#include "rs_chakra_run.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <ncl/ncl_diag.h>

#include "chakra/rs_chakra.h"
#include "rs_program.hpp"
#include "sweep/rs_shape.h"
#include "sweep/rs_sweep.h"

namespace rs {

namespace {

const uint64_t k_ps_per_us = 1000000;

struct Trace {
    rs_et_trace t{};
    std::vector<size_t> order;       // nodes in dependency order, file order among the ready
    std::vector<size_t> colls;       // the collective nodes, in that order
    std::vector<uint64_t> end;       // per node: finish time in ps from the start, UINT64_MAX: not yet
    ~Trace() { rs_et_free(&t); }
};

// Kahn's algorithm taking the lowest file index among the ready nodes: the order the trace's
// author wrote wherever the dependencies leave a choice (rs_et_load refused cycles).
void sort_nodes(Trace &tr)
{
    const rs_et_trace &t = tr.t;
    std::vector<size_t> indeg(t.n, 0);
    std::vector<std::vector<size_t>> users(t.n);
    for (size_t i = 0; i < t.n; i++)
        for (size_t d = 0; d < t.nodes[i].ndeps; d++) {
            users[t.nodes[i].deps[d]].push_back(i); // (rs_et_load made the ids indices)
            indeg[i]++;
        }
    std::vector<size_t> ready;
    for (size_t i = 0; i < t.n; i++)
        if (!indeg[i])
            ready.push_back(i);
    while (!ready.empty()) {
        auto lowest = std::min_element(ready.begin(), ready.end());
        size_t i = *lowest;
        ready.erase(lowest);
        tr.order.push_back(i);
        if (t.nodes[i].kind == RS_ET_COLLECTIVE)
            tr.colls.push_back(i);
        for (size_t u : users[i])
            if (--indeg[u] == 0)
                ready.push_back(u);
    }
    tr.end.assign(t.n, UINT64_MAX);
}

ncl_coll engine_coll(int comm_type)
{
    switch (comm_type) {
    case RS_ET_REDUCE: return NCL_COLL_REDUCE;
    case RS_ET_ALL_GATHER: return NCL_COLL_ALLGATHER;
    case RS_ET_BROADCAST: return NCL_COLL_BROADCAST;
    case RS_ET_ALL_TO_ALL: return NCL_COLL_ALLTOALL;
    case RS_ET_REDUCE_SCATTER: return NCL_COLL_REDUCE_SCATTER;
    default: return NCL_COLL_ALLREDUCE; // ALL_REDUCE, and BARRIER as a one-element allreduce
    }
}

// Runs every node of the rank but collectives whose dependencies are done, in dependency order
// (one pass: a node's dependencies come before it), each compute node on its lane (NPU or host:
// one op at a time each) once the lane is free.
void compute(Trace &tr, uint64_t lane_free[2], Tracer *tracer, int rank, uint64_t t0)
{
    for (size_t i : tr.order) {
        const rs_et_node &nd = tr.t.nodes[i];
        if (tr.end[i] != UINT64_MAX || nd.kind == RS_ET_COLLECTIVE)
            continue;
        uint64_t ready = 0;
        bool ok = true;
        for (size_t d = 0; d < nd.ndeps && ok; d++) {
            uint64_t e = tr.end[nd.deps[d]];
            ok = e != UINT64_MAX;
            ready = std::max(ready, ok ? e : 0);
        }
        if (!ok)
            continue;
        uint64_t start = ready, dur = 0;
        if (nd.kind == RS_ET_COMPUTE) {
            uint64_t &lane = lane_free[nd.cpu ? 1 : 0];
            start = std::max(ready, lane);
            dur = nd.duration_us * k_ps_per_us;
            lane = start + dur;
            if (tracer && dur)
                tracer->span(rank, nd.name[0] ? nd.name : "compute", t0 + start, t0 + start + dur);
        }
        tr.end[i] = start + dur;
    }
}

bool world_coll(const rs_et_node &nd) { return !nd.pg[0] || std::strcmp(nd.pg, "0") == 0; }
bool p2p(const rs_et_node &nd) { return nd.kind == RS_ET_SEND || nd.kind == RS_ET_RECV; }
bool comm_node(const rs_et_node &nd) { return nd.kind == RS_ET_COLLECTIVE || p2p(nd); }

// "PREFIX.R.et: node ID (NAME)": where a message points.
std::string where(const char *prefix, int r, const rs_et_node &nd)
{
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s.%d.et: node %llu (%s)", prefix, r, (unsigned long long)nd.id, nd.name);
    return buf;
}

// The traces' process groups, checked: each group collective names a group of the file and runs on
// one of its ranks, each group's (and the world's) members call the same collectives in the same
// order, and each (sender, receiver) pair's sends and receives match in order, size and tag.
// Fills `used` with the groups called (first use first) and gi[r][i] with node i's index there
// (-1: the world's). false: the message is on err.
bool check_comms(std::vector<Trace> &tr, const char *prefix, const char *groups_path, const rs_et_groups &gs,
                 std::vector<const rs_et_group *> &used, std::vector<std::vector<int>> &gi, FILE *err)
{
    const int p = (int)tr.size();
    gi.assign((size_t)p, {});
    for (int r = 0; r < p; r++) {
        const Trace &x = tr[(size_t)r];
        gi[(size_t)r].assign(x.t.n, -1);
        for (size_t i : x.order) {
            const rs_et_node &nd = x.t.nodes[i];
            if (nd.kind == RS_ET_COLLECTIVE && !world_coll(nd)) {
                const rs_et_group *g = rs_et_group_find(&gs, nd.pg);
                if (!g) {
                    std::fprintf(err, "ringsim: --chakra: %s: pg_name \"%s\" %s (allowed: the names of ASTRA-sim's "
                                 "comm group file, given with --chakra-groups FILE, or of the trace's "
                                 "process_group:init node; \"\" or \"0\": every rank)\n",
                                 where(prefix, r, nd).c_str(), nd.pg,
                                 groups_path ? (std::string("is not a group of ") + groups_path).c_str()
                                             : "but neither --chakra-groups FILE nor a process_group:init node "
                                               "names its ranks");
                    return false;
                }
                if (std::find(g->ranks, g->ranks + g->n, r) == g->ranks + g->n) {
                    std::fprintf(err, "ringsim: --chakra: %s: a collective of group \"%s\", which rank %d is not in "
                                 "(allowed: its ranks' traces only)\n", where(prefix, r, nd).c_str(), nd.pg, r);
                    return false;
                }
                size_t u = (size_t)(std::find(used.begin(), used.end(), g) - used.begin());
                if (u == used.size())
                    used.push_back(g);
                gi[(size_t)r][i] = (int)u;
            }
            if (p2p(nd)) {
                const bool send = nd.kind == RS_ET_SEND;
                const int32_t peer = send ? nd.dst : nd.src, self = send ? nd.src : nd.dst;
                if (peer >= p || peer == r || (self >= 0 && self != r)) {
                    std::fprintf(err, "ringsim: --chakra: %s: %s from %d to %d on rank %d (allowed: the peer %s, "
                                 "another of the %d ranks; the %s this trace's rank or absent)\n",
                                 where(prefix, r, nd).c_str(), send ? "a send" : "a receive", send ? self : peer,
                                 send ? peer : self, r, send ? "comm_dst" : "comm_src", p,
                                 send ? "comm_src" : "comm_dst");
                    return false;
                }
            }
        }
    }
    // each rank's collectives per group (-1: the world's, at 0) and its sends / receives per peer,
    // in order, gathered in one pass over every trace
    std::vector<std::vector<std::vector<size_t>>> seq(used.size() + 1, std::vector<std::vector<size_t>>((size_t)p));
    std::map<std::pair<int, int>, std::vector<size_t>> sends, recvs; // (sender, receiver)
    for (int r = 0; r < p; r++)
        for (size_t i : tr[(size_t)r].order) {
            const rs_et_node &nd = tr[(size_t)r].t.nodes[i];
            if (nd.kind == RS_ET_COLLECTIVE)
                seq[(size_t)(gi[(size_t)r][i] + 1)][(size_t)r].push_back(i);
            else if (nd.kind == RS_ET_SEND)
                sends[{r, nd.dst}].push_back(i);
            else if (nd.kind == RS_ET_RECV)
                recvs[{nd.src, r}].push_back(i);
        }
    // the k-th collective of each group, on every member, is one call
    for (int u = -1; u < (int)used.size(); u++) {
        std::vector<int> members;
        if (u < 0)
            for (int r = 0; r < p; r++)
                members.push_back(r);
        else
            members.assign(used[(size_t)u]->ranks, used[(size_t)u]->ranks + used[(size_t)u]->n);
        const std::vector<std::vector<size_t>> &of = seq[(size_t)(u + 1)];
        const std::vector<size_t> &first = of[(size_t)members[0]];
        const std::string gname = u < 0 ? "the world" : std::string("group \"") + used[(size_t)u]->name + "\"";
        for (size_t m = 1; m < members.size(); m++) {
            const std::vector<size_t> &mine = of[(size_t)members[m]];
            const Trace &a = tr[(size_t)members[0]], &b = tr[(size_t)members[m]];
            for (size_t k = 0; k < std::min(first.size(), mine.size()); k++) {
                const rs_et_node &x = a.t.nodes[first[k]], &y = b.t.nodes[mine[k]];
                if (x.comm_type != y.comm_type || x.comm_size != y.comm_size) {
                    std::fprintf(err, "ringsim: --chakra: %s, collective #%zu of %s, is %s of %llu B but rank %d's "
                                 "(node %llu) is %s of %llu B (allowed: the same collectives in the same order on "
                                 "every rank of a group)\n", where(prefix, members[m], y).c_str(), k + 1,
                                 gname.c_str(), rs_et_comm_name(y.comm_type), (unsigned long long)y.comm_size,
                                 members[0], (unsigned long long)x.id, rs_et_comm_name(x.comm_type),
                                 (unsigned long long)x.comm_size);
                    return false;
                }
            }
            if (first.size() != mine.size()) {
                std::fprintf(err, "ringsim: --chakra: %s.%d.et has %zu collectives of %s, %s.%d.et %zu (allowed: the "
                             "same collectives in the same order on every rank of a group)\n", prefix, members[m],
                             mine.size(), gname.c_str(), prefix, members[0], first.size());
                return false;
            }
        }
    }
    // sends and receives of each direction of a pair match in order (as ncl_send / ncl_recv do)
    auto unmatched = [&](int from, int to, size_t k, bool no_send, size_t i) {
        const int r = no_send ? to : from;
        std::fprintf(err, "ringsim: --chakra: %s: %s #%zu from rank %d to rank %d has no matching %s (allowed: every "
                     "send received, in order per pair)\n", where(prefix, r, tr[(size_t)r].t.nodes[i]).c_str(),
                     no_send ? "receive" : "send", k + 1, from, to, no_send ? "send" : "receive");
        return false;
    };
    for (const auto &sd : sends) {
        const int a = sd.first.first, b = sd.first.second;
        const auto it = recvs.find(sd.first);
        const std::vector<size_t> none, &rv = it == recvs.end() ? none : it->second;
        for (size_t k = 0; k < sd.second.size(); k++) {
            if (k >= rv.size())
                return unmatched(a, b, k, false, sd.second[k]);
            const rs_et_node &x = tr[(size_t)a].t.nodes[sd.second[k]], &y = tr[(size_t)b].t.nodes[rv[k]];
            if (x.comm_size != y.comm_size || (x.tag >= 0 && y.tag >= 0 && x.tag != y.tag)) {
                std::fprintf(err, "ringsim: --chakra: %s: receive #%zu from rank %d (%llu B, tag %lld) meets %s "
                             "(%llu B, tag %lld) (allowed: the same size and tag, in order per pair)\n",
                             where(prefix, b, y).c_str(), k + 1, a, (unsigned long long)y.comm_size,
                             (long long)y.tag, where(prefix, a, x).c_str(), (unsigned long long)x.comm_size,
                             (long long)x.tag);
                return false;
            }
        }
    }
    for (const auto &rv : recvs) { // receives beyond their sender's sends
        const auto it = sends.find(rv.first);
        const size_t have = it == sends.end() ? 0 : it->second.size();
        if (rv.second.size() > have)
            return unmatched(rv.first.first, rv.first.second, have, true, rv.second[have]);
    }
    return true;
}

// Every rank's graph as a program on rs::Programs: nodes in dependency order, a communication
// node started on a free slot of its own and waited for where a node depends on it (or when all
// kProgSlots are in flight, the oldest); NPU compute as the program's busy time, host compute
// (is_cpu_op) on the rank's second lane the same way as a call, one op at a time.
int run_programs(const rs_scenario &sc, model::Cluster &cl, const EngineSetup &setup, Tracer *tracer,
                 const char *prefix, const char *groups_path, std::vector<Trace> &tr, FILE *out, FILE *err)
{
    const int p = cl.nranks();
    struct Groups {
        rs_et_groups g{};
        ~Groups() { rs_et_groups_free(&g); }
    } gs;
    char why[RS_ET_ERRLEN];
    if (groups_path && rs_et_groups_load(groups_path, p, &gs.g, why, sizeof why) != 0) {
        std::fprintf(err, "ringsim: --chakra-groups: %s\n", why);
        return RS_EXIT_USAGE;
    }
    for (int r = 0; r < p; r++) { // and the groups the traces declare (PyTorch's process_group:init)
        const std::string path = std::string(prefix) + "." + std::to_string(r) + ".et";
        if (rs_et_groups_add_declared(&tr[(size_t)r].t, path.c_str(), p, &gs.g, why, sizeof why) != 0) {
            std::fprintf(err, "ringsim: --chakra: %s\n", why);
            return RS_EXIT_USAGE;
        }
    }
    std::vector<const rs_et_group *> used;
    std::vector<std::vector<int>> gi;
    if (!check_comms(tr, prefix, groups_path, gs.g, used, gi, err))
        return RS_EXIT_USAGE;

    // a communicator per group called, configured for its members' routes
    std::vector<std::unique_ptr<GroupSetup>> cfgs;
    std::vector<std::vector<ncl_comm *>> comms(used.size(), std::vector<ncl_comm *>((size_t)p, nullptr));
    auto destroy = [&] {
        for (auto &v : comms)
            for (ncl_comm *c : v)
                ncl_comm_destroy(c);
    };
    std::deque<std::string> labels; // the trace's lanes: the calls point at them
    for (size_t u = 0; u < used.size(); u++) {
        const rs_et_group &g = *used[u];
        cfgs.emplace_back(new GroupSetup);
        group_setup(sc, setup, cl.network().topology(), std::vector<int>(g.ranks, g.ranks + g.n), *cfgs.back());
        for (size_t m = 0; m < g.n; m++) {
            ncl_result rc = ncl_comm_create_group(cl.comm(g.ranks[m]), g.ranks, (int)g.n, (uint32_t)(1000 + u),
                                                  &cfgs.back()->cfg, &comms[u][(size_t)g.ranks[m]]);
            if (rc != NCL_SUCCESS) {
                std::fprintf(err, "ringsim: --chakra: making group \"%s\" on rank %d: %s\n", g.name, g.ranks[m],
                             ncl_comm_last_error(cl.comm(g.ranks[m])));
                destroy();
                return RS_EXIT_ENGINE;
            }
        }
        labels.push_back(std::string("pg ") + g.name);
    }
    labels.push_back("world");
    labels.push_back("p2p");
    const char *world_label = labels[used.size()].c_str(), *p2p_label = labels[used.size() + 1].c_str();

    const ncl_dtype dt = sc.workload.dtype;
    const uint64_t es = ncl_dtype_size(dt);
    Programs prog(cl, tracer, dt, sc.payload_real != 0);
    size_t sends = 0, recvs = 0, colls = 0, computes = 0;
    for (int r = 0; r < p; r++) {
        const Trace &x = tr[(size_t)r];
        std::vector<uint16_t> comm_index(used.size(), 0);
        for (size_t u = 0; u < used.size(); u++)
            if (comms[u][(size_t)r])
                comm_index[u] = prog.add_comm(r, comms[u][(size_t)r]);
        std::vector<int> slot_of(x.t.n, -1);
        std::deque<size_t> in_flight; // started, not waited: oldest first
        uint32_t free_slots = (1u << kProgSlots) - 1;
        auto wait_for = [&](size_t i) {
            prog.add(r, ProgStep{ProgStep::Wait, 0, (uint8_t)slot_of[i], 0, 0, 0, nullptr});
            free_slots |= 1u << slot_of[i];
            slot_of[i] = -1;
            in_flight.erase(std::find(in_flight.begin(), in_flight.end(), i));
        };
        for (size_t i : x.order) {
            const rs_et_node &nd = x.t.nodes[i];
            for (size_t d = 0; d < nd.ndeps; d++)
                if (slot_of[nd.deps[d]] >= 0)
                    wait_for(nd.deps[d]);
            if (nd.kind == RS_ET_COMPUTE)
                computes += r == 0;
            if (nd.kind == RS_ET_COMPUTE && !nd.cpu) { // the NPU's stream: the program waits for it
                if (nd.duration_us)
                    prog.add(r, ProgStep{ProgStep::Compute, 0, 0, 0, 0, nd.duration_us * k_ps_per_us,
                                         nd.name[0] ? nd.name : "compute"});
                continue;
            }
            if (!comm_node(nd) && !(nd.kind == RS_ET_COMPUTE && nd.duration_us))
                continue;
            ProgStep st{ProgStep::Start, 0, 0, 0, 0, 0, p2p_label};
            if (nd.kind == RS_ET_COMPUTE) { // a host op: the CPU's lane, beside the NPU's
                st.call = (uint8_t)ProgStep::Timer;
                st.count = nd.duration_us * k_ps_per_us;
                st.label = "cpu";
            } else if (p2p(nd)) {
                (nd.kind == RS_ET_SEND ? sends : recvs) += r == 0;
                st.call = nd.kind == RS_ET_SEND ? (uint8_t)ProgStep::Send : (uint8_t)ProgStep::Recv;
                st.peer = nd.kind == RS_ET_SEND ? nd.dst : nd.src;
                st.count = (nd.comm_size + es - 1) / es;
            } else {
                colls += r == 0;
                const int u = gi[(size_t)r][i];
                const int n = u < 0 ? p : (int)used[(size_t)u]->n;
                const ncl_coll coll = engine_coll(nd.comm_type);
                const uint64_t bytes = nd.comm_type == RS_ET_BARRIER ? es : nd.comm_size;
                rs_shape shp;
                if (!rs_shape_make(&shp, (rs_coll)coll, n, dt, NCL_SUM, 0, 0, bytes))
                    continue; // less than an element per rank: nothing moves
                st.call = (uint8_t)coll;
                st.comm = u < 0 ? 0 : comm_index[(size_t)u];
                st.count = shp.count;
                st.label = u < 0 ? world_label : labels[(size_t)u].c_str();
            }
            if (st.count == 0)
                continue;
            if (!free_slots)
                wait_for(in_flight.front());
            int slot = 0;
            while (!(free_slots >> slot & 1u))
                slot++;
            free_slots &= ~(1u << slot);
            st.slot = (uint8_t)slot;
            slot_of[i] = slot;
            in_flight.push_back(i);
            prog.add(r, st);
        }
        while (!in_flight.empty())
            wait_for(in_flight.front());
    }
    std::fprintf(out, "# chakra: %s.<rank>.et, %d ranks, trace version %s: %zu nodes on rank 0 (%zu collectives, "
                 "%zu sends, %zu receives, %zu compute); %zu process group%s%s%s; %s, in place%s\n",
                 prefix, p, tr[0].t.version, tr[0].t.n, colls, sends, recvs, computes, used.size(),
                 used.size() == 1 ? "" : "s", groups_path ? " from " : "", groups_path ? groups_path : "",
                 ncl_dtype_name(dt), sc.payload_real ? ", every call's result checked" : ", timing only");
    if (!prog.run()) {
        std::fprintf(err, "ringsim: --chakra: %s\n", prog.error().c_str());
        destroy();
        return RS_EXIT_ENGINE;
    }
    std::fprintf(out, "#\n# %5s %12s %12s %12s %14s\n", "rank", "end(us)", "compute(us)", "cpu(us)",
                 "exposed comm(us)");
    uint64_t finish = 0;
    for (int r = 0; r < p; r++) {
        const ProgRankTimes &t = prog.times(r);
        finish = std::max(finish, t.end);
        std::fprintf(out, "  %5d %12.2f %12.2f %12.2f %14.2f\n", r, (double)t.end / k_ps_per_us,
                     (double)t.compute / k_ps_per_us, (double)t.lane2 / k_ps_per_us, (double)t.blocked / k_ps_per_us);
    }
    std::fprintf(out, "#\n# %12s %7s\n  %12.2f %7s\n", "total(us)", "#wrong", (double)finish / k_ps_per_us,
                 sc.payload_real ? std::to_string(prog.wrong()).c_str() : "N/A");
    destroy();
    return prog.wrong() ? RS_EXIT_WRONG : RS_EXIT_OK;
}

} // namespace

int run_chakra(const rs_scenario &sc, model::Cluster &cl, const EngineSetup &setup, Tracer *tracer,
               const char *prefix, const char *groups_path, const CollRun &run, FILE *out, FILE *err)
{
    const int p = cl.nranks();
    std::vector<Trace> tr((size_t)p);
    for (int r = 0; r < p; r++) {
        std::string path = std::string(prefix) + "." + std::to_string(r) + ".et";
        char why[RS_ET_ERRLEN];
        if (rs_et_load(path.c_str(), &tr[(size_t)r].t, why, sizeof why) != 0) {
            bool missing = std::strstr(why, ": cannot open: ") != nullptr;
            std::fprintf(err, "ringsim: --chakra: %s%s\n", why,
                         missing ? " (a trace is PREFIX.<rank>.et for every rank of the scenario's topology)" : "");
            return RS_EXIT_USAGE;
        }
        sort_nodes(tr[(size_t)r]);
    }
    bool programs = groups_path != nullptr;
    for (const Trace &x : tr)
        for (size_t i = 0; i < x.t.n && !programs; i++)
            programs = p2p(x.t.nodes[i]) || (x.t.nodes[i].kind == RS_ET_COLLECTIVE && !world_coll(x.t.nodes[i]));
    if (programs)
        return run_programs(sc, cl, setup, tracer, prefix, groups_path, tr, out, err);
    // the k-th collective of every rank is one call: the same type and size everywhere
    const Trace &t0r = tr[0];
    for (int r = 1; r < p; r++) {
        const Trace &x = tr[(size_t)r];
        size_t k = 0;
        for (; k < std::min(x.colls.size(), t0r.colls.size()); k++) {
            const rs_et_node &a = t0r.t.nodes[t0r.colls[k]], &b = x.t.nodes[x.colls[k]];
            if (a.comm_type != b.comm_type || a.comm_size != b.comm_size) {
                std::fprintf(err, "ringsim: --chakra: %s.%d.et: node %llu, rank %d's collective #%zu, is %s of %llu B "
                             "but rank 0's (node %llu) is %s of %llu B (allowed: the same collectives in the "
                             "same order on every rank)\n", prefix, r, (unsigned long long)b.id, r, k + 1,
                             rs_et_comm_name(b.comm_type), (unsigned long long)b.comm_size,
                             (unsigned long long)a.id, rs_et_comm_name(a.comm_type),
                             (unsigned long long)a.comm_size);
                return RS_EXIT_USAGE;
            }
        }
        if (x.colls.size() != t0r.colls.size()) {
            std::fprintf(err, "ringsim: --chakra: %s.%d.et has %zu collectives, %s.0.et %zu (allowed: the same "
                         "collectives in the same order on every rank)\n", prefix, r, x.colls.size(), prefix,
                         t0r.colls.size());
            return RS_EXIT_USAGE;
        }
    }

    size_t computes = 0;
    for (size_t i = 0; i < t0r.t.n; i++)
        computes += t0r.t.nodes[i].kind == RS_ET_COMPUTE;
    std::fprintf(out, "# chakra: %s.<rank>.et, %d ranks, trace version %s: %zu nodes on rank 0 (%zu collectives, "
                 "%zu compute); %s, in place\n", prefix, p, t0r.t.version, t0r.t.n, t0r.colls.size(), computes,
                 ncl_dtype_name(sc.workload.dtype));
    std::fprintf(out, "#\n# %5s %8s %-24s %-15s %12s %12s %12s %12s  %s\n", "coll", "node", "name", "type", "bytes",
                 "start(us)", "time(us)", "end(us)", "algorithm");

    const uint64_t t0 = cl.network().scheduler().now();
    std::vector<std::array<uint64_t, 2>> lanes((size_t)p, {0, 0});
    uint64_t wrong_total = 0;
    double comm_us = 0;
    for (size_t k = 0; k <= t0r.colls.size(); k++) {
        for (int r = 0; r < p; r++)
            compute(tr[(size_t)r], lanes[(size_t)r].data(), tracer, r, t0);
        if (k == t0r.colls.size())
            break;
        // the call starts when its last rank is ready for it (the earlier ones wait in it)
        uint64_t start = 0;
        for (int r = 0; r < p; r++) {
            const Trace &x = tr[(size_t)r];
            const rs_et_node &nd = x.t.nodes[x.colls[k]];
            for (size_t d = 0; d < nd.ndeps; d++)
                start = std::max(start, x.end[nd.deps[d]]);
        }
        cl.idle_until(t0 + start);
        start = cl.network().scheduler().now() - t0;
        const rs_et_node &nd = t0r.t.nodes[t0r.colls[k]];
        uint64_t bytes = nd.comm_type == RS_ET_BARRIER ? ncl_dtype_size(sc.workload.dtype) : nd.comm_size;
        double us = 0;
        int algo = NCL_ALGO_AUTO;
        uint64_t wrong = 0;
        if (bytes > 0 && !run(engine_coll(nd.comm_type), bytes, &us, &algo, &wrong))
            return RS_EXIT_ENGINE;
        uint64_t end = start + (uint64_t)(us * k_ps_per_us + 0.5);
        for (int r = 0; r < p; r++)
            tr[(size_t)r].end[tr[(size_t)r].colls[k]] = end;
        wrong_total += wrong;
        comm_us += us;
        std::fprintf(out, "  %5zu %8llu %-24.24s %-15s %12llu %12.2f %12.2f %12.2f  %s\n", k,
                     (unsigned long long)nd.id, nd.name, rs_et_comm_name(nd.comm_type),
                     (unsigned long long)bytes, (double)start / k_ps_per_us, us, (double)end / k_ps_per_us,
                     bytes > 0 ? ncl_algo_name((ncl_algo)algo) : "-");
    }
    uint64_t finish = 0;
    for (int r = 0; r < p; r++)
        for (uint64_t e : tr[(size_t)r].end)
            finish = std::max(finish, e);
    cl.idle_until(t0 + finish);
    uint64_t npu_busy = 0;
    for (size_t i = 0; i < t0r.t.n; i++)
        if (t0r.t.nodes[i].kind == RS_ET_COMPUTE && !t0r.t.nodes[i].cpu)
            npu_busy += t0r.t.nodes[i].duration_us;
    std::fprintf(out, "#\n# %12s %14s %18s %7s\n", "total(us)", "collectives(us)", "rank 0 compute(us)", "#wrong");
    std::fprintf(out, "  %12.2f %14.2f %18.2f %7s\n", (double)finish / k_ps_per_us, comm_us, (double)npu_busy,
                 sc.payload_real ? std::to_string(wrong_total).c_str() : "N/A");
    return wrong_total ? RS_EXIT_WRONG : RS_EXIT_OK;
}

} // namespace rs
