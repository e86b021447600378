/* ncl_hier.h — the layout both two-level (hier) algorithms share: servers of local_size
 * consecutive ranks, the channel's intra-server ring, and the inter-server group of a local index. */
#ifndef NCL_HIER_H
#define NCL_HIER_H

#include "ncl_algo.h"

/* Rank r = s * L + l: server s, local index l. Every server runs the same local rings, so the
 * ranks with one local index hold the same position on every server's ring (and so the same
 * chunk): they form the inter-server group, ordered by server. */
typedef struct ncl_hier {
    int L, S;         /* ranks per server, servers */
    int s, l;         /* our server and local index */
    int lpos;         /* our position on the channel's local ring */
    int lnext, lprev; /* global ranks of our local ring neighbours */
    int hd;           /* inter level: 1 halving-doubling / binomial tree, 0 ring / chain */
} ncl_hier;

/* The inter level: AUTO is ring unless the server count is a power of two (the 910 default). */
static inline int ncl_hier_inter_hd(const ncl_plan *p, uint64_t servers)
{
    if (p->inter_algo == NCL_ALGO_AUTO)
        return ncl_pow2_floor(servers) == servers;
    return p->inter_algo == NCL_ALGO_HD;
}

/* Whether the plan has two real levels and an inter algorithm we run. Halving-doubling over a
 * server count that is not a power of two is refused (no folding at the inter level). */
static inline ncl_result ncl_hier_check(const ncl_plan *p)
{
    const uint64_t L = p->local_size, n = (uint64_t)p->nranks;
    if (L < 2 || L >= n || n % L != 0)
        return NCL_ERR_UNSUPPORTED;
    if (p->inter_algo != NCL_ALGO_AUTO && p->inter_algo != NCL_ALGO_RING && p->inter_algo != NCL_ALGO_HD)
        return NCL_ERR_UNSUPPORTED;
    if (p->inter_algo == NCL_ALGO_HD && ncl_pow2_floor(n / L) != n / L)
        return NCL_ERR_UNSUPPORTED;
    return NCL_SUCCESS;
}

/* Fills *h for plan->rank on channel c (cheap: a few divisions, no loops). */
static inline void ncl_hier_init(ncl_hier *h, const ncl_plan *p, uint32_t c)
{
    h->L = (int)p->local_size;
    h->S = p->nranks / h->L;
    h->s = p->rank / h->L;
    h->l = p->rank % h->L;
    h->lpos = ncl_local_pos(p, c, h->l);
    h->lnext = h->s * h->L + ncl_local_rank(p, c, (int64_t)h->lpos + 1);
    h->lprev = h->s * h->L + ncl_local_rank(p, c, (int64_t)h->lpos - 1);
    h->hd = ncl_hier_inter_hd(p, (uint64_t)h->S);
}

/* The rank of our inter-server group on server `server` (any integer: taken mod S). */
static inline int ncl_hier_inter_peer(const ncl_hier *h, int64_t server)
{
    return ncl_mod(server, h->S) * h->L + h->l;
}

#endif
