/*****************************************************************************\
 *  topognn_map.c - the graph seen through Slurm's node table.
 *
 *  Loads the graph file, builds the placement engine over it, and maps
 *  Slurm node indexes to the engine's host indexes (by name). Groups and
 *  fabric switches become node bitmaps, which serve get_bitmap, whole_topo,
 *  get_fragmentation, split_hostlist and scontrol show topology. Slurm nodes
 *  the graph does not know are reported once and placed last.
\*****************************************************************************/

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/slurm_xlator.h"

#include "src/common/bitstring.h"
#include "src/common/hostlist.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "topo_json.h"
#include "topo_num.h"
#include "topognn.h"

static void _log_topo_error(const char *what, const topo_error *err)
{
	char buf[TOPO_ERROR_TEXT_LEN + TOPO_ERROR_SOURCE_LEN + 32];

	error("%s: %s", what,
	      topo_error_format(err, buf, sizeof(buf)));
}

/* Engine host index of a graph host vertex, -1 if none. */
static int _vertex_host(const topognn_ctx_t *ctx, int vid)
{
	const topo_vertex *v = topo_graph_vertex(ctx->graph, vid);

	if (!v)
		return -1;
	if (v->kind != TOPO_V_HOST) {
		if (v->host < 0)
			return -1;
		v = topo_graph_vertex(ctx->graph, v->host);
		if (!v || v->kind != TOPO_V_HOST)
			return -1;
	}
	return place_cluster_find_host(ctx->cluster, v->name);
}

static void _map_nodes(topognn_ctx_t *ctx)
{
	node_record_t *node_ptr;
	int unmapped = 0;

	ctx->node_cnt = node_record_count;
	ctx->node_host = xcalloc(MAX(node_record_count, 1), sizeof(int));
	ctx->unmapped_bitmap = bit_alloc(MAX(node_record_count, 1));
	for (int i = 0; i < node_record_count; i++)
		ctx->node_host[i] = -1;
	for (int h = 0; h < ctx->host_cnt; h++)
		ctx->host_node[h] = -1;

	for (int i = 0; (node_ptr = next_node(&i)); i++) {
		int h = place_cluster_find_host(ctx->cluster, node_ptr->name);

		if (h < 0) {
			bit_set(ctx->unmapped_bitmap, i);
			unmapped++;
			continue;
		}
		ctx->node_host[i] = h;
		ctx->host_node[h] = i;
	}
	if (unmapped) {
		char *names = bitmap2node_name(ctx->unmapped_bitmap);

		info("%d node(s) not in graph %s, placed last: %s",
		     unmapped, ctx->conf.graph_file, names);
		xfree(names);
	}
}

static void _map_groups(topognn_ctx_t *ctx)
{
	ctx->group_cnt = place_cluster_ngroups(ctx->cluster);
	ctx->group_name = xcalloc(MAX(ctx->group_cnt, 1), sizeof(char *));
	ctx->group_bitmap = xcalloc(MAX(ctx->group_cnt, 1), sizeof(bitstr_t *));
	for (int g = 0; g < ctx->group_cnt; g++) {
		ctx->group_name[g] =
			xstrdup(place_cluster_group_name(ctx->cluster, g));
		ctx->group_bitmap[g] = bit_alloc(MAX(ctx->node_cnt, 1));
	}
	for (int i = 0; i < ctx->node_cnt; i++) {
		int h = ctx->node_host[i];

		if (h >= 0)
			bit_set(ctx->group_bitmap[place_cluster_host_group(
					ctx->cluster, h)], i);
	}
}

static uint16_t _switch_level(topo_level level)
{
	switch (level) {
	case TOPO_LEVEL_LEAF:
		return 0;
	case TOPO_LEVEL_SPINE:
		return 1;
	case TOPO_LEVEL_CORE:
		return 2;
	default:
		return UINT16_MAX;
	}
}

/* Fabric switches: leaves get the Slurm nodes cabled to them, upper levels
 * the union of the switches one level below. */
/*
 * LinkSpeed as topology/tree prints it: the value topology.conf configured
 * (kept by topognn-discover as the switch attribute "link_speed"), else the
 * fastest cable's Gb/s from the graph, else tree's default of 1.
 */
static void _switch_speeds(topognn_ctx_t *ctx, const int *vid_sw)
{
	int nv = topo_graph_nvertices(ctx->graph);

	for (int v = 0; v < nv; v++) {
		const char *conf;
		uint64_t speed;
		int s = vid_sw[v];

		if (s < 0)
			continue;
		conf = topo_graph_get_attr(ctx->graph, v, "link_speed");
		if (conf && topo_parse_u64(conf, 10, UINT32_MAX, &speed) == 0)
			ctx->switch_speed[s] = (uint32_t)speed;
		if (!ctx->switch_speed[s])
			ctx->switch_speed[s] = 1;
	}
}

static void _map_switches(topognn_ctx_t *ctx)
{
	const topo_graph *g = ctx->graph;
	int nv = topo_graph_nvertices(g);
	int *vid_sw = xcalloc(MAX(nv, 1), sizeof(int));
	int cnt = 0;

	for (int v = 0; v < nv; v++) {
		const topo_vertex *vx = topo_graph_vertex(g, v);

		vid_sw[v] = -1;
		if (vx->kind == TOPO_V_SWITCH &&
		    _switch_level(vx->level) != UINT16_MAX)
			vid_sw[v] = cnt++;
	}
	ctx->switch_cnt = cnt;
	ctx->switch_name = xcalloc(MAX(cnt, 1), sizeof(char *));
	ctx->switch_level = xcalloc(MAX(cnt, 1), sizeof(uint16_t));
	ctx->switch_bitmap = xcalloc(MAX(cnt, 1), sizeof(bitstr_t *));
	ctx->switch_children = xcalloc(MAX(cnt, 1), sizeof(char *));
	ctx->switch_speed = xcalloc(MAX(cnt, 1), sizeof(uint32_t));

	for (int v = 0; v < nv; v++) {
		const topo_vertex *vx = topo_graph_vertex(g, v);
		int s = vid_sw[v];

		if (s < 0)
			continue;
		ctx->switch_name[s] = xstrdup(vx->name);
		ctx->switch_level[s] = _switch_level(vx->level);
		ctx->switch_bitmap[s] = bit_alloc(MAX(ctx->node_cnt, 1));
	}

	/* Leaves: hosts cabled below. Upper levels: children and speeds. */
	for (int lvl = 0; lvl <= 2; lvl++) {
		for (int v = 0; v < nv; v++) {
			int s = vid_sw[v], ninc;
			const int *inc;
			hostlist_t *children = NULL;

			if (s < 0 || ctx->switch_level[s] != lvl)
				continue;
			inc = topo_graph_incident(g, v, &ninc);
			for (int k = 0; k < ninc; k++) {
				const topo_edge *e = topo_graph_edge(g, inc[k]);
				int o, os, h, n;

				if (e->kind != TOPO_E_FABRIC)
					continue;
				o = topo_edge_other(e, v);
				if (e->gbps > ctx->switch_speed[s])
					ctx->switch_speed[s] = e->gbps;
				os = vid_sw[o];
				if (os >= 0 && ctx->switch_level[os] < lvl) {
					bit_or(ctx->switch_bitmap[s],
					       ctx->switch_bitmap[os]);
					if (!children)
						children = hostlist_create(NULL);
					hostlist_push_host(children,
							   ctx->switch_name[os]);
					continue;
				}
				if (lvl != 0)
					continue;
				h = _vertex_host(ctx, o);
				if (h >= 0 && (n = ctx->host_node[h]) >= 0)
					bit_set(ctx->switch_bitmap[s], n);
			}
			if (children) {
				hostlist_uniq(children);
				ctx->switch_children[s] =
					hostlist_ranged_string_xmalloc(children);
				hostlist_destroy(children);
			}
		}
	}
	_switch_speeds(ctx, vid_sw);
	xfree(vid_sw);
}

/*
 * SLURM_TOPOLOGY_ADDR as topology/tree builds it (its get_node_addr): one
 * field per switch level, from the graph's top level down to the leaves,
 * each the switches of that level above the node (a ranged list when
 * several, as rail leaves are), then the node; the pattern has "switch" per
 * level. The levels come from the graph alone (leaves cabled to the host or
 * its HCAs, then each level cabled to the one below), so slurmd, which has
 * no node maps, gives the same answer as slurmctld.
 */
extern bool topognn_node_addr(const topognn_ctx_t *ctx, const char *node,
			      char **addr, char **pattern)
{
	const topo_graph *g = ctx->graph;
	int nv = topo_graph_nvertices(g);
	int hv = topo_graph_find(g, TOPO_V_HOST, node);
	int top = -1;
	uint8_t *mark; /* 1 + level of a switch above the node, 0: none */

	if (hv < 0)
		return false;
	mark = xcalloc(MAX(nv, 1), sizeof(*mark));
	for (int v = 0; v < nv; v++) {
		const topo_vertex *vx = topo_graph_vertex(g, v);
		uint16_t lvl = _switch_level(vx->level);

		if (vx->kind == TOPO_V_SWITCH && lvl != UINT16_MAX)
			top = MAX(top, (int) lvl);
	}
	for (int lvl = 0; lvl <= top; lvl++) {
		for (int v = 0; v < nv; v++) {
			const topo_vertex *vx = topo_graph_vertex(g, v);
			const int *inc;
			int ninc;

			/* from the host and its parts up to the leaves; from
			 * level lvl-1 up to level lvl */
			if (lvl == 0 ? (v != hv && vx->host != hv) :
				       mark[v] != lvl)
				continue;
			inc = topo_graph_incident(g, v, &ninc);
			for (int k = 0; k < ninc; k++) {
				const topo_edge *e = topo_graph_edge(g, inc[k]);
				const topo_vertex *o;
				int ov;

				if (e->kind != TOPO_E_FABRIC)
					continue;
				ov = topo_edge_other(e, v);
				o = topo_graph_vertex(g, ov);
				if (o->kind == TOPO_V_SWITCH &&
				    _switch_level(o->level) == lvl)
					mark[ov] = lvl + 1;
			}
		}
	}
	*addr = xstrdup("");
	*pattern = xstrdup("");
	for (int lvl = top; lvl >= 0; lvl--) {
		hostlist_t *hl = hostlist_create(NULL);
		char *list;

		for (int v = 0; v < nv; v++)
			if (mark[v] == lvl + 1)
				hostlist_push_host(hl,
					topo_graph_vertex(g, v)->name);
		if (hostlist_count(hl)) {
			hostlist_sort(hl);
			list = hostlist_ranged_string_xmalloc(hl);
			xstrcat(*addr, list);
			xfree(list);
		}
		hostlist_destroy(hl);
		xstrcat(*addr, ".");
		xstrcat(*pattern, "switch.");
	}
	xstrcat(*addr, node);
	xstrcat(*pattern, "node");
	xfree(mark);
	return true;
}

extern void topognn_ctx_map_nodes(topognn_ctx_t *ctx)
{
	if (ctx->order)
		return;
	_map_nodes(ctx);
	_map_groups(ctx);
	_map_switches(ctx);
	ctx->order = xcalloc(MAX(ctx->node_cnt, 1), sizeof(int));
	ctx->group_used = xcalloc(ctx->group_cnt + 1, sizeof(uint8_t));
}

extern topognn_ctx_t *topognn_ctx_build(topognn_conf_t *conf, bool with_nodes)
{
	topognn_ctx_t *ctx = xmalloc(sizeof(*ctx));
	topo_error err;

	ctx->conf = *conf;
	memset(conf, 0, sizeof(*conf));

	if (!ctx->conf.graph_file) {
		error("%s: no GraphFile", ctx->conf.path);
		goto fail;
	}
	topo_error_clear(&err);
	if (!(ctx->graph = topo_graph_new())) {
		error("out of memory");
		goto fail;
	}
	if (topo_load_json(ctx->graph, ctx->conf.graph_file, &err)) {
		_log_topo_error("GraphFile", &err);
		goto fail;
	}
	if (!(ctx->cluster = place_cluster_new(ctx->graph, &err))) {
		_log_topo_error("graph", &err);
		goto fail;
	}
	ctx->host_cnt = place_cluster_nhosts(ctx->cluster);
	if (ctx->host_cnt <= 0) {
		error("%s: the graph has no hosts",
		      ctx->conf.graph_file);
		goto fail;
	}
	if (!(ctx->engine = place_engine_new(ctx->cluster, &ctx->conf.place, &err)) ||
	    place_gnn_register(ctx->engine, ctx->conf.model_file, &err) < 0) {
		_log_topo_error(ctx->conf.model_default ?
				"the shipped model (Policy=gnn, no ModelFile=)" :
				ctx->conf.model_file ? "ModelFile" : "engine",
				&err);
		goto fail;
	}
	if (!(ctx->state = place_state_new(ctx->cluster))) {
		error("out of memory");
		goto fail;
	}
	ctx->host_node = xcalloc(ctx->host_cnt, sizeof(int));
	ctx->allowed = xcalloc(ctx->host_cnt, sizeof(uint8_t));
	ctx->eligible = xcalloc(ctx->host_cnt, sizeof(uint8_t));
	ctx->required = xcalloc(ctx->host_cnt, sizeof(int));
	ctx->job_hosts = xcalloc(ctx->host_cnt, sizeof(int));
	ctx->host_flags_set = xcalloc(ctx->host_cnt, sizeof(unsigned));
	ctx->host_cpus_set = xcalloc(ctx->host_cnt, sizeof(int));
	ctx->host_gpus_set = xcalloc(ctx->host_cnt, sizeof(int));
	for (int h = 0; h < ctx->host_cnt; h++)
		ctx->host_flags_set[h] = ~0u;

	if (with_nodes)
		topognn_ctx_map_nodes(ctx);
	info("graph %s: %d hosts, %d groups, %d leaves; mode %s, policy %s%s%s%s",
	     ctx->conf.graph_file, ctx->host_cnt,
	     place_cluster_ngroups(ctx->cluster),
	     place_cluster_nleaves(ctx->cluster),
	     topognn_mode_name(ctx->conf.mode),
	     place_policy_name(ctx->conf.policy),
	     ctx->conf.model_file ? ", model " : "",
	     ctx->conf.model_file ? ctx->conf.model_file : "",
	     ctx->conf.model_default ? " (shipped default)" : "");
	return ctx;

fail:
	topognn_ctx_free(ctx);
	return NULL;
}

extern void topognn_ctx_free(topognn_ctx_t *ctx)
{
	if (!ctx)
		return;
	telemetry_feed_free(ctx->telem);	/* stops its thread first */
	ctx->telem = NULL;
	for (int g = 0; g < ctx->group_cnt; g++) {
		xfree(ctx->group_name[g]);
		FREE_NULL_BITMAP(ctx->group_bitmap[g]);
	}
	xfree(ctx->group_name);
	xfree(ctx->group_bitmap);
	for (int s = 0; s < ctx->switch_cnt; s++) {
		xfree(ctx->switch_name[s]);
		xfree(ctx->switch_children[s]);
		FREE_NULL_BITMAP(ctx->switch_bitmap[s]);
	}
	xfree(ctx->switch_name);
	xfree(ctx->switch_level);
	xfree(ctx->switch_bitmap);
	xfree(ctx->switch_children);
	xfree(ctx->switch_speed);
	xfree(ctx->node_host);
	xfree(ctx->host_node);
	FREE_NULL_BITMAP(ctx->unmapped_bitmap);
	xfree(ctx->allowed);
	xfree(ctx->eligible);
	xfree(ctx->required);
	xfree(ctx->job_hosts);
	xfree(ctx->host_flags_set);
	xfree(ctx->host_cpus_set);
	xfree(ctx->host_gpus_set);
	xfree(ctx->order);
	xfree(ctx->group_used);
	if (ctx->state)
		place_state_free(ctx->state);
	if (ctx->engine)
		place_engine_free(ctx->engine);
	if (ctx->cluster)
		place_cluster_free(ctx->cluster);
	if (ctx->graph)
		topo_graph_free(ctx->graph);
	topognn_conf_free(&ctx->conf);
	xfree(ctx);
}

extern int topognn_node_group(const topognn_ctx_t *ctx, int node_inx)
{
	int h;

	if (node_inx < 0 || node_inx >= ctx->node_cnt)
		return -1;
	if ((h = ctx->node_host[node_inx]) < 0)
		return -1;
	return place_cluster_host_group(ctx->cluster, h);
}

static const char *_level_kind(uint16_t level)
{
	return level == 0 ? "leaf" : level == 1 ? "spine" : "core";
}

extern topognn_topo_rec_t *topognn_topo_recs(const topognn_ctx_t *ctx,
					     uint32_t *count)
{
	topognn_topo_rec_t *recs;
	uint32_t n = 0;

	*count = 0;
	if (!ctx)
		return NULL;
	recs = xcalloc(ctx->group_cnt + ctx->switch_cnt + 1, sizeof(*recs));
	for (int g = 0; g < ctx->group_cnt; g++) {
		topognn_topo_rec_t *r = &recs[n++];
		hostlist_t *leaves = hostlist_create(NULL);

		r->name = xstrdup(ctx->group_name[g]);
		r->kind = xstrdup("group");
		r->level = 0;
		r->nodes = bitmap2node_name(ctx->group_bitmap[g]);
		for (int s = 0; s < ctx->switch_cnt; s++) {
			if (ctx->switch_level[s] == 0 &&
			    bit_overlap_any(ctx->switch_bitmap[s],
					    ctx->group_bitmap[g]))
				hostlist_push_host(leaves,
						   ctx->switch_name[s]);
		}
		if (hostlist_count(leaves))
			r->switches = hostlist_ranged_string_xmalloc(leaves);
		hostlist_destroy(leaves);
	}
	for (uint16_t lvl = 0; lvl <= 2; lvl++) {
		for (int s = 0; s < ctx->switch_cnt; s++) {
			topognn_topo_rec_t *r;

			if (ctx->switch_level[s] != lvl)
				continue;
			r = &recs[n++];
			r->name = xstrdup(ctx->switch_name[s]);
			r->kind = xstrdup(_level_kind(lvl));
			r->level = lvl;
			r->link_speed = ctx->switch_speed[s];
			r->nodes = bitmap2node_name(ctx->switch_bitmap[s]);
			r->switches = xstrdup(ctx->switch_children[s]);
		}
	}
	*count = n;
	return recs;
}
