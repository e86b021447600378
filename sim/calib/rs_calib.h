/* rs_calib.h — the model against measured tables: each measured row's time predicted by simulating a machine scenario, and the errors (`ringsim compare MACHINE --measured FILE`). */
#ifndef RS_CALIB_H
#define RS_CALIB_H

#include <stddef.h>
#include <stdint.h>
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
    int held_out;               /**< calibrate: kept out of the fit, predicted with the fitted values */
} rs_calib_row;

struct rs_calib_job;

typedef struct rs_calib {
    char machine[320];          /**< the scenario's name and summary */
    rs_calib_row *rows;
    size_t n;
    int runs;                   /**< simulations run (one per collective, dtype, op, root and sweep) */
    struct rs_calib_job *jobs;     /**< what the rows ask to simulate, sizes aside */
    int njobs;
    int *job_of;                /**< per row: its job */
} rs_calib;

/**
 * Reads measured files for the machine `sc`: a file that names no rank count (OSU, HCCL Test) is
 * the machine's, so its per-rank sizes become nccl-tests sizes. Every file is tried, every refusal
 * printed on err (FILE:LINE: reason). `who` names the command in messages. Returns RS_EXIT_OK with
 * tables[0..n) filled, or RS_EXIT_USAGE (tables freed).
 */
int rs_calib_read(const rs_scenario *sc, const char *const *files, int n, const rs_meas_opts *opts,
                  rs_meas_table *tables, FILE *err);

/** The rows of the tables on the machine `sc`, nothing simulated yet (predicted NaN). Returns
 *  RS_EXIT_OK, or RS_EXIT_USAGE when a table cannot be compared (see rs_calib_predict). */
int rs_calib_rows(const rs_scenario *sc, const rs_meas_table *const *tables, size_t ntables, rs_calib *out,
                  FILE *err);

/** The distinct sizes of job ji's rows that can be simulated (only those kept in the fit, with
 *  fitted_only), ascending, into sizes (room for c->n); returns how many. */
size_t rs_calib_job_sizes(const rs_calib *c, int ji, int fitted_only, uint64_t *sizes);

/** Simulates the rows of c on `sc` (the rows kept in the fit only, with only_fit), a child
 *  process per sweep, as many at once as the machine has cores; sets predicted and error. */
int rs_calib_simulate(const rs_scenario *sc, rs_calib *c, int only_fit, FILE *err);

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
 *  and over all (and over the fitted and the held-out rows, where some are held out): median,
 *  geometric mean and worst of |error|. */
void rs_calib_print(const rs_calib *c, FILE *out);

/** Median, geometric mean and worst |error| over the rows with one: the held-out (held 1), the
 *  fitted (0) or all (-1). */
typedef struct rs_calib_stats {
    size_t n;
    double median, geomean, worst; /**< of |error|; worst keeps its sign */
    const rs_calib_row *worst_row;
} rs_calib_stats;
rs_calib_stats rs_calib_summary(const rs_calib *c, int held);

/* ---- calibrate: scenario values fitted to the rows (rs_calib_fit.c) ---------------------------- */

#define RS_CALIB_MAX_PARAMS 8

/** A scenario value calibrate fits, or pins at a value measured separately. */
typedef struct rs_calib_param {
    const char *key;  /**< "topology.link.bandwidth", from calibrate's table */
    double start;     /**< SI: where the fit starts (the scenario's value, or KEY=VALUE); a pin's value */
    double value;     /**< SI: fitted (4 significant digits, as the scenario says it), or pinned */
    double sigma;     /**< standard error of ln(value), i.e. relative; NAN: no degrees of freedom (as many
                           rows as values) */
    int determined;   /**< 0: the rows do not depend on it, or only together with another value */
    int pinned;
    int tied;         /**< not determined apart from params[tied]: their columns of the
                           Jacobian correlate by 0.95 or more; -1: none */
    double tied_corr; /**< that correlation (the cosine of the two columns) */
} rs_calib_param;

/** A link of a bring-up (ringsim bringup --json) as the calibrated scenario takes it. */
typedef struct rs_calib_link {
    int src, dst;
    char verdict[16];     /**< good, slow: an override of bandwidth and latency; dead: down from 0 s */
    double bandwidth;     /**< B/s: the transfers' median rate */
    double latency;       /**< s: half the ping's median round trip */
} rs_calib_link;

typedef struct rs_calib_fit {
    rs_calib_param params[RS_CALIB_MAX_PARAMS];
    int nparams;
    rs_calib_link *links;     /**< a bring-up's links, set before the fit (rs_calib_fit_free) */
    int nlinks;
    int rows;                 /**< rows fitted */
    int iterations;           /**< the solver's */
    int simulations;          /**< rounds of simulations (each all the fitted rows) */
    double rms_before, rms_after; /**< root mean square of ln(predicted / measured) over the fitted rows */
    rs_calib_stats before;    /**< every row at the starting values */
    char stopped[96];         /**< why the solver stopped */
} rs_calib_fit;

/** The keys calibrate sets, for "(allowed: ...)". */
const char *rs_calib_keys_allowed(void);

/** Parses `KEY` or `KEY=VALUE` (a pin needs the value) against the scenario: the key's start is the
 *  scenario's value or VALUE. 0, or -1 with why ("'x' is not a key calibrate sets (allowed: ...)"). */
int rs_calib_param_parse(const rs_scenario *sc, const char *spec, int pinned, rs_calib_param *p, char *why,
                         size_t len);

/** A bring-up's measured links into the scenario: each good or slow link an override of its
 *  bandwidth (the transfers' median rate) and latency (half the median ping round trip), each
 *  dead one down from 0 s, recorded in fit->links. A link the topology lacks, or one the bring-up
 *  found corrupting or miswired, is refused: RS_EXIT_USAGE after a message. */
int rs_calib_links(rs_scenario *sc, const rs_meas_table *const *tables, size_t ntables, rs_calib_fit *fit, FILE *err);

void rs_calib_fit_free(rs_calib_fit *fit);

/** Marks the rows a --hold-out SPEC names: comma-separated collectives, size ranges A..B (A.. and
 *  ..B too), K/M (of every M sizes of a file's collective and placement, the last K) and measured
 *  files as given. 0, or -1 with why. */
int rs_calib_hold_out(rs_calib *c, const char *spec, char *why, size_t len);

/**
 * Fits the unpinned values of fit->params (pinned ones set first) by least squares of
 * ln(predicted / measured) over the rows not held out, every residual evaluated by simulating
 * the rows on the model (GSL's trust-region solver, finite-difference Jacobian, values in log
 * space). Leaves `sc` at the fitted values, every row of c predicted with them. Returns
 * RS_EXIT_OK, RS_EXIT_USAGE (nothing to fit, fewer rows than values) or a simulation's status.
 */
int rs_calib_fit_run(rs_scenario *sc, rs_calib *c, rs_calib_fit *fit, FILE *err);

/** The fit's provenance (files, values with uncertainty, errors before and after), then the rows. */
void rs_calib_fit_print(const rs_calib *c, const rs_calib_fit *fit, FILE *out);

/** The calibrated scenario: the provenance as comments (with `command`), then the resolved
 *  scenario at the fitted values (it loads as it is). 0, or -1 when it cannot be written. */
int rs_calib_write_scenario(const rs_scenario *sc, const rs_calib *c, const rs_calib_fit *fit, const char *command,
                            FILE *out);

/** The rows (and the fit, unless NULL) as JSON. 0, or -1 when the file cannot be written. */
int rs_calib_write_json(const rs_calib *c, const rs_calib_fit *fit, FILE *f);

/** `--plot FILE`: busbw against size, measured and predicted, per file, collective and placement
 *  (SVG or PNG, through gnuplot). RS_EXIT_OK, or RS_EXIT_USAGE after a message on err. */
int rs_calib_plot(const rs_calib *c, const char *path, const char *title, FILE *err);

void rs_calib_free(rs_calib *c);

#ifdef __cplusplus
}
#endif
#endif
