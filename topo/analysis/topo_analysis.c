/*
 * topo_analysis: fabric analytics over a topo_graph with igraph (see
 * topo_analysis.h for what is computed and why).
 *
 * Everything here works on compact numberings of the fabric vertices
 * (switches 0..S-1, leaves 0..L-1) built in one pass over the edges, so the
 * cost is linear in the size of the graph. The only superlinear structure,
 * the leaf x leaf table, is capped to a small number of leaves.
 */
#include "topo_analysis.h"
#include "topo_num.h"

#include <igraph.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TABLE_UNREACHABLE UINT16_MAX

struct topo_analysis_index {
	int nv;                 /* graph vertices when the index was built */
	unsigned char *is_host; /* nv flags */
	int *host_off;          /* nv + 1: leaves of vertex v are host_leaf[host_off[v]..host_off[v+1]) */
	int *host_leaf;         /* leaf numbers, sorted and distinct per host */
	int nswitches;
	int nleaves;
	int *leaf_switch;       /* nleaves: the leaf's switch number */
	igraph_adjlist_t adj;   /* switch graph, no loops, no multi-edges */
	int adj_ok;
	uint16_t *table;        /* nleaves x nleaves leaf distances, or NULL */
	/* BFS scratch for the two search sides, epoch-stamped so nothing is cleared per query */
	unsigned *seen[2];
	int *dist[2];
	int *queue[2];
	unsigned *epoch;
	size_t bytes;
};

/* ---- igraph guard: no abort, no printing while we call igraph ---- */

typedef struct igraph_guard {
	igraph_error_handler_t *err;
	igraph_warning_handler_t *warn;
} igraph_guard;

static void warning_ignore(const char *reason, const char *file, int line)
{
	(void)reason;
	(void)file;
	(void)line;
}

static void guard_begin(igraph_guard *gd)
{
	gd->err = igraph_set_error_handler(igraph_error_handler_ignore);
	gd->warn = igraph_set_warning_handler(warning_ignore);
}

static void guard_end(igraph_guard *gd)
{
	igraph_set_error_handler(gd->err);
	igraph_set_warning_handler(gd->warn);
}

/* ---- small helpers over the graph ---- */

/* A cable that carries traffic: a fabric edge not known to be down. */
static const topo_edge *live_cable(const topo_graph *g, int e)
{
	const topo_edge *ed = topo_graph_edge(g, e);

	if (!ed || ed->kind != TOPO_E_FABRIC || ed->state == TOPO_LINK_DOWN || ed->a == ed->b)
		return NULL;
	return ed;
}

static int is_kind(const topo_graph *g, int v, topo_vkind k)
{
	const topo_vertex *x = topo_graph_vertex(g, v);

	return x && x->kind == k;
}

/* The host owning v if v is an HCA of a host, else -1. */
static int hca_host(const topo_graph *g, int v)
{
	const topo_vertex *x = topo_graph_vertex(g, v);

	return x && x->kind == TOPO_V_HCA && is_kind(g, x->host, TOPO_V_HOST) ? x->host : -1;
}

/* ======================================================================
 * topo_analysis_run
 * ====================================================================== */

typedef struct analysis_ctx {
	topo_graph *g;
	int nv;
	char *has_hca;  /* per vertex: switch cabled to an HCA */
	char *is_leaf;  /* per vertex: switch counted as a leaf */
	double *down, *up;
	int *hca_off, *hca; /* HCAs per host, see index_host_hcas() */
} analysis_ctx;

static void mark_leaves(analysis_ctx *c, topo_analysis *out)
{
	int levels_known = 0;

	for (size_t e = 0; e < topo_graph_nedges(c->g); e++) {
		const topo_edge *ed = live_cable(c->g, (int)e);

		if (!ed)
			continue;
		if (is_kind(c->g, ed->a, TOPO_V_HCA) && is_kind(c->g, ed->b, TOPO_V_SWITCH))
			c->has_hca[ed->b] = 1;
		if (is_kind(c->g, ed->b, TOPO_V_HCA) && is_kind(c->g, ed->a, TOPO_V_SWITCH))
			c->has_hca[ed->a] = 1;
	}
	for (int v = 0; v < c->nv; v++) {
		const topo_vertex *x = topo_graph_vertex(c->g, v);

		if (x->kind != TOPO_V_SWITCH)
			continue;
		if (x->level == TOPO_LEVEL_UNKNOWN)
			out->unknown_level_switches++;
		else
			levels_known = 1;
	}
	for (int v = 0; v < c->nv; v++) {
		const topo_vertex *x = topo_graph_vertex(c->g, v);

		if (x->kind == TOPO_V_SWITCH)
			c->is_leaf[v] = levels_known ? x->level == TOPO_LEVEL_LEAF : c->has_hca[v];
	}
}

static int check_levels(analysis_ctx *c, topo_analysis *out)
{
	for (int v = 0; v < c->nv; v++) {
		const topo_vertex *x = topo_graph_vertex(c->g, v);

		if (x->kind != TOPO_V_SWITCH || !c->has_hca[v] || x->level == TOPO_LEVEL_UNKNOWN ||
		    x->level == TOPO_LEVEL_LEAF)
			continue;
		out->level_mismatches++;
		if (topo_graph_add_anomaly(c->g, "level-mismatch", x->name,
					   "switch %s is cabled to HCAs but its level is %s, not leaf",
					   x->name, topo_level_name(x->level)) < 0)
			return -1;
	}
	return 0;
}

static int set_gbps_attr(topo_graph *g, int v, const char *key, double value)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%g", value);
	return topo_graph_set_attr(g, v, key, buf);
}

static int measure_oversubscription(analysis_ctx *c, topo_analysis *out)
{
	int n = 0, with_up = 0;

	for (size_t e = 0; e < topo_graph_nedges(c->g); e++) {
		const topo_edge *ed = live_cable(c->g, (int)e);

		if (!ed)
			continue;
		for (int end = 0; end < 2; end++) {
			int s = end ? ed->b : ed->a, o = end ? ed->a : ed->b;

			if (!c->is_leaf[s])
				continue;
			if (is_kind(c->g, o, TOPO_V_HCA))
				c->down[s] += ed->gbps;
			else if (is_kind(c->g, o, TOPO_V_SWITCH) && !c->is_leaf[o])
				c->up[s] += ed->gbps;
		}
	}
	for (int v = 0; v < c->nv; v++)
		n += c->is_leaf[v];
	out->leaves = calloc(n ? n : 1, sizeof(*out->leaves));
	if (!out->leaves)
		return -1;
	for (int v = 0; v < c->nv; v++) {
		topo_leaf_oversub *l;

		if (!c->is_leaf[v])
			continue;
		l = &out->leaves[out->nleaves++];
		l->leaf = v;
		l->down_gbps = c->down[v];
		l->up_gbps = c->up[v];
		l->ratio = l->up_gbps > 0 ? l->down_gbps / l->up_gbps : 0;
		if (set_gbps_attr(c->g, v, "down_gbps", l->down_gbps) < 0 ||
		    set_gbps_attr(c->g, v, "up_gbps", l->up_gbps) < 0)
			return -1;
		if (l->up_gbps <= 0)
			continue;
		if (set_gbps_attr(c->g, v, "oversubscription", l->ratio) < 0)
			return -1;
		if (with_up++ == 0 || l->ratio < out->min_oversub)
			out->min_oversub = l->ratio;
		if (l->ratio > out->max_oversub)
			out->max_oversub = l->ratio;
	}
	return 0;
}

/* Fabric vertices: all switches and the HCAs with a live cable. Fills num[v]
 * (-1 for others) and the edge list in that numbering; returns the count. */
static int fabric_subgraph(const topo_graph *g, int *num, igraph_vector_int_t *edges)
{
	int nv = (int)topo_graph_nvertices(g), n = 0;

	for (int v = 0; v < nv; v++)
		num[v] = is_kind(g, v, TOPO_V_SWITCH) ? 0 : -1;
	for (size_t e = 0; e < topo_graph_nedges(g); e++) {
		const topo_edge *ed = live_cable(g, (int)e);

		if (!ed)
			continue;
		if (is_kind(g, ed->a, TOPO_V_HCA))
			num[ed->a] = 0;
		if (is_kind(g, ed->b, TOPO_V_HCA))
			num[ed->b] = 0;
	}
	for (int v = 0; v < nv; v++)
		if (num[v] == 0)
			num[v] = ++n; /* 1-based for now, to tell from -1 */
	for (int v = 0; v < nv; v++)
		if (num[v] > 0)
			num[v]--;
	for (size_t e = 0; e < topo_graph_nedges(g); e++) {
		const topo_edge *ed = live_cable(g, (int)e);

		if (!ed || num[ed->a] < 0 || num[ed->b] < 0)
			continue;
		if (igraph_vector_int_push_back(edges, num[ed->a]) != IGRAPH_SUCCESS ||
		    igraph_vector_int_push_back(edges, num[ed->b]) != IGRAPH_SUCCESS)
			return -1;
	}
	return n;
}

/* For each host, its HCAs: c->hca[c->hca_off[h]..c->hca_off[h+1]), over vertex ids. */
static int index_host_hcas(analysis_ctx *c)
{
	int *fill = calloc((size_t)c->nv + 1, sizeof(*fill));
	int h;

	c->hca_off = calloc((size_t)c->nv + 1, sizeof(int));
	if (!fill || !c->hca_off) {
		free(fill);
		return -1;
	}
	for (int v = 0; v < c->nv; v++)
		if ((h = hca_host(c->g, v)) >= 0)
			c->hca_off[h + 1]++;
	for (int v = 0; v < c->nv; v++)
		c->hca_off[v + 1] += c->hca_off[v];
	c->hca = malloc(((size_t)c->hca_off[c->nv] + 1) * sizeof(int));
	if (c->hca)
		for (int v = 0; v < c->nv; v++)
			if ((h = hca_host(c->g, v)) >= 0)
				c->hca[c->hca_off[h] + fill[h]++] = v;
	free(fill);
	return c->hca ? 0 : -1;
}

/* Hosts per component: a host counts once for each component one of its
 * cabled HCAs is in. Returns the component holding the most hosts (ties: the
 * larger component, then the lower id), or -1 when memory runs out. */
static int main_component(const analysis_ctx *c, const int *num, const igraph_vector_int_t *memb,
			  const igraph_vector_int_t *csize, int ncomp, int *hosts_in)
{
	int best = 0, *last = malloc((size_t)ncomp * sizeof(*last));

	if (!last)
		return -1;
	for (int k = 0; k < ncomp; k++)
		last[k] = -1;
	for (int h = 0; h < c->nv; h++)
		for (int i = c->hca_off[h]; i < c->hca_off[h + 1]; i++) {
			int v = c->hca[i], k;

			if (num[v] < 0)
				continue;
			k = (int)VECTOR(*memb)[num[v]];
			if (last[k] != h) {
				last[k] = h;
				hosts_in[k]++;
			}
		}
	free(last);
	for (int k = 1; k < ncomp; k++)
		if (hosts_in[k] > hosts_in[best] ||
		    (hosts_in[k] == hosts_in[best] && VECTOR(*csize)[k] > VECTOR(*csize)[best]))
			best = k;
	return best;
}

static int flag_disconnected(analysis_ctx *c, const int *num, const igraph_vector_int_t *memb,
			     int mainc, int main_hosts, topo_analysis *out)
{
	for (int h = 0; h < c->nv; h++) {
		int cabled = 0, in_main = 0;
		const char *name;

		for (int i = c->hca_off[h]; i < c->hca_off[h + 1]; i++) {
			int v = c->hca[i];

			if (num[v] < 0)
				continue;
			cabled = 1;
			in_main |= VECTOR(*memb)[num[v]] == mainc;
		}
		out->main_component_hosts += in_main;
		if (!cabled || in_main)
			continue;
		out->disconnected_hosts++;
		name = topo_graph_vertex(c->g, h)->name;
		if (topo_graph_add_anomaly(c->g, "disconnected-host", name,
					   "host %s is cabled to the fabric but has no path to its "
					   "main component (%d hosts)",
					   name, main_hosts) < 0)
			return -1;
	}
	return 0;
}

static int find_components(analysis_ctx *c, topo_analysis *out, topo_error *err)
{
	igraph_vector_int_t edges, memb, csize;
	igraph_integer_t ncomp = 0;
	igraph_t fg;
	int *num = malloc((size_t)c->nv * sizeof(*num) + 1), *hosts_in = NULL;
	int n, rc = -1, fg_ok = 0, mainc;

	igraph_vector_int_init(&edges, 0);
	igraph_vector_int_init(&memb, 0);
	igraph_vector_int_init(&csize, 0);
	if (!num || (n = fabric_subgraph(c->g, num, &edges)) < 0)
		goto oom;
	if (igraph_vector_int_size(&edges) == 0) { /* no cable: no fabric to judge */
		rc = 0;
		goto done;
	}
	if (igraph_create(&fg, &edges, n, IGRAPH_UNDIRECTED) != IGRAPH_SUCCESS)
		goto oom;
	fg_ok = 1;
	if (igraph_connected_components(&fg, &memb, &csize, &ncomp, IGRAPH_WEAK) != IGRAPH_SUCCESS)
		goto oom;
	out->components = (int)ncomp;
	hosts_in = calloc((size_t)ncomp, sizeof(*hosts_in));
	if (!hosts_in || (mainc = main_component(c, num, &memb, &csize, (int)ncomp, hosts_in)) < 0)
		goto oom;
	if (flag_disconnected(c, num, &memb, mainc, hosts_in[mainc], out) < 0)
		goto oom;
	rc = 0;
	goto done;
oom:
	topo_error_set(err, "", 0, "out of memory while finding the fabric's connected components");
done:
	if (fg_ok)
		igraph_destroy(&fg);
	igraph_vector_int_destroy(&edges);
	igraph_vector_int_destroy(&memb);
	igraph_vector_int_destroy(&csize);
	free(num);
	free(hosts_in);
	return rc;
}

void topo_analysis_free(topo_analysis *a)
{
	if (!a)
		return;
	free(a->leaves);
	a->leaves = NULL;
	a->nleaves = 0;
}

int topo_analysis_run_summary(topo_graph *g, topo_analysis *out, topo_error *err)
{
	analysis_ctx c = { .g = g, .nv = (int)topo_graph_nvertices(g) };
	topo_analysis local;
	igraph_guard gd;
	int rc = -1;

	topo_error_clear(err);
	if (!out)
		out = &local;
	memset(out, 0, sizeof(*out));
	c.has_hca = calloc((size_t)c.nv + 1, 1);
	c.is_leaf = calloc((size_t)c.nv + 1, 1);
	c.down = calloc((size_t)c.nv + 1, sizeof(double));
	c.up = calloc((size_t)c.nv + 1, sizeof(double));
	if (!c.has_hca || !c.is_leaf || !c.down || !c.up) {
		topo_error_set(err, "", 0, "out of memory while analysing the fabric");
		goto done;
	}
	if (index_host_hcas(&c) < 0) {
		topo_error_set(err, "", 0, "out of memory while analysing the fabric");
		goto done;
	}
	mark_leaves(&c, out);
	if (check_levels(&c, out) < 0 || measure_oversubscription(&c, out) < 0) {
		topo_error_set(err, "", 0, "out of memory while analysing the fabric");
		goto done;
	}
	guard_begin(&gd);
	rc = find_components(&c, out, err);
	guard_end(&gd);
done:
	free(c.has_hca);
	free(c.is_leaf);
	free(c.down);
	free(c.up);
	free(c.hca_off);
	free(c.hca);
	if (rc < 0 || out == &local)
		topo_analysis_free(out);
	return rc;
}

int topo_analysis_run(topo_graph *g, topo_error *err)
{
	return topo_analysis_run_summary(g, NULL, err);
}

/* ======================================================================
 * topo_analysis_index
 * ====================================================================== */

/* Number switches (sw[v], -1 for non-switches) and collect switch-switch cables. */
static int index_switches(topo_analysis_index *ix, const topo_graph *g, int *sw,
			  igraph_vector_int_t *edges)
{
	for (int v = 0; v < ix->nv; v++)
		sw[v] = is_kind(g, v, TOPO_V_SWITCH) ? ix->nswitches++ : -1;
	for (size_t e = 0; e < topo_graph_nedges(g); e++) {
		const topo_edge *ed = live_cable(g, (int)e);

		if (!ed || sw[ed->a] < 0 || sw[ed->b] < 0)
			continue;
		if (igraph_vector_int_push_back(edges, sw[ed->a]) != IGRAPH_SUCCESS ||
		    igraph_vector_int_push_back(edges, sw[ed->b]) != IGRAPH_SUCCESS)
			return -1;
	}
	return 0;
}

/* The (host, switch) end pairs of HCA cables: host of the HCA, switch number. */
static int cable_host_switch(const topo_graph *g, const int *sw, int e, int *host, int *s)
{
	const topo_edge *ed = live_cable(g, e);

	if (!ed)
		return 0;
	if ((*host = hca_host(g, ed->a)) >= 0 && sw[ed->b] >= 0) {
		*s = sw[ed->b];
		return 1;
	}
	if ((*host = hca_host(g, ed->b)) >= 0 && sw[ed->a] >= 0) {
		*s = sw[ed->a];
		return 1;
	}
	return 0;
}

/* Per host, its distinct leaves (CSR over vertex ids), and the leaf numbering. */
static int index_hosts(topo_analysis_index *ix, const topo_graph *g, const int *sw)
{
	int *leaf_of = malloc(((size_t)ix->nswitches + 1) * sizeof(*leaf_of));
	int *fill = calloc((size_t)ix->nv + 1, sizeof(*fill));
	size_t ne = topo_graph_nedges(g);
	int h, s, w = 0, rc = -1;

	ix->host_off = calloc((size_t)ix->nv + 1, sizeof(int));
	ix->is_host = calloc((size_t)ix->nv + 1, 1);
	if (!leaf_of || !fill || !ix->host_off || !ix->is_host)
		goto done;
	for (int v = 0; v < ix->nv; v++)
		ix->is_host[v] = is_kind(g, v, TOPO_V_HOST);
	for (int i = 0; i < ix->nswitches; i++)
		leaf_of[i] = -1;
	for (size_t e = 0; e < ne; e++) {
		if (!cable_host_switch(g, sw, (int)e, &h, &s))
			continue;
		ix->host_off[h + 1]++;
		if (leaf_of[s] < 0)
			leaf_of[s] = ix->nleaves++;
	}
	for (int v = 0; v < ix->nv; v++)
		ix->host_off[v + 1] += ix->host_off[v];
	ix->host_leaf = malloc(((size_t)ix->host_off[ix->nv] + 1) * sizeof(int));
	ix->leaf_switch = malloc(((size_t)ix->nleaves + 1) * sizeof(int));
	if (!ix->host_leaf || !ix->leaf_switch)
		goto done;
	for (int i = 0; i < ix->nswitches; i++)
		if (leaf_of[i] >= 0)
			ix->leaf_switch[leaf_of[i]] = i;
	for (size_t e = 0; e < ne; e++)
		if (cable_host_switch(g, sw, (int)e, &h, &s))
			ix->host_leaf[ix->host_off[h] + fill[h]++] = leaf_of[s];
	/* sort and deduplicate each host's leaves, compacting in place */
	for (int v = 0; v < ix->nv; v++) {
		int *l = &ix->host_leaf[ix->host_off[v]], n = ix->host_off[v + 1] - ix->host_off[v];

		qsort(l, (size_t)n, sizeof(*l), topo_cmp_int);
		ix->host_off[v] = w;
		for (int i = 0; i < n; i++)
			if (i == 0 || l[i] != l[i - 1])
				ix->host_leaf[w++] = l[i];
	}
	ix->host_off[ix->nv] = w;
	rc = 0;
done:
	free(leaf_of);
	free(fill);
	return rc;
}

/* The leaf x leaf table: one igraph BFS per leaf over the switch graph. */
static int index_table(topo_analysis_index *ix, const igraph_t *sg)
{
	igraph_vector_int_t leaves;
	igraph_matrix_t d;
	int L = ix->nleaves, rc = -1;

	if (igraph_vector_int_init(&leaves, L) != IGRAPH_SUCCESS)
		return -1;
	if (igraph_matrix_init(&d, 0, 0) != IGRAPH_SUCCESS) {
		igraph_vector_int_destroy(&leaves);
		return -1;
	}
	for (int i = 0; i < L; i++)
		VECTOR(leaves)[i] = ix->leaf_switch[i];
	if (igraph_distances(sg, &d, igraph_vss_vector(&leaves), igraph_vss_vector(&leaves),
			     IGRAPH_ALL) != IGRAPH_SUCCESS)
		goto done;
	ix->table = malloc((size_t)L * (size_t)L * sizeof(*ix->table));
	if (!ix->table)
		goto done;
	for (int i = 0; i < L; i++)
		for (int j = 0; j < L; j++) {
			igraph_real_t x = MATRIX(d, i, j);

			ix->table[(size_t)i * L + j] = x >= TABLE_UNREACHABLE ? TABLE_UNREACHABLE
									       : (uint16_t)x;
		}
	rc = 0;
done:
	igraph_matrix_destroy(&d);
	igraph_vector_int_destroy(&leaves);
	return rc;
}

static int index_scratch(topo_analysis_index *ix)
{
	size_t n = (size_t)ix->nswitches + 1;

	ix->epoch = calloc(1, sizeof(*ix->epoch));
	if (!ix->epoch)
		return -1;
	for (int s = 0; s < 2; s++) {
		ix->seen[s] = calloc(n, sizeof(unsigned));
		ix->dist[s] = malloc(n * sizeof(int));
		ix->queue[s] = malloc(n * sizeof(int));
		if (!ix->seen[s] || !ix->dist[s] || !ix->queue[s])
			return -1;
	}
	return 0;
}

static void index_count_bytes(topo_analysis_index *ix)
{
	size_t b = sizeof(*ix), L = (size_t)ix->nleaves, S = (size_t)ix->nswitches;

	b += (size_t)ix->nv * (1 + sizeof(int)) + sizeof(int);
	b += (size_t)ix->host_off[ix->nv] * sizeof(int);
	b += L * sizeof(int);
	if (ix->table)
		b += L * L * sizeof(*ix->table);
	b += 2 * (S + 1) * (sizeof(unsigned) + 2 * sizeof(int));
	for (int i = 0; ix->adj_ok && i < ix->nswitches; i++)
		b += sizeof(igraph_vector_int_t) +
		     (size_t)igraph_vector_int_capacity(igraph_adjlist_get(&ix->adj, i)) *
			     sizeof(igraph_integer_t);
	ix->bytes = b;
}

static int index_build(topo_analysis_index *ix, const topo_graph *g, int table_leaves)
{
	igraph_vector_int_t edges;
	igraph_t sg;
	int *sw = malloc(((size_t)ix->nv + 1) * sizeof(*sw));
	int rc = -1, sg_ok = 0;

	if (igraph_vector_int_init(&edges, 0) != IGRAPH_SUCCESS) {
		free(sw);
		return -1;
	}
	if (!sw || index_switches(ix, g, sw, &edges) < 0 || index_hosts(ix, g, sw) < 0)
		goto done;
	if (igraph_create(&sg, &edges, ix->nswitches, IGRAPH_UNDIRECTED) != IGRAPH_SUCCESS)
		goto done;
	sg_ok = 1;
	if (igraph_adjlist_init(&sg, &ix->adj, IGRAPH_ALL, IGRAPH_NO_LOOPS, IGRAPH_NO_MULTIPLE) !=
	    IGRAPH_SUCCESS)
		goto done;
	ix->adj_ok = 1;
	if (ix->nleaves > 0 && ix->nleaves <= table_leaves && index_table(ix, &sg) < 0)
		goto done;
	if (index_scratch(ix) < 0)
		goto done;
	index_count_bytes(ix);
	rc = 0;
done:
	if (sg_ok)
		igraph_destroy(&sg);
	igraph_vector_int_destroy(&edges);
	free(sw);
	return rc;
}

topo_analysis_index *topo_analysis_index_new_capped(const topo_graph *g, int table_leaves,
						topo_error *err)
{
	topo_analysis_index *ix = calloc(1, sizeof(*ix));
	igraph_guard gd;
	int rc;

	topo_error_clear(err);
	if (!ix) {
		topo_error_set(err, "", 0, "out of memory while indexing the fabric");
		return NULL;
	}
	ix->nv = (int)topo_graph_nvertices(g);
	guard_begin(&gd);
	rc = index_build(ix, g, table_leaves);
	guard_end(&gd);
	if (rc < 0) {
		topo_error_set(err, "", 0, "out of memory while indexing the fabric");
		topo_analysis_index_free(ix);
		return NULL;
	}
	return ix;
}

topo_analysis_index *topo_analysis_index_new(const topo_graph *g, topo_error *err)
{
	return topo_analysis_index_new_capped(g, TOPO_FABRIC_INDEX_TABLE_LEAVES, err);
}

void topo_analysis_index_free(topo_analysis_index *ix)
{
	if (!ix)
		return;
	if (ix->adj_ok)
		igraph_adjlist_destroy(&ix->adj);
	for (int s = 0; s < 2; s++) {
		free(ix->seen[s]);
		free(ix->dist[s]);
		free(ix->queue[s]);
	}
	free(ix->epoch);
	free(ix->table);
	free(ix->is_host);
	free(ix->host_off);
	free(ix->host_leaf);
	free(ix->leaf_switch);
	free(ix);
}

int topo_analysis_index_nleaves(const topo_analysis_index *ix) { return ix->nleaves; }
int topo_analysis_index_has_table(const topo_analysis_index *ix) { return ix->table != NULL; }
size_t topo_analysis_index_bytes(const topo_analysis_index *ix) { return ix->bytes; }

/* One BFS side: its queue holds the current level in [head, tail). */
typedef struct bfs_side {
	unsigned *seen;
	int *dist;
	int *q;
	int head, tail;
} bfs_side;

static unsigned next_epoch(const topo_analysis_index *ix)
{
	if (++*ix->epoch == 0) { /* wrapped: forget all stamps */
		memset(ix->seen[0], 0, ((size_t)ix->nswitches + 1) * sizeof(unsigned));
		memset(ix->seen[1], 0, ((size_t)ix->nswitches + 1) * sizeof(unsigned));
		*ix->epoch = 1;
	}
	return *ix->epoch;
}

static void side_start(const topo_analysis_index *ix, bfs_side *sd, int k, const int *leaves,
		       int n, unsigned ep)
{
	sd->seen = ix->seen[k];
	sd->dist = ix->dist[k];
	sd->q = ix->queue[k];
	sd->head = sd->tail = 0;
	for (int i = 0; i < n; i++) {
		int s = ix->leaf_switch[leaves[i]];

		if (sd->seen[s] == ep)
			continue;
		sd->seen[s] = ep;
		sd->dist[s] = 0;
		sd->q[sd->tail++] = s;
	}
}

/* Expand one whole level of `me`; returns the shortest meeting found, or -1.
 * Because no vertex was seen by both sides before, any meeting in this level
 * is a shortest path (standard bidirectional BFS argument). */
static int side_expand(const topo_analysis_index *ix, bfs_side *me, const bfs_side *other,
		       unsigned ep)
{
	int end = me->tail, best = -1;

	for (; me->head < end; me->head++) {
		int v = me->q[me->head];
		const igraph_vector_int_t *nb = igraph_adjlist_get(&ix->adj, v);
		igraph_integer_t deg = igraph_vector_int_size(nb);

		for (igraph_integer_t i = 0; i < deg; i++) {
			int u = (int)VECTOR(*nb)[i];

			if (me->seen[u] == ep)
				continue;
			me->seen[u] = ep;
			me->dist[u] = me->dist[v] + 1;
			me->q[me->tail++] = u;
			if (other->seen[u] == ep) {
				int d = me->dist[u] + other->dist[u];

				if (best < 0 || d < best)
					best = d;
			}
		}
	}
	return best;
}

/* Shortest switch-graph distance between any leaf of a and any leaf of b. */
static int leaf_distance_bfs(const topo_analysis_index *ix, const int *la, int na, const int *lb,
			     int nb)
{
	unsigned ep = next_epoch(ix);
	bfs_side A, B;

	side_start(ix, &A, 0, la, na, ep);
	side_start(ix, &B, 1, lb, nb, ep);
	for (int i = 0; i < B.tail; i++)
		if (A.seen[B.q[i]] == ep)
			return 0;
	while (A.head < A.tail && B.head < B.tail) {
		int d = (A.tail - A.head <= B.tail - B.head) ? side_expand(ix, &A, &B, ep)
							      : side_expand(ix, &B, &A, ep);

		if (d >= 0)
			return d;
	}
	return -1;
}

static int leaf_distance_table(const topo_analysis_index *ix, const int *la, int na, const int *lb,
			       int nb)
{
	int best = TABLE_UNREACHABLE;

	for (int i = 0; i < na; i++)
		for (int j = 0; j < nb; j++) {
			int d = ix->table[(size_t)la[i] * ix->nleaves + lb[j]];

			if (d < best)
				best = d;
		}
	return best == TABLE_UNREACHABLE ? -1 : best;
}

int topo_analysis_host_hops(const topo_analysis_index *ix, int host_a, int host_b)
{
	const int *la, *lb;
	int na, nb, d;

	if (!ix || host_a < 0 || host_b < 0 || host_a >= ix->nv || host_b >= ix->nv ||
	    !ix->is_host[host_a] || !ix->is_host[host_b])
		return -1;
	if (host_a == host_b)
		return 0;
	la = &ix->host_leaf[ix->host_off[host_a]];
	na = ix->host_off[host_a + 1] - ix->host_off[host_a];
	lb = &ix->host_leaf[ix->host_off[host_b]];
	nb = ix->host_off[host_b + 1] - ix->host_off[host_b];
	if (na == 0 || nb == 0)
		return -1;
	d = ix->table ? leaf_distance_table(ix, la, na, lb, nb)
		      : leaf_distance_bfs(ix, la, na, lb, nb);
	return d < 0 ? -1 : d + 2;
}
