// cluster.hpp — a simulated machine that runs collectives: the network, one NPU per rank and each
// rank's communicator, driven event by event (ncl_*_start, then ncl_test whenever the NPU says
// something changed). `ringsim run` and the accuracy tests both run the model through it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ncl/ncl.h>

#include "model/network.hpp"
#include "model/npu.hpp"
#include "model/rtl_device.hpp"

namespace model {

/** One collective call, the same on every rank (buffers are per rank: set_buffers). */
struct Collective {
    ncl_coll coll;
    uint64_t count; // per rank for allgather / reduce_scatter, as the API takes it
    ncl_dtype dt;
    ncl_op op;
    int root;
    const uint64_t *a2av = nullptr; // alltoall: ncl_alltoallv over this matrix (count unused), the caller's
    bool sendrecv = false; // instead: count elements to rank + 1 and from rank - 1 (ncl_send / ncl_recv)
};

class Cluster {
public:
    /** Gives the HAL a rank's communicator uses (e.g. a tracing wrapper around npu.hal()). */
    using HalWrap = std::function<ncl_hal(int rank, Npu &npu)>;

    /** Builds the network and the devices (during elaboration: before the process's first
     *  sc_start): an Npu per rank, or with device.fidelity rtl a verilated rs_dev block per rank
     *  (RtlDomain) that the engine drives through the mmio backend. Throws ConfigError for a
     *  topology the network rejects (std::exception for a device memory too small for rtl). */
    Cluster(const rs_topology_spec &topo, rs_fidelity fidelity, const rs_device_params &device,
            bool payload, uint64_t scratch_bytes);
    ~Cluster();
    Cluster(const Cluster &) = delete;
    Cluster &operator=(const Cluster &) = delete;

    /** Creates every rank's communicator with cfg (its alloc/free may be NULL: malloc/free). */
    ncl_result connect(const ncl_config &cfg, const HalWrap &wrap = nullptr);
    /** Destroys every rank's communicator (and the sub-communicators they own), before whoever
     *  wrapped their HALs goes; the destructor does it otherwise. */
    void disconnect();

    int nranks() const { return (int)ranks_.size(); }
    Network &network() { return *net_; }
    /** The rank's SystemC device; only for ranks that are not RTL (is_rtl). */
    Npu &npu(int rank) { return *ranks_[rank].npu; }
    bool is_rtl(int rank) const { return rtl_ && rtl_->has(rank); }
    /** The RTL devices (null when every device is an Npu). */
    RtlDomain *rtl() { return rtl_.get(); }
    /** What went wrong on the rank's device: the Npu's fault or the mmio backend's last error. */
    std::string device_fault(int rank);
    ncl_comm *comm(int rank) { return ranks_[rank].comm; }
    /** Why the rank's last call failed: its communicator's error, or its failed transfer's. */
    const char *last_error(int rank);

    /** Who hears that a rank's NPU made progress: by default run()'s loop; a driver that runs
     *  its own rank programs (sim/harness/rs_simworld) takes it over. */
    void set_waker(std::function<void(int rank)> waker) { waker_ = std::move(waker); }
    uint64_t timeout_ns() const { return timeout_ns_; }

    /** The cost table `auto` chooses with, priced on the links' parameters as they are. */
    using Pricer = std::function<std::vector<ncl_cost>(const std::vector<rs_link_params> &live)>;
    /** Keeps the rings' weights (ncl_comm_set_ring_weights) and the cost table (ncl_comm_set_costs)
     *  following the links: a collective that starts after a fault runs with weights and costs from
     *  the links as they are then, the same on every rank. `rings` and `initial`: the rings and the
     *  weights the communicators were created with (empty: no rings); `price`: null keeps the
     *  table the communicators were created with. */
    void follow_links(std::vector<std::vector<int>> rings, std::vector<uint32_t> initial, Pricer price);

    /** The buffers `rank` passes to the next run(). */
    void set_buffers(int rank, const void *send, void *recv);

    /** Runs k calls of c back to back on every rank, all starting now. Waits that can never be
     *  satisfied are brought to the engine's timeout in simulated time, so every rank ends.
     *  time_us: per call, from the common start to the last rank's end. false: some rank failed
     *  (failed_rank(), failed_result(), and ncl_comm_last_error of each rank). */
    bool run(const Collective &c, int k, double *time_us);
    /** Lets simulated time pass with nothing to do until t_ps (work the model does not simulate
     *  event by event, e.g. a training step's compute). Earlier times: nothing. */
    void idle_until(uint64_t t_ps);
    int failed_rank() const { return failed_rank_; }
    ncl_result failed_result() const { return failed_rc_; }
    /** Why the model itself could not finish a run (its clock's horizon passed), or empty. */
    const std::string &fault() const { return fault_; }

private:
    struct Rank {
        std::unique_ptr<Npu> npu;
        ncl_comm *comm = nullptr;
        const void *send = nullptr;
        void *recv = nullptr;
        int remaining = 0;    // calls left in this run
        bool pending = false; // a progress callback is scheduled
        bool launching = false; // its next call starts after the launch overhead: nothing to test
        uint64_t end_ps = 0;
        uint64_t calls = 0;       // collectives started (follow_links)
        uint32_t view = 0;        // index in views_ of the weights and costs its communicator has
        // an RTL rank's call: device addresses, and what is copied in before and out after
        const void *dev_send = nullptr;
        void *dev_recv = nullptr;
        ncl_comm *ops[2] = {nullptr, nullptr}; // a sendrecv's transfers still running
        ncl_comm *failed_op = nullptr;         // the one that failed
    };

    void start(int rank);
    void update_view(int rank);
    void rtl_map(int rank, bool in);
    void progress(int rank);
    void fail(int rank, ncl_result rc);
    void rank_done();
    static void ev_progress(void *self, uint64_t rank);
    static void ev_start(void *self, uint64_t rank);
    void launch(int rank); // start(rank) after the device's launch overhead
    static void wake(void *self, int rank);

    std::unique_ptr<Network> net_;
    std::unique_ptr<RtlDomain> rtl_;
    bool payload_ = false;
    int busy_ranks_ = 0; // ranks with calls left in this run
    std::vector<std::string> rtl_fault_; // per rank: why its call could not be placed on the device
    std::vector<std::unique_ptr<Npu>> proxies_; // mixed fidelity: the RTL ranks' stand-ins
    std::vector<Rank> ranks_;
    std::vector<Npu *> npus_;
    Collective call_{};
    uint64_t timeout_ns_ = 0;
    uint64_t launch_ps_ = 0; // device.launch_overhead
    std::function<void(int)> waker_;
    // follow_links: the rings, every view of the links used so far, and which one each call uses
    // (decided by the first rank to start it, so a fault between two ranks' starts cannot split them)
    struct LinkView {
        std::vector<uint32_t> weights; // empty: no rings
        std::vector<ncl_cost> costs;   // empty: the table the communicators were created with
    };
    std::vector<std::vector<int>> rings_;
    Pricer price_;
    std::vector<LinkView> views_;
    std::vector<uint32_t> call_view_;
    uint64_t faults_seen_ = 0;
    int failed_rank_ = -1;
    ncl_result failed_rc_ = NCL_SUCCESS;
    std::string fault_;
};

} // namespace model
