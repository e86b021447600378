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
/** dst[i] = a[i] op b[i] for i < count, in one pass (what copying a to dst and then
 *  ncl_reduce_kernel(dst, b) gives, bit for bit). dst must not overlap a or b. */
void ncl_reduce3_kernel(void *dst, const void *a, const void *b, uint64_t count, ncl_dtype dtype, ncl_op op);

/** dst[i] = dst[i] / divisor: integers truncate toward zero, floats round to nearest even
 *  (fp16/bf16 divide in fp32 and round once). */
void ncl_div_kernel(void *dst, uint64_t count, ncl_dtype dtype, uint32_t divisor);

/* Wide accumulation kernels (the LOCAL_WIDEN / LOCAL_REDUCE_WIDE / LOCAL_NARROW tasks). `narrow`
 * is NCL_FLOAT16 or NCL_BFLOAT16 (other dtypes: no-op); `wide` points at fp32 values. Neither
 * pointer needs more than 2-byte alignment (elements are loaded with memcpy). */
/** wide[i] = (float)src[i], exact. */
void ncl_widen_kernel(void *wide, const void *src, uint64_t count, ncl_dtype narrow);
/** wide[i] = wide[i] op (float)src[i]: one fp32 operation, no rounding to the narrow type
 *  (AVG as SUM; max/min as ncl_reduce_kernel's fp32 max/min). */
void ncl_reduce_wide_kernel(void *wide, const void *src, uint64_t count, ncl_dtype narrow, ncl_op op);
/** dst[i] = narrow(wide[i] / divisor), the division in fp32 (divisor 0 or 1: none), the
 *  conversion rounded once to nearest even. */
void ncl_narrow_kernel(void *dst, const void *wide, uint64_t count, ncl_dtype narrow, uint32_t divisor);

#ifdef __cplusplus
}
#endif
#endif
