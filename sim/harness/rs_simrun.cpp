// rs_simrun.cpp — `ringsim run SCENARIO`: builds the network and one NPU per rank, runs the
// workload's sweep with the unchanged engine on every NPU, and reports simulated times.
#include "rs_simrun.h"

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include <sys/resource.h>

#include <systemc>

#include <ncl/ncl_diag.h>
#include <ncl/ncl_dtype.h>

#include "model/cluster.hpp"
#include "scenario/rs_scenario.h"
#include "sweep/rs_shape.h"
#include "rs_payload.hpp"
#include "rs_sc.hpp"
#include "rs_setup.hpp"
#include "rs_trace.hpp"
#include "rs_chakra_run.hpp"
#include "rs_parallel.hpp"
#include "rs_training.hpp"

namespace {

// Timing-only runs move no bytes, but the API wants distinct, non-NULL buffers: these addresses
// are never dereferenced (the sim backend touches memory only with a real payload).
const uintptr_t k_fake_send = uintptr_t(1) << 44, k_fake_recv = uintptr_t(2) << 44;

/* Which input was generated where: a run that wrote nothing over it can reuse it. */
struct InputKey {
    uint64_t offset = 0, count = 0;
    int dt = -1, op = -1;
    bool operator==(const InputKey &o) const
    {
        return offset == o.offset && count == o.count && dt == o.dt && op == o.op;
    }
};

/* A rank's real-payload buffers (in place uses a only), the input a holds, and where this row's
 * call points. */
struct Buffers {
    rs::PayloadBuf a, b;
    InputKey a_input; // dt -1: nothing reusable
    const void *send = nullptr;
    void *recv = nullptr;
};

class Driver {
public:
    Driver(const rs_scenario &sc, const rs_simrun_extras &x, FILE *err) : sc_(sc), x_(x), err_(err) {}

    int build();
    int run(rs_report *rep);
    /** The engine error's headline, the failing rank's detail, a down link and the hang's root
     *  cause, one line: the JSON's "error" and the JUnit failure. */
    const std::string &error_text() const { return error_text_; }
    uint64_t events() const { return cl_ ? cl_->network().scheduler().events() : 0; }
    uint64_t transfers() const { return cl_ ? cl_->network().transfers_started() : 0; }
    void print_links(FILE *out);
    void report_corruption(rs_report *rep);
    void print_devices(FILE *out);
    int finish_trace() { return tracer_ ? tracer_->finish() : 0; }
    void finish_waves()
    {
        if (cl_ && cl_->rtl())
            cl_->rtl()->close_waves();
    }
    double sim_s() const { return cl_ ? cl_->network().now_s() : 0; }

private:
    int sweep(rs_coll coll, rs_report *rep);
    int train(rs_report *rep);
    int chakra();
    void place(int rank, const rs_shape &s, bool inplace);
    void prepare(int rank, const rs_shape &s);
    void expect(const rs_shape &s);
    uint64_t count_wrong(const rs_shape &s);
    bool check_row(const rs_shape &s, const model::Collective &c, bool inplace, bool fresh, double *us,
                   uint64_t *wrong);
    int engine_error(const char *what);

    void show_progress(rs_coll coll, uint64_t size);
    void clear_progress();
    void build_phase(const char *done, const char *next);

    const rs_scenario &sc_;
    const rs_simrun_extras &x_;
    FILE *err_;
    std::unique_ptr<rs::Tracer> tracer_;
    int rows_total_ = 0, rows_done_ = 0;
    bool progress_shown_ = false;
    std::chrono::steady_clock::time_point phase_t0_;
    rs::EngineSetup setup_; // before cl_: its communicators point at the setup's ring tables
    std::unique_ptr<model::Cluster> cl_;
    std::string error_text_;
    std::vector<Buffers> bufs_;
    rs::PayloadBuf expected_;
};

// Building a large model takes long before its first row: its phases are named on stderr, with
// the time each took, so a long silence has an explanation (from 4096 ranks on: deterministic).
void Driver::build_phase(const char *done, const char *next)
{
    enum { LARGE = 4096 };
    if (sc_.topo.nranks < LARGE)
        return;
    auto now = std::chrono::steady_clock::now();
    if (done)
        std::fprintf(err_, "ringsim: %d ranks: %s in %.1f s%s%s\n", sc_.topo.nranks, done,
                     std::chrono::duration<double>(now - phase_t0_).count(), next ? "; " : "", next ? next : "");
    else
        std::fprintf(err_, "ringsim: %d ranks: %s\n", sc_.topo.nranks, next);
    std::fflush(err_);
    phase_t0_ = now;
}

int Driver::build()
{
    int p = sc_.topo.nranks;
    uint64_t scratch = rs::scenario_scratch(sc_);
    build_phase(nullptr, "building the model...");
    try {
        cl_.reset(new model::Cluster(sc_.topo, sc_.fidelity, sc_.device, sc_.payload_real != 0, scratch));
        for (size_t i = 0; i < sc_.faults_count; i++)
            cl_->network().schedule_fault(sc_.faults[i]);
    } catch (const std::exception &e) {
        std::fprintf(err_, "ringsim: %s: %s\n", sc_.path ? sc_.path : "scenario", e.what());
        return RS_EXIT_USAGE;
    }
    if (x_.trace_path) {
        FILE *f = std::fopen(x_.trace_path, "w");
        if (f == nullptr) {
            std::fprintf(err_, "ringsim: --trace: cannot write '%s': %s\n", x_.trace_path, std::strerror(errno));
            return RS_EXIT_USAGE;
        }
        tracer_.reset(new rs::Tracer(f, x_.trace_path, x_.trace_max_events, cl_->network().scheduler(), err_));
        tracer_->observe(cl_->network());
        if (cl_->rtl()) // co-simulation: the RTL ranks and their blocks too
            tracer_->observe(*cl_->rtl());
    }
    bufs_.resize((size_t)p);
    build_phase("model built", "finding the rings and costs...");
    rs::engine_setup(sc_, cl_->network().topology(), setup_);
    build_phase("rings and costs", "creating the communicators...");
    if (!setup_.rings.empty()) {
        std::printf("# rings: %zu found from the topology, no link used twice%s", setup_.rings.size(),
                    p <= 16 ? ":" : "\n");
        for (size_t k = 0; p <= 16 && k < setup_.rings.size(); k++) {
            if (k)
                std::printf(" |");
            for (int r : setup_.rings[k])
                std::printf(" %d", r);
        }
        if (p <= 16)
            std::printf("\n");
    }
    model::Cluster::HalWrap wrap;
    if (tracer_)
        wrap = [this](int r, model::Npu &npu) { return tracer_->wrap(r, &npu); };
    if (x_.waves_path) {
        std::string why = "the scenario has no RTL device (device.fidelity: rtl)";
        if (!cl_->rtl() || !cl_->rtl()->open_waves(x_.waves_path, &why)) {
            std::fprintf(err_, "ringsim: --waves: %s\n", why.c_str());
            return RS_EXIT_USAGE;
        }
    }
    ncl_result rc = cl_->connect(setup_.cfg, wrap);
    build_phase("communicators", rc == NCL_SUCCESS ? "simulating..." : nullptr);
    if (rc != NCL_SUCCESS) {
        std::fprintf(err_, "ringsim: cannot create the communicators: %s\n", ncl_strerror(rc));
        if (rc == NCL_ERR_INVALID_ARGUMENT && sc_.workload.landing_zone > 0)
            std::fprintf(err_, "ringsim:   workload.landing_zone: two zones per channel on %u channels must fit in "
                               "half of device.scratch (%llu bytes)\n",
                         setup_.cfg.channels, (unsigned long long)setup_.caps.scratch_bytes);
        for (int r = 0; r < cl_->nranks(); r++)
            if (cl_->is_rtl(r) && !cl_->device_fault(r).empty())
                std::fprintf(err_, "ringsim:   rank %d device (rtl): %s\n", r, cl_->device_fault(r).c_str());
        return RS_EXIT_ENGINE;
    }
    // a link degraded mid-run reweights the rings and prices the algorithms again at the next call
    cl_->follow_links(setup_.rings, setup_.ring_weights, [this](const std::vector<rs_link_params> &live) {
        try {
            return setup_.price(sc_, live); // within cost_room: engine_setup gave faulty runs the most
        } catch (const model::ConfigError &e) {
            std::fprintf(err_, "ringsim: pricing the algorithms after a fault: %s (auto keeps the table it had)\n",
                         e.what());
            return std::vector<ncl_cost>();
        }
    });
    return RS_EXIT_OK;
}

// Every rank has given up or finished by now (Cluster::run lets stuck waits time out): print each
// failed rank's diagnosis, then the links that are down.
int Driver::engine_error(const char *what)
{
    clear_progress();
    if (!cl_->fault().empty()) {
        std::fprintf(err_, "ringsim: %s: %s: %s\n", sc_.path ? sc_.path : "scenario", what, cl_->fault().c_str());
        error_text_ = std::string(what) + ": " + cl_->fault();
        return RS_EXIT_ENGINE;
    }
    std::fprintf(err_, "ringsim: %s: rank %d failed during %s: %s\n", sc_.path ? sc_.path : "scenario",
                 cl_->failed_rank(), what, ncl_strerror(cl_->failed_result()));
    error_text_ = "rank " + std::to_string(cl_->failed_rank()) + " failed during " + what + ": " +
                  ncl_strerror(cl_->failed_result());
    for (int r = 0; r < cl_->nranks(); r++) {
        std::string detail = cl_->last_error(r);
        if (!detail.empty())
            std::fprintf(err_, "ringsim:   %s\n", detail.c_str());
        if (!detail.empty() && r == cl_->failed_rank())
            error_text_ += " | " + detail;
        std::string fault = cl_->device_fault(r);
        if (!fault.empty())
            std::fprintf(err_, "ringsim:   rank %d device%s: %s\n", r, cl_->is_rtl(r) ? " (rtl)" : "", fault.c_str());
    }
    for (int ch : cl_->network().down_channels()) {
        std::fprintf(err_, "ringsim:   link %s is down\n", cl_->network().channel_name(ch).c_str());
        error_text_ += " | link " + cl_->network().channel_name(ch) + " is down";
    }
    // who everyone waited for: the wait-for graph over all ranks, its first unsatisfied edge first
    std::vector<ncl_rank_state> st(cl_->nranks());
    bool stuck = false;
    for (int r = 0; r < cl_->nranks(); r++) {
        ncl_comm_state(cl_->comm(r), &st[r]);
        stuck |= st[r].phase == NCL_PHASE_FAILED && (st[r].result == NCL_ERR_TIMEOUT || st[r].result == NCL_ERR_REMOTE);
    }
    if (!stuck)
        return RS_EXIT_ENGINE;
    std::string text(256 + st.size() * 160, '\0');
    text.resize(ncl_diag_report(st.data(), cl_->nranks(), &text[0], text.size()));
    for (size_t at = 0; at < text.size();) {
        size_t end = text.find('\n', at);
        end = end == std::string::npos ? text.size() : end;
        std::fprintf(err_, "ringsim:   %.*s\n", (int)(end - at), text.c_str() + at);
        if (at == 0)
            error_text_ += " | " + text.substr(0, end);
        at = end + 1;
    }
    return RS_EXIT_ENGINE;
}

// Buffers of one rank for the call, placed as nccl-tests does (in place per NCCL's rules).
void Driver::place(int rank, const rs_shape &s, bool inplace)
{
    Buffers &r = bufs_[rank];
    unsigned char *a, *b;
    if (sc_.payload_real) {
        unsigned char *old = r.a.data();
        a = r.a.reserve(rs_shape_a_bytes(&s));
        b = r.b.reserve(rs_shape_b_bytes(&s)); // mapped lazily: untouched in place
        if (a != old)
            r.a_input = InputKey{};
    } else {
        a = reinterpret_cast<unsigned char *>(k_fake_send);
        b = reinterpret_cast<unsigned char *>(k_fake_recv);
    }
    rs_shape_place(&s, rank, a, b, inplace, &r.send, &r.recv);
    cl_->set_buffers(rank, r.send, r.recv);
}

// A rank's input and poisoned output (real payload; runs on a worker thread). The input is
// generated unless a already holds it (out of place then in place, same row: runs only read it).
void Driver::prepare(int rank, const rs_shape &s)
{
    Buffers &r = bufs_[rank];
    const unsigned char *send = static_cast<const unsigned char *>(r.send);
    InputKey key{(uint64_t)(send - r.a.data()), rs_shape_input_elems(&s, rank), (int)s.dt, (int)s.op};
    if (!(r.a_input == key)) {
        rs_shape_input(&s, rank, sc_.seed, const_cast<unsigned char *>(send));
        r.a_input = key;
    }
    rs_shape_poison(&s, rank, send, r.recv);
}

// The reference result from the ranks' inputs (out-of-place placement, before any run), in
// blocks that keep the running result in cache across ranks.
void Driver::expect(const rs_shape &s)
{
    unsigned char *e = expected_.reserve(s.result_elems * s.es);
    std::vector<const void *> inputs((size_t)s.nranks);
    for (int r = 0; r < s.nranks; r++)
        inputs[(size_t)r] = bufs_[(size_t)r].send;
    const uint64_t block = 16384, total = s.result_elems; // elements
    rs::parallel_for((int)((total + block - 1) / block), [&](int i) {
        uint64_t lo = (uint64_t)i * block, hi = total - lo < block ? total : lo + block;
        rs_shape_expected_from(&s, inputs.data(), lo, hi, e + lo * s.es);
    });
}

uint64_t Driver::count_wrong(const rs_shape &s)
{
    std::vector<uint64_t> wrong((size_t)s.nranks, 0);
    rs::parallel_for(s.nranks,
                     [&](int r) { wrong[(size_t)r] = rs_shape_count_wrong(&s, r, bufs_[(size_t)r].recv, expected_.data()); });
    uint64_t sum = 0;
    for (uint64_t w : wrong)
        sum += w;
    return sum;
}

// One checked run of a row's placement (real payload): inputs, the reference (fresh: a new row;
// otherwise the one computed for the same row's other placement still holds), the run, #wrong.
bool Driver::check_row(const rs_shape &s, const model::Collective &c, bool inplace, bool fresh, double *us,
                       uint64_t *wrong)
{
    rs::parallel_for(s.nranks, [&](int r) { prepare(r, s); });
    if (fresh)
        expect(s);
    if (!cl_->run(c, 1, us))
        return false;
    *wrong = count_wrong(s);
    if (inplace) // in-place runs wrote over the inputs
        for (Buffers &b : bufs_)
            b.a_input = InputKey{};
    return true;
}

int Driver::sweep(rs_coll coll, rs_report *rep)
{
    const rs_workload &w = sc_.workload;
    int p = cl_->nranks();
    const ncl_coll engine = rs_coll_engine(coll);
    ncl_algo algo = ncl_algo_supported(engine, w.algo) ? w.algo : NCL_ALGO_AUTO;
    if (w.deterministic && engine == NCL_COLL_ALLREDUCE)
        algo = NCL_ALGO_DET; // what the engine runs in deterministic mode
    if (w.usersched)
        algo = NCL_ALGO_USER; // the scenario's schedule, given as data
    if (coll == RS_COLL_SENDRECV)
        algo = NCL_ALGO_CHAIN; // what each pair's communicator runs (ncl_send)

    rs_report_table_begin(rep, coll, ncl_algo_name(algo));
    int status = RS_EXIT_OK;
    bool reduces = rs_shape_reduces(coll);
    for (uint64_t size = w.begin_bytes, more = 1; more; more = rs_scenario_next_size(&w, size, &size)) {
        rs_shape s;
        if (rs_shape_make(&s, coll, p, w.dtype, w.op, w.root, w.a2av_skew, size)) {
            model::Collective c{engine, s.count, s.dt, reduces ? s.op : NCL_SUM, s.root};
            if (s.a2av)
                c.a2av = rs_shape_a2av_counts(&s);
            c.sendrecv = s.sendrecv;
            rs_row row{};
            row.coll = coll;
            row.dtype = w.dtype;
            row.op = c.op;
            row.has_op = reduces;
            row.root = rs_shape_rooted(coll) ? s.root : -1;
            row.size = s.size;
            row.count = s.count;
            row.algo = algo;
            row.memcpy_gbps = -1;
            double factor = rs_report_bus_factor(coll, p);
            show_progress(coll, row.size);
            for (int pl = 0; pl < 2; pl++) {
                double t = 0;
                uint64_t wrong = 0;
                if (pl == 1 && s.sendrecv) { // out of place only (rs_shape.sendrecv)
                    row.res[1].time_us = -1;
                    continue;
                }
                for (int r = 0; r < p; r++)
                    place(r, s, pl == 1);
                // Simulated time does not depend on the data: with one timed iteration and no
                // warm-up the check run is that iteration.
                bool check_is_timed = w.iters == 1 && w.warmup == 0;
                if (sc_.payload_real && !check_row(s, c, pl == 1, pl == 0, &t, &wrong))
                    return engine_error("the check run");
                if (!sc_.payload_real || !check_is_timed) {
                    if (w.warmup > 0 && !cl_->run(c, w.warmup, &t))
                        return engine_error("warm-up");
                    if (!cl_->run(c, w.iters, &t))
                        return engine_error("the timed iterations");
                }
                row.res[pl].time_us = t;
                row.res[pl].algbw = t > 0 ? (double)row.size / t / 1e3 : 0.0;
                row.res[pl].busbw = row.res[pl].algbw * factor;
                row.res[pl].wrong = wrong;
                if (wrong)
                    status = RS_EXIT_WRONG;
            }
            clear_progress();
            rows_done_++;
            rs_report_row(rep, &row);
            if (x_.on_row)
                x_.on_row(x_.row_ud, &row);
        }
    }
    rs_report_table_end(rep, 0);
    return status;
}

// "ringsim: allreduce 64 MiB (12/24)" on a terminal, rewritten in place; rows clear it first
// so the table (stdout, often the same terminal) never lands behind it.
void Driver::show_progress(rs_coll coll, uint64_t size)
{
    if (!x_.progress)
        return;
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    uint64_t v = size;
    while (v >= 1024 && v % 1024 == 0 && u < 4)
        v /= 1024, u++;
    std::fprintf(err_, "\rringsim: %s %llu %s (%d/%d)\033[K", rs_coll_name(coll), (unsigned long long)v,
                 units[u], rows_done_ + 1, rows_total_);
    std::fflush(err_);
    progress_shown_ = true;
}

void Driver::clear_progress()
{
    if (!progress_shown_)
        return;
    std::fputs("\r\033[K", err_);
    std::fflush(err_);
    progress_shown_ = false;
}

// Per-link utilisation after the tables: every channel that carried bytes, busiest first.
void Driver::print_links(FILE *out)
{
    if (!cl_ || x_.links == 0)
        return;
    model::Network &net = cl_->network();
    struct L {
        int id;
        std::string name;
        uint64_t bytes, peak;
        double util;
        bool up;
    };
    std::vector<L> ls;
    int nch = 0;
    net.for_each_channel([&](const model::ChannelInfo &c) {
        nch++;
        if (c.stats.bytes > 0)
            ls.push_back(L{c.id, c.name, c.stats.bytes, c.stats.peak_queue, c.utilisation, c.up});
    });
    // Ties keep channel order, so the listing is as deterministic as the times.
    std::stable_sort(ls.begin(), ls.end(), [](const L &a, const L &b) { return a.util > b.util; });
    std::fprintf(out, "# link utilisation: %zu of %d channels carried traffic over %.6g us simulated "
                      "(busy %% = time with bytes on the wire / simulated time)\n",
                 ls.size(), nch, net.now_s() * 1e6);
    std::fprintf(out, "#%23s  %16s  %7s  %10s\n", "channel", "bytes", "busy %", "peak queue");
    size_t shown = x_.links < 0 || (size_t)x_.links >= ls.size() ? ls.size() : (size_t)x_.links;
    for (size_t i = 0; i < shown; i++)
        std::fprintf(out, " %23s  %16llu  %7.2f  %10llu%s\n", ls[i].name.c_str(), (unsigned long long)ls[i].bytes,
                     ls[i].util * 100.0, (unsigned long long)ls[i].peak, ls[i].up ? "" : "  (down)");
    if (shown < ls.size())
        std::fprintf(out, "# (%zu more; --links all lists them)\n", ls.size() - shown);
    if (net.faults_applied() < sc_.faults_count) // a fault touches only what runs after its time
        std::fprintf(out, "# faults: %llu of %zu happened; the others are due after the workload's end\n",
                     (unsigned long long)net.faults_applied(), sc_.faults_count);
    std::fflush(out);
}

// Every channel a corrupt fault reached: what it damaged, and what the replays cost (one line
// each, in channel order; nothing at all for a run without such a fault).
void Driver::report_corruption(rs_report *rep)
{
    bool any = false;
    for (size_t i = 0; i < sc_.faults_count; i++)
        any |= sc_.faults[i].kind == RS_FAULT_CORRUPT;
    if (!any || !cl_ || !rep) // the channel walk names every channel: not for runs without one
        return;
    bool packets = sc_.fidelity == RS_FIDELITY_PACKET;
    cl_->network().for_each_channel([&](const model::ChannelInfo &c) {
        if (c.corruption.every == 0)
            return;
        rs_link_corruption lc{c.name.c_str(), c.corruption.every, c.corruption.crc, packets,
                              c.stats.corrupt_counted, c.stats.damaged, c.stats.replay_s * 1e6};
        rs_report_corruption(rep, &lc);
    });
}

// --stats: the devices whose memory was busiest (all of them up to 8 ranks).
void Driver::print_devices(FILE *out)
{
    if (!cl_)
        return;
    if (cl_->rtl()) // RTL devices: cycles, not the Npu's statistics
        std::fprintf(out, "# rtl: %llu cycles clocked, %.6g us of simulated time on the RTL clock domain\n",
                     (unsigned long long)cl_->rtl()->cycles(), (double)cl_->rtl()->now_ps() / 1e6);
    std::vector<std::pair<int, model::NpuStats>> ds;
    for (int r = 0; r < cl_->nranks(); r++)
        if (!cl_->is_rtl(r))
            ds.emplace_back(r, cl_->npu(r).stats());
    if (ds.empty())
        return;
    std::stable_sort(ds.begin(), ds.end(), [](const std::pair<int, model::NpuStats> &a,
                                              const std::pair<int, model::NpuStats> &b) {
        return a.second.memory_busy_s > b.second.memory_busy_s;
    });
    double sim = cl_->network().now_s();
    std::fprintf(out, "# devices (memory busy %% = time with a memory stream active / simulated time)\n");
    std::fprintf(out, "#%9s  %12s  %16s  %16s  %13s\n", "device", "data tasks", "bytes out", "memory bytes",
                 "memory busy %");
    size_t shown = ds.size() < 8 ? ds.size() : 8;
    for (size_t i = 0; i < shown; i++) {
        const model::NpuStats &st = ds[i].second;
        std::fprintf(out, " %6s%-3d  %12llu  %16llu  %16llu  %13.2f\n", "npu", ds[i].first,
                     (unsigned long long)st.tasks, (unsigned long long)st.bytes_out,
                     (unsigned long long)st.memory_bytes, sim > 0 ? st.memory_busy_s / sim * 100.0 : 0.0);
    }
    if (shown < ds.size())
        std::fprintf(out, "# (%zu more devices)\n", ds.size() - shown);
}

// workload.training: the training step's buckets through the same placement and checks as a sweep.
int Driver::train(rs_report *rep)
{
    rs::BucketRun run = [this](uint64_t count, double *us, uint64_t *wrong) {
        const rs_workload &w = sc_.workload;
        rs_shape s;
        rs_shape_make(&s, (rs_coll)NCL_COLL_ALLREDUCE, cl_->nranks(), w.dtype, w.op, 0, 0,
                      count * ncl_dtype_size(w.dtype));
        model::Collective c{NCL_COLL_ALLREDUCE, count, w.dtype, w.op, 0};
        for (int r = 0; r < s.nranks; r++) // in place, as fused gradient buffers are reduced
            place(r, s, true);
        *wrong = 0;
        if (sc_.payload_real ? check_row(s, c, true, true, us, wrong) : cl_->run(c, 1, us))
            return true;
        engine_error("a gradient bucket's allreduce");
        return false;
    };
    return rs::run_training(sc_, *cl_, tracer_.get(), run, stdout, rep);
}

// --chakra: each collective node of the traces through the same placement and checks as a sweep.
int Driver::chakra()
{
    rs::CollRun run = [this](ncl_coll coll, uint64_t bytes, double *us, int *algo, uint64_t *wrong) {
        const rs_workload &w = sc_.workload;
        rs_shape s;
        *us = 0, *wrong = 0, *algo = NCL_ALGO_AUTO;
        if (!rs_shape_make(&s, (rs_coll)coll, cl_->nranks(), w.dtype, w.op, 0, 0, bytes))
            return true; // less than an element per rank: nothing moves
        model::Collective c{coll, s.count, s.dt, rs_shape_reduces((rs_coll)coll) ? s.op : NCL_SUM, s.root};
        for (int r = 0; r < s.nranks; r++) // in place, as frameworks call them on their tensors
            place(r, s, true);
        if (!(sc_.payload_real ? check_row(s, c, true, true, us, wrong) : cl_->run(c, 1, us))) {
            engine_error("a Chakra trace's collective");
            return false;
        }
        ncl_rank_state st;
        ncl_comm_state(cl_->comm(0), &st);
        *algo = st.algo;
        return true;
    };
    return rs::run_chakra(sc_, *cl_, setup_, tracer_.get(), x_.chakra_prefix, x_.chakra_groups, run, stdout, err_);
}

int Driver::run(rs_report *rep)
{
    if (x_.chakra_prefix)
        return chakra();
    if (sc_.workload.training.model && sc_.workload.training.dp) // parallel given
        return rs::run_parallel_training(sc_, *cl_, setup_, tracer_.get(), stdout, err_, rep);
    if (sc_.workload.training.model)
        return train(rep);
    int status = RS_EXIT_OK;
    const rs_workload &w = sc_.workload;
    uint64_t es = ncl_dtype_size(w.dtype);
    for (int i = 0; i < w.colls_count; i++) // rows to come, for the progress line
        for (uint64_t size = w.begin_bytes, more = 1; more; more = rs_scenario_next_size(&w, size, &size)) {
            rows_total_ += size / es / (rs_shape_per_rank(w.colls[i]) ? (uint64_t)cl_->nranks() : 1) > 0;
        }
    for (int i = 0; i < sc_.workload.colls_count; i++) {
        int s = sweep((rs_coll)sc_.workload.colls[i], rep);
        status = s > status ? s : status;
        if (s == RS_EXIT_ENGINE)
            break;
    }
    clear_progress();
    return status;
}

} // namespace

extern "C" void rs_simrun_sweep(const rs_scenario *sc, rs_sweep *s)
{
    rs_scenario_sweep(sc, s);
    s->channels = rs::scenario_channels(*sc);
}

extern "C" int rs_simrun(const rs_scenario *sc, rs_report *rep, const rs_simrun_extras *x, FILE *err)
{
    static const rs_simrun_extras none{};
    const rs_simrun_extras &ex = x ? *x : none;
    return rs::sc_enter([&] {
        auto wall0 = std::chrono::steady_clock::now();
        Driver d(*sc, ex, err);
        int status = d.build();
        try {
            if (status == RS_EXIT_OK)
                status = d.run(rep);
        } catch (const std::exception &e) { // the rows so far stay; the report says the run failed
            // (SystemC hands an exception from inside a process back as its own report, E549)
            bool oom = dynamic_cast<const std::bad_alloc *>(&e) != nullptr || std::strstr(e.what(), "bad_alloc");
            std::string what = oom ? "out of memory while simulating (fewer ranks, smaller sizes, or payload: none)"
                                   : std::string("internal error while simulating: ") + e.what();
            std::fprintf(err, "ringsim: %s: %s\n", sc->path ? sc->path : "scenario", what.c_str());
            if (rep)
                rs_report_set_error(rep, what.c_str());
            return RS_EXIT_ENGINE;
        }
        if (status == RS_EXIT_ENGINE && rep && !d.error_text().empty())
            rs_report_set_error(rep, d.error_text().c_str());
        d.report_corruption(rep);
        d.print_links(stdout);
        d.finish_waves();
        if (d.finish_trace() != 0 && status == RS_EXIT_OK)
            status = RS_EXIT_USAGE;
        if (ex.stats) {
            d.print_devices(stdout);
            double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
            struct rusage ru;
            double peak_mb = getrusage(RUSAGE_SELF, &ru) == 0 ? (double)ru.ru_maxrss / 1024.0 : 0.0; // KiB on Linux
            // transfers: every message the network carried (writes and the records that travel alone)
            std::printf("# stats: %llu events in %.3f s wall (%.3g events/s), %llu transfers (%.2f events each), "
                        "%.6g s simulated, peak memory %.1f MiB\n",
                        (unsigned long long)d.events(), wall, wall > 0 ? (double)d.events() / wall : 0.0,
                        (unsigned long long)d.transfers(),
                        d.transfers() ? (double)d.events() / (double)d.transfers() : 0.0, d.sim_s(), peak_mb);
        }
        return status;
    });
}
