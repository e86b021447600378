/* ncl_part.h — how the algorithms split buffers: integer helpers, near-equal parts, channel shares by ring weight, a ring's lead pieces. */
#ifndef NCL_PART_H
#define NCL_PART_H

#include "ncl/ncl_sched.h"

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
static inline uint64_t ncl_max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }
static inline uint64_t ncl_div_ceil(uint64_t a, uint64_t b) { return b ? (a + b - 1) / b : 0; }

/** Splits n items into `parts` near-equal parts (the first n % parts get one more);
 *  returns the length of part `idx` and its start in *off. */
uint64_t ncl_part(uint64_t n, uint64_t parts, uint64_t idx, uint64_t *off);

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
uint64_t ncl_channel_part(const ncl_plan *p, uint64_t count, uint32_t channels, uint32_t q, uint64_t *off);

#endif
