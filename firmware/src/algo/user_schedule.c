/* user_schedule.c — NCL_ALGO_USER: runs a schedule given as data (ncl/ncl_user.h), step by step. */
#include "ncl_algo.h"
#include "ncl_fmt.h"

#include "ncl/ncl_user.h"

/* Cost over REFERENCE.md: none of its own — the schedule is whatever the user wrote, task for
 * task, plus one task per extra slice of a step larger than plan->slice_elems. It has no cost
 * formula (ncl_plan_cost_ns: none), so auto never picks it. */

static int is_data(uint8_t kind) { return kind <= NCL_TASK_LOCAL_DIV; }
static int is_reduce(uint8_t kind)
{
    return kind == NCL_TASK_WRITE_REDUCE || kind == NCL_TASK_LOCAL_REDUCE || kind == NCL_TASK_LOCAL_DIV;
}
static int is_remote(uint8_t kind) { return kind == NCL_TASK_WRITE || kind == NCL_TASK_WRITE_REDUCE; }
static int reducing(uint8_t coll)
{
    return coll == NCL_COLL_ALLREDUCE || coll == NCL_COLL_REDUCE || coll == NCL_COLL_REDUCE_SCATTER;
}
static int rooted(uint8_t coll) { return coll == NCL_COLL_BROADCAST || coll == NCL_COLL_REDUCE; }

static const char *const buf_names[NCL_BUF_COUNT] = {"send", "recv", "scratch"};

/* Blocks of `count` elements a buffer holds (scratch: as many as named, no bound here). */
static uint64_t buf_blocks(const ncl_user_schedule *s, uint8_t buf)
{
    if (buf == NCL_BUF_SEND)
        return s->coll == NCL_COLL_REDUCE_SCATTER ? (uint64_t)s->nranks : 1u;
    if (buf == NCL_BUF_RECV)
        return s->coll == NCL_COLL_ALLGATHER ? (uint64_t)s->nranks : 1u;
    return UINT64_MAX;
}

static ncl_result bad(ncl_user_where *where, uint32_t step, const char *field, char *msg, size_t len,
                      const char *fmt, ...)
{
    if (where) {
        where->step = step;
        where->field = field;
    }
    if (msg && len) {
        va_list ap;
        va_start(ap, fmt);
        ncl_vfmt(msg, len, fmt, ap);
        va_end(ap);
    }
    return NCL_ERR_INVALID_ARGUMENT;
}

/* One chunk range [first, first + n) of buffer `buf`. */
static ncl_result check_range(const ncl_user_schedule *s, uint32_t i, const char *field, uint8_t buf,
                              uint32_t first, int writes, ncl_user_where *where, char *msg, size_t len)
{
    const ncl_user_step *st = &s->steps[i];
    if (buf >= NCL_BUF_COUNT)
        return bad(where, i, field, msg, len, "buffer %u is unknown (allowed: send, recv, scratch)", buf);
    if (writes && buf == NCL_BUF_SEND)
        return bad(where, i, field, msg, len, "writes into send, which is read only (allowed: recv, scratch)");
    uint64_t end = (uint64_t)first + st->chunks, have = buf_blocks(s, buf);
    if (have != UINT64_MAX && end > have * s->chunks)
        return bad(where, i, field, msg, len, "chunks %u..%llu are past the end of %s (allowed: chunks 0..%llu)",
                   first, (unsigned long long)(end - 1), buf_names[buf],
                   (unsigned long long)(have * s->chunks - 1));
    if (end > UINT32_MAX)
        return bad(where, i, field, msg, len, "chunk %llu is too large (allowed: below 2^32)",
                   (unsigned long long)end);
    return NCL_SUCCESS;
}

static ncl_result check_step(const ncl_user_schedule *s, uint32_t i, ncl_user_where *where, char *msg,
                             size_t len)
{
    const ncl_user_step *st = &s->steps[i];
    int p = s->nranks;
    if (st->rank < 0 || st->rank >= p)
        return bad(where, i, "rank", msg, len, "rank %d is out of range (allowed: 0 to %d)", st->rank, p - 1);
    if (st->queue >= s->queues)
        return bad(where, i, "queue", msg, len, "queue %u is out of range (allowed: 0 to %u)", st->queue,
                   s->queues - 1);
    if (ncl_task_is_wide(st->kind)) /* det's fp32 accumulator: user chunks cannot name one */
        return bad(where, i, "kind", msg, len, "task kind %s is not available in user schedules (allowed: 0 to "
                   "%u, ncl_task_kind)", ncl_task_kind_name(st->kind), NCL_TASK_NOTIFY_WAIT);
    if (st->kind >= NCL_TASK_KIND_COUNT)
        return bad(where, i, "kind", msg, len, "task kind %u is unknown (allowed: 0 to %u, ncl_task_kind)",
                   st->kind, NCL_TASK_NOTIFY_WAIT);
    if (is_reduce(st->kind) && !reducing(s->coll))
        return bad(where, i, "kind", msg, len, "%s does not reduce (allowed: write, copy, record, wait)",
                   ncl_coll_name((ncl_coll)s->coll));
    if (st->flags & ~(st->kind == NCL_TASK_NOTIFY_RECORD ? NCL_TASK_POSTED : 0u))
        return bad(where, i, "flags", msg, len, "flags 0x%x on a %s (allowed: NCL_TASK_POSTED on a record, "
                   "else 0)", st->flags, ncl_task_kind_name(st->kind));
    if (!is_data(st->kind)) {
        if (st->peer < 0 || st->peer >= p)
            return bad(where, i, "peer", msg, len, "peer %d is out of range (allowed: 0 to %d)", st->peer, p - 1);
        if (st->notify >= NCL_NOTIFY_IDS)
            return bad(where, i, "notify", msg, len, "notify id %u is out of range (allowed: 0 to %u)", st->notify,
                       NCL_NOTIFY_IDS - 1);
        if (st->kind == NCL_TASK_NOTIFY_WAIT && st->count == 0)
            return bad(where, i, "count", msg, len, "a wait for 0 records (allowed: at least 1)");
        return NCL_SUCCESS;
    }
    if (is_remote(st->kind) && (st->peer < 0 || st->peer >= p || st->peer == st->rank))
        return bad(where, i, "peer", msg, len, "peer %d is out of range (allowed: 0 to %d, not the rank %d "
                   "itself: use copy or reduce)", st->peer, p - 1, st->rank);
    if (st->chunks == 0)
        return bad(where, i, "chunks", msg, len, "moves 0 chunks (allowed: at least 1)");
    ncl_result rc;
    if ((rc = check_range(s, i, "dst", st->dst_buf, st->dst_chunk, 1, where, msg, len)) != NCL_SUCCESS)
        return rc;
    if (st->kind == NCL_TASK_LOCAL_DIV)
        return NCL_SUCCESS;
    if ((rc = check_range(s, i, "src", st->src_buf, st->src_chunk, 0, where, msg, len)) != NCL_SUCCESS)
        return rc;
    if (st->src_chunk % s->chunks != st->dst_chunk % s->chunks)
        return bad(where, i, "dst", msg, len, "chunk %u is chunk %u of its block, the source chunk %u is chunk %u "
                   "(allowed: the same chunk of a block, so that both are the same size)", st->dst_chunk,
                   st->dst_chunk % s->chunks, st->src_chunk, st->src_chunk % s->chunks);
    return NCL_SUCCESS;
}

ncl_result ncl_user_validate(const ncl_user_schedule *s, ncl_user_where *where, char *msg, size_t len)
{
    if (msg && len)
        msg[0] = '\0';
    if (!s)
        return bad(where, NCL_USER_NO_STEP, "steps", msg, len, "no schedule (allowed: an ncl_user_schedule)");
    if (s->coll >= NCL_COLL_COUNT)
        return bad(where, NCL_USER_NO_STEP, "coll", msg, len, "collective %u is unknown (allowed: 0 to %u)",
                   s->coll, NCL_COLL_COUNT - 1);
    if (s->nranks < 1 || s->nranks > (1 << 20))
        return bad(where, NCL_USER_NO_STEP, "nranks", msg, len, "%d ranks (allowed: 1 to %d)", s->nranks, 1 << 20);
    if (s->chunks < 1 || (uint64_t)s->chunks * (uint64_t)s->nranks > UINT32_MAX)
        return bad(where, NCL_USER_NO_STEP, "chunks", msg, len, "%u chunks (allowed: 1 to %u with %d ranks)",
                   s->chunks, UINT32_MAX / (uint32_t)s->nranks, s->nranks);
    if (s->queues < 1 || s->queues > NCL_MAX_QUEUES)
        return bad(where, NCL_USER_NO_STEP, "queues", msg, len, "%u queues (allowed: 1 to %u)", s->queues,
                   NCL_MAX_QUEUES);
    if (s->step_count && !s->steps)
        return bad(where, NCL_USER_NO_STEP, "steps", msg, len, "%u steps but no step array (allowed: steps "
                   "non-NULL)", s->step_count);
    for (uint32_t i = 0; i < s->step_count; i++) {
        ncl_result rc = check_step(s, i, where, msg, len);
        if (rc != NCL_SUCCESS)
            return rc;
    }
    return NCL_SUCCESS;
}

/* First element of chunk x in a buffer of blocks of `count` elements. */
static uint64_t chunk_elem(const ncl_user_schedule *s, uint64_t count, uint64_t x)
{
    uint64_t off;
    ncl_part(count, s->chunks, x % s->chunks, &off);
    return (x / s->chunks) * count + off;
}

uint64_t ncl_user_scratch_bytes(const ncl_user_schedule *s, uint64_t count, uint32_t esize)
{
    uint64_t blocks = 0;
    for (uint32_t i = 0; s && i < s->step_count; i++) {
        const ncl_user_step *st = &s->steps[i];
        if (!is_data(st->kind))
            continue;
        /* the highest chunk touched decides how many blocks of scratch are needed */
        if (st->dst_buf == NCL_BUF_SCRATCH && st->chunks) {
            uint64_t b = ((uint64_t)st->dst_chunk + st->chunks - 1) / s->chunks + 1;
            blocks = b > blocks ? b : blocks;
        }
        if (st->kind != NCL_TASK_LOCAL_DIV && st->src_buf == NCL_BUF_SCRATCH && st->chunks) {
            uint64_t b = ((uint64_t)st->src_chunk + st->chunks - 1) / s->chunks + 1;
            blocks = b > blocks ? b : blocks;
        }
    }
    if (blocks && count > UINT64_MAX / blocks / (esize ? esize : 1))
        return UINT64_MAX;
    return blocks * count * esize;
}

static ncl_result prepare(ncl_plan *p)
{
    const ncl_user_schedule *s = p->schedule;
    if (!s || ncl_user_validate(s, NULL, NULL, 0) != NCL_SUCCESS || s->coll != p->coll || s->nranks != p->nranks)
        return NCL_ERR_INVALID_ARGUMENT;
    if (s->queues > p->max_queues || ncl_user_scratch_bytes(s, p->count, p->esize) > p->scratch_bytes)
        return NCL_ERR_UNSUPPORTED;
    p->queues = s->queues;
    p->helper_queues = 0;
    p->segments = 1;
    return NCL_SUCCESS;
}

/* Schedule rank <-> real rank: rooted collectives are written for root 0. */
static int32_t to_sched(const ncl_plan *p, int32_t rank)
{
    return rooted(p->coll) ? ncl_mod((int64_t)rank - p->root, p->nranks) : rank;
}
static int32_t to_real(const ncl_plan *p, int32_t rank)
{
    return rooted(p->coll) ? ncl_mod((int64_t)rank + p->root, p->nranks) : rank;
}

/* Where chunk `x` of `buf` lives on real rank `owner` (SEND/RECV mapped for in place). */
static ncl_ref chunk_ref(const ncl_plan *p, uint8_t buf, int32_t owner, uint64_t x)
{
    uint64_t off = chunk_elem(p->schedule, p->count, x) * p->esize;
    if (buf == NCL_BUF_SEND)
        return ncl_ref_add(ncl_plan_input(p, owner), off);
    if (buf == NCL_BUF_RECV)
        return ncl_ref_add(ncl_plan_output(p, owner), off);
    return ncl_ref_make(NCL_BUF_SCRATCH, off);
}

static ncl_ref step_src(const ncl_plan *p, const ncl_user_step *st)
{
    return chunk_ref(p, st->src_buf, p->rank, st->src_chunk);
}
static ncl_ref step_dst(const ncl_plan *p, const ncl_user_step *st)
{
    return chunk_ref(p, st->dst_buf, is_remote(st->kind) ? to_real(p, st->peer) : p->rank, st->dst_chunk);
}

/* Elements the data step moves in this plan; 0 when it is skipped (empty chunks, a division
 * without avg, a copy onto itself in place). */
static uint64_t step_elems(const ncl_plan *p, const ncl_user_step *st)
{
    const ncl_user_schedule *s = p->schedule;
    if (st->kind == NCL_TASK_LOCAL_DIV && !p->avg)
        return 0;
    if (st->kind == NCL_TASK_LOCAL_COPY) {
        ncl_ref a = step_src(p, st), b = step_dst(p, st);
        if (a.buf == b.buf && a.off == b.off)
            return 0;
    }
    return chunk_elem(s, p->count, (uint64_t)st->dst_chunk + st->chunks) - chunk_elem(s, p->count, st->dst_chunk);
}

/* Slice [k, k + slice) of data step st. */
static void data_task(const ncl_plan *p, const ncl_user_step *st, uint64_t k, uint32_t step, ncl_task *t)
{
    uint64_t es = p->esize, bytes = ncl_min_u64(p->slice_elems, step_elems(p, st) - k) * es;
    ncl_ref src = ncl_ref_add(step_src(p, st), k * es), dst = ncl_ref_add(step_dst(p, st), k * es);
    int peer = to_real(p, st->peer);
    switch (st->kind) {
    case NCL_TASK_WRITE: ncl_task_write(t, peer, src, dst, bytes, step); break;
    case NCL_TASK_WRITE_REDUCE: ncl_task_write_reduce(t, p, peer, src, dst, bytes, step); break;
    case NCL_TASK_LOCAL_COPY: ncl_task_copy(t, src, dst, bytes, step); break;
    case NCL_TASK_LOCAL_REDUCE: ncl_task_reduce(t, p, src, dst, bytes, step); break;
    default: ncl_task_div(t, p, dst, bytes, step); break;
    }
}

/* The steps of (rank, queue) in array order: g->i the step index, g->j the step number within
 * the stream, g->k the element offset within a data step being cut into slices. Each stream
 * scans the step array once. */
static int next(const ncl_plan *p, uint32_t q, ncl_gen *g, ncl_task *t)
{
    const ncl_user_schedule *s = p->schedule;
    const int32_t me = to_sched(p, p->rank);

    NCL_GEN_BEGIN(g);
    for (g->i = 0; g->i < s->step_count; g->i++) {
        if (s->steps[g->i].rank != me || s->steps[g->i].queue != q)
            continue;
        if (s->steps[g->i].kind == NCL_TASK_NOTIFY_RECORD) {
            ncl_task_record(t, to_real(p, s->steps[g->i].peer), s->steps[g->i].notify, (uint32_t)g->j);
            t->flags = s->steps[g->i].flags;
            NCL_YIELD(g);
        } else if (s->steps[g->i].kind == NCL_TASK_NOTIFY_WAIT) {
            ncl_task_wait(t, to_real(p, s->steps[g->i].peer), s->steps[g->i].notify, s->steps[g->i].count,
                          (uint32_t)g->j);
            NCL_YIELD(g);
        } else {
            for (g->k = 0; g->k < step_elems(p, &s->steps[g->i]); g->k += p->slice_elems) {
                data_task(p, &s->steps[g->i], g->k, (uint32_t)g->j, t);
                NCL_YIELD(g);
            }
        }
        g->j++;
    }
    NCL_GEN_END(g);
}

const ncl_algo_desc ncl_algo_user_allreduce = {"user", NCL_COLL_ALLREDUCE, NCL_ALGO_USER, prepare, next};
const ncl_algo_desc ncl_algo_user_broadcast = {"user", NCL_COLL_BROADCAST, NCL_ALGO_USER, prepare, next};
const ncl_algo_desc ncl_algo_user_reduce = {"user", NCL_COLL_REDUCE, NCL_ALGO_USER, prepare, next};
const ncl_algo_desc ncl_algo_user_reduce_scatter = {"user", NCL_COLL_REDUCE_SCATTER, NCL_ALGO_USER, prepare, next};
const ncl_algo_desc ncl_algo_user_allgather = {"user", NCL_COLL_ALLGATHER, NCL_ALGO_USER, prepare, next};
