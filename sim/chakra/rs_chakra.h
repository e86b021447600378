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
    RS_ET_COLLECTIVE, /**< COMM_COLL_NODE: a collective over every rank */
    RS_ET_METADATA,   /**< METADATA_NODE: nothing to run */
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
    uint64_t comm_size;    /**< collective: bytes (attribute comm_size) */
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
 * does not hold or a cycle, or has a node ringsim does not run (memory, storage, point to point
 * nodes; collectives other than all-reduce, reduce, all-gather, broadcast, all-to-all,
 * reduce-scatter and barrier; a collective without comm_size). rs_et_free either way.
 */
int rs_et_load(const char *path, rs_et_trace *t, char *err, size_t errlen);
void rs_et_free(rs_et_trace *t);

/** "ALL_REDUCE" ... for a CollectiveCommType, "?" for others. */
const char *rs_et_comm_name(int comm_type);

#ifdef __cplusplus
}
#endif
#endif
