/* cmd_sweep.c — `ringsim sweep GRID.yaml`: the grid's points run in child processes (sim/grid/), this process's share of them under mpirun/srun, then merged. */
#define _POSIX_C_SOURCE 200809L
#include "rs_cmd.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "grid/rs_grid.h"
#include "report/rs_plot.h"
#include "rs_cli.h"

void rs_cmd_sweep_usage(FILE *out)
{
    fprintf(out,
        "usage: ringsim sweep GRID.yaml [--jobs N] [--out DIR] [--force] [--timeout SEC] [--plot FILE]\n"
        "                     [--merge] [--wait SEC]\n"
        "\n"
        "Runs every point of a grid: a base scenario with keys set to each combination of the\n"
        "grid's lists and ranges (scenarios/README.md, \"Sweeps\"). Each point is written to\n"
        "OUT/points/INDEX-COORDINATES.yaml and run as `ringsim run POINT.yaml --json POINT.json` in\n"
        "a child process (its stdout in .log, stderr in .err, outcome in .status), N at a time; a\n"
        "point that fails (exit status, signal, timeout) is reported with its last lines of stderr\n"
        "and the others go on. A point whose YAML is unchanged and whose JSON is complete and OK is\n"
        "skipped on a rerun. Then OUT/sweep.csv and OUT/sweep.json: one row per point, result row\n"
        "and placement, the coordinates first. Exit 0 when every point ran OK, 1 when one failed,\n"
        "2 on a bad grid file or usage.\n"
        "Under mpirun or srun (OMPI_COMM_WORLD_RANK/_SIZE, PMI_RANK/PMI_SIZE or SLURM_PROCID/\n"
        "SLURM_NTASKS set) process r of s runs the points whose index %% s == r, then process 0\n"
        "waits for the others' points and merges.\n"
        "  --jobs N       points run at once (default: the grid's jobs:, else the cores)\n"
        "  --out DIR      output directory (default: the grid's out:, else GRID.sweep beside it)\n"
        "  --force        rerun every point, finished or not\n"
        "  --timeout SEC  kill a point running longer and count it failed\n"
        "  --plot FILE    busbw against size, one curve per point and collective (.svg/.png, gnuplot)\n"
        "  --merge        run nothing: merge what the points' files hold (missing points fail)\n"
        "  --wait SEC     how long process 0 waits for the other processes' points (default 86400)\n"
        "  -h, --help     this text\n");
}

/* The rank and size a launcher gave this process: 0 with *rank, *size (0 of 1 without one), or -1
 * after a message when the variables are not a rank below a size. */
static int rs_sweep_share(int *rank, int *size)
{
    static const char *const vars[][2] = {
        {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"}, {"PMI_RANK", "PMI_SIZE"}, {"SLURM_PROCID", "SLURM_NTASKS"}};
    *rank = 0, *size = 1;
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *r = getenv(vars[i][0]), *s = getenv(vars[i][1]);
        if (r == NULL || s == NULL)
            continue;
        long long rv, sv;
        if (rs_cli_int("ringsim sweep", vars[i][1], s, 1, 1 << 20, &sv) != 0 ||
            rs_cli_int("ringsim sweep", vars[i][0], r, 0, sv - 1, &rv) != 0)
            return -1;
        *rank = (int)rv, *size = (int)sv;
        return 0;
    }
    return 0;
}

/* Rank 0 of several: polls until every point has an outcome on disk, or the wait ends. */
static void rs_sweep_wait(rs_grid *g, double wait_s, FILE *out)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int said = 0;
    unsigned char *done = calloc(g->npoints, 1);
    while (done && !rs_grid_all_done(g, done)) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) * 1e-9 > wait_s)
            break;
        if (!said++) {
            fprintf(out, "sweep: waiting for the other processes' points (at most %g s)\n", wait_s);
            fflush(out);
        }
        nanosleep(&(struct timespec){0, 200 * 1000 * 1000}, NULL);
    }
    free(done);
}

/* The options after the grid file. */
typedef struct rs_sweep_args {
    const char *grid, *out, *plot;
    long long jobs;
    int force, merge_only;
    double timeout_s, wait_s;
} rs_sweep_args;

/* -1 when parsed, else the exit status (after --help or a message). */
static int rs_sweep_parse(int argc, char **argv, rs_sweep_args *a)
{
    memset(a, 0, sizeof *a);
    a->wait_s = 86400;
    for (int i = 0; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int valued = !strcmp(o, "--jobs") || !strcmp(o, "--out") || !strcmp(o, "--timeout") ||
                     !strcmp(o, "--plot") || !strcmp(o, "--wait");
        if (valued && v == NULL) {
            fprintf(stderr, "ringsim: %s: missing value\n", o);
            return RS_EXIT_USAGE;
        }
        i += valued;
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
            rs_cmd_sweep_usage(stdout);
            return RS_EXIT_OK;
        } else if (!strcmp(o, "--force")) {
            a->force = 1;
        } else if (!strcmp(o, "--merge")) {
            a->merge_only = 1;
        } else if (!strcmp(o, "--jobs")) {
            if (rs_cli_int("ringsim", o, v, 1, 1024, &a->jobs) != 0)
                return RS_EXIT_USAGE;
        } else if (!strcmp(o, "--timeout") || !strcmp(o, "--wait")) {
            if (rs_cli_seconds("ringsim", o, v, 1e7, o[2] == 't' ? &a->timeout_s : &a->wait_s) != 0)
                return RS_EXIT_USAGE;
        } else if (!strcmp(o, "--out")) {
            a->out = v;
        } else if (!strcmp(o, "--plot")) {
            a->plot = v;
        } else if (o[0] == '-' || a->grid) {
            fprintf(stderr, "ringsim: sweep: unexpected '%s' (usage: ringsim sweep GRID.yaml [--jobs N] [--out DIR] "
                    "[--force] [--timeout SEC] [--plot FILE] [--merge] [--wait SEC])\n", o);
            return RS_EXIT_USAGE;
        } else {
            a->grid = o;
        }
    }
    if (a->grid == NULL) {
        fprintf(stderr, "ringsim: sweep: a grid file is needed (usage: ringsim sweep GRID.yaml; scenarios/README.md, "
                "\"Sweeps\")\n");
        return RS_EXIT_USAGE;
    }
    return a->plot && rs_plot_check(a->plot, stderr) != 0 ? RS_EXIT_USAGE : -1;
}

int rs_cmd_sweep(int argc, char **argv)
{
    rs_sweep_args a;
    int rc = rs_sweep_parse(argc, argv, &a), rank, size;
    if (rc >= 0)
        return rc;
    if (rs_sweep_share(&rank, &size) != 0)
        return RS_EXIT_USAGE;
    rs_grid g;
    if (rs_grid_load(a.grid, &g) != 0) {
        fprintf(stderr, "%s\n", g.err);
        rs_grid_free(&g);
        return RS_EXIT_USAGE;
    }
    if (a.out) {
        free(g.out);
        g.out = strdup(a.out);
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    rs_grid_run_opts o = {(int)(a.jobs ? a.jobs : g.jobs ? g.jobs : cores > 0 ? cores : 1), a.force, a.timeout_s,
                          rank, size, 0};
    rs_grid_tally t = {0, 0, 0, 0};
    int status = RS_EXIT_OK;
    char share[96] = "";
    if (size > 1)
        snprintf(share, sizeof share, " (process %d of %d)", rank, size);
    if (!a.merge_only) {
        if (g.out == NULL || rs_grid_run(&g, &o, &t, stdout, stderr) != 0) {
            rs_grid_free(&g);
            return RS_EXIT_USAGE;
        }
        printf("# sweep %s%s: %zu points, %zu run, %zu skipped, %zu failed\n", g.name, share, t.mine, t.run, t.skipped,
               t.failed);
        status = t.failed ? RS_EXIT_WRONG : RS_EXIT_OK;
    }
    if (rank == 0 || a.merge_only) {
        if (size > 1 && !a.merge_only)
            rs_sweep_wait(&g, a.wait_s, stdout);
        rs_grid_merged m;
        rc = rs_grid_merge(&g, a.plot, &m, stderr);
        if (rc != 0) {
            status = rc;
        } else {
            printf("# merged %zu rows of %zu points (%zu ok, %zu failed, %zu missing) into %s/sweep.csv and "
                   "%s/sweep.json\n", m.rows, g.npoints, m.ok, m.failed, m.missing, g.out, g.out);
            if (m.trained)
                printf("# %zu training points' iteration times into %s/sweep_training.csv\n", m.trained, g.out);
            if ((m.failed || m.missing) && status == RS_EXIT_OK)
                status = RS_EXIT_WRONG;
        }
    }
    rs_grid_free(&g);
    return status;
}
