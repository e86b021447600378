/* rs_plan.h — predicted (and simulated) time of every algorithm at every size of a scenario,
 * and the one `auto` picks (`ringsim plan`). */
#ifndef RS_PLAN_H
#define RS_PLAN_H

#include <stdio.h>

#include "model/rs_spec.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Prints the plan of sc on out; simulate: each algorithm also runs on the model beside its
 *  prediction (one SystemC simulation: once per process). Returns an RS_EXIT_* status. */
int rs_plan_print(const rs_scenario *sc, int simulate, FILE *out, FILE *err);

#ifdef __cplusplus
}
#endif
#endif
