/* ncl_dtype.c — element types: sizes, fp16/bf16 conversion, the reduce and divide kernels. */
#include <string.h>

#include "ncl/ncl_dtype.h"

/* ---- sizes ------------------------------------------------------------------------------- */

static const uint8_t dtype_sizes[NCL_DTYPE_COUNT] = {
    [NCL_INT8] = 1,    [NCL_UINT8] = 1,    [NCL_INT32] = 4,    [NCL_UINT32] = 4,  [NCL_INT64] = 8,
    [NCL_FLOAT16] = 2, [NCL_BFLOAT16] = 2, [NCL_FLOAT32] = 4, [NCL_FLOAT64] = 8,
};

size_t ncl_dtype_size(ncl_dtype dtype)
{
    /* Compare as unsigned so a negative enum value cannot index the table. */
    return (unsigned)dtype < NCL_DTYPE_COUNT ? dtype_sizes[dtype] : 0;
}

/* ---- bit access (memcpy: the portable way to reinterpret; compiles to a register move) ------- */

static inline uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float f32_from(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline uint64_t f64_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static inline double f64_from(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* Canonical quiet NaNs that max/min return, so the result never depends on operand order. */
#define F16_QNAN 0x7e00u
#define BF16_QNAN 0x7fc0u
#define F32_QNAN 0x7fc00000u
#define F64_QNAN 0x7ff8000000000000ull

/* ---- fp16 / bf16 conversion ------------------------------------------------------------------
 * Written without branches (every case computed, then blended with masks) so the fp16 reduce
 * loops vectorise: with ternaries gcc sinks the float operation of a rare case into a branch
 * and, float operations being allowed to trap, cannot if-convert it back. The two float
 * operations do not depend on excess precision or flush-to-zero: half -> float subtracts two
 * normal floats exactly, and float -> half rounds a normal float in [0.5, 1), whose ulp 2^-24 is
 * exactly fp16's subnormal step, so the default round-to-nearest-even does fp16's rounding. */

/* a if cond (0 or 1), else b */
static inline uint32_t blend(uint32_t cond, uint32_t a, uint32_t b)
{
    uint32_t mask = 0u - cond;
    return (a & mask) | (b & ~mask);
}

static inline uint32_t half_to_f32_bits(uint32_t h)
{
    uint32_t sign = (h & 0x8000u) << 16;
    uint32_t em = h & 0x7fffu;
    /* normal: rebias the exponent by 127 - 15 */
    uint32_t normal = (em << 13) + 0x38000000u;
    /* Inf, or NaN: quieted, payload kept in the high mantissa bits */
    uint32_t special = (em << 13) | 0x7f800000u | ((uint32_t)(em > 0x7c00u) << 22);
    /* subnormal or zero: 2^-14 * (1 + m/1024) - 2^-14 = m * 2^-24, exact */
    uint32_t sub = f32_bits(f32_from((em << 13) + 0x38800000u) - f32_from(0x38800000u));
    uint32_t r = blend(em >= 0x7c00u, special, normal);
    r = blend(em < 0x0400u, sub, r);
    return sign | r;
}

static inline uint16_t f32_bits_to_half(uint32_t x)
{
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t a = x & 0x7fffffffu;
    /* normal result: rebias, round the low 13 bits to nearest even; a carry out of the mantissa
     * bumps the exponent, which is the right answer (unsigned wrap when a is small: unused) */
    uint32_t normal = (a - 0x38000000u + 0xfffu + ((a >> 13) & 1u)) >> 13;
    /* subnormal or zero result (|x| < 2^-14): count of 2^-24 steps, rounded by the fp32 add */
    uint32_t sub = f32_bits(f32_from(a) + 0.5f) - 0x3f000000u;
    /* |x| >= 65520 rounds to 2^16 (the tie goes to the even Inf); NaN stays NaN, quiet */
    uint32_t big = blend(a > 0x7f800000u, F16_QNAN | ((a >> 13) & 0x3ffu), 0x7c00u);
    uint32_t r = blend(a < 0x38800000u, sub, normal);
    r = blend(a >= 0x477ff000u, big, r);
    return (uint16_t)(sign | r);
}

static inline uint32_t bf16_to_f32_bits(uint32_t b)
{
    uint32_t x = b << 16;
    if ((x & 0x7fffffffu) > 0x7f800000u)
        x |= 0x00400000u; /* signalling NaN -> quiet */
    return x;
}

static inline uint16_t f32_bits_to_bf16(uint32_t x)
{
    if ((x & 0x7fffffffu) > 0x7f800000u) /* NaN: keep sign and high payload, force quiet */
        return (uint16_t)((x >> 16) | 0x40u);
    /* RNE on the low 16 bits; the carry handles mantissa overflow and overflow to Inf. */
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

float ncl_fp16_to_float(uint16_t h)
{
    return f32_from(half_to_f32_bits(h));
}

uint16_t ncl_float_to_fp16(float f)
{
    return f32_bits_to_half(f32_bits(f));
}

float ncl_bf16_to_float(uint16_t b)
{
    return f32_from(bf16_to_f32_bits(b));
}

uint16_t ncl_float_to_bf16(float f)
{
    return f32_bits_to_bf16(f32_bits(f));
}

/* ---- element operations ----------------------------------------------------------------------
 * Integer sum/prod are done in unsigned types: wraparound is defined there, and two's complement
 * signed wraparound has the same bits, so int8/int32/int64 share the uint kernels. The
 * multiplications by 1u promote to unsigned int before multiplying, so uint8 (and uint32 on a
 * platform with wide int) never go through signed int overflow. */

static inline uint8_t add_u8(uint8_t a, uint8_t b) { return (uint8_t)(a + b); }
static inline uint8_t mul_u8(uint8_t a, uint8_t b) { return (uint8_t)(a * 1u * b); }
static inline uint32_t add_u32(uint32_t a, uint32_t b) { return a + b; }
static inline uint32_t mul_u32(uint32_t a, uint32_t b) { return (uint32_t)(a * 1u * b); }
static inline uint64_t add_u64(uint64_t a, uint64_t b) { return a + b; }
static inline uint64_t mul_u64(uint64_t a, uint64_t b) { return a * b; }

static inline int8_t max_i8(int8_t a, int8_t b) { return a > b ? a : b; }
static inline int8_t min_i8(int8_t a, int8_t b) { return a < b ? a : b; }
static inline uint8_t max_u8(uint8_t a, uint8_t b) { return a > b ? a : b; }
static inline uint8_t min_u8(uint8_t a, uint8_t b) { return a < b ? a : b; }
static inline int32_t max_i32(int32_t a, int32_t b) { return a > b ? a : b; }
static inline int32_t min_i32(int32_t a, int32_t b) { return a < b ? a : b; }
static inline uint32_t max_u32(uint32_t a, uint32_t b) { return a > b ? a : b; }
static inline uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }
static inline int64_t max_i64(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t min_i64(int64_t a, int64_t b) { return a < b ? a : b; }

static inline float add_f32(float a, float b) { return a + b; }
static inline float mul_f32(float a, float b) { return a * b; }
static inline double add_f64(double a, double b) { return a + b; }
static inline double mul_f64(double a, double b) { return a * b; }

/* Float max/min, written as selects so the loops vectorise. Equal operands are either identical
 * or +0/-0; AND of the bits picks +0 for max, OR picks -0 for min. Unordered (a NaN operand)
 * gives the canonical quiet NaN. */
static inline float max_f32(float a, float b)
{
    float r = a > b ? a : b;
    r = a == b ? f32_from(f32_bits(a) & f32_bits(b)) : r;
    return ((a != a) | (b != b)) ? f32_from(F32_QNAN) : r;
}

static inline float min_f32(float a, float b)
{
    float r = a < b ? a : b;
    r = a == b ? f32_from(f32_bits(a) | f32_bits(b)) : r;
    return ((a != a) | (b != b)) ? f32_from(F32_QNAN) : r;
}

static inline double max_f64(double a, double b)
{
    double r = a > b ? a : b;
    r = a == b ? f64_from(f64_bits(a) & f64_bits(b)) : r;
    return ((a != a) | (b != b)) ? f64_from(F64_QNAN) : r;
}

static inline double min_f64(double a, double b)
{
    double r = a < b ? a : b;
    r = a == b ? f64_from(f64_bits(a) | f64_bits(b)) : r;
    return ((a != a) | (b != b)) ? f64_from(F64_QNAN) : r;
}

/* fp16/bf16 sum/prod: widen exactly, one fp32 op, round once. binary32 has 24 >= 2*11+2 bits,
 * so the double rounding equals a correctly rounded fp16 (and bf16) operation. */
static inline float f16_val(uint16_t h) { return f32_from(half_to_f32_bits(h)); }
static inline uint16_t f16_of(float f) { return f32_bits_to_half(f32_bits(f)); }
static inline float bf16_val(uint16_t b) { return f32_from(bf16_to_f32_bits(b)); }
static inline uint16_t bf16_of(float f) { return f32_bits_to_bf16(f32_bits(f)); }

static inline uint16_t add_f16(uint16_t a, uint16_t b) { return f16_of(f16_val(a) + f16_val(b)); }
static inline uint16_t mul_f16(uint16_t a, uint16_t b) { return f16_of(f16_val(a) * f16_val(b)); }
static inline uint16_t add_bf16(uint16_t a, uint16_t b) { return bf16_of(bf16_val(a) + bf16_val(b)); }
static inline uint16_t mul_bf16(uint16_t a, uint16_t b) { return bf16_of(bf16_val(a) * bf16_val(b)); }

/* 16-bit float max/min need no conversion: the result is one operand (or the quiet NaN), so
 * compare an order-preserving integer key: sign-magnitude -> offset binary (-0 < +0). */
static inline uint32_t key16(uint32_t u)
{
    return u ^ (((0u - (u >> 15)) & 0x7fffu) | 0x8000u);
}

static inline uint16_t max_h16(uint16_t a, uint16_t b, uint32_t inf, uint16_t qnan)
{
    if ((a & 0x7fffu) > inf || (b & 0x7fffu) > inf)
        return qnan;
    return key16(a) > key16(b) ? a : b;
}

static inline uint16_t min_h16(uint16_t a, uint16_t b, uint32_t inf, uint16_t qnan)
{
    if ((a & 0x7fffu) > inf || (b & 0x7fffu) > inf)
        return qnan;
    return key16(a) < key16(b) ? a : b;
}

static inline uint16_t max_f16(uint16_t a, uint16_t b) { return max_h16(a, b, 0x7c00u, F16_QNAN); }
static inline uint16_t min_f16(uint16_t a, uint16_t b) { return min_h16(a, b, 0x7c00u, F16_QNAN); }
static inline uint16_t max_bf16(uint16_t a, uint16_t b)
{
    return max_h16(a, b, 0x7f80u, BF16_QNAN);
}
static inline uint16_t min_bf16(uint16_t a, uint16_t b)
{
    return min_h16(a, b, 0x7f80u, BF16_QNAN);
}

/* ---- reduce loops ----------------------------------------------------------------------------
 * One tight loop per (element type, op) so the compiler can vectorise each. Two variants: the
 * distinct-buffer loop promises no aliasing (restrict), and dst == src gets its own loop through
 * a single pointer, because reading and writing one object through two restrict pointers is
 * undefined. */

typedef void (*reduce2_fn)(void *restrict dst, const void *restrict src, uint64_t count);
typedef void (*reduce1_fn)(void *dst, uint64_t count);
typedef void (*reduce3_fn)(void *restrict dst, const void *a, const void *b, uint64_t count);

#define NCL_REDUCE_LOOPS(name, T, fn)                                                          \
    static void reduce2_##name(void *restrict dst, const void *restrict src, uint64_t count)   \
    {                                                                                          \
        T *restrict d = (T *)dst;                                                              \
        const T *restrict s = (const T *)src;                                                  \
        for (uint64_t i = 0; i < count; i++)                                                   \
            d[i] = fn(d[i], s[i]);                                                             \
    }                                                                                          \
    static void reduce1_##name(void *dst, uint64_t count)                                      \
    {                                                                                          \
        T *d = (T *)dst;                                                                       \
        for (uint64_t i = 0; i < count; i++)                                                   \
            d[i] = fn(d[i], d[i]);                                                             \
    }                                                                                          \
    static void reduce3_##name(void *restrict dst, const void *a, const void *b, uint64_t count) \
    {                                                                                          \
        T *restrict d = (T *)dst;                                                              \
        const T *x = (const T *)a, *y = (const T *)b; /* a and b may be one buffer */          \
        for (uint64_t i = 0; i < count; i++)                                                   \
            d[i] = fn(x[i], y[i]);                                                             \
    }

NCL_REDUCE_LOOPS(add_u8, uint8_t, add_u8)
NCL_REDUCE_LOOPS(mul_u8, uint8_t, mul_u8)
NCL_REDUCE_LOOPS(max_i8, int8_t, max_i8)
NCL_REDUCE_LOOPS(min_i8, int8_t, min_i8)
NCL_REDUCE_LOOPS(max_u8, uint8_t, max_u8)
NCL_REDUCE_LOOPS(min_u8, uint8_t, min_u8)
NCL_REDUCE_LOOPS(add_u32, uint32_t, add_u32)
NCL_REDUCE_LOOPS(mul_u32, uint32_t, mul_u32)
NCL_REDUCE_LOOPS(max_i32, int32_t, max_i32)
NCL_REDUCE_LOOPS(min_i32, int32_t, min_i32)
NCL_REDUCE_LOOPS(max_u32, uint32_t, max_u32)
NCL_REDUCE_LOOPS(min_u32, uint32_t, min_u32)
NCL_REDUCE_LOOPS(add_u64, uint64_t, add_u64)
NCL_REDUCE_LOOPS(mul_u64, uint64_t, mul_u64)
NCL_REDUCE_LOOPS(max_i64, int64_t, max_i64)
NCL_REDUCE_LOOPS(min_i64, int64_t, min_i64)
NCL_REDUCE_LOOPS(add_f16, uint16_t, add_f16)
NCL_REDUCE_LOOPS(mul_f16, uint16_t, mul_f16)
NCL_REDUCE_LOOPS(max_f16, uint16_t, max_f16)
NCL_REDUCE_LOOPS(min_f16, uint16_t, min_f16)
NCL_REDUCE_LOOPS(add_bf16, uint16_t, add_bf16)
NCL_REDUCE_LOOPS(mul_bf16, uint16_t, mul_bf16)
NCL_REDUCE_LOOPS(max_bf16, uint16_t, max_bf16)
NCL_REDUCE_LOOPS(min_bf16, uint16_t, min_bf16)
NCL_REDUCE_LOOPS(add_f32, float, add_f32)
NCL_REDUCE_LOOPS(mul_f32, float, mul_f32)
NCL_REDUCE_LOOPS(max_f32, float, max_f32)
NCL_REDUCE_LOOPS(min_f32, float, min_f32)
NCL_REDUCE_LOOPS(add_f64, double, add_f64)
NCL_REDUCE_LOOPS(mul_f64, double, mul_f64)
NCL_REDUCE_LOOPS(max_f64, double, max_f64)
NCL_REDUCE_LOOPS(min_f64, double, min_f64)

typedef struct reduce_entry {
    reduce2_fn two; /* dst != src */
    reduce1_fn one; /* dst == src */
} reduce_entry;

#define NCL_ENTRY(name) {reduce2_##name, reduce1_##name}
/* Row per dtype, column per op (sum, prod, max, min, avg); avg reduces as sum. */
#define NCL_ROW(add, mul, max, min) \
    {NCL_ENTRY(add), NCL_ENTRY(mul), NCL_ENTRY(max), NCL_ENTRY(min), NCL_ENTRY(add)}

static const reduce_entry reduce_table[NCL_DTYPE_COUNT][NCL_OP_COUNT] = {
    [NCL_INT8] = NCL_ROW(add_u8, mul_u8, max_i8, min_i8),
    [NCL_UINT8] = NCL_ROW(add_u8, mul_u8, max_u8, min_u8),
    [NCL_INT32] = NCL_ROW(add_u32, mul_u32, max_i32, min_i32),
    [NCL_UINT32] = NCL_ROW(add_u32, mul_u32, max_u32, min_u32),
    [NCL_INT64] = NCL_ROW(add_u64, mul_u64, max_i64, min_i64),
    [NCL_FLOAT16] = NCL_ROW(add_f16, mul_f16, max_f16, min_f16),
    [NCL_BFLOAT16] = NCL_ROW(add_bf16, mul_bf16, max_bf16, min_bf16),
    [NCL_FLOAT32] = NCL_ROW(add_f32, mul_f32, max_f32, min_f32),
    [NCL_FLOAT64] = NCL_ROW(add_f64, mul_f64, max_f64, min_f64),
};

void ncl_reduce_kernel(void *dst, const void *src, uint64_t count, ncl_dtype dtype, ncl_op op)
{
    /* Invalid dtype/op are rejected at the API; here they are a no-op rather than a crash. */
    if ((unsigned)dtype >= NCL_DTYPE_COUNT || (unsigned)op >= NCL_OP_COUNT || count == 0)
        return;
    const reduce_entry *e = &reduce_table[dtype][op];
    if (dst == src)
        e->one(dst, count);
    else
        e->two(dst, src, count);
}

/* A table of its own: an image that never calls ncl_reduce3_kernel (a board's) links none of it. */
#define NCL_ROW3(add, mul, max, min) {reduce3_##add, reduce3_##mul, reduce3_##max, reduce3_##min, reduce3_##add}

static const reduce3_fn reduce3_table[NCL_DTYPE_COUNT][NCL_OP_COUNT] = {
    [NCL_INT8] = NCL_ROW3(add_u8, mul_u8, max_i8, min_i8),
    [NCL_UINT8] = NCL_ROW3(add_u8, mul_u8, max_u8, min_u8),
    [NCL_INT32] = NCL_ROW3(add_u32, mul_u32, max_i32, min_i32),
    [NCL_UINT32] = NCL_ROW3(add_u32, mul_u32, max_u32, min_u32),
    [NCL_INT64] = NCL_ROW3(add_u64, mul_u64, max_i64, min_i64),
    [NCL_FLOAT16] = NCL_ROW3(add_f16, mul_f16, max_f16, min_f16),
    [NCL_BFLOAT16] = NCL_ROW3(add_bf16, mul_bf16, max_bf16, min_bf16),
    [NCL_FLOAT32] = NCL_ROW3(add_f32, mul_f32, max_f32, min_f32),
    [NCL_FLOAT64] = NCL_ROW3(add_f64, mul_f64, max_f64, min_f64),
};

void ncl_reduce3_kernel(void *dst, const void *a, const void *b, uint64_t count, ncl_dtype dtype, ncl_op op)
{
    if ((unsigned)dtype >= NCL_DTYPE_COUNT || (unsigned)op >= NCL_OP_COUNT || count == 0)
        return;
    reduce3_table[dtype][op](dst, a, b, count);
}

/* ---- divide (avg's last step) ----------------------------------------------------------------
 * Signed integers divide in int64_t (C division truncates toward zero; every uint32 divisor is
 * exact there, and the quotient always fits back). Floats divide in their own precision; the
 * divisor (a rank count) converts exactly while it is <= 2^24 (fp32/fp16/bf16) or 2^53 (fp64). */

void ncl_div_kernel(void *dst, uint64_t count, ncl_dtype dtype, uint32_t divisor)
{
    /* Dividing by 1 is the identity; by 0 is meaningless, and dst is left as it is. */
    if (divisor <= 1u || count == 0)
        return;
    const int64_t sdiv = (int64_t)divisor;
    switch (dtype) {
    case NCL_INT8: {
        int8_t *d = dst;
        for (uint64_t i = 0; i < count; i++)
            d[i] = (int8_t)(d[i] / sdiv);
        break;
    }
    case NCL_UINT8: {
        uint8_t *d = dst;
        for (uint64_t i = 0; i < count; i++)
            d[i] = (uint8_t)(d[i] / divisor);
        break;
    }
    case NCL_INT32: {
        int32_t *d = dst;
        for (uint64_t i = 0; i < count; i++)
            d[i] = (int32_t)(d[i] / sdiv);
        break;
    }
    case NCL_UINT32: {
        uint32_t *d = dst;
        for (uint64_t i = 0; i < count; i++)
            d[i] = d[i] / divisor;
        break;
    }
    case NCL_INT64: {
        int64_t *d = dst;
        for (uint64_t i = 0; i < count; i++)
            d[i] = d[i] / sdiv;
        break;
    }
    case NCL_FLOAT16: {
        uint16_t *d = dst;
        const float fdiv = (float)divisor;
        for (uint64_t i = 0; i < count; i++)
            d[i] = f16_of(f16_val(d[i]) / fdiv);
        break;
    }
    case NCL_BFLOAT16: {
        uint16_t *d = dst;
        const float fdiv = (float)divisor;
        for (uint64_t i = 0; i < count; i++)
            d[i] = bf16_of(bf16_val(d[i]) / fdiv);
        break;
    }
    case NCL_FLOAT32: {
        float *d = dst;
        const float fdiv = (float)divisor;
        for (uint64_t i = 0; i < count; i++)
            d[i] = d[i] / fdiv;
        break;
    }
    case NCL_FLOAT64: {
        double *d = dst;
        const double ddiv = (double)divisor;
        for (uint64_t i = 0; i < count; i++)
            d[i] = d[i] / ddiv;
        break;
    }
    default:
        break;
    }
}

/* ---- wide accumulation -----------------------------------------------------------------------
 * fp16/bf16 sums accumulated in fp32 and rounded once: a p-rank sum makes p-1 fp32 roundings
 * (24-bit significand) and one narrow rounding, instead of p-1 narrow roundings. The fp32
 * accumulator lives in scratch; memcpy loads/stores keep these loops free of alignment
 * assumptions (the compiler turns them into plain moves). */

static inline float wide_load(const unsigned char *w, uint64_t i)
{
    float f;
    memcpy(&f, w + 4 * i, sizeof f);
    return f;
}

static inline void wide_store(unsigned char *w, uint64_t i, float f)
{
    memcpy(w + 4 * i, &f, sizeof f);
}

static inline uint16_t narrow_load(const unsigned char *s, uint64_t i)
{
    uint16_t h;
    memcpy(&h, s + 2 * i, sizeof h);
    return h;
}

static inline float narrow_val(uint16_t h, int bf) { return bf ? bf16_val(h) : f16_val(h); }

void ncl_widen_kernel(void *wide, const void *src, uint64_t count, ncl_dtype narrow)
{
    if (narrow != NCL_FLOAT16 && narrow != NCL_BFLOAT16)
        return;
    const int bf = narrow == NCL_BFLOAT16;
    unsigned char *w = wide;
    const unsigned char *s = src;
    for (uint64_t i = 0; i < count; i++)
        wide_store(w, i, narrow_val(narrow_load(s, i), bf));
}

void ncl_reduce_wide_kernel(void *wide, const void *src, uint64_t count, ncl_dtype narrow, ncl_op op)
{
    if (narrow != NCL_FLOAT16 && narrow != NCL_BFLOAT16)
        return;
    const int bf = narrow == NCL_BFLOAT16;
    unsigned char *w = wide;
    const unsigned char *s = src;
    for (uint64_t i = 0; i < count; i++) {
        float a = wide_load(w, i), b = narrow_val(narrow_load(s, i), bf), r;
        switch (op) {
        case NCL_PROD: r = mul_f32(a, b); break;
        case NCL_MAX: r = max_f32(a, b); break;
        case NCL_MIN: r = min_f32(a, b); break;
        default: r = add_f32(a, b); break; /* SUM, AVG */
        }
        wide_store(w, i, r);
    }
}

void ncl_narrow_kernel(void *dst, const void *wide, uint64_t count, ncl_dtype narrow, uint32_t divisor)
{
    if (narrow != NCL_FLOAT16 && narrow != NCL_BFLOAT16)
        return;
    const int bf = narrow == NCL_BFLOAT16;
    const float fdiv = (float)(divisor > 1u ? divisor : 1u);
    unsigned char *d = dst;
    const unsigned char *w = wide;
    for (uint64_t i = 0; i < count; i++) {
        float v = wide_load(w, i);
        if (divisor > 1u)
            v = v / fdiv;
        uint16_t h = bf ? bf16_of(v) : f16_of(v);
        memcpy(d + 2 * i, &h, sizeof h);
    }
}
