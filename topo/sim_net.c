/*
 * sim_net: the simulator's fabric as capacity resources shared max-min
 * fairly by the flows of running jobs.
 *
 * Resources: each host cable (per rail, one per direction), each leaf's
 * up-links aggregated (per direction; ECMP spreads flows over them), and
 * each pod's up-links to a core level aggregated (a pod = the leaves and
 * spines connected without going through a core switch). A flow from host
 * a to host b on rail r uses a's cable up and b's cable down; when their
 * rail-r leaves differ also leaf(a) up and leaf(b) down; when their pods
 * differ also pod(a) up and pod(b) down.
 */
#include "sim_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SIM_MAX_RAILS 32
#define SIM_DEFAULT_GBPS 100.0

struct sim_net {
	const place_cluster *c;
	int H, R, L, P, nres;
	int *host_leaf;     /* H x R */
	double *cap;        /* per resource, Gb/s */
	int *leaf_pod;      /* per leaf */
	int *host_group;
	/* scratch */
	double *acc, *rem, *load, *used;
	int *touched;
	uint8_t *sat;
};

static int res_host_up(const sim_net *n, int h, int r) { return h * n->R + r; }
static int res_host_down(const sim_net *n, int h, int r) { return n->H * n->R + h * n->R + r; }
static int res_leaf_up(const sim_net *n, int l) { return 2 * n->H * n->R + l; }
static int res_leaf_down(const sim_net *n, int l) { return 2 * n->H * n->R + n->L + l; }
static int res_pod_up(const sim_net *n, int p) { return 2 * n->H * n->R + 2 * n->L + p; }
static int res_pod_down(const sim_net *n, int p)
{
	return 2 * n->H * n->R + 2 * n->L + n->P + p;
}

static int uf_find(int *p, int x)
{
	while (p[x] != x)
		x = p[x] = p[p[x]];
	return x;
}

/* Leaves and their indices, pods by union-find over leaf/spine cables. */
static int build_switches(sim_net *n, const topo_graph *g, int *vid_leaf, double **leaf_up,
			  double **pod_up)
{
	int nv = (int)topo_graph_nvertices(g), *uf = malloc((size_t)nv * sizeof(int));
	int *root_pod = malloc((size_t)nv * sizeof(int));

	if (!uf || !root_pod)
		goto fail;
	for (int v = 0; v < nv; v++) {
		uf[v] = v;
		root_pod[v] = -1;
		vid_leaf[v] = -1;
	}
	n->L = 0;
	for (int v = 0; v < nv; v++) {
		const topo_vertex *x = topo_graph_vertex(g, v);

		if (x->kind == TOPO_V_SWITCH && x->level == TOPO_LEVEL_LEAF)
			vid_leaf[v] = n->L++;
	}
	for (size_t e = 0; e < topo_graph_nedges(g); e++) {
		const topo_edge *ed = topo_graph_edge(g, (int)e);
		const topo_vertex *a, *b;

		if (ed->kind != TOPO_E_FABRIC)
			continue;
		a = topo_graph_vertex(g, ed->a);
		b = topo_graph_vertex(g, ed->b);
		if (a->kind == TOPO_V_SWITCH && b->kind == TOPO_V_SWITCH &&
		    a->level != TOPO_LEVEL_CORE && b->level != TOPO_LEVEL_CORE)
			uf[uf_find(uf, ed->a)] = uf_find(uf, ed->b);
	}
	n->P = 0;
	n->leaf_pod = calloc((size_t)n->L + 1, sizeof(int));
	*leaf_up = calloc((size_t)n->L + 1, sizeof(double));
	*pod_up = calloc((size_t)nv + 1, sizeof(double));
	if (!n->leaf_pod || !*leaf_up || !*pod_up)
		goto fail;
	for (int v = 0; v < nv; v++) {
		int r = uf_find(uf, v);

		if (vid_leaf[v] < 0)
			continue;
		if (root_pod[r] < 0)
			root_pod[r] = n->P++;
		n->leaf_pod[vid_leaf[v]] = root_pod[r];
	}
	for (size_t e = 0; e < topo_graph_nedges(g); e++) {
		const topo_edge *ed = topo_graph_edge(g, (int)e);
		const topo_vertex *a, *b;
		double gb = ed->gbps > 0 ? ed->gbps : SIM_DEFAULT_GBPS;

		if (ed->kind != TOPO_E_FABRIC)
			continue;
		a = topo_graph_vertex(g, ed->a);
		b = topo_graph_vertex(g, ed->b);
		if (a->kind != TOPO_V_SWITCH || b->kind != TOPO_V_SWITCH)
			continue;
		if (vid_leaf[ed->a] >= 0 && vid_leaf[ed->b] < 0)
			(*leaf_up)[vid_leaf[ed->a]] += gb;
		if (vid_leaf[ed->b] >= 0 && vid_leaf[ed->a] < 0)
			(*leaf_up)[vid_leaf[ed->b]] += gb;
		/* pod up-links: spine <-> core */
		if ((a->level == TOPO_LEVEL_CORE) != (b->level == TOPO_LEVEL_CORE)) {
			int s = a->level == TOPO_LEVEL_CORE ? ed->b : ed->a;
			int r = root_pod[uf_find(uf, s)];

			if (r >= 0)
				(*pod_up)[r] += gb;
		}
	}
	free(uf);
	free(root_pod);
	return 0;
fail:
	free(uf);
	free(root_pod);
	return -1;
}

/* Each host's HCAs: rail, leaf and cable rate. */
static void build_hosts(sim_net *n, const topo_graph *g, const int *vid_leaf, double *host_gbps)
{
	for (int h = 0; h < n->H; h++) {
		int v = topo_graph_find(g, TOPO_V_HOST, place_cluster_host_name(n->c, h)), cnt,
		    next_rail = 0;
		const int *inc = v >= 0 ? topo_graph_incident(g, v, &cnt) : NULL;

		for (int i = 0; inc && i < cnt; i++) {
			const topo_edge *e = topo_graph_edge(g, inc[i]);
			int hca = topo_edge_other(e, v), ncnt, rail;
			const topo_vertex *hv = topo_graph_vertex(g, hca);
			const int *hin;

			if (e->kind != TOPO_E_MEMBER || e->a != v || hv->kind != TOPO_V_HCA)
				continue;
			rail = hv->rail >= 0 ? hv->rail : next_rail;
			next_rail++;
			if (rail >= n->R)
				continue;
			hin = topo_graph_incident(g, hca, &ncnt);
			for (int k = 0; k < ncnt; k++) {
				const topo_edge *f = topo_graph_edge(g, hin[k]);
				int sw = topo_edge_other(f, hca);

				if (f->kind != TOPO_E_FABRIC || vid_leaf[sw] < 0)
					continue;
				n->host_leaf[h * n->R + rail] = vid_leaf[sw];
				host_gbps[h * n->R + rail] = f->gbps > 0 ? f->gbps : SIM_DEFAULT_GBPS;
			}
		}
		n->host_group[h] = place_cluster_host_group(n->c, h);
	}
}

/* Rails: the most HCAs any host has (bounded). */
static int count_rails(const place_cluster *c, const topo_graph *g)
{
	int R = 1;

	for (int h = 0; h < place_cluster_nhosts(c); h++) {
		int v = topo_graph_find(g, TOPO_V_HOST, place_cluster_host_name(c, h)), cnt, k = 0;
		const int *inc = v >= 0 ? topo_graph_incident(g, v, &cnt) : NULL;

		for (int i = 0; inc && i < cnt; i++) {
			const topo_edge *e = topo_graph_edge(g, inc[i]);

			if (e->kind == TOPO_E_MEMBER && e->a == v &&
			    topo_graph_vertex(g, e->b)->kind == TOPO_V_HCA)
				k++;
		}
		if (k > R)
			R = k;
	}
	return R > SIM_MAX_RAILS ? SIM_MAX_RAILS : R;
}

sim_net *sim_net_new(const place_cluster *c, topo_error *err)
{
	const topo_graph *g = place_cluster_graph(c);
	sim_net *n = calloc(1, sizeof(*n));
	int *vid_leaf = NULL;
	double *leaf_up = NULL, *pod_up = NULL, *host_gbps = NULL;

	if (!n)
		goto oom;
	n->c = c;
	n->H = place_cluster_nhosts(c);
	n->R = count_rails(c, g);
	vid_leaf = malloc((topo_graph_nvertices(g) + 1) * sizeof(int));
	if (!vid_leaf || build_switches(n, g, vid_leaf, &leaf_up, &pod_up))
		goto oom;
	n->nres = 2 * n->H * n->R + 2 * n->L + 2 * n->P;
	n->host_leaf = malloc((size_t)n->H * n->R * sizeof(int) + 1);
	host_gbps = calloc((size_t)n->H * n->R + 1, sizeof(double));
	n->host_group = calloc((size_t)n->H + 1, sizeof(int));
	n->cap = calloc((size_t)n->nres + 1, sizeof(double));
	n->acc = calloc((size_t)n->nres + 1, sizeof(double));
	n->rem = calloc((size_t)n->nres + 1, sizeof(double));
	n->load = calloc((size_t)n->nres + 1, sizeof(double));
	n->used = calloc((size_t)n->nres + 1, sizeof(double));
	n->touched = calloc((size_t)n->nres + 1, sizeof(int));
	n->sat = calloc((size_t)n->nres + 1, 1);
	if (!n->host_leaf || !host_gbps || !n->host_group || !n->cap || !n->acc || !n->rem ||
	    !n->load || !n->used || !n->touched || !n->sat)
		goto oom;
	for (int i = 0; i < n->H * n->R; i++)
		n->host_leaf[i] = -1;
	build_hosts(n, g, vid_leaf, host_gbps);
	for (int h = 0; h < n->H; h++)
		for (int r = 0; r < n->R; r++) {
			n->cap[res_host_up(n, h, r)] = host_gbps[h * n->R + r];
			n->cap[res_host_down(n, h, r)] = host_gbps[h * n->R + r];
		}
	for (int l = 0; l < n->L; l++)
		n->cap[res_leaf_up(n, l)] = n->cap[res_leaf_down(n, l)] = leaf_up[l];
	for (int p = 0; p < n->P; p++)
		n->cap[res_pod_up(n, p)] = n->cap[res_pod_down(n, p)] = pod_up[p];
	free(vid_leaf);
	free(leaf_up);
	free(pod_up);
	free(host_gbps);
	return n;
oom:
	free(vid_leaf);
	free(leaf_up);
	free(pod_up);
	free(host_gbps);
	sim_net_free(n);
	topo_error_set(err, "", 0, "out of memory building the simulator's fabric model");
	return NULL;
}

void sim_net_free(sim_net *n)
{
	if (!n)
		return;
	free(n->host_leaf);
	free(n->cap);
	free(n->leaf_pod);
	free(n->host_group);
	free(n->acc);
	free(n->rem);
	free(n->load);
	free(n->used);
	free(n->touched);
	free(n->sat);
	free(n);
}

int sim_net_nres(const sim_net *n) { return n->nres; }
int sim_net_nleaves(const sim_net *n) { return n->L; }
int sim_net_nrails(const sim_net *n) { return n->R; }

int sim_net_leaf_pod(const sim_net *n, int l)
{
	return n->leaf_pod[l];
}

int sim_net_host_leaf(const sim_net *n, int h, int r)
{
	return n->host_leaf[h * n->R + r];
}

void sim_flows_free(sim_flows *f)
{
	free(f->res);
	free(f->cnt);
	memset(f, 0, sizeof(*f));
}

/* Count one flow on res; a resource without capacity (a pod without core
 * links) is not a constraint. */
static void acc_add(sim_net *n, int res, int *nt)
{
	if (n->cap[res] <= 0)
		return;
	if (n->acc[res] == 0)
		n->touched[(*nt)++] = res;
	n->acc[res] += 1;
}

int sim_net_ring(sim_net *n, const int *hosts, int nhosts, sim_flows *f)
{
	int nt = 0, R = n->R;
	double minbw = 0;

	f->nres = 0;
	f->flows = f->cross_leaf = f->cross_group = 0;
	f->rails = 0;
	for (int r = 0; r < R; r++)
		if (nhosts > 0 && n->host_leaf[hosts[0] * R + r] >= 0)
			f->rails++;
	for (int i = 0; nhosts > 1 && i < nhosts; i++) {
		int a = hosts[i], b = hosts[(i + 1) % nhosts];

		for (int r = 0; r < R; r++) {
			int la = n->host_leaf[a * R + r], lb = n->host_leaf[b * R + r];

			if (la < 0 || lb < 0)
				continue;
			f->flows++;
			acc_add(n, res_host_up(n, a, r), &nt);
			acc_add(n, res_host_down(n, b, r), &nt);
			if (minbw == 0 || n->cap[res_host_up(n, a, r)] < minbw)
				minbw = n->cap[res_host_up(n, a, r)];
			if (n->host_group[a] != n->host_group[b])
				f->cross_group++;
			if (la == lb)
				continue;
			f->cross_leaf++;
			acc_add(n, res_leaf_up(n, la), &nt);
			acc_add(n, res_leaf_down(n, lb), &nt);
			if (n->leaf_pod[la] != n->leaf_pod[lb]) {
				acc_add(n, res_pod_up(n, n->leaf_pod[la]), &nt);
				acc_add(n, res_pod_down(n, n->leaf_pod[lb]), &nt);
			}
		}
	}
	if (nt > f->cap) {
		int *r2 = realloc(f->res, (size_t)nt * sizeof(int));
		double *c2 = r2 ? realloc(f->cnt, (size_t)nt * sizeof(double)) : NULL;

		if (r2)
			f->res = r2;
		if (!c2) {
			for (int i = 0; i < nt; i++)
				n->acc[n->touched[i]] = 0;
			return -1;
		}
		f->cnt = c2;
		f->cap = nt;
	}
	for (int i = 0; i < nt; i++) {
		f->res[i] = n->touched[i];
		f->cnt[i] = n->acc[n->touched[i]];
		n->acc[n->touched[i]] = 0;
	}
	f->nres = nt;
	f->cable_gbps = minbw > 0 ? minbw : SIM_DEFAULT_GBPS;
	return 0;
}

void sim_net_share(sim_net *n, sim_flows *const *jobs, int nj, double *rate)
{
	int nt = 0, active = 0;

	/* resources in use, their remaining capacity and active load */
	for (int j = 0; j < nj; j++) {
		rate[j] = -1; /* unfrozen */
		for (int k = 0; k < jobs[j]->nres; k++) {
			int r = jobs[j]->res[k];

			if (!n->sat[r] && n->load[r] == 0 && n->rem[r] == 0) {
				n->touched[nt++] = r;
				n->rem[r] = n->cap[r];
				n->sat[r] = 2; /* marks "listed" */
			}
			n->load[r] += jobs[j]->cnt[k];
		}
		if (jobs[j]->nres == 0)
			rate[j] = 0;
		else
			active++;
	}
	double level = 0;
	while (active > 0) {
		double delta = INFINITY;

		for (int i = 0; i < nt; i++) {
			int r = n->touched[i];

			if (n->load[r] > 0 && n->rem[r] / n->load[r] < delta)
				delta = n->rem[r] / n->load[r];
		}
		if (!isfinite(delta))
			break;
		level += delta;
		for (int i = 0; i < nt; i++) {
			int r = n->touched[i];

			n->rem[r] -= delta * n->load[r];
		}
		/* freeze jobs that cross a saturated resource */
		for (int j = 0; j < nj; j++) {
			int frozen = 0;

			if (rate[j] >= 0)
				continue;
			for (int k = 0; k < jobs[j]->nres && !frozen; k++) {
				int r = jobs[j]->res[k];

				frozen = n->load[r] > 0 && n->rem[r] <= 1e-9 * n->cap[r];
			}
			if (!frozen)
				continue;
			rate[j] = level;
			active--;
			for (int k = 0; k < jobs[j]->nres; k++)
				n->load[jobs[j]->res[k]] -= jobs[j]->cnt[k];
		}
	}
	for (int j = 0; j < nj; j++)
		if (rate[j] < 0)
			rate[j] = level;
	/* leaf up-link utilisation for the training features, then reset */
	for (int l = 0; l < n->L; l++)
		n->used[res_leaf_up(n, l)] = 0;
	for (int i = 0; i < nt; i++) {
		int r = n->touched[i];

		n->used[r] = n->cap[r] > 0 ? 1.0 - n->rem[r] / n->cap[r] : 0;
		n->rem[r] = 0;
		n->load[r] = 0;
		n->sat[r] = 0;
	}
}

double sim_net_leaf_util(const sim_net *n, int l)
{
	return n->used[res_leaf_up(n, l)];
}
