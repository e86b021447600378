/* rs_usersched.h — user-defined schedule files (YAML) -> ncl_user_schedule, checked field by field. */
#ifndef RS_USERSCHED_H
#define RS_USERSCHED_H

#include <stddef.h>
#include <stdint.h>

#include <ncl/ncl_user.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A loaded schedule: `sched` points into `steps`, all owned here. */
typedef struct rs_usersched {
    char *name;
    ncl_user_schedule sched;
    ncl_user_step *steps;
} rs_usersched;

/** Largest schedule file read (bytes) and step count. */
#define RS_USERSCHED_MAX_FILE (16u << 20)
#define RS_USERSCHED_MAX_STEPS 1000000u

/**
 * Loads the schedule file `path` (`shown`: the name messages use for it, e.g. the path as a
 * scenario wrote it; NULL: path). Returns 0 with *out set (free with rs_usersched_free), or
 * writes one line to err and returns -1 for a bad file ("SHOWN:LINE: KEY: PROBLEM (allowed:
 * ...)", KEY a dotted path such as streams[0].steps[2].peer), -2 when it cannot be read
 * ("cannot open: REASON", no location: the caller knows which key named the file).
 * The format (see scenarios/README.md, "User-defined schedules"):
 *     name: ring4_allgather      # optional: the file name without .yaml
 *     collective: allgather      # allreduce | broadcast | reduce | reduce_scatter | allgather
 *     ranks: 4
 *     chunks: 1                  # per count-element block (default 1)
 *     queues: 1                  # per rank (default 1)
 *     streams:                   # one entry per (rank, queue), steps in order
 *       - rank: 0
 *         queue: 0               # default 0
 *         steps:
 *           - {op: copy, src: [send, 0], dst: [recv, 0]}
 *           - {op: record, peer: 3, notify: 1}
 *           - {op: wait, peer: 1, notify: 1}          # count: default 1
 *           - {op: write, peer: 1, src: [recv, 0], dst: [recv, 0], chunks: 1}
 * ops: write, write_reduce, copy, reduce, div, record, wait; buffers: send, recv, scratch.
 */
int rs_usersched_load(const char *path, const char *shown, rs_usersched **out, char *err, size_t errlen);

/** Frees a loaded schedule; NULL is fine. */
void rs_usersched_free(rs_usersched *u);

#ifdef __cplusplus
}
#endif
#endif
