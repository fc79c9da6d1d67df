/*
 * topo_fabric: turns a discovered InfiniBand fabric (nodes and cables) into
 * topo_graph vertices and edges.
 *
 * Both fabric sources feed this one builder, so a fabric gives the same graph
 * whether it came from an `ibnetdiscover` text dump (topo_ibnetdiscover.c) or
 * live from libibnetdisc (topo_ibnd.c):
 *   - switches become switch vertices (name from the node description, e.g.
 *     "MF0;A09-P1-IBLEAF-04-04:MQM9701/U1" -> "A09-P1-IBLEAF-04-04");
 *   - CAs whose description matches the host pattern become an HCA part of a
 *     host ("a05-p1-dgx-01-c01 HCA-6" -> host a05-p1-dgx-01-c01, hca HCA-6);
 *   - SHARP aggregation-node CAs mark their switch with TOPO_CAP_SHARP;
 *   - unnamed, generic or duplicated CAs and the fabric manager are recorded
 *     as anomalies, never merged into compute hosts;
 *   - topo_fabric_finish() infers switch levels, rails and groups.
 */
#ifndef TOPO_FABRIC_H
#define TOPO_FABRIC_H

#include "topognn_export.h"

#include <stdint.h>

#include "topo_error.h"
#include "topo_graph.h"

/* Default host pattern: POSIX extended regex whose first group is the host
 * name and second the HCA name within the host. */
#define TOPO_FABRIC_DEFAULT_HOST_PATTERN "^([^ ]+) +([A-Za-z0-9_-]+)$"

/* Default fabric-manager pattern: POSIX extended regex matched, ignoring
 * case, against a CA's host name; a match marks the host as the fabric
 * manager (UFM), which is reported and not used as a compute host. */
#define TOPO_FABRIC_DEFAULT_MANAGER_PATTERN "ufm"

typedef struct topo_fabric_opts {
	const char *host_pattern;    /* NULL: TOPO_FABRIC_DEFAULT_HOST_PATTERN */
	const char *manager_pattern; /* NULL: TOPO_FABRIC_DEFAULT_MANAGER_PATTERN */
} topo_fabric_opts;

typedef enum topo_fnode_type {
	TOPO_FNODE_SWITCH = 1,
	TOPO_FNODE_CA = 2,
	TOPO_FNODE_ROUTER = 3
} topo_fnode_type;

typedef struct topo_fabric_node {
	topo_fnode_type type;
	uint64_t guid;    /* node GUID */
	int nports;
	const char *desc; /* node description, as discovered */
	int lid;          /* switch: its LID (port 0); CA: 0 (LIDs are per port) */
} topo_fabric_node;

/* One end of a cable. */
typedef struct topo_fabric_end {
	uint64_t guid;      /* node GUID */
	int port;           /* port number on that node */
	uint64_t port_guid; /* CA port GUID; 0 for switch ports or unknown */
	int lid;            /* CA port LID; 0 unknown */
} topo_fabric_end;

typedef struct topo_fabric_link {
	topo_fabric_end a, b;
	int width;          /* lanes */
	const char *speed;  /* "NDR", ... */
	topo_link_state state;
} topo_fabric_link;

typedef struct topo_fabric topo_fabric;

/* Start building into `g` (which the caller owns). `source` names the input
 * ("fabric.txt", "<ibnd>") for error reports. NULL on a bad host pattern
 * (err says why) or memory exhaustion. */
TOPOGNN_EXPORT topo_fabric *topo_fabric_new(topo_graph *g, const topo_fabric_opts *opts,
					    const char *source, topo_error *err);

/* Declare a node; `line` (0 if none) is where it was read, for errors.
 * Declaring the same GUID twice is an error. Returns 0 or -1. */
TOPOGNN_EXPORT int topo_fabric_add_node(topo_fabric *f, const topo_fabric_node *node, int line,
					topo_error *err);

/* Declare a cable between two declared nodes. The same cable seen from both
 * ends is recorded once. A port beyond a node's nports, or a port already
 * cabled elsewhere, is an error. Returns 0 or -1. */
TOPOGNN_EXPORT int topo_fabric_add_link(topo_fabric *f, const topo_fabric_link *link, int line,
					topo_error *err);

/* Create the graph's vertices and edges, record anomalies, infer switch
 * levels, rails and groups. Returns 0 or -1. */
TOPOGNN_EXPORT int topo_fabric_finish(topo_fabric *f, topo_error *err);

TOPOGNN_EXPORT void topo_fabric_free(topo_fabric *f);

#endif
