/* ncl_shm.c — the shared-memory HAL backend (see ncl_shm.h). */
#include "ncl/ncl_shm.h"

#include <string.h>

#include "ncl_backend.h"
#include "ncl_fmt.h"

/* The world: a header, then one slot per rank: its bound buffers (published at begin, read by
 * the peers that write into them) and its counters, (from, id) at counters[from * IDS + id]. */
typedef struct shm_header {
    uint32_t nranks, pad;
} shm_header;

typedef struct shm_slot {
    ncl_bk_bufs bufs;
    uint32_t counters[]; /* nranks * NCL_NOTIFY_IDS */
} shm_slot;

static uint64_t slot_bytes(int nranks)
{
    uint64_t b = sizeof(shm_slot) + (uint64_t)nranks * NCL_NOTIFY_IDS * sizeof(uint32_t);
    return (b + 7u) & ~(uint64_t)7u;
}

uint64_t ncl_shm_world_bytes(int nranks)
{
    return nranks < 1 ? 0 : sizeof(shm_header) + (uint64_t)nranks * slot_bytes(nranks);
}

static shm_slot *slot_of(void *world, int rank)
{
    const shm_header *h = world;
    return (shm_slot *)((unsigned char *)world + sizeof(shm_header) + (uint64_t)rank * slot_bytes((int)h->nranks));
}

ncl_result ncl_shm_world_init(void *mem, uint64_t bytes, int nranks)
{
    if (!mem || nranks < 1 || bytes < ncl_shm_world_bytes(nranks) || ((uintptr_t)mem & 7u))
        return NCL_ERR_INVALID_ARGUMENT;
    memset(mem, 0, (size_t)ncl_shm_world_bytes(nranks));
    ((shm_header *)mem)->nranks = (uint32_t)nranks;
    return NCL_SUCCESS;
}

static ncl_shm *self(void *ctx)
{
    return ctx;
}

static ncl_result fail(ncl_shm *s, const char *what, const char *why)
{
    ncl_fmt(s->err, sizeof s->err, "rank %d: %s: %s", s->rank, what, why);
    return NCL_ERR_BACKEND;
}

static ncl_result shm_caps(void *ctx, ncl_hal_caps *out)
{
    const shm_slot *me = slot_of(self(ctx)->world, self(ctx)->rank);
    ncl_bk_cpu_caps(me->bufs.size[NCL_BUF_SCRATCH], NULL, 0, out);
    out->queue_depth = NCL_MAX_IN_FLIGHT;
    return NCL_SUCCESS;
}

static ncl_result shm_begin(void *ctx, const ncl_hal_launch *l)
{
    ncl_shm *s = self(ctx);
    shm_slot *me = slot_of(s->world, s->rank);
    /* published before our first record of the call, which peers wait for before writing here */
    ncl_bk_bind(&me->bufs, l, me->bufs.base[NCL_BUF_SCRATCH], me->bufs.size[NCL_BUF_SCRATCH]);
    s->err[0] = '\0';
    return NCL_SUCCESS;
}

static ncl_result shm_end(void *ctx, ncl_result result)
{
    ncl_shm *s = self(ctx);
    (void)result;
    ncl_bk_unbind(&slot_of(s->world, s->rank)->bufs);
    return NCL_SUCCESS;
}

static ncl_result shm_dma_submit(void *ctx, uint32_t queue, const ncl_task *t)
{
    ncl_shm *s = self(ctx);
    char why[128];
    uint64_t src = 0, src2 = 0, dst = 0;
    const int remote = ncl_task_is_remote(t->kind), pair = ncl_task_two_source(t->kind);
    if (queue >= NCL_MAX_QUEUES || !ncl_bk_task_ok(t, why, sizeof why))
        return fail(s, "dma_submit", queue >= NCL_MAX_QUEUES ? "queue out of range" : why);
    if (remote && (t->peer < 0 || t->peer >= s->nranks))
        return fail(s, "dma_submit", "peer out of range");
    const ncl_bk_bufs *mine = &slot_of(s->world, s->rank)->bufs;
    const ncl_bk_bufs *theirs = remote ? &slot_of(s->world, t->peer)->bufs : mine;
    if ((t->kind != NCL_TASK_LOCAL_DIV && !ncl_bk_region(mine, t->src, ncl_task_src_bytes(t), 0, &src, why, sizeof why)) ||
        (pair && !ncl_bk_region(mine, t->src2, t->bytes, 0, &src2, why, sizeof why)) ||
        !ncl_bk_region(theirs, t->dst, ncl_task_dst_bytes(t), 1, &dst, why, sizeof why))
        return fail(s, ncl_task_kind_name(t->kind), why);
    int ok = pair ? ncl_bk_run_pair(t, ncl_bk_ptr(dst), ncl_bk_ptr(src), ncl_bk_ptr(src2), why, sizeof why)
                  : ncl_bk_run(t, ncl_bk_ptr(dst), ncl_bk_ptr(src), why, sizeof why);
    if (!ok)
        return fail(s, ncl_task_kind_name(t->kind), why);
    s->done[queue]++;
    s->tasks++;
    return NCL_SUCCESS;
}

static ncl_result shm_dma_poll(void *ctx, uint32_t queue, int *done)
{
    ncl_shm *s = self(ctx);
    if (queue >= NCL_MAX_QUEUES)
        return NCL_ERR_BACKEND;
    *done = (int)s->done[queue]; /* the core ran them at submission */
    s->done[queue] = 0;
    return NCL_SUCCESS;
}

static uint32_t *counter(ncl_shm *s, int at, int from, uint32_t id)
{
    return &slot_of(s->world, at)->counters[(uint64_t)from * NCL_NOTIFY_IDS + id];
}

static ncl_result shm_notify_record(void *ctx, uint32_t queue, int peer, uint32_t id)
{
    ncl_shm *s = self(ctx);
    if (queue >= NCL_MAX_QUEUES || peer < 0 || peer >= s->nranks || id >= NCL_NOTIFY_IDS)
        return fail(s, "notify_record", "queue, peer or id out of range");
    /* release: the writes before it (this core's copies into the peer) are seen first */
    __atomic_fetch_add(counter(s, peer, s->rank, id), 1u, __ATOMIC_RELEASE);
    if (s->board.kick)
        s->board.kick(s->board.ctx, peer); /* a peer asleep in idle wakes to look */
    return NCL_SUCCESS;
}

static ncl_result shm_notify_try_wait(void *ctx, int peer, uint32_t id, uint32_t count, int *done)
{
    ncl_shm *s = self(ctx);
    if (peer < 0 || peer >= s->nranks || id >= NCL_NOTIFY_IDS)
        return fail(s, "notify_try_wait", "peer or id out of range");
    uint32_t *c = counter(s, s->rank, peer, id);
    *done = __atomic_load_n(c, __ATOMIC_ACQUIRE) >= count;
    if (*done)
        __atomic_fetch_sub(c, count, __ATOMIC_ACQ_REL);
    return NCL_SUCCESS;
}

static ncl_result shm_notify_peek(void *ctx, int peer, uint32_t id, uint32_t *value)
{
    ncl_shm *s = self(ctx);
    if (peer < 0 || peer >= s->nranks || id >= NCL_NOTIFY_IDS)
        return NCL_ERR_BACKEND;
    *value = __atomic_load_n(counter(s, s->rank, peer, id), __ATOMIC_ACQUIRE);
    return NCL_SUCCESS;
}

/* Everything a rank waits for is a peer's notify (its own tasks finish at submission), and every
 * notify kicks: sleeping until one is safe. */
static ncl_result shm_wait_event(void *ctx, uint64_t timeout_ns)
{
    ncl_shm *s = self(ctx);
    if (s->board.idle)
        s->board.idle(s->board.ctx, timeout_ns);
    return NCL_SUCCESS;
}

static uint64_t shm_now_ns(void *ctx)
{
    ncl_shm *s = self(ctx);
    return s->board.now_ns(s->board.ctx);
}


static const char *shm_last_error(void *ctx)
{
    return self(ctx)->err;
}

static const ncl_hal_ops shm_ops = {
    shm_caps, shm_begin, shm_end, shm_dma_submit, shm_dma_poll, shm_notify_record, shm_notify_try_wait,
    shm_wait_event,
    shm_now_ns, NULL, shm_notify_peek, shm_last_error,
    NULL, NULL, /* split, release: a board of one communicator */
};

ncl_result ncl_shm_init(ncl_shm *s, void *world, int rank, void *scratch, uint64_t scratch_bytes,
                        const ncl_shm_board *board, ncl_hal *hal)
{
    if (!s || !world || !board || !board->now_ns || !board->idle != !board->kick || !hal || rank < 0 ||
        rank >= (int)((const shm_header *)world)->nranks || (scratch_bytes && !scratch))
        return NCL_ERR_INVALID_ARGUMENT;
    memset(s, 0, sizeof *s);
    s->world = world;
    s->rank = rank;
    s->nranks = (int)((const shm_header *)world)->nranks;
    s->board = *board;
    ncl_bk_keep_scratch(&slot_of(world, rank)->bufs, (uint64_t)(uintptr_t)scratch, scratch_bytes);
    hal->ops = &shm_ops;
    hal->ctx = s;
    return NCL_SUCCESS;
}

uint64_t ncl_shm_tasks(const ncl_shm *s)
{
    return s->tasks;
}
