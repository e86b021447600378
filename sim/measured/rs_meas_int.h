/* rs_meas_int.h — what the readers of measured tables share: located errors, lines and tokens, numbers with their printed precision, names of types, ops and programs. */
#ifndef RS_MEAS_INT_H
#define RS_MEAS_INT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "rs_measured.h"

/* One read in progress: where messages go and what the user said. The first failure wins: a
 * reader returns at once, so there is never more than one message. */
typedef struct rs_meas_ctx {
    const char *name;
    char *err;
    size_t errlen;
    const rs_meas_opts *opts;
    rs_meas_table *t;
    int failed;
} rs_meas_ctx;

/* Writes "NAME:LINE: message" and returns -1. */
int rs_meas_fail(rs_meas_ctx *c, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* The text split into lines, in place: line k (1-based) is text[off[k-1] .. off[k-1]+len[k-1]),
 * without its '\n' and a trailing '\r'. `last_open` is 1 when the last line has no '\n' (a file
 * cut mid-line ends so). */
typedef struct rs_meas_lines {
    const char *text;
    size_t n;
    size_t *off;
    size_t *len;
    int last_open;
} rs_meas_lines;

/* Splits `text`; refuses NUL bytes (binary data) with their line. 0 or -1 (message written). */
int rs_meas_lines_split(rs_meas_ctx *c, const char *text, size_t len, rs_meas_lines *L);
void rs_meas_lines_free(rs_meas_lines *L);
/* Line k (0-based) of L without its leading and trailing blanks (space, tab): *s, *l. 0 when
 * nothing is left (a blank line), else 1. */
int rs_meas_line_trimmed(const rs_meas_lines *L, size_t k, const char **s, size_t *l);

/* Whitespace-separated tokens of one line (space, tab, and the other C isspace bytes). */
#define RS_MEAS_MAXTOK 64
typedef struct rs_meas_toks {
    int n;
    int more; /* there were more than RS_MEAS_MAXTOK */
    const char *p[RS_MEAS_MAXTOK];
    size_t len[RS_MEAS_MAXTOK];
} rs_meas_toks;
void rs_meas_tokenize(const char *s, size_t len, rs_meas_toks *tk);
int rs_meas_tok_is(const rs_meas_toks *tk, int i, const char *word);

/* Text for a message: printable ASCII as it is, anything else as \xNN, cut with "..." after
 * about 48 characters. Returns out. */
const char *rs_meas_quote(char *out, size_t outlen, const char *s, size_t len);

/* A number as printed: decimal digits, optional fraction and exponent (no sign unless
 * `allow_sign`, no inf/nan/hex). *res gets one unit in its last printed place (0.01 for
 * "12.34", 0.1e4 for "1.2e+04", 1 for "12"). 0, or -1 when the token is not such a number. */
int rs_meas_parse_num(const char *s, size_t len, int allow_sign, double *v, double *res);
/* A whole non-negative number of digits only (no sign, no fraction), up to 2^63. 0 or -1. */
int rs_meas_parse_u64(const char *s, size_t len, uint64_t *v);
/* A whole number with an optional '-' that fits an int. 0 or -1. */
int rs_meas_parse_int(const char *s, size_t len, int *v);

/* Element types: nccl-tests' current names (what rows hold) and the tools' other spellings.
 * Sets *canon (static) and *size (bytes) and returns 0, or -1. */
int rs_meas_dtype(const char *s, size_t len, const char **canon, int *size);
/* The dtype spellings taken, for "(allowed: ...)". */
const char *rs_meas_dtype_allowed(void);
/* Reduction ops: sum prod max min avg mulsum, and "none" where a collective has none. */
int rs_meas_op(const char *s, size_t len, const char **canon);

/* A benchmark binary's name (a path or not; nccl-tests *_perf[_mpi], HCCL Test *_test, OSU
 * osu_*) to its tool and collective. 0, or -1 when it is none of them. */
typedef enum rs_meas_prog_kind { RS_MEAS_PROG_NCCL, RS_MEAS_PROG_HCCL, RS_MEAS_PROG_OSU } rs_meas_prog_kind;
int rs_meas_program(const char *s, size_t len, rs_meas_prog_kind *kind, rs_meas_coll *coll, char *base,
                    size_t baselen);

/* A command line a user kept above the output ("$ mpirun -np 8 ./all_reduce_perf -g 1 ..."):
 * the program, the process count of mpirun/srun (-n, -np, --np, -N is not it), and the tool's
 * own -t/-g (nccl-tests threads, GPUs), -d, -o, -r. 0 when the line names a known program of
 * `kind`, -1 when not (nothing set). */
typedef struct rs_meas_cmd {
    rs_meas_coll coll;
    char program[64];
    int nprocs;   /* 0: not given */
    int nthreads; /* -t, 0 */
    int ngpus;    /* -g, 0 */
    char dtype[16], op[8];
    int root;     /* -r, -1 */
} rs_meas_cmd;
int rs_meas_command(const char *s, size_t len, rs_meas_prog_kind kind, rs_meas_cmd *cmd);

/* Table building. Each returns NULL after a message when memory runs out. */
rs_meas_row *rs_meas_add_row(rs_meas_ctx *c, int line);
rs_meas_device *rs_meas_add_device(rs_meas_ctx *c, int line);
rs_meas_link *rs_meas_add_link(rs_meas_ctx *c, int line);

/* Takes the user's --collective against what the file says (found: from the file, NONE if it
 * does not say; `where` says where, for messages and coll_from). Sets t->coll. 0 or -1. */
int rs_meas_settle_coll(rs_meas_ctx *c, rs_meas_coll found, int line, const char *where);
/* The same for the rank count (found 0: the file does not say). */
int rs_meas_settle_ranks(rs_meas_ctx *c, int found, int line, const char *where);

/* The end of every read: checks every row (rs_meas_row_check) naming its line, and that
 * there is at least one. 0 or -1. */
int rs_meas_finish(rs_meas_ctx *c);

/* Copies at most outlen-1 bytes of s[0..len) (for fixed fields) and returns out. */
char *rs_meas_copy(char *out, size_t outlen, const char *s, size_t len);
/* Appends "; text" (or text when empty) to t->notes, as far as it fits. */
void rs_meas_note(rs_meas_table *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Starts a read: empties *t, names it, sets up the context. -1 when memory runs out. */
int rs_meas_begin(rs_meas_ctx *c, rs_meas_table *t, const char *name, const rs_meas_opts *opts, char *err,
                  size_t errlen, rs_meas_format fmt);
/* Ends a read: on failure frees the table and returns -1, else 0. */
int rs_meas_end(rs_meas_ctx *c, int rc);

/* nccl-tests' conventions, shared by its text and JSON readers (rs_meas_nccl.c). */
typedef struct rs_meas_sweep {
    int in_series, prev_line, root;
    uint64_t first_size, prev_size;
    char type[16], op[8];
} rs_meas_sweep;
/* Sizes rise within a sweep of one type, redop and root; a repeat of the first size starts again. */
int rs_meas_nccl_sweep(rs_meas_ctx *c, rs_meas_sweep *sw, uint64_t size, const char *type, const char *op, int root,
                       int line);
/* The footer's out-of-bounds count against the rows' #wrong. */
int rs_meas_nccl_oob(rs_meas_ctx *c, long n, int line);
/* After the rows: the collective from the columns when nothing named it (messages at `line`),
 * the rank count from busbw / algbw when nothing gave it, both into every row, redop and root
 * against the collective, and the row checks. */
int rs_meas_nccl_complete(rs_meas_ctx *c, int line);

/* The readers on a context already begun (rs_meas_read_buffer dispatches to them). */
int rs_meas_nccl_text(rs_meas_ctx *c, const char *text, size_t len);
int rs_meas_hccl_text(rs_meas_ctx *c, const char *text, size_t len);
int rs_meas_osu_text(rs_meas_ctx *c, const char *text, size_t len);
int rs_meas_json_text(rs_meas_ctx *c, const char *text, size_t len);
int rs_meas_csv_text(rs_meas_ctx *c, const char *text, size_t len);
/* 1 when a line looks like a measured CSV header: comma-separated names, one of them time_us. */
int rs_meas_csv_header_like(const char *s, size_t len);

/* Case-sensitive prefix and equality tests on a counted string. */
int rs_meas_starts(const char *s, size_t len, const char *prefix);
int rs_meas_eq(const char *s, size_t len, const char *word);

#endif
