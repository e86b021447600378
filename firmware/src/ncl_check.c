/* ncl_check.c — the schedule checker: runs every rank's task streams in one deterministic
 * interleaving, with vector clocks for races and interval-based symbolic memory for results. */
#include "ncl/ncl_check.h"

#include "ncl_algo.h"
#include "ncl_fmt.h"

#include <stdarg.h>
#include <string.h>

/* How it works.
 * Threads are (rank, queue) pairs, t = rank * queues + queue. Each thread holds only its current
 * task and generator state, so the whole schedule streams through in O(threads) memory plus
 * the live state below.
 * - Notifies: one counter per (owner rank, sender rank, id) in a hash table, holding the FIFO of
 *   records not yet consumed, each with the recorder's vector clock. A wait consumes the oldest
 *   `count` records and joins their clocks (FIFO matching of a counting semaphore).
 * - Races: FastTrack-style. Every access carries an epoch (thread, clock); it is ordered before a
 *   later access of thread u iff same thread or vc[u][thread] >= clock. A thread's own clock
 *   advances lazily, on its first access after a record, so records without accesses in between
 *   share one clock snapshot. Per (rank, buffer) an access map keeps, for each byte range, the
 *   live accesses; an access ordered after an older one that it makes redundant (any write, or
 *   a read after a read) drops it there, so a range holds one write and the reads since.
 *   Two protocol rules follow from the clocks too: a write into a peer must come after some
 *   notify from that peer (it has entered the collective and bound its buffers: READY), and
 *   must be ordered before the end of one of the peer's queues (a wait there covers it: DATA),
 *   or the peer could return before the data lands.
 * - Symbolic memory: per (rank, buffer) sorted segments covering the buffer, each holding a
 *   contributor set, the input element index (`orig`) at its start, and divided/defined flags.
 *   Adjacent segments that continue each other are merged. Wide accumulation (plan->wide):
 *   an fp32 element covers two cells of the narrow element size, marked `wide`, with `orig`
 *   counting half elements (2x, 2x+1 for input element x), so a wide run still continues
 *   itself; a wide element whose halves were split (a narrow write over one of them, a copy to
 *   an offset that is not a multiple of 4) shows as a piece boundary or an odd orig at an
 *   element boundary and is rejected where the accumulator is next read as fp32.
 * - Deadlock: when no queue can run, a blocked wait whose peer has no other blocked queue is
 *   reported as a record that never comes; otherwise a wait-for cycle is found and printed. */

#define SET_WORDS ((NCL_CHECK_MAX_RANKS + 63) / 64)
#define NO_THREAD 0xffffffffu

enum { TH_FETCH = 0, TH_HAVE, TH_BLOCKED, TH_DONE };

typedef struct seg {
    uint64_t lo, hi; /* element range [lo, hi) of the buffer */
    uint64_t orig;   /* element index in the contributors' inputs at lo (defined only) */
    uint64_t set[SET_WORDS];
    uint8_t defined, divided, wide;
} seg;

typedef struct segvec {
    seg *v;
    size_t n, cap;
} segvec;

/* One past access (the task's epoch and, for messages, its step and kind). */
typedef struct anode {
    struct anode *next;
    uint32_t thread, clock, step;
    uint8_t write, kind;
} anode;

/* Bytes [lo, hi) of a buffer and the live accesses that cover them, oldest first. */
typedef struct aseg {
    uint64_t lo, hi;
    anode *head;
} aseg;

#define ABLK 32u
typedef struct ablock {
    uint32_t n;
    aseg s[ABLK];
} ablock;

/* Access map of one buffer: segments tiling [0, bytes), kept sorted in blocks so that finding,
 * splitting and merging stay cheap when a buffer is cut into thousands of slices. */
typedef struct amap {
    ablock **b;
    size_t nb, capb;
} amap;

typedef struct apos {
    size_t k; /* block */
    uint32_t i; /* segment in the block */
} apos;

/* One (rank, buffer). */
typedef struct mem {
    uint64_t bytes;
    segvec segs;
    amap acc;
} mem;

/* A vector clock snapshot shared by the records taken while it was current. */
typedef struct snap {
    uint32_t refs;
    uint32_t vc[];
} snap;

typedef struct pend {
    struct pend *next;
    snap *s;
} pend;

typedef struct counter {
    int32_t owner, sender; /* counter (sender, id) held by rank owner */
    uint32_t id;
    uint32_t waiters; /* first waiting thread + 1, 0 = none */
    uint64_t count;   /* records not consumed yet (= length of the pend list) */
    pend *head, *tail;
    uint8_t used;
} counter;

typedef struct thread {
    ncl_gen gen;
    ncl_task task; /* current task when state is HAVE or BLOCKED */
    snap *cached;  /* snapshot of this thread's clock, while it is unchanged */
    uint32_t next_waiter;
    uint8_t state, released;
    /* deadlock search */
    uint8_t color;
    uint32_t it, parent, cyc_next;
} thread;

/* Fixed-size objects from blocks; everything is freed by dropping the blocks. */
typedef struct pool {
    size_t size, per_block;
    void *free_list, *blocks;
} pool;

typedef struct ck {
    const ncl_plan *plan;
    const ncl_check_source *src;
    const ncl_algo_desc *algo;
    ncl_alloc_fn alloc;
    ncl_free_fn free_fn;
    void *ud;
    char *msg;
    size_t msg_len;
    int nranks;
    uint32_t queues, nthreads, esize;
    thread *th;
    uint32_t *vc; /* nthreads x nthreads */
    mem *mem;     /* nranks x NCL_BUF_COUNT */
    counter *ctr;
    size_t ctr_cap, ctr_n;
    pool snaps, pends, anodes;
    uint32_t *ready;
    uint32_t rhead, rcount;
    segvec tmp[3];
    uint64_t all[SET_WORDS];
} ck;

static const char *const buf_names[NCL_BUF_COUNT] = {"SEND", "RECV", "SCRATCH"};

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static uint64_t max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* ---- messages ---- */

static ncl_result fail(ck *c, ncl_result r, const char *fmt, ...)
{
    if (c->msg && c->msg_len) {
        va_list ap;
        va_start(ap, fmt);
        ncl_vfmt(c->msg, c->msg_len, fmt, ap);
        va_end(ap);
    }
    return r;
}

static ncl_result oom(ck *c)
{
    return fail(c, NCL_ERR_OUT_OF_MEMORY, "schedule checker: the allocator ran out of memory");
}

static int t_rank(const ck *c, uint32_t t) { return (int)(t / c->queues); }
static uint32_t t_queue(const ck *c, uint32_t t) { return t % c->queues; }

/* "rank R qQ step S (KIND)" */
static void task_name(const ck *c, uint32_t t, uint32_t step, uint8_t kind, char *buf, size_t len)
{
    ncl_fmt(buf, len, "rank %d q%u step %u (%s)", t_rank(c, t), t_queue(c, t), step,
            ncl_task_kind_name(kind));
}

static ncl_result task_fail(ck *c, uint32_t t, const ncl_task *k, const char *fmt, ...)
{
    char who[96], what[256];
    va_list ap;
    task_name(c, t, k->step, k->kind, who, sizeof who);
    va_start(ap, fmt);
    ncl_vfmt(what, sizeof what, fmt, ap);
    va_end(ap);
    return fail(c, NCL_ERR_SCHEDULE, "%s: %s", who, what);
}

/* Rank sets as "0-2,5" (truncated with "..." when long). */
static void fmt_set(const uint64_t *set, int nranks, char *buf, size_t len)
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

/* ---- memory ---- */

static void *ck_alloc(ck *c, size_t bytes) { return c->alloc(c->ud, bytes); }
static void ck_free(ck *c, void *p)
{
    if (p)
        c->free_fn(c->ud, p);
}

/* Grows *v (elements of `elem` bytes) to hold at least `need`. */
static int grow(ck *c, void **v, size_t *cap, size_t n, size_t need, size_t elem)
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

#define POOL_HDR 16u

static void pool_init(pool *p, size_t size)
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

static void *pool_get(ck *c, pool *p)
{
    if (!p->free_list) {
        char *b = ck_alloc(c, POOL_HDR + p->size * p->per_block);
        if (!b)
            return NULL;
        *(void **)b = p->blocks;
        p->blocks = b;
        for (size_t i = p->per_block; i-- > 0;) {
            void *o = b + POOL_HDR + i * p->size;
            *(void **)o = p->free_list;
            p->free_list = o;
        }
    }
    void *o = p->free_list;
    p->free_list = *(void **)o;
    return o;
}

static void pool_put(pool *p, void *o)
{
    *(void **)o = p->free_list;
    p->free_list = o;
}

static void pool_destroy(ck *c, pool *p)
{
    while (p->blocks) {
        void *next = *(void **)p->blocks;
        ck_free(c, p->blocks);
        p->blocks = next;
    }
}

/* ---- rank sets ---- */

static void set_one(uint64_t *s, int r)
{
    memset(s, 0, SET_WORDS * sizeof *s);
    s[r / 64] |= 1ull << (r % 64);
}
static int set_eq(const uint64_t *a, const uint64_t *b)
{
    for (int i = 0; i < SET_WORDS; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}
/* First rank in both sets, or -1. */
static int set_common(const uint64_t *a, const uint64_t *b)
{
    for (int i = 0; i < SET_WORDS; i++) {
        uint64_t x = a[i] & b[i];
        if (x) {
            int bit = 0;
            while (!((x >> bit) & 1))
                bit++;
            return i * 64 + bit;
        }
    }
    return -1;
}

/* ---- symbolic memory: segments ---- */

static int seg_mergeable(const seg *a, const seg *b)
{
    if (a->defined != b->defined)
        return 0;
    if (!a->defined)
        return 1;
    return a->divided == b->divided && a->wide == b->wide && b->orig == a->orig + (a->hi - a->lo) &&
           set_eq(a->set, b->set);
}

static size_t seg_find(const segvec *sv, uint64_t x)
{
    size_t lo = 0, hi = sv->n;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (sv->v[mid].lo <= x)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static int sv_push(ck *c, segvec *sv, const seg *s)
{
    if (sv->n && sv->v[sv->n - 1].hi == s->lo && seg_mergeable(&sv->v[sv->n - 1], s)) {
        sv->v[sv->n - 1].hi = s->hi;
        return 1;
    }
    if (!grow(c, (void **)&sv->v, &sv->cap, sv->n, sv->n + 1, sizeof(seg)))
        return 0;
    sv->v[sv->n++] = *s;
    return 1;
}

/* Copies the pieces of [lo, hi) into out, renumbered to start at `base`. */
static int sv_gather(ck *c, const segvec *sv, uint64_t lo, uint64_t hi, uint64_t base, segvec *out)
{
    out->n = 0;
    for (size_t i = seg_find(sv, lo); i < sv->n && sv->v[i].lo < hi; i++) {
        seg s = sv->v[i];
        uint64_t a = max_u64(s.lo, lo), b = min_u64(s.hi, hi);
        if (s.defined)
            s.orig += a - s.lo;
        s.lo = a - lo + base;
        s.hi = b - lo + base;
        if (!sv_push(c, out, &s))
            return 0;
    }
    return 1;
}

/* Merges continuing neighbours within v[a, b). */
static void sv_merge(segvec *sv, size_t a, size_t b)
{
    if (b <= a + 1)
        return;
    size_t w = a;
    for (size_t r = a + 1; r < b; r++) {
        if (seg_mergeable(&sv->v[w], &sv->v[r]))
            sv->v[w].hi = sv->v[r].hi;
        else
            sv->v[++w] = sv->v[r];
    }
    size_t removed = (b - a) - (w - a + 1);
    if (removed) {
        memmove(&sv->v[w + 1], &sv->v[b], (sv->n - b) * sizeof(seg));
        sv->n -= removed;
    }
}

/* Replaces [lo, hi) of sv (hi > lo, inside the buffer) with the pieces in `in`, which cover it. */
static int sv_replace(ck *c, segvec *sv, uint64_t lo, uint64_t hi, const segvec *in)
{
    size_t i = seg_find(sv, lo), j = seg_find(sv, hi - 1) + 1;
    seg left = sv->v[i], right = sv->v[j - 1];
    size_t has_l = left.lo < lo, has_r = right.hi > hi;
    if (has_l)
        left.hi = lo;
    if (has_r) {
        if (right.defined)
            right.orig += hi - right.lo;
        right.lo = hi;
    }
    size_t k = has_l + in->n + has_r, newn = sv->n - (j - i) + k;
    if (!grow(c, (void **)&sv->v, &sv->cap, sv->n, newn, sizeof(seg)))
        return 0;
    memmove(&sv->v[i + k], &sv->v[j], (sv->n - j) * sizeof(seg));
    size_t w = i;
    if (has_l)
        sv->v[w++] = left;
    memcpy(&sv->v[w], in->v, in->n * sizeof(seg));
    w += in->n;
    if (has_r)
        sv->v[w++] = right;
    sv->n = newn;
    sv_merge(sv, i ? i - 1 : 0, min_u64(i + k + 1, newn));
    return 1;
}

static mem *mem_of(ck *c, int rank, uint32_t buf) { return &c->mem[(size_t)rank * NCL_BUF_COUNT + buf]; }

static ncl_result undefined_read(ck *c, uint32_t t, const ncl_task *k, int rank, uint32_t buf, uint64_t e)
{
    return task_fail(c, t, k, "reads rank %d %s element %llu, which nobody wrote", rank, buf_names[buf],
                     (unsigned long long)e);
}

/* dst[dlo, dlo+n) <- src[slo, slo+n) */
static ncl_result sym_copy(ck *c, uint32_t t, const ncl_task *k, int sr, uint32_t sb, uint64_t slo,
                           int dr, uint32_t db, uint64_t dlo, uint64_t n)
{
    segvec *a = &c->tmp[0];
    if (!sv_gather(c, &mem_of(c, sr, sb)->segs, slo, slo + n, dlo, a))
        return oom(c);
    for (size_t i = 0; i < a->n; i++)
        if (!a->v[i].defined)
            return undefined_read(c, t, k, sr, sb, a->v[i].lo - dlo + slo);
    if (!sv_replace(c, &mem_of(c, dr, db)->segs, dlo, dlo + n, a))
        return oom(c);
    return NCL_SUCCESS;
}

/* Wide: the source pieces (cells renumbered from dlo, narrow) as fp32 elements from dlo on:
 * each narrow cell becomes two wide cells. Fails on an fp32 source (it must be narrow). */
static ncl_result sv_widen(ck *c, uint32_t t, const ncl_task *k, segvec *a, int sr, uint32_t sb, uint64_t slo,
                           uint64_t dlo)
{
    for (size_t i = 0; i < a->n; i++) {
        seg *x = &a->v[i];
        if (!x->defined)
            return undefined_read(c, t, k, sr, sb, x->lo - dlo + slo);
        if (x->wide)
            return task_fail(c, t, k, "reads rank %d %s element %llu as %s, but it holds an fp32 accumulator", sr,
                             buf_names[sb], (unsigned long long)(x->lo - dlo + slo),
                             ncl_dtype_name((ncl_dtype)k->dtype));
        x->lo = dlo + 2 * (x->lo - dlo);
        x->hi = dlo + 2 * (x->hi - dlo);
        x->orig *= 2;
        x->wide = 1;
    }
    return NCL_SUCCESS;
}

/* dst[dlo, dlo+n) <- dst op src, both already gathered to [dlo, dlo+n) (s, d); `wide` says
 * which representation both sides must have. */
static ncl_result sym_fold(ck *c, uint32_t t, const ncl_task *k, const segvec *s, const segvec *d, int sr,
                           uint32_t sb, uint64_t slo, int dr, uint32_t db, uint64_t dlo, uint64_t n, int wide)
{
    segvec *out = &c->tmp[2];
    out->n = 0;
    size_t i = 0, j = 0;
    for (uint64_t x = dlo; x < dlo + n;) {
        const seg *ps = &s->v[i], *pd = &d->v[j];
        uint64_t e = min_u64(ps->hi, pd->hi);
        if (!pd->defined)
            return undefined_read(c, t, k, dr, db, x);
        if (!ps->defined)
            return undefined_read(c, t, k, sr, sb, x - dlo + slo);
        if (pd->wide != wide)
            return task_fail(c, t, k, wide ? "accumulates into rank %d %s element %llu, which is not an fp32 "
                                             "accumulator (LOCAL_WIDEN it first)"
                                           : "reduces into rank %d %s element %llu, which holds an fp32 "
                                             "accumulator (use LOCAL_REDUCE_WIDE)",
                             dr, buf_names[db], (unsigned long long)x);
        if (ps->wide != wide)
            return task_fail(c, t, k, "reduces rank %d %s element %llu, which holds an fp32 accumulator", sr,
                             buf_names[sb], (unsigned long long)(x - dlo + slo));
        uint64_t so = ps->orig + (x - ps->lo), dorig = pd->orig + (x - pd->lo);
        if (so != dorig)
            return task_fail(c, t, k,
                             "reduces input element %llu (rank %d %s element %llu) into input element "
                             "%llu (rank %d %s element %llu): mismatched elements",
                             (unsigned long long)so, sr, buf_names[sb], (unsigned long long)(x - dlo + slo),
                             (unsigned long long)dorig, dr, buf_names[db], (unsigned long long)x);
        if (ps->divided || pd->divided)
            return task_fail(c, t, k, "reduces into rank %d %s element %llu a value already divided (avg)",
                             dr, buf_names[db], (unsigned long long)x);
        int twice = set_common(ps->set, pd->set);
        if (twice >= 0)
            return task_fail(c, t, k, "rank %d's contribution counted twice at rank %d %s element %llu", twice,
                             dr, buf_names[db], (unsigned long long)x);
        seg r;
        memset(&r, 0, sizeof r);
        r.lo = x;
        r.hi = e;
        r.orig = dorig;
        r.defined = 1;
        r.wide = (uint8_t)wide;
        for (int w = 0; w < SET_WORDS; w++)
            r.set[w] = ps->set[w] | pd->set[w];
        if (!sv_push(c, out, &r))
            return oom(c);
        x = e;
        if (ps->hi == e)
            i++;
        if (pd->hi == e)
            j++;
    }
    if (!sv_replace(c, &mem_of(c, dr, db)->segs, dlo, dlo + n, out))
        return oom(c);
    return NCL_SUCCESS;
}

/* dst[dlo, dlo+n) <- dst op src[slo, slo+n) */
static ncl_result sym_reduce(ck *c, uint32_t t, const ncl_task *k, int sr, uint32_t sb, uint64_t slo,
                             int dr, uint32_t db, uint64_t dlo, uint64_t n)
{
    segvec *s = &c->tmp[0], *d = &c->tmp[1];
    if (!sv_gather(c, &mem_of(c, sr, sb)->segs, slo, slo + n, dlo, s) ||
        !sv_gather(c, &mem_of(c, dr, db)->segs, dlo, dlo + n, dlo, d))
        return oom(c);
    return sym_fold(c, t, k, s, d, sr, sb, slo, dr, db, dlo, n, 0);
}

/* LOCAL_WIDEN (init) or LOCAL_REDUCE_WIDE: fp32 cells [dlo, dlo+2n) <- (dst op) src[slo, slo+n) */
static ncl_result sym_widen(ck *c, uint32_t t, const ncl_task *k, int r, uint32_t sb, uint64_t slo, uint32_t db,
                            uint64_t dlo, uint64_t n, int init)
{
    segvec *s = &c->tmp[0], *d = &c->tmp[1];
    ncl_result rc;
    if (!sv_gather(c, &mem_of(c, r, sb)->segs, slo, slo + n, dlo, s))
        return oom(c);
    if ((rc = sv_widen(c, t, k, s, r, sb, slo, dlo)) != NCL_SUCCESS)
        return rc;
    if (init)
        return sv_replace(c, &mem_of(c, r, db)->segs, dlo, dlo + 2 * n, s) ? NCL_SUCCESS : oom(c);
    if (!sv_gather(c, &mem_of(c, r, db)->segs, dlo, dlo + 2 * n, dlo, d))
        return oom(c);
    return sym_fold(c, t, k, s, d, r, sb, slo, r, db, dlo, 2 * n, 1);
}

/* LOCAL_NARROW: dst[dlo, dlo+n) <- fp32 cells [slo, slo+2n), divided once when div. Every
 * fp32 element must be whole: pieces start and end on element boundaries with even orig. */
static ncl_result sym_narrow(ck *c, uint32_t t, const ncl_task *k, int r, uint32_t sb, uint64_t slo, uint32_t db,
                             uint64_t dlo, uint64_t n, int div)
{
    segvec *a = &c->tmp[0];
    if (!sv_gather(c, &mem_of(c, r, sb)->segs, slo, slo + 2 * n, 0, a))
        return oom(c);
    for (size_t i = 0; i < a->n; i++) {
        seg *x = &a->v[i];
        if (!x->defined)
            return undefined_read(c, t, k, r, sb, slo + x->lo);
        if (!x->wide)
            return task_fail(c, t, k, "rounds rank %d %s element %llu, which is not an fp32 accumulator", r,
                             buf_names[sb], (unsigned long long)(slo + x->lo));
        if (x->lo % 2 || x->hi % 2 || x->orig % 2)
            return task_fail(c, t, k, "rounds rank %d %s [%llu,+2): an fp32 element whose halves differ (half "
                             "of it was overwritten or it is not 4-byte aligned)", r, buf_names[sb],
                             (unsigned long long)(slo + (x->lo % 2 ? x->lo - 1 : x->hi - 1)));
        if (div && x->divided)
            return task_fail(c, t, k, "rank %d %s element %llu divided twice (avg)", r, buf_names[sb],
                             (unsigned long long)(slo + x->lo));
        x->lo = dlo + x->lo / 2;
        x->hi = dlo + x->hi / 2;
        x->orig /= 2;
        x->wide = 0;
        x->divided |= (uint8_t)div;
    }
    return sv_replace(c, &mem_of(c, r, db)->segs, dlo, dlo + n, a) ? NCL_SUCCESS : oom(c);
}

static ncl_result sym_div(ck *c, uint32_t t, const ncl_task *k, int r, uint32_t b, uint64_t lo, uint64_t n)
{
    segvec *a = &c->tmp[0];
    if (!sv_gather(c, &mem_of(c, r, b)->segs, lo, lo + n, lo, a))
        return oom(c);
    for (size_t i = 0; i < a->n; i++) {
        if (!a->v[i].defined)
            return undefined_read(c, t, k, r, b, a->v[i].lo);
        if (a->v[i].divided)
            return task_fail(c, t, k, "rank %d %s element %llu divided twice (avg)", r, buf_names[b],
                             (unsigned long long)a->v[i].lo);
        if (a->v[i].wide)
            return task_fail(c, t, k, "divides rank %d %s element %llu, an fp32 accumulator, as %s (LOCAL_NARROW "
                             "divides it)", r, buf_names[b], (unsigned long long)a->v[i].lo,
                             ncl_dtype_name((ncl_dtype)k->dtype));
        a->v[i].divided = 1;
    }
    if (!sv_replace(c, &mem_of(c, r, b)->segs, lo, lo + n, a))
        return oom(c);
    return NCL_SUCCESS;
}

/* ---- happens-before ---- */

static uint32_t *vc_of(ck *c, uint32_t t) { return c->vc + (size_t)t * c->nthreads; }

static void snap_release(ck *c, snap *s)
{
    if (--s->refs == 0)
        pool_put(&c->snaps, s);
}

static void drop_cache(ck *c, thread *th)
{
    if (th->cached) {
        snap_release(c, th->cached);
        th->cached = NULL;
    }
}

/* An access starts a new epoch if the thread released (recorded) since its last access. */
static void touch(ck *c, uint32_t t)
{
    thread *th = &c->th[t];
    if (th->released) {
        vc_of(c, t)[t]++;
        th->released = 0;
        drop_cache(c, th);
    }
}

/* ---- access maps ---- */

static aseg *am_at(const amap *m, apos p) { return &m->b[p.k]->s[p.i]; }

static apos am_find(const amap *m, uint64_t x)
{
    size_t lo = 0, hi = m->nb;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->b[mid]->s[0].lo <= x)
            lo = mid;
        else
            hi = mid;
    }
    const ablock *b = m->b[lo];
    uint32_t l = 0, h = b->n;
    while (h - l > 1) {
        uint32_t mid = l + (h - l) / 2;
        if (b->s[mid].lo <= x)
            l = mid;
        else
            h = mid;
    }
    apos p = {lo, l};
    return p;
}

static int am_next(const amap *m, apos *p)
{
    if (p->i + 1 < m->b[p->k]->n) {
        p->i++;
        return 1;
    }
    if (p->k + 1 < m->nb) {
        p->k++;
        p->i = 0;
        return 1;
    }
    return 0;
}

static int am_init(ck *c, amap *m, uint64_t bytes)
{
    if (!grow(c, (void **)&m->b, &m->capb, 0, 1, sizeof *m->b))
        return 0;
    ablock *b = ck_alloc(c, sizeof *b);
    if (!b)
        return 0;
    b->n = 1;
    b->s[0].lo = 0;
    b->s[0].hi = bytes;
    b->s[0].head = NULL;
    m->b[0] = b;
    m->nb = 1;
    return 1;
}

static void am_destroy(ck *c, amap *m)
{
    for (size_t k = 0; k < m->nb; k++)
        ck_free(c, m->b[k]);
    ck_free(c, m->b);
}

/* Inserts s right after *p; *p keeps naming the same segment (which may move to a new block). */
static int am_insert_after(ck *c, amap *m, apos *p, const aseg *s)
{
    ablock *b = m->b[p->k];
    if (b->n == ABLK) {
        if (!grow(c, (void **)&m->b, &m->capb, m->nb, m->nb + 1, sizeof *m->b))
            return 0;
        ablock *nb = ck_alloc(c, sizeof *nb);
        if (!nb)
            return 0;
        const uint32_t half = ABLK / 2;
        memcpy(nb->s, b->s + half, (ABLK - half) * sizeof(aseg));
        nb->n = ABLK - half;
        b->n = half;
        memmove(&m->b[p->k + 2], &m->b[p->k + 1], (m->nb - p->k - 1) * sizeof *m->b);
        m->b[p->k + 1] = nb;
        m->nb++;
        if (p->i >= half) {
            p->k++;
            p->i -= half;
            b = nb;
        }
    }
    memmove(&b->s[p->i + 2], &b->s[p->i + 1], (b->n - p->i - 1) * sizeof(aseg));
    b->s[p->i + 1] = *s;
    b->n++;
    return 1;
}

/* Removes the segment at p (never the only one); positions before p stay valid. */
static void am_remove(ck *c, amap *m, apos p)
{
    ablock *b = m->b[p.k];
    memmove(&b->s[p.i], &b->s[p.i + 1], (b->n - p.i - 1) * sizeof(aseg));
    b->n--;
    if (b->n == 0) {
        ck_free(c, b);
        memmove(&m->b[p.k], &m->b[p.k + 1], (m->nb - p.k - 1) * sizeof *m->b);
        m->nb--;
    }
}

static int node_eq(const anode *a, const anode *b)
{
    return a->thread == b->thread && a->clock == b->clock && a->step == b->step && a->write == b->write &&
           a->kind == b->kind;
}

static int list_eq(const anode *a, const anode *b)
{
    for (; a && b; a = a->next, b = b->next)
        if (!node_eq(a, b))
            return 0;
    return !a && !b;
}

static int list_has(const anode *l, const anode *e)
{
    for (; l; l = l->next)
        if (node_eq(l, e))
            return 1;
    return 0;
}

static void list_free(ck *c, anode *l)
{
    while (l) {
        anode *n = l->next;
        pool_put(&c->anodes, l);
        l = n;
    }
}

/* Ensures a segment starts at x (0 < x < bytes). Nodes live in the pool, so a failure midway
 * leaks nothing. */
static int am_split(ck *c, amap *m, uint64_t x)
{
    apos p = am_find(m, x);
    aseg *s = am_at(m, p);
    if (s->lo == x)
        return 1;
    aseg t;
    t.lo = x;
    t.hi = s->hi;
    t.head = NULL;
    anode **tail = &t.head;
    for (const anode *e = s->head; e; e = e->next) {
        anode *n = pool_get(c, &c->anodes);
        if (!n)
            return 0;
        *n = *e;
        n->next = NULL;
        *tail = n;
        tail = &n->next;
    }
    s->hi = x;
    return am_insert_after(c, m, &p, &t);
}

/* End of the run of segments from p on (below hi) that still hold access e. */
static uint64_t am_extent(const amap *m, apos p, uint64_t hi, const anode *e)
{
    uint64_t end = am_at(m, p)->hi;
    while (am_next(m, &p) && am_at(m, p)->lo < hi && list_has(am_at(m, p)->head, e))
        end = am_at(m, p)->hi;
    return end;
}

/* Records an access of thread t to [lo, hi) of (rank, buf) after checking it against the live
 * ones: a conflicting access not ordered before it is a race; one ordered before it that it
 * makes redundant (any write, or a read after a read) is dropped. */
static ncl_result race_check(ck *c, uint32_t t, const ncl_task *k, int rank, uint32_t buf, uint64_t lo,
                             uint64_t hi, int write)
{
    mem *mm = mem_of(c, rank, buf);
    amap *m = &mm->acc;
    const uint32_t *vc = vc_of(c, t);
    if ((lo > 0 && !am_split(c, m, lo)) || (hi < mm->bytes && !am_split(c, m, hi)))
        return oom(c);
    apos p = am_find(m, lo);
    do {
        aseg *s = am_at(m, p);
        if (s->lo >= hi)
            break;
        anode **link = &s->head;
        while (*link) {
            anode *e = *link;
            int hb = e->thread == t || vc[e->thread] >= e->clock;
            if (!hb && (write || e->write)) {
                char old[96];
                task_name(c, e->thread, e->step, e->kind, old, sizeof old);
                return fail(c, NCL_ERR_SCHEDULE,
                            "race on rank %d %s [%llu,%llu): %s by %s while rank %d q%u step %u may %s it (%s)", rank,
                            buf_names[buf], (unsigned long long)s->lo, (unsigned long long)am_extent(m, p, hi, e),
                            e->write ? "written" : "read", old, t_rank(c, t), t_queue(c, t), k->step,
                            write ? "write" : "read", ncl_task_kind_name(k->kind));
            }
            if (hb && (write || !e->write)) {
                *link = e->next;
                pool_put(&c->anodes, e);
                continue;
            }
            link = &e->next;
        }
        anode *n = pool_get(c, &c->anodes);
        if (!n)
            return oom(c);
        n->next = NULL;
        n->thread = t;
        n->clock = vc[t];
        n->step = k->step;
        n->write = (uint8_t)write;
        n->kind = k->kind;
        *link = n;
    } while (am_next(m, &p));
    /* merge neighbours that now hold the same accesses, from the one before lo to the one at hi */
    p = am_find(m, lo ? lo - 1 : 0);
    for (;;) {
        apos q = p;
        if (!am_next(m, &q))
            break;
        aseg *a = am_at(m, p), *b = am_at(m, q);
        if (b->lo > hi)
            break;
        if (list_eq(a->head, b->head)) {
            a->hi = b->hi;
            list_free(c, b->head);
            am_remove(c, m, q);
            continue;
        }
        p = q;
    }
    return NCL_SUCCESS;
}

/* ---- notify counters ---- */

static size_t ctr_hash(const ck *c, int owner, int sender, uint32_t id)
{
    uint64_t key = (((uint64_t)owner * (uint64_t)c->nranks + (uint64_t)sender) * NCL_NOTIFY_IDS) + id;
    key *= 0x9e3779b97f4a7c15ull;
    return (size_t)(key >> 20) & (c->ctr_cap - 1);
}

static counter *ctr_find(ck *c, int owner, int sender, uint32_t id, size_t *slot)
{
    size_t h = ctr_hash(c, owner, sender, id);
    while (c->ctr[h].used) {
        counter *x = &c->ctr[h];
        if (x->owner == owner && x->sender == sender && x->id == id)
            return x;
        h = (h + 1) & (c->ctr_cap - 1);
    }
    *slot = h;
    return NULL;
}

/* The counter (sender, id) held by `owner`, created on first use; NULL when out of memory. */
static counter *ctr_get(ck *c, int owner, int sender, uint32_t id)
{
    size_t h = 0;
    counter *x = c->ctr_cap ? ctr_find(c, owner, sender, id, &h) : NULL;
    if (x)
        return x;
    if ((c->ctr_n + 1) * 2 > c->ctr_cap) {
        size_t ncap = c->ctr_cap ? c->ctr_cap * 2 : 64;
        counter *nt = ck_alloc(c, ncap * sizeof *nt);
        if (!nt)
            return NULL;
        memset(nt, 0, ncap * sizeof *nt);
        counter *old = c->ctr;
        size_t ocap = c->ctr_cap;
        c->ctr = nt;
        c->ctr_cap = ncap;
        for (size_t i = 0; i < ocap; i++) {
            if (!old[i].used)
                continue;
            size_t j = ctr_hash(c, old[i].owner, old[i].sender, old[i].id);
            while (nt[j].used)
                j = (j + 1) & (ncap - 1);
            nt[j] = old[i];
        }
        ck_free(c, old);
        ctr_find(c, owner, sender, id, &h);
    }
    x = &c->ctr[h];
    x->used = 1;
    x->owner = owner;
    x->sender = sender;
    x->id = id;
    c->ctr_n++;
    return x;
}

static void ready_push(ck *c, uint32_t t)
{
    c->ready[(c->rhead + c->rcount) % c->nthreads] = t;
    c->rcount++;
}

static ncl_result do_record(ck *c, uint32_t t, const ncl_task *k)
{
    thread *th = &c->th[t];
    counter *x = ctr_get(c, k->peer, t_rank(c, t), k->notify);
    if (!x)
        return oom(c);
    if (!th->cached) {
        snap *s = pool_get(c, &c->snaps);
        if (!s)
            return oom(c);
        memcpy(s->vc, vc_of(c, t), c->nthreads * sizeof(uint32_t));
        s->refs = 1;
        th->cached = s;
    }
    pend *p = pool_get(c, &c->pends);
    if (!p)
        return oom(c);
    p->next = NULL;
    p->s = th->cached;
    th->cached->refs++;
    if (x->tail)
        x->tail->next = p;
    else
        x->head = p;
    x->tail = p;
    x->count++;
    th->released = 1;
    while (x->waiters) {
        uint32_t w = x->waiters - 1;
        x->waiters = c->th[w].next_waiter;
        c->th[w].state = TH_HAVE;
        ready_push(c, w);
    }
    return NCL_SUCCESS;
}

/* Returns NCL_SUCCESS and sets *blocked when the counter is short. */
static ncl_result do_wait(ck *c, uint32_t t, const ncl_task *k, int *blocked)
{
    thread *th = &c->th[t];
    counter *x = ctr_get(c, t_rank(c, t), k->peer, k->notify);
    if (!x)
        return oom(c);
    *blocked = 0;
    if (x->count < k->count) {
        th->state = TH_BLOCKED;
        th->next_waiter = x->waiters;
        x->waiters = t + 1;
        *blocked = 1;
        return NCL_SUCCESS;
    }
    uint32_t *vc = vc_of(c, t);
    for (uint32_t n = 0; n < k->count; n++) {
        pend *p = x->head;
        x->head = p->next;
        if (!x->head)
            x->tail = NULL;
        for (uint32_t i = 0; i < c->nthreads; i++)
            if (p->s->vc[i] > vc[i])
                vc[i] = p->s->vc[i];
        snap_release(c, p->s);
        pool_put(&c->pends, p);
    }
    x->count -= k->count;
    if (k->count)
        drop_cache(c, th);
    return NCL_SUCCESS;
}

/* ---- tasks ---- */

/* ref [off, off + bytes) inside the buffer and aligned to es (the element, or 4 for fp32). */
static ncl_result check_region_n(ck *c, uint32_t t, const ncl_task *k, const char *what, int rank, ncl_ref ref,
                                 uint64_t bytes, uint64_t es)
{
    if (ref.buf >= NCL_BUF_COUNT)
        return task_fail(c, t, k, "%s names unknown buffer %u", what, ref.buf);
    uint64_t size = mem_of(c, rank, ref.buf)->bytes;
    if (ref.off % es || bytes % es)
        return task_fail(c, t, k, "%s region %s [%llu,+%llu) not aligned to the %llu-byte element", what,
                         buf_names[ref.buf], (unsigned long long)ref.off, (unsigned long long)bytes,
                         (unsigned long long)es);
    if (ref.off > size || bytes > size - ref.off)
        return task_fail(c, t, k, "%s region %s [%llu,+%llu) out of bounds (rank %d %s holds %llu bytes)",
                         what, buf_names[ref.buf], (unsigned long long)ref.off, (unsigned long long)bytes,
                         rank, buf_names[ref.buf], (unsigned long long)size);
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
        return task_fail(c, t, k, "needs wide accumulation (fp16/bf16 det allreduce with wide_accumulation), "
                         "which this %s %s plan does not use", ncl_dtype_name((ncl_dtype)p->dtype),
                         ncl_op_name((ncl_op)p->op));
    if (k->dtype != p->dtype)
        return task_fail(c, t, k, "converts dtype %u, the plan has dtype %u", k->dtype, p->dtype);
    if (k->kind == NCL_TASK_LOCAL_REDUCE_WIDE && k->op != p->op)
        return task_fail(c, t, k, "reduces with op %u, the plan has op %u%s", k->op, p->op,
                         p->avg ? " (avg reduces with SUM)" : "");
    if (k->kind == NCL_TASK_LOCAL_NARROW && (p->avg ? k->count != (uint32_t)c->nranks : k->count > 1))
        return task_fail(c, t, k, p->avg ? "divides by %u, expected the rank count %d (avg)"
                                         : "divides by %u although the op is not avg (%d ranks)",
                         k->count, c->nranks);
    if (k->bytes == 0)
        return NCL_SUCCESS;
    if (k->dst.buf == NCL_BUF_SEND)
        return task_fail(c, t, k, "writes into rank %d SEND, which is read only", r);
    uint64_t sb = ncl_task_src_bytes(k), db = ncl_task_dst_bytes(k);
    if ((rc = check_region_n(c, t, k, "src", r, k->src, sb, k->kind == NCL_TASK_LOCAL_NARROW ? 4 : 2)) !=
            NCL_SUCCESS ||
        (rc = check_region_n(c, t, k, "dst", r, k->dst, db, k->kind == NCL_TASK_LOCAL_NARROW ? 2 : 4)) != NCL_SUCCESS)
        return rc;
    if (k->src.buf == k->dst.buf && k->src.off < k->dst.off + db && k->dst.off < k->src.off + sb)
        return task_fail(c, t, k, "src %s +%llu and dst +%llu overlap", buf_names[k->src.buf],
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
    case NCL_TASK_LOCAL_DIV: {
        if (k->bytes == 0)
            return NCL_SUCCESS;
        int remote = k->kind == NCL_TASK_WRITE || k->kind == NCL_TASK_WRITE_REDUCE;
        int dr = r;
        if (remote) {
            if (k->peer < 0 || k->peer >= c->nranks)
                return task_fail(c, t, k, "peer %d out of range (%d ranks)", k->peer, c->nranks);
            if (k->peer == r)
                return task_fail(c, t, k, "writes to its own rank %d (use LOCAL_COPY/LOCAL_REDUCE)", r);
            dr = k->peer;
        }
        if (k->kind == NCL_TASK_WRITE_REDUCE || k->kind == NCL_TASK_LOCAL_REDUCE) {
            if (k->dtype != p->dtype || k->op != p->op)
                return task_fail(c, t, k, "reduces with dtype %u op %u, the plan has dtype %u op %u%s", k->dtype,
                                 k->op, p->dtype, p->op, p->avg ? " (avg reduces with SUM)" : "");
        }
        if (k->kind == NCL_TASK_WRITE_REDUCE && !p->inline_reduce)
            return task_fail(c, t, k, "reduces inline, which the backend's DMA cannot do for %s %s",
                             ncl_dtype_name((ncl_dtype)p->dtype), ncl_op_name((ncl_op)p->op));
        if (k->kind == NCL_TASK_WRITE_REDUCE && !ncl_inline_ok(p, k->src.off, k->dst.off, k->bytes))
            return task_fail(c, t, k, "reduces inline at src +%llu dst +%llu, %llu bytes: not aligned to the "
                             "%u bytes the backend's inline reduce needs", (unsigned long long)k->src.off,
                             (unsigned long long)k->dst.off, (unsigned long long)k->bytes, p->inline_align);
        if (k->kind == NCL_TASK_LOCAL_DIV) {
            if (!p->avg)
                return task_fail(c, t, k, "divides although the op is not avg");
            if (k->count != (uint32_t)c->nranks)
                return task_fail(c, t, k, "divides by %u, expected the rank count %d", k->count, c->nranks);
            if (k->dtype != p->dtype)
                return task_fail(c, t, k, "divides dtype %u, the plan has dtype %u", k->dtype, p->dtype);
        }
        if (k->dst.buf == NCL_BUF_SEND)
            return task_fail(c, t, k, "writes into rank %d SEND, which is read only", dr);
        if (k->kind != NCL_TASK_LOCAL_DIV && (rc = check_region(c, t, k, "src", r, k->src)) != NCL_SUCCESS)
            return rc;
        if ((rc = check_region(c, t, k, "dst", dr, k->dst)) != NCL_SUCCESS)
            return rc;
        if ((k->kind == NCL_TASK_LOCAL_COPY || k->kind == NCL_TASK_LOCAL_REDUCE) && k->src.buf == k->dst.buf &&
            k->src.off != k->dst.off && k->src.off < k->dst.off + k->bytes && k->dst.off < k->src.off + k->bytes)
            return task_fail(c, t, k, "src %s +%llu and dst +%llu overlap", buf_names[k->src.buf],
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
            return task_fail(c, t, k, "peer %d out of range (%d ranks)", k->peer, c->nranks);
        if (k->notify >= NCL_NOTIFY_IDS)
            return task_fail(c, t, k, "notify id %u out of range (NCL_NOTIFY_IDS = %u)", k->notify,
                             NCL_NOTIFY_IDS);
        return NCL_SUCCESS;
    default:
        return task_fail(c, t, k, "unknown task kind %u", k->kind);
    }
}

static ncl_result do_data(ck *c, uint32_t t, const ncl_task *k)
{
    if (k->bytes == 0)
        return NCL_SUCCESS;
    int r = t_rank(c, t);
    int remote = k->kind == NCL_TASK_WRITE || k->kind == NCL_TASK_WRITE_REDUCE;
    int dr = remote ? k->peer : r;
    uint64_t es = c->esize, n = k->bytes / es;
    ncl_result rc;
    touch(c, t);
    if (k->kind != NCL_TASK_LOCAL_DIV &&
        (rc = race_check(c, t, k, r, k->src.buf, k->src.off, k->src.off + ncl_task_src_bytes(k), 0)) != NCL_SUCCESS)
        return rc;
    if ((rc = race_check(c, t, k, dr, k->dst.buf, k->dst.off, k->dst.off + ncl_task_dst_bytes(k), 1)) !=
        NCL_SUCCESS)
        return rc;
    if (remote) {
        /* the destination must have told us (directly or transitively) that it is ready */
        const uint32_t *vc = vc_of(c, t);
        uint32_t q;
        for (q = 0; q < c->queues; q++)
            if (vc[(uint32_t)dr * c->queues + q] >= 1)
                break;
        if (q == c->queues)
            return task_fail(c, t, k,
                             "writes into rank %d %s [%llu,%llu) before rank %d signalled it is ready "
                             "(no notify from rank %d precedes the write)",
                             dr, buf_names[k->dst.buf], (unsigned long long)k->dst.off,
                             (unsigned long long)(k->dst.off + k->bytes), dr, dr);
    }
    switch (k->kind) {
    case NCL_TASK_WRITE:
    case NCL_TASK_LOCAL_COPY:
        return sym_copy(c, t, k, r, k->src.buf, k->src.off / es, dr, k->dst.buf, k->dst.off / es, n);
    case NCL_TASK_WRITE_REDUCE:
    case NCL_TASK_LOCAL_REDUCE:
        return sym_reduce(c, t, k, r, k->src.buf, k->src.off / es, dr, k->dst.buf, k->dst.off / es, n);
    case NCL_TASK_LOCAL_WIDEN:
    case NCL_TASK_LOCAL_REDUCE_WIDE:
        return sym_widen(c, t, k, r, k->src.buf, k->src.off / es, k->dst.buf, k->dst.off / es, n,
                         k->kind == NCL_TASK_LOCAL_WIDEN);
    case NCL_TASK_LOCAL_NARROW:
        return sym_narrow(c, t, k, r, k->src.buf, k->src.off / es, k->dst.buf, k->dst.off / es, n, k->count > 1);
    default:
        return sym_div(c, t, k, r, k->dst.buf, k->dst.off / es, n);
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
static ncl_result run_thread(ck *c, uint32_t t)
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
            if ((rc = do_wait(c, t, k, &blocked)) != NCL_SUCCESS)
                return rc;
            if (blocked)
                return NCL_SUCCESS;
        } else if (k->kind == NCL_TASK_NOTIFY_RECORD) {
            if ((rc = do_record(c, t, k)) != NCL_SUCCESS)
                return rc;
        } else if ((rc = do_data(c, t, k)) != NCL_SUCCESS) {
            return rc;
        }
        th->state = TH_FETCH;
    }
}

/* ---- deadlock report ---- */

static int is_blocked(const ck *c, uint32_t t) { return c->th[t].state == TH_BLOCKED; }

/* Next wait-for edge of blocked thread u from its iterator: a blocked thread of the rank u
 * waits for (its own thread excluded: it cannot record while it waits), or NO_THREAD. */
static uint32_t next_edge(ck *c, uint32_t u)
{
    thread *th = &c->th[u];
    uint32_t base = (uint32_t)th->task.peer * c->queues;
    while (th->it < c->queues) {
        uint32_t v = base + th->it++;
        if (v != u && is_blocked(c, v))
            return v;
    }
    return NO_THREAD;
}

static ncl_result report_deadlock(ck *c)
{
    /* 1. a wait whose peer has nothing left that could record */
    for (uint32_t u = 0; u < c->nthreads; u++) {
        if (!is_blocked(c, u))
            continue;
        c->th[u].it = 0;
        if (next_edge(c, u) != NO_THREAD)
            continue;
        const ncl_task *k = &c->th[u].task;
        int r = t_rank(c, u);
        counter *x = ctr_get(c, r, k->peer, k->notify);
        uint64_t have = x ? x->count : 0;
        char why[64], part[64];
        if (k->peer == r)
            ncl_fmt(why, sizeof why, "the other queues of rank %d finished", r);
        else
            ncl_fmt(why, sizeof why, "rank %d finished", k->peer);
        part[0] = '\0';
        if (have)
            ncl_fmt(part, sizeof part, "; %llu of %u records arrived", (unsigned long long)have, k->count);
        return fail(c, NCL_ERR_SCHEDULE,
                    "rank %d queue %u step %u waits for notify %u from rank %d, which never records it (%s)%s", r,
                    t_queue(c, u), k->step, k->notify, k->peer, why, part);
    }
    /* 2. no sinks: every blocked thread waits on another blocked one, so there is a cycle */
    for (uint32_t u = 0; u < c->nthreads; u++) {
        c->th[u].color = 0;
        c->th[u].it = 0;
    }
    for (uint32_t s = 0; s < c->nthreads; s++) {
        if (!is_blocked(c, s) || c->th[s].color)
            continue;
        c->th[s].color = 1;
        c->th[s].parent = NO_THREAD;
        uint32_t cur = s;
        while (cur != NO_THREAD) {
            uint32_t v = next_edge(c, cur);
            if (v == NO_THREAD) {
                c->th[cur].color = 2;
                cur = c->th[cur].parent;
                continue;
            }
            if (c->th[v].color == 0) {
                c->th[v].color = 1;
                c->th[v].parent = cur;
                c->th[v].it = 0;
                cur = v;
                continue;
            }
            if (c->th[v].color != 1)
                continue;
            /* cycle v -> ... -> cur -> v: link it forwards, start at its smallest thread */
            uint32_t first = v;
            c->th[cur].cyc_next = v;
            for (uint32_t x = cur; x != v; x = c->th[x].parent) {
                c->th[c->th[x].parent].cyc_next = x;
                if (x < first)
                    first = x;
            }
            char *m = c->msg;
            size_t len = c->msg_len, pos = 0;
            if (m && len) {
                pos += ncl_fmt(m + pos, len - pos, "wait-for cycle: ");
                uint32_t x = first;
                do {
                    pos += ncl_fmt(m + pos, len - pos, "rank %d (q%u, step %u) -> ", t_rank(c, x), t_queue(c, x),
                                   c->th[x].task.step);
                    x = c->th[x].cyc_next;
                } while (x != first);
                ncl_fmt(m + pos, len - pos, "rank %d", t_rank(c, first));
            }
            return NCL_ERR_SCHEDULE;
        }
    }
    return fail(c, NCL_ERR_INTERNAL, "schedule checker: deadlock without a cause (checker bug)");
}

/* ---- final checks ---- */

static ncl_result check_leftovers(ck *c)
{
    const counter *best = NULL;
    for (size_t i = 0; i < c->ctr_cap; i++) {
        const counter *x = &c->ctr[i];
        if (!x->used || !x->count)
            continue;
        if (!best || x->sender < best->sender || (x->sender == best->sender && x->owner < best->owner) ||
            (x->sender == best->sender && x->owner == best->owner && x->id < best->id))
            best = x;
    }
    if (!best)
        return NCL_SUCCESS;
    return fail(c, NCL_ERR_SCHEDULE, "rank %d recorded notify %u to rank %d %llu more time(s) than it was waited for",
                best->sender, best->id, best->owner, (unsigned long long)best->count);
}

/* Every write into a rank by a peer must be ordered before that rank's end (some wait there
 * follows it), or the rank may return before the data lands. */
static ncl_result check_writes_covered(ck *c)
{
    for (int r = 0; r < c->nranks; r++) {
        for (uint32_t b = 0; b < NCL_BUF_COUNT; b++) {
            const mem *mm = mem_of(c, r, b);
            const amap *m = &mm->acc;
            if (!mm->bytes)
                continue;
            apos p = {0, 0};
            do {
                const aseg *s = am_at(m, p);
                for (const anode *e = s->head; e; e = e->next) {
                    if (!e->write || t_rank(c, e->thread) == r)
                        continue;
                    uint32_t q;
                    for (q = 0; q < c->queues; q++)
                        if (vc_of(c, (uint32_t)r * c->queues + q)[e->thread] >= e->clock)
                            break;
                    if (q < c->queues)
                        continue;
                    char who[96];
                    task_name(c, e->thread, e->step, e->kind, who, sizeof who);
                    return fail(c, NCL_ERR_SCHEDULE,
                                "%s writes into rank %d %s [%llu,%llu), but no wait on rank %d follows it (rank %d "
                                "may finish before the data lands)",
                                who, r, buf_names[b], (unsigned long long)s->lo,
                                (unsigned long long)am_extent(m, p, mm->bytes, e), r, r);
                }
            } while (am_next(m, &p));
        }
    }
    return NCL_SUCCESS;
}

static ncl_result check_result(ck *c)
{
    const ncl_plan *p = c->plan;
    const uint64_t cnt = p->count, es = c->esize;
    for (int r = 0; r < c->nranks; r++) {
        uint64_t n = cnt;
        if (p->coll == NCL_COLL_ALLGATHER)
            n = cnt * (uint64_t)c->nranks;
        if (p->coll == NCL_COLL_REDUCE && r != p->root)
            continue;
        if (n == 0)
            continue;
        ncl_ref out = ncl_plan_output(p, r);
        const mem *m = mem_of(c, r, out.buf);
        if (out.buf >= NCL_BUF_COUNT || out.off % es || out.off / es + n > m->bytes / es)
            return fail(c, NCL_ERR_INTERNAL, "schedule checker: rank %d output outside its buffer", r);
        uint64_t base = out.off / es;
        for (uint64_t e = 0; e < n;) {
            const seg *s = &m->segs.v[seg_find(&m->segs, base + e)];
            uint64_t end = min_u64(n, s->hi - base);
            uint64_t want_orig = e;
            uint64_t want[SET_WORDS];
            int full = 1, div = p->avg;
            char exp[64];
            switch (p->coll) {
            case NCL_COLL_BROADCAST:
                full = 0;
                div = 0;
                set_one(want, p->root);
                break;
            case NCL_COLL_REDUCE_SCATTER:
                want_orig = (uint64_t)r * cnt + e;
                break;
            case NCL_COLL_ALLGATHER:
                full = 0;
                div = 0;
                set_one(want, (int)(e / cnt));
                want_orig = e % cnt;
                end = min_u64(end, (e / cnt + 1) * cnt);
                break;
            default:
                break;
            }
            if (full)
                memcpy(want, c->all, sizeof want);
            if (full)
                ncl_fmt(exp, sizeof exp, "all %d ranks", c->nranks);
            else
                ncl_fmt(exp, sizeof exp, "only rank %d", set_common(want, want));
            const char *bn = buf_names[out.buf];
            unsigned long long el = (unsigned long long)(base + e);
            if (!s->defined)
                return fail(c, NCL_ERR_SCHEDULE, "rank %d %s element %llu: never written, expected %s", r, bn, el,
                            exp);
            if (s->wide)
                return fail(c, NCL_ERR_SCHEDULE, "rank %d %s element %llu: holds half of an fp32 accumulator, not "
                            "the result (no LOCAL_NARROW)", r, bn, el);
            if (!set_eq(s->set, want)) {
                uint64_t miss[SET_WORDS], extra[SET_WORDS];
                int any_miss = 0, any_extra = 0;
                for (int w = 0; w < SET_WORDS; w++) {
                    miss[w] = want[w] & ~s->set[w];
                    extra[w] = s->set[w] & ~want[w];
                    any_miss |= miss[w] != 0;
                    any_extra |= extra[w] != 0;
                }
                char have[96], ms[96], xs[96], detail[200];
                fmt_set(s->set, c->nranks, have, sizeof have);
                fmt_set(miss, c->nranks, ms, sizeof ms);
                fmt_set(extra, c->nranks, xs, sizeof xs);
                if (any_miss && any_extra)
                    ncl_fmt(detail, sizeof detail, "missing %s, extra %s", ms, xs);
                else if (any_miss)
                    ncl_fmt(detail, sizeof detail, "missing %s", ms);
                else
                    ncl_fmt(detail, sizeof detail, "extra %s", xs);
                return fail(c, NCL_ERR_SCHEDULE, "rank %d %s element %llu: holds ranks {%s} (%s), expected %s", r,
                            bn, el, have, detail, exp);
            }
            uint64_t got_orig = s->orig + (base + e - s->lo);
            if (got_orig != want_orig)
                return fail(c, NCL_ERR_SCHEDULE,
                            "rank %d %s element %llu: holds input element %llu, expected input element %llu", r, bn,
                            el, (unsigned long long)got_orig, (unsigned long long)want_orig);
            /* dividing by one rank is the identity: either way is right */
            if (s->divided != div && c->nranks > 1)
                return fail(c, NCL_ERR_SCHEDULE,
                            div ? "rank %d %s element %llu: not divided by %d (avg needs one LOCAL_DIV)"
                                : "rank %d %s element %llu: divided by %d, but the result must not be",
                            r, bn, el, c->nranks);
            e = end;
        }
    }
    return NCL_SUCCESS;
}

/* ---- setup ---- */

static ncl_result setup_memory(ck *c)
{
    const ncl_plan *p = c->plan;
    const uint64_t P = (uint64_t)c->nranks, es = c->esize, cnt = p->count;
    for (int r = 0; r < c->nranks; r++) {
        uint64_t send = cnt, recv = cnt, in_elems = cnt;
        switch (p->coll) {
        case NCL_COLL_REDUCE:
            if (r != p->root && !p->inplace)
                recv = 0;
            break;
        case NCL_COLL_REDUCE_SCATTER:
            send = P * cnt;
            in_elems = P * cnt;
            if (p->inplace)
                recv = P * cnt;
            break;
        case NCL_COLL_ALLGATHER:
            recv = P * cnt;
            break;
        default:
            break;
        }
        if (p->inplace)
            send = 0;
        uint64_t sizes[NCL_BUF_COUNT] = {send * es, recv * es, p->scratch_bytes};
        for (uint32_t b = 0; b < NCL_BUF_COUNT; b++) {
            mem *m = mem_of(c, r, b);
            m->bytes = sizes[b];
            seg s;
            memset(&s, 0, sizeof s);
            s.hi = sizes[b] / es;
            if (s.hi && !sv_push(c, &m->segs, &s))
                return oom(c);
            if (sizes[b] && !am_init(c, &m->acc, sizes[b]))
                return oom(c);
        }
        if (in_elems == 0 || (p->coll == NCL_COLL_BROADCAST && r != p->root))
            continue;
        ncl_ref in = ncl_plan_input(p, r);
        const mem *m = mem_of(c, r, in.buf);
        if (in.buf >= NCL_BUF_COUNT || in.off % es || in.off / es + in_elems > m->bytes / es)
            return fail(c, NCL_ERR_INTERNAL, "schedule checker: rank %d input outside its buffer", r);
        segvec *v = &c->tmp[0];
        seg s;
        memset(&s, 0, sizeof s);
        s.lo = in.off / es;
        s.hi = s.lo + in_elems;
        s.defined = 1;
        set_one(s.set, r);
        v->n = 0;
        if (!sv_push(c, v, &s) || !sv_replace(c, &mem_of(c, r, in.buf)->segs, s.lo, s.hi, v))
            return oom(c);
    }
    return NCL_SUCCESS;
}

static ncl_result validate_args(ck *c, const ncl_plan *p, const ncl_check_source *src)
{
    if ((unsigned)p->coll >= NCL_COLL_COUNT)
        return fail(c, NCL_ERR_INVALID_ARGUMENT, "schedule checker: unknown collective %u", p->coll);
    if (p->nranks < 1)
        return fail(c, NCL_ERR_INVALID_ARGUMENT, "schedule checker: %d ranks", p->nranks);
    if (p->nranks > NCL_CHECK_MAX_RANKS)
        return fail(c, NCL_ERR_UNSUPPORTED, "schedule checker: %d ranks, it checks at most %d", p->nranks,
                    NCL_CHECK_MAX_RANKS);
    if (p->esize == 0 || (unsigned)p->dtype >= NCL_DTYPE_COUNT)
        return fail(c, NCL_ERR_INVALID_ARGUMENT, "schedule checker: bad dtype %u / element size %u", p->dtype,
                    p->esize);
    if ((p->coll == NCL_COLL_BROADCAST || p->coll == NCL_COLL_REDUCE) && (p->root < 0 || p->root >= p->nranks))
        return fail(c, NCL_ERR_INVALID_ARGUMENT, "schedule checker: root %d out of range (%d ranks)", p->root,
                    p->nranks);
    if (p->count > UINT64_MAX / p->esize / (uint64_t)p->nranks)
        return fail(c, NCL_ERR_INVALID_ARGUMENT, "schedule checker: count %llu overflows",
                    (unsigned long long)p->count);
    uint32_t queues;
    if (src) {
        if (!src->next)
            return fail(c, NCL_ERR_INVALID_ARGUMENT, "schedule checker: source without a next function");
        queues = src->queues;
    } else {
        c->algo = ncl_algo_find((ncl_coll)p->coll, (ncl_algo)p->algo);
        if (!c->algo)
            return fail(c, NCL_ERR_INVALID_ARGUMENT, "schedule checker: no algorithm %u for collective %u", p->algo,
                        p->coll);
        queues = p->queues;
    }
    if (queues < 1)
        return fail(c, NCL_ERR_INVALID_ARGUMENT, "schedule checker: 0 queues");
    if (queues > NCL_MAX_QUEUES)
        return fail(c, NCL_ERR_UNSUPPORTED, "schedule checker: %u queues, at most %u", queues, NCL_MAX_QUEUES);
    c->queues = queues;
    return NCL_SUCCESS;
}

static ncl_result run(ck *c)
{
    ncl_result rc;
    const uint32_t T = c->nthreads;
    const size_t nmem = (size_t)c->nranks * NCL_BUF_COUNT;
    /* mem first and zeroed at once: cleanup walks it */
    if (!(c->mem = ck_alloc(c, nmem * sizeof *c->mem)))
        return oom(c);
    memset(c->mem, 0, nmem * sizeof *c->mem);
    if (!(c->th = ck_alloc(c, T * sizeof *c->th)) || !(c->vc = ck_alloc(c, (size_t)T * T * sizeof *c->vc)) ||
        !(c->ready = ck_alloc(c, T * sizeof *c->ready)))
        return oom(c);
    memset(c->th, 0, T * sizeof *c->th);
    memset(c->vc, 0, (size_t)T * T * sizeof *c->vc);
    for (uint32_t t = 0; t < T; t++) {
        vc_of(c, t)[t] = 1;
        ready_push(c, t);
    }
    for (int r = 0; r < c->nranks; r++)
        c->all[r / 64] |= 1ull << (r % 64);
    if ((rc = setup_memory(c)) != NCL_SUCCESS)
        return rc;
    while (c->rcount) {
        uint32_t t = c->ready[c->rhead];
        c->rhead = (c->rhead + 1) % T;
        c->rcount--;
        if ((rc = run_thread(c, t)) != NCL_SUCCESS)
            return rc;
    }
    for (uint32_t t = 0; t < T; t++)
        if (c->th[t].state != TH_DONE)
            return report_deadlock(c);
    if ((rc = check_leftovers(c)) != NCL_SUCCESS || (rc = check_writes_covered(c)) != NCL_SUCCESS ||
        (rc = check_result(c)) != NCL_SUCCESS)
        return rc;
    return NCL_SUCCESS;
}

static void cleanup(ck *c)
{
    if (c->mem) {
        for (size_t i = 0; i < (size_t)c->nranks * NCL_BUF_COUNT; i++) {
            ck_free(c, c->mem[i].segs.v);
            am_destroy(c, &c->mem[i].acc);
        }
    }
    for (int i = 0; i < 3; i++)
        ck_free(c, c->tmp[i].v);
    pool_destroy(c, &c->snaps);
    pool_destroy(c, &c->pends);
    pool_destroy(c, &c->anodes);
    ck_free(c, c->ctr);
    ck_free(c, c->th);
    ck_free(c, c->vc);
    ck_free(c, c->mem);
    ck_free(c, c->ready);
}

ncl_result ncl_check(const ncl_plan *plan, const ncl_check_source *src, ncl_alloc_fn alloc,
                     ncl_free_fn free_fn, void *alloc_ud, char *msg, size_t msg_len)
{
    ck c;
    memset(&c, 0, sizeof c);
    c.msg = msg;
    c.msg_len = msg_len;
    if (msg && msg_len)
        msg[0] = '\0';
    if (!plan || !alloc || !free_fn)
        return fail(&c, NCL_ERR_INVALID_ARGUMENT, "schedule checker: NULL plan or allocator");
    c.plan = plan;
    c.src = src;
    c.alloc = alloc;
    c.free_fn = free_fn;
    c.ud = alloc_ud;
    ncl_result rc = validate_args(&c, plan, src);
    if (rc != NCL_SUCCESS)
        return rc;
    c.nranks = plan->nranks;
    c.esize = plan->esize;
    c.nthreads = (uint32_t)c.nranks * c.queues;
    pool_init(&c.snaps, sizeof(snap) + c.nthreads * sizeof(uint32_t));
    pool_init(&c.pends, sizeof(pend));
    pool_init(&c.anodes, sizeof(anode));
    rc = run(&c);
    cleanup(&c);
    if (rc == NCL_SUCCESS && msg && msg_len)
        msg[0] = '\0';
    return rc;
}
