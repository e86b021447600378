/* replay.c — the corpus replay of the suite: runs a fuzz target's entry over every file named (a directory: every file under it), no libFuzzer needed. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

/* The whole file in an exact-size heap block (a read past the end is then an ASan error, not a
 * lucky NUL, as with libFuzzer's own copies), or NULL. */
static uint8_t *replay_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 4096, used = 0, got = 0;
    uint8_t *buf = malloc(cap);
    while (buf != NULL && (got = fread(buf + used, 1, cap - used, f)) > 0) {
        used += got;
        if (used == cap) {
            uint8_t *nb = realloc(buf, cap *= 2);
            if (nb == NULL)
                free(buf);
            buf = nb;
        }
    }
    int bad = ferror(f);
    fclose(f);
    uint8_t *exact = buf && !bad ? realloc(buf, used ? used : 1) : NULL;
    if (exact == NULL)
        free(buf);
    *len = used;
    return exact;
}

/* Runs the entry on one file, or on every file under a directory (in name order; hidden ones
 * skipped). Returns the number of inputs run, or -1 after a message when something cannot be read. */
static long replay_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: %s: cannot stat\n", path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        size_t len = 0;
        uint8_t *data = replay_read(path, &len);
        if (data == NULL) {
            fprintf(stderr, "replay: %s: cannot read\n", path);
            return -1;
        }
        printf("%s\n", path); /* before the run: a crash then names its input */
        fflush(stdout);
        LLVMFuzzerTestOneInput(data, len);
        free(data);
        return 1;
    }
    struct dirent **names = NULL;
    int n = scandir(path, &names, NULL, alphasort);
    long runs = n < 0 ? -1 : 0;
    for (int i = 0; i < n; i++) {
        if (runs >= 0 && names[i]->d_name[0] != '.') {
            char sub[4096];
            snprintf(sub, sizeof sub, "%s/%s", path, names[i]->d_name);
            long r = replay_path(sub);
            runs = r < 0 ? -1 : runs + r;
        }
        free(names[i]);
    }
    free(names);
    return runs;
}

int main(int argc, char **argv)
{
    long runs = 0;
    for (int i = 1; i < argc && runs >= 0; i++) {
        long r = replay_path(argv[i]);
        runs = r < 0 ? -1 : runs + r;
    }
    /* no input at all would pass vacuously: a lost seed directory must fail the test */
    if (runs <= 0) {
        fprintf(stderr, "replay: %s\n", runs < 0 ? "stopped (see above)" : "no input given or found");
        return 1;
    }
    printf("replay: %ld inputs, no crash, no broken invariant\n", runs);
    return 0;
}
