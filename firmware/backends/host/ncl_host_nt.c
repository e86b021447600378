/* ncl_host_nt.c — the host backend's streaming stores (x86 SSE2): fp32/fp64 reduces written past the cache. */
#include "ncl_host_nt.h"

#include "ncl/ncl_dtype.h"

/* SSE2 is part of x86-64; 32-bit x86 only where its float arithmetic is SSE too (not x87, whose
 * excess precision the portable kernel would then have). */
#if defined(__x86_64__) || (defined(__SSE2__) && defined(__FLT_EVAL_METHOD__) && __FLT_EVAL_METHOD__ == 0)
#define HOST_NT 1
#include <emmintrin.h>
#else
#define HOST_NT 0
#endif

#define NT_LINE 64u

int ncl_host_nt_available(void)
{
    return HOST_NT;
}

#if HOST_NT
/* The ops, lane by lane as the portable kernel's: IEEE sum and product (avg reduces as sum);
 * max/min as selects (a > b ? a : b; equal operands, +0 and -0, give the AND of the bits for max
 * and the OR for min; an unordered pair gives the canonical quiet NaN). */
#define NT_SEL(m, x, y, T) _mm_or_##T(_mm_and_##T(m, x), _mm_andnot_##T(m, y)) /* m ? x : y */

static inline __m128 nt_max_ps(__m128 a, __m128 b)
{
    const __m128 r = NT_SEL(_mm_cmpgt_ps(a, b), a, b, ps);
    const __m128 e = NT_SEL(_mm_cmpeq_ps(a, b), _mm_and_ps(a, b), r, ps);
    return NT_SEL(_mm_cmpunord_ps(a, b), _mm_castsi128_ps(_mm_set1_epi32(0x7fc00000)), e, ps);
}

static inline __m128 nt_min_ps(__m128 a, __m128 b)
{
    const __m128 r = NT_SEL(_mm_cmplt_ps(a, b), a, b, ps);
    const __m128 e = NT_SEL(_mm_cmpeq_ps(a, b), _mm_or_ps(a, b), r, ps);
    return NT_SEL(_mm_cmpunord_ps(a, b), _mm_castsi128_ps(_mm_set1_epi32(0x7fc00000)), e, ps);
}

static inline __m128d nt_max_pd(__m128d a, __m128d b)
{
    const __m128d r = NT_SEL(_mm_cmpgt_pd(a, b), a, b, pd);
    const __m128d e = NT_SEL(_mm_cmpeq_pd(a, b), _mm_and_pd(a, b), r, pd);
    return NT_SEL(_mm_cmpunord_pd(a, b), _mm_castsi128_pd(_mm_set1_epi64x(0x7ff8000000000000ll)), e, pd);
}

static inline __m128d nt_min_pd(__m128d a, __m128d b)
{
    const __m128d r = NT_SEL(_mm_cmplt_pd(a, b), a, b, pd);
    const __m128d e = NT_SEL(_mm_cmpeq_pd(a, b), _mm_or_pd(a, b), r, pd);
    return NT_SEL(_mm_cmpunord_pd(a, b), _mm_castsi128_pd(_mm_set1_epi64x(0x7ff8000000000000ll)), e, pd);
}

/* d (64-byte aligned) <- x op y over `bytes` (whole lines), four 16-byte lanes a line. */
#define NT_LOOP(name, T, load, stream, fn)                                                            \
    static void name(unsigned char *d, const unsigned char *x, const unsigned char *y, uint64_t bytes) \
    {                                                                                                 \
        for (uint64_t i = 0; i < bytes; i += NT_LINE)                                                 \
            for (unsigned k = 0; k < NT_LINE; k += 16)                                                \
                stream((T *)(void *)(d + i + k), fn(load((const T *)(const void *)(x + i + k)),      \
                                                    load((const T *)(const void *)(y + i + k))));   \
    }

NT_LOOP(nt_add_f32, float, _mm_loadu_ps, _mm_stream_ps, _mm_add_ps)
NT_LOOP(nt_mul_f32, float, _mm_loadu_ps, _mm_stream_ps, _mm_mul_ps)
NT_LOOP(nt_max_f32, float, _mm_loadu_ps, _mm_stream_ps, nt_max_ps)
NT_LOOP(nt_min_f32, float, _mm_loadu_ps, _mm_stream_ps, nt_min_ps)
NT_LOOP(nt_add_f64, double, _mm_loadu_pd, _mm_stream_pd, _mm_add_pd)
NT_LOOP(nt_mul_f64, double, _mm_loadu_pd, _mm_stream_pd, _mm_mul_pd)
NT_LOOP(nt_max_f64, double, _mm_loadu_pd, _mm_stream_pd, nt_max_pd)
NT_LOOP(nt_min_f64, double, _mm_loadu_pd, _mm_stream_pd, nt_min_pd)

typedef void (*nt_fn)(unsigned char *d, const unsigned char *x, const unsigned char *y, uint64_t bytes);

/* The loop of (dtype, op), or NULL: fp32 and fp64 only (the rest runs the portable kernel). */
static nt_fn nt_loop(ncl_dtype dtype, ncl_op op)
{
    static const nt_fn f32[NCL_OP_COUNT] = {nt_add_f32, nt_mul_f32, nt_max_f32, nt_min_f32, nt_add_f32};
    static const nt_fn f64[NCL_OP_COUNT] = {nt_add_f64, nt_mul_f64, nt_max_f64, nt_min_f64, nt_add_f64};
    if ((unsigned)op >= NCL_OP_COUNT)
        return NULL;
    return dtype == NCL_FLOAT32 ? f32[op] : dtype == NCL_FLOAT64 ? f64[op] : NULL;
}

/* Bytes from dst to its next 64-byte boundary, at most `bytes`. */
static uint64_t nt_head(const void *dst, uint64_t bytes)
{
    const uint64_t head = (NT_LINE - (uint64_t)((uintptr_t)dst % NT_LINE)) % NT_LINE;
    return head < bytes ? head : bytes;
}
#endif

uint64_t ncl_host_nt_reduce3(void *dst, const void *a, const void *b, uint64_t count, ncl_dtype dtype, ncl_op op)
{
#if HOST_NT
    const uint64_t es = ncl_dtype_size(dtype);
    const nt_fn loop = nt_loop(dtype, op);
    /* a destination off its element's alignment never reaches a line boundary on an element */
    if (loop && (uintptr_t)dst % es == 0) {
        unsigned char *d = dst;
        const unsigned char *x = a, *y = b;
        const uint64_t bytes = count * es, head = nt_head(d, bytes);
        const uint64_t body = (bytes - head) / NT_LINE * NT_LINE; /* whole lines: whole elements */
        if (body) {
            ncl_reduce3_kernel(d, x, y, head / es, dtype, op);
            loop(d + head, x + head, y + head, body);
            ncl_reduce3_kernel(d + head + body, x + head + body, y + head + body, (bytes - head - body) / es, dtype,
                               op);
            _mm_sfence(); /* the streamed lines are visible before anything this thread writes next */
            return body;
        }
    }
#endif
    ncl_reduce3_kernel(dst, a, b, count, dtype, op);
    return 0;
}
