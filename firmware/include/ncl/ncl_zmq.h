/* ncl_zmq.h — the zmq backend: one process per rank, tasks travel as ncl_wire messages over ZeroMQ. */
#ifndef NCL_ZMQ_H
#define NCL_ZMQ_H

#include <stddef.h>
#include <stdint.h>

#include "ncl_hal.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Sockets: every rank binds one ROUTER at its own endpoint and connects one DEALER to every
 * peer's endpoint, with routing id "r<rank>", so the receiver knows which link a frame came on
 * from ZeroMQ itself (never from the frame's bytes: a corrupted frame still names its link).
 * A DEALER -> ROUTER connection is FIFO, which gives the ordering the engine needs: a rank's
 * NOTIFY to a peer always arrives after the WRITEs it sent that peer before it.
 *
 * Shared memory: two ranks on one host (their boot ids match and one can map the other's memfd)
 * move WRITE / WRITE_REDUCE / NOTIFY through a ring per (writer, reader) pair instead: the same
 * checksummed frames, written once by the sender and reduced by the receiver straight from the
 * mapping; ZeroMQ keeps HELLO, ERROR, ABORT, BYE, the ring offer and doorbells, and the connection
 * whose drop tells a death. A frame on ZeroMQ is applied only after the ring from the same peer
 * was drained, so the link stays FIFO. NCL_ZMQ_SHM=off keeps every peer on ZeroMQ;
 * NCL_ZMQ_SHM_BYTES (ring size) and NCL_ZMQ_SPIN_US (how long a wait polls the rings before it
 * sleeps) tune it (sim/zmq/ZMQ.md, "Shared memory").
 *
 * No receive thread: incoming frames are applied by the rank's own thread inside the HAL ops
 * (notify_try_wait drains when a counter is short, wait_event polls and drains), so buffers,
 * counters and sockets have one owner and need no locks. A peer's data lands when this rank next
 * progresses, which it does whenever it waits for anything; in between ZeroMQ queues it.
 *
 * Failures: a frame that fails ncl_wire_decode (checksum, form), comes before HELLO, or an ERROR
 * from the peer breaks that link: every later op returns NCL_ERR_LINK and ncl_zmq_last_error()
 * names the peer. A peer whose connection drops without a BYE before it is dead (after a short
 * grace of 0.5 s for its last frames): waits and writes fail with NCL_ERR_REMOTE naming it, long before
 * the engine's timeout. A peer that sent BYE left in order; only a wait on it fails.
 *
 * Mismatch: every NOTIFY carries the sender's collective call number and kind (NCL_WIRE_CAP_COLL);
 * a rank that sees a peer in its own call number with another collective fails at once with
 * NCL_ERR_REMOTE ("mismatch: rank 2 called broadcast #7 while this rank (0) called allreduce #7").
 *
 * Abort: a rank whose collective fails for a reason of its own (mismatch, corrupt link, dead peer,
 * timeout, a local error) sends ABORT with the reason to every peer; a peer fails its current (or
 * next) collective at once with NCL_ERR_REMOTE ("rank 0 aborted allreduce #7: <reason>"). Failures
 * that came from a peer (its ABORT or ERROR) are not echoed. After any failure the backend stays
 * broken (ncl_zmq_status() != NCL_SUCCESS, every collective fails at once with the first failure's
 * message) until it is destroyed: as with HCCL/NCCL, destroy the communicator and the backend and
 * create both again (every rank).
 */

#define NCL_ZMQ_CONFIG_VERSION 2u
#define NCL_ZMQ_MAX_RANKS 1024

typedef struct ncl_zmq_config {
    uint32_t size;                /**< sizeof(ncl_zmq_config) */
    uint32_t version;             /**< NCL_ZMQ_CONFIG_VERSION */
    int nranks, rank;
    /** nranks data endpoints ("ipc://@name", "ipc:///path", "tcp://host:port"); this rank binds
     *  endpoints[rank] (a tcp host that is not an address of this machine: every interface, same
     *  port) and connects the others.
     *  Copied at creation. */
    const char *const *endpoints;
    uint64_t scratch_bytes;       /**< NCL_BUF_SCRATCH (default 4 MiB) */
    uint64_t connect_timeout_ns;  /**< limit of the HELLO exchange with every peer (default 30 s) */
    uint32_t max_payload;         /**< largest frame payload accepted; WRITEs are cut to it (default 4 MiB) */
    /** Test hooks (0: off): flip one byte of the Nth data frame (WRITE, WRITE_REDUCE, NOTIFY)
     *  this rank sends; kill this process with SIGKILL right after sending the Nth data frame. */
    uint64_t fault_corrupt_nth;
    uint64_t fault_die_nth;
    /** The backend's diagnostics, as ncl_config's (pass the same to both): messages up to
     *  log_level (default NCL_LOG_WARN; NCL_LOG_OFF: none) go to log(log_ud, rank, level, text)
     *  or, with log NULL, to stderr. NCL_ZMQ_LOG (debug, info, warn, error, off), when set,
     *  overrides log_level. */
    ncl_log_fn log;
    void *log_ud;
    int log_level;
} ncl_zmq_config;

#define NCL_ZMQ_CONFIG_INIT                                                                      \
    {                                                                                            \
        sizeof(ncl_zmq_config), NCL_ZMQ_CONFIG_VERSION, 1, 0, NULL, (4ull << 20), 30000000000ull, \
            (4u << 20), 0, 0, NULL, NULL, NCL_LOG_WARN                                           \
    }

typedef struct ncl_zmq ncl_zmq;

/** Per-link statistics (ncl_zmq_link_stats). */
typedef struct ncl_zmq_link {
    uint64_t frames_tx, bytes_tx, frames_rx, bytes_rx;
    int hello_done;   /**< HELLO and HELLO_ACK exchanged */
    int state;        /**< 0 up, 1 left (BYE), 2 dead (dropped without BYE), 3 broken (bad frame / ERROR) */
    int shm_tx;       /**< 1: our data to the peer goes through a shared-memory ring */
    int shm_rx;       /**< 1: the peer's data to us comes through a shared-memory ring */
} ncl_zmq_link;

/** Binds, connects to every peer and exchanges HELLO with each (version, max payload, rank
 *  count, capabilities) within cfg->connect_timeout_ns. On failure returns an error and writes
 *  one line to err naming the ranks and endpoints that did not answer or disagreed.
 *  With glibc it also fixes the process's malloc mmap threshold at 32 MiB and its trim threshold
 *  at 512 MiB (mallopt), so frame buffers are reused warm heap memory instead of a fresh mmap
 *  each (page faults were half the time of a large allreduce; see sim/zmq/ZMQ.md, "Speed"). */
ncl_result ncl_zmq_create(ncl_zmq **out, const ncl_zmq_config *cfg, char *err, size_t errlen);
/** Sends BYE to every live peer, flushes (bounded) and closes. NULL is fine. */
void ncl_zmq_destroy(ncl_zmq *z);
/** The HAL to pass to ncl_comm_create (valid while z is). */
const ncl_hal *ncl_zmq_hal(ncl_zmq *z);
/** The first failure the backend saw, naming the peer ("" if none). */
const char *ncl_zmq_last_error(const ncl_zmq *z);
/** NCL_SUCCESS while healthy; else the failure that broke this backend for good (the first link
 *  failure, mismatch, failed collective, ABORT from a peer or ncl_zmq_abort); its text is
 *  ncl_zmq_last_error(). Every later collective on it fails at once. */
ncl_result ncl_zmq_status(const ncl_zmq *z);
/** The rank whose ABORT broke this backend (the origin of a job-wide failure), or -1. */
int ncl_zmq_abort_origin(const ncl_zmq *z);
/** Like ncclCommAbort: breaks this rank's backend (the running and every later collective fail with
 *  NCL_ERR_INVALID_USAGE) and sends ABORT with `reason` to every peer, whose current or next
 *  collective fails with NCL_ERR_REMOTE naming this rank and the reason. Never blocks; call it from
 *  the rank's own thread (the backend has one owner and no locks). */
void ncl_zmq_abort(ncl_zmq *z, const char *reason);
/** The lowest rank known dead (dropped without BYE), or -1. */
int ncl_zmq_dead_rank(ncl_zmq *z);
/** Statistics of the link with `peer` (0 on success, -1 if peer is out of range). */
int ncl_zmq_link_stats(const ncl_zmq *z, int peer, ncl_zmq_link *out);
/** Counter (sender, id) as it stands (for diagnostics). */
uint32_t ncl_zmq_counter(const ncl_zmq *z, int sender, uint32_t id);
/** State names for ncl_zmq_link.state. */
const char *ncl_zmq_link_state_name(int state);

extern const ncl_hal_ops ncl_zmq_hal_ops;

#ifdef __cplusplus
}
#endif
#endif
