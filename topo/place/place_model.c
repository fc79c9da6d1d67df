/*
 * place_model: the analytic `model` scorer.
 *
 * Cost of a candidate host set = predicted communication slowdown of the job
 * on it + frag_weight x fragmentation.
 *
 * Communication: a flow-level estimate of one iteration's collective.
 *   - ring all-reduce: hosts in ring order (host order: group, then leaf,
 *     then name); every host sends 2(n-1)/n x bytes_per_iter to its ring
 *     neighbour, striped over the rails (NCCL spreads a buffer over all
 *     rails, so each rail carries 1/rails of it);
 *   - pipeline: the same without the wrap-around and with bytes_per_iter per
 *     hop; all-to-all: every host sends bytes_per_iter/(n-1) to every other.
 *   Rail r of a flow uses the sender's cable up and the receiver's cable
 *   down; when their rail-r leaves differ it also uses the up-links of the
 *   sender's leaf and the down-links of the receiver's (aggregated per
 *   leaf), and, with a core level, the up/down-links of the two groups.
 *   Links are shared max-min fairly with the background flows of running
 *   heavy jobs (counted per link in place_state). All of a collective's
 *   flows carry the same bytes, so the collective ends with its slowest
 *   flow, whose max-min rate is the first bottleneck's fair share
 *   min over links of capacity / (own flows + background flows); the
 *   telemetry overlay removes the measured utilisation from leaf links first.
 *   Each of the collective's steps (2(n-1) for a ring) also pays
 *   hop_latency_us per cable hop between ring neighbours (at worst), so
 *   fewer hops win when bandwidth ties.
 *   NVLink domains: a ring step between two hosts of one domain uses the
 *   sender's NVLink up and the receiver's NVLink down (PLACE_NVLINK_GBPS_PER_GPU
 *   per GPU), carrying the whole buffer, not the fabric.
 *   SHARP: a SHARP user on a set under one SHARP tree (place_sharp.c) sends
 *   its buffer up each host cable once and gets the result once; each leaf
 *   sends one reduced stream to the root (sharp_flows); two steps.
 *   Slowdown = (compute + comm) / (compute + a ring on idle host cables),
 *   so NVLink and SHARP can bring it below 1. A SHARP user's set that no
 *   tree holds pays frag_weight more (it asked for in-network reduction).
 * Fragmentation: the number of wholly idle groups the set takes part of but
 * not all, since the next large job needs whole groups.
 * Packing (class-aware, docs/job-classes.md): a job that does not
 * communicate much (class none or light) should fill fragments and partly
 * used groups, so that whole groups stay whole for heavy jobs. For those
 * jobs each group the set touches adds, weighted by its share of the set,
 *   - tightness: the share of the group's hosts still idle after it, so the
 *     fullest group wins (best fit by group, not by leaf);
 *   - pinning: the share of the job's time limit during which it would be
 *     the one thing keeping the group from being wholly free (the group's
 *     other jobs end by their expected ends; unknown ends never free), so
 *     it goes where its neighbours outlast it rather than where a group is
 *     about to free.
 * Their mean, times frag_weight, is added to the cost (at most one idle
 * group's worth). Heavy jobs are not packed this way: their cost is their
 * communication, the idle groups they break, and 1.5 x frag_weight per
 * group beyond the fewest any candidate spans, so that keeping an idle
 * group whole never buys a split of the job itself (the fabric bytes that
 * cross groups cost more than the slowdown the flow model sees on a
 * non-blocking core).
 *
 * prepare() counts idle hosts per group once per state version; score()
 * allocates nothing.
 */
#include "place_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

struct place_model {
	double frag_weight;
	double hop_latency_s;
	double *flows;        /* per resource: this candidate's flows */
	int *touched;         /* resources with flows != 0 */
	int ntouched;
	int *leaf_cnt, *group_cnt, *group_idle;
	double *group_end;    /* when the group's busy hosts are all expected free */
	uint8_t *leaf_mark;
};

static void add_to(double *flows, int res, double cnt, int *touched, int *ntouched)
{
	if (touched && flows[res] == 0)
		touched[(*ntouched)++] = res;
	flows[res] += cnt;
}

void place_ring_flows(const place_cluster *c, const int *hosts, int nhosts, int closed,
		      double *flows, double sign, int *touched, int *ntouched)
{
	int R = c->nrails, steps = closed ? nhosts : nhosts - 1;

	if (nhosts < 2)
		return;
	for (int i = 0; i < steps; i++) {
		int a = hosts[i], b = hosts[(i + 1) % nhosts];
		int ga = c->host_group[a], gb = c->host_group[b];

		if (place_same_domain(c, a, b)) {
			/* the whole buffer over NVLink: the rails' shares add up */
			add_to(flows, place_res_nvl_up(c, a), sign * R, touched, ntouched);
			add_to(flows, place_res_nvl_down(c, b), sign * R, touched, ntouched);
			continue;
		}
		for (int r = 0; r < R; r++) {
			int la = c->host_leaf[a * R + r], lb = c->host_leaf[b * R + r];

			if (la < 0 || lb < 0)
				continue;
			add_to(flows, place_res_host_up(c, a, r), sign, touched, ntouched);
			add_to(flows, place_res_host_down(c, b, r), sign, touched, ntouched);
			if (la == lb)
				continue;
			add_to(flows, place_res_leaf_up(c, la), sign, touched, ntouched);
			add_to(flows, place_res_leaf_down(c, lb), sign, touched, ntouched);
			if (c->has_core && ga != gb && c->group_up_gbps[ga] > 0 &&
			    c->group_up_gbps[gb] > 0) {
				add_to(flows, place_res_group_up(c, ga), sign, touched, ntouched);
				add_to(flows, place_res_group_down(c, gb), sign, touched, ntouched);
			}
		}
	}
}

place_model *place_model_new(const place_cluster *c, double frag_weight, double hop_latency_us)
{
	place_model *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->frag_weight = frag_weight;
	m->hop_latency_s = hop_latency_us * 1e-6;
	m->flows = calloc((size_t)c->nres + 1, sizeof(double));
	m->touched = calloc((size_t)c->nres + 1, sizeof(int));
	m->leaf_cnt = calloc((size_t)c->nleaves + 1, sizeof(int));
	m->leaf_mark = calloc((size_t)c->nleaves + 1, 1);
	m->group_cnt = calloc((size_t)c->ngroups + 1, sizeof(int));
	m->group_idle = calloc((size_t)c->ngroups + 1, sizeof(int));
	m->group_end = calloc((size_t)c->ngroups + 1, sizeof(double));
	if (!m->flows || !m->touched || !m->leaf_cnt || !m->leaf_mark || !m->group_cnt ||
	    !m->group_idle || !m->group_end) {
		place_model_free(m);
		return NULL;
	}
	return m;
}

void place_model_free(place_model *m)
{
	if (!m)
		return;
	free(m->flows);
	free(m->touched);
	free(m->leaf_cnt);
	free(m->leaf_mark);
	free(m->group_cnt);
	free(m->group_idle);
	free(m->group_end);
	free(m);
}

static int model_prepare(void *ctx, const place_cluster *c, const place_state *s, char *reason,
			 size_t len)
{
	place_model *m = ctx;

	memset(m->group_idle, 0, (size_t)c->ngroups * sizeof(int));
	for (int g = 0; g < c->ngroups; g++)
		m->group_end[g] = 0;
	for (int h = 0; h < c->nhosts; h++)
		if (!s->flags[h] && !s->njobs[h])
			m->group_idle[c->host_group[h]]++;
	for (int i = 0; i < s->njobs_running; i++) {
		const place_job *j = &s->jobs[i];
		double e = j->end_s > 0 ? j->end_s : HUGE_VAL;

		for (int k = 0; k < j->nhosts; k++) {
			int g = c->host_group[j->hosts[k]];

			if (e > m->group_end[g])
				m->group_end[g] = e;
		}
	}
	return 0;
}

/* All-to-all: per rail, n-1 flows on every cable, m(n-m) across a leaf's
 * links where m of the job's hosts sit on that leaf, likewise per group. */
static void alltoall_flows(place_model *m, const place_cluster *c, const int *hosts, int n)
{
	int R = c->nrails;

	for (int r = 0; r < R; r++) {
		for (int i = 0; i < n; i++) {
			int l = c->host_leaf[hosts[i] * R + r];

			if (l < 0)
				continue;
			add_to(m->flows, place_res_host_up(c, hosts[i], r), n - 1, m->touched,
			       &m->ntouched);
			add_to(m->flows, place_res_host_down(c, hosts[i], r), n - 1, m->touched,
			       &m->ntouched);
			m->leaf_cnt[l]++;
		}
		for (int i = 0; i < n; i++) {
			int l = c->host_leaf[hosts[i] * R + r];
			double k;

			if (l < 0 || m->leaf_mark[l])
				continue;
			m->leaf_mark[l] = 1;
			k = m->leaf_cnt[l];
			if (k < n) {
				add_to(m->flows, place_res_leaf_up(c, l), k * (n - k), m->touched,
				       &m->ntouched);
				add_to(m->flows, place_res_leaf_down(c, l), k * (n - k), m->touched,
				       &m->ntouched);
			}
		}
		for (int i = 0; i < n; i++) {
			int l = c->host_leaf[hosts[i] * R + r];

			if (l >= 0)
				m->leaf_cnt[l] = m->leaf_mark[l] = 0;
		}
	}
	if (!c->has_core)
		return;
	/* hosts are in group order: one run per group */
	for (int i = 0, start = 0; i < n; i++) {
		int g = c->host_group[hosts[i]];
		double k;

		if (i + 1 < n && c->host_group[hosts[i + 1]] == g)
			continue;
		k = i + 1 - start;
		start = i + 1;
		if (k < n && c->group_up_gbps[g] > 0) {
			add_to(m->flows, place_res_group_up(c, g), R * k * (n - k), m->touched,
			       &m->ntouched);
			add_to(m->flows, place_res_group_down(c, g), R * k * (n - k), m->touched,
			       &m->ntouched);
		}
	}
}

/* Capacity left to fair sharing on a resource, after telemetry. */
static double res_capacity(const place_cluster *c, const place_state *s, int res)
{
	double cap = place_cluster_res_gbps(c, res);
	int base = 2 * c->nhosts * c->nrails;

	if (res >= base && res < base + 2 * c->nleaves)
		cap *= 1.0 - s->leaf_util[(res - base) % c->nleaves];
	return cap;
}

static int set_groups(const place_cluster *c, const int *hosts, int n);

/* SHARP in-network reduction (a SHARP user on an eligible set): per rail,
 * each host sends its buffer once up its cable and gets the result once
 * down; each leaf used sends one reduced stream up to the tree's root and
 * gets one back (none with a single leaf), and with a core level each group
 * likewise. */
static void sharp_flows(place_model *m, const place_cluster *c, const int *hosts, int n)
{
	int R = c->nrails, nl;

	for (int r = 0; r < R; r++) {
		nl = 0;
		for (int i = 0; i < n; i++) {
			int l = c->host_leaf[hosts[i] * R + r];

			if (l < 0)
				continue;
			add_to(m->flows, place_res_host_up(c, hosts[i], r), 1, m->touched, &m->ntouched);
			add_to(m->flows, place_res_host_down(c, hosts[i], r), 1, m->touched,
			       &m->ntouched);
			if (!m->leaf_mark[l]) {
				m->leaf_mark[l] = 1;
				m->leaf_cnt[nl++] = l;
			}
		}
		for (int i = 0; i < nl; i++) {
			int l = m->leaf_cnt[i];

			if (nl > 1) {
				add_to(m->flows, place_res_leaf_up(c, l), 1, m->touched, &m->ntouched);
				add_to(m->flows, place_res_leaf_down(c, l), 1, m->touched, &m->ntouched);
			}
			m->leaf_mark[l] = 0;
			m->leaf_cnt[i] = 0;
		}
	}
	if (!c->has_core || set_groups(c, hosts, n) < 2)
		return;
	for (int i = 0; i < n; i++) {
		int g = c->host_group[hosts[i]];

		if ((i == 0 || c->host_group[hosts[i - 1]] != g) && c->group_up_gbps[g] > 0) {
			add_to(m->flows, place_res_group_up(c, g), R, m->touched, &m->ntouched);
			add_to(m->flows, place_res_group_down(c, g), R, m->touched, &m->ntouched);
		}
	}
}

/* The slowest host cable of the set, for the reference "on idle cables"
 * when no flow of the set uses a host cable (all over NVLink). */
static double slowest_cable(const place_cluster *c, const int *hosts, int n)
{
	double g = 0;

	for (int i = 0; i < n; i++)
		for (int r = 0; r < c->nrails; r++)
			if (c->host_leaf[hosts[i] * c->nrails + r] >= 0 &&
			    (g == 0 || c->host_gbps[hosts[i] * c->nrails + r] < g))
				g = c->host_gbps[hosts[i] * c->nrails + r];
	return g > 0 ? g : PLACE_DEFAULT_LINK_GBPS;
}

/* Seconds of one iteration's collective of the request on `hosts` under
 * the current load (*t), and of a ring on idle host cables (*ideal, the
 * same reference for every set, so NVLink and SHARP make a set faster than
 * it). */
static void comm_time(place_model *m, const place_cluster *c, const place_state *s,
		      const place_request *r, const int *hosts, int n, int sharp, double *t,
		      double *ideal)
{
	double bytes = r->comm.bytes_per_iter, per_flow, ideal_flow, min_share = -1, min_cable = -1;
	int hr = c->nhosts * c->nrails, steps, ideal_steps, hops = 2;

	*t = *ideal = 0;
	if (n < 2 || bytes <= 0 || r->comm.cls == PLACE_COMM_NONE)
		return;
	m->ntouched = 0;
	ideal_steps = r->comm.pattern == PLACE_PATTERN_ALLTOALL ||
				      r->comm.pattern == PLACE_PATTERN_PIPELINE
			      ? n - 1
			      : 2 * (n - 1);
	switch (r->comm.pattern) {
	case PLACE_PATTERN_ALLTOALL:
		per_flow = ideal_flow = bytes / (n - 1) / c->nrails;
		steps = n - 1;
		alltoall_flows(m, c, hosts, n);
		break;
	case PLACE_PATTERN_PIPELINE:
		per_flow = ideal_flow = bytes / c->nrails;
		steps = n - 1;
		place_ring_flows(c, hosts, n, 0, m->flows, 1, m->touched, &m->ntouched);
		break;
	default:
		ideal_flow = 2.0 * (n - 1) / n * bytes / c->nrails;
		if (sharp) {
			per_flow = bytes / c->nrails;
			steps = 2;
			sharp_flows(m, c, hosts, n);
		} else {
			per_flow = ideal_flow;
			steps = 2 * (n - 1);
			place_ring_flows(c, hosts, n, 1, m->flows, 1, m->touched, &m->ntouched);
		}
		break;
	}
	for (int i = 0; i < m->ntouched; i++) {
		int res = m->touched[i];
		double own = m->flows[res], cap = res_capacity(c, s, res);
		double share = cap / (own + s->bg_flows[res]);

		if (min_share < 0 || share < min_share)
			min_share = share;
		if (res < 2 * hr) {
			double alone = place_cluster_res_gbps(c, res) / own;

			if (min_cable < 0 || alone < min_cable)
				min_cable = alone;
		}
		m->flows[res] = 0;
	}
	m->ntouched = 0;
	if (min_cable < 0) /* every flow on NVLink */
		min_cable = slowest_cable(c, hosts, n);
	if (min_share <= 0 || min_cable <= 0)
		return;
	for (int i = 0; i < n; i++) {
		int a = hosts[i], b = hosts[(i + 1) % n];
		int hd = c->host_class[a] == c->host_class[b] ? 2 : place_cluster_hops(c, a, b);

		if (hd > hops)
			hops = hd;
	}
	*t = per_flow * 8.0 / (min_share * 1e9) + steps * hops * m->hop_latency_s;
	*ideal = ideal_flow * 8.0 / (min_cable * 1e9) + ideal_steps * 2 * m->hop_latency_s;
}

/* Wholly idle groups the set takes some but not all of. */
static double frag_cost(place_model *m, const place_cluster *c, const int *hosts, int n)
{
	double broken = 0;

	for (int i = 0, start = 0; i < n; i++) {
		int g = c->host_group[hosts[i]];

		if (i + 1 < n && c->host_group[hosts[i + 1]] == g)
			continue;
		if (m->group_idle[g] == c->group_nhosts[g] && i + 1 - start < c->group_nhosts[g])
			broken += 1;
		start = i + 1;
	}
	return broken;
}

/* Class-aware packing cost of a none/light job's set, 0..1 (see top). */
static double pack_cost(const place_model *m, const place_cluster *c, const place_request *r,
			const int *hosts, int n)
{
	double cost = 0, limit = place_request_duration(r), end = r->now_s + limit;

	for (int i = 0, start = 0; i < n; i++) {
		int g = c->host_group[hosts[i]], k, after;
		double tight, pin = 0, free_at;

		if (i + 1 < n && c->host_group[hosts[i + 1]] == g)
			continue;
		k = i + 1 - start;
		start = i + 1;
		after = m->group_idle[g] - k;
		tight = after > 0 ? (double)after / c->group_nhosts[g] : 0;
		if (limit > 0) {
			free_at = m->group_end[g] > r->now_s ? m->group_end[g] : r->now_s;
			pin = (end - free_at) / limit;
			pin = pin < 0 ? 0 : pin > 1 ? 1 : pin;
		}
		cost += (double)k / n * (tight + pin) / 2;
	}
	return cost;
}

/* Groups a set spans (hosts ascending, so grouped). */
static int set_groups(const place_cluster *c, const int *hosts, int n)
{
	int k = 0;

	for (int i = 0; i < n; i++)
		k += i == 0 || c->host_group[hosts[i]] != c->host_group[hosts[i - 1]];
	return k;
}

static int model_score(void *ctx, const place_cluster *c, const place_state *s,
		       const place_request *r, place_candidate *cands, int n, char *reason,
		       size_t len)
{
	place_model *m = ctx;
	double compute = r->comm.compute_s_per_iter > 0 ? r->comm.compute_s_per_iter : 0;
	int fewest = -1, heavy = r->comm.cls == PLACE_COMM_HEAVY;
	int wants_sharp = r->comm.sharp && r->comm.cls != PLACE_COMM_NONE && c->has_sharp;

	for (int i = 0; heavy && i < n; i++) {
		int g = set_groups(c, cands[i].hosts, cands[i].nhosts);

		if (fewest < 0 || g < fewest)
			fewest = g;
	}

	for (int i = 0; i < n; i++) {
		place_candidate *k = &cands[i];
		double t, ideal, slow = 1;
		int sharp = wants_sharp && place_cluster_sharp_eligible(c, k->hosts, k->nhosts);

		comm_time(m, c, s, r, k->hosts, k->nhosts, sharp, &t, &ideal);
		if (compute + ideal > 0)
			slow = (compute + t) / (compute + ideal);
		k->comm_time_s = t;
		k->frag_cost = m->frag_weight * frag_cost(m, c, k->hosts, k->nhosts);
		if (!heavy)
			k->frag_cost += m->frag_weight * pack_cost(m, c, r, k->hosts, k->nhosts);
		else
			k->frag_cost += 1.5 * m->frag_weight *
					(set_groups(c, k->hosts, k->nhosts) - fewest);
		if (wants_sharp && !sharp)
			k->frag_cost += m->frag_weight;
		k->cost = slow + k->frag_cost;
	}
	return 0;
}

void place_model_scorer(place_model *m, place_scorer *out)
{
	*out = (place_scorer){ .name = "model", .prepare = model_prepare, .score = model_score, .ctx = m };
}
