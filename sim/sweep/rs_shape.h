/* rs_shape.h — one row of a sweep on one rank, by nccl-tests' rules: counts and buffer sizes, where in-place buffers point, the input, the poisoned output, the expected result, the call and its bit-exact check. */
#ifndef RS_SHAPE_H
#define RS_SHAPE_H

#include <stdint.h>

#include "ncl/ncl.h"
#include "rs_sweep.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Byte every result buffer holds before a checked run: results never written show up as #wrong. */
#define RS_SHAPE_POISON 0xa5

/** A collective of a given size on nranks ranks. */
typedef struct rs_shape {
    ncl_coll coll;
    ncl_dtype dt;
    ncl_op op;              /**< the reduction; NCL_MAX for broadcast, allgather and alltoall (what their
                                 inputs and checks use: any bits of the type) */
    int root;               /**< broadcast and reduce; 0 otherwise */
    int nranks;
    uint64_t es;            /**< element size, bytes */
    uint64_t count;         /**< the API's count (per rank for reduce_scatter and allgather, per peer for
                                 alltoall) */
    uint64_t send_elems;    /**< the send buffer out of place */
    uint64_t recv_elems;    /**< the receive buffer */
    uint64_t result_elems;  /**< the whole expected result (every rank's part for reduce_scatter and
                                 alltoall: rank r's at r * recv_elems) */
    uint64_t size;          /**< bytes, as the table's size column prints them */
    /** alltoallv (rs_shape_make_a2av): blocks of count x (1 + skew (w - 4) / 4) elements, w = 0 .. 8
     *  per pair by rs_shape_a2av_len's fixed pattern (symmetric, so in place works too; at skew 1
     *  some blocks are empty); send_elems and recv_elems are then the largest rank's, result_elems
     *  the matrix's sum. */
    int a2av;
    uint32_t a2av_skew;     /**< the skew in thousandths, 0 .. 1000 */
    /** sendrecv (coll: broadcast, what each pair runs): every rank sends its count elements to
     *  rank + 1 and receives rank - 1's (nccl-tests' ring shift); the result is every rank's part,
     *  rank r's at r * count. Out of place only: a buffer sent while the predecessor writes into it
     *  would pass on what landed. */
    int sendrecv;
} rs_shape;

/** 1 for allreduce, reduce and reduce_scatter; 1 for broadcast and reduce (rooted). coll: an rs_coll,
 *  or an ncl_coll (the same values). */
int rs_shape_reduces(int coll);
int rs_shape_rooted(int coll);
/** 1 where the API's count is one rank's share of the table's size (nranks counts): reduce_scatter,
 *  allgather, alltoall(v). */
int rs_shape_per_rank(int coll);

/** The shape of `bytes` of coll (op, root and alltoallv's skew, 0..1, are ignored where they do
 *  not apply). 0 when it has no element to move (nccl-tests skips such sizes), else 1. */
int rs_shape_make(rs_shape *s, rs_coll coll, int nranks, ncl_dtype dt, ncl_op op, int root, double skew,
                  uint64_t bytes);

/** alltoallv's shape: alltoall's (count = the mean block of `bytes` / nranks) over a matrix whose
 *  blocks spread over (1 - skew) .. (1 + skew) x count (skew 0..1; 0: alltoall's blocks); 0 when
 *  it has no element to move. */
int rs_shape_make_a2av(rs_shape *s, int nranks, ncl_dtype dt, double skew, uint64_t bytes);
/** The count the engine plans the call with: alltoallv's largest block, else count. */
uint64_t rs_shape_plan_count(const rs_shape *s);
/** Its blocks: elements rank `from` sends rank `to`. */
uint64_t rs_shape_a2av_len(const rs_shape *s, int from, int to);
/** The whole matrix, as ncl_alltoallv takes it (kept for the process's life; thread-safe). */
const uint64_t *rs_shape_a2av_counts(const rs_shape *s);

/** Bytes the buffer `a` of rs_shape_place must hold (in place it holds both) and buffer `b`. */
uint64_t rs_shape_a_bytes(const rs_shape *s);
uint64_t rs_shape_b_bytes(const rs_shape *s);

/** Where rank's call points: out of place send = a, recv = b; in place (NCCL's rules) both in a:
 *  reduce_scatter's result on the rank's block of its input, allgather's input on its block of
 *  the result, otherwise the same buffer. */
void rs_shape_place(const rs_shape *s, int rank, unsigned char *a, unsigned char *b, int inplace,
                    const void **send, void **recv);

/** Elements of rank's input (0 for broadcast's non-roots). */
uint64_t rs_shape_input_elems(const rs_shape *s, int rank);

/** Writes rank's input at send (rs_data_fill with the row's seed). */
void rs_shape_input(const rs_shape *s, int rank, uint64_t seed, void *send);

/** Poisons the receive buffer wherever the input (rs_shape_input_elems at send) does not lie. */
void rs_shape_poison(const rs_shape *s, int rank, const void *send, void *recv);

/** rs_shape_input, then rs_shape_poison: rank ready to run a checked row. */
void rs_shape_prepare(const rs_shape *s, int rank, uint64_t seed, const void *send, void *recv);

/** Elements [lo, hi) of the whole expected result, generated from the seed (any slice on its own). */
void rs_shape_expected(const rs_shape *s, uint64_t seed, uint64_t lo, uint64_t hi, void *out);

/** The same from the ranks' inputs as they lie in memory (inputs[r]: rank r's send buffer, out of
 *  place), with the engine's arithmetic: faster than generating them again. */
void rs_shape_expected_from(const rs_shape *s, const void *const *inputs, uint64_t lo, uint64_t hi, void *out);

/** The slice [*lo, *hi) of the whole result that rank's check reads (empty for reduce's non-roots). */
void rs_shape_checked(const rs_shape *s, int rank, uint64_t *lo, uint64_t *hi);

/** Mismatched elements of rank's result at recv against the whole expected result (0 for reduce's
 *  non-roots, which receive nothing); only the slice rs_shape_checked names is read. */
uint64_t rs_shape_count_wrong(const rs_shape *s, int rank, const void *recv, const void *expected);

/** The collective call itself (sendrecv: both transfers started, then both waited for). */
ncl_result rs_shape_call(const rs_shape *s, const void *send, void *recv, ncl_comm *comm);

/** Its non-blocking twin (ncl_*_start), for callers that drive ncl_test themselves; not sendrecv,
 *  two transfers for the caller to start and drive. */
ncl_result rs_shape_start(const rs_shape *s, const void *send, void *recv, ncl_comm *comm);

#ifdef __cplusplus
}
#endif
#endif
