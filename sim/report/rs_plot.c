/* rs_plot.c — draws busbw against size with gnuplot (a script + data in a temp dir). */
#define _POSIX_C_SOURCE 200809L
#include "rs_plot.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sweep/rs_sweep.h"

static int rs_plot_ext(const char *path, const char *ext)
{
    size_t n = strlen(path), e = strlen(ext);
    return n > e && strcasecmp(path + n - e, ext) == 0;
}

/* The gnuplot executable on PATH, or 0 (found: written to buf). */
static int rs_plot_find(char *buf, size_t len)
{
    const char *path = getenv("PATH");
    if (path == NULL)
        return 0;
    while (*path) {
        const char *end = strchr(path, ':');
        size_t n = end ? (size_t)(end - path) : strlen(path);
        if (n > 0 && (size_t)snprintf(buf, len, "%.*s/gnuplot", (int)n, path) < len && access(buf, X_OK) == 0)
            return 1;
        path += n + (end != NULL);
    }
    return 0;
}

int rs_plot_check(const char *path, FILE *err)
{
    char exe[4096];
    if (!rs_plot_ext(path, ".svg") && !rs_plot_ext(path, ".png")) {
        fprintf(err, "ringsim: --plot: '%s' must end in .svg or .png (the format follows the extension)\n", path);
        return RS_EXIT_USAGE;
    }
    if (!rs_plot_find(exe, sizeof exe)) {
        fprintf(err, "ringsim: --plot: gnuplot not found on PATH: install gnuplot-nox (./ringsim installs it)\n");
        return RS_EXIT_USAGE;
    }
    return 0;
}

/* A gnuplot single-quoted string: a quote inside is written twice. */
static void rs_plot_quote(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputc('\'', f);
        fputc(*s, f);
    }
    fputc('\'', f);
}

int rs_plot_busbw(const char *path, const char *title, const rs_plot_series *series, int nseries, FILE *err)
{
    int rc = rs_plot_check(path, err);
    if (rc)
        return rc;
    const char *tmp = getenv("TMPDIR");
    char dir[4096], data[4200], script[4200], log[4200];
    snprintf(dir, sizeof dir, "%s/ringsim-plot-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL) {
        fprintf(err, "ringsim: --plot: cannot create a temporary directory in %s: %s\n",
                tmp && *tmp ? tmp : "/tmp", strerror(errno));
        return RS_EXIT_USAGE;
    }
    snprintf(data, sizeof data, "%s/busbw.dat", dir);
    snprintf(script, sizeof script, "%s/busbw.gp", dir);
    snprintf(log, sizeof log, "%s/gnuplot.log", dir);

    /* data: one block per series, separated by two blank lines (gnuplot's `index`) */
    FILE *d = fopen(data, "w");
    FILE *s = d ? fopen(script, "w") : NULL;
    if (s == NULL) {
        fprintf(err, "ringsim: --plot: cannot write in %s: %s\n", dir, strerror(errno));
        if (d)
            fclose(d);
        rc = RS_EXIT_USAGE;
        goto out;
    }
    double xmin = 0, xmax = 0;
    for (int i = 0; i < nseries; i++) {
        fprintf(d, "# %s\n", series[i].title);
        for (int k = 0; k < series[i].n; k++) {
            fprintf(d, "%.17g %.17g\n", series[i].size[k], series[i].busbw[k]);
            if (xmin == 0 || series[i].size[k] < xmin)
                xmin = series[i].size[k];
            if (series[i].size[k] > xmax)
                xmax = series[i].size[k];
        }
        fprintf(d, "\n\n");
    }
    fclose(d);

    if (rs_plot_ext(path, ".svg"))
        fprintf(s, "set terminal svg size 900,560 dynamic enhanced font 'sans,11' background rgb 'white'\n");
    else
        fprintf(s, "set terminal png size 900,560 enhanced font 'sans,10'\n");
    fprintf(s, "set output ");
    rs_plot_quote(s, path);
    fprintf(s, "\nset title ");
    rs_plot_quote(s, title);
    fprintf(s, " noenhanced\n"
               "set logscale x 2\n"
               "set format x '%%.0b %%BB'\n" /* 1 KiB, 4 MiB: mantissa base 1024 + binary prefix */
               "set xlabel 'size (bytes, log_2 scale)'\n"
               "set ylabel 'bus bandwidth (GB/s, out of place)'\n"
               "set yrange [0:*]\n"
               "set grid\n"
               "set key top left noenhanced\n");
    if (xmin > 0 && xmax > xmin)
        fprintf(s, "set xrange [%.17g:%.17g]\n", xmin, xmax);
    fprintf(s, "plot ");
    for (int i = 0; i < nseries; i++) {
        fprintf(s, "%s", i ? ", \\\n     " : "");
        rs_plot_quote(s, data);
        fprintf(s, " index %d using 1:2 with linespoints lw 2 pt 7 ps 0.6 title ", i);
        rs_plot_quote(s, series[i].title);
    }
    fprintf(s, "\n");
    if (fclose(s) != 0) {
        fprintf(err, "ringsim: --plot: cannot write %s: %s\n", script, strerror(errno));
        rc = RS_EXIT_USAGE;
        goto out;
    }

    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        FILE *l = freopen(log, "w", stderr); /* gnuplot's complaints, shown if it fails */
        (void)l;
        if (freopen("/dev/null", "w", stdout) == NULL)
            _exit(127);
        execlp("gnuplot", "gnuplot", script, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(err, "ringsim: --plot: gnuplot failed to write '%s'%s\n", path,
                pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 127 ? " (could not run gnuplot)" : ":");
        FILE *l = fopen(log, "r");
        char line[512];
        while (l && fgets(line, sizeof line, l))
            fprintf(err, "ringsim:   %s", line);
        if (l)
            fclose(l);
        rc = RS_EXIT_USAGE;
        goto out;
    }
    struct stat stt;
    if (stat(path, &stt) != 0 || stt.st_size == 0) {
        fprintf(err, "ringsim: --plot: gnuplot wrote nothing to '%s'\n", path);
        rc = RS_EXIT_USAGE;
    }
out:
    unlink(data);
    unlink(script);
    unlink(log);
    rmdir(dir);
    return rc;
}
