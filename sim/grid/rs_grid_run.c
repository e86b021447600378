/* rs_grid_run.c — runs a share of a grid's points, each `ringsim run POINT.yaml --json POINT.json` in a child process, `jobs` at a time; skips finished points; records each outcome. */
#define _POSIX_C_SOURCE 200809L
#include "rs_grid_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sweep/rs_sweep.h"

/* How many of a failed point's last stderr lines are kept in its status and shown. */
#define RS_GRID_ERR_LINES 4

char *rs_grid_slurp(const char *path, size_t *len)
{
    char why[200];
    size_t n = 0;
    char *text = rs_yaml_read_file(path, 64u << 20, &n, why, sizeof why);
    if (len)
        *len = n;
    return text;
}

cJSON *rs_grid_read_run(const char *path, int *ok)
{
    char *text = rs_grid_slurp(path, NULL);
    cJSON *doc = text ? cJSON_Parse(text) : NULL;
    free(text);
    const char *result = cJSON_GetStringValue(cJSON_GetObjectItem(doc, "result"));
    if (doc && (result == NULL || !cJSON_IsArray(cJSON_GetObjectItem(doc, "rows")))) {
        cJSON_Delete(doc);
        doc = NULL;
    }
    *ok = doc && strcmp(result, "OK") == 0;
    return doc;
}

void rs_grid_point_stem(const rs_grid *g, size_t p, char *buf, size_t len)
{
    char name[128];
    rs_grid_point_name(g, p, name, sizeof name);
    snprintf(buf, len, "%s/points/%s", g->out, name);
}

/* mkdir -p for the output directory and its points/. */
static int rs_grid_mkdirs(const char *dir, FILE *err)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/points/", dir) >= (int)sizeof path) {
        fprintf(err, "ringsim: sweep: output directory name too long: %s\n", dir);
        return RS_EXIT_USAGE;
    }
    for (char *s = path + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST) {
            fprintf(err, "ringsim: sweep: cannot create the directory '%s': %s\n", path, strerror(errno));
            return RS_EXIT_USAGE;
        }
        *s = '/';
    }
    return 0;
}

/* Writes a whole file (through a temporary name, so that no reader sees half of it). */
static int rs_grid_write(const char *path, const char *text, size_t len)
{
    char tmp[PATH_MAX + 64];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL)
        return -1;
    int ok = fwrite(text, 1, len, f) == len;
    ok &= fclose(f) == 0;
    return ok && rename(tmp, path) == 0 ? 0 : -1;
}

/* Whether point p needs to run: its YAML is new or changed, or its JSON is not complete and OK.
 * Writes the YAML when it changed and removes what an earlier run left. -1 on a write error. */
static int rs_grid_prepare(rs_grid *g, size_t p, int force, FILE *err)
{
    char stem[PATH_MAX], file[PATH_MAX + 16];
    size_t len = 0, oldlen = 0;
    rs_grid_point_stem(g, p, stem, sizeof stem);
    char *text = rs_grid_point_yaml(g, p, &len);
    if (text == NULL) {
        fprintf(err, "ringsim: sweep: %s\n", g->err);
        return -1;
    }
    snprintf(file, sizeof file, "%s.yaml", stem);
    char *old = rs_grid_slurp(file, &oldlen);
    int same = old && oldlen == len && memcmp(old, text, len) == 0, ok = 0;
    free(old);
    if (same && !force) {
        snprintf(file, sizeof file, "%s.json", stem);
        cJSON_Delete(rs_grid_read_run(file, &ok));
        if (ok) {
            free(text);
            return 0;
        }
    }
    /* the old outcome goes first: a merging process that sees the new YAML sees no stale result */
    for (const char *ext = ".json\0.status\0"; *ext; ext += strlen(ext) + 1) {
        snprintf(file, sizeof file, "%s%s", stem, ext);
        unlink(file);
    }
    snprintf(file, sizeof file, "%s.yaml", stem);
    if (!same && rs_grid_write(file, text, len) != 0) {
        fprintf(err, "ringsim: sweep: cannot write '%s': %s\n", file, strerror(errno));
        free(text);
        return -1;
    }
    free(text);
    return 1;
}

/* A running point. */
typedef struct rs_slot {
    pid_t pid;
    size_t point;
    double start;
    int timed_out;
} rs_slot;

static double rs_grid_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Starts `ringsim run STEM.yaml --json STEM.json` with stdout in STEM.log, stderr in STEM.err. */
static pid_t rs_grid_spawn(const char *self, const char *stem)
{
    char yaml[PATH_MAX + 16], json[PATH_MAX + 16], log[PATH_MAX + 16], errf[PATH_MAX + 16];
    snprintf(yaml, sizeof yaml, "%s.yaml", stem);
    snprintf(json, sizeof json, "%s.json", stem);
    snprintf(log, sizeof log, "%s.log", stem);
    snprintf(errf, sizeof errf, "%s.err", stem);
    fflush(NULL);
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    int in = open("/dev/null", O_RDONLY), o = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0666),
        e = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (in < 0 || o < 0 || e < 0 || dup2(in, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
        _exit(126);
    char *argv[] = {"ringsim", "run", yaml, "--json", json, NULL};
    execv(self, argv);
    fprintf(stderr, "ringsim: sweep: cannot run %s: %s\n", self, strerror(errno));
    _exit(127);
}

/* The last lines of a point's stderr, joined by newlines (malloc'ed). */
static char *rs_grid_tail(const char *stem)
{
    char file[PATH_MAX + 16];
    snprintf(file, sizeof file, "%s.err", stem);
    size_t len = 0;
    char *text = rs_grid_slurp(file, &len);
    if (text == NULL)
        return strdup("");
    while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
        text[--len] = '\0';
    size_t from = len;
    for (int lines = 0; from > 0 && lines < RS_GRID_ERR_LINES; from--)
        lines += text[from - 1] == '\n';
    memmove(text, text + from + (text[from] == '\n'), len - from + 1);
    return text;
}

/* Writes STEM.status: how the point ended, for the merge (which may run in another process). */
static void rs_grid_status(const char *stem, size_t p, int st, const rs_slot *s, double seconds, const char *error)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "point", (double)p);
    if (!s->timed_out && WIFEXITED(st))
        cJSON_AddNumberToObject(o, "exit", WEXITSTATUS(st));
    else
        cJSON_AddNullToObject(o, "exit");
    if (!s->timed_out && WIFSIGNALED(st))
        cJSON_AddNumberToObject(o, "signal", WTERMSIG(st));
    cJSON_AddBoolToObject(o, "timed_out", s->timed_out);
    cJSON_AddNumberToObject(o, "seconds", seconds);
    if (error)
        cJSON_AddStringToObject(o, "error", error);
    char *text = cJSON_Print(o), file[PATH_MAX + 16];
    snprintf(file, sizeof file, "%s.status", stem);
    if (text)
        rs_grid_write(file, text, strlen(text));
    free(text);
    cJSON_Delete(o);
}

/* A point has ended: its status written, a line on out, and on err what a failure said. */
static int rs_grid_ended(rs_grid *g, const rs_slot *s, int st, double timeout_s, size_t done, size_t total,
                         int quiet, FILE *out, FILE *err)
{
    char stem[PATH_MAX], name[128], label[1024], how[160];
    rs_grid_point_stem(g, s->point, stem, sizeof stem);
    rs_grid_point_name(g, s->point, name, sizeof name);
    double seconds = rs_grid_now() - s->start;
    int failed = s->timed_out || !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    char *tail = failed ? rs_grid_tail(stem) : NULL;
    if (s->timed_out)
        snprintf(how, sizeof how, "killed after the timeout of %g s", timeout_s);
    else if (WIFSIGNALED(st))
        snprintf(how, sizeof how, "killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
    else
        snprintf(how, sizeof how, "exit status %d", WEXITSTATUS(st));
    char *error = NULL;
    if (failed && (error = malloc(strlen(how) + strlen(tail ? tail : "") + 4)) != NULL)
        sprintf(error, "%s%s%s", how, tail && *tail ? ": " : "", tail ? tail : "");
    rs_grid_status(stem, s->point, st, s, seconds, error);
    if (!quiet)
        fprintf(out, "sweep: [%zu/%zu] %s: %s (%.2f s)\n", done, total, name, failed ? "FAILED" : "ok", seconds);
    if (failed) {
        rs_grid_point_label(g, s->point, label, sizeof label);
        fprintf(err, "ringsim: sweep: point %zu (%s) failed: %s%s\n", s->point, label, how,
                tail && *tail ? "; its last lines of stderr:" : "");
        for (char *line = tail; line && *line;) {
            size_t n = strcspn(line, "\n");
            fprintf(err, "ringsim:   %.*s\n", (int)n, line);
            line += n + (line[n] == '\n');
        }
        fprintf(err, "ringsim:   (all of it: %s.err; the point's scenario: %s.yaml)\n", stem, stem);
    }
    fflush(out);
    free(tail);
    free(error);
    return failed;
}

/* Runs the queued points, up to jobs at a time, killing any past the timeout. */
static void rs_grid_pool(rs_grid *g, const size_t *queue, size_t n, const rs_grid_run_opts *opts, const char *self,
                         rs_grid_tally *t, FILE *out, FILE *err)
{
    rs_slot *slots = calloc((size_t)opts->jobs, sizeof *slots);
    size_t next = 0, done = 0;
    int running = 0;
    if (slots == NULL) {
        fprintf(err, "ringsim: sweep: out of memory\n");
        t->failed += n;
        return;
    }
    while (next < n || running > 0) {
        for (int i = 0; i < opts->jobs && next < n; i++) {
            if (slots[i].pid > 0)
                continue;
            char stem[PATH_MAX];
            rs_grid_point_stem(g, queue[next], stem, sizeof stem);
            slots[i] = (rs_slot){rs_grid_spawn(self, stem), queue[next++], rs_grid_now(), 0};
            if (slots[i].pid < 0) { /* no process: the point fails as if it had exited 127 */
                fprintf(err, "ringsim: sweep: cannot start a process: %s\n", strerror(errno));
                rs_grid_ended(g, &slots[i], 127 << 8, 0, ++done, n, opts->quiet, out, err);
                t->run++, t->failed++;
                slots[i].pid = 0;
                continue;
            }
            running++;
        }
        int reaped = 0;
        for (int i = 0; i < opts->jobs; i++) {
            int st = 0;
            if (slots[i].pid <= 0)
                continue;
            pid_t w = waitpid(slots[i].pid, &st, WNOHANG);
            if (w == slots[i].pid || (w < 0 && errno != EINTR)) {
                t->run++;
                t->failed += (size_t)rs_grid_ended(g, &slots[i], w < 0 ? 127 << 8 : st, opts->timeout_s, ++done,
                                                   n, opts->quiet, out, err);
                slots[i].pid = 0;
                running--;
                reaped = 1;
            } else if (opts->timeout_s > 0 && !slots[i].timed_out &&
                       rs_grid_now() - slots[i].start > opts->timeout_s) {
                kill(slots[i].pid, SIGKILL); /* reaped on a later pass */
                slots[i].timed_out = 1;
            }
        }
        if (!reaped && running > 0)
            nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    free(slots);
}

int rs_grid_run(rs_grid *g, const rs_grid_run_opts *opts, rs_grid_tally *t, FILE *out, FILE *err)
{
    memset(t, 0, sizeof *t);
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        fprintf(err, "ringsim: sweep: cannot find this program's binary (/proc/self/exe): %s\n", strerror(errno));
        return RS_EXIT_USAGE;
    }
    self[n] = '\0';
    if (rs_grid_mkdirs(g->out, err) != 0)
        return RS_EXIT_USAGE;
    size_t *queue = calloc(g->npoints, sizeof *queue), nq = 0;
    if (queue == NULL) {
        fprintf(err, "ringsim: sweep: out of memory\n");
        return RS_EXIT_USAGE;
    }
    for (size_t p = (size_t)opts->rank; p < g->npoints; p += (size_t)opts->nranks) {
        t->mine++;
        int need = rs_grid_prepare(g, p, opts->force, err);
        if (need < 0) {
            free(queue);
            return RS_EXIT_USAGE;
        }
        if (need)
            queue[nq++] = p;
        else
            t->skipped++;
    }
    rs_grid_pool(g, queue, nq, opts, self, t, out, err);
    free(queue);
    return 0;
}
