/* ncl_comm.c — communicator lifetime, accessors and error recording. */
#include "ncl_comm.h"

#include "ncl_fmt.h"

#include <string.h>

ncl_result ncl_comm_create(ncl_comm **out, int nranks, int rank, const ncl_hal *hal,
                           const ncl_config *cfg)
{
    if (!out)
        return NCL_ERR_INVALID_ARGUMENT;
    *out = NULL;
    if (!hal || !hal->ops || !cfg || nranks < 1 || rank < 0 || rank >= nranks)
        return NCL_ERR_INVALID_ARGUMENT;
    if (cfg->size != sizeof(ncl_config) || cfg->version != NCL_CONFIG_VERSION || !cfg->alloc ||
        !cfg->free || cfg->channels < 1 || cfg->channels > NCL_MAX_QUEUES || cfg->timeout_ns == 0 ||
        cfg->slice_bytes == 0 || cfg->in_flight > NCL_MAX_IN_FLIGHT || cfg->log_level < NCL_LOG_OFF ||
        cfg->log_level > NCL_LOG_DEBUG)
        return NCL_ERR_INVALID_ARGUMENT;
    for (int c = 0; c < NCL_COLL_COUNT; c++)
        if (!ncl_algo_supported((ncl_coll)c, (ncl_algo)cfg->algorithm[c]))
            return NCL_ERR_INVALID_ARGUMENT;
    if (cfg->deterministic && !ncl_algo_supported(NCL_COLL_ALLREDUCE, NCL_ALGO_DET))
        return NCL_ERR_UNSUPPORTED; /* a board built without the det family */
    ncl_hal_caps caps = {0}; /* what a backend leaves out, it does not offer */
    ncl_result rc = ncl_hal_caps_get(hal, &caps);
    if (rc != NCL_SUCCESS)
        return rc;
    if (caps.max_queues < 1 || caps.buf_align < 1)
        return NCL_ERR_BACKEND;
    /* wide accumulation is a refinement of the det order: alone it would mean nothing. A
     * backend that cannot run the wide task kinds must say so now, not compute narrow sums. */
    if (cfg->wide_accumulation && !cfg->deterministic)
        return NCL_ERR_INVALID_ARGUMENT;
    if (cfg->wide_accumulation && !(caps.features & NCL_HAL_FEAT_WIDE))
        return NCL_ERR_UNSUPPORTED;
    if ((cfg->ring_count != 0) != (cfg->rings != NULL) || cfg->ring_count > NCL_MAX_QUEUES ||
        (cfg->cost_count != 0) != (cfg->costs != NULL) || cfg->cost_count > NCL_MAX_COSTS ||
        cfg->cost_room > NCL_MAX_COSTS ||
        (cfg->ring_weights != NULL && cfg->rings == NULL))
        return NCL_ERR_INVALID_ARGUMENT;
    for (uint32_t k = 0; cfg->ring_weights && k < cfg->ring_count; k++)
        if (cfg->ring_weights[k] == 0) /* a ring with no share would carry nothing: say so */
            return NCL_ERR_INVALID_ARGUMENT;
    for (uint32_t i = 0; i < cfg->cost_count; i++)
        if (cfg->costs[i].coll >= NCL_COLL_COUNT || cfg->costs[i].algo >= NCL_ALGO_COUNT ||
            cfg->costs[i].path > NCL_COST_PATH_LATENCY)
            return NCL_ERR_INVALID_ARGUMENT;
    /* two levels: servers of local_size consecutive ranks (0: one level), local rings over them */
    if ((cfg->local_size != 0 && (uint32_t)nranks % cfg->local_size != 0) ||
        (cfg->inter_algo != NCL_ALGO_AUTO && cfg->inter_algo != NCL_ALGO_RING && cfg->inter_algo != NCL_ALGO_HD) ||
        (cfg->local_ring_count != 0) != (cfg->local_rings != NULL) || cfg->local_ring_count > NCL_MAX_QUEUES ||
        (cfg->local_ring_count != 0 && cfg->local_size == 0))
        return NCL_ERR_INVALID_ARGUMENT;
    /* the cost and ring tables live right after the communicator: one allocation, one free
     * (rings given with their inverse are the caller's to keep) */
    size_t table = cfg->ring_positions ? 0 : (size_t)cfg->ring_count * (size_t)nranks;
    size_t ltable = (size_t)cfg->local_ring_count * (size_t)cfg->local_size;
    size_t weights = cfg->ring_count; /* room even without weights: ncl_comm_set_ring_weights */
    uint32_t cost_room = cfg->cost_room > cfg->cost_count ? cfg->cost_room : cfg->cost_count;
    ncl_comm *c = cfg->alloc(cfg->alloc_ud, sizeof *c + cost_room * sizeof(ncl_cost) +
                                                2 * (table + ltable) * sizeof(int32_t) +
                                                weights * sizeof(uint32_t));
    if (!c)
        return NCL_ERR_OUT_OF_MEMORY;
    memset(c, 0, sizeof *c);
    ncl_cost *costs = (ncl_cost *)(c + 1);
    int32_t *ring_order = (int32_t *)(costs + cost_room), *ring_pos = ring_order + table;
    int32_t *local_order = ring_pos + table, *local_pos = local_order + ltable;
    uint32_t *ring_weights = (uint32_t *)(local_pos + ltable); /* after the int32 tables: aligned */
    for (uint32_t i = 0; i < cfg->cost_count; i++)
        costs[i] = cfg->costs[i];
    for (size_t i = 0; i < table; i++)
        ring_order[i] = cfg->rings[i];
    for (size_t i = 0; i < ltable; i++)
        local_order[i] = cfg->local_rings[i];
    for (size_t k = 0; cfg->ring_weights && k < weights; k++)
        ring_weights[k] = cfg->ring_weights[k];
    /* the planner's input, from the copies; the rings must name every rank exactly once */
    ncl_config own = *cfg;
    own.costs = costs;
    own.rings = table ? ring_order : cfg->rings;
    own.ring_weights = cfg->ring_weights ? ring_weights : NULL;
    own.local_rings = ltable ? local_order : NULL;
    c->caps = caps;
    ncl_plan_env_init(&c->env, &own, &c->caps);
    c->env.zone_uses = c->zone_uses;
    if (ncl_plan_env_rings(&c->env, &own, nranks, ring_pos, local_pos) != NCL_SUCCESS ||
        ncl_plan_env_zones(&c->env, &own, &c->caps, nranks) != NCL_SUCCESS) {
        cfg->free(cfg->alloc_ud, c);
        return NCL_ERR_INVALID_ARGUMENT;
    }
    c->ring_weights = weights ? ring_weights : NULL;
    c->cost_room = cost_room;
    c->cfg = *cfg;
    c->cfg.rings = NULL; /* the caller's arrays may go away: use the copies (env's) */
    c->cfg.ring_positions = NULL;
    c->cfg.ring_weights = NULL;
    c->cfg.costs = NULL;
    c->cfg.local_rings = NULL;
    c->hal = *hal;
    c->nranks = nranks;
    c->rank = rank;
#ifdef NCL_CHECK_DEFAULT
    if (c->cfg.check_schedules < 0)
        c->cfg.check_schedules = 1;
#endif
    if (c->cfg.check_schedules < 0)
        c->cfg.check_schedules = 0;
    *out = c;
    return NCL_SUCCESS;
}

/* Releases one communicator, not its pairs. */
static void comm_free(ncl_comm *comm)
{
    if (comm->owns_hal)
        ncl_hal_release(&comm->hal);
    comm->cfg.free(comm->cfg.alloc_ud, comm);
}

void ncl_comm_destroy(ncl_comm *comm)
{
    if (!comm)
        return;
    /* ncl_send/ncl_recv's (ncl_split.c); a pair's communicator has no pairs of its own */
    for (int i = 0; comm->pairs && i < 2 * comm->nranks; i++)
        if (comm->pairs[i])
            comm_free(comm->pairs[i]);
    if (comm->pairs)
        comm->cfg.free(comm->cfg.alloc_ud, comm->pairs);
    comm_free(comm);
}

ncl_result ncl_comm_rank(const ncl_comm *comm, int *rank)
{
    if (!comm || !rank)
        return NCL_ERR_INVALID_ARGUMENT;
    *rank = comm->rank;
    return NCL_SUCCESS;
}

ncl_result ncl_comm_size(const ncl_comm *comm, int *nranks)
{
    if (!comm || !nranks)
        return NCL_ERR_INVALID_ARGUMENT;
    *nranks = comm->nranks;
    return NCL_SUCCESS;
}

ncl_result ncl_comm_set_algorithm(ncl_comm *comm, ncl_coll coll, ncl_algo algo)
{
    if (!comm)
        return NCL_ERR_INVALID_ARGUMENT;
    if (!ncl_algo_supported(coll, algo))
        return ncl_comm_fail(comm, NCL_ERR_INVALID_ARGUMENT, "%s: this engine has no %s algorithm for it (not one "
                             "of the collective's, or a family its build left out)", ncl_coll_name(coll),
                             ncl_algo_name(algo));
    comm->cfg.algorithm[coll] = (uint8_t)algo;
    return NCL_SUCCESS;
}

ncl_result ncl_comm_set_ring_weights(ncl_comm *comm, const uint32_t *weights)
{
    if (!comm)
        return NCL_ERR_INVALID_ARGUMENT;
    if (comm->active)
        return ncl_comm_fail(comm, NCL_ERR_INVALID_ARGUMENT, "ring weights: a collective is running");
    if (!comm->ring_weights)
        return ncl_comm_fail(comm, NCL_ERR_INVALID_ARGUMENT, "ring weights: the communicator has no rings");
    for (uint32_t k = 0; weights && k < comm->cfg.ring_count; k++)
        if (weights[k] == 0)
            return ncl_comm_fail(comm, NCL_ERR_INVALID_ARGUMENT, "ring weights: ring %u has weight 0",
                                 (unsigned)k);
    for (uint32_t k = 0; weights && k < comm->cfg.ring_count; k++)
        comm->ring_weights[k] = weights[k];
    comm->env.ring_weights = weights ? comm->ring_weights : NULL;
    comm->checked_valid = 0; /* the proof cache compares the weights' address, not their values */
    return NCL_SUCCESS;
}

ncl_result ncl_comm_set_costs(ncl_comm *comm, const ncl_cost *costs, uint32_t count)
{
    if (!comm)
        return NCL_ERR_INVALID_ARGUMENT;
    if (comm->active)
        return ncl_comm_fail(comm, NCL_ERR_INVALID_ARGUMENT, "cost table: a collective is running");
    if (count > comm->cost_room || (count && !costs))
        return ncl_comm_fail(comm, NCL_ERR_INVALID_ARGUMENT, "cost table: %u entries, the communicator was "
                             "created with room for %u", (unsigned)count, (unsigned)comm->cost_room);
    for (uint32_t i = 0; i < count; i++)
        if (costs[i].coll >= NCL_COLL_COUNT || costs[i].algo >= NCL_ALGO_COUNT || costs[i].path > NCL_COST_PATH_LATENCY)
            return ncl_comm_fail(comm, NCL_ERR_INVALID_ARGUMENT, "cost table: entry %u names coll %u algo %u path %u, "
                                 "out of range", (unsigned)i, (unsigned)costs[i].coll, (unsigned)costs[i].algo,
                                 (unsigned)costs[i].path);
    ncl_cost *table = (ncl_cost *)(comm + 1); /* the copy made at creation (env.costs points at it) */
    for (uint32_t i = 0; i < count; i++)
        table[i] = costs[i];
    comm->env.cost_count = count;
    return NCL_SUCCESS;
}

const char *ncl_comm_last_error(const ncl_comm *comm)
{
    return comm ? comm->err : "";
}

const ncl_hal *ncl_comm_hal(const ncl_comm *comm)
{
    return comm ? &comm->hal : NULL;
}

ncl_result ncl_comm_fail(ncl_comm *comm, ncl_result result, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t n = comm->label[0] ? ncl_fmt(comm->err, sizeof comm->err, "%s: rank %d: ", comm->label, comm->rank)
                              : ncl_fmt(comm->err, sizeof comm->err, "rank %d: ", comm->rank);
    ncl_vfmt(comm->err + n, sizeof comm->err - n, fmt, ap);
    va_end(ap);
    if (comm->owner) /* a transfer's failure is its caller's too */
        memcpy(comm->owner->err, comm->err, sizeof comm->err);
    if (comm->cfg.log && comm->cfg.log_level >= NCL_LOG_ERROR)
        comm->cfg.log(comm->cfg.log_ud, comm->rank, NCL_LOG_ERROR, comm->err);
    ncl_hal_log(&comm->hal, NCL_LOG_ERROR, comm->err); /* the backend's to keep, and to show without a sink */
    return result;
}
