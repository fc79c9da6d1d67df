/*
 * bench/placement: each policy's metrics, and its ratio to `tree` (Slurm's
 * topology/tree), in one run over two scenarios (docs/simulator.md):
 *   1. the real DGX H100 SuperPOD fabric with the KTH SP2 log (1 processor
 *      = 1 host);
 *   2. a generated 2,048-host, 8-rail fat-tree with 2:1 leaf
 *      oversubscription, KTH jobs scaled 16x plus Alibaba's single-host GPU
 *      pods filling the gaps.
 * Job counts are bounded to keep the run to a few minutes on 2 cores.
 *
 *   placement [--quick] [--model FILE] [--jobs1 N] [--jobs2 N] [--policies LIST]
 *
 * --quick: only scenario 1 with its first 1,000 jobs and the shipped model
 * (place_model_file.h): the short version for the README, well under a
 * minute.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "place_model_file.h"
#include "sim.h"

#ifndef TRACES_DIR
#define TRACES_DIR "examples/traces"
#endif
#ifndef FIXTURES_DIR
#define FIXTURES_DIR "tests/fixtures"
#endif

static int scenario(const char *title, const char *kind, const char *arg,
		    const char *const *traces, int ntraces, int jobs, int scale,
		    const char *policies, const char *model, const topo_comm_profile *prof,
		    int nprof)
{
	topo_error err;
	char buf[1024], notes[2048], *list, *save = NULL;
	topo_graph *g = sim_load_graph(kind, arg, &err);
	place_cluster *c = g ? place_cluster_new(g, &err) : NULL;
	sim_metrics m[PLACE_POLICY_COUNT];
	topo_trace t;
	int n = 0, rc = -1;

	if (!c) {
		fprintf(stderr, "placement: %s\n", topo_error_format(&err, buf, sizeof(buf)));
		topo_graph_free(g);
		return -1;
	}
	sim_workload w = {traces, ntraces, jobs, 1, scale, place_cluster_nhosts(c)};
	if (sim_load_workload(&w, &t, notes, sizeof(notes), &err)) {
		fprintf(stderr, "placement: %s\n", topo_error_format(&err, buf, sizeof(buf)));
		goto out;
	}
	printf("== %s\n%d hosts, %d jobs\n%s", title, place_cluster_nhosts(c), t.njobs, notes);
	list = strdup(policies);
	for (char *p = strtok_r(list, ",", &save); p && n < PLACE_POLICY_COUNT;
	     p = strtok_r(NULL, ",", &save)) {
		sim_config cfg;

		sim_config_init(&cfg);
		if (place_policy_parse(p) < 0)
			continue;
		cfg.policy = (place_policy)place_policy_parse(p);
		cfg.profiles = prof;
		cfg.nprofiles = nprof;
		cfg.model_path = model;
		if (sim_run(c, &t, &cfg, &m[n], &err)) {
			fprintf(stderr, "placement: %s: %s\n", p,
				topo_error_format(&err, buf, sizeof(buf)));
			continue;
		}
		n++;
	}
	free(list);
	sim_print_table(stdout, m, n, "tree");
	printf("\n");
	trace_free(&t);
	rc = 0;
out:
	place_cluster_free(c);
	topo_graph_free(g);
	return rc;
}

int main(int argc, char **argv)
{
	const char *model = NULL, *policies = "linear,tree,model,random";
	int jobs1 = 3000, jobs2 = 1500, nprof, quick = 0;
	topo_comm_profile prof[4];
	topo_error err;
	char buf[1024], pol[128], defmodel[4096];
	const char *kth = TRACES_DIR "/KTH-SP2-1996-2.1-cln.swf.gz";
	const char *ali = TRACES_DIR "/alibaba-gpu-v2023-openb_pod_list_default.csv";
	const char *t1[] = {kth}, *t2[] = {kth, ali};

	for (int i = 1; i < argc; i += 2) {
		if (strcmp(argv[i], "--quick") == 0) {
			quick = 1;
			jobs1 = 1000;
			i--;
		} else if (i + 1 >= argc) {
			fprintf(stderr, "placement: %s wants a value\n", argv[i]);
			return 2;
		} else if (strcmp(argv[i], "--model") == 0)
			model = argv[i + 1];
		else if (strcmp(argv[i], "--jobs1") == 0)
			jobs1 = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--jobs2") == 0)
			jobs2 = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--policies") == 0)
			policies = argv[i + 1];
		else {
			fprintf(stderr, "usage: placement [--quick] [--model FILE] [--jobs1 N] [--jobs2 N] [--policies LIST]\n");
			return 2;
		}
	}
	if (quick && !model) {
		if (place_default_model_path(defmodel, sizeof(defmodel))) {
			fprintf(stderr, "placement: the shipped model %s cannot be read\n", defmodel);
			return 1;
		}
		model = defmodel;
	}
	if (model && !strstr(policies, "gnn")) {
		snprintf(pol, sizeof(pol), "%s,gnn", policies);
		policies = pol;
	}
	nprof = sim_load_profiles(FIXTURES_DIR "/comm", prof, 4, &err);
	if (nprof < 0) {
		fprintf(stderr, "placement: %s\n", topo_error_format(&err, buf, sizeof(buf)));
		return 1;
	}
	if (scenario("1. DGX H100 SuperPOD fabric, KTH SP2 log (1 processor = 1 host)",
		     "ibnetdiscover", FIXTURES_DIR "/fabrics/dgx-h100-superpod.ibnetdiscover", t1, 1,
		     jobs1, 1, policies, model, prof, nprof) ||
	    (!quick && scenario("2. generated fat-tree: 2,048 hosts, 8 rails, 2:1 leaf oversubscription; "
		     "KTH x16 + Alibaba single-host pods",
		     "fattree", "groups=16,hosts=128,rails=8,oversub=2", t2, 2, jobs2, 16, policies,
		     model, prof, nprof)))
		return 1;
	return 0;
}
