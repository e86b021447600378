/* ncl_task.c — task builders, partitioning, the pipeline cost model shared by all algorithms, and the CPU runner of the wide tasks. */
#include "ncl_algo.h"
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

void ncl_task_wait(ncl_task *t, int peer, uint32_t notify, uint32_t count, uint32_t step)
{
    memset(t, 0, sizeof *t);
    t->kind = NCL_TASK_NOTIFY_WAIT;
    t->peer = peer;
    t->notify = notify;
    t->count = count;
    t->step = step;
}

uint64_t ncl_part(uint64_t n, uint64_t parts, uint64_t idx, uint64_t *off)
{
    uint64_t base = n / parts, extra = n % parts;
    *off = idx * base + (idx < extra ? idx : extra);
    return base + (idx < extra ? 1 : 0);
}

uint64_t ncl_lead_piece(const ncl_plan *p, uint64_t len, uint64_t m, uint64_t *lo)
{
    const uint64_t page = 4096;
    /* a rank's memory also serves its ring traffic meanwhile: 1 byte read per byte sent, 2 per
     * byte reduced in (read and written), so a fill gets M - 3B */
    uint64_t r = p->mem_gbps > 3u * (uint64_t)p->link_gbps
                     ? (p->mem_gbps - 3u * (uint64_t)p->link_gbps) / (2u * (uint64_t)p->link_gbps) : 0;
    uint64_t first = ncl_div_ceil((uint64_t)p->link_alpha_ns * p->mem_gbps / 2u, page) * page / p->esize;
    *lo = 0;
    if (r < 2 || first == 0 || len / 2 < first)
        return m == 0 ? len : 0;
    uint64_t size = first;
    for (uint64_t k = 0;; k++) {
        /* a rest shorter than the first piece joins this one */
        uint64_t rest = len - *lo, piece = rest < size || rest - size < first ? rest : size;
        if (k == m)
            return piece;
        *lo += piece;
        if (*lo >= len)
            return 0;
        size = size > len / r ? len : size * r;
    }
}

uint64_t ncl_isqrt(uint64_t x)
{
    uint64_t r = 0, bit = 1ull << 62;
    while (bit > x)
        bit >>= 2;
    while (bit) {
        if (x >= r + bit) {
            x -= r + bit;
            r = (r >> 1) + bit;
        } else {
            r >>= 1;
        }
        bit >>= 2;
    }
    return r;
}

uint64_t ncl_pipeline_segments(uint64_t p, uint64_t bytes, uint64_t alpha_ns, uint64_t gbps)
{
    if (p <= 2)
        return 1; /* one hop: nothing to overlap, every segment only adds a latency */
    uint64_t denom = (alpha_ns ? alpha_ns : 1) * (gbps ? gbps : 1);
    uint64_t q;
    if (bytes <= UINT64_MAX / (p - 2)) {
        q = (p - 2) * bytes / denom;
    } else {
        q = bytes / denom;
        q = q > UINT64_MAX / (p - 2) ? UINT64_MAX : q * (p - 2);
    }
    uint64_t k = ncl_isqrt(q);
    return k ? k : 1;
}

ncl_result ncl_pipeline_prepare(ncl_plan *p, uint64_t seg_max)
{
    uint64_t min_k = ncl_div_ceil(p->count, seg_max);
    if (min_k > UINT32_MAX)
        return NCL_ERR_UNSUPPORTED;
    uint64_t k = ncl_pipeline_segments((uint64_t)p->nranks, p->count * p->esize, p->link_alpha_ns,
                                       p->link_gbps);
    k = ncl_min_u64(ncl_min_u64(k, p->count), UINT32_MAX);
    p->segments = (uint32_t)(k < min_k ? min_k : k);
    return NCL_SUCCESS;
}

uint64_t ncl_tree_child_span(uint64_t v, uint64_t n)
{
    if (v)
        return v & (~v + 1);
    uint64_t s = 1;
    while (s < n)
        s <<= 1;
    return s;
}
