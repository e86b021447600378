/* rs_junit.c — collects testcases and writes them as one JUnit XML testsuite (the format Jenkins, GitLab and GitHub read). */
#include "rs_junit.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct rs_case {
    char *classname, *name, *failure; /* failure NULL: passed */
    double time_s;
} rs_case;

struct rs_junit {
    char *suite;
    rs_case *v;
    size_t n, cap;
    int oom;
};

static char *rs_dup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

rs_junit *rs_junit_new(const char *suite)
{
    rs_junit *j = calloc(1, sizeof *j);
    if (j && !(j->suite = rs_dup(suite))) {
        free(j);
        return NULL;
    }
    return j;
}

int rs_junit_add(rs_junit *j, const char *classname, const char *name, double time_s, const char *failure)
{
    if (j->n == j->cap) {
        size_t cap = j->cap ? 2 * j->cap : 64;
        rs_case *v = realloc(j->v, cap * sizeof *v);
        if (!v)
            return j->oom = 1, -1;
        j->v = v;
        j->cap = cap;
    }
    rs_case c = {rs_dup(classname), rs_dup(name), failure ? rs_dup(failure) : NULL, time_s};
    if (!c.classname || !c.name || (failure && !c.failure)) {
        free(c.classname), free(c.name), free(c.failure);
        return j->oom = 1, -1;
    }
    j->v[j->n++] = c;
    return 0;
}

/* Text as XML character data or attribute value: markup escaped, control bytes (not allowed in
 * XML 1.0) replaced. */
static void rs_xml(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(c < 0x20 && c != '\n' && c != '\t' ? '?' : c, f); break;
        }
    }
}

void rs_junit_free(rs_junit *j)
{
    if (!j)
        return;
    for (size_t i = 0; i < j->n; i++)
        free(j->v[i].classname), free(j->v[i].name), free(j->v[i].failure);
    free(j->v);
    free(j->suite);
    free(j);
}

int rs_junit_try(const char *path, const char *who, FILE *err)
{
    FILE *f = path ? fopen(path, "w") : NULL;
    if (path && !f)
        fprintf(err, "%s: --junit: cannot write '%s': %s\n", who, path, strerror(errno));
    if (f)
        fclose(f);
    return !path || f != NULL;
}

int rs_junit_write(rs_junit *j, const char *path, FILE *err)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(err, "ringsim: --junit: cannot write '%s': %s\n", path, strerror(errno));
        rs_junit_free(j);
        return 2;
    }
    size_t failures = j->oom;
    double total = 0;
    for (size_t i = 0; i < j->n; i++) {
        failures += j->v[i].failure != NULL;
        total += j->v[i].time_s > 0 ? j->v[i].time_s : 0;
    }
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n<testsuite name=\"", f);
    rs_xml(f, j->suite);
    fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" time=\"%.9g\">\n", j->n + (size_t)j->oom, failures,
            total);
    for (size_t i = 0; i < j->n; i++) {
        const rs_case *c = &j->v[i];
        fputs("  <testcase classname=\"", f);
        rs_xml(f, c->classname);
        fputs("\" name=\"", f);
        rs_xml(f, c->name);
        fprintf(f, "\" time=\"%.9g\"", c->time_s > 0 ? c->time_s : 0.0);
        if (!c->failure) {
            fputs("/>\n", f);
            continue;
        }
        fputs(">\n    <failure message=\"", f);
        rs_xml(f, c->failure);
        fputs("\">", f);
        rs_xml(f, c->failure);
        fputs("</failure>\n  </testcase>\n", f);
    }
    if (j->oom) /* a case could not be kept: never a green file for an incomplete run */
        fputs("  <testcase classname=\"ringsim\" name=\"report\"><failure message=\"out of memory while "
              "collecting the testcases\"/></testcase>\n", f);
    fputs("</testsuite>\n</testsuites>\n", f);
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    rs_junit_free(j);
    if (bad) {
        fprintf(err, "ringsim: --junit: cannot write '%s': %s\n", path, strerror(errno));
        return 2;
    }
    return 0;
}
