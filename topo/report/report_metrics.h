/*
 * report_metrics: topognn's own metrics in the Prometheus text exposition
 * format (version 0.0.4), for a textfile collector or a scrape endpoint:
 * decisions by policy, failures and fallbacks, the decision latency
 * histogram, shadow-mode agreement and cost, predicted vs realised slowdown,
 * and (when the cluster is known) occupancy and fragmentation. Every metric
 * is documented in docs/metrics.md.
 */
#ifndef REPORT_METRICS_H
#define REPORT_METRICS_H

#include <stdio.h>

#include "report_cluster.h"
#include "report_history.h"

/* Write the metrics of st (and of o when not NULL; skipped_lines is the
 * log's count of unreadable lines) to f. Returns 0, or -1 on a write error. */
int report_metrics_write(FILE *f, const report_stats *st, const report_occupancy *o,
			 int skipped_lines);

#endif
