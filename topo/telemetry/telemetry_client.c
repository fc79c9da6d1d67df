/*
 * telemetry_client: the HTTP side of the Prometheus client: the query,
 * the request through http_client (http/https only, every option checked),
 * retries with capped backoff, and the log-once health state.
 */
#define _GNU_SOURCE
#include "telemetry_internal.h"

#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http_client.h"

/* ---- HTTP client ------------------------------------------------------------- */

struct telemetry_client {
	telemetry_config cfg;
	telemetry_credentials cred;
	CURL *curl;
	struct curl_slist *headers;
	http_body body;
};

int telemetry_query_text(const telemetry_config *cfg, char *buf, size_t len)
{
	char names[1024];
	size_t off = 0;

	names[0] = 0;
	for (int i = 0; i < NMETRICS && off < sizeof(names); i++)
		off += (size_t)snprintf(names + off, sizeof(names) - off, "%s%s", i ? "|" : "",
					telemetry_metric_name[i] + strlen(METRIC_PREFIX));
	return snprintf(buf, len, "{__name__=~\"" METRIC_PREFIX "(%s)\"}[%lldms]", names,
			(long long)llround(cfg->window_s * 1000));
}

telemetry_client *telemetry_client_new(const telemetry_config *cfg, topo_error *err)
{
	telemetry_client *c;

	if (!cfg->url[0] || http_check_url(cfg->url, "TelemetryURL", HTTP_PLAIN_REMOTE, err)) {
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
	if (cfg->credentials_file[0] && telemetry_credentials_load(cfg->credentials_file, &c->cred, err)) {
		free(c);
		return NULL;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK || !(c->curl = curl_easy_init())) {
		topo_error_set(err, "", 0, "cannot initialise libcurl");
		telemetry_credentials_wipe(&c->cred);
		free(c);
		return NULL;
	}
	return c;
}

void telemetry_client_free(telemetry_client *c)
{
	if (!c)
		return;
	curl_easy_cleanup(c->curl);
	curl_global_cleanup();
	curl_slist_free_all(c->headers);
	telemetry_credentials_wipe(&c->cred);
	http_body_free(&c->body);
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
static char *request_url(telemetry_client *c, double now)
{
	char query[2048], *esc, *url = NULL;
	size_t blen = strlen(c->cfg.url);

	while (blen && c->cfg.url[blen - 1] == '/')
		blen--;
	telemetry_query_text(&c->cfg, query, sizeof(query));
	if (!(esc = curl_easy_escape(c->curl, query, 0)))
		return NULL;
	if (asprintf(&url, "%.*s/api/v1/query?query=%s&time=%.3f", (int)blen, c->cfg.url, esc, now) < 0)
		url = NULL;
	curl_free(esc);
	return url;
}

static int setup_request(telemetry_client *c, const char *url, char *errbuf)
{
	http_get rq = { url, NULL, NULL, NULL, c->cfg.connect_timeout_ms, c->cfg.timeout_ms,
			     errbuf };

	if (c->cred.kind == TELEMETRY_AUTH_BEARER && !c->headers) {
		char hdr[TELEMETRY_STR_LEN + 32];

		snprintf(hdr, sizeof(hdr), "Authorization: Bearer %s", c->cred.secret);
		c->headers = curl_slist_append(NULL, hdr);
		memset(hdr, 0, sizeof(hdr));
		if (!c->headers)
			return -1;
	}
	rq.headers = c->headers;
	if (c->cred.kind == TELEMETRY_AUTH_BASIC)
		rq.basic_userpwd = c->cred.secret;
	return http_setup(c->curl, &rq, &c->body);
}

/* Prometheus's own error text from a non-200 JSON reply, or "". */
static void server_error_text(const telemetry_client *c, char *buf, size_t len)
{
	json_t *root = c->body.len ? json_loadb(c->body.p, c->body.len, 0, NULL) : NULL;
	const char *msg = root ? telemetry_json_label(root, "error") : NULL;

	snprintf(buf, len, "%s%.300s", msg ? ": " : "", msg ? msg : "");
	json_decref(root);
}

int telemetry_client_fetch(telemetry_client *c, double now, telemetry_reply *out, topo_error *err)
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
		http_body_reset(&c->body);
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
			if (telemetry_reply_parse(c->body.p ? c->body.p : "", c->body.len, now, c->cfg.max_age_s, out, err)) {
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

int telemetry_fetch_snapshot(telemetry_client *c, const topo_graph *g, telemetry_snapshot *out, topo_error *err)
{
	telemetry_reply r;
	double now = now_s();
	int rc;

	memset(out, 0, sizeof(*out));
	if (telemetry_client_fetch(c, now, &r, err))
		return -1;
	rc = telemetry_snapshot_build(&r, g, now, out, err);
	telemetry_reply_free(&r);
	return rc;
}

/* ---- log once --------------------------------------------------------------- */

telemetry_log_action telemetry_health_update(telemetry_health *h, int ok)
{
	if (ok) {
		int was_down = h->down;

		h->down = 0;
		h->failures = 0;
		h->suppressed = 0;
		return was_down ? TELEMETRY_LOG_RECOVERED : TELEMETRY_LOG_NONE;
	}
	h->failures++;
	if (h->down) {
		h->suppressed++;
		return TELEMETRY_LOG_NONE;
	}
	h->down = 1;
	return TELEMETRY_LOG_DOWN;
}
