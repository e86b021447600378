/* dp_core.c — the data-parallel context: tensor registry, buckets, parameter broadcast and the
 * distributed optimizer step over ncl's public API. */
#include "dp_internal.h"

#include <stdlib.h>
#include <string.h>

static void *default_alloc(void *ud, size_t bytes)
{
    (void)ud;
    return malloc(bytes);
}

static void default_free(void *ud, void *p)
{
    (void)ud;
    free(p);
}

const char *dp_strerror(dp_result r)
{
    switch (r) {
    case DP_OK: return "success";
    case DP_ERR_ARGUMENT: return "invalid argument: a NULL pointer, bad count, dtype, root or name (see the message)";
    case DP_ERR_STRATEGY: return "invalid fusion strategy: the message says what is wrong and what is allowed";
    case DP_ERR_STATE: return "wrong phase: register tensors and set the fusion before dp_prepare, run steps after it, "
                              "one step at a time, and give the context a communicator for collectives";
    case DP_ERR_NOMEM: return "out of memory: the allocator returned NULL";
    case DP_ERR_COMM: return "collective failed: the message carries the engine's detail; every rank must run "
                             "the same steps with the same tensors and strategy";
    default: return "unknown dp result";
    }
}

const char *dp_last_error(const dp_ctx *ctx)
{
    return ctx ? ctx->msg : "no context";
}

dp_result dp_create(dp_ctx **out, ncl_comm *comm, const dp_config *cfg_in, char *msg, size_t msg_cap)
{
    dp_config cfg = DP_CONFIG_INIT;
    if (msg && msg_cap)
        msg[0] = '\0';
    if (out == NULL) {
        if (msg)
            dp_fmt(msg, msg_cap, "dp_create: ctx is NULL");
        return DP_ERR_ARGUMENT;
    }
    *out = NULL;
    if (cfg_in) {
        if (cfg_in->size != sizeof(dp_config) || cfg_in->version != DP_CONFIG_VERSION) {
            if (msg)
                dp_fmt(msg, msg_cap, "dp_create: config size %u / version %u do not match this library "
                       "(%u / %u): start from DP_CONFIG_INIT", cfg_in->size, cfg_in->version,
                       (unsigned)sizeof(dp_config), DP_CONFIG_VERSION);
            return DP_ERR_ARGUMENT;
        }
        cfg = *cfg_in;
    }
    if (cfg.dtype != NCL_FLOAT32 && cfg.dtype != NCL_FLOAT64) {
        if (msg)
            dp_fmt(msg, msg_cap, "dp_create: dtype %s is not supported; use float32 or float64",
                   ncl_dtype_name(cfg.dtype));
        return DP_ERR_ARGUMENT;
    }
    if (cfg.op != NCL_SUM && cfg.op != NCL_AVG) {
        if (msg)
            dp_fmt(msg, msg_cap, "dp_create: op %s is not a mean; use sum (dp divides) or avg (the engine does)",
                   ncl_op_name(cfg.op));
        return DP_ERR_ARGUMENT;
    }
    if (cfg.max_tensors == 0) {
        if (msg)
            dp_fmt(msg, msg_cap, "dp_create: max_tensors is 0; give the registry's capacity");
        return DP_ERR_ARGUMENT;
    }
    if (cfg.alloc == NULL || cfg.free == NULL) {
        cfg.alloc = default_alloc;
        cfg.free = default_free;
        cfg.alloc_ud = NULL;
    }
    int rank = 0, size = 1;
    if (comm && (ncl_comm_rank(comm, &rank) != NCL_SUCCESS || ncl_comm_size(comm, &size) != NCL_SUCCESS)) {
        if (msg)
            dp_fmt(msg, msg_cap, "dp_create: the communicator does not answer rank/size");
        return DP_ERR_ARGUMENT;
    }
    dp_ctx *ctx = cfg.alloc(cfg.alloc_ud, sizeof *ctx);
    dp_tensor *tensors = ctx ? cfg.alloc(cfg.alloc_ud, sizeof(dp_tensor) * cfg.max_tensors) : NULL;
    if (ctx == NULL || tensors == NULL) {
        if (ctx)
            cfg.free(cfg.alloc_ud, ctx);
        if (msg)
            dp_fmt(msg, msg_cap, "dp_create: the allocator returned NULL");
        return DP_ERR_NOMEM;
    }
    memset(ctx, 0, sizeof *ctx);
    ctx->comm = comm;
    ctx->rank = rank;
    ctx->size = size;
    ctx->cfg = cfg;
    ctx->esize = ncl_dtype_size(cfg.dtype);
    ctx->tensors = tensors;
    ctx->fusion.kind = DP_FUSION_DEFAULT;
    *out = ctx;
    return DP_OK;
}

void dp_destroy(dp_ctx *ctx)
{
    if (ctx == NULL)
        return;
    if (ctx->running && ctx->comm)
        (void)ncl_wait(ctx->comm); /* never free a buffer the engine still writes */
    ncl_free_fn f = ctx->cfg.free;
    void *ud = ctx->cfg.alloc_ud;
    if (ctx->buffer)
        f(ud, ctx->buffer);
    if (ctx->buckets)
        f(ud, ctx->buckets);
    f(ud, ctx->tensors);
    f(ud, ctx);
}

dp_result dp_register(dp_ctx *ctx, const char *name, size_t count, void *param, void *grad)
{
    if (ctx == NULL)
        return DP_ERR_ARGUMENT;
    if (ctx->phase != DP_PHASE_REGISTER)
        return dp_fail(ctx, DP_ERR_STATE, "dp_register: '%s' comes after dp_prepare; register every tensor first",
                       name ? name : "(null)");
    if (name == NULL || name[0] == '\0' || strlen(name) >= DP_NAME_MAX)
        return dp_fail(ctx, DP_ERR_ARGUMENT, "dp_register: tensor %u needs a name of 1..%u characters",
                       ctx->ntensors, DP_NAME_MAX - 1);
    if (count > 0 && (param == NULL || grad == NULL))
        return dp_fail(ctx, DP_ERR_ARGUMENT, "dp_register: '%s' has %llu elements but a NULL %s", name,
                       (unsigned long long)count, param == NULL ? "parameter" : "gradient");
    if (ctx->ntensors >= ctx->cfg.max_tensors)
        return dp_fail(ctx, DP_ERR_ARGUMENT, "dp_register: '%s' is tensor %u but the registry holds %u; "
                       "raise dp_config.max_tensors", name, ctx->ntensors + 1, ctx->cfg.max_tensors);
    dp_tensor *t = &ctx->tensors[ctx->ntensors++];
    memset(t, 0, sizeof *t);
    memcpy(t->name, name, strlen(name) + 1);
    t->count = count;
    t->param = param;
    t->grad = grad;
    return DP_OK;
}

uint32_t dp_tensor_count(const dp_ctx *ctx)
{
    return ctx ? ctx->ntensors : 0;
}

const dp_tensor *dp_tensor_at(const dp_ctx *ctx, uint32_t i)
{
    return ctx && i < ctx->ntensors ? &ctx->tensors[i] : NULL;
}

/* Byte sizes of the tensors, for the planner: allocated briefly through the allocator (only
 * dp_prepare calls this, and it is an allocation phase). */
static uint64_t *tensor_bytes(dp_ctx *ctx)
{
    uint32_t n = ctx->ntensors ? ctx->ntensors : 1;
    uint64_t *b = ctx->cfg.alloc(ctx->cfg.alloc_ud, sizeof(uint64_t) * n);
    if (b)
        for (uint32_t i = 0; i < ctx->ntensors; i++)
            b[i] = (uint64_t)ctx->tensors[i].count * ctx->esize;
    return b;
}

/* Plans into `out` (ntensors entries) with the context's strategy; the message lands in ctx. */
static dp_result plan(dp_ctx *ctx, dp_bucket *out, uint32_t *nb)
{
    uint64_t *bytes = tensor_bytes(ctx);
    if (bytes == NULL)
        return dp_fail(ctx, DP_ERR_NOMEM, "dp: the allocator returned NULL while planning buckets");
    dp_result r = dp_fusion_plan(&ctx->fusion, bytes, ctx->ntensors, out, ctx->ntensors, nb, ctx->msg,
                                 sizeof ctx->msg);
    ctx->cfg.free(ctx->cfg.alloc_ud, bytes);
    return r;
}

dp_result dp_set_fusion(dp_ctx *ctx, const dp_fusion *f)
{
    if (ctx == NULL || f == NULL)
        return ctx ? dp_fail(ctx, DP_ERR_ARGUMENT, "dp_set_fusion: strategy is NULL") : DP_ERR_ARGUMENT;
    if (ctx->phase != DP_PHASE_REGISTER)
        return dp_fail(ctx, DP_ERR_STATE, "dp_set_fusion: the buckets are fixed at dp_prepare; set the strategy before");
    /* Check the strategy alone first (everything that does not depend on the gradient count),
     * with an index bound that cannot fail, then copy it. */
    dp_fusion copy = *f;
    if (f->kind == DP_FUSION_INDEX || f->kind == DP_FUSION_SIZE) {
        uint64_t one = 1;
        dp_bucket scratch[1];
        uint32_t nb;
        if (f->kind == DP_FUSION_SIZE) {
            dp_result r = dp_fusion_plan(f, &one, 1, scratch, 1, &nb, ctx->msg, sizeof ctx->msg);
            if (r != DP_OK)
                return r;
        } else if (f->count == 0 || f->index == NULL || f->count > DP_MAX_SEGMENTS) {
            return dp_fusion_plan(f, &one, 1, scratch, 1, &nb, ctx->msg, sizeof ctx->msg);
        } else {
            for (uint32_t k = 1; k < f->count; k++)
                if (f->index[k] <= f->index[k - 1])
                    return dp_fail(ctx, DP_ERR_STRATEGY, "fusion by index: the list is not ascending: %u "
                                   "(position %u) after %u; end indices must strictly increase",
                                   f->index[k], k, f->index[k - 1]);
        }
        for (uint32_t k = 0; k < f->count; k++) {
            if (f->kind == DP_FUSION_INDEX)
                ctx->fusion_index[k] = f->index[k];
            else
                ctx->fusion_percent[k] = f->percent[k];
        }
        copy.index = f->kind == DP_FUSION_INDEX ? ctx->fusion_index : NULL;
        copy.percent = f->kind == DP_FUSION_SIZE ? ctx->fusion_percent : NULL;
    } else if ((unsigned)f->kind >= DP_FUSION_KIND_COUNT) {
        return dp_fail(ctx, DP_ERR_STRATEGY, "fusion: unknown strategy kind %u; use default, index, size or threshold",
                       (unsigned)f->kind);
    } else if (f->kind == DP_FUSION_THRESHOLD && f->threshold_bytes == 0) {
        return dp_fail(ctx, DP_ERR_STRATEGY, "fusion by threshold: the threshold is 0 bytes; it must be > 0 "
                       "(1 gives one bucket per gradient)");
    }
    ctx->fusion = copy;
    ctx->msg[0] = '\0';
    return DP_OK;
}

dp_result dp_prepare(dp_ctx *ctx)
{
    if (ctx == NULL)
        return DP_ERR_ARGUMENT;
    if (ctx->phase != DP_PHASE_REGISTER)
        return dp_fail(ctx, DP_ERR_STATE, "dp_prepare: already prepared");
    if (ctx->ntensors == 0)
        return dp_fail(ctx, DP_ERR_STATE, "dp_prepare: no tensors registered; dp_register the model's tensors first");
    dp_bucket *b = ctx->cfg.alloc(ctx->cfg.alloc_ud, sizeof(dp_bucket) * ctx->ntensors);
    if (b == NULL)
        return dp_fail(ctx, DP_ERR_NOMEM, "dp_prepare: the allocator returned NULL for %u buckets", ctx->ntensors);
    uint32_t nb = 0;
    dp_result r = plan(ctx, b, &nb);
    if (r != DP_OK) {
        ctx->cfg.free(ctx->cfg.alloc_ud, b);
        return r;
    }
    const dp_bucket *last = &b[nb - 1];
    uint64_t total = last->offset + (last->bytes + DP_BUCKET_ALIGN - 1) / DP_BUCKET_ALIGN * DP_BUCKET_ALIGN;
    unsigned char *buf = ctx->cfg.alloc(ctx->cfg.alloc_ud, total ? (size_t)total : 1);
    if (buf == NULL) {
        ctx->cfg.free(ctx->cfg.alloc_ud, b);
        return dp_fail(ctx, DP_ERR_NOMEM, "dp_prepare: the allocator returned NULL for the %llu-byte bucket buffer",
                       (unsigned long long)total);
    }
    memset(buf, 0, total ? (size_t)total : 1);
    ctx->buckets = b;
    ctx->nbuckets = nb;
    ctx->buffer = buf;
    ctx->buffer_bytes = total;
    ctx->cur = nb;
    ctx->phase = DP_PHASE_READY;
    ctx->msg[0] = '\0';
    return DP_OK;
}

uint32_t dp_bucket_count(const dp_ctx *ctx)
{
    return ctx ? ctx->nbuckets : 0;
}

const dp_bucket *dp_bucket_at(const dp_ctx *ctx, uint32_t b)
{
    return ctx && b < ctx->nbuckets ? &ctx->buckets[b] : NULL;
}

void *dp_bucket_buffer(dp_ctx *ctx)
{
    return ctx ? ctx->buffer : NULL;
}

/* Copies bucket b between the bucket buffer and the tensors' grad (which = 0) or param (1)
 * arrays; to_buffer chooses the direction. */
static dp_result copy_bucket(dp_ctx *ctx, uint32_t b, int which, int to_buffer)
{
    if (ctx == NULL)
        return DP_ERR_ARGUMENT;
    if (ctx->phase == DP_PHASE_REGISTER)
        return dp_fail(ctx, DP_ERR_STATE, "dp: pack/unpack before dp_prepare");
    if (b >= ctx->nbuckets)
        return dp_fail(ctx, DP_ERR_ARGUMENT, "dp: bucket %u of %u", b, ctx->nbuckets);
    const dp_bucket *bk = &ctx->buckets[b];
    unsigned char *p = ctx->buffer + bk->offset;
    for (uint32_t i = bk->first; i <= bk->last && i < ctx->ntensors; i++) {
        dp_tensor *t = &ctx->tensors[i];
        size_t n = t->count * ctx->esize;
        if (n == 0)
            continue;
        void *mem = which ? t->param : t->grad;
        if (to_buffer)
            memcpy(p, mem, n);
        else
            memcpy(mem, p, n);
        p += n;
    }
    return DP_OK;
}

dp_result dp_pack(dp_ctx *ctx, uint32_t b) { return copy_bucket(ctx, b, 0, 1); }
dp_result dp_unpack(dp_ctx *ctx, uint32_t b) { return copy_bucket(ctx, b, 0, 0); }
dp_result dp_pack_params(dp_ctx *ctx, uint32_t b) { return copy_bucket(ctx, b, 1, 1); }
dp_result dp_unpack_params(dp_ctx *ctx, uint32_t b) { return copy_bucket(ctx, b, 1, 0); }

static dp_result comm_fail(dp_ctx *ctx, const char *what, uint32_t b, ncl_result rc)
{
    return dp_fail(ctx, DP_ERR_COMM, "%s of bucket %u (gradients %u..%u) failed: %s: %s", what, b,
                   ctx->buckets[b].first, ctx->buckets[b].last, ncl_strerror(rc), ncl_comm_last_error(ctx->comm));
}

static dp_result need_comm(dp_ctx *ctx, const char *fn)
{
    if (ctx->phase == DP_PHASE_REGISTER)
        return dp_fail(ctx, DP_ERR_STATE, "%s: call dp_prepare first", fn);
    if (ctx->comm == NULL)
        return dp_fail(ctx, DP_ERR_STATE, "%s: the context has no communicator (created with comm NULL)", fn);
    return DP_OK;
}

dp_result dp_broadcast_params(dp_ctx *ctx, int root)
{
    if (ctx == NULL)
        return DP_ERR_ARGUMENT;
    dp_result r = need_comm(ctx, "dp_broadcast_params");
    if (r != DP_OK)
        return r;
    if (ctx->phase == DP_PHASE_STEP)
        return dp_fail(ctx, DP_ERR_STATE, "dp_broadcast_params: a step is running; finish it first");
    if (root < 0 || root >= ctx->size)
        return dp_fail(ctx, DP_ERR_ARGUMENT, "dp_broadcast_params: root %d is not a rank (0..%d)", root, ctx->size - 1);
    for (uint32_t b = 0; b < ctx->nbuckets; b++) {
        const dp_bucket *bk = &ctx->buckets[b];
        size_t count = (size_t)(bk->bytes / ctx->esize);
        if (count == 0)
            continue;
        void *buf = ctx->buffer + bk->offset;
        if (ctx->rank == root)
            dp_pack_params(ctx, b);
        ncl_result rc = ncl_broadcast(buf, buf, count, ctx->cfg.dtype, root, ctx->comm);
        if (rc != NCL_SUCCESS)
            return comm_fail(ctx, "broadcast", b, rc);
        if (ctx->rank != root)
            dp_unpack_params(ctx, b);
    }
    ctx->msg[0] = '\0';
    return DP_OK;
}

/* Bucket cur finished: divide by the rank count when the engine summed, then unpack. */
static void finish_bucket(dp_ctx *ctx, uint32_t b)
{
    const dp_bucket *bk = &ctx->buckets[b];
    size_t count = (size_t)(bk->bytes / ctx->esize);
    if (ctx->cfg.op == NCL_SUM && ctx->size > 1) {
        /* One division per element, like the engine's avg (LOCAL_DIV): sum / p, not sum * (1/p),
         * so dp's sum-then-divide and NCL_AVG give the same bits. */
        if (ctx->cfg.dtype == NCL_FLOAT32) {
            float *g = (float *)(void *)(ctx->buffer + bk->offset);
            float p = (float)ctx->size;
            for (size_t i = 0; i < count; i++)
                g[i] = g[i] / p;
        } else {
            double *g = (double *)(void *)(ctx->buffer + bk->offset);
            double p = (double)ctx->size;
            for (size_t i = 0; i < count; i++)
                g[i] = g[i] / p;
        }
    }
    dp_unpack(ctx, b);
}

/* Packs and launches buckets from ctx->cur on until one is in flight (empty buckets finish at
 * once). */
static dp_result launch_from(dp_ctx *ctx)
{
    for (; ctx->cur < ctx->nbuckets; ctx->cur++) {
        const dp_bucket *bk = &ctx->buckets[ctx->cur];
        size_t count = (size_t)(bk->bytes / ctx->esize);
        if (count == 0)
            continue;
        dp_pack(ctx, ctx->cur);
        void *buf = ctx->buffer + bk->offset;
        ncl_result rc = ncl_allreduce_start(buf, buf, count, ctx->cfg.dtype, ctx->cfg.op, ctx->comm);
        if (rc != NCL_SUCCESS) {
            ctx->phase = DP_PHASE_READY;
            return comm_fail(ctx, "allreduce", ctx->cur, rc);
        }
        ctx->running = 1;
        return DP_OK;
    }
    return DP_OK;
}

dp_result dp_step_start(dp_ctx *ctx)
{
    if (ctx == NULL)
        return DP_ERR_ARGUMENT;
    dp_result r = need_comm(ctx, "dp_step_start");
    if (r != DP_OK)
        return r;
    if (ctx->phase == DP_PHASE_STEP)
        return dp_fail(ctx, DP_ERR_STATE, "dp_step_start: the previous step is still running; "
                       "dp_step_test/dp_step_wait until it is done");
    ctx->phase = DP_PHASE_STEP;
    ctx->cur = 0;
    ctx->running = 0;
    return launch_from(ctx);
}

/* The bucket in flight finished with rc: unpack it and launch the next. */
static dp_result advance(dp_ctx *ctx, ncl_result rc, int *done)
{
    ctx->running = 0;
    if (rc != NCL_SUCCESS) {
        ctx->phase = DP_PHASE_READY;
        return comm_fail(ctx, "allreduce", ctx->cur, rc);
    }
    finish_bucket(ctx, ctx->cur);
    ctx->cur++;
    dp_result r = launch_from(ctx);
    if (r == DP_OK && !ctx->running) {
        ctx->phase = DP_PHASE_READY;
        *done = 1;
    }
    return r;
}

dp_result dp_step_test(dp_ctx *ctx, int *done)
{
    if (ctx == NULL || done == NULL)
        return DP_ERR_ARGUMENT;
    *done = 0;
    if (ctx->phase != DP_PHASE_STEP)
        return dp_fail(ctx, DP_ERR_STATE, "dp_step_test: no step is running; call dp_step_start");
    if (!ctx->running) { /* every bucket was empty */
        ctx->phase = DP_PHASE_READY;
        *done = 1;
        return DP_OK;
    }
    int fin = 0;
    ncl_result rc = ncl_test(ctx->comm, &fin);
    if (!fin && rc == NCL_SUCCESS)
        return DP_OK;
    return advance(ctx, rc, done);
}

dp_result dp_step_wait(dp_ctx *ctx)
{
    if (ctx == NULL)
        return DP_ERR_ARGUMENT;
    if (ctx->phase != DP_PHASE_STEP)
        return dp_fail(ctx, DP_ERR_STATE, "dp_step_wait: no step is running; call dp_step_start");
    int done = !ctx->running;
    if (done)
        ctx->phase = DP_PHASE_READY;
    while (!done) {
        dp_result r = advance(ctx, ncl_wait(ctx->comm), &done);
        if (r != DP_OK)
            return r;
    }
    return DP_OK;
}

dp_result dp_apply(dp_ctx *ctx, dp_update_fn update, void *ud)
{
    if (ctx == NULL)
        return DP_ERR_ARGUMENT;
    if (ctx->phase != DP_PHASE_READY)
        return dp_fail(ctx, DP_ERR_STATE, "dp_apply: %s", ctx->phase == DP_PHASE_STEP ?
                       "the step's allreduces are still running" : "call dp_prepare first");
    if (update)
        for (uint32_t i = 0; i < ctx->ntensors; i++)
            update(ud, i, &ctx->tensors[i], ctx->cfg.dtype);
    return DP_OK;
}

dp_result dp_step(dp_ctx *ctx, dp_update_fn update, void *ud)
{
    dp_result r = dp_step_start(ctx);
    if (r == DP_OK)
        r = dp_step_wait(ctx);
    if (r == DP_OK)
        r = dp_apply(ctx, update, ud);
    return r;
}

/* ---- SGD ---------------------------------------------------------------------------------- */

dp_result dp_sgd_init(dp_sgd *sgd, dp_ctx *ctx, double lr, double momentum)
{
    if (sgd == NULL || ctx == NULL)
        return DP_ERR_ARGUMENT;
    memset(sgd, 0, sizeof *sgd);
    if (!(lr > 0) || !(momentum >= 0) || momentum >= 1)
        return dp_fail(ctx, DP_ERR_ARGUMENT, "dp_sgd_init: lr must be > 0 and momentum in [0, 1)");
    sgd->lr = lr;
    sgd->momentum = momentum;
    sgd->ctx = ctx;
    if (momentum == 0)
        return DP_OK;
    size_t n = ctx->ntensors ? ctx->ntensors : 1, total = 0;
    sgd->offset = ctx->cfg.alloc(ctx->cfg.alloc_ud, sizeof(size_t) * n);
    if (sgd->offset == NULL)
        return dp_fail(ctx, DP_ERR_NOMEM, "dp_sgd_init: the allocator returned NULL");
    for (uint32_t i = 0; i < ctx->ntensors; i++) {
        sgd->offset[i] = total;
        total += ctx->tensors[i].count;
    }
    sgd->velocity = ctx->cfg.alloc(ctx->cfg.alloc_ud, (total ? total : 1) * ctx->esize);
    if (sgd->velocity == NULL) {
        dp_sgd_release(sgd);
        return dp_fail(ctx, DP_ERR_NOMEM, "dp_sgd_init: the allocator returned NULL for the momentum");
    }
    memset(sgd->velocity, 0, (total ? total : 1) * ctx->esize);
    return DP_OK;
}

void dp_sgd_release(dp_sgd *sgd)
{
    if (sgd == NULL || sgd->ctx == NULL)
        return;
    dp_ctx *ctx = sgd->ctx;
    if (sgd->velocity)
        ctx->cfg.free(ctx->cfg.alloc_ud, sgd->velocity);
    if (sgd->offset)
        ctx->cfg.free(ctx->cfg.alloc_ud, sgd->offset);
    sgd->velocity = NULL;
    sgd->offset = NULL;
}

void dp_sgd_update(void *ud, uint32_t index, const dp_tensor *t, ncl_dtype dtype)
{
    dp_sgd *s = ud;
    if (dtype == NCL_FLOAT32) {
        float *p = t->param;
        const float *g = t->grad;
        float lr = (float)s->lr, mu = (float)s->momentum;
        if (s->velocity == NULL) {
            for (size_t i = 0; i < t->count; i++)
                p[i] -= lr * g[i];
        } else {
            float *v = (float *)s->velocity + s->offset[index];
            for (size_t i = 0; i < t->count; i++) {
                v[i] = mu * v[i] + g[i];
                p[i] -= lr * v[i];
            }
        }
    } else {
        double *p = t->param;
        const double *g = t->grad;
        if (s->velocity == NULL) {
            for (size_t i = 0; i < t->count; i++)
                p[i] -= s->lr * g[i];
        } else {
            double *v = (double *)s->velocity + s->offset[index];
            for (size_t i = 0; i < t->count; i++) {
                v[i] = s->momentum * v[i] + g[i];
                p[i] -= s->lr * v[i];
            }
        }
    }
}
