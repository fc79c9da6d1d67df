/*****************************************************************************\
 *  topognn_tree.c - Slurm's own topology/tree evaluation inside
 *	topology/topognn, so that the baseline is Slurm's tree itself.
 *
 *  Whenever topognn does not deviate from tree (it falls back, shadow mode,
 *  or its choice is the tree choice), the allocation must be exactly the
 *  one topology/tree would make from the same node map. Rather than
 *  imitate tree, the plugin compiles Slurm's tree sources
 *  (src/plugins/topology/tree/eval_nodes_tree.c and switch_record.c, see
 *  slurm_eval_nodes_tree.c, slurm_switch_record.c) and feeds them the
 *  topology.conf that `topognn-discover --topology-conf tree` writes for the
 *  same graph: one leaf switch per group (or per leaf switch, when every
 *  node hangs off exactly one leaf), each spine above the leaves it reaches,
 *  each core above its spines. Slurm's switch_record_validate() reads it
 *  from a private temporary file (topognn_compat_*.c: 24.11 swaps Slurm's
 *  topo_conf path for the call, 25.05+ passes a private topology_ctx_t), so
 *  the switch table, distances and descendant lists are built by Slurm's
 *  code too.
 *
 *  The file is written only from names Slurm itself gave its nodes, so
 *  nothing in it can make switch_record_validate() fail; a graph that maps
 *  no Slurm node builds no table and eval falls back to Slurm's generic
 *  selection, as before.
\*****************************************************************************/

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "src/common/slurm_xlator.h"

#include "src/common/bitstring.h"
#include "src/common/hostlist.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/interfaces/topology.h"
#include "src/slurmctld/slurmctld.h"

#include "topognn.h"

static bool tree_ready = false;

/* Leaf level: 1 when the level-0 switches partition the mapped nodes (each
 * node under exactly one), as topology.conf then lists them; 0: the groups
 * (rail-optimized hosts sit under several leaves). */
static bool _leaves_partition(const topognn_ctx_t *ctx)
{
	bitstr_t *seen = bit_alloc(MAX(ctx->node_cnt, 1));
	bool ok = true;
	int any = 0;

	for (int s = 0; s < ctx->switch_cnt && ok; s++) {
		if (ctx->switch_level[s] != 0)
			continue;
		if (bit_overlap_any(seen, ctx->switch_bitmap[s]))
			ok = false;
		bit_or(seen, ctx->switch_bitmap[s]);
		any++;
	}
	FREE_NULL_BITMAP(seen);
	return ok && any;
}

/* "SwitchName=NAME Nodes=..." or "... Switches=...": one line. */
static void _line(char **text, const char *name, const char *key, const char *list)
{
	xstrfmtcat(*text, "SwitchName=%s %s=%s\n", name, key, list);
}

/*
 * The topology.conf text for ctx's fabric; NULL when no Slurm node is under
 * a switch. Switch names: l<i>/g<i> (leaf level), s<i> (switch i of ctx)
 * keep every name valid and distinct whatever the graph calls them.
 */
static char *_tree_conf(const topognn_ctx_t *ctx)
{
	bool by_leaf = _leaves_partition(ctx);
	int nleaf = by_leaf ? ctx->switch_cnt : ctx->group_cnt, lines = 0;
	bitstr_t **leaf_bm = xcalloc(MAX(nleaf, 1), sizeof(bitstr_t *));
	char **leaf_name = xcalloc(MAX(nleaf, 1), sizeof(char *));
	char *text = NULL;

	for (int i = 0; i < nleaf; i++) {
		bitstr_t *bm = by_leaf ? (ctx->switch_level[i] == 0 ? ctx->switch_bitmap[i] : NULL)
				       : ctx->group_bitmap[i];
		char *nodes;

		if (!bm || !bit_set_count(bm))
			continue;
		leaf_bm[i] = bm;
		leaf_name[i] = xstrdup_printf("%c%d", by_leaf ? 'l' : 'g', i);
		nodes = bitmap2node_name(bm);
		_line(&text, leaf_name[i], "Nodes", nodes);
		xfree(nodes);
		lines++;
	}
	/* Upper levels: children = the level below that the switch reaches. */
	for (int lvl = 1; lines && lvl <= 2; lvl++) {
		for (int s = 0; s < ctx->switch_cnt; s++) {
			hostlist_t *hl;
			char *kids, name[32];

			if (ctx->switch_level[s] != lvl)
				continue;
			hl = hostlist_create(NULL);
			for (int i = 0; lvl == 1 && i < nleaf; i++)
				if (leaf_bm[i] && bit_overlap_any(leaf_bm[i], ctx->switch_bitmap[s]))
					hostlist_push_host(hl, leaf_name[i]);
			for (int o = 0; lvl == 2 && o < ctx->switch_cnt; o++)
				if (ctx->switch_level[o] == 1 &&
				    bit_overlap_any(ctx->switch_bitmap[o], ctx->switch_bitmap[s]) &&
				    bit_set_count(ctx->switch_bitmap[o])) {
					snprintf(name, sizeof(name), "s%d", o);
					hostlist_push_host(hl, name);
				}
			if (hostlist_count(hl)) {
				snprintf(name, sizeof(name), "s%d", s);
				kids = hostlist_ranged_string_xmalloc(hl);
				_line(&text, name, "Switches", kids);
				xfree(kids);
			}
			hostlist_destroy(hl);
		}
	}
	for (int i = 0; i < nleaf; i++)
		xfree(leaf_name[i]);
	xfree(leaf_name);
	xfree(leaf_bm);
	if (!lines)
		xfree(text);
	return text;
}

extern void topognn_tree_build(const topognn_ctx_t *ctx)
{
	char path[] = "/tmp/topognn-tree-XXXXXX", *text;
	int fd;
	FILE *f;

	tree_ready = false;
	topognn_compat_tree_free();
	if (!ctx || !(text = _tree_conf(ctx))) {
		info("topognn: no Slurm node under a switch of the graph: "
		     "Slurm's generic selection is the fallback");
		return;
	}
	if ((fd = mkstemp(path)) < 0 || !(f = fdopen(fd, "w"))) {
		error("topognn: cannot write the tree for the fallback (%s): %m", path);
		if (fd >= 0) {
			close(fd);
			unlink(path);
		}
		xfree(text);
		return;
	}
	fputs(text, f);
	if (fclose(f)) {
		error("topognn: cannot write the tree for the fallback (%s): %m", path);
	} else {
		debug("topognn: topology/tree's view of the graph:\n%s", text);
		tree_ready = topognn_compat_tree_load(path);
	}
	unlink(path);
	xfree(text);
}

extern void topognn_tree_free(void)
{
	tree_ready = false;
	topognn_compat_tree_free();
}

extern int topognn_tree_eval(topology_eval_t *topo_eval)
{
	if (!tree_ready)
		return ESLURM_NOT_SUPPORTED;
	return topognn_compat_tree_eval(topo_eval);
}

/*
 * The switch of table sublists: each child of parent (or, for a top-level
 * leaf where the release does so, parent itself) that holds nodes of the
 * message gets one list of them, and they leave nodes_bitmap. tree's
 * _subtree_split_hostlist (src/plugins/topology/tree/topology_tree.c).
 */
static void _subtree_split(switch_record_t *table, bitstr_t *nodes_bitmap,
			   int parent, int *msg_count, hostlist_t **sp_hl,
			   int *count)
{
	switch_record_t *sw = &table[parent];
	bitstr_t *fwd = bit_alloc(bit_size(nodes_bitmap));
	int lst_count = 0;
	bool self = !sw->num_switches && topognn_compat_tree_relay_top_leaf();

	for (int i = 0; i < (self ? 1 : sw->num_switches); i++) {
		int k = self ? parent : sw->switch_index[i], n;

		bit_copybits(fwd, table[k].node_bitmap);
		bit_and(fwd, nodes_bitmap);
		if (!(n = bit_set_count(fwd)))
			continue;
		sp_hl[(*count)++] = bitmap2hostlist(fwd);
		bit_and_not(nodes_bitmap, fwd);
		lst_count += n;
		if (lst_count == *msg_count)
			break;
	}
	*msg_count -= lst_count;
	FREE_NULL_BITMAP(fwd);
}

/* The lowest switches that together hold every node of the message: the
 * leaves holding some, each set of siblings replaced by their parent, level
 * by level (tree's loop); *depth gets the upper levels used added. */
static bitstr_t *_cover_switches(switch_record_t *table, int cnt, int levels,
				 bitstr_t *nodes_bitmap, uint16_t tree_width,
				 int *depth)
{
	bitstr_t *sw_bm = bit_alloc(cnt);
	int sw_count, upper = 0;

	*depth = 0;
	for (int j = 0; j < cnt; j++) {
		int n;

		if (table[j].level || !(n = bit_overlap(table[j].node_bitmap,
							nodes_bitmap)))
			continue;
		*depth = MAX(*depth, (int) ceil(log2(n * (tree_width - 1) + 1) /
						log2(tree_width)));
		bit_set(sw_bm, j);
	}
	sw_count = bit_set_count(sw_bm);
	for (int lvl = 1; lvl <= levels && sw_count >= 2; lvl++) {
		for (int j = 0; j < cnt && sw_count >= 2; j++) {
			int first = -1, kids = 0;

			if (table[j].level != lvl)
				continue;
			for (int k = 0; k < table[j].num_desc_switches; k++) {
				int d = table[j].switch_desc_index[k];

				if (!bit_test(sw_bm, d))
					continue;
				if (++kids > 1)
					bit_clear(sw_bm, d);
				else
					first = d;
			}
			if (kids > 1) {
				upper = MAX(upper, lvl);
				bit_clear(sw_bm, first);
				bit_set(sw_bm, j);
				sw_count -= kids - 1;
			}
		}
	}
	*depth += upper;
	return sw_bm;
}

extern int topognn_tree_split(hostlist_t *hl, hostlist_t ***sp_hl,
			      int *count, uint16_t tree_width)
{
	int cnt, levels, depth, msg_count, first;
	switch_record_t *table;
	bitstr_t *nodes_bitmap = NULL, *sw_bm;
	node_record_t *node_ptr;

	if (!tree_ready || !(table = topognn_compat_tree_table(&cnt, &levels)) ||
	    hostlist2bitmap(hl, false, &nodes_bitmap) != SLURM_SUCCESS) {
		FREE_NULL_BITMAP(nodes_bitmap);
		return -1;
	}
	if (!tree_width)
		tree_width = slurm_conf.tree_width;
	sw_bm = _cover_switches(table, cnt, levels, nodes_bitmap, tree_width,
				&depth);
	first = bit_ffs(sw_bm);
	if (bit_set_count(sw_bm) == 1 && !table[first].level &&
	    bit_super_set(nodes_bitmap, table[first].node_bitmap)) {
		/* One leaf holds them all: TreeWidth's split, as tree. */
		FREE_NULL_BITMAP(nodes_bitmap);
		FREE_NULL_BITMAP(sw_bm);
		return -1;
	}
	msg_count = hostlist_count(hl);
	*sp_hl = xcalloc(cnt + msg_count, sizeof(hostlist_t *));
	*count = 0;
	for (int j = first; j >= 0 && j < cnt; j++) {
		if (bit_test(sw_bm, j))
			_subtree_split(table, nodes_bitmap, j, &msg_count,
				       *sp_hl, count);
	}
	/* Nodes under no switch: a message each, as tree. */
	for (int j = 0; (node_ptr = next_node_bitmap(nodes_bitmap, &j)); j++) {
		(*sp_hl)[*count] = hostlist_create(NULL);
		hostlist_push_host((*sp_hl)[(*count)++], node_ptr->name);
	}
	FREE_NULL_BITMAP(nodes_bitmap);
	FREE_NULL_BITMAP(sw_bm);
	return depth;
}
