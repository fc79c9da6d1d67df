/*
 * topo_netq: loads NVIDIA NetQ's topology graph (the JSON that NetQ's
 * "telemetry/v1/object/topologygraph/fetch-topology" call returns, the
 * input of topograph's NetQ provider) into a topo_graph through the
 * name-addressed fabric builder topo_ethfabric.
 *
 * The file is an array of one object with
 *   "nodes": tier groups, each with "compounded_nodes": devices with "id",
 *            "name", "tier" (1 leaf, 2 spine, 3 core, -1 unclassified) and
 *            "device_type" ("switch", or "discovered_via_lldp" for hosts
 *            NetQ only knows from their LLDP);
 *   "links": one entry per pair of devices ("id": "A-*-B"), whose
 *            "compounded_links" are the cables ("id": "A:swp17-*-B:ens4f0np0",
 *            "interfaces": [{"node", "interface"}, ...]) and "size" their count.
 * A device is a switch when its tier is 1 or more or its device_type is
 * "switch"; the rest are hosts, named by "name". A link without compounded
 * links is one cable with unknown ports. NetQ gives no link speed, so the
 * cables' speed is unknown.
 *
 * Errors name the file and the JSON path ("links[3].compounded_links[0].id")
 * or, for JSON syntax, the line.
 */
#ifndef TOPO_NETQ_H
#define TOPO_NETQ_H

#include <stddef.h>

#include "topo_error.h"
#include "topo_ethfabric.h"
#include "topo_graph.h"

/* Load the NetQ topology JSON at path into g; rules (NULL: all compute) give
 * NIC roles. Returns 0, or -1 with err filled. */
int topo_load_netq(topo_graph *g, const char *path, const topo_nic_rules *rules, topo_error *err);

/* The same from memory; source names it in errors. */
int topo_load_netq_mem(topo_graph *g, const char *text, size_t len, const char *source,
		       const topo_nic_rules *rules, topo_error *err);

#endif
