/*
 * topo_ethfabric: builds a fabric that is known by names rather than GUIDs
 * (Ethernet/RoCE, as NetQ or LLDP describe it: "leaf01 swp17 <-> dgx-01
 * ens4f0np0") into a topo_graph.
 *
 * It is a front end to topo_fabric, the one fabric builder: switches and
 * host NICs get stable stand-in GUIDs (in name order) and ports get numbers
 * (in natural order of their names), so the same checks apply as for an
 * InfiniBand fabric (a port cabled twice, generic or duplicated host names,
 * the fabric manager's host) and the same structure comes out (leaf, spine
 * and core levels, groups, rails). After topo_fabric_finish() the stand-ins
 * are removed again: HCA vertices get the Ethernet link layer (or the one a
 * source knows, e.g. RoCE), GUID 0, their netdev and RDMA device, and the
 * attribute "switch_port" = "SWITCH:PORT" naming where they are cabled.
 *
 * Each NIC has a role (TOPO_NIC_COMPUTE, STORAGE, MANAGEMENT). Only compute
 * NICs are cabled into the fabric, so a storage or front-end switch never
 * becomes a leaf nor joins hosts into a group; the others become HCA
 * vertices of their host with the attribute "fabric" = "storage" or
 * "management" (compute NICs get "fabric" = "compute") and "switch_port".
 *
 * A source declares switches (with the tier it claims: 1 leaf, 2 spine,
 * 3 core, 0 unknown) and cables; an end is a switch when declared one, else
 * a host. A tier that the cabling contradicts is an anomaly "tier-mismatch".
 */
#ifndef TOPO_ETHFABRIC_H
#define TOPO_ETHFABRIC_H

#include "topo_error.h"
#include "topo_graph.h"
#include "topo_nicrole.h"

/* One end of a cable: a node name and a port (interface) name. */
typedef struct topo_eth_end {
	const char *node;
	const char *port;
} topo_eth_end;

typedef struct topo_ethfabric topo_ethfabric;

/* Start building into g; source names the input for errors. rules may be
 * NULL; the builder does not keep a reference to it past finish. */
topo_ethfabric *topo_ethfabric_new(topo_graph *g, const char *source, const topo_nic_rules *rules,
				   topo_error *err);
void topo_ethfabric_free(topo_ethfabric *f);

/* Declare a switch; tier 0 when unknown. Declaring it again with another
 * known tier is an error. */
int topo_ethfabric_add_switch(topo_ethfabric *f, const char *name, int tier, int line,
			      topo_error *err);

/* Describe a host NIC: its RDMA device ("mlx5_0", NULL if none) and link
 * layer (TOPO_LL_UNKNOWN keeps Ethernet). Optional. */
int topo_ethfabric_set_nic(topo_ethfabric *f, const char *host, const char *netdev,
			   const char *rdma_device, topo_link_layer ll, topo_error *err);

/* Declare a cable; speed like "100G" (NULL or "" unknown). The same cable
 * seen from both ends is one cable. At least one end must be a switch
 * (declared before finish). */
int topo_ethfabric_add_link(topo_ethfabric *f, const topo_eth_end *a, const topo_eth_end *b,
			    const char *speed, int line, topo_error *err);

/* Create the graph's vertices and edges and infer its structure. */
int topo_ethfabric_finish(topo_ethfabric *f, topo_error *err);

#endif
