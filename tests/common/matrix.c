/* matrix.c — the correctness matrix's body: cases listed once, run on any world, failures and refusals counted the same way. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "matrix.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sweep/rs_data.h"

void mx_result_fail(mx_result *r, int rank, ncl_result rc, uint64_t wrong, const char *fmt, ...)
{
    r->run = 1;
    r->wrong += wrong;
    if (r->bad_ranks++ > 0)
        return; /* the first rank's words are the ones printed */
    r->rank = rank;
    r->rc = rc;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->detail, sizeof r->detail, fmt, ap);
    va_end(ap);
}

void mx_result_refused(mx_result *r, const char *why)
{
    r->run = 1;
    r->refused = 1;
    snprintf(r->detail, sizeof r->detail, "%s", why ? why : "refused by the plan");
}

/* ---- the rank side ----------------------------------------------------------------------------- */

void mx_shape(rs_shape *s, const mx_case *c, int nranks)
{
    /* rs_shape_make takes the table's bytes */
    uint64_t per = rs_shape_per_rank(c->coll) ? (uint64_t)nranks : 1;
    rs_shape_make(s, c->a2av ? RS_COLL_ALLTOALLV : (rs_coll)c->coll, nranks, c->dt, c->op, c->root,
                  RS_A2AV_SKEW_DEFAULT, c->count * per * ncl_dtype_size(c->dt));
}

void mx_place(const rs_shape *s, int rank, unsigned char *a, unsigned char *b, int inplace,
              const void **send, void **recv)
{
    rs_shape_place(s, rank, a, b, inplace, send, recv);
    if (inplace)
        return;
    if (s->coll == NCL_COLL_BROADCAST && rank != s->root)
        *send = NULL;
    if (s->coll == NCL_COLL_REDUCE && rank != s->root)
        *recv = NULL;
}

void mx_prepare(const rs_shape *s, int rank, const void *input, const void *send, void *recv)
{
    if (send && input)
        memcpy((void *)send, input, rs_shape_input_elems(s, rank) * s->es);
    else if (send)
        rs_shape_input(s, rank, MX_SEED, (void *)send);
    if (recv) /* a result never written shows up as wrong */
        rs_shape_poison(s, rank, send ? send : recv, recv);
}

uint64_t mx_check(const rs_shape *s, int rank, const void *send, const void *recv, const void *input,
                  const void *expected, char *what, size_t len)
{
    uint64_t lo, hi, wrong = 0;
    int n = 0;
    what[0] = 0;
    rs_shape_checked(s, rank, &lo, &hi);
    if (hi > lo) {
        wrong = rs_shape_count_wrong(s, rank, recv, expected);
        if (wrong)
            n = snprintf(what, len, "%llu of %llu elements wrong", (unsigned long long)wrong,
                         (unsigned long long)(hi - lo));
    }
    uint64_t in_bytes = rs_shape_input_elems(s, rank) * s->es;
    if (input && send && in_bytes && memcmp(input, send, in_bytes) != 0) {
        wrong++;
        snprintf(what + n, len - (size_t)n, "%ssend buffer modified", n ? ", " : "");
    }
    return wrong;
}

/* ---- enumeration ------------------------------------------------------------------------------- */

void mx_init(mx_matrix *m) { memset(m, 0, sizeof *m); }

void mx_free(mx_matrix *m)
{
    free(m->cases);
    m->cases = NULL;
    m->n = m->cap = 0;
}

void mx_add(mx_matrix *m, const mx_case *c)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 256;
        mx_case *grown = realloc(m->cases, m->cap * sizeof *grown);
        if (!grown) {
            fprintf(stderr, "matrix: out of memory for %zu cases\n", m->cap);
            exit(2); /* a test program: nothing to unwind */
        }
        m->cases = grown;
    }
    m->cases[m->n++] = *c;
}

/* Whether `roots` (MX_ROOTS_*) takes root on p ranks. */
static int root_taken(int roots, int root, int p)
{
    switch (roots) {
    case MX_ROOTS_ENDS: return root == 0 || root == p - 1;
    case MX_ROOTS_SOME: return root == 0 || root == p / 2 || root == p - 1;
    case MX_ROOTS_LAST: return root == p - 1;
    case MX_ROOTS_ZERO: return root == 0;
    default: return 1;
    }
}

void mx_add_axes(mx_matrix *m, const mx_axes *a, int nranks)
{
    int reduces = rs_shape_reduces(a->coll), rooted = rs_shape_rooted(a->coll);
    size_t ntypes = a->types ? a->ntypes : (size_t)NCL_DTYPE_COUNT;
    for (size_t t = 0; t < ntypes; t++) {
        ncl_dtype dt = a->types ? a->types[t].dt : (ncl_dtype)t;
        uint64_t counts[MX_MAX_COUNTS];
        size_t nc = a->counts(a, nranks, dt, counts);
        int first_op = a->types ? (int)a->types[t].op : 0;
        int last_op = a->types ? first_op : reduces ? NCL_OP_COUNT - 1 : 0;
        for (size_t k = 0; k < nc; k++) {
            int seen = 0; /* p-1 or p+1 may equal another count: each runs once */
            for (size_t j = 0; j < k; j++)
                seen |= counts[j] == counts[k];
            if (seen)
                continue;
            for (int op = first_op; op <= last_op; op++) {
                for (int root = 0; root < (rooted ? nranks : 1); root++) {
                    if (rooted && !root_taken(a->roots, root, nranks))
                        continue;
                    for (int inplace = 0; inplace < 2; inplace++) {
                        if (!(a->places & (inplace ? MX_IN_PLACE : MX_OUT_OF_PLACE)))
                            continue;
                        mx_case c = {a->coll, a->algo, counts[k], dt,
                                     reduces ? (ncl_op)op : NCL_SUM, root, inplace, a->a2av};
                        if (!a->keep || a->keep(a, nranks, &c))
                            mx_add(m, &c);
                    }
                }
            }
        }
    }
}

/* ---- running and accounting -------------------------------------------------------------------- */

/* "allreduce/ring p=4 rank 2 count 1009 float sum in-place root 0" into buf. */
static void mx_describe(const mx_case *c, int nranks, int rank, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s p=%d rank %d count %llu %s %s %s root %d", c->a2av ? "alltoallv" : ncl_coll_name(c->coll),
             ncl_algo_name(c->algo), nranks, rank, (unsigned long long)c->count, ncl_dtype_name(c->dt),
             rs_shape_reduces(c->coll) ? ncl_op_name(c->op) : "-", c->inplace ? "in-place" : "out-of-place",
             c->root);
}

static double mx_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Counts per (coll, algo): its refusals, and a line when print_groups asks. */
typedef struct mx_group {
    uint64_t cases, refused, failed;
} mx_group;

static void mx_first(mx_matrix *m, const char *text)
{
    if (!m->first[0])
        snprintf(m->first, sizeof m->first, "%s", text);
}

uint64_t mx_run(mx_matrix *m, mx_world *w)
{
    const size_t n = m->n;
    mx_result *res = calloc(n ? n : 1, sizeof *res);
    if (!res) {
        fprintf(stderr, "matrix: out of memory for %zu results\n", n);
        exit(2);
    }
    double t0 = mx_now();
    size_t ran = n ? w->run(w, m->cases, n, res) : 0;
    double seconds = mx_now() - t0;

    mx_group groups[NCL_COLL_COUNT][NCL_ALGO_COUNT];
    memset(groups, 0, sizeof groups);
    uint64_t failed = 0, not_run = 0;
    char line[2 * MX_DETAIL], where[160];
    for (size_t i = 0; i < n; i++) {
        const mx_case *c = &m->cases[i];
        mx_result *r = &res[i];
        mx_group *g = &groups[c->coll][c->algo];
        g->cases++;
        /* a rank's failure counts even where the world could not finish the case */
        int bad = r->bad_ranks > 0 || (r->refused && !m->allow_refused);
        if (!bad && (i >= ran || !r->run)) {
            m->not_run++;
            not_run++;
            continue;
        }
        m->run++;
        if (!bad && r->refused) {
            g->refused++;
            m->refused++;
            continue;
        }
        if (!bad)
            continue;
        g->failed++;
        failed++;
        mx_describe(c, w->nranks, r->refused ? 0 : r->rank, where, sizeof where);
        if (r->refused)
            snprintf(line, sizeof line, "%s: %s: refused: %s", w->name, where, r->detail);
        else
            snprintf(line, sizeof line, "%s: %s: %s%s%s (%d rank(s), %llu wrong element(s) in all)", w->name,
                     where, r->rc != NCL_SUCCESS ? ncl_strerror(r->rc) : "", r->rc != NCL_SUCCESS ? ": " : "",
                     r->detail, r->bad_ranks, (unsigned long long)r->wrong);
        fprintf(stderr, "FAIL %s\n", line);
        mx_first(m, line);
    }
    if (not_run) {
        snprintf(line, sizeof line, "%s: %llu of %zu cases not run (the world was spent after a failure)",
                 w->name, (unsigned long long)not_run, n);
        fprintf(stderr, "FAIL %s\n", line);
        mx_first(m, line);
        failed++;
    }
    for (int c = 0; c < NCL_COLL_COUNT; c++)
        for (int a = 0; a < NCL_ALGO_COUNT; a++) {
            const mx_group *g = &groups[c][a];
            if (!g->cases)
                continue;
            if (m->print_groups)
                printf("%-14s %-15s %-8s cases %5llu  refused %5llu  failed %3llu\n", w->name,
                       ncl_coll_name((ncl_coll)c), ncl_algo_name((ncl_algo)a), (unsigned long long)g->cases,
                       (unsigned long long)g->refused, (unsigned long long)g->failed);
            if (m->allow_refused && g->refused == g->cases) {
                snprintf(line, sizeof line, "%s: %s/%s refused every case", w->name, ncl_coll_name((ncl_coll)c),
                         ncl_algo_name((ncl_algo)a));
                fprintf(stderr, "FAIL %s\n", line);
                mx_first(m, line);
                failed++;
            }
        }
    if (m->print_groups)
        printf("# %s: %zu cases, %zu run in %.2f s\n", w->name, n, ran, seconds);
    m->failed += failed;
    free(res);
    m->n = 0; /* the next world gets new cases; the counts keep adding up */
    return failed;
}
