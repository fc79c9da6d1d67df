/*
 * topo_groups: infers the structure of a fabric graph that a builder has
 * filled with switches, hosts, HCAs and cables: switch levels, scalable-unit
 * groups and rails. topo_fabric_finish() calls it; it only reads and
 * annotates the graph, so it works the same on any fabric source.
 */
#ifndef TOPO_GROUPS_H
#define TOPO_GROUPS_H

#include "topo_error.h"
#include "topo_graph.h"

/* Switch levels by BFS distance from the leaves: a switch already marked
 * TOPO_LEVEL_LEAF, or cabled to an HCA, is a leaf; one hop above is a spine,
 * two or more a core switch; unreachable switches stay unknown.
 *
 * Groups: hosts that reach a common leaf switch through their HCAs belong to
 * one group (on a rail-optimized fabric, the hosts of one scalable unit and
 * its rail leaves). Groups are named "su1".."suN" in the order of their
 * first host name; each becomes a TOPO_V_GROUP vertex with TOPO_E_MEMBER
 * edges to its hosts and leaves.
 *
 * Rails: in groups with the most leaves, a leaf's rail is its index among
 * the group's leaves sorted by name. A group with fewer leaves maps each
 * leaf to the rail whose leaves elsewhere carry the same HCA name (e.g.
 * "HCA-6" is rail 3), falling back to the free rails in name order; each
 * rail it lacks is an anomaly "missing-rail". An HCA's rail is its leaf's
 * rail (leaf switches get the rail too). An HCA whose name belongs to
 * another rail is an anomaly "crossed-rail"; a host missing some of its
 * group's leaves is an anomaly "missing-hca".
 *
 * Returns 0, or -1 on memory exhaustion (err says so). */
int topo_infer_fabric_structure(topo_graph *g, topo_error *err);

#endif
