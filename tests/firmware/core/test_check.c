/* test_check.c — the schedule checker accepts correct hand-written schedules and rejects each broken rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "ncl/ncl_check.h"
#include "ncl/ncl_hal.h"
#include "ncl_algo.h"

/* ---- a materialised schedule: one task array per (rank, queue) ---- */

#define MAXR 16
#define MAXQ 4

typedef struct sched {
    ncl_plan plan;
    uint32_t queues;
    ncl_task *t[MAXR][MAXQ];
    size_t n[MAXR][MAXQ], cap[MAXR][MAXQ];
} sched;

static int sched_next(void *ud, int rank, uint32_t queue, ncl_gen *gen, ncl_task *out)
{
    sched *s = ud;
    if (gen->i >= s->n[rank][queue])
        return 0;
    *out = s->t[rank][queue][gen->i++];
    return 1;
}

static ncl_task *push(sched *s, int r, uint32_t q)
{
    assert_true(r < MAXR && q < MAXQ);
    if (q >= s->queues)
        s->queues = q + 1;
    if (s->n[r][q] == s->cap[r][q]) {
        s->cap[r][q] = s->cap[r][q] ? 2 * s->cap[r][q] : 16;
        s->t[r][q] = realloc(s->t[r][q], s->cap[r][q] * sizeof(ncl_task));
        assert_non_null(s->t[r][q]);
    }
    ncl_task *k = &s->t[r][q][s->n[r][q]++];
    memset(k, 0, sizeof *k);
    return k;
}

static void sched_free(sched *s)
{
    for (int r = 0; r < MAXR; r++)
        for (int q = 0; q < MAXQ; q++)
            free(s->t[r][q]);
    memset(s, 0, sizeof *s);
}

static void sched_init(sched *s, ncl_coll coll, int nranks, uint64_t count, int avg, int inplace, int root,
                       uint64_t scratch)
{
    memset(s, 0, sizeof *s);
    s->queues = 1;
    s->plan.coll = (uint8_t)coll;
    s->plan.algo = NCL_ALGO_RING;
    s->plan.dtype = NCL_FLOAT32;
    s->plan.op = NCL_SUM;
    s->plan.avg = (uint8_t)avg;
    s->plan.inplace = (uint8_t)inplace;
    s->plan.nranks = nranks;
    s->plan.root = root;
    s->plan.count = count;
    s->plan.esize = 4;
    s->plan.queues = 1;
    s->plan.slice_elems = 1u << 20;
    s->plan.scratch_bytes = scratch;
    s->plan.inline_reduce = 1; /* a backend that reduces every dtype inline, at any alignment */
    s->plan.inline_align = 1;
}

static ncl_ref SEND(uint64_t off) { return ncl_ref_make(NCL_BUF_SEND, off); }
static ncl_ref RECV(uint64_t off) { return ncl_ref_make(NCL_BUF_RECV, off); }
static ncl_ref SCR(uint64_t off) { return ncl_ref_make(NCL_BUF_SCRATCH, off); }

static void copy_(sched *s, int r, uint32_t q, ncl_ref src, ncl_ref dst, uint64_t bytes, uint32_t step)
{
    ncl_task_copy(push(s, r, q), src, dst, bytes, step);
}
static void write_(sched *s, int r, uint32_t q, int peer, ncl_ref src, ncl_ref dst, uint64_t bytes, uint32_t step)
{
    ncl_task_write(push(s, r, q), peer, src, dst, bytes, step);
}
static void wred_(sched *s, int r, uint32_t q, int peer, ncl_ref src, ncl_ref dst, uint64_t bytes, uint32_t step)
{
    ncl_task_write_reduce(push(s, r, q), &s->plan, peer, src, dst, bytes, step);
}
static void lred_(sched *s, int r, uint32_t q, ncl_ref src, ncl_ref dst, uint64_t bytes, uint32_t step)
{
    ncl_task_reduce(push(s, r, q), &s->plan, src, dst, bytes, step);
}
static void div_(sched *s, int r, uint32_t q, ncl_ref dst, uint64_t bytes, uint32_t step)
{
    ncl_task_div(push(s, r, q), &s->plan, dst, bytes, step);
}
static void rec_(sched *s, int r, uint32_t q, int peer, uint32_t id, uint32_t step)
{
    ncl_task_record(push(s, r, q), peer, id, step);
}
static void wait_(sched *s, int r, uint32_t q, int peer, uint32_t id, uint32_t count, uint32_t step)
{
    ncl_task_wait(push(s, r, q), peer, id, count, step);
}

/* ---- an allocator that counts and can fail its Nth call ---- */

typedef struct talloc {
    long calls, allocs, frees, fail_at;
} talloc;

static void *t_alloc(void *ud, size_t n)
{
    talloc *a = ud;
    a->calls++;
    if (a->fail_at && a->calls >= a->fail_at)
        return NULL;
    a->allocs++;
    return malloc(n ? n : 1);
}

static void t_free(void *ud, void *p)
{
    talloc *a = ud;
    a->frees++;
    free(p);
}

static char msg[1024];

static ncl_result check_src(const ncl_plan *plan, const ncl_check_source *src)
{
    talloc a = {0, 0, 0, 0};
    ncl_result rc = ncl_check(plan, src, t_alloc, t_free, &a, msg, sizeof msg);
    assert_int_equal(a.allocs, a.frees);
    return rc;
}

static ncl_result check(sched *s)
{
    ncl_check_source src = {sched_next, s, s->queues};
    return check_src(&s->plan, &src);
}

static void expect_ok(sched *s)
{
    ncl_result rc = check(s);
    if (rc != NCL_SUCCESS)
        print_error("unexpected rejection: %s\n", msg);
    assert_int_equal(rc, NCL_SUCCESS);
    assert_string_equal(msg, "");
    sched_free(s);
}

static void expect_reject(sched *s, const char *needle)
{
    ncl_result rc = check(s);
    if (rc != NCL_ERR_SCHEDULE || !strstr(msg, needle))
        print_error("expected NCL_ERR_SCHEDULE with \"%s\", got %d: %s\n", needle, (int)rc, msg);
    assert_int_equal(rc, NCL_ERR_SCHEDULE);
    assert_non_null(strstr(msg, needle));
    sched_free(s);
}

/* ---- a correct 2-rank allreduce of 4 fp32 (chunk k = elements [2k, 2k+2)), and its mutations ---- */

enum {
    AR_AVG = 1 << 0,
    AR_INPLACE = 1 << 1,
    AR_DIV_TWICE = 1 << 2,
    AR_NO_DIV = 1 << 3,
    AR_EARLY_READY = 1 << 4,   /* rank 1 says READY before its pre-copy */
    AR_NO_DATA_WAIT = 1 << 5,  /* rank 0 reads its chunk without waiting for rank 1's DATA */
    AR_EXTRA_RECORD = 1 << 6,  /* rank 1 records DATA once more at the end */
    AR_REDUCE_TWICE = 1 << 7,  /* rank 0 write-reduces its contribution twice */
    AR_WRITE_NOT_REDUCE = 1 << 8, /* rank 0 overwrites instead of reducing */
    AR_SHIFTED = 1 << 9,       /* rank 0 reduces its chunk 0 into the peer's chunk 1 */
    AR_NO_READY_WAIT = 1 << 10, /* rank 0 writes without waiting for rank 1's READY */
};

static void build_ar2(sched *s, unsigned f)
{
    const uint32_t READY = NCL_NOTIFY_READY(0), DATA = NCL_NOTIFY_DATA(0);
    sched_init(s, NCL_COLL_ALLREDUCE, 2, 4, (f & AR_AVG) != 0, (f & AR_INPLACE) != 0, 0, 0);
    for (int r = 0; r < 2; r++) {
        int p = 1 - r;
        ncl_ref in = (f & AR_INPLACE) ? RECV(0) : SEND(0);
        int early = r == 1 && (f & AR_EARLY_READY);
        if (early)
            rec_(s, r, 0, p, READY, 0);
        if (!(f & AR_INPLACE))
            copy_(s, r, 0, SEND(0), RECV(0), 16, 0);
        if (!early)
            rec_(s, r, 0, p, READY, 0);
        if (!(r == 0 && (f & AR_NO_READY_WAIT)))
            wait_(s, r, 0, p, READY, 1, 0);
        uint64_t src_off = (r == 0 && (f & AR_SHIFTED)) ? 0 : (uint64_t)p * 8;
        if (r == 0 && (f & AR_WRITE_NOT_REDUCE))
            write_(s, r, 0, p, ncl_ref_add(in, src_off), RECV((uint64_t)p * 8), 8, 1);
        else
            wred_(s, r, 0, p, ncl_ref_add(in, src_off), RECV((uint64_t)p * 8), 8, 1);
        if (r == 0 && (f & AR_REDUCE_TWICE))
            wred_(s, r, 0, p, ncl_ref_add(in, src_off), RECV((uint64_t)p * 8), 8, 1);
        rec_(s, r, 0, p, DATA, 1);
        if (!(r == 0 && (f & AR_NO_DATA_WAIT)))
            wait_(s, r, 0, p, DATA, 1, 1);
        if ((f & AR_AVG) && !(f & AR_NO_DIV)) {
            div_(s, r, 0, RECV((uint64_t)r * 8), 8, 2);
            if (f & AR_DIV_TWICE)
                div_(s, r, 0, RECV((uint64_t)r * 8), 8, 2);
        }
        write_(s, r, 0, p, RECV((uint64_t)r * 8), RECV((uint64_t)r * 8), 8, 2);
        rec_(s, r, 0, p, DATA, 2);
        wait_(s, r, 0, p, DATA, 1, 2);
        if (r == 1 && (f & AR_EXTRA_RECORD))
            rec_(s, r, 0, p, DATA, 3);
    }
}

/* ---- a ring allreduce like the engine's (reduce-scatter + allgather), n ranks, q channels,
 * `rounds` rounds of `len` elements per chunk ---- */

static void build_ring_ar(sched *s, int n, uint32_t Q, uint64_t rounds, uint64_t len, int avg, int inplace)
{
    const uint64_t chunk = rounds * len, portion = chunk * (uint64_t)n, es = 4;
    sched_init(s, NCL_COLL_ALLREDUCE, n, portion * Q, avg, inplace, 0, 0);
    s->plan.queues = Q;
    for (int r = 0; r < n; r++) {
        int next = (r + 1) % n, prev = (r + n - 1) % n;
        ncl_ref in = inplace ? RECV(0) : SEND(0);
        for (uint32_t q = 0; q < Q; q++) {
            uint64_t base = q * portion;
#define CH(k, i) ((base + (uint64_t)ncl_mod((k), n) * chunk + (i) * len) * es)
            if (!inplace)
                for (int k = 0; k < n; k++)
                    if (k != ncl_mod(r - 1, n))
                        copy_(s, r, q, SEND(CH(k, 0)), RECV(CH(k, 0)), chunk * es, 0);
            rec_(s, r, q, prev, NCL_NOTIFY_READY(q), 0);
            wait_(s, r, q, next, NCL_NOTIFY_READY(q), 1, 0);
            for (uint64_t i = 0; i < rounds; i++) {
                uint32_t st = (uint32_t)(i * 2 * (uint64_t)(n - 1));
                for (int j = 0; j < n - 1; j++) {
                    ncl_ref src = j == 0 ? ncl_ref_add(in, CH(r - 1 - j, i)) : RECV(CH(r - 1 - j, i));
                    wred_(s, r, q, next, src, RECV(CH(r - 1 - j, i)), len * es, st + (uint32_t)j);
                    rec_(s, r, q, next, NCL_NOTIFY_DATA(q), st + (uint32_t)j);
                    wait_(s, r, q, prev, NCL_NOTIFY_DATA(q), 1, st + (uint32_t)j);
                }
                if (avg)
                    div_(s, r, q, RECV(CH(r, i)), len * es, st + (uint32_t)n - 1);
                for (int j = 0; j < n - 1; j++) {
                    uint32_t sj = st + (uint32_t)(n - 1 + j);
                    write_(s, r, q, next, RECV(CH(r - j, i)), RECV(CH(r - j, i)), len * es, sj);
                    rec_(s, r, q, next, NCL_NOTIFY_DATA(q), sj);
                    wait_(s, r, q, prev, NCL_NOTIFY_DATA(q), 1, sj);
                }
            }
#undef CH
        }
    }
}

/* ---- correct schedules ---- */

static void test_allreduce2_ok(void **state)
{
    (void)state;
    sched s;
    build_ar2(&s, 0);
    expect_ok(&s);
    build_ar2(&s, AR_AVG);
    expect_ok(&s);
    build_ar2(&s, AR_INPLACE);
    expect_ok(&s);
    build_ar2(&s, AR_INPLACE | AR_AVG);
    expect_ok(&s);
}

static void test_ring_allreduce_ok(void **state)
{
    (void)state;
    sched s;
    for (int n = 1; n <= 4; n++) {
        if (n == 1) {
            /* one rank: a plain copy (or nothing in place) */
            sched_init(&s, NCL_COLL_ALLREDUCE, 1, 8, 0, 0, 0, 0);
            copy_(&s, 0, 0, SEND(0), RECV(0), 32, 0);
            expect_ok(&s);
            continue;
        }
        for (int flags = 0; flags < 4; flags++) {
            build_ring_ar(&s, n, 2, 3, 2, flags & 1, (flags >> 1) & 1);
            expect_ok(&s);
        }
    }
}

/* 16 ranks x ~1000 tasks each: must stay fast (the checker runs on every debug launch). */
static void test_ring_allreduce_16_ranks(void **state)
{
    (void)state;
    sched s;
    build_ring_ar(&s, 16, 1, 11, 3, 1, 0);
    assert_true(s.n[0][0] >= 1000);
    expect_ok(&s);
    build_ring_ar(&s, 16, 4, 3, 2, 0, 0);
    expect_ok(&s);
}

static void test_other_collectives_ok(void **state)
{
    (void)state;
    sched s;
    const uint32_t READY = 1, DATA = 0;

    /* broadcast along a chain 1 -> 2 -> 0 (root 1), 4 elements */
    for (int inplace = 0; inplace < 2; inplace++) {
        sched_init(&s, NCL_COLL_BROADCAST, 3, 4, 0, inplace, 1, 0);
        if (!inplace)
            copy_(&s, 1, 0, SEND(0), RECV(0), 16, 0);
        wait_(&s, 1, 0, 2, READY, 1, 0);
        write_(&s, 1, 0, 2, inplace ? RECV(0) : SEND(0), RECV(0), 16, 0);
        rec_(&s, 1, 0, 2, DATA, 0);
        rec_(&s, 2, 0, 1, READY, 0);
        wait_(&s, 2, 0, 1, DATA, 1, 0);
        wait_(&s, 2, 0, 0, READY, 1, 1);
        write_(&s, 2, 0, 0, RECV(0), RECV(0), 16, 1);
        rec_(&s, 2, 0, 0, DATA, 1);
        rec_(&s, 0, 0, 2, READY, 1);
        wait_(&s, 0, 0, 2, DATA, 1, 1);
        expect_ok(&s);
    }

    /* allgather, 2 ranks, 3 elements each */
    for (int inplace = 0; inplace < 2; inplace++) {
        sched_init(&s, NCL_COLL_ALLGATHER, 2, 3, 0, inplace, 0, 0);
        for (int r = 0; r < 2; r++) {
            int p = 1 - r;
            ncl_ref mine = RECV((uint64_t)r * 12);
            if (!inplace)
                copy_(&s, r, 0, SEND(0), mine, 12, 0);
            rec_(&s, r, 0, p, READY, 0);
            wait_(&s, r, 0, p, READY, 1, 0);
            write_(&s, r, 0, p, inplace ? mine : SEND(0), mine, 12, 1);
            rec_(&s, r, 0, p, DATA, 1);
            wait_(&s, r, 0, p, DATA, 1, 1);
        }
        expect_ok(&s);
    }

    /* reduce_scatter, 2 ranks, recvcount 2, with avg */
    for (int inplace = 0; inplace < 2; inplace++) {
        sched_init(&s, NCL_COLL_REDUCE_SCATTER, 2, 2, 1, inplace, 0, 0);
        for (int r = 0; r < 2; r++) {
            int p = 1 - r;
            ncl_ref out = inplace ? RECV((uint64_t)r * 8) : RECV(0);
            ncl_ref peer_out = inplace ? RECV((uint64_t)p * 8) : RECV(0);
            ncl_ref in = inplace ? RECV(0) : SEND(0);
            if (!inplace)
                copy_(&s, r, 0, SEND((uint64_t)r * 8), out, 8, 0);
            rec_(&s, r, 0, p, READY, 0);
            wait_(&s, r, 0, p, READY, 1, 0);
            wred_(&s, r, 0, p, ncl_ref_add(in, (uint64_t)p * 8), peer_out, 8, 1);
            rec_(&s, r, 0, p, DATA, 1);
            wait_(&s, r, 0, p, DATA, 1, 1);
            div_(&s, r, 0, out, 8, 2);
        }
        expect_ok(&s);
    }

    /* reduce to root 0 through scratch: rank 1 writes into root's scratch, root reduces locally */
    sched_init(&s, NCL_COLL_REDUCE, 2, 4, 0, 0, 0, 64);
    copy_(&s, 0, 0, SEND(0), RECV(0), 16, 0);
    rec_(&s, 0, 0, 1, READY, 0);
    wait_(&s, 0, 0, 1, DATA, 1, 1);
    lred_(&s, 0, 0, SCR(16), RECV(0), 16, 1);
    wait_(&s, 1, 0, 0, READY, 1, 0);
    write_(&s, 1, 0, 0, SEND(0), SCR(16), 16, 1);
    rec_(&s, 1, 0, 0, DATA, 1);
    expect_ok(&s);
}

/* two queues of one rank ordered by notifies on self; zero-byte tasks are ignored */
static void test_cross_queue_ok(void **state)
{
    (void)state;
    sched s;
    sched_init(&s, NCL_COLL_ALLREDUCE, 1, 4, 0, 0, 0, 32);
    copy_(&s, 0, 0, SEND(0), SCR(0), 16, 0);
    rec_(&s, 0, 0, 0, 7, 0);
    wait_(&s, 0, 1, 0, 7, 1, 1);
    copy_(&s, 0, 1, SCR(0), RECV(0), 16, 1);
    write_(&s, 0, 1, 0, SEND(0), RECV(0), 0, 1); /* zero bytes: ignored, even to self */
    expect_ok(&s);
}

/* many small slices written out of order, then everything overwritten at once: the checker's
 * interval maps split into many pieces and collapse again */
static void build_slices(sched *s, uint64_t n)
{
    sched_init(s, NCL_COLL_ALLREDUCE, 1, n, 0, 0, 0, n * 4);
    for (uint64_t i = n; i-- > 0;)
        copy_(s, 0, 0, SEND(((i * 7) % n) * 4), RECV(((i * 7) % n) * 4), 4, (uint32_t)i);
    copy_(s, 0, 0, RECV(0), SCR(0), n * 4, 1);
    copy_(s, 0, 0, SCR(0), RECV(0), n * 4, 2);
    /* once more slice by slice through a second queue, ordered by a notify on self */
    rec_(s, 0, 0, 0, 3, 3);
    wait_(s, 0, 1, 0, 3, 1, 3);
    for (uint64_t i = 0; i < n; i++)
        copy_(s, 0, 1, SEND(((i * 3) % n) * 4), RECV(((i * 3) % n) * 4), 4, 4);
}

static void test_many_slices(void **state)
{
    (void)state;
    sched s;
    build_slices(&s, 200);
    expect_ok(&s);
}

/* src == NULL checks the plan's own algorithm */
static void test_plan_algorithm(void **state)
{
    (void)state;
    ncl_plan p;
    ncl_plan_env env = {0};
    env.slice_bytes = 8;
    env.channels = 2;
    env.max_queues = NCL_MAX_QUEUES;
    env.link_alpha_ns = 1000;
    env.link_gbps = 20;
    assert_int_equal(ncl_plan_make(&p, NCL_COLL_ALLREDUCE, NCL_ALGO_RING, 3, 0, 0, 10, NCL_FLOAT32, NCL_AVG, 0,
                                   &env),
                     NCL_SUCCESS);
    ncl_result rc = check_src(&p, NULL);
    if (rc != NCL_SUCCESS)
        print_error("%s\n", msg);
    assert_int_equal(rc, NCL_SUCCESS);
}

/* The first step in pieces (ncl_lead_piece): pieces tile the chunk, start at one alpha of memory
 * traffic rounded to 4 KiB, grow by (M - 3B) / 2B, a short rest joins the last; none without a
 * memory bandwidth, with memory under 7x the link, or for a chunk under 2 first pieces. */
static void test_lead_piece(void **state)
{
    (void)state;
    ncl_plan p;
    memset(&p, 0, sizeof p);
    p.esize = 4;
    p.link_alpha_ns = 100;
    p.link_gbps = 20;
    p.mem_gbps = 400; /* first: 100 ns x 200 B/ns = 20000 B -> 20480 B = 5120 floats; r = 340/40 = 8 */
    const uint64_t lens[2] = {5120 + 40960 + 9000, 5120 + 40960 + 3000};
    const uint64_t want[2][3] = {{5120, 40960, 9000}, {5120, 43960, 0}};
    uint64_t lo, len = lens[0];
    for (int c = 0; c < 2; c++) {
        uint64_t sum = 0, m;
        for (m = 0; ncl_lead_piece(&p, lens[c], m, &lo) != 0; m++) {
            assert_true(m < 3);
            assert_int_equal(lo, sum);
            assert_int_equal(ncl_lead_piece(&p, lens[c], m, &lo), want[c][m]);
            sum += want[c][m];
        }
        assert_int_equal(m, c == 0 ? 3 : 2);
        assert_int_equal(sum, lens[c]);
    }
    assert_int_equal(ncl_lead_piece(&p, 2 * 5120 - 1, 0, &lo), 2 * 5120 - 1); /* too short: whole */
    assert_int_equal(ncl_lead_piece(&p, 2 * 5120 - 1, 1, &lo), 0);
    assert_int_equal(ncl_lead_piece(&p, 2 * 5120, 1, &lo), 5120);
    p.mem_gbps = 139; /* r = (139 - 60) / 40 = 1 */
    assert_int_equal(ncl_lead_piece(&p, len, 0, &lo), len);
    p.mem_gbps = 0;
    assert_int_equal(ncl_lead_piece(&p, len, 0, &lo), len);
    assert_int_equal(ncl_lead_piece(&p, len, 1, &lo), 0);
}

/* Ring reduce-scatter and out-of-place ring allreduce with their first step in pieces pass the
 * checker: in and out of place, 2 to 5 ranks, inline and staged (prod), one or two channels (fill
 * queues), one round or several. */
static void test_lead_pieces_checked(void **state)
{
    (void)state;
    ncl_plan_env env = {0};
    env.channels = 2;
    env.max_queues = NCL_MAX_QUEUES;
    env.scratch_bytes = 64u << 20;
    env.link_alpha_ns = 100;
    env.link_gbps = 20;
    env.mem_gbps = 400;
    uint16_t inline_ops[NCL_DTYPE_COUNT]; /* prod is not inline: it takes the staged path */
    for (int d = 0; d < NCL_DTYPE_COUNT; d++)
        inline_ops[d] = (uint16_t)(NCL_INLINE_ALL_OPS & ~(1u << NCL_PROD));
    env.inline_ops = inline_ops;
    const uint64_t slices[] = {1u << 30, 96u << 10};
    const ncl_coll colls[] = {NCL_COLL_REDUCE_SCATTER, NCL_COLL_ALLREDUCE};
    for (int co = 0; co < 2; co++)
        for (int n = 2; n <= 5; n++)
            for (int inplace = 0; inplace < 2; inplace++)
                for (int op = 0; op < 2; op++)
                    for (uint32_t ch = 1; ch <= 2; ch++)
                        for (size_t sl = 0; sl < 2; sl++) {
                            ncl_plan p;
                            env.channels = ch;
                            env.slice_bytes = slices[sl];
                            /* chunks of 60000 elements per rank either way */
                            uint64_t count = colls[co] == NCL_COLL_ALLREDUCE ? 60000u * (uint64_t)n : 60000u;
                            assert_int_equal(ncl_plan_make(&p, colls[co], NCL_ALGO_RING, n, 0, 0, count, NCL_FLOAT32,
                                                           op ? NCL_PROD : NCL_SUM, inplace, &env),
                                             NCL_SUCCESS);
                            ncl_result rc = check_src(&p, NULL);
                            if (rc != NCL_SUCCESS)
                                print_error("%s n=%d inplace=%d op=%d channels=%u slice=%llu: %s\n",
                                            ncl_coll_name(colls[co]), n, inplace, op, ch,
                                            (unsigned long long)slices[sl], msg);
                            assert_int_equal(rc, NCL_SUCCESS);
                            if (n == 3 && !inplace && !op && ch == 1 && sl == 0) {
                                /* 60000-element chunks: pieces 5120, 40960, 13920 at step 0, then step 1
                                 * (allreduce: its allgather's writes are plain) */
                                const ncl_algo_desc *d = ncl_algo_find(colls[co], NCL_ALGO_RING);
                                ncl_gen g = {0};
                                ncl_task t;
                                int writes = 0;
                                while (d->next(&p, 0, &g, &t))
                                    writes += t.kind == NCL_TASK_WRITE_REDUCE;
                                assert_int_equal(writes, 4);
                            }
                        }
}

/* ---- deadlocks and notify bookkeeping ---- */

static void test_wait_without_record(void **state)
{
    (void)state;
    sched s;
    sched_init(&s, NCL_COLL_ALLREDUCE, 2, 0, 0, 0, 0, 0);
    wait_(&s, 0, 0, 1, 5, 1, 4);
    rec_(&s, 1, 0, 0, 6, 0); /* the wrong id */
    wait_(&s, 1, 0, 0, 6, 0, 0);
    expect_reject(&s, "rank 0 queue 0 step 4 waits for notify 5 from rank 1, which never records it (rank 1 finished)");

    /* too few records */
    sched_init(&s, NCL_COLL_ALLREDUCE, 2, 0, 0, 0, 0, 0);
    wait_(&s, 0, 0, 1, 5, 2, 0);
    rec_(&s, 1, 0, 0, 5, 0);
    expect_reject(&s, "1 of 2 records arrived");

    /* a chain of waits ends at the rank that finished */
    sched_init(&s, NCL_COLL_ALLREDUCE, 3, 0, 0, 0, 0, 0);
    wait_(&s, 0, 0, 1, 1, 1, 0);
    wait_(&s, 1, 0, 2, 3, 1, 0);
    rec_(&s, 1, 0, 0, 1, 0);
    expect_reject(&s, "rank 1 queue 0 step 0 waits for notify 3 from rank 2, which never records it (rank 2 finished)");

    /* the other queue of the same rank finished */
    sched_init(&s, NCL_COLL_ALLREDUCE, 1, 0, 0, 0, 0, 0);
    wait_(&s, 0, 1, 0, 2, 1, 0);
    rec_(&s, 0, 0, 0, 3, 0);
    wait_(&s, 0, 0, 0, 3, 1, 0);
    expect_reject(&s, "the other queues of rank 0 finished");
}

static void test_cycle(void **state)
{
    (void)state;
    sched s;
    sched_init(&s, NCL_COLL_ALLREDUCE, 2, 0, 0, 0, 0, 0);
    wait_(&s, 0, 0, 1, 0, 1, 3);
    rec_(&s, 0, 0, 1, 0, 3);
    wait_(&s, 1, 0, 0, 0, 1, 2);
    rec_(&s, 1, 0, 0, 0, 2);
    expect_reject(&s, "wait-for cycle: rank 0 (q0, step 3) -> rank 1 (q0, step 2) -> rank 0");

    /* three ranks, the cycle starts behind an unrelated wait */
    sched_init(&s, NCL_COLL_ALLREDUCE, 4, 0, 0, 0, 0, 0);
    wait_(&s, 0, 0, 1, 0, 1, 0);
    wait_(&s, 1, 0, 2, 0, 1, 1);
    wait_(&s, 2, 0, 3, 0, 1, 2);
    wait_(&s, 3, 0, 1, 0, 1, 3);
    expect_reject(&s, "wait-for cycle: rank 1 (q0, step 1) -> rank 2 (q0, step 2) -> rank 3 (q0, step 3) -> rank 1");

    /* entered at rank 2, reported from its smallest member */
    sched_init(&s, NCL_COLL_ALLREDUCE, 3, 0, 0, 0, 0, 0);
    wait_(&s, 0, 0, 2, 0, 1, 0);
    wait_(&s, 2, 0, 1, 0, 1, 2);
    wait_(&s, 1, 0, 2, 0, 1, 1);
    expect_reject(&s, "wait-for cycle: rank 1 (q0, step 1) -> rank 2 (q0, step 2) -> rank 1");

    /* two queues of one rank waiting on each other */
    sched_init(&s, NCL_COLL_ALLREDUCE, 1, 0, 0, 0, 0, 0);
    wait_(&s, 0, 0, 0, 1, 1, 5);
    rec_(&s, 0, 0, 0, 2, 5);
    wait_(&s, 0, 1, 0, 2, 1, 6);
    rec_(&s, 0, 1, 0, 1, 6);
    expect_reject(&s, "wait-for cycle: rank 0 (q0, step 5) -> rank 0 (q1, step 6) -> rank 0");
}

static void test_unconsumed_record(void **state)
{
    (void)state;
    sched s;
    build_ar2(&s, AR_EXTRA_RECORD);
    expect_reject(&s, "rank 1 recorded notify 0 to rank 0 1 more time(s) than it was waited for");
}

/* ---- landing zones ---- */

enum {
    ZN_FRESH = 1 << 0,      /* the zone's first use: no credit due, none waited for */
    ZN_NO_CREDIT_WAIT = 1 << 1, /* a credit is due but the writer does not wait for it */
    ZN_EARLY_CREDIT = 1 << 2,   /* the reader credits the zone before copying out of it */
    ZN_NO_CREDIT = 1 << 3,      /* the reader never credits the zone */
    ZN_OTHER_TURN = 1 << 4,     /* the writer uses the zone of the other turn */
    ZN_WRONG_WRITER = 1 << 5,   /* rank 0 also writes rank 2's zone */
};

/* A 3-rank in-place ring allgather of one fp32 per rank on one channel, whose step 0 lands in the
 * successor's landing zone (scratch 0..64; the odd turn's zone at 64) and step 1 in its recv
 * after a READY. */
static void build_zoned_ag3(sched *s, unsigned f)
{
    sched_init(s, NCL_COLL_ALLGATHER, 3, 1, 0, 1, 0, 0);
    s->plan.zone_bytes = 64;
    s->plan.zone_base = 0;
    s->plan.zone_channels = 1;
    s->plan.zone_state[0] = (f & ZN_FRESH) ? 0 : NCL_ZONE_CREDIT;
    const uint64_t zone = (f & ZN_OTHER_TURN) ? 64 : 0;
    for (int r = 0; r < 3; r++) {
        const int next = (r + 1) % 3, prev = (r + 2) % 3;
        rec_(s, r, 0, prev, NCL_NOTIFY_READY(0), 0);
        if (!(f & (ZN_FRESH | ZN_NO_CREDIT_WAIT)))
            wait_(s, r, 0, next, NCL_NOTIFY_CREDIT(0), 1, 0);
        write_(s, r, 0, next, RECV(4 * (uint64_t)r), SCR(zone), 4, 0);
        if ((f & ZN_WRONG_WRITER) && r == 0)
            write_(s, r, 0, 2, RECV(0), SCR(4), 4, 0);
        rec_(s, r, 0, next, NCL_NOTIFY_DATA(0), 0);
        wait_(s, r, 0, prev, NCL_NOTIFY_DATA(0), 1, 0);
        if (f & ZN_EARLY_CREDIT)
            rec_(s, r, 0, prev, NCL_NOTIFY_CREDIT(0), 0);
        wait_(s, r, 0, next, NCL_NOTIFY_READY(0), 1, 0);
        write_(s, r, 0, next, SCR(zone), RECV(4 * (uint64_t)prev), 4, 1);
        copy_(s, r, 0, SCR(zone), RECV(4 * (uint64_t)prev), 4, 1);
        rec_(s, r, 0, next, NCL_NOTIFY_DATA(0), 1);
        if (!(f & (ZN_EARLY_CREDIT | ZN_NO_CREDIT)))
            rec_(s, r, 0, prev, NCL_NOTIFY_CREDIT(0), 0);
        wait_(s, r, 0, prev, NCL_NOTIFY_DATA(0), 1, 1);
    }
}

/* The credit rule: a zone is written only after its credit, credited once and only after its
 * last read; the credits balance so that the next use finds what it expects. */
static void test_landing_zones(void **state)
{
    (void)state;
    sched s;
    build_zoned_ag3(&s, 0);
    expect_ok(&s);
    build_zoned_ag3(&s, ZN_FRESH);
    expect_ok(&s);
    build_zoned_ag3(&s, ZN_NO_CREDIT_WAIT);
    expect_reject(&s, "landing zone before this queue waited for its credit");
    build_zoned_ag3(&s, ZN_EARLY_CREDIT);
    expect_reject(&s, "landing zone is accessed after rank");
    build_zoned_ag3(&s, ZN_NO_CREDIT);
    expect_reject(&s, "credit(s) left for rank");
    build_zoned_ag3(&s, ZN_OTHER_TURN);
    expect_reject(&s, "landing zone of the next collective");
    build_zoned_ag3(&s, ZN_WRONG_WRITER);
    expect_reject(&s, "which only its ring predecessor (rank 1) writes");
}

/* ---- races ---- */

static void test_race(void **state)
{
    (void)state;
    sched s;
    /* rank 1 says READY before its pre-copy: rank 0's reduce into rank 1 may land first */
    build_ar2(&s, AR_EARLY_READY);
    expect_reject(&s, "race on rank 1 RECV [8,16)");
    /* rank 0 reads its chunk while rank 1 may still be reducing into it */
    build_ar2(&s, AR_NO_DATA_WAIT);
    expect_reject(&s, "race on rank 0 RECV [0,8)");
    build_ar2(&s, AR_NO_DATA_WAIT);
    assert_int_equal(check(&s), NCL_ERR_SCHEDULE);
    assert_non_null(
        strstr(msg, "written by rank 1 q0 step 1 (WRITE_REDUCE) while rank 0 q0 step 2 may read it (WRITE)"));
    sched_free(&s);
    /* rank 0 does not wait for READY: it may write while rank 1 pre-copies */
    build_ar2(&s, AR_NO_READY_WAIT);
    expect_reject(&s, "rank 0 q0 step 1 (WRITE_REDUCE): writes into rank 1 RECV [8,16) before rank 1 signalled");

    /* two queues of one rank touch the same scratch without ordering */
    sched_init(&s, NCL_COLL_ALLREDUCE, 1, 4, 0, 0, 0, 32);
    copy_(&s, 0, 0, SEND(0), SCR(0), 16, 0);
    copy_(&s, 0, 1, SEND(0), SCR(8), 16, 1);
    copy_(&s, 0, 0, SCR(0), RECV(0), 16, 2);
    expect_reject(&s, "race on rank 0 SCRATCH [8,16)");

    /* a write into a rank that never signalled it is ready */
    sched_init(&s, NCL_COLL_BROADCAST, 2, 4, 0, 0, 0, 0);
    copy_(&s, 0, 0, SEND(0), RECV(0), 16, 0);
    write_(&s, 0, 0, 1, SEND(0), RECV(0), 16, 1);
    rec_(&s, 0, 0, 1, 0, 1);
    wait_(&s, 1, 0, 0, 0, 1, 1);
    expect_reject(&s, "rank 0 q0 step 1 (WRITE): writes into rank 1 RECV [0,16) before rank 1 signalled it is ready");

    /* a write nobody on the destination waits for */
    sched_init(&s, NCL_COLL_BROADCAST, 2, 4, 0, 0, 0, 0);
    copy_(&s, 0, 0, SEND(0), RECV(0), 16, 0);
    wait_(&s, 0, 0, 1, 1, 1, 0);
    write_(&s, 0, 0, 1, SEND(0), RECV(0), 16, 1);
    rec_(&s, 1, 0, 0, 1, 0);
    expect_reject(&s, "rank 0 q0 step 1 (WRITE) writes into rank 1 RECV [0,16), but no wait on rank 1 follows it");
}

/* ---- symbolic execution ---- */

static void test_contributions(void **state)
{
    (void)state;
    sched s;
    build_ar2(&s, AR_REDUCE_TWICE);
    expect_reject(&s, "rank 0's contribution counted twice at rank 1 RECV element 2");
    build_ar2(&s, AR_WRITE_NOT_REDUCE);
    expect_reject(&s, "rank 0 RECV element 2: holds ranks {0} (missing 1), expected all 2 ranks");
    build_ar2(&s, AR_SHIFTED);
    expect_reject(&s, "mismatched elements");
    build_ar2(&s, AR_AVG | AR_DIV_TWICE);
    expect_reject(&s, "rank 0 RECV element 0 divided twice");
    build_ar2(&s, AR_AVG | AR_NO_DIV);
    expect_reject(&s, "rank 0 RECV element 0: not divided by 2");

    /* broadcast of a single rank with the halves swapped */
    sched_init(&s, NCL_COLL_BROADCAST, 1, 4, 0, 0, 0, 0);
    copy_(&s, 0, 0, SEND(8), RECV(0), 8, 0);
    copy_(&s, 0, 0, SEND(0), RECV(8), 8, 0);
    expect_reject(&s, "rank 0 RECV element 0: holds input element 2, expected input element 0");

    /* an element never written */
    sched_init(&s, NCL_COLL_ALLREDUCE, 1, 4, 0, 0, 0, 0);
    copy_(&s, 0, 0, SEND(0), RECV(0), 12, 0);
    expect_reject(&s, "rank 0 RECV element 3: never written, expected all 1 ranks");

    /* allgather blocks in the wrong slots */
    sched_init(&s, NCL_COLL_ALLGATHER, 2, 1, 0, 0, 0, 0);
    copy_(&s, 0, 0, SEND(0), RECV(4), 4, 0);
    copy_(&s, 1, 0, SEND(0), RECV(0), 4, 0);
    expect_reject(&s, "rank 0 RECV element 0: never written, expected only rank 0");

    /* a divided value reduced again */
    sched_init(&s, NCL_COLL_ALLREDUCE, 1, 4, 1, 0, 0, 16);
    copy_(&s, 0, 0, SEND(0), RECV(0), 16, 0);
    div_(&s, 0, 0, RECV(0), 16, 1);
    lred_(&s, 0, 0, SCR(0), RECV(0), 16, 2);
    expect_reject(&s, "reads rank 0 SCRATCH element 0, which nobody wrote");
    sched_init(&s, NCL_COLL_ALLREDUCE, 2, 4, 1, 0, 0, 16);
    copy_(&s, 0, 0, SEND(0), RECV(0), 16, 0);
    div_(&s, 0, 0, RECV(0), 16, 1);
    rec_(&s, 0, 0, 1, 1, 1);
    wait_(&s, 0, 0, 1, 0, 1, 2);
    lred_(&s, 0, 0, SCR(0), RECV(0), 16, 2);
    wait_(&s, 1, 0, 0, 1, 1, 1);
    write_(&s, 1, 0, 0, SEND(0), SCR(0), 16, 1);
    rec_(&s, 1, 0, 0, 0, 1);
    expect_reject(&s, "reduces into rank 0 RECV element 0 a value already divided (avg)");

    /* an allgather block with a contribution that does not belong there */
    sched_init(&s, NCL_COLL_ALLGATHER, 1, 2, 0, 0, 0, 8);
    copy_(&s, 0, 0, SEND(0), RECV(0), 8, 0);
    expect_ok(&s);
    sched_init(&s, NCL_COLL_ALLGATHER, 2, 2, 0, 0, 0, 0);
    for (int r = 0; r < 2; r++) {
        copy_(&s, r, 0, SEND(0), RECV((uint64_t)r * 8), 8, 0);
        rec_(&s, r, 0, 1 - r, 1, 0);
        wait_(&s, r, 0, 1 - r, 1, 1, 0);
        write_(&s, r, 0, 1 - r, SEND(0), RECV((uint64_t)r * 8), 8, 1);
        rec_(&s, r, 0, 1 - r, 0, 1);
        wait_(&s, r, 0, 1 - r, 0, 1, 1);
    }
    lred_(&s, 1, 0, RECV(0), RECV(8), 8, 2);
    expect_reject(&s, "rank 1 RECV element 2: holds ranks {0-1} (extra 0), expected only rank 1");

    /* reading scratch nobody wrote */
    sched_init(&s, NCL_COLL_ALLREDUCE, 1, 4, 0, 0, 0, 64);
    copy_(&s, 0, 0, SCR(16), RECV(0), 16, 0);
    expect_reject(&s, "rank 0 q0 step 0 (LOCAL_COPY): reads rank 0 SCRATCH element 4, which nobody wrote");

    /* a non-root rank's broadcast input is not data */
    sched_init(&s, NCL_COLL_BROADCAST, 2, 4, 0, 0, 0, 0);
    copy_(&s, 0, 0, SEND(0), RECV(0), 16, 0);
    copy_(&s, 1, 0, SEND(0), RECV(0), 16, 0);
    expect_reject(&s, "reads rank 1 SEND element 0, which nobody wrote");
}

/* The two-source kinds on 2 ranks of 4 fp32: rank 1 lands its input in rank 0's scratch, rank 0
 * sends its own op that on (REDUCE_WRITE) into rank 1's recv, and keeps the sum itself. `bad`:
 * 1 a backend without the kind, 2 rank 1's recv already holds its contribution and the write
 * reduces into it (REDUCE_WRITE_REDUCE), 3 the second source shifted by an element. */
static void build_reduce_write(sched *s, int bad)
{
    sched_init(s, NCL_COLL_ALLREDUCE, 2, 4, 0, 0, 0, 32);
    s->plan.reduce_write = bad != 1;
    rec_(s, 1, 0, 0, 1, 0);
    wait_(s, 1, 0, 0, 1, 1, 0);
    if (bad == 2)
        copy_(s, 1, 0, SEND(0), RECV(0), 16, 0);
    write_(s, 1, 0, 0, SEND(0), SCR(0), 16, 1);
    rec_(s, 1, 0, 0, 0, 1);
    rec_(s, 0, 0, 1, 1, 0);
    wait_(s, 0, 0, 1, 1, 1, 0);
    wait_(s, 0, 0, 1, 0, 1, 1);
    ncl_task_reduce_write(push(s, 0, 0), &s->plan, 1, SEND(0), SCR(bad == 3 ? 4 : 0), RECV(0), bad == 3 ? 12 : 16,
                          bad == 2, 2);
    rec_(s, 0, 0, 1, 0, 2);
    wait_(s, 1, 0, 0, 0, 1, 2);
    copy_(s, 0, 0, SEND(0), RECV(0), 16, 2);
    lred_(s, 0, 0, SCR(0), RECV(0), 16, 2);
}

static void test_reduce_write(void **state)
{
    (void)state;
    sched s;
    build_reduce_write(&s, 0);
    expect_ok(&s);
    build_reduce_write(&s, 1);
    expect_reject(&s, "reduces two sources on the way out, which the backend's DMA cannot do");
    build_reduce_write(&s, 2);
    expect_reject(&s, "rank 1's contribution counted twice at rank 1 RECV element 0");
    build_reduce_write(&s, 3);
    expect_reject(&s, "mismatched elements");
}

/* ---- malformed tasks ---- */

static void one_rank(sched *s, uint64_t scratch)
{
    sched_init(s, NCL_COLL_ALLREDUCE, 2, 4, 0, 0, 0, scratch);
}

static void test_malformed(void **state)
{
    (void)state;
    sched s;
    ncl_task *k;

    one_rank(&s, 0);
    copy_(&s, 0, 0, RECV(0), SEND(0), 16, 0);
    expect_reject(&s, "rank 0 q0 step 0 (LOCAL_COPY): writes into rank 0 SEND, which is read only");

    one_rank(&s, 0);
    copy_(&s, 0, 0, SEND(0), RECV(8), 16, 0);
    expect_reject(&s, "dst region RECV [8,+16) out of bounds (rank 0 RECV holds 16 bytes)");

    one_rank(&s, 0);
    copy_(&s, 0, 0, SEND(2), RECV(0), 4, 0);
    expect_reject(&s, "src region SEND [2,+4) not aligned to the 4-byte element");

    one_rank(&s, 0);
    copy_(&s, 0, 0, SEND(0), RECV(0), 6, 0);
    expect_reject(&s, "not aligned");

    one_rank(&s, 64);
    copy_(&s, 0, 0, SEND(0), SCR(0), 16, 0);
    copy_(&s, 0, 0, SCR(0), SCR(8), 16, 1);
    expect_reject(&s, "overlap");

    one_rank(&s, 0);
    write_(&s, 0, 0, 5, SEND(0), RECV(0), 16, 0);
    expect_reject(&s, "peer 5 out of range (2 ranks)");

    one_rank(&s, 0);
    write_(&s, 1, 0, 1, SEND(0), RECV(0), 16, 0);
    expect_reject(&s, "rank 1 q0 step 0 (WRITE): writes to its own rank 1");

    one_rank(&s, 0);
    rec_(&s, 0, 0, 1, 40, 0);
    expect_reject(&s, "notify id 40 out of range");

    one_rank(&s, 0);
    wait_(&s, 0, 0, -1, 0, 1, 0);
    expect_reject(&s, "peer -1 out of range");

    one_rank(&s, 0);
    k = push(&s, 0, 0);
    ncl_task_reduce(k, &s.plan, SEND(0), RECV(0), 16, 0);
    k->op = NCL_PROD;
    expect_reject(&s, "reduces with dtype 7 op 1, the plan has dtype 7 op 0");

    one_rank(&s, 0);
    k = push(&s, 0, 0);
    ncl_task_write_reduce(k, &s.plan, 1, SEND(0), RECV(0), 16, 0);
    k->dtype = NCL_INT32;
    expect_reject(&s, "reduces with dtype 2 op 0");

    one_rank(&s, 0);
    copy_(&s, 0, 0, SEND(0), RECV(0), 16, 0);
    div_(&s, 0, 0, RECV(0), 16, 1);
    expect_reject(&s, "divides although the op is not avg");

    sched_init(&s, NCL_COLL_ALLREDUCE, 2, 4, 1, 0, 0, 0);
    copy_(&s, 0, 0, SEND(0), RECV(0), 16, 0);
    k = push(&s, 0, 0);
    ncl_task_div(k, &s.plan, RECV(0), 16, 1);
    k->count = 3;
    expect_reject(&s, "divides by 3, expected the rank count 2");

    one_rank(&s, 0);
    k = push(&s, 0, 0);
    k->kind = 42;
    k->step = 4;
    expect_reject(&s, "rank 0 q0 step 4 (?): unknown task kind 42");

    one_rank(&s, 0);
    k = push(&s, 0, 0);
    ncl_task_copy(k, SEND(0), RECV(0), 16, 0);
    k->dst.buf = 7;
    expect_reject(&s, "dst names unknown buffer 7");

    /* reduce: non-root ranks have no receive buffer */
    sched_init(&s, NCL_COLL_REDUCE, 2, 4, 0, 0, 0, 0);
    copy_(&s, 1, 0, SEND(0), RECV(0), 16, 0);
    expect_reject(&s, "rank 1 RECV holds 0 bytes");
}

/* ---- arguments ---- */

static void test_arguments(void **state)
{
    (void)state;
    sched s;
    talloc a = {0, 0, 0, 0};
    build_ar2(&s, 0);
    ncl_check_source src = {sched_next, &s, 1};
    assert_int_equal(ncl_check(NULL, &src, t_alloc, t_free, &a, msg, sizeof msg), NCL_ERR_INVALID_ARGUMENT);
    assert_int_equal(ncl_check(&s.plan, &src, NULL, t_free, &a, msg, sizeof msg), NCL_ERR_INVALID_ARGUMENT);
    ncl_check_source none = {sched_next, &s, 0};
    assert_int_equal(ncl_check(&s.plan, &none, t_alloc, t_free, &a, msg, sizeof msg), NCL_ERR_INVALID_ARGUMENT);
    ncl_plan p = s.plan;
    p.nranks = NCL_CHECK_MAX_RANKS + 1;
    assert_int_equal(ncl_check(&p, &src, t_alloc, t_free, &a, msg, sizeof msg), NCL_ERR_UNSUPPORTED);
    assert_non_null(strstr(msg, "at most 256"));
    p = s.plan;
    p.nranks = 0;
    assert_int_equal(ncl_check(&p, &src, t_alloc, t_free, &a, msg, sizeof msg), NCL_ERR_INVALID_ARGUMENT);
    p = s.plan;
    p.coll = NCL_COLL_BROADCAST;
    p.root = 2;
    assert_int_equal(ncl_check(&p, &src, t_alloc, t_free, &a, msg, sizeof msg), NCL_ERR_INVALID_ARGUMENT);
    p = s.plan;
    p.coll = NCL_COLL_COUNT;
    assert_int_equal(ncl_check(&p, &src, t_alloc, t_free, &a, msg, sizeof msg), NCL_ERR_INVALID_ARGUMENT);
    p = s.plan;
    p.esize = 0;
    assert_int_equal(ncl_check(&p, &src, t_alloc, t_free, &a, msg, sizeof msg), NCL_ERR_INVALID_ARGUMENT);
    p = s.plan;
    p.count = UINT64_MAX / 4;
    assert_int_equal(ncl_check(&p, &src, t_alloc, t_free, &a, msg, sizeof msg), NCL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(msg, "overflows"));
    ncl_check_source nonext = {NULL, &s, 1};
    assert_int_equal(ncl_check(&s.plan, &nonext, t_alloc, t_free, &a, msg, sizeof msg), NCL_ERR_INVALID_ARGUMENT);
    ncl_check_source many = {sched_next, &s, NCL_MAX_QUEUES + 1};
    assert_int_equal(ncl_check(&s.plan, &many, t_alloc, t_free, &a, msg, sizeof msg), NCL_ERR_UNSUPPORTED);
    p = s.plan; /* landing zones that do not fit */
    p.zone_channels = 1;
    assert_int_equal(ncl_check(&p, &src, t_alloc, t_free, &a, msg, sizeof msg), NCL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(msg, "landing zones of 0 bytes"));
    p.zone_bytes = UINT64_MAX / 2;
    p.zone_base = p.scratch_bytes + 8;
    assert_int_equal(ncl_check(&p, &src, t_alloc, t_free, &a, msg, sizeof msg), NCL_ERR_INVALID_ARGUMENT);
    p = s.plan;
    p.algo = NCL_ALGO_AUTO; /* src == NULL needs a concrete algorithm */
    assert_int_equal(ncl_check(&p, NULL, t_alloc, t_free, &a, msg, sizeof msg), NCL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(msg, "no algorithm"));
    /* no message buffer is fine */
    assert_int_equal(ncl_check(&s.plan, &src, t_alloc, t_free, &a, NULL, 0), NCL_SUCCESS);
    assert_int_equal(a.allocs, a.frees);
    sched_free(&s);
}

/* ---- out of memory: fail the Nth allocation for every N until the check succeeds ---- */

static void oom_loop(sched *s, ncl_result final)
{
    ncl_check_source src = {sched_next, s, s->queues};
    for (long n = 1;; n++) {
        talloc a = {0, 0, 0, n};
        ncl_result rc = ncl_check(&s->plan, &src, t_alloc, t_free, &a, msg, sizeof msg);
        assert_int_equal(a.allocs, a.frees);
        if (rc == NCL_ERR_OUT_OF_MEMORY) {
            assert_true(n < 100000);
            continue;
        }
        assert_int_equal(rc, final);
        if (a.calls < n) /* the failure point was never reached: done */
            break;
    }
    sched_free(s);
}

static void test_out_of_memory(void **state)
{
    (void)state;
    sched s;
    build_ar2(&s, AR_AVG);
    oom_loop(&s, NCL_SUCCESS);
    build_ring_ar(&s, 4, 2, 3, 2, 1, 0);
    oom_loop(&s, NCL_SUCCESS);
    build_slices(&s, 101);
    oom_loop(&s, NCL_SUCCESS);
    build_ar2(&s, AR_NO_DATA_WAIT);
    oom_loop(&s, NCL_ERR_SCHEDULE);
    sched_init(&s, NCL_COLL_ALLREDUCE, 2, 0, 0, 0, 0, 0);
    wait_(&s, 0, 0, 1, 0, 1, 3);
    rec_(&s, 0, 0, 1, 0, 3);
    wait_(&s, 1, 0, 0, 0, 1, 2);
    rec_(&s, 1, 0, 0, 0, 2);
    oom_loop(&s, NCL_ERR_SCHEDULE);
}


/* ---- wide accumulation: det's fp32-accumulator schedules and corruptions of them ---- */

static void wide_plan(ncl_plan *p, int nranks, uint64_t count, ncl_dtype dt, ncl_op op, int inplace,
                      uint64_t slice, uint64_t scratch)
{
    ncl_plan_env env;
    memset(&env, 0, sizeof env);
    env.slice_bytes = slice;
    env.channels = 1;
    env.max_queues = NCL_MAX_QUEUES;
    env.scratch_bytes = scratch;
    env.link_alpha_ns = 1000;
    env.link_gbps = 20;
    env.deterministic = 1;
    env.wide_accumulation = 1;
    assert_int_equal(ncl_plan_make(p, NCL_COLL_ALLREDUCE, NCL_ALGO_RING, nranks, 0, 0, count, dt, op, inplace, &env),
                     NCL_SUCCESS);
}

/* The wide det schedule of every shape proves correct: 1..8 ranks, gather (one round) and split
 * (many rounds, scratch small), in and out of place, sum and avg, fp16 and bf16. */
static void test_wide_ok(void **state)
{
    (void)state;
    static const int ranks[] = {1, 2, 3, 5, 8};
    static const uint64_t counts[] = {1, 7, 1000};
    static const struct {
        uint64_t slice, scratch;
    } res[] = {{1u << 20, 4u << 20}, {8, 4u << 20}, {64, 200}};
    for (size_t ri = 0; ri < sizeof ranks / sizeof ranks[0]; ri++)
        for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++)
            for (size_t si = 0; si < sizeof res / sizeof res[0]; si++)
                for (int f = 0; f < 8; f++) {
                    ncl_plan p;
                    wide_plan(&p, ranks[ri], counts[ci], f & 1 ? NCL_BFLOAT16 : NCL_FLOAT16,
                              f & 2 ? NCL_AVG : NCL_SUM, f >> 2, res[si].slice, res[si].scratch);
                    assert_int_equal(p.algo, NCL_ALGO_DET);
                    assert_int_equal(p.wide, 1);
                    ncl_result rc = check_src(&p, NULL);
                    if (rc != NCL_SUCCESS)
                        print_error("p=%d count %llu slice %llu flags %d: %s\n", ranks[ri],
                                    (unsigned long long)counts[ci], (unsigned long long)res[si].slice, f, msg);
                    assert_int_equal(rc, NCL_SUCCESS);
                }
    /* max/min and fp32 stay narrow (nothing to widen) */
    ncl_plan p;
    wide_plan(&p, 3, 10, NCL_FLOAT16, NCL_MAX, 0, 64, 4096);
    assert_int_equal(p.wide, 0);
    wide_plan(&p, 3, 10, NCL_FLOAT32, NCL_SUM, 0, 64, 4096);
    assert_int_equal(p.wide, 0);
}

enum {
    WC_DROP_REDUCE = 1, /* rank 1 skips its first LOCAL_REDUCE_WIDE */
    WC_COPY_NOT_NARROW, /* rank 1 copies the accumulator's bytes out instead of rounding them */
    WC_NARROW_MISALIGNED, /* rank 1 rounds from 2 bytes into the accumulator */
    WC_NARROW_REDUCE,   /* rank 1 adds x_1 with a narrow LOCAL_REDUCE into the fp32 accumulator */
    WC_NO_DIV,          /* avg: rank 1 rounds without dividing */
    WC_NARROW_WIDE_SRC, /* rank 1 adds the accumulator (an fp32 source) as if it were x_1 */
};

typedef struct wcorrupt {
    const ncl_plan *plan;
    int mode, done;
} wcorrupt;

static int wide_corrupt_next(void *ud, int rank, uint32_t queue, ncl_gen *gen, ncl_task *out)
{
    wcorrupt *w = ud;
    ncl_plan p = *w->plan;
    p.rank = rank;
    const ncl_algo_desc *d = ncl_algo_find(NCL_COLL_ALLREDUCE, NCL_ALGO_DET);
    for (;;) {
        if (!d->next(&p, queue, gen, out))
            return 0;
        if (rank != 1 || w->done)
            return 1;
        switch (w->mode) {
        case WC_DROP_REDUCE:
            if (out->kind == NCL_TASK_LOCAL_REDUCE_WIDE) {
                w->done = 1;
                continue;
            }
            break;
        case WC_COPY_NOT_NARROW:
            if (out->kind == NCL_TASK_LOCAL_NARROW) {
                out->kind = NCL_TASK_LOCAL_COPY;
                out->count = 0;
                w->done = 1;
            }
            break;
        case WC_NARROW_MISALIGNED:
            if (out->kind == NCL_TASK_LOCAL_NARROW) {
                out->src.off += 2;
                w->done = 1;
            }
            break;
        case WC_NARROW_REDUCE:
            if (out->kind == NCL_TASK_LOCAL_REDUCE_WIDE) {
                out->kind = NCL_TASK_LOCAL_REDUCE;
                w->done = 1;
            }
            break;
        case WC_NO_DIV:
            if (out->kind == NCL_TASK_LOCAL_NARROW) {
                out->count = 0;
                w->done = 1;
            }
            break;
        case WC_NARROW_WIDE_SRC:
            if (out->kind == NCL_TASK_LOCAL_REDUCE_WIDE) {
                out->src = out->dst;               /* the accumulator, fp32 */
                out->dst.off = (2u << 20);         /* somewhere free in scratch */
                w->done = 1;
            }
            break;
        }
        return 1;
    }
}

static void expect_wide_reject(const ncl_plan *p, int mode, const char *needle)
{
    wcorrupt w = {p, mode, 0};
    ncl_check_source src = {wide_corrupt_next, &w, p->queues};
    ncl_result rc = check_src(p, &src);
    if (rc != NCL_ERR_SCHEDULE || !strstr(msg, needle))
        print_error("mode %d: expected NCL_ERR_SCHEDULE with \"%s\", got %d: %s\n", mode, needle, (int)rc, msg);
    assert_int_equal(rc, NCL_ERR_SCHEDULE);
    assert_non_null(strstr(msg, needle));
    assert_int_equal(w.done, 1);
}

/* Each corruption is rejected with the rule it breaks; the uncorrupted source passes. */
static void test_wide_rejects(void **state)
{
    (void)state;
    ncl_plan p;
    wide_plan(&p, 3, 100, NCL_FLOAT16, NCL_AVG, 0, 1u << 20, 4u << 20);
    wcorrupt ok = {&p, 0, 0};
    ncl_check_source src = {wide_corrupt_next, &ok, p.queues};
    assert_int_equal(check_src(&p, &src), NCL_SUCCESS);
    expect_wide_reject(&p, WC_DROP_REDUCE, "rank 1 RECV element 0: holds ranks {0,2} (missing 1)");
    expect_wide_reject(&p, WC_COPY_NOT_NARROW, "holds half of an fp32 accumulator, not the result");
    expect_wide_reject(&p, WC_NARROW_MISALIGNED, "not aligned to the 4-byte element");
    expect_wide_reject(&p, WC_NARROW_REDUCE, "holds an fp32 accumulator (use LOCAL_REDUCE_WIDE)");
    expect_wide_reject(&p, WC_NO_DIV, "divides by 0, expected the rank count 3 (avg)");
    expect_wide_reject(&p, WC_NARROW_WIDE_SRC, "but it holds an fp32 accumulator");

    /* the wide kinds in a plan without wide accumulation */
    ncl_plan narrow = p;
    narrow.wide = 0;
    wcorrupt w = {&p, 0, 0};
    ncl_check_source src2 = {wide_corrupt_next, &w, p.queues};
    assert_int_equal(check_src(&narrow, &src2), NCL_ERR_SCHEDULE);
    assert_non_null(strstr(msg, "(LOCAL_WIDEN): needs wide accumulation"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allreduce2_ok),
        cmocka_unit_test(test_ring_allreduce_ok),
        cmocka_unit_test(test_ring_allreduce_16_ranks),
        cmocka_unit_test(test_other_collectives_ok),
        cmocka_unit_test(test_cross_queue_ok),
        cmocka_unit_test(test_many_slices),
        cmocka_unit_test(test_plan_algorithm),
        cmocka_unit_test(test_lead_piece),
        cmocka_unit_test(test_lead_pieces_checked),
        cmocka_unit_test(test_wait_without_record),
        cmocka_unit_test(test_cycle),
        cmocka_unit_test(test_unconsumed_record),
        cmocka_unit_test(test_landing_zones),
        cmocka_unit_test(test_race),
        cmocka_unit_test(test_contributions),
        cmocka_unit_test(test_reduce_write),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_arguments),
        cmocka_unit_test(test_out_of_memory),
        cmocka_unit_test(test_wide_ok),
        cmocka_unit_test(test_wide_rejects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
