/* det_allreduce.c — deterministic allreduce: every element is reduced in the one canonical order
 * ((x_0 op x_1) op x_2) ... op x_{p-1}, whatever the algorithm setting, channels or call sizes. */
#include "ncl_mesh.h"

/* Why: the result of a float reduction depends on the order of its operations. Ring, hd, mesh
 * and the trees each reduce an element in an order set by the algorithm, the rank's place in
 * it, the channel split and the message size. Here one rank reduces each element left to right
 * in rank order with LOCAL_REDUCEs (dst = dst op src, the engine's element-wise kernel), then
 * divides once for avg: the result depends only on the inputs and p, bit for bit.
 *
 * Slots. Every rank has one scratch slot per sender of E = min(slice, scratch / ((p-1) esize))
 * elements; a buffer moves in rounds of at most E per destination. Out of place rank 0 writes
 * into the receiver's recv instead (where the receiver accumulates; x_0 comes first), regions
 * that differ per round, so only the first needs READY; a slot is reused every round after the
 * receiver reduced it and recorded READY back to its writer. d = 1..p-1 indexes the peers
 * (ncl_mesh_distance); the pair at index d uses send queue (d-1) % S of the sender, S = min(p-1,
 * max_queues, and the DMA engines for blocks of several rounds: ncl_mesh_send_queues), so with
 * enough queues every write of a round is in flight at once. The local
 * queue (a spare queue when S < max_queues, else the last send queue, whose sends of a
 * round come before its reduces) grants READY, waits for DATA and reduces: for k = 0..p-1, in
 * this order, wait for k's DATA and fold x_k in. The accumulator is recv, except in place on
 * ranks > 0: recv holds x_r, needed at position r, so the sum grows in rank 0's slot and is
 * copied out at the end. Out of place rank 0 starts it with a copy of its own input.
 *
 * Two schedules, the same arithmetic (so the same bits):
 * - gather (small buffers, one round): every rank writes its whole input to every peer and
 *   reduces the whole buffer itself. In place recv is also the send source: the local queue
 *   overwrites it only after the send queues wrote it everywhere (LOCAL notifies on self).
 * - split (large buffers): a full-mesh reduce-scatter, rank r reducing block r (ncl_part) in
 *   rank order, rounds as many as block 0 (the largest) needs, then a full-mesh allgather of
 *   the finished blocks (the local queue releases the send queues with LOCAL notifies; no
 *   READY: every receiver granted one already, and in place the block's region on the receiver
 *   was sent to us in the reduce-scatter, whose DATA we waited for).
 * Gather is used when the buffer fits one round and split's extra message costs more than the
 * bytes it saves, n (p-2)/p beta < alpha (cost model inputs); with p = 2 whenever it fits.
 * Deadlock freedom: round i's writes wait only for READYs of round i-1's reduces, round i's
 * reduces only for round i's writes, the allgather only for the reduce-scatter.
 *
 * Cost (alpha per message, beta per byte, gamma per reduced byte, n bytes).
 * - split: each rank sends and receives 2 (p-1)/p n bytes like a ring, and reduces (p-1)/p n:
 *   the full-mesh formula 2 alpha + (2/p) n beta + ((p-1)/p) n gamma. It adds what mesh adds
 *   (one READY per peer before the first write and per further round one per slot, p-1
 *   LOCAL_REDUCEs per round one after another, the allgather in writes of a slice, LOCAL
 *   notifies between the phases, ceil((p-1) / S) writes in a row when queues are
 *   fewer than peers) and, for the order: a round's reduces wait for senders in rank order,
 *   not arrival order; out of place rank 0 copies its block (n/p) into recv, in place every
 *   rank > 0 copies its block out of scratch (n/p); avg: one LOCAL_DIV per round. Scratch:
 *   p-1 slots (mesh: p-2 out of place), so rounds can be a little smaller than mesh's.
 * - gather: one round, alpha + n beta + (p-1) n gamma plus the READY before it: each rank
 *   receives (p-1) n bytes and reduces (p-1) n; out of place rank 0, in place ranks > 0 copy n
 *   bytes locally.
 * Against a ring, the price of determinism is the full-mesh pattern (on a ring topology the
 * writes cross several links and contend) and the in-order reduce chain, not extra bytes.
 * Scratch is refused (only) when it cannot hold one element per slot.
 *
 * Wide accumulation (plan->wide: fp16/bf16 sum/prod/avg with ncl_config.wide_accumulation). The
 * fold is the same, in the same order, but into an fp32 accumulator at scratch 0 (E fp32
 * elements, 4-byte aligned, before the slots): x_0 is widened into it (LOCAL_WIDEN, exact),
 * x_1 .. x_{p-1} are added in fp32 (LOCAL_REDUCE_WIDE), and one LOCAL_NARROW rounds the round's
 * result into recv once, dividing by p first for avg. So the result is
 * narrow(((x_0 + x_1) + x_2) ... in fp32) whatever the split, like the narrow det result is
 * x_0 (+) x_1 (+) ... with a narrow rounding per step. Recv only receives the final value, so no
 * rank accumulates in place any more (no copy out of slot 0); in place the NARROW into recv waits
 * until recv was sent (gather: LOCAL notifies; split: block r is never sent in the
 * reduce-scatter). Cost over narrow det: scratch 4 bytes more per element of a round (rounds
 * shrink a little), and per round one extra pass over the accumulator (the NARROW; out of place
 * rank 0 and in place ranks > 0 lose their copy in exchange); the reduces touch fp32 on one
 * side (2x the accumulator bytes). */

/* The sender's queue for the pair sender -> receiver (the receiver uses its notify ids). */
static uint32_t queue_of(const ncl_plan *p, int sender, int receiver)
{
    return ncl_mesh_queue_of(p, ncl_mesh_index(p, (uint64_t)ncl_mod((int64_t)receiver - sender, p->nranks)));
}

/* Elements per round and slot: one slice, and p-1 slots of it (plus, wide, the fp32
 * accumulator) must fit in scratch. Prepare derives it once (ncl_mesh_slot_elems). */
static uint64_t round_elems_of(const ncl_plan *p)
{
    return ncl_mesh_round_elems(p, p->nranks < 2 ? 0 : (uint64_t)p->nranks - 1, p->wide ? 4u : 0u);
}
static uint64_t round_elems(const ncl_plan *p) { return ncl_mesh_slot_elems(p); }

/* Wide: the fp32 accumulator at scratch 0, the slots after it. */
static ncl_ref acc_ref(void) { return ncl_ref_make(NCL_BUF_SCRATCH, 0); }
static uint64_t slot_base(const ncl_plan *p) { return p->wide ? round_elems(p) * 4u : 0u; }

/* Wide fold of contribution k: the first widens into the accumulator, the others add to it. */
static void task_fold(ncl_task *t, const ncl_plan *p, uint64_t k, ncl_ref src, uint64_t bytes, uint32_t step)
{
    ncl_task_wide(t, p, k == 0 ? NCL_TASK_LOCAL_WIDEN : NCL_TASK_LOCAL_REDUCE_WIDE, src, acc_ref(), bytes, step);
}

/* Whether sender's writes go to a slot reused every round (else, rank 0 out of place: recv). */
static int uses_slot(const ncl_plan *p, int sender)
{
    return p->inplace || sender != 0;
}

/* Where sender puts the data starting at element `off` on receiver: its slot there (slots of
 * the senders other than the receiver, in rank order), or for rank 0 out of place, recv. */
static ncl_ref target(const ncl_plan *p, int sender, int receiver, uint64_t off)
{
    if (!uses_slot(p, sender))
        return ncl_ref_make(NCL_BUF_RECV, off * p->esize);
    uint64_t slot = p->inplace ? (uint64_t)(sender < receiver ? sender : sender - 1) : (uint64_t)sender - 1;
    return ncl_ref_make(NCL_BUF_SCRATCH, slot_base(p) + slot * round_elems(p) * p->esize);
}

/* The gather schedule: the buffer fits one round and, when the cost table prices det, its
 * cheapest line prices the gather (NCL_COST_VARIANT_DET_GATHER); without a table n (p-2)/p beta < alpha (beta =
 * 1/gbps ns per byte: a full mesh of equal links, where gather only saves split's second
 * message; on other topologies gather's p-1 whole-buffer writes share routes). Plan fields
 * only, so every rank decides alike. */
static int use_gather(const ncl_plan *p)
{
    uint64_t n = (uint64_t)p->nranks, bytes = p->count * p->esize;
    if (p->count > round_elems(p))
        return 0;
    if (p->cost_line != NCL_COST_LINE_NONE)
        return p->cost_variant == NCL_COST_VARIANT_DET_GATHER;
    return bytes * (n - 2) < (uint64_t)p->link_alpha_ns * p->link_gbps * n;
}

static ncl_result prepare(ncl_plan *p)
{
    ncl_mesh_derive(p);
    return ncl_mesh_prepare(p, round_elems_of(p));
}

/* Generator fields of both schedules: i = round, m = the first element of the current task,
 * n = its length; send queues: j = distance; local queue: k = the rank whose contribution is
 * folded in, j = the queue whose LOCAL notify it waits for or records. */

/* Gather: one round, the whole buffer (use_gather: it fits a slot), so no slot is reused. */
static int next_gather(const ncl_plan *p, uint32_t q, ncl_gen *g, ncl_task *t)
{
    const int r = p->rank, np = p->nranks;
    const uint64_t bytes = p->count * p->esize;
    const uint32_t sq = ncl_mesh_send_queues(p), lq = ncl_mesh_local_queue(p);
    const ncl_ref in = ncl_plan_input(p, r), recv = ncl_ref_make(NCL_BUF_RECV, 0);
    const int in_slot = p->inplace && r > 0; /* the sum grows in rank 0's slot */

    NCL_GEN_BEGIN(g);
    /* every sender may write */
    if (q == lq) {
        for (g->k = 0; g->k < (uint64_t)np; g->k++) {
            if ((int)g->k != r) {
                ncl_task_record(t, (int)g->k, NCL_NOTIFY_READY(queue_of(p, (int)g->k, r)), 0);
                NCL_YIELD(g);
            }
        }
    }
    /* send queues: our input to each peer of this queue */
    if (q < sq) {
        for (g->j = q + 1; g->j < (uint64_t)np; g->j += sq) {
            ncl_task_wait(t, ncl_mesh_peer_to(p, g->j), NCL_NOTIFY_READY(q), 1, 0);
            NCL_YIELD(g);
            ncl_task_write(t, ncl_mesh_peer_to(p, g->j), in, target(p, r, ncl_mesh_peer_to(p, g->j), 0), bytes, 0);
            NCL_YIELD(g);
            ncl_task_record(t, ncl_mesh_peer_to(p, g->j), NCL_NOTIFY_DATA(q), 0);
            NCL_YIELD(g);
        }
        /* in place the local queue may overwrite recv once it has been sent */
        if (p->inplace && q != lq) {
            ncl_task_record(t, r, NCL_NOTIFY_LOCAL(q), 0);
            NCL_YIELD(g);
        }
    }
    if (q != lq)
        return g->line = -1, 0;
    if (p->wide) {
        /* local queue, wide: fold x_0, ..., x_{p-1} into the fp32 accumulator, in this order */
        for (g->k = 0; g->k < (uint64_t)np; g->k++) {
            if ((int)g->k != r) {
                ncl_task_wait(t, (int)g->k, NCL_NOTIFY_DATA(queue_of(p, (int)g->k, r)), 1, 0);
                NCL_YIELD(g);
            }
            task_fold(t, p, g->k, (int)g->k == r ? in : target(p, (int)g->k, r, 0), bytes, 0);
            NCL_YIELD(g);
        }
        /* in place recv is the send source: round into it once it has been sent */
        for (g->j = 0; p->inplace && g->j < sq; g->j++) {
            if (g->j != lq) {
                ncl_task_wait(t, r, NCL_NOTIFY_LOCAL(g->j), 1, 0);
                NCL_YIELD(g);
            }
        }
        ncl_task_wide(t, p, NCL_TASK_LOCAL_NARROW, acc_ref(), recv, bytes, 0);
        NCL_YIELD(g);
        return g->line = -1, 0;
    }
    /* local queue: fold x_0, x_1, ..., x_{p-1} into the accumulator, in this order */
    for (g->k = 0; g->k < (uint64_t)np; g->k++) {
        if ((int)g->k != r) {
            ncl_task_wait(t, (int)g->k, NCL_NOTIFY_DATA(queue_of(p, (int)g->k, r)), 1, 0);
            NCL_YIELD(g);
        }
        if (g->k == 0) {
            /* out of place rank 0 seeds recv with x_0; elsewhere x_0 is already in place
             * (rank 0's recv in place, rank 0's write into recv or slot 0 otherwise) */
            if (r == 0 && !p->inplace) {
                ncl_task_copy(t, in, recv, bytes, 0);
                NCL_YIELD(g);
            }
            continue;
        }
        /* in place rank 0 accumulates over its input: only once it has been sent */
        if (p->inplace && r == 0 && g->k == 1) {
            for (g->j = 0; g->j < sq; g->j++) {
                if (g->j != lq) {
                    ncl_task_wait(t, r, NCL_NOTIFY_LOCAL(g->j), 1, 0);
                    NCL_YIELD(g);
                }
            }
        }
        ncl_task_reduce(t, p, (int)g->k == r ? in : target(p, (int)g->k, r, 0),
                        in_slot ? target(p, 0, r, 0) : recv, bytes, 0);
        NCL_YIELD(g);
    }
    /* in place on ranks > 0: the result leaves slot 0 for recv once recv was sent */
    if (in_slot) {
        for (g->j = 0; g->j < sq; g->j++) {
            if (g->j != lq) {
                ncl_task_wait(t, r, NCL_NOTIFY_LOCAL(g->j), 1, 0);
                NCL_YIELD(g);
            }
        }
        ncl_task_copy(t, target(p, 0, r, 0), recv, bytes, 0);
        NCL_YIELD(g);
    }
    if (p->avg) {
        ncl_task_div(t, p, recv, bytes, 0);
        NCL_YIELD(g);
    }
    NCL_GEN_END(g);
}

/* Split: reduce-scatter round i moves round i of block t to rank t; every rank runs the round
 * count of block 0, the largest, so READY and DATA counts match (rounds past the end of a
 * smaller block move nothing but keep the handshakes); then the allgather. */
static int next_split(const ncl_plan *p, uint32_t q, ncl_gen *g, ncl_task *t)
{
    const int r = p->rank, np = p->nranks;
    uint64_t first;
    const uint64_t es = p->esize, e = round_elems(p);
    const uint64_t rounds = ncl_div_ceil(ncl_part(p->count, (uint64_t)np, 0, &first), e);
    const uint32_t sq = ncl_mesh_send_queues(p), lq = ncl_mesh_local_queue(p);
    const ncl_ref in = ncl_plan_input(p, r), recv = ncl_ref_make(NCL_BUF_RECV, 0);
    const int in_slot = p->inplace && r > 0; /* the sum grows in rank 0's slot */
    const uint32_t ag = (uint32_t)rounds;    /* allgather step, for diagnostics */

    NCL_GEN_BEGIN(g);
    /* reduce-scatter: every sender may write round 0 */
    if (q == lq) {
        for (g->k = 0; g->k < (uint64_t)np; g->k++) {
            if ((int)g->k != r) {
                ncl_task_record(t, (int)g->k, NCL_NOTIFY_READY(queue_of(p, (int)g->k, r)), 0);
                NCL_YIELD(g);
            }
        }
    }
    for (g->i = 0; g->i < rounds; g->i++) {
        /* send queues: round i of block t to each peer t of this queue, once its slot is free.
         * In place these read recv block t, which this rank's local queue never writes. */
        for (g->j = q + 1; q < sq && g->j < (uint64_t)np; g->j += sq) {
            if (g->i == 0 || uses_slot(p, r)) {
                ncl_task_wait(t, ncl_mesh_peer_to(p, g->j), NCL_NOTIFY_READY(q), 1, (uint32_t)g->i);
                NCL_YIELD(g);
            }
            g->n = ncl_mesh_block_round(p, ncl_mesh_peer_to(p, g->j), g->i, e, &g->m);
            if (g->n) {
                ncl_task_write(t, ncl_mesh_peer_to(p, g->j), ncl_ref_add(in, g->m * es),
                               target(p, r, ncl_mesh_peer_to(p, g->j), g->m), g->n * es, (uint32_t)g->i);
                NCL_YIELD(g);
            }
            ncl_task_record(t, ncl_mesh_peer_to(p, g->j), NCL_NOTIFY_DATA(q), (uint32_t)g->i);
            NCL_YIELD(g);
        }
        if (q != lq)
            continue;
        /* local queue: fold x_0, ..., x_{p-1} of block r's round i into the accumulator */
        g->n = ncl_mesh_block_round(p, r, g->i, e, &g->m);
        if (p->wide) {
            for (g->k = 0; g->k < (uint64_t)np; g->k++) {
                if ((int)g->k != r) {
                    ncl_task_wait(t, (int)g->k, NCL_NOTIFY_DATA(queue_of(p, (int)g->k, r)), 1,
                                  (uint32_t)g->i);
                    NCL_YIELD(g);
                }
                if (g->n) {
                    task_fold(t, p, g->k,
                              (int)g->k == r ? ncl_ref_add(in, g->m * es) : target(p, (int)g->k, r, g->m),
                              g->n * es, (uint32_t)g->i);
                    NCL_YIELD(g);
                }
                /* the slot is free once folded (out of place rank 0 writes recv, no slot) */
                if ((int)g->k != r && uses_slot(p, (int)g->k) && g->i + 1 < rounds) {
                    ncl_task_record(t, (int)g->k, NCL_NOTIFY_READY(queue_of(p, (int)g->k, r)),
                                    (uint32_t)g->i + 1);
                    NCL_YIELD(g);
                }
            }
            /* one rounding (and avg's division) per element; block r is not sent before */
            if (g->n) {
                ncl_task_wide(t, p, NCL_TASK_LOCAL_NARROW, acc_ref(), ncl_ref_add(recv, g->m * es), g->n * es,
                          (uint32_t)g->i);
                NCL_YIELD(g);
            }
            continue;
        }
        for (g->k = 0; g->k < (uint64_t)np; g->k++) {
            if ((int)g->k != r) {
                ncl_task_wait(t, (int)g->k, NCL_NOTIFY_DATA(queue_of(p, (int)g->k, r)), 1,
                              (uint32_t)g->i);
                NCL_YIELD(g);
            }
            if (g->k == 0) { /* x_0 comes first: copied (rank 0 out of place) or already there */
                if (r == 0 && !p->inplace && g->n) {
                    ncl_task_copy(t, ncl_ref_add(in, g->m * es), ncl_ref_add(recv, g->m * es),
                                  g->n * es, (uint32_t)g->i);
                    NCL_YIELD(g);
                }
                continue;
            }
            if (g->n) {
                ncl_task_reduce(t, p,
                                (int)g->k == r ? ncl_ref_add(in, g->m * es) : target(p, (int)g->k, r, g->m),
                                in_slot ? target(p, 0, r, g->m) : ncl_ref_add(recv, g->m * es),
                                g->n * es, (uint32_t)g->i);
                NCL_YIELD(g);
            }
            if ((int)g->k != r && g->i + 1 < rounds) { /* slot k is free for the next round */
                ncl_task_record(t, (int)g->k, NCL_NOTIFY_READY(queue_of(p, (int)g->k, r)),
                                (uint32_t)g->i + 1);
                NCL_YIELD(g);
            }
        }
        if (in_slot) { /* the sum leaves slot 0 for recv block r, then slot 0 is free */
            if (g->n) {
                ncl_task_copy(t, target(p, 0, r, g->m), ncl_ref_add(recv, g->m * es), g->n * es,
                              (uint32_t)g->i);
                NCL_YIELD(g);
            }
            if (g->i + 1 < rounds) {
                ncl_task_record(t, 0, NCL_NOTIFY_READY(queue_of(p, 0, r)), (uint32_t)g->i + 1);
                NCL_YIELD(g);
            }
        }
        /* the round is reduced over all ranks: finish avg once, before it is gathered */
        if (p->avg && g->n) {
            ncl_task_div(t, p, ncl_ref_add(recv, g->m * es), g->n * es, (uint32_t)g->i);
            NCL_YIELD(g);
        }
    }
    /* allgather: block r is final; the local queue releases the other send queues */
    if (q == lq) {
        for (g->j = 0; g->j < sq; g->j++) {
            if (g->j != lq) {
                ncl_task_record(t, r, NCL_NOTIFY_LOCAL(g->j), ag);
                NCL_YIELD(g);
            }
        }
    }
    if (q < sq) {
        if (q != lq) {
            ncl_task_wait(t, r, NCL_NOTIFY_LOCAL(q), 1, ag);
            NCL_YIELD(g);
        }
        /* block r to each peer of this queue, in writes of a slice, then DATA behind them */
        for (g->j = q + 1; g->j < (uint64_t)np; g->j += sq) {
            for (g->i = 0; (g->n = ncl_mesh_block_round(p, r, g->i, p->slice_elems, &g->m)) != 0; g->i++) {
                ncl_task_write(t, ncl_mesh_peer_to(p, g->j), ncl_ref_add(recv, g->m * es),
                               ncl_ref_add(recv, g->m * es), g->n * es, ag);
                NCL_YIELD(g);
            }
            ncl_task_record(t, ncl_mesh_peer_to(p, g->j), NCL_NOTIFY_DATA(q), ag);
            NCL_YIELD(g);
        }
    }
    /* the allgather ends when every peer's block has landed */
    if (q == lq) {
        for (g->k = 0; g->k < (uint64_t)np; g->k++) {
            if ((int)g->k != r) {
                ncl_task_wait(t, (int)g->k, NCL_NOTIFY_DATA(queue_of(p, (int)g->k, r)), 1, ag);
                NCL_YIELD(g);
            }
        }
    }
    NCL_GEN_END(g);
}

static int next(const ncl_plan *p, uint32_t q, ncl_gen *g, ncl_task *t)
{
    const uint64_t es = p->esize;
    const ncl_ref in = ncl_plan_input(p, p->rank), recv = ncl_ref_make(NCL_BUF_RECV, 0);

    if (p->count > 0 && p->nranks > 1)
        return use_gather(p) ? next_gather(p, q, g, t) : next_split(p, q, g, t);
    /* nothing to reduce: out of place one rank copies its input, slice by slice */
    NCL_GEN_BEGIN(g);
    for (g->m = 0; !p->inplace && g->m < p->count; g->m += p->slice_elems) {
        g->n = ncl_min_u64(p->slice_elems, p->count - g->m);
        ncl_task_copy(t, ncl_ref_add(in, g->m * es), ncl_ref_add(recv, g->m * es), g->n * es, 0);
        NCL_YIELD(g);
    }
    NCL_GEN_END(g);
}

const ncl_algo_desc ncl_algo_det_allreduce = {"det", NCL_COLL_ALLREDUCE, NCL_ALGO_DET, prepare, next};
