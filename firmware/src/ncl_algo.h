/* ncl_algo.h — what every algorithm file uses: generator macros, task builders, partitioning. */
#ifndef NCL_ALGO_H
#define NCL_ALGO_H

#include "ncl/ncl_sched.h"

/* Protothread-style generators: write the algorithm as plain nested loops over fields of
 * ncl_gen (never over locals, which do not survive a yield) and NCL_YIELD after filling *out.
 * No `switch` statements inside a generator body. */
#define NCL_GEN_BEGIN(g)  switch ((g)->line) { case 0:
#define NCL_YIELD(g)                                                                       \
    do {                                                                                   \
        (g)->line = __LINE__;                                                              \
        return 1;                                                                          \
    case __LINE__:;                                                                        \
    } while (0)
#define NCL_GEN_END(g)                                                                     \
    default:                                                                               \
        break;                                                                             \
    }                                                                                      \
    (g)->line = -1;                                                                        \
    return 0

/* Notify ids: each channel owns a DATA and a READY id, and a LOCAL id for its queues to order
 * each other on one rank. Counters are per sender, so the same id from different peers never
 * aliases. */
#define NCL_NOTIFY_DATA(ch) (2u * (ch))
#define NCL_NOTIFY_READY(ch) (2u * (ch) + 1u)
#define NCL_NOTIFY_LOCAL(ch) (2u * NCL_MAX_QUEUES + (ch))

static inline ncl_ref ncl_ref_make(uint32_t buf, uint64_t off)
{
    ncl_ref r;
    r.buf = buf;
    r.off = off;
    return r;
}
static inline ncl_ref ncl_ref_add(ncl_ref r, uint64_t off)
{
    r.off += off;
    return r;
}

/* Task builders: each fills *t completely. */
void ncl_task_write(ncl_task *t, int peer, ncl_ref src, ncl_ref dst, uint64_t bytes, uint32_t step);
void ncl_task_write_reduce(ncl_task *t, const ncl_plan *p, int peer, ncl_ref src, ncl_ref dst,
                           uint64_t bytes, uint32_t step);
void ncl_task_copy(ncl_task *t, ncl_ref src, ncl_ref dst, uint64_t bytes, uint32_t step);
void ncl_task_reduce(ncl_task *t, const ncl_plan *p, ncl_ref src, ncl_ref dst, uint64_t bytes,
                     uint32_t step);
void ncl_task_div(ncl_task *t, const ncl_plan *p, ncl_ref dst, uint64_t bytes, uint32_t step);
void ncl_task_record(ncl_task *t, int peer, uint32_t notify, uint32_t step);
void ncl_task_wait(ncl_task *t, int peer, uint32_t notify, uint32_t count, uint32_t step);

/** floor(sqrt(x)). */
uint64_t ncl_isqrt(uint64_t x);

/** Segment count minimising the pipelined-chain cost (p-2+k)(a + n b / k) (REFERENCE.md):
 *  k = sqrt((p-2) n b / a), b = 1/gbps ns per byte. At least 1; saturates, never overflows. */
uint64_t ncl_pipeline_segments(uint64_t p, uint64_t bytes, uint64_t alpha_ns, uint64_t gbps);

/** Sets plan->segments for a pipelined chain: the cost model's choice, at least enough that
 *  no segment exceeds seg_max elements, at most one element per segment. */
ncl_result ncl_pipeline_prepare(ncl_plan *plan, uint64_t seg_max);

/** The first step of a ring whose receivers fill each accumulation target (copy their own
 *  contribution into it) before the sender reduces into it. The sender's first write waits for
 *  that whole copy, 2 c / M for a chunk of c bytes (M: memory bandwidth): a cost that grows with
 *  the buffer. Cut into pieces, each filled, READY and written on its own, the ring waits for the
 *  first piece's fill only, and each later fill runs while the sender writes the piece before:
 *  pieces grow by r = (M - 3B) / 2B (the most a fill can grow and still end first while the
 *  rank's memory also serves its ring traffic, 3 bytes per byte on the link), the first takes
 *  about one alpha to fill (alpha M / 2 bytes, whole 4 KiB so every piece keeps the target's
 *  alignment). Every piece adds about alpha to the sender's queue (what a second piece saves,
 *  2 (c - first) / M, is more from c = 2 first on), so a chunk under 2 first pieces, or memory
 *  under 7x the link (r < 2), or an unknown M (plan->mem_gbps 0) stays whole.
 *  Returns piece m's length in elements of `len` (0 past the last piece), its start in *lo. */
uint64_t ncl_lead_piece(const ncl_plan *p, uint64_t len, uint64_t m, uint64_t *lo);

/** Binomial trees (v = rank relative to the root): v's children are v + 2^j for 2^j below the
 *  returned bound — v's lowest set bit, or for the root the first power of two >= n. */
uint64_t ncl_tree_child_span(uint64_t v, uint64_t n);

/** Splits n items into `parts` near-equal parts (the first n % parts get one more);
 *  returns the length of part `idx` and its start in *off. */
uint64_t ncl_part(uint64_t n, uint64_t parts, uint64_t idx, uint64_t *off);

/* a mod p in [0, p). Ranks are mostly one step outside the range: no division then. */
static inline int ncl_mod(int64_t a, int64_t p)
{
    if (a >= 0 && a < p)
        return (int)a;
    if (a < 0 && a >= -p)
        return (int)(a + p);
    if (a >= p && a < 2 * p)
        return (int)(a - p);
    int64_t m = a % p;
    return (int)(m < 0 ? m + p : m);
}
static inline uint64_t ncl_min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static inline uint64_t ncl_div_ceil(uint64_t a, uint64_t b) { return b ? (a + b - 1) / b : 0; }

/* Room for a helper queue per data channel (a fill or copy queue beside the ring): a queue each,
 * and a DMA engine each (ncl_hal_caps.dma_engines; 0: unknown), since with every engine busy with
 * a channel's write a helper's copy only delays one. */
static inline int ncl_helper_room(const ncl_plan *p, uint32_t channels)
{
    return 2 * channels <= p->max_queues && (p->dma_engines == 0 || 2 * channels <= p->dma_engines);
}

/* Channels worth a queue: at most `queues`, and no more than `units` (elements per rank or
 * per block) so that every channel moves at least one; at least 1. */
static inline uint32_t ncl_channels_for(uint32_t queues, uint64_t units)
{
    return units >= queues ? queues : units ? (uint32_t)units : 1u;
}

/* Whether a WRITE_REDUCE of `bytes` from src_off to dst_off can reduce inline on this backend
 * (ncl_hal_caps: dtype/op supported, offsets and length aligned). Sender and receiver both ask,
 * with the same arguments, so both know which path a task takes. */
static inline int ncl_inline_ok(const ncl_plan *p, uint64_t src_off, uint64_t dst_off, uint64_t bytes)
{
    uint64_t a = p->inline_align;
    return p->inline_reduce && (a <= 1 || (src_off % a == 0 && dst_off % a == 0 && bytes % a == 0));
}

/* Every task of the plan can reduce inline (any element offset and length is aligned): what the
 * algorithms without a scratch path need. */
static inline int ncl_inline_all(const ncl_plan *p)
{
    return p->inline_reduce && p->esize % p->inline_align == 0;
}

/* The largest power of two <= n (0 for 0): halving-doubling's core. */
static inline uint64_t ncl_pow2_floor(uint64_t n)
{
    n |= n >> 1;
    n |= n >> 2;
    n |= n >> 4;
    n |= n >> 8;
    n |= n >> 16;
    n |= n >> 32;
    return n - (n >> 1);
}

/* Ring c (channel c's logical ring): the position of `rank`, and the rank at position `pos`
 * (any integer: taken mod nranks). Without rings, ring c is 0, 1, ..., nranks-1. */
static inline int ncl_ring_pos(const ncl_plan *p, uint32_t c, int rank)
{
    return p->ring_count ? p->ring_pos[(size_t)(c % p->ring_count) * (size_t)p->nranks + (size_t)rank] : rank;
}
static inline int ncl_ring_rank(const ncl_plan *p, uint32_t c, int64_t pos)
{
    int i = ncl_mod(pos, p->nranks);
    return p->ring_count ? p->ring_order[(size_t)(c % p->ring_count) * (size_t)p->nranks + (size_t)i] : (int)i;
}

/* Channel c's weight in the split of a buffer over `channels` channels: its ring's weight
 * shared by the channels on that ring (840 = lcm(1..8): exact for every channel count). */
static inline uint64_t ncl_channel_weight(const ncl_plan *p, uint32_t channels, uint32_t c)
{
    uint32_t ring = c % p->ring_count;
    uint64_t on_ring = channels / p->ring_count + (ring < channels % p->ring_count ? 1u : 0u);
    return (uint64_t)p->ring_weights[ring] * 840u / on_ring;
}

/* Channel q's share of `count` elements split over `channels` channels (q < channels), its
 * first element in *off: in proportion to the bandwidth of the rings the channels run on
 * (plan->ring_weights), so a slow ring carries a smaller share and all finish together. Every
 * channel gets one element first (when count >= channels: ncl_channels_for's promise that each
 * moves one), the rest goes by weight; boundaries are floor(rest * weights before q / total),
 * so every element lands in exactly one channel, in order. Without weights, or with all rings
 * weighted alike, it is exactly ncl_part(count, channels, q). Integer only: weights are scaled
 * down until their total fits 31 bits, so nothing overflows for any count. */
static inline uint64_t ncl_channel_part(const ncl_plan *p, uint64_t count, uint32_t channels, uint32_t q,
                                        uint64_t *off)
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

/* Intra-server ring c of the two-level algorithms (over local indices 0..local_size-1): the
 * position of local index l, and the local index at position `pos` (taken mod local_size).
 * Without local rings, ring c is 0, 1, ..., local_size-1. */
static inline int ncl_local_pos(const ncl_plan *p, uint32_t c, int l)
{
    return p->local_ring_count ? p->local_pos[(size_t)(c % p->local_ring_count) * p->local_size + (size_t)l] : l;
}
static inline int ncl_local_rank(const ncl_plan *p, uint32_t c, int64_t pos)
{
    int i = ncl_mod(pos, (int64_t)p->local_size);
    return p->local_ring_count ? p->local_order[(size_t)(c % p->local_ring_count) * p->local_size + (size_t)i] : i;
}

/* The algorithm table entries, one per file under algo/. */
extern const ncl_algo_desc ncl_algo_ring_allreduce;
extern const ncl_algo_desc ncl_algo_ring_reduce_scatter;
extern const ncl_algo_desc ncl_algo_ring_allgather;
extern const ncl_algo_desc ncl_algo_chain_broadcast;
extern const ncl_algo_desc ncl_algo_tree_broadcast;
extern const ncl_algo_desc ncl_algo_ring_reduce;
extern const ncl_algo_desc ncl_algo_tree_reduce;
extern const ncl_algo_desc ncl_algo_hd_allreduce;
extern const ncl_algo_desc ncl_algo_hd_reduce_scatter;
extern const ncl_algo_desc ncl_algo_hd_allgather;
extern const ncl_algo_desc ncl_algo_mesh_allreduce;
extern const ncl_algo_desc ncl_algo_mesh_reduce_scatter;
extern const ncl_algo_desc ncl_algo_mesh_allgather;
extern const ncl_algo_desc ncl_algo_sag_broadcast;
extern const ncl_algo_desc ncl_algo_dbtree_allreduce;
extern const ncl_algo_desc ncl_algo_det_allreduce;
extern const ncl_algo_desc ncl_algo_hier_allreduce;
extern const ncl_algo_desc ncl_algo_hier_broadcast;
extern const ncl_algo_desc ncl_algo_user_allreduce;
extern const ncl_algo_desc ncl_algo_user_broadcast;
extern const ncl_algo_desc ncl_algo_user_reduce;
extern const ncl_algo_desc ncl_algo_user_reduce_scatter;
extern const ncl_algo_desc ncl_algo_user_allgather;

#endif
