/* rs_state_json.h — an engine's state (ncl_rank_state) as the JSON an agent's STATE reply carries, both ways. */
#ifndef RS_STATE_JSON_H
#define RS_STATE_JSON_H

#include <cjson/cJSON.h>

#include "ncl/ncl_diag.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Adds st as the object "comm" of j (the agent's side). */
void rs_state_to_json(cJSON *j, const ncl_rank_state *st);

/** Reads the object "comm" of j back into *st for rank (the controller's side). 0, or -1 when j
 *  has no "comm" object. Missing numbers read as 0: a reply is checked, never trusted. */
int rs_state_from_json(const cJSON *j, int rank, ncl_rank_state *st);

#ifdef __cplusplus
}
#endif
#endif
