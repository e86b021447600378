/* rs_memprobe.c — measures single-thread memcpy bandwidth on warm buffers, best of a few runs. */
#define _POSIX_C_SOURCE 200809L
#include "rs_memprobe.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Each timed run copies at least this much (repeating small copies) ... */
#define RS_PROBE_MIN_BYTES (4u << 20)
/* ... and the best of this many runs is kept: the machine is shared and noisy. */
#define RS_PROBE_RUNS 5

struct rs_memprobe {
    size_t max_bytes;
    unsigned char *src, *dst;
};

static double rs_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

rs_memprobe *rs_memprobe_create(size_t max_bytes)
{
    rs_memprobe *p = calloc(1, sizeof *p);
    if (p)
        p->max_bytes = max_bytes;
    return p;
}

/* Buffers come on first use: a run refused for its size must not have touched them. */
static int rs_memprobe_ready(rs_memprobe *p)
{
    if (p->src)
        return 0;
    size_t alloc = (p->max_bytes + 63) / 64 * 64;
    if (alloc == 0)
        alloc = 64;
    p->src = aligned_alloc(64, alloc);
    p->dst = aligned_alloc(64, alloc);
    if (p->src == NULL || p->dst == NULL) {
        free(p->src);
        free(p->dst);
        p->src = p->dst = NULL;
        return -1;
    }
    /* touch every page so the first timed copy does not pay for page faults */
    memset(p->src, 0x5a, alloc);
    memset(p->dst, 0, alloc);
    return 0;
}

void rs_memprobe_destroy(rs_memprobe *p)
{
    if (p == NULL)
        return;
    free(p->src);
    free(p->dst);
    free(p);
}

double rs_memprobe_gbps(rs_memprobe *p, size_t bytes)
{
    if (p == NULL || bytes == 0 || bytes > p->max_bytes || rs_memprobe_ready(p) != 0)
        return -1.0;
    /* through a volatile pointer so the compiler cannot merge the repeated identical copies */
    void *(*volatile copy)(void *, const void *, size_t) = memcpy;
    size_t reps = RS_PROBE_MIN_BYTES / bytes;
    if (reps < 1)
        reps = 1;
    copy(p->dst, p->src, bytes); /* warm the caches/TLB for this size */
    double best = 0.0;
    for (int run = 0; run < RS_PROBE_RUNS; run++) {
        double t0 = rs_now_s();
        for (size_t r = 0; r < reps; r++)
            copy(p->dst, p->src, bytes);
        double dt = rs_now_s() - t0;
        if (dt > 0) {
            double gbps = (double)bytes * (double)reps / dt / 1e9;
            if (gbps > best)
                best = gbps;
        }
    }
    return best;
}
