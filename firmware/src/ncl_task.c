/* ncl_task.c — building tasks (every algorithm's instruction set), and the CPU runner of the wide-accumulation kinds. */
#include "ncl_task.h"

#include "ncl/ncl_dtype.h"

#include <string.h>

void ncl_task_run_wide(const ncl_task *t, void *dst, const void *src)
{
    uint64_t n = t->bytes / 2;
    if (t->kind == NCL_TASK_LOCAL_WIDEN)
        ncl_widen_kernel(dst, src, n, (ncl_dtype)t->dtype);
    else if (t->kind == NCL_TASK_LOCAL_REDUCE_WIDE)
        ncl_reduce_wide_kernel(dst, src, n, (ncl_dtype)t->dtype, (ncl_op)t->op);
    else if (t->kind == NCL_TASK_LOCAL_NARROW)
        ncl_narrow_kernel(dst, src, n, (ncl_dtype)t->dtype, t->count);
}

static void task_data(ncl_task *t, ncl_task_kind kind, int peer, ncl_ref src, ncl_ref dst,
                      uint64_t bytes, uint32_t step)
{
    memset(t, 0, sizeof *t);
    t->kind = (uint8_t)kind;
    t->peer = peer;
    t->src = src;
    t->dst = dst;
    t->bytes = bytes;
    t->step = step;
}

void ncl_task_write(ncl_task *t, int peer, ncl_ref src, ncl_ref dst, uint64_t bytes, uint32_t step)
{
    task_data(t, NCL_TASK_WRITE, peer, src, dst, bytes, step);
}

void ncl_task_write_reduce(ncl_task *t, const ncl_plan *p, int peer, ncl_ref src, ncl_ref dst,
                           uint64_t bytes, uint32_t step)
{
    task_data(t, NCL_TASK_WRITE_REDUCE, peer, src, dst, bytes, step);
    t->dtype = p->dtype;
    t->op = p->op;
}

void ncl_task_reduce_write(ncl_task *t, const ncl_plan *p, int peer, ncl_ref src, ncl_ref src2, ncl_ref dst,
                           uint64_t bytes, int accumulate, uint32_t step)
{
    task_data(t, accumulate ? NCL_TASK_REDUCE_WRITE_REDUCE : NCL_TASK_REDUCE_WRITE, peer, src, dst, bytes, step);
    t->src2 = src2;
    t->dtype = p->dtype;
    t->op = p->op;
}

void ncl_task_copy(ncl_task *t, ncl_ref src, ncl_ref dst, uint64_t bytes, uint32_t step)
{
    task_data(t, NCL_TASK_LOCAL_COPY, -1, src, dst, bytes, step);
}

void ncl_task_reduce(ncl_task *t, const ncl_plan *p, ncl_ref src, ncl_ref dst, uint64_t bytes,
                     uint32_t step)
{
    task_data(t, NCL_TASK_LOCAL_REDUCE, -1, src, dst, bytes, step);
    t->dtype = p->dtype;
    t->op = p->op;
}

void ncl_task_div(ncl_task *t, const ncl_plan *p, ncl_ref dst, uint64_t bytes, uint32_t step)
{
    task_data(t, NCL_TASK_LOCAL_DIV, -1, dst, dst, bytes, step);
    t->dtype = p->dtype;
    t->count = (uint32_t)p->nranks;
}

void ncl_task_record(ncl_task *t, int peer, uint32_t notify, uint32_t step)
{
    memset(t, 0, sizeof *t);
    t->kind = NCL_TASK_NOTIFY_RECORD;
    t->peer = peer;
    t->notify = notify;
    t->step = step;
}

void ncl_task_post(ncl_task *t, int peer, uint32_t notify, uint32_t step)
{
    ncl_task_record(t, peer, notify, step);
    t->flags = NCL_TASK_POSTED;
}

void ncl_task_wait(ncl_task *t, int peer, uint32_t notify, uint32_t count, uint32_t step)
{
    memset(t, 0, sizeof *t);
    t->kind = NCL_TASK_NOTIFY_WAIT;
    t->peer = peer;
    t->notify = notify;
    t->count = count;
    t->step = step;
}

void ncl_task_wide(ncl_task *t, const ncl_plan *p, ncl_task_kind kind, ncl_ref src, ncl_ref dst, uint64_t bytes,
                   uint32_t step)
{
    task_data(t, kind, -1, src, dst, bytes, step);
    t->dtype = p->dtype;
    t->op = p->op;
    if (kind == NCL_TASK_LOCAL_NARROW && p->avg)
        t->count = (uint32_t)p->nranks; /* avg: divide in fp32, round once */
}
