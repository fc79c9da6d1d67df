/*
 * topognn-sim: replay a job trace on a fabric under several placement
 * policies and compare them (docs/simulator.md).
 *
 *   topognn-sim --ibnetdiscover FILE | --graph FILE | --fattree SPEC
 *               --trace FILE [--trace FILE2] [--policies linear,tree,model,gnn]
 *               [--jobs N] [--seed S] [--scale K] [--json] [--model FILE]
 *               [--emit-training FILE]
 *
 * Exit status: 0 success, 1 a file could not be read or a run failed, 2 bad
 * options.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "place_model_file.h"
#include "sim.h"
#include "topo_num.h"
#include "sim_samples.h"

#define SIM_MAX_POLICIES (PLACE_POLICY_COUNT + 2)

#ifndef TOPOGNN_COMM_DIR
#define TOPOGNN_COMM_DIR "comm"
#endif

#define MAX_TRACES 4

struct opts {
	const char *graph_kind, *graph_arg;
	const char *traces[MAX_TRACES];
	int ntraces;
	const char *policies, *model, *emit, *comm_dir, *decision_log, *holds;
	char comm_buf[4096];
	int jobs, scale, procs_per_host, json, progress, gpus, depth, train_every;
	unsigned seed;
	double wait_frac, wait_cap_s; /* --locality-wait */
	double sharp_share;           /* --sharp-share */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: topognn-sim (--ibnetdiscover FILE | --graph FILE | --fattree SPEC)\n"
		"                   --trace FILE [--trace FILE] [--policies linear,tree,model,gnn,lookahead]\n"
		"                   [--jobs N] [--seed S] [--scale K] [--procs-per-host N]\n"
		"                   [--gpus-per-host N] [--backfill-depth N] [--comm DIR]\n"
		"                   [--model FILE] [--emit-training FILE] [--train-every N]\n"
		"                   [--json] [--progress] [--decision-log FILE] [--emit-holds FILE]\n"
		"                   [--locality-wait FRAC[,CAP]] [--sharp-share F]\n");
}

static int parse_int(const char *s, int lo, int *out)
{
	return topo_parse_int(s, lo, 1000000000, out);
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{"ibnetdiscover", 1, 0, 'i'}, {"graph", 1, 0, 'g'}, {"fattree", 1, 0, 'f'},
		{"trace", 1, 0, 't'}, {"policies", 1, 0, 'p'}, {"jobs", 1, 0, 'n'},
		{"seed", 1, 0, 's'}, {"scale", 1, 0, 'k'}, {"procs-per-host", 1, 0, 'P'},
		{"gpus-per-host", 1, 0, 'G'}, {"backfill-depth", 1, 0, 'b'}, {"comm", 1, 0, 'c'},
		{"model", 1, 0, 'm'}, {"emit-training", 1, 0, 'e'}, {"json", 0, 0, 'j'},
		{"progress", 0, 0, 'r'}, {"train-every", 1, 0, 'T'}, {"decision-log", 1, 0, 'd'},
		{"locality-wait", 1, 0, 'w'}, {"sharp-share", 1, 0, 'S'}, {"help", 0, 0, 'h'},
		{"emit-holds", 1, 0, 'H'},
		{0, 0, 0, 0}};
	int c, v;

	memset(o, 0, sizeof(*o));
	o->policies = "linear,tree,model";
	/* the shipped profiles: tests/fixtures/comm, installed as $(pkgdatadir)/comm */
	if (place_data_path("tests/fixtures", "comm", o->comm_buf, sizeof(o->comm_buf)) == 0)
		o->comm_dir = o->comm_buf;
	else
		o->comm_dir = "comm";
	o->scale = o->procs_per_host = 1;
	o->gpus = 8;
	o->depth = 100;
	o->seed = 1;
	/* the plugin's LocalityWait= default, so the simulator shows what an
	 * admin gets (and tree-switches asks for the same budget) */
	o->wait_frac = PLACE_LOCALITY_WAIT_FRAC_DEFAULT;
	o->wait_cap_s = PLACE_LOCALITY_WAIT_CAP_S_DEFAULT;
	o->progress = isatty(STDERR_FILENO);
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'i': case 'g': case 'f':
			if (o->graph_kind) {
				fprintf(stderr, "topognn-sim: give one of --ibnetdiscover, --graph, --fattree\n");
				return -1;
			}
			o->graph_kind = c == 'i' ? "ibnetdiscover" : c == 'g' ? "graph" : "fattree";
			o->graph_arg = optarg;
			break;
		case 't':
			if (o->ntraces == MAX_TRACES) {
				fprintf(stderr, "topognn-sim: at most %d --trace files\n", MAX_TRACES);
				return -1;
			}
			o->traces[o->ntraces++] = optarg;
			break;
		case 'p': o->policies = optarg; break;
		case 'c': o->comm_dir = optarg; break;
		case 'm': o->model = optarg; break;
		case 'e': o->emit = optarg; break;
		case 'd': o->decision_log = optarg; break;
		case 'H': o->holds = optarg; break;
		case 'j': o->json = 1; break;
		case 'w': {
			char why[256];

			if (place_locality_wait_parse(optarg, &o->wait_frac, &o->wait_cap_s, why,
						      sizeof(why))) {
				fprintf(stderr, "topognn-sim: --locality-wait: %s\n", why);
				return -1;
			}
			break;
		}
		case 'S':
			if (topo_parse_double(optarg, 0, 1, &o->sharp_share)) {
				fprintf(stderr, "topognn-sim: --sharp-share wants a share 0..1, not \"%s\"\n",
					optarg);
				return -1;
			}
			break;
		case 'r': o->progress = 1; break;
		case 'h': usage(stdout); exit(0);
		case 'n': case 's': case 'k': case 'P': case 'G': case 'b': case 'T':
			if (parse_int(optarg, c == 's' ? 0 : 1, &v)) {
				fprintf(stderr, "topognn-sim: --%s wants a %s whole number, not \"%s\"\n",
					c == 'n' ? "jobs" : c == 's' ? "seed" : c == 'k' ? "scale"
					: c == 'P' ? "procs-per-host" : c == 'G' ? "gpus-per-host"
					: c == 'T' ? "train-every" : "backfill-depth",
					c == 's' ? "non-negative" : "positive", optarg);
				return -1;
			}
			if (c == 'n') o->jobs = v;
			if (c == 's') o->seed = (unsigned)v;
			if (c == 'k') o->scale = v;
			if (c == 'P') o->procs_per_host = v;
			if (c == 'G') o->gpus = v;
			if (c == 'b') o->depth = v;
			if (c == 'T') o->train_every = v;
			break;
		default:
			usage(stderr);
			return -1;
		}
	}
	if (!o->graph_kind || o->ntraces == 0 || optind != argc) {
		usage(stderr);
		return -1;
	}
	return 0;
}

static void progress(void *ctx, int done, int total)
{
	const char *policy = ctx;

	fprintf(stderr, "\r%-8s %6d/%d jobs %3d%%", policy, done, total,
		total ? (int)(100.0 * done / total) : 100);
	if (done == total)
		fputc('\n', stderr);
	fflush(stderr);
}

/* No --model with the gnn policy: the shipped model (place_model_file.h). */
static int default_model(struct opts *o, char *path, size_t len)
{
	if (place_default_model_path(path, len)) {
		fprintf(stderr,
			"topognn-sim: the gnn policy needs a model: no --model given, and the shipped model %s cannot be read: %s\n",
			path, strerror(errno));
		return -1;
	}
	o->model = path;
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	topo_error err;
	char buf[1024], defmodel[4096], *list, *save = NULL;
	topo_graph *g;
	place_cluster *c = NULL;
	topo_trace trace;
	sim_comm_profile prof[4];
	sim_metrics m[SIM_MAX_POLICIES];
	sim_samples *train = NULL;
	FILE *dlog = NULL, *holds = NULL;
	int nprof, n = 0, rc = 1;
	json_t *root = NULL, *pol = NULL;

	if (parse_opts(argc, argv, &o))
		return 2;
	g = sim_load_graph(o.graph_kind, o.graph_arg, &err);
	if (!g || !(c = place_cluster_new(g, &err))) {
		fprintf(stderr, "topognn-sim: %s\n", topo_error_format(&err, buf, sizeof(buf)));
		topo_graph_free(g);
		return 1;
	}
	nprof = sim_load_profiles(o.comm_dir, prof, 4, &err);
	if (nprof < 0) {
		fprintf(stderr, "topognn-sim: %s (use --comm DIR)\n",
			topo_error_format(&err, buf, sizeof(buf)));
		goto out_graph;
	}
	{
		sim_workload w = {o.traces, o.ntraces, o.jobs, o.procs_per_host, o.scale,
				       place_cluster_nhosts(c)};
		char notes[2048];

		if (sim_load_workload(&w, &trace, notes, sizeof(notes), &err)) {
			fprintf(stderr, "topognn-sim: %s\n", topo_error_format(&err, buf, sizeof(buf)));
			goto out_graph;
		}
		fputs(notes, stderr);
	}
	if (o.emit && !(train = sim_samples_new())) {
		fprintf(stderr, "topognn-sim: out of memory\n");
		goto out;
	}
	if (o.decision_log && !(dlog = fopen(o.decision_log, "w"))) {
		fprintf(stderr, "topognn-sim: %s: cannot write: %s\n", o.decision_log, strerror(errno));
		goto out;
	}
	if (o.holds) {
		if (!(holds = fopen(o.holds, "w"))) {
			fprintf(stderr, "topognn-sim: %s: cannot write: %s\n", o.holds, strerror(errno));
			goto out;
		}
		sim_holds_header(holds);
	}
	list = strdup(o.policies);
	for (char *p = strtok_r(list, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		sim_config cfg;

		sim_config_init(&cfg);
		if (sim_config_set_policy(&cfg, p) || n == SIM_MAX_POLICIES) {
			fprintf(stderr,
				"topognn-sim: unknown policy \"%s\" (linear, tree, model, gnn, "
				"random, tree-switches, lookahead, lookahead-model, "
				"lookahead+pred, lookahead-model+pred, model+pred, gnn+pred, "
				"model+oracle, gnn+oracle, dagger-gnn+pred)\n",
				p);
			free(list);
			rc = 2;
			goto out;
		}
		cfg.place.seed = o.seed;
		cfg.gpus_per_host = o.gpus;
		cfg.backfill_depth = o.depth;
		cfg.profiles = prof;
		cfg.nprofiles = nprof;
		if (cfg.policy == PLACE_POLICY_GNN && !o.model && default_model(&o, defmodel,
									 sizeof(defmodel))) {
			free(list);
			goto out;
		}
		cfg.place.model_path = o.model;
		cfg.place.locality_wait_frac = o.wait_frac;
		cfg.sharp_share = o.sharp_share;
		cfg.place.locality_wait_cap_s = o.wait_cap_s;
		if (o.train_every > 0)
			cfg.train_every = o.train_every;
		/* samples come from the first policy's run only */
		cfg.training = n == 0 ? train : NULL;
		/* so is the decision log (with tree as the shadow baseline) */
		cfg.decision_log = n == 0 ? dlog : NULL;
		cfg.holds = n == 0 ? holds : NULL; /* and the hold samples */
		if (o.progress) {
			cfg.progress = progress;
			cfg.progress_ctx = p;
		}
		if (sim_run(c, &trace, &cfg, &m[n], &err)) {
			fprintf(stderr, "topognn-sim: %s: %s\n", p,
				topo_error_format(&err, buf, sizeof(buf)));
			free(list);
			goto out;
		}
		n++;
	}
	free(list);
	if (o.json) {
		root = json_object();
		pol = json_object();
		for (int i = 0; i < n; i++)
			json_object_set_new(pol, m[i].policy, sim_metrics_json(&m[i]));
		json_object_set_new(root, "hosts", json_integer(place_cluster_nhosts(c)));
		json_object_set_new(root, "jobs", json_integer(trace.njobs));
		json_object_set_new(root, "seed", json_integer(o.seed));
		if (o.model)
			json_object_set_new(root, "model", json_string(o.model));
		if (n > 0)
			json_object_set_new(root, "bound", sim_bound_json(&m[0]));
		json_object_set_new(root, "policies", pol);
		json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(root);
	} else {
		printf("%d hosts, %d jobs (%d skipped in the trace), seed %u\n",
		       place_cluster_nhosts(c), trace.njobs, trace.skipped, o.seed);
		if (o.model)
			printf("gnn model: %s\n", o.model);
		sim_print_table(stdout, m, n, NULL);
	}
	if (train) {
		if (sim_samples_write(train, o.emit, &err)) {
			fprintf(stderr, "topognn-sim: %s\n", topo_error_format(&err, buf, sizeof(buf)));
			goto out;
		}
		fprintf(stderr, "topognn-sim: %d samples in %d graphs written to %s\n",
			sim_samples_nsamples(train), sim_samples_ngraphs(train), o.emit);
	}
	rc = 0;
out:
	if (dlog && fclose(dlog) && rc == 0) {
		fprintf(stderr, "topognn-sim: %s: error writing the decision log\n", o.decision_log);
		rc = 1;
	}
	if (holds && fclose(holds) && rc == 0) {
		fprintf(stderr, "topognn-sim: %s: error writing the hold samples\n", o.holds);
		rc = 1;
	}
	sim_samples_free(train);
	trace_free(&trace);
out_graph:
	place_cluster_free(c);
	topo_graph_free(g);
	return rc;
}
