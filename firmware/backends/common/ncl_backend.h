/* ncl_backend.h — what every HAL backend repeats: the buffers a launch binds, checked regions of them, the CPU runner of data tasks, log-level names. */
#ifndef NCL_BACKEND_H
#define NCL_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "ncl/ncl_hal.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Firmware rules (no stdio, no allocation, no globals): the register-level backend links this
 * on boards. Messages go into the caller's buffer, without the rank or task: each backend says
 * where it happened in its own words ("dst on rank 2: RECV[0..+64) is out of bounds ...").
 */

/* ---- the bound buffers of a launch ---------------------------------------------------------- */

/** The buffers a collective binds on one rank (between the HAL's begin and end), by address: a
 *  pointer's value on a backend whose tasks run on the CPU, a device address on one whose DMA
 *  does (mmio). */
typedef struct ncl_bk_bufs {
    uint64_t base[NCL_BUF_COUNT]; /**< address of each buffer, 0: none */
    uint64_t size[NCL_BUF_COUNT]; /**< its bound size in bytes */
    int bound;                    /**< 1 while a collective runs */
    /** 1: buffers may have no address (a backend that moves no bytes, such as a timing-only
     *  model): a region of one resolves to address 0 instead of failing. Kept by bind/unbind. */
    int addressless;
    /** 1: SCRATCH stays bound between collectives (ncl_bk_keep_scratch; NCL_HAL_FEAT_ZONES). */
    int scratch_kept;
} ncl_bk_bufs;

/** Binds SCRATCH for the rank's lifetime, before any collective and across them, so that peers
 *  may write its landing zones at any time; bind and unbind leave it. */
void ncl_bk_keep_scratch(ncl_bk_bufs *b, uint64_t scratch, uint64_t scratch_bytes);

/** Binds a launch's buffers: SEND and RECV from l (size 0 where the pointer is NULL: a reduce
 *  non-root's recv), SCRATCH at `scratch` (scratch_bytes). */
void ncl_bk_bind(ncl_bk_bufs *b, const ncl_hal_launch *l, uint64_t scratch, uint64_t scratch_bytes);
/** Unbinds them: every later region fails until the next bind (but a kept SCRATCH's). */
void ncl_bk_unbind(ncl_bk_bufs *b);

/** Resolves `bytes` at `ref` of the bound buffers to an address: the buffer exists, a collective
 *  is running, SEND is never written, the region lies inside the bound size, has an address (or
 *  the buffers are addressless) and does not wrap. Returns 1 and sets *addr, or 0 with the
 *  reason in why (e.g. "RECV[64..+32) is out of bounds (bound size 64)"). */
int ncl_bk_region(const ncl_bk_bufs *b, ncl_ref ref, uint64_t bytes, int write, uint64_t *addr, char *why,
                  size_t why_len);

/** An address as a CPU pointer (backends whose buffers are the process's memory). */
static inline unsigned char *ncl_bk_ptr(uint64_t addr)
{
    return (unsigned char *)(uintptr_t)addr;
}

/* ---- the caps of a backend whose tasks run on the CPU ------------------------------------------ */

/** Caps of a CPU-run backend: every queue, any alignment, every dtype and op reduced inline but
 *  those no_inline_ops lists per dtype (NULL: none), the wide and two-source kinds, scratch kept
 *  (landing zones). The caller sets the rest (queue depth, DMA engines). */
void ncl_bk_cpu_caps(uint64_t scratch_bytes, const uint16_t *no_inline_ops, uint32_t inline_align,
                     ncl_hal_caps *out);

/* ---- the CPU runner of data tasks ------------------------------------------------------------ */

/** Whether a CPU can run the data task t: a data kind (WRITE*, LOCAL_*), a known dtype and op
 *  for the reduce kinds (op < NCL_AVG: avg reduces as sum), a known dtype, whole elements and a
 *  divisor for LOCAL_DIV, fp16/bf16 and whole elements for the wide kinds. 1, or 0 with why. */
int ncl_bk_task_ok(const ncl_task *t, char *why, size_t why_len);

/** Runs the data of task t (ncl_bk_task_ok) on memory: dst <- src for WRITE and LOCAL_COPY
 *  (overlapping like memmove), dst <- dst op src for WRITE_REDUCE and LOCAL_REDUCE, dst /= count
 *  for LOCAL_DIV (src unused), and the wide kinds; dst and src hold ncl_task_dst_bytes and
 *  ncl_task_src_bytes. 0 with why when a reduce's source and destination partially overlap. */
int ncl_bk_run(const ncl_task *t, void *dst, const void *src, char *why, size_t why_len);

/** Runs a two-source task (REDUCE_WRITE: dst <- src op src2; REDUCE_WRITE_REDUCE: dst <- dst op
 *  (src op src2)) on memory, each t->bytes long; dst may equal a source but not partly overlap
 *  one (0 with why). ncl_bk_run refuses these kinds. */
int ncl_bk_run_pair(const ncl_task *t, void *dst, const void *src, const void *src2, char *why, size_t why_len);

/* ---- log levels -------------------------------------------------------------------------------- */

/** "error", "warn", "info", "debug" for NCL_LOG_*; "?" otherwise. */
const char *ncl_bk_log_level_name(int level);

/** A log level from a word, case-insensitively: debug (or all), info, warn (or warning), error,
 *  off (or none, 0: -1, nothing is logged). Returns 0 and sets *level, or -1 for anything else. */
int ncl_bk_log_level_parse(const char *text, int *level);

#ifdef __cplusplus
}
#endif
#endif
