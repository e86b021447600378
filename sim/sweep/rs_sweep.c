/* rs_sweep.c — the sweep's defaults and its size sequence. */
#include "rs_sweep.h"

#include <string.h>

void rs_sweep_defaults(rs_sweep *s)
{
    memset(s, 0, sizeof *s);
    s->backend = RS_BACKEND_HOST;
    s->minbytes = 8;
    s->maxbytes = 16ull << 20;
    s->stepfactor = 2;
    s->stepbytes = 1ull << 20;
    s->iters = 20;
    s->warmup_iters = 5;
    s->check = 1;
    s->nops = 1;
    s->ops[0] = NCL_SUM;
    s->ndtypes = 1;
    s->dtypes[0] = NCL_FLOAT32;
    s->ncolls = 2;
    s->colls[0] = NCL_COLL_ALLREDUCE;
    s->colls[1] = NCL_COLL_BROADCAST;
    s->root = 0;
    s->nranks = 8;
    s->algo = NCL_ALGO_AUTO;
    s->channels = 2;
    s->seed = 1;
    s->memprobe = 1;
}

int rs_sweep_next_size(const rs_sweep *s, uint64_t size, uint64_t *next)
{
    if (s->stepfactor > 1) {
        if (size == 0)
            *next = 1;
        else if (size > s->maxbytes / s->stepfactor)
            return 0;
        else
            *next = size * s->stepfactor;
    } else {
        if (s->maxbytes - size < s->stepbytes)
            return 0;
        *next = size + s->stepbytes;
    }
    return *next <= s->maxbytes;
}

const char *rs_backend_name(rs_backend b)
{
    return b == RS_BACKEND_SIM ? "sim" : b == RS_BACKEND_ZMQ ? "zmq" : "host";
}
