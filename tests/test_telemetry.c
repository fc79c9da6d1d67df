/*
 * test_telemetry: the Prometheus telemetry client on canned replies (the
 * live servers are exercised by telemetry/test_prometheus.sh): rates from
 * raw samples, counter resets, staleness, malformed replies, mapping onto a
 * graph, leaf estimates, configuration, credentials and log-once.
 */
#define _GNU_SOURCE
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "telemetry.h"
#include "telemetry_feed.h"
#include "telemetry_place.h"
#include "http_client.h"
#include "test_tmp.h"

#define NOW 1700000100.0

/* One series: metric suffix, instance, device, then "t:v t:v ..." */
static char *series(const char *metric, const char *labels, const char *values)
{
	static char buf[8192];
	char vals[4096] = "";
	char *copy = strdup(values), *save = NULL;
	size_t off = 0;

	for (char *tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char *colon = strchr(tok, ':');

		*colon = 0;
		off += (size_t)snprintf(vals + off, sizeof(vals) - off, "%s[%s,\"%s\"]", off ? "," : "", tok,
					colon + 1);
	}
	free(copy);
	snprintf(buf, sizeof(buf), "{\"metric\":{\"__name__\":\"node_infiniband_%s\",%s},\"values\":[%s]}",
		 metric, labels, vals);
	return strdup(buf);
}

static char *reply(int n, ...)
{
	char *out = strdup("{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[");
	va_list ap;

	va_start(ap, n);
	for (int i = 0; i < n; i++) {
		char *s = va_arg(ap, char *);
		char *next;

		assert_true(asprintf(&next, "%s%s%s", out, i ? "," : "", s) > 0);
		free(out);
		free(s);
		out = next;
	}
	va_end(ap);
	{
		char *next;

		assert_true(asprintf(&next, "%s]}}", out) > 0);
		free(out);
		out = next;
	}
	return out;
}

#define L1 "\"instance\":\"node0001:9100\",\"device\":\"mlx5_0\",\"port\":\"1\""
#define L2 "\"instance\":\"10.0.0.2:9100\",\"host\":\"node0002\",\"device\":\"mlx5_0\",\"port\":\"1\""

static void test_rates_and_resets(void **state)
{
	telemetry_reply r;
	topo_error err;
	/* tx: 0, 1e9, 2e9 bytes over 20 s -> 1e8 B/s; rx resets: 100, 400, 50 -> increase 350 */
	char *body = reply(3,
		series("port_data_transmitted_bytes_total", L1,
		       "1700000080:0 1700000090:1000000000 1700000100:2000000000"),
		series("port_data_received_bytes_total", L1, "1700000080:100 1700000090:400 1700000100:50"),
		series("rate_bytes_per_second", L1, "1700000100:12500000000"));

	(void)state;
	assert_int_equal(telemetry_reply_parse(body, strlen(body), NOW, 30, &r, &err), 0);
	assert_int_equal(r.nseries, 3);
	assert_int_equal(r.nports, 1);
	assert_int_equal(r.nstale, 0);
	assert_int_equal(r.nskipped, 0);
	assert_string_equal(r.ports[0].host, "node0001");
	assert_string_equal(r.ports[0].device, "mlx5_0");
	assert_int_equal(r.ports[0].port, 1);
	assert_float_equal(r.ports[0].rate[TELEMETRY_TX_BYTES], 1e8, 1e-6);
	assert_float_equal(r.ports[0].increase[TELEMETRY_TX_BYTES], 2e9, 1e-6);
	assert_float_equal(r.ports[0].increase[TELEMETRY_RX_BYTES], 350, 1e-9);
	assert_float_equal(r.ports[0].rate[TELEMETRY_RX_BYTES], 17.5, 1e-9);
	assert_float_equal(r.ports[0].rate_bytes_per_s, 12.5e9, 1e-3);
	assert_true(isnan(r.ports[0].rate[TELEMETRY_LINK_DOWNED]));
	assert_float_equal(r.ports[0].last_time, 1700000100.0, 1e-9);
	telemetry_reply_free(&r);
	free(body);
}

static void test_stale_and_skipped(void **state)
{
	telemetry_reply r;
	topo_error err;
	char *body = reply(5,
		/* newest sample 40 s old: stale at max age 30 */
		series("port_data_transmitted_bytes_total", L2, "1700000050:0 1700000060:10"),
		/* unknown metric */
		series("port_foo_total", L1, "1700000090:0 1700000100:10"),
		/* bad port label */
		series("port_data_transmitted_bytes_total",
		       "\"instance\":\"n1\",\"device\":\"mlx5_0\",\"port\":\"0\"", "1700000100:1"),
		/* time going backwards */
		series("port_data_received_bytes_total", L1, "1700000100:0 1700000090:10"),
		/* a value that is not a number */
		series("link_downed_total", L1, "1700000100:abc"));

	(void)state;
	assert_int_equal(telemetry_reply_parse(body, strlen(body), NOW, 30, &r, &err), 0);
	assert_int_equal(r.nseries, 5);
	assert_int_equal(r.nstale, 1);
	assert_int_equal(r.nskipped, 4);
	assert_int_equal(r.nports, 0);
	telemetry_reply_free(&r);
	free(body);
}

static void expect_error(const char *body, const char *fragment)
{
	telemetry_reply r;
	topo_error err;

	topo_error_clear(&err);
	assert_int_equal(telemetry_reply_parse(body, strlen(body), NOW, 30, &r, &err), -1);
	if (!strstr(err.text, fragment))
		fail_msg("error \"%s\" lacks \"%s\"", err.text, fragment);
	assert_int_equal(r.nports, 0);
	assert_null(r.ports);
}

static void test_malformed_replies(void **state)
{
	(void)state;
	expect_error("", "invalid JSON at line 1");
	expect_error("[1,2]", "not a JSON object");
	expect_error("{}", "no \"status\" string");
	expect_error("{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"parse error at char 3\"}",
		     "status \"error\": parse error at char 3");
	expect_error("{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[]}}",
		     "result type \"vector\", expected \"matrix\"");
	expect_error("{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":{}}}",
		     "no data.resultType and data.result array");
	expect_error("{\"status\":\"success\",\"status\":\"success\"}", "invalid JSON");
}

/* Graph: node0001/mlx5_0 and node0002/HCA-1 (device mlx5_0) under leaf-a
 * with 4X NDR (400 Gb/s); leaf-a has one 400 and one down 400 up-link. */
static topo_graph *small_graph(void)
{
	topo_graph *g = topo_graph_new();
	int leaf = topo_graph_add_vertex(g, TOPO_V_SWITCH, "leaf-a");
	int spine = topo_graph_add_vertex(g, TOPO_V_SWITCH, "spine-a");
	int h1 = topo_graph_add_vertex(g, TOPO_V_HOST, "node0001");
	int h2 = topo_graph_add_vertex(g, TOPO_V_HOST, "node0002");
	int a = topo_graph_add_part(g, h1, TOPO_V_HCA, "mlx5_0");
	int b = topo_graph_add_part(g, h2, TOPO_V_HCA, "HCA-1");
	int e;

	topo_graph_vertex_mut(g, leaf)->level = TOPO_LEVEL_LEAF;
	topo_graph_vertex_mut(g, spine)->level = TOPO_LEVEL_SPINE;
	topo_set_str(&topo_graph_vertex_mut(g, b)->device, "mlx5_0");
	e = topo_graph_add_edge(g, TOPO_E_FABRIC, a, leaf);
	topo_edge_set_rate(topo_graph_edge_mut(g, e), 4, "NDR");
	e = topo_graph_add_edge(g, TOPO_E_FABRIC, b, leaf);
	topo_edge_set_rate(topo_graph_edge_mut(g, e), 4, "NDR");
	e = topo_graph_add_edge(g, TOPO_E_FABRIC, leaf, spine);
	topo_edge_set_rate(topo_graph_edge_mut(g, e), 4, "NDR");
	e = topo_graph_add_edge(g, TOPO_E_FABRIC, leaf, spine);
	topo_edge_set_rate(topo_graph_edge_mut(g, e), 4, "NDR");
	topo_graph_edge_mut(g, e)->state = TOPO_LINK_DOWN;
	return g;
}

static void test_snapshot_on_graph(void **state)
{
	telemetry_reply r;
	telemetry_snapshot s;
	topo_error err;
	topo_graph *g = small_graph();
	/* node0001: tx 10 GB/s = 80 Gb/s = 0.2 of 400; node0002 rx 25 GB/s = 200 Gb/s = 0.5;
	 * node0003 is not in the graph. */
	char *body = reply(4,
		series("port_data_transmitted_bytes_total", L1, "1700000090:0 1700000100:100000000000"),
		series("port_data_received_bytes_total", L2, "1700000090:0 1700000100:250000000000"),
		series("link_error_recovery_total", L2, "1700000090:3 1700000095:5 1700000100:9"),
		series("port_data_transmitted_bytes_total",
		       "\"instance\":\"node0003\",\"device\":\"mlx5_0\",\"port\":\"1\"",
		       "1700000090:0 1700000100:1"));
	const telemetry_link *l1, *l2;
	const telemetry_leaf *leaf;

	(void)state;
	assert_int_equal(telemetry_reply_parse(body, strlen(body), NOW, 30, &r, &err), 0);
	assert_int_equal(r.nports, 3);
	assert_int_equal(telemetry_snapshot_build(&r, g, NOW, &s, &err), 0);
	assert_int_equal(s.nlinks, 2);
	assert_int_equal(s.nunmapped, 1);
	assert_int_equal(s.nleaves, 1);
	l1 = telemetry_snapshot_link(&s, "node0001/mlx5_0");
	l2 = telemetry_snapshot_link(&s, "node0002/HCA-1");
	assert_non_null(l1);
	assert_non_null(l2);
	assert_float_equal(l1->capacity_gbps, 400, 1e-9);
	assert_float_equal(l1->tx_gbps, 80, 1e-9);
	assert_float_equal(l1->util, 0.2, 1e-12);
	assert_float_equal(l2->rx_gbps, 200, 1e-9);
	assert_float_equal(l2->util, 0.5, 1e-12);
	assert_float_equal(l2->errors[TELEMETRY_LINK_ERROR_RECOVERY], 6, 1e-12);
	leaf = telemetry_snapshot_leaf(&s, "leaf-a");
	assert_non_null(leaf);
	assert_int_equal(leaf->nlinks, 2);
	assert_float_equal(leaf->up_gbps, 400, 1e-9); /* the down cable does not count */
	assert_float_equal(leaf->util, 0.5, 1e-12);    /* max(80, 200) / 400 */
	assert_null(telemetry_snapshot_leaf(&s, "spine-a"));
	telemetry_snapshot_free(&s);
	telemetry_reply_free(&r);
	topo_graph_free(g);
	free(body);
}

static void test_apply_to_state(void **state)
{
	topo_graph *g = small_graph();
	topo_error err;
	place_cluster *c = place_cluster_new(g, &err);
	place_state *st;
	telemetry_leaf leaves[3] = {
		{ .name = "leaf-a", .util = 0.5 },
		{ .name = "ghost-leaf", .util = 0.7 },
		{ .name = "spine-a", .util = -1 }, /* unknown estimate: skipped */
	};
	telemetry_snapshot snap = { .nleaves = 3, .leaves = leaves };
	uint64_t v;
	int unknown = -1;

	(void)state;
	assert_non_null(c);
	st = place_state_new(c);
	assert_non_null(st);
	v = place_state_version(st);
	assert_int_equal(telemetry_apply_to_state(&snap, st, &unknown), 1);
	assert_int_equal(unknown, 1);
	assert_true(place_state_version(st) == v + 1);
	assert_int_equal(telemetry_clear_from_state(&snap, st), 1);
	assert_true(place_state_version(st) == v + 2);
	place_state_free(st);
	place_cluster_free(c);
	topo_graph_free(g);
}

static void test_config(void **state)
{
	telemetry_config cfg;
	topo_error err;
	char q[2048];

	(void)state;
	telemetry_config_init(&cfg);
	assert_int_equal(cfg.timeout_ms, 3000);
	assert_int_equal(cfg.retries, 2);
	assert_float_equal(cfg.max_age_s, 30, 0);
	assert_int_equal(telemetry_config_set(&cfg, "telemetryurl", "http://prom:9090/", &err), 0);
	assert_string_equal(cfg.url, "http://prom:9090/");
	assert_int_equal(telemetry_config_set(&cfg, "TelemetryMaxAgeSec", "12.5", &err), 0);
	assert_float_equal(cfg.max_age_s, 12.5, 0);
	assert_int_equal(telemetry_config_set(&cfg, "TelemetryRetries", "11", &err), -1);
	assert_string_equal(err.text, "TelemetryRetries value \"11\" is not a number in its allowed range");
	assert_int_equal(cfg.retries, 2);
	assert_int_equal(telemetry_config_set(&cfg, "TelemetryURL", "ftp://x", &err), -1);
	assert_non_null(strstr(err.text, "must start with http:// or https://"));
	assert_int_equal(telemetry_config_set(&cfg, "TelemetryURL", "http://u:p@prom:9090", &err), -1);
	assert_non_null(strstr(err.text, "must not carry credentials"));
	assert_int_equal(telemetry_config_set(&cfg, "TelemetryColour", "red", &err), -1);
	assert_string_equal(err.text, "unknown telemetry option \"TelemetryColour\"");
	assert_int_equal(telemetry_config_set(&cfg, "TelemetryWindowSec", "30", &err), 0);
	telemetry_query_text(&cfg, q, sizeof(q));
	assert_non_null(strstr(q, "{__name__=~\"node_infiniband_(port_data_transmitted_bytes_total|"));
	assert_non_null(strstr(q, "|rate_bytes_per_second)\"}[30000ms]"));
	assert_string_equal(telemetry_counter_metric(TELEMETRY_BUFFER_OVERRUN_ERRORS),
			    "node_infiniband_excessive_buffer_overrun_errors_total");
	assert_null(telemetry_counter_metric(TELEMETRY_NCOUNTERS));
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
}

static void test_credentials(void **state)
{
	char dir[512], path[1024];
	telemetry_credentials c;
	topo_error err;
	telemetry_config cfg;

	(void)state;
	assert_non_null(test_mkdtemp(dir, sizeof(dir), "test_telemetry.XXXXXX"));
	snprintf(path, sizeof(path), "%s/cred", dir);

	write_file(path, "# Prometheus\n\n  basic  admin:pa:ss  \n", 0600);
	assert_int_equal(telemetry_credentials_load(path, &c, &err), 0);
	assert_int_equal(c.kind, TELEMETRY_AUTH_BASIC);
	assert_string_equal(c.secret, "admin:pa:ss");
	telemetry_credentials_wipe(&c);
	assert_int_equal(c.secret[0], 0);

	write_file(path, "bearer tok\n", 0644);
	assert_int_equal(telemetry_credentials_load(path, &c, &err), -1);
	assert_string_equal(err.text,
			    "credentials file has mode 0644 and is open to group or others; refusing it (chmod 600)");
	assert_string_equal(err.source, path);
	write_file(path, "bearer tok\n", 0640);
	assert_int_equal(telemetry_credentials_load(path, &c, &err), -1);
	assert_non_null(strstr(err.text, "mode 0640"));

	/* the client refuses to start on such a file */
	telemetry_config_init(&cfg);
	telemetry_config_set(&cfg, "TelemetryURL", "http://127.0.0.1:1", &err);
	telemetry_config_set(&cfg, "TelemetryCredentialsFile", path, &err);
	assert_null(telemetry_client_new(&cfg, &err));
	assert_non_null(strstr(err.text, "refusing it"));

	write_file(path, "\n\ntoken-without-kind\n", 0600);
	assert_int_equal(telemetry_credentials_load(path, &c, &err), -1);
	assert_int_equal(err.line, 3);
	assert_string_equal(err.text, "expected \"bearer TOKEN\" or \"basic USER:PASSWORD\"");
	write_file(path, "basic nocolon\n", 0600);
	assert_int_equal(telemetry_credentials_load(path, &c, &err), -1);
	assert_string_equal(err.text, "basic needs one USER:PASSWORD word");
	write_file(path, "# nothing\n", 0600);
	assert_int_equal(telemetry_credentials_load(path, &c, &err), -1);
	assert_string_equal(err.text, "no credentials line in the file");

	unlink(path);
	assert_int_equal(telemetry_credentials_load(path, &c, &err), -1);
	assert_non_null(strstr(err.text, "cannot open: "));
	rmdir(dir);
}

/* Plain http is for this machine only, by literal address (issue 21:
 * "127.evil.invalid" passed as loopback), and no base URL is cut short. */
static void test_http_local(void **state)
{
	static const char *const local[] = {
		"http://localhost:9090", "http://LocalHost/", "http://127.0.0.1:9090",
		"http://127.255.254.1/", "http://127.0.0.1", "http://[::1]:9090/",
		"http://[0:0:0:0:0:0:0:1]/", "unix:/run/slurmrestd.sock",
	};
	static const char *const remote[] = {
		"http://127.evil.invalid:9090", "http://127.0.0.1.evil.invalid/",
		"http://localhost.evil.invalid/", "http://127.1/", "http://0177.0.0.1/",
		"http://127.0.0.256/", "http://128.0.0.1/", "http://[::2]/", "http://[::ffff:8.8.8.8]/",
		"http://127.0.0.1x/", "http:///", "http://",
	};
	char url[HTTP_MAX_URL + 2];
	topo_error err;

	(void)state;
	for (size_t i = 0; i < sizeof(local) / sizeof(local[0]); i++)
		assert_true(http_is_local(local[i]));
	for (size_t i = 0; i < sizeof(remote) / sizeof(remote[0]); i++) {
		assert_false(http_is_local(remote[i]));
		if (strncmp(remote[i], "http://", 7) == 0 && remote[i][7]) {
			assert_int_equal(http_check_url(remote[i], "TelemetryURL", 0, &err), -1);
			assert_non_null(strstr(err.text, "is plain http to another host"));
		}
	}
	assert_int_equal(http_check_url("http://127.0.0.1:9090", "TelemetryURL", 0, &err), 0);
	/* exactly HTTP_MAX_URL characters is fine, one more is refused */
	memset(url, 'a', sizeof(url));
	memcpy(url, "https://h/", 10);
	url[HTTP_MAX_URL] = '\0';
	assert_int_equal(http_check_url(url, "the slurmrestd URL", 0, &err), 0);
	url[HTTP_MAX_URL] = 'a';
	url[HTTP_MAX_URL + 1] = '\0';
	assert_int_equal(http_check_url(url, "the slurmrestd URL", 0, &err), -1);
	assert_non_null(strstr(err.text, "is 2049 characters long; at most 2048 are accepted"));
}

static void test_log_once(void **state)
{
	telemetry_health h = { 0 };

	(void)state;
	assert_int_equal(telemetry_health_update(&h, 1), TELEMETRY_LOG_NONE);
	assert_int_equal(telemetry_health_update(&h, 0), TELEMETRY_LOG_DOWN);
	assert_int_equal(telemetry_health_update(&h, 0), TELEMETRY_LOG_NONE);
	assert_int_equal(telemetry_health_update(&h, 0), TELEMETRY_LOG_NONE);
	assert_int_equal(h.failures, 3);
	assert_int_equal(h.suppressed, 2);
	assert_int_equal(telemetry_health_update(&h, 1), TELEMETRY_LOG_RECOVERED);
	assert_int_equal(telemetry_health_update(&h, 1), TELEMETRY_LOG_NONE);
	assert_int_equal(telemetry_health_update(&h, 0), TELEMETRY_LOG_DOWN);
}

static void test_unreachable(void **state)
{
	telemetry_config cfg;
	telemetry_client *c;
	telemetry_reply r;
	topo_error err;

	(void)state;
	telemetry_config_init(&cfg);
	/* port 1 on loopback: connection refused at once */
	assert_int_equal(telemetry_config_set(&cfg, "TelemetryURL", "http://127.0.0.1:1", &err), 0);
	assert_int_equal(telemetry_config_set(&cfg, "TelemetryRetries", "1", &err), 0);
	assert_int_equal(telemetry_config_set(&cfg, "TelemetryBackoffMs", "10", &err), 0);
	c = telemetry_client_new(&cfg, &err);
	assert_non_null(c);
	assert_int_equal(telemetry_client_fetch(c, NOW, &r, &err), -1);
	assert_string_equal(err.source, "http://127.0.0.1:1");
	assert_non_null(strstr(err.text, "Prometheus unreachable: "));
	assert_non_null(strstr(err.text, "(after 2 attempts); scheduling continues without telemetry"));
	telemetry_client_free(c);
}

/* ---- telemetry_feed: a scripted fetcher ---------------------------------- */

typedef struct script {
	int n, next;
	double util[8]; /* < 0: the fetch fails */
	int calls;
} script;

static int scripted_fetch(void *arg, telemetry_snapshot *out, topo_error *err)
{
	script *sc = arg;
	double u = sc->util[sc->next < sc->n ? sc->next : sc->n - 1];

	sc->next++;
	sc->calls++;
	memset(out, 0, sizeof(*out));
	if (u < 0) {
		topo_error_set(err, "http://prom:9090", 0,
			       "Prometheus unreachable: refused (after 3 attempts); "
			       "scheduling continues without telemetry");
		return -1;
	}
	out->leaves = calloc(1, sizeof(*out->leaves));
	out->leaves[0].name = strdup("leaf-a");
	out->leaves[0].util = u;
	out->nleaves = 1;
	return 0;
}

typedef struct logbook {
	int errors, infos;
	char last[1024];
} logbook;

static void log_to_book(void *arg, telemetry_feed_log_level level, const char *msg)
{
	logbook *b = arg;

	if (level == TELEMETRY_FEED_ERROR)
		b->errors++;
	else
		b->infos++;
	snprintf(b->last, sizeof(b->last), "%s", msg);
}

static void test_feed_swap(void **state)
{
	topo_graph *g = small_graph();
	topo_error err;
	place_cluster *c = place_cluster_new(g, &err);
	place_state *st;
	script sc = { .n = 7, .util = { 0.5, 0.8, -1, -1, -1, 0.3, 0.3 } };
	logbook book = { 0 };
	telemetry_feed *f;
	uint64_t v;

	(void)state;
	assert_non_null(c);
	st = place_state_new(c);
	f = telemetry_feed_new_custom(scripted_fetch, &sc, 30, log_to_book, &book);
	assert_non_null(f);
	v = place_state_version(st);
	assert_int_equal(telemetry_feed_apply(f, st), 0); /* nothing fetched yet */
	assert_true(place_state_version(st) == v);

	assert_int_equal(telemetry_feed_poll(f), 0);       /* leaf-a 0.5 */
	assert_int_equal(telemetry_feed_apply(f, st), 1);
	assert_true(place_state_version(st) == v + 1); /* one leaf set */
	assert_int_equal(telemetry_feed_apply(f, st), 0);  /* same snapshot: untouched */
	assert_true(place_state_version(st) == v + 1);

	assert_int_equal(telemetry_feed_poll(f), 0);       /* leaf-a 0.8 */
	assert_int_equal(telemetry_feed_apply(f, st), 1);
	assert_true(place_state_version(st) == v + 3); /* cleared, then set */

	for (int i = 0; i < 3; i++)                    /* Prometheus down 3 times */
		assert_int_equal(telemetry_feed_poll(f), -1);
	assert_int_equal(book.errors, 1);              /* logged once */
	assert_non_null(strstr(book.last, "http://prom:9090: Prometheus unreachable: refused"));
	assert_int_equal(telemetry_feed_failures(f), 3);
	assert_int_equal(telemetry_feed_apply(f, st), 1);  /* the outage clears the overlay */
	assert_true(place_state_version(st) == v + 4);
	assert_int_equal(telemetry_feed_apply(f, st), 0);

	assert_int_equal(telemetry_feed_poll(f), 0);       /* back: leaf-a 0.3 */
	assert_int_equal(book.infos, 1);
	assert_non_null(strstr(book.last, "telemetry is back"));
	assert_int_equal(telemetry_feed_poll(f), 0);       /* two snapshots, one apply */
	assert_int_equal(telemetry_feed_apply(f, st), 1);
	assert_true(place_state_version(st) == v + 5); /* nothing to clear after the outage */
	assert_int_equal(telemetry_feed_snapshots(f), 4);
	assert_int_equal(sc.calls, 7);
	assert_int_equal(book.errors, 1);
	telemetry_feed_free(f);
	place_state_free(st);
	place_cluster_free(c);
	topo_graph_free(g);
}

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_feed_thread(void **state)
{
	topo_graph *g = small_graph();
	topo_error err;
	place_cluster *c = place_cluster_new(g, &err);
	place_state *st = place_state_new(c);
	script sc = { .n = 1, .util = { 0.6 } };
	telemetry_feed *f;
	double t0;

	(void)state;
	/* 20 ms interval: several snapshots within a second */
	f = telemetry_feed_new_custom(scripted_fetch, &sc, 0.02, NULL, NULL);
	assert_int_equal(telemetry_feed_start(f), 0);
	t0 = mono_now();
	while (telemetry_feed_snapshots(f) < 3 && mono_now() - t0 < 5)
		usleep(5000);
	assert_true(telemetry_feed_snapshots(f) >= 3);
	assert_int_equal(telemetry_feed_apply(f, st), 1);
	telemetry_feed_free(f);

	/* 1 hour interval: free wakes the sleeping thread at once */
	f = telemetry_feed_new_custom(scripted_fetch, &sc, 3600, NULL, NULL);
	assert_int_equal(telemetry_feed_start(f), 0);
	t0 = mono_now();
	while (telemetry_feed_snapshots(f) < 1 && mono_now() - t0 < 5)
		usleep(5000);
	assert_int_equal(telemetry_feed_snapshots(f), 1);
	t0 = mono_now();
	telemetry_feed_free(f);
	assert_true(mono_now() - t0 < 1.0);
	place_state_free(st);
	place_cluster_free(c);
	topo_graph_free(g);
}

static void test_feed_prometheus_down(void **state)
{
	telemetry_config cfg;
	topo_error err;
	topo_graph *g = small_graph();
	logbook book = { 0 };
	telemetry_feed *f;

	(void)state;
	telemetry_config_init(&cfg);
	assert_null(telemetry_feed_new(&cfg, g, 30, log_to_book, &book, &err));
	assert_non_null(strstr(err.text, "telemetry is off: no TelemetryURL"));
	assert_int_equal(telemetry_config_set(&cfg, "TelemetryURL", "http://127.0.0.1:1", &err), 0);
	assert_int_equal(telemetry_config_set(&cfg, "TelemetryRetries", "0", &err), 0);
	f = telemetry_feed_new(&cfg, g, 30, log_to_book, &book, &err);
	assert_non_null(f);
	for (int i = 0; i < 3; i++)
		assert_int_equal(telemetry_feed_poll(f), -1);
	assert_int_equal(book.errors, 1);
	assert_non_null(strstr(book.last, "http://127.0.0.1:1: Prometheus unreachable: "));
	assert_int_equal(telemetry_feed_failures(f), 3);
	telemetry_feed_free(f);
	topo_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rates_and_resets),
		cmocka_unit_test(test_stale_and_skipped),
		cmocka_unit_test(test_malformed_replies),
		cmocka_unit_test(test_snapshot_on_graph),
		cmocka_unit_test(test_apply_to_state),
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_credentials),
		cmocka_unit_test(test_log_once),
		cmocka_unit_test(test_http_local),
		cmocka_unit_test(test_unreachable),
		cmocka_unit_test(test_feed_swap),
		cmocka_unit_test(test_feed_thread),
		cmocka_unit_test(test_feed_prometheus_down),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
