/*
 * telemetry_reply: Prometheus's JSON reply to the range query, reduced
 * to rates per (host, device, port): one request per snapshot, a range
 * selector over every counter we use, rates computed here. That way the
 * age of the newest sample is known per series (an instant rate() hides
 * it) and counter resets are handled in one place; telemetry_reply_parse is
 * the one function the fuzzer hammers.
 */
#define _GNU_SOURCE
#include "telemetry_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_num.h"

static int metric_index(const char *name)
{
	for (int i = 0; i < NMETRICS; i++)
		if (strcmp(name, telemetry_metric_name[i]) == 0)
			return i;
	return -1;
}

/* ---- reply parsing ------------------------------------------------------------ */

/* One series of the reply, reduced to what we keep. */
typedef struct series {
	char *host, *device;
	int port, metric;
	double last_time, rate, increase, last;
} series;

static int valid_name(const char *s, size_t max, int allow_colon)
{
	size_t n = strlen(s);

	if (!n || n > max)
		return 0;
	for (const char *p = s; *p; p++) {
		unsigned char ch = (unsigned char)*p;

		if (!(ch > ' ' && ch < 0x7f) || ch == '/' || ch == '"' || ch == '\\' || (ch == ':' && !allow_colon))
			return 0;
	}
	return 1;
}

/* "node0001:9100" -> "node0001", "[fe80::1]:9100" -> "fe80::1", a bare name unchanged. */
static char *host_of_instance(const char *inst)
{
	const char *colon;

	if (inst[0] == '[') {
		const char *close = strchr(inst, ']');

		return close ? strndup(inst + 1, (size_t)(close - inst - 1)) : NULL;
	}
	colon = strchr(inst, ':');
	if (colon && strchr(colon + 1, ':'))
		return strdup(inst); /* a bare IPv6 address */
	return colon ? strndup(inst, (size_t)(colon - inst)) : strdup(inst);
}

const char *telemetry_json_label(json_t *metric, const char *key)
{
	json_t *v = json_object_get(metric, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Labels of one series; 0 or -1 when they do not name an IB port we use. */
static int series_labels(json_t *metric, series *s)
{
	const char *name = telemetry_json_label(metric, "__name__");
	const char *host = telemetry_json_label(metric, "host");
	const char *inst = telemetry_json_label(metric, "instance");
	const char *dev = telemetry_json_label(metric, "device");
	const char *port = telemetry_json_label(metric, "port");
	long p;

	if (host && !*host)
		host = NULL;
	if (!json_is_object(metric) || !name || !dev || !port || (!host && !inst))
		return -1;
	if ((s->metric = metric_index(name)) < 0 || topo_parse_long(port, 1, MAX_IB_PORT, &p))
		return -1;
	if (!valid_name(dev, MAX_DEVICE_LEN, 0))
		return -1;
	s->port = (int)p;
	s->host = host ? strdup(host) : host_of_instance(inst);
	if (!s->host || !valid_name(s->host, MAX_HOST_LEN, 1) || !(s->device = strdup(dev)))
		return -1;
	return 0;
}

/* Values [[t, "v"], ...], strictly increasing t: rate and increase with
 * counter resets (a drop means the counter restarted from 0). */
static int series_values(json_t *values, series *s)
{
	size_t n = json_array_size(values);
	double t0 = 0, tprev = 0, vprev = 0, inc = 0;

	if (!json_is_array(values) || n == 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		json_t *pair = json_array_get(values, i);
		json_t *jt = json_array_get(pair, 0), *jv = json_array_get(pair, 1);
		double t, v;

		if (!json_is_array(pair) || json_array_size(pair) != 2 || !json_is_number(jt) ||
		    !json_is_string(jv))
			return -1;
		t = json_number_value(jt);
		if (!isfinite(t) || t <= 0 || (i > 0 && t <= tprev))
			return -1;
		if (topo_parse_double(json_string_value(jv), 0, HUGE_VAL, &v))
			return -1;
		if (i == 0)
			t0 = t;
		else
			inc += v >= vprev ? v - vprev : v;
		tprev = t;
		vprev = v;
	}
	s->last_time = tprev;
	s->last = vprev;
	s->increase = n >= 2 ? inc : NAN;
	s->rate = n >= 2 ? inc / (tprev - t0) : NAN;
	return 0;
}

static int series_cmp(const void *pa, const void *pb)
{
	const series *a = pa, *b = pb;
	int c;

	if ((c = strcmp(a->host, b->host)) || (c = strcmp(a->device, b->device)))
		return c;
	if (a->port != b->port)
		return a->port < b->port ? -1 : 1;
	if (a->metric != b->metric)
		return a->metric < b->metric ? -1 : 1;
	return a->last_time < b->last_time ? -1 : a->last_time > b->last_time;
}

static void series_free(series *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(s[i].host);
		free(s[i].device);
	}
	free(s);
}

static void port_sample_init(telemetry_port_sample *p, series *s)
{
	memset(p, 0, sizeof(*p));
	p->host = s->host;
	p->device = s->device;
	s->host = s->device = NULL;
	p->port = s->port;
	for (int c = 0; c < TELEMETRY_NCOUNTERS; c++)
		p->rate[c] = p->increase[c] = NAN;
	p->rate_bytes_per_s = NAN;
}

/* Group sorted series into ports (takes the strings of each port's first series). */
static int reply_group(series *s, size_t n, telemetry_reply *out)
{
	size_t nports = 0;

	if (n && !(out->ports = calloc(n, sizeof(*out->ports))))
		return -1;
	for (size_t i = 0; i < n; i++) {
		int same = nports && !strcmp(s[i].host, out->ports[nports - 1].host) &&
			   !strcmp(s[i].device, out->ports[nports - 1].device) &&
			   s[i].port == out->ports[nports - 1].port;
		telemetry_port_sample *p;

		if (!same)
			port_sample_init(&out->ports[nports++], &s[i]);
		p = &out->ports[nports - 1];
		/* duplicates of a metric are sorted oldest first: the newest wins */
		if (s[i].metric == RATE_GAUGE) {
			p->rate_bytes_per_s = s[i].last;
		} else {
			p->rate[s[i].metric] = s[i].rate;
			p->increase[s[i].metric] = s[i].increase;
		}
		if (s[i].last_time > p->last_time)
			p->last_time = s[i].last_time;
	}
	out->nports = nports;
	return 0;
}

static int reply_status(json_t *root, topo_error *err)
{
	json_t *status = json_object_get(root, "status");

	if (!json_is_object(root)) {
		topo_error_set(err, "", 0, "Prometheus reply: not a JSON object");
		return -1;
	}
	if (!json_is_string(status)) {
		topo_error_set(err, "", 0, "Prometheus reply: no \"status\" string");
		return -1;
	}
	if (strcmp(json_string_value(status), "success") != 0) {
		const char *msg = telemetry_json_label(root, "error");

		topo_error_set(err, "", 0, "Prometheus reply: status \"%.40s\": %.300s",
			       json_string_value(status), msg ? msg : "(no error text)");
		return -1;
	}
	return 0;
}

int telemetry_reply_parse(const char *body, size_t len, double now, double max_age_s,
		      telemetry_reply *out, topo_error *err)
{
	json_error_t jerr;
	json_t *root, *data, *result, *type;
	series *s = NULL;
	size_t n = 0, total;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		topo_error_set(err, "", 0, "Prometheus reply: invalid JSON at line %d: %s", jerr.line, jerr.text);
		return -1;
	}
	if (reply_status(root, err))
		goto out;
	data = json_object_get(root, "data");
	type = json_object_get(data, "resultType");
	result = json_object_get(data, "result");
	if (!json_is_object(data) || !json_is_string(type) || !json_is_array(result)) {
		topo_error_set(err, "", 0, "Prometheus reply: no data.resultType and data.result array");
		goto out;
	}
	if (strcmp(json_string_value(type), "matrix") != 0) {
		topo_error_set(err, "", 0, "Prometheus reply: result type \"%.40s\", expected \"matrix\"",
			       json_string_value(type));
		goto out;
	}
	total = json_array_size(result);
	out->nseries = total;
	if (total && !(s = calloc(total, sizeof(*s)))) {
		topo_error_set(err, "", 0, "Prometheus reply: out of memory for %zu series", total);
		goto out;
	}
	for (size_t i = 0; i < total; i++) {
		json_t *item = json_array_get(result, i);
		series *cur = &s[n];

		memset(cur, 0, sizeof(*cur));
		if (!json_is_object(item) || series_labels(json_object_get(item, "metric"), cur) ||
		    series_values(json_object_get(item, "values"), cur)) {
			free(cur->host);
			free(cur->device);
			out->nskipped++;
			continue;
		}
		if (fabs(now - cur->last_time) > max_age_s) {
			free(cur->host);
			free(cur->device);
			out->nstale++;
			continue;
		}
		n++;
	}
	if (n)
		qsort(s, n, sizeof(*s), series_cmp);
	if (reply_group(s, n, out)) {
		topo_error_set(err, "", 0, "Prometheus reply: out of memory for %zu ports", n);
		goto out;
	}
	rc = 0;
out:
	series_free(s, n);
	json_decref(root);
	if (rc)
		telemetry_reply_free(out);
	return rc;
}

void telemetry_reply_free(telemetry_reply *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nports; i++) {
		free(r->ports[i].host);
		free(r->ports[i].device);
	}
	free(r->ports);
	memset(r, 0, sizeof(*r));
}

