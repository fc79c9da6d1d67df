/*
 * place_record: the decision log's lines as JSON (jansson), with host names
 * rather than indices so each line stands on its own. Off the hot path: it
 * allocates freely.
 */
#include "place_record.h"
#include "place_scorer.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *place_pattern_name(place_pattern p)
{
	switch (p) {
	case PLACE_PATTERN_RING: return "ring";
	case PLACE_PATTERN_ALLTOALL: return "alltoall";
	case PLACE_PATTERN_PIPELINE: return "pipeline";
	}
	return "unknown";
}

static json_t *host_names(const place_cluster *c, const int *hosts, int n)
{
	json_t *a = json_array();

	for (int i = 0; a && i < n; i++) {
		const char *name = place_cluster_host_name(c, hosts[i]);

		json_array_append_new(a, name ? json_string(name) : json_integer(hosts[i]));
	}
	return a;
}

static json_t *choice_json(const place_cluster *c, const place_choice *ch)
{
	json_t *o = json_pack("{s:o, s:s?, s:i, s:i, s:i, s:i, s:f, s:f, s:f}", "hosts",
			 host_names(c, ch->hosts, ch->nhosts), "kind", ch->kind, "nhosts",
			 ch->nhosts, "groups", ch->groups, "leaves", ch->leaves, "hop_diameter",
			 ch->diameter, "cost", ch->cost, "comm_time_s", ch->comm_time_s, "frag_cost",
			 ch->frag_cost);

	if (o && ch->confidence >= 0)
		json_object_set_new(o, "confidence", json_real(ch->confidence));
	if (o && place_cluster_has_sharp(c))
		json_object_set_new(o, "sharp_eligible", json_boolean(ch->sharp));
	if (o && place_cluster_ndomains(c) > 0)
		json_object_set_new(o, "nvlink_domains", json_integer(ch->domains));
	return o;
}

static json_t *request_json(const place_cluster *c, const place_request *r)
{
	json_t *o = json_pack("{s:i, s:i, s:i, s:i, s:b, s:o, s:o, s:i, s:{s:s, s:s, s:f, s:f}}",
			 "min_hosts", r->min_hosts, "max_hosts",
			 r->max_hosts > 0 ? r->max_hosts : r->min_hosts, "gpus_per_host",
			 r->gpus_per_host, "cores_per_host", r->cores_per_host, "exclusive",
			 r->exclusive, "required", host_names(c, r->required, r->nrequired),
			 "excluded", host_names(c, r->excluded, r->nexcluded), "max_groups",
			 r->max_groups, "comm", "class", place_comm_class_name(r->comm.cls),
			 "pattern", place_pattern_name(r->comm.pattern), "bytes_per_iter",
			 r->comm.bytes_per_iter, "compute_s_per_iter", r->comm.compute_s_per_iter);

	if (o && r->comm.sharp) /* a SHARP user */
		json_object_set_new(json_object_get(o, "comm"), "sharp", json_true());
	/* what the engine was told of the job's duration: a hold and the
	 * packing of light jobs weigh the prediction, else the limit */
	if (o && r->time_limit_s > 0)
		json_object_set_new(o, "time_limit_s", json_real(r->time_limit_s));
	if (o && r->predicted_runtime_s > 0)
		json_object_set_new(o, "predicted_run_s", json_real(r->predicted_runtime_s));
	return o;
}

/* Waiting for locality: what was weighed, only for heavy requests. */
static json_t *locality_json(const place_request *r, const place_decision *d)
{
	json_t *o = json_pack("{s:i, s:b, s:b}", "min_groups", d->min_groups, "checked",
			      d->locality_checked, "deferred", d->deferred);

	if (o && r->deferred_s > 0) /* placed after waiting: for how long */
		json_object_set_new(o, "waited_s", json_real(r->deferred_s));
	if (!o || !d->locality_checked)
		return o;
	if (r->deferred_s <= 0)
		json_object_set_new(o, "waited_s", json_real(0));
	json_object_set_new(o, "budget_s", json_real(d->defer_budget_s));
	if (d->deferred) {
		json_object_set_new(o, "expected_wait_s", json_real(d->defer_wait_s));
		json_object_set_new(o, "expected_groups", json_integer(d->defer_groups));
	}
	if (d->hold_p >= 0) { /* the learned hold gate decided, on these */
		json_t *f = json_object();

		for (int i = 0; f && i < PLACE_HOLD_FEATURES; i++)
			json_object_set_new(f, place_hold_feature_names[i],
					    json_real(d->hold_feat[i]));
		json_object_set_new(o, "hold_gate", json_real(d->hold_p));
		json_object_set_new(o, "hold_features", f);
	}
	json_object_set_new(o, "why", json_string(d->defer_why));
	return o;
}

/* The decision record as a JSON object; NULL when memory runs out. */
static json_t *record_object(const place_cluster *c, const place_request *r,
			     const place_decision *d, const char *scorer, double timestamp)
{
	json_t *o, *alts;

	if (timestamp <= 0) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		timestamp = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	}
	o = json_pack("{s:I, s:f, s:o, s:b, s:s, s:s, s:s, s:i, s:f}", "job",
		      (json_int_t)r->job_id, "timestamp", timestamp, "request", request_json(c, r),
		      "ok", d->ok, "policy", place_policy_name(d->policy), "baseline_policy",
		      place_policy_name(d->baseline_policy), "scorer", scorer ? scorer : "",
		      "candidates", d->ncandidates, "latency_us", d->latency_us);
	if (!o)
		return NULL;
	if (r->queue_position > 0)
		json_object_set_new(o, "queue_position", json_integer(r->queue_position));
	if (d->model)
		json_object_set_new(o, "model", json_string(d->model));
	if (!d->ok) {
		json_object_set_new(o, "reason", json_string(d->reason));
		json_object_set_new(o, "chosen", json_null());
	} else {
		json_object_set_new(o, "chosen", choice_json(c, &d->chosen));
	}
	json_object_set_new(o, "baseline",
			    d->ok && d->baseline.nhosts > 0 ? choice_json(c, &d->baseline)
							    : json_null());
	alts = json_array();
	for (int i = 0; alts && i < d->nalternatives; i++)
		json_array_append_new(alts, choice_json(c, &d->alternatives[i]));
	json_object_set_new(o, "alternatives", alts ? alts : json_array());
	if (d->ok && d->min_groups > 0)
		json_object_set_new(o, "locality", locality_json(r, d));
	return o;
}

/* o as one compact line, malloc'd; o is released. NULL for a NULL o. */
static char *dump_line(json_t *o)
{
	char *text = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;

	json_decref(o);
	return text;
}

char *place_record_write_mem(const place_cluster *c, const place_request *r,
			     const place_decision *d, const char *scorer, double timestamp)
{
	return dump_line(record_object(c, r, d, scorer, timestamp));
}

int place_record_write(FILE *f, const place_cluster *c, const place_request *r,
		       const place_decision *d, const char *scorer, double timestamp)
{
	char *s = place_record_write_mem(c, r, d, scorer, timestamp);
	int rc;

	if (!s)
		return -1;
	rc = fprintf(f, "%s\n", s) < 0 ? -1 : 0;
	free(s);
	return rc;
}

static json_t *str_or_empty(const char *s)
{
	return json_string(s ? s : "");
}

/* One side of a commit line: "topognn" (the chosen set; kind and leaves
 * known) or "baseline" (kind NULL and leaves < 0: not written). */
static json_t *commit_choice(const char *policy, const char *nodes, const char *kind,
			     const place_choice *ch, int leaves)
{
	json_t *o = json_object();

	json_object_set_new(o, "policy", str_or_empty(policy));
	json_object_set_new(o, "nodes", str_or_empty(nodes));
	if (kind)
		json_object_set_new(o, "kind", json_string(kind));
	json_object_set_new(o, "groups", json_integer(ch->groups));
	if (leaves >= 0)
		json_object_set_new(o, "leaves", json_integer(leaves));
	json_object_set_new(o, "cost", json_real(ch->cost));
	return o;
}

/* What the engine chose for the allocation and its baseline's choice. */
static void commit_decision(json_t *o, const place_commit *cm)
{
	const place_decision *d = cm->dec;
	int followed = cm->chosen_nodes && cm->nodes ? strcmp(cm->chosen_nodes, cm->nodes) == 0
						     : cm->chosen_nodes == cm->nodes;
	json_t *chosen = commit_choice(cm->policy, cm->chosen_nodes, cm->kind, &d->chosen,
				       d->chosen.leaves);

	json_object_set_new(o, "class", json_string(place_comm_class_name(cm->req->comm.cls)));
	json_object_set_new(o, "topognn", chosen);
	json_object_set_new(o, "baseline", commit_choice(place_policy_name(d->baseline_policy),
							 cm->baseline_nodes, NULL, &d->baseline,
							 -1));
	json_object_set_new(o, "followed", json_boolean(followed));
	json_object_set_new(o, "candidates", json_integer(d->ncandidates));
	json_object_set_new(o, "latency_us", json_real(d->latency_us));
	/* the engine's own record of the evaluation that became the allocation */
	json_object_set_new(o, "decision", record_object(cm->cluster, cm->req, d, cm->scorer, 0));
	if (cm->model && chosen)
		json_object_set_new(chosen, "model", json_string(cm->model));
}

/* Shadow mode: the other policies' choices. */
static json_t *shadow_json(const place_shadow_choice *sh, int n)
{
	json_t *a = json_array();

	for (int i = 0; a && i < n; i++) {
		json_t *o = json_object();

		json_object_set_new(o, "policy", str_or_empty(sh[i].policy));
		json_object_set_new(o, "nodes", str_or_empty(sh[i].hold ? NULL : sh[i].nodes));
		json_object_set_new(o, "groups", json_integer(sh[i].hold ? -1 : sh[i].groups));
		json_object_set_new(o, "hold", json_boolean(sh[i].hold));
		if (sh[i].hold && sh[i].expected_wait_s >= 0)
			json_object_set_new(o, "expected_wait_s", json_real(sh[i].expected_wait_s));
		json_array_append_new(a, o);
	}
	return a;
}

char *place_record_write_commit_mem(const place_commit *cm)
{
	json_t *o, *groups = json_array();

	for (int g = 0; groups && g < cm->ngroups; g++)
		json_array_append_new(groups, str_or_empty(cm->groups[g]));
	/* "o" hands each value to the object (jansson frees it if the pack
	 * fails); "o?" writes null for a string that is not UTF-8 (a job's
	 * name is the user's), where "s" would fail the whole line. */
	o = json_pack("{s:I, s:I, s:o?, s:o?, s:o?, s:i, s:o, s:i, s:i, s:i}",
		      "time", (json_int_t)(cm->time > 0 ? cm->time : (long)time(NULL)),
		      "job_id", (json_int_t)cm->job_id,
		      "name", str_or_empty(cm->name),
		      "mode", str_or_empty(cm->mode),
		      "nodes", str_or_empty(cm->nodes),
		      "node_count", cm->node_count,
		      "groups", groups,
		      "ngroups", cm->ngroups,
		      "leaves", cm->leaves,
		      "running_jobs", cm->running_jobs);
	if (!o)
		return NULL;
	if (cm->has_wait)
		json_object_set_new(o, "wait_s", json_real(cm->wait_s));
	if (cm->nshadow > 0 && cm->shadow)
		json_object_set_new(o, "shadow", shadow_json(cm->shadow, cm->nshadow));
	if (cm->fallback || !cm->dec) {
		json_t *t = json_object();

		json_object_set_new(t, "policy", str_or_empty(cm->policy));
		json_object_set_new(t, "fallback", str_or_empty(cm->fallback));
		json_object_set_new(o, "topognn", t);
	} else {
		commit_decision(o, cm);
	}
	return dump_line(o);
}

/* Append line (malloc'd, NUL-terminated, freed here) and a newline to the
 * file at path in one write(2) on an O_APPEND descriptor. */
static int append_line(const char *path, char *line, topo_error *err)
{
	size_t len;
	ssize_t put;
	int fd;

	if (!line) {
		topo_error_set(err, path, 0, "out of memory");
		return -1;
	}
	len = strlen(line);
	line[len] = '\n'; /* over the NUL: the line goes out in one write */
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		topo_error_set(err, path, 0, "%s", strerror(errno));
		free(line);
		return -1;
	}
	put = write(fd, line, len + 1);
	if (put != (ssize_t)(len + 1))
		topo_error_set(err, path, 0, "short write: %s",
			       put < 0 ? strerror(errno) : "disk full?");
	close(fd);
	free(line);
	return put == (ssize_t)(len + 1) ? 0 : -1;
}

int place_record_write_commit(const char *path, const place_commit *cm, topo_error *err)
{
	return append_line(path, place_record_write_commit_mem(cm), err);
}

int place_record_write_end_path(const char *path, uint32_t job, double timestamp,
				double elapsed_s, double realised_slowdown, topo_error *err)
{
	char *line = malloc(256);
	int n;

	if (!line) {
		topo_error_set(err, path, 0, "out of memory");
		return -1;
	}
	/* the same fields as place_record_write_end() */
	n = snprintf(line, 256, "{\"event\":\"end\",\"job\":%u,\"timestamp\":%.17g,\"elapsed_s\":%.3f",
		     job, timestamp, elapsed_s);
	if (n > 0 && n < 200 && !isnan(realised_slowdown))
		n += snprintf(line + n, 256 - (size_t)n, ",\"realised_slowdown\":%.6g",
			      realised_slowdown);
	if (n > 0 && n < 254)
		snprintf(line + n, 256 - (size_t)n, "}");
	return append_line(path, line, err);
}

int place_record_write_end(FILE *f, uint32_t job, double timestamp, double elapsed_s,
			   double realised_slowdown)
{
	int rc = fprintf(f, "{\"event\":\"end\",\"job\":%u,\"timestamp\":%.17g,\"elapsed_s\":%.3f",
			 job, timestamp, elapsed_s);

	if (rc >= 0 && !isnan(realised_slowdown))
		rc = fprintf(f, ",\"realised_slowdown\":%.6g", realised_slowdown);
	if (rc >= 0)
		rc = fprintf(f, "}\n");
	return rc < 0 ? -1 : 0;
}
