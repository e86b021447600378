/* ncl_pipeline.h — the shape of pipelined chains and binomial trees: segment counts from the cost model, a tree node's children. */
#ifndef NCL_PIPELINE_H
#define NCL_PIPELINE_H

#include "ncl/ncl_sched.h"

/** floor(sqrt(x)). */
uint64_t ncl_isqrt(uint64_t x);

/** Segment count minimising the pipelined-chain cost (p-2+k)(a + n b / k) (REFERENCE.md):
 *  k = sqrt((p-2) n b / a), b = 1/gbps ns per byte. At least 1; saturates, never overflows. */
uint64_t ncl_pipeline_segments(uint64_t p, uint64_t bytes, uint64_t alpha_ns, uint64_t gbps);

/** Sets plan->segments for a pipelined chain: the cost model's choice, at least enough that
 *  no segment exceeds seg_max elements, at most one element per segment. */
ncl_result ncl_pipeline_prepare(ncl_plan *plan, uint64_t seg_max);

/** Segment count of a pipeline of posted writes over `hops` links, where a segment's issue
 *  (alpha) overlaps the transfer before it: h (a + n b / k) + (k - 1) max(a, n b / k). Its
 *  optimum is the knee k = n b / a (each segment's transfer as long as its issue) where that is
 *  >= h, else sqrt(h n b / a). The knee is taken at knee_pct % (0: 50): at the knee itself the
 *  issues' jitter (a fill's copy, the DMA engines' hand-offs) shows between the transfers
 *  (+13 % at 16 MiB on a 6-ring); the cost model says 75 where each link carries one hop of the
 *  chain, 60 where two share one (n b is then twice a segment's own transfer; at 75 +6 % at
 *  1 GiB on a 2 x 4 torus, at 60 within 0.3 % from 4 MiB). nbeta_ns = n b. 1 over one hop. */
uint64_t ncl_pipeline_segments_posted(uint64_t hops, uint64_t nbeta_ns, uint64_t alpha_ns, uint32_t knee_pct);
/** Its time at k segments (ns): h (a + n b / k) + (k - 1) max(a, n b / k). */
uint64_t ncl_pipeline_posted_ns(uint64_t hops, uint64_t nbeta_ns, uint64_t alpha_ns, uint64_t k);

/** ncl_pipeline_prepare for a chain of posted writes over p - 1 links: ncl_pipeline_segments_posted. */
ncl_result ncl_pipeline_prepare_posted(ncl_plan *plan, uint64_t seg_max);

/** Binomial trees (v = rank relative to the root): v's children are v + 2^j for 2^j below the
 *  returned bound — v's lowest set bit, or for the root the first power of two >= n. */
uint64_t ncl_tree_child_span(uint64_t v, uint64_t n);

#endif
