// test_model_matrix.cpp — the engine's correctness matrix on the SystemC model (issue 4): every
// registered (collective, algorithm) x counts x dtypes x ops x in/out of place x roots, run with
// real bytes on model::Cluster and compared bit-exactly with sim/sweep/rs_data's reference, as
// tests/firmware/backends/test_matrix.c does on the host backend.
//
// argv[1]: `small` (biring 3, one-way ring 5, the 8-NPU server with its four rings, full mesh 6,
// and a biring 5 whose DMA reduces inline only int32/uint32/int64 and float:sum at 8-byte
// alignment, so the staged scratch + LOCAL_REDUCE paths run and the all-inline algorithms refuse
// what they cannot do) or `cluster` (2 servers x 8 with hier's inter level on AUTO = hd, and
// 3 servers x 8 with it on ring, hier only). Message fidelity, 4 KiB slices. Every SystemC Network
// of a process is built before its first sc_start, so each group builds all its clusters up front.
// Optional argv[2]: only the pairs whose "coll/algo" contains it, e.g. `allreduce/hd`.
//
// A case a forced algorithm cannot run (the engine's plan refuses: NCL_ERR_UNSUPPORTED on every
// rank, nothing launched) counts as refused, not failed; an algorithm that refuses every case of a
// topology fails. Cluster::run's own result is sticky after a first failure, so each rank's
// outcome is observed through a HAL wrapper (begin / end) instead.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include <ncl/ncl.h>
#include <ncl/ncl_dtype.h>
#include <ncl/ncl_hal.h>
#include <ncl/ncl_sched.h>

#include "model/cluster.hpp"
#include "model/rings.hpp"
#include "model/topology.hpp"
#include "sweep/rs_data.h"

namespace {

constexpr uint64_t k_seed = 20261130;
constexpr uint64_t k_slice = 4096;         // small, so the large count runs several rounds
constexpr uint64_t k_scratch = 4ull << 20; // per rank (ringsim run gives min(memory/4, 16 MiB))

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0)
{
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

bool reduces(ncl_coll c)
{
    return c == NCL_COLL_ALLREDUCE || c == NCL_COLL_REDUCE || c == NCL_COLL_REDUCE_SCATTER;
}

bool rooted(ncl_coll c) { return c == NCL_COLL_BROADCAST || c == NCL_COLL_REDUCE; }

// ---- a HAL wrapper that records what each rank's collective did ---------------------------------

struct RankLog {
    ncl_hal inner;
    bool began = false, ended = false;
    ncl_result end_rc = NCL_SUCCESS;
};

RankLog *rl(void *ctx) { return static_cast<RankLog *>(ctx); }

const ncl_hal_ops k_log_ops = {
    [](void *c, ncl_hal_caps *o) { return ncl_hal_caps_get(&rl(c)->inner, o); },
    [](void *c, const ncl_hal_launch *l) {
        rl(c)->began = true;
        return ncl_hal_begin(&rl(c)->inner, l);
    },
    [](void *c, ncl_result r) {
        rl(c)->ended = true;
        rl(c)->end_rc = r;
        return ncl_hal_end(&rl(c)->inner, r);
    },
    [](void *c, uint32_t q, const ncl_task *t) { return ncl_hal_dma_submit(&rl(c)->inner, q, t); },
    [](void *c, uint32_t q, int *d) { return ncl_hal_dma_poll(&rl(c)->inner, q, d); },
    [](void *c, uint32_t q, int p, uint32_t id) { return ncl_hal_notify_record(&rl(c)->inner, q, p, id); },
    [](void *c, int p, uint32_t id, uint32_t n, int *d) {
        return ncl_hal_notify_try_wait(&rl(c)->inner, p, id, n, d);
    },
    [](void *c, uint64_t t) { return ncl_hal_wait_event(&rl(c)->inner, t); },
    [](void *c) { return ncl_hal_now_ns(&rl(c)->inner); },
    [](void *c, int level, const char *msg) { ncl_hal_log(&rl(c)->inner, level, msg); },
};

// ---- topologies -----------------------------------------------------------------------------------

rs_link_params link(double bw, double lat)
{
    rs_link_params p;
    p.bandwidth = bw;
    p.latency = lat;
    p.packet_bytes = 4096;
    p.header_bytes = 64;
    p.buffer_bytes = 1u << 20;
    return p;
}

rs_device_params device(bool restricted)
{
    rs_device_params d{};
    d.dma_engines = 4;
    d.queue_depth = 16;
    d.mem_bandwidth = 400e9;
    d.reduce_bandwidth = 200e9;
    d.task_overhead = 1e-6;
    d.memory_bytes = 64ull << 30;
    if (restricted) { // 4-byte types take the scratch path wherever a task is not 8-byte aligned;
                      // int64 keeps the all-inline algorithms (dbtree, ring reduce) running
        static char text[] = "int32 uint32 int64 float:sum";
        d.inline_reduce = text;
        for (int t = 0; t < NCL_DTYPE_COUNT; t++)
            d.no_inline_ops[t] = NCL_INLINE_ALL_OPS;
        d.no_inline_ops[NCL_INT32] = d.no_inline_ops[NCL_UINT32] = d.no_inline_ops[NCL_INT64] = 0;
        d.no_inline_ops[NCL_FLOAT32] = (uint16_t)(NCL_INLINE_ALL_OPS & ~(1u << NCL_SUM));
        d.inline_align = 8;
    }
    return d;
}

rs_topology_spec spec(rs_topo_kind kind, int nranks, int servers = 0)
{
    rs_topology_spec s{};
    s.kind = kind;
    s.nranks = nranks;
    s.servers = servers;
    s.link = link(30e9, 1e-6);
    s.nic = link(12.5e9, 2e-6);
    s.sw.latency = 100e-9;
    s.sw.buffer_bytes = 1u << 20;
    return s;
}

/* Channel-disjoint rings over direct links, as many as every rank has channels (ringsim run's
 * `rings: auto`, sim/harness/rs_setup.cpp). */
std::vector<std::vector<int>> auto_rings(const model::Topology &t)
{
    int want = (int)NCL_MAX_QUEUES;
    std::vector<int> out((size_t)t.nranks(), 0), in((size_t)t.nranks(), 0);
    for (const model::TopoChannel &c : t.channels())
        if (c.from < t.nranks() && c.to < t.nranks())
            out[(size_t)c.from]++, in[(size_t)c.to]++;
    for (int r = 0; r < t.nranks(); r++)
        want = std::min(want, std::min(out[(size_t)r], in[(size_t)r]));
    return want > 0 ? model::find_rings(t, want) : std::vector<std::vector<int>>{};
}

std::vector<int32_t> flatten(const std::vector<std::vector<int>> &rings)
{
    std::vector<int32_t> t;
    for (const std::vector<int> &r : rings)
        t.insert(t.end(), r.begin(), r.end());
    return t;
}

struct Stats {
    uint64_t cases = 0, refused = 0, wrong = 0;
};

struct Topo {
    std::string name;
    rs_topology_spec sp;
    rs_device_params dev;
    uint32_t local_size = 0;
    ncl_algo inter = NCL_ALGO_AUTO;
    bool hier_only = false;
    std::vector<std::vector<int>> rings, local_rings;
    uint32_t channels = 2;
    std::unique_ptr<model::Cluster> cl;
    std::unique_ptr<RankLog[]> logs; // stable addresses: the wrapped HALs point here
    ncl_hal_caps caps{};
    bool dead = false;
    // per-rank buffers (grown on demand), each rank's input, the expected result
    std::vector<std::vector<unsigned char>> a, b, input;
    std::vector<unsigned char> expected;
    Stats total;

    int p() const { return cl->nranks(); }

    /* Builds network + NPUs (elaboration) and connects the communicators. */
    void build()
    {
        cl.reset(new model::Cluster(sp, RS_FIDELITY_MESSAGE, dev, true, k_scratch));
        const model::Topology &t = cl->network().topology();
        rings = auto_rings(t);
        if (local_size) {
            rs_topology_spec server = spec(RS_TOPO_SERVER8, 8);
            model::Topology ts(server);
            local_rings = model::find_rings(ts, (int)NCL_MAX_QUEUES);
        }
        channels = (uint32_t)std::max<size_t>(2, std::max(rings.size(), local_rings.size()));
        channels = std::min(channels, NCL_MAX_QUEUES);
        std::vector<int32_t> ring_table = flatten(rings), local_table = flatten(local_rings);
        ncl_config cfg = NCL_CONFIG_INIT;
        cfg.check_schedules = 0; // test_algos proves them; this is about running them
        cfg.channels = channels;
        cfg.slice_bytes = k_slice;
        cfg.timeout_ns = 1000000000ull; // simulated: a lost notify fails after 1 s of model time
        if (!rings.empty())
            cfg.rings = ring_table.data(), cfg.ring_count = (uint32_t)rings.size();
        cfg.local_size = local_size;
        cfg.inter_algo = (uint8_t)inter;
        if (!local_rings.empty())
            cfg.local_rings = local_table.data(), cfg.local_ring_count = (uint32_t)local_rings.size();
        cfg.link_alpha_ns = (uint32_t)((sp.link.latency + dev.task_overhead) * 1e9);
        cfg.link_gbps = (uint32_t)(sp.link.bandwidth / 1e9);
        logs.reset(new RankLog[(size_t)p()]);
        ncl_result rc = cl->connect(cfg, [this](int r, model::Npu &npu) {
            logs[(size_t)r].inner = npu.hal();
            return ncl_hal{&k_log_ops, &logs[(size_t)r]};
        });
        if (rc != NCL_SUCCESS) {
            std::fprintf(stderr, "%s: ncl_comm_create: %s\n", name.c_str(), ncl_strerror(rc));
            std::exit(2);
        }
        ncl_hal h = cl->npu(0).hal();
        ncl_hal_caps_get(&h, &caps);
        a.resize((size_t)p()), b.resize((size_t)p()), input.resize((size_t)p());
    }

    /* What the engine's plan says of a case on `rank` (the environment ncl_api.c's start() gives
     * ncl_plan_make, rings aside: they never decide whether an algorithm runs). */
    ncl_result plan(ncl_coll coll, ncl_algo algo, int rank, uint64_t count, ncl_dtype dt, ncl_op op,
                    int root, int inplace) const
    {
        ncl_plan_env env{};
        env.slice_bytes = k_slice;
        env.max_queues = std::min(caps.max_queues, NCL_MAX_QUEUES);
        env.channels = std::min(channels, env.max_queues);
        env.scratch_bytes = caps.scratch_bytes;
        env.link_alpha_ns = (uint32_t)((sp.link.latency + dev.task_overhead) * 1e9);
        env.link_gbps = (uint32_t)(sp.link.bandwidth / 1e9);
        env.local_size = local_size;
        env.inter_algo = (uint8_t)inter;
        env.inline_ops = caps.inline_ops;
        env.inline_align = caps.inline_align;
        ncl_plan pl;
        return ncl_plan_make(&pl, coll, algo, p(), rank, root, count, dt, op, inplace, &env);
    }
};

/* The counts of the matrix: 1, p-1, p+1, 1009 and one that runs several rounds of a slice on every
 * channel (per rank for allgather / reduce-scatter, whose buffers are p times larger). */
std::vector<uint64_t> counts_for(const Topo &t, ncl_coll coll, ncl_dtype dt)
{
    uint64_t p = (uint64_t)t.p(), es = ncl_dtype_size(dt);
    uint64_t per = (coll == NCL_COLL_ALLGATHER || coll == NCL_COLL_REDUCE_SCATTER) ? 1 : p;
    uint64_t large = (3 * k_slice * t.channels * per + es - 1) / es + 3;
    std::vector<uint64_t> c = {1, p - 1, p + 1, 1009, large};
    c.erase(std::remove(c.begin(), c.end(), 0ull), c.end());
    std::sort(c.begin(), c.end());
    c.erase(std::unique(c.begin(), c.end()), c.end());
    return c;
}

struct Failure {
    std::string first;
    uint64_t n = 0;
};

struct Case {
    ncl_coll coll;
    ncl_algo algo;
    uint64_t count;
    ncl_dtype dt;
    ncl_op op;
    int root, inplace;
};

std::string describe(const Topo &t, const Case &c, int rank)
{
    char s[256];
    std::snprintf(s, sizeof s, "%s (p=%d) %s/%s rank %d count %llu %s %s %s root %d", t.name.c_str(), t.p(),
                  ncl_coll_name(c.coll), ncl_algo_name(c.algo), rank, (unsigned long long)c.count,
                  ncl_dtype_name(c.dt), reduces(c.coll) ? ncl_op_name(c.op) : "-",
                  c.inplace ? "in-place" : "out-of-place", c.root);
    return s;
}

void fail(Failure &f, Stats &st, const std::string &what)
{
    if (f.n++ == 0)
        f.first = what;
    st.wrong++;
    std::fprintf(stderr, "FAIL %s\n", what.c_str());
}

/* Every rank's input (the same for every root and for in and out of place: generated once, copied
 * into place per case) and the whole collective's result as one array (allreduce / reduce /
 * broadcast: count; reduce_scatter / allgather: p * count), as tests/firmware/backends/test_matrix.c has them. */
void fill_inputs(Topo &t, ncl_coll coll, uint64_t count, ncl_dtype dt, ncl_op op)
{
    const int p = t.p();
    const size_t es = ncl_dtype_size(dt);
    const uint64_t in_count = coll == NCL_COLL_REDUCE_SCATTER ? count * p : count;
    for (int r = 0; r < p; r++) {
        std::vector<unsigned char> &in = t.input[(size_t)r];
        if (in.size() < in_count * es)
            in.resize(in_count * es);
        rs_data_fill(in.data(), in_count, dt, reduces(coll) ? op : NCL_MAX, p, r, k_seed, 0);
    }
    const uint64_t total = (coll == NCL_COLL_ALLGATHER || coll == NCL_COLL_REDUCE_SCATTER) ? count * p : count;
    if (t.expected.size() < total * es)
        t.expected.resize(total * es);
    if (coll == NCL_COLL_ALLGATHER) // block k is rank k's input
        for (int k = 0; k < p; k++)
            std::memcpy(t.expected.data() + (uint64_t)k * count * es, t.input[(size_t)k].data(), count * es);
    else if (reduces(coll)) { // rs_data_expected's arithmetic, from the inputs instead of regenerating them
        std::memcpy(t.expected.data(), t.input[0].data(), total * es);
        for (int r = 1; r < p; r++)
            ncl_reduce_kernel(t.expected.data(), t.input[(size_t)r].data(), total, dt, op);
        if (op == NCL_AVG)
            ncl_div_kernel(t.expected.data(), total, dt, (uint32_t)p);
    }
}

/* Runs one case on every rank of t and checks it; returns false when the cluster is unusable. */
bool run_case(Topo &t, const Case &c, Stats &st, Failure &f)
{
    const int p = t.p();
    const size_t es = ncl_dtype_size(c.dt);
    const uint64_t in_count = c.coll == NCL_COLL_REDUCE_SCATTER ? c.count * p : c.count;
    const uint64_t out_count = c.coll == NCL_COLL_ALLGATHER ? c.count * p : c.count;
    const uint64_t big = std::max(in_count, out_count) * es;
    st.cases++;
    std::vector<unsigned char *> sends((size_t)p), recvs((size_t)p);
    for (int r = 0; r < p; r++) {
        bool has_send = c.coll != NCL_COLL_BROADCAST || r == c.root || c.inplace;
        bool has_recv = c.coll != NCL_COLL_REDUCE || r == c.root || c.inplace;
        std::vector<unsigned char> &a = t.a[(size_t)r], &b = t.b[(size_t)r];
        if (a.size() < big)
            a.resize(big);
        unsigned char *send, *recv;
        if (c.inplace) {
            send = recv = a.data();
            if (c.coll == NCL_COLL_ALLGATHER)
                send = a.data() + (uint64_t)r * c.count * es;
            if (c.coll == NCL_COLL_REDUCE_SCATTER)
                recv = a.data() + (uint64_t)r * c.count * es;
            std::memset(a.data(), 0xa5, big);
        } else {
            if (b.size() < out_count * es)
                b.resize(out_count * es);
            std::memset(b.data(), 0xa5, out_count * es);
            send = has_send ? a.data() : nullptr;
            recv = has_recv ? b.data() : nullptr;
        }
        if (has_send)
            std::memcpy(send, t.input[(size_t)r].data(), in_count * es);
        sends[(size_t)r] = send, recvs[(size_t)r] = recv;
        t.cl->set_buffers(r, send, recv);
        t.logs[(size_t)r].began = t.logs[(size_t)r].ended = false;
        t.logs[(size_t)r].end_rc = NCL_SUCCESS;
    }
    ncl_result planned = t.plan(c.coll, c.algo, 0, c.count, c.dt, c.op, c.root, c.inplace);
    double us = 0;
    t.cl->run(model::Collective{c.coll, c.count, c.dt, c.op, c.root}, 1, &us);

    int began = 0;
    for (int r = 0; r < p; r++)
        began += t.logs[(size_t)r].began;
    if (began == 0 && planned == NCL_ERR_UNSUPPORTED) {
        st.refused++;
        return true;
    }
    if (began == 0) { // refused, but not by the plan (validation or an unexpected code)
        fail(f, st, describe(t, c, 0) + ": not started: " + ncl_comm_last_error(t.cl->comm(0)));
        return true;
    }
    if (planned != NCL_SUCCESS) {
        fail(f, st, describe(t, c, 0) + ": ran, though the plan says " + ncl_strerror(planned));
        return true;
    }
    for (int r = 0; r < p; r++) {
        const RankLog &lg = t.logs[(size_t)r];
        if (!lg.began || !lg.ended || lg.end_rc != NCL_SUCCESS) {
            std::string why = !lg.began ? "not started" : !lg.ended ? "never ended" : ncl_strerror(lg.end_rc);
            std::string fault = t.cl->npu(r).fault();
            fail(f, st, describe(t, c, r) + ": " + why + ": " + ncl_comm_last_error(t.cl->comm(r)) +
                            (fault.empty() ? "" : " (device: " + fault + ")"));
            return false; // a broken communicator refuses everything after: the cluster is spent
        }
    }
    // Outputs, bit-exact; out of place, the inputs untouched.
    uint64_t wrong_ranks = 0;
    std::string first;
    for (int r = 0; r < p; r++) {
        bool has_recv = c.coll != NCL_COLL_REDUCE || r == c.root;
        std::string what;
        if (has_recv) {
            // broadcast: the root's input
            const unsigned char *want =
                c.coll == NCL_COLL_BROADCAST ? t.input[(size_t)c.root].data() : t.expected.data();
            uint64_t n = out_count;
            if (c.coll == NCL_COLL_REDUCE_SCATTER)
                want += (uint64_t)r * c.count * es, n = c.count;
            uint64_t w = rs_data_count_wrong(recvs[(size_t)r], want, n, c.dt, reduces(c.coll) ? c.op : NCL_MAX);
            if (w)
                what = std::to_string(w) + " of " + std::to_string(n) + " elements wrong";
        }
        if (!c.inplace && sends[(size_t)r] &&
            std::memcmp(t.input[(size_t)r].data(), sends[(size_t)r], in_count * es))
            what += what.empty() ? "send buffer modified" : ", send buffer modified";
        if (!what.empty() && wrong_ranks++ == 0)
            first = describe(t, c, r) + ": " + what;
    }
    if (wrong_ranks)
        fail(f, st, first + " (" + std::to_string(wrong_ranks) + " rank(s) wrong)");
    return true;
}

/* Every case of one (collective, algorithm) on t. false: the cluster is spent. */
bool run_algo(Topo &t, ncl_coll coll, ncl_algo algo, Failure &f, Stats &st)
{
    for (int r = 0; r < t.p(); r++)
        ncl_comm_set_algorithm(t.cl->comm(r), coll, algo);
    const int p = t.p();
    std::vector<int> roots = rooted(coll) ? std::vector<int>{0, p - 1} : std::vector<int>{0};
    for (int d = 0; d < NCL_DTYPE_COUNT; d++) {
        for (uint64_t count : counts_for(t, coll, (ncl_dtype)d)) {
            int nops = reduces(coll) ? NCL_OP_COUNT : 1;
            for (int op = 0; op < nops; op++) {
                fill_inputs(t, coll, count, (ncl_dtype)d, (ncl_op)op);
                for (int root : roots) {
                    Case c{coll, algo, count, (ncl_dtype)d, reduces(coll) ? (ncl_op)op : NCL_SUM, root, 0};
                    for (int inplace = 0; inplace < 2; inplace++) {
                        c.inplace = inplace;
                        if (!run_case(t, c, st, f))
                            return false;
                    }
                }
            }
        }
    }
    return true;
}

int run_group(std::vector<Topo> &topos, const char *filter)
{
    // A refused case starts nothing: its sc_start has no activity, which is expected here.
    sc_core::sc_report_handler::set_actions(sc_core::SC_ID_NO_SC_START_ACTIVITY_, sc_core::SC_DO_NOTHING);
    // Elaboration: every Network of the process exists before the first sc_start.
    for (Topo &t : topos)
        t.build();
    Failure f;
    uint64_t all_refused = 0, cases = 0;
    auto t_all = Clock::now();
    for (Topo &t : topos) {
        auto t_topo = Clock::now();
        std::printf("# %s: %d ranks, %u channels, %zu ring(s)", t.name.c_str(), t.p(), t.channels,
                    t.rings.size());
        if (t.local_size)
            std::printf(", %u per server, inter %s, %zu local ring(s)", t.local_size, ncl_algo_name(t.inter),
                        t.local_rings.size());
        if (t.dev.inline_reduce)
            std::printf(", inline reduce \"%s\" align %u", t.dev.inline_reduce, t.dev.inline_align);
        std::printf("\n");
        for (int c = 0; c < NCL_COLL_COUNT && !t.dead; c++) {
            for (int a = NCL_ALGO_AUTO + 1; a < NCL_ALGO_COUNT && !t.dead; a++) {
                ncl_coll coll = (ncl_coll)c;
                ncl_algo algo = (ncl_algo)a;
                if (algo == NCL_ALGO_USER || !ncl_algo_find(coll, algo))
                    continue;
                if (algo == NCL_ALGO_HIER ? !t.local_size : t.hier_only)
                    continue; // hier needs two levels; the 24-rank cluster runs only hier
                std::string name = std::string(ncl_coll_name(coll)) + "/" + ncl_algo_name(algo);
                if (filter && name.find(filter) == std::string::npos)
                    continue;
                Stats st;
                auto t0 = Clock::now();
                t.dead = !run_algo(t, coll, algo, f, st);
                std::printf("%-9s %-15s %-8s cases %5llu  refused %5llu  wrong %3llu  %6.2f s%s\n", t.name.c_str(),
                            ncl_coll_name(coll), ncl_algo_name(algo), (unsigned long long)st.cases,
                            (unsigned long long)st.refused, (unsigned long long)st.wrong, seconds_since(t0),
                            t.dead ? "  (cluster spent: the rest of this topology is skipped)" : "");
                std::fflush(stdout);
                if (st.cases && st.refused == st.cases) {
                    std::fprintf(stderr, "FAIL %s: %s refused every case\n", t.name.c_str(), name.c_str());
                    all_refused++;
                }
                t.total.cases += st.cases, t.total.refused += st.refused, t.total.wrong += st.wrong;
            }
        }
        cases += t.total.cases;
        std::printf("# %s: %llu cases, %llu refused, %llu wrong, %.2f s\n", t.name.c_str(),
                    (unsigned long long)t.total.cases, (unsigned long long)t.total.refused,
                    (unsigned long long)t.total.wrong, seconds_since(t_topo));
    }
    bool spent = false;
    for (const Topo &t : topos)
        spent |= t.dead;
    std::printf("# %llu cases in %.2f s\n", (unsigned long long)cases, seconds_since(t_all));
    if (f.n || all_refused || spent || cases == 0) {
        if (f.n)
            std::fprintf(stderr, "%llu failing case(s); first: %s\n", (unsigned long long)f.n, f.first.c_str());
        return 1;
    }
    return 0;
}

Topo topo(const char *name, const rs_topology_spec &sp, bool restricted = false)
{
    Topo t;
    t.name = name;
    t.sp = sp;
    t.dev = device(restricted);
    return t;
}

} // namespace

int sc_main(int argc, char **argv)
{
    std::string group = argc > 1 ? argv[1] : "";
    const char *filter = argc > 2 ? argv[2] : nullptr;
    std::vector<Topo> topos;
    if (group == "small") {
        topos.push_back(topo("biring3", spec(RS_TOPO_BIRING, 3)));
        topos.push_back(topo("ring5", spec(RS_TOPO_RING, 5)));
        topos.push_back(topo("server8", spec(RS_TOPO_SERVER8, 8)));
        topos.push_back(topo("mesh6", spec(RS_TOPO_FULL_MESH, 6)));
        topos.push_back(topo("biring5-ni", spec(RS_TOPO_BIRING, 5), true));
    } else if (group == "cluster") {
        Topo two = topo("cluster2", spec(RS_TOPO_CLUSTER, 16, 2));
        two.local_size = 8; // inter AUTO: hd (2 servers)
        topos.push_back(std::move(two));
        Topo three = topo("cluster3", spec(RS_TOPO_CLUSTER, 24, 3));
        three.local_size = 8;
        three.inter = NCL_ALGO_RING;
        three.hier_only = true;
        topos.push_back(std::move(three));
    } else {
        std::fprintf(stderr, "usage: %s small|cluster [coll/algo filter]\n", argv[0]);
        return 2;
    }
    if (run_group(topos, filter) != 0) {
        std::fprintf(stderr, "model_matrix %s: FAILED\n", group.c_str());
        return 1;
    }
    std::printf("model_matrix %s: ok\n", group.c_str());
    return 0;
}
