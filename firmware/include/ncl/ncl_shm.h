/* ncl_shm.h — the shared-memory HAL backend: ranks on the cores of one chip (or harts of one SoC)
 * that all see one memory. A "DMA" task is the core's own copy or reduce, done at submission; a
 * notify is an atomic counter in the receiver's slot of the shared world, added with release
 * order after the writes it announces and read with acquire order. Firmware rules: no C library,
 * no allocation, no globals; the board gives the memory and a clock. */
#ifndef NCL_SHM_H
#define NCL_SHM_H

#include "ncl/ncl_hal.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Bytes of the shared world of `nranks` ranks (each rank's bound buffers and its counters). */
uint64_t ncl_shm_world_bytes(int nranks);

/** Clears the world at `mem` (ncl_shm_world_bytes, 8-byte aligned, seen by every core) for
 *  `nranks` ranks. One core, before any rank starts. */
ncl_result ncl_shm_world_init(void *mem, uint64_t bytes, int nranks);

/** What the board gives each rank: its clock, and optionally a way to sleep instead of polling.
 *  With idle and kick the engine's waits sleep: idle(ctx, timeout_ns) returns after a kick from
 *  a peer, the timeout, or earlier (spurious returns are fine: the engine looks again); a rank
 *  kicks a peer (kick(ctx, peer)) after every notify it adds there. A kick that comes before the
 *  sleep must not be lost (an inter-core interrupt left pending does that: `wfi` returns at once).
 *  Without them the engine polls. */
typedef struct ncl_shm_board {
    uint64_t (*now_ns)(void *ctx); /**< monotonic time in ns; required */
    void *ctx;
    void (*idle)(void *ctx, uint64_t timeout_ns); /**< optional, with kick */
    void (*kick)(void *ctx, int peer);            /**< optional, with idle */
} ncl_shm_board;

/** One rank's backend state, in its core's own memory (fields private). */
typedef struct ncl_shm {
    void *world;
    int rank, nranks;
    ncl_shm_board board;
    uint32_t done[NCL_MAX_QUEUES]; /* tasks submitted and finished that dma_poll has not reported */
    uint64_t tasks;                /* data tasks run so far */
    char err[160];
} ncl_shm;

/** Rank `rank` of the world: its scratch (every rank the same size; landing zones live there, so
 *  it stays bound for good) and its board's clock. Fills *hal for ncl_comm_create. Call
 *  on every rank before any rank creates its communicator (peers may write a rank's scratch from
 *  then on). */
ncl_result ncl_shm_init(ncl_shm *s, void *world, int rank, void *scratch, uint64_t scratch_bytes,
                        const ncl_shm_board *board, ncl_hal *hal);

/** Data tasks this rank has run (for instructions-per-task figures). */
uint64_t ncl_shm_tasks(const ncl_shm *s);

#ifdef __cplusplus
}
#endif

#endif
