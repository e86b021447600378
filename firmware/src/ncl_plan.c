/* ncl_plan.c — the planner: its input from a config and a backend's capabilities, the algorithm registry, algorithm choice by cost model, and plan construction. */
#include "ncl_algo.h"

#include "ncl/ncl_hal.h"

#include <string.h>

/* The registry, in tie-break order. A board built with a subset of the families (sources.cmake's
 * NCL_ALGO_FAMILIES) defines NCL_NO_ALGO_<FAMILY> for each one left out. */
static const ncl_algo_desc *const algo_table[] = {
#ifndef NCL_NO_ALGO_RING
    &ncl_algo_ring_allreduce, &ncl_algo_ring_reduce_scatter, &ncl_algo_ring_allgather,
#endif
#ifndef NCL_NO_ALGO_CHAIN
    &ncl_algo_chain_broadcast,
#endif
#ifndef NCL_NO_ALGO_TREE
    &ncl_algo_tree_broadcast,
#endif
#ifndef NCL_NO_ALGO_RING
    &ncl_algo_ring_reduce,
#endif
#ifndef NCL_NO_ALGO_TREE
    &ncl_algo_tree_reduce,
#endif
#ifndef NCL_NO_ALGO_HD
    &ncl_algo_hd_allreduce, &ncl_algo_hd_reduce_scatter, &ncl_algo_hd_allgather,
#endif
#ifndef NCL_NO_ALGO_MESH
    &ncl_algo_mesh_allreduce, &ncl_algo_mesh_reduce_scatter, &ncl_algo_mesh_allgather, &ncl_algo_mesh_alltoall,
#endif
#ifndef NCL_NO_ALGO_PAIRWISE
    &ncl_algo_pairwise_alltoall,
#endif
#ifndef NCL_NO_ALGO_SAG
    &ncl_algo_sag_broadcast,
#endif
#ifndef NCL_NO_ALGO_DBTREE
    &ncl_algo_dbtree_allreduce,
#endif
#ifndef NCL_NO_ALGO_DET
    &ncl_algo_det_allreduce,
#endif
#ifndef NCL_NO_ALGO_HIER
    &ncl_algo_hier_allreduce, &ncl_algo_hier_broadcast,
#endif
#ifndef NCL_NO_ALGO_USER
    &ncl_algo_user_allreduce, &ncl_algo_user_broadcast, &ncl_algo_user_reduce, &ncl_algo_user_reduce_scatter,
    &ncl_algo_user_allgather,
#endif
    NULL, /* keeps the table non-empty whatever is left out */
};

const ncl_algo_desc *ncl_algo_find(ncl_coll coll, ncl_algo algo)
{
    for (size_t i = 0; algo_table[i]; i++)
        if (algo_table[i]->coll == coll && algo_table[i]->algo == algo)
            return algo_table[i];
    return NULL;
}

int ncl_algo_supported(ncl_coll coll, ncl_algo algo)
{
    if ((unsigned)coll >= NCL_COLL_COUNT)
        return 0;
    return algo == NCL_ALGO_AUTO || ncl_algo_find(coll, algo) != NULL;
}

void ncl_plan_env_init(ncl_plan_env *env, const ncl_config *cfg, const ncl_hal_caps *caps)
{
    memset(env, 0, sizeof *env);
    const uint32_t queues = caps ? caps->max_queues : NCL_MAX_QUEUES;
    env->max_queues = queues < NCL_MAX_QUEUES ? queues : NCL_MAX_QUEUES;
    env->channels = cfg->channels < env->max_queues ? cfg->channels : env->max_queues;
    env->slice_bytes = cfg->slice_bytes;
    env->scratch_bytes = caps ? caps->scratch_bytes : 0;
    env->link_alpha_ns = cfg->link_alpha_ns;
    env->link_gbps = cfg->link_gbps;
    env->mem_gbps = cfg->mem_gbps;
    env->costs = cfg->costs;
    env->cost_count = cfg->cost_count;
    for (int c = 0; c < NCL_COLL_COUNT; c++)
        env->latency_path_bytes[c] = cfg->latency_path_bytes[c];
    env->deterministic = cfg->deterministic;
    env->wide_accumulation = cfg->wide_accumulation;
    env->local_size = cfg->local_size;
    env->inter_algo = cfg->inter_algo;
    env->schedule = cfg->schedule;
    env->inline_ops = caps ? caps->inline_ops : NULL;
    env->inline_align = caps ? caps->inline_align : 0;
    env->reduce_write = caps && (caps->features & NCL_HAL_FEAT_REDUCE_WRITE);
    env->dma_engines = caps ? caps->dma_engines : 0;
    /* what the config asks, within what the backend's queues hold (caps NULL: the config's) */
    uint32_t depth = caps ? (caps->queue_depth ? caps->queue_depth : 1) : NCL_MAX_IN_FLIGHT;
    uint32_t want = cfg->in_flight ? cfg->in_flight : depth;
    want = want < depth ? want : depth;
    env->in_flight = want < NCL_MAX_IN_FLIGHT ? want : NCL_MAX_IN_FLIGHT;
}

ncl_result ncl_plan_env_zones(ncl_plan_env *env, const ncl_config *cfg, const ncl_hal_caps *caps, int nranks)
{
    const uint32_t hops = cfg->zone_hops ? cfg->zone_hops : (uint32_t)(nranks - 1);
    env->zone_bytes = 0;
    env->zone_hops = hops;
    if (!caps || !(caps->features & NCL_HAL_FEAT_ZONES) || cfg->landing_zone_bytes == NCL_ZONES_OFF || nranks < 2)
        return NCL_SUCCESS;
    /* their users copy out of them on a helper queue per channel (ncl_helper_room): without room
     * for one none would, and the scratch is better left to the algorithms */
    if (2 * env->channels > env->max_queues || (env->dma_engines && 2 * env->channels > env->dma_engines))
        return NCL_SUCCESS;
    const uint64_t zones = 2ull * env->channels, scratch = env->scratch_bytes;
    uint64_t each = cfg->landing_zone_bytes / 64 * 64; /* whole elements of every dtype, aligned */
    if (cfg->landing_zone_bytes) {
        if (each == 0 || each > scratch / 2 / zones)
            return NCL_ERR_INVALID_ARGUMENT;
    } else {
        /* what arrives while a notify travels its links back (p-1 on a one-way ring): hops x
         * alpha x bandwidth (ns x GB/s = bytes; each factor below 2^32, so one product cannot
         * wrap), within the cap */
        const uint64_t cap = scratch / 4 / zones / 64 * 64;
        const uint64_t hop = (uint64_t)(cfg->link_alpha_ns ? cfg->link_alpha_ns : 1) * (cfg->link_gbps ? cfg->link_gbps : 1);
        each = hop > cap / hops ? cap : ncl_min_u64((hop * hops + 4095) / 4096 * 4096, cap);
        if (each < 4096) /* too small to carry a useful first step */
            each = 0;
    }
    env->zone_bytes = each;
    return NCL_SUCCESS;
}

/* pos[c * n + r] = the position of r on ring c (order[c * n + i] is the one at position i); 0
 * when a ring does not name each of 0..n-1 exactly once. */
static int ring_inverse(const int32_t *order, uint32_t count, size_t n, int32_t *pos)
{
    for (size_t i = 0; i < (size_t)count * n; i++)
        pos[i] = -1;
    for (size_t k = 0; k < count; k++) {
        for (size_t i = 0; i < n; i++) {
            int32_t r = order[k * n + i];
            if (r < 0 || (size_t)r >= n || pos[k * n + (size_t)r] >= 0)
                return 0;
            pos[k * n + (size_t)r] = (int32_t)i;
        }
    }
    return 1;
}

/* Whether pos is the inverse of the count orders of n in `order` (so each names every one once). */
static int ring_is_inverse(const int32_t *order, const int32_t *pos, uint32_t count, size_t n)
{
    for (size_t k = 0; k < count; k++)
        for (size_t i = 0; i < n; i++) {
            int32_t r = order[k * n + i];
            if (r < 0 || (size_t)r >= n || pos[k * n + (size_t)r] != (int32_t)i)
                return 0;
        }
    return 1;
}

ncl_result ncl_plan_env_rings(ncl_plan_env *env, const ncl_config *cfg, int nranks, int32_t *ring_pos,
                              int32_t *local_pos)
{
    const int32_t *given = cfg ? cfg->ring_positions : NULL;
    if (!env || !cfg || nranks < 1 || (cfg->ring_count && (!cfg->rings || (!ring_pos && !given))) ||
        (given && !cfg->ring_count) ||
        (cfg->local_ring_count && (!cfg->local_rings || !local_pos || !cfg->local_size)))
        return NCL_ERR_INVALID_ARGUMENT;
    if (!(given ? ring_is_inverse(cfg->rings, given, cfg->ring_count, (size_t)nranks)
                : ring_inverse(cfg->rings, cfg->ring_count, (size_t)nranks, ring_pos)) ||
        !ring_inverse(cfg->local_rings, cfg->local_ring_count, cfg->local_size, local_pos))
        return NCL_ERR_INVALID_ARGUMENT;
    env->ring_order = cfg->ring_count ? cfg->rings : NULL;
    env->ring_pos = cfg->ring_count ? (given ? given : ring_pos) : NULL;
    env->ring_count = cfg->ring_count;
    env->ring_weights = cfg->ring_count ? cfg->ring_weights : NULL;
    env->local_order = cfg->local_ring_count ? cfg->local_rings : NULL;
    env->local_pos = cfg->local_ring_count ? local_pos : NULL;
    env->local_ring_count = cfg->local_ring_count;
    return NCL_SUCCESS;
}

/* Built-in alpha-beta estimates in ns (REFERENCE.md) from the link's alpha and bandwidth, for the
 * algorithms whose speed does not hinge on the topology. Integer math: bytes / GB/s = ns. */
static uint64_t ceil_log2(uint64_t p)
{
    uint64_t lg = 0;
    while ((1ull << lg) < p)
        lg++;
    return lg;
}

static uint64_t cost_tree(const ncl_plan *p, uint64_t bytes)
{
    return ceil_log2((uint64_t)p->nranks) * (p->link_alpha_ns + bytes / p->link_gbps);
}

/* Pipelined chain of p ranks (broadcast from its head, or reduce to its tail), k segments:
 * (p - 2 + k)(alpha + n beta / k). */
static uint64_t cost_chain(const ncl_plan *p, uint64_t bytes, uint32_t k)
{
    uint64_t hops = (uint64_t)(p->nranks > 2 ? p->nranks - 2 : 0) + k;
    return hops * (p->link_alpha_ns + bytes / p->link_gbps / k);
}

/* Ring: steps x alpha + (p-1)/p n beta per pass (allreduce: two passes). */
static uint64_t cost_ring(const ncl_plan *p, uint64_t bytes)
{
    uint64_t n = (uint64_t)p->nranks, passes = p->coll == NCL_COLL_ALLREDUCE ? 2 : 1;
    if (n < 2)
        return 0;
    return passes * ((n - 1) * p->link_alpha_ns + (n - 1) * (bytes / n) / p->link_gbps);
}

/* n beta in ns, beta in fs per byte */
static uint64_t per_byte_ns(uint64_t bytes, uint64_t beta_fs)
{
    return bytes / 1000u * beta_fs / 1000u + bytes % 1000u * beta_fs / 1000000u;
}

/* t + the entry's fixed term (signed; never below 0). */
static uint64_t with_fixed(const ncl_cost *c, uint64_t t)
{
    if (c->fixed_ns >= 0)
        return t + (uint64_t)c->fixed_ns;
    const uint64_t off = 0u - (uint64_t)c->fixed_ns;
    return t > off ? t - off : 0;
}

/* A cost table entry at `bytes`, in place: linear, or the best segment count of a pipeline. */
static uint64_t cost_entry_inplace(const ncl_cost *c, uint64_t bytes)
{
    uint64_t nbeta = per_byte_ns(bytes, c->beta_fs);
    if (c->hops == 0)
        return with_fixed(c, c->alpha_ns + nbeta);
    uint64_t extra = per_byte_ns(bytes, c->extra_beta_fs);
    if (c->posted) /* the engine's segment count (ncl_pipeline_prepare_posted) and its time */
        return with_fixed(c, extra + ncl_pipeline_posted_ns(c->hops, nbeta, c->alpha_ns,
                                                            ncl_pipeline_segments_posted(c->hops, nbeta, c->alpha_ns,
                                                                                         c->posted)));
    uint64_t head = c->hops > 1 ? c->hops - 1u : 0u, alpha = c->alpha_ns ? c->alpha_ns : 1;
    uint64_t k = ncl_isqrt(head * nbeta / alpha); /* the optimum of the convex cost, rounded */
    uint64_t best = UINT64_MAX;
    for (uint64_t j = k > 1 ? k : 1; j <= k + 1; j++) {
        uint64_t t = (head + j) * (c->alpha_ns + nbeta / j);
        best = t < best ? t : best;
    }
    return with_fixed(c, extra + best);
}

/* ... and out of place: its oop terms added or, when negative, taken off (never below 0). */
static uint64_t cost_entry(const ncl_cost *c, uint64_t bytes, int inplace)
{
    uint64_t t = cost_entry_inplace(c, bytes);
    if (inplace)
        return t;
    uint64_t up = 0, down = 0;
    if (c->oop_ns >= 0)
        up += (uint64_t)c->oop_ns;
    else
        down += 0u - (uint64_t)c->oop_ns;
    if (c->oop_beta_fs >= 0)
        up += per_byte_ns(bytes, (uint64_t)c->oop_beta_fs);
    else
        down += per_byte_ns(bytes, 0u - (uint64_t)c->oop_beta_fs);
    t += up;
    return t > down ? t - down : 0;
}

/* The size a cost line is priced at: nccl-tests' size (allgather/reduce-scatter: the gathered;
 * alltoall: a rank's whole buffer). */
static uint64_t cost_bytes(const ncl_plan *p)
{
    return p->count * p->esize *
           (p->coll == NCL_COLL_ALLGATHER || p->coll == NCL_COLL_REDUCE_SCATTER || p->coll == NCL_COLL_ALLTOALL
                ? (uint64_t)p->nranks
                : 1u);
}

/* The algorithm's `line`-th regime at `bytes`, raised to the floors that bound it (ncl_cost.floor:
 * 1 every line of the algorithm, line + 2 this one); UINT64_MAX when it has no such line. */
static uint64_t cost_line_ns(const ncl_plan_env *env, ncl_coll coll, ncl_algo algo, uint8_t path, uint32_t line,
                             uint64_t bytes, int inplace)
{
    uint64_t value = UINT64_MAX, floor = 0;
    uint32_t seen = 0;
    for (uint32_t i = 0; i < env->cost_count; i++) {
        const ncl_cost *c = &env->costs[i];
        if (c->coll != coll || c->algo != algo || c->path != path)
            continue;
        if (c->floor == 1u || (c->floor >= 2u && c->floor - 2u == line)) {
            uint64_t f = cost_entry(c, bytes, inplace);
            floor = f > floor ? f : floor;
        } else if (!c->floor && seen++ == line) {
            value = cost_entry(c, bytes, inplace);
        }
    }
    return value == UINT64_MAX || value > floor ? value : floor;
}

/* The schedule the algorithm's `line`-th regime prices (its ncl_cost.variant). */
static uint8_t cost_line_variant(const ncl_plan_env *env, ncl_coll coll, ncl_algo algo, uint8_t path, uint32_t line)
{
    uint32_t seen = 0;
    for (uint32_t i = 0; i < env->cost_count; i++) {
        const ncl_cost *c = &env->costs[i];
        if (c->coll == coll && c->algo == algo && c->path == path && !c->floor && seen++ == line)
            return c->variant;
    }
    return NCL_COST_VARIANT_DEFAULT;
}

/* An algorithm's cost from the table: the least of its lines (regimes), each raised to its
 * floors, and which line that is (NCL_COST_LINE_NONE and UINT64_MAX when the table has none). */
static uint64_t cheapest_line(const ncl_plan_env *env, ncl_coll coll, ncl_algo algo, uint8_t path, uint64_t bytes,
                              int inplace, uint8_t *which)
{
    uint64_t best = UINT64_MAX;
    *which = NCL_COST_LINE_NONE;
    for (uint32_t line = 0; env && line < NCL_COST_LINE_NONE; line++) {
        uint64_t t = cost_line_ns(env, coll, algo, path, line, bytes, inplace);
        if (t == UINT64_MAX)
            break;
        if (t < best) {
            best = t;
            *which = (uint8_t)line;
        }
    }
    return best;
}

/* The lines a call is priced by (ncl_cost.path): the latency path's when it is on that path and
 * the table has such lines for its collective, else the bandwidth path's. */
static uint8_t cost_path(const ncl_plan_env *env, const ncl_plan *p)
{
    if (!env || p->count * p->esize > env->latency_path_bytes[p->coll])
        return NCL_COST_PATH_BANDWIDTH;
    for (uint32_t i = 0; i < env->cost_count; i++)
        if (env->costs[i].coll == p->coll && env->costs[i].path == NCL_COST_PATH_LATENCY)
            return NCL_COST_PATH_LATENCY;
    return NCL_COST_PATH_BANDWIDTH;
}

uint64_t ncl_plan_cost_ns(const ncl_plan *p, const ncl_plan_env *env)
{
    uint8_t line;
    uint64_t bytes = cost_bytes(p);
    uint64_t best = cheapest_line(env, (ncl_coll)p->coll, (ncl_algo)p->algo, cost_path(env, p), bytes, p->inplace, &line);
    if (best != UINT64_MAX)
        return best;
    switch (p->algo) {
    case NCL_ALGO_TREE: return cost_tree(p, p->count * p->esize);
    case NCL_ALGO_CHAIN: return cost_chain(p, p->count * p->esize, p->segments ? p->segments : 1);
    case NCL_ALGO_MESH: /* alltoall: every block leaves at once, alpha + (p-1)/p n beta */
        if (p->coll != NCL_COLL_ALLTOALL)
            return UINT64_MAX;
        return p->link_alpha_ns + (uint64_t)(p->nranks - 1) * (bytes / (uint64_t)p->nranks) / p->link_gbps;
    case NCL_ALGO_PAIRWISE: return cost_ring(p, bytes); /* p - 1 steps of n/p */
    case NCL_ALGO_RING:
        if (p->coll == NCL_COLL_REDUCE) /* the pipelined chain to the root */
            return cost_chain(p, p->count * p->esize, p->segments ? p->segments : 1);
        return cost_ring(p, bytes);
    default: return UINT64_MAX;
    }
}

/* AUTO: every algorithm of the collective that accepts the plan and has a cost; the cheapest
 * wins, the registry's order breaks ties. Every rank must choose the same from what it alone
 * knows: of a broadcast or reduce only the root knows the placement (the others have one buffer
 * either way), so those are chosen as out of place on every rank. */
static ncl_algo choose_auto(const ncl_plan *plan, const ncl_plan_env *env)
{
    ncl_algo best = NCL_ALGO_AUTO;
    uint64_t best_cost = UINT64_MAX;
    int rooted = plan->coll == NCL_COLL_BROADCAST || plan->coll == NCL_COLL_REDUCE;
    for (size_t i = 0; algo_table[i]; i++) {
        if (algo_table[i]->coll != plan->coll)
            continue;
        ncl_plan probe = *plan;
        probe.algo = algo_table[i]->algo;
        if (rooted)
            probe.inplace = 0;
        if (algo_table[i]->prepare(&probe) != NCL_SUCCESS)
            continue;
        uint64_t c = ncl_plan_cost_ns(&probe, env);
        if (best == NCL_ALGO_AUTO || c < best_cost) {
            best = (ncl_algo)algo_table[i]->algo;
            best_cost = c;
        }
    }
    return best == NCL_ALGO_AUTO ? NCL_ALGO_RING : best;
}

ncl_result ncl_plan_make(ncl_plan *plan, ncl_coll coll, ncl_algo algo, int nranks, int rank,
                         int root, uint64_t count, ncl_dtype dtype, ncl_op op, int inplace,
                         const ncl_plan_env *env)
{
    memset(plan, 0, sizeof *plan);
    if (!env || (unsigned)coll >= NCL_COLL_COUNT || (unsigned)algo >= NCL_ALGO_COUNT ||
        (unsigned)dtype >= NCL_DTYPE_COUNT || (unsigned)op >= NCL_OP_COUNT || nranks < 1 ||
        rank < 0 || rank >= nranks || env->channels < 1 || env->channels > env->max_queues ||
        env->max_queues > NCL_MAX_QUEUES)
        return NCL_ERR_INVALID_ARGUMENT;
    plan->coll = (uint8_t)coll;
    plan->dtype = (uint8_t)dtype;
    plan->avg = op == NCL_AVG;
    plan->op = (uint8_t)(op == NCL_AVG ? NCL_SUM : op);
    plan->inplace = inplace ? 1 : 0;
    plan->nranks = nranks;
    plan->rank = rank;
    plan->root = root;
    plan->count = count;
    plan->esize = (uint32_t)ncl_dtype_size(dtype);
    plan->slice_elems = env->slice_bytes / plan->esize ? env->slice_bytes / plan->esize : 1;
    plan->queues = env->channels; /* an upper bound; prepare() settles the real number */
    plan->max_queues = env->max_queues;
    plan->scratch_bytes = env->scratch_bytes;
    if (env->zone_bytes) { /* the zones sit at the top of scratch, out of every algorithm's reach */
        plan->zone_bytes = env->zone_bytes;
#ifndef NCL_NO_SPLIT /* only pairs of sub-communicators ask (chain broadcast) */
        plan->zone_far = env->zone_hops > 1;
#endif
        plan->zone_base = env->scratch_bytes - 2ull * env->channels * env->zone_bytes;
        plan->scratch_bytes = plan->zone_base;
        for (uint32_t c = 0; c < env->channels; c++) {
            uint32_t uses = env->zone_uses ? env->zone_uses[c] : 0;
            plan->zone_state[c] = (uint8_t)((uses & 1u ? NCL_ZONE_ODD : 0u) | (uses >= 2 ? NCL_ZONE_CREDIT : 0u));
        }
    }
    plan->link_alpha_ns = env->link_alpha_ns ? env->link_alpha_ns : 1;
    plan->link_gbps = env->link_gbps ? env->link_gbps : 1;
    plan->mem_gbps = env->mem_gbps;
    plan->dma_engines = env->dma_engines;
    plan->in_flight = env->in_flight ? env->in_flight : 1;
    plan->ring_order = env->ring_order;
    plan->ring_pos = env->ring_pos;
    plan->ring_count = env->ring_order ? env->ring_count : 0;
    plan->ring_weights = env->ring_order ? env->ring_weights : NULL;
    plan->local_size = env->local_size;
    plan->inter_algo = env->inter_algo;
    plan->local_order = env->local_order;
    plan->local_pos = env->local_pos;
    plan->local_ring_count = env->local_order ? env->local_ring_count : 0;
    plan->schedule = env->schedule;
    plan->inline_reduce = !env->inline_ops || (env->inline_ops[dtype] >> plan->op & 1u);
    plan->inline_align = env->inline_align > 1 ? env->inline_align : 1;
    plan->reduce_write = (uint8_t)(env->reduce_write && plan->inline_reduce);
    if (env->deterministic && coll == NCL_COLL_ALLREDUCE)
        algo = NCL_ALGO_DET; /* the one canonical reduction order */
    if (algo == NCL_ALGO_AUTO)
        algo = choose_auto(plan, env);
    const ncl_algo_desc *d = ncl_algo_find(coll, algo);
    if (!d)
        return NCL_ERR_UNSUPPORTED;
    plan->algo = (uint8_t)algo;
    /* wide accumulation changes the bits of sums and products only: max/min are exact in the
     * narrow type, and fp32 and wider types already accumulate in their own precision */
    plan->wide = env->wide_accumulation && algo == NCL_ALGO_DET &&
                 (dtype == NCL_FLOAT16 || dtype == NCL_BFLOAT16) && plan->op != NCL_MAX && plan->op != NCL_MIN;
    /* a pipeline's segment count follows the cost table's view of its hops when there is one
     * (the slowest link of the chain, not the nominal one); the table's beta is per byte of the
     * whole buffer, one chain carries 1/chain_div of it (default: a channel's share) */
    const uint8_t path = cost_path(env, plan);
    for (uint32_t i = 0; i < env->cost_count; i++) {
        const ncl_cost *c = &env->costs[i];
        if (c->coll == coll && c->algo == algo && c->path == path && c->hops > 0) {
            uint64_t per_chain_fs = c->beta_fs * (c->chain_div ? c->chain_div : env->channels);
            plan->link_alpha_ns = c->alpha_ns ? (uint32_t)(c->alpha_ns < UINT32_MAX ? c->alpha_ns : UINT32_MAX) : 1;
            plan->link_gbps = per_chain_fs && 1000000u / per_chain_fs ? (uint32_t)(1000000u / per_chain_fs) : 1;
            plan->posted_knee = c->posted;
        }
    }
    /* an algorithm with several regimes runs the one the table prices cheapest, so what runs is
     * what auto and `ringsim plan` priced */
    cheapest_line(env, coll, algo, path, cost_bytes(plan), plan->inplace, &plan->cost_line);
    plan->cost_variant = plan->cost_line == NCL_COST_LINE_NONE ? NCL_COST_VARIANT_DEFAULT
                                                               : cost_line_variant(env, coll, algo, path, plan->cost_line);
    return d->prepare(plan);
}
