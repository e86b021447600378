/* rs_scenario_keys.c — the scenario's key tables: every key of a scenario file with its type, unit, range, default and meaning, and the names of its values. */
#include "rs_scenario_keys.h"

#include <stddef.h>

#include "model/rs_defaults.h"
#include "rs_scenario.h"

#define RS_COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define RS_MAX_RANK (RS_SCENARIO_MAX_RANKS - 1)
#define RS_MAX_NODE ((1 << 20) - 1) /* overrides and faults may name switches, numbered after the ranks */
#define RS_TB 1e12

/* Enumerations are stored through int32_t: the same representation on every ABI we build for. */
_Static_assert(sizeof(rs_topo_kind) == sizeof(int32_t), "enum size");
_Static_assert(sizeof(ncl_coll) == sizeof(int32_t), "enum size");
_Static_assert(sizeof(rs_fidelity) == sizeof(int32_t), "enum size");

/* ---- keys ------------------------------------------------------------------------------------- */

/* -- keys shared by several maps -- */
#define RS_BW_MAX (100 * RS_TB) /* 100 TB/s: beyond any link or memory of this decade */

#define RS_LINK_KEYS(T, OFF, BW, LAT, PKT, HDR, BUF, DOC)                                              \
    {"bandwidth", RS_T_UNIT, RS_UNIT_BANDWIDTH, RS_S_DBL, OFF + offsetof(rs_link_params, bandwidth), 0, \
     0, RS_BW_MAX, RS_F_MIN_EXCL, 0, 0, BW, DOC, NULL, NULL,                                            \
     "bytes per second on the wire, headers included, in each direction"},                             \
    {"latency", RS_T_UNIT, RS_UNIT_TIME, RS_S_DBL, OFF + offsetof(rs_link_params, latency), 0, 0, 1.0,   \
     0, 0, 0, LAT, DOC, NULL, NULL, "first bit out to first bit in"},                                   \
    {"packet", RS_T_UNIT, RS_UNIT_SIZE, RS_S_U32, OFF + offsetof(rs_link_params, packet_bytes), 0, 16,  \
     1048576, 0, 0, 0, PKT, DOC, NULL, NULL, "payload bytes per packet"},                               \
    {"header", RS_T_UNIT, RS_UNIT_SIZE, RS_S_U32, OFF + offsetof(rs_link_params, header_bytes), 0, 0,   \
     4096, 0, 0, 0, HDR, DOC, NULL, NULL, "bytes added to every packet"},                               \
    {"buffer", RS_T_UNIT, RS_UNIT_SIZE, RS_S_U32, OFF + offsetof(rs_link_params, buffer_bytes), 0, 64,  \
     1073741824, 0, 0, 0, BUF, DOC, NULL, NULL,                                                         \
     "receive buffer (its credits); holds at least one packet + header; full bandwidth needs bandwidth "  \
     "x 2 latency + a packet, below it a channel runs at the packets it holds / (2 latency + a packet)"}, \
    {"duplex_bandwidth", RS_T_UNIT, RS_UNIT_BANDWIDTH, RS_S_DBL,                                         \
     OFF + offsetof(rs_link_params, duplex_bandwidth), 0, 0, RS_BW_MAX, RS_F_MIN_EXCL | RS_F_UNSET, 0, 0, \
     NULL, DOC ? DOC : "none (each direction its bandwidth)", NULL, NULL,                                  \
     "what both directions carry together, where both cross one part that cannot carry both at full rate " \
     "(a PCIe host bridge, a NIC's DMA engine): while both are busy they share it fairly"}

static const rs_key rs_keys_link[] = {
    RS_LINK_KEYS(rs_link_params, 0, RS_DEFAULT_LINK_BANDWIDTH, RS_DEFAULT_LINK_LATENCY, RS_DEFAULT_LINK_PACKET,
                 RS_DEFAULT_LINK_HEADER, RS_DEFAULT_LINK_BUFFER, NULL),
};
static const rs_map rs_map_link = {
    "topology.link", "Every rank-to-rank link, and the rank-to-switch links of `switch` and `fat_tree` "
    "(and their leaf-spine links). Each direction is one channel with these parameters.",
    rs_keys_link, RS_COUNT(rs_keys_link), 1, 0, 0, NULL, rs_scenario_check_link};

static const rs_key rs_keys_nic[] = {
    RS_LINK_KEYS(rs_link_params, 0, RS_DEFAULT_NIC_BANDWIDTH, RS_DEFAULT_NIC_LATENCY, RS_DEFAULT_NIC_PACKET,
                 RS_DEFAULT_NIC_HEADER, RS_DEFAULT_NIC_BUFFER, NULL),
};
static const rs_map rs_map_nic = {
    "topology.nic", "`cluster` only: each NPU's NIC link to the switch (RoCE-like).",
    rs_keys_nic, RS_COUNT(rs_keys_nic), 1, 0, 0, NULL, rs_scenario_check_link};

static const rs_key rs_keys_switch[] = {
    {"latency", RS_T_UNIT, RS_UNIT_TIME, RS_S_DBL, offsetof(rs_switch_params, latency), 0, 0, 1.0, 0, 0, 0,
     RS_DEFAULT_SWITCH_LATENCY, NULL, NULL, NULL, "input to output through the switch (cut-through)"},
    {"buffer", RS_T_UNIT, RS_UNIT_SIZE, RS_S_U32, offsetof(rs_switch_params, buffer_bytes), 0, 1024,
     1073741824, 0, 0, 0, RS_DEFAULT_SWITCH_BUFFER, NULL, NULL, NULL, "buffer per output port; holds at least one packet"},
};
static const rs_map rs_map_switch = {
    "topology.switch", "`switch`, `fat_tree` and `cluster`: every switch.",
    rs_keys_switch, RS_COUNT(rs_keys_switch), 1, 0, 0, NULL, NULL};

#define RS_ENDS_KEYS(T, MAX, WHAT)                                                                      \
    {"from", RS_T_INT, RS_UNIT_COUNT, RS_S_I32, offsetof(T, ends.a), 0, 0, MAX, RS_F_REQUIRED, 0, 0, NULL, \
     NULL, NULL, NULL, WHAT " at one end"},                                                               \
    {"to", RS_T_INT, RS_UNIT_COUNT, RS_S_I32, offsetof(T, ends.b), 0, 0, MAX, RS_F_REQUIRED, 0, 0, NULL,   \
     NULL, NULL, NULL, WHAT " at the other end"},                                                         \
    {"both", RS_T_BOOL, RS_UNIT_COUNT, RS_S_I32, offsetof(T, ends.both), 0, 0, 1, 0, 0, 0, "true", NULL,  \
     &rs_scenario_bools, NULL, "true: from -> to and to -> from; false: from -> to only"}

static const rs_key rs_keys_link_item[] = {
    RS_ENDS_KEYS(rs_link_spec, RS_MAX_RANK, "rank"),
    RS_LINK_KEYS(rs_link_spec, offsetof(rs_link_spec, params), NULL, NULL, NULL, NULL, NULL,
                 "topology.link's"),
};
static const rs_map rs_map_link_item = {
    "topology.links[]", "`links` only: the explicit link list. Each entry is a link between two ranks "
    "with `topology.link`'s parameters unless it gives its own.",
    rs_keys_link_item, RS_COUNT(rs_keys_link_item), 1, sizeof(rs_link_spec),
    offsetof(rs_link_spec, ends.line), rs_scenario_init_link_item, rs_scenario_check_link_item};

static const rs_key rs_keys_override[] = {
    RS_ENDS_KEYS(rs_link_override, RS_MAX_NODE, "node (a rank, or a switch numbered after the ranks)"),
    {"bandwidth", RS_T_UNIT, RS_UNIT_BANDWIDTH, RS_S_DBL, offsetof(rs_link_override, bandwidth), 0, 0,
     RS_BW_MAX, RS_F_MIN_EXCL | RS_F_UNSET, 0, 0, NULL, "unchanged", NULL, NULL, "new bandwidth"},
    {"latency", RS_T_UNIT, RS_UNIT_TIME, RS_S_DBL, offsetof(rs_link_override, latency), 0, 0, 1.0,
     RS_F_UNSET, 0, 0, NULL, "unchanged", NULL, NULL, "new latency"},
};
static const rs_map rs_map_override = {
    "topology.overrides[]", "Any kind: changes to links the topology built (a slow link, an "
    "asymmetric link). Applied in order; each must change something.",
    rs_keys_override, RS_COUNT(rs_keys_override), 1, sizeof(rs_link_override),
    offsetof(rs_link_override, ends.line), NULL, rs_scenario_check_override};

#define RS_TK(k) RS_K(RS_TOPO_##k)
static const rs_key rs_keys_topology[] = {
    {"kind", RS_T_ENUM, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_topology_spec, kind), 0, 0, 0, RS_F_REQUIRED,
     0, 0, NULL, NULL, &rs_scenario_kinds, NULL, "the shape; see the table of kinds"},
    {"ranks", RS_T_INT, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_topology_spec, nranks), 0, 2,
     RS_SCENARIO_MAX_RANKS, 0, 0,
     RS_TK(RING) | RS_TK(BIRING) | RS_TK(FULL_MESH) | RS_TK(SWITCH) | RS_TK(FAT_TREE), NULL,
     "derived for torus2d, server8, cluster, links", NULL, NULL,
     "number of NPUs; where the kind fixes it, it may be given only with that value"},
    {"dims", RS_T_PAIR, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_topology_spec, dims), 0, 2, 32768, 0,
     RS_TK(TORUS2D), RS_TK(TORUS2D), NULL, NULL, NULL, NULL,
     "[rows, columns]; rank = row * columns + column"},
    {"servers", RS_T_INT, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_topology_spec, servers), 0, 1,
     RS_SCENARIO_MAX_RANKS / 8, 0, RS_TK(CLUSTER), RS_TK(CLUSTER), NULL, NULL, NULL, NULL,
     "number of 8-NPU servers; server s holds ranks 8s to 8s+7"},
    {"per_leaf", RS_T_INT, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_topology_spec, per_leaf), 0, 1,
     RS_SCENARIO_MAX_RANKS, 0, RS_TK(FAT_TREE), RS_TK(FAT_TREE), NULL, NULL, NULL, NULL,
     "ranks per leaf switch; divides ranks"},
    {"spines", RS_T_INT, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_topology_spec, spines), 0, 1, 4096, 0,
     RS_TK(FAT_TREE), 0, NULL, "per_leaf (full bisection)", NULL, NULL,
     "spine switches; each leaf has one link to each spine"},
    {"link", RS_T_MAP, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_topology_spec, link), 0, 0, 0, 0, 0, 0, NULL,
     "each key's default", NULL, &rs_map_link, "parameters of every link"},
    {"nic", RS_T_MAP, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_topology_spec, nic), 0, 0, 0, 0,
     RS_TK(CLUSTER), 0, NULL, "each key's default", NULL, &rs_map_nic, "parameters of NIC links"},
    {"switch", RS_T_MAP, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_topology_spec, sw), 0, 0, 0, 0,
     RS_TK(SWITCH) | RS_TK(FAT_TREE) | RS_TK(CLUSTER), 0, NULL, "each key's default", NULL,
     &rs_map_switch, "parameters of switches"},
    {"links", RS_T_SEQ, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_topology_spec, links),
     offsetof(rs_topology_spec, links_count), 0, 0, 0, RS_TK(LINKS), RS_TK(LINKS), NULL, NULL, NULL,
     &rs_map_link_item, "the explicit link list"},
    {"overrides", RS_T_SEQ, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_topology_spec, overrides),
     offsetof(rs_topology_spec, overrides_count), 0, 0, 0, 0, 0, NULL, "none", NULL, &rs_map_override,
     "per-link changes"},
};
static const rs_map rs_map_topology = {
    "topology", "What is connected to what. `kind` picks the shape; the keys it needs are listed "
    "in the table of kinds below.",
    rs_keys_topology, RS_COUNT(rs_keys_topology), 0, 0, 0, NULL, rs_scenario_check_topology};

static const rs_key rs_keys_device[] = {
    {"dma_engines", RS_T_INT, RS_UNIT_COUNT, RS_S_U32, offsetof(rs_device_params, dma_engines), 0, 1, 64, 0,
     0, 0, RS_DEFAULT_NPU_DMA_ENGINES, NULL, NULL, NULL, "DMA tasks a device runs at the same time"},
    {"queue_depth", RS_T_INT, RS_UNIT_COUNT, RS_S_U32, offsetof(rs_device_params, queue_depth), 0, 1, 65536,
     0, 0, 0, RS_DEFAULT_NPU_QUEUE_DEPTH, NULL, NULL, NULL, "data tasks an engine queue may have in flight at once (the engine keeps at most 4)"},
    {"memory_bandwidth", RS_T_UNIT, RS_UNIT_BANDWIDTH, RS_S_DBL, offsetof(rs_device_params, mem_bandwidth),
     0, 0, RS_BW_MAX, RS_F_MIN_EXCL, 0, 0, RS_DEFAULT_NPU_MEMORY_BANDWIDTH, NULL, NULL, NULL,
     "device memory, shared by DMA reads, writes and reductions"},
    {"reduce_bandwidth", RS_T_UNIT, RS_UNIT_BANDWIDTH, RS_S_DBL,
     offsetof(rs_device_params, reduce_bandwidth), 0, 0, RS_BW_MAX, RS_F_MIN_EXCL, 0, 0, RS_DEFAULT_NPU_REDUCE_BANDWIDTH, NULL,
     NULL, NULL, "throughput of the inline-reduce unit"},
    {"task_overhead", RS_T_UNIT, RS_UNIT_TIME, RS_S_DBL, offsetof(rs_device_params, task_overhead), 0, 0,
     1.0, 0, 0, 0, RS_DEFAULT_NPU_TASK_OVERHEAD, NULL, NULL, NULL, "time to issue one task"},
    {"launch_overhead", RS_T_UNIT, RS_UNIT_TIME, RS_S_DBL, offsetof(rs_device_params, launch_overhead), 0, 0, 1.0,
     0, 0, 0, "0 s", NULL, NULL, NULL,
     "from a call to its start on the devices (a kernel launch, a doorbell): every call pays it once, "
     "whatever its size and algorithm"},
    {"latency_path_overhead", RS_T_UNIT, RS_UNIT_TIME, RS_S_DBL, offsetof(rs_device_params, latency_path_overhead),
     0, 0, 1.0, RS_F_UNSET, 0, 0, NULL, "task_overhead", NULL, NULL,
     "time to issue a data task of a call on the latency path (workload.latency_path)"},
    {"latency_path_efficiency", RS_T_UNIT, RS_UNIT_COUNT, RS_S_DBL,
     offsetof(rs_device_params, latency_path_efficiency), 0, 0, 1.0, RS_F_MIN_EXCL, 0, 0, "0.5", NULL, NULL, NULL,
     "useful bytes per wire byte of a latency-path write (data and its flags in one stream, no separate "
     "notify for the data: NCCL's LL carries 0.5, LL128 0.94)"},
    {"memory", RS_T_UNIT, RS_UNIT_SIZE, RS_S_U64, offsetof(rs_device_params, memory_bytes), 0, 1048576,
     1099511627776.0, 0, 0, 0, RS_DEFAULT_NPU_MEMORY, NULL, NULL, NULL,
     "device memory size; with payload real it must hold a rank's send + receive buffers"},
    {"scratch", RS_T_UNIT, RS_UNIT_SIZE, RS_S_U64, offsetof(rs_device_params, scratch_bytes), 0, 4096,
     1099511627776.0, 0, 0, 0, NULL, RS_DEFAULT_NPU_SCRATCH " (at most 16 MiB)", NULL, NULL,
     "the engine's scratch buffer on each device, out of memory: staged reductions land there, and "
     "reduce-scatter's rounds are cut to fit at least 3 slots of it per channel"},
    {"inline_reduce", RS_T_STR, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_device_params, inline_reduce), 0, 0, 0, 0,
     0, 0, RS_DEFAULT_NPU_INLINE_REDUCE, NULL, NULL, NULL,
     "what the DMA reduces inline as it writes: all, none, or dtypes, each with all ops or dtype:op "
     "(e.g. \"int32 uint32 float:sum\"); anything else is written to scratch and reduced by the receiver"},
    {"inline_align", RS_T_UNIT, RS_UNIT_SIZE, RS_S_U32, offsetof(rs_device_params, inline_align), 0, 1, 4096, 0,
     0, 0, RS_DEFAULT_NPU_INLINE_ALIGN, NULL, NULL, NULL,
     "inline reduce needs offsets and lengths that are multiples of this; other tasks take the scratch path"},
    {"fidelity", RS_T_ENUM, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_device_params, fidelity), 0, 0, 0, 0, 0, 0,
     RS_DEFAULT_RTL_FIDELITY, NULL, &rs_scenario_device_fidelities, NULL,
     "systemc: the NPU model (the keys above); rtl: the devices rtl_ranks names are the verilated rs_dev "
     "block (rtl_stub/), driven by the unchanged engine through the mmio backend, their link transfers on "
     "these links (int32/uint32/float, sum/max/min, 2-4 ranks; of the keys above only memory applies to them)"},
    {"rtl_clock", RS_T_STR, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_device_params, rtl_clock_text), 0, 0, 0, 0,
     0, 0, RS_DEFAULT_RTL_CLOCK, NULL, NULL, NULL,
     "clock of the RTL devices (fidelity rtl), 1 MHz to 10 GHz: one cycle moves one 32-bit word "
     "through a block's memory port"},
    {"rtl_ranks", RS_T_STR, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_device_params, rtl_ranks_text), 0, 0, 0, 0,
     0, 0, RS_DEFAULT_RTL_RANKS, NULL, NULL, NULL,
     "fidelity rtl: which ranks are RTL devices (all, or rank numbers like \"0\" or \"0 2\"); the others "
     "are SystemC NPUs on the same links (mixed fidelity)"},
};
static const rs_map rs_map_device = {
    "device", "Every NPU (all devices are alike).",
    rs_keys_device, RS_COUNT(rs_keys_device), 1, 0, 0, NULL, rs_scenario_check_device};

static const rs_key rs_keys_sizes[] = {
    {"begin", RS_T_UNIT, RS_UNIT_SIZE, RS_S_U64, offsetof(rs_workload, begin_bytes), 0, 1, 1099511627776.0,
     0, 0, 0, "8 B", NULL, NULL, NULL, "first size (nccl-tests -b); at least one element"},
    {"end", RS_T_UNIT, RS_UNIT_SIZE, RS_S_U64, offsetof(rs_workload, end_bytes), 0, 1, 1099511627776.0, 0, 0,
     0, "16 MiB", NULL, NULL, NULL, "last size (nccl-tests -e); at least begin"},
    {"factor", RS_T_INT, RS_UNIT_COUNT, RS_S_U32, offsetof(rs_workload, factor), 0, 2, 1024, 0, 0, 0, "2",
     NULL, NULL, NULL, "multiply the size by this each step (nccl-tests -f)"},
    {"step", RS_T_UNIT, RS_UNIT_SIZE, RS_S_U64, offsetof(rs_workload, step_bytes), 0, 1, 1099511627776.0, 0, 0,
     0, NULL, "none (multiply by factor)", NULL, NULL,
     "add this to the size each step instead (nccl-tests -f 0 -i): linear sweeps; not with factor"},
};
const rs_map rs_scenario_map_sizes = {
    "workload.sizes", "The size sweep, in bytes per rank as nccl-tests counts them (for allgather and "
    "reduce_scatter: the whole gathered buffer).",
    rs_keys_sizes, RS_COUNT(rs_keys_sizes), 1, 0, 0, NULL, rs_scenario_check_sizes};

#define RS_LATENCY_PATH_OF(NAME, COLL)                                                                    \
    {NAME, RS_T_UNIT, RS_UNIT_SIZE, RS_S_DBL, offsetof(rs_workload, latency_path_of[COLL]), 0, 0, 1099511627776.0, \
     RS_F_UNSET, 0, 0, NULL, "workload.latency_path", NULL, NULL, "latency_path for " NAME " calls (0 B: none on the latency path)"}
static const rs_key rs_keys_latency_paths[] = {
    RS_LATENCY_PATH_OF("allreduce", NCL_COLL_ALLREDUCE),
    RS_LATENCY_PATH_OF("broadcast", NCL_COLL_BROADCAST),
    RS_LATENCY_PATH_OF("reduce", NCL_COLL_REDUCE),
    RS_LATENCY_PATH_OF("reduce_scatter", NCL_COLL_REDUCE_SCATTER),
    RS_LATENCY_PATH_OF("allgather", NCL_COLL_ALLGATHER),
    RS_LATENCY_PATH_OF("alltoall", NCL_COLL_ALLTOALL),
};
#undef RS_LATENCY_PATH_OF
const rs_map rs_scenario_map_latency_paths = {
    "workload.latency_paths", "The protocol switch of one collective, where it differs from workload.latency_path "
    "(NCCL's tuning picks the protocol per collective: two A100s over InfiniBand switch allreduce at 442 KiB and "
    "broadcast at 92 KiB).",
    rs_keys_latency_paths, RS_COUNT(rs_keys_latency_paths), 1, 0, 0, NULL, NULL};

static const rs_key rs_keys_parallel[] = {
    {"tp", RS_T_INT, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_training, tp), 0, 1, 1024, 0, 0, 0, "1", NULL, NULL, NULL,
     "tensor-parallel size: each layer's compute split over tp ranks, two allreduces of its activations per "
     "layer forward and two backward (Megatron-LM's MLP and attention blocks); ranks r..r+tp-1 form a group"},
    {"pp", RS_T_INT, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_training, pp), 0, 1, 1024, 0, 0, 0, "1", NULL, NULL, NULL,
     "pipeline stages: the layers split into pp stages of consecutive layers, activations sent point to point "
     "between them, micro-batches in a one-forward-one-backward (1F1B) schedule"},
    {"dp", RS_T_INT, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_training, dp), 0, 1, 1048576, 0, 0, 0, NULL,
     "the ranks left: NPUs / (tp x pp)", NULL, NULL,
     "data-parallel replicas: each stage's gradient shard allreduced across them after the last backward"},
    {"ep", RS_T_INT, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_training, ep), 0, 1, 1048576, 0, 0, 0, "1", NULL, NULL,
     NULL, "expert parallelism: every layer's MLP block is a mixture of experts spread over ep consecutive "
     "replicas, an all-to-all of the activations before and after it (forward and backward) on those "
     "replicas, its gradients allreduced over the dp / ep replicas holding the same experts; divides dp"},
    {"ep_skew", RS_T_UNIT, RS_UNIT_COUNT, RS_S_DBL, offsetof(rs_training, ep_skew), 0, 0, 1, 0, 0, 0, "0", NULL,
     NULL, NULL, "with ep: uneven token routing, the all-to-alls as alltoallv over workload.alltoallv_skew's "
     "matrix (each pair's block (1 + skew (w - 4) / 4) x the mean, w = 0 .. 8 a fixed mix per pair); 0: "
     "equal blocks"},
};
static const rs_map rs_scenario_map_parallel = {
    "workload.training.parallel", "Parallel dimensions of the training step: rank = (replica x pp + stage) x tp + "
    "tensor-parallel index (tensor parallelism innermost: inside a server when tp divides its NPUs).",
    rs_keys_parallel, RS_COUNT(rs_keys_parallel), 1, 0, 0, NULL, NULL};

static const rs_key rs_keys_training[] = {
    {"model", RS_T_STR, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_training, model), 0, 0, 0, 0, 0, 0, NULL, "none",
     NULL, NULL, "a model table file (scenarios/models/), relative to the scenario: makes the workload a "
     "training step instead of a size sweep (data parallel, or as parallel says)"},
    {"micro_batch", RS_T_INT, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_training, micro_batch), 0, 1, 1000000, 0, 0, 0,
     "32", NULL, NULL, NULL, "samples per NPU per iteration: compute times are the table's per-sample times "
     "times this"},
    {"fusion", RS_T_STR, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_training, fusion), 0, 0, 0, 0, 0, 0, "default", NULL,
     NULL, NULL, "how gradients are fused into allreduce buckets: default (sizes: 96.54, 3.46), sizes: P1, P2, "
     "..., indices: I1, I2, ..., threshold: SIZE, single, none (see Training)"},
    {"parallel", RS_T_MAP, RS_UNIT_COUNT, RS_S_NONE, 0, 0, 0, 0, 0, 0, 0, NULL, "data parallel on every rank",
     NULL, &rs_scenario_map_parallel, "tensor-, pipeline- and data-parallel sizes (see Training); needs a "
     "transformer table (hidden, sequence)"},
    {"micro_batches", RS_T_INT, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_training, micro_batches), 0, 1, 100000, 0, 0,
     0, NULL, "pp", NULL, NULL, "with parallel: micro-batches of micro_batch samples each that one iteration "
     "passes through the pipeline"},
};
const rs_map rs_scenario_map_training = {
    "workload.training", "A training step: compute as device busy time; data parallel, each fused gradient "
    "bucket allreduced as soon as back-propagation has produced it, or with parallel tensor-, pipeline- and "
    "data-parallel groups' traffic at once.",
    rs_keys_training, RS_COUNT(rs_keys_training), 0, 0, 0, NULL, rs_scenario_check_training};

static const rs_key rs_keys_workload[] = {
    {"collectives", RS_T_COLLS, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_workload, colls),
     offsetof(rs_workload, colls_count), 0, RS_COLL_COUNT, 0, 0, 0, "allreduce", NULL, &rs_scenario_colls, NULL,
     "one collective or a list, each run over the whole sweep; `all` = every one; sendrecv is nccl-tests' (every "
     "rank sends to rank + 1 and receives from rank - 1 at once, out of place only)"},
    {"algorithm", RS_T_ENUM, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_workload, algo), 0, 0, 0, 0, 0, 0, "auto",
     NULL, &rs_scenario_algos, NULL, "auto lets the engine choose; a forced one must implement every collective"},
    {"dtype", RS_T_ENUM, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_workload, dtype), 0, 0, 0, 0, 0, 0, "float",
     NULL, &rs_scenario_dtypes, NULL, "element type, nccl-tests names (aliases: fp16, bf16, fp32, fp64, ...)"},
    {"op", RS_T_ENUM, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_workload, op), 0, 0, 0, 0, 0, 0, "sum", NULL,
     &rs_scenario_ops, NULL, "reduction operator"},
    {"root", RS_T_INT, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_workload, root), 0, 0, RS_MAX_RANK, 0, 0, 0, "0",
     NULL, NULL, NULL, "root of broadcast and reduce; below ranks"},
    {"alltoallv_skew", RS_T_UNIT, RS_UNIT_COUNT, RS_S_DBL, offsetof(rs_workload, a2av_skew), 0, 0, 1, 0, 0, 0,
     "1", NULL, NULL, NULL,
     "alltoallv's imbalance: each pair's block is (1 + skew (w - 4) / 4) x the mean, w = 0 .. 8 a fixed mix "
     "per pair (the matrix symmetric, every rank's row a different mix); 0: alltoall's equal blocks, 1: "
     "blocks from 0 to twice the mean (the expert-parallel what-if of uneven token routing)"},
    {"sizes", RS_T_MAP, RS_UNIT_COUNT, RS_S_NONE, 0, 0, 0, 0, 0, 0, 0, NULL, "each key's default", NULL,
     &rs_scenario_map_sizes, "the size sweep"},
    {"iterations", RS_T_INT, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_workload, iters), 0, 1, 1000000, 0, 0, 0,
     "1", NULL, NULL, NULL, "timed iterations per size; simulated time is deterministic, so 1 measures it"},
    {"warmup", RS_T_INT, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_workload, warmup), 0, 0, 1000000, 0, 0, 0, "0",
     NULL, NULL, NULL, "untimed iterations before them"},
    {"channels", RS_T_INT, RS_UNIT_COUNT, RS_S_U32, offsetof(rs_workload, channels), 0, 1, 8, 0, 0, 0, NULL,
     "one per ring, at least 2", NULL, NULL,
     "parallel queues of the ring algorithms (ringsim --channels); channel c runs on ring c mod rings"},
    {"slice", RS_T_UNIT, RS_UNIT_SIZE, RS_S_U64, offsetof(rs_workload, slice_bytes), 0, 4096, 1073741824.0, 0,
     0, 0, RS_DEFAULT_ENGINE_SLICE, NULL, NULL, NULL,
     "the engine's largest DMA task on the simulated machine: a step whose chunk is larger runs in rounds "
     "(host and zmq runs keep the engine's 512 KiB)"},
    {"in_flight", RS_T_INT, RS_UNIT_COUNT, RS_S_U32, offsetof(rs_workload, in_flight), 0, 1, NCL_MAX_IN_FLIGHT, 0,
     0, 0, NULL, "the device's queue_depth, at most 4", NULL, NULL,
     "data tasks an engine queue keeps in flight: with more than one a ring step's rounds run back to back, "
     "each round's latency hidden behind the transfer before it; 1 runs round by round, each round paying "
     "the step's latencies again"},
    {"latency_path", RS_T_UNIT, RS_UNIT_SIZE, RS_S_U64, offsetof(rs_workload, latency_path), 0, 0,
     1099511627776.0, 0, 0, 0, "0 B", NULL, NULL, NULL,
     "the engine's protocol switch (NCCL's LL below a size, Simple above): a call whose buffer (a rank's share "
     "for allgather and reduce_scatter, as NCCL counts) is at most this big issues its tasks on the latency path, priced with device.latency_path_overhead per task and "
     "device.latency_path_efficiency of the wire; 0 B: every call on the bandwidth path"},
    {"latency_paths", RS_T_MAP, RS_UNIT_COUNT, RS_S_NONE, 0, 0, 0, 0, 0, 0, 0, NULL, "latency_path for each", NULL,
     &rs_scenario_map_latency_paths, "the protocol switch per collective, where NCCL's tuning switches at "
     "different sizes"},
    {"landing_zone", RS_T_UNIT, RS_UNIT_SIZE, RS_S_DBL, offsetof(rs_workload, landing_zone), 0, 0, 1073741824.0,
     RS_F_UNSET, 0, 0, NULL, "the engine's: (p-1) x (link latency + task overhead) x link bandwidth, in all at most "
     "a quarter of device.scratch", NULL, NULL,
     "bytes of each landing zone, two per channel at the top of device.scratch: the first steps of a ring "
     "allgather, allreduce or reduce-scatter (the last two where the DMA reduces two sources on the way out) "
     "or of a chain broadcast land there before the receiver has entered the collective, so they wait for no "
     "READY (on a one-way ring that notify travels the whole ring back); 0 B: none. Set up where the DMA "
     "engines hold twice the channels"},
    {"rings", RS_T_ENUM, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_workload, rings), 0, 0, 0, 0, 0, 0, "auto",
     NULL, &rs_scenario_rings, NULL,
     "auto: rings over direct links found from the topology, no link used twice (the 8-NPU server "
     "has 4); rank: the one ring 0, 1, ..., p-1"},
    {"deterministic", RS_T_BOOL, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_workload, deterministic), 0, 0, 1, 0, 0, 0,
     "false", NULL, &rs_scenario_bools, NULL,
     "true: allreduce sums every element in rank order whatever the algorithm and size (the det "
     "algorithm: a full-mesh reduce-scatter + allgather in rank order)"},
    {"wide_accumulation", RS_T_BOOL, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_workload, wide_accumulation), 0, 0, 1,
     0, 0, 0, "false", NULL, &rs_scenario_bools, NULL,
     "true (with deterministic, dtype half or bfloat16): sums accumulate in fp32 in rank order and are "
     "rounded once, not after every rank"},
    {"inter_algorithm", RS_T_ENUM, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_workload, inter_algo), 0, 0, 0, 0, 0, 0,
     "auto", NULL, &rs_scenario_inters, NULL,
     "the hier algorithm's inter-server level: auto = ring when the server count is not a power of "
     "two, hd otherwise"},
    {"schedule", RS_T_STR, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_workload, schedule), 0, 0, 0, 0, 0, 0, NULL,
     "none", NULL, NULL,
     "a user-defined schedule file (see User-defined schedules), relative to the scenario: the algorithm of "
     "its one collective, which must be the only one listed; proven by the checker before anything runs"},
    {"training", RS_T_MAP, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_workload, training), 0, 0, 0, 0, 0, 0, NULL,
     "none", NULL, &rs_scenario_map_training, "a training step instead of the sweep (see Training)"},
};
const rs_map rs_scenario_map_workload = {
    "workload", "What to run, as nccl-tests would: every collective over the size sweep.",
    rs_keys_workload, RS_COUNT(rs_keys_workload), 0, 0, 0, NULL, rs_scenario_check_workload};

static const rs_key rs_keys_fault[] = {
    {"at", RS_T_UNIT, RS_UNIT_TIME, RS_S_DBL, offsetof(rs_fault, at), 0, 0, 1e6, RS_F_REQUIRED, 0, 0, NULL,
     NULL, NULL, NULL, "simulated time of the change, from the start of the run"},
    {"link", RS_T_PAIR, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_fault, ends.a), 0, 0, RS_MAX_NODE,
     RS_F_REQUIRED, 0, 0, NULL, NULL, NULL, NULL,
     "[from, to]: a link the topology has; nodes as in overrides (switches after the ranks)"},
    {"both", RS_T_BOOL, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_fault, ends.both), 0, 0, 1, 0, 0, 0, "true",
     NULL, &rs_scenario_bools, NULL, "true: both directions; false: from -> to only"},
    {"action", RS_T_ENUM, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_fault, kind), 0, 0, 0, RS_F_REQUIRED, 0, 0,
     NULL, NULL, &rs_scenario_actions, NULL,
     "down: the link stops; degrade: new bandwidth and/or latency; corrupt: bit errors (see every, crc)"},
    {"bandwidth", RS_T_UNIT, RS_UNIT_BANDWIDTH, RS_S_DBL, offsetof(rs_fault, bandwidth), 0, 0, RS_BW_MAX,
     RS_F_MIN_EXCL | RS_F_UNSET, 0, 0, NULL, "unchanged", NULL, NULL, "degrade: new bandwidth"},
    {"latency", RS_T_UNIT, RS_UNIT_TIME, RS_S_DBL, offsetof(rs_fault, latency), 0, 0, 1.0, RS_F_UNSET, 0, 0,
     NULL, "unchanged", NULL, NULL, "degrade: new latency"},
    /* no default: 0 stays "not given", which the check refuses for corrupt and the dump leaves out */
    {"every", RS_T_INT, RS_UNIT_COUNT, RS_S_U32, offsetof(rs_fault, every), 0, 1, 1e9, 0, 0, 0, NULL,
     "**required** for corrupt", NULL, NULL,
     "corrupt: every N-th message crossing the link from `at` on is damaged, each direction counted on its own "
     "(packet fidelity: every N-th packet)"},
    {"crc", RS_T_BOOL, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_fault, crc), 0, 0, 1, 0, 0, 0, "true", NULL,
     &rs_scenario_bools, NULL,
     "corrupt: true: the receiving link layer detects the damage and the sender replays the message (results "
     "exact, the link busy again); false: the damage lands unnoticed, one byte flipped (needs payload: real)"},
};
const rs_map rs_scenario_map_fault = {
    "faults[]", "Changes to links at a simulated time. A collective that needs a link that is down "
    "ends with the engine's timeout error; a corrupting link slows what crosses it (crc) or damages its "
    "data (crc: false).",
    rs_keys_fault, RS_COUNT(rs_keys_fault), 1, sizeof(rs_fault), offsetof(rs_fault, ends.line), NULL,
    rs_scenario_check_fault};

static const rs_key rs_keys_top[] = {
    {"name", RS_T_STR, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_scenario, name), 0, 0, 0, 0, 0, 0, NULL,
     "the file name without .yaml", NULL, NULL, "short name shown in reports"},
    {"description", RS_T_STR, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_scenario, description), 0, 0, 0, 0, 0,
     0, "", NULL, NULL, NULL, "what the scenario shows"},
    {"topology", RS_T_MAP, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_scenario, topo), 0, 0, 0, RS_F_REQUIRED, 0,
     0, NULL, NULL, NULL, &rs_map_topology, "what is connected to what, and the links' parameters"},
    {"device", RS_T_MAP, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_scenario, device), 0, 0, 0, 0, 0, 0, NULL,
     "each key's default", NULL, &rs_map_device, "parameters of every NPU"},
    {"workload", RS_T_MAP, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_scenario, workload), 0, 0, 0, 0, 0, 0,
     NULL, "each key's default", NULL, &rs_scenario_map_workload, "what runs: collectives, sizes, dtype, ..."},
    {"payload", RS_T_ENUM, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_scenario, payload_real), 0, 0, 0, 0, 0, 0,
     "real", NULL, &rs_scenario_payloads, NULL,
     "real: bytes are moved, reduced and checked (#wrong); none: timing only"},
    {"fidelity", RS_T_ENUM, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_scenario, fidelity), 0, 0, 0, 0, 0, 0,
     RS_DEFAULT_NETWORK_FIDELITY, NULL, &rs_scenario_fidelities, NULL,
     "message: a transfer is one event, bandwidth shared fairly, capped by the credits; packet: every "
     "packet and credit (the two agree within 2 %, tests/bench/fidelity_gap.sh)"},
    {"seed", RS_T_U64, RS_UNIT_COUNT, RS_S_U64, offsetof(rs_scenario, seed), 0, 0, 0, 0, 0, 0, "1", NULL,
     NULL, NULL, "seed of the input data; same scenario + seed = same results and times"},
    {"faults", RS_T_SEQ, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_scenario, faults),
     offsetof(rs_scenario, faults_count), 0, 0, 0, 0, 0, NULL, "none", NULL, &rs_scenario_map_fault,
     "link changes at simulated times"},
};
static const rs_map rs_map_top = {
    "", "The top level of a scenario file. Only `topology` (with its `kind`) is required.",
    rs_keys_top, RS_COUNT(rs_keys_top), 0, 0, 0, NULL, rs_scenario_check_top};

/* The maps in reference order. */
const rs_map *const rs_scenario_maps[] = {
    &rs_map_top,      &rs_map_topology, &rs_map_link,     &rs_map_nic,    &rs_map_switch,
    &rs_map_link_item, &rs_map_override, &rs_map_device,  &rs_scenario_map_workload, &rs_scenario_map_sizes,
    &rs_scenario_map_latency_paths,
    &rs_scenario_map_training, &rs_scenario_map_parallel, &rs_scenario_map_fault, &rs_scenario_map_model_table, &rs_scenario_map_tensor, NULL,
};

/* Which keys apply is decided by topology.kind (`dims` only for torus2d, ...). */
const rs_schema rs_scenario_schema = {&rs_map_top, "kind", &rs_scenario_kinds,
                                      offsetof(rs_scenario, topo) + offsetof(rs_topology_spec, kind)};

