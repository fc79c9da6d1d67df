/*
 * sim_inputs: what topognn-sim and bench/placement both load before a run:
 * the cluster graph from one of its three sources, and the workload (a
 * trace with processors mapped to hosts). One place, so the tool and the
 * benchmark cannot drift apart.
 */
#include "sim.h"

#include <stdlib.h>
#include <string.h>

#include "topo_fattree.h"
#include "topo_ibnetdiscover.h"
#include "topo_json.h"

topo_graph *sim_load_graph(const char *kind, const char *arg, topo_error *err)
{
	topo_graph *g = topo_graph_new();
	int rc = -1;

	if (!g) {
		topo_error_set(err, arg, 0, "out of memory");
		return NULL;
	}
	if (strcmp(kind, "ibnetdiscover") == 0) {
		rc = topo_load_ibnetdiscover(g, arg, NULL, err);
	} else if (strcmp(kind, "graph") == 0) {
		rc = topo_load_json(g, arg, err);
	} else if (strcmp(kind, "fattree") == 0) {
		topo_fattree_spec spec;

		topo_fattree_spec_init(&spec);
		rc = topo_fattree_parse(arg, &spec, err);
		if (rc == 0)
			rc = topo_fattree_build(g, &spec, err);
	} else {
		topo_error_set(err, "", 0, "unknown graph source \"%s\"", kind);
	}
	if (rc == 0 && topo_graph_count(g, TOPO_V_HOST) == 0) {
		topo_error_set(err, arg, 0, "the fabric has no hosts to place jobs on");
		rc = -1;
	}
	if (rc != 0) {
		topo_graph_free(g);
		return NULL;
	}
	return g;
}

int sim_load_profiles(const char *dir, sim_comm_profile *out, int max, topo_error *err)
{
	static const char *const files[] = {"astra-sim_Resnet50_DataParallel.txt",
					    "astra-sim_Transformer_HybridParallel.txt"};
	int n = 0;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]) && n < max; i++) {
		char path[1024];

		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		if (sim_comm_profile_load(&out[n], path, err))
			return -1;
		n++;
	}
	return n;
}

/* A later trace fills the gaps of the first: its submissions are spread
 * over the first one's period and jobs longer than the first's longest run
 * are left out (docs/simulator.md). */
static int fill_gaps(const topo_trace *first, topo_trace *t)
{
	double span = first->njobs ? first->jobs[first->njobs - 1].submit : 0, longest = 0;

	for (int i = 0; i < first->njobs; i++)
		if (first->jobs[i].runtime > longest)
			longest = first->jobs[i].runtime;
	return trace_fit_window(t, span, longest);
}

int sim_load_workload(const sim_workload *w, topo_trace *out, char *notes,
			   size_t len, topo_error *err)
{
	size_t used = 0;

	trace_init(out);
	if (notes && len)
		notes[0] = '\0';
	for (int i = 0; i < w->ntraces; i++) {
		topo_trace one;
		int dropped, longer = 0;

		trace_init(&one);
		if (trace_load(&one, w->traces[i], err)) {
			trace_free(out);
			return -1;
		}
		if (i == 0)
			trace_truncate(&one, w->jobs);
		else
			longer = fill_gaps(out, &one);
		dropped = trace_map_hosts(&one, w->procs_per_host, w->scale, w->nhosts, 1);
		if (notes && used < len && (dropped || longer))
			used += (size_t)snprintf(notes + used, len - used,
						 "%s: %d jobs wider than the %d hosts and %d longer than "
						 "the first trace's longest run left out\n",
						 w->traces[i], dropped, w->nhosts, longer);
		if (trace_merge(out, &one, 0)) {
			trace_free(&one);
			trace_free(out);
			topo_error_set(err, w->traces[i], 0, "out of memory");
			return -1;
		}
		out->skipped += one.skipped;
		trace_free(&one);
	}
	return 0;
}
