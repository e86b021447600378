/* rs_calib.h — the model against measured tables: each measured row's time predicted by simulating a machine scenario, and the errors (`ringsim compare MACHINE --measured FILE`). */
#ifndef RS_CALIB_H
#define RS_CALIB_H

#include <stddef.h>
#include <stdio.h>

#include "measured/rs_measured.h"
#include "model/rs_spec.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One measured row and what the machine scenario predicts for it. */
typedef struct rs_calib_row {
    const rs_meas_table *table; /**< the file it came from */
    const rs_meas_row *m;
    rs_meas_place place;        /**< the placement simulated (out of place where the file says none) */
    double predicted_us;
    double error;               /**< predicted / measured - 1 */
    const char *why_not;        /**< why it was not simulated (0 B, part of an element), or NULL */
} rs_calib_row;

typedef struct rs_calib {
    char machine[320];          /**< the scenario's name and summary */
    rs_calib_row *rows;
    size_t n;
    int runs;                   /**< simulations run (one per collective, dtype, op, root and sweep) */
} rs_calib;

/**
 * Predicts every row of the tables on the machine scenario `sc`: for each collective, dtype, op
 * and root of a table, the scenario's workload is replaced by that collective over the measured
 * sizes (timing only, one iteration) and simulated in a child process (a SystemC simulation runs
 * once per process). Returns RS_EXIT_OK, RS_EXIT_USAGE when a table cannot be compared (its rank
 * count is not the scenario's, a collective the engine lacks, a row without a size), or the
 * simulation's status; messages on err.
 */
int rs_calib_predict(const rs_scenario *sc, const rs_meas_table *const *tables, size_t ntables, rs_calib *out,
                     FILE *err);

/** The rows (measured, predicted, error %) and the summaries per file, collective and placement
 *  and over all: median, geometric mean and worst of |error|. */
void rs_calib_print(const rs_calib *c, FILE *out);

/** The same as JSON. 0, or -1 when the file cannot be written. */
int rs_calib_write_json(const rs_calib *c, FILE *f);

void rs_calib_free(rs_calib *c);

#ifdef __cplusplus
}
#endif
#endif
