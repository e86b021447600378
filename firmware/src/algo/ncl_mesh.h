/* ncl_mesh.h — the queue layout the full-mesh family shares (mesh reduce-scatter, allgather,
 * allreduce, det): peers named by their distance d = 1..p-1, one send queue per peer as far as
 * the backend allows, and a local queue that grants READY, waits for DATA and reduces. */
#ifndef NCL_MESH_H
#define NCL_MESH_H

#include "ncl_algo.h"

/* The rank d places after us, and d places before us. */
static inline int ncl_mesh_peer_to(const ncl_plan *p, uint64_t d)
{
    return ncl_mod((int64_t)p->rank + (int64_t)d, p->nranks);
}
static inline int ncl_mesh_peer_from(const ncl_plan *p, uint64_t d)
{
    return ncl_mod((int64_t)p->rank - (int64_t)d, p->nranks);
}

/* Queues that write to peers: one per peer as far as the backend allows. */
static inline uint32_t ncl_mesh_send_queues(const ncl_plan *p)
{
    uint32_t peers = (uint32_t)p->nranks - 1;
    return peers < p->max_queues ? peers : p->max_queues;
}

/* The local queue: a spare one when there is room, else the last send queue (fewest peers). */
static inline uint32_t ncl_mesh_local_queue(const ncl_plan *p)
{
    uint32_t s = ncl_mesh_send_queues(p);
    return s < p->max_queues ? s : s - 1;
}

/* The send queue of the pair at distance d (on the sender; the receiver uses its notify ids). */
static inline uint32_t ncl_mesh_queue_of(const ncl_plan *p, uint64_t d)
{
    return (uint32_t)((d - 1) % ncl_mesh_send_queues(p));
}

#endif
