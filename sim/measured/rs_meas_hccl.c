/* rs_meas_hccl.c — the reader of Huawei HCCL Test output (hccl_test's all_reduce_test, ...: data_size | aveg_time | alg_bandwidth | check_result). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rs_meas_int.h"

/*
 * The layout, as hccl_test's HcclTest::init_hcclComm and HcclOpBaseTest::print_execution_time
 * print it (CANN 8.x, tools/hccl_test/common/src):
 *
 *   the minbytes is 8192, maxbytes is 67108864, iters is 20, warmup_iters is 10
 *   data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:
 *   8192              | 33.60          | 0.24381              | success
 *
 * "%-17llu | %-14.2f | %-20.5f | success|failed|NULL": the time has 2 decimals, the bandwidth 5.
 * A rank whose check fails prints "rank id N, check result failed, <the row> | failed" itself.
 * data_size is the whole buffer (allgather: the gathered one), as nccl-tests' size; alg_bandwidth
 * is the bytes moved over the time, where each rank's share is rounded up to whole elements, so
 * it may exceed data_size / time by up to (ranks x element size) bytes' worth.
 * The output names neither the collective nor the rank count: they come from a command line kept
 * above it ("mpirun -n 8 ./bin/all_reduce_test -b 8K -e 64M -f 2 -d fp32 -o sum -p 8"), or from
 * --collective and --ranks.
 */

typedef struct hccl_fail {
    int rank, line;
    uint64_t size;
} hccl_fail;

typedef struct hccl_state {
    int cmd_line, head_line, prev_line, in_series;
    uint64_t prev_size;
    rs_meas_cmd cmd;
    hccl_fail fails[64];
    int nfails;
} hccl_state;

/* Splits "a | b | c | d" into 4 trimmed fields; the number found (up to 8). */
static int hccl_fields(const char *s, size_t len, const char **p, size_t *l)
{
    int n = 0;
    size_t b = 0;
    for (size_t i = 0; i <= len && n < 8; i++) {
        if (i < len && s[i] != '|')
            continue;
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

/* The four values of a row (or of a rank's failure line after its prefix). */
static int hccl_values(rs_meas_ctx *c, const char *s, size_t len, int line, uint64_t *size, double *tm, double *tres,
                       double *bw, double *bres, rs_meas_check *check)
{
    const char *p[8];
    size_t l[8];
    char q[96];
    int n = hccl_fields(s, len, p, l);
    if (n != 4)
        return rs_meas_fail(c, line, "'%s' has %d fields, the header has 4 (data_size | aveg_time | alg_bandwidth | "
                            "check_result)", rs_meas_quote(q, sizeof q, s, len), n);
    if (rs_meas_parse_u64(p[0], l[0], size) != 0)
        return rs_meas_fail(c, line, "data_size '%s' is not a whole number of bytes", rs_meas_quote(q, sizeof q, p[0], l[0]));
    if (rs_meas_parse_num(p[1], l[1], 0, tm, tres) != 0)
        return rs_meas_fail(c, line, "aveg_time '%s' is not a number of microseconds", rs_meas_quote(q, sizeof q, p[1], l[1]));
    if (rs_meas_parse_num(p[2], l[2], 0, bw, bres) != 0)
        return rs_meas_fail(c, line, "alg_bandwidth '%s' is not a number of GB/s", rs_meas_quote(q, sizeof q, p[2], l[2]));
    if (rs_meas_eq(p[3], l[3], "success"))
        *check = RS_MEAS_CHECK_PASS;
    else if (rs_meas_eq(p[3], l[3], "failed"))
        *check = RS_MEAS_CHECK_FAIL;
    else if (rs_meas_eq(p[3], l[3], "NULL"))
        *check = RS_MEAS_CHECK_NONE;
    else
        return rs_meas_fail(c, line, "check_result '%s' (allowed: success, failed, NULL)", rs_meas_quote(q, sizeof q, p[3], l[3]));
    return 0;
}

static int hccl_header(rs_meas_ctx *c, hccl_state *st, const char *s, size_t len, int line)
{
    static const char *const names[4] = {"data_size(Bytes):", "aveg_time(us):", "alg_bandwidth(GB/s):", "check_result:"};
    const char *p[8];
    size_t l[8];
    char q[96];
    if (st->head_line)
        return rs_meas_fail(c, line, "a second header (the first at line %d) (allowed: one run per file)", st->head_line);
    int n = hccl_fields(s, len, p, l);
    for (int i = 0; i < n || i < 4; i++)
        if (i >= 4 || i >= n || !rs_meas_eq(p[i], l[i], names[i]))
            return rs_meas_fail(c, line, "unknown column '%s' where '%s' belongs (allowed: data_size(Bytes): | "
                                "aveg_time(us): | alg_bandwidth(GB/s): | check_result:)",
                                i < n ? rs_meas_quote(q, sizeof q, p[i], l[i]) : "(none)", i < 4 ? names[i] : "nothing");
    st->head_line = line;
    return 0;
}

static int hccl_row(rs_meas_ctx *c, hccl_state *st, const char *s, size_t len, int line, int last_open)
{
    char q[96];
    if (!st->head_line)
        return rs_meas_fail(c, line, "'%s' before the header (expected: 'data_size(Bytes): | aveg_time(us): | ...')",
                            rs_meas_quote(q, sizeof q, s, len));
    if (last_open)
        return rs_meas_fail(c, line, "the file ends inside this row, with no end of line (truncated?)");
    uint64_t size;
    double tm, tres, bw, bres;
    rs_meas_check check;
    if (hccl_values(c, s, len, line, &size, &tm, &tres, &bw, &bres, &check) != 0)
        return -1;
    if (st->in_series && size <= st->prev_size)
        return rs_meas_fail(c, line, "data_size %llu B after %llu B at line %d: sizes must rise",
                            (unsigned long long)size, (unsigned long long)st->prev_size, st->prev_line);
    st->in_series = 1;
    st->prev_size = size;
    st->prev_line = line;
    rs_meas_row *r = rs_meas_add_row(c, line);
    if (r == NULL)
        return -1;
    r->bytes = r->nccl_bytes = size;
    r->time_us = tm;
    r->time_res = tres;
    r->algbw = bw;
    r->algbw_res = bres;
    r->check = check;
    return 0;
}

/* "rank id 3, check result failed, 8192 | 33.60 | 0.24381 | failed" */
static int hccl_rank_fail(rs_meas_ctx *c, hccl_state *st, const char *s, size_t len, int line)
{
    char q[96];
    const char *comma = memchr(s, ',', len);
    int rank;
    const char *rest = comma ? comma + 1 : NULL;
    if (comma == NULL || comma < s + 8 || comma + 2 > s + len ||
        rs_meas_parse_int(s + 8, (size_t)(comma - s - 8), &rank) != 0 || rank < 0 ||
        !rs_meas_starts(rest + 1, len - (size_t)(rest + 1 - s), "check result failed,"))
        return rs_meas_fail(c, line, "'%s' is not 'rank id N, check result failed, <row>'", rs_meas_quote(q, sizeof q, s, len));
    rest += 1 + 20;
    uint64_t size;
    double tm, tres, bw, bres;
    rs_meas_check check;
    if (hccl_values(c, rest, len - (size_t)(rest - s), line, &size, &tm, &tres, &bw, &bres, &check) != 0)
        return -1;
    if (check != RS_MEAS_CHECK_FAIL)
        return rs_meas_fail(c, line, "a rank's failure line whose check_result is not 'failed'");
    if (st->nfails == (int)(sizeof st->fails / sizeof st->fails[0]))
        return rs_meas_fail(c, line, "more than %d ranks' failure lines", st->nfails);
    st->fails[st->nfails++] = (hccl_fail){rank, line, size};
    return 0;
}

int rs_meas_hccl_text(rs_meas_ctx *c, const char *text, size_t len)
{
    rs_meas_table *t = c->t;
    rs_meas_lines L;
    if (rs_meas_lines_split(c, text, len, &L) != 0)
        return -1;
    snprintf(t->tool, sizeof t->tool, "HCCL Test");
    hccl_state st;
    memset(&st, 0, sizeof st);
    int rc = 0;
    char q[96];
    for (size_t k = 0; k < L.n && rc == 0; k++) {
        const char *s;
        size_t l;
        int line = (int)k + 1;
        if (!rs_meas_line_trimmed(&L, k, &s, &l))
            continue;
        rs_meas_cmd cmd;
        if (rs_meas_starts(s, l, "data_size(Bytes):")) {
            rc = hccl_header(c, &st, s, l, line);
        } else if (rs_meas_starts(s, l, "rank id ")) {
            rc = hccl_rank_fail(c, &st, s, l, line);
        } else if (rs_meas_starts(s, l, "the minbytes is ")) {
            unsigned long long lo, hi;
            int it, wu, used = 0;
            char buf[160];
            rs_meas_copy(buf, sizeof buf, s, l);
            if (st.head_line || sscanf(buf, "the minbytes is %llu, maxbytes is %llu, iters is %d, warmup_iters is %d%n",
                                       &lo, &hi, &it, &wu, &used) != 4 || (size_t)used != l) {
                rc = rs_meas_fail(c, line, "'%s' is not 'the minbytes is N, maxbytes is N, iters is N, warmup_iters is N' "
                                  "before the header", rs_meas_quote(q, sizeof q, s, l));
            } else {
                t->minbytes = lo;
                t->maxbytes = hi;
                t->iters = it;
                t->warmup_iters = wu;
            }
        } else if (rs_meas_starts(s, l, "Warning: The calculation result overflows") ||
                   rs_meas_starts(s, l, "Warning: The initdata overflows") ||
                   rs_meas_starts(s, l, "Warning: The -o,--op <sum/prod/min/max> option does not take effect")) {
            rs_meas_note(t, "%.100s", rs_meas_quote(q, sizeof q, s, l));
        } else if (!st.head_line && !st.cmd_line && rs_meas_command(s, l, RS_MEAS_PROG_HCCL, &cmd) == 0) {
            st.cmd = cmd;
            st.cmd_line = line;
            rs_meas_copy(t->command, sizeof t->command, s, l);
            snprintf(t->program, sizeof t->program, "%s", cmd.program);
        } else if (st.head_line && ((s[0] >= '0' && s[0] <= '9') || memchr(s, '|', l))) {
            rc = hccl_row(c, &st, s, l, line, L.last_open && k + 1 == L.n);
        } else {
            rc = rs_meas_fail(c, line, "'%s' is no line of HCCL Test output (expected: the command line, 'the minbytes "
                              "is ...', the header 'data_size(Bytes): | ...' and rows)", rs_meas_quote(q, sizeof q, s, l));
        }
    }
    int end = L.n ? (int)L.n : 1;
    rs_meas_lines_free(&L);
    if (rc != 0)
        return -1;
    if (!st.head_line)
        return rs_meas_fail(c, end, "the file ends before the header 'data_size(Bytes): | aveg_time(us): | ...' "
                            "(truncated?)");
    if (t->nrows == 0)
        return rs_meas_fail(c, end, "the file ends before any row (truncated? the header is at line %d)", st.head_line);

    char where[96];
    snprintf(where, sizeof where, "command line %s, line %d", st.cmd.program, st.cmd_line);
    if (rs_meas_settle_coll(c, st.cmd_line ? st.cmd.coll : RS_MEAS_COLL_NONE, st.cmd_line ? st.cmd_line : st.head_line,
                            where) != 0)
        return -1;
    if (t->coll == RS_MEAS_COLL_NONE)
        return rs_meas_fail(c, st.head_line, "which collective? HCCL Test does not print it (allowed: --collective NAME, "
                            "or the command line, e.g. 'mpirun -n 8 ./bin/all_reduce_test ...', kept above the output)");
    if (t->coll == RS_MEAS_COLL_ALLTOALL || t->coll == RS_MEAS_COLL_SCATTER || t->coll == RS_MEAS_COLL_SENDRECV ||
        t->coll == RS_MEAS_COLL_GATHER)
        return rs_meas_fail(c, st.cmd_line ? st.cmd_line : st.head_line, "HCCL Test's %s bandwidth is not read here "
                            "(allowed: allreduce, broadcast, reduce, reduce_scatter, allgather)", rs_meas_coll_name(t->coll));
    snprintf(where, sizeof where, "mpirun -n, line %d", st.cmd_line);
    if (rs_meas_settle_ranks(c, st.cmd.nprocs, st.cmd_line, where) != 0)
        return -1;
    if (st.cmd.dtype[0])
        snprintf(t->dtype, sizeof t->dtype, "%s", st.cmd.dtype);
    const char *canon;
    int ts = 8;
    if (t->dtype[0])
        rs_meas_dtype(t->dtype, strlen(t->dtype), &canon, &ts);
    int chunked = t->coll == RS_MEAS_COLL_ALLGATHER || t->coll == RS_MEAS_COLL_REDUCE_SCATTER;
    int rooted = t->coll == RS_MEAS_COLL_BROADCAST || t->coll == RS_MEAS_COLL_REDUCE;
    /* without the rank count, allow what the largest server HCCL knows could round up */
    uint64_t slack = (uint64_t)ts * (chunked ? (t->ranks > 0 ? (uint64_t)t->ranks : 65536) : 1);
    for (size_t i = 0; i < t->nrows; i++) {
        rs_meas_row *r = &t->rows[i];
        r->coll = t->coll;
        r->ranks = t->ranks;
        r->bytes_slack = slack;
        snprintf(r->dtype, sizeof r->dtype, "%s", t->dtype);
        if (st.cmd_line) {
            snprintf(r->op, sizeof r->op, "%s", t->coll == RS_MEAS_COLL_ALLGATHER || t->coll == RS_MEAS_COLL_BROADCAST
                                                    ? "none" : st.cmd.op[0] ? st.cmd.op : "sum");
            r->root = rooted ? (st.cmd.root >= 0 ? st.cmd.root : 0) : -1;
        }
    }
    for (int f = 0; f < st.nfails; f++) {
        size_t i = 0;
        while (i < t->nrows && t->rows[i].bytes != st.fails[f].size)
            i++;
        if (i == t->nrows)
            return rs_meas_fail(c, st.fails[f].line, "rank %d reports a failed check at data_size %llu B, which no row "
                                "has", st.fails[f].rank, (unsigned long long)st.fails[f].size);
        t->rows[i].check = RS_MEAS_CHECK_FAIL;
    }
    return rs_meas_finish(c);
}
