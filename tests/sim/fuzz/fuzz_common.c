/* fuzz_common.c — the helpers of fuzz.h: failing invariants, located messages, inputs as files. */
#define _POSIX_C_SOURCE 200809L
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void fuzz_fail(const char *file, int line, const char *cond, const char *detail)
{
    fprintf(stderr, "%s:%d: invariant broken: %s%s%s\n", file, line, cond, detail ? "\n  " : "", detail ? detail : "");
    abort();
}

/* Length of ":LINE: X" at p (a number, then ": " and at least one character), else 0. */
static size_t fuzz_line_mark(const char *p)
{
    size_t n = 1;
    if (p[0] != ':')
        return 0;
    while (p[n] >= '0' && p[n] <= '9')
        n++;
    return n > 1 && p[n] == ':' && p[n + 1] == ' ' && p[n + 2] != '\0' ? n + 2 : 0;
}

int fuzz_located(const char *msg, const char *file)
{
    if (msg[0] == '\0' || strchr(msg, '\n') != NULL)
        return 0;
    if (file != NULL)
        return strncmp(msg, file, strlen(file)) == 0 && fuzz_line_mark(msg + strlen(file)) != 0;
    for (const char *p = strchr(msg, ':'); p != NULL; p = strchr(p + 1, ':'))
        if (p != msg && fuzz_line_mark(p) != 0)
            return 1;
    return 0;
}

const char *fuzz_as_file(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        const char *dir = getenv("TMPDIR");
        char tmpl[512];
        snprintf(tmpl, sizeof tmpl, "%s/ringsim-fuzz-XXXXXX", dir && dir[0] ? dir : "/tmp");
        fd = mkstemp(tmpl);
        FUZZ_CHECK_MSG(fd >= 0, tmpl);
        unlink(tmpl);
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    FUZZ_CHECK(ftruncate(fd, 0) == 0);
    FUZZ_CHECK(size == 0 || pwrite(fd, data, size, 0) == (ssize_t)size);
    return path;
}
