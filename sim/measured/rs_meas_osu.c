/* rs_meas_osu.c — the reader of OSU micro-benchmarks' blocking collective latency tables (osu_allreduce, osu_bcast, ...; plain, -f, -c). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rs_meas_int.h"

/*
 * The layout, as OSU's print_preamble / print_only_header / print_stats print it (5.x in
 * mpi/collective/osu_coll.c, 7.x in c/util/osu_util_mpi.c):
 *
 *   (blank line)
 *   # OSU MPI Allreduce Latency Test v7.4          ("MPI-CUDA", "MPI-ROCM", ... with -d; "NCCL" for xccl)
 *   # Datatype: MPI_CHAR.                          (7.x; once per datatype with -T)
 *   # Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations   Validation
 *   1                       1.60              1.42              1.83        1000         Pass
 *
 * Size is "%-10d" bytes, times "%20.2f" microseconds: the two decimals are the precision.
 * -f adds Min, Max and Iterations; -c adds Validation (Pass/Fail); tail-latency options add
 * "P50 Tail Lat(us)" columns. OSU prints no rank count: give it with --ranks (the sizes of
 * allgather, alltoall, gather and scatter are per rank, so their nccl-tests size needs it).
 */

enum { OSU_AVG, OSU_MIN, OSU_MAX, OSU_ITERS, OSU_VALID, OSU_PCT };

typedef struct osu_state {
    int title_line, dtype_line, cols_line, stop_line;
    int ncols;
    int kind[RS_MEAS_MAXTOK];
    uint64_t prev_size;
    int prev_line, in_series;
} osu_state;

static const struct {
    const char *title, *program;
    rs_meas_coll coll;
    int per_rank; /* the size is what one rank sends (to each peer): the nccl-tests size is x ranks */
} osu_tests[] = {
    {"Allreduce", "osu_allreduce", RS_MEAS_COLL_ALLREDUCE, 0},
    {"Broadcast", "osu_bcast", RS_MEAS_COLL_BROADCAST, 0},
    {"Reduce", "osu_reduce", RS_MEAS_COLL_REDUCE, 0},
    {"Reduce_scatter", "osu_reduce_scatter", RS_MEAS_COLL_REDUCE_SCATTER, 0},
    {"Allgather", "osu_allgather", RS_MEAS_COLL_ALLGATHER, 1},
    {"All-to-All Personalized Exchange", "osu_alltoall", RS_MEAS_COLL_ALLTOALL, 1},
    {"Gather", "osu_gather", RS_MEAS_COLL_GATHER, 1},
    {"Scatter", "osu_scatter", RS_MEAS_COLL_SCATTER, 1},
};

/* '# OSU <API>[-ACCEL] <Name>[ Persistent] Latency Test[ vX.Y]' */
static int osu_title(rs_meas_ctx *c, osu_state *st, const char *s, size_t len, int line, int *per_rank)
{
    rs_meas_table *t = c->t;
    char q[96];
    const char *allowed = "Allreduce, Broadcast, Reduce, Reduce_scatter, Allgather, All-to-All Personalized Exchange, "
                          "Gather, Scatter; blocking, or Persistent";
    if (st->title_line)
        return rs_meas_fail(c, line, "a second OSU benchmark starts here (the first at line %d) (allowed: one run per "
                            "file)", st->title_line);
    const char *p = s + 6, *end = s + len; /* after "# OSU " */
    const char *mark = NULL;
    for (const char *k = p; k + 13 <= end; k++)
        if (memcmp(k, " Latency Test", 13) == 0)
            mark = k;
    if (mark == NULL)
        return rs_meas_fail(c, line, "'%s' is not an OSU latency test (allowed: %s)", rs_meas_quote(q, sizeof q, s, len),
                            allowed);
    /* the version, if any */
    const char *after = mark + 13;
    if (after < end) {
        if (end - after < 3 || after[0] != ' ' || after[1] != 'v')
            return rs_meas_fail(c, line, "'%s' after the title (expected: ' vX.Y' or nothing)",
                                rs_meas_quote(q, sizeof q, after, (size_t)(end - after)));
        for (const char *k = after + 2; k < end; k++)
            if (!((*k >= '0' && *k <= '9') || *k == '.'))
                return rs_meas_fail(c, line, "version '%s' is not digits and dots",
                                    rs_meas_quote(q, sizeof q, after + 1, (size_t)(end - after - 1)));
        rs_meas_copy(t->version, sizeof t->version, after + 2, (size_t)(end - after - 2));
    }
    /* the API word, then the test's name */
    const char *sp = memchr(p, ' ', (size_t)(mark - p));
    if (sp == NULL)
        return rs_meas_fail(c, line, "the OSU title names no test (allowed: %s)", allowed);
    const char *dash = memchr(p, '-', (size_t)(sp - p));
    if (dash)
        rs_meas_copy(t->accel, sizeof t->accel, dash + 1, (size_t)(sp - dash - 1));
    const char *name = sp + 1;
    size_t nl = (size_t)(mark - name);
    if (nl > 11 && rs_meas_eq(name + nl - 11, 11, " Persistent"))
        nl -= 11;
    for (size_t i = 0; i < sizeof osu_tests / sizeof osu_tests[0]; i++)
        if (rs_meas_eq(name, nl, osu_tests[i].title)) {
            snprintf(t->program, sizeof t->program, "%s", osu_tests[i].program);
            *per_rank = osu_tests[i].per_rank;
            st->title_line = line;
            char where[96];
            snprintf(where, sizeof where, "OSU title, line %d", line);
            return rs_meas_settle_coll(c, osu_tests[i].coll, line, where);
        }
    return rs_meas_fail(c, line, "'%s' is not a collective latency test this reader knows (allowed: %s)",
                        rs_meas_quote(q, sizeof q, name, (size_t)(mark - name)), allowed);
}

/* '# Datatype: MPI_CHAR.' */
static int osu_datatype(rs_meas_ctx *c, osu_state *st, const char *s, size_t len, int line)
{
    static const struct {
        const char *mpi, *canon;
    } types[] = {
        {"MPI_CHAR", "int8"},        {"MPI_SIGNED_CHAR", "int8"}, {"MPI_UNSIGNED_CHAR", "uint8"},
        {"MPI_BYTE", "uint8"},       {"MPI_SHORT", "int16"},      {"MPI_UNSIGNED_SHORT", "uint16"},
        {"MPI_INT", "int32"},        {"MPI_UNSIGNED", "uint32"},  {"MPI_LONG", "int64"},
        {"MPI_LONG_LONG", "int64"},  {"MPI_LONG_LONG_INT", "int64"}, {"MPI_UNSIGNED_LONG", "uint64"},
        {"MPI_FLOAT", "float"},      {"MPI_DOUBLE", "double"},
    };
    char q[96];
    const char *p = s + 12; /* after "# Datatype: " */
    size_t l = len - 12;
    if (l < 2 || p[l - 1] != '.')
        return rs_meas_fail(c, line, "'%s' is not '# Datatype: MPI_TYPE.'", rs_meas_quote(q, sizeof q, s, len));
    l--;
    if (!st->title_line)
        return rs_meas_fail(c, line, "a datatype line before the OSU title (expected: '# OSU ...' first)");
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (rs_meas_eq(p, l, types[i].mpi)) {
            snprintf(c->t->dtype, sizeof c->t->dtype, "%s", types[i].canon);
            st->dtype_line = line;
            st->cols_line = 0; /* each datatype's table has its own column line */
            st->in_series = 0;
            return 0;
        }
    return rs_meas_fail(c, line, "datatype '%s' is unknown (allowed: MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, "
                        "MPI_BYTE, MPI_SHORT, MPI_UNSIGNED_SHORT, MPI_INT, MPI_UNSIGNED, MPI_LONG, MPI_LONG_LONG, "
                        "MPI_UNSIGNED_LONG, MPI_FLOAT, MPI_DOUBLE)", rs_meas_quote(q, sizeof q, p, l));
}

/* '# Size       Avg Latency(us)   Min Latency(us) ...': names with spaces in them, matched one by one. */
static int osu_columns(rs_meas_ctx *c, osu_state *st, const char *s, size_t len, int line)
{
    static const struct {
        const char *name;
        int kind;
    } names[] = {{"Avg Latency(us)", OSU_AVG}, {"Min Latency(us)", OSU_MIN}, {"Max Latency(us)", OSU_MAX},
                 {"Iterations", OSU_ITERS},    {"Validation", OSU_VALID}};
    const char *allowed = "Avg Latency(us), then Min Latency(us) Max Latency(us) Iterations (-f), Validation (-c), "
                          "P<N> Tail Lat(us)";
    char q[96];
    if (!st->title_line)
        return rs_meas_fail(c, line, "column names before the OSU title (expected: '# OSU ...' first)");
    if (st->cols_line)
        return rs_meas_fail(c, line, "a second column line (the first at line %d) (allowed: one per datatype)",
                            st->cols_line);
    size_t i = 6; /* after "# Size" */
    int n = 0, seen = 0;
    while (i < len) {
        while (i < len && s[i] == ' ')
            i++;
        if (i == len)
            break;
        int kind = -1;
        size_t used = 0;
        for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
            if (rs_meas_starts(s + i, len - i, names[k].name)) {
                kind = names[k].kind;
                used = strlen(names[k].name);
            }
        if (kind < 0 && s[i] == 'P') {
            size_t j = i + 1;
            while (j < len && s[j] >= '0' && s[j] <= '9')
                j++;
            if (j > i + 1 && rs_meas_starts(s + j, len - j, " Tail Lat(us)")) {
                kind = OSU_PCT;
                used = j - i + 13;
            }
        }
        size_t e = i + used;
        if (kind < 0 || (e < len && s[e] != ' ')) {
            size_t w = i;
            while (w < len && !(s[w] == ' ' && w + 1 < len && s[w + 1] == ' '))
                w++;
            return rs_meas_fail(c, line, "unknown column '%s' (allowed: %s)", rs_meas_quote(q, sizeof q, s + i, w - i),
                                allowed);
        }
        if (n == 0 && kind != OSU_AVG)
            return rs_meas_fail(c, line, "the first column after Size is '%s', not 'Avg Latency(us)'",
                                rs_meas_quote(q, sizeof q, s + i, used));
        if (kind != OSU_PCT && (seen & (1 << kind)))
            return rs_meas_fail(c, line, "column '%s' twice", rs_meas_quote(q, sizeof q, s + i, used));
        if (n == RS_MEAS_MAXTOK - 1)
            return rs_meas_fail(c, line, "more than %d columns", RS_MEAS_MAXTOK - 1);
        seen |= 1 << kind;
        st->kind[n++] = kind;
        i = e;
    }
    if (n == 0)
        return rs_meas_fail(c, line, "no column after Size (allowed: %s)", allowed);
    if (((seen >> OSU_MIN) & 1) != ((seen >> OSU_MAX) & 1))
        return rs_meas_fail(c, line, "Min Latency without Max Latency or the other way round (allowed: both, -f)");
    st->ncols = n;
    st->cols_line = line;
    return 0;
}

static int osu_row(rs_meas_ctx *c, osu_state *st, const char *s, size_t len, int line, int last_open, int per_rank)
{
    rs_meas_table *t = c->t;
    char q[96];
    rs_meas_toks tk;
    rs_meas_tokenize(s, len, &tk);
    if (!st->cols_line)
        return rs_meas_fail(c, line, "'%s' before the column names (expected: '# Size  Avg Latency(us) ...' first)",
                            rs_meas_quote(q, sizeof q, s, len));
    if (st->stop_line)
        return rs_meas_fail(c, line, "a row after the tool stopped at line %d (DATA VALIDATION ERROR)", st->stop_line);
    if (last_open)
        return rs_meas_fail(c, line, "the file ends inside this row, with no end of line (truncated?)");
    if (tk.n != st->ncols + 1 || tk.more)
        return rs_meas_fail(c, line, "the row has %d columns, the column names at line %d have %d", tk.n, st->cols_line,
                            st->ncols + 1);
    uint64_t size;
    if (rs_meas_parse_u64(tk.p[0], tk.len[0], &size) != 0)
        return rs_meas_fail(c, line, "size '%s' is not a whole number of bytes", rs_meas_quote(q, sizeof q, tk.p[0], tk.len[0]));
    if (st->in_series && size <= st->prev_size)
        return rs_meas_fail(c, line, "size %llu B after %llu B at line %d: sizes must rise (a new datatype starts a new "
                            "table)", (unsigned long long)size, (unsigned long long)st->prev_size, st->prev_line);
    st->in_series = 1;
    st->prev_size = size;
    st->prev_line = line;
    rs_meas_row *r = rs_meas_add_row(c, line);
    if (r == NULL)
        return -1;
    r->coll = t->coll;
    r->ranks = t->ranks;
    r->bytes = size;
    r->nccl_bytes = per_rank ? (t->ranks > 0 ? size * (uint64_t)t->ranks : 0) : size;
    snprintf(r->dtype, sizeof r->dtype, "%s", t->dtype);
    r->place = RS_MEAS_PLACE_NONE;
    for (int k = 0; k < st->ncols; k++) {
        const char *p = tk.p[k + 1];
        size_t l = tk.len[k + 1];
        double v, res;
        switch (st->kind[k]) {
        case OSU_VALID:
            if (rs_meas_eq(p, l, "Pass"))
                r->check = RS_MEAS_CHECK_PASS;
            else if (rs_meas_eq(p, l, "Fail"))
                r->check = RS_MEAS_CHECK_FAIL;
            else
                return rs_meas_fail(c, line, "validation '%s' (allowed: Pass, Fail)", rs_meas_quote(q, sizeof q, p, l));
            break;
        case OSU_ITERS: {
            uint64_t it;
            if (rs_meas_parse_u64(p, l, &it) != 0 || it == 0 || it > 1000000000000ull)
                return rs_meas_fail(c, line, "iterations '%s' is not a count (allowed: 1 and up)",
                                    rs_meas_quote(q, sizeof q, p, l));
            r->iters = (long)it;
            break;
        }
        default:
            if (rs_meas_parse_num(p, l, 0, &v, &res) != 0)
                return rs_meas_fail(c, line, "'%s' in column %d is not a time in microseconds",
                                    rs_meas_quote(q, sizeof q, p, l), k + 2);
            if (st->kind[k] == OSU_AVG) {
                r->time_us = v;
                r->time_res = res;
            } else if (st->kind[k] == OSU_MIN) {
                r->min_us = v;
            } else if (st->kind[k] == OSU_MAX) {
                r->max_us = v;
            }
            break;
        }
    }
    return 0;
}

int rs_meas_osu_text(rs_meas_ctx *c, const char *text, size_t len)
{
    rs_meas_table *t = c->t;
    rs_meas_lines L;
    if (rs_meas_lines_split(c, text, len, &L) != 0)
        return -1;
    snprintf(t->tool, sizeof t->tool, "OSU");
    osu_state st;
    memset(&st, 0, sizeof st);
    int rc = 0, per_rank = 0;
    char q[96];
    /* the rank count first: it turns per-rank sizes into nccl-tests sizes as rows are read */
    if (rs_meas_settle_ranks(c, 0, 1, "") != 0) {
        rs_meas_lines_free(&L);
        return -1;
    }
    for (size_t k = 0; k < L.n && rc == 0; k++) {
        const char *s;
        size_t l;
        int line = (int)k + 1;
        if (!rs_meas_line_trimmed(&L, k, &s, &l))
            continue;
        if (rs_meas_starts(s, l, "# OSU "))
            rc = osu_title(c, &st, s, l, line, &per_rank);
        else if (rs_meas_starts(s, l, "# Datatype: "))
            rc = osu_datatype(c, &st, s, l, line);
        else if (rs_meas_starts(s, l, "# Size"))
            rc = osu_columns(c, &st, s, l, line);
        else if (rs_meas_starts(s, l, "# Avg Latency(us)"))
            rc = rs_meas_fail(c, line, "a table without its Size column (allowed: the tables OSU prints with sizes)");
        else if (rs_meas_starts(s, l, "DATA VALIDATION ERROR:")) {
            st.stop_line = line;
            rs_meas_note(t, "the tool stopped: %.120s", rs_meas_quote(q, sizeof q, s, l));
        } else if (s[0] == '#')
            rc = rs_meas_fail(c, line, "'%s' is no line of an OSU collective latency table (expected: the title, "
                              "'# Datatype:', '# Size ...' and rows)", rs_meas_quote(q, sizeof q, s, l));
        else if (!st.title_line)
            rc = rs_meas_fail(c, line, "'%s' before the OSU title (expected: '# OSU ... Latency Test' first)",
                              rs_meas_quote(q, sizeof q, s, l));
        else
            rc = osu_row(c, &st, s, l, line, L.last_open && k + 1 == L.n, per_rank);
    }
    int end = L.n ? (int)L.n : 1;
    rs_meas_lines_free(&L);
    if (rc != 0)
        return -1;
    if (!st.title_line)
        return rs_meas_fail(c, end, "the file ends before the OSU title '# OSU ... Latency Test'");
    if (t->nrows == 0)
        return rs_meas_fail(c, end, "the file ends before any row (truncated? the title is at line %d)", st.title_line);
    if (per_rank && t->ranks == 0)
        rs_meas_note(t, "sizes are per rank: --ranks N gives their nccl-tests size");
    return rs_meas_finish(c);
}
