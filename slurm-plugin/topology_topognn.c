/*****************************************************************************\
 *  topology_topognn.c - topology/topognn: topology-aware placement from a
 *	discovered fabric graph, for Slurm 24.11, 25.11 and 26.05 (the
 *	entry points each release calls are in topognn_compat_*.c).
 *
 *  slurm.conf:	TopologyPlugin=topology/topognn
 *		PrEpPlugins=prep/script,prep/topognn   (decision log, job plan)
 *  topognn.conf beside slurm.conf names the graph file (topognn-discover
 *  --json), the mode (enforce, shadow, off) and the rest; see topognn.conf(5).
 *
 *  Failure behaviour: a missing or invalid topognn.conf, graph or model is
 *  logged with file, line and reason and the plugin falls back to Slurm's
 *  generic selection (FatalOnError=yes makes it fatal instead). An
 *  evaluation the engine cannot serve falls back for that job only.
 *
 *  The plugin is also loaded by slurmd, slurmstepd and the client commands:
 *  there it only unpacks and prints topology and answers get_node_addr.
\*****************************************************************************/

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/slurm_xlator.h"

#include "slurm/slurm_errno.h"
#include "src/common/bitstring.h"
#include "src/common/hostlist.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/pack.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"

#include "src/plugins/topology/common/common_topo.h"

#include "topo_num.h"
#include "topognn.h"

const char plugin_name[] = "topology topognn plugin";
const char plugin_type[] = "topology/topognn";
const uint32_t plugin_id = 110; /* unused by Slurm (100-103 taken) */
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

topognn_ctx_t *topognn_ctx = NULL;
pthread_rwlock_t topognn_lock = PTHREAD_RWLOCK_INITIALIZER;

/* Outside slurmctld: graph-only context for get_node_addr, loaded once. */
static topognn_ctx_t *addr_ctx = NULL;
static bool addr_ctx_tried = false;
static pthread_mutex_t addr_ctx_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * slurmctld calls generate_node_ranking and then build_config while it reads
 * its configuration. The context the ranking loaded (NULL when that load
 * failed or Mode=off) is kept for the build_config that follows, so
 * topognn.conf and the graph are read once per configuration and each of
 * their problems is logged once.
 */
static topognn_ctx_t *ranked_ctx = NULL;
static bool ranked_loaded = false;
static pthread_mutex_t ranked_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct {
	uint32_t record_count;
	topognn_topo_rec_t *recs;
} topoinfo_topognn_t;

extern int init(void)
{
	verbose("%s loaded", plugin_name);
	topognn_runtime_init();
	return SLURM_SUCCESS;
}

extern void topognn_p_destroy_config(void)
{
	slurm_rwlock_wrlock(&topognn_lock);
	topognn_ctx_free(topognn_ctx);
	topognn_ctx = NULL;
	topognn_tree_free();
	slurm_rwlock_unlock(&topognn_lock);
}

/* fini() returns int before 25.05 and void since: Slurm ignores it. */
extern int fini(void)
{
	topognn_p_destroy_config();
	slurm_mutex_lock(&addr_ctx_lock);
	topognn_ctx_free(addr_ctx);
	addr_ctx = NULL;
	addr_ctx_tried = false;
	slurm_mutex_unlock(&addr_ctx_lock);
	slurm_mutex_lock(&ranked_lock);
	topognn_ctx_free(ranked_ctx);
	ranked_ctx = NULL;
	ranked_loaded = false;
	slurm_mutex_unlock(&ranked_lock);
	topognn_record_fini();
	topognn_shadow_fini();
	topognn_runtime_fini();
	topognn_queue_fini();
	return SLURM_SUCCESS;
}

/* Read topognn.conf and build a context; NULL (logged) on failure, fatal
 * when the admin asked for FatalOnError=yes. */
static topognn_ctx_t *_load(bool with_nodes)
{
	char *path = get_extra_conf_path("topognn.conf");
	topognn_conf_t conf;
	topognn_ctx_t *ctx = NULL;
	bool fatal_on_error;
	int rc;

	rc = topognn_conf_read(path, &conf);
	fatal_on_error = conf.fatal_on_error;
	if (rc == SLURM_SUCCESS && conf.mode == TOPOGNN_MODE_OFF) {
		/* Only the graph's switches are used: no model, no scoring. */
		xfree(conf.model_file);
		conf.model_default = false;
		conf.policy = PLACE_POLICY_MODEL;
		if (!conf.graph_file) {
			info("%s: Mode=off and no GraphFile=: Slurm's generic selection",
			     path);
			topognn_conf_free(&conf);
			xfree(path);
			return NULL;
		}
		info("%s: Mode=off: topology/tree's own evaluation on the graph's switches decides",
		     path);
	}
	if (rc == SLURM_SUCCESS) {
		ctx = topognn_ctx_build(&conf, with_nodes);
		rc = ctx ? SLURM_SUCCESS : SLURM_ERROR;
	} else {
		topognn_conf_free(&conf);
	}
	if (rc != SLURM_SUCCESS) {
		if (fatal_on_error && running_in_slurmctld())
			fatal("configuration error and FatalOnError=yes");
		error("falling back to Slurm's generic node selection");
	}
	xfree(path);
	return ctx;
}

/* The context generate_node_ranking loaded for this configuration, with
 * its node maps added now that the node table is sorted; else a new load. */
static topognn_ctx_t *_load_for_build(void)
{
	topognn_ctx_t *ctx = NULL;
	bool reuse;

	slurm_mutex_lock(&ranked_lock);
	if ((reuse = ranked_loaded)) {
		ctx = ranked_ctx;
		ranked_ctx = NULL;
		ranked_loaded = false;
	}
	slurm_mutex_unlock(&ranked_lock);
	if (!reuse)
		return _load(true);
	if (ctx)
		topognn_ctx_map_nodes(ctx);
	return ctx;
}

/*
 * TopologyParam options of Slurm's topology/tree and topology/block, said
 * once per configuration in slurmctld's log: what topognn does with each
 * (docs/slurm-plugin.md, parity table). RoutePart and the rest Slurm's
 * common code serves need no line.
 */
static void _log_topology_params(void)
{
	const char *tp = slurm_conf.topology_param;

	if (xstrcasestr(tp, "SwitchAsNodeRank"))
		info("TopologyParam=SwitchAsNodeRank: nodes ranked by their leaf (group of the graph), as topology/tree");
	if (xstrcasestr(tp, "RouteTree"))
		info("TopologyParam=RouteTree: messages split as topology/tree on the graph's switches");
	if (xstrcasestr(tp, "TopoOptional"))
		info("TopologyParam=TopoOptional: only jobs with --switches are placed by topology; others get Slurm's selection, as topology/tree");
	if (xstrcasestr(tp, "BlockAsNodeRank"))
		info("TopologyParam=BlockAsNodeRank ignored: it is topology/block's; topology/topognn ranks nodes by the graph (SwitchAsNodeRank: by leaf)");
	if (xstrcasestr(tp, "TopoMaxSizeUnroll"))
		info("TopologyParam=TopoMaxSizeUnroll ignored: Slurm applies it under topology/block only (job sizes are not unrolled)");
}

extern int topognn_p_build_config(void)
{
	topognn_ctx_t *ctx, *old;

	if (!running_in_slurmctld() || !node_record_count)
		return SLURM_SUCCESS;
	ctx = _load_for_build();
	_log_topology_params();
	if (ctx && ctx->conf.mode != TOPOGNN_MODE_OFF)
		topognn_telem_start(ctx);
	slurm_rwlock_wrlock(&topognn_lock);
	old = topognn_ctx;
	topognn_ctx = ctx;
	topognn_tree_build(ctx);
	slurm_rwlock_unlock(&topognn_lock);
	topognn_ctx_free(old);
	return SLURM_SUCCESS;
}

extern int topology_p_eval_nodes(topology_eval_t *topo_eval)
{
	int rc;

	slurm_rwlock_rdlock(&topognn_lock);
	rc = topognn_eval(topo_eval);
	slurm_rwlock_unlock(&topognn_lock);
	return rc;
}

/* --exclusive=topo: extend the mask to whole groups (the groups of the
 * graph: a leaf switch's nodes for a graph from topology.conf). */
extern int topognn_p_whole_topo(bitstr_t *node_mask)
{
	slurm_rwlock_rdlock(&topognn_lock);
	for (int g = 0; topognn_ctx && g < topognn_ctx->group_cnt; g++) {
		if (bit_overlap_any(topognn_ctx->group_bitmap[g], node_mask))
			bit_or(node_mask, topognn_ctx->group_bitmap[g]);
	}
	slurm_rwlock_unlock(&topognn_lock);
	return SLURM_SUCCESS;
}

/* Nodes of a group or fabric switch by name (do not free). */
extern bitstr_t *topognn_p_get_bitmap(char *name)
{
	bitstr_t *bm = NULL;
	topognn_ctx_t *ctx;

	slurm_rwlock_rdlock(&topognn_lock);
	if ((ctx = topognn_ctx)) {
		for (int g = 0; !bm && g < ctx->group_cnt; g++) {
			if (!xstrcmp(ctx->group_name[g], name))
				bm = ctx->group_bitmap[g];
		}
		for (int s = 0; !bm && s < ctx->switch_cnt; s++) {
			if (!xstrcmp(ctx->switch_name[s], name))
				bm = ctx->switch_bitmap[s];
		}
	}
	slurm_rwlock_unlock(&topognn_lock);
	return bm;
}

/*
 * TopologyParam=SwitchAsNodeRank, as topology/tree: every node of a leaf
 * (a group of the graph: one per leaf switch of a topology.conf) gets the
 * leaf's number, 1 up in the graph's order; nodes outside the graph keep
 * theirs. In every Mode, as tree ranks whatever selects the nodes.
 */
static bool _rank_by_leaf(topognn_ctx_t *ctx)
{
	node_record_t *node_ptr;

	for (int i = 0; (node_ptr = next_node(&i)); i++) {
		int h = place_cluster_find_host(ctx->cluster, node_ptr->name);
		int g = (h >= 0) ? place_cluster_host_group(ctx->cluster, h) :
				   -1;

		if (g < 0)
			continue;
		node_ptr->node_rank = g + 1;
		debug("node=%s rank=%d", node_ptr->name, g + 1);
	}
	return true;
}

/*
 * Rank nodes in the graph's host order (group by group), so that Slurm's
 * consecutive best fit, and anything else walking the node table, sees
 * groups as contiguous index ranges. Nodes the graph lacks rank last.
 */
extern bool topognn_p_generate_node_ranking(void)
{
	topognn_ctx_t *ctx;
	node_record_t *node_ptr;
	int unmapped = 0;

	if (!running_in_slurmctld())
		return false;
	ctx = _load(false);
	slurm_mutex_lock(&ranked_lock);
	topognn_ctx_free(ranked_ctx);
	ranked_ctx = ctx;	/* kept for build_config, see ranked_ctx */
	ranked_loaded = true;
	slurm_mutex_unlock(&ranked_lock);
	if (ctx && xstrcasestr(slurm_conf.topology_param, "SwitchAsNodeRank"))
		return _rank_by_leaf(ctx);
	/* Mode=off leaves the node order alone, as topology/tree does. */
	if (!ctx || ctx->conf.mode == TOPOGNN_MODE_OFF)
		return false;
	for (int i = 0; (node_ptr = next_node(&i)); i++) {
		int h = place_cluster_find_host(ctx->cluster, node_ptr->name);

		if (h >= 0) {
			node_ptr->node_rank = h + 1;
		} else {
			node_ptr->node_rank = ctx->host_cnt + 1 + i;
			unmapped++;
		}
	}
	debug("node ranking from graph order (%d nodes outside the graph last)",
	      unmapped);
	return true;
}

/* The context get_node_addr uses: slurmctld's, else a graph-only one. */
static topognn_ctx_t *_addr_ctx(void)
{
	if (running_in_slurmctld())
		return topognn_ctx;
	slurm_mutex_lock(&addr_ctx_lock);
	if (!addr_ctx_tried) {
		addr_ctx_tried = true;
		addr_ctx = _load(false);
	}
	slurm_mutex_unlock(&addr_ctx_lock);
	return addr_ctx;
}

/* topology/tree's address: every switch level above the node
 * (topognn_node_addr), e.g. "spine[1-2].leaf[1-2].n012". */
extern int topognn_p_get_node_addr(char *node_name, char **paddr,
				   char **ppattern)
{
	topognn_ctx_t *ctx;
	int rc = SLURM_ERROR;

	slurm_rwlock_rdlock(&topognn_lock);
	ctx = _addr_ctx();
	if (ctx && topognn_node_addr(ctx, node_name, paddr, ppattern))
		rc = SLURM_SUCCESS;
	slurm_rwlock_unlock(&topognn_lock);
	if (rc == SLURM_SUCCESS)
		return rc;
	return common_topo_get_node_addr(node_name, paddr, ppattern);
}

/*
 * Outside slurmctld (slurmd forwarding, srun, libslurm callers), the first
 * RouteTree split builds topology/tree's table for the graph once, as tree
 * builds its own there: the node table from slurm.conf if the process has
 * none, then the graph mapped onto it.
 */
static void _route_table_init(void)
{
	static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
	static bool done = false;
	topognn_ctx_t *ctx;

	slurm_mutex_lock(&init_lock);
	if (!done) {
		done = true;
		if (!node_record_count) {
			init_node_conf();
			build_all_nodeline_info(false, 0);
			rehash_node();
		}
		ctx = _load(true);
		slurm_rwlock_wrlock(&topognn_lock);
		topognn_tree_build(ctx);
		slurm_rwlock_unlock(&topognn_lock);
		topognn_ctx_free(ctx);
	}
	slurm_mutex_unlock(&init_lock);
}

/*
 * TopologyParam=RouteTree: topology/tree's split (topognn_tree_split) on
 * the switch table tree would build for the graph, in every process that
 * forwards, as tree; otherwise Slurm's TreeWidth split (and RoutePart).
 */
extern int topognn_p_split_hostlist(hostlist_t *hl, hostlist_t ***sp_hl,
				    int *count, uint16_t tree_width)
{
	slurmctld_lock_t node_read_lock = { .node = READ_LOCK };
	bool ctld = running_in_slurmctld();
	int depth;

	if (!common_topo_route_tree())
		return common_topo_split_hostlist_treewidth(hl, sp_hl, count,
							    tree_width);
	if (ctld)
		lock_slurmctld(node_read_lock);
	else
		_route_table_init();
	slurm_rwlock_rdlock(&topognn_lock);
	depth = topognn_tree_split(hl, sp_hl, count, tree_width);
	slurm_rwlock_unlock(&topognn_lock);
	if (ctld)
		unlock_slurmctld(node_read_lock);
	if (depth >= 0)
		return depth;
	return common_topo_split_hostlist_treewidth(hl, sp_hl, count,
						    tree_width);
}

extern int topognn_p_topoinfo_free(void *topoinfo_ptr)
{
	topoinfo_topognn_t *topoinfo = topoinfo_ptr;

	if (!topoinfo)
		return SLURM_SUCCESS;
	for (uint32_t i = 0; topoinfo->recs && i < topoinfo->record_count;
	     i++) {
		xfree(topoinfo->recs[i].name);
		xfree(topoinfo->recs[i].kind);
		xfree(topoinfo->recs[i].nodes);
		xfree(topoinfo->recs[i].switches);
	}
	xfree(topoinfo->recs);
	xfree(topoinfo);
	return SLURM_SUCCESS;
}

extern int topognn_p_get(topology_data_t type, void *data)
{
	switch (type) {
	case TOPO_DATA_TOPOLOGY_PTR:
	{
		dynamic_plugin_data_t **topoinfo_pptr = data;
		topoinfo_topognn_t *topoinfo = xmalloc(sizeof(*topoinfo));

		slurm_rwlock_rdlock(&topognn_lock);
		topoinfo->recs = topognn_topo_recs(topognn_ctx,
						   &topoinfo->record_count);
		slurm_rwlock_unlock(&topognn_lock);
		*topoinfo_pptr = xmalloc(sizeof(dynamic_plugin_data_t));
		(*topoinfo_pptr)->data = topoinfo;
		(*topoinfo_pptr)->plugin_id = plugin_id;
		return SLURM_SUCCESS;
	}
	case TOPO_DATA_REC_CNT:
	{
		int *rec_cnt = data;

		slurm_rwlock_rdlock(&topognn_lock);
		*rec_cnt = topognn_ctx ? topognn_ctx->group_cnt +
					 topognn_ctx->switch_cnt : 0;
		slurm_rwlock_unlock(&topognn_lock);
		return SLURM_SUCCESS;
	}
	case TOPO_DATA_EXCLUSIVE_TOPO:
	{
		int *exclusive_topo = data;

		/* --exclusive=topo keeps other jobs out of the job's groups
		 * (topognn_p_whole_topo), as topology/block its blocks. */
		*exclusive_topo = 1;
		return SLURM_SUCCESS;
	}
	default:
		error("unsupported get option %d", type);
		return SLURM_ERROR;
	}
}

extern int topognn_p_topoinfo_pack(void *topoinfo_ptr, buf_t *buffer,
				   uint16_t protocol_version)
{
	topoinfo_topognn_t *topoinfo = topoinfo_ptr;

	pack32(topoinfo->record_count, buffer);
	for (uint32_t i = 0; i < topoinfo->record_count; i++) {
		topognn_topo_rec_t *r = &topoinfo->recs[i];

		packstr(r->name, buffer);
		packstr(r->kind, buffer);
		pack16(r->level, buffer);
		pack32(r->link_speed, buffer);
		packstr(r->nodes, buffer);
		packstr(r->switches, buffer);
	}
	return SLURM_SUCCESS;
}

static void _print_rec(topognn_topo_rec_t *r, char **out)
{
	char *line = NULL, *pos = NULL, *env;
	int len;

	if (!xstrcmp(r->kind, "group")) {
		xstrfmtcatat(line, &pos, "GroupName=%s", r->name);
		if (r->nodes)
			xstrfmtcatat(line, &pos, " Nodes=%s", r->nodes);
		if (r->switches)
			xstrfmtcatat(line, &pos, " Leaves=%s", r->switches);
	} else {
		/* topology/tree's record, then the switch's kind: scripts
		 * matching tree's "SwitchName=X Level=" keep working. */
		xstrfmtcatat(line, &pos, "SwitchName=%s Level=%u LinkSpeed=%u",
			     r->name, r->level, r->link_speed);
		if (r->nodes)
			xstrfmtcatat(line, &pos, " Nodes=%s", r->nodes);
		if (r->switches)
			xstrfmtcatat(line, &pos, " Switches=%s", r->switches);
		xstrfmtcatat(line, &pos, " Kind=%s", r->kind);
	}
	/* topology/tree's SLURM_TOPO_LEN: cut each line to that many bytes */
	if ((env = getenv("SLURM_TOPO_LEN")) && topo_parse_int(env, 0, INT_MAX, &len) == 0)
		xstrfmtcat(*out, "%.*s\n", len, line);
	else
		xstrfmtcat(*out, "%s\n", line);
	xfree(line);
}

/*
 * The record named name: the switch when a group has the same name (a
 * graph converted from topology.conf names each group after its leaf, and
 * tree prints the switch).
 */
static topognn_topo_rec_t *_find_rec(topoinfo_topognn_t *topoinfo,
				     const char *name)
{
	topognn_topo_rec_t *group = NULL;

	for (uint32_t i = 0; i < topoinfo->record_count; i++) {
		topognn_topo_rec_t *r = &topoinfo->recs[i];

		if (xstrcmp(r->name, name))
			continue;
		if (xstrcmp(r->kind, "group"))
			return r;
		if (!group)
			group = r;
	}
	return group;
}

/*
 * scontrol show topology [NAME|NODES]: every record; the record named NAME;
 * else the records holding NODES. Since 25.05 scontrol may also pass a
 * unit (unit=NAME): only that record, and only if it holds NODES.
 */
extern int topognn_p_topoinfo_print(void *topoinfo_ptr, char *nodes_list,
				    char *unit, char **out)
{
	topoinfo_topognn_t *topoinfo = topoinfo_ptr;
	bool have_nodes = nodes_list && nodes_list[0];
	bool have_unit = unit && unit[0];
	topognn_topo_rec_t *named;
	int match_cnt = 0;

	*out = NULL;
	if (!have_nodes && !have_unit) {
		if (!topoinfo->record_count) {
			error("No topology information available");
			return SLURM_SUCCESS;
		}
		for (uint32_t i = 0; i < topoinfo->record_count; i++)
			_print_rec(&topoinfo->recs[i], out);
		return SLURM_SUCCESS;
	}
	if (!have_unit && (named = _find_rec(topoinfo, nodes_list))) {
		_print_rec(named, out);
		return SLURM_SUCCESS;
	}
	named = have_unit ? _find_rec(topoinfo, unit) : NULL;
	for (uint32_t i = 0; i < topoinfo->record_count; i++) {
		hostset_t *hs;
		int match;

		if (have_unit && &topoinfo->recs[i] != named)
			continue;
		if (have_nodes) {
			if (!topoinfo->recs[i].nodes || !topoinfo->recs[i].nodes[0])
				continue;
			if (!(hs = hostset_create(topoinfo->recs[i].nodes)))
				continue;
			match = hostset_within(hs, nodes_list);
			hostset_destroy(hs);
			if (!match)
				continue;
		}
		match_cnt++;
		_print_rec(&topoinfo->recs[i], out);
	}
	if (!match_cnt)
		error("Topology information contains no group or switch%s%s%s%s",
		      have_unit ? " named " : "", have_unit ? unit : "",
		      have_nodes ? " with nodes " : "",
		      have_nodes ? nodes_list : "");
	return SLURM_SUCCESS;
}

extern int topognn_p_topoinfo_unpack(void **topoinfo_pptr, buf_t *buffer,
				     uint16_t protocol_version)
{
	topoinfo_topognn_t *topoinfo = xmalloc(sizeof(*topoinfo));

	*topoinfo_pptr = topoinfo;
	safe_unpack32(&topoinfo->record_count, buffer);
	safe_xcalloc(topoinfo->recs, topoinfo->record_count,
		     sizeof(topognn_topo_rec_t));
	for (uint32_t i = 0; i < topoinfo->record_count; i++) {
		topognn_topo_rec_t *r = &topoinfo->recs[i];

		safe_unpackstr(&r->name, buffer);
		safe_unpackstr(&r->kind, buffer);
		safe_unpack16(&r->level, buffer);
		safe_unpack32(&r->link_speed, buffer);
		safe_unpackstr(&r->nodes, buffer);
		safe_unpackstr(&r->switches, buffer);
	}
	return SLURM_SUCCESS;

unpack_error:
	topognn_p_topoinfo_free(topoinfo);
	*topoinfo_pptr = NULL;
	return SLURM_ERROR;
}

/* Free hosts stranded outside whole free groups: they can only serve jobs
 * that span groups. node_mask holds the free nodes. */
extern uint32_t topognn_p_get_fragmentation(bitstr_t *node_mask)
{
	topognn_ctx_t *ctx;
	uint32_t frag = 0;

	slurm_rwlock_rdlock(&topognn_lock);
	if ((ctx = topognn_ctx) && bit_size(node_mask) == ctx->node_cnt) {
		for (int g = 0; g < ctx->group_cnt; g++) {
			int n = bit_overlap(ctx->group_bitmap[g], node_mask);

			if (n && n < bit_set_count(ctx->group_bitmap[g]))
				frag += n;
		}
		frag += bit_overlap(ctx->unmapped_bitmap, node_mask);
	}
	slurm_rwlock_unlock(&topognn_lock);
	return frag;
}

/* For prep/topognn (found with dlsym on this plugin's handle). */
extern int topognn_commit_job(job_record_t *job_ptr)
{
	return topognn_job_commit(job_ptr);
}

extern int topognn_end_job(job_record_t *job_ptr)
{
	return topognn_job_end(job_ptr);
}
