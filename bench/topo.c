/*
 * bench/topo: how the fabric analytics scale with the cluster.
 *
 * Builds synthetic rail-optimized fat trees (topo_fattree_build) of 1,024,
 * 4,096 and 16,384 hosts x 8 rails and, for each, times generating the graph
 * ("load"), topo_analysis_run() plus building the hop index ("analysis"), and a
 * fixed number of random topo_analysis_host_hops() queries. Each size runs in a forked
 * child so its peak resident memory (VmHWM) is its own; the child reports the
 * growth of VmHWM over its start. Times are the best of --repeat runs (3),
 * because the machine may be shared.
 *
 * The cost should grow linearly with the hosts: for each step it prints
 * (cost ratio) / (size ratio), which stays near 1 for linear growth and
 * near 4 if something went quadratic over a 4x step. Query time is per
 * query and should stay flat. --json prints one JSON object instead.
 *
 * Not a test: it prints numbers and exits 0 unless something fails.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "topo_analysis.h"
#include "topo_fattree.h"
#include "topo_graph.h"

#define NSIZES 3
static const int sizes[NSIZES] = { 1024, 4096, 16384 };

typedef struct bench_opts {
	int rails;
	int hosts_per_group;
	double oversub;
	int queries;
	int repeat;
	int json;
} bench_opts;

typedef struct bench_result {
	int ok;
	char error[256];
	long vertices, edges, switches, leaves;
	double load_s, analyze_s, index_s, queries_s;
	long rss_start_kib, rss_peak_kib; /* VmHWM at the child's start and end */
	long index_bytes;
	int components, anomalies, unreachable;
	double mean_hops, max_oversub;
} bench_result;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A /proc/self/status field in KiB ("VmHWM", "VmRSS"); -1 if absent. */
static long status_kib(const char *field)
{
	char line[256];
	size_t n = strlen(field);
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, field, n) == 0 && line[n] == ':') {
			kib = strtol(line + n + 1, NULL, 10);
			break;
		}
	fclose(f);
	return kib;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Random host pairs; the hosts' vertex ids are collected first. */
static int run_queries(const topo_graph *g, const topo_analysis_index *ix, int nq,
		       bench_result *r)
{
	size_t nv = topo_graph_nvertices(g), nh = 0;
	int *hosts = malloc(nv * sizeof(*hosts));
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	long sum = 0;
	double t;

	if (!hosts)
		return -1;
	for (size_t v = 0; v < nv; v++)
		if (topo_graph_vertex(g, (int)v)->kind == TOPO_V_HOST)
			hosts[nh++] = (int)v;
	t = now();
	for (int q = 0; q < nq; q++) {
		int a = hosts[xorshift(&seed) % nh], b = hosts[xorshift(&seed) % nh];
		int d = topo_analysis_host_hops(ix, a, b);

		if (d < 0)
			r->unreachable++;
		else
			sum += d;
	}
	r->queries_s = now() - t;
	r->mean_hops = nq > r->unreachable ? (double)sum / (nq - r->unreachable) : 0;
	free(hosts);
	return 0;
}

/* One generate + analyse + index + query round into r (r->ok on success). */
static void run_once(const bench_opts *o, int hosts, bench_result *r)
{
	topo_fattree_spec spec;
	topo_analysis a;
	topo_analysis_index *ix = NULL;
	topo_graph *g;
	topo_error err;
	double t;

	memset(r, 0, sizeof(*r));
	topo_fattree_spec_init(&spec);
	spec.groups = hosts / o->hosts_per_group;
	spec.hosts_per_group = o->hosts_per_group;
	spec.rails = o->rails;
	spec.oversub = o->oversub;
	spec.gpus_per_host = o->rails;
	g = topo_graph_new();
	if (!g) {
		snprintf(r->error, sizeof(r->error), "out of memory");
		return;
	}
	t = now();
	if (topo_fattree_build(g, &spec, &err) < 0) {
		topo_error_format(&err, r->error, sizeof(r->error));
		goto done;
	}
	r->load_s = now() - t;
	t = now();
	if (topo_analysis_run_summary(g, &a, &err) < 0) {
		topo_error_format(&err, r->error, sizeof(r->error));
		goto done;
	}
	r->analyze_s = now() - t;
	r->components = a.components;
	r->max_oversub = a.max_oversub;
	topo_analysis_free(&a);
	t = now();
	ix = topo_analysis_index_new(g, &err);
	if (!ix) {
		topo_error_format(&err, r->error, sizeof(r->error));
		goto done;
	}
	r->index_s = now() - t;
	if (run_queries(g, ix, o->queries, r) < 0) {
		snprintf(r->error, sizeof(r->error), "out of memory");
		goto done;
	}
	r->vertices = (long)topo_graph_nvertices(g);
	r->edges = (long)topo_graph_nedges(g);
	r->switches = (long)topo_graph_count(g, TOPO_V_SWITCH);
	r->leaves = topo_analysis_index_nleaves(ix);
	r->index_bytes = (long)topo_analysis_index_bytes(ix);
	r->anomalies = (int)topo_graph_nanomalies(g);
	r->ok = 1;
done:
	topo_analysis_index_free(ix);
	topo_graph_free(g);
}

static double min_time(double a, double b)
{
	return a < b ? a : b;
}

/* o->repeat rounds, keeping the fastest time of each phase (the machine may
 * be shared: the minimum is the least disturbed measurement). */
static void run_size(const bench_opts *o, int hosts, bench_result *r)
{
	long start = status_kib("VmHWM");

	run_once(o, hosts, r);
	for (int i = 1; r->ok && i < o->repeat; i++) {
		bench_result again;

		run_once(o, hosts, &again);
		if (!again.ok) {
			*r = again;
			break;
		}
		r->load_s = min_time(r->load_s, again.load_s);
		r->analyze_s = min_time(r->analyze_s, again.analyze_s);
		r->index_s = min_time(r->index_s, again.index_s);
		r->queries_s = min_time(r->queries_s, again.queries_s);
	}
	r->rss_start_kib = start;
	r->rss_peak_kib = status_kib("VmHWM");
}

/* Run one size in a child process so VmHWM measures that size alone. */
static int run_forked(const bench_opts *o, int hosts, bench_result *r)
{
	int fd[2], status;
	pid_t pid;
	ssize_t n;

	if (pipe(fd) < 0)
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		bench_result cr;

		close(fd[0]);
		run_size(o, hosts, &cr);
		n = write(fd[1], &cr, sizeof(cr));
		/* exit, not _exit: LeakSanitizer checks the child too (stdio was flushed) */
		exit(n == (ssize_t)sizeof(cr) ? 0 : 1);
	}
	close(fd[1]);
	n = read(fd[0], r, sizeof(*r));
	close(fd[0]);
	waitpid(pid, &status, 0);
	if (n != (ssize_t)sizeof(*r)) {
		snprintf(r->error, sizeof(r->error), "the child for %d hosts died", hosts);
		r->ok = 0;
	}
	return r->ok ? 0 : -1;
}

static double peak_mib(const bench_result *r)
{
	return (r->rss_peak_kib - r->rss_start_kib) / 1024.0;
}

static double analysis_s(const bench_result *r)
{
	return r->analyze_s + r->index_s;
}

/* (cost ratio) / (size ratio) between sizes i-1 and i. */
static double scaled(double prev, double cur, int i)
{
	double size_ratio = (double)sizes[i] / sizes[i - 1];

	return prev > 0 ? (cur / prev) / size_ratio : 0;
}

static void print_text(const bench_opts *o, const bench_result *r)
{
	printf("rail-optimized fat trees: %d rails, %d hosts per group, oversubscription %g, "
	       "%d random host_hops queries; times are the best of %d runs\n\n",
	       o->rails, o->hosts_per_group, o->oversub, o->queries, o->repeat);
	printf("%7s %8s %8s %7s %6s %9s %9s %9s %9s %10s %9s %6s\n", "hosts", "vertices", "edges",
	       "leaves", "comps", "load s", "analyze s", "index s", "query us", "peak MiB",
	       "index KiB", "hops");
	for (int i = 0; i < NSIZES; i++)
		printf("%7d %8ld %8ld %7ld %6d %9.4f %9.4f %9.4f %9.3f %10.1f %9.1f %6.3f\n",
		       sizes[i], r[i].vertices, r[i].edges, r[i].leaves, r[i].components,
		       r[i].load_s, r[i].analyze_s, r[i].index_s, r[i].queries_s * 1e6 / o->queries,
		       peak_mib(&r[i]), r[i].index_bytes / 1024.0, r[i].mean_hops);
	printf("\n(cost ratio) / (size ratio) between sizes; 1.0 = linear\n");
	printf("%15s %6s %9s %9s %10s %11s\n", "step", "size x", "load", "analysis", "peak mem",
	       "per query");
	for (int i = 1; i < NSIZES; i++)
		printf("%7d->%-7d %6.1f %9.2f %9.2f %10.2f %11.2f\n", sizes[i - 1], sizes[i],
		       (double)sizes[i] / sizes[i - 1], scaled(r[i - 1].load_s, r[i].load_s, i),
		       scaled(analysis_s(&r[i - 1]), analysis_s(&r[i]), i),
		       scaled(peak_mib(&r[i - 1]), peak_mib(&r[i]), i),
		       r[i - 1].queries_s > 0 ? r[i].queries_s / r[i - 1].queries_s : 0);
}

static void print_json(const bench_opts *o, const bench_result *r)
{
	printf("{\"rails\": %d, \"hosts_per_group\": %d, \"oversub\": %g, \"queries\": %d, "
	       "\"repeat\": %d, \"sizes\": [",
	       o->rails, o->hosts_per_group, o->oversub, o->queries, o->repeat);
	for (int i = 0; i < NSIZES; i++)
		printf("%s{\"hosts\": %d, \"vertices\": %ld, \"edges\": %ld, \"switches\": %ld, "
		       "\"leaves\": %ld, \"components\": %d, \"anomalies\": %d, \"load_s\": %.6f, "
		       "\"analyze_s\": %.6f, \"index_s\": %.6f, \"queries_s\": %.6f, "
		       "\"peak_rss_kib\": %ld, \"index_bytes\": %ld, \"mean_hops\": %.4f, "
		       "\"unreachable\": %d, \"max_oversub\": %g}",
		       i ? ", " : "", sizes[i], r[i].vertices, r[i].edges, r[i].switches,
		       r[i].leaves, r[i].components, r[i].anomalies, r[i].load_s, r[i].analyze_s,
		       r[i].index_s, r[i].queries_s, r[i].rss_peak_kib - r[i].rss_start_kib,
		       r[i].index_bytes, r[i].mean_hops, r[i].unreachable, r[i].max_oversub);
	printf("], \"scaling\": [");
	for (int i = 1; i < NSIZES; i++)
		printf("%s{\"from\": %d, \"to\": %d, \"size_ratio\": %g, \"load\": %.3f, "
		       "\"analysis\": %.3f, \"peak_rss\": %.3f, \"query\": %.3f}",
		       i > 1 ? ", " : "", sizes[i - 1], sizes[i], (double)sizes[i] / sizes[i - 1],
		       scaled(r[i - 1].load_s, r[i].load_s, i),
		       scaled(analysis_s(&r[i - 1]), analysis_s(&r[i]), i),
		       scaled(peak_mib(&r[i - 1]), peak_mib(&r[i]), i),
		       r[i - 1].queries_s > 0 ? r[i].queries_s / r[i - 1].queries_s : 0);
	printf("]}\n");
}

static void usage(FILE *f)
{
	fprintf(f, "usage: topo [--json] [--rails N] [--hosts-per-group N] [--oversub X] "
		   "[--queries N] [--repeat N]\n"
		   "Times fabric generation, analysis and hop queries on rail-optimized fat trees\n"
		   "of 1024, 4096 and 16384 hosts (defaults: 8 rails, 32 hosts per group, 1:1,\n"
		   "100000 queries, best of 3 runs per size).\n");
}

int main(int argc, char **argv)
{
	bench_opts o = { .rails = 8, .hosts_per_group = 32, .oversub = 1, .queries = 100000,
			.repeat = 3 };
	bench_result r[NSIZES];

	for (int i = 1; i < argc; i++) {
		const char *opt = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(opt, "--json") == 0) {
			o.json = 1;
			continue;
		}
		if (strcmp(opt, "--help") == 0) {
			usage(stdout);
			return 0;
		}
		if (!v) {
			usage(stderr);
			return 2;
		}
		i++;
		if (strcmp(opt, "--rails") == 0)
			o.rails = atoi(v);
		else if (strcmp(opt, "--hosts-per-group") == 0)
			o.hosts_per_group = atoi(v);
		else if (strcmp(opt, "--oversub") == 0)
			o.oversub = atof(v);
		else if (strcmp(opt, "--queries") == 0)
			o.queries = atoi(v);
		else if (strcmp(opt, "--repeat") == 0)
			o.repeat = atoi(v);
		else {
			usage(stderr);
			return 2;
		}
	}
	if (o.rails < 1 || o.hosts_per_group < 1 || o.queries < 1 || o.repeat < 1 ||
	    sizes[0] % o.hosts_per_group) {
		fprintf(stderr, "topo: rails, queries and repeat must be positive and hosts per group "
				"must divide %d\n", sizes[0]);
		return 2;
	}
	for (int i = 0; i < NSIZES; i++)
		if (run_forked(&o, sizes[i], &r[i]) < 0) {
			fprintf(stderr, "topo: %d hosts: %s\n", sizes[i], r[i].error);
			return 1;
		}
	if (o.json)
		print_json(&o, r);
	else
		print_text(&o, r);
	return 0;
}
