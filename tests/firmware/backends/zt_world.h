/* zt_world.h — runs one function per rank in forked processes joined by the zmq backend (tests only). */
#ifndef ZT_WORLD_H
#define ZT_WORLD_H

#include <stddef.h>
#include <stdint.h>

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

/** Checks `coll` once on r's communicator with rs_data inputs; returns #wrong, or -1 on an engine
 *  error (its text in r->msg). */
int64_t zt_check(zt_rank *r, ncl_coll coll, ncl_dtype dt, ncl_op op, uint64_t count, int inplace, int root);

#endif
