/* params.h — C entry point to the model's component tables (parameters, ports, statistics). */
#ifndef MODEL_PARAMS_H
#define MODEL_PARAMS_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Print every component type's parameter, port and statistic table to `out` (`ringsim params`). */
void model_params_print(FILE *out);

#ifdef __cplusplus
}
#endif
#endif
