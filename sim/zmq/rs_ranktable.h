/* rs_ranktable.h — where every rank of a multi-process run lives: a rank table file or the launcher's environment. */
#ifndef RS_RANKTABLE_H
#define RS_RANKTABLE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RS_RT_EP_MAX 256   /* longest endpoint, bytes with the NUL */
#define RS_RT_HOST_MAX 128
#define RS_RT_JOB_MAX 64
#define RS_RT_MAX_RANKS 1024
#define RS_RT_ERRLEN 512
/* ZeroMQ refuses ipc paths longer than this (sockaddr_un); abstract names count the '@'. */
#define RS_RT_IPC_PATH_MAX 107
/* tcp endpoints without an explicit control endpoint: the agent's controller port is this much above. */
#define RS_RT_CONTROL_PORT_OFFSET 1000

typedef struct rs_rank_entry {
    int rank;
    char host[RS_RT_HOST_MAX];     /**< informative ("" if not given) */
    char endpoint[RS_RT_EP_MAX];   /**< rank-to-rank traffic (ncl_zmq binds it) */
    char control[RS_RT_EP_MAX];    /**< the agent's controller socket */
    int line;                      /**< line in the file (0: not from a file) */
} rs_rank_entry;

typedef struct rs_ranktable {
    int nranks;
    rs_rank_entry *e;              /**< e[r] is rank r */
    char job[RS_RT_JOB_MAX];
} rs_ranktable;

/**
 * Loads a rank table (YAML, or JSON, which libyaml reads as YAML), either
 *     ranks:                      # or a top-level list
 *       - rank: 0
 *         host: node1             # optional, informative
 *         endpoint: tcp://node1:7000
 *         control: tcp://node1:8000   # optional (see rs_ranktable_control)
 *     job: name                   # optional
 * Every rank 0..N-1 exactly once, endpoints unique, ipc:// or tcp://host:port. Returns 0, or -1
 * with one line in err: "FILE:LINE: FIELD: PROBLEM (allowed: ...)".
 */
int rs_ranktable_load(const char *path, rs_ranktable *t, char *err, size_t errlen);
int rs_ranktable_load_string(const char *text, size_t len, const char *name, rs_ranktable *t, char *err,
                             size_t errlen);

/** The table a launcher implies: rank and size from OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/PMI_SIZE or
 *  SLURM_PROCID/SLURM_NTASKS (first found), endpoints derived from `base` (NULL: $RINGSIM_ZMQ_BASE,
 *  else ipc://@ringsim-<job>): ipc://NAME -> ipc://NAME-<rank>; tcp://HOST:PORT -> tcp://HOST:PORT+rank;
 *  tcp://H0,H1,...:PORT -> ranks in blocks of ceil(N/hosts) per host, PORT + index in the block.
 *  job: NULL = $RINGSIM_JOB, $SLURM_JOB_ID, $OMPI_MCA_ess_base_jobid, else "0". Returns 0 with
 *  *my_rank set, 1 when no launcher variable is set (err says which were looked for), -1 on error. */
int rs_ranktable_from_env(const char *base, const char *job, rs_ranktable *t, int *my_rank, char *err,
                          size_t errlen);

/** N ranks on this host over abstract ipc: ipc://@ringsim-<job>-<rank> (+ "-ctl" for control). */
int rs_ranktable_local(int nranks, const char *job, rs_ranktable *t, char *err, size_t errlen);

/** Derives a control endpoint from a data endpoint: ipc://X -> ipc://X-ctl, tcp://H:P -> tcp://H:P+1000. */
int rs_ranktable_control(const char *endpoint, char *out, size_t len, char *why, size_t whylen);

/** 0 if ep is an endpoint ringsim can use, else -1 with the problem in why. */
int rs_ranktable_check_endpoint(const char *ep, char *why, size_t whylen);

void rs_ranktable_free(rs_ranktable *t);

#ifdef __cplusplus
}
#endif
#endif
