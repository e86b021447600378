/* mmio_world.c — the mmio world: ncl_mmio backends and communicators on N blocks reached through mmio_dev_ops, and a matrix case run on them single-threaded. */
#include "mmio_world.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ncl/ncl_dtype.h"
#include "ncl/ncl_mmio_regs.h"

#define GUARD_BYTES 64u /* checked after a case's result: nothing written past its end */
#define GUARD 0xCDu

static int verbose; /* MMIO_TEST_VERBOSE: the backends' log on stdout */

/* ---- access functions: what a board does with volatile loads/stores ---------------------------- */

static uint32_t acc_rd(void *ctx, uint32_t off)
{
    mmio_port *p = ctx;
    mmio_world *w = p->w;
    if (off == NCL_MMIO_ID && w->fake_id)
        return w->fake_id;
    if (off == NCL_MMIO_VERSION && w->fake_version)
        return w->fake_version;
    if (off == NCL_MMIO_CAPS && w->fake_caps)
        return w->fake_caps;
    int err = 0;
    uint32_t v = w->ops->reg_read(w->dev, p->rank, off, &err);
    w->bus_errors += err != 0;
    return v;
}

static void acc_wr(void *ctx, uint32_t off, uint32_t v)
{
    mmio_port *p = ctx;
    p->w->bus_errors += p->w->ops->reg_write(p->w->dev, p->rank, off, v) != 0;
}

static int acc_mem_write(void *ctx, uint64_t a, const void *src, uint64_t n)
{
    mmio_port *p = ctx;
    if (a > MMIO_MEM_BYTES || n > MMIO_MEM_BYTES - a)
        return p->w->mem_faults++, 1;
    memcpy(p->w->ops->mem(p->w->dev, p->rank) + a, src, n);
    return 0;
}

static int acc_mem_read(void *ctx, uint64_t a, void *dst, uint64_t n)
{
    mmio_port *p = ctx;
    if (a > MMIO_MEM_BYTES || n > MMIO_MEM_BYTES - a)
        return p->w->mem_faults++, 1;
    memcpy(dst, p->w->ops->mem(p->w->dev, p->rank) + a, n);
    return 0;
}

static int acc_wait_irq(void *ctx, uint64_t timeout_ns)
{
    mmio_port *p = ctx;
    return p->w->ops->wait_irq(p->w->dev, p->rank, timeout_ns);
}

static int acc_poll(void *ctx)
{
    mmio_port *p = ctx;
    return p->w->ops->poll(p->w->dev, p->rank);
}

static uint64_t acc_now(void *ctx)
{
    mmio_port *p = ctx;
    return p->w->ops->now(p->w->dev);
}

static void acc_log(void *ctx, int level, const char *msg)
{
    mmio_port *p = ctx;
    if (verbose)
        printf("[rank %d] %d: %s\n", p->rank, level, msg);
}

static void *t_alloc(void *ud, size_t n)
{
    (void)ud;
    return malloc(n);
}

static void t_free(void *ud, void *ptr)
{
    (void)ud;
    free(ptr);
}

/* ---- bring-up ---------------------------------------------------------------------------------- */

static size_t mmio_run(mx_world *mw, const mx_case *cases, size_t n, mx_result *res);

mmio_world *mmio_world_devices(const mmio_dev_ops *ops, int n)
{
    verbose = getenv("MMIO_TEST_VERBOSE") != NULL;
    assert_true(n >= 1 && n <= MMIO_MAXR);
    mmio_world *w = calloc(1, sizeof *w);
    assert_non_null(w);
    w->ops = ops;
    w->n = n;
    w->dev = ops->open(n);
    assert_non_null(w->dev);
    for (int r = 0; r < n; r++) {
        w->port[r].w = w;
        w->port[r].rank = r;
        w->bounce[r] = aligned_alloc(16, MMIO_BOUNCE_BYTES);
        w->input[r] = malloc(MMIO_BUF_BYTES);
        assert_true(w->bounce[r] && w->input[r]);
    }
    w->expected = malloc(MMIO_BUF_BYTES);
    assert_non_null(w->expected);
    w->mx.name = ops->name;
    w->mx.nranks = n;
    w->mx.run = mmio_run;
    w->mx.ctx = w;
    return w;
}

ncl_result mmio_world_backend(mmio_world *w, int r, const mmio_opts *o)
{
    ncl_mmio_config c = NCL_MMIO_CONFIG_INIT;
    c.rank = r;
    c.nranks = w->n;
    c.ring_base = MMIO_RING_AT;
    c.ring_entries = o->ring_entries ? o->ring_entries : 256;
    c.scratch_base = MMIO_SCRATCH_AT;
    c.scratch_bytes = MMIO_SCRATCH_BYTES;
    c.launch_base = MMIO_LAUNCH_AT;
    c.contexts = o->contexts;
    c.map_base = MMIO_MAP_AT;
    c.irq = o->irq;
    c.max_queues = o->max_queues ? o->max_queues : 4;
    c.timeout_ns = 1000000; /* 1 ms simulated for a free ring slot */
    c.bounce = w->bounce[r];
    c.bounce_bytes = MMIO_BOUNCE_BYTES;
    c.log_level = verbose ? NCL_LOG_DEBUG : NCL_LOG_WARN;
    ncl_mmio_access a = {acc_rd, acc_wr, acc_mem_write, acc_mem_read, o->irq ? acc_wait_irq : NULL,
                         o->irq ? NULL : acc_poll, acc_now, acc_log, &w->port[r], NULL};
    size_t bytes = (ncl_mmio_mem_bytes(&c) + 15u) / 16u * 16u;
    free(w->mm_mem[r]);
    w->mm_mem[r] = aligned_alloc(16, bytes);
    if (!w->mm_mem[r])
        return NCL_ERR_OUT_OF_MEMORY;
    return ncl_mmio_init(&w->mm[r], w->mm_mem[r], bytes, &c, &a);
}

ncl_result mmio_world_comms(mmio_world *w, const mmio_opts *o)
{
    for (int r = 0; r < w->n; r++) {
        ncl_comm_destroy(w->comm[r]);
        w->comm[r] = NULL;
        ncl_config cc = NCL_CONFIG_INIT;
        cc.alloc = t_alloc;
        cc.free = t_free;
        cc.timeout_ns = MMIO_COMM_TIMEOUT_NS;
        cc.channels = o->channels ? o->channels : 2;
        cc.slice_bytes = o->slice_bytes ? o->slice_bytes : (16u << 10);
        /* what error-path tests get; a matrix case forces its own */
        cc.algorithm[NCL_COLL_ALLREDUCE] = NCL_ALGO_RING;
        cc.algorithm[NCL_COLL_BROADCAST] = NCL_ALGO_CHAIN;
        cc.algorithm[NCL_COLL_REDUCE] = NCL_ALGO_RING;
        cc.algorithm[NCL_COLL_REDUCE_SCATTER] = NCL_ALGO_RING;
        cc.algorithm[NCL_COLL_ALLGATHER] = NCL_ALGO_RING;
        cc.deterministic = o->wide;
        cc.wide_accumulation = o->wide;
        ncl_result rc = ncl_comm_create(&w->comm[r], w->n, r, ncl_mmio_hal(w->mm[r]), &cc);
        if (rc != NCL_SUCCESS)
            return rc;
    }
    return NCL_SUCCESS;
}

mmio_world *mmio_world_new(const mmio_dev_ops *ops, int n, const mmio_opts *o)
{
    mmio_world *w = mmio_world_devices(ops, n);
    for (int r = 0; r < n; r++)
        assert_int_equal(mmio_world_backend(w, r, o), NCL_SUCCESS);
    assert_int_equal(mmio_world_comms(w, o), NCL_SUCCESS);
    return w;
}

void mmio_world_free(mmio_world *w)
{
    for (int r = 0; r < w->n; r++) {
        ncl_comm_destroy(w->comm[r]);
        ncl_mmio_fini(w->mm[r]);
        free(w->mm_mem[r]);
        free(w->bounce[r]);
        free(w->input[r]);
    }
    free(w->expected);
    w->ops->close(w->dev);
    free(w);
}

uint32_t mmio_world_reg(mmio_world *w, int r, uint32_t off) { return w->ops->reg_read(w->dev, r, off, NULL); }

uint8_t *mmio_world_mem(mmio_world *w, int r, uint64_t a) { return w->ops->mem(w->dev, r) + a; }

void mmio_world_check_up(mmio_world *w, int r, int irq, uint32_t entries)
{
    assert_int_equal(mmio_world_reg(w, r, NCL_MMIO_ID), NCL_MMIO_ID_RESET);
    assert_int_equal(mmio_world_reg(w, r, NCL_MMIO_VERSION), NCL_MMIO_VERSION_RESET);
    assert_int_equal(mmio_world_reg(w, r, NCL_MMIO_CAPS), NCL_MMIO_CAPS_RESET);
    assert_int_equal(mmio_world_reg(w, r, NCL_MMIO_CTRL),
                     NCL_MMIO_CTRL_ENABLE_MASK | (irq ? NCL_MMIO_CTRL_IRQ_EN_MASK : 0));
    assert_int_equal(mmio_world_reg(w, r, NCL_MMIO_IRQ_MASK), irq ? 0xFu : 0u);
    assert_int_equal(mmio_world_reg(w, r, NCL_MMIO_RING_BASE_LO), MMIO_RING_AT);
    assert_int_equal(mmio_world_reg(w, r, NCL_MMIO_RING_BASE_HI), 0);
    assert_int_equal(mmio_world_reg(w, r, NCL_MMIO_RING_SIZE), entries);
    assert_int_equal(mmio_world_reg(w, r, NCL_MMIO_RING_TAIL), 0);
    assert_int_equal(mmio_world_reg(w, r, NCL_MMIO_RING_HEAD), 0);
    assert_int_equal(mmio_world_reg(w, r, NCL_MMIO_ERR_STATUS), 0);
    assert_int_equal(mmio_world_reg(w, r, NCL_MMIO_IRQ_STATUS), 0);
    assert_int_not_equal(mmio_world_reg(w, r, NCL_MMIO_SCRATCH), 0); /* the write/read-back check's pattern */
}

/* ---- the cases every block runs ------------------------------------------------------------- */

static const mx_type ar_types[] = {{NCL_INT32, NCL_SUM}, {NCL_FLOAT32, NCL_SUM}, {NCL_FLOAT16, NCL_SUM}};
static const mx_type bc_types[] = {{NCL_INT32, NCL_SUM}, {NCL_FLOAT16, NCL_SUM}};

static size_t ar_counts(const mx_axes *a, int nranks, ncl_dtype dt, uint64_t out[MX_MAX_COUNTS])
{
    (void)a, (void)nranks, (void)dt;
    static const uint64_t c[] = {1, 7, 1001, 4099};
    memcpy(out, c, sizeof c);
    return 4;
}

/* the largest count out of place only, on the ranks a->ctx names (0: all) */
static int ar_keep(const mx_axes *a, int nranks, const mx_case *c)
{
    int big_ranks = *(const int *)a->ctx;
    return c->count <= 1001 || (!c->inplace && (big_ranks == 0 || nranks == big_ranks));
}

static size_t bc_counts(const mx_axes *a, int nranks, ncl_dtype dt, uint64_t out[MX_MAX_COUNTS])
{
    (void)a, (void)nranks, (void)dt;
    out[0] = 7;
    out[1] = 1001;
    return 2;
}

static int bc_keep(const mx_axes *a, int nranks, const mx_case *c)
{
    (void)a, (void)nranks;
    return c->dt == (c->root % 2 ? NCL_FLOAT16 : NCL_INT32) && c->inplace == c->root % 2;
}

void mmio_world_add_allreduce_broadcast(mx_matrix *m, int n, int big_ranks)
{
    const mx_axes ar = {NCL_COLL_ALLREDUCE, NCL_ALGO_RING, ar_counts, ar_types, 3, MX_ROOTS_ZERO, MX_BOTH_PLACES,
                        ar_keep, &big_ranks, 0};
    const mx_axes bc = {NCL_COLL_BROADCAST, NCL_ALGO_CHAIN, bc_counts, bc_types, 2, MX_ROOTS_ALL, MX_BOTH_PLACES,
                        bc_keep, NULL, 0};
    mx_add_axes(m, &ar, n);
    mx_add_axes(m, &bc, n);
}

void mmio_world_stats(mmio_world *w, ncl_mmio_stats *s)
{
    memset(s, 0, sizeof *s);
    for (int r = 0; r < w->n; r++) {
        ncl_mmio_stats x;
        ncl_mmio_get_stats(w->mm[r], &x);
        s->descriptors += x.descriptors;
        s->doorbells += x.doorbells;
        s->controller_ops += x.controller_ops;
        s->irq_waits += x.irq_waits;
        s->polls += x.polls;
        s->ring_full_waits += x.ring_full_waits;
        s->errors += x.errors;
        s->bringups += x.bringups;
        for (size_t k = 0; k < sizeof s->opcodes / sizeof s->opcodes[0]; k++)
            s->opcodes[k] += x.opcodes[k];
    }
}

/* ---- running a case ---------------------------------------------------------------------------- */

int mmio_world_drive(mmio_world *w, const int *started, ncl_result *rc)
{
    int done[MMIO_MAXR] = {0}, left = 0;
    for (int r = 0; r < w->n; r++)
        left += started[r] && !(done[r] = rc[r] != NCL_SUCCESS);
    for (long it = 0; left; it++) {
        if (it >= w->ops->max_rounds)
            return 0;
        for (int r = 0; r < w->n; r++) {
            if (!started[r] || done[r])
                continue;
            int d = 0;
            ncl_result x = ncl_test(w->comm[r], &d);
            if (d) {
                done[r] = 1;
                rc[r] = x;
                left--;
            }
        }
        for (int r = 0; r < w->n; r++)
            if (started[r] && !done[r])
                ncl_hal_wait_event(ncl_mmio_hal(w->mm[r]), 1000000);
    }
    return w->ops->settle(w->dev); /* the last records still in the rings */
}

/* Case c on every rank: inputs into the blocks' memories (in place at RECV, out of place at SEND,
 * NULL where NCCL lets a rank pass none), poisoned results with guard bytes after them, every
 * rank started and driven to the end, then each rank's error, its block's ERR_STATUS, the bus, its
 * result bit-exact, its send buffer and the guard. 0 if the world hung. */
static int run_case(mmio_world *w, const mx_case *c, mx_result *res)
{
    const int n = w->n;
    rs_shape s;
    mx_shape(&s, c, n);
    uint64_t a_bytes = rs_shape_a_bytes(&s), b_bytes = rs_shape_b_bytes(&s);
    if (a_bytes > MMIO_BUF_BYTES || b_bytes > MMIO_BUF_BYTES) {
        mx_result_fail(res, 0, NCL_ERR_INVALID_ARGUMENT, 0, "%llu + %llu bytes do not fit the %u-byte buffers",
                       (unsigned long long)a_bytes, (unsigned long long)b_bytes, MMIO_BUF_BYTES);
        return 1;
    }
    const uint64_t a = c->inplace ? MMIO_RECV_AT : MMIO_SEND_AT, b = MMIO_RECV_AT;
    const uint64_t end = c->inplace ? a + a_bytes : b + b_bytes;
    const uint64_t guard = MMIO_MEM_BYTES - end < GUARD_BYTES ? MMIO_MEM_BYTES - end : GUARD_BYTES;
    const void *send[MMIO_MAXR];
    void *recv[MMIO_MAXR];
    ncl_result rc[MMIO_MAXR];
    int started[MMIO_MAXR];
    for (int r = 0; r < n; r++)
        rs_shape_input(&s, r, MX_SEED, w->input[r]);
    rs_shape_expected(&s, MX_SEED, 0, s.result_elems, w->expected);

    for (int r = 0; r < n; r++) {
        started[r] = 0;
        rc[r] = ncl_comm_set_algorithm(w->comm[r], c->coll, c->algo);
        if (rc[r] != NCL_SUCCESS)
            continue;
        mx_place(&s, r, (unsigned char *)mmio_dev_ptr(a), (unsigned char *)mmio_dev_ptr(b), c->inplace, &send[r],
                 &recv[r]);
        uint8_t *base = mmio_world_mem(w, r, 0);
        mx_prepare(&s, r, w->input[r], send[r] ? base + (uintptr_t)send[r] : NULL,
                   recv[r] ? base + (uintptr_t)recv[r] : NULL);
        memset(base + end, GUARD, guard);
        ncl_mmio_set_peer_recv(w->mm[r], MMIO_RECV_AT);
        rc[r] = rs_shape_start(&s, send[r], recv[r], w->comm[r]);
        started[r] = 1;
    }
    if (!mmio_world_drive(w, started, rc)) {
        mx_result_fail(res, 0, NCL_ERR_TIMEOUT, 0, "the blocks never finished (%ld firmware rounds)",
                       w->ops->max_rounds);
        return 0;
    }
    res->run = 1;
    for (int r = 0; r < n; r++) {
        if (rc[r] != NCL_SUCCESS) {
            mx_result_fail(res, r, rc[r], 0, "%s; mmio: %s", ncl_comm_last_error(w->comm[r]),
                           ncl_mmio_last_error(w->mm[r]));
            continue;
        }
        uint32_t err = mmio_world_reg(w, r, NCL_MMIO_ERR_STATUS);
        if (err) {
            mx_result_fail(res, r, NCL_SUCCESS, 0, "ERR_STATUS 0x%x after the collective", err);
            continue;
        }
        uint8_t *base = mmio_world_mem(w, r, 0);
        char what[160];
        uint64_t wrong = mx_check(&s, r, send[r] ? base + (uintptr_t)send[r] : NULL,
                                  recv[r] ? base + (uintptr_t)recv[r] : NULL, c->inplace ? NULL : w->input[r],
                                  w->expected, what, sizeof what);
        uint64_t past = 0;
        for (uint64_t k = 0; k < guard; k++)
            past += base[end + k] != GUARD;
        if (past)
            snprintf(what + strlen(what), sizeof what - strlen(what), "%s%llu byte(s) written past the result",
                     what[0] ? ", " : "", (unsigned long long)past);
        if (wrong || past)
            mx_result_fail(res, r, NCL_SUCCESS, wrong + past, "%s", what);
    }
    /* the world's bus stays clean: any refused access since bring-up fails the case */
    if (w->bus_errors || w->mem_faults)
        mx_result_fail(res, 0, NCL_SUCCESS, 0, "%u bus error(s), %u memory copies out of range", w->bus_errors,
                       w->mem_faults);
    return 1;
}

static size_t mmio_run(mx_world *mw, const mx_case *cases, size_t n, mx_result *res)
{
    mmio_world *w = mw->ctx;
    for (size_t i = 0; i < n; i++)
        if (!run_case(w, &cases[i], &res[i]))
            return i + 1; /* the blocks hang: the rest cannot run here */
    return n;
}

/* ---- error paths every block must handle the same way ------------------------------------------ */

void mmio_world_test_bad_address(const mmio_dev_ops *ops)
{
    for (int irq = 0; irq <= 1; irq++) {
        mmio_opts o = {irq, 0, 4, 2, 0, 0, 0};
        mmio_world *w = mmio_world_new(ops, 2, &o);
        const uint64_t bad = MMIO_MEM_BYTES + 0x1000u, count = 1000;
        ncl_result rc[MMIO_MAXR];
        int started[MMIO_MAXR] = {1, 1};
        for (int r = 0; r < 2; r++)
            rc[r] = ncl_allreduce_start(mmio_dev_ptr(MMIO_SEND_AT), mmio_dev_ptr(bad), count, NCL_INT32, NCL_SUM,
                                        w->comm[r]);
        assert_true(mmio_world_drive(w, started, rc));
        for (int r = 0; r < 2; r++) {
            const char *e = ncl_mmio_last_error(w->mm[r]);
            printf("%s rank %d: %s\n  engine: %s\n", irq ? "irq" : "polled", r, e, ncl_comm_last_error(w->comm[r]));
            assert_int_not_equal(rc[r], NCL_SUCCESS);
            if (rc[r] == NCL_ERR_BACKEND) {
                assert_non_null(strstr(e, "descriptor slot"));
                assert_true(strstr(e, "ADDR_RANGE") || strstr(e, "LINK"));
                assert_non_null(strstr(e, "address 0x40")); /* past the 4 MiB memory */
                assert_non_null(strstr(e, "queue"));
            }
            assert_int_equal(mmio_world_reg(w, r, NCL_MMIO_ERR_STATUS), 0); /* cleared and reset */
            mmio_world_check_up(w, r, irq, 256);
        }
        assert_true(rc[0] == NCL_ERR_BACKEND || rc[1] == NCL_ERR_BACKEND);
        ncl_mmio_stats s;
        mmio_world_stats(w, &s);
        assert_true(s.errors >= 1);
        /* a new communicator on the same (recovered) blocks works */
        w->bus_errors = 0;
        assert_int_equal(mmio_world_comms(w, &o), NCL_SUCCESS);
        mx_matrix m;
        mx_init(&m);
        const mx_case c = {NCL_COLL_ALLREDUCE, NCL_ALGO_RING, count, NCL_INT32, NCL_SUM, 0, 0, 0};
        mx_add(&m, &c);
        assert_int_equal(mx_run(&m, &w->mx), 0);
        mx_free(&m);
        mmio_world_free(w);
    }
}

void mmio_world_test_bad_descriptor(const mmio_dev_ops *ops)
{
    mmio_opts o = {1, 16, 4, 2, 0, 0, 0};
    mmio_world *w = mmio_world_new(ops, 2, &o);
    const ncl_hal *h = ncl_mmio_hal(w->mm[0]);
    /* slot 0: the WRITE of the launch record (the mailbox), slot 1: the record */
    assert_int_equal(ncl_hal_notify_record(h, 2, 1, 7), NCL_SUCCESS);
    mmio_world_mem(w, 0, MMIO_RING_AT + NCL_MMIO_DESC_BYTES)[3] = 0x80; /* a reserved bit of word 0 */
    ops->settle(w->dev);
    int done = 1;
    assert_int_equal(ncl_hal_notify_try_wait(h, 1, 0, 1, &done), NCL_ERR_BACKEND);
    assert_int_equal(done, 0);
    const char *e = ncl_mmio_last_error(w->mm[0]);
    printf("%s\n", e);
    assert_non_null(strstr(e, "descriptor slot 1 (NOTIFY_RECORD"));
    assert_non_null(strstr(e, "BAD_DESC"));
    assert_non_null(strstr(e, "a record step 0 (task NOTIFY_RECORD to rank 1)"));
    mmio_world_check_up(w, 0, 1, 16);

    /* a LOCAL_COPY whose ring slot is rewritten (before the block fetches it) so its source lies
     * past the memory: ADDR_RANGE, named by slot, opcode and that address */
    ncl_hal_launch l;
    memset(&l, 0, sizeof l);
    l.seq = 1;
    l.send = mmio_dev_ptr(MMIO_SEND_AT);
    l.send_bytes = 4096;
    l.recv = mmio_dev_ptr(MMIO_RECV_AT);
    l.recv_bytes = 4096;
    assert_int_equal(ncl_hal_begin(h, &l), NCL_SUCCESS);
    ncl_task t;
    memset(&t, 0, sizeof t);
    t.kind = NCL_TASK_LOCAL_COPY;
    t.peer = -1;
    t.src.buf = NCL_BUF_SEND;
    t.dst.buf = NCL_BUF_RECV;
    t.bytes = 256;
    t.step = 42;
    uint32_t head = mmio_world_reg(w, 0, NCL_MMIO_RING_HEAD);
    assert_int_equal(ncl_hal_dma_submit(h, 1, &t), NCL_SUCCESS);
    const uint32_t bad_src = MMIO_MEM_BYTES + 0x2000u;
    memcpy(mmio_world_mem(w, 0, MMIO_RING_AT + 32u * head + 8), &bad_src, 4); /* word 2: SRC_LO */
    ncl_result rc = NCL_SUCCESS;
    done = 0;
    for (int k = 0; k < 100 && rc == NCL_SUCCESS && !done; k++) {
        ncl_hal_wait_event(h, 100000);
        rc = ncl_hal_dma_poll(h, 1, &done);
    }
    e = ncl_mmio_last_error(w->mm[0]);
    printf("%s\n", e);
    assert_int_equal(rc, NCL_ERR_BACKEND);
    char want[64];
    snprintf(want, sizeof want, "descriptor slot %u (LOCAL_COPY", head);
    assert_non_null(strstr(e, want));
    assert_non_null(strstr(e, "ADDR_RANGE"));
    assert_non_null(strstr(e, "address 0x402000"));
    assert_int_equal(ncl_hal_end(h, rc), NCL_SUCCESS);
    mmio_world_check_up(w, 0, 1, 16);
    for (uint32_t i = 0; i < 256; i++)
        assert_int_equal(mmio_world_mem(w, 0, MMIO_RECV_AT)[i], 0); /* nothing moved */
    mmio_world_free(w);
}

void mmio_world_test_silent_peer(const mmio_dev_ops *ops)
{
    for (int irq = 0; irq <= 1; irq++) {
        mmio_opts o = {irq, 0, 4, 2, 0, 0, 0};
        mmio_world *w = mmio_world_new(ops, 2, &o);
        ncl_result rc[MMIO_MAXR] = {NCL_SUCCESS, NCL_SUCCESS};
        int started[MMIO_MAXR] = {1, 0};
        uint64_t t0 = ops->now(w->dev);
        rc[0] = ncl_allreduce_start(mmio_dev_ptr(MMIO_SEND_AT), mmio_dev_ptr(MMIO_RECV_AT), 1000, NCL_FLOAT32,
                                    NCL_SUM, w->comm[0]);
        assert_true(mmio_world_drive(w, started, rc));
        uint64_t took = ops->now(w->dev) - t0;
        printf("%s: after %llu ns simulated: %s\n", irq ? "irq" : "polled", (unsigned long long)took,
               ncl_comm_last_error(w->comm[0]));
        assert_int_equal(rc[0], NCL_ERR_TIMEOUT);
        assert_non_null(strstr(ncl_comm_last_error(w->comm[0]), "from rank 1"));
        assert_true(took >= MMIO_COMM_TIMEOUT_NS);
        assert_true(took < MMIO_COMM_TIMEOUT_NS + MMIO_COMM_TIMEOUT_NS / 2);
        mmio_world_check_up(w, 0, irq, 256); /* a failed collective resets the block at end() */
        mmio_world_free(w);
    }
}

/* Rank `odd` starts what `how` says, every other rank an allreduce of 900 float32 sums. */
static ncl_result mismatch_start(mmio_world *w, int r, int odd, char how)
{
    void *sb = mmio_dev_ptr(MMIO_SEND_AT), *rb = mmio_dev_ptr(MMIO_RECV_AT);
    if (r != odd)
        return ncl_allreduce_start(sb, rb, 900, NCL_FLOAT32, NCL_SUM, w->comm[r]);
    switch (how) {
    case 'c': return ncl_allreduce_start(sb, rb, 500, NCL_FLOAT32, NCL_SUM, w->comm[r]);
    case 'd': return ncl_allreduce_start(sb, rb, 900, NCL_INT32, NCL_SUM, w->comm[r]);
    case 'o': return ncl_allreduce_start(sb, rb, 900, NCL_FLOAT32, NCL_MAX, w->comm[r]);
    default: return ncl_broadcast_start(sb, rb, 900, NCL_FLOAT32, 0, w->comm[r]);
    }
}

void mmio_world_test_mismatch(const mmio_dev_ops *ops)
{
    static const struct { int n; char how; const char *named; } cases[] = {
        {2, 'c', "called allreduce #1 with count 500, rank 0 with count 900"},
        {2, 'd', "called allreduce #1 with dtype int32, rank 0 with float"},
        {2, 'o', "called allreduce #1 with op max, rank 0 with sum"},
        {2, 'b', "called broadcast #1, rank 0 allreduce #1"},
        {4, 'c', "called allreduce #1 with count 500, rank "},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mmio_opts o = {(int)(i % 2), 0, 4, 2, 0, 0, 0};
        mmio_world *w = mmio_world_new(ops, cases[i].n, &o);
        ncl_result rc[MMIO_MAXR];
        int started[MMIO_MAXR] = {0}, named = 0;
        for (int r = 0; r < cases[i].n; r++) {
            started[r] = 1;
            rc[r] = mismatch_start(w, r, 1, cases[i].how);
        }
        assert_true(mmio_world_drive(w, started, rc));
        for (int r = 0; r < cases[i].n; r++) {
            const char *e = ncl_comm_last_error(w->comm[r]);
            printf("%d ranks, '%c': rank %d: %s: %s\n", cases[i].n, cases[i].how, r, ncl_strerror(rc[r]), e);
            /* no rank succeeds; who sees the other's record names the field, the rest time out */
            assert_true(rc[r] == NCL_ERR_REMOTE || (cases[i].n > 2 && rc[r] == NCL_ERR_TIMEOUT));
            if (rc[r] == NCL_ERR_REMOTE) {
                assert_non_null(strstr(e, "mismatch: rank "));
                named += strstr(e, cases[i].named) != NULL;
            }
            /* software's finding: no block stopped (a peer's late record may still raise NOTIFY) */
            assert_int_equal(mmio_world_reg(w, r, NCL_MMIO_ERR_STATUS), 0);
        }
        assert_true(named >= 1); /* rank 1's peer names it as the text says */
        mmio_world_free(w);
    }
}

/* ---- sub-communicators ------------------------------------------------------------------------- */

typedef struct grp_run {
    ncl_comm *comm[2 * MMIO_MAXR];
    int rank[2 * MMIO_MAXR];
    ncl_result rc[2 * MMIO_MAXR];
    int n;
} grp_run;

/* Started ops (comm on the block of rank) to the end: ncl_test round-robin, then every block's
 * wait; 1 when all finished. */
static int grp_drive(mmio_world *w, grp_run *g)
{
    int done[2 * MMIO_MAXR] = {0}, left = 0;
    for (int i = 0; i < g->n; i++)
        left += !(done[i] = g->rc[i] != NCL_SUCCESS);
    for (long it = 0; left; it++) {
        if (it >= w->ops->max_rounds)
            return 0;
        for (int i = 0; i < g->n; i++) {
            int d = 0;
            if (done[i])
                continue;
            ncl_result x = ncl_test(g->comm[i], &d);
            if (d)
                done[i] = 1, g->rc[i] = x, left--;
        }
        for (int r = 0; r < w->n; r++)
            ncl_hal_wait_event(ncl_mmio_hal(w->mm[r]), 1000000);
    }
    return w->ops->settle(w->dev);
}

static void grp_add(grp_run *g, int rank, ncl_comm *c, ncl_result started)
{
    g->comm[g->n] = c;
    g->rank[g->n] = rank;
    g->rc[g->n++] = started;
}

/* Rank r's input for the allreduce at offset `at` of SEND: element i is (at + r + 1) * 1000 + i. */
static void grp_fill(mmio_world *w, int r, uint64_t at, size_t count)
{
    int32_t *x = (int32_t *)(void *)mmio_world_mem(w, r, MMIO_SEND_AT + at);
    for (size_t i = 0; i < count; i++)
        x[i] = (int32_t)((at / 4096 + (uint64_t)r + 1) * 1000 + i);
}

/* The sum over `members` of grp_fill's inputs, at RECV + at on every member. */
static void grp_check(mmio_world *w, const int *members, int n, uint64_t at, size_t count)
{
    for (int k = 0; k < n; k++) {
        const int32_t *y = (const int32_t *)(const void *)mmio_world_mem(w, members[k], MMIO_RECV_AT + at);
        for (size_t i = 0; i < count; i++) {
            int64_t want = 0;
            for (int j = 0; j < n; j++)
                want += (int64_t)((at / 4096 + (uint64_t)members[j] + 1) * 1000 + i);
            if (y[i] != (int32_t)want)
                fail_msg("rank %d at RECV+%llu element %zu: %d, want %lld", members[k], (unsigned long long)at, i,
                         y[i], (long long)want);
        }
    }
}

static ncl_result grp_allreduce(ncl_comm *c, uint64_t at, size_t count)
{
    return ncl_allreduce_start(mmio_dev_ptr(MMIO_SEND_AT + at), mmio_dev_ptr(MMIO_RECV_AT + at), count, NCL_INT32,
                               NCL_SUM, c);
}

void mmio_world_test_groups(const mmio_dev_ops *ops)
{
    mmio_opts o = {0, 0, 4, 2, 0, 0, 4};
    mmio_world *w = mmio_world_new(ops, 4, &o);
    const size_t count = 3001; /* several slices of 16 KiB at 2 channels */
    const uint64_t A = 0, B = 64u << 10, W = 128u << 10; /* each communicator its part of SEND/RECV */
    ncl_comm *pa[MMIO_MAXR], *pb[MMIO_MAXR];
    for (int r = 0; r < 4; r++) {
        const int32_t a[2] = {r & ~1, r | 1}, b[2] = {r & 1, (r & 1) + 2};
        assert_int_equal(ncl_comm_create_group(w->comm[r], a, 2, 1, NULL, &pa[r]), NCL_SUCCESS);
        assert_int_equal(ncl_comm_create_group(w->comm[r], b, 2, 2, NULL, &pb[r]), NCL_SUCCESS);
        grp_fill(w, r, A, count);
        grp_fill(w, r, B, count);
        grp_fill(w, r, W, count);
    }
    /* both groupings and the world at once, three times (the maps are made once, then reused) */
    for (int round = 0; round < 3; round++) {
        grp_run g = {.n = 0};
        for (int r = 0; r < 4; r++) {
            grp_add(&g, r, pa[r], grp_allreduce(pa[r], A, count));
            grp_add(&g, r, pb[r], grp_allreduce(pb[r], B, count));
        }
        assert_true(grp_drive(w, &g));
        for (int i = 0; i < g.n; i++)
            if (g.rc[i] != NCL_SUCCESS)
                fail_msg("round %d: rank %d: %s", round, g.rank[i], ncl_comm_last_error(g.comm[i]));
        static const int a0[2] = {0, 1}, a1[2] = {2, 3}, b0[2] = {0, 2}, b1[2] = {1, 3};
        grp_check(w, a0, 2, A, count);
        grp_check(w, a1, 2, A, count);
        grp_check(w, b0, 2, B, count);
        grp_check(w, b1, 2, B, count);
        grp_run wg = {.n = 0};
        for (int r = 0; r < 4; r++)
            grp_add(&wg, r, w->comm[r], grp_allreduce(w->comm[r], W, count));
        assert_true(grp_drive(w, &wg));
        for (int r = 0; r < 4; r++)
            assert_int_equal(wg.rc[r], NCL_SUCCESS);
        static const int all[4] = {0, 1, 2, 3};
        grp_check(w, all, 4, W, count);
    }
    /* send/recv: a ring shift, every rank sending to the next and receiving from the one before */
    {
        grp_run g = {.n = 0};
        ncl_comm *op;
        for (int r = 0; r < 4; r++) {
            ncl_result rc = ncl_send_start(mmio_dev_ptr(MMIO_SEND_AT + W), count, NCL_INT32, (r + 1) % 4, w->comm[r], &op);
            grp_add(&g, r, op, rc);
            rc = ncl_recv_start(mmio_dev_ptr(MMIO_RECV_AT + A), count, NCL_INT32, (r + 3) % 4, w->comm[r], &op);
            grp_add(&g, r, op, rc);
        }
        assert_true(grp_drive(w, &g));
        for (int i = 0; i < g.n; i++)
            if (g.rc[i] != NCL_SUCCESS)
                fail_msg("send/recv: rank %d: %s", g.rank[i], ncl_comm_last_error(g.comm[i]));
        for (int r = 0; r < 4; r++) {
            const int32_t *y = (const int32_t *)(const void *)mmio_world_mem(w, r, MMIO_RECV_AT + A);
            const int32_t *x = (const int32_t *)(const void *)mmio_world_mem(w, (r + 3) % 4, MMIO_SEND_AT + W);
            assert_memory_equal(y, x, count * sizeof *x);
        }
    }
    /* rank 1 never calls group {0,1}: rank 0's call times out naming the group; meanwhile group
     * {2,3} and then the world run; the failed group stays failed */
    {
        grp_run g = {.n = 0};
        grp_add(&g, 0, pa[0], grp_allreduce(pa[0], A, count));
        grp_add(&g, 2, pa[2], grp_allreduce(pa[2], A, count));
        grp_add(&g, 3, pa[3], grp_allreduce(pa[3], A, count));
        assert_true(grp_drive(w, &g));
        printf("group {0,1} without rank 1: %s\n", ncl_comm_last_error(pa[0]));
        assert_int_equal(g.rc[0], NCL_ERR_TIMEOUT);
        assert_non_null(strstr(ncl_comm_last_error(pa[0]), "group 1"));
        assert_int_equal(g.rc[1], NCL_SUCCESS);
        assert_int_equal(g.rc[2], NCL_SUCCESS);
        grp_run wg = {.n = 0};
        for (int r = 0; r < 4; r++)
            grp_add(&wg, r, w->comm[r], grp_allreduce(w->comm[r], W, count));
        assert_true(grp_drive(w, &wg));
        for (int r = 0; r < 4; r++)
            if (wg.rc[r] != NCL_SUCCESS)
                fail_msg("world after a group's failure: rank %d: %s", r, ncl_comm_last_error(w->comm[r]));
        assert_int_not_equal(grp_allreduce(pa[0], A, count), NCL_SUCCESS);
    }
    /* destroyed groups give their contexts back; past the number of contexts a split is refused */
    for (int r = 0; r < 4; r++) {
        ncl_comm_destroy(pa[r]);
        ncl_comm_destroy(pb[r]);
    }
    ncl_comm *extra[5] = {NULL};
    const int32_t pair[2] = {0, 1};
    int made = 0;
    ncl_result rc = NCL_SUCCESS;
    /* the send/recv above holds 2 contexts on rank 0 (its pair communicators), so 2 more fit */
    while (made < 5 && (rc = ncl_comm_create_group(w->comm[0], pair, 2, 10u + (uint32_t)made, NULL, &extra[made])) ==
                           NCL_SUCCESS)
        made++;
    printf("after %d more groups: %s\n", made, ncl_comm_last_error(w->comm[0]));
    assert_int_equal(made, 2);
    assert_int_equal(rc, NCL_ERR_UNSUPPORTED);
    assert_non_null(strstr(ncl_comm_last_error(w->comm[0]), "contexts"));
    for (int i = 0; i < made; i++)
        ncl_comm_destroy(extra[i]);
    mmio_world_free(w);
}
