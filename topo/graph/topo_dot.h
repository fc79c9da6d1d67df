/*
 * topo_dot: Graphviz output of the fabric (switches, hosts, groups), for a
 * picture of what discovery found: `topognn-discover --dot | dot -Tsvg`.
 * Host parts (GPUs, NUMA, HCAs) are folded into their host so a 1,000-host
 * fabric stays drawable; parallel cables become one edge labelled with the
 * cable count and total bandwidth.
 */
#ifndef TOPO_DOT_H
#define TOPO_DOT_H

#include <stdio.h>

#include "topo_error.h"
#include "topo_graph.h"

int topo_write_dot(const topo_graph *g, FILE *out, topo_error *err);

#endif
