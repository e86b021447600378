/* rs_data.c — test inputs from (seed, rank, index), expected results, bit-exact comparison. */
#include "rs_data.h"

#include <string.h>

#include "ncl/ncl_dtype.h"

#define RS_GOLDEN 0x9e3779b97f4a7c15ull
/* Largest integer magnitude a float type holds exactly with every smaller integer. */
#define RS_EXACT_FP16 2048
#define RS_EXACT_BF16 256
#define RS_EXACT_FP32 (1ll << 24)
/* fp64 could go to 2^53; 2^30 keeps the range draw on the 32-bit fast path. */
#define RS_EXACT_FP64 (1ll << 30)
/* Elements per step of rs_data_expected: a rank's slice lives on the stack. */
#define RS_CHUNK 1024

/* splitmix64's output function: a cheap, well-mixed hash of a 64-bit state. */
static uint64_t rs_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* What one rank's stream of values looks like; everything per element derives from it. */
typedef struct rs_stream {
    uint64_t key;    /* per (seed, rank, op class) */
    uint64_t common; /* per seed only: the same for every rank (prod's "who gives 2") */
    int64_t limit;   /* floats: exact-integer limit of the type */
    int64_t range;   /* sum/avg on floats: values in [-range, range]; 0: more ranks than limit */
    int nranks, rank;
    int cls;         /* 0 sum/avg, 1 prod, 2 max/min */
} rs_stream;

static int64_t rs_exact_limit(ncl_dtype dt)
{
    switch (dt) {
    case NCL_FLOAT16: return RS_EXACT_FP16;
    case NCL_BFLOAT16: return RS_EXACT_BF16;
    case NCL_FLOAT32: return RS_EXACT_FP32;
    case NCL_FLOAT64: return RS_EXACT_FP64;
    default: return 0;
    }
}

static rs_stream rs_stream_make(ncl_dtype dt, ncl_op op, int nranks, int rank, uint64_t seed)
{
    rs_stream s;
    s.cls = (op == NCL_PROD) ? 1 : (op == NCL_MAX || op == NCL_MIN) ? 2 : 0;
    s.nranks = nranks > 0 ? nranks : 1;
    s.rank = rank;
    s.key = rs_mix(seed ^ rs_mix(((uint64_t)(uint32_t)rank << 8) + (uint64_t)s.cls + RS_GOLDEN));
    s.common = rs_mix(seed ^ 0x2545f4914f6cdd1dull);
    s.limit = rs_exact_limit(dt);
    s.range = s.limit / s.nranks;
    return s;
}

static uint64_t rs_hash(const rs_stream *s, uint64_t index)
{
    return rs_mix(s->key + (index + 1) * RS_GOLDEN);
}

/* Uniform in [0, n) for n <= 2^32 by multiply-shift (no division on the hot path). */
static uint64_t rs_below(uint64_t h, uint64_t n)
{
    return ((h >> 32) * n) >> 32;
}

/* Float inputs of sum/avg as exact integers (the caller converts to the type). */
static int64_t rs_float_value(const rs_stream *s, uint64_t h)
{
    if (s->range == 0) {
        /* More ranks than exact integers: only the first `limit` ranks give -1, 0 or +1, so
         * every partial sum still stays exact. */
        return (s->rank < s->limit) ? (int64_t)rs_below(h, 3) - 1 : 0;
    }
    return (int64_t)rs_below(h, (uint64_t)(2 * s->range + 1)) - s->range;
}

/* fp16 bits of an integer |v| <= 2048: exact, so float32's bits re-biased and cut (no rounding:
 * the bits ncl_float_to_fp16 gives, at a fraction of its cost). */
static uint16_t rs_int_to_fp16(int64_t v)
{
    float f = (float)v;
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    uint32_t sign = (b >> 16) & 0x8000u, rebiased = (b & 0x7fffffffu) - (112u << 23);
    return v == 0 ? 0 : (uint16_t)(sign | rebiased >> 13);
}

/* bf16 bits of an integer |v| <= 256: float32's top half, exact (at most 8 significant bits). */
static uint16_t rs_int_to_bf16(int64_t v)
{
    float f = (float)v;
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return (uint16_t)(b >> 16);
}

/* Integer types are the bytes of one hash per 8 bytes of the buffer (the hash is the fill's cost,
 * and the fill most of the correctness matrix's: int8 would pay eight times int64's per byte).
 * Element idx of width es is bits [8 es k, 8 es (k + 1)) of hash idx / per, k = idx % per,
 * per = 8 / es, so any slice agrees with the whole. Inlined per width: constant shifts, merged
 * stores. */
static inline void rs_store_int(void *buf, uint64_t i, unsigned es, uint64_t v)
{
    if (es == 1)
        ((uint8_t *)buf)[i] = (uint8_t)v;
    else if (es == 4)
        ((uint32_t *)buf)[i] = (uint32_t)v;
    else
        ((uint64_t *)buf)[i] = v;
}

static inline void rs_fill_width(void *buf, uint64_t count, const unsigned es, const rs_stream *s,
                                 uint64_t index_base, uint64_t int_or)
{
    const unsigned lg_per = es == 1 ? 3 : es == 4 ? 1 : 0, per = 1u << lg_per;
    uint64_t ors = 0; /* int_or in every element of a word */
    for (unsigned k = 0; k < per; k++)
        ors |= int_or << (8 * es * k);
    for (uint64_t i = 0; i < count;) {
        uint64_t idx = index_base + i, k = idx & (per - 1), h = rs_hash(s, idx >> lg_per) | ors;
        if (k == 0 && count - i >= per) { /* a whole word */
            for (unsigned j = 0; j < per; j++)
                rs_store_int(buf, i + j, es, h >> (8 * es * j));
            i += per;
            continue;
        }
        for (; k < per && i < count; k++, i++) /* the slice's first or last word, in part */
            rs_store_int(buf, i, es, h >> (8 * es * k));
    }
}

static void rs_fill_ints(void *buf, uint64_t count, size_t es, const rs_stream *s, uint64_t index_base,
                         uint64_t int_or)
{
    if (es == 1)
        rs_fill_width(buf, count, 1, s, index_base, int_or);
    else if (es == 4)
        rs_fill_width(buf, count, 4, s, index_base, int_or);
    else
        rs_fill_width(buf, count, 8, s, index_base, int_or);
}

/* One fp16/bf16 sum, avg, max or min input from 16 random bits (a draw in [0, n) by
 * (bits x n) >> 16 reaches every value for the n <= 4097 these use). */
static inline uint16_t rs_half_value(const rs_stream *s, ncl_dtype dt, int cls, uint16_t b)
{
    if (cls == 2) {
        /* exponent all ones = Inf/NaN: clearing its top bit keeps the value finite */
        uint16_t exp_mask = (dt == NCL_FLOAT16) ? 0x7c00u : 0x7f80u;
        return ((b & exp_mask) == exp_mask) ? (uint16_t)(b & ~0x4000u) : b;
    }
    int64_t v = s->range == 0 ? (s->rank < s->limit ? (int64_t)((b * 3u) >> 16) - 1 : 0)
                              : (int64_t)((b * (uint64_t)(2 * s->range + 1)) >> 16) - s->range;
    return (dt == NCL_FLOAT16) ? rs_int_to_fp16(v) : rs_int_to_bf16(v);
}

/* fp16/bf16 take four elements from one hash, 16 bits each, as the integers do. Inlined per type
 * and op class, as rs_fill_width. */
static inline void rs_fill_half_words(uint16_t *p, uint64_t count, const ncl_dtype dt, const int cls,
                                      const rs_stream *s, uint64_t index_base)
{
    for (uint64_t i = 0; i < count;) {
        uint64_t idx = index_base + i, k = idx & 3, h = rs_hash(s, idx >> 2);
        if (k == 0 && count - i >= 4) { /* a whole word */
            for (unsigned j = 0; j < 4; j++)
                p[i + j] = rs_half_value(s, dt, cls, (uint16_t)(h >> (16 * j)));
            i += 4;
            continue;
        }
        for (; k < 4 && i < count; k++, i++) /* the slice's first or last word, in part */
            p[i] = rs_half_value(s, dt, cls, (uint16_t)(h >> (16 * k)));
    }
}

/* Float prod inputs: +-1, and +-2 from the one rank an element's common draw names. Signs are the
 * bits of one hash per 64 elements, the draws 32-bit halves of one common hash per 2 elements. */
static void rs_fill_float_prod(void *buf, uint64_t count, ncl_dtype dt, const rs_stream *s, uint64_t index_base)
{
    uint64_t sign_word = UINT64_MAX, signs = 0, draw_word = UINT64_MAX, draws = 0;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t idx = index_base + i;
        if (idx >> 6 != sign_word)
            sign_word = idx >> 6, signs = rs_hash(s, sign_word);
        if (idx >> 1 != draw_word)
            draw_word = idx >> 1, draws = rs_mix(s->common + (draw_word + 1) * RS_GOLDEN);
        uint64_t who = rs_below(draws << (32 * (idx & 1)), (uint64_t)s->nranks);
        int64_t mag = (uint64_t)s->rank == who ? 2 : 1, v = (signs >> (idx & 63)) & 1 ? -mag : mag;
        switch (dt) {
        case NCL_FLOAT16: ((uint16_t *)buf)[i] = rs_int_to_fp16(v); break;
        case NCL_BFLOAT16: ((uint16_t *)buf)[i] = rs_int_to_bf16(v); break;
        case NCL_FLOAT32: ((float *)buf)[i] = (float)v; break;
        default: ((double *)buf)[i] = (double)v; break;
        }
    }
}

static void rs_fill_halves(uint16_t *p, uint64_t count, ncl_dtype dt, const rs_stream *s, uint64_t index_base)
{
    if (dt == NCL_FLOAT16) {
        if (s->cls == 2)
            rs_fill_half_words(p, count, NCL_FLOAT16, 2, s, index_base);
        else
            rs_fill_half_words(p, count, NCL_FLOAT16, 0, s, index_base);
    } else {
        if (s->cls == 2)
            rs_fill_half_words(p, count, NCL_BFLOAT16, 2, s, index_base);
        else
            rs_fill_half_words(p, count, NCL_BFLOAT16, 0, s, index_base);
    }
}

void rs_data_fill(void *buf, uint64_t count, ncl_dtype dt, ncl_op op, int nranks, int rank,
                  uint64_t seed, uint64_t index_base)
{
    if (buf == NULL || count == 0 || (unsigned)dt >= NCL_DTYPE_COUNT)
        return;
    rs_stream s = rs_stream_make(dt, op, nranks, rank, seed);
    switch (dt) {
    case NCL_INT8:
    case NCL_UINT8:
    case NCL_INT32:
    case NCL_UINT32:
    case NCL_INT64:
        /* every op is exact under wrapping, so use all the bits (prod: odd) */
        rs_fill_ints(buf, count, ncl_dtype_size(dt), &s, index_base, s.cls == 1 ? 1u : 0u);
        break;
    case NCL_FLOAT16:
    case NCL_BFLOAT16:
        if (s.cls == 1)
            rs_fill_float_prod(buf, count, dt, &s, index_base);
        else
            rs_fill_halves(buf, count, dt, &s, index_base);
        break;
    case NCL_FLOAT32: {
        if (s.cls == 1) {
            rs_fill_float_prod(buf, count, dt, &s, index_base);
            break;
        }
        float *p = buf;
        for (uint64_t i = 0; i < count; i++) {
            uint64_t idx = index_base + i, h = rs_hash(&s, idx);
            if (s.cls == 2) {
                uint32_t b = (uint32_t)h;
                if ((b & 0x7f800000u) == 0x7f800000u)
                    b &= ~0x40000000u;
                memcpy(&p[i], &b, sizeof b);
            } else {
                p[i] = (float)rs_float_value(&s, h);
            }
        }
        break;
    }
    case NCL_FLOAT64: {
        if (s.cls == 1) {
            rs_fill_float_prod(buf, count, dt, &s, index_base);
            break;
        }
        double *p = buf;
        for (uint64_t i = 0; i < count; i++) {
            uint64_t idx = index_base + i, h = rs_hash(&s, idx);
            if (s.cls == 2) {
                uint64_t b = h;
                if ((b & 0x7ff0000000000000ull) == 0x7ff0000000000000ull)
                    b &= ~0x4000000000000000ull;
                memcpy(&p[i], &b, sizeof b);
            } else {
                p[i] = (double)rs_float_value(&s, h);
            }
        }
        break;
    }
    default:
        break;
    }
}

void rs_data_expected(void *out, uint64_t count, ncl_dtype dt, ncl_op op, int nranks,
                      uint64_t seed, uint64_t index_base, int contributors_mask_all)
{
    (void)contributors_mask_all; /* only "all ranks" exists so far */
    if (out == NULL || count == 0 || (unsigned)dt >= NCL_DTYPE_COUNT)
        return;
    if (nranks < 1)
        nranks = 1;
    size_t esize = ncl_dtype_size(dt);
    /* uint64_t keeps the scratch aligned for every element type */
    uint64_t tmp[RS_CHUNK];
    for (uint64_t done = 0; done < count; done += RS_CHUNK) {
        uint64_t n = (count - done < RS_CHUNK) ? count - done : RS_CHUNK;
        void *dst = (char *)out + done * esize;
        rs_data_fill(dst, n, dt, op, nranks, 0, seed, index_base + done);
        for (int r = 1; r < nranks; r++) {
            rs_data_fill(tmp, n, dt, op, nranks, r, seed, index_base + done);
            ncl_reduce_kernel(dst, tmp, n, dt, op);
        }
    }
    if (op == NCL_AVG)
        ncl_div_kernel(out, count, dt, (uint32_t)nranks);
}

/* Loads element i of width esize as an unsigned integer. */
static uint64_t rs_load(const void *p, uint64_t i, size_t esize)
{
    const unsigned char *b = (const unsigned char *)p + i * esize;
    switch (esize) {
    case 1: return b[0];
    case 2: { uint16_t v; memcpy(&v, b, 2); return v; }
    case 4: { uint32_t v; memcpy(&v, b, 4); return v; }
    default: { uint64_t v; memcpy(&v, b, 8); return v; }
    }
}

/* Distance in ULPs between two floats given as bit patterns of `bits` width, or UINT64_MAX
 * when either is a NaN (a NaN is never "close"). */
static uint64_t rs_ulp_distance(uint64_t a, uint64_t b, int bits, int mant_bits)
{
    uint64_t sign = 1ull << (bits - 1);
    uint64_t mag_mask = sign - 1;
    uint64_t exp_mask = mag_mask & ~((1ull << mant_bits) - 1);
    uint64_t mant_mask = (1ull << mant_bits) - 1;
    if (((a & exp_mask) == exp_mask && (a & mant_mask)) || ((b & exp_mask) == exp_mask && (b & mant_mask)))
        return UINT64_MAX;
    /* sign-magnitude -> a monotonic signed scale (-0 and +0 both map to 0) */
    int64_t oa = (a & sign) ? -(int64_t)(a & mag_mask) : (int64_t)(a & mag_mask);
    int64_t ob = (b & sign) ? -(int64_t)(b & mag_mask) : (int64_t)(b & mag_mask);
    return oa > ob ? (uint64_t)(oa - ob) : (uint64_t)(ob - oa);
}

uint64_t rs_data_count_wrong(const void *got, const void *want, uint64_t count, ncl_dtype dt,
                             ncl_op op)
{
    if ((unsigned)dt >= NCL_DTYPE_COUNT)
        return count;
    if (count == 0)
        return 0;
    if (got == NULL || want == NULL)
        return count;
    size_t esize = ncl_dtype_size(dt);
    int tolerant = (op == NCL_AVG) && (dt == NCL_FLOAT16 || dt == NCL_BFLOAT16 ||
                                       dt == NCL_FLOAT32 || dt == NCL_FLOAT64);
    int mant_bits = dt == NCL_FLOAT16 ? 10 : dt == NCL_BFLOAT16 ? 7 : dt == NCL_FLOAT32 ? 23 : 52;
    uint64_t wrong = 0;
    if (!tolerant) {
        /* fast path: skip identical stretches with memcmp */
        const unsigned char *g = got, *w = want;
        uint64_t block = 4096 / esize;
        for (uint64_t start = 0; start < count; start += block) {
            uint64_t n = (count - start < block) ? count - start : block;
            if (memcmp(g + start * esize, w + start * esize, n * esize) == 0)
                continue;
            for (uint64_t i = start; i < start + n; i++)
                wrong += rs_load(got, i, esize) != rs_load(want, i, esize);
        }
        return wrong;
    }
    for (uint64_t i = 0; i < count; i++) {
        uint64_t a = rs_load(got, i, esize), b = rs_load(want, i, esize);
        if (a != b && rs_ulp_distance(a, b, (int)(esize * 8), mant_bits) > 2)
            wrong++;
    }
    return wrong;
}
