/*
 * sim_bound: the empty-cluster reference of a run's heavy jobs, so that a
 * benchmark can say how much of a policy's cross-group traffic was
 * avoidable (issue 10, docs/simulator.md "bound").
 *
 * A heavy job of n hosts needs at least g_min(n) groups: fill the largest
 * groups first on an empty cluster. Its "bound" bytes are what its ring
 * all-reduce would send over its life there: the hosts in group order
 * (largest groups first; inside the partly used group, its largest leaves
 * first), the ring visiting them in that order, so it crosses each used
 * group and leaf boundary once per rail. A placement over more groups than
 * g_min(n) is "avoidable": fragmentation left by earlier decisions caused
 * it, not the job's size.
 *
 * The ring's per-flow bytes and idle-cable time (sim_ring_cost) are here too:
 * the simulator's jobs and this reference must count bytes the same way.
 */
#define _GNU_SOURCE /* qsort_r */
#include "sim_internal.h"

#include <stdlib.h>
#include <string.h>

/* The ring of one bound placement, cached by host count (only its counts
 * matter: the fabric is idle). */
typedef struct bound_ring {
	int done;
	double flows, cross_leaf, cross_group, cable_gbps, rails;
} bound_ring;

struct sim_bound {
	const place_cluster *c;
	sim_net *net;
	int H, ngroups;
	int *order;      /* hosts: largest groups first, then largest leaves */
	int *gsize;      /* group sizes, largest first */
	int *stamp;      /* per group: last job that counted it */
	int stamp_now;
	bound_ring *ring; /* by host count, 0..H */
};

void sim_ring_cost(const sim_net *n, const sim_flows *f, int nh, double bytes_per_iter,
		   double *bytes_per_flow, double *t_ideal)
{
	double share = nh > 1 ? 2.0 * (nh - 1) / nh * bytes_per_iter : 0;

	*bytes_per_flow = f->rails > 0 ? share / f->rails : 0;
	*t_ideal = share / sim_net_nrails(n) * 8.0 / (sim_net_ref_gbps(n) * 1e9);
}

double sim_life_iters(const place_comm *comm, double base, double t_ideal)
{
	return base / (comm->compute_s_per_iter + t_ideal);
}

/* Leaf of host h on its first rail with one, -1 none. */
static int host_leaf(const sim_bound *b, int h)
{
	for (int r = 0; r < sim_net_nrails(b->net); r++) {
		int l = sim_net_host_leaf(b->net, h, r);

		if (l >= 0)
			return l;
	}
	return -1;
}

typedef struct order_key {
	int *group_size, *leaf_size, *group, *leaf;
} order_key;

/* Larger group first, then larger leaf, then lower index (stable). */
static int cmp_order(const void *pa, const void *pb, void *kp)
{
	const order_key *k = kp;
	int a = *(const int *)pa, b = *(const int *)pb;
	int ga = k->group[a], gb = k->group[b], la = k->leaf[a], lb = k->leaf[b];

	if (k->group_size[ga] != k->group_size[gb])
		return k->group_size[gb] - k->group_size[ga];
	if (ga != gb)
		return ga - gb;
	if (la != lb) {
		int sa = la >= 0 ? k->leaf_size[la] : 0, sb = lb >= 0 ? k->leaf_size[lb] : 0;

		return sa != sb ? sb - sa : la - lb;
	}
	return a - b;
}

static int cmp_desc(const void *a, const void *b)
{
	return *(const int *)b - *(const int *)a;
}

/* Hosts in bound order and the sorted group sizes. Returns 0 or -1. */
static int build_order(sim_bound *b)
{
	int nl = sim_net_nleaves(b->net);
	order_key k = {calloc((size_t)b->ngroups + 1, sizeof(int)),
		       calloc((size_t)nl + 1, sizeof(int)), calloc((size_t)b->H + 1, sizeof(int)),
		       calloc((size_t)b->H + 1, sizeof(int))};
	int rc = -1;

	if (!k.group_size || !k.leaf_size || !k.group || !k.leaf)
		goto out;
	for (int h = 0; h < b->H; h++) {
		k.group[h] = place_cluster_host_group(b->c, h);
		k.leaf[h] = host_leaf(b, h);
		k.group_size[k.group[h]]++;
		if (k.leaf[h] >= 0)
			k.leaf_size[k.leaf[h]]++;
		b->order[h] = h;
	}
	qsort_r(b->order, (size_t)b->H, sizeof(int), cmp_order, &k);
	memcpy(b->gsize, k.group_size, (size_t)b->ngroups * sizeof(int));
	qsort(b->gsize, (size_t)b->ngroups, sizeof(int), cmp_desc);
	rc = 0;
out:
	free(k.group_size);
	free(k.leaf_size);
	free(k.group);
	free(k.leaf);
	return rc;
}

void sim_bound_free(sim_bound *b)
{
	if (!b)
		return;
	free(b->order);
	free(b->gsize);
	free(b->stamp);
	free(b->ring);
	free(b);
}

sim_bound *sim_bound_new(const place_cluster *c, sim_net *net)
{
	sim_bound *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->c = c;
	b->net = net;
	b->H = place_cluster_nhosts(c);
	b->ngroups = place_cluster_ngroups(c) + 1; /* + the trailing pseudo-group */
	b->order = calloc((size_t)b->H + 1, sizeof(int));
	b->gsize = calloc((size_t)b->ngroups + 1, sizeof(int));
	b->stamp = calloc((size_t)b->ngroups + 1, sizeof(int));
	b->ring = calloc((size_t)b->H + 1, sizeof(*b->ring));
	if (!b->order || !b->gsize || !b->stamp || !b->ring || build_order(b)) {
		sim_bound_free(b);
		return NULL;
	}
	return b;
}

int sim_units_needed(const int *size_desc, int nunits, int n)
{
	int k = 0;

	for (int got = 0; got < n && k < nunits && size_desc[k] > 0; k++)
		got += size_desc[k];
	return k;
}

int sim_bound_gmin(const sim_bound *b, int nhosts)
{
	return sim_units_needed(b->gsize, b->ngroups, nhosts);
}

int sim_tree_leaves(const place_cluster *c, const sim_net *net, int *leaf, int *size_desc)
{
	int H = place_cluster_nhosts(c), n = 0, by_group = sim_net_nrails(net) > 1;

	for (int h = 0; h < H; h++) {
		leaf[h] = by_group ? place_cluster_host_group(c, h) : sim_net_host_leaf(net, h, 0);
		if (leaf[h] >= n)
			n = leaf[h] + 1;
	}
	memset(size_desc, 0, (size_t)(n + 1) * sizeof(int));
	for (int h = 0; h < H; h++)
		if (leaf[h] >= 0)
			size_desc[leaf[h]]++;
	qsort(size_desc, (size_t)n, sizeof(int), cmp_desc);
	return n;
}

int sim_bound_groups(sim_bound *b, const int *hosts, int nhosts)
{
	int n = 0;

	b->stamp_now++;
	for (int i = 0; i < nhosts; i++) {
		int g = place_cluster_host_group(b->c, hosts[i]);

		if (b->stamp[g] != b->stamp_now) {
			b->stamp[g] = b->stamp_now;
			n++;
		}
	}
	return n;
}

/* The ring of the bound placement of n hosts (the first n in bound order). */
static const bound_ring *bound_ring_of(sim_bound *b, int n)
{
	bound_ring *r = &b->ring[n];
	sim_flows f = {0};

	if (r->done)
		return r;
	if (sim_net_ring(b->net, b->order, n, &f)) {
		sim_flows_free(&f);
		return NULL;
	}
	*r = (bound_ring){1, f.flows, f.cross_leaf, f.cross_group, f.cable_gbps, f.rails};
	sim_flows_free(&f);
	return r;
}

int sim_bound_account(sim_bound *b, const int *hosts, int nhosts, const place_comm *comm,
		      double base, sim_metrics *m)
{
	int gmin = sim_bound_gmin(b, nhosts), used = sim_bound_groups(b, hosts, nhosts);
	const bound_ring *r;
	sim_flows f = {0};
	double bpf, t_ideal, iters;

	m->multi_group_heavy += used > 1;
	m->avoidable_multi_group += used > gmin;
	m->bound_multi_group_heavy += gmin > 1;
	if (nhosts < 1 || nhosts > b->H || !(r = bound_ring_of(b, nhosts)))
		return nhosts < 1 || nhosts > b->H ? 0 : -1;
	f.rails = r->rails;
	f.cable_gbps = r->cable_gbps;
	sim_ring_cost(b->net, &f, nhosts, comm->bytes_per_iter, &bpf, &t_ideal);
	iters = sim_life_iters(comm, base, t_ideal);
	m->bound_cross_leaf_bytes_heavy += iters * bpf * r->cross_leaf;
	m->bound_cross_group_bytes_heavy += iters * bpf * r->cross_group;
	return 0;
}
