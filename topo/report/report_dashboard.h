/*
 * report_dashboard: the Grafana dashboard (contrib/grafana/topognn.json) as
 * one static, self-contained HTML page, for someone without Grafana: the
 * same panels, by title and in order, drawn as inline SVG (no script, no
 * external file) from a decision log, the cluster graph and node reports.
 *
 * The log's time span is cut into bins. A panel that Grafana draws from a
 * counter's increase shows the count in each bin; one drawn from a gauge
 * shows the value `placement-report metrics` would have exported at the
 * bin's end (the statistics of the log up to then, the jobs running then).
 * Panels of "now" (by group, by node) are bar charts of the log's end.
 */
#ifndef REPORT_DASHBOARD_H
#define REPORT_DASHBOARD_H

#include <stdio.h>

#include "place.h"
#include "report_log.h"
#include "report_node.h"

#define REPORT_DASHBOARD_PANELS 16
/* The panel titles, as in contrib/grafana/topognn.json (ids 1..16). */
extern const char *const report_dashboard_titles[REPORT_DASHBOARD_PANELS];

typedef struct report_dashboard_opts {
	const char *source;  /* said under the page title (e.g. the log's path); NULL none */
	int bins;            /* time bins, 2..200 (0: 48) */
} report_dashboard_opts;

/* Write the page to f. c (the cluster, for occupancy and fragmentation) and
 * nodes (the node side) may be NULL: their panels then say what is missing.
 * Returns 0, or -1 on a write error or when memory runs out. */
int report_dashboard_write(FILE *f, const report_log *log, const place_cluster *c,
			   const report_node_summary *nodes, const report_dashboard_opts *opts);

#endif
