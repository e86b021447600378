/* mpi_allreduce.c — MPI_Allreduce timing loop (fp32 sum) printing nccl-tests-like rows; the reference for zmq_vs_mpi.sh. */
/*
 * Not part of the build (the project never depends on MPI): tests/bench/zmq_vs_mpi.sh compiles
 * it with mpicc. Timing is what `ringsim run --backend zmq` does: per size and placement
 * (out of place, then in place) `-w` untimed calls, a barrier, `-n` timed calls; each rank's
 * average per call, the slowest rank's printed. busbw = algbw * 2 (p-1) / p (nccl-tests).
 *
 * usage: mpi_allreduce [-b BYTES] [-e BYTES] [-f FACTOR] [-n ITERS] [-w WARMUP]   (K/M/G suffixes)
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t mb_parse_size(const char *s)
{
    char *end = NULL;
    double v = strtod(s, &end);
    switch (end && *end ? *end : 0) {
    case 'K': case 'k': v *= 1024.0; break;
    case 'M': case 'm': v *= 1024.0 * 1024.0; break;
    case 'G': case 'g': v *= 1024.0 * 1024.0 * 1024.0; break;
    default: break;
    }
    return (size_t)v;
}

/* The slowest rank's average seconds per call of `iters` allreduces. */
static double mb_time(const float *sb, float *rb, int count, int iters, int warmup, int in_place)
{
    const void *src = in_place ? MPI_IN_PLACE : (const void *)sb;
    for (int i = 0; i < warmup; i++)
        MPI_Allreduce(src, rb, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        MPI_Allreduce(src, rb, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double t = (MPI_Wtime() - t0) / (iters > 0 ? iters : 1), worst = 0;
    MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, nranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    size_t minb = 8, maxb = 64u << 20, factor = 2;
    int iters = 20, warmup = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-b"))
            minb = mb_parse_size(argv[i + 1]);
        else if (!strcmp(argv[i], "-e"))
            maxb = mb_parse_size(argv[i + 1]);
        else if (!strcmp(argv[i], "-f"))
            factor = (size_t)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-n"))
            iters = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-w"))
            warmup = atoi(argv[i + 1]);
    }
    if (factor < 2)
        factor = 2;
    if (minb < 4)
        minb = 4;
    float *sb = malloc(maxb), *rb = malloc(maxb);
    if (!sb || !rb) {
        fprintf(stderr, "mpi_allreduce: out of memory (%zu bytes)\n", maxb);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (size_t i = 0; i < maxb / sizeof(float); i++)
        sb[i] = rb[i] = (float)((i + (size_t)rank) % 17);
    if (rank == 0) {
        printf("# MPI_Allreduce float sum, %d ranks, %d iterations after %d warm-up\n", nranks, iters, warmup);
        printf("#%11s %13s %10s %8s %8s %10s %8s %8s\n", "size", "count", "oop us", "algbw", "busbw", "ip us",
               "algbw", "busbw");
    }
    double bus = 2.0 * (nranks - 1) / nranks;
    for (size_t bytes = minb; bytes <= maxb; bytes *= factor) {
        int count = (int)(bytes / sizeof(float));
        double t[2];
        for (int ip = 0; ip < 2; ip++)
            t[ip] = mb_time(sb, rb, count, iters, warmup, ip);
        if (rank == 0) {
            double a0 = (double)bytes / t[0] / 1e9, a1 = (double)bytes / t[1] / 1e9;
            printf("%12zu %13d %10.2f %8.2f %8.2f %10.2f %8.2f %8.2f\n", bytes, count, t[0] * 1e6, a0, a0 * bus,
                   t[1] * 1e6, a1, a1 * bus);
        }
    }
    free(sb);
    free(rb);
    MPI_Finalize();
    return 0;
}
