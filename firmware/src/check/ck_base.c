/* ck_base.c — what every part of the checker uses: its messages (the first violated rule) and its memory (growth and pools). */
#include "ck.h"

#include <stdarg.h>

ncl_result ncl_ck_fail(ck *c, ncl_result r, const char *fmt, ...)
{
    if (c->msg && c->msg_len) {
        va_list ap;
        va_start(ap, fmt);
        ncl_vfmt(c->msg, c->msg_len, fmt, ap);
        va_end(ap);
    }
    return r;
}

ncl_result ncl_ck_oom(ck *c)
{
    return ncl_ck_fail(c, NCL_ERR_OUT_OF_MEMORY, "schedule checker: the allocator ran out of memory");
}

/* "rank R qQ step S (KIND)" */
void ncl_ck_task_name(const ck *c, uint32_t t, uint32_t step, uint8_t kind, char *buf, size_t len)
{
    ncl_fmt(buf, len, "rank %d q%u step %u (%s)", t_rank(c, t), t_queue(c, t), step,
            ncl_task_kind_name(kind));
}

ncl_result ncl_ck_task_fail(ck *c, uint32_t t, const ncl_task *k, const char *fmt, ...)
{
    char who[96], what[256];
    va_list ap;
    ncl_ck_task_name(c, t, k->step, k->kind, who, sizeof who);
    va_start(ap, fmt);
    ncl_vfmt(what, sizeof what, fmt, ap);
    va_end(ap);
    return ncl_ck_fail(c, NCL_ERR_SCHEDULE, "%s: %s", who, what);
}

/* Rank sets as "0-2,5" (truncated with "..." when long). */
void ncl_ck_fmt_set(const uint64_t *set, int nranks, char *buf, size_t len)
{
    size_t pos = 0;
    int first = 1;
    buf[0] = '\0';
    for (int r = 0; r < nranks; r++) {
        if (!((set[r / 64] >> (r % 64)) & 1))
            continue;
        int e = r;
        while (e + 1 < nranks && ((set[(e + 1) / 64] >> ((e + 1) % 64)) & 1))
            e++;
        if (pos + 24 >= len) {
            ncl_fmt(buf + pos, len - pos, "...");
            return;
        }
        if (e == r)
            pos += ncl_fmt(buf + pos, len - pos, first ? "%d" : ",%d", r);
        else
            pos += ncl_fmt(buf + pos, len - pos, first ? "%d-%d" : ",%d-%d", r, e);
        first = 0;
        r = e;
    }
}

/* Grows *v (elements of `elem` bytes) to hold at least `need`. */
int ncl_ck_grow(ck *c, void **v, size_t *cap, size_t n, size_t need, size_t elem)
{
    if (need <= *cap)
        return 1;
    size_t nc = *cap ? *cap * 2 : 8;
    if (nc < need)
        nc = need;
    void *nv = ck_alloc(c, nc * elem);
    if (!nv)
        return 0;
    if (n)
        memcpy(nv, *v, n * elem);
    ck_free(c, *v);
    *v = nv;
    *cap = nc;
    return 1;
}

void ncl_ck_pool_init(pool *p, size_t size)
{
    p->size = (size + 15u) & ~(size_t)15u;
    p->per_block = 65536u / p->size;
    if (p->per_block < 4)
        p->per_block = 4;
    if (p->per_block > 256)
        p->per_block = 256;
    p->free_list = NULL;
    p->blocks = NULL;
}

void ncl_ck_pool_destroy(ck *c, pool *p)
{
    while (p->blocks) {
        void *next = *(void **)p->blocks;
        ck_free(c, p->blocks);
        p->blocks = next;
    }
}
