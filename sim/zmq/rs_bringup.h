/* rs_bringup.h — `ringsim bringup`: link self-tests over agents (controller), their agent side and the fault shim. */
#ifndef RS_BRINGUP_H
#define RS_BRINGUP_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "ncl/ncl_hal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the controller ------------------------------------------------------------------------------ */

#define RS_BU_MAX_LOCAL 64   /**< spawned agents */
#define RS_BU_MAX_INJECT 16

/** What `ringsim bringup` was asked to do (sim/cli/cmd_bringup.c parses it). */
typedef struct rs_bringup_opts {
    const char *table_path;   /**< running agents; NULL: spawn nranks local ones */
    const char *expect_spec;  /**< ring:N, ..., or a scenario file; NULL: a ring over the agents */
    const char *json_path;
    const char *junit_path;   /**< JUnit XML: a testcase per link, ring and unexpected rank */
    double slow_factor;       /**< slow = every sample below this x the median (or less: the noise) */
    double timeout_s, connect_s;
    uint64_t bytes, slot, ring_bytes;
    long nranks, reps, pings, seed;
    int shutdown_remote;
    const char *inject[RS_BU_MAX_INJECT]; /**< A-B:FAULT */
    int ninject;
    const char *agent_backend; /**< spawned agents' HAL: "zmq" or "mmio" */
} rs_bringup_opts;

/** The defaults of every option (4 agents, 2 MiB bandwidth transfers, ...). */
void rs_bringup_defaults(rs_bringup_opts *o);

/** Brings up the agents and tests every expected link: 0 every expected link good, 1 any bad,
 *  2 bad files, 130 interrupted. */
int rs_bringup(const rs_bringup_opts *o, FILE *out, FILE *err);

/* ---- fault shim (test hook of `ringsim agent --fault`) ------------------------------------------- */

/*
 * A HAL that wraps another (the zmq backend's) and damages what this rank sends to one peer:
 *   dead       WRITE, WRITE_REDUCE and NOTIFY_RECORD to the peer are dropped (nothing arrives)
 *   slow:G     writes to the peer are throttled to G GB/s (the sending queue sleeps bytes / G ns)
 *   corrupt    writes to the peer carry one flipped bit (0x10) in every byte whose destination
 *              offset is 123 mod 4096 (the checksum is computed over the damaged bytes: a fault
 *              before the link's CRC, e.g. in the DMA path)
 *   miswire:C  writes meant for the peer go to rank C (notifies still go to the peer)
 * Everything else passes through. It lives in the agent, not the backend: the backend is what is
 * being brought up, the shim stands for a broken board around it.
 */
#define RS_BU_MAX_FAULTS 8
enum { RS_BU_DEAD = 1, RS_BU_SLOW, RS_BU_CORRUPT, RS_BU_MISWIRE };

typedef struct rs_bu_fault {
    int peer, kind, to;
    double gbps;
} rs_bu_fault;

typedef struct rs_bu_shim {
    ncl_hal hal;          /**< what the engine and the link tests use */
    const ncl_hal *inner;
    int rank, nranks;
    rs_bu_fault f[RS_BU_MAX_FAULTS];
    int nf;
    unsigned char *base[3]; /**< the bound SEND/RECV (corrupt flips bytes in the source, then restores) */
    uint64_t size[3];
    const volatile sig_atomic_t *stop; /**< set by a signal: a slow link stops sleeping (may be NULL) */
} rs_bu_shim;

/** Parses "PEER:dead", "PEER:slow:GBPS", "PEER:corrupt", "PEER:miswire:C" (comma-separated) for
 *  this rank. 0, or -1 with "--fault: ... (allowed: ...)" in err. */
int rs_bu_shim_parse(rs_bu_shim *s, int rank, int nranks, const char *spec, char *err, size_t errlen);
/** Makes s->hal a pass-through to inner with s's faults applied. */
void rs_bu_shim_init(rs_bu_shim *s, const ncl_hal *inner);

/* ---- agent side: HAL-level link tests (SELFTEST {"test": "begin" | "link" | "end"}) --------------- */

/*
 * While bring-up runs, every agent binds one RECV laid out as
 *   [ping 4 KiB][bandwidth: nranks slots of `bytes`, one per source][patterns: nranks x nranks
 *   slots of 4 x `slot` bytes, slot (src, dst) holding the 4 patterns src sends dst]
 * so a write that lands on the wrong rank (miswired) lands in a slot that rank never uses and
 * is found by the scan at "end", with its (src, dst) decoded from the seeded pattern.
 */
typedef struct rs_bu_node {
    int rank, nranks;
    const ncl_hal *hal;
    int bound;
    unsigned char *send, *recv, *expect;
    uint64_t send_bytes, recv_bytes;
    uint64_t bytes, slot, seed;
    const volatile sig_atomic_t *stop; /**< set by a signal: waits give up at once (may be NULL) */
    /** Device memory (the mmio backend: buffers are device addresses): when dmem is set, send and
     *  recv are carved from [dmem_base, dmem_bytes) of the window dmem maps (device address a is
     *  dmem + a) and the launch names device addresses; else they are malloc'd host memory. */
    unsigned char *dmem;
    uint64_t dmem_base, dmem_bytes;
} rs_bu_node;

/** Handles one bring-up request; returns the JSON reply, or NULL with the problem in why. */
cJSON *rs_bu_node_handle(rs_bu_node *n, const cJSON *req, char *why, size_t len);
/** Unbinds (the engine is about to run a collective) and frees the buffers. */
void rs_bu_node_release(rs_bu_node *n);

/** Pattern names, in the order a link test sends them (the seeded one last). */
#define RS_BU_PATTERNS 4
extern const char *const rs_bu_pattern_names[RS_BU_PATTERNS];

#ifdef __cplusplus
}
#endif
#endif
