/* hier_allreduce.c — two-level allreduce: intra-server ring reduce-scatter, inter-server allreduce
 * of each rank's chunk among the ranks with its local index (ring or halving-doubling), intra-server
 * ring allgather; split over channels and cut into rounds of at most one slice. */
#include "ncl_hier.h"

/* Layout (ncl_hier.h: L ranks per server, S servers). The buffer is split into one portion per
 * channel (queue); each portion into L chunks, one per position of the channel's local ring; a
 * round moves at most slice_elems of every chunk and runs all three phases:
 * 1. intra reduce-scatter (as ring_allreduce's first half): position i sends chunk i-1-j at step j
 *    (WRITE_REDUCE into the next's recv) and ends holding chunk i reduced over its server;
 * 2. inter allreduce of that chunk's round piece among the S ranks with our local index (they hold
 *    the same position, so the same chunk), in place in recv:
 *    - ring: the piece cut into S parts, reduce-scatter + allgather around servers 0..S-1;
 *    - hd (S a power of two): recursive halving with WRITE_REDUCE straight into the half the
 *      partner keeps (no scratch), then recursive doubling;
 *    avg divides our finished part of the piece there, once;
 * 3. intra allgather of the chunks around the local ring.
 *
 * Handshakes. Intra: every rank records READY to its local prev once (its recv holds its own
 * contribution from the start; out of place after the pre-copy); intra writes of different rounds
 * go to different places, so this one READY covers the collective. Inter: a WRITE_REDUCE target
 * must hold the server's sum first, i.e. its owner must have finished phase 1 of the round: ring:
 * a READY to the inter prev per round, after phase 1; hd: a READY to the step's partner on every
 * reduce-scatter step (its kept half must also have taken the previous step's data). Allgather
 * writes need none: the target last read that place before a DATA record we waited for.
 *
 * What the schedule adds over REFERENCE.md's two-level formula (intra reduce-scatter (L-1)(a +
 * n/L b) -> inter allreduce of n/L over S -> intra allgather (L-1)(a + n/L b)):
 * - one intra READY latency before the first step;
 * - per round one inter READY latency (ring), or one per inter reduce-scatter step, lg S (hd);
 * - out of place a pre-copy of (L-1)/L n bytes (every chunk but the one sent first from send);
 * - avg: a LOCAL_DIV of n/(L S) elements per rank (per round);
 * - rounds: a chunk larger than a slice repeats all three phases' alpha terms once per round.
 * No scratch, so every reduction is a WRITE_REDUCE: prepare refuses a backend that cannot reduce
 * the plan's dtype/op inline at element alignment (ncl_inline_all). Notify ids: DATA(q)/READY(q)
 * of the channel for intra and inter peers alike (they are different ranks: counters are per
 * sender). */

static uint64_t channel_span(const ncl_plan *p, uint32_t q, uint64_t *off)
{
    return ncl_part(p->count, p->queues, q, off);
}

/* Elements of chunk k (a local ring position) that round `round` moves, in the channel portion
 * [coff, coff + span); *off gets the first element (absolute). */
static uint64_t chunk_round(const ncl_plan *p, uint64_t span, uint64_t coff, int k, uint64_t round,
                            uint64_t *off)
{
    uint64_t koff;
    uint64_t klen = ncl_part(span, p->local_size, (uint64_t)ncl_mod(k, (int64_t)p->local_size), &koff);
    uint64_t lo = round * p->slice_elems;
    *off = coff + koff + lo;
    return lo >= klen ? 0 : ncl_min_u64(p->slice_elems, klen - lo);
}

/* Parts [u, u + m) of the S-way split of a piece [poff, poff + plen): first element in *off. */
static uint64_t parts(uint64_t plen, uint64_t poff, uint64_t S, uint64_t u, uint64_t m, uint64_t *off)
{
    uint64_t lo, hi;
    ncl_part(plen, S, u, &lo);
    ncl_part(plen, S, u + m, &hi);
    *off = poff + lo;
    return hi - lo;
}

/* Out-of-place pre-copy: part 0 is the channel span before chunk lpos-1, part 1 the span after
 * it (that chunk is sent straight from the input at step 0 and never reduced into). */
static uint64_t precopy_part(const ncl_plan *p, const ncl_hier *h, uint32_t q, uint64_t part, uint64_t *off)
{
    uint64_t coff, koff;
    uint64_t span = channel_span(p, q, &coff);
    uint64_t klen = ncl_part(span, (uint64_t)h->L, (uint64_t)ncl_mod(h->lpos - 1, h->L), &koff);
    if (part == 0) {
        *off = coff;
        return koff;
    }
    *off = coff + koff + klen;
    return span - koff - klen;
}

static ncl_result prepare(ncl_plan *p)
{
    ncl_result rc = ncl_hier_check(p);
    if (rc != NCL_SUCCESS)
        return rc;
    /* every reduction is inline (no scratch): a DMA that cannot leaves it to the others */
    if (!ncl_inline_all(p))
        return NCL_ERR_UNSUPPORTED;
    /* every channel needs at least one element per rank to be worth a queue */
    p->queues = ncl_channels_for(p->queues, p->count / (uint64_t)p->nranks);
    p->segments = 1;
    return NCL_SUCCESS;
}

/* Our halving-doubling partner at mask k: the group's rank on server s ^ k. */
static int partner(const ncl_hier *h, uint64_t k)
{
    return ncl_hier_inter_peer(h, (int64_t)((uint64_t)h->s ^ k));
}

/* Step k of the round in progress (diagnostics): a round numbers its steps 0 .. steps-1. */
static uint32_t step_at(const ncl_gen *g, uint64_t steps, uint64_t k)
{
    return (uint32_t)(g->i * steps + k);
}

/* Generator state: n = the channel portion's length, m = its first element (set once: they cost
 * divisions), i = round, j = step or pre-copy offset, k = pre-copy part or hd mask. */
static int next(const ncl_plan *p, uint32_t q, ncl_gen *g, ncl_task *t)
{
    ncl_hier h;
    ncl_hier_init(&h, p, q);
    const int L = h.L, S = h.S, i = h.lpos, s = h.s;
    const uint64_t es = p->esize, steps = 2u * (uint64_t)(L + S);
    /* where each phase's steps start in a round: intra reduce-scatter 0, inter reduce-scatter,
     * inter allgather, intra allgather */
    const uint64_t rs2 = (uint64_t)L - 1, ag2 = rs2 + 1u + (uint64_t)S, ag3 = rs2 + 2u * (uint64_t)S;
    const ncl_ref in = ncl_plan_input(p, p->rank), recv = ncl_ref_make(NCL_BUF_RECV, 0);
    const uint32_t data = NCL_NOTIFY_DATA(q), ready = NCL_NOTIFY_READY(q);
    const int inext = ncl_hier_inter_peer(&h, (int64_t)s + 1), iprev = ncl_hier_inter_peer(&h, (int64_t)s - 1);
    uint64_t off, len, poff, plen;

    NCL_GEN_BEGIN(g);
    g->n = channel_span(p, q, &g->m);
    if (g->n == 0)
        return g->line = -1, 0;
    /* prologue: fill recv with our own contribution, then tell the local prev it may reduce in */
    if (!p->inplace) {
        for (g->k = 0; g->k < 2; g->k++) {
            for (g->j = 0; g->j < precopy_part(p, &h, q, g->k, &off); g->j += p->slice_elems) {
                len = ncl_min_u64(p->slice_elems, precopy_part(p, &h, q, g->k, &off) - g->j);
                ncl_task_copy(t, ncl_ref_add(in, (off + g->j) * es), ncl_ref_add(recv, (off + g->j) * es),
                              len * es, 0);
                NCL_YIELD(g);
            }
        }
    }
    ncl_task_record(t, h.lprev, ready, 0);
    NCL_YIELD(g);
    ncl_task_wait(t, h.lnext, ready, 1, 0);
    NCL_YIELD(g);

    for (g->i = 0; g->i < ncl_div_ceil(ncl_div_ceil(g->n, (uint64_t)L), p->slice_elems); g->i++) {
        /* phase 1, step j: reduce chunk i-1-j into the local next's copy (step 0 from the input) */
        for (g->j = 0; g->j < (uint64_t)(L - 1); g->j++) {
            len = chunk_round(p, g->n, g->m, i - 1 - (int)g->j, g->i, &off);
            if (len) {
                ncl_task_write_reduce(t, p, h.lnext, ncl_ref_add(g->j == 0 ? in : recv, off * es),
                                      ncl_ref_add(recv, off * es), len * es, step_at(g, steps, g->j));
                NCL_YIELD(g);
            }
            ncl_task_record(t, h.lnext, data, step_at(g, steps, g->j));
            NCL_YIELD(g);
            ncl_task_wait(t, h.lprev, data, 1, step_at(g, steps, g->j));
            NCL_YIELD(g);
        }
        /* phase 2: chunk i's piece holds the server's sum; allreduce it over the servers. Every
         * member of the group has the same piece length: an empty piece skips the phase on all. */
        if (chunk_round(p, g->n, g->m, i, g->i, &poff) != 0) {
            if (h.hd) {
                /* recursive halving, masks S/2 .. 1: of the 2k parts from s & ~(2k-1) we keep the
                 * k from s & ~(k-1), and reduce our copy of the other k into partner s^k's */
                for (g->k = (uint64_t)S / 2, g->j = 0; g->k; g->k >>= 1, g->j++) {
                    ncl_task_record(t, partner(&h, g->k), ready,
                                    step_at(g, steps, rs2 + g->j));
                    NCL_YIELD(g);
                    ncl_task_wait(t, partner(&h, g->k), ready, 1,
                                  step_at(g, steps, rs2 + g->j));
                    NCL_YIELD(g);
                    plen = chunk_round(p, g->n, g->m, i, g->i, &poff);
                    len = parts(plen, poff, (uint64_t)S, ((uint64_t)s ^ g->k) & ~(g->k - 1), g->k, &off);
                    if (len) {
                        ncl_task_write_reduce(t, p, partner(&h, g->k),
                                              ncl_ref_add(recv, off * es), ncl_ref_add(recv, off * es),
                                              len * es, step_at(g, steps, rs2 + g->j));
                        NCL_YIELD(g);
                    }
                    ncl_task_record(t, partner(&h, g->k), data,
                                    step_at(g, steps, rs2 + g->j));
                    NCL_YIELD(g);
                    ncl_task_wait(t, partner(&h, g->k), data, 1,
                                  step_at(g, steps, rs2 + g->j));
                    NCL_YIELD(g);
                }
            } else {
                /* ring: our piece holds the server's sum; the inter prev may reduce into it */
                ncl_task_record(t, iprev, ready, step_at(g, steps, rs2));
                NCL_YIELD(g);
                ncl_task_wait(t, inext, ready, 1, step_at(g, steps, rs2));
                NCL_YIELD(g);
                /* reduce-scatter step j: part s-1-j into the inter next's copy */
                for (g->j = 0; g->j < (uint64_t)(S - 1); g->j++) {
                    plen = chunk_round(p, g->n, g->m, i, g->i, &poff);
                    len = parts(plen, poff, (uint64_t)S, (uint64_t)ncl_mod(s - 1 - (int)g->j, S), 1, &off);
                    if (len) {
                        ncl_task_write_reduce(t, p, inext, ncl_ref_add(recv, off * es),
                                              ncl_ref_add(recv, off * es), len * es,
                                              step_at(g, steps, rs2 + g->j));
                        NCL_YIELD(g);
                    }
                    ncl_task_record(t, inext, data, step_at(g, steps, rs2 + g->j));
                    NCL_YIELD(g);
                    ncl_task_wait(t, iprev, data, 1, step_at(g, steps, rs2 + g->j));
                    NCL_YIELD(g);
                }
            }
            /* our part s of the piece is reduced over all ranks: finish avg once */
            plen = chunk_round(p, g->n, g->m, i, g->i, &poff);
            if (p->avg && (len = parts(plen, poff, (uint64_t)S, (uint64_t)s, 1, &off)) != 0) {
                ncl_task_div(t, p, ncl_ref_add(recv, off * es), len * es,
                             step_at(g, steps, ag2 - 1u));
                NCL_YIELD(g);
            }
            if (h.hd) {
                /* recursive doubling, masks 1 .. S/2: our k finished parts to s^k */
                for (g->k = 1, g->j = 0; g->k < (uint64_t)S; g->k <<= 1, g->j++) {
                    plen = chunk_round(p, g->n, g->m, i, g->i, &poff);
                    len = parts(plen, poff, (uint64_t)S, (uint64_t)s & ~(g->k - 1), g->k, &off);
                    if (len) {
                        ncl_task_write(t, partner(&h, g->k), ncl_ref_add(recv, off * es),
                                       ncl_ref_add(recv, off * es), len * es,
                                       step_at(g, steps, ag2 + g->j));
                        NCL_YIELD(g);
                    }
                    ncl_task_record(t, partner(&h, g->k), data,
                                    step_at(g, steps, ag2 + g->j));
                    NCL_YIELD(g);
                    ncl_task_wait(t, partner(&h, g->k), data, 1,
                                  step_at(g, steps, ag2 + g->j));
                    NCL_YIELD(g);
                }
            } else {
                /* allgather step j: part s-j to the inter next (step 0: our finished part) */
                for (g->j = 0; g->j < (uint64_t)(S - 1); g->j++) {
                    plen = chunk_round(p, g->n, g->m, i, g->i, &poff);
                    len = parts(plen, poff, (uint64_t)S, (uint64_t)ncl_mod(s - (int)g->j, S), 1, &off);
                    if (len) {
                        ncl_task_write(t, inext, ncl_ref_add(recv, off * es), ncl_ref_add(recv, off * es),
                                       len * es, step_at(g, steps, ag2 + g->j));
                        NCL_YIELD(g);
                    }
                    ncl_task_record(t, inext, data, step_at(g, steps, ag2 + g->j));
                    NCL_YIELD(g);
                    ncl_task_wait(t, iprev, data, 1, step_at(g, steps, ag2 + g->j));
                    NCL_YIELD(g);
                }
            }
        }
        /* phase 3, step j: chunk i-j to the local next (step 0: our finished chunk) */
        for (g->j = 0; g->j < (uint64_t)(L - 1); g->j++) {
            len = chunk_round(p, g->n, g->m, i - (int)g->j, g->i, &off);
            if (len) {
                ncl_task_write(t, h.lnext, ncl_ref_add(recv, off * es), ncl_ref_add(recv, off * es), len * es,
                               step_at(g, steps, ag3 + g->j));
                NCL_YIELD(g);
            }
            ncl_task_record(t, h.lnext, data, step_at(g, steps, ag3 + g->j));
            NCL_YIELD(g);
            ncl_task_wait(t, h.lprev, data, 1, step_at(g, steps, ag3 + g->j));
            NCL_YIELD(g);
        }
    }
    NCL_GEN_END(g);
}

const ncl_algo_desc ncl_algo_hier_allreduce = {"hier", NCL_COLL_ALLREDUCE, NCL_ALGO_HIER, prepare, next};
