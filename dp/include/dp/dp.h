/* dp.h — data-parallel training over the ncl engine: tensor registry, parameter broadcast,
 * dataset sharding, gradient fusion into buckets and the distributed optimizer step. */
#ifndef DP_DP_H
#define DP_DP_H

#include <ncl/ncl.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Result of every dp call; the detail is in the message buffer (dp_last_error() or the
 *  caller's buffer of the call). */
typedef enum dp_result {
    DP_OK = 0,
    DP_ERR_ARGUMENT, /**< NULL pointer, bad dtype/count/root, name too long */
    DP_ERR_STRATEGY, /**< the fusion strategy is invalid (the message says what and what is allowed) */
    DP_ERR_STATE,    /**< called in the wrong phase (e.g. register after dp_prepare, step while one runs) */
    DP_ERR_NOMEM,    /**< the allocator returned NULL */
    DP_ERR_COMM,     /**< the engine failed a collective (the message carries ncl's detail) */
    DP_RESULT_COUNT
} dp_result;

/** What went wrong and what to do next. Never NULL. */
const char *dp_strerror(dp_result r);

/* ---------------------------------------------------------------------------------------------
 * Sharding, with the seeds' semantics: dataset.shard(rank_size, rank_id) gives element i to rank
 * i mod rank_size. The element count need not be divisible by the rank count: ranks below
 * n mod size get one element more. */

/** Number of the n elements rank `rank` of `size` receives: ceil((n - rank) / size). */
size_t dp_shard_count(size_t n, int size, int rank);
/** The global index of the j-th element of rank's shard: rank + j * size. */
size_t dp_shard_index(size_t j, int size, int rank);
/** Writes rank's indices in ascending order into out (at most cap of them); returns how many
 *  the shard has (which may exceed cap: then only cap were written). */
size_t dp_shard_indices(size_t n, int size, int rank, size_t *out, size_t cap);

/* ---------------------------------------------------------------------------------------------
 * Gradient fusion. Gradients are numbered in registration order, which is the order
 * back-propagation PRODUCES them: index 0 is the first gradient that becomes ready (the output
 * layer's), the last index is the input layer's. A framework that lists variables in forward
 * order registers them reversed. Buckets are consecutive index ranges, so bucket 0 is ready
 * first and its allreduce can overlap the rest of the backward pass. */

#define DP_MAX_SEGMENTS 8u
/** Tolerance of "the percentages sum to 100": |sum - 100| <= DP_PERCENT_TOLERANCE. */
#define DP_PERCENT_TOLERANCE 1e-3

typedef enum dp_fusion_kind {
    DP_FUSION_DEFAULT = 0, /**< size percentages 96.54 / 3.46 (the seeds' default split) */
    DP_FUSION_INDEX,       /**< end indices (inclusive, strictly ascending, < gradient count) */
    DP_FUSION_SIZE,        /**< size percentages (each > 0, summing to 100) */
    DP_FUSION_THRESHOLD,   /**< pack ready gradients into a bucket while it stays <= N bytes */
    DP_FUSION_KIND_COUNT
} dp_fusion_kind;

/** A fusion strategy. Arrays are read (and copied) by dp_set_fusion / dp_fusion_plan only.
 *  - INDEX: index[0..count-1] are the last gradient index of each segment. If the last one is
 *    below the last gradient, the remaining gradients form one more segment. At most 8 segments
 *    in all (the implied one included).
 *  - SIZE: percent[0..count-1], the share of the total gradient bytes of each segment; a segment
 *    ends at the first gradient where the running byte total reaches its running percentage
 *    (gradients are never split, so a segment that would be empty is dropped).
 *  - THRESHOLD: a gradient joins the open bucket if the bucket stays <= threshold_bytes or is
 *    empty (a gradient larger than the threshold gets a bucket of its own). No segment limit. */
typedef struct dp_fusion {
    dp_fusion_kind kind;
    uint32_t count;
    const uint32_t *index;
    const double *percent;
    uint64_t threshold_bytes;
} dp_fusion;

#define DP_FUSION_INIT {DP_FUSION_DEFAULT, 0u, NULL, NULL, 0u}

/** One bucket: gradients first..last (inclusive; last < first for an empty list), `bytes` of
 *  gradient data packed at `offset` of the bucket buffer. */
typedef struct dp_bucket {
    uint32_t first, last;
    uint64_t offset, bytes;
} dp_bucket;

/** Pure planning, no context needed: cuts n gradients of byte sizes `bytes` into buckets
 *  (at most cap of them; a threshold strategy may need up to n). Bucket offsets are aligned to
 *  DP_BUCKET_ALIGN. Returns DP_OK and *nbuckets, or DP_ERR_STRATEGY / DP_ERR_ARGUMENT with a
 *  message in msg (msg may be NULL). */
dp_result dp_fusion_plan(const dp_fusion *f, const uint64_t *bytes, uint32_t n, dp_bucket *out,
                         uint32_t cap, uint32_t *nbuckets, char *msg, size_t msg_cap);
#define DP_BUCKET_ALIGN 64u

/* ---------------------------------------------------------------------------------------------
 * The context: one per rank. Lifecycle:
 *   dp_create -> dp_register ... (+ dp_set_fusion, dp_sgd_init) -> dp_prepare
 *   -> dp_broadcast_params(root) -> loop { compute gradients; dp_step(update) } -> dp_destroy.
 * Every allocation happens in dp_create / dp_register / dp_sgd_init / dp_prepare, through the
 * config's allocator; dp_broadcast_params and the step allocate nothing. */

typedef struct dp_ctx dp_ctx;

#define DP_CONFIG_VERSION 1u
#define DP_NAME_MAX 48u /* tensor names, NUL included */

typedef struct dp_config {
    uint32_t size;         /**< sizeof(dp_config) */
    uint32_t version;      /**< DP_CONFIG_VERSION */
    ncl_alloc_fn alloc;    /**< NULL: malloc/free */
    ncl_free_fn free;
    void *alloc_ud;
    ncl_dtype dtype;       /**< every tensor's dtype: NCL_FLOAT32 (default) or NCL_FLOAT64 */
    ncl_op op;             /**< NCL_SUM: allreduce sum, then dp divides by the rank count (default);
                                NCL_AVG: the engine divides */
    uint32_t max_tensors;  /**< capacity of the registry (default 64), allocated at create */
} dp_config;

#define DP_CONFIG_INIT {sizeof(dp_config), DP_CONFIG_VERSION, NULL, NULL, NULL, NCL_FLOAT32, NCL_SUM, 64u}

/** A registered tensor: parameter and gradient of `count` elements of the context's dtype. */
typedef struct dp_tensor {
    char name[DP_NAME_MAX];
    size_t count;
    void *param;
    void *grad;
} dp_tensor;

/** Creates a context over comm (rank and size come from it). comm may be NULL for a
 *  communicator-less context (size 1, rank 0): registry, fusion, pack/unpack work, collectives
 *  return DP_ERR_STATE. cfg NULL: DP_CONFIG_INIT. On failure *ctx is NULL and msg says why. */
dp_result dp_create(dp_ctx **ctx, ncl_comm *comm, const dp_config *cfg, char *msg, size_t msg_cap);
void dp_destroy(dp_ctx *ctx);
/** The detail of the last failed call ("" if none). */
const char *dp_last_error(const dp_ctx *ctx);

/** Registers the next tensor (see the ordering above). count may be 0 (param/grad may then be
 *  NULL). Only before dp_prepare. */
dp_result dp_register(dp_ctx *ctx, const char *name, size_t count, void *param, void *grad);
uint32_t dp_tensor_count(const dp_ctx *ctx);
const dp_tensor *dp_tensor_at(const dp_ctx *ctx, uint32_t i);

/** Chooses the fusion strategy (default: DP_FUSION_DEFAULT) and copies it. What does not depend
 *  on the gradients (empty, unsorted, > 8 segments, percentages, threshold 0) is checked at once;
 *  indices against the gradient count at dp_prepare. Only before dp_prepare. */
dp_result dp_set_fusion(dp_ctx *ctx, const dp_fusion *f);
/** Plans the buckets and allocates the bucket buffer. After it: no more registration. */
dp_result dp_prepare(dp_ctx *ctx);
uint32_t dp_bucket_count(const dp_ctx *ctx);
const dp_bucket *dp_bucket_at(const dp_ctx *ctx, uint32_t b);
/** The bucket buffer (all buckets, DP_BUCKET_ALIGN-aligned offsets). */
void *dp_bucket_buffer(dp_ctx *ctx);

/** Copies bucket b's gradients into the bucket buffer / the buffer back into the gradients,
 *  byte for byte. dp_pack_params / dp_unpack_params do the same with the parameters. */
dp_result dp_pack(dp_ctx *ctx, uint32_t b);
dp_result dp_unpack(dp_ctx *ctx, uint32_t b);
dp_result dp_pack_params(dp_ctx *ctx, uint32_t b);
dp_result dp_unpack_params(dp_ctx *ctx, uint32_t b);

/** Every parameter from rank root: one in-place ncl_broadcast per bucket (the same buckets as
 *  the gradients, parameters packed through the bucket buffer). Collective: every rank calls it. */
dp_result dp_broadcast_params(dp_ctx *ctx, int root);

/** The update a step hands the averaged gradients to: called once per tensor, in registration
 *  order, after every bucket was reduced. */
typedef void (*dp_update_fn)(void *ud, uint32_t index, const dp_tensor *t, ncl_dtype dtype);

/** The distributed optimizer step: for each bucket in order, pack, allreduce (op of the config),
 *  divide by the rank count (NCL_SUM), unpack; then update(ud, i, tensor) for every tensor.
 *  Collective. Equivalent to dp_step_start + dp_step_wait + dp_apply. */
dp_result dp_step(dp_ctx *ctx, dp_update_fn update, void *ud);

/** Non-blocking form (for drivers that poll every rank from one thread, e.g. a simulator):
 *  dp_step_start packs and launches bucket 0; dp_step_test makes progress without blocking and,
 *  when a bucket's allreduce finished, unpacks it and launches the next; *done = 1 once all
 *  buckets are back in the gradients. dp_step_wait blocks until then. dp_apply runs the update. */
dp_result dp_step_start(dp_ctx *ctx);
dp_result dp_step_test(dp_ctx *ctx, int *done);
dp_result dp_step_wait(dp_ctx *ctx);
dp_result dp_apply(dp_ctx *ctx, dp_update_fn update, void *ud);

/* Built-in optimizer: SGD with optional momentum (PyTorch form: v = mu v + g; p -= lr v; with
 * mu = 0 simply p -= lr g). */
typedef struct dp_sgd {
    double lr, momentum;
    void *velocity; /* one buffer for all tensors (context dtype), NULL without momentum */
    size_t *offset; /* element offset of each tensor in velocity */
    dp_ctx *ctx;
} dp_sgd;

/** Allocates the momentum buffers (zeroed) through the context's allocator. Call after the
 *  last dp_register; released by dp_sgd_release. */
dp_result dp_sgd_init(dp_sgd *sgd, dp_ctx *ctx, double lr, double momentum);
void dp_sgd_release(dp_sgd *sgd);
/** dp_update_fn with ud = the dp_sgd. */
void dp_sgd_update(void *ud, uint32_t index, const dp_tensor *t, ncl_dtype dtype);

#ifdef __cplusplus
}
#endif
#endif
