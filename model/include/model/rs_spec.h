/* rs_spec.h — what a scenario describes, in SI units: the contract between the scenario loader
 * (sim/scenario/rs_scenario.c fills it) and the SystemC model (model/ builds from it). Plain C. */
#ifndef RS_SPEC_H
#define RS_SPEC_H

#include <stddef.h>
#include <stdint.h>

#include <ncl/ncl.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rs_topo_kind {
    RS_TOPO_RING = 0,   /* 0 -> 1 -> ... -> p-1 -> 0, one direction */
    RS_TOPO_BIRING,     /* ring with links in both directions */
    RS_TOPO_FULL_MESH,  /* a link between every pair, both directions */
    RS_TOPO_TORUS2D,    /* dims[0] x dims[1], wrap-around links in both directions; rank =
                           row * dims[1] + column; a dimension of 2 gives one link pair, not two */
    RS_TOPO_SWITCH,     /* star: every rank has one link pair to a single switch */
    RS_TOPO_FAT_TREE,   /* two levels: `per_leaf` ranks per leaf switch, `spines` spine switches */
    RS_TOPO_SERVER8,    /* Atlas-800-style: groups 0-3 and 4-7 fully meshed + pairs 0-4 .. 3-7 */
    RS_TOPO_CLUSTER,    /* `servers` SERVER8s; every NPU also has a NIC link pair to one switch */
    RS_TOPO_LINKS,      /* the explicit link list only */
    RS_TOPO_KIND_COUNT
} rs_topo_kind;

/* One unidirectional channel's parameters (a full-duplex link is two of them). */
typedef struct rs_link_params {
    double bandwidth;      /* bytes per second on the wire, headers included */
    double latency;        /* seconds, first bit out to first bit in */
    uint32_t packet_bytes; /* payload bytes per packet */
    uint32_t header_bytes; /* header bytes added to every packet */
    uint32_t buffer_bytes; /* receive buffer = credits, for packet fidelity */
    double duplex_bandwidth; /* bytes per second both directions carry together (a host bridge both
                                cross); <= 0: each direction its bandwidth */
} rs_link_params;

typedef struct rs_switch_params {
    double latency;        /* seconds through the switch (cut-through) */
    uint32_t buffer_bytes; /* per output port */
} rs_switch_params;

/* A link of the explicit list, an override of a built link, or a fault's target. Endpoints are
 * node ids: ranks 0..p-1, then switches (switch/cluster: node p; fat_tree: leaves, then spines);
 * `both` covers a->b and b->a. `line` is the scenario line, for messages. */
typedef struct rs_link_ref {
    int32_t a, b;
    int32_t both;
    int32_t line;
} rs_link_ref;

typedef struct rs_link_spec {
    rs_link_ref ends;
    rs_link_params params; /* explicit list: full parameters (defaults from the topology's link) */
} rs_link_spec;

/* Changes to built links: a field < 0 keeps the built value. */
typedef struct rs_link_override {
    rs_link_ref ends;
    double bandwidth;
    double latency;
} rs_link_override;

typedef struct rs_topology_spec {
    rs_topo_kind kind;
    int32_t nranks;          /* ring/biring/full_mesh/switch/links; derived for the others */
    int32_t dims[2];         /* torus2d */
    int32_t per_leaf, spines;/* fat_tree: ranks per leaf switch, spine switches (leaves = nranks/per_leaf) */
    int32_t servers;         /* cluster */
    rs_link_params link;     /* every NPU-NPU link (and NPU-switch links of switch/fat_tree) */
    rs_link_params nic;      /* cluster: NPU NIC <-> switch links */
    rs_switch_params sw;
    rs_link_spec *links;     /* RS_TOPO_LINKS */
    size_t links_count;
    rs_link_override *overrides;
    size_t overrides_count;
} rs_topology_spec;

typedef struct rs_device_params {
    uint32_t dma_engines;    /* concurrent DMA tasks per device */
    uint32_t queue_depth;    /* tasks a DMA engine queues */
    double mem_bandwidth;    /* bytes/s of device memory, shared by DMA reads, writes and reductions */
    double reduce_bandwidth; /* bytes/s of the inline-reduce unit */
    double task_overhead;    /* seconds to issue one task */
    double launch_overhead;  /* seconds from a call to its start on the device (a kernel launch, a doorbell) */
    double latency_path_overhead;   /* seconds to issue a data task of a latency-path call (< 0: task_overhead) */
    double latency_path_efficiency; /* useful bytes per wire byte on the latency path (data and flags
                                       in one stream: NCCL's LL 0.5, LL128 0.94); 0: 1 */
    /* The DMA's inline reduce (ncl_hal_caps): text as written ("all", "none", "int32 float:sum"),
     * the ops per dtype it cannot reduce inline (bit 1 << op; 0: all inline), and the alignment it
     * needs (bytes; 0 or 1: any). */
    char *inline_reduce;
    uint16_t no_inline_ops[NCL_DTYPE_COUNT];
    uint32_t inline_align;
    uint64_t memory_bytes;   /* device memory capacity (checked against a real payload's buffers;
                                nothing is allocated up front) */
    uint64_t scratch_bytes;  /* NCL_BUF_SCRATCH per device, out of memory (0: RS_DEFAULT_NPU_SCRATCH) */
    int32_t fidelity;        /* rs_device_fidelity: what every device is (0: the SystemC NPU) */
    double rtl_clock;        /* Hz: the RTL devices' clock (fidelity rtl; 0: 1 GHz) */
    char *rtl_clock_text;    /* device.rtl_clock as written ("1 GHz"), NULL: the default */
    char *rtl_ranks_text;    /* device.rtl_ranks as written ("all", "0", "0 2"), NULL: all */
    uint64_t rtl_ranks;      /* fidelity rtl: bit r = rank r is RTL, the rest SystemC NPUs (0: all) */
} rs_device_params;

/* device.fidelity: the SystemC NPU model, or the verilated rs_dev block (rtl_stub/) driven by
 * the unchanged engine through the mmio backend, its link transfers on the same Network. */
typedef enum rs_device_fidelity { RS_DEVICE_SYSTEMC = 0, RS_DEVICE_RTL } rs_device_fidelity;

/* down: the link stops; degrade: new bandwidth and/or latency; corrupt: bit errors on the link
 * (every N-th message damaged, replayed by the link layer or landing unnoticed). */
typedef enum rs_fault_kind { RS_FAULT_DOWN = 0, RS_FAULT_DEGRADE, RS_FAULT_CORRUPT } rs_fault_kind;

typedef struct rs_fault {
    double at;               /* simulated seconds */
    rs_fault_kind kind;
    rs_link_ref ends;
    double bandwidth;        /* degrade: new value, < 0 keeps */
    double latency;          /* degrade: new value, < 0 keeps */
    uint32_t every;          /* corrupt: every N-th message (packet at packet fidelity) crossing a
                                direction of the link from `at` on is damaged; 0: not given */
    int32_t crc;             /* corrupt: 1 the link layer detects the damage and replays the message;
                                0 the damage lands unnoticed (needs a real payload) */
} rs_fault;

typedef enum rs_fidelity { RS_FIDELITY_MESSAGE = 0, RS_FIDELITY_PACKET } rs_fidelity;

/* One gradient tensor of a training model, in forward (registration) order: back-propagation
 * produces them from the last to the first. Times are per sample at the table's stated speed. */
typedef struct rs_tensor {
    char *name;
    uint64_t params;         /* elements */
    double forward, backward; /* seconds of compute per sample for the layer this tensor closes */
    int32_t line;            /* in the model file, for messages */
} rs_tensor;

/* workload.training: a data-parallel training step instead of a size sweep. */
typedef struct rs_training {
    char *model;             /* the model table's file as written (NULL: not a training workload) */
    char *model_name;        /* from the table */
    char *model_source;      /* where its numbers come from, and the assumed compute speed */
    rs_tensor *tensors;      /* the table's gradient tensors */
    size_t tensors_count;
    int32_t micro_batch;     /* samples per NPU per iteration: compute times scale with it */
    char *fusion;            /* the gradient fusion strategy as written (sim/scenario/rs_fusion.h) */
    uint32_t hidden;         /* the table's activation width per token (a transformer's; 0: not given) */
    uint32_t sequence;       /* the table's tokens per sample (0: not given) */
    int32_t tp, pp, dp;      /* parallel dimensions (0: not given; all 0: data parallel on every rank) */
    int32_t ep;              /* expert parallelism among the dp replicas (0: not given = 1) */
    double ep_skew;          /* with ep: the all-to-alls' blocks spread over (1 - skew) .. (1 + skew) x the
                                mean (alltoallv; uneven token routing), 0: equal (alltoall) */
    int32_t micro_batches;   /* with pp: micro-batches per iteration through the pipeline (0: pp) */
} rs_training;

typedef struct rs_workload {
    int32_t colls[NCL_COLL_COUNT + 2]; /* ncl_coll values, or past them alltoallv over a skewed matrix
                                          and sendrecv (the run's rs_coll, sim/sweep/rs_sweep.h) */
    int32_t colls_count;
    double a2av_skew;        /* alltoallv's blocks: (1 - skew) .. (1 + skew) x the mean, 0..1 */
    ncl_algo algo;
    ncl_dtype dtype;
    ncl_op op;
    int32_t root;
    uint64_t begin_bytes, end_bytes;
    uint32_t factor;         /* size multiplier per step (>= 2) */
    uint64_t step_bytes;     /* > 0: add this per step instead of multiplying (nccl-tests -i) */
    int32_t iters, warmup;
    uint32_t channels;       /* the engine's parallel ring queues (ncl_config.channels), 1..8;
                                0: one per ring, at least 2 */
    uint64_t slice_bytes;    /* ncl_config.slice_bytes, the engine's largest DMA task (0: RS_DEFAULT_ENGINE_SLICE) */
    uint32_t in_flight;      /* ncl_config.in_flight, data tasks a queue keeps in flight (0: the
                                device's queue_depth, at most NCL_MAX_IN_FLIGHT) */
    uint64_t latency_path;   /* ncl_config.latency_path_bytes: calls of at most this many bytes take the
                                latency path (0: none) */
    double latency_path_of[NCL_COLL_COUNT]; /* the same for one collective (< 0: latency_path) */
    double landing_zone;     /* ncl_config.landing_zone_bytes: bytes of each zone, 0 none, < 0 the engine's size */
    int32_t rings;           /* rs_rings: the logical rings of the ring algorithms */
    int32_t deterministic;   /* 1: ncl_config.deterministic (one canonical reduction order) */
    int32_t wide_accumulation; /* 1: ncl_config.wide_accumulation (fp16/bf16 sums in fp32, rounded
                                  once; only with deterministic) */
    ncl_algo inter_algo;     /* hier's inter-server level (ncl_config.inter_algo) */
    char *schedule;          /* workload.schedule: a user-defined schedule file as written, NULL: none */
    struct rs_usersched *usersched; /* that file loaded and proven (sim/scenario/rs_usersched.h); freed with
                                       the scenario */
    rs_training training;    /* workload.training */
} rs_workload;

/* Where the ring algorithms' logical rings come from. */
typedef enum rs_rings {
    RS_RINGS_AUTO = 0, /* found from the topology: channel-disjoint rings over direct links */
    RS_RINGS_RANK      /* one ring, 0, 1, ..., p-1 (routed where ranks are not adjacent) */
} rs_rings;

typedef struct rs_scenario {
    char *path;              /* the file it came from */
    char *name;
    char *description;
    rs_topology_spec topo;
    rs_device_params device;
    rs_workload workload;
    int32_t payload_real;    /* 1: real bytes moved and checked; 0: timing only */
    rs_fidelity fidelity;
    uint64_t seed;
    rs_fault *faults;
    size_t faults_count;
} rs_scenario;

#ifdef __cplusplus
}
#endif
#endif
