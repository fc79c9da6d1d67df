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
 * The cost is bounded: K forks of one horizon per heavy decision, nothing
 * recursive (forks decide with the base policy only). Offline only.
 */
#include "sim_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* Fork s, start queue entry qi on hosts, run the horizon: X, W and the
 * job's own ring bytes. */
static int look(const sim *s, int qi, const int *hosts, double *x, double *w, double *own,
		topo_error *err)
{
	int idx = s->queue[qi], rc = -1;
	double until = s->now + s->cfg->lookahead_horizon_s;
	sim f;

	if (sim_fork(s, &f)) {
		topo_error_set(err, "", 0, "out of memory forking the simulation");
		goto out;
	}
	memmove(&f.queue[qi], &f.queue[qi + 1], (size_t)(f.nq - qi - 1) * sizeof(int));
	f.nq--;
	if (sim_start_job(&f, idx, hosts, err) || sim_schedule(&f, err))
		goto out;
	sim_recompute_rates(&f);
	if (sim_loop(&f, until, err))
		goto out;
	*x = window_bytes(&f, s->now);
	*w = window_wait(&f, s->now, until);
	{
		double xleaf, xgroup;

		sim_job_bytes(&f.jobs[idx], own, &xleaf, &xgroup);
	}
	rc = 0;
out:
	sim_free(&f);
	return rc;
}

int sim_lookahead_eval(const sim *s, int qi, const place_choice *cand, int nc, double *J,
		       topo_error *err)
{
	double x[SIM_LOOKAHEAD_MAX], w[SIM_LOOKAHEAD_MAX], mx = 0, mw = 0, own = 0;

	if (nc > SIM_LOOKAHEAD_MAX)
		nc = SIM_LOOKAHEAD_MAX;
	for (int c = 0; c < nc; c++) {
		if (look(s, qi, cand[c].hosts, &x[c], &w[c], &own, err))
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

int sim_lookahead_pick(sim *s, int qi, const place_decision *d, topo_error *err)
{
	int idx = s->queue[qi], nh = s->jobs[idx].nh, nc, best = 0, rc = -1;
	place_choice cand[SIM_LOOKAHEAD_MAX];
	double J[SIM_LOOKAHEAD_MAX];
	int *store = malloc((size_t)SIM_LOOKAHEAD_MAX * nh * sizeof(int));

	if (!store) {
		topo_error_set(err, "", 0, "out of memory in the lookahead");
		return -1;
	}
	nc = sim_lookahead_candidates(s, idx, d, s->chosen, s->cfg->lookahead_k, cand, store);
	if (nc < 2) {
		rc = 0;
		goto out;
	}
	if (sim_lookahead_eval(s, qi, cand, nc, J, err) < 0)
		goto out;
	for (int c = 1; c < nc; c++)
		if (J[c] < J[best] - 1e-9)
			best = c;
	s->lookahead_changed += best != 0;
	memcpy(s->chosen, cand[best].hosts, (size_t)nh * sizeof(int));
	rc = 0;
	if (s->cfg->training &&
	    s->heavy_decisions % (s->cfg->train_every > 0 ? s->cfg->train_every : 1) == 0)
		rc = sim_training_add_decision(s, idx, cand, nc, J, err);
out:
	free(store);
	return rc;
}
