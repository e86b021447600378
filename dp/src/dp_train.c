/* dp_train.c — the numeric example's driver: seeded Gaussian blobs, an MLP with hand-written
 * back-propagation, and the data-parallel loop (shard, gradient, dp_step, SGD) on host ranks. */
#include "dp/dp_train.h"

#include "dp_internal.h"

#include <ncl/ncl_host.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TENSORS 4

/* ---- deterministic data: integer PRNG, no libm, so the dataset is the same on every machine */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1) with 53 random bits: exact in double. */
static double uniform(uint64_t *s)
{
    return (double)(splitmix64(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* Irwin-Hall: the sum of 12 uniforms minus 6 has mean 0 and variance 1 — close enough to a
 * normal for blobs, and made of exact adds only (Box-Muller would need log/cos from libm). */
static double normal(uint64_t *s)
{
    double x = 0;
    for (int i = 0; i < 12; i++)
        x += uniform(s);
    return x - 6.0;
}

typedef struct layout {
    int n;
    const char *name[MAX_TENSORS];
    size_t off[MAX_TENSORS], count[MAX_TENSORS];
    size_t total;
} layout;

/* Registration order = the order back-propagation produces the gradients: the output layer's
 * weight and bias first, the input layer's last. */
static void make_layout(const dp_train_config *c, layout *l)
{
    size_t D = (size_t)c->features, H = (size_t)c->hidden, K = (size_t)c->classes;
    memset(l, 0, sizeof *l);
    if (H == 0) {
        l->n = 2;
        l->name[0] = "fc.weight", l->count[0] = K * D;
        l->name[1] = "fc.bias", l->count[1] = K;
    } else {
        l->n = 4;
        l->name[0] = "fc2.weight", l->count[0] = K * H;
        l->name[1] = "fc2.bias", l->count[1] = K;
        l->name[2] = "fc1.weight", l->count[2] = H * D;
        l->name[3] = "fc1.bias", l->count[3] = H;
    }
    for (int i = 0; i < l->n; i++) {
        l->off[i] = l->total;
        l->total += l->count[i];
    }
}

size_t dp_train_param_count(const dp_train_config *cfg)
{
    layout l;
    if (cfg == NULL)
        return 0;
    make_layout(cfg, &l);
    return l.total;
}

/* Weights uniform in +-sqrt(6 / (fan_in + fan_out)) (Glorot), biases in +-0.1. */
static void init_params(const dp_train_config *c, const layout *l, float *p, uint64_t seed)
{
    uint64_t s = seed * 0x2545F4914F6CDD1Dull + 0x1234567ull;
    for (int t = 0; t < l->n; t++) {
        int is_bias = (t % 2) == 1;
        size_t fan_in, fan_out;
        if (c->hidden == 0) {
            fan_in = (size_t)c->features, fan_out = (size_t)c->classes;
        } else if (t < 2) {
            fan_in = (size_t)c->hidden, fan_out = (size_t)c->classes;
        } else {
            fan_in = (size_t)c->features, fan_out = (size_t)c->hidden;
        }
        double a = is_bias ? 0.1 : sqrt(6.0 / (double)(fan_in + fan_out));
        for (size_t i = 0; i < l->count[t]; i++)
            p[l->off[t] + i] = (float)((2.0 * uniform(&s) - 1.0) * a);
    }
}

/* Blobs: class centres uniform in [-2, 2]^D, labels uniform, x = centre + noise * N(0, 1). */
static void make_data(const dp_train_config *c, float *x, int *y)
{
    uint64_t s = c->seed ^ 0xDA7A5E7ull;
    size_t D = (size_t)c->features;
    double centre[64 * 64];
    for (size_t k = 0; k < (size_t)c->classes * D; k++)
        centre[k] = 4.0 * uniform(&s) - 2.0;
    for (size_t i = 0; i < (size_t)c->samples; i++) {
        int k = (int)(splitmix64(&s) % (uint64_t)c->classes);
        y[i] = k;
        for (size_t d = 0; d < D; d++)
            x[i * D + d] = (float)(centre[(size_t)k * D + d] + c->noise * normal(&s));
    }
}

/* ---- the model ---------------------------------------------------------------------------- */

typedef struct work {
    float *h, *z, *dz, *dh;
} work;

/* Gradient of shard s of P of global batch t, scaled by P / batch (so that the mean over the P
 * shards is the global batch's mean even when batch is not divisible by P), into g; returns the
 * shard's summed loss. Samples are visited in shard order (batch positions s, s+P, ...). */
static double shard_grad(const dp_train_config *c, const layout *l, const float *p, const float *X, const int *Y,
                         int t, int P, int s, float *g, work *w)
{
    size_t D = (size_t)c->features, H = (size_t)c->hidden, K = (size_t)c->classes;
    memset(g, 0, l->total * sizeof(float));
    double loss = 0;
    size_t n = dp_shard_count((size_t)c->batch, P, s);
    for (size_t j = 0; j < n; j++) {
        size_t k = dp_shard_index(j, P, s);
        size_t idx = ((size_t)t * (size_t)c->batch + k) % (size_t)c->samples;
        const float *x = X + idx * D;
        int y = Y[idx];
        /* Forward. */
        const float *in = x;
        size_t nin = D;
        const float *Wo = p + l->off[0], *bo = p + l->off[1];
        if (H > 0) {
            const float *W1 = p + l->off[2], *b1 = p + l->off[3];
            for (size_t i = 0; i < H; i++) {
                float a = b1[i];
                for (size_t d = 0; d < D; d++)
                    a += W1[i * D + d] * x[d];
                w->h[i] = a > 0 ? a : 0;
            }
            in = w->h;
            nin = H;
        }
        float zmax = -INFINITY;
        for (size_t k2 = 0; k2 < K; k2++) {
            float a = bo[k2];
            for (size_t i = 0; i < nin; i++)
                a += Wo[k2 * nin + i] * in[i];
            w->z[k2] = a;
            if (a > zmax)
                zmax = a;
        }
        float se = 0;
        for (size_t k2 = 0; k2 < K; k2++) {
            w->dz[k2] = expf(w->z[k2] - zmax);
            se += w->dz[k2];
        }
        loss += (double)logf(se) + (double)zmax - (double)w->z[y];
        /* Backward: dz = softmax - onehot; output layer first (the registration order). */
        for (size_t k2 = 0; k2 < K; k2++)
            w->dz[k2] = w->dz[k2] / se - (k2 == (size_t)y ? 1.0f : 0.0f);
        float *gWo = g + l->off[0], *gbo = g + l->off[1];
        for (size_t k2 = 0; k2 < K; k2++) {
            for (size_t i = 0; i < nin; i++)
                gWo[k2 * nin + i] += w->dz[k2] * in[i];
            gbo[k2] += w->dz[k2];
        }
        if (H > 0) {
            float *gW1 = g + l->off[2], *gb1 = g + l->off[3];
            for (size_t i = 0; i < H; i++) {
                float a = 0;
                if (w->h[i] > 0)
                    for (size_t k2 = 0; k2 < K; k2++)
                        a += Wo[k2 * H + i] * w->dz[k2];
                w->dh[i] = a;
            }
            for (size_t i = 0; i < H; i++) {
                for (size_t d = 0; d < D; d++)
                    gW1[i * D + d] += w->dh[i] * x[d];
                gb1[i] += w->dh[i];
            }
        }
    }
    float scale = (float)P / (float)c->batch;
    for (size_t i = 0; i < l->total; i++)
        g[i] *= scale;
    return loss;
}

/* ---- the run ------------------------------------------------------------------------------ */

typedef struct shared {
    const dp_train_config *cfg;
    layout l;
    const float *X;
    const int *Y;
    double *loss;
    float *pre, *post, *fin; /* [rank][total]: before broadcast, after it, at the end */
    uint64_t collectives;
    uint32_t buckets;
    char (*msg)[320];        /* per rank */
} shared;

/* Everything a rank owns; the step loop below is written as compute / start / wait / apply so a
 * polling driver (the sim backend) can run it with dp_step_test in place of dp_step_wait. */
typedef struct rank_state {
    float *p, *g, *acc;
    work w;
    dp_ctx *dp;
    dp_sgd sgd;
} rank_state;

#define FAIL(...)                                                     \
    do {                                                              \
        dp_fmt(S->msg[r], sizeof S->msg[r], __VA_ARGS__);             \
        rc = NCL_ERR_BACKEND;                                         \
        goto out;                                                     \
    } while (0)

static ncl_result rank_fn(ncl_comm *comm, void *arg)
{
    shared *S = arg;
    const dp_train_config *c = S->cfg;
    const layout *l = &S->l;
    int r = 0;
    ncl_comm_rank(comm, &r);
    ncl_result rc = NCL_SUCCESS;
    rank_state st;
    memset(&st, 0, sizeof st);
    size_t T = l->total, H = (size_t)c->hidden, K = (size_t)c->classes;
    int P = c->ranks;
    int shards = (c->ranks == 1 && c->shards > 1) ? c->shards : 1;
    int root = c->ranks > 1 ? c->root : 0;
    st.p = malloc(T * sizeof(float));
    st.g = malloc(T * sizeof(float));
    st.acc = malloc(T * sizeof(float));
    st.w.h = malloc((H + 1) * sizeof(float));
    st.w.dh = malloc((H + 1) * sizeof(float));
    st.w.z = malloc(K * sizeof(float));
    st.w.dz = malloc(K * sizeof(float));
    if (!st.p || !st.g || !st.acc || !st.w.h || !st.w.dh || !st.w.z || !st.w.dz)
        FAIL("rank %d: out of memory", r);

    /* Different initialisations per rank unless asked otherwise; a single-rank reference starts
     * from the root's. */
    int ident = c->distinct_init ? (c->ranks > 1 ? r : c->root) : 0;
    init_params(c, l, st.p, c->seed + (uint64_t)ident);
    memcpy(S->pre + (size_t)r * T, st.p, T * sizeof(float));

    dp_config dc = DP_CONFIG_INIT;
    char m[320];
    if (dp_create(&st.dp, comm, &dc, m, sizeof m) != DP_OK)
        FAIL("rank %d: %s", r, m);
    for (int i = 0; i < l->n; i++)
        if (dp_register(st.dp, l->name[i], l->count[i], st.p + l->off[i], st.g + l->off[i]) != DP_OK)
            FAIL("rank %d: %s", r, dp_last_error(st.dp));
    if (dp_set_fusion(st.dp, &c->fusion) != DP_OK || dp_sgd_init(&st.sgd, st.dp, c->lr, c->momentum) != DP_OK ||
        dp_prepare(st.dp) != DP_OK)
        FAIL("rank %d: %s", r, dp_last_error(st.dp));
    uint64_t colls = 0;
    uint32_t nonempty = 0;
    for (uint32_t b = 0; b < dp_bucket_count(st.dp); b++)
        nonempty += dp_bucket_at(st.dp, b)->bytes > 0;
    if (c->broadcast) {
        if (dp_broadcast_params(st.dp, root) != DP_OK)
            FAIL("rank %d: %s", r, dp_last_error(st.dp));
        colls += nonempty;
    }
    memcpy(S->post + (size_t)r * T, st.p, T * sizeof(float));

    for (int t = 0; t < c->steps; t++) {
        /* Compute: this rank's shard, or (rank-ordered reference) all shards summed in rank
         * order then divided by their count — what a deterministic allreduce + dp's division do. */
        double loss_local;
        if (shards == 1) {
            loss_local = shard_grad(c, l, st.p, S->X, S->Y, t, P, r, st.g, &st.w);
        } else {
            loss_local = 0;
            for (int s = 0; s < shards; s++) {
                double ls = shard_grad(c, l, st.p, S->X, S->Y, t, shards, s, s == 0 ? st.acc : st.g, &st.w);
                if (s > 0)
                    for (size_t i = 0; i < T; i++)
                        st.acc[i] = st.acc[i] + st.g[i];
                loss_local = s == 0 ? ls : loss_local + ls;
            }
            float fp = (float)shards;
            for (size_t i = 0; i < T; i++)
                st.g[i] = st.acc[i] / fp;
        }
        /* Communicate: every bucket's allreduce (dp_step_start + dp_step_wait), then the loss. */
        if (dp_step_start(st.dp) != DP_OK || dp_step_wait(st.dp) != DP_OK)
            FAIL("rank %d step %d: %s", r, t, dp_last_error(st.dp));
        double loss_sum = 0;
        ncl_result lr = ncl_allreduce(&loss_local, &loss_sum, 1, NCL_FLOAT64, NCL_SUM, comm);
        if (lr != NCL_SUCCESS)
            FAIL("rank %d step %d: loss allreduce: %s: %s", r, t, ncl_strerror(lr), ncl_comm_last_error(comm));
        colls += nonempty + 1;
        /* Update. */
        if (dp_apply(st.dp, dp_sgd_update, &st.sgd) != DP_OK)
            FAIL("rank %d step %d: %s", r, t, dp_last_error(st.dp));
        if (r == 0 && S->loss)
            S->loss[t] = loss_sum / (double)c->batch;
    }
    memcpy(S->fin + (size_t)r * T, st.p, T * sizeof(float));
    if (r == 0) {
        S->collectives = colls;
        S->buckets = dp_bucket_count(st.dp);
    }
out:
    dp_sgd_release(&st.sgd);
    dp_destroy(st.dp);
    free(st.p);
    free(st.g);
    free(st.acc);
    free(st.w.h);
    free(st.w.dh);
    free(st.w.z);
    free(st.w.dz);
    return rc;
}

static dp_result check_config(const dp_train_config *c, char *msg, size_t cap)
{
    const char *why = NULL;
    if (c->ranks < 1 || c->ranks > 256)
        why = "ranks must be 1..256";
    else if (c->ranks > 1 && c->shards > 1 && c->shards != c->ranks)
        why = "shards (the rank-ordered reference) is only for ranks = 1";
    else if (c->shards < 0 || c->shards > 256)
        why = "shards must be 0..256";
    else if (c->steps < 0)
        why = "steps must be >= 0";
    else if (c->batch < 1)
        why = "batch must be >= 1";
    else if (c->batch < c->ranks || (c->ranks == 1 && c->shards > c->batch))
        why = "batch must be at least the rank (shard) count: every rank needs a sample";
    else if (!(c->lr > 0) || !(c->momentum >= 0) || c->momentum >= 1)
        why = "lr must be > 0 and momentum in [0, 1)";
    else if (c->features < 1 || c->features > 64 || c->classes < 2 || c->classes > 64 || c->hidden < 0 ||
             c->hidden > 4096)
        why = "features 1..64, classes 2..64, hidden 0..4096";
    else if (c->samples < 1)
        why = "samples must be >= 1";
    else if (c->root < 0 || (c->ranks > 1 && c->root >= c->ranks))
        why = "root must be a rank";
    if (why) {
        dp_fmt(msg, cap, "train: %s", why);
        return DP_ERR_ARGUMENT;
    }
    return DP_OK;
}

dp_result dp_train_run(const dp_train_config *c, dp_train_result *res)
{
    if (c == NULL || res == NULL)
        return DP_ERR_ARGUMENT;
    res->msg[0] = '\0';
    res->ranks_identical = res->init_differed = res->init_identical = 0;
    res->buckets = 0;
    res->collectives = 0;
    dp_result dr = check_config(c, res->msg, sizeof res->msg);
    if (dr != DP_OK)
        return dr;
    shared S;
    memset(&S, 0, sizeof S);
    S.cfg = c;
    make_layout(c, &S.l);
    /* Check the fusion strategy here, once, so a bad one is an error, not P ranks failing apart
     * (and peers waiting for them until the engine's timeout). */
    {
        uint64_t bytes[MAX_TENSORS];
        dp_bucket b[MAX_TENSORS];
        uint32_t nb;
        for (int i = 0; i < S.l.n; i++)
            bytes[i] = S.l.count[i] * sizeof(float);
        dr = dp_fusion_plan(&c->fusion, bytes, (uint32_t)S.l.n, b, MAX_TENSORS, &nb, res->msg, sizeof res->msg);
        if (dr != DP_OK)
            return dr;
    }
    size_t T = S.l.total, P = (size_t)c->ranks;
    float *X = malloc((size_t)c->samples * (size_t)c->features * sizeof(float));
    int *Y = malloc((size_t)c->samples * sizeof(int));
    float *arr = malloc(3 * P * T * sizeof(float));
    char(*msgs)[320] = calloc(P, sizeof *msgs);
    ncl_result *rr = calloc(P, sizeof *rr);
    if (!X || !Y || !arr || !msgs || !rr) {
        dp_fmt(res->msg, sizeof res->msg, "train: out of memory");
        dr = DP_ERR_NOMEM;
        goto out;
    }
    make_data(c, X, Y);
    S.X = X;
    S.Y = Y;
    S.loss = res->loss;
    S.pre = arr;
    S.post = arr + P * T;
    S.fin = arr + 2 * P * T;
    S.msg = msgs;

    ncl_host_config hc = NCL_HOST_CONFIG_INIT;
    hc.nranks = c->ranks;
    hc.comm.deterministic = c->deterministic;
    hc.comm.timeout_ns = 10000000000ull; /* a failing rank must not stall its peers for 30 s */
    ncl_result rc = c->runner && c->ranks > 1 ? c->runner(c->runner_ud, &hc.comm, c->ranks, rank_fn, &S, rr)
                                              : ncl_host_run_cfg(&hc, rank_fn, &S, rr);
    if (rc != NCL_SUCCESS) {
        for (size_t i = 0; i < P; i++)
            if (rr[i] != NCL_SUCCESS) {
                dp_fmt(res->msg, sizeof res->msg, "%s", msgs[i][0] ? msgs[i] : ncl_strerror(rr[i]));
                break;
            }
        if (!res->msg[0])
            dp_fmt(res->msg, sizeof res->msg, "train: the %s failed: %s", c->runner ? "run" : "host backend",
                   ncl_strerror(rc));
        dr = DP_ERR_COMM;
        goto out;
    }
    int root = c->ranks > 1 ? c->root : 0;
    res->ranks_identical = res->init_identical = 1;
    for (size_t i = 0; i < P; i++) {
        if (memcmp(S.fin + i * T, S.fin, T * sizeof(float)) != 0)
            res->ranks_identical = 0;
        if (memcmp(S.post + i * T, S.pre + (size_t)root * T, T * sizeof(float)) != 0)
            res->init_identical = 0;
        if (memcmp(S.pre + i * T, S.pre + (size_t)root * T, T * sizeof(float)) != 0)
            res->init_differed = 1;
    }
    if (res->params)
        memcpy(res->params, S.fin, T * sizeof(float));
    res->buckets = S.buckets;
    res->collectives = S.collectives;
out:
    free(X);
    free(Y);
    free(arr);
    free(msgs);
    free(rr);
    return dr;
}
