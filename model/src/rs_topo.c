/* rs_topo.c — a topology spec's links: the one enumeration the model builds its channels from, and the constant-time answers (is a -> b a link, how many) the scenario checker asks. */
#include "model/rs_topo.h"

int64_t rs_topo_ranks(const rs_topology_spec *t)
{
    switch (t->kind) {
    case RS_TOPO_TORUS2D:
        return (int64_t)t->dims[0] * t->dims[1];
    case RS_TOPO_SERVER8:
        return 8;
    case RS_TOPO_CLUSTER:
        return 8 * (int64_t)t->servers;
    default:
        return t->nranks;
    }
}

uint32_t rs_topo_switches(const rs_topology_spec *t)
{
    switch (t->kind) {
    case RS_TOPO_SWITCH:
    case RS_TOPO_CLUSTER:
        return 1;
    case RS_TOPO_FAT_TREE:
        return t->per_leaf > 0 ? (uint32_t)(t->nranks / t->per_leaf) + (uint32_t)t->spines : 0;
    default:
        return 0;
    }
}

/* ---- the enumeration -------------------------------------------------------------------------- */

typedef struct rs_walk {
    rs_topo_link_fn fn;
    void *ud;
    int stop; /* fn's first non-zero return */
} rs_walk;

static void rs_one(rs_walk *w, int32_t from, int32_t to, const rs_link_params *p, int32_t nic, size_t item)
{
    if (w->stop)
        return;
    rs_topo_link l = {from, to, p, nic, item};
    w->stop = w->fn(w->ud, &l);
}

/* a full-duplex link: a -> b, then b -> a */
static void rs_pair(rs_walk *w, int32_t a, int32_t b, const rs_link_params *p, int32_t nic)
{
    rs_one(w, a, b, p, nic, 0);
    rs_one(w, b, a, p, nic, 0);
}

/* The 8-NPU server of ranks base..base+7: two fully meshed groups of four, then the cross pairs. */
static void rs_server8(rs_walk *w, int32_t base, const rs_link_params *p)
{
    for (int32_t g = 0; g < 2; g++)
        for (int32_t i = 0; i < 4; i++)
            for (int32_t j = i + 1; j < 4; j++)
                rs_pair(w, base + 4 * g + i, base + 4 * g + j, p, 0);
    for (int32_t i = 0; i < 4; i++)
        rs_pair(w, base + i, base + i + 4, p, 0);
}

int rs_topo_links(const rs_topology_spec *t, rs_topo_link_fn fn, void *ud)
{
    rs_walk w = {fn, ud, 0};
    const rs_link_params *link = &t->link;
    int32_t p = (int32_t)rs_topo_ranks(t);
    switch (t->kind) {
    case RS_TOPO_RING:
        for (int32_t r = 0; r < p && !w.stop; r++)
            rs_one(&w, r, (r + 1) % p, link, 0, 0);
        break;
    case RS_TOPO_BIRING:
        for (int32_t r = 0; r < p && !w.stop; r++)
            if (p > 2 || r == 0) /* two ranks: one pair, not two parallel ones */
                rs_pair(&w, r, (r + 1) % p, link, 0);
        break;
    case RS_TOPO_FULL_MESH:
        for (int32_t a = 0; a < p && !w.stop; a++)
            for (int32_t b = 0; b < p && !w.stop; b++)
                if (a != b)
                    rs_one(&w, a, b, link, 0, 0);
        break;
    case RS_TOPO_TORUS2D: {
        int32_t rows = t->dims[0], cols = t->dims[1];
        for (int32_t r = 0; r < rows && !w.stop; r++)
            for (int32_t c = 0; c < cols && !w.stop; c++) {
                int32_t me = r * cols + c;
                /* +1 neighbour in each dimension; a dimension of 2 has one neighbour, of 1 none */
                if (cols > 2 || (cols == 2 && c == 0))
                    rs_pair(&w, me, r * cols + (c + 1) % cols, link, 0);
                if (rows > 2 || (rows == 2 && r == 0))
                    rs_pair(&w, me, ((r + 1) % rows) * cols + c, link, 0);
            }
        break;
    }
    case RS_TOPO_SWITCH:
        for (int32_t r = 0; r < p && !w.stop; r++)
            rs_pair(&w, r, p, link, 0);
        break;
    case RS_TOPO_FAT_TREE: {
        if (t->per_leaf <= 0)
            break;
        int32_t leaves = p / t->per_leaf, leaf0 = p, spine0 = p + leaves;
        for (int32_t r = 0; r < p && !w.stop; r++)
            rs_pair(&w, r, leaf0 + r / t->per_leaf, link, 0);
        for (int32_t l = 0; l < leaves && !w.stop; l++)
            for (int32_t s = 0; s < t->spines && !w.stop; s++)
                rs_pair(&w, leaf0 + l, spine0 + s, link, 0);
        break;
    }
    case RS_TOPO_SERVER8:
        rs_server8(&w, 0, link);
        break;
    case RS_TOPO_CLUSTER:
        for (int32_t s = 0; s < t->servers && !w.stop; s++)
            rs_server8(&w, 8 * s, link);
        for (int32_t r = 0; r < p && !w.stop; r++)
            rs_pair(&w, r, p, &t->nic, 1);
        break;
    case RS_TOPO_LINKS:
        for (size_t i = 0; i < t->links_count && !w.stop; i++) {
            const rs_link_spec *l = &t->links[i];
            rs_one(&w, l->ends.a, l->ends.b, &l->params, 0, i);
            if (l->ends.both)
                rs_one(&w, l->ends.b, l->ends.a, &l->params, 0, i);
        }
        break;
    default:
        break;
    }
    return w.stop;
}

/* ---- constant-time answers --------------------------------------------------------------------- */
/* Each says in closed form what the enumeration above does, so that a checker can ask about one
 * link of a 4-billion-link full mesh; tests/model/test_topo_links proves them equal to it for every
 * kind over many shapes. */

static int rs_server8_link(int32_t a, int32_t b) { return a != b && (a / 4 == b / 4 || a % 4 == b % 4); }

/* a <-> b between a rank and a switch, or two switches (switch kinds only). */
static int rs_switch_link(const rs_topology_spec *t, int32_t p, int32_t a, int32_t b)
{
    if (a > b) {
        int32_t x = a;
        a = b;
        b = x;
    }
    switch (t->kind) {
    case RS_TOPO_SWITCH:
    case RS_TOPO_CLUSTER:
        return a < p && b == p;
    case RS_TOPO_FAT_TREE: {
        if (t->per_leaf <= 0)
            return 0;
        int32_t leaves = p / t->per_leaf;
        if (a < p)
            return b == p + a / t->per_leaf;
        return a < p + leaves && b >= p + leaves && b < p + leaves + t->spines;
    }
    default:
        return 0;
    }
}

/* Neighbours along one torus dimension of size n: next or previous (mod n), none in a dimension of 1. */
static int rs_ring_neighbours(int32_t x, int32_t y, int32_t n)
{
    return x != y && (y == (x + 1) % n || x == (y + 1) % n);
}

int rs_topo_has_link(const rs_topology_spec *t, int32_t a, int32_t b)
{
    int64_t n = rs_topo_ranks(t), nodes = n + rs_topo_switches(t);
    if (a < 0 || b < 0 || a >= nodes || b >= nodes || a == b)
        return 0;
    if (a >= n || b >= n)
        return rs_switch_link(t, (int32_t)n, a, b);
    switch (t->kind) {
    case RS_TOPO_RING:
        return b == (a + 1) % n;
    case RS_TOPO_BIRING:
        return b == (a + 1) % n || a == (b + 1) % n;
    case RS_TOPO_FULL_MESH:
        return 1;
    case RS_TOPO_TORUS2D: {
        int32_t rows = t->dims[0], cols = t->dims[1];
        if (rows <= 0 || cols <= 0)
            return 0;
        int32_t ra = a / cols, ca = a % cols, rb = b / cols, cb = b % cols;
        if (ra == rb)
            return rs_ring_neighbours(ca, cb, cols);
        if (ca == cb)
            return rs_ring_neighbours(ra, rb, rows);
        return 0;
    }
    case RS_TOPO_SERVER8:
        return rs_server8_link(a, b);
    case RS_TOPO_CLUSTER:
        return a / 8 == b / 8 && rs_server8_link(a % 8, b % 8);
    case RS_TOPO_LINKS:
        for (size_t i = 0; i < t->links_count; i++) {
            const rs_link_ref *r = &t->links[i].ends;
            if ((r->a == a && r->b == b) || (r->both && r->a == b && r->b == a))
                return 1;
        }
        return 0;
    default:
        return 0;
    }
}

/* Links per rank along a torus dimension of size d: two neighbours, one when d is 2, none when 1. */
static uint64_t rs_torus_degree(int32_t d) { return d > 2 ? 2 : d == 2 ? 1 : 0; }

uint64_t rs_topo_link_count(const rs_topology_spec *t)
{
    int64_t ranks = rs_topo_ranks(t);
    uint64_t n = (uint64_t)(ranks > 0 ? ranks : 0);
    switch (t->kind) {
    case RS_TOPO_RING:
        return n;
    case RS_TOPO_BIRING:
        return n == 2 ? 2 : 2 * n;
    case RS_TOPO_FULL_MESH:
        return n ? n * (n - 1) : 0;
    case RS_TOPO_TORUS2D:
        return n * (rs_torus_degree(t->dims[0]) + rs_torus_degree(t->dims[1]));
    case RS_TOPO_SWITCH:
        return 2 * n;
    case RS_TOPO_FAT_TREE:
        return 2 * n + (t->per_leaf > 0 ? 2 * (n / (uint64_t)t->per_leaf) * (uint64_t)t->spines : 0);
    case RS_TOPO_SERVER8:
        return 32;
    case RS_TOPO_CLUSTER:
        return 32 * (uint64_t)t->servers + 2 * n;
    case RS_TOPO_LINKS: {
        uint64_t m = 0;
        for (size_t i = 0; i < t->links_count; i++)
            m += t->links[i].ends.both ? 2 : 1;
        return m;
    }
    default:
        return 0;
    }
}
