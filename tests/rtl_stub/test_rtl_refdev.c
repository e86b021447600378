/* test_rtl_refdev.c — the C reference of the DMA/notify block (rs_ref_dev) against REGISTERS.md, driven only by the generated header's names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <ncl/ncl_mmio_regs.h>

#include "rs_ref_dev.h"
#include "rs_ref_reduce.h"

/* The descriptor tables agree with themselves: each field's mask is its shift and width, and each
 * word's non-reserved bits are the union of its fields. */
#define DFLD_MASK_OK(f, wd, sh, w) (NCL_MMIO_DESC_##f##_MASK == (((w) == 32u ? 0xFFFFFFFFu : ((1u << (w)) - 1u)) << (sh))) &&
_Static_assert(NCL_MMIO_DESC_FIELDS(DFLD_MASK_OK) 1, "descriptor field masks match shift and width");
#define DFLD_IN(f, wd, sh, w) | ((wd) == W_ ? NCL_MMIO_DESC_##f##_MASK : 0u)
static const uint32_t desc_word_bits[NCL_MMIO_DESC_WORDS] = {
#define W_ 0u
    0u NCL_MMIO_DESC_FIELDS(DFLD_IN),
#undef W_
#define W_ 1u
    0u NCL_MMIO_DESC_FIELDS(DFLD_IN),
#undef W_
#define W_ 2u
    0u NCL_MMIO_DESC_FIELDS(DFLD_IN),
#undef W_
#define W_ 3u
    0u NCL_MMIO_DESC_FIELDS(DFLD_IN),
#undef W_
#define W_ 4u
    0u NCL_MMIO_DESC_FIELDS(DFLD_IN),
#undef W_
#define W_ 5u
    0u NCL_MMIO_DESC_FIELDS(DFLD_IN),
#undef W_
#define W_ 6u
    0u NCL_MMIO_DESC_FIELDS(DFLD_IN),
#undef W_
#define W_ 7u
    0u NCL_MMIO_DESC_FIELDS(DFLD_IN),
#undef W_
};
_Static_assert(NCL_MMIO_DESC_WORDS == 8u && NCL_MMIO_DESC_WORDS * 4u == NCL_MMIO_DESC_BYTES, "8 words per descriptor");

/* ---- fixtures -------------------------------------------------------------------------------- */

#define MEM (64u * 1024u)     /* device memory of the tests */
#define RING_AT 0x100u        /* ring base (DESC_BYTES-aligned, not 0: base is really added) */
#define RING_N 16u            /* ring entries */
#define DATA_AT 0x1000u       /* data region [DATA_AT, MEM) */
#define DATA_N (MEM - DATA_AT)

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static uint64_t rnd_below(uint64_t n) { return n ? rnd() % n : 0; }

/* A small network: the link callback of every device delivers to devs[peer]. */
typedef struct net {
    rs_ref_dev *devs[4];
    uint32_t n;
    uint32_t msgs;     /* transfers delivered */
} net;

static int net_link(void *ctx, const rs_ref_link_msg *m)
{
    net *nw = ctx;
    if (m->peer >= nw->n) /* no such node: the link fails the transfer */
        return 1;
    int rc = rs_ref_dev_link_rx(nw->devs[m->peer], m);
    if (rc == RS_REF_RX_OK)
        nw->msgs++;
    return rc;
}

static uint32_t rd(rs_ref_dev *d, uint32_t a)
{
    int err = 1;
    uint32_t v = rs_ref_dev_read(d, a, &err);
    assert_int_equal(err, 0);
    return v;
}
static void wr(rs_ref_dev *d, uint32_t a, uint32_t v) { assert_int_equal(rs_ref_dev_write(d, a, v), 0); }

static uint32_t ld32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static void st32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Descriptor words from fields, with the header's names only. */
typedef struct dfields {
    uint32_t opc, dtype, op, irq, fence, local, peer, notify, tag, count;
    uint64_t src, dst, len;
} dfields;

static void desc_make(uint32_t *w, const dfields *f)
{
    memset(w, 0, NCL_MMIO_DESC_WORDS * 4);
    NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_OPCODE, f->opc);
    NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_DTYPE, f->dtype);
    NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_OP, f->op);
    NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_IRQ, f->irq);
    NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_FENCE, f->fence);
    NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_LOCAL, f->local);
    NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_PEER, f->peer);
    NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_NOTIFY, f->notify);
    NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_SRC_LO, (uint32_t)f->src);
    NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_SRC_HI, (uint32_t)(f->src >> 32));
    NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_DST_LO, (uint32_t)f->dst);
    NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_DST_HI, (uint32_t)(f->dst >> 32));
    NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_LEN, (uint32_t)f->len);
    NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_TAG, f->tag);
    NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_COUNT, f->count);
}

/* Writes raw descriptor words into ring slot idx (the backend writes device memory the same way). */
static void slot_put(rs_ref_dev *d, uint32_t idx, const uint32_t *w)
{
    uint64_t base = (uint64_t)rd(d, NCL_MMIO_RING_BASE_HI) << 32 | rd(d, NCL_MMIO_RING_BASE_LO);
    uint8_t *p = rs_ref_dev_mem(d) + base + (uint64_t)idx * NCL_MMIO_DESC_BYTES;
    for (uint32_t i = 0; i < NCL_MMIO_DESC_WORDS; i++)
        st32(p + 4 * i, w[i]);
}

/* Posts raw words at RING_TAIL and advances RING_TAIL (no doorbell). Returns the slot. */
static uint32_t post_raw(rs_ref_dev *d, const uint32_t *w)
{
    uint32_t size = NCL_MMIO_GET(NCL_MMIO_RING_SIZE_ENTRIES, rd(d, NCL_MMIO_RING_SIZE));
    uint32_t tail = NCL_MMIO_GET(NCL_MMIO_RING_TAIL_INDEX, rd(d, NCL_MMIO_RING_TAIL));
    uint32_t head = NCL_MMIO_GET(NCL_MMIO_RING_HEAD_INDEX, rd(d, NCL_MMIO_RING_HEAD));
    assert_true((tail + 1) % size != head); /* never fill the last free slot */
    slot_put(d, tail, w);
    wr(d, NCL_MMIO_RING_TAIL, NCL_MMIO_PREP(NCL_MMIO_RING_TAIL_INDEX, (tail + 1) % size));
    return tail;
}
static uint32_t post(rs_ref_dev *d, const dfields *f)
{
    uint32_t w[NCL_MMIO_DESC_WORDS];
    desc_make(w, f);
    return post_raw(d, w);
}
static void doorbell(rs_ref_dev *d) { wr(d, NCL_MMIO_DOORBELL, 1); }

/* The bring-up sequence of REGISTERS.md, steps 1-4 (polled mode unless irq). */
static void bring_up(rs_ref_dev *d, uint32_t entries, int irq)
{
    wr(d, NCL_MMIO_CTRL, NCL_MMIO_CTRL_SOFT_RESET_MASK);
    assert_int_equal(rd(d, NCL_MMIO_ID), NCL_MMIO_ID_RESET);
    assert_int_equal(NCL_MMIO_GET(NCL_MMIO_VERSION_MAJOR, rd(d, NCL_MMIO_VERSION)), 1);
    assert_int_equal(NCL_MMIO_GET(NCL_MMIO_CAPS_DESC_LOG2, rd(d, NCL_MMIO_CAPS)) , 5);
    wr(d, NCL_MMIO_RING_BASE_LO, RING_AT);
    wr(d, NCL_MMIO_RING_BASE_HI, 0);
    wr(d, NCL_MMIO_RING_SIZE, NCL_MMIO_PREP(NCL_MMIO_RING_SIZE_ENTRIES, entries));
    wr(d, NCL_MMIO_ERR_STATUS, 0xFFFFFFFFu);
    wr(d, NCL_MMIO_IRQ_STATUS, 0xFFFFFFFFu);
    if (irq)
        wr(d, NCL_MMIO_IRQ_MASK, NCL_MMIO_IRQ_MASK_BITS);
    wr(d, NCL_MMIO_CTRL, NCL_MMIO_CTRL_ENABLE_MASK | (irq ? NCL_MMIO_CTRL_IRQ_EN_MASK : 0));
}

static void fill_random(uint8_t *p, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        p[i] = (uint8_t)rnd();
}

static uint32_t head_of(rs_ref_dev *d) { return NCL_MMIO_GET(NCL_MMIO_RING_HEAD_INDEX, rd(d, NCL_MMIO_RING_HEAD)); }

/* The supported (dtype, op) pairs: the firmware's numbers, which rs_reduce and descriptors share. */
static const uint32_t pairs[][2] = {
    {RS_REF_DT_INT32, RS_REF_OP_SUM}, {RS_REF_DT_INT32, RS_REF_OP_MAX}, {RS_REF_DT_INT32, RS_REF_OP_MIN},
    {RS_REF_DT_UINT32, RS_REF_OP_SUM}, {RS_REF_DT_UINT32, RS_REF_OP_MAX}, {RS_REF_DT_UINT32, RS_REF_OP_MIN},
    {RS_REF_DT_FP32, RS_REF_OP_SUM}, {RS_REF_DT_FP32, RS_REF_OP_MAX}, {RS_REF_DT_FP32, RS_REF_OP_MIN},
};
#define NPAIRS (sizeof pairs / sizeof pairs[0])

/* The expected effect of a reduce, computed here lane by lane. */
static void expect_reduce(uint8_t *dst, const uint8_t *src, uint64_t len, uint32_t dtype, uint32_t op)
{
    for (uint64_t i = 0; i < len; i += 4)
        st32(dst + i, rs_ref_reduce((int)dtype, (int)op, ld32(dst + i), ld32(src + i), NULL));
}


/* ---- bring-up, registers ----------------------------------------------------------------------- */

static void test_bringup(void **state)
{
    (void)state;
    net nw = {0};
    rs_ref_dev *d = rs_ref_dev_new(MEM, net_link, &nw);
    assert_non_null(d);
    /* every register at its reset value, with and without a soft reset */
    for (int pass = 0; pass < 2; pass++) {
#define RESET_ROW(n, off, acc, rst, b, rw, cnt, str)                                            \
        for (uint32_t i = 0; i < (cnt); i++)                                                    \
            if (NCL_MMIO_ACC_##acc != NCL_MMIO_ACC_WO)                                          \
                assert_int_equal(rd(d, (off) + i * (str)), rst);
        NCL_MMIO_REGS(RESET_ROW)
        wr(d, NCL_MMIO_SCRATCH, 0xA5A5F00Du);
        assert_int_equal(rd(d, NCL_MMIO_SCRATCH), 0xA5A5F00Du);
        wr(d, NCL_MMIO_CTRL, NCL_MMIO_CTRL_SOFT_RESET_MASK);
    }
    assert_int_equal(rd(d, NCL_MMIO_ID), 0x5253494Du);
    assert_int_equal(NCL_MMIO_GET(NCL_MMIO_CAPS_NOTIFY_COUNT, rd(d, NCL_MMIO_CAPS)), NCL_MMIO_NOTIFY_COUNT);
    assert_int_equal(1u << NCL_MMIO_GET(NCL_MMIO_CAPS_DESC_LOG2, rd(d, NCL_MMIO_CAPS)), NCL_MMIO_DESC_BYTES);

    /* interrupt mode: a copy with IRQ, then the line, HEAD and RING_EMPTY */
    bring_up(d, RING_N, 1);
    uint8_t *m = rs_ref_dev_mem(d);
    fill_random(m + DATA_AT, 256);
    assert_int_equal(rs_ref_dev_step(d), RS_REF_STEP_IDLE); /* nothing posted */
    post(d, &(dfields){.opc = NCL_MMIO_OPC_LOCAL_COPY, .src = DATA_AT, .dst = DATA_AT + 128, .len = 100});
    post(d, &(dfields){.opc = NCL_MMIO_OPC_NOP, .irq = 1, .tag = 7});
    assert_int_equal(rs_ref_dev_step(d), RS_REF_STEP_IDLE); /* posted, no doorbell yet */
    assert_false(rs_ref_dev_irq(d));
    assert_int_equal(rd(d, NCL_MMIO_STATUS) & NCL_MMIO_STATUS_EMPTY_MASK, 0);
    doorbell(d);
    assert_true(rd(d, NCL_MMIO_STATUS) & NCL_MMIO_STATUS_BUSY_MASK);
    assert_int_equal(rs_ref_dev_step(d), RS_REF_STEP_DONE);
    assert_int_equal(head_of(d), 1);
    assert_false(rs_ref_dev_irq(d)); /* the copy asked for no interrupt */
    assert_int_equal(rs_ref_dev_step(d), RS_REF_STEP_DONE);
    assert_int_equal(rs_ref_dev_step(d), RS_REF_STEP_IDLE);
    assert_true(rs_ref_dev_irq(d));
    assert_memory_equal(m + DATA_AT, m + DATA_AT + 128, 100);
    assert_int_equal(rd(d, NCL_MMIO_IRQ_STATUS), NCL_MMIO_IRQ_STATUS_DESC_DONE_MASK | NCL_MMIO_IRQ_STATUS_RING_EMPTY_MASK);
    assert_int_equal(rd(d, NCL_MMIO_STATUS), NCL_MMIO_STATUS_EMPTY_MASK);
    /* the mask and IRQ_EN gate the line; W1C clears only what is written */
    wr(d, NCL_MMIO_IRQ_MASK, NCL_MMIO_IRQ_MASK_ERROR_MASK);
    assert_false(rs_ref_dev_irq(d));
    wr(d, NCL_MMIO_IRQ_MASK, NCL_MMIO_IRQ_MASK_RING_EMPTY_MASK);
    assert_true(rs_ref_dev_irq(d));
    wr(d, NCL_MMIO_CTRL, NCL_MMIO_CTRL_ENABLE_MASK);
    assert_false(rs_ref_dev_irq(d));
    wr(d, NCL_MMIO_CTRL, NCL_MMIO_CTRL_ENABLE_MASK | NCL_MMIO_CTRL_IRQ_EN_MASK);
    wr(d, NCL_MMIO_IRQ_STATUS, NCL_MMIO_IRQ_STATUS_DESC_DONE_MASK);
    assert_int_equal(rd(d, NCL_MMIO_IRQ_STATUS), NCL_MMIO_IRQ_STATUS_RING_EMPTY_MASK);
    assert_true(rs_ref_dev_irq(d));
    wr(d, NCL_MMIO_IRQ_STATUS, NCL_MMIO_IRQ_STATUS_RING_EMPTY_MASK);
    assert_false(rs_ref_dev_irq(d));

    /* RO registers ignore writes; unmapped/unaligned accesses answer rsp_err and REG_ACCESS */
    wr(d, NCL_MMIO_ID, 0);
    wr(d, NCL_MMIO_RING_HEAD, 5);
    assert_int_equal(rd(d, NCL_MMIO_ID), NCL_MMIO_ID_RESET);
    assert_int_equal(head_of(d), 2);
    int err = 0;
    assert_int_equal(rs_ref_dev_read(d, NCL_MMIO_SCRATCH + 1, &err), 0);
    assert_int_equal(err, 1);
    assert_int_equal(rs_ref_dev_write(d, 0x018u, 1), 1);
    assert_int_equal(rs_ref_dev_write(d, 1u << NCL_MMIO_ADDR_BITS, 1), 1);
    assert_int_equal(rs_ref_dev_write(d, NCL_MMIO_NOTIFY_ADD, NCL_MMIO_PREP(NCL_MMIO_NOTIFY_ADD_IDX, NCL_MMIO_NOTIFY_COUNT) |
                                                                NCL_MMIO_PREP(NCL_MMIO_NOTIFY_ADD_AMOUNT, 1)), 1);
    for (uint32_t i = 0; i < NCL_MMIO_NOTIFY_COUNT; i++)
        assert_int_equal(rd(d, NCL_MMIO_NOTIFY_CNT(i)), 0); /* the bad index aliased nothing */
    assert_int_equal(rd(d, NCL_MMIO_ERR_STATUS), NCL_MMIO_ERR_STATUS_REG_ACCESS_MASK);
    assert_true(rd(d, NCL_MMIO_IRQ_STATUS) & NCL_MMIO_IRQ_STATUS_ERROR_MASK);
    assert_int_equal(rd(d, NCL_MMIO_ERR_DESC), 0); /* REG_ACCESS captures nothing */
    wr(d, NCL_MMIO_ERR_STATUS, NCL_MMIO_ERR_STATUS_REG_ACCESS_MASK);
    wr(d, NCL_MMIO_IRQ_STATUS, NCL_MMIO_IRQ_STATUS_ERROR_MASK);

    /* software notify: add/sub, saturation at both ends with NOTIFY_SAT, no NOTIFY event */
    wr(d, NCL_MMIO_NOTIFY_ADD, NCL_MMIO_PREP(NCL_MMIO_NOTIFY_ADD_IDX, 3) | NCL_MMIO_PREP(NCL_MMIO_NOTIFY_ADD_AMOUNT, 0xFFFF));
    wr(d, NCL_MMIO_NOTIFY_SUB, NCL_MMIO_PREP(NCL_MMIO_NOTIFY_SUB_IDX, 3) | NCL_MMIO_PREP(NCL_MMIO_NOTIFY_SUB_AMOUNT, 5));
    assert_int_equal(rd(d, NCL_MMIO_NOTIFY_CNT(3)), 0xFFFA);
    assert_int_equal(rd(d, NCL_MMIO_IRQ_STATUS), 0);
    wr(d, NCL_MMIO_NOTIFY_SUB, NCL_MMIO_PREP(NCL_MMIO_NOTIFY_SUB_IDX, 3) | NCL_MMIO_PREP(NCL_MMIO_NOTIFY_SUB_AMOUNT, 0xFFFF));
    assert_int_equal(rd(d, NCL_MMIO_NOTIFY_CNT(3)), 0);
    assert_int_equal(rd(d, NCL_MMIO_ERR_STATUS), NCL_MMIO_ERR_STATUS_NOTIFY_SAT_MASK);
    for (uint32_t i = 0; i < 0x10001u; i++)
        wr(d, NCL_MMIO_NOTIFY_ADD, NCL_MMIO_PREP(NCL_MMIO_NOTIFY_ADD_IDX, 31) | NCL_MMIO_PREP(NCL_MMIO_NOTIFY_ADD_AMOUNT, 0xFFFF));
    assert_int_equal(rd(d, NCL_MMIO_NOTIFY_CNT(31)), 0xFFFFFFFFu);
    rs_ref_dev_free(d);
}

/* ---- every opcode's effect on memory, random ---------------------------------------------------- */

/* Random legal data descriptors from device 0 (WRITE* land on device 1 through the link),
 * batched 1..7 per doorbell so the 16-entry ring wraps; both memory images compared with the
 * expected ones after every batch. */
static void test_opcodes_random(void **state)
{
    (void)state;
    net nw = {.n = 2};
    for (uint32_t i = 0; i < 2; i++) {
        nw.devs[i] = rs_ref_dev_new(MEM, net_link, &nw);
        assert_non_null(nw.devs[i]);
        bring_up(nw.devs[i], RING_N, 0);
        fill_random(rs_ref_dev_mem(nw.devs[i]) + DATA_AT, DATA_N);
    }
    rs_ref_dev *a = nw.devs[0];
    static uint8_t ea[MEM], eb[MEM];
    memcpy(ea, rs_ref_dev_mem(a), MEM);
    memcpy(eb, rs_ref_dev_mem(nw.devs[1]), MEM);
    uint32_t per_opc[8] = {0}, zero = 0, maxlen = 0, unaligned = 0, posted = 0, sent = 0;
    for (uint32_t batch = 0; batch < 1500; batch++) {
        uint32_t nb = 1 + (uint32_t)rnd_below(7);
        for (uint32_t k = 0; k < nb; k++) {
            static const uint32_t opcs[] = {NCL_MMIO_OPC_WRITE, NCL_MMIO_OPC_WRITE_REDUCE, NCL_MMIO_OPC_LOCAL_COPY,
                                            NCL_MMIO_OPC_LOCAL_REDUCE, NCL_MMIO_OPC_NOP};
            dfields f = {.opc = opcs[rnd_below(5)], .tag = (uint32_t)rnd_below(0x10000), .fence = (uint32_t)rnd_below(2)};
            int reduce = f.opc == NCL_MMIO_OPC_WRITE_REDUCE || f.opc == NCL_MMIO_OPC_LOCAL_REDUCE;
            int local = f.opc == NCL_MMIO_OPC_LOCAL_COPY || f.opc == NCL_MMIO_OPC_LOCAL_REDUCE;
            uint64_t lim = local ? DATA_N / 2 : DATA_N; /* local: two disjoint ranges must fit */
            uint32_t shape = (uint32_t)rnd_below(8);
            uint64_t len = shape == 0 ? 0 : shape == 1 ? lim : shape < 5 ? rnd_below(64) : rnd_below(lim + 1);
            if (reduce) {
                const uint32_t *p = pairs[rnd_below(NPAIRS)];
                f.dtype = p[0];
                f.op = p[1];
                len &= ~3ull;
            }
            uint64_t room = lim - len;
            f.src = DATA_AT + rnd_below(room + 1);
            f.dst = DATA_AT + rnd_below(room + 1);
            if (local) { /* disjoint halves, or in place */
                int lo_src = (int)rnd_below(2);
                f.src = DATA_AT + (lo_src ? 0 : DATA_N / 2) + rnd_below(room + 1);
                f.dst = rnd_below(8) == 0 ? f.src : DATA_AT + (lo_src ? DATA_N / 2 : 0) + rnd_below(room + 1);
            }
            if (reduce) {
                f.src &= ~3ull;
                f.dst &= ~3ull;
            }
            if (f.opc == NCL_MMIO_OPC_NOP) {
                f.src = f.dst = len = 0;
            } else {
                f.peer = (f.opc == NCL_MMIO_OPC_WRITE || f.opc == NCL_MMIO_OPC_WRITE_REDUCE) ? 1 : 0;
            }
            f.len = len;
            zero += f.opc != NCL_MMIO_OPC_NOP && len == 0;
            maxlen += len == lim;
            unaligned += ((f.src | f.dst | len) & 3) != 0;
            per_opc[f.opc]++;
            sent += !local && f.opc != NCL_MMIO_OPC_NOP && len != 0; /* a zero-length write sends nothing */
            /* expected effect */
            uint8_t *dst = local ? ea : eb;
            switch (f.opc) {
            case NCL_MMIO_OPC_WRITE:
            case NCL_MMIO_OPC_LOCAL_COPY: memmove(dst + f.dst, ea + f.src, len); break;
            case NCL_MMIO_OPC_WRITE_REDUCE:
            case NCL_MMIO_OPC_LOCAL_REDUCE: expect_reduce(dst + f.dst, ea + f.src, len, f.dtype, f.op); break;
            default: break;
            }
            uint32_t slot = post(a, &f);
            uint32_t w[NCL_MMIO_DESC_WORDS];
            desc_make(w, &f);
            for (uint32_t i = 0; i < NCL_MMIO_DESC_WORDS; i++) /* the ring lives in memory too */
                st32(ea + RING_AT + slot * NCL_MMIO_DESC_BYTES + 4 * i, w[i]);
            posted++;
        }
        doorbell(a);
        assert_int_equal(rs_ref_dev_run(a, 1000), nb);
        assert_int_equal(rs_ref_dev_step(a), RS_REF_STEP_IDLE);
        assert_int_equal(rd(a, NCL_MMIO_ERR_STATUS), 0);
        assert_int_equal(head_of(a), posted % RING_N);
        assert_memory_equal(rs_ref_dev_mem(a), ea, MEM);
        assert_memory_equal(rs_ref_dev_mem(nw.devs[1]), eb, MEM);
    }
    assert_true(rd(a, NCL_MMIO_IRQ_STATUS) & NCL_MMIO_IRQ_STATUS_RING_EMPTY_MASK);
    assert_int_equal(nw.msgs, sent);
    for (uint32_t o = NCL_MMIO_OPC_WRITE; o <= NCL_MMIO_OPC_LOCAL_REDUCE; o++)
        assert_true(per_opc[o] > 500);
    assert_true(zero > 100 && maxlen > 100 && unaligned > 500);
    print_message("refdev: %u random descriptors (%u zero-length, %u max-length, %u unaligned)\n", posted, zero, maxlen, unaligned);
    rs_ref_dev_free(nw.devs[0]);
    rs_ref_dev_free(nw.devs[1]);
}

/* ---- reductions lane by lane, edge operands ----------------------------------------------------- */

static void test_reduce_lanes(void **state)
{
    (void)state;
    static const uint32_t edge[] = {
        0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00001u, 0x7F800001u, /* ±0 ±Inf NaNs */
        0x00000001u, 0x807FFFFFu, 0x00800000u, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x3F800000u, 0x33800000u,  /* subnormal, max */
        0x3F800001u, 0xBF800000u, 0x7FFFFFFFu, 0xFFFFFFFFu, 0x00000002u, 0x4B800000u};
    const uint32_t ne = sizeof edge / sizeof edge[0];
    const uint32_t lanes = ne * ne;
    rs_ref_dev *d = rs_ref_dev_new(MEM, NULL, NULL);
    assert_non_null(d);
    bring_up(d, 4, 0);
    uint8_t *m = rs_ref_dev_mem(d);
    const uint32_t S = DATA_AT, D = DATA_AT + 0x4000;
    for (uint32_t p = 0; p < NPAIRS; p++) {
        for (uint32_t i = 0; i < lanes; i++) { /* the cross product of the edge table */
            st32(m + S + 4 * i, edge[i % ne]);
            st32(m + D + 4 * i, edge[i / ne]);
        }
        post(d, &(dfields){.opc = NCL_MMIO_OPC_LOCAL_REDUCE, .dtype = pairs[p][0], .op = pairs[p][1],
                          .src = S, .dst = D, .len = 4 * lanes});
        doorbell(d);
        assert_int_equal(rs_ref_dev_run(d, 10), 1);
        for (uint32_t i = 0; i < lanes; i++) {
            int uns = 1;
            uint32_t want = rs_ref_reduce((int)pairs[p][0], (int)pairs[p][1], edge[i / ne], edge[i % ne], &uns);
            assert_int_equal(uns, 0);
            assert_int_equal(ld32(m + D + 4 * i), want);
            assert_int_equal(ld32(m + S + 4 * i), edge[i % ne]); /* the source is untouched */
        }
    }
    /* int32 and fp32 sums of known values, as a sanity check of operand order and lanes */
    st32(m + S, 0xFFFFFFFFu);
    st32(m + D, 5);
    st32(m + S + 4, 0x3FC00000u); /* 1.5f */
    st32(m + D + 4, 0x40100000u); /* 2.25f */
    post(d, &(dfields){.opc = NCL_MMIO_OPC_LOCAL_REDUCE, .dtype = RS_REF_DT_INT32, .op = RS_REF_OP_SUM, .src = S, .dst = D, .len = 4});
    post(d, &(dfields){.opc = NCL_MMIO_OPC_LOCAL_REDUCE, .dtype = RS_REF_DT_FP32, .op = RS_REF_OP_SUM, .src = S + 4, .dst = D + 4, .len = 4});
    doorbell(d);
    assert_int_equal(rs_ref_dev_run(d, 10), 2);
    assert_int_equal(ld32(m + D), 4);
    assert_int_equal(ld32(m + D + 4), 0x40700000u); /* 3.75f */
    rs_ref_dev_free(d);
}

/* ---- two devices: WRITE_REDUCE + NOTIFY exchange ------------------------------------------------ */

static void test_two_devices(void **state)
{
    (void)state;
    net nw = {.n = 2};
    const uint32_t N = 4096, X = DATA_AT, Y = DATA_AT + 0x4000, ID = 5;
    static uint8_t x0[4096], x1[4096], sum[4096];
    for (uint32_t i = 0; i < 2; i++) {
        nw.devs[i] = rs_ref_dev_new(MEM, net_link, &nw);
        bring_up(nw.devs[i], RING_N, 1);
        wr(nw.devs[i], NCL_MMIO_IRQ_MASK, NCL_MMIO_IRQ_MASK_NOTIFY_MASK);
    }
    for (uint32_t i = 0; i < N; i += 4) { /* small fp32 values: the sum is exact, order-free */
        st32(x0 + i, 0x3F800000u + ((uint32_t)rnd_below(1024) << 13));
        st32(x1 + i, 0x40000000u + ((uint32_t)rnd_below(1024) << 13));
    }
    memcpy(sum, x0, N);
    expect_reduce(sum, x1, N, RS_REF_DT_FP32, RS_REF_OP_SUM);
    memcpy(rs_ref_dev_mem(nw.devs[0]) + X, x0, N);
    memcpy(rs_ref_dev_mem(nw.devs[1]) + X, x1, N);
    for (uint32_t i = 0; i < 2; i++) {
        rs_ref_dev *d = nw.devs[i];
        uint32_t peer = 1 - i;
        /* Y <- my X; tell the peer my Y is ready (counter 0); wait until the peer's is; add my X
         * into the peer's Y at the peer; tell it that its Y is complete (counter 2); wait for
         * mine; a local record (counter 1) marks the end */
        post(d, &(dfields){.opc = NCL_MMIO_OPC_LOCAL_COPY, .src = X, .dst = Y, .len = N});
        post(d, &(dfields){.opc = NCL_MMIO_OPC_NOTIFY_RECORD, .peer = peer, .notify = 0});
        post(d, &(dfields){.opc = NCL_MMIO_OPC_NOTIFY_WAIT, .notify = 0, .count = 1});
        post(d, &(dfields){.opc = NCL_MMIO_OPC_WRITE_REDUCE, .dtype = RS_REF_DT_FP32, .op = RS_REF_OP_SUM,
                          .peer = peer, .src = X, .dst = Y, .len = N, .fence = 1, .tag = ID});
        post(d, &(dfields){.opc = NCL_MMIO_OPC_NOTIFY_RECORD, .peer = peer, .notify = 2, .irq = 1});
        post(d, &(dfields){.opc = NCL_MMIO_OPC_NOTIFY_WAIT, .notify = 2, .count = 1});
        post(d, &(dfields){.opc = NCL_MMIO_OPC_NOTIFY_RECORD, .local = 1, .notify = 1});
        doorbell(d);
    }
    rs_ref_dev *d0 = nw.devs[0], *d1 = nw.devs[1];
    assert_int_equal(rs_ref_dev_run(d0, 100), 2);
    assert_int_equal(rs_ref_dev_step(d0), RS_REF_STEP_BLOCKED); /* never a hang: it returns */
    assert_true(rd(d0, NCL_MMIO_STATUS) & NCL_MMIO_STATUS_BUSY_MASK);
    assert_int_equal(head_of(d0), 2);
    assert_false(rs_ref_dev_irq(d0));
    assert_int_equal(rs_ref_dev_run(d1, 100), 5); /* through its WRITE_REDUCE and record, then waits */
    assert_int_equal(rs_ref_dev_step(d1), RS_REF_STEP_BLOCKED);
    assert_true(rs_ref_dev_irq(d0)); /* a record arrived over the link: NOTIFY */
    assert_int_equal(rd(d0, NCL_MMIO_NOTIFY_CNT(2)), 1);
    assert_memory_equal(rs_ref_dev_mem(d0) + Y, sum, N); /* d1 reduced into d0 at d0 */
    assert_int_equal(rs_ref_dev_run(d0, 100), 5);
    assert_int_equal(rs_ref_dev_run(d1, 100), 2);
    for (uint32_t i = 0; i < 2; i++) {
        rs_ref_dev *d = nw.devs[i];
        assert_memory_equal(rs_ref_dev_mem(d) + Y, sum, N);
        assert_int_equal(head_of(d), 7);
        assert_int_equal(rd(d, NCL_MMIO_NOTIFY_CNT(1)), 1);
        assert_int_equal(rd(d, NCL_MMIO_NOTIFY_CNT(0)), 0);
        assert_int_equal(rd(d, NCL_MMIO_NOTIFY_CNT(2)), 0); /* consumed by the wait */
        assert_int_equal(rd(d, NCL_MMIO_ERR_STATUS), 0);
        assert_int_equal(rd(d, NCL_MMIO_IRQ_STATUS),
                         NCL_MMIO_IRQ_STATUS_DESC_DONE_MASK | NCL_MMIO_IRQ_STATUS_RING_EMPTY_MASK | NCL_MMIO_IRQ_STATUS_NOTIFY_MASK);
        assert_int_equal(rd(d, NCL_MMIO_STATUS), NCL_MMIO_STATUS_EMPTY_MASK);
    }
    assert_int_equal(nw.msgs, 6);
    /* a link record into a saturated counter: NOTIFY_SAT at the receiver, the sender is fine */
    rs_ref_dev *b = nw.devs[1];
    for (uint32_t i = 0; i < 0x10001u; i++)
        wr(b, NCL_MMIO_NOTIFY_ADD, NCL_MMIO_PREP(NCL_MMIO_NOTIFY_ADD_IDX, 9) | NCL_MMIO_PREP(NCL_MMIO_NOTIFY_ADD_AMOUNT, 0xFFFF));
    post(nw.devs[0], &(dfields){.opc = NCL_MMIO_OPC_NOTIFY_RECORD, .peer = 1, .notify = 9});
    doorbell(nw.devs[0]);
    assert_int_equal(rs_ref_dev_run(nw.devs[0], 10), 1);
    assert_int_equal(rd(b, NCL_MMIO_NOTIFY_CNT(9)), 0xFFFFFFFFu);
    assert_true(rd(b, NCL_MMIO_ERR_STATUS) & NCL_MMIO_ERR_STATUS_NOTIFY_SAT_MASK);
    assert_int_equal(rd(nw.devs[0], NCL_MMIO_ERR_STATUS), 0);
    rs_ref_dev_free(nw.devs[0]);
    rs_ref_dev_free(nw.devs[1]);
}

/* ---- ring wrap-around, ENABLE, doorbell snapshot -------------------------------------------------- */

static void test_ring_wrap(void **state)
{
    (void)state;
    rs_ref_dev *d = rs_ref_dev_new(MEM, NULL, NULL);
    for (uint32_t size = 2; size <= 7; size++) {
        bring_up(d, size, 0);
        uint32_t done = 0;
        for (uint32_t round = 0; round < 40; round++) {
            uint32_t n = 1 + (uint32_t)rnd_below(size - 1); /* up to the full ring (one slot free) */
            for (uint32_t k = 0; k < n; k++)
                post(d, &(dfields){.opc = NCL_MMIO_OPC_NOTIFY_RECORD, .local = 1, .notify = 4});
            doorbell(d);
            assert_int_equal(rs_ref_dev_run(d, 100), n);
            done += n;
            assert_int_equal(head_of(d), done % size);
            assert_int_equal(rd(d, NCL_MMIO_NOTIFY_CNT(4)), done);
        }
    }
    /* the doorbell snapshots TAIL: work posted after it waits for the next doorbell */
    bring_up(d, 8, 0);
    post(d, &(dfields){.opc = NCL_MMIO_OPC_NOP});
    doorbell(d);
    post(d, &(dfields){.opc = NCL_MMIO_OPC_NOP});
    assert_int_equal(rs_ref_dev_run(d, 10), 1);
    assert_false(rd(d, NCL_MMIO_IRQ_STATUS) & NCL_MMIO_IRQ_STATUS_RING_EMPTY_MASK);
    doorbell(d);
    /* ENABLE = 0 stops the engine between descriptors; setting it resumes */
    wr(d, NCL_MMIO_CTRL, 0);
    assert_int_equal(rs_ref_dev_step(d), RS_REF_STEP_IDLE);
    assert_int_equal(rd(d, NCL_MMIO_STATUS) & NCL_MMIO_STATUS_BUSY_MASK, 0);
    wr(d, NCL_MMIO_CTRL, NCL_MMIO_CTRL_ENABLE_MASK);
    assert_int_equal(rs_ref_dev_run(d, 10), 1);
    assert_true(rd(d, NCL_MMIO_IRQ_STATUS) & NCL_MMIO_IRQ_STATUS_RING_EMPTY_MASK);
    rs_ref_dev_free(d);
}

/* ---- error paths ---------------------------------------------------------------------------------- */

/* Posts one descriptor (raw words) after `good` good ones; expects the good ones done, then the
 * error `bit` naming the bad one's slot and `addr`; HEAD stays, memory unchanged, never a hang. */
static void expect_error(rs_ref_dev *d, const uint32_t *w, uint32_t bit, uint64_t addr, int addr_is_slot)
{
    static uint8_t before[MEM];
    bring_up(d, RING_N, 1);
    uint32_t good = (uint32_t)rnd_below(4);
    for (uint32_t i = 0; i < good; i++)
        post(d, &(dfields){.opc = NCL_MMIO_OPC_NOP});
    uint32_t slot = post_raw(d, w);
    post(d, &(dfields){.opc = NCL_MMIO_OPC_NOP, .irq = 1}); /* must not run */
    memcpy(before, rs_ref_dev_mem(d), MEM);
    doorbell(d);
    assert_int_equal(rs_ref_dev_run(d, 100), good);
    assert_int_equal(rs_ref_dev_step(d), RS_REF_STEP_IDLE); /* stopped, not spinning */
    assert_int_equal(rd(d, NCL_MMIO_ERR_STATUS), bit);
    assert_int_equal(rd(d, NCL_MMIO_ERR_DESC), slot);
    if (addr_is_slot)
        addr = RING_AT + (uint64_t)slot * NCL_MMIO_DESC_BYTES;
    assert_int_equal(rd(d, NCL_MMIO_ERR_ADDR_LO), (uint32_t)addr);
    assert_int_equal(rd(d, NCL_MMIO_ERR_ADDR_HI), (uint32_t)(addr >> 32));
    assert_int_equal(head_of(d), slot);
    assert_int_equal(rd(d, NCL_MMIO_IRQ_STATUS), NCL_MMIO_IRQ_STATUS_ERROR_MASK);
    assert_true(rs_ref_dev_irq(d));
    assert_int_equal(rd(d, NCL_MMIO_STATUS) & NCL_MMIO_STATUS_BUSY_MASK, 0);
    assert_memory_equal(rs_ref_dev_mem(d), before, MEM);
    /* a doorbell while stopped changes nothing, not even with a bad ring (no BAD_RING) */
    uint32_t tail = rd(d, NCL_MMIO_RING_TAIL);
    wr(d, NCL_MMIO_RING_TAIL, RING_N);
    doorbell(d);
    assert_int_equal(rd(d, NCL_MMIO_ERR_STATUS), bit);
    wr(d, NCL_MMIO_RING_TAIL, tail);
    doorbell(d);
    assert_int_equal(rs_ref_dev_step(d), RS_REF_STEP_IDLE);
}

static void test_errors(void **state)
{
    (void)state;
    net nw = {.n = 2};
    rs_ref_dev *d = rs_ref_dev_new(MEM, net_link, &nw);
    nw.devs[0] = d;
    nw.devs[1] = rs_ref_dev_new(MEM, net_link, &nw);
    bring_up(nw.devs[1], RING_N, 0);
    const uint32_t BD = NCL_MMIO_ERR_STATUS_BAD_DESC_MASK, AR = NCL_MMIO_ERR_STATUS_ADDR_RANGE_MASK,
                   LK = NCL_MMIO_ERR_STATUS_LINK_MASK;
    uint32_t w[NCL_MMIO_DESC_WORDS];
    const dfields copy = {.opc = NCL_MMIO_OPC_LOCAL_COPY, .src = DATA_AT, .dst = DATA_AT + 0x100, .len = 64};
    const dfields red = {.opc = NCL_MMIO_OPC_LOCAL_REDUCE, .dtype = RS_REF_DT_INT32, .op = RS_REF_OP_SUM,
                         .src = DATA_AT, .dst = DATA_AT + 0x100, .len = 64};
    dfields f;
    uint32_t nbad = 0;

    /* BAD_DESC: opcode 0 (zeroed memory), unknown opcodes */
    static const uint32_t bad_opc[] = {0, 8, 9, 0x3F, 0xFF};
    for (uint32_t i = 0; i < sizeof bad_opc / sizeof bad_opc[0]; i++) {
        f = copy;
        f.opc = bad_opc[i];
        desc_make(w, &f);
        expect_error(d, w, BD, 0, 1), nbad++;
    }
    /* every reserved bit of every word, on a NOP (which uses only the flags and TAG) */
    static const uint32_t wbits[NCL_MMIO_DESC_WORDS] = {NCL_MMIO_DESC_W0_BITS, NCL_MMIO_DESC_W1_BITS, NCL_MMIO_DESC_W2_BITS,
                                                        NCL_MMIO_DESC_W3_BITS, NCL_MMIO_DESC_W4_BITS, NCL_MMIO_DESC_W5_BITS,
                                                        NCL_MMIO_DESC_W6_BITS, NCL_MMIO_DESC_W7_BITS};
    for (uint32_t i = 0; i < NCL_MMIO_DESC_WORDS; i++)
        assert_int_equal(wbits[i], desc_word_bits[i]);
    for (uint32_t i = 0; i < NCL_MMIO_DESC_WORDS; i++)
        for (uint32_t b = 0; b < 32; b++)
            if (!(wbits[i] >> b & 1)) {
                desc_make(w, &(dfields){.opc = NCL_MMIO_OPC_NOP});
                w[i] |= 1u << b;
                expect_error(d, w, BD, 0, 1), nbad++;
            }
    /* fields the opcode does not use */
#define UNUSED_FIELD(base, field, val)       \
    f = base;                                \
    f.field = val;                           \
    desc_make(w, &f);                        \
    expect_error(d, w, BD, 0, 1), nbad++;
    UNUSED_FIELD(copy, dtype, RS_REF_DT_INT32)
    UNUSED_FIELD(copy, peer, 1)
    UNUSED_FIELD(copy, count, 1)
    UNUSED_FIELD(copy, notify, 1)
    UNUSED_FIELD(copy, local, 1)
    UNUSED_FIELD(red, count, 3)
    UNUSED_FIELD(((dfields){.opc = NCL_MMIO_OPC_NOTIFY_WAIT, .count = 1}), len, 4)
    UNUSED_FIELD(((dfields){.opc = NCL_MMIO_OPC_NOTIFY_WAIT, .count = 1}), peer, 1)
    UNUSED_FIELD(((dfields){.opc = NCL_MMIO_OPC_NOTIFY_RECORD, .peer = 1}), src, 4)
    UNUSED_FIELD(((dfields){.opc = NCL_MMIO_OPC_NOTIFY_RECORD, .local = 1}), peer, 1) /* LOCAL names no peer */
    UNUSED_FIELD(((dfields){.opc = NCL_MMIO_OPC_NOP}), op, 2)
    /* unsupported dtype/op (every code but the nine pairs), misaligned reduces, overlap, notify index */
    for (uint32_t dt = 0; dt < 16; dt++)
        for (uint32_t op = 0; op < 8; op++) {
            int ok = 0;
            for (uint32_t p = 0; p < NPAIRS; p++)
                ok |= pairs[p][0] == dt && pairs[p][1] == op;
            if (ok)
                continue;
            f = red;
            f.dtype = dt;
            f.op = op;
            f.opc = (dt + op) & 1 ? NCL_MMIO_OPC_LOCAL_REDUCE : NCL_MMIO_OPC_WRITE_REDUCE;
            f.peer = f.opc == NCL_MMIO_OPC_WRITE_REDUCE;
            desc_make(w, &f);
            expect_error(d, w, BD, 0, 1), nbad++;
        }
    UNUSED_FIELD(red, src, DATA_AT + 2)
    UNUSED_FIELD(red, dst, DATA_AT + 0x101)
    UNUSED_FIELD(red, len, 62)
    UNUSED_FIELD(copy, dst, DATA_AT + 63)      /* partial overlap */
    UNUSED_FIELD(red, src, DATA_AT + 0x100 - 4) /* partial overlap */
    UNUSED_FIELD(((dfields){.opc = NCL_MMIO_OPC_NOTIFY_WAIT}), notify, NCL_MMIO_NOTIFY_COUNT)
    UNUSED_FIELD(((dfields){.opc = NCL_MMIO_OPC_NOTIFY_RECORD, .local = 1}), notify, 0xFF)

    /* ADDR_RANGE: ERR_ADDR is the start of the range that leaves memory (source first) */
#define RANGE_ERR(base, field, val, want)    \
    f = base;                                \
    f.field = val;                           \
    desc_make(w, &f);                        \
    expect_error(d, w, AR, want, 0), nbad++;
    RANGE_ERR(copy, src, MEM - 63, MEM - 63)
    RANGE_ERR(copy, dst, MEM - 32, MEM - 32)
    RANGE_ERR(copy, dst, 0xFFFFFFFFFFFFFFF0ull, 0xFFFFFFFFFFFFFFF0ull) /* would wrap at 2^64 */
    RANGE_ERR(((dfields){.opc = NCL_MMIO_OPC_WRITE, .peer = 1, .src = DATA_AT}), len, 0xFFFFFFFFu, DATA_AT)
    RANGE_ERR(red, dst, (uint64_t)MEM << 20, (uint64_t)MEM << 20)
    f = copy;
    f.len = 0; /* zero length still needs an address inside memory (or at its end) */
    f.src = MEM + 1;
    desc_make(w, &f);
    expect_error(d, w, AR, MEM + 1, 0), nbad++;
    f = (dfields){.opc = NCL_MMIO_OPC_WRITE, .peer = 1, .src = MEM, .dst = 0, .len = 8};
    desc_make(w, &f);
    expect_error(d, w, AR, MEM, 0), nbad++;

    /* LINK: no such peer, a destination outside the peer's memory, a refused notify */
    f = (dfields){.opc = NCL_MMIO_OPC_WRITE, .peer = 7, .src = DATA_AT, .dst = 0x40, .len = 8};
    desc_make(w, &f);
    expect_error(d, w, LK, 0x40, 0), nbad++;
    f.peer = 1;
    f.dst = MEM - 4;
    desc_make(w, &f);
    expect_error(d, w, LK, MEM - 4, 0), nbad++;
    f = (dfields){.opc = NCL_MMIO_OPC_NOTIFY_RECORD, .peer = 3, .notify = 1};
    desc_make(w, &f);
    expect_error(d, w, LK, 3, 0), nbad++;

    /* the ring itself outside memory: ADDR_RANGE naming the slot's address */
    bring_up(d, RING_N, 0);
    wr(d, NCL_MMIO_RING_BASE_LO, MEM - 2 * NCL_MMIO_DESC_BYTES);
    for (uint32_t i = 0; i < 2; i++)
        post(d, &(dfields){.opc = NCL_MMIO_OPC_NOP});
    wr(d, NCL_MMIO_RING_TAIL, 3);
    doorbell(d);
    assert_int_equal(rs_ref_dev_run(d, 10), 2);
    assert_int_equal(rd(d, NCL_MMIO_ERR_STATUS), AR);
    assert_int_equal(rd(d, NCL_MMIO_ERR_DESC), 2);
    assert_int_equal(rd(d, NCL_MMIO_ERR_ADDR_LO), MEM);

    /* BAD_RING: sizes and tails out of range; nothing runs */
    static const uint32_t bad_ring[][2] = {{0, 0}, {1, 0}, {(1u << NCL_MMIO_RING_MAX_LOG2) + 1, 1}, {4, 4}, {4, 9}};
    for (uint32_t i = 0; i < 5; i++) {
        bring_up(d, bad_ring[i][0], 0);
        wr(d, NCL_MMIO_RING_TAIL, bad_ring[i][1]);
        doorbell(d);
        assert_int_equal(rs_ref_dev_step(d), RS_REF_STEP_IDLE);
        assert_int_equal(rd(d, NCL_MMIO_ERR_STATUS), NCL_MMIO_ERR_STATUS_BAD_RING_MASK);
        assert_true(rd(d, NCL_MMIO_IRQ_STATUS) & NCL_MMIO_IRQ_STATUS_ERROR_MASK);
        nbad++;
    }

    /* recovery without a reset: fix the descriptor, clear ERR_STATUS, ring again: it retries HEAD */
    f = copy;
    f.src = MEM;
    desc_make(w, &f);
    expect_error(d, w, AR, MEM, 0);
    uint32_t slot = head_of(d);
    desc_make(w, &copy);
    slot_put(d, slot, w);
    wr(d, NCL_MMIO_ERR_STATUS, AR);
    wr(d, NCL_MMIO_IRQ_STATUS, NCL_MMIO_IRQ_STATUS_ERROR_MASK);
    doorbell(d);
    assert_int_equal(rs_ref_dev_run(d, 10), 2);
    assert_int_equal(rd(d, NCL_MMIO_ERR_STATUS), 0);
    assert_true(rd(d, NCL_MMIO_IRQ_STATUS) & NCL_MMIO_IRQ_STATUS_DESC_DONE_MASK);
    assert_memory_equal(rs_ref_dev_mem(d) + copy.dst, rs_ref_dev_mem(d) + copy.src, copy.len);
    /* the capture outlives the cleared bits (until the next capture); REG_ACCESS captures nothing */
    bring_up(d, RING_N, 0);
    post(d, &(dfields){.opc = NCL_MMIO_OPC_NOP});
    f = copy;
    f.opc = 0;
    post(d, &f);
    doorbell(d);
    assert_int_equal(rs_ref_dev_run(d, 10), 1);
    assert_int_equal(rs_ref_dev_write(d, 0x0FFCu, 0), 1);
    wr(d, NCL_MMIO_ERR_STATUS, 0xFFFFFFFFu);
    assert_int_equal(rd(d, NCL_MMIO_ERR_DESC), 1);
    assert_int_equal(rd(d, NCL_MMIO_ERR_ADDR_LO), RING_AT + NCL_MMIO_DESC_BYTES);
    print_message("refdev: %u error cases\n", nbad);
    rs_ref_dev_free(nw.devs[1]);
    rs_ref_dev_free(d);
}

/* ---- soft reset ------------------------------------------------------------------------------------ */

static void test_soft_reset(void **state)
{
    (void)state;
    rs_ref_dev *d = rs_ref_dev_new(MEM, NULL, NULL);
    bring_up(d, RING_N, 1);
    fill_random(rs_ref_dev_mem(d) + DATA_AT, DATA_N);
    for (uint32_t i = 0; i < 5; i++)
        post(d, &(dfields){.opc = NCL_MMIO_OPC_NOTIFY_RECORD, .local = 1, .notify = i, .irq = 1});
    post(d, &(dfields){.opc = 0});
    post(d, &(dfields){.opc = NCL_MMIO_OPC_NOP});
    doorbell(d);
    wr(d, NCL_MMIO_SCRATCH, 77);
    wr(d, NCL_MMIO_IRQ_MASK, 0xF);
    assert_int_equal(rs_ref_dev_run(d, 100), 5);
    assert_int_equal(rs_ref_dev_step(d), RS_REF_STEP_IDLE); /* stopped on the opcode-0 slot */
    assert_int_equal(rd(d, NCL_MMIO_ERR_STATUS), NCL_MMIO_ERR_STATUS_BAD_DESC_MASK);
    static uint8_t before[MEM];
    memcpy(before, rs_ref_dev_mem(d), MEM);
    wr(d, NCL_MMIO_CTRL, NCL_MMIO_CTRL_SOFT_RESET_MASK | NCL_MMIO_CTRL_ENABLE_MASK);
#define RESET_ROW2(n, off, acc, rst, b, rw, cnt, str)                                           \
    for (uint32_t i = 0; i < (cnt); i++)                                                        \
        if (NCL_MMIO_ACC_##acc != NCL_MMIO_ACC_WO)                                              \
            assert_int_equal(rd(d, (off) + i * (str)), rst);
    NCL_MMIO_REGS(RESET_ROW2)
    assert_false(rs_ref_dev_irq(d));
    assert_memory_equal(rs_ref_dev_mem(d), before, MEM); /* memory is not a register */
    /* the engine forgot its doorbell: enabling runs nothing until the ring is set up again */
    wr(d, NCL_MMIO_CTRL, NCL_MMIO_CTRL_ENABLE_MASK);
    assert_int_equal(rs_ref_dev_step(d), RS_REF_STEP_IDLE);
    bring_up(d, RING_N, 0);
    post(d, &(dfields){.opc = NCL_MMIO_OPC_NOTIFY_RECORD, .local = 1, .notify = 0});
    doorbell(d);
    assert_int_equal(rs_ref_dev_run(d, 10), 1);
    assert_int_equal(rd(d, NCL_MMIO_NOTIFY_CNT(0)), 1);
    /* the rst_n reset does the same */
    rs_ref_dev_reset(d);
    NCL_MMIO_REGS(RESET_ROW2)
    rs_ref_dev_free(d);
    /* a device with no memory at all still answers and reports the ring outside memory */
    d = rs_ref_dev_new(0, NULL, NULL);
    wr(d, NCL_MMIO_RING_SIZE, 2);
    wr(d, NCL_MMIO_RING_TAIL, 1);
    wr(d, NCL_MMIO_CTRL, NCL_MMIO_CTRL_ENABLE_MASK);
    doorbell(d);
    assert_int_equal(rs_ref_dev_step(d), RS_REF_STEP_ERROR);
    assert_int_equal(rd(d, NCL_MMIO_ERR_STATUS), NCL_MMIO_ERR_STATUS_ADDR_RANGE_MASK);
    rs_ref_dev_free(d);
}

int main(void)
{
    const char *seed = getenv("RS_SEED");
    if (seed)
        rng_state = strtoull(seed, NULL, 0) | 1;
    printf("refdev: RS_SEED=0x%llx\n", (unsigned long long)rng_state);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bringup),      cmocka_unit_test(test_opcodes_random), cmocka_unit_test(test_reduce_lanes),
        cmocka_unit_test(test_two_devices),  cmocka_unit_test(test_ring_wrap),      cmocka_unit_test(test_errors),
        cmocka_unit_test(test_soft_reset),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    return rc;
}
