/* ncl_a2a.h — what the alltoall algorithms share: where a rank's blocks live (every block `count`
 * elements, or alltoallv's count matrix), and in place the rounds that stage its outgoing blocks
 * in scratch before its peers may write over them. */
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

/* Rounds every block takes (0 only when not one element fits in scratch): the largest block's
 * (alltoallv: `count` is the matrix's largest entry), so every pair runs the same handshakes. */
static inline uint64_t ncl_a2a_rounds(const ncl_plan *p)
{
    const uint64_t r = ncl_a2a_round_elems(p);
    return r ? (p->count + r - 1) / r : 0;
}

/* Elements rank `from` sends rank `to`. */
static inline uint64_t ncl_a2a_len(const ncl_plan *p, int from, int to)
{
    return p->a2a_counts ? p->a2a_counts[(uint64_t)from * (uint64_t)p->nranks + (uint64_t)to] : p->count;
}

/* The first n entries of the count matrix from `first`, `stride` apart (a row: 1; a column: p);
 * without one, n blocks of `count`. (alltoallv sums per call: O(p) per task, no table in the plan.) */
static inline uint64_t ncl_a2a_prefix(const ncl_plan *p, uint64_t first, uint64_t stride, int n)
{
    if (!p->a2a_counts)
        return (uint64_t)n * p->count;
    uint64_t off = 0;
    for (int k = 0; k < n; k++)
        off += p->a2a_counts[first + (uint64_t)k * stride];
    return off;
}

/* Where rank `from`'s block for `to` starts in its input, in elements: the blocks before it in its
 * row, back to back. */
static inline uint64_t ncl_a2a_send_off(const ncl_plan *p, int from, int to)
{
    return ncl_a2a_prefix(p, (uint64_t)from * (uint64_t)p->nranks, 1, to);
}

/* Where the block from `from` starts in `to`'s output: the blocks before it in `to`'s column. */
static inline uint64_t ncl_a2a_recv_off(const ncl_plan *p, int from, int to)
{
    return ncl_a2a_prefix(p, (uint64_t)to, (uint64_t)p->nranks, from);
}

/* Element `off` of our block for rank j (our input: the send buffer, in place the receive one). */
static inline ncl_ref ncl_a2a_block(const ncl_plan *p, int j, uint64_t off)
{
    return ncl_ref_add(ncl_plan_input(p, p->rank), (ncl_a2a_send_off(p, p->rank, j) + off) * p->esize);
}

/* Element `off` of block `sender` of `receiver`'s output: where the sender's block lands. */
static inline ncl_ref ncl_a2a_output(const ncl_plan *p, int sender, int receiver, uint64_t off)
{
    return ncl_ref_make(NCL_BUF_RECV, (ncl_a2a_recv_off(p, sender, receiver) + off) * p->esize);
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

/* Elements of round `round`'s part of a block of `len` (0 past its end). */
static inline uint64_t ncl_a2a_part(const ncl_plan *p, uint64_t len, uint64_t round)
{
    const uint64_t r = ncl_a2a_round_elems(p), off = round * r;
    return off >= len ? 0 : ncl_min_u64(r, len - off);
}

#endif
