/*
 * place_record: a placement decision as one JSON line (jansson), with host
 * names rather than indices so the record stands on its own. Off the hot
 * path: it allocates freely.
 */
#include "place_record.h"

#include <jansson.h>
#include <stdlib.h>
#include <time.h>

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
	json_object_set_new(o, "why", json_string(d->defer_why));
	return o;
}

char *place_record_json(const place_cluster *c, const place_request *r,
			const place_decision *d, const char *scorer, double timestamp)
{
	json_t *o, *alts;
	char *text;

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
	text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	return text;
}

int place_record_write(FILE *f, const place_cluster *c, const place_request *r,
		       const place_decision *d, const char *scorer, double timestamp)
{
	char *s = place_record_json(c, r, d, scorer, timestamp);
	int rc;

	if (!s)
		return -1;
	rc = fprintf(f, "%s\n", s) < 0 ? -1 : 0;
	free(s);
	return rc;
}
