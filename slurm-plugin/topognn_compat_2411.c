/*****************************************************************************\
 *  topognn_compat_2411.c - topology/topognn's entry points as Slurm 24.11
 *	calls them (src/interfaces/topology.c: no topology context, the
 *	topology_p_topology_* names), and topology/tree's switch table as
 *	24.11 keeps it (globals, read from the global topo_conf path).
 *
 *  Built instead of topognn_compat_tctx.c when configure finds a 24.11
 *  tree (slurm-plugin/Makefile.am, SLURM_API_2411). Only argument
 *  plumbing: the bodies are in topology_topognn.c.
\*****************************************************************************/

#include "src/common/slurm_xlator.h"

#include "src/plugins/topology/tree/eval_nodes_tree.h"

#include "topognn.h"

extern int topology_p_build_config(void)
{
	return topognn_p_build_config();
}

extern int topology_p_whole_topo(bitstr_t *node_mask)
{
	return topognn_p_whole_topo(node_mask);
}

extern bitstr_t *topology_p_get_bitmap(char *name)
{
	return topognn_p_get_bitmap(name);
}

extern bool topology_p_generate_node_ranking(void)
{
	return topognn_p_generate_node_ranking();
}

extern int topology_p_get_node_addr(char *node_name, char **paddr,
				    char **ppattern)
{
	return topognn_p_get_node_addr(node_name, paddr, ppattern);
}

extern int topology_p_split_hostlist(hostlist_t *hl, hostlist_t ***sp_hl,
				     int *count, uint16_t tree_width)
{
	return topognn_p_split_hostlist(hl, sp_hl, count, tree_width);
}

extern int topology_p_get(topology_data_t type, void *data)
{
	return topognn_p_get(type, data);
}

TOPOGNN_TOPOINFO_WRAPPERS(topology_p_topology_)

extern int topology_p_topology_print(void *topoinfo_ptr, char *nodes_list,
				     char **out)
{
	return topognn_p_topoinfo_print(topoinfo_ptr, nodes_list, NULL, out);
}

extern uint32_t topology_p_get_fragmentation(bitstr_t *node_mask)
{
	return topognn_p_get_fragmentation(node_mask);
}

/* 24.11's switch_record_validate() reads the file Slurm's global topo_conf
 * names: point it at ours for the call. */
extern bool topognn_compat_tree_load(char *topology_conf)
{
	char *saved = topo_conf;

	topo_conf = topology_conf;
	switch_record_validate();
	topo_conf = saved;
	return switch_record_cnt > 0;
}

extern void topognn_compat_tree_free(void)
{
	switch_record_table_destroy();
}

extern int topognn_compat_tree_eval(topology_eval_t *topo_eval)
{
	return eval_nodes_tree(topo_eval);
}

extern switch_record_t *topognn_compat_tree_table(int *count, int *levels)
{
	*count = switch_record_cnt;
	*levels = switch_levels;
	return switch_record_cnt ? switch_record_table : NULL;
}

/* 24.11's _subtree_split_hostlist walks only a switch's children. */
extern bool topognn_compat_tree_relay_top_leaf(void)
{
	return false;
}

/* No --segment before 25.05. */
extern uint16_t topognn_compat_segment(job_record_t *job_ptr)
{
	return 0;
}
