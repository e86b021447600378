/* rs_agents.h — the local agent processes a controller spawns (`ringsim run --backend zmq`, `ringsim bringup`): start, stop, reap. */
#ifndef RS_AGENTS_H
#define RS_AGENTS_H

#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Every spawned agent is in one process group (stopped as one) and dies with the controller
 * (PR_SET_PDEATHSIG); its backend's log is off unless NCL_ZMQ_LOG is set (the controller prints
 * every agent's failure with its rank). */
typedef struct rs_agents {
    pid_t pgid;   /**< the group: the first agent's pid (0: none started) */
    int spawned;  /**< set by the caller once all are started */
} rs_agents;

/** Starts /proc/self/exe with args (args[0] = "ringsim", args[1] = "agent", NULL-terminated) in
 *  g's group. The pid, or -1 (errno says why). */
pid_t rs_agents_start(rs_agents *g, char *const args[]);

/** Ends n spawned agents: the caller's reap() (waitpid WNOHANG on its agents, marking those that
 *  exited; returns how many still run) is polled for grace_s; then SIGTERM to the group and to
 *  each agent alive(ctx, r) still names (its pid, 0 once reaped), 2 s more; then SIGKILL; then the
 *  last ones are waited for. No process is left behind. Nothing when !g->spawned. */
void rs_agents_stop(const rs_agents *g, int n, double grace_s, int (*reap)(void *ctx),
                    pid_t (*alive)(void *ctx, int r), void *ctx);

#ifdef __cplusplus
}
#endif
#endif
