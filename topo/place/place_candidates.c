/*
 * place_candidates: the host sets a decision chooses among.
 *
 * From the hosts usable by a request, up to K distinct sets in a fixed order:
 *   1. group-best-fit: inside one group, the groups that fit, tightest first;
 *   2. leaf-best-fit: inside one leaf switch, tightest first;
 *   3. cover: fewest groups: whole groups with the most free hosts first,
 *      then the remainder best fit (each further variant puts the remainder
 *      in the next-tightest group);
 *   4. tree: Slurm's topology/tree choice (place_tree.c);
 *   5. linear: Slurm's select/linear consecutive best fit.
 * With NVLink domains, first domain-best-fit (inside one domain, tightest
 * first) or, for a job larger than any domain's free hosts, domain-cover
 * (whole free domains, the groups with the most of them first, so under the
 * fewest leaves; the remainder in the tightest domain it fits in). For a
 * SHARP user on a fabric with SHARP, after 2, sharp-best-fit: the usable
 * hosts under one SHARP root switch (place_sharp.c), tightest root first,
 * its leaves with the most free hosts first.
 * Later duplicates of an earlier set are dropped (tree and linear then point
 * to the earlier set). Sets spanning more than max_groups groups are dropped.
 * All memory is allocated by place_cands_init(); nothing here allocates.
 */
#include "place_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int place_cands_init(place_cands *k, const place_cluster *c, int cap)
{
	size_t N = (size_t)c->nhosts;
	size_t G = (size_t)c->ngroups + 1, L = (size_t)c->nleaves + 1;
	size_t T = N > G ? N : G;

	memset(k, 0, sizeof(*k));
	k->cap = cap;
	k->set = calloc((size_t)cap, sizeof(*k->set));
	k->store = malloc((size_t)cap * N * sizeof(int));
	k->usable = calloc(N, 1);
	k->taken = calloc(N, 1);
	k->group_free = calloc(G, sizeof(int));
	k->group_order = calloc(G, sizeof(int));
	k->leaf_free = calloc(L, sizeof(int));
	k->leaf_order = calloc(L, sizeof(int));
	k->tmp = calloc(T > L ? T : L, sizeof(int));
	k->gused = calloc(G, 1);
	k->root_free = calloc((size_t)c->nroots + 1, sizeof(int));
	k->root_order = calloc((size_t)c->nroots + 1, sizeof(int));
	k->dom_free = calloc((size_t)c->ndomains + 1, sizeof(int));
	k->dom_order = calloc((size_t)c->ndomains + 1, sizeof(int));
	k->dom_mark = calloc((size_t)c->ndomains + 1, sizeof(int));
	if (!k->set || !k->store || !k->usable || !k->taken || !k->group_free || !k->group_order ||
	    !k->leaf_free || !k->leaf_order || !k->tmp || !k->gused || !k->root_free ||
	    !k->root_order || !k->dom_free || !k->dom_order || !k->dom_mark) {
		place_cands_free(k);
		return -1;
	}
	for (int i = 0; i < cap; i++)
		k->set[i].hosts = k->store + (size_t)i * N;
	return 0;
}

void place_cands_free(place_cands *k)
{
	free(k->set);
	free(k->store);
	free(k->usable);
	free(k->taken);
	free(k->group_free);
	free(k->group_order);
	free(k->leaf_free);
	free(k->leaf_order);
	free(k->tmp);
	free(k->gused);
	free(k->root_free);
	free(k->root_order);
	free(k->dom_free);
	free(k->dom_order);
	free(k->dom_mark);
	memset(k, 0, sizeof(*k));
}

static int host_usable(const place_state *s, const place_request *r, int h)
{
	if (s->flags[h] & (PLACE_HOST_DOWN | PLACE_HOST_DRAIN))
		return 0;
	if (r->allowed && !r->allowed[h])
		return 0;
	if (r->exclusive)
		return s->njobs[h] == 0 && s->free_gpus[h] == s->total_gpus[h] &&
		       s->free_cores[h] == s->total_cores[h] && s->free_gpus[h] >= r->gpus_per_host &&
		       s->free_cores[h] >= r->cores_per_host;
	return s->free_gpus[h] >= r->gpus_per_host && s->free_cores[h] >= r->cores_per_host;
}

static const char *unusable_why(const place_state *s, const place_request *r, int h)
{
	if (s->flags[h] & PLACE_HOST_DOWN)
		return "is down";
	if (s->flags[h] & PLACE_HOST_DRAIN)
		return "is drained";
	if (r->allowed && !r->allowed[h])
		return "is not offered to the job";
	if (r->exclusive && s->njobs[h])
		return "is in use";
	return "lacks the free GPUs/cores asked for";
}

static int count_leaf_once(const place_cluster *c, int h, int r)
{
	return c->host_leaf_first[h * c->nrails + r] ? c->host_leaf[h * c->nrails + r] : -1;
}

int place_cands_prepare(place_cands *k, const place_cluster *c, const place_state *s,
			const place_request *r, char *reason, size_t len)
{
	int N = c->nhosts, maxh = r->max_hosts > 0 ? r->max_hosts : r->min_hosts;
	int req_groups = 0;

	k->n = 0;
	k->tree_index = k->linear_index = -1;
	k->tree_reason[0] = '\0';
	if (r->min_hosts <= 0 || maxh < r->min_hosts || r->gpus_per_host < 0 ||
	    r->cores_per_host < 0 || r->nrequired < 0 || r->nexcluded < 0) {
		snprintf(reason, len, "invalid request: %d..%d hosts, %d GPUs and %d cores per host",
			 r->min_hosts, maxh, r->gpus_per_host, r->cores_per_host);
		return -1;
	}
	memset(k->group_free, 0, (size_t)c->ngroups * sizeof(int));
	memset(k->leaf_free, 0, (size_t)c->nleaves * sizeof(int));
	k->nusable = 0;
	for (int h = 0; h < N; h++)
		k->usable[h] = (uint8_t)host_usable(s, r, h);
	for (int i = 0; i < r->nexcluded; i++)
		if (r->excluded[i] >= 0 && r->excluded[i] < N)
			k->usable[r->excluded[i]] = 0;
	for (int i = 0; i < r->nrequired; i++) {
		int h = r->required[i];

		if (h < 0 || h >= N) {
			snprintf(reason, len, "required host index %d is not in the cluster", h);
			return -1;
		}
		if (!k->usable[h]) {
			int excl = 0;

			for (int j = 0; j < r->nexcluded; j++)
				excl |= r->excluded[j] == h;
			snprintf(reason, len, "required host %s %s", c->host_name[h],
				 excl ? "is also excluded" : unusable_why(s, r, h));
			return -1;
		}
	}
	for (int h = 0; h < N; h++) {
		if (!k->usable[h])
			continue;
		k->nusable++;
		k->group_free[c->host_group[h]]++;
		for (int q = 0; q < c->nrails; q++) {
			int l = count_leaf_once(c, h, q);

			if (l >= 0)
				k->leaf_free[l]++;
		}
	}
	if (k->nusable < r->min_hosts) {
		snprintf(reason, len, "needs %d hosts with %d free GPUs%s; %d are", r->min_hosts,
			 r->gpus_per_host, r->exclusive ? " (whole host)" : "", k->nusable);
		return -1;
	}
	k->target = maxh < k->nusable ? maxh : k->nusable;
	/* required hosts: distinct count and groups */
	memset(k->taken, 0, (size_t)N);
	for (int i = 0; i < r->nrequired; i++)
		k->taken[r->required[i]] = 1;
	{
		int nreq = 0;

		for (int g = 0; g < c->ngroups; g++)
			k->group_order[g] = 0;
		for (int i = 0; i < r->nrequired; i++) {
			int h = r->required[i];

			if (k->taken[h] == 1) {
				k->taken[h] = 2;
				nreq++;
				if (!k->group_order[c->host_group[h]]++)
					req_groups++;
			}
		}
		memset(k->taken, 0, (size_t)N);
		if (nreq > maxh) {
			snprintf(reason, len, "%d hosts are required but at most %d are asked for",
				 nreq, maxh);
			return -1;
		}
	}
	k->req_group_count = req_groups;
	if (r->max_groups > 0 && req_groups > r->max_groups) {
		snprintf(reason, len, "the required hosts span %d groups but at most %d are allowed",
			 req_groups, r->max_groups);
		return -1;
	}
	return 0;
}

/* ---- building one set ---------------------------------------------------- */

static uint64_t set_hash(const int *v, int n)
{
	uint64_t h = 1469598103934665603ull;

	for (int i = 0; i < n; i++) {
		h ^= (uint64_t)(unsigned)v[i];
		h *= 1099511628211ull;
	}
	return h;
}

typedef struct builder {
	place_cands *k;
	const place_cluster *c;
	const place_request *r;
	place_candidate *cur;
} builder;

static void b_start(builder *b)
{
	b->cur = &b->k->set[b->k->n];
	b->cur->nhosts = 0;
}

static void b_take(builder *b, int h)
{
	if (b->k->taken[h] || b->cur->nhosts >= b->k->target)
		return;
	b->k->taken[h] = 1;
	b->cur->hosts[b->cur->nhosts++] = h;
}

static void b_take_required(builder *b)
{
	for (int i = 0; i < b->r->nrequired; i++)
		b_take(b, b->r->required[i]);
}

/* Take usable hosts of group g in host order until the set is full. */
static void b_take_group(builder *b, int g)
{
	int first = b->c->group_first[g], end = first + b->c->group_nhosts[g];

	for (int h = first; h < end && b->cur->nhosts < b->k->target; h++)
		if (b->k->usable[h])
			b_take(b, h);
}

static int groups_of(const place_cluster *c, const int *hosts, int n)
{
	int cnt = 0, last = -1;

	/* hosts are sorted and hosts are ordered by group */
	for (int i = 0; i < n; i++)
		if (c->host_group[hosts[i]] != last) {
			last = c->host_group[hosts[i]];
			cnt++;
		}
	return cnt;
}

/* Finish the current set: sort, check, dedupe. Returns its index, or -1. */
static int b_finish(builder *b, const char *kind)
{
	place_candidate *s = b->cur;
	place_cands *k = b->k;

	for (int i = 0; i < s->nhosts; i++)
		k->taken[s->hosts[i]] = 0;
	if (s->nhosts < b->k->target && s->nhosts < b->r->min_hosts)
		return -1;
	place_sort_ints(s->hosts, s->nhosts);
	if (b->r->max_groups > 0 && groups_of(b->c, s->hosts, s->nhosts) > b->r->max_groups)
		return -1;
	s->hash = set_hash(s->hosts, s->nhosts);
	for (int i = 0; i < k->n; i++)
		if (k->set[i].hash == s->hash && k->set[i].nhosts == s->nhosts &&
		    !memcmp(k->set[i].hosts, s->hosts, (size_t)s->nhosts * sizeof(int)))
			return i;
	s->kind = kind;
	s->cost = s->comm_time_s = s->frag_cost = 0;
	return k->n++;
}

/* ---- kinds --------------------------------------------------------------- */

/* The one group holding the required hosts, -1 for none, -2 for several. */
static int required_scope_group(const builder *b)
{
	int g = -1;

	for (int i = 0; i < b->r->nrequired; i++) {
		int hg = b->c->host_group[b->r->required[i]];

		if (g >= 0 && hg != g)
			return -2;
		g = hg;
	}
	return g;
}

/* Keep in order[0..k) the `k` items with the fewest free hosts (ties by
 * index), ascending, from the n candidates given in order[0..n) (ascending
 * index). Insertion into a short sorted prefix: O(n k), no full sort.
 * Returns the number kept. */
static int tightest(int *order, int n, int k, const int *free_cnt)
{
	int kept = 0;

	for (int i = 0; i < n; i++) {
		int v = order[i], j;

		if (kept == k && free_cnt[v] >= free_cnt[order[kept - 1]])
			continue;
		j = kept < k ? kept++ : kept - 1;
		while (j > 0 && free_cnt[order[j - 1]] > free_cnt[v]) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = v;
	}
	return kept;
}

static void gen_group_fit(builder *b, int budget)
{
	place_cands *k = b->k;
	const place_cluster *c = b->c;
	int n = 0, rg = required_scope_group(b);

	if (rg == -2)
		return;
	for (int g = 0; g < c->ngroups; g++)
		if (k->group_free[g] >= k->target && (rg < 0 || g == rg))
			k->group_order[n++] = g;
	n = tightest(k->group_order, n, budget, k->group_free);
	for (int i = 0; i < n && budget > 0 && k->n < k->cap - 1; i++) {
		b_start(b);
		b_take_required(b);
		b_take_group(b, k->group_order[i]);
		if (b_finish(b, "group-best-fit") == k->n - 1)
			budget--;
	}
}

static int host_on_leaf(const place_cluster *c, int h, int l)
{
	for (int q = 0; q < c->nrails; q++)
		if (c->host_leaf[h * c->nrails + q] == l)
			return 1;
	return 0;
}

static void gen_leaf_fit(builder *b, int budget)
{
	place_cands *k = b->k;
	const place_cluster *c = b->c;
	int n = 0;

	for (int l = 0; l < c->nleaves; l++) {
		int ok = k->leaf_free[l] >= k->target;

		for (int i = 0; ok && i < b->r->nrequired; i++)
			ok = host_on_leaf(c, b->r->required[i], l);
		if (ok)
			k->leaf_order[n++] = l;
	}
	n = tightest(k->leaf_order, n, budget, k->leaf_free);
	for (int i = 0; i < n && budget > 0 && k->n < k->cap - 1; i++) {
		int l = k->leaf_order[i], g = c->leaf_group[l];
		int first = g >= 0 ? c->group_first[g] : 0;
		int end = g >= 0 ? first + c->group_nhosts[g] : c->nhosts;

		b_start(b);
		b_take_required(b);
		for (int h = first; h < end && b->cur->nhosts < k->target; h++)
			if (k->usable[h] && host_on_leaf(c, h, l))
				b_take(b, h);
		if (b_finish(b, "leaf-best-fit") == k->n - 1)
			budget--;
	}
}

/* Covers with the fewest groups: the groups of required hosts, then whole
 * groups with the most free hosts until the remainder fits in one group;
 * variant v puts the remainder in the v-th tightest group it fits in. The
 * whole-group part is the same for every variant, so it is built once. */
static void gen_cover(builder *b, int budget, uint8_t *gused)
{
	place_cands *k = b->k;
	const place_cluster *c = b->c;
	int base_n, fit = 0, rem;
	int *base = k->tmp; /* the shared part, host indices */

	memset(gused, 0, (size_t)c->ngroups);
	b_start(b);
	b_take_required(b);
	for (int i = 0; i < b->r->nrequired; i++) {
		int g = c->host_group[b->r->required[i]];

		if (!gused[g]) {
			gused[g] = 1;
			b_take_group(b, g);
		}
	}
	for (;;) {
		int big = -1;

		rem = k->target - b->cur->nhosts;
		fit = 0;
		if (rem <= 0)
			break;
		for (int g = 0; g < c->ngroups; g++) {
			if (gused[g] || !k->group_free[g])
				continue;
			if (k->group_free[g] >= rem)
				k->group_order[fit++] = g;
			if (big < 0 || k->group_free[g] > k->group_free[big])
				big = g;
		}
		if (fit || big < 0)
			break;
		gused[big] = 1;
		b_take_group(b, big);
	}
	base_n = b->cur->nhosts;
	memcpy(base, b->cur->hosts, (size_t)base_n * sizeof(int));
	if (rem <= 0 || !fit) {
		b_finish(b, "cover");
		return;
	}
	for (int i = 0; i < base_n; i++)
		k->taken[base[i]] = 0;
	fit = tightest(k->group_order, fit, budget, k->group_free);
	for (int v = 0; v < fit && budget > 0 && k->n < k->cap - 1; v++) {
		int before = k->n;

		b_start(b);
		for (int i = 0; i < base_n; i++)
			b_take(b, base[i]);
		b_take_group(b, k->group_order[v]);
		if (b_finish(b, "cover") == before)
			budget--;
	}
}

/* Slurm's select/linear consecutive best fit over host order. Runs of
 * consecutive usable hosts (a required host belongs to its run but is
 * already taken); the run picked is: any first, one with a required host
 * over one without, a sufficient one over an insufficient one, the smaller
 * of two sufficient ones, the larger of two insufficient ones. A run with a
 * required host is filled from that host forward then backward, others from
 * their start. Repeat until enough hosts. Slurm compares CPU counts where
 * this compares host counts (the same for whole-host requests). */
static void gen_linear(builder *b)
{
	place_cands *k = b->k;
	const place_cluster *c = b->c;
	int *run_start = k->tmp; /* reuse: runs are at most nhosts/1 */
	int N = c->nhosts, nruns = 0;

	b_start(b);
	b_take_required(b);
	/* runs: encoded as start indices; lengths recomputed on demand */
	for (int h = 0; h < N; h++) {
		int in = k->usable[h];

		if (in && (h == 0 || !k->usable[h - 1]))
			run_start[nruns++] = h;
	}
	while (b->cur->nhosts < k->target) {
		int best = -1, best_nodes = 0, best_req = -1, best_suff = 0;
		int rem = k->target - b->cur->nhosts;

		for (int i = 0; i < nruns; i++) {
			int nodes = 0, req = -1, suff;

			for (int h = run_start[i]; h < N && k->usable[h]; h++) {
				if (k->taken[h]) {
					if (req < 0)
						req = h;
				} else {
					nodes++;
				}
			}
			if (!nodes)
				continue;
			suff = nodes >= rem;
			if (best_nodes == 0 || (best_req < 0 && req >= 0) || (suff && !best_suff) ||
			    (suff && nodes < best_nodes) || (!suff && nodes > best_nodes)) {
				best = i;
				best_nodes = nodes;
				best_req = req;
				best_suff = suff;
			}
		}
		if (best < 0)
			break;
		if (best_req >= 0) {
			for (int h = best_req; h < N && k->usable[h]; h++)
				b_take(b, h);
			for (int h = best_req - 1; h >= run_start[best] && h >= 0; h--)
				b_take(b, h);
		} else {
			for (int h = run_start[best]; h < N && k->usable[h]; h++)
				b_take(b, h);
		}
	}
}

/* ---- NVLink domains ------------------------------------------------------ */

static int domain_group(const place_cluster *c, int d)
{
	return c->host_group[c->domain_hosts[c->domain_off[d]]];
}

/* Take usable hosts of domain d until the set is full. */
static void b_take_domain(builder *b, int d)
{
	const place_cluster *c = b->c;

	for (int i = c->domain_off[d]; i < c->domain_off[d + 1] && b->cur->nhosts < b->k->target;
	     i++)
		if (b->k->usable[c->domain_hosts[i]])
			b_take(b, c->domain_hosts[i]);
}

/* Whole free domains, groups with the most of them first, then the
 * remainder in the tightest domain it fits in (see the top). */
static void gen_domain_cover(builder *b)
{
	place_cands *k = b->k;
	const place_cluster *c = b->c;
	int *gwhole = k->tmp, rem, best;

	b_start(b);
	for (int g = 0; g < c->ngroups; g++)
		gwhole[g] = 0;
	for (int d = 0; d < c->ndomains; d++)
		if (k->dom_free[d] > 0 && k->dom_free[d] == place_cluster_domain_nhosts(c, d))
			gwhole[domain_group(c, d)] += k->dom_free[d];
	while ((rem = k->target - b->cur->nhosts) > 0) {
		int g = -1;

		for (int i = 0; i < c->ngroups; i++)
			if (gwhole[i] > 0 && (g < 0 || gwhole[i] > gwhole[g]))
				g = i;
		if (g < 0)
			break;
		gwhole[g] = 0;
		for (int d = 0; d < c->ndomains && rem > 0; d++)
			if (domain_group(c, d) == g && k->dom_free[d] > 0 &&
			    k->dom_free[d] == place_cluster_domain_nhosts(c, d) && k->dom_free[d] <= rem) {
				b_take_domain(b, d);
				rem -= k->dom_free[d];
				k->dom_free[d] = 0; /* taken */
			}
	}
	best = -1;
	for (int d = 0; rem > 0 && d < c->ndomains; d++)
		if (k->dom_free[d] >= rem && (best < 0 || k->dom_free[d] < k->dom_free[best]))
			best = d;
	if (best >= 0)
		b_take_domain(b, best);
	for (int d = 0; d < c->ndomains && b->cur->nhosts < k->target; d++)
		if (k->dom_free[d] > 0)
			b_take_domain(b, d);
	b_finish(b, "domain-cover");
}

static void gen_domain_fit(builder *b, int budget)
{
	place_cands *k = b->k;
	const place_cluster *c = b->c;
	int n = 0;

	if (c->ndomains == 0)
		return;
	for (int d = 0; d < c->ndomains; d++) {
		k->dom_free[d] = 0;
		for (int i = c->domain_off[d]; i < c->domain_off[d + 1]; i++)
			k->dom_free[d] += k->usable[c->domain_hosts[i]];
	}
	for (int d = 0; d < c->ndomains; d++) {
		int ok = k->dom_free[d] >= k->target;

		for (int i = 0; ok && i < b->r->nrequired; i++)
			ok = c->host_domain[b->r->required[i]] == d;
		if (ok)
			k->dom_order[n++] = d;
	}
	n = tightest(k->dom_order, n, budget, k->dom_free);
	for (int i = 0; i < n && budget > 0 && k->n < k->cap - 1; i++) {
		b_start(b);
		b_take_required(b);
		b_take_domain(b, k->dom_order[i]);
		if (b_finish(b, "domain-best-fit") == k->n - 1)
			budget--;
	}
	if (n == 0 && b->r->nrequired == 0 && k->n < k->cap - 1)
		gen_domain_cover(b);
}

/* ---- SHARP --------------------------------------------------------------- */

/* Usable hosts under SHARP root x (each once, whatever its rails). */
static int root_free_hosts(place_cands *k, const place_cluster *c, int x)
{
	int cnt = 0;

	for (int pass = 0; pass < 2; pass++)
		for (int i = c->root_leaf_off[x]; i < c->root_leaf_off[x + 1]; i++) {
			int l = c->root_leaves[i];

			for (int j = c->leaf_host_off[l]; j < c->leaf_host_off[l + 1]; j++) {
				int h = c->leaf_hosts[j];

				if (pass == 1) {
					k->taken[h] = 0;
				} else if (k->usable[h] && !k->taken[h]) {
					k->taken[h] = 1;
					cnt++;
				}
			}
		}
	return cnt;
}

static void gen_sharp_fit(builder *b, int budget)
{
	place_cands *k = b->k;
	const place_cluster *c = b->c;
	int n = 0;

	if (!b->r->comm.sharp || !c->has_sharp)
		return;
	for (int x = 0; x < c->nroots; x++) {
		k->root_free[x] = root_free_hosts(k, c, x);
		if (k->root_free[x] >= k->target)
			k->root_order[n++] = x;
	}
	n = tightest(k->root_order, n, budget, k->root_free);
	for (int i = 0; i < n && budget > 0 && k->n < k->cap - 1; i++) {
		int x = k->root_order[i], nl = 0, *leaves = k->tmp;

		for (int j = c->root_leaf_off[x]; j < c->root_leaf_off[x + 1]; j++)
			leaves[nl++] = c->root_leaves[j];
		b_start(b);
		b_take_required(b);
		while (b->cur->nhosts < k->target && nl > 0) { /* most free leaf first */
			int m = 0, l;

			for (int j = 1; j < nl; j++)
				if (k->leaf_free[leaves[j]] > k->leaf_free[leaves[m]])
					m = j;
			l = leaves[m];
			leaves[m] = leaves[--nl];
			for (int j = c->leaf_host_off[l]; j < c->leaf_host_off[l + 1]; j++)
				if (k->usable[c->leaf_hosts[j]])
					b_take(b, c->leaf_hosts[j]);
		}
		if (b_finish(b, "sharp-best-fit") == k->n - 1)
			budget--;
	}
}

int place_cands_generate(place_cands *k, const place_cluster *c, const place_request *r,
			 place_tree *tree)
{
	builder b = { k, c, r, NULL };
	int K = k->cap - 1, each = (K - 2) / 3 > 0 ? (K - 2) / 3 : 1;
	int idx;

	k->n = 0;
	gen_domain_fit(&b, each);
	gen_group_fit(&b, each);
	gen_leaf_fit(&b, each);
	gen_sharp_fit(&b, each);
	gen_cover(&b, K - 2 - k->n > 0 ? K - 2 - k->n : 1, k->gused);
	/* tree */
	if (k->n < k->cap - 1 && tree) {
		b_start(&b);
		b.cur->nhosts = place_tree_select(tree, c, k->usable, r, b.cur->hosts,
						  k->tree_reason, sizeof(k->tree_reason));
		if (b.cur->nhosts < 0) {
			b.cur->nhosts = 0;
		} else {
			idx = b_finish(&b, "tree");
			if (idx < 0)
				snprintf(k->tree_reason, sizeof(k->tree_reason),
					 "Slurm's tree choice spans more than %d groups", r->max_groups);
			k->tree_index = idx;
		}
	}
	if (k->n < k->cap - 1) {
		gen_linear(&b);
		k->linear_index = b_finish(&b, "linear");
	}
	return k->n;
}

/* ---- random -------------------------------------------------------------- */

static uint64_t rng_next(uint64_t *st)
{
	/* splitmix64: small, seedable, reproducible */
	uint64_t z = (*st += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

int place_cands_random(place_cands *k, const place_cluster *c, const place_request *r,
		       uint64_t *rng)
{
	builder b = { k, c, r, NULL };
	int n = 0;

	if (r->max_groups > 0) {
		/* a random pick among the sets that honour max_groups */
		if (k->n == 0)
			return -1;
		return (int)(rng_next(rng) % (uint64_t)k->n);
	}
	if (k->n >= k->cap)
		return -1;
	b_start(&b);
	b_take_required(&b);
	for (int h = 0; h < c->nhosts; h++)
		if (k->usable[h] && !k->taken[h])
			k->tmp[n++] = h;
	/* partial Fisher-Yates */
	while (b.cur->nhosts < k->target && n > 0) {
		int i = (int)(rng_next(rng) % (uint64_t)n);

		b_take(&b, k->tmp[i]);
		k->tmp[i] = k->tmp[--n];
	}
	return b_finish(&b, "random");
}

/* ---- shape --------------------------------------------------------------- */

void place_set_shape(const place_cluster *c, const int *hosts, int n, int *stamp, int *groups,
		     int *leaves, int *diameter)
{
	int *gs = stamp, *ls = stamp + c->ngroups, *cs = ls + c->nleaves;
	int *clist = cs + c->nclasses, ng = 0, nl = 0, nc = 0, d = 0;

	for (int i = 0; i < n; i++) {
		int h = hosts[i];

		if (!gs[c->host_group[h]]++)
			ng++;
		for (int q = 0; q < c->nrails; q++) {
			int l = c->host_leaf[h * c->nrails + q];

			if (l >= 0 && !ls[l]++)
				nl++;
		}
		if (!cs[c->host_class[h]]++)
			clist[nc++] = c->host_class[h];
	}
	if (n > 1)
		d = nc == 1 ? 2 : 0;
	for (int i = 0; i < nc && d >= 0; i++)
		for (int j = i + 1; j < nc; j++) {
			int hd = place_cluster_class_hops(c, clist[i], clist[j]);

			if (hd < 0) {
				d = -1;
				break;
			}
			if (hd > d)
				d = hd;
		}
	for (int i = 0; i < n; i++) {
		int h = hosts[i];

		gs[c->host_group[h]] = 0;
		cs[c->host_class[h]] = 0;
		for (int q = 0; q < c->nrails; q++)
			if (c->host_leaf[h * c->nrails + q] >= 0)
				ls[c->host_leaf[h * c->nrails + q]] = 0;
	}
	*groups = ng;
	*leaves = nl;
	*diameter = d;
}
