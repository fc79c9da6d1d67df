/*
 * sim: the discrete-event trace replay (see sim.h).
 *
 * Events are job arrivals (trace submit times) and job ends; end times move
 * whenever a communicating job starts or ends, because the fabric's max-min
 * shares (sim_net) change and with them every communicating job's speed.
 * There are few running jobs, so the next end is a linear scan.
 *
 * A run is a plain struct of arrays (sim_internal.h) so that a decision can
 * be forked (sim_training.c: the lookahead policy and the training samples
 * re-run the same moment with each candidate placement); the engine's
 * place_state is rebuilt from the running jobs in the fork.
 */
#define _GNU_SOURCE /* qsort_r */
#include "sim_internal.h"
#include "place_record.h"
#include "place_scorer.h"

#include "place_features.h"
#include "topo_num.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The defaults of topognn-sim (docs/simulator.md): tree placement on DGX
 * H100 hosts (8 GPUs, 112 cores). */
static const sim_config default_config = {
	.policy = PLACE_POLICY_TREE,
	.gpus_per_host = 8, .cores_per_host = 112,
	.backfill_depth = 100, .train_every = 10,
	.lookahead_k = 8, .lookahead_horizon_s = 24 * 3600.0, .lookahead_wait_weight = 0.3,
	.log_baseline = PLACE_POLICY_TREE, .log_epoch = 1.7e9, /* the decision log */
};

void sim_config_init(sim_config *cfg)
{
	*cfg = default_config;
	place_config_init(&cfg->place); /* seed 1 */
}

/* The simulator's variants of the engine policies: told run-time
 * predictions (or true run times) instead of limits, and the lookahead
 * teachers, whose forks replay true run times or, told predictions, only
 * those (sim_fork). */
static const struct {
	const char *name;
	place_policy policy;
	int rt, lookahead;
} variants[] = {
	{"model+pred", PLACE_POLICY_MODEL, SIM_RT_LEARNED, 0},
	{"gnn+pred", PLACE_POLICY_GNN, SIM_RT_LEARNED, 0},
	{"model+oracle", PLACE_POLICY_MODEL, SIM_RT_ORACLE, 0},
	{"gnn+oracle", PLACE_POLICY_GNN, SIM_RT_ORACLE, 0},
	{"lookahead", PLACE_POLICY_TREE, SIM_RT_LIMIT, 1},
	{"lookahead-model", PLACE_POLICY_MODEL, SIM_RT_LIMIT, 1},
	{"lookahead+pred", PLACE_POLICY_TREE, SIM_RT_LEARNED, 1},
	{"lookahead-model+pred", PLACE_POLICY_MODEL, SIM_RT_LEARNED, 1},
	{"dagger-gnn+pred", PLACE_POLICY_GNN, SIM_RT_LEARNED, SIM_LOOKAHEAD_LABEL},
};
#define NVARIANTS (sizeof(variants) / sizeof(variants[0]))

int sim_config_set_policy(sim_config *cfg, const char *name)
{
	int p = place_policy_parse(name);

	cfg->lookahead = 0;
	cfg->tree_switches = 0;
	cfg->runtime_prediction = SIM_RT_LIMIT;
	for (size_t i = 0; name && i < NVARIANTS; i++)
		if (!strcmp(name, variants[i].name)) {
			cfg->policy = variants[i].policy;
			cfg->runtime_prediction = variants[i].rt;
			cfg->lookahead = variants[i].lookahead;
			return 0;
		}
	if (name && !strcmp(name, "tree-switches")) {
		cfg->tree_switches = 1;
		p = PLACE_POLICY_TREE;
	}
	if (p < 0)
		return -1;
	cfg->policy = (place_policy)p;
	return 0;
}

const char *sim_config_policy_name(const sim_config *cfg)
{
	if (cfg->tree_switches)
		return "tree-switches";
	for (size_t i = 0; i < NVARIANTS; i++)
		if (cfg->runtime_prediction == variants[i].rt && cfg->policy == variants[i].policy &&
		    cfg->lookahead == variants[i].lookahead)
			return variants[i].name;
	return place_policy_name(cfg->policy);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* topo_quantile of v[0..n) (sorted in place); 0 for none, since the
 * metrics are printed and compared as plain numbers. */
static double quantile(double *v, long n, double p)
{
	if (n <= 0)
		return 0;
	topo_sort_doubles(v, (size_t)n);
	return topo_quantile(v, (size_t)n, p);
}

/* ---- host bookkeeping ----------------------------------------------------- */

static int job_gpus_on_host(const sim *s, const sjob *j)
{
	return j->gpus > 0 || j->cores > 0 ? j->gpus : s->G;
}

static void hosts_take(sim *s, const sjob *j, int sign)
{
	for (int i = 0; i < j->nh; i++) {
		int h = j->hosts[i], g = s->ngroups ? place_cluster_host_group(s->c, h) : 0;
		int was_busy = s->host_njobs[h] > 0;

		s->host_njobs[h] += sign;
		s->host_gpus_used[h] += sign * job_gpus_on_host(s, j);
		s->host_cores_used[h] += sign * (j->gpus > 0 || j->cores > 0 ? j->cores : s->C);
		if (was_busy != (s->host_njobs[h] > 0)) {
			s->busy_hosts += sign;
			s->group_busy[g] += sign;
		}
	}
}

/* Could host h take job j, with the given usage arrays? */
static int host_fits(const sim *s, const sjob *j, int h, const int *njobs, const int *gpus,
		     const int *cores)
{
	if (j->gpus <= 0 && j->cores <= 0)
		return njobs[h] == 0;
	return s->G - gpus[h] >= j->gpus && s->C - cores[h] >= j->cores;
}

/* Share of idle hosts outside wholly idle groups: how broken up the free
 * capacity is for the next wide job. */
static double fragmentation(const sim *s)
{
	int idle = s->H - s->busy_hosts, whole = 0;

	if (idle <= 0)
		return 0;
	for (int g = 0; g < s->ngroups; g++)
		if (s->group_busy[g] == 0)
			whole += s->group_size[g];
	return 1.0 - (double)whole / idle;
}

/* ---- network ---------------------------------------------------------------- */

void sim_recompute_rates(sim *s)
{
	int n = 0;

	for (int i = 0; i < s->nrun; i++) {
		sjob *j = &s->jobs[s->run[i]];

		if (j->heavy && j->fl.nres > 0)
			s->flp[n++] = &j->fl;
	}
	sim_net_share(s->net, s->flp, n, s->rates);
	n = 0;
	for (int i = 0; i < s->nrun; i++) {
		sjob *j = &s->jobs[s->run[i]];
		double x, t;

		if (!(j->heavy && j->fl.nres > 0)) {
			j->rate = 1.0;
			continue;
		}
		x = s->rates[n++];
		t = x > 0 ? j->bytes_per_flow * 8.0 / (x * 1e9) : INFINITY;
		j->rate = (j->comm.compute_s_per_iter + j->t_ideal) /
			  (j->comm.compute_s_per_iter + t);
		if (!(j->rate > 1e-6))
			j->rate = 1e-6;
		if (j->rate > 1.0 && !j->fl.fast)
			j->rate = 1.0;
	}
	s->net_dirty = 0;
}

/* ---- starting and ending jobs ---------------------------------------------- */

double sim_expected_end(const sim *s, const sjob *j)
{
	double limit_end = j->start + j->req, e;

	if (j->pred <= 0) /* as Slurm, from the time limit */
		return limit_end;
	e = j->start + j->pred;
	if (e < s->now) /* past its prediction: as long again as it has run */
		e = s->now + (s->now - j->start);
	return e < limit_end ? e : limit_end;
}

int sim_start_job(sim *s, int idx, const int *hosts, topo_error *err)
{
	sjob *j = &s->jobs[idx];

	j->hosts = malloc((size_t)j->nh * sizeof(int));
	if (!j->hosts)
		goto oom;
	memcpy(j->hosts, hosts, (size_t)j->nh * sizeof(int));
	if (place_state_add_job(s->st, (uint32_t)idx + 1, j->hosts, j->nh,
				j->gpus > 0 || j->cores > 0 ? j->gpus : 0,
				j->gpus > 0 || j->cores > 0 ? j->cores : 0,
				j->heavy ? &j->comm : NULL)) {
		topo_error_set(err, "", 0, "the engine refused job %d's placement", idx + 1);
		return -1;
	}
	if (j->heavy) {
		int sharp = j->comm.sharp && place_cluster_sharp_eligible(s->c, j->hosts, j->nh);

		if (sharp ? sim_net_sharp(s->net, j->hosts, j->nh, &j->fl)
			  : sim_net_ring(s->net, j->hosts, j->nh, &j->fl))
			goto oom;
		sim_ring_cost(s->net, &j->fl, j->nh, j->comm.bytes_per_iter, &j->bytes_per_flow,
			      &j->t_ideal);
		if (sharp) /* each host's buffer once, per rail; t_ideal stays the ring's */
			j->bytes_per_flow = j->fl.rails > 0 ? j->comm.bytes_per_iter / j->fl.rails : 0;
		s->net_dirty = 1;
	}
	hosts_take(s, j, +1);
	j->status = J_RUNNING;
	j->start = s->now;
	place_state_set_job_end(s->st, (uint32_t)idx + 1, sim_expected_end(s, j));
	j->work_left = j->base;
	j->rate = 1.0;
	s->run[s->nrun++] = idx;
	return 0;
oom:
	topo_error_set(err, "", 0, "out of memory starting job %d", idx + 1);
	return -1;
}

static void end_job(sim *s, int ri)
{
	int idx = s->run[ri];
	sjob *j = &s->jobs[idx];

	place_state_remove_job(s->st, (uint32_t)idx + 1);
	hosts_take(s, j, -1);
	j->status = J_DONE;
	j->end = s->now;
	if (j->heavy)
		s->net_dirty = 1;
	s->run[ri] = s->run[--s->nrun];
	s->done++;
	if (s->rt && !s->is_fork) /* learned as the plugin would: its elapsed time */
		(void)place_runtime_observe(s->rt, &j->rtj, j->end - j->start);
	if (s->cfg->decision_log && !s->is_fork)
		(void)place_record_write_end(s->cfg->decision_log, (uint32_t)idx + 1,
					     s->cfg->log_epoch + s->now, j->end - j->start,
					     j->base > 0 ? (j->end - j->start) / j->base : 1.0);
}

/* ---- scheduling: FCFS + EASY backfill ------------------------------------ */

void sim_build_request(const sim *s, int idx, place_request *r)
{
	const sjob *j = &s->jobs[idx];

	memset(r, 0, sizeof(*r));
	r->job_id = (uint32_t)idx + 1;
	r->now_s = s->now;
	r->time_limit_s = j->req;
	r->deferred_s = j->defer_start >= 0 ? s->now - j->defer_start : 0;
	r->min_hosts = r->max_hosts = j->nh;
	r->gpus_per_host = j->gpus;
	r->cores_per_host = j->cores;
	r->exclusive = j->gpus <= 0 && j->cores <= 0;
	if (j->heavy)
		r->comm = j->comm;
	r->predicted_runtime_s = j->pred;
}

/* The engine deferred job idx (queue entry qi) for locality: remember
 * since when and until when it may wait, and for the queue head the groups
 * its reservation keeps. */
static void start_budget(sim *s, sjob *j, const place_decision *d)
{
	if (j->defer_start < 0) {
		j->defer_start = s->now;
		j->defer_deadline = s->now + d->defer_budget_s;
	}
}

/* The queue head idx waits for a placement over at most `limit` groups
 * (tree leaf switches with by_leaf): sim_schedule plans it as Slurm's
 * backfill does (held_reservation). */
static void hold_head(sim *s, int idx, int limit, int by_leaf)
{
	s->resv_job = idx;
	s->resv_limit = limit > 0 ? limit : 1;
	s->resv_by_leaf = by_leaf;
	s->resv_fixed = 0;
}

static void note_deferral(sim *s, int qi, int idx, const place_decision *d)
{
	start_budget(s, &s->jobs[idx], d);
	if (!s->is_fork)
		s->deferrals++;
	if (qi == 0)
		hold_head(s, idx, d->defer_groups > 0 ? d->defer_groups : d->min_groups, 0);
}

void sim_hold_job(sim *s, int idx, const place_decision *d)
{
	start_budget(s, &s->jobs[idx], d);
	s->jobs[idx].hold_until = s->now;
}

/* Queue entry qi is held (sim_hold_job) until the next event: the queue
 * head keeps the groups of its best placement now, as a deferred head
 * keeps the engine's (backfill goes elsewhere until then). */
static void keep_held(sim *s, int qi, int idx, const place_decision *d)
{
	if (qi != 0)
		return;
	s->resv_job = idx;
	s->resv_fixed = 1;
	s->resv_until = s->now;
	memset(s->resv_hosts, 0, (size_t)s->H);
	for (int i = 0; i < d->chosen.nhosts; i++)
		s->resv_hosts[s->chosen[i]] = 1;
}

/* tree-switches: the job's wait4switch, min(LocalityWait share of its
 * time limit, cap), as the job_submit rule would ask (0: none). */
static double switch_budget(const sim *s, const sjob *j)
{
	double b = s->cfg->place.locality_wait_frac * j->req, cap = s->cfg->place.locality_wait_cap_s;

	return cap > 0 && b > cap ? cap : b;
}

/* tree-switches: the --switches count job idx is bound by now, 0 none.
 * As in Slurm 24.11's _eval_nodes_topo: wait4switch_start is set at the
 * job's first evaluation, and the count binds while less than wait4switch
 * has passed since. */
static int switch_limit(sim *s, int idx)
{
	sjob *j = &s->jobs[idx];
	double budget;

	if (!s->cfg->tree_switches || !j->heavy || (budget = switch_budget(s, j)) <= 0)
		return 0;
	if (j->switch_start < 0)
		j->switch_start = s->now;
	if (s->now - j->switch_start >= budget)
		return 0;
	return sim_units_needed(s->tree_leaf_size, s->ntree_leaves, j->nh);
}

/* tree-switches: job idx (queue entry qi) fits now but only over more
 * leaf switches than it asked for: cons_tres finds the allocation and
 * does not use it (best_switch false); it stays pending. */
static void note_switch_wait(sim *s, int qi, int idx, int limit)
{
	sjob *j = &s->jobs[idx];

	if (j->defer_start < 0) {
		j->defer_start = s->now;
		j->defer_deadline = j->switch_start + switch_budget(s, j);
	}
	if (!s->is_fork)
		s->deferrals++;
	if (qi == 0)
		hold_head(s, idx, limit, 1);
}

/* The policy deciding in s: the configured one, except in the forks of a
 * DAgger run, which go on as the teacher's base (the model) would. */
static place_policy deciding_policy(const sim *s)
{
	if (s->is_fork && s->cfg->lookahead == SIM_LOOKAHEAD_LABEL)
		return PLACE_POLICY_MODEL;
	return s->cfg->policy;
}

/* Try to place queue entry qi now, on `allowed` hosts (NULL: any).
 * 1 started, 0 not now (no room, or deferred for locality), -1 error. */
static int try_start(sim *s, int qi, const uint8_t *allowed, topo_error *err)
{
	int idx = s->queue[qi], limit = switch_limit(s, idx);
	place_policy pol = deciding_policy(s);
	place_request r;
	place_decision d;
	double t0, t1;
	int rc, logging, defer;

	sim_build_request(s, idx, &r);
	r.allowed = allowed;
	r.max_groups = limit;
	r.queue_position = qi + 1; /* FCFS: the queue's order is the priority's */
	/* the scorers follow the state once per change, before the decision
	 * (a scheduler would do this when it learns of the change) */
	t0 = now_us();
	rc = place_engine_refresh(s->eng, s->st, d.reason, sizeof(d.reason));
	t1 = now_us();
	if (rc < 0) {
		topo_error_set(err, "", 0, "refreshing the scorers: %s", d.reason);
		return -1;
	}
	if (rc == 1 && !s->is_fork && s->nref < 2L * s->nj + 2)
		s->ref[s->nref++] = t1 - t0;
	logging = s->cfg->decision_log && !s->is_fork;
	t0 = now_us();
	rc = place_decide(s->eng, s->st, &r, pol, logging ? s->cfg->log_baseline : pol, &d);
	t1 = now_us();
	if ((rc != 0 || !d.ok) && limit > 0) {
		/* within --switches' wait: is there an allocation over more? */
		r.max_groups = 0;
		rc = place_decide(s->eng, s->st, &r, pol, pol, &d);
		if (rc == 0 && d.ok) {
			note_switch_wait(s, qi, idx, limit);
			return 0;
		}
		if (qi == 0) /* backfill plans it within its switches all the same */
			hold_head(s, idx, limit, 1);
	}
	if (rc != 0 || !d.ok) {
		s->failed++;
		snprintf(s->last_reason, sizeof(s->last_reason), "%s", d.reason);
		return 0;
	}
	if (!s->is_fork && s->nlat < 2L * s->nj + 2) /* deferrals decide again */
		s->lat[s->nlat++] = t1 - t0;
	/* the engine's arrays change with its next call (forks decide too) */
	memcpy(s->chosen, d.chosen.hosts, (size_t)d.chosen.nhosts * sizeof(int));
	if (logging && (!d.deferred || s->jobs[idx].defer_start < 0) &&
	    place_record_write(s->cfg->decision_log, s->c, &r, &d,
			       place_engine_scorer_name(s->eng, s->cfg->policy),
			       s->cfg->log_epoch + s->now)) {
		topo_error_set(err, "", 0, "cannot write the decision log");
		return -1;
	}
	if (!d.deferred && s->jobs[idx].hold_until >= s->now) {
		keep_held(s, qi, idx, &d);
		return 0;
	}
	defer = d.deferred;
	if (s->jobs[idx].heavy && !s->is_fork && s->cfg->lookahead) {
		s->heavy_decisions++; /* the policy hook: may change s->chosen or defer */
		if (sim_lookahead_pick(s, qi, &d, &defer, err))
			return -1;
	} else if (s->jobs[idx].heavy && !s->is_fork && !defer) {
		s->heavy_decisions++;
		if (s->cfg->training &&
		    s->heavy_decisions % (s->cfg->train_every > 0 ? s->cfg->train_every : 1) == 0 &&
		    sim_training_sample(s, qi, &d, s->chosen, err))
			return -1;
	}
	if (defer && d.deferred) {
		note_deferral(s, qi, idx, &d);
		return 0;
	}
	if (defer) { /* the lookahead holds a job the engine placed */
		sim_hold_job(s, idx, &d);
		s->deferrals++;
		keep_held(s, qi, idx, &d);
		return 0;
	}
	if (sim_start_job(s, idx, s->chosen, err))
		return -1;
	memmove(&s->queue[qi], &s->queue[qi + 1], (size_t)(s->nq - qi - 1) * sizeof(int));
	s->nq--;
	return 1;
}

static int cmp_rank(const void *a, const void *b, void *key)
{
	const double *k = key;
	double x = k[*(const int *)a], y = k[*(const int *)b];

	if (x != y)
		return x < y ? -1 : 1;
	return *(const int *)a - *(const int *)b;
}

/* The plan of a reservation: the hosts' usage (s->hostbuf) as it is now,
 * and the running jobs in the order of their expected ends (start +
 * requested time, as Slurm uses time limits) in s->rank, those ends in
 * s->endt. Returns the hosts that fit `head` now. */
static int plan_begin(sim *s, const sjob *head)
{
	int *nj = s->hostbuf, *gu = nj + s->H, *cu = gu + s->H, fit = 0;

	memcpy(nj, s->host_njobs, (size_t)s->H * sizeof(int));
	memcpy(gu, s->host_gpus_used, (size_t)s->H * sizeof(int));
	memcpy(cu, s->host_cores_used, (size_t)s->H * sizeof(int));
	for (int h = 0; h < s->H; h++)
		fit += host_fits(s, head, h, nj, gu, cu);
	for (int i = 0; i < s->nrun; i++) {
		const sjob *j = &s->jobs[s->run[i]];
		double e = j->start + j->req;

		s->endt[s->run[i]] = e > s->now ? e : s->now;
		s->rank[i] = s->run[i];
	}
	qsort_r(s->rank, (size_t)s->nrun, sizeof(int), cmp_rank, s->endt);
	return fit;
}

/* Release the i-th running job of the plan; `freec` (per unit[h], may be
 * NULL) counts the hosts that fit head. Returns the change in those. */
static int plan_release(sim *s, const sjob *head, int i, const int *unit, int *freec)
{
	int *nj = s->hostbuf, *gu = nj + s->H, *cu = gu + s->H, d = 0;
	const sjob *j = &s->jobs[s->rank[i]];

	for (int k = 0; k < j->nh; k++) {
		int h = j->hosts[k], before = host_fits(s, head, h, nj, gu, cu), after;

		nj[h]--;
		gu[h] -= job_gpus_on_host(s, j);
		cu[h] -= j->gpus > 0 || j->cores > 0 ? j->cores : s->C;
		after = host_fits(s, head, h, nj, gu, cu);
		d += after - before;
		if (freec && unit[h] >= 0)
			freec[unit[h]] += after - before;
	}
	return d;
}

/* EASY reservation of the queue head: the expected time when enough hosts
 * fit it, and how many hosts that fit it will be spare then. */
static void reservation(sim *s, const sjob *head, double *shadow, int *extra)
{
	int fit = plan_begin(s, head);

	*shadow = INFINITY;
	for (int i = 0; i < s->nrun && fit < head->nh; i++) {
		fit += plan_release(s, head, i, NULL, NULL);
		if (fit >= head->nh)
			*shadow = s->endt[s->rank[i]];
	}
	*extra = fit - head->nh;
}

static int cmp_unit_desc(const void *a, const void *b, void *key)
{
	const int *k = key, x = k[*(const int *)a], y = k[*(const int *)b];

	return x != y ? y - x : *(const int *)a - *(const int *)b;
}

/* More than the units (groups or tree leaf switches) of the cluster. */
static size_t units_bound(const sim *s)
{
	return (size_t)s->H + 1 + (size_t)sim_net_nleaves(s->net) + (size_t)s->ngroups;
}

/* Could head take hosts in at most limit units now (freec: its fitting
 * hosts per unit)? Then mark them in s->resv_hosts as topology/tree
 * would pick: the tightest unit that holds it, else the fullest units
 * first, hosts in index order. */
static int pick_units(sim *s, const sjob *head, const int *unit, int nunits, const int *freec,
		      int *order)
{
	int *nj = s->hostbuf, *gu = nj + s->H, *cu = gu + s->H;
	int best = -1, k = 0, got = 0, need = head->nh;

	for (int u = 0; u < nunits; u++)
		if (freec[u] >= need && (best < 0 || freec[u] < freec[best]))
			best = u;
	if (best >= 0) {
		order[k++] = best;
	} else {
		for (int u = 0; u < nunits; u++)
			order[u] = u;
		qsort_r(order, (size_t)nunits, sizeof(int), cmp_unit_desc, (void *)freec);
		while (k < nunits && got < need && freec[order[k]] > 0)
			got += freec[order[k++]];
		if (got < need || k > s->resv_limit)
			return 0;
	}
	memset(s->resv_hosts, 0, (size_t)s->H);
	for (int i = 0, left = need; i < k; i++)
		for (int h = 0; h < s->H && left > 0; h++)
			if (unit[h] == order[i] && host_fits(s, head, h, nj, gu, cu)) {
				s->resv_hosts[h] = 1;
				left--;
			}
	return 1;
}

/* The held queue head (s->resv_job: it waits although it may fit), as
 * Slurm's sched/backfill plans a job pending for --switches (or one a
 * topognn deferral answers with best_switch false): cons_tres's will-run
 * test releases the running jobs in the order of their expected ends
 * until an allocation within the limit exists; backfill reserves those
 * nodes from then on (s->resv_until, s->resv_hosts). The same rule for
 * every policy's held head. */
static void held_reservation(sim *s, const sjob *head)
{
	int nunits = s->resv_by_leaf ? s->ntree_leaves : s->ngroups;
	int *unit = s->unit_buf, *freec = unit + s->H + 1, *order = freec + units_bound(s);

	for (int h = 0; h < s->H; h++)
		unit[h] = s->resv_by_leaf ? s->tree_leaf[h] : place_cluster_host_group(s->c, h);
	memset(freec, 0, (size_t)nunits * sizeof(int));
	plan_begin(s, head);
	for (int h = 0; h < s->H; h++)
		if (unit[h] >= 0 && host_fits(s, head, h, s->hostbuf, s->hostbuf + s->H,
					      s->hostbuf + 2 * s->H))
			freec[unit[h]]++;
	s->resv_until = INFINITY;
	memset(s->resv_hosts, 0, (size_t)s->H);
	for (int i = -1; i < s->nrun; i++) {
		if (i >= 0)
			plan_release(s, head, i, unit, freec);
		if (i + 1 < s->nrun && i >= 0 && s->endt[s->rank[i + 1]] == s->endt[s->rank[i]])
			continue; /* ends at the same time: decide after all of them */
		if (pick_units(s, head, unit, nunits, freec, order)) {
			s->resv_until = i < 0 ? s->now : s->endt[s->rank[i]];
			return;
		}
	}
}

/* Hosts outside the held head's reservation. */
static const uint8_t *outside_reservation(sim *s)
{
	for (int h = 0; h < s->H; h++)
		s->allowed[h] = !s->resv_hosts[h];
	return s->allowed;
}

/* What the gnn sees of time and the queue (place_features). */
static void tell_queue(sim *s)
{
	int hosts = 0;

	for (int i = 0; i < s->nq; i++)
		hosts += s->jobs[s->queue[i]].nh;
	for (int i = 0; i < s->nrun; i++) { /* jobs past their predicted ends */
		const sjob *j = &s->jobs[s->run[i]];

		if (j->pred > 0 && j->start + j->pred < s->now)
			place_state_set_job_end(s->st, (uint32_t)s->run[i] + 1,
						sim_expected_end(s, j));
	}
	place_state_set_clock(s->st, s->now);
	place_state_set_queue(s->st, s->nq, hosts);
}

int sim_schedule(sim *s, topo_error *err)
{
	double shadow;
	int extra, examined = 0, rc, kept;

	tell_queue(s);
	s->resv_job = -1;
	while (s->nq > 0) {
		rc = try_start(s, 0, NULL, err);
		if (rc < 0)
			return -1;
		if (rc == 0)
			break;
	}
	if (s->nq < 2)
		return 0;
	/* A held head (deferred for locality, waiting for --switches) may
	 * fit now but waits for fewer groups: later jobs may use the hosts
	 * planned for it only if they end (by their requested time) before
	 * it is expected to start; otherwise they go elsewhere. */
	kept = s->resv_job >= 0 && s->resv_job == s->queue[0];
	if (kept) {
		if (!s->resv_fixed)
			held_reservation(s, &s->jobs[s->queue[0]]);
		shadow = s->resv_until;
		extra = s->H;
	} else {
		reservation(s, &s->jobs[s->queue[0]], &shadow, &extra);
	}
	for (int qi = 1; qi < s->nq && examined < s->cfg->backfill_depth; qi++) {
		const sjob *j = &s->jobs[s->queue[qi]];
		int ends_before = s->now + j->req <= shadow, nh = j->nh;

		examined++;
		if (!ends_before && nh > extra)
			continue;
		rc = try_start(s, qi, kept && !ends_before ? outside_reservation(s) : NULL, err);
		if (rc < 0)
			return -1;
		if (rc == 1) {
			if (!ends_before)
				extra -= nh;
			qi--;
		}
	}
	return 0;
}

/* ---- the event loop --------------------------------------------------------- */

static void advance(sim *s, double t)
{
	double dt = t - s->now;

	if (dt > 0) {
		s->frag_int += fragmentation(s) * dt;
		for (int i = 0; i < s->nrun; i++) {
			sjob *j = &s->jobs[s->run[i]];

			j->work_left -= j->rate * dt;
			s->busy_gpu_s += (double)job_gpus_on_host(s, j) * j->nh * dt;
		}
	}
	s->now = t;
}

/* The earliest locality-wait deadline of a deferred queued job, after now:
 * the scheduler runs then even if nothing else happens. */
static double next_deadline(const sim *s)
{
	double t = INFINITY;

	for (int i = 0; i < s->nq; i++) {
		const sjob *j = &s->jobs[s->queue[i]];

		if (j->defer_start >= 0 && j->defer_deadline > s->now && j->defer_deadline < t)
			t = j->defer_deadline;
	}
	return t;
}

static double next_end(const sim *s)
{
	double t = INFINITY;

	for (int i = 0; i < s->nrun; i++) {
		const sjob *j = &s->jobs[s->run[i]];
		double e = s->now + (j->work_left > 0 ? j->work_left / j->rate : 0);

		if (e < t)
			t = e;
	}
	return t;
}

/* Run events up to time `until` (INFINITY: to the end). */
int sim_loop(sim *s, double until, topo_error *err)
{
	for (;;) {
		double ta = s->next_arrival < s->nj ? s->jobs[s->next_arrival].submit : INFINITY;
		double te = next_end(s), t = ta < te ? ta : te, td = next_deadline(s);
		int changed = 0;

		if (td < t) {
			t = td;
			changed = 1;
		}

		if (!isfinite(t) || t > until) {
			if (isfinite(until))
				advance(s, until);
			return 0;
		}
		advance(s, t);
		for (int i = 0; i < s->nrun; i++) {
			const sjob *j = &s->jobs[s->run[i]];

			if (j->work_left <= 1e-9 * (j->base + 1) ||
			    s->now + j->work_left / j->rate <= t) {
				end_job(s, i--);
				changed = 1;
			}
		}
		while (s->next_arrival < s->nj && s->jobs[s->next_arrival].submit <= t) {
			sjob *j = &s->jobs[s->next_arrival];

			if (j->status == J_FUTURE) {
				if (s->cfg->runtime_prediction == SIM_RT_ORACLE)
					j->pred = j->base;
				else if (s->rt)
					j->pred = place_runtime_predict(s->rt, &j->rtj);
				if (s->is_fork && s->cfg->runtime_prediction == SIM_RT_LEARNED)
					j->base = j->pred > 0 ? j->pred : j->req; /* sim_fork */
				j->status = J_QUEUED;
				s->queue[s->nq++] = s->next_arrival;
				changed = 1;
			}
			s->next_arrival++;
		}
		if (changed && sim_schedule(s, err))
			return -1;
		if (s->net_dirty)
			sim_recompute_rates(s);
		if (!s->is_fork && s->cfg->progress && s->done % (s->nj / 100 + 1) == 0 && changed)
			s->cfg->progress(s->cfg->progress_ctx, s->done, s->nj);
	}
}

/* ---- setup -------------------------------------------------------------------- */

void sim_free(sim *s)
{
	for (int i = 0; s->jobs && i < s->nj; i++) {
		free(s->jobs[i].hosts);
		sim_flows_free(&s->jobs[i].fl);
	}
	free(s->jobs);
	free(s->queue);
	free(s->run);
	free(s->host_njobs);
	free(s->host_gpus_used);
	free(s->host_cores_used);
	free(s->group_busy);
	free(s->group_size);
	free(s->lat);
	free(s->ref);
	free(s->rates);
	free(s->flp);
	free(s->rank);
	free(s->hostbuf);
	free(s->chosen);
	free(s->endt);
	free(s->resv_hosts);
	free(s->tree_leaf);
	free(s->tree_leaf_size);
	free(s->unit_buf);
	free(s->allowed);
	free(s->defer_mask);
	place_state_free(s->st);
	if (!s->is_fork) {
		place_runtime_free(s->rt);
		place_features_free(s->feat);
		place_engine_free(s->eng);
		sim_net_free(s->net);
	}
	memset(s, 0, sizeof(*s));
}

/* Arrays sized by the cluster and job count (shared by runs and forks). */
int sim_alloc(sim *s)
{
	size_t H = (size_t)s->H, N = (size_t)s->nj;

	s->jobs = calloc(N + 1, sizeof(*s->jobs));
	s->queue = calloc(N + 1, sizeof(int));
	s->run = calloc(N + 1, sizeof(int));
	s->rank = calloc(N + 1, sizeof(int));
	s->rates = calloc(N + 1, sizeof(double));
	s->flp = calloc(N + 1, sizeof(*s->flp));
	s->host_njobs = calloc(H + 1, sizeof(int));
	s->host_gpus_used = calloc(H + 1, sizeof(int));
	s->host_cores_used = calloc(H + 1, sizeof(int));
	s->hostbuf = calloc(3 * H + 1, sizeof(int));
	s->chosen = calloc(H + 1, sizeof(int));
	s->endt = calloc(N + 1, sizeof(double));
	s->group_busy = calloc((size_t)s->ngroups + 1, sizeof(int));
	s->group_size = calloc((size_t)s->ngroups + 1, sizeof(int));
	s->resv_hosts = calloc(H + 1, 1);
	s->tree_leaf = calloc(H + 1, sizeof(int));
	s->tree_leaf_size = calloc(H + (size_t)sim_net_nleaves(s->net) + (size_t)s->ngroups + 1,
				   sizeof(int));
	s->unit_buf = calloc(H + 1 + 2 * units_bound(s), sizeof(int));
	s->allowed = calloc(H + 1, 1);
	s->defer_mask = calloc((size_t)s->ngroups + 1, 1);
	s->resv_job = -1;
	s->st = place_state_new(s->c);
	if (!s->jobs || !s->queue || !s->run || !s->rank || !s->rates || !s->flp ||
	    !s->host_njobs || !s->host_gpus_used || !s->host_cores_used || !s->hostbuf ||
	    !s->chosen || !s->endt || !s->group_busy || !s->group_size || !s->resv_hosts ||
	    !s->allowed || !s->defer_mask || !s->st || !s->tree_leaf || !s->tree_leaf_size ||
	    !s->unit_buf)
		return -1;
	s->ntree_leaves = sim_tree_leaves(s->c, s->net, s->tree_leaf, s->tree_leaf_size);
	for (int h = 0; h < s->H; h++) {
		place_state_set_host(s->st, h, s->G, s->G, s->C, s->C, 0);
		s->group_size[place_cluster_host_group(s->c, h)]++;
	}
	return 0;
}

static void init_jobs(sim *s, const topo_trace *tr)
{
	const sim_config *cfg = s->cfg;

	for (int i = 0; i < s->nj; i++) {
		const trace_job *t = &tr->jobs[i];
		sjob *j = &s->jobs[i];

		j->nh = t->hosts > 0 ? t->hosts : 1;
		j->gpus = t->gpus_per_host > s->G ? s->G : t->gpus_per_host;
		j->cores = t->cores_per_host > s->C ? s->C : t->cores_per_host;
		if (j->gpus <= 0 && j->cores > 0 && t->source == TOPO_TRACE_ALIBABA)
			j->gpus = 0; /* CPU-only pod: cores only */
		j->submit = t->submit;
		j->defer_start = -1;
		j->hold_until = -1;
		j->switch_start = -1;
		j->rtj = (place_runtime_job){t->user, t->group,
					     t->app >= 0 ? (uint32_t)t->app + 1 : 0,
					     t->limit_known ? t->requested : 0, t->procs, t->submit};
		j->base = t->runtime;
		j->req = t->requested > t->runtime ? t->requested : t->runtime;
		j->status = j->nh > s->H ? J_DROPPED : J_FUTURE;
		j->heavy = j->nh > 1 && cfg->nprofiles > 0;
		if (j->heavy) {
			uint64_t key = (uint64_t)t->id * 2 + (uint64_t)t->source;

			j->comm = cfg->profiles[sim_comm_profile_draw(cfg->nprofiles, cfg->place.seed, key)]
					  .comm;
			/* SHARP users: a share of the heavy jobs, drawn per job */
			j->comm.sharp = cfg->sharp_share > 0 &&
					sim_comm_profile_draw(1000, cfg->place.seed ^ 0x5a5a5a5au, key) <
						cfg->sharp_share * 1000;
		}
	}
}

/* ---- metrics ----------------------------------------------------------------- */

void sim_job_bytes(const sjob *j, double *total, double *xleaf, double *xgroup)
{
	double iters = j->heavy ? sim_life_iters(&j->comm, j->base, j->t_ideal) : 0;

	*total = iters * j->bytes_per_flow * j->fl.flows;
	*xleaf = iters * j->bytes_per_flow * j->fl.cross_leaf;
	*xgroup = iters * j->bytes_per_flow * j->fl.cross_group;
}

static int collect(sim *s, sim_metrics *m)
{
	double *wait = calloc((size_t)s->nj + 1, sizeof(double));
	double *slow = calloc((size_t)s->nj + 1, sizeof(double));
	double sw = 0, ss = 0, last = 0, useful = 0;
	long nw = 0, ns = 0;
	int oom = 0;
	sim_bound *bound = sim_bound_new(s->c, s->net);

	if (!wait || !slow || !bound) {
		free(wait);
		free(slow);
		sim_bound_free(bound);
		return -1;
	}
	memset(m, 0, sizeof(*m));
	snprintf(m->policy, sizeof(m->policy), "%s", sim_config_policy_name(s->cfg));
	m->jobs = s->nj;
	for (int i = 0; i < s->nj; i++) {
		const sjob *j = &s->jobs[i];
		double total, xleaf, xgroup;

		if (j->status == J_DROPPED) {
			m->dropped++;
			continue;
		}
		if (j->status != J_DONE)
			continue;
		m->started++;
		wait[nw++] = j->start - j->submit;
		if (j->defer_start >= 0) {
			m->deferred_jobs++;
			m->mean_defer_s += j->start - j->defer_start;
		}
		sw += j->start - j->submit;
		useful += (double)job_gpus_on_host(s, j) * j->nh * j->base;
		if (j->end > last)
			last = j->end;
		if (!j->heavy)
			continue;
		m->heavy_jobs++;
		slow[ns] = (j->end - j->start) / j->base;
		ss += slow[ns++];
		m->comm_node_hours += (j->end - j->start - j->base) * j->nh / 3600.0;

		oom |= sim_bound_account(bound, j->hosts, j->nh, &j->comm, j->base, m);
		sim_job_bytes(j, &total, &xleaf, &xgroup);
		m->total_bytes_heavy += total;
		m->cross_leaf_bytes_heavy += xleaf;
		m->cross_group_bytes_heavy += xgroup;
	}
	m->cross_leaf_frac = m->total_bytes_heavy > 0
				     ? m->cross_leaf_bytes_heavy / m->total_bytes_heavy : 0;
	m->cross_group_frac = m->total_bytes_heavy > 0
				      ? m->cross_group_bytes_heavy / m->total_bytes_heavy : 0;
	m->mean_wait_s = nw ? sw / nw : 0;
	m->deferrals = s->deferrals;
	m->mean_defer_s = m->deferred_jobs ? m->mean_defer_s / m->deferred_jobs : 0;
	m->p95_wait_s = quantile(wait, nw, 0.95);
	m->mean_comm_slowdown = ns ? ss / ns : 1.0;
	m->p95_comm_slowdown = ns ? quantile(slow, ns, 0.95) : 1.0;
	m->makespan_s = last;
	m->utilization = last > 0 ? s->busy_gpu_s / ((double)s->H * s->G * last) : 0;
	m->useful_utilization = last > 0 ? useful / ((double)s->H * s->G * last) : 0;
	m->fragmentation = last > 0 ? s->frag_int / last : 0;
	m->decisions = s->nlat;
	m->failed_decisions = s->failed;
	m->decision_p50_us = quantile(s->lat, s->nlat, 0.50);
	m->decision_p99_us = quantile(s->lat, s->nlat, 0.99);
	m->refresh_p50_us = quantile(s->ref, s->nref, 0.50);
	m->refresh_p99_us = quantile(s->ref, s->nref, 0.99);
	m->refreshes = s->nref;
	m->lookahead_changed = s->lookahead_changed;
	m->lookahead_started = s->lookahead_started;
	m->lookahead_held = s->lookahead_held;
	free(wait);
	free(slow);
	sim_bound_free(bound);
	return oom ? -1 : 0;
}

/* ---- entry point ---------------------------------------------------------------- */

int sim_run(const place_cluster *c, const topo_trace *trace, const sim_config *cfg,
		 sim_metrics *m, topo_error *err)
{
	sim s;
	int rc = -1;

	topo_error_clear(err);
	memset(&s, 0, sizeof(s));
	s.c = c;
	s.cfg = cfg;
	s.H = place_cluster_nhosts(c);
	s.G = cfg->gpus_per_host > 0 ? cfg->gpus_per_host : 8;
	s.C = cfg->cores_per_host > 0 ? cfg->cores_per_host : 112;
	s.ngroups = place_cluster_ngroups(c) + 1; /* + a trailing pseudo-group */
	s.nj = trace->njobs;
	s.eng = place_engine_new(c, &cfg->place, err);
	if (!s.eng || place_gnn_register(s.eng, cfg->place.model_path, err) < 0)
		goto out;
	s.net = sim_net_new(c, err);
	if (!s.net)
		goto out;
	if (cfg->training &&
	    !(s.feat = place_features_new(c, cfg->place.frag_weight, cfg->place.hop_latency_us))) {
		topo_error_set(err, "", 0, "out of memory building the training features");
		goto out;
	}
	if (cfg->runtime_prediction == SIM_RT_LEARNED && !(s.rt = place_runtime_new())) {
		topo_error_set(err, "", 0, "out of memory for the run-time predictor");
		goto out;
	}
	if (sim_alloc(&s) || !(s.lat = calloc(2 * (size_t)s.nj + 2, sizeof(double))) ||
	    !(s.ref = calloc(2 * (size_t)s.nj + 2, sizeof(double)))) {
		topo_error_set(err, "", 0, "out of memory setting up the simulation");
		goto out;
	}
	init_jobs(&s, trace);
	if (sim_loop(&s, INFINITY, err))
		goto out;
	if (collect(&s, m)) {
		topo_error_set(err, "", 0, "out of memory collecting metrics");
		goto out;
	}
	if (m->started == 0 && m->jobs > m->dropped) {
		topo_error_set(err, "", 0, "policy %s placed no job; the engine said: %s",
			       place_policy_name(cfg->policy), s.last_reason);
		goto out;
	}
	if (cfg->progress)
		cfg->progress(cfg->progress_ctx, s.nj, s.nj);
	rc = 0;
out:
	sim_free(&s);
	return rc;
}
