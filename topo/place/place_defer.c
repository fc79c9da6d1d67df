/*
 * place_defer: waiting for locality, the way Slurm's --switches=N@maxtime
 * does, applied implicitly to heavy jobs (docs/job-classes.md).
 *
 * A heavy job of n hosts needs min_groups(n) groups on the empty cluster
 * (largest usable groups first). When the set the policy chose now spans
 * more, the fragmentation of the moment caused it, not the job's size. The
 * engine then predicts when a placement over fewer groups frees: every
 * busy host becomes usable when the last job on it reaches its expected end
 * (its time limit; the true run time is never known in advance), so
 * sweeping hosts by that time gives, at each end, the fewest groups n
 * usable hosts would span. If the best of those within what is left of the
 * job's budget beats the choice, the decision says "deferred", with the
 * predicted wait and the groups to keep for the job (a reservation).
 *
 * Budget (LocalityWait in topognn.conf): min(frac x time limit, cap),
 * counted from the first deferral. With a run-time prediction
 * (place_request.predicted_runtime_s, place_runtime.h) a hold must also be
 * short next to how long the job will really run: the predicted wait at
 * most the communication share of its predicted run time, the most the
 * better placement could save it (own_gain_bound), or, while the queue is
 * loaded, at most how long the waiting jobs are predicted to wait anyway
 * (queue_drain_s, from the running jobs' predicted ends). So a lightly
 * loaded cluster, where a better set frees late, does not make jobs wait,
 * and a busy one still keeps groups whole. After it the job takes the best
 * set there is, so nothing starves. Only the model and gnn policies defer;
 * tree, linear and random never do.
 *
 * The learned hold gate (place_hold.h): under gnn, with a prediction, when
 * a better set is predicted to free in time, the gate that comes with the
 * ensemble decides the hold instead of the bounds above, from what they
 * weigh (hold_features, recorded in every decision that weighed a hold:
 * the simulator's teacher labels them for training).
 *
 * Allocates nothing (scratch in place_defer, sized at engine creation).
 */
#include "place_internal.h"
#include "topo_num.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int place_defer_init(place_defer *d, const place_cluster *c)
{
	size_t N = (size_t)c->nhosts + 1, G = (size_t)c->ngroups + 1;

	memset(d, 0, sizeof(*d));
	d->key = calloc(N, sizeof(int));
	d->order = calloc(N, sizeof(int));
	d->gcnt = calloc(G, sizeof(int));
	d->gtmp = calloc(G, sizeof(int));
	d->mask = calloc(G, 1);
	d->hist = calloc(N, sizeof(int));
	d->otmp = calloc(N, sizeof(int));
	d->could = calloc(N, 1);
	if (!d->key || !d->order || !d->gcnt || !d->gtmp || !d->mask || !d->hist || !d->otmp ||
	    !d->could) {
		place_defer_free(d);
		return -1;
	}
	return 0;
}

void place_defer_free(place_defer *d)
{
	free(d->key);
	free(d->order);
	free(d->gcnt);
	free(d->gtmp);
	free(d->mask);
	free(d->hist);
	free(d->otmp);
	free(d->could);
	memset(d, 0, sizeof(*d));
}

/* The number at the start of s, in [0, hi] (topo_parse_double_n judges the
 * characters a number may hold): the text after it, or NULL. */
static const char *leading_number(const char *s, double hi, double *out)
{
	size_t n = strspn(s, "0123456789.+-eE");

	return topo_parse_double_n(s, n, 0, hi, out) < 0 ? NULL : s + n;
}

int place_locality_wait_parse(const char *s, double *frac, double *cap_s, char *why,
			      size_t len)
{
	const char *end;
	double f, cap = 0;

	if (!s || !*s) {
		snprintf(why, len, "LocalityWait is empty");
		return -1;
	}
	if (!strcasecmp(s, "off") || !strcasecmp(s, "no")) {
		*frac = *cap_s = 0;
		return 0;
	}
	if (!(end = leading_number(s, 10, &f))) {
		snprintf(why, len, "LocalityWait \"%s\": the share of the time limit must be a "
			 "number from 0 to 10", s);
		return -1;
	}
	if (*end == ',') {
		if (!(end = leading_number(end + 1, 1e8, &cap))) {
			snprintf(why, len, "LocalityWait \"%s\": the cap must be a duration such "
				 "as 7200, 120m or 2h", s);
			return -1;
		}
		if (*end == 'h' || *end == 'm' || *end == 's') {
			cap *= *end == 'h' ? 3600 : *end == 'm' ? 60 : 1;
			end++;
		}
	}
	if (*end) {
		snprintf(why, len, "LocalityWait \"%s\": unexpected \"%s\" (FRAC[,CAP], e.g. "
			 "0.25,2h)", s, end);
		return -1;
	}
	*frac = f;
	*cap_s = cap;
	return 0;
}

/* Fewest groups whose counts cover n (largest first); INT_MAX if they
 * cannot. With `mask`, flags those groups. */
static int cover(place_defer *d, int ngroups, const int *cnt, int n, uint8_t *mask)
{
	int k = 0, have = 0;

	for (int g = 0; g < ngroups; g++)
		if (cnt[g] > 0)
			d->gtmp[k++] = g;
	place_sort_by_key(d->gtmp, k, cnt); /* ascending: take from the end */
	for (int g = 0; mask && g < ngroups; g++)
		mask[g] = 0;
	for (int i = k - 1; i >= 0; i--) {
		have += cnt[d->gtmp[i]];
		if (mask)
			mask[d->gtmp[i]] = 1;
		if (have >= n)
			return k - i;
	}
	return INT_MAX;
}

/* Could host h hold the request on an empty cluster? A busy host is not
 * offered now (Slurm's node_map leaves it out) but may be once it frees. */
static int host_could(const place_state *s, const place_request *r, int h)
{
	if (s->flags[h] & (PLACE_HOST_DOWN | PLACE_HOST_DRAIN))
		return 0;
	if (r->eligible ? !r->eligible[h] : r->allowed && !r->allowed[h] && !s->njobs[h])
		return 0;
	return s->total_gpus[h] >= r->gpus_per_host && s->total_cores[h] >= r->cores_per_host;
}

/* The fewest groups of the request on an empty cluster; notes in d->could
 * which hosts could hold it, for host_keys. */
static int min_groups(place_defer *d, const place_cluster *c, const place_state *s,
		      const place_request *r, int n)
{
	memset(d->gcnt, 0, (size_t)c->ngroups * sizeof(int));
	for (int h = 0; h < c->nhosts; h++) {
		d->could[h] = (uint8_t)host_could(s, r, h);
		d->gcnt[c->host_group[h]] += d->could[h];
	}
	return cover(d, c->ngroups, d->gcnt, n, NULL);
}

/* Seconds from now until each host is usable (0 now, INT_MAX never or
 * unknown); returns how many hosts have a finite time. After min_groups. */
static int host_keys(place_defer *d, const place_cluster *c, const place_state *s,
		     const place_request *r, const uint8_t *usable)
{
	int n = 0;

	for (int h = 0; h < c->nhosts; h++)
		d->key[h] = usable[h] ? 0 : d->could[h] ? -1 : INT_MAX;
	for (int i = 0; i < s->njobs_running; i++) {
		const place_job *j = &s->jobs[i];
		double left = j->end_s > 0 ? ceil(j->end_s - r->now_s) : INFINITY;
		int k = left < 1 ? 1 : left < 1e9 ? (int)left : INT_MAX;

		for (int x = 0; x < j->nhosts; x++) {
			int h = j->hosts[x];

			if (d->key[h] != 0 && d->key[h] != INT_MAX && k > d->key[h])
				d->key[h] = k;
		}
	}
	for (int h = 0; h < c->nhosts; h++) {
		if (d->key[h] < 0) /* busy but no job known on it */
			d->key[h] = INT_MAX;
		if (d->key[h] != INT_MAX)
			d->order[n++] = h;
	}
	place_sort_radix(d->order, n, d->key, d->otmp); /* hosts in index order: ties keep it */
	return n;
}

/* cover() from hist[c], the number of groups with c hosts (c <= maxc):
 * the same count without sorting the groups. */
static int cover_hist(const int *hist, int maxc, int n)
{
	int k = 0;

	for (int c = maxc; c > 0; c--) {
		if (!hist[c])
			continue;
		if ((long long)hist[c] * c >= n)
			return k + (n + c - 1) / c;
		k += hist[c];
		n -= hist[c] * c;
	}
	return INT_MAX;
}

/* Sweep hosts by the time they free: the earliest time within `left`
 * seconds at which n hosts span the fewest groups, below `beat` (and not
 * below `floor`, the fewest on an empty cluster: reaching it ends the
 * sweep). Returns those groups (beat when none) and sets *when and
 * d->mask. The fewest
 * groups at each end time come from a histogram of the groups' counts,
 * kept as hosts are added: sorting the groups at each of thousands of end
 * times took 25 ms of a decision on a busy 16,384-host cluster
 * (bench/place_latency, gnn+refr+pred). */
static int sweep(place_defer *d, const place_cluster *c, int nfree, int n, double left,
		 int beat, int floor, double *when)
{
	int best = beat, maxc = 0;

	memset(d->gcnt, 0, (size_t)c->ngroups * sizeof(int));
	for (int i = 0; i < nfree && best > floor; i++) {
		int h = d->order[i], t = d->key[h], g, was;

		if (t > 0 && t > left)
			break;
		was = d->gcnt[c->host_group[h]]++;
		if (was > 0)
			d->hist[was]--;
		d->hist[was + 1]++;
		if (was + 1 > maxc)
			maxc = was + 1;
		if (i + 1 < nfree && d->key[d->order[i + 1]] == t)
			continue;
		g = cover_hist(d->hist, maxc, n);
		if (t > 0 && g < best) {
			best = g;
			*when = t;
			cover(d, c->ngroups, d->gcnt, n, d->mask);
		}
	}
	memset(d->hist, 0, (size_t)(maxc + 1) * sizeof(int));
	return best;
}

double place_request_duration(const place_request *r)
{
	if (r->predicted_runtime_s > 0 && r->predicted_runtime_s < r->time_limit_s)
		return r->predicted_runtime_s;
	return r->time_limit_s;
}

/* With a run-time prediction: the most a wait can buy the job itself, its
 * predicted run time's communication share on the set chosen now (the
 * analytic model's collective time against its compute per iteration). A
 * longer hold cannot pay for itself even if the better set removed all
 * its communication time. 0: no prediction, no such bound. */
static double own_gain_bound(const place_request *r, const place_decision *out)
{
	double comm = out->chosen.comm_time_s, all = r->comm.compute_s_per_iter + comm;

	if (r->predicted_runtime_s <= 0)
		return 0;
	return all > 0 ? place_request_duration(r) * comm / all : 0;
}

/* How long the jobs waiting (this one included) are predicted to wait
 * anyway: the time at which the hosts free by then, in the order their
 * predicted ends free them (host_keys), cover the hosts the queue asks for
 * (place_state_set_queue). 0 when they fit now, or when fewer than
 * PLACE_HOLD_QUEUE_JOBS jobs wait: a lightly loaded cluster, where a burst
 * of a few jobs drains in minutes and every hold shows in the wait. */
static double queue_drain_s(const place_defer *d, const place_state *s, int nfree)
{
	if (s->queue_jobs < PLACE_HOLD_QUEUE_JOBS || s->queue_hosts <= 0)
		return 0;
	for (int i = 0; i < nfree; i++)
		if (i + 1 >= s->queue_hosts)
			return d->key[d->order[i]];
	return nfree > 0 ? d->key[d->order[nfree - 1]] : 0;
}

/* The longest hold worth making, from predictions: what the job itself can
 * gain (own_gain_bound) or, when the queue is loaded, how long it is
 * predicted to wait anyway (queue_drain_s). A hold that ends before the
 * queue could drain costs the others little: the hosts the job leaves go
 * to backfill, and the groups the jobs behind it need stay whole. */
static double hold_bound(const place_defer *d, const place_state *s, const place_request *r,
			 const place_decision *out, int nfree)
{
	double own = own_gain_bound(r, out), q = queue_drain_s(d, s, nfree);

	return q > own ? q : own;
}

/* "s" after a count of groups other than one, for the why strings. */
static const char *plural(int n)
{
	return n == 1 ? "" : "s";
}

/* Why a job is held. When only the queue's predicted wait allowed the hold
 * (longer than its own communication could save), it says so: the one
 * place the decision record shows that the queue was seen. */
static void defer_why_held(const place_defer *d, const place_state *s, const place_request *r,
			   place_decision *out, int nfree, double when, double left)
{
	int n = snprintf(out->defer_why, sizeof(out->defer_why),
			 "best placement now spans %d group%s (needs %d); %d group%s predicted to "
			 "free in %.0f s, within the %.0f s left of its locality wait",
			 out->chosen.groups, plural(out->chosen.groups), out->min_groups,
			 out->defer_groups, plural(out->defer_groups), when, left);

	if (r->predicted_runtime_s > 0 && when > own_gain_bound(r, out) && n > 0 &&
	    (size_t)n < sizeof(out->defer_why))
		snprintf(out->defer_why + n, sizeof(out->defer_why) - (size_t)n,
			 " and the queue's predicted %.0f s (%d jobs waiting)",
			 queue_drain_s(d, s, nfree), s->queue_jobs);
}

static double budget(const place_config *cfg, const place_request *r)
{
	double b = cfg->locality_wait_frac * r->time_limit_s;

	if (cfg->locality_wait_cap_s > 0 && b > cfg->locality_wait_cap_s)
		b = cfg->locality_wait_cap_s;
	return b > 0 ? b : 0;
}

const char *const place_hold_feature_names[PLACE_HOLD_FEATURES] = {
	"analytic_hold", "better_set", "wait_per_gain", "groups_saved", "comm_share",
	"drain_per_wait", "wait_per_duration", "budget_left", "queue_jobs_log",
	"queue_hosts_share", "duration_per_running", "wait_per_running",
};

/* log(1 + a / b), the ratio capped at HOLD_RATIO_MAX (and there when b is
 * 0 but a is not): how many times one duration is another, on a scale
 * that the longest and the shortest jobs share. */
#define HOLD_RATIO_MAX 1000.0
static float log_ratio(double a, double b)
{
	double q = b > 0 ? a / b : a > 0 ? HOLD_RATIO_MAX : 0;

	return (float)log1p(q < HOLD_RATIO_MAX ? q : HOLD_RATIO_MAX);
}

/* The mean time left of the running jobs, to their expected ends: the
 * workload's own time scale, against which a job is long or a wait short. */
static double mean_remaining(const place_state *s, double now)
{
	double sum = 0;
	int n = 0;

	for (int j = 0; j < s->njobs_running; j++)
		if (s->jobs[j].end_s > now) {
			sum += s->jobs[j].end_s - now;
			n++;
		}
	return n ? sum / n : 0;
}

/* What the hold decision sees (place_hold_feature_names): the analytic
 * rule's answer and the numbers it weighs, as ratios of one another, of
 * the running jobs' mean time left (how long a job or a wait is for this
 * workload) and shares of the cluster or of the budget, never as absolute
 * times. So the gate judges a 10-minute job's 1-minute hold as it judges a
 * 10-hour job's 1-hour hold, and a trace replayed faster (bench/slurm.sh)
 * or a site with shorter jobs than the training traces sees the gate it was
 * trained as. (Times in log hours made the gate place every hold of the
 * 1000x-compressed replay: its saved communication looked like nothing.) */
static void hold_features(const place_defer *d, const place_cluster *c, const place_state *s,
			  const place_request *r, place_decision *out, int nfree, int now_groups,
			  int best, double when, double left, int analytic)
{
	float *f = out->hold_feat;
	double H = c->nhosts > 0 ? c->nhosts : 1, dur = place_request_duration(r);
	double gain = own_gain_bound(r, out), running = mean_remaining(s, r->now_s);
	int better = best < now_groups;

	f[0] = (float)analytic;
	f[PLACE_HOLD_BETTER_SET] = (float)better;
	f[2] = better ? log_ratio(when, gain) : 0;
	f[3] = better ? (float)(now_groups - best) / (float)now_groups : 0;
	f[4] = dur > 0 ? (float)(gain / dur) : 0;
	f[5] = better ? log_ratio(queue_drain_s(d, s, nfree), when) : 0;
	f[6] = better ? log_ratio(when, dur) : 0;
	f[7] = out->defer_budget_s > 0 ? (float)(left / out->defer_budget_s) : 0;
	f[8] = (float)log1p(s->queue_jobs > 0 ? s->queue_jobs : 0);
	f[9] = (float)(s->queue_hosts > 0 ? s->queue_hosts / H : 0);
	f[10] = log_ratio(dur, running);
	f[11] = better ? log_ratio(when, running) : 0;
	out->hold_weighed = 1;
}

void place_defer_check(place_defer *d, const place_cluster *c, const place_state *s,
		       const place_request *r, const uint8_t *usable, const place_config *cfg,
		       const place_hold_gate *gate, place_decision *out)
{
	int n = out->chosen.nhosts, nfree, nowfree = 0, now_groups, best, analytic, hold;
	double left, when = 0;

	out->hold_p = -1;
	if (r->comm.cls != PLACE_COMM_HEAVY || n < 2)
		return;
	out->min_groups = min_groups(d, c, s, r, n);
	if (out->min_groups == INT_MAX || out->chosen.groups <= out->min_groups)
		return;
	if (out->policy != PLACE_POLICY_MODEL && out->policy != PLACE_POLICY_GNN)
		return;
	if (cfg->locality_wait_frac <= 0 || r->time_limit_s <= 0 || r->max_groups > 0)
		return;
	out->locality_checked = 1;
	out->defer_budget_s = budget(cfg, r);
	left = out->defer_budget_s - r->deferred_s;
	if (left < 1) {
		snprintf(out->defer_why, sizeof(out->defer_why),
			 "locality wait budget of %.0f s spent after %.0f s: placed over %d group%s "
			 "(needs %d)", out->defer_budget_s, r->deferred_s, out->chosen.groups,
			 plural(out->chosen.groups), out->min_groups);
		return;
	}
	nfree = host_keys(d, c, s, r, usable);
	memset(d->gcnt, 0, (size_t)c->ngroups * sizeof(int));
	for (; nowfree < nfree && d->key[d->order[nowfree]] == 0; nowfree++)
		d->gcnt[c->host_group[d->order[nowfree]]]++;
	now_groups = cover(d, c->ngroups, d->gcnt, n, NULL);
	if (now_groups > out->chosen.groups)
		now_groups = out->chosen.groups;
	best = sweep(d, c, nfree, n, left, now_groups, out->min_groups, &when);
	analytic = best < now_groups &&
		   !(r->predicted_runtime_s > 0 && when > hold_bound(d, s, r, out, nfree));
	hold_features(d, c, s, r, out, nfree, now_groups, best, when, left, analytic);
	if (best >= now_groups) {
		snprintf(out->defer_why, sizeof(out->defer_why),
			 "no placement over fewer than %d group%s (needs %d) predicted to free "
			 "within the %.0f s left of its locality wait: placed now",
			 out->chosen.groups, plural(out->chosen.groups), out->min_groups, left);
		return;
	}
	hold = analytic;
	if (gate && gate->p && out->policy == PLACE_POLICY_GNN && r->predicted_runtime_s > 0) {
		out->hold_p = gate->p(gate->ctx, out->hold_feat);
		hold = out->hold_p > 0.5;
	}
	if (!hold) {
		if (out->hold_p >= 0)
			snprintf(out->defer_why, sizeof(out->defer_why),
				 "%d group%s (needs %d) predicted to free in %.0f s, but the learned "
				 "hold gate gives a hold %.2f: placed now over %d",
				 best, plural(best), out->min_groups, when, out->hold_p,
				 out->chosen.groups);
		else
			snprintf(out->defer_why, sizeof(out->defer_why),
				 "%d group%s (needs %d) free in %.0f s, more than the %.0f s of "
				 "communication in its predicted run time of %.0f s and the queue's "
				 "predicted %.0f s (%d jobs waiting): placed now over %d",
				 best, plural(best), out->min_groups, when, own_gain_bound(r, out),
				 place_request_duration(r), queue_drain_s(d, s, nfree),
				 s->queue_jobs, out->chosen.groups);
		return;
	}
	out->deferred = 1;
	out->defer_wait_s = when;
	out->defer_groups = best;
	out->defer_group_mask = d->mask;
	if (out->hold_p >= 0)
		snprintf(out->defer_why, sizeof(out->defer_why),
			 "best placement now spans %d group%s (needs %d); %d group%s predicted to "
			 "free in %.0f s, within the %.0f s left of its locality wait; the "
			 "learned hold gate gives a hold %.2f",
			 out->chosen.groups, plural(out->chosen.groups), out->min_groups,
			 out->defer_groups, plural(out->defer_groups), when, left, out->hold_p);
	else
		defer_why_held(d, s, r, out, nfree, when, left);
}
