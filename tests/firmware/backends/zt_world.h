/* zt_world.h — ranks as forked processes joined by the zmq backend: the correctness matrix's zmq world, and one function per rank for the fault tests (tests only). */
#ifndef ZT_WORLD_H
#define ZT_WORLD_H

#include <stddef.h>
#include <stdint.h>

#include "matrix.h"
#include "ncl/ncl.h"
#include "ncl/ncl_zmq.h"

#define ZT_MAX_RANKS 8
#define ZT_MSG 1024

/** What one rank's function gets. It returns its exit status (0: fine) and may write a message. */
typedef struct zt_rank {
    int rank, nranks;
    ncl_comm *comm;
    ncl_zmq *zmq;
    void *arg;
    char msg[ZT_MSG];
} zt_rank;

typedef int (*zt_fn)(zt_rank *r);

/** What each rank ended with. */
typedef struct zt_result {
    int exited;       /**< 1: exited normally with `status`; 0: killed by `signal` */
    int status, signal;
    char msg[ZT_MSG]; /**< the rank's message, or the create error */
} zt_result;

typedef struct zt_world {
    int nranks;
    int tcp;                        /**< 0: ipc://@..., 1: tcp://127.0.0.1:<free port> */
    uint64_t timeout_ns;            /**< engine timeout (0: 10 s) */
    uint64_t connect_timeout_ns;    /**< HELLO limit (0: 10 s) */
    uint32_t max_payload;           /**< 0: the backend's default */
    uint64_t corrupt_nth[ZT_MAX_RANKS], die_nth[ZT_MAX_RANKS];
    int absent[ZT_MAX_RANKS];       /**< 1: this rank is not started */
    int wide;                       /**< 1: ncl_config.deterministic and wide_accumulation */
} zt_world;

/** Forks w->nranks processes, each creating its backend + communicator and running fn; waits
 *  for all (killing the rest after 60 s). Returns the wall time in seconds. */
double zt_run(const zt_world *w, zt_fn fn, void *arg, zt_result *res);

/** Runs case c on r's communicator (its algorithm forced, AUTO unforced) with the matrix's
 *  rank-side helpers: 0 when it passed, else 1 with the engine's error in *rc (NCL_SUCCESS: it ran
 *  and *wrong elements differ) and what went wrong in what[len] (an engine error: the
 *  communicator's and the backend's last errors). */
int zt_case(zt_rank *r, const mx_case *c, ncl_result *rc, uint64_t *wrong, char *what, size_t len);

/** The matrix's zmq world: cfg's rank processes run the cases in order, each reporting every case
 *  to the parent through shared memory. A rank stops at its first engine error (the backend is
 *  broken from then on): the cases after it are not run. */
typedef struct zt_mx_world {
    mx_world world;
    zt_world cfg;
    char name[48];
} zt_mx_world;

/** z->world over cfg's processes, named after the transport ("zmq ipc", "zmq tcp", "zmq ipc
 *  4096-byte frames"). */
void zt_mx_init(zt_mx_world *z, const zt_world *cfg);

#endif
