/* ncl_mmio.h — the register-level HAL backend: tasks become descriptors in the DMA/notify block's ring, through caller-supplied access functions. */
#ifndef NCL_MMIO_H
#define NCL_MMIO_H

#include "ncl_hal.h"
#include "ncl/ncl_mmio_regs.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * One ncl_mmio drives one rank's DMA/notify block (rtl_stub/REGISTERS.md) and gives the engine
 * its HAL (ncl_mmio_hal). It knows nothing of what is behind the access functions: on a board
 * they are volatile 32-bit loads/stores into the block's mapped register window and plain
 * copies into mapped device memory, wait_irq sleeps on the interrupt (eventfd/UIO), now_ns reads
 * a clock; in simulation they call a verilated model or the C reference (rs_ref_dev) and advance
 * it. The backend itself is plain C11 with no OS calls, no stdio, no allocation, no globals.
 *
 * How HAL operations map onto the block:
 * - Data tasks (WRITE, WRITE_REDUCE, LOCAL_COPY, LOCAL_REDUCE) become ring descriptors with IRQ=1;
 *   dma_poll reads RING_HEAD: a task is complete once HEAD has passed its descriptor. A WRITE* to
 *   this rank itself becomes the LOCAL_* opcode. Tasks over 1 GiB take several descriptors.
 * - What the block cannot do runs on the controller, synchronously inside dma_submit, through
 *   mem_read/mem_write and the config's bounce buffer: LOCAL_DIV (avg), LOCAL_REDUCE of a
 *   (dtype, op) the datapath lacks or with addresses/length not multiples of 4, and LOCAL_COPY with
 *   partially overlapping ranges. caps.inline_ops offers only int32/uint32/fp32 sum/max/min
 *   (inline_align 4), so the engine sends every other reduce to the peer's scratch with WRITE
 *   and lets the peer's controller reduce it.
 * - NOTIFY_RECORD becomes a NOTIFY_RECORD descriptor with FENCE=1 (it starts only after every
 *   earlier descriptor, remote writes included, completed), LOCAL=1 for a record to itself.
 *   Records are fire-and-forget: nothing in the ring ever waits, so the ring always drains.
 * - notify_try_wait is software: read NOTIFY_CNT[i]; if >= count, write NOTIFY_SUB(i, count);
 *   else access.peer_check (when given) may end the wait at once: the peer is gone or aborted.
 * - The block has one in-order ring; the backend still reports cfg.max_queues queues and
 *   serializes them into it (at most one data task per queue is in the ring at a time).
 * - Notify counters: HAL counter (sender, id) held by rank `self` is NOTIFY_CNT[d * ipp + id] with
 *   d = (sender - self) mod nranks and ipp = NOTIFY_COUNT / nranks (4 ranks: 32 ids each = all of
 *   NCL_NOTIFY_IDS; 8 ranks: 16, enough for 8 channels' data/ready ids but not the local ids 16..).
 *   An id >= ipp is NCL_ERR_UNSUPPORTED with a log line naming it, never an alias.
 * - Waiting (wait_event): interrupt mode reads IRQ_STATUS and, if no event is pending, calls
 *   wait_irq; polled mode re-reads IRQ_STATUS, calling poll between reads, until an event, the
 *   timeout or poll asking to stop. Either way the events seen (DESC_DONE, RING_EMPTY, NOTIFY,
 *   ERROR) are cleared (W1C) before returning, so none is lost.
 * - Errors: when the block stops (any ERR_STATUS bit), the operation that notices it returns
 *   NCL_ERR_BACKEND and logs the failing descriptor: ring slot, opcode, TAG read back, the task it
 *   came from (queue, kind, step, peer), which error and ERR_ADDR; the block is then soft-reset
 *   and brought up again (a collective that failed on this rank also resets it at end()). No
 *   register-level wait is unbounded: cfg.timeout_ns limits waiting for a free ring slot.
 *
 * Mismatched calls (cfg.launch_base set). Every rank keeps a mailbox of one 64-byte record per
 * rank at launch_base: begin() writes this rank's launch (seq, collective, count, dtype, op, root,
 * placement, algorithm) into its own slot, and the first NOTIFY_RECORD of a call to each peer is
 * preceded by a WRITE of that slot into the same slot of the peer's mailbox (the record's FENCE
 * orders them), so a peer's record for call #seq is there by the time its first notify of the
 * call is. notify_try_wait reads the peer's record (until it agreed), and when it is for this
 * call and differs, fails with NCL_ERR_REMOTE naming both ranks and the field ("rank 1 called allreduce #3
 * with count 5, rank 0 with count 9"), before the data it would bring moves. A record already
 * overwritten by the peer's next call (it ran a whole call ahead) is not compared. Costs one
 * 64-byte WRITE descriptor per (call, peer notified). A sub-communicator's record also names the
 * rank's RECV: its peers write there (point to point needs no symmetric buffers), the world's
 * keep the symmetric convention.
 *
 * Sub-communicators (cfg.contexts > 0; ncl_comm_split, ncl_comm_create_group, ncl_send/ncl_recv).
 * A child runs on the same block, ring and links as the world, with its own queues, sequence
 * numbers, launch mailbox row, a part of the scratch and notify counters nobody else uses. The
 * counters cannot be numbered in advance (128 of them, 32 ids a communicator may use per peer),
 * so they are mapped on use, the way RDMA peers exchange keys:
 * - Each rank's block gives every sender a partition of NOTIFY_COUNT / nranks counters (at most
 *   64), the sender's alone to allocate: the first record of (communicator, id) to a holder takes
 *   the next free counter of the sender's partition there and, before that record (the record's
 *   FENCE orders them), WRITEs an 8-byte map entry naming it into the holder's map table
 *   (cfg.map_base: entry i describes NOTIFY_CNT[i]; u32 communicator id, u8 notify id, u8 the
 *   sender's context, 0xA5, a check byte). A holder waiting on (sender, id) finds the counter by
 *   reading the sender's entries; until the entry is there nothing was recorded, so the wait is
 *   unmet, never blocked. Staged entries sit after the table (NCL_MMIO_MAP_BYTES in all).
 * - A rank gives each live child a context 1..contexts (the world is 0): its scratch is part
 *   `context` of scratch_bytes / (contexts + 1) (every communicator's caps.scratch_bytes is that
 *   part, the world's too) and its launch records sit in mailbox row `context` (launch_base +
 *   (context x nranks + rank) x NCL_MMIO_LAUNCH_BYTES). Peers learn a rank's context from its map
 *   entries, which precede its first record, and so its first write into their scratch.
 * - With contexts, the world maps its counters the same way (the fixed layout above leaves no
 *   room). Counters stay mapped while their communicator lives; a released one's come back only
 *   with the next ncl_mmio_init (a late record of it can never reach a new owner). A record with
 *   no free counter left is NCL_ERR_UNSUPPORTED naming both ranks.
 * - One controller drives every communicator (no locks): the device's events are counted, so a
 *   communicator's wait_event returns when any arrived since it last looked.
 * - A child's failed collective sticks (every later call of it fails, saying why) and leaves the
 *   block alone: the world and siblings go on. A block error or a failed world collective resets
 *   the block, which breaks every child (their counters are gone).
 *
 * Buffers (the SYMMETRIC convention). The send/recv pointers of a collective are DEVICE
 * addresses ((void *)(uintptr_t)dev_addr), never host pointers, and every rank passes the same
 * addresses for the same collective, as with a symmetric heap: a peer's RECV (or SCRATCH) is at
 * the address this rank's own launch names. NCL_BUF_SCRATCH is [cfg.scratch_base,
 * + cfg.scratch_bytes) on every rank. Device address 0 cannot hold a buffer (it is NULL to the
 * API). Reduce's non-roots hand the engine no recvbuf, so they learn the root's from
 * ncl_mmio_set_peer_recv() (the address every rank would pass as recvbuf).
 */

/** How the backend reaches the block. ctx is passed back to every function. */
typedef struct ncl_mmio_access {
    /** 32-bit register read/write at byte offset `off` of the block's register window. */
    uint32_t (*reg_read32)(void *ctx, uint32_t off);
    void (*reg_write32)(void *ctx, uint32_t off, uint32_t value);
    /** Device memory copies (ring descriptors, controller-run tasks). Return 0, or nonzero when
     *  [dev_addr, dev_addr + bytes) is not reachable. */
    int (*mem_write)(void *ctx, uint64_t dev_addr, const void *src, uint64_t bytes);
    int (*mem_read)(void *ctx, uint64_t dev_addr, void *dst, uint64_t bytes);
    /** Interrupt mode (required there): return once the irq line is high, timeout_ns passed, or
     *  earlier (spurious returns are fine). Returns 1 if irq was seen, else 0. */
    int (*wait_irq)(void *ctx, uint64_t timeout_ns);
    /** Polled mode (optional): called between register polls (a pause, a yield, or in a
     *  single-threaded simulation: advance the model). Nonzero ends the wait early. */
    int (*poll)(void *ctx);
    /** Monotonic time in ns (simulated time in simulation). Required. */
    uint64_t (*now_ns)(void *ctx);
    /** Optional: one message line (level NCL_LOG_*). */
    void (*log)(void *ctx, int level, const char *msg);
    void *ctx;
    /** Optional (after ctx, so initializers written before it stay valid): can rank `peer` still
     *  record the notify this rank waits for? Asked only while such a wait is unmet. NCL_SUCCESS:
     *  it can; else the error the wait fails with at once, instead of at the engine's timeout, with
     *  why filled: NCL_ERR_LINK (the peer or its link is gone), NCL_ERR_REMOTE (a rank's collective
     *  failed: the communicator is broken on every rank). On a board: the link's status register
     *  or a link-down interrupt; on emulated boards: the peer's BYE, its disconnect or an ABORT. */
    ncl_result (*peer_check)(void *ctx, int peer, char *why, size_t why_len);
} ncl_mmio_access;

/** Buffer conventions (ncl_mmio_config.buffers). */
enum { NCL_MMIO_BUF_SYMMETRIC = 0 /**< see above: the only one so far */ };

#define NCL_MMIO_CONFIG_VERSION 3u

typedef struct ncl_mmio_config {
    uint32_t size;          /**< sizeof(ncl_mmio_config) */
    uint32_t version;       /**< NCL_MMIO_CONFIG_VERSION */
    int rank, nranks;       /**< this rank; ranks are also the link's node numbers (PEER) */
    uint64_t ring_base;     /**< device address of the descriptor ring (32-byte aligned) */
    uint32_t ring_entries;  /**< ring size in descriptors, 2..2^RING_MAX_LOG2 (default 256) */
    uint64_t scratch_base;  /**< device address of NCL_BUF_SCRATCH (4-byte aligned) */
    uint64_t scratch_bytes; /**< its size */
    uint32_t buffers;       /**< NCL_MMIO_BUF_SYMMETRIC */
    int irq;                /**< 1: interrupt-driven (wait_irq), 0: polled */
    uint32_t max_queues;    /**< queues reported to the engine, 1..NCL_MAX_QUEUES (default 4) */
    uint32_t buf_align;     /**< alignment asked of send/recv device addresses (>= 4, default 4) */
    uint64_t timeout_ns;    /**< longest register-level wait (a free ring slot; default 1 s) */
    void *bounce;           /**< controller RAM for controller-run tasks (8-byte aligned, >= 16
                                 bytes; 4 KiB+ keeps chunking cheap) */
    uint64_t bounce_bytes;
    int log_level;          /**< NCL_LOG_*: messages up to this level go to access.log */
    uint64_t launch_base;   /**< device address of the launch mailbox, NCL_MMIO_LAUNCH_BYTES x
                                 nranks x (contexts + 1) (64-byte aligned), the same on every rank;
                                 0: peers' calls are not compared (see "Mismatched calls") */
    uint32_t contexts;      /**< sub-communicators live at once (0: none, split refused; at most
                                 NCL_MMIO_MAX_CONTEXTS); needs map_base; ignored by a build with
                                 NCL_NO_SPLIT (whose engine refuses splits) */
    uint64_t map_base;      /**< device address of the counter map (NCL_MMIO_MAP_BYTES, 8-byte
                                 aligned), the same on every rank; used when contexts > 0 */
} ncl_mmio_config;

/** Bytes of one rank's record in the launch mailbox. */
#define NCL_MMIO_LAUNCH_BYTES 64u
/** Bytes of the counter map: an 8-byte entry per notify counter, then as many staged entries. */
#define NCL_MMIO_MAP_BYTES (2u * 8u * NCL_MMIO_NOTIFY_COUNT)
#define NCL_MMIO_MAX_CONTEXTS 64u

#define NCL_MMIO_CONFIG_INIT                                                                    \
    {                                                                                           \
        sizeof(ncl_mmio_config), NCL_MMIO_CONFIG_VERSION, 0, 1, 0, 256u, 0, 0, NCL_MMIO_BUF_SYMMETRIC, \
            1, 4u, 4u, 1000000000ull, 0, 0, NCL_LOG_WARN, 0, 0, 0                               \
    }

typedef struct ncl_mmio ncl_mmio;

/** Bytes of state memory ncl_mmio_init needs for cfg (grows with cfg->ring_entries). */
size_t ncl_mmio_mem_bytes(const ncl_mmio_config *cfg);

/**
 * Brings the block up and makes *out, inside mem (ncl_mmio_mem_bytes(cfg) bytes, 16-byte
 * aligned, owned by the caller until ncl_mmio_fini). Bring-up: soft reset; ID must read 'RSIM'
 * (else NCL_ERR_BACKEND); VERSION.MAJOR must be 1 (else NCL_ERR_UNSUPPORTED); CAPS: 32-byte
 * descriptors, a ring of cfg->ring_entries allowed, at least 2 notify counters per rank (else
 * NCL_ERR_UNSUPPORTED); SCRATCH write/read-back (else NCL_ERR_BACKEND); program the ring; clear
 * ERR_STATUS and IRQ_STATUS; IRQ_MASK; CTRL = ENABLE (| IRQ_EN). A bad config is
 * NCL_ERR_INVALID_ARGUMENT. On failure *out is still set when mem was usable, so
 * ncl_mmio_last_error() can say why; it must not be used for anything else.
 */
ncl_result ncl_mmio_init(ncl_mmio **out, void *mem, size_t mem_bytes, const ncl_mmio_config *cfg,
                         const ncl_mmio_access *access);

/** Disables the block (CTRL = 0). mem may be reused afterwards. NULL is fine. */
void ncl_mmio_fini(ncl_mmio *m);

/** The HAL for ncl_comm_create (valid while m is). */
const ncl_hal *ncl_mmio_hal(ncl_mmio *m);

/** The last error the backend reported in the running or last collective (also logged, and
 *  added by the engine to ncl_comm_last_error), "" if none. */
const char *ncl_mmio_last_error(const ncl_mmio *m);

/** Where peers' RECV is when this rank's own launch binds none (reduce non-roots: the engine
 *  passes no recvbuf there): the device address every rank passes as recvbuf. Stays until
 *  changed; 0 = unknown (a WRITE into a peer's RECV then fails with NCL_ERR_BACKEND). */
void ncl_mmio_set_peer_recv(ncl_mmio *m, uint64_t dev_addr);

/** Counters, for tests and bring-up logs. */
typedef struct ncl_mmio_stats {
    uint64_t descriptors;     /**< ring descriptors posted */
    uint64_t doorbells;
    uint64_t controller_ops;  /**< tasks run on the controller (LOCAL_DIV, unsupported reduces) */
    uint64_t irq_waits;       /**< wait_irq calls */
    uint64_t polls;           /**< poll calls */
    uint64_t ring_full_waits; /**< submissions that found the ring full and waited for a slot */
    uint64_t errors;          /**< block errors handled (each followed by a soft reset) */
    uint64_t bringups;        /**< bring-up sequences run (init + recoveries) */
    uint64_t opcodes[8];      /**< descriptors posted per opcode (NCL_MMIO_OPC_*) */
} ncl_mmio_stats;

void ncl_mmio_get_stats(const ncl_mmio *m, ncl_mmio_stats *out);

/** The backend's ops table (ctx: the backend's own, reached through ncl_mmio_hal). */
extern const ncl_hal_ops ncl_mmio_hal_ops;

#ifdef __cplusplus
}
#endif
#endif
