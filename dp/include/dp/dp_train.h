/* dp_train.h — the numeric data-parallel example: an MLP (or softmax regression) trained on
 * seeded Gaussian blobs with N ranks on the host backend, and its single-rank references. */
#ifndef DP_DP_TRAIN_H
#define DP_DP_TRAIN_H

#include "dp/dp.h"

#include <ncl/ncl_host.h>

#ifdef __cplusplus
extern "C" {
#endif

/** One training run. Start from DP_TRAIN_CONFIG_INIT.
 *  - ranks > 1: data-parallel: every global batch of `batch` samples is sharded with
 *    shard(ranks, rank) (batch position k goes to rank k mod ranks), each rank computes the
 *    gradient of its shard scaled by ranks/batch, dp_step averages them (allreduce) and applies
 *    SGD. The loss of a step is the global batch's mean (an fp64 allreduce of the shard sums).
 *  - ranks == 1, shards <= 1: the plain single-rank reference: the gradient of the whole batch,
 *    summed in batch order, scaled by 1/batch.
 *  - ranks == 1, shards = P > 1: the rank-ordered reference: the one rank computes the P shard
 *    gradients exactly as P ranks would, adds them in rank order 0..P-1 and divides by P — the
 *    arithmetic of a deterministic P-rank run, so the two are bit-identical. */
/** Runs fn on nranks ranks with communicators made from comm (ncl_host_run_cfg's contract):
 *  another machine than the host backend's threads, e.g. ringsim's simulated server. */
typedef ncl_result (*dp_runner)(void *ud, const ncl_config *comm, int nranks, ncl_host_fn fn, void *arg,
                                ncl_result *results);

typedef struct dp_train_config {
    int ranks, shards;
    int steps, batch;
    double lr, momentum;
    uint64_t seed;           /**< dataset and initialisation */
    int deterministic;       /**< ncl_config.deterministic for the run */
    dp_fusion fusion;        /**< arrays must outlive the call */
    int root;                /**< broadcast root */
    int distinct_init;       /**< 1: rank r initialises from seed + r (the broadcast makes them equal) */
    int broadcast;           /**< 0: skip the broadcast (to show that ranks then diverge) */
    int features, hidden, classes; /**< hidden 0: softmax regression */
    int samples;             /**< dataset size; global batch t uses samples (t*batch + k) mod samples */
    double noise;            /**< blob standard deviation */
    dp_runner runner;        /**< ranks > 1: where the ranks run (NULL: the host backend) */
    void *runner_ud;
} dp_train_config;

#define DP_TRAIN_CONFIG_INIT                                                                   \
    {1, 0, 60, 64, 0.2, 0.0, 1u, 0, DP_FUSION_INIT, 0, 1, 1, 16, 32, 4, 2048, 1.0, NULL, NULL}

/** Agreement of an N-rank run with the plain 1-rank reference (the same global batches), as
 *  absolute differences of every step's loss and of every final parameter (parameters and
 *  losses are O(1): the initial loss is ln(classes), weights are Glorot-sized).
 *  Why they differ at all: only the order of fp32 additions. The reference sums the batch's
 *  per-sample gradients in batch order and scales by 1/batch; N ranks sum their shard (every
 *  N-th sample), scale by N/batch, and the allreduce adds the N partial gradients in its own
 *  order (a ring: a different order per chunk) before dividing by N. Each gradient element is
 *  then off by a few ulps (fp32: 6e-8 relative), and SGD carries such differences forward.
 *  Measured (tests/dp, `ringsim train`): at most 1e-7 on losses and 1.4e-6 on parameters over 500
 *  steps with momentum 0.9 on 8 ranks; 60 steps: 2e-8 / 1.2e-7. The tolerances leave >= 70x.
 *  A real bug (a shard counted twice, a missing division, unequal shards weighted equally)
 *  moves the loss by 1e-3 or more. */
#define DP_TRAIN_LOSS_ATOL 1e-5
#define DP_TRAIN_PARAM_ATOL 1e-4

/** Sizes of the model: total parameters and the tensors in registration order. */
size_t dp_train_param_count(const dp_train_config *cfg);

typedef struct dp_train_result {
    double *loss;       /**< caller's array of `steps` entries (may be NULL) */
    float *params;      /**< caller's array of dp_train_param_count() entries: rank 0's final ones (may be NULL) */
    int ranks_identical;  /**< every rank ended with rank 0's parameters, bit for bit */
    int init_differed;    /**< before the broadcast some rank's parameters differed from the root's */
    int init_identical;   /**< after the broadcast every rank held the root's initial parameters */
    uint32_t buckets;     /**< buckets the fusion strategy made */
    uint64_t collectives; /**< allreduces + broadcasts rank 0 issued */
    char msg[320];        /**< why it failed */
} dp_train_result;

/** Runs the training (threads of the host backend). DP_OK, or an error with res->msg. */
dp_result dp_train_run(const dp_train_config *cfg, dp_train_result *res);

#ifdef __cplusplus
}
#endif
#endif
