/*
 * topo_topology_conf: Slurm's topology.conf, read into a topo_graph and
 * written from one.
 *
 * Admins hand-write topology.conf today; topognn-discover writes it from the
 * discovered fabric instead, and reads an existing one so the rest of
 * topognn can work from it. Two syntaxes, as in Slurm 24.11 (keys are
 * case-insensitive, '#' starts a comment, a trailing '\' continues a line):
 *
 *   tree (topology/tree):
 *     SwitchName=s1 Nodes=n[01-16]          a leaf switch and its nodes
 *     SwitchName=s3 Switches=s[1-2]         a switch above other switches
 *     SwitchName=s3 Switches=s[1-2] LinkSpeed=100   (LinkSpeed optional)
 *   block (topology/block):
 *     BlockName=b1 Nodes=n[1-8]
 *     BlockSizes=8,16                       (on a line of its own, optional)
 *
 * What loading builds:
 *   - tree: one switch vertex per SwitchName. A switch with Nodes= (or with
 *     neither Nodes= nor Switches=) is a leaf; a switch above others gets its
 *     level from its height: 1 = spine, 2 or more = core. LinkSpeed is kept as
 *     the switch attribute "link_speed". Every node becomes a host vertex with
 *     a fabric edge host <-> leaf switch. topology.conf says nothing about
 *     HCAs, so these hosts have none: the fabric edge joins the host vertex
 *     itself to the switch, with port 0 at both ends and no rate. Each
 *     Switches= child gets a fabric edge child <-> parent, also port 0.
 *   - block: one group vertex per BlockName with member edges group -> host.
 *     BlockSizes, which Slurm keeps for the whole file, is stored on every
 *     group vertex as the attribute "block_sizes" ("8,16").
 *
 * Errors (file, line, sentence) for: unknown keys, a line with no SwitchName
 * or BlockName, a bad hostlist, a switch or block defined twice, a Switches=
 * reference to an undefined switch, a switch that is its own ancestor, a
 * switch with both Nodes= and Switches=, a node under two leaf switches or in
 * two blocks, tree and block lines in one file, BlockSizes that Slurm would
 * refuse (every size a power-of-two multiple of the first, the base block
 * size, at most 2^15 times it) and blocks smaller than the base block size.
 * The whole file is checked before anything is added to the graph, so on
 * error the graph is unchanged (except when memory runs out while adding).
 */
#ifndef TOPO_TOPOLOGY_CONF_H
#define TOPO_TOPOLOGY_CONF_H

#include "topognn_export.h"

#include <stddef.h>
#include <stdio.h>

#include "topo_error.h"
#include "topo_graph.h"

typedef enum topo_conf_mode {
	TOPO_CONF_TREE = 0, /* SwitchName lines, for topology/tree */
	TOPO_CONF_BLOCK     /* BlockName lines, for topology/block */
} topo_conf_mode;

/* Whether `name` can stand in topology.conf as a node, switch or block name:
 * not empty, and no blank, control character, ',', '[', ']', '"', '#' or
 * '\' (hostlist syntax, quoting, comments and line continuation). */
TOPOGNN_EXPORT int topo_topology_conf_name_ok(const char *name);

/* Largest topology.conf we read, in bytes. */
#define TOPO_TOPOLOGY_CONF_MAX_BYTES (64u << 20)

/* "tree" -> TOPO_CONF_TREE, "block" -> TOPO_CONF_BLOCK, else -1. */
TOPOGNN_EXPORT int topo_conf_mode_parse(const char *s);

/* Read the topology.conf at `path` into `g` (which may already hold vertices:
 * hosts and switches of the same name are reused). Returns 0, or -1 with err
 * holding the file and line. */
TOPOGNN_EXPORT int topo_load_topology_conf(topo_graph *g, const char *path, topo_error *err);

/* The same from memory: `text` holds `len` bytes (need not be NUL-terminated);
 * `source` names it in errors. */
TOPOGNN_EXPORT int topo_load_topology_conf_mem(topo_graph *g, const char *text, size_t len,
					       const char *source, topo_error *err);

/* Write the topology.conf an admin would otherwise write by hand for `g`:
 * a header comment naming topognn-discover and `source` (the input it was
 * discovered from), then one line per switch or block in a deterministic
 * order with compressed hostlists.
 *
 * A host's leaf switches are the switches cabled to it or to its HCAs.
 *   - tree: a host cabled to one leaf goes under that leaf. A host cabled to
 *     several leaves (one per rail, rail-optimized) fits under no single
 *     leaf, so it goes under its scalable unit: the group vertex that has it
 *     as a member becomes a pseudo-switch "SwitchName=<group> Nodes=<hosts>",
 *     standing for the group's rail leaves. Above that, each switch cabled to
 *     a listed leaf (or to a group's rail leaves) and of a higher level
 *     (spine, core; or, when some level is unknown, further from the hosts)
 *     gets "SwitchName=<switch> Switches=<children>", level by level.
 *     Switches with no host below them are left out. Ordered: the leaf level
 *     by name (natural order, n2 before n10), then each higher level.
 *   - block: one "BlockName=<group> Nodes=<hosts>" per group that has hosts,
 *     in natural name order (Slurm aggregates neighbouring lines into larger
 *     blocks); with no groups in the graph, one block per leaf switch. Then
 *     "BlockSizes=": the groups' "block_sizes" attribute when they all agree
 *     on one, otherwise base, 2*base, 4*base, ... up to the largest power of
 *     two not above the number of blocks, where base is the smallest block's
 *     host count (Slurm needs every block to hold at least base nodes).
 * Hosts with no leaf switch (tree) or no block are not listed; the header
 * says which. Returns 0, or -1 when a host cabled to several leaves is in no
 * group, a group and a switch share a name, or writing fails. */
TOPOGNN_EXPORT int topo_write_topology_conf(const topo_graph *g, FILE *out, topo_conf_mode mode,
			     const char *source, topo_error *err);

/* The same fabric as a Slurm 25.05+ topology.yaml: a list of two named
 * topologies, "tree" (cluster_default: true; the tree topology.conf's
 * switches as `switch`/`nodes`/`children` entries, without LinkSpeed, which
 * topology.yaml has no field for) and "block" (the block topology.conf's
 * blocks and block_sizes). A partition picks one with Topology=tree|block in
 * slurm.conf. Every string is double-quoted. Returns 0, or -1 as
 * topo_write_topology_conf (either topology failing fails the whole). */
int topo_write_topology_yaml(const topo_graph *g, FILE *out, const char *source, topo_error *err);

#endif
