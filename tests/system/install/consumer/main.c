/* main.c — external consumer of an installed ringsim: a checked 3-rank int32 sum allreduce on the host backend. */
#include <ncl/ncl_host.h>

#include <stdint.h>
#include <stdio.h>

#define NRANKS 3
#define COUNT 1031 /* prime: not a multiple of the rank count, so the ring splits unevenly */

typedef struct {
    int wrong[NRANKS]; /* each rank writes only its own slot */
} shared_result;

static ncl_result rank_main(ncl_comm *comm, void *arg)
{
    shared_result *res = arg;
    _Alignas(64) int32_t send[COUNT];
    _Alignas(64) int32_t recv[COUNT];
    int rank = -1, nranks = 0;
    ncl_result r = ncl_comm_rank(comm, &rank);
    if (r == NCL_SUCCESS)
        r = ncl_comm_size(comm, &nranks);
    if (r != NCL_SUCCESS)
        return r;
    for (int i = 0; i < COUNT; i++) {
        send[i] = (rank + 1) * (i % 97);
        recv[i] = -1;
    }
    r = ncl_allreduce(send, recv, COUNT, NCL_INT32, NCL_SUM, comm);
    if (r != NCL_SUCCESS) {
        fprintf(stderr, "rank %d: ncl_allreduce: %s (%s)\n", rank, ncl_strerror(r),
                ncl_comm_last_error(comm));
        return r;
    }
    int sum_ranks = nranks * (nranks + 1) / 2;
    for (int i = 0; i < COUNT; i++)
        if (recv[i] != sum_ranks * (i % 97))
            res->wrong[rank]++;
    return NCL_SUCCESS;
}

int main(void)
{
    shared_result res = {{0}};
    ncl_result r = ncl_host_run(NRANKS, rank_main, &res);
    if (r != NCL_SUCCESS) {
        fprintf(stderr, "consumer: ncl_host_run: %s\n", ncl_strerror(r));
        return 1;
    }
    int wrong = 0;
    for (int i = 0; i < NRANKS; i++)
        wrong += res.wrong[i];
    if (wrong != 0) {
        fprintf(stderr, "consumer: %d wrong values\n", wrong);
        return 1;
    }
    printf("consumer: %d-rank allreduce of %d int32 correct\n", NRANKS, COUNT);
    return 0;
}
