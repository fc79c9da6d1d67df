/*
 * bench/slurm_replay: the C half of bench/slurm.sh (docs/bench.md).
 *
 * The benchmark replays one time-compressed slice of a real job log on a
 * real localhost Slurm cluster, once under topology/tree and once under
 * topology/topognn. The shell script drives Slurm; this program does the
 * arithmetic that would be fragile in shell:
 *
 *   slurm_replay schedule --trace FILE [--skip K] [--jobs N] [--nodes 32]
 *                [--machine-procs 100] [--span S] [--max-runtime R] [--factor F]
 *       prints the sbatch schedule, one job per line:
 *         submit_s nodes time_limit_min sleep_s name log_runtime_s user
 *       Submit and run times are divided by one compression factor
 *       (slice span / S; with --factor, F itself, and the slice ends with
 *       the last job submitted within S), so the offered load stays the
 *       log's; processors
 *       map to nodes as ceil(procs x nodes / machine-procs). Multi-node jobs
 *       are named heavy-<log id>, single-node ones none-<log id>; user is
 *       the log's user id (-1 unknown), which bench/slurm.sh --users maps to
 *       a Unix user that submits the job.
 *
 *   slurm_replay predictor --trace FILE --skip K --history H --factor F
 *                --ids UID:GID[,UID:GID...] --out FILE [--nodes 32]
 *                [--machine-procs 100] [--max-runtime R]
 *       writes the saved state of a run-time predictor (place_runtime_save,
 *       the plugin's <StateSaveLocation>/topognn_runtime.state) that has
 *       learned the H jobs of the log before job K, compressed as schedule
 *       compresses them, in the order they ended in the log, each as the
 *       plugin would see it: the Unix user and group --ids gives the log's
 *       user (the same user id modulo the list's length that bench/slurm.sh
 *       submits as), its name, its limit in minutes, its node count. So a
 *       replayed slice starts with the history a site's predictor has, not
 *       empty.
 *
 *   slurm_replay analyze --graph G.json --schedule FILE --jobcomp FILE
 *                [--ctld-log FILE] [--comm DIR] [--seed S] [--host-gbps G]
 *                [--begin-epoch T0] [--agreement]
 *       reads what Slurm did and prints "key value" lines:
 *       jobs, heavy_jobs, mean_wait_s, cross_group_bytes_heavy,
 *       total_bytes_heavy, cross_group_frac_heavy, heavy_jobs_multi_group
 *       and, with --agreement, sim_tree_agreement, sim_tree_compared and
 *       the same over the allocations made while no other job waited
 *       (*_no_queue). With --begin-epoch, the jobs were all submitted
 *       ahead with sbatch --begin=T0+floor(submit_s): a job's wait counts
 *       from that begin time, and it joins the agreement replay's queue
 *       then. SLURM_REPLAY_VERBOSE=1 in the environment prints each
 *       disagreement and each heavy job's cross-group bytes on stderr.
 *
 * Cross-group bytes of a heavy job (the same formula for both runs):
 *   a ring all-reduce over its nodes in node order (closed ring, one flow
 *   from each node to the next); per iteration each flow carries
 *   2(n-1)/n x B bytes, B = the fabric bytes per iteration of the astra-sim
 *   profile drawn for the job (sim_comm_profile_draw(seed, log id), as
 *   topognn-sim draws it); iterations = the job's runtime in the log /
 *   (compute per iteration + 2(n-1)/n x B x 8 / host_gbps). The flows between
 *   nodes of different groups count. Only the placement differs between the
 *   two runs; the iterations of a job are the same in both.
 *
 * Agreement: the real run's allocations and ends are replayed in the order
 * slurmctld.log shows them (millisecond timestamps); before each
 * allocation, the engine's `tree` policy (place_decide, PLACE_POLICY_TREE,
 * the simulator's baseline) is asked for the same node count on the same
 * busy nodes, and its node set is compared with Slurm's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "place_runtime.h"
#include "sim.h"
#include "topo_hostlist.h"
#include "topo_num.h"

#define MAX_PROFILES 8
#define DEFAULT_SEED 1
/* 2 rails of 4x NDR (400 Gb/s), the fabric bench/slurm.sh generates. */
#define DEFAULT_HOST_GBPS 800.0

/* ---- schedule ------------------------------------------------------------- */

typedef struct sched_opts {
	const char *trace;
	int skip, jobs, nodes, machine_procs;
	double span, max_runtime;
	double factor; /* > 0: this compression, jobs submitted within span */
} sched_opts;

static int job_nodes(int procs, int nodes, int machine_procs)
{
	int n = (int)ceil((double)procs * nodes / machine_procs);

	return n < 1 ? 1 : n > nodes ? nodes : n;
}

/* A log job as the replay submits it: its node count, limit in minutes
 * and run (sleep) seconds, compressed by f, the run capped at max_runtime. */
typedef struct replayed {
	int nodes, limit_min;
	double run_s;
} replayed;

static replayed replay_job(const trace_job *j, const sched_opts *o, double f)
{
	replayed r = {job_nodes(j->procs, o->nodes, o->machine_procs), 0, round(j->runtime / f)};
	double req = j->requested / f;

	if (r.run_s < 1)
		r.run_s = 1;
	if (o->max_runtime > 0 && r.run_s > o->max_runtime)
		r.run_s = o->max_runtime;
	if (req < r.run_s)
		req = r.run_s;
	/* Slurm counts limits in minutes; one spare minute for start-up */
	r.limit_min = (int)ceil(req / 60.0) + 1;
	return r;
}

static void replay_name(const trace_job *j, const replayed *r, char *buf, size_t len)
{
	snprintf(buf, len, "%s-%ld", r->nodes > 1 ? "heavy" : "none", j->id);
}

/* The slice's jobs [*first, *end) and its compression *f; -1 (said) when
 * fewer than 2 jobs are left after the skip. */
static int slice_of(const topo_trace *t, const sched_opts *o, int *first, int *end, double *f)
{
	double t0, last;

	*first = o->skip < t->njobs ? o->skip : t->njobs;
	*end = *first + o->jobs < t->njobs ? *first + o->jobs : t->njobs;
	if (*end - *first < 2) {
		fprintf(stderr, "slurm_replay: %s: only %d jobs after skipping %d\n", o->trace,
			*end - *first, o->skip);
		return -1;
	}
	t0 = t->jobs[*first].submit;
	if (o->factor > 0) {
		/* one fixed compression: the slice is what falls into the span */
		*f = o->factor;
		while (*end - *first > 2 && o->span > 0 &&
		       (t->jobs[*end - 1].submit - t0) / *f > o->span)
			(*end)--;
	}
	last = t->jobs[*end - 1].submit - t0;
	if (o->factor <= 0)
		*f = o->span > 0 && last > 0 ? last / o->span : 1.0;
	return 0;
}

static int cmd_schedule(const sched_opts *o)
{
	topo_trace t;
	topo_error err;
	char buf[1024];
	double t0, last, f;
	int first, end;

	trace_init(&t);
	if (trace_load(&t, o->trace, &err)) {
		fprintf(stderr, "slurm_replay: %s\n", topo_error_format(&err, buf, sizeof(buf)));
		return 1;
	}
	trace_normalize(&t);
	if (slice_of(&t, o, &first, &end, &f)) {
		trace_free(&t);
		return 1;
	}
	t0 = t.jobs[first].submit;
	last = t.jobs[end - 1].submit - t0;
	printf("# %s: jobs %d..%d of %d, log span %.0f s compressed %.1fx to %.1f s; "
	       "procs -> nodes: ceil(procs x %d / %d)\n",
	       o->trace, first, end - 1, t.njobs, last, f, last / f, o->nodes, o->machine_procs);
	printf("# submit_s nodes time_limit_min sleep_s name log_runtime_s user\n");
	for (int i = first; i < end; i++) {
		const trace_job *j = &t.jobs[i];
		replayed r = replay_job(j, o, f);
		char name[48];

		replay_name(j, &r, name, sizeof(name));
		printf("%.3f %d %d %.0f %s %.0f %d\n", (j->submit - t0) / f, r.nodes, r.limit_min,
		       r.run_s, name, j->runtime, j->user);
	}
	trace_free(&t);
	return 0;
}

/* ---- a predictor's history ------------------------------------------------ */

#define MAX_IDS 256

typedef struct predictor_opts {
	int history;
	const char *ids, *out;
} predictor_opts;

/* "uid:gid,uid:gid,..." -> n pairs; -1 when malformed */
static int parse_ids(const char *spec, int uid[], int gid[])
{
	int n = 0;

	while (spec && *spec) {
		char *end;
		long u = strtol(spec, &end, 10), g;

		if (end == spec || *end != ':' || u < 0 || u > INT_MAX || n == MAX_IDS)
			return -1;
		spec = end + 1;
		g = strtol(spec, &end, 10);
		if (end == spec || (*end && *end != ',') || g < 0 || g > INT_MAX)
			return -1;
		uid[n] = (int)u;
		gid[n++] = (int)g;
		if (*end && !end[1])
			return -1; /* a trailing comma */
		spec = *end ? end + 1 : end;
	}
	return n;
}

static const topo_trace *cmp_trace;

static double log_end(const trace_job *j)
{
	return j->submit + (j->log_wait > 0 ? j->log_wait : 0) + j->runtime;
}

static int by_log_end(const void *a, const void *b)
{
	double x = log_end(&cmp_trace->jobs[*(const int *)a]);
	double y = log_end(&cmp_trace->jobs[*(const int *)b]);

	return (x > y) - (x < y);
}

/* The median, the mean of the middle two for even n (topo_quantile's
 * nearest rank would take the lower one). */
static double median_of(double *v, int n)
{
	topo_sort_doubles(v, (size_t)n);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A log job as the plugin sees it: the Unix user of its slot, its name,
 * limit and node count. */
static place_runtime_job as_plugin_sees(const trace_job *j, const replayed *r, const int *uid,
					const int *gid, int nids)
{
	int slot = j->user >= 0 ? j->user % nids : 0;
	place_runtime_job rj = {uid[slot], gid[slot], 0, 60.0 * r->limit_min, r->nodes, 0};
	char name[48];

	replay_name(j, r, name, sizeof(name));
	rj.app = place_runtime_app_hash(name);
	return rj;
}

/* Job j ended after its compressed run time: the predictor learns it. */
static int learn_job(place_runtime *p, const trace_job *j, const sched_opts *o, const int *uid,
		     const int *gid, int nids)
{
	replayed r = replay_job(j, o, o->factor);
	place_runtime_job rj = as_plugin_sees(j, &r, uid, gid, nids);

	return place_runtime_observe(p, &rj, r.run_s);
}

/* Learn jobs idx[0..n) of t in the order they ended in the log. */
static int learn(place_runtime *p, const topo_trace *t, const sched_opts *o, int *idx, int n,
		 const int *uid, const int *gid, int nids)
{
	cmp_trace = t;
	qsort(idx, (size_t)n, sizeof(*idx), by_log_end);
	for (int i = 0; i < n; i++)
		if (learn_job(p, &t->jobs[idx[i]], o, uid, gid, nids))
			return -1;
	return 0;
}

/* How the predictor does on the slice, online: each job predicted at its
 * submit, after learning the slice's jobs that ended by then in the log.
 * Prints the median absolute errors (compressed seconds) of the predictor,
 * of last-two and of the limit, and the share under-predicted. */
static int evaluate(place_runtime *p, const topo_trace *t, const sched_opts *o, int first,
		    int end, const int *uid, const int *gid, int nids)
{
	int n = end - first, done = 0, under = 0;
	int *ends = malloc((size_t)n * sizeof(*ends));
	double *e_pred = malloc((size_t)n * sizeof(double) * 3), *e_two = e_pred + n,
	       *e_lim = e_two + n;

	if (!ends || !e_pred) {
		free(ends);
		free(e_pred);
		return -1;
	}
	for (int i = 0; i < n; i++)
		ends[i] = first + i;
	cmp_trace = t;
	qsort(ends, (size_t)n, sizeof(*ends), by_log_end);
	for (int i = 0; i < n; i++) {
		const trace_job *j = &t->jobs[first + i];
		replayed r = replay_job(j, o, o->factor);
		place_runtime_job rj = as_plugin_sees(j, &r, uid, gid, nids);
		double pred;

		for (; done < n && log_end(&t->jobs[ends[done]]) <= j->submit; done++)
			if (learn_job(p, &t->jobs[ends[done]], o, uid, gid, nids)) {
				free(ends);
				free(e_pred);
				return -1;
			}
		pred = place_runtime_predict(p, &rj);
		under += pred < r.run_s;
		e_pred[i] = fabs(pred - r.run_s);
		e_two[i] = fabs(place_runtime_last_two(p, &rj) - r.run_s);
		e_lim[i] = fabs(rj.limit_s - r.run_s);
	}
	printf("# slice jobs %d..%d online: median |error| predictor %.1f s, last-two %.1f s, "
	       "limit %.1f s; under-predicted %.0f %%\n",
	       first, end - 1, median_of(e_pred, n), median_of(e_two, n), median_of(e_lim, n),
	       100.0 * under / n);
	free(ends);
	free(e_pred);
	return 0;
}

/* Write p's state to path; -1 (said) on any error. */
static int save_state(const place_runtime *p, const char *path)
{
	FILE *f = fopen(path, "w");
	int bad;

	if (!f) {
		fprintf(stderr, "slurm_replay: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	bad = place_runtime_save(p, f);
	if (fclose(f))
		bad = -1;
	if (bad)
		fprintf(stderr, "slurm_replay: cannot write %s\n", path);
	return bad ? -1 : 0;
}

static int cmd_predictor(const sched_opts *o, const predictor_opts *po)
{
	int uid[MAX_IDS], gid[MAX_IDS], nids = parse_ids(po->ids, uid, gid);
	int from, first, end, n, rc = 1;
	topo_trace t;
	topo_error err;
	char buf[1024];
	place_runtime *p = NULL;
	int *idx = NULL;
	double f;

	if (nids < 1) {
		fprintf(stderr, "slurm_replay: --ids: want UID:GID[,UID:GID...], got \"%s\"\n",
			po->ids ? po->ids : "");
		return 2;
	}
	trace_init(&t);
	if (trace_load(&t, o->trace, &err)) {
		fprintf(stderr, "slurm_replay: %s\n", topo_error_format(&err, buf, sizeof(buf)));
		return 1;
	}
	trace_normalize(&t);
	if (slice_of(&t, o, &first, &end, &f))
		goto out;
	from = first - po->history > 0 ? first - po->history : 0;
	n = first - from;
	idx = malloc((size_t)(n > 0 ? n : 1) * sizeof(*idx));
	p = place_runtime_new();
	if (!idx || !p)
		goto oom;
	for (int i = 0; i < n; i++)
		idx[i] = from + i;
	if (learn(p, &t, o, idx, n, uid, gid, nids))
		goto oom;
	if (save_state(p, po->out))
		goto out;
	printf("# %s: predictor learned jobs %d..%d (%d) compressed %.1fx, %d users\n", o->trace,
	       from, first - 1, n, o->factor, nids);
	if (evaluate(p, &t, o, first, end, uid, gid, nids))
		goto oom;
	rc = 0;
	goto out;
oom:
	fprintf(stderr, "slurm_replay: out of memory\n");
out:
	place_runtime_free(p);
	free(idx);
	trace_free(&t);
	return rc;
}

/* ---- what Slurm did ------------------------------------------------------- */

typedef struct rjob {
	long slurm_id;
	char name[48];
	int heavy;
	int nodes;               /* from the schedule */
	int limit_min;           /* time limit, minutes */
	double log_runtime;      /* seconds in the log */
	double submit, start, end; /* jobcomp, seconds */
	double submit_ms, start_ms; /* slurmctld.log, seconds with ms; <0 unknown */
	double offset;           /* submit time in the schedule, s */
	char nodelist[256];
	int done;                /* has a jobcomp record */
} rjob;

typedef struct run {
	rjob *jobs;
	int n, cap;
} run;

static rjob *run_find_name(run *r, const char *name)
{
	for (int i = 0; i < r->n; i++)
		if (!strcmp(r->jobs[i].name, name))
			return &r->jobs[i];
	return NULL;
}

static rjob *run_find_id(run *r, long id)
{
	for (int i = 0; i < r->n; i++)
		if (r->jobs[i].slurm_id == id)
			return &r->jobs[i];
	return NULL;
}

static int load_schedule(run *r, const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	long len;

	if (!f) {
		fprintf(stderr, "slurm_replay: cannot open %s\n", path);
		return -1;
	}
	while ((len = trace_getline(&line, &cap, f)) >= 0) {
		rjob j;
		double submit, run_s;
		int limit;

		if (line[0] == '#' || len == 0)
			continue;
		memset(&j, 0, sizeof(j));
		if (sscanf(line, "%lf %d %d %lf %47s %lf", &submit, &j.nodes, &limit, &run_s, j.name,
			   &j.log_runtime) != 6)
			continue;
		j.limit_min = limit;
		j.offset = submit;
		j.heavy = !strncmp(j.name, "heavy-", 6);
		j.slurm_id = -1;
		j.submit_ms = j.start_ms = -1;
		if (r->n == r->cap) {
			int nc = r->cap ? 2 * r->cap : 512;
			rjob *nj = realloc(r->jobs, (size_t)nc * sizeof(*nj));

			if (!nj)
				break;
			r->jobs = nj;
			r->cap = nc;
		}
		r->jobs[r->n++] = j;
	}
	free(line);
	fclose(f);
	return 0;
}

/* "2025-06-01T12:00:00" (local time) -> seconds. */
static double parse_time(const char *s)
{
	struct tm tm;

	memset(&tm, 0, sizeof(tm));
	if (!strptime(s, "%Y-%m-%dT%H:%M:%S", &tm))
		return -1;
	tm.tm_isdst = -1;
	return (double)mktime(&tm);
}

/* Value of " Key=" in a jobcomp filetxt record, copied into out. */
static int field(const char *line, const char *key, char *out, size_t len)
{
	char pat[64];
	const char *p;
	size_t n = 0;

	snprintf(pat, sizeof(pat), " %s=", key);
	if (!strncmp(line, pat + 1, strlen(pat + 1)))
		p = line + strlen(pat + 1);
	else if ((p = strstr(line, pat)))
		p += strlen(pat);
	else
		return -1;
	while (p[n] && p[n] != ' ' && p[n] != '\n' && n + 1 < len) {
		out[n] = p[n];
		n++;
	}
	out[n] = '\0';
	return 0;
}

static int load_jobcomp(run *r, const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, v[256];
	size_t cap = 0;

	if (!f) {
		fprintf(stderr, "slurm_replay: cannot open %s\n", path);
		return -1;
	}
	while (trace_getline(&line, &cap, f) >= 0) {
		rjob *j;

		if (field(line, "Name", v, sizeof(v)) || !(j = run_find_name(r, v)))
			continue;
		if (field(line, "JobId", v, sizeof(v)))
			continue;
		j->slurm_id = atol(v);
		if (!field(line, "SubmitTime", v, sizeof(v)))
			j->submit = parse_time(v);
		if (!field(line, "StartTime", v, sizeof(v)))
			j->start = parse_time(v);
		if (!field(line, "EndTime", v, sizeof(v)))
			j->end = parse_time(v);
		field(line, "NodeList", j->nodelist, sizeof(j->nodelist));
		j->done = j->start > 0 && j->nodelist[0] && strcmp(j->nodelist, "(null)");
	}
	free(line);
	fclose(f);
	return 0;
}

/* ---- slurmctld.log events -------------------------------------------------- */

/* EV_BF_START: a start by the backfill scheduler; EV_BF_BEGIN: a backfill
 * cycle begins; EV_RESV: backfill plans a waiting job on particular nodes
 * (logged with DebugFlags=Backfill) */
enum { EV_SUBMIT, EV_START, EV_BF_START, EV_END, EV_BF_BEGIN, EV_RESV };

typedef struct event {
	int kind;
	long id;
	double t;
	double at; /* EV_RESV: the planned start, seconds */
	int seq;   /* position in the log */
	char nodes[256];
} event;

typedef struct events {
	event *ev;
	int n, cap;
} events;

/* "[2025-06-01T12:00:00.123] ..." -> seconds with milliseconds. */
static double log_time(const char *line)
{
	char ts[32];
	const char *dot;
	double t;

	if (line[0] != '[' || !(dot = strchr(line, '.')) || dot - line > 24)
		return -1;
	memcpy(ts, line + 1, (size_t)(dot - line - 1));
	ts[dot - line - 1] = '\0';
	if ((t = parse_time(ts)) < 0)
		return -1;
	return t + atof(dot);
}

static int load_ctld_log(events *e, const char *path)
{
	static const struct {
		int kind;
		const char *re;
	} pats[] = {
		{EV_SUBMIT, "_slurm_rpc_submit_batch_job: JobId=([0-9]+) "},
		{EV_START, "sched: Allocate JobId=([0-9]+) NodeList=([^ ]+)"},
		{EV_BF_START, "Started JobId=([0-9]+) in [^ ]+ on ([^ ]+)"},
		{EV_END, "_job_complete: JobId=([0-9]+) done"},
		{EV_BF_BEGIN, "backfill: beginning$()"},
		{EV_RESV, "JobId=([0-9]+) to start at ([^ ,]+), end at [^ ]+ on nodes ([^ ]+) in "},
	};
	enum { NPATS = sizeof(pats) / sizeof(pats[0]) };
	regex_t re[NPATS];
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	int rc = 0;

	if (!f) {
		fprintf(stderr, "slurm_replay: cannot open %s\n", path);
		return -1;
	}
	for (int i = 0; i < NPATS; i++)
		if (regcomp(&re[i], pats[i].re, REG_EXTENDED)) {
			fprintf(stderr, "slurm_replay: bad pattern %s\n", pats[i].re);
			for (int k = 0; k < i; k++)
				regfree(&re[k]);
			fclose(f);
			return -1;
		}
	while (trace_getline(&line, &cap, f) >= 0) {
		regmatch_t m[4];

		for (int i = 0; i < NPATS; i++) {
			event *ev;
			int g = 2;

			if (regexec(&re[i], line, 4, m, 0))
				continue;
			if (e->n == e->cap) {
				int nc = e->cap ? 2 * e->cap : 1024;
				event *ne = realloc(e->ev, (size_t)nc * sizeof(*ne));

				if (!ne) {
					rc = -1;
					goto out;
				}
				e->ev = ne;
				e->cap = nc;
			}
			ev = &e->ev[e->n++];
			ev->kind = pats[i].kind;
			ev->seq = e->n - 1;
			ev->id = atol(line + m[1].rm_so);
			ev->t = log_time(line);
			ev->at = -1;
			ev->nodes[0] = '\0';
			if (ev->kind == EV_RESV) {
				char ts[32];
				int len = m[2].rm_eo - m[2].rm_so;

				snprintf(ts, sizeof(ts), "%.*s", len, line + m[2].rm_so);
				ev->at = parse_time(ts);
				g = 3;
			}
			if (m[g].rm_so >= 0 && m[g].rm_eo > m[g].rm_so) {
				int len = m[g].rm_eo - m[g].rm_so;

				if (len >= (int)sizeof(ev->nodes))
					len = sizeof(ev->nodes) - 1;
				memcpy(ev->nodes, line + m[g].rm_so, (size_t)len);
				ev->nodes[len] = '\0';
			}
			break;
		}
	}
out:
	for (int i = 0; i < NPATS; i++)
		regfree(&re[i]);
	free(line);
	fclose(f);
	return rc;
}

/* ---- analysis ------------------------------------------------------------- */

/* Node list -> ascending host indices of the cluster. Returns the count or -1. */
static int hosts_of(const place_cluster *c, const char *list, int *out, int max)
{
	topo_hostlist hl;
	topo_error err;
	int n = 0;

	topo_hostlist_init(&hl);
	if (topo_hostlist_expand(list, &hl, "nodelist", 1, &err)) {
		topo_hostlist_free(&hl);
		return -1;
	}
	for (size_t i = 0; i < hl.n && n < max; i++) {
		int h = place_cluster_find_host(c, hl.names[i]);

		if (h < 0) {
			n = -1;
			break;
		}
		out[n++] = h;
	}
	topo_hostlist_free(&hl);
	if (n > 0)
		qsort(out, (size_t)n, sizeof(int), topo_cmp_int);
	return n;
}

typedef struct comm_opts {
	const sim_comm_profile *prof;
	int nprof;
	unsigned seed;
	double host_gbps;
} comm_opts;

/* Fabric bytes of one heavy job's ring over its life: total and between
 * groups (the formula in the header comment). */
static void job_bytes(const place_cluster *c, const comm_opts *o, const rjob *j, const int *h,
		      int n, double *total, double *cross)
{
	const sim_comm_profile *p;
	double per_flow, iters, xpairs = 0;
	long id = atol(strchr(j->name, '-') + 1);

	*total = *cross = 0;
	if (n < 2 || o->nprof <= 0)
		return;
	p = &o->prof[sim_comm_profile_draw(o->nprof, o->seed, (uint64_t)id)];
	per_flow = 2.0 * (n - 1) / n * p->comm.bytes_per_iter;
	iters = j->log_runtime /
		(p->comm.compute_s_per_iter + per_flow * 8.0 / (o->host_gbps * 1e9));
	for (int i = 0; i < n; i++)
		if (place_cluster_host_group(c, h[i]) != place_cluster_host_group(c, h[(i + 1) % n]))
			xpairs++;
	*total = iters * per_flow * n;
	*cross = iters * per_flow * xpairs;
}

/* Agreement counters: all allocations, and those made with no job waiting. */
typedef struct agree_count {
	int compared, agree, plain, nq, agree_nq;
	int recent; /* disagreements where the policy took a node released < 1 s before */
} agree_count;

/* A node whose job ended this recently may still be completing in Slurm
 * (its epilog not yet confirmed by slurmd), which slurmctld.log at level
 * verbose does not show. */
#define RECENT_RELEASE_S 1.0

/* Is the tree policy's choice for this request exactly `real`? */
static int tree_agrees(place_engine *eng, const place_state *st, place_request *rq,
		       const int *real, int n, place_decision *d)
{
	return place_decide(eng, st, rq, PLACE_POLICY_TREE, PLACE_POLICY_TREE, d) == 0 && d->ok &&
	       d->chosen.nhosts == n && !memcmp(d->chosen.hosts, real, (size_t)n * sizeof(int));
}

static void print_disagreement(const place_cluster *c, const event *ev, const rjob *j, int n,
			       int pending, const place_decision *d, const long *busy,
			       const int *excl, int nexcl)
{
	int H = place_cluster_nhosts(c);

	fprintf(stderr, "disagree JobId=%ld %s -N %d (%d waiting): slurm %s, tree", ev->id,
		j->name, n, pending, ev->nodes);
	for (int k = 0; d->ok && k < d->chosen.nhosts; k++)
		fprintf(stderr, " %s", place_cluster_host_name(c, d->chosen.hosts[k]));
	fprintf(stderr, "; busy:");
	for (int k = 0; k < H; k++)
		if (busy[k])
			fprintf(stderr, " %s", place_cluster_host_name(c, k));
	fprintf(stderr, "; reserved:");
	for (int k = 0; k < nexcl; k++)
		fprintf(stderr, " %s", place_cluster_host_name(c, excl[k]));
	fprintf(stderr, "\n");
}

/* Replay the run's allocations in log order and ask the tree policy each
 * time, on the same busy nodes. A backfill start must also avoid the nodes
 * that the same backfill cycle planned for other waiting jobs from before
 * its end (DebugFlags=Backfill logs those plans); the count without that
 * is printed too. Prints the agreement lines. */
static int agreement(const place_cluster *c, run *r, const events *e)
{
	place_config pc;
	topo_error err;
	place_engine *eng;
	place_state *st = place_state_new(c);
	int H = place_cluster_nhosts(c);
	int *real = malloc((size_t)H * sizeof(int)), *excl = malloc((size_t)H * sizeof(int));
	long *busy = calloc((size_t)H, sizeof(long));     /* job on each host, 0 none */
	long *resv_job = calloc((size_t)H, sizeof(long)); /* planned job, 0 none */
	double *resv_at = calloc((size_t)H, sizeof(double));
	double *freed = calloc((size_t)H, sizeof(double)); /* last release, seconds */
	int rc = -1, pending = 0, nresv = 0, verbose = getenv("SLURM_REPLAY_VERBOSE") != NULL;
	agree_count a = {0};
	char buf[512];

	place_config_init(&pc);
	eng = place_engine_new(c, &pc, &err);
	if (!eng || !st || !real || !excl || !busy || !resv_job || !resv_at || !freed) {
		fprintf(stderr, "slurm_replay: %s\n",
			eng ? "out of memory" : topo_error_format(&err, buf, sizeof(buf)));
		goto out;
	}
	for (int h = 0; h < H; h++)
		place_state_set_host(st, h, 0, 0, 4, 4, 0);
	for (int i = 0; i < e->n; i++) {
		const event *ev = &e->ev[i];
		rjob *j = run_find_id(r, ev->id);
		place_request rq;
		place_decision d;
		int n, nexcl = 0, same, plain;

		if (ev->kind == EV_BF_BEGIN) {
			memset(resv_job, 0, (size_t)H * sizeof(long));
			continue;
		}
		if (!j)
			continue;
		if (ev->kind == EV_SUBMIT) {
			pending++;
			continue;
		}
		if (ev->kind == EV_RESV) {
			nresv++;
			/* a node can carry plans of several jobs: keep the earliest */
			if ((n = hosts_of(c, ev->nodes, real, H)) > 0)
				for (int k = 0; k < n; k++)
					if (!resv_job[real[k]] || ev->at < resv_at[real[k]]) {
						resv_job[real[k]] = ev->id;
						resv_at[real[k]] = ev->at;
					}
			continue;
		}
		if (ev->kind == EV_END) {
			place_state_remove_job(st, (uint32_t)ev->id);
			for (int k = 0; k < H; k++)
				if (busy[k] == ev->id) {
					busy[k] = 0;
					freed[k] = ev->t;
				}
			continue;
		}
		if ((n = hosts_of(c, ev->nodes, real, H)) <= 0)
			continue;
		memset(&rq, 0, sizeof(rq));
		rq.job_id = (uint32_t)ev->id;
		rq.min_hosts = rq.max_hosts = n;
		rq.exclusive = 1;
		rq.comm.cls = j->heavy ? PLACE_COMM_HEAVY : PLACE_COMM_NONE;
		plain = tree_agrees(eng, st, &rq, real, n, &d);
		if (ev->kind == EV_BF_START)
			for (int h = 0; h < H; h++)
				if (!busy[h] && resv_job[h] && resv_job[h] != ev->id &&
				    resv_at[h] < ev->t + 60.0 * j->limit_min)
					excl[nexcl++] = h;
		rq.excluded = excl;
		rq.nexcluded = nexcl;
		same = nexcl ? tree_agrees(eng, st, &rq, real, n, &d) : plain;
		pending--;
		a.compared++;
		a.agree += same;
		a.plain += plain;
		if (pending <= 0) {
			a.nq++;
			a.agree_nq += same;
		}
		if (!same && d.ok) {
			int recent = 0;

			for (int k = 0; k < d.chosen.nhosts; k++)
				recent |= ev->t - freed[d.chosen.hosts[k]] < RECENT_RELEASE_S;
			a.recent += recent;
		}
		if (!same && verbose)
			print_disagreement(c, ev, j, n, pending, &d, busy, excl, nexcl);
		for (int k = 0; k < n; k++) {
			if (busy[real[k]] && verbose)
				fprintf(stderr, "JobId=%ld starts on %s, still held by JobId=%ld\n",
					ev->id, place_cluster_host_name(c, real[k]), busy[real[k]]);
			busy[real[k]] = ev->id;
		}
		place_state_add_job(st, (uint32_t)ev->id, real, n, 0, 0, NULL);
	}
	printf("sim_tree_compared %d\n", a.compared);
	printf("sim_tree_agreement %.4f\n", a.compared ? (double)a.agree / a.compared : 0.0);
	printf("sim_tree_backfill_plans %d\n", nresv);
	printf("sim_tree_agreement_ignoring_plans %.4f\n",
	       a.compared ? (double)a.plain / a.compared : 0.0);
	printf("sim_tree_disagree_recent_release %d\n", a.recent);
	printf("sim_tree_compared_no_queue %d\n", a.nq);
	printf("sim_tree_agreement_no_queue %.4f\n", a.nq ? (double)a.agree_nq / a.nq : 0.0);
	rc = 0;
out:
	free(real);
	free(excl);
	free(busy);
	free(resv_job);
	free(resv_at);
	free(freed);
	place_engine_free(eng);
	place_state_free(st);
	return rc;
}

typedef struct analyze_opts {
	const char *graph, *schedule, *jobcomp, *ctld_log, *comm;
	unsigned seed;
	double host_gbps;
	int agreement;
	double begin_epoch; /* > 0: jobs were submitted early with --begin */
} analyze_opts;

static int cmp_event_time(const void *a, const void *b)
{
	const event *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if ((x->kind == EV_SUBMIT) != (y->kind == EV_SUBMIT))
		return x->kind == EV_SUBMIT ? -1 : 1;
	return x->seq - y->seq; /* otherwise the log's order */
}

/* Jobs submitted ahead with --begin=T0+floor(offset) (bench/slurm.sh): a
 * job's "submission" is when it became eligible, its begin time. Move the
 * submit events there and put the events back in time order (a submission
 * before anything else that happened in the same millisecond). */
static void retime_submits(run *r, events *e, double begin_epoch)
{
	for (int i = 0; i < r->n; i++)
		r->jobs[i].submit_ms = begin_epoch + floor(r->jobs[i].offset);
	for (int i = 0; i < e->n; i++) {
		rjob *j = e->ev[i].kind == EV_SUBMIT ? run_find_id(r, e->ev[i].id) : NULL;

		if (j)
			e->ev[i].t = j->submit_ms;
	}
	qsort(e->ev, (size_t)e->n, sizeof(*e->ev), cmp_event_time);
}

static int cmd_analyze(const analyze_opts *o)
{
	sim_comm_profile prof[MAX_PROFILES];
	topo_error err;
	char buf[1024];
	topo_graph *g = sim_load_graph("graph", o->graph, &err);
	place_cluster *c = g ? place_cluster_new(g, &err) : NULL;
	run r = {0};
	events e = {0};
	comm_opts co;
	int nprof, *h = NULL, H, done = 0, heavy = 0, multi = 0, rc = 1, waits_ms = 0;
	double wait = 0, total = 0, cross = 0;

	if (!c || (nprof = sim_load_profiles(o->comm, prof, MAX_PROFILES, &err)) < 0) {
		fprintf(stderr, "slurm_replay: %s\n", topo_error_format(&err, buf, sizeof(buf)));
		goto out;
	}
	co = (comm_opts){prof, nprof, o->seed, o->host_gbps};
	H = place_cluster_nhosts(c);
	if (!(h = malloc((size_t)H * sizeof(int))) || load_schedule(&r, o->schedule) ||
	    load_jobcomp(&r, o->jobcomp) || (o->ctld_log && load_ctld_log(&e, o->ctld_log)))
		goto out;
	/* millisecond submit and start times from the log where it has them */
	if (o->begin_epoch > 0)
		retime_submits(&r, &e, o->begin_epoch);
	for (int i = 0; i < e.n; i++) {
		rjob *j = run_find_id(&r, e.ev[i].id);

		if (j && e.ev[i].kind == EV_SUBMIT && o->begin_epoch <= 0)
			j->submit_ms = e.ev[i].t;
		else if (j && (e.ev[i].kind == EV_START || e.ev[i].kind == EV_BF_START) &&
			 j->start_ms < 0)
			j->start_ms = e.ev[i].t;
	}
	for (int i = 0; i < r.n; i++) {
		const rjob *j = &r.jobs[i];
		double t, x;
		int n;

		if (!j->done)
			continue;
		done++;
		if (j->submit_ms >= 0 && j->start_ms < 0 && o->begin_epoch > 0) {
			wait += j->start - j->submit_ms; /* jobcomp start (seconds) */
		} else if (j->submit_ms >= 0 && j->start_ms >= 0) {
			wait += j->start_ms - j->submit_ms;
			waits_ms++;
		} else {
			wait += j->start - j->submit;
		}
		if (!j->heavy || (n = hosts_of(c, j->nodelist, h, H)) < 2)
			continue;
		heavy++;
		job_bytes(c, &co, j, h, n, &t, &x);
		if (x > 0 && getenv("SLURM_REPLAY_VERBOSE"))
			fprintf(stderr, "cross %s -N %d on %s: %.3e of %.3e bytes\n", j->name, n,
				j->nodelist, x, t);
		total += t;
		cross += x;
		for (int k = 1; k < n; k++)
			if (place_cluster_host_group(c, h[k]) != place_cluster_host_group(c, h[0])) {
				multi++;
				break;
			}
	}
	printf("jobs_scheduled %d\n", r.n);
	printf("jobs %d\n", done);
	printf("heavy_jobs %d\n", heavy);
	printf("heavy_jobs_multi_group %d\n", multi);
	printf("mean_wait_s %.3f\n", done ? wait / done : 0.0);
	printf("waits_from_log %d\n", waits_ms);
	printf("cross_group_bytes_heavy %.6e\n", cross);
	printf("total_bytes_heavy %.6e\n", total);
	printf("cross_group_frac_heavy %.6f\n", total > 0 ? cross / total : 0.0);
	if (o->agreement && o->ctld_log && agreement(c, &r, &e))
		goto out;
	rc = 0;
out:
	free(h);
	free(r.jobs);
	free(e.ev);
	place_cluster_free(c);
	topo_graph_free(g);
	return rc;
}

/* ---- command line ---------------------------------------------------------- */

static int usage(void)
{
	fprintf(stderr,
		"usage: slurm_replay schedule --trace FILE [--skip K] [--jobs N] [--nodes N]\n"
		"                    [--machine-procs P] [--span S] [--max-runtime R] [--factor F]\n"
		"       slurm_replay analyze --graph G.json --schedule FILE --jobcomp FILE\n"
		"                    [--ctld-log FILE] [--comm DIR] [--seed S] [--host-gbps G]\n"
		"                    [--begin-epoch T0] [--agreement]\n"
		"       slurm_replay predictor --trace FILE --skip K --history H --factor F\n"
		"                    --ids UID:GID[,UID:GID...] --out FILE [--nodes N]\n"
		"                    [--machine-procs P] [--max-runtime R]\n");
	return 2;
}

int main(int argc, char **argv)
{
	sched_opts so = {NULL, 0, 300, 32, 100, 240, 120, 0};
	predictor_opts po = {0, NULL, NULL};
	analyze_opts ao = {NULL, NULL, NULL, NULL, FIXTURES_DIR "/comm", DEFAULT_SEED,
			   DEFAULT_HOST_GBPS, 0, 0};

	if (argc < 2)
		return usage();
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--agreement")) {
			ao.agreement = 1;
			continue;
		}
		if (!v)
			return usage();
		i++;
		if (!strcmp(a, "--trace"))
			so.trace = v;
		else if (!strcmp(a, "--skip"))
			so.skip = atoi(v);
		else if (!strcmp(a, "--jobs"))
			so.jobs = atoi(v);
		else if (!strcmp(a, "--nodes"))
			so.nodes = atoi(v);
		else if (!strcmp(a, "--machine-procs"))
			so.machine_procs = atoi(v);
		else if (!strcmp(a, "--span"))
			so.span = atof(v);
		else if (!strcmp(a, "--max-runtime"))
			so.max_runtime = atof(v);
		else if (!strcmp(a, "--factor"))
			so.factor = atof(v);
		else if (!strcmp(a, "--begin-epoch"))
			ao.begin_epoch = atof(v);
		else if (!strcmp(a, "--graph"))
			ao.graph = v;
		else if (!strcmp(a, "--schedule"))
			ao.schedule = v;
		else if (!strcmp(a, "--jobcomp"))
			ao.jobcomp = v;
		else if (!strcmp(a, "--ctld-log"))
			ao.ctld_log = v;
		else if (!strcmp(a, "--comm"))
			ao.comm = v;
		else if (!strcmp(a, "--seed"))
			ao.seed = (unsigned)strtoul(v, NULL, 10);
		else if (!strcmp(a, "--host-gbps"))
			ao.host_gbps = atof(v);
		else if (!strcmp(a, "--history"))
			po.history = atoi(v);
		else if (!strcmp(a, "--ids"))
			po.ids = v;
		else if (!strcmp(a, "--out"))
			po.out = v;
		else
			return usage();
	}
	if (!strcmp(argv[1], "schedule")) {
		if (!so.trace || so.jobs < 2 || so.nodes < 1 || so.machine_procs < 1)
			return usage();
		return cmd_schedule(&so);
	}
	if (!strcmp(argv[1], "predictor")) {
		if (!so.trace || po.history < 1 || so.factor <= 0 || !po.ids || !po.out ||
		    so.nodes < 1 || so.machine_procs < 1)
			return usage();
		return cmd_predictor(&so, &po);
	}
	if (!strcmp(argv[1], "analyze")) {
		if (!ao.graph || !ao.schedule || !ao.jobcomp || ao.host_gbps <= 0)
			return usage();
		return cmd_analyze(&ao);
	}
	return usage();
}
