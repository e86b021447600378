/* rs_meas_nccl.c — the reader of nccl-tests and rccl-tests text output: header, device lines, the two-placement table, footer. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rs_meas_int.h"

/*
 * The layout, as nccl-tests' src/common.cu and src/util.cu print it (2.13 to 2.19) and rccl-tests'
 * src/common.cu (2024):
 *
 *   # nccl-tests version 2.19.6 nccl-headers=22807 nccl-library=22807     (>= 2.17)
 *   # Collective test starting: all_reduce_perf                          (>= 2.16)
 *   # nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 ...
 *   #
 *   rccl-tests: Version <git hash>                                        (rccl-tests)
 *   # Using devices
 *   #  Rank  0 Group  0 Pid  12345 on host device  0 [0000:07:00] NVIDIA H100 80GB HBM3
 *   #
 *   #                                            out-of-place          in-place
 *   #       size   count   type   redop   root   time algbw busbw #wrong   time algbw busbw #wrong
 *   #        (B) (elements)                      (us) (GB/s) (GB/s)        (us) (GB/s) (GB/s)
 *           8       2  float     sum     -1   36.39  0.00  0.00      0   36.07  0.00  0.00      0
 *   # Out of bounds values : 0 OK
 *   # Avg bus bandwidth    : 22.5
 *   #
 *   # Collective test concluded: all_reduce_perf                         (>= 2.16)
 *
 * Older nccl-tests (before 2.10) print no root column, some no redop column, and 'error' (the largest
 * deviation from the expected values, a float) where '#wrong' is: read, with what they lack unknown.
 * Variants: "cputime" for "time" (-C 1); i_min i_max i_p99 i_cv% after each placement (-I 1);
 * a timestamp column last (-S 1); rccl-tests' in-place-only table; "# Testing N cycle." between
 * repeats; #wrong "N/A" without -c. Times and bandwidths are printed with 2 decimals, fewer for
 * large values (getFloatStr), which is the precision every check allows.
 */

typedef struct nccl_state {
    int phase;             /* 0 before '# nThread', 1 header, 2 table, 3 after the footer */
    int nthread_line, using_line, place_line, cols_line, units_line, oob_line, avg_line;
    int ngroups;
    rs_meas_place place[2];
    int periter, timestamp, ncols, cputime;
    int prog_line;         /* '# Collective test starting:' or a command line */
    rs_meas_coll prog_coll;
    char prog_where[96];
    int cmd_nprocs, cmd_line;
    rs_meas_sweep sweep;   /* the current sweep: rows of one type, redop and root, sizes rising */
    int after_footer_text;
    int cols_per_group;
    int has_redop, has_root, nlead; /* the leading columns: size count type [redop] [root] */
    int error_col;         /* 'error' (older nccl-tests) where '#wrong' is */
} nccl_state;

/* "host:pid:tid [dev] NCCL INFO ..." — NCCL's own debug lines (NCCL_DEBUG=INFO), which land
 * between the table's lines when stdout and stderr share a file. */
static int nccl_is_log(const rs_meas_toks *tk)
{
    if (tk->n < 3 || !rs_meas_eq(tk->p[2], tk->len[2], "NCCL"))
        return 0;
    const char *p = tk->p[1];
    size_t l = tk->len[1];
    if (l < 3 || p[0] != '[' || p[l - 1] != ']')
        return 0;
    /* the first token ends in ":pid:tid" */
    const char *s = tk->p[0];
    size_t n = tk->len[0];
    int colons = 0;
    for (size_t i = n; i > 0 && colons < 2; i--) {
        if (s[i - 1] == ':')
            colons++;
        else if (s[i - 1] < '0' || s[i - 1] > '9')
            return 0;
    }
    return colons == 2;
}

/* '# nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 ...' */
static int nccl_header(rs_meas_ctx *c, nccl_state *st, const rs_meas_toks *tk, int line)
{
    rs_meas_table *t = c->t;
    int have = 0;
    for (int i = 0; i + 1 < tk->n; i++) {
        const char *k = tk->p[i];
        size_t kl = tk->len[i];
        const char *v = tk->p[i + 1];
        size_t vl = tk->len[i + 1];
        uint64_t u;
        int n;
        if (rs_meas_eq(k, kl, "nThread") && rs_meas_parse_int(v, vl, &n) == 0 && n > 0) {
            t->nthreads = n;
            have |= 1;
        } else if (rs_meas_eq(k, kl, "nGpus") && rs_meas_parse_int(v, vl, &n) == 0 && n > 0) {
            t->ngpus = n;
            have |= 2;
        } else if (rs_meas_eq(k, kl, "minBytes") && rs_meas_parse_u64(v, vl, &u) == 0) {
            t->minbytes = u;
            have |= 4;
        } else if (rs_meas_eq(k, kl, "maxBytes") && rs_meas_parse_u64(v, vl, &u) == 0) {
            t->maxbytes = u;
            have |= 8;
        } else if (rs_meas_eq(k, kl, "iters:") && rs_meas_parse_int(v, vl, &n) == 0 && i > 0) {
            if (rs_meas_eq(tk->p[i - 1], tk->len[i - 1], "warmup"))
                t->warmup_iters = n;
            else if (!rs_meas_eq(tk->p[i - 1], tk->len[i - 1], "agg"))
                t->iters = n;
        }
    }
    if (have != 15) {
        char q[80];
        return rs_meas_fail(c, line, "nccl-tests' header line '%s' lacks %s (expected: '# nThread N nGpus N minBytes N "
                            "maxBytes N ...')", rs_meas_quote(q, sizeof q, tk->p[0], (size_t)(tk->p[tk->n - 1] + tk->len[tk->n - 1] - tk->p[0])),
                            !(have & 1) ? "nThread" : !(have & 2) ? "nGpus" : !(have & 4) ? "minBytes" : "maxBytes");
    }
    st->nthread_line = line;
    st->phase = 1;
    return 0;
}

/* '#  Rank  0 Group  0 Pid  12345 on host device  0 [0000:07:00] NAME' (older: no Group,
 * '[0x07]'; rccl-tests: '#   Rank  0 Pid ... [0000:05:00.0] NAME'). */
static int nccl_device(rs_meas_ctx *c, const rs_meas_toks *tk, const char *body, size_t blen, int line)
{
    int i = 0, rank = -1, dev = -1, v;
    const char *host = NULL;
    size_t hostlen = 0;
    if (!rs_meas_tok_is(tk, i, "Rank") || i + 1 >= tk->n || rs_meas_parse_int(tk->p[i + 1], tk->len[i + 1], &rank) != 0)
        goto bad;
    i += 2;
    if (rs_meas_tok_is(tk, i, "Group"))
        i += 2;
    if (!rs_meas_tok_is(tk, i, "Pid") || i + 1 >= tk->n || rs_meas_parse_int(tk->p[i + 1], tk->len[i + 1], &v) != 0)
        goto bad;
    i += 2;
    if (!rs_meas_tok_is(tk, i, "on") || i + 1 >= tk->n)
        goto bad;
    host = tk->p[i + 1];
    hostlen = tk->len[i + 1];
    i += 2;
    if (!rs_meas_tok_is(tk, i, "device") || i + 1 >= tk->n || rs_meas_parse_int(tk->p[i + 1], tk->len[i + 1], &dev) != 0)
        goto bad;
    i += 2;
    if (i >= tk->n || tk->p[i][0] != '[' || tk->p[i][tk->len[i] - 1] != ']')
        goto bad;
    i++;
    if (rank < 0 || dev < 0)
        goto bad;
    rs_meas_table *t = c->t;
    for (size_t k = 0; k < t->ndevices; k++)
        if (t->devices[k].rank == rank)
            return rs_meas_fail(c, line, "rank %d has a second device line (first at line %d) (allowed: each rank once)",
                                rank, t->devices[k].line);
    rs_meas_device *d = rs_meas_add_device(c, line);
    if (d == NULL)
        return -1;
    d->rank = rank;
    d->device = dev;
    rs_meas_copy(d->host, sizeof d->host, host, hostlen);
    if (i < tk->n)
        rs_meas_copy(d->name, sizeof d->name, tk->p[i], (size_t)(body + blen - tk->p[i]));
    return 0;
bad:;
    char q[80];
    return rs_meas_fail(c, line, "device line '%s' is not '#  Rank N [Group G] Pid P on HOST device D [BUS] NAME'",
                        rs_meas_quote(q, sizeof q, body, blen));
}

/* '#    out-of-place    in-place' (each may be followed by '(+ per-iteration)'). */
static int nccl_places(rs_meas_ctx *c, nccl_state *st, const rs_meas_toks *tk, int line)
{
    st->ngroups = 0;
    for (int i = 0; i < tk->n; i++) {
        rs_meas_place p = RS_MEAS_PLACE_NONE;
        if (rs_meas_eq(tk->p[i], tk->len[i], "out-of-place"))
            p = RS_MEAS_PLACE_OUT;
        else if (rs_meas_eq(tk->p[i], tk->len[i], "in-place"))
            p = RS_MEAS_PLACE_IN;
        else if (rs_meas_eq(tk->p[i], tk->len[i], "(+") && rs_meas_tok_is(tk, i + 1, "per-iteration)")) {
            i++;
            continue;
        } else {
            char q[80];
            return rs_meas_fail(c, line, "'%s' in the placement line (allowed: out-of-place, in-place, "
                                "(+ per-iteration))", rs_meas_quote(q, sizeof q, tk->p[i], tk->len[i]));
        }
        if (st->ngroups == 2 || (st->ngroups == 1 && st->place[0] == p))
            return rs_meas_fail(c, line, "the placement line names %s twice or more than two placements (allowed: "
                                "out-of-place then in-place, or in-place alone)", rs_meas_place_name(p));
        st->place[st->ngroups++] = p;
    }
    if (st->ngroups == 0)
        return rs_meas_fail(c, line, "an empty placement line (allowed: out-of-place, in-place)");
    st->place_line = line;
    return 0;
}

/* '#  size  count  type  redop  root  time  algbw  busbw  #wrong  time ...' */
static int nccl_columns(rs_meas_ctx *c, nccl_state *st, const rs_meas_toks *tk, int line)
{
    static const char *const lead[3] = {"size", "count", "type"};
    static const char *const group[4] = {"time", "algbw", "busbw", "#wrong"};
    static const char *const iter[4] = {"i_min", "i_max", "i_p99", "i_cv%"};
    const char *allowed = "size count type redop root, then per placement time (or cputime) algbw busbw #wrong "
                          "[i_min i_max i_p99 i_cv%], then [timestamp]; older: without root or redop, 'error' for "
                          "'#wrong'";
    char q[80];
    if (st->place_line == 0)
        return rs_meas_fail(c, line, "column names without the placement line above them (expected: '#  ... "
                            "out-of-place  in-place' first)");
    if (tk->more)
        return rs_meas_fail(c, line, "more than %d columns (allowed: %s)", RS_MEAS_MAXTOK, allowed);
    int i = 0;
    for (; i < 3; i++)
        if (!rs_meas_tok_is(tk, i, lead[i]))
            return rs_meas_fail(c, line, "column %d is '%s', not '%s' (allowed: %s)", i + 1,
                                i < tk->n ? rs_meas_quote(q, sizeof q, tk->p[i], tk->len[i]) : "", lead[i], allowed);
    st->has_redop = rs_meas_tok_is(tk, i, "redop");
    i += st->has_redop;
    st->has_root = rs_meas_tok_is(tk, i, "root");
    i += st->has_root;
    st->nlead = i;
    if (!rs_meas_tok_is(tk, i, "time") && !rs_meas_tok_is(tk, i, "cputime"))
        return rs_meas_fail(c, line, "column %d is '%s', not '%s' (allowed: %s)", i + 1,
                            i < tk->n ? rs_meas_quote(q, sizeof q, tk->p[i], tk->len[i]) : "",
                            !st->has_redop ? "redop" : !st->has_root ? "root" : "time", allowed);
    int groups = 0, cputime = -1;
    st->error_col = -1;
    st->periter = -1;
    while (i < tk->n) {
        if (rs_meas_tok_is(tk, i, "timestamp") && i == tk->n - 1) {
            st->timestamp = 1;
            i++;
            break;
        }
        int cpu = rs_meas_tok_is(tk, i, "cputime"), err = rs_meas_tok_is(tk, i + 3, "error");
        if (st->error_col >= 0 && err != st->error_col)
            return rs_meas_fail(c, line, "one placement's check column is '#wrong', the other's 'error' (allowed: the "
                                "same)");
        st->error_col = err;
        for (int k = 0; k < 4; k++, i++)
            if (!(k == 0 && cpu) && !(k == 3 && err) && !rs_meas_tok_is(tk, i, group[k]))
                return rs_meas_fail(c, line, "unknown column '%s' where '%s' belongs (allowed: %s)",
                                    i < tk->n ? rs_meas_quote(q, sizeof q, tk->p[i], tk->len[i]) : "(none)", group[k],
                                    allowed);
        if (cputime >= 0 && cpu != cputime)
            return rs_meas_fail(c, line, "one placement's time is 'time', the other's 'cputime' (allowed: the same)");
        cputime = cpu;
        int it = rs_meas_tok_is(tk, i, "i_min");
        if (st->periter >= 0 && it != st->periter)
            return rs_meas_fail(c, line, "per-iteration columns after one placement only (allowed: both or neither)");
        st->periter = it;
        for (int k = 0; it && k < 4; k++, i++)
            if (!rs_meas_tok_is(tk, i, iter[k]))
                return rs_meas_fail(c, line, "unknown column '%s' where '%s' belongs (allowed: %s)",
                                    i < tk->n ? rs_meas_quote(q, sizeof q, tk->p[i], tk->len[i]) : "(none)", iter[k],
                                    allowed);
        groups++;
        if (groups > 2)
            return rs_meas_fail(c, line, "more than two placements of columns (allowed: %s)", allowed);
    }
    if (groups != st->ngroups)
        return rs_meas_fail(c, line, "%d placement(s) of columns, but the placement line %d names %d (allowed: as many "
                            "as it names)", groups, st->place_line, st->ngroups);
    if (cputime > 0)
        rs_meas_note(c->t, "times are CPU times (-C 1): bandwidths come from the device times, not printed");
    st->cputime = cputime > 0;
    st->cols_per_group = 4 + 4 * st->periter;
    st->ncols = st->nlead + groups * st->cols_per_group + 2 * st->timestamp;
    if (!st->has_redop || !st->has_root || st->error_col > 0) {
        c->t->old_layout = 1;
        rs_meas_note(c->t, "older nccl-tests columns:%s%s%s", st->has_redop ? "" : " no redop (op unknown);",
                     st->has_root ? "" : " no root (unknown);",
                     st->error_col > 0 ? " 'error' is the largest deviation, not a count (#wrong unknown)" : "");
    }
    st->cols_line = line;
    return 0;
}

/* '#        (B)    (elements)    (us)  (GB/s)  (GB/s)  ...' */
static int nccl_units(rs_meas_ctx *c, nccl_state *st, const rs_meas_toks *tk, int line)
{
    int want = 2 + st->ngroups * (3 + 4 * st->periter) + (st->timestamp ? 2 : 0);
    if (st->cols_line == 0)
        return rs_meas_fail(c, line, "a units line without the column names above it");
    if (st->units_line)
        return rs_meas_fail(c, line, "a second units line (first at line %d)", st->units_line);
    int n = tk->n;
    if (n != want || !rs_meas_tok_is(tk, 1, "(elements)"))
        return rs_meas_fail(c, line, "the units line has %d units, the columns at line %d need %d ((B) (elements) and "
                            "(us) (GB/s) (GB/s) per placement)", n, st->cols_line, want);
    st->units_line = line;
    st->phase = 2;
    return 0;
}

/* A number column of a row, with its printed resolution. */
static int nccl_num(rs_meas_ctx *c, const rs_meas_toks *tk, int i, const char *what, int line, double *v, double *res)
{
    if (rs_meas_parse_num(tk->p[i], tk->len[i], 0, v, res) == 0)
        return 0;
    char q[80];
    return rs_meas_fail(c, line, "%s '%s' in column %d is not a number (allowed: digits, a fraction, an exponent)", what,
                        rs_meas_quote(q, sizeof q, tk->p[i], tk->len[i]), i + 1);
}

static int nccl_row(rs_meas_ctx *c, nccl_state *st, const rs_meas_toks *tk, int line, int last_open)
{
    char q[80];
    if (tk->n != st->ncols || tk->more) {
        if (last_open && tk->n < st->ncols)
            return rs_meas_fail(c, line, "the file ends inside this row: %d of %d columns and no end of line "
                                "(truncated?)", tk->n, st->ncols);
        return rs_meas_fail(c, line, "the row has %d columns, the header at line %d has %d (its size count type "
                            "[redop] [root], then time algbw busbw #wrong per placement)", tk->more ? RS_MEAS_MAXTOK : tk->n,
                            st->cols_line, st->ncols);
    }
    uint64_t size, count;
    int root, tsize;
    const char *type, *op;
    if (rs_meas_parse_u64(tk->p[0], tk->len[0], &size) != 0)
        return rs_meas_fail(c, line, "size '%s' is not a whole number of bytes",
                            rs_meas_quote(q, sizeof q, tk->p[0], tk->len[0]));
    if (rs_meas_parse_u64(tk->p[1], tk->len[1], &count) != 0)
        return rs_meas_fail(c, line, "count '%s' is not a whole number of elements",
                            rs_meas_quote(q, sizeof q, tk->p[1], tk->len[1]));
    if (rs_meas_dtype(tk->p[2], tk->len[2], &type, &tsize) != 0)
        return rs_meas_fail(c, line, "type '%s' is unknown (allowed: %s)", rs_meas_quote(q, sizeof q, tk->p[2], tk->len[2]),
                            rs_meas_dtype_allowed());
    int at = 3;
    op = "";
    root = -1;
    if (st->has_redop && rs_meas_op(tk->p[at], tk->len[at], &op) != 0)
        return rs_meas_fail(c, line, "redop '%s' is unknown (allowed: sum, prod, max, min, avg, mulsum, none)",
                            rs_meas_quote(q, sizeof q, tk->p[at], tk->len[at]));
    at += st->has_redop;
    if (st->has_root && (rs_meas_parse_int(tk->p[at], tk->len[at], &root) != 0 || root < -1))
        return rs_meas_fail(c, line, "root '%s' is not a rank (allowed: -1 for none, or 0 and up)",
                            rs_meas_quote(q, sizeof q, tk->p[at], tk->len[at]));
    rs_meas_table *t = c->t;
    if (t->maxbytes && size > t->maxbytes)
        return rs_meas_fail(c, line, "size %llu B is above maxBytes %llu of the header at line %d",
                            (unsigned long long)size, (unsigned long long)t->maxbytes, st->nthread_line);
    if (rs_meas_nccl_sweep(c, &st->sweep, size, type, op, root, line) != 0)
        return -1;
    int col = st->nlead;
    for (int g = 0; g < st->ngroups; g++, col += st->cols_per_group) {
        rs_meas_row *r = rs_meas_add_row(c, line);
        if (r == NULL)
            return -1;
        r->bytes = r->nccl_bytes = size;
        r->count = (int64_t)count;
        snprintf(r->dtype, sizeof r->dtype, "%s", type);
        snprintf(r->op, sizeof r->op, "%s", op);
        r->root = root;
        r->place = st->place[g];
        r->cpu_time = st->cputime;
        if (nccl_num(c, tk, col, "time", line, &r->time_us, &r->time_res) ||
            nccl_num(c, tk, col + 1, "algbw", line, &r->algbw, &r->algbw_res) ||
            nccl_num(c, tk, col + 2, "busbw", line, &r->busbw, &r->busbw_res))
            return -1;
        const char *w = tk->p[col + 3];
        size_t wl = tk->len[col + 3];
        if (rs_meas_eq(w, wl, "N/A")) {
            r->wrong = -1;
            r->check = RS_MEAS_CHECK_NONE;
        } else if (st->error_col) {
            double v, res; /* the largest deviation: rounding of float sums is not a failure */
            if (rs_meas_parse_num(w, wl, 0, &v, &res) != 0 || !(v >= 0))
                return rs_meas_fail(c, line, "error '%s' is not a deviation (allowed: a number, 0 and up)",
                                    rs_meas_quote(q, sizeof q, w, wl));
            r->wrong = -1;
            r->check = RS_MEAS_CHECK_NONE;
        } else {
            double v, res;
            /* "%6g": a large count may be printed as 1.23457e+06, rounded */
            if (rs_meas_parse_num(w, wl, 0, &v, &res) != 0 || v != floor(v) || v > 9e18)
                return rs_meas_fail(c, line, "#wrong '%s' is not a count of elements (allowed: 0 and up, or N/A)",
                                    rs_meas_quote(q, sizeof q, w, wl));
            r->wrong = (int64_t)v;
            r->check = v > 0 ? RS_MEAS_CHECK_FAIL : RS_MEAS_CHECK_PASS;
        }
        if (st->periter) {
            /* -I 1: statistics of single iterations, after -K skipped ones, while the row's time
             * averages them all (gaps included): no bound on it, so numbers read but not kept */
            double v, res;
            for (int k = 4; k < 8; k++)
                if (nccl_num(c, tk, col + k, k == 4 ? "i_min" : k == 5 ? "i_max" : k == 6 ? "i_p99" : "i_cv%", line, &v,
                             &res))
                    return -1;
        }
    }
    if (st->timestamp) {
        const char *d = tk->p[col], *h = tk->p[col + 1];
        if (tk->len[col] != 10 || d[4] != '-' || d[7] != '-' || tk->len[col + 1] != 8 || h[2] != ':' || h[5] != ':')
            return rs_meas_fail(c, line, "timestamp '%s' is not 'YYYY-MM-DD HH:MM:SS'",
                                rs_meas_quote(q, sizeof q, d, (size_t)(h + tk->len[col + 1] - d)));
    }
    return 0;
}

/* '# Out of bounds values : 0 OK' and '# Avg bus bandwidth    : 22.5 [OK|FAILED]'. */
static int nccl_footer(rs_meas_ctx *c, nccl_state *st, const rs_meas_toks *tk, int line, int oob)
{
    rs_meas_table *t = c->t;
    int colon = -1;
    for (int i = 0; i < tk->n; i++)
        if (rs_meas_eq(tk->p[i], tk->len[i], ":")) {
            colon = i;
            break;
        }
    char q[80];
    if (oob) {
        int n;
        if (st->phase != 2 || t->nrows == 0)
            return rs_meas_fail(c, line, "the footer before any row of the table (expected: rows, then '# Out of bounds "
                                "values : N OK')");
        if (colon < 0 || colon + 3 != tk->n || rs_meas_parse_int(tk->p[colon + 1], tk->len[colon + 1], &n) != 0 || n < 0 ||
            !(rs_meas_tok_is(tk, colon + 2, n ? "FAILED" : "OK")))
            return rs_meas_fail(c, line, "'%s' is not '# Out of bounds values : N OK' (FAILED when N > 0)",
                                rs_meas_quote(q, sizeof q, tk->p[0], (size_t)(tk->p[tk->n - 1] + tk->len[tk->n - 1] - tk->p[0])));
        /* N counts the checks that failed; it is 0 exactly when no row has a #wrong */
        if (st->error_col > 0)
            c->t->out_of_bounds = n; /* no #wrong to hold it against */
        else if (rs_meas_nccl_oob(c, n, line) != 0)
            return -1;
        st->oob_line = line;
        st->phase = 3;
        return 0;
    }
    double v, res;
    if (st->oob_line == 0 || st->avg_line)
        return rs_meas_fail(c, line, "'# Avg bus bandwidth' %s (expected: once, after '# Out of bounds values')",
                            st->avg_line ? "again" : "before the out-of-bounds line");
    if (colon < 0 || colon + 2 > tk->n || colon + 3 < tk->n ||
        rs_meas_parse_num(tk->p[colon + 1], tk->len[colon + 1], 0, &v, &res) != 0 ||
        (colon + 3 == tk->n && !rs_meas_tok_is(tk, colon + 2, "OK") && !rs_meas_tok_is(tk, colon + 2, "FAILED")))
        return rs_meas_fail(c, line, "'%s' is not '# Avg bus bandwidth : X [OK|FAILED]'",
                            rs_meas_quote(q, sizeof q, tk->p[0], (size_t)(tk->p[tk->n - 1] + tk->len[tk->n - 1] - tk->p[0])));
    t->avg_busbw = v;
    st->avg_line = line;
    return 0;
}

static int nccl_comment(rs_meas_ctx *c, nccl_state *st, const char *s, size_t len, int line)
{
    rs_meas_table *t = c->t;
    const char *b = s + 1;
    size_t bl = len - 1;
    while (bl && (*b == ' ' || *b == '\t')) {
        b++;
        bl--;
    }
    rs_meas_toks tk;
    rs_meas_tokenize(b, bl, &tk);
    char q[96];
    if (tk.n == 0)
        return 0; /* '#': a separator */
    if (rs_meas_starts(b, bl, "nccl-tests version ")) {
        if (st->phase != 0)
            return rs_meas_fail(c, line, "nccl-tests' version line inside the output (expected: at its start)");
        snprintf(t->tool, sizeof t->tool, "nccl-tests");
        if (tk.n >= 3)
            rs_meas_copy(t->version, sizeof t->version, tk.p[2], tk.len[2]);
        return 0;
    }
    if (rs_meas_starts(b, bl, "Collective test starting:") || rs_meas_starts(b, bl, "Collective test concluded:")) {
        int start = b[16] == 's';
        if (tk.n != 4)
            return rs_meas_fail(c, line, "'%s' does not name one program", rs_meas_quote(q, sizeof q, b, bl));
        rs_meas_prog_kind kind;
        rs_meas_coll coll;
        char base[64];
        if (rs_meas_program(tk.p[3], tk.len[3], &kind, &coll, base, sizeof base) != 0 || kind != RS_MEAS_PROG_NCCL)
            return rs_meas_fail(c, line, "program '%s' is not a collective this reader knows (allowed: all_reduce_perf, "
                                "all_gather_perf, broadcast_perf, reduce_perf, reduce_scatter_perf, alltoall_perf, "
                                "sendrecv_perf, gather_perf, scatter_perf)", rs_meas_quote(q, sizeof q, tk.p[3], tk.len[3]));
        if (start) {
            if (st->phase != 0)
                return rs_meas_fail(c, line, "'Collective test starting' inside the output (expected: at its start)");
            if (st->prog_line && st->prog_coll != coll)
                return rs_meas_fail(c, line, "program %s, but the command line at line %d runs %s", base, st->prog_line,
                                    rs_meas_coll_name(st->prog_coll));
            st->prog_line = line;
            st->prog_coll = coll;
            snprintf(st->prog_where, sizeof st->prog_where, "program %s, line %d", base, line);
            snprintf(t->program, sizeof t->program, "%s", base);
            return 0;
        }
        if (st->phase != 3)
            return rs_meas_fail(c, line, "'Collective test concluded' before the footer (expected: after '# Avg bus "
                                "bandwidth')");
        if (t->program[0] && strcmp(t->program, base) != 0)
            return rs_meas_fail(c, line, "program %s concludes, but %s started (line %d)", base, t->program, st->prog_line);
        return 0;
    }
    if (rs_meas_tok_is(&tk, 0, "nThread")) {
        if (st->phase != 0)
            return rs_meas_fail(c, line, "a second nccl-tests run starts here (the first at line %d) (allowed: one run "
                                "per file)", st->nthread_line);
        return nccl_header(c, st, &tk, line);
    }
    if (rs_meas_starts(b, bl, "Blocking Enabled") || rs_meas_starts(b, bl, "Parallel Init Enabled") ||
        rs_meas_starts(b, bl, "Per-Iteration Report")) {
        if (st->phase != 1)
            return rs_meas_fail(c, line, "'%s' outside the header (expected: after '# nThread ...')",
                                rs_meas_quote(q, sizeof q, b, bl));
        return 0;
    }
    if (rs_meas_eq(b, bl, "Using devices")) {
        if (st->phase != 1 || st->using_line)
            return rs_meas_fail(c, line, "'# Using devices' %s (expected: once, after '# nThread ...')",
                                st->using_line ? "again" : "outside the header");
        st->using_line = line;
        return 0;
    }
    if (rs_meas_tok_is(&tk, 0, "Rank")) {
        if (st->phase != 1 || st->using_line == 0 || st->place_line)
            return rs_meas_fail(c, line, "a device line outside the device list (expected: after '# Using devices', "
                                "before the table)");
        return nccl_device(c, &tk, b, bl, line);
    }
    if (rs_meas_starts(b, bl, "Reducing maxBytes to ")) {
        uint64_t u;
        if (st->phase != 1 || tk.n < 4 || rs_meas_parse_u64(tk.p[3], tk.len[3], &u) != 0)
            return rs_meas_fail(c, line, "'%s' is not '# Reducing maxBytes to N ...' in the header",
                                rs_meas_quote(q, sizeof q, b, bl));
        t->maxbytes = u;
        return 0;
    }
    if (rs_meas_starts(b, bl, "Writing JSON output to") || rs_meas_starts(b, bl, "skipping json output"))
        return 0;
    if (rs_meas_tok_is(&tk, 0, "size")) {
        if (st->phase != 1 || st->cols_line)
            return rs_meas_fail(c, line, "column names %s (expected: once, after the header and device lines)",
                                st->cols_line ? "again" : "before '# nThread ...'");
        return nccl_columns(c, st, &tk, line);
    }
    if (rs_meas_tok_is(&tk, 0, "(B)"))
        return nccl_units(c, st, &tk, line);
    for (int i = 0; i < tk.n; i++)
        if (rs_meas_eq(tk.p[i], tk.len[i], "out-of-place") || rs_meas_eq(tk.p[i], tk.len[i], "in-place")) {
            if (st->phase != 1 || st->place_line)
                return rs_meas_fail(c, line, "a placement line %s (expected: once, after the header)",
                                    st->place_line ? "again" : "before '# nThread ...'");
            return nccl_places(c, st, &tk, line);
        }
    if (rs_meas_starts(b, bl, "Testing ") && tk.n == 3 && rs_meas_tok_is(&tk, 2, "cycle.")) {
        if (st->phase != 2)
            return rs_meas_fail(c, line, "'# Testing N cycle.' outside the table");
        st->sweep.in_series = 0;
        return 0;
    }
    if (rs_meas_starts(b, bl, "Errors with asterisks"))
        return st->phase == 2 ? 0 : rs_meas_fail(c, line, "'%s' outside the table", rs_meas_quote(q, sizeof q, b, bl));
    if (rs_meas_starts(b, bl, "Out of bounds values"))
        return nccl_footer(c, st, &tk, line, 1);
    if (rs_meas_starts(b, bl, "Avg bus bandwidth"))
        return nccl_footer(c, st, &tk, line, 0);
    if (rs_meas_starts(b, bl, "GPU memory usage"))
        return st->phase == 3 ? 0 : rs_meas_fail(c, line, "'# GPU memory usage' before the footer");
    if (rs_meas_starts(b, bl, "error:")) {
        if (st->phase != 3)
            return rs_meas_fail(c, line, "'# error: ...' before the footer");
        rs_meas_note(t, "last error: %.120s", rs_meas_quote(q, sizeof q, b + 6, bl - 6));
        return 0;
    }
    return rs_meas_fail(c, line, "'%s' is no line of nccl-tests output (expected: its header, device lines, column "
                        "names, rows and footer)", rs_meas_quote(q, sizeof q, s, len));
}

static int nccl_text_line(rs_meas_ctx *c, nccl_state *st, const char *s, size_t len, const rs_meas_toks *tk, int line,
                          int last_open)
{
    rs_meas_table *t = c->t;
    char q[96];
    if (st->phase == 2)
        return nccl_row(c, st, tk, line, last_open);
    if (st->phase <= 1 && rs_meas_starts(s, len, "rccl-tests: Version")) {
        snprintf(t->tool, sizeof t->tool, "rccl-tests");
        if (tk->n >= 3)
            rs_meas_copy(t->version, sizeof t->version, tk->p[2], tk->len[2]);
        return 0;
    }
    rs_meas_cmd cmd;
    if (st->phase == 0 && rs_meas_command(s, len, RS_MEAS_PROG_NCCL, &cmd) == 0) {
        if (st->cmd_line)
            return rs_meas_fail(c, line, "a second command line (the first at line %d) (allowed: one run per file)",
                                st->cmd_line);
        if (st->prog_line && st->prog_coll != cmd.coll)
            return rs_meas_fail(c, line, "the command line runs %s, but the program at line %d is %s", cmd.program,
                                st->prog_line, rs_meas_coll_name(st->prog_coll));
        rs_meas_copy(t->command, sizeof t->command, s, len);
        snprintf(t->program, sizeof t->program, "%s", cmd.program);
        st->cmd_line = line;
        if (!st->prog_line) {
            st->prog_line = line;
            st->prog_coll = cmd.coll;
            snprintf(st->prog_where, sizeof st->prog_where, "command line %s, line %d", cmd.program, line);
        }
        st->cmd_nprocs = cmd.nprocs;
        return 0;
    }
    if (st->phase == 3) {
        /* nccl-tests before 2.17 print NCCL's last error as it is after the footer */
        if (st->after_footer_text)
            return rs_meas_fail(c, line, "'%s' after the footer and its error line (expected: nothing more)",
                                rs_meas_quote(q, sizeof q, s, len));
        st->after_footer_text = line;
        rs_meas_note(t, "last error: %.120s", rs_meas_quote(q, sizeof q, s, len));
        return 0;
    }
    return rs_meas_fail(c, line, "'%s' is no line of nccl-tests output (expected: '# nThread ...' and the lines after "
                        "it, or the command line above them)", rs_meas_quote(q, sizeof q, s, len));
}

/* The collective from the table alone, where its columns decide it: redop none or not, a root
 * or not, and count x type = size (one buffer) or = size / ranks (a chunk per rank). */
static int nccl_infer_coll(rs_meas_ctx *c, int where_line)
{
    rs_meas_table *t = c->t;
    const rs_meas_row *big = NULL;
    for (size_t i = 0; i < t->nrows; i++)
        if (t->rows[i].count > 0 && (big == NULL || t->rows[i].bytes > big->bytes))
            big = &t->rows[i];
    const char *ask = "name it: --collective NAME, or keep nccl-tests' '# Collective test starting:' line or the "
                      "command line in the file";
    if (big == NULL)
        return rs_meas_fail(c, where_line, "which collective? The file does not name its program and no row has a "
                            "count to tell it by (%s)", ask);
    if (t->old_layout && (!big->op[0] || big->root < 0))
        return rs_meas_fail(c, where_line, "which collective? The file does not name its program, and its older "
                            "columns (no %s) cannot tell (%s)", !big->op[0] ? "redop" : "root", ask);
    const char *canon;
    int ts = 1;
    rs_meas_dtype(big->dtype, strlen(big->dtype), &canon, &ts);
    double q = (double)big->bytes / ((double)big->count * ts);
    int chunked = q > 1.5, reduces = strcmp(big->op, "none") != 0, rooted = big->root >= 0;
    rs_meas_coll k = RS_MEAS_COLL_NONE;
    const char *pair = NULL;
    if (!chunked)
        k = reduces ? (rooted ? RS_MEAS_COLL_REDUCE : RS_MEAS_COLL_ALLREDUCE)
                    : (rooted ? RS_MEAS_COLL_BROADCAST : RS_MEAS_COLL_SENDRECV);
    else if (reduces && !rooted)
        k = RS_MEAS_COLL_REDUCE_SCATTER;
    else if (!reduces)
        pair = rooted ? "gather and scatter" : "allgather and alltoall";
    if (k == RS_MEAS_COLL_NONE)
        return rs_meas_fail(c, big->line, "which collective? The file does not name its program, and %s print the same "
                            "table (%s)", pair ? pair : "no collective prints this row's redop, root and count", ask);
    snprintf(t->coll_from, sizeof t->coll_from, "the columns redop, root and count (line %d)", big->line);
    t->coll = k;
    if (chunked && t->ranks == 0 && q == floor(q)) {
        t->ranks = (int)q;
        snprintf(t->ranks_from, sizeof t->ranks_from, "size / count (line %d)", big->line);
    }
    return 0;
}

/* The rank count from busbw / algbw where the file gives it no other way (a table without its
 * device lines): the row with the largest algbw has the most digits to tell it by. */
static void nccl_infer_ranks(rs_meas_table *t)
{
    const rs_meas_row *big = NULL;
    for (size_t i = 0; i < t->nrows; i++)
        if (!isnan(t->rows[i].algbw) && (big == NULL || t->rows[i].algbw > big->algbw))
            big = &t->rows[i];
    if (big == NULL || !(big->algbw >= 1.0))
        return;
    double f = big->busbw / big->algbw, p = 0;
    if (t->coll == RS_MEAS_COLL_ALLREDUCE && f < 1.999)
        p = 2.0 / (2.0 - f);
    else if (f < 0.999 && (t->coll == RS_MEAS_COLL_REDUCE_SCATTER || t->coll == RS_MEAS_COLL_ALLGATHER ||
                           t->coll == RS_MEAS_COLL_ALLTOALL || t->coll == RS_MEAS_COLL_GATHER ||
                           t->coll == RS_MEAS_COLL_SCATTER))
        p = 1.0 / (1.0 - f);
    if (p >= 1 && p < 1e6) {
        t->ranks = (int)floor(p + 0.5);
        snprintf(t->ranks_from, sizeof t->ranks_from, "busbw / algbw (line %d)", big->line);
    }
}

/* The table's rows against its collective: nccl-tests prints redop 'none' where nothing is
 * reduced and root -1 where there is no root. */
static int nccl_shape(rs_meas_ctx *c)
{
    rs_meas_table *t = c->t;
    rs_meas_coll k = t->coll;
    int reduces = k == RS_MEAS_COLL_ALLREDUCE || k == RS_MEAS_COLL_REDUCE || k == RS_MEAS_COLL_REDUCE_SCATTER;
    int rooted = k == RS_MEAS_COLL_BROADCAST || k == RS_MEAS_COLL_REDUCE || k == RS_MEAS_COLL_GATHER ||
                 k == RS_MEAS_COLL_SCATTER;
    for (size_t i = 0; i < t->nrows; i++) {
        const rs_meas_row *r = &t->rows[i];
        if (r->op[0] && reduces != (strcmp(r->op, "none") != 0))
            return rs_meas_fail(c, r->line, "redop %s for %s (%s) (allowed: %s)", r->op, rs_meas_coll_name(k), t->coll_from,
                                reduces ? "sum, prod, max, min, avg, mulsum" : "none");
        if (!(t->old_layout && r->root < 0) && rooted != (r->root >= 0))
            return rs_meas_fail(c, r->line, "root %d for %s (%s) (allowed: %s)", r->root, rs_meas_coll_name(k),
                                t->coll_from, rooted ? "a rank, 0 and up" : "-1");
        if (t->ranks > 0 && r->root >= t->ranks)
            return rs_meas_fail(c, r->line, "root %d, but the run has %d ranks (%s) (allowed: 0 to %d)", r->root, t->ranks,
                                t->ranks_from, t->ranks - 1);
    }
    return 0;
}

int rs_meas_nccl_text(rs_meas_ctx *c, const char *text, size_t len)
{
    rs_meas_table *t = c->t;
    rs_meas_lines L;
    if (rs_meas_lines_split(c, text, len, &L) != 0)
        return -1;
    nccl_state st;
    memset(&st, 0, sizeof st);
    snprintf(t->tool, sizeof t->tool, "nccl-tests");
    int rc = 0;
    for (size_t k = 0; k < L.n && rc == 0; k++) {
        const char *s;
        size_t l;
        int line = (int)k + 1, last_open = L.last_open && k + 1 == L.n;
        if (!rs_meas_line_trimmed(&L, k, &s, &l))
            continue;
        rs_meas_toks tk;
        rs_meas_tokenize(s, l, &tk);
        if (nccl_is_log(&tk)) {
            t->log_lines++;
            continue;
        }
        if (s[0] == '#')
            rc = nccl_comment(c, &st, s, l, line);
        else
            rc = nccl_text_line(c, &st, s, l, &tk, line, last_open);
    }
    int end = L.n ? (int)L.n : 1;
    rs_meas_lines_free(&L);
    if (rc != 0)
        return -1;
    if (st.phase == 0)
        return rs_meas_fail(c, end, "the file ends before nccl-tests' header '# nThread ...' (truncated, or not "
                            "nccl-tests output?)");
    if (st.phase == 1)
        return rs_meas_fail(c, end, "the file ends before the table's column names (truncated? the header is at line %d)",
                            st.nthread_line);
    if (st.phase == 2 && t->nrows == 0)
        return rs_meas_fail(c, end, "the file ends before any row of the table (truncated? the column names are at line "
                            "%d)", st.cols_line);
    if (st.phase == 2)
        return rs_meas_fail(c, end, "the file ends after the row at line %d without the footer '# Out of bounds values "
                            ": N OK' (truncated?)", st.sweep.prev_line);
    if (st.avg_line == 0)
        return rs_meas_fail(c, end, "the file ends before '# Avg bus bandwidth' (truncated? the footer starts at line %d)",
                            st.oob_line);

    /* ranks: the device lines list each rank once, 0..N-1, nThread x nGpus per process */
    int found = 0;
    char where[96] = "";
    if (t->ndevices) {
        int n = (int)t->ndevices;
        for (size_t i = 0; i < t->ndevices; i++)
            if (t->devices[i].rank >= n)
                return rs_meas_fail(c, t->devices[i].line, "rank %d, but the device lines list %d ranks (expected: 0 to "
                                    "%d, each once)", t->devices[i].rank, n, n - 1);
        int per = t->nthreads * t->ngpus;
        if (per > 0 && n % per != 0)
            return rs_meas_fail(c, st.using_line, "%d device lines, not a multiple of nThread %d x nGpus %d (line %d) "
                                "(expected: that many per process)", n, t->nthreads, t->ngpus, st.nthread_line);
        found = n;
        snprintf(where, sizeof where, "device lines %d-%d", t->devices[0].line, t->devices[t->ndevices - 1].line);
        int hosts = 0;
        for (size_t i = 0; i < t->ndevices; i++) {
            size_t j = 0;
            while (j < i && strcmp(t->devices[j].host, t->devices[i].host) != 0)
                j++;
            hosts += j == i;
        }
        t->hosts = hosts;
    } else if (st.cmd_nprocs > 0 && t->nthreads > 0 && t->ngpus > 0) {
        found = st.cmd_nprocs * t->nthreads * t->ngpus;
        snprintf(where, sizeof where, "command line x nThread x nGpus, line %d", st.cmd_line);
    }
    if (rs_meas_settle_ranks(c, found, found ? (t->ndevices ? st.using_line : st.cmd_line) : st.cols_line, where) != 0)
        return -1;
    if (rs_meas_settle_coll(c, st.prog_coll, st.prog_line ? st.prog_line : st.cols_line, st.prog_where) != 0)
        return -1;
    return rs_meas_nccl_complete(c, st.cols_line);
}

int rs_meas_nccl_complete(rs_meas_ctx *c, int line)
{
    rs_meas_table *t = c->t;
    if (t->coll == RS_MEAS_COLL_NONE && nccl_infer_coll(c, line) != 0)
        return -1;
    if (t->ranks == 0)
        nccl_infer_ranks(t);
    for (size_t i = 0; i < t->nrows; i++) {
        t->rows[i].coll = t->coll;
        t->rows[i].ranks = t->ranks;
    }
    if (nccl_shape(c) != 0)
        return -1;
    return rs_meas_finish(c);
}

int rs_meas_nccl_oob(rs_meas_ctx *c, long n, int line)
{
    rs_meas_table *t = c->t;
    int failed_rows = 0;
    for (size_t i = 0; i < t->nrows; i++)
        failed_rows += t->rows[i].wrong > 0;
    if ((n == 0) != (failed_rows == 0))
        return rs_meas_fail(c, line, "out of bounds values %ld, but %d row(s) of the table report #wrong > 0 (expected: "
                            "0 exactly when no row does)", n, failed_rows);
    t->out_of_bounds = n;
    return 0;
}

int rs_meas_nccl_sweep(rs_meas_ctx *c, rs_meas_sweep *sw, uint64_t size, const char *type, const char *op, int root,
                       int line)
{
    /* A sweep's sizes rise; another type, redop or root (-d all, -o all, broadcast's roots)
     * starts a new sweep, and so does a repeat of the first size (-N, rccl-tests' cycles). */
    /* Equal sizes in a row are nccl-tests' own: small requests round down to the same aligned
     * size (allgather of 8, 16 and 32 B on 16 ranks all print 0). */
    int same = sw->in_series && !strcmp(sw->type, type) && !strcmp(sw->op, op) && sw->root == root;
    if (same && size != sw->first_size && size < sw->prev_size)
        return rs_meas_fail(c, line, "size %llu B after %llu B at line %d: sizes must rise within a sweep (a new sweep "
                            "starts at its first size again, or with another type, redop or root)",
                            (unsigned long long)size, (unsigned long long)sw->prev_size, sw->prev_line);
    if (!same || size == sw->first_size) {
        sw->in_series = 1;
        sw->first_size = size;
        snprintf(sw->type, sizeof sw->type, "%s", type);
        snprintf(sw->op, sizeof sw->op, "%s", op);
        sw->root = root;
    }
    sw->prev_size = size;
    sw->prev_line = line;
    return 0;
}
