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

topo_graph *topo_sim_load_graph(const char *kind, const char *arg, topo_error *err)
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

int topo_sim_load_profiles(const char *dir, topo_comm_profile *out, int max, topo_error *err)
{
	static const char *const files[] = {"astra-sim_Resnet50_DataParallel.txt",
					    "astra-sim_Transformer_HybridParallel.txt"};
	int n = 0;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]) && n < max; i++) {
		char path[1024];

		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		if (topo_comm_profile_load(&out[n], path, err))
			return -1;
		n++;
	}
	return n;
}
