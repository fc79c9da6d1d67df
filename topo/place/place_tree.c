/*
 * place_tree: Slurm 24.11 topology/tree's node selection (_eval_nodes_topo
 * in src/plugins/topology/tree/eval_nodes_tree.c), re-implemented on the
 * switch tree that the topology.conf written by topognn-discover describes,
 * so the `tree` policy is what an admin gets today on the same fabric.
 *
 * The tree: on a rail-optimized fabric (hosts with several rails) one
 * pseudo-switch per group (scalable unit) holding its hosts; otherwise one
 * switch per leaf holding the hosts cabled to it. Above them, one level-1
 * switch per set of leaves joined through spines, and, when a core level
 * joins several such sets, one level-2 switch above those. Distances are
 * Slurm's switch hop counts through the lowest common ancestor.
 *
 * Mirrored: top-switch choice (highest level with enough nodes, later switch
 * on ties), required nodes first and the rest of their leaf switches, then
 * leaf switches picked by _topo_choose_best_switch (closer to those already
 * used and fitting, else tightest fit, else the one with most nodes; ties
 * keep the earlier switch), nodes taken in node order, _decrement_node_cnt's
 * cumulative count, and --switches: an allocation over more leaf switches
 * than allowed retries with fewer nodes down to the minimum, then fails
 * (Slurm would make the job wait up to max-time; we have no clock).
 * Simplified: whole-node requests with one node weight (no scheduling
 * weights), CPU counts follow node counts, no GRES-per-job accounting, no
 * dragonfly mode.
 */
#include "place_internal.h"
#include "topo_uf.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TREE_INF INT_MAX

struct place_tree {
	int nsw, nleaf;        /* switches 0..nleaf-1 are level 0 */
	int *level, *parent;   /* parent -1: none */
	int *host_sw;          /* level-0 switch of each host, -1 none */
	int *sw_off, *sw_hosts; /* CSR: hosts of each level-0 switch, ascending */
	/* scratch */
	int *cnt, *required, *dist;
	uint8_t *sel, *in_top;
	int *uf;
};

void place_tree_free(place_tree *t)
{
	if (!t)
		return;
	free(t->level);
	free(t->parent);
	free(t->host_sw);
	free(t->sw_off);
	free(t->sw_hosts);
	free(t->cnt);
	free(t->required);
	free(t->dist);
	free(t->sel);
	free(t->in_top);
	free(t->uf);
	free(t);
}

/* Join level-0 switches that share a spine into components. */
static void join_components(place_tree *t, const place_cluster *c, int by_group)
{
	int *spine_owner = calloc((size_t)c->nvertices + 1, sizeof(int));

	for (int i = 0; i < t->nleaf; i++)
		t->uf[i] = i;
	if (!spine_owner)
		return;
	for (int v = 0; v < c->nvertices; v++)
		spine_owner[v] = -1;
	for (int l = 0; l < c->nleaves; l++) {
		int sw = by_group ? c->leaf_group[l] : l;

		if (sw < 0)
			continue;
		for (int i = c->leaf_spine_off[l]; i < c->leaf_spine_off[l + 1]; i++) {
			int s = c->leaf_spines[i];

			if (spine_owner[s] < 0)
				spine_owner[s] = sw;
			else
				topo_uf_union(t->uf, sw, spine_owner[s]);
		}
	}
	free(spine_owner);
}

/* A level-2 switch above the level-1 switches (or parentless level-0
 * switches) that the fabric joins further up (a core level), so that, as in
 * the topology.conf of a three-level fabric, one switch spans them all. */
static int add_top_level(place_tree *t, const place_cluster *c, int by_group)
{
	const topo_graph *g = c->g;
	int *uf = malloc(((size_t)c->nvertices + 1) * sizeof(int));
	int *top_of = NULL, nbase = t->nsw;

	if (!uf)
		return -1;
	for (int v = 0; v < c->nvertices; v++)
		uf[v] = v;
	for (size_t e = 0; e < topo_graph_nedges(g); e++) {
		const topo_edge *ed = topo_graph_edge(g, (int)e);

		if (ed->kind == TOPO_E_FABRIC && ed->state != TOPO_LINK_DOWN &&
		    topo_graph_vertex(g, ed->a)->kind == TOPO_V_SWITCH &&
		    topo_graph_vertex(g, ed->b)->kind == TOPO_V_SWITCH)
			topo_uf_union(uf, ed->a, ed->b);
	}
	top_of = malloc(((size_t)c->nvertices + 1) * sizeof(int));
	if (!top_of) {
		free(uf);
		return -1;
	}
	for (int v = 0; v < c->nvertices; v++)
		top_of[v] = -1;
	/* count, per fabric component, the topmost switches so far */
	for (int pass = 0; pass < 2; pass++) {
		for (int l = 0; l < c->nleaves; l++) {
			int sw = by_group ? c->leaf_group[l] : l, fc, up;

			if (sw < 0)
				continue;
			up = t->parent[sw] >= 0 ? t->parent[sw] : sw;
			if (t->parent[up] >= 0 && t->parent[up] != up)
				continue;
			fc = topo_uf_find(uf, c->leaf_vid[l]);
			if (pass == 0) {
				/* -1 none, -2 - x: one switch x so far, >= 0: several */
				if (top_of[fc] == -1)
					top_of[fc] = -2 - up;
				else if (top_of[fc] <= -2 && top_of[fc] != -2 - up)
					top_of[fc] = 0;
			} else if (top_of[fc] >= 0) {
				if (top_of[fc] == 0 || top_of[fc] < nbase) {
					top_of[fc] = t->nsw;
					t->level[t->nsw] = 2;
					t->parent[t->nsw] = -1;
					t->nsw++;
				}
				t->parent[up] = top_of[fc];
			}
		}
	}
	free(uf);
	free(top_of);
	return 0;
}

place_tree *place_tree_new(const place_cluster *c)
{
	place_tree *t = calloc(1, sizeof(*t));
	int by_group = c->nrails > 1, N = c->nhosts, k = 0, *comp_sw;

	if (!t)
		return NULL;
	t->nleaf = by_group ? c->ngroups : c->nleaves;
	t->host_sw = malloc((size_t)N * sizeof(int));
	t->sw_off = calloc((size_t)t->nleaf + 2, sizeof(int));
	t->sw_hosts = calloc((size_t)N + 1, sizeof(int));
	t->uf = calloc((size_t)t->nleaf + 1, sizeof(int));
	/* at most one level-1 and one level-2 switch per level-0 switch */
	t->level = calloc(3 * (size_t)t->nleaf + 1, sizeof(int));
	t->parent = calloc(3 * (size_t)t->nleaf + 1, sizeof(int));
	t->cnt = calloc(3 * (size_t)t->nleaf + 1, sizeof(int));
	t->required = calloc(3 * (size_t)t->nleaf + 1, sizeof(int));
	t->dist = calloc(3 * (size_t)t->nleaf + 1, sizeof(int));
	t->sel = calloc((size_t)N, 1);
	t->in_top = calloc((size_t)N, 1);
	if (!t->host_sw || !t->sw_off || !t->sw_hosts || !t->uf || !t->level || !t->parent ||
	    !t->cnt || !t->required || !t->dist || !t->sel || !t->in_top)
		goto fail;
	for (int h = 0; h < N; h++) {
		t->host_sw[h] = by_group ? c->host_group[h] : c->host_leaf[h * c->nrails];
		if (t->host_sw[h] >= 0)
			t->sw_off[t->host_sw[h] + 1]++;
	}
	for (int i = 0; i < t->nleaf; i++)
		t->sw_off[i + 1] += t->sw_off[i];
	for (int h = 0; h < N; h++)
		if (t->host_sw[h] >= 0)
			t->sw_hosts[t->sw_off[t->host_sw[h]] + t->cnt[t->host_sw[h]]++] = h;
	join_components(t, c, by_group);
	/* one level-1 switch per component of more than one level-0 switch */
	comp_sw = t->dist; /* scratch: component root -> its level-1 switch */
	for (int i = 0; i < t->nleaf; i++)
		comp_sw[i] = -1;
	t->nsw = t->nleaf;
	for (int i = 0; i < t->nleaf; i++) {
		int root = topo_uf_find(t->uf, i);

		t->parent[i] = -1;
		k = 0;
		for (int j = 0; j < t->nleaf && k < 2; j++)
			k += topo_uf_find(t->uf, j) == root;
		if (k < 2)
			continue;
		if (comp_sw[root] < 0) {
			comp_sw[root] = t->nsw;
			t->level[t->nsw] = 1;
			t->parent[t->nsw] = -1;
			t->nsw++;
		}
		t->parent[i] = comp_sw[root];
	}
	if (add_top_level(t, c, by_group) < 0)
		goto fail;
	return t;
fail:
	place_tree_free(t);
	return NULL;
}

/* Slurm's switches_dist: hops between two switches through their lowest
 * common ancestor; unreachable without one. */
static int sw_dist(const place_tree *t, int a, int b)
{
	int da = 0;

	for (int x = a; x >= 0; x = t->parent[x], da++) {
		int db = 0;

		for (int y = b; y >= 0; y = t->parent[y], db++)
			if (x == y)
				return da + db;
	}
	return TREE_INF;
}

static void add_dist(place_tree *t, int sw)
{
	for (int i = 0; i < t->nsw; i++) {
		int d = sw_dist(t, sw, i);

		t->dist[i] = (d == TREE_INF || t->dist[i] == TREE_INF) ? TREE_INF : t->dist[i] + d;
	}
}

static int enough_nodes(int avail, int rem, int min, int req)
{
	int needed = req > min ? rem + min - req : rem;

	return avail >= needed;
}

/* _topo_compare_switches: 1 if i fits better, -1 if j, 0 if neither. */
static int compare_switches(const place_tree *t, int i, int j, int rem, int *i_fit_out)
{
	for (;;) {
		int i_fit = t->cnt[i] >= rem, j_fit = t->cnt[j] >= rem;

		*i_fit_out = i_fit;
		if (i_fit && j_fit) {
			if (t->cnt[i] < t->cnt[j])
				return 1;
			if (t->cnt[i] > t->cnt[j])
				return -1;
			break;
		} else if (i_fit) {
			return 1;
		} else if (j_fit) {
			return -1;
		}
		if (t->parent[i] != t->parent[j] && t->parent[i] >= 0 && t->parent[j] >= 0) {
			i = t->parent[i];
			j = t->parent[j];
			continue;
		}
		break;
	}
	if (t->cnt[i] > t->cnt[j])
		return 1;
	if (t->cnt[i] < t->cnt[j])
		return -1;
	if (t->level[i] < t->level[j])
		return 1;
	if (t->level[i] > t->level[j])
		return -1;
	return 0;
}

static void choose_best_switch(const place_tree *t, int rem, int i, int *best)
{
	int tcs, i_fit = 0;

	if (*best == -1 || t->dist[i] == TREE_INF || !t->cnt[i]) {
		if (t->cnt[i] && t->dist[i] < TREE_INF)
			*best = i;
		return;
	}
	tcs = compare_switches(t, i, *best, rem, &i_fit);
	if ((t->dist[i] < t->dist[*best] && i_fit) || (t->dist[i] == t->dist[*best] && tcs > 0))
		*best = i;
}

/* _decrement_node_cnt: from switch sw up to the root. */
static void decrement_cnt(place_tree *t, int taken, int sw)
{
	for (int i = sw; i >= 0; i = t->parent[i])
		t->cnt[i] = t->cnt[i] <= taken ? 0 : t->cnt[i] - taken;
}

static int host_under(const place_tree *t, int h, int sw)
{
	for (int s = t->host_sw[h]; s >= 0; s = t->parent[s])
		if (s == sw)
			return 1;
	return 0;
}

/* Count usable hosts under each switch, restricted to in_top when top>=0. */
static void count_switches(place_tree *t, const uint8_t *usable, int restrict_top)
{
	memset(t->cnt, 0, (size_t)t->nsw * sizeof(int));
	for (int i = 0; i < t->nleaf; i++)
		for (int k = t->sw_off[i]; k < t->sw_off[i + 1]; k++) {
			int h = t->sw_hosts[k];

			if (!usable[h] || (restrict_top && !t->in_top[h]))
				continue;
			for (int s = i; s >= 0; s = t->parent[s])
				t->cnt[s]++;
		}
}

/* One pass of _eval_nodes_topo for `req` nodes. Returns selected count, or
 * -1 with reason. */
static int eval_once(place_tree *t, const place_cluster *c, const uint8_t *usable,
		     const place_request *r, int req, char *reason, size_t len)
{
	int N = c->nhosts, min = r->min_hosts;
	int rem = req > min ? req : min, min_rem = min, max_nodes = req;
	int top = -1, nsel = 0, best_cnt = 0, prev;

	memset(t->sel, 0, (size_t)N);
	memset(t->required, 0, (size_t)t->nsw * sizeof(int));
	for (int i = 0; i < r->nrequired; i++) {
		int h = r->required[i];

		if (t->sel[h])
			continue;
		if (t->host_sw[h] < 0) {
			snprintf(reason, len, "required host %s is on no switch of the tree",
				 c->host_name[h]);
			return -1;
		}
		t->sel[h] = 1;
		nsel++;
		rem--;
		min_rem--;
		max_nodes--;
	}
	count_switches(t, usable, 0);
	for (int i = 0; i < t->nsw; i++) {
		int has_req = 0;

		for (int k = 0; k < r->nrequired && !has_req; k++)
			has_req = host_under(t, r->required[k], i);
		if (has_req) {
			t->required[i] = 1;
			if (top == -1 || t->level[i] > t->level[top])
				top = i;
		}
		if (!enough_nodes(t->cnt[i], rem, min, req))
			continue;
		if (!r->nrequired && (top == -1 || t->level[i] >= t->level[top]))
			top = i;
	}
	if (top == -1) {
		snprintf(reason, len, "no switch of the tree has %d usable hosts", rem);
		return -1;
	}
	for (int k = 0; k < r->nrequired; k++)
		if (!host_under(t, r->required[k], top)) {
			snprintf(reason, len, "the required hosts do not share a switch of the tree");
			return -1;
		}
	for (int h = 0; h < N; h++)
		t->in_top[h] = (uint8_t)host_under(t, h, top);
	if (rem <= 0)
		return nsel;
	if (max_nodes <= 0) {
		snprintf(reason, len, "the required hosts exceed the host limit");
		return -1;
	}
	for (int h = 0; h < N; h++)
		best_cnt += usable[h] && t->in_top[h] && !t->sel[h];
	if (!enough_nodes(best_cnt, rem, min, req)) {
		snprintf(reason, len, "insufficient hosts under the tree's top switch");
		return -1;
	}
	count_switches(t, usable, 1);
	/* the rest of the leaf switches that hold required nodes */
	if (r->nrequired) {
		int taken = 0;

		for (int i = 0; i < t->nleaf; i++) {
			if (!t->required[i])
				continue;
			for (int k = t->sw_off[i]; k < t->sw_off[i + 1]; k++) {
				int h = t->sw_hosts[k];

				if (t->sel[h] || !usable[h] || !t->in_top[h])
					continue;
				t->sel[h] = 1;
				nsel++;
				taken++;
				rem--;
				min_rem--;
				max_nodes--;
				if (rem <= 0)
					return nsel;
			}
			decrement_cnt(t, taken, i);
		}
	}
	memset(t->dist, 0, (size_t)t->nsw * sizeof(int));
	for (int i = 0; i < t->nsw; i++)
		if (t->required[i])
			add_dist(t, i);
	prev = rem + 1;
	for (;;) {
		int best = -1;

		if (prev == rem)
			break;
		prev = rem;
		for (int i = 0; i < t->nleaf; i++)
			if (!t->required[i])
				choose_best_switch(t, rem, i, &best);
		if (best == -1)
			break;
		add_dist(t, best);
		for (int k = t->sw_off[best]; k < t->sw_off[best + 1] && max_nodes > 0; k++) {
			int h = t->sw_hosts[k];

			if (t->sel[h] || !usable[h] || !t->in_top[h])
				continue;
			t->sel[h] = 1;
			nsel++;
			rem--;
			min_rem--;
			max_nodes--;
			if (rem <= 0)
				return nsel;
		}
		decrement_cnt(t, t->cnt[best], best);
		t->cnt[best] = 0;
	}
	if (min_rem <= 0)
		return nsel;
	snprintf(reason, len, "the tree's leaf switches ran out of usable hosts");
	return -1;
}

static int leaf_switches_used(const place_tree *t, const place_cluster *c)
{
	int n = 0;

	for (int i = 0; i < t->nleaf; i++)
		for (int k = t->sw_off[i]; k < t->sw_off[i + 1]; k++)
			if (t->sel[t->sw_hosts[k]]) {
				n++;
				break;
			}
	return n;
}

int place_tree_select(place_tree *t, const place_cluster *c, const uint8_t *usable,
		      const place_request *r, int *out, char *reason, size_t len)
{
	int maxh = r->max_hosts > 0 ? r->max_hosts : r->min_hosts, n = -1;

	for (int req = maxh; req >= r->min_hosts; req--) {
		int used;

		n = eval_once(t, c, usable, r, req, reason, len);
		if (n < 0)
			return -1;
		if (r->max_groups <= 0)
			break;
		used = leaf_switches_used(t, c);
		if (used <= r->max_groups)
			break;
		if (req == r->min_hosts) {
			snprintf(reason, len,
				 "Slurm's tree choice uses %d leaf switches, more than the %d allowed",
				 used, r->max_groups);
			return -1;
		}
	}
	n = 0;
	for (int h = 0; h < c->nhosts; h++)
		if (t->sel[h])
			out[n++] = h;
	return n;
}
