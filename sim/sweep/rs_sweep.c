/* rs_sweep.c — the sweep's collectives, defaults and size sequence. */
#include "rs_sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const ncl_name rs_coll_extra_names[RS_COLL_EXTRA_COUNT] = {{"alltoallv", RS_COLL_ALLTOALLV, 0},
                                                            {"sendrecv", RS_COLL_SENDRECV, 0}};

ncl_coll rs_coll_engine(rs_coll c)
{
    return c == RS_COLL_ALLTOALLV ? NCL_COLL_ALLTOALL : c == RS_COLL_SENDRECV ? NCL_COLL_BROADCAST : (ncl_coll)c;
}

const char *rs_coll_name(rs_coll c)
{
    for (int i = 0; i < RS_COLL_EXTRA_COUNT; i++)
        if ((int)c == rs_coll_extra_names[i].value)
            return rs_coll_extra_names[i].name;
    return ncl_coll_name((ncl_coll)c);
}

int rs_coll_parse(const char *text, rs_coll *out)
{
    int v;
    if (ncl_name_parse(NCL_NAMES_COLL, text, &v) == 0) {
        *out = (rs_coll)v;
        return 0;
    }
    for (int i = 0; text && i < RS_COLL_EXTRA_COUNT; i++)
        if (strcmp(text, rs_coll_extra_names[i].name) == 0) {
            *out = (rs_coll)rs_coll_extra_names[i].value;
            return 0;
        }
    return -1;
}

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
    s->colls[0] = (rs_coll)NCL_COLL_ALLREDUCE;
    s->colls[1] = (rs_coll)NCL_COLL_BROADCAST;
    s->a2av_skew = RS_A2AV_SKEW_DEFAULT;
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

int rs_sweep_sizes(const rs_sweep *s, size_t max, uint64_t **out, size_t *n, char *why, size_t whylen)
{
    size_t k = 1;
    for (uint64_t size = s->minbytes; k <= max && rs_sweep_next_size(s, size, &size);)
        k++;
    if (k > max) {
        snprintf(why, whylen, "%s: %llu B steps from %llu to %llu B give more than %zu sizes (allowed: a sweep "
                 "of at most %zu sizes; use -f or a larger -i)", s->stepfactor > 1 ? "-f" : "-i",
                 (unsigned long long)(s->stepfactor > 1 ? s->stepfactor : s->stepbytes),
                 (unsigned long long)s->minbytes, (unsigned long long)s->maxbytes, max, max);
        return -1;
    }
    uint64_t *v = malloc(k * sizeof *v);
    if (v == NULL) {
        snprintf(why, whylen, "cannot allocate the list of %zu sizes", k);
        return -1;
    }
    v[0] = s->minbytes;
    for (size_t i = 1; i < k; i++)
        rs_sweep_next_size(s, v[i - 1], &v[i]);
    *out = v;
    *n = k;
    return 0;
}

const char *rs_backend_name(rs_backend b)
{
    return b == RS_BACKEND_SIM ? "sim" : b == RS_BACKEND_ZMQ ? "zmq" : "host";
}
