/*
 * bench/predict: the online run-time predictor (place_runtime.h) against
 * its baselines, on a chronological replay of real logs.
 *
 * Every job is predicted at its submit time from the jobs that ended
 * before it (end = submit + the log's wait + run time), and learned when
 * it ends. Baselines on the same replay: the time limit (what Slurm and
 * the placement engine use today), the mean of the user's last two run
 * times (Tsafrir, Etsion and Feitelson 2007), and the oracle (the true run
 * time). Printed per log: mean and median absolute error (seconds), their
 * ratio to last-two, and the share of under-predictions (predicted < true).
 *
 *   bench/predict [--trace FILE]... [--jobs N]
 *
 * Default: the KTH SP2 log (all of it, and its first 3,000 jobs, the
 * simulator's slice) and the Alibaba GPU pods (no user, group or limit in
 * that log: every job is "cold", so it shows the fallback only).
 */
#include <math.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "place_runtime.h"
#include "topo_num.h"
#include "trace.h"

enum { M_LIMIT, M_LAST2, M_PRED, M_ORACLE, NM };
static const char *const mname[NM] = {"limit", "last-two", "predictor", "oracle"};

typedef struct event {
	double t;
	int job, end; /* end events first at equal times */
} event;

static int cmp_event(const void *a, const void *b)
{
	const event *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->end != y->end)
		return y->end - x->end;
	return x->job - y->job;
}

static place_runtime_job job_of(const trace_job *t)
{
	place_runtime_job j = {t->user, t->group, t->app >= 0 ? (uint32_t)t->app + 1 : 0,
			       t->limit_known ? t->requested : 0, t->procs, t->submit};

	return j;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Replay jobs [0, n) of t; err[m][i] = prediction - true run time, lat[i]
 * the predictor's wall time for job i (us). 0 or -1. */
static int replay(const topo_trace *t, int n, double **err, double *lat)
{
	event *ev = calloc(2 * (size_t)n + 1, sizeof(*ev));
	place_runtime *p = place_runtime_new();
	int rc = -1;

	if (!ev || !p)
		goto out;
	for (int i = 0; i < n; i++) {
		const trace_job *j = &t->jobs[i];

		ev[2 * i] = (event){j->submit, i, 0};
		ev[2 * i + 1] = (event){j->submit + (j->log_wait > 0 ? j->log_wait : 0) + j->runtime,
					i, 1};
	}
	qsort(ev, 2 * (size_t)n, sizeof(*ev), cmp_event);
	for (int k = 0; k < 2 * n; k++) {
		const trace_job *tj = &t->jobs[ev[k].job];
		place_runtime_job j = job_of(tj);
		double limit = j.limit_s > 0 ? j.limit_s : NAN;

		if (ev[k].end) {
			if (place_runtime_observe(p, &j, tj->runtime))
				goto out;
			continue;
		}
		err[M_LIMIT][ev[k].job] = limit - tj->runtime;
		err[M_LAST2][ev[k].job] = place_runtime_last_two(p, &j) - tj->runtime;
		{
			double t0 = now_us(), x = place_runtime_predict(p, &j);

			lat[ev[k].job] = now_us() - t0;
			err[M_PRED][ev[k].job] = x - tj->runtime;
		}
		err[M_ORACLE][ev[k].job] = 0;
	}
	rc = 0;
out:
	free(ev);
	place_runtime_free(p);
	return rc;
}

/* Mean and median absolute error and under-prediction share of e[from, n). */
static void summary(const double *e, int from, int n, double *mae, double *medae, double *under,
		    int *count)
{
	double *a = malloc((size_t)(n - from + 1) * sizeof(double)), s = 0;
	int k = 0, u = 0;

	for (int i = from; a && i < n; i++)
		if (!isnan(e[i])) {
			a[k++] = fabs(e[i]);
			s += fabs(e[i]);
			u += e[i] < 0;
		}
	*count = k;
	*mae = k ? s / k : NAN;
	*under = k ? (double)u / k : NAN;
	if (a && k) {
		topo_sort_doubles(a, (size_t)k);
		*medae = topo_quantile(a, (size_t)k, 0.5);
	} else {
		*medae = NAN;
	}
	free(a);
}

static void report(const char *title, double **err, int from, int n)
{
	double mae[NM], med[NM], under[NM];
	int cnt[NM];

	printf("== %s (%d jobs)\n%-10s %8s %12s %10s %12s %10s %8s\n", title, n - from, "method",
	       "jobs", "mean_abs_s", "vs_last2", "median_abs_s", "vs_last2", "under%");
	for (int m = 0; m < NM; m++)
		summary(err[m], from, n, &mae[m], &med[m], &under[m], &cnt[m]);
	for (int m = 0; m < NM; m++) {
		if (cnt[m] == 0) {
			printf("%-10s %8d %12s (no time limit in this log)\n", mname[m], 0, "-");
			continue;
		}
		printf("%-10s %8d %12.0f %10.3f %12.0f %10.3f %8.1f\n", mname[m], cnt[m], mae[m],
		       mae[M_LAST2] > 0 ? mae[m] / mae[M_LAST2] : NAN, med[m],
		       med[M_LAST2] > 0 ? med[m] / med[M_LAST2] : NAN, 100 * under[m]);
	}
	putchar('\n');
}

static int bench_trace(const char *path, int jobs)
{
	topo_trace t;
	topo_error err;
	char buf[1024], title[1200];
	double *e[NM], *lat;
	int rc = -1, n;

	trace_init(&t);
	if (trace_load(&t, path, &err)) {
		fprintf(stderr, "predict: %s\n", topo_error_format(&err, buf, sizeof(buf)));
		return -1;
	}
	trace_normalize(&t);
	if (jobs > 0)
		trace_truncate(&t, jobs);
	n = t.njobs;
	for (int m = 0; m < NM; m++)
		e[m] = malloc((size_t)n * sizeof(double) + 1);
	lat = malloc((size_t)n * sizeof(double) + 1);
	if (e[0] && e[1] && e[2] && e[3] && lat && replay(&t, n, e, lat) == 0) {
		const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

		snprintf(title, sizeof(title), "%s, all", base);
		report(title, e, 0, n);
		if (n > 3000) {
			snprintf(title, sizeof(title), "%s, its first 3,000 (the simulator's)", base);
			report(title, e, 0, 3000);
			snprintf(title, sizeof(title), "%s, its second half", base);
			report(title, e, n / 2, n);
		}
		topo_sort_doubles(lat, (size_t)n);
		printf("prediction latency over %d jobs: p50 %.2f us, p99 %.2f us\n\n", n,
		       topo_quantile(lat, (size_t)n, 0.5), topo_quantile(lat, (size_t)n, 0.99));
		rc = 0;
	} else {
		fprintf(stderr, "predict: %s: out of memory\n", path);
	}
	for (int m = 0; m < NM; m++)
		free(e[m]);
	free(lat);
	trace_free(&t);
	return rc;
}

int main(int argc, char **argv)
{
	const char *traces[8];
	int nt = 0, jobs = 0, rc = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--trace") && i + 1 < argc && nt < 8) {
			traces[nt++] = argv[++i];
		} else if (!strcmp(argv[i], "--jobs") && i + 1 < argc) {
			jobs = atoi(argv[++i]);
		} else {
			fprintf(stderr, "usage: predict [--trace FILE]... [--jobs N]\n");
			return 2;
		}
	}
	if (nt == 0) {
		traces[nt++] = TRACES_DIR "/KTH-SP2-1996-2.1-cln.swf.gz";
		traces[nt++] = TRACES_DIR "/alibaba-gpu-v2023-openb_pod_list_default.csv";
	}
	for (int i = 0; i < nt; i++)
		rc |= bench_trace(traces[i], jobs);
	return rc ? 1 : 0;
}
