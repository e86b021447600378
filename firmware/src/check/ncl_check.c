/* ncl_check.c — the schedule checker's entry point: validates the request, sets up every rank's memory, runs all task streams in one deterministic interleaving, then asks for the verdict. */
#include "ck.h"

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
        case NCL_COLL_ALLTOALL:
            send = recv = in_elems = P * cnt;
            if (p->a2a_counts) { /* alltoallv: our row out, our column in (equal in place: symmetric) */
                send = in_elems = recv = 0;
                for (uint64_t j = 0; j < P; j++) {
                    send += p->a2a_counts[(uint64_t)r * P + j];
                    recv += p->a2a_counts[j * P + (uint64_t)r];
                }
                in_elems = send;
                if (p->inplace && recv != send)
                    return ncl_ck_fail(c, NCL_ERR_INVALID_ARGUMENT,
                                       "schedule checker: alltoallv in place with rank %d sending %llu and receiving "
                                       "%llu elements (the matrix must be symmetric)", r, (unsigned long long)send,
                                       (unsigned long long)recv);
            }
            break;
        default:
            break;
        }
        if (p->inplace)
            send = 0;
        uint64_t sizes[NCL_BUF_COUNT] = {send * es, recv * es, ncl_ck_zone_end(c)};
        for (uint32_t b = 0; b < NCL_BUF_COUNT; b++) {
            mem *m = mem_of(c, r, b);
            m->bytes = sizes[b];
            seg s;
            memset(&s, 0, sizeof s);
            s.hi = sizes[b] / es;
            if (s.hi && !ncl_ck_sv_push(c, &m->segs, &s))
                return ncl_ck_oom(c);
            if (sizes[b] && !ncl_ck_am_init(c, &m->acc, sizes[b]))
                return ncl_ck_oom(c);
        }
        if (in_elems == 0 || (p->coll == NCL_COLL_BROADCAST && r != p->root))
            continue;
        ncl_ref in = ncl_plan_input(p, r);
        const mem *m = mem_of(c, r, in.buf);
        if (in.buf >= NCL_BUF_COUNT || in.off % es || in.off / es + in_elems > m->bytes / es)
            return ncl_ck_fail(c, NCL_ERR_INTERNAL, "schedule checker: rank %d input outside its buffer", r);
        segvec *v = &c->tmp[0];
        seg s;
        memset(&s, 0, sizeof s);
        s.lo = in.off / es;
        s.hi = s.lo + in_elems;
        s.defined = 1;
        set_one(s.set, r);
        v->n = 0;
        if (!ncl_ck_sv_push(c, v, &s) || !ncl_ck_sv_replace(c, &mem_of(c, r, in.buf)->segs, s.lo, s.hi, v))
            return ncl_ck_oom(c);
    }
    return NCL_SUCCESS;
}

static ncl_result validate_args(ck *c, const ncl_plan *p, const ncl_check_source *src)
{
    if ((unsigned)p->coll >= NCL_COLL_COUNT)
        return ncl_ck_fail(c, NCL_ERR_INVALID_ARGUMENT, "schedule checker: unknown collective %u", p->coll);
    if (p->nranks < 1)
        return ncl_ck_fail(c, NCL_ERR_INVALID_ARGUMENT, "schedule checker: %d ranks", p->nranks);
    if (p->nranks > NCL_CHECK_MAX_RANKS)
        return ncl_ck_fail(c, NCL_ERR_UNSUPPORTED, "schedule checker: %d ranks, it checks at most %d", p->nranks,
                    NCL_CHECK_MAX_RANKS);
    if (p->esize == 0 || (unsigned)p->dtype >= NCL_DTYPE_COUNT)
        return ncl_ck_fail(c, NCL_ERR_INVALID_ARGUMENT, "schedule checker: bad dtype %u / element size %u", p->dtype,
                    p->esize);
    if ((p->coll == NCL_COLL_BROADCAST || p->coll == NCL_COLL_REDUCE) && (p->root < 0 || p->root >= p->nranks))
        return ncl_ck_fail(c, NCL_ERR_INVALID_ARGUMENT, "schedule checker: root %d out of range (%d ranks)", p->root,
                    p->nranks);
    if (p->count > UINT64_MAX / p->esize / (uint64_t)p->nranks)
        return ncl_ck_fail(c, NCL_ERR_INVALID_ARGUMENT, "schedule checker: count %llu overflows",
                    (unsigned long long)p->count);
    uint32_t queues;
    if (src) {
        if (!src->next)
            return ncl_ck_fail(c, NCL_ERR_INVALID_ARGUMENT, "schedule checker: source without a next function");
        queues = src->queues;
    } else {
        c->algo = ncl_algo_find((ncl_coll)p->coll, (ncl_algo)p->algo);
        if (!c->algo)
            return ncl_ck_fail(c, NCL_ERR_INVALID_ARGUMENT, "schedule checker: no algorithm %u for collective %u", p->algo,
                        p->coll);
        queues = p->queues;
    }
    if (queues < 1)
        return ncl_ck_fail(c, NCL_ERR_INVALID_ARGUMENT, "schedule checker: 0 queues");
    if (p->zone_channels && (p->zone_channels > NCL_MAX_QUEUES || p->zone_bytes == 0 ||
                             p->zone_base < p->scratch_bytes ||
                             p->zone_bytes > (UINT64_MAX - p->zone_base) / (2ull * p->zone_channels)))
        return ncl_ck_fail(c, NCL_ERR_INVALID_ARGUMENT, "schedule checker: landing zones of %llu bytes for %u channels "
                           "at %llu do not fit (scratch below them: %llu bytes)",
                           (unsigned long long)p->zone_bytes, p->zone_channels, (unsigned long long)p->zone_base,
                           (unsigned long long)p->scratch_bytes);
    if (queues > NCL_MAX_QUEUES)
        return ncl_ck_fail(c, NCL_ERR_UNSUPPORTED, "schedule checker: %u queues, at most %u", queues, NCL_MAX_QUEUES);
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
        return ncl_ck_oom(c);
    memset(c->mem, 0, nmem * sizeof *c->mem);
    if (!(c->th = ck_alloc(c, T * sizeof *c->th)) || !(c->vc = ck_alloc(c, (size_t)T * T * sizeof *c->vc)) ||
        !(c->ready = ck_alloc(c, T * sizeof *c->ready)))
        return ncl_ck_oom(c);
    memset(c->th, 0, T * sizeof *c->th);
    memset(c->vc, 0, (size_t)T * T * sizeof *c->vc);
    for (uint32_t t = 0; t < T; t++) {
        vc_of(c, t)[t] = 1;
        ncl_ck_ready_push(c, t);
    }
    for (int r = 0; r < c->nranks; r++)
        c->all[r / 64] |= 1ull << (r % 64);
    if ((rc = setup_memory(c)) != NCL_SUCCESS || (rc = ncl_ck_zone_setup(c)) != NCL_SUCCESS)
        return rc;
    while (c->rcount) {
        uint32_t t = c->ready[c->rhead];
        c->rhead = (c->rhead + 1) % T;
        c->rcount--;
        if ((rc = ncl_ck_run_thread(c, t)) != NCL_SUCCESS)
            return rc;
    }
    for (uint32_t t = 0; t < T; t++)
        if (c->th[t].state != TH_DONE)
            return ncl_ck_deadlock(c);
    if ((rc = ncl_ck_check_leftovers(c)) != NCL_SUCCESS || (rc = ncl_ck_zone_balance(c)) != NCL_SUCCESS || (rc = ncl_ck_check_writes_covered(c)) != NCL_SUCCESS ||
        (rc = ncl_ck_check_result(c)) != NCL_SUCCESS)
        return rc;
    return NCL_SUCCESS;
}

static void cleanup(ck *c)
{
    if (c->mem) {
        for (size_t i = 0; i < (size_t)c->nranks * NCL_BUF_COUNT; i++) {
            ck_free(c, c->mem[i].segs.v);
            ncl_ck_am_destroy(c, &c->mem[i].acc);
        }
    }
    for (size_t i = 0; i < sizeof c->tmp / sizeof c->tmp[0]; i++)
        ck_free(c, c->tmp[i].v);
    ncl_ck_pool_destroy(c, &c->snaps);
    ncl_ck_pool_destroy(c, &c->pends);
    ncl_ck_pool_destroy(c, &c->anodes);
    ck_free(c, c->ctr);
    ck_free(c, c->th);
    ck_free(c, c->vc);
    ck_free(c, c->mem);
    ck_free(c, c->ready);
    ck_free(c, c->zone_taken);
    ck_free(c, c->zone_done);
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
        return ncl_ck_fail(&c, NCL_ERR_INVALID_ARGUMENT, "schedule checker: NULL plan or allocator");
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
    ncl_ck_pool_init(&c.snaps, sizeof(snap) + c.nthreads * sizeof(uint32_t));
    ncl_ck_pool_init(&c.pends, sizeof(pend));
    ncl_ck_pool_init(&c.anodes, sizeof(anode));
    rc = run(&c);
    cleanup(&c);
    if (rc == NCL_SUCCESS && msg && msg_len)
        msg[0] = '\0';
    return rc;
}
