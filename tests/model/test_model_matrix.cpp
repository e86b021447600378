// test_model_matrix.cpp — the correctness matrix (tests/common/matrix.h) on the SystemC model: its world is model::Cluster on a topology.
//
// The body enumerates every registered (collective, algorithm) x counts x dtypes x ops x in/out of
// place x roots {0, p-1} and checks each result bit-exactly against sim/sweep's reference, as it
// does on every backend; this file only builds the clusters and runs a case on one.
//
// argv[1]: `small` (biring 3, one-way ring 5, the 8-NPU server with its four rings, full mesh 6,
// and a biring 5 whose DMA reduces inline only int32/uint32/int64 and float:sum at 8-byte
// alignment, so the staged scratch + LOCAL_REDUCE paths run and the all-inline algorithms refuse
// what they cannot do) or `cluster` (2 servers x 8 with hier's inter level on AUTO = hd, and
// 3 servers x 8 with it on ring, hier only). Message fidelity, 4 KiB slices. Every SystemC Network
// of a process is built before its first sc_start, so each group builds all its clusters up front
// and only then runs the matrix on them, one world after the other.
// Optional argv[2]: only the pairs whose "coll/algo" contains it, e.g. `allreduce/hd`.
//
// A case a forced algorithm cannot run (the engine's plan refuses: NCL_ERR_UNSUPPORTED on every
// rank, nothing launched) is refused, not failed (allow_refused); an algorithm that refuses every
// case of a topology fails. Cluster::run only says that some rank failed, so each rank's outcome
// (did its collective begin, did it end, with what) is observed through a HAL wrapper instead.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include <ncl/ncl.h>
#include <ncl/ncl_dtype.h>
#include <ncl/ncl_hal.h>
#include <ncl/ncl_sched.h>

#include "matrix.h"
#include "model/cluster.hpp"
#include "model/rings.hpp"
#include "model/topology.hpp"

namespace {

constexpr uint64_t k_slice = 4096;         // small, so the large count runs several rounds
constexpr uint64_t k_scratch = 4ull << 20; // per rank (ringsim run gives min(memory/4, 16 MiB))

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
    [](void *c, int p, uint32_t id, uint32_t *v) { return ncl_hal_notify_peek(&rl(c)->inner, p, id, v); },
    [](void *c) { return ncl_hal_last_error(&rl(c)->inner); },
    nullptr, // split: the model has none
    nullptr,
};

// ---- topologies -----------------------------------------------------------------------------------

rs_link_params link(double bw, double lat)
{
    rs_link_params p{};
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

// ---- the world: a cluster on one topology ---------------------------------------------------------

/* What a case's inputs depend on: consecutive cases that differ only in placement (or in reduce's
 * root) share them, so they are generated, and the expected result computed, once. */
struct InputKey {
    ncl_coll coll = NCL_COLL_COUNT;
    uint64_t count = 0;
    ncl_dtype dt = NCL_DTYPE_COUNT;
    ncl_op op = NCL_OP_COUNT;
    int root = -1; // broadcast's: its root's input is the result
    int a2av = 0;
    bool operator==(const InputKey &o) const
    {
        return coll == o.coll && count == o.count && dt == o.dt && op == o.op && root == o.root && a2av == o.a2av;
    }
};

struct Topo {
    std::string name, world_name;
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
    ncl_algo forced[NCL_COLL_COUNT]; // what each collective is set to on every rank
    // per-rank buffers (grown on demand), each rank's input, the expected result
    std::vector<std::vector<unsigned char>> a, b, input;
    std::vector<unsigned char> expected;
    InputKey inputs_of;

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
        std::fill(forced, forced + NCL_COLL_COUNT, NCL_ALGO_AUTO);
        a.resize((size_t)p()), b.resize((size_t)p()), input.resize((size_t)p());
    }

    /* What the engine's plan says of a case on `rank` (the environment ncl_api.c's start() gives
     * ncl_plan_make, rings aside: they never decide whether an algorithm runs). */
    ncl_result plan(const mx_case &c, int rank) const
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
        uint64_t count = c.count;
        if (c.a2av) { // the engine plans alltoallv with the matrix's largest block
            rs_shape s;
            mx_shape(&s, &c, p());
            count = 0;
            for (int i = 0; i < p(); i++)
                for (int j = 0; j < p(); j++)
                    count = std::max(count, rs_shape_a2av_len(&s, i, j));
        }
        return ncl_plan_make(&pl, c.coll, c.algo, p(), rank, c.root, count, c.dt, c.op, c.inplace, &env);
    }

    /* Every rank's input (the same for in and out of place) and the whole expected result, from the
     * inputs as they lie in memory; regenerated only when the case needs others. */
    void inputs(const rs_shape &s, const mx_case &c)
    {
        InputKey k{c.coll, c.count, c.dt, c.op, c.coll == NCL_COLL_BROADCAST ? c.root : 0, c.a2av};
        if (k == inputs_of)
            return;
        std::vector<const void *> in((size_t)p());
        for (int r = 0; r < p(); r++) {
            std::vector<unsigned char> &v = input[(size_t)r];
            if (v.size() < s.send_elems * s.es)
                v.resize(s.send_elems * s.es);
            rs_shape_input(&s, r, MX_SEED, v.data());
            in[(size_t)r] = v.data();
        }
        if (expected.size() < s.result_elems * s.es)
            expected.resize(s.result_elems * s.es);
        rs_shape_expected_from(&s, in.data(), 0, s.result_elems, expected.data());
        inputs_of = k;
    }

    bool run_case(const mx_case &c, mx_result &res);
};

/* Runs c on every rank and says what came of it in res; false when the cluster is spent (a broken
 * communicator refuses everything after). */
bool Topo::run_case(const mx_case &c, mx_result &res)
{
    const int np = p();
    rs_shape s;
    mx_shape(&s, &c, np);
    inputs(s, c);
    if (forced[c.coll] != c.algo) {
        for (int r = 0; r < np; r++)
            ncl_comm_set_algorithm(cl->comm(r), c.coll, c.algo);
        forced[c.coll] = c.algo;
    }
    std::vector<const void *> sends((size_t)np);
    std::vector<void *> recvs((size_t)np);
    for (int r = 0; r < np; r++) {
        std::vector<unsigned char> &ba = a[(size_t)r], &bb = b[(size_t)r];
        if (ba.size() < rs_shape_a_bytes(&s))
            ba.resize(rs_shape_a_bytes(&s));
        if (bb.size() < rs_shape_b_bytes(&s))
            bb.resize(rs_shape_b_bytes(&s));
        mx_place(&s, r, ba.data(), bb.data(), c.inplace, &sends[(size_t)r], &recvs[(size_t)r]);
        mx_prepare(&s, r, input[(size_t)r].data(), sends[(size_t)r], recvs[(size_t)r]);
        cl->set_buffers(r, sends[(size_t)r], recvs[(size_t)r]);
        RankLog &lg = logs[(size_t)r];
        lg.began = lg.ended = false;
        lg.end_rc = NCL_SUCCESS;
    }
    ncl_result planned = plan(c, 0);
    double us = 0;
    cl->run(model::Collective{c.coll, c.count, c.dt, c.op, c.root, s.a2av ? rs_shape_a2av_counts(&s) : nullptr}, 1,
            &us);

    int began = 0;
    for (int r = 0; r < np; r++)
        began += logs[(size_t)r].began;
    if (began == 0 && planned == NCL_ERR_UNSUPPORTED) {
        mx_result_refused(&res, ncl_comm_last_error(cl->comm(0)));
        return true;
    }
    if (began == 0) { // refused, but not by the plan (validation or an unexpected code)
        mx_result_fail(&res, 0, cl->failed_result(), 0, "not started: %s", ncl_comm_last_error(cl->comm(0)));
        return true;
    }
    if (planned != NCL_SUCCESS) {
        mx_result_fail(&res, 0, NCL_SUCCESS, 0, "ran, though the plan says %s", ncl_strerror(planned));
        return true;
    }
    bool spent = false;
    for (int r = 0; r < np; r++) {
        const RankLog &lg = logs[(size_t)r];
        if (lg.began && lg.ended && lg.end_rc == NCL_SUCCESS)
            continue;
        std::string fault = cl->npu(r).fault();
        mx_result_fail(&res, r, lg.ended ? lg.end_rc : NCL_SUCCESS, 0, "%s: %s%s%s%s",
                       !lg.began ? "not started" : !lg.ended ? "never ended" : "ended in error",
                       ncl_comm_last_error(cl->comm(r)), fault.empty() ? "" : " (device: ", fault.c_str(),
                       fault.empty() ? "" : ")");
        spent = true;
    }
    if (spent)
        return false;
    // Outputs, bit-exact; out of place, the inputs untouched.
    for (int r = 0; r < np; r++) {
        char what[MX_DETAIL];
        uint64_t wrong = mx_check(&s, r, sends[(size_t)r], recvs[(size_t)r],
                                  c.inplace ? nullptr : input[(size_t)r].data(), expected.data(), what, sizeof what);
        if (wrong)
            mx_result_fail(&res, r, NCL_SUCCESS, wrong, "%s", what);
    }
    res.run = 1;
    return true;
}

size_t run_cases(mx_world *w, const mx_case *cases, size_t n, mx_result *res)
{
    Topo &t = *static_cast<Topo *>(w->ctx);
    for (size_t i = 0; i < n; i++)
        if (!t.run_case(cases[i], res[i]))
            return i + 1; // the rest are reported as not run
    return n;
}

/* The counts of the matrix: 1, p-1, p+1, 1009 and one that runs several rounds of a slice on every
 * channel (per rank for allgather / reduce-scatter / alltoall, whose buffers are p times larger). */
size_t counts(const mx_axes *ax, int nranks, ncl_dtype dt, uint64_t out[MX_MAX_COUNTS])
{
    const Topo &t = *static_cast<const Topo *>(ax->ctx);
    uint64_t p = (uint64_t)nranks, es = ncl_dtype_size(dt);
    uint64_t per = rs_shape_per_rank(ax->coll) ? 1 : p;
    uint64_t large = (3 * k_slice * t.channels * per + es - 1) / es + 3;
    uint64_t all[] = {1, p - 1, p + 1, 1009, large};
    size_t n = 0;
    for (uint64_t c : all)
        if (c) // p-1 on one rank; the body drops repeats
            out[n++] = c;
    std::sort(out, out + n);
    return n;
}

void header(const Topo &t)
{
    std::printf("# %s: %d ranks, %u channels, %zu ring(s)", t.name.c_str(), t.p(), t.channels, t.rings.size());
    if (t.local_size)
        std::printf(", %u per server, inter %s, %zu local ring(s)", t.local_size, ncl_algo_name(t.inter),
                    t.local_rings.size());
    if (t.dev.inline_reduce)
        std::printf(", inline reduce \"%s\" align %u", t.dev.inline_reduce, t.dev.inline_align);
    std::printf("\n");
}

int run_group(std::vector<Topo> &topos, const char *filter)
{
    // A refused case starts nothing: its sc_start has no activity, which is expected here.
    sc_core::sc_report_handler::set_actions(sc_core::SC_ID_NO_SC_START_ACTIVITY_, sc_core::SC_DO_NOTHING);
    // Elaboration: every Network of the process exists before the first sc_start.
    for (Topo &t : topos)
        t.build();
    mx_matrix m;
    mx_init(&m);
    m.allow_refused = 1; // forced algorithms on topologies they cannot serve
    m.print_groups = 1;
    auto t0 = std::chrono::steady_clock::now();
    for (Topo &t : topos) {
        header(t);
        for (int c = 0; c < NCL_COLL_COUNT; c++) {
            for (int al = NCL_ALGO_AUTO + 1; al < NCL_ALGO_COUNT; al++) {
                ncl_coll coll = (ncl_coll)c;
                ncl_algo algo = (ncl_algo)al;
                if (algo == NCL_ALGO_USER || !ncl_algo_find(coll, algo))
                    continue;
                if (algo == NCL_ALGO_HIER ? !t.local_size : t.hier_only)
                    continue; // hier needs two levels; the 24-rank cluster runs only hier
                std::string name = std::string(ncl_coll_name(coll)) + "/" + ncl_algo_name(algo);
                if (filter && name.find(filter) == std::string::npos)
                    continue;
                mx_axes ax{};
                ax.coll = coll;
                ax.algo = algo;
                ax.counts = counts;
                ax.roots = MX_ROOTS_ENDS;
                ax.places = MX_BOTH_PLACES;
                ax.ctx = &t;
                mx_add_axes(&m, &ax, t.p());
                if (coll == NCL_COLL_ALLTOALL) { // and alltoallv over a skewed matrix
                    ax.a2av = 1;
                    mx_add_axes(&m, &ax, t.p());
                }
            }
        }
        mx_world w{t.world_name.c_str(), t.p(), run_cases, &t};
        mx_run(&m, &w);
        std::fflush(stdout);
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("# %llu cases run (%llu refused) in %.2f s\n", (unsigned long long)m.run,
                (unsigned long long)m.refused, s);
    int bad = m.failed || m.run == 0;
    if (m.failed)
        std::fprintf(stderr, "%llu failure(s); first: %s\n", (unsigned long long)m.failed, m.first);
    mx_free(&m);
    return bad;
}

Topo topo(const char *name, const rs_topology_spec &sp, bool restricted = false)
{
    Topo t;
    t.name = name;
    t.world_name = std::string("model ") + name;
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
