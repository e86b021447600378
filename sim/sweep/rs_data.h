/* rs_data.h — order-independent test inputs, their exact expected results, and bit-exact checking. */
#ifndef RS_DATA_H
#define RS_DATA_H

#include <stdint.h>

#include "ncl/ncl.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Writes rank `rank`'s input for elements (index_base + i), i < count, into buf.
 *  Values depend only on (seed, rank, index, dt, op, nranks), so any slice can be generated
 *  on its own. They are chosen so the reduction over nranks is exact in any order:
 *  - sum/avg: integers; floats keep every partial sum within the exact-integer range
 *    (|sum| <= 2048 fp16, 256 bf16, 2^24 fp32, 2^53 fp64); integer types use all bits
 *    (wrapping is order-independent).
 *  - prod: floats are +-1, with one rank per element giving +-2; integer types are random
 *    odd values (wrapping multiplication is order-independent, odd keeps them non-zero).
 *  - max/min: random bits of the type; floats are kept finite (any sign, zeros, subnormals).
 *  Non-reducing collectives (broadcast, allgather) should pass NCL_MAX: full-range values. */
void rs_data_fill(void *buf, uint64_t count, ncl_dtype dt, ncl_op op, int nranks, int rank,
                  uint64_t seed, uint64_t index_base);

/** Writes the reduction of all nranks inputs for elements (index_base + i), i < count: rank 0's
 *  value, then op applied with ranks 1..nranks-1 in order through ncl_reduce_kernel; avg then
 *  divides with ncl_div_kernel, i.e. exactly the engine's arithmetic.
 *  contributors_mask_all must be 1 (every rank contributes; reserved for partial reductions). */
void rs_data_expected(void *out, uint64_t count, ncl_dtype dt, ncl_op op, int nranks,
                      uint64_t seed, uint64_t index_base, int contributors_mask_all);

/** Number of elements of got that differ from want, compared bit-exactly as integers of the
 *  element width; avg on floating types allows 2 ULP (the nccl-tests convention). */
uint64_t rs_data_count_wrong(const void *got, const void *want, uint64_t count, ncl_dtype dt,
                             ncl_op op);

#ifdef __cplusplus
}
#endif
#endif
