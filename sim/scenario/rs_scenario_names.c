/* rs_scenario_names.c — the names of a scenario's values (topology kinds, payload modes, fidelities, ...; the engine's from ncl_names) and what links each kind has. */
#include "rs_scenario_keys.h"

#include "rs_scenario.h"

/* Accepted spellings; the first entry of each value is the one printed and listed as allowed. */
static const rs_yaml_name rs_kind_names[] = {
    {"ring", RS_TOPO_RING, 0},       {"biring", RS_TOPO_BIRING, 0},   {"full_mesh", RS_TOPO_FULL_MESH, 0},
    {"torus2d", RS_TOPO_TORUS2D, 0}, {"switch", RS_TOPO_SWITCH, 0},   {"fat_tree", RS_TOPO_FAT_TREE, 0},
    {"server8", RS_TOPO_SERVER8, 0}, {"cluster", RS_TOPO_CLUSTER, 0}, {"links", RS_TOPO_LINKS, 0},
};
static const rs_yaml_name rs_payload_names[] = {{"real", 1, 0}, {"none", 0, 0}};
static const rs_yaml_name rs_fidelity_names[] = {{"message", RS_FIDELITY_MESSAGE, 0}, {"packet", RS_FIDELITY_PACKET, 0}};
static const rs_yaml_name rs_devfid_names[] = {{"systemc", RS_DEVICE_SYSTEMC, 0}, {"rtl", RS_DEVICE_RTL, 0}};
static const rs_yaml_name rs_action_names[] = {
    {"down", RS_FAULT_DOWN, 0}, {"degrade", RS_FAULT_DEGRADE, 0}, {"corrupt", RS_FAULT_CORRUPT, 0}};
static const rs_yaml_name rs_rings_names[] = {{"auto", RS_RINGS_AUTO, 0}, {"rank", RS_RINGS_RANK, 0}};
/* YAML 1.2 core schema booleans; yes/no/on/off are deliberately not booleans here */
static const rs_yaml_name rs_bool_names[] = {
    {"true", 1, 0}, {"false", 0, 0}, {"True", 1, 1}, {"False", 0, 1}, {"TRUE", 1, 1}, {"FALSE", 0, 1},
};

const rs_yaml_enum rs_scenario_kinds = RS_YAML_ENUM("a topology kind", rs_kind_names);
/* the engine's names: one table for every tool (ncl_names.h) */
const rs_yaml_enum rs_scenario_colls =
    RS_YAML_ENGINE_ENUM_AND("a collective", NCL_NAMES_COLL, rs_coll_extra_names, RS_COLL_EXTRA_COUNT);
const rs_yaml_enum rs_scenario_algos = RS_YAML_ENGINE_ENUM("an algorithm", NCL_NAMES_ALGO, NCL_ALGO_USER);
static const rs_yaml_name rs_inter_names[] = {
    {"auto", NCL_ALGO_AUTO, 0}, {"ring", NCL_ALGO_RING, 0}, {"hd", NCL_ALGO_HD, 0}, {"halving_doubling", NCL_ALGO_HD, 1},
};
const rs_yaml_enum rs_scenario_inters = RS_YAML_ENUM("an inter-server algorithm", rs_inter_names);
const rs_yaml_enum rs_scenario_dtypes = RS_YAML_ENGINE_ENUM("a dtype", NCL_NAMES_DTYPE, -1);
const rs_yaml_enum rs_scenario_ops = RS_YAML_ENGINE_ENUM("an op", NCL_NAMES_OP, -1);
const rs_yaml_enum rs_scenario_payloads = RS_YAML_ENUM("a payload mode", rs_payload_names);
const rs_yaml_enum rs_scenario_fidelities = RS_YAML_ENUM("a fidelity", rs_fidelity_names);
const rs_yaml_enum rs_scenario_device_fidelities = RS_YAML_ENUM("a device fidelity", rs_devfid_names);
const rs_yaml_enum rs_scenario_actions = RS_YAML_ENUM("a fault action", rs_action_names);
const rs_yaml_enum rs_scenario_bools = RS_YAML_ENUM("a boolean", rs_bool_names);
const rs_yaml_enum rs_scenario_rings = RS_YAML_ENUM("a ring choice", rs_rings_names);

/* What links each kind has between ranks, for messages and the reference. */
const char *const rs_scenario_kind_links[RS_TOPO_KIND_COUNT] = {
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

const char *rs_scenario_kind_name(rs_topo_kind kind) { return rs_yaml_enum_name(&rs_scenario_kinds, (int)kind); }
