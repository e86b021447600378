/* test_dtype.c — element types: names, fp16/bf16 conversion and arithmetic, reduce and divide kernels. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <ncl/ncl_dtype.h>

/* ---- helpers --------------------------------------------------------------------------------- */

static uint32_t fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float ffrom(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint64_t dbits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static double dfrom(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static int f32_isnan(uint32_t u) { return (u & 0x7fffffffu) > 0x7f800000u; }
static int f64_isnan(uint64_t u) { return (u & 0x7fffffffffffffffull) > 0x7ff0000000000000ull; }

/* Deterministic xorshift64*: the same pairs on every run. */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545f4914f6cdd1dull;
}

/* Exact power of two in double, without libm. */
static double pow2(int k)
{
    double r = 1.0;
    for (; k > 0; k--)
        r *= 2.0;
    for (; k < 0; k++)
        r *= 0.5;
    return r;
}

/* ---- an independent model of a 16-bit binary float format ------------------------------------ */

typedef struct fmt16 {
    int mant_bits;      /* stored mantissa bits */
    int bias;           /* exponent bias */
    uint16_t inf;       /* bits of +Inf */
    uint16_t qnan;      /* canonical quiet NaN */
    uint16_t quiet_bit; /* the mantissa's top bit */
    double value[0x8000]; /* decoded value of every non-negative pattern below Inf */
} fmt16;

static fmt16 fp16_fmt = {.mant_bits = 10, .bias = 15, .inf = 0x7c00, .qnan = 0x7e00, .quiet_bit = 0x200};
static fmt16 bf16_fmt = {.mant_bits = 7, .bias = 127, .inf = 0x7f80, .qnan = 0x7fc0, .quiet_bit = 0x40};

static void fmt_init(fmt16 *f)
{
    for (uint32_t h = 0; h < f->inf; h++) {
        uint32_t e = h >> f->mant_bits;
        uint32_t m = h & ((1u << f->mant_bits) - 1u);
        if (e == 0)
            f->value[h] = (double)m * pow2(1 - f->bias - f->mant_bits);
        else
            f->value[h] = (double)((1u << f->mant_bits) | m) * pow2((int)e - f->bias - f->mant_bits);
    }
}

static int fmt_isnan(const fmt16 *f, uint16_t h) { return (h & 0x7fffu) > f->inf; }

static double fmt_decode(const fmt16 *f, uint16_t h)
{
    uint16_t mag = h & 0x7fffu;
    double v = mag == f->inf ? f->value[f->inf - 1] * 4.0 /* any value beyond: only compared */
                             : f->value[mag];
    return (h & 0x8000u) ? -v : v;
}

/* Round a double to the format, nearest-even, by searching the value table. The caller keeps x
 * exact (sums and products of format values are exact in double for the ranges used); the two
 * distances are exact by Sterbenz, since x lies between adjacent format values. */
static uint16_t fmt_round(const fmt16 *f, double x)
{
    uint16_t sign = (dbits(x) >> 63) ? 0x8000u : 0u;
    double a = sign ? -x : x;
    uint16_t max = (uint16_t)(f->inf - 1u);
    double overflow = f->value[max] + (f->value[max] - f->value[max - 1]) / 2.0;
    if (a >= overflow)
        return sign | f->inf;
    /* largest lo with value[lo] <= a */
    uint32_t lo = 0, hi = max;
    while (lo < hi) {
        uint32_t mid = (lo + hi + 1u) / 2u;
        if (f->value[mid] <= a)
            lo = mid;
        else
            hi = mid - 1u;
    }
    if (f->value[lo] == a)
        return (uint16_t)(sign | lo);
    double next = lo == max ? overflow * 2.0 - f->value[max] : f->value[lo + 1];
    double dlo = a - f->value[lo], dhi = next - a;
    uint32_t r = dlo < dhi ? lo : dhi < dlo ? lo + 1u : (lo & 1u) ? lo + 1u : lo;
    return (uint16_t)(sign | r);
}

static int setup_formats(void **state)
{
    (void)state;
    fmt_init(&fp16_fmt);
    fmt_init(&bf16_fmt);
    return 0;
}

/* ---- sizes and names ------------------------------------------------------------------------- */

static void test_sizes_and_names(void **state)
{
    (void)state;
    static const size_t sizes[NCL_DTYPE_COUNT] = {1, 1, 4, 4, 8, 2, 2, 4, 8};
    static const char *const names[NCL_DTYPE_COUNT] = {"int8",  "uint8",    "int32", "uint32", "int64",
                                                       "half",  "bfloat16", "float", "double"};
    static const char *const ops[NCL_OP_COUNT] = {"sum", "prod", "max", "min", "avg"};
    for (int t = 0; t < NCL_DTYPE_COUNT; t++) {
        assert_int_equal(ncl_dtype_size((ncl_dtype)t), sizes[t]);
        assert_string_equal(ncl_dtype_name((ncl_dtype)t), names[t]);
    }
    for (int o = 0; o < NCL_OP_COUNT; o++)
        assert_string_equal(ncl_op_name((ncl_op)o), ops[o]);
    assert_int_equal(ncl_dtype_size(NCL_DTYPE_COUNT), 0);
    assert_int_equal(ncl_dtype_size((ncl_dtype)-1), 0);
    assert_string_equal(ncl_dtype_name(NCL_DTYPE_COUNT), "?");
    assert_string_equal(ncl_dtype_name((ncl_dtype)-1), "?");
    assert_string_equal(ncl_op_name(NCL_OP_COUNT), "?");
    assert_string_equal(ncl_op_name((ncl_op)-1), "?");
}

/* ---- fp16 conversion ------------------------------------------------------------------------- */

static void test_fp16_decode_and_roundtrip_all(void **state)
{
    (void)state;
    for (uint32_t h = 0; h < 0x10000u; h++) {
        float f = ncl_fp16_to_float((uint16_t)h);
        uint16_t back = ncl_float_to_fp16(f);
        if (fmt_isnan(&fp16_fmt, (uint16_t)h)) {
            /* NaN stays NaN, quiet, same sign, payload kept */
            assert_true(f32_isnan(fbits(f)));
            assert_true(fbits(f) & 0x00400000u);
            assert_int_equal(fbits(f) >> 31, h >> 15);
            assert_int_equal(back, h | 0x200u);
        } else {
            float expect = (float)fmt_decode(&fp16_fmt, (uint16_t)h);
            if ((h & 0x7fffu) == 0x7c00u)
                expect = (h & 0x8000u) ? -ffrom(0x7f800000u) : ffrom(0x7f800000u);
            assert_int_equal(fbits(f), fbits(expect)); /* bits: also checks -0 */
            assert_int_equal(back, h);
        }
    }
}

/* Every fp16 value, the midpoint to its successor and the floats just around it: exact values
 * stay, ties go to the even neighbour, anything off the tie goes to the nearer one. */
static void check_boundaries(const fmt16 *f, uint16_t (*conv)(float))
{
    for (uint32_t h = 0; h < f->inf; h++) {
        double v = f->value[h];
        double next = h + 1u < f->inf ? f->value[h + 1]
                                       : v + (v - f->value[h - 1]); /* Inf's place in the grid */
        float mid = (float)((v + next) / 2.0); /* exact: one more bit than the format */
        uint32_t even = (h & 1u) ? h + 1u : h;
        for (uint32_t s = 0; s <= 0x8000u; s += 0x8000u) {
            float sv = s ? -(float)v : (float)v;
            float sm = s ? -mid : mid;
            assert_int_equal(conv(sv), s | h);
            assert_int_equal(conv(sm), s | even);
            assert_int_equal(conv(ffrom(fbits(sm) + 1u)), s | (h + 1u)); /* away from zero */
            if (h > 0 || fbits(mid) > 1u)
                assert_int_equal(conv(ffrom(fbits(sm) - 1u)), s | h);
        }
    }
}

static void test_fp16_rounding(void **state)
{
    (void)state;
    check_boundaries(&fp16_fmt, ncl_float_to_fp16);

    assert_int_equal(ncl_float_to_fp16(1.0f), 0x3c00);
    assert_int_equal(ncl_float_to_fp16(1.0f + 0x1p-11f), 0x3c00);         /* tie -> even */
    assert_int_equal(ncl_float_to_fp16(1.0f + 3 * 0x1p-11f), 0x3c02);     /* tie -> even */
    assert_int_equal(ncl_float_to_fp16(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);
    assert_int_equal(ncl_float_to_fp16(65504.0f), 0x7bff);                /* largest finite */
    assert_int_equal(ncl_float_to_fp16(65519.996f), 0x7bff);
    assert_int_equal(ncl_float_to_fp16(65520.0f), 0x7c00);                /* tie -> Inf (even) */
    assert_int_equal(ncl_float_to_fp16(1e6f), 0x7c00);
    assert_int_equal(ncl_float_to_fp16(-1e6f), 0xfc00);
    assert_int_equal(ncl_float_to_fp16(ffrom(0x7f7fffffu)), 0x7c00);
    assert_int_equal(ncl_float_to_fp16(ffrom(0x7f800000u)), 0x7c00);
    assert_int_equal(ncl_float_to_fp16(ffrom(0xff800000u)), 0xfc00);
    assert_int_equal(ncl_float_to_fp16(0x1p-24f), 0x0001);                /* smallest subnormal */
    assert_int_equal(ncl_float_to_fp16(0x1p-25f), 0x0000);                /* tie -> 0 */
    assert_int_equal(ncl_float_to_fp16(ffrom(fbits(0x1p-25f) + 1u)), 0x0001);
    assert_int_equal(ncl_float_to_fp16(3 * 0x1p-25f), 0x0002);            /* tie -> even */
    assert_int_equal(ncl_float_to_fp16(1023 * 0x1p-24f), 0x03ff);         /* largest subnormal */
    assert_int_equal(ncl_float_to_fp16(1023.5f * 0x1p-24f), 0x0400);      /* tie -> normal */
    assert_int_equal(ncl_float_to_fp16(0x1p-14f), 0x0400);                /* smallest normal */
    assert_int_equal(ncl_float_to_fp16(0x1p-26f), 0x0000);                /* underflow */
    assert_int_equal(ncl_float_to_fp16(-0x1p-26f), 0x8000);               /* keeps the sign */
    assert_int_equal(ncl_float_to_fp16(ffrom(1u)), 0x0000);               /* fp32 subnormal */
    assert_int_equal(ncl_float_to_fp16(0.0f), 0x0000);
    assert_int_equal(ncl_float_to_fp16(-0.0f), 0x8000);
    assert_int_equal(ncl_float_to_fp16(-2.0f), 0xc000);
    /* NaN: quiet, sign and high payload kept */
    assert_int_equal(ncl_float_to_fp16(ffrom(0x7fc00000u)), 0x7e00);
    assert_int_equal(ncl_float_to_fp16(ffrom(0xffc00000u)), 0xfe00);
    assert_int_equal(ncl_float_to_fp16(ffrom(0x7f800001u)), 0x7e00);      /* sNaN, low payload */
    assert_int_equal(ncl_float_to_fp16(ffrom(0x7fa00000u)), 0x7f00);      /* sNaN, high payload */
    assert_int_equal(ncl_float_to_fp16(ffrom(0x7fffe000u)), 0x7fff);
}

/* Random floats of every magnitude against the table model. */
static void test_fp16_random_floats(void **state)
{
    (void)state;
    uint64_t s = 0x1234567887654321ull;
    for (int i = 0; i < 200000; i++) {
        uint32_t u = (uint32_t)rng_next(&s);
        /* half the samples in fp16's range, where the rounding is interesting */
        if (i & 1)
            u = (u & 0x80000000u) | (0x32000000u + (u & 0x7fffffffu) % (0x47900000u - 0x32000000u));
        if (f32_isnan(u))
            continue;
        uint16_t expect = (u & 0x7fffffffu) == 0x7f800000u
                              ? (uint16_t)((u >> 16 & 0x8000u) | 0x7c00u)
                              : fmt_round(&fp16_fmt, (double)ffrom(u));
        assert_int_equal(ncl_float_to_fp16(ffrom(u)), expect);
    }
}

/* ---- bf16 conversion ------------------------------------------------------------------------- */

static void test_bf16_decode_and_roundtrip_all(void **state)
{
    (void)state;
    for (uint32_t b = 0; b < 0x10000u; b++) {
        float f = ncl_bf16_to_float((uint16_t)b);
        uint16_t back = ncl_float_to_bf16(f);
        if (fmt_isnan(&bf16_fmt, (uint16_t)b)) {
            assert_true(f32_isnan(fbits(f)));
            assert_int_equal(fbits(f), (b << 16) | 0x00400000u);
            assert_int_equal(back, b | 0x40u);
        } else {
            assert_int_equal(fbits(f), b << 16);
            if ((b & 0x7fffu) != 0x7f80u)
                assert_true((double)f == fmt_decode(&bf16_fmt, (uint16_t)b));
            assert_int_equal(back, b);
        }
    }
}

static void test_bf16_rounding(void **state)
{
    (void)state;
    check_boundaries(&bf16_fmt, ncl_float_to_bf16);

    assert_int_equal(ncl_float_to_bf16(1.0f), 0x3f80);
    assert_int_equal(ncl_float_to_bf16(1.0f + 0x1p-8f), 0x3f80);          /* tie -> even */
    assert_int_equal(ncl_float_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);      /* tie -> even */
    assert_int_equal(ncl_float_to_bf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
    assert_int_equal(ncl_float_to_bf16(ffrom(0x7f7f0000u)), 0x7f7f);      /* largest finite */
    assert_int_equal(ncl_float_to_bf16(ffrom(0x7f7f7fffu)), 0x7f7f);
    assert_int_equal(ncl_float_to_bf16(ffrom(0x7f7f8000u)), 0x7f80);      /* tie -> Inf */
    assert_int_equal(ncl_float_to_bf16(ffrom(0x7f7fffffu)), 0x7f80);      /* FLT_MAX -> Inf */
    assert_int_equal(ncl_float_to_bf16(ffrom(0xff7fffffu)), 0xff80);
    assert_int_equal(ncl_float_to_bf16(ffrom(0x7f800000u)), 0x7f80);
    assert_int_equal(ncl_float_to_bf16(ffrom(0x00010000u)), 0x0001);      /* smallest subnormal */
    assert_int_equal(ncl_float_to_bf16(ffrom(0x00008000u)), 0x0000);      /* tie -> 0 */
    assert_int_equal(ncl_float_to_bf16(ffrom(0x00008001u)), 0x0001);
    assert_int_equal(ncl_float_to_bf16(ffrom(0x80008000u)), 0x8000);      /* -0 */
    assert_int_equal(ncl_float_to_bf16(ffrom(0x007fffffu)), 0x0080);      /* rounds up to normal */
    assert_int_equal(ncl_float_to_bf16(-0.0f), 0x8000);
    assert_int_equal(ncl_float_to_bf16(ffrom(0x7fc00000u)), 0x7fc0);
    assert_int_equal(ncl_float_to_bf16(ffrom(0xff800001u)), 0xffc0);      /* sNaN -> quiet */
    assert_int_equal(ncl_float_to_bf16(ffrom(0x7fa10000u)), 0x7fe1);      /* payload kept */
    assert_int_equal(ncl_float_to_bf16(ffrom(0x7f80ffffu)), 0x7fc0);      /* would round to Inf */

    uint64_t s = 99;
    for (int i = 0; i < 200000; i++) {
        uint32_t u = (uint32_t)rng_next(&s);
        if ((u & 0x7fffffffu) >= 0x7f800000u)
            continue;
        assert_int_equal(ncl_float_to_bf16(ffrom(u)), fmt_round(&bf16_fmt, (double)ffrom(u)));
    }
}

/* ---- fp16 / bf16 arithmetic: correctly rounded ----------------------------------------------- */

enum { BATCH = 4096 };

/* Random finite operands of the format; exp_lo..exp_hi bound the exponent field when the sum
 * must stay exact in double (bf16's exponent range is as wide as fp32's). */
static uint16_t random_finite(const fmt16 *f, uint64_t *s, uint32_t exp_lo, uint32_t exp_hi)
{
    for (;;) {
        uint16_t h = (uint16_t)rng_next(s);
        uint32_t e = (h & 0x7fffu) >> f->mant_bits;
        if ((h & 0x7fffu) < f->inf && e >= exp_lo && e <= exp_hi)
            return h;
    }
}

static void check_arith(const fmt16 *f, ncl_dtype dt, ncl_op op, uint32_t exp_lo, uint32_t exp_hi,
                        int batches, uint64_t seed)
{
    static uint16_t a[BATCH], b[BATCH], r[BATCH];
    uint64_t s = seed;
    for (int n = 0; n < batches; n++) {
        for (int i = 0; i < BATCH; i++) {
            a[i] = random_finite(f, &s, exp_lo, exp_hi);
            b[i] = random_finite(f, &s, exp_lo, exp_hi);
            /* some pairs cancel exactly or nearly: the sign of zero and tiny results */
            if (i % 61 == 0)
                b[i] = a[i] ^ 0x8000u;
            if (i % 67 == 0)
                b[i] = (a[i] ^ 0x8000u) + 1u;
        }
        memcpy(r, a, sizeof r);
        ncl_reduce_kernel(r, b, BATCH, dt, op);
        for (int i = 0; i < BATCH; i++) {
            double x = fmt_decode(f, a[i]), y = fmt_decode(f, b[i]);
            if ((b[i] & 0x7fffu) >= f->inf)
                continue; /* the +1 above may have stepped into Inf */
            double exact = op == NCL_PROD ? x * y : x + y;
            uint16_t expect = fmt_round(f, exact);
            if (expect != r[i])
                fail_msg("%s %s %04x %04x: got %04x want %04x", ncl_dtype_name(dt), ncl_op_name(op),
                         a[i], b[i], r[i], expect);
        }
    }
}

static void test_fp16_arith_correctly_rounded(void **state)
{
    (void)state;
    check_arith(&fp16_fmt, NCL_FLOAT16, NCL_SUM, 0, 30, 256, 1); /* 1M sums, every exponent */
    check_arith(&fp16_fmt, NCL_FLOAT16, NCL_SUM, 12, 18, 32, 2); /* close magnitudes: ties */
    check_arith(&fp16_fmt, NCL_FLOAT16, NCL_PROD, 0, 30, 64, 3);
    check_arith(&fp16_fmt, NCL_FLOAT16, NCL_AVG, 0, 30, 8, 4);
}

static void test_bf16_arith_correctly_rounded(void **state)
{
    (void)state;
    /* exponents 100..150 keep every sum exact in double; products are always exact */
    check_arith(&bf16_fmt, NCL_BFLOAT16, NCL_SUM, 100, 150, 64, 5);
    check_arith(&bf16_fmt, NCL_BFLOAT16, NCL_SUM, 0, 20, 16, 6); /* subnormal sums */
    check_arith(&bf16_fmt, NCL_BFLOAT16, NCL_PROD, 0, 254, 64, 7);
}

static void test_half_special_arith(void **state)
{
    (void)state;
    /* fp16: Inf - Inf is NaN; overflow to Inf; NaN propagates (quiet) */
    uint16_t d[] = {0x7c00, 0x7bff, 0x7c01, 0x3c00, 0x8000, 0x8000, 0x0001};
    uint16_t s[] = {0xfc00, 0x7bff, 0x3c00, 0xfe00, 0x8000, 0x0000, 0x8001};
    ncl_reduce_kernel(d, s, 7, NCL_FLOAT16, NCL_SUM);
    assert_true(fmt_isnan(&fp16_fmt, d[0]));
    assert_int_equal(d[1], 0x7c00);
    assert_true(fmt_isnan(&fp16_fmt, d[2]) && (d[2] & 0x200u));
    assert_true(fmt_isnan(&fp16_fmt, d[3]));
    assert_int_equal(d[4], 0x8000); /* -0 + -0 = -0 */
    assert_int_equal(d[5], 0x0000); /* -0 + +0 = +0 */
    assert_int_equal(d[6], 0x0000); /* x + -x = +0 */

    uint16_t p[] = {0x0001, 0x8001, 0x7bff, 0x0000};
    uint16_t q[] = {0x0001, 0x0001, 0x4000, 0x7c00};
    ncl_reduce_kernel(p, q, 4, NCL_FLOAT16, NCL_PROD);
    assert_int_equal(p[0], 0x0000); /* underflow */
    assert_int_equal(p[1], 0x8000); /* underflow keeps the sign */
    assert_int_equal(p[2], 0x7c00); /* overflow */
    assert_true(fmt_isnan(&fp16_fmt, p[3])); /* 0 * Inf */

    uint16_t bd[] = {0x7f7f, 0x7f80, 0xff81};
    uint16_t bs[] = {0x7f7f, 0xff80, 0x3f80};
    ncl_reduce_kernel(bd, bs, 3, NCL_BFLOAT16, NCL_SUM);
    assert_int_equal(bd[0], 0x7f80);
    assert_true(fmt_isnan(&bf16_fmt, bd[1]));
    assert_true(fmt_isnan(&bf16_fmt, bd[2]) && (bd[2] & 0x40u)); /* quiet */
}

/* ---- integer kernels ------------------------------------------------------------------------- */

static void run(ncl_dtype dt, ncl_op op, const void *a, const void *b, const void *expect, size_t n)
{
    unsigned char dst[256];
    size_t bytes = n * ncl_dtype_size(dt);
    assert_true(bytes <= sizeof dst);
    memcpy(dst, a, bytes);
    ncl_reduce_kernel(dst, b, n, dt, op);
    assert_memory_equal(dst, expect, bytes);
    if (op == NCL_SUM) { /* avg reduces as sum */
        memcpy(dst, a, bytes);
        ncl_reduce_kernel(dst, b, n, dt, NCL_AVG);
        assert_memory_equal(dst, expect, bytes);
    }
}

static void test_int8(void **state)
{
    (void)state;
    const int8_t a[] = {100, -128, 1, -5, 16, 15, -128, 127, 0};
    const int8_t b[] = {100, -1, -1, 3, 16, 17, -1, 127, -128};
    run(NCL_INT8, NCL_SUM, a, b, (int8_t[]){-56, 127, 0, -2, 32, 32, 127, -2, -128}, 9);
    run(NCL_INT8, NCL_PROD, a, b, (int8_t[]){16, -128, -1, -15, 0, -1, -128, 1, 0}, 9);
    run(NCL_INT8, NCL_MAX, a, b, (int8_t[]){100, -1, 1, 3, 16, 17, -1, 127, 0}, 9);
    run(NCL_INT8, NCL_MIN, a, b, (int8_t[]){100, -128, -1, -5, 16, 15, -128, 127, -128}, 9);
}

static void test_uint8(void **state)
{
    (void)state;
    const uint8_t a[] = {200, 255, 16, 15, 0, 128, 3};
    const uint8_t b[] = {100, 1, 16, 17, 255, 2, 250};
    run(NCL_UINT8, NCL_SUM, a, b, (uint8_t[]){44, 0, 32, 32, 255, 130, 253}, 7);
    run(NCL_UINT8, NCL_PROD, a, b, (uint8_t[]){32, 255, 0, 255, 0, 0, 238}, 7);
    run(NCL_UINT8, NCL_MAX, a, b, (uint8_t[]){200, 255, 16, 17, 255, 128, 250}, 7);
    run(NCL_UINT8, NCL_MIN, a, b, (uint8_t[]){100, 1, 16, 15, 0, 2, 3}, 7);
}

static void test_int32(void **state)
{
    (void)state;
    const int32_t a[] = {INT32_MAX, INT32_MIN, 65536, -7, 46341, 0};
    const int32_t b[] = {1, -1, 65536, 3, 46341, -1};
    run(NCL_INT32, NCL_SUM, a, b, (int32_t[]){INT32_MIN, INT32_MAX, 131072, -4, 92682, -1}, 6);
    run(NCL_INT32, NCL_PROD, a, b,
        (int32_t[]){INT32_MAX, INT32_MIN, 0, -21, (int32_t)(46341u * 46341u), 0}, 6);
    run(NCL_INT32, NCL_MAX, a, b, (int32_t[]){INT32_MAX, -1, 65536, 3, 46341, 0}, 6);
    run(NCL_INT32, NCL_MIN, a, b, (int32_t[]){1, INT32_MIN, 65536, -7, 46341, -1}, 6);
}

static void test_uint32(void **state)
{
    (void)state;
    const uint32_t a[] = {0xffffffffu, 65536u, 0x80000000u, 7u, 0u};
    const uint32_t b[] = {2u, 65536u, 0x7fffffffu, 3u, 0xffffffffu};
    run(NCL_UINT32, NCL_SUM, a, b, (uint32_t[]){1u, 131072u, 0xffffffffu, 10u, 0xffffffffu}, 5);
    run(NCL_UINT32, NCL_PROD, a, b, (uint32_t[]){0xfffffffeu, 0u, 0x80000000u, 21u, 0u}, 5);
    run(NCL_UINT32, NCL_MAX, a, b, (uint32_t[]){0xffffffffu, 65536u, 0x80000000u, 7u, 0xffffffffu}, 5);
    run(NCL_UINT32, NCL_MIN, a, b, (uint32_t[]){2u, 65536u, 0x7fffffffu, 3u, 0u}, 5);
}

static void test_int64(void **state)
{
    (void)state;
    const int64_t a[] = {INT64_MAX, INT64_MIN, 4294967296ll, -3, 5};
    const int64_t b[] = {1, -1, 4294967296ll, 5, -9};
    run(NCL_INT64, NCL_SUM, a, b, (int64_t[]){INT64_MIN, INT64_MAX, 8589934592ll, 2, -4}, 5);
    run(NCL_INT64, NCL_PROD, a, b, (int64_t[]){INT64_MAX, INT64_MIN, 0, -15, -45}, 5);
    run(NCL_INT64, NCL_MAX, a, b, (int64_t[]){INT64_MAX, -1, 4294967296ll, 5, 5}, 5);
    run(NCL_INT64, NCL_MIN, a, b, (int64_t[]){1, INT64_MIN, 4294967296ll, -3, -9}, 5);
}

/* Native unsigned integers of 1, 4 or 8 bytes, whatever the byte order. */
static void store_uint(void *p, size_t size, uint64_t v)
{
    uint8_t v8 = (uint8_t)v;
    uint32_t v32 = (uint32_t)v;
    memcpy(p, size == 1 ? (const void *)&v8 : size == 4 ? (const void *)&v32 : (const void *)&v, size);
}

static uint64_t load_uint(const void *p, size_t size)
{
    uint8_t v8;
    uint32_t v32;
    uint64_t v64;
    memcpy(size == 1 ? (void *)&v8 : size == 4 ? (void *)&v32 : (void *)&v64, p, size);
    return size == 1 ? v8 : size == 4 ? v32 : v64;
}

/* Long random integer vectors (vector loops plus tails) of every integer type, against
 * arithmetic modulo 2^64 cut to the width: the definition of two's complement wraparound. */
static void test_int_random(void **state)
{
    (void)state;
    enum { N = 1000 };
    static const struct {
        ncl_dtype dt;
        int bits;
        int is_signed;
    } types[] = {{NCL_INT8, 8, 1}, {NCL_UINT8, 8, 0}, {NCL_INT32, 32, 1}, {NCL_UINT32, 32, 0},
                 {NCL_INT64, 64, 1}};
    static uint64_t xa[N], xb[N];
    static unsigned char a[N * 8], b[N * 8], r[N * 8];
    uint64_t s = 7;
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        size_t es = ncl_dtype_size(types[t].dt);
        uint64_t mask = types[t].bits == 64 ? ~0ull : (1ull << types[t].bits) - 1u;
        uint64_t sign = 1ull << (types[t].bits - 1);
        for (int i = 0; i < N; i++) {
            xa[i] = rng_next(&s) & mask;
            xb[i] = rng_next(&s) & mask;
            if (i % 5 == 0)
                xa[i] = xa[i] % 300u; /* small values too: products that do not wrap */
            store_uint(a + i * es, es, xa[i]);
            store_uint(b + i * es, es, xb[i]);
        }
        for (int op = 0; op < NCL_OP_COUNT; op++) {
            memcpy(r, a, N * es);
            ncl_reduce_kernel(r, b, N, types[t].dt, (ncl_op)op);
            for (int i = 0; i < N; i++) {
                uint64_t x = xa[i], y = xb[i], e;
                /* order-preserving key: flip the sign bit of signed values */
                uint64_t kx = types[t].is_signed ? x ^ sign : x, ky = types[t].is_signed ? y ^ sign : y;
                switch (op) {
                case NCL_PROD: e = (x * y) & mask; break;
                case NCL_MAX: e = kx > ky ? x : y; break;
                case NCL_MIN: e = kx < ky ? x : y; break;
                default: e = (x + y) & mask; break;
                }
                uint64_t got = load_uint(r + i * es, es);
                if (got != e)
                    fail_msg("%s %s %llx %llx: got %llx want %llx", ncl_dtype_name(types[t].dt),
                             ncl_op_name((ncl_op)op), (unsigned long long)x, (unsigned long long)y,
                             (unsigned long long)got, (unsigned long long)e);
            }
        }
    }
}

/* ---- float kernels --------------------------------------------------------------------------- */

static void test_float32(void **state)
{
    (void)state;
    const float a[] = {1.5f, -2.0f, 0x1p127f, 3.0f, -0.0f, 1e-30f};
    const float b[] = {2.25f, 0.5f, 0x1p127f, -3.0f, -0.0f, 1e-30f};
    run(NCL_FLOAT32, NCL_SUM, a, b,
        (float[]){3.75f, -1.5f, ffrom(0x7f800000u), 0.0f, -0.0f, 1e-30f + 1e-30f}, 6);
    run(NCL_FLOAT32, NCL_PROD, a, b,
        (float[]){3.375f, -1.0f, ffrom(0x7f800000u), -9.0f, 0.0f, 1e-30f * 1e-30f}, 6);
    run(NCL_FLOAT32, NCL_MAX, a, b, (float[]){2.25f, 0.5f, 0x1p127f, 3.0f, -0.0f, 1e-30f}, 6);
    run(NCL_FLOAT32, NCL_MIN, a, b, (float[]){1.5f, -2.0f, 0x1p127f, -3.0f, -0.0f, 1e-30f}, 6);
}

static void test_float64(void **state)
{
    (void)state;
    const double a[] = {1.5, -2.0, 0x1p1023, 3.0, -0.0, 0.1};
    const double b[] = {2.25, 0.5, 0x1p1023, -3.0, -0.0, 0.2};
    run(NCL_FLOAT64, NCL_SUM, a, b,
        (double[]){3.75, -1.5, dfrom(0x7ff0000000000000ull), 0.0, -0.0, 0.1 + 0.2}, 6);
    run(NCL_FLOAT64, NCL_PROD, a, b,
        (double[]){3.375, -1.0, dfrom(0x7ff0000000000000ull), -9.0, 0.0, 0.1 * 0.2}, 6);
    run(NCL_FLOAT64, NCL_MAX, a, b, (double[]){2.25, 0.5, 0x1p1023, 3.0, -0.0, 0.2}, 6);
    run(NCL_FLOAT64, NCL_MIN, a, b, (double[]){1.5, -2.0, 0x1p1023, -3.0, -0.0, 0.1}, 6);
}

static void test_half_small(void **state)
{
    (void)state;
    /* 1+2, 1+2^-11 (tie -> 1), 1.5*1.5, -0.5+0.25 */
    const uint16_t a[] = {0x3c00, 0x3c00, 0x3e00, 0xb800};
    const uint16_t b[] = {0x4000, 0x1000, 0x3e00, 0x3400};
    run(NCL_FLOAT16, NCL_SUM, a, b, (uint16_t[]){0x4200, 0x3c00, 0x4200, 0xb400}, 4);
    run(NCL_FLOAT16, NCL_PROD, a, b, (uint16_t[]){0x4000, 0x1000, 0x4080, 0xb000}, 4);
    run(NCL_FLOAT16, NCL_MAX, a, b, (uint16_t[]){0x4000, 0x3c00, 0x3e00, 0x3400}, 4);
    run(NCL_FLOAT16, NCL_MIN, a, b, (uint16_t[]){0x3c00, 0x1000, 0x3e00, 0xb800}, 4);
    /* bf16: 1+2, 1+2^-8 (tie -> 1), 1.5*1.5, -0.5+0.25 */
    const uint16_t c[] = {0x3f80, 0x3f80, 0x3fc0, 0xbf00};
    const uint16_t d[] = {0x4000, 0x3b80, 0x3fc0, 0x3e80};
    run(NCL_BFLOAT16, NCL_SUM, c, d, (uint16_t[]){0x4040, 0x3f80, 0x4040, 0xbe80}, 4);
    run(NCL_BFLOAT16, NCL_PROD, c, d, (uint16_t[]){0x4000, 0x3b80, 0x4010, 0xbe00}, 4);
    run(NCL_BFLOAT16, NCL_MAX, c, d, (uint16_t[]){0x4000, 0x3f80, 0x3fc0, 0x3e80}, 4);
    run(NCL_BFLOAT16, NCL_MIN, c, d, (uint16_t[]){0x3f80, 0x3b80, 0x3fc0, 0xbf00}, 4);
}

/* max/min over every pair of special values, for the four float types, both operand orders:
 * a NaN gives the canonical +qNaN, +0 beats -0, otherwise the numerically larger/smaller. */
typedef struct ftype {
    ncl_dtype dt;
    size_t size;
    uint64_t qnan;
} ftype;

static int ft_isnan(const ftype *t, uint64_t v)
{
    switch (t->dt) {
    case NCL_FLOAT16: return fmt_isnan(&fp16_fmt, (uint16_t)v);
    case NCL_BFLOAT16: return fmt_isnan(&bf16_fmt, (uint16_t)v);
    case NCL_FLOAT32: return f32_isnan((uint32_t)v);
    default: return f64_isnan(v);
    }
}

static double ft_value(const ftype *t, uint64_t v)
{
    switch (t->dt) {
    case NCL_FLOAT16: return (v & 0x7fffu) == 0x7c00u ? ((v & 0x8000u) ? -1e300 : 1e300)
                                                      : fmt_decode(&fp16_fmt, (uint16_t)v);
    case NCL_BFLOAT16: return (v & 0x7fffu) == 0x7f80u ? ((v & 0x8000u) ? -1e300 : 1e300)
                                                       : fmt_decode(&bf16_fmt, (uint16_t)v);
    case NCL_FLOAT32: return (double)ffrom((uint32_t)v);
    default: return dfrom(v);
    }
}

/* One element of the type, held in a uint64_t, through the kernel (endian-independent). */
static uint64_t elem_op(const ftype *t, uint64_t a, uint64_t b, ncl_op op)
{
    if (t->size == 2) {
        uint16_t x = (uint16_t)a, y = (uint16_t)b;
        ncl_reduce_kernel(&x, &y, 1, t->dt, op);
        return x;
    }
    if (t->size == 4) {
        uint32_t x = (uint32_t)a, y = (uint32_t)b;
        ncl_reduce_kernel(&x, &y, 1, t->dt, op);
        return x;
    }
    ncl_reduce_kernel(&a, &b, 1, t->dt, op);
    return a;
}

static void check_maxmin_pairs(const ftype *t, const uint64_t *vals, size_t n)
{
    uint64_t sign = 1ull << (t->size * 8 - 1);
    for (int op = NCL_MAX; op <= NCL_MIN; op++) {
        for (size_t i = 0; i < n; i++) {
            for (size_t j = 0; j < n; j++) {
                uint64_t a = vals[i], b = vals[j], expect;
                uint64_t r = elem_op(t, a, b, (ncl_op)op), r2 = elem_op(t, b, a, (ncl_op)op);
                if (ft_isnan(t, a) || ft_isnan(t, b)) {
                    expect = t->qnan;
                } else {
                    double x = ft_value(t, a), y = ft_value(t, b);
                    if (x != y)
                        expect = (op == NCL_MAX) == (x > y) ? a : b;
                    else if (a == b)
                        expect = a;
                    else /* +0 and -0 */
                        expect = op == NCL_MAX ? 0 : sign;
                }
                if (r != expect || r2 != expect)
                    fail_msg("%s %s %llx %llx: got %llx / %llx want %llx", ncl_dtype_name(t->dt),
                             ncl_op_name((ncl_op)op), (unsigned long long)a, (unsigned long long)b,
                             (unsigned long long)r, (unsigned long long)r2,
                             (unsigned long long)expect);
            }
        }
    }
}

static void test_maxmin_specials(void **state)
{
    (void)state;
    static const uint64_t h16[] = {0x0000, 0x8000, 0x3c00, 0xbc00, 0x7c00, 0xfc00, 0x7e00, 0xfe00,
                                   0x7c01, 0x7fff, 0x0001, 0x8001, 0x7bff, 0xfbff, 0x3c01};
    static const uint64_t b16[] = {0x0000, 0x8000, 0x3f80, 0xbf80, 0x7f80, 0xff80, 0x7fc0, 0xffc0,
                                   0x7f81, 0x7fff, 0x0001, 0x8001, 0x7f7f, 0xff7f, 0x3f81};
    static const uint64_t f32[] = {0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x7f800000,
                                   0xff800000, 0x7fc00000, 0xffc00000, 0x7f800001, 0x7fffffff,
                                   0x00000001, 0x80000001, 0x7f7fffff, 0xff7fffff, 0x3f800001};
    static const uint64_t f64[] = {
        0x0000000000000000ull, 0x8000000000000000ull, 0x3ff0000000000000ull, 0xbff0000000000000ull,
        0x7ff0000000000000ull, 0xfff0000000000000ull, 0x7ff8000000000000ull, 0xfff8000000000000ull,
        0x7ff0000000000001ull, 0x7fffffffffffffffull, 0x0000000000000001ull, 0x8000000000000001ull,
        0x7fefffffffffffffull, 0xffefffffffffffffull, 0x3ff0000000000001ull};
    const ftype th = {NCL_FLOAT16, 2, 0x7e00}, tb = {NCL_BFLOAT16, 2, 0x7fc0};
    const ftype tf = {NCL_FLOAT32, 4, 0x7fc00000u}, td = {NCL_FLOAT64, 8, 0x7ff8000000000000ull};
    check_maxmin_pairs(&th, h16, sizeof h16 / sizeof h16[0]);
    check_maxmin_pairs(&tb, b16, sizeof b16 / sizeof b16[0]);
    check_maxmin_pairs(&tf, f32, sizeof f32 / sizeof f32[0]);
    check_maxmin_pairs(&td, f64, sizeof f64 / sizeof f64[0]);
}

/* The same rules hold in the vectorised loops: long vectors of special values. */
static void test_maxmin_long_vectors(void **state)
{
    (void)state;
    enum { N = 203 };
    static float a[N], b[N], r[N];
    static double da[N], db[N], dr[N];
    const uint32_t sp[] = {0x00000000u, 0x80000000u, 0x7fc00000u, 0xffc00001u, 0x3f800000u,
                           0xbf800000u, 0x7f800000u, 0xff800000u};
    for (int i = 0; i < N; i++) {
        a[i] = ffrom(sp[i % 8]);
        b[i] = ffrom(sp[(i / 8) % 8]);
        da[i] = (double)a[i];
        db[i] = (double)b[i];
    }
    for (int op = NCL_MAX; op <= NCL_MIN; op++) {
        memcpy(r, a, sizeof r);
        memcpy(dr, da, sizeof dr);
        ncl_reduce_kernel(r, b, N, NCL_FLOAT32, (ncl_op)op);
        ncl_reduce_kernel(dr, db, N, NCL_FLOAT64, (ncl_op)op);
        for (int i = 0; i < N; i++) {
            float one = a[i];
            double done = da[i];
            ncl_reduce_kernel(&one, &b[i], 1, NCL_FLOAT32, (ncl_op)op);
            ncl_reduce_kernel(&done, &db[i], 1, NCL_FLOAT64, (ncl_op)op);
            assert_int_equal(fbits(r[i]), fbits(one));
            assert_int_equal(dbits(dr[i]), dbits(done));
            if (f32_isnan(fbits(a[i])) || f32_isnan(fbits(b[i]))) {
                assert_int_equal(fbits(r[i]), 0x7fc00000u);
                assert_int_equal(dbits(dr[i]), 0x7ff8000000000000ull);
            }
        }
    }
}

/* ---- aliasing, bad arguments ----------------------------------------------------------------- */

/* dst == src gives what a separate copy of the same data gives, for every dtype and op. */
static void test_alias(void **state)
{
    (void)state;
    enum { N = 301 };
    static unsigned char src[N * 8], self[N * 8], sep[N * 8];
    uint64_t s = 11;
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (unsigned char)rng_next(&s);
    for (int dt = 0; dt < NCL_DTYPE_COUNT; dt++) {
        for (int op = 0; op < NCL_OP_COUNT; op++) {
            size_t bytes = N * ncl_dtype_size((ncl_dtype)dt);
            memcpy(self, src, bytes);
            memcpy(sep, src, bytes);
            ncl_reduce_kernel(self, self, N, (ncl_dtype)dt, (ncl_op)op);
            ncl_reduce_kernel(sep, src, N, (ncl_dtype)dt, (ncl_op)op);
            assert_memory_equal(self, sep, bytes);
        }
    }
    /* and a concrete one: x + x = 2x, x * x = x^2 */
    float f[] = {1.5f, -3.0f, 0.0f};
    ncl_reduce_kernel(f, f, 3, NCL_FLOAT32, NCL_SUM);
    assert_true(f[0] == 3.0f && f[1] == -6.0f && f[2] == 0.0f);
    int8_t c[] = {100, -128, 16};
    ncl_reduce_kernel(c, c, 3, NCL_INT8, NCL_PROD);
    assert_int_equal(c[0], 16);
    assert_int_equal(c[1], 0);
    assert_int_equal(c[2], 0);
}

/* ncl_reduce3_kernel(dst, a, b) is a copy of a into dst, then ncl_reduce_kernel(dst, b): bit for
 * bit, for every dtype and op on random bits (NaNs, infinities and denormals included); a == b too. */
static void test_reduce3(void **state)
{
    (void)state;
    enum { N = 301 };
    static unsigned char a[N * 8], b[N * 8], three[N * 8], two[N * 8];
    uint64_t s = 23;
    for (size_t i = 0; i < sizeof a; i++) {
        a[i] = (unsigned char)rng_next(&s);
        b[i] = (unsigned char)rng_next(&s);
    }
    for (int dt = 0; dt < NCL_DTYPE_COUNT; dt++) {
        for (int op = 0; op < NCL_OP_COUNT; op++) {
            size_t bytes = N * ncl_dtype_size((ncl_dtype)dt);
            for (int same = 0; same < 2; same++) {
                const unsigned char *y = same ? a : b;
                memcpy(two, a, bytes);
                ncl_reduce_kernel(two, y, N, (ncl_dtype)dt, (ncl_op)op);
                ncl_reduce3_kernel(three, a, y, N, (ncl_dtype)dt, (ncl_op)op);
                assert_memory_equal(three, two, bytes);
            }
        }
    }
    int32_t d[] = {7, 7}, x[] = {1, 2}, y[] = {3, 4};
    ncl_reduce3_kernel(d, x, y, 2, NCL_INT32, NCL_PROD);
    assert_true(d[0] == 3 && d[1] == 8);
    ncl_reduce3_kernel(d, x, y, 2, NCL_DTYPE_COUNT, NCL_SUM); /* refused: left as is */
    ncl_reduce3_kernel(d, x, y, 2, NCL_INT32, NCL_OP_COUNT);
    assert_true(d[0] == 3 && d[1] == 8);
}

static void test_bad_arguments_are_noops(void **state)
{
    (void)state;
    int32_t d[] = {1, 2, 3}, s[] = {4, 5, 6};
    ncl_reduce_kernel(d, s, 3, NCL_DTYPE_COUNT, NCL_SUM);
    ncl_reduce_kernel(d, s, 3, (ncl_dtype)-1, NCL_SUM);
    ncl_reduce_kernel(d, s, 3, NCL_INT32, NCL_OP_COUNT);
    ncl_reduce_kernel(d, s, 0, NCL_INT32, NCL_SUM);
    ncl_reduce_kernel(NULL, NULL, 0, NCL_INT32, NCL_SUM);
    ncl_div_kernel(d, 3, NCL_DTYPE_COUNT, 2);
    ncl_div_kernel(d, 3, NCL_INT32, 0); /* by zero: left as is */
    ncl_div_kernel(d, 3, NCL_INT32, 1);
    ncl_div_kernel(NULL, 0, NCL_INT32, 2);
    assert_int_equal(d[0], 1);
    assert_int_equal(d[1], 2);
    assert_int_equal(d[2], 3);
}

/* ---- divide ---------------------------------------------------------------------------------- */

static void test_div_integers(void **state)
{
    (void)state;
    int8_t i8[] = {-7, 7, -128, 127, -1, 0};
    ncl_div_kernel(i8, 6, NCL_INT8, 2);
    assert_memory_equal(i8, ((int8_t[]){-3, 3, -64, 63, 0, 0}), sizeof i8);
    int8_t j8[] = {-7, 100, -100};
    ncl_div_kernel(j8, 3, NCL_INT8, 3);
    assert_memory_equal(j8, ((int8_t[]){-2, 33, -33}), sizeof j8);
    int8_t k8[] = {-100, 100};
    ncl_div_kernel(k8, 2, NCL_INT8, 1000);
    assert_memory_equal(k8, ((int8_t[]){0, 0}), sizeof k8);

    uint8_t u8[] = {255, 7, 1};
    ncl_div_kernel(u8, 3, NCL_UINT8, 2);
    assert_memory_equal(u8, ((uint8_t[]){127, 3, 0}), sizeof u8);
    uint8_t v8[] = {255};
    ncl_div_kernel(v8, 1, NCL_UINT8, 256);
    assert_int_equal(v8[0], 0);

    int32_t i32[] = {-7, 7, INT32_MIN, INT32_MAX, -5};
    ncl_div_kernel(i32, 5, NCL_INT32, 3);
    assert_memory_equal(i32, ((int32_t[]){-2, 2, INT32_MIN / 3, INT32_MAX / 3, -1}), sizeof i32);
    int32_t j32[] = {INT32_MIN, -1};
    ncl_div_kernel(j32, 2, NCL_INT32, 0xffffffffu);
    assert_memory_equal(j32, ((int32_t[]){0, 0}), sizeof j32);

    uint32_t u32[] = {0xffffffffu, 5u};
    ncl_div_kernel(u32, 2, NCL_UINT32, 2);
    assert_memory_equal(u32, ((uint32_t[]){0x7fffffffu, 2u}), sizeof u32);
    uint32_t v32[] = {0xffffffffu, 0xfffffffeu};
    ncl_div_kernel(v32, 2, NCL_UINT32, 0xffffffffu);
    assert_memory_equal(v32, ((uint32_t[]){1u, 0u}), sizeof v32);

    int64_t i64[] = {-7, INT64_MIN, INT64_MAX, -3};
    ncl_div_kernel(i64, 4, NCL_INT64, 4);
    assert_memory_equal(i64, ((int64_t[]){-1, INT64_MIN / 4, INT64_MAX / 4, 0}), sizeof i64);
    int64_t j64[] = {INT64_MIN};
    ncl_div_kernel(j64, 1, NCL_INT64, 0xffffffffu);
    assert_true(j64[0] == INT64_MIN / 4294967295ll);
}

static void test_div_floats(void **state)
{
    (void)state;
    float f[] = {1.0f, -3.0f, 0.0f, -0.0f};
    ncl_div_kernel(f, 4, NCL_FLOAT32, 3);
    assert_int_equal(fbits(f[0]), fbits(0x1.555556p-2f));
    assert_true(f[1] == -1.0f);
    assert_int_equal(fbits(f[2]), 0x00000000u);
    assert_int_equal(fbits(f[3]), 0x80000000u);
    double d[] = {1.0, -10.0};
    ncl_div_kernel(d, 2, NCL_FLOAT64, 3);
    assert_int_equal(dbits(d[0]), dbits(0x1.5555555555555p-2));
    assert_true(d[1] == -10.0 / 3.0);

    /* a true division, not a multiplication by a rounded reciprocal */
    enum { M = 1000 };
    static float fv[M];
    static double dv[M];
    for (int i = 0; i < M; i++) {
        fv[i] = (float)(i - M / 2) * 1.25f;
        dv[i] = (double)(i - M / 2) * 1.25;
    }
    ncl_div_kernel(fv, M, NCL_FLOAT32, 7);
    ncl_div_kernel(dv, M, NCL_FLOAT64, 7);
    for (int i = 0; i < M; i++) {
        volatile float fx = (float)(i - M / 2) * 1.25f;
        volatile double dx = (double)(i - M / 2) * 1.25;
        assert_int_equal(fbits(fv[i]), fbits(fx / 7.0f));
        assert_int_equal(dbits(dv[i]), dbits(dx / 7.0));
    }

    uint16_t h[] = {0x3c00, 0x4000, 0x3e00, 0x7c00, 0x7e00};
    ncl_div_kernel(h, 5, NCL_FLOAT16, 3);
    assert_memory_equal(h, ((uint16_t[]){0x3555, 0x3955, 0x3800, 0x7c00, 0x7e00}), sizeof h);

    /* every finite fp16 and bf16 value, small divisors: rounded once, correctly */
    static uint16_t all[0x10000];
    static const uint32_t divisors[] = {2, 3, 5, 7, 8, 24};
    const fmt16 *fmts[] = {&fp16_fmt, &bf16_fmt};
    const ncl_dtype dts[] = {NCL_FLOAT16, NCL_BFLOAT16};
    for (int t = 0; t < 2; t++) {
        for (size_t k = 0; k < sizeof divisors / sizeof divisors[0]; k++) {
            uint32_t n = 0;
            for (uint32_t v = 0; v < 0x10000u; v++)
                if ((v & 0x7fffu) < fmts[t]->inf)
                    all[n++] = (uint16_t)v;
            ncl_div_kernel(all, n, dts[t], divisors[k]);
            n = 0;
            for (uint32_t v = 0; v < 0x10000u; v++) {
                if ((v & 0x7fffu) >= fmts[t]->inf)
                    continue;
                /* the double quotient rounds once more, harmlessly: 53 >= 2*11 + 2 */
                uint16_t expect = fmt_round(fmts[t], fmt_decode(fmts[t], (uint16_t)v) / divisors[k]);
                if (all[n] != expect)
                    fail_msg("%s %04x / %u: got %04x want %04x", ncl_dtype_name(dts[t]), v,
                             divisors[k], all[n], expect);
                n++;
            }
        }
    }
}


/* Wide accumulation kernels against plain C on every fp16 and bf16 value: widening is exact,
 * the wide reduce is one fp32 operation, narrowing rounds once (with avg's division in fp32),
 * from buffers that are only 2-byte aligned; non-narrow dtypes are no-ops. */
static void test_wide_kernels(void **state)
{
    (void)state;
    enum { N = 65536 };
    uint16_t *h = malloc(N * 2 + 2), *back = malloc(N * 2 + 2);
    unsigned char *raw = malloc(N * 4 + 8), *w = raw + 2; /* deliberately not 4-byte aligned */
    for (int bf = 0; bf < 2; bf++) {
        const ncl_dtype dt = bf ? NCL_BFLOAT16 : NCL_FLOAT16;
        for (uint32_t i = 0; i < N; i++)
            h[i] = (uint16_t)i;
        ncl_widen_kernel(w, h, N, dt);
        for (uint32_t i = 0; i < N; i++) {
            float f, want = bf ? ncl_bf16_to_float(h[i]) : ncl_fp16_to_float(h[i]);
            memcpy(&f, w + 4 * i, 4);
            assert_memory_equal(&f, &want, 4); /* bit for bit, NaNs included */
        }
        /* x + x in fp32 then narrow: exact doubling unless it overflows the narrow type */
        ncl_reduce_wide_kernel(w, h, N, dt, NCL_SUM);
        ncl_narrow_kernel(back, w, N, dt, 0);
        for (uint32_t i = 0; i < N; i++) {
            float x = bf ? ncl_bf16_to_float(h[i]) : ncl_fp16_to_float(h[i]);
            uint16_t want = bf ? ncl_float_to_bf16(x + x) : ncl_float_to_fp16(x + x);
            assert_int_equal(back[i], want);
        }
        /* avg's step: (x + x) / 3 divided in fp32, rounded once */
        ncl_narrow_kernel(back, w, N, dt, 3);
        for (uint32_t i = 0; i < N; i++) {
            float x = bf ? ncl_bf16_to_float(h[i]) : ncl_fp16_to_float(h[i]);
            uint16_t want = bf ? ncl_float_to_bf16((x + x) / 3.0f) : ncl_float_to_fp16((x + x) / 3.0f);
            assert_int_equal(back[i], want);
        }
    }
    /* sums that narrow accumulation loses: 1 + 2^-11 + 2^-11 in fp16 is 1 step by step
     * (ties to even), 1 + 2^-10 once in fp32 */
    uint16_t one = 0x3c00u, tiny[2] = {0x1000u, 0x1000u}, out = 0;
    float acc;
    ncl_widen_kernel(&acc, &one, 1, NCL_FLOAT16);
    ncl_reduce_wide_kernel(&acc, &tiny[0], 1, NCL_FLOAT16, NCL_SUM);
    ncl_reduce_wide_kernel(&acc, &tiny[1], 1, NCL_FLOAT16, NCL_SUM);
    ncl_narrow_kernel(&out, &acc, 1, NCL_FLOAT16, 0);
    assert_int_equal(out, 0x3c01u);
    uint16_t narrow = one;
    ncl_reduce_kernel(&narrow, &tiny[0], 1, NCL_FLOAT16, NCL_SUM);
    ncl_reduce_kernel(&narrow, &tiny[1], 1, NCL_FLOAT16, NCL_SUM);
    assert_int_equal(narrow, 0x3c00u);
    /* prod, max, min in fp32 */
    uint16_t two = 0x4000u, three = 0x4200u;
    ncl_widen_kernel(&acc, &two, 1, NCL_FLOAT16);
    ncl_reduce_wide_kernel(&acc, &three, 1, NCL_FLOAT16, NCL_PROD);
    assert_true(acc == 6.0f);
    ncl_reduce_wide_kernel(&acc, &three, 1, NCL_FLOAT16, NCL_MIN);
    assert_true(acc == 3.0f);
    ncl_reduce_wide_kernel(&acc, &two, 1, NCL_FLOAT16, NCL_MAX);
    assert_true(acc == 3.0f);
    /* other dtypes: untouched */
    acc = 5.0f;
    out = 0x1234u;
    ncl_widen_kernel(&acc, &one, 1, NCL_FLOAT32);
    ncl_reduce_wide_kernel(&acc, &one, 1, NCL_INT32, NCL_SUM);
    ncl_narrow_kernel(&out, &acc, 1, NCL_FLOAT64, 0);
    assert_true(acc == 5.0f);
    assert_int_equal(out, 0x1234u);
    free(h);
    free(back);
    free(raw);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes_and_names),
        cmocka_unit_test(test_wide_kernels),
        cmocka_unit_test(test_fp16_decode_and_roundtrip_all),
        cmocka_unit_test(test_fp16_rounding),
        cmocka_unit_test(test_fp16_random_floats),
        cmocka_unit_test(test_bf16_decode_and_roundtrip_all),
        cmocka_unit_test(test_bf16_rounding),
        cmocka_unit_test(test_fp16_arith_correctly_rounded),
        cmocka_unit_test(test_bf16_arith_correctly_rounded),
        cmocka_unit_test(test_half_special_arith),
        cmocka_unit_test(test_int8),
        cmocka_unit_test(test_uint8),
        cmocka_unit_test(test_int32),
        cmocka_unit_test(test_uint32),
        cmocka_unit_test(test_int64),
        cmocka_unit_test(test_int_random),
        cmocka_unit_test(test_float32),
        cmocka_unit_test(test_float64),
        cmocka_unit_test(test_half_small),
        cmocka_unit_test(test_maxmin_specials),
        cmocka_unit_test(test_maxmin_long_vectors),
        cmocka_unit_test(test_alias),
        cmocka_unit_test(test_reduce3),
        cmocka_unit_test(test_bad_arguments_are_noops),
        cmocka_unit_test(test_div_integers),
        cmocka_unit_test(test_div_floats),
    };
    return cmocka_run_group_tests_name("dtype", tests, setup_formats, NULL);
}
