/* rs_meas_read.c — a measured table's format told from its content, and the dispatch to its reader; one format per file. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rs_meas_int.h"

/* Bigger than any benchmark's output by far; a guard against reading a disk image by mistake. */
#define RS_MEAS_MAX_FILE (64u << 20)

/* The line marks that name a text format. A file is one tool's output: a second tool's mark is
 * a mixed file (two outputs pasted together, or a log of several runs). */
typedef struct rs_mark {
    rs_meas_format fmt;
    int line;
} rs_mark;

static int rs_text_mark(const char *s, size_t len, rs_meas_format *fmt)
{
    size_t i = 0;
    while (i < len && (s[i] == ' ' || s[i] == '\t'))
        i++;
    s += i;
    len -= i;
    if (rs_meas_starts(s, len, "# nThread ") || rs_meas_starts(s, len, "rccl-tests: Version") ||
        rs_meas_starts(s, len, "# nccl-tests version ") || rs_meas_starts(s, len, "# Collective test starting: ")) {
        *fmt = RS_MEAS_FMT_NCCL_TEXT;
        return 1;
    }
    if (rs_meas_starts(s, len, "# OSU ")) {
        *fmt = RS_MEAS_FMT_OSU;
        return 1;
    }
    if (rs_meas_starts(s, len, "data_size(Bytes):")) {
        *fmt = RS_MEAS_FMT_HCCL;
        return 1;
    }
    return 0;
}

static int rs_detect(rs_meas_ctx *c, const char *text, size_t len, rs_meas_format *fmt)
{
    size_t i = 0;
    int line = 1;
    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) {
        line += text[i] == '\n';
        i++;
    }
    const char *allowed = "nccl-tests or rccl-tests output, nccl-tests -J JSON, HCCL Test output, an OSU collective "
                          "latency table, ringsim run --json, ringsim bringup --json, measured CSV";
    if (i == len)
        return rs_meas_fail(c, line, "the file is empty (allowed: %s)", allowed);
    if (text[i] == '{') {
        *fmt = RS_MEAS_FMT_NCCL_JSON; /* rs_meas_json_text tells the three JSON formats apart */
        return 0;
    }
    /* measured CSV: its first line that is no '#' comment names the columns */
    for (size_t k = 0, b = 0; k <= len; k++) {
        if (k < len && text[k] != '\n')
            continue;
        size_t x = b, y = k;
        while (x < y && (text[x] == ' ' || text[x] == '\t' || text[x] == '\r'))
            x++;
        while (y > x && (text[y - 1] == ' ' || text[y - 1] == '\t' || text[y - 1] == '\r'))
            y--;
        b = k + 1;
        if (x == y || text[x] == '#')
            continue;
        if (rs_meas_csv_header_like(text + x, y - x)) {
            *fmt = RS_MEAS_FMT_CSV;
            return 0;
        }
        break;
    }
    rs_mark first = {RS_MEAS_FMT_COUNT, 0};
    size_t start = 0;
    line = 1;
    for (size_t k = 0; k <= len; k++) {
        if (k < len && text[k] != '\n')
            continue;
        rs_meas_format f;
        if (rs_text_mark(text + start, k - start, &f)) {
            /* nccl-tests' own first lines come in any order; only another tool's mark mixes */
            if (first.line == 0) {
                first.fmt = f;
                first.line = line;
            } else if (f != first.fmt) {
                return rs_meas_fail(c, line, "%s output after %s output (line %d): two tools' outputs in one file "
                                    "(allowed: one file per run)", rs_meas_format_name(f),
                                    rs_meas_format_name(first.fmt), first.line);
            }
        }
        start = k + 1;
        line++;
    }
    if (first.line == 0) {
        /* a table cut before its header, or some other text: name what it lacks */
        return rs_meas_fail(c, 1, "not a measured table this reader knows: no '# nThread' (nccl-tests), '# OSU ...' "
                            "title, 'data_size(Bytes):' header (HCCL Test) or CSV header with time_us (allowed: %s)",
                            allowed);
    }
    *fmt = first.fmt;
    return 0;
}

static int rs_dispatch(rs_meas_ctx *c, rs_meas_format fmt, const char *text, size_t len)
{
    c->t->format = fmt;
    switch (fmt) {
    case RS_MEAS_FMT_NCCL_TEXT:
        return rs_meas_nccl_text(c, text, len);
    case RS_MEAS_FMT_HCCL:
        return rs_meas_hccl_text(c, text, len);
    case RS_MEAS_FMT_OSU:
        return rs_meas_osu_text(c, text, len);
    case RS_MEAS_FMT_CSV:
        return rs_meas_csv_text(c, text, len);
    default:
        return rs_meas_json_text(c, text, len);
    }
}

int rs_meas_read_buffer(const char *text, size_t len, const char *name, const rs_meas_opts *opts, rs_meas_table *t,
                        char *err, size_t errlen)
{
    rs_meas_ctx c;
    if (rs_meas_begin(&c, t, name, opts, err, errlen, RS_MEAS_FMT_NCCL_TEXT) != 0)
        return rs_meas_end(&c, -1);
    rs_meas_format fmt = RS_MEAS_FMT_NCCL_TEXT;
    if (rs_detect(&c, text, len, &fmt) != 0)
        return rs_meas_end(&c, -1);
    return rs_meas_end(&c, rs_dispatch(&c, fmt, text, len));
}

#define RS_MEAS_DIRECT(fn, fmt, reader)                                                                           \
    int fn(const char *text, size_t len, const char *name, const rs_meas_opts *opts, rs_meas_table *t, char *err, \
           size_t errlen)                                                                                         \
    {                                                                                                             \
        rs_meas_ctx c;                                                                                            \
        if (rs_meas_begin(&c, t, name, opts, err, errlen, fmt) != 0)                                              \
            return rs_meas_end(&c, -1);                                                                           \
        return rs_meas_end(&c, reader(&c, text, len));                                                            \
    }
RS_MEAS_DIRECT(rs_meas_read_nccl_text, RS_MEAS_FMT_NCCL_TEXT, rs_meas_nccl_text)
RS_MEAS_DIRECT(rs_meas_read_hccl, RS_MEAS_FMT_HCCL, rs_meas_hccl_text)
RS_MEAS_DIRECT(rs_meas_read_osu, RS_MEAS_FMT_OSU, rs_meas_osu_text)
RS_MEAS_DIRECT(rs_meas_read_json, RS_MEAS_FMT_NCCL_JSON, rs_meas_json_text)
RS_MEAS_DIRECT(rs_meas_read_csv, RS_MEAS_FMT_CSV, rs_meas_csv_text)

int rs_meas_read(const char *path, const rs_meas_opts *opts, rs_meas_table *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    /* opened without blocking and looked at before reading: a FIFO would block the open itself,
     * a directory reads nothing */
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    struct stat sb;
    const char *why = NULL;
    FILE *f = NULL;
    if (fd < 0)
        why = strerror(errno);
    else if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
        why = "not a regular file (allowed: a file of the tool's output)";
    else if ((uint64_t)sb.st_size > RS_MEAS_MAX_FILE)
        why = "larger than 64 MiB: not a benchmark's output";
    else if ((f = fdopen(fd, "rb")) == NULL)
        why = strerror(errno);
    if (why) {
        if (fd >= 0)
            close(fd);
        snprintf(err, errlen, "%s:1: cannot read: %s", path, why);
        return -1;
    }
    size_t cap = (size_t)sb.st_size + 1, used = 0, got;
    char *buf = malloc(cap);
    while (buf && (got = fread(buf + used, 1, cap - used, f)) > 0) {
        used += got;
        if (used == cap) {
            /* the file grew while read: take what fits the guard */
            char *nb = cap < RS_MEAS_MAX_FILE ? realloc(buf, cap * 2) : NULL;
            if (nb == NULL)
                break;
            buf = nb;
            cap *= 2;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (buf == NULL || bad) {
        free(buf);
        snprintf(err, errlen, "%s:1: cannot read: %s", path, buf ? "read error" : "out of memory");
        return -1;
    }
    int rc = rs_meas_read_buffer(buf, used, path, opts, t, err, errlen);
    free(buf);
    return rc;
}
