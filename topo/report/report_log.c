/*
 * report_log: read a decision log (engine records, plugin commit lines and
 * job end events) into report_decision structs. See report_log.h.
 */
#include "report_log.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_hostlist.h"
#include "topo_io.h"
#include "topo_num.h"

/* job id -> index of its latest decision (open addressing, grows x2) */
typedef struct job_index {
	uint32_t *job;
	int *idx;
	size_t cap, n;
} job_index;

static int index_put(job_index *x, uint32_t job, int idx)
{
	if (2 * (x->n + 1) > x->cap) {
		job_index y = {0};

		y.cap = x->cap ? 2 * x->cap : 256;
		y.job = malloc(y.cap * sizeof(uint32_t));
		y.idx = malloc(y.cap * sizeof(int));
		if (!y.job || !y.idx) {
			free(y.job);
			free(y.idx);
			return -1;
		}
		for (size_t i = 0; i < y.cap; i++)
			y.idx[i] = -1;
		for (size_t i = 0; i < x->cap; i++)
			if (x->idx[i] >= 0)
				index_put(&y, x->job[i], x->idx[i]);
		free(x->job);
		free(x->idx);
		*x = y;
	}
	for (size_t h = (job * 2654435761u) & (x->cap - 1);; h = (h + 1) & (x->cap - 1)) {
		if (x->idx[h] < 0 || x->job[h] == job) {
			x->n += x->idx[h] < 0;
			x->job[h] = job;
			x->idx[h] = idx;
			return 0;
		}
	}
}

static int index_get(const job_index *x, uint32_t job)
{
	if (!x->cap)
		return -1;
	for (size_t h = (job * 2654435761u) & (x->cap - 1);; h = (h + 1) & (x->cap - 1)) {
		if (x->idx[h] < 0)
			return -1;
		if (x->job[h] == job)
			return x->idx[h];
	}
}

static void choice_free(report_choice *c)
{
	for (int i = 0; i < c->nhosts; i++)
		free(c->hosts[i]);
	free(c->hosts);
	memset(c, 0, sizeof(*c));
}

static void decision_free(report_decision *d)
{
	choice_free(&d->chosen);
	choice_free(&d->baseline);
	for (int a = 0; a < d->nalternatives; a++)
		choice_free(&d->alternatives[a]);
	free(d->alternatives);
	for (int a = 0; a < d->nshadow; a++)
		choice_free(&d->shadow[a]);
	free(d->shadow);
	for (int i = 0; i < d->nallocated; i++)
		free(d->allocated[i]);
	free(d->allocated);
}

void report_log_free(report_log *log)
{
	for (int i = 0; i < log->n; i++)
		decision_free(&log->d[i]);
	free(log->d);
	memset(log, 0, sizeof(*log));
}

static void copy_str(char *dst, size_t len, json_t *v)
{
	snprintf(dst, len, "%s", json_is_string(v) ? json_string_value(v) : "");
}

static double num(json_t *v, double dflt)
{
	return json_is_number(v) ? json_number_value(v) : dflt;
}

static int inum(json_t *v, int dflt)
{
	return json_is_integer(v) ? (int)json_integer_value(v) : dflt;
}

/* Host names from a JSON array of strings, or a Slurm hostlist string. */
static int hosts_from(json_t *v, char ***out, int *n, const char **why)
{
	topo_hostlist hl;
	topo_error e;

	topo_hostlist_init(&hl);
	if (json_is_array(v)) {
		size_t i;
		json_t *h;

		*out = calloc(json_array_size(v) + 1, sizeof(char *));
		if (!*out)
			return -1;
		json_array_foreach(v, i, h) {
			if (!json_is_string(h)) {
				*why = "a host name is not a string";
				return -1;
			}
			(*out)[i] = strdup(json_string_value(h));
			if (!(*out)[i])
				return -1;
			*n = (int)i + 1;
		}
		return 0;
	}
	if (!json_is_string(v)) {
		*why = "the hosts are neither a list nor a hostlist string";
		return -1;
	}
	if (!*json_string_value(v)) /* none: a shadow choice that holds */
		return (*out = calloc(1, sizeof(char *))) ? 0 : -1;
	if (topo_hostlist_expand(json_string_value(v), &hl, "", 0, &e)) {
		topo_hostlist_free(&hl); /* the list may have grown before the error */
		*why = "the hostlist does not expand";
		return -1;
	}
	/* hand the expanded names over */
	*out = hl.names ? hl.names : calloc(1, sizeof(char *));
	*n = (int)hl.n;
	return *out ? 0 : -1;
}

static int choice_from(json_t *o, report_choice *c, const char **why)
{
	json_t *h = json_object_get(o, "hosts");

	memset(c, 0, sizeof(*c));
	c->groups = c->leaves = c->diameter = -1;
	c->cost = c->comm_time_s = c->frag_cost = c->confidence = c->expected_wait_s = NAN;
	if (!json_is_object(o))
		return 0;
	if (!h)
		h = json_object_get(o, "nodes");
	if (hosts_from(h, &c->hosts, &c->nhosts, why))
		return -1;
	copy_str(c->kind, sizeof(c->kind), json_object_get(o, "kind"));
	copy_str(c->policy, sizeof(c->policy), json_object_get(o, "policy"));
	c->groups = inum(json_object_get(o, "groups"), -1);
	c->leaves = inum(json_object_get(o, "leaves"), -1);
	c->diameter = inum(json_object_get(o, "hop_diameter"), -1);
	c->cost = num(json_object_get(o, "cost"), NAN);
	c->comm_time_s = num(json_object_get(o, "comm_time_s"), NAN);
	c->frag_cost = num(json_object_get(o, "frag_cost"), NAN);
	c->confidence = num(json_object_get(o, "confidence"), NAN);
	c->hold = json_is_true(json_object_get(o, "hold"));
	c->expected_wait_s = num(json_object_get(o, "expected_wait_s"), NAN);
	return 0;
}

/* A commit line's "shadow": [...] (shadow mode). */
static int shadow_from(json_t *a, report_decision *d, const char **why)
{
	json_t *o;
	size_t i;

	if (!json_is_array(a) || json_array_size(a) == 0)
		return 0;
	if (!(d->shadow = calloc(json_array_size(a), sizeof(report_choice))))
		return -1;
	json_array_foreach(a, i, o) {
		d->nshadow = (int)i + 1;
		if (choice_from(o, &d->shadow[i], why))
			return -1;
	}
	return 0;
}

const report_choice *report_decision_shadow(const report_decision *d, const char *p)
{
	for (int i = 0; i < d->nshadow; i++)
		if (!strcmp(d->shadow[i].policy, p))
			return &d->shadow[i];
	return NULL;
}

static void request_from(json_t *r, report_decision *d)
{
	json_t *comm = json_object_get(r, "comm");

	d->min_hosts = inum(json_object_get(r, "min_hosts"), 0);
	d->max_hosts = inum(json_object_get(r, "max_hosts"), 0);
	d->gpus_per_host = inum(json_object_get(r, "gpus_per_host"), 0);
	d->cores_per_host = inum(json_object_get(r, "cores_per_host"), 0);
	d->exclusive = json_is_true(json_object_get(r, "exclusive"));
	d->max_groups = inum(json_object_get(r, "max_groups"), 0);
	copy_str(d->comm_class, sizeof(d->comm_class), json_object_get(comm, "class"));
	copy_str(d->pattern, sizeof(d->pattern), json_object_get(comm, "pattern"));
	d->sharp_user = json_is_true(json_object_get(comm, "sharp"));
	d->bytes_per_iter = num(json_object_get(comm, "bytes_per_iter"), 0);
	d->compute_s_per_iter = num(json_object_get(comm, "compute_s_per_iter"), 0);
	d->time_limit_s = num(json_object_get(r, "time_limit_s"), NAN);
	d->predicted_run_s = num(json_object_get(r, "predicted_run_s"), NAN);
}

static int copy_hosts(const report_choice *c, char ***out, int *n)
{
	*out = calloc((size_t)c->nhosts + 1, sizeof(char *));
	if (!*out)
		return -1;
	for (int i = 0; i < c->nhosts; i++)
		if (!((*out)[i] = strdup(c->hosts[i])))
			return -1;
	*n = c->nhosts;
	return 0;
}

/* What a heavy request's "locality" says beyond deferred and waited_s:
 * the budget, the sentence and, when the learned gate decided, its
 * probability and features (docs/decision-record.md). */
static void locality_from(json_t *loc, report_decision *d)
{
	json_t *f = json_object_get(loc, "hold_features"), *v;
	const char *k;

	d->locality_checked = json_is_true(json_object_get(loc, "checked"));
	d->min_groups = inum(json_object_get(loc, "min_groups"), -1);
	d->expected_groups = inum(json_object_get(loc, "expected_groups"), -1);
	d->budget_s = num(json_object_get(loc, "budget_s"), NAN);
	copy_str(d->locality_why, sizeof(d->locality_why), json_object_get(loc, "why"));
	d->hold_gate = num(json_object_get(loc, "hold_gate"), NAN);
	json_object_foreach(f, k, v) {
		if (d->nhold_features == REPORT_HOLD_FEATURES || !json_is_number(v))
			continue;
		snprintf(d->hold_feature[d->nhold_features], sizeof(d->hold_feature[0]), "%s", k);
		d->hold_value[d->nhold_features++] = json_number_value(v);
	}
}

/* The fields of an engine decision record: all but what a commit line says
 * instead (the format, the allocation, whether it was followed). */
static int record_fields(json_t *o, report_decision *d, const char **why)
{
	json_t *alts = json_object_get(o, "alternatives"), *a;
	json_t *loc = json_object_get(o, "locality");
	size_t i;

	d->timestamp = num(json_object_get(o, "timestamp"), 0);
	d->ok = json_is_true(json_object_get(o, "ok"));
	copy_str(d->reason, sizeof(d->reason), json_object_get(o, "reason"));
	copy_str(d->policy, sizeof(d->policy), json_object_get(o, "policy"));
	copy_str(d->baseline_policy, sizeof(d->baseline_policy),
		 json_object_get(o, "baseline_policy"));
	copy_str(d->scorer, sizeof(d->scorer), json_object_get(o, "scorer"));
	copy_str(d->model, sizeof(d->model), json_object_get(o, "model"));
	d->candidates = inum(json_object_get(o, "candidates"), 0);
	d->latency_us = num(json_object_get(o, "latency_us"), NAN);
	d->queue_position = inum(json_object_get(o, "queue_position"), 0);
	if (d->queue_position < 0)
		d->queue_position = 0;
	d->deferred = json_is_true(json_object_get(loc, "deferred"));
	d->waited_s = num(json_object_get(loc, "waited_s"), 0);
	d->expected_wait_s = num(json_object_get(loc, "expected_wait_s"), NAN);
	locality_from(loc, d);
	request_from(json_object_get(o, "request"), d);
	if (choice_from(json_object_get(o, "chosen"), &d->chosen, why) ||
	    choice_from(json_object_get(o, "baseline"), &d->baseline, why))
		return -1;
	if (json_is_array(alts) && json_array_size(alts) > 0) {
		d->alternatives = calloc(json_array_size(alts), sizeof(report_choice));
		if (!d->alternatives)
			return -1;
		json_array_foreach(alts, i, a) {
			d->nalternatives = (int)i + 1;
			if (choice_from(a, &d->alternatives[i], why))
				return -1;
		}
	}
	return 0;
}

/* An engine decision record. */
static int from_record(json_t *o, report_decision *d, const char **why)
{
	snprintf(d->format, sizeof(d->format), "record");
	if (record_fields(o, d, why))
		return -1;
	d->followed = 1;
	return copy_hosts(&d->chosen, &d->allocated, &d->nallocated);
}

/* The commit line's view of a choice (the scheduler's node names, the
 * policy, the candidate kind) replaces the record's; the record's hop
 * diameter and cost parts stay when both hold the same hosts. */
static void choice_merge(report_choice *rec, report_choice *commit)
{
	if (report_choice_same_hosts(rec, commit)) {
		commit->diameter = rec->diameter;
		commit->comm_time_s = rec->comm_time_s;
		commit->frag_cost = rec->frag_cost;
		commit->confidence = rec->confidence;
	}
	choice_free(rec);
	*rec = *commit;
}

/* A commit line (the Slurm plugin's): the decision record inside it, when
 * the allocation came from an evaluation, is read as any record; then what
 * only the commit knows (the allocation, the mode, followed or not, the
 * fallback) and its view of the two choices go over it. */
static int from_commit(json_t *o, report_decision *d, const char **why)
{
	json_t *t = json_object_get(o, "topognn"), *f = json_object_get(o, "followed");
	json_t *rec = json_object_get(o, "decision");
	report_choice chosen, baseline;

	if (json_is_object(rec) && record_fields(rec, d, why))
		return -1;
	snprintf(d->format, sizeof(d->format), "plugin");
	d->timestamp = num(json_object_get(o, "time"), 0);
	d->ok = json_is_object(t) && !json_object_get(t, "fallback");
	if (json_object_get(t, "model"))
		copy_str(d->model, sizeof(d->model), json_object_get(t, "model"));
	copy_str(d->mode, sizeof(d->mode), json_object_get(o, "mode"));
	copy_str(d->comm_class, sizeof(d->comm_class), json_object_get(o, "class"));
	d->candidates = inum(json_object_get(o, "candidates"), d->candidates);
	d->latency_us = num(json_object_get(o, "latency_us"), d->latency_us);
	if (!json_is_object(rec)) /* no request: what was allocated */
		d->min_hosts = d->max_hosts = inum(json_object_get(o, "node_count"), 0);
	if (choice_from(d->ok ? t : NULL, &chosen, why)) {
		choice_free(&chosen);
		return -1;
	}
	if (choice_from(json_object_get(o, "baseline"), &baseline, why)) {
		choice_free(&chosen);
		choice_free(&baseline);
		return -1;
	}
	choice_merge(&d->chosen, &chosen);
	choice_merge(&d->baseline, &baseline);
	if (d->ok)
		snprintf(d->policy, sizeof(d->policy), "%s", d->chosen.policy);
	else
		copy_str(d->policy, sizeof(d->policy), json_object_get(t, "policy"));
	snprintf(d->baseline_policy, sizeof(d->baseline_policy), "%s", d->baseline.policy);
	d->followed = json_is_boolean(f) ? json_is_true(f) : -1;
	if (!d->ok)
		copy_str(d->reason, sizeof(d->reason), json_object_get(t, "fallback"));
	if (!d->ok && !d->reason[0])
		snprintf(d->reason, sizeof(d->reason), "topognn made no decision for this job");
	d->wait_s = num(json_object_get(o, "wait_s"), NAN);
	if (shadow_from(json_object_get(o, "shadow"), d, why))
		return -1;
	return hosts_from(json_object_get(o, "nodes"), &d->allocated, &d->nallocated, why);
}

static int add_decision(report_log *log, report_decision *d)
{
	if (log->n == log->cap) {
		int cap = log->cap ? 2 * log->cap : 64;
		report_decision *n = realloc(log->d, (size_t)cap * sizeof(*n));

		if (!n)
			return -1;
		log->d = n;
		log->cap = cap;
	}
	log->d[log->n++] = *d;
	return 0;
}

static void skip(report_log *log, const char *source, int line, const char *why)
{
	if (log->skipped++ == 0)
		topo_error_set(&log->first_skip, source, line, "%s", why);
}

/* One line: 0 taken or skipped, -1 out of memory. */
static int parse_line(report_log *log, job_index *jx, const char *s, size_t len,
		      const char *source, int line)
{
	json_error_t je;
	json_t *o, *job;
	report_decision d;
	const char *why = NULL;
	int rc = 0;

	while (len > 0 && (s[len - 1] == '\r' || s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	if (len == 0)
		return 0;
	o = json_loadb(s, len, JSON_REJECT_DUPLICATES, &je);
	if (!o) {
		skip(log, source, line, "not JSON (a torn line?)");
		return 0;
	}
	if (!json_is_object(o)) {
		skip(log, source, line, "not a JSON object");
		json_decref(o);
		return 0;
	}
	if (json_is_string(json_object_get(o, "event"))) {
		int i;

		if (strcmp(json_string_value(json_object_get(o, "event")), "end") ||
		    !json_is_integer(json_object_get(o, "job"))) {
			skip(log, source, line, "an event that is not a job end");
		} else if ((i = index_get(jx, (uint32_t)json_integer_value(
							 json_object_get(o, "job")))) < 0) {
			log->orphan_ends++;
		} else {
			report_decision *e = &log->d[i];

			e->ended = 1;
			e->end_time = num(json_object_get(o, "timestamp"), NAN);
			e->elapsed_s = num(json_object_get(o, "elapsed_s"), NAN);
			e->realised_slowdown = num(json_object_get(o, "realised_slowdown"), NAN);
		}
		json_decref(o);
		return 0;
	}
	memset(&d, 0, sizeof(d));
	d.line = line;
	d.followed = -1;
	d.latency_us = d.end_time = d.elapsed_s = d.realised_slowdown = NAN;
	d.wait_s = d.expected_wait_s = d.budget_s = d.hold_gate = NAN;
	d.time_limit_s = d.predicted_run_s = NAN;
	d.min_groups = d.expected_groups = -1;
	if (json_is_integer(job = json_object_get(o, "job"))) {
		rc = from_record(o, &d, &why);
	} else if (json_is_integer(job = json_object_get(o, "job_id"))) {
		rc = from_commit(o, &d, &why);
	} else {
		json_decref(o);
		skip(log, source, line, "neither a decision (no \"job\" or \"job_id\") nor an event");
		return 0;
	}
	d.job = (uint32_t)json_integer_value(job);
	json_decref(o);
	if (rc) {
		decision_free(&d);
		if (!why)
			return -1;
		skip(log, source, line, why);
		return 0;
	}
	if (add_decision(log, &d) || index_put(jx, d.job, log->n - 1)) {
		decision_free(&d);
		return -1;
	}
	return 0;
}

int report_log_load_mem(const char *text, size_t len, const char *source, report_log *log,
			topo_error *err)
{
	job_index jx = {0};
	size_t pos = 0;
	int rc = 0;

	memset(log, 0, sizeof(*log));
	topo_error_clear(&log->first_skip);
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;

		log->lines++;
		if (parse_line(log, &jx, text + pos, end - pos, source, log->lines)) {
			topo_error_set(err, source, log->lines, "out of memory reading the log");
			report_log_free(log);
			rc = -1;
			break;
		}
		pos = end + 1;
	}
	free(jx.job);
	free(jx.idx);
	return rc;
}

int report_log_load(const char *path, report_log *log, topo_error *err)
{
	size_t len;
	char *buf;
	int rc;

	memset(log, 0, sizeof(*log));
	if (!(buf = topo_read_file(path, TOPO_IO_MAX_BYTES, &len, err)))
		return -1;
	rc = report_log_load_mem(buf, len, path, log, err);
	free(buf);
	return rc;
}

const report_decision *report_log_find(const report_log *log, uint32_t job)
{
	const report_decision *fallback = NULL;

	for (int i = log->n - 1; i >= 0; i--) {
		if (log->d[i].job != job)
			continue;
		if (log->d[i].ok)
			return &log->d[i];
		/* a plugin line of a job Slurm placed itself, with the reason */
		if (!fallback && !strcmp(log->d[i].format, "plugin"))
			fallback = &log->d[i];
	}
	return fallback;
}

int *report_log_running(const report_log *log, double at, int *n)
{
	job_index jx = {0};
	int *out = malloc(((size_t)log->n + 1) * sizeof(int));

	*n = 0;
	if (!out)
		return NULL;
	/* the latest decision of each job made by `at` (a requeue replaces) */
	for (int i = 0; i < log->n; i++)
		if (log->d[i].ok && log->d[i].timestamp <= at && index_put(&jx, log->d[i].job, i)) {
			free(out);
			out = NULL;
			goto done;
		}
	for (int i = 0; i < log->n; i++) {
		const report_decision *d = &log->d[i];

		if (!d->ok || d->nallocated == 0 || d->timestamp > at ||
		    index_get(&jx, d->job) != i || (d->ended && !(d->end_time > at)))
			continue;
		out[(*n)++] = i;
	}
done:
	free(jx.job);
	free(jx.idx);
	return out;
}

double report_log_last_time(const report_log *log)
{
	double t = 0;

	for (int i = 0; i < log->n; i++) {
		if (log->d[i].timestamp > t)
			t = log->d[i].timestamp;
		if (log->d[i].ended && log->d[i].end_time > t)
			t = log->d[i].end_time;
	}
	return t;
}

int report_choice_same_hosts(const report_choice *a, const report_choice *b)
{
	char **x, **y;
	int same;

	if (a->nhosts != b->nhosts || a->nhosts == 0)
		return 0;
	x = malloc((size_t)a->nhosts * sizeof(char *));
	y = malloc((size_t)a->nhosts * sizeof(char *));
	if (!x || !y) {
		free(x);
		free(y);
		return 0;
	}
	memcpy(x, a->hosts, (size_t)a->nhosts * sizeof(char *));
	memcpy(y, b->hosts, (size_t)a->nhosts * sizeof(char *));
	qsort(x, (size_t)a->nhosts, sizeof(char *), topo_cmp_str);
	qsort(y, (size_t)a->nhosts, sizeof(char *), topo_cmp_str);
	same = 1;
	for (int i = 0; i < a->nhosts && same; i++)
		same = strcmp(x[i], y[i]) == 0;
	free(x);
	free(y);
	return same;
}
