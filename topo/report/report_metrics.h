/*
 * report_metrics: topognn's own metrics in the Prometheus text exposition
 * format (version 0.0.4), for a textfile collector or a scrape endpoint:
 * decisions by policy, failures and fallbacks, the decision latency
 * histogram, shadow-mode agreement and cost, predicted vs realised slowdown,
 * (when the cluster is known) occupancy and fragmentation, and the node
 * side's IRQ audit and enforcement from its reports. Every metric
 * is documented in docs/metrics.md.
 */
#ifndef REPORT_METRICS_H
#define REPORT_METRICS_H

#include <stdio.h>

#include "report_cluster.h"
#include "report_history.h"
#include "report_log.h"
#include "report_node.h"

/* Write the metrics of st, computed from log (NULL: no log, e.g. only
 * slurmrestd), and of o when not NULL, to f. Metrics of the last day (up
 * to the log's newest line) come from log itself. Returns 0, or -1 on a
 * write error or when memory runs out. */
int report_metrics_write(FILE *f, const report_stats *st, const report_log *log,
			 const report_occupancy *o);

/* Write the node side's metrics (from its reports, report_node_summarise)
 * to f. Returns 0, or -1 on a write error. */
int report_metrics_write_nodes(FILE *f, const report_node_summary *s);

#endif
