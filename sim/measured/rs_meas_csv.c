/* rs_meas_csv.c — the reader of measured CSV: rows of collective, size and time under a header of named columns, '#' lines for provenance (measurements kept from a paper, a post or a custom benchmark). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rs_meas_int.h"

/*
 * The layout (scenarios/machines/data/ holds examples):
 *
 *   # source: https://... (who measured it, where it was published)
 *   # hardware: 8 GPUs on PCIe ...
 *   # iters: 20
 *   # warmup: 5
 *   collective,ranks,dtype,op,root,size_bytes,placement,time_us,algbw_gbps,busbw_gbps,wrong
 *   allreduce,8,float,sum,-1,8,out_of_place,42.56,0.00,0.00,0
 *
 * Columns by name, in any order; size_bytes and time_us are required, the others optional, and
 * an empty field is "not known" (a required one may not be empty). size_bytes is nccl-tests'
 * size (the whole buffer, gathered for allgather). A '#' line before the header is a comment;
 * "# key: value" with a key below is metadata, any other key is refused (a typo would silently
 * lose an iteration count). The numbers are checked as every reader's are (algbw against size /
 * time within the printed precision, busbw against algbw x the collective's factor).
 */

typedef enum csv_col {
    CSV_COLLECTIVE = 0,
    CSV_RANKS,
    CSV_DTYPE,
    CSV_OP,
    CSV_ROOT,
    CSV_SIZE,
    CSV_PLACEMENT,
    CSV_TIME,
    CSV_ALGBW,
    CSV_BUSBW,
    CSV_WRONG,
    CSV_NCOLS
} csv_col;

static const char *const csv_names[CSV_NCOLS] = {"collective", "ranks",   "dtype",      "op",         "root", "size_bytes",
                                                 "placement",  "time_us", "algbw_gbps", "busbw_gbps", "wrong"};
#define CSV_ALLOWED                                                                                                   \
    "collective, ranks, dtype, op, root, size_bytes, placement, time_us, algbw_gbps, busbw_gbps, wrong; size_bytes " \
    "and time_us required"
#define CSV_META "source, hardware, software, command, iters, warmup, note"
#define CSV_MAXF 32

/* Splits a line at commas into trimmed fields; the number found (more than CSV_MAXF: CSV_MAXF + 1). */
static int csv_fields(const char *s, size_t len, const char **p, size_t *l)
{
    int n = 0;
    size_t b = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && s[i] != ',')
            continue;
        if (n == CSV_MAXF)
            return CSV_MAXF + 1;
        size_t x = b, y = i;
        while (x < y && (s[x] == ' ' || s[x] == '\t'))
            x++;
        while (y > x && (s[y - 1] == ' ' || s[y - 1] == '\t'))
            y--;
        p[n] = s + x;
        l[n] = y - x;
        n++;
        b = i + 1;
    }
    return n;
}

int rs_meas_csv_header_like(const char *s, size_t len)
{
    const char *p[CSV_MAXF];
    size_t l[CSV_MAXF];
    int n = csv_fields(s, len, p, l);
    if (n < 2 || n > CSV_MAXF)
        return 0;
    for (int i = 0; i < n; i++)
        if (rs_meas_eq(p[i], l[i], "time_us"))
            return 1;
    return 0;
}

typedef struct csv_state {
    int head_line;
    int at[CSV_NCOLS]; /* the field index of each column, -1 when absent */
    int nfields;
} csv_state;

/* "# key: value" before the header. */
static int csv_comment(rs_meas_ctx *c, const char *s, size_t len, int line)
{
    rs_meas_table *t = c->t;
    char q[96];
    s++, len--; /* the '#' */
    while (len && (*s == ' ' || *s == '\t'))
        s++, len--;
    const char *colon = memchr(s, ':', len);
    size_t kl = colon ? (size_t)(colon - s) : 0;
    int is_key = colon && kl > 0;
    for (size_t i = 0; i < kl && is_key; i++)
        is_key = (s[i] >= 'a' && s[i] <= 'z') || s[i] == '_';
    if (!is_key)
        return 0; /* free text */
    const char *v = colon + 1;
    size_t vl = len - kl - 1;
    while (vl && (*v == ' ' || *v == '\t'))
        v++, vl--;
    if (rs_meas_eq(s, kl, "iters") || rs_meas_eq(s, kl, "warmup")) {
        int n;
        if (rs_meas_parse_int(v, vl, &n) != 0 || n < 0)
            return rs_meas_fail(c, line, "%.*s '%s' is not a whole number of iterations", (int)kl, s,
                                rs_meas_quote(q, sizeof q, v, vl));
        *(rs_meas_eq(s, kl, "iters") ? &t->iters : &t->warmup_iters) = n;
    } else if (rs_meas_eq(s, kl, "command")) {
        rs_meas_copy(t->command, sizeof t->command, v, vl);
    } else if (rs_meas_eq(s, kl, "source") || rs_meas_eq(s, kl, "hardware") || rs_meas_eq(s, kl, "software") ||
               rs_meas_eq(s, kl, "note")) {
        char text[400];
        rs_meas_copy(text, sizeof text, v, vl);
        for (char *x = text; *x; x++) /* control bytes would garble a terminal; UTF-8 passes */
            *x = (unsigned char)*x < 0x20 || *x == 0x7f ? '?' : *x;
        rs_meas_note(t, "%.*s: %s", (int)kl, s, text);
    } else {
        return rs_meas_fail(c, line, "unknown metadata '%.*s' (allowed: # %s: ..., or a comment that is no 'key:')",
                            (int)(kl < 40 ? kl : 40), s, CSV_META);
    }
    return 0;
}

static int csv_header(rs_meas_ctx *c, csv_state *st, const char *s, size_t len, int line)
{
    const char *p[CSV_MAXF];
    size_t l[CSV_MAXF];
    char q[96];
    int n = csv_fields(s, len, p, l);
    if (n > CSV_MAXF)
        return rs_meas_fail(c, line, "more than %d columns (allowed: %s)", CSV_MAXF, CSV_ALLOWED);
    for (int k = 0; k < CSV_NCOLS; k++)
        st->at[k] = -1;
    for (int i = 0; i < n; i++) {
        int k = 0;
        while (k < CSV_NCOLS && !rs_meas_eq(p[i], l[i], csv_names[k]))
            k++;
        if (k == CSV_NCOLS)
            return rs_meas_fail(c, line, "unknown column '%s' (allowed: %s)", rs_meas_quote(q, sizeof q, p[i], l[i]),
                                CSV_ALLOWED);
        if (st->at[k] >= 0)
            return rs_meas_fail(c, line, "column '%s' twice (fields %d and %d)", csv_names[k], st->at[k] + 1, i + 1);
        st->at[k] = i;
    }
    if (st->at[CSV_SIZE] < 0 || st->at[CSV_TIME] < 0)
        return rs_meas_fail(c, line, "no '%s' column (allowed: %s)", st->at[CSV_SIZE] < 0 ? "size_bytes" : "time_us",
                            CSV_ALLOWED);
    st->head_line = line;
    st->nfields = n;
    return 0;
}

/* The field of column k in a row, or NULL (absent column, or empty). */
static const char *csv_get(const csv_state *st, const char *const *p, const size_t *l, csv_col k, size_t *len)
{
    int i = st->at[k];
    if (i < 0 || l[i] == 0)
        return NULL;
    *len = l[i];
    return p[i];
}

static int csv_row(rs_meas_ctx *c, csv_state *st, const char *s, size_t len, int line)
{
    const char *p[CSV_MAXF];
    size_t l[CSV_MAXF], fl = 0;
    char q[96];
    int n = csv_fields(s, len, p, l);
    if (n != st->nfields)
        return rs_meas_fail(c, line, "%d fields, the header (line %d) has %d", n > CSV_MAXF ? CSV_MAXF + 1 : n,
                            st->head_line, st->nfields);
    rs_meas_row *r = rs_meas_add_row(c, line);
    if (r == NULL)
        return -1;
    const char *f;
    if ((f = csv_get(st, p, l, CSV_COLLECTIVE, &fl)) != NULL) {
        char name[32];
        if (rs_meas_coll_parse(rs_meas_copy(name, sizeof name, f, fl), &r->coll) != 0)
            return rs_meas_fail(c, line, "collective '%s' (allowed: %s)", rs_meas_quote(q, sizeof q, f, fl),
                                rs_meas_coll_allowed());
    }
    if ((f = csv_get(st, p, l, CSV_RANKS, &fl)) != NULL && (rs_meas_parse_int(f, fl, &r->ranks) != 0 || r->ranks < 1))
        return rs_meas_fail(c, line, "ranks '%s' is not a whole number from 1", rs_meas_quote(q, sizeof q, f, fl));
    const char *canon;
    int esize;
    if ((f = csv_get(st, p, l, CSV_DTYPE, &fl)) != NULL) {
        if (rs_meas_dtype(f, fl, &canon, &esize) != 0)
            return rs_meas_fail(c, line, "dtype '%s' (allowed: %s)", rs_meas_quote(q, sizeof q, f, fl),
                                rs_meas_dtype_allowed());
        snprintf(r->dtype, sizeof r->dtype, "%s", canon);
    }
    if ((f = csv_get(st, p, l, CSV_OP, &fl)) != NULL) {
        if (rs_meas_op(f, fl, &canon) != 0)
            return rs_meas_fail(c, line, "op '%s' (allowed: sum, prod, max, min, avg, mulsum, none)",
                                rs_meas_quote(q, sizeof q, f, fl));
        snprintf(r->op, sizeof r->op, "%s", canon);
    }
    if ((f = csv_get(st, p, l, CSV_ROOT, &fl)) != NULL && (rs_meas_parse_int(f, fl, &r->root) != 0 || r->root < -1))
        return rs_meas_fail(c, line, "root '%s' is not a rank (allowed: -1 for none, or 0 and up)",
                            rs_meas_quote(q, sizeof q, f, fl));
    if ((f = csv_get(st, p, l, CSV_SIZE, &fl)) == NULL || rs_meas_parse_u64(f, fl, &r->bytes) != 0)
        return rs_meas_fail(c, line, "size_bytes '%s' is not a whole number of bytes",
                            f ? rs_meas_quote(q, sizeof q, f, fl) : "");
    r->nccl_bytes = r->bytes;
    if ((f = csv_get(st, p, l, CSV_PLACEMENT, &fl)) != NULL) {
        if (rs_meas_eq(f, fl, "out_of_place") || rs_meas_eq(f, fl, "out-of-place"))
            r->place = RS_MEAS_PLACE_OUT;
        else if (rs_meas_eq(f, fl, "in_place") || rs_meas_eq(f, fl, "in-place"))
            r->place = RS_MEAS_PLACE_IN;
        else if (!rs_meas_eq(f, fl, "none"))
            return rs_meas_fail(c, line, "placement '%s' (allowed: out_of_place, in_place, none)",
                                rs_meas_quote(q, sizeof q, f, fl));
    }
    if ((f = csv_get(st, p, l, CSV_TIME, &fl)) == NULL || rs_meas_parse_num(f, fl, 0, &r->time_us, &r->time_res) != 0)
        return rs_meas_fail(c, line, "time_us '%s' is not a number of microseconds",
                            f ? rs_meas_quote(q, sizeof q, f, fl) : "");
    if ((f = csv_get(st, p, l, CSV_ALGBW, &fl)) != NULL && rs_meas_parse_num(f, fl, 0, &r->algbw, &r->algbw_res) != 0)
        return rs_meas_fail(c, line, "algbw_gbps '%s' is not a number of GB/s", rs_meas_quote(q, sizeof q, f, fl));
    if ((f = csv_get(st, p, l, CSV_BUSBW, &fl)) != NULL && rs_meas_parse_num(f, fl, 0, &r->busbw, &r->busbw_res) != 0)
        return rs_meas_fail(c, line, "busbw_gbps '%s' is not a number of GB/s", rs_meas_quote(q, sizeof q, f, fl));
    if ((f = csv_get(st, p, l, CSV_WRONG, &fl)) != NULL) {
        uint64_t w;
        if (rs_meas_parse_u64(f, fl, &w) != 0)
            return rs_meas_fail(c, line, "wrong '%s' is not a count of wrong elements", rs_meas_quote(q, sizeof q, f, fl));
        r->wrong = (int64_t)w;
        r->check = w ? RS_MEAS_CHECK_FAIL : RS_MEAS_CHECK_PASS;
    }
    return 0;
}

/* A second row of the same measurement (collective, ranks, dtype, op, root, size, placement). */
static int csv_repeats(rs_meas_ctx *c)
{
    const rs_meas_table *t = c->t;
    for (size_t i = 1; i < t->nrows; i++)
        for (size_t j = 0; j < i; j++) {
            const rs_meas_row *a = &t->rows[j], *b = &t->rows[i];
            if (a->coll == b->coll && a->ranks == b->ranks && !strcmp(a->dtype, b->dtype) && !strcmp(a->op, b->op) &&
                a->root == b->root && a->bytes == b->bytes && a->place == b->place)
                return rs_meas_fail(c, b->line, "the same measurement as line %d (%s, %llu B, %s): one row each "
                                    "(allowed: another size, placement, dtype, op or root)", a->line,
                                    rs_meas_coll_name(a->coll), (unsigned long long)a->bytes,
                                    rs_meas_place_name(a->place));
        }
    return 0;
}

int rs_meas_csv_text(rs_meas_ctx *c, const char *text, size_t len)
{
    rs_meas_table *t = c->t;
    rs_meas_lines L;
    if (rs_meas_lines_split(c, text, len, &L) != 0)
        return -1;
    snprintf(t->tool, sizeof t->tool, "measured CSV");
    csv_state st;
    memset(&st, 0, sizeof st);
    int rc = 0;
    for (size_t k = 0; k < L.n && rc == 0; k++) {
        const char *s;
        size_t l;
        int line = (int)k + 1;
        if (!rs_meas_line_trimmed(&L, k, &s, &l))
            continue;
        if (s[0] == '#')
            rc = st.head_line ? rs_meas_fail(c, line, "a comment after the header (line %d) (allowed: '#' lines "
                                             "before it)", st.head_line)
                              : csv_comment(c, s, l, line);
        else if (!st.head_line)
            rc = csv_header(c, &st, s, l, line);
        else if (L.last_open && k + 1 == L.n)
            rc = rs_meas_fail(c, line, "the file ends inside this row, with no end of line (truncated?)");
        else
            rc = csv_row(c, &st, s, l, line);
    }
    int end = L.n ? (int)L.n : 1;
    rs_meas_lines_free(&L);
    if (rc != 0)
        return -1;
    if (!st.head_line)
        return rs_meas_fail(c, end, "the file ends before the header (a line naming the columns: %s)", CSV_ALLOWED);
    if (t->nrows == 0)
        return rs_meas_fail(c, end, "the file ends before any row (truncated? the header is at line %d)", st.head_line);

    /* the collective and rank count: each row's (the user's --collective and --ranks must agree with
     * every row that has them), else the user's; the file's are the first row's */
    char where[64], names[sizeof t->coll_from] = "rows:";
    rs_meas_table first; /* the first row's collective and rank count, with where they came from */
    for (size_t i = 0; i < t->nrows; i++) {
        rs_meas_row *r = &t->rows[i];
        snprintf(where, sizeof where, "line %d", r->line);
        if (rs_meas_settle_coll(c, r->coll, r->line, where) != 0 ||
            rs_meas_settle_ranks(c, r->ranks, r->line, where) != 0)
            return -1;
        if (i == 0) {
            first.coll = t->coll, first.ranks = t->ranks;
            memcpy(first.coll_from, t->coll_from, sizeof first.coll_from);
            memcpy(first.ranks_from, t->ranks_from, sizeof first.ranks_from);
        } else { /* a later row was only checked against the user's word */
            t->coll = first.coll, t->ranks = first.ranks;
            memcpy(t->coll_from, first.coll_from, sizeof t->coll_from);
            memcpy(t->ranks_from, first.ranks_from, sizeof t->ranks_from);
        }
        if (r->coll == RS_MEAS_COLL_NONE && t->coll == RS_MEAS_COLL_NONE)
            return rs_meas_fail(c, r->line, "which collective? no 'collective' field (allowed: the column, or "
                                "--collective NAME)");
        if (r->coll == RS_MEAS_COLL_NONE)
            r->coll = t->coll;
        if (st.at[CSV_RANKS] >= 0 && r->ranks == 0)
            return rs_meas_fail(c, r->line, "no ranks on this row (allowed: a rank count in the 'ranks' column)");
        if (r->ranks == 0)
            r->ranks = t->ranks;
        char name[24];
        snprintf(name, sizeof name, " %s,", rs_meas_coll_name(r->coll));
        if (!strstr(names, name) && strlen(names) + strlen(name) < sizeof names)
            strcat(names, name);
    }
    if (strchr(names, ',') != strrchr(names, ',')) { /* several collectives: name them as ringsim run files do */
        names[strlen(names) - 1] = '\0';
        snprintf(t->coll_from, sizeof t->coll_from, "%s", names);
    }
    if (csv_repeats(c) != 0)
        return -1;
    return rs_meas_finish(c);
}
