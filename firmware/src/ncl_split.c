/* ncl_split.c — sub-communicators (ncl_comm_split, ncl_comm_create_group) and point to point (ncl_send/ncl_recv) on them. */
#include "ncl_comm.h"

#include "ncl_fmt.h"

#include <string.h>

#ifndef NCL_NO_SPLIT

/* The id a child gets from its parent's and what makes it (a split's number and color, a pair's
 * sender and receiver, a group's tag and member list): FNV-1a over them, the same on every member
 * without a message. */
static uint32_t child_id(uint32_t parent, uint32_t kind, uint32_t a, uint32_t b)
{
    const uint32_t words[4] = {parent, kind, a, b};
    uint32_t h = 2166136261u;
    for (int w = 0; w < 4; w++)
        for (int bit = 0; bit < 32; bit += 8)
            h = (h ^ (words[w] >> bit & 0xffu)) * 16777619u;
    return h ? h : 1u; /* 0 names the communicator a backend started with */
}

/* A child's options when the caller gives none: the parent's, less what describes the parent's
 * ranks or topology (a ring order, a cost table, servers of local_size ranks mean nothing on a
 * subset of them). */
static ncl_config child_config(const ncl_comm *parent)
{
    ncl_config c = parent->cfg;
    c.rings = NULL, c.ring_count = 0, c.ring_weights = NULL, c.ring_positions = NULL;
    c.costs = NULL, c.cost_count = 0, c.cost_room = 0;
    c.local_size = 0, c.local_rings = NULL, c.local_ring_count = 0, c.inter_algo = NCL_ALGO_AUTO;
    c.schedule = NULL;
    for (int k = 0; k < NCL_COLL_COUNT; k++)
        if (c.algorithm[k] == NCL_ALGO_HIER || c.algorithm[k] == NCL_ALGO_USER)
            c.algorithm[k] = NCL_ALGO_AUTO;
    return c;
}

/* Links a credit crosses back from each member to the one before it (the child's ring is its
 * rank order) at most, the shortest way on any of the parent's rings (its ranks' order when it
 * has none): what the child's landing zones must cover. */
static uint32_t back_hops(const ncl_comm *parent, const int32_t *members, int n)
{
    const int p = parent->nranks;
    const uint32_t rings = parent->env.ring_count ? parent->env.ring_count : 1;
    uint32_t worst = 0;
    for (int i = 0; i < n && n > 1; i++) {
        const int32_t from = members[i], to = members[(i + 1) % n];
        uint32_t best = (uint32_t)p;
        for (uint32_t k = 0; k < rings; k++) {
            const int32_t *pos = parent->env.ring_pos ? parent->env.ring_pos + (size_t)k * (size_t)p : NULL;
            const int back = ((pos ? pos[from] - pos[to] : from - to) % p + p) % p;
            best = (uint32_t)back < best ? (uint32_t)back : best;
        }
        worst = best > worst ? best : worst;
    }
    return worst;
}

/* A communicator on the backend's child HAL, which it owns from here on. */
static ncl_result child_create(ncl_comm *parent, uint32_t id, const int32_t *members, int n, int rank,
                               const ncl_config *given, ncl_comm **out)
{
    ncl_config own = *given;
    if (!own.zone_hops && !own.landing_zone_bytes)
        own.zone_hops = back_hops(parent, members, n);
    const ncl_config *cfg = &own;
    ncl_hal hal;
    if (!parent->hal.ops->split)
        return ncl_comm_fail(parent, NCL_ERR_UNSUPPORTED, "this backend cannot make sub-communicators (its HAL has "
                             "no split)");
    ncl_result rc = ncl_hal_split(&parent->hal, id, members, n, rank, &hal);
    if (rc != NCL_SUCCESS) {
        const char *why = ncl_hal_last_error(&parent->hal);
        return ncl_comm_fail(parent, rc, "the backend could not make a sub-communicator of %d ranks: %s%s%s", n,
                             ncl_strerror(rc), *why ? ": " : "", why);
    }
    rc = ncl_comm_create(out, n, rank, &hal, cfg);
    if (rc != NCL_SUCCESS) {
        ncl_hal_release(&hal);
        return ncl_comm_fail(parent, rc, "a sub-communicator of %d ranks: ncl_comm_create failed: %s", n,
                             ncl_strerror(rc));
    }
    (*out)->id = id;
    (*out)->owns_hal = 1;
    return NCL_SUCCESS;
}

/* (key, rank) of member slot i, for the sort: keys first, ties by rank in the parent. */
static int before(const int32_t *keys, int32_t a, int32_t b)
{
    return keys[2 * a + 1] != keys[2 * b + 1] ? keys[2 * a + 1] < keys[2 * b + 1] : a < b;
}

/* Heap sort of ranks by before(): no allocation, n log n for a data-parallel group of thousands. */
static void sort_members(int32_t *m, int n, const int32_t *keys)
{
    for (int start = n / 2 - 1, end = n; end > 1;) {
        int root;
        if (start >= 0)
            root = start--;
        else {
            end--;
            int32_t t = m[0];
            m[0] = m[end], m[end] = t;
            root = 0;
        }
        for (int child; (child = 2 * root + 1) < end; root = child) {
            if (child + 1 < end && before(keys, m[child], m[child + 1]))
                child++;
            if (!before(keys, m[root], m[child]))
                break;
            int32_t t = m[root];
            m[root] = m[child], m[child] = t;
        }
    }
}

ncl_result ncl_comm_split(ncl_comm *comm, int color, int key, const ncl_config *config, ncl_comm **newcomm)
{
    if (!comm)
        return NCL_ERR_INVALID_ARGUMENT;
    if (!newcomm)
        return ncl_comm_fail(comm, NCL_ERR_INVALID_ARGUMENT, "split: newcomm is NULL");
    *newcomm = NULL;
    if (color < NCL_SPLIT_NOCOLOR)
        return ncl_comm_fail(comm, NCL_ERR_INVALID_ARGUMENT,
                             "split: color %d (allowed: >= 0, or NCL_SPLIT_NOCOLOR to join none)", color);
    if (comm->active)
        return ncl_comm_fail(comm, NCL_ERR_INVALID_USAGE, "split: collective #%llu is still running; call "
                             "ncl_wait() first", (unsigned long long)comm->seq);
    /* Every rank's (color, key), gathered through comm itself: one int32 pair per rank, in place,
     * in memory the backend's alignment allows. */
    const uint64_t p = (uint64_t)comm->nranks, align = comm->caps.buf_align > 8 ? comm->caps.buf_align : 8;
    unsigned char *mem = comm->cfg.alloc(comm->cfg.alloc_ud, (size_t)(p * 12 + align));
    if (!mem)
        return ncl_comm_fail(comm, NCL_ERR_OUT_OF_MEMORY, "split: no memory for %llu ranks' colors",
                             (unsigned long long)p);
    int32_t *keys = (int32_t *)(void *)(mem + (align - (uintptr_t)mem % align) % align);
    int32_t *members = keys + 2 * p;
    keys[2 * comm->rank] = color;
    keys[2 * comm->rank + 1] = key;
    uint32_t number = ++comm->splits; /* the same on every rank: every rank splits alike */
    ncl_result rc = ncl_allgather(keys + 2 * comm->rank, keys, 2, NCL_INT32, comm);
    if (rc != NCL_SUCCESS) {
        comm->cfg.free(comm->cfg.alloc_ud, mem);
        return rc; /* the allgather said why */
    }
    int n = 0, mine = 0;
    for (int r = 0; r < comm->nranks && color != NCL_SPLIT_NOCOLOR; r++)
        if (keys[2 * r] == color)
            members[n++] = r;
    sort_members(members, n, keys);
    while (mine < n && members[mine] != comm->rank)
        mine++;
    if (color != NCL_SPLIT_NOCOLOR) {
        ncl_config own = config ? *config : child_config(comm);
        rc = child_create(comm, child_id(comm->id, 1u, number, (uint32_t)color), members, n, mine, &own, newcomm);
        if (rc == NCL_SUCCESS)
            ncl_fmt((*newcomm)->label, sizeof (*newcomm)->label, "split #%u color %d", number, color);
    }
    comm->cfg.free(comm->cfg.alloc_ud, mem);
    return rc;
}

ncl_result ncl_comm_create_group(ncl_comm *comm, const int32_t *members, int n, uint32_t tag,
                                 const ncl_config *config, ncl_comm **newcomm)
{
    if (!comm)
        return NCL_ERR_INVALID_ARGUMENT;
    if (!newcomm)
        return ncl_comm_fail(comm, NCL_ERR_INVALID_ARGUMENT, "group %u: newcomm is NULL", tag);
    *newcomm = NULL;
    if (!members || n < 1 || n > comm->nranks)
        return ncl_comm_fail(comm, NCL_ERR_INVALID_ARGUMENT, "group %u: %d members%s (allowed: 1..%d ranks listed)",
                             tag, n, members ? "" : " at NULL", comm->nranks);
    int mine = -1;
    uint32_t digest = 2166136261u; /* FNV-1a of the list: with the tag, the child's id */
    for (int i = 0; i < n; i++) {
        if (members[i] < 0 || members[i] >= comm->nranks)
            return ncl_comm_fail(comm, NCL_ERR_INVALID_ARGUMENT, "group %u: member %d is rank %d (allowed: 0..%d)",
                                 tag, i, (int)members[i], comm->nranks - 1);
        for (int j = 0; j < i; j++)
            if (members[j] == members[i])
                return ncl_comm_fail(comm, NCL_ERR_INVALID_ARGUMENT, "group %u: rank %d is members %d and %d "
                                     "(allowed: each rank once)", tag, (int)members[i], j, i);
        mine = members[i] == comm->rank ? i : mine;
        for (int bit = 0; bit < 32; bit += 8)
            digest = (digest ^ ((uint32_t)members[i] >> bit & 0xffu)) * 16777619u;
    }
    if (mine < 0)
        return ncl_comm_fail(comm, NCL_ERR_INVALID_USAGE, "group %u: rank %d is not among its %d members (only "
                             "members call it)", tag, comm->rank, n);
    ncl_config own = config ? *config : child_config(comm);
    ncl_result rc = child_create(comm, child_id(comm->id, 3u, tag, digest), members, n, mine, &own, newcomm);
    if (rc == NCL_SUCCESS)
        ncl_fmt((*newcomm)->label, sizeof (*newcomm)->label, "group %u", tag);
    return rc;
}

/* The communicator of one direction of a pair, made at its first transfer: rank 0 the sender,
 * rank 1 the receiver. Its broadcast from rank 0 is the transfer. */
static ncl_result pair_comm(ncl_comm *comm, int peer, int sending, ncl_comm **out)
{
    const char *what = sending ? "send" : "recv";
    if (comm->owner)
        return ncl_comm_fail(comm, NCL_ERR_INVALID_USAGE, "%s: this communicator carries one direction of a "
                             "pair's transfers; call it on the communicator they came from", what);
    if (peer < 0 || peer >= comm->nranks || peer == comm->rank)
        return ncl_comm_fail(comm, NCL_ERR_INVALID_ARGUMENT, "%s: peer %d (allowed: 0..%d but this rank, %d)", what,
                             peer, comm->nranks - 1, comm->rank);
    if (!comm->pairs) {
        size_t bytes = 2 * (size_t)comm->nranks * sizeof *comm->pairs;
        comm->pairs = comm->cfg.alloc(comm->cfg.alloc_ud, bytes);
        if (!comm->pairs)
            return ncl_comm_fail(comm, NCL_ERR_OUT_OF_MEMORY, "%s: no memory for the pair table", what);
        memset(comm->pairs, 0, bytes);
    }
    ncl_comm **slot = &comm->pairs[sending ? peer : comm->nranks + peer];
    if (!*slot) {
        const int32_t from = sending ? comm->rank : peer, to = sending ? peer : comm->rank;
        const int32_t members[2] = {from, to};
        ncl_config cfg = child_config(comm);
        if (ncl_algo_supported(NCL_COLL_BROADCAST, NCL_ALGO_CHAIN))
            cfg.algorithm[NCL_COLL_BROADCAST] = NCL_ALGO_CHAIN; /* on two ranks: the one write, pipelined */
        ncl_result rc = child_create(comm, child_id(comm->id, 2u, (uint32_t)from, (uint32_t)to), members, 2,
                                     sending ? 0 : 1, &cfg, slot);
        if (rc != NCL_SUCCESS)
            return rc;
        ncl_fmt((*slot)->label, sizeof (*slot)->label, "send %d -> %d (ranks 0 -> 1 here)", from, to);
        (*slot)->owner = comm;
    }
    *out = *slot;
    return NCL_SUCCESS;
}

static ncl_result p2p(ncl_comm *comm, int sending, void *buf, size_t count, ncl_dtype dtype, int peer,
                      ncl_comm **op, int wait)
{
    if (!comm)
        return NCL_ERR_INVALID_ARGUMENT;
    const char *what = sending ? "send" : "recv";
    if (!wait && !op)
        return ncl_comm_fail(comm, NCL_ERR_INVALID_ARGUMENT, "%s: op is NULL", what);
    if (!buf && count)
        return ncl_comm_fail(comm, NCL_ERR_INVALID_ARGUMENT, "%s: %s is NULL", what, sending ? "sendbuf" : "recvbuf");
    ncl_comm *pc = NULL;
    ncl_result rc = pair_comm(comm, peer, sending, &pc);
    if (rc != NCL_SUCCESS)
        return rc;
    if (op)
        *op = pc;
    /* the sender broadcasts its buffer in place, the receiver receives it as a non-root */
    rc = sending ? ncl_broadcast_start(buf, buf, count, dtype, 0, pc) : ncl_broadcast_start(NULL, buf, count, dtype, 0, pc);
    if (rc == NCL_SUCCESS && wait)
        return ncl_wait(pc);
    int done; /* what it can issue now (a receiver's READY) goes out at once */
    return rc == NCL_SUCCESS ? ncl_test(pc, &done) : rc;
}

ncl_result ncl_send(const void *sendbuf, size_t count, ncl_dtype dtype, int peer, ncl_comm *comm)
{
    return p2p(comm, 1, (void *)(uintptr_t)sendbuf, count, dtype, peer, NULL, 1);
}

ncl_result ncl_recv(void *recvbuf, size_t count, ncl_dtype dtype, int peer, ncl_comm *comm)
{
    return p2p(comm, 0, recvbuf, count, dtype, peer, NULL, 1);
}

ncl_result ncl_send_start(const void *sendbuf, size_t count, ncl_dtype dtype, int peer, ncl_comm *comm,
                          ncl_comm **op)
{
    return p2p(comm, 1, (void *)(uintptr_t)sendbuf, count, dtype, peer, op, 0);
}

ncl_result ncl_recv_start(void *recvbuf, size_t count, ncl_dtype dtype, int peer, ncl_comm *comm, ncl_comm **op)
{
    return p2p(comm, 0, recvbuf, count, dtype, peer, op, 0);
}

#else /* a board built without them (firmware/port NCL_PORT_SPLIT=OFF): refused, saying so */

static ncl_result left_out(ncl_comm *comm, const char *what)
{
    return comm ? ncl_comm_fail(comm, NCL_ERR_UNSUPPORTED, "%s: this engine was built without sub-communicators and "
                                "point to point (NCL_NO_SPLIT)", what)
                : NCL_ERR_INVALID_ARGUMENT;
}

ncl_result ncl_comm_split(ncl_comm *comm, int color, int key, const ncl_config *config, ncl_comm **newcomm)
{
    (void)color, (void)key, (void)config;
    if (newcomm)
        *newcomm = NULL;
    return left_out(comm, "split");
}

ncl_result ncl_comm_create_group(ncl_comm *comm, const int32_t *members, int n, uint32_t tag,
                                 const ncl_config *config, ncl_comm **newcomm)
{
    (void)members, (void)n, (void)tag, (void)config;
    if (newcomm)
        *newcomm = NULL;
    return left_out(comm, "group");
}

ncl_result ncl_send(const void *sendbuf, size_t count, ncl_dtype dtype, int peer, ncl_comm *comm)
{
    (void)sendbuf, (void)count, (void)dtype, (void)peer;
    return left_out(comm, "send");
}

ncl_result ncl_recv(void *recvbuf, size_t count, ncl_dtype dtype, int peer, ncl_comm *comm)
{
    (void)recvbuf, (void)count, (void)dtype, (void)peer;
    return left_out(comm, "recv");
}

ncl_result ncl_send_start(const void *sendbuf, size_t count, ncl_dtype dtype, int peer, ncl_comm *comm,
                          ncl_comm **op)
{
    (void)sendbuf, (void)count, (void)dtype, (void)peer, (void)op;
    return left_out(comm, "send");
}

ncl_result ncl_recv_start(void *recvbuf, size_t count, ncl_dtype dtype, int peer, ncl_comm *comm, ncl_comm **op)
{
    (void)recvbuf, (void)count, (void)dtype, (void)peer, (void)op;
    return left_out(comm, "recv");
}

#endif
