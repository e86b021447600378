/* rs_ctl.h — the controller's side of agents: spawn local ones or reach a rank table's, one control socket each, requests and replies with limits, orderly stop. */
#ifndef RS_CTL_H
#define RS_CTL_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "rs_ranktable.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Exit status of a controller stopped by SIGINT/SIGTERM. */
#define RS_CTL_EXIT_INTERRUPTED 130

/** One agent as its controller sees it. */
typedef struct rs_ctl_agent {
    void *req;          /**< REQ socket on the agent's control endpoint (relaxed, correlated) */
    pid_t pid;          /**< 0: not spawned by this controller (a rank table's) */
    int exited;         /**< spawned and reaped */
    int waiting;        /**< a request is out, no reply yet */
    int failed;         /**< the last request failed: error says why */
    int lost;           /**< died or did not answer in time: never asked again */
    uint64_t seq;
    uint8_t cmd;        /**< the command of the last request */
    cJSON *reply;       /**< its JSON reply (NULL for HELLO, or when it failed) */
    char error[1600];
} rs_ctl_agent;

/** Which agents, and how spawned ones are started (`ringsim agent --ranks N --rank R --job JOB ...`). */
typedef struct rs_ctl_opts {
    int spawn;                /**< 1: start n local agents over ipc://; 0: the ones c->table lists */
    double connect_s;         /**< how long agents may take to reach their peers (HELLO waits this,
                                   and 5 s more for spawned ones to start) */
    double timeout_s;         /**< spawned agents' engine notify-wait limit */
    uint32_t channels;
    const char *backend;      /**< "zmq" or "mmio" (an emulated board each) */
    const char *job_prefix;   /**< the job name when RINGSIM_JOB is unset: prefix + pid */
    char (*faults)[64];       /**< per rank `--fault SPEC` ("" none), or NULL */
} rs_ctl_opts;

typedef struct rs_ctl {
    int n;
    rs_ranktable table;
    rs_ctl_agent *ag;
    void *ctx;
    pid_t pgid;               /**< spawned agents' process group (0: none) */
    uint32_t max_reply;       /**< largest reply accepted, bytes */
    double grace_s;           /**< once an agent failed, wait at most this for the others' replies (0: limit only) */
    int shutting;             /**< SHUTDOWN is out: an agent that exits is not a failure */
    const char *who;          /**< prefix of this controller's messages: "ringsim", "ringsim bringup" */
    FILE *err;
    int signals;              /**< rs_ctl_start installed its SIGINT/SIGTERM handlers */
    struct sigaction old_int, old_term;
} rs_ctl;

/** Brings up c->n agents: spawns them over ipc:// (o->spawn), else reaches the ones c->table
 *  lists (loaded by the caller); connects a control socket to each and sends HELLO,
 *  which an agent answers once its peers are connected. c must be zeroed, then n, who, err and
 *  max_reply set (and table when not spawning). SIGINT and SIGTERM stop the session from here until
 *  rs_ctl_finish. Returns -1 when every agent answered, else an exit status after the message:
 *  RS_EXIT_USAGE (cannot spawn or connect), RS_EXIT_ENGINE (some did not come up: their errors
 *  are printed), RS_CTL_EXIT_INTERRUPTED. */
int rs_ctl_start(rs_ctl *c, const rs_ctl_opts *o);

/** 1 once SIGINT or SIGTERM arrived during the session. */
int rs_ctl_stopped(void);

/** Sends cmd (with JSON text, or NULL) to agent r. 0, or -1 (lost, or the socket refused: failed). */
int rs_ctl_send(rs_ctl *c, int r, uint8_t cmd, const char *json);

/** Waits for every outstanding reply: until all answered, limit_s passed (0: no limit) or, once
 *  one failed, grace_s. Agents still silent then are failed and lost. A reply {"ok": false,
 *  "error": ...} fails its agent. Returns 0, or -1 when interrupted. */
int rs_ctl_wait(rs_ctl *c, double limit_s, const char *what);

/** rs_ctl_send to every agent not lost, then rs_ctl_wait. */
int rs_ctl_all(rs_ctl *c, uint8_t cmd, const char *json, double limit_s, const char *what);

/** 1 if any agent failed its last request. */
int rs_ctl_any_failed(const rs_ctl *c);

/** Prints each failed agent's error once ("WHO: error"). Returns how many it printed. */
int rs_ctl_print_failures(rs_ctl *c);

/** Ends the session: SHUTDOWN to the agents this controller spawned (and to a rank table's
 *  too when all), which close their links and exit; then any spawned agent still running gets
 *  SIGTERM after grace_s, SIGKILL 2 s later, and is reaped. Frees everything; no process is left
 *  behind. interrupted: skip SHUTDOWN, stop the processes at once. */
void rs_ctl_finish(rs_ctl *c, int all, int interrupted);

#ifdef __cplusplus
}
#endif
#endif
