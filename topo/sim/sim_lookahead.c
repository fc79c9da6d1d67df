/*
 * sim_lookahead: the `lookahead` policy of the simulator, and the teacher
 * of the GNN (docs/simulator.md, "Lookahead").
 *
 * At a heavy job's decision, the base policy (tree or model) has ranked
 * the engine's candidates. For each of the first K same-size ones the run
 * is forked (sim_fork), the job starts on that candidate, and the fork
 * schedules on with the base policy for a fixed horizon. The candidate with
 * the lowest objective is taken:
 *
 *   J = X / (mean X + eps_X) + w * W / (mean W + eps_W)
 *
 * X: the heavy cross-group bytes (over their whole lives) of the jobs that
 * started inside the horizon, this one included; W: all jobs' wait inside
 * the horizon (job-seconds); means over the decision's candidates, so the
 * two terms are relative changes; w = 0.3 (sim_config) makes 1% of bytes
 * worth 3.3% of wait inside the horizon. eps_X = 5% of this job's own
 * ring bytes, eps_W = one job-hour: differences far below those are noise,
 * not signal. Ties keep the base
 * policy's choice.
 *
 * Defer is a candidate too, when the base decision weighed locality for
 * the job (model or gnn with a LocalityWait budget left): a deferral the
 * engine made is candidate 0, weighed against starting now; a placement
 * it made is weighed against holding the job to the next event
 * (sim_hold_job). The forks see true run times, the engine time limits,
 * so the teacher knows when a better placement really frees.
 *
 * The cost is bounded: K (+1) forks of one horizon per heavy decision,
 * nothing recursive (forks decide with the base policy only). Offline only.
 */
#include "sim_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "place_scorer.h"

#define SIM_LOOKAHEAD_EPS_X 0.05   /* x the job's own ring bytes */
#define SIM_LOOKAHEAD_EPS_W 3600.0 /* job-seconds */

/* Jobs' total wait inside [from, until] (queued jobs up to until). */
static double window_wait(const sim *f, double from, double until)
{
	double w = 0;

	for (int i = 0; i < f->nj; i++) {
		const sjob *j = &f->jobs[i];
		double a, b;

		if (j->status == J_DROPPED || j->status == J_FUTURE || j->submit >= until)
			continue;
		if (j->status == J_RUNNING || j->status == J_DONE) {
			if (j->start < from)
				continue;
			b = j->start;
		} else {
			b = until;
		}
		a = j->submit > from ? j->submit : from;
		if (b > a)
			w += b - a;
	}
	return w;
}

/* Heavy cross-group bytes of the jobs that started at or after `from`. */
static double window_bytes(const sim *f, double from)
{
	double x = 0;

	for (int i = 0; i < f->nj; i++) {
		const sjob *j = &f->jobs[i];
		double total, xleaf, xgroup;

		if (!j->heavy || (j->status != J_RUNNING && j->status != J_DONE) || j->start < from)
			continue;
		sim_job_bytes(j, &total, &xleaf, &xgroup);
		x += xgroup;
	}
	return x;
}

/* Fork s, start queue entry qi on hosts (NULL: defer it; d its decision),
 * run the horizon: X, W and the job's own ring bytes. */
static int look(const sim *s, int qi, const int *hosts, const place_decision *d, double *x,
		double *w, double *own, topo_error *err)
{
	int idx = s->queue[qi], rc = -1;
	double until = s->now + s->cfg->lookahead_horizon_s;
	sim f;

	if (sim_fork(s, &f)) {
		topo_error_set(err, "", 0, "out of memory forking the simulation");
		goto out;
	}
	if (hosts) {
		memmove(&f.queue[qi], &f.queue[qi + 1], (size_t)(f.nq - qi - 1) * sizeof(int));
		f.nq--;
		if (sim_start_job(&f, idx, hosts, err))
			goto out;
	} else if (!d->deferred || s->cfg->lookahead == SIM_LOOKAHEAD_LABEL) {
		/* the fork's engine defers on its own, unless the student's did */
		sim_hold_job(&f, idx, d);
	}
	if (sim_schedule(&f, err))
		goto out;
	sim_recompute_rates(&f);
	if (sim_loop(&f, until, err))
		goto out;
	*x = window_bytes(&f, s->now);
	*w = window_wait(&f, s->now, until);
	if (f.jobs[idx].status == J_RUNNING || f.jobs[idx].status == J_DONE) {
		double total, xleaf, xgroup;

		sim_job_bytes(&f.jobs[idx], &total, &xleaf, &xgroup);
		if (total > *own)
			*own = total;
	}
	rc = 0;
out:
	sim_free(&f);
	return rc;
}

int sim_lookahead_eval(const sim *s, int qi, const place_choice *cand, int nc,
		       const place_decision *d, double *J, topo_error *err)
{
	double x[SIM_LOOKAHEAD_MAX + 1], w[SIM_LOOKAHEAD_MAX + 1], mx = 0, mw = 0, own = 0;

	if (nc > SIM_LOOKAHEAD_MAX + 1)
		nc = SIM_LOOKAHEAD_MAX + 1;
	for (int c = 0; c < nc; c++) {
		if (look(s, qi, cand[c].hosts, d, &x[c], &w[c], &own, err))
			return -1;
		mx += x[c] / nc;
		mw += w[c] / nc;
	}
	for (int c = 0; c < nc; c++)
		J[c] = x[c] / (mx + SIM_LOOKAHEAD_EPS_X * own) +
		       s->cfg->lookahead_wait_weight * w[c] / (mw + SIM_LOOKAHEAD_EPS_W);
	return nc;
}

/* The first K same-size candidates, the base choice first, copied (the
 * forks' decisions overwrite the engine's arrays) into store. */
int sim_lookahead_candidates(const sim *s, int idx, const place_decision *d, const int *chosen,
			     int k, place_choice *cand, int *store)
{
	int nh = s->jobs[idx].nh, nc = 0;

	if (k > SIM_LOOKAHEAD_MAX)
		k = SIM_LOOKAHEAD_MAX;
	cand[nc] = d->chosen;
	cand[nc++].hosts = (int *)chosen;
	for (int a = 0; a < d->nalternatives && nc < k; a++)
		if (d->alternatives[a].nhosts == nh)
			cand[nc++] = d->alternatives[a];
	for (int c = 0; c < nc; c++) {
		memcpy(store + (size_t)c * nh, cand[c].hosts, (size_t)nh * sizeof(int));
		cand[c].hosts = store + (size_t)c * nh;
	}
	return nc;
}

/* May the teacher weigh deferring job idx (decision d)? When the engine
 * deferred it, or weighed locality for it and budget is left. */
static int may_defer(const sim *s, int idx, const place_decision *d)
{
	const sjob *j = &s->jobs[idx];
	double left;

	if (d->deferred)
		return 1;
	if (!d->locality_checked)
		return 0;
	left = j->defer_start < 0 ? d->defer_budget_s : j->defer_deadline - s->now;
	return left >= 1;
}

void sim_holds_header(FILE *f)
{
	fputs("# topognn-holds 1:", f);
	for (int i = 0; i < PLACE_HOLD_FEATURES; i++)
		fprintf(f, " %s", place_hold_feature_names[i]);
	fputs(" j_hold j_start\n", f);
}

/* A hold sample: what the hold decision saw, the objective of holding
 * (cand[hold]) and of the best placement (cand[first .. first + np)). */
static void hold_sample(const sim *s, const place_decision *d, const double *J, int hold,
			int first, int np)
{
	double start = INFINITY;

	if (!s->cfg->holds || !d->hold_weighed)
		return;
	for (int c = first; c < first + np; c++)
		if (J[c] < start)
			start = J[c];
	for (int i = 0; i < PLACE_HOLD_FEATURES; i++)
		fprintf(s->cfg->holds, "%.6g ", d->hold_feat[i]);
	fprintf(s->cfg->holds, "%.9g %.9g\n", J[hold], start);
}

int sim_lookahead_pick(sim *s, int qi, place_decision *d, int *defer, topo_error *err)
{
	int idx = s->queue[qi], nh = s->jobs[idx].nh, nc, np, best = 0, rc = -1, first;
	place_choice cand[SIM_LOOKAHEAD_MAX + 1];
	double J[SIM_LOOKAHEAD_MAX + 1];
	int label = s->cfg->lookahead == SIM_LOOKAHEAD_LABEL;
	int *store;

	*defer = label && d->deferred; /* a DAgger run follows the student */
	/* the gate decides, and topognn-train --holds learns, only where a
	 * better set is predicted in time; without --emit-holds no label is
	 * written, so no fork is worth its time */
	if (label && (!s->cfg->holds || !d->hold_weighed ||
		      d->hold_feat[PLACE_HOLD_BETTER_SET] < 0.5f))
		return 0; /* nothing for the teacher to label */
	store = malloc((size_t)SIM_LOOKAHEAD_MAX * nh * sizeof(int));
	if (!store) {
		topo_error_set(err, "", 0, "out of memory in the lookahead");
		return -1;
	}
	/* the engine's scratch changes with every fork's decision */
	if (d->deferred && d->defer_group_mask) {
		memcpy(s->defer_mask, d->defer_group_mask, (size_t)place_cluster_ngroups(s->c));
		d->defer_group_mask = s->defer_mask;
	}
	np = sim_lookahead_candidates(s, idx, d, s->chosen, s->cfg->lookahead_k, cand, store);
	nc = np;
	first = 0; /* the placements: cand[first .. first + np) */
	if (may_defer(s, idx, d)) {
		/* the engine's own answer is candidate 0, so that ties keep it */
		if (d->deferred) {
			memmove(&cand[1], &cand[0], (size_t)np * sizeof(cand[0]));
			first = 1;
			cand[0] = (place_choice){ 0 };
		} else {
			cand[np] = (place_choice){ 0 };
		}
		nc++;
	}
	if (nc < 2) {
		rc = 0;
		goto out;
	}
	if (sim_lookahead_eval(s, qi, cand, nc, d, J, err) < 0)
		goto out;
	if (nc > np)
		hold_sample(s, d, J, first ? 0 : np, first, np);
	if (label) {
		rc = 0; /* the student's choice stands */
		goto out;
	}
	for (int c = 1; c < nc; c++)
		if (J[c] < J[best] - 1e-9)
			best = c;
	s->lookahead_changed += best != 0;
	s->lookahead_started += first && best != 0;   /* the engine deferred, the teacher starts */
	s->lookahead_held += !first && !cand[best].hosts; /* the engine placed, the teacher holds */
	if (cand[best].hosts)
		memcpy(s->chosen, cand[best].hosts, (size_t)nh * sizeof(int));
	else
		*defer = 1;
	rc = 0;
	/* the student ranks placements: the samples leave defer out */
	if (s->cfg->training && np >= 2 &&
	    s->heavy_decisions % (s->cfg->train_every > 0 ? s->cfg->train_every : 1) == 0)
		rc = sim_training_add_decision(s, idx, cand + first, np, J + first, err);
out:
	free(store);
	return rc;
}
