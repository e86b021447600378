/* rs_plan.h — `ringsim plan SCENARIO [--simulate]`: predicted (and simulated) time of every
 * algorithm at every size of a scenario, and the one `auto` picks. */
#ifndef RS_PLAN_H
#define RS_PLAN_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** argv: the arguments after `plan`. Returns an RS_EXIT_* status. */
int rs_plan_cmd(int argc, char **argv, FILE *out, FILE *err);

#ifdef __cplusplus
}
#endif
#endif
