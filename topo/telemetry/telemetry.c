/*
 * telemetry: Prometheus client for InfiniBand port counters (see telemetry.h).
 *
 * One request per snapshot: a range selector over every counter we use
 * returns raw samples, from which we compute rates ourselves. That way the
 * age of the newest sample is known per series (an instant rate() hides it),
 * counter resets are handled in one place, and the reply parser is a single
 * function the fuzzer can hammer.
 */
#define _GNU_SOURCE
#include "telemetry.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "topo_http.h"
#include "topo_num.h"

#define METRIC_PREFIX "node_infiniband_"
#define RATE_GAUGE (TELEM_NCOUNTERS) /* series index of rate_bytes_per_second */
#define NMETRICS (TELEM_NCOUNTERS + 1)
#define MAX_HOST_LEN 255
#define MAX_DEVICE_LEN 64
#define MAX_IB_PORT 255
#define MAX_BACKOFF_MS 10000L

/* Metric names, in telem_counter order, then the gauge. */
static const char *const metric_name[NMETRICS] = {
	METRIC_PREFIX "port_data_transmitted_bytes_total",
	METRIC_PREFIX "port_data_received_bytes_total",
	METRIC_PREFIX "port_packets_transmitted_total",
	METRIC_PREFIX "port_packets_received_total",
	METRIC_PREFIX "port_transmit_wait_total",
	METRIC_PREFIX "port_errors_received_total",
	METRIC_PREFIX "port_discards_received_total",
	METRIC_PREFIX "port_discards_transmitted_total",
	METRIC_PREFIX "link_error_recovery_total",
	METRIC_PREFIX "link_downed_total",
	METRIC_PREFIX "symbol_error_total",
	METRIC_PREFIX "local_link_integrity_errors_total",
	METRIC_PREFIX "excessive_buffer_overrun_errors_total",
	METRIC_PREFIX "rate_bytes_per_second",
};

const char *telem_counter_metric(telem_counter c)
{
	return (int)c >= 0 && c < TELEM_NCOUNTERS ? metric_name[c] : NULL;
}

static int metric_index(const char *name)
{
	for (int i = 0; i < NMETRICS; i++)
		if (strcmp(name, metric_name[i]) == 0)
			return i;
	return -1;
}

/* ---- configuration --------------------------------------------------------- */

void telem_config_init(telem_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->connect_timeout_ms = 1000;
	cfg->timeout_ms = 3000;
	cfg->retries = 2;
	cfg->backoff_ms = 100;
	cfg->window_s = 60;
	cfg->max_age_s = 30;
	cfg->max_reply_bytes = (size_t)64 << 20;
}

int telem_config_set(telem_config *cfg, const char *key, const char *value, topo_error *err)
{
	long l;
	double d;

	if (!key || !value) {
		topo_error_set(err, "", 0, "telemetry option without a key or value");
		return -1;
	}
	if (!strcasecmp(key, "TelemetryURL") || !strcasecmp(key, "TelemetryCredentialsFile")) {
		int is_url = !strcasecmp(key, "TelemetryURL");
		char *dst = is_url ? cfg->url : cfg->credentials_file;

		if (strlen(value) >= TELEM_STR_LEN) {
			topo_error_set(err, "", 0, "%s is longer than %d characters", key, TELEM_STR_LEN - 1);
			return -1;
		}
		if (is_url && *value && topo_http_check_url(value, key, TOPO_HTTP_PLAIN_REMOTE, err))
			return -1;
		strcpy(dst, value);
		return 0;
	}
	if (!strcasecmp(key, "TelemetryConnectTimeoutMs") || !strcasecmp(key, "TelemetryTimeoutMs")) {
		if (topo_parse_long(value, 1, 600000, &l))
			goto range;
		if (!strcasecmp(key, "TelemetryTimeoutMs"))
			cfg->timeout_ms = l;
		else
			cfg->connect_timeout_ms = l;
		return 0;
	}
	if (!strcasecmp(key, "TelemetryRetries")) {
		if (topo_parse_long(value, 0, 10, &l))
			goto range;
		cfg->retries = (int)l;
		return 0;
	}
	if (!strcasecmp(key, "TelemetryBackoffMs")) {
		if (topo_parse_long(value, 0, 60000, &l))
			goto range;
		cfg->backoff_ms = l;
		return 0;
	}
	if (!strcasecmp(key, "TelemetryWindowSec")) {
		if (topo_parse_double(value, 1, 3600, &d))
			goto range;
		cfg->window_s = d;
		return 0;
	}
	if (!strcasecmp(key, "TelemetryMaxAgeSec")) {
		if (topo_parse_double(value, 0.001, 86400, &d))
			goto range;
		cfg->max_age_s = d;
		return 0;
	}
	if (!strcasecmp(key, "TelemetryMaxReplyBytes")) {
		if (topo_parse_long(value, 1024, 1L << 31, &l))
			goto range;
		cfg->max_reply_bytes = (size_t)l;
		return 0;
	}
	topo_error_set(err, "", 0, "unknown telemetry option \"%s\"", key);
	return -1;
range:
	topo_error_set(err, "", 0, "%s value \"%s\" is not a number in its allowed range", key, value);
	return -1;
}

/* ---- credentials ----------------------------------------------------------- */

void telem_credentials_wipe(telem_credentials *c)
{
	volatile char *p = c->secret;

	for (size_t i = 0; i < sizeof(c->secret); i++)
		p[i] = 0;
	c->kind = TELEM_AUTH_NONE;
}

static int credentials_parse(const char *path, char *buf, telem_credentials *out, topo_error *err)
{
	int lineno = 0;
	char *next = buf;

	while (next) {
		char *line = next, *word, *secret, *end;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		lineno++;
		while (*line == ' ' || *line == '\t')
			line++;
		end = line + strlen(line);
		while (end > line && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
			*--end = 0;
		if (!*line || *line == '#')
			continue;
		word = line;
		secret = strpbrk(line, " \t");
		if (!secret) {
			topo_error_set(err, path, lineno, "expected \"bearer TOKEN\" or \"basic USER:PASSWORD\"");
			return -1;
		}
		*secret++ = 0;
		while (*secret == ' ' || *secret == '\t')
			secret++;
		if (!strcasecmp(word, "bearer"))
			out->kind = TELEM_AUTH_BEARER;
		else if (!strcasecmp(word, "basic"))
			out->kind = TELEM_AUTH_BASIC;
		else {
			topo_error_set(err, path, lineno, "unknown authentication \"%.40s\"; use bearer or basic", word);
			return -1;
		}
		if (!*secret || strpbrk(secret, " \t") || strlen(secret) >= sizeof(out->secret) ||
		    (out->kind == TELEM_AUTH_BASIC && !strchr(secret, ':'))) {
			topo_error_set(err, path, lineno, out->kind == TELEM_AUTH_BASIC
				       ? "basic needs one USER:PASSWORD word"
				       : "bearer needs one token word");
			out->kind = TELEM_AUTH_NONE;
			return -1;
		}
		strcpy(out->secret, secret);
		return 0;
	}
	topo_error_set(err, path, 0, "no credentials line in the file");
	return -1;
}

int telem_credentials_load(const char *path, telem_credentials *out, topo_error *err)
{
	char buf[4 * TELEM_STR_LEN];
	struct stat st;
	ssize_t n;
	size_t len = 0;
	int fd, rc;

	memset(out, 0, sizeof(*out));
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		topo_error_set(err, path, 0, "cannot open credentials file: %s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		topo_error_set(err, path, 0, "credentials file is not a regular file");
		close(fd);
		return -1;
	}
	if (st.st_mode & 077) {
		topo_error_set(err, path, 0,
			       "credentials file has mode %04o and is open to group or others; refusing it (chmod 600)",
			       (unsigned)(st.st_mode & 07777));
		close(fd);
		return -1;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		topo_error_set(err, path, 0, "credentials file is owned by uid %u, neither root nor us; refusing it",
			       (unsigned)st.st_uid);
		close(fd);
		return -1;
	}
	while (len < sizeof(buf) - 1 && (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = 0;
	if (memchr(buf, 0, len)) {
		topo_error_set(err, path, 0, "credentials file contains a NUL byte");
		rc = -1;
	} else {
		rc = credentials_parse(path, buf, out, err);
	}
	for (volatile char *p = buf; p < buf + sizeof(buf); p++)
		*p = 0;
	return rc;
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

static const char *label(json_t *metric, const char *key)
{
	json_t *v = json_object_get(metric, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Labels of one series; 0 or -1 when they do not name an IB port we use. */
static int series_labels(json_t *metric, series *s)
{
	const char *name = label(metric, "__name__");
	const char *host = label(metric, "host");
	const char *inst = label(metric, "instance");
	const char *dev = label(metric, "device");
	const char *port = label(metric, "port");
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

static void port_sample_init(telem_port_sample *p, series *s)
{
	memset(p, 0, sizeof(*p));
	p->host = s->host;
	p->device = s->device;
	s->host = s->device = NULL;
	p->port = s->port;
	for (int c = 0; c < TELEM_NCOUNTERS; c++)
		p->rate[c] = p->increase[c] = NAN;
	p->rate_bytes_per_s = NAN;
}

/* Group sorted series into ports (takes the strings of each port's first series). */
static int reply_group(series *s, size_t n, telem_reply *out)
{
	size_t nports = 0;

	if (n && !(out->ports = calloc(n, sizeof(*out->ports))))
		return -1;
	for (size_t i = 0; i < n; i++) {
		int same = nports && !strcmp(s[i].host, out->ports[nports - 1].host) &&
			   !strcmp(s[i].device, out->ports[nports - 1].device) &&
			   s[i].port == out->ports[nports - 1].port;
		telem_port_sample *p;

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
		const char *msg = label(root, "error");

		topo_error_set(err, "", 0, "Prometheus reply: status \"%.40s\": %.300s",
			       json_string_value(status), msg ? msg : "(no error text)");
		return -1;
	}
	return 0;
}

int telem_reply_parse(const char *body, size_t len, double now, double max_age_s,
		      telem_reply *out, topo_error *err)
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
		telem_reply_free(out);
	return rc;
}

void telem_reply_free(telem_reply *r)
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

/* ---- snapshot ---------------------------------------------------------------- */

static int is_switch(const topo_graph *g, int v)
{
	const topo_vertex *x = topo_graph_vertex(g, v);

	return x && x->kind == TOPO_V_SWITCH;
}

/* HCA vertex of a measured port, or -1. */
static int map_port(const topo_graph *g, const telem_port_sample *p)
{
	char name[MAX_HOST_LEN + MAX_DEVICE_LEN + 2];
	int host, v;

	snprintf(name, sizeof(name), "%s/%s", p->host, p->device);
	v = topo_graph_find(g, TOPO_V_HCA, name);
	if (v >= 0) {
		const topo_vertex *x = topo_graph_vertex(g, v);

		if (x->port == 0 || x->port == p->port)
			return v;
	}
	if ((host = topo_graph_find(g, TOPO_V_HOST, p->host)) < 0)
		return -1;
	for (int it = 0; (v = topo_graph_next_member(g, host, TOPO_V_HCA, &it)) >= 0;) {
		const topo_vertex *x = topo_graph_vertex(g, v);

		if (x->device && !strcmp(x->device, p->device) && (x->port == 0 || x->port == p->port))
			return v;
	}
	return -1;
}

/* The HCA's cable, preferring one to a switch. */
static int hca_cable(const topo_graph *g, int hca)
{
	int n, best = -1;
	const int *inc = topo_graph_incident(g, hca, &n);

	for (int i = 0; inc && i < n; i++) {
		const topo_edge *e = topo_graph_edge(g, inc[i]);

		if (e->kind != TOPO_E_FABRIC)
			continue;
		if (is_switch(g, topo_edge_other(e, hca)))
			return inc[i];
		if (best < 0)
			best = inc[i];
	}
	return best;
}

/* Capacity of a switch's links to switches above it (any non-leaf switch). */
static double uplink_gbps(const topo_graph *g, int sw)
{
	double sum = 0;
	int n;
	const int *inc = topo_graph_incident(g, sw, &n);

	for (int i = 0; inc && i < n; i++) {
		const topo_edge *e = topo_graph_edge(g, inc[i]);
		int o = topo_edge_other(e, sw);

		if (e->kind != TOPO_E_FABRIC || o == sw || !is_switch(g, o) || e->state == TOPO_LINK_DOWN)
			continue;
		if (topo_graph_vertex(g, o)->level == TOPO_LEVEL_LEAF)
			continue;
		sum += e->gbps;
	}
	return sum;
}

static int leaf_slot(const topo_graph *g, telem_snapshot *s, int *slot, int sw)
{
	telem_leaf *l;

	if (slot[sw] >= 0)
		return slot[sw];
	l = &s->leaves[s->nleaves];
	memset(l, 0, sizeof(*l));
	l->sw = sw;
	if (!(l->name = strdup(topo_graph_vertex(g, sw)->name)))
		return -1;
	l->up_gbps = uplink_gbps(g, sw);
	slot[sw] = (int)s->nleaves++;
	return slot[sw];
}

static double or_zero(double x)
{
	return isnan(x) ? 0 : x;
}

static int link_fill(const topo_graph *g, const telem_port_sample *p, int hca, telem_link *l)
{
	const topo_edge *e;

	memset(l, 0, sizeof(*l));
	l->hca = hca;
	l->port = p->port;
	l->edge = hca_cable(g, hca);
	l->leaf = -1;
	if (!(l->name = strdup(topo_graph_vertex(g, hca)->name)))
		return -1;
	e = l->edge >= 0 ? topo_graph_edge(g, l->edge) : NULL;
	if (e && is_switch(g, topo_edge_other(e, hca)))
		l->leaf = topo_edge_other(e, hca);
	l->capacity_gbps = e && e->gbps > 0 ? e->gbps
			   : (isfinite(p->rate_bytes_per_s) ? p->rate_bytes_per_s * 8 / 1e9 : 0);
	l->tx_gbps = or_zero(p->rate[TELEM_TX_BYTES]) * 8 / 1e9;
	l->rx_gbps = or_zero(p->rate[TELEM_RX_BYTES]) * 8 / 1e9;
	l->util = -1;
	if (l->capacity_gbps > 0 && (!isnan(p->rate[TELEM_TX_BYTES]) || !isnan(p->rate[TELEM_RX_BYTES])))
		l->util = fmax(l->tx_gbps, l->rx_gbps) / l->capacity_gbps;
	memcpy(l->errors, p->increase, sizeof(l->errors));
	l->sample_time = p->last_time;
	return 0;
}

int telem_snapshot_build(const telem_reply *r, const topo_graph *g, double taken,
			 telem_snapshot *out, topo_error *err)
{
	size_t nv = topo_graph_nvertices(g);
	int *slot = NULL;

	memset(out, 0, sizeof(*out));
	out->taken = taken;
	out->nstale = r->nstale;
	out->nskipped = r->nskipped;
	if (r->nports == 0)
		return 0;
	out->links = calloc(r->nports, sizeof(*out->links));
	out->leaves = calloc(r->nports, sizeof(*out->leaves));
	slot = malloc((nv ? nv : 1) * sizeof(*slot));
	if (!out->links || !out->leaves || !slot)
		goto oom;
	for (size_t i = 0; i < nv; i++)
		slot[i] = -1;
	for (size_t i = 0; i < r->nports; i++) {
		const telem_port_sample *p = &r->ports[i];
		int hca = map_port(g, p), li;
		telem_link *l;

		if (hca < 0) {
			out->nunmapped++;
			continue;
		}
		l = &out->links[out->nlinks];
		if (link_fill(g, p, hca, l))
			goto oom;
		out->nlinks++;
		if (out->oldest_sample == 0 || l->sample_time < out->oldest_sample)
			out->oldest_sample = l->sample_time;
		if (l->leaf < 0)
			continue;
		if ((li = leaf_slot(g, out, slot, l->leaf)) < 0)
			goto oom;
		out->leaves[li].nlinks++;
		out->leaves[li].tx_gbps += l->tx_gbps;
		out->leaves[li].rx_gbps += l->rx_gbps;
	}
	for (size_t i = 0; i < out->nleaves; i++) {
		telem_leaf *l = &out->leaves[i];

		l->util = l->up_gbps > 0 ? fmax(l->tx_gbps, l->rx_gbps) / l->up_gbps : -1;
	}
	free(slot);
	return 0;
oom:
	free(slot);
	telem_snapshot_free(out);
	topo_error_set(err, "", 0, "out of memory building the telemetry snapshot");
	return -1;
}

void telem_snapshot_free(telem_snapshot *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nlinks; i++)
		free(s->links[i].name);
	for (size_t i = 0; i < s->nleaves; i++)
		free(s->leaves[i].name);
	free(s->links);
	free(s->leaves);
	memset(s, 0, sizeof(*s));
}

const telem_link *telem_snapshot_link(const telem_snapshot *s, const char *hca_name)
{
	for (size_t i = 0; i < s->nlinks; i++)
		if (!strcmp(s->links[i].name, hca_name))
			return &s->links[i];
	return NULL;
}

const telem_leaf *telem_snapshot_leaf(const telem_snapshot *s, const char *switch_name)
{
	for (size_t i = 0; i < s->nleaves; i++)
		if (!strcmp(s->leaves[i].name, switch_name))
			return &s->leaves[i];
	return NULL;
}

/* ---- HTTP client ------------------------------------------------------------- */

struct telem_client {
	telem_config cfg;
	telem_credentials cred;
	CURL *curl;
	struct curl_slist *headers;
	topo_http_body body;
};

int telem_query_text(const telem_config *cfg, char *buf, size_t len)
{
	char names[1024];
	size_t off = 0;

	names[0] = 0;
	for (int i = 0; i < NMETRICS && off < sizeof(names); i++)
		off += (size_t)snprintf(names + off, sizeof(names) - off, "%s%s", i ? "|" : "",
					metric_name[i] + strlen(METRIC_PREFIX));
	return snprintf(buf, len, "{__name__=~\"" METRIC_PREFIX "(%s)\"}[%lldms]", names,
			(long long)llround(cfg->window_s * 1000));
}

telem_client *telem_client_new(const telem_config *cfg, topo_error *err)
{
	telem_client *c;

	if (!cfg->url[0] || topo_http_check_url(cfg->url, "TelemetryURL", TOPO_HTTP_PLAIN_REMOTE, err)) {
		if (!cfg->url[0])
			topo_error_set(err, "", 0, "telemetry is off: no TelemetryURL");
		return NULL;
	}
	if (!(c = calloc(1, sizeof(*c)))) {
		topo_error_set(err, "", 0, "out of memory for the telemetry client");
		return NULL;
	}
	c->cfg = *cfg;
	c->body.max = cfg->max_reply_bytes;
	if (cfg->credentials_file[0] && telem_credentials_load(cfg->credentials_file, &c->cred, err)) {
		free(c);
		return NULL;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK || !(c->curl = curl_easy_init())) {
		topo_error_set(err, "", 0, "cannot initialise libcurl");
		telem_credentials_wipe(&c->cred);
		free(c);
		return NULL;
	}
	return c;
}

void telem_client_free(telem_client *c)
{
	if (!c)
		return;
	curl_easy_cleanup(c->curl);
	curl_global_cleanup();
	curl_slist_free_all(c->headers);
	telem_credentials_wipe(&c->cred);
	topo_http_body_free(&c->body);
	free(c);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Build the request URL; NULL when memory runs out. */
static char *request_url(telem_client *c, double now)
{
	char query[2048], *esc, *url = NULL;
	size_t blen = strlen(c->cfg.url);

	while (blen && c->cfg.url[blen - 1] == '/')
		blen--;
	telem_query_text(&c->cfg, query, sizeof(query));
	if (!(esc = curl_easy_escape(c->curl, query, 0)))
		return NULL;
	if (asprintf(&url, "%.*s/api/v1/query?query=%s&time=%.3f", (int)blen, c->cfg.url, esc, now) < 0)
		url = NULL;
	curl_free(esc);
	return url;
}

static int setup_request(telem_client *c, const char *url, char *errbuf)
{
	topo_http_get rq = { url, NULL, NULL, NULL, c->cfg.connect_timeout_ms, c->cfg.timeout_ms,
			     errbuf };

	if (c->cred.kind == TELEM_AUTH_BEARER && !c->headers) {
		char hdr[TELEM_STR_LEN + 32];

		snprintf(hdr, sizeof(hdr), "Authorization: Bearer %s", c->cred.secret);
		c->headers = curl_slist_append(NULL, hdr);
		memset(hdr, 0, sizeof(hdr));
		if (!c->headers)
			return -1;
	}
	rq.headers = c->headers;
	if (c->cred.kind == TELEM_AUTH_BASIC)
		rq.basic_userpwd = c->cred.secret;
	return topo_http_setup(c->curl, &rq, &c->body);
}

/* Prometheus's own error text from a non-200 JSON reply, or "". */
static void server_error_text(const telem_client *c, char *buf, size_t len)
{
	json_t *root = c->body.len ? json_loadb(c->body.p, c->body.len, 0, NULL) : NULL;
	const char *msg = root ? label(root, "error") : NULL;

	snprintf(buf, len, "%s%.300s", msg ? ": " : "", msg ? msg : "");
	json_decref(root);
}

int telem_client_fetch(telem_client *c, double now, telem_reply *out, topo_error *err)
{
	char errbuf[CURL_ERROR_SIZE], what[512] = "", srv[320];
	char *url = request_url(c, now);
	int attempts = 0;
	long code = 0;

	memset(out, 0, sizeof(*out));
	if (!url) {
		topo_error_set(err, c->cfg.url, 0, "out of memory building the Prometheus request");
		return -1;
	}
	for (; attempts <= c->cfg.retries; attempts++) {
		CURLcode rc;

		if (attempts > 0) /* doubling, but never more than MAX_BACKOFF_MS per wait */
			sleep_ms(c->cfg.backoff_ms << (attempts - 1) > MAX_BACKOFF_MS
				 ? MAX_BACKOFF_MS : c->cfg.backoff_ms << (attempts - 1));
		topo_http_body_reset(&c->body);
		if (setup_request(c, url, errbuf)) {
			snprintf(what, sizeof(what), "cannot set up the request");
			break;
		}
		rc = curl_easy_perform(c->curl);
		if (c->body.too_big) {
			free(url);
			topo_error_set(err, c->cfg.url, 0, "Prometheus reply is longer than TelemetryMaxReplyBytes (%zu)",
				       c->cfg.max_reply_bytes);
			return -1;
		}
		if (rc != CURLE_OK) {
			snprintf(what, sizeof(what), "unreachable: %s", errbuf[0] ? errbuf : curl_easy_strerror(rc));
			continue;
		}
		curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &code);
		if (code == 200) {
			free(url);
			if (telem_reply_parse(c->body.p ? c->body.p : "", c->body.len, now, c->cfg.max_age_s, out, err)) {
				char why[TOPO_ERROR_TEXT_LEN];

				snprintf(why, sizeof(why), "%s", err ? err->text : "");
				topo_error_set(err, c->cfg.url, 0, "%s", why);
				return -1;
			}
			return 0;
		}
		server_error_text(c, srv, sizeof(srv));
		if (code == 429 || code >= 500) {
			snprintf(what, sizeof(what), "answered HTTP %ld%s", code, srv);
			continue;
		}
		free(url);
		topo_error_set(err, c->cfg.url, 0, "Prometheus refused the query with HTTP %ld%s", code, srv);
		return -1;
	}
	free(url);
	topo_error_set(err, c->cfg.url, 0, "Prometheus %s (after %d attempt%s); scheduling continues without telemetry",
		       what, attempts, attempts == 1 ? "" : "s");
	return -1;
}

int telem_fetch_snapshot(telem_client *c, const topo_graph *g, telem_snapshot *out, topo_error *err)
{
	telem_reply r;
	double now = now_s();
	int rc;

	memset(out, 0, sizeof(*out));
	if (telem_client_fetch(c, now, &r, err))
		return -1;
	rc = telem_snapshot_build(&r, g, now, out, err);
	telem_reply_free(&r);
	return rc;
}

/* ---- log once --------------------------------------------------------------- */

telem_log_action telem_health_update(telem_health *h, int ok)
{
	if (ok) {
		int was_down = h->down;

		h->down = 0;
		h->failures = 0;
		h->suppressed = 0;
		return was_down ? TELEM_LOG_RECOVERED : TELEM_LOG_NONE;
	}
	h->failures++;
	if (h->down) {
		h->suppressed++;
		return TELEM_LOG_NONE;
	}
	h->down = 1;
	return TELEM_LOG_DOWN;
}
