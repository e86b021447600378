// test_program.cpp — rank programs driven by the simulator's events (sim/harness/rs_program) on the
// 8-NPU server, timing only: a call takes what Cluster::run takes for it, compute overlaps calls
// in flight, tensor- and data-parallel groups (rings over their members' links: rs::group_setup) and
// point-to-point chains run at once, and a wait that can never end fails naming its communicator.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include <ncl/ncl_diag.h>

#include "harness/rs_program.hpp"
#include "harness/rs_sc.hpp"
#include "harness/rs_setup.hpp"
#include "scenario/rs_scenario.h"

namespace {

int g_failed = 0;
#define CHECK(cond)                                                                                   \
    do {                                                                                              \
        if (!(cond)) {                                                                                \
            std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);             \
            g_failed++;                                                                               \
        }                                                                                             \
    } while (0)

using rs::ProgStep;
const uint64_t k_us = 1000000; // ps
const uint64_t N = 1 << 20;    // elements: 4 MiB

ProgStep start(uint8_t call, uint8_t slot, uint16_t comm, uint64_t count, int32_t peer = 0,
               const char *label = "calls")
{
    return ProgStep{ProgStep::Start, call, slot, comm, peer, count, label};
}
ProgStep wait(uint8_t slot) { return ProgStep{ProgStep::Wait, 0, slot, 0, 0, 0, nullptr}; }
ProgStep compute(uint64_t ps) { return ProgStep{ProgStep::Compute, 0, 0, 0, 0, ps, "compute"}; }

uint64_t last_end(const rs::Programs &p, int n)
{
    uint64_t e = 0;
    for (int r = 0; r < n; r++)
        e = p.times(r).end > e ? p.times(r).end : e;
    return e;
}

int body(const rs_scenario &sc)
{
    rs::EngineSetup setup; // outlives cl: the communicators point at its ring tables
    model::Cluster cl(sc.topo, sc.fidelity, sc.device, false, rs::scenario_scratch(sc));
    rs::engine_setup(sc, cl.network().topology(), setup);
    ncl_config cfg = setup.cfg;
    cfg.timeout_ns = 50000000; // 50 ms of simulated time
    cfg.log_level = NCL_LOG_OFF;
    if (cl.connect(cfg) != NCL_SUCCESS)
        return 1;
    const int P = cl.nranks();

    // (a) a world allreduce through a program takes what Cluster::run takes (after the same warm-up)
    model::Collective ar{NCL_COLL_ALLREDUCE, N, NCL_FLOAT32, NCL_SUM, 0};
    for (int r = 0; r < P; r++) // timing only: placeholders, in place
        cl.set_buffers(r, reinterpret_cast<void *>(uintptr_t(1) << 44), reinterpret_cast<void *>(uintptr_t(1) << 44));
    double us = 0;
    CHECK(cl.run(ar, 1, &us) && cl.run(ar, 1, &us));
    {
        rs::Programs p(cl, nullptr);
        for (int r = 0; r < P; r++)
            p.add(r, start(NCL_COLL_ALLREDUCE, 0, 0, N)), p.add(r, wait(0));
        CHECK(p.run());
        double prog_us = (double)last_end(p, P) / k_us;
        std::printf("world allreduce of 4 MiB: Cluster::run %.3f us, program %.3f us\n", us, prog_us);
        CHECK(prog_us == us);
        CHECK(p.times(0).blocked > 0 && p.times(0).blocked <= last_end(p, P));
    }
    // (b) compute alone, and compute hiding a call started before it
    {
        rs::Programs p(cl, nullptr);
        for (int r = 0; r < P; r++)
            p.add(r, start(NCL_COLL_ALLREDUCE, 3, 0, N)), p.add(r, compute(1000 * k_us)), p.add(r, wait(3));
        CHECK(p.run());
        std::printf("allreduce under 1000 us of compute: ends at %.3f us, rank 0 blocked %.3f us\n",
                    (double)last_end(p, P) / k_us, (double)p.times(0).blocked / k_us);
        CHECK(last_end(p, P) == 1000 * k_us && p.times(0).blocked == 0 && p.times(0).compute == 1000 * k_us);
    }
    // (c) tensor-parallel blocks of 4 and data-parallel pairs across them, each alone, then at once
    // with rings over the links between the members (rs::group_setup): a full mesh of 4 has two
    // (no more: the complete digraph on 4 vertices has no decomposition into Hamiltonian cycles)
    uint16_t tp[8], dp[8];
    ncl_comm *groups[16] = {};
    rs::GroupSetup tps[2], dps[4];
    for (int g = 0; g < 2; g++)
        rs::group_setup(sc, setup, cl.network().topology(), {4 * g, 4 * g + 1, 4 * g + 2, 4 * g + 3}, tps[g]);
    for (int g = 0; g < 4; g++)
        rs::group_setup(sc, setup, cl.network().topology(), {g, g + 4}, dps[g]);
    std::printf("rings found: tp group %u, dp pair %u\n", tps[0].cfg.ring_count, dps[0].cfg.ring_count);
    CHECK(tps[0].cfg.ring_count == 2 && dps[0].cfg.ring_count == 1);
    for (int r = 0; r < P; r++) {
        int32_t tpm[4] = {r / 4 * 4, r / 4 * 4 + 1, r / 4 * 4 + 2, r / 4 * 4 + 3}, dpm[2] = {r % 4, r % 4 + 4};
        CHECK(ncl_comm_create_group(cl.comm(r), tpm, 4, 1, &tps[r / 4].cfg, &groups[2 * r]) == NCL_SUCCESS);
        CHECK(ncl_comm_create_group(cl.comm(r), dpm, 2, 2, &dps[r % 4].cfg, &groups[2 * r + 1]) == NCL_SUCCESS);
    }
    auto timed = [&](bool with_tp, bool with_dp) {
        rs::Programs p(cl, nullptr);
        for (int r = 0; r < P; r++) {
            tp[r] = p.add_comm(r, groups[2 * r]), dp[r] = p.add_comm(r, groups[2 * r + 1]);
            if (with_tp)
                p.add(r, start(NCL_COLL_ALLREDUCE, 0, tp[r], N, 0, "tp"));
            if (with_dp)
                p.add(r, start(NCL_COLL_ALLREDUCE, 1, dp[r], N, 0, "dp"));
            if (with_tp)
                p.add(r, wait(0));
            if (with_dp)
                p.add(r, wait(1));
        }
        CHECK(p.run());
        if (!p.error().empty())
            std::printf("%s\n", p.error().c_str());
        return (double)last_end(p, P) / k_us;
    };
    double t_tp = timed(true, false), t_dp = timed(false, true), t_both = timed(true, true);
    ncl_rank_state st_tp, st_dp;
    ncl_comm_state(groups[0], &st_tp);
    ncl_comm_state(groups[1], &st_dp);
    std::printf("4 MiB allreduce: tp groups of 4 %.3f us (%s), dp pairs %.3f us (%s), both at once %.3f us\n", t_tp,
                ncl_algo_name((ncl_algo)st_tp.algo), t_dp, ncl_algo_name((ncl_algo)st_dp.algo), t_both);
    // on two rings the group's 6.3 MB per link take 107 us of wire: within 20 % of that with latencies
    CHECK(t_tp > 0 && t_tp < 1.2 * (1.5 * 4194304 / 2 / 29.5e3) && t_dp > 0);
    CHECK(t_both >= (t_tp > t_dp ? t_tp : t_dp) && t_both <= t_tp + t_dp);
    // (c') auto on a group chooses with the group's own cost table (rs::group_setup prices its
    // members' routes): within 5 % of the best algorithm forced, for a tp block of 4 and a group of 4
    // spread over the server, from 64 KiB to 16 MiB
    {
        rs::GroupSetup spread;
        const std::vector<int> sm = {1, 3, 4, 6};
        rs::group_setup(sc, setup, cl.network().topology(), sm, spread);
        ncl_comm *sg[P] = {};
        for (int r : sm)
            CHECK(ncl_comm_create_group(cl.comm(r), std::vector<int32_t>(sm.begin(), sm.end()).data(), 4, 3,
                                        &spread.cfg, &sg[r]) == NCL_SUCCESS);
        auto group_time = [&](const std::vector<int> &members, ncl_comm *const *comm_of, ncl_algo algo,
                              uint64_t count) {
            rs::Programs p(cl, nullptr);
            for (int r : members) {
                CHECK(ncl_comm_set_algorithm(comm_of[r], NCL_COLL_ALLREDUCE, algo) == NCL_SUCCESS);
                uint16_t c = p.add_comm(r, comm_of[r]);
                p.add(r, start(NCL_COLL_ALLREDUCE, 0, c, count)), p.add(r, wait(0));
            }
            CHECK(p.run());
            return (double)last_end(p, P) / k_us;
        };
        ncl_comm *tp_of[P];
        for (int r = 0; r < P; r++)
            tp_of[r] = groups[2 * r];
        const ncl_algo algos[] = {NCL_ALGO_RING, NCL_ALGO_HD, NCL_ALGO_MESH, NCL_ALGO_DBTREE};
        for (int g = 0; g < 2; g++) {
            const std::vector<int> members = g == 0 ? std::vector<int>{0, 1, 2, 3} : sm;
            ncl_comm *const *comm_of = g == 0 ? tp_of : sg;
            for (uint64_t count : {16384ull, 262144ull, 4194304ull}) {
                double best = 0, t_auto = group_time(members, comm_of, NCL_ALGO_AUTO, count);
                const char *best_name = "";
                for (ncl_algo a : algos) {
                    double t = group_time(members, comm_of, a, count);
                    if (best == 0 || t < best)
                        best = t, best_name = ncl_algo_name(a);
                }
                ncl_rank_state st;
                ncl_comm_state(comm_of[members[0]], &st);
                std::printf("%s group, %llu B allreduce: auto %.3f us, best %s %.3f us\n", g ? "spread" : "tp",
                            (unsigned long long)count * 4, t_auto, best_name, best);
                CHECK(t_auto <= 1.05 * best);
            }
        }
        for (ncl_comm *c : sg)
            if (c)
                ncl_comm_destroy(c);
    }
    // (d) a pipeline: rank 0's 4 MiB goes 0 -> 1 -> ... -> 7, each rank forwarding what it received
    {
        rs::Programs p(cl, nullptr);
        for (int r = 0; r < P; r++) {
            if (r > 0)
                p.add(r, start(ProgStep::Recv, 0, 0, N, r - 1, "pp")), p.add(r, wait(0));
            if (r < P - 1)
                p.add(r, start(ProgStep::Send, 1, 0, N, r + 1, "pp")), p.add(r, wait(1));
        }
        CHECK(p.run());
        std::printf("4 MiB forwarded down 7 hops: %.3f us\n", (double)last_end(p, P) / k_us);
        CHECK(last_end(p, P) > 7 * (4.0 * 1048576 / 30e3) * k_us * 0.9); // at least the wire time per hop
    }
    // (e) a receive nobody sends: the run fails naming the pair, once the timeout has passed
    {
        rs::Programs p(cl, nullptr);
        p.add(1, start(ProgStep::Recv, 0, 0, 1024, 0, "pp"));
        p.add(1, wait(0));
        CHECK(!p.run());
        std::printf("error: %s\n", p.error().c_str());
        CHECK(p.error().find("rank 1, step 1 of 2") != std::string::npos);
        CHECK(p.error().find("send 0 -> 1") != std::string::npos);
        CHECK(p.error().find("timed out") != std::string::npos);
    }
    for (ncl_comm *g : groups)
        ncl_comm_destroy(g);
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s SCENARIO\n", argv[0]);
        return 2;
    }
    rs_scenario sc;
    char err[RS_SCENARIO_ERRLEN];
    if (rs_scenario_load(argv[1], &sc, err, sizeof err) != 0) {
        std::fprintf(stderr, "%s\n", err);
        return 2;
    }
    int rc = rs::sc_enter([&] { return body(sc); });
    rs_scenario_free(&sc);
    std::printf("%s\n", rc == 0 && g_failed == 0 ? "test_program: OK" : "test_program: FAILED");
    return rc == 0 && g_failed == 0 ? 0 : 1;
}
