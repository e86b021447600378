/* rs_ref_reduce.c — the reduce lane in integer C: exact wide sum, one rounding (not the RTL's algorithm). */
#include "rs_ref_reduce.h"

#define F32_SIGN 0x80000000u
#define F32_INF 0x7f800000u
#define F32_MAG 0x7fffffffu

static int f32_is_nan(uint32_t u) { return (u & F32_MAG) > F32_INF; }

/* Significand with the hidden bit, and the exponent it scales with: value = sig * 2^(exp - 150).
 * Subnormals share exponent 1 with the smallest normals (gradual underflow). */
static uint32_t f32_sig(uint32_t u)
{
    uint32_t e = (u >> 23) & 0xffu;
    return (u & 0x7fffffu) | (e ? 0x800000u : 0u);
}

static int f32_exp(uint32_t u)
{
    int e = (int)((u >> 23) & 0xffu);
    return e ? e : 1;
}

static int msb64(uint64_t v)
{
    int p = 0;
    while (v >>= 1)
        p++;
    return p;
}

/* Headroom the larger significand is shifted up by: 24 + 39 = 63 bits fit in uint64_t, and a
 * smaller operand shifted further right than that is far below the rounding bit (39 - 24 bits
 * of the exact sum lie below the result's LSB at worst), so it only has to leave a sticky 1. */
#define UP 39

static uint32_t f32_add(uint32_t a, uint32_t b)
{
    if (f32_is_nan(a) || f32_is_nan(b))
        return RS_REF_FP32_QNAN;
    int a_inf = (a & F32_MAG) == F32_INF, b_inf = (b & F32_MAG) == F32_INF;
    if (a_inf && b_inf)
        return ((a ^ b) & F32_SIGN) ? RS_REF_FP32_QNAN : a;
    if (a_inf)
        return a;
    if (b_inf)
        return b;

    /* x: the operand of larger magnitude; it gives the sign of any non-zero result. */
    uint32_t x = a, y = b;
    if ((b & F32_MAG) > (a & F32_MAG)) {
        x = b;
        y = a;
    }
    int ex = f32_exp(x), d = ex - f32_exp(y);
    uint64_t big = (uint64_t)f32_sig(x) << UP; /* value = big * 2^(ex - 150 - UP) */
    uint64_t small = (uint64_t)f32_sig(y) << UP;
    if (d > UP) {
        /* Not exact any more. x is normal here (d > 0), so big is a multiple of 2^39 >= 2^62,
         * the result keeps 24 bits, and its rounding points are multiples of 2^37; the exact
         * small lies in (0, 2^23), where every value rounds alike: 1 stands for all of them
         * (and a zero y stays 0). */
        small = small != 0;
    } else {
        small >>= d; /* exact: the low UP bits of small were zero */
    }
    int opposite = ((x ^ y) & F32_SIGN) != 0;
    uint64_t r = opposite ? big - small : big + small;
    uint32_t sign = x & F32_SIGN;
    if (r == 0)
        return opposite ? 0u : sign; /* x + (-x) = +0; (-0) + (-0) = -0 */

    /* Biased exponent of the leading bit, and the right shift that leaves 24 significant bits
     * (or, below the normal range, the bits above 2^-149). */
    int p = msb64(r);
    int e = p + ex - 150 - UP + 127;  /* bit p of r weighs 2^(e - 127) */
    int keep_exp = e < 1 ? 1 : e;
    int shift = keep_exp - ex + UP; /* LSB of the result is 2^(keep_exp - 150) */
    uint64_t q;
    if (shift <= 0) {
        q = r << -shift; /* cancellation: the result is exact */
    } else {
        q = r >> shift;
        uint64_t rem = r & ((1ull << shift) - 1u), half = 1ull << (shift - 1);
        if (rem > half || (rem == half && (q & 1u)))
            q++; /* nearest, ties to even */
    }
    if (e < 1)
        return sign | (uint32_t)q; /* subnormal; q == 2^23 is the smallest normal, bits agree */
    if (e >= 255)
        return sign | F32_INF;
    /* q in [2^23, 2^24]: 2^24 carries into the exponent, and past 254 that is Inf. */
    uint64_t mag = ((uint64_t)e << 23) + (q - 0x800000u);
    return sign | (mag >= F32_INF ? F32_INF : (uint32_t)mag);
}

/* Sign-magnitude comparison: -1, 0, 1 for a < b, a == b, a > b, with -0 < +0 (no NaNs here). */
static int f32_cmp(uint32_t a, uint32_t b)
{
    int sa = (a >> 31) != 0, sb = (b >> 31) != 0;
    if (sa != sb)
        return sa ? -1 : 1;
    uint32_t ma = a & F32_MAG, mb = b & F32_MAG;
    if (ma == mb)
        return 0;
    int bigger = ma > mb;
    return (bigger != sa) ? 1 : -1; /* among negatives the larger magnitude is the smaller */
}

static uint32_t f32_maxmin(uint32_t a, uint32_t b, int want_max)
{
    if (f32_is_nan(a) || f32_is_nan(b))
        return RS_REF_FP32_QNAN;
    int c = f32_cmp(a, b);
    return (want_max ? c >= 0 : c <= 0) ? a : b;
}

uint32_t rs_ref_reduce(int dtype, int op, uint32_t a, uint32_t b, int *unsupported)
{
    int dt_ok = dtype == RS_REF_DT_INT32 || dtype == RS_REF_DT_UINT32 || dtype == RS_REF_DT_FP32;
    int op_ok = op == RS_REF_OP_SUM || op == RS_REF_OP_MAX || op == RS_REF_OP_MIN;
    if (unsupported)
        *unsupported = !(dt_ok && op_ok);
    if (!(dt_ok && op_ok))
        return 0;

    if (dtype == RS_REF_DT_FP32)
        return op == RS_REF_OP_SUM ? f32_add(a, b) : f32_maxmin(a, b, op == RS_REF_OP_MAX);
    if (op == RS_REF_OP_SUM)
        return a + b; /* unsigned: wraps, and the bits are those of int32 wraparound too */
    int lt;
    if (dtype == RS_REF_DT_INT32) {
        /* Signed order without converting out-of-range values: flip the sign bit. */
        lt = (a ^ F32_SIGN) < (b ^ F32_SIGN);
    } else {
        lt = a < b;
    }
    if (op == RS_REF_OP_MAX)
        return lt ? b : a;
    return lt ? a : b;
}
