/*
 * place_cluster: the static view of a topo_graph that placement works on.
 *
 * Built once per graph: hosts ordered by group then name (this is also the
 * node ranking handed to Slurm), each host's group, its leaf switch on every
 * rail (found through its HCAs' fabric cables, or through a cable from the
 * host itself as in graphs read from topology.conf), the leaves' up-link
 * capacity and spines, and a group's up-links to a core level if any; then
 * the SHARP trees (place_sharp.c) and NVLink domains (place_domain.c).
 *
 * Groups: the graph's group vertices, in name order, then pseudo-groups for
 * hosts without one. When the graph has no groups at all (a topology.conf
 * without scalable units), each leaf switch's hosts form a pseudo-group named
 * after the leaf, so "best fit inside one group" still means something;
 * otherwise ungrouped hosts share one trailing pseudo-group "(ungrouped)".
 */
#include "place_internal.h"
#include "topo_num.h"

#include <stdlib.h>
#include <string.h>

#include "topo_nicrole.h"

typedef struct host_key {
	int vid;
	int pseudo;         /* 0: real group, 1: pseudo */
	const char *group;  /* group name (vertex name or pseudo name) */
	const char *name;
} host_key;

static int cmp_host_key(const void *pa, const void *pb)
{
	const host_key *a = pa, *b = pb;
	int d;

	if (a->pseudo != b->pseudo)
		return a->pseudo - b->pseudo;
	d = strcmp(a->group, b->group);
	return d ? d : strcmp(a->name, b->name);
}

static double edge_gbps(const topo_edge *e)
{
	return e->gbps > 0 ? e->gbps : PLACE_DEFAULT_LINK_GBPS;
}

/* The group vertex a host belongs to, or -1: its fabric group (scalable
 * unit), else its NVLink domain (a graph with NVLink domains only). */
static int host_group_vertex(const topo_graph *g, int h)
{
	int n, nvl = -1;
	const int *inc = topo_graph_incident(g, h, &n);

	for (int i = 0; i < n; i++) {
		const topo_edge *e = topo_graph_edge(g, inc[i]);

		if (e->kind != TOPO_E_MEMBER || e->b != h ||
		    topo_graph_vertex(g, e->a)->kind != TOPO_V_GROUP)
			continue;
		if (!topo_group_is_nvlink(g, e->a))
			return e->a;
		if (nvl < 0)
			nvl = e->a;
	}
	return nvl;
}

/* A port of host h (the host itself or one of its HCAs) and its switch. */
typedef struct host_port {
	int sw;        /* switch vertex */
	int rail;      /* declared rail or -1 */
	const char *name;
	double gbps;
} host_port;

static int fabric_switch_of(const topo_graph *g, int v, double *gbps)
{
	int n;
	const int *inc = topo_graph_incident(g, v, &n);

	for (int i = 0; i < n; i++) {
		const topo_edge *e = topo_graph_edge(g, inc[i]);
		int o;

		if (e->kind != TOPO_E_FABRIC || e->state == TOPO_LINK_DOWN)
			continue;
		o = topo_edge_other(e, v);
		if (topo_graph_vertex(g, o)->kind == TOPO_V_SWITCH) {
			*gbps = edge_gbps(e);
			return o;
		}
	}
	return -1;
}

static int cmp_port(const void *pa, const void *pb)
{
	const host_port *a = pa, *b = pb;

	if ((a->rail < 0) != (b->rail < 0))
		return a->rail < 0 ? 1 : -1;
	if (a->rail != b->rail)
		return a->rail - b->rail;
	return strcmp(a->name, b->name);
}

/* Collect the ports of host h, in rail order. Returns the count. */
static int host_ports(const topo_graph *g, int h, host_port *out, int cap)
{
	int n, k = 0;
	const int *inc = topo_graph_incident(g, h, &n);

	for (int i = 0; i < n && k < cap; i++) {
		const topo_edge *e = topo_graph_edge(g, inc[i]);
		double gbps = 0;
		int o = topo_edge_other(e, h), sw;
		const topo_vertex *ov = topo_graph_vertex(g, o);

		if (e->kind == TOPO_E_MEMBER && e->a == h && ov->kind == TOPO_V_HCA) {
			if (topo_nic_role_of(g, o) != TOPO_NIC_COMPUTE)
				continue; /* placement scores the compute fabric only */
			sw = fabric_switch_of(g, o, &gbps);
			if (sw < 0)
				continue;
			out[k++] = (host_port){ sw, ov->rail, ov->name, gbps };
		} else if (e->kind == TOPO_E_FABRIC && ov->kind == TOPO_V_SWITCH &&
			   e->state != TOPO_LINK_DOWN) {
			out[k++] = (host_port){ o, -1, ov->name, edge_gbps(e) };
		}
	}
	qsort(out, (size_t)k, sizeof(*out), cmp_port);
	return k;
}

void place_cluster_free(place_cluster *c)
{
	if (!c)
		return;
	free(c->host_vid);
	free(c->host_name);
	free(c->host_group);
	free(c->host_leaf);
	free(c->host_gbps);
	free(c->host_leaf_first);
	free(c->host_gpus);
	free(c->host_class);
	free(c->class_host);
	free(c->class_hops);
	if (c->group_name)
		for (int i = 0; i < c->ngroups; i++)
			free(c->group_name[i]);
	free(c->group_name);
	free(c->group_first);
	free(c->group_nhosts);
	free(c->group_up_gbps);
	free(c->leaf_vid);
	free(c->leaf_name);
	free(c->leaf_group);
	free(c->leaf_nhosts);
	free(c->leaf_up_gbps);
	free(c->leaf_spine_off);
	free(c->leaf_spines);
	free(c->vid_leaf);
	place_cluster_free_sharp(c);
	place_cluster_free_domains(c);
	free(c);
}

/* Pass 1: find leaves (switches any host port reaches) and rails. */
static int find_leaves(place_cluster *c, host_port *ports, int *nports_max)
{
	const topo_graph *g = c->g;
	int nl = 0;

	*nports_max = 0;
	for (int v = 0; v < c->nvertices; v++) {
		int k;

		if (topo_graph_vertex(g, v)->kind != TOPO_V_HOST)
			continue;
		k = host_ports(g, v, ports, PLACE_MAX_RAILS);
		for (int i = 0; i < k; i++) {
			int r = ports[i].rail >= 0 && ports[i].rail < PLACE_MAX_RAILS ? ports[i].rail : i;

			if (r + 1 > *nports_max)
				*nports_max = r + 1;
			if (c->vid_leaf[ports[i].sw] < 0)
				c->vid_leaf[ports[i].sw] = nl++;
		}
	}
	c->nleaves = nl;
	return 0;
}

typedef struct named_vid {
	int vid;
	const char *name;
} named_vid;

static int cmp_named_vid(const void *pa, const void *pb)
{
	return strcmp(((const named_vid *)pa)->name, ((const named_vid *)pb)->name);
}

static int build_leaves(place_cluster *c, topo_error *err)
{
	const topo_graph *g = c->g;
	int L = c->nleaves, k = 0, nsp = 0;

	c->leaf_vid = calloc((size_t)L + 1, sizeof(int));
	c->leaf_name = calloc((size_t)L + 1, sizeof(char *));
	c->leaf_group = calloc((size_t)L + 1, sizeof(int));
	c->leaf_nhosts = calloc((size_t)L + 1, sizeof(int));
	c->leaf_up_gbps = calloc((size_t)L + 1, sizeof(double));
	c->leaf_spine_off = calloc((size_t)L + 2, sizeof(int));
	if (!c->leaf_vid || !c->leaf_name || !c->leaf_group || !c->leaf_nhosts ||
	    !c->leaf_up_gbps || !c->leaf_spine_off)
		goto oom;
	{
		named_vid *nv = calloc((size_t)L + 1, sizeof(*nv));

		if (!nv)
			goto oom;
		for (int v = 0; v < c->nvertices; v++)
			if (c->vid_leaf[v] >= 0)
				nv[k++] = (named_vid){ v, topo_graph_vertex(g, v)->name };
		qsort(nv, (size_t)L, sizeof(*nv), cmp_named_vid);
		for (int l = 0; l < L; l++)
			c->leaf_vid[l] = nv[l].vid;
		free(nv);
	}
	for (int l = 0; l < L; l++) {
		int n;
		const int *inc = topo_graph_incident(g, c->leaf_vid[l], &n);

		c->vid_leaf[c->leaf_vid[l]] = l;
		c->leaf_name[l] = topo_graph_vertex(g, c->leaf_vid[l])->name;
		for (int i = 0; i < n; i++)
			nsp += topo_graph_edge(g, inc[i])->kind == TOPO_E_FABRIC;
	}
	c->leaf_spines = calloc((size_t)nsp + 1, sizeof(int));
	if (!c->leaf_spines)
		goto oom;
	/* up-links: fabric cables to switches that are not leaves */
	k = 0;
	for (int l = 0; l < L; l++) {
		int n, start = k;
		const int *inc = topo_graph_incident(g, c->leaf_vid[l], &n);

		c->leaf_spine_off[l] = k;
		for (int i = 0; i < n; i++) {
			const topo_edge *e = topo_graph_edge(g, inc[i]);
			int o = topo_edge_other(e, c->leaf_vid[l]), dup = 0;

			if (e->kind != TOPO_E_FABRIC || e->state == TOPO_LINK_DOWN ||
			    topo_graph_vertex(g, o)->kind != TOPO_V_SWITCH || c->vid_leaf[o] >= 0)
				continue;
			c->leaf_up_gbps[l] += edge_gbps(e);
			for (int j = start; j < k; j++)
				dup |= c->leaf_spines[j] == o;
			if (!dup)
				c->leaf_spines[k++] = o;
		}
		qsort(c->leaf_spines + start, (size_t)(k - start), sizeof(int), topo_cmp_int);
	}
	c->leaf_spine_off[L] = k;
	return 0;
oom:
	topo_error_set(err, "", 0, "out of memory building the placement cluster");
	return -1;
}

/* Groups: sort hosts by (pseudo, group name, host name). */
static int build_hosts(place_cluster *c, int any_group, host_port *ports, topo_error *err)
{
	const topo_graph *g = c->g;
	int N = c->nhosts, R = c->nrails, k = 0, ng = 0;
	host_key *keys = calloc((size_t)N + 1, sizeof(*keys));

	if (!keys)
		goto oom;
	for (int v = 0; v < c->nvertices; v++) {
		const topo_vertex *hv = topo_graph_vertex(g, v);
		int gv, np;

		if (hv->kind != TOPO_V_HOST)
			continue;
		keys[k].vid = v;
		keys[k].name = hv->name;
		gv = host_group_vertex(g, v);
		if (gv >= 0) {
			keys[k].group = topo_graph_vertex(g, gv)->name;
		} else if (!any_group && (np = host_ports(g, v, ports, PLACE_MAX_RAILS)) > 0) {
			keys[k].pseudo = 1;
			keys[k].group = topo_graph_vertex(g, ports[0].sw)->name;
		} else {
			keys[k].pseudo = 1;
			keys[k].group = any_group ? "(ungrouped)" : "(unconnected)";
		}
		k++;
	}
	qsort(keys, (size_t)N, sizeof(*keys), cmp_host_key);
	for (int i = 0; i < N; i++)
		ng += i == 0 || cmp_host_key(&(host_key){ 0, keys[i].pseudo, keys[i].group, "" },
					     &(host_key){ 0, keys[i - 1].pseudo, keys[i - 1].group, "" });
	c->ngroups = ng;
	c->group_name = calloc((size_t)ng + 1, sizeof(char *));
	c->group_first = calloc((size_t)ng + 1, sizeof(int));
	c->group_nhosts = calloc((size_t)ng + 1, sizeof(int));
	c->group_up_gbps = calloc((size_t)ng + 1, sizeof(double));
	if (!c->group_name || !c->group_first || !c->group_nhosts || !c->group_up_gbps)
		goto oom;
	ng = -1;
	for (int i = 0; i < N; i++) {
		int np;

		if (i == 0 || keys[i].pseudo != keys[i - 1].pseudo ||
		    strcmp(keys[i].group, keys[i - 1].group)) {
			ng++;
			c->group_name[ng] = strdup(keys[i].group);
			if (!c->group_name[ng])
				goto oom;
			c->group_first[ng] = i;
		}
		c->group_nhosts[ng]++;
		c->host_vid[i] = keys[i].vid;
		c->host_name[i] = keys[i].name;
		c->host_group[i] = ng;
		c->host_gpus[i] = topo_graph_count_members(g, keys[i].vid, TOPO_V_GPU);
		np = host_ports(g, keys[i].vid, ports, PLACE_MAX_RAILS);
		for (int p = 0; p < np; p++) {
			int r = ports[p].rail >= 0 && ports[p].rail < PLACE_MAX_RAILS ? ports[p].rail : p;

			if (r >= R || c->host_leaf[i * R + r] >= 0)
				continue;
			c->host_leaf[i * R + r] = c->vid_leaf[ports[p].sw];
			c->host_gbps[i * R + r] = ports[p].gbps;
		}
	}
	free(keys);
	return 0;
oom:
	free(keys);
	topo_error_set(err, "", 0, "out of memory building the placement cluster");
	return -1;
}

/* Leaf groups, host counts, classes, and group up-links to a core level. */
static int build_derived(place_cluster *c, topo_error *err)
{
	const topo_graph *g = c->g;
	int N = c->nhosts, R = c->nrails;

	for (int h = 0; h < N; h++)
		for (int r = 0; r < R; r++) {
			int l = c->host_leaf[h * R + r], first = l >= 0;

			for (int q = 0; q < r && first; q++)
				first = c->host_leaf[h * R + q] != l;
			c->host_leaf_first[h * R + r] = (uint8_t)first;
		}
	for (int l = 0; l < c->nleaves; l++)
		c->leaf_group[l] = -2;
	for (int h = 0; h < N; h++)
		for (int r = 0; r < R; r++) {
			int l = c->host_leaf[h * R + r];

			if (l < 0)
				continue;
			c->leaf_nhosts[l]++;
			if (c->leaf_group[l] == -2)
				c->leaf_group[l] = c->host_group[h];
			else if (c->leaf_group[l] != c->host_group[h])
				c->leaf_group[l] = -1;
		}
	for (int l = 0; l < c->nleaves; l++)
		if (c->leaf_group[l] == -2)
			c->leaf_group[l] = -1;
	/* classes: hosts with the same leaf vector (hosts are grouped, so a
	 * linear scan against the previous classes of the group suffices) */
	c->class_host = calloc((size_t)N + 1, sizeof(int));
	if (!c->class_host)
		goto oom;
	for (int h = 0; h < N; h++) {
		int found = -1;
		int first = c->group_first[c->host_group[h]];

		for (int k = c->nclasses - 1; k >= 0 && c->class_host[k] >= first; k--)
			if (!memcmp(c->host_leaf + c->class_host[k] * R, c->host_leaf + h * R,
				    (size_t)R * sizeof(int))) {
				found = k;
				break;
			}
		if (found < 0) {
			found = c->nclasses++;
			c->class_host[found] = h;
		}
		c->host_class[h] = found;
	}
	/* core: cables from a spine to a switch that is neither leaf nor spine */
	for (int l = 0; l < c->nleaves; l++) {
		for (int i = c->leaf_spine_off[l]; i < c->leaf_spine_off[l + 1]; i++) {
			int s = c->leaf_spines[i], n;
			const int *inc = topo_graph_incident(g, s, &n);

			for (int j = 0; j < n; j++) {
				const topo_edge *e = topo_graph_edge(g, inc[j]);
				int o = topo_edge_other(e, s);
				const topo_vertex *ov = topo_graph_vertex(g, o);

				if (e->kind != TOPO_E_FABRIC || ov->kind != TOPO_V_SWITCH ||
				    c->vid_leaf[o] >= 0)
					continue;
				c->has_core |= ov->level == TOPO_LEVEL_CORE;
			}
		}
	}
	if (c->has_core) {
		/* a spine counts for a group when all leaves below it are in it;
		 * each spine's core cables are counted once */
		uint8_t *seen = calloc((size_t)c->nvertices + 1, 1);

		if (!seen)
			goto oom;
		for (int l = 0; l < c->nleaves; l++) {
			int grp = c->leaf_group[l];

			for (int i = c->leaf_spine_off[l]; grp >= 0 && i < c->leaf_spine_off[l + 1]; i++) {
				int s = c->leaf_spines[i], n, own = 1;
				const int *inc = topo_graph_incident(g, s, &n);

				if (seen[s])
					continue;
				seen[s] = 1;
				for (int j = 0; j < n; j++) {
					const topo_edge *e = topo_graph_edge(g, inc[j]);
					int o = topo_edge_other(e, s);

					if (e->kind == TOPO_E_FABRIC && c->vid_leaf[o] >= 0 &&
					    c->leaf_group[c->vid_leaf[o]] != grp)
						own = 0;
				}
				for (int j = 0; own && j < n; j++) {
					const topo_edge *e = topo_graph_edge(g, inc[j]);
					const topo_vertex *ov = topo_graph_vertex(g, topo_edge_other(e, s));

					if (e->kind == TOPO_E_FABRIC && ov->kind == TOPO_V_SWITCH &&
					    ov->level == TOPO_LEVEL_CORE)
						c->group_up_gbps[grp] += edge_gbps(e);
				}
			}
		}
		free(seen);
	}
	c->nres = 2 * N * R + 2 * c->nleaves + 2 * c->ngroups;
	return 0;
oom:
	topo_error_set(err, "", 0, "out of memory building the placement cluster");
	return -1;
}

static int host_hops(const place_cluster *c, int a, int b);

/* Hops between every two classes (place_cluster_class_hops), once: a set's
 * diameter and a ring's longest hop are read from it in every decision.
 * Only within PLACE_CLASS_HOPS_MAX classes; beyond, the pairs are walked
 * as they come. */
static int build_class_hops(place_cluster *c)
{
	int n = c->nclasses;

	if (n > PLACE_CLASS_HOPS_MAX)
		return 0;
	c->class_hops = malloc((size_t)n * (size_t)n + 1);
	if (!c->class_hops)
		return -1;
	for (int a = 0; a < n; a++) {
		c->class_hops[(size_t)a * n + a] = 2;
		for (int b = a + 1; b < n; b++) {
			int h = host_hops(c, c->class_host[a], c->class_host[b]);

			c->class_hops[(size_t)a * n + b] = (int8_t)h;
			c->class_hops[(size_t)b * n + a] = (int8_t)h;
		}
	}
	return 0;
}

place_cluster *place_cluster_new(const topo_graph *g, topo_error *err)
{
	place_cluster *c = calloc(1, sizeof(*c));
	host_port ports[PLACE_MAX_RAILS];
	int any_group = topo_graph_count(g, TOPO_V_GROUP) > 0;
	size_t N;

	topo_error_clear(err);
	if (!c)
		goto oom;
	c->g = g;
	c->nvertices = (int)topo_graph_nvertices(g);
	N = topo_graph_count(g, TOPO_V_HOST);
	if (N == 0) {
		topo_error_set(err, "", 0, "the graph has no hosts to place jobs on");
		free(c);
		return NULL;
	}
	c->nhosts = (int)N;
	c->vid_leaf = malloc(((size_t)c->nvertices + 1) * sizeof(int));
	if (!c->vid_leaf)
		goto oom;
	for (int v = 0; v < c->nvertices; v++)
		c->vid_leaf[v] = -1;
	find_leaves(c, ports, &c->nrails);
	if (c->nrails == 0)
		c->nrails = 1;
	c->host_vid = calloc(N, sizeof(int));
	c->host_name = calloc(N, sizeof(char *));
	c->host_group = calloc(N, sizeof(int));
	c->host_leaf = malloc(N * (size_t)c->nrails * sizeof(int));
	c->host_gbps = calloc(N * (size_t)c->nrails, sizeof(double));
	c->host_gpus = calloc(N, sizeof(int));
	c->host_leaf_first = calloc(N * (size_t)c->nrails, 1);
	c->host_class = calloc(N, sizeof(int));
	if (!c->host_vid || !c->host_name || !c->host_group || !c->host_leaf || !c->host_gbps ||
	    !c->host_leaf_first || !c->host_gpus || !c->host_class)
		goto oom;
	for (size_t i = 0; i < N * (size_t)c->nrails; i++)
		c->host_leaf[i] = -1;
	if (build_leaves(c, err) < 0 || build_hosts(c, any_group, ports, err) < 0 ||
	    build_derived(c, err) < 0 || place_cluster_build_sharp(c, err) < 0 ||
	    place_cluster_build_domains(c, err) < 0) {
		place_cluster_free(c);
		return NULL;
	}
	if (c->ndomains > 0)
		c->nres += 2 * c->nhosts; /* NVLink up/down per host */
	if (build_class_hops(c) < 0)
		goto oom;
	return c;
oom:
	place_cluster_free(c);
	topo_error_set(err, "", 0, "out of memory building the placement cluster");
	return NULL;
}

int place_cluster_nhosts(const place_cluster *c) { return c->nhosts; }
int place_cluster_ngroups(const place_cluster *c) { return c->ngroups; }
int place_cluster_nleaves(const place_cluster *c) { return c->nleaves; }
const topo_graph *place_cluster_graph(const place_cluster *c) { return c->g; }

const char *place_cluster_host_name(const place_cluster *c, int host)
{
	return host >= 0 && host < c->nhosts ? c->host_name[host] : NULL;
}

int place_cluster_find_host(const place_cluster *c, const char *name)
{
	int v = topo_graph_find(c->g, TOPO_V_HOST, name);

	if (v < 0)
		return -1;
	/* hosts are few enough per lookup that a scan is fine off the hot path */
	for (int h = 0; h < c->nhosts; h++)
		if (c->host_vid[h] == v)
			return h;
	return -1;
}

int place_cluster_host_group(const place_cluster *c, int host)
{
	return host >= 0 && host < c->nhosts ? c->host_group[host] : -1;
}

const char *place_cluster_group_name(const place_cluster *c, int group)
{
	return group >= 0 && group < c->ngroups ? c->group_name[group] : NULL;
}

int place_cluster_leaves_share_spine(const place_cluster *c, int a, int b)
{
	int i = c->leaf_spine_off[a], ie = c->leaf_spine_off[a + 1];
	int j = c->leaf_spine_off[b], je = c->leaf_spine_off[b + 1];

	while (i < ie && j < je) {
		if (c->leaf_spines[i] == c->leaf_spines[j])
			return 1;
		if (c->leaf_spines[i] < c->leaf_spines[j])
			i++;
		else
			j++;
	}
	return 0;
}

/* Hops between two leaves: 2 through the same leaf, 4 through a shared
 * spine, 6 through the level above (core), -1 when unconnected. */
static int leaf_hops(const place_cluster *c, int a, int b)
{
	if (a < 0 || b < 0)
		return -1;
	if (a == b)
		return 2;
	if (place_cluster_leaves_share_spine(c, a, b))
		return 4;
	if (c->has_core && c->leaf_spine_off[a + 1] > c->leaf_spine_off[a] &&
	    c->leaf_spine_off[b + 1] > c->leaf_spine_off[b])
		return 6;
	return -1;
}

static int host_hops(const place_cluster *c, int a, int b)
{
	int best = -1;

	if (a == b)
		return 0;
	for (int r = 0; r < c->nrails; r++) {
		int d = leaf_hops(c, c->host_leaf[a * c->nrails + r], c->host_leaf[b * c->nrails + r]);

		if (d > 0 && (best < 0 || d < best))
			best = d;
	}
	return best;
}

int place_cluster_class_hops(const place_cluster *c, int ca, int cb)
{
	if (ca == cb)
		return 2;
	if (c->class_hops)
		return c->class_hops[(size_t)ca * c->nclasses + cb];
	return host_hops(c, c->class_host[ca], c->class_host[cb]);
}

int place_cluster_hops(const place_cluster *c, int a, int b)
{
	if (a < 0 || b < 0 || a >= c->nhosts || b >= c->nhosts)
		return -1;
	if (c->host_class[a] != c->host_class[b]) /* a class is a leaf vector */
		return place_cluster_class_hops(c, c->host_class[a], c->host_class[b]);
	return host_hops(c, a, b);
}
