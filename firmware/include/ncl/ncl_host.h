/* ncl_host.h — the host backend: N ranks as threads of one process, real memory.
 *
 * Every task runs on its rank's thread, inside dma_submit. A LOCAL_COPY of SEND into RECV is
 * deferred until something touches its destination: a peer's WRITE_REDUCE into it reduces into
 * SEND's values directly (so the out-of-place ring's fill of its own contribution moves no
 * bytes), any other task copies it first, and whatever is left is copied at end. Later tasks
 * and peers' tasks see it as if copied at once; the program sees RECV whole after end. */
#ifndef NCL_HOST_H
#define NCL_HOST_H

#include "ncl_hal.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The function each rank runs with its own communicator. */
typedef ncl_result (*ncl_host_fn)(ncl_comm *comm, void *arg);

#define NCL_HOST_CONFIG_VERSION 1u

typedef struct ncl_host_config {
    uint32_t size;          /**< sizeof(ncl_host_config) */
    uint32_t version;       /**< NCL_HOST_CONFIG_VERSION */
    int nranks;
    uint64_t scratch_bytes; /**< NCL_BUF_SCRATCH per rank (default 4 MiB) */
    ncl_config comm;        /**< communicator options; alloc/free default to malloc/free */
    /** The DMA's inline reduce, as ncl_hal_caps reports it: ops (bit 1 << op) the host pretends
     *  it cannot reduce inline per dtype (default none: everything inline), and the alignment
     *  inline reduce needs (default 0: any). Tests use them to run the scratch paths. */
    uint16_t no_inline_ops[NCL_DTYPE_COUNT];
    uint32_t inline_align;
    /** When a rank times out or loses a peer, the wait-for report (ncl_diag_report over every
     *  rank's state) is logged as errors and, if this buffer is given, copied here. */
    char *hang_report;
    size_t hang_report_size;
} ncl_host_config;

#define NCL_HOST_CONFIG_INIT                                                              \
    {                                                                                     \
        sizeof(ncl_host_config), NCL_HOST_CONFIG_VERSION, 1, (4ull << 20), NCL_CONFIG_INIT, {0}, 0, NULL, 0 \
    }

/** Runs fn(comm, arg) on nranks threads, each with its own communicator, and waits for all.
 *  Returns NCL_SUCCESS if every rank did, else the result of the lowest failing rank. */
ncl_result ncl_host_run(int nranks, ncl_host_fn fn, void *arg);
/** Same with options; if rank_results is not NULL it receives every rank's result. */
ncl_result ncl_host_run_cfg(const ncl_host_config *cfg, ncl_host_fn fn, void *arg,
                            ncl_result *rank_results);

/** The caps every rank of a host world run with cfg reports (its HAL's caps): for tools that
 *  plan as its communicators will (ncl_plan_env_init) without running one. */
void ncl_host_caps(const ncl_host_config *cfg, ncl_hal_caps *out);

/** Blocks until all ranks of comm's host world call it (outside of collectives, for timing).
 *  Only valid on communicators made by ncl_host_run*. */
ncl_result ncl_host_barrier(ncl_comm *comm);

/** The host backend's ops table, for tests that build communicators by hand. */
extern const ncl_hal_ops ncl_host_hal_ops;

#ifdef __cplusplus
}
#endif
#endif
