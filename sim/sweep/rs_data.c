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

/* Float inputs of sum/avg and prod as exact integers (the caller converts to the type). */
static int64_t rs_float_value(const rs_stream *s, uint64_t index, uint64_t h)
{
    if (s->cls == 1) {
        uint64_t who = rs_below(rs_mix(s->common + (index + 1) * RS_GOLDEN), (uint64_t)s->nranks);
        int64_t mag = ((uint64_t)s->rank == who) ? 2 : 1;
        return (h & 1) ? -mag : mag;
    }
    if (s->range == 0) {
        /* More ranks than exact integers: only the first `limit` ranks give -1, 0 or +1, so
         * every partial sum still stays exact. */
        return (s->rank < s->limit) ? (int64_t)rs_below(h, 3) - 1 : 0;
    }
    return (int64_t)rs_below(h, (uint64_t)(2 * s->range + 1)) - s->range;
}

void rs_data_fill(void *buf, uint64_t count, ncl_dtype dt, ncl_op op, int nranks, int rank,
                  uint64_t seed, uint64_t index_base)
{
    if (buf == NULL || count == 0 || (unsigned)dt >= NCL_DTYPE_COUNT)
        return;
    rs_stream s = rs_stream_make(dt, op, nranks, rank, seed);
    /* Integer types: every op is exact under wrapping, so use all the bits (prod: odd). */
    uint64_t int_or = (s.cls == 1) ? 1u : 0u;
    switch (dt) {
    case NCL_INT8:
    case NCL_UINT8: {
        uint8_t *p = buf;
        for (uint64_t i = 0; i < count; i++)
            p[i] = (uint8_t)(rs_hash(&s, index_base + i) | int_or);
        break;
    }
    case NCL_INT32:
    case NCL_UINT32: {
        uint32_t *p = buf;
        for (uint64_t i = 0; i < count; i++)
            p[i] = (uint32_t)(rs_hash(&s, index_base + i) | int_or);
        break;
    }
    case NCL_INT64: {
        uint64_t *p = buf;
        for (uint64_t i = 0; i < count; i++)
            p[i] = rs_hash(&s, index_base + i) | int_or;
        break;
    }
    case NCL_FLOAT16:
    case NCL_BFLOAT16: {
        uint16_t *p = buf;
        /* exponent all ones = Inf/NaN: clearing its top bit keeps the value finite */
        uint16_t exp_mask = (dt == NCL_FLOAT16) ? 0x7c00u : 0x7f80u;
        uint16_t exp_top = 0x4000u;
        for (uint64_t i = 0; i < count; i++) {
            uint64_t idx = index_base + i, h = rs_hash(&s, idx);
            if (s.cls == 2) {
                uint16_t b = (uint16_t)h;
                p[i] = ((b & exp_mask) == exp_mask) ? (uint16_t)(b & ~exp_top) : b;
            } else {
                float v = (float)rs_float_value(&s, idx, h);
                p[i] = (dt == NCL_FLOAT16) ? ncl_float_to_fp16(v) : ncl_float_to_bf16(v);
            }
        }
        break;
    }
    case NCL_FLOAT32: {
        float *p = buf;
        for (uint64_t i = 0; i < count; i++) {
            uint64_t idx = index_base + i, h = rs_hash(&s, idx);
            if (s.cls == 2) {
                uint32_t b = (uint32_t)h;
                if ((b & 0x7f800000u) == 0x7f800000u)
                    b &= ~0x40000000u;
                memcpy(&p[i], &b, sizeof b);
            } else {
                p[i] = (float)rs_float_value(&s, idx, h);
            }
        }
        break;
    }
    case NCL_FLOAT64: {
        double *p = buf;
        for (uint64_t i = 0; i < count; i++) {
            uint64_t idx = index_base + i, h = rs_hash(&s, idx);
            if (s.cls == 2) {
                uint64_t b = h;
                if ((b & 0x7ff0000000000000ull) == 0x7ff0000000000000ull)
                    b &= ~0x4000000000000000ull;
                memcpy(&p[i], &b, sizeof b);
            } else {
                p[i] = (double)rs_float_value(&s, idx, h);
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
