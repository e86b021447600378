/* rs_rows.h — the rows of a scenario run kept for --csv and --plot. */
#ifndef RS_ROWS_H
#define RS_ROWS_H

#include <stdio.h>

#include "rs_report.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rs_rows {
    rs_row *v;
    int n, cap;
    int nranks, check;
    FILE *csv; /**< non-NULL: each added row is written there too */
} rs_rows;

/** Header line of the CSV (the JSON rows' fields, one line per row and placement). */
void rs_rows_csv_header(FILE *f);
/** Adds a row (an rs_simrun_extras.on_row callback: ud is the rs_rows). */
void rs_rows_add(void *ud, const rs_row *row);
void rs_rows_free(rs_rows *r);
/** Plots busbw (out of place) against size, one line per collective; title prefixes each
 *  line's name when non-NULL ("ring8: allreduce"). Returns rs_plot_busbw's status. */
int rs_rows_plot(const rs_rows *const *sets, const char *const *names, int nsets, const char *path,
                 const char *title, FILE *err);

#ifdef __cplusplus
}
#endif
#endif
