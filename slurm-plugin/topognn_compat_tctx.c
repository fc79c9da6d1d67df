/*****************************************************************************\
 *  topognn_compat_tctx.c - topology/topognn's entry points as Slurm 25.05
 *	and later call them (src/interfaces/topology.c: a topology_ctx_t or
 *	its plugin_ctx on most calls, topology_p_topoinfo_* names, dynamic
 *	node entry points), and topology/tree's switch table as those releases
 *	keep it (in a topology_ctx_t's plugin_ctx).
 *
 *  topology/topognn serves one topology: the one slurm.conf's
 *  TopologyPlugin names when topology.yaml is absent (topology.yaml can
 *  name only Slurm's own plugins, docs/admin-guide.md). Its state is the
 *  plugin's own (topognn_ctx), so the context Slurm passes is not needed.
 *
 *  Built instead of topognn_compat_2411.c for 25.11 and 26.05 trees
 *  (slurm-plugin/Makefile.am, SLURM_API_TCTX); 26.05's extra entry points
 *  are in topognn_compat_2605.c. Only argument plumbing: the bodies are in
 *  topology_topognn.c.
\*****************************************************************************/

#include "src/common/slurm_xlator.h"

#include "src/common/xmalloc.h"
#include "src/plugins/topology/tree/eval_nodes_tree.h"

#include "topognn.h"

/* --exclusive=topo: whole groups, as topology/block whole blocks
 * (topognn_p_whole_topo). */
const bool supports_exclusive_topo = true;

/*
 * Dynamic nodes (slurmd -Z --conf "Topology=..."): a node's place in the
 * fabric comes from the graph file, never from a topology string, so a
 * unit is refused with a clear message; without one there is nothing to
 * remove the node from.
 */
extern int topology_p_add_rm_node(node_record_t *node_ptr, char *unit,
				  topology_ctx_t *tctx)
{
	if (unit && unit[0]) {
		error("topology/topognn: node %s: a topology unit (%s) cannot be set for a node; its place comes from the graph file (topognn.conf GraphFile=)",
		      node_ptr->name, unit);
		return SLURM_ERROR;
	}
	return SLURM_SUCCESS;
}

extern int topology_p_build_config(topology_ctx_t *tctx)
{
	return topognn_p_build_config();
}

extern int topology_p_destroy_config(topology_ctx_t *tctx)
{
	topognn_p_destroy_config();
	return SLURM_SUCCESS;
}

extern int topology_p_whole_topo(bitstr_t *node_mask, void *tctx)
{
	return topognn_p_whole_topo(node_mask);
}

extern bitstr_t *topology_p_get_bitmap(char *name, void *tctx)
{
	return topognn_p_get_bitmap(name);
}

extern bool topology_p_generate_node_ranking(topology_ctx_t *tctx)
{
	return topognn_p_generate_node_ranking();
}

extern int topology_p_get_node_addr(char *node_name, char **paddr,
				    char **ppattern, void *tctx)
{
	return topognn_p_get_node_addr(node_name, paddr, ppattern);
}

extern int topology_p_split_hostlist(hostlist_t *hl, hostlist_t ***sp_hl,
				     int *count, uint16_t tree_width,
				     void *tctx)
{
	return topognn_p_split_hostlist(hl, sp_hl, count, tree_width);
}

extern int topology_p_get(topology_data_t type, void *data, void *tctx)
{
	return topognn_p_get(type, data);
}

TOPOGNN_TOPOINFO_WRAPPERS(topology_p_topoinfo_)

extern int topology_p_topoinfo_print(void *topoinfo_ptr, char *nodes_list,
				     char *unit, char **out)
{
	return topognn_p_topoinfo_print(topoinfo_ptr, nodes_list, unit, out);
}

/* topology/topognn keeps no per-job topology data (no --segment). */
extern void topology_p_jobinfo_free(void *topo_jobinfo)
{
}

extern void topology_p_jobinfo_pack(void *topo_jobinfo, buf_t *buffer,
				    uint16_t protocol_version)
{
}

extern int topology_p_jobinfo_unpack(void **topo_jobinfo, buf_t *buffer,
				     uint16_t protocol_version)
{
	return SLURM_SUCCESS;
}

extern int topology_p_jobinfo_get(topology_jobinfo_type_t type,
				  void *topo_jobinfo, void *data)
{
	return ESLURM_NOT_SUPPORTED;
}

extern uint32_t topology_p_get_fragmentation(bitstr_t *node_mask, void *tctx)
{
	return topognn_p_get_fragmentation(node_mask);
}

/* The node's topology string (dynamic nodes): none, see add_rm_node. */
extern void topology_p_get_topology_str(node_record_t *node_ptr,
					char **topology_str_ptr,
					topology_ctx_t *tctx)
{
}

/*
 * topology/tree's switch table for the fallback: a private context whose
 * topo_conf is the file topognn_tree.c wrote. eval_nodes_tree finds the
 * table through topo_eval->tctx, which is pointed at it for the call.
 */
static topology_ctx_t tree_tctx = { .name = "topognn-tree" };

extern bool topognn_compat_tree_load(char *topology_conf)
{
	tree_context_t *tree;

	topognn_compat_tree_free();
	tree_tctx.topo_conf = topology_conf;
	(void) switch_record_validate(&tree_tctx);
	tree_tctx.topo_conf = NULL;
	tree = tree_tctx.plugin_ctx;
	return tree && tree->switch_count > 0;
}

extern void topognn_compat_tree_free(void)
{
	if (tree_tctx.plugin_ctx) {
		switch_record_table_destroy(tree_tctx.plugin_ctx);
		xfree(tree_tctx.plugin_ctx);
	}
}

extern int topognn_compat_tree_eval(topology_eval_t *topo_eval)
{
	topology_ctx_t *saved = topo_eval->tctx;
	int rc;

	topo_eval->tctx = &tree_tctx;
	rc = eval_nodes_tree(topo_eval);
	topo_eval->tctx = saved;
	return rc;
}

extern switch_record_t *topognn_compat_tree_table(int *count, int *levels)
{
	tree_context_t *tree = tree_tctx.plugin_ctx;

	*count = tree ? tree->switch_count : 0;
	*levels = tree ? tree->switch_levels : 0;
	return *count ? tree->switch_table : NULL;
}

/* 26.05's _subtree_split_hostlist relays a top-level leaf's own nodes as one
 * list (_relay_switch_sublist); 25.11's walks only a switch's children. */
extern bool topognn_compat_tree_relay_top_leaf(void)
{
	return SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0);
}

extern uint16_t topognn_compat_segment(job_record_t *job_ptr)
{
	return job_ptr->details ? job_ptr->details->segment_size : 0;
}
