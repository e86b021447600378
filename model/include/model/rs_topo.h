/* rs_topo.h — the links of a topology spec, defined once: enumerated in the order the model builds its channels (so channel ids), and asked about by the scenario checker. Plain C, no SystemC. */
#ifndef RS_TOPO_H
#define RS_TOPO_H

#include <stddef.h>
#include <stdint.h>

#include "model/rs_spec.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One one-way link. Node ids: ranks 0..p-1, then the switches (switch and cluster: node p;
 *  fat_tree: the leaves p.., then the spines). A full-duplex link is two of them, a -> b first. */
typedef struct rs_topo_link {
    int32_t from, to;
    const rs_link_params *params; /**< &spec->link, &spec->nic, or &spec->links[item].params */
    int32_t nic;                  /**< 1: a cluster NPU's NIC link to the switch */
    size_t item;                  /**< kind links: the spec->links entry it comes from (else 0) */
} rs_topo_link;

/** The ranks a spec has: what the kind fixes (torus2d dims[0] x dims[1], server8 8, cluster
 *  8 x servers), else nranks. */
int64_t rs_topo_ranks(const rs_topology_spec *t);

/** The switches a spec has (switch, cluster: 1; fat_tree: leaves + spines; else 0), numbered
 *  after the ranks. */
uint32_t rs_topo_switches(const rs_topology_spec *t);

/** Called once per link; a non-zero return stops the walk. */
typedef int (*rs_topo_link_fn)(void *ud, const rs_topo_link *link);

/**
 * The definition of a topology's links: calls fn for every one-way link of a valid spec (as the
 * scenario loader or the model's Topology checks it) in channel-id order, the order the model
 * builds them:
 *   ring       r -> r+1 for each rank r
 *   biring     r -> r+1, r+1 -> r for each r (two ranks: one pair)
 *   full_mesh  a -> b for every a, then every b != a
 *   torus2d    row-major over (row, column): the pair to the next column, then to the next row
 *              (a dimension of 2 has one pair, of 1 none)
 *   switch     r -> sw, sw -> r for each r
 *   fat_tree   each rank's pair with its leaf, then each leaf's pair with every spine
 *   server8    the pairs of 0-3, of 4-7 (i < j), then the cross pairs 0-4 .. 3-7
 *   cluster    server8 for each server s (ranks 8s..8s+7), then each rank's NIC pair with the switch
 *   links      the list, a -> b then (both) b -> a
 * Returns the first non-zero return of fn, else 0.
 */
int rs_topo_links(const rs_topology_spec *t, rs_topo_link_fn fn, void *ud);

/** 1 if a -> b is one of the links (a and b node ids), else 0; for every kind but links in
 *  constant time (a 65536-rank full mesh has 4e9 links: asking must not walk them). */
int rs_topo_has_link(const rs_topology_spec *t, int32_t a, int32_t b);

/** The number of links rs_topo_links visits, in constant time for every kind but links. */
uint64_t rs_topo_link_count(const rs_topology_spec *t);

#ifdef __cplusplus
}
#endif
#endif
