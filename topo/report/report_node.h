/*
 * report_node: the node side's outcome for a job (which NIC, CPUs and IRQ
 * steering each host really got), read back for placement-report job.
 *
 * The node side (topognn-bind / the SPANK plugin) leaves one JSON object per
 * job and host in a report directory, named <jobid>.<host>.json. The reader
 * is tolerant on purpose (the node side's schema is still settling): every
 * top-level member is kept as a key and a value rendered as text (strings
 * as they are, anything else as compact JSON), in file order.
 */
#ifndef REPORT_NODE_H
#define REPORT_NODE_H

#include <stdint.h>

#include "topo_error.h"

typedef struct report_node_outcome {
	char *host;
	int nkeys;
	char **keys, **values;
	char *problem; /* NULL, or why the file could not be read (kept, not fatal) */
} report_node_outcome;

/* The outcomes of job in dir, sorted by host. Returns the count (0: none),
 * or -1 with err when dir cannot be read or memory runs out. */
int report_node_load(const char *dir, uint32_t job, report_node_outcome **out, topo_error *err);

void report_node_free(report_node_outcome *o, int n);

#endif
