/* rs_meas_common.c — what every reader of measured tables uses: located errors, lines and tokens, numbers with their printed precision, names, the row checks. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rs_meas_int.h"

int rs_meas_fail(rs_meas_ctx *c, int line, const char *fmt, ...)
{
    if (c->failed)
        return -1;
    c->failed = 1;
    if (c->err == NULL || c->errlen == 0)
        return -1;
    int n = snprintf(c->err, c->errlen, "%s:%d: ", c->name, line > 0 ? line : 1);
    if (n >= 0 && (size_t)n < c->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    /* one line, whatever the pieces held: a caller prints it as it is */
    for (char *p = c->err; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    return -1;
}

int rs_meas_starts(const char *s, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);
    return len >= n && memcmp(s, prefix, n) == 0;
}

int rs_meas_eq(const char *s, size_t len, const char *word)
{
    return len == strlen(word) && memcmp(s, word, len) == 0;
}

char *rs_meas_copy(char *out, size_t outlen, const char *s, size_t len)
{
    if (outlen == 0)
        return out;
    if (len >= outlen)
        len = outlen - 1;
    memcpy(out, s, len);
    out[len] = '\0';
    return out;
}

void rs_meas_note(rs_meas_table *t, const char *fmt, ...)
{
    size_t used = strlen(t->notes);
    if (used + 3 >= sizeof t->notes)
        return;
    if (used) {
        memcpy(t->notes + used, "; ", 3);
        used += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->notes + used, sizeof t->notes - used, fmt, ap);
    va_end(ap);
    for (char *p = t->notes; *p; p++)
        if (!isprint((unsigned char)*p))
            *p = '?';
}

/* ---- lines and tokens ---------------------------------------------------------------------- */

int rs_meas_lines_split(rs_meas_ctx *c, const char *text, size_t len, rs_meas_lines *L)
{
    memset(L, 0, sizeof *L);
    L->text = text;
    size_t n = 1;
    for (size_t i = 0; i < len; i++)
        n += text[i] == '\n';
    L->off = malloc(n * sizeof *L->off);
    L->len = malloc(n * sizeof *L->len);
    if (L->off == NULL || L->len == NULL) {
        rs_meas_lines_free(L);
        return rs_meas_fail(c, 1, "out of memory splitting %zu lines", n);
    }
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && text[i] == '\0') {
            int line = (int)(L->n + 1);
            rs_meas_lines_free(L);
            return rs_meas_fail(c, line, "a NUL byte at column %zu: binary data, not a tool's text output (allowed: "
                                "the text the benchmark printed)", i - start + 1);
        }
        if (i == len || text[i] == '\n') {
            if (i == len && start == len && L->n > 0)
                break; /* the final '\n' ends the last line; nothing follows it */
            size_t l = i - start;
            if (l > 0 && text[start + l - 1] == '\r')
                l--;
            L->off[L->n] = start;
            L->len[L->n] = l;
            L->n++;
            L->last_open = i == len;
            start = i + 1;
        }
    }
    if (len == 0)
        L->last_open = 0;
    c->t->nlines = (int)L->n;
    return 0;
}

void rs_meas_lines_free(rs_meas_lines *L)
{
    free(L->off);
    free(L->len);
    L->off = L->len = NULL;
    L->n = 0;
}

void rs_meas_tokenize(const char *s, size_t len, rs_meas_toks *tk)
{
    tk->n = 0;
    tk->more = 0;
    size_t i = 0;
    while (i < len) {
        while (i < len && isspace((unsigned char)s[i]))
            i++;
        if (i == len)
            break;
        size_t b = i;
        while (i < len && !isspace((unsigned char)s[i]))
            i++;
        if (tk->n == RS_MEAS_MAXTOK) {
            tk->more = 1;
            return;
        }
        tk->p[tk->n] = s + b;
        tk->len[tk->n] = i - b;
        tk->n++;
    }
}

int rs_meas_tok_is(const rs_meas_toks *tk, int i, const char *word)
{
    return i < tk->n && rs_meas_eq(tk->p[i], tk->len[i], word);
}

const char *rs_meas_quote(char *out, size_t outlen, const char *s, size_t len)
{
    size_t o = 0;
    for (size_t i = 0; i < len && o + 8 < outlen; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (i >= 48) {
            memcpy(out + o, "...", 3);
            o += 3;
            break;
        }
        if (ch >= 0x20 && ch < 0x7f) {
            out[o++] = (char)ch;
        } else {
            snprintf(out + o, outlen - o, "\\x%02x", ch);
            o += 4;
        }
    }
    out[o < outlen ? o : outlen - 1] = '\0';
    return out;
}

/* ---- numbers ------------------------------------------------------------------------------- */

int rs_meas_parse_num(const char *s, size_t len, int allow_sign, double *v, double *res)
{
    size_t i = 0;
    if (len == 0 || len > 63)
        return -1;
    if (allow_sign && (s[0] == '-' || s[0] == '+'))
        i++;
    size_t int_digits = 0, frac_digits = 0;
    while (i < len && isdigit((unsigned char)s[i])) {
        i++;
        int_digits++;
    }
    if (i < len && s[i] == '.') {
        i++;
        while (i < len && isdigit((unsigned char)s[i])) {
            i++;
            frac_digits++;
        }
    }
    if (int_digits + frac_digits == 0)
        return -1;
    long exp10 = 0;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        int neg = 0;
        if (i < len && (s[i] == '+' || s[i] == '-'))
            neg = s[i++] == '-';
        size_t ed = 0;
        while (i < len && isdigit((unsigned char)s[i]) && ed < 5) {
            exp10 = exp10 * 10 + (s[i] - '0');
            i++;
            ed++;
        }
        if (ed == 0)
            return -1;
        exp10 = neg ? -exp10 : exp10;
    }
    if (i != len)
        return -1;
    char buf[64];
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end = NULL;
    double x = strtod(buf, &end);
    if (end != buf + len || !isfinite(x))
        return -1;
    double r = pow(10.0, (double)(exp10 - (long)frac_digits));
    if (!isfinite(r))
        return -1;
    *v = x;
    *res = r;
    return 0;
}

int rs_meas_parse_u64(const char *s, size_t len, uint64_t *v)
{
    if (len == 0 || len > 19)
        return -1;
    uint64_t x = 0;
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char)s[i]))
            return -1;
        x = x * 10 + (uint64_t)(s[i] - '0');
    }
    if (x > (UINT64_C(1) << 63))
        return -1;
    *v = x;
    return 0;
}

int rs_meas_parse_int(const char *s, size_t len, int *v)
{
    int neg = len > 0 && s[0] == '-';
    uint64_t x;
    if (rs_meas_parse_u64(s + neg, len - (size_t)neg, &x) != 0 || x > 2147483647u)
        return -1;
    *v = neg ? -(int)x : (int)x;
    return 0;
}

/* ---- names --------------------------------------------------------------------------------- */

static const struct {
    const char *name;
    int size;
    const char *canon;
} rs_dtypes[] = {
    {"int8", 1, "int8"},       {"uint8", 1, "uint8"},       {"int16", 2, "int16"},     {"uint16", 2, "uint16"},
    {"int32", 4, "int32"},     {"uint32", 4, "uint32"},     {"int64", 8, "int64"},     {"uint64", 8, "uint64"},
    {"half", 2, "half"},       {"bfloat16", 2, "bfloat16"}, {"float", 4, "float"},     {"double", 8, "double"},
    {"f8e4m3", 1, "f8e4m3"},   {"f8e5m2", 1, "f8e5m2"},
    /* the other tools' and older nccl-tests' spellings */
    {"char", 1, "int8"},       {"int", 4, "int32"},         {"fp16", 2, "half"},       {"float16", 2, "half"},
    {"bfp16", 2, "bfloat16"},  {"bf16", 2, "bfloat16"},     {"fp32", 4, "float"},      {"float32", 4, "float"},
    {"fp64", 8, "double"},     {"float64", 8, "double"},    {"fp8_e4m3", 1, "f8e4m3"}, {"fp8_e5m2", 1, "f8e5m2"},
};

int rs_meas_dtype(const char *s, size_t len, const char **canon, int *size)
{
    for (size_t i = 0; i < sizeof rs_dtypes / sizeof rs_dtypes[0]; i++)
        if (rs_meas_eq(s, len, rs_dtypes[i].name)) {
            *canon = rs_dtypes[i].canon;
            *size = rs_dtypes[i].size;
            return 0;
        }
    return -1;
}

const char *rs_meas_dtype_allowed(void)
{
    return "int8, uint8, int16, uint16, int32, uint32, int64, uint64, half, bfloat16, float, double, f8e4m3, "
           "f8e5m2, or char, int, fp16, bfp16, fp32, fp64, fp8_e4m3, fp8_e5m2";
}

int rs_meas_op(const char *s, size_t len, const char **canon)
{
    static const char *const ops[] = {"sum", "prod", "max", "min", "avg", "mulsum", "none"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (rs_meas_eq(s, len, ops[i])) {
            *canon = ops[i];
            return 0;
        }
    return -1;
}

static const char *const rs_coll_names[RS_MEAS_COLL_COUNT] = {
    "?", "allreduce", "broadcast", "reduce", "reduce_scatter", "allgather", "alltoall", "sendrecv", "gather", "scatter",
};

const char *rs_meas_coll_name(rs_meas_coll coll)
{
    return (unsigned)coll < RS_MEAS_COLL_COUNT ? rs_coll_names[coll] : "?";
}

int rs_meas_coll_parse(const char *text, rs_meas_coll *out)
{
    static const struct {
        const char *name;
        rs_meas_coll coll;
    } alias[] = {
        {"all_reduce", RS_MEAS_COLL_ALLREDUCE}, {"bcast", RS_MEAS_COLL_BROADCAST},
        {"reducescatter", RS_MEAS_COLL_REDUCE_SCATTER}, {"all_gather", RS_MEAS_COLL_ALLGATHER},
        {"all_to_all", RS_MEAS_COLL_ALLTOALL}, {"send_recv", RS_MEAS_COLL_SENDRECV},
    };
    if (text == NULL)
        return -1;
    for (int k = 1; k < RS_MEAS_COLL_COUNT; k++)
        if (strcmp(text, rs_coll_names[k]) == 0) {
            *out = (rs_meas_coll)k;
            return 0;
        }
    for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
        if (strcmp(text, alias[i].name) == 0) {
            *out = alias[i].coll;
            return 0;
        }
    return -1;
}

const char *rs_meas_coll_allowed(void)
{
    return "allreduce, broadcast, reduce, reduce_scatter, allgather, alltoall, sendrecv, gather, scatter";
}

const char *rs_meas_format_name(rs_meas_format f)
{
    static const char *const names[RS_MEAS_FMT_COUNT] = {
        "nccl-tests text", "nccl-tests JSON", "HCCL Test", "OSU", "ringsim run JSON", "ringsim bringup JSON",
        "measured CSV",
    };
    return (unsigned)f < RS_MEAS_FMT_COUNT ? names[f] : "?";
}

const char *rs_meas_place_name(rs_meas_place p)
{
    return p == RS_MEAS_PLACE_OUT ? "out_of_place" : p == RS_MEAS_PLACE_IN ? "in_place" : "-";
}

double rs_meas_bus_factor(rs_meas_coll coll, int ranks)
{
    double p = ranks;
    switch (coll) {
    case RS_MEAS_COLL_BROADCAST:
    case RS_MEAS_COLL_REDUCE:
    case RS_MEAS_COLL_SENDRECV:
        return 1.0;
    case RS_MEAS_COLL_ALLREDUCE:
        return ranks >= 1 ? 2.0 * (p - 1.0) / p : NAN;
    case RS_MEAS_COLL_REDUCE_SCATTER:
    case RS_MEAS_COLL_ALLGATHER:
    case RS_MEAS_COLL_ALLTOALL:
    case RS_MEAS_COLL_GATHER:
    case RS_MEAS_COLL_SCATTER:
        return ranks >= 1 ? (p - 1.0) / p : NAN;
    default:
        return NAN;
    }
}

/* ---- programs and command lines ------------------------------------------------------------ */

static const struct {
    const char *name;
    rs_meas_prog_kind kind;
    rs_meas_coll coll;
} rs_programs[] = {
    {"all_reduce_perf", RS_MEAS_PROG_NCCL, RS_MEAS_COLL_ALLREDUCE},
    {"all_gather_perf", RS_MEAS_PROG_NCCL, RS_MEAS_COLL_ALLGATHER},
    {"broadcast_perf", RS_MEAS_PROG_NCCL, RS_MEAS_COLL_BROADCAST},
    {"reduce_perf", RS_MEAS_PROG_NCCL, RS_MEAS_COLL_REDUCE},
    {"reduce_scatter_perf", RS_MEAS_PROG_NCCL, RS_MEAS_COLL_REDUCE_SCATTER},
    {"alltoall_perf", RS_MEAS_PROG_NCCL, RS_MEAS_COLL_ALLTOALL},
    {"sendrecv_perf", RS_MEAS_PROG_NCCL, RS_MEAS_COLL_SENDRECV},
    {"gather_perf", RS_MEAS_PROG_NCCL, RS_MEAS_COLL_GATHER},
    {"scatter_perf", RS_MEAS_PROG_NCCL, RS_MEAS_COLL_SCATTER},
    {"all_reduce_test", RS_MEAS_PROG_HCCL, RS_MEAS_COLL_ALLREDUCE},
    {"all_gather_test", RS_MEAS_PROG_HCCL, RS_MEAS_COLL_ALLGATHER},
    {"broadcast_test", RS_MEAS_PROG_HCCL, RS_MEAS_COLL_BROADCAST},
    {"reduce_test", RS_MEAS_PROG_HCCL, RS_MEAS_COLL_REDUCE},
    {"reduce_scatter_test", RS_MEAS_PROG_HCCL, RS_MEAS_COLL_REDUCE_SCATTER},
    {"alltoall_test", RS_MEAS_PROG_HCCL, RS_MEAS_COLL_ALLTOALL},
    {"scatter_test", RS_MEAS_PROG_HCCL, RS_MEAS_COLL_SCATTER},
    {"osu_allreduce", RS_MEAS_PROG_OSU, RS_MEAS_COLL_ALLREDUCE},
    {"osu_bcast", RS_MEAS_PROG_OSU, RS_MEAS_COLL_BROADCAST},
    {"osu_reduce", RS_MEAS_PROG_OSU, RS_MEAS_COLL_REDUCE},
    {"osu_allgather", RS_MEAS_PROG_OSU, RS_MEAS_COLL_ALLGATHER},
    {"osu_reduce_scatter", RS_MEAS_PROG_OSU, RS_MEAS_COLL_REDUCE_SCATTER},
    {"osu_alltoall", RS_MEAS_PROG_OSU, RS_MEAS_COLL_ALLTOALL},
    {"osu_gather", RS_MEAS_PROG_OSU, RS_MEAS_COLL_GATHER},
    {"osu_scatter", RS_MEAS_PROG_OSU, RS_MEAS_COLL_SCATTER},
};

int rs_meas_program(const char *s, size_t len, rs_meas_prog_kind *kind, rs_meas_coll *coll, char *base, size_t baselen)
{
    /* the basename: a path's last component */
    for (size_t i = len; i > 0; i--)
        if (s[i - 1] == '/') {
            s += i;
            len -= i;
            break;
        }
    /* rccl-tests and some builds name the MPI flavour *_perf_mpi */
    size_t l = len;
    if (l > 4 && rs_meas_eq(s + l - 4, 4, "_mpi"))
        l -= 4;
    for (size_t i = 0; i < sizeof rs_programs / sizeof rs_programs[0]; i++)
        if (rs_meas_eq(s, l, rs_programs[i].name)) {
            *kind = rs_programs[i].kind;
            *coll = rs_programs[i].coll;
            if (base)
                rs_meas_copy(base, baselen, s, len);
            return 0;
        }
    return -1;
}

/* A count-valued option at tk[*i]: "-g 8" or "-g8" (getopt's two spellings) and "--np=8". */
static int rs_opt_int(const rs_meas_toks *tk, int *i, const char *opt, int *v)
{
    size_t ol = strlen(opt);
    const char *p = tk->p[*i];
    size_t l = tk->len[*i];
    if (!rs_meas_starts(p, l, opt))
        return 0;
    if (l == ol) {
        if (*i + 1 < tk->n && rs_meas_parse_int(tk->p[*i + 1], tk->len[*i + 1], v) == 0) {
            (*i)++;
            return 1;
        }
        return 0;
    }
    size_t skip = p[ol] == '=' ? ol + 1 : ol;
    if (opt[1] == '-' && p[ol] != '=')
        return 0; /* --npfoo is another option */
    return rs_meas_parse_int(p + skip, l - skip, v) == 0;
}

/* A word-valued option: "-d fp32". */
static int rs_opt_word(const rs_meas_toks *tk, int *i, const char *opt, char *out, size_t outlen)
{
    if (!rs_meas_eq(tk->p[*i], tk->len[*i], opt) || *i + 1 >= tk->n)
        return 0;
    (*i)++;
    rs_meas_copy(out, outlen, tk->p[*i], tk->len[*i]);
    return 1;
}

int rs_meas_command(const char *s, size_t len, rs_meas_prog_kind kind, rs_meas_cmd *cmd)
{
    rs_meas_toks tk;
    rs_meas_tokenize(s, len, &tk);
    int prog = -1;
    rs_meas_coll coll = RS_MEAS_COLL_NONE;
    char base[64] = "";
    for (int i = 0; i < tk.n && prog < 0; i++) {
        rs_meas_prog_kind k;
        rs_meas_coll cl;
        if (rs_meas_program(tk.p[i], tk.len[i], &k, &cl, base, sizeof base) == 0 && k == kind) {
            prog = i;
            coll = cl;
        }
    }
    if (prog < 0)
        return -1;
    memset(cmd, 0, sizeof *cmd);
    cmd->coll = coll;
    cmd->root = -1;
    snprintf(cmd->program, sizeof cmd->program, "%s", base);
    for (int i = 0; i < prog; i++) {
        int v;
        if (rs_opt_int(&tk, &i, "-np", &v) || rs_opt_int(&tk, &i, "--np", &v) || rs_opt_int(&tk, &i, "--ntasks", &v))
            cmd->nprocs = v;
        else if (rs_meas_starts(tk.p[i], tk.len[i], "-n") && !rs_meas_starts(tk.p[i], tk.len[i], "-np") &&
                 rs_opt_int(&tk, &i, "-n", &v))
            cmd->nprocs = v;
    }
    for (int i = prog + 1; i < tk.n; i++) {
        int v;
        char w[16];
        if (kind == RS_MEAS_PROG_NCCL && rs_opt_int(&tk, &i, "-t", &v))
            cmd->nthreads = v;
        else if (kind == RS_MEAS_PROG_NCCL && rs_opt_int(&tk, &i, "-g", &v))
            cmd->ngpus = v;
        else if (rs_opt_int(&tk, &i, "-r", &v))
            cmd->root = v;
        else if (rs_opt_word(&tk, &i, "-d", w, sizeof w) || rs_opt_word(&tk, &i, "--datatype", w, sizeof w)) {
            const char *canon;
            int size;
            if (rs_meas_dtype(w, strlen(w), &canon, &size) == 0)
                snprintf(cmd->dtype, sizeof cmd->dtype, "%s", canon);
        } else if (rs_opt_word(&tk, &i, "-o", w, sizeof w) || rs_opt_word(&tk, &i, "--op", w, sizeof w)) {
            const char *canon;
            if (rs_meas_op(w, strlen(w), &canon) == 0)
                snprintf(cmd->op, sizeof cmd->op, "%s", canon);
        }
    }
    return 0;
}

/* ---- the table ----------------------------------------------------------------------------- */

/* Room for one more of n elements of `size` bytes in p (cap allocated): p, or p grown; NULL with
 * "out of memory at WHAT N" at line. */
static void *rs_meas_room(rs_meas_ctx *c, void *p, size_t *cap, size_t n, size_t size, const char *what, int line)
{
    if (n < *cap)
        return p;
    size_t nc = *cap ? *cap * 2 : 16;
    void *q = realloc(p, nc * size);
    if (q == NULL) {
        rs_meas_fail(c, line, "out of memory at %s %zu", what, n + 1);
        return NULL;
    }
    *cap = nc;
    return q;
}

rs_meas_row *rs_meas_add_row(rs_meas_ctx *c, int line)
{
    rs_meas_table *t = c->t;
    rs_meas_row *rows = rs_meas_room(c, t->rows, &t->cap_rows, t->nrows, sizeof *rows, "row", line);
    if (rows == NULL)
        return NULL;
    t->rows = rows;
    rs_meas_row *r = memset(&rows[t->nrows++], 0, sizeof *r);
    r->count = -1;
    r->root = -1;
    r->algbw = r->busbw = r->min_us = r->max_us = NAN;
    r->wrong = -1;
    r->line = line;
    return r;
}

int rs_meas_line_trimmed(const rs_meas_lines *L, size_t k, const char **s, size_t *l)
{
    const char *b = L->text + L->off[k];
    size_t n = L->len[k];
    while (n && (b[n - 1] == ' ' || b[n - 1] == '\t'))
        n--;
    while (n && (*b == ' ' || *b == '\t')) {
        b++;
        n--;
    }
    *s = b;
    *l = n;
    return n > 0;
}

rs_meas_device *rs_meas_add_device(rs_meas_ctx *c, int line)
{
    rs_meas_table *t = c->t;
    rs_meas_device *d = rs_meas_room(c, t->devices, &t->cap_devices, t->ndevices, sizeof *d, "device line", line);
    if (d == NULL)
        return NULL;
    t->devices = d;
    d = memset(&d[t->ndevices++], 0, sizeof *d);
    d->line = line;
    return d;
}

rs_meas_link *rs_meas_add_link(rs_meas_ctx *c, int line)
{
    rs_meas_table *t = c->t;
    rs_meas_link *l = rs_meas_room(c, t->links, &t->cap_links, t->nlinks, sizeof *l, "link", line);
    if (l == NULL)
        return NULL;
    t->links = l;
    l = memset(&l[t->nlinks++], 0, sizeof *l);
    l->line = line;
    return l;
}

int rs_meas_settle_coll(rs_meas_ctx *c, rs_meas_coll found, int line, const char *where)
{
    rs_meas_coll hint = RS_MEAS_COLL_NONE;
    const char *h = c->opts ? c->opts->collective : NULL;
    if (h && rs_meas_coll_parse(h, &hint) != 0) {
        char q[80];
        return rs_meas_fail(c, line, "--collective '%s' is not a collective (allowed: %s)",
                            rs_meas_quote(q, sizeof q, h, strlen(h)), rs_meas_coll_allowed());
    }
    rs_meas_table *t = c->t;
    if (found != RS_MEAS_COLL_NONE && hint != RS_MEAS_COLL_NONE && found != hint)
        return rs_meas_fail(c, line, "--collective %s, but the file measures %s (%s) (allowed: --collective %s or none)",
                            rs_meas_coll_name(hint), rs_meas_coll_name(found), where, rs_meas_coll_name(found));
    if (found != RS_MEAS_COLL_NONE) {
        t->coll = found;
        snprintf(t->coll_from, sizeof t->coll_from, "%s", where);
    } else if (hint != RS_MEAS_COLL_NONE) {
        t->coll = hint;
        snprintf(t->coll_from, sizeof t->coll_from, "--collective");
    }
    return 0;
}

int rs_meas_settle_ranks(rs_meas_ctx *c, int found, int line, const char *where)
{
    int hint = c->opts ? c->opts->ranks : 0;
    rs_meas_table *t = c->t;
    if (found > 0 && hint > 0 && found != hint)
        return rs_meas_fail(c, line, "--ranks %d, but the file ran on %d ranks (%s) (allowed: --ranks %d or none)", hint,
                            found, where, found);
    if (found > 0) {
        t->ranks = found;
        snprintf(t->ranks_from, sizeof t->ranks_from, "%s", where);
    } else if (hint > 0) {
        t->ranks = hint;
        snprintf(t->ranks_from, sizeof t->ranks_from, "--ranks");
    }
    return 0;
}

int rs_meas_finish(rs_meas_ctx *c)
{
    rs_meas_table *t = c->t;
    char why[RS_MEAS_ERRLEN];
    for (size_t i = 0; i < t->nrows; i++)
        if (rs_meas_row_check(&t->rows[i], why, sizeof why) != 0)
            return rs_meas_fail(c, t->rows[i].line, "%s", why);
    return 0;
}

int rs_meas_begin(rs_meas_ctx *c, rs_meas_table *t, const char *name, const rs_meas_opts *opts, char *err,
                  size_t errlen, rs_meas_format fmt)
{
    memset(t, 0, sizeof *t);
    memset(c, 0, sizeof *c);
    if (name == NULL)
        name = "(input)";
    c->name = name;
    c->err = err;
    c->errlen = errlen;
    c->opts = opts;
    c->t = t;
    if (err && errlen)
        err[0] = '\0';
    t->format = fmt;
    t->iters = t->warmup_iters = -1;
    t->out_of_bounds = -1;
    t->avg_busbw = NAN;
    t->name = malloc(strlen(name) + 1);
    if (t->name == NULL)
        return rs_meas_fail(c, 1, "out of memory");
    memcpy(t->name, name, strlen(name) + 1);
    c->name = t->name;
    return 0;
}

int rs_meas_end(rs_meas_ctx *c, int rc)
{
    if (rc == 0 && !c->failed)
        return 0;
    if (!c->failed) /* a reader returned -1 without saying why: a bug, but never a silent one */
        rs_meas_fail(c, 1, "the file could not be read");
    /* the message names the file through c->name, which the table owns: copy it out first */
    rs_meas_free(c->t);
    return -1;
}

void rs_meas_free(rs_meas_table *t)
{
    if (t == NULL)
        return;
    free(t->name);
    free(t->rows);
    free(t->devices);
    free(t->links);
    memset(t, 0, sizeof *t);
    t->avg_busbw = NAN;
    t->out_of_bounds = -1;
    t->iters = t->warmup_iters = -1;
}

/* ---- the row checks ------------------------------------------------------------------------ */

/* Decimals to print a number of resolution res with (as the file printed it). */
static int rs_decimals(double res)
{
    if (!(res > 0))
        return 6;
    int d = (int)ceil(-log10(res) - 1e-9);
    return d < 0 ? 0 : d > 9 ? 9 : d;
}

int rs_meas_row_check(const rs_meas_row *r, char *why, size_t whylen)
{
    if (r->coll <= RS_MEAS_COLL_NONE || r->coll >= RS_MEAS_COLL_COUNT) {
        snprintf(why, whylen, "no collective for this row (allowed: %s)", rs_meas_coll_allowed());
        return -1;
    }
    int td = rs_decimals(r->time_res);
    if (!(r->time_us > 0) || !isfinite(r->time_us)) {
        snprintf(why, whylen, "time %.*f us is not a positive duration (allowed: > 0)", td, r->time_us);
        return -1;
    }
    /* Every printed number stands for an interval of one unit in its last place: the true
     * value lies within half a unit. A contradiction is one no pair of true values can explain. */
    double ht = r->time_res / 2, ha = r->algbw_res / 2, hb = r->busbw_res / 2;
    if (!isnan(r->min_us) || !isnan(r->max_us)) {
        double lo = isnan(r->min_us) ? r->time_us : r->min_us, hi = isnan(r->max_us) ? r->time_us : r->max_us;
        if (!(lo >= 0) || !(lo <= r->time_us + 2 * ht) || !(r->time_us <= hi + 2 * ht)) {
            snprintf(why, whylen, "min %.*f us <= avg %.*f us <= max %.*f us does not hold (allowed: min <= avg <= max)", td,
                     lo, td, r->time_us, td, hi);
            return -1;
        }
    }
    int ad = rs_decimals(r->algbw_res), bd = rs_decimals(r->busbw_res);
    if (!isnan(r->algbw)) {
        if (!(r->algbw >= 0) || !isfinite(r->algbw)) {
            snprintf(why, whylen, "algbw %.*f GB/s is not a bandwidth (allowed: >= 0)", ad, r->algbw);
            return -1;
        }
        if (r->nccl_bytes == 0 && r->bytes != 0) {
            snprintf(why, whylen, "algbw without the size it divides (%llu B as printed, the rank count unknown; "
                     "allowed: --ranks N)", (unsigned long long)r->bytes);
            return -1;
        }
        if (r->cpu_time)
            goto busbw; /* nccl-tests divides by the device time; the CPU time printed is another */
        double n = (double)r->nccl_bytes, tol = 1e-9 * (r->algbw > 1 ? r->algbw : 1);
        double lo = n / ((r->time_us + ht) * 1e3);
        double hi = r->time_us - ht > 0 ? (n + (double)r->bytes_slack) / ((r->time_us - ht) * 1e3) : INFINITY;
        if (r->algbw < lo - ha - tol || r->algbw > hi + ha + tol) {
            snprintf(why, whylen, "algbw %.*f GB/s contradicts size / time: %llu B in %.*f us is %.*f GB/s (allowed: "
                     "%.*f to %.*f GB/s within the printed precision)", ad, r->algbw, (unsigned long long)r->nccl_bytes,
                     td, r->time_us, ad + 1, n / (r->time_us * 1e3), ad, lo - ha, ad, hi + ha);
            return -1;
        }
    }
busbw:
    if (!isnan(r->busbw)) {
        double f = rs_meas_bus_factor(r->coll, r->ranks);
        if (isnan(r->algbw) || !isfinite(r->busbw) || !(r->busbw >= 0)) {
            snprintf(why, whylen, "busbw %.*f GB/s without an algbw to derive it from (allowed: both or neither)", bd,
                     r->busbw);
            return -1;
        }
        if (isnan(f)) {
            snprintf(why, whylen, "busbw of %s needs the rank count, which the file does not give (allowed: --ranks N)",
                     rs_meas_coll_name(r->coll));
            return -1;
        }
        double lo = (r->algbw - ha > 0 ? r->algbw - ha : 0) * f, hi = (r->algbw + ha) * f;
        double tol = 1e-9 * (r->busbw > 1 ? r->busbw : 1);
        if (r->busbw < lo - hb - tol || r->busbw > hi + hb + tol) {
            snprintf(why, whylen, "busbw %.*f GB/s is not algbw x %.4f (%s on %d ranks, REFERENCE.md): %.*f x %.4f = %.*f "
                     "GB/s (allowed: %.*f to %.*f GB/s within the printed precision)", bd, r->busbw, f,
                     rs_meas_coll_name(r->coll), r->ranks, ad, r->algbw, f, bd + 1, r->algbw * f, bd, lo - hb, bd, hi + hb);
            return -1;
        }
    }
    if (r->wrong < -1 || (r->wrong > 0 && r->check != RS_MEAS_CHECK_FAIL) ||
        (r->wrong == 0 && r->check != RS_MEAS_CHECK_PASS)) {
        snprintf(why, whylen, "#wrong %lld and the check's verdict disagree", (long long)r->wrong);
        return -1;
    }
    if (r->count >= 0 && r->dtype[0]) {
        const char *canon;
        int size;
        if (rs_meas_dtype(r->dtype, strlen(r->dtype), &canon, &size) != 0) {
            snprintf(why, whylen, "type '%s' is unknown (allowed: %s)", r->dtype, rs_meas_dtype_allowed());
            return -1;
        }
        int chunked = r->coll == RS_MEAS_COLL_REDUCE_SCATTER || r->coll == RS_MEAS_COLL_ALLGATHER ||
                      r->coll == RS_MEAS_COLL_ALLTOALL || r->coll == RS_MEAS_COLL_GATHER || r->coll == RS_MEAS_COLL_SCATTER;
        /* nccl-tests prints per-rank counts for the chunked collectives: count x type x ranks
         * is the size; for the others count x type is */
        double want = (double)r->count * size * (chunked ? (r->ranks > 0 ? r->ranks : 0) : 1);
        if ((!chunked || r->ranks > 0) && want != (double)r->nccl_bytes) {
            snprintf(why, whylen, "count %lld x %d B (%s)%s is %.0f B, not the size %llu B", (long long)r->count, size,
                     r->dtype, chunked ? " x ranks" : "", want, (unsigned long long)r->nccl_bytes);
            return -1;
        }
    }
    return 0;
}
