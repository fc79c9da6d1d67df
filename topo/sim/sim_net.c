/*
 * sim_net: the simulator's fabric as capacity resources shared max-min
 * fairly by the flows of running jobs.
 *
 * Resources: each host cable (per rail, one per direction), each single
 * leaf-spine cable (one per direction), and each pod's up-links to a core
 * level aggregated (a pod = the leaves and spines connected without going
 * through a core switch). A flow from host a to host b on rail r uses a's
 * cable up and b's cable down. When their rail-r leaves differ it is routed
 * the way InfiniBand's static destination-based routing (OpenSM ftree/updn,
 * "D-mod-K") does: at the source leaf the up-port is (b mod K), K the
 * leaf's up-cables in port order; at the spine that cable reaches, the
 * down-cable to b's leaf is again chosen by b modulo the parallel cables.
 * So flows of different jobs collide on single cables even when the leaf's
 * aggregate up-link capacity would suffice, the well-known cause of
 * all-reduce slowdown on fat-trees. When the spine does not reach b's leaf
 * (a core level between pods), the flow also uses pod(a) up and pod(b)
 * down, and enters b's leaf on its cable (b mod K).
 *
 * NVLink domains (GB200 NVL72 racks): a ring step between two hosts of one
 * domain goes over NVLink, not the fabric: the sender's NVLink up and the
 * receiver's NVLink down, each of the host's GPUs x 900 GB/s each way
 * (place_cluster_host_nvlink_gbps), carrying the whole buffer (the rails'
 * shares added up); such bytes are not fabric bytes.
 *
 * SHARP (sim_net_sharp): a SHARP user's all-reduce on hosts under one SHARP
 * aggregation tree is reduced in the switches: per rail each host sends its
 * buffer up its cable once and receives the result once, and each leaf used
 * sends one reduced stream up the cable to the tree's root and receives one
 * back (with a root beyond the leaf's spines, through the pods' core
 * up-links): one stream per leaf, not ring edges.
 *
 * The engine's analytic model (place_model.c) aggregates a leaf's up-links
 * instead: it is an estimate, this is the simulator's ground truth.
 */
#include "sim_internal.h"
#include "topo_uf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SIM_MAX_RAILS 32
#define SIM_DEFAULT_GBPS 100.0

struct sim_net {
	const place_cluster *c;
	int H, R, L, P, nres, NC;
	double ref_gbps;    /* the fastest host cable (sim_net_ref_gbps) */
	int *host_leaf;     /* H x R */
	int *cab_off;       /* CSR per leaf: its up-cables in edge (port) order */
	int *cab_other;     /* per cable: the switch vertex at the far end */
	double *cab_gbps;
	double *cap;        /* per resource, Gb/s */
	int *leaf_pod;      /* per leaf */
	int *host_group;
	/* scratch */
	double *acc, *rem, *load, *used;
	int *touched;
	int *acc_leaf, *leaf_list; /* per leaf: hosts counted, leaves listed */
	uint8_t *sat;
};

static int res_host_up(const sim_net *n, int h, int r) { return h * n->R + r; }
static int res_host_down(const sim_net *n, int h, int r) { return n->H * n->R + h * n->R + r; }
/* cable k (leaf-spine), up = leaf to spine, down = spine to leaf */
static int res_cab_up(const sim_net *n, int k) { return 2 * n->H * n->R + 2 * k; }
static int res_cab_down(const sim_net *n, int k) { return 2 * n->H * n->R + 2 * k + 1; }
static int res_pod_up(const sim_net *n, int p) { return 2 * n->H * n->R + 2 * n->NC + p; }
static int res_pod_down(const sim_net *n, int p)
{
	return 2 * n->H * n->R + 2 * n->NC + n->P + p;
}
static int res_nvl_up(const sim_net *n, int h) { return 2 * n->H * n->R + 2 * n->NC + 2 * n->P + h; }
static int res_nvl_down(const sim_net *n, int h)
{
	return 2 * n->H * n->R + 2 * n->NC + 2 * n->P + n->H + h;
}

/* The leaf-spine cable between switch vertices a and b, if one end is a
 * leaf and the other is not: its leaf index, else -1. */
static int cable_leaf(const topo_graph *g, const topo_edge *ed, const int *vid_leaf, int *other)
{
	const topo_vertex *a = topo_graph_vertex(g, ed->a), *b = topo_graph_vertex(g, ed->b);

	if (ed->kind != TOPO_E_FABRIC || a->kind != TOPO_V_SWITCH || b->kind != TOPO_V_SWITCH)
		return -1;
	if (vid_leaf[ed->a] >= 0 && vid_leaf[ed->b] < 0) {
		*other = ed->b;
		return vid_leaf[ed->a];
	}
	if (vid_leaf[ed->b] >= 0 && vid_leaf[ed->a] < 0) {
		*other = ed->a;
		return vid_leaf[ed->b];
	}
	return -1;
}

/* Each leaf's up-cables (CSR, in edge order: the port order of the dump). */
static int build_cables(sim_net *n, const topo_graph *g, const int *vid_leaf)
{
	int ne = (int)topo_graph_nedges(g), other, *fill;

	n->cab_off = calloc((size_t)n->L + 2, sizeof(int));
	if (!n->cab_off)
		return -1;
	for (int e = 0; e < ne; e++) {
		int l = cable_leaf(g, topo_graph_edge(g, e), vid_leaf, &other);

		if (l >= 0)
			n->cab_off[l + 1]++;
	}
	for (int l = 0; l < n->L; l++)
		n->cab_off[l + 1] += n->cab_off[l];
	n->NC = n->cab_off[n->L];
	n->cab_other = malloc((size_t)n->NC * sizeof(int) + 1);
	n->cab_gbps = malloc((size_t)n->NC * sizeof(double) + 1);
	fill = calloc((size_t)n->L + 1, sizeof(int));
	if (!n->cab_other || !n->cab_gbps || !fill) {
		free(fill);
		return -1;
	}
	for (int e = 0; e < ne; e++) {
		const topo_edge *ed = topo_graph_edge(g, e);
		int l = cable_leaf(g, ed, vid_leaf, &other), k;

		if (l < 0)
			continue;
		k = n->cab_off[l] + fill[l]++;
		n->cab_other[k] = other;
		n->cab_gbps[k] = ed->gbps > 0 ? ed->gbps : SIM_DEFAULT_GBPS;
	}
	free(fill);
	return 0;
}

/* Leaves and their indices, pods by union-find over leaf/spine cables. */
static int build_switches(sim_net *n, const topo_graph *g, int *vid_leaf, double **pod_up)
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
			topo_uf_union(uf, ed->a, ed->b);
	}
	n->P = 0;
	n->leaf_pod = calloc((size_t)n->L + 1, sizeof(int));
	*pod_up = calloc((size_t)nv + 1, sizeof(double));
	if (!n->leaf_pod || !*pod_up)
		goto fail;
	for (int v = 0; v < nv; v++) {
		int r = topo_uf_find(uf, v);

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
		/* pod up-links: spine <-> core */
		if ((a->level == TOPO_LEVEL_CORE) != (b->level == TOPO_LEVEL_CORE)) {
			int s = a->level == TOPO_LEVEL_CORE ? ed->b : ed->a;
			int r = root_pod[topo_uf_find(uf, s)];

			if (r >= 0)
				(*pod_up)[r] += gb;
		}
	}
	free(uf);
	free(root_pod);
	return build_cables(n, g, vid_leaf);
fail:
	free(uf);
	free(root_pod);
	return -1;
}

/* Each host's HCAs: rail, leaf and cable rate. */
static void build_hosts(sim_net *n, const topo_graph *g, const int *vid_leaf, double *host_gbps)
{
	for (int h = 0; h < n->H; h++) {
		int v = topo_graph_find(g, TOPO_V_HOST, place_cluster_host_name(n->c, h)), next_rail = 0;

		for (int it = 0, hca; v >= 0 && (hca = topo_graph_next_member(g, v, TOPO_V_HCA, &it)) >= 0;) {
			const topo_vertex *hv = topo_graph_vertex(g, hca);
			const int *hin;
			int ncnt, rail;

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
		int v = topo_graph_find(g, TOPO_V_HOST, place_cluster_host_name(c, h));
		int k = v >= 0 ? topo_graph_count_members(g, v, TOPO_V_HCA) : 0;

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
	double *pod_up = NULL, *host_gbps = NULL;

	if (!n)
		goto oom;
	n->c = c;
	n->H = place_cluster_nhosts(c);
	n->R = count_rails(c, g);
	vid_leaf = malloc((topo_graph_nvertices(g) + 1) * sizeof(int));
	if (!vid_leaf || build_switches(n, g, vid_leaf, &pod_up))
		goto oom;
	n->nres = 2 * n->H * n->R + 2 * n->NC + 2 * n->P + 2 * n->H;
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
	n->acc_leaf = calloc((size_t)n->L + 1, sizeof(int));
	n->leaf_list = calloc((size_t)n->L + 1, sizeof(int));
	if (!n->host_leaf || !host_gbps || !n->host_group || !n->cap || !n->acc || !n->rem ||
	    !n->load || !n->used || !n->touched || !n->sat || !n->acc_leaf || !n->leaf_list)
		goto oom;
	for (int i = 0; i < n->H * n->R; i++)
		n->host_leaf[i] = -1;
	build_hosts(n, g, vid_leaf, host_gbps);
	for (int h = 0; h < n->H; h++)
		for (int r = 0; r < n->R; r++) {
			n->cap[res_host_up(n, h, r)] = host_gbps[h * n->R + r];
			n->cap[res_host_down(n, h, r)] = host_gbps[h * n->R + r];
		}
	for (int k = 0; k < n->NC; k++)
		n->cap[res_cab_up(n, k)] = n->cap[res_cab_down(n, k)] = n->cab_gbps[k];
	for (int p = 0; p < n->P; p++)
		n->cap[res_pod_up(n, p)] = n->cap[res_pod_down(n, p)] = pod_up[p];
	for (int h = 0; h < n->H; h++)
		n->cap[res_nvl_up(n, h)] = n->cap[res_nvl_down(n, h)] =
			place_cluster_host_nvlink_gbps(c, h);
	for (int i = 0; i < n->H * n->R; i++)
		if (n->host_leaf[i] >= 0 && host_gbps[i] > n->ref_gbps)
			n->ref_gbps = host_gbps[i];
	if (n->ref_gbps <= 0)
		n->ref_gbps = SIM_DEFAULT_GBPS;
	free(vid_leaf);
	free(pod_up);
	free(host_gbps);
	return n;
oom:
	free(vid_leaf);
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
	free(n->cab_off);
	free(n->cab_other);
	free(n->cab_gbps);
	free(n->host_group);
	free(n->acc);
	free(n->rem);
	free(n->load);
	free(n->used);
	free(n->touched);
	free(n->sat);
	free(n->acc_leaf);
	free(n->leaf_list);
	free(n);
}

int sim_net_nleaves(const sim_net *n) { return n->L; }
int sim_net_nrails(const sim_net *n) { return n->R; }

double sim_net_ref_gbps(const sim_net *n) { return n->ref_gbps; }

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
static void acc_add_n(sim_net *n, int res, double cnt, int *nt)
{
	if (n->cap[res] <= 0)
		return;
	if (n->acc[res] == 0)
		n->touched[(*nt)++] = res;
	n->acc[res] += cnt;
}

static void acc_add(sim_net *n, int res, int *nt)
{
	acc_add_n(n, res, 1, nt);
}

/* D-mod-K: the up-cable of leaf la towards destination host b, then the
 * down-cable into leaf lb from the spine it reached (b modulo the parallel
 * cables), or via the pods' core up-links when that spine does not reach lb. */
static void route_up_down(sim_net *n, int b, int la, int lb, int *nt)
{
	int ku = n->cab_off[la + 1] - n->cab_off[la], kd = n->cab_off[lb + 1] - n->cab_off[lb];
	int up, spine, par = 0, down = -1;

	if (ku <= 0 || kd <= 0)
		return;
	up = n->cab_off[la] + b % ku;
	spine = n->cab_other[up];
	acc_add(n, res_cab_up(n, up), nt);
	for (int k = n->cab_off[lb]; k < n->cab_off[lb + 1]; k++)
		par += n->cab_other[k] == spine;
	if (par > 0) {
		int want = b % par;

		for (int k = n->cab_off[lb]; k < n->cab_off[lb + 1] && down < 0; k++)
			if (n->cab_other[k] == spine && want-- == 0)
				down = k;
	} else {
		if (n->leaf_pod[la] != n->leaf_pod[lb]) {
			acc_add(n, res_pod_up(n, n->leaf_pod[la]), nt);
			acc_add(n, res_pod_down(n, n->leaf_pod[lb]), nt);
		}
		down = n->cab_off[lb] + b % kd;
	}
	acc_add(n, res_cab_down(n, down), nt);
}

/* Rails host h is cabled on. */
static uint32_t host_rails(const sim_net *n, int h)
{
	uint32_t m = 0;

	for (int r = 0; r < n->R; r++)
		if (n->host_leaf[h * n->R + r] >= 0)
			m |= 1u << r;
	return m;
}

/* Start counting a job's flows: the rails every one of its hosts has (a
 * collective runs on the rails it shares, so a host with fewer HCAs
 * narrows the whole job; when the hosts share none, the rails any has,
 * flows between hosts without a common rail left out), the slowest host
 * cable on them. */
static void flows_begin(sim_net *n, const int *hosts, int nhosts, sim_flows *f)
{
	double minbw = 0;
	uint32_t all = ~0u, any = 0;

	f->nres = 0;
	f->flows = f->cross_leaf = f->cross_group = 0;
	f->rails = 0;
	f->fast = 0;
	for (int i = 0; i < nhosts; i++) {
		all &= host_rails(n, hosts[i]);
		any |= host_rails(n, hosts[i]);
	}
	f->rail_mask = nhosts > 0 && all ? all : any;
	for (int r = 0; r < n->R; r++)
		f->rails += (f->rail_mask >> r) & 1;
	for (int i = 0; i < nhosts; i++)
		for (int r = 0; r < n->R; r++)
			if (((f->rail_mask >> r) & 1) && n->host_leaf[hosts[i] * n->R + r] >= 0 &&
			    (minbw == 0 || n->cap[res_host_up(n, hosts[i], r)] < minbw))
				minbw = n->cap[res_host_up(n, hosts[i], r)];
	f->cable_gbps = minbw > 0 ? minbw : SIM_DEFAULT_GBPS;
}

/* Copy the counted resources into f. 0, or -1 on memory exhaustion. */
static int flows_end(sim_net *n, int nt, sim_flows *f)
{
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
	return 0;
}

int sim_net_ring(sim_net *n, const int *hosts, int nhosts, sim_flows *f)
{
	int nt = 0, R = n->R;

	flows_begin(n, hosts, nhosts, f);
	for (int i = 0; nhosts > 1 && i < nhosts; i++) {
		int a = hosts[i], b = hosts[(i + 1) % nhosts];
		int da = place_cluster_host_domain(n->c, a);

		if (da >= 0 && da == place_cluster_host_domain(n->c, b)) {
			double shares = f->rails > 0 ? f->rails : 1;

			if (f->rails == 0)
				f->rails = 1; /* NVLink only: the buffer is one share */
			acc_add_n(n, res_nvl_up(n, a), shares, &nt);
			acc_add_n(n, res_nvl_down(n, b), shares, &nt);
			f->fast = 1;
			continue;
		}
		for (int r = 0; r < R; r++) {
			int la = n->host_leaf[a * R + r], lb = n->host_leaf[b * R + r];

			if (!((f->rail_mask >> r) & 1) || la < 0 || lb < 0)
				continue;
			f->flows++;
			acc_add(n, res_host_up(n, a, r), &nt);
			acc_add(n, res_host_down(n, b, r), &nt);
			if (n->host_group[a] != n->host_group[b])
				f->cross_group++;
			if (la == lb)
				continue;
			f->cross_leaf++;
			route_up_down(n, b, la, lb, &nt);
		}
	}
	return flows_end(n, nt, f);
}

/* A leaf's stream to SHARP root `root` (a switch vertex) and back. */
static void route_to_root(sim_net *n, int l, int root, int cross_pod, int *nt)
{
	int k = -1, ku = n->cab_off[l + 1] - n->cab_off[l];

	if (ku <= 0)
		return;
	for (int c = n->cab_off[l]; c < n->cab_off[l + 1] && k < 0; c++)
		if (n->cab_other[c] == root)
			k = c;
	if (k < 0) { /* a core root: up through a spine and the pod's core links */
		k = n->cab_off[l] + l % ku;
		if (cross_pod) {
			acc_add(n, res_pod_up(n, n->leaf_pod[l]), nt);
			acc_add(n, res_pod_down(n, n->leaf_pod[l]), nt);
		}
	}
	acc_add(n, res_cab_up(n, k), nt);
	acc_add(n, res_cab_down(n, k), nt);
}

int sim_net_sharp(sim_net *n, const int *hosts, int nhosts, sim_flows *f)
{
	int nt = 0, R = n->R, groups = 1, pods = 1;

	flows_begin(n, hosts, nhosts, f);
	f->fast = 1;
	for (int i = 1; i < nhosts; i++)
		groups += n->host_group[hosts[i]] != n->host_group[hosts[i - 1]];
	for (int r = 0; r < R; r++) {
		int root, nl = 0;

		if (!((f->rail_mask >> r) & 1))
			continue;
		root = place_cluster_sharp_root(n->c, hosts, nhosts, r);

		for (int i = 0; i < nhosts; i++) {
			int l = n->host_leaf[hosts[i] * R + r];

			if (l < 0)
				continue;
			f->flows++;
			acc_add(n, res_host_up(n, hosts[i], r), &nt);
			acc_add(n, res_host_down(n, hosts[i], r), &nt);
			if (n->acc_leaf[l]++ == 0) {
				n->leaf_list[nl++] = l;
				pods += nl > 1 && n->leaf_pod[l] != n->leaf_pod[n->leaf_list[0]];
			}
		}
		for (int i = 0; i < nl; i++) {
			int l = n->leaf_list[i];

			if (nl > 1 && root >= 0) {
				f->cross_leaf++;
				f->cross_group += groups > 1;
				route_to_root(n, l, root, pods > 1, &nt);
			}
			n->acc_leaf[l] = 0;
		}
	}
	return flows_end(n, nt, f);
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
	/* cable utilisation (sim_net_leaf_util), then reset */
	for (int k = 0; k < n->NC; k++)
		n->used[res_cab_up(n, k)] = 0;
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
	double used = 0, cap = 0;

	for (int k = n->cab_off[l]; k < n->cab_off[l + 1]; k++) {
		used += n->used[res_cab_up(n, k)] * n->cab_gbps[k];
		cap += n->cab_gbps[k];
	}
	return cap > 0 ? used / cap : 0;
}
