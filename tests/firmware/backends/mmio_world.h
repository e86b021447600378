/* mmio_world.h — the correctness matrix's mmio world: N ranks, each the unchanged ncl_mmio backend on its own DMA/notify block, the blocks (C reference or verilated RTL) behind a small ops table. */
#ifndef RS_MMIO_WORLD_H
#define RS_MMIO_WORLD_H

#include <stdint.h>

#include "matrix.h"
#include "ncl/ncl.h"
#include "ncl/ncl_mmio.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Device memory map of every rank (symmetric: every rank passes the same addresses). A case's
 * input lies at SEND (in place: at RECV), its result at RECV; reduce's non-roots learn RECV from
 * ncl_mmio_set_peer_recv. */
#define MMIO_MAXR 4
#define MMIO_MEM_BYTES (4u << 20)
#define MMIO_RING_AT 0x1000u
#define MMIO_LAUNCH_AT 0x8000u /* the launch mailbox: mismatched calls are named (a row per context) */
#define MMIO_MAP_AT 0xC000u    /* the counter map of sub-communicators (mmio_opts.contexts) */
#define MMIO_SCRATCH_AT 0x10000u
#define MMIO_SCRATCH_BYTES (1u << 20)
#define MMIO_SEND_AT 0x200000u
#define MMIO_RECV_AT 0x300000u
#define MMIO_BUF_BYTES (1u << 20)
#define MMIO_BOUNCE_BYTES 4096u
#define MMIO_COMM_TIMEOUT_NS 3000000ull /* the engine's notify timeout: 3 ms simulated */

/** N linked blocks, as the access functions of every rank's backend reach them. `dev` is what
 *  open() returned; ranks are the blocks' link node ids. */
typedef struct mmio_dev_ops {
    const char *name; /**< the world's name in failures */
    long max_rounds;  /**< firmware rounds (every rank's ncl_test, then its wait) before a case hangs */
    void *(*open)(int n); /**< n linked blocks of MMIO_MEM_BYTES each, out of reset */
    void (*close)(void *dev);
    uint32_t (*reg_read)(void *dev, int rank, uint32_t off, int *err);
    int (*reg_write)(void *dev, int rank, uint32_t off, uint32_t v); /**< nonzero: bus error */
    uint8_t *(*mem)(void *dev, int rank); /**< the block's memory image */
    /** The backend's wait_irq / poll hooks (ncl_mmio_access), for rank's block: advance every block
     *  (the ranks share one simulated clock) and return early enough for other ranks' firmware. */
    int (*wait_irq)(void *dev, int rank, uint64_t timeout_ns);
    int (*poll)(void *dev, int rank);
    uint64_t (*now)(void *dev); /**< simulated ns */
    /** After every rank finished: run the blocks until the last records left the rings; 0 if they
     *  never do (a hang). */
    int (*settle)(void *dev);
} mmio_dev_ops;

/** How the ranks' backends and communicators are made; 0 fields take the defaults. */
typedef struct mmio_opts {
    int irq;               /**< interrupt mode (wait_irq), else polled (poll) */
    uint32_t ring_entries; /**< 256 */
    uint32_t max_queues;   /**< 4 */
    uint32_t channels;     /**< 2 */
    uint64_t slice_bytes;  /**< 16 KiB */
    int wide;              /**< deterministic, with wide accumulation */
    uint32_t contexts;     /**< sub-communicators at once (ncl_mmio_config.contexts), 0: none */
} mmio_opts;

typedef struct mmio_world mmio_world;
typedef struct mmio_port {
    mmio_world *w;
    int rank;
} mmio_port;

struct mmio_world {
    mx_world mx; /**< what mx_run runs on: the ranks' communicators as they are */
    const mmio_dev_ops *ops;
    void *dev;
    int n;
    /** nonzero replaces what ID / VERSION / CAPS read (refused bring-ups) */
    uint32_t fake_id, fake_version, fake_caps;
    unsigned bus_errors, mem_faults; /**< register accesses the bus refused, memory copies out of range */
    ncl_mmio *mm[MMIO_MAXR];
    void *mm_mem[MMIO_MAXR];
    unsigned char *bounce[MMIO_MAXR];
    ncl_comm *comm[MMIO_MAXR];
    mmio_port port[MMIO_MAXR];
    unsigned char *input[MMIO_MAXR], *expected; /**< the running case's inputs and result, host side */
};

/** A device address as the API takes it. */
static inline void *mmio_dev_ptr(uint64_t a) { return (void *)(uintptr_t)a; }

/** Blocks only (bring-up tests make the backends); asserts (cmocka) it worked. */
mmio_world *mmio_world_devices(const mmio_dev_ops *ops, int n);
/** Rank r's backend: brought up on its block (again, if it was); what ncl_mmio_init said. */
ncl_result mmio_world_backend(mmio_world *w, int r, const mmio_opts *o);
/** Every rank's communicator on its backend (new ones, if there were). */
ncl_result mmio_world_comms(mmio_world *w, const mmio_opts *o);
/** Blocks, backends, communicators: a world cases run on; asserts it came up. */
mmio_world *mmio_world_new(const mmio_dev_ops *ops, int n, const mmio_opts *o);
void mmio_world_free(mmio_world *w);

/** Every started rank's firmware round-robin (ncl_test), then its wait_event (the hooks advance the
 *  blocks), until every one finished (rc[r]: how); then settles the blocks. 0 if that hung. */
int mmio_world_drive(mmio_world *w, const int *started, ncl_result *rc);

/** The backends' counters summed over the ranks. */
void mmio_world_stats(mmio_world *w, ncl_mmio_stats *s);
/** A register as the block holds it (no fake values), and a place in its memory. */
uint32_t mmio_world_reg(mmio_world *w, int r, uint32_t off);
uint8_t *mmio_world_mem(mmio_world *w, int r, uint64_t a);
/** Asserts (cmocka) rank r's block is brought up as the backend leaves it: enabled, irq or polled,
 *  a clean `entries`-slot ring, no error. */
void mmio_world_check_up(mmio_world *w, int r, int irq, uint32_t entries);

/** The cases every block's world runs: ring allreduce (int32/fp32 sum, fp16 sum on the controller,
 *  counts 1, 7, 1001 and 4099; 4099 only out of place, and only on `big_ranks` ranks unless 0)
 *  and chain broadcast from every root (7 and 1001 elements; odd roots fp16 in place, even roots
 *  int32 out of place), added to m for n ranks. */
void mmio_world_add_allreduce_broadcast(mx_matrix *m, int n, int big_ranks);

/* Error paths every block must take the same way (cmocka test bodies). */
/** A buffer past the end of device memory, in polled and interrupt mode: the block refuses the
 *  descriptor, the backend names it (slot, opcode, address, queue), resets the block, and a new
 *  communicator on the recovered blocks runs a case. Never a hang. */
void mmio_world_test_bad_address(const mmio_dev_ops *ops);
/** Descriptors the block cannot execute, rewritten in the ring behind the backend's back (a record
 *  with a reserved bit, a LOCAL_COPY whose source lies past memory): named by slot, opcode and
 *  address, the block reset, nothing moved. */
void mmio_world_test_bad_descriptor(const mmio_dev_ops *ops);
/** Rank 1 never starts: rank 0's wait for its record times out with the engine's message, within
 *  [timeout, 1.5 x timeout) of simulated time, and its block is reset for reuse. */
void mmio_world_test_silent_peer(const mmio_dev_ops *ops);
/** Rank 1 calls another count, dtype, op or collective than its peers (launch mailbox): no rank
 *  succeeds, and a rank that reads rank 1's record fails with NCL_ERR_REMOTE naming both ranks and
 *  the field ("rank 1 called allreduce #1 with count 500, rank 0 with count 900"); on 4 ranks the
 *  others may time out instead (nothing relays the failure in firmware alone). */
void mmio_world_test_mismatch(const mmio_dev_ops *ops);
/** Sub-communicators on 4 blocks (contexts): two groupings at once (pairs {0,1},{2,3} and
 *  {0,2},{1,3}) allreducing concurrently with each other and the world, bit-exact; a ring shift
 *  of send/recv; a group whose member never calls times out naming the group while the world and
 *  the other group go on, and stays failed; contexts reused after destroy, and refused past
 *  their number with a message saying so. */
void mmio_world_test_groups(const mmio_dev_ops *ops);

#ifdef __cplusplus
}
#endif
#endif
