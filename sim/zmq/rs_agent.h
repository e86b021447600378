/* rs_agent.h — `ringsim agent`: one rank's process; runs the engine on the zmq backend (or, with --backend mmio, on an emulated board) and serves a controller. */
#ifndef RS_AGENT_H
#define RS_AGENT_H

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Control protocol (sim/zmq/ZMQ.md): the controller's REQ talks to the agent's REP at the rank's
 * control endpoint, one ncl_wire message per frame, src = NONE, dst = the agent's rank.
 *   HELLO           -> HELLO_ACK (caps CONTROL): the agent is connected to all its peers
 *   RUN {json}      -> RUN|REPLY {json}: one collective over a size sweep, checked and timed
 *   SELFTEST        -> SELFTEST|REPLY {json}: a small allreduce + broadcast, checked
 *   SELFTEST {"test": "begin"|"arm"|"link"|"end"|"ring", ...} -> SELFTEST|REPLY {json}: a step of
 *                      `ringsim bringup` (HAL-level link tests, a ring-order allreduce; rs_bringup.h)
 *   COUNTERS        -> COUNTERS|REPLY {json}: per-link frames/bytes/state, non-zero notify counters
 *   STATE           -> STATE|REPLY {json}: rank, job, idle/broken, collectives run, last error
 *   SHUTDOWN        -> SHUTDOWN|REPLY {"ok":true}, then the agent closes (BYE to peers) and exits 0
 * Anything else (a frame that does not decode, bad JSON, an unknown collective...) gets an ERROR
 * reply with the reason and the agent stays up.
 *
 * --backend mmio (sim/zmq/rs_board.h): the engine runs on the mmio backend against a verilated rs_dev
 * block in this process; RUN's and bring-up's buffers live in the block's device memory (the same
 * addresses on every rank), STATE adds "backend" and "cycles", COUNTERS gives per-peer LINK
 * transfers and an "mmio" object instead of the zmq links' frames and notify counters.
 */

/** Exit status of an agent whose communicator could not be built (peers missing, bad table). */
#define RS_AGENT_EXIT_CONNECT 3

/** What one agent is (sim/cli/cmd_agent.c parses `ringsim agent`'s options into it). */
typedef struct rs_agent_opts {
    const char *table_path; /**< a rank table; NULL: --ranks/--job, or the launcher's environment */
    const char *job;        /**< with nranks: the local ipc:// rank table's name */
    const char *fault_spec; /**< --fault (bring-up's test hook), or NULL */
    const char *backend;    /**< "zmq" or "mmio" (an emulated board) */
    int rank;               /**< -1: from the launcher's environment */
    int nranks;             /**< > 0: a local job of this many ranks */
    uint32_t channels;
    uint64_t timeout_ns, connect_ns;
    int quiet;              /**< do not print collective failures (the controller does) */
} rs_agent_opts;

/** Joins the ranks and serves a controller until SHUTDOWN or a signal: the process exit status
 *  (RS_AGENT_EXIT_CONNECT when the communicator could not be built). */
int rs_agent_serve(const rs_agent_opts *o, FILE *err);

#ifdef __cplusplus
}
#endif
#endif
