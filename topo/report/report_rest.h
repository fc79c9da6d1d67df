/*
 * report_rest: the live cluster as slurmrestd sees it (running jobs
 * and their nodes, node states), for placement-report. Plain HTTP + JSON
 * (libcurl, jansson): no Slurm header, so it lives in libtopo.
 *
 * Endpoints of Slurm 24.11's data parser v0.0.42: GET /slurm/v0.0.42/jobs
 * and /slurm/v0.0.42/nodes. Authentication: the JWT in the
 * X-SLURM-USER-TOKEN header (and the user name in X-SLURM-USER-NAME when
 * given). The base URL is "https://host:port", "unix:/path/to/socket", or
 * "http://localhost:port" (see report_rest_fetch). The HTTP side is
 * http_client's: http/https only, no redirects, every option checked.
 * Requests time out (connect 5 s, whole request 20 s); nothing is retried,
 * so an unreachable server costs the report at most that.
 */
#ifndef REPORT_REST_H
#define REPORT_REST_H

#include <stddef.h>
#include <stdint.h>

#include "topo_error.h"

#define REPORT_REST_API "v0.0.42"

typedef struct report_rest_job {
	uint32_t job;
	char name[64];
	char partition[64];
	char state[24];      /* first job_state flag: "RUNNING", "PENDING", ... */
	int running;
	char **hosts;        /* expanded from "nodes" */
	int nhosts;
} report_rest_job;

typedef struct report_rest_node {
	char name[128];
	char state[64];      /* flags joined with '+', e.g. "IDLE+DRAIN" */
	unsigned flags;      /* PLACE_HOST_DOWN / PLACE_HOST_DRAIN */
} report_rest_node;

typedef struct report_rest_snapshot {
	report_rest_job *jobs;
	int njobs;
	report_rest_node *nodes;
	int nnodes;
} report_rest_snapshot;

/* report_rest_fetch flag: allow plain http:// to another host (the JWT then
 * crosses the network unencrypted; placement-report --allow-plain-http). */
#define REPORT_REST_PLAIN_HTTP 0x1u

/* Fetch jobs and nodes from the slurmrestd at base_url with token (may be
 * NULL: no auth header) and user (may be NULL). base_url is https://,
 * unix:/path, or http:// to this machine (another host with
 * REPORT_REST_PLAIN_HTTP); any other scheme is refused before anything is
 * sent. Returns 0, or -1 with err naming the URL and the problem (refused
 * URL, unreachable, HTTP status and slurmrestd's error text, unreadable
 * reply). */
int report_rest_fetch(const char *base_url, const char *token, const char *user,
		      unsigned flags, report_rest_snapshot *s, topo_error *err);

/* Parse a /jobs or /nodes reply body into s (appending). source names it in
 * errors. Returns 0, or -1 with err. */
int report_rest_parse_jobs(const char *body, size_t len, const char *source,
			   report_rest_snapshot *s, topo_error *err);
int report_rest_parse_nodes(const char *body, size_t len, const char *source,
			    report_rest_snapshot *s, topo_error *err);

void report_rest_free(report_rest_snapshot *s);

#endif
