/* ncl_pipeline.c — the shape of pipelined chains and binomial trees: the segment count from the alpha-beta cost model, a tree node's children. */
#include "ncl_pipeline.h"

#include "ncl_part.h"

uint64_t ncl_isqrt(uint64_t x)
{
    uint64_t r = 0, bit = 1ull << 62;
    while (bit > x)
        bit >>= 2;
    while (bit) {
        if (x >= r + bit) {
            x -= r + bit;
            r = (r >> 1) + bit;
        } else {
            r >>= 1;
        }
        bit >>= 2;
    }
    return r;
}

uint64_t ncl_pipeline_segments(uint64_t p, uint64_t bytes, uint64_t alpha_ns, uint64_t gbps)
{
    if (p <= 2)
        return 1; /* one hop: nothing to overlap, every segment only adds a latency */
    uint64_t denom = (alpha_ns ? alpha_ns : 1) * (gbps ? gbps : 1);
    uint64_t q;
    if (bytes <= UINT64_MAX / (p - 2)) {
        q = (p - 2) * bytes / denom;
    } else {
        q = bytes / denom;
        q = q > UINT64_MAX / (p - 2) ? UINT64_MAX : q * (p - 2);
    }
    uint64_t k = ncl_isqrt(q);
    return k ? k : 1;
}

ncl_result ncl_pipeline_prepare(ncl_plan *p, uint64_t seg_max)
{
    uint64_t min_k = ncl_div_ceil(p->count, seg_max);
    if (min_k > UINT32_MAX)
        return NCL_ERR_UNSUPPORTED;
    uint64_t k = ncl_pipeline_segments((uint64_t)p->nranks, p->count * p->esize, p->link_alpha_ns,
                                       p->link_gbps);
    k = ncl_min_u64(ncl_min_u64(k, p->count), UINT32_MAX);
    p->segments = (uint32_t)(k < min_k ? min_k : k);
    return NCL_SUCCESS;
}

uint64_t ncl_pipeline_posted_ns(uint64_t hops, uint64_t nbeta_ns, uint64_t alpha_ns, uint64_t k)
{
    uint64_t seg = nbeta_ns / (k ? k : 1);
    return hops * (alpha_ns + seg) + (k ? k - 1 : 0) * (seg > alpha_ns ? seg : alpha_ns);
}

uint64_t ncl_pipeline_segments_posted(uint64_t hops, uint64_t nbeta_ns, uint64_t alpha_ns, uint32_t knee_pct)
{
    if (hops <= 1)
        return 1; /* one hop: nothing to overlap, every segment only adds its records */
    uint64_t a = alpha_ns ? alpha_ns : 1, knee = nbeta_ns / a * (knee_pct ? knee_pct : 50u) / 100u;
    uint64_t k = knee >= hops ? knee
                              : ncl_isqrt(nbeta_ns <= UINT64_MAX / hops ? hops * nbeta_ns / a : hops * (nbeta_ns / a));
    k = k ? k : 1;
    return ncl_pipeline_posted_ns(hops, nbeta_ns, a, k + 1) < ncl_pipeline_posted_ns(hops, nbeta_ns, a, k) ? k + 1 : k;
}

ncl_result ncl_pipeline_prepare_posted(ncl_plan *p, uint64_t seg_max)
{
    uint64_t min_k = ncl_div_ceil(p->count, seg_max);
    if (min_k > UINT32_MAX)
        return NCL_ERR_UNSUPPORTED;
    uint64_t bytes = p->count * p->esize, gbps = p->link_gbps ? p->link_gbps : 1;
    uint64_t k = ncl_pipeline_segments_posted((uint64_t)(p->nranks > 1 ? p->nranks - 1 : 0), bytes / gbps,
                                              p->link_alpha_ns, p->posted_knee);
    k = ncl_min_u64(ncl_min_u64(k, p->count), UINT32_MAX);
    p->segments = (uint32_t)(k < min_k ? min_k : k);
    return NCL_SUCCESS;
}

uint64_t ncl_tree_child_span(uint64_t v, uint64_t n)
{
    if (v)
        return v & (~v + 1);
    uint64_t s = 1;
    while (s < n)
        s <<= 1;
    return s;
}
