/*
 * place_latency: decision latency of the placement engine per policy on a
 * generated 4,096-host, 8-rail fat-tree (128 groups of 32, 2:1 leaf
 * oversubscription) with a background of running jobs (about 60% of hosts,
 * half of the multi-host ones heavy communicators). Prints p50/p99/max in
 * microseconds per policy; the target is p99 <= 1000 us. Wall time
 * (what the decision record reports) suffers from other processes on a
 * busy machine, so the thread's CPU time per decision is shown too.
 *
 *   place_latency [groups=128,hosts=32,rails=8,oversub=2,gpus=8] [decisions] [hosts per job]
 * (without the last argument job sizes are drawn from 1..128 hosts)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "place.h"
#include "topo_fattree.h"

static unsigned long long rng = 12345;

static unsigned rnd(unsigned n)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (unsigned)(rng >> 33) % n;
}

static double cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static double pct(double *v, int n, double p)
{
	int i = (int)(n * p);

	return v[i < n ? i : n - 1];
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Running jobs on about `fill` of the hosts, in consecutive blocks. */
static int add_background(place_state *s, int nhosts, double fill)
{
	static const int sizes[] = { 1, 1, 2, 4, 8, 16, 32, 64 };
	int *hosts = malloc((size_t)nhosts * sizeof(int)), h = 0, jobs = 0;

	while (hosts && h < nhosts) {
		int n = sizes[rnd(8)];
		place_comm comm = { n > 1 && rnd(2) ? PLACE_COMM_HEAVY : PLACE_COMM_LIGHT,
				    PLACE_PATTERN_RING, 1e9, 0.2 };

		if (h + n > nhosts)
			n = nhosts - h;
		if (rnd(1000) < fill * 1000) {
			for (int i = 0; i < n; i++)
				hosts[i] = h + i;
			if (place_state_add_job(s, (uint32_t)(jobs + 1), hosts, n, 0, 0, &comm) == 0)
				jobs++;
		}
		h += n + (int)rnd(3);
	}
	free(hosts);
	return jobs;
}

int main(int argc, char **argv)
{
	const char *specs = argc > 1 ? argv[1] : "groups=128,hosts=32,rails=8,oversub=2,gpus=8";
	int ndec = argc > 2 ? atoi(argv[2]) : 2000;
	int fixed = argc > 3 ? atoi(argv[3]) : 0;
	static const int req_sizes[] = { 1, 2, 4, 8, 16, 32, 64, 128 };
	topo_fattree_spec spec;
	topo_error err;
	topo_graph *g = topo_graph_new();
	place_cluster *c;
	place_state *s;
	place_engine *e;
	place_config cfg;
	double *lat, *cpu;
	char buf[600];
	int jobs;

	topo_fattree_spec_init(&spec);
	if (!g || topo_fattree_parse(specs, &spec, &err) < 0 || topo_fattree_build(g, &spec, &err) < 0 ||
	    !(c = place_cluster_new(g, &err))) {
		fprintf(stderr, "place_latency: %s\n", topo_error_format(&err, buf, sizeof(buf)));
		return 1;
	}
	s = place_state_new(c);
	place_config_init(&cfg);
	e = place_engine_new(c, &cfg, &err);
	lat = malloc((size_t)(ndec > 0 ? ndec : 1) * sizeof(double));
	cpu = malloc((size_t)(ndec > 0 ? ndec : 1) * sizeof(double));
	if (!s || !e || !lat || !cpu || ndec <= 0) {
		fprintf(stderr, "place_latency: setup failed\n");
		return 1;
	}
	jobs = add_background(s, place_cluster_nhosts(c), 0.6);
	printf("cluster: %d hosts, %d groups, %d leaves; %d running jobs; K=%d; %d decisions\n",
	       place_cluster_nhosts(c), place_cluster_ngroups(c), place_cluster_nleaves(c), jobs,
	       cfg.candidates, ndec);
	printf("%-8s %10s %10s %10s %12s %12s %8s\n", "policy", "p50_us", "p99_us", "max_us",
	       "cpu_p50_us", "cpu_p99_us", "placed");
	for (int p = 0; p < PLACE_POLICY_COUNT; p++) {
		place_decision d;
		place_request r;
		int placed = 0, n = 0;

		memset(&r, 0, sizeof(r));
		r.exclusive = 1;
		r.comm = (place_comm){ PLACE_COMM_HEAVY, PLACE_PATTERN_RING, 1e9, 0.2 };
		rng = 777; /* the same requests for every policy */
		for (int i = 0; i < ndec; i++) {
			r.job_id = (uint32_t)(100000 + i);
			r.min_hosts = req_sizes[rnd(8)];
			if (fixed > 0)
				r.min_hosts = fixed;
			double t0 = cpu_us();
			int rc = place_decide(e, s, &r, (place_policy)p, PLACE_POLICY_TREE, &d);

			cpu[n] = cpu_us() - t0;
			if (rc == 0)
				placed++;
			else if (!strcmp(d.reason, "no GNN model loaded"))
				break;
			lat[n++] = d.latency_us;
		}
		if (placed == 0) {
			printf("%-8s %10s %10s %10s %12s %12s %8d  (%s)\n",
			       place_policy_name((place_policy)p), "-", "-", "-", "-", "-", 0, d.reason);
			continue;
		}
		qsort(lat, (size_t)n, sizeof(double), cmp_double);
		qsort(cpu, (size_t)n, sizeof(double), cmp_double);
		printf("%-8s %10.1f %10.1f %10.1f %12.1f %12.1f %8d\n",
		       place_policy_name((place_policy)p), pct(lat, n, 0.5), pct(lat, n, 0.99),
		       lat[n - 1], pct(cpu, n, 0.5), pct(cpu, n, 0.99), placed);
	}
	free(lat);
	free(cpu);
	place_engine_free(e);
	place_state_free(s);
	place_cluster_free(c);
	topo_graph_free(g);
	return 0;
}
