/* dp_fusion.c — gradient fusion: checks a strategy and cuts the gradient list into buckets. */
#include "dp_internal.h"

static const double default_percent[2] = {96.54, 3.46};

static dp_result bad(char *msg, size_t cap, const char *fmt, ...)
{
    if (msg && cap) {
        va_list ap;
        va_start(ap, fmt);
        dp_vfmt(msg, cap, fmt, ap);
        va_end(ap);
    }
    return DP_ERR_STRATEGY;
}

/* Appends bucket [first, last]; offsets aligned so every bucket's allreduce starts on a
 * DMA-friendly boundary. */
static int add_bucket(dp_bucket *out, uint32_t cap, uint32_t *nb, uint64_t *offset, const uint64_t *bytes,
                      uint32_t first, uint32_t last)
{
    if (*nb >= cap)
        return -1;
    uint64_t sum = 0;
    for (uint32_t i = first; i <= last; i++)
        sum += bytes[i];
    dp_bucket *b = &out[(*nb)++];
    b->first = first;
    b->last = last;
    b->offset = *offset;
    b->bytes = sum;
    *offset += (sum + DP_BUCKET_ALIGN - 1) / DP_BUCKET_ALIGN * DP_BUCKET_ALIGN;
    return 0;
}

static dp_result check_index(const dp_fusion *f, uint32_t n, char *msg, size_t cap)
{
    if (f->count == 0 || f->index == NULL)
        return bad(msg, cap, "fusion by index: the index list is empty; give 1 to %u ascending end indices "
                   "in 0..%u (the last gradient is %u)", DP_MAX_SEGMENTS, n - 1, n - 1);
    if (f->count > DP_MAX_SEGMENTS)
        return bad(msg, cap, "fusion by index: %u segments, at most %u are allowed", f->count, DP_MAX_SEGMENTS);
    for (uint32_t k = 0; k < f->count; k++) {
        if (f->index[k] >= n)
            return bad(msg, cap, "fusion by index: index %u (position %u) is beyond the last gradient: "
                       "indices must be in 0..%u (%u gradients registered)", f->index[k], k, n - 1, n);
        if (k > 0 && f->index[k] <= f->index[k - 1])
            return bad(msg, cap, "fusion by index: the list is not ascending: %u (position %u) after %u; "
                       "end indices must strictly increase", f->index[k], k, f->index[k - 1]);
    }
    if (f->index[f->count - 1] < n - 1 && f->count + 1 > DP_MAX_SEGMENTS)
        return bad(msg, cap, "fusion by index: %u end indices plus the implied last segment (gradients %u..%u) "
                   "make %u segments, at most %u are allowed; end the list with %u",
                   f->count, f->index[f->count - 1] + 1, n - 1, f->count + 1, DP_MAX_SEGMENTS, n - 1);
    return DP_OK;
}

static dp_result check_size(const double *pct, uint32_t count, char *msg, size_t cap)
{
    if (count == 0 || pct == NULL)
        return bad(msg, cap, "fusion by size: the percentage list is empty; give 1 to %u percentages "
                   "(each > 0) summing to 100", DP_MAX_SEGMENTS);
    if (count > DP_MAX_SEGMENTS)
        return bad(msg, cap, "fusion by size: %u segments, at most %u are allowed", count, DP_MAX_SEGMENTS);
    double sum = 0;
    for (uint32_t k = 0; k < count; k++) {
        if (!(pct[k] > 0) || pct[k] > 100)
            return bad(msg, cap, "fusion by size: percentage %f (position %u) is out of range; each must be "
                       "> 0 and <= 100", pct[k], k);
        sum += pct[k];
    }
    if (sum < 100 - DP_PERCENT_TOLERANCE || sum > 100 + DP_PERCENT_TOLERANCE)
        return bad(msg, cap, "fusion by size: the percentages sum to %f; they must sum to 100 (within %f)", sum,
                   DP_PERCENT_TOLERANCE);
    return DP_OK;
}

static dp_result plan_size(const double *pct, uint32_t count, const uint64_t *bytes, uint32_t n, dp_bucket *out,
                           uint32_t cap, uint32_t *nb, uint64_t *offset)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; i++)
        total += bytes[i];
    uint32_t start = 0;
    uint64_t done = 0; /* bytes of gradients 0..start-1 */
    double target = 0;
    for (uint32_t k = 0; k < count && start < n; k++) {
        target += pct[k];
        uint32_t end;
        if (k == count - 1) {
            end = n - 1; /* the last segment takes the rest, whatever rounding left */
        } else {
            /* Already at or past this boundary: the segment would be empty, drop it. */
            if ((double)done * 100.0 >= target * (double)total)
                continue;
            uint64_t run = done;
            end = start;
            for (;; end++) {
                run += bytes[end];
                if ((double)run * 100.0 >= target * (double)total || end == n - 1)
                    break;
            }
        }
        if (add_bucket(out, cap, nb, offset, bytes, start, end))
            return DP_ERR_ARGUMENT;
        for (uint32_t i = start; i <= end; i++)
            done += bytes[i];
        start = end + 1;
    }
    return DP_OK;
}

dp_result dp_fusion_plan(const dp_fusion *f, const uint64_t *bytes, uint32_t n, dp_bucket *out, uint32_t cap,
                         uint32_t *nbuckets, char *msg, size_t msg_cap)
{
    if (msg && msg_cap)
        msg[0] = '\0';
    if (f == NULL || nbuckets == NULL || (n > 0 && (bytes == NULL || out == NULL))) {
        if (msg && msg_cap)
            dp_fmt(msg, msg_cap, "fusion: NULL strategy, sizes, bucket array or count");
        return DP_ERR_ARGUMENT;
    }
    *nbuckets = 0;
    if ((unsigned)f->kind >= DP_FUSION_KIND_COUNT)
        return bad(msg, msg_cap, "fusion: unknown strategy kind %u; use default, index, size or threshold",
                   (unsigned)f->kind);
    if (n == 0)
        return bad(msg, msg_cap, "fusion: no gradients registered; register at least one tensor first");
    dp_result r = DP_OK;
    uint64_t offset = 0;
    switch (f->kind) {
    case DP_FUSION_DEFAULT:
        r = plan_size(default_percent, 2, bytes, n, out, cap, nbuckets, &offset);
        break;
    case DP_FUSION_SIZE:
        if ((r = check_size(f->percent, f->count, msg, msg_cap)) == DP_OK)
            r = plan_size(f->percent, f->count, bytes, n, out, cap, nbuckets, &offset);
        break;
    case DP_FUSION_INDEX:
        if ((r = check_index(f, n, msg, msg_cap)) != DP_OK)
            break;
        for (uint32_t k = 0, start = 0; k <= f->count && start < n && r == DP_OK; k++) {
            uint32_t end = k < f->count ? f->index[k] : n - 1;
            if (add_bucket(out, cap, nbuckets, &offset, bytes, start, end))
                r = DP_ERR_ARGUMENT;
            start = end + 1;
        }
        break;
    case DP_FUSION_THRESHOLD:
        if (f->threshold_bytes == 0)
            return bad(msg, msg_cap, "fusion by threshold: the threshold is 0 bytes; it must be > 0 "
                       "(1 gives one bucket per gradient)");
        for (uint32_t start = 0; start < n && r == DP_OK;) {
            uint64_t sum = bytes[start];
            uint32_t end = start;
            while (end + 1 < n && sum + bytes[end + 1] <= f->threshold_bytes)
                sum += bytes[++end];
            if (add_bucket(out, cap, nbuckets, &offset, bytes, start, end))
                r = DP_ERR_ARGUMENT;
            start = end + 1;
        }
        break;
    default:
        break;
    }
    if (r == DP_ERR_ARGUMENT && msg && msg_cap)
        dp_fmt(msg, msg_cap, "fusion: the plan needs more than %u buckets (the array given)", cap);
    return r;
}
