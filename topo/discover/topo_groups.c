/*
 * topo_groups: switch levels, scalable-unit groups and rails of a fabric
 * graph (see topo_groups.h for the rules).
 *
 * Plain BFS and union-find over the graph's incidence lists: the graph is
 * small enough (a 16k-host fabric has ~150k vertices) that no igraph copy is
 * worth making here.
 */
#include "topo_groups.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_num.h"
#include "topo_uf.h"

typedef struct ctx {
	topo_graph *g;
	int nv;
	int *uf;        /* union-find parent over vertex ids */
	int *group_of;  /* vertex -> group index (hosts and leaves), -1 */
	int *rail;      /* leaf vertex -> rail, -1 */
	const char **majority; /* leaf vertex -> most common HCA name on it */
	int ngroups;
	int **members;  /* per group: hosts then leaves, each sorted by name */
	int *nhosts, *nleaves;
} ctx;

/* ---- levels ------------------------------------------------------------- */

static int infer_levels(topo_graph *g, int nv)
{
	int *dist = malloc(((size_t)nv + 1) * sizeof(int)), *queue = malloc(((size_t)nv + 1) * sizeof(int));
	int head = 0, tail = 0;

	if (!dist || !queue) {
		free(dist);
		free(queue);
		return -1;
	}
	for (int v = 0; v < nv; v++) {
		topo_vertex *x = topo_graph_vertex_mut(g, v);
		const int *inc;
		int n;

		dist[v] = -1;
		if (x->kind != TOPO_V_SWITCH)
			continue;
		inc = topo_graph_incident(g, v, &n);
		for (int i = 0; i < n; i++) {
			const topo_edge *e = topo_graph_edge(g, inc[i]);

			if (e->kind == TOPO_E_FABRIC &&
			    topo_graph_vertex(g, topo_edge_other(e, v))->kind == TOPO_V_HCA)
				x->level = TOPO_LEVEL_LEAF;
		}
		if (x->level == TOPO_LEVEL_LEAF) {
			dist[v] = 0;
			queue[tail++] = v;
		}
	}
	while (head < tail) {
		int v = queue[head++], n;
		const int *inc = topo_graph_incident(g, v, &n);

		for (int i = 0; i < n; i++) {
			const topo_edge *e = topo_graph_edge(g, inc[i]);
			int w = topo_edge_other(e, v);

			if (e->kind != TOPO_E_FABRIC || !topo_graph_is_switch(g, w) || dist[w] >= 0)
				continue;
			dist[w] = dist[v] + 1;
			topo_graph_vertex_mut(g, w)->level =
				dist[w] == 1 ? TOPO_LEVEL_SPINE : TOPO_LEVEL_CORE;
			queue[tail++] = w;
		}
	}
	free(dist);
	free(queue);
	return 0;
}

/* ---- groups ------------------------------------------------------------- */

typedef struct vname {
	const char *name;
	int id;
} vname;

static int cmp_vname(const void *pa, const void *pb)
{
	return strcmp(((const vname *)pa)->name, ((const vname *)pb)->name);
}

/* Call fn(c, hca, leaf) for every cable from an HCA of `host` to a leaf. */
static void for_host_leaves(ctx *c, int host, void (*fn)(ctx *, int, int, void *), void *arg)
{
	int m;

	for (int it = 0, hca; (hca = topo_graph_next_member(c->g, host, TOPO_V_HCA, &it)) >= 0;) {
		const int *hinc = topo_graph_incident(c->g, hca, &m);

		for (int j = 0; j < m; j++) {
			const topo_edge *f = topo_graph_edge(c->g, hinc[j]);
			int w = topo_edge_other(f, hca);

			if (f->kind == TOPO_E_FABRIC && topo_graph_is_switch(c->g, w) &&
			    topo_graph_vertex(c->g, w)->level == TOPO_LEVEL_LEAF)
				fn(c, hca, w, arg);
		}
	}
}

static void join_leaf(ctx *c, int hca, int leaf, void *arg)
{
	int host = *(int *)arg;

	topo_uf_union(c->uf, host, leaf);
	c->group_of[host] = -2; /* marks "has a leaf" until groups are numbered */
}

/* Sorted vertex ids of one kind (and, for switches, leaves only). */
static vname *sorted_vertices(const topo_graph *g, int nv, topo_vkind kind, int *count)
{
	vname *out = malloc(((size_t)nv + 1) * sizeof(*out));
	int k = 0;

	if (!out)
		return NULL;
	for (int v = 0; v < nv; v++) {
		const topo_vertex *x = topo_graph_vertex(g, v);

		if (x->kind == kind && (kind != TOPO_V_SWITCH || x->level == TOPO_LEVEL_LEAF))
			out[k++] = (vname){ x->name, v };
	}
	qsort(out, k, sizeof(*out), cmp_vname);
	*count = k;
	return out;
}

static int find_groups(ctx *c)
{
	int nh, nl, rc = -1, *root_group = NULL, *fill = NULL;
	vname *hosts = sorted_vertices(c->g, c->nv, TOPO_V_HOST, &nh);
	vname *leaves = sorted_vertices(c->g, c->nv, TOPO_V_SWITCH, &nl);

	if (!hosts || !leaves)
		goto out;
	for (int i = 0; i < nh; i++)
		for_host_leaves(c, hosts[i].id, join_leaf, &hosts[i].id);
	root_group = malloc(((size_t)c->nv + 1) * sizeof(int));
	if (!root_group)
		goto out;
	for (int v = 0; v < c->nv; v++)
		root_group[v] = -1;
	/* a group per root that has a host with a leaf, numbered by first host */
	for (int i = 0; i < nh; i++) {
		int r = topo_uf_find(c->uf, hosts[i].id);

		if (c->group_of[hosts[i].id] != -2)
			continue; /* a host without any leaf */
		if (root_group[r] < 0)
			root_group[r] = c->ngroups++;
		c->group_of[hosts[i].id] = root_group[r];
	}
	for (int j = 0; j < nl; j++) {
		int r = topo_uf_find(c->uf, leaves[j].id);

		c->group_of[leaves[j].id] = root_group[r];
	}
	c->members = calloc((size_t)c->ngroups + 1, sizeof(*c->members));
	c->nhosts = calloc((size_t)c->ngroups + 1, sizeof(int));
	c->nleaves = calloc((size_t)c->ngroups + 1, sizeof(int));
	fill = calloc((size_t)c->ngroups + 1, sizeof(int));
	if (!c->members || !c->nhosts || !c->nleaves || !fill)
		goto out;
	for (int i = 0; i < nh; i++)
		if (c->group_of[hosts[i].id] >= 0)
			c->nhosts[c->group_of[hosts[i].id]]++;
	for (int j = 0; j < nl; j++)
		if (c->group_of[leaves[j].id] >= 0)
			c->nleaves[c->group_of[leaves[j].id]]++;
	for (int gi = 0; gi < c->ngroups; gi++) {
		c->members[gi] = malloc(((size_t)c->nhosts[gi] + c->nleaves[gi] + 1) * sizeof(int));
		if (!c->members[gi])
			goto out;
	}
	for (int i = 0; i < nh; i++) {
		int gi = c->group_of[hosts[i].id];

		if (gi >= 0)
			c->members[gi][fill[gi]++] = hosts[i].id;
	}
	for (int j = 0; j < nl; j++) {
		int gi = c->group_of[leaves[j].id];

		if (gi >= 0)
			c->members[gi][fill[gi]++] = leaves[j].id;
	}
	rc = 0;
out:
	free(hosts);
	free(leaves);
	free(root_group);
	free(fill);
	return rc;
}

static int add_group_vertices(ctx *c)
{
	for (int gi = 0; gi < c->ngroups; gi++) {
		char name[32];
		int id;

		snprintf(name, sizeof(name), "su%d", gi + 1);
		id = topo_graph_add_vertex(c->g, TOPO_V_GROUP, name);
		if (id < 0)
			return -1;
		for (int i = 0; i < c->nhosts[gi] + c->nleaves[gi]; i++)
			if (topo_graph_add_edge(c->g, TOPO_E_MEMBER, id, c->members[gi][i]) < 0)
				return -1;
	}
	return 0;
}

/* ---- rails -------------------------------------------------------------- */

/* The most common HCA name on a leaf (ties: the smaller name); NULL if none. */
static int leaf_majority(ctx *c, int leaf)
{
	int n, k = 0, best = 0;
	const int *inc = topo_graph_incident(c->g, leaf, &n);
	const char **names = malloc(((size_t)n + 1) * sizeof(*names));

	if (!names)
		return -1;
	for (int i = 0; i < n; i++) {
		const topo_edge *e = topo_graph_edge(c->g, inc[i]);
		const topo_vertex *h = topo_graph_vertex(c->g, topo_edge_other(e, leaf));

		if (e->kind == TOPO_E_FABRIC && h->kind == TOPO_V_HCA && h->device)
			names[k++] = h->device;
	}
	qsort(names, k, sizeof(*names), topo_cmp_str);
	c->majority[leaf] = NULL;
	for (int i = 0; i < k;) {
		int j = i + 1;

		while (j < k && strcmp(names[j], names[i]) == 0)
			j++;
		if (j - i > best) {
			best = j - i;
			c->majority[leaf] = names[i];
		}
		i = j;
	}
	free(names);
	return 0;
}

typedef struct vote {
	const char *name;
	int rail, count;
} vote;

typedef struct votes {
	vote *v;
	int n;
} votes;

static int vote_add(votes *vs, const char *name, int rail)
{
	vote *p;

	for (int i = 0; i < vs->n; i++)
		if (vs->v[i].rail == rail && strcmp(vs->v[i].name, name) == 0) {
			vs->v[i].count++;
			return 0;
		}
	p = realloc(vs->v, ((size_t)vs->n + 1) * sizeof(*p));
	if (!p)
		return -1;
	vs->v = p;
	vs->v[vs->n++] = (vote){ name, rail, 1 };
	return 0;
}

/* The rail most full groups give to leaves carrying `name`; -1 if none or tied. */
static int vote_rail(const votes *vs, const char *name)
{
	int best = -1, count = 0, tied = 0;

	for (int i = 0; name && i < vs->n; i++) {
		if (strcmp(vs->v[i].name, name) != 0)
			continue;
		if (vs->v[i].count > count) {
			best = vs->v[i].rail;
			count = vs->v[i].count;
			tied = 0;
		} else if (vs->v[i].count == count) {
			tied = 1;
		}
	}
	return tied ? -1 : best;
}

/* Rails of an incomplete group: by HCA name first, then free rails in order. */
static int place_short_group(ctx *c, int gi, const votes *vs, int nrails)
{
	const int *leaves = c->members[gi] + c->nhosts[gi];
	char *taken = calloc((size_t)nrails + 1, 1);

	if (!taken)
		return -1;
	for (int i = 0; i < c->nleaves[gi]; i++) {
		int r = vote_rail(vs, c->majority[leaves[i]]);

		if (r >= 0 && r < nrails && !taken[r]) {
			c->rail[leaves[i]] = r;
			taken[r] = 1;
		}
	}
	for (int i = 0, r = 0; i < c->nleaves[gi]; i++) {
		if (c->rail[leaves[i]] >= 0)
			continue;
		while (r < nrails && taken[r])
			r++;
		c->rail[leaves[i]] = r;
		taken[r] = 1;
	}
	free(taken);
	return 0;
}

static int infer_rails(ctx *c, votes *vs, int *nrails_out)
{
	int nrails = 0;

	for (int gi = 0; gi < c->ngroups; gi++)
		if (c->nleaves[gi] > nrails)
			nrails = c->nleaves[gi];
	for (int gi = 0; gi < c->ngroups; gi++) {
		const int *leaves = c->members[gi] + c->nhosts[gi];

		for (int i = 0; i < c->nleaves[gi]; i++)
			if (leaf_majority(c, leaves[i]) < 0)
				return -1;
		if (c->nleaves[gi] != nrails)
			continue;
		for (int i = 0; i < nrails; i++) {
			c->rail[leaves[i]] = i;
			if (c->majority[leaves[i]] && vote_add(vs, c->majority[leaves[i]], i) < 0)
				return -1;
		}
	}
	*nrails_out = nrails;
	return 0;
}

/* Anomaly texts need the group name; groups are "su<index+1>". */
static int report_missing_rails(ctx *c, int gi, int nrails, const votes *vs)
{
	const int *leaves = c->members[gi] + c->nhosts[gi];
	char subject[32];

	snprintf(subject, sizeof(subject), "su%d", gi + 1);
	for (int r = 0; r < nrails; r++) {
		int have = 0;
		const char *hca = NULL;

		for (int i = 0; i < c->nleaves[gi]; i++)
			have |= c->rail[leaves[i]] == r;
		if (have)
			continue;
		for (int i = 0, best = 0; i < vs->n; i++) /* the name most leaves of r carry */
			if (vs->v[i].rail == r && vote_rail(vs, vs->v[i].name) == r &&
			    (vs->v[i].count > best ||
			     (vs->v[i].count == best && strcmp(vs->v[i].name, hca) < 0))) {
				hca = vs->v[i].name;
				best = vs->v[i].count;
			}
		if (topo_graph_add_anomaly(c->g, "missing-rail", subject,
					   "group %s has no leaf switch on rail %d of %d%s%s%s; its %d hosts reach only %d rails",
					   subject, r, nrails, hca ? " (the rail of " : "",
					   hca ? hca : "", hca ? ")" : "", c->nhosts[gi],
					   c->nleaves[gi]) < 0)
			return -1;
	}
	return 0;
}

typedef struct hca_arg {
	const votes *vs;
	int gi;
	int err;
	char *seen; /* leaves this host reaches */
} hca_arg;

static void set_hca_rail(ctx *c, int hca, int leaf, void *arg)
{
	hca_arg *a = arg;
	topo_vertex *h = topo_graph_vertex_mut(c->g, hca);
	int lr = c->rail[leaf], vr;

	a->seen[leaf] = 1;
	if (h->rail < 0)
		h->rail = lr;
	vr = vote_rail(a->vs, h->device);
	if (lr >= 0 && vr >= 0 && vr != lr && c->majority[leaf] &&
	    strcmp(c->majority[leaf], h->device) != 0 &&
	    topo_graph_add_anomaly(c->g, "crossed-rail", h->name,
				   "%s (rail %d elsewhere) is cabled to leaf %s on rail %d, where su%d's other hosts use %s",
				   h->name, vr, topo_graph_vertex(c->g, leaf)->name, lr, a->gi + 1,
				   c->majority[leaf]) < 0)
		a->err = -1;
}

static int place_hcas(ctx *c, const votes *vs)
{
	char *seen = calloc((size_t)c->nv + 1, 1);

	if (!seen)
		return -1;
	for (int gi = 0; gi < c->ngroups; gi++) {
		const int *leaves = c->members[gi] + c->nhosts[gi];

		for (int i = 0; i < c->nleaves[gi]; i++)
			topo_graph_vertex_mut(c->g, leaves[i])->rail = c->rail[leaves[i]];
		for (int i = 0; i < c->nhosts[gi]; i++) {
			hca_arg a = { vs, gi, 0, seen };
			int host = c->members[gi][i], missing = 0;
			const char *first = NULL;

			for_host_leaves(c, host, set_hca_rail, &a);
			for (int j = 0; j < c->nleaves[gi]; j++) {
				if (!seen[leaves[j]] && !missing++)
					first = topo_graph_vertex(c->g, leaves[j])->name;
				seen[leaves[j]] = 0;
			}
			if (a.err < 0 ||
			    (missing &&
			     topo_graph_add_anomaly(c->g, "missing-hca", topo_graph_vertex(c->g, host)->name,
						    "host %s has no HCA on %d of the %d leaves of group su%d (first: %s)",
						    topo_graph_vertex(c->g, host)->name, missing,
						    c->nleaves[gi], gi + 1, first) < 0)) {
				free(seen);
				return -1;
			}
		}
	}
	free(seen);
	return 0;
}

static void ctx_free(ctx *c)
{
	for (int gi = 0; c->members && gi < c->ngroups; gi++)
		free(c->members[gi]);
	free(c->members);
	free(c->nhosts);
	free(c->nleaves);
	free(c->uf);
	free(c->group_of);
	free(c->rail);
	free(c->majority);
}

static int infer(ctx *c)
{
	votes vs = { NULL, 0 };
	int nrails = 0, rc = -1;

	if (infer_levels(c->g, c->nv) < 0 || find_groups(c) < 0)
		return -1;
	if (infer_rails(c, &vs, &nrails) < 0)
		goto out;
	for (int gi = 0; gi < c->ngroups; gi++)
		if (c->nleaves[gi] < nrails &&
		    (place_short_group(c, gi, &vs, nrails) < 0 ||
		     report_missing_rails(c, gi, nrails, &vs) < 0))
			goto out;
	if (place_hcas(c, &vs) < 0 || add_group_vertices(c) < 0)
		goto out;
	rc = 0;
out:
	free(vs.v);
	return rc;
}

int topo_infer_fabric_structure(topo_graph *g, topo_error *err)
{
	ctx c = { .g = g, .nv = (int)topo_graph_nvertices(g) };
	int rc = -1;

	c.uf = malloc(((size_t)c.nv + 1) * sizeof(int));
	c.group_of = malloc(((size_t)c.nv + 1) * sizeof(int));
	c.rail = malloc(((size_t)c.nv + 1) * sizeof(int));
	c.majority = calloc((size_t)c.nv + 1, sizeof(*c.majority));
	if (c.uf && c.group_of && c.rail && c.majority) {
		for (int v = 0; v < c.nv; v++) {
			c.uf[v] = v;
			c.group_of[v] = -1;
			c.rail[v] = -1;
		}
		rc = infer(&c);
	}
	ctx_free(&c);
	if (rc < 0)
		topo_error_set(err, NULL, 0, "out of memory while inferring levels, groups and rails");
	return rc;
}
