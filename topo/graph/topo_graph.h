/*
 * topo_graph: the one model of a cluster that everything in topognn uses.
 *
 * Vertices are hosts, the GPUs, HCAs/NICs and NUMA nodes inside them, fabric
 * switches, and groups (a scalable unit or a rack). Edges are fabric links
 * (a cable between an HCA and a switch port, or between two switch ports),
 * PCIe/locality links inside a host, and memberships (host -> its parts,
 * group -> its hosts and leaf switches).
 *
 * The graph is the same whether it was discovered live (libibnetdisc, hwloc)
 * or loaded from a file (ibnetdiscover dump, topology.conf, hwloc XML, our
 * JSON): every live discovery can be saved and replayed in a test, as with
 * hwloc's XML export. topo_graph_canonicalize() puts vertices and edges in a
 * deterministic order so two graphs of the same cluster compare equal.
 *
 * Vertex names are unique per kind. Host parts are named "HOST/LOCAL", e.g.
 * "dgx-01/mlx5_0", "dgx-01/gpu3", "dgx-01/numa1".
 *
 * Pointers returned by topo_graph_vertex()/edge() stay valid until the next
 * vertex or edge is added, or the graph is canonicalized.
 */
#ifndef TOPO_GRAPH_H
#define TOPO_GRAPH_H

#include "topognn_export.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "topo_error.h"

typedef enum topo_vkind {
	TOPO_V_HOST = 0,
	TOPO_V_GPU,
	TOPO_V_HCA, /* an InfiniBand HCA port or an Ethernet NIC */
	TOPO_V_NUMA,
	TOPO_V_SWITCH,
	TOPO_V_GROUP,
	TOPO_V_NKINDS
} topo_vkind;

typedef enum topo_ekind {
	TOPO_E_FABRIC = 0, /* a cable: hca<->switch or switch<->switch */
	TOPO_E_PCIE,       /* host-internal locality: gpu/hca <-> numa, gpu <-> nearest hca */
	TOPO_E_MEMBER,     /* a = container (host or group), b = member */
	TOPO_E_NKINDS
} topo_ekind;

typedef enum topo_level {
	TOPO_LEVEL_UNKNOWN = 0,
	TOPO_LEVEL_LEAF,
	TOPO_LEVEL_SPINE,
	TOPO_LEVEL_CORE
} topo_level;

typedef enum topo_link_layer {
	TOPO_LL_UNKNOWN = 0,
	TOPO_LL_IB,
	TOPO_LL_ETH
} topo_link_layer;

typedef enum topo_link_state {
	TOPO_LINK_UNKNOWN = 0,
	TOPO_LINK_ACTIVE,
	TOPO_LINK_DOWN
} topo_link_state;

/* Switch capabilities (bit set in topo_vertex.caps). */
#define TOPO_CAP_SHARP 0x1u /* in-network reduction (SHARP aggregation node) */

typedef struct topo_attr {
	char *key;
	char *value;
} topo_attr;

typedef struct topo_vertex {
	topo_vkind kind;
	char *name;        /* unique per kind */
	int host;          /* owning host vertex for gpu/hca/numa; -1 otherwise */
	int index;         /* gpu: index in PCI bus id order; numa: OS index; else -1 */
	int numa;          /* gpu/hca: OS index of the NUMA node it hangs off; -1 unknown */
	int rail;          /* hca: rail index on a rail-optimized fabric; -1 unknown */
	uint64_t guid;     /* switch: node GUID; hca: port GUID; 0 unknown */
	int lid;           /* InfiniBand LID; 0 unknown */
	int port;          /* hca: port number (1-based); 0 unknown */
	int nports;        /* switch: number of ports; 0 unknown */
	topo_level level;  /* switch: leaf/spine/core */
	unsigned caps;     /* switch: TOPO_CAP_* */
	topo_link_layer link_layer; /* hca */
	char *device;      /* hca: "mlx5_0"; gpu: model, e.g. "Tesla V100-SXM2-16GB" */
	char *netdev;      /* hca/nic: "ib0", "eth0" */
	char *pci_busid;   /* gpu/hca: "0000:44:00.0" */
	char *cpuset;      /* numa/gpu/hca: local CPUs as a list, "0-15,32-47" */
	char *desc;        /* fabric node description as discovered */
	int nattrs;
	topo_attr *attrs;  /* free-form key/value attributes */
} topo_vertex;

typedef struct topo_edge {
	topo_ekind kind;
	int a, b;          /* vertex ids; for MEMBER a is the container */
	int port_a;        /* fabric: port number on a (0 for an hca) */
	int port_b;        /* fabric: port number on b */
	int width;         /* fabric: lanes (1, 2, 4, 8, 12); 0 unknown */
	char speed[8];     /* fabric: "NDR", "HDR", "EDR", ...; "" unknown */
	double gbps;       /* fabric: width x lane rate, 4xNDR = 400 */
	topo_link_state state;
	int distance;      /* pcie: hops through the PCI tree between a and b; 0 unknown */
} topo_edge;

typedef struct topo_anomaly {
	char *kind;    /* short tag: "unnamed-hca", "generic-hostname", ... */
	char *subject; /* what it is about: a GUID, a host or switch name */
	char *text;    /* one sentence */
} topo_anomaly;

typedef struct topo_graph topo_graph;

/* Create an empty graph; NULL on allocation failure. */
TOPOGNN_EXPORT topo_graph *topo_graph_new(void);
TOPOGNN_EXPORT void topo_graph_free(topo_graph *g);

/* Add a vertex; returns its id, or -1 if (kind, name) exists or memory runs out. */
TOPOGNN_EXPORT int topo_graph_add_vertex(topo_graph *g, topo_vkind kind, const char *name);

/* Add a part (gpu, hca, numa) of `host` named "HOSTNAME/local" plus the
 * host -> part membership edge. Returns the part's id or -1. */
TOPOGNN_EXPORT int topo_graph_add_part(topo_graph *g, int host, topo_vkind kind, const char *local);

/* Find a vertex by kind and name; -1 if absent. O(1). */
TOPOGNN_EXPORT int topo_graph_find(const topo_graph *g, topo_vkind kind, const char *name);

/* Add an edge; returns its id, or -1 on bad ids or memory exhaustion. */
TOPOGNN_EXPORT int topo_graph_add_edge(topo_graph *g, topo_ekind kind, int a, int b);

/* Set a fabric edge's width and speed; fills gbps from them. */
TOPOGNN_EXPORT void topo_edge_set_rate(topo_edge *e, int width, const char *speed);

/* Per-lane data rate in Gb/s of an IB speed name ("NDR" -> 100, "HDR" -> 50,
 * "EDR" -> 25, "FDR" -> 14, "QDR" -> 10, "DDR" -> 5, "SDR" -> 2.5, "XDR" -> 200);
 * Ethernet "25G"/"100G" style names give their number; 0 if unknown. */
TOPOGNN_EXPORT double topo_lane_gbps(const char *speed);

TOPOGNN_EXPORT size_t topo_graph_nvertices(const topo_graph *g);
TOPOGNN_EXPORT size_t topo_graph_nedges(const topo_graph *g);
TOPOGNN_EXPORT const topo_vertex *topo_graph_vertex(const topo_graph *g, int id);
TOPOGNN_EXPORT topo_vertex *topo_graph_vertex_mut(topo_graph *g, int id);
TOPOGNN_EXPORT const topo_edge *topo_graph_edge(const topo_graph *g, int id);
TOPOGNN_EXPORT topo_edge *topo_graph_edge_mut(topo_graph *g, int id);

/* The other end of edge `e` seen from vertex `v`. */
static inline int topo_edge_other(const topo_edge *e, int v)
{
	return e->a == v ? e->b : e->a;
}

/* Whether vertex `v` exists and is a switch. */
static inline int topo_graph_is_switch(const topo_graph *g, int v)
{
	const topo_vertex *x = topo_graph_vertex(g, v);

	return x && x->kind == TOPO_V_SWITCH;
}

/* Replace a string field of a vertex (device, netdev, ...) with a copy of s
 * (NULL clears it). Returns 0, or -1 when memory runs out. */
TOPOGNN_EXPORT int topo_set_str(char **field, const char *s);

/* Free-form attributes: set (replacing) and get (NULL if absent). */
TOPOGNN_EXPORT int topo_graph_set_attr(topo_graph *g, int id, const char *key, const char *value);
TOPOGNN_EXPORT const char *topo_graph_get_attr(const topo_graph *g, int id, const char *key);

/* The attribute that tells kinds of groups apart, and its NVLink value. */
#define TOPO_GROUP_KIND_ATTR "group_kind"
#define TOPO_GROUP_KIND_NVLINK "nvlink"

/* 1 when vertex v is an NVLink domain group (made by topo_nvsmi.c or
 * topo_fattree.c). Inline, so the engine tells domains from scalable units
 * with no link to discovery. */
static inline int topo_group_is_nvlink(const topo_graph *g, int v)
{
	const topo_vertex *x = topo_graph_vertex(g, v);
	const char *k = x && x->kind == TOPO_V_GROUP ? topo_graph_get_attr(g, v, TOPO_GROUP_KIND_ATTR)
						    : NULL;

	return k && strcmp(k, TOPO_GROUP_KIND_NVLINK) == 0;
}

/* Ids of the edges incident to v, in insertion order. The array is owned by
 * the graph and rebuilt lazily after changes: not thread-safe while mutating. */
TOPOGNN_EXPORT const int *topo_graph_incident(const topo_graph *g, int v, int *count);

/* Membership walks (MEMBER edges: a container, host or group, and its
 * members). The parts of a host are its GPU, HCA and NUMA members; the
 * members of a group are its hosts and leaf switches.
 *
 * topo_graph_next_member: the next member of `container` of `kind`
 * (TOPO_V_NKINDS: any kind) after cursor *it (start with *it = 0), in edge
 * insertion order; -1 when there are no more. Use as
 *   for (int it = 0, m; (m = topo_graph_next_member(g, host, TOPO_V_HCA, &it)) >= 0;)
 * topo_graph_count_members: how many there are.
 * topo_graph_group_of: the group holding `host`, the first by host-name
 * order when several do; -1 when none. */
TOPOGNN_EXPORT int topo_graph_next_member(const topo_graph *g, int container, topo_vkind kind,
					  int *it);
TOPOGNN_EXPORT int topo_graph_count_members(const topo_graph *g, int container, topo_vkind kind);
TOPOGNN_EXPORT int topo_graph_group_of(const topo_graph *g, int host);

/* Record an anomaly found while loading or analysing (printf-style text). */
TOPOGNN_EXPORT int topo_graph_add_anomaly(topo_graph *g, const char *kind, const char *subject,
			   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
TOPOGNN_EXPORT size_t topo_graph_nanomalies(const topo_graph *g);
TOPOGNN_EXPORT const topo_anomaly *topo_graph_anomaly(const topo_graph *g, size_t i);

/* Counting helpers. */
TOPOGNN_EXPORT size_t topo_graph_count(const topo_graph *g, topo_vkind kind);
TOPOGNN_EXPORT size_t topo_graph_count_switches(const topo_graph *g, topo_level level);
TOPOGNN_EXPORT size_t topo_graph_count_edges(const topo_graph *g, topo_ekind kind);

/* Put vertices in (kind, name) order and edges in (kind, a, b, port_a, port_b)
 * order, attributes by key and anomalies by (kind, subject, text). Ids change. */
TOPOGNN_EXPORT int topo_graph_canonicalize(topo_graph *g);

/* Compare two canonicalized graphs field by field. Returns 1 when equal; when
 * different returns 0 and writes the first difference into why. */
TOPOGNN_EXPORT int topo_graph_equal(const topo_graph *a, const topo_graph *b, char *why,
				    size_t len);

/* Names of enum values, as used in JSON and text output, and their parsers
 * (which return -1 for an unknown name). */
TOPOGNN_EXPORT const char *topo_vkind_name(topo_vkind k);
TOPOGNN_EXPORT const char *topo_ekind_name(topo_ekind k);
TOPOGNN_EXPORT const char *topo_level_name(topo_level l);
TOPOGNN_EXPORT const char *topo_link_layer_name(topo_link_layer l);
TOPOGNN_EXPORT const char *topo_link_state_name(topo_link_state s);
TOPOGNN_EXPORT int topo_vkind_parse(const char *s);
TOPOGNN_EXPORT int topo_ekind_parse(const char *s);
TOPOGNN_EXPORT int topo_level_parse(const char *s);
TOPOGNN_EXPORT int topo_link_layer_parse(const char *s);
TOPOGNN_EXPORT int topo_link_state_parse(const char *s);

#endif
