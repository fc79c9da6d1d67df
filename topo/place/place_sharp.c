/*
 * place_sharp: SHARP aggregation trees for placement.
 *
 * SHARP (Scalable Hierarchical Aggregation and Reduction Protocol) reduces
 * an all-reduce inside the switches: every leaf sums what its hosts send
 * and passes one reduced stream up the tree, the root sums those and sends
 * the result back down. NCCL uses it through CollNet, and only when every
 * switch of the tree has an aggregation node (TOPO_CAP_SHARP, found by
 * discovery from the "Aggregation Node" CAs).
 *
 * A root can serve a set of leaves when the leaves and the root have SHARP
 * and the root is the leaf itself (one leaf), a spine cabled to each of
 * them, or a core switch cabled to a SHARP spine above each of them. The
 * cluster keeps, per leaf, the roots that can serve it (ascending root
 * indices); a host set is eligible when, on every rail it uses, its leaves'
 * root lists share an entry. The candidate generator (place_candidates.c)
 * also uses the roots' leaves and the leaves' hosts.
 */
#include "place_internal.h"
#include "topo_num.h"

#include <stdlib.h>
#include <string.h>

static int is_sharp(const topo_graph *g, int v)
{
	return (topo_graph_vertex(g, v)->caps & TOPO_CAP_SHARP) != 0;
}

void place_cluster_free_sharp(place_cluster *c)
{
	free(c->leaf_root_off);
	free(c->leaf_roots);
	free(c->root_leaf_off);
	free(c->root_leaves);
	free(c->leaf_host_off);
	free(c->leaf_hosts);
	free(c->root_vid);
}

/* Append vertex v to out[0..*k) unless mark says it is there already. */
static void add_root(int v, int stamp, int *mark, int *out, int *k)
{
	if (mark[v] == stamp)
		return;
	mark[v] = stamp;
	out[(*k)++] = v;
}

/* Root switches (distinct vertex ids) that can serve leaf l: the leaf, its
 * SHARP spines and the SHARP cores above those. mark: per vertex, never
 * equal to l + 1 on entry for vertices not yet listed for l. */
static int leaf_root_vids(const place_cluster *c, int l, int *mark, int *out)
{
	int k = 0, stamp = l + 1;

	if (!is_sharp(c->g, c->leaf_vid[l]))
		return 0;
	add_root(c->leaf_vid[l], stamp, mark, out, &k);
	for (int i = c->leaf_spine_off[l]; i < c->leaf_spine_off[l + 1]; i++) {
		int s = c->leaf_spines[i], n;
		const int *inc;

		if (!is_sharp(c->g, s))
			continue;
		add_root(s, stamp, mark, out, &k);
		inc = topo_graph_incident(c->g, s, &n);
		for (int j = 0; j < n; j++) {
			const topo_edge *e = topo_graph_edge(c->g, inc[j]);
			int o = topo_edge_other(e, s);
			const topo_vertex *ov = topo_graph_vertex(c->g, o);

			if (e->kind == TOPO_E_FABRIC && e->state != TOPO_LINK_DOWN &&
			    ov->kind == TOPO_V_SWITCH && ov->level == TOPO_LEVEL_CORE &&
			    is_sharp(c->g, o))
				add_root(o, stamp, mark, out, &k);
		}
	}
	return k;
}

/* Leaves' hosts (CSR, any rail, ascending host index). */
static int build_leaf_hosts(place_cluster *c)
{
	int L = c->nleaves, R = c->nrails, *fill;

	c->leaf_host_off = calloc((size_t)L + 2, sizeof(int));
	if (!c->leaf_host_off)
		return -1;
	for (int h = 0; h < c->nhosts; h++)
		for (int r = 0; r < R; r++)
			if (c->host_leaf[h * R + r] >= 0 && c->host_leaf_first[h * R + r])
				c->leaf_host_off[c->host_leaf[h * R + r] + 1]++;
	for (int l = 0; l < L; l++)
		c->leaf_host_off[l + 1] += c->leaf_host_off[l];
	c->leaf_hosts = malloc(((size_t)c->leaf_host_off[L] + 1) * sizeof(int));
	fill = calloc((size_t)L + 1, sizeof(int));
	if (!c->leaf_hosts || !fill) {
		free(fill);
		return -1;
	}
	for (int h = 0; h < c->nhosts; h++)
		for (int r = 0; r < R; r++) {
			int l = c->host_leaf[h * R + r];

			if (l >= 0 && c->host_leaf_first[h * R + r])
				c->leaf_hosts[c->leaf_host_off[l] + fill[l]++] = h;
		}
	free(fill);
	return 0;
}

int place_cluster_build_sharp(place_cluster *c, topo_error *err)
{
	int L = c->nleaves, V = c->nvertices, *vids, *mark, *root_of, *fill = NULL;

	c->leaf_root_off = calloc((size_t)L + 2, sizeof(int));
	vids = malloc(((size_t)V + 1) * sizeof(int));
	mark = calloc((size_t)V + 1, sizeof(int));
	root_of = malloc(((size_t)V + 1) * sizeof(int));
	if (!c->leaf_root_off || !vids || !mark || !root_of || build_leaf_hosts(c) < 0)
		goto oom;
	for (int v = 0; v < V; v++)
		root_of[v] = -1;
	/* pass 1: root indices and per-leaf counts */
	for (int l = 0; l < L; l++) {
		int k = leaf_root_vids(c, l, mark, vids);

		for (int i = 0; i < k; i++)
			if (root_of[vids[i]] < 0)
				root_of[vids[i]] = c->nroots++;
		c->leaf_root_off[l + 1] = c->leaf_root_off[l] + k;
		c->has_sharp |= k > 0;
	}
	c->leaf_roots = malloc(((size_t)c->leaf_root_off[L] + 1) * sizeof(int));
	c->root_leaf_off = calloc((size_t)c->nroots + 2, sizeof(int));
	c->root_leaves = malloc(((size_t)c->leaf_root_off[L] + 1) * sizeof(int));
	c->root_vid = malloc(((size_t)c->nroots + 1) * sizeof(int));
	fill = calloc((size_t)c->nroots + 1, sizeof(int));
	if (!c->leaf_roots || !c->root_leaf_off || !c->root_leaves || !c->root_vid || !fill)
		goto oom;
	for (int v = 0; v < V; v++)
		if (root_of[v] >= 0)
			c->root_vid[root_of[v]] = v;
	/* pass 2: the lists, both ways (marks restart: stamps are l + 1 again) */
	memset(mark, 0, ((size_t)V + 1) * sizeof(int));
	for (int l = 0; l < L; l++) {
		int k = leaf_root_vids(c, l, mark, vids), at = c->leaf_root_off[l];

		for (int i = 0; i < k; i++) {
			c->leaf_roots[at + i] = root_of[vids[i]];
			c->root_leaf_off[root_of[vids[i]] + 1]++;
		}
		qsort(c->leaf_roots + at, (size_t)k, sizeof(int), topo_cmp_int);
	}
	for (int x = 0; x < c->nroots; x++)
		c->root_leaf_off[x + 1] += c->root_leaf_off[x];
	for (int l = 0; l < L; l++)
		for (int i = c->leaf_root_off[l]; i < c->leaf_root_off[l + 1]; i++) {
			int x = c->leaf_roots[i];

			c->root_leaves[c->root_leaf_off[x] + fill[x]++] = l;
		}
	free(fill);
	free(vids);
	free(mark);
	free(root_of);
	return 0;
oom:
	free(fill);
	free(vids);
	free(mark);
	free(root_of);
	topo_error_set(err, "", 0, "out of memory building the SHARP trees");
	return -1;
}

int place_cluster_has_sharp(const place_cluster *c)
{
	return c->has_sharp;
}

static int leaf_has_root(const place_cluster *c, int l, int x)
{
	int lo = c->leaf_root_off[l], hi = c->leaf_root_off[l + 1] - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2;

		if (c->leaf_roots[mid] == x)
			return 1;
		if (c->leaf_roots[mid] < x)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return 0;
}

/* The root (index) that serves every leaf the hosts use on rail r: -1 when
 * they use none, -2 when no root serves them all. */
static int rail_root(const place_cluster *c, const int *hosts, int n, int r)
{
	int R = c->nrails, l0 = -1;

	for (int i = 0; i < n && l0 < 0; i++)
		l0 = c->host_leaf[hosts[i] * R + r];
	if (l0 < 0)
		return -1;
	for (int k = c->leaf_root_off[l0]; k < c->leaf_root_off[l0 + 1]; k++) {
		int x = c->leaf_roots[k], ok = 1, last = l0;

		for (int i = 0; i < n && ok; i++) {
			int l = c->host_leaf[hosts[i] * R + r];

			if (l < 0 || l == last)
				continue;
			ok = leaf_has_root(c, l, x);
			last = l;
		}
		if (ok)
			return x;
	}
	return -2;
}

int place_cluster_sharp_eligible(const place_cluster *c, const int *hosts, int n)
{
	int used = 0;

	if (!c->has_sharp || n < 1)
		return 0;
	for (int r = 0; r < c->nrails; r++) {
		int x = rail_root(c, hosts, n, r);

		if (x == -2)
			return 0;
		used |= x >= 0;
	}
	return used;
}

int place_cluster_sharp_root(const place_cluster *c, const int *hosts, int n, int rail)
{
	int x;

	if (!c->has_sharp || n < 1 || rail < 0 || rail >= c->nrails)
		return -1;
	x = rail_root(c, hosts, n, rail);
	return x >= 0 ? c->root_vid[x] : -1;
}
