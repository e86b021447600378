/* rs_scenario_keys.h — inside the scenario loader (not for other wings): its key tables (rs_scenario_keys.c), the names of its values (rs_scenario_names.c), the model table (rs_model_table.c) and the checks the tables call (rs_scenario_check.c). */
#ifndef RS_SCENARIO_KEYS_H
#define RS_SCENARIO_KEYS_H

#include <stddef.h>
#include <stdint.h>

#include "model/rs_spec.h"
#include "rs_fusion.h"
#include "rs_schema.h"

/* ---- the tables (rs_scenario_keys.c) ---------------------------------------------------------- */

/** The scenario format: its top map and the variant key topology.kind. */
extern const rs_schema rs_scenario_schema;
/** Maps the dump and the reference treat specially. */
extern const rs_map rs_scenario_map_workload, rs_scenario_map_sizes, rs_scenario_map_latency_paths,
    rs_scenario_map_training,
    rs_scenario_map_fault;
/** Every map, in the reference's order; NULL ends the list. */
extern const rs_map *const rs_scenario_maps[];

/* ---- the names of values (rs_scenario_names.c) --------------------------------------------- */

/** Names of topology kinds, collectives, algorithms, dtypes, ops, payload modes, fidelities,
 *  device fidelities, fault actions, booleans, ring choices and inter-server algorithms. */
extern const rs_yaml_enum rs_scenario_kinds, rs_scenario_colls, rs_scenario_algos, rs_scenario_dtypes,
    rs_scenario_ops, rs_scenario_payloads, rs_scenario_fidelities, rs_scenario_device_fidelities,
    rs_scenario_actions, rs_scenario_bools, rs_scenario_rings, rs_scenario_inters;

/** What links each kind has between ranks, for messages and the reference. */
extern const char *const rs_scenario_kind_links[RS_TOPO_KIND_COUNT];

/* ---- the model table (rs_model_table.c) ----------------------------------------------------- */

/** A model table file (workload.training.model) and its tensors, read with the same machinery. */
extern const rs_map rs_scenario_map_model_table, rs_scenario_map_tensor;

/** Reads t->model (relative to the scenario) into t: its own file in messages
 *  ("models/x.yaml:12: tensors[3].params: ..."). 0, or -1 after the message. */
int rs_scenario_load_model_table(rs_schema_ctx *c, int line, rs_training *t);

/* ---- the checks the tables call (rs_scenario_check.c) ----------------------------------------- */

/** One one-way link of a `links` list, for sorting and lookups. */
typedef struct rs_scenario_chan {
    int32_t a, b;
    size_t idx;
} rs_scenario_chan;

/** What the checks keep while one scenario loads (rs_schema_ctx.state); the loader frees chans. */
typedef struct rs_scenario_check_state {
    rs_scenario_chan *chans; /* kind links: every one-way link, sorted, so overrides and faults are */
    size_t nchans;           /* looked up in log time rather than scanned (lists can be long) */
} rs_scenario_check_state;

int rs_scenario_check_top(rs_schema_ctx *c, yaml_node_t *node, void *base);
int rs_scenario_check_topology(rs_schema_ctx *c, yaml_node_t *node, void *base);
int rs_scenario_check_link(rs_schema_ctx *c, yaml_node_t *node, void *base);
int rs_scenario_check_link_item(rs_schema_ctx *c, yaml_node_t *node, void *base);
int rs_scenario_check_override(rs_schema_ctx *c, yaml_node_t *node, void *base);
int rs_scenario_check_device(rs_schema_ctx *c, yaml_node_t *node, void *base);
int rs_scenario_check_workload(rs_schema_ctx *c, yaml_node_t *node, void *base);
int rs_scenario_check_sizes(rs_schema_ctx *c, yaml_node_t *node, void *base);
int rs_scenario_check_training(rs_schema_ctx *c, yaml_node_t *node, void *base);
int rs_scenario_check_fault(rs_schema_ctx *c, yaml_node_t *node, void *base);
/** A links[] item starts with topology.link's parameters. */
void rs_scenario_init_link_item(void *item, const void *root);

/** Plans a training workload's buckets with fusion f over its tensors (produced order: the
 *  table's last tensor first): 0, -1 with the planner's reason in why, -2 out of memory. */
int rs_scenario_fusion_check(const rs_fusion *f, const rs_training *t, char *why, size_t whylen);

#endif
