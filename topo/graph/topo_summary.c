/* topo_summary: counts and tables describing a cluster graph (see topo_summary.h). */
#include "topo_summary.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "topo_num.h"

void topo_summary_compute(const topo_graph *g, topo_summary *s)
{
	size_t n = topo_graph_nvertices(g);

	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < n; i++) {
		const topo_vertex *v = topo_graph_vertex(g, (int)i);
		const char *os;
		double r;

		switch (v->kind) {
		case TOPO_V_HOST: s->hosts++; break;
		case TOPO_V_GPU: s->gpus++; break;
		case TOPO_V_NUMA: s->numas++; break;
		case TOPO_V_GROUP: s->groups++; break;
		case TOPO_V_HCA:
			if (v->link_layer == TOPO_LL_ETH)
				s->nics++;
			else
				s->hcas++;
			break;
		case TOPO_V_SWITCH:
			s->switches++;
			s->leaf_switches += v->level == TOPO_LEVEL_LEAF;
			s->spine_switches += v->level == TOPO_LEVEL_SPINE;
			s->core_switches += v->level == TOPO_LEVEL_CORE;
			s->sharp_switches += (v->caps & TOPO_CAP_SHARP) != 0;
			os = topo_graph_get_attr(g, (int)i, "oversubscription");
			if (os && topo_parse_double(os, 0, HUGE_VAL, &r) == 0) {
				if (s->oversub_min == 0 || r < s->oversub_min)
					s->oversub_min = r;
				if (r > s->oversub_max)
					s->oversub_max = r;
			}
			break;
		default:
			break;
		}
	}
	s->links = topo_graph_count_edges(g, TOPO_E_FABRIC);
	s->anomalies = topo_graph_nanomalies(g);
}

/* Hosts and leaf switches that are members of group `grp`. */
static void group_counts(const topo_graph *g, int grp, size_t *hosts, size_t *leaves)
{
	*hosts = (size_t)topo_graph_count_members(g, grp, TOPO_V_HOST);
	*leaves = (size_t)topo_graph_count_members(g, grp, TOPO_V_SWITCH);
}

/* Anomalies grouped by kind (they arrive sorted by kind after
 * canonicalization; otherwise a kind may show up in several runs), at most
 * ANOMALIES_SHOWN of each kind, so 70 unnamed HCAs do not drown the rest. */
#define ANOMALIES_SHOWN 3

static void print_anomalies(const topo_graph *g, FILE *out)
{
	size_t n = topo_graph_nanomalies(g);

	for (size_t i = 0; i < n;) {
		const char *kind = topo_graph_anomaly(g, i)->kind;
		size_t j = i;

		while (j < n && strcmp(topo_graph_anomaly(g, j)->kind, kind) == 0)
			j++;
		fprintf(out, "  %s (%zu)\n", kind, j - i);
		for (size_t k = i; k < j && k < i + ANOMALIES_SHOWN; k++)
			fprintf(out, "    %s\n", topo_graph_anomaly(g, k)->text);
		if (j - i > ANOMALIES_SHOWN)
			fprintf(out, "    ... and %zu more (the graph file, --json, lists them all)\n",
				j - i - ANOMALIES_SHOWN);
		i = j;
	}
}

void topo_summary_print(const topo_graph *g, FILE *out)
{
	topo_summary s;
	size_t n = topo_graph_nvertices(g);

	topo_summary_compute(g, &s);
	fprintf(out, "%-22s %8s\n", "kind", "count");
	fprintf(out, "%-22s %8zu\n", "hosts", s.hosts);
	fprintf(out, "%-22s %8zu\n", "gpus", s.gpus);
	fprintf(out, "%-22s %8zu\n", "hcas (InfiniBand)", s.hcas);
	fprintf(out, "%-22s %8zu\n", "nics (Ethernet)", s.nics);
	fprintf(out, "%-22s %8zu\n", "switches", s.switches);
	fprintf(out, "%-22s %8zu\n", "  leaf", s.leaf_switches);
	fprintf(out, "%-22s %8zu\n", "  spine", s.spine_switches);
	fprintf(out, "%-22s %8zu\n", "  core", s.core_switches);
	fprintf(out, "%-22s %8zu\n", "  with SHARP", s.sharp_switches);
	fprintf(out, "%-22s %8zu\n", "fabric links", s.links);
	fprintf(out, "%-22s %8zu\n", "groups", s.groups);
	if (s.oversub_max > 0)
		fprintf(out, "%-22s %4.2f..%.2f\n", "leaf oversubscription", s.oversub_min,
			s.oversub_max);
	if (s.groups) {
		fprintf(out, "\n%-22s %8s %8s\n", "group", "hosts", "leaves");
		for (size_t i = 0; i < n; i++) {
			size_t hosts, leaves;

			if (topo_graph_vertex(g, (int)i)->kind != TOPO_V_GROUP)
				continue;
			group_counts(g, (int)i, &hosts, &leaves);
			fprintf(out, "%-22s %8zu %8zu\n", topo_graph_vertex(g, (int)i)->name, hosts,
				leaves);
		}
	}
	fprintf(out, "\nanomalies: %zu\n", s.anomalies);
	print_anomalies(g, out);
}

json_t *topo_summary_json(const topo_graph *g)
{
	topo_summary s;
	json_t *o, *groups = json_object(), *kinds = json_object();
	size_t n = topo_graph_nvertices(g);

	topo_summary_compute(g, &s);
	for (size_t i = 0; groups && i < n; i++) {
		size_t hosts, leaves;

		if (topo_graph_vertex(g, (int)i)->kind != TOPO_V_GROUP)
			continue;
		group_counts(g, (int)i, &hosts, &leaves);
		json_object_set_new(groups, topo_graph_vertex(g, (int)i)->name,
				    json_integer((json_int_t)hosts));
	}
	for (size_t i = 0; kinds && i < s.anomalies; i++) {
		const char *k = topo_graph_anomaly(g, i)->kind;
		json_t *c = json_object_get(kinds, k);

		json_object_set_new(kinds, k, json_integer(c ? json_integer_value(c) + 1 : 1));
	}
	o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I,"
		      " s:o, s:o, s:{s:f, s:f}}",
		      "hosts", (json_int_t)s.hosts, "gpus", (json_int_t)s.gpus, "hcas",
		      (json_int_t)s.hcas, "nics", (json_int_t)s.nics, "switches",
		      (json_int_t)s.switches, "leaf_switches", (json_int_t)s.leaf_switches,
		      "spine_switches", (json_int_t)s.spine_switches, "core_switches",
		      (json_int_t)s.core_switches, "sharp_switches", (json_int_t)s.sharp_switches,
		      "groups", (json_int_t)s.groups, "links", (json_int_t)s.links, "anomalies",
		      (json_int_t)s.anomalies, "group_hosts", groups, "anomaly_kinds", kinds,
		      "oversubscription", "min", s.oversub_min, "max", s.oversub_max);
	return o;
}
