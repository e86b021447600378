/* rs_scenario.h — loads scenario YAML files into rs_scenario (model/rs_spec.h), checked key by key. */
#ifndef RS_SCENARIO_H
#define RS_SCENARIO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/rs_spec.h"
#include "sweep/rs_sweep.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Largest rank count a scenario may ask for. */
#define RS_SCENARIO_MAX_RANKS 65536
/** Largest scenario file read (bytes). */
#define RS_SCENARIO_MAX_FILE (16u << 20)
/** Room for any message of the loader. */
#define RS_SCENARIO_ERRLEN 2048

/**
 * Loads and checks a scenario file. Returns 0 with *out filled (every default applied, every
 * value in SI units, topo.nranks derived for the kinds that fix it, name = the file's base
 * name when the file has none). Otherwise returns -1, leaves *out empty (safe to free) and
 * writes ONE line to err, without a newline:
 *     FILE:LINE: KEY: PROBLEM (allowed: ...)
 * e.g. "s.yaml:7: topology.link.bandwith: unknown key, did you mean 'bandwidth'? (allowed:
 * bandwidth, latency, packet, header, buffer)". KEY is the dotted path of the key
 * ("topology.overrides[1].to"), "yaml" for a syntax error, "(file)" when the file cannot be
 * read (then LINE is 0). Nothing crashes on any input; nothing leaks.
 */
int rs_scenario_load(const char *path, rs_scenario *out, char *err, size_t errlen);

/** The same for text in memory (len bytes, no terminator needed); `name` stands for the file
 *  name in messages and gives the default scenario name. */
int rs_scenario_load_string(const char *text, size_t len, const char *name, rs_scenario *out,
                            char *err, size_t errlen);

/** Overrides a training scenario's workload.training.fusion (text as the key takes it; NULL: keep)
 *  and micro_batch (0: keep), checked as the loader checks them. 0, or -1 with one line in err
 *  (also when the scenario has no training workload). */
int rs_scenario_set_training(rs_scenario *sc, const char *fusion, int micro_batch, char *err, size_t errlen);

/** The sweep sc's workload means, on the model (backend sim); channels as the workload says,
 *  else the sweep's default (runs on the model take one per ring found: rs_simrun_sweep). */
void rs_scenario_sweep(const rs_scenario *sc, rs_sweep *s);

/** Frees what a load allocated and zeroes *sc. NULL and an empty scenario are fine. */
void rs_scenario_free(rs_scenario *sc);

/** Writes the resolved scenario as YAML with units (every default filled in); the text loads
 *  back to the same scenario. Returns 0, or -1 on a write error. */
int rs_scenario_dump(const rs_scenario *sc, FILE *out);

/** One-line summary: "server8, 8 ranks, 32 links, allreduce+broadcast, 8 B..64 MiB x2 (24 sizes),
 *  payload real, message fidelity". Returns what snprintf returns. */
int rs_scenario_summary(const rs_scenario *sc, char *buf, size_t len);

/** Most sizes one sweep visits (a linear sweep of 1 KiB steps to 64 MiB). */
#define RS_MAX_SIZES 65536

/** The size after `size` in the sweep (begin, then times factor, or plus step, up to end): 1 and
 *  *next, or 0 at the end. */
int rs_scenario_next_size(const rs_workload *w, uint64_t size, uint64_t *next);
/** Number of sizes the sweep visits, counting no further than RS_MAX_SIZES + 1. */
uint32_t rs_scenario_size_count(const rs_workload *w);

/* A topology's links are model/rs_topo.h's (the enumeration the model builds its channels from);
 * these three are its answers under the scenario API's names. */

/** Switches the topology has (switch, cluster: 1; fat_tree: leaves + spines). In overrides and
 *  faults they are nodes ranks .. ranks+switches-1: fat_tree leaves first, then spines.
 *  = rs_topo_switches. */
uint32_t rs_scenario_switch_count(const rs_topology_spec *t);

/** 1 if the topology has a direct one-way link a -> b between two nodes (ranks, then switches).
 *  Torus ranks are numbered row-major: rank = row * dims[1] + column. = rs_topo_has_link. */
int rs_scenario_link_exists(const rs_topology_spec *t, int32_t a, int32_t b);

/** Number of one-way links of the built topology, switch ports included. = rs_topo_link_count. */
uint64_t rs_scenario_link_count(const rs_topology_spec *t);

/** Scenario names of kinds, fidelities, collectives, ... ("server8", "packet"). */
const char *rs_scenario_kind_name(rs_topo_kind kind);

/** Prints the key reference (markdown tables) generated from the schema the loader uses. */
void rs_scenario_print_keys(FILE *out);

/** The default of the key at a dotted path ("topology.link.latency", "fidelity") as the key
 *  reference gives it, without markdown: the value a scenario gets ("1.5 us"), "required" when
 *  every scenario or some kinds must give it, else the reference's words ("per_leaf (full
 *  bisection)", "none", "-"). NULL when the schema has no such key. */
const char *rs_scenario_key_default(const char *path);

#ifdef __cplusplus
}
#endif
#endif
