/* bench_exec.c — the executor's own cost per task: one rank runs a real schedule against a HAL
 * whose operations complete at once and do nothing, so what remains is generator + executor.
 * Run it under `valgrind --tool=callgrind` (tests/bench/exec_cost.sh) for instructions per task. */
#include <stdio.h>
#include <stdlib.h>

#include <ncl/ncl.h>
#include <ncl/ncl_hal.h>

typedef struct counts {
    unsigned long long tasks;
} counts;

static ncl_result caps(void *ctx, ncl_hal_caps *out)
{
    (void)ctx;
    out->scratch_bytes = 4u << 20;
    out->max_queues = NCL_MAX_QUEUES;
    out->buf_align = 1;
    for (int d = 0; d < NCL_DTYPE_COUNT; d++)
        out->inline_ops[d] = NCL_INLINE_ALL_OPS;
    return NCL_SUCCESS;
}
static ncl_result submit(void *ctx, uint32_t q, const ncl_task *t)
{
    (void)q, (void)t;
    ((counts *)ctx)->tasks++;
    return NCL_SUCCESS;
}
static ncl_result poll(void *ctx, uint32_t q, int *done)
{
    (void)ctx, (void)q;
    *done = 1;
    return NCL_SUCCESS;
}
static ncl_result record(void *ctx, uint32_t q, int peer, uint32_t id)
{
    (void)q, (void)peer, (void)id;
    ((counts *)ctx)->tasks++;
    return NCL_SUCCESS;
}
static ncl_result try_wait(void *ctx, int peer, uint32_t id, uint32_t count, int *done)
{
    (void)peer, (void)id, (void)count;
    ((counts *)ctx)->tasks++;
    *done = 1;
    return NCL_SUCCESS;
}
static uint64_t now(void *ctx)
{
    (void)ctx;
    return 0;
}

static const ncl_hal_ops instant_ops = {.caps = caps, .dma_submit = submit, .dma_poll = poll,
                                        .notify_record = record, .notify_try_wait = try_wait,
                                        .now_ns = now};

static void *alloc_cb(void *ud, size_t n) { (void)ud; return malloc(n); }
static void free_cb(void *ud, void *p) { (void)ud; free(p); }

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 200;
    counts c = {0};
    ncl_hal hal = {&instant_ops, &c};
    ncl_config cfg = NCL_CONFIG_INIT;
    cfg.alloc = alloc_cb;
    cfg.free = free_cb;
    cfg.slice_bytes = 1024; /* many small tasks: the executor, not the data, dominates */
    cfg.check_schedules = 0;
    ncl_comm *comm;
    if (ncl_comm_create(&comm, 8, 3, &hal, &cfg) != NCL_SUCCESS)
        return 1;
    static float buf[1 << 16];
    for (int i = 0; i < iters; i++)
        if (ncl_allreduce(buf, buf, 1 << 16, NCL_FLOAT32, NCL_SUM, comm) != NCL_SUCCESS)
            return 1;
    printf("tasks %llu\n", c.tasks);
    ncl_comm_destroy(comm);
    return 0;
}
