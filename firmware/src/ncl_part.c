/* ncl_part.c — where a rank's data lives and how it is split: input and output regions, near-equal parts, a ring's lead pieces. */
#include "ncl_part.h"

#include "ncl_task.h"

/* Apart from the planner (ncl_plan.c), which knows every algorithm: the algorithms and the checker
 * ask where data lives, and must not depend on the registry that depends on them. */

ncl_ref ncl_plan_input(const ncl_plan *plan, int rank)
{
    if (!plan->inplace)
        return ncl_ref_make(NCL_BUF_SEND, 0);
    if (plan->coll == NCL_COLL_ALLGATHER)
        return ncl_ref_make(NCL_BUF_RECV, (uint64_t)rank * plan->count * plan->esize);
    return ncl_ref_make(NCL_BUF_RECV, 0);
}

ncl_ref ncl_plan_output(const ncl_plan *plan, int rank)
{
    if (plan->inplace && plan->coll == NCL_COLL_REDUCE_SCATTER)
        return ncl_ref_make(NCL_BUF_RECV, (uint64_t)rank * plan->count * plan->esize);
    return ncl_ref_make(NCL_BUF_RECV, 0);
}

uint64_t ncl_part(uint64_t n, uint64_t parts, uint64_t idx, uint64_t *off)
{
    uint64_t base = n / parts, extra = n % parts;
    *off = idx * base + (idx < extra ? idx : extra);
    return base + (idx < extra ? 1 : 0);
}

/* Out of line: four generators call it, and a board keeps one copy (ncl_part.h says what it does). */
uint64_t ncl_channel_part(const ncl_plan *p, uint64_t count, uint32_t channels, uint32_t q, uint64_t *off)
{
    int equal = 1;
    for (uint32_t k = 1; p->ring_weights && k < p->ring_count && k < channels; k++)
        equal &= p->ring_weights[k] == p->ring_weights[0];
    if (!p->ring_weights || p->ring_count == 0 || equal || count < channels || channels < 2)
        return ncl_part(count, channels, q, off);
    uint64_t total = 0, before = 0, w, scaled = 0;
    unsigned shift = 0;
    for (uint32_t c = 0; c < channels; c++)
        total += ncl_channel_weight(p, channels, c);
    while ((total >> shift) >= (1ull << 31))
        shift++;
    for (uint32_t c = 0; c < channels; c++) { /* scaled weights, at least 1 each */
        w = ncl_channel_weight(p, channels, c) >> shift;
        w = w ? w : 1u;
        before += c < q ? w : 0u;
        scaled += w;
    }
    w = ncl_channel_weight(p, channels, q) >> shift;
    w = w ? w : 1u;
    /* floor(rest * x / scaled) without overflow: rest = a * scaled + b, b * x < 2^62 */
    const uint64_t rest = count - channels, a = rest / scaled, b = rest % scaled;
    uint64_t lo = a * before + b * before / scaled;
    uint64_t hi = a * (before + w) + b * (before + w) / scaled;
    *off = lo + q;
    return hi - lo + 1u;
}

uint64_t ncl_lead_piece(const ncl_plan *p, uint64_t len, uint64_t m, uint64_t *lo)
{
    const uint64_t page = 4096;
    /* a rank's memory also serves its ring traffic meanwhile: 1 byte read per byte sent, 2 per
     * byte reduced in (read and written), so a fill gets M - 3B */
    uint64_t r = p->mem_gbps > 3u * (uint64_t)p->link_gbps
                     ? (p->mem_gbps - 3u * (uint64_t)p->link_gbps) / (2u * (uint64_t)p->link_gbps) : 0;
    uint64_t first = ncl_div_ceil((uint64_t)p->link_alpha_ns * p->mem_gbps / 2u, page) * page / p->esize;
    *lo = 0;
    if (r < 2 || first == 0 || len / 2 < first)
        return m == 0 ? len : 0;
    uint64_t size = first;
    for (uint64_t k = 0;; k++) {
        /* a rest shorter than the first piece joins this one */
        uint64_t rest = len - *lo, piece = rest < size || rest - size < first ? rest : size;
        if (k == m)
            return piece;
        *lo += piece;
        if (*lo >= len)
            return 0;
        size = size > len / r ? len : size * r;
    }
}
