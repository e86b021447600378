/* rs_zmqrun.h — `ringsim run --backend zmq`: the controller of a multi-process run. */
#ifndef RS_ZMQRUN_H
#define RS_ZMQRUN_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** 1 if the arguments of `run` ask for the zmq backend (--backend zmq or --backend=zmq). */
int rs_zmqrun_wanted(int argc, char **argv);

/** `ringsim run --backend zmq [--ranks N | --ranktable FILE] [--connect-timeout S] [SCENARIO] [flags]`:
 *  spawns N local agents over ipc:// (or talks to the agents a rank table lists), runs the
 *  workload, prints the nccl-tests table with #wrong and returns the exit status. Leaves no
 *  spawned agent behind on success, failure or SIGINT/SIGTERM. */
int rs_zmqrun_cmd(int argc, char **argv, FILE *out, FILE *err);

#ifdef __cplusplus
}
#endif
#endif
