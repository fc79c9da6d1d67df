/*
 * report_history: decision statistics over a window, and the export of
 * observed outcomes as topognn-train samples. See report_history.h.
 */
#include "report_history.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "place_record.h"
#include "place_view.h"
#include "sim_samples.h"
#include "topo_num.h"

const double report_latency_bounds[REPORT_LATENCY_BUCKETS] = {
	10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, INFINITY};

double report_predicted_slowdown(const report_decision *d)
{
	/* only the analytic model's cost is a slowdown; a GNN's is a score */
	if (isnan(d->chosen.cost) || (d->scorer[0] && strcmp(d->scorer, "model") != 0))
		return NAN;
	return d->chosen.cost - (isnan(d->chosen.frag_cost) ? 0 : d->chosen.frag_cost);
}

static void count_policy(report_stats *st, const char *p)
{
	for (int i = 0; i < st->npolicies; i++)
		if (!strcmp(st->policies[i].policy, p)) {
			st->policies[i].n++;
			return;
		}
	if (st->npolicies < 8) {
		snprintf(st->policies[st->npolicies].policy, sizeof(st->policies[0].policy), "%s",
			 p[0] ? p : "unknown");
		st->policies[st->npolicies++].n = 1;
	}
}

/* A decision's place in hold_stats' order: by job, then log order. */
typedef struct job_line {
	uint32_t job;
	int i;
} job_line;

static int by_job(const void *a, const void *b)
{
	const job_line *x = a, *y = b;

	return x->job != y->job ? (x->job > y->job) - (x->job < y->job) : (x->i > y->i) - (x->i < y->i);
}

/* The median of the known (not NAN) values among v[0..n) whose at[i] is
 * `where` (-1: all), sorted in scratch[0..n); NAN when there is none. */
static double median_at(const double *v, const int *at, int n, int where, double *scratch)
{
	int m = 0;

	for (int i = 0; i < n; i++)
		if (!isnan(v[i]) && (where < 0 || at[i] == where))
			scratch[m++] = v[i];
	topo_sort_doubles(scratch, (size_t)m);
	return m ? topo_quantile(scratch, (size_t)m, 0.5) : NAN;
}

/* The holds of report_stats: each job's decisions in log order; a
 * deferral opens a hold (the first since the job's last placement), the
 * placement after it closes it. -1 when memory runs out. */
static int hold_stats(const report_log *log, double since, double until, report_stats *st)
{
	size_t cap = (size_t)log->n + 1;
	job_line *idx = malloc(cap * sizeof(job_line));
	int n = 0, open = -1, *at = malloc(cap * sizeof(int));
	double *pred = malloc(cap * 4 * sizeof(double)), *real, *ratio, *scratch;

	st->hold_predicted_median_s = st->hold_realised_median_s = st->hold_ratio_median = NAN;
	st->hold_ratio_median_at[0] = st->hold_ratio_median_at[1] = NAN;
	if (!idx || !pred || !at) {
		free(idx);
		free(pred);
		free(at);
		return -1;
	}
	real = pred + cap;
	ratio = real + cap;
	scratch = ratio + cap;
	for (int i = 0; i < log->n; i++)
		if (log->d[i].ok)
			idx[n++] = (job_line){log->d[i].job, i};
	qsort(idx, (size_t)n, sizeof(*idx), by_job);
	for (int k = 0; k < n; k++) {
		const report_decision *d = &log->d[idx[k].i], *h;

		if (k > 0 && idx[k - 1].job != d->job)
			open = -1;
		if (d->deferred) {
			if (open < 0)
				open = idx[k].i;
			continue;
		}
		h = open >= 0 ? &log->d[open] : NULL;
		open = -1;
		if (!h || d->waited_s <= 0 || d->timestamp < since || d->timestamp > until)
			continue;
		st->holds_kept += d->chosen.groups >= 0 &&
				  d->chosen.groups <= (h->expected_groups >= 0 ? h->expected_groups
									     : h->min_groups);
		st->hold_realised_sum_s += d->waited_s;
		real[st->holds] = d->waited_s;
		pred[st->holds] = h->expected_wait_s;
		ratio[st->holds] = h->expected_wait_s > 0 ? d->waited_s / h->expected_wait_s : NAN;
		at[st->holds] = h->queue_position == 1 ? 0 : h->queue_position > 1 ? 1 : -1;
		if (at[st->holds] >= 0)
			st->holds_at[at[st->holds]]++;
		st->holds++;
	}
	if (st->holds) {
		st->hold_ratio_median_at[0] = median_at(ratio, at, st->holds, 0, scratch);
		st->hold_ratio_median_at[1] = median_at(ratio, at, st->holds, 1, scratch);
		st->hold_ratio_median = median_at(ratio, at, st->holds, -1, scratch);
		st->hold_predicted_median_s = median_at(pred, at, st->holds, -1, scratch);
		st->hold_realised_median_s = median_at(real, at, st->holds, -1, scratch);
	}
	free(idx);
	free(pred);
	free(at);
	return 0;
}

int report_stats_compute(const report_log *log, double since, double until, report_stats *st)
{
	double *lat = malloc(((size_t)log->n + 1) * sizeof(double));
	double csum = 0, bsum = 0, gc = 0, gb = 0, psum = 0, rsum = 0, esum = 0;
	int ncost = 0, ngroups = 0;

	memset(st, 0, sizeof(*st));
	st->since = since;
	st->until = until;
	if (!lat)
		return -1;
	for (int i = 0; i < log->n; i++) {
		const report_decision *d = &log->d[i];
		double pred;

		if (d->timestamp < since || d->timestamp > until)
			continue;
		st->decisions++;
		if (!d->ok) {
			st->failed++;
			continue;
		}
		st->placed++;
		count_policy(st, d->policy);
		st->not_followed += d->followed == 0;
		st->deferred += d->deferred;
		st->waited += !d->deferred && d->waited_s > 0;
		if (!isnan(d->latency_us)) {
			lat[st->nlatency++] = d->latency_us;
			st->latency_sum_us += d->latency_us;
			for (int b = 0; b < REPORT_LATENCY_BUCKETS; b++)
				st->latency_bucket[b] += d->latency_us <= report_latency_bounds[b];
		}
		if (!strcmp(d->comm_class, "heavy") && d->nallocated > 1) {
			st->heavy++;
			st->heavy_spanning += d->chosen.groups > 1;
		}
		if (d->baseline.nhosts > 0) {
			int same = report_choice_same_hosts(&d->chosen, &d->baseline);

			st->shadow++;
			st->agree += same;
			if (!isnan(d->chosen.cost) && !isnan(d->baseline.cost)) {
				csum += d->chosen.cost;
				bsum += d->baseline.cost;
				ncost++;
				if (!same && d->chosen.cost < d->baseline.cost)
					st->chosen_cheaper++;
				else if (!same && d->baseline.cost < d->chosen.cost)
					st->baseline_cheaper++;
			}
			if (d->nallocated > 1 && d->chosen.groups >= 0 && d->baseline.groups >= 0) {
				gc += d->chosen.groups;
				gb += d->baseline.groups;
				ngroups++;
			}
		}
		if (d->ended) {
			st->ended++;
			pred = report_predicted_slowdown(d);
			if (!isnan(pred) && !isnan(d->realised_slowdown)) {
				st->realised++;
				psum += pred;
				rsum += d->realised_slowdown;
				esum += fabs(pred - d->realised_slowdown);
			}
		}
	}
	topo_sort_doubles(lat, (size_t)st->nlatency);
	st->latency_p50_us = topo_quantile(lat, (size_t)st->nlatency, 0.5);
	st->latency_p99_us = topo_quantile(lat, (size_t)st->nlatency, 0.99);
	st->latency_max_us = st->nlatency ? lat[st->nlatency - 1] : NAN;
	st->chosen_cost_mean = ncost ? csum / ncost : NAN;
	st->baseline_cost_mean = ncost ? bsum / ncost : NAN;
	st->chosen_groups_mean = ngroups ? gc / ngroups : NAN;
	st->baseline_groups_mean = ngroups ? gb / ngroups : NAN;
	st->predicted_slowdown_mean = st->realised ? psum / st->realised : NAN;
	st->realised_slowdown_mean = st->realised ? rsum / st->realised : NAN;
	st->slowdown_mae = st->realised ? esum / st->realised : NAN;
	free(lat);
	return hold_stats(log, since, until, st);
}

/* ---- export ---------------------------------------------------------------- */

typedef struct export_ctx {
	const place_cluster *c;
	const report_log *log;
	place_features *feat;        /* the gnn's view, as the simulator builds it */
	int host_gpus;
	int *active, nactive;        /* decision indices of running jobs */
	int *hosts;                  /* scratch: nhosts */
} export_ctx;

static int decision_hosts(const export_ctx *x, const report_decision *d, int *out)
{
	int n = 0;

	for (int i = 0; i < d->nallocated; i++) {
		int h = place_cluster_find_host(x->c, d->allocated[i]);

		if (h < 0)
			return -1; /* a host the graph does not know: not exportable */
		out[n++] = h;
	}
	qsort(out, (size_t)n, sizeof(*out), topo_cmp_int);
	return n;
}

place_comm report_decision_comm(const report_decision *d)
{
	place_comm m = {0};
	int k = place_comm_class_parse(d->comm_class);

	m.cls = k >= 0 ? (place_comm_class)k : PLACE_COMM_NONE;
	m.pattern = PLACE_PATTERN_RING;
	for (int p = PLACE_PATTERN_RING; p <= PLACE_PATTERN_PIPELINE; p++)
		if (!strcmp(d->pattern, place_pattern_name((place_pattern)p)))
			m.pattern = (place_pattern)p;
	m.sharp = d->sharp_user;
	m.bytes_per_iter = d->bytes_per_iter;
	m.compute_s_per_iter = d->compute_s_per_iter;
	return m;
}

/* The engine state just before a decision: every host free, then the jobs
 * still running then (their hosts and traffic). NULL when out of memory. */
static place_state *state_before(export_ctx *x)
{
	place_state *st = place_state_new(x->c);

	if (!st)
		return NULL;
	for (int h = 0; h < place_cluster_nhosts(x->c); h++) {
		int g = place_cluster_host_gpus(x->c, h) > 0 ? place_cluster_host_gpus(x->c, h) : x->host_gpus;

		place_state_set_host(st, h, g, g, 0, 0, 0);
	}
	for (int a = 0; a < x->nactive; a++) {
		const report_decision *d = &x->log->d[x->active[a]];
		place_comm m = report_decision_comm(d);
		int n = decision_hosts(x, d, x->hosts);

		if (n > 0 && place_state_add_job(st, d->job, x->hosts, n, d->gpus_per_host, 0, &m)) {
			place_state_free(st);
			return NULL;
		}
	}
	return st;
}

/* One sample: the state before the decision, the allocation as the single
 * candidate, the realised outcome as its target (higher is better, as the
 * simulator's: minus the measured slowdown above 1). */
static int export_one(export_ctx *x, const report_decision *d, sim_samples *t)
{
	sim_sample_set *ss;
	place_state *st;
	place_candidate pc = {0};
	place_request req = {0};
	int n;

	if (decision_hosts(x, d, x->hosts) <= 0)
		return 0;
	ss = calloc(1, sizeof(*ss));
	st = state_before(x);
	if (!ss || !st || sim_sample_graph(x->feat, st, ss))
		goto oom;
	n = decision_hosts(x, d, x->hosts); /* state_before used x->hosts as scratch */
	ss->ncands = 1;
	ss->sets = calloc(1, sizeof(int *));
	ss->set_len = calloc(1, sizeof(int));
	ss->set_features = calloc(PLACE_FEAT_SET, sizeof(float));
	ss->targets = calloc(1, sizeof(float));
	if (!ss->sets || !ss->set_len || !ss->set_features || !ss->targets ||
	    !(ss->sets[0] = malloc((size_t)n * sizeof(int))))
		goto oom;
	req.job_id = d->job;
	req.min_hosts = req.max_hosts = n;
	req.gpus_per_host = d->gpus_per_host;
	req.exclusive = 1;
	req.comm = report_decision_comm(d);
	pc.hosts = x->hosts;
	pc.nhosts = n;
	pc.kind = "allocated";
	place_features_sets(x->feat, st, &req, &pc, 1, ss->set_features);
	for (int i = 0; i < n; i++)
		ss->sets[0][i] = place_features_host_vertex(x->feat)[x->hosts[i]];
	ss->set_len[0] = n;
	ss->targets[0] = (float)-(d->realised_slowdown - 1.0);
	place_state_free(st);
	return sim_samples_add(t, ss) ? -1 : 1;
oom:
	place_state_free(st);
	sim_sample_set_free(ss);
	return -1;
}

int report_history_write_samples(const place_cluster *c, const report_log *log, double since,
				 double until, int host_gpus, const char *path, topo_error *err)
{
	export_ctx x = {0};
	place_config cfg;
	sim_samples *t = sim_samples_new();
	int H = place_cluster_nhosts(c), nsamples = 0, rc = -1;

	x.c = c;
	x.log = log;
	x.host_gpus = host_gpus > 0 ? host_gpus : 8;
	place_config_init(&cfg); /* the engine's defaults, as the simulator's samples use */
	x.feat = place_features_new(c, cfg.frag_weight, cfg.hop_latency_us);
	x.active = malloc(((size_t)log->n + 1) * sizeof(int));
	x.hosts = malloc(((size_t)H + 1) * sizeof(int));
	if (!t || !x.feat || !x.active || !x.hosts)
		goto oom;
	/* sweep the log in order, keeping the running jobs */
	for (int i = 0; i < log->n; i++) {
		const report_decision *d = &log->d[i];
		int k = 0, r;

		if (!d->ok || d->nallocated == 0)
			continue;
		for (int a = 0; a < x.nactive; a++) {
			const report_decision *e = &log->d[x.active[a]];

			if (!(e->ended && e->end_time <= d->timestamp) && e->job != d->job)
				x.active[k++] = x.active[a];
		}
		x.nactive = k;
		if (d->timestamp >= since && d->timestamp <= until && d->ended &&
		    !isnan(d->realised_slowdown)) {
			r = export_one(&x, d, t);
			if (r < 0)
				goto oom;
			nsamples += r;
		}
		x.active[x.nactive++] = i;
	}
	if (nsamples == 0) {
		rc = 0;
		goto out;
	}
	if (sim_samples_write(t, path, err))
		goto out;
	rc = nsamples;
	goto out;
oom:
	topo_error_set(err, path, 0, "out of memory exporting samples");
out:
	sim_samples_free(t);
	place_features_free(x.feat);
	free(x.active);
	free(x.hosts);
	return rc;
}
