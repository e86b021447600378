/* rs_compare.h — two runs side by side (`ringsim compare`): their JSON documents read back, a table of times, busbw and ratios B/A. */
#ifndef RS_COMPARE_H
#define RS_COMPARE_H

#include <stdio.h>

#include "rs_rows.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One side of the comparison. */
typedef struct rs_compare_side {
    const char *label; /**< "A" or "B" */
    const char *path;  /**< the scenario */
    char name[128];
    char summary[256];
    rs_rows rows;      /**< collective, size, out-of-place time and busbw per row */
    int training;      /**< a training step: train[] holds its summary */
    double train[RS_TRAIN_FIELDS]; /**< rs_train_fields' values */
    char fusion[160];
} rs_compare_side;

/** Reads a `ringsim run --json` document into s's rows (or training summary). 0, or an exit
 *  status after "ringsim: compare: scenario X (path): no readable results". */
int rs_compare_read(rs_compare_side *s, const char *json_path, FILE *err);

/** Prints both side by side on out (and as JSON into json, which it closes, and a busbw chart
 *  at plot_path, when given). Two sweeps or two training steps; a mix is refused. Returns an
 *  exit status. */
int rs_compare_print(const rs_compare_side side[2], FILE *out, FILE *json, const char *json_path, const char *plot_path,
                     FILE *err);

void rs_compare_side_free(rs_compare_side *s);

#ifdef __cplusplus
}
#endif
#endif
