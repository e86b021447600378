/* rs_state_json.c — ncl_rank_state to and from the JSON of STATE replies: the field names once, both directions side by side. */
#include "rs_state_json.h"

#include <string.h>

/* The wait fields, as JSON names them. */
#define RS_WAIT_FIELDS(X, j, s)                                                                      \
    X(j, s, queue) X(j, s, step) X(j, s, task) X(j, s, kind) X(j, s, peer) X(j, s, notify) X(j, s, count)         \
        X(j, s, waited_ns)
/* The communicator's, besides its waits. */
#define RS_COMM_FIELDS(X, j, s) X(j, s, seq) X(j, s, coll) X(j, s, algo) X(j, s, phase) X(j, s, result)
#define RS_PUT(j, s, f) cJSON_AddNumberToObject(j, #f, (double)(s)->f);
#define RS_GET(j, s, f) (s)->f = (__typeof__((s)->f))rs_num(j, #f);

static double rs_num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : 0.0;
}

void rs_state_to_json(cJSON *j, const ncl_rank_state *st)
{
    cJSON *c = cJSON_AddObjectToObject(j, "comm");
    RS_COMM_FIELDS(RS_PUT, c, st)
    cJSON *ws = cJSON_AddArrayToObject(c, "waits");
    for (uint32_t i = 0; i < st->nwaits && i < NCL_MAX_QUEUES; i++) {
        const ncl_wait_info *w = &st->waits[i];
        cJSON *x = cJSON_CreateObject();
        RS_WAIT_FIELDS(RS_PUT, x, w)
        cJSON_AddItemToArray(ws, x);
    }
}

int rs_state_from_json(const cJSON *j, int rank, ncl_rank_state *st)
{
    const cJSON *c = j ? cJSON_GetObjectItemCaseSensitive(j, "comm") : NULL;
    if (!cJSON_IsObject(c))
        return -1;
    memset(st, 0, sizeof *st);
    st->rank = rank;
    RS_COMM_FIELDS(RS_GET, c, st)
    const cJSON *ws = cJSON_GetObjectItemCaseSensitive(c, "waits");
    for (const cJSON *x = cJSON_IsArray(ws) ? ws->child : NULL; x && st->nwaits < NCL_MAX_QUEUES; x = x->next) {
        ncl_wait_info *w = &st->waits[st->nwaits++];
        RS_WAIT_FIELDS(RS_GET, x, w)
    }
    return 0;
}
