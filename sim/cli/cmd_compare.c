/* cmd_compare.c — `ringsim compare A B`: runs each scenario in a child writing JSON, then prints
 * both side by side (sim/report/rs_compare.c); `ringsim compare MACHINE --measured FILE...`: the
 * measured rows against the machine scenario's predictions (sim/calib/). */
#define _POSIX_C_SOURCE 200809L
#include "rs_cmd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "calib/rs_calib.h"
#include "measured/rs_measured.h"
#include "report/rs_compare.h"
#include "report/rs_plot.h"
#include "rs_cli.h"

/* One side as the command runs it. */
typedef struct rs_side {
    rs_compare_side side;
    const char *fusion_override; /* --fusion-a/-b: the training step's fusion (NULL: the file's) */
    char json[4096];             /* the child's JSON file */
} rs_side;

/* Runs side s in a child with its table silenced; its messages (stderr) pass through. */
static int rs_side_run(rs_side *s, FILE *err)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(s->json, sizeof s->json, "%s/ringsim-compare-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(s->json);
    if (fd < 0) {
        fprintf(err, "ringsim: compare: cannot create a temporary file: %s\n", strerror(errno));
        s->json[0] = '\0';
        return RS_EXIT_USAGE;
    }
    close(fd);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (freopen("/dev/null", "w", stdout) == NULL)
            _exit(RS_EXIT_USAGE);
        char *args[] = {"--json", s->json, "--links", "none", "--fusion", (char *)s->fusion_override, NULL};
        int st = rs_cmd_run_scenario(s->side.path, s->fusion_override ? 6 : 4, args);
        fflush(NULL);
        _exit(st);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) < 0) {
        fprintf(err, "ringsim: compare: cannot run scenario %s (%s): %s\n", s->side.label, s->side.path, strerror(errno));
        return RS_EXIT_USAGE;
    }
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    fprintf(err, "ringsim: compare: scenario %s (%s) was killed by signal %d\n", s->side.label, s->side.path,
            WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    return RS_EXIT_ENGINE;
}


void rs_cmd_compare_usage(FILE *out)
{
    fprintf(out,
        "usage: ringsim compare A B [--json FILE] [--plot FILE] [--fusion-a SPEC] [--fusion-b SPEC]\n"
        "       ringsim compare MACHINE --measured FILE... [--collective NAME] [--ranks N]\n"
        "                       [--hold-out SPEC] [--json FILE] [--plot FILE]\n"
        "\n"
        "Runs two scenarios (each in a child process) and prints their simulated times side by side\n"
        "per collective and size, with the ratio B/A; for two training scenarios, their iteration\n"
        "summaries.\n"
        "With --measured: every row of the measured tables (what `ringsim measured` reads: nccl-tests,\n"
        "HCCL Test, OSU, ringsim JSON) against the time the scenario MACHINE predicts for it\n"
        "(simulated, timing only, with the file's iterations and warm-ups), with the error per row,\n"
        "and per file, collective and placement and over all the median, geometric mean and worst\n"
        "|error|; --plot draws measured and predicted busbw against size.\n"
        "  --json FILE        also write the comparison as JSON\n"
        "  --plot FILE        busbw of both against size (.svg or .png, needs gnuplot)\n"
        "  --fusion-a SPEC    the fusion strategy of training scenario A (as run --fusion); -b for B\n"
        "  --measured FILE... measured tables: the files up to the next option (repeatable)\n"
        "  --collective NAME  the collective, where a file does not name it (as ringsim measured)\n"
        "  --ranks N          the rank count, where a file does not give it (default: the scenario's)\n"
        "  --hold-out SPEC    rows a calibration kept out of its fit, summarised apart (as calibrate's)\n"
        "  -h, --help         this text\n");
}

/* `compare MACHINE --measured FILE...`: every file read (all refusals shown), then predicted. */
static int rs_compare_measured(const char *machine, const char *const *files, int nfiles, const rs_meas_opts *user,
                               const char *const *holds, int nholds, const char *json_path, const char *plot_path,
                               FILE *out, FILE *err)
{
    rs_scenario sc;
    if (rs_cli_load_scenario(machine, &sc) != 0)
        return RS_EXIT_USAGE;
    rs_meas_table *tables = calloc((size_t)nfiles, sizeof *tables);
    const rs_meas_table **read = calloc((size_t)nfiles, sizeof *read);
    int status = tables && read ? rs_calib_read(&sc, files, nfiles, user, tables, err) : RS_EXIT_USAGE;
    for (int i = 0; i < nfiles && read; i++)
        read[i] = &tables[i];
    FILE *json = NULL;
    if (status == RS_EXIT_OK && json_path && (json = fopen(json_path, "w")) == NULL) {
        fprintf(err, "ringsim: --json: cannot write '%s': %s\n", json_path, strerror(errno));
        status = RS_EXIT_USAGE;
    }
    rs_calib c;
    memset(&c, 0, sizeof c);
    if (status == RS_EXIT_OK)
        status = rs_calib_rows(&sc, read, (size_t)nfiles, &c, err);
    for (int i = 0; status == RS_EXIT_OK && i < nholds; i++) {
        char why[600];
        if (rs_calib_hold_out(&c, holds[i], why, sizeof why) != 0) {
            fprintf(err, "ringsim: compare: %s\n", why);
            status = RS_EXIT_USAGE;
        }
    }
    if (status == RS_EXIT_OK)
        status = rs_calib_simulate(&sc, &c, 0, err);
    if (status == RS_EXIT_OK) {
        rs_calib_print(&c, out);
        if (json && (rs_calib_write_json(&c, NULL, json) != 0 || fflush(json) != 0)) {
            fprintf(err, "ringsim: --json: cannot write '%s': %s\n", json_path, strerror(errno));
            status = RS_EXIT_USAGE;
        }
        if (status == RS_EXIT_OK && plot_path)
            status = rs_calib_plot(&c, plot_path, c.machine, err);
    }
    if (json)
        fclose(json);
    rs_calib_free(&c);
    for (int i = 0; tables && i < nfiles; i++)
        rs_meas_free(&tables[i]);
    free(tables);
    free(read);
    rs_scenario_free(&sc);
    return status;
}

int rs_cmd_compare(int argc, char **argv)
{
    FILE *out = stdout, *err = stderr;
    const char *paths[2] = {NULL, NULL}, *json_path = NULL, *plot_path = NULL, *fusion[2] = {NULL, NULL};
    const char **measured = calloc((size_t)argc + 1, sizeof *measured);
    const char **holds = calloc((size_t)argc + 1, sizeof *holds);
    int npaths = 0, nmeasured = 0, nholds = 0;
    rs_meas_opts mopts;
    memset(&mopts, 0, sizeof mopts);
    if (!measured || !holds) {
        fprintf(err, "ringsim: compare: out of memory\n");
        free(measured), free(holds);
        return RS_EXIT_USAGE;
    }
    for (int i = 0; i < argc; i++) {
        int valued = strcmp(argv[i], "--json") == 0 || strcmp(argv[i], "--plot") == 0 ||
                     strcmp(argv[i], "--fusion-a") == 0 || strcmp(argv[i], "--fusion-b") == 0 ||
                     strcmp(argv[i], "--measured") == 0 || strcmp(argv[i], "--collective") == 0 ||
                     strcmp(argv[i], "--ranks") == 0 || strcmp(argv[i], "--hold-out") == 0;
        if (valued && i + 1 >= argc) {
            fprintf(err, "ringsim: %s: missing value\n", argv[i]);
            free(measured), free(holds);
            return RS_EXIT_USAGE;
        } else if (strcmp(argv[i], "--measured") == 0) {
            measured[nmeasured++] = argv[++i];
            while (i + 1 < argc && argv[i + 1][0] != '-') /* a shell glob's files */
                measured[nmeasured++] = argv[++i];
        } else if (strcmp(argv[i], "--hold-out") == 0) {
            holds[nholds++] = argv[++i];
        } else if (strcmp(argv[i], "--collective") == 0) {
            rs_meas_coll k;
            mopts.collective = argv[++i];
            if (rs_meas_coll_parse(mopts.collective, &k) != 0) {
                fprintf(err, "ringsim: compare: --collective '%s' (allowed: %s)\n", mopts.collective,
                        rs_meas_coll_allowed());
                free(measured), free(holds);
                return RS_EXIT_USAGE;
            }
        } else if (strcmp(argv[i], "--ranks") == 0) {
            char *end = NULL;
            long v = strtol(argv[++i], &end, 10);
            if (end == argv[i] || *end || v < 1 || v > 1000000) {
                fprintf(err, "ringsim: compare: --ranks '%s' (allowed: a whole number from 1 to 1000000)\n", argv[i]);
                free(measured), free(holds);
                return RS_EXIT_USAGE;
            }
            mopts.ranks = (int)v;
        } else if (strcmp(argv[i], "--fusion-a") == 0 || strcmp(argv[i], "--fusion-b") == 0) {
            fusion[argv[i][9] == 'b'] = argv[i + 1];
            i++;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            rs_cmd_compare_usage(out);
            free(measured), free(holds);
            return RS_EXIT_OK;
        } else if (strcmp(argv[i], "--json") == 0) {
            json_path = argv[++i];
        } else if (strcmp(argv[i], "--plot") == 0) {
            plot_path = argv[++i];
        } else if (argv[i][0] == '-' || npaths == 2) {
            fprintf(err, "ringsim: compare: unexpected '%s' (usage: ringsim compare A B [--json FILE] [--plot FILE] "
                    "[--fusion-a SPEC] [--fusion-b SPEC], or ringsim compare MACHINE --measured FILE...)\n", argv[i]);
            free(measured), free(holds);
            return RS_EXIT_USAGE;
        } else {
            paths[npaths++] = argv[i];
        }
    }
    if (nmeasured || mopts.collective || mopts.ranks || nholds) {
        int st = RS_EXIT_USAGE;
        if (!nmeasured || npaths != 1 || fusion[0] || fusion[1])
            fprintf(err, "ringsim: compare: --measured needs one scenario (the machine) and takes --collective, "
                    "--ranks, --hold-out, --json and --plot only (usage: ringsim compare MACHINE --measured FILE...)\n");
        else if (!plot_path || rs_plot_check(plot_path, err) == 0)
            st = rs_compare_measured(paths[0], measured, nmeasured, &mopts, holds, nholds, json_path, plot_path, out,
                                     err);
        free(measured), free(holds);
        return st;
    }
    free(measured), free(holds);
    if (npaths != 2) {
        fprintf(err, "ringsim: compare: two scenarios needed (usage: ringsim compare A B [--json FILE] [--plot FILE])\n");
        return RS_EXIT_USAGE;
    }
    rs_side side[2];
    memset(side, 0, sizeof side);
    int status = RS_EXIT_OK;
    /* Load both first: a mistyped file fails at once, before the other one runs. */
    for (int k = 0; k < 2; k++) {
        rs_compare_side *s = &side[k].side;
        s->label = k ? "B" : "A";
        s->path = paths[k];
        side[k].fusion_override = fusion[k];
        rs_scenario sc;
        char msg[RS_SCENARIO_ERRLEN];
        if (rs_cli_load_scenario(s->path, &sc) != 0) {
            fprintf(err, "ringsim: compare: scenario %s (%s) is not valid\n", s->label, s->path);
            status = RS_EXIT_USAGE;
            continue;
        }
        snprintf(s->name, sizeof s->name, "%s", sc.name ? sc.name : s->path);
        if (fusion[k] && rs_scenario_set_training(&sc, fusion[k], 0, msg, sizeof msg) != 0) {
            fprintf(err, "ringsim: compare: --fusion-%c '%s': %s\n", k ? 'b' : 'a', fusion[k], msg);
            status = RS_EXIT_USAGE;
            rs_scenario_free(&sc);
            continue;
        }
        rs_scenario_summary(&sc, s->summary, sizeof s->summary);
        rs_scenario_free(&sc);
    }
    if (status == RS_EXIT_OK && plot_path)
        status = rs_plot_check(plot_path, err);
    FILE *json = NULL;
    if (status == RS_EXIT_OK && json_path && (json = fopen(json_path, "w")) == NULL) {
        fprintf(err, "ringsim: --json: cannot write '%s': %s\n", json_path, strerror(errno));
        status = RS_EXIT_USAGE;
    }
    if (status != RS_EXIT_OK)
        return status;

    for (int k = 0; k < 2; k++) {
        rs_side *s = &side[k];
        int st = rs_side_run(s, err);
        if (st != RS_EXIT_OK)
            fprintf(err, "ringsim: compare: scenario %s (%s) failed with exit status %d\n", s->side.label,
                    s->side.path, st);
        else
            st = rs_compare_read(&s->side, s->json, err);
        status = st > status ? st : status;
    }
    if (status == RS_EXIT_OK)
        status = rs_compare_print((const rs_compare_side[2]){side[0].side, side[1].side}, out, json, json_path,
                                  plot_path, err);
    else if (json)
        fclose(json);
    for (int k = 0; k < 2; k++) {
        if (side[k].json[0])
            unlink(side[k].json);
        rs_compare_side_free(&side[k].side);
    }
    return status;
}
