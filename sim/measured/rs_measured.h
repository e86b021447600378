/* rs_measured.h — measured collective-benchmark tables (nccl-tests, rccl-tests, HCCL Test, OSU, ringsim's own JSON) read into one normalized table. */
#ifndef RS_MEASURED_H
#define RS_MEASURED_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * What calibration and comparison consume: the rows users already have, from the tools they
 * already run. One reader per format, each strict: a file that is truncated, mixes two tools'
 * outputs, has a column the reader does not know or a row whose numbers contradict each other
 * (algbw not size/time, busbw not algbw x the collective's factor) is refused with exactly one
 * message "FILE:LINE: what is wrong (what is allowed or expected)". No row is ever skipped.
 */

/** Longest message a reader writes (the buffer should be at least this long). */
#define RS_MEAS_ERRLEN 512

/** The formats read. The reader is chosen from the content, never from the file's name. */
typedef enum rs_meas_format {
    RS_MEAS_FMT_NCCL_TEXT = 0, /**< nccl-tests / rccl-tests stdout */
    RS_MEAS_FMT_NCCL_JSON,     /**< nccl-tests -J FILE.json (JSON versions 1 to 3, nccl-tests >= 2.17) */
    RS_MEAS_FMT_HCCL,          /**< Huawei HCCL Test (hccl_test: data_size | aveg_time | alg_bandwidth | check_result) */
    RS_MEAS_FMT_OSU,           /**< OSU micro-benchmarks' blocking collective latency tables */
    RS_MEAS_FMT_RINGSIM_RUN,   /**< ringsim run --json (every backend) */
    RS_MEAS_FMT_RINGSIM_BRINGUP, /**< ringsim bringup --json: ring allreduce rows and per-link measurements */
    RS_MEAS_FMT_CSV,           /**< measured CSV: named columns (collective, size_bytes, time_us, ...), '#' provenance */
    RS_MEAS_FMT_COUNT
} rs_meas_format;

/** Collectives the tools measure. The first five are the engine's (ncl_coll names). */
typedef enum rs_meas_coll {
    RS_MEAS_COLL_NONE = 0, /**< not known (yet) */
    RS_MEAS_COLL_ALLREDUCE,
    RS_MEAS_COLL_BROADCAST,
    RS_MEAS_COLL_REDUCE,
    RS_MEAS_COLL_REDUCE_SCATTER,
    RS_MEAS_COLL_ALLGATHER,
    RS_MEAS_COLL_ALLTOALL,
    RS_MEAS_COLL_SENDRECV,
    RS_MEAS_COLL_GATHER,
    RS_MEAS_COLL_SCATTER,
    RS_MEAS_COLL_COUNT
} rs_meas_coll;

/** Where the result lands. nccl-tests times both; OSU, HCCL Test and bring-up say nothing. */
typedef enum rs_meas_place {
    RS_MEAS_PLACE_NONE = 0, /**< the tool does not say */
    RS_MEAS_PLACE_OUT,      /**< out of place (send != recv) */
    RS_MEAS_PLACE_IN        /**< in place */
} rs_meas_place;

/** A row's correctness check as the tool reported it. */
typedef enum rs_meas_check {
    RS_MEAS_CHECK_NONE = 0, /**< not checked (nccl-tests N/A, HCCL Test NULL, OSU without -c) */
    RS_MEAS_CHECK_PASS,     /**< #wrong 0, success, Pass */
    RS_MEAS_CHECK_FAIL      /**< #wrong > 0, failed, Fail */
} rs_meas_check;

/** One measured row: one size of one collective in one placement. */
typedef struct rs_meas_row {
    rs_meas_coll coll;
    int ranks;           /**< 0: the file does not say (OSU without --ranks) */
    uint64_t bytes;      /**< the size as the tool prints it (OSU: per rank and per peer) */
    uint64_t nccl_bytes; /**< n of REFERENCE.md, the nccl-tests `size`: the buffer of allreduce,
                              broadcast, reduce, sendrecv; the whole gathered/scattered buffer of
                              allgather, reduce_scatter, alltoall, gather, scatter. 0 when it needs
                              the rank count and that is unknown */
    uint64_t bytes_slack; /**< bytes the tool may have moved beyond nccl_bytes (HCCL Test rounds each
                               rank's share up to whole elements); 0 */
    int64_t count;       /**< elements, as printed (nccl-tests: per rank for allgather...); -1: none */
    char dtype[16];      /**< nccl-tests' spelling (int8, half, float, bfloat16, ...); "" unknown */
    char op[8];          /**< sum, prod, max, min, avg, mulsum; "none" where no reduction; "" unknown */
    int root;            /**< -1: none or unknown */
    rs_meas_place place;
    double time_us;      /**< the tool's time: nccl-tests' average, OSU's Avg Latency, HCCL's aveg_time */
    double algbw;        /**< GB/s (1e9 B/s), NAN when the file has none */
    double busbw;        /**< GB/s, NAN when the file has none */
    int64_t wrong;       /**< #wrong elements; -1 when not reported as a number */
    rs_meas_check check;
    double min_us, max_us; /**< OSU -f (Min/Max Latency); NAN when not printed */
    long iters;          /**< iterations behind time_us when the row says (OSU -f, nccl-tests -J); 0 */
    int cpu_time;        /**< 1: time_us is the host's CPU time (nccl-tests -C 1), while algbw and
                              busbw come from the device time the file does not print: algbw is
                              then not checked against size / time */
    /* The resolution the file printed each number with (one unit in its last place; 0 for full
     * precision): how far a number may be from the exact value it was rounded from, which is
     * the tolerance of every consistency check. */
    double time_res, algbw_res, busbw_res;
    int line;            /**< the file's line the row is on (JSON: where its object starts) */
} rs_meas_row;

/** One link of a bring-up (ringsim bringup --json): a point-to-point measurement, not a collective. */
typedef struct rs_meas_link {
    int src, dst;
    char verdict[16];               /**< good, slow, dead, corrupting, miswired, error */
    double rtt_median_us, rtt_max_us; /**< ping round trips */
    double gbps, gbps_min, gbps_max;  /**< transfer bandwidth, GB/s (median, min, max of the samples) */
    int line;
} rs_meas_link;

/** A device line of the header (nccl-tests '#  Rank N ... on HOST device D [BUS] NAME'). */
typedef struct rs_meas_device {
    int rank, device;
    char host[64];
    char name[64];
    int line;
} rs_meas_device;

/** A file read. Every field the file does not give stays at its "unknown" value. */
typedef struct rs_meas_table {
    char *name;            /**< the name messages use (the path given); owned */
    rs_meas_format format;
    char tool[32];         /**< "nccl-tests", "rccl-tests", "HCCL Test", "OSU", "ringsim run", "ringsim bringup" */
    char version[64];      /**< as printed; "" */
    char program[64];      /**< the benchmark binary (all_reduce_perf, osu_allreduce, all_reduce_test); "" */
    char command[512];     /**< the command line when the file holds one; "" */
    rs_meas_coll coll;     /**< the file's collective (ringsim run files: the first row's) */
    char coll_from[96];    /**< how it was known: "program all_reduce_perf (line 2)", "--collective", ... */
    int ranks;             /**< 0: unknown */
    char ranks_from[96];
    int hosts;             /**< distinct hosts of the device lines; 0 */
    int nthreads, ngpus;   /**< nccl-tests' header; 0 */
    uint64_t minbytes, maxbytes; /**< the sweep the header announces; 0 */
    int iters, warmup_iters; /**< -1: not printed */
    char accel[16];        /**< OSU's buffer kind from the title (CUDA, ROCM, ...); "" host */
    char dtype[16];        /**< the file's dtype when one applies to every row; "" */
    long log_lines;        /**< NCCL debug lines between the table's lines (counted, never rows) */
    int old_layout;        /**< nccl-tests before redop/root/#wrong columns: rows' op "" (unknown)
                                without redop, root -1 (unknown) without root, #wrong unknown ('error'
                                is the largest deviation, not a count) */
    long out_of_bounds;    /**< nccl-tests' footer count; -1 */
    double avg_busbw;      /**< nccl-tests' footer, GB/s; NAN */
    char notes[768];       /**< what else the tool said (warnings, its last error line; a CSV's source) */
    rs_meas_device *devices;
    size_t ndevices, cap_devices;
    rs_meas_row *rows;
    size_t nrows, cap_rows;
    rs_meas_link *links;
    size_t nlinks, cap_links;
    int nlines;            /**< lines of the file */
} rs_meas_table;

/** What the user knows that the file may not say. A file that says otherwise is refused. */
typedef struct rs_meas_opts {
    const char *collective; /**< a name rs_meas_coll_parse takes, or NULL */
    int ranks;              /**< > 0: the rank count; 0: none */
} rs_meas_opts;

/**
 * Reads the file at `path` into *t (the format detected from its content) and returns 0; or
 * returns -1 with *t empty and one line "PATH:LINE: problem (allowed: ...)" in err.
 * `opts` may be NULL. Free the table with rs_meas_free().
 */
int rs_meas_read(const char *path, const rs_meas_opts *opts, rs_meas_table *t, char *err, size_t errlen);

/** The same on `len` bytes of text (not NUL-terminated; NUL bytes are refused), messages
 *  naming `name`. */
int rs_meas_read_buffer(const char *text, size_t len, const char *name, const rs_meas_opts *opts, rs_meas_table *t,
                        char *err, size_t errlen);

/** One reader per format, for a caller that knows the format (and the fuzz target): the same
 *  contract as rs_meas_read_buffer, refusing text of another format at its first line that
 *  does not fit. rs_meas_read_json takes any of the three JSON formats. */
int rs_meas_read_nccl_text(const char *text, size_t len, const char *name, const rs_meas_opts *opts, rs_meas_table *t,
                           char *err, size_t errlen);
int rs_meas_read_hccl(const char *text, size_t len, const char *name, const rs_meas_opts *opts, rs_meas_table *t,
                      char *err, size_t errlen);
int rs_meas_read_osu(const char *text, size_t len, const char *name, const rs_meas_opts *opts, rs_meas_table *t,
                     char *err, size_t errlen);
int rs_meas_read_json(const char *text, size_t len, const char *name, const rs_meas_opts *opts, rs_meas_table *t,
                      char *err, size_t errlen);
int rs_meas_read_csv(const char *text, size_t len, const char *name, const rs_meas_opts *opts, rs_meas_table *t,
                     char *err, size_t errlen);

/** Frees what *t holds and empties it (safe on an empty or failed table). */
void rs_meas_free(rs_meas_table *t);

/**
 * The row's promises, checked again from its own fields: a positive finite time; algbw within
 * the printed precision of nccl_bytes / time; busbw within it of algbw x rs_meas_bus_factor; OSU's
 * min <= avg <= max. 0, or -1 with one phrase in why. Every reader calls it on every row.
 */
int rs_meas_row_check(const rs_meas_row *r, char *why, size_t whylen);

/** busbw / algbw of nccl-tests (REFERENCE.md): allreduce 2(p-1)/p; reduce_scatter, allgather,
 *  alltoall, gather, scatter (p-1)/p; broadcast, reduce, sendrecv 1. NAN when it needs p and
 *  ranks < 1. */
double rs_meas_bus_factor(rs_meas_coll coll, int ranks);

/** "allreduce", ..., "sendrecv", "gather", "scatter" ("?" for NONE). */
const char *rs_meas_coll_name(rs_meas_coll coll);
/** Parses a collective: the names above and the spellings of the tools ("all_reduce",
 *  "all_gather", "bcast", "reducescatter", ...). 0, or -1 when it names none. */
int rs_meas_coll_parse(const char *text, rs_meas_coll *out);
/** The names rs_meas_coll_parse takes, for "(allowed: ...)". */
const char *rs_meas_coll_allowed(void);
/** "nccl-tests text", "nccl-tests JSON", "HCCL Test", "OSU", "ringsim run JSON", "ringsim bringup JSON". */
const char *rs_meas_format_name(rs_meas_format f);
/** "out_of_place", "in_place", "-" */
const char *rs_meas_place_name(rs_meas_place p);

/** Prints the file's format, metadata and normalized table (one row per size and placement;
 *  bring-up links after the rows). */
void rs_meas_print(const rs_meas_table *t, FILE *out);
/** The table as JSON text (one object: metadata, rows, links; NAN as null), malloc'd; NULL
 *  when memory runs out. */
char *rs_meas_json(const rs_meas_table *const *tables, size_t ntables);

#ifdef __cplusplus
}
#endif
#endif
