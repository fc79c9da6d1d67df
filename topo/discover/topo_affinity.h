/*
 * topo_affinity: one host's GPUs, HCAs and NICs with their locality, read
 * back from the graph (not from hwloc), so it answers the same for a host
 * discovered live, loaded from lstopo XML or from our graph JSON.
 *
 * This is what `topognn-discover --hwloc FILE --affinity --json` prints and
 * what the binding planner uses to pick each job's HCAs: for every GPU its
 * nearest HCA(s) (the gpu -> hca TOPO_E_PCIE edges topo_hwloc.c records),
 * NUMA node and local CPUs.
 *
 * HCA vs NIC: both are TOPO_V_HCA vertices; a NIC is one whose link layer is
 * ETH and whose device is its own netdev ("eth0"), see topo_hca_is_nic().
 */
#ifndef TOPO_AFFINITY_H
#define TOPO_AFFINITY_H

#include <jansson.h>
#include <stdint.h>

#include "topo_graph.h"

typedef struct topo_affinity_gpu {
	char *name;          /* local name, "gpu0" */
	int index;           /* index in PCI bus id order */
	char *pci_busid;     /* "0000:44:00.0", NULL unknown */
	char *model;         /* "Tesla V100-SXM2-16GB", NULL unknown */
	int numa;            /* NUMA OS index, -1 unknown */
	char *cpuset;        /* local CPUs "0-15,32-47", NULL unknown */
	int nnearest;
	char **nearest_hcas; /* local HCA names in name order, "mlx5_1" */
	int pci_distance;    /* tree hops to the nearest HCA(s), 0 when none */
} topo_affinity_gpu;

typedef struct topo_affinity_hca {
	char *name;          /* local name, "mlx5_1" (a NIC: "eth0") */
	char *netdev;        /* "ib1", NULL unknown */
	int numa;            /* -1 unknown */
	int port;            /* 0 unknown */
	topo_link_layer link_layer;
	char *pci_busid;     /* NULL unknown */
	char *cpuset;        /* NULL unknown */
	uint64_t guid;       /* port GUID, 0 unknown */
	int lid;             /* 0 unknown */
} topo_affinity_hca;

typedef struct topo_affinity {
	char *host;
	int ngpus, nhcas, nnics;
	topo_affinity_gpu *gpus; /* by index */
	topo_affinity_hca *hcas; /* by name */
	topo_affinity_hca *nics; /* by name */
} topo_affinity;

/* 1 when hca vertex v is a plain Ethernet NIC rather than an RDMA HCA. */
int topo_hca_is_nic(const topo_vertex *v);

/* Collect host vertex `host`'s GPUs, HCAs and NICs. NULL when host is not a
 * host vertex or memory runs out. Free with topo_affinity_free(). */
topo_affinity *topo_affinity_of_host(const topo_graph *g, int host);
void topo_affinity_free(topo_affinity *a);

/* Build {"gpus": [...], "hcas": [...], "nics": [...]}:
 *   gpu: name, index, pci_busid, model, numa, cpuset, nearest_hca (the first
 *        of nearest_hcas, null when none), nearest_hcas, pci_distance;
 *   hca: name, netdev, numa, port, link_layer ("ib"/"eth"/"unknown",
 *        as topo_link_layer_name() spells them),
 *        pci_busid, cpuset, guid ("0x..."), lid;
 *   nic: name, netdev, numa, pci_busid, cpuset.
 * Unknown values are JSON null. Returns 0 with *out a new reference, -1 when
 * memory runs out. */
int topo_affinity_to_json(const topo_affinity *a, json_t **out);

#endif
