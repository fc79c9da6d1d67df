/*****************************************************************************\
 *  topognn_compat_2605.c - the entry points Slurm 26.05 added to the
 *	topology interface (src/interfaces/topology.c): per-node evaluation,
 *	the single-node fast path, and node ranks for step layout.
 *
 *  Built, with topognn_compat_tctx.c, for 26.05 trees (SLURM_API_2605).
\*****************************************************************************/

#include "src/common/slurm_xlator.h"

#include "src/common/bitstring.h"
#include "src/common/xmalloc.h"
#include "src/plugins/topology/common/common_topo.h"

#include "topognn.h"

/* Single-node jobs need no topology choice: Slurm's fast path, as tree. */
extern bool topology_p_allow_one_node(void *tctx)
{
	return true;
}

extern int topology_p_eval_node(topology_eval_t *topo_eval, int node_idx)
{
	return common_test_node(topo_eval, node_idx);
}

/*
 * Rank of each node of node_bitmap for step layout: its group (leaf) in the
 * graph's order, in the upper bits as topology/tree puts its leaf switch;
 * 0 for nodes outside the graph (and when no graph is loaded).
 */
extern int topology_p_get_rank(bitstr_t *node_bitmap, uint32_t **node_rank,
			       uint32_t *size, void *tctx)
{
	int count, k = 0;

	*node_rank = NULL;
	*size = 0;
	if (!node_bitmap || !(count = bit_set_count(node_bitmap)))
		return SLURM_SUCCESS;
	*node_rank = xcalloc(count, sizeof(**node_rank));
	*size = count;
	slurm_rwlock_rdlock(&topognn_lock);
	for (int i = 0; (i = bit_ffs_from_bit(node_bitmap, i)) >= 0; i++) {
		int g = topognn_ctx ? topognn_node_group(topognn_ctx, i) : -1;

		(*node_rank)[k++] = (g >= 0) ? ((uint32_t) g + 1)
						<< TOPO_RANK_ID_SHIFT : 0;
	}
	slurm_rwlock_unlock(&topognn_lock);
	return SLURM_SUCCESS;
}
