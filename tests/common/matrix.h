/* matrix.h — the correctness matrix, written once: its cases, the world interface every backend implements, enumeration and accounting. */
#ifndef RS_TEST_MATRIX_H
#define RS_TEST_MATRIX_H

#include <stddef.h>
#include <stdint.h>

#include "ncl/ncl.h"
#include "sweep/rs_shape.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The matrix is collective x algorithm x rank count x count x dtype x op x in/out of place x root,
 * every result bit-exact against sim/sweep's reference (rs_shape, rs_data). The body here lists
 * the cases, hands them to a world and counts what came back; a world (host threads, the SystemC
 * model, zmq processes, mmio on reference devices or on the RTL) only creates its ranks and runs a
 * case on them. */

/** The seed of every world's inputs. */
#define MX_SEED 20261130u

/** One case: a collective call made by every rank of a world. */
typedef struct mx_case {
    ncl_coll coll;
    ncl_algo algo;    /**< forced on every rank; NCL_ALGO_AUTO: the world's communicator chooses */
    uint64_t count;   /**< the API's count (per rank for reduce_scatter and allgather) */
    ncl_dtype dt;
    ncl_op op;        /**< NCL_SUM where coll does not reduce (rs_shape ignores it there) */
    int root;         /**< 0 where coll has no root */
    int inplace;
    int a2av;         /**< alltoall only: ncl_alltoallv over rs_shape_make_a2av's skewed matrix (count:
                           its mean block) */
} mx_case;

#define MX_DETAIL 384

/** What a world says of one case. A world reports through mx_result_fail / _refused, which keep
 *  the first failing rank's words and count the others. */
typedef struct mx_result {
    int run;          /**< 1 once the world ran (or refused) the case */
    int refused;      /**< the engine's plan refused it on every rank and nothing started */
    int bad_ranks;    /**< ranks with an error or a wrong result (0: the case passed) */
    int rank;         /**< the first of them */
    ncl_result rc;    /**< its engine error (NCL_SUCCESS: it ran, and its result was wrong) */
    uint64_t wrong;   /**< wrong elements over all ranks */
    char detail[MX_DETAIL];
} mx_result;

/** A world: ranks that run cases. run() runs cases[0..n) in order on every rank and fills res[i]
 *  for each case it ran; it returns how many it ran (fewer when a failure left the world unusable:
 *  the body reports the rest as not run). */
typedef struct mx_world {
    const char *name; /**< names the world in failures: "host", "model biring3", "zmq ipc", ... */
    int nranks;
    size_t (*run)(struct mx_world *w, const mx_case *cases, size_t n, mx_result *res);
    void *ctx;        /**< the world's own state */
} mx_world;

/** Rank `rank` failed case `r`: rc is the engine's error (NCL_SUCCESS when it ran and `wrong`
 *  elements differ, or something else the world checks went wrong: detail says what). Not thread-safe:
 *  a world whose ranks report concurrently serialises the calls. */
void mx_result_fail(mx_result *r, int rank, ncl_result rc, uint64_t wrong, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/** The engine's plan refused the case on every rank; detail (optional) says why. */
void mx_result_refused(mx_result *r, const char *why);

/* ---- the rank side: rs_shape for an mx_case, and checks every world makes the same way ------------ */

/** The shape of c on nranks ranks. */
void mx_shape(rs_shape *s, const mx_case *c, int nranks);

/** rs_shape_place, and out of place NULL where NCCL lets a rank pass no buffer (broadcast's
 *  non-root send, reduce's non-root receive), for worlds that take host pointers. */
void mx_place(const rs_shape *s, int rank, unsigned char *a, unsigned char *b, int inplace,
              const void **send, void **recv);

/** The rank's input at send (copied from `input` when the world keeps it, else generated) and
 *  poison in recv wherever the input does not lie (send or recv may be NULL: nothing goes there). */
void mx_prepare(const rs_shape *s, int rank, const void *input, const void *send, void *recv);

/** The rank's check: wrong elements of recv against the whole expected result (rs_shape_checked's
 *  slice), and, given its input as it was (`input`, out of place only), whether send still holds it.
 *  Returns the wrong elements (+1 for a modified send buffer) and says what in what[len]. */
uint64_t mx_check(const rs_shape *s, int rank, const void *send, const void *recv, const void *input,
                  const void *expected, char *what, size_t len);

/* ---- the body: enumerate, run on a world, account ------------------------------------------------- */

/** (dtype, op) pairs, for matrices that take a few instead of all. */
typedef struct mx_type {
    ncl_dtype dt;
    ncl_op op;
} mx_type;

enum { MX_ROOTS_ALL, MX_ROOTS_ENDS /* 0 and p-1 */, MX_ROOTS_SOME /* 0, p/2 and p-1 */, MX_ROOTS_LAST, MX_ROOTS_ZERO };
enum { MX_OUT_OF_PLACE = 1, MX_IN_PLACE = 2, MX_BOTH_PLACES = 3 };
#define MX_MAX_COUNTS 16

/** A product of cases: for every (dtype, op) of `types` (NULL: every dtype, with every op where
 *  coll reduces), every count counts() gives for that dtype (repeats dropped), every root, every
 *  placement, in that order, keep() (optional) dropping some. */
typedef struct mx_axes {
    ncl_coll coll;
    ncl_algo algo;
    size_t (*counts)(const struct mx_axes *a, int nranks, ncl_dtype dt, uint64_t out[MX_MAX_COUNTS]);
    const mx_type *types;
    size_t ntypes;
    int roots;        /**< MX_ROOTS_*, for rooted collectives */
    int places;       /**< MX_*_PLACE(S) */
    int (*keep)(const struct mx_axes *a, int nranks, const mx_case *c);
    const void *ctx;  /**< for counts() and keep() */
    int a2av;         /**< alltoall: the cases run alltoallv (mx_case.a2av) */
} mx_axes;

/** Cases and, once run, what came of them. */
typedef struct mx_matrix {
    mx_case *cases;
    size_t n, cap;
    int allow_refused; /**< a refused case is counted, not failed (forced algorithms on a topology
                            they cannot serve); a (coll, algo) refused on every case still fails */
    int print_groups;  /**< a line per (coll, algo): cases, refused, failed; then the world's total and seconds */
    /* after mx_run */
    uint64_t run, refused, failed, not_run;
    char first[2 * MX_DETAIL];
} mx_matrix;

void mx_init(mx_matrix *m);
void mx_free(mx_matrix *m);
/** One case. */
void mx_add(mx_matrix *m, const mx_case *c);
/** Every case of a on nranks ranks. */
void mx_add_axes(mx_matrix *m, const mx_axes *a, int nranks);
/** Runs the cases on w (then forgets them: the matrix takes new ones for the next world, its counts
 *  add up). Returns the failures of this run: failing cases, (coll, algo) pairs refused on every
 *  case, cases not run; prints the first failure and the count. */
uint64_t mx_run(mx_matrix *m, mx_world *w);

#ifdef __cplusplus
}
#endif
#endif
