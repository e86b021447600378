/* rs_train.h — `ringsim train`: the data-parallel example's command line. */
#ifndef RS_TRAIN_H
#define RS_TRAIN_H

#include "dp/dp_train.h"

#ifdef __cplusplus
extern "C" {
#endif

/** argv[0] is the command's name ("train"), options follow. sim runs the N ranks on a scenario's
 *  simulated machine for --scenario (its ud is the scenario's path); NULL: no --scenario. Exit
 *  status: 0 the runs agree within tolerance (and bit-exactly in --deterministic mode), 1 they do
 *  not, 2 usage or an output file that cannot be written, 3 a run failed. */
int rs_train_main(int argc, char **argv, dp_runner sim);

#ifdef __cplusplus
}
#endif
#endif
