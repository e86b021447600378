/* rs_report.h — nccl-tests-style tables on a stream and the same rows as JSON (cJSON). */
#ifndef RS_REPORT_H
#define RS_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ncl/ncl.h"
#include "sweep/rs_sweep.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One placement's measurement. */
typedef struct rs_result {
    double time_us;   /**< average per iteration, max over ranks; < 0: a placement the collective
                           does not run (sendrecv in place), printed N/A, null in JSON */
    double algbw;     /**< size / time, decimal GB/s */
    double busbw;     /**< algbw x the collective's bus factor */
    uint64_t wrong;   /**< mismatched elements summed over ranks */
} rs_result;

/** One line of the table. */
typedef struct rs_row {
    rs_coll coll;
    ncl_dtype dtype;
    ncl_op op;
    int has_op;            /**< 0: redop prints "none" (broadcast, allgather) */
    int root;              /**< -1 where it does not apply */
    uint64_t size;         /**< bytes; allgather/reduce_scatter: the total gathered size */
    uint64_t count;        /**< elements; allgather/reduce_scatter: per rank (as nccl-tests) */
    ncl_algo algo;         /**< the algorithm the engine runs for this row */
    rs_result res[2];      /**< [0] out of place, [1] in place */
    double memcpy_gbps;    /**< single-thread memcpy of `size` bytes; < 0: not measured */
} rs_row;

typedef struct rs_report rs_report;

/** A report printing tables on `out`; JSON rows are collected when json is nonzero. */
rs_report *rs_report_create(const rs_sweep *sweep, FILE *out, int json);
void rs_report_destroy(rs_report *rep);

/** Starts a table: the title line and column headers. algo_desc says which algorithm runs. */
void rs_report_table_begin(rs_report *rep, rs_coll coll, const char *algo_desc);
/** Prints one row (and remembers it for the footer and JSON). */
void rs_report_row(rs_report *rep, const rs_row *row);
/** Prints the footer (out-of-bounds count, averages). aborted: the run stopped on an error,
 *  so the count covers only the rows printed. Returns the table's wrong count. */
uint64_t rs_report_table_end(rs_report *rep, int aborted);

/** A training step's summary (workload.training), per iteration. */
typedef struct rs_train_summary {
    const char *model, *fusion;
    int buckets;
    double iteration_us, compute_us, allreduce_us, exposed_us;
    double hidden;      /**< share of the allreduce time under back-propagation, 0..1 */
    double samples_per_s;
    double efficiency;  /**< against the same NPUs computing without communicating, 0..1 */
    uint64_t wrong;
} rs_train_summary;

/** The summary's numbers as the JSON names them and a comparison labels them (value x scale). */
typedef struct rs_train_field {
    const char *key, *label;
    double scale;
    size_t offset; /**< of the double in rs_train_summary */
} rs_train_field;
#define RS_TRAIN_FIELDS 7
extern const rs_train_field rs_train_fields[RS_TRAIN_FIELDS];

/** Records it for the JSON document ("training"; `ringsim compare` reads it). */
void rs_report_training(rs_report *rep, const rs_train_summary *s);

/** What a corrupt fault (bit errors) did to one direction of a link over the run. */
typedef struct rs_link_corruption {
    const char *link;   /**< the channel, "npu1->npu2" */
    uint32_t every;     /**< every N-th message damaged */
    int crc;            /**< 1: detected and replayed by the link layer; 0: delivered damaged */
    int packets;        /**< 1: counted packets (packet fidelity), 0: messages */
    uint64_t counted;   /**< messages (packets) counted since the fault began */
    uint64_t damaged;   /**< of them, damaged */
    double replay_us;   /**< crc: wire time the replays took */
} rs_link_corruption;

/** Prints one comment line for it ("# link npu1->npu2: 37 of 148 messages damaged and replayed
 *  ...") and records it in JSON ("corrupt_links"). */
void rs_report_corruption(rs_report *rep, const rs_link_corruption *c);

/** Marks the run as failed by an engine error (recorded in JSON). */
void rs_report_set_error(rs_report *rep, const char *message);

/** Writes the JSON document to f (named path, for messages). 0 on success, else prints
 *  "ringsim: --json: cannot write 'path': reason" on err and returns -1. Closes f. */
int rs_report_write_json(rs_report *rep, FILE *f, const char *path, FILE *err);
/** JUnit XML of the rows (the report must collect them: created with json nonzero): a testcase per
 *  row and placement, failed where #wrong > 0, and one for the run's error. 0 or 2 after a message. */
int rs_report_write_junit(rs_report *rep, const char *path, FILE *err);

/** Bus bandwidth factor of nccl-tests for coll on nranks. */
double rs_report_bus_factor(rs_coll coll, int nranks);

#ifdef __cplusplus
}
#endif
#endif
