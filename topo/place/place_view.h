/*
 * place_view: a read-only view of a place_cluster for code outside the
 * engine (placement-report's cluster view, SVG picture, history export).
 *
 * The engine keeps its cluster as flat arrays (place_internal.h) that only
 * the place area may touch, so their layout can change with the engine. Readers
 * ask through these accessors instead; each checks its index and returns -1
 * (or NULL) when it is out of range. Leaves are numbered 0..nleaves-1 in
 * switch-name order; rails 0..nrails-1.
 */
#ifndef PLACE_VIEW_H
#define PLACE_VIEW_H

#include "place.h"

/* Rails: the most HCAs (fabric ports) any host has. */
int place_cluster_nrails(const place_cluster *c);
/* The leaf that host's rail r is cabled to; -1 when that rail is absent. */
int place_cluster_host_leaf(const place_cluster *c, int host, int rail);
/* GPUs the graph lists inside the host (0 when it lists none). */
int place_cluster_host_gpus(const place_cluster *c, int host);
/* A leaf switch's name (the graph vertex name). */
const char *place_cluster_leaf_name(const place_cluster *c, int leaf);
/* The group all of a leaf's hosts belong to; -1 when mixed or none. */
int place_cluster_leaf_group(const place_cluster *c, int leaf);
/* The spines above a leaf, as ascending graph vertex ids; *n their count. */
const int *place_cluster_leaf_spines(const place_cluster *c, int leaf, int *n);

#endif
