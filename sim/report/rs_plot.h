/* rs_plot.h — `--plot FILE`: busbw against size through gnuplot (SVG or PNG by extension). */
#ifndef RS_PLOT_H
#define RS_PLOT_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** One line of the chart: n points (size in bytes, busbw in GB/s). */
typedef struct rs_plot_series {
    const char *title;
    int n;
    const double *size;
    const double *busbw;
} rs_plot_series;

/** Checks before a run that `path` ends in .svg or .png and that gnuplot is on PATH.
 *  0, or RS_EXIT_USAGE after a message on err ("install gnuplot-nox ..."). */
int rs_plot_check(const char *path, FILE *err);

/** Writes the chart to path: one line per series, log2 size axis. Generates the data and the
 *  gnuplot script in a temporary directory, runs gnuplot, removes the directory.
 *  0, or RS_EXIT_USAGE after a message on err. */
int rs_plot_busbw(const char *path, const char *title, const rs_plot_series *series, int nseries, FILE *err);

#ifdef __cplusplus
}
#endif
#endif
