/* test_mmio_ref.c — the mmio HAL backend driving N linked rs_ref_dev devices (the C reference of the DMA/notify block): bring-up, collectives bit-exact, error paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <ncl/ncl.h>
#include <ncl/ncl_dtype.h>
#include <ncl/ncl_mmio.h>
#include <ncl/ncl_mmio_regs.h>

#include "sweep/rs_data.h"
#include "rs_ref_dev.h"

/* Device memory map of every rank (symmetric: every rank passes the same addresses). */
#define MAXR 4
#define MEM_BYTES (4u << 20)
#define RING_AT 0x1000u
#define SCRATCH_AT 0x10000u
#define SCRATCH_BYTES (1u << 20)
#define SEND_AT 0x200000u
#define RECV_AT 0x300000u
#define BUF_BYTES (1u << 20)
#define BOUNCE_BYTES 4096u
#define SEED 0x5eedull
#define STEP_NS 10u     /* simulated time per executed descriptor */
#define IDLE_NS 1000u   /* simulated time a hook lets pass when nothing moved */
#define COMM_TIMEOUT_NS 3000000ull /* engine's notify timeout: 3 ms simulated */

typedef struct world world;
typedef struct port {
    world *w;
    int rank;
} port;

struct world {
    int n;
    rs_ref_dev *dev[MAXR];
    port ports[MAXR];
    uint64_t now;
    /* bring-up fault injection: nonzero replaces what the register reads */
    uint32_t fake_id, fake_version, fake_caps;
    unsigned bus_errors, mem_faults;
    uint64_t hook_calls;
    ncl_mmio *mm[MAXR];
    void *mm_mem[MAXR];
    _Alignas(16) unsigned char bounce[MAXR][BOUNCE_BYTES];
    ncl_comm *comm[MAXR];
    char log[8192];
    size_t log_len;
};

static int verbose;

/* ---- the devices and their link ---------------------------------------------------------- */

static int net_link(void *ctx, const rs_ref_link_msg *m)
{
    world *w = ctx;
    if (m->peer >= w->n)
        return 1;
    return rs_ref_dev_link_rx(w->dev[m->peer], m);
}

/* Runs every device until none can execute a descriptor; returns how many executed. */
static uint64_t world_step(world *w)
{
    uint64_t total = 0, k;
    do {
        k = 0;
        for (int r = 0; r < w->n; r++)
            k += rs_ref_dev_run(w->dev[r], 1u << 20);
        total += k;
    } while (k);
    w->now += total * STEP_NS;
    return total;
}

/* ---- access functions: what a board does with volatile loads/stores -------------------------- */

static uint32_t acc_rd(void *ctx, uint32_t off)
{
    port *p = ctx;
    world *w = p->w;
    if (off == NCL_MMIO_ID && w->fake_id)
        return w->fake_id;
    if (off == NCL_MMIO_VERSION && w->fake_version)
        return w->fake_version;
    if (off == NCL_MMIO_CAPS && w->fake_caps)
        return w->fake_caps;
    int err = 0;
    uint32_t v = rs_ref_dev_read(w->dev[p->rank], off, &err);
    w->bus_errors += err != 0;
    return v;
}

static void acc_wr(void *ctx, uint32_t off, uint32_t v)
{
    port *p = ctx;
    p->w->bus_errors += rs_ref_dev_write(p->w->dev[p->rank], off, v) != 0;
}

static int acc_mem_write(void *ctx, uint64_t a, const void *src, uint64_t n)
{
    port *p = ctx;
    rs_ref_dev *d = p->w->dev[p->rank];
    if (a > rs_ref_dev_mem_bytes(d) || n > rs_ref_dev_mem_bytes(d) - a)
        return p->w->mem_faults++, 1;
    memcpy(rs_ref_dev_mem(d) + a, src, n);
    return 0;
}

static int acc_mem_read(void *ctx, uint64_t a, void *dst, uint64_t n)
{
    port *p = ctx;
    rs_ref_dev *d = p->w->dev[p->rank];
    if (a > rs_ref_dev_mem_bytes(d) || n > rs_ref_dev_mem_bytes(d) - a)
        return p->w->mem_faults++, 1;
    memcpy(dst, rs_ref_dev_mem(d) + a, n);
    return 0;
}

/* Simulation's "sleep until irq": advance every device; if nothing moves, let time pass and
 * return (spuriously) so the other ranks' firmware gets to run. */
static int acc_wait_irq(void *ctx, uint64_t timeout_ns)
{
    port *p = ctx;
    world *w = p->w;
    (void)timeout_ns;
    w->hook_calls++;
    for (;;) {
        if (rs_ref_dev_irq(w->dev[p->rank]))
            return 1;
        if (!world_step(w)) {
            w->now += IDLE_NS;
            return rs_ref_dev_irq(w->dev[p->rank]);
        }
    }
}

/* Polled mode's yield: advance the devices; nothing moved: end the wait (other ranks' turn). */
static int acc_poll(void *ctx)
{
    port *p = ctx;
    world *w = p->w;
    w->hook_calls++;
    if (world_step(w))
        return 0;
    w->now += IDLE_NS;
    return 1;
}

static uint64_t acc_now(void *ctx) { return ((port *)ctx)->w->now; }

static void acc_log(void *ctx, int level, const char *msg)
{
    port *p = ctx;
    world *w = p->w;
    if (verbose)
        printf("[rank %d] %d: %s\n", p->rank, level, msg);
    int n = snprintf(w->log + w->log_len, sizeof w->log - w->log_len, "%s\n", msg);
    if (n > 0 && (size_t)n < sizeof w->log - w->log_len)
        w->log_len += (size_t)n;
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

/* ---- worlds --------------------------------------------------------------------------------- */

typedef struct wopts {
    int irq;
    uint32_t ring_entries, max_queues, channels;
    uint64_t slice_bytes;
} wopts;

/* 1 while test_allreduce_wide makes its worlds: deterministic with wide accumulation. */
static int wide_comms;

static ncl_mmio_config mmio_cfg(world *w, int r, const wopts *o)
{
    ncl_mmio_config c = NCL_MMIO_CONFIG_INIT;
    c.rank = r;
    c.nranks = w->n;
    c.ring_base = RING_AT;
    c.ring_entries = o->ring_entries ? o->ring_entries : 256;
    c.scratch_base = SCRATCH_AT;
    c.scratch_bytes = SCRATCH_BYTES;
    c.irq = o->irq;
    c.max_queues = o->max_queues ? o->max_queues : 4;
    c.timeout_ns = 1000000; /* 1 ms simulated for a free ring slot */
    c.bounce = w->bounce[r];
    c.bounce_bytes = BOUNCE_BYTES;
    c.log_level = verbose ? NCL_LOG_DEBUG : NCL_LOG_WARN;
    return c;
}

static ncl_mmio_access mmio_access(world *w, int r, int irq)
{
    ncl_mmio_access a = {acc_rd, acc_wr, acc_mem_write, acc_mem_read, irq ? acc_wait_irq : NULL,
                         irq ? NULL : acc_poll, acc_now, acc_log, &w->ports[r]};
    return a;
}

/* Devices only (bring-up tests make their own backends). */
static world *world_devices(int n)
{
    world *w = calloc(1, sizeof *w);
    assert_non_null(w);
    w->n = n;
    for (int r = 0; r < n; r++) {
        w->dev[r] = rs_ref_dev_new(MEM_BYTES, net_link, w);
        assert_non_null(w->dev[r]);
        w->ports[r].w = w;
        w->ports[r].rank = r;
    }
    return w;
}

static ncl_result mmio_make(world *w, int r, const wopts *o)
{
    ncl_mmio_config c = mmio_cfg(w, r, o);
    ncl_mmio_access a = mmio_access(w, r, o->irq);
    size_t bytes = (ncl_mmio_mem_bytes(&c) + 15u) / 16u * 16u;
    free(w->mm_mem[r]);
    w->mm_mem[r] = aligned_alloc(16, bytes);
    assert_non_null(w->mm_mem[r]);
    return ncl_mmio_init(&w->mm[r], w->mm_mem[r], bytes, &c, &a);
}

static void comms_make(world *w, const wopts *o)
{
    for (int r = 0; r < w->n; r++) {
        ncl_comm_destroy(w->comm[r]);
        ncl_config cc = NCL_CONFIG_INIT;
        cc.alloc = t_alloc;
        cc.free = t_free;
        cc.timeout_ns = COMM_TIMEOUT_NS;
        cc.channels = o->channels ? o->channels : 2;
        cc.slice_bytes = o->slice_bytes ? o->slice_bytes : (16u << 10);
        cc.algorithm[NCL_COLL_ALLREDUCE] = NCL_ALGO_RING;
        cc.algorithm[NCL_COLL_BROADCAST] = NCL_ALGO_CHAIN;
        cc.algorithm[NCL_COLL_REDUCE] = NCL_ALGO_RING;
        cc.algorithm[NCL_COLL_REDUCE_SCATTER] = NCL_ALGO_RING;
        cc.algorithm[NCL_COLL_ALLGATHER] = NCL_ALGO_RING;
        cc.deterministic = wide_comms;
        cc.wide_accumulation = wide_comms;
        assert_int_equal(ncl_comm_create(&w->comm[r], w->n, r, ncl_mmio_hal(w->mm[r]), &cc), NCL_SUCCESS);
    }
}

static world *world_new(int n, const wopts *o)
{
    world *w = world_devices(n);
    for (int r = 0; r < n; r++)
        assert_int_equal(mmio_make(w, r, o), NCL_SUCCESS);
    comms_make(w, o);
    return w;
}

static void world_free(world *w)
{
    for (int r = 0; r < w->n; r++) {
        ncl_comm_destroy(w->comm[r]);
        ncl_mmio_fini(w->mm[r]);
        free(w->mm_mem[r]);
        rs_ref_dev_free(w->dev[r]);
    }
    free(w);
}

static uint32_t reg(world *w, int r, uint32_t off) { return rs_ref_dev_read(w->dev[r], off, NULL); }
static uint8_t *mem(world *w, int r, uint64_t a) { return rs_ref_dev_mem(w->dev[r]) + a; }

/* ---- driving collectives --------------------------------------------------------------------- */

/* Every rank's firmware round-robin (ncl_test), then its wait_event (the hooks step the devices).
 * Returns after every started rank finished; fails the test instead of hanging. */
static void drive(world *w, const int *started, ncl_result *rc)
{
    int done[MAXR] = {0}, left = 0;
    for (int r = 0; r < w->n; r++)
        left += started[r] && !(done[r] = rc[r] != NCL_SUCCESS);
    for (long it = 0; left; it++) {
        assert_true(it < 2000000);
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
    while (world_step(w)) /* the last records still in the rings */
        ;
}

typedef struct job {
    ncl_coll coll;
    ncl_dtype dt;
    ncl_op op;
    uint64_t count;
    int root, inplace;
    int algo; /* 0: the communicator's (ring; chain for broadcast) */
} job;

static void *dev_ptr(uint64_t a) { return (void *)(uintptr_t)a; }

/* Runs j on every rank with rs_data inputs; returns the number of wrong elements over all ranks. */
static uint64_t run_job(world *w, const job *j)
{
    const int n = w->n;
    const uint64_t es = ncl_dtype_size(j->dt), c = j->count, bytes = c * es;
    const ncl_op fill_op = j->coll == NCL_COLL_BROADCAST || j->coll == NCL_COLL_ALLGATHER ? NCL_MAX : j->op;
    ncl_result rc[MAXR];
    int started[MAXR];
    assert_true(bytes * (uint64_t)n <= BUF_BYTES);
    for (int r = 0; r < n; r++) {
        ncl_algo dflt = j->coll == NCL_COLL_BROADCAST ? NCL_ALGO_CHAIN : NCL_ALGO_RING;
        assert_int_equal(ncl_comm_set_algorithm(w->comm[r], j->coll, j->algo ? (ncl_algo)j->algo : dflt), NCL_SUCCESS);
        memset(mem(w, r, SEND_AT), 0xAB, BUF_BYTES);
        memset(mem(w, r, RECV_AT), 0xCD, BUF_BYTES);
        uint64_t send = j->inplace ? RECV_AT : SEND_AT, recv = RECV_AT;
        switch (j->coll) {
        case NCL_COLL_ALLREDUCE:
        case NCL_COLL_REDUCE:
            rs_data_fill(mem(w, r, send), c, j->dt, j->op, n, r, SEED, 0);
            ncl_mmio_set_peer_recv(w->mm[r], RECV_AT); /* reduce non-roots pass no recvbuf to the backend */
            rc[r] = j->coll == NCL_COLL_ALLREDUCE
                        ? ncl_allreduce_start(dev_ptr(send), dev_ptr(recv), c, j->dt, j->op, w->comm[r])
                        : ncl_reduce_start(dev_ptr(send), dev_ptr(recv), c, j->dt, j->op, j->root, w->comm[r]);
            break;
        case NCL_COLL_BROADCAST:
            if (r == j->root)
                rs_data_fill(mem(w, r, send), c, j->dt, NCL_MAX, n, r, SEED, 0);
            rc[r] = ncl_broadcast_start(dev_ptr(send), dev_ptr(recv), c, j->dt, j->root, w->comm[r]);
            break;
        case NCL_COLL_REDUCE_SCATTER:
            rs_data_fill(mem(w, r, send), c * (uint64_t)n, j->dt, j->op, n, r, SEED, 0);
            if (j->inplace)
                recv = RECV_AT + (uint64_t)r * bytes;
            rc[r] = ncl_reduce_scatter_start(dev_ptr(send), dev_ptr(recv), c, j->dt, j->op, w->comm[r]);
            break;
        case NCL_COLL_ALLGATHER:
            if (j->inplace)
                send = RECV_AT + (uint64_t)r * bytes;
            rs_data_fill(mem(w, r, send), c, j->dt, NCL_MAX, n, r, SEED, (uint64_t)r * c);
            rc[r] = ncl_allgather_start(dev_ptr(send), dev_ptr(recv), c, j->dt, w->comm[r]);
            break;
        default:
            fail();
        }
        started[r] = 1;
    }
    drive(w, started, rc);
    for (int r = 0; r < n; r++)
        if (rc[r] != NCL_SUCCESS)
            printf("%s %s %s count %llu ranks %d root %d %s: rank %d: %s: %s\n", ncl_coll_name(j->coll),
                   ncl_dtype_name(j->dt), ncl_op_name(j->op), (unsigned long long)c, n, j->root,
                   j->inplace ? "in place" : "out of place", r, ncl_strerror(rc[r]), ncl_comm_last_error(w->comm[r]));
    for (int r = 0; r < n; r++) {
        assert_int_equal(rc[r], NCL_SUCCESS);
        assert_int_equal(reg(w, r, NCL_MMIO_ERR_STATUS), 0);
    }
    assert_int_equal(w->bus_errors, 0);
    assert_int_equal(w->mem_faults, 0);

    uint64_t wrong = 0;
    void *want = malloc(BUF_BYTES);
    assert_non_null(want);
    for (int r = 0; r < n; r++) {
        const uint8_t *got = mem(w, r, RECV_AT);
        uint64_t cnt = c;
        switch (j->coll) {
        case NCL_COLL_ALLREDUCE:
            rs_data_expected(want, c, j->dt, j->op, n, SEED, 0, 1);
            break;
        case NCL_COLL_REDUCE:
            if (r != j->root)
                continue;
            rs_data_expected(want, c, j->dt, j->op, n, SEED, 0, 1);
            break;
        case NCL_COLL_BROADCAST:
            rs_data_fill(want, c, j->dt, NCL_MAX, n, j->root, SEED, 0);
            break;
        case NCL_COLL_REDUCE_SCATTER:
            rs_data_expected(want, c, j->dt, j->op, n, SEED, (uint64_t)r * c, 1);
            if (j->inplace)
                got += (uint64_t)r * bytes;
            break;
        case NCL_COLL_ALLGATHER:
            for (int k = 0; k < n; k++)
                rs_data_fill((uint8_t *)want + (uint64_t)k * bytes, c, j->dt, NCL_MAX, n, k, SEED, (uint64_t)k * c);
            cnt = c * (uint64_t)n;
            break;
        default:
            break;
        }
        uint64_t bad = rs_data_count_wrong(got, want, cnt, j->dt, fill_op);
        if (bad)
            printf("%s %s %s count %llu ranks %d root %d %s: rank %d has %llu wrong\n",
                   ncl_coll_name(j->coll), ncl_dtype_name(j->dt), ncl_op_name(j->op),
                   (unsigned long long)c, n, j->root, j->inplace ? "in place" : "out of place", r,
                   (unsigned long long)bad);
        wrong += bad;
    }
    free(want);
    return wrong;
}

static void stats_sum(world *w, ncl_mmio_stats *s)
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
        for (int k = 0; k < 8; k++)
            s->opcodes[k] += x.opcodes[k];
    }
}

/* ---- bring-up --------------------------------------------------------------------------------- */

static void check_brought_up(world *w, int r, int irq, uint32_t entries)
{
    assert_int_equal(reg(w, r, NCL_MMIO_CTRL), NCL_MMIO_CTRL_ENABLE_MASK | (irq ? NCL_MMIO_CTRL_IRQ_EN_MASK : 0));
    assert_int_equal(reg(w, r, NCL_MMIO_IRQ_MASK), irq ? 0xFu : 0u);
    assert_int_equal(reg(w, r, NCL_MMIO_RING_BASE_LO), RING_AT);
    assert_int_equal(reg(w, r, NCL_MMIO_RING_BASE_HI), 0);
    assert_int_equal(reg(w, r, NCL_MMIO_RING_SIZE), entries);
    assert_int_equal(reg(w, r, NCL_MMIO_RING_TAIL), 0);
    assert_int_equal(reg(w, r, NCL_MMIO_RING_HEAD), 0);
    assert_int_equal(reg(w, r, NCL_MMIO_ERR_STATUS), 0);
    assert_int_equal(reg(w, r, NCL_MMIO_IRQ_STATUS), 0);
    assert_int_not_equal(reg(w, r, NCL_MMIO_SCRATCH), 0); /* the write/read-back check's pattern */
}

static void test_bringup(void **state)
{
    (void)state;
    for (int irq = 0; irq <= 1; irq++) {
        wopts o = {irq, 64, 4, 2, 0};
        world *w = world_new(2, &o);
        for (int r = 0; r < 2; r++)
            check_brought_up(w, r, irq, 64);
        /* a doorbell-to-irq round trip through the HAL: a record to ourselves */
        const ncl_hal *h = ncl_mmio_hal(w->mm[0]);
        assert_int_equal(ncl_hal_notify_record(h, 0, 0, 3), NCL_SUCCESS);
        assert_int_equal(reg(w, 0, NCL_MMIO_RING_TAIL), 1);
        int done = 0;
        assert_int_equal(ncl_hal_notify_try_wait(h, 0, 3, 1, &done), NCL_SUCCESS);
        assert_int_equal(done, 0); /* the block has not run it yet */
        assert_int_equal(ncl_hal_wait_event(h, 1000000), NCL_SUCCESS);
        assert_int_equal(reg(w, 0, NCL_MMIO_RING_HEAD), 1);
        assert_int_equal(reg(w, 0, NCL_MMIO_IRQ_STATUS), 0); /* the events were taken */
        assert_int_equal(ncl_hal_notify_try_wait(h, 0, 3, 1, &done), NCL_SUCCESS);
        assert_int_equal(done, 1);
        assert_int_equal(reg(w, 0, NCL_MMIO_NOTIFY_CNT(3)), 0); /* consumed */
        ncl_mmio_stats s;
        ncl_mmio_get_stats(w->mm[0], &s);
        assert_int_equal(s.bringups, 1);
        assert_int_equal(s.descriptors, 1);
        assert_true(irq ? s.irq_waits == 1 && s.polls == 0 : s.polls >= 1 && s.irq_waits == 0);
        assert_int_equal(w->bus_errors, 0);
        world_free(w);
    }
}

static void test_bringup_refused(void **state)
{
    (void)state;
    wopts o = {1, 64, 4, 2, 0};
    world *w = world_devices(4);
    w->fake_id = 0xDEADBEEFu;
    assert_int_equal(mmio_make(w, 0, &o), NCL_ERR_BACKEND);
    assert_non_null(strstr(ncl_mmio_last_error(w->mm[0]), "0xdeadbeef"));
    assert_non_null(strstr(ncl_mmio_last_error(w->mm[0]), "RSIM"));
    w->fake_id = 0;
    w->fake_version = 0x00020003u;
    assert_int_equal(mmio_make(w, 0, &o), NCL_ERR_UNSUPPORTED);
    assert_non_null(strstr(ncl_mmio_last_error(w->mm[0]), "version 2.3"));
    w->fake_version = 0;
    w->fake_caps = (NCL_MMIO_CAPS_RESET & ~NCL_MMIO_CAPS_NOTIFY_COUNT_MASK) | 7u; /* 7 counters, 4 ranks */
    assert_int_equal(mmio_make(w, 0, &o), NCL_ERR_UNSUPPORTED);
    assert_non_null(strstr(ncl_mmio_last_error(w->mm[0]), "too few notify counters"));
    w->fake_caps = (NCL_MMIO_CAPS_RESET & ~NCL_MMIO_CAPS_RING_MAX_LOG2_MASK) | (4u << NCL_MMIO_CAPS_RING_MAX_LOG2_SHIFT);
    assert_int_equal(mmio_make(w, 0, &o), NCL_ERR_UNSUPPORTED); /* a 64-entry ring on a 16-entry block */
    assert_non_null(strstr(ncl_mmio_last_error(w->mm[0]), "2^4"));
    w->fake_caps = 0;
    /* config errors: before any register access */
    wopts bad = o;
    bad.max_queues = 99;
    assert_int_equal(mmio_make(w, 0, &bad), NCL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(ncl_mmio_last_error(w->mm[0]), "max_queues"));
    /* and a good one still comes up on the same block */
    assert_int_equal(mmio_make(w, 0, &o), NCL_SUCCESS);
    check_brought_up(w, 0, 1, 64);
    world_free(w);
}

/* ---- notify mapping -------------------------------------------------------------------------- */

static void test_notify_mapping(void **state)
{
    (void)state;
    wopts o = {0, 64, 4, 2, 0};
    world *w = world_new(4, &o);
    /* rank 0 records id 5 to rank 1: counter (sender 0, id 5) at rank 1 is d = (0 - 1) mod 4 = 3 */
    assert_int_equal(ncl_hal_notify_record(ncl_mmio_hal(w->mm[0]), 0, 1, 5), NCL_SUCCESS);
    assert_int_equal(ncl_hal_notify_record(ncl_mmio_hal(w->mm[2]), 1, 1, 31), NCL_SUCCESS);
    world_step(w);
    assert_int_equal(reg(w, 1, NCL_MMIO_NOTIFY_CNT(3 * 32 + 5)), 1);
    assert_int_equal(reg(w, 1, NCL_MMIO_NOTIFY_CNT(1 * 32 + 31)), 1); /* sender 2: d = 1 */
    int done = 0;
    const ncl_hal *h1 = ncl_mmio_hal(w->mm[1]);
    assert_int_equal(ncl_hal_notify_try_wait(h1, 2, 5, 1, &done), NCL_SUCCESS);
    assert_int_equal(done, 0); /* (2, 5) is not (0, 5): no aliasing */
    assert_int_equal(ncl_hal_notify_try_wait(h1, 0, 5, 2, &done), NCL_SUCCESS);
    assert_int_equal(done, 0); /* not enough yet */
    assert_int_equal(ncl_hal_notify_try_wait(h1, 0, 5, 1, &done), NCL_SUCCESS);
    assert_int_equal(done, 1);
    assert_int_equal(ncl_hal_notify_try_wait(h1, 2, 31, 1, &done), NCL_SUCCESS);
    assert_int_equal(done, 1);
    for (uint32_t i = 0; i < NCL_MMIO_NOTIFY_COUNT; i++)
        assert_int_equal(reg(w, 1, NCL_MMIO_NOTIFY_CNT(i)), 0);
    /* the FENCE flag on records, the LOCAL flag on self-records */
    uint32_t w0 = (uint32_t)mem(w, 0, RING_AT)[0] | (uint32_t)mem(w, 0, RING_AT)[1] << 8 |
                  (uint32_t)mem(w, 0, RING_AT)[2] << 16 | (uint32_t)mem(w, 0, RING_AT)[3] << 24;
    assert_int_equal(NCL_MMIO_GET(NCL_MMIO_DESC_OPCODE, w0), NCL_MMIO_OPC_NOTIFY_RECORD);
    assert_int_equal(NCL_MMIO_GET(NCL_MMIO_DESC_FENCE, w0), 1);
    assert_int_equal(NCL_MMIO_GET(NCL_MMIO_DESC_LOCAL, w0), 0);
    world_free(w);

    /* 16 counters for 4 ranks: 4 ids each; id 4 is refused with a message, never aliased */
    world *v = world_devices(4);
    v->fake_caps = (NCL_MMIO_CAPS_RESET & ~NCL_MMIO_CAPS_NOTIFY_COUNT_MASK) | 16u;
    for (int r = 0; r < 4; r++)
        assert_int_equal(mmio_make(v, r, &o), NCL_SUCCESS);
    assert_int_equal(ncl_hal_notify_record(ncl_mmio_hal(v->mm[0]), 0, 1, 3), NCL_SUCCESS);
    assert_int_equal(ncl_hal_notify_record(ncl_mmio_hal(v->mm[0]), 0, 1, 4), NCL_ERR_UNSUPPORTED);
    assert_non_null(strstr(ncl_mmio_last_error(v->mm[0]), "notify id 4"));
    assert_int_equal(ncl_hal_notify_try_wait(ncl_mmio_hal(v->mm[1]), 0, 4, 1, &done), NCL_ERR_UNSUPPORTED);
    world_step(v);
    assert_int_equal(reg(v, 1, NCL_MMIO_NOTIFY_CNT(3 * 4 + 3)), 1);
    assert_int_equal(v->bus_errors, 0);
    world_free(v);
}

/* ---- task routing: which tasks become which descriptors, which run on the controller -------- */

static uint32_t ld32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static void st32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Submits t on queue 0 of rank r, lets the devices run, waits for completion. */
static ncl_result submit_wait(world *w, int r, const ncl_task *t)
{
    const ncl_hal *h = ncl_mmio_hal(w->mm[r]);
    ncl_result rc = ncl_hal_dma_submit(h, 0, t);
    if (rc != NCL_SUCCESS)
        return rc;
    for (int i = 0; i < 100; i++) {
        int done = 0;
        rc = ncl_hal_dma_poll(h, 0, &done);
        if (rc != NCL_SUCCESS || done)
            return rc;
        ncl_hal_wait_event(h, 1000000);
    }
    return NCL_ERR_TIMEOUT;
}

static ncl_task mk(uint8_t kind, uint8_t dt, uint8_t op, int peer, uint32_t sbuf, uint64_t soff,
                   uint32_t dbuf, uint64_t doff, uint64_t bytes)
{
    ncl_task t;
    memset(&t, 0, sizeof t);
    t.kind = kind;
    t.dtype = dt;
    t.op = op;
    t.peer = peer;
    t.src.buf = sbuf;
    t.src.off = soff;
    t.dst.buf = dbuf;
    t.dst.off = doff;
    t.bytes = bytes;
    t.step = 42;
    return t;
}

static void test_task_routing(void **state)
{
    (void)state;
    wopts o = {1, 16, 4, 2, 0};
    world *w = world_devices(2);
    for (int r = 0; r < 2; r++)
        assert_int_equal(mmio_make(w, r, &o), NCL_SUCCESS);
    ncl_hal_launch l;
    memset(&l, 0, sizeof l);
    l.seq = 1;
    l.send = dev_ptr(SEND_AT);
    l.send_bytes = 4096;
    l.recv = dev_ptr(RECV_AT);
    l.recv_bytes = 16384;
    for (int r = 0; r < 2; r++)
        assert_int_equal(ncl_hal_begin(ncl_mmio_hal(w->mm[r]), &l), NCL_SUCCESS);
    uint8_t *s0 = mem(w, 0, SEND_AT), *r0 = mem(w, 0, RECV_AT), *r1 = mem(w, 1, RECV_AT);
    for (uint32_t i = 0; i < 256; i++) {
        st32(s0 + 4 * i, i * 3u);
        st32(r0 + 4 * i, 1000u + i);
        st32(r1 + 4 * i, 7u * i);
    }
    ncl_mmio_stats a, b;
    ncl_mmio_get_stats(w->mm[0], &a);
    /* int32 LOCAL_REDUCE: the block's lanes */
    ncl_task t = mk(NCL_TASK_LOCAL_REDUCE, NCL_INT32, NCL_SUM, -1, NCL_BUF_SEND, 0, NCL_BUF_RECV, 0, 64);
    assert_int_equal(submit_wait(w, 0, &t), NCL_SUCCESS);
    for (uint32_t i = 0; i < 16; i++)
        assert_int_equal(ld32(r0 + 4 * i), 1000u + i + 3u * i);
    /* WRITE_REDUCE int32 max to rank 1: the peer's lanes */
    t = mk(NCL_TASK_WRITE_REDUCE, NCL_INT32, NCL_MAX, 1, NCL_BUF_SEND, 64, NCL_BUF_RECV, 64, 64);
    assert_int_equal(submit_wait(w, 0, &t), NCL_SUCCESS);
    for (uint32_t i = 16; i < 32; i++)
        assert_int_equal(ld32(r1 + 4 * i), 7u * i > 3u * i ? 7u * i : 3u * i);
    /* WRITE to ourselves: a LOCAL_COPY, no link */
    t = mk(NCL_TASK_WRITE, 0, 0, 0, NCL_BUF_SEND, 128, NCL_BUF_SCRATCH, 0, 10);
    assert_int_equal(submit_wait(w, 0, &t), NCL_SUCCESS);
    assert_memory_equal(mem(w, 0, SCRATCH_AT), s0 + 128, 10);
    ncl_mmio_get_stats(w->mm[0], &b);
    assert_int_equal(b.opcodes[NCL_MMIO_OPC_LOCAL_REDUCE] - a.opcodes[NCL_MMIO_OPC_LOCAL_REDUCE], 1);
    assert_int_equal(b.opcodes[NCL_MMIO_OPC_WRITE_REDUCE] - a.opcodes[NCL_MMIO_OPC_WRITE_REDUCE], 1);
    assert_int_equal(b.opcodes[NCL_MMIO_OPC_LOCAL_COPY] - a.opcodes[NCL_MMIO_OPC_LOCAL_COPY], 1);
    assert_int_equal(b.controller_ops, a.controller_ops);

    /* on the controller: LOCAL_REDUCE int32 prod, a misaligned int32 sum, fp16, LOCAL_DIV,
     * an overlapping LOCAL_COPY (memmove semantics) */
    static uint8_t want[16384];
    static uint32_t ta[1024], tb[1024]; /* aligned operands for the expected values */
    memcpy(want, r0, sizeof want);
    t = mk(NCL_TASK_LOCAL_REDUCE, NCL_INT32, NCL_PROD, -1, NCL_BUF_SEND, 0, NCL_BUF_RECV, 256, 3000);
    ncl_reduce_kernel(want + 256, s0, 750, NCL_INT32, NCL_PROD);
    assert_int_equal(submit_wait(w, 0, &t), NCL_SUCCESS);
    assert_memory_equal(r0, want, sizeof want);
    t = mk(NCL_TASK_LOCAL_REDUCE, NCL_INT32, NCL_SUM, -1, NCL_BUF_SEND, 2, NCL_BUF_RECV, 6, 400);
    memcpy(ta, want + 6, 400);
    memcpy(tb, s0 + 2, 400);
    ncl_reduce_kernel(ta, tb, 100, NCL_INT32, NCL_SUM);
    memcpy(want + 6, ta, 400);
    assert_int_equal(submit_wait(w, 0, &t), NCL_SUCCESS);
    assert_memory_equal(r0, want, sizeof want);
    t = mk(NCL_TASK_LOCAL_REDUCE, NCL_FLOAT16, NCL_MAX, -1, NCL_BUF_SEND, 0, NCL_BUF_RECV, 0, 2050);
    ncl_reduce_kernel(want, s0, 1025, NCL_FLOAT16, NCL_MAX);
    assert_int_equal(submit_wait(w, 0, &t), NCL_SUCCESS);
    assert_memory_equal(r0, want, sizeof want);
    t = mk(NCL_TASK_LOCAL_DIV, NCL_INT32, 0, -1, 0, 0, NCL_BUF_RECV, 4100, 9000); /* 3 bounce chunks */
    t.count = 3;
    ncl_div_kernel(want + 4100, 2250, NCL_INT32, 3);
    assert_int_equal(submit_wait(w, 0, &t), NCL_SUCCESS);
    assert_memory_equal(r0, want, sizeof want);
    for (int dir = 0; dir < 2; dir++) {
        uint64_t so = dir ? 1000 : 10, dof = dir ? 10 : 1000; /* 10000 bytes: 3 bounce chunks */
        t = mk(NCL_TASK_LOCAL_COPY, 0, 0, -1, NCL_BUF_RECV, so, NCL_BUF_RECV, dof, 10000);
        memmove(want + dof, want + so, 10000);
        assert_int_equal(submit_wait(w, 0, &t), NCL_SUCCESS);
        assert_memory_equal(r0, want, sizeof want);
    }
    ncl_mmio_get_stats(w->mm[0], &a);
    assert_int_equal(a.controller_ops - b.controller_ops, 6);
    assert_int_equal(a.descriptors, b.descriptors);

    /* refused before anything is posted: an fp16 WRITE_REDUCE (caps said no), out of bounds,
     * a write into SEND, a peer's RECV nobody named */
    t = mk(NCL_TASK_WRITE_REDUCE, NCL_FLOAT16, NCL_SUM, 1, NCL_BUF_SEND, 0, NCL_BUF_RECV, 0, 64);
    assert_int_equal(ncl_hal_dma_submit(ncl_mmio_hal(w->mm[0]), 1, &t), NCL_ERR_UNSUPPORTED);
    assert_non_null(strstr(ncl_mmio_last_error(w->mm[0]), "WRITE_REDUCE of half sum"));
    t = mk(NCL_TASK_LOCAL_COPY, 0, 0, -1, NCL_BUF_SEND, 4000, NCL_BUF_RECV, 0, 200);
    assert_int_equal(ncl_hal_dma_submit(ncl_mmio_hal(w->mm[0]), 1, &t), NCL_ERR_BACKEND);
    assert_non_null(strstr(ncl_mmio_last_error(w->mm[0]), "SEND[4000..+200) is out of bounds"));
    t = mk(NCL_TASK_LOCAL_COPY, 0, 0, -1, NCL_BUF_RECV, 0, NCL_BUF_SEND, 0, 4);
    assert_int_equal(ncl_hal_dma_submit(ncl_mmio_hal(w->mm[0]), 2, &t), NCL_ERR_BACKEND);
    assert_non_null(strstr(ncl_mmio_last_error(w->mm[0]), "SEND is read-only"));
    ncl_hal_launch nonroot = l;
    nonroot.recv = NULL;
    nonroot.recv_bytes = 0;
    assert_int_equal(ncl_hal_end(ncl_mmio_hal(w->mm[0]), NCL_SUCCESS), NCL_SUCCESS);
    assert_int_equal(ncl_hal_begin(ncl_mmio_hal(w->mm[0]), &nonroot), NCL_SUCCESS);
    t = mk(NCL_TASK_WRITE, 0, 0, 1, NCL_BUF_SEND, 0, NCL_BUF_RECV, 0, 4);
    assert_int_equal(ncl_hal_dma_submit(ncl_mmio_hal(w->mm[0]), 3, &t), NCL_ERR_BACKEND);
    assert_non_null(strstr(ncl_mmio_last_error(w->mm[0]), "ncl_mmio_set_peer_recv"));
    ncl_mmio_set_peer_recv(w->mm[0], RECV_AT + 512);
    assert_int_equal(submit_wait(w, 0, &t), NCL_SUCCESS);
    assert_memory_equal(r1 + 512, s0, 4);
    ncl_mmio_get_stats(w->mm[0], &b);
    assert_int_equal(b.descriptors - a.descriptors, 1);
    assert_int_equal(w->bus_errors, 0);
    assert_int_equal(w->mem_faults, 0);
    world_free(w);
}

/* ---- collectives ------------------------------------------------------------------------------ */

static const uint64_t counts[] = {1, 7, 1001, 4099, 30000};

typedef struct dtop {
    ncl_dtype dt;
    ncl_op op;
} dtop;

static const dtop reduce_cases[] = {
    {NCL_INT32, NCL_SUM},   {NCL_INT32, NCL_MAX},   {NCL_INT32, NCL_AVG},
    {NCL_FLOAT32, NCL_SUM}, {NCL_FLOAT32, NCL_MAX}, {NCL_FLOAT32, NCL_AVG},
    {NCL_FLOAT16, NCL_SUM}, {NCL_FLOAT16, NCL_MAX}, {NCL_FLOAT16, NCL_AVG},
};
#define NCASES (sizeof reduce_cases / sizeof reduce_cases[0])

static void test_allreduce_mode(int irq)
{
    uint64_t runs = 0, wrong = 0;
    ncl_mmio_stats s, all = {0};
    for (int n = 2; n <= 4; n++) {
        wopts o = {irq, 0, 4, 2, 0};
        world *w = world_new(n, &o);
        for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++)
            for (size_t k = 0; k < NCASES; k++)
                for (int inplace = 0; inplace <= 1; inplace++) {
                    job j = {NCL_COLL_ALLREDUCE, reduce_cases[k].dt, reduce_cases[k].op, counts[ci], 0, inplace, 0};
                    wrong += run_job(w, &j);
                    runs++;
                }
        stats_sum(w, &s);
        all.descriptors += s.descriptors;
        all.controller_ops += s.controller_ops;
        all.irq_waits += s.irq_waits;
        all.polls += s.polls;
        all.errors += s.errors;
        world_free(w);
    }
    printf("allreduce (%s): %llu runs, %llu descriptors, %llu controller tasks, %llu irq waits, %llu polls\n",
           irq ? "interrupt" : "polled", (unsigned long long)runs, (unsigned long long)all.descriptors,
           (unsigned long long)all.controller_ops, (unsigned long long)all.irq_waits,
           (unsigned long long)all.polls);
    assert_int_equal(wrong, 0);
    assert_int_equal(all.errors, 0);
    assert_true(all.controller_ops > 0); /* fp16 reduces and avg divisions ran on the controller */
    assert_true(irq ? all.irq_waits > 0 && all.polls == 0 : all.polls > 0 && all.irq_waits == 0);
}

static void test_allreduce_irq(void **state)
{
    (void)state;
    test_allreduce_mode(1);
}

static void test_allreduce_polled(void **state)
{
    (void)state;
    test_allreduce_mode(0);
}

/* Deterministic allreduce with wide accumulation: the block has no fp16/bf16 <-> fp32
 * converter, so every LOCAL_WIDEN / REDUCE_WIDE / NARROW runs on the controller through the
 * bounce buffer; results bit-exact on 2..4 devices, in and out of place, sum and avg. */
static void test_allreduce_wide(void **state)
{
    (void)state;
    static const dtop wide_cases[] = {{NCL_FLOAT16, NCL_SUM}, {NCL_FLOAT16, NCL_AVG}, {NCL_BFLOAT16, NCL_SUM}};
    uint64_t runs = 0, wrong = 0, controller = 0;
    for (int n = 2; n <= 4; n++) {
        wopts o = {1, 0, 4, 2, 0};
        wide_comms = 1;
        world *w = world_new(n, &o);
        wide_comms = 0;
        for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++)
            for (size_t k = 0; k < sizeof wide_cases / sizeof wide_cases[0]; k++)
                for (int inplace = 0; inplace <= 1; inplace++) {
                    job j = {NCL_COLL_ALLREDUCE, wide_cases[k].dt, wide_cases[k].op, counts[ci], 0, inplace, 0};
                    wrong += run_job(w, &j);
                    runs++;
                }
        ncl_mmio_stats s;
        stats_sum(w, &s);
        controller += s.controller_ops;
        assert_int_equal(s.errors, 0);
        world_free(w);
    }
    printf("wide det allreduce: %llu runs, %llu controller tasks\n", (unsigned long long)runs,
           (unsigned long long)controller);
    assert_int_equal(wrong, 0);
    assert_true(controller >= runs * 3); /* at least a widen, a reduce and a narrow per run */
}

static void test_other_collectives(void **state)
{
    (void)state;
    uint64_t runs = 0, wrong = 0;
    static const dtop bcast_types[] = {{NCL_INT32, NCL_SUM}, {NCL_FLOAT16, NCL_SUM}, {NCL_INT8, NCL_SUM}};
    for (int n = 2; n <= 4; n++) {
        wopts o = {n % 2, 0, 4, 2, 0}; /* 3 ranks interrupt-driven, 2 and 4 polled */
        world *w = world_new(n, &o);
        for (int inplace = 0; inplace <= 1; inplace++)
            for (size_t ci = 1; ci < sizeof counts / sizeof counts[0]; ci++) {
                uint64_t c = counts[ci] / (uint64_t)n + 1; /* allgather/reduce_scatter buffers hold n x count */
                for (int root = 0; root < n; root++)
                    for (size_t k = 0; k < sizeof bcast_types / sizeof bcast_types[0]; k++) {
                        job j = {NCL_COLL_BROADCAST, bcast_types[k].dt, NCL_SUM, c, root, inplace, 0};
                        wrong += run_job(w, &j);
                        runs++;
                    }
                for (size_t k = 0; k < NCASES; k++) {
                    /* in place, rank r's block of a reduce_scatter/allgather starts at r * count
                     * elements: keep it 4-byte aligned (caps.buf_align; odd counts are covered
                     * out of place and by the 4-byte types) */
                    if (inplace && ncl_dtype_size(reduce_cases[k].dt) < 4)
                        c = (c + 3) / 4 * 4;
                    job rs = {NCL_COLL_REDUCE_SCATTER, reduce_cases[k].dt, reduce_cases[k].op, c, 0, inplace, 0};
                    job ag = {NCL_COLL_ALLGATHER, reduce_cases[k].dt, NCL_SUM, c, 0, inplace, 0};
                    /* ring reduce needs inline reduce all the way; the tree stages the others in scratch */
                    int inl = reduce_cases[k].dt != NCL_FLOAT16;
                    job rd = {NCL_COLL_REDUCE, reduce_cases[k].dt, reduce_cases[k].op, c, (int)(k % (size_t)n), inplace,
                              inl ? NCL_ALGO_RING : NCL_ALGO_TREE};
                    wrong += run_job(w, &rs) + run_job(w, &ag) + run_job(w, &rd);
                    runs += 3;
                }
            }
        ncl_mmio_stats st;
        stats_sum(w, &st);
        for (uint32_t op = NCL_MMIO_OPC_WRITE; op <= NCL_MMIO_OPC_NOTIFY_RECORD; op++)
            if (op != NCL_MMIO_OPC_LOCAL_REDUCE) /* the algorithms reduce inline or on the controller */
                assert_true(st.opcodes[op] > 0);
        assert_int_equal(st.opcodes[NCL_MMIO_OPC_NOTIFY_WAIT], 0); /* waits are software's */
        world_free(w);
    }
    printf("broadcast (chain, every root), reduce_scatter, allgather (ring), reduce (ring; tree for fp16): %llu runs\n",
           (unsigned long long)runs);
    assert_int_equal(wrong, 0);
}

/* A 4-entry ring under 4 queues: submissions find it full and wait for the block to drain it. */
static void test_ring_full(void **state)
{
    (void)state;
    wopts o = {1, 4, 4, 4, 4096};
    world *w = world_new(4, &o);
    job j = {NCL_COLL_ALLREDUCE, NCL_FLOAT32, NCL_SUM, 20000, 0, 0, 0};
    assert_int_equal(run_job(w, &j), 0);
    job k = {NCL_COLL_ALLREDUCE, NCL_INT32, NCL_AVG, 20001, 0, 1, 0};
    assert_int_equal(run_job(w, &k), 0);
    ncl_mmio_stats s;
    stats_sum(w, &s);
    printf("4-entry ring: %llu descriptors, %llu waits for a free slot\n", (unsigned long long)s.descriptors,
           (unsigned long long)s.ring_full_waits);
    assert_true(s.ring_full_waits > 0);
    world_free(w);
}

/* ---- error paths --------------------------------------------------------------------------------- */

/* A buffer past the end of device memory: the block refuses the descriptor, the backend names it,
 * resets the block and the next collective runs. */
static void test_bad_address(void **state)
{
    (void)state;
    for (int irq = 0; irq <= 1; irq++) {
        wopts o = {irq, 0, 4, 2, 0};
        world *w = world_new(2, &o);
        const uint64_t bad = MEM_BYTES + 0x1000u, count = 1000;
        ncl_result rc[MAXR];
        int started[MAXR] = {1, 1};
        for (int r = 0; r < 2; r++)
            rc[r] = ncl_allreduce_start(dev_ptr(SEND_AT), dev_ptr(bad), count, NCL_INT32, NCL_SUM, w->comm[r]);
        drive(w, started, rc);
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
            assert_int_equal(reg(w, r, NCL_MMIO_ERR_STATUS), 0); /* cleared and reset */
            check_brought_up(w, r, irq, 256);
        }
        assert_true(rc[0] == NCL_ERR_BACKEND || rc[1] == NCL_ERR_BACKEND);
        ncl_mmio_stats s;
        stats_sum(w, &s);
        assert_true(s.errors >= 1);
        /* a new communicator on the same (recovered) blocks works */
        w->bus_errors = 0;
        comms_make(w, &o);
        job j = {NCL_COLL_ALLREDUCE, NCL_INT32, NCL_SUM, count, 0, 0, 0};
        assert_int_equal(run_job(w, &j), 0);
        world_free(w);
    }
}

/* A descriptor the block cannot decode (a ring slot overwritten behind the backend's back) is
 * named by slot and opcode, and does not hang. */
static void test_corrupt_descriptor(void **state)
{
    (void)state;
    wopts o = {1, 16, 4, 2, 0};
    world *w = world_new(2, &o);
    const ncl_hal *h = ncl_mmio_hal(w->mm[0]);
    assert_int_equal(ncl_hal_notify_record(h, 2, 1, 7), NCL_SUCCESS);
    mem(w, 0, RING_AT)[3] = 0x80; /* a reserved bit of word 0 */
    world_step(w);
    int done = 1;
    assert_int_equal(ncl_hal_notify_try_wait(h, 1, 0, 1, &done), NCL_ERR_BACKEND);
    assert_int_equal(done, 0);
    const char *e = ncl_mmio_last_error(w->mm[0]);
    printf("%s\n", e);
    assert_non_null(strstr(e, "descriptor slot 0 (NOTIFY_RECORD"));
    assert_non_null(strstr(e, "BAD_DESC"));
    assert_non_null(strstr(e, "a record step 0 (task NOTIFY_RECORD to rank 1)"));
    check_brought_up(w, 0, 1, 16);
    world_free(w);
}

/* Rank 1 never starts: rank 0's wait for its record times out with the engine's message. */
static void test_peer_never_records(void **state)
{
    (void)state;
    for (int irq = 0; irq <= 1; irq++) {
        wopts o = {irq, 0, 4, 2, 0};
        world *w = world_new(2, &o);
        ncl_result rc[MAXR] = {NCL_SUCCESS, NCL_SUCCESS};
        int started[MAXR] = {1, 0};
        uint64_t t0 = w->now;
        rc[0] = ncl_allreduce_start(dev_ptr(SEND_AT), dev_ptr(RECV_AT), 1000, NCL_FLOAT32, NCL_SUM, w->comm[0]);
        drive(w, started, rc);
        printf("%s: %s\n", irq ? "irq" : "polled", ncl_comm_last_error(w->comm[0]));
        assert_int_equal(rc[0], NCL_ERR_TIMEOUT);
        assert_non_null(strstr(ncl_comm_last_error(w->comm[0]), "from rank 1"));
        assert_true(w->now - t0 >= COMM_TIMEOUT_NS);
        check_brought_up(w, 0, irq, 256); /* a failed collective resets the block at end() */
        world_free(w);
    }
}

int main(void)
{
    verbose = getenv("MMIO_TEST_VERBOSE") != NULL;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bringup),
        cmocka_unit_test(test_bringup_refused),
        cmocka_unit_test(test_notify_mapping),
        cmocka_unit_test(test_task_routing),
        cmocka_unit_test(test_allreduce_irq),
        cmocka_unit_test(test_allreduce_polled),
        cmocka_unit_test(test_allreduce_wide),
        cmocka_unit_test(test_other_collectives),
        cmocka_unit_test(test_ring_full),
        cmocka_unit_test(test_bad_address),
        cmocka_unit_test(test_corrupt_descriptor),
        cmocka_unit_test(test_peer_never_records),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
