/*
 * telemetry_config: the TelemetryXxx= keys of topognn.conf and the
 * credentials file (owner, mode and content checked) (see telemetry.h).
 */
#define _GNU_SOURCE
#include "telemetry_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "http_client.h"
#include "topo_io.h"
#include "topo_num.h"

/* Metric names, in telemetry_counter order, then the gauge. */
const char *const telemetry_metric_name[NMETRICS] = {
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


const char *telemetry_counter_metric(telemetry_counter c)
{
	return (int)c >= 0 && c < TELEMETRY_NCOUNTERS ? telemetry_metric_name[c] : NULL;
}


/* ---- configuration --------------------------------------------------------- */

/* The defaults in docs/telemetry.md's option table; everything else off. */
static const telemetry_config default_config = {
	.connect_timeout_ms = 1000, .timeout_ms = 3000, /* one attempt */
	.retries = 2, .backoff_ms = 100,
	.window_s = 60, .max_age_s = 30, /* what a reply's samples may cover */
	.max_reply_bytes = (size_t)64 << 20,
};

void telemetry_config_init(telemetry_config *cfg)
{
	*cfg = default_config;
}

int telemetry_config_set(telemetry_config *cfg, const char *key, const char *value, topo_error *err)
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

		if (strlen(value) >= TELEMETRY_STR_LEN) {
			topo_error_set(err, "", 0, "%s is longer than %d characters", key, TELEMETRY_STR_LEN - 1);
			return -1;
		}
		if (is_url && *value && http_check_url(value, key, HTTP_PLAIN_REMOTE, err))
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

void telemetry_credentials_wipe(telemetry_credentials *c)
{
	volatile char *p = c->secret;

	for (size_t i = 0; i < sizeof(c->secret); i++)
		p[i] = 0;
	c->kind = TELEMETRY_AUTH_NONE;
}

static int credentials_parse(const char *path, char *buf, telemetry_credentials *out, topo_error *err)
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
			out->kind = TELEMETRY_AUTH_BEARER;
		else if (!strcasecmp(word, "basic"))
			out->kind = TELEMETRY_AUTH_BASIC;
		else {
			topo_error_set(err, path, lineno, "unknown authentication \"%.40s\"; use bearer or basic", word);
			return -1;
		}
		if (!*secret || strpbrk(secret, " \t") || strlen(secret) >= sizeof(out->secret) ||
		    (out->kind == TELEMETRY_AUTH_BASIC && !strchr(secret, ':'))) {
			topo_error_set(err, path, lineno, out->kind == TELEMETRY_AUTH_BASIC
				       ? "basic needs one USER:PASSWORD word"
				       : "bearer needs one token word");
			out->kind = TELEMETRY_AUTH_NONE;
			return -1;
		}
		strcpy(out->secret, secret);
		return 0;
	}
	topo_error_set(err, path, 0, "no credentials line in the file");
	return -1;
}

int telemetry_credentials_load(const char *path, telemetry_credentials *out, topo_error *err)
{
	char buf[4 * TELEMETRY_STR_LEN];
	struct stat st;
	ssize_t n;
	size_t len = 0;
	int fd, rc;

	memset(out, 0, sizeof(*out));
	fd = topo_open_input(path, TOPO_OPEN_NOFOLLOW, 0, err);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0) {
		topo_error_set(err, path, 0, "cannot stat the credentials file: %s", strerror(errno));
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

