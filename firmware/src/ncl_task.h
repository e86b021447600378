/* ncl_task.h — building tasks: buffer references and one builder per task kind, each filling the whole task. */
#ifndef NCL_TASK_H
#define NCL_TASK_H

#include "ncl/ncl_sched.h"

static inline ncl_ref ncl_ref_make(uint32_t buf, uint64_t off)
{
    ncl_ref r;
    r.buf = buf;
    r.off = off;
    return r;
}
static inline ncl_ref ncl_ref_add(ncl_ref r, uint64_t off)
{
    r.off += off;
    return r;
}

/* Task builders: each fills *t completely. */
void ncl_task_write(ncl_task *t, int peer, ncl_ref src, ncl_ref dst, uint64_t bytes, uint32_t step);
void ncl_task_write_reduce(ncl_task *t, const ncl_plan *p, int peer, ncl_ref src, ncl_ref dst,
                           uint64_t bytes, uint32_t step);
/* peer.dst <- src op src2 (accumulate: peer.dst <- peer.dst op (src op src2)); NCL_HAL_FEAT_REDUCE_WRITE */
void ncl_task_reduce_write(ncl_task *t, const ncl_plan *p, int peer, ncl_ref src, ncl_ref src2, ncl_ref dst,
                           uint64_t bytes, int accumulate, uint32_t step);
void ncl_task_copy(ncl_task *t, ncl_ref src, ncl_ref dst, uint64_t bytes, uint32_t step);
void ncl_task_reduce(ncl_task *t, const ncl_plan *p, ncl_ref src, ncl_ref dst, uint64_t bytes,
                     uint32_t step);
void ncl_task_div(ncl_task *t, const ncl_plan *p, ncl_ref dst, uint64_t bytes, uint32_t step);
void ncl_task_record(ncl_task *t, int peer, uint32_t notify, uint32_t step);
/* A record posted behind the data tasks in flight (NCL_TASK_POSTED). */
void ncl_task_post(ncl_task *t, int peer, uint32_t notify, uint32_t step);
void ncl_task_wait(ncl_task *t, int peer, uint32_t notify, uint32_t count, uint32_t step);
/* A wide-accumulation task (LOCAL_WIDEN, LOCAL_REDUCE_WIDE, LOCAL_NARROW) of the plan's dtype and op;
 * bytes is the narrow side (the fp32 side is twice as large); NARROW divides by nranks for avg. */
void ncl_task_wide(ncl_task *t, const ncl_plan *p, ncl_task_kind kind, ncl_ref src, ncl_ref dst, uint64_t bytes,
                   uint32_t step);

#endif
