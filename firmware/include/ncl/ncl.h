/* ncl.h — public API of the ringsim collective engine (NCCL/HCCL-shaped, C11, freestanding-friendly). */
#ifndef NCL_NCL_H
#define NCL_NCL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NCL_VERSION_MAJOR 0
#define NCL_VERSION_MINOR 1

/** Result of every API call. Messages for each value come from ncl_strerror() (ncl_names.h). */
typedef enum ncl_result {
    NCL_SUCCESS = 0,
    NCL_IN_PROGRESS,          /**< non-blocking collective still running: call ncl_test()/ncl_wait() */
    NCL_ERR_INVALID_ARGUMENT, /**< a NULL buffer, bad count, dtype, op, root or alignment */
    NCL_ERR_INVALID_USAGE,    /**< API used in the wrong state (e.g. a second collective while one runs) */
    NCL_ERR_UNSUPPORTED,      /**< valid request this algorithm/backend cannot do */
    NCL_ERR_TIMEOUT,          /**< a notify wait expired: a peer never recorded */
    NCL_ERR_REMOTE,           /**< a peer reported an error */
    NCL_ERR_LINK,             /**< a link or transport failed */
    NCL_ERR_OUT_OF_MEMORY,    /**< the injected allocator or the backend's scratch is exhausted */
    NCL_ERR_SCHEDULE,         /**< the schedule checker rejected a schedule */
    NCL_ERR_BACKEND,          /**< a HAL backend operation failed */
    NCL_ERR_INTERNAL,         /**< an engine bug: please report it with the message */
    NCL_RESULT_COUNT
} ncl_result;

/** Element types. fp16/bf16 arithmetic: each binary op is done in fp32 and rounded back
 *  (round-to-nearest-even), i.e. accumulation is in the storage precision, step by step
 *  (unless ncl_config.wide_accumulation: fp32 throughout, rounded once). */
typedef enum ncl_dtype {
    NCL_INT8 = 0,
    NCL_UINT8,
    NCL_INT32,
    NCL_UINT32,
    NCL_INT64,
    NCL_FLOAT16,
    NCL_BFLOAT16,
    NCL_FLOAT32,
    NCL_FLOAT64,
    NCL_DTYPE_COUNT
} ncl_dtype;

/** Reduction operators. avg = sum, then one division by the rank count (integers truncate). */
typedef enum ncl_op { NCL_SUM = 0, NCL_PROD, NCL_MAX, NCL_MIN, NCL_AVG, NCL_OP_COUNT } ncl_op;

typedef enum ncl_coll {
    NCL_COLL_ALLREDUCE = 0,
    NCL_COLL_BROADCAST,
    NCL_COLL_REDUCE,
    NCL_COLL_REDUCE_SCATTER,
    NCL_COLL_ALLGATHER,
    NCL_COLL_ALLTOALL, /**< every rank sends block j of its input to rank j, which keeps it as block i */
    NCL_COLL_COUNT
} ncl_coll;

/** Algorithms. Not every algorithm implements every collective (ncl_algo_supported()). */
typedef enum ncl_algo {
    NCL_ALGO_AUTO = 0, /**< let the engine choose from its cost model */
    NCL_ALGO_RING,     /**< ring: allreduce, reduce-scatter, allgather, reduce (pipelined chain to root) */
    NCL_ALGO_CHAIN,    /**< pipelined chain broadcast */
    NCL_ALGO_TREE,     /**< binomial tree: broadcast, reduce */
    NCL_ALGO_HD,       /**< halving-doubling (Rabenseifner): allreduce, reduce-scatter, allgather;
                            non-powers of two fold the extra ranks first */
    NCL_ALGO_MESH,     /**< full mesh, every rank writes to all peers at once: allreduce,
                            reduce-scatter, allgather, alltoall */
    NCL_ALGO_SAG,      /**< scatter + allgather (van de Geijn): broadcast */
    NCL_ALGO_DBTREE,   /**< double binary tree: allreduce */
    NCL_ALGO_DET,      /**< deterministic allreduce: every element reduced in rank order 0..p-1 */
    NCL_ALGO_HIER,     /**< two-level: allreduce = intra-server reduce-scatter, inter-server allreduce
                            per shard, intra-server allgather; broadcast = intra scatter, inter
                            broadcast, intra allgather (needs ncl_config.local_size) */
    NCL_ALGO_USER,     /**< a user-defined schedule given as data (ncl_config.schedule) */
    NCL_ALGO_PAIRWISE, /**< pairwise exchange, one peer per step (step k: to rank+k, from rank-k): alltoall */
    NCL_ALGO_COUNT
} ncl_algo;

/** Tree reduce's fine rounds (its cost line 1, which the engine runs where the table prices it
 *  cheaper): rounds of NCL_TREE_ROUND_ALPHAS alphas of the link's bytes each (the line's alpha
 *  and beta), so that a round's transfer outlasts what a round costs the queues, at most
 *  NCL_TREE_ROUNDS_MAX rounds. The cost model prices them with the same numbers. */
#define NCL_TREE_ROUND_ALPHAS 2u
#define NCL_TREE_ROUNDS_MAX 256u

/** One entry of the cost table `algorithm: auto` chooses with: the predicted time of a collective
 *  of n bytes (nccl-tests' size) with one algorithm on this communicator's topology. Linear
 *  (hops 0): fixed + alpha + n beta. A pipeline over `hops` links (chain): fixed + the best
 *  segment count k of (hops - 1 + k)(alpha + n beta / k) (`posted`: see there). Out of place either form adds
 *  oop + n oop_beta. Built by whoever knows the topology (ringsim's model, a
 *  board's agent from its links) and copied at creation. */
typedef struct ncl_cost {
    uint8_t coll, algo;     /**< ncl_coll, ncl_algo */
    uint16_t hops;          /**< 0: linear */
    uint64_t alpha_ns;
    uint64_t beta_fs;       /**< femtoseconds per byte */
    int64_t fixed_ns;       /**< added to either form (a pipeline's start-up handshake), or taken off
                                 when negative (never below 0): a chain whose hops differ is priced
                                 with its slowest hop's alpha, and gives back what the others lack */
    uint64_t extra_beta_fs; /**< pipelines: per byte of n outside the pipeline (phases around it) */
    uint32_t chain_div;     /**< pipelines: one chain carries 1/chain_div of n (0: 1/channels); sets
                                 the segment count's per-chain bandwidth */
    uint8_t floor;          /**< a lower bound, not a line of its own: 1 on every line of the
                                 algorithm, k + 2 on its k-th line only (table order). An algorithm's
                                 cost is the least of its lines, each raised to its highest floor */
    uint8_t variant;        /**< which of the algorithm's schedules this line prices, run where it is
                                 the cheapest (NCL_COST_VARIANT_*; 0: the algorithm's default) */
    int64_t oop_ns;         /**< out of place only: added (a copy of the input the schedule waits for),
                                 or taken off when negative (work in place needs and out of place not) */
    int64_t oop_beta_fs;    /**< out of place only: added per byte of n (negative: taken off) */
    uint8_t posted;         /**< pipelines whose writes are posted, a segment's issue overlapping the
                                 transfer before it: k segments cost hops (alpha + n beta / k) +
                                 (k - 1) max(alpha, n beta / k) (ring reduce). 0: not posted; else k
                                 is this % of the knee n beta / alpha (ncl_pipeline_segments_posted) */
    uint8_t path;           /**< NCL_COST_PATH_*: which calls the line prices. Where the table has
                                 latency-path lines for a collective, its calls on the latency path
                                 (ncl_config.latency_path_bytes) are priced by those alone, the
                                 others by the bandwidth path's; without, every call by the latter */
} ncl_cost;

/** ncl_cost.path: the calls a line prices. */
enum {
    NCL_COST_PATH_BANDWIDTH = 0, /**< calls on the bandwidth path (every call where no other lines are given) */
    NCL_COST_PATH_LATENCY = 1    /**< calls on the latency path: the same schedules, other task costs */
};

/** ncl_cost.variant: the schedules an algorithm runs by the line the table prices cheapest. */
enum {
    NCL_COST_VARIANT_DEFAULT = 0,
    NCL_COST_VARIANT_DET_GATHER = 1, /**< det: every rank's whole input to every peer (else split) */
    NCL_COST_VARIANT_TREE_FINE = 1   /**< tree reduce: fine rounds of a few alphas' bytes */
};

/** Allocator injected at communicator creation (Lua-style). The engine never calls malloc. */
typedef void *(*ncl_alloc_fn)(void *ud, size_t bytes);
typedef void (*ncl_free_fn)(void *ud, void *ptr);

/** Diagnostic levels: a message is delivered when its level <= the configured one. */
enum { NCL_LOG_OFF = -1, NCL_LOG_ERROR = 0, NCL_LOG_WARN, NCL_LOG_INFO, NCL_LOG_DEBUG };
/** Receives one diagnostic line (no newline) about `rank` (-1: not about one rank). The host
 *  backend calls it from every rank's thread, possibly at once. */
typedef void (*ncl_log_fn)(void *ud, int rank, int level, const char *msg);

#define NCL_CONFIG_VERSION 2u
#define NCL_MAX_QUEUES 8u
#define NCL_MAX_IN_FLIGHT 4u /* data tasks one queue keeps in flight at most */
#define NCL_MAX_COSTS 256u /* entries of a cost table (the communicator holds as many as it is given, or cost_room) */

/** Communicator options. Start from NCL_CONFIG_INIT and change what you need. */
typedef struct ncl_config {
    uint32_t size;            /**< sizeof(ncl_config), set by NCL_CONFIG_INIT */
    uint32_t version;         /**< NCL_CONFIG_VERSION */
    uint64_t timeout_ns;      /**< limit of every notify wait (default 30 s) */
    uint32_t channels;        /**< parallel queues used by ring algorithms, 1..NCL_MAX_QUEUES */
    uint64_t slice_bytes;     /**< largest single DMA task; large buffers are cut into rounds
                                   (default 512 KiB: a round's data stays in a core's L2 on the
                                   host backend, measured fastest on 2-rank allreduce) */
    uint8_t algorithm[NCL_COLL_COUNT]; /**< NCL_ALGO_AUTO or a forced algorithm per collective */
    int check_schedules;      /**< -1: in debug builds only; 0: never; 1: before every launch */
    uint32_t link_alpha_ns;   /**< cost model: per-message latency of a link */
    uint32_t link_gbps;       /**< cost model: link bandwidth, decimal GB/s (x1000 = MB/s) */
    ncl_alloc_fn alloc;       /**< required: used at creation (and by the checker) only */
    ncl_free_fn free;
    void *alloc_ud;
    /** Optional logical rings for the ring algorithms: ring_count orders of all nranks ranks, ring
     *  c at rings[c * nranks]; channel c runs on ring c % ring_count. NULL: every channel on
     *  0, 1, ..., nranks-1. Copied at creation; every rank must pass the same rings. */
    const int32_t *rings;
    uint32_t ring_count;
    /** Optional relative bandwidth of each ring (ring_count entries, all > 0, e.g. its slowest
     *  link in MB/s; only with rings): the ring algorithms split the buffer over channels in
     *  proportion, so a slow ring carries a smaller share. NULL: equal shares. Copied at creation;
     *  every rank must pass the same weights. */
    const uint32_t *ring_weights;
    /** Optional cost table for `auto` (see ncl_cost). Without an entry an algorithm is costed by
     *  the built-in REFERENCE.md formulas with link_alpha_ns / link_gbps if it is ring, chain or
     *  tree, and not considered otherwise (its speed depends on the topology). */
    const ncl_cost *costs;
    uint32_t cost_count;
    /** 1: floating-point results independent of algorithm, channels, slices and message size:
     *  allreduce reduces every element in one canonical order (rank 0, 1, ..., p-1) with the det
     *  algorithm, whatever `algorithm` says. Its cost: a full-mesh reduce-scatter + allgather
     *  (each rank receives 2 (p-1)/p n bytes, like a ring, but all-to-all) with the senders
     *  reduced in rank order; buffers of one round are gathered whole ((p-1) n). */
    int deterministic;
    /** Two-level (hier) algorithms: ranks per server, servers being consecutive rank blocks
     *  (rank = server * local_size + local index); 0 or nranks: one level, hier unavailable.
     *  inter_algo: the inter-server level's algorithm (NCL_ALGO_AUTO: ring when the server count
     *  is not a power of two, hd otherwise). local_rings: optional orders of the local indices
     *  0..local_size-1 for the intra-server rings, local_ring_count of them (copied at creation);
     *  NULL: 0, 1, ..., local_size-1. */
    uint32_t local_size;
    uint8_t inter_algo;
    const int32_t *local_rings;
    uint32_t local_ring_count;
    /** NCL_ALGO_USER: the schedule as data (ncl/ncl_user.h); not copied, must outlive the
     *  communicator. The checker verifies it before it runs. */
    const struct ncl_user_schedule *schedule;
    /** 1 (only with `deterministic`; otherwise ncl_comm_create fails with
     *  NCL_ERR_INVALID_ARGUMENT): fp16/bf16 allreduce with sum, prod or avg accumulates every
     *  element in fp32 in the canonical rank order ((x_0 + x_1) + x_2 ... in fp32) and rounds
     *  once to nearest even at the end (avg: divides in fp32, then rounds once), instead of
     *  rounding after every step. Ignored for other dtypes (fp32/fp64 already accumulate in
     *  their own precision, integers are exact) and for max/min (exact in any precision). Needs
     *  a backend that runs the wide task kinds (NCL_HAL_FEAT_WIDE, else NCL_ERR_UNSUPPORTED at
     *  creation) and 4 bytes of scratch per element of a round besides the det slots. */
    int wide_accumulation;
    /** Optional: the device's memory bandwidth, decimal GB/s (0: unknown). With it, ring
     *  reduce-scatter and out-of-place ring allreduce cut their first step into pieces so that
     *  only a small first copy of the receiver's own contribution delays the ring (see
     *  ncl_lead_piece); without it a whole chunk's copy does. */
    uint32_t mem_gbps;
    /** Data tasks a queue keeps in flight, 1..NCL_MAX_IN_FLIGHT (0: the backend's queue_depth,
     *  at most NCL_MAX_IN_FLIGHT). A queue issues its next data task while earlier ones still move
     *  when their regions do not overlap, so a round's latency hides behind the transfer before
     *  it; a NOTIFY_RECORD still waits for every data task before it. With more than one, the
     *  ring algorithms run a step's rounds back to back (one DATA record per step) instead of
     *  round by round. Every rank must pass the same value. */
    uint32_t in_flight;
    /** Landing zones: bytes of each persistent zone in a rank's scratch where its ring
     *  predecessor's first writes of a collective land before this rank has even entered it, so a
     *  ring's first steps need no READY round trip (which on a one-way ring travels all p-1 hops
     *  back). Two zones per channel, used by alternate collectives; a zone is credited back to its
     *  writer (a notify) once read, and written again only with that credit. They sit at the top
     *  of scratch and are not available to anything else. 0: sized from the cost inputs, about
     *  what a link carries during a notify's trip around the ring (zone_hops, by default p-1,
     *  x link_alpha_ns x link_gbps),
     *  at most scratch / 4 in all; NCL_ZONES_OFF: none (every first write waits for READY). An
     *  explicit size must leave half the scratch (else ncl_comm_create: NCL_ERR_INVALID_ARGUMENT).
     *  Only on backends that keep scratch addressable between collectives (NCL_HAL_FEAT_ZONES) and
     *  run twice the channels in queues and DMA engines (a helper queue per channel copies out of
     *  the zone). Used by ring allgather and chain broadcast. Every rank must pass the same value. */
    uint64_t landing_zone_bytes;
    /** Where this communicator's diagnostics go, the engine's and (on the host backend, which
     *  builds communicators from this config) the backend's: messages up to log_level (default
     *  NCL_LOG_WARN; NCL_LOG_OFF: none) go to log(log_ud, ...) or, with log NULL, to the
     *  backend's default sink (host and zmq: one line on stderr each; boards: their access log;
     *  the SystemC model: none, errors reach ncl_comm_last_error). The environment variable
     *  NCL_HOST_LOG (debug, info, warn, error, off), when set, overrides log_level on the host
     *  backend: for debugging a program without rebuilding it. */
    ncl_log_fn log;
    void *log_ud;
    int log_level;
    /** The latency path (NCCL's LL protocols), per collective as NCCL's tuning chooses protocols:
     *  a call whose count x element size (a rank's share for allgather and reduce-scatter, as NCCL's
     *  tuning counts) is at most latency_path_bytes[its collective] marks its data tasks
     *  NCL_TASK_LATENCY_PATH, which a backend may carry differently (the SystemC model
     *  prices them with the device's latency-path overhead, and its writes with its efficiency:
     *  data and flags in one stream, less per-task cost, fewer useful bytes per wire byte). The schedule is the same and
     *  correct either way. 0 (the default): every call takes the bandwidth path. Every rank must
     *  pass the same value. */
    uint64_t latency_path_bytes[NCL_COLL_COUNT];
    /** Optional, only with `rings`: their inverse (the position of rank r on ring c at
     *  ring_positions[c * nranks + r]). Given, the communicator keeps pointers to rings and
     *  ring_positions instead of copying them, so both must outlive it unchanged: ranks that
     *  share one table (a simulator of thousands of devices), or a board's table in ROM. */
    const int32_t *ring_positions;
    /** Entries of cost table the communicator keeps room for, for ncl_comm_set_costs (a table
     *  priced again may have more lines); 0 or fewer than cost_count: cost_count. */
    uint32_t cost_room;
    /** Links a zone's credit (and a READY) crosses back to its writer at most, which sizes the
     *  landing zones when landing_zone_bytes is 0; 0: nranks - 1, a one-way ring's. A
     *  sub-communicator made without a config of its own takes it from its parent's rings (a
     *  pair's send on a one-way ring of 8: 7, not 1). */
    uint32_t zone_hops;
} ncl_config;

/** ncl_config.landing_zone_bytes: no landing zones. */
#define NCL_ZONES_OFF UINT64_MAX

#define NCL_CONFIG_INIT                                                                       \
    {                                                                                         \
        sizeof(ncl_config), NCL_CONFIG_VERSION, 30000000000ull, 2u, (512ull << 10), {0, 0, 0, 0, 0}, \
            -1, 2000u, 20u, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, NULL,  \
            NCL_LOG_WARN, {0, 0, 0, 0, 0}, NULL, 0u, 0u                                       \
    }

struct ncl_hal;
typedef struct ncl_comm ncl_comm;

/** Creates rank `rank` of an `nranks` communicator that reaches its peers through `hal`. */
ncl_result ncl_comm_create(ncl_comm **comm, int nranks, int rank, const struct ncl_hal *hal,
                           const ncl_config *config);
/** Releases the communicator (through the allocator it was created with). NULL is fine. */
void ncl_comm_destroy(ncl_comm *comm);
ncl_result ncl_comm_rank(const ncl_comm *comm, int *rank);
ncl_result ncl_comm_size(const ncl_comm *comm, int *nranks);
/** ncl_comm_split's color of a rank that joins no sub-communicator (its *newcomm is NULL). */
#define NCL_SPLIT_NOCOLOR (-1)
/** Splits comm into sub-communicators, as MPI_Comm_split and ncclCommSplit do: every rank of comm
 *  calls it (a collective on comm: between two of comm's collectives, none running), the ranks that
 *  pass the same color >= 0 form one, ranked by key and then by their rank in comm. The
 *  sub-communicators run at the same time as each other and as comm, on the same devices and
 *  links, each with its own sequence numbers, timeouts and hang reports (its errors start with
 *  "split #S color C", S counting comm's splits from 1). config: the new communicator's options;
 *  NULL: comm's, without what names comm's ranks or topology (rings, ring weights, cost table,
 *  local_size and local rings, a user schedule: a forced hier or user algorithm becomes auto).
 *  Needs a backend that makes sub-communicators (the HAL's split; else NCL_ERR_UNSUPPORTED).
 *  Destroy sub-communicators before comm. */
ncl_result ncl_comm_split(ncl_comm *comm, int color, int key, const ncl_config *config, ncl_comm **newcomm);
/** Makes the sub-communicator of the ranks `members` of comm (the new ranks in that order) without
 *  a message, as MPI_Comm_create_group does: only the members call it, each with the same list
 *  and tag (a member passing another list or tag makes another communicator, which its peers
 *  never meet: their calls time out naming it, "group TAG"); any time, a collective on comm may be
 *  running. What runs at once and config as for ncl_comm_split. For groups every rank knows in
 *  advance (a training job's tensor-, pipeline- and data-parallel groups): no exchange on comm. */
ncl_result ncl_comm_create_group(ncl_comm *comm, const int32_t *members, int n, uint32_t tag,
                                 const ncl_config *config, ncl_comm **newcomm);

/** Forces an algorithm for one collective on this communicator (NCL_ALGO_AUTO to unforce). */
ncl_result ncl_comm_set_algorithm(ncl_comm *comm, ncl_coll coll, ncl_algo algo);
/** Replaces the ring weights (see ncl_config.ring_weights; NULL: equal shares) from the next
 *  collective on, e.g. after a link degraded. Every rank must set the same weights between the
 *  same two collectives. Invalid argument while a collective runs, without rings, or for a 0. */
ncl_result ncl_comm_set_ring_weights(ncl_comm *comm, const uint32_t *weights);
/** Replaces the cost table `auto` chooses with (see ncl_config.costs) from the next collective on,
 *  e.g. priced again after a link degraded. Every rank must set the same table between the same
 *  two collectives (else they may choose different algorithms). At most ncl_config.cost_room
 *  entries (else cost_count); invalid argument while a collective runs, for more entries or
 *  an entry whose coll or algo is out of range (the table is then unchanged). */
ncl_result ncl_comm_set_costs(ncl_comm *comm, const ncl_cost *costs, uint32_t count);
/** Human-readable detail of the last failed call on this communicator ("" if none). */
const char *ncl_comm_last_error(const ncl_comm *comm);

size_t ncl_dtype_size(ncl_dtype dtype);
/** 1 if `algo` implements `coll` (AUTO always does). */
int ncl_algo_supported(ncl_coll coll, ncl_algo algo);

/* Blocking collectives. count semantics as NCCL: reduce_scatter takes the per-rank recvcount,
 * allgather the per-rank sendcount. In place: recvbuf == sendbuf (allreduce, broadcast,
 * reduce), recvbuf == sendbuf + rank*recvcount (reduce_scatter),
 * sendbuf == recvbuf + rank*sendcount (allgather), recvbuf == sendbuf (alltoall). recvbuf may be
 * NULL on non-root ranks of reduce; sendbuf is only read on the root of broadcast. alltoall takes
 * the count per peer: block j (count elements at j*count) of rank i's sendbuf becomes block i of
 * rank j's recvbuf; both buffers hold nranks blocks. */
ncl_result ncl_allreduce(const void *sendbuf, void *recvbuf, size_t count, ncl_dtype dtype,
                         ncl_op op, ncl_comm *comm);
ncl_result ncl_broadcast(const void *sendbuf, void *recvbuf, size_t count, ncl_dtype dtype,
                         int root, ncl_comm *comm);
ncl_result ncl_reduce(const void *sendbuf, void *recvbuf, size_t count, ncl_dtype dtype,
                      ncl_op op, int root, ncl_comm *comm);
ncl_result ncl_reduce_scatter(const void *sendbuf, void *recvbuf, size_t recvcount,
                              ncl_dtype dtype, ncl_op op, ncl_comm *comm);
ncl_result ncl_allgather(const void *sendbuf, void *recvbuf, size_t sendcount, ncl_dtype dtype,
                         ncl_comm *comm);
ncl_result ncl_alltoall(const void *sendbuf, void *recvbuf, size_t count, ncl_dtype dtype, ncl_comm *comm);
/** alltoall with a count per pair, as HCCL's AlltoAllVC: counts[i * nranks + j] elements go from
 *  rank i to rank j, and every rank passes the same matrix (a rank whose matrix differs fails the
 *  call, naming it, where the backend compares launches). Rank r's sendbuf holds its blocks for
 *  ranks 0, 1, ... back to back (counts[r * nranks + j] elements each), its recvbuf receives the
 *  blocks from ranks 0, 1, ... back to back (counts[i * nranks + r] each). In place (recvbuf ==
 *  sendbuf) when the matrix is symmetric: the block for j and the one from j then share a place.
 *  The matrix must stay as it is until the call ends (ncl_wait for the _start form). */
ncl_result ncl_alltoallv(const void *sendbuf, void *recvbuf, const uint64_t *counts, ncl_dtype dtype,
                         ncl_comm *comm);

/* Point to point: ncl_send on rank a with peer b matches ncl_recv on rank b with peer a, in order
 * per (sender, receiver) pair; count and dtype must agree (else both fail naming the difference).
 * Each direction of a pair runs on a communicator of its own, made at the pair's first transfer
 * and owned by comm (destroyed with it): sends and receives between the same two ranks, and
 * transfers with different peers, may be in flight together and with comm's collectives. The
 * blocking forms return when the data has landed (send) or arrived (recv): two ranks that each
 * send to the other before receiving wait for each other until the timeout, as MPI's unbuffered
 * sends do; start both directions first (the _start forms) instead. Errors start with
 * "send A -> B" (ranks of comm). Needs a backend that makes sub-communicators (the HAL's split). */
ncl_result ncl_send(const void *sendbuf, size_t count, ncl_dtype dtype, int peer, ncl_comm *comm);
ncl_result ncl_recv(void *recvbuf, size_t count, ncl_dtype dtype, int peer, ncl_comm *comm);
/** Non-blocking: *op receives the communicator the transfer runs on, on which ncl_test/ncl_wait
 *  finish it as any collective's (its failure explained by ncl_comm_last_error of *op and of
 *  comm). It stays comm's: never destroy it. One transfer per direction of a pair is in flight at
 *  a time. */
ncl_result ncl_send_start(const void *sendbuf, size_t count, ncl_dtype dtype, int peer, ncl_comm *comm,
                          ncl_comm **op);
ncl_result ncl_recv_start(void *recvbuf, size_t count, ncl_dtype dtype, int peer, ncl_comm *comm, ncl_comm **op);

/* Non-blocking form: *_start() launches and returns NCL_SUCCESS (running) or an error;
 * ncl_test() makes progress and says whether it finished; ncl_wait() blocks until it does.
 * One collective runs at a time on a communicator. */
ncl_result ncl_allreduce_start(const void *sendbuf, void *recvbuf, size_t count, ncl_dtype dtype,
                               ncl_op op, ncl_comm *comm);
ncl_result ncl_broadcast_start(const void *sendbuf, void *recvbuf, size_t count, ncl_dtype dtype,
                               int root, ncl_comm *comm);
ncl_result ncl_reduce_start(const void *sendbuf, void *recvbuf, size_t count, ncl_dtype dtype,
                            ncl_op op, int root, ncl_comm *comm);
ncl_result ncl_reduce_scatter_start(const void *sendbuf, void *recvbuf, size_t recvcount,
                                    ncl_dtype dtype, ncl_op op, ncl_comm *comm);
ncl_result ncl_allgather_start(const void *sendbuf, void *recvbuf, size_t sendcount,
                               ncl_dtype dtype, ncl_comm *comm);
ncl_result ncl_alltoall_start(const void *sendbuf, void *recvbuf, size_t count, ncl_dtype dtype,
                              ncl_comm *comm);
ncl_result ncl_alltoallv_start(const void *sendbuf, void *recvbuf, const uint64_t *counts, ncl_dtype dtype,
                               ncl_comm *comm);
/** *done = 1 when the running collective finished; returns its result (or NCL_SUCCESS while running). */
ncl_result ncl_test(ncl_comm *comm, int *done);
ncl_result ncl_wait(ncl_comm *comm);

#ifdef __cplusplus
}
#endif

/* ncl_strerror(), the names of the enums above (ncl_coll_name, ncl_algo_name, ...) and their
 * parsing. Included last: it needs the enums, and includes this header itself when included first. */
#include "ncl_names.h"
#endif
