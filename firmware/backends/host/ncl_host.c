/* ncl_host.c — the host HAL backend: every rank is a thread of this process, tasks move real bytes. */
#define _POSIX_C_SOURCE 200809L

#include "ncl/ncl_host.h"

#include "ncl/ncl_diag.h"
#include "ncl_backend.h"
#include "ncl_host_nt.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HOST_MAX_RANKS 4096
#define HOST_ALIGN 64u
#define HOST_CTR_INIT_CAP 64u /* power of two; a ring rank talks to 2 peers + itself */
#define HOST_PEND_CAP 256u    /* deferred copies a rank keeps (a 64 MiB 8-rank ring: ~112) */
#define HOST_PEND_TAKE 16u    /* pending pieces one incoming WRITE_REDUCE consumes at a time */

/* Per-queue DMA state. Tasks run synchronously inside dma_submit, so a queue is never busy:
 * a submitted task is DONE (or FAILED) by the time dma_submit returns, until dma_poll sees it. */
typedef enum host_qstate { HQ_IDLE = 0, HQ_DONE, HQ_FAILED } host_qstate;

static const char *host_qstate_str(uint8_t s)
{
    switch ((host_qstate)s) {
    case HQ_IDLE: return "idle";
    case HQ_DONE: return "done";
    case HQ_FAILED: return "failed";
    }
    return "?";
}

/* A deferred copy: RECV [dst, dst + len) of its rank is still to receive SEND [src, src + len).
 * Out of place the ring copies its own contribution into recv so that its predecessor reduces
 * into it (a fill, 1 memcpy of the chunk); the host runs every task on the CPU, so the copy is
 * not overlapped by anything but costs the rank's core the bytes. Deferred instead, the
 * predecessor's WRITE_REDUCE into that range computes dst <- send op src in one pass (the same
 * operands in the same order as dst op src after the copy, so bit-exact), and the copy never
 * happens. Anything else that touches the range first does the copy (host_pend_cut). */
typedef struct host_pend {
    uint64_t dst, src, len;
} host_pend;

/* One notify counter: key = sender * NCL_NOTIFY_IDS + id + 1 (0 marks an empty slot). */
typedef struct host_ctr {
    uint32_t key, count;
} host_ctr;

/* Open-addressing table of a rank's counters: dense [nranks][ids] arrays would need
 * nranks^2 * 32 counters (2 GiB at 4096 ranks) while a rank hears from a handful of peers. */
typedef struct host_ctrs {
    host_ctr *slot;
    uint32_t mask; /* capacity - 1 */
    uint32_t used;
} host_ctrs;

struct host_world;

/* One rank. Field groups differ in who may touch them; each mutable group gets its own
 * cache line so a peer bumping our counters does not bounce the owner's private state. */
typedef struct host_rank {
    /* Immutable once the world exists. */
    _Alignas(HOST_ALIGN) struct host_world *world;
    int rank;
    ncl_hal hal; /* ctx points back here */
    unsigned char *scratch;
    pthread_t thread;

    /* Owner thread only. */
    uint64_t seen_gen;            /* event generation observed by the last wait_event */
    unsigned seen_exits;          /* world exit count observed by the last wait_event */
    int completion_unseen;        /* a task completed that dma_poll has not reported yet */
    unsigned short_polls;         /* notify waits found short in a row without a wait_event between */
    uint64_t seq;                 /* collective being run, for logs */
    uint64_t *agreed;             /* per peer: seq + 1 of the last call found to match ours (0: none) */
    uint8_t coll;
    uint8_t qstate[NCL_MAX_QUEUES];
    ncl_result result;

    /* The bound buffers: written by the owner under the write lock (begin/end), read by peers
     * under the read lock for the whole of a WRITE into this rank, so end() waits for a
     * writer in flight and a late writer finds the buffers unbound. */
    _Alignas(HOST_ALIGN) pthread_rwlock_t bind_lock;
    ncl_bk_bufs bufs;

    /* Deferred copies (host_pend): added and done by the owner, consumed by a peer writing into
     * the range (under the owner's bind_lock for reading as well); all under pend_mu. pend_used
     * is also read without it: 0 means nothing of this rank is pending (a peer reaches a pending
     * range only after the owner's record that follows the deferral, so it never misses one). */
    _Alignas(HOST_ALIGN) pthread_mutex_t pend_mu;
    atomic_uint pend_used;
    host_pend *pend;     /* HOST_PEND_CAP entries, disjoint ranges of RECV */
    int pend_on;         /* owner only: this collective's SEND and RECV are distinct memory */

    /* Notify state, under mu: records from peers land here. */
    _Alignas(HOST_ALIGN) pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t gen; /* bumped by every record to this rank (and by peer exits) */
    host_ctrs ctrs;
    atomic_int exited; /* 1 once the rank's fn returned: it records nothing more */
    /* The last collective this rank began, (seq << 8) | coll: peers compare it with their own to
     * tell "called a different collective" from "slow" at once instead of at the timeout. */
    _Atomic uint64_t launch;
    ncl_hal_launch desc; /* the whole launch, under mu: peers compare every field (a mismatch) */
    char err[256];       /* the rank's last failure, for ncl_comm_last_error (owner thread only) */
    ncl_rank_state state; /* the communicator's state when fn returned (hang forensics) */
} host_rank;

/* What the world was created with; never changes afterwards. */
typedef struct host_cfg {
    int nranks;
    uint64_t scratch_bytes;
    ncl_host_fn fn;
    void *arg;
    ncl_config comm; /* alloc/free filled in, log_level as NCL_HOST_LOG says */
    uint16_t no_inline_ops[NCL_DTYPE_COUNT];
    uint32_t inline_align;
    uint64_t nt_min_recv; /* streaming stores from this RECV size on (host_streams); UINT64_MAX: never */
} host_cfg;

enum { HOST_GATE_WAIT = 0, HOST_GATE_GO, HOST_GATE_ABORT };

typedef struct host_world {
    host_cfg cfg; /* read through host_cfg_of() only */
    host_rank *ranks;
    /* ctl_mu guards the start gate and the barrier. */
    pthread_mutex_t ctl_mu;
    pthread_cond_t ctl_cv;
    int gate;
    int bar_arrived, bar_exited;
    uint64_t bar_gen;
    /* Dekker pair between sleepers and exiting ranks (see host_wait_event/host_rank_exit). */
    atomic_uint exits, sleepers;
    /* Sub-communicators (host_split): a child world's ranks are contexts that the threads of the
     * world they run in (the root) drive. The root lists its live children under its ctl_mu. */
    struct host_world *root; /* itself for the world the threads run in */
    uint32_t id;             /* 0: the root; else the HAL split's id */
    int32_t *members;        /* a child's ranks as ranks of the root */
    int taken, released;     /* a child's members that made / released their context */
    struct host_world *next; /* the root's list of children */
} host_world;

static const host_cfg *host_cfg_of(const host_world *w)
{
    return &w->cfg;
}

/* ---- logging --------------------------------------------------------------------------- */

/* The world's log level: NCL_HOST_LOG when set (to debug a program without rebuilding it), else
 * the program's ncl_config.log_level. */
static int host_log_level(const ncl_config *cc)
{
    const char *v = getenv("NCL_HOST_LOG");
    int level = cc->log_level;
    if (!v || !*v || ncl_bk_log_level_parse(v, &level) == 0)
        return level;
    if (cc->log_level >= NCL_LOG_WARN)
        fprintf(stderr, "[ncl host] warn: NCL_HOST_LOG=%s not understood (debug, info, warn, error, off)\n", v);
    return cc->log_level;
}

/* One line about `rank` (-1: the world's) at a level the caller let through: to the program's
 * callback if it gave one, else to stderr in one fprintf (stdio locks the stream, so ranks' lines
 * do not interleave). */
static void host_emit(const ncl_config *cc, int rank, int level, const char *msg)
{
    if (cc->log) {
        cc->log(cc->log_ud, rank, level, msg ? msg : "");
        return;
    }
    const char *lv = ncl_bk_log_level_name(level);
    if (rank >= 0)
        fprintf(stderr, "[ncl host rank %d] %s: %s\n", rank, lv, msg ? msg : "");
    else
        fprintf(stderr, "[ncl host] %s: %s\n", lv, msg ? msg : "");
}

static int host_logs(const host_rank *r, int level)
{
    return level <= host_cfg_of(r->world)->comm.log_level;
}

/* One line of the backend's own about rank r. */
static void host_log(const host_rank *r, int level, const char *msg)
{
    if (host_logs(r, level))
        host_emit(&host_cfg_of(r->world)->comm, r->rank, level, msg);
}

/* The HAL's log op: the engine's messages, shown only when the program gave no callback (the
 * engine hands them to the callback itself). */
static void host_engine_log(void *ctx, int level, const char *msg)
{
    const host_rank *r = ctx;
    if (!host_cfg_of(r->world)->comm.log)
        host_log(r, level, msg);
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void host_logf(host_rank *r, int level, const char *fmt, ...)
{
    int keep = level == NCL_LOG_ERROR; /* an error is the rank's last_error, logged or not */
    if (!host_logs(r, level) && !keep)
        return;
    char msg[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (keep)
        snprintf(r->err, sizeof r->err, "%.255s", msg);
    host_log(r, level, msg);
}

/* An error of the whole world (no rank's), under the world's config (log_level already resolved). */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void host_world_error(const ncl_config *cc, const char *fmt, ...)
{
    if (cc->log_level < NCL_LOG_ERROR)
        return;
    char msg[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    host_emit(cc, -1, NCL_LOG_ERROR, msg);
}

static const char *host_last_error(void *ctx)
{
    return ((host_rank *)ctx)->err;
}

/* ---- streaming stores (ncl_host_nt) ------------------------------------------------------ */

/* A WRITE_REDUCE into a range still pending its copy (host_pend) writes lines nobody has read
 * lately; from this RECV size on it writes them with streaming stores, which skip reading each line
 * first (ncl_host_nt.h; fp32 and fp64). Out of place on 2 ranks, fp32 sum, medians of 16 runs
 * interleaved with ordinary stores on the shared machine (2026-12-06): 8 MiB 9.0 and 9.6 GB/s
 * against 7.8 and 8.9; 2 and 4 MiB no faster (the buffers stay in the caches, and streaming would
 * leave the result out of them for the caller). Streaming the WRITEs into an out-of-place RECV
 * too was slower at 64 MiB, and the copies into RECV no faster: only this reduce streams. */
#define HOST_NT_MIN_RECV (8ull << 20)

/* NCL_HOST_NT: "off" never streams (to compare with the portable path), "always" streams at any
 * size (tests), unset or "on" as above; a build without streaming stores never does. */
static void host_nt_mode(host_cfg *c)
{
    const char *v = getenv("NCL_HOST_NT");
    c->nt_min_recv = HOST_NT_MIN_RECV;
    if (v && strcmp(v, "off") == 0)
        c->nt_min_recv = UINT64_MAX;
    else if (v && strcmp(v, "always") == 0)
        c->nt_min_recv = 0;
    else if (v && *v && strcmp(v, "on") != 0 && c->comm.log_level >= NCL_LOG_WARN)
        host_emit(&c->comm, -1, NCL_LOG_WARN, "NCL_HOST_NT not understood (on, off, always): streaming as on");
    if (!ncl_host_nt_available())
        c->nt_min_recv = UINT64_MAX;
}

/* Whether the reduce into owner's pending RECV streams. Caller holds owner's bind_lock for
 * reading, or is the owner. */
static int host_streams(const host_rank *owner)
{
    return owner->bufs.size[NCL_BUF_RECV] >= host_cfg_of(owner->world)->nt_min_recv;
}

/* [a, a + bytes) and [b, b + bytes) share no byte. */
static int host_apart(const void *a, const void *b, uint64_t bytes)
{
    const uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return x + bytes <= y || y + bytes <= x;
}

/* ---- notify counters (caller holds the owner's mu) ------------------------------------ */

static uint32_t host_ctr_key(int sender, uint32_t id)
{
    return (uint32_t)sender * NCL_NOTIFY_IDS + id + 1u;
}

static uint32_t host_ctr_hash(uint32_t key)
{
    uint32_t h = key * 0x9E3779B1u;
    return h ^ (h >> 15);
}

static host_ctr *host_ctr_find(const host_ctrs *t, uint32_t key)
{
    for (uint32_t i = host_ctr_hash(key) & t->mask;; i = (i + 1) & t->mask) {
        host_ctr *s = &t->slot[i];
        if (s->key == key || s->key == 0)
            return s; /* load stays <= 1/2, so an empty slot always ends the probe */
    }
}

static int host_ctrs_init(host_ctrs *t, uint32_t cap)
{
    t->slot = calloc(cap, sizeof *t->slot);
    t->mask = cap - 1;
    t->used = 0;
    return t->slot != NULL;
}

/* The counter for key, inserted at zero if new. Growing allocates, but only the first time
 * a (sender, id) pair shows up, never on the steady-state path. NULL if out of memory. */
static host_ctr *host_ctr_get(host_ctrs *t, uint32_t key)
{
    host_ctr *s = host_ctr_find(t, key);
    if (s->key == key)
        return s;
    if (2u * (t->used + 1u) > t->mask + 1u) {
        host_ctrs bigger;
        if (!host_ctrs_init(&bigger, 2u * (t->mask + 1u)))
            return NULL;
        for (uint32_t i = 0; i <= t->mask; i++)
            if (t->slot[i].key)
                *host_ctr_find(&bigger, t->slot[i].key) = t->slot[i];
        bigger.used = t->used;
        free(t->slot);
        *t = bigger;
        s = host_ctr_find(t, key);
    }
    s->key = key;
    s->count = 0;
    t->used++;
    return s;
}

/* ---- deferred copies (host_pend) ------------------------------------------------------- */

enum { PEND_DROP, PEND_COPY, PEND_TAKE };

/* Removes the parts of o's pending copies inside RECV [lo, hi): PEND_DROP when the caller
 * overwrites them, PEND_COPY copying them first (their bytes are about to be read or reduced
 * into), PEND_TAKE handing up to HOST_PEND_TAKE of them to the caller in take[] (*ntaken; the
 * rest are copied). A part from the middle of a copy leaves two; without a free entry for the
 * second, that one is copied now. Caller holds o->pend_mu, and o's buffers are bound (o's own
 * thread, or a peer holding o's bind_lock). */
static void host_pend_cut(host_rank *o, uint64_t lo, uint64_t hi, int how, host_pend *take, unsigned *ntaken)
{
    unsigned used = atomic_load(&o->pend_used);
    unsigned char *recv = ncl_bk_ptr(o->bufs.base[NCL_BUF_RECV]);
    const unsigned char *send = ncl_bk_ptr(o->bufs.base[NCL_BUF_SEND]);
    for (unsigned i = 0; i < used;) {
        host_pend *e = &o->pend[i];
        const uint64_t elo = e->dst, ehi = e->dst + e->len;
        if (ehi <= lo || elo >= hi) {
            i++;
            continue;
        }
        const uint64_t a = elo > lo ? elo : lo, b = ehi < hi ? ehi : hi;
        const host_pend part = {a, e->src + (a - elo), b - a};
        if (how == PEND_TAKE && *ntaken < HOST_PEND_TAKE)
            take[(*ntaken)++] = part;
        else if (how != PEND_DROP)
            memcpy(recv + part.dst, send + part.src, (size_t)part.len);
        if (elo < a && b < ehi) {
            const host_pend right = {b, e->src + (b - elo), ehi - b};
            e->len = a - elo;
            if (used < HOST_PEND_CAP)
                o->pend[used++] = right;
            else
                memcpy(recv + right.dst, send + right.src, (size_t)right.len);
            i++;
        } else if (elo < a) {
            e->len = a - elo;
            i++;
        } else if (b < ehi) {
            e->src += b - elo;
            e->dst = b;
            e->len = ehi - b;
            i++;
        } else {
            *e = o->pend[--used];
        }
    }
    atomic_store(&o->pend_used, used);
}

/* The owner is about to read or write `bytes` at ref: what is pending there is copied first. */
static void host_pend_touch(host_rank *r, ncl_ref ref, uint64_t bytes)
{
    if (ref.buf != NCL_BUF_RECV || bytes == 0 || atomic_load(&r->pend_used) == 0)
        return;
    pthread_mutex_lock(&r->pend_mu);
    host_pend_cut(r, ref.off, ref.off + bytes, PEND_COPY, NULL, NULL);
    pthread_mutex_unlock(&r->pend_mu);
}

/* Every pending copy of r, done (its buffers still bound: before unbinding or rebinding them). */
static void host_pend_flush(host_rank *r)
{
    if (atomic_load(&r->pend_used) == 0)
        return;
    pthread_mutex_lock(&r->pend_mu);
    host_pend_cut(r, 0, UINT64_MAX, PEND_COPY, NULL, NULL);
    pthread_mutex_unlock(&r->pend_mu);
}

/* A LOCAL_COPY of the owner's SEND into its RECV: 1 when deferred, 0 when the caller copies
 * (another kind or buffer, SEND and RECV sharing memory, or no free entry). */
static int host_pend_defer(host_rank *r, const ncl_task *t)
{
    if (!r->pend_on || t->kind != NCL_TASK_LOCAL_COPY || t->src.buf != NCL_BUF_SEND || t->dst.buf != NCL_BUF_RECV)
        return 0;
    pthread_mutex_lock(&r->pend_mu);
    host_pend_cut(r, t->dst.off, t->dst.off + t->bytes, PEND_DROP, NULL, NULL); /* overwritten by this copy */
    unsigned used = atomic_load(&r->pend_used);
    host_pend *last = used ? &r->pend[used - 1] : NULL;
    int ok = 1;
    if (last && last->dst + last->len == t->dst.off && last->src + last->len == t->src.off)
        last->len += t->bytes; /* the next slice of the same run */
    else if (used < HOST_PEND_CAP) {
        r->pend[used].dst = t->dst.off;
        r->pend[used].src = t->src.off;
        r->pend[used].len = t->bytes;
        atomic_store(&r->pend_used, used + 1);
    } else
        ok = 0;
    pthread_mutex_unlock(&r->pend_mu);
    return ok;
}

/* Runs our remote task t into peer p's memory (dst, resolved under p's bind_lock, which the
 * caller holds). What p has pending in the destination range is dropped (WRITE and REDUCE_WRITE
 * overwrite it), copied first (REDUCE_WRITE_REDUCE) or, for WRITE_REDUCE, taken: p's SEND stands
 * in for the copy, dst <- send op src, the operands and order of dst op src after it. */
static int host_run_into(host_rank *p, const ncl_task *t, unsigned char *dst, const unsigned char *src,
                         const unsigned char *src2, char *why, size_t why_len)
{
    host_pend take[HOST_PEND_TAKE];
    unsigned n = 0;
    if (t->dst.buf == NCL_BUF_RECV && atomic_load(&p->pend_used)) {
        const int how = t->kind == NCL_TASK_WRITE_REDUCE ? PEND_TAKE
                        : t->kind == NCL_TASK_REDUCE_WRITE_REDUCE ? PEND_COPY : PEND_DROP;
        pthread_mutex_lock(&p->pend_mu);
        host_pend_cut(p, t->dst.off, t->dst.off + t->bytes, how, take, &n);
        pthread_mutex_unlock(&p->pend_mu);
    }
    if (n == 0)
        return ncl_task_two_source(t->kind) ? ncl_bk_run_pair(t, dst, src, src2, why, why_len)
                                            : ncl_bk_run(t, dst, src, why, why_len);
    for (unsigned i = 1; i < n; i++) /* by destination, for the sweep below */
        for (unsigned j = i; j > 0 && take[j - 1].dst > take[j].dst; j--) {
            const host_pend x = take[j];
            take[j] = take[j - 1];
            take[j - 1] = x;
        }
    const unsigned char *send = ncl_bk_ptr(p->bufs.base[NCL_BUF_SEND]);
    const uint64_t base = t->dst.off, end = t->dst.off + t->bytes;
    ncl_task piece = *t;
    uint64_t pos = base;
    for (unsigned k = 0; k <= n; k++) {
        const uint64_t gap_end = k < n ? take[k].dst : end;
        if (gap_end > pos) { /* nothing pending here: as it is */
            piece.kind = t->kind;
            piece.bytes = gap_end - pos;
            if (!ncl_bk_run(&piece, dst + (pos - base), src + (pos - base), why, why_len))
                return 0;
        }
        if (k == n)
            break;
        piece.kind = NCL_TASK_REDUCE_WRITE;
        piece.bytes = take[k].len;
        unsigned char *pd = dst + (take[k].dst - base);
        const unsigned char *pa = send + take[k].src, *pb = src + (take[k].dst - base);
        const uint64_t es = ncl_dtype_size((ncl_dtype)t->dtype);
        if (es && host_streams(p) && host_apart(pd, pa, piece.bytes) && host_apart(pd, pb, piece.bytes))
            ncl_host_nt_reduce3(pd, pa, pb, piece.bytes / es, (ncl_dtype)t->dtype, (ncl_op)t->op);
        else if (!ncl_bk_run_pair(&piece, pd, pa, pb, why, why_len))
            return 0;
        pos = take[k].dst + take[k].len;
    }
    return 1;
}

/* ---- ops -------------------------------------------------------------------------------- */

void ncl_host_caps(const ncl_host_config *cfg, ncl_hal_caps *out)
{
    ncl_bk_cpu_caps(cfg->scratch_bytes, cfg->no_inline_ops, cfg->inline_align, out);
}

static ncl_result host_caps(void *ctx, ncl_hal_caps *out)
{
    const host_rank *r = ctx;
    if (!out)
        return NCL_ERR_BACKEND;
    const host_cfg *c = host_cfg_of(r->world);
    ncl_bk_cpu_caps(c->scratch_bytes, c->no_inline_ops, c->inline_align, out);
    return NCL_SUCCESS;
}

static void host_unbind(host_rank *r);

/* 1 (after logging it) when peer began the same call number as this rank with another collective,
 * count, dtype, op, root, placement or algorithm: the calls do not match, and going on would end
 * in a timeout or, worse, in a result that looks right on some ranks. */
static int host_mismatch(host_rank *r, int peer)
{
    host_rank *p = &r->world->ranks[peer];
    /* A call's launch never changes: once matched, waits on that peer skip its lock. */
    if (peer == r->rank || atomic_load(&p->launch) >> 8 != r->seq || r->agreed[peer] == r->seq + 1)
        return 0;
    pthread_mutex_lock(&p->mu);
    ncl_hal_launch theirs = p->desc;
    pthread_mutex_unlock(&p->mu);
    char why[256];
    if (!ncl_launch_mismatch(&r->desc, r->rank, &theirs, peer, why, sizeof why)) {
        r->agreed[peer] = r->seq + 1;
        return 0;
    }
    host_logf(r, NCL_LOG_ERROR, "mismatch: %s", why);
    return 1;
}

/* Every peer that began this call already, compared with this rank's launch: at begin (a late
 * rank fails before any data moves) and at end (a rank never succeeds on a call whose mismatch it
 * could see). A rank that finishes before a mismatched peer begins cannot know; that peer fails at
 * its begin, naming it. */
static int host_mismatch_any(host_rank *r)
{
    for (int peer = 0; peer < host_cfg_of(r->world)->nranks; peer++)
        if (host_mismatch(r, peer))
            return 1;
    return 0;
}

static ncl_result host_begin(void *ctx, const ncl_hal_launch *l)
{
    host_rank *r = ctx;
    if (!l)
        return NCL_ERR_BACKEND;
    pthread_rwlock_wrlock(&r->bind_lock);
    int was_bound = r->bufs.bound;
    if (was_bound)
        host_pend_flush(r); /* into the buffers they were deferred in */
    ncl_bk_bind(&r->bufs, l, (uint64_t)(uintptr_t)r->scratch, host_cfg_of(r->world)->scratch_bytes);
    pthread_rwlock_unlock(&r->bind_lock);
    /* copies into RECV are deferred only where they cannot change SEND */
    uintptr_t sb = (uintptr_t)l->send, rb = (uintptr_t)l->recv;
    r->pend_on = r->pend && l->send && l->recv && (sb + l->send_bytes <= rb || rb + l->recv_bytes <= sb);
    if (was_bound)
        host_logf(r, NCL_LOG_WARN, "begin of #%llu while #%llu was never ended; rebinding",
                  (unsigned long long)l->seq, (unsigned long long)r->seq);
    r->seq = l->seq;
    /* a new communicator on this rank counts calls from 1 again */
    memset(r->agreed, 0, (size_t)host_cfg_of(r->world)->nranks * sizeof *r->agreed);
    r->coll = l->coll;
    r->err[0] = '\0';
    pthread_mutex_lock(&r->mu);
    r->desc = *l;
    pthread_mutex_unlock(&r->mu);
    atomic_store(&r->launch, l->seq << 8 | l->coll);
    memset(r->qstate, HQ_IDLE, sizeof r->qstate);
    r->completion_unseen = 0;
    if (host_mismatch_any(r)) { /* refused: nothing of this call may touch the buffers */
        host_unbind(r);
        return NCL_ERR_REMOTE;
    }
    host_logf(r, NCL_LOG_DEBUG, "begin #%llu coll %u send %p (%llu B) recv %p (%llu B)",
              (unsigned long long)l->seq, (unsigned)l->coll, (const void *)l->send,
              (unsigned long long)l->send_bytes, l->recv, (unsigned long long)l->recv_bytes);
    return NCL_SUCCESS;
}

/* Unbinds the buffers; waits for any peer still writing into them. */
static void host_unbind(host_rank *r)
{
    pthread_rwlock_wrlock(&r->bind_lock);
    host_pend_flush(r); /* the caller reads RECV next */
    r->pend_on = 0;
    ncl_bk_unbind(&r->bufs);
    pthread_rwlock_unlock(&r->bind_lock);
}

static ncl_result host_end(void *ctx, ncl_result result)
{
    host_rank *r = ctx;
    host_unbind(r);
    host_logf(r, NCL_LOG_DEBUG, "end #%llu: %s", (unsigned long long)r->seq, ncl_strerror(result));
    return result == NCL_SUCCESS && host_mismatch_any(r) ? NCL_ERR_REMOTE : NCL_SUCCESS;
}

/* Resolves (owner's buf + off, bytes) to an address, or explains into why[] and returns NULL.
 * Caller holds owner's bind_lock for reading, or is the owner. */
static unsigned char *host_region(const host_rank *owner, ncl_ref ref, uint64_t bytes, int write, char *why,
                                  size_t why_len)
{
    uint64_t addr = 0;
    char inner[160];
    if (!ncl_bk_region(&owner->bufs, ref, bytes, write, &addr, inner, sizeof inner)) {
        snprintf(why, why_len, "on rank %d: %s", owner->rank, inner);
        return NULL;
    }
    return ncl_bk_ptr(addr);
}

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static ncl_result host_task_fail(host_rank *r, uint32_t queue, const ncl_task *t, const char *fmt, ...)
{
    char detail[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    const char *kind = t ? ncl_task_kind_name(t->kind) : "?";
    host_logf(r, NCL_LOG_ERROR, "#%llu queue %u step %u %s (peer %d, %llu B): %s",
              (unsigned long long)r->seq, queue, t ? t->step : 0u, kind, t ? t->peer : -1,
              t ? (unsigned long long)t->bytes : 0ull, detail);
    if (queue < NCL_MAX_QUEUES)
        r->qstate[queue] = HQ_FAILED;
    return NCL_ERR_BACKEND;
}

/* Runs the task to completion on the calling thread: the host "DMA engine" is a memcpy. */
static ncl_result host_dma_submit(void *ctx, uint32_t queue, const ncl_task *t)
{
    host_rank *r = ctx;
    host_world *w = r->world;
    char why[200];
    if (queue >= NCL_MAX_QUEUES)
        return host_task_fail(r, queue, t, "queue out of range (max %u)", NCL_MAX_QUEUES);
    if (!t)
        return host_task_fail(r, queue, t, "no task");
    if (t->kind > NCL_TASK_LOCAL_DIV && !ncl_task_is_wide(t->kind) && !ncl_task_two_source(t->kind))
        return host_task_fail(r, queue, t, "kind %u is not a data task", (unsigned)t->kind);
    if (t->bytes == 0)
        goto done;
    if (!ncl_bk_task_ok(t, why, sizeof why))
        return host_task_fail(r, queue, t, "%s", why);
    int remote = ncl_task_is_remote(t->kind), pair = ncl_task_two_source(t->kind);
    if (remote && (t->peer < 0 || t->peer >= host_cfg_of(w)->nranks))
        return host_task_fail(r, queue, t, "peer out of range (%d ranks)", host_cfg_of(w)->nranks);
    /* Our own bindings change only on this thread: no lock needed to read them. */
    const unsigned char *src = NULL, *src2 = NULL;
    if (t->kind != NCL_TASK_LOCAL_DIV && !(src = host_region(r, t->src, ncl_task_src_bytes(t), 0, why, sizeof why)))
        return host_task_fail(r, queue, t, "src %s", why);
    if (pair && !(src2 = host_region(r, t->src2, t->bytes, 0, why, sizeof why)))
        return host_task_fail(r, queue, t, "src2 %s", why);
    if (remote) {
        /* what we send of our RECV must hold its deferred copies (host_pend) */
        host_pend_touch(r, t->src, t->bytes);
        if (pair)
            host_pend_touch(r, t->src2, t->bytes);
        if (host_mismatch(r, t->peer)) /* its buffers are bound for another collective */
            return NCL_ERR_REMOTE;
        host_rank *p = &w->ranks[t->peer];
        pthread_rwlock_rdlock(&p->bind_lock);
        unsigned char *dst = host_region(p, t->dst, t->bytes, 1, why, sizeof why);
        int ok = dst && host_run_into(p, t, dst, src, src2, why, sizeof why);
        pthread_rwlock_unlock(&p->bind_lock);
        if (!ok)
            return host_task_fail(r, queue, t, "dst %s", why);
    } else {
        unsigned char *dst = host_region(r, t->dst, ncl_task_dst_bytes(t), 1, why, sizeof why);
        if (!dst)
            return host_task_fail(r, queue, t, "dst %s", why);
        if (!host_pend_defer(r, t)) {
            host_pend_touch(r, t->src, t->kind == NCL_TASK_LOCAL_DIV ? 0 : ncl_task_src_bytes(t));
            host_pend_touch(r, t->dst, ncl_task_dst_bytes(t));
            if (!ncl_bk_run(t, dst, src, why, sizeof why))
                return host_task_fail(r, queue, t, "dst %s", why);
        }
    }
done:
    r->qstate[queue] = HQ_DONE;
    r->completion_unseen = 1;
    if (host_logs(r, NCL_LOG_DEBUG) && t->kind == NCL_TASK_LOCAL_DIV)
        host_logf(r, NCL_LOG_DEBUG, "#%llu queue %u step %u LOCAL_DIV %s+%llu %llu B / %u",
                  (unsigned long long)r->seq, queue, t->step, ncl_buf_name(t->dst.buf),
                  (unsigned long long)t->dst.off, (unsigned long long)t->bytes, t->count);
    else if (host_logs(r, NCL_LOG_DEBUG))
        host_logf(r, NCL_LOG_DEBUG, "#%llu queue %u step %u %s %s+%llu -> rank %d %s+%llu %llu B",
                  (unsigned long long)r->seq, queue, t->step, ncl_task_kind_name(t->kind),
                  ncl_buf_name(t->src.buf),
                  (unsigned long long)t->src.off, ncl_task_is_remote(t->kind) ? t->peer : r->rank,
                  ncl_buf_name(t->dst.buf),
                  (unsigned long long)t->dst.off, (unsigned long long)t->bytes);
    return NCL_SUCCESS;
}

static ncl_result host_dma_poll(void *ctx, uint32_t queue, int *done)
{
    host_rank *r = ctx;
    if (queue >= NCL_MAX_QUEUES || !done)
        return NCL_ERR_BACKEND;
    uint8_t s = r->qstate[queue];
    *done = 1; /* synchronous engine: nothing is ever in flight */
    r->qstate[queue] = HQ_IDLE;
    r->completion_unseen = 0;
    if (s == HQ_FAILED) {
        /* The submit already failed; report it again in case the caller only polls. */
        host_logf(r, NCL_LOG_DEBUG, "queue %u polled in state %s", queue, host_qstate_str(s));
        return NCL_ERR_BACKEND;
    }
    return NCL_SUCCESS;
}

static ncl_result host_notify_record(void *ctx, uint32_t queue, int peer, uint32_t id)
{
    host_rank *r = ctx;
    host_world *w = r->world;
    if (queue >= NCL_MAX_QUEUES || peer < 0 || peer >= host_cfg_of(w)->nranks || id >= NCL_NOTIFY_IDS) {
        host_logf(r, NCL_LOG_ERROR, "#%llu notify_record queue %u peer %d id %u: out of range",
                  (unsigned long long)r->seq, queue, peer, id);
        return NCL_ERR_BACKEND;
    }
    /* Our data tasks are complete already (synchronous), and the unlock below publishes
     * their bytes to whoever acquires p->mu after seeing the count: the release the
     * notify contract needs. */
    host_rank *p = &w->ranks[peer];
    ncl_result rc = NCL_SUCCESS;
    pthread_mutex_lock(&p->mu);
    host_ctr *c = host_ctr_get(&p->ctrs, host_ctr_key(r->rank, id));
    if (!c)
        rc = NCL_ERR_OUT_OF_MEMORY;
    else if (c->count == UINT32_MAX)
        rc = NCL_ERR_BACKEND;
    else {
        c->count++;
        p->gen++;
    }
    pthread_mutex_unlock(&p->mu);
    if (rc != NCL_SUCCESS) {
        host_logf(r, NCL_LOG_ERROR, "#%llu notify_record to rank %d id %u: %s",
                  (unsigned long long)r->seq, peer, id,
                  rc == NCL_ERR_OUT_OF_MEMORY ? "out of memory" : "counter overflow");
        return rc;
    }
    pthread_cond_signal(&p->cv);
    host_logf(r, NCL_LOG_DEBUG, "#%llu queue %u record -> rank %d id %u", (unsigned long long)r->seq,
              queue, peer, id);
    return NCL_SUCCESS;
}

static ncl_result host_notify_try_wait(void *ctx, int peer, uint32_t id, uint32_t count, int *done)
{
    host_rank *r = ctx;
    host_world *w = r->world;
    if (!done || peer < 0 || peer >= host_cfg_of(w)->nranks || id >= NCL_NOTIFY_IDS) {
        host_logf(r, NCL_LOG_ERROR, "#%llu notify_try_wait peer %d id %u: out of range",
                  (unsigned long long)r->seq, peer, id);
        return NCL_ERR_BACKEND;
    }
    int gone = 0;
    pthread_mutex_lock(&r->mu);
    host_ctr *c = host_ctr_find(&r->ctrs, host_ctr_key(peer, id));
    uint32_t have = c->key ? c->count : 0;
    if (have >= count) {
        if (c->key)
            c->count -= count;
        *done = 1;
    } else {
        *done = 0;
        /* A peer that exited made all its records before (they took our mu, which we
         * hold), so a short counter now stays short forever. */
        gone = peer != r->rank && atomic_load(&w->ranks[peer].exited);
    }
    pthread_mutex_unlock(&r->mu);
    if (host_mismatch(r, peer)) /* done or not: a rank must not succeed on a mismatched call */
        return NCL_ERR_REMOTE;
    /* A program polling ncl_test in a loop never sleeps in wait_event: on a machine with fewer
     * cores than ranks it would keep the core from the rank it waits for (8 ranks on 2 cores
     * took seconds instead of milliseconds). After a few short looks in a row, give the core up. */
    if (*done)
        r->short_polls = 0;
    else if (++r->short_polls >= 16) {
        r->short_polls = 0;
        sched_yield();
    }
    if (gone) {
        host_logf(r, NCL_LOG_ERROR,
                  "#%llu waits for notify %u (x%u, have %u) from rank %d, which has left (its "
                  "function returned, or it destroyed the communicator)",
                  (unsigned long long)r->seq, id, count, have, peer);
        return NCL_ERR_REMOTE;
    }
    if (*done && count)
        host_logf(r, NCL_LOG_DEBUG, "#%llu wait <- rank %d id %u x%u satisfied",
                  (unsigned long long)r->seq, peer, id, count);
    return NCL_SUCCESS;
}

static uint64_t host_now_ns(void *ctx)
{
    (void)ctx;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static ncl_result host_wait_event(void *ctx, uint64_t timeout_ns)
{
    host_rank *r = ctx;
    host_world *w = r->world;
    r->short_polls = 0; /* the engine waits properly: no busy loop to break */
    if (r->completion_unseen) {
        r->completion_unseen = 0;
        return NCL_SUCCESS;
    }
    if (timeout_ns == 0)
        return NCL_SUCCESS;
    const uint64_t max_wait = 365ull * 24 * 3600 * 1000000000ull;
    if (timeout_ns > max_wait)
        timeout_ns = max_wait;
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    uint64_t ns = (uint64_t)deadline.tv_nsec + timeout_ns % 1000000000u;
    deadline.tv_sec += (time_t)(timeout_ns / 1000000000u + ns / 1000000000u);
    deadline.tv_nsec = (long)(ns % 1000000000u);

    /* Announce the sleep before reading `exits`; an exiting rank bumps `exits` before reading
     * `sleepers` (both seq_cst), so either we see its exit or it sees us and wakes us. */
    atomic_fetch_add(&w->sleepers, 1);
    pthread_mutex_lock(&r->mu);
    unsigned exits = atomic_load(&w->exits);
    /* Records bump gen under mu, so comparing it here cannot miss a wakeup. */
    if (exits == r->seen_exits) {
        while (r->gen == r->seen_gen)
            if (pthread_cond_timedwait(&r->cv, &r->mu, &deadline) == ETIMEDOUT)
                break;
    }
    r->seen_gen = r->gen;
    pthread_mutex_unlock(&r->mu);
    atomic_fetch_sub(&w->sleepers, 1);
    r->seen_exits = exits;
    return NCL_SUCCESS;
}

static ncl_result host_notify_peek(void *ctx, int peer, uint32_t id, uint32_t *value)
{
    host_rank *r = ctx;
    if (!value || peer < 0 || peer >= host_cfg_of(r->world)->nranks || id >= NCL_NOTIFY_IDS)
        return NCL_ERR_BACKEND;
    pthread_mutex_lock(&r->mu);
    host_ctr *c = host_ctr_find(&r->ctrs, host_ctr_key(peer, id));
    *value = c->key ? c->count : 0;
    pthread_mutex_unlock(&r->mu);
    return NCL_SUCCESS;
}

static ncl_result host_split(void *ctx, uint32_t id, const int32_t *members, int nmembers, int rank, ncl_hal *child);
static void host_release(void *ctx);

const ncl_hal_ops ncl_host_hal_ops = {
    .caps = host_caps,
    .begin = host_begin,
    .end = host_end,
    .dma_submit = host_dma_submit,
    .dma_poll = host_dma_poll,
    .notify_record = host_notify_record,
    .notify_try_wait = host_notify_try_wait,
    .wait_event = host_wait_event,
    .now_ns = host_now_ns,
    .log = host_engine_log,
    .notify_peek = host_notify_peek,
    .last_error = host_last_error,
    .split = host_split,
    .release = host_release,
};

/* ---- world and rank threads ---------------------------------------------------------- */

static void *host_default_alloc(void *ud, size_t bytes)
{
    (void)ud;
    return malloc(bytes);
}

static void host_default_free(void *ud, void *ptr)
{
    (void)ud;
    free(ptr);
}

/* The rank's fn returned: it will record nothing more. Peers waiting on it fail fast
 * (notify_try_wait) and barriers break instead of hanging. */
static void host_rank_exit(host_rank *r)
{
    host_world *w = r->world;
    host_unbind(r); /* the user may free the buffers now; late writers must not reach them */
    atomic_store(&r->exited, 1);
    pthread_mutex_lock(&w->ctl_mu);
    w->bar_exited++;
    pthread_cond_broadcast(&w->ctl_cv);
    pthread_mutex_unlock(&w->ctl_mu);
    atomic_fetch_add(&w->exits, 1);
    if (atomic_load(&w->sleepers) == 0)
        return; /* nobody asleep: whoever sleeps next sees `exits` changed */
    for (int i = 0; i < host_cfg_of(w)->nranks; i++) {
        host_rank *p = &w->ranks[i];
        if (p == r)
            continue;
        pthread_mutex_lock(&p->mu);
        p->gen++;
        pthread_mutex_unlock(&p->mu);
        pthread_cond_signal(&p->cv);
    }
}

static void *host_rank_main(void *arg)
{
    host_rank *r = arg;
    host_world *w = r->world;
    const host_cfg *cfg = host_cfg_of(w);
    pthread_mutex_lock(&w->ctl_mu);
    while (w->gate == HOST_GATE_WAIT)
        pthread_cond_wait(&w->ctl_cv, &w->ctl_mu);
    int go = w->gate == HOST_GATE_GO;
    pthread_mutex_unlock(&w->ctl_mu);
    if (!go) {
        r->result = NCL_ERR_BACKEND;
        return NULL;
    }
    ncl_comm *comm = NULL;
    ncl_result rc = ncl_comm_create(&comm, cfg->nranks, r->rank, &r->hal, &cfg->comm);
    if (rc != NCL_SUCCESS) {
        host_logf(r, NCL_LOG_ERROR, "ncl_comm_create failed: %s", ncl_strerror(rc));
    } else {
        rc = cfg->fn(comm, cfg->arg);
        ncl_comm_state(comm, &r->state);
        ncl_comm_destroy(comm);
    }
    r->result = rc;
    host_rank_exit(r);
    return NULL;
}

static void host_rank_fini(host_rank *r)
{
    pthread_mutex_destroy(&r->pend_mu);
    free(r->pend);
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    pthread_rwlock_destroy(&r->bind_lock);
    free(r->ctrs.slot);
    free(r->scratch);
    free(r->agreed);
}

static int host_rank_init(host_world *w, int rank)
{
    host_rank *r = &w->ranks[rank];
    const host_cfg *cfg = host_cfg_of(w);
    r->world = w;
    r->rank = rank;
    r->state.rank = rank;
    r->hal.ops = &ncl_host_hal_ops;
    r->hal.ctx = r;
    r->result = NCL_SUCCESS;
    atomic_init(&r->exited, 0);
    atomic_init(&r->launch, 0);
    atomic_init(&r->pend_used, 0);
    if (cfg->scratch_bytes) {
        uint64_t sz = (cfg->scratch_bytes + HOST_ALIGN - 1) / HOST_ALIGN * HOST_ALIGN;
        if (sz < cfg->scratch_bytes || sz > SIZE_MAX)
            return 0;
        r->scratch = aligned_alloc(HOST_ALIGN, (size_t)sz);
        if (!r->scratch)
            return 0;
    }
    ncl_bk_keep_scratch(&r->bufs, (uint64_t)(uintptr_t)r->scratch, cfg->scratch_bytes); /* landing zones */
    r->agreed = calloc((size_t)cfg->nranks, sizeof *r->agreed);
    if (!r->agreed || !host_ctrs_init(&r->ctrs, HOST_CTR_INIT_CAP)) {
        free(r->agreed);
        free(r->scratch);
        return 0;
    }
    pthread_condattr_t ca;
    int ok = pthread_condattr_init(&ca) == 0;
    if (ok) {
        ok = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 && pthread_cond_init(&r->cv, &ca) == 0;
        pthread_condattr_destroy(&ca);
    }
    if (ok && pthread_mutex_init(&r->mu, NULL) != 0) {
        pthread_cond_destroy(&r->cv);
        ok = 0;
    }
    if (ok && pthread_rwlock_init(&r->bind_lock, NULL) != 0) {
        pthread_mutex_destroy(&r->mu);
        pthread_cond_destroy(&r->cv);
        ok = 0;
    }
    if (ok && pthread_mutex_init(&r->pend_mu, NULL) != 0) {
        pthread_rwlock_destroy(&r->bind_lock);
        pthread_mutex_destroy(&r->mu);
        pthread_cond_destroy(&r->cv);
        ok = 0;
    }
    /* without its table a rank copies at once, as before (pend_on stays 0) */
    if (ok)
        r->pend = calloc(HOST_PEND_CAP, sizeof *r->pend);
    if (!ok) {
        free(r->ctrs.slot);
        free(r->scratch);
        free(r->agreed);
    }
    return ok;
}

static void host_world_destroy(host_world *w, int ranks_ready, int ctl_ready)
{
    while (w->next) { /* children nobody released (a communicator never destroyed) */
        host_world *c = w->next;
        w->next = c->next;
        c->next = NULL;
        host_world_destroy(c, host_cfg_of(c)->nranks, 1);
    }
    for (int i = 0; i < ranks_ready; i++)
        host_rank_fini(&w->ranks[i]);
    if (ctl_ready) {
        pthread_cond_destroy(&w->ctl_cv);
        pthread_mutex_destroy(&w->ctl_mu);
    }
    free(w->members);
    free(w->ranks);
    free(w);
}

/* A world of cfg->nranks contexts; the caller sets what makes it a root or a child. */
static host_world *host_world_make(const host_cfg *cfg)
{
    host_world *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->cfg = *cfg;
    w->root = w;
    atomic_init(&w->exits, 0);
    atomic_init(&w->sleepers, 0);
    size_t bytes = (size_t)cfg->nranks * sizeof(host_rank); /* sizeof is a multiple of 64 */
    w->ranks = aligned_alloc(HOST_ALIGN, bytes);
    if (!w->ranks) {
        free(w);
        return NULL;
    }
    memset(w->ranks, 0, bytes);
    if (pthread_mutex_init(&w->ctl_mu, NULL) != 0) {
        host_world_destroy(w, 0, 0);
        return NULL;
    }
    if (pthread_cond_init(&w->ctl_cv, NULL) != 0) {
        pthread_mutex_destroy(&w->ctl_mu);
        host_world_destroy(w, 0, 0);
        return NULL;
    }
    for (int i = 0; i < cfg->nranks; i++) {
        if (!host_rank_init(w, i)) {
            host_world_destroy(w, i, 1);
            return NULL;
        }
    }
    return w;
}

static host_world *host_world_create(const ncl_host_config *c, ncl_host_fn fn, void *arg)
{
    host_cfg cfg = {0};
    cfg.nranks = c->nranks;
    cfg.scratch_bytes = c->scratch_bytes;
    cfg.fn = fn;
    cfg.arg = arg;
    cfg.comm = c->comm;
    cfg.comm.log_level = host_log_level(&c->comm); /* the engine's messages obey NCL_HOST_LOG too */
    memcpy(cfg.no_inline_ops, c->no_inline_ops, sizeof cfg.no_inline_ops);
    cfg.inline_align = c->inline_align;
    host_nt_mode(&cfg);
    if (!cfg.comm.alloc) {
        cfg.comm.alloc = host_default_alloc;
        cfg.comm.free = host_default_free;
        cfg.comm.alloc_ud = NULL;
    }
    return host_world_make(&cfg);
}

/* ---- sub-communicators ------------------------------------------------------------------ */

/* The child world `id` of members (root ranks), made by the first member to ask; the others
 * find it. NULL with why when a live child of that id has other members, or memory ran out. */
static host_world *host_child_join(host_world *root, uint32_t id, const int32_t *members, int n, int rank,
                                   char *why, size_t why_len)
{
    host_world *c = root->next;
    while (c && c->id != id)
        c = c->next;
    if (c && (host_cfg_of(c)->nranks != n || memcmp(c->members, members, (size_t)n * sizeof *members) != 0)) {
        snprintf(why, why_len, "communicator %08x exists with other members (%d ranks, first %d; this rank asks "
                 "for %d, first %d)", (unsigned)id, host_cfg_of(c)->nranks, (int)c->members[0], n, (int)members[0]);
        return NULL;
    }
    if (c && atomic_load(&c->ranks[rank].exited)) {
        snprintf(why, why_len, "communicator %08x: rank %d already made and released its part", (unsigned)id, rank);
        return NULL;
    }
    if (!c) {
        host_cfg cfg = root->cfg;
        cfg.nranks = n;
        int32_t *own = malloc((size_t)n * sizeof *own);
        if (own)
            c = host_world_make(&cfg);
        if (!c) {
            free(own);
            snprintf(why, why_len, "no memory for a communicator of %d ranks with %llu bytes of scratch each", n,
                     (unsigned long long)cfg.scratch_bytes);
            return NULL;
        }
        memcpy(own, members, (size_t)n * sizeof *own);
        c->members = own;
        c->id = id;
        c->root = root;
        c->next = root->next;
        root->next = c;
    }
    c->taken++;
    return c;
}

static ncl_result host_split(void *ctx, uint32_t id, const int32_t *members, int nmembers, int rank, ncl_hal *child)
{
    host_rank *r = ctx;
    host_world *w = r->world, *root = w->root;
    char why[200] = "";
    int32_t *in_root = NULL;
    int ok = id && members && child && nmembers >= 1 && rank >= 0 && rank < nmembers && members[rank] == r->rank;
    if (!ok)
        snprintf(why, sizeof why, "split: bad arguments (id %08x, %d members, this rank at %d)", (unsigned)id,
                 nmembers, rank);
    if (ok && !(in_root = malloc((size_t)nmembers * sizeof *in_root))) {
        snprintf(why, sizeof why, "split: no memory for %d members", nmembers);
        ok = 0;
    }
    for (int i = 0; ok && i < nmembers; i++) {
        if (members[i] < 0 || members[i] >= host_cfg_of(w)->nranks) {
            snprintf(why, sizeof why, "split: member %d is rank %d, out of range (%d ranks)", i, (int)members[i],
                     host_cfg_of(w)->nranks);
            ok = 0;
        } else
            in_root[i] = w->members ? w->members[members[i]] : members[i];
    }
    host_world *c = NULL;
    if (ok) {
        pthread_mutex_lock(&root->ctl_mu);
        c = host_child_join(root, id, in_root, nmembers, rank, why, sizeof why);
        pthread_mutex_unlock(&root->ctl_mu);
    }
    free(in_root);
    if (!c) {
        snprintf(r->err, sizeof r->err, "%s", why);
        host_logf(r, NCL_LOG_ERROR, "%s", why);
        return ok ? NCL_ERR_REMOTE : NCL_ERR_BACKEND;
    }
    child->ops = &ncl_host_hal_ops;
    child->ctx = &c->ranks[rank];
    host_logf(r, NCL_LOG_DEBUG, "split: communicator %08x, rank %d of %d", (unsigned)id, rank, nmembers);
    return NCL_SUCCESS;
}

static void host_release(void *ctx)
{
    host_rank *r = ctx;
    host_world *w = r->world, *root = w->root;
    if (w == root)
        return; /* the root's ranks end with their threads */
    host_rank_exit(r); /* peers waiting on it fail now */
    pthread_mutex_lock(&root->ctl_mu);
    int last = ++w->released == host_cfg_of(w)->nranks;
    if (last) {
        host_world **at = &root->next;
        while (*at != w)
            at = &(*at)->next;
        *at = w->next;
        w->next = NULL;
    }
    pthread_mutex_unlock(&root->ctl_mu);
    if (last) /* every member released it: no thread touches it any more */
        host_world_destroy(w, host_cfg_of(w)->nranks, 1);
}

/* A rank gave up waiting: join every rank's state into the wait-for report, log it line by line
 * and hand it to the caller if it asked. */
static void host_hang_report(host_world *w, const ncl_host_config *cfg)
{
    int n = cfg->nranks;
    ncl_rank_state *st = malloc((size_t)n * sizeof *st);
    size_t cap = 256 + (size_t)n * 160;
    char *text = malloc(cap);
    if (!st || !text) {
        free(st);
        free(text);
        return;
    }
    for (int i = 0; i < n; i++)
        st[i] = w->ranks[i].state;
    ncl_diag_report(st, n, text, cap);
    for (char *line = text, *end; *line; line = end + (*end != '\0')) {
        end = strchr(line, '\n');
        if (!end)
            end = line + strlen(line);
        host_world_error(&w->cfg.comm, "%.*s", (int)(end - line), line);
    }
    if (cfg->hang_report && cfg->hang_report_size) {
        strncpy(cfg->hang_report, text, cfg->hang_report_size - 1);
        cfg->hang_report[cfg->hang_report_size - 1] = '\0';
    }
    free(st);
    free(text);
}

ncl_result ncl_host_run_cfg(const ncl_host_config *cfg, ncl_host_fn fn, void *arg,
                            ncl_result *rank_results)
{
    if (!cfg || !fn || cfg->size != sizeof(ncl_host_config) || cfg->version != NCL_HOST_CONFIG_VERSION ||
        cfg->nranks < 1 || cfg->nranks > HOST_MAX_RANKS)
        return NCL_ERR_INVALID_ARGUMENT;
    host_world *w = host_world_create(cfg, fn, arg);
    if (!w) {
        ncl_config cc = cfg->comm;
        cc.log_level = host_log_level(&cfg->comm);
        host_world_error(&cc, "cannot allocate a world of %d ranks with %llu bytes of scratch each", cfg->nranks,
                         (unsigned long long)cfg->scratch_bytes);
        return NCL_ERR_OUT_OF_MEMORY;
    }
    int n = cfg->nranks, started = 0, err = 0;
    /* Threads wait at a gate until all exist: if one cannot be created, none has run fn,
     * so nobody is left waiting on a rank that never starts. */
    for (; started < n; started++) {
        err = pthread_create(&w->ranks[started].thread, NULL, host_rank_main, &w->ranks[started]);
        if (err)
            break;
    }
    pthread_mutex_lock(&w->ctl_mu);
    w->gate = started == n ? HOST_GATE_GO : HOST_GATE_ABORT;
    pthread_cond_broadcast(&w->ctl_cv);
    pthread_mutex_unlock(&w->ctl_mu);
    for (int i = 0; i < started; i++)
        pthread_join(w->ranks[i].thread, NULL);

    ncl_result rc = NCL_SUCCESS;
    if (started < n) {
        host_world_error(&w->cfg.comm, "cannot create the thread of rank %d of %d (error %d: %s)",
                         started, n, err, err == EAGAIN ? "thread limit reached" : "pthread_create failed");
        rc = NCL_ERR_BACKEND;
        if (rank_results)
            for (int i = 0; i < n; i++)
                rank_results[i] = NCL_ERR_BACKEND;
    } else {
        int stuck = 0;
        for (int i = 0; i < n; i++) {
            if (rank_results)
                rank_results[i] = w->ranks[i].result;
            if (rc == NCL_SUCCESS)
                rc = w->ranks[i].result;
            stuck |= w->ranks[i].result == NCL_ERR_TIMEOUT || w->ranks[i].result == NCL_ERR_REMOTE;
        }
        if (stuck)
            host_hang_report(w, cfg);
    }
    host_world_destroy(w, n, 1);
    return rc;
}

ncl_result ncl_host_run(int nranks, ncl_host_fn fn, void *arg)
{
    ncl_host_config cfg = NCL_HOST_CONFIG_INIT;
    cfg.nranks = nranks;
    return ncl_host_run_cfg(&cfg, fn, arg, NULL);
}

ncl_result ncl_host_barrier(ncl_comm *comm)
{
    const ncl_hal *hal = ncl_comm_hal(comm);
    if (!hal || hal->ops != &ncl_host_hal_ops || !hal->ctx)
        return NCL_ERR_INVALID_ARGUMENT;
    host_rank *r = hal->ctx;
    host_world *w = r->world;
    ncl_result rc = NCL_SUCCESS;
    pthread_mutex_lock(&w->ctl_mu);
    if (w->bar_exited) {
        rc = NCL_ERR_REMOTE; /* a rank returned from fn: it will never arrive */
    } else if (++w->bar_arrived == host_cfg_of(w)->nranks) {
        w->bar_arrived = 0;
        w->bar_gen++;
        pthread_cond_broadcast(&w->ctl_cv);
    } else {
        uint64_t gen = w->bar_gen;
        while (w->bar_gen == gen && !w->bar_exited)
            pthread_cond_wait(&w->ctl_cv, &w->ctl_mu);
        if (w->bar_gen == gen)
            rc = NCL_ERR_REMOTE;
    }
    pthread_mutex_unlock(&w->ctl_mu);
    if (rc != NCL_SUCCESS)
        host_logf(r, NCL_LOG_ERROR, "barrier broken: a rank returned from its function without "
                  "reaching it");
    return rc;
}
