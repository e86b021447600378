/* ck.h — the schedule checker's private header: its state, the small helpers every part inlines, and what each part exports. */
#ifndef NCL_CK_H
#define NCL_CK_H

#include "ncl/ncl_check.h"

#include "ncl_algo.h"
#include "ncl_fmt.h"

#include <string.h>

/* The checker in parts, each one job, none depending on a later one: ck_base.c (messages and
 * memory), ck_sym.c (symbolic memory), ck_order.c (happens-before: vector clocks, access maps
 * and races, notify counters), ck_zone.c (landing zones), ck_run.c (validating and executing
 * tasks), ck_verdict.c (deadlock report and final checks), ncl_check.c (setup and the entry
 * point). Functions one part exports to another start with ncl_ck_; the hot little ones are inline below. */

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
    uint64_t *first; /* first[k] = b[k]->s[0].lo: a search reads these, not every block it probes */
    size_t nb, capb, capf;
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
    segvec tmp[4];
    uint64_t all[SET_WORDS];
    /* landing zones (ck_zone.c), per (rank, channel): the queue that took the zone's credit + 1
     * (as its writer), whether the rank credited its own zone back (as its reader) */
    uint32_t *zone_taken;
    uint8_t *zone_done;
} ck;

#define POOL_HDR 16u

/* ---- small helpers, inline: they run for every task and segment ---- */

static inline uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static inline uint64_t max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }

static inline int t_rank(const ck *c, uint32_t t) { return (int)(t / c->queues); }
static inline uint32_t t_queue(const ck *c, uint32_t t) { return t % c->queues; }

static inline void *ck_alloc(ck *c, size_t bytes) { return c->alloc(c->ud, bytes); }

static inline void ck_free(ck *c, void *p)
{
    if (p)
        c->free_fn(c->ud, p);
}

static inline void *pool_get(ck *c, pool *p)
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

static inline void pool_put(pool *p, void *o)
{
    *(void **)o = p->free_list;
    p->free_list = o;
}

static inline void set_one(uint64_t *s, int r)
{
    memset(s, 0, SET_WORDS * sizeof *s);
    s[r / 64] |= 1ull << (r % 64);
}

static inline int set_eq(const uint64_t *a, const uint64_t *b)
{
    for (int i = 0; i < SET_WORDS; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

/* First rank in both sets, or -1. */
static inline int set_common(const uint64_t *a, const uint64_t *b)
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

static inline int seg_mergeable(const seg *a, const seg *b)
{
    if (a->defined != b->defined)
        return 0;
    if (!a->defined)
        return 1;
    return a->divided == b->divided && a->wide == b->wide && b->orig == a->orig + (a->hi - a->lo) &&
           set_eq(a->set, b->set);
}

static inline size_t seg_find(const segvec *sv, uint64_t x)
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

static inline mem *mem_of(ck *c, int rank, uint32_t buf) { return &c->mem[(size_t)rank * NCL_BUF_COUNT + buf]; }

static inline uint32_t *vc_of(ck *c, uint32_t t) { return c->vc + (size_t)t * c->nthreads; }

static inline aseg *am_at(const amap *m, apos p) { return &m->b[p.k]->s[p.i]; }

static inline apos am_find(const amap *m, uint64_t x)
{
    size_t lo = 0, hi = m->nb;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->first[mid] <= x)
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

static inline int am_next(const amap *m, apos *p)
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

static inline int is_blocked(const ck *c, uint32_t t) { return c->th[t].state == TH_BLOCKED; }

/* ---- messages and memory (ck_base.c) ---- */

/* Formats the first violated rule into the caller's msg; returns r. */
ncl_result ncl_ck_fail(ck *c, ncl_result r, const char *fmt, ...);
ncl_result ncl_ck_oom(ck *c);
/* "rank R qQ step S (KIND)" */
void ncl_ck_task_name(const ck *c, uint32_t t, uint32_t step, uint8_t kind, char *buf, size_t len);
/* NCL_ERR_SCHEDULE with "rank R qQ step S (KIND): " before the message. */
ncl_result ncl_ck_task_fail(ck *c, uint32_t t, const ncl_task *k, const char *fmt, ...);
/* Rank sets as "0-2,5" (truncated with "..." when long). */
void ncl_ck_fmt_set(const uint64_t *set, int nranks, char *buf, size_t len);
/* Grows *v (elements of `elem` bytes) to hold at least `need`; 0 when out of memory. */
int ncl_ck_grow(ck *c, void **v, size_t *cap, size_t n, size_t need, size_t elem);
void ncl_ck_pool_init(pool *p, size_t size);
void ncl_ck_pool_destroy(ck *c, pool *p);

/* ---- landing zones (ck_zone.c) ---- */

/* Where scratch ends for the checker: past the zones the plan uses. */
uint64_t ncl_ck_zone_end(const ck *c);
/* The credits of earlier uses the collective starts with. */
ncl_result ncl_ck_zone_setup(ck *c);
/* Checks an access to (rank, buf) [lo, hi) by thread t against the zone rules (remote_write: a
 * peer's write, which must be the zone's writer with its credit taken). */
ncl_result ncl_ck_zone_access(ck *c, uint32_t t, const ncl_task *k, int rank, uint32_t buf, uint64_t lo, uint64_t hi,
                              int remote_write);
/* 1 when [lo, hi) is in a zone: a write there needs no READY (its credit stands for it). */
int ncl_ck_zone_write(const ck *c, uint32_t buf, uint64_t lo, uint64_t hi);
/* A completed wait: notes a zone credit taken. */
void ncl_ck_zone_waited(ck *c, uint32_t t, const ncl_task *k);
/* A record: a zone credit must follow every access to its zone. */
ncl_result ncl_ck_zone_credit(ck *c, uint32_t t, const ncl_task *k);
/* The credit counters at the end; ncl_ck_zone_counter: whether x is one of them. */
ncl_result ncl_ck_zone_balance(ck *c);
int ncl_ck_zone_counter(const ck *c, const counter *x);

/* ---- symbolic memory (ck_sym.c) ---- */

/* Appends s to sv, merged into the last segment when it continues it; 0 when out of memory. */
int ncl_ck_sv_push(ck *c, segvec *sv, const seg *s);
/* Replaces [lo, hi) of sv (hi > lo, inside the buffer) with the pieces in `in`, which cover it. */
int ncl_ck_sv_replace(ck *c, segvec *sv, uint64_t lo, uint64_t hi, const segvec *in);
/* What each data task does to the contributions, in elements (dst on dr, src on sr). */
ncl_result ncl_ck_sym_copy(ck *c, uint32_t t, const ncl_task *k, int sr, uint32_t sb, uint64_t slo, int dr, uint32_t db,
                           uint64_t dlo, uint64_t n);
ncl_result ncl_ck_sym_reduce_pair(ck *c, uint32_t t, const ncl_task *k, int r, uint32_t sb, uint64_t slo,
                                  uint32_t s2b, uint64_t s2lo, int dr, uint32_t db, uint64_t dlo, uint64_t n,
                                  int accumulate);
ncl_result ncl_ck_sym_reduce(ck *c, uint32_t t, const ncl_task *k, int sr, uint32_t sb, uint64_t slo, int dr,
                             uint32_t db, uint64_t dlo, uint64_t n);
ncl_result ncl_ck_sym_widen(ck *c, uint32_t t, const ncl_task *k, int r, uint32_t sb, uint64_t slo, uint32_t db,
                            uint64_t dlo, uint64_t n, int init);
ncl_result ncl_ck_sym_narrow(ck *c, uint32_t t, const ncl_task *k, int r, uint32_t sb, uint64_t slo, uint32_t db,
                             uint64_t dlo, uint64_t n, int div);
ncl_result ncl_ck_sym_div(ck *c, uint32_t t, const ncl_task *k, int r, uint32_t b, uint64_t lo, uint64_t n);

/* ---- happens-before: clocks, access maps, notify counters (ck_order.c) ---- */

/* An access by thread t starts a new epoch if it recorded since its last access. */
void ncl_ck_touch(ck *c, uint32_t t);
int ncl_ck_am_init(ck *c, amap *m, uint64_t bytes);
void ncl_ck_am_destroy(ck *c, amap *m);
/* End of the run of segments from p on (below hi) that still hold access e. */
uint64_t ncl_ck_am_extent(const amap *m, apos p, uint64_t hi, const anode *e);
/* Checks an access of thread t to [lo, hi) of (rank, buf) against the live ones and records it. */
ncl_result ncl_ck_race_check(ck *c, uint32_t t, const ncl_task *k, int rank, uint32_t buf, uint64_t lo, uint64_t hi,
                             int write);
/* The counter (sender, id) held by `owner`, created on first use; NULL when out of memory. */
counter *ncl_ck_ctr_get(ck *c, int owner, int sender, uint32_t id);
/* Appends a record with clock snapshot s to x's FIFO (s's refs are the caller's); 0 when out of memory. */
int ncl_ck_ctr_push(ck *c, counter *x, snap *s);
void ncl_ck_ready_push(ck *c, uint32_t t);
/* NOTIFY_RECORD and NOTIFY_WAIT (which sets *blocked when the counter is short). */
ncl_result ncl_ck_record(ck *c, uint32_t t, const ncl_task *k);
ncl_result ncl_ck_wait(ck *c, uint32_t t, const ncl_task *k, int *blocked);

/* ---- tasks (ck_run.c) ---- */

/* Runs thread t until it blocks or finishes: fetch, validate, execute each task. */
ncl_result ncl_ck_run_thread(ck *c, uint32_t t);

/* ---- verdicts (ck_verdict.c) ---- */

/* No queue can run and some never finished: names the wait that never ends, or the cycle. */
ncl_result ncl_ck_deadlock(ck *c);
/* After a complete run: records nobody consumed, peers' writes no wait covers, and a final
 * state that is not the collective's result. */
ncl_result ncl_ck_check_leftovers(ck *c);
ncl_result ncl_ck_check_writes_covered(ck *c);
ncl_result ncl_ck_check_result(ck *c);

#endif
