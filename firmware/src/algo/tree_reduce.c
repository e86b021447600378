/* tree_reduce.c — binomial-tree reduce: every subtree's partial result is reduced into its parent
 * with inline reduce at the destination, in pipelined rounds, the children granted ahead. */
#include "ncl_algo.h"

/* Tree as in tree_broadcast.c: v = rank - root (mod p), parent = v minus its lowest set bit,
 * children c_j = v + 2^j for 2^j below that bit (root: all 2^j < p), nearest (smallest subtree)
 * first. The buffer runs in R rounds (plan->segments): at most a slice and a scratch slot each,
 * and as many as the cost table's cheaper line wants: a pipeline over the tree's depth, or fine
 * rounds of NCL_TREE_ROUND_ALPHAS alphas' bytes (model/README.md, "Binomial tree reduce").
 *
 * Accumulation targets: recv on the root (pre-copied with its input unless in place); on every
 * other rank with children, K slots of scratch, round r in slot r % K, pre-filled with the input's
 * round r. Leaves reduce straight from their input. Round r is reduced into a target by c_0, then
 * c_1, ...: each child's READY for round r follows the DATA of the child before it, so two
 * children never reduce into one region at the same time, and the order is fixed (own + c_0 +
 * c_1 + ...), whatever the timing.
 *
 * Pipelining (the gather): the queue runs iterations; in iteration t it fills round t + a and
 * grants it to c_0, then for each child j takes c_j's round t - s j in (waits its DATA) and grants
 * that round to c_{j+1}, or, after the last child, hands it up. So c_j is granted each round s
 * iterations before the queue waits for it (lag s = 2): the grant's round trip hides behind the
 * other children's transfers, and all children write at once, each into its own round. The fill
 * leads by a = s (the root) or as much as the slots allow (a <= K - s(d-1) - 1: the slot of round
 * r is refilled only after the round K earlier left it, which the gather queue took in s(d-1)
 * iterations after its fill).
 *
 * Triggered grants (max_queues >= h + 1, h = ceil(lg p) the root's children): no lag. A queue per
 * link of the chain: FILL fills round r and grants it to c_0; grant queue j (1 <= j < d) waits for
 * c_{j-1}'s DATA of round r and grants round r to c_j; the last queue waits for c_{d-1}'s DATA and
 * writes the round up (the root: divides for avg). So each child is granted a round the moment
 * the child before it has landed it: with the lag every later child trailed its predecessor by s
 * rounds, and where the first children's writes share a link (a torus, a fat tree) the last ones'
 * s (d - 1) rounds came after that link had drained (a 4 x 8 torus at 2 MiB: 317 us against 218
 * for the busiest link). Slots as with the lag: a round waits in its slot for the parent's grant.
 *
 * Queues otherwise: with two (max_queues >= 2) the writes up run on a send queue of their own: it
 * waits for the gather's notify to itself that round r is reduced, for the parent's READY, writes,
 * posts DATA and posts a credit back to itself once the write has read the slot; the gather waits
 * for that credit before it refills the slot. With one queue the gather sends round r right after
 * taking it in (the executor holds the refill of a slot until the write that reads it has finished).
 * Every record is posted: a grant goes once its fill has landed, a DATA once its write has,
 * while the queue goes on.
 *
 * A reduce the DMA cannot do inline (ncl_inline_ok) is staged: the child writes into the parent's
 * staging slot (scratch after the K slots) and the parent reduces the slot into the target before
 * it grants anyone again. Then the lag is 0: one child at a time writes to a rank, so one staging
 * slot serves them all (the schedule before pipelining, with the fills and sends apart).
 *
 * Deadlock freedom: a queue waits for round r's steps in (round, child) order and only after the
 * steps of earlier rounds it depends on, and a parent grants round r to c_j after taking c_{j-1}'s
 * round r in, which needs nothing of c_j's later rounds: by induction over rounds and depth. With
 * triggered grants each queue waits for one counter in round order (FILL: its own credits; grant
 * queue j: c_{j-1}'s DATA; the last: c_{d-1}'s DATA, then the parent's READY), and round r of each
 * needs only round r of the queues before it and earlier rounds: the same induction. */

enum { GATHER, SEND, QUEUES_SPLIT };

#define LAG 2u

/* Staging needs room for a round-sized slot beside the targets on every rank that has children. */
static int staged(const ncl_plan *p)
{
    return p->nranks > 1 && !ncl_inline_all(p);
}

/* Triggered grants: FILL, a grant queue per child but the first, the last queue (the root's
 * children: ceil(lg p)); 0 where the DMA cannot reduce inline (staged) or queues are too few. */
static uint32_t triggered_queues(const ncl_plan *p)
{
    uint32_t h = 0;
    while ((1ull << h) < (uint64_t)p->nranks)
        h++;
    return p->nranks > 1 && !staged(p) && p->max_queues >= h + 1 ? h + 1 : 0;
}

/* Children of the rank at tree position v. */
static uint64_t children(const ncl_plan *p, uint64_t v)
{
    uint64_t n = (uint64_t)p->nranks, span = ncl_tree_child_span(v, n), d = 0;
    for (uint64_t m = 1; m < span && v + m < n; m <<= 1)
        d++;
    return d;
}

/* The most children of a rank other than the root: the one at v = L, the smallest position with
 * lowest bit L, has the most among those (0: no rank accumulates in scratch). */
static uint64_t children_max(const ncl_plan *p)
{
    uint64_t n = (uint64_t)p->nranks, most = 0;
    for (uint64_t l = 1; l < n; l <<= 1) {
        uint64_t d = children(p, l);
        most = d > most ? d : most;
    }
    return most;
}

/* The lag s and the slots K of every rank with children but the root: s d + 2 slots (the fill
 * leads by s, the send holds one round), else with a scratch too small for that s = 0 and two
 * slots, else one (each fill waits for the send before it); K = 0: no slot fits. */
typedef struct {
    uint64_t lag, slots, slot_elems;
} shape;

static shape shape_of(const ncl_plan *p)
{
    shape s = {staged(p) ? 0u : LAG, 0, 0};
    uint64_t dmax = children_max(p), elems = p->scratch_bytes / p->esize, extra = staged(p) ? 1u : 0u;
    if (dmax == 0)
        return s;
    s.slots = s.lag * dmax + 2;
    if (elems / (s.slots + extra) == 0)
        s.lag = 0, s.slots = 2;
    if (elems / (s.slots + extra) == 0)
        s.slots = 1;
    s.slot_elems = elems / (s.slots + extra);
    if (s.slot_elems == 0)
        s.slots = 0;
    return s;
}

/* The shape prepare derived (plan->derived: lag, slots, slot_elems): the generator asks per task. */
static shape prepared_shape(const ncl_plan *p)
{
    shape s = {p->derived[0], p->derived[1], p->derived[2]};
    return s;
}

/* How many iterations the fill of the rank at position v (d children) leads its first child's
 * wait by. */
static uint64_t lead(const shape *sh, uint64_t v, uint64_t d)
{
    if (v == 0 || d == 0)
        return sh->lag;
    uint64_t room = sh->slots - 1 - sh->lag * (d - 1); /* no wrap: slots >= lag (d - 1) + 1 */
    return room < sh->lag ? room : sh->lag;
}

static ncl_result prepare(ncl_plan *p)
{
    p->queues = triggered_queues(p) ? triggered_queues(p) : p->max_queues >= QUEUES_SPLIT ? QUEUES_SPLIT : 1u;
    p->segments = 1;
    if (p->slice_elems == 0 || p->esize == 0)
        return NCL_ERR_INVALID_ARGUMENT;
    const shape sh = shape_of(p);
    p->derived[0] = sh.lag, p->derived[1] = sh.slots, p->derived[2] = sh.slot_elems;
    if (p->count == 0)
        return NCL_SUCCESS;
    uint64_t round_max = p->slice_elems;
    if (p->nranks >= 4 || staged(p)) {
        if (children_max(p) > 0 && sh.slots == 0)
            return NCL_ERR_UNSUPPORTED;
        if (sh.slots)
            round_max = ncl_min_u64(round_max, sh.slot_elems);
        if (staged(p) && p->nranks > 1) { /* the root stages too: one slot of scratch */
            uint64_t cap = p->scratch_bytes / p->esize / (sh.slots + 1);
            if (cap == 0)
                return NCL_ERR_UNSUPPORTED;
            round_max = ncl_min_u64(round_max, cap);
        }
    }
    /* rounds: the cost model's pipeline over the tree's depth (the default line, or no table),
     * or where the table prices it cheaper, fine rounds of a few alphas' bytes (past a
     * round's issue every round's latency hides behind the transfers); at least enough that no
     * round exceeds round_max, at most one element each */
    uint64_t depth = 0, bytes = p->count * p->esize, k;
    while ((1ull << depth) < (uint64_t)p->nranks)
        depth++;
    if (p->cost_variant == NCL_COST_VARIANT_TREE_FINE) {
        uint64_t round_bytes = (uint64_t)NCL_TREE_ROUND_ALPHAS * p->link_alpha_ns * p->link_gbps;
        k = round_bytes ? bytes / round_bytes : 1;
        k = ncl_min_u64(ncl_max_u64(k, 1), NCL_TREE_ROUNDS_MAX);
    } else {
        k = ncl_pipeline_segments(depth + 1, bytes, p->link_alpha_ns, p->link_gbps);
    }
    k = ncl_min_u64(ncl_max_u64(k, ncl_div_ceil(p->count, round_max)), p->count);
    if (k > UINT32_MAX)
        return NCL_ERR_UNSUPPORTED;
    p->segments = (uint32_t)k;
    return NCL_SUCCESS;
}

static uint64_t round_part(const ncl_plan *p, uint64_t i, uint64_t *off)
{
    return ncl_part(p->count, p->segments, i, off);
}

/* Where round i (first element off) accumulates on the rank at tree position v. */
static ncl_ref target(const ncl_plan *p, const shape *sh, uint64_t v, uint64_t i, uint64_t off)
{
    if (v == 0)
        return ncl_ref_make(NCL_BUF_RECV, off * p->esize);
    return ncl_ref_make(NCL_BUF_SCRATCH, (i % sh->slots) * sh->slot_elems * p->esize);
}

/* The staging slot: after the targets (the root has none in scratch: at 0). */
static ncl_ref staging(const ncl_plan *p, const shape *sh)
{
    return ncl_ref_make(NCL_BUF_SCRATCH, sh->slots * sh->slot_elems * p->esize);
}

/* What the rank at tree position v sends its parent for round i (first element off). */
static ncl_ref subtree_sum(const ncl_plan *p, const shape *sh, uint64_t v, uint64_t i, uint64_t off)
{
    return children(p, v) == 0
               ? ncl_ref_add(ncl_plan_input(p, ncl_mod((int64_t)v + p->root, p->nranks)), off * p->esize)
               : target(p, sh, v, i, off);
}

/* Whether position v's reduce of round i into its parent (span below v) is inline. */
static int inline_to_parent(const ncl_plan *p, const shape *sh, uint64_t v, uint64_t span, uint64_t i)
{
    uint64_t off, len = round_part(p, i, &off);
    return ncl_inline_ok(p, subtree_sum(p, sh, v, i, off).off, target(p, sh, v - span, i, off).off,
                         len * p->esize);
}

/* Step k (0..2) of sending round i up from position v: wait for the parent's grant, reduce the
 * subtree's round into the parent's target (or its staging slot), post DATA behind the write. */
static void send_step(const ncl_plan *p, const shape *sh, uint64_t v, uint64_t i, uint64_t k, ncl_task *t)
{
    uint64_t span = ncl_tree_child_span(v, (uint64_t)p->nranks), off, len = round_part(p, i, &off);
    int parent = ncl_mod((int64_t)p->rank - (int64_t)span, p->nranks);
    if (k == 0) {
        ncl_task_wait(t, parent, NCL_NOTIFY_READY(0), 1, (uint32_t)i);
    } else if (k == 1) {
        ncl_ref src = subtree_sum(p, sh, v, i, off);
        if (inline_to_parent(p, sh, v, span, i))
            ncl_task_write_reduce(t, p, parent, src, target(p, sh, v - span, i, off), len * p->esize, (uint32_t)i);
        else
            ncl_task_write(t, parent, src, staging(p, sh), len * p->esize, (uint32_t)i);
    } else {
        ncl_task_post(t, parent, NCL_NOTIFY_DATA(0), (uint32_t)i);
    }
}

/* Step k (0..2) of filling round i at position v: wait for its slot's credit (the round K earlier
 * has been written up; only where a queue apart writes up and credits), copy the input's round
 * into the target (not on the root in place), grant the round to the first child. 0: no task. */
static int fill_step(const ncl_plan *p, const shape *sh, uint64_t v, uint64_t i, uint64_t k, int credits,
                     ncl_task *t)
{
    const int r = p->rank;
    uint64_t off, len;
    if (k == 0) {
        if (!credits || v == 0 || i < sh->slots)
            return 0;
        ncl_task_wait(t, r, NCL_NOTIFY_READY(0), 1, (uint32_t)(i - sh->slots)); /* next()'s credit */
    } else if (k == 1) {
        if (v == 0 && p->inplace)
            return 0;
        len = round_part(p, i, &off);
        ncl_task_copy(t, ncl_ref_add(ncl_plan_input(p, r), off * p->esize), target(p, sh, v, i, off),
                      len * p->esize, (uint32_t)i);
    } else {
        ncl_task_post(t, ncl_mod((int64_t)r + 1, p->nranks), NCL_NOTIFY_READY(0), (uint32_t)i);
    }
    return 1;
}

/* Generator state: i = iteration (gather) or round (send), j = child, k = fill or send step. */
static int next(const ncl_plan *p, uint32_t q, ncl_gen *g, ncl_task *t)
{
    const int n = p->nranks, r = p->rank;
    const uint64_t v = (uint64_t)ncl_mod((int64_t)r - p->root, n), es = p->esize, rounds = p->segments;
    const uint64_t d = children(p, v);
    const shape sh = prepared_shape(p);
    const uint64_t a = lead(&sh, v, d), iters = rounds + a + sh.lag * (d ? d - 1 : 0);
    const int triggered = triggered_queues(p) != 0, split = !triggered && p->queues == QUEUES_SPLIT;
    const int apart = triggered || split; /* the writes up run on a queue of their own */
    const uint32_t last = p->queues - 1, send_queue = triggered ? last : SEND;
    const ncl_ref in = ncl_plan_input(p, r);
    const uint32_t data = NCL_NOTIFY_DATA(0), ready = NCL_NOTIFY_READY(0);
    /* the queues tell each other with records to this rank itself on channel 0's ids: counters
     * are per sender, so they never meet a child's DATA or the parent's READY, and they stay
     * within the two ids a board with few notify counters gives each peer (ncl_mmio.h) */
    const uint32_t reduced = NCL_NOTIFY_DATA(0), credit = NCL_NOTIFY_READY(0);
#define CHILD(j) ncl_mod((int64_t)r + (int64_t)(1ull << (j)), n)
#define ROUND(j) (g->i - a - sh.lag * (j)) /* the round child j is taken in at iteration i */
    uint64_t off, len;

    NCL_GEN_BEGIN(g);
    if (p->count == 0 || (n == 1 && p->inplace))
        return g->line = -1, 0;
    if (n == 1) {
        /* a lone root: the copy is all */
        for (g->i = 0; q == GATHER && g->i < rounds; g->i++) {
            len = round_part(p, g->i, &off);
            ncl_task_copy(t, ncl_ref_add(in, off * es), target(p, &sh, 0, g->i, off), len * es, (uint32_t)g->i);
            NCL_YIELD(g);
        }
        return g->line = -1, 0;
    }

    if (triggered) { /* FILL, grant queues 1 .. d-1; the last queue ends the root or writes up (below) */
        for (g->i = 0; q == GATHER && d > 0 && g->i < rounds; g->i++)
            for (g->k = 0; g->k < 3; g->k++)
                if (fill_step(p, &sh, v, g->i, g->k, apart, t))
                    NCL_YIELD(g);
        for (g->i = 0; q >= 1 && q < last && q < d && g->i < rounds; g->i++) {
            ncl_task_wait(t, CHILD(q - 1), data, 1, (uint32_t)g->i);
            NCL_YIELD(g);
            ncl_task_post(t, CHILD(q), ready, (uint32_t)g->i);
            NCL_YIELD(g);
        }
        for (g->i = 0; q == last && v == 0 && g->i < rounds; g->i++) { /* the root's last queue */
            ncl_task_wait(t, CHILD(d - 1), data, 1, (uint32_t)g->i);
            NCL_YIELD(g);
            if (p->avg) { /* the round holds the full sum; avg divides it once, here */
                len = round_part(p, g->i, &off);
                ncl_task_div(t, p, target(p, &sh, 0, g->i, off), len * es, (uint32_t)g->i);
                NCL_YIELD(g);
            }
        }
    }

    /* the gather: iteration i fills and grants round i, takes child j's round i - a - s j in */
    for (g->i = 0; !triggered && q == GATHER && d > 0 && g->i < iters; g->i++) {
        for (g->k = 0; g->i < rounds && g->k < 3; g->k++)
            if (fill_step(p, &sh, v, g->i, g->k, apart, t))
                NCL_YIELD(g);
        for (g->j = 0; g->j < d; g->j++) {
            if (g->i < a + sh.lag * g->j || ROUND(g->j) >= rounds)
                continue;
            ncl_task_wait(t, CHILD(g->j), data, 1, (uint32_t)ROUND(g->j));
            NCL_YIELD(g);
            if (!inline_to_parent(p, &sh, v + (1ull << g->j), 1ull << g->j, ROUND(g->j))) {
                /* it wrote to staging */
                len = round_part(p, ROUND(g->j), &off);
                ncl_task_reduce(t, p, staging(p, &sh), target(p, &sh, v, ROUND(g->j), off), len * es,
                                (uint32_t)ROUND(g->j));
                NCL_YIELD(g);
            }
            if (g->j + 1 < d) {
                ncl_task_post(t, CHILD(g->j + 1), ready, (uint32_t)ROUND(g->j));
                NCL_YIELD(g);
            } else if (v == 0) {
                /* the root: the round holds the full sum; avg divides it once, here */
                if (p->avg) {
                    len = round_part(p, ROUND(g->j), &off);
                    ncl_task_div(t, p, target(p, &sh, 0, ROUND(g->j), off), len * es, (uint32_t)ROUND(g->j));
                    NCL_YIELD(g);
                }
            } else if (split) {
                ncl_task_post(t, r, reduced, (uint32_t)ROUND(g->j));
                NCL_YIELD(g);
            } else {
                for (g->k = 0; g->k < 3; g->k++) {
                    send_step(p, &sh, v, ROUND(g->j), g->k, t);
                    NCL_YIELD(g);
                }
            }
        }
    }

    /* the send (a leaf's only part): each round up once reduced (triggered: the last child's DATA
     * is in; split: the gather said so) and granted */
    for (g->i = 0; v != 0 && (apart ? q == send_queue : d == 0) && g->i < rounds; g->i++) {
        if (apart && d > 0) {
            ncl_task_wait(t, triggered ? CHILD(d - 1) : r, triggered ? data : reduced, 1, (uint32_t)g->i);
            NCL_YIELD(g);
        }
        for (g->k = 0; g->k < 3; g->k++) {
            send_step(p, &sh, v, g->i, g->k, t);
            NCL_YIELD(g);
        }
        if (apart && d > 0 && g->i + sh.slots < rounds) {
            /* the write has read the slot: the gather may refill it */
            ncl_task_post(t, r, credit, (uint32_t)g->i);
            NCL_YIELD(g);
        }
    }
    NCL_GEN_END(g);
#undef CHILD
#undef ROUND
}

const ncl_algo_desc ncl_algo_tree_reduce = {"tree", NCL_COLL_REDUCE, NCL_ALGO_TREE, prepare, next};
