/* ck_run.c — the checker's tasks: each fetched from its stream, validated, then executed on the clocks and the symbolic memory. */
#include "ck.h"

/* ref [off, off + bytes) inside the buffer and aligned to es (the element, or 4 for fp32). */
static ncl_result check_region_n(ck *c, uint32_t t, const ncl_task *k, const char *what, int rank, ncl_ref ref,
                                 uint64_t bytes, uint64_t es)
{
    if (ref.buf >= NCL_BUF_COUNT)
        return ncl_ck_task_fail(c, t, k, "%s names unknown buffer %u", what, ref.buf);
    uint64_t size = mem_of(c, rank, ref.buf)->bytes;
    if (ref.off % es || bytes % es)
        return ncl_ck_task_fail(c, t, k, "%s region %s [%llu,+%llu) not aligned to the %llu-byte element", what,
                         ncl_buf_name(ref.buf), (unsigned long long)ref.off, (unsigned long long)bytes,
                         (unsigned long long)es);
    if (ref.off > size || bytes > size - ref.off)
        return ncl_ck_task_fail(c, t, k, "%s region %s [%llu,+%llu) out of bounds (rank %d %s holds %llu bytes)",
                         what, ncl_buf_name(ref.buf), (unsigned long long)ref.off, (unsigned long long)bytes,
                         rank, ncl_buf_name(ref.buf), (unsigned long long)size);
    return NCL_SUCCESS;
}

static ncl_result check_region(ck *c, uint32_t t, const ncl_task *k, const char *what, int rank, ncl_ref ref)
{
    return check_region_n(c, t, k, what, rank, ref, k->bytes, c->esize);
}

/* The wide kinds: only in a wide plan, with its dtype and op, fp32 sides 4-byte aligned. */
static ncl_result validate_wide(ck *c, uint32_t t, const ncl_task *k)
{
    const ncl_plan *p = c->plan;
    int r = t_rank(c, t);
    ncl_result rc;
    if (!p->wide || c->esize != 2)
        return ncl_ck_task_fail(c, t, k, "needs wide accumulation (fp16/bf16 det allreduce with wide_accumulation), "
                         "which this %s %s plan does not use", ncl_dtype_name((ncl_dtype)p->dtype),
                         ncl_op_name((ncl_op)p->op));
    if (k->dtype != p->dtype)
        return ncl_ck_task_fail(c, t, k, "converts dtype %u, the plan has dtype %u", k->dtype, p->dtype);
    if (k->kind == NCL_TASK_LOCAL_REDUCE_WIDE && k->op != p->op)
        return ncl_ck_task_fail(c, t, k, "reduces with op %u, the plan has op %u%s", k->op, p->op,
                         p->avg ? " (avg reduces with SUM)" : "");
    if (k->kind == NCL_TASK_LOCAL_NARROW && (p->avg ? k->count != (uint32_t)c->nranks : k->count > 1))
        return ncl_ck_task_fail(c, t, k, p->avg ? "divides by %u, expected the rank count %d (avg)"
                                         : "divides by %u although the op is not avg (%d ranks)",
                         k->count, c->nranks);
    if (k->bytes == 0)
        return NCL_SUCCESS;
    if (k->dst.buf == NCL_BUF_SEND)
        return ncl_ck_task_fail(c, t, k, "writes into rank %d SEND, which is read only", r);
    uint64_t sb = ncl_task_src_bytes(k), db = ncl_task_dst_bytes(k);
    if ((rc = check_region_n(c, t, k, "src", r, k->src, sb, k->kind == NCL_TASK_LOCAL_NARROW ? 4 : 2)) !=
            NCL_SUCCESS ||
        (rc = check_region_n(c, t, k, "dst", r, k->dst, db, k->kind == NCL_TASK_LOCAL_NARROW ? 2 : 4)) != NCL_SUCCESS)
        return rc;
    if (k->src.buf == k->dst.buf && k->src.off < k->dst.off + db && k->dst.off < k->src.off + sb)
        return ncl_ck_task_fail(c, t, k, "src %s +%llu and dst +%llu overlap", ncl_buf_name(k->src.buf),
                         (unsigned long long)k->src.off, (unsigned long long)k->dst.off);
    return NCL_SUCCESS;
}

static ncl_result validate(ck *c, uint32_t t, const ncl_task *k)
{
    const ncl_plan *p = c->plan;
    int r = t_rank(c, t);
    ncl_result rc;
    switch (k->kind) {
    case NCL_TASK_WRITE:
    case NCL_TASK_WRITE_REDUCE:
    case NCL_TASK_LOCAL_COPY:
    case NCL_TASK_LOCAL_REDUCE:
    case NCL_TASK_LOCAL_DIV:
    case NCL_TASK_REDUCE_WRITE:
    case NCL_TASK_REDUCE_WRITE_REDUCE: {
        if (k->bytes == 0)
            return NCL_SUCCESS;
        int remote = ncl_task_is_remote(k->kind), pair = ncl_task_two_source(k->kind);
        int dr = r;
        if (remote) {
            if (k->peer < 0 || k->peer >= c->nranks)
                return ncl_ck_task_fail(c, t, k, "peer %d out of range (%d ranks)", k->peer, c->nranks);
            if (k->peer == r)
                return ncl_ck_task_fail(c, t, k, "writes to its own rank %d (use LOCAL_COPY/LOCAL_REDUCE)", r);
            dr = k->peer;
        }
        if (ncl_task_reduces(k->kind)) {
            if (k->dtype != p->dtype || k->op != p->op)
                return ncl_ck_task_fail(c, t, k, "reduces with dtype %u op %u, the plan has dtype %u op %u%s", k->dtype,
                                 k->op, p->dtype, p->op, p->avg ? " (avg reduces with SUM)" : "");
        }
        if ((k->kind == NCL_TASK_WRITE_REDUCE || pair) && !p->inline_reduce)
            return ncl_ck_task_fail(c, t, k, "reduces inline, which the backend's DMA cannot do for %s %s",
                             ncl_dtype_name((ncl_dtype)p->dtype), ncl_op_name((ncl_op)p->op));
        if (pair && !p->reduce_write)
            return ncl_ck_task_fail(c, t, k, "reduces two sources on the way out, which the backend's DMA cannot do "
                                    "(no NCL_HAL_FEAT_REDUCE_WRITE)");
        if (pair && !ncl_inline_ok(p, k->src2.off, k->dst.off, k->bytes))
            return ncl_ck_task_fail(c, t, k, "reduces inline at src2 +%llu dst +%llu, %llu bytes: not aligned to the "
                             "%u bytes the backend's inline reduce needs", (unsigned long long)k->src2.off,
                             (unsigned long long)k->dst.off, (unsigned long long)k->bytes, p->inline_align);
        if ((k->kind == NCL_TASK_WRITE_REDUCE || pair) && !ncl_inline_ok(p, k->src.off, k->dst.off, k->bytes))
            return ncl_ck_task_fail(c, t, k, "reduces inline at src +%llu dst +%llu, %llu bytes: not aligned to the "
                             "%u bytes the backend's inline reduce needs", (unsigned long long)k->src.off,
                             (unsigned long long)k->dst.off, (unsigned long long)k->bytes, p->inline_align);
        if (k->kind == NCL_TASK_LOCAL_DIV) {
            if (!p->avg)
                return ncl_ck_task_fail(c, t, k, "divides although the op is not avg");
            if (k->count != (uint32_t)c->nranks)
                return ncl_ck_task_fail(c, t, k, "divides by %u, expected the rank count %d", k->count, c->nranks);
            if (k->dtype != p->dtype)
                return ncl_ck_task_fail(c, t, k, "divides dtype %u, the plan has dtype %u", k->dtype, p->dtype);
        }
        if (k->dst.buf == NCL_BUF_SEND)
            return ncl_ck_task_fail(c, t, k, "writes into rank %d SEND, which is read only", dr);
        if (k->kind != NCL_TASK_LOCAL_DIV && (rc = check_region(c, t, k, "src", r, k->src)) != NCL_SUCCESS)
            return rc;
        if (pair && (rc = check_region(c, t, k, "src2", r, k->src2)) != NCL_SUCCESS)
            return rc;
        if ((rc = check_region(c, t, k, "dst", dr, k->dst)) != NCL_SUCCESS)
            return rc;
        if ((k->kind == NCL_TASK_LOCAL_COPY || k->kind == NCL_TASK_LOCAL_REDUCE) && k->src.buf == k->dst.buf &&
            k->src.off != k->dst.off && k->src.off < k->dst.off + k->bytes && k->dst.off < k->src.off + k->bytes)
            return ncl_ck_task_fail(c, t, k, "src %s +%llu and dst +%llu overlap", ncl_buf_name(k->src.buf),
                             (unsigned long long)k->src.off, (unsigned long long)k->dst.off);
        return NCL_SUCCESS;
    }
    case NCL_TASK_LOCAL_WIDEN:
    case NCL_TASK_LOCAL_REDUCE_WIDE:
    case NCL_TASK_LOCAL_NARROW:
        return validate_wide(c, t, k);
    case NCL_TASK_NOTIFY_RECORD:
    case NCL_TASK_NOTIFY_WAIT:
        if (k->peer < 0 || k->peer >= c->nranks)
            return ncl_ck_task_fail(c, t, k, "peer %d out of range (%d ranks)", k->peer, c->nranks);
        if (k->notify >= NCL_NOTIFY_IDS)
            return ncl_ck_task_fail(c, t, k, "notify id %u out of range (NCL_NOTIFY_IDS = %u)", k->notify,
                             NCL_NOTIFY_IDS);
        return NCL_SUCCESS;
    default:
        return ncl_ck_task_fail(c, t, k, "unknown task kind %u", k->kind);
    }
}

static ncl_result do_data(ck *c, uint32_t t, const ncl_task *k)
{
    if (k->bytes == 0)
        return NCL_SUCCESS;
    int r = t_rank(c, t);
    int remote = ncl_task_is_remote(k->kind);
    int dr = remote ? k->peer : r;
    uint64_t es = c->esize, n = k->bytes / es;
    ncl_result rc;
    ncl_ck_touch(c, t);
    const uint64_t src_hi = k->src.off + ncl_task_src_bytes(k), dst_hi = k->dst.off + ncl_task_dst_bytes(k);
    if (k->kind != NCL_TASK_LOCAL_DIV &&
        ((rc = ncl_ck_zone_access(c, t, k, r, k->src.buf, k->src.off, src_hi, 0)) != NCL_SUCCESS ||
         (rc = ncl_ck_race_check(c, t, k, r, k->src.buf, k->src.off, src_hi, 0)) != NCL_SUCCESS))
        return rc;
    if (ncl_task_two_source(k->kind) &&
        ((rc = ncl_ck_zone_access(c, t, k, r, k->src2.buf, k->src2.off, k->src2.off + k->bytes, 0)) != NCL_SUCCESS ||
         (rc = ncl_ck_race_check(c, t, k, r, k->src2.buf, k->src2.off, k->src2.off + k->bytes, 0)) != NCL_SUCCESS))
        return rc;
    if ((rc = ncl_ck_zone_access(c, t, k, dr, k->dst.buf, k->dst.off, dst_hi, remote)) != NCL_SUCCESS ||
        (rc = ncl_ck_race_check(c, t, k, dr, k->dst.buf, k->dst.off, dst_hi, 1)) != NCL_SUCCESS)
        return rc;
    /* a landing zone takes writes before its rank is ready: its credit stands for the READY */
    if (remote && !ncl_ck_zone_write(c, k->dst.buf, k->dst.off, dst_hi)) {
        /* the destination must have told us (directly or transitively) that it is ready */
        const uint32_t *vc = vc_of(c, t);
        uint32_t q;
        for (q = 0; q < c->queues; q++)
            if (vc[(uint32_t)dr * c->queues + q] >= 1)
                break;
        if (q == c->queues)
            return ncl_ck_task_fail(c, t, k,
                             "writes into rank %d %s [%llu,%llu) before rank %d signalled it is ready "
                             "(no notify from rank %d precedes the write)",
                             dr, ncl_buf_name(k->dst.buf), (unsigned long long)k->dst.off,
                             (unsigned long long)(k->dst.off + k->bytes), dr, dr);
    }
    switch (k->kind) {
    case NCL_TASK_WRITE:
    case NCL_TASK_LOCAL_COPY:
        return ncl_ck_sym_copy(c, t, k, r, k->src.buf, k->src.off / es, dr, k->dst.buf, k->dst.off / es, n);
    case NCL_TASK_WRITE_REDUCE:
    case NCL_TASK_LOCAL_REDUCE:
        return ncl_ck_sym_reduce(c, t, k, r, k->src.buf, k->src.off / es, dr, k->dst.buf, k->dst.off / es, n);
    case NCL_TASK_REDUCE_WRITE:
    case NCL_TASK_REDUCE_WRITE_REDUCE:
        return ncl_ck_sym_reduce_pair(c, t, k, r, k->src.buf, k->src.off / es, k->src2.buf, k->src2.off / es, dr,
                                      k->dst.buf, k->dst.off / es, n, k->kind == NCL_TASK_REDUCE_WRITE_REDUCE);
    case NCL_TASK_LOCAL_WIDEN:
    case NCL_TASK_LOCAL_REDUCE_WIDE:
        return ncl_ck_sym_widen(c, t, k, r, k->src.buf, k->src.off / es, k->dst.buf, k->dst.off / es, n,
                         k->kind == NCL_TASK_LOCAL_WIDEN);
    case NCL_TASK_LOCAL_NARROW:
        return ncl_ck_sym_narrow(c, t, k, r, k->src.buf, k->src.off / es, k->dst.buf, k->dst.off / es, n, k->count > 1);
    default:
        return ncl_ck_sym_div(c, t, k, r, k->dst.buf, k->dst.off / es, n);
    }
}

static int fetch(ck *c, uint32_t t, ncl_task *out)
{
    thread *th = &c->th[t];
    memset(out, 0, sizeof *out);
    if (c->src)
        return c->src->next(c->src->ud, t_rank(c, t), t_queue(c, t), &th->gen, out);
    ncl_plan p = *c->plan;
    p.rank = t_rank(c, t);
    return c->algo->next(&p, t_queue(c, t), &th->gen, out);
}

/* Runs thread t until it blocks or finishes. */
ncl_result ncl_ck_run_thread(ck *c, uint32_t t)
{
    thread *th = &c->th[t];
    for (;;) {
        ncl_result rc;
        if (th->state == TH_FETCH) {
            if (!fetch(c, t, &th->task)) {
                th->state = TH_DONE;
                return NCL_SUCCESS;
            }
            th->state = TH_HAVE;
            if ((rc = validate(c, t, &th->task)) != NCL_SUCCESS)
                return rc;
        }
        const ncl_task *k = &th->task;
        if (k->kind == NCL_TASK_NOTIFY_WAIT) {
            int blocked = 0;
            if ((rc = ncl_ck_wait(c, t, k, &blocked)) != NCL_SUCCESS)
                return rc;
            if (blocked)
                return NCL_SUCCESS;
            ncl_ck_zone_waited(c, t, k);
        } else if (k->kind == NCL_TASK_NOTIFY_RECORD) {
            if ((rc = ncl_ck_zone_credit(c, t, k)) != NCL_SUCCESS || (rc = ncl_ck_record(c, t, k)) != NCL_SUCCESS)
                return rc;
        } else if ((rc = do_data(c, t, k)) != NCL_SUCCESS) {
            return rc;
        }
        th->state = TH_FETCH;
    }
}
