/* ncl_mmio.c — the register-level HAL backend: ring descriptors, doorbell, notify counters and IRQ status of the DMA/notify block. */
#include "ncl/ncl_mmio.h"

#include "ncl/ncl_dtype.h"
#include "ncl/ncl_mmio_regs.h"
#include "ncl_backend.h"
#include "ncl_fmt.h"

#include <stdarg.h>
#include <string.h>

/* Longest single descriptor: LEN is 32-bit; 1 GiB keeps every chunk a multiple of any element. */
#define MMIO_MAX_LEN (1ull << 30)
#define MMIO_ID_RSIM 0x5253494Du
#define MMIO_MAJOR 1u
#define MMIO_MIN_IDS 2u /* per peer: one channel's DATA and READY */
#define MMIO_IRQ_EVENTS                                                                   \
    (NCL_MMIO_IRQ_STATUS_DESC_DONE_MASK | NCL_MMIO_IRQ_STATUS_RING_EMPTY_MASK |           \
     NCL_MMIO_IRQ_STATUS_ERROR_MASK | NCL_MMIO_IRQ_STATUS_NOTIFY_MASK)
#define MMIO_ENG_ERRS                                                                     \
    (NCL_MMIO_ERR_STATUS_BAD_DESC_MASK | NCL_MMIO_ERR_STATUS_ADDR_RANGE_MASK |            \
     NCL_MMIO_ERR_STATUS_LINK_MASK | NCL_MMIO_ERR_STATUS_BAD_RING_MASK)

/* Per-queue state: the engine keeps at most one data task outstanding per queue. */
enum { MQ_IDLE = 0, MQ_RING, MQ_DONE, MQ_FAILED };

typedef struct mmio_queue {
    uint8_t state;
    uint64_t last; /* MQ_RING: posted-sequence number of the task's last descriptor */
} mmio_queue;

/* What software put in a ring slot, to name the task when the block reports an error there. */
typedef struct mmio_slot {
    uint8_t opc, kind, queue; /* queue 0xFF: a record (fire-and-forget) */
    uint8_t valid;
    int32_t peer;
    uint32_t step;
    uint16_t tag;
} mmio_slot;

struct ncl_mmio {
    ncl_mmio_config cfg;
    ncl_mmio_access acc;
    ncl_hal hal;
    uint32_t notify_count, ids_per_peer;
    /* ring: software's tail and the number of descriptors ever posted (since the last bring-up) */
    uint32_t tail;
    uint64_t posted;
    /* the running collective */
    uint64_t seq;
    ncl_bk_bufs bufs; /* device addresses */
    uint64_t peer_recv_fallback;
    uint64_t peer_recv_bytes; /* the running call's ncl_hal_launch.peer_recv_bytes */
    mmio_queue q[NCL_MAX_QUEUES];
    int completion_unseen; /* a controller task completed that wait_event has not reported */
    int failed;            /* the block reported an error during this collective */
    ncl_mmio_stats stats;
    char err[512];
    mmio_slot *slots; /* ring_entries, right after this struct in the caller's memory */
    /* launch mailbox (cfg.launch_base): this call's launch; per peer, bits: its record was sent
     * (this call), its record was compared and agrees (this call); after the slots */
    ncl_hal_launch launch;
    uint64_t *launch_sent, *launch_agreed;
    int launch_flush; /* a launch record told a mismatched peer: end() lets it leave before the reset */
};

/* 64-bit words of one per-peer bit set. */
static size_t peer_words(const ncl_mmio_config *c) { return ((size_t)c->nranks + 63u) / 64u; }

static const char *const opc_names[] = {"0?", "WRITE", "WRITE_REDUCE", "LOCAL_COPY", "LOCAL_REDUCE",
                                        "NOTIFY_RECORD", "NOTIFY_WAIT", "NOP"};

static const char *opc_name(uint32_t opc)
{
    return opc < sizeof opc_names / sizeof opc_names[0] ? opc_names[opc] : "?";
}

/* ---- logging ------------------------------------------------------------------------------ */

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void mlog(ncl_mmio *m, int level, const char *fmt, ...)
{
    if (!m->acc.log || level > m->cfg.log_level)
        return;
    char msg[320];
    va_list ap;
    va_start(ap, fmt);
    ncl_vfmt(msg, sizeof msg, fmt, ap);
    va_end(ap);
    m->acc.log(m->acc.ctx, level, msg);
}

/* Records the error as last_error, logs it, returns rc. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static ncl_result mfail(ncl_mmio *m, ncl_result rc, const char *fmt, ...)
{
    size_t n = ncl_fmt(m->err, sizeof m->err, "mmio rank %d: ", m->cfg.rank);
    va_list ap;
    va_start(ap, fmt);
    ncl_vfmt(m->err + n, sizeof m->err - n, fmt, ap);
    va_end(ap);
    if (m->acc.log && m->cfg.log_level >= NCL_LOG_ERROR)
        m->acc.log(m->acc.ctx, NCL_LOG_ERROR, m->err);
    return rc;
}

/* ---- register and memory access ----------------------------------------------------------- */

static uint32_t rd(ncl_mmio *m, uint32_t off) { return m->acc.reg_read32(m->acc.ctx, off); }
static void wr(ncl_mmio *m, uint32_t off, uint32_t v) { m->acc.reg_write32(m->acc.ctx, off, v); }
static uint64_t now(ncl_mmio *m) { return m->acc.now_ns(m->acc.ctx); }

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ---- bring-up ----------------------------------------------------------------------------- */

/* The REGISTERS.md sequence. Also the recovery after an error (the counters, the ring and every
 * error bit start over). */
static ncl_result bringup(ncl_mmio *m)
{
    m->stats.bringups++;
    wr(m, NCL_MMIO_CTRL, NCL_MMIO_CTRL_SOFT_RESET_MASK);
    uint32_t id = rd(m, NCL_MMIO_ID);
    if (id != MMIO_ID_RSIM)
        return mfail(m, NCL_ERR_BACKEND,
                     "bring-up: ID reads 0x%x, not 0x5253494D ('RSIM'): this is not the ringsim "
                     "DMA/notify block, or the register window is mapped at the wrong address", (unsigned)id);
    uint32_t ver = rd(m, NCL_MMIO_VERSION);
    uint32_t major = NCL_MMIO_GET(NCL_MMIO_VERSION_MAJOR, ver);
    if (major != MMIO_MAJOR)
        return mfail(m, NCL_ERR_UNSUPPORTED,
                     "bring-up: register map version %u.%u, this backend knows major %u only: use "
                     "a firmware built for that block", (unsigned)major,
                     (unsigned)NCL_MMIO_GET(NCL_MMIO_VERSION_MINOR, ver), (unsigned)MMIO_MAJOR);
    uint32_t caps = rd(m, NCL_MMIO_CAPS);
    uint32_t ncnt = NCL_MMIO_GET(NCL_MMIO_CAPS_NOTIFY_COUNT, caps);
    uint32_t ring_log2 = NCL_MMIO_GET(NCL_MMIO_CAPS_RING_MAX_LOG2, caps);
    uint32_t desc_log2 = NCL_MMIO_GET(NCL_MMIO_CAPS_DESC_LOG2, caps);
    if (ncnt == 0)
        ncnt = 256; /* an 8-bit field: 0 would be 256 counters */
    if (desc_log2 != 5)
        return mfail(m, NCL_ERR_UNSUPPORTED, "bring-up: CAPS says %u-byte descriptors, this backend "
                     "writes %u-byte ones", 1u << (desc_log2 & 31), NCL_MMIO_DESC_BYTES);
    if (ring_log2 > 31 || m->cfg.ring_entries > (1u << ring_log2))
        return mfail(m, NCL_ERR_UNSUPPORTED, "bring-up: a ring of %u entries asked, the block takes "
                     "at most 2^%u", (unsigned)m->cfg.ring_entries, (unsigned)ring_log2);
    if (ncnt > NCL_MMIO_NOTIFY_COUNT)
        ncnt = NCL_MMIO_NOTIFY_COUNT; /* the register window holds no more */
    uint32_t ipp = ncnt / (uint32_t)m->cfg.nranks;
    if (ipp > NCL_NOTIFY_IDS)
        ipp = NCL_NOTIFY_IDS;
    if (ipp < MMIO_MIN_IDS)
        return mfail(m, NCL_ERR_UNSUPPORTED,
                     "bring-up: too few notify counters: the block has %u, %d ranks need at least "
                     "%u each (%u)", (unsigned)ncnt, m->cfg.nranks, MMIO_MIN_IDS,
                     (unsigned)(MMIO_MIN_IDS * (uint32_t)m->cfg.nranks));
    m->notify_count = ncnt;
    m->ids_per_peer = ipp;
    static const uint32_t pat[2] = {0xA5C3F00Fu, 0x5A3C0FF0u};
    for (int i = 0; i < 2; i++) {
        wr(m, NCL_MMIO_SCRATCH, pat[i]);
        uint32_t got = rd(m, NCL_MMIO_SCRATCH);
        if (got != pat[i])
            return mfail(m, NCL_ERR_BACKEND, "bring-up: SCRATCH reads 0x%x after writing 0x%x: "
                         "register writes do not land", (unsigned)got, (unsigned)pat[i]);
    }
    wr(m, NCL_MMIO_RING_BASE_LO, (uint32_t)m->cfg.ring_base);
    wr(m, NCL_MMIO_RING_BASE_HI, (uint32_t)(m->cfg.ring_base >> 32));
    wr(m, NCL_MMIO_RING_SIZE, m->cfg.ring_entries);
    wr(m, NCL_MMIO_RING_TAIL, 0);
    uint32_t head = rd(m, NCL_MMIO_RING_HEAD), size = rd(m, NCL_MMIO_RING_SIZE);
    if (head != 0 || size != m->cfg.ring_entries)
        return mfail(m, NCL_ERR_BACKEND, "bring-up: after reset RING_HEAD reads %u and RING_SIZE %u "
                     "(expected 0 and %u)", (unsigned)head, (unsigned)size, (unsigned)m->cfg.ring_entries);
    wr(m, NCL_MMIO_ERR_STATUS, 0xFFFFFFFFu);
    wr(m, NCL_MMIO_IRQ_STATUS, 0xFFFFFFFFu);
    wr(m, NCL_MMIO_IRQ_MASK, m->cfg.irq ? MMIO_IRQ_EVENTS : 0);
    wr(m, NCL_MMIO_CTRL, NCL_MMIO_CTRL_ENABLE_MASK | (m->cfg.irq ? NCL_MMIO_CTRL_IRQ_EN_MASK : 0));
    m->tail = 0;
    m->posted = 0;
    memset(m->slots, 0, (size_t)m->cfg.ring_entries * sizeof *m->slots);
    for (uint32_t q = 0; q < NCL_MAX_QUEUES; q++)
        m->q[q].state = MQ_IDLE;
    mlog(m, NCL_LOG_INFO, "mmio rank %d: block up (version %u.%u, %u notify counters, %u ids per "
         "peer, ring %u x %u B at 0x%llx, %s mode)", m->cfg.rank, (unsigned)major,
         (unsigned)NCL_MMIO_GET(NCL_MMIO_VERSION_MINOR, ver), (unsigned)ncnt, (unsigned)ipp,
         (unsigned)m->cfg.ring_entries,
         NCL_MMIO_DESC_BYTES, (unsigned long long)m->cfg.ring_base, m->cfg.irq ? "interrupt" : "polled");
    return NCL_SUCCESS;
}

size_t ncl_mmio_mem_bytes(const ncl_mmio_config *cfg)
{
    size_t head = (sizeof(ncl_mmio) + 15u) / 16u * 16u;
    if (!cfg)
        return head;
    size_t slots = ((size_t)cfg->ring_entries * sizeof(mmio_slot) + 7u) / 8u * 8u;
    return head + slots + 2u * peer_words(cfg) * sizeof(uint64_t);
}

static ncl_result check_config(const ncl_mmio_config *c, const ncl_mmio_access *a, const char **why)
{
    if (c->size != sizeof(ncl_mmio_config) || c->version != NCL_MMIO_CONFIG_VERSION)
        return *why = "config size/version mismatch: start from NCL_MMIO_CONFIG_INIT", NCL_ERR_INVALID_ARGUMENT;
    if (c->nranks < 1 || c->rank < 0 || c->rank >= c->nranks || c->nranks > 0xFFFF)
        return *why = "rank/nranks out of range", NCL_ERR_INVALID_ARGUMENT;
    if (c->ring_entries < 2 || c->ring_entries > (1u << NCL_MMIO_RING_MAX_LOG2))
        return *why = "ring_entries must be 2..65536", NCL_ERR_INVALID_ARGUMENT;
    if (c->ring_base % NCL_MMIO_DESC_BYTES)
        return *why = "ring_base must be 32-byte aligned", NCL_ERR_INVALID_ARGUMENT;
    if (c->scratch_base % 4u || (c->scratch_bytes && !c->scratch_base))
        return *why = "scratch_base must be 4-byte aligned and not 0", NCL_ERR_INVALID_ARGUMENT;
    if (c->buffers != NCL_MMIO_BUF_SYMMETRIC)
        return *why = "unknown buffer convention", NCL_ERR_INVALID_ARGUMENT;
    if (c->max_queues < 1 || c->max_queues > NCL_MAX_QUEUES)
        return *why = "max_queues must be 1..NCL_MAX_QUEUES", NCL_ERR_INVALID_ARGUMENT;
    if (c->buf_align < 4 || (c->buf_align & (c->buf_align - 1)))
        return *why = "buf_align must be a power of two >= 4 (the reduce lanes are 32-bit)", NCL_ERR_INVALID_ARGUMENT;
    if (!c->bounce || c->bounce_bytes < 16 || (uintptr_t)c->bounce % 8u)
        return *why = "an 8-byte aligned bounce buffer of at least 16 bytes is required (controller-run tasks)", NCL_ERR_INVALID_ARGUMENT;
    if (!a || !a->reg_read32 || !a->reg_write32 || !a->mem_read || !a->mem_write || !a->now_ns)
        return *why = "access functions reg_read32, reg_write32, mem_read, mem_write, now_ns are required", NCL_ERR_INVALID_ARGUMENT;
    if (c->irq && !a->wait_irq)
        return *why = "interrupt mode needs access.wait_irq", NCL_ERR_INVALID_ARGUMENT;
    if (c->launch_base % NCL_MMIO_LAUNCH_BYTES)
        return *why = "launch_base must be 32-byte aligned", NCL_ERR_INVALID_ARGUMENT;
    return NCL_SUCCESS;
}

ncl_result ncl_mmio_init(ncl_mmio **out, void *mem, size_t mem_bytes, const ncl_mmio_config *cfg,
                         const ncl_mmio_access *access)
{
    if (!out)
        return NCL_ERR_INVALID_ARGUMENT;
    *out = NULL;
    if (!cfg || !mem || (uintptr_t)mem % 16u || cfg->size != sizeof(ncl_mmio_config) ||
        mem_bytes < ncl_mmio_mem_bytes(cfg))
        return NCL_ERR_INVALID_ARGUMENT;
    ncl_mmio *m = mem;
    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    if (access)
        m->acc = *access;
    m->hal.ops = &ncl_mmio_hal_ops;
    m->hal.ctx = m;
    m->slots = (mmio_slot *)((unsigned char *)mem + (sizeof(ncl_mmio) + 15u) / 16u * 16u);
    size_t slots = ((size_t)cfg->ring_entries * sizeof(mmio_slot) + 7u) / 8u * 8u;
    m->launch_sent = (uint64_t *)((unsigned char *)m->slots + slots);
    m->launch_agreed = m->launch_sent + peer_words(cfg);
    memset(m->launch_sent, 0, 2u * peer_words(cfg) * sizeof(uint64_t)); /* the caller's memory: not zeroed */
    *out = m;
    const char *why = NULL;
    ncl_result rc = check_config(cfg, access, &why);
    if (rc != NCL_SUCCESS) {
        ncl_fmt(m->err, sizeof m->err, "mmio: bad config: %s", why);
        if (m->acc.log)
            m->acc.log(m->acc.ctx, NCL_LOG_ERROR, m->err);
        return rc;
    }
    return bringup(m);
}

void ncl_mmio_fini(ncl_mmio *m)
{
    if (m && m->acc.reg_write32)
        wr(m, NCL_MMIO_CTRL, 0);
}

const ncl_hal *ncl_mmio_hal(ncl_mmio *m) { return m ? &m->hal : NULL; }
const char *ncl_mmio_last_error(const ncl_mmio *m) { return m ? m->err : ""; }
void ncl_mmio_set_peer_recv(ncl_mmio *m, uint64_t dev_addr)
{
    if (m)
        m->peer_recv_fallback = dev_addr;
}
void ncl_mmio_get_stats(const ncl_mmio *m, ncl_mmio_stats *out)
{
    if (m && out)
        *out = m->stats;
}

/* ---- errors the block reports -------------------------------------------------------------- */

static void err_bits_str(uint32_t e, char *buf, size_t len)
{
    static const struct { uint32_t mask; const char *name; } bits[] = {
        {NCL_MMIO_ERR_STATUS_BAD_DESC_MASK, "BAD_DESC"},     {NCL_MMIO_ERR_STATUS_ADDR_RANGE_MASK, "ADDR_RANGE"},
        {NCL_MMIO_ERR_STATUS_LINK_MASK, "LINK"},             {NCL_MMIO_ERR_STATUS_BAD_RING_MASK, "BAD_RING"},
        {NCL_MMIO_ERR_STATUS_REG_ACCESS_MASK, "REG_ACCESS"}, {NCL_MMIO_ERR_STATUS_NOTIFY_SAT_MASK, "NOTIFY_SAT"},
    };
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++)
        if (e & bits[i].mask)
            n += ncl_fmt(buf + n, len - n, "%s%s", n ? "|" : "", bits[i].name);
}

/* The block stopped (or a register-file error bit is set): name the descriptor, reset, recover. */
static ncl_result block_failed(ncl_mmio *m, uint32_t err)
{
    uint32_t slot = NCL_MMIO_GET(NCL_MMIO_ERR_DESC_INDEX, rd(m, NCL_MMIO_ERR_DESC));
    uint64_t addr = (uint64_t)rd(m, NCL_MMIO_ERR_ADDR_HI) << 32 | rd(m, NCL_MMIO_ERR_ADDR_LO);
    char bits[80];
    err_bits_str(err, bits, sizeof bits);
    m->stats.errors++;
    m->failed = 1;
    char what[200];
    if (!(err & MMIO_ENG_ERRS)) {
        ncl_fmt(what, sizeof what, "the block reports %s (ERR_STATUS 0x%x; no descriptor failed: a "
                "notify counter saturated or a register access was refused)", bits, err);
    } else if (slot < m->cfg.ring_entries && m->slots[slot].valid) {
        const mmio_slot *s = &m->slots[slot];
        uint8_t w7[4] = {0};
        uint64_t at = m->cfg.ring_base + (uint64_t)slot * NCL_MMIO_DESC_BYTES;
        int tag_ok = m->acc.mem_read(m->acc.ctx, at + 4u * NCL_MMIO_DESC_TAG_WORD, w7, 4) == 0 &&
                     NCL_MMIO_GET(NCL_MMIO_DESC_TAG, get32(w7)) == s->tag;
        char owner[64], peer[24] = "";
        if (s->queue == 0xFF)
            ncl_fmt(owner, sizeof owner, "a record");
        else
            ncl_fmt(owner, sizeof owner, "queue %u", s->queue);
        if (s->kind == NCL_TASK_WRITE || s->kind == NCL_TASK_WRITE_REDUCE || s->kind == NCL_TASK_NOTIFY_RECORD)
            ncl_fmt(peer, sizeof peer, " to rank %d", s->peer);
        ncl_fmt(what, sizeof what, "descriptor slot %u (%s, tag %u%s) of %s step %u (task %s%s) "
                "failed: %s, address 0x%llx", slot, opc_name(s->opc), s->tag,
                tag_ok ? "" : ", NOT the tag read back from the ring", owner, s->step,
                ncl_task_kind_name(s->kind), peer, bits, (unsigned long long)addr);
    } else {
        ncl_fmt(what, sizeof what, "ring slot %u failed (%s, address 0x%llx), a slot this backend "
                "did not post", slot, bits, (unsigned long long)addr);
    }
    ncl_result rc = mfail(m, NCL_ERR_BACKEND, "collective #%llu: %s; soft-resetting the block",
                          (unsigned long long)m->seq, what);
    wr(m, NCL_MMIO_ERR_STATUS, err);
    wr(m, NCL_MMIO_IRQ_STATUS, NCL_MMIO_IRQ_STATUS_ERROR_MASK);
    char keep[sizeof m->err];
    memcpy(keep, m->err, sizeof keep);
    if (bringup(m) != NCL_SUCCESS)
        return NCL_ERR_BACKEND; /* its own message replaces ours: the block is gone */
    memcpy(m->err, keep, sizeof keep);
    for (uint32_t q = 0; q < NCL_MAX_QUEUES; q++)
        m->q[q].state = MQ_FAILED;
    return rc;
}

/* NCL_SUCCESS, or the error the block reports now. */
static ncl_result check_block(ncl_mmio *m)
{
    uint32_t err = rd(m, NCL_MMIO_ERR_STATUS);
    return err ? block_failed(m, err) : NCL_SUCCESS;
}

/* ---- ring ----------------------------------------------------------------------------------- */

static uint32_t ring_pending(ncl_mmio *m)
{
    uint32_t head = NCL_MMIO_GET(NCL_MMIO_RING_HEAD_INDEX, rd(m, NCL_MMIO_RING_HEAD));
    uint32_t n = m->cfg.ring_entries;
    return head < n ? (m->tail + n - head) % n : 0;
}

/* Descriptors of the ring that completed, ever (since the last bring-up). */
static uint64_t ring_completed(ncl_mmio *m) { return m->posted - ring_pending(m); }

/* Waits (bounded by cfg.timeout_ns) until `need` slots are free. The ring holds no waits, so it
 * drains on its own unless the block stopped. */
static ncl_result ring_reserve(ncl_mmio *m, uint32_t need)
{
    uint32_t n = m->cfg.ring_entries;
    if (need > n - 1)
        return mfail(m, NCL_ERR_INTERNAL, "%u descriptors cannot fit a ring of %u", (unsigned)need, (unsigned)n);
    if (n - 1 - ring_pending(m) >= need)
        return NCL_SUCCESS;
    m->stats.ring_full_waits++;
    uint64_t t0 = now(m);
    for (;;) {
        ncl_result rc = check_block(m);
        if (rc != NCL_SUCCESS)
            return rc;
        if (n - 1 - ring_pending(m) >= need)
            return NCL_SUCCESS;
        uint64_t waited = now(m) - t0;
        if (waited > m->cfg.timeout_ns)
            return mfail(m, NCL_ERR_TIMEOUT, "the descriptor ring (%u entries) stayed full for %llu ms: "
                         "the block does not advance RING_HEAD (%u pending)", (unsigned)n,
                         (unsigned long long)(waited / 1000000u), (unsigned)ring_pending(m));
        if (m->cfg.irq) {
            m->stats.irq_waits++;
            m->acc.wait_irq(m->acc.ctx, m->cfg.timeout_ns - waited);
            wr(m, NCL_MMIO_IRQ_STATUS, rd(m, NCL_MMIO_IRQ_STATUS) & MMIO_IRQ_EVENTS);
        } else if (m->acc.poll) {
            m->stats.polls++;
            m->acc.poll(m->acc.ctx);
        }
    }
}

typedef struct mmio_desc {
    uint32_t opc, dtype, op, irq, fence, local, peer, notify, count;
    uint64_t src, dst, len;
} mmio_desc;

/* Writes d into the next ring slot (reserved by the caller) and names its owner. */
static ncl_result ring_put(ncl_mmio *m, const mmio_desc *d, int queue, const ncl_task *t)
{
    uint32_t w[NCL_MMIO_DESC_WORDS] = {0};
    uint16_t tag = (uint16_t)(m->posted + 1u);
    NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_OPCODE, d->opc);
    NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_DTYPE, d->dtype);
    NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_OP, d->op);
    NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_IRQ, d->irq);
    NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_FENCE, d->fence);
    NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_LOCAL, d->local);
    NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_PEER, d->peer);
    NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_NOTIFY, d->notify);
    NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_SRC_LO, (uint32_t)d->src);
    NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_SRC_HI, (uint32_t)(d->src >> 32));
    NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_DST_LO, (uint32_t)d->dst);
    NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_DST_HI, (uint32_t)(d->dst >> 32));
    NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_LEN, (uint32_t)d->len);
    NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_TAG, tag);
    NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_COUNT, d->count);
    uint8_t bytes[NCL_MMIO_DESC_BYTES];
    for (uint32_t i = 0; i < NCL_MMIO_DESC_WORDS; i++)
        put32(bytes + 4 * i, w[i]);
    uint64_t at = m->cfg.ring_base + (uint64_t)m->tail * NCL_MMIO_DESC_BYTES;
    if (m->acc.mem_write(m->acc.ctx, at, bytes, sizeof bytes) != 0)
        return mfail(m, NCL_ERR_BACKEND, "cannot write ring slot %u at device address 0x%llx",
                     (unsigned)m->tail, (unsigned long long)at);
    mmio_slot *s = &m->slots[m->tail];
    s->opc = (uint8_t)d->opc;
    s->kind = t->kind;
    s->queue = queue < 0 ? 0xFF : (uint8_t)queue;
    s->valid = 1;
    s->peer = t->peer;
    s->step = t->step;
    s->tag = tag;
    m->tail = (m->tail + 1u) % m->cfg.ring_entries;
    m->posted++;
    m->stats.descriptors++;
    m->stats.opcodes[d->opc & 7u]++;
    return NCL_SUCCESS;
}

static void ring_doorbell(ncl_mmio *m)
{
    wr(m, NCL_MMIO_RING_TAIL, m->tail);
    wr(m, NCL_MMIO_DOORBELL, 1);
    m->stats.doorbells++;
}

/* ---- buffers -------------------------------------------------------------------------------- */

/* The device address of (buf + off, bytes) on this rank (peer < 0) or on a peer (symmetric
 * convention: a peer's buffers sit at the addresses of ours), or an explanation in why. */
static int resolve(ncl_mmio *m, ncl_ref ref, uint64_t bytes, int peer, int write, uint64_t *addr,
                   char *why, size_t why_len)
{
    int remote = peer >= 0 && peer != m->cfg.rank;
    if (remote && ref.buf == NCL_BUF_RECV && m->bufs.bound && !m->bufs.base[NCL_BUF_RECV]) {
        /* reduce non-roots have no recv of their own: the root's, from ncl_mmio_set_peer_recv,
         * unsized (it is the root's) */
        uint64_t base = m->peer_recv_fallback;
        if (!base) {
            ncl_fmt(why, why_len, "RECV of rank %d has no device address (reduce non-roots: call "
                    "ncl_mmio_set_peer_recv with the root's recvbuf)", peer);
            return 0;
        }
        if (ref.off > UINT64_MAX - base || bytes > UINT64_MAX - base - ref.off) {
            ncl_fmt(why, why_len, "RECV + %llu wraps the address space", (unsigned long long)ref.off);
            return 0;
        }
        *addr = base + ref.off;
        return 1;
    }
    char inner[160];
    ncl_bk_bufs peers = m->bufs; /* a peer's RECV may be larger than ours (alltoallv) */
    if (remote && ref.buf == NCL_BUF_RECV && m->peer_recv_bytes > peers.size[NCL_BUF_RECV])
        peers.size[NCL_BUF_RECV] = m->peer_recv_bytes;
    if (ncl_bk_region(remote ? &peers : &m->bufs, ref, bytes, write, addr, inner, sizeof inner))
        return 1;
    ncl_fmt(why, why_len, "%s%s", inner, remote ? " (a peer's buffers: ours, by the symmetric convention)" : "");
    return 0;
}

/* ---- the launch mailbox (mismatched calls) -------------------------------------------------- */

/* A record: u64 seq, u64 count, u8 coll, dtype, op, algo, inplace, 3 x 0, i32 root, u32 check
 * (seq's low word ^ 'LNCH': a record half-written by the peer's next call does not pass). */
static void launch_encode(const ncl_hal_launch *l, uint8_t r[NCL_MMIO_LAUNCH_BYTES])
{
    memset(r, 0, NCL_MMIO_LAUNCH_BYTES);
    put32(r, (uint32_t)l->seq);
    put32(r + 4, (uint32_t)(l->seq >> 32));
    put32(r + 8, (uint32_t)l->count);
    put32(r + 12, (uint32_t)(l->count >> 32));
    r[16] = l->coll;
    r[17] = l->dtype;
    r[18] = l->op;
    r[19] = l->algo;
    r[20] = l->inplace;
    put32(r + 24, (uint32_t)l->root);
    put32(r + 28, (uint32_t)l->seq ^ 0x4C4E4348u);
}

static int launch_decode(const uint8_t r[NCL_MMIO_LAUNCH_BYTES], ncl_hal_launch *l)
{
    memset(l, 0, sizeof *l);
    l->seq = (uint64_t)get32(r + 4) << 32 | get32(r);
    l->count = (uint64_t)get32(r + 12) << 32 | get32(r + 8);
    l->coll = r[16];
    l->dtype = r[17];
    l->op = r[18];
    l->algo = r[19];
    l->inplace = r[20];
    l->root = (int32_t)get32(r + 24);
    return get32(r + 28) == ((uint32_t)l->seq ^ 0x4C4E4348u);
}

static uint64_t launch_slot(const ncl_mmio *m, int rank)
{
    return m->cfg.launch_base + (uint64_t)rank * NCL_MMIO_LAUNCH_BYTES;
}

static int peer_bit(const uint64_t *set, int peer) { return (int)(set[peer / 64] >> (peer % 64) & 1u); }
static void peer_set(uint64_t *set, int peer) { set[peer / 64] |= 1ull << (peer % 64); }

/* begin(): this call's record into this rank's own slot, nothing sent or compared yet. */
static ncl_result launch_post(ncl_mmio *m, const ncl_hal_launch *l)
{
    if (!m->cfg.launch_base)
        return NCL_SUCCESS;
    m->launch = *l;
    m->launch_flush = 0;
    memset(m->launch_sent, 0, peer_words(&m->cfg) * sizeof(uint64_t));
    memset(m->launch_agreed, 0, peer_words(&m->cfg) * sizeof(uint64_t));
    uint8_t r[NCL_MMIO_LAUNCH_BYTES];
    launch_encode(l, r);
    if (m->acc.mem_write(m->acc.ctx, launch_slot(m, m->cfg.rank), r, sizeof r) != 0)
        return mfail(m, NCL_ERR_BACKEND, "launch mailbox at 0x%llx is not in device memory",
                     (unsigned long long)launch_slot(m, m->cfg.rank));
    return NCL_SUCCESS;
}

/* Before this call's first record to peer: our slot into the peer's (the record's FENCE waits for
 * it). The caller reserved the ring slot. */
static ncl_result launch_send(ncl_mmio *m, int peer)
{
    mmio_desc d = {0};
    d.opc = NCL_MMIO_OPC_WRITE;
    d.peer = (uint32_t)peer;
    d.src = d.dst = launch_slot(m, m->cfg.rank);
    d.len = NCL_MMIO_LAUNCH_BYTES;
    ncl_task t = {0};
    t.kind = NCL_TASK_WRITE;
    t.peer = peer;
    t.bytes = NCL_MMIO_LAUNCH_BYTES;
    ncl_result rc = ring_put(m, &d, -1, &t);
    if (rc == NCL_SUCCESS)
        peer_set(m->launch_sent, peer);
    return rc;
}

/* While a notify from peer is awaited: its record of this call, when there, must agree with ours. */
static ncl_result launch_compare(ncl_mmio *m, int peer)
{
    if (!m->cfg.launch_base || peer == m->cfg.rank || peer_bit(m->launch_agreed, peer))
        return NCL_SUCCESS;
    uint8_t r[NCL_MMIO_LAUNCH_BYTES];
    ncl_hal_launch theirs;
    if (m->acc.mem_read(m->acc.ctx, launch_slot(m, peer), r, sizeof r) != 0 || !launch_decode(r, &theirs) ||
        theirs.seq != m->seq)
        return NCL_SUCCESS; /* not written yet for this call (or already for its next): nothing to say */
    char why[240];
    if (ncl_launch_mismatch(&m->launch, m->cfg.rank, &theirs, peer, why, sizeof why)) {
        /* the peer may be waiting for a record of ours it will now never get: our launch record
         * (again: one sent before may still be in the ring) lets it name the mismatch too; end()
         * lets the ring drain before the reset, so it arrives after everything else we sent it */
        if (ring_reserve(m, 1) == NCL_SUCCESS && launch_send(m, peer) == NCL_SUCCESS) {
            ring_doorbell(m);
            m->launch_flush = 1;
        }
        return mfail(m, NCL_ERR_REMOTE, "mismatch: %s", why);
    }
    peer_set(m->launch_agreed, peer);
    return NCL_SUCCESS;
}

static ncl_result begin(void *ctx, const ncl_hal_launch *l)
{
    ncl_mmio *m = ctx;
    if (!l)
        return NCL_ERR_BACKEND;
    m->seq = l->seq;
    m->err[0] = '\0'; /* last_error describes this call, not an older one */
    ncl_bk_bind(&m->bufs, l, m->cfg.scratch_base, m->cfg.scratch_bytes);
    m->peer_recv_bytes = l->peer_recv_bytes;
    ncl_result rc = launch_post(m, l);
    if (rc != NCL_SUCCESS)
        return rc;
    m->failed = 0;
    m->completion_unseen = 0;
    for (uint32_t q = 0; q < NCL_MAX_QUEUES; q++)
        m->q[q].state = MQ_IDLE;
    mlog(m, NCL_LOG_DEBUG, "mmio rank %d: begin #%llu coll %u send 0x%llx (%llu B) recv 0x%llx (%llu B)",
         m->cfg.rank, (unsigned long long)l->seq, (unsigned)l->coll, (unsigned long long)m->bufs.base[NCL_BUF_SEND],
         (unsigned long long)l->send_bytes, (unsigned long long)m->bufs.base[NCL_BUF_RECV],
         (unsigned long long)l->recv_bytes);
    return check_block(m);
}

static ncl_result end(void *ctx, ncl_result result)
{
    ncl_mmio *m = ctx;
    ncl_bk_unbind(&m->bufs);
    if (result != NCL_SUCCESS && !m->failed) {
        /* Descriptors of the failed collective may still sit in the ring: drop them, so they do
         * not reach the next collective's counters. */
        mlog(m, NCL_LOG_WARN, "mmio rank %d: collective #%llu failed (%s); soft-resetting the block",
             m->cfg.rank, (unsigned long long)m->seq, ncl_strerror(result));
        if (m->launch_flush) /* the whole ring free: the record told to a mismatched peer left */
            (void)ring_reserve(m, m->cfg.ring_entries - 1);
        m->launch_flush = 0;
        return bringup(m);
    }
    return NCL_SUCCESS;
}

/* ---- controller-run tasks (what the block cannot do) --------------------------------------- */

static int ranges_overlap(uint64_t a, uint64_t b, uint64_t n) { return a < b + n && b < a + n; }

/* dst op= src (op < NCL_OP_COUNT) or dst /= count (LOCAL_DIV) or dst = src (copy), through the
 * bounce buffer, chunk by chunk. */
static ncl_result controller_run(ncl_mmio *m, const ncl_task *t, uint64_t src, uint64_t dst)
{
    unsigned char *b = m->cfg.bounce;
    int copy = t->kind == NCL_TASK_LOCAL_COPY || t->kind == NCL_TASK_WRITE;
    int div = t->kind == NCL_TASK_LOCAL_DIV;
    char why[160];
    if (!ncl_bk_task_ok(t, why, sizeof why))
        return mfail(m, NCL_ERR_BACKEND, "step %u %s: %s", (unsigned)t->step, ncl_task_kind_name(t->kind), why);
    uint64_t es = copy ? 1 : ncl_dtype_size((ncl_dtype)t->dtype);
    uint64_t chunk = copy || div ? m->cfg.bounce_bytes : m->cfg.bounce_bytes / 2;
    chunk -= chunk % (copy ? 1u : 8u); /* the second half stays aligned for the kernels */
    chunk -= chunk % es;
    if (chunk < es)
        return mfail(m, NCL_ERR_BACKEND, "the bounce buffer (%llu B) cannot hold two %s elements",
                     (unsigned long long)m->cfg.bounce_bytes, ncl_dtype_name((ncl_dtype)t->dtype));
    if (!copy && !div && src != dst && ranges_overlap(src, dst, t->bytes))
        return mfail(m, NCL_ERR_BACKEND, "step %u %s: source and destination partially overlap",
                     (unsigned)t->step, ncl_task_kind_name(t->kind));
    /* a copy onto a higher overlapping address runs backwards, like memmove */
    int backward = copy && dst > src;
    ncl_task part = *t; /* the task on one chunk in the bounce buffer: dst first, src after it */
    for (uint64_t done = 0; done < t->bytes;) {
        uint64_t n = t->bytes - done < chunk ? t->bytes - done : chunk;
        uint64_t off = backward ? t->bytes - done - n : done;
        int bad;
        part.bytes = n;
        if (copy)
            bad = m->acc.mem_read(m->acc.ctx, src + off, b, n) || m->acc.mem_write(m->acc.ctx, dst + off, b, n);
        else
            bad = m->acc.mem_read(m->acc.ctx, dst + off, b, n) ||
                  (!div && m->acc.mem_read(m->acc.ctx, src + off, b + chunk, n)) ||
                  !ncl_bk_run(&part, b, b + chunk, why, sizeof why) || m->acc.mem_write(m->acc.ctx, dst + off, b, n);
        if (bad)
            return mfail(m, NCL_ERR_BACKEND, "step %u %s on the controller: device memory at 0x%llx or "
                         "0x%llx (+%llu) is not reachable", (unsigned)t->step, ncl_task_kind_name(t->kind),
                         (unsigned long long)(src + off), (unsigned long long)(dst + off),
                         (unsigned long long)n);
        done += n;
    }
    m->stats.controller_ops++;
    return NCL_SUCCESS;
}

/* The wide-accumulation kinds (fp16/bf16 <-> an fp32 accumulator): the block has no converter,
 * so the controller runs them through the bounce buffer, fp32 side in its first part, narrow
 * side after it, n elements (6 n bytes) at a time. */
static ncl_result controller_wide(ncl_mmio *m, const ncl_task *t, uint64_t src, uint64_t dst)
{
    unsigned char *b = m->cfg.bounce;
    char why[160];
    if (!ncl_bk_task_ok(t, why, sizeof why))
        return mfail(m, NCL_ERR_BACKEND, "step %u %s: %s", (unsigned)t->step, ncl_task_kind_name(t->kind), why);
    uint64_t sb = ncl_task_src_bytes(t), db = ncl_task_dst_bytes(t);
    if (src < dst + db && dst < src + sb)
        return mfail(m, NCL_ERR_BACKEND, "step %u %s: source and destination overlap", (unsigned)t->step,
                     ncl_task_kind_name(t->kind));
    const uint64_t chunk = m->cfg.bounce_bytes / 6 / 4 * 4; /* >= 1: bounce_bytes >= 16 */
    unsigned char *w = b, *h = b + 4 * chunk;
    const uint64_t count = t->bytes / 2;
    ncl_task part = *t; /* the task on n elements in the bounce buffer */
    for (uint64_t i = 0; i < count;) {
        uint64_t n = count - i < chunk ? count - i : chunk;
        int bad;
        part.bytes = 2 * n;
        if (t->kind == NCL_TASK_LOCAL_NARROW) /* fp32 in, narrow out */
            bad = m->acc.mem_read(m->acc.ctx, src + 4 * i, w, 4 * n) || !ncl_bk_run(&part, h, w, why, sizeof why) ||
                  m->acc.mem_write(m->acc.ctx, dst + 2 * i, h, 2 * n);
        else /* narrow in, fp32 out (REDUCE_WIDE: onto the fp32 already there) */
            bad = (t->kind == NCL_TASK_LOCAL_REDUCE_WIDE && m->acc.mem_read(m->acc.ctx, dst + 4 * i, w, 4 * n)) ||
                  m->acc.mem_read(m->acc.ctx, src + 2 * i, h, 2 * n) || !ncl_bk_run(&part, w, h, why, sizeof why) ||
                  m->acc.mem_write(m->acc.ctx, dst + 4 * i, w, 4 * n);
        if (bad)
            return mfail(m, NCL_ERR_BACKEND, "step %u %s on the controller: device memory at 0x%llx or 0x%llx "
                         "is not reachable", (unsigned)t->step, ncl_task_kind_name(t->kind), (unsigned long long)src,
                         (unsigned long long)dst);
        i += n;
    }
    m->stats.controller_ops++;
    return NCL_SUCCESS;
}

/* ---- HAL ops -------------------------------------------------------------------------------- */

static int lane_reduce_ok(uint32_t dtype, uint32_t op)
{
    return (dtype == NCL_INT32 || dtype == NCL_UINT32 || dtype == NCL_FLOAT32) &&
           (op == NCL_SUM || op == NCL_MAX || op == NCL_MIN);
}

static ncl_result caps(void *ctx, ncl_hal_caps *out)
{
    ncl_mmio *m = ctx;
    if (!out)
        return NCL_ERR_BACKEND;
    memset(out, 0, sizeof *out);
    out->scratch_bytes = m->cfg.scratch_bytes;
    out->max_queues = m->cfg.max_queues;
    out->dma_engines = 1; /* one in-order descriptor ring executes every queue's data tasks */
    out->buf_align = m->cfg.buf_align;
    const uint16_t lanes = (uint16_t)(1u << NCL_SUM | 1u << NCL_MAX | 1u << NCL_MIN);
    out->inline_ops[NCL_INT32] = lanes;
    out->inline_ops[NCL_UINT32] = lanes;
    out->inline_ops[NCL_FLOAT32] = lanes;
    out->inline_align = 4;
    out->features = NCL_HAL_FEAT_WIDE; /* on the controller (controller_wide) */
    return NCL_SUCCESS;
}

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static ncl_result task_fail(ncl_mmio *m, uint32_t queue, const ncl_task *t, const char *fmt, ...)
{
    char why[200];
    va_list ap;
    va_start(ap, fmt);
    ncl_vfmt(why, sizeof why, fmt, ap);
    va_end(ap);
    if (queue < NCL_MAX_QUEUES)
        m->q[queue].state = MQ_FAILED;
    return mfail(m, NCL_ERR_BACKEND, "#%llu queue %u step %u %s (peer %d, %llu B): %s",
                 (unsigned long long)m->seq, (unsigned)queue, (unsigned)t->step, ncl_task_kind_name(t->kind),
                 (int)t->peer,
                 (unsigned long long)t->bytes, why);
}

static ncl_result dma_submit(void *ctx, uint32_t queue, const ncl_task *t)
{
    ncl_mmio *m = ctx;
    if (!t || queue >= m->cfg.max_queues)
        return mfail(m, NCL_ERR_BACKEND, "dma_submit on queue %u (max %u)", (unsigned)queue,
                     (unsigned)m->cfg.max_queues);
    if (m->q[queue].state == MQ_RING)
        return task_fail(m, queue, t, "queue %u still has a task in the ring", (unsigned)queue);
    ncl_result rc = check_block(m);
    if (rc != NCL_SUCCESS)
        return rc;
    char why[200];
    uint64_t src = 0, dst = 0;
    int remote = (t->kind == NCL_TASK_WRITE || t->kind == NCL_TASK_WRITE_REDUCE) && t->peer != m->cfg.rank;
    switch ((ncl_task_kind)t->kind) {
    case NCL_TASK_WRITE:
    case NCL_TASK_WRITE_REDUCE:
        if (t->peer < 0 || t->peer >= m->cfg.nranks)
            return task_fail(m, queue, t, "peer %d out of range", (int)t->peer);
        /* fall through */
    case NCL_TASK_LOCAL_COPY:
    case NCL_TASK_LOCAL_REDUCE:
        if (!resolve(m, t->src, t->bytes, -1, 0, &src, why, sizeof why))
            return task_fail(m, queue, t, "src %s", why);
        /* fall through */
    case NCL_TASK_LOCAL_DIV:
        if (!resolve(m, t->dst, t->bytes, remote ? t->peer : -1, 1, &dst, why, sizeof why))
            return task_fail(m, queue, t, "dst %s", why);
        break;
    case NCL_TASK_LOCAL_WIDEN:
    case NCL_TASK_LOCAL_REDUCE_WIDE:
    case NCL_TASK_LOCAL_NARROW:
        if (!resolve(m, t->src, ncl_task_src_bytes(t), -1, 0, &src, why, sizeof why))
            return task_fail(m, queue, t, "src %s", why);
        if (!resolve(m, t->dst, ncl_task_dst_bytes(t), -1, 1, &dst, why, sizeof why))
            return task_fail(m, queue, t, "dst %s", why);
        rc = controller_wide(m, t, src, dst);
        m->q[queue].state = rc == NCL_SUCCESS ? MQ_DONE : MQ_FAILED;
        if (rc == NCL_SUCCESS)
            m->completion_unseen = 1;
        return rc;
    default:
        return task_fail(m, queue, t, "not a data task");
    }

    int reduce = t->kind == NCL_TASK_WRITE_REDUCE || t->kind == NCL_TASK_LOCAL_REDUCE;
    int lanes_ok = reduce && lane_reduce_ok(t->dtype, t->op) && src % 4 == 0 && dst % 4 == 0 && t->bytes % 4 == 0;
    if (remote && reduce && !lanes_ok)
        return mfail(m, NCL_ERR_UNSUPPORTED, "#%llu queue %u step %u: WRITE_REDUCE of %s %s at 0x%llx -> "
                     "0x%llx (%llu B): the block reduces only int32/uint32/fp32 sum/max/min on 4-byte "
                     "aligned lanes (caps.inline_ops said so)", (unsigned long long)m->seq, (unsigned)queue,
                     (unsigned)t->step,
                     ncl_dtype_name((ncl_dtype)t->dtype), ncl_op_name((ncl_op)t->op),
                     (unsigned long long)src, (unsigned long long)dst, (unsigned long long)t->bytes);
    int partial = src != dst && ranges_overlap(src, dst, t->bytes);
    int on_controller = t->kind == NCL_TASK_LOCAL_DIV || (!remote && reduce && (!lanes_ok || partial)) ||
                        (!remote && !reduce && partial);
    if (on_controller) {
        rc = controller_run(m, t, src, dst);
        if (rc != NCL_SUCCESS) {
            m->q[queue].state = MQ_FAILED;
            return rc;
        }
        m->q[queue].state = MQ_DONE;
        m->completion_unseen = 1;
        return NCL_SUCCESS;
    }

    mmio_desc d = {0};
    d.opc = remote ? (reduce ? NCL_MMIO_OPC_WRITE_REDUCE : NCL_MMIO_OPC_WRITE)
                   : (reduce ? NCL_MMIO_OPC_LOCAL_REDUCE : NCL_MMIO_OPC_LOCAL_COPY);
    d.irq = 1;
    d.peer = remote ? (uint32_t)t->peer : 0;
    if (reduce) {
        d.dtype = t->dtype;
        d.op = t->op;
    }
    uint64_t chunks = t->bytes ? (t->bytes + MMIO_MAX_LEN - 1) / MMIO_MAX_LEN : 1;
    if (chunks > m->cfg.ring_entries - 1)
        return task_fail(m, queue, t, "%llu bytes need %llu descriptors, more than the ring holds",
                         (unsigned long long)t->bytes, (unsigned long long)chunks);
    rc = ring_reserve(m, (uint32_t)chunks);
    if (rc != NCL_SUCCESS) {
        m->q[queue].state = MQ_FAILED;
        return rc;
    }
    for (uint64_t i = 0; i < chunks; i++) {
        uint64_t off = i * MMIO_MAX_LEN;
        d.src = src + off;
        d.dst = dst + off;
        d.len = t->bytes - off < MMIO_MAX_LEN ? t->bytes - off : MMIO_MAX_LEN;
        if ((rc = ring_put(m, &d, (int)queue, t)) != NCL_SUCCESS) {
            m->q[queue].state = MQ_FAILED;
            return rc;
        }
    }
    ring_doorbell(m);
    m->q[queue].state = MQ_RING;
    m->q[queue].last = m->posted - 1;
    return NCL_SUCCESS;
}

static ncl_result dma_poll(void *ctx, uint32_t queue, int *done)
{
    ncl_mmio *m = ctx;
    if (queue >= m->cfg.max_queues || !done)
        return NCL_ERR_BACKEND;
    *done = 0;
    switch (m->q[queue].state) {
    case MQ_DONE:
        *done = 1;
        m->q[queue].state = MQ_IDLE;
        return NCL_SUCCESS;
    case MQ_RING:
        if (ring_completed(m) > m->q[queue].last) {
            *done = 1;
            m->q[queue].state = MQ_IDLE;
            return NCL_SUCCESS;
        }
        return check_block(m);
    case MQ_FAILED:
        return NCL_ERR_BACKEND;
    default:
        *done = 1; /* nothing outstanding */
        return NCL_SUCCESS;
    }
}

/* NOTIFY_CNT index of HAL counter (sender, id) held by rank `holder`. */
static int counter_of(ncl_mmio *m, int sender, int holder, uint32_t id, uint32_t *idx)
{
    uint32_t n = (uint32_t)m->cfg.nranks;
    if (id >= m->ids_per_peer)
        return 0;
    uint32_t d = (uint32_t)((sender - holder) % (int)n + (int)n) % n;
    *idx = d * m->ids_per_peer + id;
    return 1;
}

static ncl_result notify_record(void *ctx, uint32_t queue, int peer, uint32_t id)
{
    ncl_mmio *m = ctx;
    uint32_t idx;
    if (peer < 0 || peer >= m->cfg.nranks || queue >= m->cfg.max_queues)
        return mfail(m, NCL_ERR_BACKEND, "#%llu notify_record queue %u peer %d id %u: out of range",
                     (unsigned long long)m->seq, (unsigned)queue, peer, (unsigned)id);
    if (!counter_of(m, m->cfg.rank, peer, id, &idx))
        return mfail(m, NCL_ERR_UNSUPPORTED, "#%llu notify id %u (record to rank %d) does not fit: the "
                     "block's %u counters give each of %d ranks %u ids (0..%u)", (unsigned long long)m->seq,
                     (unsigned)id, peer, (unsigned)m->notify_count, m->cfg.nranks, (unsigned)m->ids_per_peer,
                     (unsigned)(m->ids_per_peer - 1));
    int first = m->cfg.launch_base && peer != m->cfg.rank && !peer_bit(m->launch_sent, peer);
    ncl_result rc = check_block(m);
    if (rc == NCL_SUCCESS)
        rc = ring_reserve(m, first ? 2u : 1u);
    if (rc == NCL_SUCCESS && first)
        rc = launch_send(m, peer);
    if (rc != NCL_SUCCESS)
        return rc;
    mmio_desc d = {0};
    d.opc = NCL_MMIO_OPC_NOTIFY_RECORD;
    d.fence = 1; /* after every earlier descriptor's writes, remote ones included */
    d.notify = idx;
    if (peer == m->cfg.rank)
        d.local = 1;
    else
        d.peer = (uint32_t)peer;
    ncl_task t = {0};
    t.kind = NCL_TASK_NOTIFY_RECORD;
    t.peer = peer;
    t.notify = id;
    if ((rc = ring_put(m, &d, -1, &t)) != NCL_SUCCESS)
        return rc;
    ring_doorbell(m);
    return NCL_SUCCESS;
}

static ncl_result notify_try_wait(void *ctx, int peer, uint32_t id, uint32_t count, int *done)
{
    ncl_mmio *m = ctx;
    uint32_t idx;
    if (!done || peer < 0 || peer >= m->cfg.nranks)
        return mfail(m, NCL_ERR_BACKEND, "#%llu notify_try_wait peer %d id %u: out of range",
                     (unsigned long long)m->seq, peer, (unsigned)id);
    if (!counter_of(m, peer, m->cfg.rank, id, &idx))
        return mfail(m, NCL_ERR_UNSUPPORTED, "#%llu notify id %u (wait for rank %d) does not fit: the "
                     "block's %u counters give each of %d ranks %u ids (0..%u)", (unsigned long long)m->seq,
                     (unsigned)id, peer, (unsigned)m->notify_count, m->cfg.nranks, (unsigned)m->ids_per_peer,
                     (unsigned)(m->ids_per_peer - 1));
    *done = 0;
    ncl_result rc = launch_compare(m, peer); /* before its data is taken as ours */
    if (rc != NCL_SUCCESS)
        return rc;
    uint32_t have = count ? rd(m, NCL_MMIO_NOTIFY_CNT(idx)) : 0;
    if (have < count) {
        rc = check_block(m); /* a stopped block would leave us waiting: say why instead */
        if (rc != NCL_SUCCESS || !m->acc.peer_check)
            return rc;
        char why[400] = "";
        rc = m->acc.peer_check(m->acc.ctx, peer, why, sizeof why);
        return rc == NCL_SUCCESS ? rc
                                 : mfail(m, rc, "#%llu waiting for notify %u from rank %d: %s",
                                         (unsigned long long)m->seq, (unsigned)id, peer, why);
    }
    /* only this rank consumes its counters, so the read above still holds */
    for (uint32_t left = count; left;) {
        uint32_t amt = left < 0xFFFFu ? left : 0xFFFFu;
        wr(m, NCL_MMIO_NOTIFY_SUB, NCL_MMIO_PREP(NCL_MMIO_NOTIFY_SUB_IDX, idx) |
                                       NCL_MMIO_PREP(NCL_MMIO_NOTIFY_SUB_AMOUNT, amt));
        left -= amt;
    }
    *done = 1;
    return NCL_SUCCESS;
}

static ncl_result notify_peek(void *ctx, int peer, uint32_t id, uint32_t *value)
{
    ncl_mmio *m = ctx;
    uint32_t idx;
    if (!value || peer < 0 || peer >= m->cfg.nranks || !counter_of(m, peer, m->cfg.rank, id, &idx))
        return NCL_ERR_BACKEND;
    *value = rd(m, NCL_MMIO_NOTIFY_CNT(idx));
    return NCL_SUCCESS;
}

/* Clears and returns the pending events (W1C), so none is lost between looks. */
static uint32_t take_events(ncl_mmio *m)
{
    uint32_t ev = rd(m, NCL_MMIO_IRQ_STATUS) & MMIO_IRQ_EVENTS;
    if (ev)
        wr(m, NCL_MMIO_IRQ_STATUS, ev);
    return ev;
}

static ncl_result wait_event(void *ctx, uint64_t timeout_ns)
{
    ncl_mmio *m = ctx;
    if (m->completion_unseen) {
        m->completion_unseen = 0;
        return NCL_SUCCESS;
    }
    if (take_events(m) || timeout_ns == 0)
        return NCL_SUCCESS;
    if (m->cfg.irq) {
        m->stats.irq_waits++;
        m->acc.wait_irq(m->acc.ctx, timeout_ns);
        take_events(m);
        return NCL_SUCCESS;
    }
    uint64_t t0 = now(m);
    for (;;) {
        if (m->acc.poll) {
            m->stats.polls++;
            if (m->acc.poll(m->acc.ctx))
                return NCL_SUCCESS;
        }
        if (take_events(m) || now(m) - t0 >= timeout_ns)
            return NCL_SUCCESS;
    }
}

static uint64_t now_ns(void *ctx) { return now(ctx); }

static void hal_log(void *ctx, int level, const char *msg)
{
    ncl_mmio *m = ctx;
    if (m->acc.log && level <= m->cfg.log_level)
        m->acc.log(m->acc.ctx, level, msg);
}

static const char *hal_last_error(void *ctx) { return ((ncl_mmio *)ctx)->err; }

const ncl_hal_ops ncl_mmio_hal_ops = {
    .caps = caps,
    .begin = begin,
    .end = end,
    .dma_submit = dma_submit,
    .dma_poll = dma_poll,
    .notify_record = notify_record,
    .notify_try_wait = notify_try_wait,
    .wait_event = wait_event,
    .now_ns = now_ns,
    .log = hal_log,
    .notify_peek = notify_peek,
    .last_error = hal_last_error,
};
