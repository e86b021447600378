/* rs_ref_dev.c — cycle-free C reference of the DMA/notify block (see rs_ref_dev.h and rtl_stub/REGISTERS.md). */
#include "rs_ref_dev.h"

#include <stdlib.h>
#include <string.h>

#include <ncl/ncl_mmio_regs.h>

#include "rs_ref_reduce.h"

#define NN NCL_MMIO_NOTIFY_COUNT
#define DW NCL_MMIO_DESC_WORDS
#define ESIZE 4u /* every supported reduce dtype is 32-bit */

/* ERR_STATUS bits the engine raises: they capture ERR_DESC/ERR_ADDR and stop the engine. */
#define ENG_ERRS (NCL_MMIO_ERR_STATUS_BAD_DESC_MASK | NCL_MMIO_ERR_STATUS_ADDR_RANGE_MASK | \
                  NCL_MMIO_ERR_STATUS_LINK_MASK | NCL_MMIO_ERR_STATUS_BAD_RING_MASK)

struct rs_ref_dev {
    /* register file (rs_regfile.sv) */
    uint32_t scratch, base_lo, base_hi, size, tail, head;
    int enable, irq_en;
    uint32_t irq_status, irq_mask, err_status, err_desc, err_addr_lo, err_addr_hi;
    uint32_t cnt[NN];
    /* engine: the RING_TAIL the last accepted doorbell saw (it runs HEAD up to it) */
    uint32_t run_tail;
    /* memory and link */
    uint8_t *mem;
    uint64_t mem_bytes;
    rs_ref_link_fn link;
    void *link_ctx;
};

/* ---- register-file events (the same rules as rs_regfile.sv's next-state logic) ------------- */

static void ev_error(rs_ref_dev *d, uint32_t bits, uint32_t desc, uint64_t addr)
{
    /* the first engine error while no engine bit is set captures where it happened */
    if ((bits & ENG_ERRS) != 0 && (d->err_status & ENG_ERRS) == 0) {
        d->err_desc = desc & NCL_MMIO_ERR_DESC_BITS;
        d->err_addr_lo = (uint32_t)addr;
        d->err_addr_hi = (uint32_t)(addr >> 32);
    }
    d->err_status |= bits & NCL_MMIO_ERR_STATUS_BITS;
    d->irq_status |= NCL_MMIO_IRQ_STATUS_ERROR_MASK;
}

/* Adds `add` and subtracts `sub` from counter i at once, saturating at 0 and 0xFFFFFFFF. */
static void cnt_update(rs_ref_dev *d, uint32_t i, uint64_t add, uint64_t sub)
{
    uint64_t up = (uint64_t)d->cnt[i] + add;
    if (sub > up) {
        d->cnt[i] = 0;
        ev_error(d, NCL_MMIO_ERR_STATUS_NOTIFY_SAT_MASK, 0, 0);
    } else if (up - sub > 0xFFFFFFFFu) {
        d->cnt[i] = 0xFFFFFFFFu;
        ev_error(d, NCL_MMIO_ERR_STATUS_NOTIFY_SAT_MASK, 0, 0);
    } else {
        d->cnt[i] = (uint32_t)(up - sub);
    }
}

/* A hardware +1 (link_inc or eng_inc): also the NOTIFY event. */
static void cnt_hw_inc(rs_ref_dev *d, uint32_t i)
{
    cnt_update(d, i, 1, 0);
    d->irq_status |= NCL_MMIO_IRQ_STATUS_NOTIFY_MASK;
}

static void head_move(rs_ref_dev *d, uint32_t head)
{
    d->head = head & NCL_MMIO_RING_HEAD_BITS;
    if (d->head == d->tail)
        d->irq_status |= NCL_MMIO_IRQ_STATUS_RING_EMPTY_MASK;
}

static int halted(const rs_ref_dev *d) { return (d->err_status & ENG_ERRS) != 0; }

/* ---- life cycle ------------------------------------------------------------------------------ */

void rs_ref_dev_reset(rs_ref_dev *d)
{
    d->scratch = NCL_MMIO_SCRATCH_RESET;
    d->enable = (NCL_MMIO_CTRL_RESET & NCL_MMIO_CTRL_ENABLE_MASK) != 0;
    d->irq_en = (NCL_MMIO_CTRL_RESET & NCL_MMIO_CTRL_IRQ_EN_MASK) != 0;
    d->base_lo = NCL_MMIO_RING_BASE_LO_RESET;
    d->base_hi = NCL_MMIO_RING_BASE_HI_RESET;
    d->size = NCL_MMIO_RING_SIZE_RESET;
    d->tail = NCL_MMIO_RING_TAIL_RESET;
    d->head = NCL_MMIO_RING_HEAD_RESET;
    d->irq_status = NCL_MMIO_IRQ_STATUS_RESET;
    d->irq_mask = NCL_MMIO_IRQ_MASK_RESET;
    d->err_status = NCL_MMIO_ERR_STATUS_RESET;
    d->err_desc = NCL_MMIO_ERR_DESC_RESET;
    d->err_addr_lo = NCL_MMIO_ERR_ADDR_LO_RESET;
    d->err_addr_hi = NCL_MMIO_ERR_ADDR_HI_RESET;
    for (uint32_t i = 0; i < NN; i++)
        d->cnt[i] = NCL_MMIO_NOTIFY_CNT_RESET;
    d->run_tail = d->head;
}

rs_ref_dev *rs_ref_dev_new(uint64_t mem_bytes, rs_ref_link_fn link, void *link_ctx)
{
    if (mem_bytes > (uint64_t)SIZE_MAX - 1)
        return NULL;
    rs_ref_dev *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->mem = calloc((size_t)mem_bytes + 1, 1); /* +1: a 0-byte memory still gets a pointer */
    if (!d->mem) {
        free(d);
        return NULL;
    }
    d->mem_bytes = mem_bytes;
    d->link = link;
    d->link_ctx = link_ctx;
    rs_ref_dev_reset(d);
    return d;
}

void rs_ref_dev_free(rs_ref_dev *d)
{
    if (d) {
        free(d->mem);
        free(d);
    }
}

uint8_t *rs_ref_dev_mem(rs_ref_dev *d) { return d->mem; }
uint64_t rs_ref_dev_mem_bytes(const rs_ref_dev *d) { return d->mem_bytes; }

int rs_ref_dev_irq(const rs_ref_dev *d) { return d->irq_en && (d->irq_status & d->irq_mask) != 0; }

/* ---- register bus ---------------------------------------------------------------------------- */

static int busy(const rs_ref_dev *d) { return d->enable && !halted(d) && d->head != d->run_tail; }

/* The counter an address names, or -1. */
static int cnt_index(uint32_t addr)
{
    if (addr < NCL_MMIO_NOTIFY_CNT(0) || addr > NCL_MMIO_NOTIFY_CNT(NN - 1))
        return -1;
    uint32_t off = addr - NCL_MMIO_NOTIFY_CNT(0);
    return off % NCL_MMIO_NOTIFY_CNT_STRIDE ? -1 : (int)(off / NCL_MMIO_NOTIFY_CNT_STRIDE);
}

uint32_t rs_ref_dev_read(rs_ref_dev *d, uint32_t addr, int *err)
{
    uint32_t v = 0;
    int bad = 0;
    if (addr >= (1u << NCL_MMIO_ADDR_BITS) || (addr & 3u)) {
        bad = 1;
    } else {
        switch (addr) {
        case NCL_MMIO_ID: v = NCL_MMIO_ID_RESET; break;
        case NCL_MMIO_VERSION: v = NCL_MMIO_VERSION_RESET; break;
        case NCL_MMIO_CAPS: v = NCL_MMIO_CAPS_RESET; break;
        case NCL_MMIO_SCRATCH: v = d->scratch; break;
        case NCL_MMIO_CTRL:
            v = (d->enable ? NCL_MMIO_CTRL_ENABLE_MASK : 0) | (d->irq_en ? NCL_MMIO_CTRL_IRQ_EN_MASK : 0);
            break;
        case NCL_MMIO_STATUS:
            v = (busy(d) ? NCL_MMIO_STATUS_BUSY_MASK : 0) | (d->head == d->tail ? NCL_MMIO_STATUS_EMPTY_MASK : 0);
            break;
        case NCL_MMIO_RING_BASE_LO: v = d->base_lo; break;
        case NCL_MMIO_RING_BASE_HI: v = d->base_hi; break;
        case NCL_MMIO_RING_SIZE: v = d->size; break;
        case NCL_MMIO_RING_HEAD: v = d->head; break;
        case NCL_MMIO_RING_TAIL: v = d->tail; break;
        case NCL_MMIO_DOORBELL: break;
        case NCL_MMIO_IRQ_STATUS: v = d->irq_status; break;
        case NCL_MMIO_IRQ_MASK: v = d->irq_mask; break;
        case NCL_MMIO_ERR_STATUS: v = d->err_status; break;
        case NCL_MMIO_ERR_DESC: v = d->err_desc; break;
        case NCL_MMIO_ERR_ADDR_LO: v = d->err_addr_lo; break;
        case NCL_MMIO_ERR_ADDR_HI: v = d->err_addr_hi; break;
        case NCL_MMIO_NOTIFY_ADD: break;
        case NCL_MMIO_NOTIFY_SUB: break;
        default: {
            int i = cnt_index(addr);
            if (i < 0)
                bad = 1;
            else
                v = d->cnt[i];
        }
        }
    }
    if (bad) {
        v = 0;
        ev_error(d, NCL_MMIO_ERR_STATUS_REG_ACCESS_MASK, 0, 0);
    }
    if (err)
        *err = bad;
    return v;
}

/* DOORBELL: validate the ring, then let the engine run HEAD up to the current TAIL. */
static void doorbell(rs_ref_dev *d)
{
    if (halted(d))
        return; /* stopped on an error: clear ERR_STATUS first, then ring again (retries HEAD) */
    if (d->size < 2 || d->size > (1u << NCL_MMIO_RING_MAX_LOG2) || d->tail >= d->size || d->head >= d->size) {
        ev_error(d, NCL_MMIO_ERR_STATUS_BAD_RING_MASK, d->head, 0);
        return;
    }
    d->run_tail = d->tail;
}

int rs_ref_dev_write(rs_ref_dev *d, uint32_t addr, uint32_t v)
{
    int bad = 0;
    if (addr >= (1u << NCL_MMIO_ADDR_BITS) || (addr & 3u)) {
        bad = 1;
    } else {
        switch (addr) {
        case NCL_MMIO_ID: case NCL_MMIO_VERSION: case NCL_MMIO_CAPS: case NCL_MMIO_STATUS:
        case NCL_MMIO_RING_HEAD: case NCL_MMIO_ERR_DESC: case NCL_MMIO_ERR_ADDR_LO: case NCL_MMIO_ERR_ADDR_HI:
            break; /* RO: ignored without a bus error */
        case NCL_MMIO_SCRATCH: d->scratch = v & NCL_MMIO_SCRATCH_RWBITS; break;
        case NCL_MMIO_CTRL:
            if (v & NCL_MMIO_CTRL_SOFT_RESET_MASK) {
                rs_ref_dev_reset(d); /* the written ENABLE/IRQ_EN are discarded with everything else */
            } else {
                d->enable = (v & NCL_MMIO_CTRL_ENABLE_MASK) != 0;
                d->irq_en = (v & NCL_MMIO_CTRL_IRQ_EN_MASK) != 0;
            }
            break;
        case NCL_MMIO_RING_BASE_LO: d->base_lo = v & NCL_MMIO_RING_BASE_LO_RWBITS; break;
        case NCL_MMIO_RING_BASE_HI: d->base_hi = v & NCL_MMIO_RING_BASE_HI_RWBITS; break;
        case NCL_MMIO_RING_SIZE: d->size = v & NCL_MMIO_RING_SIZE_RWBITS; break;
        case NCL_MMIO_RING_TAIL: d->tail = v & NCL_MMIO_RING_TAIL_RWBITS; break;
        case NCL_MMIO_DOORBELL: doorbell(d); break;
        case NCL_MMIO_IRQ_STATUS: d->irq_status &= ~v; break;
        case NCL_MMIO_IRQ_MASK: d->irq_mask = v & NCL_MMIO_IRQ_MASK_RWBITS; break;
        case NCL_MMIO_ERR_STATUS: d->err_status &= ~v; break;
        case NCL_MMIO_NOTIFY_ADD:
        case NCL_MMIO_NOTIFY_SUB: {
            int add = addr == NCL_MMIO_NOTIFY_ADD;
            uint32_t idx = add ? NCL_MMIO_GET(NCL_MMIO_NOTIFY_ADD_IDX, v) : NCL_MMIO_GET(NCL_MMIO_NOTIFY_SUB_IDX, v);
            uint32_t amt = add ? NCL_MMIO_GET(NCL_MMIO_NOTIFY_ADD_AMOUNT, v) : NCL_MMIO_GET(NCL_MMIO_NOTIFY_SUB_AMOUNT, v);
            if (idx >= NN)
                bad = 1; /* must not alias another counter: no change */
            else
                cnt_update(d, idx, add ? amt : 0, add ? 0 : amt);
            break;
        }
        default:
            bad = cnt_index(addr) < 0; /* NOTIFY_CNT is RO */
        }
    }
    if (bad)
        ev_error(d, NCL_MMIO_ERR_STATUS_REG_ACCESS_MASK, 0, 0);
    return bad;
}

/* ---- memory and lanes ------------------------------------------------------------------------ */

/* [addr, addr + len) inside memory, without overflow; also checked for len 0 (addr <= size). */
static int in_mem(const rs_ref_dev *d, uint64_t addr, uint64_t len)
{
    return addr <= d->mem_bytes && len <= d->mem_bytes - addr;
}

static uint32_t ld32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

static void st32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static int reduce_ok(uint32_t dtype, uint32_t op)
{
    int unsupported = 1;
    (void)rs_ref_reduce((int)dtype, (int)op, 0, 0, &unsupported);
    return !unsupported;
}

/* dst lane i <- dst lane i op src lane i (a = the destination's old value, b = the source). */
static void reduce_lanes(uint8_t *dst, const uint8_t *src, uint64_t bytes, uint32_t dtype, uint32_t op)
{
    for (uint64_t i = 0; i < bytes; i += ESIZE)
        st32(dst + i, rs_ref_reduce((int)dtype, (int)op, ld32(dst + i), ld32(src + i), NULL));
}

/* ---- link receive side ----------------------------------------------------------------------- */

int rs_ref_dev_link_rx(rs_ref_dev *d, const rs_ref_link_msg *m)
{
    switch (m->kind) {
    case RS_REF_LINK_WRITE:
        if (!in_mem(d, m->addr, m->bytes))
            return RS_REF_RX_RANGE;
        if (m->bytes)
            memmove(d->mem + m->addr, m->data, m->bytes);
        return RS_REF_RX_OK;
    case RS_REF_LINK_WRITE_REDUCE:
        if (!reduce_ok(m->dtype, m->op) || m->addr % ESIZE || m->bytes % ESIZE)
            return RS_REF_RX_BAD;
        if (!in_mem(d, m->addr, m->bytes))
            return RS_REF_RX_RANGE;
        reduce_lanes(d->mem + m->addr, m->data, m->bytes, m->dtype, m->op);
        return RS_REF_RX_OK;
    case RS_REF_LINK_NOTIFY:
        if (m->notify >= NN)
            return RS_REF_RX_BAD;
        cnt_hw_inc(d, m->notify);
        return RS_REF_RX_OK;
    default:
        return RS_REF_RX_BAD;
    }
}

/* ---- descriptor engine ----------------------------------------------------------------------- */

#define DGET(w, F) NCL_MMIO_DESC_GET(w, NCL_MMIO_DESC_##F)
#define USE(F) (use[NCL_MMIO_DESC_##F##_WORD] |= NCL_MMIO_DESC_##F##_MASK)

/* Whether the descriptor only sets fields its opcode uses (reserved bits included). */
static int fields_ok(const uint32_t *w, uint32_t opc)
{
    uint32_t use[DW] = {0};
    USE(OPCODE);
    USE(IRQ);
    USE(FENCE);
    USE(TAG);
    switch (opc) {
    case NCL_MMIO_OPC_WRITE_REDUCE: USE(DTYPE); USE(OP); /* fall through */
    case NCL_MMIO_OPC_WRITE: USE(PEER); USE(SRC_LO); USE(SRC_HI); USE(DST_LO); USE(DST_HI); USE(LEN); break;
    case NCL_MMIO_OPC_LOCAL_REDUCE: USE(DTYPE); USE(OP); /* fall through */
    case NCL_MMIO_OPC_LOCAL_COPY: USE(SRC_LO); USE(SRC_HI); USE(DST_LO); USE(DST_HI); USE(LEN); break;
    case NCL_MMIO_OPC_NOTIFY_RECORD: USE(PEER); USE(NOTIFY); USE(LOCAL); break;
    case NCL_MMIO_OPC_NOTIFY_WAIT: USE(NOTIFY); USE(COUNT); break;
    case NCL_MMIO_OPC_NOP: break;
    default: return 0;
    }
    for (uint32_t i = 0; i < DW; i++)
        if (w[i] & ~use[i])
            return 0;
    return 1;
}

/* Partial overlap of two equal-length local ranges (identical ranges are fine: lane i only reads
 * and writes lane i; anything else would depend on the order the RTL moves bytes in). */
static int overlaps(uint64_t a, uint64_t b, uint64_t len)
{
    if (a == b || len == 0)
        return 0;
    return a < b ? b - a < len : a - b < len;
}

int rs_ref_dev_step(rs_ref_dev *d)
{
    if (!d->enable || halted(d) || d->head == d->run_tail)
        return RS_REF_STEP_IDLE;

    uint32_t idx = d->head;
    uint64_t base = (uint64_t)d->base_hi << 32 | d->base_lo;
    uint64_t daddr = base + (uint64_t)idx * NCL_MMIO_DESC_BYTES;
    if (daddr < base || !in_mem(d, daddr, NCL_MMIO_DESC_BYTES)) {
        ev_error(d, NCL_MMIO_ERR_STATUS_ADDR_RANGE_MASK, idx, daddr);
        return RS_REF_STEP_ERROR;
    }
    uint32_t w[DW];
    for (uint32_t i = 0; i < DW; i++)
        w[i] = ld32(d->mem + daddr + 4u * i);

    uint32_t opc = DGET(w, OPCODE), dtype = DGET(w, DTYPE), op = DGET(w, OP);
    uint32_t peer = DGET(w, PEER), nidx = DGET(w, NOTIFY), count = DGET(w, COUNT);
    uint64_t src = (uint64_t)DGET(w, SRC_HI) << 32 | DGET(w, SRC_LO);
    uint64_t dst = (uint64_t)DGET(w, DST_HI) << 32 | DGET(w, DST_LO);
    uint64_t len = DGET(w, LEN);
    int reduce = opc == NCL_MMIO_OPC_WRITE_REDUCE || opc == NCL_MMIO_OPC_LOCAL_REDUCE;
    int local = opc == NCL_MMIO_OPC_LOCAL_COPY || opc == NCL_MMIO_OPC_LOCAL_REDUCE;
    int notify = opc == NCL_MMIO_OPC_NOTIFY_RECORD || opc == NCL_MMIO_OPC_NOTIFY_WAIT;

    /* BAD_DESC first (all of it is decodable from the descriptor alone), then ADDR_RANGE. */
    int bad = !fields_ok(w, opc);
    if (!bad && reduce)
        bad = !reduce_ok(dtype, op) || src % ESIZE || dst % ESIZE || len % ESIZE;
    if (!bad && local)
        bad = overlaps(src, dst, len);
    if (!bad && notify)
        bad = nidx >= NN;
    if (!bad && opc == NCL_MMIO_OPC_NOTIFY_RECORD && DGET(w, LOCAL))
        bad = peer != 0;
    if (bad) {
        ev_error(d, NCL_MMIO_ERR_STATUS_BAD_DESC_MASK, idx, daddr);
        return RS_REF_STEP_ERROR;
    }
    if (!notify && opc != NCL_MMIO_OPC_NOP) {
        /* ERR_ADDR names the range's start: the source first, then a local destination (a
         * peer's destination is the peer's to check: it refuses the transfer, LINK here) */
        int src_bad = !in_mem(d, src, len), dst_bad = local && !in_mem(d, dst, len);
        if (src_bad || dst_bad) {
            ev_error(d, NCL_MMIO_ERR_STATUS_ADDR_RANGE_MASK, idx, src_bad ? src : dst);
            return RS_REF_STEP_ERROR;
        }
    }

    rs_ref_link_msg m = {0};
    m.peer = (uint16_t)peer;
    int link_fail = 0;
    switch (opc) {
    case NCL_MMIO_OPC_WRITE:
    case NCL_MMIO_OPC_WRITE_REDUCE:
        if (len == 0)
            break; /* nothing to move: nothing goes on the link */
        m.kind = opc == NCL_MMIO_OPC_WRITE ? RS_REF_LINK_WRITE : RS_REF_LINK_WRITE_REDUCE;
        m.addr = dst;
        m.data = d->mem + src;
        m.bytes = (uint32_t)len;
        m.dtype = (uint8_t)dtype;
        m.op = (uint8_t)op;
        link_fail = !d->link || d->link(d->link_ctx, &m) != 0;
        break;
    case NCL_MMIO_OPC_LOCAL_COPY:
        if (len)
            memmove(d->mem + dst, d->mem + src, (size_t)len);
        break;
    case NCL_MMIO_OPC_LOCAL_REDUCE:
        reduce_lanes(d->mem + dst, d->mem + src, len, dtype, op);
        break;
    case NCL_MMIO_OPC_NOTIFY_RECORD:
        if (DGET(w, LOCAL)) {
            cnt_hw_inc(d, nidx);
        } else {
            m.kind = RS_REF_LINK_NOTIFY;
            m.notify = (uint8_t)nidx;
            link_fail = !d->link || d->link(d->link_ctx, &m) != 0;
        }
        break;
    case NCL_MMIO_OPC_NOTIFY_WAIT:
        if (d->cnt[nidx] < count)
            return RS_REF_STEP_BLOCKED;
        cnt_update(d, nidx, 0, count);
        break;
    default: /* NOP */
        break;
    }
    if (link_fail) {
        /* ERR_ADDR: the peer address of a write, the peer node of a notify record */
        ev_error(d, NCL_MMIO_ERR_STATUS_LINK_MASK, idx, opc == NCL_MMIO_OPC_NOTIFY_RECORD ? peer : dst);
        return RS_REF_STEP_ERROR;
    }
    if (DGET(w, IRQ))
        d->irq_status |= NCL_MMIO_IRQ_STATUS_DESC_DONE_MASK;
    head_move(d, (idx + 1) % d->size);
    return RS_REF_STEP_DONE;
}

uint64_t rs_ref_dev_run(rs_ref_dev *d, uint64_t max_steps)
{
    uint64_t n = 0;
    while (n < max_steps && rs_ref_dev_step(d) == RS_REF_STEP_DONE)
        n++;
    return n;
}
