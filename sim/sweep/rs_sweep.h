/* rs_sweep.h — what a run measures: collectives x dtypes x ops x sizes on N ranks, and the program's exit statuses. */
#ifndef RS_SWEEP_H
#define RS_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "ncl/ncl.h"
#include "ncl/ncl_names.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RS_MAX_RANKS 1024
/* Exit statuses of the program. */
#define RS_EXIT_OK 0
#define RS_EXIT_WRONG 1   /* some result was wrong */
#define RS_EXIT_USAGE 2   /* bad command line or an output file that cannot be written */
#define RS_EXIT_ENGINE 3  /* the engine returned an error (timeout, ...) */

/** A table's collective: one of the engine's (the ncl_coll values); alltoallv, ncl_alltoallv over
 *  a skewed count matrix (rs_shape_make_a2av), a table of its own beside alltoall's; or sendrecv,
 *  nccl-tests' ring shift (every rank sends to rank + 1 and receives from rank - 1 at once,
 *  ncl_send_start / ncl_recv_start: on the engine a broadcast on each pair's communicator). */
typedef enum rs_coll { RS_COLL_ALLTOALLV = NCL_COLL_COUNT, RS_COLL_SENDRECV, RS_COLL_COUNT } rs_coll;

/** The names past the engine's collectives ({"alltoallv", RS_COLL_ALLTOALLV}, ...), for parsers
 *  and allowed-lists that take the engine's table and these. */
#define RS_COLL_EXTRA_COUNT 2
extern const ncl_name rs_coll_extra_names[RS_COLL_EXTRA_COUNT];

/** The engine's collective that runs c (alltoallv: alltoall, whose algorithms run it; sendrecv:
 *  broadcast, each pair's transfer). */
ncl_coll rs_coll_engine(rs_coll c);
/** The engine's name of c, or an extra's ("alltoallv", "sendrecv"); "?" out of range. */
const char *rs_coll_name(rs_coll c);
/** An engine collective's name or alias, or an extra's: 0 and *out, else -1. */
int rs_coll_parse(const char *text, rs_coll *out);

/** alltoallv's default skew: its blocks spread over 0 .. 2x the mean (rs_shape_make_a2av). */
#define RS_A2AV_SKEW_DEFAULT 1.0

/** Where the ranks run. */
typedef enum rs_backend { RS_BACKEND_HOST = 0, RS_BACKEND_SIM, RS_BACKEND_ZMQ } rs_backend;

/** One nccl-tests-style sweep: every collective, dtype and op over the sizes minbytes..maxbytes,
 *  each row checked (check) and timed (iters after warmup_iters) on nranks ranks. The host,
 *  model and zmq runs, the report and the JSON all speak it. */
typedef struct rs_sweep {
    rs_backend backend;
    uint64_t minbytes, maxbytes;
    uint64_t stepfactor;      /**< > 1: multiply sizes by it; 0: add stepbytes instead */
    uint64_t stepbytes;
    int iters, warmup_iters;
    int check;
    int nops;
    ncl_op ops[NCL_OP_COUNT];
    int ndtypes;
    ncl_dtype dtypes[NCL_DTYPE_COUNT];
    int ncolls;
    rs_coll colls[RS_COLL_COUNT];
    double a2av_skew;         /**< alltoallv's blocks: (1 - skew) .. (1 + skew) x the mean, 0..1 */
    int root;
    int nranks;
    ncl_algo algo;
    uint32_t channels;
    double timeout_s;         /**< 0: the engine's default */
    uint64_t seed;
    int memprobe;             /**< measure single-thread memcpy beside each row (host) */
    int deterministic;        /**< host: ncl_config.deterministic (a scenario's workload key) */
    int wide_accumulation;    /**< host: ncl_config.wide_accumulation (likewise) */
} rs_sweep;

/** Fills s with the defaults (allreduce + broadcast, 8 host ranks, float, sum, 8 B .. 16 MiB x2). */
void rs_sweep_defaults(rs_sweep *s);

/** The sweep's size after `size` (-f multiplies, else -i adds) in *next; 0 when `size` was the
 *  last one (the next would pass maxbytes or overflow). */
int rs_sweep_next_size(const rs_sweep *s, uint64_t size, uint64_t *next);

/** The sweep's sizes, minbytes first, in a new array (*out, free it) of *n. -1 with one line in
 *  why when there are more than max (a typo such as -i 1 with a large -e, not a benchmark) or
 *  memory runs out. */
int rs_sweep_sizes(const rs_sweep *s, size_t max, uint64_t **out, size_t *n, char *why, size_t whylen);

/** "host", "sim" or "zmq". */
const char *rs_backend_name(rs_backend b);

#ifdef __cplusplus
}
#endif
#endif
