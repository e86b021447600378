/* mesh_allgather.c — full-mesh allgather: every rank writes its block into every peer's receive
 * buffer, to all its peers at once. */
#include "ncl_mesh.h"

/* Schedule. d = 1..p-1 indexes the peers (r+d below: the rank ncl_mesh_distance(d) after r,
 * ncl_mesh.h): rank r writes its input to rank r+d's recv
 * block r, and receives block r-d from rank r-d. The pair at distance d runs on queue (d-1) % S
 * of both ranks, S = min(p-1, max_queues, and the DMA engines for blocks of several rounds:
 * ncl_mesh_send_queues), so with enough queues every write is in flight at once. The block goes
 * in writes of at most a slice, all into the recv the receiver bound when it entered: one READY
 * per pair up front, one DATA per pair after its last write. Out of place the rank also copies its
 * own input into recv block r, on a spare queue when p - 1 < max_queues, else after the sends of
 * the last queue (it serves the fewest peers).
 *
 * Over the formula alpha + (1/p) n beta (n = p * count * esize), this adds:
 * - one READY per peer before the first write (a message of its own, not behind a write);
 * - the block goes in ceil(count / slice) writes per peer, one task each;
 * - out of place, a local copy of n/p bytes (overlapping the writes when there is a spare queue);
 * - with fewer send queues than peers (S < p - 1) a queue writes to its peers one after
 *   another: ceil((p-1) / S) blocks in a row instead of one. */

static ncl_result prepare(ncl_plan *p)
{
    ncl_mesh_derive(p);
    ncl_mesh_layout(p, !p->inplace); /* the local queue only copies our own block */
    return NCL_SUCCESS;
}

/* Generator state: j = distance d, i = element offset of the current write or copy. */
static int next(const ncl_plan *p, uint32_t q, ncl_gen *g, ncl_task *t)
{
    const int r = p->rank, np = p->nranks;
    const uint64_t es = p->esize, sl = p->slice_elems;
    const uint32_t sq = ncl_mesh_send_queues(p);
    const ncl_ref in = ncl_plan_input(p, r), mine = ncl_ref_make(NCL_BUF_RECV, (uint64_t)r * p->count * es);

    NCL_GEN_BEGIN(g);
    if (p->count == 0)
        return g->line = -1, 0;
    if (q < sq) {
        /* step 0: the senders of this queue may write into our recv */
        for (g->j = q + 1; g->j < (uint64_t)np; g->j += sq) {
            ncl_task_record(t, ncl_mesh_peer_from(p, g->j), NCL_NOTIFY_READY(q), 0);
            NCL_YIELD(g);
        }
        /* step 1: our block to each peer of this queue, then DATA behind its last write */
        for (g->j = q + 1; g->j < (uint64_t)np; g->j += sq) {
            ncl_task_wait(t, ncl_mesh_peer_to(p, g->j), NCL_NOTIFY_READY(q), 1, 0);
            NCL_YIELD(g);
            for (g->i = 0; g->i < p->count; g->i += sl) {
                ncl_task_write(t, ncl_mesh_peer_to(p, g->j), ncl_ref_add(in, g->i * es),
                               ncl_ref_add(mine, g->i * es), ncl_min_u64(sl, p->count - g->i) * es, 1);
                NCL_YIELD(g);
            }
            ncl_task_record(t, ncl_mesh_peer_to(p, g->j), NCL_NOTIFY_DATA(q), 1);
            NCL_YIELD(g);
        }
    }
    if (!p->inplace && q == ncl_mesh_local_queue(p)) { /* our own block */
        for (g->i = 0; g->i < p->count; g->i += sl) {
            ncl_task_copy(t, ncl_ref_add(in, g->i * es), ncl_ref_add(mine, g->i * es),
                          ncl_min_u64(sl, p->count - g->i) * es, 1);
            NCL_YIELD(g);
        }
    }
    if (q < sq) {
        /* step 1 ends when every block of this queue's senders has landed */
        for (g->j = q + 1; g->j < (uint64_t)np; g->j += sq) {
            ncl_task_wait(t, ncl_mesh_peer_from(p, g->j), NCL_NOTIFY_DATA(q), 1, 1);
            NCL_YIELD(g);
        }
    }
    NCL_GEN_END(g);
}

const ncl_algo_desc ncl_algo_mesh_allgather = {"mesh", NCL_COLL_ALLGATHER, NCL_ALGO_MESH, prepare, next};
