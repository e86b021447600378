/* rs_board.h — an emulated board for `ringsim agent --backend mmio`: a verilated rs_dev block whose link port is carried to the peer agents' blocks over ZeroMQ. */
#ifndef RS_BOARD_H
#define RS_BOARD_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "ncl/ncl_mmio.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * One rs_board is one rank's "board": the block (rs_dev_rtl), the memory behind its memory port
 * (a plain array the agent also reads and writes directly, as a board's mapped device memory),
 * and its link port carried over ZeroMQ (sim/zmq/ZMQ.md, "Agents on the mmio backend"): a transfer
 * the block sends (header + data beats) travels whole as one LINK message to the peer agent,
 * whose board feeds it to its block's RX port beat by beat; that block's ack comes back as
 * LINK_ACK and is given to the sender's block. The block is clocked only inside the access
 * functions (register accesses, wait for IRQ) and rs_board_service: single-threaded, no locks.
 */

typedef struct rs_board rs_board;

typedef struct rs_board_config {
    int rank, nranks;
    const char *const *endpoints;   /**< every rank's link endpoint (the rank table's) */
    uint64_t mem_bytes;             /**< device memory behind the block (multiple of 4) */
    uint64_t connect_timeout_ns;    /**< limit of the HELLO exchange with every peer */
    uint64_t fault_die_nth;         /**< test hook: SIGKILL this process after its Nth LINK sent (0: off) */
    uint64_t fault_corrupt_nth;     /**< test hook: flip a bit of its Nth LINK frame on the wire (0: off) */
    const volatile sig_atomic_t *stop; /**< set by a signal: the HELLO exchange gives up (may be NULL) */
} rs_board_config;

/** Device memory layout every board uses (symmetric: every rank's buffers at the same addresses). */
#define RS_BOARD_RING_AT 0x1000ull        /**< descriptor ring (256 x 32 bytes) */
#define RS_BOARD_BARRIER_AT 0x3000ull     /**< 64 bytes for the agent's 1-element barrier allreduce */
#define RS_BOARD_MAP_AT 0x3400ull         /**< the backend's counter map (NCL_MMIO_MAP_BYTES) */
#define RS_BOARD_LAUNCH_AT 0x4000ull      /**< the backend's launch mailbox (64 bytes per rank and context) */
#define RS_BOARD_CONTEXTS 4u              /**< sub-communicators at once (ncl_send's pairs among them) */
#define RS_BOARD_SCRATCH_AT 0x10000ull    /**< NCL_BUF_SCRATCH: a part per communicator (contexts + 1) */
#define RS_BOARD_SCRATCH_BYTES ((8ull << 20) - RS_BOARD_SCRATCH_AT)
#define RS_BOARD_HEAP_AT (8ull << 20)     /**< user buffers (RUN's send/recv, bring-up's) from here */

/** Resets the block, binds this rank's endpoint, connects to every peer and exchanges HELLO
 *  (capability LINK). 0, or -1 with the reason in err. */
int rs_board_create(rs_board **out, const rs_board_config *cfg, char *err, size_t errlen);
/** Says BYE to the peers and frees everything. NULL is fine. */
void rs_board_destroy(rs_board *b);

/** The access functions for ncl_mmio_init (interrupt mode; now_ns is the real monotonic clock). */
void rs_board_access(rs_board *b, ncl_mmio_access *out);

/** This rank's collective failed (code, why): ABORT to every peer, once, so their waits fail now
 *  with "rank R aborted: why" (ncl_mmio_access.peer_check) instead of at their timeouts. Not sent
 *  when this board heard an ABORT first (the peers heard it too). */
void rs_board_abort(rs_board *b, int code, const char *why);

/** Device memory, as the controller sees it mapped: address a is rs_board_mem(b) + a. */
uint8_t *rs_board_mem(rs_board *b);
uint64_t rs_board_mem_bytes(const rs_board *b);

/** The ZeroMQ socket peers' link traffic arrives on (poll it for ZMQ_POLLIN between commands). */
void *rs_board_socket(rs_board *b);
/** Takes in what arrived and runs the block until its link side is quiet (a peer may write or
 *  notify while this rank is between commands). Never waits for anything that has not arrived. */
void rs_board_service(rs_board *b);

typedef struct rs_board_link {
    uint64_t tx, tx_bytes, rx, rx_bytes; /**< transfers and payload bytes to / from this peer */
    int up;                              /**< HELLO done and no BYE / disconnect seen */
} rs_board_link;

/** Per-peer link counters; -1 for peer == rank or out of range. */
int rs_board_link_stats(const rs_board *b, int peer, rs_board_link *out);
/** Cycles the block has been clocked. */
uint64_t rs_board_cycles(const rs_board *b);
/** The first peer that left without BYE or sent a broken frame, -1 if none. */
int rs_board_dead_rank(const rs_board *b);
/** What went wrong on the link (a rejected frame, a lost peer), "" if nothing. */
const char *rs_board_last_error(const rs_board *b);

#ifdef __cplusplus
}
#endif
#endif
