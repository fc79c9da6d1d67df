/*
 * topo_analysis: what the fabric of a topo_graph means for placement.
 *
 * Two things live here, both computed with igraph over the fabric part of the
 * graph (switches, HCAs and the cables between them; cables whose state is
 * TOPO_LINK_DOWN carry nothing and are ignored):
 *
 *  - topo_analysis_run(): a one-off pass that checks the switch levels the fabric
 *    builder inferred, measures each leaf's oversubscription (bandwidth down
 *    to HCAs vs up to other switches) and finds the fabric's connected
 *    components, flagging hosts cut off from the main one.
 *
 *  - topo_analysis_index: a compact index answering "how many cables apart are
 *    these two hosts?" fast enough to be asked thousands of times while
 *    scoring a placement, on fabrics of 16k hosts, without a dense host x host
 *    matrix. Hosts are reduced to the leaves their HCAs are cabled to; a host
 *    to host distance is 2 (the two HCA cables) plus the leaf to leaf distance,
 *    minimised over all pairs of the two hosts' leaves (i.e. over rails).
 *    Leaf to leaf distances come from a small precomputed table when there are
 *    few leaves, else from a bidirectional BFS over the switch graph per query,
 *    which on a fat tree meets after one or two levels: the cost of a query is
 *    a few switch degrees, not the size of the fabric.
 *
 * igraph is run with its error handler set to "ignore" for the duration of
 * each call (restored afterwards), so an igraph failure becomes a topo_error,
 * never an abort or a message. As igraph itself, not thread-safe.
 */
#ifndef TOPO_ANALYSIS_H
#define TOPO_ANALYSIS_H

#include <stddef.h>

#include "topo_error.h"
#include "topo_graph.h"

/* Leaves up to this count get a precomputed leaf x leaf distance table of
 * one byte per pair (128 leaves: 16 KiB); beyond it queries run a BFS. The
 * table costs one BFS per leaf to build, i.e. grows with the square of the
 * fabric, which is why it is capped. */
#define TOPO_FABRIC_INDEX_TABLE_LEAVES 128

/* Oversubscription of one leaf switch. */
typedef struct topo_leaf_oversub {
	int leaf;         /* switch vertex id */
	double down_gbps; /* sum over cables to HCAs */
	double up_gbps;   /* sum over cables to switches that are not leaves */
	double ratio;     /* down / up; 0 when the leaf has no up-link */
} topo_leaf_oversub;

/* Results of topo_analysis_run_summary(). */
typedef struct topo_analysis {
	int components;        /* connected components of the fabric subgraph; 0 if no cable */
	int main_component_hosts; /* hosts with a cable into the largest component */
	int disconnected_hosts;   /* hosts with cables, none into the main component */
	int unknown_level_switches; /* switches the builder left at TOPO_LEVEL_UNKNOWN */
	int level_mismatches;  /* switches cabled to HCAs whose level is known but not leaf */
	int nleaves;
	topo_leaf_oversub *leaves; /* nleaves entries, in vertex id order */
	double min_oversub, max_oversub; /* over leaves with an up-link; 0 if none */
} topo_analysis;

/* Analyse the fabric of g (see the file comment):
 *  - every leaf switch gets the attributes "down_gbps", "up_gbps" and (when it
 *    has an up-link) "oversubscription", printed with "%g" (e.g. "12800",
 *    "6400", "2"). Down counts the HCAs in the graph, so CAs the fabric
 *    builder did not turn into HCAs (unnamed, SHARP) are not counted.
 *    Leaves are the switches at TOPO_LEVEL_LEAF; when no switch
 *    has a known level, the switches cabled to an HCA. Leaf-to-leaf cables
 *    count neither up nor down;
 *  - a switch cabled to an HCA but at a known level other than leaf is
 *    recorded as anomaly "level-mismatch";
 *  - a host having fabric cables, none of them in the component holding the
 *    most hosts, is recorded as anomaly "disconnected-host" (hosts with no
 *    fabric cable at all, e.g. known only from hwloc, are not judged).
 * Fills `out` (may be NULL; free with topo_analysis_free()). Returns 0, or -1
 * with err set when memory runs out. Calling it twice adds the anomalies twice. */
int topo_analysis_run_summary(topo_graph *g, topo_analysis *out, topo_error *err);

/* topo_analysis_run_summary() without the summary. */
int topo_analysis_run(topo_graph *g, topo_error *err);

/* Free the arrays inside a summary (not the struct itself). */
void topo_analysis_free(topo_analysis *a);

typedef struct topo_analysis_index topo_analysis_index;

/* Build the hop-distance index of g's fabric (g may be freed afterwards: the
 * index keeps no pointer into it). Memory is linear in the fabric: per host
 * its distinct leaves, the switch graph's adjacency, a few ints of BFS scratch
 * per switch, one int per graph vertex, and the leaf table when there are at
 * most TOPO_FABRIC_INDEX_TABLE_LEAVES leaves. NULL with err set on failure. */
topo_analysis_index *topo_analysis_index_new(const topo_graph *g, topo_error *err);

/* As topo_analysis_index_new(), with the leaf-table cap given (0: never build
 * the table, always BFS). For tests and benchmarks comparing the two. */
topo_analysis_index *topo_analysis_index_new_capped(const topo_graph *g, int table_leaves,
						topo_error *err);

void topo_analysis_index_free(topo_analysis_index *ix);

/* Number of cables on the shortest fabric path between hosts host_a and
 * host_b (graph vertex ids of TOPO_V_HOST vertices), minimised over the
 * leaves of all their HCAs: 0 for the same host, 2 for two hosts under one
 * leaf, 4 for two hosts whose leaves share a spine. -1 when no path exists,
 * when either id is not a host, or when a (different) host has no cabled HCA.
 * Direct HCA-to-HCA cables are not paths. Allocates nothing; not thread-safe
 * (BFS scratch lives in the index): use one index per thread. */
int topo_analysis_host_hops(const topo_analysis_index *ix, int host_a, int host_b);

/* Number of leaves (switches cabled to at least one HCA) in the index, and
 * whether it holds the leaf x leaf table (1) or answers by BFS (0). */
int topo_analysis_index_nleaves(const topo_analysis_index *ix);
int topo_analysis_index_has_table(const topo_analysis_index *ix);

/* Bytes the index holds (its arrays, not igraph's internal overhead). */
size_t topo_analysis_index_bytes(const topo_analysis_index *ix);

#endif
