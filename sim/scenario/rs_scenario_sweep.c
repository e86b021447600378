/* rs_scenario_sweep.c — a scenario's workload as the sweep every backend and the report speak, and its sizes. */
#include "rs_scenario.h"

void rs_scenario_sweep(const rs_scenario *sc, rs_sweep *s)
{
    const rs_workload *w = &sc->workload;
    rs_sweep_defaults(s);
    s->backend = RS_BACKEND_SIM;
    s->minbytes = w->begin_bytes;
    s->maxbytes = w->end_bytes;
    s->stepfactor = w->step_bytes ? 0 : w->factor;
    s->stepbytes = w->step_bytes;
    s->iters = w->iters;
    s->warmup_iters = w->warmup;
    s->check = sc->payload_real;
    s->nops = 1;
    s->ops[0] = w->op;
    s->ndtypes = 1;
    s->dtypes[0] = w->dtype;
    s->ncolls = w->colls_count;
    for (int i = 0; i < s->ncolls; i++)
        s->colls[i] = (rs_coll)w->colls[i];
    s->a2av_skew = w->a2av_skew;
    s->root = w->root;
    s->channels = w->channels ? w->channels : s->channels;
    s->nranks = sc->topo.nranks;
    s->algo = w->algo;
    s->seed = sc->seed;
    s->memprobe = 0;
    s->deterministic = w->deterministic;
    s->wide_accumulation = w->wide_accumulation;
}

int rs_scenario_next_size(const rs_workload *w, uint64_t size, uint64_t *next)
{
    if (w->step_bytes) {
        if (size >= w->end_bytes || w->end_bytes - size < w->step_bytes)
            return 0;
        *next = size + w->step_bytes;
        return 1;
    }
    if (w->factor < 2 || size == 0 || size > w->end_bytes / w->factor)
        return 0;
    *next = size * w->factor;
    return 1;
}

uint32_t rs_scenario_size_count(const rs_workload *w)
{
    if (w->begin_bytes == 0 || w->begin_bytes > w->end_bytes)
        return 0;
    uint32_t n = 1;
    for (uint64_t s = w->begin_bytes; n <= RS_MAX_SIZES && rs_scenario_next_size(w, s, &s);)
        n++;
    return n;
}
