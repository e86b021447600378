/* ncl_a2a.h — what the alltoall algorithms share: where a rank's blocks live, and in place the
 * rounds that stage its outgoing blocks in scratch before its peers may write over them. */
#ifndef NCL_A2A_H
#define NCL_A2A_H

#include "ncl_algo.h"

/* Elements of every block a round moves. Out of place the whole block, in one round. In place a
 * peer's block lands where our block for that peer is, so a round copies the part of each
 * outgoing block it sends into scratch first, then grants the peers: p - 1 slots, as large as
 * scratch holds (the rounds run one after another, each paying its handshakes: a slice per slot
 * made a 2-rank 1 GiB alltoall 14 % slower than out of place, the whole scratch 4 %); 0 when
 * scratch cannot hold one element per slot. Copies and writes go in slices either way. */
static inline uint64_t ncl_a2a_round_elems(const ncl_plan *p)
{
    const uint64_t peers = (uint64_t)p->nranks - 1;
    if (!p->inplace || peers == 0)
        return p->count;
    return ncl_min_u64(p->count, p->scratch_bytes / (peers * p->esize));
}

/* Rounds every block takes (0 only when not one element fits in scratch). */
static inline uint64_t ncl_a2a_rounds(const ncl_plan *p)
{
    const uint64_t r = ncl_a2a_round_elems(p);
    return r ? (p->count + r - 1) / r : 0;
}

/* Element `off` of our block for rank j (our input: the send buffer, in place the receive one). */
static inline ncl_ref ncl_a2a_block(const ncl_plan *p, int j, uint64_t off)
{
    return ncl_ref_add(ncl_plan_input(p, p->rank), ((uint64_t)j * p->count + off) * p->esize);
}

/* Element `off` of block `sender` of a receiver's output: where the sender's block lands. */
static inline ncl_ref ncl_a2a_output(const ncl_plan *p, int sender, uint64_t off)
{
    return ncl_ref_make(NCL_BUF_RECV, ((uint64_t)sender * p->count + off) * p->esize);
}

/* In place: the scratch slot of the peer at index d = 1..p-1 (a round's part of our block for it). */
static inline ncl_ref ncl_a2a_slot(const ncl_plan *p, uint64_t d)
{
    return ncl_ref_make(NCL_BUF_SCRATCH, (d - 1) * ncl_a2a_round_elems(p) * p->esize);
}

/* What a round writes to a peer: its part of our block, staged in slot d in place. */
static inline ncl_ref ncl_a2a_source(const ncl_plan *p, int peer, uint64_t d, uint64_t off)
{
    return p->inplace ? ncl_a2a_slot(p, d) : ncl_a2a_block(p, peer, off);
}

/* Elements of round `round`'s part of a block. */
static inline uint64_t ncl_a2a_part(const ncl_plan *p, uint64_t round)
{
    const uint64_t r = ncl_a2a_round_elems(p), off = round * r;
    return ncl_min_u64(r, p->count - off);
}

#endif
