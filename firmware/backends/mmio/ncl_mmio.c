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
    int32_t peer; /* world rank */
    uint32_t step;
    uint16_t tag;
} mmio_slot;

#define MMIO_NONE 0xFFu   /* a map slot not mapped (yet) */
#define MMIO_MAX_PART 64u /* counters of one sender's partition (one 64-bit allocation word) */
#define MMIO_ENTRY_MARK 0xA5u
#ifdef NCL_NO_SPLIT /* firmware/port NCL_PORT_SPLIT=OFF: the mapping code compiles away */
#define MMIO_CONTEXTS(m) 0u
#define MMIO_CFG_CONTEXTS(cfg) 0u
#define MMIO_CHILD(c) 0u
#else
#define MMIO_CONTEXTS(m) ((m)->cfg.contexts)
#define MMIO_CFG_CONTEXTS(cfg) ((cfg)->contexts)
#define MMIO_CHILD(c) ((c)->id) /* nonzero: a sub-communicator */
#endif

/* One communicator on the block: the world (context 0) or a child of ncl_comm_split. Everything
 * a collective owns is here; the ring, the counters and the links are the device's. */
typedef struct mmio_comm {
    ncl_mmio *m;
    ncl_hal hal;
    uint32_t id;      /* 0: the world */
    int rank, n;      /* in this communicator */
    int32_t *members; /* with contexts: world rank of each member (nranks room; the world: i) */
    uint32_t context; /* 0: the world; a child's 1..cfg.contexts */
    int live;         /* a child: its context is taken */
    uint64_t bringups;  /* the device's when made: a later reset breaks a child */
    ncl_result stuck;   /* a child's failed collective: every later call fails so */
    /* the running collective */
    uint64_t seq;
    ncl_bk_bufs bufs; /* device addresses */
    uint64_t peer_recv_bytes; /* the running call's ncl_hal_launch.peer_recv_bytes */
    mmio_queue q[NCL_MAX_QUEUES];
    int completion_unseen; /* a controller task completed that wait_event has not reported */
    int failed;            /* the block reported an error during this collective */
    uint64_t events_seen;  /* the device's event count when this communicator last looked */
    /* launch mailbox (cfg.launch_base): this call's launch; per member, bits: its record was
     * sent (this call), its record was compared and agrees (this call) */
    ncl_hal_launch launch;
    uint64_t *launch_sent, *launch_agreed;
    int launch_flush; /* a launch record told a mismatched peer: end() lets it leave before the reset */
    /* counter maps (cfg.contexts > 0), per member x notify id: the counter of our partition at
     * that member we record into, the counter of its partition here we wait on (offsets in the
     * partition, MMIO_NONE: none yet); per member its context (from its map entries) */
    uint8_t *out_map, *in_map, *peer_context;
    uint64_t *peer_recv; /* per member, its RECV in this call (from its launch record; 0: not read) */
    char err[512]; /* last: the fields above keep short offsets */
} mmio_comm;

struct ncl_mmio {
    ncl_mmio_config cfg;
    ncl_mmio_access acc;
    uint32_t notify_count, ids_per_peer; /* the fixed layout (contexts 0) */
    uint32_t part;                       /* contexts: counters of one sender's partition */
    uint64_t scratch_part;               /* scratch of one communicator */
    /* ring: software's tail and the number of descriptors ever posted (since the last bring-up) */
    uint32_t tail;
    uint64_t posted;
    uint64_t events; /* looks at IRQ_STATUS that found events: each communicator's waits compare */
    uint64_t peer_recv_fallback;
    ncl_mmio_stats stats;
    mmio_slot *slots;  /* ring_entries, right after this struct in the caller's memory */
    uint64_t *used;    /* contexts: per world rank, the counters of our partition there mapped */
    mmio_comm world;
    mmio_comm *kids;   /* cfg.contexts of them, kids[i] is context i + 1 */
};

/* 64-bit words of one per-peer bit set. */
static size_t peer_words(const ncl_mmio_config *c) { return ((size_t)c->nranks + 63u) / 64u; }

static const char *const opc_names[] = {"0?", "WRITE", "WRITE_REDUCE", "LOCAL_COPY", "LOCAL_REDUCE",
                                        "NOTIFY_RECORD", "NOTIFY_WAIT", "NOP"};

static const char *opc_name(uint32_t opc)
{
    return opc < sizeof opc_names / sizeof opc_names[0] ? opc_names[opc] : "?";
}

/* World rank of member k. */
static int world_of(const mmio_comm *c, int k) { return MMIO_CHILD(c) ? c->members[k] : k; }

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

/* Records the error as c's last_error, logs it, returns rc. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static ncl_result mfail(mmio_comm *c, ncl_result rc, const char *fmt, ...)
{
    ncl_mmio *m = c->m;
    size_t n = MMIO_CHILD(c) ? ncl_fmt(c->err, sizeof c->err, "mmio rank %d (rank %d of communicator 0x%x): ",
                               m->cfg.rank, c->rank, (unsigned)c->id)
                     : ncl_fmt(c->err, sizeof c->err, "mmio rank %d: ", m->cfg.rank);
    va_list ap;
    va_start(ap, fmt);
    ncl_vfmt(c->err + n, sizeof c->err - n, fmt, ap);
    va_end(ap);
    if (m->acc.log && m->cfg.log_level >= NCL_LOG_ERROR)
        m->acc.log(m->acc.ctx, NCL_LOG_ERROR, c->err);
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
 * error bit start over); errors are c's. */
static ncl_result bringup(mmio_comm *c)
{
    ncl_mmio *m = c->m;
    m->stats.bringups++;
    wr(m, NCL_MMIO_CTRL, NCL_MMIO_CTRL_SOFT_RESET_MASK);
    uint32_t id = rd(m, NCL_MMIO_ID);
    if (id != MMIO_ID_RSIM)
        return mfail(c, NCL_ERR_BACKEND,
                     "bring-up: ID reads 0x%x, not 0x5253494D ('RSIM'): this is not the ringsim "
                     "DMA/notify block, or the register window is mapped at the wrong address", (unsigned)id);
    uint32_t ver = rd(m, NCL_MMIO_VERSION);
    uint32_t major = NCL_MMIO_GET(NCL_MMIO_VERSION_MAJOR, ver);
    if (major != MMIO_MAJOR)
        return mfail(c, NCL_ERR_UNSUPPORTED,
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
        return mfail(c, NCL_ERR_UNSUPPORTED, "bring-up: CAPS says %u-byte descriptors, this backend "
                     "writes %u-byte ones", 1u << (desc_log2 & 31), NCL_MMIO_DESC_BYTES);
    if (ring_log2 > 31 || m->cfg.ring_entries > (1u << ring_log2))
        return mfail(c, NCL_ERR_UNSUPPORTED, "bring-up: a ring of %u entries asked, the block takes "
                     "at most 2^%u", (unsigned)m->cfg.ring_entries, (unsigned)ring_log2);
    if (ncnt > NCL_MMIO_NOTIFY_COUNT)
        ncnt = NCL_MMIO_NOTIFY_COUNT; /* the register window (and the map) hold no more */
    uint32_t ipp = ncnt / (uint32_t)m->cfg.nranks;
    if (ipp > NCL_NOTIFY_IDS)
        ipp = NCL_NOTIFY_IDS;
    if (ipp < MMIO_MIN_IDS)
        return mfail(c, NCL_ERR_UNSUPPORTED,
                     "bring-up: too few notify counters: the block has %u, %d ranks need at least "
                     "%u each (%u)", (unsigned)ncnt, m->cfg.nranks, MMIO_MIN_IDS,
                     (unsigned)(MMIO_MIN_IDS * (uint32_t)m->cfg.nranks));
    m->notify_count = ncnt;
    m->ids_per_peer = ipp;
    if (MMIO_CONTEXTS(m))
        m->part = ncnt / (uint32_t)m->cfg.nranks < MMIO_MAX_PART ? ncnt / (uint32_t)m->cfg.nranks : MMIO_MAX_PART;
    static const uint32_t pat[2] = {0xA5C3F00Fu, 0x5A3C0FF0u};
    for (int i = 0; i < 2; i++) {
        wr(m, NCL_MMIO_SCRATCH, pat[i]);
        uint32_t got = rd(m, NCL_MMIO_SCRATCH);
        if (got != pat[i])
            return mfail(c, NCL_ERR_BACKEND, "bring-up: SCRATCH reads 0x%x after writing 0x%x: "
                         "register writes do not land", (unsigned)got, (unsigned)pat[i]);
    }
    wr(m, NCL_MMIO_RING_BASE_LO, (uint32_t)m->cfg.ring_base);
    wr(m, NCL_MMIO_RING_BASE_HI, (uint32_t)(m->cfg.ring_base >> 32));
    wr(m, NCL_MMIO_RING_SIZE, m->cfg.ring_entries);
    wr(m, NCL_MMIO_RING_TAIL, 0);
    uint32_t head = rd(m, NCL_MMIO_RING_HEAD), size = rd(m, NCL_MMIO_RING_SIZE);
    if (head != 0 || size != m->cfg.ring_entries)
        return mfail(c, NCL_ERR_BACKEND, "bring-up: after reset RING_HEAD reads %u and RING_SIZE %u "
                     "(expected 0 and %u)", (unsigned)head, (unsigned)size, (unsigned)m->cfg.ring_entries);
    wr(m, NCL_MMIO_ERR_STATUS, 0xFFFFFFFFu);
    wr(m, NCL_MMIO_IRQ_STATUS, 0xFFFFFFFFu);
    wr(m, NCL_MMIO_IRQ_MASK, m->cfg.irq ? MMIO_IRQ_EVENTS : 0);
    wr(m, NCL_MMIO_CTRL, NCL_MMIO_CTRL_ENABLE_MASK | (m->cfg.irq ? NCL_MMIO_CTRL_IRQ_EN_MASK : 0));
    m->tail = 0;
    m->posted = 0;
    memset(m->slots, 0, (size_t)m->cfg.ring_entries * sizeof *m->slots);
    for (uint32_t q = 0; q < NCL_MAX_QUEUES; q++)
        c->q[q].state = MQ_IDLE;
    mlog(m, NCL_LOG_INFO, "mmio rank %d: block up (version %u.%u, %u notify counters, %u ids per peer, ring "
         "%u x %u B at 0x%llx, %s mode)", m->cfg.rank, (unsigned)major,
         (unsigned)NCL_MMIO_GET(NCL_MMIO_VERSION_MINOR, ver), (unsigned)ncnt, (unsigned)ipp,
         (unsigned)m->cfg.ring_entries, NCL_MMIO_DESC_BYTES, (unsigned long long)m->cfg.ring_base,
         m->cfg.irq ? "interrupt" : "polled");
    return NCL_SUCCESS;
}

/* Per communicator: its launch bit sets, then with contexts its members and maps. */
static size_t comm_bytes(const ncl_mmio_config *cfg)
{
    size_t n = (size_t)cfg->nranks, b = 2u * peer_words(cfg) * sizeof(uint64_t);
    if (MMIO_CFG_CONTEXTS(cfg))
        b += (n * sizeof(int32_t) + 7u) / 8u * 8u + (2u * n * NCL_NOTIFY_IDS + n + 7u) / 8u * 8u + n * sizeof(uint64_t);
    return b;
}

size_t ncl_mmio_mem_bytes(const ncl_mmio_config *cfg)
{
    size_t head = (sizeof(ncl_mmio) + 15u) / 16u * 16u;
    if (!cfg)
        return head;
    size_t slots = ((size_t)cfg->ring_entries * sizeof(mmio_slot) + 7u) / 8u * 8u;
    size_t kids = (size_t)MMIO_CFG_CONTEXTS(cfg) * ((sizeof(mmio_comm) + 7u) / 8u * 8u);
    size_t used = MMIO_CFG_CONTEXTS(cfg) ? (size_t)cfg->nranks * sizeof(uint64_t) : 0;
    return head + slots + kids + used + (1u + (size_t)MMIO_CFG_CONTEXTS(cfg)) * comm_bytes(cfg);
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
        return *why = "launch_base must be 64-byte aligned", NCL_ERR_INVALID_ARGUMENT;
#ifndef NCL_NO_SPLIT /* without it contexts are ignored: the engine refuses ncl_comm_split itself */
    if (c->contexts > NCL_MMIO_MAX_CONTEXTS)
        return *why = "contexts must be 0..NCL_MMIO_MAX_CONTEXTS", NCL_ERR_INVALID_ARGUMENT;
    if (c->contexts && (!c->map_base || c->map_base % 8u))
        return *why = "contexts need map_base: an 8-byte aligned device address, not 0", NCL_ERR_INVALID_ARGUMENT;
#endif
    return NCL_SUCCESS;
}

/* Lays out c's arrays at *at (comm_bytes); c itself is zeroed already. */
static void comm_place(ncl_mmio *m, mmio_comm *c, unsigned char **at)
{
    c->m = m;
    c->hal.ops = &ncl_mmio_hal_ops;
    c->hal.ctx = c;
    size_t n = (size_t)m->cfg.nranks;
    c->launch_sent = (uint64_t *)(void *)*at;
    c->launch_agreed = c->launch_sent + peer_words(&m->cfg);
    if (MMIO_CONTEXTS(m)) {
        c->members = (int32_t *)(void *)(c->launch_agreed + peer_words(&m->cfg));
        c->out_map = (uint8_t *)(c->members + n) + (n * sizeof(int32_t) % 8u ? 4u : 0u);
        c->in_map = c->out_map + n * NCL_NOTIFY_IDS;
        c->peer_context = c->in_map + n * NCL_NOTIFY_IDS;
        c->peer_recv = (uint64_t *)(void *)(c->out_map + (2u * n * NCL_NOTIFY_IDS + n + 7u) / 8u * 8u);
    }
    *at += comm_bytes(&m->cfg);
}

/* c starts over: n members, nothing mapped, no launch sent or compared. */
static void comm_reset(mmio_comm *c, int n)
{
    ncl_mmio *m = c->m;
    c->n = n;
    memset(c->launch_sent, 0, 2u * peer_words(&m->cfg) * sizeof(uint64_t));
    if (MMIO_CONTEXTS(m)) { /* (the world's are 0 with the device's memory) */
        memset(c->out_map, MMIO_NONE, (size_t)m->cfg.nranks * (2u * NCL_NOTIFY_IDS + 1u));
        c->stuck = NCL_SUCCESS;
        c->err[0] = '\0';
        c->events_seen = m->events;
        c->bringups = m->stats.bringups;
    }
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
    unsigned char *at = (unsigned char *)mem + (sizeof(ncl_mmio) + 15u) / 16u * 16u;
    m->slots = (mmio_slot *)(void *)at;
    at += ((size_t)cfg->ring_entries * sizeof(mmio_slot) + 7u) / 8u * 8u;
    /* the caller's memory is not zeroed: every array is set here */
    mmio_comm *w = &m->world;
    if (MMIO_CFG_CONTEXTS(cfg)) {
        m->kids = (mmio_comm *)(void *)at;
        at += (size_t)cfg->contexts * ((sizeof(mmio_comm) + 7u) / 8u * 8u);
        memset(m->kids, 0, (size_t)cfg->contexts * sizeof *m->kids);
        m->used = (uint64_t *)(void *)at;
        at += (size_t)cfg->nranks * sizeof(uint64_t);
        memset(m->used, 0, (size_t)cfg->nranks * sizeof(uint64_t));
        comm_place(m, w, &at);
        for (uint32_t k = 0; k < cfg->contexts; k++)
            comm_place(m, &m->kids[k], &at);
        for (int r = 0; r < cfg->nranks; r++)
            w->members[r] = r; /* world_of needs them with children only */
        m->scratch_part = cfg->scratch_bytes / (1u + cfg->contexts) / 64u * 64u;
    } else {
        comm_place(m, w, &at);
        m->scratch_part = cfg->scratch_bytes;
    }
    w->rank = cfg->rank;
    comm_reset(w, cfg->nranks);
    *out = m;
    const char *why = NULL;
    ncl_result rc = check_config(cfg, access, &why);
    if (rc != NCL_SUCCESS) {
        ncl_fmt(w->err, sizeof w->err, "mmio: bad config: %s", why);
        if (m->acc.log)
            m->acc.log(m->acc.ctx, NCL_LOG_ERROR, w->err);
        return rc;
    }
    if (MMIO_CFG_CONTEXTS(cfg)) {
        /* the map table: entries of an earlier run must not name counters of this one */
        static const uint8_t zero[64];
        for (uint32_t off = 0; off < NCL_MMIO_MAP_BYTES / 2u; off += sizeof zero)
            if (m->acc.mem_write(m->acc.ctx, cfg->map_base + off, zero, sizeof zero) != 0)
                return mfail(w, NCL_ERR_INVALID_ARGUMENT, "bad config: the counter map at 0x%llx (%u B) is not "
                             "in device memory", (unsigned long long)cfg->map_base, NCL_MMIO_MAP_BYTES);
    }
    return bringup(w);
}

void ncl_mmio_fini(ncl_mmio *m)
{
    if (m && m->acc.reg_write32)
        wr(m, NCL_MMIO_CTRL, 0);
}

const ncl_hal *ncl_mmio_hal(ncl_mmio *m) { return m ? &m->world.hal : NULL; }
const char *ncl_mmio_last_error(const ncl_mmio *m) { return m ? m->world.err : ""; }
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
static ncl_result block_failed(mmio_comm *c, uint32_t err)
{
    ncl_mmio *m = c->m;
    uint32_t slot = NCL_MMIO_GET(NCL_MMIO_ERR_DESC_INDEX, rd(m, NCL_MMIO_ERR_DESC));
    uint64_t addr = (uint64_t)rd(m, NCL_MMIO_ERR_ADDR_HI) << 32 | rd(m, NCL_MMIO_ERR_ADDR_LO);
    char bits[80];
    err_bits_str(err, bits, sizeof bits);
    m->stats.errors++;
    c->failed = 1;
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
    ncl_result rc = mfail(c, NCL_ERR_BACKEND, "collective #%llu: %s; soft-resetting the block",
                          (unsigned long long)c->seq, what);
    wr(m, NCL_MMIO_ERR_STATUS, err);
    wr(m, NCL_MMIO_IRQ_STATUS, NCL_MMIO_IRQ_STATUS_ERROR_MASK);
    char keep[sizeof c->err];
    memcpy(keep, c->err, sizeof keep);
    if (bringup(c) != NCL_SUCCESS)
        return NCL_ERR_BACKEND; /* its own message replaces ours: the block is gone */
    memcpy(c->err, keep, sizeof keep);
    for (uint32_t q = 0; q < NCL_MAX_QUEUES; q++)
        c->q[q].state = MQ_FAILED;
    return rc;
}

/* NCL_SUCCESS, or the error the block reports now. */
static ncl_result check_block(mmio_comm *c)
{
    uint32_t err = rd(c->m, NCL_MMIO_ERR_STATUS);
    return err ? block_failed(c, err) : NCL_SUCCESS;
}

/* A child lives as long as the block's counters it was made with: a reset since breaks it. */
static int reset_since(const mmio_comm *c) { return MMIO_CHILD(c) && c->bringups != c->m->stats.bringups; }

static ncl_result check_alive(mmio_comm *c)
{
    if (reset_since(c))
        return mfail(c, NCL_ERR_BACKEND, "the block was reset since this communicator was made (a block "
                     "error, or a failed collective of the world on this device): its notify counters are "
                     "gone, so it is broken; make it again");
    return NCL_SUCCESS;
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
static ncl_result ring_reserve(mmio_comm *c, uint32_t need)
{
    ncl_mmio *m = c->m;
    uint32_t n = m->cfg.ring_entries;
    if (need > n - 1)
        return mfail(c, NCL_ERR_INTERNAL, "%u descriptors cannot fit a ring of %u", (unsigned)need, (unsigned)n);
    if (n - 1 - ring_pending(m) >= need)
        return NCL_SUCCESS;
    m->stats.ring_full_waits++;
    uint64_t t0 = now(m);
    for (;;) {
        ncl_result rc = check_block(c);
        if (rc != NCL_SUCCESS)
            return rc;
        if (n - 1 - ring_pending(m) >= need)
            return NCL_SUCCESS;
        uint64_t waited = now(m) - t0;
        if (waited > m->cfg.timeout_ns)
            return mfail(c, NCL_ERR_TIMEOUT, "the descriptor ring (%u entries) stayed full for %llu ms: "
                         "the block does not advance RING_HEAD (%u pending)", (unsigned)n,
                         (unsigned long long)(waited / 1000000u), (unsigned)ring_pending(m));
        if (m->cfg.irq) {
            m->stats.irq_waits++;
            m->acc.wait_irq(m->acc.ctx, m->cfg.timeout_ns - waited);
            uint32_t ev = rd(m, NCL_MMIO_IRQ_STATUS) & MMIO_IRQ_EVENTS;
            wr(m, NCL_MMIO_IRQ_STATUS, ev);
            if (MMIO_CONTEXTS(m))
                m->events += ev != 0; /* other communicators' waits must still see them */
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

/* Writes d into the next ring slot (reserved by the caller) and names its owner (task t, to the
 * device `peer`). */
static ncl_result ring_put(mmio_comm *c, const mmio_desc *d, int queue, const ncl_task *t, int peer)
{
    ncl_mmio *m = c->m;
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
        return mfail(c, NCL_ERR_BACKEND, "cannot write ring slot %u at device address 0x%llx",
                     (unsigned)m->tail, (unsigned long long)at);
    mmio_slot *s = &m->slots[m->tail];
    s->opc = (uint8_t)d->opc;
    s->kind = t->kind;
    s->queue = queue < 0 ? 0xFF : (uint8_t)queue;
    s->valid = 1;
    s->peer = peer;
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

/* Where member k's scratch of c is (its context's part), or 0 while its context is unknown. */
static uint64_t peer_scratch(const mmio_comm *c, int k)
{
    const ncl_mmio *m = c->m;
    uint32_t ctx = MMIO_CHILD(c) ? c->peer_context[k] : 0u;
    return ctx == MMIO_NONE ? 0 : m->cfg.scratch_base + (uint64_t)ctx * m->scratch_part;
}

/* The device address of (buf + off, bytes) on this rank (peer < 0) or on member `peer` (symmetric
 * convention: a peer's buffers sit at the addresses of ours, its scratch in its context's part),
 * or an explanation in why. */
static int resolve(mmio_comm *c, ncl_ref ref, uint64_t bytes, int peer, int write, uint64_t *addr,
                   char *why, size_t why_len)
{
    ncl_mmio *m = c->m;
    int remote = peer >= 0 && peer != c->rank;
    if (remote && ref.buf == NCL_BUF_RECV && c->bufs.bound && !c->bufs.base[NCL_BUF_RECV]) {
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
    ncl_bk_bufs peers = c->bufs; /* a peer's RECV may be larger than ours (alltoallv) */
    if (remote) {
        if (MMIO_CHILD(c) && ref.buf == NCL_BUF_RECV && c->peer_recv[peer])
            peers.base[NCL_BUF_RECV] = c->peer_recv[peer];
        if (c->peer_recv_bytes > peers.size[NCL_BUF_RECV])
            peers.size[NCL_BUF_RECV] = c->peer_recv_bytes;
        if (MMIO_CHILD(c) && ref.buf == NCL_BUF_SCRATCH && !(peers.base[NCL_BUF_SCRATCH] = peer_scratch(c, peer))) {
            ncl_fmt(why, why_len, "SCRATCH of rank %d: where it is is not known yet (it has recorded "
                    "nothing to this rank in this communicator)", peer);
            return 0;
        }
    }
    if (ncl_bk_region(remote ? &peers : &c->bufs, ref, bytes, write, addr, inner, sizeof inner))
        return 1;
    ncl_fmt(why, why_len, "%s%s", inner, remote ? " (a peer's buffers: ours, by the symmetric convention)" : "");
    return 0;
}

/* ---- notify counters -------------------------------------------------------------------------- */

/* The fixed layout (contexts 0): HAL counter (sender, id) held by `holder` (world ranks). */
static int counter_fixed(const ncl_mmio *m, int sender, int holder, uint32_t id, uint32_t *idx)
{
    uint32_t n = (uint32_t)m->cfg.nranks;
    if (id >= m->ids_per_peer)
        return 0;
    uint32_t d = (uint32_t)((sender - holder) % (int)n + (int)n) % n;
    *idx = d * m->ids_per_peer + id;
    return 1;
}

/* First counter of sender's partition at holder (world ranks). */
static uint32_t part_base(const ncl_mmio *m, int sender, int holder)
{
    int n = m->cfg.nranks;
    return (uint32_t)(((sender - holder) % n + n) % n) * m->part;
}

/* A map entry: what counter i of the holder counts (communicator, notify id, the sender's context). */
static void entry_encode(uint32_t comm, uint32_t id, uint32_t ctx, uint8_t e[8])
{
    put32(e, comm);
    e[4] = (uint8_t)id;
    e[5] = (uint8_t)ctx;
    e[6] = MMIO_ENTRY_MARK;
    e[7] = (uint8_t)(e[0] ^ e[1] ^ e[2] ^ e[3] ^ e[4] ^ e[5] ^ 0x5Au);
}

static int entry_valid(const uint8_t e[8])
{
    return e[6] == MMIO_ENTRY_MARK && e[7] == (uint8_t)(e[0] ^ e[1] ^ e[2] ^ e[3] ^ e[4] ^ e[5] ^ 0x5Au);
}

/* Member k's counter for our records of id: *idx, and *fresh = 1 when it was mapped just now (its
 * entry must reach k before the record does). 0 with c's error when none is left. */
static ncl_result out_counter(mmio_comm *c, int k, uint32_t id, uint32_t *idx, int *fresh)
{
    ncl_mmio *m = c->m;
    int holder = world_of(c, k), me = m->cfg.rank;
    *fresh = 0;
    if (!MMIO_CONTEXTS(m)) {
        if (counter_fixed(m, me, holder, id, idx))
            return NCL_SUCCESS;
        return mfail(c, NCL_ERR_UNSUPPORTED, "#%llu notify id %u (record to rank %d) does not fit: the "
                     "block's %u counters give each of %d ranks %u ids (0..%u)", (unsigned long long)c->seq,
                     (unsigned)id, holder, (unsigned)m->notify_count, m->cfg.nranks, (unsigned)m->ids_per_peer,
                     (unsigned)(m->ids_per_peer - 1));
    }
    if (id >= NCL_NOTIFY_IDS)
        return mfail(c, NCL_ERR_BACKEND, "#%llu notify id %u: ids are below %u", (unsigned long long)c->seq,
                     (unsigned)id, NCL_NOTIFY_IDS);
    uint8_t *slot = &c->out_map[(size_t)k * NCL_NOTIFY_IDS + id];
    if (*slot == MMIO_NONE) {
        uint64_t all = m->part == 64u ? ~0ull : (1ull << m->part) - 1u;
        uint64_t free = ~m->used[holder] & all;
        if (!free)
            return mfail(c, NCL_ERR_UNSUPPORTED, "#%llu notify id %u: no notify counter left for this rank's "
                         "records on rank %d: all %u of its partition there are mapped (one per communicator "
                         "and notify id recorded there; a released communicator's come back at the next "
                         "ncl_mmio_init)", (unsigned long long)c->seq, (unsigned)id, holder, (unsigned)m->part);
        uint32_t e = 0;
        while (!(free >> e & 1u))
            e++;
        m->used[holder] |= 1ull << e;
        *slot = (uint8_t)e;
        if (holder == me)
            c->in_map[(size_t)k * NCL_NOTIFY_IDS + id] = (uint8_t)e; /* our own: no entry to read */
        else
            *fresh = 1;
    }
    *idx = part_base(m, me, holder) + *slot;
    return NCL_SUCCESS;
}

/* Member k's counter for its records of id here: 1 and *idx, or 0 while k has mapped none (it
 * recorded nothing of id yet). */
static int in_counter(mmio_comm *c, int k, uint32_t id, uint32_t *idx)
{
    ncl_mmio *m = c->m;
    int sender = world_of(c, k), me = m->cfg.rank;
    if (!MMIO_CONTEXTS(m))
        return counter_fixed(m, sender, me, id, idx);
    if (id >= NCL_NOTIFY_IDS)
        return 0; /* never recorded: the engine's ids are below it */
    uint8_t *slot = &c->in_map[(size_t)k * NCL_NOTIFY_IDS + id];
    uint32_t base = part_base(m, sender, me);
    if (*slot == MMIO_NONE && sender != me) {
        uint8_t tab[8 * MMIO_MAX_PART];
        if (m->acc.mem_read(m->acc.ctx, m->cfg.map_base + 8u * base, tab, 8u * m->part) != 0)
            return 0;
        for (uint32_t e = 0; e < m->part; e++) {
            const uint8_t *x = tab + 8u * e;
            if (entry_valid(x) && get32(x) == c->id && x[4] == id) {
                *slot = (uint8_t)e;
                c->peer_context[k] = x[5];
                break;
            }
        }
    }
    if (*slot == MMIO_NONE)
        return 0;
    *idx = base + *slot;
    return 1;
}

/* The ring descriptors that tell member k which counter our records of id go to (an 8-byte WRITE
 * of its map entry, staged in our map's second half); the caller reserved the slot. */
static ncl_result entry_send(mmio_comm *c, int k, uint32_t id, uint32_t idx)
{
    ncl_mmio *m = c->m;
    int holder = world_of(c, k);
    uint8_t e[8];
    entry_encode(c->id, id, c->context, e);
    uint64_t stage = m->cfg.map_base + NCL_MMIO_MAP_BYTES / 2u +
                     8u * ((uint64_t)holder * m->part + (idx - part_base(m, m->cfg.rank, holder)));
    if (m->acc.mem_write(m->acc.ctx, stage, e, sizeof e) != 0)
        return mfail(c, NCL_ERR_BACKEND, "the counter map at 0x%llx is not in device memory",
                     (unsigned long long)stage);
    mmio_desc d = {0};
    d.opc = NCL_MMIO_OPC_WRITE;
    d.peer = (uint32_t)holder;
    d.src = stage;
    d.dst = m->cfg.map_base + 8u * (uint64_t)idx;
    d.len = sizeof e;
    ncl_task t = {0};
    t.kind = NCL_TASK_WRITE;
    t.peer = holder;
    t.bytes = sizeof e;
    t.notify = id;
    return ring_put(c, &d, -1, &t, holder);
}

/* ---- the launch mailbox (mismatched calls) -------------------------------------------------- */

/* A record: u64 seq, u64 count, u8 coll, dtype, op, algo, inplace, 3 x 0, i32 root, u32 check
 * (seq's low word ^ 'LNCH': a record half-written by the peer's next call does not pass); then a
 * sub-communicator's u64 RECV address, and zeros. */
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

/* The mailbox record of world rank `rank` in context row `ctx`. */
static uint64_t launch_slot(const ncl_mmio *m, uint32_t ctx, int rank)
{
    return m->cfg.launch_base + ((uint64_t)ctx * (uint64_t)m->cfg.nranks + (uint64_t)rank) * NCL_MMIO_LAUNCH_BYTES;
}

static int peer_bit(const uint64_t *set, int peer) { return (int)(set[peer / 64] >> (peer % 64) & 1u); }
static void peer_set(uint64_t *set, int peer) { set[peer / 64] |= 1ull << (peer % 64); }

/* begin(): this call's record into this rank's own slot, nothing sent or compared yet. */
static ncl_result launch_post(mmio_comm *c, const ncl_hal_launch *l)
{
    ncl_mmio *m = c->m;
    if (!m->cfg.launch_base)
        return NCL_SUCCESS;
    c->launch = *l;
    c->launch_flush = 0;
    memset(c->launch_sent, 0, peer_words(&m->cfg) * sizeof(uint64_t));
    memset(c->launch_agreed, 0, peer_words(&m->cfg) * sizeof(uint64_t));
    uint8_t r[NCL_MMIO_LAUNCH_BYTES];
    launch_encode(l, r);
    if (MMIO_CHILD(c)) { /* where peers write our RECV (point to point: not at their address) */
        put32(r + 32, (uint32_t)c->bufs.base[NCL_BUF_RECV]);
        put32(r + 36, (uint32_t)(c->bufs.base[NCL_BUF_RECV] >> 32));
        memset(c->peer_recv, 0, (size_t)c->n * sizeof *c->peer_recv);
    }
    uint64_t at = launch_slot(m, MMIO_CHILD(c) ? c->context : 0u, m->cfg.rank);
    if (m->acc.mem_write(m->acc.ctx, at, r, sizeof r) != 0)
        return mfail(c, NCL_ERR_BACKEND, "launch mailbox at 0x%llx is not in device memory", (unsigned long long)at);
    return NCL_SUCCESS;
}

/* Before this call's first record to member k: our slot into the peer's (the record's FENCE waits
 * for it). The caller reserved the ring slot. */
static ncl_result launch_send(mmio_comm *c, int k)
{
    ncl_mmio *m = c->m;
    mmio_desc d = {0};
    d.opc = NCL_MMIO_OPC_WRITE;
    d.peer = (uint32_t)world_of(c, k);
    d.src = d.dst = launch_slot(m, MMIO_CHILD(c) ? c->context : 0u, m->cfg.rank);
    d.len = NCL_MMIO_LAUNCH_BYTES;
    ncl_task t = {0};
    t.kind = NCL_TASK_WRITE;
    t.peer = world_of(c, k);
    t.bytes = NCL_MMIO_LAUNCH_BYTES;
    ncl_result rc = ring_put(c, &d, -1, &t, t.peer);
    if (rc == NCL_SUCCESS)
        peer_set(c->launch_sent, k);
    return rc;
}

/* While a notify from member k is awaited (its counter found, so its context known): its record
 * of this call, when there, must agree with ours. */
static ncl_result launch_compare(mmio_comm *c, int k)
{
    ncl_mmio *m = c->m;
    if (!m->cfg.launch_base || k == c->rank || peer_bit(c->launch_agreed, k))
        return NCL_SUCCESS;
    uint32_t ctx = MMIO_CHILD(c) ? c->peer_context[k] : 0u;
    uint8_t r[NCL_MMIO_LAUNCH_BYTES];
    ncl_hal_launch theirs;
    if (ctx == MMIO_NONE || m->acc.mem_read(m->acc.ctx, launch_slot(m, ctx, world_of(c, k)), r, sizeof r) != 0 ||
        !launch_decode(r, &theirs) || theirs.seq != c->seq)
        return NCL_SUCCESS; /* not written yet for this call (or already for its next): nothing to say */
    char why[240];
    if (ncl_launch_mismatch(&c->launch, c->rank, &theirs, k, why, sizeof why)) {
        /* the peer may be waiting for a record of ours it will now never get: our launch record
         * (again: one sent before may still be in the ring) lets it name the mismatch too; end()
         * lets the ring drain before the reset, so it arrives after everything else we sent it */
        if (ring_reserve(c, 1) == NCL_SUCCESS && launch_send(c, k) == NCL_SUCCESS) {
            ring_doorbell(m);
            c->launch_flush = 1;
        }
        return mfail(c, NCL_ERR_REMOTE, "mismatch: %s", why);
    }
    peer_set(c->launch_agreed, k);
    if (MMIO_CHILD(c))
        c->peer_recv[k] = (uint64_t)get32(r + 36) << 32 | get32(r + 32);
    return NCL_SUCCESS;
}

static ncl_result begin(void *ctx, const ncl_hal_launch *l)
{
    mmio_comm *c = ctx;
    ncl_mmio *m = c->m;
    if (!l)
        return NCL_ERR_BACKEND;
    if (MMIO_CHILD(c) && c->stuck)
        return c->stuck; /* err still says why */
    c->seq = l->seq;
    c->err[0] = '\0'; /* last_error describes this call, not an older one */
    ncl_result rc = check_alive(c);
    if (rc != NCL_SUCCESS)
        return rc;
    ncl_bk_bind(&c->bufs, l, m->cfg.scratch_base + (MMIO_CHILD(c) ? (uint64_t)c->context * m->scratch_part : 0u),
                m->scratch_part);
    c->peer_recv_bytes = l->peer_recv_bytes;
    rc = launch_post(c, l);
    if (rc != NCL_SUCCESS)
        return rc;
    c->failed = 0;
    c->completion_unseen = 0;
    for (uint32_t q = 0; q < NCL_MAX_QUEUES; q++)
        c->q[q].state = MQ_IDLE;
    mlog(m, NCL_LOG_DEBUG, "mmio rank %d: begin #%llu coll %u send 0x%llx (%llu B) recv 0x%llx (%llu B)",
         m->cfg.rank, (unsigned long long)l->seq, (unsigned)l->coll, (unsigned long long)c->bufs.base[NCL_BUF_SEND],
         (unsigned long long)l->send_bytes, (unsigned long long)c->bufs.base[NCL_BUF_RECV],
         (unsigned long long)l->recv_bytes);
    return check_block(c);
}

static ncl_result end(void *ctx, ncl_result result)
{
    mmio_comm *c = ctx;
    ncl_mmio *m = c->m;
    ncl_bk_unbind(&c->bufs);
    if (result == NCL_SUCCESS || c->failed)
        return NCL_SUCCESS; /* a block error was handled where it was seen */
    if (MMIO_CHILD(c)) {
        /* Its descriptors may still reach its own counters and scratch, which nobody else uses:
         * the block stays up for the world and the siblings, and this communicator stays failed. */
        mlog(m, NCL_LOG_WARN, "mmio rank %d: collective #%llu of communicator 0x%x failed (%s); it stays "
             "failed", m->cfg.rank, (unsigned long long)c->seq, (unsigned)c->id, ncl_strerror(result));
        c->stuck = result;
        return NCL_SUCCESS;
    }
    /* Descriptors of the failed collective may still sit in the ring: drop them, so they do not
     * reach the next collective's counters. */
    mlog(m, NCL_LOG_WARN, "mmio rank %d: collective #%llu failed (%s); soft-resetting the block",
         m->cfg.rank, (unsigned long long)c->seq, ncl_strerror(result));
    if (c->launch_flush) /* the whole ring free: the record told to a mismatched peer left */
        (void)ring_reserve(c, m->cfg.ring_entries - 1);
    c->launch_flush = 0;
    return bringup(c);
}

/* ---- controller-run tasks (what the block cannot do) --------------------------------------- */

static int ranges_overlap(uint64_t a, uint64_t b, uint64_t n) { return a < b + n && b < a + n; }

/* dst op= src (op < NCL_OP_COUNT) or dst /= count (LOCAL_DIV) or dst = src (copy), through the
 * bounce buffer, chunk by chunk. */
static ncl_result controller_run(mmio_comm *c, const ncl_task *t, uint64_t src, uint64_t dst)
{
    ncl_mmio *m = c->m;
    unsigned char *b = m->cfg.bounce;
    int copy = t->kind == NCL_TASK_LOCAL_COPY || t->kind == NCL_TASK_WRITE;
    int div = t->kind == NCL_TASK_LOCAL_DIV;
    char why[160];
    if (!ncl_bk_task_ok(t, why, sizeof why))
        return mfail(c, NCL_ERR_BACKEND, "step %u %s: %s", (unsigned)t->step, ncl_task_kind_name(t->kind), why);
    uint64_t es = copy ? 1 : ncl_dtype_size((ncl_dtype)t->dtype);
    uint64_t chunk = copy || div ? m->cfg.bounce_bytes : m->cfg.bounce_bytes / 2;
    chunk -= chunk % (copy ? 1u : 8u); /* the second half stays aligned for the kernels */
    chunk -= chunk % es;
    if (chunk < es)
        return mfail(c, NCL_ERR_BACKEND, "the bounce buffer (%llu B) cannot hold two %s elements",
                     (unsigned long long)m->cfg.bounce_bytes, ncl_dtype_name((ncl_dtype)t->dtype));
    if (!copy && !div && src != dst && ranges_overlap(src, dst, t->bytes))
        return mfail(c, NCL_ERR_BACKEND, "step %u %s: source and destination partially overlap",
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
            return mfail(c, NCL_ERR_BACKEND, "step %u %s on the controller: device memory at 0x%llx or "
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
static ncl_result controller_wide(mmio_comm *c, const ncl_task *t, uint64_t src, uint64_t dst)
{
    ncl_mmio *m = c->m;
    unsigned char *b = m->cfg.bounce;
    char why[160];
    if (!ncl_bk_task_ok(t, why, sizeof why))
        return mfail(c, NCL_ERR_BACKEND, "step %u %s: %s", (unsigned)t->step, ncl_task_kind_name(t->kind), why);
    uint64_t sb = ncl_task_src_bytes(t), db = ncl_task_dst_bytes(t);
    if (src < dst + db && dst < src + sb)
        return mfail(c, NCL_ERR_BACKEND, "step %u %s: source and destination overlap", (unsigned)t->step,
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
            return mfail(c, NCL_ERR_BACKEND, "step %u %s on the controller: device memory at 0x%llx or 0x%llx "
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
    mmio_comm *c = ctx;
    ncl_mmio *m = c->m;
    if (!out)
        return NCL_ERR_BACKEND;
    memset(out, 0, sizeof *out);
    out->scratch_bytes = m->scratch_part;
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
static ncl_result task_fail(mmio_comm *c, uint32_t queue, const ncl_task *t, const char *fmt, ...)
{
    char why[200];
    va_list ap;
    va_start(ap, fmt);
    ncl_vfmt(why, sizeof why, fmt, ap);
    va_end(ap);
    if (queue < NCL_MAX_QUEUES)
        c->q[queue].state = MQ_FAILED;
    return mfail(c, NCL_ERR_BACKEND, "#%llu queue %u step %u %s (peer %d, %llu B): %s",
                 (unsigned long long)c->seq, (unsigned)queue, (unsigned)t->step, ncl_task_kind_name(t->kind),
                 (int)t->peer, (unsigned long long)t->bytes, why);
}

static ncl_result dma_submit(void *ctx, uint32_t queue, const ncl_task *t)
{
    mmio_comm *c = ctx;
    ncl_mmio *m = c->m;
    if (!t || queue >= m->cfg.max_queues)
        return mfail(c, NCL_ERR_BACKEND, "dma_submit on queue %u (max %u)", (unsigned)queue,
                     (unsigned)m->cfg.max_queues);
    if (c->q[queue].state == MQ_RING)
        return task_fail(c, queue, t, "queue %u still has a task in the ring", (unsigned)queue);
    ncl_result rc = check_block(c);
    if (rc != NCL_SUCCESS)
        return rc;
    char why[200];
    uint64_t src = 0, dst = 0;
    int remote = (t->kind == NCL_TASK_WRITE || t->kind == NCL_TASK_WRITE_REDUCE) && t->peer != c->rank;
    switch ((ncl_task_kind)t->kind) {
    case NCL_TASK_WRITE:
    case NCL_TASK_WRITE_REDUCE:
        if (t->peer < 0 || t->peer >= c->n)
            return task_fail(c, queue, t, "peer %d out of range", (int)t->peer);
        /* fall through */
    case NCL_TASK_LOCAL_COPY:
    case NCL_TASK_LOCAL_REDUCE:
        if (!resolve(c, t->src, t->bytes, -1, 0, &src, why, sizeof why))
            return task_fail(c, queue, t, "src %s", why);
        /* fall through */
    case NCL_TASK_LOCAL_DIV:
        if (!resolve(c, t->dst, t->bytes, remote ? t->peer : -1, 1, &dst, why, sizeof why))
            return task_fail(c, queue, t, "dst %s", why);
        break;
    case NCL_TASK_LOCAL_WIDEN:
    case NCL_TASK_LOCAL_REDUCE_WIDE:
    case NCL_TASK_LOCAL_NARROW:
        if (!resolve(c, t->src, ncl_task_src_bytes(t), -1, 0, &src, why, sizeof why))
            return task_fail(c, queue, t, "src %s", why);
        if (!resolve(c, t->dst, ncl_task_dst_bytes(t), -1, 1, &dst, why, sizeof why))
            return task_fail(c, queue, t, "dst %s", why);
        rc = controller_wide(c, t, src, dst);
        c->q[queue].state = rc == NCL_SUCCESS ? MQ_DONE : MQ_FAILED;
        if (rc == NCL_SUCCESS)
            c->completion_unseen = 1;
        return rc;
    default:
        return task_fail(c, queue, t, "not a data task");
    }

    int reduce = t->kind == NCL_TASK_WRITE_REDUCE || t->kind == NCL_TASK_LOCAL_REDUCE;
    int lanes_ok = reduce && lane_reduce_ok(t->dtype, t->op) && src % 4 == 0 && dst % 4 == 0 && t->bytes % 4 == 0;
    if (remote && reduce && !lanes_ok)
        return mfail(c, NCL_ERR_UNSUPPORTED, "#%llu queue %u step %u: WRITE_REDUCE of %s %s at 0x%llx -> "
                     "0x%llx (%llu B): the block reduces only int32/uint32/fp32 sum/max/min on 4-byte "
                     "aligned lanes (caps.inline_ops said so)", (unsigned long long)c->seq, (unsigned)queue,
                     (unsigned)t->step, ncl_dtype_name((ncl_dtype)t->dtype), ncl_op_name((ncl_op)t->op),
                     (unsigned long long)src, (unsigned long long)dst, (unsigned long long)t->bytes);
    int partial = src != dst && ranges_overlap(src, dst, t->bytes);
    int on_controller = t->kind == NCL_TASK_LOCAL_DIV || (!remote && reduce && (!lanes_ok || partial)) ||
                        (!remote && !reduce && partial);
    if (on_controller) {
        rc = controller_run(c, t, src, dst);
        if (rc != NCL_SUCCESS) {
            c->q[queue].state = MQ_FAILED;
            return rc;
        }
        c->q[queue].state = MQ_DONE;
        c->completion_unseen = 1;
        return NCL_SUCCESS;
    }

    mmio_desc d = {0};
    d.opc = remote ? (reduce ? NCL_MMIO_OPC_WRITE_REDUCE : NCL_MMIO_OPC_WRITE)
                   : (reduce ? NCL_MMIO_OPC_LOCAL_REDUCE : NCL_MMIO_OPC_LOCAL_COPY);
    d.irq = 1;
    d.peer = remote ? (uint32_t)world_of(c, t->peer) : 0;
    if (reduce) {
        d.dtype = t->dtype;
        d.op = t->op;
    }
    uint64_t chunks = t->bytes ? (t->bytes + MMIO_MAX_LEN - 1) / MMIO_MAX_LEN : 1;
    if (chunks > m->cfg.ring_entries - 1)
        return task_fail(c, queue, t, "%llu bytes need %llu descriptors, more than the ring holds",
                         (unsigned long long)t->bytes, (unsigned long long)chunks);
    rc = ring_reserve(c, (uint32_t)chunks);
    if (rc != NCL_SUCCESS) {
        c->q[queue].state = MQ_FAILED;
        return rc;
    }
    for (uint64_t i = 0; i < chunks; i++) {
        uint64_t off = i * MMIO_MAX_LEN;
        d.src = src + off;
        d.dst = dst + off;
        d.len = t->bytes - off < MMIO_MAX_LEN ? t->bytes - off : MMIO_MAX_LEN;
        if ((rc = ring_put(c, &d, (int)queue, t, (int)d.peer)) != NCL_SUCCESS) {
            c->q[queue].state = MQ_FAILED;
            return rc;
        }
    }
    ring_doorbell(m);
    c->q[queue].state = MQ_RING;
    c->q[queue].last = m->posted - 1;
    return NCL_SUCCESS;
}

static ncl_result dma_poll(void *ctx, uint32_t queue, int *done)
{
    mmio_comm *c = ctx;
    ncl_mmio *m = c->m;
    if (queue >= m->cfg.max_queues || !done)
        return NCL_ERR_BACKEND;
    *done = 0;
    switch (c->q[queue].state) {
    case MQ_DONE:
        *done = 1;
        c->q[queue].state = MQ_IDLE;
        return NCL_SUCCESS;
    case MQ_RING:
        if (reset_since(c)) /* its descriptors left the ring with the reset */
            return check_alive(c);
        if (ring_completed(m) > c->q[queue].last) {
            *done = 1;
            c->q[queue].state = MQ_IDLE;
            return NCL_SUCCESS;
        }
        return check_block(c);
    case MQ_FAILED:
        return NCL_ERR_BACKEND;
    default:
        *done = 1; /* nothing outstanding */
        return NCL_SUCCESS;
    }
}

static ncl_result notify_record(void *ctx, uint32_t queue, int peer, uint32_t id)
{
    mmio_comm *c = ctx;
    ncl_mmio *m = c->m;
    uint32_t idx = 0;
    int fresh = 0;
    if (peer < 0 || peer >= c->n || queue >= m->cfg.max_queues)
        return mfail(c, NCL_ERR_BACKEND, "#%llu notify_record queue %u peer %d id %u: out of range",
                     (unsigned long long)c->seq, (unsigned)queue, peer, (unsigned)id);
    ncl_result rc = out_counter(c, peer, id, &idx, &fresh);
    if (rc != NCL_SUCCESS)
        return rc;
    int first = m->cfg.launch_base && peer != c->rank && !peer_bit(c->launch_sent, peer);
    rc = check_block(c);
    if (rc == NCL_SUCCESS)
        rc = ring_reserve(c, 1u + (uint32_t)first + (uint32_t)fresh);
    if (rc == NCL_SUCCESS && first)
        rc = launch_send(c, peer);
    if (rc == NCL_SUCCESS && fresh)
        rc = entry_send(c, peer, id, idx);
    if (rc != NCL_SUCCESS)
        return rc;
    mmio_desc d = {0};
    d.opc = NCL_MMIO_OPC_NOTIFY_RECORD;
    d.fence = 1; /* after every earlier descriptor's writes, remote ones included */
    d.notify = idx;
    if (peer == c->rank)
        d.local = 1;
    else
        d.peer = (uint32_t)world_of(c, peer);
    ncl_task t = {0};
    t.kind = NCL_TASK_NOTIFY_RECORD;
    t.peer = world_of(c, peer);
    t.notify = id;
    if ((rc = ring_put(c, &d, -1, &t, t.peer)) != NCL_SUCCESS)
        return rc;
    ring_doorbell(m);
    return NCL_SUCCESS;
}

static ncl_result notify_try_wait(void *ctx, int peer, uint32_t id, uint32_t count, int *done)
{
    mmio_comm *c = ctx;
    ncl_mmio *m = c->m;
    uint32_t idx = 0;
    if (!done || peer < 0 || peer >= c->n)
        return mfail(c, NCL_ERR_BACKEND, "#%llu notify_try_wait peer %d id %u: out of range",
                     (unsigned long long)c->seq, peer, (unsigned)id);
    *done = 0;
    int mapped = in_counter(c, peer, id, &idx);
    if (!mapped && !MMIO_CONTEXTS(m))
        return mfail(c, NCL_ERR_UNSUPPORTED, "#%llu notify id %u (wait for rank %d) does not fit: the "
                     "block's %u counters give each of %d ranks %u ids (0..%u)", (unsigned long long)c->seq,
                     (unsigned)id, peer, (unsigned)m->notify_count, m->cfg.nranks, (unsigned)m->ids_per_peer,
                     (unsigned)(m->ids_per_peer - 1));
    ncl_result rc = mapped ? launch_compare(c, peer) : NCL_SUCCESS; /* before its data is taken as ours */
    if (rc != NCL_SUCCESS)
        return rc;
    uint32_t have = count && mapped ? rd(m, NCL_MMIO_NOTIFY_CNT(idx)) : 0;
    if (have < count) {
        rc = check_block(c); /* a stopped block would leave us waiting: say why instead */
        if (rc == NCL_SUCCESS)
            rc = check_alive(c);
        if (rc != NCL_SUCCESS || !m->acc.peer_check)
            return rc;
        char why[400] = "";
        rc = m->acc.peer_check(m->acc.ctx, world_of(c, peer), why, sizeof why);
        return rc == NCL_SUCCESS ? rc
                                 : mfail(c, rc, "#%llu waiting for notify %u from rank %d: %s",
                                         (unsigned long long)c->seq, (unsigned)id, peer, why);
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
    mmio_comm *c = ctx;
    ncl_mmio *m = c->m;
    uint32_t idx;
    if (!value || peer < 0 || peer >= c->n)
        return NCL_ERR_BACKEND;
    if (!in_counter(c, peer, id, &idx)) {
        if (!MMIO_CONTEXTS(m))
            return NCL_ERR_BACKEND; /* an id past the fixed layout */
        *value = 0; /* nothing recorded yet */
        return NCL_SUCCESS;
    }
    *value = rd(m, NCL_MMIO_NOTIFY_CNT(idx));
    return NCL_SUCCESS;
}

/* Clears the pending events (W1C), so none is lost between looks, and counts them for every
 * communicator; 1 if any arrived since c last looked. */
static int take_events(mmio_comm *c)
{
    ncl_mmio *m = c->m;
    uint32_t ev = rd(m, NCL_MMIO_IRQ_STATUS) & MMIO_IRQ_EVENTS;
    if (ev)
        wr(m, NCL_MMIO_IRQ_STATUS, ev);
    if (!MMIO_CONTEXTS(m))
        return ev != 0; /* one communicator: nobody else takes its events */
    m->events += ev != 0;
    int news = m->events != c->events_seen;
    c->events_seen = m->events;
    return news;
}

static ncl_result wait_event(void *ctx, uint64_t timeout_ns)
{
    mmio_comm *c = ctx;
    ncl_mmio *m = c->m;
    if (c->completion_unseen) {
        c->completion_unseen = 0;
        return NCL_SUCCESS;
    }
    if (take_events(c) || timeout_ns == 0)
        return NCL_SUCCESS;
    if (m->cfg.irq) {
        m->stats.irq_waits++;
        m->acc.wait_irq(m->acc.ctx, timeout_ns);
        take_events(c);
        return NCL_SUCCESS;
    }
    uint64_t t0 = now(m);
    for (;;) {
        if (m->acc.poll) {
            m->stats.polls++;
            if (m->acc.poll(m->acc.ctx))
                return NCL_SUCCESS;
        }
        if (take_events(c) || now(m) - t0 >= timeout_ns)
            return NCL_SUCCESS;
    }
}

static uint64_t now_ns(void *ctx) { return now(((mmio_comm *)ctx)->m); }

static void hal_log(void *ctx, int level, const char *msg)
{
    ncl_mmio *m = ((mmio_comm *)ctx)->m;
    if (m->acc.log && level <= m->cfg.log_level)
        m->acc.log(m->acc.ctx, level, msg);
}

static const char *hal_last_error(void *ctx) { return ((mmio_comm *)ctx)->err; }

/* ---- sub-communicators ------------------------------------------------------------------------ */

#ifndef NCL_NO_SPLIT

static ncl_result split(void *ctx, uint32_t id, const int32_t *members, int nmembers, int rank, ncl_hal *child)
{
    mmio_comm *p = ctx;
    ncl_mmio *m = p->m;
    if (!MMIO_CONTEXTS(m))
        return mfail(p, NCL_ERR_UNSUPPORTED, "sub-communicators need ncl_mmio_config.contexts (and map_base): "
                     "this block was brought up with none");
    if (!members || nmembers < 1 || nmembers > p->n || rank < 0 || rank >= nmembers || !child || !id)
        return mfail(p, NCL_ERR_BACKEND, "split: bad arguments (%d members, rank %d)", nmembers, rank);
    mmio_comm *c = NULL;
    for (uint32_t k = 0; k < m->cfg.contexts && !c; k++)
        if (!m->kids[k].live)
            c = &m->kids[k];
    if (!c)
        return mfail(p, NCL_ERR_UNSUPPORTED, "split: all %u contexts of this block are in use by live "
                     "sub-communicators (ncl_mmio_config.contexts): destroy one first",
                     (unsigned)m->cfg.contexts);
    for (int i = 0; i < nmembers; i++) {
        if (members[i] < 0 || members[i] >= p->n)
            return mfail(p, NCL_ERR_BACKEND, "split: member %d is rank %d of a communicator of %d", i,
                         (int)members[i], p->n);
        c->members[i] = p->members[members[i]];
    }
    if (c->members[rank] != m->cfg.rank)
        return mfail(p, NCL_ERR_BACKEND, "split: member %d is rank %d, not this device (%d)", rank,
                     (int)c->members[rank], m->cfg.rank);
    c->id = id;
    c->rank = rank;
    c->context = (uint32_t)(c - m->kids) + 1u;
    c->live = 1;
    c->seq = 0;
    comm_reset(c, nmembers);
    *child = c->hal;
    mlog(m, NCL_LOG_DEBUG, "mmio rank %d: communicator 0x%x of %d ranks (rank %d) in context %u", m->cfg.rank,
         (unsigned)id, nmembers, rank, (unsigned)c->context);
    return NCL_SUCCESS;
}

/* Its context (scratch part, mailbox row) is free again; its counters stay mapped (a late record
 * of it must never count for another). */
static void release(void *ctx)
{
    mmio_comm *c = ctx;
    if (c->id)
        c->live = 0;
}
#endif

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
#ifndef NCL_NO_SPLIT
    .split = split,
    .release = release,
#endif
};
