/* rs_scenario.c — scenario YAML -> rs_scenario: libyaml's document tree walked against one schema table. */
#define _POSIX_C_SOURCE 200809L
#include "rs_scenario.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "rs_fusion.h"
#include "rs_units.h"
#include "rs_usersched.h"

#include <ncl/ncl_check.h>

#define RS_COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define RS_MAX_DEPTH 32         /* a scenario nests 4 deep; anything deeper is junk */
#define RS_MAX_ITEMS 1000000u   /* entries of one list (links, overrides, faults) */
#define RS_MAX_RANK (RS_SCENARIO_MAX_RANKS - 1)
#define RS_MAX_NODE ((1 << 20) - 1) /* overrides and faults may name switches, numbered after the ranks */
#define RS_TB 1e12

/* Enumerations are stored through int32_t: the same representation on every ABI we build for. */
_Static_assert(sizeof(rs_topo_kind) == sizeof(int32_t), "enum size");
_Static_assert(sizeof(ncl_coll) == sizeof(int32_t), "enum size");
_Static_assert(sizeof(rs_fidelity) == sizeof(int32_t), "enum size");

/* ---- names ------------------------------------------------------------------------------------ */

/* Accepted spellings; the first entry of each value is the one printed and listed as allowed. */
typedef struct rs_name {
    const char *name;
    int value;
} rs_name;

typedef struct rs_enum {
    const char *what; /* "a topology kind" */
    const rs_name *names;
    size_t count;
} rs_enum;

static const rs_name rs_kind_names[] = {
    {"ring", RS_TOPO_RING},       {"biring", RS_TOPO_BIRING},   {"full_mesh", RS_TOPO_FULL_MESH},
    {"torus2d", RS_TOPO_TORUS2D}, {"switch", RS_TOPO_SWITCH},   {"fat_tree", RS_TOPO_FAT_TREE},
    {"server8", RS_TOPO_SERVER8}, {"cluster", RS_TOPO_CLUSTER}, {"links", RS_TOPO_LINKS},
};
static const rs_name rs_coll_names[] = {
    {"allreduce", NCL_COLL_ALLREDUCE},   {"broadcast", NCL_COLL_BROADCAST},
    {"reduce", NCL_COLL_REDUCE},         {"reduce_scatter", NCL_COLL_REDUCE_SCATTER},
    {"allgather", NCL_COLL_ALLGATHER},   {"all_reduce", NCL_COLL_ALLREDUCE},
    {"bcast", NCL_COLL_BROADCAST},       {"reducescatter", NCL_COLL_REDUCE_SCATTER},
    {"all_gather", NCL_COLL_ALLGATHER},
};
static const rs_name rs_algo_names[] = {
    {"auto", NCL_ALGO_AUTO}, {"ring", NCL_ALGO_RING}, {"chain", NCL_ALGO_CHAIN}, {"tree", NCL_ALGO_TREE},
    {"hd", NCL_ALGO_HD},     {"mesh", NCL_ALGO_MESH}, {"sag", NCL_ALGO_SAG},     {"dbtree", NCL_ALGO_DBTREE},
    {"det", NCL_ALGO_DET},   {"hier", NCL_ALGO_HIER},
    {"halving_doubling", NCL_ALGO_HD}, {"two_level", NCL_ALGO_HIER}, {"hierarchical", NCL_ALGO_HIER}, {"full_mesh", NCL_ALGO_MESH}, {"scatter_allgather", NCL_ALGO_SAG},
};
/* nccl-tests' names first, then the aliases `ringsim run -d` also takes */
static const rs_name rs_dtype_names[] = {
    {"int8", NCL_INT8},       {"uint8", NCL_UINT8},         {"int32", NCL_INT32},
    {"uint32", NCL_UINT32},   {"int64", NCL_INT64},         {"half", NCL_FLOAT16},
    {"bfloat16", NCL_BFLOAT16}, {"float", NCL_FLOAT32},     {"double", NCL_FLOAT64},
    {"int", NCL_INT32},       {"fp16", NCL_FLOAT16},        {"float16", NCL_FLOAT16},
    {"bf16", NCL_BFLOAT16},   {"fp32", NCL_FLOAT32},        {"float32", NCL_FLOAT32},
    {"fp64", NCL_FLOAT64},    {"float64", NCL_FLOAT64},
};
static const rs_name rs_op_names[] = {
    {"sum", NCL_SUM}, {"prod", NCL_PROD}, {"max", NCL_MAX}, {"min", NCL_MIN}, {"avg", NCL_AVG},
};
static const rs_name rs_payload_names[] = {{"real", 1}, {"none", 0}};
static const rs_name rs_fidelity_names[] = {{"message", RS_FIDELITY_MESSAGE}, {"packet", RS_FIDELITY_PACKET}};
static const rs_name rs_devfid_names[] = {{"systemc", RS_DEVICE_SYSTEMC}, {"rtl", RS_DEVICE_RTL}};
static const rs_name rs_action_names[] = {{"down", RS_FAULT_DOWN}, {"degrade", RS_FAULT_DEGRADE}};
/* YAML 1.2 core schema booleans; yes/no/on/off are deliberately not booleans here */
static const rs_name rs_rings_names[] = {{"auto", RS_RINGS_AUTO}, {"rank", RS_RINGS_RANK}};
static const rs_name rs_bool_names[] = {
    {"true", 1}, {"false", 0}, {"True", 1}, {"False", 0}, {"TRUE", 1}, {"FALSE", 0},
};

static const rs_enum rs_enum_kind = {"a topology kind", rs_kind_names, RS_COUNT(rs_kind_names)};
static const rs_enum rs_enum_coll = {"a collective", rs_coll_names, RS_COUNT(rs_coll_names)};
static const rs_enum rs_enum_algo = {"an algorithm", rs_algo_names, RS_COUNT(rs_algo_names)};
static const rs_name rs_inter_names[] = {
    {"auto", NCL_ALGO_AUTO}, {"ring", NCL_ALGO_RING}, {"hd", NCL_ALGO_HD}, {"halving_doubling", NCL_ALGO_HD},
};
static const rs_enum rs_enum_inter = {"an inter-server algorithm", rs_inter_names, RS_COUNT(rs_inter_names)};
static const rs_enum rs_enum_dtype = {"a dtype", rs_dtype_names, RS_COUNT(rs_dtype_names)};
static const rs_enum rs_enum_op = {"an op", rs_op_names, RS_COUNT(rs_op_names)};
static const rs_enum rs_enum_payload = {"a payload mode", rs_payload_names, RS_COUNT(rs_payload_names)};
static const rs_enum rs_enum_fidelity = {"a fidelity", rs_fidelity_names, RS_COUNT(rs_fidelity_names)};
static const rs_enum rs_enum_devfid = {"a device fidelity", rs_devfid_names, RS_COUNT(rs_devfid_names)};
static const rs_enum rs_enum_action = {"a fault action", rs_action_names, RS_COUNT(rs_action_names)};
static const rs_enum rs_enum_bool = {"a boolean", rs_bool_names, RS_COUNT(rs_bool_names)};
static const rs_enum rs_enum_rings = {"a ring choice", rs_rings_names, RS_COUNT(rs_rings_names)};

static const char *rs_enum_name(const rs_enum *e, int value)
{
    for (size_t i = 0; i < e->count; i++)
        if (e->names[i].value == value)
            return e->names[i].name;
    return "?";
}

/* "a, b, c" of the printed names (aliases left out). */
static void rs_enum_list(const rs_enum *e, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < e->count; i++) {
        int first = 1;
        for (size_t j = 0; j < i; j++)
            first &= e->names[j].value != e->names[i].value;
        if (!first)
            continue;
        int n = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", e->names[i].name);
        if (n < 0 || (size_t)n >= len - used)
            break;
        used += (size_t)n;
    }
}

const char *rs_scenario_kind_name(rs_topo_kind kind) { return rs_enum_name(&rs_enum_kind, (int)kind); }

/* Edit distance, for "did you mean". Names are short; anything long is not a typo of one. */
static size_t rs_distance(const char *a, size_t la, const char *b, size_t lb)
{
    if (la > 40 || lb > 40)
        return 99;
    size_t row[41];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            char ca = a[i - 1], cb = b[j - 1];
            if (ca >= 'A' && ca <= 'Z')
                ca = (char)(ca - 'A' + 'a');
            if (cb >= 'A' && cb <= 'Z')
                cb = (char)(cb - 'A' + 'a');
            size_t best = diag + (ca != cb);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* The closest of `names` to `s` if it is close enough to be a typo, else NULL. */
static const char *rs_suggest(const char *s, size_t len, const char *const *names, size_t n)
{
    const char *best = NULL;
    size_t bestd = 99;
    for (size_t i = 0; i < n; i++) {
        size_t d = rs_distance(s, len, names[i], strlen(names[i]));
        if (d < bestd) {
            bestd = d;
            best = names[i];
        }
    }
    size_t limit = len <= 3 ? 1 : len <= 6 ? 2 : 3;
    return bestd <= limit ? best : NULL;
}

/* ---- schema ----------------------------------------------------------------------------------- */

typedef struct rs_ctx rs_ctx;
typedef struct rs_map rs_map;

typedef enum rs_type {
    RS_T_INT,   /* whole number, stored as int32 or uint32 */
    RS_T_U64,   /* whole number up to 2^64-1, decimal or 0x hex */
    RS_T_UNIT,  /* number + unit of `unit`, stored as double (SI) or whole bytes */
    RS_T_BOOL,
    RS_T_ENUM,  /* one of `names` */
    RS_T_STR,
    RS_T_PAIR,  /* [x, y]: two whole numbers in [min, max], stored as int32[2] */
    RS_T_COLLS, /* one collective or a list of them: ncl_coll[] at offset, count at offset2 */
    RS_T_MAP,   /* a mapping described by `sub`, its struct at offset */
    RS_T_SEQ    /* a list of mappings `sub`: pointer at offset, size_t count at offset2 */
} rs_type;

typedef enum rs_store { RS_S_NONE, RS_S_I32, RS_S_U32, RS_S_U64, RS_S_DBL } rs_store;

#define RS_F_REQUIRED 1u  /* every scenario must give it */
#define RS_F_MIN_EXCL 2u  /* value must be > min, not >= */
#define RS_F_UNSET 4u     /* absent = -1 ("keep the built value"); left out of dumps */

#define RS_K(kind) (1u << (kind))

typedef struct rs_key {
    const char *name;
    rs_type type;
    rs_unit_kind unit;
    rs_store store;
    size_t offset, offset2;
    double min, max;
    unsigned flags;
    unsigned kinds;        /* topology keys: kinds that use it (0: all) */
    unsigned req_kinds;    /* topology keys: kinds that need it */
    const char *def;       /* default as written in a scenario; NULL: none */
    const char *def_doc;   /* reference text for a default `def` cannot say */
    const rs_enum *names;
    const rs_map *sub;
    const char *desc;
} rs_key;

struct rs_map {
    const char *path;   /* in the reference: "topology.link" */
    const char *title;  /* one line for the reference */
    const rs_key *keys;
    size_t nkeys;
    int flow;           /* dumped as one {flow} mapping */
    size_t item_size;   /* list items: struct size */
    size_t line_offset; /* list items: offset of the int32 line (rs_link_ref.line) */
    void (*item_init)(void *item, const rs_scenario *sc);
    int (*check)(rs_ctx *c, yaml_node_t *node, void *base);
};

/* One one-way link of a `links` list, for sorting and lookups. */
typedef struct rs_chan {
    int32_t a, b;
    size_t idx;
} rs_chan;

struct rs_ctx {
    const char *file;
    yaml_document_t *doc;
    rs_scenario *sc;
    char *err;
    size_t errlen;
    int failed;
    char path[256];
    size_t pathlen;
    int owner_line; /* line of the key whose value is being checked (1 at the top) */
    rs_chan *chans; /* kind links: every one-way link, sorted, so overrides and faults are */
    size_t nchans;  /* looked up in log time rather than scanned (lists can be long) */
};

/* -- keys shared by several maps -- */
#define RS_BW_MAX (100 * RS_TB) /* 100 TB/s: beyond any link or memory of this decade */

#define RS_LINK_KEYS(T, OFF, BW, LAT, PKT, HDR, BUF, DOC)                                              \
    {"bandwidth", RS_T_UNIT, RS_UNIT_BANDWIDTH, RS_S_DBL, OFF + offsetof(rs_link_params, bandwidth), 0, \
     0, RS_BW_MAX, RS_F_MIN_EXCL, 0, 0, BW, DOC, NULL, NULL,                                            \
     "bytes per second on the wire, headers included, in each direction"},                             \
    {"latency", RS_T_UNIT, RS_UNIT_TIME, RS_S_DBL, OFF + offsetof(rs_link_params, latency), 0, 0, 1.0,   \
     0, 0, 0, LAT, DOC, NULL, NULL, "first bit out to first bit in"},                                   \
    {"packet", RS_T_UNIT, RS_UNIT_SIZE, RS_S_U32, OFF + offsetof(rs_link_params, packet_bytes), 0, 16,  \
     1048576, 0, 0, 0, PKT, DOC, NULL, NULL, "payload bytes per packet"},                               \
    {"header", RS_T_UNIT, RS_UNIT_SIZE, RS_S_U32, OFF + offsetof(rs_link_params, header_bytes), 0, 0,   \
     4096, 0, 0, 0, HDR, DOC, NULL, NULL, "bytes added to every packet"},                               \
    {"buffer", RS_T_UNIT, RS_UNIT_SIZE, RS_S_U32, OFF + offsetof(rs_link_params, buffer_bytes), 0, 64,  \
     1073741824, 0, 0, 0, BUF, DOC, NULL, NULL,                                                         \
     "receive buffer (the credits of packet fidelity); holds at least one packet + header"}

static int rs_check_link(rs_ctx *c, yaml_node_t *node, void *base);
static int rs_check_link_item(rs_ctx *c, yaml_node_t *node, void *base);
static int rs_check_override(rs_ctx *c, yaml_node_t *node, void *base);
static int rs_check_topology(rs_ctx *c, yaml_node_t *node, void *base);
static int rs_check_sizes(rs_ctx *c, yaml_node_t *node, void *base);
static int rs_check_workload(rs_ctx *c, yaml_node_t *node, void *base);
static int rs_check_fault(rs_ctx *c, yaml_node_t *node, void *base);
static int rs_check_top(rs_ctx *c, yaml_node_t *node, void *base);
static void rs_init_link_item(void *item, const rs_scenario *sc);

static const rs_key rs_keys_link[] = {
    RS_LINK_KEYS(rs_link_params, 0, "30 GB/s", "1.5 us", "4 KiB", "64 B", "64 KiB", NULL),
};
static const rs_map rs_map_link = {
    "topology.link", "Every rank-to-rank link, and the rank-to-switch links of `switch` and `fat_tree` "
    "(and their leaf-spine links). Each direction is one channel with these parameters.",
    rs_keys_link, RS_COUNT(rs_keys_link), 1, 0, 0, NULL, rs_check_link};

static const rs_key rs_keys_nic[] = {
    RS_LINK_KEYS(rs_link_params, 0, "100 Gb/s", "2 us", "4 KiB", "64 B", "256 KiB", NULL),
};
static const rs_map rs_map_nic = {
    "topology.nic", "`cluster` only: each NPU's NIC link to the switch (RoCE-like).",
    rs_keys_nic, RS_COUNT(rs_keys_nic), 1, 0, 0, NULL, rs_check_link};

static const rs_key rs_keys_switch[] = {
    {"latency", RS_T_UNIT, RS_UNIT_TIME, RS_S_DBL, offsetof(rs_switch_params, latency), 0, 0, 1.0, 0, 0, 0,
     "500 ns", NULL, NULL, NULL, "input to output through the switch (cut-through)"},
    {"buffer", RS_T_UNIT, RS_UNIT_SIZE, RS_S_U32, offsetof(rs_switch_params, buffer_bytes), 0, 1024,
     1073741824, 0, 0, 0, "1 MiB", NULL, NULL, NULL, "buffer per output port; holds at least one packet"},
};
static const rs_map rs_map_switch = {
    "topology.switch", "`switch`, `fat_tree` and `cluster`: every switch.",
    rs_keys_switch, RS_COUNT(rs_keys_switch), 1, 0, 0, NULL, NULL};

#define RS_ENDS_KEYS(T, MAX, WHAT)                                                                      \
    {"from", RS_T_INT, RS_UNIT_COUNT, RS_S_I32, offsetof(T, ends.a), 0, 0, MAX, RS_F_REQUIRED, 0, 0, NULL, \
     NULL, NULL, NULL, WHAT " at one end"},                                                               \
    {"to", RS_T_INT, RS_UNIT_COUNT, RS_S_I32, offsetof(T, ends.b), 0, 0, MAX, RS_F_REQUIRED, 0, 0, NULL,   \
     NULL, NULL, NULL, WHAT " at the other end"},                                                         \
    {"both", RS_T_BOOL, RS_UNIT_COUNT, RS_S_I32, offsetof(T, ends.both), 0, 0, 1, 0, 0, 0, "true", NULL,  \
     &rs_enum_bool, NULL, "true: from -> to and to -> from; false: from -> to only"}

static const rs_key rs_keys_link_item[] = {
    RS_ENDS_KEYS(rs_link_spec, RS_MAX_RANK, "rank"),
    RS_LINK_KEYS(rs_link_spec, offsetof(rs_link_spec, params), NULL, NULL, NULL, NULL, NULL,
                 "topology.link's"),
};
static const rs_map rs_map_link_item = {
    "topology.links[]", "`links` only: the explicit link list. Each entry is a link between two ranks "
    "with `topology.link`'s parameters unless it gives its own.",
    rs_keys_link_item, RS_COUNT(rs_keys_link_item), 1, sizeof(rs_link_spec),
    offsetof(rs_link_spec, ends.line), rs_init_link_item, rs_check_link_item};

static const rs_key rs_keys_override[] = {
    RS_ENDS_KEYS(rs_link_override, RS_MAX_NODE, "node (a rank, or a switch numbered after the ranks)"),
    {"bandwidth", RS_T_UNIT, RS_UNIT_BANDWIDTH, RS_S_DBL, offsetof(rs_link_override, bandwidth), 0, 0,
     RS_BW_MAX, RS_F_MIN_EXCL | RS_F_UNSET, 0, 0, NULL, "unchanged", NULL, NULL, "new bandwidth"},
    {"latency", RS_T_UNIT, RS_UNIT_TIME, RS_S_DBL, offsetof(rs_link_override, latency), 0, 0, 1.0,
     RS_F_UNSET, 0, 0, NULL, "unchanged", NULL, NULL, "new latency"},
};
static const rs_map rs_map_override = {
    "topology.overrides[]", "Any kind: changes to links the topology built (a slow link, an "
    "asymmetric link). Applied in order; each must change something.",
    rs_keys_override, RS_COUNT(rs_keys_override), 1, sizeof(rs_link_override),
    offsetof(rs_link_override, ends.line), NULL, rs_check_override};

#define RS_TK(k) RS_K(RS_TOPO_##k)
static const rs_key rs_keys_topology[] = {
    {"kind", RS_T_ENUM, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_topology_spec, kind), 0, 0, 0, RS_F_REQUIRED,
     0, 0, NULL, NULL, &rs_enum_kind, NULL, "the shape; see the table of kinds"},
    {"ranks", RS_T_INT, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_topology_spec, nranks), 0, 2,
     RS_SCENARIO_MAX_RANKS, 0, 0,
     RS_TK(RING) | RS_TK(BIRING) | RS_TK(FULL_MESH) | RS_TK(SWITCH) | RS_TK(FAT_TREE), NULL,
     "derived for torus2d, server8, cluster, links", NULL, NULL,
     "number of NPUs; where the kind fixes it, it may be given only with that value"},
    {"dims", RS_T_PAIR, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_topology_spec, dims), 0, 2, 32768, 0,
     RS_TK(TORUS2D), RS_TK(TORUS2D), NULL, NULL, NULL, NULL,
     "[rows, columns]; rank = row * columns + column"},
    {"servers", RS_T_INT, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_topology_spec, servers), 0, 1,
     RS_SCENARIO_MAX_RANKS / 8, 0, RS_TK(CLUSTER), RS_TK(CLUSTER), NULL, NULL, NULL, NULL,
     "number of 8-NPU servers; server s holds ranks 8s to 8s+7"},
    {"per_leaf", RS_T_INT, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_topology_spec, per_leaf), 0, 1,
     RS_SCENARIO_MAX_RANKS, 0, RS_TK(FAT_TREE), RS_TK(FAT_TREE), NULL, NULL, NULL, NULL,
     "ranks per leaf switch; divides ranks"},
    {"spines", RS_T_INT, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_topology_spec, spines), 0, 1, 4096, 0,
     RS_TK(FAT_TREE), 0, NULL, "per_leaf (full bisection)", NULL, NULL,
     "spine switches; each leaf has one link to each spine"},
    {"link", RS_T_MAP, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_topology_spec, link), 0, 0, 0, 0, 0, 0, NULL,
     "each key's default", NULL, &rs_map_link, "parameters of every link"},
    {"nic", RS_T_MAP, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_topology_spec, nic), 0, 0, 0, 0,
     RS_TK(CLUSTER), 0, NULL, "each key's default", NULL, &rs_map_nic, "parameters of NIC links"},
    {"switch", RS_T_MAP, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_topology_spec, sw), 0, 0, 0, 0,
     RS_TK(SWITCH) | RS_TK(FAT_TREE) | RS_TK(CLUSTER), 0, NULL, "each key's default", NULL,
     &rs_map_switch, "parameters of switches"},
    {"links", RS_T_SEQ, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_topology_spec, links),
     offsetof(rs_topology_spec, links_count), 0, 0, 0, RS_TK(LINKS), RS_TK(LINKS), NULL, NULL, NULL,
     &rs_map_link_item, "the explicit link list"},
    {"overrides", RS_T_SEQ, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_topology_spec, overrides),
     offsetof(rs_topology_spec, overrides_count), 0, 0, 0, 0, 0, NULL, "none", NULL, &rs_map_override,
     "per-link changes"},
};
static const rs_map rs_map_topology = {
    "topology", "What is connected to what. `kind` picks the shape; the keys it needs are listed "
    "in the table of kinds below.",
    rs_keys_topology, RS_COUNT(rs_keys_topology), 0, 0, 0, NULL, rs_check_topology};

static const rs_key rs_keys_device[] = {
    {"dma_engines", RS_T_INT, RS_UNIT_COUNT, RS_S_U32, offsetof(rs_device_params, dma_engines), 0, 1, 64, 0,
     0, 0, "4", NULL, NULL, NULL, "DMA tasks a device runs at the same time"},
    {"queue_depth", RS_T_INT, RS_UNIT_COUNT, RS_S_U32, offsetof(rs_device_params, queue_depth), 0, 1, 65536,
     0, 0, 0, "16", NULL, NULL, NULL, "tasks each DMA engine queues"},
    {"memory_bandwidth", RS_T_UNIT, RS_UNIT_BANDWIDTH, RS_S_DBL, offsetof(rs_device_params, mem_bandwidth),
     0, 0, RS_BW_MAX, RS_F_MIN_EXCL, 0, 0, "400 GB/s", NULL, NULL, NULL,
     "device memory, shared by DMA reads, writes and reductions"},
    {"reduce_bandwidth", RS_T_UNIT, RS_UNIT_BANDWIDTH, RS_S_DBL,
     offsetof(rs_device_params, reduce_bandwidth), 0, 0, RS_BW_MAX, RS_F_MIN_EXCL, 0, 0, "200 GB/s", NULL,
     NULL, NULL, "throughput of the inline-reduce unit"},
    {"task_overhead", RS_T_UNIT, RS_UNIT_TIME, RS_S_DBL, offsetof(rs_device_params, task_overhead), 0, 0,
     1.0, 0, 0, 0, "1 us", NULL, NULL, NULL, "time to issue one task"},
    {"memory", RS_T_UNIT, RS_UNIT_SIZE, RS_S_U64, offsetof(rs_device_params, memory_bytes), 0, 1048576,
     1099511627776.0, 0, 0, 0, "1 GiB", NULL, NULL, NULL,
     "device memory size; with payload real it must hold a rank's send + receive buffers"},
    {"inline_reduce", RS_T_STR, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_device_params, inline_reduce), 0, 0, 0, 0,
     0, 0, "all", NULL, NULL, NULL,
     "what the DMA reduces inline as it writes: all, none, or dtypes, each with all ops or dtype:op "
     "(e.g. \"int32 uint32 float:sum\"); anything else is written to scratch and reduced by the receiver"},
    {"inline_align", RS_T_UNIT, RS_UNIT_SIZE, RS_S_U32, offsetof(rs_device_params, inline_align), 0, 1, 4096, 0,
     0, 0, "1 B", NULL, NULL, NULL,
     "inline reduce needs offsets and lengths that are multiples of this; other tasks take the scratch path"},
    {"fidelity", RS_T_ENUM, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_device_params, fidelity), 0, 0, 0, 0, 0, 0,
     "systemc", NULL, &rs_enum_devfid, NULL,
     "systemc: the NPU model (the keys above); rtl: the devices rtl_ranks names are the verilated rs_dev "
     "block (rtl_stub/), driven by the unchanged engine through the mmio backend, their link transfers on "
     "these links (int32/uint32/float, sum/max/min, 2-4 ranks; of the keys above only memory applies to them)"},
    {"rtl_clock", RS_T_STR, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_device_params, rtl_clock_text), 0, 0, 0, 0,
     0, 0, "1 GHz", NULL, NULL, NULL,
     "clock of the RTL devices (fidelity rtl), 1 MHz to 10 GHz: one cycle moves one 32-bit word "
     "through a block's memory port"},
    {"rtl_ranks", RS_T_STR, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_device_params, rtl_ranks_text), 0, 0, 0, 0,
     0, 0, "all", NULL, NULL, NULL,
     "fidelity rtl: which ranks are RTL devices (all, or rank numbers like \"0\" or \"0 2\"); the others "
     "are SystemC NPUs on the same links (mixed fidelity)"},
};
static int rs_check_device(rs_ctx *c, yaml_node_t *node, void *base);
static const rs_map rs_map_device = {
    "device", "Every NPU (all devices are alike).",
    rs_keys_device, RS_COUNT(rs_keys_device), 1, 0, 0, NULL, rs_check_device};

static const rs_key rs_keys_sizes[] = {
    {"begin", RS_T_UNIT, RS_UNIT_SIZE, RS_S_U64, offsetof(rs_workload, begin_bytes), 0, 1, 1099511627776.0,
     0, 0, 0, "8 B", NULL, NULL, NULL, "first size (nccl-tests -b); at least one element"},
    {"end", RS_T_UNIT, RS_UNIT_SIZE, RS_S_U64, offsetof(rs_workload, end_bytes), 0, 1, 1099511627776.0, 0, 0,
     0, "16 MiB", NULL, NULL, NULL, "last size (nccl-tests -e); at least begin"},
    {"factor", RS_T_INT, RS_UNIT_COUNT, RS_S_U32, offsetof(rs_workload, factor), 0, 2, 1024, 0, 0, 0, "2",
     NULL, NULL, NULL, "multiply the size by this each step (nccl-tests -f)"},
};
static const rs_map rs_map_sizes = {
    "workload.sizes", "The size sweep, in bytes per rank as nccl-tests counts them (for allgather and "
    "reduce_scatter: the whole gathered buffer).",
    rs_keys_sizes, RS_COUNT(rs_keys_sizes), 1, 0, 0, NULL, rs_check_sizes};

static const rs_key rs_keys_tensor[] = {
    {"name", RS_T_STR, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_tensor, name), 0, 0, 0, RS_F_REQUIRED, 0, 0, NULL,
     NULL, NULL, NULL, "the gradient tensor, e.g. layer1.0.conv1.weight"},
    {"params", RS_T_U64, RS_UNIT_COUNT, RS_S_U64, offsetof(rs_tensor, params), 0, 0, 0, RS_F_REQUIRED, 0, 0, NULL,
     NULL, NULL, NULL, "elements (at least 1)"},
    {"forward", RS_T_UNIT, RS_UNIT_TIME, RS_S_DBL, offsetof(rs_tensor, forward), 0, 0, 1.0, 0, 0, 0, "0 s", NULL,
     NULL, NULL, "forward compute per sample of the layer this tensor belongs to (0 when another tensor of the "
     "layer carries it)"},
    {"backward", RS_T_UNIT, RS_UNIT_TIME, RS_S_DBL, offsetof(rs_tensor, backward), 0, 0, 1.0, 0, 0, 0, "0 s",
     NULL, NULL, NULL, "backward compute per sample; this tensor's gradient is ready when it ends"},
};
static const rs_map rs_map_tensor = {
    "tensors[]", "One gradient tensor of a model table, in registration (forward) order: "
    "back-propagation produces them from the last to the first.",
    rs_keys_tensor, RS_COUNT(rs_keys_tensor), 1, sizeof(rs_tensor), offsetof(rs_tensor, line), NULL, NULL};

static int rs_check_model_table(rs_ctx *c, yaml_node_t *node, void *base);
static const rs_key rs_keys_model_table[] = {
    {"name", RS_T_STR, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_training, model_name), 0, 0, 0, RS_F_REQUIRED, 0, 0,
     NULL, NULL, NULL, NULL, "the model, as reports show it"},
    {"source", RS_T_STR, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_training, model_source), 0, 0, 0, RS_F_REQUIRED, 0,
     0, NULL, NULL, NULL, NULL, "where the parameter counts come from and the compute speed the times assume"},
    {"tensors", RS_T_SEQ, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_training, tensors),
     offsetof(rs_training, tensors_count), 0, 0, RS_F_REQUIRED, 0, 0, NULL, NULL, NULL, &rs_map_tensor,
     "the gradient tensors"},
};
static const rs_map rs_map_model_table = {
    "(model table)", "A model table file (workload.training.model): a training model's gradient tensors "
    "with their compute times per sample.",
    rs_keys_model_table, RS_COUNT(rs_keys_model_table), 0, 0, 0, NULL, rs_check_model_table};

static int rs_check_training(rs_ctx *c, yaml_node_t *node, void *base);
static const rs_key rs_keys_training[] = {
    {"model", RS_T_STR, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_training, model), 0, 0, 0, 0, 0, 0, NULL, "none",
     NULL, NULL, "a model table file (scenarios/models/), relative to the scenario: makes the workload a "
     "data-parallel training step instead of a size sweep"},
    {"micro_batch", RS_T_INT, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_training, micro_batch), 0, 1, 1000000, 0, 0, 0,
     "32", NULL, NULL, NULL, "samples per NPU per iteration: compute times are the table's per-sample times "
     "times this"},
    {"fusion", RS_T_STR, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_training, fusion), 0, 0, 0, 0, 0, 0, "default", NULL,
     NULL, NULL, "how gradients are fused into allreduce buckets: default (sizes: 96.54, 3.46), sizes: P1, P2, "
     "..., indices: I1, I2, ..., threshold: SIZE, single, none (see Training)"},
};
static const rs_map rs_map_training = {
    "workload.training", "A data-parallel training step: compute as device busy time, each fused gradient "
    "bucket allreduced as soon as back-propagation has produced it.",
    rs_keys_training, RS_COUNT(rs_keys_training), 0, 0, 0, NULL, rs_check_training};

static const rs_key rs_keys_workload[] = {
    {"collectives", RS_T_COLLS, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_workload, colls),
     offsetof(rs_workload, colls_count), 0, 0, 0, 0, 0, "allreduce", NULL, &rs_enum_coll, NULL,
     "one collective or a list, each run over the whole sweep; `all` = every one"},
    {"algorithm", RS_T_ENUM, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_workload, algo), 0, 0, 0, 0, 0, 0, "auto",
     NULL, &rs_enum_algo, NULL, "auto lets the engine choose; a forced one must implement every collective"},
    {"dtype", RS_T_ENUM, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_workload, dtype), 0, 0, 0, 0, 0, 0, "float",
     NULL, &rs_enum_dtype, NULL, "element type, nccl-tests names (aliases: fp16, bf16, fp32, fp64, ...)"},
    {"op", RS_T_ENUM, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_workload, op), 0, 0, 0, 0, 0, 0, "sum", NULL,
     &rs_enum_op, NULL, "reduction operator"},
    {"root", RS_T_INT, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_workload, root), 0, 0, RS_MAX_RANK, 0, 0, 0, "0",
     NULL, NULL, NULL, "root of broadcast and reduce; below ranks"},
    {"sizes", RS_T_MAP, RS_UNIT_COUNT, RS_S_NONE, 0, 0, 0, 0, 0, 0, 0, NULL, "each key's default", NULL,
     &rs_map_sizes, "the size sweep"},
    {"iterations", RS_T_INT, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_workload, iters), 0, 1, 1000000, 0, 0, 0,
     "1", NULL, NULL, NULL, "timed iterations per size; simulated time is deterministic, so 1 measures it"},
    {"warmup", RS_T_INT, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_workload, warmup), 0, 0, 1000000, 0, 0, 0, "0",
     NULL, NULL, NULL, "untimed iterations before them"},
    {"channels", RS_T_INT, RS_UNIT_COUNT, RS_S_U32, offsetof(rs_workload, channels), 0, 1, 8, 0, 0, 0, NULL,
     "one per ring, at least 2", NULL, NULL,
     "parallel queues of the ring algorithms (ringsim --channels); channel c runs on ring c mod rings"},
    {"rings", RS_T_ENUM, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_workload, rings), 0, 0, 0, 0, 0, 0, "auto",
     NULL, &rs_enum_rings, NULL,
     "auto: rings over direct links found from the topology, no link used twice (the 8-NPU server "
     "has 4); rank: the one ring 0, 1, ..., p-1"},
    {"deterministic", RS_T_BOOL, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_workload, deterministic), 0, 0, 1, 0, 0, 0,
     "false", NULL, &rs_enum_bool, NULL,
     "true: allreduce sums every element in rank order whatever the algorithm and size (the det "
     "algorithm: a full-mesh reduce-scatter + allgather in rank order)"},
    {"wide_accumulation", RS_T_BOOL, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_workload, wide_accumulation), 0, 0, 1,
     0, 0, 0, "false", NULL, &rs_enum_bool, NULL,
     "true (with deterministic, dtype half or bfloat16): sums accumulate in fp32 in rank order and are "
     "rounded once, not after every rank"},
    {"inter_algorithm", RS_T_ENUM, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_workload, inter_algo), 0, 0, 0, 0, 0, 0,
     "auto", NULL, &rs_enum_inter, NULL,
     "the hier algorithm's inter-server level: auto = ring when the server count is not a power of "
     "two, hd otherwise"},
    {"schedule", RS_T_STR, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_workload, schedule), 0, 0, 0, 0, 0, 0, NULL,
     "none", NULL, NULL,
     "a user-defined schedule file (see User-defined schedules), relative to the scenario: the algorithm of "
     "its one collective, which must be the only one listed; proven by the checker before anything runs"},
    {"training", RS_T_MAP, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_workload, training), 0, 0, 0, 0, 0, 0, NULL,
     "none", NULL, &rs_map_training, "a training step instead of the sweep (see Training)"},
};
static const rs_map rs_map_workload = {
    "workload", "What to run, as nccl-tests would: every collective over the size sweep.",
    rs_keys_workload, RS_COUNT(rs_keys_workload), 0, 0, 0, NULL, rs_check_workload};

static const rs_key rs_keys_fault[] = {
    {"at", RS_T_UNIT, RS_UNIT_TIME, RS_S_DBL, offsetof(rs_fault, at), 0, 0, 1e6, RS_F_REQUIRED, 0, 0, NULL,
     NULL, NULL, NULL, "simulated time of the change, from the start of the run"},
    {"link", RS_T_PAIR, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_fault, ends.a), 0, 0, RS_MAX_NODE,
     RS_F_REQUIRED, 0, 0, NULL, NULL, NULL, NULL,
     "[from, to]: a link the topology has; nodes as in overrides (switches after the ranks)"},
    {"both", RS_T_BOOL, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_fault, ends.both), 0, 0, 1, 0, 0, 0, "true",
     NULL, &rs_enum_bool, NULL, "true: both directions; false: from -> to only"},
    {"action", RS_T_ENUM, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_fault, kind), 0, 0, 0, RS_F_REQUIRED, 0, 0,
     NULL, NULL, &rs_enum_action, NULL, "down: the link stops; degrade: new bandwidth and/or latency"},
    {"bandwidth", RS_T_UNIT, RS_UNIT_BANDWIDTH, RS_S_DBL, offsetof(rs_fault, bandwidth), 0, 0, RS_BW_MAX,
     RS_F_MIN_EXCL | RS_F_UNSET, 0, 0, NULL, "unchanged", NULL, NULL, "degrade: new bandwidth"},
    {"latency", RS_T_UNIT, RS_UNIT_TIME, RS_S_DBL, offsetof(rs_fault, latency), 0, 0, 1.0, RS_F_UNSET, 0, 0,
     NULL, "unchanged", NULL, NULL, "degrade: new latency"},
};
static const rs_map rs_map_fault = {
    "faults[]", "Changes to links at a simulated time. A collective that needs a link that is down "
    "ends with the engine's timeout error.",
    rs_keys_fault, RS_COUNT(rs_keys_fault), 1, sizeof(rs_fault), offsetof(rs_fault, ends.line), NULL,
    rs_check_fault};

static const rs_key rs_keys_top[] = {
    {"name", RS_T_STR, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_scenario, name), 0, 0, 0, 0, 0, 0, NULL,
     "the file name without .yaml", NULL, NULL, "short name shown in reports"},
    {"description", RS_T_STR, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_scenario, description), 0, 0, 0, 0, 0,
     0, "", NULL, NULL, NULL, "what the scenario shows"},
    {"topology", RS_T_MAP, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_scenario, topo), 0, 0, 0, RS_F_REQUIRED, 0,
     0, NULL, NULL, NULL, &rs_map_topology, "what is connected to what, and the links' parameters"},
    {"device", RS_T_MAP, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_scenario, device), 0, 0, 0, 0, 0, 0, NULL,
     "each key's default", NULL, &rs_map_device, "parameters of every NPU"},
    {"workload", RS_T_MAP, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_scenario, workload), 0, 0, 0, 0, 0, 0,
     NULL, "each key's default", NULL, &rs_map_workload, "what runs: collectives, sizes, dtype, ..."},
    {"payload", RS_T_ENUM, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_scenario, payload_real), 0, 0, 0, 0, 0, 0,
     "real", NULL, &rs_enum_payload, NULL,
     "real: bytes are moved, reduced and checked (#wrong); none: timing only"},
    {"fidelity", RS_T_ENUM, RS_UNIT_COUNT, RS_S_I32, offsetof(rs_scenario, fidelity), 0, 0, 0, 0, 0, 0,
     "message", NULL, &rs_enum_fidelity, NULL,
     "message: a transfer is one event, bandwidth shared fairly; packet: every packet and credit"},
    {"seed", RS_T_U64, RS_UNIT_COUNT, RS_S_U64, offsetof(rs_scenario, seed), 0, 0, 0, 0, 0, 0, "1", NULL,
     NULL, NULL, "seed of the input data; same scenario + seed = same results and times"},
    {"faults", RS_T_SEQ, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_scenario, faults),
     offsetof(rs_scenario, faults_count), 0, 0, 0, 0, 0, NULL, "none", NULL, &rs_map_fault,
     "link changes at simulated times"},
};
static const rs_map rs_map_top = {
    "", "The top level of a scenario file. Only `topology` (with its `kind`) is required.",
    rs_keys_top, RS_COUNT(rs_keys_top), 0, 0, 0, NULL, rs_check_top};

/* The maps in reference order. */
static const rs_map *const rs_all_maps[] = {
    &rs_map_top,      &rs_map_topology, &rs_map_link,     &rs_map_nic,    &rs_map_switch,
    &rs_map_link_item, &rs_map_override, &rs_map_device,  &rs_map_workload, &rs_map_sizes,
    &rs_map_training, &rs_map_fault, &rs_map_model_table, &rs_map_tensor,
};

/* What links each kind has between ranks, for messages and the reference. */
static const char *const rs_kind_links[RS_TOPO_KIND_COUNT] = {
    [RS_TOPO_RING] = "i -> i+1 (mod ranks) only: ring links go one way, so name them with both: false",
    [RS_TOPO_BIRING] = "neighbours i and i+1 (mod ranks)",
    [RS_TOPO_FULL_MESH] = "any two different ranks",
    [RS_TOPO_TORUS2D] = "neighbours in a row or a column, rank = row * columns + column",
    [RS_TOPO_SWITCH] = "a rank and the switch, node ranks + 0; ranks meet only through it",
    [RS_TOPO_FAT_TREE] = "a rank r and its leaf, node ranks + r / per_leaf; a leaf and a spine, nodes "
                         "ranks + leaves + s; ranks meet only through switches",
    [RS_TOPO_SERVER8] = "two ranks of 0-3, two of 4-7, or a cross pair 0-4, 1-5, 2-6, 3-7",
    [RS_TOPO_CLUSTER] = "pairs inside one server as in server8 (ranks 8s to 8s+7), and a rank's NIC "
                        "link to the switch, node ranks + 0",
    [RS_TOPO_LINKS] = "the links listed in topology.links",
};

/* ---- errors and paths ------------------------------------------------------------------------- */

/* Records the first failure as "file:line: path[.child]: message". Always returns -1. */
static int rs_fail(rs_ctx *c, int line, const char *child, const char *fmt, ...)
{
    if (c->failed)
        return -1;
    c->failed = 1;
    if (c->err == NULL || c->errlen == 0)
        return -1;
    char key[320];
    if (child && c->pathlen)
        snprintf(key, sizeof key, "%s%s%s", c->path, child[0] == '[' ? "" : ".", child);
    else if (child)
        snprintf(key, sizeof key, "%s", child);
    else
        snprintf(key, sizeof key, "%s", c->pathlen ? c->path : "(document)");
    va_list ap;
    va_start(ap, fmt);
    rs_scenario_vformat_error(c->err, c->errlen, c->file, line, key, fmt, ap);
    va_end(ap);
    return -1;
}

void rs_scenario_vformat_error(char *err, size_t len, const char *file, int line, const char *key,
                               const char *fmt, va_list ap)
{
    int n = snprintf(err, len, "%s:%d: %s: ", file, line, key);
    if (n >= 0 && (size_t)n < len)
        vsnprintf(err + n, len - (size_t)n, fmt, ap);
    /* one line, whatever the file contained */
    for (char *p = err; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
}

static size_t rs_push(rs_ctx *c, const char *name)
{
    size_t old = c->pathlen;
    snprintf(c->path + old, sizeof c->path - old, "%s%s", old ? "." : "", name);
    c->pathlen = strlen(c->path);
    return old;
}

static size_t rs_push_index(rs_ctx *c, size_t i)
{
    size_t old = c->pathlen;
    snprintf(c->path + old, sizeof c->path - old, "[%zu]", i);
    c->pathlen = strlen(c->path);
    return old;
}

static void rs_pop(rs_ctx *c, size_t old)
{
    c->pathlen = old;
    c->path[old] = '\0';
}

/* ---- the YAML tree ---------------------------------------------------------------------------- */

static int rs_line(const yaml_node_t *n) { return n ? (int)n->start_mark.line + 1 : 1; }

static yaml_node_t *rs_node(rs_ctx *c, int id) { return yaml_document_get_node(c->doc, id); }

static const char *rs_scalar(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }

static int rs_is_null(const yaml_node_t *n)
{
    if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return 0;
    const char *s = rs_scalar(n);
    return s[0] == '\0' || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 || strcmp(s, "Null") == 0 ||
           strcmp(s, "NULL") == 0;
}

static const char *rs_what(const yaml_node_t *n)
{
    if (n->type == YAML_MAPPING_NODE)
        return "a mapping";
    if (n->type == YAML_SEQUENCE_NODE)
        return "a list";
    return rs_is_null(n) ? "an empty value" : "a single value";
}

/* The value of `key` in a mapping node (and the key node in *keynode if asked), or NULL. */
static yaml_node_t *rs_get2(rs_ctx *c, yaml_node_t *map, const char *key, yaml_node_t **keynode)
{
    if (map == NULL || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = rs_node(c, p->key);
        if (k && k->type == YAML_SCALAR_NODE && strcmp(rs_scalar(k), key) == 0) {
            if (keynode)
                *keynode = k;
            return rs_node(c, p->value);
        }
    }
    return NULL;
}

static yaml_node_t *rs_get(rs_ctx *c, yaml_node_t *map, const char *key) { return rs_get2(c, map, key, NULL); }

/* Line of `key` in a mapping: where the key is written (a block value starts a line later). */
static int rs_key_line(rs_ctx *c, yaml_node_t *map, const char *key)
{
    yaml_node_t *k = NULL;
    if (rs_get2(c, map, key, &k) == NULL)
        return c->owner_line ? c->owner_line : rs_line(map);
    return rs_line(k);
}

/* Line of sub.key in map: of `key` if written, else of `sub`, else of the owner. */
static int rs_sub_key_line(rs_ctx *c, yaml_node_t *map, const char *sub, const char *key)
{
    yaml_node_t *sk = NULL, *sv = rs_get2(c, map, sub, &sk);
    if (sv && rs_get(c, sv, key))
        return rs_key_line(c, sv, key);
    return sk ? rs_line(sk) : rs_key_line(c, map, sub);
}

/* Line of `field` of item i of list `seqkey` in map, falling back to the item, list, map. */
static int rs_item_line(rs_ctx *c, yaml_node_t *map, const char *seqkey, size_t i, const char *field)
{
    yaml_node_t *seq = rs_get(c, map, seqkey);
    if (seq == NULL || seq->type != YAML_SEQUENCE_NODE)
        return rs_line(map);
    if (i >= (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start))
        return rs_line(seq);
    yaml_node_t *item = rs_node(c, seq->data.sequence.items.start[i]);
    if (item == NULL)
        return rs_line(seq);
    return field ? rs_key_line(c, item, field) : rs_line(item);
}

/* ---- values ----------------------------------------------------------------------------------- */

static void rs_put_i32(void *base, size_t off, int32_t v) { memcpy((char *)base + off, &v, sizeof v); }
static void rs_put_u32(void *base, size_t off, uint32_t v) { memcpy((char *)base + off, &v, sizeof v); }
static void rs_put_u64(void *base, size_t off, uint64_t v) { memcpy((char *)base + off, &v, sizeof v); }
static void rs_put_dbl(void *base, size_t off, double v) { memcpy((char *)base + off, &v, sizeof v); }
static int32_t rs_get_i32(const void *base, size_t off) { int32_t v; memcpy(&v, (const char *)base + off, sizeof v); return v; }
static uint32_t rs_get_u32(const void *base, size_t off) { uint32_t v; memcpy(&v, (const char *)base + off, sizeof v); return v; }
static uint64_t rs_get_u64(const void *base, size_t off) { uint64_t v; memcpy(&v, (const char *)base + off, sizeof v); return v; }
static double rs_get_dbl(const void *base, size_t off) { double v; memcpy(&v, (const char *)base + off, sizeof v); return v; }
static void *rs_get_ptr(const void *base, size_t off) { void *v; memcpy(&v, (const char *)base + off, sizeof v); return v; }
static size_t rs_get_size(const void *base, size_t off) { size_t v; memcpy(&v, (const char *)base + off, sizeof v); return v; }

/* Text of a number in the key's unit (for ranges and messages). */
static void rs_fmt_unit(const rs_key *k, double v, char *buf, size_t len)
{
    if (k->type == RS_T_UNIT)
        rs_units_format(v, k->unit, buf, len);
    else
        snprintf(buf, len, "%.0f", v);
}

/* What a key accepts, for "(allowed: ...)". */
static void rs_allowed(const rs_key *k, char *buf, size_t len)
{
    char lo[48], hi[48];
    switch (k->type) {
    case RS_T_INT:
        snprintf(buf, len, "a whole number from %.0f to %.0f", k->min, k->max);
        break;
    case RS_T_U64:
        snprintf(buf, len, "a whole number from 0 to 18446744073709551615, decimal or 0x hex");
        break;
    case RS_T_UNIT:
        rs_fmt_unit(k, k->min, lo, sizeof lo);
        rs_fmt_unit(k, k->max, hi, sizeof hi);
        if (k->flags & RS_F_MIN_EXCL)
            snprintf(buf, len, "a %s above %s, up to %s", rs_units_kind_name(k->unit), lo, hi);
        else
            snprintf(buf, len, "a %s from %s to %s", rs_units_kind_name(k->unit), lo, hi);
        break;
    case RS_T_BOOL:
        snprintf(buf, len, "true, false");
        break;
    case RS_T_ENUM:
        rs_enum_list(k->names, buf, len);
        break;
    case RS_T_STR:
        snprintf(buf, len, "any text");
        break;
    case RS_T_PAIR:
        snprintf(buf, len, "two whole numbers from %.0f to %.0f, e.g. [%.0f, %.0f]", k->min, k->max, k->min,
                 k->min + 1);
        break;
    case RS_T_COLLS: {
        char list[160];
        rs_enum_list(k->names, list, sizeof list);
        snprintf(buf, len, "%s, all, or a list of them", list);
        break;
    }
    case RS_T_MAP:
    case RS_T_SEQ: {
        size_t used = (size_t)snprintf(buf, len, "%s", k->type == RS_T_MAP ? "a mapping of " : "a list of mappings of ");
        for (size_t i = 0; i < k->sub->nkeys && used < len; i++)
            used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", k->sub->keys[i].name);
        break;
    }
    }
}

/* Strict whole number: optional sign, digits, nothing else. 0 ok, -1 not a number, -2 overflow. */
static int rs_parse_ll(const char *s, long long *out)
{
    const char *p = s;
    int neg = 0;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    if (*p < '0' || *p > '9')
        return -1;
    unsigned long long v = 0;
    int over = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (unsigned long long)LLONG_MAX / 10)
            over = 1;
        else
            v = v * 10 + (unsigned)(*p - '0');
        if (v > (unsigned long long)LLONG_MAX)
            over = 1;
    }
    if (*p != '\0')
        return -1;
    if (over)
        return -2;
    *out = neg ? -(long long)v : (long long)v;
    return 0;
}

static int rs_parse_u64(const char *s, uint64_t *out)
{
    const char *p = s;
    int base = 10;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        base = 16;
        p += 2;
    }
    if (*p == '\0')
        return -1;
    uint64_t v = 0;
    for (; *p; p++) {
        int d;
        if (*p >= '0' && *p <= '9')
            d = *p - '0';
        else if (base == 16 && *p >= 'a' && *p <= 'f')
            d = *p - 'a' + 10;
        else if (base == 16 && *p >= 'A' && *p <= 'F')
            d = *p - 'A' + 10;
        else
            return -1;
        if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
            return -2;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    *out = v;
    return 0;
}

/* The short form of a value in messages: quoted, clipped. */
static void rs_show(const char *text, char *buf, size_t len)
{
    snprintf(buf, len, "'%.48s%s'", text, strlen(text) > 48 ? "..." : "");
}

static int rs_enum_lookup(const rs_enum *e, const char *s, int *value)
{
    for (size_t i = 0; i < e->count; i++)
        if (strcmp(e->names[i].name, s) == 0) {
            *value = e->names[i].value;
            return 0;
        }
    return -1;
}

static int rs_bad_enum(rs_ctx *c, int line, const rs_enum *e, const char *text)
{
    const char *names[32];
    size_t n = 0;
    for (size_t i = 0; i < e->count && n < RS_COUNT(names); i++)
        names[n++] = e->names[i].name;
    const char *hint = rs_suggest(text, strlen(text), names, n);
    char allowed[256], shown[64];
    rs_enum_list(e, allowed, sizeof allowed);
    rs_show(text, shown, sizeof shown);
    if (hint)
        return rs_fail(c, line, NULL, "%s is not %s, did you mean '%s'? (allowed: %s)", shown, e->what, hint,
                       allowed);
    return rs_fail(c, line, NULL, "%s is not %s (allowed: %s)", shown, e->what, allowed);
}

/* Adds one collective name to the list at base (a rs_workload). */
static int rs_add_coll(rs_ctx *c, int line, const rs_key *k, const char *text, void *base)
{
    rs_workload *w = base;
    char allowed[256], shown[64];
    rs_allowed(k, allowed, sizeof allowed);
    rs_show(text, shown, sizeof shown);
    if (strcmp(text, "all") == 0) {
        for (int v = 0; v < NCL_COLL_COUNT; v++) {
            int dup = 0;
            for (int i = 0; i < w->colls_count; i++)
                dup |= w->colls[i] == (ncl_coll)v;
            if (!dup && w->colls_count < NCL_COLL_COUNT)
                w->colls[w->colls_count++] = (ncl_coll)v;
        }
        return 0;
    }
    int v;
    if (rs_enum_lookup(k->names, text, &v) != 0)
        return rs_bad_enum(c, line, k->names, text);
    for (int i = 0; i < w->colls_count; i++)
        if (w->colls[i] == (ncl_coll)v)
            return rs_fail(c, line, NULL, "%s is listed twice (allowed: each collective once)", shown);
    if (w->colls_count >= NCL_COLL_COUNT)
        return rs_fail(c, line, NULL, "too many collectives (allowed: %s)", allowed);
    w->colls[w->colls_count++] = (ncl_coll)v;
    return 0;
}

/* Sets key k of base from the text of a scalar (or of the key's default, line 0). */
static int rs_set_text(rs_ctx *c, int line, const rs_key *k, const char *text, int is_null, void *base)
{
    char allowed[512], shown[64];
    rs_allowed(k, allowed, sizeof allowed);
    rs_show(text, shown, sizeof shown);
    if (is_null && k->type != RS_T_STR)
        return rs_fail(c, line, NULL, "has no value (allowed: %s)", allowed);
    switch (k->type) {
    case RS_T_INT: {
        long long v = 0;
        int rc = rs_parse_ll(text, &v);
        if (rc == -1)
            return rs_fail(c, line, NULL, "%s is not a whole number (allowed: %s)", shown, allowed);
        if (rc == -2 || (double)v < k->min || (double)v > k->max)
            return rs_fail(c, line, NULL, "%s is out of range (allowed: %s)", shown, allowed);
        if (k->store == RS_S_U32)
            rs_put_u32(base, k->offset, (uint32_t)v);
        else
            rs_put_i32(base, k->offset, (int32_t)v);
        return 0;
    }
    case RS_T_U64: {
        uint64_t v = 0;
        int rc = rs_parse_u64(text, &v);
        if (rc == -1)
            return rs_fail(c, line, NULL, "%s is not a whole number (allowed: %s)", shown, allowed);
        if (rc == -2)
            return rs_fail(c, line, NULL, "%s is out of range (allowed: %s)", shown, allowed);
        rs_put_u64(base, k->offset, v);
        return 0;
    }
    case RS_T_UNIT: {
        double v = 0;
        char why[160];
        rs_units_status st = rs_units_parse(text, k->unit, &v, why, sizeof why);
        if (st != RS_UNITS_OK)
            return rs_fail(c, line, NULL, "%s (allowed: %s)", why,
                           st == RS_UNITS_RANGE ? allowed : rs_units_allowed(k->unit));
        if (!(v >= k->min) || v > k->max || ((k->flags & RS_F_MIN_EXCL) && !(v > k->min)))
            return rs_fail(c, line, NULL, "%s is out of range (allowed: %s)", shown, allowed);
        if (k->store == RS_S_DBL) {
            rs_put_dbl(base, k->offset, v);
            return 0;
        }
        if (v != floor(v))
            return rs_fail(c, line, NULL, "%s is not a whole number of bytes (allowed: %s)", shown, allowed);
        if (k->store == RS_S_U32)
            rs_put_u32(base, k->offset, (uint32_t)v);
        else
            rs_put_u64(base, k->offset, (uint64_t)v);
        return 0;
    }
    case RS_T_BOOL:
    case RS_T_ENUM: {
        int v;
        if (rs_enum_lookup(k->names, text, &v) != 0)
            return rs_bad_enum(c, line, k->names, text);
        rs_put_i32(base, k->offset, v);
        return 0;
    }
    case RS_T_STR: {
        char *s = strdup(is_null ? "" : text);
        if (s == NULL)
            return rs_fail(c, line, NULL, "out of memory");
        free(rs_get_ptr(base, k->offset));
        memcpy((char *)base + k->offset, &s, sizeof s);
        return 0;
    }
    case RS_T_COLLS:
        ((rs_workload *)base)->colls_count = 0;
        return rs_add_coll(c, line, k, text, base);
    default:
        return rs_fail(c, line, NULL, "expected %s, got a single value (allowed: %s)",
                       k->type == RS_T_MAP ? "a mapping" : "a list", allowed);
    }
}

/* ---- walking ---------------------------------------------------------------------------------- */

static int rs_parse_map(rs_ctx *c, yaml_node_t *node, const rs_map *m, void *base);

/* Applies the defaults of every key of m (recursively) to base. */
static int rs_defaults(rs_ctx *c, const rs_map *m, void *base)
{
    for (size_t i = 0; i < m->nkeys; i++) {
        const rs_key *k = &m->keys[i];
        size_t old = rs_push(c, k->name);
        int rc = 0;
        if (k->type == RS_T_MAP)
            rc = rs_defaults(c, k->sub, (char *)base + k->offset);
        else if (k->def)
            rc = rs_set_text(c, 0, k, k->def, 0, base);
        else if (k->flags & RS_F_UNSET)
            rs_put_dbl(base, k->offset, -1.0);
        rs_pop(c, old);
        if (rc)
            return rc;
    }
    return 0;
}

static int rs_parse_scalar(rs_ctx *c, yaml_node_t *node, const rs_key *k, void *base)
{
    char allowed[512];
    if (node->type != YAML_SCALAR_NODE) {
        rs_allowed(k, allowed, sizeof allowed);
        return rs_fail(c, rs_line(node), NULL, "expected a single value, got %s (allowed: %s)", rs_what(node),
                       allowed);
    }
    if (strlen(rs_scalar(node)) != node->data.scalar.length)
        return rs_fail(c, rs_line(node), NULL, "the value contains a NUL character (allowed: text without one)");
    return rs_set_text(c, rs_line(node), k, rs_scalar(node), rs_is_null(node), base);
}

static int rs_parse_pair(rs_ctx *c, yaml_node_t *node, const rs_key *k, void *base)
{
    char allowed[256];
    rs_allowed(k, allowed, sizeof allowed);
    if (node->type != YAML_SEQUENCE_NODE ||
        node->data.sequence.items.top - node->data.sequence.items.start != 2)
        return rs_fail(c, rs_line(node), NULL, "expected a list of two numbers, got %s%s (allowed: %s)",
                       node->type == YAML_SEQUENCE_NODE ? "a list of " : rs_what(node),
                       node->type == YAML_SEQUENCE_NODE ? "another length" : "", allowed);
    for (int i = 0; i < 2; i++) {
        yaml_node_t *item = rs_node(c, node->data.sequence.items.start[i]);
        long long v = 0;
        if (item == NULL || item->type != YAML_SCALAR_NODE)
            return rs_fail(c, rs_line(item ? item : node), NULL, "expected two numbers, got %s (allowed: %s)",
                           item ? rs_what(item) : "nothing", allowed);
        char shown[64];
        rs_show(rs_scalar(item), shown, sizeof shown);
        int rc = rs_parse_ll(rs_scalar(item), &v);
        if (rc == -1 || strlen(rs_scalar(item)) != item->data.scalar.length)
            return rs_fail(c, rs_line(item), NULL, "%s is not a whole number (allowed: %s)", shown, allowed);
        if (rc == -2 || (double)v < k->min || (double)v > k->max)
            return rs_fail(c, rs_line(item), NULL, "%s is out of range (allowed: %s)", shown, allowed);
        rs_put_i32(base, k->offset + (size_t)i * sizeof(int32_t), (int32_t)v);
    }
    return 0;
}

static int rs_parse_colls(rs_ctx *c, yaml_node_t *node, const rs_key *k, void *base)
{
    if (node->type == YAML_SCALAR_NODE)
        return rs_parse_scalar(c, node, k, base);
    char allowed[256];
    rs_allowed(k, allowed, sizeof allowed);
    if (node->type != YAML_SEQUENCE_NODE)
        return rs_fail(c, rs_line(node), NULL, "expected a name or a list of names, got %s (allowed: %s)",
                       rs_what(node), allowed);
    rs_workload *w = base;
    w->colls_count = 0;
    if (node->data.sequence.items.top == node->data.sequence.items.start)
        return rs_fail(c, rs_line(node), NULL, "the list is empty (allowed: %s)", allowed);
    for (yaml_node_item_t *it = node->data.sequence.items.start; it < node->data.sequence.items.top; it++) {
        yaml_node_t *item = rs_node(c, *it);
        if (item == NULL || item->type != YAML_SCALAR_NODE || rs_is_null(item) ||
            strlen(rs_scalar(item)) != item->data.scalar.length)
            return rs_fail(c, rs_line(item ? item : node), NULL, "expected a collective name, got %s (allowed: %s)",
                           item ? rs_what(item) : "nothing", allowed);
        if (rs_add_coll(c, rs_line(item), k, rs_scalar(item), base) != 0)
            return -1;
    }
    return 0;
}

static int rs_parse_seq(rs_ctx *c, yaml_node_t *node, const rs_key *k, void *base)
{
    char allowed[512];
    rs_allowed(k, allowed, sizeof allowed);
    if (node->type != YAML_SEQUENCE_NODE)
        return rs_fail(c, rs_line(node), NULL, "expected a list, got %s (allowed: %s)", rs_what(node), allowed);
    size_t n = (size_t)(node->data.sequence.items.top - node->data.sequence.items.start);
    if (n > RS_MAX_ITEMS)
        return rs_fail(c, rs_line(node), NULL, "%zu entries (allowed: at most %u)", n, RS_MAX_ITEMS);
    const rs_map *m = k->sub;
    char *items = calloc(n ? n : 1, m->item_size);
    if (items == NULL)
        return rs_fail(c, rs_line(node), NULL, "out of memory");
    /* owned by the scenario from here on: rs_scenario_free releases it whatever happens next */
    free(rs_get_ptr(base, k->offset));
    memcpy((char *)base + k->offset, &items, sizeof items);
    memcpy((char *)base + k->offset2, &n, sizeof n);
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *item = rs_node(c, node->data.sequence.items.start[i]);
        void *ib = items + i * m->item_size;
        size_t old = rs_push_index(c, i);
        int rc = item == NULL ? rs_fail(c, rs_line(node), NULL, "missing entry") : rs_defaults(c, m, ib);
        if (rc == 0) {
            if (m->item_init)
                m->item_init(ib, c->sc);
            rs_put_i32(ib, m->line_offset, rs_line(item));
            int owner = c->owner_line;
            c->owner_line = rs_line(item);
            rc = rs_parse_map(c, item, m, ib);
            c->owner_line = owner;
        }
        rs_pop(c, old);
        if (rc)
            return rc;
    }
    return 0;
}

static int rs_parse_value(rs_ctx *c, yaml_node_t *node, const rs_key *k, void *base)
{
    switch (k->type) {
    case RS_T_MAP:
        return rs_parse_map(c, node, k->sub, (char *)base + k->offset);
    case RS_T_SEQ:
        return rs_parse_seq(c, node, k, base);
    case RS_T_PAIR:
        return rs_parse_pair(c, node, k, base);
    case RS_T_COLLS:
        return rs_parse_colls(c, node, k, base);
    default:
        return rs_parse_scalar(c, node, k, base);
    }
}

static const rs_key *rs_find_key(const rs_map *m, const char *name)
{
    for (size_t i = 0; i < m->nkeys; i++)
        if (strcmp(m->keys[i].name, name) == 0)
            return &m->keys[i];
    return NULL;
}

static void rs_key_list(const rs_map *m, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < m->nkeys && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", m->keys[i].name);
}

/* Kinds in a mask, "torus2d" or "switch, fat_tree, cluster". */
static void rs_kind_list(unsigned mask, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < RS_TOPO_KIND_COUNT && used < len; k++)
        if (mask & RS_K(k))
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
                                     rs_scenario_kind_name((rs_topo_kind)k));
}

/* Checks a mapping against m: unknown and duplicate keys first (in file order), then every key
 * of the schema in schema order (so `kind` is known before the keys that depend on it and
 * `link` before the `links` that inherit from it), then m's own check. */
static int rs_parse_map(rs_ctx *c, yaml_node_t *node, const rs_map *m, void *base)
{
    char allowed[512];
    rs_key_list(m, allowed, sizeof allowed);
    if (node->type != YAML_MAPPING_NODE)
        return rs_fail(c, rs_line(node), NULL, "expected a mapping, got %s (allowed: a mapping of %s)",
                       rs_what(node), allowed);
    yaml_node_pair_t *start = node->data.mapping.pairs.start, *top = node->data.mapping.pairs.top;
    for (yaml_node_pair_t *p = start; p < top; p++) {
        yaml_node_t *kn = rs_node(c, p->key);
        if (kn == NULL || kn->type != YAML_SCALAR_NODE || strlen(rs_scalar(kn)) != kn->data.scalar.length)
            return rs_fail(c, rs_line(kn ? kn : node), NULL, "a key must be a plain name, got %s (allowed: %s)",
                           kn ? rs_what(kn) : "nothing", allowed);
        const char *name = rs_scalar(kn);
        if (rs_find_key(m, name) == NULL) {
            const char *names[32];
            size_t n = 0;
            for (size_t i = 0; i < m->nkeys && n < RS_COUNT(names); i++)
                names[n++] = m->keys[i].name;
            const char *hint = rs_suggest(name, strlen(name), names, n);
            char shown[64];
            snprintf(shown, sizeof shown, "%.48s", name);
            if (hint)
                return rs_fail(c, rs_line(kn), shown, "unknown key, did you mean '%s'? (allowed: %s)", hint, allowed);
            return rs_fail(c, rs_line(kn), shown, "unknown key (allowed: %s)", allowed);
        }
        for (yaml_node_pair_t *q = start; q < p; q++) {
            yaml_node_t *qk = rs_node(c, q->key);
            if (qk && qk->type == YAML_SCALAR_NODE && strcmp(rs_scalar(qk), name) == 0)
                return rs_fail(c, rs_line(kn), name, "duplicate key, first at line %d (allowed: each key once)",
                               rs_line(qk));
        }
    }
    int owner = c->owner_line ? c->owner_line : rs_line(node);
    for (size_t i = 0; i < m->nkeys; i++) {
        const rs_key *k = &m->keys[i];
        yaml_node_t *kn = NULL;
        yaml_node_t *v = rs_get2(c, node, k->name, &kn);
        unsigned kind = RS_K(c->sc->topo.kind);
        if (v == NULL) {
            char what[512], kinds[128];
            rs_allowed(k, what, sizeof what);
            if (k->flags & RS_F_REQUIRED)
                return rs_fail(c, owner, k->name, "missing (allowed: %s)", what);
            if (k->req_kinds & kind) {
                rs_kind_list(kind, kinds, sizeof kinds);
                return rs_fail(c, owner, k->name, "missing: kind %s needs it (allowed: %s)", kinds, what);
            }
            continue;
        }
        if (k->kinds && !(k->kinds & kind)) {
            char kinds[128];
            rs_kind_list(k->kinds, kinds, sizeof kinds);
            return rs_fail(c, rs_line(kn), k->name, "not used by kind %s (allowed with kind: %s)",
                           rs_scenario_kind_name(c->sc->topo.kind), kinds);
        }
        size_t old = rs_push(c, k->name);
        c->owner_line = rs_line(kn);
        int rc = rs_parse_value(c, v, k, base);
        c->owner_line = owner;
        rs_pop(c, old);
        if (rc)
            return rc;
    }
    return m->check ? m->check(c, node, base) : 0;
}

/* ---- semantic checks -------------------------------------------------------------------------- */

static int rs_server8_link(int32_t a, int32_t b) { return a != b && (a / 4 == b / 4 || a % 4 == b % 4); }

uint32_t rs_scenario_switch_count(const rs_topology_spec *t)
{
    switch (t->kind) {
    case RS_TOPO_SWITCH:
    case RS_TOPO_CLUSTER:
        return 1;
    case RS_TOPO_FAT_TREE:
        return t->per_leaf > 0 ? (uint32_t)(t->nranks / t->per_leaf) + (uint32_t)t->spines : 0;
    default:
        return 0;
    }
}

/* a <-> b between a rank and a switch, or two switches (switch kinds only). */
static int rs_switch_link(const rs_topology_spec *t, int32_t a, int32_t b)
{
    int32_t p = t->nranks;
    if (a > b) {
        int32_t x = a;
        a = b;
        b = x;
    }
    switch (t->kind) {
    case RS_TOPO_SWITCH:
    case RS_TOPO_CLUSTER:
        return a < p && b == p;
    case RS_TOPO_FAT_TREE: {
        if (t->per_leaf <= 0)
            return 0;
        int32_t leaves = p / t->per_leaf;
        if (a < p)
            return b == p + a / t->per_leaf;
        return a < p + leaves && b >= p + leaves && b < p + leaves + t->spines;
    }
    default:
        return 0;
    }
}

int rs_scenario_link_exists(const rs_topology_spec *t, int32_t a, int32_t b)
{
    int32_t n = t->nranks;
    int64_t nodes = (int64_t)n + rs_scenario_switch_count(t);
    if (a < 0 || b < 0 || a >= nodes || b >= nodes || a == b)
        return 0;
    if (a >= n || b >= n)
        return rs_switch_link(t, a, b);
    switch (t->kind) {
    case RS_TOPO_RING:
        return b == (a + 1) % n;
    case RS_TOPO_BIRING:
        return b == (a + 1) % n || a == (b + 1) % n;
    case RS_TOPO_FULL_MESH:
        return 1;
    case RS_TOPO_TORUS2D: {
        int32_t cols = t->dims[1], rows = t->dims[0];
        if (rows <= 0 || cols <= 0)
            return 0;
        int32_t ra = a / cols, ca = a % cols, rb = b / cols, cb = b % cols;
        if (ra == rb)
            return cb == (ca + 1) % cols || ca == (cb + 1) % cols;
        if (ca == cb)
            return rb == (ra + 1) % rows || ra == (rb + 1) % rows;
        return 0;
    }
    case RS_TOPO_SERVER8:
        return rs_server8_link(a, b);
    case RS_TOPO_CLUSTER:
        return a / 8 == b / 8 && rs_server8_link(a % 8, b % 8);
    case RS_TOPO_LINKS:
        for (size_t i = 0; i < t->links_count; i++) {
            const rs_link_ref *r = &t->links[i].ends;
            if ((r->a == a && r->b == b) || (r->both && r->a == b && r->b == a))
                return 1;
        }
        return 0;
    default:
        return 0;
    }
}

uint64_t rs_scenario_link_count(const rs_topology_spec *t)
{
    uint64_t n = (uint64_t)(t->nranks > 0 ? t->nranks : 0);
    switch (t->kind) {
    case RS_TOPO_RING:
        return n;
    case RS_TOPO_BIRING:
        return n == 2 ? 2 : 2 * n;
    case RS_TOPO_FULL_MESH:
        return n * (n - 1);
    case RS_TOPO_TORUS2D: /* a dimension of 2 has one neighbour per rank, not two */
        return n * (uint64_t)((t->dims[0] == 2 ? 1 : 2) + (t->dims[1] == 2 ? 1 : 2));
    case RS_TOPO_SWITCH:
        return 2 * n;
    case RS_TOPO_FAT_TREE:
        return 2 * n + (t->per_leaf > 0 ? 2 * (n / (uint64_t)t->per_leaf) * (uint64_t)t->spines : 0);
    case RS_TOPO_SERVER8:
        return 32;
    case RS_TOPO_CLUSTER:
        return 32 * (uint64_t)t->servers + 2 * n;
    case RS_TOPO_LINKS: {
        uint64_t m = 0;
        for (size_t i = 0; i < t->links_count; i++)
            m += t->links[i].ends.both ? 2 : 1;
        return m;
    }
    default:
        return 0;
    }
}

/* rs_scenario_link_exists, through the sorted index for kind links. */
static int rs_has_link(rs_ctx *c, int32_t a, int32_t b)
{
    if (c->sc->topo.kind != RS_TOPO_LINKS || c->chans == NULL)
        return rs_scenario_link_exists(&c->sc->topo, a, b);
    size_t lo = 0, hi = c->nchans;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const rs_chan *m = &c->chans[mid];
        if (m->a < a || (m->a == a && m->b < b))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->nchans && c->chans[lo].a == a && c->chans[lo].b == b;
}

/* Checks that a link named by a scenario (override, fault) exists. `item` names the entry in
 * messages ("overrides[2]", "link"), fa/fb its endpoint keys ("overrides[2].from", "link"). */
static int rs_check_ref(rs_ctx *c, const rs_link_ref *r, const char *item, const char *fa, const char *fb,
                        int line_a, int line_b)
{
    const rs_topology_spec *t = &c->sc->topo;
    int64_t nodes = (int64_t)t->nranks + rs_scenario_switch_count(t);
    if (r->a >= nodes || r->b >= nodes) {
        int bad_a = r->a >= nodes;
        if (nodes == t->nranks)
            return rs_fail(c, bad_a ? line_a : line_b, bad_a ? fa : fb, "%d is not a rank (allowed: 0 to %d)",
                           bad_a ? r->a : r->b, t->nranks - 1);
        return rs_fail(c, bad_a ? line_a : line_b, bad_a ? fa : fb,
                       "%d is not a node (allowed: ranks 0 to %d, switches %d to %lld)", bad_a ? r->a : r->b,
                       t->nranks - 1, t->nranks, (long long)nodes - 1);
    }
    if (r->a == r->b)
        return rs_fail(c, line_b, item, "both ends are rank %d (allowed: two different ranks)", r->a);
    int32_t x = r->a, y = r->b;
    int fwd = rs_has_link(c, x, y);
    if (!fwd || (r->both && !rs_has_link(c, y, x))) {
        if (fwd) {
            x = r->b;
            y = r->a;
        }
        return rs_fail(c, line_b, item, "kind %s has no link %d -> %d%s (allowed: %s)",
                       rs_scenario_kind_name(t->kind), x, y, fwd ? ", which both: true also names" : "",
                       rs_kind_links[t->kind]);
    }
    return 0;
}

static int rs_check_params(rs_ctx *c, const rs_link_params *p, yaml_node_t *node, const char *pre)
{
    uint64_t need = (uint64_t)p->packet_bytes + p->header_bytes;
    if (p->buffer_bytes < need) {
        char key[96], have[48], pk[48], hd[48];
        snprintf(key, sizeof key, "%sbuffer", pre);
        rs_units_format(p->buffer_bytes, RS_UNIT_SIZE, have, sizeof have);
        rs_units_format(p->packet_bytes, RS_UNIT_SIZE, pk, sizeof pk);
        rs_units_format(p->header_bytes, RS_UNIT_SIZE, hd, sizeof hd);
        return rs_fail(c, rs_key_line(c, node, "buffer"), key,
                       "%s cannot hold one %s packet + %s header (allowed: at least %llu B)", have, pk, hd,
                       (unsigned long long)need);
    }
    return 0;
}

static int rs_check_link(rs_ctx *c, yaml_node_t *node, void *base)
{
    return rs_check_params(c, base, node, "");
}

static int rs_check_link_item(rs_ctx *c, yaml_node_t *node, void *base)
{
    return rs_check_params(c, &((rs_link_spec *)base)->params, node, "");
}

static void rs_init_link_item(void *item, const rs_scenario *sc)
{
    ((rs_link_spec *)item)->params = sc->topo.link;
}

static int rs_check_override(rs_ctx *c, yaml_node_t *node, void *base)
{
    const rs_link_override *o = base;
    if (o->bandwidth < 0 && o->latency < 0)
        return rs_fail(c, rs_line(node), NULL, "changes nothing (allowed: give bandwidth, latency or both)");
    return 0;
}

static int rs_chan_cmp(const void *x, const void *y)
{
    const rs_chan *p = x, *q = y;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    if (p->b != q->b)
        return p->b < q->b ? -1 : 1;
    return p->idx < q->idx ? -1 : p->idx > q->idx;
}

/* kind links: every endpoint a rank, no link twice, every rank reaching every other. */
static int rs_check_link_list(rs_ctx *c, yaml_node_t *node, rs_topology_spec *t)
{
    char key[64];
    int32_t n = t->nranks;
    size_t nch = 0;
    for (size_t i = 0; i < t->links_count; i++) {
        const rs_link_ref *r = &t->links[i].ends;
        snprintf(key, sizeof key, "links[%zu].", i);
        int32_t bad = r->a >= n ? r->a : r->b >= n ? r->b : -1;
        if (bad >= 0) {
            snprintf(key, sizeof key, "links[%zu].%s", i, r->a >= n ? "from" : "to");
            return rs_fail(c, rs_item_line(c, node, "links", i, r->a >= n ? "from" : "to"), key,
                           "%d is not a rank (allowed: 0 to %d with ranks: %d)", bad, n - 1, n);
        }
        if (r->a == r->b) {
            snprintf(key, sizeof key, "links[%zu].to", i);
            return rs_fail(c, rs_item_line(c, node, "links", i, "to"), key,
                           "both ends are rank %d (allowed: two different ranks)", r->a);
        }
        nch += r->both ? 2 : 1;
    }
    rs_chan *ch = malloc((nch ? nch : 1) * sizeof *ch);
    size_t *deg = calloc((size_t)n + 1, sizeof *deg), *rdeg = calloc((size_t)n + 1, sizeof *rdeg);
    int32_t *adj = malloc((nch ? nch : 1) * sizeof *adj), *radj = malloc((nch ? nch : 1) * sizeof *radj);
    int32_t *queue = malloc((size_t)n * sizeof *queue);
    unsigned char *seen = malloc((size_t)n);
    int rc = 0;
    if (!ch || !deg || !rdeg || !adj || !radj || !queue || !seen) {
        rc = rs_fail(c, rs_line(node), "links", "out of memory");
        goto out;
    }
    size_t k = 0;
    for (size_t i = 0; i < t->links_count; i++) {
        const rs_link_ref *r = &t->links[i].ends;
        ch[k++] = (rs_chan){r->a, r->b, i};
        if (r->both)
            ch[k++] = (rs_chan){r->b, r->a, i};
    }
    qsort(ch, nch, sizeof *ch, rs_chan_cmp);
    size_t dup = SIZE_MAX, first = 0;
    for (size_t i = 1; i < nch; i++)
        if (ch[i].a == ch[i - 1].a && ch[i].b == ch[i - 1].b && ch[i].idx != ch[i - 1].idx &&
            (dup == SIZE_MAX || ch[i].idx < dup)) {
            dup = ch[i].idx;
            first = ch[i - 1].idx;
        }
    if (dup != SIZE_MAX) {
        snprintf(key, sizeof key, "links[%zu]", dup);
        const rs_link_ref *r = &t->links[dup].ends;
        rc = rs_fail(c, rs_item_line(c, node, "links", dup, NULL), key,
                     "a link %d -> %d is already in links[%zu] (allowed: each one-way link once; change "
                     "one with its own keys)", r->a == t->links[first].ends.a ? r->a : r->b,
                     r->a == t->links[first].ends.a ? r->b : r->a, first);
        goto out;
    }
    /* strongly connected: every rank reached from rank 0 along links and against them */
    for (size_t i = 0; i < nch; i++) {
        deg[ch[i].a + 1]++;
        rdeg[ch[i].b + 1]++;
    }
    for (int32_t v = 0; v < n; v++) {
        deg[v + 1] += deg[v];
        rdeg[v + 1] += rdeg[v];
    }
    for (size_t i = 0; i < nch; i++) {
        adj[deg[ch[i].a]++] = ch[i].b;
        radj[rdeg[ch[i].b]++] = ch[i].a;
    }
    /* deg[v] now ends v's run; v's run starts at deg[v-1] (0 for v = 0) */
    for (int dir = 0; dir < 2 && rc == 0; dir++) {
        size_t *d = dir ? rdeg : deg;
        int32_t *e = dir ? radj : adj;
        memset(seen, 0, (size_t)n);
        size_t head = 0, tail = 0;
        queue[tail++] = 0;
        seen[0] = 1;
        while (head < tail) {
            int32_t v = queue[head++];
            for (size_t j = v ? d[v - 1] : 0; j < d[v]; j++)
                if (!seen[e[j]]) {
                    seen[e[j]] = 1;
                    queue[tail++] = e[j];
                }
        }
        for (int32_t v = 0; v < n; v++)
            if (!seen[v]) {
                rc = rs_fail(c, rs_key_line(c, node, "links"), "links",
                             dir ? "rank 0 cannot be reached from rank %d (allowed: a connected graph in which "
                                   "every rank reaches every other along links)"
                                 : "rank %d cannot be reached from rank 0 (allowed: a connected graph in which "
                                   "every rank reaches every other along links)",
                             v);
                break;
            }
    }
out:
    free(c->chans);
    c->chans = ch;
    c->nchans = nch;
    free(deg);
    free(rdeg);
    free(adj);
    free(radj);
    free(queue);
    free(seen);
    return rc;
}

static int rs_check_topology(rs_ctx *c, yaml_node_t *node, void *base)
{
    rs_topology_spec *t = base;
    int64_t derived = 0;
    const char *why = "";
    char whybuf[96];
    switch (t->kind) {
    case RS_TOPO_TORUS2D:
        derived = (int64_t)t->dims[0] * t->dims[1];
        if (derived > RS_SCENARIO_MAX_RANKS)
            return rs_fail(c, rs_key_line(c, node, "dims"), "dims",
                           "%d x %d = %lld ranks is out of range (allowed: at most %d ranks)", t->dims[0],
                           t->dims[1], (long long)derived, RS_SCENARIO_MAX_RANKS);
        snprintf(whybuf, sizeof whybuf, "dims %d x %d", t->dims[0], t->dims[1]);
        why = whybuf;
        break;
    case RS_TOPO_SERVER8:
        derived = 8;
        why = "kind server8";
        break;
    case RS_TOPO_CLUSTER:
        derived = 8 * (int64_t)t->servers;
        snprintf(whybuf, sizeof whybuf, "%d servers of 8", t->servers);
        why = whybuf;
        break;
    case RS_TOPO_LINKS:
        if (t->nranks == 0) {
            for (size_t i = 0; i < t->links_count; i++) {
                const rs_link_ref *r = &t->links[i].ends;
                int32_t m = r->a > r->b ? r->a : r->b;
                if (m + 1 > derived)
                    derived = m + 1;
            }
        }
        break;
    default:
        break;
    }
    if (t->nranks != 0 && derived != 0 && t->nranks != derived)
        return rs_fail(c, rs_key_line(c, node, "ranks"), "ranks",
                       "%d does not match %s (allowed: %lld, or leave ranks out)", t->nranks, why,
                       (long long)derived);
    if (t->nranks == 0)
        t->nranks = (int32_t)derived;
    if (t->kind == RS_TOPO_FAT_TREE) {
        if (t->per_leaf > t->nranks || t->nranks % t->per_leaf != 0)
            return rs_fail(c, rs_key_line(c, node, "per_leaf"), "per_leaf",
                           "%d does not divide ranks %d (allowed: a divisor of ranks)", t->per_leaf, t->nranks);
        if (t->spines == 0)
            t->spines = t->per_leaf > 4096 ? 4096 : t->per_leaf;
    }
    if (t->kind == RS_TOPO_LINKS) {
        if (t->links_count == 0)
            return rs_fail(c, rs_key_line(c, node, "links"), "links",
                           "the list is empty (allowed: at least one link)");
        if (rs_check_link_list(c, node, t) != 0)
            return -1;
    }
    if (t->nranks < 2) /* defensive: `ranks` starts at 2, and derived counts are at least 2 */
        return rs_fail(c, rs_key_line(c, node, "ranks"), "ranks", "%d rank%s (allowed: at least 2 ranks)",
                       t->nranks, t->nranks == 1 ? "" : "s");
    /* a switch must hold one packet of what reaches it */
    if (t->kind == RS_TOPO_SWITCH || t->kind == RS_TOPO_FAT_TREE || t->kind == RS_TOPO_CLUSTER) {
        const rs_link_params *p = t->kind == RS_TOPO_CLUSTER ? &t->nic : &t->link;
        uint64_t need = (uint64_t)p->packet_bytes + p->header_bytes;
        if (t->sw.buffer_bytes < need) {
            char have[48];
            rs_units_format(t->sw.buffer_bytes, RS_UNIT_SIZE, have, sizeof have);
            return rs_fail(c, rs_sub_key_line(c, node, "switch", "buffer"), "switch.buffer",
                           "%s cannot hold one packet of topology.%s (allowed: at least %llu B)", have,
                           t->kind == RS_TOPO_CLUSTER ? "nic" : "link", (unsigned long long)need);
        }
    }
    for (size_t i = 0; i < t->overrides_count; i++) {
        char item[48], fa[64], fb[64];
        snprintf(item, sizeof item, "overrides[%zu]", i);
        snprintf(fa, sizeof fa, "%s.from", item);
        snprintf(fb, sizeof fb, "%s.to", item);
        if (rs_check_ref(c, &t->overrides[i].ends, item, fa, fb,
                         rs_item_line(c, node, "overrides", i, "from"),
                         rs_item_line(c, node, "overrides", i, "to")) != 0)
            return -1;
    }
    return 0;
}

static int rs_check_sizes(rs_ctx *c, yaml_node_t *node, void *base)
{
    const rs_workload *w = base;
    char b[48], e[48];
    rs_units_format((double)w->begin_bytes, RS_UNIT_SIZE, b, sizeof b);
    rs_units_format((double)w->end_bytes, RS_UNIT_SIZE, e, sizeof e);
    if (w->begin_bytes > w->end_bytes)
        return rs_fail(c, rs_key_line(c, node, "begin"), "begin", "%s is larger than end %s (allowed: begin <= end)",
                       b, e);
    size_t es = ncl_dtype_size(w->dtype);
    if (es && w->begin_bytes < es)
        return rs_fail(c, rs_key_line(c, node, "begin"), "begin",
                       "%s holds no %s element (allowed: at least %zu B for dtype %s)", b,
                       rs_enum_name(&rs_enum_dtype, w->dtype), es, rs_enum_name(&rs_enum_dtype, w->dtype));
    return 0;
}

static void *rs_check_alloc(void *ud, size_t bytes)
{
    (void)ud;
    return malloc(bytes);
}
static void rs_check_free(void *ud, void *ptr)
{
    (void)ud;
    free(ptr);
}

/* workload.schedule: loads the file (relative to the scenario), checks that the workload runs
 * exactly what it implements, and proves it with the checker in and out of place, at one
 * element and at 3 elements per chunk + 1 (chunks of unequal size), with the workload's dtype,
 * op and root, before anything runs. */
static int rs_check_schedule(rs_ctx *c, yaml_node_t *node, rs_workload *w)
{
    int line = rs_key_line(c, node, "schedule");
    if (w->schedule[0] == '\0')
        return rs_fail(c, line, "schedule", "is empty (allowed: the path of a schedule file, relative to the scenario)");
    const char *slash = strrchr(c->file, '/');
    size_t dir = w->schedule[0] == '/' || slash == NULL ? 0 : (size_t)(slash - c->file) + 1;
    char *full = malloc(dir + strlen(w->schedule) + 1);
    if (full == NULL)
        return rs_fail(c, line, "schedule", "out of memory");
    memcpy(full, c->file, dir);
    strcpy(full + dir, w->schedule);
    char msg[RS_SCENARIO_ERRLEN];
    int rc = rs_usersched_load(full, w->schedule, &w->usersched, msg, sizeof msg);
    free(full);
    if (rc == -2)
        return rs_fail(c, line, "schedule", "'%s': %s (allowed: a readable schedule file, relative to the scenario)",
                       w->schedule, msg);
    if (rc != 0)
        return rs_fail(c, line, "schedule", "%s", msg);
    const ncl_user_schedule *s = &w->usersched->sched;
    const char *coll = rs_enum_name(&rs_enum_coll, s->coll);
    if (w->colls_count != 1 || w->colls[0] != (ncl_coll)s->coll)
        return rs_fail(c, rs_key_line(c, node, "collectives"), "collectives",
                       "must be the schedule's one collective (allowed: %s, with schedule %s)", coll, w->usersched->name);
    if (w->algo != NCL_ALGO_AUTO)
        return rs_fail(c, rs_key_line(c, node, "algorithm"), "algorithm",
                       "'%s' cannot be forced with a schedule, which is the %s algorithm (allowed: auto, or leave it out)",
                       rs_enum_name(&rs_enum_algo, w->algo), coll);
    if (s->nranks != c->sc->topo.nranks)
        return rs_fail(c, line, "schedule", "%s is written for %d ranks, the topology has %d (allowed: a schedule for "
                       "%d ranks)", w->usersched->name, s->nranks, c->sc->topo.nranks, c->sc->topo.nranks);
    if (w->deterministic && s->coll == NCL_COLL_ALLREDUCE)
        return rs_fail(c, rs_key_line(c, node, "deterministic"), "deterministic",
                       "true runs det instead of the schedule's allreduce (allowed: false with a schedule)");
    const uint64_t counts[2] = {1, 3ull * s->chunks + 1};
    for (int i = 0; i < 4; i++) {
        uint64_t count = counts[i / 2];
        int inplace = i % 2;
        ncl_plan_env env;
        memset(&env, 0, sizeof env);
        env.slice_bytes = 4u << 20;
        env.channels = 1;
        env.max_queues = NCL_MAX_QUEUES;
        env.scratch_bytes = ncl_user_scratch_bytes(s, count, (uint32_t)ncl_dtype_size(w->dtype));
        env.link_alpha_ns = 1;
        env.link_gbps = 1;
        env.schedule = s;
        ncl_plan plan;
        char why[RS_SCENARIO_ERRLEN];
        ncl_result r = ncl_plan_make(&plan, (ncl_coll)s->coll, NCL_ALGO_USER, s->nranks, 0, w->root, count, w->dtype,
                                     w->op, inplace, &env);
        if (r == NCL_SUCCESS)
            r = ncl_check(&plan, NULL, rs_check_alloc, rs_check_free, NULL, why, sizeof why);
        else
            snprintf(why, sizeof why, "the engine refuses it: %s", ncl_strerror(r));
        if (r == NCL_ERR_UNSUPPORTED && plan.nranks > NCL_CHECK_MAX_RANKS)
            break; /* beyond the checker's rank limit: the engine runs it unproven too */
        if (r != NCL_SUCCESS)
            return rs_fail(c, line, "schedule", "rejected by the checker: %s (%s, count %llu, %s %s)", why,
                           inplace ? "in place" : "out of place", (unsigned long long)count,
                           rs_enum_name(&rs_enum_dtype, w->dtype), rs_enum_name(&rs_enum_op, w->op));
    }
    return 0;
}

/* device.inline_reduce: "all", "none", or words "dtype" (every op) / "dtype:op" (one op). */
static int rs_check_device(rs_ctx *c, yaml_node_t *node, void *base)
{
    rs_device_params *d = base;
    const char *text = d->inline_reduce ? d->inline_reduce : "all";
    uint16_t inline_ops[NCL_DTYPE_COUNT] = {0};
    const uint16_t all = (1u << NCL_SUM) | (1u << NCL_PROD) | (1u << NCL_MAX) | (1u << NCL_MIN);
    char word[64];
    if (strcmp(text, "all") == 0) {
        for (int t = 0; t < NCL_DTYPE_COUNT; t++)
            inline_ops[t] = all;
    } else if (strcmp(text, "none") != 0) {
        for (const char *p = text; *p;) {
            size_t n = strcspn(p, " ,");
            if (n == 0) {
                p++;
                continue;
            }
            snprintf(word, sizeof word, "%.*s", (int)(n < sizeof word ? n : sizeof word - 1), p);
            p += n;
            char *colon = strchr(word, ':');
            if (colon)
                *colon++ = '\0';
            int dt = -1, op = -1;
            if (rs_enum_lookup(&rs_enum_dtype, word, &dt) != 0 ||
                (colon && (rs_enum_lookup(&rs_enum_op, colon, &op) != 0 || op == NCL_AVG))) {
                char dts[200];
                rs_enum_list(&rs_enum_dtype, dts, sizeof dts);
                return rs_fail(c, rs_key_line(c, node, "inline_reduce"), "inline_reduce",
                               "'%s%s%s' is not a dtype or dtype:op (allowed: all, none, or words like float or "
                               "float:sum; dtypes %s; ops sum, prod, max, min)",
                               word, colon ? ":" : "", colon ? colon : "", dts);
            }
            inline_ops[dt] |= colon ? (uint16_t)(1u << op) : all;
        }
    }
    for (int t = 0; t < NCL_DTYPE_COUNT; t++)
        d->no_inline_ops[t] = (uint16_t)(all & ~inline_ops[t]);
    /* rtl_clock: a number and Hz, kHz, MHz or GHz (no frequency unit in rs_units) */
    d->rtl_clock = 1e9;
    if (d->rtl_clock_text) {
        char *end = NULL;
        double v = strtod(d->rtl_clock_text, &end);
        while (end && *end == ' ')
            end++;
        double scale = 0;
        if (end && strcmp(end, "Hz") == 0)
            scale = 1;
        else if (end && strcmp(end, "kHz") == 0)
            scale = 1e3;
        else if (end && strcmp(end, "MHz") == 0)
            scale = 1e6;
        else if (end && strcmp(end, "GHz") == 0)
            scale = 1e9;
        if (end == d->rtl_clock_text || scale == 0 || !(v * scale >= 1e6 && v * scale <= 1e10))
            return rs_fail(c, rs_key_line(c, node, "rtl_clock"), "rtl_clock",
                           "'%s' is not a clock between 1 MHz and 10 GHz (allowed: a number with Hz, kHz, "
                           "MHz or GHz, e.g. 1 GHz)", d->rtl_clock_text);
        d->rtl_clock = v * scale;
    }
    /* rtl_ranks: "all" or rank numbers (checked against the topology's ranks in rs_check_top) */
    d->rtl_ranks = 0;
    if (d->rtl_ranks_text && strcmp(d->rtl_ranks_text, "all") != 0) {
        const char *p = d->rtl_ranks_text;
        while (*p) {
            if (*p == ' ' || *p == ',') {
                p++;
                continue;
            }
            char *end = NULL;
            long r = strtol(p, &end, 10);
            if (end == p || r < 0 || r > 63)
                return rs_fail(c, rs_key_line(c, node, "rtl_ranks"), "rtl_ranks",
                               "'%s' is not a list of ranks (allowed: all, or rank numbers 0..63 separated by "
                               "spaces or commas, e.g. \"0 2\")", d->rtl_ranks_text);
            d->rtl_ranks |= 1ull << r;
            p = end;
        }
        if (d->rtl_ranks == 0)
            return rs_fail(c, rs_key_line(c, node, "rtl_ranks"), "rtl_ranks",
                           "is empty (allowed: all, or rank numbers like \"0 2\")");
    }
    return 0;
}

static int rs_check_workload(rs_ctx *c, yaml_node_t *node, void *base)
{
    const rs_workload *w = base;
    if (w->algo != NCL_ALGO_AUTO) {
        for (int i = 0; i < w->colls_count; i++) {
            if (ncl_algo_supported(w->colls[i], w->algo))
                continue;
            char list[128];
            size_t used = 0;
            list[0] = '\0';
            for (int a = 0; a < NCL_ALGO_COUNT; a++) /* printed names, not their aliases; a user
                                                       schedule is given as data, not by name */
                if (a != NCL_ALGO_USER && ncl_algo_supported(w->colls[i], (ncl_algo)a))
                    used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "",
                                             rs_enum_name(&rs_enum_algo, a));
            return rs_fail(c, rs_key_line(c, node, "algorithm"), "algorithm",
                           "'%s' does not implement %s (allowed for %s: %s; or list collectives one algorithm "
                           "covers)", rs_enum_name(&rs_enum_algo, w->algo),
                           rs_enum_name(&rs_enum_coll, w->colls[i]), rs_enum_name(&rs_enum_coll, w->colls[i]), list);
        }
    }
    if (w->root >= c->sc->topo.nranks)
        return rs_fail(c, rs_key_line(c, node, "root"), "root", "%d is out of range (allowed: 0 to %d with %d ranks)",
                       w->root, c->sc->topo.nranks - 1, c->sc->topo.nranks);
    /* wide accumulation refines det's rank order, and widens only the 16-bit floats */
    if (w->wide_accumulation && !w->deterministic)
        return rs_fail(c, rs_key_line(c, node, "wide_accumulation"), "wide_accumulation",
                       "true needs deterministic: true (allowed: false, or add deterministic: true)");
    if (w->wide_accumulation && w->dtype != NCL_FLOAT16 && w->dtype != NCL_BFLOAT16)
        return rs_fail(c, rs_key_line(c, node, "wide_accumulation"), "wide_accumulation",
                       "true widens half and bfloat16 only, the dtype is %s (allowed: false, or dtype half or "
                       "bfloat16)", rs_enum_name(&rs_enum_dtype, w->dtype));
    if (w->training.model) {
        /* a training step allreduces its gradient buckets: a sweep's keys would be ignored */
        static const char *const sweep_only[] = {"collectives", "sizes", "root", "schedule"};
        for (size_t i = 0; i < RS_COUNT(sweep_only); i++)
            if (rs_get2(c, node, sweep_only[i], NULL))
                return rs_fail(c, rs_key_line(c, node, sweep_only[i]), sweep_only[i],
                               "means nothing in a training workload, which allreduces its gradient buckets "
                               "(allowed: algorithm, dtype, op, iterations, warmup, channels, rings, "
                               "deterministic, inter_algorithm, training)");
    }
    return w->schedule ? rs_check_schedule(c, node, base) : 0;
}

static int rs_precheck(rs_ctx *c, const char *text, size_t len, int *ndocs);
static char *rs_slurp(const char *path, size_t *len, char *why, size_t whylen);
static int rs_yaml_error(rs_ctx *c, const yaml_parser_t *p, const char *text, size_t len);

/* The model table: every gradient has elements, and the backward pass takes time somewhere. */
static int rs_check_model_table(rs_ctx *c, yaml_node_t *node, void *base)
{
    const rs_training *t = base;
    (void)node;
    double backward = 0;
    for (size_t i = 0; i < t->tensors_count; i++) {
        if (t->tensors[i].params == 0) {
            size_t old = rs_push(c, "tensors");
            rs_push_index(c, i);
            int rc = rs_fail(c, t->tensors[i].line, "params", "0 (allowed: at least 1 element)");
            rs_pop(c, old);
            return rc;
        }
        backward += t->tensors[i].backward;
    }
    if (t->tensors_count == 0 || backward <= 0)
        return rs_fail(c, rs_line(node), "tensors", "%s (allowed: at least one tensor, and backward times that add "
                       "up to more than 0)", t->tensors_count ? "no backward time" : "empty");
    return 0;
}

/* workload.training.model: the table, read with the same schema machinery, its own file in
 * messages ("models/x.yaml:12: tensors[3].params: ..."). */
static int rs_load_model_table(rs_ctx *c, int line, rs_training *t)
{
    const char *slash = strrchr(c->file, '/');
    size_t dir = t->model[0] == '/' || slash == NULL ? 0 : (size_t)(slash - c->file) + 1;
    char *full = malloc(dir + strlen(t->model) + 1);
    if (full == NULL)
        return rs_fail(c, line, "model", "out of memory");
    memcpy(full, c->file, dir);
    strcpy(full + dir, t->model);
    char why[200];
    size_t len = 0;
    char *text = rs_slurp(full, &len, why, sizeof why);
    if (text == NULL) {
        free(full);
        return rs_fail(c, line, "model", "'%s': %s (allowed: a readable model table, relative to the scenario)",
                       t->model, why);
    }
    rs_ctx m = *c;
    m.file = full;
    m.path[0] = '\0';
    m.pathlen = 0;
    m.owner_line = 0;
    m.chans = NULL;
    m.nchans = 0;
    int ndocs = 0, rc = rs_precheck(&m, text, len, &ndocs);
    if (rc == 0 && ndocs == 0)
        rc = rs_fail(&m, 1, "(document)", "the file is empty (allowed: name, source and tensors)");
    yaml_parser_t p;
    yaml_document_t doc;
    int loaded = 0;
    if (rc == 0 && !yaml_parser_initialize(&p))
        rc = rs_fail(&m, 1, "yaml", "out of memory");
    else if (rc == 0) {
        yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
        if (!yaml_parser_load(&p, &doc))
            rc = rs_yaml_error(&m, &p, text, len);
        else
            loaded = 1;
        if (loaded) {
            m.doc = &doc;
            yaml_node_t *root = yaml_document_get_root_node(&doc);
            rc = root == NULL ? rs_fail(&m, 1, "(document)", "the file is empty (allowed: name, source and tensors)")
                              : rs_parse_map(&m, root, &rs_map_model_table, t);
            yaml_document_delete(&doc);
        }
        yaml_parser_delete(&p);
    }
    c->failed |= m.failed;
    free(text);
    free(full);
    return rc;
}

static int rs_check_training(rs_ctx *c, yaml_node_t *node, void *base)
{
    rs_training *t = base;
    if (t->model == NULL) {
        const char *given = rs_get2(c, node, "micro_batch", NULL) ? "micro_batch"
                            : rs_get2(c, node, "fusion", NULL)    ? "fusion"
                                                                   : NULL;
        if (given)
            return rs_fail(c, rs_key_line(c, node, given), given, "means nothing without model (allowed: with "
                           "workload.training.model)");
        return 0;
    }
    int model_line = rs_key_line(c, node, "model");
    if (t->model[0] == '\0')
        return rs_fail(c, model_line, "model", "is empty (allowed: the path of a model table, relative to the scenario)");
    rs_fusion f;
    char why[RS_SCENARIO_ERRLEN];
    int fusion_line = rs_key_line(c, node, "fusion");
    if (rs_fusion_parse(t->fusion, &f, why, sizeof why) != 0)
        return rs_fail(c, fusion_line, "fusion", "%s", why);
    if (rs_load_model_table(c, model_line, t) != 0)
        return -1;
    size_t n = t->tensors_count;
    if (n > UINT32_MAX)
        return rs_fail(c, model_line, "model", "%zu tensors (allowed: at most %u)", n, UINT32_MAX);
    uint64_t *bytes = malloc(n * sizeof *bytes);
    dp_bucket *buckets = malloc(n * sizeof *buckets);
    int rc = 0;
    if (bytes == NULL || buckets == NULL) {
        rc = rs_fail(c, model_line, "model", "out of memory");
    } else {
        for (size_t i = 0; i < n; i++) /* produced order: the table's last tensor first (elements
                                           stand for bytes: what fails does not depend on the dtype) */
            bytes[i] = t->tensors[n - 1 - i].params;
        if (rs_fusion_buckets(&f, bytes, (uint32_t)n, buckets, why, sizeof why) == 0)
            rc = rs_fail(c, fusion_line, "fusion", "%s", why);
    }
    free(bytes);
    free(buckets);
    return rc;
}

static int rs_check_fault(rs_ctx *c, yaml_node_t *node, void *base)
{
    const rs_fault *f = base;
    int line = rs_key_line(c, node, "link");
    if (rs_check_ref(c, &f->ends, "link", "link", "link", line, line) != 0)
        return -1;
    if (f->kind == RS_FAULT_DOWN && (f->bandwidth >= 0 || f->latency >= 0)) {
        const char *k = f->bandwidth >= 0 ? "bandwidth" : "latency";
        return rs_fail(c, rs_key_line(c, node, k), k, "means nothing for action down (allowed: with action "
                       "degrade)");
    }
    if (f->kind == RS_FAULT_DEGRADE && f->bandwidth < 0 && f->latency < 0)
        return rs_fail(c, rs_line(node), NULL, "degrade changes nothing (allowed: give bandwidth, latency or both)");
    return 0;
}

/* Largest bytes one rank holds (send + receive buffers) at the largest size of the sweep. */
static uint64_t rs_memory_need(const rs_scenario *sc, const char **coll)
{
    uint64_t end = sc->workload.end_bytes, n = (uint64_t)(sc->topo.nranks > 0 ? sc->topo.nranks : 1), need = 0;
    const rs_training *t = &sc->workload.training;
    if (t->model) { /* a bucket's send and receive buffers, at most all the gradients */
        for (size_t i = 0; i < t->tensors_count; i++)
            need += 2 * t->tensors[i].params * ncl_dtype_size(sc->workload.dtype);
        *coll = "the gradients";
        return need;
    }
    for (int i = 0; i < sc->workload.colls_count; i++) {
        ncl_coll cl = sc->workload.colls[i];
        uint64_t x = cl == NCL_COLL_REDUCE_SCATTER || cl == NCL_COLL_ALLGATHER ? end + (end + n - 1) / n : 2 * end;
        if (x > need) {
            need = x;
            *coll = rs_enum_name(&rs_enum_coll, cl);
        }
    }
    return need;
}

static int rs_check_top(rs_ctx *c, yaml_node_t *node, void *base)
{
    rs_scenario *sc = base;
    if (sc->name == NULL) {
        const char *b = strrchr(c->file, '/');
        b = b ? b + 1 : c->file;
        size_t len = strlen(b);
        if (len > 5 && strcmp(b + len - 5, ".yaml") == 0)
            len -= 5;
        else if (len > 4 && strcmp(b + len - 4, ".yml") == 0)
            len -= 4;
        sc->name = strndup(b, len);
        if (sc->name == NULL)
            return rs_fail(c, 1, "name", "out of memory");
    } else if (sc->name[0] == '\0') {
        return rs_fail(c, rs_key_line(c, node, "name"), "name", "is empty (allowed: a short name, or leave it "
                       "out for the file name)");
    }
    if (sc->device.fidelity == RS_DEVICE_RTL) {
        /* what the RTL block and its mmio backend can run (rtl_stub/README.md, co-simulation) */
        int dline = rs_get(c, node, "device") ? rs_sub_key_line(c, node, "device", "fidelity")
                                              : rs_key_line(c, node, "device");
        const rs_workload *w = &sc->workload;
        int reduces = 0;
        for (int i = 0; i < w->colls_count; i++)
            reduces |= w->colls[i] == NCL_COLL_ALLREDUCE || w->colls[i] == NCL_COLL_REDUCE ||
                       w->colls[i] == NCL_COLL_REDUCE_SCATTER;
        if (sc->topo.nranks > 4)
            return rs_fail(c, dline, "device.fidelity",
                           "rtl with %d ranks: the block's 128 notify counters give the mmio backend all "
                           "32 notify ids per peer only up to 4 ranks (allowed: 2 to 4 ranks, or "
                           "fidelity systemc)", sc->topo.nranks);
        if (sc->device.rtl_ranks >> sc->topo.nranks)
            return rs_fail(c, rs_sub_key_line(c, node, "device", "rtl_ranks"), "device.rtl_ranks",
                           "'%s' names a rank the topology does not have (allowed: all, or ranks 0 to %d)",
                           sc->device.rtl_ranks_text, sc->topo.nranks - 1);
        if (w->training.model)
            return rs_fail(c, dline, "device.fidelity",
                           "rtl runs size sweeps only, not workload.training (allowed: systemc)");
        if (w->dtype != NCL_INT32 && w->dtype != NCL_UINT32 && w->dtype != NCL_FLOAT32)
            return rs_fail(c, rs_sub_key_line(c, node, "workload", "dtype"), "workload.dtype",
                           "%s on device.fidelity rtl: the block's datapath handles 32-bit words of "
                           "int32, uint32 and float (allowed: int32, uint32, float)",
                           ncl_dtype_name(w->dtype));
        if (reduces && w->op != NCL_SUM && w->op != NCL_MAX && w->op != NCL_MIN)
            return rs_fail(c, rs_sub_key_line(c, node, "workload", "op"), "workload.op",
                           "%s on device.fidelity rtl: the block's reduce lanes do sum, max and min "
                           "(allowed: sum, max, min)", ncl_op_name(w->op));
    }
    if (sc->payload_real) {
        const char *coll = "";
        uint64_t need = rs_memory_need(sc, &coll);
        if (need > sc->device.memory_bytes) {
            char have[48], want[48], end[48];
            rs_units_format((double)sc->device.memory_bytes, RS_UNIT_SIZE, have, sizeof have);
            rs_units_format((double)need, RS_UNIT_SIZE, want, sizeof want);
            rs_units_format((double)sc->workload.end_bytes, RS_UNIT_SIZE, end, sizeof end);
            int line = rs_get(c, node, "device") ? rs_sub_key_line(c, node, "device", "memory")
                                                 : rs_key_line(c, node, "payload");
            return rs_fail(c, line, "device.memory",
                           "%s cannot hold the %s a rank needs for %s of %s (send + receive buffers) "
                           "(allowed: at least %s, or payload: none)", have, want, coll, end, want);
        }
    }
    return 0;
}

/* ---- loading ---------------------------------------------------------------------------------- */

static int rs_yaml_error(rs_ctx *c, const yaml_parser_t *p, const char *text, size_t len)
{
    const char *problem = p->problem ? p->problem : "syntax error";
    if (p->error == YAML_MEMORY_ERROR)
        return rs_fail(c, 1, "yaml", "out of memory");
    if (p->error == YAML_READER_ERROR) {
        size_t end = p->problem_offset < len ? p->problem_offset : len;
        int line = 1;
        for (size_t i = 0; i < end; i++)
            line += text[i] == '\n';
        if (p->problem_value >= 0)
            return rs_fail(c, line, "yaml", "%s: byte 0x%02X at offset %zu (allowed: UTF-8 text)", problem,
                           (unsigned)p->problem_value & 0xffu, p->problem_offset);
        return rs_fail(c, line, "yaml", "%s at offset %zu (allowed: UTF-8 text)", problem, p->problem_offset);
    }
    int line = (int)p->problem_mark.line + 1;
    size_t at = p->problem_mark.index;
    if (at < len && text[at] == '\t')
        return rs_fail(c, line, "yaml", "%s: a tab (allowed: spaces for indentation)", problem);
    if (p->context)
        return rs_fail(c, line, "yaml", "%s (%s that starts at line %d)", problem, p->context,
                       (int)p->context_mark.line + 1);
    return rs_fail(c, line, "yaml", "%s", problem);
}

/* A first pass over the events: syntax errors, more than one document, absurd nesting, all
 * found before libyaml builds a tree (whose size would grow with the nesting). */
static int rs_precheck(rs_ctx *c, const char *text, size_t len, int *ndocs)
{
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return rs_fail(c, 1, "yaml", "out of memory");
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    int depth = 0, rc = 0, done = 0;
    *ndocs = 0;
    while (!done && rc == 0) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            rc = rs_yaml_error(c, &p, text, len);
            break;
        }
        int line = (int)ev.start_mark.line + 1;
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
            done = 1;
            break;
        case YAML_DOCUMENT_START_EVENT:
            if (++*ndocs > 1)
                rc = rs_fail(c, line, "yaml", "a second document (allowed: one document per file)");
            break;
        case YAML_MAPPING_START_EVENT:
        case YAML_SEQUENCE_START_EVENT:
            if (++depth > RS_MAX_DEPTH)
                rc = rs_fail(c, line, "yaml", "nested deeper than %d levels (allowed: at most %d)", RS_MAX_DEPTH,
                             RS_MAX_DEPTH);
            break;
        case YAML_MAPPING_END_EVENT:
        case YAML_SEQUENCE_END_EVENT:
            depth--;
            break;
        default:
            break;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    return rc;
}

int rs_scenario_load_string(const char *text, size_t len, const char *name, rs_scenario *out, char *err,
                            size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (err && errlen)
        err[0] = '\0';
    rs_ctx c;
    memset(&c, 0, sizeof c);
    c.file = name ? name : "<string>";
    c.sc = out;
    c.err = err;
    c.errlen = errlen;
    if (text == NULL)
        text = "", len = 0;
    if (len > RS_SCENARIO_MAX_FILE)
        return rs_fail(&c, 0, "(file)", "larger than %u bytes (allowed: at most %u)", RS_SCENARIO_MAX_FILE,
                       RS_SCENARIO_MAX_FILE);

    int ndocs = 0;
    if (rs_precheck(&c, text, len, &ndocs) != 0)
        return -1;
    if (ndocs == 0)
        return rs_fail(&c, 1, "(document)", "the file is empty (allowed: a mapping with at least topology: "
                       "{kind: ...})");

    yaml_parser_t p;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&p))
        return rs_fail(&c, 1, "yaml", "out of memory");
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    if (!yaml_parser_load(&p, &doc)) {
        rs_yaml_error(&c, &p, text, len);
        yaml_parser_delete(&p);
        return -1;
    }
    c.doc = &doc;
    int rc = 0;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (root == NULL)
        rc = rs_fail(&c, 1, "(document)", "the file is empty (allowed: a mapping with at least topology: {kind: ...})");
    if (rc == 0) {
        /* defaults first: they are parsed by the same code as file values, so a bad default
         * fails every load (and the tests) instead of slipping through */
        rs_ctx dc = c;
        dc.file = "<defaults>";
        rc = rs_defaults(&dc, &rs_map_top, out);
        c.failed |= dc.failed; /* dc wrote the message ("<defaults>:0: key: ...") */
    }
    if (rc == 0)
        rc = rs_parse_map(&c, root, &rs_map_top, out);
    if (rc == 0 && (out->path = strdup(c.file)) == NULL)
        rc = rs_fail(&c, 1, "(file)", "out of memory");
    free(c.chans);
    yaml_document_delete(&doc);
    yaml_parser_delete(&p);
    if (rc != 0) {
        rs_scenario_free(out);
        return -1;
    }
    return 0;
}

/* The whole file in a malloc'ed buffer (*len bytes, plus a NUL), or NULL with why set. */
static char *rs_slurp(const char *path, size_t *len, char *why, size_t whylen)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        snprintf(why, whylen, "cannot open: %s", strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        snprintf(why, whylen, "is a directory");
        return NULL;
    }
    size_t cap = 4096, used = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (buf == NULL) {
            snprintf(why, whylen, "out of memory");
            break;
        }
        if (used + 1 >= cap) {
            if (cap > RS_SCENARIO_MAX_FILE) {
                snprintf(why, whylen, "larger than %u bytes", RS_SCENARIO_MAX_FILE);
                free(buf);
                buf = NULL;
                break;
            }
            char *nb = realloc(buf, cap * 2);
            if (nb == NULL)
                free(buf);
            buf = nb;
            cap *= 2;
            continue;
        }
        size_t got = fread(buf + used, 1, cap - used - 1, f);
        used += got;
        if (got == 0) {
            if (ferror(f)) {
                snprintf(why, whylen, "cannot read: %s", strerror(errno));
                free(buf);
                buf = NULL;
            }
            break;
        }
    }
    fclose(f);
    if (buf) {
        buf[used] = '\0';
        *len = used;
    }
    return buf;
}

int rs_scenario_load(const char *path, rs_scenario *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    rs_ctx c;
    memset(&c, 0, sizeof c);
    c.file = path ? path : "<null>";
    c.err = err;
    c.errlen = errlen;
    if (path == NULL)
        return rs_fail(&c, 0, "(file)", "no file name (allowed: a path to a YAML file)");
    char why[200];
    size_t len = 0;
    char *buf = rs_slurp(path, &len, why, sizeof why);
    if (buf == NULL)
        return rs_fail(&c, 0, "(file)", "%s (allowed: a readable YAML file)", why);
    int rc = rs_scenario_load_string(buf, len, path, out, err, errlen);
    free(buf);
    return rc;
}

int rs_scenario_set_training(rs_scenario *sc, const char *fusion, int micro_batch, char *err, size_t errlen)
{
    rs_training *t = &sc->workload.training;
    if (t->model == NULL) {
        snprintf(err, errlen, "the scenario is not a training step (allowed: with workload.training.model)");
        return -1;
    }
    if (micro_batch < 0 || micro_batch > 1000000) {
        snprintf(err, errlen, "micro-batch %d (allowed: 1 to 1000000)", micro_batch);
        return -1;
    }
    if (fusion) {
        rs_fusion f;
        char why[RS_SCENARIO_ERRLEN];
        if (rs_fusion_parse(fusion, &f, why, sizeof why) != 0) {
            snprintf(err, errlen, "%s", why);
            return -1;
        }
        size_t n = t->tensors_count;
        uint64_t *bytes = malloc((n ? n : 1) * sizeof *bytes);
        dp_bucket *b = malloc((n ? n : 1) * sizeof *b);
        char *copy = strdup(fusion);
        int ok = bytes && b && copy;
        if (ok) {
            for (size_t i = 0; i < n; i++)
                bytes[i] = t->tensors[n - 1 - i].params;
            ok = rs_fusion_buckets(&f, bytes, (uint32_t)n, b, why, sizeof why) != 0;
            if (!ok)
                snprintf(err, errlen, "%s", why);
        } else {
            snprintf(err, errlen, "out of memory");
        }
        free(bytes);
        free(b);
        if (!ok) {
            free(copy);
            return -1;
        }
        free(t->fusion);
        t->fusion = copy;
    }
    if (micro_batch > 0)
        t->micro_batch = micro_batch;
    return 0;
}

void rs_scenario_free(rs_scenario *sc)
{
    if (sc == NULL)
        return;
    free(sc->path);
    free(sc->name);
    free(sc->description);
    free(sc->topo.links);
    free(sc->topo.overrides);
    free(sc->faults);
    free(sc->workload.schedule);
    rs_training *t = &sc->workload.training;
    for (size_t i = 0; i < t->tensors_count; i++)
        free(t->tensors[i].name);
    free(t->tensors);
    free(t->model);
    free(t->model_name);
    free(t->model_source);
    free(t->fusion);
    free(sc->device.inline_reduce);
    free(sc->device.rtl_clock_text);
    free(sc->device.rtl_ranks_text);
    rs_usersched_free(sc->workload.usersched);
    memset(sc, 0, sizeof *sc);
}

/* ---- output ----------------------------------------------------------------------------------- */

uint32_t rs_scenario_size_count(const rs_workload *w)
{
    if (w->begin_bytes == 0 || w->factor < 2 || w->begin_bytes > w->end_bytes)
        return w->begin_bytes == w->end_bytes ? 1 : 0;
    uint32_t n = 0;
    for (uint64_t s = w->begin_bytes; s <= w->end_bytes; s *= w->factor) {
        n++;
        if (s > w->end_bytes / w->factor)
            break;
    }
    return n;
}

/* YAML double-quoted text. */
static void rs_put_quoted(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(f, "\\x%02x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

static int rs_key_shown(const rs_scenario *sc, const rs_key *k, const void *base)
{
    if (k->kinds && !(k->kinds & RS_K(sc->topo.kind)))
        return 0;
    if ((k->flags & RS_F_UNSET) && rs_get_dbl(base, k->offset) < 0)
        return 0;
    /* a count with no default left at 0 is worked out at run time (workload.channels) */
    if (k->type == RS_T_INT && k->store == RS_S_U32 && !k->def && !(k->flags & RS_F_REQUIRED) &&
        rs_get_u32(base, k->offset) == 0)
        return 0;
    if (k->type == RS_T_SEQ && rs_get_size(base, k->offset2) == 0)
        return 0;
    if (k->type == RS_T_STR && rs_get_ptr(base, k->offset) == NULL) /* workload.schedule: none */
        return 0;
    if (k >= rs_keys_workload && k < rs_keys_workload + RS_COUNT(rs_keys_workload)) {
        const rs_workload *w = base;
        if (k->sub == &rs_map_training)
            return w->training.model != NULL;
        /* a training step has no sweep (rs_check_workload refuses these keys with one) */
        if (w->training.model && (k->type == RS_T_COLLS || k->sub == &rs_map_sizes || strcmp(k->name, "root") == 0))
            return 0;
    }
    return 1;
}

static void rs_dump_value(FILE *f, const rs_key *k, const void *base)
{
    char buf[64];
    switch (k->type) {
    case RS_T_INT:
        if (k->store == RS_S_U32)
            fprintf(f, "%u", (unsigned)rs_get_u32(base, k->offset));
        else
            fprintf(f, "%d", (int)rs_get_i32(base, k->offset));
        break;
    case RS_T_U64:
        fprintf(f, "%llu", (unsigned long long)rs_get_u64(base, k->offset));
        break;
    case RS_T_UNIT: {
        double v = k->store == RS_S_DBL   ? rs_get_dbl(base, k->offset)
                   : k->store == RS_S_U32 ? (double)rs_get_u32(base, k->offset)
                                          : (double)rs_get_u64(base, k->offset);
        rs_units_format(v, k->unit, buf, sizeof buf);
        fputs(buf, f);
        break;
    }
    case RS_T_BOOL:
    case RS_T_ENUM:
        fputs(rs_enum_name(k->names, rs_get_i32(base, k->offset)), f);
        break;
    case RS_T_STR:
        rs_put_quoted(f, rs_get_ptr(base, k->offset));
        break;
    case RS_T_PAIR:
        fprintf(f, "[%d, %d]", (int)rs_get_i32(base, k->offset), (int)rs_get_i32(base, k->offset + 4));
        break;
    case RS_T_COLLS: {
        const rs_workload *w = base;
        fputc('[', f);
        for (int i = 0; i < w->colls_count; i++)
            fprintf(f, "%s%s", i ? ", " : "", rs_enum_name(k->names, w->colls[i]));
        fputc(']', f);
        break;
    }
    default:
        break;
    }
}

static void rs_dump_flow(FILE *f, const rs_scenario *sc, const rs_map *m, const void *base)
{
    int first = 1;
    fputc('{', f);
    for (size_t i = 0; i < m->nkeys; i++) {
        const rs_key *k = &m->keys[i];
        if (!rs_key_shown(sc, k, base))
            continue;
        fprintf(f, "%s%s: ", first ? "" : ", ", k->name);
        first = 0;
        if (k->type == RS_T_MAP)
            rs_dump_flow(f, sc, k->sub, (const char *)base + k->offset);
        else
            rs_dump_value(f, k, base);
    }
    fputc('}', f);
}

static void rs_dump_block(FILE *f, const rs_scenario *sc, const rs_map *m, const void *base, int indent)
{
    for (size_t i = 0; i < m->nkeys; i++) {
        const rs_key *k = &m->keys[i];
        if (!rs_key_shown(sc, k, base))
            continue;
        fprintf(f, "%*s%s:", indent, "", k->name);
        if (k->type == RS_T_MAP && k->sub->flow) {
            fputc(' ', f);
            rs_dump_flow(f, sc, k->sub, (const char *)base + k->offset);
            fputc('\n', f);
        } else if (k->type == RS_T_MAP) {
            fputc('\n', f);
            rs_dump_block(f, sc, k->sub, (const char *)base + k->offset, indent + 2);
        } else if (k->type == RS_T_SEQ) {
            fputc('\n', f);
            const char *items = rs_get_ptr(base, k->offset);
            size_t n = rs_get_size(base, k->offset2);
            for (size_t j = 0; j < n; j++) {
                fprintf(f, "%*s  - ", indent, "");
                rs_dump_flow(f, sc, k->sub, items + j * k->sub->item_size);
                fputc('\n', f);
            }
        } else {
            fputc(' ', f);
            rs_dump_value(f, k, base);
            fputc('\n', f);
        }
    }
}

int rs_scenario_summary(const rs_scenario *sc, char *buf, size_t len)
{
    char colls[96] = "", b[32], e[32];
    size_t used = 0;
    for (int i = 0; i < sc->workload.colls_count && used < sizeof colls; i++)
        used += (size_t)snprintf(colls + used, sizeof colls - used, "%s%s", i ? "+" : "",
                                 rs_enum_name(&rs_enum_coll, sc->workload.colls[i]));
    rs_units_format((double)sc->workload.begin_bytes, RS_UNIT_SIZE, b, sizeof b);
    rs_units_format((double)sc->workload.end_bytes, RS_UNIT_SIZE, e, sizeof e);
    uint32_t nsizes = rs_scenario_size_count(&sc->workload);
    char faults[32] = "";
    if (sc->faults_count)
        snprintf(faults, sizeof faults, ", %zu fault%s", sc->faults_count, sc->faults_count == 1 ? "" : "s");
    char sweep[160];
    const rs_training *t = &sc->workload.training;
    if (t->model) {
        uint64_t params = 0;
        for (size_t i = 0; i < t->tensors_count; i++)
            params += t->tensors[i].params;
        snprintf(colls, sizeof colls, "training");
        snprintf(sweep, sizeof sweep, "%s (%zu tensors, %.2f M parameters), micro-batch %d, fusion %s",
                 t->model_name ? t->model_name : "?", t->tensors_count, (double)params / 1e6, t->micro_batch,
                 t->fusion ? t->fusion : "default");
    } else if (nsizes == 1)
        snprintf(sweep, sizeof sweep, "%s (1 size)", b);
    else
        snprintf(sweep, sizeof sweep, "%s..%s x%u (%u sizes)", b, e, sc->workload.factor, nsizes);
    return snprintf(buf, len, "%s, %d ranks, %llu links, %s %s %s, %s, payload %s, %s fidelity%s",
                    rs_scenario_kind_name(sc->topo.kind), sc->topo.nranks,
                    (unsigned long long)rs_scenario_link_count(&sc->topo), colls,
                    rs_enum_name(&rs_enum_dtype, sc->workload.dtype), rs_enum_name(&rs_enum_op, sc->workload.op),
                    sweep,
                    rs_enum_name(&rs_enum_payload, sc->payload_real),
                    rs_enum_name(&rs_enum_fidelity, sc->fidelity), faults);
}

int rs_scenario_dump(const rs_scenario *sc, FILE *out)
{
    char summary[256];
    rs_scenario_summary(sc, summary, sizeof summary);
    fputs("# resolved scenario: every default filled in, units normalised\n# ", out);
    for (const char *p = summary; *p; p++)
        fputc((unsigned char)*p < 0x20 ? '?' : *p, out);
    fputc('\n', out);
    rs_dump_block(out, sc, &rs_map_top, sc, 0);
    fflush(out);
    return ferror(out) ? -1 : 0;
}

/* ---- the key reference ------------------------------------------------------------------------ */

static const char *rs_type_doc(const rs_key *k)
{
    switch (k->type) {
    case RS_T_INT:
    case RS_T_U64:
        return "number";
    case RS_T_UNIT:
        return rs_units_kind_name(k->unit);
    case RS_T_BOOL:
        return "boolean";
    case RS_T_ENUM:
        return "name";
    case RS_T_STR:
        return "text";
    case RS_T_PAIR:
        return "[number, number]";
    case RS_T_COLLS:
        return "name or list";
    case RS_T_MAP:
        return "mapping";
    case RS_T_SEQ:
        return "list";
    }
    return "?";
}

void rs_scenario_print_keys(FILE *out)
{
    for (size_t mi = 0; mi < RS_COUNT(rs_all_maps); mi++) {
        const rs_map *m = rs_all_maps[mi];
        fprintf(out, "### %s%s%s\n\n%s\n\n", m->path[0] ? "`" : "", m->path[0] ? m->path : "top level",
                m->path[0] ? "`" : "", m->title);
        fprintf(out, "| key | type | default | allowed | meaning |\n|---|---|---|---|---|\n");
        for (size_t i = 0; i < m->nkeys; i++) {
            const rs_key *k = &m->keys[i];
            char def[160], allowed[512], kinds[128];
            if (k->flags & RS_F_REQUIRED)
                snprintf(def, sizeof def, "**required**");
            else if (k->req_kinds) {
                rs_kind_list(k->req_kinds, kinds, sizeof kinds);
                snprintf(def, sizeof def, "**required** for %s%s%s", kinds, k->def_doc ? "; " : "",
                         k->def_doc ? k->def_doc : "");
            } else if (k->def && k->def[0])
                snprintf(def, sizeof def, "`%s`", k->def);
            else if (k->def)
                snprintf(def, sizeof def, "`\"\"`");
            else
                snprintf(def, sizeof def, "%s", k->def_doc ? k->def_doc : "-");
            if (k->type == RS_T_MAP || k->type == RS_T_SEQ)
                snprintf(allowed, sizeof allowed, "see `%s`", k->sub->path);
            else
                rs_allowed(k, allowed, sizeof allowed);
            fprintf(out, "| `%s` | %s | %s | %s | %s", k->name, rs_type_doc(k), def, allowed, k->desc);
            if (k->kinds) {
                rs_kind_list(k->kinds, kinds, sizeof kinds);
                fprintf(out, " (kind %s only)", kinds);
            }
            fprintf(out, " |\n");
        }
        fprintf(out, "\n");
    }
    fprintf(out, "### Kinds\n\n| kind | ranks | rank-to-rank links |\n|---|---|---|\n");
    static const char *const ranks_doc[RS_TOPO_KIND_COUNT] = {
        [RS_TOPO_RING] = "`ranks`, at least 2",
        [RS_TOPO_BIRING] = "`ranks`, at least 2",
        [RS_TOPO_FULL_MESH] = "`ranks`, at least 2",
        [RS_TOPO_TORUS2D] = "dims[0] x dims[1]",
        [RS_TOPO_SWITCH] = "`ranks`, each with a link pair to one switch",
        [RS_TOPO_FAT_TREE] = "`ranks` = leaves x `per_leaf`; each leaf has a link pair to every spine",
        [RS_TOPO_SERVER8] = "8",
        [RS_TOPO_CLUSTER] = "8 x `servers`; every NPU also has a NIC link pair to one switch",
        [RS_TOPO_LINKS] = "`ranks`, or the largest endpoint + 1",
    };
    for (int k = 0; k < RS_TOPO_KIND_COUNT; k++)
        fprintf(out, "| `%s` | %s | %s |\n", rs_scenario_kind_name((rs_topo_kind)k), ranks_doc[k], rs_kind_links[k]);
}

/* ---- ringsim validate ------------------------------------------------------------------------- */

void rs_scenario_usage_validate(FILE *out)
{
    fprintf(out,
        "usage: ringsim validate [-v] FILE...\n"
        "       ringsim validate --keys\n"
        "\n"
        "Checks scenario files without running them: every key, unit, range and link.\n"
        "Prints 'FILE: ok (summary)' for a good file; for a bad one, one line on stderr:\n"
        "  FILE:LINE: KEY: PROBLEM (allowed: ...)\n"
        "Exit status: 0 when every file is valid, 2 otherwise (all files are checked).\n"
        "\n"
        "  -v, --verbose   also print each scenario as resolved: every default filled in\n"
        "  --keys          print the reference of every key (markdown), as in scenarios/README.md\n"
        "  -h, --help      this text\n");
}

int rs_scenario_cmd_validate(int argc, char **argv, FILE *out, FILE *err)
{
    int verbose = 0, keys = 0, nfiles = 0, opts_done = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!opts_done && a[0] == '-' && a[1] != '\0') {
            if (strcmp(a, "--") == 0)
                opts_done = 1;
            else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0)
                verbose = 1;
            else if (strcmp(a, "--keys") == 0)
                keys = 1;
            else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
                rs_scenario_usage_validate(out);
                return 0;
            } else {
                fprintf(err, "ringsim: validate: unknown option '%s' (allowed: -v, --keys, --help)\n", a);
                return 2;
            }
        } else {
            nfiles++;
        }
    }
    if (keys) {
        rs_scenario_print_keys(out);
        if (nfiles == 0)
            return 0;
    }
    if (nfiles == 0) {
        fprintf(err, "ringsim: validate: no scenario file given (allowed: one or more YAML files; see "
                     "'ringsim validate --help')\n");
        return 2;
    }
    int status = 0;
    opts_done = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!opts_done && a[0] == '-' && a[1] != '\0') {
            opts_done |= strcmp(a, "--") == 0;
            continue;
        }
        rs_scenario sc;
        char msg[RS_SCENARIO_ERRLEN];
        if (rs_scenario_load(a, &sc, msg, sizeof msg) != 0) {
            fprintf(err, "%s\n", msg);
            status = 2;
            continue;
        }
        char summary[256];
        rs_scenario_summary(&sc, summary, sizeof summary);
        fprintf(out, "%s: ok (%s)\n", a, summary);
        if (verbose)
            rs_scenario_dump(&sc, out);
        rs_scenario_free(&sc);
    }
    fflush(out);
    return status;
}
