/*
 * bench/placement: every policy against `tree` (Slurm's topology/tree) over
 * a matrix of fabrics and workloads, each run with several seeds, so that a
 * difference can be told from noise (issue 10, docs/bench.md).
 *
 * Scenarios (docs/simulator.md):
 *   1. the real DGX H100 SuperPOD fabric (119 hosts, 8 groups of 10-18) with
 *      the KTH SP2 log, 1 processor = 1 host;
 *   2. a generated 2,048-host, 8-rail fat-tree with 2:1 leaf
 *      oversubscription, KTH jobs scaled 16x plus Alibaba's GPU pods filling
 *      the gaps;
 *   3. a generated 512-host, 4-rail fat-tree with 4:1 oversubscription
 *      (16 groups of 32), KTH jobs scaled 4x;
 *   4. NVL72: 16 GB200 NVL72 racks (18 hosts of 4 GPUs, one NVLink domain
 *      each) on a generated 4-rail non-blocking InfiniBand fat-tree of 4
 *      groups of 72 hosts (4 racks), KTH jobs scaled 2x;
 *   5. partial SHARP: a generated 512-host, 1-rail fat-tree with 2:1
 *      oversubscription whose leaves reach 16 of 24 spines each (any two
 *      leaves share some), SHARP on every leaf and spines 1-8 only (reached
 *      by the leaves of all groups but 3, 6, 9, 12 and 15), KTH jobs scaled
 *      4x, half of the heavy jobs SHARP users;
 *   6. light load: a generated 256-host, 4-rail fat-tree (16 groups of 16)
 *      with the KTH log unscaled, about 27% utilisation: waiting for
 *      locality must not make waits worse there.
 * A seed changes the communication profile each multi-node job draws (so
 * which jobs are heavy and how many bytes they send), not the trace. For
 * every seed each policy runs on the same workload; its ratio to tree's
 * metric in that seed is one sample, and the report gives the mean and the
 * 95% Student-t interval of those ratios over the seeds, and the same for
 * the empty-cluster bound (sim_bound.c). Absolute means (avoidable
 * multi-group placements among them) are printed too.
 *
 *   placement [--quick] [--json] [--seeds N] [--scenario K] [--model FILE]
 *             [--jobs1 N] ... [--jobs6 N] [--policies LIST]
 *             [--locality-wait FRAC[,CAP]]
 *
 * --locality-wait: how long heavy jobs under model and gnn may wait for
 * locality (docs/job-classes.md; the syntax of topognn.conf's LocalityWait);
 * by default topognn.conf's default (1,8h), so the benchmark measures what
 * an admin gets; "off": nobody waits, as in topognn-sim.
 *
 * Job counts are bounded so that the first three scenarios (x 5 seeds x
 * tree, model, gnn) take about 10 minutes on this project's shared 2-core
 * machine. --quick: scenario 1 only, its first 1,000 jobs, 3 seeds (the
 * README's version, well under a minute).
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "place_model_file.h"
#include "sim.h"

#ifndef TRACES_DIR
#define TRACES_DIR "examples/traces"
#endif
#ifndef FIXTURES_DIR
#define FIXTURES_DIR "tests/fixtures"
#endif

#define MAX_SEEDS 30
#define MAX_POL 12 /* policy names: engine policies and the simulator's variants */
#define NSCEN 6

/* The metrics reported as ratios to tree, by their sim_metrics_json key,
 * with the table's short title. */
static const struct metric {
	const char *key, *title;
	int bound; /* the bound has it */
} metrics[] = {
	{"cross_group_bytes_heavy", "xgroup_B", 1},
	{"cross_leaf_bytes_heavy", "xleaf_B", 1},
	{"multi_group_heavy", "multi_g", 1},
	{"avoidable_multi_group", "avoid_g", 0},
	{"mean_wait_s", "wait", 0},
	{"p95_wait_s", "wait_p95", 0},
	{"utilization", "util", 0},
	{"useful_utilization", "useful", 0},
	{"mean_comm_slowdown", "slow", 0},
	{"comm_node_hours", "comm_nh", 0},
	{"makespan_s", "makespan", 0},
};
#define NMET (sizeof(metrics) / sizeof(metrics[0]))

typedef struct scenario {
	const char *name, *title, *kind, *arg;
	const char *traces[2];
	int ntraces, jobs, scale;
	int gpus;           /* GPUs per host; 0: the simulator's default (8) */
	double sharp_share; /* share of heavy jobs that are SHARP users */
} scenario;

typedef struct opts {
	int quick, json, seeds, only;
	int jobs[NSCEN];
	const char *policies, *model;
	double wait_frac, wait_cap_s; /* --locality-wait (default topognn.conf's); 0: none */
	char defmodel[4096];
} opts;

/* One scenario's runs: m[seed][policy]. */
typedef struct runs {
	int npol, nseeds, hosts, njobs;
	char names[MAX_POL][32]; /* fits every policy name, "lookahead-model+pred" the longest */
	sim_metrics m[MAX_SEEDS][MAX_POL];
	double elapsed_s;
} runs;

/* Two-sided 95% Student t quantile for df degrees of freedom. */
static double t95(int df)
{
	static const double t[] = {0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
				   2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
				   2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
				   2.060, 2.056, 2.052, 2.048, 2.045, 2.042};

	return df < 1 ? NAN : df <= 30 ? t[df] : 1.96;
}

/* Mean and 95% t-interval [lo, hi] of v[0..n); NAN where undefined. */
static void mean_ci(const double *v, int n, double *mean, double *lo, double *hi)
{
	double s = 0, ss = 0, half;

	*mean = *lo = *hi = NAN;
	if (n < 1)
		return;
	for (int i = 0; i < n; i++)
		s += v[i];
	*mean = s / n;
	for (int i = 0; i < n; i++)
		ss += (v[i] - *mean) * (v[i] - *mean);
	half = n > 1 ? t95(n - 1) * sqrt(ss / (n - 1)) / sqrt((double)n) : NAN;
	*lo = *mean - half;
	*hi = *mean + half;
}

static double metric_of(const sim_metrics *m, const char *key, int bound)
{
	json_t *j = bound ? sim_bound_json(m) : sim_metrics_json(m);
	double v = j ? json_number_value(json_object_get(j, key)) : NAN;

	json_decref(j);
	return v;
}

/* Ratio samples of policy p (or the bound, p < 0) to tree for metric k
 * over the seeds where tree's value is not 0. Returns their count. */
static int ratios(const runs *r, int tree, int p, size_t k, double *out)
{
	int n = 0;

	for (int s = 0; s < r->nseeds; s++) {
		double b = metric_of(&r->m[s][tree], metrics[k].key, 0);
		double v = p < 0 ? metric_of(&r->m[s][tree], metrics[k].key, 1)
				 : metric_of(&r->m[s][p], metrics[k].key, 0);

		if (b != 0 && isfinite(b) && isfinite(v))
			out[n++] = v / b;
	}
	return n;
}

static double abs_mean(const runs *r, int p, size_t k)
{
	double s = 0;

	for (int i = 0; i < r->nseeds; i++)
		s += p < 0 ? metric_of(&r->m[i][0], metrics[k].key, 1)
			   : metric_of(&r->m[i][p], metrics[k].key, 0);
	return r->nseeds ? s / r->nseeds : NAN;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Run every policy for every seed on one scenario. 0 or -1. */
static int run_scenario(const scenario *sc, const opts *o, const sim_comm_profile *prof,
			int nprof, runs *r)
{
	topo_error err;
	char buf[1024], notes[2048], *list, *save = NULL;
	topo_graph *g = sim_load_graph(sc->kind, sc->arg, &err);
	place_cluster *c = g ? place_cluster_new(g, &err) : NULL;
	topo_trace t;
	double t0 = now_s();
	int rc = -1;

	memset(r, 0, sizeof(*r));
	if (!c)
		goto out;
	sim_workload w = {sc->traces, sc->ntraces, sc->jobs, 1, sc->scale, place_cluster_nhosts(c)};
	if (sim_load_workload(&w, &t, notes, sizeof(notes), &err))
		goto out;
	r->hosts = place_cluster_nhosts(c);
	r->njobs = t.njobs;
	list = strdup(o->policies);
	for (char *p = strtok_r(list, ",", &save); p && r->npol < MAX_POL;
	     p = strtok_r(NULL, ",", &save))
		snprintf(r->names[r->npol++], sizeof(r->names[0]), "%s", p); /* check_policies */
	free(list);
	for (int s = 0; s < o->seeds; s++) {
		for (int p = 0; p < r->npol; p++) {
			sim_config cfg;

			sim_config_init(&cfg);
			sim_config_set_policy(&cfg, r->names[p]);
			cfg.place.seed = (unsigned)s + 1;
			cfg.profiles = prof;
			cfg.nprofiles = nprof;
			cfg.place.model_path = o->model;
			cfg.place.locality_wait_frac = o->wait_frac;
			cfg.place.locality_wait_cap_s = o->wait_cap_s;
			cfg.sharp_share = sc->sharp_share;
			if (sc->gpus > 0)
				cfg.gpus_per_host = sc->gpus;
			if (isatty(STDERR_FILENO))
				fprintf(stderr, "\r%s: seed %d/%d %-10s", sc->name, s + 1, o->seeds,
					r->names[p]);
			if (sim_run(c, &t, &cfg, &r->m[s][p], &err)) {
				fprintf(stderr, "\nplacement: %s, %s, seed %d: %s\n", sc->name,
					r->names[p], s + 1, topo_error_format(&err, buf, sizeof(buf)));
				trace_free(&t);
				goto out_quiet;
			}
		}
		r->nseeds++;
	}
	fprintf(stderr, "%s%s: %d seeds in %.0f s%20s\n", isatty(STDERR_FILENO) ? "\r" : "",
		sc->name, r->nseeds, now_s() - t0, "");
	trace_free(&t);
	rc = 0;
	goto out_quiet;
out:
	fprintf(stderr, "placement: %s: %s\n", sc->name, topo_error_format(&err, buf, sizeof(buf)));
out_quiet:
	r->elapsed_s = now_s() - t0;
	place_cluster_free(c);
	topo_graph_free(g);
	return rc;
}

static int policy_index(const runs *r, const char *name)
{
	for (int p = 0; p < r->npol; p++)
		if (strcmp(r->names[p], name) == 0)
			return p;
	return -1;
}

static int tree_index(const runs *r)
{
	return policy_index(r, "tree");
}

static size_t metric_index(const char *key)
{
	size_t k = 0;

	while (k < NMET - 1 && strcmp(metrics[k].key, key))
		k++;
	return k;
}

static void print_ratio_row(const runs *r, int tree, int p, const char *name)
{
	double v[MAX_SEEDS], mean, lo, hi;

	printf("%-13s", name);
	for (size_t k = 0; k < NMET; k++) {
		int n = (p >= 0 || metrics[k].bound) ? ratios(r, tree, p, k, v) : 0;

		mean_ci(v, n, &mean, &lo, &hi);
		if (n == 0)
			printf(" %15s", "-");
		else if (n == 1)
			printf(" %15.3f", mean);
		else
			printf(" %7.3f±%-7.3f", mean, (hi - lo) / 2);
	}
	putchar('\n');
}

/* The ratio block of every policy (and the bound) to policy `base`. */
static void print_ratios(const runs *r, int base)
{
	printf("ratio to %s, mean ± half-width of the 95%% t-interval over seeds "
	       "(lower is better except util):\n%-13s", r->names[base], "policy");
	for (size_t k = 0; k < NMET; k++)
		printf(" %15s", metrics[k].title);
	putchar('\n');
	for (int p = 0; p < r->npol; p++)
		print_ratio_row(r, base, p, r->names[p]);
	print_ratio_row(r, base, -1, "bound");
	putchar('\n');
}

/* The policy that gnn policy p is judged against: model with the same
 * suffix ("gnn+pred" -> "model+pred"); -1 when p is not gnn or that did
 * not run. The learned part is the reason for a gain only against it. */
static int model_twin(const runs *r, int p)
{
	char name[sizeof(r->names[0]) + 2];

	if (strncmp(r->names[p], "gnn", 3))
		return -1;
	snprintf(name, sizeof(name), "model%s", r->names[p] + 3);
	return policy_index(r, name);
}

/* Each gnn policy over its model twin, paired per seed. */
static void print_learned_pairs(const runs *r)
{
	int any = 0;

	for (int p = 0; p < r->npol; p++) {
		int m = model_twin(r, p);
		char name[2 * sizeof(r->names[0]) + 2];

		if (m < 0)
			continue;
		if (!any++)
			printf("gnn over model with the same predictor, paired per seed (mean ± "
			       "half-width of the 95%% t-interval):\n");
		snprintf(name, sizeof(name), "%s/%s", r->names[p], r->names[m]);
		print_ratio_row(r, m, p, name);
	}
	if (any)
		putchar('\n');
}

static void print_scenario(const scenario *sc, const runs *r)
{
	int tree = tree_index(r), sw = policy_index(r, "tree-switches");
	size_t slow = metric_index("mean_comm_slowdown"), nh = metric_index("comm_node_hours");

	printf("== %s\n%d hosts, %d jobs, %d seeds (1..%d), %.0f s\n", sc->title, r->hosts,
	       r->njobs, r->nseeds, r->nseeds, r->elapsed_s);
	printf("mean over seeds (bytes in PB; slow: heavy jobs' mean comm slowdown, comm_nh: "
	       "the node-hours it cost):\n%-13s %9s %9s %8s %8s %8s %8s %8s %7s %8s\n", "policy",
	       "xgroup_PB", "xleaf_PB", "multi_g", "avoid_g", "wait_s", "util%", "useful%", "slow",
	       "comm_nh");
	for (int p = -1; p < r->npol; p++) {
		if (p < 0 && tree < 0)
			continue;
		printf("%-13s %9.3f %9.3f %8.1f %8.1f", p < 0 ? "bound" : r->names[p],
		       abs_mean(r, p, 0) * 1e-15, abs_mean(r, p, 1) * 1e-15, abs_mean(r, p, 2),
		       p < 0 ? 0.0 : abs_mean(r, p, 3));
		if (p < 0)
			printf(" %8s %8s %8s %7s %8s\n", "-", "-", "-", "-", "-");
		else
			printf(" %8.0f %8.1f %8.1f %7.4f %8.1f\n", abs_mean(r, p, 4),
			       100 * abs_mean(r, p, 6), 100 * abs_mean(r, p, 7), abs_mean(r, p, slow),
			       abs_mean(r, p, nh));
	}
	if (tree < 0 && sw < 0) {
		printf("(no tree run: no ratios)\n\n");
		return;
	}
	if (tree >= 0)
		print_ratios(r, tree);
	if (sw >= 0)
		print_ratios(r, sw);
	print_learned_pairs(r);
}

/* Ratios of policy p (the bound, p < 0) to policy base into o as
 * {mean_key: {metric: x}, ci_key: {metric: [lo, hi]}}. */
static void ratios_json(json_t *o, const runs *r, int base, int p, const char *mean_key,
			const char *ci_key)
{
	json_t *mean = json_object(), *ci = json_object();

	for (size_t k = 0; k < NMET; k++) {
		double v[MAX_SEEDS], mu, lo, hi;
		int n;

		if (p < 0 && !metrics[k].bound)
			continue;
		n = ratios(r, base, p, k, v);
		mean_ci(v, n, &mu, &lo, &hi);
		json_object_set_new(mean, metrics[k].key, isfinite(mu) ? json_real(mu) : json_null());
		json_object_set_new(ci, metrics[k].key,
				    isfinite(lo) ? json_pack("[f,f]", lo, hi) : json_null());
	}
	json_object_set_new(o, mean_key, mean);
	json_object_set_new(o, ci_key, ci);
}

/* {"ratio_mean": {metric: x}, "ratio_ci95": {metric: [lo, hi]} (to tree),
 * the same to tree-switches when it ran ("ratio_mean_tree_switches",
 * "ratio_ci95_tree_switches") and, for a gnn policy, to its model twin
 * paired per seed ("ratio_mean_model", "ratio_ci95_model"), "mean": {...}} */
static json_t *policy_json(const runs *r, int tree, int p)
{
	json_t *o = json_object(), *abs = json_object();
	int sw = policy_index(r, "tree-switches");

	for (size_t k = 0; k < NMET; k++)
		if (p >= 0 || metrics[k].bound)
			json_object_set_new(abs, metrics[k].key, json_real(abs_mean(r, p, k)));
	if (tree >= 0)
		ratios_json(o, r, tree, p, "ratio_mean", "ratio_ci95");
	else {
		json_object_set_new(o, "ratio_mean", json_object());
		json_object_set_new(o, "ratio_ci95", json_object());
	}
	if (sw >= 0)
		ratios_json(o, r, sw, p, "ratio_mean_tree_switches", "ratio_ci95_tree_switches");
	if (p >= 0 && model_twin(r, p) >= 0)
		ratios_json(o, r, model_twin(r, p), p, "ratio_mean_model", "ratio_ci95_model");
	json_object_set_new(o, "mean", abs);
	return o;
}

static json_t *scenario_json(const scenario *sc, const runs *r)
{
	json_t *pol = json_object();
	int tree = tree_index(r);

	for (int p = 0; p < r->npol; p++)
		json_object_set_new(pol, r->names[p], policy_json(r, tree, p));
	return json_pack("{s:s,s:s,s:s,s:i,s:i,s:i,s:f,s:o,s:o}", "name", sc->name, "title",
			 sc->title, "fabric", sc->arg, "hosts", r->hosts, "jobs", r->njobs,
			 "seeds", r->nseeds, "elapsed_s", r->elapsed_s, "bound",
			 policy_json(r, tree, -1), "policies", pol);
}

/* Every name of a --policies list must be a policy (sim_config_set_policy)
 * that fits a table row: one the runs would skip is an error, not a
 * silently shorter table. */
static int check_policies(const char *list)
{
	char *copy = strdup(list), *save = NULL;
	int rc = copy ? 0 : -1, n = 0;

	for (char *p = copy ? strtok_r(copy, ",", &save) : NULL; p;
	     p = strtok_r(NULL, ",", &save)) {
		if (strlen(p) >= sizeof(((runs *)0)->names[0]) ||
		    sim_config_set_policy(&(sim_config){0}, p)) {
			fprintf(stderr, "placement: --policies: unknown policy \"%s\"\n", p);
			rc = -1;
		}
		n++;
	}
	if (rc == 0 && n > MAX_POL) {
		fprintf(stderr, "placement: --policies: at most %d policies\n", MAX_POL);
		rc = -1;
	}
	free(copy);
	return rc;
}

static int parse_opts(int argc, char **argv, opts *o)
{
	memset(o, 0, sizeof(*o));
	o->seeds = 5;
	o->jobs[0] = 3000;
	o->jobs[1] = 1500;
	o->jobs[2] = 3000;
	o->jobs[3] = 3000;
	o->jobs[4] = 3000;
	o->jobs[5] = 3000;
	o->policies = "tree,tree-switches,model,gnn,model+pred,gnn+pred";
	o->wait_frac = PLACE_LOCALITY_WAIT_FRAC_DEFAULT;
	o->wait_cap_s = PLACE_LOCALITY_WAIT_CAP_S_DEFAULT;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--quick") == 0 || strcmp(a, "--json") == 0) {
			*(a[2] == 'q' ? &o->quick : &o->json) = 1;
			continue;
		}
		if (!v)
			goto usage;
		i++;
		if (strcmp(a, "--model") == 0)
			o->model = v;
		else if (strcmp(a, "--policies") == 0)
			o->policies = v;
		else if (strcmp(a, "--seeds") == 0 && atoi(v) >= 1 && atoi(v) <= MAX_SEEDS)
			o->seeds = atoi(v);
		else if (strcmp(a, "--scenario") == 0 && atoi(v) >= 1 && atoi(v) <= NSCEN)
			o->only = atoi(v);
		else if (strcmp(a, "--locality-wait") == 0) {
			char why[256];

			if (place_locality_wait_parse(v, &o->wait_frac, &o->wait_cap_s, why,
						      sizeof(why))) {
				fprintf(stderr, "placement: --locality-wait: %s\n", why);
				return -1;
			}
		}
		else if (strncmp(a, "--jobs", 6) == 0 && a[6] >= '1' && a[6] <= '0' + NSCEN && !a[7] &&
			 atoi(v) >= 1)
			o->jobs[a[6] - '1'] = atoi(v);
		else
			goto usage;
	}
	if (o->quick) {
		o->only = 1;
		o->jobs[0] = 1000;
		o->seeds = 3;
	}
	if (check_policies(o->policies))
		return -1;
	if (!o->model) {
		/* the shipped model (place_model_file.h) */
		if (place_default_model_path(o->defmodel, sizeof(o->defmodel))) {
			fprintf(stderr, "placement: the shipped model %s cannot be read\n", o->defmodel);
			return -1;
		}
		o->model = o->defmodel;
	}
	return 0;
usage:
	fprintf(stderr, "usage: placement [--quick] [--json] [--seeds N (1-%d)] [--scenario 1-%d] "
			"[--model FILE]\n                 [--jobs1 N] ... [--jobs%d N] "
			"[--policies LIST] [--locality-wait FRAC[,CAP]]\n", MAX_SEEDS, NSCEN, NSCEN);
	return -1;
}

int main(int argc, char **argv)
{
	static runs r; /* large: seeds x policies x metrics */
	const char *kth = TRACES_DIR "/KTH-SP2-1996-2.1-cln.swf.gz";
	const char *ali = TRACES_DIR "/alibaba-gpu-v2023-openb_pod_list_default.csv";
	scenario sc[NSCEN] = {
		{"superpod-kth", "1. DGX H100 SuperPOD fabric, KTH SP2 log (1 processor = 1 host)",
		 "ibnetdiscover", FIXTURES_DIR "/fabrics/dgx-h100-superpod.ibnetdiscover",
		 {kth}, 1, 0, 1, 0, 0},
		{"fattree2048-2to1-kth16-alibaba",
		 "2. generated fat-tree: 2,048 hosts, 8 rails, 2:1 leaf oversubscription; "
		 "KTH x16 + Alibaba GPU pods",
		 "fattree", "groups=16,hosts=128,rails=8,oversub=2", {kth, ali}, 2, 0, 16, 0, 0},
		{"fattree512-4to1-kth4",
		 "3. generated fat-tree: 512 hosts, 4 rails, 4:1 leaf oversubscription; KTH x4",
		 "fattree", "groups=16,hosts=32,rails=4,oversub=4", {kth}, 1, 0, 4, 0, 0},
		{"nvl72x16-ib4rail-kth2",
		 "4. 16 GB200 NVL72 racks (18 hosts x 4 GPUs, NVLink domains) on a 4-rail "
		 "InfiniBand fat-tree, 4 groups of 72; KTH x2",
		 "fattree", "groups=4,hosts=72,rails=4,oversub=1,gpus=4,nvl=18,spines=8", {kth}, 1, 0,
		 2, 4, 0},
		{"fattree512-partial-sharp-kth4",
		 "5. generated fat-tree: 512 hosts, 1 rail, 2:1, SHARP on 8 of 24 spines; KTH x4, "
		 "half of the heavy jobs SHARP users",
		 "fattree", "groups=16,hosts=32,rails=1,oversub=2,spines=24,sharp=8", {kth}, 1, 0, 4,
		 0, 0.5},
		{"fattree256-light-kth",
		 "6. light load: a generated 256-host, 4-rail fat-tree (16 groups of 16), the KTH "
		 "log unscaled (about 27% utilisation)",
		 "fattree", "groups=16,hosts=16,rails=4", {kth}, 1, 0, 1, 0, 0},
	};
	sim_comm_profile prof[4];
	topo_error err;
	char buf[1024];
	json_t *root, *arr;
	opts o;
	int nprof, rc = 0;

	if (parse_opts(argc, argv, &o))
		return 2;
	nprof = sim_load_profiles(FIXTURES_DIR "/comm", prof, 4, &err);
	if (nprof < 0) {
		fprintf(stderr, "placement: %s\n", topo_error_format(&err, buf, sizeof(buf)));
		return 1;
	}
	root = json_object(); /* after the early returns, which would leak them */
	arr = json_array();
	for (int i = 0; i < NSCEN; i++) {
		if (o.only && o.only != i + 1)
			continue;
		sc[i].jobs = o.jobs[i];
		if (run_scenario(&sc[i], &o, prof, nprof, &r)) {
			rc = 1;
			continue;
		}
		if (o.json)
			json_array_append_new(arr, scenario_json(&sc[i], &r));
		else
			print_scenario(&sc[i], &r);
	}
	if (o.json) {
		json_object_set_new(root, "seeds", json_integer(o.seeds));
		json_object_set_new(root, "model", json_string(o.model));
		json_object_set_new(root, "locality_wait_frac", json_real(o.wait_frac));
		json_object_set_new(root, "locality_wait_cap_s", json_real(o.wait_cap_s));
		json_object_set_new(root, "scenarios", arr);
		json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		putchar('\n');
	} else {
		json_decref(arr);
	}
	json_decref(root);
	return rc;
}
