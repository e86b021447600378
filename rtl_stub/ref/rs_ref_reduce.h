/* rs_ref_reduce.h — bit-exact C reference of the RTL reduce lane (rtl_stub/rs_reduce.sv). */
#ifndef RS_REF_REDUCE_H
#define RS_REF_REDUCE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Element types: the firmware's ncl_dtype numbers (and rs_reduce_pkg's RS_DT_*). */
enum {
    RS_REF_DT_INT32 = 2,  /**< NCL_INT32 */
    RS_REF_DT_UINT32 = 3, /**< NCL_UINT32 */
    RS_REF_DT_FP32 = 7    /**< NCL_FLOAT32 */
};

/** Operators: the firmware's ncl_op numbers (and rs_reduce_pkg's RS_OP_*). */
enum {
    RS_REF_OP_SUM = 0, /**< NCL_SUM */
    RS_REF_OP_MAX = 2, /**< NCL_MAX */
    RS_REF_OP_MIN = 3  /**< NCL_MIN */
};

/** Widths of the dtype and op fields on the RTL ports (RS_DTYPE_W, RS_OP_W). */
#define RS_REF_DTYPE_BITS 4
#define RS_REF_OP_BITS 3

/** The only NaN an fp32 result can be (default-NaN mode: operand payloads never propagate). */
#define RS_REF_FP32_QNAN 0x7fc00000u

/** Cycles from operands accepted to result presented, with out_ready held at 1. */
#define RS_REF_REDUCE_LATENCY 2

/**
 * One reduce lane: y = a op b, as the RTL computes it.
 *
 * - int32/uint32: sum wraps modulo 2^32; max/min compare signed/unsigned.
 * - fp32 sum: IEEE-754 binary32 addition, round to nearest even, gradual underflow (subnormal
 *   operands and results exact, no flush to zero), overflow to +-Inf, Inf - Inf = NaN; every NaN
 *   result is RS_REF_FP32_QNAN; exact zero: (+0)+(-0) = +0, (-0)+(-0) = -0, x+(-x) = +0.
 *   Equal to a host's float addition in round-to-nearest except for NaN payloads.
 * - fp32 max/min: a NaN operand gives RS_REF_FP32_QNAN, +0 > -0, else the larger/smaller operand
 *   bit for bit (the firmware's ncl_reduce_kernel semantics).
 *
 * @param dtype  element type code (any value; only the three above are supported)
 * @param op     operator code (any value; only the three above are supported)
 * @param unsupported  if not NULL, set to 1 for any other (dtype, op), else to 0
 * @return the result bits; 0 when unsupported
 */
uint32_t rs_ref_reduce(int dtype, int op, uint32_t a, uint32_t b, int *unsupported);

#ifdef __cplusplus
}
#endif

#endif
