/* ck_order.c — the checker's happens-before: vector clocks, notify counters that carry them, and per-buffer access maps that find races. */
#include "ck.h"

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
void ncl_ck_touch(ck *c, uint32_t t)
{
    thread *th = &c->th[t];
    if (th->released) {
        vc_of(c, t)[t]++;
        th->released = 0;
        drop_cache(c, th);
    }
}

int ncl_ck_am_init(ck *c, amap *m, uint64_t bytes)
{
    if (!ncl_ck_grow(c, (void **)&m->b, &m->capb, 0, 1, sizeof *m->b) ||
        !ncl_ck_grow(c, (void **)&m->first, &m->capf, 0, 1, sizeof *m->first))
        return 0;
    ablock *b = ck_alloc(c, sizeof *b);
    if (!b)
        return 0;
    b->n = 1;
    b->s[0].lo = 0;
    b->s[0].hi = bytes;
    b->s[0].head = NULL;
    m->b[0] = b;
    m->first[0] = 0;
    m->nb = 1;
    return 1;
}

void ncl_ck_am_destroy(ck *c, amap *m)
{
    for (size_t k = 0; k < m->nb; k++)
        ck_free(c, m->b[k]);
    ck_free(c, m->b);
    ck_free(c, m->first);
}

/* Inserts s right after *p; *p keeps naming the same segment (which may move to a new block). */
static int am_insert_after(ck *c, amap *m, apos *p, const aseg *s)
{
    ablock *b = m->b[p->k];
    if (b->n == ABLK) {
        if (!ncl_ck_grow(c, (void **)&m->b, &m->capb, m->nb, m->nb + 1, sizeof *m->b) ||
            !ncl_ck_grow(c, (void **)&m->first, &m->capf, m->nb, m->nb + 1, sizeof *m->first))
            return 0;
        ablock *nb = ck_alloc(c, sizeof *nb);
        if (!nb)
            return 0;
        const uint32_t half = ABLK / 2;
        memcpy(nb->s, b->s + half, (ABLK - half) * sizeof(aseg));
        nb->n = ABLK - half;
        b->n = half;
        memmove(&m->b[p->k + 2], &m->b[p->k + 1], (m->nb - p->k - 1) * sizeof *m->b);
        memmove(&m->first[p->k + 2], &m->first[p->k + 1], (m->nb - p->k - 1) * sizeof *m->first);
        m->b[p->k + 1] = nb;
        m->first[p->k + 1] = nb->s[0].lo;
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
        memmove(&m->first[p.k], &m->first[p.k + 1], (m->nb - p.k - 1) * sizeof *m->first);
        m->nb--;
    } else if (p.i == 0) {
        m->first[p.k] = b->s[0].lo;
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
uint64_t ncl_ck_am_extent(const amap *m, apos p, uint64_t hi, const anode *e)
{
    uint64_t end = am_at(m, p)->hi;
    while (am_next(m, &p) && am_at(m, p)->lo < hi && list_has(am_at(m, p)->head, e))
        end = am_at(m, p)->hi;
    return end;
}

/* Records an access of thread t to [lo, hi) of (rank, buf) after checking it against the live
 * ones: a conflicting access not ordered before it is a race; one ordered before it that it
 * makes redundant (any write, or a read after a read) is dropped. */
ncl_result ncl_ck_race_check(ck *c, uint32_t t, const ncl_task *k, int rank, uint32_t buf, uint64_t lo,
                      uint64_t hi, int write)
{
    mem *mm = mem_of(c, rank, buf);
    amap *m = &mm->acc;
    const uint32_t *vc = vc_of(c, t);
    if ((lo > 0 && !am_split(c, m, lo)) || (hi < mm->bytes && !am_split(c, m, hi)))
        return ncl_ck_oom(c);
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
                ncl_ck_task_name(c, e->thread, e->step, e->kind, old, sizeof old);
                return ncl_ck_fail(c, NCL_ERR_SCHEDULE,
                            "race on rank %d %s [%llu,%llu): %s by %s while rank %d q%u step %u may %s it (%s)", rank,
                            ncl_buf_name(buf), (unsigned long long)s->lo, (unsigned long long)ncl_ck_am_extent(m, p, hi, e),
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
            return ncl_ck_oom(c);
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
counter *ncl_ck_ctr_get(ck *c, int owner, int sender, uint32_t id)
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

void ncl_ck_ready_push(ck *c, uint32_t t)
{
    c->ready[(c->rhead + c->rcount) % c->nthreads] = t;
    c->rcount++;
}

int ncl_ck_ctr_push(ck *c, counter *x, snap *s)
{
    pend *p = pool_get(c, &c->pends);
    if (!p)
        return 0;
    p->next = NULL;
    p->s = s;
    if (x->tail)
        x->tail->next = p;
    else
        x->head = p;
    x->tail = p;
    x->count++;
    return 1;
}

ncl_result ncl_ck_record(ck *c, uint32_t t, const ncl_task *k)
{
    thread *th = &c->th[t];
    counter *x = ncl_ck_ctr_get(c, k->peer, t_rank(c, t), k->notify);
    if (!x)
        return ncl_ck_oom(c);
    if (!th->cached) {
        snap *s = pool_get(c, &c->snaps);
        if (!s)
            return ncl_ck_oom(c);
        memcpy(s->vc, vc_of(c, t), c->nthreads * sizeof(uint32_t));
        s->refs = 1;
        th->cached = s;
    }
    if (!ncl_ck_ctr_push(c, x, th->cached))
        return ncl_ck_oom(c);
    th->cached->refs++;
    th->released = 1;
    while (x->waiters) {
        uint32_t w = x->waiters - 1;
        x->waiters = c->th[w].next_waiter;
        c->th[w].state = TH_HAVE;
        ncl_ck_ready_push(c, w);
    }
    return NCL_SUCCESS;
}

/* Returns NCL_SUCCESS and sets *blocked when the counter is short. */
ncl_result ncl_ck_wait(ck *c, uint32_t t, const ncl_task *k, int *blocked)
{
    thread *th = &c->th[t];
    counter *x = ncl_ck_ctr_get(c, t_rank(c, t), k->peer, k->notify);
    if (!x)
        return ncl_ck_oom(c);
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
