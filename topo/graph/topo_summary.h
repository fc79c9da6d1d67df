/*
 * topo_summary: what an admin wants to see first about a discovered cluster:
 * counts per kind and switch level, groups with their host counts, leaf
 * oversubscription and anomalies, as a readable table or as JSON.
 */
#ifndef TOPO_SUMMARY_H
#define TOPO_SUMMARY_H

#include <jansson.h>
#include <stdio.h>

#include "topo_graph.h"

typedef struct topo_summary {
	size_t hosts, gpus, hcas, nics, numas;
	size_t switches, leaf_switches, spine_switches, core_switches, sharp_switches;
	size_t groups, links, anomalies;
	double oversub_min, oversub_max; /* over leaves with an "oversubscription" attr; 0 if none */
} topo_summary;

void topo_summary_compute(const topo_graph *g, topo_summary *s);

/* The readable table. */
void topo_summary_print(const topo_graph *g, FILE *out);

/* One JSON object: integer keys hosts, gpus, hcas, nics, switches, leaf_switches,
 * spine_switches, core_switches, sharp_switches, groups, links, anomalies; plus
 * "group_hosts" {name: count}, "anomaly_kinds" {kind: count} and
 * "oversubscription" {"min", "max"}. NULL when memory runs out. */
json_t *topo_summary_json(const topo_graph *g);

#endif
