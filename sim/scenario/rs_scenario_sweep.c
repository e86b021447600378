/* rs_scenario_sweep.c — a scenario's workload as the sweep every backend and the report speak. */
#include "rs_scenario.h"

void rs_scenario_sweep(const rs_scenario *sc, rs_sweep *s)
{
    const rs_workload *w = &sc->workload;
    rs_sweep_defaults(s);
    s->backend = RS_BACKEND_SIM;
    s->minbytes = w->begin_bytes;
    s->maxbytes = w->end_bytes;
    s->stepfactor = w->factor;
    s->iters = w->iters;
    s->warmup_iters = w->warmup;
    s->check = sc->payload_real;
    s->nops = 1;
    s->ops[0] = w->op;
    s->ndtypes = 1;
    s->dtypes[0] = w->dtype;
    s->ncolls = w->colls_count;
    for (int i = 0; i < s->ncolls; i++)
        s->colls[i] = w->colls[i];
    s->root = w->root;
    s->channels = w->channels ? w->channels : s->channels;
    s->nranks = sc->topo.nranks;
    s->algo = w->algo;
    s->seed = sc->seed;
    s->memprobe = 0;
    s->deterministic = w->deterministic;
    s->wide_accumulation = w->wide_accumulation;
}
