/*
 * telemetry_internal: what the telemetry client's files share (not
 * installed). The client is four files, one job each:
 *   telemetry_config.c  TelemetryXxx= keys and the credentials file
 *   telemetry_reply.c   Prometheus's JSON reply -> rates per port (fuzzed)
 *   telemetry_map.c     rates per port -> links and leaves of the graph
 *   telemetry_client.c  the HTTP request (http_client), retries, log-once
 */
#ifndef TELEMETRY_INTERNAL_H
#define TELEMETRY_INTERNAL_H

#include <jansson.h>

#include "telemetry.h"

#define METRIC_PREFIX "node_infiniband_"
#define RATE_GAUGE (TELEMETRY_NCOUNTERS) /* series index of rate_bytes_per_second */
#define NMETRICS (TELEMETRY_NCOUNTERS + 1)
#define MAX_HOST_LEN 255
#define MAX_DEVICE_LEN 64
#define MAX_IB_PORT 255
#define MAX_BACKOFF_MS 10000L


/* Metric names, in telemetry_counter order, then the rate gauge. */
extern const char *const telemetry_metric_name[NMETRICS];

/* The string value of `key` in a JSON object; NULL when absent or not a string. */
const char *telemetry_json_label(json_t *metric, const char *key);

#endif
