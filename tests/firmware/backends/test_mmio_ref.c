/* test_mmio_ref.c — the mmio HAL backend driving N linked rs_ref_dev devices (the C reference of the DMA/notify block): bring-up, collectives bit-exact through the correctness matrix, error paths. */
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

#include "matrix.h"
#include "mmio_world.h"
#include "rs_ref_dev.h"

#define STEP_NS 10u   /* simulated time per executed descriptor */
#define IDLE_NS 1000u /* simulated time a hook lets pass when nothing moved */

/* ---- the devices and their link: the mmio world's device ops ---------------------------------- */

typedef struct refdevs {
    int n;
    rs_ref_dev *dev[MMIO_MAXR];
    uint64_t now;
} refdevs;

static int net_link(void *ctx, const rs_ref_link_msg *m)
{
    refdevs *d = ctx;
    if (m->peer >= d->n)
        return 1;
    return rs_ref_dev_link_rx(d->dev[m->peer], m);
}

/* Runs every device until none can execute a descriptor; returns how many executed. */
static uint64_t devs_step(void *dev)
{
    refdevs *d = dev;
    uint64_t total = 0, k;
    do {
        k = 0;
        for (int r = 0; r < d->n; r++)
            k += rs_ref_dev_run(d->dev[r], 1u << 20);
        total += k;
    } while (k);
    d->now += total * STEP_NS;
    return total;
}

static void *ref_open(int n)
{
    refdevs *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->n = n;
    for (int r = 0; r < n; r++)
        if (!(d->dev[r] = rs_ref_dev_new(MMIO_MEM_BYTES, net_link, d)))
            return NULL;
    return d;
}

static void ref_close(void *dev)
{
    refdevs *d = dev;
    for (int r = 0; r < d->n; r++)
        rs_ref_dev_free(d->dev[r]);
    free(d);
}

static uint32_t ref_reg_read(void *dev, int rank, uint32_t off, int *err)
{
    return rs_ref_dev_read(((refdevs *)dev)->dev[rank], off, err);
}

static int ref_reg_write(void *dev, int rank, uint32_t off, uint32_t v)
{
    return rs_ref_dev_write(((refdevs *)dev)->dev[rank], off, v);
}

static uint8_t *ref_mem(void *dev, int rank) { return rs_ref_dev_mem(((refdevs *)dev)->dev[rank]); }

/* Simulation's "sleep until irq": advance every device; if nothing moves, let time pass and
 * return (spuriously) so the other ranks' firmware gets to run. */
static int ref_wait_irq(void *dev, int rank, uint64_t timeout_ns)
{
    refdevs *d = dev;
    (void)timeout_ns;
    for (;;) {
        if (rs_ref_dev_irq(d->dev[rank]))
            return 1;
        if (!devs_step(d)) {
            d->now += IDLE_NS;
            return rs_ref_dev_irq(d->dev[rank]);
        }
    }
}

/* Polled mode's yield: advance the devices; nothing moved: end the wait (other ranks' turn). */
static int ref_poll(void *dev, int rank)
{
    refdevs *d = dev;
    (void)rank;
    if (devs_step(d))
        return 0;
    d->now += IDLE_NS;
    return 1;
}

static uint64_t ref_now(void *dev) { return ((refdevs *)dev)->now; }

static int ref_settle(void *dev)
{
    while (devs_step(dev))
        ;
    return 1; /* every step executes a descriptor: a ring always drains */
}

static const mmio_dev_ops ref_ops = {"mmio ref", 2000000, ref_open,   ref_close, ref_reg_read, ref_reg_write,
                                     ref_mem,    ref_wait_irq, ref_poll, ref_now,  ref_settle};

/* ---- bring-up --------------------------------------------------------------------------------- */

static void test_bringup(void **state)
{
    (void)state;
    for (int irq = 0; irq <= 1; irq++) {
        mmio_opts o = {irq, 64, 4, 2, 0, 0, 0};
        mmio_world *w = mmio_world_new(&ref_ops, 2, &o);
        for (int r = 0; r < 2; r++)
            mmio_world_check_up(w, r, irq, 64);
        /* a doorbell-to-irq round trip through the HAL: a record to ourselves */
        const ncl_hal *h = ncl_mmio_hal(w->mm[0]);
        assert_int_equal(ncl_hal_notify_record(h, 0, 0, 3), NCL_SUCCESS);
        assert_int_equal(mmio_world_reg(w, 0, NCL_MMIO_RING_TAIL), 1);
        int done = 0;
        assert_int_equal(ncl_hal_notify_try_wait(h, 0, 3, 1, &done), NCL_SUCCESS);
        assert_int_equal(done, 0); /* the block has not run it yet */
        assert_int_equal(ncl_hal_wait_event(h, 1000000), NCL_SUCCESS);
        assert_int_equal(mmio_world_reg(w, 0, NCL_MMIO_RING_HEAD), 1);
        assert_int_equal(mmio_world_reg(w, 0, NCL_MMIO_IRQ_STATUS), 0); /* the events were taken */
        assert_int_equal(ncl_hal_notify_try_wait(h, 0, 3, 1, &done), NCL_SUCCESS);
        assert_int_equal(done, 1);
        assert_int_equal(mmio_world_reg(w, 0, NCL_MMIO_NOTIFY_CNT(3)), 0); /* consumed */
        ncl_mmio_stats s;
        ncl_mmio_get_stats(w->mm[0], &s);
        assert_int_equal(s.bringups, 1);
        assert_int_equal(s.descriptors, 1);
        assert_true(irq ? s.irq_waits == 1 && s.polls == 0 : s.polls >= 1 && s.irq_waits == 0);
        assert_int_equal(w->bus_errors, 0);
        mmio_world_free(w);
    }
}

static void test_bringup_refused(void **state)
{
    (void)state;
    mmio_opts o = {1, 64, 4, 2, 0, 0, 0};
    mmio_world *w = mmio_world_devices(&ref_ops, 4);
    w->fake_id = 0xDEADBEEFu;
    assert_int_equal(mmio_world_backend(w, 0, &o), NCL_ERR_BACKEND);
    assert_non_null(strstr(ncl_mmio_last_error(w->mm[0]), "0xdeadbeef"));
    assert_non_null(strstr(ncl_mmio_last_error(w->mm[0]), "RSIM"));
    w->fake_id = 0;
    w->fake_version = 0x00020003u;
    assert_int_equal(mmio_world_backend(w, 0, &o), NCL_ERR_UNSUPPORTED);
    assert_non_null(strstr(ncl_mmio_last_error(w->mm[0]), "version 2.3"));
    w->fake_version = 0;
    w->fake_caps = (NCL_MMIO_CAPS_RESET & ~NCL_MMIO_CAPS_NOTIFY_COUNT_MASK) | 7u; /* 7 counters, 4 ranks */
    assert_int_equal(mmio_world_backend(w, 0, &o), NCL_ERR_UNSUPPORTED);
    assert_non_null(strstr(ncl_mmio_last_error(w->mm[0]), "too few notify counters"));
    w->fake_caps = (NCL_MMIO_CAPS_RESET & ~NCL_MMIO_CAPS_RING_MAX_LOG2_MASK) | (4u << NCL_MMIO_CAPS_RING_MAX_LOG2_SHIFT);
    assert_int_equal(mmio_world_backend(w, 0, &o), NCL_ERR_UNSUPPORTED); /* a 64-entry ring on a 16-entry block */
    assert_non_null(strstr(ncl_mmio_last_error(w->mm[0]), "2^4"));
    w->fake_caps = 0;
    /* config errors: before any register access */
    mmio_opts bad = o;
    bad.max_queues = 99;
    assert_int_equal(mmio_world_backend(w, 0, &bad), NCL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(ncl_mmio_last_error(w->mm[0]), "max_queues"));
    /* and a good one still comes up on the same block */
    assert_int_equal(mmio_world_backend(w, 0, &o), NCL_SUCCESS);
    mmio_world_check_up(w, 0, 1, 64);
    mmio_world_free(w);
}

/* ---- notify mapping -------------------------------------------------------------------------- */

static uint32_t ld32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

static void test_notify_mapping(void **state)
{
    (void)state;
    mmio_opts o = {0, 64, 4, 2, 0, 0, 0};
    mmio_world *w = mmio_world_new(&ref_ops, 4, &o);
    /* rank 0 records id 5 to rank 1: counter (sender 0, id 5) at rank 1 is d = (0 - 1) mod 4 = 3 */
    assert_int_equal(ncl_hal_notify_record(ncl_mmio_hal(w->mm[0]), 0, 1, 5), NCL_SUCCESS);
    assert_int_equal(ncl_hal_notify_record(ncl_mmio_hal(w->mm[2]), 1, 1, 31), NCL_SUCCESS);
    devs_step(w->dev);
    assert_int_equal(mmio_world_reg(w, 1, NCL_MMIO_NOTIFY_CNT(3 * 32 + 5)), 1);
    assert_int_equal(mmio_world_reg(w, 1, NCL_MMIO_NOTIFY_CNT(1 * 32 + 31)), 1); /* sender 2: d = 1 */
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
        assert_int_equal(mmio_world_reg(w, 1, NCL_MMIO_NOTIFY_CNT(i)), 0);
    /* the call's first record to a peer follows the WRITE of the launch record (the mailbox);
     * the FENCE flag on records, the LOCAL flag on self-records */
    const uint8_t *ring = mmio_world_mem(w, 0, MMIO_RING_AT);
    uint32_t w0 = ld32(ring), w1 = ld32(ring + NCL_MMIO_DESC_BYTES);
    assert_int_equal(NCL_MMIO_GET(NCL_MMIO_DESC_OPCODE, w0), NCL_MMIO_OPC_WRITE);
    assert_int_equal(NCL_MMIO_GET(NCL_MMIO_DESC_OPCODE, w1), NCL_MMIO_OPC_NOTIFY_RECORD);
    assert_int_equal(NCL_MMIO_GET(NCL_MMIO_DESC_FENCE, w1), 1);
    assert_int_equal(NCL_MMIO_GET(NCL_MMIO_DESC_LOCAL, w1), 0);
    mmio_world_free(w);

    /* 16 counters for 4 ranks: 4 ids each; id 4 is refused with a message, never aliased */
    mmio_world *v = mmio_world_devices(&ref_ops, 4);
    v->fake_caps = (NCL_MMIO_CAPS_RESET & ~NCL_MMIO_CAPS_NOTIFY_COUNT_MASK) | 16u;
    for (int r = 0; r < 4; r++)
        assert_int_equal(mmio_world_backend(v, r, &o), NCL_SUCCESS);
    assert_int_equal(ncl_hal_notify_record(ncl_mmio_hal(v->mm[0]), 0, 1, 3), NCL_SUCCESS);
    assert_int_equal(ncl_hal_notify_record(ncl_mmio_hal(v->mm[0]), 0, 1, 4), NCL_ERR_UNSUPPORTED);
    assert_non_null(strstr(ncl_mmio_last_error(v->mm[0]), "notify id 4"));
    assert_int_equal(ncl_hal_notify_try_wait(ncl_mmio_hal(v->mm[1]), 0, 4, 1, &done), NCL_ERR_UNSUPPORTED);
    devs_step(v->dev);
    assert_int_equal(mmio_world_reg(v, 1, NCL_MMIO_NOTIFY_CNT(3 * 4 + 3)), 1);
    assert_int_equal(v->bus_errors, 0);
    mmio_world_free(v);
}

/* ---- task routing: which tasks become which descriptors, which run on the controller -------- */

static void st32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Submits t on queue 0 of rank r, lets the devices run, waits for completion. */
static ncl_result submit_wait(mmio_world *w, int r, const ncl_task *t)
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
    mmio_opts o = {1, 16, 4, 2, 0, 0, 0};
    mmio_world *w = mmio_world_devices(&ref_ops, 2);
    for (int r = 0; r < 2; r++)
        assert_int_equal(mmio_world_backend(w, r, &o), NCL_SUCCESS);
    ncl_hal_launch l;
    memset(&l, 0, sizeof l);
    l.seq = 1;
    l.send = mmio_dev_ptr(MMIO_SEND_AT);
    l.send_bytes = 4096;
    l.recv = mmio_dev_ptr(MMIO_RECV_AT);
    l.recv_bytes = 16384;
    for (int r = 0; r < 2; r++)
        assert_int_equal(ncl_hal_begin(ncl_mmio_hal(w->mm[r]), &l), NCL_SUCCESS);
    uint8_t *s0 = mmio_world_mem(w, 0, MMIO_SEND_AT), *r0 = mmio_world_mem(w, 0, MMIO_RECV_AT), *r1 = mmio_world_mem(w, 1, MMIO_RECV_AT);
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
    assert_memory_equal(mmio_world_mem(w, 0, MMIO_SCRATCH_AT), s0 + 128, 10);
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
    ncl_mmio_set_peer_recv(w->mm[0], MMIO_RECV_AT + 512);
    assert_int_equal(submit_wait(w, 0, &t), NCL_SUCCESS);
    assert_memory_equal(r1 + 512, s0, 4);
    ncl_mmio_get_stats(w->mm[0], &b);
    assert_int_equal(b.descriptors - a.descriptors, 1);
    assert_int_equal(w->bus_errors, 0);
    assert_int_equal(w->mem_faults, 0);
    mmio_world_free(w);
}

/* ---- collectives: cases of the correctness matrix on the mmio world ---------------------------- */

static const uint64_t counts[] = {1, 7, 1001, 4099, 30000};

static const mx_type reduce_types[] = {
    {NCL_INT32, NCL_SUM},   {NCL_INT32, NCL_MAX},   {NCL_INT32, NCL_AVG},
    {NCL_FLOAT32, NCL_SUM}, {NCL_FLOAT32, NCL_MAX}, {NCL_FLOAT32, NCL_AVG},
    {NCL_FLOAT16, NCL_SUM}, {NCL_FLOAT16, NCL_MAX}, {NCL_FLOAT16, NCL_AVG},
};
#define NTYPES (sizeof reduce_types / sizeof reduce_types[0])

static size_t all_counts(const mx_axes *a, int nranks, ncl_dtype dt, uint64_t out[MX_MAX_COUNTS])
{
    (void)a, (void)nranks, (void)dt;
    memcpy(out, counts, sizeof counts);
    return sizeof counts / sizeof counts[0];
}

/* counts[1..] / p + 1: reduce_scatter's and allgather's buffers hold p x count. In place, rank r's
 * block of a reduce_scatter/allgather starts at r * count elements: 2-byte types round the count
 * up to 4 elements to keep it 4-byte aligned (caps.buf_align; odd counts are covered out of place
 * and by the 4-byte types). */
static size_t per_rank_counts(const mx_axes *a, int nranks, ncl_dtype dt, uint64_t out[MX_MAX_COUNTS])
{
    size_t k = 0;
    for (size_t i = 1; i < sizeof counts / sizeof counts[0]; i++) {
        uint64_t c = counts[i] / (uint64_t)nranks + 1;
        if (a->places == MX_IN_PLACE && ncl_dtype_size(dt) < 4)
            c = (c + 3) / 4 * 4;
        out[k++] = c;
    }
    return k;
}

/* Reduce: root = the type's index mod p; ring reduce needs inline reduce all the way (no fp16 on
 * the block's lanes), the tree stages the others in scratch. */
static int reduce_keep(const mx_axes *a, int nranks, const mx_case *c)
{
    (void)a;
    size_t k = 0;
    while (k < NTYPES && (reduce_types[k].dt != c->dt || reduce_types[k].op != c->op))
        k++;
    return c->root == (int)(k % (size_t)nranks) && (c->algo == NCL_ALGO_TREE) == (c->dt == NCL_FLOAT16);
}

static void test_allreduce_mode(int irq)
{
    mx_matrix m;
    mx_init(&m);
    m.print_groups = 1;
    ncl_mmio_stats s, all = {0};
    for (int n = 2; n <= 4; n++) {
        mmio_opts o = {irq, 0, 4, 2, 0, 0, 0};
        mmio_world *w = mmio_world_new(&ref_ops, n, &o);
        mx_axes ar = {NCL_COLL_ALLREDUCE, NCL_ALGO_RING, all_counts, reduce_types, NTYPES, MX_ROOTS_ZERO,
                      MX_BOTH_PLACES, NULL, NULL, 0};
        mx_add_axes(&m, &ar, n);
        assert_int_equal(mx_run(&m, &w->mx), 0);
        mmio_world_stats(w, &s);
        all.descriptors += s.descriptors;
        all.controller_ops += s.controller_ops;
        all.irq_waits += s.irq_waits;
        all.polls += s.polls;
        all.errors += s.errors;
        mmio_world_free(w);
    }
    printf("allreduce (%s): %llu runs, %llu descriptors, %llu controller tasks, %llu irq waits, %llu polls\n",
           irq ? "interrupt" : "polled", (unsigned long long)m.run, (unsigned long long)all.descriptors,
           (unsigned long long)all.controller_ops, (unsigned long long)all.irq_waits,
           (unsigned long long)all.polls);
    mx_free(&m);
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
    static const mx_type wide_types[] = {{NCL_FLOAT16, NCL_SUM}, {NCL_FLOAT16, NCL_AVG}, {NCL_BFLOAT16, NCL_SUM}};
    mx_matrix m;
    mx_init(&m);
    m.print_groups = 1;
    uint64_t controller = 0;
    for (int n = 2; n <= 4; n++) {
        mmio_opts o = {1, 0, 4, 2, 0, 1, 0};
        mmio_world *w = mmio_world_new(&ref_ops, n, &o);
        mx_axes ar = {NCL_COLL_ALLREDUCE, NCL_ALGO_RING, all_counts, wide_types, 3, MX_ROOTS_ZERO,
                      MX_BOTH_PLACES, NULL, NULL, 0};
        mx_add_axes(&m, &ar, n);
        assert_int_equal(mx_run(&m, &w->mx), 0);
        ncl_mmio_stats s;
        mmio_world_stats(w, &s);
        controller += s.controller_ops;
        assert_int_equal(s.errors, 0);
        mmio_world_free(w);
    }
    printf("wide det allreduce: %llu runs, %llu controller tasks\n", (unsigned long long)m.run,
           (unsigned long long)controller);
    assert_true(controller >= m.run * 3); /* at least a widen, a reduce and a narrow per run */
    mx_free(&m);
}

static void test_other_collectives(void **state)
{
    (void)state;
    static const mx_type bcast_types[] = {{NCL_INT32, NCL_SUM}, {NCL_FLOAT16, NCL_SUM}, {NCL_INT8, NCL_SUM}};
    mx_matrix m;
    mx_init(&m);
    m.print_groups = 1;
    for (int n = 2; n <= 4; n++) {
        mmio_opts o = {n % 2, 0, 4, 2, 0, 0, 0}; /* 3 ranks interrupt-driven, 2 and 4 polled */
        mmio_world *w = mmio_world_new(&ref_ops, n, &o);
        mx_axes bc = {NCL_COLL_BROADCAST, NCL_ALGO_CHAIN, per_rank_counts, bcast_types, 3, MX_ROOTS_ALL,
                      MX_BOTH_PLACES, NULL, NULL, 0};
        mx_add_axes(&m, &bc, n);
        for (int place = MX_OUT_OF_PLACE; place <= MX_IN_PLACE; place++) {
            /* allgather takes the reduce types too: each dtype three times, as it always did */
            mx_axes rs = {NCL_COLL_REDUCE_SCATTER, NCL_ALGO_RING, per_rank_counts, reduce_types, NTYPES,
                          MX_ROOTS_ZERO, place, NULL, NULL, 0};
            mx_axes ag = rs, rd_ring = rs, rd_tree = rs;
            ag.coll = NCL_COLL_ALLGATHER;
            rd_ring.coll = rd_tree.coll = NCL_COLL_REDUCE;
            rd_ring.roots = rd_tree.roots = MX_ROOTS_ALL;
            rd_ring.keep = rd_tree.keep = reduce_keep;
            rd_tree.algo = NCL_ALGO_TREE;
            /* alltoall moves blocks without reducing: the broadcast's types, both algorithms */
            mx_axes a2a_mesh = {NCL_COLL_ALLTOALL, NCL_ALGO_MESH, per_rank_counts, bcast_types, 3,
                                MX_ROOTS_ZERO, place, NULL, NULL, 0};
            mx_axes a2a_pairwise = a2a_mesh, a2av_mesh = a2a_mesh, a2av_pairwise = a2a_mesh;
            a2a_pairwise.algo = a2av_pairwise.algo = NCL_ALGO_PAIRWISE;
            a2av_mesh.a2av = a2av_pairwise.a2av = 1; /* alltoallv over a skewed matrix */
            mx_add_axes(&m, &rs, n);
            mx_add_axes(&m, &ag, n);
            mx_add_axes(&m, &rd_ring, n);
            mx_add_axes(&m, &rd_tree, n);
            mx_add_axes(&m, &a2a_mesh, n);
            mx_add_axes(&m, &a2a_pairwise, n);
            mx_add_axes(&m, &a2av_mesh, n);
            mx_add_axes(&m, &a2av_pairwise, n);
        }
        assert_int_equal(mx_run(&m, &w->mx), 0);
        ncl_mmio_stats st;
        mmio_world_stats(w, &st);
        for (uint32_t op = NCL_MMIO_OPC_WRITE; op <= NCL_MMIO_OPC_NOTIFY_RECORD; op++)
            if (op != NCL_MMIO_OPC_LOCAL_REDUCE) /* the algorithms reduce inline or on the controller */
                assert_true(st.opcodes[op] > 0);
        assert_int_equal(st.opcodes[NCL_MMIO_OPC_NOTIFY_WAIT], 0); /* waits are software's */
        mmio_world_free(w);
    }
    printf("broadcast (chain, every root), reduce_scatter, allgather (ring), reduce (ring; tree for fp16), "
           "alltoall (mesh, pairwise): %llu runs\n",
           (unsigned long long)m.run);
    mx_free(&m);
}

/* A 4-entry ring under 4 queues: submissions find it full and wait for the block to drain it. */
static void test_ring_full(void **state)
{
    (void)state;
    mmio_opts o = {1, 4, 4, 4, 4096, 0, 0};
    mmio_world *w = mmio_world_new(&ref_ops, 4, &o);
    mx_matrix m;
    mx_init(&m);
    const mx_case f32 = {NCL_COLL_ALLREDUCE, NCL_ALGO_RING, 20000, NCL_FLOAT32, NCL_SUM, 0, 0, 0};
    const mx_case avg = {NCL_COLL_ALLREDUCE, NCL_ALGO_RING, 20001, NCL_INT32, NCL_AVG, 0, 1, 0};
    mx_add(&m, &f32);
    mx_add(&m, &avg);
    assert_int_equal(mx_run(&m, &w->mx), 0);
    mx_free(&m);
    ncl_mmio_stats s;
    mmio_world_stats(w, &s);
    printf("4-entry ring: %llu descriptors, %llu waits for a free slot\n", (unsigned long long)s.descriptors,
           (unsigned long long)s.ring_full_waits);
    assert_true(s.ring_full_waits > 0);
    mmio_world_free(w);
}

/* ---- error paths (the bodies are the mmio world's, shared with the RTL) ---------------------------- */

static void test_bad_address(void **state)
{
    (void)state;
    mmio_world_test_bad_address(&ref_ops);
}

static void test_corrupt_descriptor(void **state)
{
    (void)state;
    mmio_world_test_bad_descriptor(&ref_ops);
}

static void test_mismatched_call(void **state)
{
    (void)state;
    mmio_world_test_mismatch(&ref_ops);
}

static void test_peer_never_records(void **state)
{
    (void)state;
    mmio_world_test_silent_peer(&ref_ops);
}

static void test_groups(void **state)
{
    (void)state;
    mmio_world_test_groups(&ref_ops);
}

int main(void)
{
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
        cmocka_unit_test(test_mismatched_call),
        cmocka_unit_test(test_groups),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
