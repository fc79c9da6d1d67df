/*
 * telemetry: live InfiniBand link utilisation from Prometheus.
 *
 * node_exporter's infiniband collector exports every HCA port's sysfs
 * counters (node_infiniband_port_data_transmitted_bytes_total{device="mlx5_0",
 * port="1"}, error counters, ...); Prometheus scrapes them. This client asks
 * Prometheus's HTTP API (/api/v1/query) for the raw samples of those counters
 * over a short window in ONE request, computes per-port rates itself (so it
 * knows how old the newest sample is and can ignore stale ports), maps each
 * (instance or host label, device, port) to the HCA vertex of a topo_graph
 * and its fabric cable, and turns bytes/s into utilisation of the cable's
 * capacity. Per leaf switch it estimates up-link utilisation from the traffic
 * of the HCAs below it. The placement engine consumes the leaf estimates
 * (telemetry_place.h); admins see the per-link numbers in reports.
 *
 * Failure is normal here: Prometheus may be down, slow or lying. Every call
 * is bounded (connect and total timeouts, a few retries with backoff), every
 * JSON field is checked, and a failure is one topo_error the caller logs
 * once (telemetry_health) while scheduling continues without telemetry.
 *
 * Nothing here knows Slurm. See docs/telemetry.md.
 */
#ifndef TELEMETRY_H
#define TELEMETRY_H

#include <stddef.h>

#include "topo_error.h"
#include "topo_graph.h"

/* The node_exporter counters read, in the order of the per-port arrays. */
typedef enum telemetry_counter {
	TELEMETRY_TX_BYTES = 0,    /* node_infiniband_port_data_transmitted_bytes_total */
	TELEMETRY_RX_BYTES,        /* node_infiniband_port_data_received_bytes_total */
	TELEMETRY_TX_PACKETS,      /* node_infiniband_port_packets_transmitted_total */
	TELEMETRY_RX_PACKETS,      /* node_infiniband_port_packets_received_total */
	TELEMETRY_TX_WAIT,         /* node_infiniband_port_transmit_wait_total (congestion ticks) */
	TELEMETRY_RX_ERRORS,       /* node_infiniband_port_errors_received_total */
	TELEMETRY_RX_DISCARDS,     /* node_infiniband_port_discards_received_total */
	TELEMETRY_TX_DISCARDS,     /* node_infiniband_port_discards_transmitted_total */
	TELEMETRY_LINK_ERROR_RECOVERY, /* node_infiniband_link_error_recovery_total */
	TELEMETRY_LINK_DOWNED,     /* node_infiniband_link_downed_total */
	TELEMETRY_SYMBOL_ERRORS,   /* node_infiniband_symbol_error_total */
	TELEMETRY_LINK_INTEGRITY_ERRORS, /* node_infiniband_local_link_integrity_errors_total */
	TELEMETRY_BUFFER_OVERRUN_ERRORS, /* node_infiniband_excessive_buffer_overrun_errors_total */
	TELEMETRY_NCOUNTERS
} telemetry_counter;

/* Full Prometheus metric name of a counter; NULL for an out-of-range value. */
const char *telemetry_counter_metric(telemetry_counter c);

/* ---- configuration --------------------------------------------------------- */

#define TELEMETRY_STR_LEN 1024

typedef struct telemetry_config {
	char url[TELEMETRY_STR_LEN];   /* Prometheus base URL, "http://prom:9090"; "" = off */
	char credentials_file[TELEMETRY_STR_LEN]; /* "" = no authentication */
	long connect_timeout_ms;   /* default 1000 */
	long timeout_ms;           /* whole request, default 3000 */
	int retries;               /* extra attempts after a failed one, default 2 */
	long backoff_ms;           /* wait before the first retry, doubled each time, default 100 */
	double window_s;           /* rate window, default 60 */
	double max_age_s;          /* ignore ports whose newest sample is older, default 30 */
	size_t max_reply_bytes;    /* refuse longer replies, default 64 MiB */
} telemetry_config;

/* Fill with the defaults above (url and credentials empty). */
void telemetry_config_init(telemetry_config *cfg);

/* Set one option by its topognn.conf key (TelemetryURL, TelemetryCredentialsFile,
 * TelemetryConnectTimeoutMs, TelemetryTimeoutMs, TelemetryRetries,
 * TelemetryBackoffMs, TelemetryWindowSec, TelemetryMaxAgeSec,
 * TelemetryMaxReplyBytes; case-insensitive). Returns 0, or -1 with err filled
 * for an unknown key or a value out of range (cfg unchanged). */
int telemetry_config_set(telemetry_config *cfg, const char *key, const char *value, topo_error *err);

/* ---- credentials ----------------------------------------------------------- */

typedef enum telemetry_auth_kind {
	TELEMETRY_AUTH_NONE = 0,
	TELEMETRY_AUTH_BEARER,  /* "bearer TOKEN" */
	TELEMETRY_AUTH_BASIC    /* "basic USER:PASSWORD" */
} telemetry_auth_kind;

typedef struct telemetry_credentials {
	telemetry_auth_kind kind;
	char secret[TELEMETRY_STR_LEN]; /* the token, or "user:password" */
} telemetry_credentials;

/* Read a credentials file: its first non-blank, non-# line is "bearer TOKEN"
 * or "basic USER:PASSWORD". The file must be a regular file owned by root or
 * by the calling user, and not readable, writable or executable by group or
 * others (mode & 077 == 0); anything else is refused with an error naming the
 * file and its mode. Returns 0 or -1. */
int telemetry_credentials_load(const char *path, telemetry_credentials *out, topo_error *err);

/* Overwrite the secret in memory. */
void telemetry_credentials_wipe(telemetry_credentials *c);

/* ---- the parsed reply: measurements per port, not yet on the graph ---------- */

/* One HCA port as measured. Absent counters are NaN. */
typedef struct telemetry_port_sample {
	char *host;         /* "host" label, else "instance" without ":port" */
	char *device;       /* "mlx5_0" */
	int port;           /* 1-based */
	double last_time;   /* unix time of its newest sample, seconds */
	double rate[TELEMETRY_NCOUNTERS];     /* per second over the window */
	double increase[TELEMETRY_NCOUNTERS]; /* over the window (counter resets handled) */
	double rate_bytes_per_s; /* node_infiniband_rate_bytes_per_second: signalling rate; NaN absent */
} telemetry_port_sample;

typedef struct telemetry_reply {
	size_t nports;
	telemetry_port_sample *ports; /* sorted by (host, device, port) */
	size_t nseries;     /* series in the reply */
	size_t nstale;      /* series dropped: newest sample older than max age */
	size_t nskipped;    /* series dropped: unknown metric, bad labels or values */
} telemetry_reply;

/* Parse the body of a /api/v1/query reply whose result is a matrix (a range
 * selector). `now` is the current unix time; series whose newest sample is
 * more than max_age_s from it are dropped as stale. Never crashes on any
 * input; returns 0, or -1 with err filled ("Prometheus reply: ...") when the
 * reply is not a successful matrix result. `out` is always initialised and
 * must be released with telemetry_reply_free(). */
int telemetry_reply_parse(const char *body, size_t len, double now, double max_age_s,
		      telemetry_reply *out, topo_error *err);
void telemetry_reply_free(telemetry_reply *r);

/* ---- the snapshot: utilisation on the graph --------------------------------- */

/* One HCA cable with measurements. */
typedef struct telemetry_link {
	int hca;            /* HCA vertex id in the graph */
	int edge;           /* its fabric edge id, -1 if the HCA has no cable */
	int leaf;           /* switch vertex at the cable's other end, -1 if none */
	char *name;         /* the HCA vertex name, "node0001/mlx5_0" */
	int port;
	double capacity_gbps; /* the edge's gbps; else the port's signalling rate */
	double tx_gbps, rx_gbps;
	double util;        /* max(tx, rx) / capacity; -1 when capacity unknown */
	double errors[TELEMETRY_NCOUNTERS]; /* increase over the window; NaN absent; bytes and packets too */
	double sample_time;
} telemetry_link;

/* A leaf switch's up-links, loaded by the traffic of the HCAs below it. */
typedef struct telemetry_leaf {
	int sw;             /* switch vertex id */
	char *name;         /* its graph name */
	int nlinks;         /* measured HCA cables below it */
	double up_gbps;     /* capacity of its cables to higher switches (not down) */
	double tx_gbps, rx_gbps; /* sums over the measured HCAs below it */
	double util;        /* max(tx, rx) / up_gbps: assumes all of it leaves the
			     * leaf (an upper bound); -1 when up_gbps is 0 */
} telemetry_leaf;

typedef struct telemetry_snapshot {
	double taken;       /* unix time it was computed for */
	double oldest_sample; /* oldest newest-sample time among links; 0 if none */
	size_t nlinks;
	telemetry_link *links;  /* in reply order */
	size_t nleaves;
	telemetry_leaf *leaves; /* by first appearance */
	size_t nstale, nskipped; /* from the reply */
	size_t nunmapped;   /* ports with no HCA vertex in the graph */
} telemetry_snapshot;

/* Map a parsed reply onto graph g. A port maps to the HCA vertex named
 * "HOST/DEVICE", else to the part of host HOST whose device field is DEVICE
 * (and whose port is PORT or unknown). Returns 0, or -1 when memory runs out. */
int telemetry_snapshot_build(const telemetry_reply *r, const topo_graph *g, double taken,
			 telemetry_snapshot *out, topo_error *err);
void telemetry_snapshot_free(telemetry_snapshot *s);

/* The link of an HCA vertex name, or NULL. */
const telemetry_link *telemetry_snapshot_link(const telemetry_snapshot *s, const char *hca_name);
/* The leaf of a switch name, or NULL. */
const telemetry_leaf *telemetry_snapshot_leaf(const telemetry_snapshot *s, const char *switch_name);

/* ---- the client -------------------------------------------------------------- */

typedef struct telemetry_client telemetry_client;

/* Check the configuration and load credentials (refusing an unsafe file).
 * NULL with err filled on failure. */
telemetry_client *telemetry_client_new(const telemetry_config *cfg, topo_error *err);
void telemetry_client_free(telemetry_client *c);

/* The PromQL the client sends, e.g.
 * {__name__=~"node_infiniband_(port_data_transmitted_bytes_total|...)"}[60000ms].
 * Returns the length written (truncated to len), like snprintf. */
int telemetry_query_text(const telemetry_config *cfg, char *buf, size_t len);

/* Ask Prometheus and parse the reply (with retries). Returns 0 or -1 with
 * err filled, e.g. "Prometheus at http://x:9090 unreachable after 3 attempts:
 * Couldn't connect to server". */
int telemetry_client_fetch(telemetry_client *c, double now, telemetry_reply *out, topo_error *err);

/* fetch + snapshot_build for the current time. */
int telemetry_fetch_snapshot(telemetry_client *c, const topo_graph *g, telemetry_snapshot *out,
			 topo_error *err);

/* ---- log once ------------------------------------------------------------- */

/* Tracks whether telemetry works so a caller logs the first failure and the
 * recovery, not every failed fetch. Zero-initialise. */
typedef struct telemetry_health {
	int down;                 /* last fetch failed */
	unsigned long failures;   /* consecutive failures */
	unsigned long suppressed; /* failures not logged since the last log */
} telemetry_health;

typedef enum telemetry_log_action {
	TELEMETRY_LOG_NONE = 0,      /* nothing new: do not log */
	TELEMETRY_LOG_DOWN,          /* first failure: log err, say scheduling continues without telemetry */
	TELEMETRY_LOG_RECOVERED      /* first success after failures: log that it is back */
} telemetry_log_action;

/* Record the outcome of a fetch (ok = 1 success) and say what to log. */
telemetry_log_action telemetry_health_update(telemetry_health *h, int ok);

#endif
