/* rs_chakra.h — Chakra execution traces (the protobuf graphs ASTRA-sim reads: one file per rank) read into nodes ringsim can run. */
#ifndef RS_CHAKRA_H
#define RS_CHAKRA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Room for any message about a trace file. */
#define RS_ET_ERRLEN 512

/** What a node does, as ringsim runs it (Chakra's NodeType less what is refused on load). */
typedef enum rs_et_kind {
    RS_ET_COMPUTE,    /**< COMP_NODE: busy time on its lane (duration_micros) */
    RS_ET_COLLECTIVE, /**< COMM_COLL_NODE: a collective over every rank, or its process group's */
    RS_ET_METADATA,   /**< METADATA_NODE: nothing to run */
    RS_ET_SEND,       /**< COMM_SEND_NODE: comm_size bytes to rank comm_dst */
    RS_ET_RECV,       /**< COMM_RECV_NODE: comm_size bytes from rank comm_src */
} rs_et_kind;

/** Chakra's CollectiveCommType values ringsim runs; the others are refused on load. */
enum { RS_ET_ALL_REDUCE = 0, RS_ET_REDUCE = 1, RS_ET_ALL_GATHER = 2, RS_ET_BROADCAST = 5, RS_ET_ALL_TO_ALL = 6,
       RS_ET_REDUCE_SCATTER = 7, RS_ET_BARRIER = 9 };

typedef struct rs_et_node {
    uint64_t id;
    char name[64];         /**< truncated to fit */
    rs_et_kind kind;
    int cpu;               /**< attribute is_cpu_op: runs on the host's lane, not the NPU's */
    uint64_t duration_us;  /**< compute: duration_micros */
    int comm_type;         /**< collective: CollectiveCommType */
    uint64_t comm_size;    /**< collective, send, recv: bytes (attribute comm_size) */
    int32_t src, dst;      /**< send / recv: attributes comm_src, comm_dst (-1: absent) */
    int64_t tag;           /**< send / recv: attribute comm_tag (-1: absent) */
    char pg[32];           /**< collective: attribute pg_name, its process group ("" or "0": every rank) */
    char *pg_info;         /**< METADATA_NODE "process_group:init": inputs.values, the process groups as
                                PyTorch's converter writes them (NULL: none) */
    uint64_t *deps;        /**< ctrl_deps then data_deps: once loaded, the indices in nodes of those nodes */
    size_t ndeps;
    size_t offset;         /**< byte offset of the node's record in its file, for messages */
} rs_et_node;

typedef struct rs_et_trace {
    char version[32];      /**< GlobalMetadata.version */
    rs_et_node *nodes;     /**< in file order */
    size_t n;
} rs_et_trace;

/**
 * Reads one rank's trace: a length-prefixed GlobalMetadata, then length-prefixed Node records
 * (Chakra's encodeMessage framing). Unknown fields and attributes are skipped as protobuf
 * allows. 0, or -1 with "PATH: byte OFFSET: problem (allowed: ...)" in err for a file that
 * cannot be read, is truncated or malformed, gzip-compressed, has a dependency on a node it
 * does not hold or a cycle, or has a node ringsim does not run (memory and storage nodes;
 * collectives other than all-reduce, reduce, all-gather, broadcast, all-to-all, reduce-scatter
 * and barrier; a collective, send or recv without comm_size; a send without comm_dst, a recv
 * without comm_src). rs_et_free either way.
 */
int rs_et_load(const char *path, rs_et_trace *t, char *err, size_t errlen);
void rs_et_free(rs_et_trace *t);

/** A process group of a comm group file: its name (the key) and its ranks, in order. */
typedef struct rs_et_group {
    char name[32];
    int32_t *ranks;
    size_t n;
} rs_et_group;

typedef struct rs_et_groups {
    rs_et_group *g;
    size_t n;
} rs_et_groups;

/**
 * Reads a comm group file as ASTRA-sim takes it (--comm-group-configuration): a JSON object of
 * process group names, each an array of distinct ranks below nranks, e.g. {"1": [0, 1, 2, 3],
 * "2": [4, 5, 6, 7]}. 0, or -1 with "PATH:LINE: problem (allowed: ...)" in err. rs_et_groups_free
 * either way.
 */
int rs_et_groups_load(const char *path, int nranks, rs_et_groups *gs, char *err, size_t errlen);
void rs_et_groups_free(rs_et_groups *gs);
/**
 * Adds the process groups a trace declares itself (PyTorch's converter: a METADATA_NODE named
 * "process_group:init" whose inputs.values is a JSON list of {"pg_name": "1", "ranks": [...], ...},
 * empty ranks meaning every rank) to gs; a name gs has already must name the same ranks. 0, or -1
 * with "PATH: node ID: problem" in err (path: the trace's, for messages).
 */
int rs_et_groups_add_declared(const rs_et_trace *t, const char *path, int nranks, rs_et_groups *gs, char *err,
                              size_t errlen);

/** The group named name, or NULL. */
const rs_et_group *rs_et_group_find(const rs_et_groups *gs, const char *name);

/** "ALL_REDUCE" ... for a CollectiveCommType, "?" for others. */
const char *rs_et_comm_name(int comm_type);

#ifdef __cplusplus
}
#endif
#endif
