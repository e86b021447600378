/* hier_broadcast.c — two-level broadcast: the root scatters its server's chunks, each chunk goes
 * from the root's server to every other server (pipelined chain or binomial tree), then every
 * server gathers its chunks around its local ring. */
#include "ncl_hier.h"

/* Layout (ncl_hier.h: L ranks per server, S servers). The buffer is split into one portion per
 * channel (queue), each portion into L chunks; chunk k belongs to the rank at position k of the
 * channel's local ring (on every server the same local index). v = (s - root's server) mod S is a
 * server's place in the inter level.
 * 1. intra scatter (root's server only): the root writes chunk k to its owner, in slices;
 *    out of place it copies its own chunk to its recv;
 * 2. inter broadcast of chunk lpos among the ranks with our local index, from the root's server:
 *    - ring: a pipelined chain over servers v = 0..S-1, its segment count from the cost model
 *      (ncl_pipeline_prepare on the largest chunk over S ranks, as chain_broadcast does);
 *    - hd: a binomial tree over servers (farthest child first), in rounds of at most a slice;
 * 3. intra allgather around every server's local ring, in rounds of at most a slice: position i
 *    sends chunk i-j at step j (the root too, into which its local prev writes what it has).
 *
 * Handshakes: every receiver's recv is bound from the start and every place in it is written once
 * per phase, so each rank records its READYs at the start, once per writer: to the root (phase 1,
 * root's server), to its inter parent / chain prev (phase 2, other servers), to its local prev
 * (phase 3; the root's local next skips it: its phase-1 READY to the root covers both). The writes
 * of a later phase into a place read by an earlier one are ordered by the DATA records between.
 *
 * What the schedule adds over REFERENCE.md's two-level staging (intra scatter (L-1)(a + n/L b) ->
 * inter broadcast of n/L over S servers -> intra allgather (L-1)(a + n/L b)):
 * - one READY latency before the first write of each phase (recorded at the start, so in
 *   practice only the scatter's and the first inter hop's are on the critical path);
 * - out of place the root pre-copies its own chunk, n/L bytes;
 * - the root takes part in the allgather like everyone (its local prev writes (L-1)/L n bytes into
 *   it that it already has);
 * - the scatter and the allgather are cut into slices, the tree into rounds of a slice: alpha per
 *   slice and round beyond the formula's single message per step.
 * No scratch. Notify ids: DATA(q)/READY(q) of the channel for intra and inter peers alike. */

/* The largest chunk of a channel: the first of the first channel's portion. */
static uint64_t chunk_max(const ncl_plan *p)
{
    return ncl_div_ceil(ncl_div_ceil(p->count, p->queues), p->local_size);
}

static ncl_result prepare(ncl_plan *p)
{
    ncl_result rc = ncl_hier_check(p);
    p->segments = 1;
    if (rc != NCL_SUCCESS)
        return rc;
    if (p->slice_elems == 0 || p->esize == 0)
        return NCL_ERR_INVALID_ARGUMENT;
    /* every channel needs at least one element per chunk to be worth a queue */
    p->queues = ncl_channels_for(p->queues, p->count / p->local_size);
    if (p->count == 0)
        return NCL_SUCCESS;
    const uint64_t cmax = chunk_max(p), servers = (uint64_t)p->nranks / p->local_size;
    if (ncl_hier_inter_hd(p, servers)) {
        /* the tree moves rounds of at most a slice */
        uint64_t rounds = ncl_div_ceil(cmax, p->slice_elems);
        if (rounds > UINT32_MAX)
            return NCL_ERR_UNSUPPORTED;
        p->segments = (uint32_t)(rounds ? rounds : 1);
        return NCL_SUCCESS;
    }
    /* the chain: the cost model's segments for the largest chunk over the S servers */
    ncl_plan chain = *p;
    chain.count = cmax;
    chain.nranks = (int32_t)servers;
    rc = ncl_pipeline_prepare(&chain, p->slice_elems);
    p->segments = chain.segments ? chain.segments : 1;
    return rc;
}

/* Chunk k (a local ring position) of channel q's portion: its first element in *off. */
static uint64_t chunk(const ncl_plan *p, uint32_t q, int k, uint64_t *off)
{
    uint64_t coff, koff, span = ncl_part(p->count, p->queues, q, &coff);
    uint64_t len = ncl_part(span, p->local_size, (uint64_t)ncl_mod(k, (int64_t)p->local_size), &koff);
    *off = coff + koff;
    return len;
}

/* Segment (inter level) or round `sg` of chunk k: part sg of plan->segments. */
static uint64_t chunk_seg(const ncl_plan *p, uint32_t q, int k, uint64_t sg, uint64_t *off)
{
    uint64_t coff, soff, len = ncl_part(chunk(p, q, k, &coff), p->segments, sg, &soff);
    *off = coff + soff;
    return len;
}

/* Elements [lo, lo + slice) of chunk k, clipped: the allgather's rounds and the scatter's slices. */
static uint64_t chunk_slice(const ncl_plan *p, uint32_t q, int k, uint64_t lo, uint64_t *off)
{
    uint64_t len = chunk(p, q, k, off);
    *off += lo;
    return lo >= len ? 0 : ncl_min_u64(p->slice_elems, len - lo);
}

/* Generator state: i = round / segment, j = step or slice offset, k = scatter position,
 * m = tree child distance. */
static int next(const ncl_plan *p, uint32_t q, ncl_gen *g, ncl_task *t)
{
    ncl_hier h;
    ncl_hier_init(&h, p, q);
    const int R = p->root, L = h.L, S = h.S, i = h.lpos;
    const int sr = R / L, is_root = p->rank == R;
    const uint64_t v = (uint64_t)ncl_mod((int64_t)h.s - sr, S), es = p->esize, k = p->segments;
    const int rpos = ncl_local_pos(p, q, R % L);
    /* inter level: chain neighbours, or tree parent and child span */
    const uint64_t span = ncl_tree_child_span(v, (uint64_t)S);
    const int up = h.hd ? ncl_hier_inter_peer(&h, (int64_t)h.s - (int64_t)span)
                        : ncl_hier_inter_peer(&h, (int64_t)h.s - 1);
    const int down = ncl_hier_inter_peer(&h, (int64_t)h.s + 1); /* chain */
    const int leaf = h.hd ? span == 1 || v + 1 >= (uint64_t)S : v == (uint64_t)S - 1;
    const ncl_ref in = ncl_plan_input(p, p->rank), recv = ncl_ref_make(NCL_BUF_RECV, 0);
    const ncl_ref src = is_root ? in : recv; /* the root sends from its input, the rest forward */
    const uint32_t data = NCL_NOTIFY_DATA(q), ready = NCL_NOTIFY_READY(q);
    const uint64_t rounds = ncl_div_ceil(chunk_max(p), p->slice_elems);
    uint64_t off, len;

    NCL_GEN_BEGIN(g);
    if (p->count == 0 || ncl_part(p->count, p->queues, q, &off) == 0)
        return g->line = -1, 0;

    /* our recv is bound: every rank that will write into it may (one READY per writer) */
    if (v == 0 && !is_root) {
        ncl_task_record(t, R, ready, 0);
        NCL_YIELD(g);
    }
    if (v != 0) {
        ncl_task_record(t, up, ready, 0);
        NCL_YIELD(g);
    }
    if (h.lprev != R) {
        ncl_task_record(t, h.lprev, ready, 0);
        NCL_YIELD(g);
    }

    /* phase 1: the root scatters its server's chunks, nearest position first */
    if (is_root) {
        for (g->k = 1; g->k < (uint64_t)L; g->k++) {
            ncl_task_wait(t, h.s * L + ncl_local_rank(p, q, (int64_t)rpos + (int64_t)g->k), ready, 1, 0);
            NCL_YIELD(g);
            for (g->j = 0; chunk_slice(p, q, rpos + (int)g->k, g->j, &off) != 0; g->j += p->slice_elems) {
                len = chunk_slice(p, q, rpos + (int)g->k, g->j, &off);
                ncl_task_write(t, h.s * L + ncl_local_rank(p, q, (int64_t)rpos + (int64_t)g->k),
                               ncl_ref_add(in, off * es), ncl_ref_add(recv, off * es), len * es, 0);
                NCL_YIELD(g);
            }
            ncl_task_record(t, h.s * L + ncl_local_rank(p, q, (int64_t)rpos + (int64_t)g->k), data, 0);
            NCL_YIELD(g);
        }
        for (g->j = 0; !p->inplace && chunk_slice(p, q, rpos, g->j, &off) != 0; g->j += p->slice_elems) {
            len = chunk_slice(p, q, rpos, g->j, &off);
            ncl_task_copy(t, ncl_ref_add(in, off * es), ncl_ref_add(recv, off * es), len * es, 0);
            NCL_YIELD(g);
        }
    } else if (v == 0) {
        ncl_task_wait(t, R, data, 1, 0);
        NCL_YIELD(g);
    }

    /* phase 2: chunk i from the root's server to the others */
    if (h.hd) {
        if (v != 0 && leaf) { /* forwards nothing: all rounds at once */
            ncl_task_wait(t, up, data, (uint32_t)k, 1);
            NCL_YIELD(g);
        }
        for (g->i = 0; !(v != 0 && leaf) && g->i < k; g->i++) {
            if (v != 0) {
                ncl_task_wait(t, up, data, 1, (uint32_t)(1 + g->i));
                NCL_YIELD(g);
            }
            /* push round i to each child server, farthest (largest subtree) first */
            for (g->m = span >> 1; g->m; g->m >>= 1) {
                if (v + g->m >= (uint64_t)S)
                    continue;
                if (g->i == 0) {
                    ncl_task_wait(t, ncl_hier_inter_peer(&h, (int64_t)h.s + (int64_t)g->m), ready, 1, 1);
                    NCL_YIELD(g);
                }
                if ((len = chunk_seg(p, q, i, g->i, &off)) != 0) {
                    ncl_task_write(t, ncl_hier_inter_peer(&h, (int64_t)h.s + (int64_t)g->m),
                                   ncl_ref_add(src, off * es), ncl_ref_add(recv, off * es), len * es,
                                   (uint32_t)(1 + g->i));
                    NCL_YIELD(g);
                }
                ncl_task_record(t, ncl_hier_inter_peer(&h, (int64_t)h.s + (int64_t)g->m), data,
                                (uint32_t)(1 + g->i));
                NCL_YIELD(g);
            }
        }
    } else if (v != 0 && leaf) { /* end of the chain: all segments at once */
        ncl_task_wait(t, up, data, (uint32_t)k, 1);
        NCL_YIELD(g);
    } else {
        ncl_task_wait(t, down, ready, 1, 1);
        NCL_YIELD(g);
        for (g->i = 0; g->i < k; g->i++) {
            if (v != 0) {
                ncl_task_wait(t, up, data, 1, (uint32_t)(1 + g->i));
                NCL_YIELD(g);
            }
            if ((len = chunk_seg(p, q, i, g->i, &off)) != 0) {
                ncl_task_write(t, down, ncl_ref_add(src, off * es), ncl_ref_add(recv, off * es), len * es,
                               (uint32_t)(1 + g->i));
                NCL_YIELD(g);
            }
            ncl_task_record(t, down, data, (uint32_t)(1 + g->i));
            NCL_YIELD(g);
        }
    }

    /* phase 3: allgather around the local ring; the root's local next granted READY in phase 1 */
    if (!is_root) {
        ncl_task_wait(t, h.lnext, ready, 1, (uint32_t)(1 + k));
        NCL_YIELD(g);
    }
    for (g->i = 0; g->i < rounds; g->i++) {
        for (g->j = 0; g->j < (uint64_t)(L - 1); g->j++) {
            if ((len = chunk_slice(p, q, i - (int)g->j, g->i * p->slice_elems, &off)) != 0) {
                ncl_task_write(t, h.lnext, ncl_ref_add(recv, off * es), ncl_ref_add(recv, off * es),
                               len * es, (uint32_t)(1 + k + g->i * (uint64_t)(L - 1) + g->j));
                NCL_YIELD(g);
            }
            ncl_task_record(t, h.lnext, data, (uint32_t)(1 + k + g->i * (uint64_t)(L - 1) + g->j));
            NCL_YIELD(g);
            ncl_task_wait(t, h.lprev, data, 1, (uint32_t)(1 + k + g->i * (uint64_t)(L - 1) + g->j));
            NCL_YIELD(g);
        }
    }
    NCL_GEN_END(g);
}

const ncl_algo_desc ncl_algo_hier_broadcast = {"hier", NCL_COLL_BROADCAST, NCL_ALGO_HIER, prepare, next};
