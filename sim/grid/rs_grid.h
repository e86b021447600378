/* rs_grid.h — `ringsim sweep`: a grid file's points (scenario keys over lists or ranges), each written as a scenario, run in child processes and merged. */
#ifndef RS_GRID_H
#define RS_GRID_H

#include <stddef.h>
#include <stdio.h>

#include "scenario/rs_yaml.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most values one key takes (a range longer than this is refused) and most points a grid has. */
#define RS_GRID_MAX_VALUES 10000
#define RS_GRID_MAX_POINTS 100000
/** Room for any message about a grid file. */
#define RS_GRID_ERRLEN 2048

/** One key of the grid and the values it takes, each a node of the grid's document (a range's
 *  values are scalars added to that document, so every value is copied the same way). */
typedef struct rs_grid_axis {
    char *key;     /**< the scenario key path: "topology.link.bandwidth", "topology.overrides[0].latency" */
    char *label;   /**< its last name, for file names and plot titles: "bandwidth" */
    int line;      /**< of the key in the grid file */
    size_t nvalues;
    int *values;   /**< node ids in the grid document */
    char **texts;  /**< each value as one line of flow YAML ("25 GB/s", "[4, 4]"): the coordinates */
} rs_grid_axis;

/** A loaded grid file: the grid's and the base scenario's documents and the expansion. */
typedef struct rs_grid {
    char *path;      /**< the grid file, as given */
    char *name;      /**< its base name without .yaml */
    char *base;      /**< the base scenario's path (relative to the grid file when written so) */
    char *out;       /**< the output directory */
    int jobs;        /**< points run at once; 0: not given (the caller's default) */
    rs_yaml grid, scen; /**< the two documents; messages go to err */
    rs_grid_axis *axes;
    size_t naxes, npoints;
    char err[RS_GRID_ERRLEN];
} rs_grid;

/**
 * Reads and checks a grid file and its base scenario's YAML. 0, or -1 with one line in g->err,
 *     GRID:LINE: KEY: PROBLEM (allowed: ...)
 * as the scenario loader words its own (an unknown top-level key, an empty list, a bad range, a
 * key path whose parent is not a mapping in the base, a base that does not parse). The points
 * themselves are checked by the scenario loader when they run. rs_grid_free either way.
 */
int rs_grid_load(const char *path, rs_grid *g);
void rs_grid_free(rs_grid *g);

/** The value index of each axis at point p (the cartesian product, the first key slowest). */
void rs_grid_coords(const rs_grid *g, size_t p, size_t *idx);

/** "0003-ranks8-bandwidth50GBs": the point's index (4 digits at least) and short coordinates of
 *  the keys with more than one value, only characters that need no quoting in a file name. */
void rs_grid_point_name(const rs_grid *g, size_t p, char *buf, size_t len);

/** "topology.ranks=8, topology.link.bandwidth=50 GB/s": the coordinates in full, one line. */
void rs_grid_point_label(const rs_grid *g, size_t p, char *buf, size_t len);

/** The point's scenario: the base document with the point's values set at their key paths
 *  (mappings on the way created where missing), emitted by libyaml after a comment naming the
 *  point. Relative file names the scenario reads (workload.schedule, workload.training.model)
 *  are made absolute, since the point is written elsewhere. malloc'ed text (*len bytes), or NULL
 *  with the reason in g->err. */
char *rs_grid_point_yaml(rs_grid *g, size_t p, size_t *len);

/** How a sweep runs its points. */
typedef struct rs_grid_run_opts {
    int jobs;         /**< at once, >= 1 */
    int force;        /**< rerun points that finished */
    double timeout_s; /**< a point running longer is killed; 0: none */
    int rank, nranks; /**< this process runs the points with index % nranks == rank */
    int quiet;        /**< no line per finished point */
} rs_grid_run_opts;

/** What a run did, for the summary line. */
typedef struct rs_grid_tally {
    size_t mine, run, skipped, failed;
} rs_grid_tally;

/**
 * Runs this process's share of the points, `jobs` at a time, each `ringsim run POINT.yaml --json
 * POINT.json` in a child (this program's own binary) with its stdout and stderr in POINT.log and
 * POINT.err and its outcome in POINT.status; a point whose YAML is unchanged and whose JSON is
 * complete (result OK) is skipped unless opts->force. A point that fails (exit status, signal,
 * timeout) is reported on err with its last lines of stderr; the others go on. 0 when every point
 * ran (failed or not), RS_EXIT_USAGE when the output directory cannot be written.
 */
int rs_grid_run(rs_grid *g, const rs_grid_run_opts *opts, rs_grid_tally *t, FILE *out, FILE *err);

/** The directory of the points' files ("OUT/points") and a point's file stem in it. */
void rs_grid_point_stem(const rs_grid *g, size_t p, char *buf, size_t len);

/** What the merge found. */
typedef struct rs_grid_merged {
    size_t ok, failed, missing, rows;
    size_t trained; /**< points of a training scenario, in OUT/sweep_training.csv */
} rs_grid_merged;

/** Writes OUT/sweep.csv and OUT/sweep.json from every point's files (any process's), training
 *  scenarios' figures (iteration time, exposed communication, ...) to OUT/sweep_training.csv, and with
 *  plot_path busbw against size, one curve per point and collective. 0, or RS_EXIT_USAGE after a
 *  message on err (a file that cannot be written, gnuplot failing). */
int rs_grid_merge(rs_grid *g, const char *plot_path, rs_grid_merged *m, FILE *err);

/** Whether every point has an outcome on disk (a status file or complete JSON beside the YAML
 *  this grid makes for it); done[npoints] remembers the points found done (zeroed at first). */
int rs_grid_all_done(rs_grid *g, unsigned char *done);

#ifdef __cplusplus
}
#endif
#endif
