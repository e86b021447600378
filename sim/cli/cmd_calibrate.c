/* cmd_calibrate.c — `ringsim calibrate MACHINE MEASURED...`: fits a machine scenario's values to measured tables on the model (sim/calib/) and writes the calibrated scenario. */
#define _POSIX_C_SOURCE 200809L
#include "rs_cmd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "calib/rs_calib.h"
#include "measured/rs_measured.h"
#include "report/rs_plot.h"
#include "rs_cli.h"

#define CALIB_USAGE                                                                                                  \
    "usage: ringsim calibrate MACHINE.yaml MEASURED... [--fit KEY[=START],...] [--pin KEY=VALUE,...]\n"              \
    "                         [--hold-out SPEC] [--out FILE] [--json FILE] [--plot FILE] [--collective NAME]\n"   \
    "                         [--ranks N]"

void rs_cmd_calibrate_usage(FILE *out)
{
    fprintf(out,
        CALIB_USAGE "\n"
        "\n"
        "Fits values of a machine scenario (the topology you wrote for a real machine) so that the\n"
        "model's times match measured tables (every format `ringsim measured` reads), then prints\n"
        "measured vs predicted per row and writes the calibrated scenario with its provenance.\n"
        "Each evaluation simulates the measured rows on the model (timing only, a child process per\n"
        "sweep); the fit is least squares of ln(predicted / measured), each size weighted by the\n"
        "span of ln(size) it stands for (a linear sweep's many small sizes do not outweigh the large\n"
        "ones), values in log space: GSL's trust-region solver, then its Nelder-Mead simplex, which\n"
        "steps over the jumps where auto switches algorithms. Deterministic: the same inputs give\n"
        "the same file.\n"
        "  --fit KEY[=START],...  the values to fit (default topology.link.bandwidth,\n"
        "                     topology.link.latency; device.task_overhead with a bring-up); START\n"
        "                     overrides the scenario's value as the starting point (allowed keys: %s)\n"
        "  --pin KEY=VALUE,... set values measured separately (a device-to-device copy bandwidth, a\n"
        "                     ping-pong latency; a time may be 0 s) and keep them out of the fit\n"
        "  --hold-out SPEC    rows kept out of the fit and only predicted, comma-separated: a\n"
        "                     collective (broadcast), a size range (1MiB..64MiB, ..4KiB, 1GiB..), K/M\n"
        "                     (of every M sizes of a file's collective and placement the last K: 2/3\n"
        "                     fits on a third) or a measured FILE as given; repeatable\n"
        "A `ringsim bringup --json` among the files is the boards on the bench: each link it found good\n"
        "or slow becomes an override of that link (its transfers' median rate, half its median ping\n"
        "round trip), each dead one a link down from 0 s; its ring allreduces are rows to fit.\n"
        "  --out FILE         the calibrated scenario (default: MACHINE's name with .calibrated.yaml,\n"
        "                     in the current directory)\n"
        "  --json FILE        the rows and the fit as JSON\n"
        "  --plot FILE        busbw against size, measured and calibrated (.svg or .png, needs gnuplot)\n"
        "  --collective NAME, --ranks N  as for `ringsim measured`, for files that do not say\n"
        "  -h, --help         this text\n"
        "Exit status: 0 when fitted and written, 2 on bad usage, a file that does not read or too few\n"
        "rows, else the failing simulation's status.\n",
        rs_calib_keys_allowed());
}

/* The default output: the machine file's name without .yaml/.yml, plus .calibrated.yaml. */
static void calib_default_out(const char *machine, char *buf, size_t len)
{
    const char *base = strrchr(machine, '/');
    base = base ? base + 1 : machine;
    size_t n = strlen(base);
    if (n > 5 && !strcmp(base + n - 5, ".yaml"))
        n -= 5;
    else if (n > 4 && !strcmp(base + n - 4, ".yml"))
        n -= 4;
    snprintf(buf, len, "%.*s.calibrated.yaml", (int)n, base);
}

/* Adds the comma-separated specs of one --fit or --pin. 0, or -1 after a message. */
static int calib_add_params(const rs_scenario *sc, const char *list, int pinned, rs_calib_fit *fit, FILE *err)
{
    char *copy = strdup(list), *save = NULL;
    if (!copy)
        return -1;
    int rc = 0;
    for (char *s = strtok_r(copy, ",", &save); s && rc == 0; s = strtok_r(NULL, ",", &save)) {
        char why[600];
        rs_calib_param p;
        if (rs_calib_param_parse(sc, s, pinned, &p, why, sizeof why) != 0) {
            fprintf(err, "ringsim: calibrate: %s %s\n", pinned ? "--pin:" : "--fit:", why);
            rc = -1;
            break;
        }
        for (int i = 0; i < fit->nparams; i++)
            if (!strcmp(fit->params[i].key, p.key)) {
                fprintf(err, "ringsim: calibrate: %s is given twice (--fit and --pin take each key once)\n", p.key);
                rc = -1;
            }
        if (rc == 0 && fit->nparams == RS_CALIB_MAX_PARAMS) {
            fprintf(err, "ringsim: calibrate: more than %d keys (allowed: each key once)\n", RS_CALIB_MAX_PARAMS);
            rc = -1;
        }
        if (rc == 0)
            fit->params[fit->nparams++] = p;
    }
    free(copy);
    return rc;
}

/* The command as run, for the scenario's provenance. */
static void calib_command(int argc, char **argv, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "ringsim calibrate");
    for (int i = 0; i < argc && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, strchr(argv[i], ' ') ? " '%s'" : " %s", argv[i]);
}

typedef struct calib_args {
    const char *machine, *out_path, *json_path, *plot_path;
    const char **files, **fits, **pins, **holds;
    int nfiles, nfits, npins, nholds;
    rs_meas_opts mopts;
} calib_args;

/* Parses argv into a; -1 when parsed, else the exit status (after --help or a message). */
static int calib_parse(int argc, char **argv, calib_args *a, FILE *out, FILE *err)
{
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i];
        int valued = !strcmp(s, "--fit") || !strcmp(s, "--pin") || !strcmp(s, "--hold-out") || !strcmp(s, "--out") ||
                     !strcmp(s, "--json") || !strcmp(s, "--plot") || !strcmp(s, "--collective") || !strcmp(s, "--ranks");
        if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
            rs_cmd_calibrate_usage(out);
            return RS_EXIT_OK;
        } else if (valued && i + 1 >= argc) {
            fprintf(err, "ringsim: calibrate: %s: missing value\n" CALIB_USAGE "\n", s);
            return RS_EXIT_USAGE;
        } else if (!strcmp(s, "--fit")) {
            a->fits[a->nfits++] = argv[++i];
        } else if (!strcmp(s, "--pin")) {
            a->pins[a->npins++] = argv[++i];
        } else if (!strcmp(s, "--hold-out")) {
            a->holds[a->nholds++] = argv[++i];
        } else if (!strcmp(s, "--out")) {
            a->out_path = argv[++i];
        } else if (!strcmp(s, "--json")) {
            a->json_path = argv[++i];
        } else if (!strcmp(s, "--plot")) {
            a->plot_path = argv[++i];
            if (rs_plot_check(a->plot_path, err) != 0)
                return RS_EXIT_USAGE;
        } else if (!strcmp(s, "--collective")) {
            rs_meas_coll k;
            a->mopts.collective = argv[++i];
            if (rs_meas_coll_parse(a->mopts.collective, &k) != 0) {
                fprintf(err, "ringsim: calibrate: --collective '%s' (allowed: %s)\n", argv[i], rs_meas_coll_allowed());
                return RS_EXIT_USAGE;
            }
        } else if (!strcmp(s, "--ranks")) {
            long long v;
            if (rs_cli_int("ringsim calibrate", "--ranks", argv[++i], 1, 1000000, &v) != 0)
                return RS_EXIT_USAGE;
            a->mopts.ranks = (int)v;
        } else if (s[0] == '-' && s[1]) {
            fprintf(err, "ringsim: calibrate: unknown option '%s'\n" CALIB_USAGE "\n", s);
            return RS_EXIT_USAGE;
        } else if (!a->machine) {
            a->machine = s;
        } else {
            a->files[a->nfiles++] = s;
        }
    }
    if (!a->machine || !a->nfiles) {
        fprintf(err, "ringsim: calibrate: a machine scenario and at least one measured file are needed\n" CALIB_USAGE
                "\n");
        return RS_EXIT_USAGE;
    }
    return -1;
}

/* Fits, prints, writes: the machine and the tables are loaded. */
static int calib_fit_and_write(rs_scenario *sc, rs_calib *c, rs_calib_fit *fit, const calib_args *a,
                               const char *command, FILE *out, FILE *err)
{
    char out_buf[1024];
    const char *out_path = a->out_path;
    if (!out_path) {
        calib_default_out(a->machine, out_buf, sizeof out_buf);
        out_path = out_buf;
    }
    int st = rs_calib_fit_run(sc, c, fit, err);
    if (st != RS_EXIT_OK)
        return st;
    rs_calib_fit_print(c, fit, out);
    FILE *f = fopen(out_path, "w");
    if (!f || rs_calib_write_scenario(sc, c, fit, command, f) != 0 || fflush(f) != 0) {
        fprintf(err, "ringsim: calibrate: --out: cannot write '%s': %s\n", out_path, strerror(errno));
        if (f)
            fclose(f);
        return RS_EXIT_USAGE;
    }
    fclose(f);
    fprintf(out, "# wrote the calibrated scenario to %s\n", out_path);
    if (a->plot_path && (st = rs_calib_plot(c, a->plot_path, c->machine, err)) != RS_EXIT_OK)
        return st;
    if (a->json_path) {
        FILE *j = fopen(a->json_path, "w");
        if (!j || rs_calib_write_json(c, fit, j) != 0 || fflush(j) != 0) {
            fprintf(err, "ringsim: calibrate: --json: cannot write '%s': %s\n", a->json_path, strerror(errno));
            st = RS_EXIT_USAGE;
        }
        if (j)
            fclose(j);
    }
    return st;
}

int rs_cmd_calibrate(int argc, char **argv)
{
    FILE *out = stdout, *err = stderr;
    calib_args a;
    memset(&a, 0, sizeof a);
    size_t room = (size_t)(argc > 0 ? argc : 1);
    a.files = calloc(room, sizeof *a.files);
    a.fits = calloc(room, sizeof *a.fits);
    a.pins = calloc(room, sizeof *a.pins);
    a.holds = calloc(room, sizeof *a.holds);
    rs_meas_table *tables = calloc(room, sizeof *tables);
    const rs_meas_table **read = calloc(room, sizeof *read);
    int st = a.files && a.fits && a.pins && a.holds && tables && read ? calib_parse(argc, argv, &a, out, err)
                                                                      : RS_EXIT_USAGE;
    rs_scenario sc;
    int loaded = 0, have_tables = 0;
    rs_calib c;
    memset(&c, 0, sizeof c);
    rs_calib_fit fit;
    memset(&fit, 0, sizeof fit);
    if (st == -1) {
        st = rs_cli_load_scenario(a.machine, &sc) == 0 ? -1 : RS_EXIT_USAGE;
        loaded = st == -1;
    }
    for (int i = 0; st == -1 && i < a.nfits; i++)
        if (calib_add_params(&sc, a.fits[i], 0, &fit, err) != 0)
            st = RS_EXIT_USAGE;
    for (int i = 0; st == -1 && i < a.npins; i++)
        if (calib_add_params(&sc, a.pins[i], 1, &fit, err) != 0)
            st = RS_EXIT_USAGE;
    if (st == -1) {
        st = rs_calib_read(&sc, a.files, a.nfiles, &a.mopts, tables, err);
        have_tables = st == RS_EXIT_OK;
        st = have_tables ? -1 : st;
    }
    for (int i = 0; st == -1 && i < a.nfiles; i++)
        read[i] = &tables[i];
    /* a bring-up's links are the boards' own: overrides before the fit, which then fits what the
     * links do not say (by default the task overhead; else the links' defaults) */
    if (st == -1 && rs_calib_links(&sc, read, (size_t)a.nfiles, &fit, err) != RS_EXIT_OK)
        st = RS_EXIT_USAGE;
    if (st == -1 && a.nfits == 0 &&
        calib_add_params(&sc, fit.nlinks ? "device.task_overhead" : "topology.link.bandwidth,topology.link.latency", 0,
                         &fit, err) != 0)
        st = RS_EXIT_USAGE;
    if (st == -1)
        st = rs_calib_rows(&sc, read, (size_t)a.nfiles, &c, err) == RS_EXIT_OK ? -1 : RS_EXIT_USAGE;
    for (int i = 0; st == -1 && i < a.nholds; i++) {
        char why[600];
        if (rs_calib_hold_out(&c, a.holds[i], why, sizeof why) != 0) {
            fprintf(err, "ringsim: calibrate: %s\n", why);
            st = RS_EXIT_USAGE;
        }
    }
    if (st == -1) {
        char command[2048];
        calib_command(argc, argv, command, sizeof command);
        st = calib_fit_and_write(&sc, &c, &fit, &a, command, out, err);
    }
    rs_calib_free(&c);
    rs_calib_fit_free(&fit);
    for (int i = 0; have_tables && i < a.nfiles; i++)
        rs_meas_free(&tables[i]);
    if (loaded)
        rs_scenario_free(&sc);
    free(a.files), free(a.fits), free(a.pins), free(a.holds), free(tables), free(read);
    return st;
}
