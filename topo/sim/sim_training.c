/*
 * sim_training: the simulator's labelled decisions for the GNN (see
 * sim_internal.h and docs/simulator.md, "Training samples"). A sampled
 * decision is labelled by the lookahead teacher (sim_lookahead.c): each
 * same-size candidate is started in a fork of the run that schedules on for
 * a horizon, and its target is minus the teacher's objective. The state of
 * the moment and the candidates' features go to the sample file
 * (sim_samples.c). sim_fork() is here: both the teacher and the samples
 * fork the run.
 */
#include "sim_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "place_features.h"

/* A fork of a run told predictions (+pred) knows no more than its engine:
 * its jobs run as long as predicted, not as long as they will. A running
 * job ends at its expected end (sim_expected_end: past its prediction, as
 * long again as it has run, within its limit), a queued one runs its
 * prediction at submit, and so does each later arrival (sim_loop); with no
 * prediction, the limit. The bytes the teacher weighs follow. */
static void fork_predicted(sim *f)
{
	for (int i = 0; i < f->nrun; i++) {
		sjob *j = &f->jobs[f->run[i]];
		double left = sim_expected_end(f, j) - f->now;

		j->work_left = (left > 0 ? left : 0) * j->rate;
	}
	for (int q = 0; q < f->nq; q++) {
		sjob *j = &f->jobs[f->queue[q]];

		j->base = j->pred > 0 ? j->pred : j->req;
	}
}

/* A copy of s at this moment, with its own place_state. When s is told
 * predictions, the copy runs on them (fork_predicted). */
int sim_fork(const sim *s, sim *f)
{
	memset(f, 0, sizeof(*f));
	f->c = s->c;
	f->cfg = s->cfg;
	f->eng = s->eng;
	f->net = s->net;
	f->H = s->H;
	f->G = s->G;
	f->C = s->C;
	f->ngroups = s->ngroups;
	f->nj = s->nj;
	f->is_fork = 1;
	f->rt = s->rt; /* read only in a fork */
	if (sim_alloc(f))
		return -1;
	memcpy(f->jobs, s->jobs, (size_t)s->nj * sizeof(*s->jobs));
	for (int i = 0; i < s->nj; i++) {
		f->jobs[i].hosts = NULL;
		memset(&f->jobs[i].fl, 0, sizeof(f->jobs[i].fl));
	}
	memcpy(f->queue, s->queue, (size_t)s->nq * sizeof(int));
	f->nq = s->nq;
	f->next_arrival = s->next_arrival;
	f->now = s->now;
	/* restart the running jobs on the same hosts, keeping their progress */
	for (int i = 0; i < s->nrun; i++) {
		const sjob *o = &s->jobs[s->run[i]];
		topo_error e;

		if (sim_start_job(f, s->run[i], o->hosts, &e))
			return -1;
		f->jobs[s->run[i]].start = o->start;
		f->jobs[s->run[i]].work_left = o->work_left;
		place_state_set_job_end(f->st, (uint32_t)s->run[i] + 1, sim_expected_end(f, o));
	}
	sim_recompute_rates(f);
	if (s->cfg->runtime_prediction == SIM_RT_LEARNED)
		fork_predicted(f);
	return 0;
}

/* Did every candidate score the same (as the float target would)? Such
 * decisions carry no ranking signal and, kept, teach the model that
 * nothing matters. */
static int all_tied(const double *J, int nc)
{
	for (int c = 1; c < nc; c++)
		if (fabsf((float)J[c] - (float)J[0]) >= 1e-6f)
			return 0;
	return 1;
}

/* The set features the gnn scorer computes, on the state of this moment. */
static int fill_sets(sim *s, int idx, const place_choice *cand, int nc, sim_sample_set *ss)
{
	place_candidate pc[SIM_LOOKAHEAD_MAX];
	place_request req;

	ss->ncands = nc;
	ss->sets = calloc((size_t)nc, sizeof(int *));
	ss->set_len = calloc((size_t)nc, sizeof(int));
	ss->set_features = calloc((size_t)nc * PLACE_FEAT_SET, sizeof(float));
	ss->targets = calloc((size_t)nc, sizeof(float));
	if (sim_sample_graph(s->feat, s->st, ss) || !ss->sets || !ss->set_len ||
	    !ss->set_features || !ss->targets)
		return -1;
	sim_build_request(s, idx, &req);
	memset(pc, 0, sizeof(pc));
	for (int c = 0; c < nc; c++) {
		pc[c].hosts = cand[c].hosts;
		pc[c].nhosts = cand[c].nhosts;
		pc[c].kind = cand[c].kind;
	}
	place_features_sets(s->feat, s->st, &req, pc, nc, ss->set_features);
	for (int c = 0; c < nc; c++) {
		ss->sets[c] = malloc((size_t)cand[c].nhosts * sizeof(int));
		if (!ss->sets[c])
			return -1;
		for (int k = 0; k < cand[c].nhosts; k++) /* hosts -> their graph vertices */
			ss->sets[c][k] = place_features_host_vertex(s->feat)[cand[c].hosts[k]];
		ss->set_len[c] = cand[c].nhosts;
	}
	return 0;
}

int sim_training_add_decision(sim *s, int idx, const place_choice *cand, int nc,
			      const double *J, topo_error *err)
{
	sim_sample_set *ss;

	if (nc < 2 || (!s->cfg->train_keep_ties && all_tied(J, nc)))
		return 0; /* nothing to rank */
	ss = calloc(1, sizeof(*ss));
	if (!ss || fill_sets(s, idx, cand, nc, ss)) {
		sim_sample_set_free(ss);
		goto oom;
	}
	for (int c = 0; c < nc; c++) /* higher is better */
		ss->targets[c] = (float)-J[c];
	if (sim_samples_add(s->cfg->training, ss))
		goto oom;
	return 0;
oom:
	topo_error_set(err, "", 0, "out of memory collecting training samples");
	return -1;
}

int sim_training_sample(sim *s, int qi, const place_decision *d, const int *chosen,
			topo_error *err)
{
	int idx = s->queue[qi], nc, rc = -1;
	place_choice cand[SIM_LOOKAHEAD_MAX];
	double J[SIM_LOOKAHEAD_MAX];
	int *store = malloc((size_t)SIM_LOOKAHEAD_MAX * s->jobs[idx].nh * sizeof(int));

	if (!store) {
		topo_error_set(err, "", 0, "out of memory collecting training samples");
		return -1;
	}
	nc = sim_lookahead_candidates(s, idx, d, chosen, s->cfg->lookahead_k, cand, store);
	if (nc < 2)
		rc = 0;
	else if (sim_lookahead_eval(s, qi, cand, nc, d, J, err) >= 0)
		rc = sim_training_add_decision(s, idx, cand, nc, J, err);
	free(store);
	return rc;
}
