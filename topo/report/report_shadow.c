/*
 * report_shadow: the learned policy against the baselines shadow mode
 * recorded (see report_shadow.h).
 */
#include "report_shadow.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOOT_RESAMPLES 2000
#define BOOT_SEED 20261202u
#define Z95 1.959964

report_interval report_wilson(int k, int n)
{
	report_interval r = {NAN, NAN, NAN, n};
	double p, z2 = Z95 * Z95, den, mid, half;

	if (n <= 0)
		return r;
	p = (double)k / n;
	den = 1 + z2 / n;
	mid = (p + z2 / (2.0 * n)) / den;
	half = Z95 * sqrt(p * (1 - p) / n + z2 / (4.0 * n * n)) / den;
	r.est = p;
	r.lo = mid - half < 0 ? 0 : mid - half;
	r.hi = mid + half > 1 ? 1 : mid + half;
	return r;
}

double report_shadow_bytes(int groups, int nhosts, double bytes_per_iter, double compute_s_per_iter,
			   double elapsed_s)
{
	double iters;

	if (groups <= 1 || nhosts <= 1 || !(bytes_per_iter > 0) || !(elapsed_s >= 0))
		return 0;
	iters = compute_s_per_iter > 0 ? elapsed_s / compute_s_per_iter : elapsed_s;
	return groups * 2.0 * (nhosts - 1) / nhosts * bytes_per_iter * iters;
}

/* One decision as compared with one baseline. */
typedef struct pair {
	int heavy, hold_l, hold_b, bytes; /* bytes: both place, heavy, ended */
	double bl, bb;
} pair;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static uint32_t next_rand(uint32_t *s)
{
	*s = *s * 1664525u + 1013904223u;
	return *s >> 8;
}

/* The percentile bootstrap of the bytes ratio and the hold difference
 * over the pairs (resampled together). -1 when memory runs out. */
static int bootstrap(const pair *p, int n, report_shadow_vs *v)
{
	double *ratio = malloc(BOOT_RESAMPLES * sizeof(double));
	double *diff = malloc(BOOT_RESAMPLES * sizeof(double));
	uint32_t seed = BOOT_SEED;
	int nr = 0, nd = 0;

	if (!ratio || !diff) {
		free(ratio);
		free(diff);
		return -1;
	}
	for (int b = 0; b < BOOT_RESAMPLES && n > 0; b++) {
		double sl = 0, sb = 0;
		int heavy = 0, dh = 0;

		for (int i = 0; i < n; i++) {
			const pair *q = &p[next_rand(&seed) % (uint32_t)n];

			if (q->bytes) {
				sl += q->bl;
				sb += q->bb;
			}
			if (q->heavy) {
				heavy++;
				dh += q->hold_l - q->hold_b;
			}
		}
		if (sb > 0)
			ratio[nr++] = sl / sb;
		if (heavy)
			diff[nd++] = (double)dh / heavy;
	}
	qsort(ratio, (size_t)nr, sizeof(double), cmp_double);
	qsort(diff, (size_t)nd, sizeof(double), cmp_double);
	if (nr) {
		v->bytes_ratio.lo = ratio[(int)(0.025 * (nr - 1))];
		v->bytes_ratio.hi = ratio[(int)ceil(0.975 * (nr - 1))];
	}
	if (nd) {
		v->hold_diff.lo = diff[(int)(0.025 * (nd - 1))];
		v->hold_diff.hi = diff[(int)ceil(0.975 * (nd - 1))];
	}
	free(ratio);
	free(diff);
	return 0;
}

static int in_window(const report_decision *d, double since, double until)
{
	return d->timestamp >= since && d->timestamp <= until;
}

/* A decision topognn made with the baselines beside it (shadow mode). */
static int usable(const report_decision *d)
{
	return !strcmp(d->format, "plugin") && d->ok && d->nshadow > 0;
}

/* Fill the pair of decision d against baseline choice b; 0 when d does
 * not have it. */
static int make_pair(const report_decision *d, const report_choice *b, pair *q, int *agree,
		     int *both_place, int *same_groups)
{
	int hold_l = d->deferred != 0, hold_b = b->hold != 0;

	memset(q, 0, sizeof(*q));
	q->heavy = !strcmp(d->comm_class, "heavy");
	q->hold_l = hold_l;
	q->hold_b = hold_b;
	*agree = (hold_l && hold_b) || (!hold_l && !hold_b && report_choice_same_hosts(&d->chosen, b));
	*both_place = !hold_l && !hold_b;
	*same_groups = *both_place && d->chosen.groups == b->groups;
	if (q->heavy && *both_place && d->ended && !isnan(d->elapsed_s)) {
		q->bytes = 1;
		q->bl = report_shadow_bytes(d->chosen.groups, d->chosen.nhosts, d->bytes_per_iter,
					    d->compute_s_per_iter, d->elapsed_s);
		q->bb = report_shadow_bytes(b->groups, b->nhosts, d->bytes_per_iter,
					    d->compute_s_per_iter, d->elapsed_s);
	}
	return 1;
}

static void mean_or_nan(double sum, int n, double *out)
{
	*out = n ? sum / n : NAN;
}

/* The comparison with one baseline. -1 when memory runs out. */
static int compare(const report_log *log, double since, double until, const char *name,
		   report_shadow_vs *v)
{
	pair *p = malloc(((size_t)log->n + 1) * sizeof(pair));
	int n = 0, agree = 0, place = 0, same = 0, hl = 0, hb = 0, nwl = 0, nwb = 0;
	double wl = 0, wb = 0;

	if (!p)
		return -1;
	memset(v, 0, sizeof(*v));
	snprintf(v->baseline, sizeof(v->baseline), "%s", name);
	for (int i = 0; i < log->n; i++) {
		const report_decision *d = &log->d[i];
		const report_choice *b;
		int a, bp, sg;

		if (!in_window(d, since, until) || !usable(d) || !(b = report_decision_shadow(d, name)))
			continue;
		make_pair(d, b, &p[n], &a, &bp, &sg);
		agree += a;
		place += bp;
		same += sg;
		if (p[n].heavy) {
			v->heavy++;
			hl += p[n].hold_l;
			hb += p[n].hold_b;
			if (p[n].hold_l && !isnan(d->expected_wait_s)) {
				wl += d->expected_wait_s;
				nwl++;
			}
			if (p[n].hold_b && !isnan(b->expected_wait_s)) {
				wb += b->expected_wait_s;
				nwb++;
			}
		}
		if (p[n].bytes) {
			v->compared++;
			v->learned_bytes += p[n].bl;
			v->baseline_bytes += p[n].bb;
		}
		n++;
	}
	v->decisions = n;
	v->agree = report_wilson(agree, n);
	v->same_groups = report_wilson(same, place);
	v->hold_learned = report_wilson(hl, v->heavy);
	v->hold_baseline = report_wilson(hb, v->heavy);
	v->bytes_ratio = (report_interval){NAN, NAN, NAN, v->compared};
	v->hold_diff = (report_interval){NAN, NAN, NAN, v->heavy};
	if (v->baseline_bytes > 0)
		v->bytes_ratio.est = v->learned_bytes / v->baseline_bytes;
	if (v->heavy)
		v->hold_diff.est = (double)(hl - hb) / v->heavy;
	mean_or_nan(wl, nwl, &v->expected_wait_learned);
	mean_or_nan(wb, nwb, &v->expected_wait_baseline);
	if (bootstrap(p, n, v)) {
		free(p);
		return -1;
	}
	free(p);
	if (v->compared < REPORT_SHADOW_MIN_PAIRS)
		v->ahead = -1;
	else
		v->ahead = v->bytes_ratio.hi < 1.0 && !(v->hold_diff.hi > 0);
	return 0;
}

/* Slurm's realised wait over the decisions: mean and normal interval. */
static void realised_wait(const report_log *log, double since, double until, report_shadow *s)
{
	double sum = 0, sq = 0;
	int n = 0;

	for (int i = 0; i < log->n; i++) {
		const report_decision *d = &log->d[i];

		if (!in_window(d, since, until) || !usable(d) || isnan(d->wait_s))
			continue;
		sum += d->wait_s;
		sq += d->wait_s * d->wait_s;
		n++;
	}
	s->wait_s = (report_interval){NAN, NAN, NAN, n};
	if (n) {
		double m = sum / n, var = n > 1 ? (sq - n * m * m) / (n - 1) : 0;
		double half = Z95 * sqrt(var > 0 ? var : 0) / sqrt((double)n);

		s->wait_s.est = m;
		s->wait_s.lo = m - half;
		s->wait_s.hi = m + half;
	}
}

int report_shadow_compute(const report_log *log, double since, double until, report_shadow *out)
{
	static const char *const names[REPORT_SHADOW_BASELINES] = {"model", "tree-switches"};

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < log->n; i++) {
		const report_decision *d = &log->d[i];

		if (!in_window(d, since, until) || strcmp(d->format, "plugin") || !d->ok)
			continue;
		out->decisions++;
		out->with_shadow += d->nshadow > 0;
		out->ended += d->nshadow > 0 && d->ended;
		if (!out->learned[0] && d->chosen.policy[0])
			snprintf(out->learned, sizeof(out->learned), "%s", d->chosen.policy);
	}
	realised_wait(log, since, until, out);
	out->nvs = REPORT_SHADOW_BASELINES;
	for (int b = 0; b < REPORT_SHADOW_BASELINES; b++)
		if (compare(log, since, until, names[b], &out->vs[b]))
			return -1;
	return 0;
}
