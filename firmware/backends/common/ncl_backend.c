/* ncl_backend.c — what every HAL backend repeats: bound buffers, checked regions, the CPU runner of data tasks, log-level names. */
#include "ncl_backend.h"

#include "ncl/ncl_dtype.h"
#include "ncl_fmt.h"

#include <string.h>

void ncl_bk_bind(ncl_bk_bufs *b, const ncl_hal_launch *l, uint64_t scratch, uint64_t scratch_bytes)
{
    b->base[NCL_BUF_SEND] = (uint64_t)(uintptr_t)l->send; /* never written: ncl_bk_region refuses */
    b->size[NCL_BUF_SEND] = l->send ? l->send_bytes : 0;
    b->base[NCL_BUF_RECV] = (uint64_t)(uintptr_t)l->recv;
    b->size[NCL_BUF_RECV] = l->recv ? l->recv_bytes : 0;
    b->base[NCL_BUF_SCRATCH] = scratch;
    b->size[NCL_BUF_SCRATCH] = scratch_bytes;
    b->bound = 1;
}

void ncl_bk_keep_scratch(ncl_bk_bufs *b, uint64_t scratch, uint64_t scratch_bytes)
{
    b->base[NCL_BUF_SCRATCH] = scratch;
    b->size[NCL_BUF_SCRATCH] = scratch_bytes;
    b->scratch_kept = 1;
}

void ncl_bk_unbind(ncl_bk_bufs *b)
{
    uint64_t scratch = b->base[NCL_BUF_SCRATCH], scratch_bytes = b->size[NCL_BUF_SCRATCH];
    memset(b->base, 0, sizeof b->base);
    memset(b->size, 0, sizeof b->size);
    if (b->scratch_kept)
        ncl_bk_keep_scratch(b, scratch, scratch_bytes);
    b->bound = 0;
}

int ncl_bk_region(const ncl_bk_bufs *b, ncl_ref ref, uint64_t bytes, int write, uint64_t *addr, char *why,
                  size_t why_len)
{
    if (ref.buf >= NCL_BUF_COUNT) {
        ncl_fmt(why, why_len, "unknown buffer %u", ref.buf);
        return 0;
    }
    const char *name = ncl_buf_name(ref.buf);
    const unsigned long long off = ref.off, n = bytes;
    if (!b->bound && !(ref.buf == NCL_BUF_SCRATCH && b->scratch_kept)) {
        ncl_fmt(why, why_len, "%s[%llu..+%llu): no collective is running (buffers unbound)", name, off, n);
        return 0;
    }
    if (write && ref.buf == NCL_BUF_SEND) {
        ncl_fmt(why, why_len, "SEND is read-only");
        return 0;
    }
    const uint64_t base = b->base[ref.buf], size = b->size[ref.buf];
    if (ref.off > size || bytes > size - ref.off) {
        ncl_fmt(why, why_len, "%s[%llu..+%llu) is out of bounds (bound size %llu)", name, off, n,
                (unsigned long long)size);
        return 0;
    }
    if (!base) {
        if (bytes && !b->addressless) {
            ncl_fmt(why, why_len, "%s has no address but %llu bytes are addressed", name, n);
            return 0;
        }
        *addr = 0;
        return 1;
    }
    if (ref.off > UINT64_MAX - base || bytes > UINT64_MAX - base - ref.off) {
        ncl_fmt(why, why_len, "%s + %llu wraps the address space", name, off);
        return 0;
    }
    *addr = base + ref.off;
    return 1;
}

void ncl_bk_cpu_caps(uint64_t scratch_bytes, const uint16_t *no_inline_ops, uint32_t inline_align,
                     ncl_hal_caps *out)
{
    memset(out, 0, sizeof *out);
    out->scratch_bytes = scratch_bytes;
    out->max_queues = NCL_MAX_QUEUES;
    out->buf_align = 1;
    for (int d = 0; d < NCL_DTYPE_COUNT; d++)
        out->inline_ops[d] = (uint16_t)(NCL_INLINE_ALL_OPS & ~(no_inline_ops ? no_inline_ops[d] : 0u));
    out->inline_align = inline_align;
    out->features = NCL_HAL_FEAT_WIDE | NCL_HAL_FEAT_ZONES | NCL_HAL_FEAT_REDUCE_WRITE;
}

int ncl_bk_task_ok(const ncl_task *t, char *why, size_t why_len)
{
    const size_t es = ncl_dtype_size((ncl_dtype)t->dtype);
    switch ((ncl_task_kind)t->kind) {
    case NCL_TASK_WRITE:
    case NCL_TASK_LOCAL_COPY:
        return 1;
    case NCL_TASK_WRITE_REDUCE:
    case NCL_TASK_LOCAL_REDUCE:
    case NCL_TASK_REDUCE_WRITE:
    case NCL_TASK_REDUCE_WRITE_REDUCE:
    case NCL_TASK_LOCAL_DIV:
        /* avg never reaches a task (it reduces with sum, then divides), but the kernels take it as sum */
        if (!es || (t->kind != NCL_TASK_LOCAL_DIV && t->op >= NCL_OP_COUNT)) {
            ncl_fmt(why, why_len, "bad dtype %u or op %u", t->dtype, t->op);
            return 0;
        }
        if (t->bytes % es) {
            ncl_fmt(why, why_len, "%llu bytes is not a whole number of %s elements", (unsigned long long)t->bytes,
                    ncl_dtype_name((ncl_dtype)t->dtype));
            return 0;
        }
        if (t->kind == NCL_TASK_LOCAL_DIV && t->count == 0) {
            ncl_fmt(why, why_len, "division by zero");
            return 0;
        }
        return 1;
    case NCL_TASK_LOCAL_WIDEN:
    case NCL_TASK_LOCAL_REDUCE_WIDE:
    case NCL_TASK_LOCAL_NARROW:
        if (!ncl_task_wide_ok(t)) {
            ncl_fmt(why, why_len, "needs dtype half or bfloat16 and a whole number of elements (dtype %u, op %u, "
                    "%llu bytes)", t->dtype, t->op, (unsigned long long)t->bytes);
            return 0;
        }
        return 1;
    default:
        ncl_fmt(why, why_len, "kind %u is not a data task", t->kind);
        return 0;
    }
}

/* Whether [a, a+n) and [b, b+n) share a byte (compared as integers: they may be unrelated objects). */
static int overlap(const void *a, const void *b, uint64_t n)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return x < y + n && y < x + n;
}

int ncl_bk_run(const ncl_task *t, void *dst, const void *src, char *why, size_t why_len)
{
    const size_t es = ncl_dtype_size((ncl_dtype)t->dtype);
    switch ((ncl_task_kind)t->kind) {
    case NCL_TASK_WRITE:
    case NCL_TASK_LOCAL_COPY:
        if (dst == src)
            return 1;
        if (overlap(dst, src, t->bytes))
            memmove(dst, src, t->bytes);
        else
            memcpy(dst, src, t->bytes);
        return 1;
    case NCL_TASK_WRITE_REDUCE:
    case NCL_TASK_LOCAL_REDUCE:
    case NCL_TASK_LOCAL_DIV:
        if (!es) {
            ncl_fmt(why, why_len, "bad dtype %u", t->dtype);
            return 0;
        }
        if (t->kind == NCL_TASK_LOCAL_DIV) {
            ncl_div_kernel(dst, t->bytes / es, (ncl_dtype)t->dtype, t->count);
            return 1;
        }
        if (dst != src && overlap(dst, src, t->bytes)) {
            ncl_fmt(why, why_len, "source and destination partially overlap");
            return 0;
        }
        ncl_reduce_kernel(dst, src, t->bytes / es, (ncl_dtype)t->dtype, (ncl_op)t->op);
        return 1;
    case NCL_TASK_LOCAL_WIDEN:
    case NCL_TASK_LOCAL_REDUCE_WIDE:
    case NCL_TASK_LOCAL_NARROW:
        ncl_task_run_wide(t, dst, src);
        return 1;
    default:
        ncl_fmt(why, why_len, "kind %u is not a data task", t->kind);
        return 0;
    }
}

int ncl_bk_run_pair(const ncl_task *t, void *dst, const void *src, const void *src2, char *why, size_t why_len)
{
    const size_t es = ncl_dtype_size((ncl_dtype)t->dtype);
    uint64_t piece[128]; /* 1 KiB: whole elements of every dtype */
    if (!ncl_task_two_source(t->kind) || !es) {
        ncl_fmt(why, why_len, "kind %u dtype %u is not a two-source task", t->kind, t->dtype);
        return 0;
    }
    if ((dst != src && overlap(dst, src, t->bytes)) || (dst != src2 && overlap(dst, src2, t->bytes))) {
        ncl_fmt(why, why_len, "a source and the destination partially overlap");
        return 0;
    }
    if (t->kind == NCL_TASK_REDUCE_WRITE && !overlap(dst, src, t->bytes) && !overlap(dst, src2, t->bytes)) {
        ncl_reduce3_kernel(dst, src, src2, t->bytes / es, (ncl_dtype)t->dtype, (ncl_op)t->op); /* one pass */
        return 1;
    }
    /* piece by piece, so that a destination equal to a source is read before it is written */
    for (uint64_t off = 0; off < t->bytes; off += sizeof piece) {
        const size_t n = (size_t)(t->bytes - off < sizeof piece ? t->bytes - off : sizeof piece);
        memcpy(piece, (const unsigned char *)src + off, n);
        ncl_reduce_kernel(piece, (const unsigned char *)src2 + off, n / es, (ncl_dtype)t->dtype, (ncl_op)t->op);
        if (t->kind == NCL_TASK_REDUCE_WRITE)
            memcpy((unsigned char *)dst + off, piece, n);
        else
            ncl_reduce_kernel((unsigned char *)dst + off, piece, n / es, (ncl_dtype)t->dtype, (ncl_op)t->op);
    }
    return 1;
}

static const char *const level_names[] = {"error", "warn", "info", "debug"};

const char *ncl_bk_log_level_name(int level)
{
    return level >= NCL_LOG_ERROR && level <= NCL_LOG_DEBUG ? level_names[level] : "?";
}

/* a == b, ignoring the case of a (b is lower case) */
static int same_word(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
        if (x != *b)
            return 0;
    }
    return *a == *b;
}

int ncl_bk_log_level_parse(const char *text, int *level)
{
    static const struct {
        const char *word;
        int level;
    } words[] = {
        {"debug", NCL_LOG_DEBUG}, {"all", NCL_LOG_DEBUG}, {"info", NCL_LOG_INFO},   {"warn", NCL_LOG_WARN},
        {"warning", NCL_LOG_WARN}, {"error", NCL_LOG_ERROR}, {"off", NCL_LOG_OFF},  {"none", NCL_LOG_OFF},
        {"0", NCL_LOG_OFF},
    };
    for (size_t i = 0; text && i < sizeof words / sizeof words[0]; i++) {
        if (same_word(text, words[i].word)) {
            *level = words[i].level;
            return 0;
        }
    }
    return -1;
}
