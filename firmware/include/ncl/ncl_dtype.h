/* ncl_dtype.h — element types: sizes, fp16/bf16 conversion, and the reduction kernels tasks run. */
#ifndef NCL_DTYPE_H
#define NCL_DTYPE_H

#include "ncl.h"

#ifdef __cplusplus
extern "C" {
#endif

/** IEEE binary16 <-> binary32, round-to-nearest-even; NaN stays NaN (quiet), Inf and
 *  subnormals are exact where representable. */
float ncl_fp16_to_float(uint16_t h);
uint16_t ncl_float_to_fp16(float f);
/** bfloat16 <-> binary32, round-to-nearest-even; NaN stays NaN (quiet). */
float ncl_bf16_to_float(uint16_t b);
uint16_t ncl_float_to_bf16(float f);

/** dst[i] = dst[i] op src[i] for i < count. AVG reduces as SUM (the division is separate).
 *  Integers wrap (two's complement). fp16/bf16: each op in fp32, rounded back (RNE).
 *  max/min: NaN wins (a NaN operand gives a quiet NaN); +0 > -0. dst and src may be equal,
 *  but must not overlap otherwise. */
void ncl_reduce_kernel(void *dst, const void *src, uint64_t count, ncl_dtype dtype, ncl_op op);

/** dst[i] = dst[i] / divisor: integers truncate toward zero, floats round to nearest even
 *  (fp16/bf16 divide in fp32 and round once). */
void ncl_div_kernel(void *dst, uint64_t count, ncl_dtype dtype, uint32_t divisor);

#ifdef __cplusplus
}
#endif
#endif
